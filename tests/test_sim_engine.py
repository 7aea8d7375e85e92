"""Simulator unit tests: the progress engine, events, value ops, sync and timeouts."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from mdlri_conformance.backends.contract import Err, EventFlag, StreamFlag, StreamStatus, ValueWaitFlag
from mdlri_conformance.backends.sim.device import value_condition

from .test_sim_support import SYNC, H2D, b, func, i32, launch, ok, put_i32  # noqa: F401


def test_kernel_launch_on_stream(b):
    s = ok(b.create_stream())
    x, y = ok(b.malloc(32)), ok(b.malloc(32))
    put_i32(b, x, list(range(8)))
    assert launch(b, func(b, "fallback_main"), s, input=x, output=y) == 0
    assert b.synchronize_stream(s) == 0
    assert i32(b, y, 8) == [i + 10 for i in range(8)]
    assert b.live_counts().extra["internal_allocations"] == 0  # arg copy released


def test_launch_argument_checks(b):
    s = ok(b.create_stream())
    fn = func(b, "fill")
    args = fn.spec.pack(out=0, n=1, value=0)
    assert b.launch_kernel_with_host_args(None, 1, s, None, args, 16) == Err.INVALID_PARAM
    assert b.launch_kernel_with_host_args(fn, 1, s, None, None, 16) == Err.INVALID_PARAM
    assert b.launch_kernel_with_host_args(object(), 1, s, None, args, 16) == Err.RT_INVALID_HANDLE
    assert b.launch_kernel_with_host_args(fn, 0, s, None, args, 16) == Err.RT_PARAM_INVALID
    assert b.launch_kernel_with_host_args(fn, 1, s, None, args, 0) == Err.RT_PARAM_INVALID


def test_binary_loading(b, tmp_path):
    assert b.binary_load_from_file("relative/path")[0] == Err.RT_PARAM_INVALID
    assert b.binary_load_from_file(str(tmp_path / "missing"))[0] == Err.RT_PARAM_INVALID
    bad = tmp_path / "bad"
    bad.write_text("not a manifest\nfill\n")
    assert b.binary_load_from_file(str(bad))[0] == Err.RT_PARAM_INVALID
    binh = ok(b.binary_load_from_file(b.kernel_binary_path()))
    assert b.binary_get_function(binh, "nope")[0] == Err.RT_PARAM_INVALID
    assert b.binary_get_function(None, "fill")[0] == Err.INVALID_PARAM
    f1 = ok(b.binary_get_function(binh, "fill"))
    assert ok(b.binary_get_function(binh, "fill")) == f1
    assert b.binary_unload(binh) == 0
    assert b.binary_unload(binh) == Err.RT_INVALID_HANDLE
    s = ok(b.create_stream())
    assert launch(b, f1, s, out=0, n=0, value=0) == Err.RT_INVALID_HANDLE


def test_event_fork_join_across_streams(b):
    s1, s2 = ok(b.create_stream()), ok(b.create_stream())
    gate, e1, e2 = (ok(b.create_event_ex_with_flag(SYNC)) for _ in range(3))
    x = ok(b.malloc(32))
    fill = func(b, "fill")
    acc = func(b, "affine")
    ok(b.stream_wait_event(s1, gate))              # hold s1
    ok(launch(b, fill, s1, out=x, n=8, value=3))
    ok(b.record_event(e1, s1))
    ok(b.stream_wait_event(s2, e1))                # s2 waits for s1's fill
    ok(launch(b, acc, s2, x=x, y=x, n=8, a=2, b=1))
    ok(b.record_event(e2, s2))
    ok(b.stream_wait_event(s1, e2))                # s1 waits for s2
    assert b.stream_query(s2) == (0, StreamStatus.NOT_READY)
    ok(b.record_event(gate, None))                 # release everything
    assert b.synchronize_stream(s1) == 0
    assert b.stream_query(s2) == (0, StreamStatus.COMPLETE)
    assert i32(b, x, 8) == [7] * 8


def test_event_reset_and_flag_semantics(b):
    s = ok(b.create_stream())
    e = ok(b.create_event_with_flag(SYNC))
    x = ok(b.malloc(8))
    ok(b.record_event(e, None))
    ok(b.reset_event(e, None))
    ok(b.stream_wait_event(s, e))  # cleared again: blocks
    ok(b.value_write(x, 1, 0, s))
    assert b.synchronize_stream_with_timeout(s, 50) == Err.RT_STREAM_SYNC_TIMEOUT
    ok(b.record_event(e, None))
    assert b.synchronize_stream_with_timeout(s, 50) == 0
    assert b.mem.read_u64(x) == 1


def test_events_without_sync_have_no_wait_task(b):
    s = ok(b.create_stream())
    e = ok(b.create_event_ex_with_flag(int(EventFlag.TIME_LINE)))
    assert b.stream_wait_event(s, e) == Err.RT_FEATURE_NOT_SUPPORT  # api_error.cc:1414-1416
    assert b.reset_event(e, s) == Err.RT_FEATURE_NOT_SUPPORT  # api_error.cc:1760-1762
    assert b.record_event(e, s) == 0
    assert b.create_event_ex_with_flag(0x1000)[0] == Err.RT_PARAM_INVALID


def test_destroyed_handles(b):
    s = ok(b.create_stream())
    e = ok(b.create_event())
    assert b.destroy_event(e) == 0
    assert b.destroy_event(e) == Err.RT_INVALID_HANDLE
    assert b.record_event(e, s) == Err.RT_INVALID_HANDLE
    assert b.destroy_stream(s) == 0
    assert b.destroy_stream(s) == Err.RT_INVALID_HANDLE
    assert b.synchronize_stream(s) == Err.RT_INVALID_HANDLE
    assert b.live_counts().streams == 0 and b.live_counts().events == 0


def test_value_wait_unblocked_by_host_memcpy_from_another_thread(b):
    s = ok(b.create_stream())
    flag, out = ok(b.malloc(8)), ok(b.malloc(8))
    put_i32(b, flag, [0, 0])
    ok(b.value_wait(flag, 5, ValueWaitFlag.GEQ, s))
    ok(b.value_write(out, 42, 0, s))

    def writer():
        b.set_device(0)
        time.sleep(0.05)
        v = np.array([7], dtype="<u8")
        return b.memcpy(flag, 8, v, 8, H2D)

    results = []
    t = threading.Thread(target=lambda: results.append(writer()))
    t.start()
    start = time.monotonic()
    assert b.synchronize_stream(s) == 0  # releases the lock while waiting
    t.join()
    assert results == [0]
    assert time.monotonic() - start >= 0.04
    assert b.mem.read_u64(out) == 42


@pytest.mark.parametrize("cur,val,flag,expect", [
    (5, 5, 0, True), (4, 5, 0, False), (0, 2**64 - 1, 0, True),  # GEQ is (int64)(a - v) >= 0
    (3, 3, 1, True), (3, 4, 1, False),
    (6, 2, 2, True), (4, 2, 2, False),
    (0, 0, 3, True), (2**64 - 1, 0, 3, False),
])
def test_value_conditions(cur, val, flag, expect):
    assert value_condition(cur, val, flag) is expect


def test_value_op_checks(b):
    s = ok(b.create_stream())
    x = ok(b.malloc(16))
    assert b.value_write(None, 1, 0, s) == Err.INVALID_PARAM  # ACL layer, memory.cpp:1445 (RT-17)
    assert b.value_write(x + 4, 1, 0, s) == Err.RT_PARAM_INVALID
    assert b.value_write(x, 1, 1, s) == Err.RT_PARAM_INVALID
    assert b.value_wait(x, 1, 4, s) == Err.RT_PARAM_INVALID
    assert b.value_write(x, 2**64 - 1, 0, None) == 0
    assert b.synchronize_stream(None) == 0
    assert b.mem.read_u64(x) == 2**64 - 1


def test_sync_timeouts(b):
    s = ok(b.create_stream())
    e = ok(b.create_event_ex_with_flag(SYNC))
    assert b.synchronize_stream_with_timeout(s, 0) == 0  # TMO-07: one immediate check
    assert b.synchronize_stream_with_timeout(s, -2) == Err.RT_PARAM_INVALID
    assert b.synchronize_stream_with_timeout(s, -1) == 0
    ok(b.stream_wait_event(s, e))
    t0 = time.monotonic()
    assert b.synchronize_stream_with_timeout(s, 0) == Err.RT_STREAM_SYNC_TIMEOUT  # at once
    assert time.monotonic() - t0 < 0.05
    t0 = time.monotonic()
    assert b.synchronize_stream_with_timeout(s, 80) == Err.RT_STREAM_SYNC_TIMEOUT
    assert 0.07 <= time.monotonic() - t0 < 1.0
    # the work stays queued and completes once unblocked, from another thread
    threading.Timer(0.03, lambda: (b.set_device(0), b.record_event(e, None))).start()
    assert b.synchronize_stream_with_timeout(s, 2000) == 0


def test_sync_noop_streams(b):
    for flag in (StreamFlag.PERSISTENT, StreamFlag.DEVICE_USE_ONLY, StreamFlag.CPU_SCHEDULE):
        s = ok(b.create_stream_with_config(0, int(flag)))
        e = ok(b.create_event_ex_with_flag(SYNC))
        ok(b.stream_wait_event(s, e))
        assert b.synchronize_stream(s) == 0
        assert b.synchronize_stream_with_timeout(s, 10) == 0
        ok(b.record_event(e, None))


def test_closed_backend_raises():
    from mdlri_conformance.backends.sim import create
    from mdlri_conformance.backends.sim.guard import BackendClosed
    be = create()
    be.close()
    with pytest.raises(BackendClosed):
        be.create_stream()
