/* Reduction, softmax and cumulative kernels. See cpu_reduce.h for the layouts.

   Accuracy without -ffast-math: the compiler may not reorder floating-point additions, so
   every vectorizable loop keeps its own array of LANES independent accumulators (the loop
   over the lanes is what vectorizes). float32 rows are summed in float32 in blocks of BLOCK
   elements (each lane adds BLOCK / LANES values) and each block result is folded into a
   double, so the error stays that of a short sum whatever the length: 2^25 float32 ones sum
   to exactly 2^25 in every layout. Column sums do the same over blocks of RB rows. */
/* Comparisons (max/min, the clamps in red_expf) only if-convert into vector selects when
   floating-point traps are assumed off; results, NaN and inf are unchanged (this is not
   -ffast-math: no reassociation, no finite-math assumptions). */
#pragma GCC optimize("no-trapping-math")

#include "cpu_reduce.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_copy.h"
#include "cpu_pool.h"
#include "cpu_simd.h"

#define LANES 64          /* independent accumulators in a row loop */
#define BLOCK 4096        /* row elements per float block (then folded into a double) */
#define CB 512            /* columns per column block (OUTER layout) */
#define RB 64             /* rows per float block (OUTER layout) */
#define TILE 4096         /* compute-type elements gathered at once from other dtypes */
#define GRAIN 65536       /* elements of work per parallel chunk */
#define FEW_OUTPUTS 8     /* below this many outputs (or column tasks) split the reduced space */

static const int ITEMSIZE[TL_NUM_DTYPES] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};

/* exp for float32 that vectorizes (no libm call, no branches): exp(x) = 2^k exp(r) with
   k = round(x / ln2) and |r| <= ln2 / 2, exp(r) by its Taylor polynomial of degree 7
   (truncation error ~5e-9 relative) in fused multiply-adds (written out, so every ISA clone
   rounds alike: see tl__fmaf in cpu_math.h). Within 1 ulp of the correctly rounded result
   on [-104, 89]; exp(-inf) = 0, exp(inf) = inf, NaN propagates. 2^k is applied as two
   factors so that neither overflows near the ends of the range and subnormal results stay
   right. */
#define FMA(a, b, c) __builtin_fmaf((a), (b), (c))
static inline float red_expf(float x) {
    float xc = x < -110.0f ? -110.0f : x;       /* NaN passes both clamps unchanged */
    float kf, r, p, s1, s2;
    int32_t ki, h, e1, e2;
    xc = xc > 89.0f ? 89.0f : xc;
    kf = FMA(xc, 1.44269504088896341f, 12582912.0f);  /* 1.5 * 2^23: rounds to an integer */
    memcpy(&ki, &kf, 4);
    ki -= 0x4B400000;                                  /* that integer, read from the bits */
    kf -= 12582912.0f;
    r = FMA(kf, -0.693145751953125f, xc);              /* ln2 split in two: exact product */
    r = FMA(kf, -1.428606820309417e-06f, r);
    p = 1.9841269841269841e-04f;
    p = FMA(p, r, 1.3888888888888889e-03f);
    p = FMA(p, r, 8.3333333333333333e-03f);
    p = FMA(p, r, 4.1666666666666667e-02f);
    p = FMA(p, r, 1.6666666666666667e-01f);
    p = FMA(p, r, 0.5f);
    p = FMA(p, r, 1.0f);
    p = FMA(p, r, 1.0f);
    h = ki >> 1;
    e1 = (h + 127) << 23;
    e2 = (ki - h + 127) << 23;
    memcpy(&s1, &e1, 4);
    memcpy(&s2, &e2, 4);
    return p * s1 * s2;
}

/* red_expf for x <= 0 or NaN only: softmax's x - max (a row holding NaN or +inf gives NaN,
   a row of -inf gives -inf - -inf = NaN, as PyTorch's). 0.87 ulp at most (measured over
   every 7th float in [-110, 0]; red_expf 0.92 there), with 7 fewer operations per element,
   softmax's inner loop: no upper clamp; exp(r) from a polynomial of degree 6 fitted for
   relative error (2^-28.3 on |r| <= ln2 / 2), not degree-7 Taylor; and 2^k applied as
   2^(k+64), made from the
   low bits of the rounding sum's pattern (k in [-159, 0], so k + 64 + 127 is a normal
   exponent; the pattern's offset 0x4B400000 shifts out), then 2^-64: one rounding, also
   into the subnormals. */
static inline float red_expf_nonpos(float x) {
    float xc = x < -110.0f ? -110.0f : x;       /* NaN passes the clamp unchanged */
    float kf, r, p, s;
    uint32_t kb, e;
    kf = FMA(xc, 1.44269504088896341f, 12582912.0f);  /* 1.5 * 2^23 + k */
    memcpy(&kb, &kf, 4);
    kf -= 12582912.0f;
    r = FMA(kf, -0.693145751953125f, xc);
    r = FMA(kf, -1.428606820309417e-06f, r);
    p = 0x1.6a2466p-10f;
    p = FMA(p, r, 0x1.1239d6p-7f);
    p = FMA(p, r, 0x1.5558f0p-5f);
    p = FMA(p, r, 0x1.555492p-3f);
    p = FMA(p, r, 0x1.fffffcp-2f);
    p = FMA(p, r, 1.0f);
    p = FMA(p, r, 1.0f);
    e = (kb + 64u + 127u) << 23;
    memcpy(&s, &e, 4);
    return p * s * 0x1p-64f;
}

/* ------------------------------------------------------------------------------------------
   Kernels. For each (op, compute type):
     inner(x, n, st, c, p)            fold the contiguous x[0..n) into the state *st
     outer(x, nrows, rs, m, st, c, p) fold rows x[r*rs + 0..m) into the states st[0..m)
     comb(st, o, m)                   st[j] = combine(st[j], o[j])
   T: element type; BT: block accumulator type; ST: state type (double or int64);
   ACC(a, v, c): a folded with element v (c: the center); COMB(a, b): two accumulators. */

typedef void (*inner_fn)(const void *x, int64_t n, void *st, double c, double p);
typedef void (*rows_fn)(const void *x, int64_t nrows, int64_t rs, int64_t n, void *st,
                        const double *c, double p);
typedef void (*outer_fn)(const void *x, int64_t nrows, int64_t rs, int64_t m, void *st,
                         const double *c, double p);
typedef void (*comb_fn)(void *st, const void *o, int64_t m);

/* Short lane loops (8) would be fully unrolled before the vectorizer sees them, and
   straight-line code with NaN-aware selects does not vectorize: keep them loops. */
#define KEEP_LOOP _Pragma("GCC unroll 1")
#define NOTHING

/* One block of a row with L lanes: acc[0] ends up holding the block's result. */
#define RED_BLOCK(L, U, T, BT, ID, ACC, COMB)                                                \
    {                                                                                        \
        BT acc[L];                                                                           \
        int k, w;                                                                            \
        int64_t i = 0;                                                                       \
        for (k = 0; k < L; k++) acc[k] = (BT)(ID);                                           \
        for (; i + L <= n1; i += L) {                                                        \
            U for (k = 0; k < L; k++) {                                                      \
                BT a = acc[k];                                                               \
                T v = xb[i + k];                                                             \
                acc[k] = (ACC);                                                              \
            }                                                                                \
        }                                                                                    \
        for (k = 0; i < n1; i++, k++) {                                                      \
            BT a = acc[k];                                                                   \
            T v = xb[i];                                                                     \
            acc[k] = (ACC);                                                                  \
        }                                                                                    \
        for (w = L / 2; w >= 1; w /= 2)                                                      \
            for (k = 0; k < w; k++) {                                                        \
                BT a = acc[k], b = acc[k + w];                                               \
                acc[k] = (COMB);                                                             \
            }                                                                                \
        blk = acc[0];                                                                        \
    }

/* The two row entries of a kernel: inner (one row) and rows (nrows rows of n elements, rows
   rs apart, one state each; c: one center each). ATTR is the function's dispatch. */
#define ROW_ENTRY_FUNCS(NAME, SUFFIX, ATTR, T, BT, ST)                                      \
    ATTR static void inner##SUFFIX##NAME(const void *xv, int64_t n, void *sv, double cd,     \
                                         double p) {                                         \
        row_##NAME((const T *)xv, n, (ST *)sv, (BT)cd, p);                                   \
    }                                                                                        \
    ATTR static void rows##SUFFIX##NAME(const void *xv, int64_t nrows, int64_t rs,           \
                                        int64_t n, void *sv, const double *cd, double p) {   \
        const T *x = (const T *)xv;                                                          \
        ST *s = (ST *)sv;                                                                    \
        int64_t r;                                                                           \
        for (r = 0; r < nrows; r++) row_##NAME(x + r * rs, n, s + r, cd ? (BT)cd[r] : (BT)0, p); \
    }

/* DISP in RED_KERNELS picks one of these. TL_DISPATCH: every ISA clone. STREAM, for the
   kernels whose loop is one load and one cheap operation per element: rows of at least
   2 LANES elements run the TL_DISPATCH_STREAM clones (256-bit loads, faster on Zen 4 for
   long rows: see cpu_simd.h), shorter ones the TL_DISPATCH clones (on Zen 4 the 8-lane
   loop of a 64-element row took 20% longer in the AVX2 clone). The bits are the same. */
#define ROW_ENTRIES_TL_DISPATCH(NAME, T, BT, ST)                                            \
    enum { streams_##NAME = 0 };                                                             \
    ROW_ENTRY_FUNCS(NAME, _, TL_DISPATCH, T, BT, ST)
#define ROW_ENTRIES_STREAM(NAME, T, BT, ST)                                                 \
    enum { streams_##NAME = 1 };                                                             \
    ROW_ENTRY_FUNCS(NAME, _short_, TL_DISPATCH, T, BT, ST)                                   \
    ROW_ENTRY_FUNCS(NAME, _long_, TL_DISPATCH_STREAM, T, BT, ST)                             \
    static void inner_##NAME(const void *xv, int64_t n, void *sv, double cd, double p) {     \
        (n >= 2 * LANES ? inner_long_##NAME : inner_short_##NAME)(xv, n, sv, cd, p);         \
    }                                                                                        \
    static void rows_##NAME(const void *xv, int64_t nrows, int64_t rs, int64_t n, void *sv,  \
                            const double *cd, double p) {                                    \
        (n >= 2 * LANES ? rows_long_##NAME : rows_short_##NAME)(xv, nrows, rs, n, sv, cd, p); \
    }
#define RED_KERNELS(NAME, DISP, T, BT, ST, ID, ACC, COMB)                                    \
    /* fold the contiguous x[0..n) into *s: blocks of BLOCK elements, LANES lanes (8 for    \
       short rows, where a wide tree would cost more than the row) */                       \
    static inline __attribute__((always_inline)) void row_##NAME(                            \
        const T *TL_RESTRICT x, int64_t n, ST *s, BT c, double p) {                          \
        int64_t i0;                                                                          \
        (void)c;                                                                             \
        (void)p;                                                                             \
        for (i0 = 0; i0 < n; i0 += BLOCK) {                                                  \
            const T *TL_RESTRICT xb = x + i0;                                                \
            int64_t n1 = n - i0 < BLOCK ? n - i0 : BLOCK;                                    \
            BT blk;                                                                          \
            if (n1 >= 2 * LANES) {                                                           \
                RED_BLOCK(LANES, NOTHING, T, BT, ID, ACC, COMB)                                       \
            } else if (n1 >= 8) {                                                            \
                RED_BLOCK(8, KEEP_LOOP, T, BT, ID, ACC, COMB)                                           \
            } else {                                                                         \
                int64_t i;                                                                   \
                BT a = (BT)(ID);                                                             \
                for (i = 0; i < n1; i++) {                                                   \
                    T v = xb[i];                                                             \
                    a = (ACC);                                                               \
                }                                                                            \
                blk = a;                                                                     \
            }                                                                                \
            {                                                                                \
                ST a = *s, b = (ST)blk;                                                      \
                *s = (COMB);                                                                 \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
    ROW_ENTRIES_##DISP(NAME, T, BT, ST)                                                      \
    TL_DISPATCH static void outer_##NAME(const void *xv, int64_t nrows, int64_t rs,          \
                                         int64_t m, void *sv, const double *cd, double p) {  \
        const T *TL_RESTRICT x = (const T *)xv;                                              \
        ST *s = (ST *)sv;                                                                    \
        BT blk[CB], cc[CB];                                                                  \
        int64_t r0, r, j;                                                                    \
        (void)p;                                                                             \
        for (j = 0; j < m; j++) cc[j] = cd ? (BT)cd[j] : (BT)0;                              \
        for (r0 = 0; r0 < nrows; r0 += RB) {                                                 \
            int64_t r1 = nrows - r0 < RB ? nrows : r0 + RB;                                  \
            for (j = 0; j < m; j++) blk[j] = (BT)(ID);                                       \
            for (r = r0; r < r1; r++) {                                                      \
                const T *TL_RESTRICT row = x + r * rs;                                       \
                for (j = 0; j < m; j++) {                                                    \
                    BT a = blk[j], c = cc[j];                                                \
                    T v = row[j];                                                            \
                    (void)c;                                                                 \
                    blk[j] = (ACC);                                                          \
                }                                                                            \
            }                                                                                \
            for (j = 0; j < m; j++) {                                                        \
                ST a = s[j], b = (ST)blk[j];                                                 \
                s[j] = (COMB);                                                               \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
    static void comb_##NAME(void *sv, const void *ov, int64_t m) {                           \
        ST *s = (ST *)sv;                                                                    \
        const ST *o = (const ST *)ov;                                                        \
        int64_t j;                                                                           \
        for (j = 0; j < m; j++) {                                                            \
            ST a = s[j], b = o[j];                                                           \
            s[j] = (COMB);                                                                   \
        }                                                                                    \
    }

#define ADD (a + b)
#define MUL (a * b)
#define AND (a & b)
#define OR (a | b)
/* NaN-propagating max/min: a NaN, once in, stays */
#define NMAX (((b > a) | (b != b)) ? b : a)
#define NMIN (((b < a) | (b != b)) ? b : a)

/* float32 and the half types (gathered into float32) */
RED_KERNELS(sum_f32, STREAM, float, float, double, 0, a + v, ADD)
RED_KERNELS(prod_f32, TL_DISPATCH, float, double, double, 1, a * v, MUL)
RED_KERNELS(max_f32, STREAM, float, float, double, -INFINITY, ((v > a) | (v != v)) ? v : a, NMAX)
RED_KERNELS(min_f32, STREAM, float, float, double, INFINITY, ((v < a) | (v != v)) ? v : a, NMIN)
RED_KERNELS(all_f32, TL_DISPATCH, float, int64_t, int64_t, 1, a & (int64_t)(v != 0), AND)
RED_KERNELS(any_f32, TL_DISPATCH, float, int64_t, int64_t, 0, a | (int64_t)(v != 0), OR)
RED_KERNELS(nonzero_f32, TL_DISPATCH, float, int64_t, int64_t, 0, a + (int64_t)(v != 0), ADD)
RED_KERNELS(abssum_f32, STREAM, float, float, double, 0, a + fabsf(v), ADD)
RED_KERNELS(sumsq_f32, STREAM, float, float, double, 0, a + v * v, ADD)
RED_KERNELS(absmax_f32, STREAM, float, float, double, 0,
            ((fabsf(v) > a) | (v != v)) ? fabsf(v) : a, NMAX)
RED_KERNELS(absmin_f32, STREAM, float, float, double, INFINITY,
            ((fabsf(v) < a) | (v != v)) ? fabsf(v) : a, NMIN)
RED_KERNELS(powsum_f32, TL_DISPATCH, float, double, double, 0, a + pow(fabs((double)v), p), ADD)
RED_KERNELS(csq_f32, TL_DISPATCH, float, float, double, 0, a + (v - c) * (v - c), ADD)
RED_KERNELS(sumexp_f32, TL_DISPATCH, float, float, double, 0, a + red_expf(v - c), ADD)

/* float64 */
RED_KERNELS(sum_f64, STREAM, double, double, double, 0, a + v, ADD)
RED_KERNELS(prod_f64, TL_DISPATCH, double, double, double, 1, a * v, MUL)
RED_KERNELS(max_f64, STREAM, double, double, double, -INFINITY, ((v > a) | (v != v)) ? v : a, NMAX)
RED_KERNELS(min_f64, STREAM, double, double, double, INFINITY, ((v < a) | (v != v)) ? v : a, NMIN)
RED_KERNELS(all_f64, TL_DISPATCH, double, int64_t, int64_t, 1, a & (int64_t)(v != 0), AND)
RED_KERNELS(any_f64, TL_DISPATCH, double, int64_t, int64_t, 0, a | (int64_t)(v != 0), OR)
RED_KERNELS(nonzero_f64, TL_DISPATCH, double, int64_t, int64_t, 0, a + (int64_t)(v != 0), ADD)
RED_KERNELS(abssum_f64, STREAM, double, double, double, 0, a + fabs(v), ADD)
RED_KERNELS(sumsq_f64, STREAM, double, double, double, 0, a + v * v, ADD)
RED_KERNELS(absmax_f64, STREAM, double, double, double, 0,
            ((fabs(v) > a) | (v != v)) ? fabs(v) : a, NMAX)
RED_KERNELS(absmin_f64, STREAM, double, double, double, INFINITY,
            ((fabs(v) < a) | (v != v)) ? fabs(v) : a, NMIN)
RED_KERNELS(powsum_f64, TL_DISPATCH, double, double, double, 0, a + pow(fabs(v), p), ADD)
RED_KERNELS(csq_f64, TL_DISPATCH, double, double, double, 0, a + (v - c) * (v - c), ADD)
RED_KERNELS(sumexp_f64, TL_DISPATCH, double, double, double, 0, a + exp(v - c), ADD)

/* integers and bool (gathered into int64; sums and products wrap, as in PyTorch) */
RED_KERNELS(sum_i64, TL_DISPATCH, int64_t, int64_t, int64_t, 0, a + v, ADD)
RED_KERNELS(prod_i64, TL_DISPATCH, int64_t, int64_t, int64_t, 1, a * v, MUL)
RED_KERNELS(max_i64, TL_DISPATCH, int64_t, int64_t, int64_t, INT64_MIN,
            v > a ? v : a, (b > a ? b : a))
RED_KERNELS(min_i64, TL_DISPATCH, int64_t, int64_t, int64_t, INT64_MAX,
            v < a ? v : a, (b < a ? b : a))
RED_KERNELS(all_i64, TL_DISPATCH, int64_t, int64_t, int64_t, 1, a & (int64_t)(v != 0), AND)
RED_KERNELS(any_i64, TL_DISPATCH, int64_t, int64_t, int64_t, 0, a | (int64_t)(v != 0), OR)
RED_KERNELS(nonzero_i64, TL_DISPATCH, int64_t, int64_t, int64_t, 0, a + (int64_t)(v != 0), ADD)

typedef struct {
    inner_fn inner;
    rows_fn rows;
    outer_fn outer;
    comb_fn comb;
    int st_int;        /* the state is an int64 (else a double) */
    int streams;       /* a STREAM kernel: memory-bound on long rows (see task_chunks) */
    double id_d;       /* identity of a double state */
    int64_t id_i;      /* identity of an int64 state */
} red_kernel;

#define KD(NAME, ID) \
    {inner_##NAME, rows_##NAME, outer_##NAME, comb_##NAME, 0, streams_##NAME, ID, 0}
#define KI(NAME, ID) \
    {inner_##NAME, rows_##NAME, outer_##NAME, comb_##NAME, 1, streams_##NAME, 0, ID}
#define KNONE {NULL, NULL, NULL, NULL, 0, 0, 0, 0}

/* [op][compute type: 0 = F32, 1 = F64, 2 = I64] */
static const red_kernel KERNELS[TL_R_ARGMAX][3] = {
    /* SUM */ {KD(sum_f32, 0), KD(sum_f64, 0), KI(sum_i64, 0)},
    /* PROD */ {KD(prod_f32, 1), KD(prod_f64, 1), KI(prod_i64, 1)},
    /* MAX */ {KD(max_f32, -INFINITY), KD(max_f64, -INFINITY), KI(max_i64, INT64_MIN)},
    /* MIN */ {KD(min_f32, INFINITY), KD(min_f64, INFINITY), KI(min_i64, INT64_MAX)},
    /* ALL */ {KI(all_f32, 1), KI(all_f64, 1), KI(all_i64, 1)},
    /* ANY */ {KI(any_f32, 0), KI(any_f64, 0), KI(any_i64, 0)},
    /* NONZERO */ {KI(nonzero_f32, 0), KI(nonzero_f64, 0), KI(nonzero_i64, 0)},
    /* ABSSUM */ {KD(abssum_f32, 0), KD(abssum_f64, 0), KNONE},
    /* SUMSQ */ {KD(sumsq_f32, 0), KD(sumsq_f64, 0), KNONE},
    /* ABSMAX */ {KD(absmax_f32, 0), KD(absmax_f64, 0), KNONE},
    /* ABSMIN */ {KD(absmin_f32, INFINITY), KD(absmin_f64, INFINITY), KNONE},
    /* POWSUM */ {KD(powsum_f32, 0), KD(powsum_f64, 0), KNONE},
    /* CSQ */ {KD(csq_f32, 0), KD(csq_f64, 0), KNONE},
    /* SUMEXP */ {KD(sumexp_f32, 0), KD(sumexp_f64, 0), KNONE},
};

/* ------------------------------------------------------------------------------------------
   argmax / argmin: a (value, index) state. The first NaN wins (and stays); otherwise a
   strictly better value replaces the best, so ties keep the first index. idx < 0: empty. */

typedef struct {
    union {
        double d;
        int64_t i;
    } v;
    int64_t idx;
} argst;

typedef void (*arg_inner_fn)(const void *x, int64_t n, int64_t base, void *st);
typedef void (*arg_outer_fn)(const void *x, int64_t nrows, int64_t rs, int64_t m, int64_t base,
                             void *st);
typedef void (*arg_comb_fn)(void *st, const void *o, int64_t m);

/* A contiguous run is read once, in blocks of BLOCK elements: a vectorized pass gives each
   block's best value (NaNs aside) and whether it holds a NaN, and only a block that beats
   the best so far (or holds the first NaN) is searched again, from L1, for the first index
   of that value. (A scalar compare-and-branch loop ran at 2.5-4 cycles per element, its
   speed hanging on where the compiler put the branch.) */
#define ARG_KERNELS(NAME, T, F, BETTER)                                                      \
    /* the best of x[0..n) (n >= 1) under STRICT, NaNs skipped; *nan: whether one is there */ \
    TL_DISPATCH static T argblock_##NAME(const T *TL_RESTRICT x, int64_t n, int *nan) {     \
        T acc[LANES], nv[LANES], b;                                                          \
        int64_t i;                                                                           \
        int k, w;                                                                            \
        for (k = 0; k < LANES; k++) {                                                        \
            acc[k] = x[0]; /* a NaN here is seen by nv[0]: the block then is not used */ \
            nv[k] = 0;                                                                       \
        }                                                                                    \
        for (i = 0; i + LANES <= n; i += LANES)                                              \
            for (k = 0; k < LANES; k++) {                                                    \
                T v = x[i + k];                                                              \
                acc[k] = STRICT_##BETTER(v, acc[k]) ? v : acc[k];                            \
                nv[k] = v != v ? v : nv[k];                                                  \
            }                                                                                \
        for (k = 0; i < n; i++, k++) {                                                       \
            T v = x[i];                                                                      \
            acc[k] = STRICT_##BETTER(v, acc[k]) ? v : acc[k];                                \
            nv[k] = v != v ? v : nv[k];                                                      \
        }                                                                                    \
        for (w = LANES / 2; w >= 1; w /= 2)                                                  \
            for (k = 0; k < w; k++) {                                                        \
                acc[k] = STRICT_##BETTER(acc[k + w], acc[k]) ? acc[k + w] : acc[k];          \
                nv[k] = nv[k + w] != nv[k + w] ? nv[k + w] : nv[k];                          \
            }                                                                                \
        b = acc[0];                                                                          \
        *nan = nv[0] != nv[0];                                                               \
        return b;                                                                            \
    }                                                                                        \
    static void arginner_##NAME(const void *xv, int64_t n, int64_t base, void *sv) {         \
        const T *x = (const T *)xv;                                                          \
        argst *s = (argst *)sv;                                                              \
        T b, m;                                                                              \
        int64_t bi = s->idx, i = 0, i0, j;                                                   \
        int nan;                                                                             \
        if (n <= 0) return;                                                                  \
        if (bi < 0) {                                                                        \
            b = x[0];                                                                        \
            bi = base;                                                                       \
            i = 1;                                                                           \
        } else {                                                                             \
            b = (T)s->v.F;                                                                   \
        }                                                                                    \
        if (b == b)                                                                          \
            for (i0 = i; i0 < n; i0 += BLOCK) {                                              \
                int64_t n1 = n - i0 < BLOCK ? n - i0 : BLOCK;                                \
                m = argblock_##NAME(x + i0, n1, &nan);                                       \
                if (nan) { /* the first NaN wins */                                          \
                    for (j = 0; x[i0 + j] == x[i0 + j]; j++) {}                              \
                    b = x[i0 + j];                                                           \
                    bi = base + i0 + j;                                                      \
                    break;                                                                   \
                }                                                                            \
                if (STRICT_##BETTER(m, b)) { /* ties keep the earlier index */               \
                    for (j = 0; x[i0 + j] != m; j++) {}                                      \
                    b = m;                                                                   \
                    bi = base + i0 + j;                                                      \
                }                                                                            \
            }                                                                                \
        s->v.F = b;                                                                          \
        s->idx = bi;                                                                         \
    }                                                                                        \
    static void argouter_##NAME(const void *xv, int64_t nrows, int64_t rs, int64_t m,        \
                                int64_t base, void *sv) {                                    \
        const T *x = (const T *)xv;                                                          \
        argst *s = (argst *)sv;                                                              \
        int64_t r, j;                                                                        \
        for (r = 0; r < nrows; r++) {                                                        \
            const T *row = x + r * rs;                                                       \
            for (j = 0; j < m; j++) {                                                        \
                T v = row[j], b = (T)s[j].v.F;                                               \
                if (s[j].idx < 0 || (b == b && BETTER(v, b))) {                              \
                    s[j].v.F = v;                                                            \
                    s[j].idx = base + r;                                                     \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }                                                                                        \
    static void argcomb_##NAME(void *sv, const void *ov, int64_t m) {                        \
        argst *s = (argst *)sv;                                                              \
        const argst *o = (const argst *)ov;                                                  \
        int64_t j;                                                                           \
        for (j = 0; j < m; j++) {                                                            \
            T a = (T)s[j].v.F, b = (T)o[j].v.F;                                              \
            if (o[j].idx < 0) continue;                                                      \
            if (s[j].idx < 0 || (a == a && BETTER(b, a))) s[j] = o[j];                       \
        }                                                                                    \
    }

#define GT(v, b) ((v) > (b) || (v) != (v))
#define LT(v, b) ((v) < (b) || (v) != (v))
#define STRICT_GT(v, b) ((v) > (b))
#define STRICT_LT(v, b) ((v) < (b))
ARG_KERNELS(max_f32, float, d, GT)
ARG_KERNELS(min_f32, float, d, LT)
ARG_KERNELS(max_f64, double, d, GT)
ARG_KERNELS(min_f64, double, d, LT)
ARG_KERNELS(max_i64, int64_t, i, GT)
ARG_KERNELS(min_i64, int64_t, i, LT)

typedef struct {
    arg_inner_fn inner;
    arg_outer_fn outer;
    arg_comb_fn comb;
} arg_kernel;

#define KA(NAME) {arginner_##NAME, argouter_##NAME, argcomb_##NAME}
static const arg_kernel ARG_KERNELS_TABLE[2][3] = {
    {KA(max_f32), KA(max_f64), KA(max_i64)},
    {KA(min_f32), KA(min_f64), KA(min_i64)},
};

/* ------------------------------------------------------------------------------------------
   stores: a finished state into the output dtype */

static void store_i(char *p, int dt, int64_t v) {
    switch (dt) {
    case TL_BOOL: *(uint8_t *)p = (uint8_t)(v != 0); break;
    case TL_U8: *(uint8_t *)p = (uint8_t)v; break;
    case TL_I8: *(int8_t *)p = (int8_t)v; break;
    case TL_I16: *(int16_t *)p = (int16_t)v; break;
    case TL_I32: *(int32_t *)p = (int32_t)v; break;
    case TL_I64: *(int64_t *)p = v; break;
    case TL_F16: *(uint16_t *)p = tl_f32_to_f16((float)v); break;
    case TL_BF16: *(uint16_t *)p = tl_f32_to_bf16((float)v); break;
    case TL_F32: *(float *)p = (float)v; break;
    default: *(double *)p = (double)v; break;
    }
}

static void store_d(char *p, int dt, double v) {
    switch (dt) {
    case TL_F16: *(uint16_t *)p = tl_f32_to_f16((float)v); break;
    case TL_BF16: *(uint16_t *)p = tl_f32_to_bf16((float)v); break;
    case TL_F32: *(float *)p = (float)v; break;
    case TL_F64: *(double *)p = v; break;
    case TL_BOOL: *(uint8_t *)p = (uint8_t)(v != 0); break;
    default: store_i(p, dt, tl_f64_to_i64(v)); break;
    }
}

/* a run of n states into the output, sb bytes apart (the dtype switch is outside the loops) */
#define STORE_RUN(T, EXPR)                                                                   \
    for (j = 0; j < n; j++) *(T *)(p + j * sb) = (EXPR);

static void store_run_d(char *p, int64_t sb, int dt, const double *v, int64_t n) {
    int64_t j;
    switch (dt) {
    case TL_F32: STORE_RUN(float, (float)v[j]) break;
    case TL_F64: STORE_RUN(double, v[j]) break;
    default:
        for (j = 0; j < n; j++) store_d(p + j * sb, dt, v[j]);
        break;
    }
}

static void store_run_i(char *p, int64_t sb, int dt, const int64_t *v, int64_t n) {
    int64_t j;
    switch (dt) {
    case TL_I64: STORE_RUN(int64_t, v[j]) break;
    case TL_BOOL: STORE_RUN(uint8_t, (uint8_t)(v[j] != 0)) break;
    default:
        for (j = 0; j < n; j++) store_i(p + j * sb, dt, v[j]);
        break;
    }
}

/* ------------------------------------------------------------------------------------------
   the driver */

typedef struct {
    const tl_red_t *r;
    const red_kernel *k;      /* NULL for the arg ops */
    const arg_kernel *ak;     /* NULL otherwise */
    tl_cast_fn cast;          /* input dtype -> compute dtype (gathers) */
    int native;               /* the input already has the compute dtype */
    int isz, csz, osz, stsz;  /* item sizes: input, compute, output, state */
    int64_t K, N;             /* outputs; reduced elements per output */
    /* INNER: the innermost reduced dim; runs along the innermost kept dim */
    int64_t n, s, mk, ks, kos, runlen;
    int rows_direct;          /* each output is one contiguous row of the compute dtype */
    /* OUTER: the innermost kept dim (stride 1), the innermost reduced dim as rows */
    int64_t m, kout_m, Kouter, nb, rows, rs, FR;
    int periodic;             /* rows are dense and short: fold W = q * m lanes instead */
    int64_t q, W;
    /* the output / column task being split over chunks of the reduced space */
    const char *t_in;
    int64_t t_ooff, t_cbw, t_G;
    const double *t_cc;
    double t_c;
    char *partials;
    int failed;
} red_ctx;

static void unravel(int nd, const int64_t *shape, const int64_t *s1, const int64_t *s2, int64_t i,
                    int64_t *o1, int64_t *o2) {
    int64_t a = 0, b = 0;
    int d;
    for (d = nd - 1; d >= 0; d--) {
        int64_t q = i / shape[d], c = i - q * shape[d];
        a += c * s1[d];
        if (s2) b += c * s2[d];
        i = q;
    }
    *o1 = a;
    if (o2) *o2 = b;
}

static void st_init(const red_ctx *cx, void *st, int64_t m) {
    int64_t j;
    if (cx->ak) {
        argst *a = (argst *)st;
        for (j = 0; j < m; j++) {
            a[j].v.i = 0;
            a[j].idx = -1;
        }
    } else if (cx->k->st_int) {
        for (j = 0; j < m; j++) ((int64_t *)st)[j] = cx->k->id_i;
    } else {
        for (j = 0; j < m; j++) ((double *)st)[j] = cx->k->id_d;
    }
}

static void st_comb(const red_ctx *cx, void *st, const void *o, int64_t m) {
    if (cx->ak)
        cx->ak->comb(st, o, m);
    else
        cx->k->comb(st, o, m);
}

/* Store n finished states (output element offsets off, off + os, ...), applying the post
   step; the states are overwritten. */
static void finalize_run(const red_ctx *cx, void *st, int64_t n, int64_t off, int64_t os) {
    const tl_red_t *r = cx->r;
    char *p = r->out ? r->out + off * cx->osz : NULL;
    int64_t sb = os * cx->osz, j;
    double *v = (double *)st;
    if (cx->ak) {
        argst *a = (argst *)st;
        for (j = 0; j < n; j++) {
            r->idx[off + j * os] = a[j].idx;
            if (!p) continue;
            if (r->ct == TL_I64)
                store_i(p + j * sb, r->out_dtype, a[j].v.i);
            else
                store_d(p + j * sb, r->out_dtype, a[j].v.d);
        }
        return;
    }
    if (cx->k->st_int) {
        store_run_i(p, sb, r->out_dtype, (const int64_t *)st, n);
        return;
    }
    switch (r->post) {
    case TL_POST_DIV:
        for (j = 0; j < n; j++) v[j] = v[j] / r->post_a;
        break;
    case TL_POST_SQRT_DIV:
        for (j = 0; j < n; j++) v[j] = sqrt(v[j] / r->post_a);
        break;
    case TL_POST_ROOT:
        for (j = 0; j < n; j++) v[j] = pow(v[j], 1.0 / r->post_a);
        break;
    case TL_POST_LOG_CENTER:
        for (j = 0; j < n; j++) v[j] = log(v[j]) + r->center[off + j * os];
        break;
    default: break;
    }
    store_run_d(p, sb, r->out_dtype, v, n);
}

/* --- INNER layout ------------------------------------------------------------------------ */

/* Fold len elements at p (stride cx->s elements) into st; base: index of the first one. */
static void row_reduce(const red_ctx *cx, const char *p, int64_t len, int64_t base, void *st,
                       double c) {
    double buf[BLOCK];
    int64_t i, sb;
    if (cx->s == 1 && cx->native) {
        if (cx->ak)
            cx->ak->inner(p, len, base, st);
        else
            cx->k->inner(p, len, st, c, cx->r->p);
        return;
    }
    sb = cx->s * cx->isz;
    for (i = 0; i < len; i += BLOCK) {
        int64_t bl = len - i < BLOCK ? len - i : BLOCK;
        cx->cast((char *)buf, cx->csz, p + i * sb, sb, bl);
        if (cx->ak)
            cx->ak->inner(buf, bl, base + i, st);
        else
            cx->k->inner(buf, bl, st, c, cx->r->p);
    }
}

/* Fold elements [a, b) of one output's flattened reduced space (rows of length n). */
static void reduce_range(const red_ctx *cx, const char *base, int64_t a, int64_t b, void *st,
                         double c) {
    const tl_red_t *r = cx->r;
    int64_t row = a / cx->n, col = a - row * cx->n;
    while (a < b) {
        int64_t len = cx->n - col < b - a ? cx->n - col : b - a, roff;
        unravel(r->nr - 1, r->rshape, r->rin, NULL, row, &roff, NULL);
        row_reduce(cx, base + (roff + col * cx->s) * cx->isz, len, a, st, c);
        a += len;
        row++;
        col = 0;
    }
}

/* Run t of outputs: up to CB consecutive outputs along the innermost kept dim. Returns
   how many, with the input/output offsets of the first. */
static int64_t inner_run(const red_ctx *cx, int64_t t, int64_t *ioff, int64_t *ooff) {
    const tl_red_t *r = cx->r;
    int64_t ko = t / cx->nb, j0 = (t - ko * cx->nb) * cx->runlen;
    unravel(r->nk - 1, r->kshape, r->kin, r->kout, ko, ioff, ooff);
    *ioff += j0 * cx->ks;
    *ooff += j0 * cx->kos;
    return cx->mk - j0 < cx->runlen ? cx->mk - j0 : cx->runlen;
}

static void inner_runs_chunk(void *ctx, int64_t t0, int64_t t1) {
    const red_ctx *cx = (const red_ctx *)ctx;
    const tl_red_t *r = cx->r;
    argst st[CB];
    double cc[CB];
    int64_t t, j, cnt, ioff, ooff;
    for (t = t0; t < t1; t++) {
        cnt = inner_run(cx, t, &ioff, &ooff);
        for (j = 0; r->center && j < cnt; j++) cc[j] = r->center[ooff + j * cx->kos];
        st_init(cx, st, cnt);
        if (cx->rows_direct) {
            /* one contiguous row per output: a single kernel call for the run */
            cx->k->rows(r->src + ioff * cx->isz, cnt, cx->ks, cx->n, st, r->center ? cc : NULL, r->p);
        } else {
            for (j = 0; j < cnt; j++)
                reduce_range(cx, r->src + (ioff + j * cx->ks) * cx->isz, 0, cx->N,
                             (char *)st + j * cx->stsz, r->center ? cc[j] : 0.0);
        }
        finalize_run(cx, st, cnt, ooff, cx->kos);
    }
}

/* How many of the n fixed chunks (or runs) of a row reduction one parallel task takes. A
   STREAM kernel gives each thread about two tasks of consecutive chunks, so it streams a
   long range of memory (chunks handed out one by one left each thread a 256 KB stretch at
   a time, and 2 threads summing 64 MB 10-15% slower). Each chunk keeps its own partial,
   combined in chunk order, so the result stays the same for every thread count. The other
   kernels (exp, pow, products: bound by their arithmetic) and the column reductions keep
   one chunk per task: there is no stream to gain, and with 4 large tasks a worker that
   starts late unbalances the job (the transposed-dim sum read 7-14% slower at 2 threads). */
static int64_t task_chunks(const red_ctx *cx, int64_t n) {
    int64_t tasks = 2 * (int64_t)tl_get_num_threads();
    return cx->k && cx->k->streams ? (n + tasks - 1) / tasks : 1;   /* (argmax: no k) */
}

static void inner_split_chunk(void *ctx, int64_t c0, int64_t c1) {
    const red_ctx *cx = (const red_ctx *)ctx;
    int64_t c;
    for (c = c0; c < c1; c++) {
        void *st = cx->partials + c * cx->stsz;
        int64_t b = (c + 1) * cx->t_G < cx->N ? (c + 1) * cx->t_G : cx->N;
        st_init(cx, st, 1);
        reduce_range(cx, cx->t_in, c * cx->t_G, b, st, cx->t_c);
    }
}

static int run_inner(red_ctx *cx) {
    const tl_red_t *r = cx->r;
    int64_t work, nruns, grain;
    cx->n = r->rshape[r->nr - 1];
    cx->s = r->rin[r->nr - 1];
    if (cx->K < FEW_OUTPUTS && cx->N >= 2 * GRAIN) {
        /* few outputs, each long: fixed chunks of the reduced space, partials in order */
        int64_t nch = (cx->N + GRAIN - 1) / GRAIN, o, c, ioff, ooff;
        argst st;
        cx->partials = (char *)malloc(nch * cx->stsz);
        if (!cx->partials) return -1;
        cx->t_G = GRAIN;
        for (o = 0; o < cx->K; o++) {
            unravel(r->nk, r->kshape, r->kin, r->kout, o, &ioff, &ooff);
            cx->t_in = r->src + ioff * cx->isz;
            cx->t_c = r->center ? r->center[ooff] : 0.0;
            tl_parallel_for(0, nch, task_chunks(cx, nch), inner_split_chunk, cx);
            memcpy(&st, cx->partials, cx->stsz);
            for (c = 1; c < nch; c++) st_comb(cx, &st, cx->partials + c * cx->stsz, 1);
            finalize_run(cx, &st, 1, ooff, 0);
        }
        free(cx->partials);
        return 0;
    }
    /* runs of outputs along the innermost kept dim */
    cx->mk = r->nk ? r->kshape[r->nk - 1] : 1;
    cx->ks = r->nk ? r->kin[r->nk - 1] : 0;
    cx->kos = r->nk ? r->kout[r->nk - 1] : 0;
    /* about GRAIN elements of work per run (at most CB outputs); each output is computed
       by one run, so results do not depend on how runs are grouped into tasks: about two
       tasks of consecutive runs per thread for a STREAM kernel (task_chunks) */
    cx->runlen = GRAIN / cx->N < 1 ? 1 : GRAIN / cx->N > CB ? CB : GRAIN / cx->N;
    cx->nb = (cx->mk + cx->runlen - 1) / cx->runlen;
    cx->rows_direct = !cx->ak && r->nr == 1 && cx->s == 1 && cx->native;
    work = cx->N * (cx->mk < cx->runlen ? cx->mk : cx->runlen);
    nruns = (cx->K / cx->mk) * cx->nb;
    grain = work > 0 && GRAIN / work > 1 ? GRAIN / work : 1;
    if (task_chunks(cx, nruns) > grain) grain = task_chunks(cx, nruns);
    tl_parallel_for(0, nruns, grain, inner_runs_chunk, cx);
    return 0;
}

/* --- OUTER layout ------------------------------------------------------------------------ */

/* Fold nrows rows (stride rs elements) of m columns at x into st[0..m); base: the index of
   the first row. Other dtypes are converted a tile of rows at a time. */
static void outer_call(const red_ctx *cx, const char *x, int64_t nrows, int64_t rs, int64_t m,
                       void *st, const double *cc, int64_t base) {
    double buf[TILE];
    int64_t tr = TILE / m, r0, rr;
    if (cx->native) {
        if (cx->ak)
            cx->ak->outer(x, nrows, rs, m, base, st);
        else
            cx->k->outer(x, nrows, rs, m, st, cc, cx->r->p);
        return;
    }
    for (r0 = 0; r0 < nrows; r0 += tr) {
        int64_t nrr = nrows - r0 < tr ? nrows - r0 : tr;
        if (rs == m) {
            cx->cast((char *)buf, cx->csz, x + r0 * rs * cx->isz, cx->isz, nrr * m);
        } else {
            for (rr = 0; rr < nrr; rr++)
                cx->cast((char *)buf + rr * m * cx->csz, cx->csz, x + (r0 + rr) * rs * cx->isz,
                         cx->isz, m);
        }
        if (cx->ak)
            cx->ak->outer(buf, nrr, m, m, base + r0, st);
        else
            cx->k->outer(buf, nrr, m, m, st, cc, cx->r->p);
    }
}

/* Fold the flattened reduced rows [a, b) of one column block (x: its first column). */
static void outer_rows(const red_ctx *cx, const char *x, int64_t a, int64_t b, int64_t cbw,
                       void *st, const double *cc) {
    const tl_red_t *r = cx->r;
    if (cx->periodic) {
        /* a is a multiple of q: fold q consecutive rows as one row of W = q * m columns */
        int64_t full = (b - a) / cx->q, rem = (b - a) - full * cx->q, t, w;
        if (full) {
            argst stw[128];
            double ccw[128];
            for (w = 0; w < cx->W; w++) ccw[w] = cc ? cc[w % cx->m] : 0.0;
            st_init(cx, stw, cx->W);
            outer_call(cx, x + a * cx->m * cx->isz, full, cx->W, cx->W, stw, cc ? ccw : NULL, 0);
            for (t = 0; t < cx->q; t++) st_comb(cx, st, (char *)stw + t * cx->m * cx->stsz, cx->m);
        }
        if (rem)
            outer_call(cx, x + (a + full * cx->q) * cx->m * cx->isz, rem, cx->m, cx->m, st, cc, 0);
        return;
    }
    while (a < b) {
        int64_t combo = a / cx->rows, r0 = a - combo * cx->rows, roff;
        int64_t len = cx->rows - r0 < b - a ? cx->rows - r0 : b - a;
        unravel(r->nr - 1, r->rshape, r->rin, NULL, combo, &roff, NULL);
        outer_call(cx, x + (roff + r0 * cx->rs) * cx->isz, len, cx->rs, cbw, st, cc, a);
        a += len;
    }
}

/* Geometry of column task t: input/output offsets of its first column and its width. */
static int64_t outer_task(const red_ctx *cx, int64_t t, int64_t *ioff, int64_t *ooff) {
    const tl_red_t *r = cx->r;
    int64_t ko = t / cx->nb, j0 = (t - ko * cx->nb) * CB;
    unravel(r->nk - 1, r->kshape, r->kin, r->kout, ko, ioff, ooff);
    *ioff += j0;
    *ooff += j0 * cx->kout_m;
    return cx->m - j0 < CB ? cx->m - j0 : CB;
}

static void load_centers(const red_ctx *cx, int64_t ooff, int64_t cbw, double *cc) {
    int64_t j;
    for (j = 0; j < cbw; j++) cc[j] = cx->r->center[ooff + j * cx->kout_m];
}

static void outer_tasks_chunk(void *ctx, int64_t t0, int64_t t1) {
    const red_ctx *cx = (const red_ctx *)ctx;
    argst st[CB];
    double cc[CB];
    int64_t t, ioff, ooff, cbw;
    for (t = t0; t < t1; t++) {
        cbw = outer_task(cx, t, &ioff, &ooff);
        if (cx->r->center) load_centers(cx, ooff, cbw, cc);
        st_init(cx, st, cbw);
        outer_rows(cx, cx->r->src + ioff * cx->isz, 0, cx->FR, cbw, st, cx->r->center ? cc : NULL);
        finalize_run(cx, st, cbw, ooff, cx->kout_m);
    }
}

static void outer_split_chunk(void *ctx, int64_t c0, int64_t c1) {
    const red_ctx *cx = (const red_ctx *)ctx;
    int64_t c;
    for (c = c0; c < c1; c++) {
        void *st = cx->partials + c * cx->t_cbw * cx->stsz;
        int64_t b = (c + 1) * cx->t_G < cx->FR ? (c + 1) * cx->t_G : cx->FR;
        st_init(cx, st, cx->t_cbw);
        outer_rows(cx, cx->t_in, c * cx->t_G, b, cx->t_cbw, st, cx->t_cc);
    }
}

static int run_outer(red_ctx *cx) {
    const tl_red_t *r = cx->r;
    int64_t work, ntasks;
    cx->m = r->kshape[r->nk - 1];
    cx->kout_m = r->kout[r->nk - 1];
    cx->Kouter = cx->K / cx->m;
    cx->nb = (cx->m + CB - 1) / CB;
    cx->rows = r->rshape[r->nr - 1];
    cx->rs = r->rin[r->nr - 1];
    cx->FR = cx->N;          /* every reduced index is one row of m columns */
    cx->q = 1;
    cx->W = cx->m;
    cx->periodic = r->nr == 1 && cx->rs == cx->m && cx->m < 64 && !cx->ak;
    if (cx->periodic) {
        cx->q = (64 + cx->m - 1) / cx->m;
        cx->W = cx->q * cx->m;
    }
    ntasks = cx->Kouter * cx->nb;
    work = cx->FR * (cx->m < CB ? cx->m : CB);
    if (ntasks < 4 * FEW_OUTPUTS && work >= 2 * GRAIN) {
        /* few column tasks: fixed chunks of rows, partial column states combined in order
           (enough chunks for the threads to balance) */
        int64_t t, c, ioff, ooff, nch, G;
        double cc[CB];
        G = GRAIN / (cx->m < CB ? cx->m : CB);
        if (G < 1) G = 1;
        G = (G + cx->q - 1) / cx->q * cx->q;
        nch = (cx->FR + G - 1) / G;
        cx->t_G = G;
        cx->partials = (char *)malloc(nch * CB * cx->stsz);
        if (!cx->partials) return -1;
        for (t = 0; t < ntasks; t++) {
            cx->t_cbw = outer_task(cx, t, &ioff, &ooff);
            cx->t_in = r->src + ioff * cx->isz;
            if (r->center) load_centers(cx, ooff, cx->t_cbw, cc);
            cx->t_cc = r->center ? cc : NULL;
            tl_parallel_for(0, nch, 1, outer_split_chunk, cx);
            for (c = 1; c < nch; c++)
                st_comb(cx, cx->partials, cx->partials + c * cx->t_cbw * cx->stsz, cx->t_cbw);
            finalize_run(cx, cx->partials, cx->t_cbw, ooff, cx->kout_m);
        }
        free(cx->partials);
        return 0;
    }
    tl_parallel_for(0, ntasks, work > 0 && GRAIN / work > 1 ? GRAIN / work : 1, outer_tasks_chunk, cx);
    return 0;
}

static void empty_chunk(void *ctx, int64_t o0, int64_t o1) {
    const red_ctx *cx = (const red_ctx *)ctx;
    const tl_red_t *r = cx->r;
    argst st;
    int64_t o, ioff, ooff;
    for (o = o0; o < o1; o++) {
        unravel(r->nk, r->kshape, r->kin, r->kout, o, &ioff, &ooff);
        st_init(cx, &st, 1);
        finalize_run(cx, &st, 1, ooff, 0);
    }
}

int tl_reduce(const tl_red_t *r) {
    red_ctx cx;
    int d, cti;
    memset(&cx, 0, sizeof cx);
    cx.r = r;
    cti = r->ct == TL_F32 ? 0 : r->ct == TL_F64 ? 1 : 2;
    if (r->op == TL_R_ARGMAX || r->op == TL_R_ARGMIN) {
        cx.ak = &ARG_KERNELS_TABLE[r->op == TL_R_ARGMIN][cti];
        cx.stsz = sizeof(argst);
    } else {
        cx.k = &KERNELS[r->op][cti];
        cx.stsz = 8;
    }
    cx.isz = ITEMSIZE[r->in_dtype];
    cx.csz = ITEMSIZE[r->ct];
    cx.osz = ITEMSIZE[r->out_dtype];
    cx.native = r->in_dtype == r->ct;
    cx.cast = tl_get_cast(r->in_dtype, r->ct);
    cx.K = 1;
    for (d = 0; d < r->nk; d++) cx.K *= r->kshape[d];
    cx.N = 1;
    for (d = 0; d < r->nr; d++) cx.N *= r->rshape[d];
    if (cx.K == 0) return 0;
    if (cx.N == 0) {
        tl_parallel_for(0, cx.K, GRAIN, empty_chunk, &cx);
        return 0;
    }
    if (r->mode == TL_RED_OUTER) return run_outer(&cx);
    return run_inner(&cx);
}

/* ------------------------------------------------------------------------------------------
   softmax / log_softmax: max, then exp(x - max) and its sum, then scale (or subtract the log
   of the sum). A row of all -inf, or one holding +inf, gives NaN as in PyTorch. */

typedef struct {
    int dtype, want_log;
    const char *x;
    char *y;
    int64_t outer, n, inner, nb;
} sm_ctx;

/* max of x[0..n) with L lanes (NaN wins) */
#define SM_MAX(L, U)                                                                         \
    {                                                                                        \
        float mx[L];                                                                         \
        for (k = 0; k < L; k++) mx[k] = -INFINITY;                                           \
        for (i = 0; i + L <= n; i += L) {                                                    \
            U for (k = 0; k < L; k++) {                                                      \
                float a = mx[k], v = x[i + k];                                               \
                mx[k] = ((v > a) | (v != v)) ? v : a;                                        \
            }                                                                                \
        }                                                                                    \
        for (k = 0; i < n; i++, k++) mx[k] = ((x[i] > mx[k]) | (x[i] != x[i])) ? x[i] : mx[k];   \
        for (w = L / 2; w >= 1; w /= 2)                                                      \
            for (k = 0; k < w; k++)                                                          \
                mx[k] = ((mx[k + w] > mx[k]) | (mx[k + w] != mx[k + w])) ? mx[k + w] : mx[k];   \
        mv = mx[0];                                                                          \
    }

/* sum of exp(x - mv) over one block with L lanes, storing the exps unless want_log */
#define SM_SUM(L, U)                                                                         \
    {                                                                                        \
        float acc[L];                                                                        \
        for (k = 0; k < L; k++) acc[k] = 0;                                                  \
        i = 0;                                                                               \
        if (want_log) {                                                                      \
            for (; i + L <= n1; i += L) {                                                    \
                U for (k = 0; k < L; k++) acc[k] += red_expf_nonpos(xb[i + k] - mv);         \
            }                                                                                \
        } else {                                                                             \
            for (; i + L <= n1; i += L) {                                                    \
                U for (k = 0; k < L; k++) {                                                  \
                    float e = red_expf_nonpos(xb[i + k] - mv);                               \
                    yb[i + k] = e;                                                           \
                    acc[k] += e;                                                             \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        for (k = 0; i < n1; i++, k++) {                                                      \
            float e = red_expf_nonpos(xb[i] - mv);                                           \
            if (!want_log) yb[i] = e;                                                        \
            acc[k] += e;                                                                     \
        }                                                                                    \
        for (w = L / 2; w >= 1; w /= 2)                                                      \
            for (k = 0; k < w; k++) acc[k] += acc[k + w];                                    \
        sum += acc[0];                                                                       \
    }

/* nrows consecutive rows of n elements (short rows use 8 lanes: a wide tree would cost more
   than the row) */
TL_DISPATCH static void softmax_rows_f32(const float *xs, float *ys, int64_t nrows, int64_t n,
                                         int want_log) {
    int64_t r, i, i0;
    int k, w;
    for (r = 0; r < nrows; r++) {
        const float *TL_RESTRICT x = xs + r * n;
        float *TL_RESTRICT y = ys + r * n;
        float mv, f;
        double sum = 0;
        if (n >= 2 * LANES)
            SM_MAX(LANES, NOTHING)
        else
            SM_MAX(8, KEEP_LOOP)
        for (i0 = 0; i0 < n; i0 += BLOCK) {
            int64_t n1 = n - i0 < BLOCK ? n - i0 : BLOCK;
            const float *TL_RESTRICT xb = x + i0;
            float *TL_RESTRICT yb = y + i0;
            if (n1 >= 2 * LANES)
                SM_SUM(LANES, NOTHING)
            else
                SM_SUM(8, KEEP_LOOP)
        }
        if (want_log) {
            f = (float)log(sum);
            for (i = 0; i < n; i++) y[i] = (x[i] - mv) - f;
        } else {
            f = (float)(1.0 / sum);
            for (i = 0; i < n; i++) y[i] *= f;
        }
    }
}

static void softmax_row_f64(const double *x, double *y, int64_t n, int want_log) {
    double mv = -INFINITY, sum = 0, ls, inv;
    int64_t i;
    for (i = 0; i < n; i++) mv = (x[i] > mv || x[i] != x[i]) ? x[i] : mv;
    for (i = 0; i < n; i++) {
        double e = exp(x[i] - mv);
        if (!want_log) y[i] = e;
        sum += e;
    }
    if (want_log) {
        ls = log(sum);
        for (i = 0; i < n; i++) y[i] = (x[i] - mv) - ls;
    } else {
        inv = 1.0 / sum;
        for (i = 0; i < n; i++) y[i] *= inv;
    }
}

/* Columns: rows x[i * inner + j] for j in [0, m), vectorized across j. */
TL_DISPATCH static void softmax_cols_f32(const float *x, float *y, int64_t n, int64_t inner,
                                         int64_t m, int want_log) {
    float mx[CB], f[CB];
    double sum[CB];
    int64_t i, j;
    for (j = 0; j < m; j++) {
        mx[j] = -INFINITY;
        sum[j] = 0;
    }
    for (i = 0; i < n; i++) {
        const float *row = x + i * inner;
        for (j = 0; j < m; j++) mx[j] = ((row[j] > mx[j]) | (row[j] != row[j])) ? row[j] : mx[j];
    }
    for (i = 0; i < n; i++) {
        const float *row = x + i * inner;
        float *out = y + i * inner;
        for (j = 0; j < m; j++) {
            float e = red_expf_nonpos(row[j] - mx[j]);
            if (!want_log) out[j] = e;
            sum[j] += e;
        }
    }
    for (j = 0; j < m; j++) f[j] = want_log ? (float)log(sum[j]) : (float)(1.0 / sum[j]);
    for (i = 0; i < n; i++) {
        const float *row = x + i * inner;
        float *out = y + i * inner;
        if (want_log)
            for (j = 0; j < m; j++) out[j] = (row[j] - mx[j]) - f[j];
        else
            for (j = 0; j < m; j++) out[j] *= f[j];
    }
}

static void softmax_cols_f64(const double *x, double *y, int64_t n, int64_t inner, int64_t m,
                             int want_log) {
    double mx[CB], sum[CB], f[CB];
    int64_t i, j;
    for (j = 0; j < m; j++) {
        mx[j] = -INFINITY;
        sum[j] = 0;
    }
    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++) {
            double v = x[i * inner + j];
            mx[j] = (v > mx[j] || v != v) ? v : mx[j];
        }
    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++) {
            double e = exp(x[i * inner + j] - mx[j]);
            if (!want_log) y[i * inner + j] = e;
            sum[j] += e;
        }
    for (j = 0; j < m; j++) f[j] = want_log ? log(sum[j]) : 1.0 / sum[j];
    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++) {
            if (want_log)
                y[i * inner + j] = (x[i * inner + j] - mx[j]) - f[j];
            else
                y[i * inner + j] *= f[j];
        }
}

static void softmax_rows_chunk(void *ctx, int64_t o0, int64_t o1) {
    const sm_ctx *c = (const sm_ctx *)ctx;
    int64_t o;
    if (c->dtype == TL_F32) {
        softmax_rows_f32((const float *)c->x + o0 * c->n, (float *)c->y + o0 * c->n, o1 - o0, c->n,
                         c->want_log);
        return;
    }
    for (o = o0; o < o1; o++)
        softmax_row_f64((const double *)c->x + o * c->n, (double *)c->y + o * c->n, c->n, c->want_log);
}

static void softmax_cols_chunk(void *ctx, int64_t t0, int64_t t1) {
    const sm_ctx *c = (const sm_ctx *)ctx;
    int64_t t;
    for (t = t0; t < t1; t++) {
        int64_t o = t / c->nb, j0 = (t - o * c->nb) * CB;
        int64_t m = c->inner - j0 < CB ? c->inner - j0 : CB;
        int64_t off = o * c->n * c->inner + j0;
        if (c->dtype == TL_F32)
            softmax_cols_f32((const float *)c->x + off, (float *)c->y + off, c->n, c->inner, m, c->want_log);
        else
            softmax_cols_f64((const double *)c->x + off, (double *)c->y + off, c->n, c->inner, m,
                             c->want_log);
    }
}

int tl_softmax(int dtype, int want_log, const char *x, char *y, int64_t outer, int64_t n, int64_t inner) {
    sm_ctx c;
    int64_t work;
    c.dtype = dtype;
    c.want_log = want_log;
    c.x = x;
    c.y = y;
    c.outer = outer;
    c.n = n;
    c.inner = inner;
    c.nb = (inner + CB - 1) / CB;
    if (outer == 0 || n == 0 || inner == 0) return 0;
    if (inner == 1) {
        tl_parallel_for(0, outer, GRAIN / n > 1 ? GRAIN / n : 1, softmax_rows_chunk, &c);
    } else {
        work = n * (inner < CB ? inner : CB);
        tl_parallel_for(0, outer * c.nb, GRAIN / work > 1 ? GRAIN / work : 1, softmax_cols_chunk, &c);
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------
   cumulative sum / product: a sequential scan per row (accumulated in double for floats, as
   PyTorch does on the CPU), or vectorized across columns when the dim is not innermost. */

typedef struct {
    int prod, dtype;
    const char *x;
    char *y;
    int64_t outer, n, inner, nb;
} cum_ctx;

#define CUM_KERNELS(NAME, T, AT)                                                             \
    static void cumrow_##NAME(const T *x, T *y, int64_t n, int prod) {                       \
        AT acc = prod ? 1 : 0;                                                               \
        int64_t i;                                                                           \
        if (prod)                                                                            \
            for (i = 0; i < n; i++) y[i] = (T)(acc = acc * x[i]);                            \
        else                                                                                 \
            for (i = 0; i < n; i++) y[i] = (T)(acc = acc + x[i]);                            \
    }                                                                                        \
    TL_DISPATCH static void cumcols_##NAME(const T *x, T *y, int64_t n, int64_t inner,       \
                                           int64_t m, int prod) {                            \
        AT acc[CB];                                                                          \
        int64_t i, j;                                                                        \
        for (j = 0; j < m; j++) acc[j] = prod ? 1 : 0;                                       \
        for (i = 0; i < n; i++) {                                                            \
            const T *row = x + i * inner;                                                    \
            T *out = y + i * inner;                                                          \
            if (prod)                                                                        \
                for (j = 0; j < m; j++) out[j] = (T)(acc[j] = acc[j] * row[j]);              \
            else                                                                             \
                for (j = 0; j < m; j++) out[j] = (T)(acc[j] = acc[j] + row[j]);              \
        }                                                                                    \
    }

CUM_KERNELS(f32, float, double)
CUM_KERNELS(f64, double, double)
CUM_KERNELS(i64, int64_t, int64_t)

static void cum_chunk(void *ctx, int64_t t0, int64_t t1) {
    const cum_ctx *c = (const cum_ctx *)ctx;
    int64_t t;
    for (t = t0; t < t1; t++) {
        int64_t o = t / c->nb, j0 = (t - o * c->nb) * CB;
        int64_t m = c->inner - j0 < CB ? c->inner - j0 : CB;
        int64_t off = o * c->n * c->inner + j0;
        if (c->inner == 1) {
            if (c->dtype == TL_F32)
                cumrow_f32((const float *)c->x + off, (float *)c->y + off, c->n, c->prod);
            else if (c->dtype == TL_F64)
                cumrow_f64((const double *)c->x + off, (double *)c->y + off, c->n, c->prod);
            else
                cumrow_i64((const int64_t *)c->x + off, (int64_t *)c->y + off, c->n, c->prod);
        } else if (c->dtype == TL_F32) {
            cumcols_f32((const float *)c->x + off, (float *)c->y + off, c->n, c->inner, m, c->prod);
        } else if (c->dtype == TL_F64) {
            cumcols_f64((const double *)c->x + off, (double *)c->y + off, c->n, c->inner, m, c->prod);
        } else {
            cumcols_i64((const int64_t *)c->x + off, (int64_t *)c->y + off, c->n, c->inner, m,
                        c->prod);
        }
    }
}

void tl_cumulative(int prod, int dtype, const char *x, char *y, int64_t outer, int64_t n,
                   int64_t inner) {
    cum_ctx c;
    int64_t work;
    c.prod = prod;
    c.dtype = dtype;
    c.x = x;
    c.y = y;
    c.outer = outer;
    c.n = n;
    c.inner = inner;
    c.nb = (inner + CB - 1) / CB;
    if (outer == 0 || n == 0 || inner == 0) return;
    work = n * (inner < CB ? inner : CB);
    tl_parallel_for(0, outer * c.nb, GRAIN / work > 1 ? GRAIN / work : 1, cum_chunk, &c);
}
