/* callbacks.c -- aclmdlRIDestroyRegisterCallback / aclmdlRIDestroyUnregisterCallback
 * (semantics.md §16 LIFE-09..14).
 *
 * Callbacks are keyed by the function pointer only (LIFE-10) and kept sorted by it, which is
 * the order they run in (LIFE-11). A model's destruction (aclmdlRIDestroy, a failed
 * CaptureEnd) moves them to the calling thread's pending list under the lock; they run in that
 * thread once the lock is released, before the API call returns (LIFE-09, LIFE-14), so a
 * callback may call the ACL API. */
#include "emu.h"

static _Thread_local struct emu_cb *tl_pending;
static _Thread_local size_t tl_npending, tl_cappending;

static aclError mget(aclmdlRI h, emu_model **out, const char *fn) {
    if (!h) return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: modelRI is NULL", fn);
    if (!emu_valid(h, MAGIC_MODL))
        return emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or destroyed modelRI %p", fn, h);
    *out = h;
    return ACL_SUCCESS;
}

/* LIFE-13: a NULL func is 107000 before a sub-model's 207000 (api_error.cc:7021-7030,
 * 7036-7045), so a sub-model with func NULL is 107000 */
static aclError check_func(const emu_model *m, aclrtCallback func, const char *fn) {
    if (!func) return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: func is NULL", fn);
    if (m->parent)
        return emu_err(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "%s: not supported for a sub-model", fn);
    return ACL_SUCCESS;
}

static long find(const emu_model *m, aclrtCallback fn) {
    for (size_t i = 0; i < m->ncbs; i++)
        if (m->cbs[i].fn == fn) return (long)i;
    return -1;
}

MDLRI_API aclError aclmdlRIDestroyRegisterCallback(aclmdlRI modelRI, aclrtCallback func,
                                                   void *userData) {
    static const char fn[] = "aclmdlRIDestroyRegisterCallback";
    NEED_CTX();
    LOCK();
    emu_model *m = NULL;
    aclError rc = mget(modelRI, &m, fn);
    if (rc == ACL_SUCCESS) rc = check_func(m, func, fn);
    if (rc != ACL_SUCCESS) goto out;
    if (find(m, func) >= 0) {
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: func is already registered", fn);
    } else {
        struct emu_cb cb = {func, userData};
        EMU_PUSH(m->cbs, m->ncbs, m->capcbs, cb);
        size_t i = m->ncbs - 1; /* keep ascending function-pointer order */
        while (i > 0 && (uintptr_t)m->cbs[i - 1].fn > (uintptr_t)func) {
            m->cbs[i] = m->cbs[i - 1];
            i--;
        }
        m->cbs[i] = cb;
    }
out:
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclmdlRIDestroyUnregisterCallback(aclmdlRI modelRI, aclrtCallback func) {
    static const char fn[] = "aclmdlRIDestroyUnregisterCallback";
    NEED_CTX();
    LOCK();
    emu_model *m = NULL;
    aclError rc = mget(modelRI, &m, fn);
    if (rc == ACL_SUCCESS) rc = check_func(m, func, fn);
    if (rc != ACL_SUCCESS) goto out;
    long i = find(m, func);
    if (i < 0) {
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: func is not registered", fn);
    } else {
        memmove(&m->cbs[i], &m->cbs[i + 1], (m->ncbs - (size_t)i - 1) * sizeof *m->cbs);
        m->ncbs--;
    }
out:
    UNLOCK();
    return rc;
}

void emu_callbacks_take(emu_model *m) {
    for (size_t i = 0; i < m->ncbs; i++)
        EMU_PUSH(tl_pending, tl_npending, tl_cappending, m->cbs[i]);
    m->ncbs = 0;
}

void emu_callbacks_flush(void) {
    while (tl_npending) {
        size_t n = tl_npending;
        struct emu_cb *cbs = tl_pending;
        tl_pending = NULL;
        tl_npending = tl_cappending = 0;
        for (size_t i = 0; i < n; i++) cbs[i].fn(cbs[i].ud);
        free(cbs);
    }
}
