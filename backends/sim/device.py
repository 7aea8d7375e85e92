"""The device: FIFO queues of operations and a deterministic, eager progress engine.

Every user stream owns a :class:`Queue`; every running model execution owns one transient
queue per internal model stream (EXE-01, EXE-15). After each API call that enqueues work or
changes device/host state, the backend calls :meth:`Engine.progress`, which repeatedly runs the
head operation of every queue until no queue can advance. An operation may be *blocked*: an
event wait whose event is not set, a value wait whose condition fails (abi.md §3.5), or an
:class:`~backends.sim.execution.ExecuteOp` whose model queues have not drained yet.

Events use *flag* semantics: a record sets the flag, a wait blocks until it is set (and does not
clear it), a reset clears it.

Device errors: an access outside any allocation (:class:`~backends.sim.memory.DeviceAccessError`)
or a :class:`DeviceFault` raised by an operation is caught here. On a plain stream the operation is
dropped and the queue gets a sticky error returned and cleared by the next sync: the fault's
:attr:`DeviceFault.stream_error` (507000 by default; 507015 for an AI Core exception of the
``trap_if`` kernel, FLD-09; 107020 for a kernel that ran past its TIMEOUT / TIMEOUT_US launch
attribute, TMO-10). Inside a model execution every queue of that execution is abandoned and the
execute operation completes with a sticky 507011 on the execution stream, whatever the fault
(FLD-10, TMO-11: ``core/src/task/task_info/model/model_execute_task.cc:227-251``). The message is
kept in :attr:`Engine.faults`. A catalog kernel that raises anything else (numpy on garbage
arguments) becomes a :class:`DeviceFault` in :meth:`KernelOp.step`, so one bad kernel never
poisons the engine.

Waiting kernels (``wait_flag``): a kernel whose catalog ``ready`` predicate is false blocks its
queue; it started when it first reached the head of its queue, and once its timeout has passed
there it completes with the task-timeout bit (:class:`TaskTimeout`). :meth:`Engine.next_deadline`
tells blocked host waiters when to look again.

The engine has no lock of its own: the backend calls it under its big lock.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

from mdlri_conformance.backends.contract import Err, ValueWaitFlag
from mdlri_conformance.kernel.catalog import KernelTrap

from . import fastkernels
from .memory import DeviceAccessError, DeviceMemorySpace

U64 = 0xFFFF_FFFF_FFFF_FFFF


class DeviceFault(RuntimeError):
    """A device-side error raised while executing an operation.

    ``stream_error`` is what the next sync of a plain stream returns for it."""

    stream_error: int = int(Err.RT_INTERNAL_ERROR)


class AICoreException(DeviceFault):
    """A kernel raised an AI Core exception (``trap_if``): 507015 on a plain stream (FLD-09,
    ``core/src/task/task_info/davinci/davinci_kernel_task.cc:974-1026``)."""

    stream_error = int(Err.RT_AICORE_EXCEPTION)


class TaskTimeout(DeviceFault):
    """A kernel still waiting when its launch timeout passed: the task completes with the
    timeout bit, 107020 on a plain stream (TMO-10,
    ``core/src/task/task_info/task_manager.cc:378-392``, ``core/src/stream/stream.cc:1975-1976``)."""

    stream_error = int(Err.RT_TASK_TIMEOUT)


@dataclass
class EventState:
    """The device flag of an event (a user event, or a model's internal capture event)."""

    is_set: bool = False


# ---------------------------------------------------------------------------------------------
# Operations


class Op:
    """One device operation. :meth:`step` returns True once the operation has completed.

    ``done`` starts as the class default False (one instance attribute fewer to set on each
    of the many ops an execution creates); the engine sets it on the instance."""

    label = "op"
    done = False
    #: whether the class overrides :meth:`finish` (the engine skips the call of the no-op;
    #: set for every subclass by ``__init_subclass__``)
    _has_finish = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._has_finish = cls.finish is not Op.finish

    def step(self, engine: "Engine", queue: "Queue") -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def finish(self) -> None:
        """Called once after the op completed or faulted (release resources)."""

    def deadline(self) -> float | None:
        """``time.monotonic()`` value at which a blocked op changes by itself (a timeout)."""
        return None

    def abandon(self, engine: "Engine") -> None:
        """Drop the work this op started elsewhere (a model execution's queues)."""

    #: whether :meth:`stable` must be asked before the op runs from a :class:`TracedPlan`
    check_stable = False

    def stable(self) -> bool:
        """Whether the op still runs as it did when a trace of its plan was kept: it completes
        or faults in one step, needs no queue, and blocks on nothing but event flags."""
        return True

    def __repr__(self) -> str:
        return f"<{self.label}>"


#: a memory endpoint: a device address or a flat uint8 view of a host buffer
Endpoint = "int | np.ndarray"


def read_endpoint(mem: DeviceMemorySpace, src: "int | np.ndarray", count: int) -> np.ndarray:
    """``count`` bytes from a device address or a host byte view."""
    if isinstance(src, np.ndarray):
        if count > src.size:
            raise DeviceFault(f"host read of {count} bytes from a {src.size}-byte buffer")
        return src[:count].copy()
    return mem.read(src, count)


def write_endpoint(mem: DeviceMemorySpace, dst: "int | np.ndarray", data: np.ndarray) -> None:
    """Store bytes at a device address or into a host byte view."""
    if isinstance(dst, np.ndarray):
        if data.size > dst.size:
            raise DeviceFault(f"host write of {data.size} bytes into a {dst.size}-byte buffer")
        dst[:data.size] = data
    else:
        mem.write(dst, data)


class NopOp(Op):
    """Does nothing (the NOP added by Update to emptied streams, DIS-07)."""

    label = "nop"

    def step(self, engine: "Engine", queue: "Queue") -> bool:
        return True


class MemcpyOp(Op):
    """A copy between device and/or host memory, reading the source when it runs (CAP-19)."""

    label = "memcpy"

    def __init__(self, dst: "int | np.ndarray", src: "int | np.ndarray", count: int) -> None:
        self.dst, self.src, self.count = dst, src, count

    def step(self, engine: "Engine", queue: "Queue") -> bool:
        count = self.count
        if count:
            mem = engine.mem
            # fast path: both ends in range, one numpy copy (a temporary when they overlap);
            # anything else takes the checked read-then-write path, which reports it
            src, dst = self.src, self.dst
            if isinstance(src, np.ndarray):
                sv = src[:count] if 0 < count <= src.size and src.itemsize == 1 else None
            else:
                sv = mem.view(src, count)
            if sv is not None:
                if isinstance(dst, np.ndarray):
                    dv = dst[:count] if count <= dst.size and dst.itemsize == 1 else None
                else:
                    dv = mem.view(dst, count)
                if dv is not None:
                    dv[:] = sv
                    return True
            write_endpoint(mem, dst, read_endpoint(mem, src, count))
        return True


class MemsetOp(Op):
    """Byte fill of device (or host) memory."""

    label = "memset"

    def __init__(self, dst: "int | np.ndarray", value: int, count: int) -> None:
        self.dst, self.value, self.count = dst, value, count

    def step(self, engine: "Engine", queue: "Queue") -> bool:
        count = self.count
        if count:
            dst = self.dst
            if isinstance(dst, np.ndarray):
                dv = dst[:count] if 0 < count <= dst.size and dst.itemsize == 1 else None
            else:
                dv = engine.mem.view(dst, count)
            if dv is not None:
                dv[:] = self.value & 0xFF
                return True
            write_endpoint(engine.mem, dst, np.full(count, self.value & 0xFF, dtype=np.uint8))
        return True


class KernelOp(Op):
    """Runs a catalog kernel with the argument bytes read from device memory at ``args_addr``.

    ``timeout_s`` is the launch's op timeout (TIMEOUT / TIMEOUT_US, default 1800 s; None =
    never): a kernel that is not ready (``wait_flag``) blocks until it is, or until that time
    has passed since it first reached the head of its queue (:class:`TaskTimeout`).

    The catalog semantics are the whole launch's, whatever ``num_blocks`` is (KRN-01): the
    body runs once. Only the injected fault ``whole-kernel-per-block`` (``engine.injected``)
    runs it once per block."""

    label = "kernel"

    def __init__(self, spec, args_addr: int, args_size: int,
                 release: Callable[[], None] | None = None,
                 timeout_s: float | None = None, num_blocks: int = 1) -> None:
        self.spec, self.args_addr, self.args_size = spec, args_addr, args_size
        self._release = release
        self.timeout_s = timeout_s
        self.num_blocks = num_blocks
        self.started: float | None = None
        self._raw: bytes | None = None  # the argument bytes last decoded, and their values
        self._args: Any = None
        #: the memory layout those values were prepared for, and the prepared body (None:
        #: the catalog body runs)
        self._layout: int | None = None
        self._fast: Callable[[], None] | None = None
        #: where the argument bytes lie (the allocation's bytes and the range in them), read
        #: there while the layout holds
        self._args_mem: bytearray = bytearray()
        self._args_at = self._args_end = 0

    def step(self, engine: "Engine", queue: "Queue") -> bool:
        mem = engine.mem
        fast = self._fast
        if (fast is not None and self._layout == mem.layout and not engine.injected
                and self._args_mem[self._args_at:self._args_end] == self._raw):
            # prepared for this layout and these argument bytes, which are read again here
            # (in place: the bytes of the allocation prepared for) on every run
            fast()
            return True
        raw = mem.read_bytes(self.args_addr, self.args_size)
        spec = self.spec
        if self.args_size < spec.args_size:
            raise DeviceFault(f"kernel {spec.name}: {self.args_size} argument bytes, "
                              f"the struct needs {spec.args_size}")
        try:
            # a kernel that never waits, no injected fault: the argument bytes are read above
            # on every run and decoded again only when they changed
            if spec.ready is None and not engine.injected:
                if raw != self._raw or self._layout != getattr(mem, "layout", None):
                    self._decode(mem, raw)
                fast = self._fast
                if fast is not None:
                    fast()
                else:
                    spec.body(mem, self._args)
                return True
            if not spec.is_ready(mem, raw):
                now = time.monotonic()
                if self.started is None:
                    self.started = now
                if self.timeout_s is not None and now - self.started >= self.timeout_s:
                    raise TaskTimeout(f"kernel {self.spec.name}: still waiting after "
                                      f"{self.timeout_s:g} s")
                return False
            runs = max(1, self.num_blocks) if "whole-kernel-per-block" in engine.injected else 1
            for _ in range(runs):
                self.spec.run(engine.mem, raw)
        except (DeviceAccessError, DeviceFault):
            raise
        except KernelTrap as exc:
            raise AICoreException(f"kernel {self.spec.name}: AI Core exception ({exc})") from exc
        except Exception as exc:  # noqa: BLE001 - garbage arguments must not poison the engine
            raise DeviceFault(f"kernel {self.spec.name}: {type(exc).__name__}: {exc}") from exc
        return True

    def _decode(self, mem: Any, raw: bytes) -> None:
        """Decode argument bytes ``raw`` and prepare the kernel's body for them on ``mem``
        as it is now (backends.sim.fastkernels; None: the catalog body runs)."""
        self._args = self.spec.unpack(raw)
        self._raw = raw
        self._layout = getattr(mem, "layout", None)
        self._fast = (None if self._layout is None
                      else fastkernels.prepare(self.spec.name, mem, self._args))
        if self._fast is not None:
            self._args_mem, self._args_at = mem.raw_at(self.args_addr)
            self._args_end = self._args_at + self.args_size

    def prepare(self, mem: Any) -> None:
        """What the first run of a kernel that never waits decodes and prepares, done now for
        the argument bytes and memory as they are (a model's plan made at CaptureEnd or
        Update). Nothing is run, and every run still reads the argument bytes and decodes
        them again when they changed; argument bytes that cannot be read or decoded are left
        to the run, which reports them."""
        if self.spec.ready is not None or self.args_size < self.spec.args_size:
            return
        if self._fast is not None and self._layout == getattr(mem, "layout", None):
            return
        try:
            raw = mem.read_bytes(self.args_addr, self.args_size)
            if raw != self._raw or self._layout != getattr(mem, "layout", None):
                self._decode(mem, raw)
        except Exception:  # noqa: BLE001 - the run decodes again and reports it
            self._raw, self._fast = None, None

    def deadline(self) -> float | None:
        if self.started is None or self.timeout_s is None:
            return None
        return self.started + self.timeout_s

    def finish(self) -> None:
        if self._release is not None:
            self._release()
            self._release = None


class RecordOp(Op):
    """Event record: sets the flag."""

    label = "record"

    def __init__(self, state: EventState) -> None:
        self.state = state

    def step(self, engine: "Engine", queue: "Queue") -> bool:
        self.state.is_set = True
        return True


class WaitOp(Op):
    """Event wait: blocks until the flag is set; does not clear it."""

    label = "wait"

    def __init__(self, state: EventState) -> None:
        self.state = state

    def step(self, engine: "Engine", queue: "Queue") -> bool:
        return self.state.is_set


class ResetOp(Op):
    """Event reset: clears the flag."""

    label = "reset"

    def __init__(self, state: EventState) -> None:
        self.state = state

    def step(self, engine: "Engine", queue: "Queue") -> bool:
        self.state.is_set = False
        return True


class ValueWriteOp(Op):
    """64-bit little-endian store (aclrtValueWrite)."""

    label = "value_write"

    def __init__(self, addr: int, value: int) -> None:
        self.addr, self.value = addr, value & U64

    def step(self, engine: "Engine", queue: "Queue") -> bool:
        engine.mem.write_u64(self.addr, self.value)
        return True


def value_condition(current: int, value: int, flag: int) -> bool:
    """The aclrtValueWait condition on uint64 values (abi.md §3.5)."""
    current &= U64
    value &= U64
    if flag == ValueWaitFlag.GEQ:
        return ((current - value) & U64) < (1 << 63)  # (int64)(*a - v) >= 0
    if flag == ValueWaitFlag.EQ:
        return current == value
    if flag == ValueWaitFlag.AND:
        return (current & value) != 0
    if flag == ValueWaitFlag.NOR:
        return (~(current | value) & U64) != 0
    raise DeviceFault(f"value wait flag {flag} is not supported")


class ValueWaitOp(Op):
    """Blocks the queue until the condition on ``*addr`` holds (aclrtValueWait)."""

    label = "value_wait"

    def __init__(self, addr: int, value: int, flag: int) -> None:
        self.addr, self.value, self.flag = addr, value & U64, flag

    def step(self, engine: "Engine", queue: "Queue") -> bool:
        return value_condition(engine.mem.read_u64(self.addr), self.value, self.flag)


# ---------------------------------------------------------------------------------------------
# Queues and the engine


@dataclass(eq=False, slots=True)
class Queue:
    """A FIFO of device operations (a user stream's, or one execution's model stream's);
    slotted (every execution makes one per model stream), compared by identity."""

    name: str
    ops: deque = field(default_factory=deque)
    error: int = 0
    transient: bool = False
    group: Op | None = None  # the execution.ExecuteOp whose model stream this queue is

    def idle(self) -> bool:
        return not self.ops

    def take_error(self) -> int:
        err, self.error = self.error, 0
        return err


class Engine:
    """Runs queued operations until nothing can advance."""

    def __init__(self, mem: DeviceMemorySpace) -> None:
        self.mem = mem
        self.queues: list[Queue] = []
        self.faults: list[str] = []
        #: injected bugs (backends.faults) the device itself shows (set by the backend)
        self.injected: frozenset[str] = frozenset()
        self._poked = False

    def attach(self, queue: Queue) -> None:
        if queue not in self.queues:
            self.queues.append(queue)
            self._poked = True

    def detach(self, queue: Queue) -> None:
        if queue in self.queues:
            self.queues.remove(queue)

    def enqueue(self, queue: Queue, op: Op) -> Op:
        self.attach(queue)
        queue.ops.append(op)
        return op

    def _step_head(self, queue: Queue) -> bool:
        op = queue.ops[0]
        try:
            done = op.step(self, queue)
        except (DeviceAccessError, DeviceFault) as exc:
            self._fault(queue, op, exc)
            return True
        if done:
            queue.ops.popleft()
            if op._has_finish:
                op.finish()
            op.done = True
        return done

    def _fault(self, queue: Queue, op: Op, exc: Exception) -> None:
        self.faults.append(f"{queue.name}: {op.label}: {exc}")
        if queue.ops and queue.ops[0] is op:
            queue.ops.popleft()
        op.finish()
        op.done = True
        if queue.group is not None:
            queue.group.abandon(self)
        else:
            code = getattr(exc, "stream_error", int(Err.RT_INTERNAL_ERROR))
            queue.error = queue.error or int(code)

    def next_deadline(self) -> float | None:
        """The earliest time a blocked head op changes by itself (None: none will)."""
        times = [d for q in self.queues if q.ops
                 for d in (q.ops[0].deadline(),) if d is not None]
        return min(times) if times else None

    def run_queues(self, queues: Iterable[Queue]) -> bool:
        """One pass: advance each given queue as far as it goes. True if anything ran."""
        progressed = False
        for q in list(queues):
            while q.ops and self._step_head(q):
                progressed = True
        return progressed

    def progress(self) -> bool:
        """Run until no queue can advance. True if anything ran.

        Most API calls queue nothing: with no queued op anywhere and no queue attached since
        the last pass, a pass could run nothing, so none is made."""
        if not self._poked:
            for q in self.queues:
                if q.ops:
                    break
            else:
                return False
        any_progress = False
        while True:
            self._poked = False
            progressed = self.run_queues(self.queues) or self._poked
            queues = self.queues
            for q in queues:  # drop the drained transient queues (rarely any)
                if not q.ops and q.transient:
                    self.queues = [q for q in queues if q.ops or not q.transient]
                    break
            if not progressed:
                return any_progress
            any_progress = True

    def abandon_all(self) -> None:
        """Drop all queued work (backend close)."""
        for q in list(self.queues):
            while q.ops:
                op = q.ops.popleft()
                op.abandon(self)
                op.finish()
                op.done = True
        self.queues.clear()

