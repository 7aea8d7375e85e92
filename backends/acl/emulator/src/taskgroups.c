/* taskgroups.c -- aclmdlRICaptureTaskGrpBegin/End and aclmdlRICaptureTaskUpdateBegin/End
 * (semantics.md §17 TG-01..18).
 *
 * A group is opened on a capturing stream; every kernel captured on that stream until GrpEnd
 * joins it. Any other task kind issued there fails with 507009 and invalidates the model
 * (TG-04); a task issued on another capturing stream of the same model while a group is open
 * fails with 107034 and invalidates it too (TG-05). Update mode is a non-capturing stream on
 * which each kernel launch replaces, in stream order, the next task of the group (TG-10). */
#include "emu.h"

/* NOPs GrpBegin issues first (taskPrefetchCount: 8 on A2/A3) */
#define EMU_TG_PREFETCH_NOPS 8

static aclError tg_fail(struct emu_taskgrp *g, aclError code) {
    if (g && !g->err) g->err = code;
    return code;
}

/* Caller holds g_lock; `s` is the stream a task of kind `op` is about to be issued on. */
aclError emu_admit(emu_stream *s, int op) {
    emu_model *m = s->cap_model;
    if (m) {
        if (s->grp) {
            if (op != OP_KERNEL) {
                emu_model_invalidate(m);
                tg_fail(s->grp, ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT);
                return emu_err(ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT,
                               "only kernel tasks can be issued inside a task group; the "
                               "capture is invalidated");
            }
            return ACL_SUCCESS;
        }
        int open = 0;
        for (size_t i = 0; i < m->nstreams; i++) {
            emu_stream *u = m->streams[i]->user;
            if (u && u != s && u->cap_model == m && u->grp) {
                tg_fail(u->grp, ACL_ERROR_STREAM_TASK_GROUP_INTR);
                open = 1;
            }
        }
        if (open) {
            emu_model_invalidate(m);
            return emu_err(ACL_ERROR_STREAM_TASK_GROUP_INTR,
                           "a task group is open on another stream of this capture; the "
                           "task group recording is interrupted and the capture invalidated");
        }
        return ACL_SUCCESS;
    }
    if (s->upd) {
        if (op != OP_KERNEL)
            return emu_err(ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT,
                           "only kernel launches can be issued on a stream in task update mode");
        if (s->upd->upd_pos >= s->upd->n)
            return emu_err(ACL_ERROR_RT_INTERNAL_ERROR,
                           "more tasks issued than the task group holds (%zu)", s->upd->n);
    }
    return ACL_SUCCESS;
}

void emu_tg_on_append(emu_stream *user, emu_task *t) {
    struct emu_taskgrp *g = user->grp;
    if (!g || t->host.op != OP_KERNEL) return;
    t->grp = g;
    EMU_PUSH(g->tasks, g->n, g->cap, t);
}

/* The launch item on a stream in update mode becomes an update of the next grouped task,
 * executed in that stream's order (caller holds g_lock). */
static void tg_update_item(emu_stream *s, emu_item *it) {
    struct emu_taskgrp *g = s->upd;
    emu_task *t = g->tasks[g->upd_pos++];
    it->o.op = OP_TG_SET;
    it->o.target = t;
    if (it->owned) { /* the args copy now belongs to the model */
        EMU_PUSH(g->m->owned, g->m->nowned, g->m->capowned, it->owned);
        it->owned = NULL;
    }
}

static aclError tg_stream(aclrtStream h, emu_stream **out, const char *fn) {
    if (!emu_valid(h, MAGIC_STRM))
        return emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or destroyed stream %p", fn, h);
    *out = h;
    return ACL_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */

MDLRI_API aclError aclmdlRICaptureTaskGrpBegin(aclrtStream stream) {
    static const char fn[] = "aclmdlRICaptureTaskGrpBegin";
    if (!stream) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: stream is NULL", fn);
    NEED_CTX();
    LOCK();
    emu_stream *s = NULL;
    aclError rc = tg_stream(stream, &s, fn);
    if (rc != ACL_SUCCESS) goto out;
    if (!s->cap_model) {
        rc = emu_err(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "%s: stream %p is not capturing", fn,
                     stream);
    } else if (s->grp || s->upd) {
        rc = emu_err(ACL_ERROR_STREAM_TASK_GROUP_STATUS,
                     "%s: a task group is already open on stream %p", fn, stream);
    } else {
        emu_model *m = s->cap_model;
        struct emu_taskgrp *g = calloc(1, sizeof *g);
        g->magic = MAGIC_TGRP;
        g->m = m;
        EMU_PUSH(m->grps, m->ngrps, m->capgrps, g);
        /* TG-03 / Q-02: the task prefetch NOPs of an A2/A3 device, DEFAULT tasks that take
         * seq ids (SEQ-02), issued before the group opens */
        for (int i = 0; i < EMU_TG_PREFETCH_NOPS; i++) {
            emu_op nop = {.op = OP_NOP};
            emu_capture_append(s, &nop);
        }
        s->grp = g;
    }
out:
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRICaptureTaskGrpEnd(aclrtStream stream, aclrtTaskGrp *handle) {
    static const char fn[] = "aclmdlRICaptureTaskGrpEnd";
    if (!stream || !handle)
        return emu_err(ACL_ERROR_INVALID_PARAM, "%s: stream or handle is NULL", fn);
    NEED_CTX();
    LOCK();
    emu_stream *s = NULL;
    aclError rc = tg_stream(stream, &s, fn);
    if (rc != ACL_SUCCESS) goto out;
    if (!s->cap_model) {
        rc = emu_err(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "%s: stream %p is not capturing", fn,
                     stream);
        goto out;
    }
    struct emu_taskgrp *g = s->grp;
    if (!g) {
        rc = emu_err(ACL_ERROR_STREAM_TASK_GROUP_STATUS,
                     "%s: no task group is open on stream %p", fn, stream);
        goto out;
    }
    s->grp = NULL; /* the group is closed even when it failed */
    if (g->err) { /* TG-04 / TG-05 / TG-08: *handle is left untouched */
        rc = emu_err(g->err, "%s: the task group recorded error %d", fn, g->err);
        goto out;
    }
    if (s->cap_model->invalidated) { /* ERR-06: the capture was invalidated meanwhile */
        rc = emu_err(ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, "%s: the capture was invalidated",
                     fn);
        goto out;
    }
    *handle = g;
out:
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRICaptureTaskUpdateBegin(aclrtStream stream, aclrtTaskGrp handle) {
    static const char fn[] = "aclmdlRICaptureTaskUpdateBegin";
    if (!stream || !handle)
        return emu_err(ACL_ERROR_INVALID_PARAM, "%s: stream or handle is NULL", fn);
    NEED_CTX();
    LOCK();
    emu_stream *s = NULL;
    struct emu_taskgrp *g = handle;
    aclError rc = tg_stream(stream, &s, fn);
    if (rc != ACL_SUCCESS) goto out;
    if (s->cap_model) {
        rc = emu_err(ACL_ERROR_RT_STREAM_CAPTURED, "%s: stream %p is capturing", fn, stream);
    } else if (s->owner) {
        rc = emu_err(ACL_ERROR_RT_STREAM_MODEL, "%s: stream %p is a model stream", fn, stream);
    } else if (!emu_valid(handle, MAGIC_TGRP)) {
        /* the real runtime does not validate task-group handles (LIFE-07) */
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or stale task group %p", fn,
                     handle);
    } else if (s->upd || s->grp) {
        rc = emu_err(ACL_ERROR_STREAM_TASK_GROUP_STATUS,
                     "%s: stream %p is already in task update mode", fn, stream);
    } else if (g->updating) {
        rc = emu_err(ACL_ERROR_STREAM_TASK_GROUP_STATUS,
                     "%s: task group %p is already being updated", fn, handle);
    } else {
        s->upd = g;
        g->updating = s;
        g->upd_pos = 0;
    }
out:
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRICaptureTaskUpdateEnd(aclrtStream stream) {
    static const char fn[] = "aclmdlRICaptureTaskUpdateEnd";
    if (!stream) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: stream is NULL", fn);
    NEED_CTX();
    LOCK();
    emu_stream *s = NULL;
    aclError rc = tg_stream(stream, &s, fn);
    if (rc != ACL_SUCCESS) goto out;
    if (s->cap_model) {
        rc = emu_err(ACL_ERROR_RT_STREAM_CAPTURED, "%s: stream %p is capturing", fn, stream);
        goto out;
    }
    /* RT-30: a model stream (internal or bound) before the not-in-update-mode check
     * (api_error_aclgraph.cc:107-109) */
    if (s->owner) {
        rc = emu_err(ACL_ERROR_RT_STREAM_MODEL, "%s: stream %p is a model stream", fn, stream);
        goto out;
    }
    struct emu_taskgrp *g = s->upd;
    if (!g) {
        rc = emu_err(ACL_ERROR_STREAM_TASK_GROUP_STATUS,
                     "%s: stream %p is not in task update mode", fn, stream);
        goto out;
    }
    s->upd = NULL; /* TG-13: the stream leaves update mode and the handle is reusable */
    g->updating = NULL;
    /* TG-13/14: only the counts are compared (context_aclgraph.cc:890-898), so an empty group
     * updated with no launch is 0 */
    if (g->upd_pos < g->n)
        rc = emu_err(ACL_ERROR_RT_INTERNAL_ERROR,
                     "%s: %zu task(s) issued, the task group holds %zu", fn, g->upd_pos, g->n);
out:
    UNLOCK();
    return rc;
}

/* used by build.c's enqueue hook */
int emu_tg_enqueue(emu_stream *s, emu_item *it) {
    if (!s->upd || it->o.op != OP_KERNEL) return 0;
    tg_update_item(s, it);
    return 0; /* still enqueued: the update runs in the stream's order */
}

/* Run by the device thread: the update item replaces the grouped task's kernel (TG-10). */
void emu_tg_apply(const emu_op *o) {
    emu_task *t = o->target;
    if (!emu_valid(t, MAGIC_TASK)) return; /* the model was destroyed meanwhile */
    emu_op n = *o;
    n.op = OP_KERNEL;
    n.target = NULL;
    t->host = n;
    t->dev = n;
}
