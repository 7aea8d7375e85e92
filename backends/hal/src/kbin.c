/*
 * kbin.c -- a kernel named by its own code. The real runtime copies a kernel binary's
 * allocated bytes to device memory and puts `copy base + symbol offset` in the kernel SQE's pc
 * (hicann/runtime @681ef76 kernel.cc:101-124, dk_v100.cc:911-912). In the virtual kernel
 * binary (backends/hal/kernel_binary.py) those bytes are one record per kernel: magic
 * "MDLRIKRN", u32 version, u32 argument size, u32 flags, u32 name length, the name. Device
 * memory is this process's memory, so the device reads the record at the pc and binds the
 * pc to the host kernel of that name in the host kernel library named by
 * $MDLRI_HAL_HOST_KERNELS (set by the loader, backends/acl/driver.py).
 *
 * The record is read with process_vm_readv on this process: an address that is not mapped
 * answers EFAULT instead of a fault, so a pc that points nowhere is a kernel exception like
 * any unbound pc, never a crash of the device.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ts.h"

#define KBIN_MAGIC "MDLRIKRN"
#define KBIN_VERSION 1u
#define KBIN_HEAD 24u
#define KBIN_NAME_MAX 63u
#define HOST_KERNELS_VAR "MDLRI_HAL_HOST_KERNELS"

/* copy n bytes at addr into buf; 0 when all of them could be read */
static int read_own(uint64_t addr, void *buf, size_t n) {
    struct iovec local = {buf, n};
    struct iovec remote = {(void *)(uintptr_t)addr, n};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

int ts_kernel_record_name(uint64_t pc, char *name, size_t cap) {
    unsigned char head[KBIN_HEAD];
    if (pc == 0 || cap == 0 || read_own(pc, head, sizeof head) != 0) return -1;
    if (memcmp(head, KBIN_MAGIC, 8) != 0) return -1;
    uint32_t version, n;
    memcpy(&version, head + 8, 4);
    memcpy(&n, head + 20, 4);
    if (version != KBIN_VERSION || n == 0 || n > KBIN_NAME_MAX || n >= cap) return -1;
    if (read_own(pc + KBIN_HEAD, name, n) != 0) return -1;
    name[n] = '\0';
    return strlen(name) == n ? 0 : -1;
}

/* A pc with a record runs the kernel its record names now (the memory may hold another
 * binary's copy than when the pc was first bound); a pc without one, a kernel registered
 * directly. */
int ts_kernel_find(uint64_t pc, ts_kernel *out) {
    char name[KBIN_NAME_MAX + 1];
    if (ts_kernel_record_name(pc, name, sizeof name) != 0) return ts_kernel_lookup(pc, NULL, out);
    if (ts_kernel_lookup(pc, name, out) == 0) return 0;
    const char *lib = getenv(HOST_KERNELS_VAR);
    if (lib == NULL || *lib == '\0') return -1;
    int rc = mdlri_hal_kernel_bind(pc, lib, name);
    if (rc != 0) { /* -1 the library does not load, -2 no such kernel */
        mdlri_hal_trace("kernel bind failed", rc, (long)pc);
        return -1;
    }
    return ts_kernel_lookup(pc, name, out);
}
