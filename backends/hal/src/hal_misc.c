/*
 * hal_misc.c -- every other driver entry point the CANN runtime library links against
 * (backends/hal/needed_symbols.txt, from `nm -D --undefined-only` of the runtime built at
 * 681ef76), answering the driver's "not supported" code DRV_ERROR_NOT_SUPPORT (0xfffe,
 * pkg_inc/driver/ascend_hal_error.h:144). The runtime treats that code as a feature the
 * driver lacks: most callers map it to RT_ERROR_DRV_NOT_SUPPORT / RT_ERROR_FEATURE_NOT_SUPPORT
 * (ACL 207000), so a test reaching one reports UNSUPPORTED rather than crashing here.
 *
 * The entries are defined without parameters: on the x86-64 and AArch64 C calling
 * conventions a function that ignores its arguments and returns an int may be called with
 * any argument list, so one definition serves every signature whose result is a
 * drvError_t / DVresult / int. The few entry points with another result type are written
 * out below the table. MDLRI_HAL_TRACE=1 names each call on stderr.
 */
#include "mdlri_hal.h"

#define MDLRI_NOT_SUPPORTED(name)                   \
    MDLRI_HAL_API drvError_t name(void);            \
    drvError_t name(void) {                         \
        mdlri_hal_trace("not supported: " #name, 0, 0); \
        return DRV_ERROR_NOT_SUPPORT;               \
    }

/* ---- Queues, mbufs, buffers, groups, event scheduling (AICPU data flow) ---- */
MDLRI_NOT_SUPPORTED(halBufEventReport)
MDLRI_NOT_SUPPORTED(halBuffAlloc)
MDLRI_NOT_SUPPORTED(halBuffFree)
MDLRI_NOT_SUPPORTED(halBuffGet)
MDLRI_NOT_SUPPORTED(halBuffGetDQSPoolInfoById)
MDLRI_NOT_SUPPORTED(halBuffGetInfo)
MDLRI_NOT_SUPPORTED(halBuffInit)
MDLRI_NOT_SUPPORTED(halEschedAckEvent)
MDLRI_NOT_SUPPORTED(halEschedAttachDevice)
MDLRI_NOT_SUPPORTED(halEschedCreateGrp)
MDLRI_NOT_SUPPORTED(halEschedCreateGrpEx)
MDLRI_NOT_SUPPORTED(halEschedDettachDevice)
MDLRI_NOT_SUPPORTED(halEschedQueryInfo)
MDLRI_NOT_SUPPORTED(halEschedSubmitEvent)
MDLRI_NOT_SUPPORTED(halEschedSubmitEventSync)
MDLRI_NOT_SUPPORTED(halEschedSubscribeEvent)
MDLRI_NOT_SUPPORTED(halEschedThreadSwapout)
MDLRI_NOT_SUPPORTED(halEschedWaitEvent)
MDLRI_NOT_SUPPORTED(halGrpAddProc)
MDLRI_NOT_SUPPORTED(halGrpAttach)
MDLRI_NOT_SUPPORTED(halGrpCacheAlloc)
MDLRI_NOT_SUPPORTED(halGrpCreate)
MDLRI_NOT_SUPPORTED(halGrpQuery)
MDLRI_NOT_SUPPORTED(halMbufAlloc)
MDLRI_NOT_SUPPORTED(halMbufAllocEx)
MDLRI_NOT_SUPPORTED(halMbufBuild)
MDLRI_NOT_SUPPORTED(halMbufChainAppend)
MDLRI_NOT_SUPPORTED(halMbufChainGetMbuf)
MDLRI_NOT_SUPPORTED(halMbufChainGetMbufNum)
MDLRI_NOT_SUPPORTED(halMbufCopyRef)
MDLRI_NOT_SUPPORTED(halMbufFree)
MDLRI_NOT_SUPPORTED(halMbufGetBuffAddr)
MDLRI_NOT_SUPPORTED(halMbufGetBuffSize)
MDLRI_NOT_SUPPORTED(halMbufGetDataLen)
MDLRI_NOT_SUPPORTED(halMbufGetPrivInfo)
MDLRI_NOT_SUPPORTED(halMbufSetDataLen)
MDLRI_NOT_SUPPORTED(halMbufUnBuild)
MDLRI_NOT_SUPPORTED(halQueueAttach)
MDLRI_NOT_SUPPORTED(halQueueCreate)
MDLRI_NOT_SUPPORTED(halQueueDeQueue)
MDLRI_NOT_SUPPORTED(halQueueDeQueueBuff)
MDLRI_NOT_SUPPORTED(halQueueDestroy)
MDLRI_NOT_SUPPORTED(halQueueEnQueue)
MDLRI_NOT_SUPPORTED(halQueueEnQueueBuff)
MDLRI_NOT_SUPPORTED(halQueueExport)
MDLRI_NOT_SUPPORTED(halQueueGetDqsQueInfo)
MDLRI_NOT_SUPPORTED(halQueueGetQidbyName)
MDLRI_NOT_SUPPORTED(halQueueGrant)
MDLRI_NOT_SUPPORTED(halQueueImport)
MDLRI_NOT_SUPPORTED(halQueueInit)
MDLRI_NOT_SUPPORTED(halQueuePeek)
MDLRI_NOT_SUPPORTED(halQueueQuery)
MDLRI_NOT_SUPPORTED(halQueueQueryInfo)
MDLRI_NOT_SUPPORTED(halQueueReset)
MDLRI_NOT_SUPPORTED(halQueueSet)
MDLRI_NOT_SUPPORTED(halQueueSubF2NFEvent)
MDLRI_NOT_SUPPORTED(halQueueSubscribe)
MDLRI_NOT_SUPPORTED(halQueueUnexport)
MDLRI_NOT_SUPPORTED(halQueueUnimport)

/* ---- IPC memory, shared ids, notifies, P2P and processes ---- */
MDLRI_NOT_SUPPORTED(drvBindHostPid)
MDLRI_NOT_SUPPORTED(drvCloseIpcNotify)
MDLRI_NOT_SUPPORTED(drvDestroyIpcNotify)
MDLRI_NOT_SUPPORTED(drvGetP2PStatus)
MDLRI_NOT_SUPPORTED(drvNotifyIdAddrOffset)
MDLRI_NOT_SUPPORTED(drvQueryProcessHostPid)
MDLRI_NOT_SUPPORTED(drvSetIpcNotifyPid)
MDLRI_NOT_SUPPORTED(drvUnbindHostPid)
MDLRI_NOT_SUPPORTED(halCentreNotifyGet)
MDLRI_NOT_SUPPORTED(halDeviceCanAccessPeer)
MDLRI_NOT_SUPPORTED(halDeviceDisableP2P)
MDLRI_NOT_SUPPORTED(halDeviceEnableP2P)
MDLRI_NOT_SUPPORTED(halDeviceEnableP2PNotify)
MDLRI_NOT_SUPPORTED(halGetNotifyEvent)
MDLRI_NOT_SUPPORTED(halGetPairDevicesInfo)
MDLRI_NOT_SUPPORTED(halGetPairPhyDevicesInfo)
MDLRI_NOT_SUPPORTED(halProcessResBackup)
MDLRI_NOT_SUPPORTED(halProcessResRestore)
MDLRI_NOT_SUPPORTED(halQueryDevpid)
MDLRI_NOT_SUPPORTED(halShmemCloseHandle)
MDLRI_NOT_SUPPORTED(halShmemCreateHandle)
MDLRI_NOT_SUPPORTED(halShmemDestroyHandle)
MDLRI_NOT_SUPPORTED(halShmemInfoGet)
MDLRI_NOT_SUPPORTED(halShmemMapRouteCheck)
MDLRI_NOT_SUPPORTED(halShmemOpenHandle)
MDLRI_NOT_SUPPORTED(halShmemOpenHandleByDevId)
MDLRI_NOT_SUPPORTED(halShmemOpenHandleV2)
MDLRI_NOT_SUPPORTED(halShmemSetAttribute)
MDLRI_NOT_SUPPORTED(halShmemSetPidHandle)
MDLRI_NOT_SUPPORTED(halShmemSetPodPid)
MDLRI_NOT_SUPPORTED(halShrIdClose)
MDLRI_NOT_SUPPORTED(halShrIdCreate)
MDLRI_NOT_SUPPORTED(halShrIdDestroy)
MDLRI_NOT_SUPPORTED(halShrIdOpen)
MDLRI_NOT_SUPPORTED(halShrIdSetAttribute)
MDLRI_NOT_SUPPORTED(halShrIdSetPid)
MDLRI_NOT_SUPPORTED(halShrIdSetPodPid)

/* ---- Memory beyond alloc/free/copy/attributes (virtual memory, handles, pools, managed memory, async copies) ---- */
MDLRI_NOT_SUPPORTED(drvLoadProgram)
MDLRI_NOT_SUPPORTED(drvMbindHbm)
MDLRI_NOT_SUPPORTED(drvMemConvertAddr)
MDLRI_NOT_SUPPORTED(drvMemDestroyAddr)
MDLRI_NOT_SUPPORTED(drvMemDeviceClose)
MDLRI_NOT_SUPPORTED(drvMemDeviceOpen)
MDLRI_NOT_SUPPORTED(drvMemPrefetchToDevice)
MDLRI_NOT_SUPPORTED(halAsyncDmaCreate)
MDLRI_NOT_SUPPORTED(halAsyncDmaCreate2D)
MDLRI_NOT_SUPPORTED(halAsyncDmaCreateBatch)
MDLRI_NOT_SUPPORTED(halAsyncDmaDestory)
MDLRI_NOT_SUPPORTED(halAsyncDmaDestroy2D)
MDLRI_NOT_SUPPORTED(halAsyncDmaDestroyBatch)
MDLRI_NOT_SUPPORTED(halAsyncDmaJettyCreate)
MDLRI_NOT_SUPPORTED(halAsyncDmaJettyDestroy)
MDLRI_NOT_SUPPORTED(halAsyncDmaJettyQuery)
MDLRI_NOT_SUPPORTED(halAsyncDmaJettyWqeFill)
MDLRI_NOT_SUPPORTED(halAsyncDmaWqeConvert)
MDLRI_NOT_SUPPORTED(halGetMemUsageInfo)
MDLRI_NOT_SUPPORTED(halGetTsegInfoByVa)
MDLRI_NOT_SUPPORTED(halHostRegisterCapabilities)
MDLRI_NOT_SUPPORTED(halMemAddressFree)
MDLRI_NOT_SUPPORTED(halMemAddressReserve)
MDLRI_NOT_SUPPORTED(halMemAdvise)
MDLRI_NOT_SUPPORTED(halMemCreate)
MDLRI_NOT_SUPPORTED(halMemDestroyAddrBatch)
MDLRI_NOT_SUPPORTED(halMemExportToShareableHandle)
MDLRI_NOT_SUPPORTED(halMemExportToShareableHandleV2)
MDLRI_NOT_SUPPORTED(halMemGetAccess)
MDLRI_NOT_SUPPORTED(halMemGetAddressRange)
MDLRI_NOT_SUPPORTED(halMemGetAllocationGranularity)
MDLRI_NOT_SUPPORTED(halMemGetAllocationPropertiesFromHandle)
MDLRI_NOT_SUPPORTED(halMemHandleGetAttribute)
MDLRI_NOT_SUPPORTED(halMemHandleSetAttribute)
MDLRI_NOT_SUPPORTED(halMemImportFromShareableHandle)
MDLRI_NOT_SUPPORTED(halMemImportFromShareableHandleV2)
MDLRI_NOT_SUPPORTED(halMemManagedAdvise)
MDLRI_NOT_SUPPORTED(halMemManagedPrefetch)
MDLRI_NOT_SUPPORTED(halMemManagedPrefetchBatch)
MDLRI_NOT_SUPPORTED(halMemManagedRangeGetAttributes)
MDLRI_NOT_SUPPORTED(halMemMap)
MDLRI_NOT_SUPPORTED(halMemMapNoAccess)
MDLRI_NOT_SUPPORTED(halMemPoolAsyncConfig)
MDLRI_NOT_SUPPORTED(halMemPoolCreate)
MDLRI_NOT_SUPPORTED(halMemPoolDestroy)
MDLRI_NOT_SUPPORTED(halMemPoolGetAttr)
MDLRI_NOT_SUPPORTED(halMemPoolSetAttr)
MDLRI_NOT_SUPPORTED(halMemPoolTrim)
MDLRI_NOT_SUPPORTED(halMemRelease)
MDLRI_NOT_SUPPORTED(halMemRetainAllocationHandle)
MDLRI_NOT_SUPPORTED(halMemSetAccess)
MDLRI_NOT_SUPPORTED(halMemSetPidToShareableHandle)
MDLRI_NOT_SUPPORTED(halMemShareHandleInfoGet)
MDLRI_NOT_SUPPORTED(halMemShareHandleSetAttribute)
MDLRI_NOT_SUPPORTED(halMemTransShareableHandle)
MDLRI_NOT_SUPPORTED(halMemUnmap)
MDLRI_NOT_SUPPORTED(halMemcpy2D)
MDLRI_NOT_SUPPORTED(halMemcpyBatch)
MDLRI_NOT_SUPPORTED(halMemcpySumbit)
MDLRI_NOT_SUPPORTED(halMemcpyWait)
MDLRI_NOT_SUPPORTED(halPutTsegInfo)
MDLRI_NOT_SUPPORTED(halSdmaCopy)
MDLRI_NOT_SUPPORTED(halSetMemSharing)
MDLRI_NOT_SUPPORTED(halUpdateAddress)

/* ---- SQ/CQ, resources and TS control beyond the TS core ---- */
MDLRI_NOT_SUPPORTED(halCqReportGet)
MDLRI_NOT_SUPPORTED(halCqReportIrqWait)
MDLRI_NOT_SUPPORTED(halReportRelease)
MDLRI_NOT_SUPPORTED(halResAddrMap)
MDLRI_NOT_SUPPORTED(halResAddrUnmap)
MDLRI_NOT_SUPPORTED(halResMap)
MDLRI_NOT_SUPPORTED(halResourceDetailQuery)
MDLRI_NOT_SUPPORTED(halSqMemGet)
MDLRI_NOT_SUPPORTED(halSqMsgSend)
MDLRI_NOT_SUPPORTED(halSqTaskArgsAsyncCopy)
MDLRI_NOT_SUPPORTED(halStreamBackup)
MDLRI_NOT_SUPPORTED(halStreamRestore)

/* ---- Device, fault, HDC and other queries ---- */
MDLRI_NOT_SUPPORTED(drvCustomCall)
MDLRI_NOT_SUPPORTED(drvHdcServerCreate)
MDLRI_NOT_SUPPORTED(drvHdcServerDestroy)
MDLRI_NOT_SUPPORTED(drvHdcSessionClose)
MDLRI_NOT_SUPPORTED(drvHdcSessionConnect)
MDLRI_NOT_SUPPORTED(halGetCapabilityGroupInfo)
MDLRI_NOT_SUPPORTED(halGetChipFromDevice)
MDLRI_NOT_SUPPORTED(halGetChipInfo)
MDLRI_NOT_SUPPORTED(halGetDeviceInfoByBuff)
MDLRI_NOT_SUPPORTED(halGetHostID)
MDLRI_NOT_SUPPORTED(halGetSocVersion)
MDLRI_NOT_SUPPORTED(halParseSDID)
MDLRI_NOT_SUPPORTED(halReadFaultEvent)
MDLRI_NOT_SUPPORTED(halRepairFault)
MDLRI_NOT_SUPPORTED(halSetDeviceInfoByBuff)

/* ---- entry points whose result is not a driver code ---- */

/* void: nothing to show, flush or give back on this device */
MDLRI_HAL_API void drvDfxShowReport(uint32_t devId);
void drvDfxShowReport(uint32_t devId) { (void)devId; }
MDLRI_HAL_API void drvFlushCache(uint64_t base, uint32_t len);
void drvFlushCache(uint64_t base, uint32_t len) { (void)base; (void)len; } /* one coherent memory */
MDLRI_HAL_API void halBuffPut(void *mbuf, void *buff);
void halBuffPut(void *mbuf, void *buff) { (void)mbuf; (void)buff; }
MDLRI_HAL_API void halSetRuntimeApiVer(int version);
void halSetRuntimeApiVer(int version) { (void)version; }

/* 0: below RES_DBG_ADDR, so the runtime maps no debug resource (printf.cc:1015-1027) */
MDLRI_HAL_API unsigned int halGetMaxResMapType(void);
unsigned int halGetMaxResMapType(void) { return 0u; }

/* -1: no NUMA node for this thread (uvm_callback.cc:135-139 answers RT_ERROR_DRV_ERR) */
MDLRI_HAL_API int halGetCurrentThreadNumaNode(void);
int halGetCurrentThreadNumaNode(void) { return -1; }

/* a module name for the runtime's log lines (npu_driver_base.hpp:341-342 builds a
 * std::string from it, so never NULL) */
MDLRI_HAL_API char *halGetMemModuleName(uint32_t module_id);
char *halGetMemModuleName(uint32_t module_id) {
    static char name[] = "mdlri";
    (void)module_id;
    return name;
}
