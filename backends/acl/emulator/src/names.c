/* names.c -- aclmdlRISetName/GetName/GetId (semantics.md §20 NAME) and aclmdlRIDebugJsonPrint
 * (§21 DBG). */
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

static const char *type_name(int op) {
    switch (op) {
    case OP_KERNEL: return "KERNEL";
    case OP_EV_RECORD: return "EVENT_RECORD";
    case OP_EV_WAIT: return "EVENT_WAIT";
    case OP_EV_RECORD_EXT: return "EVENT_RECORD_EXTERNAL";
    case OP_EV_WAIT_EXT: return "EVENT_WAIT_EXTERNAL";
    case OP_EV_RESET: return "EVENT_RESET";
    case OP_VAL_WRITE: return "VALUE_WRITE";
    case OP_VAL_WAIT: return "VALUE_WAIT";
    case OP_MEMCPY: return "MEMCPY";
    case OP_MEMSET: return "MEMSET";
    case OP_COND: return "COND";
    default: return "DEFAULT";
    }
}

/* DBG-01: a Chrome-trace JSON array, one "X" event per task of every model stream. */
static void dump(FILE *f, emu_model *m, int verbose) {
    int first = 1;
    long pid = (long)getpid();
    fputs("[\n", f);
    for (size_t i = 0; i < m->nstreams; i++) {
        emu_stream *is = m->streams[i];
        for (size_t k = 0; k < is->ntasks; k++) {
            emu_task *t = is->tasks[k];
            fprintf(f,
                    "%s  {\"name\": \"%s\", \"ph\": \"X\", \"ts\": %u, \"dur\": 1, "
                    "\"pid\": \"%ld aclGraph\", \"tid\": \"stream%zu\", \"args\": "
                    "{\"taskType\": \"%s\", \"seqId\": %u",
                    first ? "" : ",\n", type_name(t->host.op), t->seq, pid, i,
                    type_name(t->host.op), t->seq);
            if (t->host.op == OP_KERNEL) {
                fprintf(f, ", \"kernel\": \"%s\", \"numBlocks\": %u", t->host.func->name,
                        t->host.num_blocks);
                if (verbose) {
                    fputs(", \"kernelArgs\": \"", f);
                    const unsigned char *a = t->host.args;
                    for (size_t j = 0; a && j < t->host.args_size; j++) fprintf(f, "%02x", a[j]);
                    fputc('"', f);
                }
            }
            fputs("}}", f);
            first = 0;
        }
    }
    fputs("\n]\n", f);
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
    dump(f, m, (flags & ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE) != 0);
    fclose(f);
out:
    UNLOCK();
    return rc;
}
