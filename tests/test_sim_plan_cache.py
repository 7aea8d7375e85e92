"""Simulator unit tests: the cached execution plan of a model (backends.sim.model.prepare_plan)
runs what an unshared plan runs: argument bytes, buffers and records are read when each
execution runs, and anything that changes the model makes the plan again."""

from __future__ import annotations

import numpy as np

from mdlri_conformance.backends.contract import Err
from mdlri_conformance.backends.sim import create
from mdlri_conformance.backends.sim.model import SharedKernelOp

from .test_sim_support import SYNC, b, func, i32, launch, ok, put_i32, streams, tasks  # noqa: F401


def _fill_model(b, x, value):
    s = ok(b.create_stream())
    ok(b.capture_begin(s, 0))
    ok(launch(b, func(b, "fill"), s, out=x, n=8, value=value))
    return s, ok(b.capture_end(s))



def _run(b, m, s) -> None:
    """One execution of ``m`` on ``s``, synced; both calls must succeed."""
    ok(b.execute_async(m, s))
    ok(b.synchronize_stream(s))

def test_plan_is_made_at_capture_end_and_shared(b):
    x = ok(b.malloc(32))
    s, m = _fill_model(b, x, 5)
    cached = m._plan_cache
    assert cached is not None
    for _ in range(3):
        _run(b, m, s)
    assert m._plan_cache is cached
    assert isinstance(cached[2][0][0][0], SharedKernelOp)
    assert i32(b, x, 8) == [5] * 8


def test_args_rewritten_between_executions_are_seen(b):
    x = ok(b.malloc(32))
    s, m = _fill_model(b, x, 1)
    _run(b, m, s)
    assert i32(b, x, 8) == [1] * 8
    task = tasks(b, streams(b, m)[0])[0]
    spec = func(b, "fill").spec
    b.mem.write(task.dev.args_addr, np.frombuffer(spec.pack(out=x, n=8, value=7), np.uint8))
    _run(b, m, s)
    assert i32(b, x, 8) == [7] * 8


def test_buffer_freed_after_a_cached_execution_faults(b):
    x = ok(b.malloc(32))
    s, m = _fill_model(b, x, 1)
    _run(b, m, s)
    ok(b.free(x))
    ok(b.execute_async(m, s))
    assert b.synchronize_stream(s) == Err.RT_MODEL_EXECUTE
    assert any("outside" in f for f in b.device_faults)


def test_update_makes_the_plan_again(b):
    x, y = ok(b.malloc(32)), ok(b.malloc(32))
    put_i32(b, x, [0] * 8)
    put_i32(b, y, [0] * 8)
    s = ok(b.create_stream())
    fill = func(b, "fill")
    ok(b.capture_begin(s, 0))
    ok(launch(b, fill, s, out=x, n=8, value=1))
    ok(launch(b, fill, s, out=y, n=8, value=2))
    m = ok(b.capture_end(s))
    _run(b, m, s)
    before = m._plan_cache
    put_i32(b, x, [0] * 8)
    put_i32(b, y, [0] * 8)
    ok(b.task_disable(tasks(b, streams(b, m)[0])[0]))
    ok(b.update(m))
    assert m._plan_cache is not before
    _run(b, m, s)
    assert i32(b, x, 8) == [0] * 8 and i32(b, y, 8) == [2] * 8


def test_overlapping_copy_reads_before_it_writes(b):
    x = ok(b.malloc(64))
    put_i32(b, x, list(range(16)))
    s = ok(b.create_stream())
    ok(b.capture_begin(s, 0))
    ok(launch(b, func(b, "copy"), s, src=x, dst=x + 4, n=8))
    ok(launch(b, func(b, "copy"), s, src=x + 36, dst=x + 32, n=8))  # runs past: unaligned ok
    m = ok(b.capture_end(s))
    ok(b.execute_async(m, s))
    assert b.synchronize_stream(s) == Err.RT_MODEL_EXECUTE  # the second reads past the end
    assert i32(b, x, 16) == [0, 0, 1, 2, 3, 4, 5, 6, 7] + list(range(9, 16))


def test_two_executions_in_flight_share_the_plan(b):
    x = ok(b.malloc(32))
    put_i32(b, x, [0] * 8)
    s1, s2 = ok(b.create_stream()), ok(b.create_stream())
    ok(b.capture_begin(s1, 0))
    ok(launch(b, func(b, "accumulate"), s1, acc=x, x=x, n=8))  # doubles x
    m = ok(b.capture_end(s1))
    put_i32(b, x, [1] * 8)
    ev = ok(b.create_event_ex_with_flag(SYNC))
    gate = ok(b.create_stream())
    ok(b.stream_wait_event(s1, ev))  # both executions wait behind the event
    ok(b.stream_wait_event(s2, ev))
    ok(b.execute_async(m, s1))
    ok(b.execute_async(m, s2))
    assert i32(b, x, 8) == [1] * 8
    ok(b.record_event(ev, gate))
    ok(b.synchronize_stream(s1))
    ok(b.synchronize_stream(s2))
    assert i32(b, x, 8) == [4] * 8


def test_models_with_faults_make_every_op_fresh():
    be = create(faults=["second-exec-skips-first-task"])
    x = ok(be.malloc(32))
    s, m = _fill_model(be, x, 3)
    ok(be.execute_async(m, s))
    ok(be.synchronize_stream(s))
    assert m._plan_cache is None
    be.close()
