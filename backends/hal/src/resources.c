/*
 * resources.c -- the TS's id resources: stream, event, model, notify and CMO ids
 * (halResourceIdAlloc / halResourceIdFree / halResourceInfoQuery, README "HAL symbols").
 * A fresh event or notify id starts unset. The runtime may ask for a given id
 * (res[1] & TSDRV_RES_SPECIFIED_ID, npu_driver_res.cc:1215-1240) and then checks that it got
 * that id.
 */
#include <stdlib.h>
#include <string.h>

#include "ts.h"

/* capacities per drvIdType_t; 0: not an id this device hands out */
static const uint32_t CAPACITY[DRV_INVALID_ID] = {
    [DRV_STREAM_ID] = 2048u,         [DRV_EVENT_ID] = TS_MAX_EVENT,
    [DRV_MODEL_ID] = 1024u,          [DRV_NOTIFY_ID] = TS_MAX_NOTIFY,
    [DRV_CMO_ID] = 1024u,
};

static uint8_t *g_used[DRV_INVALID_ID]; /* under g_ts.mu */
static uint32_t g_count[DRV_INVALID_ID];

static uint8_t *table(drvIdType_t type) {
    if (g_used[type] == NULL) g_used[type] = calloc(CAPACITY[type], 1);
    return g_used[type];
}

static int valid(drvIdType_t type) {
    return (unsigned)type < DRV_INVALID_ID && CAPACITY[type] != 0;
}

drvError_t halResourceIdAlloc(uint32_t devId, struct halResourceIdInputInfo *in,
                              struct halResourceIdOutputInfo *out) {
    if (!mdlri_hal_dev_valid(devId) || in == NULL || out == NULL) return DRV_ERROR_INVALID_VALUE;
    if (!valid(in->type)) return DRV_ERROR_NOT_SUPPORT;
    drvError_t rc = DRV_ERROR_NONE;
    pthread_mutex_lock(&g_ts.mu);
    uint8_t *used = table(in->type);
    uint32_t cap = CAPACITY[in->type], id = 0;
    if (used == NULL) {
        rc = DRV_ERROR_NO_RESOURCES;
    } else if (in->res[1] & TSDRV_RES_SPECIFIED_ID) {
        id = in->resourceId;
        if (id >= cap || used[id]) rc = DRV_ERROR_NO_RESOURCES;
    } else {
        while (id < cap && used[id]) id++;
        if (id >= cap) rc = DRV_ERROR_NO_RESOURCES;
    }
    if (rc != DRV_ERROR_NONE) mdlri_hal_trace("no free id of type", in->type, (long)cap);
    if (rc == DRV_ERROR_NONE) {
        used[id] = 1;
        g_count[in->type]++;
        if (in->type == DRV_EVENT_ID) g_ts.event[id] = 0;
        if (in->type == DRV_NOTIFY_ID) {
            g_ts.notify[id] = 0;
            g_ts.notify_status[id] = 0;
            g_ts.notify_extra[id] = 0;
        }
        out->resourceId = id;
    }
    pthread_mutex_unlock(&g_ts.mu);
    return rc;
}

drvError_t halResourceIdFree(uint32_t devId, struct halResourceIdInputInfo *in) {
    if (!mdlri_hal_dev_valid(devId) || in == NULL) return DRV_ERROR_INVALID_VALUE;
    if (!valid(in->type)) return DRV_ERROR_NOT_SUPPORT;
    drvError_t rc = DRV_ERROR_NONE;
    pthread_mutex_lock(&g_ts.mu);
    uint8_t *used = g_used[in->type];
    if (used == NULL || in->resourceId >= CAPACITY[in->type] || !used[in->resourceId]) {
        rc = DRV_ERROR_INVALID_VALUE;
    } else {
        used[in->resourceId] = 0;
        g_count[in->type]--;
    }
    pthread_mutex_unlock(&g_ts.mu);
    return rc;
}

drvError_t halResourceInfoQuery(uint32_t devId, uint32_t tsId, drvResourceType_t type,
                                struct halResourceInfo *info) {
    if (!mdlri_hal_dev_valid(devId) || tsId != 0 || info == NULL) return DRV_ERROR_INVALID_VALUE;
    memset(info, 0, sizeof *info);
    pthread_mutex_lock(&g_ts.mu);
    drvError_t rc = DRV_ERROR_NONE;
    switch (type) {
    case DRV_RESOURCE_STREAM_ID:
    case DRV_RESOURCE_EVENT_ID:
    case DRV_RESOURCE_MODEL_ID:
    case DRV_RESOURCE_NOTIFY_ID:
    case DRV_RESOURCE_CMO_ID: /* the first five have the same order in both enums */
        info->capacity = CAPACITY[type];
        info->usedNum = g_count[type];
        break;
    case DRV_RESOURCE_SQ_ID:
    case DRV_RESOURCE_CQ_ID: {
        uint32_t used = 0;
        if (type == DRV_RESOURCE_SQ_ID)
            for (uint32_t i = 0; i < TS_MAX_SQ; i++) used += (uint32_t)g_ts.sq[i].used;
        else
            for (uint32_t i = 0; i < TS_MAX_CQ; i++) used += (uint32_t)g_ts.cq[i].used;
        info->capacity = type == DRV_RESOURCE_SQ_ID ? TS_MAX_SQ : TS_MAX_CQ;
        info->usedNum = used;
        break;
    }
    default:
        rc = DRV_ERROR_NOT_SUPPORT;
    }
    pthread_mutex_unlock(&g_ts.mu);
    return rc;
}

void ts_resources_reset(void) { /* lock held */
    for (int t = 0; t < DRV_INVALID_ID; t++) {
        free(g_used[t]);
        g_used[t] = NULL;
        g_count[t] = 0;
    }
}

/* halResourceConfig (ascend_hal_define.h:1149-1161; npu_driver_res.cc:521-540, 948-1020,
 * npu_driver_standard_soc.cc:304-320): bind / unbind a stream's reports to a logic CQ
 * (value[0] = the logic CQ id), record a notify from the host, reset every id of a type
 * (resourceId all-ones) or one id, enable events on a stream (nothing to do here). */
drvError_t halResourceConfig(uint32_t devId, struct halResourceIdInputInfo *in,
                             struct halResourceConfigInfo *cfg) {
    if (!mdlri_hal_dev_valid(devId) || in == NULL || cfg == NULL) return DRV_ERROR_INVALID_VALUE;
    switch (cfg->prop) {
    case DRV_STREAM_BIND_LOGIC_CQ:
    case DRV_STREAM_UNBIND_LOGIC_CQ:
        if (in->type != DRV_STREAM_ID) return DRV_ERROR_INVALID_VALUE;
        return mdlri_hal_stream_bind_cq(in->resourceId, cfg->value[0],
                                        cfg->prop == DRV_STREAM_BIND_LOGIC_CQ);
    case DRV_STREAM_ENABLE_EVENT:
        return in->type == DRV_STREAM_ID ? DRV_ERROR_NONE : DRV_ERROR_INVALID_VALUE;
    case DRV_ID_RECORD:
    case DRV_ID_RESET: {
        uint8_t *flags = in->type == DRV_EVENT_ID ? g_ts.event
                            : in->type == DRV_NOTIFY_ID ? g_ts.notify : NULL;
        uint32_t cap = in->type == DRV_EVENT_ID ? TS_MAX_EVENT : TS_MAX_NOTIFY;
        if (flags == NULL) return DRV_ERROR_NOT_SUPPORT;
        uint8_t value = cfg->prop == DRV_ID_RECORD;
        pthread_mutex_lock(&g_ts.mu);
        drvError_t rc = DRV_ERROR_NONE;
        if (in->resourceId == MDLRI_SQCQ_UMAX && !value) {
            for (uint32_t i = 0; i < cap; i++) flags[i] = 0;
        } else if (in->resourceId < cap) {
            flags[in->resourceId] = value;
        } else {
            rc = DRV_ERROR_INVALID_VALUE;
        }
        pthread_cond_broadcast(&g_ts.cv);
        pthread_mutex_unlock(&g_ts.mu);
        return rc;
    }
    default:
        return DRV_ERROR_NOT_SUPPORT;
    }
}
