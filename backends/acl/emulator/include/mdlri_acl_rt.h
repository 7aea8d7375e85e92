/*
 * mdlri_acl_rt.h -- the subset of the CANN runtime C ABI (acl_rt.h, ACL 1.17.0) that the
 * mdlri-conformance host emulator implements.
 *
 * Written from the layout/value fact sheet (shared/ref/abi.md); it is NOT a copy of the CANN
 * headers. Types, enum values, flag values, error codes and struct layouts match the real ABI
 * on LP64 (x86_64 / aarch64) so that a ctypes binding written for libacl_rt.so works unchanged
 * against libmdlri_acl_emu.so. The _Static_asserts at the end pin every size and offset.
 */
#ifndef MDLRI_ACL_RT_H
#define MDLRI_ACL_RT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef MDLRI_API
#define MDLRI_API __attribute__((visibility("default")))
#endif

/* ------------------------------------------------------------------------------------------ */
/* Basic types (abi.md §1)                                                                     */

typedef int aclError;

typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void *aclrtContext;
typedef void *aclmdlRI;
typedef void *aclmdlRITask;
typedef void *aclrtTaskGrp;
typedef void *aclrtBinHandle;
typedef void *aclrtFuncHandle;
typedef void *aclmdlRICondHandle;
typedef void *aclrtLabel;
typedef void *aclrtLabelList;
typedef void (*aclrtCallback)(void *userData);

/* ------------------------------------------------------------------------------------------ */
/* Enums (abi.md §4.9). No negative enumerators: 4-byte unsigned in C.                          */

typedef enum {
    ACL_MODEL_RI_TASK_DEFAULT = 0,
    ACL_MODEL_RI_TASK_KERNEL = 1,
    ACL_MODEL_RI_TASK_EVENT_RECORD = 2,
    ACL_MODEL_RI_TASK_EVENT_WAIT = 3,
    ACL_MODEL_RI_TASK_EVENT_RESET = 4,
    ACL_MODEL_RI_TASK_VALUE_WRITE = 5,
    ACL_MODEL_RI_TASK_VALUE_WAIT = 6,
} aclmdlRITaskType;

typedef enum {
    ACL_MODEL_RI_CAPTURE_MODE_GLOBAL = 0,
    ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL = 1,
    ACL_MODEL_RI_CAPTURE_MODE_RELAXED = 2,
} aclmdlRICaptureMode;

typedef enum {
    ACL_MODEL_RI_CAPTURE_STATUS_NONE = 0,
    ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE = 1,
    ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED = 2,
} aclmdlRICaptureStatus;

typedef enum {
    ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE = 1,
    ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE = 2,
    ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE = 3,
    ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET = 4,
    ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH = 5,
    ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP = 6,
    ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT = 7,
    ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US = 8,
    ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING = 9,
} aclrtLaunchKernelAttrId;

typedef enum {
    ACL_MODEL_RI_COND_TYPE_IF = 0,
    ACL_MODEL_RI_COND_TYPE_WHILE = 1,
    ACL_MODEL_RI_COND_TYPE_SWITCH = 2,
} aclmdlRICondTaskType;

typedef enum { ACL_MODEL_RI_COND_HANDLE_ASSIGN_DEFAULT = 1 } aclmdlRICondHandleFlag;

typedef enum { ACL_RT_ENGINE_TYPE_AIC = 0, ACL_RT_ENGINE_TYPE_AIV = 1 } aclrtEngineType;

/* aclrtSwitchStream: the comparison *left <cond> *right and the width of both values */
typedef enum {
    ACL_RT_EQUAL = 0,
    ACL_RT_NOT_EQUAL,
    ACL_RT_GREATER,
    ACL_RT_GREATER_OR_EQUAL,
    ACL_RT_LESS,
    ACL_RT_LESS_OR_EQUAL,
} aclrtCondition;

typedef enum { ACL_RT_SWITCH_INT32 = 0, ACL_RT_SWITCH_INT64 = 1 } aclrtCompareDataType;

typedef enum {
    ACL_RT_BINARY_LOAD_OPT_LAZY_LOAD = 1,
    ACL_RT_BINARY_LOAD_OPT_LAZY_MAGIC = 2,
    ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE = 3,
} aclrtBinaryLoadOptionType;

typedef enum {
    ACL_MEM_MALLOC_HUGE_FIRST = 0,
    ACL_MEM_MALLOC_HUGE_ONLY = 1,
    ACL_MEM_MALLOC_NORMAL_ONLY = 2,
    ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3,
    ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4,
    ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5,
    ACL_MEM_MALLOC_HUGE1G_ONLY = 6,
    ACL_MEM_MALLOC_HUGE1G_ONLY_P2P = 7,
    ACL_MEM_TYPE_LOW_BAND_WIDTH = 0x100,
    ACL_MEM_TYPE_HIGH_BAND_WIDTH = 0x1000,
    ACL_MEM_ACCESS_USER_SPACE_READONLY = 0x100000,
} aclrtMemMallocPolicy;

typedef enum aclrtMemLocationType {
    ACL_MEM_LOCATION_TYPE_HOST = 0,
    ACL_MEM_LOCATION_TYPE_DEVICE,
    ACL_MEM_LOCATION_TYPE_UNREGISTERED,
    ACL_MEM_LOCATION_TYPE_MANAGED,
    ACL_MEM_LOCATION_TYPE_HOST_NUMA = 4,
} aclrtMemLocationType;

typedef enum {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
    ACL_MEMCPY_DEFAULT = 4,
    ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE = 5,
    ACL_MEMCPY_INNER_DEVICE_TO_DEVICE = 6,
    ACL_MEMCPY_INTER_DEVICE_TO_DEVICE = 7,
} aclrtMemcpyKind;

typedef enum {
    ACL_STREAM_STATUS_COMPLETE = 0,
    ACL_STREAM_STATUS_NOT_READY = 1,
    ACL_STREAM_STATUS_RESERVED = 0xFFFF,
} aclrtStreamStatus;

/* ------------------------------------------------------------------------------------------ */
/* Flag macros (abi.md §4.10)                                                                   */

#define ACL_STREAM_FAST_LAUNCH 0x1u
#define ACL_STREAM_FAST_SYNC 0x2u
#define ACL_STREAM_PERSISTENT 0x4u
#define ACL_STREAM_HUGE 0x8u
#define ACL_STREAM_CPU_SCHEDULE 0x10u
#define ACL_STREAM_DEVICE_USE_ONLY 0x20u

#define ACL_EVENT_SYNC 0x1u
#define ACL_EVENT_CAPTURE_STREAM_PROGRESS 0x2u
#define ACL_EVENT_TIME_LINE 0x8u
#define ACL_EVENT_DEVICE_USE_ONLY 0x10u
#define ACL_EVENT_EXTERNAL 0x20u
#define ACL_EVENT_IPC 0x40u

#define ACL_EVENT_RECORD_DEFAULT 0u
#define ACL_EVENT_RECORD_EXTERNAL 1u
#define ACL_EVENT_WAIT_DEFAULT 0u
#define ACL_EVENT_WAIT_EXTERNAL 1u

#define ACL_STREAM_WAIT_VALUE_GEQ 0u
#define ACL_STREAM_WAIT_VALUE_EQ 1u
#define ACL_STREAM_WAIT_VALUE_AND 2u
#define ACL_STREAM_WAIT_VALUE_NOR 3u

/* doc-only macros (abi.md §2.2, §4.10) */
#define ACL_MODEL_STREAM_FLAG_HEAD 0x00000000u
#define ACL_MODEL_STREAM_FLAG_DEFAULT 0x7FFFFFFFu
#define ACL_MDLRI_DEBUG_JSON_PRINT_SUMMARY 0x0u
#define ACL_MDLRI_DEBUG_JSON_PRINT_VERBOSE 0x1u

/* ------------------------------------------------------------------------------------------ */
/* Error codes (abi.md §5.1)                                                                    */

#define ACL_SUCCESS 0
#define ACL_ERROR_INVALID_PARAM 100000
#define ACL_ERROR_UNINITIALIZE 100001
#define ACL_ERROR_REPEAT_INITIALIZE 100002
#define ACL_ERROR_RT_PARAM_INVALID 107000
#define ACL_ERROR_RT_INVALID_DEVICEID 107001
#define ACL_ERROR_RT_CONTEXT_NULL 107002
#define ACL_ERROR_RT_STREAM_CONTEXT 107003
#define ACL_ERROR_RT_MODEL_CONTEXT 107004
#define ACL_ERROR_RT_STREAM_MODEL 107005
#define ACL_ERROR_RT_INVALID_HANDLE 107017
#define ACL_ERROR_RT_TASK_TIMEOUT 107020
#define ACL_ERROR_RT_CAPTURE_DEPENDENCY 107024
#define ACL_ERROR_RT_STREAM_UNJOINED 107025
#define ACL_ERROR_RT_MODEL_CAPTURED 107026
#define ACL_ERROR_RT_STREAM_CAPTURED 107027
#define ACL_ERROR_RT_EVENT_CAPTURED 107028
#define ACL_ERROR_RT_STREAM_NOT_CAPTURED 107029
#define ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT 107030
#define ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT 107031
#define ACL_ERROR_STREAM_CAPTURE_CONFLICT 107032
#define ACL_ERROR_STREAM_TASK_GROUP_STATUS 107033
#define ACL_ERROR_STREAM_TASK_GROUP_INTR 107034
#define ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED 107036
#define ACL_ERROR_RT_MODEL_RUNNING 107037
#define ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD 107038
#define ACL_ERROR_RT_INSUFFICIENT_INPUT_ARRAY 107039
#define ACL_ERROR_RT_MODEL_UPDATE_FAILED 107040
#define ACL_ERROR_RT_CAPTURE_MODE_BLOCK_ASYNC 107041
#define ACL_ERROR_RT_SUB_ACLGRAPH_IS_CAPTURING 107045
#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT 207000
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001
#define ACL_ERROR_RT_RESOURCE_ALLOC_FAIL 207005
#define ACL_ERROR_RT_NO_STREAM_RESOURCE 207008
#define ACL_ERROR_RT_INTERNAL_ERROR 507000
#define ACL_ERROR_RT_STREAM_TASK_FULL 507002
#define ACL_ERROR_RT_TASK_TYPE_NOT_SUPPORT 507009
#define ACL_ERROR_RT_MODEL_EXECUTE 507011
#define ACL_ERROR_RT_AICORE_EXCEPTION 507015
#define ACL_ERROR_RT_STREAM_SYNC_TIMEOUT 507046
#define ACL_ERROR_RT_EVENT_SYNC_TIMEOUT 507047
#define ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED 507903

/* ------------------------------------------------------------------------------------------ */
/* Structs (abi.md §4). Natural alignment, no packing.                                         */

typedef struct {
    uint32_t timeoutLow;
    uint32_t timeoutHigh;
} aclrtTimeoutUs;

typedef union {
    uint8_t schemMode;
    uint32_t localMemorySize;
    uint32_t dynUBufSize;
    aclrtEngineType engineType;
    uint32_t blockDimOffset;
    uint8_t isBlockTaskPrefetch;
    uint8_t isDataDump;
    uint16_t timeout;
    aclrtTimeoutUs timeoutUs;
    uint8_t enableProfiling;
    uint32_t rsv[4];
} aclrtLaunchKernelAttrValue;

typedef struct {
    aclrtLaunchKernelAttrId id;
    aclrtLaunchKernelAttrValue value;
} aclrtLaunchKernelAttr;

typedef struct {
    aclrtLaunchKernelAttr *attrs;
    size_t numAttrs;
} aclrtLaunchKernelCfg;

typedef union {
    uint32_t isLazyLoad;
    uint32_t magic;
    int32_t cpuKernelMode;
    uint32_t rsv[4];
} aclrtBinaryLoadOptionValue;

typedef struct {
    aclrtBinaryLoadOptionType type;
    aclrtBinaryLoadOptionValue value;
} aclrtBinaryLoadOption;

typedef struct {
    aclrtBinaryLoadOption *options;
    size_t numOpt;
} aclrtBinaryLoadOptions;

typedef struct {
    uint32_t addrOffset;
    uint32_t dataOffset;
} aclrtPlaceHolderInfo;

typedef struct aclrtMemLocation {
    uint32_t id;
    aclrtMemLocationType type;
} aclrtMemLocation;

typedef struct aclrtPtrAttributes {
    aclrtMemLocation location;
    uint32_t pageSize;
    uint32_t rsv[4];
} aclrtPtrAttributes;

typedef struct aclmdlRIKernelTaskParams {
    aclrtFuncHandle funcHandle;
    aclrtLaunchKernelCfg *cfg;
    void *args;
    uint32_t isHostArgs;
    size_t argsSize;
    uint32_t numBlocks;
    uint32_t rsv[10];
} aclmdlRIKernelTaskParams;

typedef struct aclmdlRIEventRecordTaskParams {
    aclrtEvent event;
    uint32_t eventFlag;
    uint32_t recordFlag;
} aclmdlRIEventRecordTaskParams;

typedef struct aclmdlRIEventWaitTaskParams {
    aclrtEvent event;
    uint32_t eventFlag;
    uint32_t waitFlag;
} aclmdlRIEventWaitTaskParams;

typedef struct aclmdlRIEventResetTaskParams {
    aclrtEvent event;
    uint32_t eventFlag;
    uint32_t resetFlag;
} aclmdlRIEventResetTaskParams;

typedef struct aclmdlRIValueWriteTaskParams {
    void *devAddr;
    uint64_t value;
} aclmdlRIValueWriteTaskParams;

typedef struct aclmdlRIValueWaitTaskParams {
    void *devAddr;
    uint64_t value;
    uint32_t flag;
} aclmdlRIValueWaitTaskParams;

typedef struct aclmdlRITaskParams {
    aclmdlRITaskType type;
    uint32_t rsv0[3];
    aclrtTaskGrp taskGrp;
    void *opInfoPtr;
    size_t opInfoSize;
    uint8_t rsv1[32];
    union {
        uint8_t rsv2[128];
        aclmdlRIKernelTaskParams kernelTaskParams;
        aclmdlRIEventRecordTaskParams eventRecordTaskParams;
        aclmdlRIEventWaitTaskParams eventWaitTaskParams;
        aclmdlRIEventResetTaskParams eventResetTaskParams;
        aclmdlRIValueWriteTaskParams valueWriteTaskParams;
        aclmdlRIValueWaitTaskParams valueWaitTaskParams;
    };
} aclmdlRITaskParams;

typedef struct tagAclmdlRICondTaskParams {
    aclmdlRICondHandle handle;
    aclmdlRICondTaskType type;
    uint32_t size;
    aclmdlRI *modelRIArray;
} aclmdlRICondTaskParams;

/* ------------------------------------------------------------------------------------------ */
/* Layout pins (abi.md §4, computed there with gcc 12.2 against the real headers)              */

#ifndef __cplusplus
#define MDLRI_OFF(T, f, v) _Static_assert(offsetof(T, f) == (v), #T "." #f " offset")
#define MDLRI_SIZE(T, v) _Static_assert(sizeof(T) == (v), "sizeof " #T)
#define MDLRI_ALIGN(T, v) _Static_assert(_Alignof(T) == (v), "alignof " #T)

MDLRI_SIZE(aclError, 4);
MDLRI_SIZE(aclmdlRITaskType, 4);
MDLRI_SIZE(aclmdlRICaptureMode, 4);
MDLRI_SIZE(aclmdlRICaptureStatus, 4);
MDLRI_SIZE(aclrtMemcpyKind, 4);
MDLRI_SIZE(aclrtMemMallocPolicy, 4);
MDLRI_SIZE(aclrtStreamStatus, 4);

MDLRI_SIZE(aclmdlRITaskParams, 200);
MDLRI_ALIGN(aclmdlRITaskParams, 8);
MDLRI_OFF(aclmdlRITaskParams, type, 0);
MDLRI_OFF(aclmdlRITaskParams, rsv0, 4);
MDLRI_OFF(aclmdlRITaskParams, taskGrp, 16);
MDLRI_OFF(aclmdlRITaskParams, opInfoPtr, 24);
MDLRI_OFF(aclmdlRITaskParams, opInfoSize, 32);
MDLRI_OFF(aclmdlRITaskParams, rsv1, 40);
MDLRI_OFF(aclmdlRITaskParams, rsv2, 72);
MDLRI_OFF(aclmdlRITaskParams, kernelTaskParams, 72);
MDLRI_OFF(aclmdlRITaskParams, eventRecordTaskParams, 72);
MDLRI_OFF(aclmdlRITaskParams, eventWaitTaskParams, 72);
MDLRI_OFF(aclmdlRITaskParams, eventResetTaskParams, 72);
MDLRI_OFF(aclmdlRITaskParams, valueWriteTaskParams, 72);
MDLRI_OFF(aclmdlRITaskParams, valueWaitTaskParams, 72);

MDLRI_SIZE(aclmdlRIKernelTaskParams, 88);
MDLRI_ALIGN(aclmdlRIKernelTaskParams, 8);
MDLRI_OFF(aclmdlRIKernelTaskParams, funcHandle, 0);
MDLRI_OFF(aclmdlRIKernelTaskParams, cfg, 8);
MDLRI_OFF(aclmdlRIKernelTaskParams, args, 16);
MDLRI_OFF(aclmdlRIKernelTaskParams, isHostArgs, 24);
MDLRI_OFF(aclmdlRIKernelTaskParams, argsSize, 32);
MDLRI_OFF(aclmdlRIKernelTaskParams, numBlocks, 40);
MDLRI_OFF(aclmdlRIKernelTaskParams, rsv, 44);

MDLRI_SIZE(aclmdlRIEventRecordTaskParams, 16);
MDLRI_OFF(aclmdlRIEventRecordTaskParams, event, 0);
MDLRI_OFF(aclmdlRIEventRecordTaskParams, eventFlag, 8);
MDLRI_OFF(aclmdlRIEventRecordTaskParams, recordFlag, 12);
MDLRI_SIZE(aclmdlRIEventWaitTaskParams, 16);
MDLRI_OFF(aclmdlRIEventWaitTaskParams, waitFlag, 12);
MDLRI_SIZE(aclmdlRIEventResetTaskParams, 16);
MDLRI_OFF(aclmdlRIEventResetTaskParams, resetFlag, 12);

MDLRI_SIZE(aclmdlRIValueWriteTaskParams, 16);
MDLRI_OFF(aclmdlRIValueWriteTaskParams, devAddr, 0);
MDLRI_OFF(aclmdlRIValueWriteTaskParams, value, 8);
MDLRI_SIZE(aclmdlRIValueWaitTaskParams, 24);
MDLRI_OFF(aclmdlRIValueWaitTaskParams, devAddr, 0);
MDLRI_OFF(aclmdlRIValueWaitTaskParams, value, 8);
MDLRI_OFF(aclmdlRIValueWaitTaskParams, flag, 16);

MDLRI_SIZE(aclrtLaunchKernelCfg, 16);
MDLRI_OFF(aclrtLaunchKernelCfg, attrs, 0);
MDLRI_OFF(aclrtLaunchKernelCfg, numAttrs, 8);
MDLRI_SIZE(aclrtLaunchKernelAttrValue, 16);
MDLRI_ALIGN(aclrtLaunchKernelAttrValue, 4);
MDLRI_SIZE(aclrtLaunchKernelAttr, 20);
MDLRI_ALIGN(aclrtLaunchKernelAttr, 4);
MDLRI_OFF(aclrtLaunchKernelAttr, id, 0);
MDLRI_OFF(aclrtLaunchKernelAttr, value, 4);
MDLRI_SIZE(aclrtTimeoutUs, 8);

MDLRI_SIZE(aclrtBinaryLoadOptions, 16);
MDLRI_SIZE(aclrtBinaryLoadOption, 20);
MDLRI_OFF(aclrtBinaryLoadOption, value, 4);
MDLRI_SIZE(aclrtPlaceHolderInfo, 8);

MDLRI_SIZE(aclmdlRICondTaskType, 4);
MDLRI_SIZE(aclmdlRICondHandleFlag, 4);
MDLRI_SIZE(aclrtLaunchKernelAttrId, 4);
MDLRI_SIZE(aclmdlRICondTaskParams, 24);
MDLRI_ALIGN(aclmdlRICondTaskParams, 8);
MDLRI_OFF(aclmdlRICondTaskParams, handle, 0);
MDLRI_OFF(aclmdlRICondTaskParams, type, 8);
MDLRI_OFF(aclmdlRICondTaskParams, size, 12);
MDLRI_OFF(aclmdlRICondTaskParams, modelRIArray, 16);
MDLRI_OFF(aclrtLaunchKernelAttrValue, timeoutUs, 0);
MDLRI_OFF(aclrtTimeoutUs, timeoutHigh, 4);
MDLRI_SIZE(aclrtCallback, 8);
#endif /* !__cplusplus */

/* ------------------------------------------------------------------------------------------ */
/* Functions                                                                                   */

/* init / device */
MDLRI_API aclError aclInit(const char *configPath);
MDLRI_API aclError aclFinalize(void);
MDLRI_API aclError aclrtSetDevice(int32_t deviceId);
MDLRI_API aclError aclrtResetDevice(int32_t deviceId);
MDLRI_API aclError aclrtGetDeviceCount(uint32_t *count);
MDLRI_API aclError aclrtGetDevice(int32_t *deviceId);
MDLRI_API aclError aclrtGetCurrentContext(aclrtContext *context);
MDLRI_API const char *aclrtGetSocName(void);
MDLRI_API const char *aclGetRecentErrMsg(void);
MDLRI_API aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion,
                                   int32_t *patchVersion);

/* streams */
MDLRI_API aclError aclrtCreateStream(aclrtStream *stream);
MDLRI_API aclError aclrtCreateStreamWithConfig(aclrtStream *stream, uint32_t priority,
                                               uint32_t flag);
MDLRI_API aclError aclrtDestroyStream(aclrtStream stream);
MDLRI_API aclError aclrtSynchronizeStream(aclrtStream stream);
MDLRI_API aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout);
MDLRI_API aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status);

/* memory */
MDLRI_API aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
MDLRI_API aclError aclrtFree(void *devPtr);
MDLRI_API aclError aclrtMallocHost(void **hostPtr, size_t size);
MDLRI_API aclError aclrtFreeHost(void *hostPtr);
MDLRI_API aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                               aclrtMemcpyKind kind);
MDLRI_API aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                                    aclrtMemcpyKind kind, aclrtStream stream);
MDLRI_API aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count);
MDLRI_API aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
                                    aclrtStream stream);
MDLRI_API aclError aclrtPointerGetAttributes(const void *ptr, aclrtPtrAttributes *attributes);

/* events */
MDLRI_API aclError aclrtCreateEvent(aclrtEvent *event);
MDLRI_API aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag);
MDLRI_API aclError aclrtCreateEventExWithFlag(aclrtEvent *event, uint32_t flag);
MDLRI_API aclError aclrtDestroyEvent(aclrtEvent event);
MDLRI_API aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
MDLRI_API aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
MDLRI_API aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream);
MDLRI_API aclError aclrtRecordEventWithFlag(aclrtEvent event, aclrtStream stream, uint32_t flag);
MDLRI_API aclError aclrtStreamWaitEventWithFlag(aclrtStream stream, aclrtEvent event,
                                                uint32_t timeout, uint32_t flag);
MDLRI_API aclError aclrtSynchronizeEvent(aclrtEvent event);
MDLRI_API aclError aclrtSynchronizeEventWithTimeout(aclrtEvent event, int32_t timeout);

/* value write / wait */
MDLRI_API aclError aclrtValueWrite(void *devAddr, uint64_t value, uint32_t flag,
                                   aclrtStream stream);
MDLRI_API aclError aclrtValueWait(void *devAddr, uint64_t value, uint32_t flag,
                                  aclrtStream stream);

/* kernels */
MDLRI_API aclError aclrtBinaryLoadFromFile(const char *binPath, aclrtBinaryLoadOptions *options,
                                           aclrtBinHandle *binHandle);
MDLRI_API aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle, const char *kernelName,
                                          aclrtFuncHandle *funcHandle);
MDLRI_API aclError aclrtBinaryUnLoad(aclrtBinHandle binHandle);
MDLRI_API aclError aclrtFunctionGetParamCount(const void *func, size_t *paramCount);
MDLRI_API aclError aclrtFunctionGetParamInfo(const void *func, size_t paramIndex,
                                             size_t *paramOffset, size_t *paramSize);
MDLRI_API aclError aclrtLaunchKernelWithHostArgs(aclrtFuncHandle funcHandle, uint32_t numBlocks,
                                                 aclrtStream stream, aclrtLaunchKernelCfg *cfg,
                                                 void *hostArgs, size_t argsSize,
                                                 aclrtPlaceHolderInfo *placeHolderArray,
                                                 size_t placeHolderNum);

/* Model RI: capture */
MDLRI_API aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode);
MDLRI_API aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus *status,
                                          aclmdlRI *modelRI);
MDLRI_API aclError aclmdlRICaptureThreadExchangeMode(aclmdlRICaptureMode *mode);
MDLRI_API aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI);

/* Model RI: introspection and update */
MDLRI_API aclError aclmdlRIGetStreams(aclmdlRI modelRI, aclrtStream *streams,
                                      uint32_t *numStreams);
MDLRI_API aclError aclmdlRIGetTasksByStream(aclrtStream stream, aclmdlRITask *tasks,
                                            uint32_t *numTasks);
MDLRI_API aclError aclmdlRITaskGetType(aclmdlRITask task, aclmdlRITaskType *type);
MDLRI_API aclError aclmdlRITaskGetSeqId(aclmdlRITask task, uint32_t *id);
MDLRI_API aclError aclmdlRITaskGetParams(aclmdlRITask task, aclmdlRITaskParams *params);
MDLRI_API aclError aclmdlRITaskSetParams(aclmdlRITask task, aclmdlRITaskParams *params);
MDLRI_API aclError aclmdlRITaskDisable(aclmdlRITask task);
MDLRI_API aclError aclmdlRIUpdate(aclmdlRI modelRI);

/* Model RI: execute / destroy */
MDLRI_API aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream);
MDLRI_API aclError aclmdlRIDestroy(aclmdlRI modelRI);

/* Model RI: task groups (abi.md §2.1) */
MDLRI_API aclError aclmdlRICaptureTaskGrpBegin(aclrtStream stream);
MDLRI_API aclError aclmdlRICaptureTaskGrpEnd(aclrtStream stream, aclrtTaskGrp *handle);
MDLRI_API aclError aclmdlRICaptureTaskUpdateBegin(aclrtStream stream, aclrtTaskGrp handle);
MDLRI_API aclError aclmdlRICaptureTaskUpdateEnd(aclrtStream stream);

/* Model RI: explicit build (abi.md §2.2) */
MDLRI_API aclError aclmdlRIBuildBegin(aclmdlRI *modelRI, uint32_t flag);
MDLRI_API aclError aclmdlRIBindStream(aclmdlRI modelRI, aclrtStream stream, uint32_t flag);
MDLRI_API aclError aclmdlRIEndTask(aclmdlRI modelRI, aclrtStream stream);
MDLRI_API aclError aclmdlRIBuildEnd(aclmdlRI modelRI, void *reserve);
MDLRI_API aclError aclmdlRIUnbindStream(aclmdlRI modelRI, aclrtStream stream);

/* Model RI: execute / lifetime / naming (abi.md §2.3) */
MDLRI_API aclError aclmdlRIExecute(aclmdlRI modelRI, int32_t timeout);
MDLRI_API aclError aclmdlRIAbort(aclmdlRI modelRI);
MDLRI_API aclError aclmdlRISetName(aclmdlRI modelRI, const char *name);
MDLRI_API aclError aclmdlRIGetName(aclmdlRI modelRI, uint32_t maxLen, char *name);
MDLRI_API aclError aclmdlRIGetId(aclmdlRI modelRI, uint32_t *modelRIId);
MDLRI_API aclError aclmdlRIDestroyRegisterCallback(aclmdlRI modelRI, aclrtCallback func,
                                                   void *userData);
MDLRI_API aclError aclmdlRIDestroyUnregisterCallback(aclmdlRI modelRI, aclrtCallback func);
MDLRI_API aclError aclmdlRIDebugJsonPrint(aclmdlRI modelRI, const char *path, uint32_t flags);
MDLRI_API aclError aclmdlRIDebugPrint(aclmdlRI modelRI);

/* Model RI: kernel attributes (abi.md §2.4) */
MDLRI_API aclError aclmdlRIKernelTaskGetAttribute(aclmdlRITask task,
                                                  aclrtLaunchKernelAttrId attrId,
                                                  aclrtLaunchKernelAttrValue *attrValue);

/* Model RI: conditional tasks and sub-models (abi.md §2.5, §2.1) */
MDLRI_API aclError aclmdlRICondHandleCreate(aclmdlRI modelRI, uint32_t defaultLaunchValue,
                                            aclmdlRICondHandleFlag flag,
                                            aclmdlRICondHandle *handle);
MDLRI_API aclError aclmdlRICondHandleGetCondPtr(aclmdlRICondHandle handle, uint64_t **ptr);
MDLRI_API aclError aclmdlRIAddCondTask(aclmdlRICondTaskParams params, aclrtStream stream,
                                       uint32_t flags);
MDLRI_API aclError aclmdlRICaptureToModelRIBegin(aclrtStream stream, aclmdlRI modelRI,
                                                 aclmdlRICaptureMode mode);

/* Stream activation / switch and labels on bound streams (api docs: aclrtActiveStream,
 * aclrtSwitchStream, Label management) */
MDLRI_API aclError aclrtActiveStream(aclrtStream activeStream, aclrtStream stream);
MDLRI_API aclError aclrtSwitchStream(void *leftValue, aclrtCondition cond, void *rightValue,
                                     aclrtCompareDataType dataType, aclrtStream trueStream,
                                     aclrtStream falseStream, aclrtStream stream);
MDLRI_API aclError aclrtCreateLabel(aclrtLabel *label);
MDLRI_API aclError aclrtSetLabel(aclrtLabel label, aclrtStream stream);
MDLRI_API aclError aclrtDestroyLabel(aclrtLabel label);
MDLRI_API aclError aclrtCreateLabelList(aclrtLabel *labels, size_t num, aclrtLabelList *labelList);
MDLRI_API aclError aclrtDestroyLabelList(aclrtLabelList labelList);
MDLRI_API aclError aclrtSwitchLabelByIndex(void *ptr, uint32_t maxValue, aclrtLabelList labelList,
                                           aclrtStream stream);

/* emulator-only extras */
MDLRI_API const char *mdlriEmuVersion(void);
MDLRI_API aclError mdlriEmuLiveCounts(uint64_t *models, uint64_t *streams, uint64_t *events,
                                      uint64_t *allocations);
MDLRI_API aclError mdlriEmuLiveLabels(uint64_t *labels);

#ifdef __cplusplus
}
#endif

#endif /* MDLRI_ACL_RT_H */
