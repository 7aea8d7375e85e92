/* core.c -- global state, per-thread state, errors, init/device/version entry points. */
#include "emu.h"

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_engine_cv;
pthread_cond_t g_done_cv;
emu_stream *g_default_stream;
uint64_t g_live_models, g_live_streams, g_live_events, g_live_allocs;
emu_model **g_models;
size_t g_nmodels, g_capmodels;

/* per-thread state: current device (-1 = no context) and capture exchange mode (MODE-05) */
_Thread_local int tl_device = -1;
_Thread_local int tl_xmode = ACL_MODEL_RI_CAPTURE_MODE_GLOBAL;
static _Thread_local int tl_device_refs;
static _Thread_local uint64_t tl_id;
static _Thread_local char tl_msg[512];
static _Thread_local char tl_msg_out[512];

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_init_refs;
static uint64_t g_next_tid = 1;

void emu_engine_start(void); /* engine.c */

static void start_once(void) {
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&g_engine_cv, &a);
    pthread_cond_init(&g_done_cv, &a);
    pthread_condattr_destroy(&a);
    emu_engine_start();
}

void emu_ensure_started(void) { pthread_once(&g_once, start_once); }

uint64_t emu_tid(void) {
    if (tl_id == 0) tl_id = __atomic_fetch_add(&g_next_tid, 1, __ATOMIC_RELAXED);
    return tl_id;
}

aclError emu_err(aclError code, const char *fmt, ...) {
    va_list ap;
    int n = snprintf(tl_msg, sizeof tl_msg, "EE%d: ", code);
    if (n < 0 || (size_t)n >= sizeof tl_msg) n = 0;
    va_start(ap, fmt);
    vsnprintf(tl_msg + n, sizeof tl_msg - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

/* Destroyed objects are never freed (the "graveyard"): their magic is zeroed, so reading it
 * stays valid and a stale handle is reported as 107017. */
int emu_valid(const void *h, uint32_t magic) {
    return h != NULL && *(const volatile uint32_t *)h == magic;
}

void *emu_grow(void *arr, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return arr;
    size_t c = *cap ? *cap * 2 : 8;
    while (c < need) c *= 2;
    void *p = realloc(arr, c * elem);
    if (!p) abort();
    *cap = c;
    return p;
}

void emu_abs_deadline(struct timespec *ts, int64_t ms) {
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (ms % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec += 1;
        ts->tv_nsec -= 1000000000L;
    }
}

static int device_count(void) {
    const char *e = getenv("MDLRI_EMU_DEVICE_COUNT");
    int n = e ? atoi(e) : 1;
    return n < 1 ? 1 : (n > 64 ? 64 : n);
}

/* ------------------------------------------------------------------------------------------ */

MDLRI_API aclError aclInit(const char *configPath) {
    (void)configPath;
    emu_ensure_started();
    LOCK();
    int first = g_init_refs++ == 0;
    UNLOCK();
    if (!first) return emu_err(ACL_ERROR_REPEAT_INITIALIZE, "aclInit: already initialized");
    return ACL_SUCCESS;
}

MDLRI_API aclError aclFinalize(void) {
    LOCK();
    int was = g_init_refs;
    g_init_refs = 0;
    UNLOCK();
    /* the device thread and every object stay alive: other threads may still use them */
    if (!was) return emu_err(ACL_ERROR_UNINITIALIZE, "aclFinalize: aclInit was not called");
    return ACL_SUCCESS;
}

MDLRI_API aclError aclrtSetDevice(int32_t deviceId) {
    if (deviceId < 0 || deviceId >= device_count())
        return emu_err(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtSetDevice: invalid device id %d",
                       (int)deviceId);
    emu_ensure_started();
    tl_device = deviceId;
    tl_device_refs++;
    return ACL_SUCCESS;
}

MDLRI_API aclError aclrtResetDevice(int32_t deviceId) {
    if (deviceId < 0 || deviceId >= device_count())
        return emu_err(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtResetDevice: invalid device id %d",
                       (int)deviceId);
    if (tl_device_refs > 0 && --tl_device_refs == 0) tl_device = -1;
    return ACL_SUCCESS;
}

MDLRI_API aclError aclrtGetDeviceCount(uint32_t *count) {
    if (!count) return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount: count is NULL");
    *count = (uint32_t)device_count();
    return ACL_SUCCESS;
}

MDLRI_API const char *aclrtGetSocName(void) { return "MdlriHostEmulator"; }

MDLRI_API const char *aclGetRecentErrMsg(void) {
    if (tl_msg[0] == '\0') return NULL;
    memcpy(tl_msg_out, tl_msg, sizeof tl_msg_out);
    tl_msg[0] = '\0';
    return tl_msg_out;
}

MDLRI_API aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion,
                                   int32_t *patchVersion) {
    if (!majorVersion || !minorVersion || !patchVersion)
        return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtGetVersion: NULL output");
    *majorVersion = 1;
    *minorVersion = 17;
    *patchVersion = 0;
    return ACL_SUCCESS;
}

MDLRI_API const char *mdlriEmuVersion(void) { return EMU_VERSION; }

MDLRI_API aclError mdlriEmuLiveCounts(uint64_t *models, uint64_t *streams, uint64_t *events,
                                      uint64_t *allocations) {
    LOCK();
    if (models) *models = g_live_models;
    if (streams) *streams = g_live_streams;
    if (events) *events = g_live_events;
    if (allocations) *allocations = g_live_allocs;
    UNLOCK();
    return ACL_SUCCESS;
}
