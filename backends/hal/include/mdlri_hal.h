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

#include <stddef.h>
#include <stdint.h>

#define MDLRI_HAL_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

/* ---- driver return codes (pkg_inc/driver/ascend_hal_error.h:34-50,144) ---- */
typedef int drvError_t;
#define DRV_ERROR_NONE 0
#define DRV_ERROR_INVALID_VALUE 3
#define DRV_ERROR_INVALID_HANDLE 4
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
MDLRI_HAL_API drvError_t halResourceIdAlloc(uint32_t devId, struct halResourceIdInputInfo *in,
                                            struct halResourceIdOutputInfo *out);
MDLRI_HAL_API drvError_t halResourceIdFree(uint32_t devId, struct halResourceIdInputInfo *in);
MDLRI_HAL_API drvError_t halResourceInfoQuery(uint32_t devId, uint32_t tsId,
                                              drvResourceType_t type,
                                              struct halResourceInfo *info);

/* ---- ours: the kernel registry ---- */

/* A host kernel, the calling convention of kernel/host/mdlri_host_kernel.h. */
typedef void (*mdlri_hal_kernel_fn)(void *args, size_t args_size, uint32_t block_idx,
                                    uint32_t num_blocks);

/* Optional companions of a host kernel (mdlri_host_kernel.h): `ready` is polled (about
 * every millisecond) until non-zero before the kernel runs, the kernel counting as running
 * meanwhile (its kernel credit can run out); `fault` non-zero means an AI Core exception
 * instead of running it. */
typedef int (*mdlri_hal_kernel_check_fn)(const void *args, size_t args_size);

/* Bind the kernel code address `pc` (what a kernel SQE carries in pc_addr) to `fn`, called
 * with `args_size` bytes of arguments; `ready` and `fault` may be NULL. 0, or -1 when the
 * registry is full or fn is NULL. */
MDLRI_HAL_API int mdlri_hal_kernel_register(uint64_t pc, const char *name,
                                            mdlri_hal_kernel_fn fn, uint32_t args_size,
                                            mdlri_hal_kernel_check_fn ready,
                                            mdlri_hal_kernel_check_fn fault);
/* Bind `pc` to kernel `name` of the host kernel library `library` (dlopen): the function
 * NAME, its args size the end of its NAME__params table, NAME__ready and NAME__fault when
 * the library has them. 0; -1 library not loadable; -2 no such kernel; -3 registry full. */
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
