"""The spec-side helpers: resources with cleanup, buffers, kernels, capture, listing.

A :class:`Dev` wraps one backend for one spec: the base fixture every spec module builds on
(setups shared by several areas live in ``specs/_setups.py`` and take a ``Dev``; a helper one
area needs stays in that area's module). Each helper exists once, here, and its docstring
states the rule it encodes. Everything it creates is released when the
spec ends (in reverse order, after open captures are closed and streams drained), so a
failing spec does not leak into the next one. Helper calls that are not the observable a
spec checks use ``expect.ok`` (a failure there names the helper step, and a 207000 / 207019
there makes the spec UNSUPPORTED); the observable itself is always asserted in the spec with
the raw backend call.

Readbacks (:meth:`Dev.read`, :meth:`Dev.read64`, :meth:`Dev.read_bytes`) judge device memory,
so they need what the capability probes showed (:mod:`conformance.probe`): without
``Cap.DATA_MOVEMENT`` every readback, and without ``Cap.KERNEL_EXEC`` a readback in a spec that
used a kernel, raises :class:`outcomes.Unsupported` with the probe's finding.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np

from mdlri_conformance.backends.contract import (
    NOT_SUPPORTED_CODES, UNWRITTEN, Backend, Cap, CaptureMode, CaptureStatus, Err, EventFlag,
    MemcpyKind, TaskParams, TaskType, ValueWaitFlag,
)
from mdlri_conformance.backends.task_params import kernel_task_params
from mdlri_conformance.kernel import catalog

from . import expect
from .framework import outcomes
from .framework import probe

#: int32 sentinel written into outputs before a run (scenarios.md S6 uses -1)
SENTINEL = -1
#: the default timed sync of the specs, in ms (the seed example's 5000 ms)
SYNC_MS = 5000


@dataclass(frozen=True)
class Buf:
    """A device buffer of ``n`` int32 values at device address ``addr``."""

    addr: int
    n: int

    @property
    def nbytes(self) -> int:
        return 4 * self.n

    def __int__(self) -> int:
        return self.addr

    def at(self, index: int) -> int:
        """Device address of element ``index``."""
        return self.addr + 4 * index


class Dev:
    """Resource-tracking convenience layer over a :class:`Backend` for one spec."""

    def __init__(self, backend: Backend) -> None:
        self.b = backend
        self._undo: list[tuple[str, Callable[[], Any]]] = []
        self._streams: list[Any] = []
        self._bin: Any = None
        self._funcs: dict[str, Any] = {}
        self._models: list[Any] = []
        #: whether the spec looked up a kernel (its readbacks then judge kernel output)
        self.kernels_used = False

    # -- resources -------------------------------------------------------------------------
    def track(self, what: str, fn: Callable[[], Any]) -> None:
        """Run ``fn`` at the end of the spec (in reverse order of registration)."""
        self._undo.append((what, fn))

    def stream(self, flags: int | None = None) -> Any:
        """A new stream (ordinary, or aclrtCreateStreamWithConfig ``flags``), destroyed at the
        end of the spec; cleanup ends a capture a failing spec left open on it."""
        if flags is None:
            rc, s = self.b.create_stream()
            expect.ok(rc, "aclrtCreateStream (setup)")
        else:
            rc, s = self.b.create_stream_with_config(0, flags)
            expect.ok(rc, f"aclrtCreateStreamWithConfig({flags:#x}) (setup)")
        self._streams.append(s)
        self.track("destroy_stream", lambda: self.b.destroy_stream(s))
        return s

    def event(self, flag: int = EventFlag.SYNC) -> Any:
        """A new capture-capable event (aclrtCreateEventExWithFlag(SYNC) by default)."""
        rc, e = self.b.create_event_ex_with_flag(flag)
        expect.ok(rc, "aclrtCreateEventExWithFlag (setup)")
        self.track("destroy_event", lambda: self.b.destroy_event(e))
        return e

    def buffer(self, values: Any = None, *, n: int | None = None,
               fill: int | None = SENTINEL) -> Buf:
        """A device int32 buffer holding ``values``, or ``n`` copies of ``fill``."""
        if values is not None:
            arr = np.asarray(values, dtype=np.int32)
        else:
            if n is None:
                raise ValueError("buffer() needs values or n")
            arr = np.full(n, 0 if fill is None else fill, dtype=np.int32)
        rc, addr = self.b.malloc(max(arr.nbytes, 4))
        expect.ok(rc, "aclrtMalloc (setup)")
        self.track("free", lambda: self.b.free(addr))
        buf = Buf(addr, len(arr))
        if values is not None or fill is not None:
            self.write(buf, arr)
        return buf

    def buffer64(self, value: int = 0) -> int:
        """An 8-byte device word (for value write/wait), initialised to ``value``."""
        rc, addr = self.b.malloc(64)
        expect.ok(rc, "aclrtMalloc (setup)")
        self.track("free", lambda: self.b.free(addr))
        self.write64(addr, value)
        return addr

    def model(self, model: Any) -> Any:
        """Register a model for destruction at the end of the spec."""
        self._models.append(model)
        return model

    def destroy(self, model: Any) -> int:
        """Destroy a tracked model now (it is not destroyed again at cleanup); returns rc.

        Specs must use this rather than ``b.destroy`` on a tracked model: a second destroy
        of a freed handle is use-after-free on real hardware (LIFE-06).
        """
        rc = self.b.destroy(model)
        if rc == Err.SUCCESS:
            self._models = [m for m in self._models if m is not model]
        return rc

    def forget(self, model: Any) -> None:
        """Stop tracking a model the spec destroyed (or that the runtime destroyed)."""
        self._models = [m for m in self._models if m is not model]

    # -- host <-> device -------------------------------------------------------------------
    def write(self, buf: Buf, values: Any) -> None:
        """Synchronous H2D copy of int32 values into ``buf``."""
        arr = np.ascontiguousarray(values, dtype=np.int32)
        expect.ok(self.b.memcpy(buf.addr, buf.nbytes, arr, arr.nbytes,
                                MemcpyKind.HOST_TO_DEVICE), "aclrtMemcpy H2D (setup)")

    def readable(self, what: str = "reading device memory") -> None:
        """Raise :class:`outcomes.Unsupported` when a readback cannot judge anything here: no
        data movement, or no kernel execution after the spec used a kernel."""
        __tracebackhide__ = True
        caps = self.b.capabilities
        if Cap.DATA_MOVEMENT not in caps:
            raise outcomes.Unsupported(f"{what} needs data movement: "
                                       f"{probe.reason(self.b, Cap.DATA_MOVEMENT) or 'absent'}",
                                       caps=(Cap.DATA_MOVEMENT.value,))
        if self.kernels_used and Cap.KERNEL_EXEC not in caps:
            raise outcomes.Unsupported(f"{what} after a kernel launch needs kernel execution: "
                                       f"{probe.reason(self.b, Cap.KERNEL_EXEC) or 'absent'}",
                                       caps=(Cap.KERNEL_EXEC.value,))

    def read(self, buf: Buf) -> np.ndarray:
        """Synchronous D2H copy of ``buf``."""
        self.readable()
        out = np.zeros(buf.n, dtype=np.int32)
        expect.ok(self.b.memcpy(out, out.nbytes, buf.addr, buf.nbytes,
                                MemcpyKind.DEVICE_TO_HOST), "aclrtMemcpy D2H (readback)")
        return out

    def write64(self, addr: int, value: int) -> None:
        """Synchronous H2D store of one uint64."""
        arr = np.array([value & 0xFFFF_FFFF_FFFF_FFFF], dtype=np.uint64)
        expect.ok(self.b.memcpy(addr, 8, arr, 8, MemcpyKind.HOST_TO_DEVICE),
                  "aclrtMemcpy H2D (setup)")

    def read64(self, addr: int) -> int:
        """Synchronous D2H load of one uint64."""
        self.readable()
        out = np.zeros(1, dtype=np.uint64)
        expect.ok(self.b.memcpy(out, 8, addr, 8, MemcpyKind.DEVICE_TO_HOST),
                  "aclrtMemcpy D2H (readback)")
        return int(out[0])

    def read_bytes(self, addr: int, nbytes: int) -> bytes:
        """Synchronous D2H copy of raw bytes."""
        self.readable()
        out = np.zeros(nbytes, dtype=np.uint8)
        expect.ok(self.b.memcpy(out, nbytes, addr, nbytes, MemcpyKind.DEVICE_TO_HOST),
                  "aclrtMemcpy D2H (readback)")
        return out.tobytes()

    # -- kernels ---------------------------------------------------------------------------
    def func(self, name: str) -> Any:
        """The function handle of catalog kernel ``name`` (binary loaded once per spec)."""
        self.kernels_used = True
        if self._bin is None:
            rc, h = self.b.binary_load_from_file(self.b.kernel_binary_path(), None)
            expect.ok(rc, "aclrtBinaryLoadFromFile (setup)")
            self._bin = h
            self.track("binary_unload", lambda: self.b.binary_unload(h))
        if name not in self._funcs:
            rc, f = self.b.binary_get_function(self._bin, name)
            expect.ok(rc, f"aclrtBinaryGetFunction {name} (setup)")
            self._funcs[name] = f
        return self._funcs[name]

    @staticmethod
    def args(name: str, **values: Any) -> bytes:
        """Packed argument bytes of kernel ``name``; buffers may be passed as :class:`Buf`."""
        return catalog.get(name).pack(**{k: int(v) for k, v in values.items()})

    def launch_rc(self, name: str, stream: Any, num_blocks: int = 1, **values: Any) -> int:
        """Launch catalog kernel ``name`` with host args; returns the rc."""
        data = self.args(name, **values)
        return self.b.launch_kernel_with_host_args(self.func(name), num_blocks, stream, None,
                                                   data, len(data))

    def launch(self, name: str, stream: Any, num_blocks: int = 1, **values: Any) -> None:
        """Launch and require success."""
        expect.ok(self.launch_rc(name, stream, num_blocks, **values),
                  f"aclrtLaunchKernelWithHostArgs {name}")

    def fill(self, stream: Any, out: Buf, value: int) -> None:
        """Launch the catalog ``fill`` kernel: every element of ``out`` becomes ``value`` (the
        specs' distinguishable one-kernel task: its output names the launch that ran)."""
        self.launch("fill", stream, out=out, n=out.n, value=value)

    def kernel_params(self, name: str, *, cfg: Any = None, num_blocks: int = 1,
                      host: bool = True, **values: Any) -> TaskParams:
        """KERNEL SetParams input running catalog kernel ``name`` on ``values``: the packed
        struct as host args, or (``host=False``) copied into a new device buffer whose address
        is passed with isHostArgs 0 (SETP-09)."""
        data = self.args(name, **values)
        args: bytes | int = data
        if not host:
            args = self.buffer(np.frombuffer(data, dtype=np.int32)).addr
        return kernel_task_params(self.func(name), args, args_size=len(data), cfg=cfg,
                                  num_blocks=num_blocks)

    def fill_params(self, out: Buf, value: int, *, num_blocks: int = 1,
                    host: bool = True) -> TaskParams:
        """:meth:`kernel_params` of a :meth:`fill` of ``out`` with ``value``."""
        return self.kernel_params("fill", num_blocks=num_blocks, host=host, out=out, n=out.n,
                                  value=value)

    # -- capture ---------------------------------------------------------------------------
    def begin(self, stream: Any, mode: int = CaptureMode.RELAXED) -> None:
        """CaptureBegin, required to succeed."""
        expect.ok(self.b.capture_begin(stream, mode), "aclmdlRICaptureBegin")

    def end(self, stream: Any) -> Any:
        """CaptureEnd, required to succeed; the model is destroyed at the end of the spec."""
        rc, m = self.b.capture_end(stream)
        expect.ok(rc, "aclmdlRICaptureEnd")
        expect.true(m is not None, "aclmdlRICaptureEnd model", "non-NULL", m)
        return self.model(m)

    def end_rc(self, stream: Any) -> tuple[int, Any]:
        """CaptureEnd whatever its rc (the spec asserts it); returns (rc, modelRI out-param).

        A model is tracked for destruction only when CaptureEnd succeeded and wrote a handle:
        after a failed CaptureEnd the out-param is no model the spec owns (ERR-04).
        """
        rc, m = self.b.capture_end(stream)
        if rc == Err.SUCCESS and m not in (None, UNWRITTEN):
            self.model(m)
        return rc, m

    def capture_status(self, stream: Any, what: str) -> tuple[Any, Any]:
        """CaptureGetInfo on ``stream``, required to succeed; returns (status, model).
        ``what`` completes the step's name in a failure message."""
        rc, st, m = self.b.capture_get_info(stream)
        expect.ok(rc, f"aclmdlRICaptureGetInfo {what}")
        return st, m

    def fork(self, origin: Any, sub: Any, event: Any = None) -> Any:
        """Record ``event`` (a new SYNC event by default) on ``origin`` and make ``sub`` wait
        on it: a stream waiting on an event recorded in a capture joins it (XS-01). Returns
        the event."""
        e = self.event() if event is None else event
        expect.ok(self.b.record_event(e, origin), "aclrtRecordEvent (fork)")
        expect.ok(self.b.stream_wait_event(sub, e), "aclrtStreamWaitEvent (fork)")
        return e

    def join(self, origin: Any, sub: Any, event: Any = None) -> Any:
        """Record ``event`` (a new SYNC event by default) on ``sub`` and make ``origin`` wait
        on it: ``sub`` rejoins the origin, as CaptureEnd requires of every joined stream
        (XS-02). Returns the event."""
        e = self.event() if event is None else event
        expect.ok(self.b.record_event(e, sub), "aclrtRecordEvent (join)")
        expect.ok(self.b.stream_wait_event(origin, e), "aclrtStreamWaitEvent (join)")
        return e

    def gated(self, stream: Any, word: int, kernel: str, **values: Any) -> Any:
        """Capture value_wait(``word`` == 1) then one launch of catalog ``kernel`` on
        ``stream``; returns the model. Each execution blocks at the wait until the host writes
        1 to ``word``: how the specs hold a model running (needs Cap.BLOCKING_WAIT to block).
        """
        self.begin(stream)
        expect.ok(self.b.value_wait(word, 1, ValueWaitFlag.EQ, stream),
                  "aclrtValueWait in capture (setup)")
        self.launch(kernel, stream, **values)
        return self.end(stream)

    def capture_fills(self, values: list[int], *, n: int = 8,
                      stream: Any = None) -> tuple[Any, Any, list[Buf]]:
        """Single-stream capture of one :meth:`fill` per value, each into its own buffer of
        ``n`` elements, on ``stream`` (a new one by default); returns (model, stream, buffers)."""
        s = self.stream() if stream is None else stream
        bufs = [self.buffer(n=n) for _ in values]
        self.begin(s)
        for b, v in zip(bufs, values):
            self.fill(s, b, v)
        return self.end(s), s, bufs

    def execute(self, model: Any, stream: Any, timeout_ms: int = SYNC_MS) -> None:
        """ExecuteAsync then a timed sync, both required to succeed."""
        expect.ok(self.b.execute_async(model, stream), "aclmdlRIExecuteAsync")
        self.sync(stream, timeout_ms)

    def sync(self, stream: Any, timeout_ms: int = SYNC_MS) -> None:
        """Timed stream sync, required to succeed."""
        expect.ok(self.b.synchronize_stream_with_timeout(stream, timeout_ms),
                  "aclrtSynchronizeStreamWithTimeout")

    # -- listing ---------------------------------------------------------------------------
    @staticmethod
    def _two_phase(get: Callable[[Any, Any], tuple[int, Any, int]], handle: Any,
                   call: str) -> list[Any]:
        """The two-phase listing convention (LIST-03): a NULL array asks for the count, then
        an array of that size is filled; both calls required to succeed."""
        rc, _, n = get(handle, None)
        expect.ok(rc, f"{call} (count)")
        rc, slots, got = get(handle, n)
        expect.ok(rc, f"{call} (fill)")
        return list(slots[:got])

    def streams_of(self, model: Any) -> list[Any]:
        """Two-phase GetStreams, required to succeed."""
        return self._two_phase(self.b.get_streams, model, "aclmdlRIGetStreams")

    def tasks_of(self, stream: Any) -> list[Any]:
        """Two-phase GetTasksByStream, required to succeed."""
        return self._two_phase(self.b.get_tasks_by_stream, stream, "aclmdlRIGetTasksByStream")

    def all_tasks(self, model: Any) -> list[Any]:
        """Every task of every stream of ``model`` (streams in GetStreams order)."""
        return [t for s in self.streams_of(model) for t in self.tasks_of(s)]

    def type_of(self, task: Any) -> int:
        rc, t = self.b.task_get_type(task)
        expect.ok(rc, "aclmdlRITaskGetType")
        return t

    def seq_of(self, task: Any) -> int:
        rc, i = self.b.task_get_seq_id(task)
        expect.ok(rc, "aclmdlRITaskGetSeqId")
        return i

    def params_of(self, task: Any) -> Any:
        rc, p = self.b.task_get_params(task)
        expect.ok(rc, "aclmdlRITaskGetParams")
        return p

    def tasks_of_type(self, model: Any, ttype: int) -> list[Any]:
        """Tasks of one type, in GetStreams then list order."""
        return [t for t in self.all_tasks(model) if self.type_of(t) == ttype]

    def kernel_tasks(self, model: Any) -> list[Any]:
        return self.tasks_of_type(model, TaskType.KERNEL)

    # -- teardown --------------------------------------------------------------------------
    def close(self) -> list[str]:
        """Release everything; returns a line per cleanup step that failed."""
        problems: list[str] = []
        # most recent stream first: a sub-model capture ends before its parent (COND-09)
        for s in reversed(self._streams):
            rc, st, _ = self.b.capture_get_info(s)
            if rc == Err.SUCCESS and st != CaptureStatus.NONE:
                rc, m = self.b.capture_end(s)
                if rc == Err.SUCCESS and m and not any(m is t for t in self._models):
                    self._models.append(m)  # destroyed below (a sub-model answers 207000)
        for s in self._streams:
            self.b.synchronize_stream_with_timeout(s, 2000)
        for m in reversed(self._models):
            rc = self.b.destroy(m)
            if rc != Err.SUCCESS and rc not in NOT_SUPPORTED_CODES:
                problems.append(f"destroy model: rc {rc}")
        self._models.clear()
        for what, fn in reversed(self._undo):
            try:
                rc = fn()
            except Exception as exc:  # harness cleanup must go on
                problems.append(f"{what}: {exc}")
                continue
            if isinstance(rc, int) and rc not in (Err.SUCCESS,):
                problems.append(f"{what}: rc {rc}")
        self._undo.clear()
        if Cap.CAPTURE_MODES in self.b.capabilities:
            self.b.capture_thread_exchange_mode(CaptureMode.GLOBAL)  # MODE-05 initial value
        return problems


#: how long a spec waits for a worker thread before failing
THREAD_JOIN_S = 30.0


def in_thread(backend: Backend, fn: Callable[[], Any], *, set_device: bool = True) -> Any:
    """Run ``fn`` in a new host thread and return its result; exceptions are re-raised here.

    The thread first calls aclrtSetDevice(0) (every thread that calls the runtime must),
    unless ``set_device`` is False (specs about a thread with no context, ERR-03).
    """
    box: dict[str, Any] = {}

    def body() -> None:
        try:
            if set_device:
                box["dev_rc"] = backend.set_device(0)
            box["value"] = fn()
        except BaseException as exc:  # re-raised in the spec's thread
            box["exc"] = exc

    t = threading.Thread(target=body, name="mdlri-spec-worker")
    t.start()
    t.join(THREAD_JOIN_S)
    if t.is_alive():
        expect.fail("worker thread", f"done within {THREAD_JOIN_S} s", "still running")
    if "exc" in box:
        raise box["exc"]
    if set_device:
        expect.ok(box["dev_rc"], "aclrtSetDevice (worker thread)")
    return box["value"]


def release_later(dev: Dev, flag: int, delay_s: float
                  ) -> tuple[threading.Timer, dict[str, float]]:
    """A timer (not started) whose thread stores 1 to the gate word ``flag`` with a host
    memcpy after ``delay_s``; the dict gets when the store began ("at", before the write, so
    a wait cannot end earlier) and the memcpy's rc ("rc"). The thread never raises: the spec
    checks "rc" after joining it, and a spec interrupted before then leaves nothing unhandled."""
    released: dict[str, float] = {}

    def release() -> None:
        dev.b.set_device(0)
        one = np.array([1], dtype=np.uint64)
        released["at"] = time.monotonic()
        released["rc"] = dev.b.memcpy(flag, 8, one, 8, MemcpyKind.HOST_TO_DEVICE)

    return threading.Timer(delay_s, release), released


def iter_pairs(items: list[Any]) -> Iterator[tuple[Any, Any]]:
    """Consecutive pairs of a list."""
    return zip(items, items[1:])


class Worker:
    """One long-lived host thread that runs calls on request (a capture begun and ended in the
    same thread, CAP-14); it calls aclrtSetDevice(0) first. Exceptions are re-raised in the
    caller's thread; a call that does not answer within THREAD_JOIN_S fails."""

    def __init__(self, backend: Any) -> None:
        self._jobs: "queue.Queue[Callable[[], Any] | None]" = queue.Queue()
        self._results: "queue.Queue[tuple[bool, Any]]" = queue.Queue()
        self._thread = threading.Thread(target=self._loop, args=(backend,),
                                        name="mdlri-spec-worker", daemon=True)
        self._thread.start()
        expect.ok(self._answer(), "aclrtSetDevice (worker thread)")

    def _loop(self, backend: Any) -> None:
        self._results.put((True, backend.set_device(0)))
        while (job := self._jobs.get()) is not None:
            try:
                self._results.put((True, job()))
            except BaseException as exc:  # re-raised in the spec's thread
                self._results.put((False, exc))

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` in the worker and return its result."""
        self._jobs.put(fn)
        return self._answer()

    def _answer(self) -> Any:
        try:
            ok, value = self._results.get(timeout=THREAD_JOIN_S)
        except queue.Empty:
            expect.fail("worker thread", f"answer within {THREAD_JOIN_S} s", "no answer")
        if not ok:
            raise value
        return value

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join(THREAD_JOIN_S)
