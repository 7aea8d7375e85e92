/* attributes.c -- the launch attributes of aclrtLaunchKernelWithHostArgs' cfg (and of
 * SetParams' kernelTaskParams.cfg) and aclmdlRIKernelTaskGetAttribute (semantics.md §10 ATTR).
 * Attributes have no effect on execution on the host; they are recorded with the task. */
#include "emu.h"

/* ATTR-03: what a kernel launched without a timeout attribute reports (seconds) */
#define EMU_DEFAULT_OP_TIMEOUT_S 1800u

aclError emu_cfg_parse(const aclrtLaunchKernelCfg *cfg, emu_attrs *out, const char *fn) {
    emu_attrs a;
    memset(&a, 0, sizeof a);
    if (cfg && cfg->numAttrs && !cfg->attrs)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: cfg->attrs is NULL with numAttrs %zu",
                       fn, cfg->numAttrs);
    for (size_t i = 0; cfg && i < cfg->numAttrs; i++) {
        const aclrtLaunchKernelAttr *x = &cfg->attrs[i];
        switch ((int)x->id) {
        case ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE:
            a.has_schem = 1;
            a.schem_mode = x->value.schemMode;
            break;
        case ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE: a.dyn_ubuf = x->value.dynUBufSize; break;
        case ACL_RT_LAUNCH_KERNEL_ATTR_ENGINE_TYPE: a.engine_type = x->value.engineType; break;
        case ACL_RT_LAUNCH_KERNEL_ATTR_BLOCKDIM_OFFSET:
            a.blockdim_offset = x->value.blockDimOffset;
            break;
        case ACL_RT_LAUNCH_KERNEL_ATTR_BLOCK_TASK_PREFETCH:
            a.prefetch = x->value.isBlockTaskPrefetch;
            break;
        case ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP:
            a.has_dump = 1;
            a.data_dump = x->value.isDataDump;
            break;
        case ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT:
        case ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US: {
            int kind = x->id == ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT ? 1 : 2;
            if (a.timeout_kind && a.timeout_kind != kind)
                return emu_err(ACL_ERROR_RT_PARAM_INVALID,
                               "%s: TIMEOUT and TIMEOUT_US cannot be combined", fn);
            a.timeout_kind = kind;
            a.timeout_us = kind == 1 ? (uint64_t)x->value.timeout * 1000000u
                                     : ((uint64_t)x->value.timeoutUs.timeoutHigh << 32) |
                                           x->value.timeoutUs.timeoutLow;
            break;
        }
        case ACL_RT_LAUNCH_KERNEL_ATTR_ENABLE_PROFILING:
            a.profiling = x->value.enableProfiling;
            break;
        default:
            return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: unknown launch attribute id %u", fn,
                           (unsigned)x->id);
        }
    }
    *out = a;
    return ACL_SUCCESS;
}

/* The kernel-launch cfg checks of the runtime's error decorator (RT-36, CheckKernelLaunchCfg,
 * api_error.cc:950-1044), after the per-attribute parse: a cfg whose attrs is NULL, SCHEM_MODE
 * 2 or more, BLOCK_TASK_PREFETCH or DATA_DUMP other than 0 or 1, ENABLE_PROFILING above 1. */
aclError emu_launch_cfg_check(const aclrtLaunchKernelCfg *cfg, const emu_attrs *a,
                              const char *fn) {
    if (!cfg) return ACL_SUCCESS;
    if (!cfg->attrs) return emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: cfg->attrs is NULL", fn);
    if (a->schem_mode >= 2 || a->prefetch > 1 || a->data_dump > 1 || a->profiling > 1)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID,
                       "%s: launch attribute value out of range (schem %u, prefetch %u, dump %u, "
                       "profiling %u)", fn, a->schem_mode, a->prefetch, a->data_dump, a->profiling);
    return ACL_SUCCESS;
}

MDLRI_API aclError aclmdlRIKernelTaskGetAttribute(aclmdlRITask task,
                                                  aclrtLaunchKernelAttrId attrId,
                                                  aclrtLaunchKernelAttrValue *attrValue) {
    static const char fn[] = "aclmdlRIKernelTaskGetAttribute";
    if (!task || !attrValue) /* ATTR-05: the ACL layer checks these */
        return emu_err(ACL_ERROR_INVALID_PARAM, "%s: task or attrValue is NULL", fn);
    NEED_CTX();
    LOCK();
    aclError rc = ACL_SUCCESS;
    emu_task *t = task;
    if (!emu_valid(task, MAGIC_TASK)) {
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid or stale task %p", fn, task);
        goto out;
    }
    if (t->host.op != OP_KERNEL) { /* ATTR-01 */
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: task %p is not a kernel task", fn, task);
        goto out;
    }
    const emu_attrs *a = &t->host.attrs; /* ATTR-06: SetParams is visible at once */
    uint64_t us = a->timeout_kind ? a->timeout_us : (uint64_t)EMU_DEFAULT_OP_TIMEOUT_S * 1000000u;
    aclrtLaunchKernelAttrValue v;
    memset(&v, 0, sizeof v);
    switch ((int)attrId) {
    case ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE: v.schemMode = a->schem_mode; break; /* ATTR-04 */
    case ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE: v.dynUBufSize = a->dyn_ubuf; break;
    case ACL_RT_LAUNCH_KERNEL_ATTR_DATA_DUMP: v.isDataDump = a->data_dump; break;
    case ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT: { /* ATTR-03: seconds, rounded up */
        uint64_t s = (us + 999999u) / 1000000u;
        v.timeout = (uint16_t)(s > 0xFFFF ? 0xFFFF : s);
        break;
    }
    case ACL_RT_LAUNCH_KERNEL_ATTR_TIMEOUT_US:
        v.timeoutUs.timeoutLow = (uint32_t)us;
        v.timeoutUs.timeoutHigh = (uint32_t)(us >> 32);
        break;
    default: /* ATTR-02: ENGINE_TYPE, BLOCKDIM_OFFSET, BLOCK_TASK_PREFETCH, others */
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID, "%s: attribute %u cannot be queried", fn,
                     (unsigned)attrId);
        goto out;
    }
    *attrValue = v;
out:
    UNLOCK();
    return rc;
}
