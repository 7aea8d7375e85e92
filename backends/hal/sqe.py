"""Lay out 910B STARS SQEs and read CQEs, from the facts in README.md ("SQEs", "The CQE").

Every SQE is 64 little-endian bytes: the common header (type, wr_cqe, block_dim, stream id,
task id) and the fields of its type at the byte offsets the runtime's v100 structs give
(``src/runtime/core/inc/sqe/v100/``, hicann/runtime@681ef76). Addresses are integers (on the
virtual device, pointers of this process).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

SQE_SIZE = 64
CQE_SIZE = 32

# SQE types (sqe/v100/stars_sqe.hpp:24-46)
FFTS, AICPU, PLACE_HOLDER = 0, 1, 3
EVENT_RECORD, EVENT_WAIT, NOTIFY_RECORD, NOTIFY_WAIT, WRITE_VALUE = 4, 5, 6, 7, 8
SDMA, PCIE_DMA, COND = 11, 17, 20

# PLACE_HOLDER task types (core/inc/task/task_base.hpp:119,172,185)
TASK_MODEL_MAINTAINCE, TASK_MEMCPY_WITHOUT_SDMA, TASK_NOP = 12, 90, 103
# TS_TASK_TYPE_DEVICE_RINGBUFFER_CONTROL (ringbuffer_maintain_task_v100.cc:36)
TASK_RINGBUFFER_CONTROL = 83
# model maintenance operations (task_base.hpp:236-245) and stream types (rt_model.h:76)
MMT_STREAM_ADD, MMT_STREAM_DEL, MMT_MODEL_LOAD_COMPLETE, MMT_MODEL_DESTROY = 0, 1, 2, 3
MMT_MODEL_PRE_PROC, MMT_MODEL_ABORT = 4, 6
MODEL_HEAD_STREAM, MODEL_WAIT_ACTIVE_STREAM = 0, 1
# WRITE_VALUE sub types (stars/stars_base.hpp:123-130)
WV_DEFAULT, WV_EVENT_RESET = 0, 1
# write sizes: awsize -> bytes (stars_base.hpp:62-69)
AWSIZE = {1: 0, 2: 1, 4: 2, 8: 3, 16: 4, 32: 5}
# kernel credits (stars_base.hpp:33,39)
DEFAULT_CREDIT, NEVER_TIMEOUT_CREDIT = 254, 255
# COND sub types (stars_base.hpp:94-103)
CONDS_MODEL_EXEC, CONDS_STREAM_SWITCH_EX, CONDS_STREAM_ACTIVE, CONDS_MEM_WAIT_VALUE = 1, 5, 6, 9

# CQE errorType bits (stars/stars.hpp:34-39) and TS codes (task_scheduler_error.h:150-153)
ERR_EXCEPTION, ERR_TRAP, ERR_TASK_TIMEOUT, ERR_SQE_ERROR = 0x01, 0x02, 0x04, 0x08
TS_ERROR_TASK_EXCEPTION, TS_ERROR_TASK_TIMEOUT, TS_ERROR_TASK_SQE_ERROR = 0x103, 0x105, 0x106


def _lo(a: int) -> int:
    return a & 0xFFFFFFFF


def _hi(a: int) -> int:
    return (a >> 32) & 0xFFFFFFFF


def header(sqe_type: int, stream_id: int, task_id: int, *, wr_cqe: int = 1,
           block_dim: int = 0) -> bytearray:
    """A zeroed SQE with the common header (task_info_base.hpp:42-57): byte 0 type:6, byte 1
    bit 6 wr_cqe, u16 @2 block_dim, u16 @4 rt_stream_id, u16 @6 task_id."""
    b = bytearray(SQE_SIZE)
    b[0] = sqe_type & 0x3F
    b[1] = (wr_cqe & 1) << 6
    struct.pack_into("<HHH", b, 2, block_dim, stream_id, task_id)
    return b


def kernel(stream_id: int, task_id: int, pc: int, args: int, block_dim: int = 1, *,
           credit: int = DEFAULT_CREDIT) -> bytes:
    """FFTS kernel SQE (stars_kernel.hpp:164-191): u8 @14 kernel_credit, u32 @32/@36 pc,
    u32 @40/@44 param address."""
    b = header(FFTS, stream_id, task_id, block_dim=block_dim)
    b[14] = credit
    struct.pack_into("<IIII", b, 32, _lo(pc), _hi(pc) & 0xFFFF, _lo(args), _hi(args))
    return bytes(b)


def event_record(stream_id: int, task_id: int, event_id: int) -> bytes:
    """EVENT_RECORD (stars_kernel.hpp:296-307): u16 @8 eventId, u8 @14 credit."""
    b = header(EVENT_RECORD, stream_id, task_id)
    struct.pack_into("<H", b, 8, event_id)
    b[14] = DEFAULT_CREDIT
    return bytes(b)


def event_wait(stream_id: int, task_id: int, event_id: int, timeout_s: int = 0) -> bytes:
    """EVENT_WAIT: u16 @8 eventId, u8 @14 credit 255, u32 @20 timeout (s; 0 none)."""
    b = header(EVENT_WAIT, stream_id, task_id)
    struct.pack_into("<H", b, 8, event_id)
    b[14] = NEVER_TIMEOUT_CREDIT
    struct.pack_into("<I", b, 20, timeout_s)
    return bytes(b)


def event_reset(stream_id: int, task_id: int, event_id: int, slot_addr: int = 0) -> bytes:
    """WRITE_VALUE with sub_type EVENT_RESET (event_task_v100.cc:88-142): u32 @24 event id,
    u32 @28 sub_type, the event slot address @16/@20 (unused by the virtual device)."""
    b = header(WRITE_VALUE, stream_id, task_id)
    struct.pack_into("<IIII", b, 16, _lo(slot_addr), _hi(slot_addr) & 0x1FFFF, event_id,
                     WV_EVENT_RESET)
    return bytes(b)


def notify_record(stream_id: int, task_id: int, notify_id: int) -> bytes:
    """NOTIFY_RECORD (stars_kernel.hpp:309-320): u32 @8 bits 0-12 notify_id."""
    b = header(NOTIFY_RECORD, stream_id, task_id)
    struct.pack_into("<I", b, 8, notify_id & 0x1FFF)
    b[14] = DEFAULT_CREDIT
    return bytes(b)


def notify_wait(stream_id: int, task_id: int, notify_id: int, timeout_s: int = 0) -> bytes:
    """NOTIFY_WAIT: u32 @8 notify_id, u8 @14 credit 255, u32 @16 timeout (s)."""
    b = header(NOTIFY_WAIT, stream_id, task_id)
    struct.pack_into("<I", b, 8, notify_id & 0x1FFF)
    b[14] = NEVER_TIMEOUT_CREDIT
    struct.pack_into("<I", b, 16, timeout_s)
    return bytes(b)


def memcpy(stream_id: int, task_id: int, src: int, dst: int, length: int) -> bytes:
    """SDMA copy (stars_dma.hpp:125-169, memory_task_v100.cc:222-303): u8 @14 credit, u8 @15
    ptrMode 0, u32 @16 opcode 0 | sssv/dssv/sns/dns, u32 @28 length, src @32/@36, dst @40/@44."""
    b = header(SDMA, stream_id, task_id)
    b[14] = DEFAULT_CREDIT
    struct.pack_into("<I", b, 16, (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12))
    struct.pack_into("<IIIII", b, 28, length, _lo(src), _hi(src), _lo(dst), _hi(dst))
    return bytes(b)


def memcpy_placeholder(stream_id: int, task_id: int, src: int, dst: int, length: int) -> bytes:
    """PLACE_HOLDER memcpy without SDMA (memory_task_v100.cc:98-123): u16 @2 task_type 90,
    u64 @16 src, u64 @24 dest, u32 @32 size."""
    b = header(PLACE_HOLDER, stream_id, task_id)
    struct.pack_into("<H", b, 2, TASK_MEMCPY_WITHOUT_SDMA)
    b[14] = DEFAULT_CREDIT
    struct.pack_into("<QQI", b, 16, src, dst, length)
    return bytes(b)


def memset(stream_id: int, first_task_id: int, dst: int, host_block: int, count: int,
           block: int) -> list[bytes]:
    """A 910B device memset as the runtime emits it (memory_common.cc:125-190): one H2D copy
    of ``block`` bytes from a host block already filled with the value, then D2D copies of
    the first block over the rest; ``count`` bytes in all."""
    first = min(count, block)
    sqes = [memcpy(stream_id, first_task_id, host_block, dst, first)]
    done = first
    while done < count:
        n = min(block, count - done)
        sqes.append(memcpy(stream_id, first_task_id + len(sqes), dst, dst + done, n))
        done += n
    return sqes


def write_value(stream_id: int, task_id: int, addr: int, value: bytes, *,
                wr_cqe: int = 1) -> bytes:
    """WRITE_VALUE, sub_type 0 (memory_task_v100.cc:470-503): u32 @16 address low, u32 @20
    address high:17 | awsize << 20 | va << 31, the value from u32 @32 (part0, part1...)."""
    if len(value) not in AWSIZE:
        raise ValueError(f"a value write is 1, 2, 4, 8, 16 or 32 bytes, not {len(value)}")
    b = header(WRITE_VALUE, stream_id, task_id, wr_cqe=wr_cqe)
    b[14] = DEFAULT_CREDIT
    struct.pack_into("<II", b, 16, _lo(addr), (_hi(addr) & 0x1FFFF) | (AWSIZE[len(value)] << 20)
                     | (1 << 31))
    b[32:32 + len(value)] = value
    return bytes(b)


def write_value_ptr(stream_id: int, task_id: int, descriptor: int, *, wr_cqe: int = 1) -> bytes:
    """WRITE_VALUE in pointer mode (``RtStarsWriteValuePtrSqe``, stars_sqe.hpp:83-102, built by
    ``ConstructWriteValueSqePtr``, common_task_v100.cc:64-84): u8 @15 bit 0 ptr_mode = 1, u32
    @16 / u32 @20 (17 bits, va bit 31) the address of a :func:`write_value_descriptor`."""
    b = header(WRITE_VALUE, stream_id, task_id, wr_cqe=wr_cqe)
    b[14] = DEFAULT_CREDIT
    b[15] = 1
    struct.pack_into("<II", b, 16, _lo(descriptor), (_hi(descriptor) & 0x1FFFF) | (1 << 31))
    return bytes(b)


def write_value_descriptor(addr: int, value: bytes) -> bytes:
    """The 64-byte descriptor a pointer-mode WRITE_VALUE names (``RtStarsWriteValuePtrDst``,
    stars_sqe.hpp:104-121; the runtime's external record fills one with an 8-bit 1,
    capture_model_adapt_v100.cc:69-83): u32 @0 address low, u32 @4 high:17 | awsize << 20 |
    va << 31, u32 @12 sub_type 0, the value from @16."""
    if len(value) not in AWSIZE:
        raise ValueError(f"a value write is 1, 2, 4, 8, 16 or 32 bytes, not {len(value)}")
    b = bytearray(64)
    struct.pack_into("<II", b, 0, _lo(addr), (_hi(addr) & 0x1FFFF) | (AWSIZE[len(value)] << 20)
                     | (1 << 31))
    b[16:16 + len(value)] = value
    return bytes(b)


def aicpu(stream_id: int, task_id: int) -> bytes:
    """An AICPU SQE (type 1) as far as this device reads it: the header only (the runtime's
    built-in CheckKernelSupported launch, aicpu_timeout_control.cc:172)."""
    return bytes(header(AICPU, stream_id, task_id))


def ring_buffer_control(stream_id: int, task_id: int, address: int, *, delete: bool = False,
                        elements: int = 10) -> bytes:
    """The ring-buffer hand-over: PLACE_HOLDER task_type 83 with RtRingBufferControl at 16
    (u64 ringbuffer_offset, u32 @40 total_len (an element count), u8 @44 del flag;
    ringbuffer_maintain_task_v100.cc:22-61, stars_sqe.hpp:222-229)."""
    b = header(PLACE_HOLDER, stream_id, task_id)
    struct.pack_into("<H", b, 2, TASK_RINGBUFFER_CONTROL)
    b[14] = DEFAULT_CREDIT
    struct.pack_into("<Q", b, 16, 0 if delete else address)
    struct.pack_into("<IB", b, 40, 0 if delete else elements, 1 if delete else 0)
    return bytes(b)


def pcie_dma(stream_id: int, task_id: int, src: int, dst: int, length: int, *,
             flags: int = 0) -> bytes:
    """PCIe DMA (type 17) as ConstructPcieDmaSqe builds it on STARS with virtual addresses
    (memory_task_v100.cc:158-184, stars_dma.hpp:47-82): u8 @14 credit, u32 @28 bits
    isConverted/isDsaUpdate/isSqeUpdate (``flags``), u64 @32 src, @40 dst, @48 length."""
    b = header(PCIE_DMA, stream_id, task_id)
    b[14] = DEFAULT_CREDIT
    struct.pack_into("<I", b, 28, flags)
    struct.pack_into("<QQQ", b, 32, src, dst, length)
    return bytes(b)


def nop(stream_id: int, task_id: int, *, wr_cqe: int = 0) -> bytes:
    """NOP: PLACE_HOLDER with task_type 103 (dump_task_v100.cc:208-223), wr_cqe 0 there."""
    b = header(PLACE_HOLDER, stream_id, task_id, wr_cqe=wr_cqe)
    struct.pack_into("<H", b, 2, TASK_NOP)
    b[14] = DEFAULT_CREDIT
    return bytes(b)


def model_maintenance(stream_id: int, task_id: int, *, model_id: int, operation: int,
                      op_stream_id: int = 0, stream_type: int = MODEL_HEAD_STREAM,
                      first_task_id: int = 0, end_graph_notify_id: int = 0,
                      exec_times_addr: int = 0, wr_cqe: int = 1) -> bytes:
    """A model maintenance message as the control SQ sends it (model_maintaince_task_v100.cc:23-87):
    PLACE_HOLDER, u16 @2 task_type 12, pre_p 1 (to the TS cpu) for stream add/del, pre-proc and
    abort; ``RtStarsModelMaintaince`` at byte 16 (stars_sqe.hpp:174-185): u16 model_id,
    stream_id, operation, stream_type, first_task_id, endgraph_notify_id, u32 executor_flag,
    u64 streamExecTimesAddr (executor_flag left 0: the device does not read it)."""
    b = header(PLACE_HOLDER, stream_id, task_id, wr_cqe=wr_cqe)
    if operation in (MMT_STREAM_ADD, MMT_STREAM_DEL, MMT_MODEL_PRE_PROC, MMT_MODEL_ABORT):
        b[1] |= 1 << 2  # pre_p = RT_STARS_SQE_INT_DIR_TO_TSCPU (stars_base.hpp:56)
    struct.pack_into("<H", b, 2, TASK_MODEL_MAINTAINCE)
    b[14] = DEFAULT_CREDIT
    struct.pack_into("<HHHHHHIQ", b, 16, model_id, op_stream_id, operation, stream_type,
                     first_task_id, end_graph_notify_id, 0, exec_times_addr)
    return bytes(b)


def cond(stream_id: int, task_id: int, sub_type: int) -> bytes:
    """A COND SQE (function-call form, stars_sqe.hpp:426-442): u8 @8 conds_sub_type."""
    b = header(COND, stream_id, task_id)
    b[8] = sub_type
    b[14] = DEFAULT_CREDIT
    return bytes(b)


@dataclass(frozen=True)
class Cqe:
    """One report as the runtime reads it (``rtCqReport_t``, task_info_base.hpp:354-381)."""

    stream_id: int
    task_id: int
    error_code: int
    error_type: int
    sqe_type: int
    sq_id: int
    sq_head: int
    flags: int
    timestamp: int

    @classmethod
    def unpack(cls, raw: bytes) -> "Cqe":
        """Read one 32-byte CQE."""
        f = struct.unpack_from("<HHIBBHHHQ", raw)
        return cls(*f)

    def ts_error(self) -> int:
        """The TS error the runtime derives (task_manager.cc:378-396): the error code when
        non-zero, else the code of the lowest error bit (exception 0x103, trap 0x104, timeout
        0x105, SQE error 0x106; -1 for the two debug bits); 0 when no error bit is set."""
        bits = self.error_type & 0x3F
        if bits == 0:
            return 0
        if self.error_code:
            return self.error_code
        lowest = (bits & -bits).bit_length() - 1
        return {0: 0x103, 1: 0x104, 2: 0x105, 3: 0x106}.get(lowest, -1)
