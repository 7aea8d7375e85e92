/* model.c -- model introspection (LIST, TYPE, SEQ, GETP), updates (SETP, DIS, UPD),
 * execution (EXE) and destruction (LIFE). */
#include "emu.h"

int emu_op_task_type(int op) {
    switch (op) {
    case OP_KERNEL: return ACL_MODEL_RI_TASK_KERNEL;
    case OP_EV_RECORD: return ACL_MODEL_RI_TASK_EVENT_RECORD;
    case OP_EV_WAIT: return ACL_MODEL_RI_TASK_EVENT_WAIT;
    case OP_EV_RESET: return ACL_MODEL_RI_TASK_EVENT_RESET;
    case OP_VAL_WRITE: return ACL_MODEL_RI_TASK_VALUE_WRITE;
    case OP_VAL_WAIT: return ACL_MODEL_RI_TASK_VALUE_WAIT;
    default: return ACL_MODEL_RI_TASK_DEFAULT; /* memcpy, memset, NOP */
    }
}

/* Destroy a model (caller holds g_lock, nothing running). Handles are kept with their magic
 * zeroed (graveyard) so stale model/stream handles read 107017; buffers are released. */
void emu_model_kill(emu_model *m) {
    emu_ext_kill(m); /* callbacks, sub-models, cond/group handles, bound streams (build.c) */
    for (size_t i = 0; i < m->nstreams; i++) {
        emu_stream *is = m->streams[i];
        if (is->magic == MAGIC_STRM && is->owner == m) g_live_internal_streams--;
        for (size_t k = 0; k < is->ntasks; k++) is->tasks[k]->magic = 0;
        is->magic = 0;
    }
    for (size_t i = 0; i < m->nalli; i++) m->allievents[i]->magic = 0;
    for (size_t i = 0; i < m->nowned; i++) emu_internal_free(m->owned[i]);
    m->nowned = 0;
    emu_model_unregister_capture(m);
    m->magic = 0;
    m->status = M_DEAD;
    g_live_models--;
}

static aclError model_get(aclmdlRI h, emu_model **out, const char *fn) {
    if (!emu_valid(h, MAGIC_MODL))
        return emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or destroyed modelRI %p", fn, h);
    if (((emu_model *)h)->parent) /* COND-10 */
        return emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: not supported for a sub-model", fn);
    *out = h;
    return ACL_SUCCESS;
}

/* Task handles are raw pointers in the real runtime (LIFE-07); the emulator checks its own
 * magic anyway as a best effort. */
static aclError task_get(aclmdlRITask h, emu_task **out, const char *fn) {
    if (!emu_valid(h, MAGIC_TASK))
        return emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or stale task %p", fn, h);
    if (((emu_task *)h)->m->parent) /* COND-10 */
        return emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: task of a sub-model", fn);
    *out = h;
    return ACL_SUCCESS;
}

/* The two-phase listing convention (LIST-04/05). copy_back: the public GetStreams fills a
 * temporary array and copies back only on success, only the first n entries
 * (rtModelGetStreams, api_c_standard_soc.cc:1874-1881), so a too-small array is left untouched
 * on 107039 and slots past n keep what they held; GetTasksByStream passes the user array to
 * the inner function (api_c_standard_soc.cc:1901, stream.cc:5427-5442), which fills up to the
 * capacity and sets the tail to NULL. */
static aclError two_phase(void **src_newest_last, size_t n, int reverse, int copy_back,
                          void **out, uint32_t *num, const char *fn) {
    if (!out) {
        *num = (uint32_t)n;
        return ACL_SUCCESS;
    }
    size_t cap = *num;
    int fill = !copy_back || cap >= n || emu_fault(F_NO_107039);
    size_t upto = copy_back ? (cap < n ? cap : n) : cap;
    for (size_t i = 0; fill && i < upto; i++)
        out[i] = i < n ? src_newest_last[reverse ? n - 1 - i : i] : NULL;
    if (cap < n) {
        *num = (uint32_t)cap;
        if (emu_fault(F_NO_107039)) return ACL_SUCCESS; /* LIST-05 broken */
        return emu_err(ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY,
                       "%s: array of %zu entries is too small for %zu", fn, cap, n);
    }
    *num = (uint32_t)n;
    return ACL_SUCCESS;
}

MDLRI_API aclError aclmdlRIGetStreams(aclmdlRI modelRI, aclrtStream *streams,
                                      uint32_t *numStreams) {
    if (!modelRI || !numStreams)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "aclmdlRIGetStreams: NULL modelRI or count");
    NEED_CTX();
    LOCK();
    emu_model *m = NULL;
    aclError rc = model_get(modelRI, &m, "aclmdlRIGetStreams");
    /* LIST-02: most recently attached first, the origin's stream last */
    if (rc == ACL_SUCCESS)
        rc = two_phase((void **)m->streams, m->nstreams, !emu_fault(F_GETSTREAMS_ORIGIN_FIRST),
                       1, streams, numStreams,
                       "aclmdlRIGetStreams");
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRIGetTasksByStream(aclrtStream stream, aclmdlRITask *tasks,
                                            uint32_t *numTasks) {
    if (!stream || !numTasks)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID,
                       "aclmdlRIGetTasksByStream: NULL stream or count");
    NEED_CTX();
    LOCK();
    aclError rc = ACL_SUCCESS;
    emu_stream *s = stream;
    if (!emu_valid(stream, MAGIC_STRM))
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE,
                     "aclmdlRIGetTasksByStream: invalid or destroyed stream %p", stream);
    else if (!s->owner)
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID,
                     "aclmdlRIGetTasksByStream: stream %p is not a model stream", stream);
    else if (s->owner->parent) /* COND-10 */
        rc = emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                     "aclmdlRIGetTasksByStream: stream %p belongs to a sub-model", stream);
    else
        rc = two_phase((void **)s->tasks, s->ntasks, 0, 0, tasks, numTasks,
                       "aclmdlRIGetTasksByStream");
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRITaskGetType(aclmdlRITask task, aclmdlRITaskType *type) {
    if (!task || !type)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "aclmdlRITaskGetType: NULL task or type");
    NEED_CTX();
    LOCK();
    emu_task *t = NULL;
    aclError rc = task_get(task, &t, "aclmdlRITaskGetType");
    if (rc == ACL_SUCCESS) *type = (aclmdlRITaskType)emu_op_task_type(t->host.op);
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRITaskGetSeqId(aclmdlRITask task, uint32_t *id) {
    if (!task || !id)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "aclmdlRITaskGetSeqId: NULL task or id");
    NEED_CTX();
    LOCK();
    emu_task *t = NULL;
    aclError rc = task_get(task, &t, "aclmdlRITaskGetSeqId");
    if (rc == ACL_SUCCESS && t->m->built) /* BLD-06 */
        rc = emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                     "aclmdlRITaskGetSeqId: not supported for a built model");
    if (rc == ACL_SUCCESS) *id = t->seq;
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRITaskGetParams(aclmdlRITask task, aclmdlRITaskParams *params) {
    if (!task || !params)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "aclmdlRITaskGetParams: NULL task or params");
    NEED_CTX();
    LOCK();
    emu_task *t = NULL;
    aclError rc = task_get(task, &t, "aclmdlRITaskGetParams");
    if (rc != ACL_SUCCESS) goto out;
    const emu_op *h = &t->host; /* GETP-06: the host record, new values before Update */
    int type = emu_op_task_type(h->op);
    if (h->op == OP_EV_RECORD_EXT || h->op == OP_EV_WAIT_EXT) {
        /* TYPE-04: GetType says DEFAULT, GetParams the event task with the EXTERNAL flag */
        memset(params, 0, sizeof *params);
        params->type = h->op == OP_EV_RECORD_EXT ? ACL_MODEL_RI_TASK_EVENT_RECORD
                                                 : ACL_MODEL_RI_TASK_EVENT_WAIT;
        params->eventRecordTaskParams.event = h->event;
        params->eventRecordTaskParams.eventFlag = h->event->flags;
        params->eventRecordTaskParams.recordFlag = 1; /* ACL_EVENT_{RECORD,WAIT}_EXTERNAL */
        goto out;
    }
    if (type == ACL_MODEL_RI_TASK_DEFAULT) {
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID,
                     "aclmdlRITaskGetParams: task %p has no parameters (DEFAULT type)", task);
        goto out;
    }
    memset(params, 0, sizeof *params); /* GETP-02 */
    params->type = (aclmdlRITaskType)type;
    if (h->op == OP_KERNEL) params->taskGrp = t->grp; /* TG-09 */
    switch (h->op) {
    case OP_KERNEL:
        params->opInfoPtr = h->opinfo;
        params->opInfoSize = h->opinfo_size;
        params->kernelTaskParams.funcHandle = h->func;
        params->kernelTaskParams.cfg = NULL;
        params->kernelTaskParams.args = h->args; /* the device copy, not the user's pointer */
        params->kernelTaskParams.isHostArgs = 0;
        params->kernelTaskParams.argsSize = h->args_size;
        params->kernelTaskParams.numBlocks = h->num_blocks;
        break;
    case OP_EV_RECORD: /* GETP-04: the model's internal event */
    case OP_EV_WAIT:
    case OP_EV_RESET:
        params->eventRecordTaskParams.event = h->event;
        params->eventRecordTaskParams.eventFlag = h->event->flags;
        params->eventRecordTaskParams.recordFlag = 0;
        break;
    case OP_VAL_WRITE:
        params->valueWriteTaskParams.devAddr = h->addr;
        params->valueWriteTaskParams.value = h->value;
        break;
    case OP_VAL_WAIT:
        params->valueWaitTaskParams.devAddr = h->addr;
        params->valueWaitTaskParams.value = h->value;
        params->valueWaitTaskParams.flag = h->flag;
        break;
    }
out:
    UNLOCK();
    return rc;
}

/* SETP-11 / SETP-12 / SETP-13: the preliminary state check (no state change). */
static aclError can_update(emu_model *m, const char *fn) {
    if (m->built) /* BLD-06 */
        return emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: not supported for a built model", fn);
    if (m->status == M_CAPTURING)
        return emu_err(ACL_ERROR_RT_MODEL_UPDATE_FAILED, "%s: the model is still capturing", fn);
    if (m->status == M_FAULT)
        return emu_err(ACL_ERROR_RT_MODEL_UPDATE_FAILED,
                       "%s: the model is in FAULT state after a failed update", fn);
    if (m->running > 0)
        return emu_err(ACL_ERROR_RT_MODEL_UPDATE_FAILED, "%s: the model is running", fn);
    return ACL_SUCCESS;
}

static aclError fault(emu_model *m, aclError code, const char *fn, const char *why) {
    m->status = M_FAULT; /* SETP-10: terminal */
    return emu_err(code, "%s: %s (the model is now in FAULT state)", fn, why);
}

static void *own_copy(emu_model *m, const void *src, size_t n) {
    void *p = emu_internal_alloc(n);
    memcpy(p, src, n);
    EMU_PUSH(m->owned, m->nowned, m->capowned, p);
    return p;
}

MDLRI_API aclError aclmdlRITaskSetParams(aclmdlRITask task, aclmdlRITaskParams *params) {
    static const char fn[] = "aclmdlRITaskSetParams";
    if (!task || !params)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: NULL task or params", fn);
    NEED_CTX();
    LOCK();
    emu_task *t = NULL;
    emu_model *m = NULL;
    aclError rc = task_get(task, &t, fn);
    if (rc == ACL_SUCCESS) rc = model_get(t->m, &m, fn);
    if (rc == ACL_SUCCESS) rc = can_update(m, fn);
    if (rc != ACL_SUCCESS) goto out;
    int target = emu_op_task_type(t->host.op);
    emu_op n = {0};
    switch ((int)params->type) {
    case ACL_MODEL_RI_TASK_KERNEL: {
        const aclmdlRIKernelTaskParams *k = &params->kernelTaskParams;
        if (target != ACL_MODEL_RI_TASK_KERNEL) {
            rc = fault(m, ACL_ERROR_RT_PARAM_INVALID, fn, "KERNEL params on a non-kernel task");
            goto out;
        }
        if (params->taskGrp) {
            rc = fault(m, ACL_ERROR_RT_PARAM_INVALID, fn, "taskGrp must be NULL");
            goto out;
        }
        if (!k->funcHandle) {
            rc = fault(m, ACL_ERROR_RT_PARAM_INVALID, fn, "funcHandle is NULL");
            goto out;
        }
        if (!emu_valid(k->funcHandle, MAGIC_FUNC)) {
            rc = fault(m, ACL_ERROR_RT_INVALID_HANDLE, fn, "invalid funcHandle");
            goto out;
        }
        if (!k->args || k->argsSize == 0) {
            rc = fault(m, ACL_ERROR_RT_PARAM_INVALID, fn, "args is NULL or argsSize is 0");
            goto out;
        }
        n.op = OP_KERNEL;
        if (emu_cfg_parse(k->cfg, &n.attrs, fn) != ACL_SUCCESS) { /* ATTR-06 (attributes.c) */
            rc = fault(m, ACL_ERROR_RT_PARAM_INVALID, fn, "invalid launch attributes in cfg");
            goto out;
        }
        n.func = k->funcHandle;
        n.args_size = (uint32_t)k->argsSize;
        if (k->isHostArgs) {
            n.args = own_copy(m, k->args, n.args_size); /* host args: copied now */
        } else {
            if (emu_mem_class(k->args, n.args_size) != A_DEV) {
                rc = fault(m, ACL_ERROR_RT_PARAM_INVALID, fn,
                           "args (isHostArgs=0) is not device memory");
                goto out;
            }
            n.args = k->args; /* device args: used in place */
        }
        n.num_blocks = k->numBlocks & 0xFFFFu; /* SETP-15: stored in 16 bits */
        if (params->opInfoPtr && params->opInfoSize) { /* SETP-16 */
            n.opinfo = own_copy(m, params->opInfoPtr, params->opInfoSize);
            n.opinfo_size = params->opInfoSize;
        }
        break;
    }
    case ACL_MODEL_RI_TASK_VALUE_WRITE:
    case ACL_MODEL_RI_TASK_VALUE_WAIT: {
        int wait = params->type == ACL_MODEL_RI_TASK_VALUE_WAIT;
        void *addr = wait ? params->valueWaitTaskParams.devAddr
                          : params->valueWriteTaskParams.devAddr;
        if (target == ACL_MODEL_RI_TASK_DEFAULT) {
            rc = fault(m, ACL_ERROR_RT_PARAM_INVALID, fn, "value params on a DEFAULT task");
            goto out;
        }
        if (params->taskGrp || params->opInfoPtr || params->opInfoSize) {
            rc = fault(m, ACL_ERROR_RT_PARAM_INVALID, fn,
                       "taskGrp/opInfoPtr/opInfoSize must be NULL/NULL/0 for value tasks");
            goto out;
        }
        if (!addr || (uintptr_t)addr % 8 || emu_mem_class(addr, 8) != A_DEV) {
            rc = fault(m, ACL_ERROR_RT_PARAM_INVALID, fn,
                       "devAddr is not 8-byte aligned device memory");
            goto out;
        }
        if (wait && params->valueWaitTaskParams.flag > ACL_STREAM_WAIT_VALUE_NOR) {
            rc = fault(m, ACL_ERROR_RT_PARAM_INVALID, fn, "invalid value-wait flag");
            goto out;
        }
        n.op = wait ? OP_VAL_WAIT : OP_VAL_WRITE; /* SETP-07: may convert the task */
        n.addr = addr;
        n.value = wait ? params->valueWaitTaskParams.value : params->valueWriteTaskParams.value;
        n.flag = wait ? params->valueWaitTaskParams.flag : 0;
        break;
    }
    default:
        rc = fault(m, ACL_ERROR_RT_PARAM_INVALID, fn,
                   "only KERNEL, VALUE_WRITE and VALUE_WAIT params can be set");
        goto out;
    }
    t->host = n; /* at once: GetType/GetParams see it; the device record changes at Update */
    if (emu_fault(F_SETPARAMS_WITHOUT_UPDATE)) { /* SETP-01 broken: live now, still READY */
        t->dev = n;
        goto out;
    }
    t->pending = UPD_SET;
    m->status = M_UPDATING;
out:
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRITaskDisable(aclmdlRITask task) {
    static const char fn[] = "aclmdlRITaskDisable";
    if (!task) return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: task is NULL", fn);
    NEED_CTX();
    LOCK();
    emu_task *t = NULL;
    emu_model *m = NULL;
    aclError rc = task_get(task, &t, fn);
    if (rc == ACL_SUCCESS) rc = model_get(t->m, &m, fn);
    if (rc == ACL_SUCCESS) rc = can_update(m, fn);
    if (rc != ACL_SUCCESS) goto out;
    if (emu_op_task_type(t->host.op) == ACL_MODEL_RI_TASK_DEFAULT) {
        rc = fault(m, ACL_ERROR_RT_PARAM_INVALID, fn, "a DEFAULT task cannot be disabled");
        goto out;
    }
    t->pending = UPD_DISABLE;
    t->host.opinfo = NULL; /* DIS-10 */
    t->host.opinfo_size = 0;
    m->status = M_UPDATING;
out:
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRIUpdate(aclmdlRI modelRI) {
    if (!modelRI) return emu_err(ACL_ERROR_RT_PARAM_INVALID, "aclmdlRIUpdate: modelRI is NULL");
    NEED_CTX();
    LOCK();
    emu_model *m = NULL;
    aclError rc = model_get(modelRI, &m, "aclmdlRIUpdate");
    if (rc == ACL_SUCCESS && m->built) /* BLD-06 */
        rc = emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                     "aclmdlRIUpdate: not supported for a built model");
    if (rc != ACL_SUCCESS) goto out;
    if (m->status == M_FAULT && emu_fault(F_FAULT_NOT_STICKY)) { /* UPD-04 broken */
        m->status = M_READY;
        goto out;
    }
    if (m->status == M_CAPTURING || m->status == M_FAULT) {
        rc = emu_err(ACL_ERROR_RT_MODEL_UPDATE_FAILED, "aclmdlRIUpdate: the model is %s",
                     m->status == M_FAULT ? "in FAULT state" : "still capturing");
        goto out;
    }
    if (m->status != M_UPDATING) goto out; /* UPD-01: nothing pending */
    for (size_t i = 0; i < m->nstreams; i++) {
        emu_stream *is = m->streams[i];
        size_t keep = 0, removed = 0;
        for (size_t k = 0; k < is->ntasks; k++) {
            emu_task *t = is->tasks[k];
            if (t->pending == UPD_DISABLE) {
                t->magic = 0; /* DIS-05: the handle is dangling from now on */
                removed++;
                continue;
            }
            if (t->pending == UPD_SET) t->dev = t->host;
            t->pending = UPD_NONE;
            is->tasks[keep++] = t; /* seq ids untouched (SEQ-05) */
        }
        is->ntasks = keep;
        if (removed && keep == 0) { /* DIS-07: a NOP with a new seq id */
            emu_task *nop = calloc(1, sizeof *nop);
            nop->magic = MAGIC_TASK;
            nop->m = m;
            nop->is = is;
            nop->seq = m->next_seq++;
            nop->host.op = nop->dev.op = OP_NOP;
            EMU_PUSH(is->tasks, is->ntasks, is->captasks, nop);
        }
    }
    m->status = M_READY;
out:
    UNLOCK();
    return rc;
}

/* a captured model's internal streams, its sub-models' included (FLD-08) */
static size_t model_streams(const emu_model *m) {
    size_t n = m->nstreams;
    for (size_t i = 0; i < m->nsubs; i++) n += model_streams(m->subs[i]);
    return n;
}

/* The checks in the runtime's order (RT-29): NULL model (model_ri.cpp:30), the handles
 * (api_c.cc:1709-1710), ApiErrorDecorator::ModelExecute (api_error.cc:3994-4023: model stream
 * 107000, capturing stream 107027, sub-model 207000), the model's state (capture_model.cc:
 * 310-324; model.cc:1294-1307 for a built model without EndTask or BuildEnd, RT-28), and the
 * model-execute task's allocation on a stream in task-update mode (507009, TG-15, stream.cc:
 * 4747-4760) last. */
MDLRI_API aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream) {
    static const char fn[] = "aclmdlRIExecuteAsync";
    if (!modelRI)
        return emu_err(emu_fault(F_EXECUTE_NULL_MODEL_107000) ? ACL_ERROR_RT_PARAM_INVALID
                                                             : ACL_ERROR_INVALID_PARAM,
                       "%s: modelRI is NULL", fn);
    NEED_CTX();
    LOCK();
    emu_model *m = modelRI;
    emu_stream *s = g_default_stream; /* Q-08 CHOICE: a NULL stream means the default stream */
    aclError rc = ACL_SUCCESS;
    if (!emu_valid(modelRI, MAGIC_MODL)) {
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or destroyed modelRI %p", fn,
                     modelRI);
        goto out;
    }
    if (stream && !emu_valid(stream, MAGIC_STRM)) {
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or destroyed stream %p", fn,
                     stream);
        goto out;
    }
    if (stream) s = stream;
    if (s->owner) { /* EXE-06: internal, or bound to a built model (IsModelStream) */
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: stream %p is a model stream", fn, stream);
        goto out;
    }
    if (emu_is_capturing(s)) {
        rc = emu_err(ACL_ERROR_RT_STREAM_CAPTURED, "%s: stream %p is capturing", fn, stream);
        goto out;
    }
    if (s->flags & (ACL_STREAM_PERSISTENT | ACL_STREAM_DEVICE_USE_ONLY | ACL_STREAM_CPU_SCHEDULE)) {
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: execute on an ordinary stream", fn);
        goto out;
    }
    if (m->parent) { /* EXE-08, COND-10 */
        rc = emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: not supported for a sub-model", fn);
        goto out;
    }
    if (m->status == M_CAPTURING) {
        rc = emu_err(ACL_ERROR_RT_MODEL_CAPTURED, "%s: the model is still capturing", fn);
        goto out;
    }
    if (m->status != M_READY &&
        !(m->status == M_UPDATING && emu_fault(F_EXECUTE_WHILE_UPDATING))) {
        rc = emu_err(ACL_ERROR_RT_MODEL_EXECUTE, "%s: the model is %s", fn,
                     m->status == M_FAULT ? "in FAULT state"
                                          : "UPDATING (call aclmdlRIUpdate first)");
        goto out;
    }
    if (m->built && !m->end_task) { /* EXE-12 */
        rc = emu_err(ACL_ERROR_RT_MODEL_EXECUTE,
                     "%s: aclmdlRIEndTask must be called before execution", fn);
        goto out;
    }
    if (m->built && !m->build_ended) { /* RT-28: isModelComplete_ is set by BuildEnd only */
        rc = emu_err(ACL_ERROR_RT_MODEL_EXECUTE,
                     "%s: aclmdlRIBuildEnd must be called before execution", fn);
        goto out;
    }
    rc = emu_admit(s, OP_MODEL); /* TG-15: 507009 in task-update mode (taskgroups.c) */
    if (rc != ACL_SUCCESS) goto out;
    if (!m->built && g_model_stream_limit && model_streams(m) > g_model_stream_limit) {
        /* FLD-08 R4: the software-SQ pool has no SQ/CQ for every stream of the model
         * (CaptureModel::BuildSqCq, capture_model.cc:1012-1043); nothing runs */
        rc = emu_err(ACL_ERROR_RT_RESOURCE_ALLOC_FAIL,
                     "%s: the model has %zu streams, more than the %u SQ/CQs available", fn,
                     model_streams(m), g_model_stream_limit);
        goto out;
    }
    emu_cond_on_execute(m); /* COND-03: ASSIGN_DEFAULT, host-synchronous (cond.c) */
    emu_item *it = calloc(1, sizeof *it);
    it->o.op = OP_MODEL;
    it->model = m;
    m->running++;
    emu_enqueue(s, it);
out:
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRIDestroy(aclmdlRI modelRI) {
    static const char fn[] = "aclmdlRIDestroy";
    if (!modelRI) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: modelRI is NULL", fn);
    NEED_CTX();
    LOCK();
    emu_model *m = NULL;
    aclError rc = model_get(modelRI, &m, fn);
    if (rc != ACL_SUCCESS) goto out;
    if (m->status == M_CAPTURING) {
        rc = emu_err(ACL_ERROR_RT_MODEL_CAPTURED, "%s: the model is still capturing", fn);
        goto out;
    }
    /* LIFE-03: wait up to 10 s for executions in flight */
    struct timespec ts;
    emu_abs_deadline(&ts, 10000);
    while (m->running > 0)
        if (pthread_cond_timedwait(&g_done_cv, &g_lock, &ts) == ETIMEDOUT) break;
    if (m->running > 0) {
        rc = emu_err(ACL_ERROR_RT_MODEL_RUNNING, "%s: the model is still running after 10 s", fn);
        goto out;
    }
    emu_model_kill(m);
out:
    UNLOCK();
    emu_callbacks_flush(); /* LIFE-09: in this thread, before Destroy returns (callbacks.c) */
    return rc;
}
