"""The virtual Ascend device through its own interface: SQEs laid out from the runtime's 910B
facts (``backends/hal/sqe.py``), submitted with ``halSqTaskSend``, executed by the TS core,
completed with the CQE the runtime reads (``halCqReportRecv``), blocked across SQs and timed
out with the TS's error status (``backends/hal/README.md``).

No assertion on durations: a blocked wait is shown by state (the SQ's head has not moved, the
task after it has not run) while another SQ makes progress; every receive has a generous
deadline.
"""

from __future__ import annotations

import ctypes
import shutil
import struct
from pathlib import Path
from typing import Callable

import pytest

from mdlri_conformance.backends.hal import cond_isa, sqe
from mdlri_conformance.backends.hal.build import host_kernel_library
from mdlri_conformance.backends.hal.device import (
    DRV_ERROR_BUSY, DRV_ERROR_INVALID_VALUE, DRV_ERROR_NO_RESOURCES, DRV_ERROR_NONE,
    DRV_ERROR_WAIT_TIMEOUT, DRV_EVENT_ID, DRV_NOTIFY_ID, DRV_RESOURCE_EVENT_ID,
    DRV_RESOURCE_SQ_ID, PROP_CQE_SIZE, PROP_SQ_DEPTH, PROP_SQ_HEAD, PROP_SQ_STATUS, PROP_SQ_TAIL,
    PROP_SQE_SIZE, HalDevice, Queue)
from tests.hal_helpers import device, dev, i32, dev_i32, address, wait_head, only  # noqa: F401 (device, dev: fixtures)

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None,
                                reason="gcc is not installed: the virtual device cannot be built")

LONG_MS = 10000  # a generous deadline: only reached when something is wrong


@pytest.fixture(scope="module")
def kernels() -> Path:
    return host_kernel_library()


# ---- SQ/CQ plumbing ----

def test_queue_properties_and_positions(dev: HalDevice) -> None:
    q = dev.alloc(stream_id=7, depth=16)
    assert dev.query(q.sq, PROP_SQE_SIZE) == 64
    assert dev.query(q.sq, PROP_CQE_SIZE) == 32
    assert dev.submit(q.sq, sqe.nop(7, 1), sqe.nop(7, 2)) == 0
    assert dev.submit(q.sq, sqe.nop(7, 3)) == 2, "halTaskSendInfo.pos: the first SQE's slot"
    assert wait_head(dev, q.sq, 3) == 3
    assert dev.query(q.sq, PROP_SQ_TAIL) == 3


def test_recv_on_an_empty_cq(dev: HalDevice) -> None:
    q = dev.alloc(stream_id=1)
    assert dev.recv(q.cq, timeout_ms=0) == (DRV_ERROR_NONE, [])
    assert dev.recv(q.cq, timeout_ms=20) == (DRV_ERROR_WAIT_TIMEOUT, [])


def test_a_full_sq_refuses_at_once(dev: HalDevice) -> None:
    q, other = dev.alloc(stream_id=1, depth=4), dev.alloc(stream_id=2)
    dev.submit(q.sq, sqe.event_wait(1, 1, event_id=3))  # holds the SQ
    dev.submit(q.sq, *[sqe.nop(1, t) for t in (2, 3, 4)])
    rc, _ = dev.send(q.sq, [sqe.nop(1, 5)])
    assert rc == DRV_ERROR_BUSY, "the runtime retries a refused send (task_submit.cc:608)"
    dev.submit(other.sq, sqe.event_record(2, 1, event_id=3))
    assert only(dev.collect(q.cq, 1)).task_id == 1  # the wait passed: one slot is free
    assert dev.send(q.sq, [sqe.nop(1, 5, wr_cqe=1)])[0] == DRV_ERROR_NONE
    assert only(dev.collect(q.cq, 1)).task_id == 5
    assert dev.query(q.sq, PROP_SQ_HEAD) == 1, "five SQEs through a ring of four"


# ---- id resources ----

def test_event_ids_are_handed_out_and_taken_back(dev: HalDevice) -> None:
    assert [dev.alloc_id(DRV_EVENT_ID) for _ in range(2)] == [(DRV_ERROR_NONE, 0),
                                                              (DRV_ERROR_NONE, 1)]
    assert dev.alloc_id(DRV_EVENT_ID, want=40) == (DRV_ERROR_NONE, 40)
    assert dev.alloc_id(DRV_EVENT_ID, want=40)[0] == DRV_ERROR_NO_RESOURCES
    capacity, used = dev.resource_info(DRV_RESOURCE_EVENT_ID)
    assert used == 3 and capacity >= 1024
    assert dev.free_id(DRV_EVENT_ID, 1) == DRV_ERROR_NONE
    assert dev.free_id(DRV_EVENT_ID, 1) == DRV_ERROR_INVALID_VALUE
    assert dev.alloc_id(DRV_EVENT_ID) == (DRV_ERROR_NONE, 1), "the lowest free id"
    dev.alloc(stream_id=1)
    assert dev.resource_info(DRV_RESOURCE_SQ_ID)[1] == 1


def test_a_fresh_event_or_notify_id_starts_unset(dev: HalDevice) -> None:
    q = dev.alloc(stream_id=1)
    event = dev.alloc_id(DRV_EVENT_ID)[1]
    notify = dev.alloc_id(DRV_NOTIFY_ID)[1]
    dev.submit(q.sq, sqe.event_record(1, 1, event), sqe.notify_record(1, 2, notify))
    dev.collect(q.cq, 2)
    assert (dev.event_state(event), dev.notify_state(notify)) == (1, 1)
    for kind, got in ((DRV_EVENT_ID, event), (DRV_NOTIFY_ID, notify)):
        assert dev.free_id(kind, got) == DRV_ERROR_NONE
        assert dev.alloc_id(kind) == (DRV_ERROR_NONE, got)
    assert (dev.event_state(event), dev.notify_state(notify)) == (0, 0)


def test_the_sq_registers_show_head_tail_and_enable(dev: HalDevice) -> None:
    q = dev.alloc(stream_id=1, depth=16)
    base, size = dev.reg_base(q.sq)
    regs = (ctypes.c_uint32 * (size // 4)).from_address(base)
    dev.submit(q.sq, sqe.nop(1, 1), sqe.nop(1, 2), sqe.event_wait(1, 3, event_id=8, timeout_s=1))
    assert only(dev.collect(q.cq, 1)).error_type == sqe.ERR_TASK_TIMEOUT
    # stopped with its head on the failed wait (position 2)
    assert (regs[0x8 // 4], regs[0xC // 4], regs[0x10 // 4], regs[0x14 // 4]) == (3, 0, 2, 0)
    assert dev.config(q.sq, PROP_SQ_STATUS, 1) == DRV_ERROR_NONE
    assert regs[0x14 // 4] == 1


# ---- NOP ----

def test_nop_completes_with_the_ts_report(dev: HalDevice) -> None:
    q = dev.alloc(stream_id=5)
    dev.submit(q.sq, sqe.nop(5, 41, wr_cqe=1))
    c = only(dev.collect(q.cq, 1))
    assert (c.stream_id, c.task_id, c.sqe_type, c.sq_id, c.sq_head) == (5, 41, sqe.PLACE_HOLDER,
                                                                         q.sq, 1)
    assert (c.error_type, c.error_code, c.ts_error()) == (0, 0, 0)


def test_nop_without_wr_cqe_reports_nothing(dev: HalDevice) -> None:
    q = dev.alloc(stream_id=5)
    dev.submit(q.sq, sqe.nop(5, 1), sqe.nop(5, 2, wr_cqe=1))
    c = only(dev.collect(q.cq, 1))
    assert c.task_id == 2, "the first NOP (wr_cqe 0, as the runtime sends it) writes no CQE"


# ---- memcpy, memset, value write ----

@pytest.mark.parametrize("layout", [sqe.memcpy, sqe.memcpy_placeholder])
def test_memcpy_moves_the_bytes(dev: HalDevice,
                                layout: Callable[[int, int, int, int, int], bytes]) -> None:
    q = dev.alloc(stream_id=3)
    src, dst = i32([1, 2, 3, 4, 5]), i32([0] * 5)
    dev.submit(q.sq, layout(3, 9, address(src), address(dst), 16))
    c = only(dev.collect(q.cq, 1))
    assert list(dst) == [1, 2, 3, 4, 0]
    assert (c.task_id, c.error_type) == (9, 0)


def test_memset_as_the_runtime_sends_it(dev: HalDevice) -> None:
    q = dev.alloc(stream_id=3)
    host_block = (ctypes.c_uint8 * 8)(*([0xAB] * 8))
    dst = (ctypes.c_uint8 * 32)(*([0] * 32))
    sqes = sqe.memset(3, 1, address(dst), address(host_block), count=20, block=8)
    dev.submit(q.sq, *sqes)
    dev.collect(q.cq, len(sqes))
    assert list(dst) == [0xAB] * 20 + [0] * 12


@pytest.mark.parametrize("size", [4, 8])
def test_value_write_writes_exactly_its_size(dev: HalDevice, size: int) -> None:
    q = dev.alloc(stream_id=2)
    mem = (ctypes.c_uint8 * 16)(*([0x11] * 16))
    value = bytes(range(0xA0, 0xA0 + size))
    dev.submit(q.sq, sqe.write_value(2, 4, address(mem) + 4, value))
    only(dev.collect(q.cq, 1))
    assert bytes(mem) == b"\x11" * 4 + value + b"\x11" * (12 - size)


# ---- events ----

def test_event_wait_blocks_until_another_sq_records(dev: HalDevice) -> None:
    a, b = dev.alloc(stream_id=1), dev.alloc(stream_id=2)
    src, marker = i32([77]), i32([0])
    dev.submit(a.sq, sqe.nop(1, 0, wr_cqe=1), sqe.event_wait(1, 1, event_id=12),
               sqe.memcpy(1, 2, address(src), address(marker), 4))
    assert only(dev.collect(a.cq, 1)).task_id == 0  # A has reached its wait
    dev.submit(b.sq, sqe.nop(2, 1, wr_cqe=1))
    only(dev.collect(b.cq, 1))  # the device runs B while A waits
    assert dev.recv(a.cq, timeout_ms=200) == (DRV_ERROR_WAIT_TIMEOUT, []), "A's wait passed"
    assert dev.query(a.sq, PROP_SQ_HEAD) == 1, "A's head stays on its wait"
    assert marker[0] == 0, "the copy after the wait has not run"
    dev.submit(b.sq, sqe.event_record(2, 2, event_id=12))
    rec = only(dev.collect(b.cq, 1))
    assert (rec.sqe_type, rec.task_id, rec.error_type) == (sqe.EVENT_RECORD, 2, 0)
    assert rec.timestamp != 0, "an event record reports its timestamp (event_task.cc:94-103)"
    done = dev.collect(a.cq, 2)
    assert [(c.task_id, c.sqe_type, c.error_type) for c in done] == [
        (1, sqe.EVENT_WAIT, 0), (2, sqe.SDMA, 0)]
    assert marker[0] == 77


def test_event_stays_set_until_reset(dev: HalDevice) -> None:
    q = dev.alloc(stream_id=4)
    dev.submit(q.sq, sqe.event_record(4, 1, event_id=30), sqe.event_wait(4, 2, event_id=30),
               sqe.event_wait(4, 3, event_id=30))
    assert [c.error_type for c in dev.collect(q.cq, 3)] == [0, 0, 0]
    assert dev.event_state(30) == 1, "a passed wait leaves the event set"
    dev.submit(q.sq, sqe.event_reset(4, 4, event_id=30))
    only(dev.collect(q.cq, 1))
    assert dev.event_state(30) == 0


def test_event_wait_times_out_with_the_ts_status(dev: HalDevice) -> None:
    q = dev.alloc(stream_id=6)
    src, marker = i32([5]), i32([0])
    dev.submit(q.sq, sqe.event_wait(6, 1, event_id=99, timeout_s=1),
               sqe.memcpy(6, 2, address(src), address(marker), 4))
    c = only(dev.collect(q.cq, 1))
    assert (c.task_id, c.sqe_type) == (1, sqe.EVENT_WAIT)
    assert c.error_type == sqe.ERR_TASK_TIMEOUT
    assert c.error_code == sqe.TS_ERROR_TASK_TIMEOUT == c.ts_error()
    assert (c.sq_head, dev.query(q.sq, PROP_SQ_HEAD)) == (0, 0), "the head on the failed SQE"
    assert dev.query(q.sq, PROP_SQ_STATUS) == 0, "STARS stops the SQ on an error"
    assert dev.recv(q.cq, timeout_ms=50)[1] == [] and marker[0] == 0
    # the runtime's StarsResumeRtsq: the head past the failed SQE, then the SQ enabled
    assert dev.config(q.sq, PROP_SQ_HEAD, c.sq_head + 1) == DRV_ERROR_NONE
    assert dev.config(q.sq, PROP_SQ_STATUS, 1) == DRV_ERROR_NONE
    assert only(dev.collect(q.cq, 1)).task_id == 2
    assert marker[0] == 5


def test_a_stopped_sq_resumes_at_the_head_the_runtime_sets(dev: HalDevice) -> None:
    q = dev.alloc(stream_id=6)
    src, marker = i32([8]), i32([0])
    dev.submit(q.sq, sqe.event_wait(6, 1, event_id=5, timeout_s=1),
               sqe.memcpy(6, 2, address(src), address(marker), 4), sqe.nop(6, 3, wr_cqe=1))
    assert only(dev.collect(q.cq, 1)).error_type == sqe.ERR_TASK_TIMEOUT
    assert dev.config(q.sq, PROP_SQ_HEAD, 2) == DRV_ERROR_NONE  # skip the copy
    assert dev.config(q.sq, PROP_SQ_STATUS, 1) == DRV_ERROR_NONE
    assert only(dev.collect(q.cq, 1)).task_id == 3
    assert marker[0] == 0


# ---- notifies ----

def test_notify_wait_blocks_then_consumes_the_record(dev: HalDevice) -> None:
    a, b = dev.alloc(stream_id=1), dev.alloc(stream_id=2)
    dev.submit(a.sq, sqe.nop(1, 0, wr_cqe=1), sqe.notify_wait(1, 1, notify_id=700))
    assert only(dev.collect(a.cq, 1)).task_id == 0  # A has reached its wait
    dev.submit(b.sq, sqe.nop(2, 1, wr_cqe=1))
    only(dev.collect(b.cq, 1))
    assert dev.recv(a.cq, timeout_ms=200) == (DRV_ERROR_WAIT_TIMEOUT, []), "A's wait passed"
    assert dev.query(a.sq, PROP_SQ_HEAD) == 1
    dev.submit(b.sq, sqe.notify_record(2, 2, notify_id=700))
    assert only(dev.collect(a.cq, 1)).sqe_type == sqe.NOTIFY_WAIT
    assert dev.notify_state(700) == 0


def test_notify_wait_times_out(dev: HalDevice) -> None:
    q = dev.alloc(stream_id=1)
    dev.submit(q.sq, sqe.notify_wait(1, 1, notify_id=3, timeout_s=1))
    c = only(dev.collect(q.cq, 1))
    assert (c.sqe_type, c.error_type, c.ts_error()) == (sqe.NOTIFY_WAIT, sqe.ERR_TASK_TIMEOUT,
                                                         sqe.TS_ERROR_TASK_TIMEOUT)


# ---- kernels ----

AFFINE_PC = 0x1_0000_1000


def test_kernel_runs_the_bound_host_kernel_per_block(dev: HalDevice, kernels: Path) -> None:
    assert dev.bind_kernel(AFFINE_PC, kernels, "affine") == 0
    q = dev.alloc(stream_id=8)
    n = 10
    x, y = dev_i32(dev, list(range(n))), dev_i32(dev, [0] * n)
    args = dev.put(struct.pack("<QQiii4x", address(x), address(y), n, 3, -2))  # affine's
    dev.submit(q.sq, sqe.kernel(8, 5, AFFINE_PC, args, block_dim=3))
    c = only(dev.collect(q.cq, 1))
    assert (c.task_id, c.sqe_type, c.error_type) == (5, sqe.FFTS, 0)
    assert list(y) == [3 * i - 2 for i in range(n)]


@pytest.mark.parametrize("where", ["output in host memory", "output past its block",
                                   "arguments in host memory"])
def test_a_kernel_touching_memory_outside_the_device_faults(dev: HalDevice, kernels: Path,
                                                            where: str) -> None:
    """The SMMU maps only device memory: a launch whose arguments or spans lie outside it is an
    AI Core exception before the kernel runs, and nothing is written (a stale argument block
    the runtime sends again cannot write over the host process)."""
    assert dev.bind_kernel(AFFINE_PC, kernels, "affine") == 0
    q = dev.alloc(stream_id=8)
    n = 4
    x = dev_i32(dev, [1] * n)
    y = i32([-1] * (2 * n)) if where == "output in host memory" else dev_i32(dev, [-1] * n)
    count = 2 * n if where == "output past its block" else n
    packed = struct.pack("<QQiii4x", address(x), address(y), count, 1, 0)
    host_args = ctypes.create_string_buffer(packed, len(packed))
    args = ctypes.addressof(host_args) if where == "arguments in host memory" else dev.put(packed)
    dev.submit(q.sq, sqe.kernel(8, 5, AFFINE_PC, args))
    c = only(dev.collect(q.cq, 1))
    assert (c.task_id, c.error_type, c.ts_error()) == (5, sqe.ERR_EXCEPTION,
                                                       sqe.TS_ERROR_TASK_EXCEPTION)
    assert set(y) == {-1}, "the kernel wrote"


def test_kernel_binding_errors(dev: HalDevice, kernels: Path) -> None:
    assert dev.bind_kernel(1, kernels, "no_such_kernel") == -2
    assert dev.bind_kernel(1, kernels.parent / "absent.so", "affine") == -1


def test_kernel_with_an_unbound_pc_raises_an_exception(dev: HalDevice) -> None:
    q = dev.alloc(stream_id=8)
    dev.submit(q.sq, sqe.kernel(8, 1, 0xDEAD0000, 0))
    c = only(dev.collect(q.cq, 1))
    assert (c.error_type, c.ts_error()) == (sqe.ERR_EXCEPTION, sqe.TS_ERROR_TASK_EXCEPTION)
    assert dev.query(q.sq, PROP_SQ_STATUS) == 0


WAIT_FLAG_PC, TRAP_IF_PC = 0x2000, 0x3000


def test_a_kernel_waiting_on_memory_runs_once_another_sq_writes_it(dev: HalDevice,
                                                                    kernels: Path) -> None:
    assert dev.bind_kernel(WAIT_FLAG_PC, kernels, "wait_flag") == 0
    a, b = dev.alloc(stream_id=1), dev.alloc(stream_id=2)
    flag, out = dev_i32(dev, [0]), dev_i32(dev, [0])
    args = dev.put(struct.pack("<QQi4x", address(flag), address(out), 9))
    dev.submit(a.sq, sqe.nop(1, 0, wr_cqe=1),
               sqe.kernel(1, 1, WAIT_FLAG_PC, args,
                          credit=sqe.NEVER_TIMEOUT_CREDIT))
    assert only(dev.collect(a.cq, 1)).task_id == 0
    assert dev.recv(a.cq, timeout_ms=200) == (DRV_ERROR_WAIT_TIMEOUT, []), "the kernel ran"
    assert out[0] == 0
    dev.submit(b.sq, sqe.write_value(2, 1, address(flag), struct.pack("<i", 1)))
    c = only(dev.collect(a.cq, 1))
    assert (c.task_id, c.error_type, out[0]) == (1, 0, 9)


def test_a_kernel_past_its_credit_times_out(dev: HalDevice, kernels: Path) -> None:
    """Kernel credit 1: one credit of kernel time (stars_base.hpp:46), then a task timeout."""
    assert dev.bind_kernel(WAIT_FLAG_PC, kernels, "wait_flag") == 0
    q = dev.alloc(stream_id=1)
    flag, out = dev_i32(dev, [0]), dev_i32(dev, [0])
    args = dev.put(struct.pack("<QQi4x", address(flag), address(out), 9))
    dev.submit(q.sq, sqe.kernel(1, 1, WAIT_FLAG_PC, args, credit=1))
    c = only(dev.collect(q.cq, 1, deadline_ms=30000))
    assert (c.sqe_type, c.error_type, c.ts_error()) == (sqe.FFTS, sqe.ERR_TASK_TIMEOUT,
                                                         sqe.TS_ERROR_TASK_TIMEOUT)
    assert out[0] == 0


@pytest.mark.parametrize("raised", [0, 1])
def test_a_kernel_fault_is_an_exception(dev: HalDevice, kernels: Path, raised: int) -> None:
    assert dev.bind_kernel(TRAP_IF_PC, kernels, "trap_if") == 0
    q = dev.alloc(stream_id=1)
    flag = dev_i32(dev, [raised])
    args = dev.put(struct.pack("<Q", address(flag)))
    dev.submit(q.sq, sqe.kernel(1, 1, TRAP_IF_PC, args))
    c = only(dev.collect(q.cq, 1))
    assert c.error_type == (sqe.ERR_EXCEPTION if raised else 0)


def kernel_record(name: str, args_size: int) -> bytes:
    """The virtual kernel binary's record for ``name`` (kbin.c): magic, version 1, argument
    size, flags, name length, name."""
    return b"MDLRIKRN" + struct.pack("<IIII", 1, args_size, 0, len(name)) + name.encode()


def test_freed_kernel_code_names_nothing(dev: HalDevice, kernels: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The runtime copies a kernel binary to device memory and frees that copy when it unloads
    the binary; the next copy may land at the same address with other kernels. A pc inside
    freed memory is forgotten, so each load runs its own kernel, past any count of loads."""
    monkeypatch.setenv("MDLRI_HAL_HOST_KERNELS", str(kernels))
    lib = dev.lib
    q = dev.alloc(stream_id=1)
    flag, out = dev_i32(dev, [1]), dev_i32(dev, [0])
    wait_args = dev.put(struct.pack("<QQi4x", address(flag), address(out), 9))
    trap_args = dev.put(struct.pack("<Q", address(flag)))
    for load in range(300):
        name, args, size = ("trap_if", trap_args, 8) if load % 2 else ("wait_flag", wait_args, 24)
        code = ctypes.c_void_p()
        assert lib.halMemAlloc(ctypes.byref(code), 64, 1 << 10) == 0
        record = kernel_record(name, size)
        ctypes.memmove(code.value, record, len(record))
        dev.submit(q.sq, sqe.kernel(1, load, code.value, args))
        c = only(dev.collect(q.cq, 1))
        assert c.error_type == (sqe.ERR_EXCEPTION if load % 2 else 0), f"load {load}: {name}"
        if c.error_type:  # STARS stops an SQ on its failed SQE; the runtime moves past it
            assert dev.config(q.sq, PROP_SQ_HEAD, c.sq_head + 1) == 0
            assert dev.config(q.sq, PROP_SQ_STATUS, 1) == 0
        assert lib.halMemFree(code) == 0


def test_a_rewritten_record_runs_its_new_kernel(dev: HalDevice, kernels: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory the device never handed out (a pool's chunk) can take another binary's copy
    with no free between: the pc runs the kernel its record names when the SQE runs."""
    monkeypatch.setenv("MDLRI_HAL_HOST_KERNELS", str(kernels))
    q = dev.alloc(stream_id=1)
    flag, out = dev_i32(dev, [1]), dev_i32(dev, [0])
    wait_args = dev.put(struct.pack("<QQi4x", address(flag), address(out), 9))
    trap_args = dev.put(struct.pack("<Q", address(flag)))
    code = ctypes.create_string_buffer(64)
    for task, (name, args, size) in enumerate([("wait_flag", wait_args, 24),
                                               ("trap_if", trap_args, 8)]):
        record = kernel_record(name, size)
        ctypes.memmove(code, record, len(record))
        dev.submit(q.sq, sqe.kernel(1, task, ctypes.addressof(code), args))
        c = only(dev.collect(q.cq, 1))
        assert c.error_type == (sqe.ERR_EXCEPTION if name == "trap_if" else 0), name
    assert out[0] == 9


# ---- value wait: the cond ISA program the runtime builds ----

class ValueWait:
    """A value wait laid out as the runtime lays it out: its program in device memory, the
    profiling words it reads, the scratch word its WRITE_VALUE clears, and its four SQEs."""

    def __init__(self, dev: HalDevice, q: Queue, *, first_pos: int, flag: int, value: int,
                 watched: ctypes.Array, byte_wide: bool = False) -> None:  # type: ignore[type-arg]
        depth = dev.query(q.sq, PROP_SQ_DEPTH)
        regs, _ = dev.reg_base(q.sq)
        self.prof = (ctypes.c_uint64 * 2)(0, 0)  # prof disable status, prof switch
        self.scratch = (ctypes.c_uint64 * 1)(0xFFFF)
        program = cond_isa.mem_wait_program(
            dev_addr=address(watched), value=value, flag=flag, byte_wide=byte_wide,
            sq_id=q.sq, sq_head_pre=(first_pos + 1) % depth,
            sq_head_next=(first_pos + cond_isa.MEM_WAIT_SQE_NUM) % depth,
            last_sqe_pos=(first_pos + cond_isa.MEM_WAIT_SQE_NUM - 1) % depth,
            sq_tail_reg_addr=regs + 0x8, prof_disable_addr=address(self.prof),
            prof_switch_addr=address(self.prof) + 8)
        code = program.pack()
        self.code = ctypes.create_string_buffer(code, len(code))
        self.sqes = cond_isa.value_wait_sqes(
            1, 7, first_pos=first_pos, depth=depth, program_addr=ctypes.addressof(self.code),
            program_words=len(code) // 4, scratch_addr=address(self.scratch))


@pytest.mark.parametrize("flag,value,blocking,passing", [
    (cond_isa.WAIT_GEQ, 5, 4, 7), (cond_isa.WAIT_EQ, 9, 0, 9),
    (cond_isa.WAIT_AND, 0x10, 0x0F, 0x30), (cond_isa.WAIT_NOR, 0x0F, -1, 0x1F)])
def test_value_wait_blocks_until_another_sq_writes_the_value(
        dev: HalDevice, flag: int, value: int, blocking: int, passing: int) -> None:
    """Each wait condition (stars_cond_isa_helper.cc:1234-1283): GEQ *addr >= value, EQ
    *addr == value, AND (*addr & value) != 0, NOR ~(*addr | value) != 0."""
    a, b = dev.alloc(stream_id=1, depth=16), dev.alloc(stream_id=2)
    watched = (ctypes.c_int64 * 1)(blocking)
    src, marker = i32([33]), i32([0])
    dev.submit(a.sq, sqe.nop(1, 0, wr_cqe=1))
    wait = ValueWait(dev, a, first_pos=1, flag=flag, value=value, watched=watched)
    dev.submit(a.sq, *wait.sqes, sqe.memcpy(1, 8, address(src), address(marker), 4))
    assert only(dev.collect(a.cq, 1)).task_id == 0
    assert dev.recv(a.cq, timeout_ms=200) == (DRV_ERROR_WAIT_TIMEOUT, []), "the wait passed"
    assert marker[0] == 0 and wait.scratch[0] == 0, "the WRITE_VALUE ran, the copy did not"
    dev.submit(b.sq, sqe.write_value(2, 1, address(watched), struct.pack("<q", passing)))
    c = only(dev.collect(a.cq, 1))
    assert (c.task_id, c.sqe_type, c.error_type) == (8, sqe.SDMA, 0)
    assert marker[0] == 33
    assert c.sq_head == 1 + cond_isa.MEM_WAIT_SQE_NUM + 1, "the program skipped the placeholder"


def test_an_eight_bit_value_wait_reads_one_byte(dev: HalDevice) -> None:
    a = dev.alloc(stream_id=1, depth=16)
    watched = (ctypes.c_uint8 * 8)(0, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE)
    wait = ValueWait(dev, a, first_pos=0, flag=cond_isa.WAIT_EQ, value=3, watched=watched,
                     byte_wide=True)
    dev.submit(a.sq, *wait.sqes, sqe.nop(1, 9, wr_cqe=1))
    assert dev.recv(a.cq, timeout_ms=200) == (DRV_ERROR_WAIT_TIMEOUT, [])
    watched[0] = 3  # the other bytes would fail a 64-bit compare
    assert only(dev.collect(a.cq, 1)).task_id == 9


def test_the_cond_isa_arithmetic(dev: HalDevice) -> None:
    """Each OP / OP_IMM / LOAD / STORE form the device interprets, stored to memory by the
    program itself (func3/func7 values: stars_base_cond_isa_define.hpp:60-120)."""
    c = cond_isa
    out = (ctypes.c_uint64 * 16)(*([0xAAAA_AAAA_AAAA_AAAA] * 16))
    src = (ctypes.c_uint64 * 1)(0x1234_5678_9ABC_DEF0)
    p = c.Program()
    p.li(c.R4, address(out))
    p.li(c.R1, 100)
    p.li(c.R2, -7 & 0xFFFF_FFFF_FFFF_FFFF)
    forms = [
        lambda: p.op(c.R3, c.R1, c.R2, 0),            # ADD
        lambda: p.op(c.R3, c.R1, c.R2, 0, 0x20),      # SUB
        lambda: p.op(c.R3, c.R1, c.R2, 0, 0x01),      # MUL
        lambda: p.op(c.R3, c.R2, c.R1, 2),            # SLT (signed)
        lambda: p.op(c.R3, c.R2, c.R1, 3),            # SLTU
        lambda: p.op(c.R3, c.R1, c.R2, 4),            # XOR
        lambda: p.op_imm(c.R3, c.R2, 5, 4 | 0x10 << 6),  # SRAI 4
        lambda: p.op_imm(c.R3, c.R2, 5, 60),          # SRLI 60
        lambda: p.op_imm(c.R3, c.R1, 1, 3),           # SLLI 3
        lambda: p.op_imm(c.R3, c.R1, 7, 0x0F),        # ANDI
        lambda: p.op_imm(c.R3, c.R1, 0, -1),          # ADDI -1
        lambda: p.op_imm(c.R0, c.R1, 0, 5),           # r0 stays 0
    ]
    for i, form in enumerate(forms):
        form()
        p.store(c.R4, c.R0 if i == len(forms) - 1 else c.R3, 8 * i, 3)  # SD
    p.li(c.R5, address(src))
    p.load(c.R3, c.R5, 0)
    p.store(c.R4, c.R3, 8 * 12, 2)                    # SW: the low half only
    code = p.pack()
    buf = ctypes.create_string_buffer(code, len(code))
    q = dev.alloc(stream_id=1)
    dev.submit(q.sq, cond_isa.function_call_sqe(1, 1, 0, ctypes.addressof(buf), len(code) // 4))
    assert only(dev.collect(q.cq, 1)).error_type == 0
    m = 0xFFFF_FFFF_FFFF_FFFF
    assert list(out[:13]) == [93, 107, -700 & m, 1, 0, (100 ^ -7) & m, (-7 >> 4) & m,
                              (-7 & m) >> 60, 800, 100 & 0x0F, 99, 0, 0xAAAA_AAAA_9ABC_DEF0]
    assert out[13] == 0xAAAA_AAAA_AAAA_AAAA, "nothing written past the program's stores"


def test_goto_r_moves_the_head_the_register_names(dev: HalDevice) -> None:
    """STREAM GOTO_R takes sq id (bits 10:0) and head (bits 31:16) from rs1
    (stars_cond_isa_helper.cc:1646-1650): on its own SQ the head jumps when the COND SQE
    ends, so the SQEs it jumps over never run and the one it names does."""
    c = cond_isa
    skipped = (ctypes.c_uint32 * 1)(0)
    landed = (ctypes.c_uint32 * 1)(0)
    q = dev.alloc(stream_id=3)
    p = c.Program()
    p.li(c.R3, q.sq | 3 << 16)
    p.goto_r(c.R4, c.R3)
    code = p.pack()
    buf = ctypes.create_string_buffer(code, len(code))
    # one send, so the jump never lands past the tail
    dev.submit(q.sq, cond_isa.function_call_sqe(3, 1, 0, ctypes.addressof(buf), len(code) // 4),
               sqe.write_value(3, 2, address(skipped), (7).to_bytes(4, "little")),
               sqe.write_value(3, 3, address(skipped), (8).to_bytes(4, "little")),
               sqe.write_value(3, 4, address(landed), (9).to_bytes(4, "little")))
    reports = dev.collect(q.cq, 2)
    assert [r.task_id for r in reports] == [1, 4], reports
    assert all(r.error_type == 0 for r in reports), reports
    assert (skipped[0], landed[0]) == (0, 9)


def _run_program(dev: HalDevice, q: Queue, task_id: int,
                 build: Callable[[cond_isa.Program], object]) -> None:
    """Pack the program ``build`` emits, run it as a COND SQE on ``q``, expect success."""
    p = cond_isa.Program()
    build(p)
    code = p.pack()
    buf = ctypes.create_string_buffer(code, len(code))
    dev.submit(q.sq, cond_isa.function_call_sqe(q.sq, task_id, 0, ctypes.addressof(buf),
                                                len(code) // 4))
    assert only(dev.collect(q.cq, 1)).error_type == 0


def test_deactive_r_holds_an_sq_until_active_r(dev: HalDevice) -> None:
    """DEACTIVE_R (rs1 = sq id) disables another SQ: what is queued there waits, its enable
    register reads 0; ACTIVE_R enables it again and the queued SQE runs
    (stars_cond_isa_construct_common.cc:152-169)."""
    c = cond_isa
    ctl, held = dev.alloc(stream_id=4), dev.alloc(stream_id=5)
    _run_program(dev, ctl, 1, lambda p: (p.li(c.R3, held.sq), p.active_r(c.R5, c.R3, on=False)))
    assert dev.query(held.sq, PROP_SQ_STATUS) == 0
    marker = (ctypes.c_uint32 * 1)(0)
    dev.submit(held.sq, sqe.write_value(5, 1, address(marker), (6).to_bytes(4, "little")))
    assert dev.recv(held.cq, timeout_ms=50)[1] == [] and marker[0] == 0
    _run_program(dev, ctl, 2, lambda p: (p.li(c.R3, held.sq), p.active_r(c.R5, c.R3)))
    assert only(dev.collect(held.cq, 1)).task_id == 1
    assert marker[0] == 6


def test_loop_jumps_back_while_its_register_is_not_zero(dev: HalDevice) -> None:
    """LOOP rs1 returns to JUMP_PC << 4 | offset4 while rs1 != 0 and falls through at 0
    (its use: stars_cond_isa_helper.cc:322-333): a body that counts r1 down from 3 and
    adds one to memory each pass runs three times."""
    c = cond_isa
    count = (ctypes.c_uint64 * 1)(0)
    q = dev.alloc(stream_id=7)

    def build(p: cond_isa.Program) -> None:
        p.li(c.R4, address(count))
        p.li(c.R1, 3)
        p.set_jump_pc(c.R5, "body")
        p.label("body")
        p.load(c.R2, c.R4, 0)
        p.addi(c.R2, c.R2, 1)
        p.store(c.R4, c.R2, 0, 3)
        p.addi(c.R1, c.R1, -1)
        p.loop(c.R1, "body", delay_cycles=1)

    _run_program(dev, q, 1, build)
    assert count[0] == 3


def test_a_store_of_zero_to_the_enable_register_disables_the_sq(dev: HalDevice) -> None:
    """The model-execute program deactivates a stream with SW 0 to its reg base + 0x14
    (stars_cond_isa_helper.cc:490-492): the SQ then holds what is queued; a store of 1
    enables it again."""
    c = cond_isa
    ctl, held = dev.alloc(stream_id=8), dev.alloc(stream_id=9)
    base, _ = dev.reg_base(held.sq)
    _run_program(dev, ctl, 1, lambda p: (p.li(c.R4, base), p.store(c.R4, c.R0, 0x14, 2)))
    assert dev.query(held.sq, PROP_SQ_STATUS) == 0
    marker = (ctypes.c_uint32 * 1)(0)
    dev.submit(held.sq, sqe.write_value(9, 1, address(marker), (5).to_bytes(4, "little")))
    assert dev.recv(held.cq, timeout_ms=50)[1] == [] and marker[0] == 0
    _run_program(dev, ctl, 2, lambda p: (p.li(c.R4, base), p.li(c.R5, 1),
                                         p.store(c.R4, c.R5, 0x14, 2)))
    assert only(dev.collect(held.cq, 1)).task_id == 1
    assert marker[0] == 5


def test_a_bad_cond_program_is_an_sqe_error(dev: HalDevice) -> None:
    """A COND SQE whose words are no valid instruction (here all zero: the error instruction)
    completes with an SQE error, never as if it had run (a model execute included)."""
    q = dev.alloc(stream_id=1)
    dev.submit(q.sq, sqe.cond(1, 1, sqe.CONDS_MODEL_EXEC))
    c = only(dev.collect(q.cq, 1))
    assert (c.sqe_type, c.error_type, c.ts_error()) == (sqe.COND, sqe.ERR_SQE_ERROR,
                                                         sqe.TS_ERROR_TASK_SQE_ERROR)


def test_sqs_sharing_a_cq_report_in_completion_order(dev: HalDevice) -> None:
    a = dev.alloc(stream_id=1)
    b = dev.alloc(stream_id=2, reuse_cq=a.cq)
    assert b.cq == a.cq
    dev.submit(a.sq, sqe.event_wait(1, 1, event_id=2))
    dev.submit(b.sq, sqe.event_record(2, 1, event_id=2))
    got = dev.collect(a.cq, 2)
    assert [(c.stream_id, c.sqe_type) for c in got] == [(2, sqe.EVENT_RECORD),
                                                         (1, sqe.EVENT_WAIT)]
    assert dev.free(b) == DRV_ERROR_NONE
    assert dev.recv(a.cq, timeout_ms=0)[0] == DRV_ERROR_NONE, "the shared CQ outlives B"


def test_free_stops_a_blocked_sq(dev: HalDevice) -> None:
    q = dev.alloc(stream_id=1)
    dev.submit(q.sq, sqe.event_wait(1, 1, event_id=44))
    assert dev.free(q) == DRV_ERROR_NONE
    assert dev.free(q) != DRV_ERROR_NONE, "a freed SQ is gone"



def test_a_device_to_device_copy_takes_sdma(dev: HalDevice) -> None:
    """drvDeviceGetTransWay answers SDMA (0) for a copy inside the one device: the runtime asks
    at every D2D aclrtMemcpyAsync and fails it with the driver's error otherwise."""
    fn = dev.lib.drvDeviceGetTransWay
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint8)]
    way = ctypes.c_uint8(0xFF)
    assert fn(None, None, ctypes.byref(way)) == DRV_ERROR_NONE and way.value == 0
    assert fn(None, None, None) != DRV_ERROR_NONE
