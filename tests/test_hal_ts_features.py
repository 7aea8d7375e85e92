"""The TS firmware's answers the runtime reads at aclrtSetDevice, through the device's own
interface: AICPU SQEs with no AICPU behind them, the capability block the TS writes into the
runtime's ring buffer (``MDLRI_HAL_FEATURES``, ``MDLRI_HAL_TS_FEATURES``), and the host copy
the kernel-argument pool falls back to (backends/hal/README.md, "TS feature bits")."""
from __future__ import annotations

import ctypes
import shutil
import struct
from typing import Iterator

import pytest

from mdlri_conformance.backends.hal import sqe
from mdlri_conformance.backends.hal.build import hal_library
from mdlri_conformance.backends.hal.device import DRV_ERROR_NONE, HalDevice

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None,
                                reason="gcc is not installed: the virtual device cannot be built")

RING = 2 * 1024 * 1024  # DEVICE_RINGBUFFER_SIZE (device_properties.h:31)
CAPA_AT = RING - 17 * 1024 - 10240  # ring size - (snapshot 17 KiB + TSCH capability 10 KiB)
MAGIC, DEPTH = 0xA55A2022, 10240 - 32  # capability.hpp:140-162


@pytest.fixture(scope="module")
def device() -> HalDevice:
    d = HalDevice(hal_library())
    d.lib.halMemCpyAsync.argtypes = [ctypes.c_uint64, ctypes.c_size_t, ctypes.c_uint64,
                                     ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint64)]
    d.lib.halMemCpyAsyncWaitFinish.argtypes = [ctypes.c_uint64]
    return d


@pytest.fixture
def dev(device: HalDevice, monkeypatch: pytest.MonkeyPatch) -> Iterator[HalDevice]:
    for name in ("MDLRI_HAL_FEATURES", "MDLRI_HAL_TS_FEATURES"):
        monkeypatch.delenv(name, raising=False)
    device.lib.mdlri_hal_settings_reload()
    device.reset()
    yield device
    device.reset()
    monkeypatch.undo()
    device.lib.mdlri_hal_settings_reload()


def ring_buffer(dev: HalDevice) -> int:
    """The runtime's ring buffer: zeroed device memory (freed by the fixture's reset)."""
    return dev.malloc(RING)


def hand_over(dev: HalDevice, address: int) -> sqe.Cqe:
    q = dev.alloc(stream_id=1)
    dev.submit(q.sq, sqe.ring_buffer_control(1, 7, address))
    (c,) = dev.collect(q.cq, 1)
    return c


def feature(block: bytes, bit: int) -> bool:
    return bool(block[32 + bit // 8] >> (bit % 8) & 1)


def test_an_aicpu_sqe_completes_and_the_sq_goes_on(dev: HalDevice) -> None:
    """No AICPU: the SQE completes without error and touches nothing, so the host's preset
    result word (UINT32_MAX, "kernel not supported", aicpu_timeout_control.cc:151-196) stays
    and the SQ runs the next SQE (the ring-buffer delete at ResetDevice)."""
    q = dev.alloc(stream_id=1)
    dev.submit(q.sq, sqe.aicpu(1, 3), sqe.nop(1, 4, wr_cqe=1))
    cqes = dev.collect(q.cq, 2)
    assert [(c.task_id, c.error_type) for c in cqes] == [(3, 0), (4, 0)]


@pytest.mark.parametrize("setting", [None, "off"])
def test_without_features_the_ts_writes_no_capability_block(dev: HalDevice,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           setting: str | None) -> None:
    if setting is not None:
        monkeypatch.setenv("MDLRI_HAL_FEATURES", setting)
    dev.lib.mdlri_hal_settings_reload()
    rb = ring_buffer(dev)
    assert hand_over(dev, rb).error_type == 0
    assert ctypes.string_at(rb + CAPA_AT, 32) == bytes(32), "the runtime must read 'no block'"


def test_with_features_on_the_ts_writes_its_capability_block(dev: HalDevice,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDLRI_HAL_FEATURES", "on")
    dev.lib.mdlri_hal_settings_reload()
    rb = ring_buffer(dev)
    assert hand_over(dev, rb).error_type == 0
    block = ctypes.string_at(rb + CAPA_AT, 64)
    magic, head, tail, depth = struct.unpack_from("<4I", block)
    assert (magic, head, depth) == (MAGIC, 0, DEPTH) and tail > head
    assert feature(block, 11) and feature(block, 34) and feature(block, 46)  # aborts, never-timeout
    offered = [b for b in range(52) if feature(block, b)]
    assert offered == list(range(52)), f"every TS feature 0..51, observed {offered}"
    # 44 op-exec timeout (hal_tsctl.c), 45 software SQ (hal_swsq.c), 51 cond op (needs 45)
    assert feature(block, 44) and feature(block, 45) and feature(block, 51)


def test_the_ts_feature_list_can_be_chosen(dev: HalDevice, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MDLRI_HAL_FEATURES", "on")
    monkeypatch.setenv("MDLRI_HAL_TS_FEATURES", "45,51")
    dev.lib.mdlri_hal_settings_reload()
    rb = ring_buffer(dev)
    hand_over(dev, rb)
    block = ctypes.string_at(rb + CAPA_AT, 64)
    assert [b for b in range(52) if feature(block, b)] == [45, 51]
    assert struct.unpack_from("<I", block, 8)[0] == 51 // 8 + 1


class CtrlMsg(ctypes.Structure):
    """struct tsdrv_ctrl_msg (ascend_hal_define.h:1471-1475)."""
    _fields_ = [("tsid", ctypes.c_uint32), ("msg_len", ctypes.c_uint32), ("msg", ctypes.c_void_p)]


def ts_ctrl(dev: HalDevice, op_type: int, cmd: int = 4) -> tuple[int, bytes, int]:
    """One halTsdrvCtl control message (cmd TSDRV_CTL_CMD_CTRL_MSG 4) of type ``op_type``:
    (return code, the 44-byte ack, the ack size the TS gave)."""
    body = (ctypes.c_uint8 * 44)(*struct.pack("<I", op_type))
    msg = CtrlMsg(0, 44, ctypes.addressof(body))
    ack = (ctypes.c_uint8 * 44)()
    size = ctypes.c_size_t(44)
    dev.lib.halTsdrvCtl.argtypes = [ctypes.c_uint32, ctypes.c_int, ctypes.c_void_p,
                                    ctypes.c_size_t, ctypes.c_void_p,
                                    ctypes.POINTER(ctypes.c_size_t)]
    rc = dev.lib.halTsdrvCtl(0, cmd, ctypes.byref(msg), ctypes.sizeof(msg), ctypes.byref(ack),
                             ctypes.byref(size))
    return rc, bytes(ack), size.value


def test_the_ts_answers_its_op_exec_timeout_interval(dev: HalDevice) -> None:
    """OP_QUERY_OP_EXEC_TIMEOUT_INTERVAL (11, runtime_tsch_defines.h:471-489), sent at
    aclrtSetDevice with TS feature 44 (runtime.cc:3031-3068): the ack's u32 @4 high and u32 @8
    low word are the kernel-credit interval in ns (npu_driver_res.cc:659-685), this device's
    2^32 ns credit; any other message is not supported."""
    rc, ack, size = ts_ctrl(dev, 11)
    assert rc == DRV_ERROR_NONE and size == 44
    high, low = struct.unpack_from("<II", ack, 4)
    assert (high << 32 | low) == 1 << 32, f"interval: expected 2^32 ns, observed {high << 32 | low}"
    assert ts_ctrl(dev, 1)[0] == 0xFFFE  # OP_QUERY_ABORT_STATUS: not modelled
    assert ts_ctrl(dev, 11, cmd=0)[0] == 0xFFFE  # CB_GROUP_NUM_GET: not modelled


def test_an_async_host_copy_is_done_when_it_returns(dev: HalDevice) -> None:
    """halMemCpyAsync copies at once; its handle is finished (h2d_copy_mgr.cc:242-249)."""
    src = (ctypes.c_uint8 * 16)(*range(16))
    dst = (ctypes.c_uint8 * 16)()
    fd = ctypes.c_uint64(0)
    assert dev.lib.halMemCpyAsync(ctypes.addressof(dst), 16, ctypes.addressof(src), 16,
                                  ctypes.byref(fd)) == DRV_ERROR_NONE
    assert bytes(dst) == bytes(range(16))
    assert dev.lib.halMemCpyAsyncWaitFinish(fd.value) == DRV_ERROR_NONE


def test_a_pcie_dma_sqe_copies_between_virtual_addresses(dev: HalDevice) -> None:
    """PCIe DMA (type 17) with the addresses the runtime writes on STARS moves the bytes
    (MODE-01's pinned H2D aclrtMemcpyAsync, memory_task_v100.cc:158-184)."""
    q = dev.alloc(stream_id=2)
    src = (ctypes.c_int32 * 4)(1, 2, 3, 4)
    dst = (ctypes.c_int32 * 4)()
    dev.submit(q.sq, sqe.pcie_dma(2, 5, ctypes.addressof(src), ctypes.addressof(dst), 12))
    (c,) = dev.collect(q.cq, 1)
    assert (c.task_id, c.error_type, list(dst)) == (5, 0, [1, 2, 3, 0])


@pytest.mark.parametrize("flags", [1, 2, 4])  # 2D, DSA update, SQE update: not run yet
def test_a_pcie_dma_form_not_modelled_is_an_sqe_error(dev: HalDevice, flags: int) -> None:
    q = dev.alloc(stream_id=2)
    src, dst = (ctypes.c_int32 * 1)(7), (ctypes.c_int32 * 1)()
    dev.submit(q.sq, sqe.pcie_dma(2, 6, ctypes.addressof(src), ctypes.addressof(dst), 4,
                                  flags=flags))
    (c,) = dev.collect(q.cq, 1)
    assert (c.error_type, dst[0]) == (sqe.ERR_SQE_ERROR, 0)


# ---- the error ring buffer (device_error_info.hpp:202-220, device_error_proc.cc:638-744) ----

ERR_MAGIC, ERR_LEN, ERR_ELEMENT = 0xA55A2020, 10, 12288


def error_element(ring: int, index: int) -> tuple[int, bytes]:
    """Element ``index``'s errorType and its first 32 payload bytes."""
    at = ring + 32 + index * ERR_ELEMENT
    error_type = struct.unpack_from("<I", ctypes.string_at(at + 12, 4))[0]
    return error_type, ctypes.string_at(at + 32, 32)


@pytest.mark.parametrize("setting", [None, "on"])
def test_an_error_names_its_task_in_the_error_ring_buffer(dev: HalDevice,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          setting: str | None) -> None:
    """Task 83 hands the ring buffer over: the TS sets its control header (magic, head 0,
    tail 0, 10 elements of 12288 bytes). Each error CQE is preceded by an element naming the
    failed task, the tail moving on: a wait timeout as WAIT_TIMEOUT (10: waitType, streamId,
    sqId, taskId), so the runtime's error processing finds it at once instead of copying the
    buffer for seconds."""
    if setting:
        monkeypatch.setenv("MDLRI_HAL_FEATURES", setting)
        dev.lib.mdlri_hal_settings_reload()
    ring = ring_buffer(dev)
    assert hand_over(dev, ring).error_type == 0
    magic, head, tail, length, pid, size = struct.unpack_from("<IIIIQI", ctypes.string_at(ring, 28))
    assert (magic, head, tail, length, size) == (ERR_MAGIC, 0, 0, ERR_LEN, ERR_ELEMENT) and pid > 0
    q = dev.alloc(stream_id=6)
    dev.submit(q.sq, sqe.event_wait(6, 9, event_id=77, timeout_s=1))
    (c,) = dev.collect(q.cq, 1)
    assert c.error_type == sqe.ERR_TASK_TIMEOUT
    head, tail = struct.unpack_from("<II", ctypes.string_at(ring + 4, 8))
    assert (head, tail) == (0, 1)
    error_type, payload = error_element(ring, 0)
    wait_type, stream, sq, task = struct.unpack_from("<BxHHH", payload)
    assert (error_type, wait_type, stream, sq, task) == (10, sqe.EVENT_WAIT, 6, q.sq, 9)


def test_no_ring_buffer_element_without_a_hand_over(dev: HalDevice) -> None:
    """Before task 83 (or after the buffer is freed) an error writes nothing anywhere."""
    ring = ring_buffer(dev)
    q = dev.alloc(stream_id=6)
    dev.submit(q.sq, sqe.event_wait(6, 9, event_id=77, timeout_s=1))
    (c,) = dev.collect(q.cq, 1)
    assert c.error_type == sqe.ERR_TASK_TIMEOUT
    assert ctypes.string_at(ring, 64) == bytes(64)
