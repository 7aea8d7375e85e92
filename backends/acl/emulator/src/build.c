/* build.c -- the explicit build path (semantics.md §18 BLD), synchronous execution
 * (EXE-10..13), abort (§15 ABT) and the model teardown of the issue-7 state.
 *
 * A built model's streams are the user's PERSISTENT streams themselves: BindStream makes the
 * model their owner, and every task issued on a bound stream is recorded as a model task
 * (the enqueue hook) instead of being executed (BLD-03). GetStreams lists them newest bound
 * first (BLD-06). Only streams bound with ACL_MODEL_STREAM_FLAG_HEAD run from the start of an
 * execution: a DEFAULT stream waits until an aclrtActiveStream / aclrtSwitchStream /
 * aclrtSwitchLabelByIndex task starts it (switch.c); the end task ends the execution. */
#include "emu.h"

static aclError mget(aclmdlRI h, emu_model **out, const char *fn) {
    if (!emu_valid(h, MAGIC_MODL))
        return emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or destroyed modelRI %p", fn, h);
    *out = h;
    return ACL_SUCCESS;
}

static aclError sget(aclrtStream h, emu_stream **out, const char *fn) {
    if (!h) return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: stream is NULL", fn);
    if (!emu_valid(h, MAGIC_STRM))
        return emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or destroyed stream %p", fn, h);
    *out = h;
    return ACL_SUCCESS;
}

/* A sub-model is a capture model too: the build decorators and the synchronous execute
 * refuse every capture model with 107000 and have no sub-model case (api_error.cc:3902-3904,
 * 3958-3960, 3978-3980, 4039-4041, 4236-4238). */
static aclError need_built(emu_model *m, const char *fn) {
    if (!m->built)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID,
                       "%s: ACL Graph (captured) models are not supported", fn);
    return ACL_SUCCESS;
}

/* Tasks issued on a bound stream are recorded; a launch on a stream in task update mode
 * becomes a group update (taskgroups.c). Caller holds g_lock. */
int emu_enqueue_hook(emu_stream *s, emu_item *it) {
    emu_model *m = s->owner;
    if (m && m->built && it->o.op != OP_MODEL) {
        emu_task *t = calloc(1, sizeof *t);
        t->magic = MAGIC_TASK;
        t->m = m;
        t->is = s;
        t->seq = m->next_seq++;
        t->host = it->o;
        t->dev = it->o;
        EMU_PUSH(s->tasks, s->ntasks, s->captasks, t);
        if (it->owned) EMU_PUSH(m->owned, m->nowned, m->capowned, it->owned);
        free(it->pcs);
        free(it);
        return 1;
    }
    return emu_tg_enqueue(s, it);
}

static void unbind(emu_stream *s) {
    for (size_t k = 0; k < s->ntasks; k++) s->tasks[k]->magic = 0;
    s->ntasks = 0;
    s->owner = NULL;
    s->bind_flag = 0;
}

static void release_capture_streams(emu_model *m) {
    for (size_t i = 0; i < m->nstreams; i++) {
        emu_stream *u = m->streams[i]->user;
        if (!u) continue;
        if (u->grp && u->grp->m == m) u->grp = NULL;
        if (u->cap_model == m) {
            u->cap_model = NULL;
            u->cap_is = NULL;
        }
    }
}

/* The issue-7 part of a model's destruction (caller holds g_lock): callbacks are taken for
 * running after the lock is released, sub-models die with their parent (LIFE-05), cond and
 * task-group handles go stale, bound streams are unbound (they stay user streams). */
void emu_ext_kill(emu_model *m) {
    emu_callbacks_take(m);
    for (size_t i = 0; i < m->nsubs; i++) {
        emu_model *sub = m->subs[i];
        if (!emu_valid(sub, MAGIC_MODL)) continue;
        release_capture_streams(sub);
        emu_model_kill(sub);
    }
    for (size_t i = 0; i < m->nconds; i++) m->conds[i]->magic = 0;
    for (size_t i = 0; i < m->ngrps; i++) {
        struct emu_taskgrp *g = m->grps[i];
        g->magic = 0;
        if (g->updating) g->updating->upd = NULL;
        g->updating = NULL;
    }
    release_capture_streams(m);
    if (m->built) {
        for (size_t i = 0; i < m->nstreams; i++) unbind(m->streams[i]);
        m->nstreams = 0; /* user streams: emu_model_kill must not zero their magic */
    }
    free(m->name);
    m->name = NULL;
}

/* ------------------------------------------------------------------------------------------ */

MDLRI_API aclError aclmdlRIBuildBegin(aclmdlRI *modelRI, uint32_t flag) {
    static const char fn[] = "aclmdlRIBuildBegin";
    if (!modelRI) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: modelRI is NULL", fn);
    NEED_CTX();
    if (flag != 0) return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: flag %u must be 0", fn, flag);
    LOCK();
    emu_model *m = calloc(1, sizeof *m);
    m->magic = MAGIC_MODL;
    m->status = M_READY;
    m->built = 1;
    g_live_models++;
    UNLOCK();
    *modelRI = m;
    return ACL_SUCCESS;
}

MDLRI_API aclError aclmdlRIBindStream(aclmdlRI modelRI, aclrtStream stream, uint32_t flag) {
    static const char fn[] = "aclmdlRIBindStream";
    if (!modelRI) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: modelRI is NULL", fn);
    NEED_CTX();
    LOCK();
    emu_model *m = NULL;
    emu_stream *s = NULL;
    /* the real order (BLD-02): the flag, then the stream's persistence and binding
     * (rtsModelBindStream, api_c_model.cc:74-93), then the model type and the capture state
     * (ApiErrorDecorator::ModelBindStream, api_error.cc:3902-3908) */
    aclError rc = ACL_SUCCESS;
    if (flag != ACL_MODEL_STREAM_FLAG_HEAD && flag != ACL_MODEL_STREAM_FLAG_DEFAULT)
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: invalid flag 0x%x", fn, flag);
    if (rc == ACL_SUCCESS) rc = mget(modelRI, &m, fn);
    if (rc == ACL_SUCCESS) rc = sget(stream, &s, fn);
    if (rc != ACL_SUCCESS) goto out;
    if (s->is_default || !(s->flags & ACL_STREAM_PERSISTENT)) {
        /* checked before the capture state: a capturing plain stream is 107000, not 107027 */
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID,
                     "%s: the stream must be created with ACL_STREAM_PERSISTENT", fn);
    } else if (s->owner) {
        rc = emu_err(ACL_ERROR_RT_STREAM_MODEL, "%s: stream %p is already bound to a model", fn,
                     stream);
    } else if ((rc = need_built(m, fn)) != ACL_SUCCESS) {
    } else if (s->cap_model) {
        rc = emu_err(ACL_ERROR_RT_STREAM_CAPTURED, "%s: stream %p is capturing", fn, stream);
    } else if (s->flags & ACL_STREAM_FAST_LAUNCH) { /* RT-23: api_error.cc:3928-3932 */
        rc = emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: a FAST_LAUNCH stream cannot be bound",
                     fn);
    } else {
        s->owner = m;
        s->bind_flag = flag;
        s->ntasks = 0;
        EMU_PUSH(m->streams, m->nstreams, m->capstreams, s);
    }
out:
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRIEndTask(aclmdlRI modelRI, aclrtStream stream) {
    static const char fn[] = "aclmdlRIEndTask";
    if (!modelRI) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: modelRI is NULL", fn);
    NEED_CTX();
    LOCK();
    emu_model *m = NULL;
    emu_stream *s = NULL;
    /* RT-32: a NULL stream is the default stream (910B, runtime.cc:6017-6024); a capturing
     * stream is 107027 (api_error.cc:4239-4242), then a stream not bound to this model 507000
     * (STARS: Context::ModelAddEndGraph, context.cc:2110-2115) */
    aclError rc = mget(modelRI, &m, fn);
    if (rc == ACL_SUCCESS && stream) rc = sget(stream, &s, fn);
    if (rc == ACL_SUCCESS) rc = need_built(m, fn);
    if (rc != ACL_SUCCESS) goto out;
    if (s && s->cap_model) {
        rc = emu_err(ACL_ERROR_RT_STREAM_CAPTURED, "%s: stream %p is capturing", fn, stream);
        goto out;
    }
    if (!s || s->owner != m) {
        rc = emu_err(ACL_ERROR_RT_INTERNAL_ERROR, "%s: stream %p is not bound to the model", fn,
                     stream);
        goto out;
    }
    /* the "end graph" marker: a DEFAULT task that ends the execution (switch.c) */
    emu_item *it = calloc(1, sizeof *it);
    it->o.op = OP_END;
    emu_enqueue_hook(s, it);
    m->end_task = 1;
out:
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRIBuildEnd(aclmdlRI modelRI, void *reserve) {
    static const char fn[] = "aclmdlRIBuildEnd";
    if (!modelRI) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: modelRI is NULL", fn);
    if (reserve) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: reserve must be NULL", fn);
    NEED_CTX();
    LOCK();
    emu_model *m = NULL;
    aclError rc = mget(modelRI, &m, fn);
    if (rc == ACL_SUCCESS) rc = need_built(m, fn);
    if (rc != ACL_SUCCESS) goto out;
    /* EXE-12 / BLD: Model::LoadCompleteByStreamPrep (model.cc:941-957, 969-973) refuses a
     * model without bound streams (RT_ERROR_MODEL_STREAM -> 107005) and, on STARS chips, one
     * without an end task (RT_ERROR_MODEL_NOT_END -> 507011, errcode_manage.cc:190) */
    if (m->nstreams == 0)
        rc = emu_err(ACL_ERROR_RT_STREAM_MODEL, "%s: no stream is bound to the model", fn);
    else if (!m->end_task)
        rc = emu_err(ACL_ERROR_RT_MODEL_EXECUTE,
                     "%s: aclmdlRIEndTask must be called before aclmdlRIBuildEnd", fn);
    else
        m->build_ended = 1;
out:
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRIUnbindStream(aclmdlRI modelRI, aclrtStream stream) {
    static const char fn[] = "aclmdlRIUnbindStream";
    if (!modelRI) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: modelRI is NULL", fn);
    NEED_CTX();
    LOCK();
    emu_model *m = NULL;
    emu_stream *s = NULL;
    /* RT-33: a NULL stream is the default stream (910B, runtime.cc:6017-6024), which is not
     * bound: 107005 like any stream not bound to this model (Model::UnbindStream,
     * model.cc:604-608) */
    aclError rc = mget(modelRI, &m, fn);
    if (rc == ACL_SUCCESS && stream) rc = sget(stream, &s, fn);
    if (rc == ACL_SUCCESS) rc = need_built(m, fn);
    if (rc != ACL_SUCCESS) goto out;
    if (s && s->cap_model) {
        rc = emu_err(ACL_ERROR_RT_STREAM_CAPTURED, "%s: stream %p is capturing", fn, stream);
    } else if (!s || s->owner != m) {
        rc = emu_err(ACL_ERROR_RT_STREAM_MODEL, "%s: stream %p is not bound to the model", fn,
                     stream);
    } else if (m->running > 0) {
        rc = emu_err(ACL_ERROR_RT_MODEL_RUNNING, "%s: the model is running", fn);
    } else {
        for (size_t i = 0; i < m->nstreams; i++)
            if (m->streams[i] == s) {
                memmove(&m->streams[i], &m->streams[i + 1],
                        (m->nstreams - i - 1) * sizeof *m->streams);
                m->nstreams--;
                break;
            }
        unbind(s);
    }
out:
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRIExecute(aclmdlRI modelRI, int32_t timeout) {
    static const char fn[] = "aclmdlRIExecute";
    if (!modelRI) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: modelRI is NULL", fn);
    NEED_CTX();
    LOCK();
    emu_model *m = NULL;
    /* RT-35: the handle first (rtsModelExecute, api_c_model.cc:137), then EXE-11's timeout
     * before the model type (api_error.cc:4033-4041) */
    aclError rc = mget(modelRI, &m, fn);
    if (rc == ACL_SUCCESS && (timeout == 0 || timeout < -1))
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: invalid timeout %d", fn, (int)timeout);
    if (rc == ACL_SUCCESS) rc = need_built(m, fn); /* EXE-10 */
    if (rc != ACL_SUCCESS) goto out;
    if (!m->end_task) { /* EXE-12 */
        rc = emu_err(ACL_ERROR_RT_MODEL_EXECUTE,
                     "%s: aclmdlRIEndTask must be called before execution", fn);
        goto out;
    }
    /* runs on the default stream; the call waits for it (EXE-13: 507046 on expiry, the
     * execution then keeps running, Q-16) */
    emu_cond_on_execute(m);
    emu_stream *s = g_default_stream;
    emu_item *it = calloc(1, sizeof *it);
    it->o.op = OP_MODEL;
    it->model = m;
    m->running++;
    emu_enqueue(s, it);
    rc = emu_wait_sync(s, s->enq, timeout);
out:
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRIAbort(aclmdlRI modelRI) {
    static const char fn[] = "aclmdlRIAbort";
    if (!modelRI) return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: modelRI is NULL", fn);
    NEED_CTX();
    LOCK();
    emu_model *m = NULL;
    aclError rc = mget(modelRI, &m, fn);
    if (rc != ACL_SUCCESS) goto out;
    if (m->parent) {
        rc = emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: not supported for a sub-model", fn);
        goto out;
    }
    /* RT-34: a model still capturing is not refused (ModelAbort has no capture-state check,
     * api_error.cc:4264-4276, api_impl.cc:4498-4522); it has no execution to end */
    /* every execution of the model in flight or queued ends at once (its remaining
     * tasks are skipped); the model stays executable (ABT-02). */
    if (m->running > 0) {
        m->aborting = 1;
        pthread_cond_broadcast(&g_engine_cv);
        struct timespec ts;
        emu_abs_deadline(&ts, 10000);
        while (m->running > 0)
            if (pthread_cond_timedwait(&g_done_cv, &g_lock, &ts) == ETIMEDOUT) break;
        m->aborting = 0;
    }
out:
    UNLOCK();
    return rc;
}
