"""SimBackend: the reference simulator's implementation of :class:`backends.contract.Backend`
and :class:`~backends.contract.ExtendedBackend`.

This class holds what every API area shares: construction and the simulator's state, handle
lookups, the plumbing that appends a captured task or enqueues work on a stream, the teardown
of a model and of a capture, and :meth:`close`. The API functions themselves come from the
per-area mixins of :mod:`backends.sim.api` (one module per C source of the emulator), each
function in exactly one method (pinned by tests/test_sim_layout.py).

Every API method runs under :func:`backends.sim.guard.guarded`: the big lock (an ``RLock``
wrapped in a ``Condition``), then argument checks in the order the runtime makes them
(ACL-layer NULL checks -> 100000, runtime checks -> 107000, handle checks -> 107017, then state
checks), then its work, then the device progress engine (:mod:`backends.sim.device`). Blocking
waits (stream sync, pageable async copies, destroy of a running model) release the lock through
``Condition.wait``, so other host threads can unblock the device meanwhile (THREADS).

Behaviour is documented per method with the clause ids of shared/ref/semantics.md; the choices
for the open questions are in :data:`backends.sim.CHOICES`.

``faults=`` (names of :data:`backends.faults.FAULTS`) builds a deliberately wrong simulator for
the kill matrix; every hook is a ``self.has_fault(NAME)`` test (or the model's ``in
self.faults``) next to the behaviour it breaks.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Iterable

from mdlri_conformance.backends.contract import (ALL_CAPS, EXTENDED_CAPS, Err, LiveCounts,
                                                 TaskType)
from mdlri_conformance.backends.faults import check as check_faults

from .api.attributes import AttributesApi
from .api.binary import BinaryApi
from .api.build import BuildApi
from .api.callbacks import CallbacksApi
from .api.capture import CaptureApi
from .api.checks import E_HANDLE, E_NULL, E_PARAM, OK
from .api.cond import CondApi
from .api.context import ContextApi
from .api.events import EventsApi
from .api.listing import ListingApi
from .api.memory import MemoryApi
from .api.model import ModelApi
from .api.names import NamesApi
from .api.streams import StreamsApi
from .api.switch import SwitchApi
from .api.taskgroups import TaskGroupsApi
from .api.update import UpdateApi
from .build import BuiltModel, op_to_record
from .capture import CaptureSession, ThreadModes, unsafe_blocked
from .cond import CondHandle, SubModel
from .device import Engine, Op, Queue
from .execution import ExecuteOp
from .events import SimEvent
from .guard import ApiReturn, ThreadContext
from .handles import SimContext
from .kernels import MANIFEST_PATH, BinHandle
from .limits import (DEFAULT_MODEL_STREAM_LIMIT, DEFAULT_STREAM_LIMIT, LimitsMixin,
                     field_capabilities)
from .memory import (DEFAULT_BASE, DEFAULT_FILL, DEFAULT_GUARD, DeviceMemorySpace,
                     PinnedRegistry)
from .model import ModelStream, SimModel, Task, TaskRecord, record_to_op
from .streams import SimStream
from .switch import Label
from .taskgroups import TaskGroup, UpdateState

VERSION = "mdlri-sim 0.1"


class SimBackend(ContextApi, StreamsApi, MemoryApi, EventsApi, BinaryApi, CaptureApi,
                 ListingApi, UpdateApi, ModelApi, TaskGroupsApi, BuildApi, CondApi, NamesApi,
                 CallbacksApi, AttributesApi, SwitchApi, LimitsMixin):
    """The reference simulator. Create it with :func:`backends.sim.create`."""

    name = "sim"
    #: the task-level and extended contract; an instance adds the field capabilities it can
    #: provoke (RESOURCE_LIMITS, DEVICE_FAULTS: backends.sim.limits.field_capabilities)
    capabilities = ALL_CAPS | EXTENDED_CAPS

    def __init__(self, *, destroy_wait_s: float = 10.0, base_address: int = DEFAULT_BASE,
                 guard_bytes: int = DEFAULT_GUARD, fill_byte: int = DEFAULT_FILL,
                 device_count: int = 1, faults: Iterable[str] = (),
                 stream_limit: int | None = DEFAULT_STREAM_LIMIT,
                 model_stream_limit: int | None = DEFAULT_MODEL_STREAM_LIMIT) -> None:
        self.faults = check_faults(faults)  # UnknownFault (ValueError) for a bad name
        #: has_fault(name) without a Python frame: every API call tests one or two hooks
        self.has_fault: Callable[[str], bool] = self.faults.__contains__
        #: field behaviours (backends.sim.limits): the stream-resource pool and the
        #: software-SQ SQ/CQ pool of one captured model (None = not modelled)
        self.stream_limit = None if stream_limit is None else int(stream_limit)
        self.model_stream_limit = None if model_stream_limit is None else int(model_stream_limit)
        self.capabilities = field_capabilities(self.stream_limit, MANIFEST_PATH)
        #: the reference shows everything it declares: a capability probe that takes one
        #: away found a bug and fails the gate (conformance.framework.probe)
        self.promised_capabilities = self.capabilities
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        #: the lock's own methods, bound once: what the guard takes and releases per call
        self._acquire, self._release = self._lock.acquire, self._lock.release
        self._closed = False
        self.destroy_wait_s = float(destroy_wait_s)
        self.device_count = int(device_count)
        self.mem = DeviceMemorySpace(base_address, guard_bytes, fill_byte)
        self.pinned = PinnedRegistry()
        self.engine = Engine(self.mem)
        self.engine.injected = self.faults
        self.default_stream = SimStream(default=True)
        self.engine.attach(self.default_stream.queue)
        self._streams: list[SimStream] = []
        self._events: list[SimEvent] = []
        self._models: list[SimModel] = []
        self._binaries: list[BinHandle] = []
        self._sessions: list[CaptureSession] = []
        self._modes = ThreadModes()
        self._tls = ThreadContext()
        self._tls.context = True  # the creating thread has the implicit context of device 0
        self._tls.device = 0
        self._contexts: dict[int, SimContext] = {}  # one primary context per device
        # task groups (TG), build path (BLD), cond (COND), names, destroy callbacks
        self._grp_open: dict[SimStream, TaskGroup] = {}     # stream -> group open on it
        self._groups: list[TaskGroup] = []                  # every live group
        self._upd: dict[SimStream, UpdateState] = {}        # streams in task-update mode
        self._bound: dict[SimStream, tuple[BuiltModel, ModelStream]] = {}
        self._labels: set[Label] = set()  # live aclrtCreateLabel labels (RT-40)
        self._conds: dict[SimModel, list[CondHandle]] = {}
        self._subs: dict[SimModel, list[SubModel]] = {}
        self._names: dict[SimModel, str] = {}
        self._callbacks: dict[SimModel, list[tuple[Any, Any]]] = {}
        self.callback_errors: list[str] = []  # exceptions raised by destroy callbacks

    # =========================================================================================
    # plumbing

    def has_fault(self, name: str) -> bool:
        """Whether the injected bug ``name`` (backends.faults) is switched on."""
        return name in self.faults

    def _has_context(self) -> bool:
        return getattr(self._tls, "context", False)

    def _kick(self) -> None:
        """Run the progress engine; wake waiters if anything happened (the guard runs it
        after every API call)."""
        if not self._closed and self.engine.progress():
            self._cond.notify_all()

    def _wait_until(self, pred: Callable[[], bool], timeout_s: float | None) -> bool:
        """Wait (releasing the lock) until ``pred()``; False on timeout. None waits forever."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        self._kick()
        while not pred():
            if self._closed:
                return False
            now = time.monotonic()
            wait = 0.5 if deadline is None else deadline - now
            if deadline is not None and wait <= 0:
                return False
            device = self.engine.next_deadline()  # a waiting kernel's timeout (TMO-10)
            if device is not None:
                wait = min(wait, max(device - now, 0.0) + 0.001)
            self._cond.wait(wait)
            self._kick()
        return True

    # -- handle lookups -----------------------------------------------------------------------

    def _stream(self, stream: Any) -> tuple[int, SimStream | None]:
        """Resolve a stream argument of an async call: None is the default stream."""
        if stream is None:
            return OK, self.default_stream
        if isinstance(stream, SimStream):
            return (OK, stream) if stream.alive else (E_HANDLE, None)
        if isinstance(stream, ModelStream):
            return E_PARAM, None  # a model-bound internal stream (EXE-06)
        return E_HANDLE, None

    def _event(self, event: Any) -> tuple[int, SimEvent | None]:
        if event is None:
            return E_NULL, None
        if isinstance(event, SimEvent) and event.alive:  # handles.live, without its frame
            return OK, event
        return E_HANDLE, None

    def _model(self, model: Any, null_rc: int) -> tuple[int, SimModel | None]:
        if model is None:
            return null_rc, None
        if isinstance(model, SimModel) and model.alive:
            return OK, model
        return E_HANDLE, None

    def _task(self, task: Any) -> tuple[int, Task | None]:
        """Task handles: NULL -> 107000; stale (removed by Update, destroyed model) -> 107017."""
        if task is None:
            return E_PARAM, None
        if isinstance(task, Task) and task.alive and task.model.alive:
            return OK, task
        return E_HANDLE, None

    @staticmethod
    def _task_refused(task: Task, built_too: bool) -> bool:
        """A live task of a sub-model (COND-10), or with ``built_too`` of a built model
        (BLD-06): the task API answers 207000."""
        return isinstance(task.model, SubModel) or (built_too and
                                                    isinstance(task.model, BuiltModel))

    def _open_group(self, st: Any) -> TaskGroup | None:
        """The task group open on user stream ``st`` in its current capture (TG-01)."""
        g = self._grp_open.get(st)
        if g is not None and g.open and st.session is g.session:
            return g
        return None

    def _unsafe_blocked(self) -> bool:
        """MODE-02/03/04/06/07/08/11 for the calling thread."""
        if not self._sessions or self.has_fault("capture-mode-ignored"):
            return False  # no open capture: nothing is refused (MODE-06)
        me = threading.current_thread()
        return unsafe_blocked(self._sessions, me, self._modes.get(), self._modes.leaked(me))

    # -- appending and enqueueing -------------------------------------------------------------

    def _append(self, st: SimStream, record: TaskRecord) -> Task:
        """Append a task issued on capturing stream ``st`` to its internal stream (CAP-01).

        Inside an open task group only kernels are captured (TG-04: 207001) and the task joins
        the group; while a group is open on another stream of the capture nothing else is
        captured (TG-05: 107034). Both refusals invalidate the capture and end the API call
        (:class:`ApiReturn`)."""
        sess: CaptureSession = st.session
        if self.has_fault("capture-executes") and record.type not in (
                TaskType.EVENT_WAIT, TaskType.VALUE_WAIT):
            self._enqueue(st, record_to_op(record))  # CAP-01 broken: runs at capture too
        g = self._open_group(st)
        if g is not None and record.type != TaskType.KERNEL:
            g.error = g.error or int(Err.RT_TASK_TYPE_NOT_SUPPORT)
            sess.invalidated = True
            raise ApiReturn(Err.RT_TASK_TYPE_NOT_SUPPORT)
        if g is None:
            for other in list(self._grp_open.values()):
                if other.open and other.session is sess and other.stream is not st:
                    other.error = other.error or int(Err.STREAM_TASK_GROUP_INTR)
                    sess.invalidated = True
                    raise ApiReturn(Err.STREAM_TASK_GROUP_INTR)
        task = sess.model.append(sess.streams[st], record)
        if g is not None:
            g.tasks.append(task)
            task.task_grp = g
        return task

    def _enqueue(self, st: SimStream, op: Op) -> Op:
        """Work issued on non-capturing stream ``st``: refused in task-update mode (TG-15,
        :class:`ApiReturn`), stored as a task on a stream bound to a built model (BLD-03),
        else queued."""
        if st in self._upd:
            raise ApiReturn(Err.RT_TASK_TYPE_NOT_SUPPORT)  # TG-15
        bound = self._bound.get(st)
        if bound is not None:
            m, ms = bound
            m.append(ms, op_to_record(op))  # BLD-03
            op.done = True
            return op
        return self.engine.enqueue(st.queue, op)

    def _discard_queue(self, q: Queue) -> None:
        while q.ops:
            op = q.ops.popleft()
            if isinstance(op, ExecuteOp):
                op.abandon(self.engine)
            op.finish()
            op.done = True

    # -- teardown -----------------------------------------------------------------------------

    def _free_model(self, model: SimModel) -> None:
        """Free a model (Destroy, failed CaptureEnd, close): its destroy callbacks run first
        (LIFE-09..14, not at close), then its sub-models, cond handles, task groups, bound
        streams and name go, its internal memory is released and its handles are
        invalidated (LIFE-01)."""
        callbacks = self._callbacks.pop(model, [])
        if not self._closed:  # LIFE-14: skipped at exit
            self._run_destroy_callbacks(callbacks)
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
        for addr in model.internal_allocs:
            self.mem.free(addr)
        model.internal_allocs.clear()
        model.invalidate_handles()
        if model in self._models:
            self._models.remove(model)

    def _close_session(self, sess: CaptureSession) -> None:
        """End a capture: streams back to NONE, event bindings released (STAT-04, XS-11)."""
        if sess in self._sessions:
            self._sessions.remove(sess)
        sess.release_streams()
        sess.release_events()
        sess.model.session = None

    # =========================================================================================
    # identity and teardown (Backend)

    def version(self) -> str:
        """A free-form version string."""
        return VERSION

    def stack(self) -> dict[str, str]:
        """The stack under test: this simulator, in this process, with no device below it."""
        return {"runtime": "the embedded simulator", "version": VERSION,
                "device": "none (simulated in the process)"}

    def kernel_binary_path(self) -> str:
        """Absolute path of kernel/sim_kernels.manifest."""
        return MANIFEST_PATH

    def close(self) -> None:
        """Drop all queued work and every resource; wake blocked waiters."""
        with self._cond:
            if self._closed:
                return
            self.engine.abandon_all()
            self._closed = True
            for sess in list(self._sessions):
                self._close_session(sess)
            for m in list(self._models):
                self._free_model(m)
            for s in self._streams:
                s.alive = False
            for e in self._events:
                e.alive = False
            for b in self._binaries:
                b.alive = False
                for f in b.functions.values():
                    f.alive = False
            self._streams.clear()
            self._events.clear()
            self._binaries.clear()
            self.mem.clear()
            self.pinned.clear()
            self._cond.notify_all()

    def live_counts(self) -> LiveCounts:
        """Live user resources, for leak checks."""
        with self._cond:
            return LiveCounts(
                models=len(self._models),
                streams=len(self._streams),
                events=len(self._events),
                allocations=self.mem.count("user") + self.pinned.count(),
                labels=len(self._labels),
                extra={"device_allocations": self.mem.count("user"),
                       "host_allocations": self.pinned.count(),
                       "internal_allocations": self.mem.count("internal"),
                       "binaries": len(self._binaries),
                       "open_captures": len(self._sessions)})

    @property
    def device_faults(self) -> list[str]:
        """Messages of device errors seen so far (accesses outside allocations, ...)."""
        with self._cond:
            return list(self.engine.faults)


__all__ = ["SimBackend", "VERSION"]
