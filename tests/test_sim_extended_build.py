"""Simulator unit tests: the build path and aclmdlRIExecute (BLD-01..07, EXE-10..13)."""

from __future__ import annotations

import time

from mdlri_conformance.backends.contract import UNWRITTEN, Err, ModelStreamFlag, StreamFlag, TaskType

from .test_sim_support import b, func, i32, launch, ok, tasks, types  # noqa: F401

P = int(StreamFlag.PERSISTENT)
HEAD, DEFAULT = int(ModelStreamFlag.HEAD), int(ModelStreamFlag.DEFAULT)


def _built(b, fill, x, value=5):
    s = ok(b.create_stream_with_config(0, P))
    m = ok(b.build_begin(0))
    ok(b.bind_stream(m, s, HEAD))
    assert launch(b, fill, s, out=x, n=2, value=value) == 0
    ok(b.value_write(x + 8, 9, 0, s))
    return m, s


def test_build_stores_and_executes(b):
    fill = func(b, "fill")
    x = ok(b.malloc(64))
    ok(b.memset(x, 64, 0, 64))
    m, s = _built(b, fill, x)
    assert i32(b, x, 3) == [0, 0, 0]  # BLD-03: stored, not executed
    assert b.execute(m, -1) == Err.RT_MODEL_EXECUTE  # EXE-12: no EndTask
    e = ok(b.create_stream())
    assert b.execute_async(m, e) == Err.RT_MODEL_EXECUTE
    ok(b.end_task(m, s))
    ok(b.build_end(m, None))
    assert types(b, s) == [TaskType.KERNEL, TaskType.VALUE_WRITE, TaskType.DEFAULT]
    assert b.execute(m, -1) == 0
    assert i32(b, x, 3) == [5, 5, 9]
    ok(b.memset(x, 64, 0, 64))
    ok(b.execute_async(m, e))
    ok(b.synchronize_stream(e))
    assert i32(b, x, 3) == [5, 5, 9]
    assert b.execute(m, 1000) == 0
    ok(b.unbind_stream(m, s))
    ok(b.destroy(m))


def test_build_errors(b):
    fill = func(b, "fill")
    assert b.build_begin(1) == (Err.RT_PARAM_INVALID, UNWRITTEN)  # BLD-01
    assert b.build_begin(0, null_model=True) == (Err.INVALID_PARAM, UNWRITTEN)
    m = ok(b.build_begin(0))
    plain = ok(b.create_stream())
    s = ok(b.create_stream_with_config(0, P))
    assert b.bind_stream(m, plain, HEAD) == Err.RT_PARAM_INVALID  # BLD-02
    assert b.bind_stream(m, s, 5) == Err.RT_PARAM_INVALID
    assert b.bind_stream(None, s, HEAD) == Err.INVALID_PARAM
    ok(b.bind_stream(m, s, DEFAULT))
    m2 = ok(b.build_begin(0))
    assert b.bind_stream(m2, s, HEAD) == Err.RT_STREAM_MODEL
    assert b.capture_begin(s, 0) == Err.RT_STREAM_MODEL
    assert b.build_end(m, object()) == Err.INVALID_PARAM  # BLD-05
    c = ok(b.create_stream())
    ok(b.capture_begin(c, 0))
    cm = ok(b.capture_get_info(c))[1]
    assert b.bind_stream(cm, s, HEAD) == Err.RT_STREAM_MODEL  # already bound: checked first
    assert b.bind_stream(cm, ok(b.create_stream_with_config(0, P)), HEAD) == Err.RT_PARAM_INVALID
    assert b.build_end(cm, None) == Err.RT_PARAM_INVALID
    cs = ok(b.create_stream_with_config(0, P))
    ok(b.capture_begin(cs, 0))
    assert b.bind_stream(m2, cs, HEAD) == Err.RT_STREAM_CAPTURED
    assert b.unbind_stream(m2, cs) == Err.RT_STREAM_CAPTURED  # BLD-07
    assert b.unbind_stream(cm, s) == Err.RT_PARAM_INVALID
    x = ok(b.malloc(64))
    assert launch(b, fill, c, out=x, n=1, value=1) == 0
    cm = ok(b.capture_end(c))
    assert b.execute(cm, -1) == Err.RT_PARAM_INVALID  # EXE-10
    assert b.execute(cm, 0) == Err.RT_PARAM_INVALID  # EXE-11
    assert b.execute(m, -2) == Err.RT_PARAM_INVALID
    assert b.execute(None, -1) == Err.INVALID_PARAM
    ok(b.destroy(ok(b.capture_end(cs))))
    for mm in (cm, m, m2):
        ok(b.destroy(mm))


def test_built_model_refuses_editing_and_lists_reverse_bind_order(b):
    fill = func(b, "fill")
    x = ok(b.malloc(64))
    m, s = _built(b, fill, x)
    s2 = ok(b.create_stream_with_config(0, P))
    ok(b.bind_stream(m, s2, DEFAULT))
    ok(b.end_task(m, s))
    ok(b.build_end(m))
    assert ok(b.get_streams(m, 2))[0] == [s2, s]  # BLD-06
    t = tasks(b, s)[0]
    assert ok(b.task_get_type(t)) == TaskType.KERNEL
    assert b.task_get_seq_id(t) == (Err.RT_FEATURE_NOT_SUPPORT, UNWRITTEN)
    p = ok(b.task_get_params(t))
    assert b.task_set_params(t, p) == Err.RT_FEATURE_NOT_SUPPORT
    assert b.task_disable(t) == Err.RT_FEATURE_NOT_SUPPORT
    assert b.update(m) == Err.RT_FEATURE_NOT_SUPPORT
    ok(b.destroy(m))


def test_default_flag_streams_do_not_run_and_execute_timeout(b):
    fill = func(b, "fill")
    x = ok(b.malloc(64))
    ok(b.memset(x, 64, 0, 64))
    m, s = _built(b, fill, x)
    s2 = ok(b.create_stream_with_config(0, P))
    ok(b.bind_stream(m, s2, DEFAULT))
    ok(b.value_write(x + 16, 4, 0, s2))
    ok(b.value_wait(x + 24, 1, 1, s))  # EQ 1: blocks until written
    ok(b.end_task(m, s))
    ok(b.build_end(m))
    t0 = time.monotonic()
    assert b.execute(m, 100) == Err.RT_STREAM_SYNC_TIMEOUT  # EXE-13
    assert 0.09 <= time.monotonic() - t0 < 2
    assert i32(b, x, 5) == [5, 5, 9, 0, 0]  # DEFAULT-flag stream never ran
    o = ok(b.create_stream())
    ok(b.value_write(x + 24, 1, 0, o))  # unblocks the execution left running
    ok(b.synchronize_stream(o))
    assert b.destroy(m) == 0


def test_bound_stream_listing_events_and_unbind(b):
    s = ok(b.create_stream_with_config(0, P))
    m = ok(b.build_begin(0))
    ok(b.bind_stream(m, s, HEAD))
    ev = ok(b.create_event_ex_with_flag(1))
    old = ok(b.create_event_with_flag(1))
    x = ok(b.malloc(16))
    # a new-mode event cannot be recorded or waited on on a model stream (RT-26) ...
    assert b.record_event(ev, s) == Err.RT_FEATURE_NOT_SUPPORT
    assert b.stream_wait_event(s, ev) == Err.RT_FEATURE_NOT_SUPPORT
    # ... nor reset on any stream (api_impl.cc:2210-2214): no task
    assert b.reset_event(ev, s) == Err.RT_FEATURE_NOT_SUPPORT
    ok(b.record_event(old, s))
    ok(b.stream_wait_event(s, old))
    ok(b.memset_async(x, 16, 3, 16, s))
    assert types(b, s) == [TaskType.EVENT_RECORD, TaskType.EVENT_WAIT, TaskType.DEFAULT]
    assert b.end_task(m, ok(b.create_stream_with_config(0, P))) == Err.RT_INTERNAL_ERROR  # RT-32
    ok(b.end_task(m, s))
    assert b.execute(m, 1000) == 0
    assert b.mem.read(x, 4).tolist() == [3, 3, 3, 3]
    ok(b.unbind_stream(m, s))
    assert b.unbind_stream(m, s) == Err.RT_STREAM_MODEL  # RT-33
    assert ok(b.get_streams(m, 1))[0] == [UNWRITTEN]  # LIST-14: slots past the count untouched
    assert b.get_tasks_by_stream(s, None)[0] == Err.RT_PARAM_INVALID  # no longer a model stream
    m2 = ok(b.build_begin(0))
    ok(b.bind_stream(m2, s, HEAD))  # bindable again
    ok(b.destroy(m))
    ok(b.destroy(m2))
    assert b.live_counts().extra["internal_allocations"] == 0
