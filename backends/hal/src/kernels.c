/*
 * kernels.c -- the kernel registry. A 910B kernel SQE names no kernel: it carries the device
 * address of the kernel's code (pc_addr) and of its argument block (README, "How a kernel SQE
 * names its kernel"). The registry binds a pc to a host kernel: one registered directly, or
 * one found by name in a host kernel library (kernel/host/mdlri_host_kernel.h: NAME and its
 * parameter table NAME__params, whose end is the argument size).
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ts.h"

#define REG_MAX 256u
#define NAME_MAX_LEN 64u
#define PARAMS_MAX 8u

typedef struct {
    uint64_t pc;
    char name[NAME_MAX_LEN];
    ts_kernel k;
} reg_entry;

/* kernel/host/mdlri_host_kernel.h's NAME__params: count, then {offset, size} pairs */
typedef struct {
    uint32_t count;
    struct {
        uint32_t offset, size;
    } params[PARAMS_MAX];
} host_params;

static pthread_mutex_t g_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static reg_entry g_reg[REG_MAX];
static uint32_t g_reg_n;
static uint32_t g_evict; /* the next entry a full table gives up */

static int reg_put(uint64_t pc, const char *name, ts_kernel k) {
    if (k.fn == NULL) return -1;
    pthread_mutex_lock(&g_reg_mu);
    uint32_t i = 0;
    while (i < g_reg_n && g_reg[i].pc != pc) i++; /* a pc bound again takes the new kernel */
    if (i == REG_MAX) i = g_evict++ % REG_MAX; /* full: an entry a record can bind again */
    g_reg[i].pc = pc;
    snprintf(g_reg[i].name, sizeof g_reg[i].name, "%s", name ? name : "");
    g_reg[i].k = k;
    if (i == g_reg_n) g_reg_n++;
    pthread_mutex_unlock(&g_reg_mu);
    return 0;
}

int mdlri_hal_kernel_register(uint64_t pc, const char *name, mdlri_hal_kernel_fn fn,
                              uint32_t args_size, mdlri_hal_kernel_check_fn ready,
                              mdlri_hal_kernel_check_fn fault) {
    return reg_put(pc, name, (ts_kernel){.fn = fn, .args_size = args_size, .ready = ready,
                                         .fault = fault});
}

int mdlri_hal_kernel_bind(uint64_t pc, const char *library, const char *name) {
    if (library == NULL || name == NULL || strlen(name) + 9 > NAME_MAX_LEN) return -2;
    void *lib = dlopen(library, RTLD_NOW | RTLD_LOCAL); /* kept open: kernels run later */
    if (lib == NULL) return -1;
    void *sym = dlsym(lib, name);
    if (sym == NULL) return -2;
    char pname[NAME_MAX_LEN + 16];
    snprintf(pname, sizeof pname, "%s__params", name);
    const host_params *p = (const host_params *)dlsym(lib, pname);
    uint32_t size = 0;
    if (p != NULL) {
        for (uint32_t i = 0; i < p->count && i < PARAMS_MAX; i++) {
            uint32_t end = p->params[i].offset + p->params[i].size;
            if (end > size) size = end;
        }
        size = (size + 7u) & ~7u; /* the struct's natural alignment: 8 (it holds pointers) */
    }
    /* object pointers to function pointers, as dlsym requires */
    mdlri_hal_kernel_fn fn;
    memcpy(&fn, &sym, sizeof fn);
    ts_kernel k = {.fn = fn, .args_size = size};
    void *c;
    snprintf(pname, sizeof pname, "%s__ready", name);
    if ((c = dlsym(lib, pname)) != NULL) memcpy(&k.ready, &c, sizeof k.ready);
    snprintf(pname, sizeof pname, "%s__fault", name);
    if ((c = dlsym(lib, pname)) != NULL) memcpy(&k.fault, &c, sizeof k.fault);
    snprintf(pname, sizeof pname, "%s__spans", name);
    if ((c = dlsym(lib, pname)) != NULL) memcpy(&k.spans, &c, sizeof k.spans);
    return reg_put(pc, name, k) == 0 ? 0 : -2;
}

void mdlri_hal_kernel_clear(void) {
    pthread_mutex_lock(&g_reg_mu);
    memset(g_reg, 0, sizeof g_reg);
    g_reg_n = 0;
    pthread_mutex_unlock(&g_reg_mu);
}

/* Device memory [base, base + size) was freed: the pcs bound inside it name nothing now (the
 * runtime frees a kernel binary's copy when it unloads it, and a later copy may reuse the
 * address for other kernels). */
void ts_kernel_forget_range(uint64_t base, uint64_t size) {
    pthread_mutex_lock(&g_reg_mu);
    for (uint32_t i = 0; i < g_reg_n;) {
        if (g_reg[i].pc >= base && g_reg[i].pc - base < size) {
            g_reg[i] = g_reg[--g_reg_n];
            memset(&g_reg[g_reg_n], 0, sizeof g_reg[g_reg_n]);
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&g_reg_mu);
}

int ts_kernel_lookup(uint64_t pc, const char *name, ts_kernel *out) {
    int rc = -1;
    pthread_mutex_lock(&g_reg_mu);
    for (uint32_t i = 0; i < g_reg_n; i++) {
        if (g_reg[i].pc == pc && (name == NULL || strcmp(g_reg[i].name, name) == 0)) {
            *out = g_reg[i].k;
            rc = 0;
            break;
        }
    }
    pthread_mutex_unlock(&g_reg_mu);
    return rc;
}
