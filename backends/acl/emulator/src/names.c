/* names.c -- aclmdlRISetName/GetName/GetId (semantics.md §20 NAME), aclmdlRIDebugJsonPrint and
 * aclmdlRIDebugPrint (§21 DBG). */
#include "emu.h"

#include <unistd.h>

static uint32_t g_next_id = 1;

static aclError mget(aclmdlRI h, emu_model **out, const char *fn) {
    if (!emu_valid(h, MAGIC_MODL))
        return emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or destroyed modelRI %p", fn, h);
    *out = h;
    return ACL_SUCCESS;
}

MDLRI_API aclError aclmdlRISetName(aclmdlRI modelRI, const char *name) {
    static const char fn[] = "aclmdlRISetName";
    if (!modelRI || !name) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: NULL argument", fn);
    NEED_CTX();
    LOCK();
    emu_model *m = NULL;
    aclError rc = mget(modelRI, &m, fn);
    if (rc == ACL_SUCCESS) { /* NAME-01: the last call wins; NAME-03: never truncated */
        char *copy = strdup(name);
        if (!copy) abort();
        free(m->name);
        m->name = copy;
    }
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRIGetName(aclmdlRI modelRI, uint32_t maxLen, char *name) {
    static const char fn[] = "aclmdlRIGetName";
    if (!modelRI || !name) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: NULL argument", fn);
    NEED_CTX();
    LOCK();
    emu_model *m = NULL;
    aclError rc = mget(modelRI, &m, fn);
    if (rc != ACL_SUCCESS) goto out;
    if (maxLen == 0) {
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: maxLen is 0", fn);
        goto out;
    }
    const char *n = m->name ? m->name : ""; /* NAME-02 */
    size_t need = strlen(n) + 1;
    if (maxLen < need) { /* NAME-03: like a failing memcpy_s, the buffer is cleared */
        memset(name, 0, maxLen);
        rc = emu_err(ACL_ERROR_RT_INTERNAL_ERROR,
                     "%s: the name needs %zu bytes, the buffer has %u", fn, need, maxLen);
        goto out;
    }
    memcpy(name, n, need);
out:
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRIGetId(aclmdlRI modelRI, uint32_t *modelRIId) {
    static const char fn[] = "aclmdlRIGetId";
    if (!modelRI || !modelRIId) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: NULL argument", fn);
    NEED_CTX();
    LOCK();
    emu_model *m = NULL;
    aclError rc = mget(modelRI, &m, fn);
    if (rc == ACL_SUCCESS) {
        if (m->id == 0) m->id = g_next_id++; /* given at first query, never reused */
        *modelRIId = m->id;
    }
    UNLOCK();
    return rc;
}

/* The runtime's task type names (TaskInfo::typeName: davinci_kernel_task.cc:67,
 * event_task.cc:57/244/372, memory_task.cc:429/737/759, memory_memcpy_async_task.cc:295,
 * memory_task_v200_base.cc:553, dump_task.cc:220, model_graph_task.cc:26,
 * stream_task_active.cc:119, cond_op_stream_task.cc:258/513, cond_op_label_task.cc:25,
 * aclgraph_cond_task.cc:215, capture_model.cc:75). */
static const char *type_name(int op) {
    switch (op) {
    case OP_KERNEL: return "KERNEL_AICORE";
    case OP_EV_RECORD: return "EVENT_RECORD";
    case OP_EV_WAIT: return "EVENT_WAIT";
    case OP_EV_RECORD_EXT: return "CAPTURE_RECORD_EXTERNAL";
    case OP_EV_WAIT_EXT: return "CAPTURE_WAIT_EXTERNAL";
    case OP_EV_RESET: return "EVENT_RESET";
    case OP_VAL_WRITE: return "MEM_WRITE_VALUE";
    case OP_VAL_WAIT: return "MEM_WAIT_VALUE";
    case OP_MEMCPY: return "MEMCPY_ASYNC";
    case OP_MEMSET: return "MEMSET_ASYNC";
    case OP_COND: return "CONDITION_OP";
    case OP_END: return "MODEL_END_GRAPH";
    case OP_ACTIVE: return "STREAM_ACTIVE";
    case OP_SWITCH: return "STREAM_SWITCH";
    case OP_LABEL: return "LABEL_SET";
    case OP_LABEL_SWITCH: return "STREAM_LABEL_SWITCH_BY_INDEX";
    default: return "NOP";
    }
}

static void json_string(FILE *f, const char *v) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

/* DBG-01: the runtime's trace writer (Model::ModelDebugJsonPrint, model_aclgraph.cc:50-80;
 * Stream::DebugJsonPrintForModelStm, stream.cc:5125-5180; TraceEventToJson, stream.cc:4980-
 * 5017): a JSON array, one "X" event per line for each task of each model stream. "ts" adds up
 * per stream (NOP 1, *RECORD* 5, *WAIT* 15, else 10: stream.hpp:37-40), "dur" is 0.5 / 4.5 /
 * 14.5 / 9.5 (stream.hpp:62-65); args carry "Model Id", "Stream Id", "Task Id", "Task Type",
 * and for kernels "Numblocks" and "Schem Mode"; VERBOSE adds "Kernel Args" (the argument
 * block as 0x%016x uint64 words) and "Kernel Args Size" (stream.cc:5050-5075). Unlike the
 * runtime, the separators never leave a trailing comma when the last stream is empty. */
static void dump(FILE *f, emu_model *m, uint32_t model_id, int verbose) {
    int first = 1;
    long pid = (long)getpid();
    fputs("[\n", f);
    for (size_t i = 0; i < m->nstreams; i++) {
        emu_stream *is = m->streams[i];
        uint32_t ts = 0;
        for (size_t k = 0; k < is->ntasks; k++) {
            const emu_op *o = &is->tasks[k]->host;
            const char *type = type_name(o->op);
            char name[192];
            if (o->op == OP_KERNEL)
                snprintf(name, sizeof name, "%s", o->func->name);
            else if (o->event)
                snprintf(name, sizeof name, "%s_%u", type, o->event->id);
            else if (o->op == OP_VAL_WRITE || o->op == OP_VAL_WAIT)
                snprintf(name, sizeof name, "%s_%llu", type,
                         (unsigned long long)(uintptr_t)o->addr);
            else
                snprintf(name, sizeof name, "%s", type);
            const char *dur;
            uint32_t step;
            if (strcmp(type, "NOP") == 0) dur = "0.5", step = 1;
            else if (strstr(type, "RECORD")) dur = "4.5", step = 5;
            else if (strstr(type, "WAIT")) dur = "14.5", step = 15;
            else dur = "9.5", step = 10;
            if (!first) fputs(",\n", f);
            first = 0;
            fputs("{\"name\":", f);
            json_string(f, name);
            fprintf(f,
                    ",\"pid\":\"%ld aclGraph\",\"tid\":\"stream%u\",\"ts\":%u,\"dur\":%s,"
                    "\"ph\":\"X\",\"args\":{\"Model Id\":%u,\"Stream Id\":%u,\"Task Id\":%zu,"
                    "\"Task Type\":\"%s\"",
                    pid, is->id, ts, dur, model_id, is->id, k, type);
            if (o->op == OP_ACTIVE && o->stream2)
                fprintf(f, ",\"Active Stream Id\":%u", o->stream2->id);
            if (o->op == OP_KERNEL) {
                fprintf(f, ",\"Numblocks\":%u,\"Schem Mode\":%u", o->num_blocks,
                        (unsigned)o->attrs.schem_mode);
                if (verbose && o->args && o->args_size) {
                    fputs(",\"Kernel Args\":\"", f);
                    size_t words = o->args_size / 8;
                    for (size_t j = 0; j < words; j++) {
                        uint64_t w;
                        memcpy(&w, (const char *)o->args + 8 * j, 8);
                        fprintf(f, "%s0x%016llx", j ? " " : "", (unsigned long long)w);
                    }
                    fprintf(f, "\",\"Kernel Args Size\":%zu", o->args_size);
                }
            }
            fputs("}}", f);
            ts += step;
        }
    }
    fputs("\n]", f);
}

MDLRI_API aclError aclmdlRIDebugJsonPrint(aclmdlRI modelRI, const char *path, uint32_t flags) {
    static const char fn[] = "aclmdlRIDebugJsonPrint";
    if (!modelRI || !path) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: NULL argument", fn);
    NEED_CTX();
    LOCK();
    emu_model *m = NULL;
    aclError rc = mget(modelRI, &m, fn);
    if (rc != ACL_SUCCESS) goto out;
    FILE *f = fopen(path, "w"); /* DBG-03: any flags; only bit 0 (VERBOSE) matters */
    if (!f) {
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: cannot open %s: %s", fn, path,
                     strerror(errno));
        goto out;
    }
    if (m->id == 0) m->id = g_next_id++; /* the runtime's model id exists from creation */
    dump(f, m, m->id, (flags & ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE) != 0);
    fclose(f);
out:
    UNLOCK();
    return rc;
}

/* DBG-04: the dump goes to the runtime's log, which the emulator does not keep; only the model
 * is checked, at any time (capturing, captured or built). */
MDLRI_API aclError aclmdlRIDebugPrint(aclmdlRI modelRI) {
    static const char fn[] = "aclmdlRIDebugPrint";
    if (!modelRI) return emu_err(ACL_ERROR_INVALID_PARAM, "%s: modelRI is NULL", fn);
    NEED_CTX();
    LOCK();
    emu_model *m = NULL;
    aclError rc = mget(modelRI, &m, fn);
    UNLOCK();
    return rc;
}
