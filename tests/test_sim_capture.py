"""Simulator unit tests: capture, cross-stream fork/join, listing, seq ids, GetParams."""

from __future__ import annotations

import numpy as np

from mdlri_conformance.backends.contract import UNWRITTEN, CaptureStatus, Err, EventFlag, StreamFlag, TaskType

from .test_sim_support import (SYNC, b, func, i32, launch, ok, put_i32, streams,  # noqa: F401
                               tasks, types)


def test_capture_records_and_execute_runs(b):
    s = ok(b.create_stream())
    x = ok(b.malloc(32))
    put_i32(b, x, [1] * 8)
    fill = func(b, "fill")
    ok(b.capture_begin(s, 0))
    st, m = ok(b.capture_get_info(s))
    assert st == CaptureStatus.ACTIVE and m is not None  # CAP-05
    ok(launch(b, fill, s, out=x, n=8, value=5))
    ok(b.value_write(x, 9, 0, s))
    assert i32(b, x, 8) == [1] * 8  # CAP-01
    assert b.synchronize_stream(s) == Err.RT_STREAM_CAPTURED  # STAT-06
    m2 = ok(b.capture_end(s))
    assert m2 == m  # CAP-04
    assert tuple(ok(b.capture_get_info(s))) == (CaptureStatus.NONE, None)  # STAT-01
    assert i32(b, x, 8) == [1] * 8
    ok(b.execute_async(m, s))
    ok(b.synchronize_stream(s))
    assert i32(b, x, 8) == [9, 0] + [5] * 6
    assert b.destroy(m) == 0 and b.destroy(m) == Err.RT_INVALID_HANDLE


def test_pre_capture_work_still_runs(b):
    s = ok(b.create_stream())
    gate = ok(b.create_event_ex_with_flag(SYNC))
    x = ok(b.malloc(8))
    ok(b.stream_wait_event(s, gate))
    ok(b.value_write(x, 3, 0, s))
    ok(b.capture_begin(s, 2))
    ok(b.value_write(x, 4, 0, s))
    m = ok(b.capture_end(s))
    ok(b.record_event(gate, None))
    ok(b.synchronize_stream(s))
    assert b.mem.read_u64(x) == 3  # CAP-02; the captured write did not run
    ok(b.destroy(m))


def test_begin_end_errors(b):
    s = ok(b.create_stream())
    assert b.capture_begin(None, 0) == Err.INVALID_PARAM
    assert b.capture_begin(s, 3) == Err.RT_PARAM_INVALID
    dev_only = ok(b.create_stream_with_config(0, int(StreamFlag.DEVICE_USE_ONLY)))
    assert b.capture_begin(dev_only, 0) == Err.RT_INTERNAL_ERROR
    assert b.capture_end(s) == (Err.RT_STREAM_NOT_CAPTURED, UNWRITTEN)  # CAP-10
    ok(b.capture_begin(s, 0))
    assert b.capture_begin(s, 0) == Err.RT_STREAM_CAPTURED  # CAP-06
    assert b.capture_end(s, null_model=True) == (Err.RT_PARAM_INVALID, UNWRITTEN)  # CAP-12
    assert ok(b.capture_get_info(s))[0] == CaptureStatus.ACTIVE
    assert b.destroy_stream(s) == Err.RT_STREAM_CAPTURED  # CAP-21
    st = ok(b.capture_get_info(s))
    assert b.destroy(st[1]) == Err.RT_MODEL_CAPTURED  # LIFE-02
    assert b.execute_async(st[1], None) == Err.RT_MODEL_CAPTURED  # EXE-04
    assert b.capture_get_info(None) == (Err.INVALID_PARAM, UNWRITTEN, UNWRITTEN)
    assert b.capture_get_info(s, null_status=True, null_model=True)[0] == Err.INVALID_PARAM
    assert b.capture_get_info(s, null_status=True)[1] is UNWRITTEN
    m = ok(b.capture_end(s))  # CAP-16: empty capture
    assert ok(b.get_streams(m, None))[1] == 1
    ok(b.execute_async(m, s))
    ok(b.synchronize_stream(s))
    m2 = (ok(b.capture_begin(s, 0)), ok(b.capture_end(s)))[1]
    assert m2 != m  # CAP-22
    ok(b.destroy(m))
    ok(b.destroy(m2))


def test_listing_and_seq_ids_cross_stream(b):
    s1, s2 = ok(b.create_stream()), ok(b.create_stream())
    e_fork, e_join = (ok(b.create_event_ex_with_flag(SYNC)) for _ in range(2))
    x, y, z = ok(b.malloc(32)), ok(b.malloc(32)), ok(b.malloc(8))
    fill, copy = func(b, "fill"), func(b, "copy")
    ok(b.capture_begin(s1, 0))
    ok(launch(b, fill, s1, out=x, n=8, value=4))          # seq 0
    ok(b.record_event(e_fork, s1))                          # seq 1
    ok(b.stream_wait_event(s2, e_fork))                     # seq 2, s2 joins (XS-01)
    st, m = ok(b.capture_get_info(s2))
    assert st == CaptureStatus.ACTIVE and m == ok(b.capture_get_info(s1))[1]  # STAT-03
    ok(launch(b, copy, s2, src=x, dst=y, n=8))              # seq 3
    ok(b.value_write(z, 1, 0, s1))                          # seq 4
    ok(b.record_event(e_join, s2))                          # seq 5
    ok(b.stream_wait_event(s1, e_join))                     # seq 6
    assert len(streams(b, m)) == 2  # LIST-11 during capture
    assert b.capture_end(s2) == (Err.RT_STREAM_CAPTURE_UNMATCHED, UNWRITTEN)  # CAP-11
    assert ok(b.capture_end(s1)) == m
    assert ok(b.capture_get_info(s2))[0] == CaptureStatus.NONE  # STAT-04
    sub, origin = streams(b, m)  # LIST-02: origin last
    assert sub not in (s1, s2) and origin not in (s1, s2)  # LIST-01
    assert types(b, origin) == [TaskType.KERNEL, TaskType.EVENT_RECORD, TaskType.VALUE_WRITE,
                                TaskType.EVENT_WAIT, TaskType.EVENT_RESET, TaskType.EVENT_RESET]
    assert types(b, sub) == [TaskType.EVENT_WAIT, TaskType.KERNEL, TaskType.EVENT_RECORD]
    seq = lambda s: [ok(b.task_get_seq_id(t)) for t in tasks(b, s)]  # noqa: E731
    assert seq(origin) == [0, 1, 4, 6, 7, 8]  # SEQ-01, XS-08
    assert seq(sub) == [2, 3, 5]
    # the resets follow first-capture order: e_fork then e_join
    resets = [ok(b.task_get_params(t)).event_reset.event for t in tasks(b, origin)[-2:]]
    records = [ok(b.task_get_params(tasks(b, origin)[1])).event_record.event,
               ok(b.task_get_params(tasks(b, sub)[2])).event_record.event]
    assert resets == records and e_fork not in resets  # GETP-04
    # two-phase convention
    rc, slots, n = b.get_streams(m, 3)
    assert (rc, slots, n) == (0, [sub, origin, UNWRITTEN], 2)  # LIST-04, LIST-14: tail untouched
    rc, slots, n = b.get_streams(m, 1)
    # LIST-05, LIST-14: the short array is not written at all, the count is the capacity
    assert (rc, slots, n) == (Err.RT_INSUFFICIENT_INPUT_ARRAY, [UNWRITTEN], 1)
    # GetTasksByStream keeps the partial fill and the NULL tail (LIST-05, LIST-08)
    sub_tasks = tasks(b, sub)
    assert b.get_tasks_by_stream(sub, 1) == (Err.RT_INSUFFICIENT_INPUT_ARRAY, sub_tasks[:1], 1)
    assert b.get_tasks_by_stream(sub, 4) == (0, sub_tasks + [None], 3)
    assert b.get_streams(m, 0) == (Err.RT_INSUFFICIENT_INPUT_ARRAY, [], 0)
    assert b.get_streams(None, 2) == (Err.RT_PARAM_INVALID, [UNWRITTEN] * 2, UNWRITTEN)
    assert b.get_streams(m, None, null_count=True)[0] == Err.RT_PARAM_INVALID
    assert b.get_tasks_by_stream(s1, None)[0] == Err.RT_PARAM_INVALID  # LIST-07
    assert b.get_tasks_by_stream(None, None)[0] == Err.RT_PARAM_INVALID
    ok(b.execute_async(m, s1))
    ok(b.execute_async(m, s1))  # EXE-02
    ok(b.synchronize_stream(s1))
    assert i32(b, y, 8) == [4] * 8 and b.mem.read_u64(z) == 1
    ok(b.destroy(m))
    assert b.get_tasks_by_stream(origin, None)[0] == Err.RT_PARAM_INVALID  # LIFE-01 choice
    assert b.task_get_type(None)[0] == Err.RT_PARAM_INVALID


def test_seq_ids_restart_per_model(b):
    s = ok(b.create_stream())
    x = ok(b.malloc(8))
    models = []
    for _ in range(2):
        ok(b.capture_begin(s, 0))
        ok(b.value_write(x, 1, 0, s))
        models.append(ok(b.capture_end(s)))
    for m in models:
        (origin,) = streams(b, m)
        assert [ok(b.task_get_seq_id(t)) for t in tasks(b, origin)] == [0]  # SEQ-07
        ok(b.destroy(m))


def test_get_params_fields(b):
    s = ok(b.create_stream())
    x = ok(b.malloc(32))
    fill = func(b, "fill")
    ok(b.capture_begin(s, 0))
    ok(launch(b, fill, s, out=x, n=8, value=5))
    ok(b.value_wait(x, 7, 2, s))
    ok(b.memcpy_async(x + 8, 8, x, 8, 3, s))
    m = ok(b.capture_end(s))
    kt, wt, ct = tasks(b, streams(b, m)[0])
    p = ok(b.task_get_params(kt))
    assert p.type == TaskType.KERNEL and p.kernel.func_handle == fill  # GETP-03
    assert p.kernel.is_host_args == 0 and isinstance(p.kernel.args, int)
    assert p.kernel.args_size == fill.spec.args_size and p.kernel.num_blocks == 1
    assert b.mem.read(p.kernel.args, p.kernel.args_size).tobytes() == fill.spec.pack(
        out=x, n=8, value=5)
    assert p.rsv0 == (0, 0, 0) and p.rsv1 == bytes(32) and p.union_tail == bytes(40)  # GETP-02
    assert p.task_grp is None and p.op_info_ptr is None and p.op_info_size == 0
    p = ok(b.task_get_params(wt))
    assert (p.value_wait.dev_addr, p.value_wait.value, p.value_wait.flag) == (x, 7, 2)  # GETP-05
    assert p.union_tail == bytes(104)
    assert ok(b.task_get_type(ct)) == TaskType.DEFAULT
    assert b.task_get_params(ct) == (Err.RT_PARAM_INVALID, UNWRITTEN)  # GETP-01
    assert b.task_get_params(kt, null_out=True)[0] == Err.RT_PARAM_INVALID
    assert b.task_get_type(None)[0] == Err.RT_PARAM_INVALID
    assert b.task_get_seq_id(kt, null_out=True)[0] == Err.RT_PARAM_INVALID
    ok(b.destroy(m))


def test_join_failures_destroy_model(b):
    s1, s2 = ok(b.create_stream()), ok(b.create_stream())
    e = ok(b.create_event_ex_with_flag(SYNC))
    x = ok(b.malloc(8))
    ok(b.capture_begin(s1, 0))
    ok(b.record_event(e, s1))
    ok(b.stream_wait_event(s2, e))
    ok(b.value_write(x, 1, 0, s2))  # s2 never rejoins
    m = ok(b.capture_get_info(s1))[1]
    assert b.capture_end(s1) == (Err.RT_STREAM_UNJOINED, None)  # XS-02, CAP-13
    assert ok(b.capture_get_info(s2))[0] == CaptureStatus.NONE
    assert b.get_streams(m, None)[0] == Err.RT_INVALID_HANDLE
    assert b.live_counts().models == 0
    # XS-03: a task after the rejoin
    e2 = ok(b.create_event_ex_with_flag(SYNC))
    ok(b.capture_begin(s1, 0))
    ok(b.record_event(e, s1))
    ok(b.stream_wait_event(s2, e))
    ok(b.record_event(e2, s2))
    ok(b.stream_wait_event(s1, e2))
    ok(b.value_write(x, 1, 0, s2))
    assert b.capture_end(s1) == (Err.RT_STREAM_UNJOINED, None)
    # XS-06 is unreachable: the reset that would capture the event without a record is refused
    # first (new-mode event, api_impl.cc:2210-2214); nothing is captured and the capture ends
    ok(b.capture_begin(s1, 0))
    assert b.reset_event(e, s1) == Err.RT_FEATURE_NOT_SUPPORT
    ok(b.stream_wait_event(s1, e))  # never recorded: no task (XS-14)
    ok(b.destroy(ok(b.capture_end(s1))))
    # XS-11: the event can be captured again after CaptureEnd
    ok(b.capture_begin(s1, 0))
    ok(b.record_event(e, s1))
    ok(b.stream_wait_event(s1, e))
    ok(b.destroy(ok(b.capture_end(s1))))


def test_event_rules_in_capture(b):
    s = ok(b.create_stream())
    old = ok(b.create_event())
    old_flag = ok(b.create_event_with_flag(SYNC))
    outside = ok(b.create_event_ex_with_flag(SYNC))
    timeline = ok(b.create_event_ex_with_flag(int(EventFlag.TIME_LINE)))
    ok(b.record_event(outside, None))
    ok(b.capture_begin(s, 0))
    assert b.record_event(old, s) == Err.RT_FEATURE_NOT_SUPPORT  # XS-04
    assert b.record_event(old_flag, s) == Err.RT_FEATURE_NOT_SUPPORT
    assert b.stream_wait_event(s, old) == Err.RT_FEATURE_NOT_SUPPORT
    assert b.stream_wait_event(s, outside) == Err.RT_CAPTURE_DEPENDENCY  # XS-05
    assert b.record_event(timeline, s) == 0  # XS-09: nothing recorded
    assert b.stream_wait_event(s, timeline) == Err.RT_FEATURE_NOT_SUPPORT  # RT-25
    m = ok(b.capture_end(s))  # the capture survived every error (XS-05)
    assert tasks(b, streams(b, m)[0]) == []
    ok(b.destroy(m))


def test_cross_model_event_invalidates_both(b):
    s1, s2 = ok(b.create_stream()), ok(b.create_stream())
    e = ok(b.create_event_ex_with_flag(SYNC))
    x = ok(b.malloc(8))
    ok(b.capture_begin(s1, 2))
    ok(b.capture_begin(s2, 2))  # CAP-07
    ok(b.record_event(e, s1))
    assert b.stream_wait_event(s2, e) == Err.STREAM_CAPTURE_CONFLICT  # XS-07
    assert ok(b.capture_get_info(s2))[0] == CaptureStatus.ACTIVE  # STAT-05
    assert b.value_write(x, 1, 0, s2) == 0  # STAT-07
    assert b.capture_end(s1) == (Err.RT_STREAM_CAPTURE_INVALIDATED, None)  # STAT-08
    assert b.capture_end(s2) == (Err.RT_STREAM_CAPTURE_INVALIDATED, None)
    assert b.live_counts().models == 0


def test_captured_memcpy_reads_host_at_execution(b):
    s = ok(b.create_stream())
    h = ok(b.malloc_host(8))
    x = ok(b.malloc(8))
    ok(b.capture_begin(s, 0))
    assert b.memcpy_async(x, 8, np.zeros(8, np.uint8), 8, 1, s) == Err.RT_PARAM_INVALID  # MODE-14
    ok(b.memcpy_async(x, 8, h, 8, 1, s))
    m = ok(b.capture_end(s))
    h[:] = 6  # CAP-19: read at execution time
    ok(b.execute_async(m, s))
    ok(b.synchronize_stream(s))
    assert b.mem.read(x, 8).tolist() == [6] * 8
    h[:] = 8
    ok(b.execute_async(m, None))  # default stream
    ok(b.synchronize_stream(None))
    assert b.mem.read(x, 8).tolist() == [8] * 8
    ok(b.destroy(m))
