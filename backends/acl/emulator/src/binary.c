/* binary.c -- kernel binaries: a binary is a host shared object built from kernel/host/,
 * opened with dlopen(); a function is a dlsym()'d `void NAME(void *args, size_t args_size,
 * uint32_t block_idx, uint32_t num_blocks)` (kernel/host/mdlri_host_kernel.h). */
#include <dlfcn.h>

#include "emu.h"

MDLRI_API aclError aclrtBinaryLoadFromFile(const char *binPath, aclrtBinaryLoadOptions *options,
                                           aclrtBinHandle *binHandle) {
    (void)options;
    if (!binPath || !binHandle)
        return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtBinaryLoadFromFile: NULL argument");
    NEED_CTX();
    /* never dlclose()d: a captured model may still point at its functions (kept open for the
     * process lifetime, like the graveyard of destroyed handles) */
    void *dl = dlopen(binPath, RTLD_NOW | RTLD_LOCAL);
    if (!dl)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID, "aclrtBinaryLoadFromFile: cannot load %s: %s",
                       binPath, dlerror());
    emu_bin *b = calloc(1, sizeof *b);
    b->magic = MAGIC_BINH;
    b->dl = dl;
    *binHandle = b;
    return ACL_SUCCESS;
}

MDLRI_API aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle, const char *kernelName,
                                          aclrtFuncHandle *funcHandle) {
    if (!binHandle || !kernelName || !funcHandle)
        return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtBinaryGetFunction: NULL argument");
    NEED_CTX();
    LOCK();
    aclError rc = ACL_SUCCESS;
    emu_bin *b = binHandle;
    if (!emu_valid(b, MAGIC_BINH)) {
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE,
                     "aclrtBinaryGetFunction: invalid or unloaded binary %p", binHandle);
        goto out;
    }
    for (size_t i = 0; i < b->nfuncs; i++)
        if (strcmp(b->funcs[i]->name, kernelName) == 0) {
            *funcHandle = b->funcs[i];
            goto out;
        }
    dlerror();
    void *sym = dlsym(b->dl, kernelName);
    if (!sym || strlen(kernelName) >= sizeof(((emu_func *)0)->name)) {
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID,
                     "aclrtBinaryGetFunction: no kernel named '%s' in the binary", kernelName);
        goto out;
    }
    emu_func *f = calloc(1, sizeof *f);
    f->magic = MAGIC_FUNC;
    f->bin = b;
    *(void **)&f->fn = sym;
    char ready[160];
    snprintf(ready, sizeof ready, "%s__ready", kernelName);
    void *rsym = dlsym(b->dl, ready); /* a waiting kernel's readiness predicate (optional) */
    if (rsym) *(void **)&f->ready = rsym;
    snprintf(ready, sizeof ready, "%s__fault", kernelName);
    void *fsym = dlsym(b->dl, ready); /* a trapping kernel's fault predicate (optional) */
    if (fsym) *(void **)&f->fault = fsym;
    strcpy(f->name, kernelName);
    EMU_PUSH(b->funcs, b->nfuncs, b->capfuncs, f);
    *funcHandle = f;
out:
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclrtBinaryUnLoad(aclrtBinHandle binHandle) {
    if (!binHandle) return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtBinaryUnLoad: NULL handle");
    NEED_CTX();
    LOCK();
    aclError rc = ACL_SUCCESS;
    emu_bin *b = binHandle;
    if (!emu_valid(b, MAGIC_BINH)) {
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE, "aclrtBinaryUnLoad: invalid binary %p",
                     binHandle);
    } else {
        b->magic = 0;
        for (size_t i = 0; i < b->nfuncs; i++) b->funcs[i]->magic = 0; /* stale -> 107017 */
    }
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclrtLaunchKernelWithHostArgs(aclrtFuncHandle funcHandle, uint32_t numBlocks,
                                                 aclrtStream stream, aclrtLaunchKernelCfg *cfg,
                                                 void *hostArgs, size_t argsSize,
                                                 aclrtPlaceHolderInfo *placeHolderArray,
                                                 size_t placeHolderNum) {
    if (!funcHandle || !hostArgs)
        return emu_err(ACL_ERROR_INVALID_PARAM,
                       "aclrtLaunchKernelWithHostArgs: funcHandle or hostArgs is NULL");
    if (placeHolderNum && !placeHolderArray)
        return emu_err(ACL_ERROR_INVALID_PARAM,
                       "aclrtLaunchKernelWithHostArgs: placeHolderArray is NULL");
    NEED_CTX();
    argsSize = (uint32_t)argsSize; /* narrowed to uint32 like the runtime does */
    LOCK();
    aclError rc = ACL_SUCCESS;
    emu_stream *s = NULL;
    if (!emu_valid(funcHandle, MAGIC_FUNC)) {
        rc = emu_err(ACL_ERROR_RT_INVALID_HANDLE,
                     "aclrtLaunchKernelWithHostArgs: invalid function handle %p", funcHandle);
        goto out;
    }
    if (numBlocks == 0 || argsSize == 0) {
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID,
                     "aclrtLaunchKernelWithHostArgs: numBlocks and argsSize must be > 0");
        goto out;
    }
    rc = emu_stream_get(stream, &s, 1, "aclrtLaunchKernelWithHostArgs");
    /* launch attributes are recorded, they have no effect on the host (attributes.c) */
    emu_attrs attrs;
    if (rc == ACL_SUCCESS) rc = emu_cfg_parse(cfg, &attrs, "aclrtLaunchKernelWithHostArgs");
    if (rc == ACL_SUCCESS) rc = emu_admit(s, OP_KERNEL); /* task groups (taskgroups.c) */
    if (rc != ACL_SUCCESS) goto out;
    /* the host args are copied into emulator-owned device memory at the call */
    void *copy = emu_internal_alloc(argsSize);
    memcpy(copy, hostArgs, argsSize);
    emu_op o = {.op = OP_KERNEL, .func = funcHandle, .args = copy, .args_size = argsSize,
                .num_blocks = numBlocks, .attrs = attrs};
    if (emu_is_capturing(s)) {
        emu_model *m = s->cap_model;
        EMU_PUSH(m->owned, m->nowned, m->capowned, copy);
        emu_capture_append(s, &o);
    } else {
        emu_item *it = calloc(1, sizeof *it);
        it->o = o;
        it->owned = copy;
        emu_enqueue(s, it);
    }
out:
    UNLOCK();
    return rc;
}
