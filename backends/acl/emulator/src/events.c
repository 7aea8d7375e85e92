/* events.c -- events (flag semantics) and value write/wait, outside and inside capture. */
#include "emu.h"

/* the runtime's RT_EVENT_DEFAULT (DDSYNC | TIME_LINE | STREAM_MARK): aclrtCreateEvent's flag */
#define RT_EVENT_DEFAULT_FLAGS 0xEu

static aclError event_new(aclrtEvent *event, uint32_t flags, int new_mode, int ex, int rt_default,
                          const char *fn) {
    if (!event) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: event is NULL", fn);
    NEED_CTX();
    emu_event *e = calloc(1, sizeof *e);
    e->magic = MAGIC_EVNT;
    e->id = emu_new_event_id();
    e->flags = flags;
    e->new_mode = new_mode;
    e->ex = ex;
    e->rt_default = rt_default;
    LOCK();
    g_live_events++;
    UNLOCK();
    *event = e;
    return ACL_SUCCESS;
}

/* "old-mode" event: not capturable (XS-04) */
MDLRI_API aclError aclrtCreateEvent(aclrtEvent *event) {
    return event_new(event, ACL_EVENT_SYNC, 0, 0, 1, "aclrtCreateEvent");
}

MDLRI_API aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag) {
    /* the runtime's EventCreate checks (RT-15): some bit of 0x3F and nothing above it; 0x10
     * and EXTERNAL (0x20) only alone -> 107000, nothing written */
    if (event && ((flag & 0x3Fu) == 0 || flag > 0x3Fu || ((flag & 0x10u) && (flag & ~0x10u)) ||
                  ((flag & ACL_EVENT_EXTERNAL) && (flag & ~ACL_EVENT_EXTERNAL))))
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "aclrtCreateEventWithFlag: flag 0x%x", flag);
    /* only EXTERNAL events of this family can be used in capture */
    return event_new(event, flag, (flag & ACL_EVENT_EXTERNAL) != 0, 0,
                     flag == RT_EVENT_DEFAULT_FLAGS, "aclrtCreateEventWithFlag");
}

MDLRI_API aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag) {
    const uint32_t allowed = ACL_EVENT_TIME_LINE | ACL_EVENT_SYNC |
                             ACL_EVENT_CAPTURE_STREAM_PROGRESS | ACL_EVENT_IPC;
    if (event && (flag & ~allowed))
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "aclrtCreateEventExWithFlag: flag 0x%x",
                       flag);
    return event_new(event, flag, 1, 1, 0, "aclrtCreateEventExWithFlag");
}

static aclError event_get(aclrtEvent h, emu_event **out, const char *fn) {
    if (!emu_valid(h, MAGIC_EVNT))
        return emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or destroyed event %p", fn, h);
    emu_event *e = h;
    if (e->internal)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: %p is a model's internal event", fn, h);
    *out = e;
    return ACL_SUCCESS;
}

MDLRI_API aclError aclrtDestroyEvent(aclrtEvent event) {
    if (!event) return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtDestroyEvent: event is NULL");
    NEED_CTX();
    LOCK();
    emu_event *e = NULL;
    aclError rc = event_get(event, &e, "aclrtDestroyEvent");
    if (rc == ACL_SUCCESS) {
        e->magic = 0; /* graveyard: queued work may still point at it */
        g_live_events--;
    }
    UNLOCK();
    return rc;
}

/* aclrtResetEvent's refusals, as the runtime answers them (all 207000): an event without a
 * wait task (ApiErrorDecorator::EventReset, api_error.cc:1760-1762); an
 * aclrtCreateEventExWithFlag (new-mode) event on any stream, in or out of capture
 * (ApiImpl::EventReset, api_impl.cc:2210-2214); an old-mode event on a capturing stream
 * (:2239-2243). An ACL_EVENT_EXTERNAL event is neither capturing nor to be captured
 * (event_capture.cc:174-196): its plain reset goes on the stream. So a user's reset never
 * captures a task of its own. Caller holds g_lock. */
static aclError reset_refused(const emu_event *e, emu_stream *s) {
    if (e->flags & ACL_EVENT_EXTERNAL) return ACL_SUCCESS;
    if (!emu_event_has_wait_task(e))
        return emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                       "aclrtResetEvent: flag 0x%x has no wait task, nothing to reset", e->flags);
    if (e->new_mode)
        return emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                       "aclrtResetEvent: an aclrtCreateEventExWithFlag event cannot be reset");
    if (emu_is_capturing(s))
        return emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                       "aclrtResetEvent: an old-mode event cannot be reset on a capturing stream");
    return ACL_SUCCESS;
}

/* The refusals a record, wait or reset meets before the capture logic (caller holds g_lock):
 * a device-only event (ACL_EVENT_DEVICE_USE_ONLY, the runtime's MC2) -> 107000 for all three
 * (ApiErrorDecorator::EventRecord / StreamWaitEvent / EventReset, api_error.cc:1702-1708,
 * :1404-1410, :1750-1756); a wait on an event without a wait task -> 207000 (:1414-1416); a
 * record or wait on a stream bound to a built model of an aclrtCreateEvent or
 * aclrtCreateEventExWithFlag event -> 207000 (ApiImpl::EventRecord / StreamWaitEvent,
 * api_impl.cc:2145-2151, :1602-1608). */
static aclError event_op_refused(const emu_event *e, const emu_stream *s, int op, const char *fn) {
    if (e->flags & ACL_EVENT_DEVICE_USE_ONLY)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: a device-only event", fn);
    if (op == OP_EV_WAIT && !emu_event_has_wait_task(e))
        return emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                       "%s: flag 0x%x has no wait task, nothing to wait for", fn, e->flags);
    if (op != OP_EV_RESET && s->owner && s->owner->built && (e->ex || e->rt_default))
        return emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                       "%s: this kind of event cannot be used on a stream bound to a model", fn);
    return ACL_SUCCESS;
}

static aclError event_op(aclrtEvent event, aclrtStream stream, int op, const char *fn) {
    if (!event) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: event is NULL", fn);
    NEED_CTX();
    LOCK();
    emu_event *e = NULL;
    emu_stream *s = NULL;
    aclError rc = event_get(event, &e, fn);
    if (rc == ACL_SUCCESS) rc = emu_stream_get(stream, &s, 1, fn);
    if (rc == ACL_SUCCESS) rc = event_op_refused(e, s, op, fn);
    if (rc == ACL_SUCCESS && op == OP_EV_RESET) rc = reset_refused(e, s);
    if (rc == ACL_SUCCESS) rc = emu_admit(s, op); /* task groups (taskgroups.c) */
    if (rc != ACL_SUCCESS) goto out;
    if (emu_is_capturing(s) || (op == OP_EV_WAIT && e->cap_model)) {
        rc = emu_capture_event_op(s, e, op);
        goto out;
    }
    emu_item *it = calloc(1, sizeof *it);
    it->o.op = op;
    it->o.event = e;
    emu_enqueue(s, it);
    if (op == OP_EV_RECORD) {
        if (s->owner && s->owner->built) {
            e->in_model = 1;
        } else {
            e->rec_stream = s;
            e->rec_ticket = s->enq;
        }
    }
out:
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
    return event_op(event, stream, OP_EV_RECORD, "aclrtRecordEvent");
}

MDLRI_API aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
    return event_op(event, stream, OP_EV_WAIT, "aclrtStreamWaitEvent");
}

MDLRI_API aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream) {
    return event_op(event, stream, OP_EV_RESET, "aclrtResetEvent");
}

/* External record/wait (XS-10): only on a capturing stream (else 107029), once per event per
 * graph (else 107000), not in a sub-graph (207000); the placeholder task acts on the user's
 * event at each replay, and the event is not bound to the capture. */
static aclError external_op(aclrtEvent event, aclrtStream stream, int op, const char *fn) {
    if (!event) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: event is NULL", fn);
    NEED_CTX();
    LOCK();
    emu_event *e = NULL;
    emu_stream *s = NULL;
    aclError rc = event_get(event, &e, fn);
    if (rc == ACL_SUCCESS) rc = emu_stream_get(stream, &s, 1, fn);
    if (rc != ACL_SUCCESS) goto out;
    if (!emu_is_capturing(s)) {
        rc = emu_err(ACL_ERROR_RT_STREAM_NOT_CAPTURED,
                     "%s: EXTERNAL needs a capturing stream", fn);
        goto out;
    }
    emu_model *m = s->cap_model;
    if (m->parent) {
        rc = emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: EXTERNAL is not allowed in a sub-graph",
                     fn);
        goto out;
    }
    for (size_t i = 0; i < m->nstreams; i++)
        for (size_t j = 0; j < m->streams[i]->ntasks; j++) {
            const emu_op *h = &m->streams[i]->tasks[j]->host;
            if ((h->op == OP_EV_RECORD_EXT || h->op == OP_EV_WAIT_EXT) && h->event == e) {
                rc = emu_err(ACL_ERROR_RT_PARAM_INVALID,
                             "%s: the event is already used EXTERNAL in this graph", fn);
                goto out;
            }
        }
    rc = emu_admit(s, op == OP_EV_RECORD_EXT ? OP_EV_RECORD : OP_EV_WAIT);
    if (rc != ACL_SUCCESS) goto out;
    emu_op o = {.op = op, .event = e};
    emu_capture_append(s, &o);
out:
    UNLOCK();
    return rc;
}

/* The ACL layer checks first (event.cpp:100-103, stream.cpp:243-250): event NULL, a flag other
 * than DEFAULT/EXTERNAL and an EXTERNAL wait's non-zero timeout are all 100000. */
MDLRI_API aclError aclrtRecordEventWithFlag(aclrtEvent event, aclrtStream stream, uint32_t flag) {
    static const char fn[] = "aclrtRecordEventWithFlag";
    if (!event) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: event is NULL", fn);
    if (flag != ACL_EVENT_RECORD_DEFAULT && flag != ACL_EVENT_RECORD_EXTERNAL)
        return emu_err(ACL_ERROR_INVALID_PARAM, "%s: invalid flag %u", fn, flag);
    if (flag == ACL_EVENT_RECORD_DEFAULT) return aclrtRecordEvent(event, stream);
    return external_op(event, stream, OP_EV_RECORD_EXT, fn);
}

MDLRI_API aclError aclrtStreamWaitEventWithFlag(aclrtStream stream, aclrtEvent event,
                                                uint32_t timeout, uint32_t flag) {
    static const char fn[] = "aclrtStreamWaitEventWithFlag";
    if (!event) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: event is NULL", fn);
    if (flag != ACL_EVENT_WAIT_DEFAULT && flag != ACL_EVENT_WAIT_EXTERNAL)
        return emu_err(ACL_ERROR_INVALID_PARAM, "%s: invalid flag %u", fn, flag);
    if (flag == ACL_EVENT_WAIT_EXTERNAL && timeout != 0)
        return emu_err(ACL_ERROR_INVALID_PARAM,
                       "%s: EXTERNAL supports only timeout 0 (got %u)", fn, timeout);
    if (flag == ACL_EVENT_WAIT_DEFAULT) return aclrtStreamWaitEvent(stream, event);
    return external_op(event, stream, OP_EV_WAIT_EXT, fn);
}

/* ------------------------------------------------------------------------------------------ */

static aclError value_op(void *devAddr, uint64_t value, uint32_t flag, aclrtStream stream,
                         int op, const char *fn) {
    if (!devAddr) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: devAddr is NULL", fn);
    NEED_CTX();
    if (op == OP_VAL_WRITE && flag != 0)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: flag %u is reserved (must be 0)", fn, flag);
    if (op == OP_VAL_WAIT && flag > ACL_STREAM_WAIT_VALUE_NOR)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: invalid wait flag %u", fn, flag);
    if ((uintptr_t)devAddr % 8)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: devAddr %p is not 8-byte aligned", fn,
                       devAddr);
    LOCK();
    emu_stream *s = NULL;
    aclError rc = emu_stream_get(stream, &s, 1, fn);
    if (rc == ACL_SUCCESS) rc = emu_admit(s, op); /* task groups (taskgroups.c) */
    if (rc != ACL_SUCCESS) goto out;
    if (emu_mem_class(devAddr, 8) != A_DEV) {
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: devAddr %p is not device memory", fn,
                     devAddr);
        goto out;
    }
    emu_op o = {.op = op, .addr = devAddr, .value = value, .flag = flag};
    if (emu_is_capturing(s)) {
        emu_capture_append(s, &o);
    } else {
        emu_item *it = calloc(1, sizeof *it);
        it->o = o;
        emu_enqueue(s, it);
    }
out:
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclrtValueWrite(void *devAddr, uint64_t value, uint32_t flag,
                                   aclrtStream stream) {
    return value_op(devAddr, value, flag, stream, OP_VAL_WRITE, "aclrtValueWrite");
}

MDLRI_API aclError aclrtValueWait(void *devAddr, uint64_t value, uint32_t flag,
                                  aclrtStream stream) {
    return value_op(devAddr, value, flag, stream, OP_VAL_WAIT, "aclrtValueWait");
}

/* ------------------------------------------------------------------------------------------ */

/* aclrtSynchronizeEvent[WithTimeout]: waits until the event's last record (issued outside
 * capture) has run. Checks, in the runtime's order: timeout < -1 107000 (ACL layer,
 * event.cpp:188-189), event NULL 100000 (:190), stale 107017, an EXTERNAL event 207000
 * (api_error.cc:1776-1778), an event of an open capture 107028 (:1779-1781), one recorded on a
 * stream bound to a model 107000 (:1782-1784). An event never recorded returns 0 at once
 * (Event::Synchronize, event.cc:1083-1087); the host deadline gives 507047 (event.cc:1149-1158,
 * errcode_manage.cc:201). Timeout 0 is the header's immediate check (acl_rt.h:1845, TMO-07):
 * 0 if the record has run, else 507047 at once; the code rejects it (api_error.cc:1772-1774,
 * TMO-08), which the reference implementations do not follow. */
static aclError sync_event(aclrtEvent event, int32_t timeout, const char *fn) {
    /* the ACL layer's checks need no context (event.cpp:173-190): a thread without one gets
     * them first, 107002 only after (RT-06) */
    if (timeout < -1)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: timeout %d < -1", fn, (int)timeout);
    if (!event) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: event is NULL", fn);
    NEED_CTX();
    LOCK();
    emu_event *e = NULL;
    aclError rc = event_get(event, &e, fn);
    if (rc != ACL_SUCCESS) goto out;
    if (e->flags & ACL_EVENT_EXTERNAL) {
        rc = emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                     "%s: an external event cannot be synchronized", fn);
    } else if (e->cap_model) {
        rc = emu_err(ACL_ERROR_RT_EVENT_CAPTURED, "%s: the event is part of an open capture", fn);
    } else if (e->in_model) {
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID,
                     "%s: the event was recorded on a stream bound to a model", fn);
    } else if (e->rec_stream) {
        rc = emu_wait_ticket(e->rec_stream, e->rec_ticket, timeout);
        if (rc == ACL_ERROR_RT_STREAM_SYNC_TIMEOUT)
            rc = emu_err(ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
                         "%s: the event's record did not complete within %d ms", fn, (int)timeout);
    }
out:
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclrtSynchronizeEvent(aclrtEvent event) {
    return sync_event(event, -1, "aclrtSynchronizeEvent");
}

MDLRI_API aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout) {
    return sync_event(event, timeout, "aclrtSynchronizeEventWithTimeout");
}
