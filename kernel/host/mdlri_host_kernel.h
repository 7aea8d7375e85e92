/*
 * mdlri_host_kernel.h -- the calling convention of the host C versions of the catalog's
 * kernels (kernel/catalog.py), as the mdlri host ABI emulator calls them.
 *
 * Every kernel is exported from the kernel shared object under its exact catalog name with
 *
 *     void NAME(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks);
 *
 * `args` points at the kernel's argument struct (C natural alignment, the layout of
 * kernel/catalog.py: pointers are 8-byte device addresses, scalars int32), `args_size` is the
 * launched argsSize (a kernel whose struct does not fit does nothing). The emulator calls a
 * kernel once per block, block_idx 0 .. num_blocks-1 (in some order, like a device that runs
 * the blocks at the same time), and the launch's result must not depend on num_blocks (KRN-01):
 * each block computes its own share of the elements (mdlri_block_range: contiguous chunks in
 * block order), and a kernel whose work cannot be split (an overlapping copy, a single
 * element) does it in block 0 only. int32 arithmetic wraps around like the device's.
 *
 * Each kernel also exports its parameter table, the host analogue of the parameter records
 * the Ascend C compiler writes into a kernel object (what aclrtFunctionGetParamCount /
 * aclrtFunctionGetParamInfo report, KRN-02):
 *
 *     const mdlri_host_params NAME__params;
 *
 * one {offset, size} per member of the argument struct, in member order, taken from the
 * struct itself (offsetof / sizeof).
 *
 * A kernel that waits on the device for a condition in memory also exports
 *
 *     int NAME__ready(const void *args, size_t args_size);
 *
 * The emulator polls it (about every millisecond, never holding up other streams) before it
 * runs NAME, and runs NAME only once it returns non-zero; until then the kernel counts as
 * running on the device, so its launch timeout can expire (the emulator then completes it with
 * the timeout bit without running it). A kernel without NAME__ready is always ready.
 *
 * A kernel that can raise an AI Core exception also exports
 *
 *     int NAME__fault(const void *args, size_t args_size);
 *
 * When it returns non-zero the emulator does not run NAME and the launch fails on the device
 * with an AI Core exception (a stream's next sync 507015; inside a model replay the execution
 * ends and the execute stream's next sync gives 507011).
 *
 * Every kernel also exports the memory a launch touches, read from its arguments:
 *
 *     int NAME__spans(const void *args, size_t args_size, mdlri_host_span out[MDLRI_MAX_SPANS]);
 *
 * returning how many {base, bytes} it wrote (0 for arguments that do not fit). A device that
 * maps only its own memory (the virtual device's SMMU) checks them before it runs NAME: a span
 * outside that memory is an AI Core exception, and NAME never runs.
 */
#ifndef MDLRI_HOST_KERNEL_H
#define MDLRI_HOST_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#define MDLRI_HOST_KERNEL __attribute__((visibility("default")))

typedef void (*mdlri_host_kernel_fn)(void *args, size_t args_size, uint32_t block_idx,
                                     uint32_t num_blocks);

/* argument structs, field for field the kernel/catalog.py layouts */
typedef struct { int32_t *input; int32_t *output; } mdlri_seed_args;                 /* 16 */
typedef struct { int32_t *x; int32_t *y; int32_t n; int32_t a; int32_t b; } mdlri_affine_args; /* 32 */
typedef struct { int32_t *a; int32_t *b; int32_t *out; int32_t n; } mdlri_add_args;  /* 32 */
typedef struct { int32_t *acc; int32_t *x; int32_t n; } mdlri_accumulate_args;       /* 24 */
typedef struct { int32_t *out; int32_t n; int32_t value; } mdlri_fill_args;          /* 16 */
typedef struct { int32_t *src; int32_t *dst; int32_t n; } mdlri_copy_args;           /* 24 */
typedef struct { float *x; float *y; float *out; int32_t n; float alpha; } mdlri_axpy_f32_args; /* 32 */
typedef struct { float *x; float *y; float *out; int32_t n; } mdlri_mul_f32_args;     /* 32 */
typedef struct { int32_t *flag; int32_t *out; int32_t value; } mdlri_wait_flag_args;  /* 24 */
typedef struct { int32_t *flag; } mdlri_trap_if_args;                                /* 8 */

#define MDLRI_SEED_ELEMENTS 8

/* the parameter table of a kernel (NAME__params): count entries of {offset, size} */
#define MDLRI_MAX_PARAMS 8
typedef struct {
    uint32_t offset;
    uint32_t size;
} mdlri_host_param;
typedef struct {
    uint32_t count;
    mdlri_host_param params[MDLRI_MAX_PARAMS];
} mdlri_host_params;

/* one range of memory a launch reads or writes (NAME__spans) */
#define MDLRI_MAX_SPANS 4
typedef struct {
    uint64_t base;
    uint64_t bytes;
} mdlri_host_span;

/* The share [*lo, *hi) of n elements that block `block_idx` of `num_blocks` computes: chunks of
 * ceil(n / num_blocks) elements in block order (the last blocks' may be short or empty); no
 * element belongs to two blocks, every element to one. */
static inline void mdlri_block_range(int32_t n, uint32_t block_idx, uint32_t num_blocks,
                                     int32_t *lo, int32_t *hi) {
    *lo = *hi = 0;
    if (n <= 0 || num_blocks == 0 || block_idx >= num_blocks) return;
    int64_t chunk = ((int64_t)n + num_blocks - 1) / num_blocks;
    int64_t a = (int64_t)block_idx * chunk, b = a + chunk;
    *lo = (int32_t)(a < n ? a : n);
    *hi = (int32_t)(b < n ? b : n);
}

MDLRI_HOST_KERNEL void fallback_main(void *args, size_t args_size, uint32_t block_idx,
                                     uint32_t num_blocks);
MDLRI_HOST_KERNEL void fallback_postprocess(void *args, size_t args_size, uint32_t block_idx,
                                            uint32_t num_blocks);
MDLRI_HOST_KERNEL void affine(void *args, size_t args_size, uint32_t block_idx,
                              uint32_t num_blocks);
MDLRI_HOST_KERNEL void add(void *args, size_t args_size, uint32_t block_idx,
                           uint32_t num_blocks);
MDLRI_HOST_KERNEL void accumulate(void *args, size_t args_size, uint32_t block_idx,
                                  uint32_t num_blocks);
MDLRI_HOST_KERNEL void fill(void *args, size_t args_size, uint32_t block_idx,
                            uint32_t num_blocks);
MDLRI_HOST_KERNEL void copy(void *args, size_t args_size, uint32_t block_idx,
                            uint32_t num_blocks);
MDLRI_HOST_KERNEL void axpy_f32(void *args, size_t args_size, uint32_t block_idx,
                                uint32_t num_blocks);
MDLRI_HOST_KERNEL void mul_f32(void *args, size_t args_size, uint32_t block_idx,
                               uint32_t num_blocks);
/* waits until flag[0] != 0, then out[0] = value (the device-side timeout specs) */
MDLRI_HOST_KERNEL void wait_flag(void *args, size_t args_size, uint32_t block_idx,
                                 uint32_t num_blocks);
MDLRI_HOST_KERNEL int wait_flag__ready(const void *args, size_t args_size);
/* raises an AI Core exception when flag[0] != 0 (trap_if__fault), else does nothing */
MDLRI_HOST_KERNEL void trap_if(void *args, size_t args_size, uint32_t block_idx,
                               uint32_t num_blocks);
MDLRI_HOST_KERNEL int trap_if__fault(const void *args, size_t args_size);

/* parameter tables (see the top of this file) */
#define MDLRI_PARAMS_DECL(name) MDLRI_HOST_KERNEL extern const mdlri_host_params name##__params
MDLRI_PARAMS_DECL(fallback_main);
MDLRI_PARAMS_DECL(fallback_postprocess);
MDLRI_PARAMS_DECL(affine);
MDLRI_PARAMS_DECL(add);
MDLRI_PARAMS_DECL(accumulate);
MDLRI_PARAMS_DECL(fill);
MDLRI_PARAMS_DECL(copy);
MDLRI_PARAMS_DECL(axpy_f32);
MDLRI_PARAMS_DECL(mul_f32);
MDLRI_PARAMS_DECL(wait_flag);
MDLRI_PARAMS_DECL(trap_if);

/* the memory each launch touches (see the top of this file) */
#define MDLRI_SPANS_DECL(name)                                                           \
    MDLRI_HOST_KERNEL int name##__spans(const void *args, size_t args_size,              \
                                        mdlri_host_span *out)
MDLRI_SPANS_DECL(fallback_main);
MDLRI_SPANS_DECL(fallback_postprocess);
MDLRI_SPANS_DECL(affine);
MDLRI_SPANS_DECL(add);
MDLRI_SPANS_DECL(accumulate);
MDLRI_SPANS_DECL(fill);
MDLRI_SPANS_DECL(copy);
MDLRI_SPANS_DECL(axpy_f32);
MDLRI_SPANS_DECL(mul_f32);
MDLRI_SPANS_DECL(wait_flag);
MDLRI_SPANS_DECL(trap_if);

#endif
