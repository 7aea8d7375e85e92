"""Simulator unit tests: task groups and task-group update (TG-01..15, 18, SETP-06)."""

from __future__ import annotations

import pytest

from mdlri_conformance.backends.contract import UNWRITTEN, Err, TaskType
from mdlri_conformance.backends.sim.taskgroups import PREFETCH_NOPS

from .test_sim_support import b, func, i32, launch, ok, streams, tasks, types  # noqa: F401


@pytest.fixture
def fill(b):
    return func(b, "fill")


def _grouped_model(b, fill, values=(1, 2)):
    """A model: fill(x, 7) then a group of fills (x+4i <- v); returns (m, s, x, group)."""
    s = ok(b.create_stream())
    x = ok(b.malloc(64))
    ok(b.capture_begin(s, 0))
    assert launch(b, fill, s, out=x, n=1, value=7) == 0
    ok(b.capture_task_grp_begin(s))
    for i, v in enumerate(values):
        assert launch(b, fill, s, out=x + 4 * (i + 1), n=1, value=v) == 0
    g = ok(b.capture_task_grp_end(s))
    m = ok(b.capture_end(s))
    return m, s, x, g


def test_group_handle_nops_and_get_params(b, fill):
    m, s, x, g = _grouped_model(b, fill)
    assert g is not None  # TG-01
    ts = tasks(b, streams(b, m)[0])
    assert types(b, streams(b, m)[0]) == [TaskType.KERNEL] + [TaskType.DEFAULT] * PREFETCH_NOPS \
        + [TaskType.KERNEL] * 2  # TG-03
    assert [ok(b.task_get_seq_id(t)) for t in ts] == list(range(len(ts)))
    assert ok(b.task_get_params(ts[0])).task_grp is None  # TG-09
    assert ok(b.task_get_params(ts[-1])).task_grp is g
    p = ok(b.task_get_params(ts[-1]))
    assert b.task_set_params(ts[-1], p) == Err.RT_PARAM_INVALID  # SETP-06
    assert b.execute_async(m, s) == Err.RT_MODEL_EXECUTE  # FAULT
    ok(b.destroy(m))


def test_group_state_errors(b, fill):
    s = ok(b.create_stream())
    assert b.capture_task_grp_begin(s) == Err.RT_STREAM_NOT_CAPTURED  # TG-02
    assert b.capture_task_grp_begin(None) == Err.INVALID_PARAM  # TG-18
    assert b.capture_task_grp_end(None) == (Err.INVALID_PARAM, UNWRITTEN)
    ok(b.capture_begin(s, 0))
    assert b.capture_task_grp_end(s, null_handle=True) == (Err.INVALID_PARAM, UNWRITTEN)
    assert b.capture_task_grp_end(s) == (Err.STREAM_TASK_GROUP_STATUS, UNWRITTEN)  # TG-06
    ok(b.capture_task_grp_begin(s))
    assert b.capture_task_grp_begin(s) == Err.STREAM_TASK_GROUP_STATUS
    assert b.capture_end(s) == (Err.STREAM_TASK_GROUP_STATUS, None)  # TG-07
    assert b.live_counts().models == 0


def test_non_kernel_in_group_invalidates(b, fill):
    s = ok(b.create_stream())
    x = ok(b.malloc(64))
    ok(b.capture_begin(s, 0))
    ok(b.capture_task_grp_begin(s))
    assert b.value_write(x, 1, 0, s) == Err.RT_TASK_TYPE_NOT_SUPPORT  # TG-04
    assert launch(b, fill, s, out=x, n=1, value=1) == 0
    assert b.capture_task_grp_end(s) == (Err.RT_TASK_TYPE_NOT_SUPPORT, UNWRITTEN)  # TG-08
    assert b.capture_end(s) == (Err.RT_STREAM_CAPTURE_INVALIDATED, None)


def test_other_stream_while_group_open(b, fill):
    s, s2 = ok(b.create_stream()), ok(b.create_stream())
    e1, e2 = ok(b.create_event_ex_with_flag(1)), ok(b.create_event_ex_with_flag(1))
    x = ok(b.malloc(64))
    ok(b.capture_begin(s, 0))
    ok(b.record_event(e1, s))
    ok(b.stream_wait_event(s2, e1))
    ok(b.capture_task_grp_begin(s))
    assert launch(b, fill, s2, out=x, n=1, value=1) == Err.STREAM_TASK_GROUP_INTR  # TG-05
    assert b.capture_task_grp_end(s)[0] == Err.STREAM_TASK_GROUP_INTR
    ok(b.record_event(e2, s2))
    ok(b.stream_wait_event(s, e2))
    assert b.capture_end(s) == (Err.RT_STREAM_CAPTURE_INVALIDATED, None)


def test_update_replaces_group_kernels_in_stream_order(b, fill):
    m, s, x, g = _grouped_model(b, fill)
    add = func(b, "add")
    ok(b.execute_async(m, s))
    ok(b.synchronize_stream(s))
    assert i32(b, x, 3) == [7, 1, 2]
    u = ok(b.create_stream())
    ev = ok(b.create_event_with_flag(1))
    assert b.stream_wait_event(u, ev) == 0  # hold u: the update waits in u's order
    ok(b.capture_task_update_begin(u, g))
    assert launch(b, fill, u, out=x + 4, n=1, value=10) == 0
    assert launch(b, add, u, a=x, b=x, out=x + 8, n=1) == 0  # another operator (TG-10)
    assert b.value_write(x, 1, 0, u) == Err.RT_TASK_TYPE_NOT_SUPPORT  # TG-15
    assert launch(b, fill, u, out=x, n=1, value=1) == Err.RT_INTERNAL_ERROR  # TG-13 extra
    ok(b.capture_task_update_end(u))
    ok(b.execute_async(m, s))
    ok(b.synchronize_stream(s))
    assert i32(b, x, 3) == [7, 1, 2]  # not applied yet (TG-10)
    ok(b.record_event(ev, s))
    ok(b.synchronize_stream(u))
    ok(b.execute_async(m, s))
    ok(b.synchronize_stream(s))
    assert i32(b, x, 3) == [7, 10, 14]
    ok(b.destroy(m))


def test_update_state_errors(b, fill):
    m, s, x, g = _grouped_model(b, fill)
    u, u2 = ok(b.create_stream()), ok(b.create_stream())
    assert b.capture_task_update_begin(None, g) == Err.INVALID_PARAM  # TG-18
    assert b.capture_task_update_begin(u, None) == Err.INVALID_PARAM
    assert b.capture_task_update_end(u) == Err.STREAM_TASK_GROUP_STATUS  # TG-12
    model_stream = streams(b, m)[0]
    assert b.capture_task_update_begin(model_stream, g) == Err.RT_STREAM_MODEL  # TG-11
    c = ok(b.create_stream())
    ok(b.capture_begin(c, 0))
    assert b.capture_task_update_begin(c, g) == Err.RT_STREAM_CAPTURED
    ok(b.capture_task_update_begin(u, g))
    assert b.capture_task_update_begin(u2, g) == Err.STREAM_TASK_GROUP_STATUS  # busy handle
    assert b.capture_task_update_begin(u, g) == Err.STREAM_TASK_GROUP_STATUS
    assert launch(b, fill, u, out=x, n=1, value=3) == 0
    assert b.capture_task_update_end(u) == Err.RT_INTERNAL_ERROR  # TG-13: fewer
    ok(b.capture_task_update_begin(u2, g))  # reusable
    assert b.capture_task_update_end(u2) == Err.RT_INTERNAL_ERROR  # TG-14: empty update
    ok(b.destroy(ok(b.capture_end(c))))
    ok(b.destroy(m))
