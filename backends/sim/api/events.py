"""Event API (emulator ``events.c``): event creation and destruction, record / wait / reset
(with and without flags), event sync, and aclrtValueWrite / aclrtValueWait."""

from __future__ import annotations

from typing import Any

from mdlri_conformance.backends.contract import UNWRITTEN, Err, EventFlag, TaskType

from ..build import UserEventRef
from ..capture import CaptureSession
from ..cond import SubModel
from ..device import U64, NopOp, RecordOp, ResetOp, ValueWaitOp, ValueWriteOp, WaitOp
from ..events import EX_ALLOWED, SimEvent, valid_flags
from ..external import ExternalEventRef
from ..guard import NO_CTX, NO_CTX_OUT, guarded
from ..limits import REFUSED
from ..model import ModelEvent, SimModel, TaskRecord
from ..streams import CAPTURE_FORBIDDEN_FLAGS, SimStream
from .checks import E_NULL, E_PARAM, OK, is_int


def _sync_no_ctx(a: dict) -> int:
    """aclrtSynchronizeEvent[WithTimeout] without a context: the ACL layer's checks (timeout
    < -1 -> 107000, then NULL event -> 100000) come first."""
    timeout = a.get("timeout_ms", -1)
    if is_int(timeout) and timeout < -1:
        return E_PARAM
    if a["event"] is None:
        return E_NULL
    return NO_CTX


#: RT_EVENT_FLAG_MAX (`core/inc/event/event.hpp:37-39`) and the flags that must be used alone
#: (RT_EVENT_MC2 0x10, RT_EVENT_EXTERNAL 0x20, `api/impl/api_error.cc:1638-1644`)
_EVENT_FLAG_MAX = 0x3F
_SOLE_FLAGS = (0x10, int(EventFlag.EXTERNAL))
#: event flags as plain ints: ``ev.flags & flag`` on every record / wait stays an int
#: operation (an IntFlag operand would build an enum member per test)
_EXTERNAL, _SYNC = int(EventFlag.EXTERNAL), int(EventFlag.SYNC)
_DEVICE_USE_ONLY = int(EventFlag.DEVICE_USE_ONLY)


def _event_create_flag_ok(flag: Any) -> bool:
    """ApiErrorDecorator::EventCreate's flag checks (`api/impl/api_error.cc:1632-1644`)."""
    if not is_int(flag) or flag < 0:
        return False
    flag = int(flag)
    if not flag & _EVENT_FLAG_MAX or flag > _EVENT_FLAG_MAX:
        return False
    return not any(flag & sole and flag & ~sole for sole in _SOLE_FLAGS)


class EventsApi:
    """User events (XS, TMO-09), the external record/wait (XS-10) and value write/wait."""

    def _new_event(self, flags: int, api: str) -> SimEvent:
        ev = SimEvent(flags, api)
        self._events.append(ev)
        return ev

    @guarded(NO_CTX_OUT)
    def create_event(self) -> tuple[int, Any]:
        """aclrtCreateEvent: an old-mode event (XS-04)."""
        return OK, self._new_event(0, "create")

    @guarded(NO_CTX_OUT)
    def create_event_with_flag(self, flag: int) -> tuple[int, Any]:
        """aclrtCreateEventWithFlag: old-mode unless EXTERNAL. The runtime's checks (RT-15,
        ApiErrorDecorator::EventCreate, `api/impl/api_error.cc:1628-1645`; the ACL layer passes
        the flag on unchanged, `src/acl/aclrt_impl/event.cpp:44-56`): no bit of
        RT_EVENT_FLAG_MAX (0x3F, `core/inc/event/event.hpp:37-39`) -- flag 0 included -- or a
        bit above it, and 0x10 or EXTERNAL (0x20) combined with another bit, are 107000."""
        if not _event_create_flag_ok(flag):
            return E_PARAM, UNWRITTEN
        return OK, self._new_event(int(flag), "with_flag")

    @guarded(NO_CTX_OUT)
    def create_event_ex_with_flag(self, flag: int) -> tuple[int, Any]:
        """aclrtCreateEventExWithFlag: new-mode (capture fork/join with SYNC)."""
        if not valid_flags(flag, EX_ALLOWED):
            return E_PARAM, UNWRITTEN
        return OK, self._new_event(int(flag), "ex")

    @guarded()
    def destroy_event(self, event: Any) -> int:
        """aclrtDestroyEvent: stale -> 107017 (LIFE-08). Captured copies live on in models."""
        rc, ev = self._event(event)
        if rc:
            return rc
        ev.alive = False
        self._events.remove(ev)
        return OK

    # -- capture bindings ---------------------------------------------------------------------

    def _bind(self, ev: SimEvent, model: SimModel) -> ModelEvent:
        ev.binding = model
        return model.model_event(ev)

    def _conflict(self, sess: CaptureSession, ev: SimEvent) -> int:
        """Cross-model event use: 107032, both models invalidated at model level (XS-07)."""
        sess.invalidated = True
        other = ev.binding.session if ev.binding is not None else None
        if other is not None:
            other.invalidated = True
        return int(Err.STREAM_CAPTURE_CONFLICT)

    @staticmethod
    def _external_unbound(ev: SimEvent) -> bool:
        """An aclrtCreateEventWithFlag(ACL_EVENT_EXTERNAL) event without SYNC, not bound to a
        capture: its waits and resets act on the user event's own flag ("external-events")."""
        return ev.api == "with_flag" and bool(ev.flags & _EXTERNAL) \
            and not ev.flags & _SYNC and ev.binding is None

    def _external_event_task(self, st: SimStream, ev: SimEvent, ttype: TaskType) -> int:
        """The wait or reset of an external event (the 1_model_update pattern): inside a
        capture a task on the user event's own flag, so a record outside the model releases
        the execution; outside capture a wait or reset like a SYNC event's."""
        if st.capturing:
            self._append(st, TaskRecord(ttype, event=UserEventRef(ev.state),
                                        event_flag=ev.flags))
        else:
            op_cls = WaitOp if ttype == TaskType.EVENT_WAIT else ResetOp
            self._enqueue(st, op_cls(ev.state))
        return OK

    # -- record / wait / reset ----------------------------------------------------------------

    def _refused(self, ev: SimEvent, st: SimStream, op: TaskType) -> int:
        """The refusals a record, wait or reset meets before the capture logic: a device-only
        event (ACL_EVENT_DEVICE_USE_ONLY, the runtime's MC2) -> 107000 for all three
        (ApiErrorDecorator::EventRecord / StreamWaitEvent / EventReset,
        `api/impl/api_error.cc:1702-1708, 1404-1410, 1750-1756`, RT-27); a wait on an event
        without a wait task -> 207000 (`:1414-1416`, RT-25); a record or wait on a stream bound
        to a built model of an aclrtCreateEvent or aclrtCreateEventExWithFlag event -> 207000
        (ApiImpl::EventRecord / StreamWaitEvent, `api/impl/api_impl.cc:2145-2151, 1602-1608`,
        RT-26). 0 when none applies."""
        if ev.flags & _DEVICE_USE_ONLY:
            return E_PARAM
        if op == TaskType.EVENT_WAIT and not self._external_unbound(ev) and not ev.has_wait_task:
            return int(Err.RT_FEATURE_NOT_SUPPORT)
        if op != TaskType.EVENT_RESET and st in self._bound and ev.rt_default_or_ex:
            return int(Err.RT_FEATURE_NOT_SUPPORT)
        return OK

    def _event_on_stream(self, event: Any, stream: Any) -> tuple[int, Any, Any]:
        """The event, then the stream argument of a record / wait / reset: (rc, event, stream)."""
        rc, ev = self._event(event)
        if rc:
            return rc, None, None
        rc, st = self._stream(stream)
        if rc:
            return rc, None, None
        return OK, ev, st

    @guarded()
    def record_event(self, event: Any, stream: Any) -> int:
        """aclrtRecordEvent. In capture: old-mode -> 207000 (XS-04); no SYNC -> 0 and nothing
        recorded (XS-09); else an EVENT_RECORD task on the internal event (a new one when the
        event was already recorded in this capture, which later waits then take, XS-13). An event last
        recorded in another open capture is retargeted: rc 0, it is bound to this capture with
        a fresh internal event, neither capture is invalidated and the other keeps the record it
        has (XS-12, ``feature/aclgraph/v100/api_impl_capture_event.cc:120-160``). Outside
        capture -- the default stream included, which never captures -- the event is recorded
        as usual, even one bound to an open capture: ApiImpl::EventRecord takes the capture path
        only when Event::ToBeCaptured(stream), i.e. the stream is capturing
        (`api/impl/api_impl.cc:2168-2193`, `feature/aclgraph/event_capture.cc:183-196`); its
        default-stream 107031 is unreachable (CAP-08)."""
        rc, ev, st = self._event_on_stream(event, stream)
        if rc or (rc := self._refused(ev, st, TaskType.EVENT_RECORD)):
            return rc
        if st.capturing:
            sess: CaptureSession = st.session
            if ev.old_mode:
                return int(Err.RT_FEATURE_NOT_SUPPORT)
            if not ev.has_wait_task:
                return OK
            me = self._bind(ev, sess.model)  # XS-12: retargets an event of another capture
            if me.recorded:
                me = sess.model.fresh_event(ev)  # XS-13: a second record, a new internal event
            me.recorded = True
            self._append(st, TaskRecord(TaskType.EVENT_RECORD, event=me, event_flag=ev.flags))
            return OK
        op = self._enqueue(st, RecordOp(ev.state))
        if st in self._bound:
            ev.in_model = True  # a record stored in a built model (event sync: 107000)
        else:
            ev.last_record = op
        return OK

    @guarded()
    def stream_wait_event(self, stream: Any, event: Any) -> int:
        """aclrtStreamWaitEvent. First :meth:`_refused` (no wait task: 207000, RT-25). An
        unbound external event: see :meth:`_external_event_task`. Capturing stream: event of
        this capture -> EVENT_WAIT task; of another open capture -> 107032 (XS-07); old-mode
        -> 207000 (XS-04); never recorded -> 0 and no task (XS-14); otherwise 107024, capture
        kept (XS-05). Non-capturing stream waiting on an event recorded in an open capture
        joins that capture (fork, XS-01), unless its flags forbid capture: 507000 (CAP-18,
        `api/impl/api_impl.cc:1625-1628`, before the default stream's 107031)."""
        rc, ev, st = self._event_on_stream(event, stream)
        if rc or (rc := self._refused(ev, st, TaskType.EVENT_WAIT)):
            return rc
        if self._external_unbound(ev):
            return self._external_event_task(st, ev, TaskType.EVENT_WAIT)
        if st.capturing:
            sess: CaptureSession = st.session
            if ev.binding is sess.model:
                me = sess.model.model_event(ev)
                self._append(st, TaskRecord(TaskType.EVENT_WAIT, event=me, event_flag=ev.flags))
                return OK
            if ev.binding is not None:
                return self._conflict(sess, ev)
            if ev.old_mode:
                return int(Err.RT_FEATURE_NOT_SUPPORT)
            if ev.last_record is None and not ev.in_model:
                return OK  # XS-14: never recorded: nothing to wait for, no task, no join
            return int(Err.RT_CAPTURE_DEPENDENCY)
        if ev.binding is not None:
            if st.flags & CAPTURE_FORBIDDEN_FLAGS:
                return int(Err.RT_INTERNAL_ERROR)  # CAP-18: such a stream cannot join either
            if st.default:
                return int(Err.RT_STREAM_CAPTURE_IMPLICIT)
            model: SimModel = ev.binding
            me = model.model_event(ev)
            if me.recorded and model.session is not None:
                sess = model.session
                if self._stream_refused():
                    sess.invalidated = True  # FLD-07 (R3): the fork fails, the capture is lost
                    return REFUSED
                ms = sess.join(st)
                model.append(ms, TaskRecord(TaskType.EVENT_WAIT, event=me, event_flag=ev.flags))
                return OK
        self._enqueue(st, NopOp() if self.has_fault("event-wait-no-wait") else WaitOp(ev.state))
        return OK

    @guarded()
    def reset_event(self, event: Any, stream: Any) -> int:
        """aclrtResetEvent as the runtime answers it. An unbound external event: see
        :meth:`_external_event_task` (Event::IsCapturing / ToBeCaptured are false for
        RT_EVENT_EXTERNAL, `feature/aclgraph/event_capture.cc:174-196`, so the plain reset goes
        on the stream). An event without a wait task -> 207000 (ApiErrorDecorator::EventReset,
        `api/impl/api_error.cc:1760-1762`); a new-mode event (aclrtCreateEventExWithFlag) ->
        207000 on any stream, in or out of capture (ApiImpl::EventReset,
        `api/impl/api_impl.cc:2210-2214`); an old-mode event on a capturing stream -> 207000
        (`:2239-2243`). Otherwise the plain reset. So a user's reset never captures a task
        (XS-06 and XS-07's reset are unreachable)."""
        rc, ev, st = self._event_on_stream(event, stream)
        if rc or (rc := self._refused(ev, st, TaskType.EVENT_RESET)):
            return rc
        if self._external_unbound(ev):
            return self._external_event_task(st, ev, TaskType.EVENT_RESET)
        if not ev.has_wait_task or ev.api == "ex":
            return int(Err.RT_FEATURE_NOT_SUPPORT)
        if st.capturing:
            return int(Err.RT_FEATURE_NOT_SUPPORT)
        self._enqueue(st, ResetOp(ev.state))
        return OK

    # -- event sync ---------------------------------------------------------------------------

    def _event_sync(self, event: Any, timeout_ms: int) -> int:
        """Event sync (TMO-09; ``api/impl/api_error.cc:1769-1785``,
        ``core/src/event/event.cc:1081-1170``):
        stale 107017; EXTERNAL 207000; bound to an open capture 107028; recorded on a stream
        bound to a built model 107000; never recorded -> 0 at once; else wait for the last
        record to complete: -1 forever, 0 one immediate check (TMO-07, documented), > 0 ms, past
        the host deadline 507047. A device error of the recording stream is not returned."""
        rc, ev = self._event(event)
        if rc:
            return rc
        if ev.flags & _EXTERNAL:
            return int(Err.RT_FEATURE_NOT_SUPPORT)
        if ev.binding is not None:
            return int(Err.RT_EVENT_CAPTURED)
        if ev.in_model:
            return E_PARAM
        op = ev.last_record
        if op is None or op.done:
            return OK
        if timeout_ms == 0:
            self._kick()
            return OK if op.done else int(Err.RT_EVENT_SYNC_TIMEOUT)
        limit = None if timeout_ms == -1 else timeout_ms / 1000.0
        if not self._wait_until(lambda: op.done, limit):
            return int(Err.RT_EVENT_SYNC_TIMEOUT)
        return OK

    @guarded(_sync_no_ctx)
    def synchronize_event(self, event: Any) -> int:
        """aclrtSynchronizeEvent: NULL -> 100000 (ACL layer); waits for the last record."""
        if event is None:
            return E_NULL
        return self._event_sync(event, -1)

    @guarded(_sync_no_ctx)
    def synchronize_event_with_timeout(self, event: Any, timeout_ms: int) -> int:
        """aclrtSynchronizeEventWithTimeout: timeout < -1 -> 107000, then NULL -> 100000 (ACL
        layer, ``src/acl/aclrt_impl/event.cpp:184-200``); then :meth:`_event_sync`."""
        if not is_int(timeout_ms) or timeout_ms < -1:
            return E_PARAM
        if event is None:
            return E_NULL
        return self._event_sync(event, int(timeout_ms))

    # -- external record / wait (XS-10) -------------------------------------------------------

    def _external_use(self, ev: SimEvent, st: SimStream, kind: str) -> int:
        """An EXTERNAL record/wait on a capturing stream (XS-10, TYPE-03)."""
        if not st.capturing:
            return int(Err.RT_STREAM_NOT_CAPTURED)
        model = st.session.model
        if isinstance(model, SubModel):
            return int(Err.RT_FEATURE_NOT_SUPPORT)
        if ev in model.external_events:
            return E_PARAM
        model.external_events.add(ev)
        self._append(st, TaskRecord(TaskType.DEFAULT, default_kind=kind,
                                    event=ExternalEventRef(ev), event_flag=ev.flags))
        return OK

    @guarded()
    def record_event_with_flag(self, event: Any, stream: Any, flag: int) -> int:
        """aclrtRecordEventWithFlag: NULL event, then a flag other than DEFAULT / EXTERNAL ->
        100000 (ACL layer, ``src/acl/aclrt_impl/event.cpp:96-110``); DEFAULT is aclrtRecordEvent;
        EXTERNAL (XS-10) appends a placeholder (TYPE-03) that records the user event at each
        replay."""
        if event is None or not is_int(flag) or flag not in (0, 1):
            return E_NULL
        if flag == 0:
            return self.record_event(event, stream)
        rc, ev, st = self._event_on_stream(event, stream)
        if rc:
            return rc
        return self._external_use(ev, st, "ext_record")

    @guarded()
    def stream_wait_event_with_flag(self, stream: Any, event: Any, timeout: int,
                                    flag: int) -> int:
        """aclrtStreamWaitEventWithFlag: NULL event, a flag other than DEFAULT / EXTERNAL, and
        EXTERNAL with a timeout != 0 -> 100000 (ACL layer,
        ``src/acl/aclrt_impl/stream.cpp:239-256``);
        a timeout outside uint32 107000; DEFAULT is aclrtStreamWaitEvent; EXTERNAL appends a
        placeholder that waits on the user event at each replay (XS-10, TYPE-03)."""
        if event is None or not is_int(flag) or flag not in (0, 1):
            return E_NULL
        if not is_int(timeout) or not 0 <= timeout <= 0xFFFFFFFF:
            return E_PARAM
        if flag == 1 and timeout != 0:
            return E_NULL
        if flag == 0:
            return self.stream_wait_event(stream, event)
        rc, ev, st = self._event_on_stream(event, stream)
        if rc:
            return rc
        return self._external_use(ev, st, "ext_wait")

    # -- value write / wait -------------------------------------------------------------------

    def _check_value_addr(self, dev_addr: Any, value: Any) -> int:
        if dev_addr is None:  # ACL layer (`src/acl/aclrt_impl/memory.cpp:1445, 1455`)
            return E_NULL
        if not is_int(dev_addr) or not is_int(value):
            return E_PARAM
        if dev_addr % 8 or not self.mem.valid_range(int(dev_addr), 8):
            return E_PARAM
        return OK

    @guarded(lambda a: E_NULL if a["dev_addr"] is None else NO_CTX)
    def value_write(self, dev_addr: int | None, value: int, flag: int, stream: Any) -> int:
        """aclrtValueWrite: 8-byte aligned device address, flag 0 (abi.md §3.5). A NULL address
        is the ACL layer's 100000, answered before the context
        (`src/acl/aclrt_impl/memory.cpp:1445, 1455`: ACL_REQUIRES_NOT_NULL_WITH_INPUT_REPORT)."""
        rc = self._check_value_addr(dev_addr, value)
        if rc:
            return rc
        if flag != 0:
            return E_PARAM
        rc, st = self._stream(stream)
        if rc:
            return rc
        if st.capturing:
            self._append(st, TaskRecord(TaskType.VALUE_WRITE, dev_addr=int(dev_addr),
                                        value=int(value) & U64))
        else:
            self._enqueue(st, ValueWriteOp(int(dev_addr), int(value)))
        return OK

    @guarded(lambda a: E_NULL if a["dev_addr"] is None else NO_CTX)
    def value_wait(self, dev_addr: int | None, value: int, flag: int, stream: Any) -> int:
        """aclrtValueWait: flag GEQ/EQ/AND/NOR (0..3), else 107000. A NULL address
        is the ACL layer's 100000, answered before the context
        (`src/acl/aclrt_impl/memory.cpp:1445, 1455`: ACL_REQUIRES_NOT_NULL_WITH_INPUT_REPORT)."""
        rc = self._check_value_addr(dev_addr, value)
        if rc:
            return rc
        if not is_int(flag) or not 0 <= flag <= 3:
            return E_PARAM
        rc, st = self._stream(stream)
        if rc:
            return rc
        if st.capturing:
            self._append(st, TaskRecord(TaskType.VALUE_WAIT, dev_addr=int(dev_addr),
                                        value=int(value) & U64, flag=int(flag)))
        else:
            self._enqueue(st, ValueWaitOp(int(dev_addr), int(value), int(flag)))
        return OK
