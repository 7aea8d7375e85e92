/*
 * ts_core.c -- the TS core: one device thread per SQ runs its SQEs strictly in order and
 * reports completions to the SQ's CQ (../README.md, "Device semantics").
 *
 * Everything shared (SQ and CQ rings, event and notify tables) is under g_ts.mu; g_ts.cv is
 * broadcast on every change, so a wait on one SQ wakes when another SQ records. Work that
 * touches device memory (copies, writes, kernels) runs without the lock.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ts.h"

ts_device g_ts = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* what one SQE came to: the CQE's error fields and the event-record timestamp */
typedef struct {
    uint8_t error_type;
    uint32_t error_code;
    uint64_t timestamp;
    ts_cond_effect fx; /* a COND SQE's GOTO_I on its own SQ */
} ts_result;

static const ts_result OK = {0, 0, 0, {0, 0}};
static const ts_result SQE_ERROR = {MDLRI_CQE_ERR_SQE_ERROR, MDLRI_TS_ERROR_TASK_SQE_ERROR, 0,
                                    {0, 0}};
static const ts_result TIMED_OUT = {MDLRI_CQE_ERR_TASK_TIMEOUT, MDLRI_TS_ERROR_TASK_TIMEOUT, 0,
                                    {0, 0}};
static const ts_result EXCEPTION = {MDLRI_CQE_ERR_EXCEPTION, MDLRI_TS_ERROR_TASK_EXCEPTION, 0,
                                    {0, 0}};

void ts_sq_publish(ts_sq *sq) {
    sq->regs[0x8 / 4] = sq->tail;
    sq->regs[0x10 / 4] = sq->head;
    sq->regs[0x14 / 4] = sq->paused ? 0u : 1u;
}

void ts_sq_set_head(ts_sq *sq, uint32_t head) {
    sq->queued = (sq->tail + sq->depth - head) % sq->depth;
    sq->head = head;
    ts_sq_publish(sq);
}

uint64_t ts_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* ---- CQs (lock held) ---- */

int ts_cq_alloc(uint32_t want, uint32_t depth, uint32_t *out) {
    uint32_t id = want;
    if (id == MDLRI_SQCQ_UMAX) {
        for (id = 0; id < TS_MAX_CQ && g_ts.cq[id].used; id++) {
        }
    }
    if (id >= TS_MAX_CQ || g_ts.cq[id].used) {
        mdlri_hal_trace("no free cq", TS_MAX_CQ, (long)want);
        return DRV_ERROR_NO_RESOURCES;
    }
    if (depth == 0) depth = TS_DEFAULT_DEPTH;
    ts_cqe *ring = calloc(depth, sizeof *ring);
    if (ring == NULL) return DRV_ERROR_NO_RESOURCES;
    g_ts.cq[id] = (ts_cq){.used = 1, .depth = depth, .ring = ring};
    *out = id;
    return DRV_ERROR_NONE;
}

void ts_cq_release(uint32_t id) {
    if (id >= TS_MAX_CQ || !g_ts.cq[id].used) return;
    free(g_ts.cq[id].ring);
    memset(&g_ts.cq[id], 0, sizeof g_ts.cq[id]);
}

/* Queue one CQE; a full CQ drops its oldest report (the runtime drains it long before). */
static void cq_push(uint32_t cq_id, const ts_cqe *e) {
    if (cq_id >= TS_MAX_CQ || !g_ts.cq[cq_id].used) return;
    ts_cq *cq = &g_ts.cq[cq_id];
    if (cq->tail - cq->head == cq->depth) cq->head++;
    cq->ring[cq->tail % cq->depth] = *e;
    cq->tail++;
}

/* ---- waits (lock held; they drop it while blocked) ---- */

/* Block until table[id] is set, the SQ is stopped (or its model aborted), or `timeout_s`
 * seconds pass (0: none). 1 when set, 0 when timed out, -1 when stopped. */
static int wait_flag(ts_sq *sq, const uint8_t *table, uint32_t id, uint32_t timeout_s) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline); /* the default condvar clock */
    deadline.tv_sec += (time_t)timeout_s;
    while (!table[id]) {
        if (sq->stop || sq->abort_req) return -1;
        if (timeout_s == 0) {
            pthread_cond_wait(&g_ts.cv, &g_ts.mu);
        } else if (pthread_cond_timedwait(&g_ts.cv, &g_ts.mu, &deadline) == ETIMEDOUT &&
                   !table[id]) {
            return 0;
        }
    }
    return 1;
}

/* ---- the SQE executors (lock NOT held unless said) ---- */

static uint64_t addr(uint32_t low, uint32_t high) { return ((uint64_t)high << 32) | low; }

static ts_result run_sdma(const uint8_t *s) {
    uint8_t ptr_mode = sqe_u8(s, 15) & 1u;
    uint8_t opcode = (uint8_t)(sqe_u32(s, 16) & 0xFFu);
    if (ptr_mode != 0 || opcode != 0) return SQE_ERROR; /* pointer mode, reduce: not yet */
    uint32_t len = sqe_u32(s, 28);
    uint64_t src = addr(sqe_u32(s, 32), sqe_u32(s, 36));
    uint64_t dst = addr(sqe_u32(s, 40), sqe_u32(s, 44));
    if (len != 0 && (src == 0 || dst == 0)) return SQE_ERROR;
    if (len != 0) memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, len);
    return OK;
}

/* PCIe DMA (type 17, RtStarsPcieDmaSqe, stars_dma.hpp:47-82; built by ConstructPcieDmaSqe,
 * memory_task_v100.cc:158-220): on STARS the runtime puts the virtual addresses in (u64 @32
 * src, u64 @40 dst, u64 @48 length; dmaKernelConvertFlag, memory_memcpy_async_task.cc:598-600)
 * with word 7 (@28) bits isConverted 0, isDsaUpdate 1, isSqeUpdate 2 clear. The 2D form
 * (isConverted) and the SQE-update forms (dst = sq id << 32 | position) are not run yet. */
static ts_result run_pcie_dma(const uint8_t *s) {
    uint32_t flags = sqe_u32(s, 28) & 0x7u;
    if (flags != 0) return SQE_ERROR;
    uint64_t src = sqe_u64(s, 32), dst = sqe_u64(s, 40), len = sqe_u64(s, 48);
    if (len != 0 && (src == 0 || dst == 0)) return SQE_ERROR;
    if (len != 0) memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, (size_t)len);
    return OK;
}

/* The write a WRITE_VALUE describes, from its payload `w`: u32 @0 write_addr_low, u32 @4 bits
 * 0-16 write_addr_high, bits 20-22 awsize, bit 31 va; u32 @8 res7 (the event id of an event
 * reset); u32 @12 sub_type; @16.. write_value_part0..7 (the SQE's bytes 16-63,
 * RtStarsWriteValueSqe, stars_sqe.hpp:51-81; the same layout as the pointer-mode descriptor,
 * RtStarsWriteValuePtrDst, :104-121). Lock held. */
static ts_result write_payload_locked(const uint8_t *w) {
    uint32_t sub = sqe_u32(w, 12);
    if (sub == WV_SUB_EVENT_RESET) {
        uint32_t id = sqe_u32(w, 8);
        if (id >= TS_MAX_EVENT) return SQE_ERROR;
        g_ts.event[id] = 0;
        return OK;
    }
    if (sub != WV_SUB_DEFAULT) return SQE_ERROR;
    uint32_t w1 = sqe_u32(w, 4);
    uint64_t dst = addr(sqe_u32(w, 0), w1 & 0x1FFFFu);
    unsigned awsize = (w1 >> 20) & 0x7u;
    if (awsize > 5 || dst == 0) return SQE_ERROR;
    size_t n = (size_t)1 << awsize; /* 1, 2, 4, 8, 16, 32 bytes from write_value_part0.. */
    memcpy((void *)(uintptr_t)dst, w + 16, n);
    return OK;
}

/* WRITE_VALUE: a plain write (value write), the event-reset form, or pointer mode (u8 @15 bit 0
 * ptr_mode, RtStarsWriteValuePtrSqe, stars_sqe.hpp:83-102): u32 @16 / u32 @20 bits 0-16 then
 * address a 64-byte descriptor STARS reads and performs. The runtime's external event record
 * in a capture goes this way (ConstructWriteValueSqePtr, common_task_v100.cc:64-84; the
 * descriptor filled by FillExternalRecordRefreshEntry, capture_model_adapt_v100.cc:69-83).
 * Lock held. */
static ts_result run_write_value_locked(const uint8_t *s) {
    if ((sqe_u8(s, 15) & 1u) == 0) return write_payload_locked(s + 16);
    uint64_t desc = addr(sqe_u32(s, 16), sqe_u32(s, 20) & 0x1FFFFu);
    if (desc == 0) return SQE_ERROR;
    uint8_t d[64];
    memcpy(d, (const void *)(uintptr_t)desc, sizeof d);
    return write_payload_locked(d);
}

static ts_result run_place_holder(ts_sq *sq, const uint8_t *s) {
    uint16_t task_type = sqe_u16(s, 2);
    if (task_type == PH_TASK_MEM_WAIT_PROF) { /* back to u16 @16 dest_sqe_pos
                                                (memory_task_v100.cc:607-631) */
        ts_result r = OK;
        r.fx.has_goto = 1;
        r.fx.goto_head = sqe_u16(s, 16) % sq->depth;
        return r;
    }
    if (task_type == PH_TASK_RINGBUFFER_CONTROL)
        return ts_caps_ringbuffer(s) == 0 ? OK : SQE_ERROR;
    if (task_type == PH_TASK_MEMCPY_WITHOUT_SDMA) {
        uint64_t src = sqe_u64(s, 16), dst = sqe_u64(s, 24);
        uint32_t len = sqe_u32(s, 32);
        if (len != 0 && (src == 0 || dst == 0)) return SQE_ERROR;
        if (len != 0) memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, len);
    }
    /* NOP (103) and the TS-cpu maintenance placeholders complete with nothing to do */
    return OK;
}

int ts_sq_stopping(ts_sq *sq) {
    pthread_mutex_lock(&g_ts.mu);
    int stop = sq->stop || sq->abort_req;
    pthread_mutex_unlock(&g_ts.mu);
    return stop;
}

/* The SMMU's check: a kernel with spans reads its argument block and touches its spans only
 * inside memory this device handed out or mapped (mdlri_hal_mem_room); anything else faults
 * before the kernel runs. A kernel SQE whose argument block was freed and reused (a stale
 * SQE the runtime sends again) then faults as on the NPU instead of writing over the host
 * process through pointers that are not device addresses. */
static int kernel_memory_mapped(const ts_kernel *k, const void *args) {
    if (k->spans == NULL) return 1;
    if (mdlri_hal_mem_room((uint64_t)(uintptr_t)args) < k->args_size) {
        mdlri_hal_trace("kernel arguments outside device memory", (long)(uintptr_t)args,
                        (long)k->args_size);
        return 0;
    }
    mdlri_hal_span span[MDLRI_HAL_MAX_SPANS];
    int n = k->spans(args, k->args_size, span);
    for (int i = 0; i < n && i < MDLRI_HAL_MAX_SPANS; i++) {
        if (span[i].bytes != 0 && mdlri_hal_mem_room(span[i].base) < span[i].bytes) {
            mdlri_hal_trace("kernel access outside device memory", (long)span[i].base,
                            (long)span[i].bytes);
            return 0;
        }
    }
    return 1;
}

/* A kernel SQE: the host kernel bound to its pc, once per block. A kernel with a ready check
 * counts as running until the check passes; its kernel credit (u8 @14) bounds that time. */
static ts_result run_kernel(ts_sq *sq, const uint8_t *s, int *stopped) {
    uint64_t pc = addr(sqe_u32(s, 32), sqe_u32(s, 36) & 0xFFFFu);
    uint64_t args = addr(sqe_u32(s, 40), sqe_u32(s, 44) & 0x000FFFFFu);
    uint32_t blocks = sqe_block_dim(s);
    unsigned credit = sqe_u8(s, 14);
    void *a = (void *)(uintptr_t)args;
    ts_kernel k;
    if (ts_kernel_find(pc, &k) != 0) {
        mdlri_hal_trace("no kernel bound at pc", (long)pc, (long)sqe_type(s));
        return EXCEPTION;
    }
    if (blocks == 0) blocks = 1;
    if (!kernel_memory_mapped(&k, a)) return EXCEPTION;
    if (k.ready != NULL) {
        uint64_t limit_ns = (uint64_t)(credit * MDLRI_KERNEL_CREDIT_MS * 1e6);
        uint64_t start = ts_now_ns();
        const struct timespec tick = {0, 1000000L};
        while (!k.ready(a, k.args_size)) {
            if (ts_sq_stopping(sq)) {
                *stopped = 1;
                return OK;
            }
            if (credit != MDLRI_KERNEL_CREDIT_NEVER && ts_now_ns() - start >= limit_ns)
                return TIMED_OUT;
            nanosleep(&tick, NULL);
        }
    }
    if (k.fault != NULL && k.fault(a, k.args_size)) return EXCEPTION;
    for (uint32_t b = 0; b < blocks; b++) k.fn(a, k.args_size, b, blocks);
    return OK;
}

/* A COND SQE (lock held; dropped while its program runs). A model execute
 * (conds_sub_type 1, model id in u16 @12 reserved1, model_execute_task_v100.cc:43-67) runs its
 * program, which activates the model's head SQs, then holds its SQ until the model's run ends
 * (the SQE's post_p = 1: the TS finishes it): its CQE carries the run's error, if any. */
static ts_result run_cond_locked(ts_sq *sq, const uint8_t *s, int *stopped) {
    ts_result r = OK;
    int model_exec = sqe_u8(s, 8) == CONDS_SUB_MODEL_EXEC;
    uint32_t model = sqe_u16(s, 12), gen = 0;
    int was_running = 0;
    if (model_exec) {
        int rc = ts_model_exec_begin(sq, model, &gen, &was_running);
        if (rc > 0) {
            *stopped = 1;
            return OK;
        }
        if (rc < 0) return SQE_ERROR;
    }
    pthread_mutex_unlock(&g_ts.mu);
    int rc = ts_cond_run(sq, s, &r.fx);
    pthread_mutex_lock(&g_ts.mu);
    if (rc != 0) {
        if (model_exec) ts_model_exec_abort(model, was_running);
        if (rc > 0) *stopped = 1;
        return rc < 0 ? SQE_ERROR : OK;
    }
    if (model_exec &&
        ts_model_exec_wait(sq, model, gen, &r.error_type, &r.error_code) != 0)
        *stopped = 1;
    return r;
}

/* Run one SQE of `sq`; called and returning with the lock held. */
static ts_result execute(ts_sq *sq, const uint8_t *s, int *stopped) {
    ts_result r = OK;
    *stopped = 0;
    switch (sqe_type(s)) {
    case SQE_EVENT_RECORD: {
        uint16_t id = sqe_u16(s, 8);
        g_ts.event[id] = 1;
        r.timestamp = ts_now_ns();
        return r;
    }
    case SQE_EVENT_WAIT: {
        int got = wait_flag(sq, g_ts.event, sqe_u16(s, 8), sqe_u32(s, 20));
        if (got < 0) *stopped = 1;
        return got == 0 ? TIMED_OUT : OK;
    }
    case SQE_NOTIFY_RECORD: {
        uint32_t id = sqe_u32(s, 8) & 0x1FFFu;
        int was_set = g_ts.notify[id];
        g_ts.notify[id] = 1;
        g_ts.notify_status[id] = 0;
        if (ts_model_notify_recorded(id) && was_set && g_ts.notify_extra[id] < UINT8_MAX)
            g_ts.notify_extra[id]++; /* a model's end graph, the last one not taken yet */
        return OK;
    }
    case SQE_NOTIFY_WAIT: {
        uint32_t id = sqe_u32(s, 8) & 0x1FFFu;
        int got = wait_flag(sq, g_ts.notify, id, sqe_u32(s, 16));
        if (got < 0) *stopped = 1;
        if (got != 1) return got == 0 ? TIMED_OUT : OK;
        if (g_ts.notify_extra[id] > 0)
            g_ts.notify_extra[id]--;
        else
            g_ts.notify[id] = 0;
        if (g_ts.notify_status[id]) {
            /* the end-graph wait of a run that was aborted or failed: the run's status
             * (ts_model.c). The abort status the runtime takes as no exception
             * (stars_engine.cc:1541-1547), a failed run's as an exception naming the failed
             * task; like any CQE with an error type it resumes with StarsResumeRtsq once the SQ
             * reads disabled (:1404-1447): it stops */
            ts_result ended = {TS_CQE_ERR_SW_STATUS, g_ts.notify_status[id], 0, {0, 0}};
            g_ts.notify_status[id] = 0;
            return ended;
        }
        return OK;
    }
    case SQE_WRITE_VALUE:
        return run_write_value_locked(s);
    case SQE_PLACE_HOLDER:
        if (sqe_u16(s, 2) == PH_TASK_MODEL_MAINTAINCE)
            return ts_model_maintain(s) == 0 ? OK : SQE_ERROR;
        break;
    case SQE_COND:
        return run_cond_locked(sq, s, stopped);
    case SQE_SDMA:
    case SQE_PCIE_DMA:
    case SQE_FFTS:
        break;
    case SQE_AICPU:
        /* no AICPU on this device: the SQE completes and leaves the result words the host
         * preset (CheckKernelSupported reads its UINT32_MAX as "not supported",
         * aicpu_timeout_control.cc:151-196; README "AICPU SQEs") */
        return OK;
    default: /* DVPP, ...: an SQE this device cannot run */
        return SQE_ERROR;
    }
    pthread_mutex_unlock(&g_ts.mu);
    switch (sqe_type(s)) {
    case SQE_SDMA:
        r = run_sdma(s);
        break;
    case SQE_PCIE_DMA:
        r = run_pcie_dma(s);
        break;
    case SQE_PLACE_HOLDER:
        r = run_place_holder(sq, s);
        break;
    default:
        r = run_kernel(sq, s, stopped);
        break;
    }
    pthread_mutex_lock(&g_ts.mu);
    return r;
}

static void *sq_thread(void *arg) {
    ts_sq *sq = &g_ts.sq[(uint32_t)(uintptr_t)arg];
    uint8_t sqe[MDLRI_HAL_SQE_SIZE];
    pthread_mutex_lock(&g_ts.mu);
    while (!sq->stop) {
        if (sq->paused || sq->queued == 0) {
            pthread_cond_wait(&g_ts.cv, &g_ts.mu);
            continue;
        }
        memcpy(sqe, sq->ring + (size_t)sq->head * MDLRI_HAL_SQE_SIZE, sizeof sqe);
        int stopped = 0;
        sq->busy = 1;
        ts_result r = execute(sq, sqe, &stopped);
        sq->busy = 0;
        if (sq->stop) break;
        if (sq->abort_req) { /* its model was aborted: the SQE ends unreported, the SQ idles */
            sq->abort_req = 0;
            ts_sq_set_head(sq, sq->tail);
            pthread_cond_broadcast(&g_ts.cv);
            continue;
        }
        if (stopped) break;
        uint32_t at = sq->head;
        /* MDLRI_HAL_TRACE=1: "sqe <sq id * 65536 + position> <type * 256 + CQE error type>" */
        mdlri_hal_trace("sqe", (long)sq->id * 65536 + (long)at,
                        (long)sqe_type(sqe) * 256 + r.error_type);
        /* an error stops the SQ with its head on the failed SQE, which the CQE names: the
         * runtime moves the head past it and re-enables the SQ (StarsResumeRtsq,
         * stars_engine.cc:1398-1526) */
        int failed = r.error_type != 0;
        if (failed) {
            /* the head stays */
        } else if (r.fx.has_goto) {
            ts_sq_set_head(sq, r.fx.goto_head);
        } else {
            sq->head = (sq->head + 1) % sq->depth;
            sq->queued--;
            ts_sq_publish(sq);
        }
        if (failed &&
            !(r.error_type == TS_CQE_ERR_SW_STATUS && r.error_code == TS_MODEL_EXE_ABORT_STATUS))
            ts_error_ring_put(sqe, sq->id, at); /* before its CQE, as the runtime reads them */
        if (failed || sqe_wr_cqe(sqe)) {
            ts_cqe e = {
                .stream_id = sqe_stream_id(sqe),
                .task_id = sqe_task_id(sqe),
                .error_code = r.error_code,
                .error_type = r.error_type,
                .sqe_type = (uint8_t)sqe_type(sqe),
                .sq_id = (uint16_t)sq->id,
                .sq_head = (uint16_t)sq->head,
                .timestamp = r.timestamp,
            };
            cq_push(sq->cq_id, &e);
            sq->cqe_reported = 1; /* SQ_CQE_STATUS: the recycle thread drains the CQ on it */
        }
        if (failed) { /* STARS stops an SQ on error */
            sq->paused = 1;
            ts_sq_publish(sq);
            ts_model_sq_failed(sq, sqe, r.error_type, r.error_code); /* ends its model's run */
        }
        pthread_cond_broadcast(&g_ts.cv);
        if (r.fx.has_goto && (at + sq->depth - r.fx.goto_head) % sq->depth < sq->depth / 2) {
            /* a program that sent its SQ back (a value wait polling again): let others run */
            const struct timespec nap = {0, 200000L};
            pthread_mutex_unlock(&g_ts.mu);
            nanosleep(&nap, NULL);
            pthread_mutex_lock(&g_ts.mu);
        }
    }
    pthread_mutex_unlock(&g_ts.mu);
    return NULL;
}

int ts_sq_start(uint32_t sq_id) {
    ts_sq *sq = &g_ts.sq[sq_id];
    if (pthread_create(&sq->thread, NULL, sq_thread, (void *)(uintptr_t)sq_id) != 0)
        return DRV_ERROR_NO_RESOURCES;
    sq->thread_started = 1;
    return DRV_ERROR_NONE;
}

void ts_sq_stop_and_join(uint32_t sq_id) {
    ts_sq *sq = &g_ts.sq[sq_id];
    sq->stop = 1;
    pthread_cond_broadcast(&g_ts.cv);
    if (sq->thread_started) {
        pthread_t t = sq->thread;
        sq->thread_started = 0;
        pthread_mutex_unlock(&g_ts.mu);
        pthread_join(t, NULL);
        pthread_mutex_lock(&g_ts.mu);
    }
}

/* Entry `id` of an event or notify table, read under the lock; -1 past its `size`. */
static int flag_state(const uint8_t *table, uint32_t size, uint32_t id) {
    if (id >= size) return -1;
    pthread_mutex_lock(&g_ts.mu);
    int v = table[id];
    pthread_mutex_unlock(&g_ts.mu);
    return v;
}

int mdlri_hal_event_state(uint32_t id) { return flag_state(g_ts.event, TS_MAX_EVENT, id); }

int mdlri_hal_notify_state(uint32_t id) { return flag_state(g_ts.notify, TS_MAX_NOTIFY, id); }
