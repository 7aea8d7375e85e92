/*
 * hal_device.c -- the device/chip and feature queries of the driver: this device answers
 * as MDLRI_HAL_DEVICES (default 1) Ascend 910B devices on a host with PCIe cards
 * (README "HAL symbols the runtime library needs", "Device and feature queries").
 *
 * Settings (read once, at the first call):
 *   MDLRI_HAL_DEVICES  1..MDLRI_HAL_MAX_DEVICES, the device count (default 1);
 *   MDLRI_HAL_FEATURES off|on, whether halSupportFeature reports the driver features
 *                      listed in FEATURES_ON (default off);
 *   MDLRI_HAL_TRACE    1: every query this device does not answer, and every entry point
 *                      that answers "not supported", is written to stderr (bring-up aid).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mdlri_hal.h"

static int g_devices = -1;
static int g_features = -1;
static int g_trace = -1;

static int env_int(const char *name, int dflt, int lo, int hi) {
    const char *s = getenv(name);
    if (s == NULL || *s == '\0') return dflt;
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi) return dflt;
    return (int)v;
}

uint32_t mdlri_hal_device_count(void) {
    if (g_devices < 0) g_devices = env_int("MDLRI_HAL_DEVICES", 1, 1, MDLRI_HAL_MAX_DEVICES);
    return (uint32_t)g_devices;
}

int mdlri_hal_features_on(void) {
    if (g_features < 0) {
        const char *s = getenv("MDLRI_HAL_FEATURES");
        g_features = s != NULL && (strcmp(s, "on") == 0 || strcmp(s, "1") == 0);
    }
    return g_features;
}

int mdlri_hal_trace_on(void) {
    if (g_trace < 0) g_trace = env_int("MDLRI_HAL_TRACE", 0, 0, 1);
    return g_trace;
}

void mdlri_hal_settings_reload(void) {
    g_devices = g_features = g_trace = -1;
}

int mdlri_hal_dev_valid(uint32_t devId) {
    return devId < mdlri_hal_device_count();
}

void mdlri_hal_trace(const char *what, long a, long b) {
    if (mdlri_hal_trace_on()) fprintf(stderr, "[mdlri_hal] %s %ld %ld\n", what, a, b);
}

/* drvGetPlatformInfo: 1 = RT_RUN_MODE_ONLINE, a host driving PCIe devices
 * (npu_driver.cc:46-57 maps it to AICPU_DEPLOY_CROSS_OS). */
drvError_t drvGetPlatformInfo(uint32_t *info) {
    if (info == NULL) return DRV_ERROR_INVALID_VALUE;
    *info = 1u;
    return DRV_ERROR_NONE;
}

drvError_t drvGetDevNum(uint32_t *count) {
    if (count == NULL) return DRV_ERROR_INVALID_VALUE;
    *count = mdlri_hal_device_count();
    return DRV_ERROR_NONE;
}

drvError_t drvGetDevIDs(uint32_t *devices, uint32_t len) {
    uint32_t n = mdlri_hal_device_count();
    if (devices == NULL || len < n) return DRV_ERROR_INVALID_VALUE;
    for (uint32_t i = 0; i < n; i++) devices[i] = i;
    return DRV_ERROR_NONE;
}

/* logical and physical ids coincide on this device */
drvError_t drvDeviceGetPhyIdByIndex(uint32_t devIndex, uint32_t *phyId) {
    if (phyId == NULL || !mdlri_hal_dev_valid(devIndex)) return DRV_ERROR_INVALID_DEVICE;
    *phyId = devIndex;
    return DRV_ERROR_NONE;
}

drvError_t drvDeviceGetIndexByPhyId(uint32_t phyId, uint32_t *devIndex) {
    if (devIndex == NULL || !mdlri_hal_dev_valid(phyId)) return DRV_ERROR_INVALID_DEVICE;
    *devIndex = phyId;
    return DRV_ERROR_NONE;
}

drvError_t drvDeviceOpen(void **device, uint32_t devId) {
    (void)device;
    return mdlri_hal_dev_valid(devId) ? DRV_ERROR_NONE : DRV_ERROR_INVALID_DEVICE;
}

drvError_t drvDeviceClose(uint32_t devId) {
    return mdlri_hal_dev_valid(devId) ? DRV_ERROR_NONE : DRV_ERROR_INVALID_DEVICE;
}

/* halDeviceOpen / halDeviceClose (npu_driver.cc:372-380, 430-440): the runtime passes
 * zeroed in/out structs and reads nothing back. */
drvError_t halDeviceOpen(uint32_t devId, void *in, void *out) {
    (void)in;
    (void)out;
    return mdlri_hal_dev_valid(devId) ? DRV_ERROR_NONE : DRV_ERROR_INVALID_DEVICE;
}

drvError_t halDeviceClose(uint32_t devId, void *in) {
    (void)in;
    return mdlri_hal_dev_valid(devId) ? DRV_ERROR_NONE : DRV_ERROR_INVALID_DEVICE;
}

/* drvStatus_t DRV_STATUS_WORK = 1 (ascend_hal_base.h:323-327) */
drvError_t drvDeviceStatus(uint32_t devId, uint32_t *status) {
    if (status == NULL || !mdlri_hal_dev_valid(devId)) return DRV_ERROR_INVALID_DEVICE;
    *status = 1u;
    return DRV_ERROR_NONE;
}

int64_t mdlri_hal_device_info(int32_t moduleType, int32_t infoType, int *known) {
    *known = 1;
    if (moduleType == MDLRI_MODULE_SYSTEM) {
        switch (infoType) {
        case MDLRI_INFO_VERSION: return MDLRI_HAL_PLATFORM_910B1;
        case MDLRI_INFO_CORE_NUM: return 1; /* TS count */
        case MDLRI_INFO_ENV: case MDLRI_INFO_MASTERID: case MDLRI_INFO_RUN_MACH:
        case MDLRI_INFO_ADDR_MODE: case MDLRI_INFO_PHY_CHIP_ID: case MDLRI_INFO_PHY_DIE_ID:
        case MDLRI_INFO_SERVER_ID: case MDLRI_INFO_WORK_MODE:
            return 0;
        default: break;
        }
    } else if (infoType == MDLRI_INFO_CORE_NUM) {
        if (moduleType == MDLRI_MODULE_AICORE) return MDLRI_HAL_AICORE_NUM;
        if (moduleType == MDLRI_MODULE_VECTOR_CORE) return MDLRI_HAL_VECTOR_CORE_NUM;
        if (moduleType == MDLRI_MODULE_AICPU) return MDLRI_HAL_AICPU_NUM;
    }
    *known = 0;
    return 0;
}

/* halGetDeviceInfo: the chip (SYSTEM/VERSION, PLAT_COMBINE(arch C220 4, chip 910_B_93 5,
 * bin 1), pkg_inc/runtime/runtime/config.h:23, src/runtime/core/inc/soc/soc_define.hpp:24,
 * src/runtime/core/inc/spec/base_info.hpp:182), core counts (24 AI cores, 48 vector cores
 * as the runtime's 910B unit-test configuration has them), env/run-machine/address mode 0.
 * Anything else: DRV_ERROR_NOT_SUPPORT (the runtime treats it as "no such info",
 * e.g. npu_driver.cc:76-78). */
drvError_t halGetDeviceInfo(uint32_t devId, int32_t moduleType, int32_t infoType, int64_t *value) {
    if (value == NULL) return DRV_ERROR_INVALID_VALUE;
    if (!mdlri_hal_dev_valid(devId)) return DRV_ERROR_INVALID_DEVICE;
    int known = 0;
    int64_t v = mdlri_hal_device_info(moduleType, infoType, &known);
    if (!known) {
        mdlri_hal_trace("halGetDeviceInfo unanswered", moduleType, infoType);
        return DRV_ERROR_NOT_SUPPORT;
    }
    *value = v;
    return DRV_ERROR_NONE;
}

drvError_t halGetPhyDeviceInfo(uint32_t phyId, int32_t moduleType, int32_t infoType,
                               int64_t *value) {
    return halGetDeviceInfo(phyId, moduleType, infoType, value);
}

/* the API version of the driver headers the runtime was built with
 * (__HAL_API_VERSION, pkg_inc/driver/ascend_hal_base.h:225-247) */
drvError_t halGetAPIVersion(int *halAPIVersion) {
    if (halAPIVersion == NULL) return DRV_ERROR_INVALID_VALUE;
    *halAPIVersion = MDLRI_HAL_API_VERSION;
    return DRV_ERROR_NONE;
}

/* Driver features (drvFeature_t, ascend_hal_define.h:1512-1525) reported with
 * MDLRI_HAL_FEATURES=on. TRSDRV_SQ_SUPPORT_DYNAMIC_BIND is the driver leg of the capture
 * software-SQ gate (capture_model_utils.cc:234-237); SVM_GET_USER_MALLOC_ATTR tells the
 * runtime to trust drvMemGetAttribute's user-malloc answer (raw_device.cc:251-252). */
static const int FEATURES_ON[] = {
    MDLRI_FEATURE_SVM_GET_USER_MALLOC_ATTR,
    MDLRI_FEATURE_TRSDRV_SQ_SUPPORT_DYNAMIC_BIND,
    MDLRI_FEATURE_SVM_MEM_REGISTER_QUERY_AND_GET_ATTR,
    MDLRI_FEATURE_SVM_MEM_REGISTER_HOST_PINNED,
};

bool halSupportFeature(uint32_t devId, int feature) {
    if (!mdlri_hal_dev_valid(devId) || !mdlri_hal_features_on()) return false;
    for (size_t i = 0; i < sizeof FEATURES_ON / sizeof FEATURES_ON[0]; i++)
        if (FEATURES_ON[i] == feature) return true;
    return false;
}

/* one ordinary (not split) device */
drvError_t halGetDeviceSplitMode(unsigned int devId, unsigned int *split_mode) {
    if (split_mode == NULL) return DRV_ERROR_INVALID_VALUE;
    if (!mdlri_hal_dev_valid(devId)) return DRV_ERROR_INVALID_DEVICE;
    *split_mode = 0u;
    return DRV_ERROR_NONE;
}

/* the process the device sees is this one */
pid_t drvDeviceGetBareTgid(void) {
    return getpid();
}

/* no driver-specific "ELxxxx" message for any code: a negative answer makes the runtime's
 * DRV_ERROR_PROCESS log the plain code (npu_driver_base.hpp:287-300) */
int32_t halMapErrorCode(drvError_t code) {
    (void)code;
    return -1;
}

/* struct halCapabilityInfo's leading fields (ascend_hal_base.h:661-667); the runtime copies
 * them (raw_device.cc:625-632) and fails SetDevice without them. This device does no SDMA
 * reduce (an SDMA SQE with a reduce opcode is an SQE error), has no extra memory
 * capabilities and no TS groups. */
struct mdlri_capability_head {
    uint32_t sdma_reduce_support;
    uint32_t memory_support;
    uint32_t ts_group_number;
    uint32_t sdma_reduce_kind;
};

drvError_t halGetChipCapability(uint32_t devId, void *info) {
    if (info == NULL) return DRV_ERROR_INVALID_VALUE;
    if (!mdlri_hal_dev_valid(devId)) return DRV_ERROR_INVALID_DEVICE;
    memset(info, 0, sizeof(struct mdlri_capability_head));
    return DRV_ERROR_NONE;
}

/* The runtime's health threads poll these (npu_driver_res.cc:293-310 at each stream
 * synchronisation, npu_driver.cc:1497-1510 and npu_driver_res.cc:25-52 in the RAS thread):
 * this device's process never runs out of memory, takes no SVM page faults and raises no
 * fault events. */
drvError_t halCheckProcessStatus(uint32_t devId, int processType, int status, bool *isMatched) {
    (void)processType;
    (void)status;
    if (isMatched == NULL) return DRV_ERROR_INVALID_VALUE;
    if (!mdlri_hal_dev_valid(devId)) return DRV_ERROR_INVALID_DEVICE;
    *isMatched = false;
    return DRV_ERROR_NONE;
}

/* struct drv_process_status_output (ascend_hal_base.h:1907-1910): result, reserve[8] */
drvError_t halCheckProcessStatusEx(uint32_t devId, int processType, int status, uint32_t *out) {
    (void)processType;
    (void)status;
    if (out == NULL) return DRV_ERROR_INVALID_VALUE;
    if (!mdlri_hal_dev_valid(devId)) return DRV_ERROR_INVALID_DEVICE;
    memset(out, 0, 9 * sizeof *out);
    return DRV_ERROR_NONE;
}

drvError_t halGetFaultEvent(uint32_t devId, void *filter, void *events, uint32_t len,
                            uint32_t *eventCount) {
    (void)filter;
    (void)events;
    (void)len;
    if (eventCount == NULL) return DRV_ERROR_INVALID_VALUE;
    if (!mdlri_hal_dev_valid(devId)) return DRV_ERROR_INVALID_DEVICE;
    *eventCount = 0;
    return DRV_ERROR_NONE;
}
