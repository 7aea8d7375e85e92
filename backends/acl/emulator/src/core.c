/* core.c -- global state, per-thread state, errors, init/device/version entry points. */
#include "emu.h"

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t g_engine_cv;
pthread_cond_t g_done_cv;
emu_stream *g_default_stream;
uint64_t g_live_models, g_live_streams, g_live_events, g_live_allocs;
uint32_t g_stream_limit = 512, g_model_stream_limit = 64;
uint64_t g_live_internal_streams;

/* FLD resource limits, read once at load like MDLRI_EMU_FAULTS (0 turns one off) */
__attribute__((constructor)) static void emu_read_limits(void) {
    const char *e = getenv("MDLRI_EMU_STREAM_LIMIT");
    if (e && *e) g_stream_limit = (uint32_t)strtoul(e, NULL, 10);
    e = getenv("MDLRI_EMU_MODEL_STREAM_LIMIT");
    if (e && *e) g_model_stream_limit = (uint32_t)strtoul(e, NULL, 10);
}

/* Every stream, user-created or capture-internal, takes one stream resource (a driver stream
 * id: stream.cc:698, 886); the default stream is not counted. */
int emu_stream_pool_full(void) {
    return g_stream_limit && g_live_streams + g_live_internal_streams + 1 > g_stream_limit;
}
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
static uint32_t g_next_stream_id, g_next_event_id;

uint32_t emu_new_stream_id(void) {
    return __atomic_fetch_add(&g_next_stream_id, 1, __ATOMIC_RELAXED);
}

uint32_t emu_new_event_id(void) {
    return __atomic_fetch_add(&g_next_event_id, 1, __ATOMIC_RELAXED);
}

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

/* aclrtGetDevice (device.cpp:131-142, ApiImpl::GetDevice api_impl.cc:3473-3491): NULL 100000;
 * a thread without a current context 107002 (rtGetDevice, api_c_device.cc:93). */
MDLRI_API aclError aclrtGetDevice(int32_t *deviceId) {
    if (!deviceId) return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice: deviceId is NULL");
    NEED_CTX();
    *deviceId = tl_device;
    return ACL_SUCCESS;
}

/* One primary context per device id; all device ids share the emulator's state. */
static struct {
    uint32_t magic;
    int32_t device;
} g_contexts[64];

/* aclrtGetCurrentContext (context.cpp:74-88, ApiImpl::ContextGetCurrent api_impl.cc:4193-
 * 4204): NULL 100000; no current context 107002; else the device's primary context. */
MDLRI_API aclError aclrtGetCurrentContext(aclrtContext *context) {
    if (!context)
        return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtGetCurrentContext: context is NULL");
    NEED_CTX();
    g_contexts[tl_device].magic = 0x43545854u; /* "CTXT" */
    g_contexts[tl_device].device = tl_device;
    *context = &g_contexts[tl_device];
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

MDLRI_API aclError mdlriEmuResourceLimits(uint32_t *streams, uint32_t *modelStreams) {
    if (streams) *streams = g_stream_limit;
    if (modelStreams) *modelStreams = g_model_stream_limit;
    return ACL_SUCCESS;
}

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
