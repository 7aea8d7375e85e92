/*
 * cond.c -- the STARS cond ISA interpreter (README, "What the cond ISA interpreter must do"):
 * a COND SQE carries instruction words from byte 16 (a function call: LHWI/LLWI r1 = program
 * address, LHWI/LLWI r2 = program size in words, FUNC_CALL r1 r2, NOPs); the program is in
 * device memory (here, this process's memory).
 *
 * Encodings (src/runtime/core/inc/cond_isa/v100/stars_cond_isa_struct.hpp, opcodes and func3
 * in src/runtime/core/inc/stars/stars_base_cond_isa_define.hpp:24-180): 32-bit words, opcode
 * bits 0-6, rd 7-9, func3 12-14, rs1 15-17, rs2 20-22; LLWI, LOAD_IMM and GOTO_I take two
 * words. LHWI sets bits 63:49 of rd, LLWI bits 48:0 (stars_cond_isa_construct_common.cc:84-99).
 * A taken branch goes to word (JUMP_PC csr << 4) | its 4-bit offset, from the start of the
 * running program (stars_cond_isa_helper.cc:668-678). R0 reads as zero.
 *
 * Supported: OP_IMM, OP, LWI, LOAD_IMM, LOAD, STORE, BRANCH, SYSTEM (CSRRW/RS/RC), FUNC_CALL,
 * LOOP, STREAM GOTO_I, GOTO_R, ACTIVE_I, DEACTIVE_I, ACTIVE_R, DEACTIVE_R; physical addressing
 * (CSR AXI_USER VA bits clear) of the FSM select register only. Anything else (GQM, the error
 * instruction, encoded 0: stars_cond_isa_construct_common.cc ConstructErrorInstr) is an SQE
 * error.
 */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <time.h>

#include "ts.h"

enum {
    OPC_OP_IMM = 0x13,
    OPC_OP = 0x33,
    OPC_LWI = 0x5B,
    OPC_BRANCH = 0x63,
    OPC_LOOP = 0x7B, /* RtStarsCondOpLoop: offset4 7-10, func3, rs1, delayCycle 19-31 */
    OPC_STREAM = 0x2B,
    OPC_LOAD_IMM = 0x07,
    OPC_LOAD = 0x03,
    OPC_STORE = 0x27,
    OPC_FUNC_CALL = 0x6B,
    OPC_SYSTEM = 0x73,
};
#define CSR_AXI_USER 0u
#define CSR_JUMP_PC 3u
#define LOW49 ((1ull << 49) - 1)
#define MAX_CALL_DEPTH 4
#define SPIN_CHECK 64u /* taken branches between stop checks (and a short sleep) */

typedef struct {
    uint64_t r[11];
    uint64_t csr[4];
    uint32_t taken; /* taken branches, for the periodic stop check */
} cpu_t;

static int64_t sext(uint64_t v, unsigned bits) {
    uint64_t m = 1ull << (bits - 1);
    v &= (1ull << bits) - 1;
    return (int64_t)((v ^ m) - m);
}

static unsigned f_rd(uint32_t w) { return (w >> 7) & 7u; }
static unsigned f_func3(uint32_t w) { return (w >> 12) & 7u; }
static unsigned f_rs1(uint32_t w) { return (w >> 15) & 7u; }
static unsigned f_rs2(uint32_t w) { return (w >> 20) & 7u; }

/* Physical addressing: the program cleared CSR AXI_USER's VA bits
 * (stars_cond_isa_helper.cc:283-304).
 * This device maps no physical memory: the FSM select register is the only physical address it
 * answers; a virtual access to that address is refused as well. */
static int physical(const cpu_t *c) { return (c->csr[CSR_AXI_USER] & TS_AXI_USER_VA_MASK) == 0; }

static int load(const cpu_t *c, uint64_t addr, unsigned func3, uint64_t *out) {
    if (physical(c) || addr == TS_FSM_SEL_PA) {
        if (!physical(c) || addr != TS_FSM_SEL_PA || func3 != 3) return -1;
        *out = ts_fsm_read();
        return 0;
    }
    if (addr == 0) return -1;
    const volatile uint8_t *p = (const volatile uint8_t *)(uintptr_t)addr;
    switch (func3) {
    case 0: *out = (uint64_t)(int64_t)*(const volatile int8_t *)p; return 0;     /* LB */
    case 1: *out = (uint64_t)(int64_t)*(const volatile int16_t *)p; return 0;    /* LH */
    case 2: *out = (uint64_t)(int64_t)*(const volatile int32_t *)p; return 0;    /* LW */
    case 3: *out = *(const volatile uint64_t *)p; return 0;                      /* LD */
    case 4: *out = *p; return 0;                                                 /* LBU */
    case 5: *out = *(const volatile uint16_t *)p; return 0;                      /* LHU */
    case 6: *out = *(const volatile uint32_t *)p; return 0;                      /* LWU */
    default: return -1;
    }
}

static int store(const cpu_t *c, uint64_t addr, unsigned func3, uint64_t v) {
    if (physical(c) || addr == TS_FSM_SEL_PA) {
        if (!physical(c) || addr != TS_FSM_SEL_PA) return -1;
        ts_fsm_select(v);
        return 0;
    }
    if (addr == 0) return -1;
    volatile uint8_t *p = (volatile uint8_t *)(uintptr_t)addr;
    switch (func3) {
    case 0: *p = (uint8_t)v; return 0;
    case 1: *(volatile uint16_t *)p = (uint16_t)v; return 0;
    case 2: *(volatile uint32_t *)p = (uint32_t)v; return 0;
    case 3: *(volatile uint64_t *)p = v; return 0;
    default: return -1;
    }
}

static int op_imm(uint32_t w, uint64_t a, uint64_t *out) {
    int64_t imm = sext(w >> 20, 12);
    unsigned shamt = (w >> 20) & 0x3Fu, f7 = (w >> 26) & 0x3Fu;
    switch (f_func3(w)) {
    case 0: *out = a + (uint64_t)imm; return 0;                     /* ADDI (NOP) */
    case 1: *out = a << shamt; return 0;                            /* SLLI */
    case 2: *out = (int64_t)a < imm; return 0;                      /* SLTI */
    case 3: *out = a < (uint64_t)imm; return 0;                     /* SLTIU */
    case 4: *out = a ^ (uint64_t)imm; return 0;                     /* XORI */
    case 5: *out = f7 == 0x10u ? (uint64_t)((int64_t)a >> shamt) : a >> shamt; return 0;
    case 6: *out = a | (uint64_t)imm; return 0;                     /* ORI */
    default: *out = a & (uint64_t)imm; return 0;                    /* ANDI */
    }
}

static int op_op(uint32_t w, uint64_t a, uint64_t b, uint64_t *out) {
    unsigned f7 = (w >> 25) & 0x7Fu;
    switch (f_func3(w)) {
    case 0: *out = f7 == 0x20u ? a - b : f7 == 0x01u ? a * b : a + b; return 0;
    case 1: *out = a << (b & 63u); return 0;
    case 2: *out = (int64_t)a < (int64_t)b; return 0;
    case 3: *out = a < b; return 0;
    case 4: *out = a ^ b; return 0;
    case 5: *out = f7 == 0x20u ? (uint64_t)((int64_t)a >> (b & 63u)) : a >> (b & 63u); return 0;
    case 6: *out = a | b; return 0;
    default: *out = a & b; return 0;
    }
}

static int branch_taken(unsigned func3, uint64_t a, uint64_t b, int *taken) {
    switch (func3) {
    case 0: *taken = a == b; return 0;
    case 1: *taken = a != b; return 0;
    case 4: *taken = (int64_t)a < (int64_t)b; return 0;
    case 5: *taken = (int64_t)a >= (int64_t)b; return 0;
    case 6: *taken = a < b; return 0;
    case 7: *taken = a >= b; return 0;
    default: return -1;
    }
}

/* GOTO_I: move SQ `sq_id`'s head. The running SQ's own head moves when its COND SQE ends. */
static int do_goto(ts_sq *self, uint32_t sq_id, uint32_t head, ts_cond_effect *fx) {
    if (sq_id == self->id) {
        if (head >= self->depth) return -1;
        fx->has_goto = 1;
        fx->goto_head = head;
        return 0;
    }
    int rc = -1;
    pthread_mutex_lock(&g_ts.mu);
    if (sq_id < TS_MAX_SQ && g_ts.sq[sq_id].used && head < g_ts.sq[sq_id].depth) {
        ts_sq_set_head(&g_ts.sq[sq_id], head);
        pthread_cond_broadcast(&g_ts.cv);
        rc = 0;
    }
    pthread_mutex_unlock(&g_ts.mu);
    return rc;
}

/* ACTIVE_R / DEACTIVE_R: set SQ `sq_id`'s enable (the same state an error clears and
 * halSqCqConfig SQ_STATUS sets; published at reg base + 0x14). */
static int do_active(uint32_t sq_id, int on) {
    int rc = -1;
    pthread_mutex_lock(&g_ts.mu);
    if (sq_id < TS_MAX_SQ && g_ts.sq[sq_id].used) {
        g_ts.sq[sq_id].paused = !on;
        ts_sq_publish(&g_ts.sq[sq_id]);
        pthread_cond_broadcast(&g_ts.cv);
        rc = 0;
    }
    pthread_mutex_unlock(&g_ts.mu);
    return rc;
}

/* A store to an SQ's enable register (reg base + 0x14, bit 0) enables / disables that SQ:
 * the model-execute program deactivates a stream with SW 0 there (stars_cond_isa_helper.cc:490-492). */
static void enable_written(uint64_t addr) {
    pthread_mutex_lock(&g_ts.mu);
    for (uint32_t i = 0; i < TS_MAX_SQ; i++) {
        ts_sq *q = &g_ts.sq[i];
        if (q->used && addr == (uint64_t)(uintptr_t)&q->regs[0x14 / 4]) {
            q->paused = (q->regs[0x14 / 4] & 1u) == 0;
            ts_sq_publish(q);
            pthread_cond_broadcast(&g_ts.cv);
            break;
        }
    }
    pthread_mutex_unlock(&g_ts.mu);
}

/* Run `n` words at `prog`. 0 done; -1 a bad instruction or address; 1 the SQ is stopping. */
static int run(ts_sq *sq, const uint32_t *prog, uint64_t n, cpu_t *c, ts_cond_effect *fx,
               int depth) {
    uint64_t pc = 0;
    while (pc < n) {
        /* the SQ's model was aborted: stop before the next instruction acts (MMT_MODEL_ABORT
         * sets this under the lock before the SQ it polls can go idle) */
        if (__atomic_load_n(&sq->abort_req, __ATOMIC_ACQUIRE)) return 1;
        uint32_t w = prog[pc];
        uint32_t w2 = pc + 1 < n ? prog[pc + 1] : 0;
        uint64_t next = pc + 1, v = 0;
        unsigned rd = f_rd(w);
        switch (w & 0x7Fu) {
        case OPC_OP_IMM:
            op_imm(w, c->r[f_rs1(w)], &v);
            c->r[rd] = v;
            break;
        case OPC_OP:
            op_op(w, c->r[f_rs1(w)], c->r[f_rs2(w)], &v);
            c->r[rd] = v;
            break;
        case OPC_LWI:
            if (f_func3(w) == 0) { /* LHWI: bits 63:49 */
                c->r[rd] = (c->r[rd] & LOW49) | ((uint64_t)(w >> 17) << 49);
            } else if (f_func3(w) == 1) { /* LLWI: bits 48:0 */
                if (pc + 1 >= n) return -1;
                c->r[rd] = (c->r[rd] & ~LOW49) | ((uint64_t)(w >> 15) << 32) | w2;
                next = pc + 2;
            } else {
                return -1;
            }
            break;
        case OPC_LOAD_IMM:
            if (pc + 1 >= n || load(c, ((uint64_t)(w >> 15) << 32) | w2, f_func3(w), &v) != 0)
                return -1;
            c->r[rd] = v;
            next = pc + 2;
            break;
        case OPC_LOAD:
            if (load(c, c->r[f_rs1(w)] + (uint64_t)sext(w >> 20, 12), f_func3(w), &v) != 0)
                return -1;
            c->r[rd] = v;
            break;
        case OPC_STORE: {
            uint64_t imm = ((w >> 7) & 0x1Fu) | (((w >> 25) & 0x7Fu) << 5);
            uint64_t at = c->r[f_rs1(w)] + (uint64_t)sext(imm, 12);
            if (store(c, at, f_func3(w), c->r[f_rs2(w)]) != 0) return -1;
            if (!physical(c)) enable_written(at);
            break;
        }
        case OPC_LOOP:   /* jump while rs1 != 0 (after delayCycle, bits 19-31): a BNE rs1, r0 */
        case OPC_BRANCH: {
            int taken = 0;
            if ((w & 0x7Fu) == OPC_LOOP) {
                if (f_func3(w) != 0) return -1;
                taken = c->r[f_rs1(w)] != 0;
            } else if (branch_taken(f_func3(w), c->r[f_rs1(w)], c->r[f_rs2(w)], &taken) != 0) {
                return -1;
            }
            if (taken) {
                next = (c->csr[CSR_JUMP_PC] << 4) | ((w >> 7) & 0xFu);
                if (next <= pc && ++c->taken % SPIN_CHECK == 0) {
                    if (ts_sq_stopping(sq)) return 1;
                    const struct timespec nap = {0, 100000L};
                    nanosleep(&nap, NULL);
                }
            }
            break;
        }
        case OPC_SYSTEM: {
            unsigned csr = w >> 20;
            if (csr >= 4) return -1;
            uint64_t old = c->csr[csr], src = c->r[f_rs1(w)];
            switch (f_func3(w)) {
            case 1: c->csr[csr] = src; break;
            case 2: c->csr[csr] = old | src; break;
            case 3: c->csr[csr] = old & ~src; break;
            default: return -1;
            }
            c->r[rd] = old;
            break;
        }
        case OPC_FUNC_CALL: {
            uint64_t at = c->r[f_rs1(w)], words = c->r[f_rs2(w)];
            if (depth >= MAX_CALL_DEPTH || at == 0 || words == 0) return -1;
            int rc = run(sq, (const uint32_t *)(uintptr_t)at, words, c, fx, depth + 1);
            if (rc != 0) return rc;
            break;
        }
        case OPC_STREAM:
            if (f_func3(w) == 4) { /* GOTO_R: rs1 holds sqId [10:0], head [31:16]
                                    * (stars_cond_isa_helper.cc:1646-1650) */
                uint64_t v = c->r[f_rs1(w)];
                if (do_goto(sq, (uint32_t)(v & 0x7FFu), (uint32_t)((v >> 16) & 0xFFFFu), fx) != 0)
                    return -1;
                c->r[rd] = 0; /* done: the label switch LOOPs back to its GOTO_R while rd != 0
                               * (stars_cond_isa_helper.cc:951-958) */
                break;
            }
            if (f_func3(w) == 5 || f_func3(w) == 6) { /* ACTIVE_R / DEACTIVE_R: rs1 = sq id
                                    * (stars_cond_isa_construct_common.cc:152-169) */
                if (do_active((uint32_t)(c->r[f_rs1(w)] & 0x7FFu), f_func3(w) == 5) != 0)
                    return -1;
                break;
            }
            if (f_func3(w) == 1 || f_func3(w) == 2) { /* ACTIVE_I / DEACTIVE_I: sqId in bits
                                    * 31:20 (RtStarsCondOpStreamActiveI,
                                    * stars_cond_isa_struct.hpp:146-157) */
                if (do_active(w >> 20, f_func3(w) == 1) != 0) return -1;
                break;
            }
            if (f_func3(w) != 0 || pc + 1 >= n) return -1; /* GOTO_I */
            if (do_goto(sq, w2 & 0x7FFu, w2 >> 16, fx) != 0) return -1;
            next = pc + 2;
            break;
        default:
            return -1;
        }
        c->r[0] = 0;
        pc = next;
    }
    return 0;
}

int ts_cond_run(ts_sq *sq, const uint8_t *s, ts_cond_effect *fx) {
    uint32_t words[12];
    memcpy(words, s + 16, sizeof words);
    cpu_t c;
    memset(&c, 0, sizeof c);
    c.csr[CSR_AXI_USER] = TS_AXI_USER_VA_MASK; /* a program starts on virtual addresses */
    memset(fx, 0, sizeof *fx);
    return run(sq, words, 12, &c, fx, 0);
}
