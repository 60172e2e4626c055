/* tensorlib's own elementary functions for the CPU kernels.

   float32 (tl_expf, tl_logf, ...): static inline (forced), branch-free (every path is
   computed and the answer chosen with bit-mask selects), no libm calls. A plain loop
   calling them is auto-vectorized by GCC -O3 inside a TL_DISPATCH function (AVX-512 /
   AVX2 / baseline clones); tests/test_math_ulp.py checks every clone. Requirements on the
   including file: IEEE binary32/64 with FLT_EVAL_METHOD == 0 (x86-64 SSE, AArch64),
   round-to-nearest, no -ffast-math (NaN and inf must behave), and -fno-math-errno so the
   sqrtf of asin/acos is one instruction (setup.py passes it; without it asin/acos stay
   correct but their loops do not vectorize). No implicit fused multiply-adds: setup.py
   builds with -ffp-contract=off, and the few fused ones are written out (tl__fmaf, rounded
   once on every ISA), so every clone (avx512f / x86-64-v3 / baseline) returns the same bits
   (tests/test_math_ulp.py checks it). float16 / bfloat16 kernels convert to float32 and use
   these. Contiguous float32 sin/cos/tan: tl_sinf_n / tl_cosf_n / tl_tanf_n give the same
   results several times faster (they skip the huge-argument reduction for blocks that
   need none); the elementwise kernels use them.

   Many functions compute in double internally (noted at each): still vectorized (two
   vectors of doubles per vector of floats), and the float result is then rounded once,
   which makes them correctly rounded but for a few hundredths of an ulp.

   float64 (tl_exp, tl_log, ...): the same names without the f suffix. exp is ours,
   vectorized (table of 2^(j/128), < 0.51 ulp; PyTorch's measures 0.52), and silu is
   built on it; log and log1p are ours, vectorized (< 0.9 / < 1 ulp); expm1, tanh and
   sigmoid are ours, vectorized, without a table (bound / measured, PyTorch 2.13's max on
   the same inputs in parentheses: expm1 0.65 / 0.58 (1.0), tanh 0.6 / 0.55 (0.75),
   sigmoid 1.0 / 0.90 (2.2 over [-700, 40], and it flushes below), relative accuracy kept
   down to the subnormals, C99 special values); log2 and log10 are ours, vectorized (log's
   reduction with double-double terms, bound 0.6 / measured 0.562 (PyTorch 0.5005) and
   0.6 / 0.533 (0.503), against long double); sin, cos and tan are ours for |x| < 2^28
   (Cody-Waite reduction in 3 parts, double-double kernels: bound 0.6 / measured 0.55,
   0.55, 0.56 (PyTorch 0.502, 0.502, 0.54)) and glibc's above (exact reduction),
   vectorized through tl_sin_n / tl_cos_n / tl_tan_n, which the contiguous kernels use (the
   scalar tl_sin & co. branch on |x|, so loops calling them are not vectorized); pow is
   ours, vectorized (exp(y log|x|) in double-double, bound 0.52 / measured 0.509 (PyTorch
   0.63) for normal results, every C99 special case, x * x for y = 2); erf, erfc and the
   exact gelu are ours, vectorized (bound / measured against mpmath (PyTorch 2.13's max on
   the same inputs): erf 0.6 / 0.53 (0.76), from a table of piecewise polynomials, its
   contiguous loop through tl_erf_n; erfc 0.75 / 0.73 (0.75), its contiguous loop through
   tl_erfc_n, and gelu 0.8 / 0.76 (1e16 in its left tail), from per-interval coefficient
   rows (tl__erfc_tab); relative accuracy kept down to the subnormals); the
   others (exp2, the hyperbolic sinh/cosh, the inverse trig functions)
   call glibc's libm (< 1 ulp, correct special values), so loops calling them are not
   vectorized; gelu_tanh and softplus, which libm lacks, are built from libm pieces in
   numerically stable forms.

   Accuracy, float32: max error in float32 ulps of the exact value (a correctly rounded
   result scores <= 0.5; ulp(r) = 2^(exponent(r) - 23), 2^-149 below the normal range),
   measured against float64 on every 4093rd float32 of the whole range, grids at each
   algorithm's seams, random values and the special values, for every clone.
   Bound (enforced by the tests) / measured max (PyTorch 2.13's max on the same inputs):
     exp 0.53 / 0.522 (0.557)   exp2 0.9 / 0.80 (0.88)      expm1 1.0 / 0.72 (1.0)
     log 0.51 / 0.509 (0.80; 0.507 with PyTorch's AVX-512 kernels, on Intel CPUs)
     (exp and log: the max over every float)
     log2 0.51 / 0.501 (0.528)  log10 0.51 / 0.501 (0.541)
     log1p 1.0 / 0.77 (1.0)     tanh 0.51 / 0.503 (0.563)   sigmoid 1.6 / 1.50 (2e6)
     erf 0.55 / 0.542 (0.723)   erfc 0.6 / 0.517 (0.82)      silu 1.75 / 1.64 (2e7)
     gelu 2.5 / 2.37 (2e7)      gelu_tanh 1.25 / 1.06 (2e7) softplus 1.5 / 1.15 (1.5)
     sin, cos 0.51 / 0.500 (0.601) and tan 0.51 / 0.500 (0.935), for EVERY float (exact
                                Payne-Hanek range reduction above 2^20, Cody-Waite below)
     sinh 1.0 / 0.67 (1.0)      cosh 1.0 / 0.63 (0.503)     atan 1.0 / 0.80 (0.80)
     asin 0.8 / 0.60 (0.75)     acos 0.9 / 0.75 (0.78)      atan2 1.5 / 1.45
     pow 0.53 / 0.508 (0.775), against float64 pow, on random and near-overflow/underflow
                                inputs (the pow kernel runs it; glibc's powf is scalar)
   (PyTorch's 2e6..2e7 are its sigmoid/silu/gelu tails, flushed or cancelled; ours keep
   these relative bounds down into the far tails and the subnormals. Over x in [-87, 30],
   where it does not flush, PyTorch's sigmoid measures 2.47 and its silu 2.40, and its gelu
   2.4 on [-1, 1]: gelu is computed in float, with fused multiply-adds, for speed, at about
   its accuracy; sigmoid and silu, in float too, carry 1 + e^-x exactly and correct the
   quotient by its residual, so only e^-x's own rounding is left.)
   (gelu, gelu_tanh, silu, sigmoid and erfc keep these relative bounds down into their
   far tails and the subnormals, where 1 + erf or 1 + tanh forms cancel.)
   Special values follow C99 Annex F: NaN propagates, exp(-inf) = 0, overflow gives inf,
   results underflow gradually through the subnormals, log(0) = -inf, log(x < 0) = NaN,
   sin(+-inf) = NaN, odd functions keep the sign of zero, tanh/sigmoid/erf saturate to
   +-1 / 0 / 1 without NaN; x * f(x) activations follow their formula at infinities
   (silu(-inf) = gelu(-inf) = NaN as -inf * 0, like PyTorch's; +inf -> +inf). */
#ifndef TL_CPU_MATH_H
#define TL_CPU_MATH_H
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#include <immintrin.h>
#endif

#include "cpu_simd.h"

/* Every function here is forced inline: a loop that calls several of them would otherwise
   hit GCC's inlining budget and call an out-of-line copy compiled for the baseline ISA,
   per element, from inside an AVX-512 clone (not vectorized, and slowed further by
   SSE/AVX transitions). */
#if defined(__GNUC__)
#define TL_MATH_INLINE static inline __attribute__((always_inline))
#else
#define TL_MATH_INLINE static inline
#endif

/* ------------------------------------------------------------------ bit-level helpers */

TL_MATH_INLINE uint32_t tl__fbits(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
TL_MATH_INLINE float tl__bitsf(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }
TL_MATH_INLINE float tl__absf(float x) { return tl__bitsf(tl__fbits(x) & 0x7fffffffu); }
/* |mag| with the sign of sgn */
TL_MATH_INLINE float tl__signf(float mag, float sgn)
{
    return tl__bitsf((tl__fbits(mag) & 0x7fffffffu) | (tl__fbits(sgn) & 0x80000000u));
}
/* c ? a : b without a branch. GCC keeps a ?: between floats as control flow when an arm
   computes something that could trap (default -ftrapping-math forbids speculating it),
   and control flow stops vectorization; selecting bits computes both arms, always.
   c must be 0 or 1 (a comparison); a _Bool conversion here would stop vectorization of the
   64-bit select. */
TL_MATH_INLINE float tl__self(int c, float a, float b)
{
    uint32_t m = (uint32_t)0 - (uint32_t)c;
    return tl__bitsf((tl__fbits(a) & m) | (tl__fbits(b) & ~m));
}
TL_MATH_INLINE double tl__seld(int c, double a, double b)
{
    uint64_t m = (uint64_t)0 - (uint64_t)(uint32_t)c, ua, ub;
    memcpy(&ua, &a, 8);
    memcpy(&ub, &b, 8);
    ua = (ua & m) | (ub & ~m);
    memcpy(&a, &ua, 8);
    return a;
}
TL_MATH_INLINE int32_t tl__seli(int c, int32_t a, int32_t b)
{
    int32_t m = -(int32_t)c;
    return (a & m) | (b & ~m);
}
/* x with the low 12 significand bits cleared: 12 significant bits, so a product of two
   such numbers is exact in float32. */
TL_MATH_INLINE float tl__hi12f(float x) { return tl__bitsf(tl__fbits(x) & 0xfffff000u); }
/* Round to the nearest integer, ties to even, for |x| < 2^22 (adding 1.5*2^23 pushes the
   fraction out of the significand; without -ffast-math GCC keeps both operations). */
TL_MATH_INLINE float tl__rintf(float x) { return (x + 0x1.8p23f) - 0x1.8p23f; }
/* 2^k for k in [-126, 127] */
TL_MATH_INLINE float tl__pow2f(int32_t k) { return tl__bitsf((uint32_t)(k + 127) << 23); }
/* a b + c rounded once (tl__fma: the same in double). Written out (the compiler never contracts: -ffp-contract=off), so
   every ISA clone computes the same bits: one instruction in the avx512f and x86-64-v3
   (AVX2 + FMA) clones and on AArch64; in the baseline x86-64 clone, which only CPUs without
   AVX2 run, a call to libm's fmaf per element (exact too, but not vectorized). */
#define tl__fmaf(a, b, c) __builtin_fmaf((a), (b), (c))
#define tl__fma(a, b, c) __builtin_fma((a), (b), (c))

/* ------------------------------------------------------------------ double-precision helpers */
/* Several float functions compute in double internally: converting 16 floats to 2 vectors
   of doubles is cheap, and it makes them nearly correctly rounded with simple code. */

TL_MATH_INLINE uint64_t tl__dbits(double x) { uint64_t u; memcpy(&u, &x, 8); return u; }
TL_MATH_INLINE double tl__bitsd(uint64_t u) { double x; memcpy(&x, &u, 8); return x; }
TL_MATH_INLINE double tl__absd(double x) { return tl__bitsd(tl__dbits(x) & 0x7fffffffffffffffu); }
/* |mag| with the sign of sgn */
TL_MATH_INLINE double tl__signf_d(double mag, double sgn)
{
    return tl__bitsd((tl__dbits(mag) & 0x7fffffffffffffffu)
                     | (tl__dbits(sgn) & 0x8000000000000000u));
}

/* exp(x) in double for x in [-700, 700], relative error 2^-33: an intermediate for float
   results, not a float64 exp. x = k ln2 + r, |r| <= ln2/2, exp(r) = 1 + r + r^2 Q(r)
   (Q of degree 5); 2^k goes into the exponent bits straight from the rounding constant,
   with no double -> int64 conversion (AVX2 has none). */
TL_MATH_INLINE double tl__exp_d(double x)
{
    double t = x * 0x1.71547652b82fep+0 + 0x1.8p52;      /* 1.5 2^52 + k: k in the low bits */
    double kd = t - 0x1.8p52;
    double r = x - kd * 0x1.62e42fefa39efp-1;
    double q = 0x1.9f02be8344154p-13;
    q = q * r + 0x1.6d946ae8c5376p-10;
    q = q * r + 0x1.11127f29162ccp-7;
    q = q * r + 0x1.555485dae4eedp-5;
    q = q * r + 0x1.55555432510edp-3;
    q = q * r + 0x1.0000003d97e44p-1;
    double p = 1.0 + (r + (r * r) * q);
    return p * tl__bitsd((tl__dbits(t) + 1023u) << 52);
}

/* x = k ln2 + r, |r| <= ln2/2 (plus an ulp), for |x| < 700: returns r, *scale = 2^k. */
TL_MATH_INLINE double tl__ln2_reduce_d(double x, double *scale)
{
    double t = tl__fma(x, 0x1.71547652b82fep+0, 0x1.8p52);   /* 1.5 2^52 + k */
    double kd = t - 0x1.8p52;
    *scale = tl__bitsd((tl__dbits(t) + 1023u) << 52);
    return tl__fma(kd, -0x1.62e42fefa39efp-1, x);
}

/* tl__exp_d with fused multiply-adds (erfc's; tl__exp_d's other users keep their bits):
   half the dependent steps. */
TL_MATH_INLINE double tl__exp_fma_d(double x)
{
    double sc, r = tl__ln2_reduce_d(x, &sc);
    double q = 0x1.9f02be8344154p-13;
    q = tl__fma(q, r, 0x1.6d946ae8c5376p-10);
    q = tl__fma(q, r, 0x1.11127f29162ccp-7);
    q = tl__fma(q, r, 0x1.555485dae4eedp-5);
    q = tl__fma(q, r, 0x1.55555432510edp-3);
    q = tl__fma(q, r, 0x1.0000003d97e44p-1);
    double p = 1.0 + tl__fma(r * r, q, r);
    return p * sc;
}

/* 1/d for finite d within the float range, relative error 2^-46: a float division and one
   Newton step (SIMD double division is several times slower than float division). */
TL_MATH_INLINE double tl__recip_d(double d)
{
    double y = (double)(1.0f / (float)d);
    return y + y * (1.0 - d * y);
}
/* The same with fused multiply-adds (erfc's and tan's; tl__recip_d's users keep their
   bits). */
TL_MATH_INLINE double tl__recip_fma_d(double d)
{
    double y = (double)(1.0f / (float)d);
    return tl__fma(y, tl__fma(-d, y, 1.0), y);
}

/* The loop of the array versions (tl_expf_n, tl_sinf_n & co.): blocks of 256 elements;
   a block where no x[i] meets NEEDS_FULL (an expression of x[i]) runs FAST, the others
   FULL, which must agree with FAST wherever NEEDS_FULL is false. Expects x, o and n. */
#define TL__BLOCKS(NEEDS_FULL, FAST, FULL)                                                   \
    for (int64_t b = 0; b < n; b += 256) {                                                  \
        int64_t e = n - b < 256 ? n : b + 256;                                              \
        tl_prefetch_ahead(x + b, 256 * (int64_t)sizeof(x[0]));   /* cpu_simd.h says why */  \
        int full = 0;                                                                       \
        for (int64_t i = b; i < e; i++) full |= (NEEDS_FULL);                               \
        if (!full) {                                                                        \
            for (int64_t i = b; i < e; i++) o[i] = FAST(x[i]);                              \
        } else {                                                                            \
            for (int64_t i = b; i < e; i++) o[i] = FULL(x[i]);                              \
        }                                                                                   \
    }

/* GCC vector types and helpers for the array versions' AVX-512 (16 floats) and AVX2 (8
   floats) paths, which run the per-element functions' operations in the same order on whole
   vectors, with table columns fetched by permutes (vpermt2ps; vpermps and a blend) where
   the per-element code, vectorized by GCC, loads them with gathers. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define TL__V16 1
typedef float tl__v16f __attribute__((vector_size(64)));
typedef int32_t tl__v16i __attribute__((vector_size(64)));
typedef uint32_t tl__v16u __attribute__((vector_size(64)));
#define TL__V16_FN static inline __attribute__((always_inline, target("avx512f")))
#define TL__V16C(c) ((tl__v16f){c, c, c, c, c, c, c, c, c, c, c, c, c, c, c, c})
TL__V16_FN tl__v16f tl__v16_fma(tl__v16f a, tl__v16f b, tl__v16f c)   /* vfmadd */
{
    tl__v16f r;
    for (int i = 0; i < 16; i++) r[i] = __builtin_fmaf(a[i], b[i], c[i]);
    return r;
}
TL__V16_FN tl__v16f tl__v16_tab(const float *col, tl__v16i i)         /* col[i] per lane */
{
    tl__v16f lo, hi;
    memcpy(&lo, col, 64);
    memcpy(&hi, col + 16, 64);
    return __builtin_shuffle(lo, hi, i);
}
typedef float tl__v8f __attribute__((vector_size(32)));
typedef int32_t tl__v8i32 __attribute__((vector_size(32)));
typedef uint32_t tl__v8u32 __attribute__((vector_size(32)));
#define TL__V8F_FN static inline __attribute__((always_inline, target("avx2,fma")))
#define TL__V8FC(c) ((tl__v8f){c, c, c, c, c, c, c, c})
TL__V8F_FN tl__v8f tl__v8f_fma(tl__v8f a, tl__v8f b, tl__v8f c)      /* vfmadd */
{
    tl__v8f r;
    for (int i = 0; i < 8; i++) r[i] = __builtin_fmaf(a[i], b[i], c[i]);
    return r;
}
TL__V8F_FN tl__v8f tl__v8f_tab(const float *col, tl__v8i32 i)       /* col[i], i < 32 */
{
    tl__v8f t0, t1, t2, t3;
    memcpy(&t0, col, 32);
    memcpy(&t1, col + 8, 32);
    memcpy(&t2, col + 16, 32);
    memcpy(&t3, col + 24, 32);
    tl__v8f lo = __builtin_shuffle(t0, t1, i), hi = __builtin_shuffle(t2, t3, i);
    tl__v8i32 upper = (i & 16) != 0;
    return (tl__v8f)(((tl__v8i32)hi & upper) | ((tl__v8i32)lo & ~upper));
}
TL__V16_FN tl__v16u tl__v16_umin(tl__v16u a, tl__v16u b)
{
    return (tl__v16u)_mm512_min_epu32((__m512i)a, (__m512i)b);
}
TL__V16_FN tl__v16u tl__v16_umax(tl__v16u a, tl__v16u b)
{
    return (tl__v16u)_mm512_max_epu32((__m512i)a, (__m512i)b);
}
TL__V16_FN tl__v16u tl__v16_sel_ult(tl__v16u u, tl__v16u v, tl__v16u a, tl__v16u b)
{
    __mmask16 m = _mm512_cmplt_epu32_mask((__m512i)u, (__m512i)v);
    return (tl__v16u)_mm512_mask_blend_epi32(m, (__m512i)b, (__m512i)a);
}
TL__V16_FN tl__v16f tl__v16_tab16(const float *row, tl__v16u k)      /* row[k % 16] */
{
    tl__v16f r;
    memcpy(&r, row, 64);
    return __builtin_shuffle(r, (tl__v16i)k);
}
TL__V8F_FN tl__v8u32 tl__v8u_min(tl__v8u32 a, tl__v8u32 b)
{
    return (tl__v8u32)_mm256_min_epu32((__m256i)a, (__m256i)b);
}
TL__V8F_FN tl__v8u32 tl__v8u_max(tl__v8u32 a, tl__v8u32 b)
{
    return (tl__v8u32)_mm256_max_epu32((__m256i)a, (__m256i)b);
}
TL__V8F_FN tl__v8u32 tl__v8u_sel_ult(tl__v8u32 u, tl__v8u32 v, tl__v8u32 a, tl__v8u32 b)
{
    /* u < v unsigned: min(u, v) == u and u != v */
    tl__v8u32 m = (tl__v8u32)((tl__v8u_min(u, v) == u) & (u != v));
    return (a & m) | (b & ~m);
}
TL__V8F_FN tl__v8f tl__v8f_tab16(const float *row, tl__v8u32 k)      /* row[k % 16] */
{
    tl__v8f lo, hi;
    memcpy(&lo, row, 32);
    memcpy(&hi, row + 8, 32);
    return __builtin_shuffle(lo, hi, (tl__v8i32)(k & 15));
}
#define TL__V16_UBITS(v) ((tl__v16u)(v))
#define TL__V16_UFLOAT(u) ((tl__v16f)(u))
#define TL__V8_UBITS(v) ((tl__v8u32)(v))
#define TL__V8_UFLOAT(u) ((tl__v8f)(u))
/* TU var = value in every lane, set up where it stands (before a loop) behind an empty asm:
   GCC otherwise rematerializes an integer constant inside the loop, broadcast from a
   general register on the port the permutes need */
#define TL__VEC_CONST(TU, var, value)                                                       \
    TU var = (TU){0} + (value);                                                             \
    __asm__("" : "+v"(var))
#endif

/* NAME(x, o, n): FN over a contiguous float array through V16 (16 lanes, where the CPU has
   AVX-512, tested at run time) or V8 (8 lanes, with AVX2 and FMA), which give FN's bits;
   the last n % 16 (or 8), and everything on other CPUs, per element. */
#ifdef TL__V16
#define TL__ARRAY_VECTOR_LEAD(V16, V8)                                                       \
    if (__builtin_cpu_supports("avx512f")) {                                                 \
        i = n & ~(int64_t)15;                                                                \
        V16(x, o, i);                                                                        \
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {            \
        i = n & ~(int64_t)7;                                                                 \
        V8(x, o, i);                                                                         \
    }
#else
#define TL__ARRAY_VECTOR_LEAD(V16, V8)
#endif
#define TL__ARRAY_PATHS(NAME, FN, V16, V8)                                                   \
    TL_MATH_INLINE void NAME(const float *x, float *o, int64_t n)                            \
    {                                                                                        \
        int64_t i = 0;                                                                       \
        TL__ARRAY_VECTOR_LEAD(V16, V8)                                                       \
        for (; i < n; i++) o[i] = FN(x[i]);                                                  \
    }

/* NAME(x, o, n): INNER (an array version's paths) over blocks of 256, prefetching the
   input ahead (cpu_simd.h says why) */
#define TL__ARRAY_PREFETCHED(NAME, INNER)                                                    \
    TL_MATH_INLINE void NAME(const float *x, float *o, int64_t n)                            \
    {                                                                                        \
        for (int64_t b = 0; b < n; b += 256) {                                               \
            tl_prefetch_ahead(x + b, 1024);                                                  \
            INNER(x + b, o + b, n - b < 256 ? n - b : 256);                                  \
        }                                                                                    \
    }

/* ------------------------------------------------------------------ exp family */

/* exp(kf ln2 + rh + rl) * 2^adj as hi + *lo, |rh| <= ln2/2, rl small: the polynomial's
   leading terms and 1 + (...) are carried to double-float length, so hi + lo is good to
   about 2^-28 relative before it is rounded. The
   scaled result must stay within the float range apart from overflow to inf, k + adj in
   [-153, 190]. */
TL_MATH_INLINE float tl__exp_hl_r(float kf, float rh, float rl, int32_t adj, float *lo)
{
    float q = 0x1.6a4748p-10f;
    q = q * rh + 0x1.1239a4p-7f;
    q = q * rh + 0x1.5558b6p-5f;
    q = q * rh + 0x1.555492p-3f;
    q = q * rh + 0x1.fffffcp-2f;
    float t = (rh * rh) * q;                              /* exp(r) - 1 - r */
    float sh = rh + t;
    float sl = ((rh - sh) + t) + rl * (1.0f + rh);        /* exp(r) - 1 = sh + sl */
    float ph = 1.0f + sh;
    float pl = ((1.0f - ph) + sh) + sl;                   /* exp(r) = ph + pl */
    int32_t k = (int32_t)kf + adj;
    int32_t k1 = k >> 1;
    float s1 = tl__pow2f(k1), s2 = tl__pow2f(k - k1);
    *lo = (pl * s1) * s2;
    return (ph * s1) * s2;
}

/* exp(x) * 2^adj as hi + *lo for x in about [-126, 90] (k + adj in [-153, 190]), for
   functions that add to or divide by exp and would otherwise inherit its rounding error. */
TL_MATH_INLINE float tl__exp_hl(float x, int32_t adj, float *lo)
{
    float kf = tl__rintf(x * 0x1.715476p+0f);
    float a = x - kf * 0x1.62e4p-1f;                      /* exact */
    float c = kf * 0x1.7f7d1cp-20f;
    float rh = a - c;
    return tl__exp_hl_r(kf, rh, (a - rh) - c, adj, lo);
}

/* The same for exp(x + xl), xl up to about 2^-10 |x| (a double-length argument). */
TL_MATH_INLINE float tl__exp_hl2(float x, float xl, int32_t adj, float *lo)
{
    float kf = tl__rintf(x * 0x1.715476p+0f);
    float a = x - kf * 0x1.62e4p-1f;                      /* exact */
    float s = a + xl;                                     /* two-sum: s + err = a + xl */
    float bb = s - a;
    float err = (a - (s - bb)) + (xl - bb);
    float c = kf * 0x1.7f7d1cp-20f;
    float rh = s - c;
    return tl__exp_hl_r(kf, rh, ((s - rh) - c) + err, adj, lo);
}

/* Clamp x into [lo, hi]; NaN becomes 0 so integer conversions stay defined (callers put
   the NaN back with a final select). */
TL_MATH_INLINE float tl__clampf(float x, float lo, float hi)
{
    x = tl__self(x < lo, lo, x);
    x = tl__self(x > hi, hi, x);
    return tl__self(x == x, x, 0.0f);
}

/* exp: < 0.53 ulp (0.5221 measured over every float of its range), in float with fused
   multiply-adds, rounded once also where the result is subnormal. x = (32 k + j) ln2/32 + r,
   |r| <= ln2/64 (plus an ulp): 32 k + j from the rounding constant's low bits (no float ->
   int conversion), r = x - (32 k + j) ln2/32_hi exactly (a fused multiply-add; its exact
   value fits 24 bits) less (32 k + j) ln2/32_lo. Then e^x = 2^k (y + w), with y = 2^(j/32)
   rounded (entry j of tl__expf_tab, tools/math_tables.py) and w = y p + lo (1 + p), lo the
   entry's rest and p = e^r - 1 = r + r^2 (1/2 + r/6 + r^2/24) (error 2^-40); y + w is rounded
   once and 2^k goes into its exponent bits (an integer add: normal results only).
   Subnormal results (below 2^-126, k <= -126): y and w are scaled by 2^(k+126) (exact) and
   added to 1, so their sum is rounded once on the subnormal grid (2^-23 there), exactly (a
   two-sum keeps what the first addition drops); its scale is 1 where the result is normal
   and the sum's bits are the subnormal's, so lanes that take the normal path compute no
   subnormal numbers (on Intel CPUs each one costs a microcode assist of about 100 cycles).
   Against the table-free form before it (1 + r with a compensated sum, 0.542 ulp), through
   the AVX-512 array version on an Intel core: 0.31 -> 0.21 ns per element in a C loop over
   64K, 0.37 -> 0.24 through tensorlib.exp (PyTorch's: 0.19-0.21). */
static const float tl__expf_tab[2][32] = {
    {   /* 2^(j/32), hi */
        0x1p+0f, 0x1.059b0ep+0f, 0x1.0b5586p+0f, 0x1.11301ep+0f,
        0x1.172b84p+0f, 0x1.1d4874p+0f, 0x1.2387a6p+0f, 0x1.29e9ep+0f,
        0x1.306fep+0f, 0x1.371a74p+0f, 0x1.3dea64p+0f, 0x1.44e086p+0f,
        0x1.4bfdaep+0f, 0x1.5342b6p+0f, 0x1.5ab07ep+0f, 0x1.6247ecp+0f,
        0x1.6a09e6p+0f, 0x1.71f75ep+0f, 0x1.7a1148p+0f, 0x1.82589ap+0f,
        0x1.8ace54p+0f, 0x1.93737cp+0f, 0x1.9c4918p+0f, 0x1.a5503cp+0f,
        0x1.ae89fap+0f, 0x1.b7f77p+0f, 0x1.c199bep+0f, 0x1.cb720ep+0f,
        0x1.d5818ep+0f, 0x1.dfc974p+0f, 0x1.ea4afap+0f, 0x1.f50766p+0f,
    },
    {   /* 2^(j/32), lo */
        0x0p+0f, -0x1.9d4f52p-25f, 0x1.9f3122p-25f, -0x1.fdb496p-25f,
        -0x1.c15742p-27f, -0x1.d2e8cap-25f, 0x1.ceac48p-25f, -0x1.5c0424p-25f,
        0x1.4636e2p-25f, -0x1.18aac6p-25f, 0x1.824684p-25f, 0x1.8624b4p-30f,
        -0x1.593abcp-25f, -0x1.2c561p-25f, -0x1.5bd5ecp-27f, -0x1.f8b55p-25f,
        0x1.9fcef4p-26f, 0x1.1d8beep-25f, -0x1.829fdp-25f, -0x1.accc7cp-26f,
        0x1.15506ep-27f, -0x1.e64744p-25f, 0x1.51f848p-27f, -0x1.b83b54p-25f,
        -0x1.a94b14p-26f, -0x1.a09438p-25f, -0x1.3d56b2p-27f, -0x1.8837ccp-27f,
        -0x1.822dbcp-27f, -0x1.908c94p-25f, 0x1.52486cp-27f, -0x1.246ebp-26f,
    },
};
#define TL__LN2_32_HI 0x1.62e4p-6f
#define TL__LN2_32_LO 0x1.7f7d1cp-25f
#define TL__INV_LN2_32 0x1.715476p+5f

#define TL__SCALAR_C(c) (c)
/* the same for unsigned integers and selects on them */
#define TL__SCALAR_UMIN(a, b) ((a) < (b) ? (a) : (b))
#define TL__SCALAR_UMAX(a, b) ((a) > (b) ? (a) : (b))
#define TL__SCALAR_SEL_ULT(u, v, a, b) ((u) < (v) ? (a) : (b))

/* tl__expf's steps up to y + w, for x (within about [-104, 89]): written once for the scalar
   function and the array versions' vector paths (T the value type, TI its integer type, C a
   constant of type T, BITS a T's bits as TI, TAB(c, n) column c of tl__expf_tab at n mod
   32), so they round alike. Declares n = 32 k + j, y and w. */
#define TL__EXPF_STEPS(T, TI, C, FMA, BITS, TAB, x, n, y, w)                                  \
    TI n;                                                                                   \
    T y, w;                                                                                 \
    do {                                                                                    \
        T t_ = FMA(x, C(TL__INV_LN2_32), C(0x1.8p23f));      /* 1.5 2^23 + 32 k + j */       \
        T kj_ = t_ - 0x1.8p23f;                                                             \
        T r_ = FMA(kj_, C(-TL__LN2_32_HI), x);               /* exact */                    \
        r_ = FMA(kj_, C(-TL__LN2_32_LO), r_);                                               \
        n = BITS(t_) - 0x4b400000;                           /* the bits of 1.5 2^23 */     \
        y = TAB(0, n);                                                                      \
        T lo_ = TAB(1, n);                                                                  \
        T q_ = FMA(C(0x1.555556p-5f), r_, C(0x1.555556p-3f));                               \
        q_ = FMA(q_, r_, C(0.5f));                                                          \
        T p_ = FMA(r_ * r_, q_, r_);                         /* e^r - 1 */                  \
        w = FMA(y, p_, FMA(lo_, p_, lo_));                                                  \
    } while (0)
#define TL__SCALAR_BITS(v) ((int32_t)tl__fbits(v))
#define TL__EXPF_SCALAR_TAB(c, n) tl__expf_tab[c][(n) & 31]

TL_MATH_INLINE float tl__expf(float x, int subnormals)
{
    TL__EXPF_STEPS(float, int32_t, TL__SCALAR_C, tl__fmaf, TL__SCALAR_BITS, TL__EXPF_SCALAR_TAB,
                   x, n, y, w);
    int32_t k = n >> 5;
    float res = tl__bitsf(tl__fbits(y + w) + ((uint32_t)k << 23));
    if (subnormals) {
        /* subnormal: (y + w) 2^(k+126) + 1 rounded once to 2^-23, then 1 taken away; the
           scale's exponent clamped to [-30, 0] (only k in [-150, -126] uses it) */
        int32_t ks = k + 126;
        ks = ks < 0 ? ks : 0;
        ks = ks > -30 ? ks : -30;
        float sc = tl__pow2f(ks);
        float ys = y * sc, ws = w * sc;
        float u = ys + 1.0f;
        float v = ((ys - (u - 1.0f)) + ws);       /* what u lacks, exactly but for ws's */
        /* (u + v - 1) 2^-126 without a subnormal multiply: u + v lies in [1, 2] on the 2^-23
           grid, so its bits less 1.0f's are the subnormal's (2^-126 for 2) */
        float sub = tl__bitsf(tl__fbits(u + v) - 0x3f800000u);
        res = tl__self((k < -125) & (ys + ws < 1.0f), sub, res);
        res = tl__self(x < -104.0f, 0.0f, res);
    }
    res = tl__self(x >= 0x1.62e430p+6f, (float)INFINITY, res);
    return tl__self(x == x, res, x);
}

TL_MATH_INLINE float tl_expf(float x) { return tl__expf(x, 1); }
/* tl_expf for x >= -86.5 or NaN (no result below 2^-125), without the subnormal path */
TL_MATH_INLINE float tl__expf_normal(float x) { return tl__expf(x, 0); }

/* tl_expf over a contiguous array, the same bits. With AVX-512 (tested at run time) blocks
   of 16, with AVX2 and FMA blocks of 8, go through TL__EXPF_STEPS on GCC vectors, the table
   columns fetched by permutes, where every x of the block lies in [-86.5, 88.72) (no
   subnormal result, no overflow, no NaN: nothing to select); other blocks, and the last
   few, per element. Without either, blocks of 256 with no x below -86.5 skip the
   subnormal-result path. */
#ifdef TL__V16
#define TL__V16_BITS(v) ((tl__v16i)(v))
#define TL__V8_BITS(v) ((tl__v8i32)(v))
#define TL__EXPF_V16_TAB(c, n) tl__v16_tab(tl__expf_tab[c], n)
#define TL__EXPF_V8_TAB(c, n) tl__v8f_tab(tl__expf_tab[c], (n) & 31)
static __attribute__((target("avx512f"), unused)) void tl__expf_v16(const float *x, float *o,
                                                                    int64_t n)
{
    for (int64_t b = 0; b < n; b += 16) {
        tl__v16f xv;
        memcpy(&xv, x + b, 64);
        tl__v16i in = (xv >= -86.5f) & (xv < 88.72f);                  /* false for NaN */
        if (_mm512_test_epi32_mask((__m512i)in, (__m512i)in) != 0xffff) {
            for (int j = 0; j < 16; j++) o[b + j] = tl_expf(x[b + j]);
            continue;
        }
        TL__EXPF_STEPS(tl__v16f, tl__v16i, TL__V16C, tl__v16_fma, TL__V16_BITS,
                       TL__EXPF_V16_TAB, xv, nj, y, w);
        tl__v16f res = (tl__v16f)((tl__v16i)(y + w) + ((nj >> 5) << 23));
        memcpy(o + b, &res, 64);
    }
}
static __attribute__((target("avx2,fma"), unused)) void tl__expf_v8(const float *x, float *o,
                                                                   int64_t n)
{
    for (int64_t b = 0; b < n; b += 8) {
        tl__v8f xv;
        memcpy(&xv, x + b, 32);
        tl__v8i32 out = ~((xv >= -86.5f) & (xv < 88.72f));
        if (!_mm256_testz_si256((__m256i)out, (__m256i)out)) {
            for (int j = 0; j < 8; j++) o[b + j] = tl_expf(x[b + j]);
            continue;
        }
        TL__EXPF_STEPS(tl__v8f, tl__v8i32, TL__V8FC, tl__v8f_fma, TL__V8_BITS, TL__EXPF_V8_TAB,
                       xv, nj, y, w);
        tl__v8f res = (tl__v8f)((tl__v8i32)(y + w) + ((nj >> 5) << 23));
        memcpy(o + b, &res, 32);
    }
}
#endif

/* tl_expf_n's vector paths without prefetching (for a buffer already in the caches); per
   element where the CPU has neither AVX-512 nor AVX2 */
TL__ARRAY_PATHS(tl__expf_n, tl_expf, tl__expf_v16, tl__expf_v8)

TL_MATH_INLINE void tl_expf_n(const float *x, float *o, int64_t n)
{
#ifdef TL__V16
    if (__builtin_cpu_supports("avx512f")
        || (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
        for (int64_t b = 0; b < n; b += 256) {
            tl_prefetch_ahead(x + b, 1024);                  /* cpu_simd.h says why */
            tl__expf_n(x + b, o + b, n - b < 256 ? n - b : 256);
        }
        return;
    }
#endif
    TL__BLOCKS(x[i] < -86.5f, tl__expf_normal, tl_expf)
}

/* exp2: < 0.9 ulp; exact for integer arguments. 2^x = 2^k e^(r ln2), r = x - k exact,
   r ln2 formed in double and split into float hi + lo for the double-float exp kernel. */
TL_MATH_INLINE float tl_exp2f(float x)
{
    float xc = tl__clampf(x, -151.0f, 129.0f);
    float kf = tl__rintf(xc);
    double rd = (double)(xc - kf) * 0x1.62e42fefa39efp-1;
    float rh = (float)rd;
    float lo, hi = tl__exp_hl_r(kf, rh, (float)(rd - (double)rh), 0, &lo);
    float res = tl__self(hi == (float)INFINITY, hi, hi + lo);   /* lo may be -inf there */
    return tl__self(x == x, res, x);
}

/* expm1: < 1 ulp; expm1(x) = x for tiny x, keeps -0. With x = k ln2 + r:
   expm1(x) = 2^k expm1(r) + (2^k - 1), expm1(r) = r + r^2/2 + r^3 Q(r) (Q of degree 4,
   relative error 2^-31) carried as hi + lo, and the two terms summed exactly (two-sum).
   For k > 24 the -1 no longer matters and 2^k may overflow, so that range uses
   (1 + expm1(r)) 2^k - 1 with the two-step scale, 1 + expm1(r) again as hi + lo. */
TL_MATH_INLINE float tl_expm1f(float x)
{
    float xc = tl__clampf(x, -18.0f, 89.0f);
    float kf = tl__rintf(xc * 0x1.715476p+0f);
    float a = xc - kf * 0x1.62e4p-1f;                     /* exact */
    float c = kf * 0x1.7f7d1cp-20f;
    float r = a - c;
    float rl = (a - r) - c;                               /* x - k ln2 = r + rl */
    float q = 0x1.9e7c7ep-13f;
    q = q * r + 0x1.6d3a60p-10f;
    q = q * r + 0x1.1112d4p-7f;
    q = q * r + 0x1.5554f8p-5f;
    q = q * r + 0x1.555554p-3f;
    float t = (r * r) * (0.5f + r * q);
    float eh = r + t;                                     /* expm1(r) = eh + el */
    float el = ((r - eh) + t) + rl * (1.0f + r);
    int32_t k = (int32_t)kf;
    float T = tl__pow2f(k > 24 ? 24 : k);
    float A = T - 1.0f, B = eh * T;                       /* exact for |k| <= 24 */
    float sum = A + B;
    float bb = sum - A;
    float err = (A - (sum - bb)) + (B - bb);
    float med = sum + (err + el * T);
    int32_t k1 = k >> 1;
    float s1 = tl__pow2f(k1), s2 = tl__pow2f(k - k1);
    float ph = 1.0f + eh;                                 /* 1 + expm1(r) = ph + pl */
    float pl = ((1.0f - ph) + eh) + el;
    float big = (ph * s1) * s2 + ((pl * s1) * s2 - 1.0f);
    big = tl__self(big != big, (float)INFINITY, big);     /* inf + -inf past overflow */
    float res = tl__self(k > 24, big, med);
    res = tl__self(x == 0.0f, x, res);
    return tl__self(x == x, res, x);
}

/* ------------------------------------------------------------------ log family */

/* For finite x > 0 (subnormals included): x = 2^k (1 + f), 1 + f in [sqrt(1/2), sqrt(2)).
   Returns f (exact), k in *kf. */
TL_MATH_INLINE float tl__log_split(float x, float *kf)
{
    int sub = x < 0x1p-126f;
    float xs = tl__self(sub, x * 0x1p23f, x);
    uint32_t u = tl__fbits(xs) - 0x3f3504f3u;           /* bits of sqrt(1/2) */
    *kf = (float)(((int32_t)u >> 23) - (sub ? 23 : 0));
    return tl__bitsf((u & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
}

/* The pieces of log1p(f) = f - hfsq + s (hfsq + R), s = f / (2 + f), hfsq = f^2 / 2, where
   R = 2 atanh(s)/s - 2 ~ z (c0 + c1 z + c2 z^2), z = s^2 <= 0.0295 (relative error 2^-30). */
TL_MATH_INLINE float tl__log1p_R(float f, float *s, float *hfsq)
{
    *s = f / (2.0f + f);
    float z = *s * *s;
    *hfsq = 0.5f * f * f;
    return z * (0x1.55557ap-1f + z * (0x1.995ec4p-2f + z * 0x1.31e3b6p-2f));
}

/* Shared special cases of the log family: NaN, x < 0 -> NaN, 0 -> -inf, +inf -> +inf.
   (pole is the argument where the result is -inf: 0 for log, -1 for log1p.) */
TL_MATH_INLINE float tl__log_special(float x, float pole, float r)
{
    r = tl__self(x < pole, (float)NAN, r);
    r = tl__self(x == pole, -(float)INFINITY, r);
    r = tl__self(x == (float)INFINITY, x, r);
    return tl__self(x == x, r, x);
}

/* log(1 + f) in double for f in [sqrt(1/2) - 1, sqrt(2) - 1], relative error 2^-34:
   2 atanh(s) = 2s (1 + z/3 + z^2/5 + ... + z^5/11), s = f / (2 + f), z = s^2 <= 0.0295. */
TL_MATH_INLINE double tl__log1p_d(double f)
{
    double s = f * tl__recip_d(2.0 + f);
    double z = s * s;
    double p = 1.0 / 11;
    p = p * z + 1.0 / 9;
    p = p * z + 1.0 / 7;
    p = p * z + 1.0 / 5;
    p = p * z + 1.0 / 3;
    return 2.0 * s + (2.0 * s) * (z * p);
}

/* log2, log10: < 0.51 ulp; log2 exact for powers of two. With x = 2^k (1 + f):
   log_b(1 + f) = f Q(f), Q of degree 11 (relative error 2^-33): its terms from f^4 on in
   float (worth < 0.03 of the result, so float rounding there costs < 2^-29 of it), the
   first four and k + f Q (or k log10(2) + f Q) in double with fused multiply-adds, rounded
   once. No division (the s = f / (2 + f) form needs one per lane). */
#define TL__LOGB_F(B0, B1, B2, B3, B4, B5, B6, B7, D3, D2, D1, D0, KMUL)                     \
    float kf, f = tl__log_split(x, &kf);                                                     \
    float p = B0;                                                                            \
    p = tl__fmaf(p, f, B1);                                                                  \
    p = tl__fmaf(p, f, B2);                                                                  \
    p = tl__fmaf(p, f, B3);                                                                  \
    p = tl__fmaf(p, f, B4);                                                                  \
    p = tl__fmaf(p, f, B5);                                                                  \
    p = tl__fmaf(p, f, B6);                                                                  \
    p = tl__fmaf(p, f, B7);                                                                  \
    double fd = f;                                                                           \
    double q = tl__fma((double)p, fd, D3);                                                   \
    q = tl__fma(q, fd, D2);                                                                  \
    q = tl__fma(q, fd, D1);                                                                  \
    q = tl__fma(q, fd, D0);                                                                  \
    double r = tl__fma(q, fd, (double)kf * KMUL);                                            \
    return tl__log_special(x, 0.0f, (float)r);

/* log: < 0.51 ulp (0.5094 measured over every float), table-driven and all in float (PyTorch's
   float log errs 0.51-0.54 ulp with its AVX-512 kernels on Intel CPUs, 0.79 with its AVX2
   ones). x = 2^k m with m in [0.6927, 1.3854) as bits; entry i of 32 (the next 5 bits of m)
   gives invc = 1/c, c near m, and -log(invc) as hi + lo (tools/math_tables.py). Then
   r = m invc - 1 = rh + pl exactly (|r| <= 0.0153; pl from a fused multiply-add), and
       log x = (k ln2_hi + hi) + rh + [pl (1 - r) + k ln2_lo + lo + r^3 Q(r) - r^2/2]:
   the first sum is exact, adding rh is a Fast2Sum (|k ln2_hi + hi| >= |rh| where it is not
   0), and the bracket is small beside it, so the result is rounded about once; -r^2/2 is
   the bracket's last fused multiply-add (r times the exact -r/2), and Q of degree 3 is
   log1p's Taylor series (error 2^-40 of the result). The entry of 1.0 has c = 1 and no hi
   or lo, so log stays relative near 1. Against the form before it (a polynomial of degree
   11 in f = m - 1, partly in double): 0.60 -> 0.30 ns per element on an Intel core through
   the AVX-512 array version below. */
static const float tl__logf_tab[3][32] = {
    {   /* 1/c */
        0x1.6d713ep+0f, 0x1.657816p+0f, 0x1.5dd616p+0f, 0x1.5685ccp+0f,
        0x1.4f822ep+0f, 0x1.48c6a2p+0f, 0x1.424ee4p+0f, 0x1.3c170cp+0f,
        0x1.361b74p+0f, 0x1.3058c4p+0f, 0x1.2acbdcp+0f, 0x1.2571dcp+0f,
        0x1.204812p+0f, 0x1.1b4bfcp+0f, 0x1.167b48p+0f, 0x1.11d3cap+0f,
        0x1.0d5376p+0f, 0x1.08f868p+0f, 0x1.04c0d8p+0f, 0x1p+0f,
        0x1.f3014ap-1f, 0x1.e44192p-1f, 0x1.d65aa2p-1f, 0x1.c93a56p-1f,
        0x1.bcd08p-1f, 0x1.b10ea8p-1f, 0x1.a5e7d2p-1f, 0x1.9b5054p-1f,
        0x1.913da4p-1f, 0x1.87a63ep-1f, 0x1.7e817ep-1f, 0x1.75c78ap-1f,
    },
    {   /* -log(1/c), hi */
        -0x1.6c78p-2f, -0x1.55e4p-2f, -0x1.3fc8p-2f, -0x1.2a24p-2f,
        -0x1.14f8p-2f, -0x1.0034p-2f, -0x1.d7b8p-3f, -0x1.afdp-3f,
        -0x1.88bp-3f, -0x1.6248p-3f, -0x1.3c98p-3f, -0x1.179p-3f,
        -0x1.e67p-4f, -0x1.9fp-4f, -0x1.58cp-4f, -0x1.13cp-4f,
        -0x1.9fcp-5f, -0x1.1a2p-5f, -0x1.2d8p-6f, 0x0p+0f,
        0x1.a54p-6f, 0x1.c86p-5f, 0x1.5b8p-4f, 0x1.cf7p-4f,
        0x1.2018p-3f, 0x1.56fp-3f, 0x1.8c6p-3f, 0x1.c07p-3f,
        0x1.f338p-3f, 0x1.1264p-2f, 0x1.2a94p-2f, 0x1.4234p-2f,
    },
    {   /* -log(1/c), lo */
        -0x1.33be68p-18f, 0x1.9aeadap-18f, -0x1.809834p-20f, -0x1.eea79cp-18f,
        0x1.f0f1ecp-18f, -0x1.394f46p-21f, 0x1.8c9234p-21f, -0x1.ed6f6cp-19f,
        0x1.47221p-20f, -0x1.5f9a68p-20f, 0x1.17330cp-19f, -0x1.cbad6ap-18f,
        -0x1.ed7012p-21f, 0x1.595576p-21f, -0x1.d232a4p-18f, 0x1.ae22a4p-20f,
        0x1.755cb6p-18f, -0x1.6af75p-20f, 0x1.42cee8p-18f, 0x0p+0f,
        -0x1.5fd03cp-19f, 0x1.b68ff6p-21f, 0x1.601798p-24f, -0x1.4099ap-20f,
        -0x1.c6a1ccp-19f, 0x1.3dc726p-18f, 0x1.6a87a6p-21f, 0x1.36038ap-18f,
        0x1.f945f4p-19f, -0x1.09af4p-19f, 0x1.1e1274p-21f, 0x1.e48052p-18f,
    },
};
#define TL__LN2_HI16 0x1.62e4p-1f
#define TL__LN2_LO16 0x1.7f7d1cp-20f

/* tl_logf after the split, for m (normal, in [0.6927, 1.3854)), kf = k and entry i's invc,
   hi and lo: written once for the scalar function (T = float) and the AVX-512 array version
   (T = a vector of 16 floats, C a constant broadcast to it), so both round alike. */
#define TL__LOGF_BODY(T, C, FMA, m, kf, invc, hi, lo, res)                                   \
    do {                                                                                    \
        T ph_ = m * invc;                                                                   \
        T pl_ = FMA(m, invc, -ph_);                          /* m invc = ph + pl exactly */  \
        T r_ = ph_ - 1.0f;                                                                  \
        T a_ = FMA(kf, C(TL__LN2_HI16), hi);                 /* exact */                    \
        T s_ = a_ + r_;                                                                     \
        T e_ = r_ - (s_ - a_);                               /* Fast2Sum: s + e = a + r */  \
        T q_ = FMA(C(-0x1.555556p-3f), r_, C(0x1.99999ap-3f));                              \
        q_ = FMA(q_, r_, C(-0.25f));                                                        \
        q_ = FMA(q_, r_, C(0x1.555556p-2f));                                                \
        T t_ = FMA(-r_, pl_, pl_) + e_;                      /* pl (1 - r): log1p' at r */   \
        t_ = FMA(kf, C(TL__LN2_LO16), t_);                                                  \
        t_ = t_ + lo;                                                                       \
        t_ = FMA((r_ * r_) * r_, q_, t_);                                                   \
        t_ = FMA(r_, -0.5f * r_, t_);                        /* -r^2/2, rounded once */     \
        res = s_ + t_;                                                                      \
    } while (0)

TL_MATH_INLINE float tl_logf(float x)
{
    uint32_t ix = tl__fbits(x);
    int sub = ix < 0x00800000u;
    ix = tl__fbits(tl__self(sub, x * 0x1p23f, x));              /* subnormals: exact */
    uint32_t tmp = ix - 0x3f315556u;
    int32_t k = ((int32_t)tmp >> 23) - (sub ? 23 : 0);
    uint32_t i = (tmp >> 18) & 31;
    float m = tl__bitsf(ix - (tmp & 0xff800000u)), kf = (float)k, res;
    TL__LOGF_BODY(float, TL__SCALAR_C, tl__fmaf, m, kf, tl__logf_tab[0][i], tl__logf_tab[1][i],
                  tl__logf_tab[2][i], res);
    return tl__log_special(x, 0.0f, res);
}

/* tl_logf over a contiguous array, the same bits. Where the CPU has AVX-512 (tested at run
   time), blocks of 16 go through tl__logf_v16: TL__LOGF_BODY on GCC vectors, each table
   column fetched for the 16 lanes by one two-register permute (vpermt2ps); with AVX2 and
   FMA, blocks of 8 through tl__logf_v8, each column by two permutes (vpermps) and a blend.
   A block with a zero, subnormal, negative, infinite or NaN x goes per element instead, so
   the vector paths have no special cases to select. Elsewhere, and for the last few, tl_logf
   per element: its table loads become gathers or scalar loads, 1.4x (AVX2) to 3x (AVX-512)
   slower than the permutes, which is why strided operands are first copied in blocks
   (cpu_elementwise.c). */
#ifdef TL__V16
static __attribute__((target("avx512f"), unused)) void tl__logf_v16(const float *x, float *o,
                                                                    int64_t n)
{
    for (int64_t b = 0; b < n; b += 16) {
        tl__v16u ix;
        memcpy(&ix, x + b, 64);
        tl__v16i special = (ix - 0x00800000u) >= 0x7f000000u;          /* not positive normal */
        if (_mm512_test_epi32_mask((__m512i)special, (__m512i)special)) {
            for (int j = 0; j < 16; j++) o[b + j] = tl_logf(x[b + j]);
            continue;
        }
        tl__v16u tmp = ix - 0x3f315556u;
        tl__v16i i = (tl__v16i)(tmp >> 18) & 31;
        tl__v16f m = (tl__v16f)(ix - (tmp & 0xff800000u));
        tl__v16f kf = __builtin_convertvector((tl__v16i)tmp >> 23, tl__v16f), res;
        TL__LOGF_BODY(tl__v16f, TL__V16C, tl__v16_fma, m, kf, tl__v16_tab(tl__logf_tab[0], i),
                      tl__v16_tab(tl__logf_tab[1], i), tl__v16_tab(tl__logf_tab[2], i), res);
        memcpy(o + b, &res, 64);
    }
}

static __attribute__((target("avx2,fma"), unused)) void tl__logf_v8(const float *x, float *o,
                                                                   int64_t n)
{
    for (int64_t b = 0; b < n; b += 8) {
        tl__v8u32 ix;
        memcpy(&ix, x + b, 32);
        tl__v8i32 special = (ix - 0x00800000u) >= 0x7f000000u;
        if (!_mm256_testz_si256((__m256i)special, (__m256i)special)) {
            for (int j = 0; j < 8; j++) o[b + j] = tl_logf(x[b + j]);
            continue;
        }
        tl__v8u32 tmp = ix - 0x3f315556u;
        tl__v8i32 i = (tl__v8i32)(tmp >> 18) & 31;
        tl__v8f m = (tl__v8f)(ix - (tmp & 0xff800000u));
        tl__v8f kf = __builtin_convertvector((tl__v8i32)tmp >> 23, tl__v8f), res;
        TL__LOGF_BODY(tl__v8f, TL__V8FC, tl__v8f_fma, m, kf, tl__v8f_tab(tl__logf_tab[0], i),
                      tl__v8f_tab(tl__logf_tab[1], i), tl__v8f_tab(tl__logf_tab[2], i), res);
        memcpy(o + b, &res, 32);
    }
}
#endif

/* tl_logf_n without prefetching (for a buffer already in the caches) */
TL__ARRAY_PATHS(tl__logf_n, tl_logf, tl__logf_v16, tl__logf_v8)

TL__ARRAY_PREFETCHED(tl_logf_n, tl__logf_n)

TL_MATH_INLINE float tl_log2f(float x)
{
    TL__LOGB_F(-0x1.61ab1ap-4f, 0x1.3d2584p-3f, -0x1.417ffep-3f, 0x1.45a2acp-3f, -0x1.6eb02cp-3f,
               0x1.a615cap-3f, -0x1.ec8d74p-3f, 0x1.277732p-2f, -0x1.715435ac5d458p-2,
               0x1.ec709c14d91eep-2, -0x1.7154767d8d04cp-1, 0x1.71547652de8f5p+0, 1.0)
}

TL_MATH_INLINE float tl_log10f(float x)
{
    TL__LOGB_F(-0x1.a9dbf4p-6f, 0x1.7de1eap-5f, -0x1.831fe0p-5f, 0x1.881aa8p-5f, -0x1.b9895ap-5f,
               0x1.fc3db8p-5f, -0x1.288bd2p-4f, 0x1.63c6acp-4f, -0x1.bcb763f360277p-4,
               0x1.287a75237021ap-3, -0x1.bcb7b182ca5e8p-3, 0x1.bcb7b152b8ba1p-2,
               0x1.34413509f79ffp-2)
}
#undef TL__LOGB_F

/* log1p: < 1 ulp; log1p(x) = x for tiny x, keeps -0. u = 1 + x is rounded, so
   log1p(x) = log(u) + c with c = (x - (u - 1)) / u restoring the lost low bits (and
   log1p(x + xl) for a small low part xl, the same way). */
TL_MATH_INLINE float tl__log1p_l(float x, float xl)
{
    float u = 1.0f + x;
    float kf, s, hfsq;
    float f = tl__log_split(u, &kf);
    float R = tl__log1p_R(f, &s, &hfsq);
    float c = ((x - (u - 1.0f)) + xl) / u;
    float r = kf * 0x1.62e4p-1f - ((hfsq - (s * (hfsq + R) + (kf * 0x1.7f7d1cp-20f + c))) - f);
    r = tl__self(x == 0.0f, x, r);
    return tl__log_special(x, -1.0f, r);
}

TL_MATH_INLINE float tl_log1pf(float x) { return tl__log1p_l(x, 0.0f); }

/* pow(x, y): < 0.53 ulp (0.508 measured), C99 Annex F special values. Branch-free and
   vectorized (glibc's powf is not): |x|^y = 2^t, t = y log2|x| in double. log2|x| =
   k + f Q(f) as for tl_log2f but with Q of degree 13 (relative error 2^-38), its terms from
   f^6 on in float (< 2^-10 of it) and the others in double, so t is good to about 2^-33
   relative, 2^-26 absolute at the largest |t| that does not overflow or underflow;
   2^t = 2^n 2^r, n = rint(t), r = t - n exact, 2^r of degree 7 (relative error 2^-34), its
   terms from r^4 on (< 2^-10) in float, the rest in double, so one rounding to float
   makes overflow inf and underflow gradual. Then the special cases: |x| = 0 or inf enters
   as log2|x| = -inf or inf, so 2^t is 0 or inf by the sign of y; x < 0 (-0 and -inf too)
   takes the sign (-1)^y for odd integer y, and finite x < 0 gives NaN for non-integer y;
   pow(-1, +-inf) = 1; pow(x, +-0) = 1 and pow(1, y) = 1 even for a NaN; other NaNs
   propagate. y integer / odd: rint by the 2^23 constant. */
TL_MATH_INLINE float tl_powf(float x, float y)
{
    float ax = tl__absf(x);
    float kf, f = tl__log_split(ax, &kf);
    kf = tl__self(ax == 0.0f, -(float)INFINITY, kf);      /* log2 0 = -inf, log2 inf = inf: */
    kf = tl__self(ax == (float)INFINITY, ax, kf);         /* then 2^(y log2|x|) is 0 or inf */
    float p = -0x1.1da5cep-4f;
    p = tl__fmaf(p, f, 0x1.0f6218p-3f);
    p = tl__fmaf(p, f, -0x1.13b89ap-3f);
    p = tl__fmaf(p, f, 0x1.0ace0ap-3f);
    p = tl__fmaf(p, f, -0x1.23d652p-3f);
    p = tl__fmaf(p, f, 0x1.481faap-3f);
    p = tl__fmaf(p, f, -0x1.7188d2p-3f);
    p = tl__fmaf(p, f, 0x1.a61b7ep-3f);
    double fd = f;
    double q = tl__fma((double)p, fd, -0x1.ec6f2e486f002p-3);
    q = tl__fma(q, fd, 0x1.2776b6cde6ac9p-2);
    q = tl__fma(q, fd, -0x1.71547885889f8p-2);
    q = tl__fma(q, fd, 0x1.ec709de3224d2p-2);
    q = tl__fma(q, fd, -0x1.71547651bce36p-1);
    q = tl__fma(q, fd, 0x1.71547652b5952p+0);
    double t = (double)y * tl__fma(q, fd, (double)kf);    /* y log2|x| */
    t = tl__seld(t < -200.0, -200.0, t);
    t = tl__seld(t > 200.0, 200.0, t);                    /* NaN passes (selected away) */
    double tn = t + 0x1.8p52;                             /* 1.5 2^52 + n */
    double r = t - (tn - 0x1.8p52);
    float rf = (float)r;                                  /* 2^r's terms from r^4 on in float */
    float eh = 0x1.fde5f8p-17f;
    eh = tl__fmaf(eh, rf, 0x1.445c84p-13f);
    eh = tl__fmaf(eh, rf, 0x1.5d8a86p-10f);
    eh = tl__fmaf(eh, rf, 0x1.3b29f4p-7f);
    double e = tl__fma((double)eh, r, 0x1.c6b08ac06649ap-5);
    e = tl__fma(e, r, 0x1.ebfbe07787bbap-3);
    e = tl__fma(e, r, 0x1.62e42ff0e1952p-1);
    e = tl__fma(e, r, 1.0);
    float mag = (float)(e * tl__bitsd((tl__dbits(tn) + 1023u) << 52));
    /* y integer (always from 2^23 on) and odd (never from 2^24 on): rint by 2^23 */
    float ay = tl__absf(y), hy = 0.5f * ay;
    int yint = (ay >= 0x1p23f) | (((ay + 0x1p23f) - 0x1p23f) == ay);
    int yodd = yint & (ay < 0x1p24f) & (((hy + 0x1p23f) - 0x1p23f) != hy);
    float res = tl__self(yodd, tl__signf(mag, x), mag);  /* x < 0 (and -0, -inf): (-1)^y */
    res = tl__self((x < 0.0f) & (x != -(float)INFINITY) & !yint, (float)NAN, res);
    res = tl__self(__builtin_isunordered(x, y), x + y, res);
    int one = (y == 0.0f) | (x == 1.0f) | ((x == -1.0f) & (ay == (float)INFINITY));
    res = tl__self(one, 1.0f, res);
    return res;
}

/* ------------------------------------------------------------------ sin, cos, tan */

/* |x| < 2^20: Cody-Waite in double, q = rint(x 2/pi), r = x - q P1 - q P2 with
   pi/2 = P1 (33 bits, so q P1 is exact) + P2: r good to 2^-64 absolute. Fused
   multiply-adds here and in the kernels below: half the operations. */
TL_MATH_INLINE double tl__trig_cw(float x, int32_t *q)
{
    double xd = x;
    double t = tl__fma(xd, 0x1.45f306dc9c883p-1, 0x1.8p52);   /* 1.5 2^52 + q */
    double kd = t - 0x1.8p52;
    *q = (int32_t)(uint32_t)tl__dbits(t);
    return tl__fma(kd, -0x1.0b4611a626331p-34, tl__fma(kd, -0x1.921fb544p+0, xd));
}

/* (2/pi) 2^(e-150) mod 4 for biased exponents e = 147..255, as 2.94 fixed point in three
   32-bit words (truncated): a float x = m 2^(e-150) with integer m < 2^24 has
   x (2/pi) mod 4 = m * this mod 4, which is all the quadrant reduction needs. */
static const uint32_t tl__twoopi_tab[109][3] = {
    {0x0517cc1bu, 0x727220a9u, 0x4fe13abeu}, {0x0a2f9836u, 0xe4e44152u, 0x9fc2757du},
    {0x145f306du, 0xc9c882a5u, 0x3f84eafau}, {0x28be60dbu, 0x9391054au, 0x7f09d5f4u},
    {0x517cc1b7u, 0x27220a94u, 0xfe13abe8u}, {0xa2f9836eu, 0x4e441529u, 0xfc2757d1u},
    {0x45f306dcu, 0x9c882a53u, 0xf84eafa3u}, {0x8be60db9u, 0x391054a7u, 0xf09d5f47u},
    {0x17cc1b72u, 0x7220a94fu, 0xe13abe8fu}, {0x2f9836e4u, 0xe441529fu, 0xc2757d1fu},
    {0x5f306dc9u, 0xc882a53fu, 0x84eafa3eu}, {0xbe60db93u, 0x91054a7fu, 0x09d5f47du},
    {0x7cc1b727u, 0x220a94feu, 0x13abe8fau}, {0xf9836e4eu, 0x441529fcu, 0x2757d1f5u},
    {0xf306dc9cu, 0x882a53f8u, 0x4eafa3eau}, {0xe60db939u, 0x1054a7f0u, 0x9d5f47d4u},
    {0xcc1b7272u, 0x20a94fe1u, 0x3abe8fa9u}, {0x9836e4e4u, 0x41529fc2u, 0x757d1f53u},
    {0x306dc9c8u, 0x82a53f84u, 0xeafa3ea6u}, {0x60db9391u, 0x054a7f09u, 0xd5f47d4du},
    {0xc1b72722u, 0x0a94fe13u, 0xabe8fa9au}, {0x836e4e44u, 0x1529fc27u, 0x57d1f534u},
    {0x06dc9c88u, 0x2a53f84eu, 0xafa3ea69u}, {0x0db93910u, 0x54a7f09du, 0x5f47d4d3u},
    {0x1b727220u, 0xa94fe13au, 0xbe8fa9a6u}, {0x36e4e441u, 0x529fc275u, 0x7d1f534du},
    {0x6dc9c882u, 0xa53f84eau, 0xfa3ea69bu}, {0xdb939105u, 0x4a7f09d5u, 0xf47d4d37u},
    {0xb727220au, 0x94fe13abu, 0xe8fa9a6eu}, {0x6e4e4415u, 0x29fc2757u, 0xd1f534ddu},
    {0xdc9c882au, 0x53f84eafu, 0xa3ea69bbu}, {0xb9391054u, 0xa7f09d5fu, 0x47d4d377u},
    {0x727220a9u, 0x4fe13abeu, 0x8fa9a6eeu}, {0xe4e44152u, 0x9fc2757du, 0x1f534ddcu},
    {0xc9c882a5u, 0x3f84eafau, 0x3ea69bb8u}, {0x9391054au, 0x7f09d5f4u, 0x7d4d3770u},
    {0x27220a94u, 0xfe13abe8u, 0xfa9a6ee0u}, {0x4e441529u, 0xfc2757d1u, 0xf534ddc0u},
    {0x9c882a53u, 0xf84eafa3u, 0xea69bb81u}, {0x391054a7u, 0xf09d5f47u, 0xd4d37703u},
    {0x7220a94fu, 0xe13abe8fu, 0xa9a6ee06u}, {0xe441529fu, 0xc2757d1fu, 0x534ddc0du},
    {0xc882a53fu, 0x84eafa3eu, 0xa69bb81bu}, {0x91054a7fu, 0x09d5f47du, 0x4d377036u},
    {0x220a94feu, 0x13abe8fau, 0x9a6ee06du}, {0x441529fcu, 0x2757d1f5u, 0x34ddc0dbu},
    {0x882a53f8u, 0x4eafa3eau, 0x69bb81b6u}, {0x1054a7f0u, 0x9d5f47d4u, 0xd377036du},
    {0x20a94fe1u, 0x3abe8fa9u, 0xa6ee06dbu}, {0x41529fc2u, 0x757d1f53u, 0x4ddc0db6u},
    {0x82a53f84u, 0xeafa3ea6u, 0x9bb81b6cu}, {0x054a7f09u, 0xd5f47d4du, 0x377036d8u},
    {0x0a94fe13u, 0xabe8fa9au, 0x6ee06db1u}, {0x1529fc27u, 0x57d1f534u, 0xddc0db62u},
    {0x2a53f84eu, 0xafa3ea69u, 0xbb81b6c5u}, {0x54a7f09du, 0x5f47d4d3u, 0x77036d8au},
    {0xa94fe13au, 0xbe8fa9a6u, 0xee06db14u}, {0x529fc275u, 0x7d1f534du, 0xdc0db629u},
    {0xa53f84eau, 0xfa3ea69bu, 0xb81b6c52u}, {0x4a7f09d5u, 0xf47d4d37u, 0x7036d8a5u},
    {0x94fe13abu, 0xe8fa9a6eu, 0xe06db14au}, {0x29fc2757u, 0xd1f534ddu, 0xc0db6295u},
    {0x53f84eafu, 0xa3ea69bbu, 0x81b6c52bu}, {0xa7f09d5fu, 0x47d4d377u, 0x036d8a56u},
    {0x4fe13abeu, 0x8fa9a6eeu, 0x06db14acu}, {0x9fc2757du, 0x1f534ddcu, 0x0db62959u},
    {0x3f84eafau, 0x3ea69bb8u, 0x1b6c52b3u}, {0x7f09d5f4u, 0x7d4d3770u, 0x36d8a566u},
    {0xfe13abe8u, 0xfa9a6ee0u, 0x6db14accu}, {0xfc2757d1u, 0xf534ddc0u, 0xdb629599u},
    {0xf84eafa3u, 0xea69bb81u, 0xb6c52b32u}, {0xf09d5f47u, 0xd4d37703u, 0x6d8a5664u},
    {0xe13abe8fu, 0xa9a6ee06u, 0xdb14acc9u}, {0xc2757d1fu, 0x534ddc0du, 0xb6295993u},
    {0x84eafa3eu, 0xa69bb81bu, 0x6c52b327u}, {0x09d5f47du, 0x4d377036u, 0xd8a5664fu},
    {0x13abe8fau, 0x9a6ee06du, 0xb14acc9eu}, {0x2757d1f5u, 0x34ddc0dbu, 0x6295993cu},
    {0x4eafa3eau, 0x69bb81b6u, 0xc52b3278u}, {0x9d5f47d4u, 0xd377036du, 0x8a5664f1u},
    {0x3abe8fa9u, 0xa6ee06dbu, 0x14acc9e2u}, {0x757d1f53u, 0x4ddc0db6u, 0x295993c4u},
    {0xeafa3ea6u, 0x9bb81b6cu, 0x52b32788u}, {0xd5f47d4du, 0x377036d8u, 0xa5664f10u},
    {0xabe8fa9au, 0x6ee06db1u, 0x4acc9e21u}, {0x57d1f534u, 0xddc0db62u, 0x95993c43u},
    {0xafa3ea69u, 0xbb81b6c5u, 0x2b327887u}, {0x5f47d4d3u, 0x77036d8au, 0x5664f10eu},
    {0xbe8fa9a6u, 0xee06db14u, 0xacc9e21cu}, {0x7d1f534du, 0xdc0db629u, 0x5993c439u},
    {0xfa3ea69bu, 0xb81b6c52u, 0xb3278872u}, {0xf47d4d37u, 0x7036d8a5u, 0x664f10e4u},
    {0xe8fa9a6eu, 0xe06db14au, 0xcc9e21c8u}, {0xd1f534ddu, 0xc0db6295u, 0x993c4390u},
    {0xa3ea69bbu, 0x81b6c52bu, 0x32788720u}, {0x47d4d377u, 0x036d8a56u, 0x64f10e41u},
    {0x8fa9a6eeu, 0x06db14acu, 0xc9e21c82u}, {0x1f534ddcu, 0x0db62959u, 0x93c43904u},
    {0x3ea69bb8u, 0x1b6c52b3u, 0x27887208u}, {0x7d4d3770u, 0x36d8a566u, 0x4f10e410u},
    {0xfa9a6ee0u, 0x6db14accu, 0x9e21c820u}, {0xf534ddc0u, 0xdb629599u, 0x3c439041u},
    {0xea69bb81u, 0xb6c52b32u, 0x78872083u}, {0xd4d37703u, 0x6d8a5664u, 0xf10e4107u},
    {0xa9a6ee06u, 0xdb14acc9u, 0xe21c820fu}, {0x534ddc0du, 0xb6295993u, 0xc439041fu},
    {0xa69bb81bu, 0x6c52b327u, 0x8872083fu}, {0x4d377036u, 0xd8a5664fu, 0x10e4107fu},
    {0x9a6ee06du, 0xb14acc9eu, 0x21c820ffu},
};

/* |x| >= 2^20, exact for every float (Payne-Hanek): x (2/pi) mod 4 = m (table[e] mod 4) in
   2.62 fixed point with 64-bit integers (multiplies, shifts and adds, so it vectorizes),
   rounded to the nearest quadrant. The fixed-point remainder is good to 2^-60, and no
   float comes closer than about 2^-30 to a multiple of pi/2, so r keeps >= 30 bits. */
TL_MATH_INLINE double tl__trig_ph(float x, int32_t *q)
{
    uint32_t ax = tl__fbits(x) & 0x7fffffffu;
    uint32_t e = ax >> 23;
    uint32_t i = e < 147u ? 0u : e - 147u;
    uint32_t m = (ax & 0x007fffffu) | 0x00800000u;
    uint64_t acc = (((uint64_t)m * tl__twoopi_tab[i][0]) << 32) + (uint64_t)m * tl__twoopi_tab[i][1]
                   + (((uint64_t)m * tl__twoopi_tab[i][2]) >> 32);
    acc += (uint64_t)1 << 61;                             /* + 1/2: round to nearest quadrant */
    int32_t qb = (int32_t)(acc >> 62);
    uint64_t g = acc & (((uint64_t)1 << 62) - 1);        /* r / (pi/2) + 1/2, 0.62 fixed point */
    int32_t fhi = (int32_t)(g >> 31) - (1 << 30);
    int32_t flo = (int32_t)(g & 0x7fffffffu);
    double r = ((double)fhi * 0x1p-31 + (double)flo * 0x1p-62) * 0x1.921fb54442d18p+0;
    int neg = x < 0.0f;
    *q = tl__seli(neg, -qb, qb);
    return tl__seld(neg, -r, r);
}

TL_MATH_INLINE int tl__trig_big(float x) { return (tl__fbits(x) & 0x7fffffffu) >= 0x49800000u; }

/* x = q pi/2 + r, |r| <= pi/4 (+ rounding), for every float; only q mod 4 matters. */
TL_MATH_INLINE double tl__trig_reduce(float x, int32_t *q)
{
    int32_t qc, qp;
    double rc = tl__trig_cw(x, &qc);
    double rp = tl__trig_ph(x, &qp);
    int big = tl__trig_big(x);
    *q = tl__seli(big, qp, qc);
    return tl__seld(big, rp, rc);
}

/* sin(r) and cos(r) for |r| <= pi/4 given in double: double polynomials
   (sin r = r + r^3 S(r^2), relative error 2^-37; cos r = 1 - r^2/2 + r^4 C(r^2), 2^-42),
   each rounded once to float. */
TL_MATH_INLINE float tl__sincos_kernel(double r, float *c)
{
    double z = r * r;
    double ps = 0x1.6cd1ea85737b7p-19;
    ps = tl__fma(ps, z, -0x1.a00f7f06c2ef6p-13);
    ps = tl__fma(ps, z, 0x1.1111086a377ffp-7);
    ps = tl__fma(ps, z, -0x1.5555554c71982p-3);
    double pc = -0x1.241e996c0d955p-22;
    pc = tl__fma(pc, z, 0x1.a010dec433462p-16);
    pc = tl__fma(pc, z, -0x1.6c16b82a0432ap-10);
    pc = tl__fma(pc, z, 0x1.5555554ed9765p-5);
    *c = (float)tl__fma(z * z, pc, tl__fma(-0.5, z, 1.0));
    return (float)tl__seld(r == 0.0, r, tl__fma(r * z, ps, r));   /* keeps -0 */
}

/* the quadrant's sign and swap: sin(x) from q and sin/cos of r */
TL_MATH_INLINE float tl__quadrant(int32_t q, float s, float c)
{
    float v = tl__self(q & 1, c, s);
    return tl__self((q >> 1) & 1, -v, v);
}

TL_MATH_INLINE int tl__nonfinitef(float x) { return (tl__fbits(x) & 0x7fffffffu) >= 0x7f800000u; }

/* sin: < 0.51 ulp for every finite float (exact range reduction at any magnitude);
   sin(+-inf) = NaN. For contiguous arrays tl_sinf_n is several times faster. */
TL_MATH_INLINE float tl_sinf(float x)
{
    int32_t q;
    float c, s = tl__sincos_kernel(tl__trig_reduce(x, &q), &c);
    return tl__self(tl__nonfinitef(x), x - x, tl__quadrant(q, s, c));
}

/* cos: < 0.51 ulp for every finite float; cos(+-inf) = NaN. */
TL_MATH_INLINE float tl_cosf(float x)
{
    int32_t q;
    float c, s = tl__sincos_kernel(tl__trig_reduce(x, &q), &c);
    return tl__self(tl__nonfinitef(x), x - x, tl__quadrant(q + 1, s, c));
}

/* tan of a reduced argument: sin/cos polynomials in double (relative errors 2^-37 and
   2^-42) divided in double, so the float result is rounded once. */
TL_MATH_INLINE float tl__tan_kernel(double r, int32_t q)
{
    double z = r * r;
    double ps = 0x1.6cd1ea85737b7p-19;
    ps = tl__fma(ps, z, -0x1.a00f7f06c2ef6p-13);
    ps = tl__fma(ps, z, 0x1.1111086a377ffp-7);
    ps = tl__fma(ps, z, -0x1.5555554c71982p-3);
    double s = tl__fma(r * z, ps, r);
    double pc = -0x1.241e996c0d955p-22;
    pc = tl__fma(pc, z, 0x1.a010dec433462p-16);
    pc = tl__fma(pc, z, -0x1.6c16b82a0432ap-10);
    pc = tl__fma(pc, z, 0x1.5555554ed9765p-5);
    double c = tl__fma(z * z, pc, tl__fma(-0.5, z, 1.0));
    int odd = q & 1;                                      /* tan = -cos/sin there */
    float t = (float)(tl__seld(odd, -c, s) * tl__recip_fma_d(tl__seld(odd, s, c)));
    return tl__self(r == 0.0, (float)r, t);               /* keeps -0 */
}

/* tan: < 0.51 ulp for every finite float; tan(+-inf) = NaN. */
TL_MATH_INLINE float tl_tanf(float x)
{
    int32_t q;
    double r = tl__trig_reduce(x, &q);
    return tl__self(tl__nonfinitef(x), x - x, tl__tan_kernel(r, q));
}

/* Contiguous-array versions (TL__BLOCKS): per block of 256, one vectorized pass looks for
   an |x| >= 2^20; blocks without one (always, for float16) take the Cody-Waite-only loop, which
   skips the Payne-Hanek work the branch-free scalar functions must always do. Call from a
   TL_DISPATCH function so the loops are cloned per ISA. Same results as tl_sinf etc. */
#define TL__TRIG_BLOCKS(FAST, FULL)                                                          \
    TL__BLOCKS((tl__fbits(x[i]) & 0x7fffffffu) >= 0x49800000u, FAST, FULL)

TL_MATH_INLINE float tl__sinf_cw(float x)
{
    int32_t q;
    float c, s = tl__sincos_kernel(tl__trig_cw(x, &q), &c);
    return tl__quadrant(q, s, c);
}
TL_MATH_INLINE float tl__cosf_cw(float x)
{
    int32_t q;
    float c, s = tl__sincos_kernel(tl__trig_cw(x, &q), &c);
    return tl__quadrant(q + 1, s, c);
}
TL_MATH_INLINE float tl__tanf_cw(float x)
{
    int32_t q;
    double r = tl__trig_cw(x, &q);
    return tl__tan_kernel(r, q);
}
TL_MATH_INLINE void tl_sinf_n(const float *x, float *o, int64_t n) { TL__TRIG_BLOCKS(tl__sinf_cw, tl_sinf) }
TL_MATH_INLINE void tl_cosf_n(const float *x, float *o, int64_t n) { TL__TRIG_BLOCKS(tl__cosf_cw, tl_cosf) }
TL_MATH_INLINE void tl_tanf_n(const float *x, float *o, int64_t n) { TL__TRIG_BLOCKS(tl__tanf_cw, tl_tanf) }

/* ------------------------------------------------------------------ hyperbolic, sigmoid */

/* tanh: < 0.51 ulp (0.5021 measured over every float; PyTorch's 0.563 on the same
   grids); saturates to +-1 (from |x| = 9.011), keeps -0, NaN passes through. In float with
   fused multiply-adds, erf's scheme (tl_erff): no exp, no division, no branch. Below
   |x| = 1/16: a + a z Q(z), z = a^2, Q of degree 2 (a z Q is at most 0.0013 a: its
   roundings cost < 0.003 ulp). From 1/16, |x| clamped to 9.02, 32 pieces, four to an
   octave (the top octave's last three never picked), by the exponent and top two
   mantissa bits: m the piece's middle, t = |x| - m exact (|t| <= 2^e/8),
       tanh(m + t) = C0h + t (d0h + c1 t)  +  (C0l + t (d0l + t^2 (c2 + c3 t + ... c6 t^4))),
   C0h + C0l = tanh(m), d0h + d0l = tanh'(m) as two floats each: the slope d0h + c1 t and
   then C0h + t (slope) are each formed as a float and its exact rounding error (fused
   multiply-adds), since the quadratic term alone reaches 0.6% of the result (near
   |x| = 1), where its float rounding cost 0.012 ulp. c1..c6: near-minimax, relative error
   <= 2^-34; tools/fit_tanh32.py fits and prints tl__tanhf_tab (row k: one coefficient of
   the 32 pieces in the slot (bits(|x|) >> 21) mod 32, which a two-register permute by
   those bits picks). Before: one form in double for every x (tanh a = E / (E + 2), E =
   e^2a - 1; 0.5001 ulp), per 16 lanes under AVX-512 about 85 vector instructions, most
   of them on 8 double lanes, and 3.2x PyTorch's time on one thread in cache. */
static const float tl__tanhf_tab[10][32] = {
    {   /* tanh(m), hi */
        0x1.f4bfd6p-1f, 0x1.fbd50ap-1f, 0x1.fe767ap-1f, 0x1.ff6f18p-1f,
        0x1.ffdfa8p-1f, 0x1.fffbap-1f, 0x1.ffff68p-1f, 0x1.ffffecp-1f,
        0x1.fffffep-1f, 0x1p+0f, 0x1p+0f, 0x1p+0f,
        0x1.1f86bep-4f, 0x1.5f22d2p-4f, 0x1.9e9356p-4f, 0x1.ddd092p-4f,
        0x1.1e1ddp-3f, 0x1.5c9308p-3f, 0x1.9a5f1cp-3f, 0x1.d7665cp-3f,
        0x1.18a39ap-2f, 0x1.52c2c6p-2f, 0x1.8a87e2p-2f, 0x1.bfae6ap-2f,
        0x1.05087p-1f, 0x1.3157ep-1f, 0x1.5789p-1f, 0x1.77d838p-1f,
        0x1.9e5cb6p-1f, 0x1.c278a6p-1f, 0x1.d9c6fap-1f, 0x1.e8789ep-1f,
    },
    {   /* tanh(m), lo */
        0x1.85bfa4p-26f, -0x1.46147p-27f, -0x1.45958cp-26f, -0x1.62ae24p-27f,
        -0x1.bd58dp-26f, -0x1.a07c2ep-26f, 0x1.3fb26ep-27f, -0x1.0eb872p-26f,
        0x1.f4b3aep-26f, 0x0p+0f, 0x0p+0f, 0x0p+0f,
        -0x1.3a17fap-29f, -0x1.2659bp-32f, 0x1.f48db8p-30f, 0x1.493e06p-29f,
        0x1.57365cp-29f, -0x1.bb0c72p-28f, -0x1.899af8p-31f, 0x1.f37706p-28f,
        -0x1.94b7bap-30f, -0x1.3c4f3ep-27f, -0x1.699878p-27f, 0x1.72e49cp-27f,
        -0x1.a1256ap-26f, -0x1.608ea4p-29f, -0x1.de5accp-26f, 0x1.c680bp-26f,
        -0x1.16eca6p-27f, -0x1.ab6372p-26f, 0x1.fcc39p-26f, 0x1.9d81bcp-26f,
    },
    {   /* t, hi */
        0x1.64108ap-5f, 0x1.09a7a6p-6f, 0x1.88ef68p-8f, 0x1.21a7aep-9f,
        0x1.02bec8p-11f, 0x1.1832dcp-14f, 0x1.2f5ffap-17f, 0x1.4875bcp-20f,
        0x1.05a628p-24f, 0x0p+0f, 0x0p+0f, 0x0p+0f,
        0x1.fd7a22p-1f, 0x1.fc3cbep-1f, 0x1.fac13ep-1f, 0x1.f9085ap-1f,
        0x1.f601cap-1f, 0x1.f12bp-1f, 0x1.eb715ap-1f, 0x1.e4dfb2p-1f,
        0x1.d98b36p-1f, 0x1.c7f724p-1f, 0x1.b3ff2ep-1f, 0x1.9e23aep-1f,
        0x1.7aeae6p-1f, 0x1.49e6cp-1f, 0x1.197fcep-1f, 0x1.d834d2p-2f,
        0x1.615002p-2f, 0x1.cea744p-3f, 0x1.265e34p-3f, 0x1.6fcfa6p-4f,
    },
    {   /* t, lo */
        0x1.49abfcp-30f, -0x1.1bbc76p-33f, -0x1.bdc4bep-33f, 0x1.de06bap-36f,
        0x1.6c68cp-36f, 0x1.a79b5cp-39f, -0x1.3da64ep-44f, 0x1.ee1d9p-45f,
        0x1.038f74p-50f, 0x0p+0f, 0x0p+0f, 0x0p+0f,
        -0x1.8e3abcp-26f, 0x1.fe680ep-26f, 0x1.f76d08p-28f, 0x1.397e7ep-28f,
        0x1.f076bap-26f, -0x1.fadd9cp-27f, -0x1.16dd9p-27f, -0x1.30d28cp-26f,
        0x1.b27f34p-26f, -0x1.5987f6p-26f, 0x1.994846p-26f, 0x1.dc88fap-30f,
        0x1.0227e4p-26f, -0x1.b573a2p-26f, -0x1.9e28b4p-27f, 0x1.6c5abcp-27f,
        0x1.4cd4fp-27f, 0x1.f00a5p-28f, -0x1.49e742p-29f, 0x1.b3e2d2p-29f,
    },
    {   /* t^2 */
        -0x1.5c3d8ep-5f, -0x1.077e0cp-6f, -0x1.87c166p-8f, -0x1.2155b6p-9f,
        -0x1.02af02p-11f, -0x1.18311ap-14f, -0x1.2f6052p-17f, -0x1.48767p-20f,
        -0x1.05a99ep-24f, 0x0p+0f, 0x0p+0f, 0x0p+0f,
        -0x1.1e1c0ap-4f, -0x1.5c8e36p-4f, -0x1.9a5416p-4f, -0x1.d75004p-4f,
        -0x1.18883cp-3f, -0x1.5279fep-3f, -0x1.89e51p-3f, -0x1.be6cb8p-3f,
        -0x1.038f72p-2f, -0x1.2daf9ap-2f, -0x1.4ff714p-2f, -0x1.6a1d3ap-2f,
        -0x1.825df8p-2f, -0x1.897d28p-2f, -0x1.79c0ep-2f, -0x1.5aa21cp-2f,
        -0x1.1defacp-2f, -0x1.970e08p-3f, -0x1.10646ep-3f, -0x1.5ee892p-4f,
    },
    {   /* t^3 */
        0x1.bbccdp-6f, 0x1.599778p-7f, 0x1.0399d2p-8f, 0x1.80ed2cp-10f,
        0x1.58bd9p-12f, 0x1.759036p-15f, 0x1.947f3ep-18f, 0x1.b5f2dcp-21f,
        0x1.5d059cp-25f, 0x0p+0f, 0x0p+0f, 0x0p+0f,
        -0x1.4ea164p-2f, -0x1.4b5ad2p-2f, -0x1.47742ap-2f, -0x1.42f17cp-2f,
        -0x1.3b135p-2f, -0x1.2ea3fap-2f, -0x1.202a36p-2f, -0x1.0fdf02p-2f,
        -0x1.e91ee6p-3f, -0x1.98587ap-3f, -0x1.4271fp-3f, -0x1.d71f5ep-4f,
        -0x1.bd0a9cp-5f, 0x1.d76d92p-7f, 0x1.072d06p-4f, 0x1.8434b2p-4f,
        0x1.c68cf2p-4f, 0x1.97d6fcp-4f, 0x1.33de7ap-4f, 0x1.a85b92p-5f,
    },
    {   /* t^4 */
        -0x1.93cbc4p-7f, -0x1.4e3bc4p-8f, -0x1.00775cp-9f, -0x1.7f355p-11f,
        -0x1.582d3cp-13f, -0x1.7543bap-16f, -0x1.9437ecp-19f, -0x1.b5a77p-22f,
        -0x1.57bf1cp-26f, 0x0p+0f, 0x0p+0f, 0x0p+0f,
        0x1.7c36bp-5f, 0x1.cca8a4p-5f, 0x1.0dd23ap-4f, 0x1.33c492p-4f,
        0x1.6b31dp-4f, 0x1.af839ap-4f, 0x1.ede654p-4f, 0x1.11e6bp-3f,
        0x1.3312cap-3f, 0x1.50236ap-3f, 0x1.5c24ep-3f, 0x1.584d54p-3f,
        0x1.3a475ep-3f, 0x1.e98616p-4f, 0x1.470c16p-4f, 0x1.6281d6p-5f,
        0x1.ac4062p-9f, -0x1.5dd62ep-6f, -0x1.9d26d2p-6f, -0x1.55d56cp-6f,
    },
    {   /* t^5 */
        0x1.0568dep-8f, 0x1.f2f0f6p-10f, 0x1.90644cp-11f, 0x1.2fda56p-12f,
        0x1.12d2ccp-14f, 0x1.2a8e7ap-17f, 0x1.4364dep-20f, 0x1.5e272p-23f,
        0x1.3c10c2p-27f, 0x0p+0f, 0x0p+0f, 0x0p+0f,
        0x1.0b0dd2p-3f, 0x1.02e2d6p-3f, 0x1.f72df8p-4f, 0x1.e4ff82p-4f,
        0x1.cb8f7ep-4f, 0x1.a0fefp-4f, 0x1.76a86ep-4f, 0x1.41ccfcp-4f,
        0x1.e3c06ap-5f, 0x1.04da2p-5f, 0x1.7ed488p-8f, -0x1.1b3adp-6f,
        -0x1.660742p-5f, -0x1.f9d01p-5f, -0x1.012ceep-4f, -0x1.b2fb26p-5f,
        -0x1.05e31cp-5f, -0x1.337d52p-7f, 0x1.82887ap-10f, 0x1.2fad22p-8f,
    },
    {   /* t^6 */
        -0x1.7936b6p-11f, -0x1.1df348p-11f, -0x1.fe702p-13f, -0x1.90f344p-14f,
        -0x1.797c3ap-16f, -0x1.9bccdap-19f, -0x1.be52bp-22f, -0x1.e3492cp-25f,
        -0x1.216df6p-30f, 0x0p+0f, 0x0p+0f, 0x0p+0f,
        -0x1.212a1ap+1f, -0x1.87303ap+0f, -0x1.653024p+0f, 0x1.384844p-5f,
        -0x1.f35e3ep-4f, 0x1.25807p-4f, -0x1.386b66p-2f, 0x1.8512ep-6f,
        -0x1.0e4e2ep-4f, -0x1.6f9cbp-5f, -0x1.5d126ep-5f, -0x1.7d7a1ep-6f,
        -0x1.203b2p-5f, -0x1.9247d8p-7f, 0x1.2b35bcp-7f, 0x1.e819p-7f,
        0x1.2ede5p-6f, 0x1.6792bap-7f, 0x1.0b04f8p-8f, 0x1.4e8f46p-11f,
    },
    {   /* t^7 */
        -0x1.cc6db2p-14f, 0x1.b927f4p-14f, 0x1.04f6f4p-14f, 0x1.b846d2p-16f,
        0x1.aaed1cp-18f, 0x1.d540b6p-21f, 0x1.fcec34p-24f, 0x1.139c8p-26f,
        0x1.01c44ap-29f, 0x0p+0f, 0x0p+0f, 0x0p+0f,
        -0x1.ed8896p+4f, -0x1.f7119cp+3f, -0x1.6a0f76p+3f, -0x1.21a4eap+0f,
        -0x1.5ec6bap-1f, 0x1.e1a41ep-1f, -0x1.645e0cp+0f, 0x1.018174p-1f,
        0x1.9dfe86p-8f, 0x1.49cb2p-4f, 0x1.f6b588p-5f, 0x1.66a3dap-4f,
        0x1.1549fap-5f, 0x1.a40f12p-6f, 0x1.20d81cp-6f, 0x1.5f6c32p-8f,
        -0x1.4e1f24p-9f, -0x1.37f7bap-8f, -0x1.7d5ebp-9f, -0x1.39f91ep-10f,
    },
};

/* tl_tanhf's steps (the parameters as TL__ERFF_STEPS's; TAB(c, k): row c at k mod 32) */
#define TL__TANHF_ABS 0x7fffffffu
#define TL__TANHF_SIGN 0x80000000u
#define TL__TANHF_INF 0x7f800000u
#define TL__TANHF_LO 0x3d800000u                   /* 1/16 */
#define TL__TANHF_HI 0x411051ecu                   /* 9.02 */
#define TL__TANHF_PIECE 0xffe00000u
#define TL__TANHF_MID 0x00100000u
#define TL__TANHF_STEPS(T, TU, C, U, FMA, BITS, FLOAT, UMIN, UMAX, SEL_ULT, TAB, xb, res)      \
    T res;                                                                                  \
    do {                                                                                    \
        TU ab_ = (xb) & U(ABS);                                                             \
        TU pb_ = UMAX(UMIN(ab_, U(HI)), U(LO));             /* |x| in [1/16, 9.02] */       \
        TU k_ = pb_ >> 21;                                                                  \
        T t_ = FLOAT(pb_) - FLOAT((pb_ & U(PIECE)) | U(MID));   /* |x| - m, exact */        \
        T p_ = FMA(TAB(9, k_), t_, TAB(8, k_));                                             \
        p_ = FMA(p_, t_, TAB(7, k_));                                                       \
        p_ = FMA(p_, t_, TAB(6, k_));                                                       \
        p_ = FMA(p_, t_, TAB(5, k_));                       /* c2 + c3 t + ... */           \
        T c1_ = TAB(4, k_), d0_ = TAB(2, k_), c0_ = TAB(0, k_);                             \
        T dh_ = FMA(c1_, t_, d0_);                                                          \
        T dl_ = FMA(c1_, t_, d0_ - dh_);                    /* d0h + c1 t - dh */           \
        T hi_ = FMA(t_, dh_, c0_);                                                          \
        T lo_ = FMA(t_, dh_, c0_ - hi_);                    /* C0h + t dh - hi */           \
        T in_ = FMA(t_, t_ * p_, TAB(3, k_) + dl_);                                         \
        T big_ = hi_ + FMA(t_, in_, lo_ + TAB(1, k_));                                      \
        T a_ = FLOAT(ab_);                                                                  \
        T z_ = a_ * a_;                                                                     \
        T q_ = FMA(FMA(C(-0x1.c55ab2p-5f), z_, C(0x1.111544p-3f)), z_, C(-0x1.555556p-2f)); \
        T small_ = FMA(a_, z_ * q_, a_);                                                    \
        TU r_ = SEL_ULT(ab_, U(LO), BITS(small_), BITS(big_)) | ((xb) & U(SIGN));           \
        res = FLOAT(SEL_ULT(U(INF), ab_, (xb), r_));       /* NaN */                        \
    } while (0)
#define TL__TANHF_SCALAR_U(name) TL__TANHF_##name
#define TL__TANHF_SCALAR_TAB(c, k) tl__tanhf_tab[c][(k) & 31]

TL_MATH_INLINE float tl_tanhf(float x)
{
    uint32_t xb = tl__fbits(x);
    TL__TANHF_STEPS(float, uint32_t, TL__SCALAR_C, TL__TANHF_SCALAR_U, tl__fmaf, tl__fbits,
                    tl__bitsf, TL__SCALAR_UMIN, TL__SCALAR_UMAX, TL__SCALAR_SEL_ULT,
                    TL__TANHF_SCALAR_TAB, xb, res);
    return res;
}

/* tl_tanhf over a contiguous array, the same bits, as tl_erff_n: AVX-512 blocks of 16 (a
   two-register vpermt2ps per row), AVX2 blocks of 8 (four vpermps and three blends per
   row), the last few per element. */
#ifdef TL__V16
#define TL__TANHF_VEC_U(name) tanhf_k_##name
#define TL__TANHF_VEC_CONST(TU, name) TL__VEC_CONST(TU, tanhf_k_##name, TL__TANHF_##name)
#define TL__TANHF_VEC_CONSTS(TU)                                                            \
    TL__TANHF_VEC_CONST(TU, ABS); TL__TANHF_VEC_CONST(TU, SIGN);                            \
    TL__TANHF_VEC_CONST(TU, INF); TL__TANHF_VEC_CONST(TU, LO); TL__TANHF_VEC_CONST(TU, HI); \
    TL__TANHF_VEC_CONST(TU, PIECE); TL__TANHF_VEC_CONST(TU, MID)
#define TL__TANHF_V16_TAB(c, k) tl__v16_tab(tl__tanhf_tab[c], (tl__v16i)(k))
#define TL__TANHF_V8_TAB(c, k) tl__v8f_tab(tl__tanhf_tab[c], (tl__v8i32)((k) & 31))
static __attribute__((target("avx512f"), unused)) void tl__tanhf_v16(const float *x, float *o,
                                                                     int64_t n)
{
    TL__TANHF_VEC_CONSTS(tl__v16u);
    for (int64_t b = 0; b < n; b += 16) {
        tl__v16u xb;
        memcpy(&xb, x + b, 64);
        TL__TANHF_STEPS(tl__v16f, tl__v16u, TL__V16C, TL__TANHF_VEC_U, tl__v16_fma,
                        TL__V16_UBITS, TL__V16_UFLOAT, tl__v16_umin, tl__v16_umax,
                        tl__v16_sel_ult, TL__TANHF_V16_TAB, xb, res);
        memcpy(o + b, &res, 64);
    }
}
static __attribute__((target("avx2,fma"), unused)) void tl__tanhf_v8(const float *x, float *o,
                                                                    int64_t n)
{
    TL__TANHF_VEC_CONSTS(tl__v8u32);
    for (int64_t b = 0; b < n; b += 8) {
        tl__v8u32 xb;
        memcpy(&xb, x + b, 32);
        TL__TANHF_STEPS(tl__v8f, tl__v8u32, TL__V8FC, TL__TANHF_VEC_U, tl__v8f_fma,
                        TL__V8_UBITS, TL__V8_UFLOAT, tl__v8u_min, tl__v8u_max,
                        tl__v8u_sel_ult, TL__TANHF_V8_TAB, xb, res);
        memcpy(o + b, &res, 32);
    }
}
#endif

/* tl_tanhf_n's vector paths without prefetching (for a buffer already in the caches) */
TL__ARRAY_PATHS(tl__tanhf_n, tl_tanhf, tl__tanhf_v16, tl__tanhf_v8)

TL__ARRAY_PREFETCHED(tl_tanhf_n, tl__tanhf_n)

/* n - q d exactly (to 2^-12 of itself) for q = n / d rounded, without FMA: q and d split
   into 12-bit halves so every partial product is exact, and n - qh dh is exact (Sterbenz). */
TL_MATH_INLINE float tl__div_resid(float n, float d, float q)
{
    float qh = tl__hi12f(q), ql = q - qh;
    float dh = tl__hi12f(d), dl = d - dh;
    return (((n - qh * dh) - qh * dl) - ql * dh) - ql * dl;
}

/* sigmoid as hi + *lo, scaled by 2^s where x < 0 (s = 0, or 32 so that x sigmoid(x) stays
   normal for silu): (x >= 0 ? 1 : e) / (1 + e), e = exp(-|x|), in double-float arithmetic
   (two float divisions and the quotient's exact residual): good to about 2^-40. The argument -|x| comes as ah + al (al != 0 for gelu_tanh), clamped by the
   caller. */
TL_MATH_INLINE float tl__sigmoid_hl(float ah, float al, int pos, int32_t s, float *lo)
{
    float el, eh = tl__exp_hl2(ah, al, s, &el);
    float sc = tl__pow2f(-s);
    /* e below 2^-60 is dropped from 1 + e (worth < 2^-60 there): it, and q times it, would
       go subnormal, which costs Intel CPUs a microcode assist per lane */
    int keep = eh > tl__pow2f(s - 60);
    float e = tl__self(keep, eh, 0.0f) * sc;
    float d = 1.0f + e;                                   /* 1 + e = d + dl, d >= 1 > e */
    float dl = ((1.0f - d) + e) + tl__self(keep, el, 0.0f) * sc;
    float nh = tl__self(pos, 1.0f, eh), nl = tl__self(pos, 0.0f, el);
    float q = nh / d;
    *lo = ((tl__div_resid(nh, d, q) + nl) - q * dl) / d;
    return q;
}

/* The common part of the float sigmoid and silu: 1 / (1 + e^-x) = N / (S + e) for x in
   [-110, 30] (NaN passes through), S = N + P rounded, e its error, *inv = 1 / S rounded.
   Branch-free and select-free: j = round(x / ln2) from the rounding constant's bits;
   r = x - j ln2 (ln2 in two parts, the first product exact), |r| <= ln2/2; P = 2^32 e^-r
   by Horner with fused multiply-adds, e^-r = 1 - r + r^2 Q(-r), the coefficients scaled
   by 2^32 (Q of degree 4, relative error 2^-27.8; P within about 0.7 ulp); N = 2^(32 + j)
   straight from those bits, a normal number, or 0 where j = -159 (x < -109.87): N / (N +
   P) = 1 / (1 + 2^-j e^-r) with nothing under- or overflowing. e by Fast2Sum, P taken as
   the larger: exact for x <= ln2/2, off by less than 2^-25 of S above (where P < N). */
TL_MATH_INLINE float tl__sigmoid_nse(float xc, float *s, float *e, float *inv)
{
    float t = tl__fmaf(xc, 0x1.715476p+0f, 0x1.8p23f + 159.0f);   /* 1.5 2^23 + 159 + j */
    float jf = t - (0x1.8p23f + 159.0f);
    float r = tl__fmaf(jf, -0x1.62e4p-1f, xc);           /* exact */
    r = tl__fmaf(jf, -0x1.7f7d1cp-20f, r);
    float q = 0x1.6a4748p+22f;
    q = tl__fmaf(q, r, -0x1.1239a4p+25f);
    q = tl__fmaf(q, r, 0x1.5558b6p+27f);
    q = tl__fmaf(q, r, -0x1.555492p+29f);
    q = tl__fmaf(q, r, 0x1.fffffcp+30f);
    q = tl__fmaf(q, r, -0x1p32f);
    float p = tl__fmaf(q, r, 0x1p32f);
    float n = tl__bitsf(tl__fbits(t) << 23);              /* 2^(159 + j - 127) */
    float sum = p + n;
    *e = (p - sum) + n;                                   /* exact for x <= ln2/2 */
    *s = sum;
    *inv = 1.0f / sum;
    return n;
}

/* sigmoid 1/(1+e^-x): < 1.6 ulp (PyTorch's: 2.5 for x in [-87, 30], its tail flushed
   below), down into the subnormals (0 below x = -103.97), sigmoid(-inf) = 0,
   sigmoid(+inf) = 1. N / (S + e) from tl__sigmoid_nse, x clamped to [-110, 30] (sigmoid
   rounds to 1 beyond 17.33; NaN fails both compares): q0 = N (1/S), exact but where
   subnormal, corrected by the residual N - q0 (S + e) (its S part exact by an fma) and
   rounded once, also into the subnormals, so the error is nearly all P's. */
TL_MATH_INLINE float tl_sigmoidf(float x)
{
    float xc = tl__self(x < -110.0f, -110.0f, x);
    xc = tl__self(xc > 30.0f, 30.0f, xc);
    float s, e, inv, n = tl__sigmoid_nse(xc, &s, &e, &inv);
    float q0 = n * inv;
    float rem = tl__fmaf(-q0, e, tl__fmaf(-q0, s, n));
    return tl__fmaf(rem, inv, q0);
}

/* silu x sigmoid(x): < 1.75 ulp (PyTorch's: 2.4 for x in [-87, 30], its tail flushed),
   down into the subnormals (-0.0 below x = -108.7); silu(-inf) = NaN (-inf * 0, as
   x * sigmoid(x) gives), silu(+inf) = inf. As sigmoid, with x N (exact: N is a power of 2
   with x N normal, or 0) for N, so the result is rounded once. x is clamped at -110 by an
   unsigned integer min on its bits (one instruction; a NaN is carried by x N), and at 30
   (beyond 67, N's exponent would wrap to a tiny number and x N go subnormal); x > 30
   returns x (what those lanes computed is dropped: x N may overflow there); the sign of x
   is put back for the -0 results (x = -0, x < -109.87), which the last fma gives as +0. */
TL_MATH_INLINE float tl_siluf(float x)
{
    uint32_t xb = tl__fbits(x);
    int big = x > 30.0f;
    float xc = tl__bitsf(xb < 0xc2dc0000u ? xb : 0xc2dc0000u);
    xc = tl__self(xc > 30.0f, 30.0f, xc);                 /* N's exponent wraps past 67 */
    float s, e, inv, n = tl__sigmoid_nse(xc, &s, &e, &inv);
    float xn = x * n, q0 = xn * inv;
    float rem = tl__fmaf(-q0, e, tl__fmaf(-q0, s, xn));
    uint32_t qb = tl__fbits(tl__fmaf(rem, inv, q0)) | (tl__fbits(x) & 0x80000000u);   /* -0 */
    uint32_t m = (uint32_t)0 - (uint32_t)big;
    return tl__bitsf(qb ^ ((qb ^ tl__fbits(x)) & m));     /* big ? x : q, in 2 instructions */
}

/* sinh: < 1 ulp. |x| < 1: x + x^3 P(x^2) (P of degree 3, relative error 2^-31); above:
   E - 1/(4E), E = e^|x|/2 = Eh + El from the double-float exp (scaled by 1/2 so it does not
   overflow before sinh does, at |x| = 89.4), with a two-sum for the difference. */
TL_MATH_INLINE float tl_sinhf(float x)
{
    float a = tl__absf(x);
    float z = x * x;
    float p = 0x1.756caep-19f;
    p = p * z + 0x1.a022bap-13f;
    p = p * z + 0x1.1110e0p-7f;
    p = p * z + 0x1.555556p-3f;
    float small = x + (x * z) * p;
    float el, eh = tl__exp_hl(tl__clampf(a, 0.0f, 90.0f), -1, &el);
    float q = 0.25f / eh;
    float qs = tl__self(q > 0x1p-40f, q, 0.0f);           /* no subnormal work for large |x| */
    float d = eh - q;                                     /* eh >= 1.35 > q: exact residual */
    float big = d + ((((eh - d) - q) + el) + (4.0f * qs * qs) * el);
    big = tl__signf(tl__self(eh == (float)INFINITY, eh, big), x);
    float r = tl__self(a < 1.0f, small, big);
    return tl__self(x == x, r, x);
}

/* cosh: < 1 ulp. E + 1/(4E), E = e^|x|/2 as for sinh: two positive terms, no cancellation. */
TL_MATH_INLINE float tl_coshf(float x)
{
    float el, eh = tl__exp_hl(tl__clampf(tl__absf(x), 0.0f, 90.0f), -1, &el);
    float q = 0.25f / eh;
    float qs = tl__self(q > 0x1p-40f, q, 0.0f);           /* no subnormal work for large |x| */
    float d = eh + q;                                     /* eh >= 1/2 >= q */
    float r = d + ((((eh - d) + q) + el) - (4.0f * qs * qs) * el);
    r = tl__self(eh == (float)INFINITY, eh, r);
    return tl__self(x == x, r, x);
}

/* ------------------------------------------------------------------ erf, erfc, gelu */

/* erfc(a) for a in [0, 10.1] given a2 = a^2: e^(-a^2) p(t) / (a + 1.5),
   t = (a - 1.5) / (a + 1.5) in [-1, 0.742], p of degree 11 (relative error 2^-30): its terms
   from t^3 on (< 0.03 of p) in float, the rest in double, with fused multiply-adds. */
TL_MATH_INLINE double tl__erfc_tail_d(double a, double a2)
{
    double d = a + 1.5;
    double inv = tl__recip_fma_d(d);                      /* 1/d to 2^-46 */
    double t = (a - 1.5) * inv;
    float tf = (float)t;
    float ph = -0x1.065fc2p-14f;
    ph = tl__fmaf(ph, tf, -0x1.c7d8eap-13f);
    ph = tl__fmaf(ph, tf, -0x1.64ecf2p-14f);
    ph = tl__fmaf(ph, tf, 0x1.bdccfep-11f);
    ph = tl__fmaf(ph, tf, 0x1.d37014p-10f);
    ph = tl__fmaf(ph, tf, -0x1.a2ae4ep-11f);
    ph = tl__fmaf(ph, tf, -0x1.3615a6p-7f);
    ph = tl__fmaf(ph, tf, -0x1.0a20d0p-7f);
    double p = tl__fma((double)ph, t, 0x1.8751c9c9ff352p-5);
    p = tl__fma(p, t, 0x1.35bf508f3cb89p-4);
    p = tl__fma(p, t, -0x1.0404eabff32b1p-1);
    p = tl__fma(p, t, 0x1.edf487efca733p-1);
    return tl__exp_fma_d(-a2) * (p * inv);
}

/* erf: < 0.55 ulp (0.542 measured over every float; PyTorch's 0.72 on the same grids).
   In float with fused multiply-adds: no division, no exp, no branch, no select of
   coefficients. Below |x| = 1/4: erf(a) = a Ch + a (Cl + z Q(z)), z = a^2, Ch + Cl =
   2/sqrt(pi) as two floats, Q of degree 3 (error 2^-41), the last step one fused
   multiply-add (the tail a (Cl + z Q) is at most 0.021 of the result, so its roundings
   cost < 0.05 ulp). For 0 < |x| < 2^-100, a 2/sqrt(pi) in double, rounded once: a float
   tail a Cl falls below the subnormal grid there, and a 2^24-scaled version rounded twice
   (0.75 ulp). From 1/4 to 4, cut into 16 pieces,
   four to an octave, by the exponent and top two mantissa bits of |x| (clamped to [1/4,
   4): erf rounds to 1 from 3.9192 on): piece [2^e (1 + q/4), 2^e (1 + (q+1)/4)), m its
   middle, t = |x| - m (exact, |t| <= 2^e/8),
       erf(m + t) = (C0h + c0h t) + (C0l + t (c0l + c1 t + ... + c5 t^5)),
   C0h + C0l = erf(m) and c0h + c0l = erf'(m) as two floats each: the first sum is formed
   as a float and its exact rounding error (two fused multiply-adds), so the result is
   rounded about once whatever the size of c0h t (up to 0.12 of the result: with the
   linear term inside the polynomial the pieces measured 0.63 ulp). c1..c5: near-minimax
   (error <= 2^-29.7 relative), tools/fit_erf32.py, which prints tl__erff_tab (row k: one
   coefficient of the 16 pieces, in the slot (bits(|x|) >> 21) mod 16 that a permute of
   the row by those bits picks). Against the previous form (four intervals of degree-8
   polynomials whose coefficients were picked by three selects each: 0.622 ulp), per 16
   lanes under AVX-512 about 41 vector instructions, 9 of them permutes, against 103. */
#define TL__ERFF_CH 0x1.20dd76p+0f
#define TL__ERFF_CL -0x1.f7ac92p-25f
static const float tl__erff_tab[9][16] = {
    {   /* erf(m), hi */
        0x1.ff4048p-1f, 0x1.fff2dp-1f, 0x1.ffff7p-1f, 0x1.fffffcp-1f,
        0x1.3c9aa8p-2f, 0x1.7e1594p-2f, 0x1.bccfecp-2f, 0x1.f86faap-2f,
        0x1.25b8a8p-1f, 0x1.569244p-1f, 0x1.7fb9cp-1f, 0x1.a1551ap-1f,
        0x1.c6dad2p-1f, 0x1.e5768cp-1f, 0x1.f4f694p-1f, 0x1.fbe61ep-1f,
    },
    {   /* erf(m), lo */
        -0x1.3f9ccap-26f, -0x1.3eeb0ap-27f, -0x1.82606ap-27f, 0x1.78b8f2p-28f,
        0x1.7097dcp-27f, 0x1.3674f8p-28f, 0x1.242adcp-29f, 0x1.2851f4p-27f,
        0x1.16dbbp-26f, -0x1.6a62b2p-28f, -0x1.449fe2p-27f, 0x1.6aaebp-29f,
        0x1.053d8cp-26f, 0x1.da51fep-28f, -0x1.2610a2p-27f, 0x1.de99eep-26f,
    },
    {   /* t, hi */
        0x1.d4143ap-8f, 0x1.3360ccp-11f, 0x1.e9b5e8p-16f, 0x1.d9371ep-21f,
        0x1.0ae55p+0f, 0x1.00abdp+0f, 0x1.e9d5a8p-1f, 0x1.cfc41ep-1f,
        0x1.a5074ep-1f, 0x1.681ff2p-1f, 0x1.2a8dcep-1f, 0x1.dfca26p-2f,
        0x1.45e99cp-2f, 0x1.5ce596p-3f, 0x1.499d48p-4f, 0x1.12ceb4p-5f,
    },
    {   /* t, lo */
        0x1.3bfd2cp-33f, 0x1.a47b68p-36f, 0x1.a019cep-41f, 0x1.7fbe1ap-48f,
        -0x1.6dbe38p-26f, -0x1.83cf0ap-25f, 0x1.c9926ap-26f, 0x1.b63efcp-28f,
        0x1.0abb1p-28f, 0x1.2d2acp-27f, 0x1.bc6ce8p-26f, 0x1.eb77fp-27f,
        -0x1.a24376p-29f, -0x1.dd527ap-30f, -0x1.d0d632p-30f, -0x1.000c88p-30f,
    },
    {   /* t^2 */
        -0x1.074b26p-6f, -0x1.a6a566p-10f, -0x1.8de88cp-14f, -0x1.bbb9p-19f,
        -0x1.2c41fap-2f, -0x1.60ec3cp-2f, -0x1.8dfd9ap-2f, -0x1.b2c7dcp-2f,
        -0x1.d9a838p-2f, -0x1.ef2beep-2f, -0x1.e5267p-2f, -0x1.c1cd84p-2f,
        -0x1.6ea6dp-2f, -0x1.dfbbaep-3f, -0x1.0bcfcap-3f, -0x1.01a1c8p-4f,
    },
    {   /* t^3 */
        0x1.63f552p-6f, 0x1.69a42ep-9f, 0x1.99ea42p-13f, 0x1.0a46cp-17f,
        -0x1.2b900cp-2f, -0x1.05599ap-2f, -0x1.b588dcp-3f, -0x1.5a9de8p-3f,
        -0x1.9c41e4p-4f, -0x1.a425cap-7f, 0x1.fe0754p-5f, 0x1.e4c984p-4f,
        0x1.4cb33p-3f, 0x1.4374eep-3f, 0x1.d663ecp-4f, 0x1.143dc2p-4f,
    },
    {   /* t^4 */
        -0x1.38bebap-6f, -0x1.aafe34p-9f, -0x1.2c0f08p-12f, -0x1.ce8178p-17f,
        0x1.1c7674p-3f, 0x1.4506ccp-3f, 0x1.624702p-3f, 0x1.730f5ep-3f,
        0x1.75bf3cp-3f, 0x1.5328c2p-3f, 0x1.0fa178p-3f, 0x1.7478fap-4f,
        0x1.ca5ceep-6f, -0x1.f3b55ep-6f, -0x1.974c26p-5f, -0x1.5a324ep-5f,
    },
    {   /* t^5 */
        0x1.5b1b98p-7f, 0x1.710598p-9f, 0x1.59cf64p-12f, 0x1.4e5488p-16f,
        0x1.278064p-4f, 0x1.c00a8ap-5f, 0x1.271716p-5f, 0x1.130b42p-6f,
        -0x1.62415p-7f, -0x1.54ecbep-5f, -0x1.f948e4p-5f, -0x1.1cc964p-4f,
        -0x1.f48beep-5f, -0x1.f5f70ep-6f, -0x1.2a8cd8p-9f, 0x1.73dbaep-7f,
    },
    {   /* t^6 */
        -0x1.6bbb64p-9f, -0x1.b54e6cp-10f, -0x1.1f663ep-12f, -0x1.5bf33cp-16f,
        -0x1.d4777p-5f, -0x1.fce5f8p-7f, -0x1.3dbbbep-4f, -0x1.453328p-5f,
        -0x1.7ee24ep-5f, -0x1.274ee6p-5f, -0x1.2e2a8cp-6f, -0x1.cb6ebep-10f,
        0x1.f53c18p-7f, 0x1.692bd4p-6f, 0x1.d80e7p-7f, 0x1.1009dcp-8f,
    },
};

/* tl_erff's steps, written once for the scalar function and the array versions' vector
   paths (T the value type, TU its unsigned integer type, C a constant of type T, U(NAME)
   the TU constant TL__ERFF_NAME, BITS a T's bits as TU, FLOAT the reverse, UMIN / UMAX on
   TUs, SEL_ULT(u, v, a, b) a where u < v (unsigned) else b, TAB(c, k) row c of
   tl__erff_tab at k mod 16), so they round alike. xb: x's bits (TU); declares res (T). */
#define TL__ERFF_ABS 0x7fffffffu
#define TL__ERFF_SIGN 0x80000000u
#define TL__ERFF_INF 0x7f800000u
#define TL__ERFF_LO 0x3e800000u                    /* 1/4 */
#define TL__ERFF_HI 0x407fffffu                    /* 4 less an ulp */
#define TL__ERFF_PIECE 0xffe00000u                 /* sign, exponent, top 2 mantissa bits */
#define TL__ERFF_MID 0x00100000u                   /* the next bit: the piece's middle */
#define TL__ERFF_STEPS(T, TU, C, U, FMA, BITS, FLOAT, UMIN, UMAX, SEL_ULT, TAB, TINY, xb, res) \
    T res;                                                                                  \
    do {                                                                                    \
        TU ab_ = (xb) & U(ABS);                                                             \
        TU pb_ = UMAX(UMIN(ab_, U(HI)), U(LO));             /* |x| in [1/4, 4) */           \
        TU k_ = pb_ >> 21;                                                                  \
        T t_ = FLOAT(pb_) - FLOAT((pb_ & U(PIECE)) | U(MID));   /* |x| - m, exact */        \
        T p_ = FMA(TAB(8, k_), t_, TAB(7, k_));                                             \
        p_ = FMA(p_, t_, TAB(6, k_));                                                       \
        p_ = FMA(p_, t_, TAB(5, k_));                                                       \
        p_ = FMA(p_, t_, TAB(4, k_));                                                       \
        p_ = FMA(p_, t_, TAB(3, k_));                                                       \
        T c0_ = TAB(0, k_), d0_ = TAB(2, k_);                                               \
        T hi_ = FMA(t_, d0_, c0_);                                                          \
        T lo_ = FMA(t_, d0_, c0_ - hi_);                    /* C0h + c0h t - hi */          \
        T big_ = hi_ + (lo_ + FMA(t_, p_, TAB(1, k_)));                                     \
        T a_ = FLOAT(ab_);                                                                  \
        T z_ = a_ * a_;                                                                     \
        T q_ = FMA(C(0x1.456c84p-8f), z_, C(-0x1.b7c842p-6f));                              \
        q_ = FMA(q_, z_, C(0x1.ce2e3ap-4f));                                                \
        q_ = FMA(q_, z_, C(-0x1.812746p-2f));                                               \
        T small_ = TINY(ab_, a_, FMA(a_, C(TL__ERFF_CH), a_ * FMA(z_, q_, C(TL__ERFF_CL))));  \
        TU r_ = SEL_ULT(ab_, U(LO), BITS(small_), BITS(big_)) | ((xb) & U(SIGN));           \
        res = FLOAT(SEL_ULT(U(INF), ab_, (xb), r_));       /* NaN */                        \
    } while (0)
#define TL__ERFF_SCALAR_U(name) TL__ERFF_##name
#define TL__ERFF_SCALAR_TAB(c, k) tl__erff_tab[c][(k) & 15]
/* 0 < |x| < 2^-100: a 2/sqrt(pi) in double, rounded once (also onto the subnormal grid) */
#define TL__ERFF_TINY(ab, a, small)                                                         \
    ((ab) - 1u < 0x0d7fffffu ? (float)((double)(a) * 0x1.20dd750429b6dp+0) : (small))
#define TL__ERFF_NOT_TINY(ab, a, small) (small)

TL_MATH_INLINE float tl_erff(float x)
{
    uint32_t xb = tl__fbits(x);
    TL__ERFF_STEPS(float, uint32_t, TL__SCALAR_C, TL__ERFF_SCALAR_U, tl__fmaf, tl__fbits,
                   tl__bitsf, TL__SCALAR_UMIN, TL__SCALAR_UMAX, TL__SCALAR_SEL_ULT,
                   TL__ERFF_SCALAR_TAB, TL__ERFF_TINY, xb, res);
    return res;
}

/* tl_erff over a contiguous array, the same bits: with AVX-512 (tested at run time) blocks
   of 16, with AVX2 and FMA blocks of 8, through TL__ERFF_STEPS on GCC vectors, the table
   rows fetched by permutes (one vpermps per row; two and a blend with AVX2) where the
   per-element code, vectorized by GCC, would gather them, and a block holding a nonzero
   |x| below 2^-100 per element; the last few per element. The integer constants are set
   up before the loop (TL__VEC_CONST). */
#ifdef TL__V16
#define TL__ERFF_VEC_U(name) erff_k_##name
#define TL__ERFF_VEC_CONST(TU, name) TL__VEC_CONST(TU, erff_k_##name, TL__ERFF_##name)
#define TL__ERFF_VEC_CONSTS(TU)                                                             \
    TL__ERFF_VEC_CONST(TU, ABS); TL__ERFF_VEC_CONST(TU, SIGN); TL__ERFF_VEC_CONST(TU, INF); \
    TL__ERFF_VEC_CONST(TU, LO); TL__ERFF_VEC_CONST(TU, HI); TL__ERFF_VEC_CONST(TU, PIECE);  \
    TL__ERFF_VEC_CONST(TU, MID)
#define TL__ERFF_V16_TAB(c, k) tl__v16_tab16(tl__erff_tab[c], k)
#define TL__ERFF_V8_TAB(c, k) tl__v8f_tab16(tl__erff_tab[c], k)
static __attribute__((target("avx512f"), unused)) void tl__erff_v16(const float *x, float *o,
                                                                    int64_t n)
{
    TL__ERFF_VEC_CONSTS(tl__v16u);
    for (int64_t b = 0; b < n; b += 16) {
        tl__v16u xb;
        memcpy(&xb, x + b, 64);
        tl__v16i tiny = ((xb & erff_k_ABS) - 1u) < 0x0d7fffffu;
        if (_mm512_test_epi32_mask((__m512i)tiny, (__m512i)tiny)) {
            for (int j = 0; j < 16; j++) o[b + j] = tl_erff(x[b + j]);
            continue;
        }
        TL__ERFF_STEPS(tl__v16f, tl__v16u, TL__V16C, TL__ERFF_VEC_U, tl__v16_fma, TL__V16_UBITS,
                       TL__V16_UFLOAT, tl__v16_umin, tl__v16_umax, tl__v16_sel_ult,
                       TL__ERFF_V16_TAB, TL__ERFF_NOT_TINY, xb, res);
        memcpy(o + b, &res, 64);
    }
}
static __attribute__((target("avx2,fma"), unused)) void tl__erff_v8(const float *x, float *o,
                                                                   int64_t n)
{
    TL__ERFF_VEC_CONSTS(tl__v8u32);
    for (int64_t b = 0; b < n; b += 8) {
        tl__v8u32 xb;
        memcpy(&xb, x + b, 32);
        tl__v8i32 tiny = ((xb & erff_k_ABS) - 1u) < 0x0d7fffffu;
        if (!_mm256_testz_si256((__m256i)tiny, (__m256i)tiny)) {
            for (int j = 0; j < 8; j++) o[b + j] = tl_erff(x[b + j]);
            continue;
        }
        TL__ERFF_STEPS(tl__v8f, tl__v8u32, TL__V8FC, TL__ERFF_VEC_U, tl__v8f_fma, TL__V8_UBITS,
                       TL__V8_UFLOAT, tl__v8u_min, tl__v8u_max, tl__v8u_sel_ult,
                       TL__ERFF_V8_TAB, TL__ERFF_NOT_TINY, xb, res);
        memcpy(o + b, &res, 32);
    }
}
#endif

/* tl_erff_n's vector paths without prefetching (for a buffer already in the caches) */
TL__ARRAY_PATHS(tl__erff_n, tl_erff, tl__erff_v16, tl__erff_v8)

TL__ARRAY_PREFETCHED(tl_erff_n, tl__erff_n)

/* erfc: < 0.6 ulp (relative, down into the subnormals; 0 beyond x = 10.06), in double
   (with fused multiply-adds, the high terms of the polynomial in float): erfc(|x|) from the
   form above for every |x| (no separate series near 0), 2 - erfc(|x|) for x < 0. */
TL_MATH_INLINE float tl_erfcf(float x)
{
    double ac = tl__clampf(tl__absf(x), 0.0f, 10.1f);
    double e = tl__erfc_tail_d(ac, ac * ac);
    double r = tl__seld(x < 0.0f, 2.0 - e, e);
    return tl__self(x == x, (float)r, x);
}

/* gelu, exact form x Phi(x) = x (1 + erf(x/sqrt2)) / 2: < 3.7 ulp (3.64 measured over
   every float in [-14.6, 20]), down into the subnormals (x > -14.6; -0.0 below);
   gelu(-inf) = NaN (-inf * 0, as the formula gives), gelu(+inf) = inf. PyTorch's measures
   2.4 ulp on [-1, 1], 5.1 on [1, 10], 2e3 on [-3, -1] and 2e7 further left, where 1 + erf
   cancels. In float with fused multiply-adds, for speed; no form used cancels. One form for
   every x: with a = |x| (clamped to 14.6) and u = a / (a + 3.25) in [0, 0.818],
   a Phi(-a) = e^(-a^2/2) u Q(u), Q(u) = (a + 3.25) e^(a^2/2) Phi(-a) (1.625 at a = 0, to
   1/sqrt(2 pi) as a -> inf), a polynomial of degree 9 in u - 0.45 (relative error 2^-26.5;
   tools/fit_gelu32.py; 3.25 sits in a dip of that error); gelu = -a Phi(-a) for x < 0 and
   x - a Phi(-a) for x >= 0 (a Phi(-a) <= x/2 there: at most a bit lost). In the variable u
   a relative error of u (the rounding of a + 3.25 and of the division) moves the result by
   at most as much, for every a; in 1/(a + c) or (a - c)/(a + c) it would be magnified by
   (a + c) |d ln Q/da - 1/(a + c)|, up to 2.4 near a = 0. e^(-a^2/2) = 2^k e^(r/2),
   r = -a^2 - 2k ln2 with a^2 exact inside a fused multiply-add (e^(-a^2/2) magnifies an
   error in a^2 by a^2/2), e^(r/2) - 1 = r P(r) (P of degree 5, relative error 2^-26),
   folded in by a last fused multiply-add. Q is scaled by 2^(k+72), an integer add to its
   exponent bits (k + 72 is the low bits of the rounding constant's sum), so the last
   operation, x - 2^-72 (...) or -0 - 2^-72 (...), rounds a subnormal result once; u is
   subnormal only for a < 3.25 2^-126, where its rounding (2^-150) costs < 0.82 ulp of the
   result (1.0 ulp at most measured there, as before). The clamp of |x| to 14.6 (inf and NaN
   included) is an unsigned-integer minimum on the bits and x < 0 goes to -0 by masking the
   bits with the sign's arithmetic shift (a minimum there let GCC split the last fused
   multiply-add into one per sign and blend), so no ?: on floats can become a branch; -inf
   and -NaN give NaN at the end. Per element 36 operations, 23 of them multiplies or fused
   multiply-adds, and a division (the AVX-512 loop: 43 instructions per 16 lanes, was 49);
   PyTorch's: about 20 multiplies or fused multiply-adds and a division (its erf:
   1 - t P(t) e^(-x^2), t = 1/(1 + p|x|), P of degree 4, and a fast exp), about 1.1x faster
   on one thread (loaded machine; 1.25x before these last changes). A rational N(a)/D(a) for
   e^(a^2/2) Phi(-a) in a itself (degrees (4,5): 2^-27.3 fitted, the same 9 fused
   multiply-adds) loses 2^-21.8 to float32 Horner with a up to 14.6, 2^-23 already on
   [0, 1]. The previous version (degree-7 S for the middle range, degree-10 and degree-8 G
   either side of 2.5, a division, all evaluated for every lane: about 55 operations)
   measured 2.5 ulp at 1.8x PyTorch's time. */
TL_MATH_INLINE float tl_geluf(float x)
{
    uint32_t xb = tl__fbits(x);
    uint32_t ab = xb & 0x7fffffffu;
    float ac = tl__bitsf(ab < 0x41699999u ? ab : 0x41699999u);   /* min(|x|, 14.6), bits */
    float t = tl__fmaf(ac * ac, -0x1.715476p-1f, 0x1.8p23f + 72.0f);   /* 1.5 2^23 + 72 + k */
    float kf = t - (0x1.8p23f + 72.0f);                  /* k = -round(a^2 / (2 ln2)), >= -154 */
    float r = tl__fmaf(ac, -ac, kf * -0x1.62e4p+0f);     /* -a^2 - 2k ln2_hi, rounded once */
    r = tl__fmaf(kf, -0x1.7f7d1cp-19f, r);               /* - 2k ln2_lo */
    float p = 0x1.6ba478p-16f;
    p = tl__fmaf(p, r, 0x1.122a6cp-12f);
    p = tl__fmaf(p, r, 0x1.5556f0p-9f);
    p = tl__fmaf(p, r, 0x1.5554aep-6f);
    p = tl__fmaf(p, r, 0x1.fffffep-4f);
    p = tl__fmaf(p, r, 0.5f);
    float rp = r * p;                                     /* e^(r/2) - 1 */
    /* u 2^32 = a / ((a + 3.25) 2^-32): normal even for a subnormal a */
    float us = ac / (ac + 3.25f);
    float v = us - 0x1.ccccccp-2f;                       /* u - 0.45 */
    float q = 0x1.14f8d8p-4f;
    q = tl__fmaf(q, v, 0x1.ee869ap-8f);
    q = tl__fmaf(q, v, -0x1.27d374p-3f);
    q = tl__fmaf(q, v, -0x1.a2e07cp-6f);
    q = tl__fmaf(q, v, 0x1.1fb782p-2f);
    q = tl__fmaf(q, v, -0x1.a24b80p-5f);
    q = tl__fmaf(q, v, -0x1.49c9b8p-1f);
    q = tl__fmaf(q, v, 0x1.31e1acp+0f);
    q = tl__fmaf(q, v, -0x1.319078p+0f);
    q = tl__fmaf(q, v, 0x1.96a308p-1f);
    q = tl__bitsf(tl__fbits(q) + (tl__fbits(t) << 23));  /* q 2^(k+72): q in [0.39, 1.63], normal */
    float g = us * q;
    float tail = tl__fmaf(g, rp, g);                      /* 2^72 a Phi(-a) */
    float z = tl__bitsf(xb & ~((uint32_t)((int32_t)xb >> 31) >> 1));   /* x >= 0: x; x < 0: -0 */
    uint32_t res = tl__fbits(tl__fmaf(tail, -0x1p-72f, z));
    return tl__bitsf(xb >= 0xff800000u ? 0xffc00000u : res);    /* -inf, -NaN: NaN */
}

/* gelu, tanh approximation x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2, computed as
   the identical x sigmoid(v), v = 2 sqrt(2/pi) (x + 0.044715 x^3), which does not cancel
   in the left tail: < 1.25 ulp. v is formed in double and passed to exp as float hi + lo,
   since it is large where the result is tiny. gelu_tanh(-inf) = NaN, (+inf) = inf. */
TL_MATH_INLINE float tl_gelu_tanhf(float x)
{
    double xd = x;
    double v = xd * (0x1.9884533d43651p+0 + 0x1.2444f2a4d8b4bp-4 * (xd * xd));
    double na = -tl__absd(v);
    float nh0 = (float)na;
    /* e^-109.5 2^32 is subnormal; where v < -109, x sigmoid(v) rounds to -0 anyway. For
       x >= 0, e^-|v| below 2^-60 is dropped (tl__sigmoid_hl), so -60 stands for anything
       lower and the exp's low part stays normal (the same bits, no microcode assists). */
    float nh = tl__clampf(nh0, tl__self(x >= 0.0f, -60.0f, -109.0f), 0.0f);
    float nl = tl__self(nh == nh0, (float)(na - (double)nh0), 0.0f);
    float lo, hi = tl__sigmoid_hl(nh, nl, x >= 0.0f, 32, &lo);
    float r = (x * hi + x * lo) * tl__self(x >= 0.0f, 1.0f, 0x1p-32f);
    r = tl__self(x < -20.0f, x * 0.0f, r);
    r = tl__self(x == (float)INFINITY, x, r);             /* not inf + inf * 0 */
    return tl__self(x == x, r, x);
}

/* softplus, PyTorch semantics: x where x*beta > threshold, else log1p(exp(x*beta))/beta,
   evaluated as (max(bx, 0) + log1p(exp(-|bx|))) / beta, which never overflows (PyTorch's
   direct form gives inf when threshold is set above 88). < 1.5 ulp for beta = 1. */
TL_MATH_INLINE float tl_softplusf(float x, float beta, float threshold)
{
    float bx = x * beta;
    float el, eh = tl__exp_hl(tl__clampf(-tl__absf(bx), -104.0f, 0.0f), 0, &el);
    float sp = tl__self(bx > 0.0f, bx, 0.0f) + tl__log1p_l(eh, el);   /* NaN: clamped to 0 */
    sp = tl__self(bx == bx, sp, bx);
    return tl__self(bx > threshold, x, sp / beta);
}

/* ------------------------------------------------------------------ atan, asin, acos */

#define TL__PIO4_HI 0x1.921fb6p-1f
#define TL__PIO2_HI 0x1.921fb6p+0f
#define TL__PIO2_LO (-0x1.777a5cp-25f)
#define TL__PI_HI 0x1.921fb6p+1f
#define TL__PI_LO (-0x1.777a5cp-24f)

/* atan(a) for a >= 0 (inf included): reduced to |t| <= 7/16 around c = 0, 1/2, 1, 3/2 or
   infinity, atan(a) = atan(c) + atan((a - c) / (1 + a c)) (a - c is exact in each range),
   then t + t^3 P(t^2) (P of degree 4, relative error 2^-29) added to atan(c) = hi + lo. */
TL_MATH_INLINE float tl__atan_pos(float a)
{
    int r1 = a >= 0x1.cp-2f, r2 = a >= 0x1.6p-1f, r3 = a >= 0x1.3p+0f, r4 = a >= 0x1.38p+1f;
    float num = tl__self(r4, -1.0f, tl__self(r3, a - 1.5f, tl__self(r2, a - 1.0f,
                         tl__self(r1, 2.0f * a - 1.0f, a))));
    float den = tl__self(r4, a, tl__self(r3, 1.0f + 1.5f * a, tl__self(r2, a + 1.0f,
                         tl__self(r1, 2.0f + a, 1.0f))));
    float hi = tl__self(r4, 0x1.921fb6p+0f, tl__self(r3, 0x1.f730bep-1f, tl__self(r2, 0x1.921fb6p-1f,
                        tl__self(r1, 0x1.dac670p-2f, 0.0f))));
    float lo = tl__self(r4, -0x1.777a5cp-25f, tl__self(r3, -0x1.afc12cp-26f, tl__self(r2, -0x1.777a5cp-26f,
                        tl__self(r1, 0x1.586ed4p-28f, 0.0f))));
    float t = num / den;
    float z = t * t;
    float p = -0x1.dcfe88p-5f;
    p = p * z + 0x1.adcb3ap-4f;
    p = p * z + -0x1.236e6cp-3f;
    p = p * z + 0x1.998df2p-3f;
    p = p * z + -0x1.555542p-2f;
    return hi + (((t * z) * p + lo) + t);
}

/* atan: < 1 ulp; atan(+-inf) = +-pi/2 (rounded), keeps -0. */
TL_MATH_INLINE float tl_atanf(float x)
{
    float r = tl__signf(tl__atan_pos(tl__absf(x)), x);
    return tl__self(x == x, r, x);
}

/* atan2(y, x): < 1.5 ulp; C99 special values (signed zeros give 0 / pi, infinities give
   multiples of pi/4). atan of min/max of |x|, |y| in [0, 1], then placed in its octant. */
TL_MATH_INLINE float tl_atan2f(float y, float x)
{
    float ax = tl__absf(x), ay = tl__absf(y);
    int swap = ay > ax;
    float num = tl__self(swap, ax, ay), den = tl__self(swap, ay, ax);
    float t = num / den;
    t = tl__self(ax == ay, 1.0f, t);                      /* equal, or both infinite */
    t = tl__self(num == 0.0f, 0.0f, t);                   /* includes 0/0 */
    float p = tl__atan_pos(t);
    int xneg = (tl__fbits(x) >> 31) != 0;                 /* -0 counts as negative */
    float r = tl__self(swap,
                       tl__self(xneg, TL__PIO2_HI + (p + TL__PIO2_LO), TL__PIO2_HI - (p - TL__PIO2_LO)),
                       tl__self(xneg, TL__PI_HI - (p - TL__PI_LO), p));
    r = tl__signf(r, y);
    r = tl__self(y == y, r, y);
    return tl__self(x == x, r, x);
}

/* asin(x) - x = x w, w = z P(z), z = x^2, for |x| <= 1/2; P of degree 5 (relative error
   2^-31). */
TL_MATH_INLINE float tl__asin_w(float z)
{
    float p = 0x1.34db14p-5f;
    p = p * z + 0x1.d4fb36p-7f;
    p = p * z + 0x1.04d452p-5f;
    p = p * z + 0x1.6ca744p-5f;
    p = p * z + 0x1.3338acp-4f;
    p = p * z + 0x1.55554cp-3f;
    return z * p;
}

/* For 1/2 < |x| <= 1: s = sqrt((1 - |x|)/2) as sh + c (sh with 12 significant bits), and
   asin(s) - sh = c + s w(s^2). Needs -fno-math-errno to vectorize (sqrtss/sqrtps). */
TL_MATH_INLINE float tl__asin_tail(float a, float *sh)
{
    float zz = 0.5f * (1.0f - a);                         /* exact */
    float s = __builtin_sqrtf(zz);
    *sh = tl__hi12f(s);
    float c = (zz - *sh * *sh) / (s + *sh);
    c = tl__self(s > 0.0f, c, 0.0f);
    return c + s * tl__asin_w(zz);
}

/* asin: < 0.8 ulp; NaN outside [-1, 1], keeps -0. Above 1/2:
   asin(|x|) = pi/2 - 2 asin(s) = 2 (pi/4 - sh) + (pi/2_lo - 2 (asin(s) - sh)), the first
   term exact. */
TL_MATH_INLINE float tl_asinf(float x)
{
    float a = tl__absf(x);
    float small = x + x * tl__asin_w(x * x);
    float sh, tail = tl__asin_tail(a, &sh);
    float big = tl__signf(2.0f * (TL__PIO4_HI - sh) + (TL__PIO2_LO - 2.0f * tail), x);
    float r = tl__self(a <= 0.5f, small, big);
    r = tl__self(a > 1.0f, (float)NAN, r);
    return tl__self(x == x, r, x);
}

/* acos: < 0.9 ulp; NaN outside [-1, 1]. |x| <= 1/2: pi/2 - asin(x); x > 1/2: 2 asin(s);
   x < -1/2: pi - 2 asin(s) (pi_hi - 2 sh is exact). */
TL_MATH_INLINE float tl_acosf(float x)
{
    float a = tl__absf(x);
    float mid = TL__PIO2_HI - (x - (TL__PIO2_LO - x * tl__asin_w(x * x)));
    float sh, tail = tl__asin_tail(a, &sh);
    float pos = 2.0f * sh + 2.0f * tail;
    float neg = (TL__PI_HI - 2.0f * sh) + (TL__PI_LO - 2.0f * tail);
    float r = tl__self(a <= 0.5f, mid, tl__self(x > 0.0f, pos, neg));
    r = tl__self(a > 1.0f, (float)NAN, r);
    return tl__self(x == x, r, x);
}

/* ------------------------------------------------------------------ float64 versions */
/* glibc libm (< 1 ulp, correct special values; not vectorized), but for exp, log, log1p,
   expm1, tanh, sigmoid, log2, log10, sin, cos, tan, pow, erf, erfc, gelu (ours,
   vectorized; sin/cos/tan below 2^28) and the silu built on exp. */

/* 2^(j/128) = hi[j] + lo[j] (hi rounded to nearest), for tl_exp */
static const double tl__exp2j_hi[128] = {
    0x1.0000000000000p+0, 0x1.0163da9fb3335p+0, 0x1.02c9a3e778061p+0, 0x1.04315e86e7f85p+0,
    0x1.059b0d3158574p+0, 0x1.0706b29ddf6dep+0, 0x1.0874518759bc8p+0, 0x1.09e3ecac6f383p+0,
    0x1.0b5586cf9890fp+0, 0x1.0cc922b7247f7p+0, 0x1.0e3ec32d3d1a2p+0, 0x1.0fb66affed31bp+0,
    0x1.11301d0125b51p+0, 0x1.12abdc06c31ccp+0, 0x1.1429aaea92de0p+0, 0x1.15a98c8a58e51p+0,
    0x1.172b83c7d517bp+0, 0x1.18af9388c8deap+0, 0x1.1a35beb6fcb75p+0, 0x1.1bbe084045cd4p+0,
    0x1.1d4873168b9aap+0, 0x1.1ed5022fcd91dp+0, 0x1.2063b88628cd6p+0, 0x1.21f49917ddc96p+0,
    0x1.2387a6e756238p+0, 0x1.251ce4fb2a63fp+0, 0x1.26b4565e27cddp+0, 0x1.284dfe1f56381p+0,
    0x1.29e9df51fdee1p+0, 0x1.2b87fd0dad990p+0, 0x1.2d285a6e4030bp+0, 0x1.2ecafa93e2f56p+0,
    0x1.306fe0a31b715p+0, 0x1.32170fc4cd831p+0, 0x1.33c08b26416ffp+0, 0x1.356c55f929ff1p+0,
    0x1.371a7373aa9cbp+0, 0x1.38cae6d05d866p+0, 0x1.3a7db34e59ff7p+0, 0x1.3c32dc313a8e5p+0,
    0x1.3dea64c123422p+0, 0x1.3fa4504ac801cp+0, 0x1.4160a21f72e2ap+0, 0x1.431f5d950a897p+0,
    0x1.44e086061892dp+0, 0x1.46a41ed1d0057p+0, 0x1.486a2b5c13cd0p+0, 0x1.4a32af0d7d3dep+0,
    0x1.4bfdad5362a27p+0, 0x1.4dcb299fddd0dp+0, 0x1.4f9b2769d2ca7p+0, 0x1.516daa2cf6642p+0,
    0x1.5342b569d4f82p+0, 0x1.551a4ca5d920fp+0, 0x1.56f4736b527dap+0, 0x1.58d12d497c7fdp+0,
    0x1.5ab07dd485429p+0, 0x1.5c9268a5946b7p+0, 0x1.5e76f15ad2148p+0, 0x1.605e1b976dc09p+0,
    0x1.6247eb03a5585p+0, 0x1.6434634ccc320p+0, 0x1.6623882552225p+0, 0x1.68155d44ca973p+0,
    0x1.6a09e667f3bcdp+0, 0x1.6c012750bdabfp+0, 0x1.6dfb23c651a2fp+0, 0x1.6ff7df9519484p+0,
    0x1.71f75e8ec5f74p+0, 0x1.73f9a48a58174p+0, 0x1.75feb564267c9p+0, 0x1.780694fde5d3fp+0,
    0x1.7a11473eb0187p+0, 0x1.7c1ed0130c132p+0, 0x1.7e2f336cf4e62p+0, 0x1.80427543e1a12p+0,
    0x1.82589994cce13p+0, 0x1.8471a4623c7adp+0, 0x1.868d99b4492edp+0, 0x1.88ac7d98a6699p+0,
    0x1.8ace5422aa0dbp+0, 0x1.8cf3216b5448cp+0, 0x1.8f1ae99157736p+0, 0x1.9145b0b91ffc6p+0,
    0x1.93737b0cdc5e5p+0, 0x1.95a44cbc8520fp+0, 0x1.97d829fde4e50p+0, 0x1.9a0f170ca07bap+0,
    0x1.9c49182a3f090p+0, 0x1.9e86319e32323p+0, 0x1.a0c667b5de565p+0, 0x1.a309bec4a2d33p+0,
    0x1.a5503b23e255dp+0, 0x1.a799e1330b358p+0, 0x1.a9e6b5579fdbfp+0, 0x1.ac36bbfd3f37ap+0,
    0x1.ae89f995ad3adp+0, 0x1.b0e07298db666p+0, 0x1.b33a2b84f15fbp+0, 0x1.b59728de5593ap+0,
    0x1.b7f76f2fb5e47p+0, 0x1.ba5b030a1064ap+0, 0x1.bcc1e904bc1d2p+0, 0x1.bf2c25bd71e09p+0,
    0x1.c199bdd85529cp+0, 0x1.c40ab5fffd07ap+0, 0x1.c67f12e57d14bp+0, 0x1.c8f6d9406e7b5p+0,
    0x1.cb720dcef9069p+0, 0x1.cdf0b555dc3fap+0, 0x1.d072d4a07897cp+0, 0x1.d2f87080d89f2p+0,
    0x1.d5818dcfba487p+0, 0x1.d80e316c98398p+0, 0x1.da9e603db3285p+0, 0x1.dd321f301b460p+0,
    0x1.dfc97337b9b5fp+0, 0x1.e264614f5a129p+0, 0x1.e502ee78b3ff6p+0, 0x1.e7a51fbc74c83p+0,
    0x1.ea4afa2a490dap+0, 0x1.ecf482d8e67f1p+0, 0x1.efa1bee615a27p+0, 0x1.f252b376bba97p+0,
    0x1.f50765b6e4540p+0, 0x1.f7bfdad9cbe14p+0, 0x1.fa7c1819e90d8p+0, 0x1.fd3c22b8f71f1p+0,
};
static const double tl__exp2j_lo[128] = {
    0x0.0p+0, 0x1.b61299ab8cdb7p-54, -0x1.19083535b085dp-56, -0x1.0a31c1977c96ep-54,
    0x1.d73e2a475b465p-55, -0x1.c91dfe2b13c27p-55, 0x1.186be4bb284ffp-57, 0x1.1487818316136p-54,
    0x1.8a62e4adc610bp-54, 0x1.01edc16e24f71p-54, 0x1.03a1727c57b53p-59, -0x1.b9bedc44ebd7bp-57,
    -0x1.6c51039449b3ap-54, -0x1.1b514b36ca5c7p-58, -0x1.32fbf9af1369ep-54, 0x1.2406ab9eeab0ap-55,
    -0x1.19041b9d78a76p-55, -0x1.11023d1970f6cp-54, 0x1.e5b4c7b4968e4p-55, -0x1.95386352ef607p-54,
    0x1.e016e00a2643cp-54, -0x1.1df98027bb78cp-54, 0x1.dc775814a8495p-55, 0x1.2a97e9494a5eep-55,
    0x1.9b07eb6c70573p-54, 0x1.ac155bef4f4a4p-55, 0x1.2bd339940e9d9p-55, -0x1.a4c3a8c3f0d7ep-54,
    0x1.612e8afad1255p-55, -0x1.10adcd6381aa4p-59, 0x1.0024754db41d5p-54, 0x1.1ca0f45d52383p-56,
    0x1.6f46ad23182e4p-55, 0x1.a9ce78e18047cp-55, 0x1.32721843659a6p-54, -0x1.b5cee5c4e4628p-55,
    -0x1.63aeabf42eae2p-54, -0x1.e958d3c9904bdp-54, -0x1.5e436d661f5e3p-56, -0x1.efff8375d29c3p-54,
    0x1.ada0911f09ebcp-55, -0x1.7d023f956f9f3p-54, -0x1.ef3691c309278p-58, -0x1.1c7dde35f7999p-55,
    0x1.89b7a04ef80d0p-59, 0x1.c944bd1648a76p-54, 0x1.3c1a3b69062f0p-56, 0x1.9cb62f3d1be56p-54,
    0x1.d4397afec42e2p-56, 0x1.8ecdbbc6a7833p-54, -0x1.4b309d25957e3p-54, -0x1.f768569bd93efp-55,
    -0x1.07abe1db13cadp-55, -0x1.d689cefede59bp-55, 0x1.9bb2c011d93adp-54, 0x1.295e15b9a1de8p-55,
    0x1.6324c054647adp-54, 0x1.c4b1b816986a2p-60, 0x1.ba6f93080e65ep-54, -0x1.3e2429b56de47p-54,
    -0x1.383c17e40b497p-54, -0x1.c483c759d8933p-55, -0x1.bb60987591c34p-54, 0x1.038ae44f73e65p-57,
    -0x1.bdd3413b26456p-54, -0x1.2895667ff0b0dp-56, -0x1.bbe3a683c88abp-57, -0x1.83c0f25860ef6p-55,
    -0x1.16e4786887a99p-55, -0x1.0a8d96c65d53cp-54, -0x1.0245957316dd3p-54, 0x1.866b80a02162dp-54,
    -0x1.41577ee04992fp-55, 0x1.f124cd1164dd6p-54, 0x1.05d02ba15797ep-56, -0x1.27c86626d972bp-54,
    -0x1.d4c1dd41532d8p-54, -0x1.8d684a341cdfbp-55, -0x1.fc6f89bd4f6bap-54, 0x1.994c2f37cb53ap-54,
    0x1.6e9f156864b27p-54, -0x1.0d55e32e9e3aap-56, 0x1.5cc13a2e3976cp-55, -0x1.dd6792e582524p-54,
    -0x1.75fc781b57ebcp-57, -0x1.64b7c96a5f039p-56, -0x1.d185b7c1b85d1p-54, -0x1.173bd91cee632p-54,
    0x1.c7c46b071f2bep-56, 0x1.824ca78e64c6ep-56, -0x1.359495d1cd533p-54, 0x1.6305c7ddc36abp-54,
    -0x1.d2f6edb8d41e1p-54, 0x1.bcb7ecac563c7p-54, 0x1.0fac90ef7fd31p-54, -0x1.f9234cae76cd0p-55,
    0x1.7a1cd345dcc81p-54, -0x1.bdef54c80e425p-54, -0x1.2805e3084d708p-57, -0x1.c71dfbbba6de3p-54,
    -0x1.5584f7e54ac3bp-56, -0x1.efcd30e54292ep-54, 0x1.23dd07a2d9e84p-55, -0x1.efdca3f6b9c73p-54,
    0x1.11065895048ddp-55, 0x1.b4537e083c60ap-54, 0x1.2884dff483cadp-54, 0x1.1acbc48805c44p-56,
    0x1.503cbd1e949dbp-56, -0x1.dd83b53829d72p-55, -0x1.cbc3743797a9cp-54, -0x1.d487b719d8578p-54,
    0x1.2ed02d75b3707p-55, -0x1.11ec18beddfe8p-54, 0x1.c2300696db532p-54, 0x1.2da5778f018c3p-54,
    -0x1.1a5cd4f184b5cp-54, -0x1.7b627817a1496p-54, 0x1.39e8980a9cc8fp-55, 0x1.2d522ca0c8de2p-54,
    -0x1.e9c23179c2893p-54, -0x1.c93f3b411ad8cp-54, 0x1.dc7f486a4b6b0p-54, 0x1.3a1a5bf0d8e43p-54,
    0x1.9d3e12dd8a18bp-54, -0x1.dbb12d006350ap-54, 0x1.74853f3a5931ep-55, 0x1.2eb74966579e7p-57,
};

/* exp(xh + xl), |xl| <= 2^-52 |xh| (a double-double argument, pow's; tl_exp passes 0):
   tl_exp's method (below) with xl added to the reduced argument, which it keeps exactly
   until then; < 0.51 ulp for normal results; xl is dropped where xh is out of range (the
   result is 0 or inf there); NaN gives NaN. */
TL_MATH_INLINE double tl__exp_xl(double xh, double xl)
{
    int inr = (xh > -746.0) & (xh < 710.0);
    double xc = tl__seld(xh < -746.0, -746.0, tl__seld(xh > 710.0, 710.0, xh)); /* NaN stays */
    double t = xc * 0x1.71547652b82fep+7 + 0x1.8p52;      /* 1.5 2^52 + k: k in the low bits */
    double kd = t - 0x1.8p52;
    double r = ((xc - kd * 0x1.62e42fef80000p-8) - kd * 0x1.1cf79abc9e3b4p-43)
               + tl__seld(inr, xl, 0.0);
    uint64_t tb = tl__dbits(t);                           /* 0x4338000000000000 + k */
    uint64_t j = tb & 127;
    int64_t e = (int64_t)(tb >> 7) - (int64_t)(0x4338000000000000u >> 7), e1 = e >> 1;
    double p = r + (r * r) * (0.5 + r * (0x1.5555555555555p-3 + r * (0x1.5555555555555p-5
                                          + r * 0x1.1111111111111p-7)));
    double sh = tl__exp2j_hi[j], sl = tl__exp2j_lo[j];
    double m = sh + (sh * p + sl * (1.0 + p));
    double s1 = tl__bitsd((uint64_t)(e1 + 1023) << 52);
    double s2 = tl__bitsd((uint64_t)(e - e1 + 1023) << 52);
    return (m * s1) * s2;
}

/* exp: < 0.51 ulp for normal results (< 1 ulp of the subnormal spacing below), vectorized
   (table loads become gathers). x = (128 e + j) ln2/128 + r, |r| <= ln2/256, with ln2/128 =
   hi (34 bits, so k hi is exact) + lo; exp(x) = 2^e 2^(j/128) (1 + p(r)), p of degree 5
   (Taylor, relative error 2^-60), the table's low part added with p's term so only the last
   addition rounds at full size; 2^e applied in two normal halves. */
TL_MATH_INLINE double tl_exp(double x)
{
    return tl__seld(x == x, tl__exp_xl(tl__seld(x == x, x, 0.0), 0.0), x);
}
/* R / z = 2/3 + z Q(z) for tl__log_d and tl__log2_hl (z = s^2, s = f / (2 + f)). */
TL_MATH_INLINE double tl__log_q(double z)
{
    double q = 0x1.0995db5506568p-3;
    q = tl__fma(q, z, 0x1.0fffe0b872419p-3);
    q = tl__fma(q, z, 0x1.3b19879b43160p-3);
    q = tl__fma(q, z, 0x1.745d06cbe0d04p-3);
    q = tl__fma(q, z, 0x1.c71c71ddb535ep-3);
    q = tl__fma(q, z, 0x1.249249248bd22p-2);
    q = tl__fma(q, z, 0x1.9999999999993p-2);
    q = tl__fma(q, z, 0x1.5555555555555p-1);
    return q;
}

/* log(x) + c, for finite x > 0 and |c| < 2^-52 (log1p's correction for the rounding of
   x = 1 + its argument, a relative error; 0 for log), vectorized, < 0.9 ulp:
   x = 2^k m, m in [sqrt(1/2), sqrt2) (subnormals scaled by 2^54 first), f = m - 1 (exact),
   s = f / (2 + f), z = s^2: log(m) = f - f^2/2 + s (f^2/2 + R), R = z (2/3 + z Q(z)) (Q of
   degree 6, relative error 2^-46.5: 2^-52 on R), so the leading term f is exact and s's
   rounding only reaches the small term; k ln2 is added in two parts (k ln2_hi exact) and c
   with the low part, so the result is rounded once. k comes from the exponent bits as a
   double (no int64 -> double conversion, which AVX2 lacks). */
TL_MATH_INLINE double tl__log_d(double x, double c)
{
    int sub = x < 0x1p-1022;
    uint64_t u = tl__dbits(tl__seld(sub, x * 0x1p54, x));
    uint64_t e = (u + 0x00095f619980c433u) >> 52;           /* k + 1023 */
    double m = tl__bitsd(u - (e << 52) + (1023ull << 52));
    double kd = (tl__bitsd(0x4330000000000000u | e) - 0x1.00000000003ffp52)
                - tl__seld(sub, 54.0, 0.0);
    double f = m - 1.0;
    double s = f / (2.0 + f);
    double z = s * s;
    double q = tl__log_q(z);
    double hfsq = 0.5 * f * f;
    double lo = s * (hfsq + z * q) + (kd * 0x1.a39ef35793c76p-33 + c);
    return kd * 0x1.62e42fee00000p-1 - ((hfsq - lo) - f);
}

/* log(m) as hi + *lo and k, for x = 2^k m as in tl__log_d (the same reduction and
   polynomial, m in [sqrt(1/2), sqrt2), f = m - 1 exact, s = f / (2 + f), log(m) = f - f^2/2 +
   s (f^2/2 + R)), finite x > 0, for log2 and log10, which scale it so that only their last
   addition rounds at full size. f - f^2/2 is carried in double-double (f^2 split by an fma),
   the rounding of 2 + f and of the division is corrected to first order (1/d taken as 1/2,
   which leaves a fifth of it), f^2/2 + R is carried as w + wl, and s w is split exactly by
   an fma and added with an exact two-sum, so that *lo is about 2^-53 of hi and only R's own
   errors and the leftover of s's remain: log(m) to about 2^-57 relative. (Table-free:
   pow's table-based tl__pow_log_hl is more precise, but its two table loads per element,
   emulated gathers, make it about 20% slower.) */
TL_MATH_INLINE double tl__log2_hl(double x, double *kd, double *lo)
{
    int sub = x < 0x1p-1022;
    uint64_t u = tl__dbits(tl__seld(sub, x * 0x1p54, x));
    uint64_t e = (u + 0x00095f619980c433u) >> 52;         /* k + 1023 */
    double m = tl__bitsd(u - (e << 52) + (1023ull << 52));
    *kd = (tl__bitsd(0x4330000000000000u | e) - 0x1.00000000003ffp52) - tl__seld(sub, 54.0, 0.0);
    double f = m - 1.0;
    double d = 2.0 + f;
    double dl = (2.0 - d) + f;                            /* 2 + f = d + dl */
    double s = f / d;
    /* 2 (f / (d + dl) - s), to first order, with 1/d ~ 1/2 (within 18%) */
    double sc = tl__fma(-s, dl, tl__fma(-s, d, f));
    double z = s * s;
    double q = tl__log_q(z);
    double fsq = f * f;
    double fsql = tl__fma(f, f, -fsq);                    /* f^2 = fsq + fsql */
    double hf = 0.5 * fsq;
    double h = f - hf;
    double hl = (f - h) - hf;                             /* f - hf = h + hl, |hf| <= |f| */
    double rq = z * q;
    double w = hf + rq;
    double wl = ((hf - w) + rq) + 0.5 * fsql;             /* f^2/2 + R = w + wl */
    double t = s * w;
    double tl = tl__fma(s, w, -t);                        /* s w = t + tl */
    double g = h + t;
    double gl = (h - g) + t;                              /* h + t = g + gl, |t| < |h| */
    *lo = gl + (tl + tl__fma(s, wl, tl__fma(sc, 0.5 * w, hl - 0.5 * fsql)));
    return g;
}

/* For tl__pow_log_hl: -log(I/256) = tab[2 (I - 181)] + tab[2 (I - 181) + 1] (the first rounded
   to nearest) for I = 181..362, interleaved so both come from one place (the vectorized
   loop loads them as pairs). Our table (mpmath). */
static const double tl__pow_logtab[364] = {
    0x1.630030b3aac49p-2, 0x1.dc18ce51fff99p-57, 0x1.5d5bddf595f30p-2, -0x1.6541148cbb8a2p-56,
    0x1.57bf753c8d1fbp-2, -0x1.0908d15f88b63p-57, 0x1.522ae0738a3d8p-2, -0x1.8f7e9b38a6979p-57,
    0x1.4c9e09e172c3cp-2, -0x1.123615b147a5dp-58, 0x1.4718dc271c41bp-2, 0x1.8fb4c14c56eefp-60,
    0x1.419b423d5e8c7p-2, 0x1.0dbb243827392p-57, 0x1.3c25277333184p-2, -0x1.2ad27e50a8ec6p-56,
    0x1.36b6776be1117p-2, -0x1.324f0e883858ep-58, 0x1.314f1e1d35ce4p-2, -0x1.3d69909e5c3dcp-56,
    0x1.2bef07cdc9354p-2, -0x1.82dad7fd86088p-56, 0x1.269621134db92p-2, 0x1.e0efadd9db02bp-56,
    0x1.214456d0eb8d4p-2, 0x1.f7ae91aeba60ap-57, 0x1.1bf99635a6b95p-2, -0x1.12aeb84249223p-57,
    0x1.16b5ccbacfb73p-2, 0x1.66fbd28b40935p-56, 0x1.1178e8227e47cp-2, -0x1.0e63a5f01c691p-57,
    0x1.0c42d676162e3p-2, 0x1.162c79d5d11eep-58, 0x1.07138604d5862p-2, 0x1.cdb16ed4e9138p-56,
    0x1.01eae5626c691p-2, -0x1.18290bd2932e2p-59, 0x1.f991c6cb3b379p-3, 0x1.f665066f980a2p-57,
    0x1.ef5ade4dcffe6p-3, -0x1.08ab2ddc708a0p-58, 0x1.e530effe71012p-3, 0x1.2276041f43042p-59,
    0x1.db13db0d48940p-3, 0x1.aa11d49f96cb9p-58, 0x1.d1037f2655e7bp-3, 0x1.60629242471a2p-57,
    0x1.c6ffbc6f00f71p-3, -0x1.8e58b2c57a4a5p-57, 0x1.bd087383bd8adp-3, 0x1.dd355f6a516d7p-60,
    0x1.b31d8575bce3dp-3, -0x1.6353ab386a94dp-57, 0x1.a93ed3c8ad9e3p-3, 0x1.bcafa9de97203p-57,
    0x1.9f6c407089664p-3, 0x1.35a19605e67efp-59, 0x1.95a5adcf7017fp-3, 0x1.142c507fb7a3dp-58,
    0x1.8beafeb38fe8cp-3, 0x1.55aa8b6997a40p-58, 0x1.823c16551a3c2p-3, -0x1.1232ce70be781p-57,
    0x1.7898d85444c73p-3, 0x1.ef8f6ebcfb201p-58, 0x1.6f0128b756abcp-3, -0x1.8de59c21e166cp-57,
    0x1.6574ebe8c133ap-3, -0x1.d34f0f4621bedp-60, 0x1.5bf406b543db2p-3, -0x1.1f5b44c0df7e7p-61,
    0x1.527e5e4a1b58dp-3, -0x1.71a9682395bfdp-61, 0x1.4913d8333b561p-3, -0x1.0d5604930f135p-58,
    0x1.3fb45a59928ccp-3, -0x1.d87e6a354d056p-57, 0x1.365fcb0159016p-3, 0x1.7d411a5b944adp-58,
    0x1.2d1610c86813ap-3, -0x1.499a3f25af95fp-58, 0x1.23d712a49c202p-3, -0x1.6e38161051d69p-57,
    0x1.1aa2b7e23f72ap-3, -0x1.c6ef1d9b2ef7ep-59, 0x1.1178e8227e47cp-3, -0x1.0e63a5f01c691p-58,
    0x1.08598b59e3a07p-3, -0x1.dd7009902bf32p-57, 0x1.fe89139dbd566p-4, -0x1.ac9f4215f9393p-58,
    0x1.ec739830a1120p-4, -0x1.a2bf991780d3fp-59, 0x1.da727638446a2p-4, 0x1.401fa71733019p-58,
    0x1.c885801bc4b23p-4, 0x1.a38cb559a6706p-58, 0x1.b6ac88dad5b1cp-4, -0x1.0057eed1ca59fp-59,
    0x1.a4e7640b1bc38p-4, -0x1.5b5ca203e4259p-58, 0x1.9335e5d594989p-4, -0x1.478a85704ccb7p-58,
    0x1.8197e2f40e3f0p-4, 0x1.b9f2dffbeed43p-60, 0x1.700d30aeac0e1p-4, -0x1.72566212cdd05p-61,
    0x1.5e95a4d9791cbp-4, 0x1.f38745c5c450ap-58, 0x1.4d3115d207eacp-4, 0x1.769f42c7842ccp-58,
    0x1.3bdf5a7d1ee64p-4, 0x1.7a976d3b5b45fp-59, 0x1.2aa04a44717a5p-4, -0x1.d15d38d2fa3f7p-58,
    0x1.1973bd1465567p-4, -0x1.7558367a6acf6p-59, 0x1.08598b59e3a07p-4, -0x1.dd7009902bf32p-58,
    0x1.eea31c006b87cp-5, -0x1.3e4fc93b7b66cp-59, 0x1.ccb73cdddb2ccp-5, -0x1.e48fb0500efd4p-59,
    0x1.aaef2d0fb10fcp-5, 0x1.a353bb42e0addp-61, 0x1.894aa149fb343p-5, 0x1.a8be97660a23dp-60,
    0x1.67c94f2d4bb58p-5, 0x1.0413e6505e603p-59, 0x1.466aed42de3eap-5, -0x1.cdd6f7f4a137ep-59,
    0x1.252f32f8d183fp-5, -0x1.947f792615916p-59, 0x1.0415d89e74444p-5, 0x1.c05cf1d753622p-59,
    0x1.c63d2ec14aaf2p-6, -0x1.ce030a686bd86p-60, 0x1.8492528c8cabfp-6, -0x1.d192d0619fa67p-60,
    0x1.432a925980cc1p-6, -0x1.8cdaf39004192p-60, 0x1.0205658935847p-6, 0x1.27c8e8416e71fp-60,
    0x1.82448a388a2aap-7, 0x1.04b16137f09a0p-62, 0x1.010157588de71p-7, 0x1.46662d417ced0p-62,
    0x1.0080559588b35p-8, 0x1.f96638cf63677p-62, 0x0p+0, 0x0p+0,
    -0x1.ff00aa2b10bc0p-9, -0x1.2821ad5a6d353p-63, -0x1.fe02a6b106789p-8, 0x1.e44b7e3711ebfp-67,
    -0x1.7dc475f810a77p-7, 0x1.16d7687d3df21p-62, -0x1.fc0a8b0fc03e4p-7, 0x1.83092c59642a1p-62,
    -0x1.3cea44346a575p-6, 0x1.0cb5a902b3a1cp-62, -0x1.7b91b07d5b11bp-6, 0x1.5b602ace3a510p-60,
    -0x1.b9fc027af9198p-6, 0x1.0ae69229dc868p-64, -0x1.f829b0e783300p-6, -0x1.33e3f04f1ef23p-60,
    -0x1.1b0d98923d980p-5, 0x1.e9ae889bac481p-60, -0x1.39e87b9febd60p-5, 0x1.5bfa937f551bbp-59,
    -0x1.58a5bafc8e4d5p-5, 0x1.ce55c2b4e2b72p-59, -0x1.77458f632dcfcp-5, -0x1.18d3ca87b9296p-59,
    -0x1.95c830ec8e3ebp-5, -0x1.f5a0e80520bf2p-59, -0x1.b42dd711971bfp-5, 0x1.eb9759c130499p-60,
    -0x1.d276b8adb0b52p-5, -0x1.1e3c53257fd47p-61, -0x1.f0a30c01162a6p-5, -0x1.85f325c5bbacdp-59,
    -0x1.075983598e471p-4, -0x1.80da5333c45b8p-59, -0x1.16536eea37ae1p-4, 0x1.79da3e8c22cdap-60,
    -0x1.253f62f0a1417p-4, 0x1.c125963fc4cfdp-62, -0x1.341d7961bd1d1p-4, 0x1.b599f227becbbp-58,
    -0x1.42edcbea646f0p-4, -0x1.ddd4f935996c9p-59, -0x1.51b073f06183fp-4, -0x1.a49e39a1a8be4p-58,
    -0x1.60658a93750c4p-4, 0x1.388458ec21b6ap-58, -0x1.6f0d28ae56b4cp-4, 0x1.906d99184b992p-58,
    -0x1.7da766d7b12cdp-4, 0x1.eeedfcdd94131p-58, -0x1.8c345d6319b21p-4, 0x1.4a697ab3424a9p-61,
    -0x1.9ab42462033adp-4, 0x1.2099e1c184e8ep-59, -0x1.a926d3a4ad563p-4, -0x1.942f48aa70ea9p-58,
    -0x1.b78c82bb0eda1p-4, -0x1.0878cf0327e21p-61, -0x1.c5e548f5bc743p-4, -0x1.5d617ef8161b1p-60,
    -0x1.d4313d66cb35dp-4, -0x1.790dd951d90fap-58, -0x1.e27076e2af2e6p-4, 0x1.61578001e0162p-60,
    -0x1.f0a30c01162a6p-4, -0x1.85f325c5bbacdp-58, -0x1.fec9131dbeabbp-4, 0x1.5746b9981b36cp-58,
    -0x1.0671512ca596ep-3, -0x1.50c647eb86499p-58, -0x1.0d77e7cd08e59p-3, -0x1.9a5dc5e9030acp-57,
    -0x1.14785846742acp-3, -0x1.a28813e3a7f07p-57, -0x1.1b72ad52f67a0p-3, -0x1.483023472cd74p-58,
    -0x1.2266f190a5acbp-3, -0x1.f547bf1809e88p-57, -0x1.29552f81ff523p-3, -0x1.301771c407dbfp-57,
    -0x1.303d718e47fd3p-3, 0x1.6b9c7d96091fap-63, -0x1.371fc201e8f74p-3, -0x1.de6cb62af18a0p-58,
    -0x1.3dfc2b0ecc62ap-3, 0x1.ab3a8e7d81017p-58, -0x1.44d2b6ccb7d1ep-3, -0x1.9f4f6543e1f88p-57,
    -0x1.4ba36f39a55e5p-3, -0x1.68981bcc36756p-57, -0x1.526e5e3a1b438p-3, 0x1.746ff8a470d3ap-57,
    -0x1.59338d9982086p-3, 0x1.65d22aa8ad7cfp-58, -0x1.5ff3070a793d4p-3, 0x1.bc60efafc6f6ep-58,
    -0x1.66acd4272ad51p-3, 0x1.0900e4e1ea8b2p-58, -0x1.6d60fe719d21dp-3, 0x1.caae268ecd179p-57,
    -0x1.740f8f54037a5p-3, 0x1.b264062a84cdbp-58, -0x1.7ab890210d909p-3, -0x1.be36b2d6a0608p-59,
    -0x1.815c0a14357ebp-3, 0x1.4be48073a0564p-58, -0x1.87fa06520c911p-3, 0x1.bf7fdbfa08d9ap-57,
    -0x1.8e928de886d41p-3, 0x1.569d851a56770p-57, -0x1.9525a9cf456b4p-3, -0x1.d904c1d4e2e26p-57,
    -0x1.9bb362e7dfb83p-3, -0x1.575e31f003e0cp-57, -0x1.a23bc1fe2b563p-3, -0x1.93711b07a998cp-59,
    -0x1.a8becfc882f19p-3, 0x1.e8c37918c39ebp-58, -0x1.af3c94e80bff3p-3, 0x1.398cff3641985p-58,
    -0x1.b5b519e8fb5a4p-3, -0x1.ba27fdc19e1a0p-57, -0x1.bc286742d8cd6p-3, -0x1.4fce744870f55p-58,
    -0x1.c2968558c18c1p-3, 0x1.73dee38a3fb6bp-57, -0x1.c8ff7c79a9a22p-3, 0x1.4f689f8434012p-57,
    -0x1.cf6354e09c5dcp-3, -0x1.239a07d55b695p-57, -0x1.d5c216b4fbb91p-3, -0x1.6e443597e4d40p-57,
    -0x1.dc1bca0abec7dp-3, -0x1.834c51998b6fcp-57, -0x1.e27076e2af2e6p-3, 0x1.61578001e0162p-59,
    -0x1.e8c0252aa5a60p-3, 0x1.6e03a39bfc89bp-59, -0x1.ef0adcbdc5936p-3, -0x1.48637950dc20dp-57,
    -0x1.f550a564b7b37p-3, -0x1.c5f6dfd018c37p-61, -0x1.fb9186d5e3e2bp-3, 0x1.caaae64f21acbp-57,
    -0x1.00e6c45ad501dp-2, 0x1.cb9568ff6feadp-57, -0x1.0402594b4d041p-2, 0x1.28ec217a5022dp-57,
    -0x1.071b85fcd590dp-2, -0x1.d1707f97bde80p-58, -0x1.0a324e27390e3p-2, -0x1.7dcfde8061c03p-56,
    -0x1.0d46b579ab74bp-2, -0x1.03ec81c3cbd92p-57, -0x1.1058bf9ae4ad5p-2, -0x1.89fa0ab4cb31dp-58,
    -0x1.136870293a8b0p-2, -0x1.7b66298edd24ap-56, -0x1.1675cababa60ep-2, -0x1.ce63eab883717p-61,
    -0x1.1980d2dd4236fp-2, -0x1.9d3d1b0e4d147p-56, -0x1.1c898c16999fbp-2, 0x1.0e5c62aff1c44p-60,
    -0x1.1f8ff9e48a2f3p-2, 0x1.c9fdf9a0c4b07p-56, -0x1.22941fbcf7966p-2, 0x1.76f5eb09628afp-56,
    -0x1.2596010df763ap-2, 0x1.0f76c57075e9ep-58, -0x1.2895a13de86a3p-2, -0x1.7ad24c13f040ep-56,
    -0x1.2b9303ab89d25p-2, 0x1.896b5fd852ad4p-56, -0x1.2e8e2bae11d31p-2, 0x1.8f4cdb95ebdf9p-56,
    -0x1.31871c9544185p-2, 0x1.51acc4c09b379p-60, -0x1.347dd9a987d55p-2, 0x1.4dd4c580919f8p-57,
    -0x1.3772662bfd85bp-2, 0x1.b5629d8117de7p-59, -0x1.3a64c556945eap-2, 0x1.c68651945f97cp-57,
    -0x1.3d54fa5c1f710p-2, 0x1.e3265c6a1c98dp-56, -0x1.404308686a7e4p-2, 0x1.0bcfb6082ce6dp-56,
    -0x1.432ef2a04e814p-2, 0x1.29931715ac903p-56, -0x1.4618bc21c5ec2p-2, -0x1.f42decdeccf1dp-56,
    -0x1.49006804009d1p-2, 0x1.9ffc341f177dcp-57, -0x1.4be5f957778a1p-2, 0x1.259b35b04813dp-57,
    -0x1.4ec973260026ap-2, 0x1.42a87d977dc5ep-56, -0x1.51aad872df82dp-2, -0x1.3927ac19f55e3p-59,
    -0x1.548a2c3add263p-2, 0x1.819cf7e308ddbp-57, -0x1.5767717455a6cp-2, -0x1.526adb283660cp-56,
    -0x1.5a42ab0f4cfe2p-2, 0x1.8ebcb7dee9a3dp-56, -0x1.5d1bdbf5809cap-2, -0x1.4236383dc7fe1p-56,
    -0x1.5ff3070a793d4p-2, 0x1.bc60efafc6f6ep-57, -0x1.62c82f2b9c795p-2, -0x1.7b7af915300e5p-57,
};

/* log(m) as hi + *lo (relative error about 2^-70) and k, for x = 2^k m, m in [0.70703125,
   1.4140625) (subnormals scaled by 2^54 first), finite x > 0, for pow, which multiplies it
   by y: so precise that y log|x| keeps 2^-60 relative for any |y log|x|| up to 746.
   1/m to 8 bits, I/256 with I = rint(256 / m) (from a float division; any neighbour of the
   exact rint would do as well), I in [181, 362]: t = m I/256 - 1 is exact in one fma
   (|t| < 2^-8.5, and m I has at most 62 significant bits), log(m) = -log(I/256) + t - t^2/2
   + t^3 P(t), P of degree 5 (our minimax fit, relative error 2^-77), with the table's value
   + t - t^2/2 carried in double-double (t^2 split by an fma; |log(I/256)| >= 2^-8 > |t|
   unless I = 256, where it is 0, so fast two-sums are exact). k and I come from exponent
   and rounding-constant bits (no double <-> int64 conversions, which AVX2 lacks). */
TL_MATH_INLINE double tl__pow_log_hl(double x, double *kd, double *lo)
{
    int sub = x < 0x1p-1022;
    uint64_t u = tl__dbits(tl__seld(sub, x * 0x1p54, x));
    uint64_t e = (u + 0x0009600000000000u) >> 52;         /* k + 1023 */
    double m = tl__bitsd(u - (e << 52) + (1023ull << 52));
    *kd = (tl__bitsd(0x4330000000000000u | e) - 0x1.00000000003ffp52) - tl__seld(sub, 54.0, 0.0);
    double ri = (double)(256.0f / (float)m) + 0x1.8p52;  /* 1.5 2^52 + I */
    uint64_t j = (tl__dbits(ri) & 1023u) - 181u;
    double t = tl__fma(m, (ri - 0x1.8p52) * 0x1p-8, -1.0); /* exact */
    double ch = tl__pow_logtab[2 * j], cl = tl__pow_logtab[2 * j + 1];
    double p = -0x1.0000d16213b47p-3;
    p = tl__fma(p, t, 0x1.24932422a770dp-3);
    p = tl__fma(p, t, -0x1.5555555512e14p-3);
    p = tl__fma(p, t, 0x1.999999995a001p-3);
    p = tl__fma(p, t, -0x1.0000000000000p-2);
    p = tl__fma(p, t, 0x1.5555555555555p-2);
    double tsq = t * t;
    double tsql = tl__fma(t, t, -tsq);                    /* t^2 = tsq + tsql */
    double hf = 0.5 * tsq;
    double a = ch + t;
    double al = (ch - a) + t;                             /* ch + t = a + al */
    double b = a - hf;
    double bl = (a - b) - hf;                             /* a - hf = b + bl */
    *lo = (al + bl) + tl__fma(tsq * t, p, cl - 0.5 * tsql);
    return b;
}

/* C99 special values shared by log, log2, log10, given the finite-x result r */
TL_MATH_INLINE double tl__log2_special(double x, double r)
{
    r = tl__seld(x == 0.0, -(double)INFINITY, r);
    r = tl__seld(x < 0.0, (double)NAN, r);
    r = tl__seld(x == (double)INFINITY, x, r);
    return tl__seld(x == x, r, x);
}

/* log2: < 0.6 ulp (measured 0.562), vectorized: k + log(m) (1/ln2 in two parts), the
   products split exactly by fmas and k + hi added with an exact two-sum (no cancellation:
   |log2 m| <= 1/2 <= |k| unless k = 0, so the fast one), so the result is rounded once;
   exact at powers of two. */
TL_MATH_INLINE double tl_log2(double x)
{
    double kd, l, h = tl__log2_hl(x, &kd, &l);
    double ph = h * 0x1.71547652b82fep+0;
    double pl = tl__fma(h, 0x1.71547652b82fep+0, -ph)
                + tl__fma(l, 0x1.71547652b82fep+0, h * 0x1.777d0ffda0d24p-56);
    double r = kd + ph;
    double re = (kd - r) + ph;                            /* exact: |ph| <= 1/2 <= |kd| or kd = 0 */
    return tl__log2_special(x, r + (re + pl));
}

/* log10: < 0.6 ulp (measured 0.533), vectorized: k log10(2) (log10(2) = hi of 42 bits, so
   k hi is exact, + lo) + log(m) (1/ln10 in two parts), summed as log2 is, so the result is
   rounded once; exact where log10(x) is a representable number (10^n). */
TL_MATH_INLINE double tl_log10(double x)
{
    double kd, l, h = tl__log2_hl(x, &kd, &l);
    double kh = kd * 0x1.34413509f7800p-2;
    double ph = h * 0x1.bcb7b1526e50ep-2;
    double pl = tl__fma(h, 0x1.bcb7b1526e50ep-2, -ph)
                + tl__fma(l, 0x1.bcb7b1526e50ep-2,
                          tl__fma(h, 0x1.95355baaafad3p-57, kd * 0x1.fef311f12b358p-46));
    double r = kh + ph;
    double re = (kh - r) + ph;                            /* exact: |ph| < 0.16 < |kh| or kh = 0 */
    return tl__log2_special(x, r + (re + pl));
}

/* pow: < 0.52 ulp for normal results, vectorized, branch-free: exp(y log|x|) with log|x| =
   k ln2 + log(m) in double-double (tl__pow_log_hl, relative error 2^-70; ln2 = hi of 42 bits,
   so k hi is exact, + lo), the product by y split exactly by an fma, and exp of the
   double-double product (tl__exp_xl), so the error of y log|x| (< 2^-60 relative to the
   result for any |y log|x|| <= 746) stays far below the result's last bit. The sign and
   the C99 special cases by selects: pow(x, +-0) = pow(1, y) = 1 (NaN included), x < 0:
   odd integer y -> negative, non-integer finite y -> NaN; +-0 and +-inf bases and +-inf
   exponents by the Annex F table; overflow -> inf, gradual underflow; y = 2 is x * x
   (correctly rounded) and y = 1 is x. */
TL_MATH_INLINE double tl_pow(double x, double y)
{
    double ax = tl__absd(x), ay = tl__absd(y);
    double kd, l, h = tl__pow_log_hl(ax, &kd, &l);
    double kh = kd * 0x1.62e42fefa3800p-1;
    double lh = kh + h;                                   /* kh + h = lh + ll exactly */
    double bb = lh - kh;
    double ll = ((kh - (lh - bb)) + (h - bb)) + tl__fma(kd, 0x1.ef35793c76730p-45, l);
    /* log(+0) = -inf, log(inf) = inf, NaN: y log|x| then gives the Annex F results for +-0
       and +-inf bases and +-inf exponents (but x = -1), overflowing or vanishing in exp */
    lh = tl__seld(ax == 0.0, -(double)INFINITY, tl__seld(ax < (double)INFINITY, lh, ax));
    double eh = y * lh;
    double el = tl__fma(y, lh, -eh) + y * ll;             /* y log|x| = eh + el */
    double r = tl__exp_xl(eh, el);
    /* y an integer (|y| >= 2^52 always; inf counts as an even one), and its parity bit moved
       to the sign position (64-bit lanes throughout, no int conversions) */
    double ty = tl__seld(ay < 0x1p52, ay + 0x1p52, ay);   /* rint(|y|) + 2^52 below 2^52 */
    int yint = tl__seld(ay < 0x1p52, ty - 0x1p52, ay) == ay;
    double odd = tl__seld(yint & (ay < 0x1p53), tl__bitsd(tl__dbits(ty) << 63), 0.0);
    r = tl__seld((x < 0.0) & (x > -(double)INFINITY) & (yint ^ 1), (double)NAN, r);
    r = tl__bitsd(tl__dbits(r) ^ (tl__dbits(x) & tl__dbits(odd)));
    r = tl__seld((y == 0.0) | (x == 1.0) | ((x == -1.0) & (ay == (double)INFINITY)), 1.0, r);
    r = tl__seld(y == 1.0, x, r);
    return tl__seld(y == 2.0, x * x, r);
}

/* log: < 0.9 ulp, vectorized; log(0) = -inf, log(x < 0) = NaN, log(inf) = inf. */
TL_MATH_INLINE double tl_log(double x)
{
    double r = tl__log_d(x, 0.0);
    r = tl__seld(x == 0.0, -(double)INFINITY, r);
    r = tl__seld(x < 0.0, (double)NAN, r);
    r = tl__seld(x == (double)INFINITY, x, r);
    return tl__seld(x == x, r, x);
}

/* log1p: < 1 ulp, vectorized: u = 1 + x rounded, log1p(x) = log(u) + (x - (u - 1)) / u (the
   rounding of u, to first order), the correction added before log's last rounding.
   log1p(-1) = -inf, log1p(x < -1) = NaN, keeps -0. */
TL_MATH_INLINE double tl_log1p(double x)
{
    double u = 1.0 + x;
    double c = (x - (u - 1.0)) / u;
    double r = tl__log_d(u, tl__seld((u > 0.0) & (u < (double)INFINITY), c, 0.0));
    r = tl__seld(x == -1.0, -(double)INFINITY, r);
    r = tl__seld(x < -1.0, (double)NAN, r);
    r = tl__seld(x == (double)INFINITY, x, r);
    r = tl__seld(x == 0.0, x, r);
    return tl__seld(x == x, r, x);
}

/* e^y - 1 for expm1 and tanh, without a table (GCC's vectors would load a table element
   by element): y = k ln2 + r + rl, |r| <= ln2/2 (ln2 = L1 + L2, k L1 exact; the rounding
   of r carried in rl), e^(r + rl) - 1 = r + r^2/2 + (rl e^r + r^3 Q3(r)), Q3 of degree 9
   (r^2 (1/2 + r Q3) fitted on |r| <= ln2/2 to 2^-60.5 absolute, Estrin). r^2 is split
   exactly (fma) and u = r + r^2/2 exactly (Fast2Sum), so with 2^k (k <= 60) the terms
   2^k - 1 (exact for |k| <= 53; beyond, the -1 or the 2^k goes to the low part) and 2^k u
   are summed exactly (TwoSum): e^y - 1 = h + *lo up to roundings of terms below 2^-5 of
   the result.
   *m: e^y / 2^k = 1 + u + ..., rounded (for results beyond 2^60). */
TL_MATH_INLINE double tl__expm1_core(double y, double *lo, double *m, int64_t *k)
{
    double t = tl__fma(y, 0x1.71547652b82fep+0, 0x1.8p52);      /* 1.5 2^52 + k: k in the low bits */
    double kd = t - 0x1.8p52;
    double a = tl__fma(kd, -0x1.62e42fefa3800p-1, y);       /* exact */
    double b = kd * 0x1.ef35793c76730p-45;
    double r = a - b, rl = (a - r) - b;
    double r2 = r * r, r2l = tl__fma(r, r, -r2), r4 = r2 * r2;
    double q12 = tl__fma(r, 0x1.555555555555ep-5, 0x1.555555555555cp-3);
    double q34 = tl__fma(r, 0x1.6c16c16c13546p-10, 0x1.111111110eb93p-7);
    double q56 = tl__fma(r, 0x1.a01a01b466414p-16, 0x1.a01a01b3c77f1p-13);
    double q78 = tl__fma(r, 0x1.27e4bf124603cp-22, 0x1.71ddef74877e4p-19);
    double q9a = tl__fma(r, 0x1.1f9e187c0fe7dp-29, 0x1.af6d04003c0c1p-26);
    double q14 = tl__fma(r2, q34, q12), q58 = tl__fma(r2, q78, q56);
    double q = tl__fma(r4 * r4, q9a, tl__fma(r4, q58, q14));
    double h2 = 0.5 * r2, u = r + h2, ue = h2 - (u - r);
    double d = tl__fma(r * r2, q, tl__fma(0.5, r2l, tl__fma(rl, u, rl)));    /* rl e^r */
    *k = (int64_t)tl__dbits(t) - (int64_t)0x4338000000000000u;
    int big = *k > 53, tiny = *k < -53;
    double sc = tl__bitsd((uint64_t)((*k > 60 ? 60 : *k) + 1023) << 52);
    double A = tl__seld(tiny, -1.0, sc + tl__seld(big, 0.0, -1.0)), B = sc * u;
    double hh = A + B, w = hh - A, e2 = (A - (hh - w)) + (B - w);
    *lo = (e2 + tl__seld(big, -1.0, tl__seld(tiny, sc, 0.0))) + sc * (ue + d);
    double m1 = 1.0 + u;
    *m = m1 + (((1.0 - m1) + u) + (ue + d));
    return hh;
}

/* e^y - 1 = hi + *lo (|lo| <= ulp(hi) / 2), relative error < 2^-60, for y in [-40, 40]:
   tl__expm1_core's sum normalized (a quotient's one-step correction needs a small low
   part in the divisor). */
TL_MATH_INLINE double tl__expm1_dd(double y, double *lo)
{
    double l, m;
    int64_t k;
    double h = tl__expm1_core(y, &l, &m, &k);
    double hi = h + l;
    *lo = l - (hi - h);
    return hi;
}

/* expm1: < 0.51 ulp (measured), vectorized: tl__expm1_core's sum rounded once; x < -40
   gives -1 (e^x < 2^-57); beyond 2^60 the -1 no longer counts and the result is 2^k m,
   2^k applied in two normal halves as in tl_exp (overflow to inf above 709.78). Keeps
   -0; NaN propagates. */
TL_MATH_INLINE double tl_expm1(double x)
{
    double y = tl__seld(x < -40.0, -40.0, tl__seld(x > 710.0, 710.0, x));
    double l, m;
    int64_t k;
    double h = tl__expm1_core(y, &l, &m, &k);
    int64_t k1 = k >> 1;
    double s1 = tl__bitsd((uint64_t)(k1 + 1023) << 52);
    double s2 = tl__bitsd((uint64_t)(k - k1 + 1023) << 52);
    double r = tl__seld(k > 60, (m * s1) * s2, h + l);
    return tl__seld(x == 0.0, x, r);
}

/* tanh: < 0.51 ulp (measured), vectorized: tanh|x| = t / (t + 2), t = e^(2|x|) - 1 from
   tl__expm1_dd in two parts, the quotient of the two-part numerator and denominator
   formed with one division (q0 = th / Dh, by the reciprocal) and corrected by the exact
   residual (fma), so the result is rounded once up to ~2^-60. |x| >= 20 gives +-1
   (1 - tanh < 2^-56), odd (keeps -0), NaN propagates. */
TL_MATH_INLINE double tl_tanh(double x)
{
    double ax = tl__absd(x);
    double th, tl;
    th = tl__expm1_dd(2.0 * tl__seld(ax > 20.0, 20.0, ax), &tl);
    double dh = 2.0 + th, v = dh - th, dl = ((th - (dh - v)) + (2.0 - v)) + tl;
    double inv = 1.0 / dh, q0 = th * inv;
    double rem = tl__fma(-q0, dh, th) + (tl - q0 * dl);
    double q = tl__fma(rem, inv, q0);
    return tl__seld(x == x, tl__signf_d(q, x), x);
}

/* (e^r - 1 - r) / r^2 for |r| <= ln2/2, given r2 = r^2: Q of degree 10 fitted on that
   interval (absolute error 2^-60.5 on e^r), by Estrin (a shorter dependency chain than
   Horner's); the table-free exponential of tl_sigmoid and tl__erfc_core. */
static const double tl__expq_c[11] = {
    0.5, 0x1.555555555555cp-3, 0x1.555555555555ep-5, 0x1.111111110eb93p-7,
    0x1.6c16c16c13546p-10, 0x1.a01a01b3c77f1p-13, 0x1.a01a01b466414p-16,
    0x1.71ddef74877e4p-19, 0x1.27e4bf124603cp-22, 0x1.af6d04003c0c1p-26,
    0x1.1f9e187c0fe7dp-29};
TL_MATH_INLINE double tl__expq_d(double r, double r2)
{
    const double *c = tl__expq_c;
    double r4 = r2 * r2;
    double q01 = tl__fma(r, c[1], c[0]);
    double q23 = tl__fma(r, c[3], c[2]);
    double q45 = tl__fma(r, c[5], c[4]);
    double q67 = tl__fma(r, c[7], c[6]);
    double q89 = tl__fma(r, c[9], c[8]);
    double q03 = tl__fma(r2, q23, q01);
    double q47 = tl__fma(r2, q67, q45);
    double q8a = tl__fma(r2, c[10], q89);
    return tl__fma(r4, tl__fma(r4, q8a, q47), q03);
}

/* sigmoid: < 1 ulp down to the subnormals (measured 0.90; PyTorch 2.13's 2.2 over
   [-700, 40], and it flushes below), vectorized, branch-free, as tl_sigmoidf: x clamped
   to [-750, 40] (NaN fails both compares); j = round(x / ln2) from the rounding constant's
   bits; u = j ln2 - x (ln2 in two parts, the first product exact; u rounded once, 2^-55
   relative on e^u); e^u = 1 + u + u^2 Q(u) with tl__expq_d's Q (absolute error 2^-60.5),
   e^u - 1 rounded once, and P = 2^64 e^u kept as p + pl (1 + (e^u - 1) split exactly), good
   to about 2^-54.5; N = 2^(64 + j), a normal number, straight from the constant's bits;
   N + p + pl = S + e (Fast2Sum, the larger first, chosen on the bits as both are >= 0; pl
   added to the error); the quotient N / (S + e) as N (1/S) corrected by its residual (fma)
   and rounded once, also into the subnormals. */
TL_MATH_INLINE double tl_sigmoid(double x)
{
    double xc = tl__seld(x < -750.0, -750.0, tl__seld(x > 40.0, 40.0, x));
    double t = tl__fma(xc, 0x1.71547652b82fep+0, 0x1.8p52 + 1087.0);  /* 1.5 2^52 + 1087 + j */
    double jf = t - (0x1.8p52 + 1087.0);
    double u = tl__fma(jf, 0x1.62e42fefa3800p-1, -xc);   /* exact */
    u = tl__fma(jf, 0x1.ef35793c76730p-45, u);            /* -r = j ln2 - x */
    double u2 = u * u;
    double tq = tl__fma(u2, tl__expq_d(u, u2), u);         /* e^u - 1, within 2^-55 */
    double p = tl__fma(tq, 0x1p64, 0x1p64);               /* 2^64 e^u = p + pl */
    double pl = tl__fma(tq, 0x1p64, 0x1p64 - p);          /* exact */
    double n = tl__bitsd(tl__dbits(t) << 52);             /* 2^(1087 + j - 1023) */
    double sum = p + n;
    int64_t pb = (int64_t)tl__dbits(p), nb = (int64_t)tl__dbits(n);     /* both >= 0 */
    double big = tl__bitsd((uint64_t)(pb > nb ? pb : nb));
    double small = tl__bitsd((uint64_t)(pb > nb ? nb : pb));
    double e = ((big - sum) + small) + pl;                /* n + p + pl = sum + e */
    double inv = 1.0 / sum, q0 = n * inv;
    double rem = tl__fma(-q0, e, tl__fma(-q0, sum, n));
    return tl__fma(rem, inv, q0);
}

/* float64 sin, cos, tan. |x| < 2^28 (TL__SIN_BIG): x = q pi/2 + r, q = rint(x 2/pi), with
   pi/2 = P1 + P2 + P3 (53 bits each, 2^-159 relative): x - q P1 is exact (one fma), q P2 is
   split exactly into two doubles with an fma and subtracted with an exact two-sum, so r is
   kept as rh + rl good to about 2^-100 absolute, enough at the closest approach of any
   double below 2^28 to a multiple of pi/2 (about 2^-60, so at least 2^-40 relative there).
   Larger |x|, inf and NaN: glibc's sin/cos/tan (exact reduction); tl_sin_n & co. take the
   vectorized path for blocks with none of those. */
#define TL__SIN_BIG 0x1p28
#define TL__SIN_BIG_BITS 0x41b0000000000000u

TL_MATH_INLINE double tl__sin_reduce(double x, double *rl, int32_t *q)
{
    double t = x * 0x1.45f306dc9c883p-1 + 0x1.8p52;      /* 1.5 2^52 + q */
    double kd = t - 0x1.8p52;
    *q = (int32_t)(uint32_t)tl__dbits(t);
    double a = tl__fma(-kd, 0x1.921fb54442d18p+0, x);     /* x - q P1, exact */
    double ph = kd * 0x1.1a62633145c07p-54;
    double pl = tl__fma(kd, 0x1.1a62633145c07p-54, -ph);  /* q P2 = ph + pl exactly */
    double s = a - ph;                                    /* a - ph = s + e exactly */
    double bb = s - a;
    double e = (a - (s - bb)) - (ph + bb);
    double t2 = e - (pl + kd * -0x1.f1976b7ed8fbcp-110);
    double rh = s + t2;
    *rl = (s - rh) + t2;
    return rh;
}

/* sin and cos of r = rh + rl, |r| <= pi/4 (1 + 2^-18), as unevaluated sums hi + lo with
   |lo| <= ulp(hi):
   sin r = rh - rh^3/6 + rh^5 S(z) + rl cos(rh), z = rh^2, S of degree 5 (relative error
   2^-68), with rh + (-rh^3/6) carried in double-double (rh^3 and the product by 1/6 split
   exactly with fmas), so only terms below r^5/120 round (about 2^-60 relative);
   cos r = 1 - r^2/2 + r^4 C(z), C of degree 5 (2^-64), with rh^2 split exactly by an fma and
   1 - z/2 carried exactly, so only the r^4 term rounds (about 2^-57 relative), - rl sin(rh).
   Coefficients: our fit (weighted least squares on Chebyshev nodes, Lawson iteration to
   minimax, evaluated with mpmath). */
TL_MATH_INLINE void tl__sin_kernel(double rh, double rl, double *sh, double *sl, double *ch,
                                   double *cl)
{
    double z = rh * rh;
    double zl = tl__fma(rh, rh, -z);                      /* rh^2 = z + zl */
    double t3 = rh * z;
    double t3l = tl__fma(rh, z, -t3) + rh * zl;           /* rh^3 = t3 + t3l */
    double m3 = t3 * -0x1.5555555555555p-3;               /* -rh^3/6 = m3 + m3l */
    double m3l = tl__fma(t3, -0x1.5555555555555p-3, -m3)
                 + (t3l * -0x1.5555555555555p-3 + t3 * -0x1.5555555555555p-57);
    double ps = -0x1.aace3cc1fe63fp-41;
    ps = tl__fma(ps, z, 0x1.6120eed240de3p-33);
    ps = tl__fma(ps, z, -0x1.ae64533c3a1ebp-26);
    ps = tl__fma(ps, z, 0x1.71de3a53cb70dp-19);
    ps = tl__fma(ps, z, -0x1.a01a01a019350p-13);
    ps = tl__fma(ps, z, 0x1.111111111110fp-7);
    double pc = -0x1.8fa49746be322p-37;
    pc = tl__fma(pc, z, 0x1.1ee9d7af85a16p-29);
    pc = tl__fma(pc, z, -0x1.27e4f7eabcb9fp-22);
    pc = tl__fma(pc, z, 0x1.a01a019c84440p-16);
    pc = tl__fma(pc, z, -0x1.6c16c16c14f91p-10);
    pc = tl__fma(pc, z, 0x1.555555555554bp-5);
    double hz = 0.5 * z;
    double w = 1.0 - hz;
    double wl = (1.0 - w) - hz;                           /* 1 - hz = w + wl */
    double s0 = rh + m3;
    double e0 = (rh - s0) + m3;                           /* exact: |m3| < |rh| */
    double cc = tl__fma(z * z, pc, wl - tl__fma(s0, rl, 0.5 * zl));
    double c = w + cc;
    *ch = c;
    *cl = (w - c) + cc;
    double cs = e0 + tl__fma(t3 * z, ps, tl__fma(rl, c, m3l));
    double s = s0 + cs;
    *sh = s;
    *sl = (s0 - s) + cs;
}

/* sin(x) (qa = 0) or cos(x) (qa = 1) for finite |x| < 2^28: < 0.6 ulp, branch-free. */
TL_MATH_INLINE double tl__sin_cw(double x, int32_t qa)
{
    int32_t q;
    double rl, rh = tl__sin_reduce(x, &rl, &q);
    double sh, sl, ch, cl;
    tl__sin_kernel(rh, rl, &sh, &sl, &ch, &cl);
    q += qa;
    double v = tl__seld(q & 1, ch, sh);
    v = tl__seld((q >> 1) & 1, -v, v);
    return tl__seld((x == 0.0) & (qa == 0), x, v);        /* sin keeps -0 */
}

/* tan(x) for finite |x| < 2^28: < 0.6 ulp, branch-free. tan r = sin r / cos r, or -cos r /
   sin r in odd quadrants, divided in double-double: t0 = n / d from one reciprocal, then
   t0 + (n + nl - t0 (d + dl)) / d with the fma residual, so the result is rounded once. */
TL_MATH_INLINE double tl__tan_cw(double x)
{
    int32_t q;
    double rl, rh = tl__sin_reduce(x, &rl, &q);
    double sh, sl, ch, cl;
    tl__sin_kernel(rh, rl, &sh, &sl, &ch, &cl);
    int odd = q & 1;
    double nh = tl__seld(odd, -ch, sh), nl = tl__seld(odd, -cl, sl);
    double dh = tl__seld(odd, sh, ch), dl = tl__seld(odd, sl, cl);
    double rcp = 1.0 / dh;
    double t0 = nh * rcp;
    double res = tl__fma(-t0, dh, nh);
    double t = tl__fma((res + nl) - t0 * dl, rcp, t0);
    return tl__seld(x == 0.0, x, t);                      /* keeps -0 */
}

/* sin, cos, tan: < 0.6 ulp for |x| < 2^28 (ours, vectorizable), glibc's above (exact
   reduction), NaN for +-inf and NaN; sin and tan keep -0. The test on |x| is a branch, so a
   loop calling these is not vectorized: contiguous arrays go through tl_sin_n & co. */
TL_MATH_INLINE double tl_sin(double x) { return tl__absd(x) < TL__SIN_BIG ? tl__sin_cw(x, 0) : sin(x); }
TL_MATH_INLINE double tl_cos(double x) { return tl__absd(x) < TL__SIN_BIG ? tl__sin_cw(x, 1) : cos(x); }
TL_MATH_INLINE double tl_tan(double x) { return tl__absd(x) < TL__SIN_BIG ? tl__tan_cw(x) : tan(x); }

/* Contiguous-array versions (same results as tl_sin & co.): per block of 256, one
   vectorized pass finds max |x| (as bits, so NaN counts as big); blocks entirely below 2^28
   take the vectorized branch-free loop, others the scalar one. Call from a TL_DISPATCH
   function so the loops are cloned per ISA. */
#define TL__SIN_BLOCKS(FAST, FULL)                                                           \
    for (int64_t b = 0; b < n; b += 256) {                                                  \
        int64_t e = n - b < 256 ? n : b + 256;                                              \
        tl_prefetch_ahead(x + b, 256 * (int64_t)sizeof(x[0]));   /* cpu_simd.h says why */  \
        uint64_t mx = 0;                                                                    \
        for (int64_t i = b; i < e; i++) {                                                   \
            uint64_t a = tl__dbits(x[i]) & 0x7fffffffffffffffu;                             \
            mx = a > mx ? a : mx;                                                           \
        }                                                                                   \
        if (mx < TL__SIN_BIG_BITS) {                                                        \
            for (int64_t i = b; i < e; i++) o[i] = FAST;                                    \
        } else {                                                                            \
            for (int64_t i = b; i < e; i++) o[i] = FULL(x[i]);                              \
        }                                                                                   \
    }
TL_MATH_INLINE void tl_sin_n(const double *x, double *o, int64_t n) { TL__SIN_BLOCKS(tl__sin_cw(x[i], 0), tl_sin) }
TL_MATH_INLINE void tl_cos_n(const double *x, double *o, int64_t n) { TL__SIN_BLOCKS(tl__sin_cw(x[i], 1), tl_cos) }
TL_MATH_INLINE void tl_tan_n(const double *x, double *o, int64_t n) { TL__SIN_BLOCKS(tl__tan_cw(x[i]), tl_tan) }

TL_MATH_INLINE double tl_exp2(double x) { return exp2(x); }
TL_MATH_INLINE double tl_sinh(double x) { return sinh(x); }
TL_MATH_INLINE double tl_cosh(double x) { return cosh(x); }
TL_MATH_INLINE double tl_atan(double x) { return atan(x); }
TL_MATH_INLINE double tl_asin(double x) { return asin(x); }
TL_MATH_INLINE double tl_acos(double x) { return acos(x); }
TL_MATH_INLINE double tl_atan2(double y, double x) { return atan2(y, x); }

/* ------------------------------------------------------------------ float64 erf, erfc, gelu */

/* erf(x) = x + x Q(x^2) for |x| < 0.84 as hi + *lo (relative error about 2^-60 before the
   caller's final rounding): Q(z) = c0 + c1 z + z^2 P(z), z = x^2 in [0, 0.7056], of degree
   12 (fitted error 2^-69 relative to erf(x)/x, tools/fit_erf64.py), c0 and c1 as
   double-double; x (1 + c0) and x c1 z are added with their exact rounding errors (fma;
   Sterbenz), so only x z^2 P (< 0.05 x) and smaller terms are rounded at full size; x^2's
   rounding error is added back through Q's derivative. */
/* Q's coefficients: [0..10] degrees 12 down to 2, then c1 and c0 as hi, lo */
static const double tl__erf_small_c[15] = {
    0x1.2b2885abb12cep-34, -0x1.43fb1bb21d4c0p-30, 0x1.fac5d0a014652p-27,
    -0x1.5f5c189655244p-23, 0x1.b9e53f70e2b94p-20, -0x1.f4d24adb2a8d0p-17,
    0x1.f9a3267313eaep-14, -0x1.c02db3fd84930p-11, 0x1.565bcd0e612f1p-8,
    -0x1.b82ce3128890ap-6, 0x1.ce2f21a042bddp-4,
    -0x1.812746b0379e7p-2, 0x1.064426d5fe623p-56,     /* c1 */
    0x1.06eba8214db69p-3, -0x1.ca4932c408b1ep-57};    /* c0 = 2/sqrt(pi) - 1 */
TL_MATH_INLINE double tl__erf_small(double x, double *lo)
{
    const double *c = tl__erf_small_c;
    double z = x * x, zl = tl__fma(x, x, -z);
    double p = c[0];
    p = tl__fma(p, z, c[1]);
    p = tl__fma(p, z, c[2]);
    p = tl__fma(p, z, c[3]);
    p = tl__fma(p, z, c[4]);
    p = tl__fma(p, z, c[5]);
    p = tl__fma(p, z, c[6]);
    p = tl__fma(p, z, c[7]);
    p = tl__fma(p, z, c[8]);
    p = tl__fma(p, z, c[9]);
    p = tl__fma(p, z, c[10]);
    double c1 = c[11], c1l = c[12], c0 = c[13], c0l = c[14];
    double dq = tl__fma(tl__fma(3.0 * c[9], z, 2.0 * c[10]), z, c1);
    double c1z = c1 * z;
    double t = tl__fma(c1, z, -c1z) + tl__fma(c1l, z, c0l);
    t = tl__fma(dq, zl, tl__fma(z * z, p, t));              /* + Q'(z) zl */
    double h0 = tl__fma(x, c0, x);
    double h = tl__fma(x, c1z, h0);                          /* h / h0 in [0.77, 1] */
    *lo = (tl__fma(x, c0, x - h0) + tl__fma(x, c1z, h0 - h)) + x * t;
    return h;
}

/* erfc(a + al) = 2^*k (hi + *lo) for a in [0.5, 27.5], |al| <= 2^-52 a (the rounding of
   gelu's argument; 0 for erfc), relative error about 2^-58, branch-free:
   erfc(a) = e^(-a^2) R(a). e^(-a^2): a^2 = A + Al split exactly (fma; the exponential
   magnifies an error in a^2 by a^2, up to 756), then tl_sigmoid's table-free exponential
   of a double-double argument: -A - Al = k ln2 + r + rl (rl holds Al, up to 2^-44, so it
   is multiplied by e^r, not 1 + r), e^(r + rl) = 1 + r + (r^2 Q(r) + rl e^r), normalized
   to m + ml (about 2^-62). R: on [0.5, 1.2), [1.2, 2.3), [2.3, 4) a polynomial of degree
   18 in v = a - c (exact, Sterbenz; c = 0.85, 1.75, 3.15; fitted errors 2^-64.4, 2^-65.3,
   2^-62.2), on [4, 27.5] R = G(1/a^2) / a with G of degree 18 (2^-70), 1/a as a
   double-double (the division's exact residual by an fma); the coefficients are picked
   per interval by bit selects (GCC: masked broadcasts, no gathers), the two lowest kept
   as double-double and the degree-1 product split exactly, so only the terms from v^2 on
   (< 1/10 of R) are rounded at full size (tools/fit_erf64.py). m R is formed as a
   double-double. */
/* tl__erfc_core's coefficients (tools/fit_erf64.py), one per interval in each row:
   [0.5, 1.2), [1.2, 2.3), [2.3, 4), [4, 27.5]. Row 0: the interval's centre c (0 on the
   last); rows 1-17: degrees 18 down to 2; rows 18-21: degrees 1 and 0 (hi), then 1 and 0
   (lo). Rows are padded to 8 so that 8 lanes fetch one with a single permute (tl__erfc_v8). */
#if defined(__GNUC__)
__attribute__((aligned(64)))
#endif
static const double tl__erfc_tab[22][8] = {
    {0.85, 1.75, 3.15, 0.0},
    {-0x1.797acc6ccdd2ap-24, 0x1.371cd0a7b3a03p-32, 0x1.ea931868278c8p-41, 0x1.909082eb0ec7ep+38},
    {-0x1.53fdc7017e1f5p-24, -0x1.37fb7e615caa8p-30, -0x1.387a265b99cecp-38, -0x1.0c57b63488c20p+38},
    {0x1.5e52d9ee255ffp-22, 0x1.1acd242fcc88ap-28, 0x1.4f3878131f6cdp-36, 0x1.56ecf98f87fbep+36},
    {-0x1.d72de173ed2d1p-21, -0x1.1350cea29553dp-26, -0x1.9723f98b8f6c8p-34, -0x1.1938d1567a0bep+34},
    {0x1.7cae8a83ec8f5p-19, 0x1.06f9e1ed187a2p-24, 0x1.ec4de995930c0p-32, 0x1.5258571a6917dp+31},
    {-0x1.2e3979b0a5a08p-17, -0x1.e928807878b79p-23, -0x1.222d34033967cp-29, -0x1.46eea77522744p+28},
    {0x1.cf5a6fc8d63c2p-16, 0x1.bc0fe0773b1d4p-21, 0x1.501d06da9854dp-27, 0x1.12bd7846e6147p+25},
    {-0x1.5803a63636c2ep-14, -0x1.88fb0dc0961a3p-19, -0x1.7e88e6102ae66p-25, -0x1.b2336994c7fc1p+21},
    {0x1.edb2254bb38e7p-13, 0x1.5273f3f87ec03p-17, 0x1.ab4a8640f9518p-23, 0x1.5ac1d5c784f2bp+18},
    {-0x1.556b9324dcb1cp-11, -0x1.1b29130e3afbep-15, -0x1.d3fd314bb4ec0p-21, -0x1.27cd761e6e4e0p+15},
    {0x1.c5a9e954fefe8p-10, 0x1.cb4c687c085e0p-14, 0x1.f611de2e08b18p-19, 0x1.171a81bbb3c57p+12},
    {-0x1.2073d12467502p-8, -0x1.6838884a2463bp-12, -0x1.07803d2931de6p-16, -0x1.29cf63f03beb0p+9},
    {0x1.5d6c93e45f4e5p-7, 0x1.106bd5c0455eap-10, 0x1.0e44058c8031fp-14, 0x1.6e8bda849f629p+6},
    {-0x1.90e6af741ed26p-6, -0x1.8bf716a8eb710p-9, -0x1.0e799e8d64ff7p-12, -0x1.0a945e4907ef6p+4},
    {0x1.b073797cb43a8p-5, 0x1.13648a11ffe51p-7, 0x1.07ac878013941p-10, 0x1.d9eb53f323858p+1},
    {-0x1.b25adae3f974ap-4, -0x1.6cb52fe489459p-6, -0x1.f3cf56f5e6121p-9, -0x1.0ecf9db3dd992p+0},
    {0x1.90d38cf8d74abp-3, 0x1.c8d0cef0f810dp-5, 0x1.cb84cff4dd4b1p-7, 0x1.b14c2f863e85cp-2},
    {-0x1.4d3bfacc0c3ebp-2, -0x1.0c3d538446447p-3, -0x1.98ba6d84af0a6p-5, -0x1.20dd750429b6dp-2},
    {0x1.e3a98edd0fa77p-2, 0x1.23cfc2f1dc7e0p-2, 0x1.5e97e9a497acdp-3, 0x1.20dd750429b6dp-1},
    {0x1.b0a0b8b9506a7p-57, -0x1.eabd37ad9027bp-57, 0x1.ab8bdea222a05p-59, 0x1.0ce4d5dda145cp-59},
    {-0x1.05c60ed710af1p-56, 0x1.3b157420923acp-57, 0x1.00523ca42360fp-57, 0x1.1adf1f24e4934p-57},
};
#define TL__ERFC_C(k)                                                                  \
    tl__seld(i3, tl__erfc_tab[k][3],                                                   \
             tl__seld(i2, tl__erfc_tab[k][2], tl__seld(i1, tl__erfc_tab[k][1], tl__erfc_tab[k][0])))
TL_MATH_INLINE double tl__erfc_core(double a, double al, double *lo, int64_t *k)
{
    int i1 = a >= 1.2, i2 = a >= 2.3, i3 = a >= 4.0;
    /* e^(-A - Al), A + Al = (a + al)^2 */
    double A = a * a, Al = tl__fma(a, a, -A) + 2.0 * (a * al);
    double t = tl__fma(-A, 0x1.71547652b82fep+0, 0x1.8p52);  /* 1.5 2^52 + k: k in the low bits */
    double kd = t - 0x1.8p52;
    double ra = tl__fma(kd, -0x1.62e42fefa3800p-1, -A);       /* exact */
    double b = kd * 0x1.ef35793c76730p-45;
    double r = ra - b, rl = ((ra - r) - b) - Al;
    double r2 = r * r;
    double q = tl__expq_d(r, r2);
    double er = tl__fma(r2, q, r);                            /* e^r - 1 */
    double pl = tl__fma(r2, q, tl__fma(rl, er, rl));         /* + rl e^r (|rl| < 2^-43) */
    double eh = 1.0 + r, el = ((1.0 - eh) + r) + pl;
    double m = eh + el, ml = el - (m - eh);
    *k = (int64_t)tl__dbits(t) - (int64_t)0x4338000000000000u;
    /* 1/a = ih + il on the last interval (1 elsewhere) */
    double d = tl__seld(i3, a, 4.0);
    double inv = 1.0 / d;
    double il = (tl__fma(-d, inv, 1.0) - tl__seld(i3, al, 0.0) * inv) * inv;
    double ih = tl__seld(i3, inv, 1.0);
    il = tl__seld(i3, il, 0.0);
    double v = tl__seld(i3, inv * inv, (a - TL__ERFC_C(0)) + al);
    double p = TL__ERFC_C(1);
    p = tl__fma(p, v, TL__ERFC_C(2));
    p = tl__fma(p, v, TL__ERFC_C(3));
    p = tl__fma(p, v, TL__ERFC_C(4));
    p = tl__fma(p, v, TL__ERFC_C(5));
    p = tl__fma(p, v, TL__ERFC_C(6));
    p = tl__fma(p, v, TL__ERFC_C(7));
    p = tl__fma(p, v, TL__ERFC_C(8));
    p = tl__fma(p, v, TL__ERFC_C(9));
    p = tl__fma(p, v, TL__ERFC_C(10));
    p = tl__fma(p, v, TL__ERFC_C(11));
    p = tl__fma(p, v, TL__ERFC_C(12));
    p = tl__fma(p, v, TL__ERFC_C(13));
    p = tl__fma(p, v, TL__ERFC_C(14));
    p = tl__fma(p, v, TL__ERFC_C(15));
    p = tl__fma(p, v, TL__ERFC_C(16));
    p = tl__fma(p, v, TL__ERFC_C(17));
    double c1 = TL__ERFC_C(18);
    double c0 = TL__ERFC_C(19);
    double c1l = TL__ERFC_C(20);
    double c0l = TL__ERFC_C(21);
    double ph = c1 * v, pe = tl__fma(c1, v, -ph);
    double s = c0 + ph, se = (c0 - s) + ph;                   /* |c1 v| < c0 */
    double sl = ((se + pe) + tl__fma(c1l, v, c0l)) + v * (v * p);
    /* m R = (m + ml) (ih + il) (s + sl) */
    double mh = m * ih, mlo = tl__fma(m, ih, -mh) + (ml * ih + m * il);
    double hi = mh * s;
    *lo = tl__fma(mh, s, -hi) + (mh * sl + mlo * s);
    return hi;
}
#undef TL__ERFC_C

/* 2^k for k in [-1022, 1023] */
TL_MATH_INLINE double tl__pow2d(int64_t k) { return tl__bitsd((uint64_t)(k + 1023) << 52); }

/* erf's table, from tools/fit_erf64_poly.py (mpmath, near-minimax, the coefficients rounded
   from the lowest degree up and the rest refitted). |x| below 5.9216 (erf rounds to +-1
   from there on) is cut into 16 pieces by n = round(|x| K), K = 64/23: piece j = max(n - 1,
   0), each a polynomial of degree 13 in v. Piece 0 (|x| < 0.539): erf = |x| Q(v), v = x^2
   (relative error 2^-72.9, so the result stays relatively accurate down to the
   subnormals); piece j >= 1: erf = P_j(v), v = |x| - n W, W = 23/64, |v| <= W/2 (absolute
   error <= 2^-63.4 where erf >= 0.55, ulp 2^-53). Narrow pieces keep the degree low and
   need neither exp nor a division; 16 of them make a coefficient row 16 doubles, which
   8 vector lanes look up with one two-table permute (tl_erf_n). tl__erf_tab[k][j]: piece
   j, row k: rows 0-3 degrees 0 and 1 as double-double (hi, lo, hi, lo), rows 4-15 degrees
   2..13. */
#define TL__ERF_K 0x1.642c8590b2164p+1           /* 64/23 */
#define TL__ERF_W 0x1.7p-2                       /* 23/64: n W is exact for n <= 16 */
#define TL__ERF_ONE 0x1.7afb48dc96627p+2        /* 5.9215871957945073: erf rounds to 1 from here */
#if defined(__GNUC__)
__attribute__((aligned(64)))
#endif
static const double tl__erf_tab[16][16] = {
    {/* degree 0, hi */
    0x1.20dd750429b6dp+0, 0x1.61955607dd15dp-1, 0x1.bece0d82d1a5cp-1, 0x1.ea7730ed0bbb9p-1,
    0x1.fa57ddfe27376p-1, 0x1.fed37386190fbp-1, 0x1.ffcef371ea4d7p-1, 0x1.fff9ba420e834p-1,
    0x1.ffff5f8435efcp-1, 0x1.fffff37d63a36p-1, 0x1.ffffff3d9480fp-1, 0x1.fffffff6d1e56p-1,
    0x1.ffffffffa9c63p-1, 0x1.fffffffffd8b3p-1, 0x1.fffffffffff22p-1, 0x1.ffffffffffffcp-1},
    {/* degree 0, lo */
    0x1.1ae3a914f76e1p-56, 0x1.99bc0c80fd144p-55, 0x1.7f1b063d7be12p-60, 0x1.2bcbc7d55c87dp-55,
    0x1.e61cbbc046aa8p-55, 0x1.72df26dc84ce7p-55, 0x1.58d5041f9a819p-56, 0x1.136a115009dadp-56,
    -0x1.0f8e40403825fp-55, -0x1.753aeff5bed9dp-57, 0x1.4928f5a8e963cp-55, -0x1.64d9722acb37dp-55,
    0x1.675075043af83p-55, -0x1.518248733bf8cp-57, -0x1.8b1db5b4d0818p-55, 0x1.8115fd19ee22ap-56},
    {/* degree 1, hi */
    -0x1.812746b0379e7p-2, 0x1.58a445da7c74cp-1, 0x1.695e8cd31867ep-2, 0x1.24a7b84d38971p-3,
    0x1.6e1c5893c380bp-5, 0x1.61beae53b72b7p-7, 0x1.07fdb4dafea5fp-9, 0x1.30538fbb77ecdp-12,
    0x1.0ef6c4c84a0fep-15, 0x1.74adc8f4064d2p-19, 0x1.8be4f8f6c9516p-23, 0x1.44d26de513198p-27,
    0x1.9baed3ed27b95p-32, 0x1.92ff33023db65p-37, 0x1.30b14dbe88997p-42, 0x1.63daf8b4b6bf7p-48},
    {/* degree 1, lo */
    0x1.ee12e4ea58aadp-57, 0x1.0b8bb59fe8abap-55, 0x1.1defd67f7910fp-61, 0x1.a8ab8eaf03b06p-57,
    -0x1.93b040465e329p-61, 0x1.ee89eaacfdaa3p-65, -0x1.9d80dda21950cp-64, 0x1.136dc688c0b42p-67,
    0x1.2dbde6ecc0b80p-70, 0x1.8ae6bd404a58fp-73, 0x1.759f875823d71p-80, -0x1.58e9bbc73bf07p-82,
    -0x1.e86e8f7657355p-87, 0x1.179dbae4dcf4ep-91, 0x1.c62c50f9d04f3p-100, -0x1.7eac672839982p-102},
    {/* degree 2 */
    0x1.ce2f21a042be2p-4, -0x1.ef6c246a12e82p-2, -0x1.8599efd396504p-2, -0x1.a4b118ef0158cp-3,
    -0x1.48ed7794c1a57p-4, -0x1.7d6193f2417bep-6, -0x1.4c0d1d7b744ccp-8, -0x1.b5781e9d7c5e9p-11,
    -0x1.b633123be7c4ap-14, -0x1.4ed4228b3dd00p-17, -0x1.87414a0be5494p-21, -0x1.5e32de7af7061p-25,
    -0x1.e0d53185eac0bp-30, -0x1.fae4fe2879eefp-35, -0x1.9a9ef1c4d409cp-40, -0x1.ff8ac5805dd13p-46},
    {/* degree 3 */
    -0x1.b82ce31288bd0p-6, 0x1.e83e0da030380p-8, 0x1.3f239588c2791p-3, 0x1.319c7a75f9189p-3,
    0x1.4d02687c3cb87p-4, 0x1.e947279e4a445p-6, 0x1.007085a69af8bp-7, 0x1.89e17c074d35ap-10,
    0x1.c1da7f428fae8p-13, 0x1.81918baca1a3fp-16, 0x1.f3107ddd644a3p-20, 0x1.e9e05b3c8f346p-24,
    0x1.6dd25c255fdfep-28, 0x1.a0a80964bf3dbp-33, 0x1.6a91c6436142ap-38, 0x1.e2d06d6e744c7p-44},
    {/* degree 4 */
    0x1.565bcd0e6fe61p-8, 0x1.44cc65df8bca3p-3, 0x1.5ecb1a7006c7ep-5, -0x1.3db5bed4830a9p-5,
    -0x1.7b17595c11fdbp-5, -0x1.906030109036fp-6, -0x1.0b360331a628ap-7, -0x1.ed4ac7daeff12p-10,
    -0x1.473b6b61d4b66p-12, -0x1.3e81c09c16b01p-15, -0x1.cc9c8637fb1e5p-19, -0x1.f2f6fa7e78028p-23,
    -0x1.973bcf93ea5f8p-27, -0x1.f6f47bf99451ap-32, -0x1.d7827fadd25cbp-37, -0x1.505d959e49d3cp-42},
    {/* degree 5 */
    -0x1.c02db4048df2cp-11, -0x1.87d3c8dd77039p-5, -0x1.0b1f8b6bd09cbp-4, -0x1.7019bda6c4369p-6,
    0x1.22aa2624f23a0p-7, 0x1.8d14d4bd9bb0dp-7, 0x1.7fe5fca325a9bp-8, 0x1.c11f27065ea97p-10,
    0x1.63e0e63c9950ep-12, 0x1.9004afecf693ep-15, 0x1.46bdb713adf0fp-18, 0x1.899dcace49cdcp-22,
    0x1.6112823bacbb5p-26, 0x1.dad968cb7cc0fp-31, 0x1.e1275c3f6e14ep-36, 0x1.70b7014fadde1p-41},
    {/* degree 6 */
    0x1.f9a32909d138fp-14, -0x1.f9271a2c24e35p-6, 0x1.89ccb6b99767ep-7, 0x1.59d3aa44fcd8dp-6,
    0x1.cc892fe340ed1p-8, -0x1.1f795b011198dp-9, -0x1.66cdf5e3347adp-9, -0x1.2add1ce3541c5p-10,
    -0x1.286b6ca7681c6p-12, -0x1.8a40e1916ca99p-15, -0x1.712273efd9dc9p-18, -0x1.f34b7ea8ac83cp-22,
    -0x1.ef89e8b28a6cap-26, -0x1.6ca686b1d72f5p-30, -0x1.90da38ad54b15p-35, -0x1.4aed5531aec10p-40},
    {/* degree 7 */
    -0x1.f4d3033ca9e21p-17, 0x1.22523686a1ea2p-6, 0x1.83807457c9a9cp-7, -0x1.b324eab461785p-9,
    -0x1.76d8fa628eea4p-8, -0x1.9222e9b431c65p-10, 0x1.2c53f89bb9d1fp-11, 0x1.151f78524ec48p-11,
    0x1.7a618b2994230p-13, 0x1.359243c72534bp-15, 0x1.5320fb28e8987p-18, 0x1.04be030205194p-21,
    0x1.20b20824a004ap-25, 0x1.d3a7cc0f56985p-30, 0x1.180d579cf659ap-34, 0x1.f3c58218e1b26p-40},
    {/* degree 8 */
    0x1.ba0aa0dbdd869p-20, 0x1.c0a3c667b795dp-9, -0x1.79a8a9e262135p-8, -0x1.b4775a6c5f09ep-9,
    0x1.16cf21b214f70p-10, 0x1.53fadc9a024f7p-10, 0x1.daaca0cd23676p-13, -0x1.1c640aabfcec1p-13,
    -0x1.65d6d025a4386p-14, -0x1.834b8c4be27e0p-16, -0x1.000de8003de4fp-18, -0x1.c73bea8e67ed8p-22,
    -0x1.1c184cafa3223p-25, -0x1.fe16b4041d766p-30, -0x1.4e7901cc4a9e4p-34, -0x1.43c46971a1abdp-39},
    {/* degree 9 */
    -0x1.64b5c26051418p-23, -0x1.05a2546bd6788p-8, -0x1.e1b71dcd90fd8p-11, 0x1.c0137438fa500p-10,
    0x1.686fb39a77c13p-11, -0x1.52daf3f393e0dp-12, -0x1.f2f1dc27ecf9bp-13, -0x1.0ec4a176041a4p-16,
    0x1.b831e4b44b1f4p-16, 0x1.79d19d322b523p-17, 0x1.3dfd627e8cd15p-19, 0x1.4edda87caafeep-22,
    0x1.dd9ea11acf5aap-26, 0x1.df5f19177b2e5p-30, 0x1.5a364007a40fbp-34, 0x1.6d1b5a6228157p-39},
    {/* degree 10 */
    0x1.8344963fab9c0p-26, -0x1.233696e58ebd0p-15, 0x1.40789b2e45c9fp-10, 0x1.a625f44612e5dp-14,
    -0x1.c9508a38b8069p-12, -0x1.7e9ea2c56372cp-14, 0x1.4d49f064e8e04p-14, 0x1.181c656edf3cep-15,
    -0x1.e4949d9f83ed6p-20, -0x1.0bbb0ff0383aep-18, -0x1.40c09b862df4cp-20, -0x1.9fbfb432be143p-23,
    -0x1.5929fb25bf8c6p-26, -0x1.8772faf31b238p-30, -0x1.3978e3d6a7158p-34, -0x1.69ba1dbd04b2ep-39},
    {/* degree 11 */
    -0x1.23a3093d0effep-26, 0x1.58d94039124a5p-11, -0x1.766431bbaa62fp-14, -0x1.40d7e78190f7ep-12,
    0x1.f6e88bfe934cep-16, 0x1.73c68bce5f547p-14, 0x1.5ba1b99fc1602p-19, -0x1.f1085c3f819fbp-17,
    -0x1.b1d2d2ee81390p-19, 0x1.9a359bfced867p-21, 0x1.f9e37f1d8b3d5p-22, 0x1.b0d6579fd15d5p-24,
    0x1.ae2d1846cff5ap-27, 0x1.17bf265466e22p-30, 0x1.f56e2838d96e3p-35, 0x1.3ea555c12bd37p-39},
    {/* degree 12 */
    0x1.421f841aa04d3p-26, -0x1.2be2784a9afa1p-14, -0x1.5f03d53aba8a7p-13, 0x1.da087e07ac85ep-15,
    0x1.dca9f4a73b851p-15, -0x1.2652b8a0b85cap-16, -0x1.b831b85e3f347p-17, 0x1.062e7dedaae57p-19,
    0x1.0e50198b9c840p-19, 0x1.4e0f4c966f343p-23, -0x1.13484f2fd99f7p-23, -0x1.75469309293d6p-25,
    -0x1.d5c24d22b46e9p-28, -0x1.692ab2995c9fcp-31, -0x1.722eadd7c6a95p-35, -0x1.07c9a46af8886p-39},
    {/* degree 13 */
    -0x1.501af47206487p-27, -0x1.5e9397b3c00dfp-14, 0x1.4da02bbb7919cp-15, 0x1.fa3254fdbcd20p-16,
    -0x1.49aa06fe9d0aep-16, -0x1.b8f91820ba963p-18, 0x1.37877e21c7a10p-18, 0x1.4341c0f58ba9ep-20,
    -0x1.210198e4c2f9fp-21, -0x1.9938a40a66c85p-23, 0x1.879ccb6c444d1p-27, 0x1.ee4cfdd9df827p-27,
    0x1.a9503b4c94e48p-29, 0x1.8a3a1c622fdccp-32, 0x1.cfe3f15076eb5p-36, 0x1.719f6515ea268p-40},
};

/* erf: < 0.6 ulp (measured 0.527, 0.544 for subnormal results; PyTorch 2.13's 0.76 on
   the same inputs), branch-free; keeps -0, erf(+-inf) = +-1, NaN propagates, relative
   accuracy down to the subnormals. S = c0 + c1 v + v^2 p(v) from piece j's row (see
   tl__erf_tab): c0 and c1 are double-double, c1 v is split exactly (fma) and added to c0
   by Fast2Sum (|c1 v| < c0), so only v^2 p (< 1/30 of S) is rounded at full size; on
   piece 0, x^2's rounding error vl is added back through S'(v) ~ c1 + 2 c2 v. The result
   is m S rounded once (an fma), m = x on piece 0 and +-1 above. Loops calling this
   vectorize poorly (GCC's x86-64 tunings turn the table loads into element-by-element
   loads, not gathers): contiguous arrays go through tl_erf_n, the same bits. */
TL_MATH_INLINE double tl_erf(double x)
{
    double a = tl__absd(x);
    int below = a < TL__ERF_ONE;
    double ac = tl__seld(below, a, TL__ERF_ONE);              /* NaN too: put back below */
    double u = tl__fma(ac, TL__ERF_K, 0x1.8p52);              /* 1.5 2^52 + n */
    int64_t j = (int64_t)(tl__dbits(u) - 0x4338000000000001u);  /* n - 1 */
    j &= ~(j >> 63);
    int p0 = j == 0;
    double t = ac - (u - 0x1.8p52) * TL__ERF_W;               /* exact (Sterbenz) */
    double z = ac * ac;
    double v = tl__seld(p0, z, t), vl = tl__seld(p0, tl__fma(ac, ac, -z), 0.0);
    const double (*c)[16] = tl__erf_tab;
    double p = c[15][j];
    for (int k = 14; k >= 4; k--) p = tl__fma(p, v, c[k][j]);
    double c0 = c[0][j], c1 = c[2][j];
    double ph = c1 * v, pe = tl__fma(c1, v, -ph);
    double s = c0 + ph, se = (c0 - s) + ph;
    double d = tl__fma(c[4][j] + c[4][j], v, c1);             /* S'(v), for vl */
    double sl = ((se + pe) + tl__fma(c[3][j], v, tl__fma(d, vl, c[1][j]))) + v * (v * p);
    /* |x| in [2^-1022, 2^-959): x sl would lose bits to underflow, so m = x 2^64 and the
       (normal) result is scaled back exactly; below, the result is subnormal, x sl is
       < 1/16 of its spacing, and x c0 is rounded once */
    int sc = tl__dbits(a) - 0x0010000000000000u < 0x03f0000000000000u;
    double sgn = tl__signf_d(1.0, x);
    double m = tl__seld(p0, x * tl__seld(sc, 0x1p64, 1.0), sgn);
    double r = tl__fma(m, s, m * sl) * tl__seld(sc, 0x1p-64, 1.0);
    r = tl__seld(below, r, sgn);            /* +-1 exactly, as rounded, from 5.9216 on */
    r = tl__seld(x == 0.0, x, r);                            /* keeps -0 */
    return tl__seld(x == x, r, x);
}

/* tl_erf over a contiguous array, the same bits. Where the CPU has AVX-512 (tested at run
   time), blocks of 8 go through tl__erf_v8: tl_erf's operations, in the same order, on GCC
   vector types, each coefficient row fetched for the 8 lanes by one two-table permute
   (vpermt2pd). Elsewhere, and for the last n % 8, tl_erf per element: without AVX-512, GCC
   turns these permutes into loads through memory, slower than the scalar code. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define TL__ERF_V8 1
#define TL__V8_FN static inline __attribute__((always_inline, target("avx512f")))
typedef double tl__v8d __attribute__((vector_size(64)));
typedef int64_t tl__v8i __attribute__((vector_size(64)));
typedef uint64_t tl__v8u __attribute__((vector_size(64)));
/* a b + c rounded once per lane (vfmadd under AVX-512) */
TL__V8_FN tl__v8d tl__v8_fma(tl__v8d a, tl__v8d b, tl__v8d c)
{
    tl__v8d r;
    for (int i = 0; i < 8; i++) r[i] = __builtin_fma(a[i], b[i], c[i]);
    return r;
}
/* m ? a : b per lane, m all ones or all zeros (a comparison's result) */
TL__V8_FN tl__v8d tl__v8_sel(tl__v8i m, tl__v8d a, tl__v8d b)
{
    return (tl__v8d)(((tl__v8i)a & m) | ((tl__v8i)b & ~m));
}
/* tl__erf_tab[k][j] per lane */
TL__V8_FN tl__v8d tl__v8_erf_row(int k, tl__v8i j)
{
    tl__v8d lo, hi;
    memcpy(&lo, tl__erf_tab[k], 64);
    memcpy(&hi, tl__erf_tab[k] + 8, 64);
    return __builtin_shuffle(lo, hi, j);
}
static __attribute__((target("avx512f"), unused)) void tl__erf_v8(const double *x, double *o,
                                                                   int64_t n)
{
    const tl__v8d one = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0}, zero = one - one;
    for (int64_t i = 0; i < n; i += 8) {
        tl__v8d xv;
        memcpy(&xv, x + i, 64);
        tl__v8d a = (tl__v8d)((tl__v8u)xv & 0x7fffffffffffffffu);
        tl__v8i below = a < TL__ERF_ONE;
        tl__v8d ac = tl__v8_sel(below, a, zero + TL__ERF_ONE);
        tl__v8d u = tl__v8_fma(ac, zero + TL__ERF_K, zero + 0x1.8p52);
        tl__v8i j = (tl__v8i)((tl__v8u)u - 0x4338000000000001u);
        j &= ~(j >> 63);
        tl__v8i p0 = j == 0;
        tl__v8d t = ac - (u - 0x1.8p52) * TL__ERF_W;
        tl__v8d z = ac * ac;
        tl__v8d v = tl__v8_sel(p0, z, t), vl = tl__v8_sel(p0, tl__v8_fma(ac, ac, -z), zero);
        tl__v8d p = tl__v8_erf_row(15, j);
        for (int k = 14; k >= 4; k--) p = tl__v8_fma(p, v, tl__v8_erf_row(k, j));
        tl__v8d c0 = tl__v8_erf_row(0, j), c1 = tl__v8_erf_row(2, j), c2 = tl__v8_erf_row(4, j);
        tl__v8d ph = c1 * v, pe = tl__v8_fma(c1, v, -ph);
        tl__v8d s = c0 + ph, se = (c0 - s) + ph;
        tl__v8d d = tl__v8_fma(c2 + c2, v, c1);
        tl__v8d sl = ((se + pe) + tl__v8_fma(tl__v8_erf_row(3, j), v,
                                             tl__v8_fma(d, vl, tl__v8_erf_row(1, j))))
                     + v * (v * p);
        tl__v8i sc = (tl__v8i)((tl__v8u)a - 0x0010000000000000u < 0x03f0000000000000u);
        tl__v8d sgn = (tl__v8d)(((tl__v8u)xv & 0x8000000000000000u) | (tl__v8u)one);
        tl__v8d m = tl__v8_sel(p0, xv * tl__v8_sel(sc, zero + 0x1p64, one), sgn);
        tl__v8d r = tl__v8_fma(m, s, m * sl) * tl__v8_sel(sc, zero + 0x1p-64, one);
        r = tl__v8_sel(below, r, sgn);
        r = tl__v8_sel(xv == 0.0, xv, r);
        r = tl__v8_sel(xv == xv, r, xv);
        memcpy(o + i, &r, 64);
    }
}
#endif

/* NAME(x, o, n): FN over a contiguous array, blocks of 8 through V8 where the CPU has
   AVX-512 (tested at run time), the rest, and everything elsewhere, per element */
#ifdef TL__ERF_V8
#define TL__V8_LEAD(V8)                                                                      \
    if (__builtin_cpu_supports("avx512f")) {                                                 \
        i = n & ~(int64_t)7;                                                                 \
        for (int64_t b = 0; b < i; b += 256) {                                               \
            tl_prefetch_ahead(x + b, 2048);                  /* cpu_simd.h says why */       \
            V8(x + b, o + b, i - b < 256 ? i - b : 256);                                     \
        }                                                                                    \
    }
#else
#define TL__V8_LEAD(V8)
#endif
#define TL__ARRAY_BY_8(NAME, V8, FN)                                                         \
    TL_MATH_INLINE void NAME(const double *x, double *o, int64_t n)                          \
    {                                                                                        \
        int64_t i = 0;                                                                       \
        TL__V8_LEAD(V8)                                                                      \
        for (; i < n; i++) o[i] = FN(x[i]);                                                  \
    }
TL__ARRAY_BY_8(tl_erf_n, tl__erf_v8, tl_erf)

/* erfc: < 0.75 ulp (measured 0.73; PyTorch 2.13's 0.75), relative down to the
   subnormals (units of 2^-1074 there; 0 from x = 27.23), vectorized, branch-free;
   erfc(-inf) = 2, erfc(inf) = 0, NaN propagates. |x| < 0.5: 1 - erf(x) from
   tl__erf_small (Fast2Sum; erfc > 0.47, no cancellation); x >= 0.5: tl__erfc_core, 2^k
   applied in two normal halves, so a subnormal result is rounded once more only;
   x <= -0.5: 2 - erfc(|x|) (Fast2Sum). |x| is clamped to 27.5. */
TL_MATH_INLINE double tl_erfc(double x)
{
    double a = tl__absd(x);
    double ac = tl__seld(a < 27.5, a, 27.5);              /* NaN: 27.5, put back below */
    ac = tl__seld(ac < 0.5, 0.5, ac);
    double l, sl;
    int64_t k;
    double h = tl__erfc_core(ac, 0.0, &l, &k);
    int64_t k1 = k < -1000 ? -1000 : k;
    double s1 = tl__pow2d(k1), s2 = tl__pow2d(k - k1);
    double pos = ((h + l) * s1) * s2;
    double H = (h * s1) * s2, L = (l * s1) * s2;          /* only used where k >= -1000 */
    double n = 2.0 - H, neg = n + (((2.0 - n) - H) - L);
    double e = tl__erf_small(x, &sl);
    double u = 1.0 - e, small = u + (((1.0 - u) - e) - sl);
    double r = tl__seld(a < 0.5, small, tl__seld(x < 0.0, neg, pos));
    return tl__seld(x == x, r, x);
}

/* tl_erfc over a contiguous array, the same bits. Under AVX-512 (tested at run time), blocks
   of 8 go through tl__erfc_v8: tl_erfc's operations in the same order on GCC vector types,
   each row of tl__erfc_tab fetched for the 8 lanes by one permute (vpermpd) where the
   per-element function picks among 4 constants with 3 blends, and a block skips what none
   of its lanes uses (tl__erf_small when no |x| < 0.5, tl__erfc_core when every |x| is),
   which cannot change a bit of the result. Elsewhere, and for the last n % 8, tl_erfc per
   element. */
#ifdef TL__ERF_V8
#define TL__V8C(c) ((tl__v8d){c, c, c, c, c, c, c, c})
TL__V8_FN tl__v8d tl__v8_expq(tl__v8d r, tl__v8d r2)         /* tl__expq_d */
{
    const double *c = tl__expq_c;
    tl__v8d r4 = r2 * r2;
    tl__v8d q01 = tl__v8_fma(r, TL__V8C(c[1]), TL__V8C(c[0]));
    tl__v8d q23 = tl__v8_fma(r, TL__V8C(c[3]), TL__V8C(c[2]));
    tl__v8d q45 = tl__v8_fma(r, TL__V8C(c[5]), TL__V8C(c[4]));
    tl__v8d q67 = tl__v8_fma(r, TL__V8C(c[7]), TL__V8C(c[6]));
    tl__v8d q89 = tl__v8_fma(r, TL__V8C(c[9]), TL__V8C(c[8]));
    tl__v8d q03 = tl__v8_fma(r2, q23, q01);
    tl__v8d q47 = tl__v8_fma(r2, q67, q45);
    tl__v8d q8a = tl__v8_fma(r2, TL__V8C(c[10]), q89);
    return tl__v8_fma(r4, tl__v8_fma(r4, q8a, q47), q03);
}

TL__V8_FN tl__v8d tl__v8_erf_small(tl__v8d x, tl__v8d *lo)  /* tl__erf_small */
{
    const double *c = tl__erf_small_c;
    tl__v8d z = x * x, zl = tl__v8_fma(x, x, -z);
    tl__v8d p = TL__V8C(c[0]);
    for (int k = 1; k < 11; k++) p = tl__v8_fma(p, z, TL__V8C(c[k]));
    tl__v8d c1 = TL__V8C(c[11]), c1l = TL__V8C(c[12]), c0 = TL__V8C(c[13]), c0l = TL__V8C(c[14]);
    tl__v8d dq = tl__v8_fma(tl__v8_fma(TL__V8C(3.0 * c[9]), z, TL__V8C(2.0 * c[10])), z, c1);
    tl__v8d c1z = c1 * z;
    tl__v8d t = tl__v8_fma(c1, z, -c1z) + tl__v8_fma(c1l, z, c0l);
    t = tl__v8_fma(dq, zl, tl__v8_fma(z * z, p, t));
    tl__v8d h0 = tl__v8_fma(x, c0, x);
    tl__v8d h = tl__v8_fma(x, c1z, h0);
    *lo = (tl__v8_fma(x, c0, x - h0) + tl__v8_fma(x, c1z, h0 - h)) + x * t;
    return h;
}

/* tl__erfc_tab[k][i] per lane */
TL__V8_FN tl__v8d tl__v8_erfc_row(int k, tl__v8i i)
{
    tl__v8d row;
    memcpy(&row, tl__erfc_tab[k], 64);
    return __builtin_shuffle(row, i);
}

TL__V8_FN tl__v8d tl__v8_erfc_core(tl__v8d a, tl__v8d al, tl__v8d *lo, tl__v8i *k)
{
    const tl__v8d zero = TL__V8C(0.0), one = TL__V8C(1.0);
    tl__v8i i3 = a >= 4.0;
    tl__v8i i = -((a >= 1.2) + (a >= 2.3) + i3);            /* the interval, 0 to 3 */
    tl__v8d A = a * a, Al = tl__v8_fma(a, a, -A) + 2.0 * (a * al);
    tl__v8d t = tl__v8_fma(-A, TL__V8C(0x1.71547652b82fep+0), TL__V8C(0x1.8p52));
    tl__v8d kd = t - 0x1.8p52;
    tl__v8d ra = tl__v8_fma(kd, TL__V8C(-0x1.62e42fefa3800p-1), -A);
    tl__v8d b = kd * 0x1.ef35793c76730p-45;
    tl__v8d r = ra - b, rl = ((ra - r) - b) - Al;
    tl__v8d r2 = r * r;
    tl__v8d q = tl__v8_expq(r, r2);
    tl__v8d er = tl__v8_fma(r2, q, r);
    tl__v8d pl = tl__v8_fma(r2, q, tl__v8_fma(rl, er, rl));
    tl__v8d eh = 1.0 + r, el = ((1.0 - eh) + r) + pl;
    tl__v8d m = eh + el, ml = el - (m - eh);
    *k = (tl__v8i)t - (int64_t)0x4338000000000000u;
    tl__v8d d = tl__v8_sel(i3, a, TL__V8C(4.0));
    tl__v8d inv = 1.0 / d;
    tl__v8d il = (tl__v8_fma(-d, inv, one) - tl__v8_sel(i3, al, zero) * inv) * inv;
    tl__v8d ih = tl__v8_sel(i3, inv, one);
    il = tl__v8_sel(i3, il, zero);
    tl__v8d v = tl__v8_sel(i3, inv * inv, (a - tl__v8_erfc_row(0, i)) + al);
    tl__v8d p = tl__v8_erfc_row(1, i);
    for (int j = 2; j <= 17; j++) p = tl__v8_fma(p, v, tl__v8_erfc_row(j, i));
    tl__v8d c1 = tl__v8_erfc_row(18, i), c0 = tl__v8_erfc_row(19, i);
    tl__v8d c1l = tl__v8_erfc_row(20, i), c0l = tl__v8_erfc_row(21, i);
    tl__v8d ph = c1 * v, pe = tl__v8_fma(c1, v, -ph);
    tl__v8d s = c0 + ph, se = (c0 - s) + ph;
    tl__v8d sl = ((se + pe) + tl__v8_fma(c1l, v, c0l)) + v * (v * p);
    tl__v8d mh = m * ih, mlo = tl__v8_fma(m, ih, -mh) + (ml * ih + m * il);
    tl__v8d hi = mh * s;
    *lo = tl__v8_fma(mh, s, -hi) + (mh * sl + mlo * s);
    return hi;
}

/* 2^k per lane, k in [-1022, 1023] (tl__pow2d) */
TL__V8_FN tl__v8d tl__v8_pow2(tl__v8i k) { return (tl__v8d)((k + 1023) << 52); }

static __attribute__((target("avx512f"), unused)) void tl__erfc_v8(const double *x, double *o,
                                                                    int64_t n)
{
    const tl__v8d zero = TL__V8C(0.0), one = TL__V8C(1.0), two = TL__V8C(2.0);
    for (int64_t i = 0; i < n; i += 8) {
        tl__v8d xv;
        memcpy(&xv, x + i, 64);
        tl__v8d a = (tl__v8d)((tl__v8u)xv & 0x7fffffffffffffffu);
        tl__v8i below = a < 0.5;
        unsigned small_lanes = _mm512_cmp_pd_mask((__m512d)a, (__m512d)TL__V8C(0.5), _CMP_LT_OQ);
        tl__v8d pos = zero, neg = zero, small = zero;
        if (small_lanes != 0xff) {
            tl__v8d ac = tl__v8_sel(a < 27.5, a, TL__V8C(27.5));
            ac = tl__v8_sel(ac < 0.5, TL__V8C(0.5), ac);
            tl__v8d l;
            tl__v8i k;
            tl__v8d h = tl__v8_erfc_core(ac, zero, &l, &k);
            tl__v8i lowk = k < -1000;
            tl__v8i k1 = (lowk & -1000) | (~lowk & k);
            tl__v8d s1 = tl__v8_pow2(k1), s2 = tl__v8_pow2(k - k1);
            pos = ((h + l) * s1) * s2;
            tl__v8d H = (h * s1) * s2, L = (l * s1) * s2;
            tl__v8d nn = two - H;
            neg = nn + (((two - nn) - H) - L);
        }
        if (small_lanes) {
            tl__v8d sl;
            tl__v8d e = tl__v8_erf_small(xv, &sl);
            tl__v8d u = one - e;
            small = u + (((one - u) - e) - sl);
        }
        tl__v8d r = tl__v8_sel(below, small, tl__v8_sel(xv < 0.0, neg, pos));
        r = tl__v8_sel(xv == xv, r, xv);
        memcpy(o + i, &r, 64);
    }
}
#undef TL__V8C
#endif

TL__ARRAY_BY_8(tl_erfc_n, tl__erfc_v8, tl_erfc)

/* The ones libm lacks, in the same stable forms as the float versions. */
TL_MATH_INLINE double tl_silu(double x)
{
    double e = tl_exp(-fabs(x));
    return (x >= 0.0 ? x : x * e) / (1.0 + e);
}

/* gelu, exact form x Phi(x) = x erfc(-x/sqrt2) / 2: < 0.8 ulp (measured 0.76; PyTorch
   2.13's 1.5 on [-1, 1], 12 on [-2, -0.84] and up to 1e16 further left, where its
   1 + erf cancels), relative down to the subnormals (-0 below x = -38.6), vectorized,
   branch-free; gelu(-inf) = NaN (-inf * 0, as the formula gives), gelu(inf) = inf, keeps
   -0. u = x/sqrt2 is formed as uh + ul (sqrt(1/2) in two parts, the product's error by an
   fma): erfc(u) magnifies an error in u by 2u^2 (up to 1500), and tl__erfc_core takes
   ul. |u| < 0.5: x (1 + erf(u)) / 2, erf(u) from tl__erf_small with ul erf'(u) (a 5-term
   series of e^-u^2) added to its low part, 1 + erf(u) by Fast2Sum; |u| >= 0.5, with
   C = erfc(|u|): x C / 2 for x < 0 and x - x C / 2 (a double-double, rounded once) for
   x > 0; no form cancels. |x| > 40: -0 or x. */
TL_MATH_INLINE double tl_gelu(double x)
{
    double uh = x * 0x1.6a09e667f3bcdp-1;
    double ul = tl__fma(x, 0x1.6a09e667f3bcdp-1, -uh) + x * -0x1.bdd3413b26456p-55;
    double a = tl__absd(uh);
    double ac = tl__seld(a < 27.5, a, 27.5);              /* NaN: 27.5, put back below */
    ac = tl__seld(ac < 0.5, 0.5, ac);
    double al = tl__seld((a < 27.5) & (a >= 0.5), tl__seld(uh < 0.0, -ul, ul), 0.0);
    double l, sl;
    int64_t k;
    double h = tl__erfc_core(ac, al, &l, &k);
    int64_t k1 = k < -1000 ? -1000 : k;
    double s1 = tl__pow2d(k1), s2 = tl__pow2d(k - k1);
    double neg = ((0.5 * tl__fma(x, h, x * l)) * s1) * s2;   /* x < 0: x C / 2 */
    double H = (h * s1) * s2, L = (l * s1) * s2;
    double hx = 0.5 * x, ch = hx * H, cl = tl__fma(hx, H, -ch) + hx * L;
    double pd = x - ch, pos = pd + (((x - pd) - ch) - cl);    /* x > 0: x - x C / 2 */
    /* |u| < 0.5 */
    double z = uh * uh;
    double de = tl__fma(tl__fma(tl__fma(tl__fma(0x1.5555555555555p-5, z, -0x1.5555555555555p-3),
                                        z, 0.5), z, -1.0), z, 1.0);       /* e^-z */
    double e = tl__erf_small(uh, &sl);
    sl = tl__fma(ul * 0x1.20dd750429b6dp+0, de, sl);
    double w = 1.0 + e, wl = ((1.0 - w) + e) + sl;
    double small = 0.5 * tl__fma(x, w, x * wl);
    double r = tl__seld(a < 0.5, small, tl__seld(x < 0.0, neg, pos));
    r = tl__seld(x < -40.0, x * 0.0, tl__seld(x > 40.0, x, r));
    return tl__seld(x == x, r, x);
}

TL_MATH_INLINE double tl_gelu_tanh(double x)
{
    double v = x * (0x1.9884533d43651p+0 + 0x1.2444f2a4d8b4bp-4 * (x * x));
    double e = exp(-fabs(v));
    return (v >= 0.0 ? x : x * e) / (1.0 + e);
}

TL_MATH_INLINE double tl_softplus(double x, double beta, double threshold)
{
    double bx = x * beta;
    return bx > threshold ? x : ((bx > 0.0 ? bx : 0.0) + log1p(exp(-fabs(bx)))) / beta;
}

#endif
