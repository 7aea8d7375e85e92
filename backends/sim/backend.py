"""SimBackend: the reference simulator's implementation of :class:`backends.contract.Backend`.

Every public method takes the big lock (an ``RLock`` wrapped in a ``Condition``), checks its
arguments in the order the runtime does (ACL-layer NULL checks -> 100000, runtime checks ->
107000, handle checks -> 107017, then state checks), does its work, and runs the device progress
engine before returning (:mod:`backends.sim.device`). Blocking waits (stream sync, pageable
async copies, destroy of a running model) release the lock through ``Condition.wait``, so other
host threads can unblock the device meanwhile (THREADS).

Behaviour is documented per method with the clause ids of shared/ref/semantics.md; the choices
for the open questions are in :data:`backends.sim.CHOICES`.

``faults=`` (names of :data:`backends.sim.faults.FAULTS`) builds a deliberately wrong
simulator for the kill matrix; every hook is a ``self.has_fault(NAME)`` test (or the model's
``in self.faults``) next to the behaviour it breaks.
"""

from __future__ import annotations

import ctypes
import functools
import inspect
import threading
import time
from typing import Any, Callable, Iterable

import numpy as np

from mdlri_conformance.backends.contract import (ALL_CAPS, EXTENDED_CAPS, UNION_MEMBER_SIZE, UNION_SIZE,
                               UNWRITTEN, CaptureMode, EventFlag,
                               CaptureStatus, Err, EventRecordTaskParams,
                               EventResetTaskParams, EventWaitTaskParams, KernelTaskParams,
                               LiveCounts, MallocPolicy, StreamStatus, TaskParams, TaskType,
                               ValueWaitTaskParams, ValueWriteTaskParams)
from mdlri_conformance.kernel import catalog

from .capture import CaptureSession, ThreadModes, joined_ok, unrecorded_event, unsafe_blocked
from .device import (U64, Engine, ExecuteOp, MemcpyOp, MemsetOp, NopOp, Op, Queue,
                     RecordOp, ResetOp, ValueWaitOp, ValueWriteOp, WaitOp)
from .events import EX_ALLOWED, WITH_FLAG_ALLOWED, SimEvent, valid_flags
from .handles import SimContext, live
from .kernels import MANIFEST_PATH, BinHandle, FuncHandle, parse_manifest
from .memory import (DEFAULT_BASE, DEFAULT_FILL, DEFAULT_GUARD, DeviceMemorySpace,
                     PinnedRegistry, as_bytes_view)
from .extended import NOT_HOOKED, ExtendedSimMixin
from .guard import ApiReturn
from .faults import check as check_faults
from .limits import (DEFAULT_MODEL_STREAM_LIMIT, DEFAULT_STREAM_LIMIT, REFUSED,
                     RESOURCE_ALLOC_FAIL, LimitsMixin, field_capabilities)
from .model import ModelStatus, ModelStream, SimModel, Task, TaskRecord, record_to_op
from .streams import CAPTURE_FORBIDDEN_FLAGS, SYNC_NOOP_FLAGS, SimStream

VERSION = "mdlri-sim 0.1"

OK = int(Err.SUCCESS)
E_NULL = int(Err.INVALID_PARAM)            # 100000
E_PARAM = int(Err.RT_PARAM_INVALID)        # 107000
E_HANDLE = int(Err.RT_INVALID_HANDLE)      # 107017


class BackendClosed(RuntimeError):
    """A call on a backend after :meth:`SimBackend.close` (a harness fault)."""


E_CTX = int(Err.RT_CONTEXT_NULL)          # 107002

#: methods returning (rc, out) whose out stays UNWRITTEN when the thread has no context
_ONE_OUT = {"create_stream", "create_stream_with_config", "stream_query", "malloc",
            "malloc_host", "create_event", "create_event_with_flag",
            "create_event_ex_with_flag", "binary_load_from_file", "binary_get_function",
            "capture_end", "task_get_type", "task_get_seq_id", "task_get_params"}


def _no_context(fn: Callable, args: tuple, kwargs: dict) -> Any:
    """The result of a call from a thread without a current context (abi.md §6.1: 107002)."""
    name = fn.__name__
    bound = inspect.signature(fn).bind(None, *args, **kwargs)
    bound.apply_defaults()
    a = bound.arguments
    if name == "capture_thread_exchange_mode":
        return (E_NULL, UNWRITTEN) if a["mode"] is None else (E_CTX, a["mode"])
    if name in ("get_streams", "get_tasks_by_stream"):
        cap = a["capacity"]
        return E_CTX, (None if cap is None else [UNWRITTEN] * cap), UNWRITTEN
    if name == "capture_get_info":
        return E_CTX, UNWRITTEN, UNWRITTEN
    # ACL-layer checks come before the runtime's context check
    if name in ("get_device", "get_current_context"):
        return (E_NULL if a["null_out"] else E_CTX), UNWRITTEN
    if name == "synchronize_event_with_timeout" and _is_int(a["timeout_ms"]) \
            and a["timeout_ms"] < -1:
        return E_PARAM
    if name in ("synchronize_event", "synchronize_event_with_timeout") and a["event"] is None:
        return E_NULL
    if name in _ONE_OUT:
        return E_CTX, UNWRITTEN
    return E_CTX


def _api(fn: Callable) -> Callable:
    """Run a public method under the big lock, then let the device make progress.

    A thread without a current context (no set_device; the creating thread has one
    implicitly) gets 107002 (abi.md §6.1, ERR-03)."""

    @functools.wraps(fn)
    def wrapper(self: "SimBackend", *args: Any, **kwargs: Any) -> Any:
        with self._cond:
            if self._closed:
                raise BackendClosed(f"{fn.__name__} called on a closed SimBackend")
            if fn.__name__ != "set_device" and not self._has_context():
                return _no_context(fn, args, kwargs)
            try:
                hooked = self._ext_override(fn, args, kwargs)  # backends.sim.extended
                if hooked is not NOT_HOOKED:
                    return hooked
                return fn(self, *args, **kwargs)
            except ApiReturn as exc:
                return exc.rc
            finally:
                self._kick()

    return wrapper


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _host_bytes(data: Any) -> bytes | None:
    """Host argument bytes from bytes / bytearray / memoryview / numpy array, else None."""
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).tobytes()
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    return None


class SimBackend(LimitsMixin, ExtendedSimMixin):
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
        #: field behaviours (backends.sim.limits): the stream-resource pool and the
        #: software-SQ SQ/CQ pool of one captured model (None = not modelled)
        self.stream_limit = None if stream_limit is None else int(stream_limit)
        self.model_stream_limit = None if model_stream_limit is None else int(model_stream_limit)
        self.capabilities = field_capabilities(self.stream_limit, MANIFEST_PATH)
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._closed = False
        self.destroy_wait_s = float(destroy_wait_s)
        self.device_count = int(device_count)
        self.mem = DeviceMemorySpace(base_address, guard_bytes, fill_byte)
        self.pinned = PinnedRegistry()
        self.engine = Engine(self.mem)
        self.default_stream = SimStream(default=True)
        self.engine.attach(self.default_stream.queue)
        self._streams: list[SimStream] = []
        self._events: list[SimEvent] = []
        self._models: list[SimModel] = []
        self._binaries: list[BinHandle] = []
        self._sessions: list[CaptureSession] = []
        self._modes = ThreadModes()
        self._tls = threading.local()
        self._tls.context = True  # the creating thread has the implicit context of device 0
        self._tls.device = 0
        self._contexts: dict[int, SimContext] = {}  # one primary context per device
        self._ext_init()

    # =========================================================================================
    # plumbing

    def has_fault(self, name: str) -> bool:
        """Whether the injected bug ``name`` (backends.sim.faults) is switched on."""
        return name in self.faults

    def _has_context(self) -> bool:
        return getattr(self._tls, "context", False)

    def _kick(self) -> None:
        """Run the progress engine; wake waiters if anything happened."""
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
        if live(event, SimEvent):
            return OK, event
        return E_HANDLE, None

    def _model(self, model: Any, null_rc: int) -> tuple[int, SimModel | None]:
        if model is None:
            return null_rc, None
        if live(model, SimModel):
            return OK, model
        return E_HANDLE, None

    def _task(self, task: Any) -> tuple[int, Task | None]:
        """Task handles: NULL -> 107000; stale (removed by Update, destroyed model) -> 107017."""
        if task is None:
            return E_PARAM, None
        if live(task, Task) and task.model.alive:
            return OK, task
        return E_HANDLE, None

    def _unsafe_blocked(self) -> bool:
        """MODE-02/03/04/06/07/08/11 for the calling thread."""
        if self.has_fault("capture-mode-ignored"):
            return False
        me = threading.current_thread()
        return unsafe_blocked(self._sessions, me, self._modes.get(), self._modes.leaked(me))

    def _append(self, st: SimStream, record: TaskRecord) -> Task:
        """Append a task issued on capturing stream ``st`` to its internal stream (CAP-01)."""
        sess: CaptureSession = st.session
        if self.has_fault("capture-executes") and record.type not in (
                TaskType.EVENT_WAIT, TaskType.VALUE_WAIT):
            self._enqueue(st, record_to_op(record))  # CAP-01 broken: runs at capture too
        self._ext_before_append(st, record)  # task groups (may raise ApiReturn)
        task = sess.model.append(sess.streams[st], record)
        self._ext_after_append(st, task)
        return task

    def _enqueue(self, st: SimStream, op: Op) -> Op:
        stored = self._ext_enqueue(st, op)  # bound / task-update streams
        if stored is not None:
            return stored
        return self.engine.enqueue(st.queue, op)

    def _discard_queue(self, q: Queue) -> None:
        while q.ops:
            op = q.ops.popleft()
            if isinstance(op, ExecuteOp):
                op.abandon(self.engine)
            op.finish()
            op.done = True

    def _free_model(self, model: SimModel) -> None:
        """Release a model's internal memory and invalidate its handles (LIFE-01)."""
        self._ext_on_free(model)  # destroy callbacks, sub-models (backends.sim.extended)
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

    def _conflict(self, sess: CaptureSession, ev: SimEvent) -> int:
        """Cross-model event use: 107032, both models invalidated at model level (XS-07)."""
        sess.invalidated = True
        other = ev.binding.session if ev.binding is not None else None
        if other is not None:
            other.invalidated = True
        return int(Err.STREAM_CAPTURE_CONFLICT)

    def _bind(self, ev: SimEvent, model: SimModel):
        ev.binding = model
        return model.model_event(ev)

    # =========================================================================================
    # identity and teardown

    def version(self) -> str:
        """A free-form version string."""
        return VERSION

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

    # =========================================================================================
    # device

    @_api
    def set_device(self, device_id: int) -> int:
        """aclrtSetDevice: gives the calling thread a context; only ids < device_count exist."""
        if not _is_int(device_id) or not 0 <= device_id < self.device_count:
            return int(Err.RT_INVALID_DEVICEID)
        self._tls.context = True
        self._tls.device = int(device_id)
        return OK

    @_api
    def get_device(self, *, null_out: bool = False) -> tuple[int, Any]:
        """aclrtGetDevice: the calling thread's device id; NULL out -> 100000 (ACL layer,
        ``src/acl/aclrt_impl/device.cpp:131-141``); no context -> 107002."""
        if null_out:
            return E_NULL, UNWRITTEN
        return OK, int(self._tls.device)

    @_api
    def get_current_context(self, *, null_out: bool = False) -> tuple[int, Any]:
        """aclrtGetCurrentContext: the primary context handle of the calling thread's device
        (one per device, the same object for every thread); NULL out -> 100000 (ACL layer,
        ``src/acl/aclrt_impl/context.cpp:74-89``); no context -> 107002."""
        if null_out:
            return E_NULL, UNWRITTEN
        dev = int(self._tls.device)
        ctx = self._contexts.get(dev)
        if ctx is None:
            ctx = self._contexts[dev] = SimContext(dev)
        return OK, ctx

    # =========================================================================================
    # streams

    def _new_stream(self, flags: int, priority: int) -> SimStream:
        st = SimStream(flags, priority)
        self._streams.append(st)
        self.engine.attach(st.queue)
        return st

    @_api
    def create_stream(self) -> tuple[int, Any]:
        """aclrtCreateStream; the stream-resource pool full -> 207008 (FLD-06, R1)."""
        if self._stream_refused():
            return REFUSED, UNWRITTEN
        return OK, self._new_stream(0, 0)

    @_api
    def create_stream_with_config(self, priority: int, flag: int) -> tuple[int, Any]:
        """aclrtCreateStreamWithConfig: unknown flag bits give an ordinary stream (abi §3.2);
        the stream-resource pool full -> 207008 (FLD-06, R1)."""
        if not _is_int(priority) or not _is_int(flag) or priority < 0 or flag < 0:
            return E_PARAM, UNWRITTEN
        if self._stream_refused():
            return REFUSED, UNWRITTEN
        return OK, self._new_stream(int(flag), int(priority))

    @_api
    def destroy_stream(self, stream: Any) -> int:
        """aclrtDestroyStream: 107027 while capturing (CAP-21); waits for outstanding work
        (at most ``destroy_wait_s``; what is left then is discarded)."""
        if stream is None:
            return E_NULL
        rc, st = self._stream(stream)
        if rc:
            return rc
        if st.capturing:
            return int(Err.RT_STREAM_CAPTURED)
        self._wait_until(lambda: not st.queue.ops, self.destroy_wait_s)
        if not st.alive:
            return E_HANDLE
        self._discard_queue(st.queue)
        self.engine.detach(st.queue)
        st.alive = False
        self._streams.remove(st)
        return OK

    def _sync_checks(self, stream: Any) -> tuple[int, SimStream | None, bool]:
        """Common sync checks: returns (rc, stream, noop)."""
        rc, st = self._stream(stream)
        if rc:
            return rc, None, False
        if st.capturing:
            return int(Err.RT_STREAM_CAPTURED), None, False  # STAT-06
        return OK, st, bool(st.flags & SYNC_NOOP_FLAGS)  # TMO-04

    @_api
    def synchronize_stream(self, stream: Any) -> int:
        """aclrtSynchronizeStream: waits forever for the stream's queue to drain; returns a
        pending device error of the stream (507000 plain op, 507011 model execution)."""
        rc, st, noop = self._sync_checks(stream)
        if rc or noop:
            return rc
        self._wait_until(lambda: not st.queue.ops, None)
        return st.queue.take_error()

    @_api
    def synchronize_stream_with_timeout(self, stream: Any, timeout_ms: int) -> int:
        """aclrtSynchronizeStreamWithTimeout (TMO-01..04, TMO-07): < -1 -> 107000; 0 is one
        immediate check (the documented meaning, ``acl_rt.h:2817``; the real code's 107000 is
        TMO-08): 0 if the stream has drained, else 507046 at once; expiry -> 507046 with the work
        left queued (it completes later once unblocked). A pending device error of the stream
        (507000, 507011, 507015, 107020) is returned once the stream drains."""
        if not _is_int(timeout_ms) or timeout_ms < -1:
            return E_PARAM
        rc, st = self._stream(stream)
        if rc:
            return rc
        rc, st, noop = self._sync_checks(stream)
        if rc or noop:
            return rc
        if timeout_ms == 0 and not self.has_fault("timeout-zero-waits"):
            self._kick()
            if st.queue.ops:
                return int(Err.RT_STREAM_SYNC_TIMEOUT)
            return st.queue.take_error()
        limit = None if timeout_ms in (-1, 0) else timeout_ms / 1000.0
        if limit is not None and self.has_fault("timeout-early"):
            limit /= 10
        if self.has_fault("timeout-ignored"):
            limit = None
        if not self._wait_until(lambda: not st.queue.ops, limit):
            return int(Err.RT_STREAM_SYNC_TIMEOUT)
        return st.queue.take_error()

    @_api
    def stream_query(self, stream: Any) -> tuple[int, int]:
        """aclrtStreamQuery: COMPLETE when the queue is empty; 107027 while capturing."""
        if self.has_fault("crash-query"):
            ctypes.string_at(0)  # a real NULL read: SIGSEGV
        rc, st, _ = self._sync_checks(stream)
        if rc:
            return rc, UNWRITTEN
        if self.has_fault("hang-query-sync"):
            self._wait_until(lambda: not st.queue.ops, None)
        return OK, StreamStatus.NOT_READY if st.queue.ops else StreamStatus.COMPLETE

    # =========================================================================================
    # memory

    @_api
    def malloc(self, size: int, policy: int = MallocPolicy.HUGE_FIRST) -> tuple[int, int]:
        """aclrtMalloc: 64-byte aligned, not zeroed; size 0 -> 107000."""
        if not _is_int(size) or size <= 0 or not _is_int(policy) or policy < 0:
            return E_PARAM, UNWRITTEN
        return OK, self.mem.alloc(int(size), "user")

    @_api
    def free(self, dev_ptr: int | None) -> int:
        """aclrtFree: NULL or an address that is not a live allocation start -> 107000."""
        if dev_ptr is None or not _is_int(dev_ptr):
            return E_PARAM
        alloc = self.mem.find(int(dev_ptr))
        if alloc is None or alloc.base != dev_ptr or alloc.owner != "user":
            return E_PARAM
        self.mem.free(int(dev_ptr))
        return OK

    @_api
    def malloc_host(self, size: int) -> tuple[int, np.ndarray | None]:
        """aclrtMallocHost: a pinned uint8 buffer."""
        if not _is_int(size) or size <= 0:
            return E_PARAM, UNWRITTEN
        return OK, self.pinned.alloc(int(size))

    @_api
    def free_host(self, host: np.ndarray) -> int:
        """aclrtFreeHost: only buffers from malloc_host (NULL or others -> 107000)."""
        if host is None or not self.pinned.free(host):
            return E_PARAM
        return OK

    def _endpoint(self, ptr: Any, count: int, writable: bool) -> tuple[int, Any]:
        """Validate one side of a copy: device range or host buffer of >= count bytes."""
        if _is_int(ptr):
            if count and not self.mem.valid_range(int(ptr), count):
                return E_PARAM, None
            return OK, int(ptr)
        if isinstance(ptr, np.ndarray):
            if not ptr.flags.c_contiguous or ptr.nbytes < count:
                return E_PARAM, None
            if writable and not ptr.flags.writeable:
                return E_PARAM, None
            return OK, as_bytes_view(ptr)
        if not writable and isinstance(ptr, (bytes, bytearray, memoryview)):
            view = np.frombuffer(bytes(ptr), dtype=np.uint8)
            return (OK, view) if view.size >= count else (E_PARAM, None)
        return E_PARAM, None

    def _check_copy(self, dst: Any, dest_max: int, src: Any, count: int,
                    kind: int) -> tuple[int, Any, Any, bool]:
        """Shared memcpy checks -> (rc, dst endpoint, src endpoint, involves pageable host)."""
        if dst is None or src is None:
            return E_NULL, None, None, False
        if not (_is_int(dest_max) and _is_int(count) and _is_int(kind)):
            return E_PARAM, None, None, False
        if count < 0 or dest_max < 0 or count > dest_max or not 0 <= kind <= 4:
            return E_PARAM, None, None, False
        rc, d = self._endpoint(dst, int(count), True)
        if rc:
            return rc, None, None, False
        rc, s = self._endpoint(src, int(count), False)
        if rc:
            return rc, None, None, False
        pageable = any(isinstance(p, np.ndarray) and not self.pinned.is_pinned(p)
                       for p in (dst, src)) or isinstance(src, (bytes, bytearray, memoryview))
        return OK, d, s, pageable

    @_api
    def memcpy(self, dst: int | np.ndarray, dest_max: int, src: int | np.ndarray,
               count: int, kind: int) -> int:
        """aclrtMemcpy: synchronous and "unsafe" (MODE-01): 107030 when blocked (MODE-13)."""
        rc, d, s, _ = self._check_copy(dst, dest_max, src, count, kind)
        if rc:
            return rc
        if self._unsafe_blocked():
            return int(Err.RT_CAPTURE_MODE_NOT_SUPPORT)
        MemcpyOp(d, s, int(count)).step(self.engine, self.default_stream.queue)
        return OK

    @_api
    def memcpy_async(self, dst: int | np.ndarray, dest_max: int, src: int | np.ndarray,
                     count: int, kind: int, stream: Any) -> int:
        """aclrtMemcpyAsync. Capturing stream: a DEFAULT task reading host memory at execution
        (CAP-19); pageable host memory -> 107000 (MODE-14). Non-capturing stream with pageable
        memory: done synchronously after the stream drains, "unsafe" -> 107041 (MODE-13)."""
        rc, d, s, pageable = self._check_copy(dst, dest_max, src, count, kind)
        if rc:
            return rc
        rc, st = self._stream(stream)
        if rc:
            return rc
        if st.capturing:
            if pageable:
                return E_PARAM
            self._append(st, TaskRecord(TaskType.DEFAULT, default_kind="memcpy", dst=d, src=s,
                                        count=int(count)))
            return OK
        if pageable:
            if self._unsafe_blocked():
                return int(Err.RT_CAPTURE_MODE_BLOCK_ASYNC)
            op = self._enqueue(st, MemcpyOp(d, s, int(count)))
            self._wait_until(lambda: op.done, None)
            return OK
        self._enqueue(st, MemcpyOp(d, s, int(count)))
        return OK

    def _check_memset(self, dev_ptr: Any, max_count: int, value: int,
                      count: int) -> tuple[int, Any]:
        if dev_ptr is None:
            return E_NULL, None
        if not (_is_int(max_count) and _is_int(count) and _is_int(value)):
            return E_PARAM, None
        if count < 0 or max_count < 0 or count > max_count:
            return E_PARAM, None
        return self._endpoint(dev_ptr, int(count), True)

    @_api
    def memset(self, dev_ptr: int, max_count: int, value: int, count: int) -> int:
        """aclrtMemset: synchronous and "unsafe" (MODE-01, MODE-13 -> 107030)."""
        rc, d = self._check_memset(dev_ptr, max_count, value, count)
        if rc:
            return rc
        if self._unsafe_blocked():
            return int(Err.RT_CAPTURE_MODE_NOT_SUPPORT)
        MemsetOp(d, int(value), int(count)).step(self.engine, self.default_stream.queue)
        return OK

    @_api
    def memset_async(self, dev_ptr: int, max_count: int, value: int, count: int,
                     stream: Any) -> int:
        """aclrtMemsetAsync: captured as a DEFAULT task (TYPE-02)."""
        rc, d = self._check_memset(dev_ptr, max_count, value, count)
        if rc:
            return rc
        rc, st = self._stream(stream)
        if rc:
            return rc
        if st.capturing:
            self._append(st, TaskRecord(TaskType.DEFAULT, default_kind="memset", dst=d,
                                        fill=int(value), count=int(count)))
        else:
            self._enqueue(st, MemsetOp(d, int(value), int(count)))
        return OK

    # =========================================================================================
    # events

    def _new_event(self, flags: int, api: str) -> SimEvent:
        ev = SimEvent(flags, api)
        self._events.append(ev)
        return ev

    @_api
    def create_event(self) -> tuple[int, Any]:
        """aclrtCreateEvent: an old-mode event (XS-04)."""
        return OK, self._new_event(0, "create")

    @_api
    def create_event_with_flag(self, flag: int) -> tuple[int, Any]:
        """aclrtCreateEventWithFlag: old-mode unless EXTERNAL; unknown bits -> 107000."""
        if not valid_flags(flag, WITH_FLAG_ALLOWED):
            return E_PARAM, UNWRITTEN
        return OK, self._new_event(int(flag), "with_flag")

    @_api
    def create_event_ex_with_flag(self, flag: int) -> tuple[int, Any]:
        """aclrtCreateEventExWithFlag: new-mode (capture fork/join with SYNC)."""
        if not valid_flags(flag, EX_ALLOWED):
            return E_PARAM, UNWRITTEN
        return OK, self._new_event(int(flag), "ex")

    @_api
    def destroy_event(self, event: Any) -> int:
        """aclrtDestroyEvent: stale -> 107017 (LIFE-08). Captured copies live on in models."""
        rc, ev = self._event(event)
        if rc:
            return rc
        ev.alive = False
        self._events.remove(ev)
        return OK

    @_api
    def record_event(self, event: Any, stream: Any) -> int:
        """aclrtRecordEvent. In capture: old-mode -> 207000 (XS-04); no SYNC -> 0 and nothing
        recorded (XS-09); else an EVENT_RECORD task on the internal event. An event last
        recorded in another open capture is retargeted: rc 0, it is bound to this capture with
        a fresh internal event, neither capture is invalidated and the other keeps the record it
        has (XS-12, ``feature/aclgraph/v100/api_impl_capture_event.cc:120-160``). Default stream
        + captured event -> 107031."""
        rc, ev = self._event(event)
        if rc:
            return rc
        rc, st = self._stream(stream)
        if rc:
            return rc
        if st.capturing:
            sess: CaptureSession = st.session
            if ev.old_mode:
                return int(Err.RT_FEATURE_NOT_SUPPORT)
            if not ev.has_wait_task:
                return OK
            me = self._bind(ev, sess.model)  # XS-12: retargets an event of another capture
            me.recorded = True
            self._append(st, TaskRecord(TaskType.EVENT_RECORD, event=me, event_flag=ev.flags))
            return OK
        if st.default and ev.binding is not None:
            return int(Err.RT_STREAM_CAPTURE_IMPLICIT)
        op = self._enqueue(st, RecordOp(ev.state))
        if st in self._bound:
            ev.in_model = True  # a record stored in a built model (event sync: 107000)
        else:
            ev.last_record = op
        return OK

    @_api
    def stream_wait_event(self, stream: Any, event: Any) -> int:
        """aclrtStreamWaitEvent. No SYNC -> 107000 (XS-09). Capturing stream: event of this
        capture -> EVENT_WAIT task; of another open capture -> 107032 (XS-07); old-mode ->
        207000 (XS-04); otherwise 107024, capture kept (XS-05). Non-capturing stream waiting on
        an event recorded in an open capture joins that capture (fork, XS-01)."""
        rc, ev = self._event(event)
        if rc:
            return rc
        rc, st = self._stream(stream)
        if rc:
            return rc
        if not ev.has_wait_task:
            return E_PARAM
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
            return int(Err.RT_CAPTURE_DEPENDENCY)
        if ev.binding is not None:
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

    @_api
    def reset_event(self, event: Any, stream: Any) -> int:
        """aclrtResetEvent. No SYNC -> 107000 (XS-09). In capture: an EVENT_RESET task on the
        internal event (the event becomes captured); other capture's event -> 107032."""
        rc, ev = self._event(event)
        if rc:
            return rc
        rc, st = self._stream(stream)
        if rc:
            return rc
        if not ev.has_wait_task:
            return E_PARAM
        if st.capturing:
            sess: CaptureSession = st.session
            if ev.binding is not None and ev.binding is not sess.model:
                return self._conflict(sess, ev)
            if ev.old_mode:
                return int(Err.RT_FEATURE_NOT_SUPPORT)
            me = self._bind(ev, sess.model)
            self._append(st, TaskRecord(TaskType.EVENT_RESET, event=me, event_flag=ev.flags))
            return OK
        if st.default and ev.binding is not None:
            return int(Err.RT_STREAM_CAPTURE_IMPLICIT)
        self._enqueue(st, ResetOp(ev.state))
        return OK

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
        if ev.flags & EventFlag.EXTERNAL:
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

    @_api
    def synchronize_event(self, event: Any) -> int:
        """aclrtSynchronizeEvent: NULL -> 100000 (ACL layer); waits for the last record."""
        if event is None:
            return E_NULL
        return self._event_sync(event, -1)

    @_api
    def synchronize_event_with_timeout(self, event: Any, timeout_ms: int) -> int:
        """aclrtSynchronizeEventWithTimeout: timeout < -1 -> 107000, then NULL -> 100000 (ACL
        layer, ``src/acl/aclrt_impl/event.cpp:184-200``); then :meth:`_event_sync`."""
        if not _is_int(timeout_ms) or timeout_ms < -1:
            return E_PARAM
        if event is None:
            return E_NULL
        return self._event_sync(event, int(timeout_ms))

    def _external_use(self, ev: SimEvent, st: SimStream, kind: str) -> int:
        """An EXTERNAL record/wait on a capturing stream (XS-10, TYPE-03)."""
        from .cond import SubModel
        from .external import ExternalEventRef
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

    @_api
    def record_event_with_flag(self, event: Any, stream: Any, flag: int) -> int:
        """aclrtRecordEventWithFlag: NULL event, then a flag other than DEFAULT / EXTERNAL ->
        100000 (ACL layer, ``src/acl/aclrt_impl/event.cpp:96-110``); DEFAULT is aclrtRecordEvent;
        EXTERNAL (XS-10) appends a placeholder (TYPE-03) that records the user event at each
        replay."""
        if event is None or not _is_int(flag) or flag not in (0, 1):
            return E_NULL
        if flag == 0:
            return self.record_event(event, stream)
        rc, ev = self._event(event)
        if rc:
            return rc
        rc, st = self._stream(stream)
        if rc:
            return rc
        return self._external_use(ev, st, "ext_record")

    @_api
    def stream_wait_event_with_flag(self, stream: Any, event: Any, timeout: int,
                                    flag: int) -> int:
        """aclrtStreamWaitEventWithFlag: NULL event, a flag other than DEFAULT / EXTERNAL, and
        EXTERNAL with a timeout != 0 -> 100000 (ACL layer,
        ``src/acl/aclrt_impl/stream.cpp:239-256``);
        a timeout outside uint32 107000; DEFAULT is aclrtStreamWaitEvent; EXTERNAL appends a
        placeholder that waits on the user event at each replay (XS-10, TYPE-03)."""
        if event is None or not _is_int(flag) or flag not in (0, 1):
            return E_NULL
        if not _is_int(timeout) or not 0 <= timeout <= 0xFFFFFFFF:
            return E_PARAM
        if flag == 1 and timeout != 0:
            return E_NULL
        if flag == 0:
            return self.stream_wait_event(stream, event)
        rc, ev = self._event(event)
        if rc:
            return rc
        rc, st = self._stream(stream)
        if rc:
            return rc
        return self._external_use(ev, st, "ext_wait")

    # =========================================================================================
    # value write / wait

    def _check_value_addr(self, dev_addr: Any, value: Any) -> int:
        if dev_addr is None or not _is_int(dev_addr) or not _is_int(value):
            return E_PARAM
        if dev_addr % 8 or not self.mem.valid_range(int(dev_addr), 8):
            return E_PARAM
        return OK

    @_api
    def value_write(self, dev_addr: int | None, value: int, flag: int, stream: Any) -> int:
        """aclrtValueWrite: 8-byte aligned device address, flag 0 (abi.md §3.5)."""
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

    @_api
    def value_wait(self, dev_addr: int | None, value: int, flag: int, stream: Any) -> int:
        """aclrtValueWait: flag GEQ/EQ/AND/NOR (0..3), else 107000."""
        rc = self._check_value_addr(dev_addr, value)
        if rc:
            return rc
        if not _is_int(flag) or not 0 <= flag <= 3:
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

    # =========================================================================================
    # kernels

    @_api
    def binary_load_from_file(self, bin_path: str, options: Any = None) -> tuple[int, Any]:
        """aclrtBinaryLoadFromFile: an absolute path to a 'mdlri-sim-kernels 1' manifest."""
        if bin_path is None:
            return E_NULL, UNWRITTEN
        names = parse_manifest(bin_path)
        if names is None:
            return E_PARAM, UNWRITTEN
        b = BinHandle(bin_path, names)
        self._binaries.append(b)
        return OK, b

    @_api
    def binary_get_function(self, bin_handle: Any, kernel_name: str) -> tuple[int, Any]:
        """aclrtBinaryGetFunction: one stable handle per (binary, name)."""
        if bin_handle is None or kernel_name is None:
            return E_NULL, UNWRITTEN
        if not live(bin_handle, BinHandle):
            return E_HANDLE, UNWRITTEN
        if kernel_name not in bin_handle.names or kernel_name not in catalog.KERNELS:
            return E_PARAM, UNWRITTEN
        fn = bin_handle.functions.get(kernel_name)
        if fn is None:
            fn = FuncHandle(bin_handle, catalog.KERNELS[kernel_name])
            bin_handle.functions[kernel_name] = fn
        return OK, fn

    @_api
    def binary_unload(self, bin_handle: Any) -> int:
        """aclrtBinaryUnLoad: its function handles become invalid (107017)."""
        if bin_handle is None:
            return E_NULL
        if not live(bin_handle, BinHandle):
            return E_HANDLE
        bin_handle.alive = False
        for fn in bin_handle.functions.values():
            fn.alive = False
        self._binaries.remove(bin_handle)
        return OK

    @_api
    def launch_kernel_with_host_args(self, func_handle: Any, num_blocks: int, stream: Any,
                                     cfg: Any, host_args: bytes | None, args_size: int,
                                     placeholders: Any = None,
                                     placeholder_num: int = 0) -> int:
        """aclrtLaunchKernelWithHostArgs: NULL func/args -> 100000, bad func -> 107017; the
        first ``args_size`` bytes are copied to a fresh device block at the call (GETP-03)."""
        if func_handle is None or host_args is None:
            return E_NULL
        if not live(func_handle, FuncHandle):
            return E_HANDLE
        data = _host_bytes(host_args)
        if data is None or not _is_int(num_blocks) or not _is_int(args_size):
            return E_PARAM
        if num_blocks <= 0 or args_size <= 0 or args_size > len(data):
            return E_PARAM
        if placeholders is None and placeholder_num:
            return E_PARAM
        rc, st = self._stream(stream)
        if rc:
            return rc
        # stores or enqueues the kernel: capture, bound streams, update mode, launch
        # attributes and the op timeout of an ordinary stream (backends.sim.extended)
        return self._ext_launch(st, func_handle, num_blocks, cfg, data, args_size)

    # =========================================================================================
    # capture

    @_api
    def capture_begin(self, stream: Any, mode: int) -> int:
        """aclmdlRICaptureBegin (CAP-05/06/07/17/18/22): a new model with one internal stream."""
        if stream is None:
            return E_NULL
        if isinstance(stream, ModelStream):
            if not _is_int(mode) or mode not in (0, 1, 2):
                return E_PARAM
            return int(Err.RT_STREAM_MODEL)  # CAP-09: a model-bound stream
        if not live(stream, SimStream):
            return E_HANDLE
        if not _is_int(mode) or mode not in (0, 1, 2):
            return E_PARAM
        if stream.flags & CAPTURE_FORBIDDEN_FLAGS:
            return int(Err.RT_INTERNAL_ERROR)
        if stream.capturing:
            return int(Err.RT_STREAM_CAPTURED)
        if self._stream_refused():
            return REFUSED  # FLD-06 (R2): no model is created, the stream stays NONE
        model = SimModel()
        model.faults = self.faults
        sess = CaptureSession(model, stream, int(mode), threading.current_thread())
        model.session = sess
        sess.join(stream)
        self._sessions.append(sess)
        self._models.append(model)
        return OK

    @_api
    def capture_get_info(self, stream: Any, *, null_status: bool = False,
                         null_model: bool = False) -> tuple[int, Any, Any]:
        """aclmdlRICaptureGetInfo (STAT-01/02/03/05)."""
        if stream is None or (null_status and null_model):
            return E_NULL, UNWRITTEN, UNWRITTEN
        if isinstance(stream, ModelStream):
            status, model = CaptureStatus.NONE, None
        elif not live(stream, SimStream):
            return E_HANDLE, UNWRITTEN, UNWRITTEN
        else:
            status = stream.capture_status
            model = stream.session.model if stream.capturing else None
        return (OK, UNWRITTEN if null_status else status, UNWRITTEN if null_model else model)

    @_api
    def capture_thread_exchange_mode(self, mode: int | None) -> tuple[int, Any]:
        """aclmdlRICaptureThreadExchangeMode (MODE-05, MODE-09, MODE-10)."""
        if mode is None:
            return E_NULL, UNWRITTEN
        if not _is_int(mode) or not 0 <= mode <= 2:
            return E_PARAM, mode
        return OK, CaptureMode(self._modes.exchange(int(mode)))

    @_api
    def capture_end(self, stream: Any, *, null_model: bool = False) -> tuple[int, Any]:
        """aclmdlRICaptureEnd (CAP-04, CAP-10..16, XS-02/03/06/08, STAT-04/08)."""
        if stream is None:
            return E_NULL, UNWRITTEN
        if isinstance(stream, ModelStream):
            return int(Err.RT_STREAM_NOT_CAPTURED), UNWRITTEN
        if not live(stream, SimStream):
            return E_HANDLE, UNWRITTEN
        if not stream.capturing:
            return int(Err.RT_STREAM_NOT_CAPTURED), UNWRITTEN  # CAP-10
        sess: CaptureSession = stream.session
        model = sess.model
        if null_model:
            return E_PARAM, UNWRITTEN  # CAP-12: capture kept
        if stream is not sess.origin and not self.has_fault("end-on-joined-stream"):
            return int(Err.RT_STREAM_CAPTURE_UNMATCHED), UNWRITTEN  # CAP-11
        if sess.mode != CaptureMode.RELAXED and threading.current_thread() != sess.thread \
                and not self.has_fault("wrong-thread-end-accepted"):
            return self._end_wrong_thread(sess), UNWRITTEN  # CAP-14
        rc = self._end_check(sess)
        if rc:
            self._close_session(sess)  # CAP-13
            self._free_model(model)
            return rc, None
        origin_ms = sess.streams[sess.origin]
        for me in sorted(model.events.values(), key=lambda m: m.order):  # XS-08, Q-04
            if self.has_fault("no-event-reset-at-end"):
                break
            model.append(origin_ms, TaskRecord(TaskType.EVENT_RESET, event=me,
                                               event_flag=me.flags))
        model.status = ModelStatus.READY
        self._close_session(sess)
        if self.has_fault("side-stream-stays-captured"):
            for us in sess.streams:
                if us is not sess.origin:
                    us.session = sess  # STAT-04 broken: still reports ACTIVE
        return OK, model

    def _end_wrong_thread(self, sess: CaptureSession) -> int:
        """CAP-14 / Q-05: every stream leaves capture; the model is kept, READY, not returned.
        The beginning thread's capture mode is released (MODE-03; the fault
        ``wrong-thread-end-leaks-mode`` releases it on the calling thread instead)."""
        if self.has_fault("wrong-thread-end-leaks-mode"):
            self._modes.leak(sess.thread, sess.mode, threading.current_thread())
        sess.model.status = ModelStatus.READY
        self._close_session(sess)
        return int(Err.RT_STREAM_CAPTURE_WRONG_THREAD)

    def _end_check(self, sess: CaptureSession) -> int:
        """The CaptureEnd checks after the status checks, in runtime order."""
        rc = self._ext_end_check(sess)  # open task group, capturing sub-model
        if rc:
            return rc
        if sess.invalidated:
            return int(Err.RT_STREAM_CAPTURE_INVALIDATED)  # STAT-08
        if not joined_ok(sess) and not self.has_fault("unjoined-end-accepted"):
            return int(Err.RT_STREAM_UNJOINED)  # XS-02, XS-03
        if unrecorded_event(sess.model):
            return int(Err.RT_CAPTURE_DEPENDENCY)  # XS-06
        return OK

    # =========================================================================================
    # introspection

    def _slots(self, items: list[Any], capacity: int | None, *,
               copy_back: bool = False) -> tuple[int, list[Any] | None, Any]:
        """The two-phase array convention (LIST-03/04/05).

        ``copy_back=False`` (GetTasksByStream, ``core/src/stream/stream.cc:5427-5447``): the
        tail past the count is set to NULL; a short array is filled and 107039 returned.
        ``copy_back=True`` (GetStreams, LIST-14, ``api/api_c_standard_soc.cc:1874-1881``): the
        public API lists into a private array and copies back only on success, so slots past
        the count stay untouched and a short array is not written at all (107039,
        ``*numStreams`` = capacity)."""
        count = len(items)
        if capacity is None:
            return OK, None, count
        if not _is_int(capacity) or capacity < 0:
            raise ValueError(f"capacity must be None or a non-negative int, got {capacity!r}")
        slots: list[Any] = [UNWRITTEN] * capacity
        if capacity >= count:
            slots[:count] = items
            if not copy_back:
                slots[count:] = [None] * (capacity - count)
            return OK, slots, count
        if not copy_back or self.has_fault("no-107039"):
            slots[:capacity] = items[:capacity]
        if self.has_fault("listing-writes-past-capacity"):
            slots = list(items)
        if self.has_fault("no-107039"):
            return OK, slots, capacity
        return int(Err.RT_INSUFFICIENT_INPUT_ARRAY), slots, capacity

    @staticmethod
    def _untouched(capacity: int | None) -> list[Any] | None:
        return None if capacity is None else [UNWRITTEN] * capacity

    @_api
    def get_streams(self, model: Any, capacity: int | None, *,
                    null_count: bool = False) -> tuple[int, list[Any] | None, Any]:
        """aclmdlRIGetStreams (LIST-01..06, LIST-11): internal streams, origin last."""
        if model is None or null_count:
            return E_PARAM, self._untouched(capacity), UNWRITTEN
        rc, m = self._model(model, E_PARAM)
        if rc:
            return rc, self._untouched(capacity), UNWRITTEN
        return self._slots(m.listed_streams(), capacity, copy_back=True)

    @_api
    def get_tasks_by_stream(self, stream: Any, capacity: int | None, *,
                            null_count: bool = False) -> tuple[int, list[Any] | None, Any]:
        """aclmdlRIGetTasksByStream (LIST-06/07/08/11): tasks in append order. A user stream,
        or an internal stream of a destroyed model, is "not a model stream" -> 107000."""
        if stream is None or null_count:
            return E_PARAM, self._untouched(capacity), UNWRITTEN
        if isinstance(stream, SimStream) and not stream.alive:
            return E_HANDLE, self._untouched(capacity), UNWRITTEN
        if not live(stream, ModelStream):
            return E_PARAM, self._untouched(capacity), UNWRITTEN
        return self._slots(list(stream.tasks), capacity)

    @_api
    def task_get_type(self, task: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRITaskGetType (TYPE-02, TYPE-06, TYPE-07): the host-side type."""
        if task is None or null_out:
            return E_PARAM, UNWRITTEN
        rc, t = self._task(task)
        if rc:
            return rc, UNWRITTEN
        return OK, TaskType(t.host.type)

    @_api
    def task_get_seq_id(self, task: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRITaskGetSeqId (SEQ-01..08)."""
        if task is None or null_out:
            return E_PARAM, UNWRITTEN
        rc, t = self._task(task)
        if rc:
            return rc, UNWRITTEN
        return OK, t.seq_id

    @_api
    def task_get_params(self, task: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRITaskGetParams (GETP-01..07): DEFAULT -> 107000; zeroed then filled."""
        if task is None or null_out:
            return E_PARAM, UNWRITTEN
        rc, t = self._task(task)
        if rc:
            return rc, UNWRITTEN
        if t.host.type == TaskType.DEFAULT and t.host.default_kind in ("ext_record", "ext_wait"):
            return OK, self._external_params(t.host)  # TYPE-04
        if t.host.type == TaskType.DEFAULT:
            return E_PARAM, UNWRITTEN
        if self.has_fault("getparams-device-record"):
            return OK, self._params_of(t.dev)
        return OK, self._params_of(t.host)

    @staticmethod
    def _external_params(rec: TaskRecord) -> TaskParams:
        """GetParams of an external record/wait placeholder: EVENT_RECORD / EVENT_WAIT with
        recordFlag / waitFlag EXTERNAL (TYPE-04)."""
        from .external import external_flag, params_type
        ttype = params_type(rec.default_kind)
        p = TaskParams(type=ttype, rsv0=(0, 0, 0), task_grp=None, rsv1=bytes(32),
                       union_tail=bytes(UNION_SIZE - UNION_MEMBER_SIZE[ttype]))
        ev, flag = rec.event.user_event, external_flag(rec.default_kind)
        if ttype == TaskType.EVENT_RECORD:
            p.event_record = EventRecordTaskParams(ev, rec.event_flag, flag)
        else:
            p.event_wait = EventWaitTaskParams(ev, rec.event_flag, flag)
        return p

    @staticmethod
    def _params_of(rec: TaskRecord) -> TaskParams:
        """Build the zero-initialised aclmdlRITaskParams for a record (GETP-02..05)."""
        ttype = TaskType(rec.type)
        p = TaskParams(type=ttype, rsv0=(0, 0, 0), task_grp=None, rsv1=bytes(32),
                       union_tail=bytes(UNION_SIZE - UNION_MEMBER_SIZE[ttype]))
        if ttype == TaskType.KERNEL:
            p.op_info_ptr, p.op_info_size = rec.op_info_ptr, rec.op_info_size
            p.kernel = KernelTaskParams(func_handle=rec.func, cfg=None, args=rec.args_addr,
                                        is_host_args=0, args_size=rec.args_size,
                                        num_blocks=rec.num_blocks, rsv=(0,) * 10)
        elif ttype == TaskType.EVENT_RECORD:
            p.event_record = EventRecordTaskParams(rec.event, rec.event_flag, 0)
        elif ttype == TaskType.EVENT_WAIT:
            p.event_wait = EventWaitTaskParams(rec.event, rec.event_flag, 0)
        elif ttype == TaskType.EVENT_RESET:
            p.event_reset = EventResetTaskParams(rec.event, rec.event_flag, 0)
        elif ttype == TaskType.VALUE_WRITE:
            p.value_write = ValueWriteTaskParams(rec.dev_addr, rec.value)
        elif ttype == TaskType.VALUE_WAIT:
            p.value_wait = ValueWaitTaskParams(rec.dev_addr, rec.value, rec.flag)
        return p

    # =========================================================================================
    # update

    @staticmethod
    def _update_blocked(model: SimModel) -> bool:
        """Preliminary state check of SetParams/Disable: capturing, FAULT or running
        (an execution enqueued and not completed) -> 107040, no state change (SETP-11..13)."""
        running = model.running > 0 and "setparams-while-running" not in model.faults
        return model.status in (ModelStatus.CAPTURE_ACTIVE, ModelStatus.FAULT) or running

    @_api
    def task_set_params(self, task: Any, params: TaskParams | None) -> int:
        """aclmdlRITaskSetParams (SETP-01..16): host record now, device record at Update."""
        if task is None or params is None:
            return E_PARAM
        rc, t = self._task(task)
        if rc:
            return rc
        model = t.model
        if self._update_blocked(model):
            return int(Err.RT_MODEL_UPDATE_FAILED)
        rc, rec = self._new_record(t, params)
        if rc:
            if not self.has_fault("bad-type-no-fault"):
                model.status = ModelStatus.FAULT  # SETP-10
            return rc
        t.host = rec
        t.disabled = False  # DIS-04: last write wins
        if self.has_fault("setparams-without-update"):
            t.dev = rec  # SETP-01 broken: live at once, the model stays READY
            return OK
        model.status = ModelStatus.UPDATING
        return OK

    def _new_record(self, task: Task, params: Any) -> tuple[int, TaskRecord | None]:
        """Validate SetParams input against the task; the new host record or an error."""
        if not isinstance(params, TaskParams):
            return E_PARAM, None
        ptype = params.type
        if ptype == TaskType.KERNEL:
            return self._kernel_record(task, params)
        if ptype in (TaskType.VALUE_WRITE, TaskType.VALUE_WAIT):
            return self._value_record(task, params)
        return E_PARAM, None  # SETP-03

    def _kernel_record(self, task: Task, params: TaskParams) -> tuple[int, TaskRecord | None]:
        """SETP-04/05/09/15/16."""
        k = params.kernel
        if task.host.type != TaskType.KERNEL or params.task_grp is not None or k is None:
            return E_PARAM, None
        if k.func_handle is None:
            return E_PARAM, None
        if not live(k.func_handle, FuncHandle):
            return E_HANDLE, None
        if k.args is None or not _is_int(k.args_size) or k.args_size <= 0:
            return E_PARAM, None
        if not _is_int(k.num_blocks) or k.num_blocks < 0:
            return E_PARAM, None
        size = int(k.args_size)
        if k.is_host_args == 1:
            data = _host_bytes(k.args)
            if data is None or len(data) < size:
                return E_PARAM, None
            addr = self.mem.alloc(size, "internal")
            self.mem.write(addr, data[:size])
            task.model.internal_allocs.append(addr)
        elif k.is_host_args == 0 and _is_int(k.args):
            addr = int(k.args)
        else:
            return E_PARAM, None
        keep_info = params.op_info_ptr is not None and _is_int(params.op_info_size) \
            and params.op_info_size > 0
        return OK, TaskRecord(TaskType.KERNEL, func=k.func_handle, args_addr=addr,
                              args_size=size, num_blocks=int(k.num_blocks) & 0xFFFF,
                              op_info_ptr=params.op_info_ptr if keep_info else None,
                              op_info_size=int(params.op_info_size) if keep_info else 0)

    def _value_record(self, task: Task, params: TaskParams) -> tuple[int, TaskRecord | None]:
        """SETP-07: converts any non-DEFAULT task into a value write / wait."""
        if task.host.type == TaskType.DEFAULT or params.task_grp is not None:
            return E_PARAM, None
        if params.op_info_ptr is not None or params.op_info_size != 0:
            return E_PARAM, None
        wait = params.type == TaskType.VALUE_WAIT
        m = params.value_wait if wait else params.value_write
        if m is None or m.dev_addr is None or not _is_int(m.dev_addr) or not _is_int(m.value):
            return E_PARAM, None
        if m.dev_addr % 8:
            return E_PARAM, None
        flag = 0
        if wait:
            if not _is_int(m.flag) or not 0 <= m.flag <= 3:
                return E_PARAM, None
            flag = int(m.flag)
        return OK, TaskRecord(TaskType(params.type), dev_addr=int(m.dev_addr),
                              value=int(m.value) & U64, flag=flag)

    @_api
    def task_disable(self, task: Any) -> int:
        """aclmdlRITaskDisable (DIS-01..10): marks the task; removed at Update."""
        if task is None:
            return E_PARAM
        rc, t = self._task(task)
        if rc:
            return rc
        model = t.model
        if self._update_blocked(model):
            return int(Err.RT_MODEL_UPDATE_FAILED)
        if t.host.type == TaskType.DEFAULT and not self.has_fault("disable-default-accepted"):
            model.status = ModelStatus.FAULT  # DIS-06
            return E_PARAM
        t.disabled = True
        t.host = t.host.replace(op_info_ptr=None, op_info_size=0)  # DIS-10
        model.status = ModelStatus.UPDATING
        return OK

    @_api
    def update(self, model: Any) -> int:
        """aclmdlRIUpdate (UPD-01..04): commits host records, drops disabled tasks."""
        rc, m = self._model(model, E_PARAM)
        if rc:
            return rc
        if m.status == ModelStatus.READY:
            return OK
        if m.status == ModelStatus.FAULT and self.has_fault("fault-not-sticky"):
            m.status = ModelStatus.READY
            return OK
        if m.status != ModelStatus.UPDATING:
            return int(Err.RT_MODEL_UPDATE_FAILED)
        m.commit_update()
        m.status = ModelStatus.READY
        return OK

    # =========================================================================================
    # execute / destroy

    @_api
    def execute_async(self, model: Any, stream: Any) -> int:
        """aclmdlRIExecuteAsync (EXE-01..09, EXE-15). NULL stream = default stream (Q-08)."""
        rc, m = self._model(model, E_PARAM if self.has_fault("execute-null-model-107000")
                            else E_NULL)
        if rc:
            return rc
        rc, st = self._stream(stream)
        if rc:
            return rc
        if st.capturing and not self.has_fault("execute-on-capturing-stream"):
            return int(Err.RT_STREAM_CAPTURED)  # EXE-05
        if st.flags & SYNC_NOOP_FLAGS:
            return E_PARAM  # abi.md §5.3: execute on an ordinary stream
        if m.status == ModelStatus.CAPTURE_ACTIVE:
            return int(Err.RT_MODEL_CAPTURED)  # EXE-04
        if m.status != ModelStatus.READY and not (
                m.status == ModelStatus.UPDATING and self.has_fault("execute-while-updating")):
            return int(Err.RT_MODEL_EXECUTE)  # SETP-02, EXE-07
        if self._model_streams_refused(m):
            return RESOURCE_ALLOC_FAIL  # FLD-08 (R4): nothing runs, the model stays READY
        m.running += 1

        def finished(ok: bool, m: SimModel = m) -> None:
            m.running -= 1

        self._enqueue(st, ExecuteOp(m.execution_plan, finished))
        return OK

    @_api
    def destroy(self, model: Any) -> int:
        """aclmdlRIDestroy (LIFE-01..04, LIFE-06): waits up to ``destroy_wait_s`` for running
        executions, then 107037."""
        rc, m = self._model(model, E_NULL)
        if rc:
            return OK if rc == E_HANDLE and self.has_fault("double-destroy-ok") else rc
        if m.session is not None:
            if not self.has_fault("destroy-capturing-model"):
                return int(Err.RT_MODEL_CAPTURED)  # LIFE-02
            self._close_session(m.session)
        if not self._wait_until(lambda: m.running == 0, self.destroy_wait_s):
            return int(Err.RT_MODEL_RUNNING)  # LIFE-03
        if not m.alive:
            return E_HANDLE  # destroyed by another thread meanwhile
        if self.has_fault("destroy-leaks-model"):
            m.invalidate_handles()  # LIFE-01 broken: memory and the live count stay
            return OK
        self._free_model(m)
        return OK
