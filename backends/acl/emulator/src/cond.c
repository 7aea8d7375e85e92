/* cond.c -- conditional tasks and sub-models (semantics.md §19 COND), and the stepping of a
 * model execution (shared by top-level executions and the sub-models a cond task runs).
 *
 * A cond handle owns 8 bytes of internal device memory, 0 at creation (COND-02). With
 * ASSIGN_DEFAULT, ExecuteAsync/Execute store defaultLaunchValue there synchronously at the
 * call (COND-03). When the device reaches a cond task it reads the value and runs a sub-model
 * IF size 2: value != 0 -> [0], 0 -> [1]; IF size 1: value != 0 -> [0]; WHILE: [0]
 * while value != 0 (re-read after every iteration, one iteration per device tick); SWITCH:
 * [value] when value < size, nothing otherwise. */
#include "emu.h"

typedef struct {
    emu_model *sub;
    size_t *pcs;
    void **frames;
} cond_frame;

static void frame_free(cond_frame *f) {
    if (!f) return;
    size_t n = f->pcs ? f->pcs[0] : 0;
    for (size_t i = 0; f->frames && i < n; i++) frame_free(f->frames[i]);
    free(f->pcs);
    free(f->frames);
    free(f);
}

static long select_branch(const struct emu_cond *c, uint64_t v) {
    switch (c->type) {
    case ACL_MODEL_RI_COND_TYPE_IF: return v ? 0 : (c->size == 2 ? 1 : -1);
    case ACL_MODEL_RI_COND_TYPE_WHILE: return v ? 0 : -1;
    default: return v < c->size ? (long)v : -1;
    }
}

static uint64_t cond_value(const struct emu_cond *c) {
    return __atomic_load_n(c->ptr, __ATOMIC_ACQUIRE);
}

/* 1 = the cond task is done, 0 = blocked (the frame keeps where the branch is). */
static int cond_step(const emu_op *o, void **slot, int *polling) {
    struct emu_cond *c = o->cond;
    cond_frame *f = *slot;
    if (!f) {
        long b = select_branch(c, cond_value(c));
        if (b < 0 || !c->subs) return 1;
        f = calloc(1, sizeof *f);
        f->sub = c->subs[b];
        *slot = f;
    }
    int nested_progress = 0;
    if (!emu_model_step(f->sub, &f->pcs, &f->frames, &nested_progress, polling)) {
        *polling = 1; /* re-stepped every device tick */
        return 0;
    }
    *slot = NULL;
    frame_free(f);
    if (c->type == ACL_MODEL_RI_COND_TYPE_WHILE && cond_value(c) != 0) {
        *polling = 1; /* the next iteration at the next tick: the device lock is released */
        return 0;
    }
    return 1;
}

static int is_flow(int op) {
    return op == OP_END || op == OP_ACTIVE || op == OP_SWITCH || op == OP_LABEL_SWITCH;
}

/* One stepping pass over an execution of `m`. pcs[0] = N, the number of stream slots;
 * pcs[1..N] the program counters, pcs[N+1..2N] whether each stream has started (a built
 * model's DEFAULT streams wait for an activation, switch.c), pcs[2N+1] set once the end
 * task ran. */
int emu_model_step(emu_model *m, size_t **ppcs, void ***pframes, int *progress, int *polling) {
    if (m->aborting) return 1;
    if (!*ppcs) {
        size_t n = m->nstreams;
        *ppcs = calloc(2 * n + 2, sizeof **ppcs);
        (*ppcs)[0] = n;
        for (size_t i = 0; i < n; i++)
            (*ppcs)[n + 1 + i] = !m->built || m->streams[i]->bind_flag == ACL_MODEL_STREAM_FLAG_HEAD;
        *pframes = calloc(n + 1, sizeof **pframes);
    }
    size_t *pcs = *ppcs;
    void **frames = *pframes;
    size_t slots = pcs[0];
    size_t n = slots < m->nstreams ? slots : m->nstreams;
    int done = 1, again;
    do {
        again = 0;
        for (size_t i = 0; i < n && !pcs[2 * slots + 1]; i++) {
            emu_stream *is = m->streams[i];
            if (!pcs[slots + 1 + i]) continue;
            while (pcs[i + 1] < is->ntasks && !pcs[2 * slots + 1]) {
                const emu_op *o = &is->tasks[pcs[i + 1]]->dev;
                if (is_flow(o->op)) { /* moves the pc itself */
                    emu_flow_step(m, pcs, i, o, &again);
                    *progress = 1;
                    continue;
                }
                int ok = o->op == OP_COND ? cond_step(o, &frames[i], polling)
                                          : emu_run_op(o, polling);
                if (!ok) break;
                pcs[i + 1]++;
                *progress = 1;
                if (emu_device_failed()) /* a kernel timed out or trapped: the execution
                                          * fails and ends (model_execute_task.cc:227-251) */
                    pcs[2 * slots + 1] = 1;
            }
        }
    } while (again && !pcs[2 * slots + 1]);
    if (!pcs[2 * slots + 1])
        for (size_t i = 0; i < n; i++)
            if (pcs[slots + 1 + i] && pcs[i + 1] < m->streams[i]->ntasks) done = 0;
    if (done && frames) {
        for (size_t i = 0; i < pcs[0]; i++) frame_free(frames[i]), frames[i] = NULL;
    }
    return done;
}

/* COND-03: the host-synchronous reset at ExecuteAsync / Execute time (sub-models included),
 * of the handles a conditional task was added with: the runtime walks the map that
 * AddCondTask's captured task fills (capture_model.cc:286-306, aclgraph_cond_task.cc:303), so
 * a handle never used keeps its value. */
void emu_cond_on_execute(emu_model *m) {
    for (size_t i = 0; i < m->nconds; i++) {
        struct emu_cond *c = m->conds[i];
        if (c->flag == ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT && c->used)
            __atomic_store_n(c->ptr, (uint64_t)c->defval, __ATOMIC_RELEASE);
    }
    for (size_t i = 0; i < m->nsubs; i++) emu_cond_on_execute(m->subs[i]);
}

/* CaptureEnd checks that come first (caller holds g_lock): a sub-model still capturing
 * (COND-09, 107045), a task group still open (TG-07, 107033). */
aclError emu_capture_end_check(emu_model *m) {
    for (size_t i = 0; i < m->nsubs; i++)
        if (m->subs[i]->status == M_CAPTURING)
            return emu_err(ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING,
                           "aclmdlRICaptureEnd: a sub-model is still capturing; the model is "
                           "destroyed");
    for (size_t i = 0; i < m->nstreams; i++) {
        emu_stream *u = m->streams[i]->user;
        if (u && u->cap_model == m && u->grp)
            return emu_err(ACL_ERROR_STREAM_TASK_GROUP_STATUS,
                           "aclmdlRICaptureEnd: a task group is still open; the model is "
                           "destroyed");
    }
    return ACL_SUCCESS;
}

/* ------------------------------------------------------------------------------------------ */

MDLRI_API aclError aclmdlRICondHandleCreate(aclmdlRI modelRI, uint32_t defaultLaunchValue,
                                            aclmdlRICondHandleFlag flag,
                                            aclmdlRICondHandle *handle) {
    static const char fn[] = "aclmdlRICondHandleCreate";
    if (!modelRI || !handle)
        return emu_err(ACL_ERROR_INVALID_PARAM, "%s: modelRI or handle is NULL", fn);
    NEED_CTX();
    LOCK();
    aclError rc = ACL_SUCCESS;
    emu_model *m = modelRI;
    if (!emu_valid(modelRI, MAGIC_MODL)) {
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or destroyed modelRI %p", fn,
                     modelRI);
    } else if ((unsigned)flag > ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT) {
        /* the error decorator checks the flag before the model type
         * (api_error_aclgraph.cc:197-202) */
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: invalid flag %u", fn, (unsigned)flag);
    } else if (m->built) {
        rc = emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: not a capture model", fn);
    } else if (m->status != M_CAPTURING) {
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: the model is not capturing", fn);
    } else {
        struct emu_cond *c = calloc(1, sizeof *c);
        c->magic = MAGIC_COND;
        c->m = m;
        c->defval = defaultLaunchValue;
        c->flag = (uint32_t)flag;
        c->ptr = emu_internal_alloc(sizeof(uint64_t));
        *c->ptr = 0; /* COND-02 */
        EMU_PUSH(m->owned, m->nowned, m->capowned, (void *)c->ptr);
        EMU_PUSH(m->conds, m->nconds, m->capconds, c);
        *handle = c;
    }
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRICondHandleGetCondPtr(aclmdlRICondHandle handle, uint64_t **ptr) {
    static const char fn[] = "aclmdlRICondHandleGetCondPtr";
    if (!handle || !ptr) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: NULL argument", fn);
    NEED_CTX();
    LOCK();
    aclError rc = ACL_SUCCESS;
    if (!emu_valid(handle, MAGIC_COND))
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or stale cond handle %p", fn,
                     handle);
    else
        *ptr = ((struct emu_cond *)handle)->ptr;
    UNLOCK();
    return rc;
}

static emu_model *sub_new(emu_model *parent) {
    emu_model *s = calloc(1, sizeof *s);
    s->magic = MAGIC_MODL;
    s->parent = parent;
    EMU_PUSH(parent->subs, parent->nsubs, parent->capsubs, s);
    g_live_models++;
    return s;
}

MDLRI_API aclError aclmdlRIAddCondTask(aclmdlRICondTaskParams params, aclrtStream stream,
                                       uint32_t flags) {
    static const char fn[] = "aclmdlRIAddCondTask";
    if (!stream) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: stream is NULL", fn);
    NEED_CTX();
    LOCK();
    aclError rc = ACL_SUCCESS;
    emu_stream *s = stream;
    struct emu_cond *c = params.handle;
    uint32_t size = params.size;
    int size_ok = (params.type == ACL_MODEL_RI_COND_TYPE_IF && (size == 1 || size == 2)) ||
                  (params.type == ACL_MODEL_RI_COND_TYPE_WHILE && size == 1) ||
                  (params.type == ACL_MODEL_RI_COND_TYPE_SWITCH && size >= 1 && size <= 65536);
    if (!emu_valid(stream, MAGIC_STRM)) {
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or destroyed stream %p", fn,
                     stream);
    } else if (params.handle && !emu_valid(params.handle, MAGIC_COND)) {
        /* the rts entry validates a non-NULL handle before the decorator's NULL checks */
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or stale cond handle", fn);
    } else if (!params.handle || !params.modelRIArray) {
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: params.handle or modelRIArray is NULL", fn);
    } else if (flags != 0) {
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: flags %u must be 0", fn, flags);
    } else if ((unsigned)params.type > ACL_MODEL_RI_COND_TYPE_SWITCH) {
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: invalid type %u", fn,
                     (unsigned)params.type);
    } else if (c->used) { /* the impl's order (api_impl_aclgraph.cc:240-271): used, capturing,
                            * the handle's model, then the size */
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: the cond handle was already used", fn);
    } else if (!s->cap_model) {
        rc = emu_err(ACL_ERROR_RT_STREAM_NOT_CAPTURED, "%s: stream %p is not capturing", fn,
                     stream);
    } else if (s->cap_model != c->m) {
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID,
                     "%s: the stream captures into another model than the handle's", fn);
    } else if (!size_ok) {
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: size %u is invalid for type %u", fn, size,
                     (unsigned)params.type);
    } else {
        rc = emu_admit(s, OP_COND);
    }
    if (rc != ACL_SUCCESS) {
        if (params.modelRIArray && size_ok) /* COND-06: zeroed on failure */
            memset(params.modelRIArray, 0, size * sizeof *params.modelRIArray);
        goto out;
    }
    c->used = 1;
    c->type = (uint32_t)params.type;
    c->size = size;
    c->subs = calloc(size, sizeof *c->subs);
    for (uint32_t i = 0; i < size; i++) c->subs[i] = sub_new(c->m);
    emu_op o = {.op = OP_COND, .cond = c};
    emu_capture_append(s, &o);
    for (uint32_t i = 0; i < size; i++) params.modelRIArray[i] = c->subs[i];
out:
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRICaptureToModelRIBegin(aclrtStream stream, aclmdlRI modelRI,
                                                 aclmdlRICaptureMode mode) {
    static const char fn[] = "aclmdlRICaptureToModelRIBegin";
    if (!stream || !modelRI)
        return emu_err(ACL_ERROR_INVALID_PARAM, "%s: stream or modelRI is NULL", fn);
    NEED_CTX();
    LOCK();
    aclError rc = ACL_SUCCESS;
    emu_stream *s = stream;
    emu_model *m = modelRI;
    if (!emu_valid(stream, MAGIC_STRM)) {
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or destroyed stream %p", fn,
                     stream);
    } else if (!emu_valid(modelRI, MAGIC_MODL)) {
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or destroyed modelRI %p", fn,
                     modelRI);
    } else if ((unsigned)mode > ACL_MODEL_RI_CAPTURE_MODE_RELAXED) {
        /* the error decorator: mode, stream flags (CAP-18), then the sub-model
         * (api_error_aclgraph.cc:41-52) */
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: invalid mode %u", fn, (unsigned)mode);
    } else if (s->flags & CAPTURE_FORBIDDEN_FLAGS) {
        rc = emu_err(ACL_ERROR_RT_INTERNAL_ERROR, "%s: stream flags 0x%x forbid capture", fn,
                     s->flags);
    } else if (!m->parent) {
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID,
                     "%s: modelRI is not a sub ACL Graph (from aclmdlRIAddCondTask)", fn);
    } else if (m->sub_captured) {
        rc = emu_err(ACL_ERROR_RT_MODEL_CAPTURED, "%s: the sub-model was already captured", fn);
    } else if (s->cap_model) {
        rc = emu_err(ACL_ERROR_RT_STREAM_CAPTURED, "%s: stream %p is already capturing", fn,
                     stream);
    } else if (s->owner) {
        rc = emu_err(ACL_ERROR_RT_STREAM_MODEL, "%s: stream %p is bound to a model", fn, stream);
    } else if (s->is_default) {
        rc = emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: the default stream cannot be captured",
                     fn);
    } else if (emu_stream_pool_full()) { /* FLD-06 R2 */
        rc = emu_err(ACL_ERROR_RT_NO_STREAM_RESOURCE,
                     "%s: no stream resource left for the capture stream", fn);
    } else {
        m->sub_captured = 1;
        m->status = M_CAPTURING;
        m->mode = (int)mode;
        m->begin_tid = emu_tid();
        m->origin = s;
        s->cap_model = m;
        s->cap_is = emu_internal_stream_new(m, s);
        EMU_PUSH(g_models, g_nmodels, g_capmodels, m);
    }
    UNLOCK();
    return rc;
}
