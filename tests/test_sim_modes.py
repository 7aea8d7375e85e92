"""Simulator unit tests: capture modes per thread and wrong-thread CaptureEnd."""

from __future__ import annotations

import numpy as np
import pytest

from mdlri_conformance.backends.contract import UNWRITTEN, CaptureMode, CaptureStatus, Err

from .test_sim_support import b, in_thread, ok, streams  # noqa: F401

G, T, R = CaptureMode.GLOBAL, CaptureMode.THREAD_LOCAL, CaptureMode.RELAXED
BLOCKED = Err.RT_CAPTURE_MODE_NOT_SUPPORT


def _unsafe(b, x):
    """A sync memcpy (an unsafe call) into device buffer ``x``."""
    return b.memcpy(x, 8, np.zeros(8, np.uint8), 8, 1)


def test_exchange_mode_is_per_thread_and_sticky(b):
    assert b.capture_thread_exchange_mode(T) == (0, G)  # MODE-05
    assert b.capture_thread_exchange_mode(R) == (0, T)
    assert in_thread(b, lambda: b.capture_thread_exchange_mode(G)) == (0, G)  # per thread
    assert b.capture_thread_exchange_mode(3) == (Err.RT_PARAM_INVALID, 3)  # MODE-10
    assert b.capture_thread_exchange_mode(None) == (Err.INVALID_PARAM, UNWRITTEN)
    assert b.capture_thread_exchange_mode(G) == (0, R)  # unchanged by the failure


def test_thread_without_context(b):
    assert in_thread(b, lambda: b.capture_thread_exchange_mode(R), set_device=False) == (
        Err.RT_CONTEXT_NULL, R)
    assert in_thread(b, lambda: b.create_stream(), set_device=False) == (
        Err.RT_CONTEXT_NULL, UNWRITTEN)
    assert in_thread(b, lambda: b.get_streams(None, 2), set_device=False) == (
        Err.RT_CONTEXT_NULL, [UNWRITTEN] * 2, UNWRITTEN)
    assert in_thread(b, lambda: b.set_device(1)) == Err.RT_INVALID_DEVICEID


def test_no_capture_nothing_blocked(b):
    x = ok(b.malloc(8))
    assert _unsafe(b, x) == 0


@pytest.mark.parametrize("mode,own,other_global,other_tl", [
    (G, BLOCKED, BLOCKED, 0),      # MODE-02, MODE-08
    (T, BLOCKED, 0, 0),            # MODE-03
    (R, 0, 0, 0),                  # MODE-04
])
def test_blocking_per_mode(b, mode, own, other_global, other_tl):
    s = ok(b.create_stream())
    x = ok(b.malloc(8))
    ok(b.capture_begin(s, mode))
    assert _unsafe(b, x) == own
    assert b.memset(x, 8, 0, 8) == own
    assert in_thread(b, lambda: _unsafe(b, x)) == other_global

    def other_thread_local():
        b.capture_thread_exchange_mode(T)
        return _unsafe(b, x)

    assert in_thread(b, other_thread_local) == other_tl
    m = ok(b.capture_end(s))  # MODE-12: a blocked call does not invalidate
    ok(b.destroy(m))


def test_relaxed_exchange_unblocks_own_thread_thread_local_does_not(b):
    s = ok(b.create_stream())
    x = ok(b.malloc(8))
    ok(b.capture_begin(s, G))
    b.capture_thread_exchange_mode(T)
    assert _unsafe(b, x) == BLOCKED  # MODE-07
    b.capture_thread_exchange_mode(R)
    assert _unsafe(b, x) == 0  # MODE-06
    b.capture_thread_exchange_mode(G)
    ok(b.destroy(ok(b.capture_end(s))))


def test_context_mode_relaxes_as_captures_end(b):
    s1, s2 = ok(b.create_stream()), ok(b.create_stream())
    x = ok(b.malloc(8))
    ok(b.capture_begin(s1, G))
    ok(b.capture_begin(s2, R))
    assert in_thread(b, lambda: _unsafe(b, x)) == BLOCKED
    ok(b.destroy(ok(b.capture_end(s1))))  # MODE-11
    assert in_thread(b, lambda: _unsafe(b, x)) == 0
    assert _unsafe(b, x) == 0
    ok(b.destroy(ok(b.capture_end(s2))))


def test_pageable_async_copy_block_codes(b):
    s, other = ok(b.create_stream()), ok(b.create_stream())
    x = ok(b.malloc(8))
    pageable = np.zeros(8, np.uint8)
    pinned = ok(b.malloc_host(8))
    ok(b.capture_begin(s, G))
    assert b.memcpy_async(x, 8, pageable, 8, 1, other) == Err.RT_CAPTURE_MODE_BLOCK_ASYNC
    assert b.memcpy_async(x, 8, pinned, 8, 1, other) == 0  # pinned: async, not unsafe
    assert b.memcpy_async(x, 8, pageable, 8, 1, s) == Err.RT_PARAM_INVALID  # MODE-14
    ok(b.destroy(ok(b.capture_end(s))))
    assert b.memcpy_async(x, 8, pageable, 8, 1, other) == 0


def test_wrong_thread_end(b):
    s = ok(b.create_stream())
    x = ok(b.malloc(8))
    ok(b.capture_begin(s, G))
    ok(b.value_write(x, 3, 0, s))
    m = ok(b.capture_get_info(s))[1]
    assert in_thread(b, lambda: b.capture_end(s)) == (Err.RT_STREAM_CAPTURE_WRONG_THREAD,
                                                   UNWRITTEN)  # CAP-14
    assert tuple(ok(b.capture_get_info(s))) == (CaptureStatus.NONE, None)
    assert b.capture_end(s) == (Err.RT_STREAM_NOT_CAPTURED, UNWRITTEN)
    assert _unsafe(b, x) == 0  # no capture is open any more
    assert b.live_counts().models == 1  # kept alive
    ok(b.memset(x, 8, 0, 8))
    ok(b.execute_async(m, s))
    ok(b.synchronize_stream(s))
    assert b.mem.read_u64(x) == 3
    ok(b.destroy(m))


def test_relaxed_end_from_other_thread(b):
    s = ok(b.create_stream())
    ok(b.capture_begin(s, R))
    rc, m = in_thread(b, lambda: b.capture_end(s))  # CAP-15
    assert rc == 0 and m is not None
    assert len(streams(b, m)) == 1
    ok(b.destroy(m))
