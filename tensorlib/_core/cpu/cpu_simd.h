/* Runtime ISA dispatch for hot loops. Mark a function TL_DISPATCH and GCC compiles it for
   AVX-512 (avx512f), x86-64-v3 (AVX2 with FMA: every AVX2 CPU has both) and the baseline
   ISA, choosing one at load time by CPU features (an ifunc). The tests and tools call the
   x86-64-v3 clone "avx2". Build flags stay portable (no -march=native); never -ffast-math,
   so NaN/inf behave; -ffp-contract=off, so a fused multiply-add is only ever an explicit
   one (tl__fmaf) and every clone computes the same bits. */
#ifndef TL_CPU_SIMD_H
#define TL_CPU_SIMD_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#if __GNUC__ >= 11
#define TL_DISPATCH __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#else
/* GCC 10 and older know no x86-64-v3: their AVX2 clone calls libm's fmaf (same bits) */
#define TL_DISPATCH __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#else
#define TL_DISPATCH
#endif

/* Hint that pointers do not alias, so loops vectorize without runtime checks. */
#define TL_RESTRICT __restrict__

#endif
