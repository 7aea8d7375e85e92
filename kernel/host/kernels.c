/* kernels.c -- host C versions of the catalog kernels (kernel/catalog.py); see
 * mdlri_host_kernel.h for the calling convention. */
#include <string.h>

#include "mdlri_host_kernel.h"

_Static_assert(sizeof(mdlri_seed_args) == 16, "seed args");
_Static_assert(sizeof(mdlri_affine_args) == 32, "affine args");
_Static_assert(sizeof(mdlri_add_args) == 32, "add args");
_Static_assert(sizeof(mdlri_accumulate_args) == 24, "accumulate args");
_Static_assert(sizeof(mdlri_fill_args) == 16, "fill args");
_Static_assert(sizeof(mdlri_copy_args) == 24, "copy args");
_Static_assert(sizeof(mdlri_axpy_f32_args) == 32, "axpy_f32 args");
_Static_assert(sizeof(mdlri_mul_f32_args) == 32, "mul_f32 args");
_Static_assert(sizeof(mdlri_wait_flag_args) == 24, "wait_flag args");
_Static_assert(sizeof(mdlri_trap_if_args) == 8, "trap_if args");

/* wrap-around int32 arithmetic without signed-overflow UB */
static inline int32_t wrap(uint32_t v) { return (int32_t)v; }

#define UNUSED_BLOCKS (void)block_idx; (void)num_blocks
#define ARGS(T, name)                                                                    \
    T name;                                                                              \
    if (args == NULL || args_size < sizeof(T)) return;                                   \
    memcpy(&name, args, sizeof(T))

void fallback_main(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    UNUSED_BLOCKS;
    ARGS(mdlri_seed_args, a);
    for (int i = 0; i < MDLRI_SEED_ELEMENTS; i++)
        a.output[i] = wrap((uint32_t)a.input[i] + 10u);
}

void fallback_postprocess(void *args, size_t args_size, uint32_t block_idx,
                          uint32_t num_blocks) {
    UNUSED_BLOCKS;
    ARGS(mdlri_seed_args, a);
    for (int i = 0; i < MDLRI_SEED_ELEMENTS; i++)
        a.output[i] = wrap((uint32_t)a.input[i] * 2u);
}

void affine(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    UNUSED_BLOCKS;
    ARGS(mdlri_affine_args, a);
    for (int32_t i = 0; i < a.n; i++)
        a.y[i] = wrap((uint32_t)a.a * (uint32_t)a.x[i] + (uint32_t)a.b);
}

void add(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    UNUSED_BLOCKS;
    ARGS(mdlri_add_args, a);
    for (int32_t i = 0; i < a.n; i++) a.out[i] = wrap((uint32_t)a.a[i] + (uint32_t)a.b[i]);
}

void accumulate(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    UNUSED_BLOCKS;
    ARGS(mdlri_accumulate_args, a);
    for (int32_t i = 0; i < a.n; i++) a.acc[i] = wrap((uint32_t)a.acc[i] + (uint32_t)a.x[i]);
}

void fill(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    UNUSED_BLOCKS;
    ARGS(mdlri_fill_args, a);
    for (int32_t i = 0; i < a.n; i++) a.out[i] = a.value;
}

void copy(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    UNUSED_BLOCKS;
    ARGS(mdlri_copy_args, a);
    if (a.n > 0) memmove(a.dst, a.src, (size_t)a.n * sizeof(int32_t));
}

/* float32 kernels: each product is rounded before the add (no fused multiply-add), like numpy */
void axpy_f32(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    UNUSED_BLOCKS;
    ARGS(mdlri_axpy_f32_args, a);
    for (int32_t i = 0; i < a.n; i++) {
        volatile float prod = a.y[i] * a.alpha;
        a.out[i] = a.x[i] + prod;
    }
}

void mul_f32(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    UNUSED_BLOCKS;
    ARGS(mdlri_mul_f32_args, a);
    for (int32_t i = 0; i < a.n; i++) a.out[i] = a.x[i] * a.y[i];
}

/* wait_flag: the device waits until flag[0] != 0 (wait_flag__ready), then out[0] = value */
int wait_flag__ready(const void *args, size_t args_size) {
    mdlri_wait_flag_args a;
    if (args == NULL || args_size < sizeof a) return 1; /* nothing to wait for */
    memcpy(&a, args, sizeof a);
    return __atomic_load_n(a.flag, __ATOMIC_ACQUIRE) != 0;
}

void wait_flag(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    UNUSED_BLOCKS;
    ARGS(mdlri_wait_flag_args, a);
    a.out[0] = a.value;
}

/* trap_if: an AI Core exception when flag[0] != 0 (trap_if__fault); otherwise nothing */
int trap_if__fault(const void *args, size_t args_size) {
    mdlri_trap_if_args a;
    if (args == NULL || args_size < sizeof a) return 0;
    memcpy(&a, args, sizeof a);
    return __atomic_load_n(a.flag, __ATOMIC_ACQUIRE) != 0;
}

void trap_if(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    UNUSED_BLOCKS;
    (void)args;
    (void)args_size;
}
