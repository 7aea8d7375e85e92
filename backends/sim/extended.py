"""The rest of the Model RI API on the simulator (:class:`~backends.contract.ExtendedBackend`).

:class:`ExtendedSimMixin` is a base class of :class:`~backends.sim.backend.SimBackend`. It adds
the extended API methods (task groups, build path, conditional tasks and sub-models, names and
ids, DebugJsonPrint, destroy callbacks, launch attributes, abort) and the hooks the core
backend calls at a few points:

* ``_ext_override(fn, args, kwargs)`` from the core ``_api`` wrapper: answers a core API call
  itself where the extension changes it (sub-models and built models refused with 207000,
  listing of bound streams, GetParams' ``taskGrp``, SetParams' ``cfg``, ASSIGN_DEFAULT at
  ExecuteAsync, CaptureEnd of a sub-model capture, ...); :data:`NOT_HOOKED` otherwise;
* ``_ext_before_append`` / ``_ext_after_append`` around every task appended during capture
  (task-group rules TG-04/05, group membership);
* ``_ext_enqueue`` for work issued on a non-capturing stream (bound streams store it, BLD-03;
  streams in task-update mode refuse it, TG-15);
* ``_ext_launch`` for kernel launches (launch attributes, group update, bound streams);
* ``_ext_end_check`` at CaptureEnd (open group TG-07, capturing sub-model COND-09);
* ``_ext_on_free`` when a model is freed (destroy callbacks LIFE-09..14, sub-models, handles).

An API error raised deep inside a core method is signalled with :class:`ApiReturn`, which the
``_api`` wrappers turn into the return code. Choices are recorded in ``backends.sim.CHOICES``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from mdlri_conformance.backends.contract import (
    UNWRITTEN,
    CaptureMode,
    CondTaskParams,
    CondTaskType,
    Err,
    EventFlag,
    ModelStreamFlag,
    StreamFlag,
    TaskParams,
    TaskType,
)

from .attributes import QUERYABLE, parse_cfg, query, timeout_seconds
from .debugjson import debug_json
from .build import BuiltModel, UserEventRef, op_to_record
from .capture import CaptureSession
from .cond import CondHandle, CondOp, SubModel
from .device import ExecuteOp, KernelOp, Queue, ResetOp, WaitOp
from .events import SimEvent
from .guard import ApiReturn, guarded
from .handles import live
from .model import ModelStatus, ModelStream, SimModel, Task, TaskRecord
from .streams import SimStream
from .switch import SwitchSimMixin, end_record
from .taskgroups import PREFETCH_NOPS, ApplyOp, TaskGroup, UpdateState

OK = 0
E_NULL = int(Err.INVALID_PARAM)
E_PARAM = int(Err.RT_PARAM_INVALID)
E_HANDLE = int(Err.RT_INVALID_HANDLE)
E_CTX = int(Err.RT_CONTEXT_NULL)
E_NOT_SUPPORT = int(Err.RT_FEATURE_NOT_SUPPORT)
E_INTERNAL = int(Err.RT_INTERNAL_ERROR)
E_NOT_CAPTURED = int(Err.RT_STREAM_NOT_CAPTURED)
E_GRP_STATUS = int(Err.STREAM_TASK_GROUP_STATUS)
E_EXECUTE = int(Err.RT_MODEL_EXECUTE)

NOT_HOOKED: Any = object()


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _arg(args: tuple, kwargs: dict, i: int, name: str, default: Any = None) -> Any:
    if len(args) > i:
        return args[i]
    return kwargs.get(name, default)


class ExtendedSimMixin(SwitchSimMixin):
    """Task groups, build, cond, names, debug JSON, callbacks, attributes, abort; stream
    activation / switch and labels on bound streams (:class:`~backends.sim.switch.SwitchSimMixin`)."""

    # =========================================================================================
    # state and hooks

    def _ext_init(self) -> None:
        self._grp_open: dict[SimStream, TaskGroup] = {}     # stream -> group open on it
        self._groups: list[TaskGroup] = []                  # every live group
        self._upd: dict[SimStream, UpdateState] = {}        # streams in task-update mode
        self._bound: dict[SimStream, tuple[BuiltModel, ModelStream]] = {}
        self._conds: dict[SimModel, list[CondHandle]] = {}
        self._subs: dict[SimModel, list[SubModel]] = {}
        self._names: dict[SimModel, str] = {}
        self._callbacks: dict[SimModel, list[tuple[Any, Any]]] = {}
        self.callback_errors: list[str] = []  # exceptions raised by destroy callbacks

    def _open_group(self, st: Any) -> TaskGroup | None:
        g = self._grp_open.get(st)
        if g is not None and g.open and st.session is g.session:
            return g
        return None

    def _ext_before_append(self, st: SimStream, record: TaskRecord) -> None:
        """TG-04 (non-kernel inside a group) and TG-05 (other stream while a group is open)."""
        sess = st.session
        g = self._open_group(st)
        if g is not None:
            if record.type != TaskType.KERNEL:
                g.error = g.error or int(Err.RT_TASK_TYPE_NOT_SUPPORT)
                sess.invalidated = True
                raise ApiReturn(Err.RT_TASK_TYPE_NOT_SUPPORT)
            return
        for other in list(self._grp_open.values()):
            if other.open and other.session is sess and other.stream is not st:
                other.error = other.error or int(Err.STREAM_TASK_GROUP_INTR)
                sess.invalidated = True
                raise ApiReturn(Err.STREAM_TASK_GROUP_INTR)

    def _ext_after_append(self, st: SimStream, task: Task) -> None:
        g = self._open_group(st)
        if g is not None:
            g.tasks.append(task)
            task.task_grp = g

    def _ext_enqueue(self, st: SimStream, op: Any) -> Any:
        """Work on a non-capturing stream: refused in update mode, stored on bound streams."""
        if st in self._upd:
            raise ApiReturn(Err.RT_TASK_TYPE_NOT_SUPPORT)  # TG-15
        bound = self._bound.get(st)
        if bound is None:
            return None
        m, ms = bound
        m.append(ms, op_to_record(op))  # BLD-03
        op.done = True
        return op

    def _ext_launch(self, st: SimStream, func: Any, num_blocks: int, cfg: Any, data: bytes,
                    args_size: int) -> int | None:
        """Kernel launches: cfg validation and storage; update mode; bound streams."""
        valid, attrs = parse_cfg(cfg)
        if not valid:
            return E_PARAM
        size = int(args_size)
        u = self._upd.get(st)
        if u is not None:  # TG-10, TG-13
            g = u.group
            if u.index >= len(g.tasks) or not g.model.alive:
                return E_INTERNAL
            task = g.tasks[u.index]
            u.index += 1
            addr = self.mem.alloc(size, "internal")
            self.mem.write(addr, data[:size])
            g.model.internal_allocs.append(addr)
            rec = TaskRecord(TaskType.KERNEL, func=func, args_addr=addr, args_size=size,
                             num_blocks=int(num_blocks), attrs=attrs)
            self.engine.enqueue(st.queue, ApplyOp(task, rec))
            return OK
        if st.capturing:
            model = st.session.model
        elif st in self._bound:
            model = self._bound[st][0]
        else:  # an ordinary stream: runs under the launch's op timeout (TMO-10)
            addr = self.mem.alloc(size, "internal")
            self.mem.write(addr, data[:size])
            self._enqueue(st, KernelOp(func.spec, addr, size,
                                       release=lambda a=addr: self.mem.free(a),
                                       timeout_s=timeout_seconds(attrs)))
            return OK
        addr = self.mem.alloc(size, "internal")
        self.mem.write(addr, data[:size])
        model.internal_allocs.append(addr)
        rec = TaskRecord(TaskType.KERNEL, func=func, args_addr=addr, args_size=size,
                         num_blocks=int(num_blocks), attrs=attrs)
        if st.capturing:
            self._append(st, rec)
        else:
            model.append(self._bound[st][1], rec)
        return OK

    def _ext_end_check(self, sess: CaptureSession) -> int:
        """CaptureEnd: a group still open (TG-07), a sub-model still capturing (COND-09)."""
        open_groups = [g for g in self._grp_open.values() if g.open and g.session is sess]
        for g in open_groups:
            g.open = False
        if open_groups:
            return E_GRP_STATUS
        for other in self._sessions:
            if other is not sess and self._descends(other.model, sess.model):
                return int(Err.RT_SUB_ACLGRAPH_IS_CAPTURING)
        return OK

    def _descends(self, model: Any, root: Any) -> bool:
        while isinstance(model, SubModel):
            model = model.parent
            if model is root:
                return True
        return False

    def _ext_on_free(self, model: SimModel) -> None:
        """A model is being freed (Destroy, failed CaptureEnd, close)."""
        callbacks = self._callbacks.pop(model, [])
        if not self._closed:  # LIFE-14: skipped at exit
            for func, data in sorted(callbacks, key=lambda c: id(c[0])):  # LIFE-11, Q-18
                try:
                    func(data)
                except Exception as exc:  # noqa: BLE001 - a user callback's own failure
                    self.callback_errors.append(f"{func!r}: {exc!r}")
        for sub in self._subs.pop(model, []):
            if sub.session is not None:
                self._close_session(sub.session)
            self._free_model(sub)
        for h in self._conds.pop(model, []):
            h.alive = False
        for g in [g for g in self._groups if g.model is model]:
            g.alive = g.open = False
            self._groups.remove(g)
        for st in [s for s, (m, _) in self._bound.items() if m is model]:
            del self._bound[st]
        self._names.pop(model, None)

    # -- overrides of core methods -------------------------------------------------------

    def _ext_override(self, fn: Callable, args: tuple, kwargs: dict) -> Any:
        handler = _OVERRIDES.get(fn.__name__)
        if handler is None:
            return NOT_HOOKED
        return handler(self, fn, args, kwargs)

    def _ov_get_streams(self, fn, args, kwargs):
        model, cap = _arg(args, kwargs, 0, "model"), _arg(args, kwargs, 1, "capacity")
        if live(model, SubModel) and not kwargs.get("null_count", False):
            return E_NOT_SUPPORT, self._untouched(cap), UNWRITTEN  # LIST-12
        return NOT_HOOKED

    def _ov_get_tasks_by_stream(self, fn, args, kwargs):
        stream, cap = _arg(args, kwargs, 0, "stream"), _arg(args, kwargs, 1, "capacity")
        if kwargs.get("null_count", False):
            return NOT_HOOKED
        if live(stream, ModelStream) and isinstance(stream.model, SubModel):
            return E_NOT_SUPPORT, self._untouched(cap), UNWRITTEN  # LIST-12
        if isinstance(stream, SimStream) and stream.alive and stream in self._bound:
            return self._slots(list(self._bound[stream][1].tasks), cap)
        return NOT_HOOKED

    def _task_refused(self, task: Any, built_too: bool) -> bool:
        if not (live(task, Task) and task.model.alive):
            return False
        return isinstance(task.model, SubModel) or (built_too and
                                                    isinstance(task.model, BuiltModel))

    def _ov_task_get_type(self, fn, args, kwargs):
        if not kwargs.get("null_out") and self._task_refused(_arg(args, kwargs, 0, "task"),
                                                             False):
            return E_NOT_SUPPORT, UNWRITTEN  # COND-10
        return NOT_HOOKED

    def _ov_task_get_seq_id(self, fn, args, kwargs):
        if not kwargs.get("null_out") and self._task_refused(_arg(args, kwargs, 0, "task"),
                                                             True):
            return E_NOT_SUPPORT, UNWRITTEN  # COND-10, BLD-06
        return NOT_HOOKED

    def _ov_task_get_params(self, fn, args, kwargs):
        task = _arg(args, kwargs, 0, "task")
        if not kwargs.get("null_out") and self._task_refused(task, False):
            return E_NOT_SUPPORT, UNWRITTEN
        rc, p = fn(self, *args, **kwargs)
        if rc == OK and isinstance(p, TaskParams) and p.type == TaskType.KERNEL:
            g = getattr(task, "task_grp", None)
            p.task_grp = g if g is not None and g.alive else None  # TG-09
        return rc, p

    def _ov_task_set_params(self, fn, args, kwargs):
        task, params = _arg(args, kwargs, 0, "task"), _arg(args, kwargs, 1, "params")
        if params is None or not (live(task, Task) and task.model.alive):
            return NOT_HOOKED
        if self._task_refused(task, True):
            return E_NOT_SUPPORT  # COND-10, BLD-06
        attrs = None
        if isinstance(params, TaskParams) and params.type == TaskType.KERNEL \
                and params.kernel is not None:
            valid, attrs = parse_cfg(params.kernel.cfg)
            if not valid:
                if self._update_blocked(task.model):
                    return int(Err.RT_MODEL_UPDATE_FAILED)
                task.model.status = ModelStatus.FAULT
                return E_PARAM
        rc = fn(self, *args, **kwargs)
        if rc == OK and task.host.type == TaskType.KERNEL:
            task.host = task.host.replace(attrs=attrs)  # SETP-08, ATTR-06
        return rc

    def _ov_task_disable(self, fn, args, kwargs):
        if self._task_refused(_arg(args, kwargs, 0, "task"), True):
            return E_NOT_SUPPORT
        return NOT_HOOKED

    def _ov_update(self, fn, args, kwargs):
        model = _arg(args, kwargs, 0, "model")
        if live(model, SubModel) or live(model, BuiltModel):
            return E_NOT_SUPPORT  # COND-10, BLD-06
        return NOT_HOOKED

    def _ov_destroy(self, fn, args, kwargs):
        if live(_arg(args, kwargs, 0, "model"), SubModel):
            return E_NOT_SUPPORT  # LIFE-05
        return NOT_HOOKED

    def _ov_execute_async(self, fn, args, kwargs):
        model, stream = _arg(args, kwargs, 0, "model"), _arg(args, kwargs, 1, "stream")
        if live(model, SubModel):
            return E_NOT_SUPPORT  # EXE-08
        if stream in self._upd:
            return int(Err.RT_TASK_TYPE_NOT_SUPPORT)  # TG-15
        if live(model, BuiltModel) and not model.has_end_task:
            return E_EXECUTE  # EXE-12
        rc = fn(self, *args, **kwargs)
        if rc == OK:
            self._assign_defaults(model)
        return rc

    def _external_event_task(self, fn, args, kwargs, ttype: int, stream_first: bool):
        """ACL_EVENT_EXTERNAL events (aclrtCreateEventWithFlag 0x20, the 1_model_update
        pattern): a wait or reset issued inside a capture acts on the user event's own flag,
        so a record outside the model releases the execution; outside capture they wait or
        reset like SYNC events."""
        stream = _arg(args, kwargs, 0 if stream_first else 1, "stream")
        ev = _arg(args, kwargs, 1 if stream_first else 0, "event")
        if not (live(ev, SimEvent) and ev.api == "with_flag" and ev.flags & EventFlag.EXTERNAL
                and not ev.flags & EventFlag.SYNC and ev.binding is None):
            return NOT_HOOKED
        rc, st = self._stream(stream)
        if rc:
            return NOT_HOOKED
        if st.capturing:
            self._append(st, TaskRecord(ttype, event=UserEventRef(ev.state),
                                        event_flag=ev.flags))
        else:
            op_cls = WaitOp if ttype == TaskType.EVENT_WAIT else ResetOp
            self._enqueue(st, op_cls(ev.state))
        return OK

    def _ov_stream_wait_event(self, fn, args, kwargs):
        return self._external_event_task(fn, args, kwargs, TaskType.EVENT_WAIT, True)

    def _ov_reset_event(self, fn, args, kwargs):
        return self._external_event_task(fn, args, kwargs, TaskType.EVENT_RESET, False)

    def _ov_capture_begin(self, fn, args, kwargs):
        stream, mode = _arg(args, kwargs, 0, "stream"), _arg(args, kwargs, 1, "mode")
        if isinstance(stream, SimStream) and stream.alive and stream in self._bound \
                and _is_int(mode) and mode in (0, 1, 2):
            return int(Err.RT_STREAM_MODEL)  # ERR-01: stream bound to a model
        return NOT_HOOKED

    def _ov_capture_end(self, fn, args, kwargs):
        stream = _arg(args, kwargs, 0, "stream")
        if isinstance(stream, SimStream) and stream.alive and stream.capturing \
                and isinstance(stream.session.model, SubModel):
            return self._sub_capture_end(stream, bool(kwargs.get("null_model", False)))
        return NOT_HOOKED

    # =========================================================================================
    # task groups (TG)

    def _grp_stream(self, stream: Any) -> tuple[int, Any]:
        if stream is None:
            return E_NULL, None
        if isinstance(stream, ModelStream):
            return E_NOT_CAPTURED, None
        if not live(stream, SimStream):
            return E_HANDLE, None
        return OK, stream

    @guarded(E_CTX)
    def capture_task_grp_begin(self, stream: Any) -> int:
        """aclmdlRICaptureTaskGrpBegin (TG-01/02/03/06): 8 NOP tasks, then the group opens."""
        rc, st = self._grp_stream(stream)
        if rc:
            return rc
        if not st.capturing:
            return E_NOT_CAPTURED  # TG-02
        if self._open_group(st) is not None or st in self._upd:
            return E_GRP_STATUS  # TG-06
        for _ in range(PREFETCH_NOPS):  # TG-03
            self._append(st, TaskRecord(TaskType.DEFAULT, default_kind="nop"))
        g = TaskGroup(st.session, st)
        self._grp_open[st] = g
        self._groups.append(g)
        return OK

    @guarded((E_CTX, UNWRITTEN))
    def capture_task_grp_end(self, stream: Any, *, null_handle: bool = False) -> tuple[int, Any]:
        """aclmdlRICaptureTaskGrpEnd (TG-01/04/05/06/08): the handle is written on success only."""
        if stream is None or null_handle:
            return E_NULL, UNWRITTEN  # TG-18
        rc, st = self._grp_stream(stream)
        if rc:
            return rc, UNWRITTEN
        if not st.capturing:
            return E_NOT_CAPTURED, UNWRITTEN
        g = self._open_group(st)
        if g is None:
            return E_GRP_STATUS, UNWRITTEN  # TG-06
        g.open = False
        del self._grp_open[st]
        if g.error:
            return g.error, UNWRITTEN  # TG-04, TG-05, TG-08
        if st.session.invalidated:
            return int(Err.RT_STREAM_CAPTURE_INVALIDATED), UNWRITTEN
        return OK, g

    @guarded(E_CTX)
    def capture_task_update_begin(self, stream: Any, handle: Any) -> int:
        """aclmdlRICaptureTaskUpdateBegin (TG-10/11/12): the stream enters update mode."""
        if stream is None or handle is None:
            return E_NULL
        if isinstance(stream, ModelStream):
            return int(Err.RT_STREAM_MODEL)  # TG-11
        if not live(stream, SimStream):
            return E_HANDLE
        if not live(handle, TaskGroup) or handle.open or not handle.model.alive:
            return E_HANDLE  # LIFE-07: UB in the runtime
        if stream.capturing:
            return int(Err.RT_STREAM_CAPTURED)  # TG-11
        if stream in self._upd or handle.updating is not None:
            return E_GRP_STATUS  # TG-12
        self._upd[stream] = UpdateState(handle)
        handle.updating = stream
        return OK

    @guarded(E_CTX)
    def capture_task_update_end(self, stream: Any) -> int:
        """aclmdlRICaptureTaskUpdateEnd (TG-12/13/14): fewer launches than tasks -> 507000,
        the stream leaves update mode either way."""
        if stream is None:
            return E_NULL
        if isinstance(stream, ModelStream):
            return E_GRP_STATUS
        if not live(stream, SimStream):
            return E_HANDLE
        if stream.capturing:
            return int(Err.RT_STREAM_CAPTURED)
        u = self._upd.pop(stream, None)
        if u is None:
            return E_GRP_STATUS
        u.group.updating = None
        if u.index != len(u.group.tasks):
            return E_INTERNAL  # TG-13, TG-14
        return OK

    # =========================================================================================
    # build path (BLD)

    def _built(self, model: Any) -> tuple[int, Any]:
        if model is None:
            return E_NULL, None
        if not live(model, SimModel):
            return E_HANDLE, None
        if not isinstance(model, BuiltModel):
            return E_PARAM, None  # "ACL Graph mode is not supported"
        return OK, model

    @guarded((E_CTX, UNWRITTEN))
    def build_begin(self, flag: int, *, null_model: bool = False) -> tuple[int, Any]:
        """aclmdlRIBuildBegin (BLD-01)."""
        if null_model:
            return E_NULL, UNWRITTEN
        if not _is_int(flag) or flag != 0:
            return E_PARAM, UNWRITTEN
        m = BuiltModel()
        m.faults = self.faults
        self._models.append(m)
        return OK, m

    @guarded(E_CTX)
    def bind_stream(self, model: Any, stream: Any, flag: int) -> int:
        """aclmdlRIBindStream (BLD-02, BLD-08), in the source's order
        (``api/api_c_model.cc:72-96``, ``api/impl/api_error.cc:3895-3908``): flag HEAD or DEFAULT
        (107000); a stream that is not PERSISTENT 107000 whatever its capture state; already
        bound 107005; a captured model 107000; a capturing (PERSISTENT) stream 107027."""
        if model is None:
            return E_NULL
        if not _is_int(flag) or flag not in (ModelStreamFlag.HEAD, ModelStreamFlag.DEFAULT):
            return E_PARAM
        if not live(model, SimModel):
            return E_HANDLE
        if stream is None:
            return E_NULL
        if isinstance(stream, ModelStream):
            return int(Err.RT_STREAM_MODEL)
        if not live(stream, SimStream):
            return E_HANDLE
        if not stream.flags & StreamFlag.PERSISTENT:
            return E_PARAM
        if stream in self._bound:
            return int(Err.RT_STREAM_MODEL)
        rc, m = self._built(model)
        if rc:
            return rc
        if stream.capturing:
            return int(Err.RT_STREAM_CAPTURED)
        self._bound[stream] = (m, m.bind(stream, int(flag)))
        return OK

    def _bound_to(self, m: BuiltModel, stream: Any) -> tuple[int, Any]:
        if stream is None:
            return E_NULL, None
        if not live(stream, SimStream):
            return E_HANDLE, None
        if stream.capturing:
            return int(Err.RT_STREAM_CAPTURED), None
        b = self._bound.get(stream)
        if b is None or b[0] is not m:
            return E_PARAM, None
        return OK, b[1]

    @guarded(E_CTX)
    def end_task(self, model: Any, stream: Any) -> int:
        """aclmdlRIEndTask: the end-graph marker (a DEFAULT task) on a bound stream."""
        rc, m = self._built(model)
        if rc:
            return rc
        rc, ms = self._bound_to(m, stream)
        if rc:
            return rc
        m.append(ms, end_record())  # ends the execution when it runs (backends.sim.switch)
        m.has_end_task = True
        return OK

    @guarded(E_CTX)
    def build_end(self, model: Any, reserve: Any = None) -> int:
        """aclmdlRIBuildEnd (BLD-05): reserve must be NULL (100000); a model without a bound
        stream 107005 (``feature/model/model.cc:943-957``); none of its streams got EndTask
        507011 (EXE-12, STARS: ``model.cc:969-973``), the model stays in the build phase."""
        if model is None or reserve is not None:
            return E_NULL
        rc, m = self._built(model)
        if rc:
            return rc
        if not m.streams:
            return int(Err.RT_STREAM_MODEL)
        if not m.has_end_task:
            return E_EXECUTE
        m.build_ended = True
        return OK

    @guarded(E_CTX)
    def unbind_stream(self, model: Any, stream: Any) -> int:
        """aclmdlRIUnbindStream (BLD-07): the stream's stored tasks leave the model."""
        rc, m = self._built(model)
        if rc:
            return rc
        rc, ms = self._bound_to(m, stream)
        if rc:
            return rc
        del self._bound[stream]
        m.streams.remove(ms)
        ms.alive = False
        for t in ms.tasks:
            t.alive = False
        return OK

    @guarded(E_CTX)
    def execute(self, model: Any, timeout_ms: int) -> int:
        """aclmdlRIExecute (EXE-10..13): built models only, synchronous, -1 forever, >0 ms;
        expiry -> 507046 with the execution left running (Q-16)."""
        if model is None:
            return E_NULL
        if not _is_int(timeout_ms) or timeout_ms == 0 or timeout_ms < -1:
            return E_PARAM  # EXE-11
        if not live(model, SimModel):
            return E_HANDLE
        if isinstance(model, SubModel):
            return E_NOT_SUPPORT
        if not isinstance(model, BuiltModel):
            return E_PARAM  # EXE-10
        if not model.has_end_task or model.status != ModelStatus.READY:
            return E_EXECUTE  # EXE-12
        model.running += 1

        def finished(ok: bool, m: SimModel = model) -> None:
            m.running -= 1

        q = Queue(f"execute-model#{model.id}", transient=True)
        op = ExecuteOp(model.execution_plan, finished)
        self._assign_defaults(model)
        self.engine.enqueue(q, op)
        limit = None if timeout_ms == -1 else timeout_ms / 1000.0
        if not self._wait_until(lambda: op.done, limit):
            return int(Err.RT_STREAM_SYNC_TIMEOUT)  # EXE-13
        return q.take_error()

    # =========================================================================================
    # conditional tasks and sub-models (COND)

    def _assign_defaults(self, model: Any) -> None:
        """COND-03: ASSIGN_DEFAULT values written host-synchronously at execute time."""
        todo = [model]
        while todo:
            m = todo.pop()
            for h in self._conds.get(m, ()):
                if h.flag == 1 and h.alive:
                    self.mem.write_u64(h.addr, h.default)
            todo.extend(self._subs.get(m, ()))

    @guarded((E_CTX, UNWRITTEN))
    def cond_handle_create(self, model: Any, default_launch_value: int, flag: int, *,
                           null_handle: bool = False) -> tuple[int, Any]:
        """aclmdlRICondHandleCreate (COND-01/02): a capturing capture model; value 0."""
        if model is None or null_handle:
            return E_NULL, UNWRITTEN
        if not live(model, SimModel):
            return E_HANDLE, UNWRITTEN
        if isinstance(model, BuiltModel):
            return E_NOT_SUPPORT, UNWRITTEN
        if not _is_int(flag) or not 0 <= flag <= 1 or not _is_int(default_launch_value):
            return E_PARAM, UNWRITTEN
        if model.status != ModelStatus.CAPTURE_ACTIVE or model.session is None \
                or model.session.invalidated:
            return E_PARAM, UNWRITTEN
        addr = self.mem.alloc(8, "internal")
        model.internal_allocs.append(addr)
        self.mem.write_u64(addr, 0)  # COND-02
        h = CondHandle(model, addr, int(default_launch_value) & 0xFFFF_FFFF, int(flag))
        self._conds.setdefault(model, []).append(h)
        return OK, h

    @guarded((E_CTX, UNWRITTEN))
    def cond_handle_get_cond_ptr(self, handle: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRICondHandleGetCondPtr (COND-04)."""
        if handle is None or null_out:
            return E_NULL, UNWRITTEN
        if not live(handle, CondHandle):
            return E_HANDLE, UNWRITTEN
        return OK, handle.addr

    def add_cond_task(self, params: CondTaskParams, stream: Any,
                      flags: int) -> tuple[int, list[Any] | None]:
        """aclmdlRIAddCondTask (COND-05/06): fills ``size`` sub-model handles; a runtime-side
        failure zeroes the caller's array."""
        n = getattr(params, "model_ri_array", None)
        slots = None if n is None else [UNWRITTEN] * int(n)
        with self._cond:
            if self._closed:
                from .backend import BackendClosed
                raise BackendClosed("add_cond_task called on a closed SimBackend")
            if not self._has_context():
                return E_CTX, slots
            try:
                rc, subs = self._add_cond_task(params, stream, flags)
            finally:
                self._kick()
        if slots is None or rc == E_NULL:
            return rc, slots
        if rc:
            return rc, [None] * len(slots)
        for i in range(min(len(slots), len(subs))):
            slots[i] = subs[i]
        return OK, slots

    def _add_cond_task(self, p: Any, stream: Any, flags: int) -> tuple[int, list[Any]]:
        if stream is None:
            return E_NULL, []
        if not isinstance(p, CondTaskParams) or p.handle is None or p.model_ri_array is None:
            return E_PARAM, []
        if not _is_int(flags) or flags != 0 or not _is_int(p.type) or not 0 <= p.type <= 2:
            return E_PARAM, []
        size = p.size
        if not _is_int(size) or size < 1 or (p.type == CondTaskType.IF and size > 2) or \
                (p.type == CondTaskType.WHILE and size != 1):
            return E_PARAM, []
        if not live(p.handle, CondHandle):
            return E_HANDLE, []
        if p.handle.used:
            return E_PARAM, []
        if isinstance(stream, ModelStream):
            return E_NOT_CAPTURED, []
        if not live(stream, SimStream):
            return E_HANDLE, []
        if not stream.capturing:
            return E_NOT_CAPTURED, []
        parent = p.handle.model
        if stream.session.model is not parent:
            return E_PARAM, []
        subs = [SubModel(parent, i) for i in range(int(size))]
        for s in subs:
            s.faults = self.faults
        h, ctype = p.handle, int(p.type)
        try:
            self._append(stream, TaskRecord(TaskType.DEFAULT, default_kind="ext",
                                            src=lambda: CondOp(h, ctype, subs),
                                            trace="CONDITION_OP"))
        except ApiReturn as exc:
            return exc.rc, []
        h.used = True
        self._subs.setdefault(parent, []).extend(subs)
        return OK, subs

    @guarded(E_CTX)
    def capture_to_model_ri_begin(self, stream: Any, model: Any, mode: int) -> int:
        """aclmdlRICaptureToModelRIBegin (COND-07): capture ``stream`` into a sub-model."""
        if stream is None or model is None:
            return E_NULL
        if not live(model, SimModel):
            return E_HANDLE
        if not isinstance(model, SubModel):
            return E_PARAM
        if not _is_int(mode) or mode not in (0, 1, 2):
            return E_PARAM
        if isinstance(stream, ModelStream):
            return int(Err.RT_STREAM_MODEL)
        if not live(stream, SimStream):
            return E_HANDLE
        if stream.capturing:
            return int(Err.RT_STREAM_CAPTURED)
        if stream in self._bound:
            return int(Err.RT_STREAM_MODEL)
        if model.captured or model.session is not None:
            return int(Err.RT_MODEL_CAPTURED)
        if self._stream_refused():
            return self._refusal()  # FLD-06 (R2): the sub-model's internal stream
        model.captured = True
        model.status = ModelStatus.CAPTURE_ACTIVE
        sess = CaptureSession(model, stream, int(mode), threading.current_thread())
        model.session = sess
        sess.join(stream)
        self._sessions.append(sess)
        return OK

    def _sub_capture_end(self, st: SimStream, null_model: bool) -> tuple[int, Any]:
        """CaptureEnd of a sub-model capture (COND-08): the model argument may be NULL."""
        sess = st.session
        model = sess.model
        if st is not sess.origin:
            return int(Err.RT_STREAM_CAPTURE_UNMATCHED), UNWRITTEN
        if sess.mode != CaptureMode.RELAXED and threading.current_thread() != sess.thread:
            return self._end_wrong_thread(sess), UNWRITTEN
        out = UNWRITTEN if null_model else None
        rc = self._end_check(sess)
        if rc:  # the sub-model is emptied and can be captured again
            self._close_session(sess)
            model.streams.clear()
            model.events.clear()
            model.status = ModelStatus.READY
            model.captured = False
            return rc, out
        origin_ms = sess.streams[sess.origin]
        for me in sorted(model.events.values(), key=lambda m: m.order):
            model.append(origin_ms, TaskRecord(TaskType.EVENT_RESET, event=me,
                                               event_flag=me.flags))
        model.status = ModelStatus.READY
        self._close_session(sess)
        return OK, (UNWRITTEN if null_model else model)

    # =========================================================================================
    # names, ids, debug JSON (NAME, DBG)

    def _named(self, model: Any) -> tuple[int, Any]:
        if model is None:
            return E_NULL, None
        if not live(model, SimModel):
            return E_HANDLE, None
        return OK, model

    @guarded(E_CTX)
    def set_name(self, model: Any, name: str | None) -> int:
        """aclmdlRISetName (NAME-01/04): stored in full, the last call wins."""
        if name is None:
            return E_NULL
        rc, m = self._named(model)
        if rc:
            return rc
        if not isinstance(name, str):
            return E_PARAM
        self._names[m] = name
        return OK

    @guarded((E_CTX, UNWRITTEN))
    def get_name(self, model: Any, max_len: int, *, null_buf: bool = False) -> tuple[int, Any]:
        """aclmdlRIGetName (NAME-02/03/04): no truncation; a short buffer -> 507000 and the
        buffer cleared (memcpy_s); maxLen 0 -> 107000."""
        if null_buf:
            return E_NULL, UNWRITTEN
        rc, m = self._named(model)
        if rc:
            return rc, UNWRITTEN
        if not _is_int(max_len) or max_len <= 0:
            return E_PARAM, UNWRITTEN
        name = self._names.get(m, "")
        if max_len < len(name.encode("utf-8")) + 1:
            return E_INTERNAL, ""
        return OK, name

    @guarded((E_CTX, UNWRITTEN))
    def get_id(self, model: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRIGetId (NAME-05): the handle's process-unique id, never reused (Q-24)."""
        if null_out:
            return E_NULL, UNWRITTEN
        rc, m = self._named(model)
        if rc:
            return rc, UNWRITTEN
        return OK, m.id

    @guarded(E_CTX)
    def debug_json_print(self, model: Any, path: str | None, flags: int) -> int:
        """aclmdlRIDebugJsonPrint (DBG-01..04): a Chrome-trace JSON array, any time."""
        if path is None:
            return E_NULL
        rc, m = self._named(model)
        if rc:
            return rc
        if not isinstance(path, (str, os.PathLike)):
            return E_PARAM
        verbose = _is_int(flags) and bool(flags & 1)
        text = debug_json(m, self.mem, verbose)
        try:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError:
            return E_PARAM  # DBG-02
        return OK

    # =========================================================================================
    # destroy callbacks (LIFE-09..14)

    def _cb_model(self, model: Any, func: Any) -> tuple[int, Any]:
        if model is None or func is None:
            return E_PARAM, None
        if not live(model, SimModel):
            return E_HANDLE, None
        if isinstance(model, SubModel):
            return E_NOT_SUPPORT, None
        return OK, model

    @guarded(E_CTX)
    def destroy_register_callback(self, model: Any, func: Any, user_data: Any) -> int:
        """aclmdlRIDestroyRegisterCallback (LIFE-10/13): keyed by the callable alone."""
        rc, m = self._cb_model(model, func)
        if rc:
            return rc
        if not callable(func):
            return E_PARAM
        cbs = self._callbacks.setdefault(m, [])
        if any(f == func for f, _ in cbs):
            return E_PARAM
        cbs.append((func, user_data))
        return OK

    @guarded(E_CTX)
    def destroy_unregister_callback(self, model: Any, func: Any) -> int:
        """aclmdlRIDestroyUnregisterCallback (LIFE-10/12)."""
        rc, m = self._cb_model(model, func)
        if rc:
            return rc
        cbs = self._callbacks.get(m, [])
        for i, (f, _) in enumerate(cbs):
            if f == func:
                del cbs[i]
                return OK
        return E_PARAM

    # =========================================================================================
    # attributes, abort (ATTR, ABT)

    @guarded((E_CTX, UNWRITTEN))
    def kernel_task_get_attribute(self, task: Any, attr_id: int, *,
                                  null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRIKernelTaskGetAttribute (ATTR-01..06)."""
        if task is None or null_out:
            return E_NULL, UNWRITTEN  # ATTR-05
        if not (live(task, Task) and task.model.alive):
            return E_HANDLE, UNWRITTEN
        if task.host.type != TaskType.KERNEL:
            return E_PARAM, UNWRITTEN  # ATTR-01
        if not _is_int(attr_id) or attr_id not in {int(a) for a in QUERYABLE}:
            return E_PARAM, UNWRITTEN  # ATTR-02
        return OK, query(task.host.attrs, int(attr_id))

    @guarded(E_CTX)
    def abort(self, model: Any) -> int:
        """aclmdlRIAbort (ABT-01..03, Q-17): executions of the model that have started are
        abandoned (their stream's next sync returns 507011); queued ones still run later."""
        if model is None:
            return E_PARAM  # ABT-03
        if not live(model, SimModel):
            return E_HANDLE
        if isinstance(model, SubModel):
            return E_NOT_SUPPORT
        for q in list(self.engine.queues):
            for op in list(q.ops):
                if isinstance(op, ExecuteOp) and op.queues is not None \
                        and getattr(op._start, "__self__", None) is model:
                    op.abandon(self.engine)
        return OK


_OVERRIDES: dict[str, Callable] = {
    "get_streams": ExtendedSimMixin._ov_get_streams,
    "get_tasks_by_stream": ExtendedSimMixin._ov_get_tasks_by_stream,
    "task_get_type": ExtendedSimMixin._ov_task_get_type,
    "task_get_seq_id": ExtendedSimMixin._ov_task_get_seq_id,
    "task_get_params": ExtendedSimMixin._ov_task_get_params,
    "task_set_params": ExtendedSimMixin._ov_task_set_params,
    "task_disable": ExtendedSimMixin._ov_task_disable,
    "update": ExtendedSimMixin._ov_update,
    "destroy": ExtendedSimMixin._ov_destroy,
    "execute_async": ExtendedSimMixin._ov_execute_async,
    "capture_begin": ExtendedSimMixin._ov_capture_begin,
    "stream_wait_event": ExtendedSimMixin._ov_stream_wait_event,
    "reset_event": ExtendedSimMixin._ov_reset_event,
    "capture_end": ExtendedSimMixin._ov_capture_end,
}

__all__ = ["NOT_HOOKED", "ApiReturn", "ExtendedSimMixin"]
