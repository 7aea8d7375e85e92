"""Simulator unit tests: conditional tasks and sub-models (COND-01..12, LIFE-05, LIST-12)."""

from __future__ import annotations

import numpy as np
import pytest

from mdlri_conformance.backends.contract import (
    UNWRITTEN,
    CaptureStatus,
    CondTaskParams,
    CondTaskType,
    Err,
    MemcpyKind,
)

from .test_sim_support import b, func, i32, launch, ok, streams, tasks  # noqa: F401


@pytest.fixture
def fill(b):
    return func(b, "fill")


def _cond_model(b, fill, ctype, values, flag=0, default=0, body=None):
    """Parent with one cond task; branch i fills x with values[i]. Returns (m, s, x, ptr, subs)."""
    s, sub = ok(b.create_stream()), ok(b.create_stream())
    x = ok(b.malloc(64))
    ok(b.memset(x, 64, 0, 64))
    ok(b.capture_begin(s, 1))
    parent = ok(b.capture_get_info(s))[1]
    h = ok(b.cond_handle_create(parent, default, flag))
    ptr = ok(b.cond_handle_get_cond_ptr(h))
    assert b.mem.read_u64(ptr) == 0  # COND-02
    rc, subs = b.add_cond_task(CondTaskParams(h, ctype, len(values), len(values)), s, 0)
    assert rc == 0 and None not in subs and len(set(subs)) == len(values)  # COND-06
    for i, v in enumerate(values):
        ok(b.capture_to_model_ri_begin(sub, subs[i], 1))
        if body is not None:
            body(sub, x, ptr, v)
        else:
            assert launch(b, fill, sub, out=x, n=1, value=v) == 0
        assert b.capture_end(sub, null_model=(i % 2 == 0)) == \
            (0, UNWRITTEN if i % 2 == 0 else subs[i])  # COND-08
    m = ok(b.capture_end(s))
    return m, s, x, ptr, subs


def _run(b, m, s, ptr, cond):
    ok(b.memcpy(ptr, 8, np.array([cond], dtype=np.uint64), 8, MemcpyKind.HOST_TO_DEVICE))
    ok(b.execute_async(m, s))
    ok(b.synchronize_stream(s))


def test_if_switch_branches(b, fill):
    m, s, x, ptr, _ = _cond_model(b, fill, CondTaskType.IF, (11, 22))
    _run(b, m, s, ptr, 1)
    assert i32(b, x, 1) == [11]
    _run(b, m, s, ptr, 0)
    assert i32(b, x, 1) == [22]
    ok(b.destroy(m))
    m, s, x, ptr, _ = _cond_model(b, fill, CondTaskType.IF, (11,))
    _run(b, m, s, ptr, 0)
    assert i32(b, x, 1) == [0]  # IF size 1, cond 0: nothing
    m2, s2, x2, ptr2, _ = _cond_model(b, fill, CondTaskType.SWITCH, (5, 6, 7))
    for i in range(3):
        _run(b, m2, s2, ptr2, i)
        assert i32(b, x2, 1) == [5 + i]
    ok(b.memset(x2, 4, 0, 4))
    _run(b, m2, s2, ptr2, 3)  # out of range: nothing
    assert i32(b, x2, 1) == [0]


def test_while_and_assign_default(b, fill):
    acc = func(b, "accumulate")

    def body(sub, x, ptr, v):  # x[0] += x[1]; cond -= 1 via value writes of a counter copy
        assert b.launch_kernel_with_host_args(acc, 1, sub, None,
                                              acc.spec.pack(acc=x, x=x + 4, n=1),
                                              acc.spec.args_size) == 0
        ok(b.memcpy_async(ptr, 8, x + 8, 8, MemcpyKind.DEVICE_TO_DEVICE, sub))

    m, s, x, ptr, _ = _cond_model(b, fill, CondTaskType.WHILE, (0,), body=body)
    ok(b.memcpy(x + 4, 4, np.array([3], dtype=np.int32), 4, MemcpyKind.HOST_TO_DEVICE))
    _run(b, m, s, ptr, 1)  # body once, then the copy writes 0 (x+8 is 0)
    assert i32(b, x, 1) == [3]
    ok(b.destroy(m))
    # ASSIGN_DEFAULT: the value is reset at ExecuteAsync (COND-03, COND-12)
    m, s, x, ptr, _ = _cond_model(b, fill, CondTaskType.IF, (11, 22), flag=1, default=0)
    _run(b, m, s, ptr, 1)
    assert i32(b, x, 1) == [22]
    ok(b.destroy(m))
    m, s, x, ptr, _ = _cond_model(b, fill, CondTaskType.IF, (11, 22), flag=1, default=4)
    _run(b, m, s, ptr, 0)
    assert i32(b, x, 1) == [11]


def test_cond_errors(b, fill):
    s, sub = ok(b.create_stream()), ok(b.create_stream())
    assert b.cond_handle_create(None, 0, 0) == (Err.INVALID_PARAM, UNWRITTEN)
    bm = ok(b.build_begin(0))
    assert b.cond_handle_create(bm, 0, 0) == (Err.RT_FEATURE_NOT_SUPPORT, UNWRITTEN)  # COND-01
    ok(b.capture_begin(s, 0))
    parent = ok(b.capture_get_info(s))[1]
    assert b.cond_handle_create(parent, 0, 2) == (Err.RT_PARAM_INVALID, UNWRITTEN)
    assert b.cond_handle_create(parent, 0, 0, null_handle=True)[0] == Err.INVALID_PARAM
    h = ok(b.cond_handle_create(parent, 0, 0))
    assert b.cond_handle_get_cond_ptr(None)[0] == Err.INVALID_PARAM  # COND-04
    assert b.cond_handle_get_cond_ptr(h, null_out=True)[0] == Err.INVALID_PARAM
    P = CondTaskParams
    assert b.add_cond_task(P(h, 0, 1, 1), None, 0) == (Err.INVALID_PARAM, [UNWRITTEN])
    assert b.add_cond_task(P(None, 0, 1, 1), s, 0) == (Err.RT_PARAM_INVALID, [None])
    assert b.add_cond_task(P(h, 0, 1, None), s, 0) == (Err.RT_PARAM_INVALID, None)
    assert b.add_cond_task(P(h, 0, 1, 1), s, 1)[0] == Err.RT_PARAM_INVALID
    assert b.add_cond_task(P(h, 3, 1, 1), s, 0)[0] == Err.RT_PARAM_INVALID
    assert b.add_cond_task(P(h, 0, 3, 3), s, 0) == (Err.RT_PARAM_INVALID, [None] * 3)
    assert b.add_cond_task(P(h, 1, 2, 2), s, 0)[0] == Err.RT_PARAM_INVALID
    assert b.add_cond_task(P(h, 2, 0, 1), s, 0)[0] == Err.RT_PARAM_INVALID
    assert b.add_cond_task(P(h, 0, 1, 1), sub, 0)[0] == Err.RT_STREAM_NOT_CAPTURED
    rc, (sm,) = b.add_cond_task(P(h, 0, 1, 1), s, 0)
    assert rc == 0
    assert b.add_cond_task(P(h, 0, 1, 1), s, 0)[0] == Err.RT_PARAM_INVALID  # once
    assert b.capture_to_model_ri_begin(sub, parent, 0) == Err.RT_PARAM_INVALID  # COND-07
    assert b.capture_to_model_ri_begin(None, sm, 0) == Err.INVALID_PARAM
    assert b.capture_to_model_ri_begin(s, sm, 0) == Err.RT_STREAM_CAPTURED
    ok(b.capture_to_model_ri_begin(sub, sm, 0))
    assert b.capture_get_info(sub) == (0, CaptureStatus.ACTIVE, sm)
    # COND-10 / LIST-12 / LIFE-05 / EXE-08
    assert b.get_streams(sm, None)[0] == Err.RT_FEATURE_NOT_SUPPORT
    assert b.destroy(sm) == Err.RT_FEATURE_NOT_SUPPORT
    assert b.execute_async(sm, None) == Err.RT_FEATURE_NOT_SUPPORT
    assert b.update(sm) == Err.RT_FEATURE_NOT_SUPPORT
    assert b.abort(sm) == Err.RT_FEATURE_NOT_SUPPORT
    assert b.destroy_register_callback(sm, print, None) == Err.RT_FEATURE_NOT_SUPPORT
    x = ok(b.malloc(64))
    assert launch(b, fill, sub, out=x, n=1, value=1) == 0
    assert b.capture_end(s) == (Err.RT_SUB_ACLGRAPH_IS_CAPTURING, None)  # COND-09
    assert b.capture_get_info(sub)[1] == CaptureStatus.NONE
    assert b.live_counts().models == 1  # the built model only
    assert b.cond_handle_create(parent, 0, 0)[0] == Err.RT_INVALID_HANDLE
    ok(b.destroy(bm))


def test_sub_model_recapture_and_ended_parent(b, fill):
    s, sub = ok(b.create_stream()), ok(b.create_stream())
    ok(b.capture_begin(s, 0))
    parent = ok(b.capture_get_info(s))[1]
    h = ok(b.cond_handle_create(parent, 0, 0))
    _, (sm,) = b.add_cond_task(CondTaskParams(h, 0, 1, 1), s, 0)
    ok(b.capture_to_model_ri_begin(sub, sm, 0))
    ok(b.capture_end(sub, null_model=True))
    assert b.capture_to_model_ri_begin(sub, sm, 0) == Err.RT_MODEL_CAPTURED
    m = ok(b.capture_end(s))
    assert b.cond_handle_create(m, 0, 0) == (Err.RT_PARAM_INVALID, UNWRITTEN)  # not capturing
    ok(b.destroy(m))
    assert b.live_counts().extra["internal_allocations"] == 0


def test_device_error_in_branch_fails_the_execution(b, fill):
    bad = 0x10  # outside every allocation

    def body(sub, x, ptr, v):
        assert launch(b, fill, sub, out=bad if v == 1 else x, n=1, value=v) == 0

    m, s, x, ptr, _ = _cond_model(b, fill, CondTaskType.IF, (1, 2), body=body)
    ok(b.memcpy(ptr, 8, np.array([1], dtype=np.uint64), 8, MemcpyKind.HOST_TO_DEVICE))
    ok(b.execute_async(m, s))
    assert b.synchronize_stream(s) == Err.RT_MODEL_EXECUTE
    _run(b, m, s, ptr, 0)  # the other branch still works
    assert i32(b, x, 1) == [2]
    ok(b.destroy(m))


def test_while_limit_is_a_device_error(b, fill):
    m, s, x, ptr, _ = _cond_model(b, fill, CondTaskType.WHILE, (3,))
    import mdlri_conformance.backends.sim.cond as cond
    old, cond.WHILE_LIMIT = cond.WHILE_LIMIT, 50
    try:
        ok(b.memcpy(ptr, 8, np.array([1], dtype=np.uint64), 8, MemcpyKind.HOST_TO_DEVICE))
        ok(b.execute_async(m, s))
        assert b.synchronize_stream(s) == Err.RT_MODEL_EXECUTE
    finally:
        cond.WHILE_LIMIT = old
    assert i32(b, x, 1) == [3]
    ok(b.destroy(m))


def test_nested_cond_in_a_sub_model(b, fill):
    s, sub, sub2 = (ok(b.create_stream()) for _ in range(3))
    x = ok(b.malloc(64))
    ok(b.memset(x, 64, 0, 64))
    ok(b.capture_begin(s, 0))
    parent = ok(b.capture_get_info(s))[1]
    h = ok(b.cond_handle_create(parent, 1, 1))  # ASSIGN_DEFAULT 1: outer IF always true
    _, (outer,) = b.add_cond_task(CondTaskParams(h, CondTaskType.IF, 1, 1), s, 0)
    ok(b.capture_to_model_ri_begin(sub, outer, 0))
    h2 = ok(b.cond_handle_create(outer, 2, 1))  # inner SWITCH on 2
    _, inner = b.add_cond_task(CondTaskParams(h2, CondTaskType.SWITCH, 3, 3), sub, 0)
    for i, sm in enumerate(inner):
        ok(b.capture_to_model_ri_begin(sub2, sm, 0))
        assert launch(b, fill, sub2, out=x, n=1, value=100 + i) == 0
        ok(b.capture_end(sub2, null_model=True))
    assert b.capture_end(s) == (Err.RT_SUB_ACLGRAPH_IS_CAPTURING, None)  # sub still open
    assert b.live_counts().extra["internal_allocations"] == 0  # all freed with the parent
    ok(b.capture_begin(s, 0))
    parent = ok(b.capture_get_info(s))[1]
    h = ok(b.cond_handle_create(parent, 1, 1))
    _, (outer,) = b.add_cond_task(CondTaskParams(h, CondTaskType.IF, 1, 1), s, 0)
    ok(b.capture_to_model_ri_begin(sub, outer, 0))
    h2 = ok(b.cond_handle_create(outer, 2, 1))
    _, inner = b.add_cond_task(CondTaskParams(h2, CondTaskType.SWITCH, 3, 3), sub, 0)
    for i, sm in enumerate(inner):
        ok(b.capture_to_model_ri_begin(sub2, sm, 0))
        assert launch(b, fill, sub2, out=x, n=1, value=100 + i) == 0
        ok(b.capture_end(sub2, null_model=True))
    ok(b.capture_end(sub, null_model=True))
    m = ok(b.capture_end(s))
    ok(b.execute_async(m, s))
    ok(b.synchronize_stream(s))
    assert i32(b, x, 1) == [102]
    ok(b.destroy(m))
