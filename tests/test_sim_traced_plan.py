"""Simulator unit tests: a model whose ops block only on its own events and on value waits
runs from a :class:`~backends.sim.execution.TracedPlan`, in the order the round-robin engine
takes, and hands the rest of an execution to the engine wherever that order cannot go on
(a value wait that does not hold, a fault, a kernel record replaced since)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from mdlri_conformance.backends.contract import Err, ValueWaitFlag
from mdlri_conformance.backends.sim.device import EventState, NopOp, RecordOp, WaitOp
from mdlri_conformance.backends.sim.execution import TracedPlan
from mdlri_conformance.backends.sim.model import SimModel

from .test_sim_support import b  # noqa: F401 (the fixture)
from .test_sim_support import H2D, SYNC, func, i32, launch, ok, put_i32, streams, tasks


def _fork_join_model(b, x, y):
    """s0 forks to s1, s1 doubles x, s0 joins then adds x into y: y = y + 2x only in order."""
    s0, s1 = ok(b.create_stream()), ok(b.create_stream())
    fork, join = ok(b.create_event_ex_with_flag(SYNC)), ok(b.create_event_ex_with_flag(SYNC))
    acc = func(b, "accumulate")
    ok(b.capture_begin(s0, 0))
    ok(b.record_event(fork, s0))
    ok(b.stream_wait_event(s1, fork))
    ok(launch(b, acc, s1, acc=x, x=x, n=4))
    ok(b.record_event(join, s1))
    ok(b.stream_wait_event(s0, join))
    ok(launch(b, acc, s0, acc=y, x=x, n=4))
    return s0, ok(b.capture_end(s0))


def _results(b, traced: bool, monkeypatch) -> list[list[int]]:
    if not traced:
        monkeypatch.setattr(SimModel, "_traced", lambda self, templates: None)
    x, y = ok(b.malloc(16)), ok(b.malloc(16))
    put_i32(b, x, [1, 2, 3, 4])
    put_i32(b, y, [0] * 4)
    s, m = _fork_join_model(b, x, y)
    assert isinstance(m._plan_cache[3], TracedPlan) is traced
    out = []
    for _ in range(3):
        ok(b.execute_async(m, s))
        ok(b.synchronize_stream(s))
        out.append(i32(b, x, 4) + i32(b, y, 4))
    return out


def test_traced_plan_runs_what_the_engine_runs(b, monkeypatch):
    traced = _results(b, True, monkeypatch)
    assert traced == [[2, 4, 6, 8, 2, 4, 6, 8], [4, 8, 12, 16, 6, 12, 18, 24],
                      [8, 16, 24, 32, 14, 28, 42, 56]]
    with monkeypatch.context() as mp:
        plain = _results(b, False, mp)
    assert plain == traced


def test_order_follows_the_event_flags_at_the_start():
    e = EventState()
    wait, nop, rec = WaitOp(e), NopOp(), RecordOp(e)
    plan = TracedPlan([[wait, nop], [rec]], [e])
    assert plan.order((False,)) == ([(1, rec), (0, wait), (0, nop)], True)
    assert plan.order((True,)) == ([(0, wait), (0, nop), (1, rec)], True)
    assert set(plan.traces) == {(False,), (True,)}
    never = EventState()
    stuck = TracedPlan([[NopOp(), WaitOp(never), NopOp()]], [never])
    order, complete = stuck.order((False,))
    assert len(order) == 1 and not complete


def test_run_list_is_the_order_with_each_ops_step_and_counts_per_stream():
    e = EventState()
    wait, nop, rec = WaitOp(e), NopOp(), RecordOp(e)
    plan = TracedPlan([[wait, nop], [rec]], [e])
    run, complete = plan.run_list((False,))
    assert complete and [(i, op) for i, op, *_ in run] == plan.order((False,))[0]
    assert all(step == op.step for _, op, step, _, _ in run)
    assert plan.run_list((False,))[0] is run  # made once per combination of flags
    # after the first k entries ran: the record on stream 1, then the wait on stream 0
    assert [plan.done_counts(run, k) for k in range(4)] == [[0, 0], [0, 1], [1, 1], [2, 1]]


def test_value_wait_not_met_hands_the_rest_to_the_engine(b):
    x, word = ok(b.malloc(16)), ok(b.malloc(8))
    ok(b.memset(word, 8, 0, 8))
    put_i32(b, x, [0] * 4)
    s = ok(b.create_stream())
    ok(b.capture_begin(s, 0))
    ok(b.value_wait(word, 5, int(ValueWaitFlag.EQ), s))
    ok(launch(b, func(b, "fill"), s, out=x, n=4, value=9))
    m = ok(b.capture_end(s))
    assert isinstance(m._plan_cache[3], TracedPlan)
    ok(b.execute_async(m, s))
    assert b.synchronize_stream_with_timeout(s, 0) == Err.RT_STREAM_SYNC_TIMEOUT
    assert i32(b, x, 4) == [0] * 4
    five = np.array([5], dtype=np.uint64)
    ok(b.memcpy(word, 8, five, 8, H2D))
    assert b.synchronize_stream_with_timeout(s, 1000) == Err.SUCCESS
    assert i32(b, x, 4) == [9] * 4


def test_fault_in_the_order_abandons_the_execution(b):
    x, y = ok(b.malloc(16)), ok(b.malloc(16))
    s = ok(b.create_stream())
    fill = func(b, "fill")
    ok(b.capture_begin(s, 0))
    ok(launch(b, fill, s, out=x, n=4, value=1))
    ok(launch(b, fill, s, out=y, n=4, value=2))
    ok(launch(b, fill, s, out=x, n=4, value=3))
    m = ok(b.capture_end(s))
    ok(b.execute_async(m, s))
    ok(b.synchronize_stream(s))
    ok(b.free(y))
    put_i32(b, x, [0] * 4)
    ok(b.execute_async(m, s))
    assert b.synchronize_stream(s) == Err.RT_MODEL_EXECUTE
    assert i32(b, x, 4) == [1] * 4  # the op after the fault never ran
    assert any("/exec-q0: kernel:" in f and "outside" in f for f in b.device_faults)


@pytest.mark.parametrize("replace", [False, True])
def test_a_replaced_kernel_record_leaves_the_order(b, replace):
    x = ok(b.malloc(16))
    s = ok(b.create_stream())
    ok(b.capture_begin(s, 0))
    ok(launch(b, func(b, "fill"), s, out=x, n=4, value=4))
    m = ok(b.capture_end(s))
    ok(b.execute_async(m, s))
    ok(b.synchronize_stream(s))
    (_, op), = m._plan_cache[3].order(())[0]
    task = tasks(b, streams(b, m)[0])[0]
    if replace:
        task._dev = dataclasses.replace(task._dev)
    assert op.stable() is not replace
    put_i32(b, x, [0] * 4)
    ok(b.execute_async(m, s))
    ok(b.synchronize_stream(s))
    assert i32(b, x, 4) == [4] * 4
    assert op.stable()
