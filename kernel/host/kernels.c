/* kernels.c -- host C versions of the catalog kernels (kernel/catalog.py); see
 * mdlri_host_kernel.h for the calling convention.
 *
 * Every kernel splits its elements by block (mdlri_block_range), so a launch gives the same
 * output whatever numBlocks is and however the blocks interleave (KRN-01); work that cannot
 * be split (an overlapping copy, wait_flag's single store) runs in block 0 only. */
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
_Static_assert(sizeof(mdlri_host_span) == 16, "span");

/* wrap-around int32 arithmetic without signed-overflow UB */
static inline int32_t wrap(uint32_t v) { return (int32_t)v; }

#define ARGS(T, name)                                                                    \
    T name;                                                                              \
    if (args == NULL || args_size < sizeof(T)) return;                                   \
    memcpy(&name, args, sizeof(T))
/* this block's share [lo, hi) of n elements */
#define SHARE(n)                                                                         \
    int32_t lo, hi;                                                                      \
    mdlri_block_range((n), block_idx, num_blocks, &lo, &hi)

/* one parameter-table entry: member m of argument struct T */
#define PARAM(T, m) {(uint32_t)offsetof(T, m), (uint32_t)sizeof(((T *)0)->m)}

void fallback_main(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    ARGS(mdlri_seed_args, a);
    SHARE(MDLRI_SEED_ELEMENTS);
    for (int32_t i = lo; i < hi; i++) a.output[i] = wrap((uint32_t)a.input[i] + 10u);
}

void fallback_postprocess(void *args, size_t args_size, uint32_t block_idx,
                          uint32_t num_blocks) {
    ARGS(mdlri_seed_args, a);
    SHARE(MDLRI_SEED_ELEMENTS);
    for (int32_t i = lo; i < hi; i++) a.output[i] = wrap((uint32_t)a.input[i] * 2u);
}

void affine(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    ARGS(mdlri_affine_args, a);
    SHARE(a.n);
    for (int32_t i = lo; i < hi; i++)
        a.y[i] = wrap((uint32_t)a.a * (uint32_t)a.x[i] + (uint32_t)a.b);
}

void add(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    ARGS(mdlri_add_args, a);
    SHARE(a.n);
    for (int32_t i = lo; i < hi; i++) a.out[i] = wrap((uint32_t)a.a[i] + (uint32_t)a.b[i]);
}

void accumulate(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    ARGS(mdlri_accumulate_args, a);
    SHARE(a.n);
    for (int32_t i = lo; i < hi; i++) a.acc[i] = wrap((uint32_t)a.acc[i] + (uint32_t)a.x[i]);
}

void fill(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    ARGS(mdlri_fill_args, a);
    SHARE(a.n);
    for (int32_t i = lo; i < hi; i++) a.out[i] = a.value;
}

/* dst[i] = src[i] like memmove: disjoint ranges are split by block; overlapping ones (a
 * block's writes would feed another block's reads) are copied whole by block 0 */
void copy(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    ARGS(mdlri_copy_args, a);
    if (a.n <= 0) return;
    const size_t bytes = (size_t)a.n * sizeof(int32_t);
    const uintptr_t s = (uintptr_t)a.src, d = (uintptr_t)a.dst;
    if (d != s && d < s + bytes && s < d + bytes) {
        if (block_idx == 0) memmove(a.dst, a.src, bytes);
        return;
    }
    SHARE(a.n);
    if (hi > lo) memmove(a.dst + lo, a.src + lo, (size_t)(hi - lo) * sizeof(int32_t));
}

/* float32 kernels: each product is rounded before the add (no fused multiply-add), like numpy */
void axpy_f32(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    ARGS(mdlri_axpy_f32_args, a);
    SHARE(a.n);
    for (int32_t i = lo; i < hi; i++) {
        volatile float prod = a.y[i] * a.alpha;
        a.out[i] = a.x[i] + prod;
    }
}

void mul_f32(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    ARGS(mdlri_mul_f32_args, a);
    SHARE(a.n);
    for (int32_t i = lo; i < hi; i++) a.out[i] = a.x[i] * a.y[i];
}

/* wait_flag: the device waits until flag[0] != 0 (wait_flag__ready), then out[0] = value */
int wait_flag__ready(const void *args, size_t args_size) {
    mdlri_wait_flag_args a;
    if (args == NULL || args_size < sizeof a) return 1; /* nothing to wait for */
    memcpy(&a, args, sizeof a);
    return __atomic_load_n(a.flag, __ATOMIC_ACQUIRE) != 0;
}

void wait_flag(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    (void)num_blocks;
    ARGS(mdlri_wait_flag_args, a);
    if (block_idx == 0) a.out[0] = a.value; /* one store: block 0's */
}

/* trap_if: an AI Core exception when flag[0] != 0 (trap_if__fault); otherwise nothing */
int trap_if__fault(const void *args, size_t args_size) {
    mdlri_trap_if_args a;
    if (args == NULL || args_size < sizeof a) return 0;
    memcpy(&a, args, sizeof a);
    return __atomic_load_n(a.flag, __ATOMIC_ACQUIRE) != 0;
}

void trap_if(void *args, size_t args_size, uint32_t block_idx, uint32_t num_blocks) {
    (void)args;
    (void)args_size;
    (void)block_idx;
    (void)num_blocks;
}

/* parameter tables: one entry per argument-struct member, in member order */
const mdlri_host_params fallback_main__params = {
    2, {PARAM(mdlri_seed_args, input), PARAM(mdlri_seed_args, output)}};
const mdlri_host_params fallback_postprocess__params = {
    2, {PARAM(mdlri_seed_args, input), PARAM(mdlri_seed_args, output)}};
const mdlri_host_params affine__params = {
    5, {PARAM(mdlri_affine_args, x), PARAM(mdlri_affine_args, y), PARAM(mdlri_affine_args, n),
        PARAM(mdlri_affine_args, a), PARAM(mdlri_affine_args, b)}};
const mdlri_host_params add__params = {
    4, {PARAM(mdlri_add_args, a), PARAM(mdlri_add_args, b), PARAM(mdlri_add_args, out),
        PARAM(mdlri_add_args, n)}};
const mdlri_host_params accumulate__params = {
    3, {PARAM(mdlri_accumulate_args, acc), PARAM(mdlri_accumulate_args, x),
        PARAM(mdlri_accumulate_args, n)}};
const mdlri_host_params fill__params = {
    3, {PARAM(mdlri_fill_args, out), PARAM(mdlri_fill_args, n), PARAM(mdlri_fill_args, value)}};
const mdlri_host_params copy__params = {
    3, {PARAM(mdlri_copy_args, src), PARAM(mdlri_copy_args, dst), PARAM(mdlri_copy_args, n)}};
const mdlri_host_params axpy_f32__params = {
    5, {PARAM(mdlri_axpy_f32_args, x), PARAM(mdlri_axpy_f32_args, y),
        PARAM(mdlri_axpy_f32_args, out), PARAM(mdlri_axpy_f32_args, n),
        PARAM(mdlri_axpy_f32_args, alpha)}};
const mdlri_host_params mul_f32__params = {
    4, {PARAM(mdlri_mul_f32_args, x), PARAM(mdlri_mul_f32_args, y),
        PARAM(mdlri_mul_f32_args, out), PARAM(mdlri_mul_f32_args, n)}};
const mdlri_host_params wait_flag__params = {
    3, {PARAM(mdlri_wait_flag_args, flag), PARAM(mdlri_wait_flag_args, out),
        PARAM(mdlri_wait_flag_args, value)}};
const mdlri_host_params trap_if__params = {1, {PARAM(mdlri_trap_if_args, flag)}};

/* ---- the memory each launch touches (NAME__spans) ---- */

/* `count` int32 elements at `p`; a negative count touches nothing */
static inline mdlri_host_span span(const void *p, int32_t count) {
    return (mdlri_host_span){(uint64_t)(uintptr_t)p,
                             count > 0 ? (uint64_t)count * sizeof(int32_t) : 0u};
}

#define SPANS(T, ...)                                                                    \
    T a;                                                                                 \
    if (args == NULL || args_size < sizeof(T)) return 0;                                 \
    memcpy(&a, args, sizeof(T));                                                         \
    const mdlri_host_span s[] = {__VA_ARGS__};                                           \
    memcpy(out, s, sizeof s);                                                            \
    return (int)(sizeof s / sizeof s[0])

int fallback_main__spans(const void *args, size_t args_size, mdlri_host_span *out) {
    SPANS(mdlri_seed_args, span(a.input, MDLRI_SEED_ELEMENTS), span(a.output, MDLRI_SEED_ELEMENTS));
}
int fallback_postprocess__spans(const void *args, size_t args_size, mdlri_host_span *out) {
    SPANS(mdlri_seed_args, span(a.input, MDLRI_SEED_ELEMENTS), span(a.output, MDLRI_SEED_ELEMENTS));
}
int affine__spans(const void *args, size_t args_size, mdlri_host_span *out) {
    SPANS(mdlri_affine_args, span(a.x, a.n), span(a.y, a.n));
}
int add__spans(const void *args, size_t args_size, mdlri_host_span *out) {
    SPANS(mdlri_add_args, span(a.a, a.n), span(a.b, a.n), span(a.out, a.n));
}
int accumulate__spans(const void *args, size_t args_size, mdlri_host_span *out) {
    SPANS(mdlri_accumulate_args, span(a.acc, a.n), span(a.x, a.n));
}
int fill__spans(const void *args, size_t args_size, mdlri_host_span *out) {
    SPANS(mdlri_fill_args, span(a.out, a.n));
}
int copy__spans(const void *args, size_t args_size, mdlri_host_span *out) {
    SPANS(mdlri_copy_args, span(a.src, a.n), span(a.dst, a.n));
}
int axpy_f32__spans(const void *args, size_t args_size, mdlri_host_span *out) {
    SPANS(mdlri_axpy_f32_args, span(a.x, a.n), span(a.y, a.n), span(a.out, a.n));
}
int mul_f32__spans(const void *args, size_t args_size, mdlri_host_span *out) {
    SPANS(mdlri_mul_f32_args, span(a.x, a.n), span(a.y, a.n), span(a.out, a.n));
}
int wait_flag__spans(const void *args, size_t args_size, mdlri_host_span *out) {
    SPANS(mdlri_wait_flag_args, span(a.flag, 1), span(a.out, 1));
}
int trap_if__spans(const void *args, size_t args_size, mdlri_host_span *out) {
    SPANS(mdlri_trap_if_args, span(a.flag, 1));
}
