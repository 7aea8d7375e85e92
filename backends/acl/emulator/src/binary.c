/* binary.c -- kernel binaries: a binary is a host shared object built from kernel/host/,
 * opened with dlopen(); a function is a dlsym()'d `void NAME(void *args, size_t args_size,
 * uint32_t block_idx, uint32_t num_blocks)` (kernel/host/mdlri_host_kernel.h) with its
 * parameter table `NAME__params`, which aclrtFunctionGetParamCount / aclrtFunctionGetParamInfo
 * report (KRN-02, KRN-03).
 *
 * MDLRI_EMU_PARAM_LAYOUT (read once at load, like MDLRI_EMU_FAULTS) changes what is reported,
 * to stand for a kernel compiler that lays the parameters out differently from the C struct:
 *   natural   (default) the kernel's struct, as its table says;
 *   wide      every parameter in a slot of its own of at least 8 bytes, slots 8-aligned in
 *             parameter order (a 4-byte int32 takes 8): the launched argument bytes are read
 *             in that layout, each parameter moved to the kernel's struct before it runs;
 *   drop-last the last parameter is not reported (a binary built from other sources);
 *   none      no parameter information: both functions answer 107000.
 * MDLRI_EMU_HIDDEN_PARAMS=N (read once at load; 0 by default) reports N hidden trailing
 * parameters after the last reported one, 8 bytes each, 8-aligned: the workspace, tiling or
 * synchronisation addresses a kernel compiler adds after the declared parameters. The
 * launched argument bytes hold the declared parameters only (the emulator's kernels never
 * read the hidden slots); at most EMU_MAX_PARAMS parameters are reported in all. */
#include <dlfcn.h>

#include "emu.h"

enum { LAYOUT_NATURAL = 0, LAYOUT_WIDE, LAYOUT_DROP_LAST, LAYOUT_NONE };
static int g_param_layout = LAYOUT_NATURAL;
static uint32_t g_hidden_params = 0;

__attribute__((constructor)) static void emu_read_param_layout(void) {
    const char *e = getenv("MDLRI_EMU_PARAM_LAYOUT");
    if (!e || !*e || strcmp(e, "natural") == 0) return;
    if (strcmp(e, "wide") == 0) g_param_layout = LAYOUT_WIDE;
    else if (strcmp(e, "drop-last") == 0) g_param_layout = LAYOUT_DROP_LAST;
    else if (strcmp(e, "none") == 0) g_param_layout = LAYOUT_NONE;
    else
        fprintf(stderr, "mdlri-acl-emu: MDLRI_EMU_PARAM_LAYOUT: unknown layout '%s' ignored "
                        "(natural, wide, drop-last, none)\n", e);
}

__attribute__((constructor)) static void emu_read_hidden_params(void) {
    const char *e = getenv("MDLRI_EMU_HIDDEN_PARAMS");
    if (!e || !*e) return;
    char *end = NULL;
    unsigned long n = strtoul(e, &end, 10);
    if (*end || n > EMU_MAX_PARAMS)
        fprintf(stderr, "mdlri-acl-emu: MDLRI_EMU_HIDDEN_PARAMS: '%s' ignored (0 to %d)\n", e,
                EMU_MAX_PARAMS);
    else
        g_hidden_params = (uint32_t)n;
}

static size_t param_end(const emu_param_table *t) {
    size_t end = 0;
    for (uint32_t i = 0; i < t->count; i++)
        if (t->params[i].offset + (size_t)t->params[i].size > end)
            end = t->params[i].offset + (size_t)t->params[i].size;
    return end;
}

/* Read NAME__params into f (has_params stays 0 without a usable table) and derive the
 * reported layout. */
static void load_params(emu_func *f, void *dl, const char *name) {
    char sym[160];
    snprintf(sym, sizeof sym, "%s__params", name);
    const emu_param_table *t = dlsym(dl, sym);
    if (!t || t->count > EMU_MAX_PARAMS || g_param_layout == LAYOUT_NONE) return;
    f->own = *t;
    f->own_size = (param_end(t) + 7) & ~(size_t)7;
    if (f->own_size > EMU_KERNEL_ARGS_MAX) return;
    f->has_params = 1;
    f->reported = f->own;
    if (g_param_layout == LAYOUT_DROP_LAST && f->reported.count > 0) f->reported.count--;
    if (g_param_layout == LAYOUT_WIDE) {
        size_t off = 0;
        for (uint32_t i = 0; i < t->count; i++) {
            uint32_t size = t->params[i].size < 8 ? 8 : t->params[i].size;
            f->reported.params[i].offset = (uint32_t)off;
            f->reported.params[i].size = size;
            off = (off + size + 7) & ~(size_t)7;
        }
    }
    f->reported_size = param_end(&f->reported);
    for (uint32_t i = 0; i < f->reported.count; i++)
        if (f->reported.params[i].offset != f->own.params[i].offset) f->relaid = 1;
    /* after reported_size: the launched bytes need not cover the hidden slots */
    size_t off = (f->reported_size + 7) & ~(size_t)7;
    for (uint32_t h = 0; h < g_hidden_params && f->reported.count < EMU_MAX_PARAMS; h++) {
        f->reported.params[f->reported.count].offset = (uint32_t)off;
        f->reported.params[f->reported.count].size = 8;
        f->reported.count++;
        off += 8;
    }
}

const void *emu_kernel_args(const emu_op *o, void *buf, size_t *size) {
    const emu_func *f = o->func;
    if (!f->relaid) {
        *size = o->args_size;
        return o->args;
    }
    *size = 0;
    if (!o->args || o->args_size < f->reported_size) return buf; /* too short: the kernel skips */
    memset(buf, 0, f->own_size);
    for (uint32_t i = 0; i < f->own.count; i++) /* the low bytes of each slot (little-endian) */
        memcpy((char *)buf + f->own.params[i].offset,
               (const char *)o->args + f->reported.params[i].offset, f->own.params[i].size);
    *size = f->own_size;
    return buf;
}

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
    load_params(f, b->dl, kernelName);
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

/* aclrtFunctionGetParamCount / aclrtFunctionGetParamInfo (hicann/runtime @681ef76): the ACL
 * layer answers 100000 for a NULL func or paramCount, and for paramOffset and paramSize both
 * NULL (src/acl/aclrt_impl/kernel.cpp:741-766); a handle whose magic does not match is 107017
 * (runtime_handle_guard.cc:70-93); a kernel without parameter information, and paramIndex >=
 * the count, are RT_ERROR_INVALID_VALUE -> 107000 (api/impl/api_error.cc:7606-7636,
 * errcode_manage.cc:314); either out-pointer alone may be NULL (api/impl/api_impl.cc:
 * 9328-9342). Neither call needs a context: no check for one in the ACL layer, in
 * rtFunctionGetParam* (api/api_c_standard_soc.cc:1581-1615), in ApiErrorDecorator or in
 * ApiImpl (api/impl/api_impl.cc:9322-9342). */
static aclError func_params(const void *func, const char *fn, const emu_param_table **out) {
    if (!emu_valid(func, MAGIC_FUNC))
        return emu_err(ACL_ERROR_RT_INVALID_HANDLE, "%s: invalid function handle %p", fn, func);
    const emu_func *f = func;
    if (!f->has_params)
        return emu_err(ACL_ERROR_RT_PARAM_INVALID,
                       "%s: kernel '%s' does not have parameter information", fn, f->name);
    *out = &f->reported;
    return ACL_SUCCESS;
}

MDLRI_API aclError aclrtFunctionGetParamCount(const void *func, size_t *paramCount) {
    if (!func || !paramCount)
        return emu_err(ACL_ERROR_INVALID_PARAM,
                       "aclrtFunctionGetParamCount: func or paramCount is NULL");
    LOCK();
    const emu_param_table *t = NULL;
    aclError rc = func_params(func, "aclrtFunctionGetParamCount", &t);
    if (rc == ACL_SUCCESS) *paramCount = t->count;
    UNLOCK();
    return rc;
}

MDLRI_API aclError aclrtFunctionGetParamInfo(const void *func, size_t paramIndex,
                                             size_t *paramOffset, size_t *paramSize) {
    if (!func)
        return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtFunctionGetParamInfo: func is NULL");
    if (!paramOffset && !paramSize)
        return emu_err(ACL_ERROR_INVALID_PARAM, "aclrtFunctionGetParamInfo: paramOffset and "
                                                "paramSize cannot both be NULL");
    LOCK();
    const emu_param_table *t = NULL;
    aclError rc = func_params(func, "aclrtFunctionGetParamInfo", &t);
    if (rc == ACL_SUCCESS && paramIndex >= t->count)
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID,
                     "aclrtFunctionGetParamInfo: paramIndex %zu out of range [0, %u)", paramIndex,
                     t->count);
    if (rc == ACL_SUCCESS) {
        if (paramOffset) *paramOffset = t->params[paramIndex].offset;
        if (paramSize) *paramSize = t->params[paramIndex].size;
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
    /* the runtime's CheckArgs, not the ACL layer: 107000 (RT-14) */
    if (placeHolderNum && !placeHolderArray) {
        rc = emu_err(ACL_ERROR_RT_PARAM_INVALID,
                     "aclrtLaunchKernelWithHostArgs: placeHolderArray is NULL");
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
    if (rc == ACL_SUCCESS) rc = emu_launch_cfg_check(cfg, &attrs, "aclrtLaunchKernelWithHostArgs");
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
