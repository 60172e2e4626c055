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

#endif
