/*
 * hal_sqcq.c -- the SQ/CQ driver entry points the runtime calls (../README.md, "How the
 * runtime submits"): allocate and free SQs and CQs, send SQEs, receive CQEs, query and
 * configure an SQ. One device (devId 0) and one TS (tsId 0) so far.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ts.h"

/* every device of this process shares the one TS core (README "Device semantics") */
static int bad_dev(uint32_t devId) { return !mdlri_hal_dev_valid(devId); }

ts_sq *ts_sq_get(uint32_t id) {
    return (id < TS_MAX_SQ && g_ts.sq[id].used) ? &g_ts.sq[id] : NULL;
}

static ts_sq *sq_get(uint32_t id) { return ts_sq_get(id); }

/* A stream bound to a logic CQ (halResourceConfig DRV_STREAM_BIND_LOGIC_CQ,
 * npu_driver_res.cc:975-998) has its SQ's reports written there: the runtime reads the
 * logic CQ (halCqReportRecv type DRV_LOGIC_TYPE), not the CQ allocated with the SQ. The SQ
 * keeps its own CQ for bookkeeping (g_own_cq); a logic CQ holds no reference, it is the
 * runtime's to free. g_stream_cq[stream] is the logic CQ + 1, 0 when unbound. */
#define MDLRI_MAX_STREAM 65536u
static uint32_t g_stream_cq[MDLRI_MAX_STREAM]; /* under g_ts.mu */
static uint32_t g_own_cq[TS_MAX_SQ];

static void report_to(ts_sq *sq) {
    uint32_t bound = sq->stream_id < MDLRI_MAX_STREAM ? g_stream_cq[sq->stream_id] : 0;
    sq->cq_id = bound ? bound - 1 : g_own_cq[sq->id];
}

void ts_sq_route_reports(ts_sq *sq) { report_to(sq); }

drvError_t mdlri_hal_stream_bind_cq(uint32_t stream_id, uint32_t cq_id, int bind) {
    if (stream_id >= MDLRI_MAX_STREAM) return DRV_ERROR_INVALID_VALUE;
    drvError_t rc = DRV_ERROR_NONE;
    pthread_mutex_lock(&g_ts.mu);
    if (bind && (cq_id >= TS_MAX_CQ || !g_ts.cq[cq_id].used)) {
        rc = DRV_ERROR_INVALID_VALUE;
    } else {
        g_stream_cq[stream_id] = bind ? cq_id + 1 : 0;
        for (uint32_t i = 0; i < TS_MAX_SQ; i++)
            if (g_ts.sq[i].used && g_ts.sq[i].stream_id == stream_id) report_to(&g_ts.sq[i]);
    }
    pthread_mutex_unlock(&g_ts.mu);
    return rc;
}

static drvError_t alloc_normal(struct halSqCqInputInfo *in, struct halSqCqOutputInfo *out) {
    uint32_t sq_id = 0;
    if (in->flag & TSDRV_FLAG_SPECIFIED_SQ_ID) {
        sq_id = in->sqId;
        if (sq_id >= TS_MAX_SQ || g_ts.sq[sq_id].used) return DRV_ERROR_INVALID_VALUE;
    } else {
        while (sq_id < TS_MAX_SQ && g_ts.sq[sq_id].used) sq_id++;
        if (sq_id >= TS_MAX_SQ) {
            mdlri_hal_trace("no free sq", TS_MAX_SQ, (long)in->flag);
            return DRV_ERROR_NO_RESOURCES;
        }
    }
    if (in->sqeSize != 0 && in->sqeSize != MDLRI_HAL_SQE_SIZE) return DRV_ERROR_INVALID_VALUE;
    uint32_t cq_id;
    int own_cq = 0;
    if (in->flag & TSDRV_FLAG_REUSE_CQ) {
        cq_id = in->cqId;
        if (cq_id >= TS_MAX_CQ || !g_ts.cq[cq_id].used) return DRV_ERROR_INVALID_VALUE;
    } else {
        uint32_t want = (in->flag & TSDRV_FLAG_SPECIFIED_CQ_ID) ? in->cqId : MDLRI_SQCQ_UMAX;
        drvError_t rc = ts_cq_alloc(want, in->cqeDepth, &cq_id);
        if (rc != DRV_ERROR_NONE) return rc;
        own_cq = 1;
    }
    uint32_t depth = in->sqeDepth ? in->sqeDepth : TS_DEFAULT_DEPTH;
    /* a software SQ (TSDRV_FLAG_NO_SQ_MEM) runs from the memory halSqSwitchStreamBatch names */
    int own_ring = (in->flag & TSDRV_FLAG_NO_SQ_MEM) == 0;
    uint8_t *ring = own_ring ? calloc(depth, MDLRI_HAL_SQE_SIZE) : NULL;
    if (own_ring && ring == NULL) {
        if (own_cq) ts_cq_release(cq_id);
        return DRV_ERROR_NO_RESOURCES;
    }
    g_ts.sq[sq_id] = (ts_sq){.used = 1, .id = sq_id, .cq_id = cq_id, .stream_id = in->info[0],
                             .depth = depth, .ring = ring, .own_ring = own_ring};
    g_own_cq[sq_id] = cq_id;
    report_to(&g_ts.sq[sq_id]);
    ts_sq_publish(&g_ts.sq[sq_id]);
    g_ts.cq[cq_id].refs++;
    /* a software SQ's device thread starts when it is bound (hal_swsq.c): the pool's idle SQs
     * cost no thread */
    drvError_t rc = own_ring ? ts_sq_start(sq_id) : DRV_ERROR_NONE;
    if (rc != DRV_ERROR_NONE) {
        free(ring);
        memset(&g_ts.sq[sq_id], 0, sizeof g_ts.sq[sq_id]);
        if (--g_ts.cq[cq_id].refs == 0 && own_cq) ts_cq_release(cq_id);
        return rc;
    }
    out->sqId = sq_id;
    out->cqId = cq_id;
    out->queueVAddr = 0;
    out->flag = in->flag;
    return DRV_ERROR_NONE;
}

drvError_t halSqCqAllocate(uint32_t devId, struct halSqCqInputInfo *in,
                           struct halSqCqOutputInfo *out) {
    if (bad_dev(devId) || in == NULL || out == NULL) return DRV_ERROR_INVALID_VALUE;
    drvError_t rc;
    pthread_mutex_lock(&g_ts.mu);
    if (in->type == DRV_NORMAL_TYPE) {
        rc = alloc_normal(in, out);
    } else if (in->type == DRV_LOGIC_TYPE) {
        uint32_t want = (in->flag & TSDRV_FLAG_SPECIFIED_CQ_ID) ? in->cqId : MDLRI_SQCQ_UMAX;
        uint32_t cq_id = 0;
        rc = ts_cq_alloc(want, in->cqeDepth, &cq_id);
        if (rc == DRV_ERROR_NONE) {
            out->sqId = MDLRI_SQCQ_UMAX;
            out->cqId = cq_id;
            out->queueVAddr = 0;
            out->flag = in->flag;
        }
    } else {
        rc = DRV_ERROR_NOT_SUPPORT; /* callback, shm, ctrl, gdb queues: not yet */
    }
    pthread_mutex_unlock(&g_ts.mu);
    return rc;
}

static void free_sq_locked(uint32_t sq_id, int keep_cq) {
    ts_sq *sq = &g_ts.sq[sq_id];
    ts_sq_stop_and_join(sq_id);
    uint32_t cq_id = g_own_cq[sq_id];
    if (sq->own_ring) free(sq->ring);
    memset(sq, 0, sizeof *sq);
    if (cq_id < TS_MAX_CQ && g_ts.cq[cq_id].used && --g_ts.cq[cq_id].refs == 0 && !keep_cq)
        ts_cq_release(cq_id);
}

drvError_t halSqCqFree(uint32_t devId, struct halSqCqFreeInfo *info) {
    if (bad_dev(devId) || info == NULL) return DRV_ERROR_INVALID_VALUE;
    drvError_t rc = DRV_ERROR_NONE;
    pthread_mutex_lock(&g_ts.mu);
    if (info->type == DRV_NORMAL_TYPE) {
        if (sq_get(info->sqId) == NULL) rc = DRV_ERROR_INVALID_VALUE;
        else free_sq_locked(info->sqId, (info->flag & 1u) != 0);
    } else if (info->type == DRV_LOGIC_TYPE) {
        if (info->cqId >= TS_MAX_CQ || !g_ts.cq[info->cqId].used) rc = DRV_ERROR_INVALID_VALUE;
        else if (g_ts.cq[info->cqId].refs != 0) rc = DRV_ERROR_BUSY;
        else ts_cq_release(info->cqId);
    } else {
        rc = DRV_ERROR_NOT_SUPPORT;
    }
    pthread_mutex_unlock(&g_ts.mu);
    return rc;
}

static void deadline_in(struct timespec *d, int32_t ms) {
    clock_gettime(CLOCK_REALTIME, d);
    d->tv_sec += ms / 1000;
    d->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (d->tv_nsec >= 1000000000L) {
        d->tv_sec++;
        d->tv_nsec -= 1000000000L;
    }
}

drvError_t halSqTaskSend(uint32_t devId, struct halTaskSendInfo *info) {
    if (bad_dev(devId) || info == NULL || info->sqe_addr == NULL || info->sqe_num == 0)
        return DRV_ERROR_INVALID_VALUE;
    if (info->type != DRV_NORMAL_TYPE) return DRV_ERROR_NOT_SUPPORT;
    drvError_t rc = DRV_ERROR_NONE;
    struct timespec deadline;
    deadline_in(&deadline, info->timeout > 0 ? info->timeout : 0);
    pthread_mutex_lock(&g_ts.mu);
    ts_sq *sq = sq_get(info->sqId);
    if (sq == NULL || sq->ring == NULL || info->sqe_num > sq->depth) {
        rc = DRV_ERROR_INVALID_VALUE;
        goto out;
    }
    /* the runtime retries a refused send (task_submit.cc:608-625): answer at once unless a
     * timeout asks to wait for room */
    while (sq->depth - sq->queued < info->sqe_num) {
        if (info->timeout == 0 ||
            (info->timeout > 0 &&
             pthread_cond_timedwait(&g_ts.cv, &g_ts.mu, &deadline) == ETIMEDOUT)) {
            rc = DRV_ERROR_BUSY;
            goto out;
        }
        if (info->timeout < 0) pthread_cond_wait(&g_ts.cv, &g_ts.mu);
        sq = sq_get(info->sqId);
        if (sq == NULL) {
            rc = DRV_ERROR_INVALID_VALUE;
            goto out;
        }
    }
    info->pos = sq->tail;
    for (uint32_t i = 0; i < info->sqe_num; i++) {
        memcpy(sq->ring + (size_t)sq->tail * MDLRI_HAL_SQE_SIZE,
               info->sqe_addr + (size_t)i * MDLRI_HAL_SQE_SIZE, MDLRI_HAL_SQE_SIZE);
        sq->tail = (sq->tail + 1) % sq->depth;
        sq->queued++;
    }
    ts_sq_publish(sq);
    pthread_cond_broadcast(&g_ts.cv);
out:
    pthread_mutex_unlock(&g_ts.mu);
    return rc;
}

drvError_t halCqReportRecv(uint32_t devId, struct halReportRecvInfo *info) {
    if (bad_dev(devId) || info == NULL || (info->cqe_num != 0 && info->cqe_addr == NULL))
        return DRV_ERROR_INVALID_VALUE;
    drvError_t rc = DRV_ERROR_NONE;
    struct timespec deadline;
    deadline_in(&deadline, info->timeout > 0 ? info->timeout : 0);
    info->report_cqe_num = 0;
    pthread_mutex_lock(&g_ts.mu);
    for (;;) {
        if (info->cqId >= TS_MAX_CQ || !g_ts.cq[info->cqId].used) {
            rc = DRV_ERROR_INVALID_VALUE;
            break;
        }
        ts_cq *cq = &g_ts.cq[info->cqId];
        if (cq->tail != cq->head) {
            uint32_t n = 0;
            while (n < info->cqe_num && cq->head != cq->tail) {
                memcpy(info->cqe_addr + (size_t)n * MDLRI_HAL_CQE_SIZE,
                       &cq->ring[cq->head % cq->depth], MDLRI_HAL_CQE_SIZE);
                cq->head++;
                n++;
            }
            info->report_cqe_num = n;
            break;
        }
        if (info->timeout == 0) break; /* nothing yet: report 0 */
        if (info->timeout < 0) {
            pthread_cond_wait(&g_ts.cv, &g_ts.mu);
        } else if (pthread_cond_timedwait(&g_ts.cv, &g_ts.mu, &deadline) == ETIMEDOUT) {
            cq = &g_ts.cq[info->cqId];
            if (!cq->used || cq->tail == cq->head) {
                rc = DRV_ERROR_WAIT_TIMEOUT;
                break;
            }
        }
    }
    pthread_mutex_unlock(&g_ts.mu);
    return rc;
}

typedef drvError_t (*sq_prop_fn)(ts_sq *sq, drvSqCqPropType_t prop, uint32_t value[8]);

/* The frame halSqCqQuery and halSqCqConfig share: a normal-type SQ that exists, whose property
 * `fn` reads or sets with the TS lock held. */
static drvError_t with_sq(drvSqCqType_t type, uint32_t sq_id, drvSqCqPropType_t prop,
                          uint32_t value[8], sq_prop_fn fn) {
    if (type != DRV_NORMAL_TYPE) return DRV_ERROR_NOT_SUPPORT;
    pthread_mutex_lock(&g_ts.mu);
    ts_sq *sq = sq_get(sq_id);
    drvError_t rc = sq == NULL ? DRV_ERROR_INVALID_VALUE : fn(sq, prop, value);
    pthread_mutex_unlock(&g_ts.mu);
    return rc;
}

static drvError_t sq_query(ts_sq *sq, drvSqCqPropType_t prop, uint32_t value[8]) {
    switch (prop) {
    case DRV_SQCQ_PROP_SQ_STATUS:
        value[0] = sq->paused ? 0u : 1u;
        break;
    case DRV_SQCQ_PROP_SQ_HEAD:
        value[0] = sq->head;
        break;
    case DRV_SQCQ_PROP_SQ_TAIL:
        value[0] = sq->tail;
        break;
    case DRV_SQCQ_PROP_SQ_CQE_STATUS: /* a CQE reported since the last query, read clear
                                        * (trs_pkg.h:79; NpuDriver::GetCqeStatus,
                                        * npu_driver_res.cc:861-879): the runtime's recycle
                                        * thread reads the CQ only on it (stars_engine.cc:2045-2052) */
        value[0] = sq->cqe_reported ? 1u : 0u;
        sq->cqe_reported = 0;
        return DRV_ERROR_NONE;
    case DRV_SQCQ_PROP_SQ_DEPTH:
        value[0] = sq->depth;
        break;
    case DRV_SQCQ_PROP_SQ_REG_BASE: { /* value[0] high, [1] low, [2] size (npu_driver_res.cc:1198-1202) */
        uint64_t base = (uint64_t)(uintptr_t)sq->regs;
        value[0] = (uint32_t)(base >> 32);
        value[1] = (uint32_t)base;
        value[2] = (uint32_t)sizeof sq->regs;
        break;
    }
    case DRV_SQCQ_PROP_CQ_DEPTH:
        value[0] = g_ts.cq[sq->cq_id].depth;
        break;
    case DRV_SQCQ_PROP_SQE_SIZE:
        value[0] = MDLRI_HAL_SQE_SIZE;
        break;
    case DRV_SQCQ_PROP_CQE_SIZE:
        value[0] = MDLRI_HAL_CQE_SIZE;
        break;
    default:
        return DRV_ERROR_NOT_SUPPORT;
    }
    return DRV_ERROR_NONE;
}

static drvError_t sq_config(ts_sq *sq, drvSqCqPropType_t prop, uint32_t value[8]) {
    drvError_t rc = DRV_ERROR_NONE;
    switch (prop) {
    case DRV_SQCQ_PROP_SQ_HEAD: /* only a stopped SQ's head moves (stars_engine.cc:1502) */
        if (!sq->paused || value[0] >= sq->depth)
            rc = DRV_ERROR_INVALID_VALUE;
        else
            ts_sq_set_head(sq, value[0]);
        break;
    case DRV_SQCQ_PROP_SQ_TAIL: /* a software SQ's tail (Model::ConfigSqTail, model.cc:790-800;
                                  * NpuDriver::SetSqTail, npu_driver_standard_soc.cc:467-488): the SQEs
                                  * halStreamTaskFill wrote up to it are queued; an enabled SQ runs them */
        if (value[0] >= sq->depth || (sq->ring == NULL && value[0] != 0)) {
            rc = DRV_ERROR_INVALID_VALUE;
        } else {
            sq->tail = value[0];
            sq->queued = (sq->tail + sq->depth - sq->head) % sq->depth;
        }
        break;
    case DRV_SQCQ_PROP_SQ_STATUS:
        sq->paused = value[0] == 0;
        break;
    case DRV_SQCQ_PROP_SQ_DISABLE_TO_ENABLE:
    case DRV_SQCQ_PROP_SQ_RESUME:
        sq->paused = 0;
        break;
    case DRV_SQCQ_PROP_SQ_PAUSE:
        sq->paused = 1;
        break;
    default:
        rc = DRV_ERROR_NOT_SUPPORT;
    }
    ts_sq_publish(sq);
    pthread_cond_broadcast(&g_ts.cv);
    return rc;
}

drvError_t halSqCqQuery(uint32_t devId, struct halSqCqQueryInfo *info) {
    if (bad_dev(devId) || info == NULL) return DRV_ERROR_INVALID_VALUE;
    return with_sq(info->type, info->sqId, info->prop, info->value, sq_query);
}

drvError_t halSqCqConfig(uint32_t devId, struct halSqCqConfigInfo *info) {
    if (bad_dev(devId) || info == NULL) return DRV_ERROR_INVALID_VALUE;
    return with_sq(info->type, info->sqId, info->prop, info->value, sq_config);
}

void mdlri_hal_reset(void) {
    pthread_mutex_lock(&g_ts.mu);
    for (uint32_t i = 0; i < TS_MAX_SQ; i++)
        if (g_ts.sq[i].used) free_sq_locked(i, 0);
    for (uint32_t i = 0; i < TS_MAX_CQ; i++) ts_cq_release(i);
    memset(g_stream_cq, 0, sizeof g_stream_cq);
    memset(g_ts.event, 0, sizeof g_ts.event);
    memset(g_ts.notify, 0, sizeof g_ts.notify);
    memset(g_ts.notify_status, 0, sizeof g_ts.notify_status);
    memset(g_ts.notify_extra, 0, sizeof g_ts.notify_extra);
    ts_resources_reset();
    ts_models_reset();
    ts_error_ring_reset();
    pthread_mutex_unlock(&g_ts.mu);
    mdlri_hal_kernel_clear();
}
