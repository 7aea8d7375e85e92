"""Assemble STARS cond ISA programs and the SQEs that run them, from the runtime's facts
(hicann/runtime@681ef76): encodings in ``src/runtime/core/inc/cond_isa/v100/
stars_cond_isa_struct.hpp``, opcodes and func3 in ``src/runtime/core/inc/stars/
stars_base_cond_isa_define.hpp:24-180``, the instruction builders in
``src/runtime/core/src/task/task_info/cond_op/stars_cond_isa_construct_common.cc`` and the
value-wait program in ``src/runtime/core/src/task/stars_cond_isa_helper.cc:1305-1506``.

A :class:`Program` is a list of 32-bit words with labels; a jump is ``set_jump_pc`` (LHWI +
LLWI + CSRRW of the target's word index >> 4 into the JUMP_PC csr) then a branch carrying the
index's low 4 bits.
"""

from __future__ import annotations

import struct
from typing import Callable

from . import sqe

# opcodes (stars_base_cond_isa_define.hpp:24-36; GQM 0x05 is not interpreted)
OP_IMM, OP, LWI, BRANCH, STREAM = 0x13, 0x33, 0x5B, 0x63, 0x2B
LOAD_IMM, LOAD, STORE, FUNC_CALL, SYSTEM = 0x07, 0x03, 0x27, 0x6B, 0x73
LOOP, GQM = 0x7B, 0x05
# func3 values
ADDI, SLLI, SRLI, ANDI = 0, 1, 5, 7
ADD, XOR = 0, 4
XORI = 4
OR, AND = 6, 7
LB, LD, LBU = 0, 3, 4
LHU, LWU = 5, 6
BEQ, BNE, BLT, BGE, BLTU, BGEU = 0, 1, 4, 5, 6, 7
SB, SH, SW, SD = 0, 1, 2, 3
CSRRW, CSRRS, CSRRC = 1, 2, 3
CSR_AXI_USER, CSR_CSQ_STATUS, CSR_JUMP_PC = 0, 1, 3
GOTO_I, ACTIVE_I, DEACTIVE_I = 0, 1, 2
GOTO_R = 4
ACTIVE_R = 5
DEACTIVE_R = 6
LHWI, LLWI = 0, 1
R0, R1, R2, R3, R4, R5 = range(6)
# the wait conditions (stars_cond_isa_define.hpp:301-304)
WAIT_GEQ, WAIT_EQ, WAIT_AND, WAIT_NOR = 0, 1, 2, 3
# the value-wait task's SQEs (internal_error_define.hpp:23; task_base.hpp:137)
MEM_WAIT_SQE_NUM = 4
TASK_MEM_WAIT_PROF = 31

Patch = Callable[[dict[str, int]], list[int]]


def encode(opcode: int, rd: int = 0, func3: int = 0, rs1: int = 0, rs2: int = 0,
          top: int = 0) -> int:
    """opcode 0-6, rd 7-9, func3 12-14, rs1 15-17, rs2 20-22, ``top`` from bit 25."""
    return (opcode | rd << 7 | func3 << 12 | rs1 << 15 | rs2 << 20 | top << 25) & 0xFFFFFFFF


class Program:
    """A cond ISA program under construction; :meth:`words` resolves the labels."""

    def __init__(self) -> None:
        self._items: list[list[int] | Patch] = []
        self._labels: dict[str, int] = {}
        self._size = 0

    def _emit(self, words: list[int] | Patch, size: int) -> None:
        self._items.append(words)
        self._size += size

    def label(self, name: str) -> None:
        """Name the next instruction's word index."""
        self._labels[name] = self._size

    def addi(self, rd: int, rs1: int, imm: int) -> None:
        """OP_IMM ADDI: rd = rs1 + imm (12-bit)."""
        self._emit([encode(OP_IMM, rd, ADDI, rs1) | (imm & 0xFFF) << 20], 1)

    def op_imm(self, rd: int, rs1: int, func3: int, imm: int) -> None:
        """OP_IMM with a 12-bit immediate (ADDI 0, SLTI 2, SLTIU 3, XORI 4, ORI 6, ANDI 7) or,
        for SLLI 1 / SRLI-SRAI 5, a 6-bit shift and a 6-bit func7 in ``imm``'s bits 0-5/6-11."""
        self._emit([encode(OP_IMM, rd, func3, rs1) | (imm & 0xFFF) << 20], 1)

    def load(self, rd: int, rs1: int, offset: int = 0) -> None:
        """LOAD (LDR): rd = the 64-bit word at rs1 + offset."""
        self._emit([encode(LOAD, rd, LD, rs1) | (offset & 0xFFF) << 20], 1)

    def nop(self) -> None:
        """ADDI r0, r0, 0."""
        self.addi(R0, R0, 0)

    def op(self, rd: int, rs1: int, rs2: int, func3: int, func7: int = 0) -> None:
        """OP: rd = rs1 (func3/func7) rs2."""
        self._emit([encode(OP, rd, func3, rs1, rs2, func7)], 1)

    def lhwi(self, rd: int, imm: int) -> None:
        """LHWI: rd bits 63:49 = imm bits 63:49."""
        self._emit([encode(LWI, rd, LHWI) | ((imm >> 49) & 0x7FFF) << 17], 1)

    def llwi(self, rd: int, imm: int) -> None:
        """LLWI (two words): rd bits 48:0 = imm bits 48:0."""
        self._emit([encode(LWI, rd, LLWI) | ((imm >> 32) & 0x1FFFF) << 15, imm & 0xFFFFFFFF], 2)

    def li(self, rd: int, imm: int) -> None:
        """LHWI + LLWI: the runtime's way of loading a 64-bit immediate."""
        self.lhwi(rd, imm)
        self.llwi(rd, imm)

    def load_imm(self, rd: int, addr: int, func3: int) -> None:
        """LOAD_IMM (two words): rd = memory at the 49-bit address."""
        self._emit([encode(LOAD_IMM, rd, func3) | ((addr >> 32) & 0x1FFFF) << 15,
                    addr & 0xFFFFFFFF], 2)

    def store(self, addr_reg: int, val_reg: int, offset: int, func3: int) -> None:
        """STORE: memory[addr_reg + offset] = val_reg."""
        w = encode(STORE, 0, func3, addr_reg, val_reg, (offset >> 5) & 0x7F)
        self._emit([w | (offset & 0x1F) << 7], 1)

    def set_jump_pc(self, reg: int, target: str) -> None:
        """LHWI + LLWI reg = target >> 4, CSRRW JUMP_PC = reg (stars_cond_isa_helper.cc:668)."""
        def patch(labels: dict[str, int]) -> list[int]:
            p = Program()
            p.li(reg, labels[target] >> 4)
            p._emit([encode(SYSTEM, R0, CSRRW, reg) | CSR_JUMP_PC << 20], 1)
            return p.words()
        self._emit(patch, 4)

    def branch_to(self, rs1: int, rs2: int, func3: int, offset4: int) -> None:
        """BRANCH carrying a fixed 4-bit offset (the target is JUMP_PC << 4 | offset4)."""
        self._emit([encode(BRANCH, 0, func3, rs1, rs2) | (offset4 & 0xF) << 7], 1)

    def branch(self, rs1: int, rs2: int, func3: int, target: str) -> None:
        """BRANCH to ``target`` when rs1 (func3) rs2; carries the target's low 4 bits."""
        self._emit(lambda labels: [encode(BRANCH, 0, func3, rs1, rs2)
                                   | (labels[target] & 0xF) << 7], 1)

    def loop(self, rs1: int, target: str, delay_cycles: int = 1100) -> None:
        """LOOP: back to ``target`` (JUMP_PC << 4 | offset4) while rs1 != 0, after
        ``delay_cycles`` (``RtStarsCondOpLoop``, stars_cond_isa_struct.hpp:196-205;
        stars_cond_isa_construct_common.cc:112-121; 1100 as stars_cond_isa_helper.cc:312)."""
        self._emit(lambda labels: [encode(LOOP, 0, 0, rs1) | (labels[target] & 0xF) << 7
                                   | (delay_cycles & 0x1FFF) << 19], 1)

    def jump(self, cond: tuple[int, int, int], target: str) -> None:
        """set_jump_pc (through r1) then branch, as every jump of the runtime's programs."""
        self.set_jump_pc(R1, target)
        self.branch(cond[0], cond[1], cond[2], target)

    def goto_i(self, rd: int, sq_id: int, head: int) -> None:
        """STREAM GOTO_I (two words): SQ ``sq_id``'s head = ``head``."""
        self._emit([encode(STREAM, rd, GOTO_I), (sq_id & 0x7FF) | (head & 0xFFFF) << 16], 2)

    def active_i(self, rd: int, sq_id: int, *, on: bool = True) -> None:
        """STREAM ACTIVE_I / DEACTIVE_I (one word): enable / disable SQ ``sq_id``, held in bits
        31:20 (``RtStarsCondOpStreamActiveI``, stars_cond_isa_struct.hpp:146-157;
        stars_cond_isa_construct_common.cc:134-150)."""
        self._emit([encode(STREAM, rd, ACTIVE_I if on else DEACTIVE_I) | (sq_id & 0xFFF) << 20], 1)

    def goto_r(self, rd: int, rs1: int) -> None:
        """STREAM GOTO_R (one word): rs1 holds sq id in bits 10:0 and the head in 31:16
        (``RtStarsCondOpStreamGotoR``, stars_cond_isa_struct.hpp:185-194; the operand
        layout, stars_cond_isa_helper.cc:1646-1650)."""
        self._emit([encode(STREAM, rd, GOTO_R, rs1)], 1)

    def active_r(self, rd: int, rs1: int, *, on: bool = True) -> None:
        """STREAM ACTIVE_R / DEACTIVE_R (one word): enable / disable the SQ whose id is in rs1
        (stars_cond_isa_construct_common.cc:152-169; stars_base_cond_isa_define.hpp:127-134)."""
        self._emit([encode(STREAM, rd, ACTIVE_R if on else DEACTIVE_R, rs1)], 1)

    def csr(self, rd: int, rs1: int, csr: int, func3: int) -> None:
        """SYSTEM CSRRW / CSRRS / CSRRC: rd = csr, then csr = rs1 / csr | rs1 / csr & ~rs1."""
        self._emit([encode(SYSTEM, rd, func3, rs1) | (csr & 0xFFF) << 20], 1)

    def error(self) -> None:
        """The error instruction: a word of 0 (``ConstructErrorInstr``,
        stars_cond_isa_construct_common.cc)."""
        self._emit([0], 1)

    def word(self, w: int) -> None:
        """A raw instruction word (for instructions the device must refuse)."""
        self._emit([w & 0xFFFFFFFF], 1)

    def func_call(self, rs1: int, rs2: int) -> None:
        """FUNC_CALL: run rs2 words at address rs1."""
        self._emit([encode(FUNC_CALL, 0, 0, rs1, rs2)], 1)

    def words(self) -> list[int]:
        """The program's words, labels resolved."""
        out: list[int] = []
        for item in self._items:
            out.extend(item(self._labels) if callable(item) else item)
        return out

    def pack(self) -> bytes:
        """The words as little-endian bytes."""
        return struct.pack(f"<{len(self.words())}I", *self.words())


def _condition(flag: int, value: int) -> tuple[int, int, int, int, int]:
    """(op func3, branch func3, reverse branch func3, value1, value2) for a wait condition
    (stars_cond_isa_helper.cc:1234-1300): wait until (*addr op value1) branch value2."""
    if flag == WAIT_GEQ:
        return OR, BGE, BLT, 0, value
    if flag == WAIT_EQ:
        return OR, BEQ, BNE, 0, value
    if flag == WAIT_AND:
        return AND, BNE, BEQ, value, 0
    if flag == WAIT_NOR:
        return OR, BNE, BEQ, value, 0xFFFF_FFFF_FFFF_FFFF
    raise ValueError(f"wait flag {flag} is not one of GEQ 0, EQ 1, AND 2, NOR 3")


def mem_wait_program(*, dev_addr: int, value: int, flag: int, byte_wide: bool, sq_id: int,
                     sq_head_pre: int, sq_head_next: int, last_sqe_pos: int,
                     sq_tail_reg_addr: int, prof_disable_addr: int, prof_switch_addr: int,
                     max_loop: int = 15) -> Program:
    """The value-wait function-call program, instruction for instruction in the order of
    ``RtStarsMemWaitValueLastInstrFc`` (stars_cond_isa_define.hpp:310-) as
    ``ConstructMemWaitValueInstr2`` fills it (stars_cond_isa_helper.cc:1390-1506)."""
    opf, br, rev, value1, value2 = _condition(flag, value)
    p = Program()
    p.addi(R3, R0, 0)                                   # loop index
    p.li(R5, value2)
    p.addi(R4, R0, 0)
    p.llwi(R4, max_loop)
    p.label("loadValue")
    p.load_imm(R2, dev_addr, LBU if byte_wide else LD)
    p.li(R1, value1)
    p.op(R2, R2, R1, opf)
    p.jump((R2, R5, br), "success")
    p.addi(R3, R3, 1)
    p.jump((R3, R4, BGE), "failed")
    p.nop()
    p.nop()
    p.jump((R2, R5, rev), "loadValue")
    p.label("success")
    p.load_imm(R2, prof_disable_addr, LD)
    p.jump((R2, R0, BEQ), "nextCheck")
    p.li(R4, prof_disable_addr)
    p.store(R4, R0, 0, SB)
    p.jump((R2, R0, BNE), "end")
    p.label("failed")
    p.load_imm(R2, prof_disable_addr, LD)
    p.jump((R2, R0, BNE), "gotoPre")
    p.load_imm(R3, prof_switch_addr, LD)
    p.jump((R3, R0, BEQ), "gotoPre")
    p.li(R4, prof_disable_addr)
    p.li(R5, 1)
    p.store(R4, R5, 0, SB)
    p.jump((R3, R0, BNE), "end")
    p.label("gotoPre")
    p.goto_i(R5, sq_id, sq_head_pre)
    p.jump((R2, R2, BEQ), "end")
    p.label("gotoNext")
    p.goto_i(R5, sq_id, sq_head_next)
    p.jump((R2, R2, BEQ), "end")
    p.label("nextCheck")
    p.load_imm(R2, sq_tail_reg_addr, LD)
    p.li(R3, last_sqe_pos)
    p.jump((R2, R3, BEQ), "nextCheck")
    p.jump((R2, R3, BNE), "gotoNext")
    p.label("end")
    p.nop()
    return p


def function_call_sqe(stream_id: int, task_id: int, sub_type: int, program_addr: int,
                      program_words: int, *, wr_cqe: int = 1, reserved1: int = 0) -> bytes:
    """A COND SQE calling a program (``RtStarsFunctionCallSqe``, stars_sqe.hpp:426-442;
    ``ConstructFunctionCallInstr``, stars_cond_isa_helper.hpp:243-262): u8 @8 conds_sub_type,
    u16 @12 reserved1 (a model id for model execute), u8 @14 credit, byte 15 bit 7 csc, then
    LHWI/LLWI r1 = address, LHWI/LLWI r2 = size in words, FUNC_CALL r1 r2, five NOPs."""
    b = sqe.header(sqe.COND, stream_id, task_id, wr_cqe=wr_cqe)
    b[8] = sub_type
    struct.pack_into("<H", b, 12, reserved1)
    b[14] = sqe.DEFAULT_CREDIT
    b[15] = 0x80
    p = Program()
    p.li(R1, program_addr)
    p.li(R2, program_words)
    p.func_call(R1, R2)
    for _ in range(5):
        p.nop()
    b[16:64] = p.pack()
    return bytes(b)


def value_wait_sqes(stream_id: int, task_id: int, *, first_pos: int, depth: int,
                    program_addr: int, program_words: int, scratch_addr: int) -> list[bytes]:
    """The four SQEs of a value wait (memory_task_v100.cc:684-696): a NOP placeholder, a
    WRITE_VALUE of 0 to the task's scratch address, the COND function call
    (``CONDS_SUB_TYPE_MEM_WAIT_VALUE``), and a PLACE_HOLDER ``TS_TASK_TYPE_MEM_WAIT_PROF`` whose
    u16 @16 dest_sqe_pos is the WRITE_VALUE's position (memory_task_v100.cc:607-631)."""
    ph = sqe.header(sqe.PLACE_HOLDER, stream_id, task_id, wr_cqe=0)
    ph[1] |= 1 << 2  # pre_p = 1
    struct.pack_into("<H", ph, 2, TASK_MEM_WAIT_PROF)
    ph[14] = sqe.DEFAULT_CREDIT
    struct.pack_into("<H", ph, 16, (first_pos + 1) % depth)
    return [
        sqe.nop(stream_id, task_id),
        sqe.write_value(stream_id, task_id, scratch_addr, bytes(8), wr_cqe=0),
        function_call_sqe(stream_id, task_id, sqe.CONDS_MEM_WAIT_VALUE, program_addr,
                          program_words, wr_cqe=0),
        bytes(ph),
    ]


# ---- model execute (stars_cond_isa_helper.cc:197-626,
#      model_execute_task_func_call.cc:171-291) ----

#: the 910B FSM select register, a physical address: RT_STARS_BASE_ADDR 0x6A0000000 +
#: STARS_SIMPLE_RTSQ_FSM_SEL_REG 0x4880 (910_B_93/dev_info_reg.cc:165, spec/base_info.hpp:74,114)
FSM_SEL_PA_910B = 0x06A0000000 + 0x4880
#: the SQ's simple registers (stars_base_cond_isa_define.hpp:16-19)
SQ_TAIL_OFFSET, SQ_HEAD_OFFSET, SQ_ENABLE_OFFSET = 0x8, 0x10, 0x14
#: CSR AXI_USER bits cleared for physical, set again for virtual addressing
#: (stars_cond_isa_helper.cc:283-304)
AXI_USER_VA_MASK = 0x1_0000_0001
#: 910B ``rtsqShamt``: the SQ id bits of the FSM select register (910_B_93/dev_info_reg.cc:236)
RTSQ_SHAMT_910B = 0x7FF
FSM_LOOP_CYCLES = 1100  # stars_cond_isa_helper.cc:312
#: the program's start is 256-byte aligned (model_execute_task_func_call.cc:152-157)
FUNC_CALL_ALIGN = 256


def _model_execute(p: Program, *, head_sq_arr: int, head_sq_max: int, stream_svm_arr: int,
                   fsm_sel_addr: int, sq_virtual_addr: int, dfx_addr: int) -> None:
    """``RtStarsModelExeFuncCall`` for a root model (deltaOffset 0), part by part in the order of
    ``ConstrucModelExeFuncCall`` (stars_cond_isa_helper.cc:614-626); every jump target is a word
    index from the program's start (model_execute_task_func_call.cc:244-256)."""
    # ScanSq (:197-266): r2 = index; r1 = head SQ array, r4 = its length; r3 = the SQ id
    p.addi(R2, R0, 0)
    p.label("scanSq")
    p.li(R1, head_sq_arr)
    p.li(R4, head_sq_max)
    p.set_jump_pc(R5, "end")
    p.branch(R2, R4, BGEU, "end")
    p.op_imm(R3, R2, SLLI, 3)
    p.op(R4, R1, R3, ADD)
    p.load(R3, R4, 0)
    # CheckSqFsm (:268-349): select the SQ in the FSM register (physical), loop until the
    # register names it and its state (bits 35:32) is idle
    p.label("checkSqFsm")
    p.li(R4, fsm_sel_addr)
    p.li(R1, AXI_USER_VA_MASK)
    p.csr(R0, R1, CSR_AXI_USER, CSRRC)
    p.store(R4, R3, 0, SW)
    p.li(R4, fsm_sel_addr)
    p.load(R4, R4, 0)
    p.li(R1, AXI_USER_VA_MASK)
    p.csr(R0, R1, CSR_AXI_USER, CSRRS)
    p.addi(R1, R4, 0)
    p.op_imm(R1, R1, ANDI, RTSQ_SHAMT_910B)
    p.op(R1, R1, R3, XOR)
    p.set_jump_pc(R5, "checkSqFsm")
    p.loop(R1, "checkSqFsm", FSM_LOOP_CYCLES)
    p.op_imm(R4, R4, SRLI, 32)
    p.op_imm(R4, R4, ANDI, 0xF)
    p.set_jump_pc(R1, "checkSqFsm")
    p.loop(R4, "checkSqFsm", FSM_LOOP_CYCLES)
    p.set_jump_pc(R1, "errInstr")
    p.branch(R4, R0, BNE, "errInstr")
    # CheckSqDisable (:351-423): r4 = the SQ's register base from the SQ address array; its
    # enable bit is bit 32 of the 64-bit word at head offset; disabled: straight to GOTO_R
    p.op_imm(R5, R3, SLLI, 3)
    p.li(R4, sq_virtual_addr)
    p.op(R4, R4, R5, ADD)
    p.load(R4, R4, 0)
    p.set_jump_pc(R5, "checkSqDisableErr")
    p.branch(R4, R0, BEQ, "checkSqDisableErr")
    p.load(R1, R4, SQ_HEAD_OFFSET)
    p.op_imm(R1, R1, SLLI, 31)
    p.op_imm(R1, R1, SRLI, 63)
    p.set_jump_pc(R5, "deactiveGotoR")
    p.branch(R1, R0, BEQ, "deactiveGotoR")
    # CheckSqHeadTail (:425-481): an enabled SQ must have run to its tail
    p.load(R5, R4, SQ_HEAD_OFFSET)
    p.op_imm(R5, R5, SLLI, 48)
    p.op_imm(R5, R5, SRLI, 48)
    p.load(R1, R4, SQ_TAIL_OFFSET)
    p.op_imm(R1, R1, SLLI, 48)
    p.op_imm(R1, R1, SRLI, 48)
    p.op(R1, R1, R5, XOR)
    p.set_jump_pc(R5, "checkSqHeadTailErr")
    p.branch(R1, R0, BNE, "checkSqHeadTailErr")
    # DeactiveSq (:483-503): SW 0 to the enable register, GOTO_R r3 (head 0)
    p.store(R4, R0, SQ_ENABLE_OFFSET, SW)
    p.label("deactiveGotoR")
    p.goto_r(R4, R3)
    # ActiveHeadSq (:522-580): count the stream's execution (u16 at its svm address), ACTIVE_R
    p.op_imm(R5, R2, SLLI, 3)
    p.addi(R2, R2, 1)
    p.li(R4, stream_svm_arr)
    p.op(R5, R4, R5, ADD)
    p.load(R4, R5, 0)
    p.load(R5, R4, 0)
    p.addi(R5, R5, 1)
    p.store(R4, R5, 0, SH)
    p.active_r(R5, R3)
    p.set_jump_pc(R4, "scanSq")
    p.branch(R0, R0, BEQ, "scanSq")
    # the error parts (:584-610) and the end
    p.label("checkSqDisableErr")
    p.li(R5, dfx_addr)
    p.store(R5, R4, 0, SW)
    p.error()
    p.label("checkSqHeadTailErr")
    p.li(R5, dfx_addr)
    p.store(R5, R1, 8, SW)
    p.error()
    p.label("errInstr")
    p.error()
    p.label("end")
    p.nop()


def model_execute_words() -> int:
    """The program's size in words (``funcCallInstrSize / 4``), independent of its operands."""
    p = Program()
    _model_execute(p, head_sq_arr=0, head_sq_max=0, stream_svm_arr=0, fsm_sel_addr=0,
                   sq_virtual_addr=0, dfx_addr=0)
    return len(p.words())


def model_execute_block(*, func_call_addr: int, head_sq_ids: list[int],
                        exec_times_addrs: list[int], sq_virtual_addr: int, dfx_addr: int,
                        fsm_sel_addr: int = FSM_SEL_PA_910B) -> bytes:
    """What the runtime copies to ``func_call_addr`` (model_execute_task_func_call.cc:171-237):
    the program, then the head streams' SQ ids (u64 each), then the addresses of their u16
    execution counters (``GetExecutedTimesSvm``). ``sq_virtual_addr`` is the device's array of
    SQ register addresses indexed by SQ id (device_sq_cq_pool.cc:105-113)."""
    if len(head_sq_ids) != len(exec_times_addrs) or not head_sq_ids:
        raise ValueError("one execution counter per head SQ, and at least one head SQ")
    if func_call_addr % FUNC_CALL_ALIGN:
        raise ValueError(f"the program address is {FUNC_CALL_ALIGN}-byte aligned")
    size = model_execute_words() * 4
    p = Program()
    _model_execute(p, head_sq_arr=func_call_addr + size, head_sq_max=len(head_sq_ids),
                   stream_svm_arr=func_call_addr + size + 8 * len(head_sq_ids),
                   fsm_sel_addr=fsm_sel_addr, sq_virtual_addr=sq_virtual_addr,
                   dfx_addr=dfx_addr)
    return p.pack() + struct.pack(f"<{2 * len(head_sq_ids)}Q", *head_sq_ids, *exec_times_addrs)


def model_execute_sqe(stream_id: int, task_id: int, *, model_id: int, func_call_addr: int,
                      wr_cqe: int = 1) -> bytes:
    """The model-execute SQE (model_execute_task_v100.cc:43-67): a COND function call,
    ``CONDS_SUB_TYPE_MODEL_EXEC``, u16 @12 reserved1 = model id, post_p 1, the program's size
    in words."""
    b = bytearray(function_call_sqe(stream_id, task_id, sqe.CONDS_MODEL_EXEC, func_call_addr,
                                    model_execute_words(), wr_cqe=wr_cqe, reserved1=model_id))
    b[1] |= 1 << 4  # post_p = 1
    return bytes(b)
