"""Simulator unit tests: device memory, host memory, copies (backends/sim/memory.py)."""

from __future__ import annotations

import numpy as np
import pytest

from mdlri_conformance.backends.contract import UNWRITTEN, Err, MemcpyKind
from mdlri_conformance.backends.sim import create
from mdlri_conformance.backends.sim.memory import DEFAULT_FILL, DeviceAccessError, DeviceMemorySpace

H2D, D2H, D2D = MemcpyKind.HOST_TO_DEVICE, MemcpyKind.DEVICE_TO_HOST, MemcpyKind.DEVICE_TO_DEVICE


@pytest.fixture
def b():
    backend = create(destroy_wait_s=0.2)
    yield backend
    backend.close()


def test_space_alignment_guard_and_garbage():
    mem = DeviceMemorySpace()
    a = mem.alloc(3)
    c = mem.alloc(100)
    assert a % 64 == 0 and c % 64 == 0
    assert c >= a + 3 + 64  # guard gap
    assert (mem.read(a, 3) == DEFAULT_FILL).all()  # not zeroed
    with pytest.raises(DeviceAccessError, match="outside"):
        mem.read(a + 3, 1)  # in the guard gap
    with pytest.raises(DeviceAccessError):
        mem.write(a, np.zeros(4, np.uint8))  # runs past the end
    mem.write_u64(c + 8, 0x1122334455667788)
    assert mem.read(c + 8, 8).tolist() == [0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11]
    assert mem.read_u64(c + 8) == 0x1122334455667788
    assert mem.free(a) and not mem.free(a)
    with pytest.raises(DeviceAccessError):
        mem.read(a, 1)  # use after free faults; addresses are never reused
    assert mem.alloc(3) != a


def test_malloc_free_errors(b):
    assert b.malloc(0) == (Err.INVALID_PARAM, UNWRITTEN)  # RT-07: the ACL layer's size check
    assert b.malloc_host(0) == (Err.INVALID_PARAM, UNWRITTEN)
    rc, one = b.malloc(1)
    assert rc == 0 and b.free(one) == 0
    rc, a = b.malloc(10)
    assert rc == 0 and a % 64 == 0
    assert b.free(None) == Err.INVALID_PARAM  # ACL layer, memory.cpp:570 (RT-16)
    assert b.free(a + 1) == Err.RT_PARAM_INVALID
    assert b.free(a) == 0
    assert b.free(a) == Err.RT_PARAM_INVALID
    assert b.live_counts().allocations == 0


def test_memcpy_round_trip_and_checks(b):
    rc, d = b.malloc(16)
    src = np.arange(4, dtype=np.int32)
    assert b.memcpy(d, 16, src, 16, H2D) == 0
    out = np.zeros(4, np.int32)
    assert b.memcpy(out, 16, d, 16, D2H) == 0
    assert out.tolist() == [0, 1, 2, 3]
    assert b.memcpy(d, 8, src, 16, H2D) == Err.RT_PARAM_INVALID  # count > destMax
    assert b.memcpy(d + 8, 16, src, 16, H2D) == Err.RT_PARAM_INVALID  # past the allocation
    assert b.memcpy(None, 16, src, 16, H2D) == Err.INVALID_PARAM
    rc, d2 = b.malloc(16)
    assert b.memcpy(d2, 16, d, 16, D2D) == 0
    assert b.mem.read(d2, 16).view(np.int32).tolist() == [0, 1, 2, 3]


def test_memset_sync_and_async(b):
    rc, d = b.malloc(8)
    assert b.memset(d, 8, 0x11, 4) == 0
    assert b.memset(d, 2, 0x11, 4) == Err.RT_PARAM_INVALID
    rc, s = b.create_stream()
    assert b.memset_async(d + 4, 4, 0x22, 4, s) == 0
    assert b.synchronize_stream(s) == 0
    assert b.mem.read(d, 8).tolist() == [0x11] * 4 + [0x22] * 4


def test_pinned_host_registry(b):
    rc, h = b.malloc_host(64)
    assert rc == 0 and h.dtype == np.uint8 and h.size == 64
    assert b.pinned.is_pinned(h) and b.pinned.is_pinned(h[8:16])
    assert not b.pinned.is_pinned(np.zeros(8, np.uint8))
    assert b.free_host(np.zeros(8, np.uint8)) == Err.RT_PARAM_INVALID
    assert b.free_host(h) == 0
    assert not b.pinned.is_pinned(h)


def test_async_copy_from_pinned_reads_at_execution(b):
    rc, s = b.create_stream()
    rc, d = b.malloc(4)
    rc, h = b.malloc_host(4)
    rc, e = b.create_event_ex_with_flag(1)
    h[:] = 1
    assert b.stream_wait_event(s, e) == 0  # blocks the stream
    assert b.memcpy_async(d, 4, h, 4, H2D, s) == 0
    h[:] = 9  # changed before the copy runs
    assert b.record_event(e, None) == 0
    assert b.synchronize_stream(s) == 0
    assert b.mem.read(d, 4).tolist() == [9] * 4


def test_pageable_async_copy_is_synchronous(b):
    rc, s = b.create_stream()
    rc, d = b.malloc(4)
    host = np.full(4, 3, np.uint8)  # pageable
    assert b.memcpy_async(d, 4, host, 4, H2D, s) == 0
    host[:] = 4  # the copy already happened
    assert b.mem.read(d, 4).tolist() == [3] * 4


def test_device_fault_on_freed_memory_is_a_stream_error(b):
    rc, s = b.create_stream()
    rc, e = b.create_event_ex_with_flag(1)
    rc, d = b.malloc(8)
    assert b.stream_wait_event(s, e) == 0
    assert b.value_write(d, 1, 0, s) == 0
    assert b.free(d) == 0
    assert b.record_event(e, None) == 0
    assert b.synchronize_stream(s) == Err.RT_INTERNAL_ERROR
    assert b.synchronize_stream(s) == 0  # reported once
    assert b.device_faults and "outside" in b.device_faults[0]
