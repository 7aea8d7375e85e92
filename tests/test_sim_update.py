"""Simulator unit tests: SetParams deferral, Disable + Update + NOP, model states, Destroy."""

from __future__ import annotations

import dataclasses

import pytest

from mdlri_conformance.backends.contract import (Err, TaskParams, TaskType, ValueWaitTaskParams,
                               ValueWriteTaskParams)

from .test_sim_support import (SYNC, b, func, i32, launch, ok, streams,  # noqa: F401
                               tasks, types)


def _value_model(b, values=(1, 2)):
    """A model with one VALUE_WRITE per value to consecutive u64 slots; returns (m, s, x)."""
    s = ok(b.create_stream())
    x = ok(b.malloc(8 * len(values)))
    ok(b.memset(x, 8 * len(values), 0, 8 * len(values)))
    ok(b.capture_begin(s, 0))
    for i, v in enumerate(values):
        ok(b.value_write(x + 8 * i, v, 0, s))
    return ok(b.capture_end(s)), s, x


def _run(b, m, s):
    ok(b.execute_async(m, s))
    ok(b.synchronize_stream(s))


def test_set_params_is_deferred_until_update(b):
    m, s, x = _value_model(b, (1,))
    (t,) = tasks(b, streams(b, m)[0])
    p = ok(b.task_get_params(t))
    p.value_write.value = 77
    assert b.task_set_params(t, p) == 0
    assert ok(b.task_get_params(t)).value_write.value == 77  # GETP-06, Q-07
    assert b.execute_async(m, s) == Err.RT_MODEL_EXECUTE  # SETP-02
    assert b.mem.read_u64(x) == 0
    assert b.update(m) == 0
    assert b.update(m) == 0  # UPD-03
    _run(b, m, s)
    assert b.mem.read_u64(x) == 77  # UPD-05
    assert ok(b.task_get_seq_id(t)) == 0  # SEQ-05
    assert tasks(b, streams(b, m)[0]) == [t]
    ok(b.destroy(m))


def test_device_record_unchanged_before_update(b):
    m, s, x = _value_model(b, (5,))
    (t,) = tasks(b, streams(b, m)[0])
    assert t.dev.value == 5
    p = ok(b.task_get_params(t))
    p.value_write.value = 6
    ok(b.task_set_params(t, p))
    assert t.dev.value == 5 and t.host.value == 6  # SETP-01
    ok(b.update(m))
    assert t.dev.value == 6
    ok(b.destroy(m))


def test_set_params_converts_to_value_wait(b):
    m, s, x = _value_model(b, (1,))
    (t,) = tasks(b, streams(b, m)[0])
    params = TaskParams(type=TaskType.VALUE_WAIT, value_wait=ValueWaitTaskParams(x, 0, 1))
    ok(b.task_set_params(t, params))
    assert ok(b.task_get_type(t)) == TaskType.VALUE_WAIT  # TYPE-07, SETP-07
    ok(b.update(m))
    _run(b, m, s)  # *x == 0: the wait passes
    ok(b.destroy(m))


def test_kernel_set_params_host_and_device_args(b):
    s = ok(b.create_stream())
    x = ok(b.malloc(32))
    fill = func(b, "fill")
    ok(b.capture_begin(s, 0))
    ok(launch(b, fill, s, out=x, n=8, value=1))
    m = ok(b.capture_end(s))
    (t,) = tasks(b, streams(b, m)[0])
    p = ok(b.task_get_params(t))
    old_args = p.kernel.args
    p.kernel = dataclasses.replace(p.kernel, args=fill.spec.pack(out=x, n=8, value=2),
                                   is_host_args=1, num_blocks=65537)
    ok(b.task_set_params(t, p))
    q = ok(b.task_get_params(t))
    assert q.kernel.num_blocks == 1 and q.kernel.is_host_args == 0  # SETP-15
    assert q.kernel.args != old_args
    ok(b.update(m))
    _run(b, m, s)
    assert i32(b, x, 8) == [2] * 8
    # device args used in place, read at execution time (SETP-09)
    dev_args = ok(b.malloc(fill.spec.args_size))
    b.mem.write(dev_args, fill.spec.pack(out=x, n=8, value=3))
    p.kernel = dataclasses.replace(p.kernel, args=dev_args, is_host_args=0)
    ok(b.task_set_params(t, p))
    ok(b.update(m))
    b.mem.write(dev_args, fill.spec.pack(out=x, n=8, value=4))
    _run(b, m, s)
    assert i32(b, x, 8) == [4] * 8
    ok(b.destroy(m))
    assert b.live_counts().extra["internal_allocations"] == 0


@pytest.mark.parametrize("mutate,rc", [
    (lambda p, fn: setattr(p, "type", TaskType.EVENT_RECORD), Err.RT_PARAM_INVALID),
    (lambda p, fn: setattr(p, "task_grp", object()), Err.RT_PARAM_INVALID),
    (lambda p, fn: setattr(p.kernel, "func_handle", None), Err.RT_PARAM_INVALID),
    (lambda p, fn: setattr(p.kernel, "func_handle", object()), Err.RT_INVALID_HANDLE),
    (lambda p, fn: setattr(p.kernel, "args", None), Err.RT_PARAM_INVALID),
    (lambda p, fn: setattr(p.kernel, "args_size", 0), Err.RT_PARAM_INVALID),
])
def test_failed_set_params_poisons_the_model(b, mutate, rc):
    s = ok(b.create_stream())
    x = ok(b.malloc(32))
    fill = func(b, "fill")
    ok(b.capture_begin(s, 0))
    ok(launch(b, fill, s, out=x, n=8, value=1))
    m = ok(b.capture_end(s))
    (t,) = tasks(b, streams(b, m)[0])
    p = ok(b.task_get_params(t))
    mutate(p, fill)
    assert b.task_set_params(t, p) == rc
    # FAULT is terminal (SETP-10)
    assert b.execute_async(m, s) == Err.RT_MODEL_EXECUTE
    assert b.update(m) == Err.RT_MODEL_UPDATE_FAILED
    assert b.task_set_params(t, ok(b.task_get_params(t))) == Err.RT_MODEL_UPDATE_FAILED
    assert b.task_disable(t) == Err.RT_MODEL_UPDATE_FAILED
    assert b.destroy(m) == 0


def test_null_checks_do_not_change_state(b):
    m, s, x = _value_model(b, (1,))
    (t,) = tasks(b, streams(b, m)[0])
    assert b.task_set_params(None, TaskParams()) == Err.RT_PARAM_INVALID
    assert b.task_set_params(t, None) == Err.RT_PARAM_INVALID
    assert b.task_disable(None) == Err.RT_PARAM_INVALID
    assert b.update(None) == Err.RT_PARAM_INVALID
    _run(b, m, s)
    assert b.mem.read_u64(x) == 1
    ok(b.destroy(m))


def test_disable_update_and_nop(b):
    m, s, x = _value_model(b, (1, 2))
    (origin,) = streams(b, m)
    t1, t2 = tasks(b, origin)
    ok(b.task_disable(t1))
    ok(b.task_disable(t1))  # DIS-03
    assert tasks(b, origin) == [t1, t2]  # nothing removed before Update
    assert b.execute_async(m, s) == Err.RT_MODEL_EXECUTE  # DIS-02
    ok(b.update(m))
    assert tasks(b, origin) == [t2]  # DIS-05
    assert ok(b.task_get_seq_id(t2)) == 1
    _run(b, m, s)
    assert [b.mem.read_u64(x), b.mem.read_u64(x + 8)] == [0, 2]  # DIS-01
    ok(b.task_disable(t2))
    ok(b.update(m))
    (nop,) = tasks(b, origin)  # DIS-07
    assert ok(b.task_get_type(nop)) == TaskType.DEFAULT
    assert ok(b.task_get_seq_id(nop)) == 2  # SEQ-06
    assert b.task_disable(nop) == Err.RT_PARAM_INVALID  # DIS-06 -> FAULT
    assert b.execute_async(m, s) == Err.RT_MODEL_EXECUTE
    ok(b.destroy(m))


def test_set_params_reenables_disabled_task(b):
    m, s, x = _value_model(b, (1,))
    (t,) = tasks(b, streams(b, m)[0])
    ok(b.task_disable(t))
    p = TaskParams(type=TaskType.VALUE_WRITE, value_write=ValueWriteTaskParams(x, 9))
    ok(b.task_set_params(t, p))  # DIS-04: last write wins
    ok(b.update(m))
    _run(b, m, s)
    assert b.mem.read_u64(x) == 9
    ok(b.destroy(m))


def test_update_states(b):
    s = ok(b.create_stream())
    ok(b.capture_begin(s, 0))
    m = ok(b.capture_get_info(s))[1]
    assert b.update(m) == Err.RT_MODEL_UPDATE_FAILED  # UPD-04
    ok(b.capture_end(s))
    assert b.update(m) == 0  # UPD-01
    ok(b.destroy(m))
    assert b.update(m) == Err.RT_INVALID_HANDLE


def test_running_model_refuses_updates_and_destroy_times_out(b):
    m, s, x = _value_model(b, (1,))
    (t,) = tasks(b, streams(b, m)[0])
    gate = ok(b.create_event_ex_with_flag(SYNC))
    ok(b.stream_wait_event(s, gate))
    ok(b.execute_async(m, s))
    ok(b.execute_async(m, s))  # EXE-15
    assert b.task_disable(t) == Err.RT_MODEL_UPDATE_FAILED  # SETP-12, no state change
    assert b.destroy(m) == Err.RT_MODEL_RUNNING  # LIFE-03 (destroy_wait_s=0.2)
    ok(b.record_event(gate, None))
    ok(b.synchronize_stream(s))
    assert b.task_disable(t) == 0
    ok(b.update(m))
    ok(b.destroy(m))


def test_broken_dependency_blocks(b):
    """Q-15: disabling a captured EVENT_RECORD whose WAIT survives makes executions hang."""
    s1, s2 = ok(b.create_stream()), ok(b.create_stream())
    e1, e2 = (ok(b.create_event_ex_with_flag(SYNC)) for _ in range(2))
    x = ok(b.malloc(8))
    ok(b.capture_begin(s1, 0))
    ok(b.record_event(e1, s1))
    ok(b.stream_wait_event(s2, e1))
    ok(b.value_write(x, 5, 0, s2))
    ok(b.record_event(e2, s2))
    ok(b.stream_wait_event(s1, e2))
    m = ok(b.capture_end(s1))
    sub, origin = streams(b, m)
    assert types(b, sub) == [TaskType.EVENT_WAIT, TaskType.VALUE_WRITE, TaskType.EVENT_RECORD]
    ok(b.task_disable(tasks(b, sub)[2]))
    ok(b.update(m))
    ok(b.execute_async(m, s1))
    assert b.synchronize_stream_with_timeout(s1, 50) == Err.RT_STREAM_SYNC_TIMEOUT
    assert b.mem.read_u64(x) == 5  # the sub stream ran up to the removed record
    assert b.destroy(m) == Err.RT_MODEL_RUNNING
    assert b.get_tasks_by_stream(origin, None)[0] == 0  # LIST-11 during execution
