/*
 * mdlri_hal.h -- the public interface of libmdlri_hal.so, the mdlri virtual Ascend device.
 *
 * Two parts:
 *
 *  1. The driver (HAL) entry points the CANN runtime calls, under their real names, with our
 *     own declarations of their argument structs written from the facts in ../README.md
 *     (field order, types and enum values as the runtime uses them; nothing copied). So far
 *     the SQ/CQ group (halSqCqAllocate, halSqCqFree, halSqTaskSend, halCqReportRecv,
 *     halSqCqQuery, halSqCqConfig) and the id resources (halResourceIdAlloc/Free,
 *     halResourceInfoQuery).
 *
 *  2. mdlri_hal_* functions of our own: the kernel registry (a kernel SQE carries the device
 *     address of the kernel's code; the registry binds that address to a host kernel), state
 *     probes for tests, and a reset.
 *
 * Device memory is this process's memory: every address in an SQE is a pointer here.
 */
#ifndef MDLRI_HAL_H
#define MDLRI_HAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MDLRI_HAL_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

/* ---- driver return codes (pkg_inc/driver/ascend_hal_error.h:34-50,144) ---- */
typedef int drvError_t;
#define DRV_ERROR_NONE 0
#define DRV_ERROR_INVALID_DEVICE 2
#define DRV_ERROR_INVALID_VALUE 3
#define DRV_ERROR_INVALID_HANDLE 4
#define DRV_ERROR_OUT_OF_MEMORY 6
#define DRV_ERROR_PARA_ERROR 8
#define DRV_ERROR_BUSY 13
#define DRV_ERROR_NO_RESOURCES 14
#define DRV_ERROR_WAIT_TIMEOUT 16
#define DRV_ERROR_NOT_SUPPORT 0xfffe

/* ---- SQ/CQ kinds and properties (pkg_inc/driver/hal_pkg/trs_pkg.h:35-93) ---- */
typedef enum {
    DRV_NORMAL_TYPE = 0,
    DRV_CALLBACK_TYPE,
    DRV_LOGIC_TYPE,
    DRV_SHM_TYPE,
    DRV_CTRL_TYPE,
    DRV_GDB_TYPE,
    DRV_INVALID_TYPE
} drvSqCqType_t;

typedef enum {
    DRV_SQCQ_PROP_SQ_STATUS = 0,
    DRV_SQCQ_PROP_SQ_HEAD,
    DRV_SQCQ_PROP_SQ_TAIL,
    DRV_SQCQ_PROP_SQ_DISABLE_TO_ENABLE,
    DRV_SQCQ_PROP_SQ_CQE_STATUS,
    DRV_SQCQ_PROP_SQ_REG_BASE,
    DRV_SQCQ_PROP_SQ_BASE,
    DRV_SQCQ_PROP_SQ_DEPTH,
    DRV_SQCQ_PROP_SQ_PAUSE,
    DRV_SQCQ_PROP_SQ_MEM_ATTR,
    DRV_SQCQ_PROP_SQ_RESUME,
    DRV_SQCQ_PROP_SQCQ_RESET,
    DRV_SQCQ_PROP_CQ_DEPTH,
    DRV_SQCQ_PROP_SQE_SIZE,
    DRV_SQCQ_PROP_CQE_SIZE,
    DRV_SQCQ_PROP_MAX = 17
} drvSqCqPropType_t;

/* allocation flags (pkg_inc/driver/ascend_hal_define.h:1093-1101) */
#define TSDRV_FLAG_REUSE_CQ (0x1u << 0)
#define TSDRV_FLAG_SPECIFIED_SQ_ID (0x1u << 7)
#define TSDRV_FLAG_SPECIFIED_CQ_ID (0x1u << 8)
/* an SQ without ring memory of its own: a software SQ, whose memory the runtime allocates and
 * names in halSqSwitchStreamBatch (ascend_hal_define.h:1109; device_sq_cq_pool.cc:154) */
#define TSDRV_FLAG_NO_SQ_MEM (0x1u << 16)

#define MDLRI_SQCQ_RESV_LENGTH 8
#define MDLRI_SQCQ_RTS_INFO_LENGTH 5
#define MDLRI_SQCQ_UMAX 0xFFFFFFFFu

struct halSqCqInputInfo {
    drvSqCqType_t type;
    uint32_t tsId;
    uint32_t sqeSize;
    uint32_t cqeSize;
    uint32_t sqeDepth;
    uint32_t cqeDepth;
    uint32_t grpId;
    uint32_t flag;
    uint32_t cqId;
    uint32_t sqId;
    uint32_t info[MDLRI_SQCQ_RTS_INFO_LENGTH]; /* info[0]: the stream id */
    uint32_t ext_info_len;
    void *ext_info;
    uint32_t res[MDLRI_SQCQ_RESV_LENGTH - 3];
};

struct halSqCqOutputInfo {
    uint32_t sqId;
    uint32_t cqId;
    unsigned long long queueVAddr;
    uint32_t flag;
    uint32_t res[MDLRI_SQCQ_RESV_LENGTH - 3];
};

struct halSqCqFreeInfo {
    drvSqCqType_t type;
    uint32_t tsId;
    uint32_t sqId;
    uint32_t cqId;
    uint32_t flag; /* bit 0: 1 keeps the CQ */
    uint32_t res[MDLRI_SQCQ_RESV_LENGTH];
};

struct halSqCqQueryInfo {
    drvSqCqType_t type;
    uint32_t tsId;
    uint32_t sqId;
    uint32_t cqId;
    drvSqCqPropType_t prop;
    uint32_t value[8];
};

struct halSqCqConfigInfo {
    drvSqCqType_t type;
    uint32_t tsId;
    uint32_t sqId;
    uint32_t cqId;
    drvSqCqPropType_t prop;
    uint32_t value[8];
};

struct halTaskSendInfo {
    drvSqCqType_t type;
    uint32_t tsId;
    uint32_t sqId;
    int32_t timeout; /* ms to wait for room; 0: answer at once */
    uint8_t *sqe_addr;
    uint32_t sqe_num;
    uint32_t pos; /* out: position of the first SQE */
    uint32_t res[MDLRI_SQCQ_RESV_LENGTH];
};

struct halReportRecvInfo {
    drvSqCqType_t type;
    uint32_t tsId;
    uint32_t cqId;
    int32_t timeout; /* ms; < 0 waits for ever; 0 answers at once */
    uint8_t *cqe_addr;
    uint32_t cqe_num;
    uint32_t report_cqe_num; /* out */
    uint32_t stream_id;
    uint32_t task_id;
    uint32_t res[MDLRI_SQCQ_RESV_LENGTH];
};

/* ---- id resources (trs_pkg.h:177-201, ascend_hal_base.h:4181,4239-4268) ---- */
typedef enum {
    DRV_STREAM_ID = 0,
    DRV_EVENT_ID,
    DRV_MODEL_ID,
    DRV_NOTIFY_ID,
    DRV_CMO_ID,
    DRV_CNT_NOTIFY_ID,
    DRV_SQ_ID,
    DRV_CQ_ID,
    DRV_INVALID_ID,
} drvIdType_t;

typedef enum {
    DRV_RESOURCE_STREAM_ID = 0,
    DRV_RESOURCE_EVENT_ID,
    DRV_RESOURCE_MODEL_ID,
    DRV_RESOURCE_NOTIFY_ID,
    DRV_RESOURCE_CMO_ID,
    DRV_RESOURCE_SQ_ID,
    DRV_RESOURCE_CQ_ID,
    DRV_RESOURCE_CNT_NOTIFY_ID,
    DRV_RESOURCE_INVALID_ID,
} drvResourceType_t;

/* res[1] of an allocation: take the id in resourceId (ascend_hal_define.h:1115) */
#define TSDRV_RES_SPECIFIED_ID (0x1u << 1)

struct halResourceIdInputInfo {
    drvIdType_t type;
    uint32_t tsId;
    uint32_t resourceId; /* the id to free, or the id asked for */
    uint32_t res[8];     /* res[0]: stream priority; res[1]: flags */
};

struct halResourceIdOutputInfo {
    uint32_t resourceId;
    uint32_t res[8];
};

struct halResourceInfo {
    uint32_t capacity;
    uint32_t usedNum;
    uint32_t reserve[2];
};

/* halResourceConfig (ascend_hal_define.h:1145-1161) */
typedef enum {
    DRV_STREAM_BIND_LOGIC_CQ = 0,
    DRV_STREAM_UNBIND_LOGIC_CQ,
    DRV_ID_RECORD,
    DRV_STREAM_ENABLE_EVENT,
    DRV_ID_RESET,
    DRV_RES_ID_CONFIG_MAX
} drvResourceConfigType_t;

struct halResourceConfigInfo {
    drvResourceConfigType_t prop;
    uint32_t value[7];
};

MDLRI_HAL_API drvError_t halResourceConfig(uint32_t devId, struct halResourceIdInputInfo *in,
                                           struct halResourceConfigInfo *cfg);
/* ours: route the reports of stream_id's SQs to logic CQ cq_id (bind 1) or back to their
 * own CQ (bind 0) */
MDLRI_HAL_API drvError_t mdlri_hal_stream_bind_cq(uint32_t stream_id, uint32_t cq_id, int bind);

/* ---- the SQE and CQE sizes the TS core uses (README: "SQEs", "The CQE") ---- */
#define MDLRI_HAL_SQE_SIZE 64u
#define MDLRI_HAL_CQE_SIZE 32u

/* CQE errorType bits (src/runtime/core/inc/stars/stars.hpp:34-39) */
#define MDLRI_CQE_ERR_EXCEPTION 0x01u
#define MDLRI_CQE_ERR_TRAP 0x02u
#define MDLRI_CQE_ERR_TASK_TIMEOUT 0x04u
#define MDLRI_CQE_ERR_SQE_ERROR 0x08u
/* a kernel credit of 255 never times out (src/runtime/core/inc/stars/stars_base.hpp:39);
 * otherwise each credit is this many ms of kernel time (stars_base.hpp:46: 2^32 / 1000M s) */
#define MDLRI_KERNEL_CREDIT_NEVER 255u
#define MDLRI_KERNEL_CREDIT_MS 4294.967296
/* TS error codes (src/runtime/core/inc/task_scheduler_error.h:150-153) */
#define MDLRI_TS_ERROR_TASK_EXCEPTION 0x103u
#define MDLRI_TS_ERROR_TASK_TIMEOUT 0x105u
#define MDLRI_TS_ERROR_TASK_SQE_ERROR 0x106u

/* ---- the driver entry points ---- */
MDLRI_HAL_API drvError_t halSqCqAllocate(uint32_t devId, struct halSqCqInputInfo *in,
                                         struct halSqCqOutputInfo *out);
MDLRI_HAL_API drvError_t halSqCqFree(uint32_t devId, struct halSqCqFreeInfo *info);
MDLRI_HAL_API drvError_t halSqTaskSend(uint32_t devId, struct halTaskSendInfo *info);
MDLRI_HAL_API drvError_t halCqReportRecv(uint32_t devId, struct halReportRecvInfo *info);
MDLRI_HAL_API drvError_t halSqCqQuery(uint32_t devId, struct halSqCqQueryInfo *info);
MDLRI_HAL_API drvError_t halSqCqConfig(uint32_t devId, struct halSqCqConfigInfo *info);
/* the software SQ (pkg_inc/driver/ascend_hal_base.h:4512,4523; ascend_hal_define.h:1137-1143):
 * bind an SQ to a stream and to the SQ memory the runtime allocated (stream_id UINT32_MAX
 * unbinds), and copy a stream's SQEs into that memory */
struct sq_switch_stream_info {
    uint32_t sq_id;
    uint32_t stream_id;
    uint32_t sq_depth;
    uint32_t rsv;
    void *stream_mem;
};
MDLRI_HAL_API drvError_t halSqSwitchStreamBatch(uint32_t dev_id, struct sq_switch_stream_info *info,
                                                uint32_t num);
MDLRI_HAL_API drvError_t halStreamTaskFill(uint32_t dev_id, uint32_t stream_id, void *stream_mem,
                                           void *task_info, uint32_t task_cnt);
MDLRI_HAL_API drvError_t halResourceIdAlloc(uint32_t devId, struct halResourceIdInputInfo *in,
                                            struct halResourceIdOutputInfo *out);
MDLRI_HAL_API drvError_t halResourceIdFree(uint32_t devId, struct halResourceIdInputInfo *in);
MDLRI_HAL_API drvError_t halResourceInfoQuery(uint32_t devId, uint32_t tsId,
                                              drvResourceType_t type,
                                              struct halResourceInfo *info);

/* ---- device and feature queries (hal_device.c) ---- */

#define MDLRI_HAL_MAX_DEVICES 8
/* DEV_MODULE_TYPE / DEV_INFO_TYPE values (pkg_inc/driver/ascend_hal_base.h:333-420) */
#define MDLRI_MODULE_SYSTEM 0
#define MDLRI_MODULE_AICPU 1
#define MDLRI_MODULE_AICORE 4
#define MDLRI_MODULE_VECTOR_CORE 7
#define MDLRI_INFO_ENV 0
#define MDLRI_INFO_VERSION 1
#define MDLRI_INFO_MASTERID 2
#define MDLRI_INFO_CORE_NUM 3
#define MDLRI_INFO_PHY_CHIP_ID 18
#define MDLRI_INFO_PHY_DIE_ID 19
#define MDLRI_INFO_WORK_MODE 22
#define MDLRI_INFO_SERVER_ID 27
#define MDLRI_INFO_ADDR_MODE 30
#define MDLRI_INFO_RUN_MACH 31
/* PLAT_COMBINE(ARCH_C220 4, CHIP_910_B_93 5, RT_VER_BIN1 1) (pkg_inc/runtime/runtime/config.h:23) */
#define MDLRI_HAL_PLATFORM_910B1 ((4 << 16) | (5 << 8) | 1)
#define MDLRI_HAL_AICORE_NUM 24
#define MDLRI_HAL_VECTOR_CORE_NUM 48
#define MDLRI_HAL_AICPU_NUM 6
/* __HAL_API_VERSION of the headers at 681ef76: major 0x07, minor 0x24, patch 0x19 */
#define MDLRI_HAL_API_VERSION ((0x07 << 16) | (0x24 << 8) | 0x19)
/* drvFeature_t (pkg_inc/driver/ascend_hal_define.h:1512-1525) */
#define MDLRI_FEATURE_SVM_GET_USER_MALLOC_ATTR 2
#define MDLRI_FEATURE_TRSDRV_SQ_SUPPORT_DYNAMIC_BIND 4
#define MDLRI_FEATURE_SVM_MEM_REGISTER_QUERY_AND_GET_ATTR 11
#define MDLRI_FEATURE_SVM_MEM_REGISTER_HOST_PINNED 13

MDLRI_HAL_API drvError_t drvGetPlatformInfo(uint32_t *info);
MDLRI_HAL_API drvError_t drvGetDevNum(uint32_t *count);
MDLRI_HAL_API drvError_t drvGetDevIDs(uint32_t *devices, uint32_t len);
MDLRI_HAL_API drvError_t drvDeviceGetPhyIdByIndex(uint32_t devIndex, uint32_t *phyId);
MDLRI_HAL_API drvError_t drvDeviceGetIndexByPhyId(uint32_t phyId, uint32_t *devIndex);
MDLRI_HAL_API drvError_t drvDeviceOpen(void **device, uint32_t devId);
MDLRI_HAL_API drvError_t drvDeviceClose(uint32_t devId);
MDLRI_HAL_API drvError_t halDeviceOpen(uint32_t devId, void *in, void *out);
MDLRI_HAL_API drvError_t halDeviceClose(uint32_t devId, void *in);
MDLRI_HAL_API drvError_t drvDeviceStatus(uint32_t devId, uint32_t *status);
MDLRI_HAL_API drvError_t halGetDeviceInfo(uint32_t devId, int32_t moduleType, int32_t infoType,
                                          int64_t *value);
MDLRI_HAL_API drvError_t halGetPhyDeviceInfo(uint32_t phyId, int32_t moduleType,
                                             int32_t infoType, int64_t *value);
MDLRI_HAL_API drvError_t halGetAPIVersion(int *halAPIVersion);
MDLRI_HAL_API bool halSupportFeature(uint32_t devId, int feature);
MDLRI_HAL_API drvError_t halGetDeviceSplitMode(unsigned int devId, unsigned int *split_mode);
MDLRI_HAL_API pid_t drvDeviceGetBareTgid(void);
MDLRI_HAL_API int32_t halMapErrorCode(drvError_t code);
MDLRI_HAL_API drvError_t halGetChipCapability(uint32_t devId, void *info);
MDLRI_HAL_API drvError_t halCheckProcessStatus(uint32_t devId, int processType, int status,
                                              bool *isMatched);
MDLRI_HAL_API drvError_t halCheckProcessStatusEx(uint32_t devId, int processType, int status,
                                                uint32_t *out);
MDLRI_HAL_API drvError_t halGetFaultEvent(uint32_t devId, void *filter, void *events,
                                         uint32_t len, uint32_t *eventCount);

/* ours: the settings (MDLRI_HAL_DEVICES, MDLRI_HAL_FEATURES, MDLRI_HAL_TRACE) */
MDLRI_HAL_API uint32_t mdlri_hal_device_count(void);
MDLRI_HAL_API int mdlri_hal_features_on(void);
MDLRI_HAL_API int mdlri_hal_trace_on(void);
/* read the settings again from the environment at the next call (tests) */
MDLRI_HAL_API void mdlri_hal_settings_reload(void);
MDLRI_HAL_API int mdlri_hal_dev_valid(uint32_t devId);
void mdlri_hal_trace(const char *what, long a, long b);
int64_t mdlri_hal_device_info(int32_t moduleType, int32_t infoType, int *known);

/* ---- memory (hal_mem.c): device memory is this process's memory ---- */

/* halMemAlloc flag: virtual memory kind in bits 10-13 (MEM_VIRT_BIT, MEM_*_VAL),
 * device id in bits 0-9 (ascend_hal_define.h:700-723) */
#define MDLRI_MEM_VIRT_SHIFT 10
#define MDLRI_MEM_VIRT_MASK 0xFu
#define MDLRI_MEM_DEVID_MASK 0x3FFu
#define MDLRI_MEM_SVM_VAL 0u
#define MDLRI_MEM_DEV_VAL 1u
#define MDLRI_MEM_HOST_VAL 2u
#define MDLRI_MEM_DVPP_VAL 3u
#define MDLRI_MEM_HOST_AGENT_VAL 4u
/* DVattribute.memType bits (ascend_hal_base.h:1928-1933, ascend_hal_define.h:783-785) */
#define DV_MEM_SVM 0x0001u
#define DV_MEM_SVM_HOST 0x0002u
#define DV_MEM_SVM_DEVICE 0x0004u
#define DV_MEM_LOCK_HOST 0x0008u
#define DV_MEM_LOCK_DEV 0x0010u
#define DV_MEM_LOCK_DEV_DVPP 0x0020u
#define DV_MEM_LOCK_HOST_AGENT 0x0040u
#define DV_MEM_USER_MALLOC 0x0080u
#define DV_MEM_USER_REGISTER 0x0100u
#define MDLRI_PAGE_SIZE 4096u
/* MEM_INFO_TYPE_DDR_SIZE 1 .. HBM_P2P_SIZE 4 answer struct MemPhyInfo (ascend_hal_define.h:789-792) */
#define MDLRI_MEM_INFO_PHY_FIRST 1u
#define MDLRI_MEM_INFO_PHY_LAST 4u
/* what this device says it has: 32 GiB of "HBM" (bookkeeping only) */
#define MDLRI_HAL_MEM_TOTAL (32ull << 30)

typedef unsigned long long DVdeviceptr;

/* struct DVattribute (ascend_hal_base.h:1938-1955) */
struct DVattribute {
    uint32_t memType;
    uint32_t resv1;
    uint32_t resv2;
    uint32_t devId;
    uint32_t pageSize;
    uint32_t resv[8];
};

/* struct MemPhyInfo on Linux (ascend_hal_base.h:2901-2917): byte sizes */
struct MemPhyInfo {
    unsigned long total;
    unsigned long free;
    unsigned long huge_total;
    unsigned long huge_free;
    unsigned long giant_total;
    unsigned long giant_free;
};

MDLRI_HAL_API drvError_t halMemAlloc(void **pp, unsigned long long size, unsigned long long flag);
MDLRI_HAL_API drvError_t halMemFree(void *pp);
MDLRI_HAL_API drvError_t halMemcpy(DVdeviceptr dst, size_t destMax, DVdeviceptr src,
                                   size_t byteCount, int kind);
/* the channel of a device-to-device copy: 0 SDMA (ascend_hal_base.h:880-892) */
MDLRI_HAL_API drvError_t drvDeviceGetTransWay(void *src, void *dest, uint8_t *trans_type);
MDLRI_HAL_API drvError_t drvMemcpy(DVdeviceptr dst, size_t destMax, DVdeviceptr src,
                                   size_t byteCount);
/* the handle halMemCpyAsync returns: the copy is already done (hal_mem.c) */
#define MDLRI_COPY_FD_DONE 1ull
MDLRI_HAL_API drvError_t halMemCpyAsync(DVdeviceptr dst, size_t destMax, DVdeviceptr src,
                                        size_t byteCount, uint64_t *copyFd);
MDLRI_HAL_API drvError_t halMemCpyAsyncWaitFinish(uint64_t copyFd);
MDLRI_HAL_API drvError_t drvMemsetD8(DVdeviceptr dst, size_t destMax, uint8_t value, size_t n);
MDLRI_HAL_API drvError_t drvMemGetAttribute(DVdeviceptr vptr, struct DVattribute *attr);
MDLRI_HAL_API drvError_t halHostRegister(void *hostPtr, unsigned long long size, uint32_t flag,
                                         uint32_t devid, void **devPtr);
MDLRI_HAL_API drvError_t halHostUnregister(void *hostPtr, uint32_t devid);
MDLRI_HAL_API drvError_t halHostUnregisterEx(void *hostPtr, uint32_t devid, uint32_t flag);
MDLRI_HAL_API drvError_t halMemHostGetDevPointer(void *srcPtr, uint32_t devid, void **dstPtr);
MDLRI_HAL_API drvError_t halMemGetInfo(uint32_t device, unsigned int type, void *info);
MDLRI_HAL_API drvError_t drvMemSmmuQuery(uint32_t device, uint32_t *SSID);
MDLRI_HAL_API drvError_t drvMemAddressTranslate(DVdeviceptr vptr, unsigned long long *pptr);
MDLRI_HAL_API drvError_t halMemCtl(int type, void *paramValue, size_t paramValueSize,
                                   void *outValue, size_t *outSize);
/* ours: bytes this device has handed out and not taken back (tests) */
MDLRI_HAL_API unsigned long long mdlri_hal_mem_in_use(void);

/* ---- ours: the kernel registry ---- */

/* A host kernel, the calling convention of kernel/host/mdlri_host_kernel.h. */
typedef void (*mdlri_hal_kernel_fn)(void *args, size_t args_size, uint32_t block_idx,
                                    uint32_t num_blocks);

/* Optional companions of a host kernel (mdlri_host_kernel.h): `ready` is polled (about
 * every millisecond) until non-zero before the kernel runs, the kernel counting as running
 * meanwhile (its kernel credit can run out); `fault` non-zero means an AI Core exception
 * instead of running it. */
typedef int (*mdlri_hal_kernel_check_fn)(const void *args, size_t args_size);

/* One range of memory a launch touches, {base, bytes}; a kernel's NAME__spans writes up to
 * MDLRI_HAL_MAX_SPANS of them and returns the count (mdlri_host_kernel.h). */
#define MDLRI_HAL_MAX_SPANS 4
typedef struct {
    uint64_t base;
    uint64_t bytes;
} mdlri_hal_span;
typedef int (*mdlri_hal_kernel_spans_fn)(const void *args, size_t args_size,
                                         mdlri_hal_span *out);

/* Bind the kernel code address `pc` (what a kernel SQE carries in pc_addr) to `fn`, called
 * with `args_size` bytes of arguments; `ready` and `fault` may be NULL. 0, or -1 when fn is
 * NULL. A full registry (256 pcs) gives up its entries in turn: a pc whose kernel binary
 * record names its kernel is bound again when it runs. */
MDLRI_HAL_API int mdlri_hal_kernel_register(uint64_t pc, const char *name,
                                            mdlri_hal_kernel_fn fn, uint32_t args_size,
                                            mdlri_hal_kernel_check_fn ready,
                                            mdlri_hal_kernel_check_fn fault);
/* Bind `pc` to kernel `name` of the host kernel library `library` (dlopen): the function
 * NAME, its args size the end of its NAME__params table, NAME__ready, NAME__fault and
 * NAME__spans when the library has them. A kernel bound with its spans touches only device
 * memory: a span outside what halMemAlloc handed out or halHostRegister mapped is an AI Core
 * exception before it runs (the SMMU's fault), so a stale argument block cannot write over
 * this process's own memory. 0; -1 library not loadable; -2 no such kernel. */
MDLRI_HAL_API int mdlri_hal_kernel_bind(uint64_t pc, const char *library, const char *name);
/* Forget every binding. */
MDLRI_HAL_API void mdlri_hal_kernel_clear(void);

/* ---- ours: probes and reset (tests) ---- */

/* 1 when event / notify `id` is set, 0 when not, -1 for an id out of range. */
MDLRI_HAL_API int mdlri_hal_event_state(uint32_t id);
MDLRI_HAL_API int mdlri_hal_notify_state(uint32_t id);
/* Stop every SQ thread, free every SQ and CQ, clear events, notifies and the registry. */
MDLRI_HAL_API void mdlri_hal_reset(void);

#ifdef __cplusplus
}
#endif
#endif
