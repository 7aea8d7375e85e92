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

int ts_caps_ringbuffer(const uint8_t *s) {
    uint64_t base = sqe_u64(s, 16);
    uint8_t del = sqe_u8(s, 44);
    if (del != 0 || !mdlri_hal_features_on()) return 0;
    size_t total = mdlri_hal_mem_block_size(base);
    if (total <= CAPA_SNAPSHOT_LEN + CAPA_TSCH_LEN) return -1;
    uint8_t *blk = (uint8_t *)(uintptr_t)(base + total - CAPA_SNAPSHOT_LEN - CAPA_TSCH_LEN);
    uint32_t depth = CAPA_TSCH_LEN - CAPA_HEADER_LEN;
    uint32_t used = feature_bytes(blk + CAPA_HEADER_LEN, depth);
    uint32_t hdr[8] = {CAPA_MAGIC, 0u, used, depth, 0u, 0u, 0u, 0u};
    memcpy(blk, hdr, sizeof hdr);
    return 0;
}
