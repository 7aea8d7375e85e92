/*
 * ts_caps.c -- the TS firmware's capability block (README "TS feature bits").
 *
 * The runtime hands the TS a ring buffer with a PLACE_HOLDER SQE of task_type 83
 * (TS_TASK_TYPE_DEVICE_RINGBUFFER_CONTROL, ringbuffer_maintain_task_v100.cc:22-61: u64 @16
 * ringbuffer_offset, the drvMemAddressTranslate answer, which is the address itself here;
 * u32 @40 total_len, an element count (RINGBUFFER_LEN 10, device_error_info.hpp:46), not the
 * size; u8 @44 del_flag; RtRingBufferControl in stars_sqe.hpp:222-229). The SQE does not
 * carry the buffer's size (ringBufferSize_, DEVICE_RINGBUFFER_SIZE 2 MiB by default,
 * device_properties.h:31): this TS takes the size of the device allocation that starts at
 * the address (a firmware would know it by convention). Once the SQE completes (the runtime
 * synchronizes, device_error_proc.cc:478-482), the runtime reads a TschCapability block
 * (capability.hpp:139-162) at ring buffer + size - (RTS_TIMEOUT_STREAM_SNAPSHOT_LEN 17 KiB + TSCH_CAPABILITY_LEN
 * 10 KiB) (DeviceErrorProc::GetTschCapability, device_error_proc.cc:235-283): header magic
 * 0xA55A2022, head, tail, depth = sizeof capability; feature f is bit f % 8 of byte f / 8
 * (RawDevice::CheckTschCapability, raw_device.cc:2182-2191). A block with head == tail or a
 * wrong magic means "no capability block": the runtime then decides by the TS version
 * (raw_device.cc:2177-2179). With MDLRI_HAL_FEATURES=on this TS writes the block.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ts.h"

#define CAPA_MAGIC 0xA55A2022u
#define CAPA_SNAPSHOT_LEN (1024u * 17u)
#define CAPA_TSCH_LEN 10240u
#define CAPA_HEADER_LEN 32u

/* the TS feature bits set with MDLRI_HAL_FEATURES=on: every TS_FEATURE_* of
 * capability.hpp:57-108 (0..51), among them SOFTWARE_SQ_ENABLE (45: the runtime captures into
 * its own SQ memory and hands it over at execute, hal_swsq.c), ACLGRAPH_COND_OP (51, which
 * needs 45) and OP_EXEC_TIMEOUT_MS (44: aclrtSetDevice then asks the TS its op-exec timeout
 * interval, hal_tsctl.c); unless MDLRI_HAL_TS_FEATURES lists bit numbers ("0,1,45"); returns
 * the number of bytes used */
static uint32_t feature_bytes(uint8_t *out, uint32_t cap) {
    memset(out, 0, cap);
    const char *list = getenv("MDLRI_HAL_TS_FEATURES");
    uint32_t used = 0;
    if (list == NULL || *list == '\0') {
        for (uint32_t f = 0; f <= TS_FEATURE_LAST; f++) out[f / 8] |= (uint8_t)(1u << (f % 8));
        return TS_FEATURE_LAST / 8 + 1;
    }
    const char *p = list;
    while (*p != '\0') {
        char *end;
        unsigned long f = strtoul(p, &end, 10);
        if (end == p) break;
        if (f / 8 < cap) {
            out[f / 8] |= (uint8_t)(1u << (f % 8));
            if (f / 8 + 1 > used) used = (uint32_t)(f / 8 + 1);
        }
        p = *end == ',' ? end + 1 : end;
    }
    return used == 0 ? 1 : used; /* an empty list: a block that says "nothing" */
}

/* ---- the error ring buffer at the start of the same block ----
 *
 * The TS reports what went wrong with a failed task in the ring buffer's elements: a control
 * header (DevRingBufferCtlInfo, device_error_info.hpp:212-220: u32 magic 0xA55A2020, head,
 * tail, ringBufferLen; u64 pid; u32 elementSize; 32 bytes), then ringBufferLen elements of
 * RINGBUFFER_EXT_ONE_ELEMENT_LENGTH (12288, :45) bytes from +32 (GetRingBufferElement,
 * device_error_proc.cc:1640-1648), each a RingBufferElementInfo (:202-209: u64 pid, u32
 * infoLen, u32 errorType, u64 errorNumber, u16 vfId, 6 reserved) and its payload. On an
 * exception CQE the runtime copies the buffer until tail != head, for up to 12 s, twice, unless
 * an element names the failed task (its handler sets isRingbufferGet,
 * device_error_proc.cc:638-744): without one every error stalled its stream's recycling for
 * seconds. */
#define ERR_RING_MAGIC 0xA55A2020u
#define ERR_RING_LEN 10u
#define ERR_RING_ELEMENT 12288u
#define ERR_RING_HEADER 32u
#define ERR_RING_BYTES (ERR_RING_HEADER + ERR_RING_LEN * ERR_RING_ELEMENT)
/* rtErrorType (device_error_info.hpp:55-75) */
#define ERR_SQE_ERROR 9u
#define ERR_WAIT_TIMEOUT 10u
#define ERR_AICORE_TIMEOUT_DFX 14u

static uint64_t g_err_ring;      /* under g_ts.mu; 0: none handed over */
static uint64_t g_err_serial;

static void err_ring_open(uint64_t base) {
    g_err_ring = 0;
    if (mdlri_hal_mem_block_size(base) < ERR_RING_BYTES) return;
    uint8_t *b = (uint8_t *)(uintptr_t)base;
    uint32_t ctl[4] = {ERR_RING_MAGIC, 0u, 0u, ERR_RING_LEN};
    uint64_t pid = (uint64_t)getpid();
    uint32_t size[2] = {ERR_RING_ELEMENT, 0u};
    memcpy(b, ctl, sizeof ctl);
    memcpy(b + 16, &pid, sizeof pid);
    memcpy(b + 24, size, sizeof size);
    g_err_ring = base;
}

void ts_error_ring_reset(void) { g_err_ring = 0; }

int ts_feature_on(unsigned f) {
    if (!mdlri_hal_features_on()) return 0;
    uint8_t bits[CAPA_TSCH_LEN - CAPA_HEADER_LEN];
    uint32_t used = feature_bytes(bits, sizeof bits);
    return f / 8 < used && (bits[f / 8] >> (f % 8) & 1u);
}

void ts_error_ring_put(const uint8_t *sqe, uint32_t sq_id, uint32_t sq_head) {
    if (g_err_ring == 0 || mdlri_hal_mem_block_size(g_err_ring) < ERR_RING_BYTES)
        return; /* none, or freed without its delete task */
    uint8_t *b = (uint8_t *)(uintptr_t)g_err_ring;
    uint32_t head, tail;
    memcpy(&head, b + 4, 4);
    memcpy(&tail, b + 8, 4);
    if (head >= ERR_RING_LEN || tail >= ERR_RING_LEN || (tail + 1u) % ERR_RING_LEN == head)
        return; /* the runtime has not read the last ones: full */
    uint8_t *e = b + ERR_RING_HEADER + (size_t)tail * ERR_RING_ELEMENT;
    memset(e, 0, ERR_RING_ELEMENT);
    uint16_t stream = sqe_stream_id(sqe), task = sqe_task_id(sqe);
    uint32_t type;
    uint8_t *pl = e + 32;
    switch (sqe_type(sqe)) {
    case SQE_FFTS:
        /* StarsCoreTimeoutDfxInfo.comm (device_error_inner_data.hpp:67-77, 363-367): u16
         * streamId @16, taskId @18, slotNum 0 (ProcessStarsCoreTimeoutDfxInfo,
         * device_error_core_proc.cc:1302-1320). An AI Core exception gets this element too:
         * the AICORE_ERROR element and its ext are not written yet; the code the sync
         * returns comes from the CQE either way */
        type = ERR_AICORE_TIMEOUT_DFX;
        memcpy(pl + 16, &stream, 2);
        memcpy(pl + 18, &task, 2);
        break;
    case SQE_EVENT_WAIT: case SQE_NOTIFY_WAIT: {
        /* StarsTimeoutErrorInfo (:428-440): u8 waitType (the SQE type), u16 streamId @2,
         * sqId @4, taskId @6 (ProcessStarsWaitTimeoutErrorInfo, device_error_proc.cc:1160-1200) */
        type = ERR_WAIT_TIMEOUT;
        uint16_t sq = (uint16_t)sq_id;
        pl[0] = (uint8_t)sqe_type(sqe);
        memcpy(pl + 2, &stream, 2);
        memcpy(pl + 4, &sq, 2);
        memcpy(pl + 6, &task, 2);
        break;
    }
    default: {
        /* StarsSqeErrorInfo (:385-393): u16 streamId, sqId, sqHead, taskId, ..., then the SQE
         * at +16 (ProcessStarsSqeErrorInfo, device_error_proc.cc:1509-1530) */
        type = ERR_SQE_ERROR;
        uint16_t v[4] = {stream, (uint16_t)sq_id, (uint16_t)sq_head, task};
        memcpy(pl, v, sizeof v);
        memcpy(pl + 16, sqe, MDLRI_HAL_SQE_SIZE);
        break;
    }
    }
    uint64_t pid = (uint64_t)getpid(), serial = ++g_err_serial;
    uint32_t len = ERR_RING_ELEMENT - 32u;
    memcpy(e, &pid, 8);
    memcpy(e + 8, &len, 4);
    memcpy(e + 12, &type, 4);
    memcpy(e + 16, &serial, 8);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    tail = (tail + 1u) % ERR_RING_LEN;
    memcpy(b + 8, &tail, 4);
}

int ts_caps_ringbuffer(const uint8_t *s) {
    uint64_t base = sqe_u64(s, 16);
    uint8_t del = sqe_u8(s, 44);
    if (del != 0) { /* the delete task names no address (ringbuffer_offset 0) */
        g_err_ring = 0;
        return 0;
    }
    err_ring_open(base);
    if (!mdlri_hal_features_on()) return 0;
    size_t total = mdlri_hal_mem_block_size(base);
    if (total <= CAPA_SNAPSHOT_LEN + CAPA_TSCH_LEN) return -1;
    uint8_t *blk = (uint8_t *)(uintptr_t)(base + total - CAPA_SNAPSHOT_LEN - CAPA_TSCH_LEN);
    uint32_t depth = CAPA_TSCH_LEN - CAPA_HEADER_LEN;
    uint32_t used = feature_bytes(blk + CAPA_HEADER_LEN, depth);
    uint32_t hdr[8] = {CAPA_MAGIC, 0u, used, depth, 0u, 0u, 0u, 0u};
    memcpy(blk, hdr, sizeof hdr);
    return 0;
}
