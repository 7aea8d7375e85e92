/*
 * hal_tsctl.c -- halTsdrvCtl, the driver's control channel to the TS firmware
 * (pkg_inc/driver/ascend_hal_base.h:4325; ../README.md, "TS control messages").
 *
 * The runtime sends a TS control message as cmd TSDRV_CTL_CMD_CTRL_MSG (4,
 * ascend_hal_define.h:1477-1484) with a `struct tsdrv_ctrl_msg` {u32 tsid; u32 msg_len; void
 * *msg} (:1471-1475) whose msg is a packed ts_ctrl_msg_body_t (44 bytes: u32 type, then a
 * 40-byte union; src/runtime/core/inc/runtime_tsch_defines.h:471-643); the TS's answer is
 * the same body in `out`, *outSize its size.
 *
 * Answered: OP_QUERY_OP_EXEC_TIMEOUT_INTERVAL (11), which aclrtSetDevice sends when the TS
 * reports TS_FEATURE_OP_EXEC_TIMEOUT_MS (44) and the chip has
 * RT_FEATURE_TASK_EXEC_TIMEOUT_SCALE_MODIFY (Runtime::InitOpExecTimeout, runtime.cc:3031-3068,
 * from raw_device.cc:1161; NpuDriver::QueryOpExecTimeoutInterval, npu_driver_res.cc:659-685):
 * the ack carries the kernel-credit interval in ns as u32 @4 timeout_interval_h, u32 @8
 * timeout_interval_l. A failed query fails aclrtSetDevice (raw_device.cc:1161-1163). This TS
 * answers its own credit scale, 2^32 ns a credit (MDLRI_KERNEL_CREDIT_MS, the
 * RT_STARS_TASK_KERNEL_CREDIT_SCALE_US the runtime assumes without bit 44): 4294967.296 us is
 * above RT_STARS_OP_TIMEOUT_THRESHOLD (100000 us, runtime.hpp:94), so the runtime keeps
 * second-scale kernel timeouts (isOpTimeoutMs false), as this device counts them.
 * Every other command or message type: DRV_ERROR_NOT_SUPPORT, as before.
 */
#include <string.h>

#include "ts.h"

#define TSDRV_CTL_CMD_CTRL_MSG 4
#define TS_CTRL_OP_QUERY_OP_EXEC_TIMEOUT_INTERVAL 11u
#define TS_CTRL_MSG_BODY_LEN 44u
#define TS_CREDIT_INTERVAL_NS 4294967296ull /* 2^32 ns: MDLRI_KERNEL_CREDIT_MS x 1e6 */

struct tsdrv_ctrl_msg {
    unsigned int tsid;
    unsigned int msg_len;
    void *msg;
};

MDLRI_HAL_API drvError_t halTsdrvCtl(uint32_t devId, int cmd, void *param, size_t paramSize,
                                     void *out, size_t *outSize);

drvError_t halTsdrvCtl(uint32_t devId, int cmd, void *param, size_t paramSize, void *out,
                       size_t *outSize) {
    if (!mdlri_hal_dev_valid(devId)) return DRV_ERROR_INVALID_DEVICE;
    const struct tsdrv_ctrl_msg *m = param;
    uint32_t type = UINT32_MAX;
    if (cmd == TSDRV_CTL_CMD_CTRL_MSG && m != NULL && paramSize >= sizeof *m && m->msg != NULL &&
        m->msg_len >= sizeof type)
        memcpy(&type, m->msg, sizeof type);
    if (type != TS_CTRL_OP_QUERY_OP_EXEC_TIMEOUT_INTERVAL) {
        mdlri_hal_trace("not supported: halTsdrvCtl", cmd, (long)type);
        return DRV_ERROR_NOT_SUPPORT;
    }
    if (out == NULL || outSize == NULL || *outSize < TS_CTRL_MSG_BODY_LEN)
        return DRV_ERROR_INVALID_VALUE;
    uint8_t ack[TS_CTRL_MSG_BODY_LEN] = {0};
    uint32_t hi = (uint32_t)(TS_CREDIT_INTERVAL_NS >> 32), lo = (uint32_t)TS_CREDIT_INTERVAL_NS;
    memcpy(ack, &type, 4);
    memcpy(ack + 4, &hi, 4);
    memcpy(ack + 8, &lo, 4);
    memcpy(out, ack, sizeof ack);
    *outSize = sizeof ack;
    return DRV_ERROR_NONE;
}
