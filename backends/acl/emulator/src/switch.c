/* switch.c -- control flow inside a built model: aclrtActiveStream, aclrtSwitchStream, the
 * label API (aclrtCreateLabel / SetLabel / CreateLabelList / SwitchLabelByIndex / Destroy*)
 * and the end task (CANN examples 2_model_switch and label/0_simple_label, scenarios.md S3,
 * S8; runtime api docs of these functions).
 *
 * Each call records one DEFAULT task on a stream bound to a built model (only bound streams
 * take them: an unbound stream or target is 107000, a NULL handle or pointer 100000, a
 * destroyed handle 107017). When an execution reaches the task (emu_model_step, cond.c):
 *   ActiveStream   the target stream starts (a no-op when it has already started);
 *   SwitchStream   *left <cond> *right as signed INT32 / INT64; when it holds the true stream
 *                  starts and the rest of the current stream is skipped, else it goes on;
 *   SwitchLabel    the uint32 *ptr picks a label of the list (past the last one: the last);
 *                  execution continues at that label's marker, on the label's stream, and the
 *                  rest of the current stream is skipped;
 *   EndTask        the execution ends (other streams' remaining tasks are skipped).
 * Labels and label lists stay allocated after destroy (graveyard, stale handles 107017).
 * At most 65,535 labels are live at once (RT-40); a list holds 1..65,535 labels (RT-41). */
#include "emu.h"

#define MAGIC_LABL 0x4C41424Cu
#define MAGIC_LLST 0x4C4C5354u
#define MAX_LABELS 65535u
/* RT-40: aclrtCreateLabel's ids come from the runtime's one LabelAllocator of 0xFFFF ids,
 * [0, 0xFFFF) (runtime.cc:1257-1259, label.cc:34-57): the 65,536th live label is refused */
#define LABEL_IDS 0xFFFFu

static uint64_t g_live_labels; /* under g_lock */

struct emu_label {
    uint32_t magic;
    emu_task *task; /* the marker task aclrtSetLabel recorded */
    emu_stream *stream;
    int listed; /* in a label list: set once, never cleared (RT-38) */
};

struct emu_labellist {
    uint32_t magic;
    struct emu_label **labels;
    size_t n;
};

/* A stream bound to a built model (caller holds g_lock). */
/* A stream bound to a built model (caller holds g_lock). NULL: 100000 (the ACL layer's
 * ACL_REQUIRES_NOT_NULL, stream.cpp:345-346, label.cpp:91); a stream that is not a model
 * stream: RT_ERROR_STREAM_MODEL -> 107005 (ApiImpl::StreamActive api_impl.cc:5086-5091,
 * StreamSwitchEx :5036-5043, LabelSwitchByIndex :5513-5516, Label::Set label.cc:153). */
static aclError bound(aclrtStream h, emu_stream **out, const char *fn, const char *what) {
    if (!h) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: %s is NULL", fn, what);
    if (!emu_valid(h, MAGIC_STRM))
        return emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or destroyed %s %p", fn, what, h);
    emu_stream *s = h;
    if (!s->owner || !s->owner->built || s->cap_model)
        return emu_err(ACL_ERROR_RT_STREAM_MODEL,
                       "%s: %s %p is not bound to a model (aclmdlRIBindStream)", fn, what, h);
    *out = s;
    return ACL_SUCCESS;
}

static void record(emu_stream *s, const emu_op *o) {
    emu_item *it = calloc(1, sizeof *it);
    it->o = *o;
    emu_enqueue_hook(s, it);
}

static long stream_index(const emu_model *m, const emu_stream *s) {
    for (size_t i = 0; i < m->nstreams; i++)
        if (m->streams[i] == s) return (long)i;
    return -1;
}

static int64_t load(const void *p, uint32_t width) {
    if (width == 8) return (int64_t)__atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE);
    return (int32_t)__atomic_load_n((const uint32_t *)p, __ATOMIC_ACQUIRE);
}

static int holds(int64_t l, uint32_t cond, int64_t r) {
    switch (cond) {
    case ACL_RT_EQUAL: return l == r;
    case ACL_RT_NOT_EQUAL: return l != r;
    case ACL_RT_GREATER: return l > r;
    case ACL_RT_GREATER_OR_EQUAL: return l >= r;
    case ACL_RT_LESS: return l < r;
    default: return l <= r; /* ACL_RT_LESS_OR_EQUAL */
    }
}

int emu_flow_step(emu_model *m, size_t *pcs, size_t i, const emu_op *o, int *again) {
    size_t slots = pcs[0];
    size_t *started = pcs + slots + 1;
    emu_stream *is = m->streams[i];
    long j;
    switch (o->op) {
    case OP_END:
        pcs[2 * slots + 1] = 1;
        pcs[i + 1]++;
        return 1;
    case OP_ACTIVE:
        pcs[i + 1]++;
        j = stream_index(m, o->stream2);
        if (j >= 0 && (size_t)j < slots && !started[j]) {
            started[j] = 1;
            *again = 1;
        }
        return 1;
    case OP_SWITCH:
        if (!holds(load(o->addr, (uint32_t)o->count), o->flag, load(o->addr2, (uint32_t)o->count))) {
            pcs[i + 1]++;
            return 1;
        }
        pcs[i + 1] = is->ntasks; /* the rest of this stream stops */
        j = stream_index(m, o->stream2);
        if (j >= 0 && (size_t)j < slots && !started[j]) {
            started[j] = 1;
            *again = 1;
        }
        return 1;
    case OP_LABEL_SWITCH: {
        struct emu_labellist *l = o->llist;
        /* CHOICE: maxValue 0 or past the list means the whole list */
        size_t n = o->value == 0 || o->value > l->n ? l->n : (size_t)o->value;
        uint32_t v = __atomic_load_n((const uint32_t *)o->addr, __ATOMIC_ACQUIRE);
        struct emu_label *lb = l->labels[v < n ? v : n - 1];
        pcs[i + 1] = is->ntasks; /* the rest of this stream stops */
        j = lb->task ? stream_index(m, lb->stream) : -1;
        if (j < 0 || (size_t)j >= slots) return 1; /* label not set here: nothing to run */
        emu_stream *ts = m->streams[j];
        for (size_t k = 0; k < ts->ntasks; k++)
            if (ts->tasks[k] == lb->task) {
                pcs[j + 1] = k;
                started[j] = 1;
                *again = 1;
                break;
            }
        return 1;
    }
    default:
        pcs[i + 1]++;
        return 1;
    }
}

/* ------------------------------------------------------------------------------------------ */

MDLRI_API aclError aclrtActiveStream(aclrtStream activeStream, aclrtStream stream) {
    static const char fn[] = "aclrtActiveStream";
    NEED_CTX();
    LOCK();
    emu_stream *t = NULL, *s = NULL;
    /* NULLs first (ACL layer), then the issuing stream, then the activated one
     * (api_impl.cc:5086-5091) */
    aclError rc = ACL_SUCCESS;
    if (!activeStream || !stream)
        rc = emu_err(ACL_ERROR_INVALID_PARAM, "%s: activeStream or stream is NULL", fn);
    if (rc == ACL_SUCCESS) rc = bound(stream, &s, fn, "stream");
    if (rc == ACL_SUCCESS) rc = bound(activeStream, &t, fn, "activeStream");
    if (rc == ACL_SUCCESS && t->owner != s->owner)
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: the streams are bound to different models",
                     fn);
    if (rc == ACL_SUCCESS) {
        emu_op o = {.op = OP_ACTIVE, .stream2 = t};
        record(s, &o);
    }
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclrtSwitchStream(void *leftValue, aclrtCondition cond, void *rightValue,
                                     aclrtCompareDataType dataType, aclrtStream trueStream,
                                     aclrtStream falseStream, aclrtStream stream) {
    static const char fn[] = "aclrtSwitchStream";
    NEED_CTX();
    /* the ACL layer first (stream.cpp:362-367): NULL pointers and a non-NULL falseStream
     * 100000; then the runtime's condition / data type checks 107000 */
    if (!leftValue || !rightValue || !trueStream || !stream)
        return emu_err(ACL_ERROR_INVALID_PARAM, "%s: a required pointer is NULL", fn);
    if (falseStream)
        return emu_err(ACL_ERROR_INVALID_PARAM, "%s: falseStream is reserved (NULL)", fn);
    if ((unsigned)cond > ACL_RT_LESS_OR_EQUAL)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: invalid condition %d", fn, (int)cond);
    if ((unsigned)dataType > ACL_RT_SWITCH_INT64)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: invalid data type %d", fn, (int)dataType);
    LOCK();
    emu_stream *t = NULL, *s = NULL;
    aclError rc = bound(trueStream, &t, fn, "trueStream");
    if (rc == ACL_SUCCESS) rc = bound(stream, &s, fn, "stream");
    if (rc == ACL_SUCCESS && t->owner != s->owner)
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: the streams are bound to different models",
                     fn);
    if (rc == ACL_SUCCESS) {
        emu_op o = {.op = OP_SWITCH, .addr = leftValue, .addr2 = rightValue, .flag = cond,
                    .count = dataType == ACL_RT_SWITCH_INT64 ? 8 : 4, .stream2 = t};
        record(s, &o);
    }
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclrtCreateLabel(aclrtLabel *label) {
    if (!label) return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtCreateLabel: label is NULL");
    NEED_CTX();
    LOCK();
    aclError rc = ACL_SUCCESS;
    if (g_live_labels >= LABEL_IDS) {
        /* RT_ERROR_LABEL_ID -> 507000 (errcode_manage.cc:365); CondLabelCreate writes NULL
         * (label_common.cc:34-37) */
        *label = NULL;
        rc = emu_err(ACL_ERROR_RT_INTERNAL_ERROR,
                     "aclrtCreateLabel: all %u label ids are in use", LABEL_IDS);
    } else {
        struct emu_label *l = calloc(1, sizeof *l);
        l->magic = MAGIC_LABL;
        g_live_labels++;
        *label = l;
    }
    UNLOCK();
    return rc;
}

MDLRI_API aclError mdlriEmuLiveLabels(uint64_t *labels) {
    LOCK();
    if (labels) *labels = g_live_labels;
    UNLOCK();
    return ACL_SUCCESS;
}

MDLRI_API aclError aclrtDestroyLabel(aclrtLabel label) {
    static const char fn[] = "aclrtDestroyLabel";
    if (!label) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: label is NULL", fn);
    NEED_CTX();
    LOCK();
    aclError rc = ACL_SUCCESS;
    if (!emu_valid(label, MAGIC_LABL))
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or destroyed label %p", fn, label);
    else {
        ((struct emu_label *)label)->magic = 0;
        g_live_labels--; /* its id is free again (RT-40, ~Label: label.cc:93-98) */
    }
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclrtSetLabel(aclrtLabel label, aclrtStream stream) {
    static const char fn[] = "aclrtSetLabel";
    if (!label) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: label is NULL", fn);
    NEED_CTX();
    LOCK();
    emu_stream *s = NULL;
    struct emu_label *l = label;
    aclError rc = ACL_SUCCESS;
    if (!emu_valid(label, MAGIC_LABL))
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or destroyed label %p", fn, label);
    if (rc == ACL_SUCCESS) rc = bound(stream, &s, fn, "stream");
    if (rc == ACL_SUCCESS && l->task && emu_valid(l->task, MAGIC_TASK))
        /* RT-22: RT_ERROR_LABEL_SET (label.cc:167-168) maps to 507000 (errcode_manage.cc:364) */
        rc = emu_err(ACL_ERROR_RT_INTERNAL_ERROR, "%s: label %p is already set", fn, label);
    if (rc == ACL_SUCCESS && !l->listed) /* RT-38: LABEL_PHY_ADDR_NULL (label.cc:170-174) */
        rc = emu_err(ACL_ERROR_RT_INTERNAL_ERROR,
                     "%s: label %p is in no label list (aclrtCreateLabelList first)", fn, label);
    if (rc == ACL_SUCCESS) {
        emu_op o = {.op = OP_LABEL};
        record(s, &o);
        l->task = s->tasks[s->ntasks - 1];
        l->stream = s;
    }
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclrtCreateLabelList(aclrtLabel *labels, size_t num, aclrtLabelList *labelList) {
    static const char fn[] = "aclrtCreateLabelList";
    if (!labels || !labelList)
        return emu_err(ACL_ERROR_INVALID_PARAM, "%s: labels or labelList is NULL", fn);
    NEED_CTX();
    if (num == 0 || num > MAX_LABELS)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: num %zu is not in (0, %u]", fn, num,
                       MAX_LABELS);
    LOCK();
    aclError rc = ACL_SUCCESS;
    for (size_t k = 0; k < num && rc == ACL_SUCCESS; k++) {
        if (!labels[k])
            rc = emu_err(ACL_ERROR_INVALID_PARAM, "%s: labels[%zu] is NULL", fn, k);
        else if (!emu_valid(labels[k], MAGIC_LABL))
            rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: labels[%zu] %p is invalid", fn, k,
                         labels[k]);
    }
    /* RT-38: one label at a time (label.cc:296-300); the ones before a refused one stay listed */
    for (size_t k = 0; k < num && rc == ACL_SUCCESS; k++) {
        struct emu_label *lb = labels[k];
        if (lb->listed)
            rc = emu_err(ACL_ERROR_RT_INTERNAL_ERROR, "%s: labels[%zu] %p is already in a list",
                         fn, k, labels[k]);
        else
            lb->listed = 1;
    }
    if (rc == ACL_SUCCESS) {
        struct emu_labellist *l = calloc(1, sizeof *l);
        l->magic = MAGIC_LLST;
        l->labels = calloc(num, sizeof *l->labels);
        for (size_t k = 0; k < num; k++) l->labels[k] = labels[k];
        l->n = num;
        *labelList = l;
    }
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclrtDestroyLabelList(aclrtLabelList labelList) {
    static const char fn[] = "aclrtDestroyLabelList";
    if (!labelList) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: labelList is NULL", fn);
    NEED_CTX();
    LOCK();
    aclError rc = ACL_SUCCESS;
    if (!emu_valid(labelList, MAGIC_LLST))
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or destroyed label list %p", fn,
                     labelList);
    else
        ((struct emu_labellist *)labelList)->magic = 0;
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclrtSwitchLabelByIndex(void *ptr, uint32_t maxValue, aclrtLabelList labelList,
                                           aclrtStream stream) {
    static const char fn[] = "aclrtSwitchLabelByIndex";
    if (!ptr || !labelList || !stream)
        return emu_err(ACL_ERROR_INVALID_PARAM, "%s: ptr, labelList or stream is NULL", fn);
    NEED_CTX();
    LOCK();
    emu_stream *s = NULL;
    struct emu_labellist *l = labelList;
    aclError rc = ACL_SUCCESS;
    if (!emu_valid(labelList, MAGIC_LLST))
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or destroyed label list %p", fn,
                     labelList);
    /* maxValue is not validated anywhere (label.cpp:85-98, api_error.cc:4752-4765,
     * api_impl.cc:5505-5522, label_stars.cc:23-36): 0 or past the list is accepted */
    if (rc == ACL_SUCCESS) rc = bound(stream, &s, fn, "stream");
    if (rc == ACL_SUCCESS) {
        emu_op o = {.op = OP_LABEL_SWITCH, .addr = ptr, .value = maxValue, .llist = l};
        record(s, &o);
    }
    UNLOCK();
    return rc;
}
