/* Runtime ISA dispatch for hot loops. Mark a function TL_DISPATCH and GCC compiles it for
   AVX-512 (avx512f), x86-64-v3 (AVX2 with FMA: every AVX2 CPU has both) and the baseline
   ISA, choosing one at load time by CPU features (an ifunc). The tests and tools call the
   x86-64-v3 clone "avx2". Build flags stay portable (no -march=native); never -ffast-math,
   so NaN/inf behave; -ffp-contract=off, so a fused multiply-add is only ever an explicit
   one (tl__fmaf) and every clone computes the same bits.

   TL_DISPATCH_STREAM has no AVX-512 clone: it marks loops that stream memory once with a
   trivial operation per element (a sum, a max), which AVX-512 CPUs then run with 256-bit
   loads. On AMD Zen 4, which splits a 512-bit load in two, such a loop over 64 MB takes
   5-10% less time with 256-bit loads (bench/results/reduce_stream_before_after_2026-11-29.txt);
   the bits are the same, the lanes' partial sums being folded in the same order. */
#ifndef TL_CPU_SIMD_H
#define TL_CPU_SIMD_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#if __GNUC__ >= 11
#define TL_DISPATCH __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#define TL_DISPATCH_STREAM __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
/* GCC 10 and older know no x86-64-v3: their AVX2 clone calls libm's fmaf (same bits) */
#define TL_DISPATCH __attribute__((target_clones("avx512f", "avx2", "default")))
#define TL_DISPATCH_STREAM __attribute__((target_clones("avx2", "default")))
#endif
#else
#define TL_DISPATCH
#define TL_DISPATCH_STREAM
#endif

/* Hint that pointers do not alias, so loops vectorize without runtime checks. */
#define TL_RESTRICT __restrict__

#include <stdint.h>

/* Software prefetch for contiguous loops. A loop that spends a few nanoseconds per element
   (tanh, erfc, sin ...) keeps few loads in flight, and where the hardware prefetcher does
   not run ahead of it (seen on an Intel Xeon VM) every new cache line of an array larger
   than the caches waits out the memory's latency: float32 tanh over 4M elements took
   3.7 ns per element against 1.5 over 1M, and 1.6 with this prefetch (erfc: 3.7 -> 1.7;
   bench/results/prefetch_before_after_2026-11-29.txt). Such loops run in blocks of TL_PREFETCH_BLOCK bytes of input, each block
   first asking for the one TL_PREFETCH_AHEAD bytes further on (a prefetch never faults, so
   past the end of an array it is only wasted). GCC does not vectorize a loop with a
   prefetch inside, hence the blocks. */
#define TL_PREFETCH_BLOCK 1024
#define TL_PREFETCH_AHEAD 4096
static inline __attribute__((always_inline)) void tl_prefetch_ahead(const void *p, int64_t bytes)
{
    const char *q = (const char *)p + TL_PREFETCH_AHEAD;
    for (int64_t l = 0; l < bytes; l += 64) __builtin_prefetch(q + l);
}
/* for (I = 0; I < N; I++) BODY, in blocks of TL_PREFETCH_BLOCK bytes of the array IN,
   each prefetching IN ahead (TL_PREFETCHED_LOOP2: the arrays IN and IN2, of one type). */
#define TL_PREFETCHED_LOOP(I, N, IN, ...)                                                    \
    TL__PREFETCHED_BLOCKS(I, N, IN, tl_prefetch_ahead((IN) + b_, TL_PREFETCH_BLOCK), __VA_ARGS__)
#define TL_PREFETCHED_LOOP2(I, N, IN, IN2, ...)                                              \
    TL__PREFETCHED_BLOCKS(I, N, IN, (tl_prefetch_ahead((IN) + b_, TL_PREFETCH_BLOCK),        \
                                     tl_prefetch_ahead((IN2) + b_, TL_PREFETCH_BLOCK)), __VA_ARGS__)
#define TL__PREFETCHED_BLOCKS(I, N, IN, PREFETCH, ...)                                       \
    for (int64_t b_ = 0, bn_ = TL_PREFETCH_BLOCK / (int64_t)sizeof(*(IN)); b_ < (N);         \
         b_ += bn_) {                                                                       \
        int64_t e_ = (N) - b_ < bn_ ? (N) : b_ + bn_;                                        \
        PREFETCH;                                                                           \
        for (I = b_; I < e_; I++) __VA_ARGS__                                               \
    }

#endif
