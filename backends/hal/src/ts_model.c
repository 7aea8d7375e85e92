/*
 * ts_model.c -- models on the TS core (../README.md, "Model execute"): the model maintenance
 * messages the runtime's control SQ sends (a PLACE_HOLDER with task_type
 * TS_TASK_TYPE_MODEL_MAINTAINCE 12, RtStarsModelMaintaince at byte 16:
 * src/runtime/core/inc/sqe/v100/stars_sqe.hpp:174-185, model_maintaince_task_v100.cc:23-87),
 * the end of a run (the model's end-graph notify recorded, context.cc:2110-2139, or an error on
 * one of its SQs), and the FSM select register the model-execute program polls.
 *
 * Everything here is called with g_ts.mu held, except the two FSM register accessors.
 */
#include <string.h>

#include "ts.h"

void ts_models_reset(void) {
    memset(g_ts.model, 0, sizeof g_ts.model);
    g_ts.fsm_sel = 0;
}

/* The run ends; the execute waiting for it completes with this error (0: none). */
static void end_run(ts_model *m, uint8_t error_type, uint32_t error_code) {
    if (!m->running) return;
    m->running = 0;
    m->end_error_type = error_type;
    m->end_error_code = error_code;
    m->gen++;
    pthread_cond_broadcast(&g_ts.cv);
}

/* End a run through the executing stream's end-graph wait: the execute completes, and the
 * NOTIFY_WAIT that takes the end-graph notify reports `status` (ts_core.c). */
static void end_run_reported(ts_model *m, uint32_t status) {
    g_ts.notify[m->end_notify] = 1;
    g_ts.notify_status[m->end_notify] = status;
    end_run(m, 0, 0);
}

/* MMT_MODEL_ABORT (ctrl_sq.cc:262-273, model.cc:1903-1953): every SQ bound to the model is
 * disabled with its head moved to its tail (its SQEs stay in the ring for the next execute,
 * which sends the head back to 0); an SQE it is running (a wait, a kernel not ready, a program
 * polling) is cut short without a report; a run in progress ends: the execute completes and
 * the NOTIFY_WAIT of its end-graph notify that the runtime queued behind it reports the abort
 * status, which the runtime takes on a NOTIFY_WAIT CQE as no exception (stars_engine.cc:1541-1547). */
static void model_abort(uint32_t model) {
    for (uint32_t i = 0; i < TS_MAX_SQ; i++) {
        ts_sq *q = &g_ts.sq[i];
        if (!q->used || q->model_plus1 != model + 1) continue;
        q->paused = 1;
        __atomic_store_n(&q->abort_req, q->busy, __ATOMIC_RELEASE); /* read by a running
                                                                       * program, cond.c */
        ts_sq_set_head(q, q->tail);
    }
    ts_model *m = &g_ts.model[model];
    if (m->running && m->has_end) /* release the executing stream's end-graph wait */
        end_run_reported(m, TS_MODEL_EXE_ABORT_STATUS);
    else
        end_run(m, 0, 0);
    pthread_cond_broadcast(&g_ts.cv);
}

/* MMT_STREAM_ADD binds the stream's SQ to the model and disables it: the SQEs the runtime then
 * loads there wait until the model-execute program activates the SQ. MMT_MODEL_PRE_PROC names
 * the end-graph notify. 0 done; -1 an operation or id this device does not take (SQE error). */
int ts_model_maintain(const uint8_t *s) {
    uint32_t model = sqe_u16(s, 16), stream = sqe_u16(s, 18), op = sqe_u16(s, 20);
    if (model >= TS_MAX_MODEL) return -1;
    ts_model *m = &g_ts.model[model];
    switch (op) {
    case MMT_STREAM_ADD:
    case MMT_STREAM_DEL: {
        int found = 0;
        for (uint32_t i = 0; i < TS_MAX_SQ; i++) {
            ts_sq *q = &g_ts.sq[i];
            if (!q->used || q->stream_id != stream) continue;
            found = 1;
            if (op == MMT_STREAM_ADD) {
                q->model_plus1 = model + 1;
                q->paused = 1;
                ts_sq_publish(q);
            } else if (q->model_plus1 == model + 1) {
                q->model_plus1 = 0;
            }
        }
        return found ? 0 : -1;
    }
    case MMT_MODEL_PRE_PROC:
        m->has_end = 1;
        m->end_notify = sqe_u16(s, 26) % TS_MAX_NOTIFY;
        return 0;
    case MMT_MODEL_LOAD_COMPLETE:
    case MMT_STREAM_LOAD_COMPLETE:
        return 0;
    case MMT_MODEL_DESTROY:
        memset(m, 0, sizeof *m);
        return 0;
    case MMT_MODEL_ABORT:
        model_abort(model);
        return 0;
    default: /* the rest: not modelled */
        return -1;
    }
}

/* A NOTIFY_RECORD of a running model's end-graph notify ends the run. The record stays set:
 * on STARS the runtime follows every model execute with a NOTIFY_WAIT of the end-graph notify
 * on the executing stream (Model::Execute, model.cc:1311-1322), which takes it. */
int ts_model_notify_recorded(uint32_t notify_id) {
    int ended = 0;
    for (uint32_t i = 0; i < TS_MAX_MODEL; i++) {
        ts_model *m = &g_ts.model[i];
        if (m->running && m->has_end && m->end_notify == notify_id) {
            end_run(m, 0, 0);
            ended = 1;
        }
    }
    return ended;
}

/* An SQE of a model's SQ failed: the run ends. With an end-graph notify the execute completes
 * and the executing stream's end-graph NOTIFY_WAIT reports the failure: errorType SW status,
 * errorCode an rtStarsModelExecuteError_t (stars.hpp:58-75) {u16 task_id; u16 stream_id:12,
 * result:4} with result TS_STARS_MODEL_STREAM_EXE_FAILED (1, runtime_tsch_defines.h:195) and
 * the failed task; the 12 bits hold its SQ id where the software SQ feature (45) is on
 * (model_execute_task.cc:227-295). The runtime reads that as 507011 (RT_MODEL_EXECUTE) at the
 * executing stream's sync. Without one the execute itself carries the error. */
void ts_model_sq_failed(const ts_sq *sq, const uint8_t *sqe, uint8_t error_type,
                        uint32_t error_code) {
    if (sq->model_plus1 == 0) return;
    ts_model *m = &g_ts.model[sq->model_plus1 - 1];
    if (!m->running) return;
    if (!m->has_end) {
        end_run(m, error_type, error_code);
        return;
    }
    uint32_t who = ts_feature_on(TS_FEATURE_SOFTWARE_SQ) ? sq->id : sqe_stream_id(sqe);
    end_run_reported(m, (TS_MODEL_STREAM_EXE_FAILED << 28) | ((who & 0xFFFu) << 16) |
                            sqe_task_id(sqe));
}

/* Before the model-execute program runs: mark the model running. An execute that finds the
 * model running (another stream's execute, EXE-15 / Q-11) waits for that run to end and then
 * runs the model itself: each execute is one run with its own end-graph record, which the
 * NOTIFY_WAIT the runtime queues behind each execute takes (joining the running run left one
 * record for two waits, and the second executing stream hung). -1 for a model id past the
 * table; 1 when the SQ is stopping meanwhile. */
int ts_model_exec_begin(ts_sq *sq, uint32_t model, uint32_t *gen, int *was_running) {
    if (model >= TS_MAX_MODEL) return -1;
    ts_model *m = &g_ts.model[model];
    while (m->running) {
        if (sq->stop || sq->abort_req) return 1;
        pthread_cond_wait(&g_ts.cv, &g_ts.mu);
    }
    *gen = m->gen;
    *was_running = m->running;
    m->running = 1;
    return 0;
}

/* The program failed (SQE error): the run it would have started never began. */
void ts_model_exec_abort(uint32_t model, int was_running) {
    if (!was_running) g_ts.model[model].running = 0;
}

/* Block until the run ends; its error fields. -1 when the SQ is stopping. */
int ts_model_exec_wait(ts_sq *sq, uint32_t model, uint32_t gen, uint8_t *error_type,
                       uint32_t *error_code) {
    ts_model *m = &g_ts.model[model];
    while (m->gen == gen) {
        if (sq->stop) return -1;
        pthread_cond_wait(&g_ts.cv, &g_ts.mu);
    }
    *error_type = m->end_error_type;
    *error_code = m->end_error_code;
    return 0;
}

/* The FSM select register (lock NOT held): a write selects an SQ id (bits 10:0); a read gives
 * the selected id low and that SQ's FSM state in bits 35:32, 0 idle
 * (stars_cond_isa_helper.cc:316-335). An SQ reads non-idle while it runs an SQE. */
void ts_fsm_select(uint64_t v) {
    pthread_mutex_lock(&g_ts.mu);
    g_ts.fsm_sel = (uint32_t)(v & 0x7FFu);
    pthread_mutex_unlock(&g_ts.mu);
}

uint64_t ts_fsm_read(void) {
    pthread_mutex_lock(&g_ts.mu);
    uint32_t sel = g_ts.fsm_sel;
    uint64_t state = (sel < TS_MAX_SQ && g_ts.sq[sel].used && g_ts.sq[sel].busy) ? 1u : 0u;
    pthread_mutex_unlock(&g_ts.mu);
    return (uint64_t)sel | (state << 32);
}
