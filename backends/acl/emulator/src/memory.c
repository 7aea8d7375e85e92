/* memory.c -- "device" memory (host memory, tracked), pinned host memory, copies and sets,
 * and the capture-mode rules for the "unsafe" synchronous calls (MODE-01..14). */
#include "emu.h"

typedef struct {
    uintptr_t base;
    size_t size;
    int kind;
} emu_alloc;

static emu_alloc *g_allocs;
static size_t g_nallocs, g_capallocs;

#define GARBAGE_BYTE 0xA5 /* aclrtMalloc memory is never zeroed: it starts as this pattern */

static void track(void *p, size_t n, int kind) {
    emu_alloc a = {(uintptr_t)p, n, kind};
    EMU_PUSH(g_allocs, g_nallocs, g_capallocs, a);
}

static long find_base(const void *p, int kind_mask) {
    for (size_t i = 0; i < g_nallocs; i++)
        if (g_allocs[i].base == (uintptr_t)p && ((1 << g_allocs[i].kind) & kind_mask))
            return (long)i;
    return -1;
}

static void untrack(long i) { g_allocs[i] = g_allocs[--g_nallocs]; }

/* Caller holds g_lock. A_DEV for aclrtMalloc / emulator-internal device memory, A_HOST for
 * aclrtMallocHost memory, A_NONE for anything else (pageable host memory). */
int emu_mem_class(const void *p, size_t n) {
    uintptr_t a = (uintptr_t)p;
    if (n == 0) n = 1;
    for (size_t i = 0; i < g_nallocs; i++) {
        const emu_alloc *al = &g_allocs[i];
        if (a >= al->base && a - al->base <= al->size && n <= al->size - (a - al->base))
            return al->kind == A_HOST ? A_HOST : A_DEV;
    }
    return A_NONE;
}

void *emu_internal_alloc(size_t n) {
    void *p = NULL;
    if (posix_memalign(&p, 64, n ? n : 1) != 0) abort();
    memset(p, GARBAGE_BYTE, n ? n : 1);
    track(p, n ? n : 1, A_INTERNAL);
    return p;
}

void emu_internal_free(void *p) {
    long i = find_base(p, 1 << A_INTERNAL);
    if (i >= 0) {
        untrack(i);
        free(p);
    }
}

/* Capture-mode rules for an unsafe call made by the calling thread (caller holds g_lock).
 *  - no open capture, or this thread's exchange mode is RELAXED: allowed (MODE-04, MODE-06);
 *  - this thread itself began an open GLOBAL or THREAD_LOCAL capture: blocked, whatever its
 *    exchange mode (MODE-02, MODE-03, MODE-07);
 *  - some open capture is GLOBAL and this thread's exchange mode is GLOBAL: blocked (MODE-02),
 *    an exchange to THREAD_LOCAL or RELAXED unblocks it (MODE-08);
 *  - otherwise allowed. The effective mode is the strictest open capture (MODE-11). */
int emu_unsafe_blocked(void) {
    if (g_nmodels == 0 || tl_xmode == ACL_MODEL_RI_CAPTURE_MODE_RELAXED) return 0;
    int ctx = 3, own = 3;
    uint64_t me = emu_tid();
    for (size_t i = 0; i < g_nmodels; i++) {
        emu_model *m = g_models[i];
        if (m->status != M_CAPTURING) continue;
        if (m->mode < ctx) ctx = m->mode;
        if (m->begin_tid == me && m->mode < own) own = m->mode;
    }
    if (ctx == 3) return 0;
    int leaked = emu_leaked_thread_mode(me); /* 3 unless the fault leaked a mode here */
    if (leaked < own) own = leaked;
    /* Context::IsCaptureModeSupport (context_aclgraph.cc:230-258), with the context mode the
     * strictest open capture and the thread mode the strictest one this thread began; without
     * a leaked mode this is exactly the rule above */
    if (tl_xmode == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL)
        return ctx == ACL_MODEL_RI_CAPTURE_MODE_GLOBAL ||
               own == ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL;
    return own <= ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL;
}

/* ------------------------------------------------------------------------------------------ */

MDLRI_API aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy) {
    (void)policy;
    if (!devPtr) return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: devPtr is NULL");
    if (size == 0) return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: size is 0");
    NEED_CTX();
    void *p = NULL;
    size_t rounded = (size + 63) & ~(size_t)63;
    if (posix_memalign(&p, 64, rounded) != 0)
        return emu_err(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMalloc: out of memory");
    memset(p, GARBAGE_BYTE, rounded);
    LOCK();
    track(p, size, A_DEV);
    g_live_allocs++;
    UNLOCK();
    *devPtr = p;
    return ACL_SUCCESS;
}

MDLRI_API aclError aclrtFree(void *devPtr) {
    if (!devPtr) return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtFree: devPtr is NULL");
    NEED_CTX();
    LOCK();
    long i = find_base(devPtr, 1 << A_DEV);
    if (i < 0) {
        UNLOCK();
        return emu_err(ACL_ERROR_RT_PARAM_INVALID,
                       "aclrtFree: %p is not the start of an aclrtMalloc allocation", devPtr);
    }
    untrack(i);
    g_live_allocs--;
    UNLOCK();
    free(devPtr);
    return ACL_SUCCESS;
}

MDLRI_API aclError aclrtMallocHost(void **hostPtr, size_t size) {
    if (!hostPtr) return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtMallocHost: hostPtr is NULL");
    if (size == 0) return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtMallocHost: size is 0");
    NEED_CTX();
    void *p = NULL;
    if (posix_memalign(&p, 64, (size + 63) & ~(size_t)63) != 0)
        return emu_err(ACL_ERROR_RT_MEMORY_ALLOCATION, "aclrtMallocHost: out of memory");
    LOCK();
    track(p, size, A_HOST);
    g_live_allocs++;
    UNLOCK();
    *hostPtr = p;
    return ACL_SUCCESS;
}

MDLRI_API aclError aclrtFreeHost(void *hostPtr) {
    if (!hostPtr) return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtFreeHost: hostPtr is NULL");
    NEED_CTX();
    LOCK();
    long i = find_base(hostPtr, 1 << A_HOST);
    if (i < 0) {
        UNLOCK();
        return emu_err(ACL_ERROR_RT_PARAM_INVALID,
                       "aclrtFreeHost: %p is not an aclrtMallocHost allocation", hostPtr);
    }
    untrack(i);
    g_live_allocs--;
    UNLOCK();
    free(hostPtr);
    return ACL_SUCCESS;
}

/* aclrtPointerGetAttributes: NULL ptr or attributes -> 100000 (the ACL layer,
 * src/acl/aclrt_impl/memory.cpp:446-453); aclrtMalloc memory DEVICE, aclrtMallocHost memory
 * HOST, any other pointer UNREGISTERED (a malloc'd host pointer, as the driver reports it:
 * src/runtime/driver/npu_driver_mem.cc:2040-2085). Needs no context (ApiImpl::PtrGetAttributes
 * falls back to the driver, api_impl.cc:3316-3326). */
MDLRI_API aclError aclrtPointerGetAttributes(const void *ptr, aclrtPtrAttributes *attributes) {
    if (!ptr || !attributes)
        return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtPointerGetAttributes: NULL %s",
                       ptr ? "attributes" : "ptr");
    LOCK();
    int cls = emu_mem_class(ptr, 1);
    UNLOCK();
    memset(attributes, 0, sizeof *attributes);
    attributes->location.type = cls == A_DEV    ? ACL_MEM_LOCATION_TYPE_DEVICE
                                : cls == A_HOST ? ACL_MEM_LOCATION_TYPE_HOST
                                                : ACL_MEM_LOCATION_TYPE_UNREGISTERED;
    attributes->pageSize = 4096;
    return ACL_SUCCESS;
}

/* Validate a copy (caller holds g_lock). *pageable is set when a host side is neither device
 * memory nor aclrtMallocHost memory. */
static aclError check_copy(const char *fn, void *dst, size_t destMax, const void *src,
                           size_t count, aclrtMemcpyKind kind, int *pageable) {
    if (count > destMax)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: count %zu > destMax %zu", fn, count,
                       destMax);
    int cd = emu_mem_class(dst, count), cs = emu_mem_class(src, count);
    int need_dst = 0, need_src = 0;
    switch (kind) {
    case ACL_MEMCPY_HOST_TO_DEVICE:
    case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE: need_dst = 1; break;
    case ACL_MEMCPY_DEVICE_TO_HOST: need_src = 1; break;
    case ACL_MEMCPY_DEVICE_TO_DEVICE: need_dst = need_src = 1; break;
    default: break;
    }
    if (count && need_dst && cd != A_DEV)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID,
                       "%s: destination %p (+%zu) is not device memory", fn, dst, count);
    if (count && need_src && cs != A_DEV)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: source %p (+%zu) is not device memory",
                       fn, src, count);
    *pageable = count && (cd == A_NONE || cs == A_NONE);
    return ACL_SUCCESS;
}

/* The ACL layer's kind check, after the NULL checks and before the runtime and its context: a
 * kind outside HOST_TO_HOST..HOST_TO_BUF_TO_DEVICE is 100000 (RT-21: MemcpyKindTranslate,
 * src/acl/aclrt_impl/memory.cpp:162-200, called at :660 and :695). */
static aclError acl_copy_kind(const char *fn, aclrtMemcpyKind kind) {
    if ((unsigned)kind > ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE)
        return emu_err(ACL_ERROR_INVALID_PARAM, "%s: invalid kind %u", fn, (unsigned)kind);
    return ACL_SUCCESS;
}

/* aclrtMemcpy[Async] with count 0 return ACL_SUCCESS before any other check (NULL pointers,
 * kind, context, capture mode, stream) and issue nothing (RT-18: src/acl/aclrt_impl/memory.cpp:
 * 653-656, 688-691). */
MDLRI_API aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                               aclrtMemcpyKind kind) {
    if (count == 0) return ACL_SUCCESS;
    if (!dst || !src) return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: NULL pointer");
    aclError kind_rc = acl_copy_kind("aclrtMemcpy", kind);
    if (kind_rc != ACL_SUCCESS) return kind_rc;
    NEED_CTX();
    LOCK();
    aclError rc;
    int pageable;
    if (dst == src && count <= destMax) {
        /* RT-31: ApiErrorDecorator::MemCopySync returns 0 for dst == src (api_error.cc:2144)
         * before ApiImpl::MemCopySync's capture-mode check (api_impl.cc:2757) and before
         * the driver looks at the memory */
        rc = ACL_SUCCESS;
    } else if (count > destMax) { /* the decorator's check, before the capture mode (RT-20) */
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "aclrtMemcpy: count %zu > destMax %zu", count,
                     destMax);
    } else if (emu_unsafe_blocked()) {
        rc = emu_err(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
                     "aclrtMemcpy: forbidden by the capture mode of an open capture");
    } else if ((rc = check_copy("aclrtMemcpy", dst, destMax, src, count, kind, &pageable)) ==
               ACL_SUCCESS) {
        memmove(dst, src, count);
        pthread_cond_signal(&g_engine_cv); /* a value wait may be satisfied now */
    }
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                                    aclrtMemcpyKind kind, aclrtStream stream) {
    if (count == 0) return ACL_SUCCESS;
    if (!dst || !src) return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtMemcpyAsync: NULL pointer");
    aclError kind_rc = acl_copy_kind("aclrtMemcpyAsync", kind);
    if (kind_rc != ACL_SUCCESS) return kind_rc;
    NEED_CTX();
    LOCK();
    emu_stream *s = NULL;
    int pageable = 0;
    aclError rc = emu_stream_get(stream, &s, 1, "aclrtMemcpyAsync");
    if (rc == ACL_SUCCESS)
        rc = check_copy("aclrtMemcpyAsync", dst, destMax, src, count, kind, &pageable);
    /* RT-31: a D2D copy onto itself returns before any task is allocated, so it is neither
     * captured, enqueued, stored on a bound stream nor refused by a task group
     * (api_error.cc:2249-2251) */
    if (rc == ACL_SUCCESS && kind == ACL_MEMCPY_DEVICE_TO_DEVICE && dst == src) goto out;
    if (rc == ACL_SUCCESS) rc = emu_admit(s, OP_MEMCPY); /* task groups (taskgroups.c) */
    if (rc != ACL_SUCCESS) goto out;
    emu_op o = {.op = OP_MEMCPY, .dst = dst, .src = src, .count = count};
    if (emu_is_capturing(s)) {
        if (pageable) {
            rc = emu_err(ACL_ERROR_RT_PARAM_INVALID,
                         "aclrtMemcpyAsync: pageable memory copy task does not support graph "
                         "capture (use aclrtMallocHost memory)");
            goto out;
        }
        emu_capture_append(s, &o);
        goto out;
    }
    if (pageable && emu_unsafe_blocked()) {
        rc = emu_err(ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC,
                     "aclrtMemcpyAsync: a pageable-memory copy falls back to a synchronous "
                     "copy, which the capture mode of an open capture forbids");
        goto out;
    }
    emu_item *it = calloc(1, sizeof *it);
    it->o = o;
    emu_enqueue(s, it);
    if (pageable) /* pageable host memory: the call returns after the copy */
        rc = emu_wait_ticket(s, s->enq, -1);
out:
    UNLOCK();
    return rc;
}

static aclError check_set(const char *fn, void *p, size_t maxCount, size_t count) {
    if (count > maxCount)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: count %zu > maxCount %zu", fn, count,
                       maxCount);
    if (count && emu_mem_class(p, count) == A_NONE)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID,
                       "%s: %p (+%zu) is not memory from the ACL allocators", fn, p, count);
    return ACL_SUCCESS;
}

/* aclrtMemset[Async] with count 0 return ACL_SUCCESS before any other check (NULL pointer,
 * context, capture mode, stream) and issue nothing (RT-09: src/acl/aclrt_impl/memory.cpp:674-677,
 * 742-745). */
MDLRI_API aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count) {
    if (count == 0) return ACL_SUCCESS;
    if (!devPtr) return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtMemset: devPtr is NULL");
    NEED_CTX();
    LOCK();
    aclError rc;
    if (emu_unsafe_blocked()) {
        rc = emu_err(ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT,
                     "aclrtMemset: forbidden by the capture mode of an open capture");
    } else if ((rc = check_set("aclrtMemset", devPtr, maxCount, count)) == ACL_SUCCESS) {
        memset(devPtr, value & 0xFF, count);
        pthread_cond_signal(&g_engine_cv);
    }
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
                                    aclrtStream stream) {
    if (count == 0) return ACL_SUCCESS;
    if (!devPtr) return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtMemsetAsync: devPtr is NULL");
    NEED_CTX();
    LOCK();
    emu_stream *s = NULL;
    aclError rc = emu_stream_get(stream, &s, 1, "aclrtMemsetAsync");
    if (rc == ACL_SUCCESS) rc = emu_admit(s, OP_MEMSET); /* task groups (taskgroups.c) */
    if (rc == ACL_SUCCESS) rc = check_set("aclrtMemsetAsync", devPtr, maxCount, count);
    if (rc == ACL_SUCCESS) {
        emu_op o = {.op = OP_MEMSET, .dst = devPtr, .count = count, .byte = value & 0xFF};
        if (emu_is_capturing(s)) {
            emu_capture_append(s, &o);
        } else {
            emu_item *it = calloc(1, sizeof *it);
            it->o = o;
            emu_enqueue(s, it);
        }
    }
    UNLOCK();
    return rc;
}
