/*
 * hal_swsq.c -- the software SQ (../README.md, "The software SQ").
 *
 * With the TS feature SOFTWARE_SQ_ENABLE (45) the runtime captures a model's SQEs into a host
 * buffer of its own (stars_engine.cc:923-937) instead of sending them, and at the first
 * execute after a capture or an aclmdlRIUpdate (CaptureModel::BindSqCqAndSendSqe,
 * feature/aclgraph/v100/capture_model_adapt_v100.cc:22-41):
 *   1. allocates the stream's SQ memory in device memory (Stream::AllocSoftwareSqAddr,
 *      stream.cc:4856-4888; SqAddrMemoryOrder::DrvAllocSqAddr, sq_addr_memory_pool.cc:130-147);
 *   2. SendSqe: halStreamTaskFill(dev, stream id, SQ memory, SQE buffer, n) copies its n SQEs
 *      there (Model::SendSqe, feature/model/model.cc:758-785);
 *   3. BindSqCq: halSqSwitchStreamBatch binds each stream to an SQ of the runtime's pool (SQs
 *      allocated with TSDRV_FLAG_NO_SQ_MEM and stream id UINT32_MAX,
 *      device_sq_cq_pool.cc:70-104,143-216) and to that memory with its depth
 *      (capture_model.cc:1165-1216); UnBindSqCq sends stream id UINT32_MAX (:1218-1255);
 *   4. binds the streams to the model (MMT_STREAM_ADD, ts_model.c), then ConfigSqTail sets
 *      each SQ's tail to the stream's SQE count with halSqCqConfig SQ_TAIL (model.cc:787-803).
 * The model-execute program then moves each head SQ to 0 and enables it, as for any model.
 * A later aclmdlRITaskSetParams on such a stream writes the new SQE straight into the SQ
 * memory with a copy task (InternalUpdateNormalKernelTaskForSoftwareSq, aix_stars.cc:361-382):
 * the TS reads an SQE from the memory when it reaches it, so that needs nothing here.
 *
 * Device semantics (ours; the driver's source is not public): the fill is a plain copy of
 * whole SQEs (no SQE field is rewritten); binding sets head = tail = 0 (the tail comes next);
 * unbinding drops the memory (the runtime frees it) and empties the SQ.
 */
#include <string.h>

#include "ts.h"

drvError_t halStreamTaskFill(uint32_t dev_id, uint32_t stream_id, void *stream_mem, void *task_info,
                             uint32_t task_cnt) {
    (void)stream_id; /* the copy goes to stream_mem; the stream is bound to an SQ later */
    if (!mdlri_hal_dev_valid(dev_id) || stream_mem == NULL || task_info == NULL || task_cnt == 0)
        return DRV_ERROR_INVALID_VALUE;
    size_t n = (size_t)task_cnt * MDLRI_HAL_SQE_SIZE;
    if (mdlri_hal_mem_room((uint64_t)(uintptr_t)stream_mem) < n) return DRV_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_ts.mu); /* an SQ may be reading this memory */
    memcpy(stream_mem, task_info, n);
    pthread_mutex_unlock(&g_ts.mu);
    mdlri_hal_trace("task fill", (long)stream_id, (long)task_cnt);
    return DRV_ERROR_NONE;
}

/* One entry's check (lock held): the SQ exists; a binding with memory names device memory
 * that holds sq_depth SQEs, and only for an SQ without a ring of its own. */
static int switch_ok(const struct sq_switch_stream_info *e) {
    ts_sq *sq = ts_sq_get(e->sq_id);
    if (sq == NULL) return 0;
    if (e->stream_id == MDLRI_SQCQ_UMAX || e->stream_mem == NULL) return 1;
    if (sq->own_ring || e->sq_depth == 0) return 0;
    return mdlri_hal_mem_room((uint64_t)(uintptr_t)e->stream_mem) >=
           (size_t)e->sq_depth * MDLRI_HAL_SQE_SIZE;
}

/* Apply one checked entry (lock held; dropped while an unbound SQ's thread ends). A bound
 * software SQ runs in a device thread of its own; an unbound one has none. */
static drvError_t switch_one(const struct sq_switch_stream_info *e) {
    ts_sq *sq = ts_sq_get(e->sq_id);
    if (sq == NULL) return DRV_ERROR_INVALID_VALUE; /* freed while a thread was joined */
    sq->stream_id = e->stream_id;
    ts_sq_route_reports(sq);
    if (sq->own_ring) return DRV_ERROR_NONE;
    int bind = e->stream_id != MDLRI_SQCQ_UMAX && e->stream_mem != NULL;
    sq->ring = bind ? (uint8_t *)e->stream_mem : NULL;
    if (bind) sq->depth = e->sq_depth;
    sq->head = sq->tail = sq->queued = 0;
    ts_sq_publish(sq);
    if (bind && !sq->thread_started) return ts_sq_start(sq->id);
    if (!bind && sq->thread_started) {
        ts_sq_stop_and_join(sq->id);
        sq->stop = 0;
    }
    return DRV_ERROR_NONE;
}

drvError_t halSqSwitchStreamBatch(uint32_t dev_id, struct sq_switch_stream_info *info,
                                  uint32_t num) {
    if (!mdlri_hal_dev_valid(dev_id) || info == NULL || num == 0) return DRV_ERROR_INVALID_VALUE;
    drvError_t rc = DRV_ERROR_NONE;
    pthread_mutex_lock(&g_ts.mu);
    for (uint32_t i = 0; i < num && rc == DRV_ERROR_NONE; i++)
        if (!switch_ok(&info[i])) rc = DRV_ERROR_INVALID_VALUE;
    for (uint32_t i = 0; i < num && rc == DRV_ERROR_NONE; i++) rc = switch_one(&info[i]);
    pthread_cond_broadcast(&g_ts.cv);
    pthread_mutex_unlock(&g_ts.mu);
    return rc;
}
