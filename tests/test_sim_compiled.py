"""Simulator unit tests: a traced order run as bound callables (backends.sim.compiled) gives
what running each op's own ``step`` in that order gives (EXE-01, EXE-15): the same buffers,
words, return codes and event flags, on generated cases and on the edges each bound callable
takes (overlapping copies, every value-wait condition, leaving the order early, a freed
allocation, argument bytes rewritten before the first execution)."""

from __future__ import annotations

import itertools
from contextlib import contextmanager
from typing import Iterator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from mdlri_conformance.backends.contract import Err, MemcpyKind, ValueWaitFlag
from mdlri_conformance.backends.sim import compiled, create
from mdlri_conformance.backends.sim.device import (Engine, EventState, NopOp, Queue, RecordOp,
                                                    ResetOp, WaitOp, value_condition)
from mdlri_conformance.backends.sim.execution import ExecuteOp, TracedPlan
from mdlri_conformance.backends.sim.memory import DeviceMemorySpace
from mdlri_conformance.conformance.engine import runner, strategies

from .test_sim_support import SYNC, b, func, i32, launch, ok, put_i32  # noqa: F401

D2D = MemcpyKind.DEVICE_TO_DEVICE


@contextmanager
def each_op_stepped(stepped: bool = True) -> Iterator[None]:
    """With ``stepped``, compile every op of an order as :func:`compiled.generic` (its own
    ``step``, event ops included): the order run op by op, as before any op was bound."""
    if not stepped:
        yield
        return
    with pytest.MonkeyPatch.context() as m:
        m.setattr(compiled, "_MAKERS", {})
        m.setattr(compiled, "_EVENT", frozenset())
        m.setattr(compiled, "_kernel", lambda op, engine: None)
        yield


def _replay(case):
    backend = create(destroy_wait_s=0.2)
    try:
        return runner.replay(backend, case)
    finally:
        backend.close()


@settings(max_examples=120, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(strategies.positive_cases())
def test_generated_cases_observe_the_same_bound_or_stepped(case):
    bound = _replay(case)
    with each_op_stepped():
        stepped = _replay(case)
    assert bound == stepped


def _run(b, m, s) -> int:
    ok(b.execute_async(m, s))
    return b.synchronize_stream(s)


def _both(build):
    """``build(b)`` -> (stream, model, read) run twice, bound then stepped, on two fresh
    simulators: what ``read`` returns after each of three executions."""
    out = []
    for stepped in (False, True):
        sim = create(destroy_wait_s=0.2)
        s, m, read = build(sim)
        assert isinstance(m._plan_cache[3], TracedPlan)
        got = []
        with (each_op_stepped(stepped)):
            for _ in range(3):
                got.append((_run(sim, m, s), read()))
        out.append(got)
        sim.close()
    return out


def test_overlapping_device_copies_move_like_memmove(b, monkeypatch):
    def build(sim):
        x = ok(sim.malloc(64))
        put_i32(sim, x, list(range(16)))
        s = ok(sim.create_stream())
        ok(sim.capture_begin(s, 0))
        ok(sim.memcpy_async(x + 8, 32, x, 32, D2D, s))      # forwards, overlapping
        ok(sim.memcpy_async(x, 24, x + 12, 24, D2D, s))     # backwards, overlapping
        ok(sim.memset_async(x + 60, 4, 0x7F, 3, s))
        return s, ok(sim.capture_end(s)), lambda: i32(sim, x, 16)
    bound, stepped = _both(build)
    assert bound == stepped
    ref = np.arange(16, dtype=np.int32).view(np.uint8).copy()
    ref[8:40] = ref[0:32].copy()
    ref[0:24] = ref[12:36].copy()
    ref[60:63] = 0x7F
    assert bound[0][1] == ref.view(np.int32).tolist()


def test_pinned_host_copies_both_ways(b, monkeypatch):
    def build(sim):
        x = ok(sim.malloc(32))
        host = ok(sim.malloc_host(32))
        host[:] = np.arange(32, dtype=np.uint8)
        back = ok(sim.malloc_host(32))
        s = ok(sim.create_stream())
        ok(sim.capture_begin(s, 0))
        ok(sim.memcpy_async(x, 32, host, 32, MemcpyKind.HOST_TO_DEVICE, s))
        ok(sim.memset_async(x, 8, 0xEE, 8, s))
        ok(sim.memcpy_async(back, 32, x, 32, MemcpyKind.DEVICE_TO_HOST, s))
        ok(sim.memset_async(host, 4, 1, 4, s))
        return s, ok(sim.capture_end(s)), lambda: back.tolist() + host.tolist()
    bound, stepped = _both(build)
    assert bound == stepped
    assert bound[0][1][:8] == [0xEE] * 8 and bound[0][1][8:12] == [8, 9, 10, 11]
    assert bound[0][1][32:] == [1] * 4 + list(range(4, 32))


@pytest.mark.parametrize("flag", list(ValueWaitFlag))
@pytest.mark.parametrize("word", [0, 5, 6, 9, 2**63, 2**63 + 6, 2**63 + 7, 2**64 - 1])
def test_value_waits_hold_as_the_condition_says(b, monkeypatch, flag, word):
    def build(sim):
        w, x = ok(sim.malloc(8)), ok(sim.malloc(16))
        put_i32(sim, x, [0] * 4)
        ok(sim.memcpy(w, 8, np.array([word], dtype=np.uint64), 8, MemcpyKind.HOST_TO_DEVICE))
        s = ok(sim.create_stream())
        ok(sim.capture_begin(s, 0))
        ok(sim.value_wait(w, 6, int(flag), s))
        ok(launch(sim, func(sim, "fill"), s, out=x, n=4, value=3))
        m = ok(sim.capture_end(s))

        def read():
            before = i32(sim, x, 4)
            if s.queue.ops:  # a wait that does not hold: 6 satisfies every condition
                ok(sim.memcpy(w, 8, np.array([6], dtype=np.uint64), 8,
                              MemcpyKind.HOST_TO_DEVICE))
            return before
        return s, m, read, lambda: i32(sim, x, 4)

    def run_once(stepped):
        sim = create(destroy_wait_s=0.2)
        s, m, read, after = build(sim)
        with (each_op_stepped(stepped)):
            ok(sim.execute_async(m, s))
            held = not s.queue.ops
            got = (held, read(), sim.synchronize_stream_with_timeout(s, 1000), after())
        sim.close()
        return got
    bound, stepped = run_once(False), run_once(True)
    assert bound == stepped
    assert bound[0] is value_condition(word, 6, int(flag))
    assert bound[3] == [3] * 4


def test_leaving_the_order_early_keeps_the_event_flags(b, monkeypatch):
    """A value wait on the origin that does not hold, right after its fork record: the
    record is not called by itself, yet the side stream it releases runs on at once."""
    def build(sim):
        x, y, w = ok(sim.malloc(16)), ok(sim.malloc(16)), ok(sim.malloc(8))
        put_i32(sim, x, [1, 2, 3, 4])
        put_i32(sim, y, [0] * 4)
        ok(sim.memset(w, 8, 0, 8))
        s0, s1 = ok(sim.create_stream()), ok(sim.create_stream())
        fork, join = ok(sim.create_event_ex_with_flag(SYNC)), ok(sim.create_event_ex_with_flag(
            SYNC))
        acc = func(sim, "accumulate")
        ok(sim.capture_begin(s0, 0))
        ok(sim.record_event(fork, s0))
        ok(sim.value_wait(w, 1, int(ValueWaitFlag.GEQ), s0))
        ok(sim.stream_wait_event(s1, fork))
        ok(launch(sim, acc, s1, acc=x, x=x, n=4))
        ok(sim.record_event(join, s1))
        ok(sim.stream_wait_event(s0, join))
        ok(launch(sim, acc, s0, acc=y, x=x, n=4))
        m = ok(sim.capture_end(s0))
        counter = iter(range(1, 100))

        def read():
            before = i32(sim, x, 4) + i32(sim, y, 4)
            ok(sim.memcpy(w, 8, np.array([next(counter)], dtype=np.uint64), 8,
                          MemcpyKind.HOST_TO_DEVICE))
            assert sim.synchronize_stream_with_timeout(s0, 1000) == 0
            ok(sim.memset(w, 8, 0, 8))
            return before, i32(sim, x, 4) + i32(sim, y, 4)
        return s0, m, read

    out = []
    for stepped in (False, True):
        sim = create(destroy_wait_s=0.2)
        s, m, read = build(sim)
        with (each_op_stepped(stepped)):
            got = []
            for _ in range(3):
                ok(sim.execute_async(m, s))
                got.append(read())
        out.append(got)
        sim.close()
    assert out[0] == out[1]
    assert out[0][0] == ([2, 4, 6, 8, 0, 0, 0, 0], [2, 4, 6, 8, 2, 4, 6, 8])


def test_a_freed_allocation_makes_the_callables_again(b):
    x, y = ok(b.malloc(16)), ok(b.malloc(16))
    s = ok(b.create_stream())
    ok(b.capture_begin(s, 0))
    ok(b.value_write(y, 9, 0, s))
    ok(b.memset_async(x, 16, 2, 16, s))
    m = ok(b.capture_end(s))
    plan = m._plan_cache[3]
    first = plan.compiled(plan.flags(), b.engine)
    assert _run(b, m, s) == 0 and plan.compiled(plan.flags(), b.engine) is first
    ok(b.malloc(64))  # a new allocation moves nothing the callables hold
    assert _run(b, m, s) == 0 and plan.compiled(plan.flags(), b.engine) is first
    ok(b.free(y))
    assert _run(b, m, s) == Err.RT_MODEL_EXECUTE  # the value write now faults
    assert plan.compiled(plan.flags(), b.engine) is not first
    assert any("value_write" in f and "outside" in f for f in b.device_faults)


def test_kernels_are_prepared_at_capture_end_and_still_read_their_arguments(b):
    x = ok(b.malloc(32))
    fill = func(b, "fill")
    s = ok(b.create_stream())
    ok(b.capture_begin(s, 0))
    ok(launch(b, fill, s, out=x, n=8, value=1))
    m = ok(b.capture_end(s))
    (_, op), = m._plan_cache[3].order(())[0]
    assert op._op._fast is not None  # prepared before any execution
    b.mem.write(op.task.dev.args_addr,
                np.frombuffer(fill.spec.pack(out=x, n=8, value=7), np.uint8))
    assert _run(b, m, s) == 0
    assert i32(b, x, 8) == [7] * 8


def _flags_after(start: tuple[bool, ...], stepped: bool) -> tuple:
    """The flags a fresh plan leaves from ``start`` (a record on another stream after the
    last reset of an event leaves it set), and whether the execution completed."""
    a, b_, c = EventState(), EventState(), EventState()
    plan = TracedPlan([[RecordOp(a), ResetOp(b_), NopOp()],
                       [WaitOp(a), RecordOp(b_), RecordOp(c)],
                       [WaitOp(c), ResetOp(c), ResetOp(a)]], [a, b_, c])
    a.is_set, b_.is_set, c.is_set = start
    engine = Engine(DeviceMemorySpace())
    queue = Queue("q")
    with each_op_stepped(stepped):
        engine.enqueue(queue, ExecuteOp(lambda: plan, lambda ok: None))
        engine.progress()
    return plan.flags(), not queue.ops


@pytest.mark.parametrize("start", list(itertools.product((False, True), repeat=3)))
def test_the_flags_an_order_leaves_are_the_ones_its_event_ops_leave(start):
    """The flags after an execution decide the next one's order."""
    assert _flags_after(start, False) == _flags_after(start, True) == ((False, True, False),
                                                                        True)
