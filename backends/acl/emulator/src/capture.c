/* capture.c -- aclmdlRICapture*: the capture state machine, fork/join through events,
 * cross-model conflicts and the CaptureEnd checks (CAP, STAT, XS, MODE-05..10). */
#include "emu.h"

int emu_is_capturing(const emu_stream *s) { return s->cap_model != NULL; }

emu_stream *emu_internal_stream_new(emu_model *m, emu_stream *user) {
    emu_stream *is = calloc(1, sizeof *is);
    is->magic = MAGIC_STRM;
    is->id = emu_new_stream_id();
    is->owner = m;
    g_live_internal_streams++; /* released by emu_model_kill */
    is->user = user;
    EMU_PUSH(m->streams, m->nstreams, m->capstreams, is);
    return is;
}

/* Append a task to the internal stream that records `user`'s work (caller holds g_lock).
 * The model's counter gives it the next seq id (SEQ-01). */
emu_task *emu_capture_append(emu_stream *user, const emu_op *o) {
    emu_model *m = user->cap_model;
    emu_stream *is = user->cap_is;
    emu_task *t = calloc(1, sizeof *t);
    t->magic = MAGIC_TASK;
    t->m = m;
    t->is = is;
    t->seq = m->next_seq++;
    t->host = *o;
    t->dev = *o;
    EMU_PUSH(is->tasks, is->ntasks, is->captasks, t);
    if (user->grp) emu_tg_on_append(user, t); /* taskgroups.c */
    return t;
}

void emu_model_invalidate(emu_model *m) { m->invalidated = 1; }

/* The model's internal event standing for user event `e` (created at first use). */
static emu_event *bind_event(emu_event *e, emu_model *m) {
    if (e->cap_model == m && e->cap_internal) return e->cap_internal;
    emu_event *ie = calloc(1, sizeof *ie);
    ie->magic = MAGIC_EVNT;
    ie->id = emu_new_event_id();
    ie->flags = e->flags;
    ie->new_mode = 1;
    ie->internal = 1;
    ie->owner = m;
    e->cap_model = m;
    e->cap_internal = ie;
    size_t n = m->nbound;
    EMU_PUSH(m->bound, m->nbound, m->capbound, e);
    EMU_PUSH(m->ievents, n, m->capievents, ie);
    EMU_PUSH(m->allievents, m->nalli, m->capalli, ie);
    return ie;
}

/* Fault wrong-thread-end-leaks-mode (the real runtime's bug, findings row 3): a wrong-thread
 * CaptureEnd releases the capture mode on the calling thread (Context::CaptureModeExit,
 * context_aclgraph.cc:529-531, 742-776 -> InnerThreadLocalContainer::ThreadCaptureModeExit,
 * inner_thread_local.cpp:203-215), so the beginning thread keeps that mode as its thread
 * capture mode for the rest of the process. The leaked (thread, mode) pairs live here. */
static struct {
    uint64_t tid;
    int mode;
} *g_leaks;
static size_t g_nleaks, g_capleaks;

int emu_leaked_thread_mode(uint64_t tid) {
    int mode = 3;
    for (size_t i = 0; i < g_nleaks; i++)
        if (g_leaks[i].tid == tid && g_leaks[i].mode < mode) mode = g_leaks[i].mode;
    return mode;
}

static void register_capture(emu_model *m) { EMU_PUSH(g_models, g_nmodels, g_capmodels, m); }

void emu_model_unregister_capture(emu_model *m) {
    for (size_t i = 0; i < g_nmodels; i++)
        if (g_models[i] == m) {
            g_models[i] = g_models[--g_nmodels];
            return;
        }
}

/* Every user stream leaves the capture and every user event is released (STAT-04, XS-11). */
static void exit_capture(emu_model *m) {
    for (size_t i = 0; i < m->nstreams; i++) {
        emu_stream *u = m->streams[i]->user;
        if (u && u->cap_model == m) {
            u->cap_model = NULL;
            u->cap_is = NULL;
            u->grp = NULL; /* a task group left open (wrong-thread end) closes with it */
        }
    }
    for (size_t i = 0; i < m->nbound; i++) {
        emu_event *e = m->bound[i];
        if (e->cap_model == m) {
            e->cap_model = NULL;
            e->cap_internal = NULL;
        }
    }
    m->nbound = 0;
    emu_model_unregister_capture(m);
}

static aclError conflict(emu_model *a, emu_model *b, const char *fn) {
    emu_model_invalidate(a);
    emu_model_invalidate(b);
    return emu_err(ACL_ERROR_STREAM_CAPTURE_CONFLICT,
                   "%s: the event belongs to another capture; both captures are invalidated", fn);
}

/* An event operation that involves a capture: `s` is capturing, or (wait) `e` is bound to an
 * open capture. Caller holds g_lock. */
aclError emu_capture_event_op(emu_stream *s, emu_event *e, int op) {
    emu_model *ms = s->cap_model, *me = e->cap_model;
    const char *fn = op == OP_EV_RECORD ? "aclrtRecordEvent"
                     : op == OP_EV_WAIT ? "aclrtStreamWaitEvent" : "aclrtResetEvent";
    if (!ms && (s->flags & CAPTURE_FORBIDDEN_FLAGS)) /* a wait that would join (CAP-18) */
        return emu_err(ACL_ERROR_RT_INTERNAL_ERROR,
                       "%s: stream flags 0x%x forbid joining a capture", fn, s->flags);
    if (s->is_default)
        return emu_err(ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT,
                       "%s: the default stream cannot take part in a capture", fn);
    if ((e->flags & ACL_EVENT_EXTERNAL) && !e->internal) {
        /* CHOICE: an ACL_EVENT_EXTERNAL event (aclrtCreateEventWithFlag) synchronizes across
         * the graph boundary (example 1_model_update): the captured task uses the user's event
         * itself, never an internal one, is not bound to the capture and needs no record in it */
        emu_op o = {.op = op, .event = e};
        emu_capture_append(s, &o);
        return ACL_SUCCESS;
    }
    if (op == OP_EV_WAIT && !me) {
        if (!e->new_mode)
            return emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                           "%s: capture needs events from aclrtCreateEventExWithFlag", fn);
        /* XS-14: an event never recorded has nothing to wait for: 0, no task, no join
         * (api_impl.cc:1644-1671 refuses only an event that HasRecord; Event::Wait returns 0
         * when WaitSendCheck finds no record, event.cc:591-599, 712-718) */
        if (!e->rec_stream && !e->in_model) return ACL_SUCCESS;
        return emu_err(ACL_ERROR_RT_CAPTURE_DEPENDENCY,
                       "%s: the event was not recorded in this capture", fn);
    }
    if (!e->new_mode)
        return emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                       "%s: capture needs events from aclrtCreateEventExWithFlag", fn);
    /* XS-09: an event without a wait task recorded in a capture: 0 and nothing captured
     * (api_impl.cc:2180-2182) */
    if (op == OP_EV_RECORD && ms && !emu_event_has_wait_task(e)) return ACL_SUCCESS;
    if (op == OP_EV_WAIT && !ms) {
        if (emu_stream_pool_full()) {
            /* FLD-07 R3: no internal stream for the joining stream; the stream does not join
             * and the capture is terminated (model-level invalidation: api_impl.cc:1638-1642,
             * capture_model_utils.cc:125-139, context_aclgraph.cc:554-562) */
            emu_model_invalidate(me);
            return emu_err(ACL_ERROR_RT_NO_STREAM_RESOURCE,
                           "%s: no stream resource left for the joining stream", fn);
        }
        /* fork: the stream joins the event's capture (XS-01) */
        s->cap_model = me;
        s->cap_is = emu_internal_stream_new(me, s);
        ms = me;
    }
    if (me && me != ms) {
        if (op != OP_EV_RECORD) return conflict(me, ms, fn);
        /* XS-07: a record asks for a fresh capture event of the recording stream's capture
         * (ApiImpl::CaptureEventRecord, api_impl_capture_event.cc:120-160: always with
         * software capture events), so the event moves to capture B and nothing conflicts;
         * capture A keeps what it already recorded. Wait (:93) and reset (:183) use the
         * current capture event and conflict. */
        e->cap_model = NULL;
        e->cap_internal = NULL;
    }
    /* XS-13: a record of an event already recorded in this capture records a new internal
     * event (api_impl_capture_event.cc:136-149, 67), which later waits take (:89-103) and
     * CaptureEnd resets too (one reset per captured record, XS-08) */
    if (op == OP_EV_RECORD && e->cap_model == ms && e->cap_internal && e->cap_internal->recorded)
        e->cap_internal = NULL;
    emu_event *ie = bind_event(e, ms);
    if (op == OP_EV_RECORD) ie->recorded = 1;
    emu_op o = {.op = op, .event = ie};
    emu_capture_append(s, &o);
    return ACL_SUCCESS;
}

/* XS-02: every joined stream ends with a record whose event a later wait on another stream
 * consumes, and every joined stream reaches the origin through such record->wait edges. */
static int joined_ok(emu_model *m) {
    size_t n = m->nstreams;
    if (n <= 1) return 1;
    emu_stream *origin_is = m->streams[0];
    char *reach = calloc(n, 1);
    reach[0] = 1;
    int changed = 1;
    while (changed) {
        changed = 0;
        for (size_t i = 1; i < n; i++) {
            if (reach[i]) continue;
            emu_stream *x = m->streams[i];
            if (!x->ntasks) continue;
            emu_task *last = x->tasks[x->ntasks - 1];
            if (last->host.op != OP_EV_RECORD) continue;
            for (size_t j = 0; j < n && !reach[i]; j++) {
                if (j == i || !reach[j]) continue;
                emu_stream *y = m->streams[j];
                for (size_t k = 0; k < y->ntasks; k++) {
                    emu_task *t = y->tasks[k];
                    if (t->host.op == OP_EV_WAIT && t->host.event == last->host.event &&
                        t->seq > last->seq) {
                        reach[i] = 1;
                        changed = 1;
                        break;
                    }
                }
            }
        }
    }
    int ok = 1;
    for (size_t i = 0; i < n; i++) ok &= reach[i];
    free(reach);
    (void)origin_is;
    return ok;
}

/* ------------------------------------------------------------------------------------------ */

MDLRI_API aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode) {
    if (!stream) return emu_err(ACL_ERROR_INVALID_PARAM, "aclmdlRICaptureBegin: stream is NULL");
    NEED_CTX();
    LOCK();
    aclError rc = ACL_SUCCESS;
    emu_stream *s = stream;
    if (!emu_valid(stream, MAGIC_STRM)) {
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE,
                     "aclmdlRICaptureBegin: invalid or destroyed stream %p", stream);
    } else if ((unsigned)mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED) {
        /* the error decorator checks the mode before the impl's model check (CAP-09,
         * api_error_aclgraph.cc:37-44) */
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "aclmdlRICaptureBegin: invalid mode %u",
                     (unsigned)mode);
    } else if (s->flags & CAPTURE_FORBIDDEN_FLAGS) { /* the error decorator, before the impl */
        rc = emu_err(ACL_ERROR_RT_INTERNAL_ERROR,
                     "aclmdlRICaptureBegin: stream flags 0x%x forbid capture", s->flags);
    } else if (s->owner) {
        rc = emu_err(ACL_ERROR_RT_STREAM_MODEL,
                     "aclmdlRICaptureBegin: stream %p is bound to a model", stream);
    } else if (s->is_default) {
        rc = emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                     "aclmdlRICaptureBegin: the default stream cannot be captured");
    } else if (s->cap_model) {
        rc = emu_err(ACL_ERROR_RT_STREAM_CAPTURED,
                     "aclmdlRICaptureBegin: stream %p is already capturing", stream);
    } else if (emu_stream_pool_full()) { /* FLD-06 R2: context_aclgraph.cc:299-328 */
        rc = emu_err(ACL_ERROR_RT_NO_STREAM_RESOURCE,
                     "aclmdlRICaptureBegin: no stream resource left for the capture stream");
    } else {
        emu_model *m = calloc(1, sizeof *m);
        m->magic = MAGIC_MODL;
        m->status = M_CAPTURING;
        m->mode = (int)mode;
        m->begin_tid = emu_tid();
        m->origin = s;
        s->cap_model = m;
        s->cap_is = emu_internal_stream_new(m, s);
        register_capture(m);
        g_live_models++;
    }
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus *status,
                                          aclmdlRI *modelRI) {
    if (!stream)
        return emu_err(ACL_ERROR_INVALID_PARAM, "aclmdlRICaptureGetInfo: stream is NULL");
    if (!status && !modelRI)
        return emu_err(ACL_ERROR_INVALID_PARAM,
                       "aclmdlRICaptureGetInfo: status and modelRI are both NULL");
    NEED_CTX();
    LOCK();
    aclError rc = ACL_SUCCESS;
    if (!emu_valid(stream, MAGIC_STRM)) {
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE,
                     "aclmdlRICaptureGetInfo: invalid or destroyed stream %p", stream);
    } else {
        emu_stream *s = stream;
        /* Q-06 / STAT-05: model-level invalidation still reports ACTIVE */
        if (status)
            *status = s->cap_model ? ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE
                                   : ACL_MODEL_RI_CAPTURE_STATUS_NONE;
        if (modelRI) *modelRI = s->cap_model;
    }
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode) {
    if (!mode)
        return emu_err(ACL_ERROR_INVALID_PARAM, "aclmdlRICaptureThreadExchangeMode: mode is NULL");
    NEED_CTX();
    if ((unsigned)*mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID,
                       "aclmdlRICaptureThreadExchangeMode: invalid mode %u", (unsigned)*mode);
    int old = tl_xmode;
    tl_xmode = (int)*mode;
    *mode = (aclmdlRICaptureMode)old;
    return ACL_SUCCESS;
}

MDLRI_API aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI) {
    if (!stream) return emu_err(ACL_ERROR_INVALID_PARAM, "aclmdlRICaptureEnd: stream is NULL");
    NEED_CTX();
    LOCK();
    aclError rc = ACL_SUCCESS;
    emu_stream *s = stream;
    emu_model *m = NULL;
    if (!emu_valid(stream, MAGIC_STRM)) {
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE,
                     "aclmdlRICaptureEnd: invalid or destroyed stream %p", stream);
        goto out;
    }
    if (s->flags & CAPTURE_FORBIDDEN_FLAGS) { /* the error decorator, before the impl */
        rc = emu_err(ACL_ERROR_RT_INTERNAL_ERROR,
                     "aclmdlRICaptureEnd: stream flags 0x%x forbid capture", s->flags);
        goto out;
    }
    if (s->owner) { /* a model's stream, bound or internal: ApiImpl::StreamEndCapture refuses
                     * stm->Model_() != nullptr with RT_ERROR_STREAM_MODEL before the capture
                     * state (feature/aclgraph/v100/api_impl_aclgraph.cc:56-58) */
        rc = emu_err(ACL_ERROR_RT_STREAM_MODEL,
                     "aclmdlRICaptureEnd: stream %p is bound to a model", stream);
        goto out;
    }
    m = s->cap_model;
    if (!m) {
        rc = emu_err(ACL_ERROR_RT_STREAM_NOT_CAPTURED,
                     "aclmdlRICaptureEnd: stream %p is not capturing", stream);
        goto out;
    }
    if (m->origin != s) {
        rc = emu_err(ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED,
                     "aclmdlRICaptureEnd: stream %p did not begin the capture", stream);
        goto out;
    }
    if (!modelRI && !m->parent) { /* COND-08: optional when ending a sub-model capture */
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "aclmdlRICaptureEnd: modelRI is NULL");
        goto out;
    }
    if (m->mode != ACL_MODEL_RI_CAPTURE_MODE_RELAXED && m->begin_tid != emu_tid()) {
        /* CAP-14 / Q-05: the streams leave the capture; the model is neither returned nor
         * destroyed. CHOICE: it becomes READY (without the CaptureEnd EVENT_RESET tasks), so
         * the handle from GetInfo can still be executed or destroyed. */
        exit_capture(m);
        m->status = M_READY;
        if (emu_fault(F_WRONG_THREAD_END_LEAKS_MODE)) {
            g_leaks = emu_grow(g_leaks, &g_capleaks, g_nleaks + 1, sizeof *g_leaks);
            g_leaks[g_nleaks].tid = m->begin_tid;
            g_leaks[g_nleaks++].mode = m->mode;
        }
        rc = emu_err(ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD,
                     "aclmdlRICaptureEnd: a %s capture must be ended by the thread that began it",
                     m->mode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL ? "GLOBAL" : "THREAD_LOCAL");
        goto out;
    }
    if ((rc = emu_capture_end_check(m)) != ACL_SUCCESS) { /* COND-09, TG-07 (cond.c) */
    } else if (m->invalidated) {
        rc = emu_err(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED,
                     "aclmdlRICaptureEnd: the capture was invalidated");
    } else if (!joined_ok(m)) {
        rc = emu_err(ACL_ERROR_RT_STREAM_UNJOINED,
                     "aclmdlRICaptureEnd: a forked stream was not joined back to the origin");
    } else {
        for (size_t i = 0; i < m->nalli; i++)
            if (!m->allievents[i]->recorded) {
                rc = emu_err(ACL_ERROR_RT_CAPTURE_DEPENDENCY,
                             "aclmdlRICaptureEnd: a captured event was never recorded in the "
                             "capture");
                break;
            }
    }
    if (rc != ACL_SUCCESS) {
        /* CAP-13: the model is destroyed, every stream leaves the capture */
        exit_capture(m);
        emu_model_kill(m);
        if (modelRI) *modelRI = NULL;
        goto out;
    }
    /* XS-08: one EVENT_RESET per internal event (per captured record, XS-13) on the origin,
     * in binding order */
    for (size_t i = 0; i < m->nbound; i++) {
        emu_op o = {.op = OP_EV_RESET, .event = m->ievents[i]};
        emu_capture_append(s, &o);
    }
    exit_capture(m);
    m->status = M_READY;
    if (modelRI) *modelRI = m;
out:
    UNLOCK();
    emu_callbacks_flush(); /* LIFE-14: callbacks of a model a failed CaptureEnd destroyed */
    return rc;
}
