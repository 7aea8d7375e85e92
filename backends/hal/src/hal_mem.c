/*
 * hal_mem.c -- device memory for the driver entry points: device memory is this process's
 * memory, so a "device address" is a pointer here and the TS core reads and writes it
 * directly (README "HAL symbols the runtime library needs", "Memory").
 *
 * The device keeps a table of what it handed out (halMemAlloc) and of host memory
 * registered with it (halHostRegister), so drvMemGetAttribute can answer what the runtime
 * asks of a pointer (npu_driver_mem.cc:1946-2000, 2040-2090): device memory
 * DV_MEM_LOCK_DEV, host memory from halMemAlloc(MEM_HOST) DV_MEM_LOCK_HOST, registered
 * host memory DV_MEM_USER_REGISTER, any other pointer DV_MEM_USER_MALLOC (pageable host
 * memory: the runtime's pageable-memory checks depend on it, api_error.cc:2610-2624).
 * With MDLRI_HAL_FEATURES=off the driver lacks SVM_GET_USER_MALLOC_ATTR, so any other
 * pointer is an error, as such a driver answers; the runtime then skips its pageable
 * checks (api_error.cc:2812-2826).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mdlri_hal.h"
#include "ts.h"

typedef struct {
    uintptr_t base;
    size_t size;
    uint32_t memType;
    uint32_t devId;
} mem_block;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static mem_block *g_blocks; /* under g_mu */
static size_t g_count, g_cap;
static unsigned long long g_in_use; /* bytes from halMemAlloc not freed yet */

static int add_block(uintptr_t base, size_t size, uint32_t memType, uint32_t devId) {
    if (g_count == g_cap) {
        size_t cap = g_cap ? g_cap * 2 : 256;
        mem_block *b = realloc(g_blocks, cap * sizeof *b);
        if (b == NULL) return -1;
        g_blocks = b;
        g_cap = cap;
    }
    g_blocks[g_count++] = (mem_block){base, size, memType, devId};
    return 0;
}

/* index of the block containing addr, or -1 (under g_mu) */
static long find_block(uintptr_t addr) {
    for (size_t i = g_count; i-- > 0;) {
        const mem_block *b = &g_blocks[i];
        if (addr >= b->base && addr - b->base < (b->size ? b->size : 1)) return (long)i;
    }
    return -1;
}

static void drop_block(size_t i) {
    g_blocks[i] = g_blocks[--g_count];
}

static uint32_t mem_type_of_flag(unsigned long long flag) {
    switch ((flag >> MDLRI_MEM_VIRT_SHIFT) & MDLRI_MEM_VIRT_MASK) {
    case MDLRI_MEM_HOST_VAL: return DV_MEM_LOCK_HOST;
    case MDLRI_MEM_DVPP_VAL: return DV_MEM_LOCK_DEV_DVPP;
    case MDLRI_MEM_HOST_AGENT_VAL: return DV_MEM_LOCK_HOST_AGENT;
    case MDLRI_MEM_SVM_VAL: return DV_MEM_SVM;
    default: return DV_MEM_LOCK_DEV;
    }
}

drvError_t halMemAlloc(void **pp, unsigned long long size, unsigned long long flag) {
    if (pp == NULL || size == 0) return DRV_ERROR_INVALID_VALUE;
    uint32_t memType = mem_type_of_flag(flag);
    uint32_t devId = (uint32_t)(flag & MDLRI_MEM_DEVID_MASK);
    if (memType != DV_MEM_LOCK_HOST && !mdlri_hal_dev_valid(devId)) return DRV_ERROR_INVALID_DEVICE;
    void *p = NULL;
    if (posix_memalign(&p, MDLRI_PAGE_SIZE, (size_t)size) != 0) return DRV_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&g_mu);
    int rc = add_block((uintptr_t)p, (size_t)size, memType, devId);
    if (rc == 0) g_in_use += size;
    pthread_mutex_unlock(&g_mu);
    if (rc != 0) {
        free(p);
        return DRV_ERROR_OUT_OF_MEMORY;
    }
    *pp = p;
    return DRV_ERROR_NONE;
}

/* only the start of a block from halMemAlloc */
drvError_t halMemFree(void *pp) {
    if (pp == NULL) return DRV_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    long i = find_block((uintptr_t)pp);
    int ok = i >= 0 && g_blocks[i].base == (uintptr_t)pp &&
             g_blocks[i].memType != DV_MEM_USER_REGISTER;
    uint64_t size = 0;
    if (ok) {
        size = g_blocks[i].size;
        g_in_use -= size;
        drop_block((size_t)i);
    }
    pthread_mutex_unlock(&g_mu);
    if (!ok) return DRV_ERROR_INVALID_VALUE;
    ts_kernel_forget_range((uintptr_t)pp, size);
    free(pp);
    return DRV_ERROR_NONE;
}

unsigned long long mdlri_hal_mem_in_use(void) {
    pthread_mutex_lock(&g_mu);
    unsigned long long n = g_in_use;
    pthread_mutex_unlock(&g_mu);
    return n;
}

/* a copy of every kind is a memmove here: one address space */
drvError_t drvMemcpy(DVdeviceptr dst, size_t destMax, DVdeviceptr src, size_t byteCount) {
    if (byteCount == 0) return DRV_ERROR_NONE;
    if (dst == 0 || src == 0 || byteCount > destMax) return DRV_ERROR_INVALID_VALUE;
    memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, byteCount);
    return DRV_ERROR_NONE;
}

drvError_t halMemcpy(DVdeviceptr dst, size_t destMax, DVdeviceptr src, size_t byteCount,
                     int kind) {
    (void)kind;
    return drvMemcpy(dst, destMax, src, byteCount);
}

/* An "asynchronous" copy (halMemCpyAsync, ascend_hal_base.h:2067): host and device memory
 * are one address space here, so the copy is done at once and the handle is already finished;
 * the runtime's kernel-argument pool takes this path when drvMemConvertAddr refuses
 * (h2d_copy_mgr.cc:242-249, npu_driver_mem.cc:2218-2262). */
drvError_t halMemCpyAsync(DVdeviceptr dst, size_t destMax, DVdeviceptr src, size_t byteCount,
                          uint64_t *copyFd) {
    if (copyFd == NULL) return DRV_ERROR_INVALID_VALUE;
    drvError_t rc = drvMemcpy(dst, destMax, src, byteCount);
    if (rc == DRV_ERROR_NONE) *copyFd = MDLRI_COPY_FD_DONE;
    return rc;
}

/* Waits for a halMemCpyAsync handle (ascend_hal_base.h:2081): every handle is finished. */
drvError_t halMemCpyAsyncWaitFinish(uint64_t copyFd) {
    return copyFd == MDLRI_COPY_FD_DONE ? DRV_ERROR_NONE : DRV_ERROR_INVALID_VALUE;
}

drvError_t drvMemsetD8(DVdeviceptr dst, size_t destMax, uint8_t value, size_t n) {
    if (n == 0) return DRV_ERROR_NONE;
    if (dst == 0 || n > destMax) return DRV_ERROR_INVALID_VALUE;
    memset((void *)(uintptr_t)dst, value, n);
    return DRV_ERROR_NONE;
}

drvError_t drvMemGetAttribute(DVdeviceptr vptr, struct DVattribute *attr) {
    if (attr == NULL || vptr == 0) return DRV_ERROR_INVALID_VALUE;
    memset(attr, 0, sizeof *attr);
    attr->pageSize = MDLRI_PAGE_SIZE;
    pthread_mutex_lock(&g_mu);
    long i = find_block((uintptr_t)vptr);
    if (i >= 0) {
        attr->memType = g_blocks[i].memType;
        attr->devId = g_blocks[i].devId;
    } else if (!mdlri_hal_features_on()) {
        /* a driver without SVM_GET_USER_MALLOC_ATTR cannot answer for malloc'd memory
         * (api_error.cc:2812-2826); the runtime then skips its pageable checks */
        pthread_mutex_unlock(&g_mu);
        return DRV_ERROR_INVALID_VALUE;
    } else {
        attr->memType = DV_MEM_USER_MALLOC;
    }
    pthread_mutex_unlock(&g_mu);
    return DRV_ERROR_NONE;
}

/* Registering host memory maps it for the device at the same address
 * (npu_driver_mem.cc:225-240 hands *devPtr back to the caller). */
drvError_t halHostRegister(void *hostPtr, unsigned long long size, uint32_t flag, uint32_t devid,
                           void **devPtr) {
    (void)flag;
    if (hostPtr == NULL || size == 0 || devPtr == NULL) return DRV_ERROR_INVALID_VALUE;
    if (!mdlri_hal_dev_valid(devid)) return DRV_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&g_mu);
    long i = find_block((uintptr_t)hostPtr);
    int rc = i >= 0 ? 1 : add_block((uintptr_t)hostPtr, (size_t)size, DV_MEM_USER_REGISTER, devid);
    pthread_mutex_unlock(&g_mu);
    if (rc == 1) return DRV_ERROR_INVALID_VALUE; /* already the device's or registered */
    if (rc != 0) return DRV_ERROR_OUT_OF_MEMORY;
    *devPtr = hostPtr;
    return DRV_ERROR_NONE;
}

drvError_t halHostUnregisterEx(void *hostPtr, uint32_t devid, uint32_t flag) {
    (void)flag;
    (void)devid;
    if (hostPtr == NULL) return DRV_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    long i = find_block((uintptr_t)hostPtr);
    int ok = i >= 0 && g_blocks[i].base == (uintptr_t)hostPtr &&
             g_blocks[i].memType == DV_MEM_USER_REGISTER;
    if (ok) drop_block((size_t)i);
    pthread_mutex_unlock(&g_mu);
    return ok ? DRV_ERROR_NONE : DRV_ERROR_INVALID_VALUE;
}

drvError_t halHostUnregister(void *hostPtr, uint32_t devid) {
    return halHostUnregisterEx(hostPtr, devid, 0);
}

drvError_t halMemHostGetDevPointer(void *srcPtr, uint32_t devid, void **dstPtr) {
    (void)devid;
    if (srcPtr == NULL || dstPtr == NULL) return DRV_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    long i = find_block((uintptr_t)srcPtr);
    int ok = i >= 0 && (g_blocks[i].memType == DV_MEM_USER_REGISTER ||
                        g_blocks[i].memType == DV_MEM_LOCK_HOST);
    pthread_mutex_unlock(&g_mu);
    if (!ok) return DRV_ERROR_INVALID_VALUE;
    *dstPtr = srcPtr;
    return DRV_ERROR_NONE;
}

/* the physical-size queries (the runtime asks MEM_INFO_TYPE_HBM_SIZE on 910B,
 * dev_info_reg.cc:176, and reads phy_info.total/free, npu_driver_mem.cc:1739-1760) */
drvError_t halMemGetInfo(uint32_t device, unsigned int type, void *info) {
    if (info == NULL) return DRV_ERROR_INVALID_VALUE;
    if (!mdlri_hal_dev_valid(device)) return DRV_ERROR_INVALID_DEVICE;
    if (type < MDLRI_MEM_INFO_PHY_FIRST || type > MDLRI_MEM_INFO_PHY_LAST) {
        mdlri_hal_trace("halMemGetInfo unanswered type", (long)type, 0);
        return DRV_ERROR_NOT_SUPPORT;
    }
    unsigned long long used = mdlri_hal_mem_in_use();
    unsigned long long total = MDLRI_HAL_MEM_TOTAL;
    struct MemPhyInfo *phy = info;
    memset(phy, 0, sizeof *phy);
    phy->total = phy->huge_total = (unsigned long)total;
    phy->free = phy->huge_free = (unsigned long)(used < total ? total - used : 0);
    return DRV_ERROR_NONE;
}

/* the device's SMMU stream id for this process: one address space, id 0
 * (npu_driver.cc:473-480 fails the device open on any error) */
drvError_t drvMemSmmuQuery(uint32_t device, uint32_t *SSID) {
    if (SSID == NULL) return DRV_ERROR_INVALID_VALUE;
    if (!mdlri_hal_dev_valid(device)) return DRV_ERROR_INVALID_DEVICE;
    *SSID = 0u;
    return DRV_ERROR_NONE;
}

/* halMemCtl (ascend_hal_define.h:890-951): ADDR_MAP of the STARS FFTS C2C control
 * registers (ADDR_MAP_TYPE_REG_C2C_CTRL 1, asked at device start, raw_device.cc:1130-1135,
 * npu_driver_mem.cc:2497-2516): a zeroed device block that stands for them (nothing of this
 * device reads it); SUPPORT_FEATURE: none of the asked bits (no giant pages, no NUMA TS,
 * npu_driver_mem.cc:2390-2440). Every other control: not supported. */
#define MDLRI_CTRL_ADDR_MAP 0
#define MDLRI_CTRL_SUPPORT_FEATURE 2
#define MDLRI_ADDR_MAP_REG_C2C_CTRL 1u
#define MDLRI_C2C_CTRL_SIZE 4096u

struct mdlri_addr_map_in { unsigned int addr_type, devid; };
struct mdlri_addr_map_out { unsigned long long ptr, len; };
struct mdlri_support_feature { unsigned long long support_feature; unsigned int devid; };

drvError_t halMemCtl(int type, void *paramValue, size_t paramValueSize, void *outValue,
                     size_t *outSize) {
    if (type == MDLRI_CTRL_ADDR_MAP) {
        const struct mdlri_addr_map_in *in = paramValue;
        struct mdlri_addr_map_out *out = outValue;
        if (in == NULL || out == NULL || paramValueSize < sizeof *in) return DRV_ERROR_INVALID_VALUE;
        if (in->addr_type != MDLRI_ADDR_MAP_REG_C2C_CTRL) {
            mdlri_hal_trace("halMemCtl ADDR_MAP unanswered type", (long)in->addr_type, 0);
            return DRV_ERROR_NOT_SUPPORT;
        }
        if (!mdlri_hal_dev_valid(in->devid)) return DRV_ERROR_INVALID_DEVICE;
        static void *c2c[MDLRI_HAL_MAX_DEVICES];
        if (c2c[in->devid] == NULL) {
            void *p = NULL;
            drvError_t rc = halMemAlloc(&p, MDLRI_C2C_CTRL_SIZE,
                                        (MDLRI_MEM_DEV_VAL << MDLRI_MEM_VIRT_SHIFT) | in->devid);
            if (rc != DRV_ERROR_NONE) return rc;
            memset(p, 0, MDLRI_C2C_CTRL_SIZE);
            c2c[in->devid] = p;
        }
        out->ptr = (unsigned long long)(uintptr_t)c2c[in->devid];
        out->len = MDLRI_C2C_CTRL_SIZE;
        if (outSize != NULL) *outSize = sizeof *out;
        return DRV_ERROR_NONE;
    }
    if (type == MDLRI_CTRL_SUPPORT_FEATURE) {
        struct mdlri_support_feature *out = outValue;
        if (out == NULL) return DRV_ERROR_INVALID_VALUE;
        out->support_feature = 0;
        if (outSize != NULL) *outSize = sizeof *out;
        return DRV_ERROR_NONE;
    }
    mdlri_hal_trace("halMemCtl unanswered type", type, 0);
    return DRV_ERROR_NOT_SUPPORT;
}

/* One address space: the "physical" address (or offset) the TS is given for device memory
 * is the pointer itself. The runtime hands the TS its device ring buffer this way
 * (ringbuffer_maintain_task_v100.cc:48-55). Only memory this device handed out. */
size_t mdlri_hal_mem_block_size(uint64_t base) {
    pthread_mutex_lock(&g_mu);
    long i = find_block((uintptr_t)base);
    size_t n = i >= 0 && g_blocks[i].base == (uintptr_t)base ? g_blocks[i].size : 0;
    pthread_mutex_unlock(&g_mu);
    return n;
}

/* Bytes from addr to the end of the device block that holds it; 0 outside device memory. */
size_t mdlri_hal_mem_room(uint64_t addr) {
    pthread_mutex_lock(&g_mu);
    long i = find_block((uintptr_t)addr);
    size_t n = i >= 0 ? g_blocks[i].size - (size_t)((uintptr_t)addr - g_blocks[i].base) : 0;
    pthread_mutex_unlock(&g_mu);
    return n;
}

drvError_t drvMemAddressTranslate(DVdeviceptr vptr, unsigned long long *pptr) {
    if (pptr == NULL || vptr == 0) return DRV_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_mu);
    long i = find_block((uintptr_t)vptr);
    int ok = i >= 0 && g_blocks[i].memType != DV_MEM_USER_REGISTER;
    pthread_mutex_unlock(&g_mu);
    if (!ok) return DRV_ERROR_INVALID_VALUE;
    *pptr = vptr;
    return DRV_ERROR_NONE;
}

/* The channel a device-to-device copy takes (ascend_hal_base.h:880-892: 0 SDMA, 1 PCIe DMA):
 * SDMA, the one device's own copy engine. The runtime asks at every D2D aclrtMemcpyAsync
 * (ConvertD2DCpyType, memory_memcpy_async_task.cc:363-395); refusing it made each one fail
 * with 207000. */
drvError_t drvDeviceGetTransWay(void *src, void *dest, uint8_t *trans_type) {
    (void)src;
    (void)dest;
    if (trans_type == NULL) return DRV_ERROR_INVALID_VALUE;
    *trans_type = 0;
    return DRV_ERROR_NONE;
}
