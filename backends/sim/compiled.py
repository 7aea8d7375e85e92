"""A traced execution order as a flat list of bound callables (EXE-01, EXE-15).

:class:`~backends.sim.execution.TracedPlan` fixes, per combination of its event flags, the
order in which an execution's ops complete. :func:`compile_run` turns that order into what
an execution calls, one callable per op that does something, each bound once to the memory
it touches:

* event records, waits and resets on the model's own events, and NOPs, are not called: the
  order already took every wait as satisfied, so their only effect is the event flags, and
  the flags the order leaves are set once at its end (calls of ``setattr``). Nothing else
  reads those flags while the order runs (the execution runs in one engine step, and the
  events are the model's own); where an execution leaves the order early,
  :func:`settle_events` sets the flags the ops before that point left;
* a value write, a memset or a memcpy whose ranges lie inside live allocations (or pinned
  uint8 host arrays) is one C call on the allocation's bytes (``bytearray.__setitem__``, or
  ``memoryview.__setitem__`` for a copy, which moves overlapping bytes as ``memmove`` does);
* a value wait on a live range reads its 8 bytes and tests them with the op's own
  :func:`~backends.sim.device.value_condition` (abi.md §3.5); it returns False when the
  condition does not hold;
* a kernel with a prepared body (backends.sim.fastkernels) runs it while its task's device
  record is still the one of the plan (TG-10) and its argument bytes are still the ones
  decoded, else runs as :func:`generic` does;
* anything else runs as :func:`generic`: the op's ``step``, False when it did not complete.

A callable returns False where the execution must leave the order there (the op did not
complete, or no longer runs as traced); a device error raises as the op's ``step`` raises.
The callables hold slices of allocations: a compiled run is valid while no allocation has
been freed since (:attr:`DeviceMemorySpace.frees`; allocations never move and addresses are
never reused, so a new allocation changes nothing it holds).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable

import numpy as np

from mdlri_conformance.backends.contract import ValueWaitFlag

from .device import (Engine, KernelOp, MemcpyOp, MemsetOp, NopOp, Op, RecordOp, ResetOp,
                     ValueWaitOp, ValueWriteOp, WaitOp, value_condition)
from .memory import DeviceMemorySpace

Call = Callable[[], Any]
_EVENT = frozenset({RecordOp, WaitOp, ResetOp})


class CompiledRun:
    """The callables of one traced order (``calls``), the position in the order of the op
    each one runs (``positions``; the flag setters at the end take the order's length), and
    the :attr:`DeviceMemorySpace.frees` count they were made at."""

    __slots__ = ("calls", "positions", "frees", "complete")

    def __init__(self, calls: list[Call], positions: list[int], frees: int,
                 complete: bool) -> None:
        self.calls = calls
        self.positions = positions
        self.frees = frees
        self.complete = complete  # every op of the plan is in the order


def compile_run(run: list[tuple[Any, ...]], complete: bool, engine: Engine) -> CompiledRun:
    """The callables of ``run`` (:meth:`TracedPlan.run_list` entries, in order; ``complete``:
    it holds every op of the plan) on ``engine``'s memory, then the setters of the event
    flags the whole order leaves."""
    mem = engine.mem
    calls: list[Call] = []
    positions: list[int] = []
    final: dict[int, tuple[Any, bool]] = {}
    for p, (_, op, step, check, fin) in enumerate(run):
        kind = type(op)
        if kind in _EVENT:
            if kind is not WaitOp:
                final[id(op.state)] = (op.state, kind is RecordOp)
            continue
        if kind is NopOp:
            continue
        make = _MAKERS.get(kind)
        call = make(op, mem) if make is not None else None
        if call is _NOTHING:
            continue
        if call is None and check and not fin:
            call = _kernel(op, engine)
        calls.append(call if call is not None else generic(op, step, check, fin, engine))
        positions.append(p)
    for state, value in final.values():
        calls.append(partial(setattr, state, "is_set", value))
        positions.append(len(run))
    return CompiledRun(calls, positions, mem.frees, complete)


def settle_events(run: list[tuple[Any, ...]], upto: int) -> None:
    """Set the event flags the first ``upto`` ops of ``run`` leave (where an execution leaves
    its compiled order early: the event ops before that point were not called)."""
    for entry in run[:upto]:
        kind = type(entry[1])
        if kind is RecordOp:
            entry[1].state.is_set = True
        elif kind is ResetOp:
            entry[1].state.is_set = False


def generic(op: Op, step: Callable[[Engine, Any], bool], check: bool, fin: bool,
            engine: Engine) -> Call:
    """The op run as an op of the order runs: False when it is no longer
    :meth:`~backends.sim.device.Op.stable` (it is not run) or did not complete."""

    def call() -> bool:
        if check and not op.stable():
            return False
        if not step(engine, None):
            return False
        if fin:
            op.finish()
        op.done = True
        return True
    return call


# ---------------------------------------------------------------------------------------------
# one maker per op kind: a callable, _NOTHING (the op does nothing), or None (run generic)

_NOTHING: Call = lambda: None  # noqa: E731 - a marker, never called


def _span(mem: DeviceMemorySpace, addr: Any, nbytes: int) -> tuple[bytearray, int] | None:
    """(allocation bytes, offset) of a device range inside one live allocation, or None."""
    span = mem._span(addr, nbytes)
    if span is None:
        return None
    alloc, off = span
    return alloc.raw, off


def _host(arr: Any, count: int, write: bool) -> memoryview | None:
    """The first ``count`` bytes of a host endpoint as a memoryview, where the op's own
    fast path takes them as they are (a 1-D uint8 array holding them), else None."""
    if not (isinstance(arr, np.ndarray) and arr.dtype == np.uint8 and arr.ndim == 1
            and 0 < count <= arr.size and (arr.flags.writeable or not write)):
        return None
    return memoryview(arr[:count])


def _endpoint(mem: DeviceMemorySpace, end: Any, count: int, write: bool) -> memoryview | None:
    if isinstance(end, np.ndarray):
        return _host(end, count, write)
    span = _span(mem, end, count)
    if span is None:
        return None
    raw, off = span
    return memoryview(raw)[off:off + count]


def _value_write(op: ValueWriteOp, mem: DeviceMemorySpace) -> Call | None:
    span = _span(mem, op.addr, 8)
    if span is None:
        return None
    raw, off = span
    return partial(raw.__setitem__, slice(off, off + 8), int(op.value).to_bytes(8, "little"))


def _value_wait(op: ValueWaitOp, mem: DeviceMemorySpace) -> Call | None:
    span = _span(mem, op.addr, 8)
    flag = op.flag
    if span is None or flag not in _FLAGS:
        return None
    raw, off = span
    end, value, load = off + 8, int(op.value), int.from_bytes
    return lambda: value_condition(load(raw[off:end], "little"), value, flag)


#: the conditions :func:`~backends.sim.device.value_condition` knows (another flag faults,
#: as the op's own step says)
_FLAGS = frozenset(int(f) for f in (ValueWaitFlag.GEQ, ValueWaitFlag.EQ, ValueWaitFlag.AND,
                                    ValueWaitFlag.NOR))


def _memset(op: MemsetOp, mem: DeviceMemorySpace) -> Call | None:
    count = op.count
    if not count:
        return _NOTHING
    dst = _endpoint(mem, op.dst, count, True)
    if dst is None:
        return None
    return partial(dst.__setitem__, slice(None), bytes((op.value & 0xFF,)) * count)


def _memcpy(op: MemcpyOp, mem: DeviceMemorySpace) -> Call | None:
    count = op.count
    if not count:
        return _NOTHING
    src, dst = _endpoint(mem, op.src, count, False), _endpoint(mem, op.dst, count, True)
    if src is None or dst is None:
        return None
    return partial(dst.__setitem__, slice(None), src)


_MAKERS: dict[type, Callable[[Any, DeviceMemorySpace], Call | None]] = {
    ValueWriteOp: _value_write, ValueWaitOp: _value_wait, MemsetOp: _memset,
    MemcpyOp: _memcpy}


def _kernel(op: Any, engine: Engine) -> Call | None:
    """A shared kernel op (:class:`~backends.sim.model.SharedKernelOp`: ``task``, ``_rec``,
    ``_op``) whose kernel op has a prepared body for the memory as it is now, or None."""
    task, rec, kop = getattr(op, "task", None), getattr(op, "_rec", None), getattr(op, "_op",
                                                                                     None)
    if type(kop) is not KernelOp or task is None or not op.stable():
        return None
    kop.prepare(engine.mem)
    fast = kop._fast
    if fast is None or kop._layout != engine.mem.layout:
        return None
    raw, args, a, b = kop._raw, kop._args_mem, kop._args_at, kop._args_end
    slow = generic(op, op.step, True, False, engine)

    def call() -> Any:
        if task._dev is rec and args[a:b] == raw:
            fast()
            return None
        return slow()
    return call


__all__ = ["CompiledRun", "compile_run", "generic", "settle_events"]
