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
 * launched argsSize (a kernel whose struct does not fit does nothing). Each kernel performs the
 * WHOLE operation regardless of block_idx/num_blocks; the emulator calls it once per launch
 * with block_idx 0 and num_blocks as launched (calling it once per block would give the same
 * result for every kernel except `accumulate`, which is why the emulator does not). int32
 * arithmetic wraps around like the device's.
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

#endif
