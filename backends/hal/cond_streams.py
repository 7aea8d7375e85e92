"""The runtime's stream and label programs for the STARS cond ISA (hicann/runtime@681ef76),
assembled with :mod:`.cond_isa`'s encoder: stream active (``stars_cond_isa_helper.cc:1016-1123``),
``aclrtSwitchStream``'s STREAM_SWITCH_EX (``:1179-1226``) and ``aclrtSwitchLabelByIndex``
(``:748-1008``), with the COND SQEs that run them and the LABEL_SET task.
"""

from __future__ import annotations

import struct

from . import sqe
from .cond_isa import (
    ADD, AND, ANDI, AXI_USER_VA_MASK, BEQ, BGE, BLT, BLTU, BNE, CSRRC, CSRRS, CSRRW,
    CSR_AXI_USER, CSR_CSQ_STATUS, FSM_SEL_PA_910B, LBU, LD, LHU, LWU, Program, R0, R1, R2,
    R3, R4, R5, RTSQ_SHAMT_910B, SD, SH, SLLI, SQ_ENABLE_OFFSET, SQ_HEAD_OFFSET,
    SQ_TAIL_OFFSET, SRLI, SW, XOR, XORI, function_call_sqe)


# ---- stream active (stars_cond_isa_helper.cc:1016-1123, stream_task.cc:27-125) ----

#: the stream-active program's LOOP delay: 10000 cycles in a 13-bit field
#: (stars_cond_isa_helper.cc:1034; ``RtStarsCondOpLoop.delayCycle``)
STREAM_ACTIVE_LOOP_CYCLES = 10000 & 0x1FFF


def _stream_active(p: Program, *, sq_id: int, exec_times_addr: int, fsm_sel_addr: int,
                   sq_reg_addr: int, dfx_addr: int, at: str = "") -> None:
    """``RtStarsStreamActiveFc`` (stars_cond_isa_define.hpp:69-121) as
    ``ConstructStreamActiveFc`` fills it (stars_cond_isa_helper.cc:1016-1123), offsetStart 0.
    The SQ's enable / tail / head registers are its register base (``GetSqRegVirtualAddr``)
    plus the 910B offsets (stream_task.cc:54-72, 910_B_93/dev_info_reg.cc:192-196). Labels
    carry the prefix ``at`` when the program is embedded in another (offsetStart)."""
    enable = sq_reg_addr + SQ_ENABLE_OFFSET
    tail, head = sq_reg_addr + SQ_TAIL_OFFSET, sq_reg_addr + SQ_HEAD_OFFSET
    # getSqFsmState_i (ConstructGetSqFsmStateFcI, :628-666): r1 = FSM register, r2 = sq id,
    # r3 = AXI mask; physical SH of the id, LD of the register, back to virtual
    p.label(at + "start")
    p.li(R3, AXI_USER_VA_MASK)
    p.li(R1, fsm_sel_addr)
    p.li(R2, sq_id)
    p.csr(R0, R3, CSR_AXI_USER, CSRRC)
    p.store(R1, R2, 0, SH)
    p.op(R1, R1, R0, AND)
    p.load_imm(R1, fsm_sel_addr, LD)
    p.csr(R0, R3, CSR_AXI_USER, CSRRS)
    # dfxFsm: CSQ_STATUS = r1; the raw register to dfx + 0
    p.csr(R0, R1, CSR_CSQ_STATUS, CSRRW)
    p.llwi(R3, dfx_addr)
    p.lhwi(R3, dfx_addr)
    p.store(R3, R1, 0, SD)
    # loop back while the register names another SQ
    p.addi(R5, R1, 0)
    p.op_imm(R5, R5, ANDI, RTSQ_SHAMT_910B)
    p.llwi(R3, sq_id)
    p.lhwi(R3, sq_id)
    p.op(R5, R3, R5, XOR)
    p.set_jump_pc(R4, at + "start")
    p.loop(R5, at + "start", STREAM_ACTIVE_LOOP_CYCLES)
    # the FSM state (bits 35:32): 9 is an error, anything but 0 loops back
    p.op_imm(R1, R1, SRLI, 32)
    p.op_imm(R1, R1, ANDI, 0xF)
    p.op_imm(R5, R1, XORI, 0x9)
    p.set_jump_pc(R4, at + "err")
    p.branch(R5, R0, BEQ, at + "err")
    p.set_jump_pc(R4, at + "start")
    p.loop(R1, at + "start", STREAM_ACTIVE_LOOP_CYCLES)
    # getSqEnable_i (:690-703): r1 = enable bit 0 (LBU); to dfx + 8; disabled: reset the head
    p.op(R1, R1, R0, AND)
    p.load_imm(R1, enable, LBU)
    p.op_imm(R1, R1, ANDI, 0x1)
    p.set_jump_pc(R4, at + "gotoI")
    p.llwi(R3, dfx_addr)
    p.lhwi(R3, dfx_addr)
    p.store(R3, R1, 0x8, SD)
    p.branch(R1, R0, BEQ, at + "gotoI")
    # getSqHeadAndTail_i (:705-716): r2 = tail, r1 = head (LHU, << 48); to dfx + 0x10 / 0x18;
    # an enabled SQ that has not run to its tail is an error
    p.load_imm(R2, tail, LHU)
    p.op_imm(R2, R2, SLLI, 48)
    p.load_imm(R1, head, LHU)
    p.op_imm(R1, R1, SLLI, 48)
    p.set_jump_pc(R4, at + "err")
    p.llwi(R3, dfx_addr)
    p.lhwi(R3, dfx_addr)
    p.store(R3, R1, 0x10, SD)
    p.store(R3, R2, 0x18, SD)
    p.branch(R1, R2, BNE, at + "err")
    # disableSq_i (:718-728): SW 0 to the enable register
    p.li(R1, enable)
    p.store(R1, R0, 0, SW)
    # goto_i: head 0; addStreamActiveTimes (:730-746): u16 counter + 1; active_i
    p.label(at + "gotoI")
    p.goto_i(R0, sq_id, 0)
    p.load_imm(R2, exec_times_addr, LWU)
    p.addi(R2, R2, 1)
    p.li(R1, exec_times_addr)
    p.store(R1, R2, 0, SH)
    p.active_i(R0, sq_id)
    p.set_jump_pc(R4, at + "end")
    p.branch(R0, R0, BEQ, at + "end")
    p.label(at + "err")
    p.error()
    p.label(at + "end")
    p.nop()


def stream_active_words() -> int:
    """The program's size in words (``sizeof(RtStarsStreamActiveFc) / 4``)."""
    p = Program()
    _stream_active(p, sq_id=0, exec_times_addr=0, fsm_sel_addr=0, sq_reg_addr=0, dfx_addr=0)
    return len(p.words())


def stream_active_program(*, sq_id: int, exec_times_addr: int, sq_reg_addr: int,
                          dfx_addr: int, fsm_sel_addr: int = FSM_SEL_PA_910B) -> bytes:
    """What the runtime copies to the stream-active task's function-call memory
    (``ReConstructStreamActiveTaskFcDefault``, stream_task.cc:27-44): the program activating SQ
    ``sq_id`` (the activated stream's SQ), counting into its u16 execution counter
    (``GetExecutedTimesSvm``), checking it through its register base (``halSqCqQuery``
    SQ_REG_BASE) and writing what it saw to four u64 words at ``dfx_addr``."""
    p = Program()
    _stream_active(p, sq_id=sq_id, exec_times_addr=exec_times_addr, fsm_sel_addr=fsm_sel_addr,
                   sq_reg_addr=sq_reg_addr, dfx_addr=dfx_addr)
    return p.pack()


def stream_active_sqe(stream_id: int, task_id: int, *, func_call_addr: int,
                      wr_cqe: int = 1) -> bytes:
    """The 910B stream-active SQE (stream_task_v100.cc:81-107): a COND function call,
    ``CONDS_SUB_TYPE_STREAM_ACTIVE`` (6, stars_base.hpp:94-100), csc 1, the program's size in
    words."""
    return function_call_sqe(stream_id, task_id, sqe.CONDS_STREAM_ACTIVE, func_call_addr,
                             stream_active_words(), wr_cqe=wr_cqe)


# ---- stream switch (aclrtSwitchStream: CONDS_SUB_TYPE_STREAM_SWITCH_EX,
#      stars_cond_isa_helper.cc:1179-1226, cond_op_stream_task.cc:150-225) ----

#: rtCondition_t (pkg_inc/runtime/rt_external_base.h:105-112)
RT_EQUAL, RT_NOT_EQUAL, RT_GREATER, RT_GREATER_OR_EQUAL, RT_LESS, RT_LESS_OR_EQUAL = range(6)
#: rtSwitchDataType_t (rt_external_base.h:165-168)
RT_SWITCH_INT32, RT_SWITCH_INT64 = 0, 1
LW = 2
#: the branch that skips the switch: the condition's negation (GetNotCondition,
#: stars_cond_isa_helper.cc:19-29) as (func3, swap operands) (ConvertConditionToBranchFunc3,
#: :31-77); any other condition skips with BEQ, the runtime's default (:69-75)
_SKIP_BRANCH = {RT_EQUAL: (BNE, False), RT_NOT_EQUAL: (BEQ, False),
                RT_GREATER: (BGE, True), RT_GREATER_OR_EQUAL: (BLT, False),
                RT_LESS: (BGE, False), RT_LESS_OR_EQUAL: (BLT, True)}


def stream_switch_ex_program(*, var_addr: int, val_addr: int, condition: int, data_type: int,
                             true_sq_id: int, current_sq_id: int, exec_times_addr: int,
                             true_sq_reg_addr: int, dfx_addr: int,
                             fsm_sel_addr: int = FSM_SEL_PA_910B) -> bytes:
    """``rtStarsStreamSwitchExFc_t`` (stars_cond_isa_define.hpp:274-282) as
    ``ConstructStreamSwitchExFc`` fills it: LOAD_IMM r1 = *var, r2 = *val (LW for int32, LD
    for int64); when the condition does not hold, jump to the end; else the stream-active
    program for the true stream's SQ (embedded at its offset), then DEACTIVE_I of the current
    SQ: the switching stream stops after this task."""
    func3, swap = _SKIP_BRANCH.get(condition, (BEQ, False))
    width = LW if data_type == RT_SWITCH_INT32 else LD
    p = Program()
    p.load_imm(R1, var_addr, width)
    p.load_imm(R2, val_addr, width)
    p.set_jump_pc(R3, "end")
    p.branch(*((R2, R1) if swap else (R1, R2)), func3, "end")
    _stream_active(p, sq_id=true_sq_id, exec_times_addr=exec_times_addr,
                   fsm_sel_addr=fsm_sel_addr, sq_reg_addr=true_sq_reg_addr, dfx_addr=dfx_addr,
                   at="active.")
    p.active_i(R2, current_sq_id, on=False)
    p.label("end")
    p.nop()
    return p.pack()


def stream_switch_ex_sqe(stream_id: int, task_id: int, *, func_call_addr: int,
                         wr_cqe: int = 1) -> bytes:
    """The 910B stream-switch SQE (cond_op_stream_task_v100.cc:22-52): a COND function call,
    ``CONDS_SUB_TYPE_STREAM_SWITCH_EX`` (5), csc 1, the program's size in words."""
    return function_call_sqe(stream_id, task_id, sqe.CONDS_STREAM_SWITCH_EX, func_call_addr,
                             stream_switch_ex_words(), wr_cqe=wr_cqe)


def stream_switch_ex_words() -> int:
    """The program's size in words (``sizeof(rtStarsStreamSwitchExFc_t) / 4``)."""
    return len(stream_switch_ex_program(
        var_addr=0, val_addr=0, condition=RT_EQUAL, data_type=RT_SWITCH_INT32, true_sq_id=0,
        current_sq_id=0, exec_times_addr=0, true_sq_reg_addr=0, dfx_addr=0)) // 4


# ---- label switch by index (aclrtSwitchLabelByIndex: CONDS_SUB_TYPE_LABEL_SWITCH_BY_INDEX,
#      stars_cond_isa_helper.cc:748-1008, cond_op_label_task.cc:45-76) ----

#: a 910B label's device record (``RT_CHIP_CLOUD_V2_LABEL_INFO_SIZE``, task_base.hpp:37):
#: u32 sq id (bits 10:0) | position << 16, u32 0, u64 the stream's execution counter address
#: (``SetLabelInfoForLabelSetTask``, cond_op_label_task.cc:45-76)
LABEL_INFO_SIZE = 16
LABEL_SWITCH_BY_INDEX = 7  # CONDS_SUB_TYPE_LABEL_SWITCH_BY_INDEX (stars_base.hpp:101)
TASK_LABEL_SET = 20  # TS_TASK_TYPE_LABEL_SET (task_base.hpp:126)
LABEL_SWITCH_LOOP_CYCLES = 0x1FFF  # stars_cond_isa_helper.cc:953


def label_info(sq_id: int, position: int, exec_times_addr: int) -> bytes:
    """One label's 16-byte record as the runtime writes it at LABEL_SET (cond_op_label_task.cc:59-66)."""
    return struct.pack("<IIQ", (sq_id & 0x7FF) + (position << 16), 0, exec_times_addr)


def _add_exec_times(p: Program, index_addr: int, label_info_addr: int) -> None:
    """``RtStarsAddExecTimesFc`` (``ConstructAddExecTimesFc``, stars_cond_isa_helper.cc:988-1008):
    r4 = the index (LWU), r5 = &label_info[index].execAddr's value, u16 counter + 1."""
    p.load_imm(R4, index_addr, LWU)
    p.llwi(R5, label_info_addr)
    p.lhwi(R5, label_info_addr)
    p.op_imm(R4, R4, SLLI, 4)
    p.op(R4, R4, R5, ADD)
    p.load(R5, R4, 8)
    p.load(R4, R5, 0)
    p.addi(R4, R4, 1)
    p.store(R5, R4, 0, SH)


def label_switch_by_index_program(*, index_addr: int, max_value: int, label_count_addr: int,
                                  label_info_addr: int, sq_virtual_addr: int, dfx_addr: int,
                                  current_sq_id: int) -> bytes:
    """``rtStarsLabelSwitchByIndexFc_t`` (stars_cond_isa_define.hpp:183-233) as
    ``ConstructLabelSwitchByIndexFc`` fills it (stars_cond_isa_helper.cc:865-985): the index
    (LWU; at or past ``max_value`` it is clamped to ``max_value - 1``) must be below the
    model's label count, else the error word; the label's record gives the SQ and position.
    Same SQ: count, GOTO_R (the head moves when the task ends). Another SQ: through the SQ
    address array (0: error), disabled -> straight to GOTO_R, enabled -> head == tail or
    error, then SW 0 to its enable; GOTO_R retried by LOOP while its rd is not 0; count;
    ACTIVE_R; DEACTIVE_I of the current SQ."""
    p = Program()
    # RtStarsLabelSwitchByIdxCheck (:748-792): offsets inside it are word indexes from the
    # program's start with JUMP_PC still 0
    p.load_imm(R1, index_addr, LWU)
    p.li(R2, max_value)
    p.branch_to(R1, R2, BLTU, 9)  # to ldi1
    p.li(R1, max(max_value - 1, 0))
    p.load_imm(R2, label_count_addr, LWU)  # word 9
    p.csr(R0, R1, CSR_CSQ_STATUS, CSRRW)
    p.branch_to(R1, R2, BLTU, 14)  # past the error word
    p.error()  # word 13
    p.llwi(R3, dfx_addr)
    p.lhwi(R3, dfx_addr)
    p.store(R3, R1, 0x20, SD)
    p.op_imm(R1, R1, SLLI, 4)
    p.llwi(R3, label_info_addr)
    p.lhwi(R3, label_info_addr)
    p.op(R1, R1, R3, ADD)
    p.load(R1, R1, 0)
    p.op_imm(R2, R1, ANDI, 0x7FF)
    p.llwi(R3, dfx_addr)
    p.lhwi(R3, dfx_addr)
    p.store(R3, R1, 0, SD)
    p.op_imm(R5, R2, XORI, current_sq_id & 0xFFF)
    p.set_jump_pc(R3, "gotoR2")
    p.branch(R5, R0, BEQ, "gotoR2")
    # RtStarsSwitchGetSqVirtualAddrI (:800-837): r5 = sq_virtual_addr[sq id]; 0 is an error
    p.op_imm(R4, R2, SLLI, 3)
    p.li(R5, sq_virtual_addr)
    p.op(R5, R5, R4, ADD)
    p.load(R5, R5, 0)
    p.set_jump_pc(R4, "err")
    p.branch(R5, R0, BEQ, "err")
    # RtStarsSwitchGetSqEnableI (:839-849)
    p.load(R4, R5, SQ_ENABLE_OFFSET)
    p.op_imm(R4, R4, ANDI, 0x1)
    p.llwi(R3, dfx_addr)
    p.lhwi(R3, dfx_addr)
    p.store(R3, R4, 0x8, SD)
    p.set_jump_pc(R3, "gotoR1")
    p.branch(R4, R0, BEQ, "gotoR1")
    # RtStarsSwitchGetSqHeadAndTailI (:851-863): r2 = tail << 48, r4 = head << 48
    p.load(R2, R5, SQ_TAIL_OFFSET)
    p.op_imm(R2, R2, SLLI, 48)
    p.load(R4, R5, SQ_HEAD_OFFSET)
    p.op_imm(R4, R4, SLLI, 48)
    p.llwi(R3, dfx_addr)
    p.lhwi(R3, dfx_addr)
    p.store(R3, R2, 0x10, SD)
    p.store(R3, R4, 0x18, SD)
    p.set_jump_pc(R3, "disable")
    p.branch(R4, R2, BEQ, "disable")
    p.label("err")
    p.error()
    p.label("disable")
    p.store(R5, R0, SQ_ENABLE_OFFSET, SW)
    p.label("gotoR1")
    p.goto_r(R4, R1)
    p.set_jump_pc(R3, "gotoR1")
    p.loop(R4, "gotoR1", LABEL_SWITCH_LOOP_CYCLES)
    _add_exec_times(p, dfx_addr + 0x20, label_info_addr)
    p.active_r(R4, R1)
    p.active_i(R5, current_sq_id, on=False)
    p.set_jump_pc(R3, "end")
    p.branch(R0, R0, BEQ, "end")
    _add_exec_times(p, index_addr, label_info_addr)
    p.label("gotoR2")
    p.goto_r(R4, R1)
    p.label("end")
    p.nop()
    return p.pack()


def label_switch_by_index_words() -> int:
    """The program's size in words (``sizeof(rtStarsLabelSwitchByIndexFc_t) / 4``)."""
    return len(label_switch_by_index_program(
        index_addr=0, max_value=1, label_count_addr=0, label_info_addr=0, sq_virtual_addr=0,
        dfx_addr=0, current_sq_id=0)) // 4


def label_switch_by_index_sqe(stream_id: int, task_id: int, *, func_call_addr: int,
                              wr_cqe: int = 1) -> bytes:
    """The 910B label-switch SQE (cond_op_stream_task_v100.cc:56-80): a COND function call,
    ``CONDS_SUB_TYPE_LABEL_SWITCH_BY_INDEX`` (7), csc 1, pre_p 1, the program's size in words."""
    b = bytearray(function_call_sqe(stream_id, task_id, LABEL_SWITCH_BY_INDEX, func_call_addr,
                                    label_switch_by_index_words(), wr_cqe=wr_cqe))
    b[1] |= 1 << 2  # pre_p = 1
    return bytes(b)


def label_set_sqe(stream_id: int, task_id: int, *, wr_cqe: int = 0) -> bytes:
    """LABEL_SET: a PLACE_HOLDER with task_type ``TS_TASK_TYPE_LABEL_SET``
    (cond_op_label_task_v100.cc:23-45); the label's record is written by the host."""
    b = sqe.header(sqe.PLACE_HOLDER, stream_id, task_id, wr_cqe=wr_cqe)
    struct.pack_into("<H", b, 2, TASK_LABEL_SET)
    b[14] = sqe.DEFAULT_CREDIT
    return bytes(b)
