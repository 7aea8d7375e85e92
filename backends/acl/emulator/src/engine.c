/* engine.c -- streams, their work queues and the device thread that executes them.
 *
 * Execution model: one background "device" thread. Every user stream has a FIFO of work
 * items; the device thread runs the head item of each stream whenever it can make progress
 * (an event wait blocks until the event is set, a value wait until its condition holds, a
 * model execution until all its internal streams have run to the end). Host threads enqueue
 * and wait on condition variables; everything is serialized by the one global mutex, and
 * kernels run on the device thread with that mutex held. Value waits are re-checked every
 * millisecond, so a host write that bypasses the API (a numpy store into pinned memory) also
 * releases them. */
#include "emu.h"

static emu_stream **g_ustreams; /* live user streams, the default stream included */
static size_t g_nustreams, g_capustreams;

#define SPECIAL_SYNC_FLAGS (ACL_STREAM_PERSISTENT | ACL_STREAM_DEVICE_USE_ONLY | ACL_STREAM_CPU_SCHEDULE)

static emu_stream *stream_new(uint32_t flags) {
    emu_stream *s = calloc(1, sizeof *s);
    s->magic = MAGIC_STRM;
    s->flags = flags;
    s->id = emu_new_stream_id();
    EMU_PUSH(g_ustreams, g_nustreams, g_capustreams, s);
    return s;
}

/* Resolve a stream handle (caller holds g_lock). NULL means the default stream when
 * null_is_default, else 107000. Model-internal streams are refused with 107000. */
aclError emu_stream_get(aclrtStream h, emu_stream **out, int null_is_default, const char *what) {
    if (!h) {
        if (!null_is_default) return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: stream is NULL", what);
        *out = g_default_stream;
        return ACL_SUCCESS;
    }
    if (!emu_valid(h, MAGIC_STRM))
        return emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or destroyed stream %p", what, h);
    emu_stream *s = h;
    if (s->owner && !s->owner->built) /* a stream bound by aclmdlRIBindStream is usable */
        return emu_err(ACL_ERROR_RT_PARAM_INVALID,
                       "%s: stream %p is a model stream (from aclmdlRIGetStreams)", what, h);
    *out = s;
    return ACL_SUCCESS;
}

void emu_enqueue(emu_stream *s, emu_item *it) {
    if (emu_enqueue_hook(s, it)) return; /* recorded into a built model (build.c) */
    it->next = NULL;
    if (s->tail) s->tail->next = it;
    else s->head = it;
    s->tail = it;
    s->enq++;
    pthread_cond_signal(&g_engine_cv);
}

void emu_item_free(emu_item *it) {
    if (it->o.op == OP_MODEL && it->model) {
        it->model->running--;
    }
    free(it->waits);
    free(it->pcs);
    free(it->frames);
    if (it->owned) emu_internal_free(it->owned);
    free(it);
}

static int value_cond(const emu_op *o) {
    uint64_t a = __atomic_load_n((uint64_t *)o->addr, __ATOMIC_ACQUIRE), v = o->value;
    switch (o->flag) {
    case ACL_STREAM_WAIT_VALUE_GEQ: return (int64_t)(a - v) >= 0;
    case ACL_STREAM_WAIT_VALUE_EQ: return a == v;
    case ACL_STREAM_WAIT_VALUE_AND: return (a & v) != 0;
    case ACL_STREAM_WAIT_VALUE_NOR: return ~(a | v) != 0;
    default: return 1;
    }
}

/* the work item the device thread is running (device thread only, g_lock held) */
static emu_item *g_cur_item;

int emu_device_failed(void) { return g_cur_item && g_cur_item->err != ACL_SUCCESS; }

/* ATTR-03: a kernel launched without a timeout attribute gets the default op timeout */
#define DEFAULT_KERNEL_TIMEOUT_US (1800ull * 1000000ull)

/* When the device started the waiting kernel `o` of the current item (created at the first
 * look); NULL outside an item. */
static emu_wait *wait_slot(const emu_op *o, int create) {
    emu_item *it = g_cur_item;
    if (!it) return NULL;
    for (size_t i = 0; i < it->nwaits; i++)
        if (it->waits[i].op == o) return &it->waits[i];
    if (!create) return NULL;
    it->waits = emu_grow(it->waits, &it->capwaits, it->nwaits + 1, sizeof *it->waits);
    emu_wait *w = &it->waits[it->nwaits++];
    w->op = o;
    clock_gettime(CLOCK_MONOTONIC, &w->t0);
    return w;
}

static void wait_done(const emu_op *o) {
    emu_wait *w = wait_slot(o, 0);
    if (w) *w = g_cur_item->waits[--g_cur_item->nwaits];
}

/* A waiting kernel (one whose NAME__ready predicate says it is not ready) stays on the device
 * until it is ready or its launch timeout passes: TIMEOUT / TIMEOUT_US, TIMEOUT 0 never, no
 * attribute the default 1800 s. On expiry it completes with the timeout bit without running
 * (the CQE's timeout bit -> TS_ERROR_TASK_TIMEOUT, task_manager.cc:378-392) and the item
 * records 107020 (error_code.cc:268, errcode_manage.cc:479); inside a replay 507011.
 * 1 = ready (run it), 0 = still waiting, -1 = timed out (done, not run). */
static int kernel_wait(const emu_op *o, const void *args, size_t args_size, int *polling) {
    if (!o->func->ready || o->func->ready(args, args_size)) {
        wait_done(o);
        return 1;
    }
    emu_wait *w = wait_slot(o, 1);
    uint64_t limit = o->attrs.timeout_kind ? o->attrs.timeout_us : DEFAULT_KERNEL_TIMEOUT_US;
    if (w && limit) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t us = (int64_t)(now.tv_sec - w->t0.tv_sec) * 1000000 +
                     (now.tv_nsec - w->t0.tv_nsec) / 1000;
        if (us >= (int64_t)limit) {
            wait_done(o);
            /* inside a replay the execute stream sees the model-execute task fail with
             * TS_MODEL_STREAM_EXE_FAILED -> 507011 (model_execute_task.cc:227-251, 253-282;
             * error_code.cc:240), like any other task failure in the model's streams */
            if (g_cur_item->err == ACL_SUCCESS)
                g_cur_item->err = g_cur_item->o.op == OP_MODEL ? ACL_ERROR_RT_MODEL_EXECUTE
                                                                : ACL_ERROR_RT_TASK_TIMEOUT;
            return -1;
        }
    }
    *polling = 1;
    return 0;
}

/* Run one operation; 1 = done, 0 = blocked. */
static int run_op(const emu_op *o, int *polling) {
    switch (o->op) {
    case OP_KERNEL: {
        unsigned char buf[EMU_KERNEL_ARGS_MAX];
        size_t size;
        void *args = (void *)emu_kernel_args(o, buf, &size); /* the kernel's own layout */
        int w = kernel_wait(o, args, size, polling);
        if (w <= 0) return w < 0; /* still waiting, or timed out (done, not run) */
        if (o->func->fault && o->func->fault(args, size)) {
            /* FLD-09/10: an AI Core exception: not run. On a plain stream the stream's next
             * sync returns 507015 (davinci_kernel_task.cc:974-1026, stream.cc:1790-1829);
             * inside a replay the execution ends and the execute stream gets 507011
             * (TS_MODEL_STREAM_EXE_FAILED, model_execute_task.cc:227-251, notify_task.cc:
             * 414-419) */
            if (g_cur_item && g_cur_item->err == ACL_SUCCESS)
                g_cur_item->err = g_cur_item->o.op == OP_MODEL ? ACL_ERROR_RT_MODEL_EXECUTE
                                                                : ACL_ERROR_RT_AICORE_EXCEPTION;
            return 1;
        }
        /* Every block runs, last block first (KRN-01): a device runs a launch's blocks at
         * the same time in no set order, so a kernel may rely on neither; here a kernel that
         * does the whole operation in every block (accumulate would add numBlocks times) or
         * that expects block 0 to run first gives a wrong output too. numBlocks 0 (a
         * SetParams value truncated to 16 bits, SETP-15) still runs one block. */
        uint32_t blocks = o->num_blocks ? o->num_blocks : 1;
        if (emu_fault(F_WHOLE_KERNEL_PER_BLOCK)) { /* each block believes it is alone */
            for (uint32_t b = 0; b < blocks; b++) o->func->fn(args, size, 0, 1);
            return 1;
        }
        for (uint32_t b = blocks; b-- > 0;) o->func->fn(args, size, b, blocks);
        return 1;
    }
    case OP_MEMCPY: memmove(o->dst, o->src, o->count); return 1;
    case OP_MEMSET: memset(o->dst, o->byte, o->count); return 1;
    case OP_EV_RECORD: o->event->set = 1; return 1;
    case OP_EV_WAIT: return o->event->set;
    case OP_EV_RECORD_EXT: o->event->set = 1; return 1;
    case OP_EV_WAIT_EXT: return o->event->set;
    case OP_EV_RESET: o->event->set = 0; return 1;
    case OP_VAL_WRITE: __atomic_store_n((uint64_t *)o->addr, o->value, __ATOMIC_RELEASE); return 1;
    case OP_VAL_WAIT:
        if (value_cond(o)) return 1;
        *polling = 1;
        return 0;
    case OP_TG_SET: emu_tg_apply(o); return 1;
    default: return 1; /* OP_NOP */
    }
}

int emu_run_op(const emu_op *o, int *polling) { return run_op(o, polling); }

static int step_model(emu_item *it, int *progress, int *polling) {
    /* cond.c: conditional tasks, built models' HEAD streams, abort */
    return emu_model_step(it->model, &it->pcs, &it->frames, progress, polling);
}

static void *engine_main(void *arg) {
    (void)arg;
    LOCK();
    for (;;) {
        int progress = 0, polling = 0;
        for (size_t i = 0; i < g_nustreams; i++) {
            emu_stream *s = g_ustreams[i];
            while (s->head) {
                emu_item *it = s->head;
                g_cur_item = it;
                int done = it->o.op == OP_MODEL ? step_model(it, &progress, &polling)
                                                : run_op(&it->o, &polling);
                g_cur_item = NULL;
                if (!done) break;
                s->head = it->next;
                if (!s->head) s->tail = NULL;
                if (it->err != ACL_SUCCESS && s->dev_err == ACL_SUCCESS) s->dev_err = it->err;
                s->done++;
                emu_item_free(it);
                progress = 1;
            }
        }
        if (progress) {
            pthread_cond_broadcast(&g_done_cv);
            continue;
        }
        if (polling) {
            struct timespec ts;
            emu_abs_deadline(&ts, 1);
            pthread_cond_timedwait(&g_engine_cv, &g_lock, &ts);
        } else {
            pthread_cond_wait(&g_engine_cv, &g_lock);
        }
    }
    return NULL;
}

void emu_engine_start(void) {
    LOCK();
    g_default_stream = stream_new(0);
    g_default_stream->is_default = 1;
    UNLOCK();
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, engine_main, NULL) != 0) abort();
    pthread_attr_destroy(&a);
}

/* Wait until the stream has completed its first `ticket` items (caller holds g_lock).
 * timeout_ms < 0 waits forever; on expiry the work stays queued (507046). */
aclError emu_wait_ticket(emu_stream *s, uint64_t ticket, int64_t timeout_ms) {
    struct timespec ts;
    if (timeout_ms >= 0) emu_abs_deadline(&ts, timeout_ms);
    while (s->done < ticket) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&g_done_cv, &g_lock);
        } else if (pthread_cond_timedwait(&g_done_cv, &g_lock, &ts) == ETIMEDOUT) {
            if (s->done >= ticket) break;
            return emu_err(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                           "stream %p: synchronization timed out after %lld ms", (void *)s,
                           (long long)timeout_ms);
        }
    }
    return ACL_SUCCESS;
}

/* A synchronization (stream sync, aclmdlRIExecute): waits like emu_wait_ticket, but a
 * device-side error of the stream (a kernel that timed out, 107020) ends the wait before the
 * host deadline and is returned once (stream.cc:1975-1976: the sync loop checks the error
 * status on every round). */
aclError emu_wait_sync(emu_stream *s, uint64_t ticket, int64_t timeout_ms) {
    struct timespec ts;
    if (timeout_ms >= 0) emu_abs_deadline(&ts, timeout_ms);
    aclError rc = ACL_SUCCESS;
    while (s->done < ticket && s->dev_err == ACL_SUCCESS) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&g_done_cv, &g_lock);
        } else if (pthread_cond_timedwait(&g_done_cv, &g_lock, &ts) == ETIMEDOUT) {
            if (s->done >= ticket || s->dev_err != ACL_SUCCESS) break;
            return emu_err(ACL_ERROR_RT_STREAM_SYNC_TIMEOUT,
                           "stream %p: synchronization timed out after %lld ms", (void *)s,
                           (long long)timeout_ms);
        }
    }
    if (s->dev_err != ACL_SUCCESS) {
        rc = emu_err(s->dev_err, "stream %p: a task failed on the device (%s)", (void *)s,
                     s->dev_err == ACL_ERROR_RT_TASK_TIMEOUT ? "kernel timeout" : "error");
        s->dev_err = ACL_SUCCESS;
    }
    return rc;
}

/* ------------------------------------------------------------------------------------------ */

MDLRI_API aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority,
                                               uint32_t flag) {
    (void)priority; /* reserved */
    if (!stream) return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream: stream is NULL");
    NEED_CTX();
    /* RT-24: the runtime's CP_PROCESS_USE goes alone (api_error.cc:1375-1381) */
    if ((flag & ACL_STREAM_DEVICE_USE_ONLY) &&
        (flag & (ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC | ACL_STREAM_PERSISTENT |
                 ACL_STREAM_HUGE | ACL_STREAM_CPU_SCHEDULE)))
        return emu_err(ACL_ERROR_RT_PARAM_INVALID,
                       "aclrtCreateStreamWithConfig: DEVICE_USE_ONLY with other flags 0x%x", flag);
    LOCK();
    if (emu_stream_pool_full()) { /* FLD-06 R1: the driver has no stream id left */
        UNLOCK();
        return emu_err(ACL_ERROR_RT_NO_STREAM_RESOURCE,
                       "aclrtCreateStream: no stream resource left (limit %u)", g_stream_limit);
    }
    emu_stream *s = stream_new(flag);
    g_live_streams++;
    UNLOCK();
    *stream = s;
    return ACL_SUCCESS;
}

MDLRI_API aclError aclrtCreateStream(aclrtStream *stream) {
    return aclrtCreateStreamWithConfig(stream, 0, 0);
}

MDLRI_API aclError aclrtDestroyStream(aclrtStream stream) {
    if (!stream) return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtDestroyStream: stream is NULL");
    NEED_CTX();
    LOCK();
    emu_stream *s = NULL;
    aclError rc = emu_stream_get(stream, &s, 0, "aclrtDestroyStream");
    if (rc != ACL_SUCCESS) goto out;
    if (emu_is_capturing(s)) {
        rc = emu_err(ACL_ERROR_RT_STREAM_CAPTURED,
                     "aclrtDestroyStream: stream %p is capturing", stream);
        goto out;
    }
    /* waits for outstanding work, at most 10 s; what is left then is dropped */
    emu_wait_ticket(s, s->enq, 10000);
    while (s->head) {
        emu_item *it = s->head;
        s->head = it->next;
        s->done++;
        emu_item_free(it);
    }
    s->tail = NULL;
    for (size_t i = 0; i < g_nustreams; i++)
        if (g_ustreams[i] == s) {
            g_ustreams[i] = g_ustreams[--g_nustreams];
            break;
        }
    s->magic = 0; /* graveyard: the object is kept, so a stale handle reads 107017 */
    g_live_streams--;
    pthread_cond_broadcast(&g_done_cv);
    rc = ACL_SUCCESS;
out:
    UNLOCK();
    return rc;
}

static aclError sync_stream(aclrtStream stream, int32_t timeout, const char *fn) {
    NEED_CTX();
    if (timeout < -1)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: timeout %d < -1", fn, (int)timeout);
    LOCK();
    emu_stream *s = NULL;
    aclError rc = emu_stream_get(stream, &s, 1, fn);
    if (rc != ACL_SUCCESS) goto out;
    /* TMO-07: timeout 0 is the header's immediate check (acl_rt.h:2817): 0 when the stream's
     * work has completed, else 507046 at once, nothing cancelled. The code rejects it with
     * 107000 (api_error.cc:1442-1444, TMO-08); the reference implementations follow the
     * header (a documented clause the code breaks). */
    if (emu_is_capturing(s)) {
        rc = emu_err(ACL_ERROR_RT_STREAM_CAPTURED, "%s: stream %p is capturing", fn, stream);
        goto out;
    }
    if (s->flags & SPECIAL_SYNC_FLAGS) goto out; /* TMO-04: returns at once */
    if (emu_fault(F_TIMEOUT_IGNORED)) timeout = -1; /* TMO-01 broken: waits forever */
    rc = emu_wait_sync(s, s->enq, timeout);
out:
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclrtSynchronizeStream(aclrtStream stream) {
    return sync_stream(stream, -1, "aclrtSynchronizeStream");
}

MDLRI_API aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout) {
    return sync_stream(stream, timeout, "aclrtSynchronizeStreamWithTimeout");
}

MDLRI_API aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status) {
    if (!status) return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtStreamQuery: status is NULL");
    if (emu_fault(F_CRASH_QUERY)) *(volatile int *)(uintptr_t)(status == NULL) = 0; /* NULL */
    NEED_CTX();
    LOCK();
    emu_stream *s = NULL;
    aclError rc = emu_stream_get(stream, &s, 1, "aclrtStreamQuery");
    if (rc == ACL_SUCCESS && emu_is_capturing(s))
        rc = emu_err(ACL_ERROR_RT_STREAM_CAPTURED, "aclrtStreamQuery: stream %p is capturing",
                     stream);
    if (rc == ACL_SUCCESS && emu_fault(F_HANG_QUERY_SYNC))
        while (s->head) pthread_cond_wait(&g_done_cv, &g_lock); /* waits like a sync */
    if (rc == ACL_SUCCESS)
        *status = s->head ? ACL_STREAM_STATUS_NOT_READY : ACL_STREAM_STATUS_COMPLETE;
    UNLOCK();
    return rc;
}
