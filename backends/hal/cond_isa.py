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

# opcodes (stars_base_cond_isa_define.hpp:24-36)
OP_IMM, OP, LWI, BRANCH, STREAM = 0x13, 0x33, 0x5B, 0x63, 0x2B
LOAD_IMM, LOAD, STORE, FUNC_CALL, SYSTEM = 0x07, 0x03, 0x27, 0x6B, 0x73
LOOP = 0x7B
# func3 values
ADDI = 0
OR, AND = 6, 7
LB, LD, LBU = 0, 3, 4
BEQ, BNE, BLT, BGE = 0, 1, 4, 5
SB = 0
CSRRW, CSR_JUMP_PC = 1, 3
GOTO_I = 0
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


def _word(opcode: int, rd: int = 0, func3: int = 0, rs1: int = 0, rs2: int = 0,
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
        self._emit([_word(OP_IMM, rd, ADDI, rs1) | (imm & 0xFFF) << 20], 1)

    def op_imm(self, rd: int, rs1: int, func3: int, imm: int) -> None:
        """OP_IMM with a 12-bit immediate (ADDI 0, SLTI 2, SLTIU 3, XORI 4, ORI 6, ANDI 7) or,
        for SLLI 1 / SRLI-SRAI 5, a 6-bit shift and a 6-bit func7 in ``imm``'s bits 0-5/6-11."""
        self._emit([_word(OP_IMM, rd, func3, rs1) | (imm & 0xFFF) << 20], 1)

    def load(self, rd: int, rs1: int, offset: int = 0) -> None:
        """LOAD (LDR): rd = the 64-bit word at rs1 + offset."""
        self._emit([_word(LOAD, rd, LD, rs1) | (offset & 0xFFF) << 20], 1)

    def nop(self) -> None:
        """ADDI r0, r0, 0."""
        self.addi(R0, R0, 0)

    def op(self, rd: int, rs1: int, rs2: int, func3: int, func7: int = 0) -> None:
        """OP: rd = rs1 (func3/func7) rs2."""
        self._emit([_word(OP, rd, func3, rs1, rs2, func7)], 1)

    def lhwi(self, rd: int, imm: int) -> None:
        """LHWI: rd bits 63:49 = imm bits 63:49."""
        self._emit([_word(LWI, rd, LHWI) | ((imm >> 49) & 0x7FFF) << 17], 1)

    def llwi(self, rd: int, imm: int) -> None:
        """LLWI (two words): rd bits 48:0 = imm bits 48:0."""
        self._emit([_word(LWI, rd, LLWI) | ((imm >> 32) & 0x1FFFF) << 15, imm & 0xFFFFFFFF], 2)

    def li(self, rd: int, imm: int) -> None:
        """LHWI + LLWI: the runtime's way of loading a 64-bit immediate."""
        self.lhwi(rd, imm)
        self.llwi(rd, imm)

    def load_imm(self, rd: int, addr: int, func3: int) -> None:
        """LOAD_IMM (two words): rd = memory at the 49-bit address."""
        self._emit([_word(LOAD_IMM, rd, func3) | ((addr >> 32) & 0x1FFFF) << 15,
                    addr & 0xFFFFFFFF], 2)

    def store(self, addr_reg: int, val_reg: int, offset: int, func3: int) -> None:
        """STORE: memory[addr_reg + offset] = val_reg."""
        w = _word(STORE, 0, func3, addr_reg, val_reg, (offset >> 5) & 0x7F)
        self._emit([w | (offset & 0x1F) << 7], 1)

    def set_jump_pc(self, reg: int, target: str) -> None:
        """LHWI + LLWI reg = target >> 4, CSRRW JUMP_PC = reg (stars_cond_isa_helper.cc:668)."""
        def patch(labels: dict[str, int]) -> list[int]:
            p = Program()
            p.li(reg, labels[target] >> 4)
            p._emit([_word(SYSTEM, R0, CSRRW, reg) | CSR_JUMP_PC << 20], 1)
            return p.words()
        self._emit(patch, 4)

    def branch(self, rs1: int, rs2: int, func3: int, target: str) -> None:
        """BRANCH to ``target`` when rs1 (func3) rs2; carries the target's low 4 bits."""
        self._emit(lambda labels: [_word(BRANCH, 0, func3, rs1, rs2)
                                   | (labels[target] & 0xF) << 7], 1)

    def loop(self, rs1: int, target: str, delay_cycles: int = 1100) -> None:
        """LOOP: back to ``target`` (JUMP_PC << 4 | offset4) while rs1 != 0, after
        ``delay_cycles`` (``RtStarsCondOpLoop``, stars_cond_isa_struct.hpp:196-205;
        stars_cond_isa_construct_common.cc:112-121; 1100 as stars_cond_isa_helper.cc:312)."""
        self._emit(lambda labels: [_word(LOOP, 0, 0, rs1) | (labels[target] & 0xF) << 7
                                   | (delay_cycles & 0x1FFF) << 19], 1)

    def jump(self, cond: tuple[int, int, int], target: str) -> None:
        """set_jump_pc (through r1) then branch, as every jump of the runtime's programs."""
        self.set_jump_pc(R1, target)
        self.branch(cond[0], cond[1], cond[2], target)

    def goto_i(self, rd: int, sq_id: int, head: int) -> None:
        """STREAM GOTO_I (two words): SQ ``sq_id``'s head = ``head``."""
        self._emit([_word(STREAM, rd, GOTO_I), (sq_id & 0x7FF) | (head & 0xFFFF) << 16], 2)

    def goto_r(self, rd: int, rs1: int) -> None:
        """STREAM GOTO_R (one word): rs1 holds sq id in bits 10:0 and the head in 31:16
        (``RtStarsCondOpStreamGotoR``, stars_cond_isa_struct.hpp:185-194; the operand
        layout, stars_cond_isa_helper.cc:1646-1650)."""
        self._emit([_word(STREAM, rd, GOTO_R, rs1)], 1)

    def active_r(self, rd: int, rs1: int, *, on: bool = True) -> None:
        """STREAM ACTIVE_R / DEACTIVE_R (one word): enable / disable the SQ whose id is in rs1
        (stars_cond_isa_construct_common.cc:152-169; stars_base_cond_isa_define.hpp:127-134)."""
        self._emit([_word(STREAM, rd, ACTIVE_R if on else DEACTIVE_R, rs1)], 1)

    def func_call(self, rs1: int, rs2: int) -> None:
        """FUNC_CALL: run rs2 words at address rs1."""
        self._emit([_word(FUNC_CALL, 0, 0, rs1, rs2)], 1)

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
