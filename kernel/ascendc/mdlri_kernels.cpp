/*
 * mdlri_kernels.cpp -- Ascend C versions of the catalog kernels (kernel/catalog.py).
 *
 * Calling convention: the host launches every kernel with aclrtLaunchKernelWithHostArgs and
 * the packed argument struct of kernel/catalog.py (C natural alignment: pointers are 8-byte
 * device addresses, scalars int32). The kernel receives that struct as its parameter list, so
 * each kernel declares its parameters in the struct's field order: pointers as
 * `__gm__ int32_t *`, scalars as `int32_t`.
 *
 * Semantics match kernel/host/kernels.c: plain scalar loops over n elements (8 for the seed
 * pair), int32 arithmetic wrapping around (done in uint32_t to avoid signed overflow). The
 * output does not depend on numBlocks (KRN-01): each block loops over its own share of the
 * elements (BlockRange: AscendC::GetBlockIdx() / GetBlockNum(), chunks in block order rounded
 * up to whole 128-byte granules, so that two blocks do not store into one cache line of a
 * 128-byte-aligned buffer), and work that cannot be split (an overlapping copy, wait_flag's
 * single store) runs in block 0 only; the other blocks return at once.
 *
 * On arch 3510 (Ascend 950) the kernel tail invalidates the data cache; scalar stores would
 * be lost, so every kernel ends by writing its output's cache lines back to GM with dcci.
 * On A2/A3 (arch 2201) the flush compiles away.
 */
#include "kernel_operator.h"

namespace {

constexpr int32_t kSeedElements = 8;
constexpr uint32_t kSeedMainBias = 10;
constexpr uint32_t kSeedPostScale = 2;
/* a block's share is a multiple of this many 4-byte elements (128 bytes) */
constexpr int64_t kGranule = 32;

/* This block's share [lo, hi) of n elements: chunks of ceil(n / GetBlockNum()) elements
 * rounded up to kGranule, in block order; the last blocks' shares may be short or empty. */
__aicore__ inline void BlockRange(int32_t n, int32_t &lo, int32_t &hi)
{
    const int64_t blocks = AscendC::GetBlockNum();
    const int64_t idx = AscendC::GetBlockIdx();
    lo = 0;
    hi = 0;
    if (n <= 0 || blocks <= 0 || idx < 0 || idx >= blocks) {
        return;
    }
    int64_t chunk = (static_cast<int64_t>(n) + blocks - 1) / blocks;
    chunk = (chunk + kGranule - 1) / kGranule * kGranule;
    const int64_t a = idx * chunk;
    const int64_t b = a + chunk;
    lo = static_cast<int32_t>(a < n ? a : n);
    hi = static_cast<int32_t>(b < n ? b : n);
}

/* Write the data cache back to GM so the output's scalar stores survive (arch 3510 only). */
template <typename T>
__aicore__ inline void FlushOutput(__gm__ T *output)
{
#if defined(__NPU_ARCH__) && __NPU_ARCH__ == 3510
    dcci(reinterpret_cast<__gm__ int64_t *>(output), cache_line_t::ENTIRE_DATA_CACHE,
         dcci_dst_t::CACHELINE_OUT);
#else
    (void)output;
#endif
}

__aicore__ inline int32_t Wrap(uint32_t v)
{
    return static_cast<int32_t>(v);
}

}  // namespace

/* output[i] = input[i] + 10 over 8 x int32 (seed example) -- struct {input, output}, 16 B */
extern "C" __global__ __aicore__ void fallback_main(__gm__ int32_t *input,
                                                    __gm__ int32_t *output)
{
    int32_t lo;
    int32_t hi;
    BlockRange(kSeedElements, lo, hi);
    for (int32_t i = lo; i < hi; ++i) {
        output[i] = Wrap(static_cast<uint32_t>(input[i]) + kSeedMainBias);
    }
    FlushOutput(output);
}

/* output[i] = input[i] * 2 over 8 x int32 (seed example) -- struct {input, output}, 16 B */
extern "C" __global__ __aicore__ void fallback_postprocess(__gm__ int32_t *input,
                                                           __gm__ int32_t *output)
{
    int32_t lo;
    int32_t hi;
    BlockRange(kSeedElements, lo, hi);
    for (int32_t i = lo; i < hi; ++i) {
        output[i] = Wrap(static_cast<uint32_t>(input[i]) * kSeedPostScale);
    }
    FlushOutput(output);
}

/* y[i] = a * x[i] + b -- struct {x, y, n, a, b}, 32 B */
extern "C" __global__ __aicore__ void affine(__gm__ int32_t *x, __gm__ int32_t *y, int32_t n,
                                             int32_t a, int32_t b)
{
    int32_t lo;
    int32_t hi;
    BlockRange(n, lo, hi);
    for (int32_t i = lo; i < hi; ++i) {
        y[i] = Wrap(static_cast<uint32_t>(a) * static_cast<uint32_t>(x[i]) +
                    static_cast<uint32_t>(b));
    }
    FlushOutput(y);
}

/* out[i] = a[i] + b[i] -- struct {a, b, out, n}, 32 B */
extern "C" __global__ __aicore__ void add(__gm__ int32_t *a, __gm__ int32_t *b,
                                          __gm__ int32_t *out, int32_t n)
{
    int32_t lo;
    int32_t hi;
    BlockRange(n, lo, hi);
    for (int32_t i = lo; i < hi; ++i) {
        out[i] = Wrap(static_cast<uint32_t>(a[i]) + static_cast<uint32_t>(b[i]));
    }
    FlushOutput(out);
}

/* acc[i] += x[i] -- struct {acc, x, n}, 24 B */
extern "C" __global__ __aicore__ void accumulate(__gm__ int32_t *acc, __gm__ int32_t *x,
                                                 int32_t n)
{
    int32_t lo;
    int32_t hi;
    BlockRange(n, lo, hi);
    for (int32_t i = lo; i < hi; ++i) {
        acc[i] = Wrap(static_cast<uint32_t>(acc[i]) + static_cast<uint32_t>(x[i]));
    }
    FlushOutput(acc);
}

/* out[i] = value -- struct {out, n, value}, 16 B */
extern "C" __global__ __aicore__ void fill(__gm__ int32_t *out, int32_t n, int32_t value)
{
    int32_t lo;
    int32_t hi;
    BlockRange(n, lo, hi);
    for (int32_t i = lo; i < hi; ++i) {
        out[i] = value;
    }
    FlushOutput(out);
}

/* dst[i] = src[i] -- struct {src, dst, n}, 24 B; overlapping ranges copy like memmove (block 0
 * alone), disjoint ones are split by block */
extern "C" __global__ __aicore__ void copy(__gm__ int32_t *src, __gm__ int32_t *dst,
                                           int32_t n)
{
    if (n <= 0) {
        return;
    }
    const __gm__ int32_t *srcEnd = src + n;
    const __gm__ int32_t *dstEnd = dst + n;
    if (dst != src && dst < srcEnd && src < dstEnd) {
        /* overlapping: one block copies it all, in the direction memmove would */
        if (AscendC::GetBlockIdx() != 0) {
            return;
        }
        if (dst < src) {
            for (int32_t i = 0; i < n; ++i) {
                dst[i] = src[i];
            }
        } else {
            for (int32_t i = n - 1; i >= 0; --i) {
                dst[i] = src[i];
            }
        }
    } else {
        int32_t lo;
        int32_t hi;
        BlockRange(n, lo, hi);
        for (int32_t i = lo; i < hi; ++i) {
            dst[i] = src[i];
        }
    }
    FlushOutput(dst);
}

/* out[i] = x[i] + y[i] * alpha over float32 (aclnnAdd of S1) -- struct {x, y, out, n, alpha}, 32 B */
extern "C" __global__ __aicore__ void axpy_f32(__gm__ float *x, __gm__ float *y, __gm__ float *out,
                                               int32_t n, float alpha)
{
    int32_t lo;
    int32_t hi;
    BlockRange(n, lo, hi);
    for (int32_t i = lo; i < hi; ++i) {
        out[i] = x[i] + y[i] * alpha;
    }
    FlushOutput(out);
}

/* out[i] = x[i] * y[i] over float32 (aclnnMul of S1) -- struct {x, y, out, n}, 32 B */
extern "C" __global__ __aicore__ void mul_f32(__gm__ float *x, __gm__ float *y, __gm__ float *out,
                                              int32_t n)
{
    int32_t lo;
    int32_t hi;
    BlockRange(n, lo, hi);
    for (int32_t i = lo; i < hi; ++i) {
        out[i] = x[i] * y[i];
    }
    FlushOutput(out);
}

/* Waits on the device until flag[0] != 0, then out[0] = value -- struct {flag, out, value}, 24 B.
 * The device-side timeout specs launch it with a TIMEOUT / TIMEOUT_US attribute and leave the
 * flag 0, so the task timeout ends it; the flag is re-read from GM on every round (the scalar
 * data cache would otherwise keep the first value). Host version: kernel/host/kernels.c. */
extern "C" __global__ __aicore__ void wait_flag(__gm__ int32_t *flag, __gm__ int32_t *out,
                                                int32_t value)
{
    if (AscendC::GetBlockIdx() != 0) {
        return; /* one store: block 0 waits and writes */
    }
    AscendC::GlobalTensor<int32_t> word;
    word.SetGlobalBuffer(flag, 1);
    for (;;) {
        AscendC::DataCacheCleanAndInvalid<int32_t, AscendC::CacheLine::SINGLE_CACHE_LINE,
                                          AscendC::DcciDst::CACHELINE_OUT>(word);
        if (word.GetValue(0) != 0) {
            break;
        }
    }
    out[0] = value;
    FlushOutput(out);
}

/* Raises an AI Core exception (AscendC::Trap) when flag[0] != 0, else does nothing -- struct
 * {flag}, 8 B (the device-fault specs, FLD-09/10). */
extern "C" __global__ __aicore__ void trap_if(__gm__ int32_t *flag)
{
    if (flag[0] != 0) {
        AscendC::Trap();
    }
}
