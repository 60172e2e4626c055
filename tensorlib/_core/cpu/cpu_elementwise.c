/* Elementwise inner loops and the driver that runs them (see cpu_elementwise.h).

   Every loop has fast paths for the three layouts that matter: all operands contiguous,
   and one input broadcast from a single value (stride 0: tensor-scalar ops), plus a general
   strided path. Loops are plain C that GCC vectorizes; TL_DISPATCH compiles each for
   AVX-512, AVX2 and baseline and picks one at load time. Integer arithmetic wraps (-fwrapv)
   and the cases C leaves undefined (x / -1 at the minimum, shifts past the width, division
   by zero -- the caller raises first) are spelled out. */
#include "cpu_elementwise.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "cpu_copy.h"
#include "cpu_math.h"
#include "cpu_pool.h"
#include "cpu_simd.h"

typedef uint8_t b8;
typedef uint8_t u8;
typedef int8_t i8;
typedef int16_t i16;
typedef int32_t i32;
typedef int64_t i64;
typedef float f32;
typedef double f64;

/* ------------------------------------------------------------------------------------------
   Loop templates. EXPR sees x (and y, z) of the input type T and writes type OT. PRE runs
   once per call (read parameters from `extra`); both pass through a second macro, so
   neither may hold a comma outside parentheses. The MATH_ forms, for expressions calling
   cpu_math.h (codegen picks them), run their contiguous loops in blocks that prefetch the
   input (cpu_simd.h says why), and their strided loops in blocks of 256 copied to and from
   the stack: GCC vectorizes the math only over contiguous data, and per element the
   branch-free functions ran 7-18x slower (float32 exp over a [::2] view: 11.6 ns per
   element, torch 0.6). The plain forms leave prefetching to the hardware and loop over
   strided operands directly. */

#define PLAIN_LOOP(I, N, IN, ...) for (I = 0; I < (N); I++) __VA_ARGS__
#define PLAIN_LOOP2(I, N, IN, IN2, ...) for (I = 0; I < (N); I++) __VA_ARGS__
#define TL_STRIDED_BLOCK 256

/* The strided loops: x (and y) read at byte strides s[1] (and s[2]), the result written at
   s[0]. PLAIN_: element by element; BUFFERED_: a block at a time through stack buffers.
   (Prefetching each next block's input, one line or element at a time, measured no
   different on the Intel VM: 1.16-1.17 ns per element for exp over a [::2] view.) */
#define PLAIN_STRIDED1(T, OT, EXPR)                                                           \
    for (i = 0; i < n; i++) {                                                                 \
        T x = *(const T *)(pa + i * s[1]);                                                    \
        *(OT *)(po + i * s[0]) = (OT)(EXPR);                                                  \
    }
#define PLAIN_STRIDED2(T, OT, EXPR)                                                           \
    for (i = 0; i < n; i++) {                                                                 \
        T x = *(const T *)(pa + i * s[1]), y = *(const T *)(pb + i * s[2]);                   \
        *(OT *)(po + i * s[0]) = (OT)(EXPR);                                                  \
    }
#define BUFFERED_STRIDED1(T, OT, EXPR)                                                        \
    for (int64_t b_ = 0; b_ < n; b_ += TL_STRIDED_BLOCK) {                                    \
        int64_t m_ = n - b_ < TL_STRIDED_BLOCK ? n - b_ : TL_STRIDED_BLOCK;                   \
        T xs_[TL_STRIDED_BLOCK];                                                              \
        OT os_[TL_STRIDED_BLOCK];                                                             \
        for (i = 0; i < m_; i++) xs_[i] = *(const T *)(pa + (b_ + i) * s[1]);                 \
        for (i = 0; i < m_; i++) { T x = xs_[i]; os_[i] = (OT)(EXPR); }                      \
        for (i = 0; i < m_; i++) *(OT *)(po + (b_ + i) * s[0]) = os_[i];                      \
    }
#define BUFFERED_STRIDED2(T, OT, EXPR)                                                        \
    for (int64_t b_ = 0; b_ < n; b_ += TL_STRIDED_BLOCK) {                                    \
        int64_t m_ = n - b_ < TL_STRIDED_BLOCK ? n - b_ : TL_STRIDED_BLOCK;                   \
        T xs_[TL_STRIDED_BLOCK], ys_[TL_STRIDED_BLOCK];                                       \
        OT os_[TL_STRIDED_BLOCK];                                                             \
        for (i = 0; i < m_; i++) xs_[i] = *(const T *)(pa + (b_ + i) * s[1]);                 \
        for (i = 0; i < m_; i++) ys_[i] = *(const T *)(pb + (b_ + i) * s[2]);                 \
        for (i = 0; i < m_; i++) { T x = xs_[i], y = ys_[i]; os_[i] = (OT)(EXPR); }          \
        for (i = 0; i < m_; i++) *(OT *)(po + (b_ + i) * s[0]) = os_[i];                      \
    }

#define BINARY_LOOP(NAME, T, OT, PRE, EXPR)                                                   \
    BINARY_LOOP_OF(NAME, T, OT, PRE, EXPR, PLAIN_LOOP, PLAIN_LOOP2, PLAIN_STRIDED2)
#define MATH_BINARY_LOOP(NAME, T, OT, PRE, EXPR)                                              \
    BINARY_LOOP_OF(NAME, T, OT, PRE, EXPR, TL_PREFETCHED_LOOP, TL_PREFETCHED_LOOP2,           \
                   BUFFERED_STRIDED2)
#define BINARY_LOOP_OF(NAME, T, OT, PRE, EXPR, LOOP, LOOP2, STRIDED)                          \
    TL_DISPATCH static void NAME(char **d, const int64_t *s, int64_t n, const void *extra) {  \
        char *po = d[0];                                                                      \
        const char *pa = d[1], *pb = d[2];                                                    \
        int64_t i;                                                                            \
        PRE;                                                                                  \
        (void)extra;                                                                          \
        if (s[0] == sizeof(OT) && s[1] == sizeof(T) && s[2] == sizeof(T)) {                   \
            OT *o = (OT *)po;                                                                 \
            const T *a = (const T *)pa, *b = (const T *)pb;                                   \
            LOOP2(i, n, a, b, { T x = a[i], y = b[i]; o[i] = (OT)(EXPR); })                   \
        } else if (s[0] == sizeof(OT) && s[1] == sizeof(T) && s[2] == 0) {                    \
            OT *o = (OT *)po;                                                                 \
            const T *a = (const T *)pa;                                                       \
            const T y = *(const T *)pb;                                                       \
            LOOP(i, n, a, { T x = a[i]; o[i] = (OT)(EXPR); })                                 \
        } else if (s[0] == sizeof(OT) && s[1] == 0 && s[2] == sizeof(T)) {                    \
            OT *o = (OT *)po;                                                                 \
            const T x = *(const T *)pa;                                                       \
            const T *b = (const T *)pb;                                                       \
            LOOP(i, n, b, { T y = b[i]; o[i] = (OT)(EXPR); })                                 \
        } else {                                                                              \
            STRIDED(T, OT, EXPR)                                                              \
        }                                                                                     \
    }

#define UNARY_LOOP(NAME, T, OT, PRE, EXPR)                                                    \
    UNARY_LOOP_OF(NAME, T, OT, PRE, EXPR, PLAIN_LOOP, PLAIN_STRIDED1)
#define MATH_UNARY_LOOP(NAME, T, OT, PRE, EXPR)                                               \
    UNARY_LOOP_OF(NAME, T, OT, PRE, EXPR, TL_PREFETCHED_LOOP, BUFFERED_STRIDED1)
#define UNARY_LOOP_OF(NAME, T, OT, PRE, EXPR, LOOP, STRIDED)                                  \
    TL_DISPATCH static void NAME(char **d, const int64_t *s, int64_t n, const void *extra) {  \
        char *po = d[0];                                                                      \
        const char *pa = d[1];                                                                \
        int64_t i;                                                                            \
        PRE;                                                                                  \
        (void)extra;                                                                          \
        if (s[0] == sizeof(OT) && s[1] == sizeof(T)) {                                        \
            OT *o = (OT *)po;                                                                 \
            const T *a = (const T *)pa;                                                       \
            LOOP(i, n, a, { T x = a[i]; o[i] = (OT)(EXPR); })                                 \
        } else {                                                                              \
            STRIDED(T, OT, EXPR)                                                              \
        }                                                                                     \
    }

/* three inputs of types TA, T, T (where's condition is bool) */
#define TERNARY_LOOP(NAME, TA, T, OT, PRE, EXPR)                                              \
    TL_DISPATCH static void NAME(char **d, const int64_t *s, int64_t n, const void *extra) {  \
        char *po = d[0];                                                                      \
        const char *pa = d[1], *pb = d[2], *pc = d[3];                                        \
        int64_t i;                                                                            \
        PRE;                                                                                  \
        (void)extra;                                                                          \
        if (s[0] == sizeof(OT) && s[1] == sizeof(TA) && s[2] == sizeof(T) && s[3] == sizeof(T)) { \
            OT *o = (OT *)po;                                                                 \
            const TA *a = (const TA *)pa;                                                     \
            const T *b = (const T *)pb, *c = (const T *)pc;                                   \
            for (i = 0; i < n; i++) { TA x = a[i]; T y = b[i], z = c[i]; o[i] = (OT)(EXPR); } \
        } else {                                                                              \
            for (i = 0; i < n; i++) {                                                         \
                TA x = *(const TA *)(pa + i * s[1]);                                          \
                T y = *(const T *)(pb + i * s[2]), z = *(const T *)(pc + i * s[3]);           \
                *(OT *)(po + i * s[0]) = (OT)(EXPR);                                          \
            }                                                                                 \
        }                                                                                     \
    }

#define NONE ((void)0)
#define TABLE(name, b, u8_, i8_, i16_, i32_, i64_, f32_, f64_)                                \
    const tl_loop_fn tl_ew_##name[TL_NUM_DT] = {b, u8_, i8_, i16_, i32_, i64_, NULL, NULL, f32_, f64_};
#define FLOAT_TABLE(name) TABLE(name, NULL, NULL, NULL, NULL, NULL, NULL, name##_f32, name##_f64)
#define ALL_TABLE(name, b) TABLE(name, b, name##_u8, name##_i8, name##_i16, name##_i32, name##_i64, name##_f32, name##_f64)

/* ------------------------------------------------------------------------------------------
   Helpers of the kernels' expressions (tensorlib/ops/decl/elementwise.py) */

/* add/sub: extra is alpha in the loop dtype, or NULL for 1 */
#define ALPHA(T) const T alpha = extra ? *(const T *)extra : (T)1
/* parameterised ops (leaky_relu, elu, round(decimals) ...): extra points to doubles */
#define P(k) (((const double *)extra)[k])

/* Integer division helpers: the caller has already raised for a zero divisor; y == -1 is
   spelled out because MIN / -1 overflows (undefined in C, a trap on x86). */
#define IDIV_TRUNC(T, x, y) ((y) == -1 ? (T)(0 - (x)) : (T)((x) / (y)))
#define IDIV_FLOOR(T, x, y) ((y) == -1 ? (T)(0 - (x)) : (T)((x) / (y) - (((x) % (y) != 0) && (((x) < 0) != ((y) < 0)))))
#define IMOD_PY(T, x, y) ((y) == -1 ? (T)0 : (T)((x) % (y) + ((((x) % (y)) != 0 && ((((x) % (y)) < 0) != ((y) < 0))) ? (y) : 0)))
#define IMOD_C(T, x, y) ((y) == -1 ? (T)0 : (T)((x) % (y)))
/* unsigned types never see y == -1 */
#define UDIV(x, y) ((x) / (y))
#define UMOD(x, y) ((x) % (y))

static inline double py_floordiv(double a, double b) {
    /* Python's float floor division: exact for the quotient's integer part */
    double mod, div, fl;
    if (b == 0) return a / b;
    mod = fmod(a, b);
    div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
    if (div != 0) {
        fl = floor(div);
        if (div - fl > 0.5) fl += 1.0;
    } else {
        fl = copysign(0.0, a / b);
    }
    return fl;
}
static inline float py_floordivf(float a, float b) {
    float mod, div, fl;
    if (b == 0) return a / b;
    mod = fmodf(a, b);
    div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0f;
    if (div != 0) {
        fl = floorf(div);
        if (div - fl > 0.5f) fl += 1.0f;
    } else {
        fl = copysignf(0.0f, a / b);
    }
    return fl;
}

static inline double py_mod(double a, double b) {
    double r = fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
static inline float py_modf(float a, float b) {
    float r = fmodf(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

/* integer power by squaring; a negative exponent truncates 1 / base^-exp toward zero, as
   PyTorch (only 1 and -1 give non-zero results; the caller rejects negative Python-number
   exponents) */
static inline int64_t ipow(int64_t base, int64_t exp) {
    uint64_t result = 1, b = (uint64_t)base;
    if (exp < 0) {
        if (base == 1) return 1;
        if (base == -1) return (exp & 1) ? -1 : 1;
        return 0;
    }
    while (exp) {
        if (exp & 1) result *= b;
        b *= b;
        exp >>= 1;
    }
    return (int64_t)result;
}
/* float32 pow: cpu_math.h's (vectorized, < 0.53 ulp, C99 special values); y = 2 stays the
   correctly rounded x * x, chosen by a bit select. Forced inline, as pow_: an out-of-line
   call per element would not vectorize (and take the baseline clone's libm fma). */
TL_MATH_INLINE float powf_(float x, float y) { return tl__self(y == 2.0f, x * x, tl_powf(x, y)); }
/* float64: ours, vectorized (cpu_math.h; x * x for y = 2 there too) */
TL_MATH_INLINE double pow_(double x, double y) { return tl_pow(x, y); }

/* maximum/minimum propagate NaN (PyTorch), unlike fmax/fmin */
#define FMAX(x, y) ((x) != (x) ? (x) : ((y) != (y) ? (y) : ((x) > (y) ? (x) : (y))))
#define FMIN(x, y) ((x) != (x) ? (x) : ((y) != (y) ? (y) : ((x) < (y) ? (x) : (y))))

/* shifts: a count outside [0, width) gives 0 (left) or the sign fill (right), as PyTorch */
#define SHL(T, x, y) ((y) < 0 || (y) >= (T)(8 * sizeof(T)) ? (T)0 : (T)((uint64_t)(x) << (y)))
#define SHR(T, x, y) ((y) < 0 || (y) >= (T)(8 * sizeof(T)) ? (T)((x) < 0 ? -1 : 0) : (T)((x) >> (y)))

/* The loops and tables generated from the declarations (build/generated/_ew_loops.h).
   sin/cos/tan, erf, erfc, exp, log and tanh get their own tables below: the generated ones
   are renamed here. */
#define tl_ew_sin tl_ew_sin_generic
#define tl_ew_cos tl_ew_cos_generic
#define tl_ew_tan tl_ew_tan_generic
#define tl_ew_erf tl_ew_erf_generic
#define tl_ew_erfc tl_ew_erfc_generic
#define tl_ew_exp tl_ew_exp_generic
#define tl_ew_log tl_ew_log_generic
#define tl_ew_tanh tl_ew_tanh_generic
#include "_ew_loops.h"
#undef tl_ew_tanh
#undef tl_ew_log
#undef tl_ew_exp
#undef tl_ew_sin
#undef tl_ew_cos
#undef tl_ew_tan
#undef tl_ew_erf
#undef tl_ew_erfc

/* Contiguous operands of these call cpu_math.h's array versions (FN), which return the same
   results as the per-element functions, faster: float32 and float64 sin/cos/tan (several
   times faster where no |x| in a block reaches 2^20 / 2^28), float64 erf and erfc (their
   table lookups vectorized, as permutes under AVX-512), float32 exp, log, erf and tanh
   (their table lookups as permutes under AVX-512 and AVX2). Strided operands are copied to
   and from the stack in blocks of TL_STRIDED_BLOCK, and each block runs INNER: the array
   version, or for exp, log, erf and tanh its paths without the prefetch, which a block
   already in the caches does not need. */
#define ARRAY_BLOCKS(NAME, SUF, T, FN, INNER)                                                 \
    TL_DISPATCH static void NAME##_##SUF##_blocks(char **d, const int64_t *s, int64_t n,      \
                                                  const void *extra) {                        \
        (void)extra;                                                                          \
        if (s[0] == sizeof(T) && s[1] == sizeof(T)) {                                         \
            FN((const T *)d[1], (T *)d[0], n);                                                \
            return;                                                                           \
        }                                                                                     \
        T in[TL_STRIDED_BLOCK], out[TL_STRIDED_BLOCK];                                        \
        for (int64_t b = 0; b < n; b += TL_STRIDED_BLOCK) {                                   \
            int64_t m = n - b < TL_STRIDED_BLOCK ? n - b : TL_STRIDED_BLOCK;                  \
            for (int64_t i = 0; i < m; i++) in[i] = *(const T *)(d[1] + (b + i) * s[1]);      \
            INNER(in, out, m);                                                                \
            for (int64_t i = 0; i < m; i++) *(T *)(d[0] + (b + i) * s[0]) = out[i];           \
        }                                                                                     \
    }
#define TRIG(NAME)                                                                            \
    ARRAY_BLOCKS(NAME, f32, f32, tl_##NAME##f_n, tl_##NAME##f_n)                              \
    ARRAY_BLOCKS(NAME, f64, f64, tl_##NAME##_n, tl_##NAME##_n)                                \
    TABLE(NAME, NULL, NULL, NULL, NULL, NULL, NULL, NAME##_f32_blocks, NAME##_f64_blocks)
TRIG(sin)
TRIG(cos)
TRIG(tan)
ARRAY_BLOCKS(erf, f32, f32, tl_erff_n, tl__erff_n)
ARRAY_BLOCKS(erf, f64, f64, tl_erf_n, tl_erf_n)
TABLE(erf, NULL, NULL, NULL, NULL, NULL, NULL, erf_f32_blocks, erf_f64_blocks)
ARRAY_BLOCKS(erfc, f64, f64, tl_erfc_n, tl_erfc_n)
TABLE(erfc, NULL, NULL, NULL, NULL, NULL, NULL, erfc_f32, erfc_f64_blocks)
ARRAY_BLOCKS(exp, f32, f32, tl_expf_n, tl__expf_n)
TABLE(exp, NULL, NULL, NULL, NULL, NULL, NULL, exp_f32_blocks, exp_f64)
ARRAY_BLOCKS(log, f32, f32, tl_logf_n, tl__logf_n)
TABLE(log, NULL, NULL, NULL, NULL, NULL, NULL, log_f32_blocks, log_f64)
ARRAY_BLOCKS(tanh, f32, f32, tl_tanhf_n, tl__tanhf_n)
TABLE(tanh, NULL, NULL, NULL, NULL, NULL, NULL, tanh_f32_blocks, tanh_f64)

/* ------------------------------------------------------------------------------------------
   Kernels too irregular for one expression per dtype class */

/* clamp with scalar bounds. extra: double lo, double hi, double has_lo, double has_hi for
   float loops; for integer loops the bounds are int64 at byte offset 32 (lo) and 40 (hi).
   A NaN bound makes the result NaN, as in PyTorch. */
typedef struct { double lo, hi, has_lo, has_hi; int64_t ilo, ihi; } clamp_params;
#define CP ((const clamp_params *)extra)
#define CLAMP_F(T)                                                                            \
    const T lo = (T)CP->lo; const T hi = (T)CP->hi;                                           \
    const int hl = CP->has_lo != 0; const int hh = CP->has_hi != 0
#define CLAMP_I(T)                                                                            \
    const int64_t lo = CP->ilo; const int64_t hi = CP->ihi;                                   \
    const int hl = CP->has_lo != 0; const int hh = CP->has_hi != 0
#define CLAMP_EXPR(x)                                                                         \
    ((hl && lo != lo) ? lo : (hh && (x > hi || hi != hi) ? hi                                 \
                              : ((hl && x < lo) ? (hh && lo > hi ? hi : lo) : x)))
UNARY_LOOP(clamp_scalar_f32, f32, f32, CLAMP_F(f32), CLAMP_EXPR(x))
UNARY_LOOP(clamp_scalar_f64, f64, f64, CLAMP_F(f64), CLAMP_EXPR(x))
UNARY_LOOP(clamp_scalar_u8, u8, u8, CLAMP_I(u8), CLAMP_EXPR((int64_t)x))
UNARY_LOOP(clamp_scalar_i8, i8, i8, CLAMP_I(i8), CLAMP_EXPR((int64_t)x))
UNARY_LOOP(clamp_scalar_i16, i16, i16, CLAMP_I(i16), CLAMP_EXPR((int64_t)x))
UNARY_LOOP(clamp_scalar_i32, i32, i32, CLAMP_I(i32), CLAMP_EXPR((int64_t)x))
UNARY_LOOP(clamp_scalar_i64, i64, i64, CLAMP_I(i64), CLAMP_EXPR(x))
TABLE(clamp_scalar, NULL, clamp_scalar_u8, clamp_scalar_i8, clamp_scalar_i16, clamp_scalar_i32,
      clamp_scalar_i64, clamp_scalar_f32, clamp_scalar_f64)

/* ------------------------------------------------------------------------------------------
   Ternary */
#define WHERE_ALL(T) TERNARY_LOOP(where_##T, b8, T, T, NONE, x ? y : z)
WHERE_ALL(b8) WHERE_ALL(u8) WHERE_ALL(i8) WHERE_ALL(i16) WHERE_ALL(i32) WHERE_ALL(i64)
WHERE_ALL(f32) WHERE_ALL(f64)
ALL_TABLE(where, where_b8)

/* clamp(x, lo, hi) with tensor bounds: x in the first slot, bounds in the others */
#define CLAMP3(T) TERNARY_LOOP(clamp_##T, T, T, T, NONE, (z < (y > x ? y : x) ? z : (y > x ? y : x)))
#define CLAMP3F(T) TERNARY_LOOP(clamp_##T, T, T, T, NONE,                                     \
    (x != x || y != y || z != z) ? (T)NAN : (z < (y > x ? y : x) ? z : (y > x ? y : x)))
/* (bool too: PyTorch's clamp of a bool tensor by bool tensors is a maximum then a minimum) */
CLAMP3(b8) CLAMP3(u8) CLAMP3(i8) CLAMP3(i16) CLAMP3(i32) CLAMP3(i64) CLAMP3F(f32) CLAMP3F(f64)
TABLE(clamp, clamp_b8, clamp_u8, clamp_i8, clamp_i16, clamp_i32, clamp_i64, clamp_f32, clamp_f64)

/* lerp: the two-sided formula PyTorch uses, exact at both ends */
#define LERP(T, ONE, HALF) TERNARY_LOOP(lerp_##T, T, T, T, NONE,                              \
    (z < HALF) ? x + z * (y - x) : y - (y - x) * (ONE - z))
LERP(f32, 1.0f, 0.5f) LERP(f64, 1.0, 0.5)
FLOAT_TABLE(lerp)

/* ------------------------------------------------------------------------------------------
   The driver */

#define BLOCK 256                       /* elements per on-the-fly conversion block */

typedef struct {
    const tl_ew_iter *it;
    int needs_cast;
    int64_t inner;                      /* size of the innermost dim */
} run_ctx;

static const int ITEMSIZE_[TL_NUM_DT] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};

/* One row of n elements starting at ptrs (strides of the innermost dim). */
static void run_row(const tl_ew_iter *it, int needs_cast, char **ptrs, int64_t n) {
    int64_t s[TL_MAX_OPS];
    int k, nops = it->nops;
    for (k = 0; k < nops; k++) s[k] = it->strides[k][it->ndim - 1];
    if (!needs_cast) {
        it->fn(ptrs, s, n, it->extra);
        return;
    }
    {
        /* convert operands whose storage dtype differs from the loop dtype, BLOCK at a time */
        double buf[TL_MAX_OPS][BLOCK];  /* 8-byte aligned, large enough for any dtype */
        char *bp[TL_MAX_OPS];
        int64_t bs[TL_MAX_OPS], off, m;
        for (off = 0; off < n; off += BLOCK) {
            m = n - off < BLOCK ? n - off : BLOCK;
            for (k = 0; k < nops; k++) {
                char *p = ptrs[k] + off * s[k];
                if (it->dtype[k] == it->loop_dtype[k]) {
                    bp[k] = p;
                    bs[k] = s[k];
                } else {
                    bp[k] = (char *)buf[k];
                    bs[k] = ITEMSIZE_[it->loop_dtype[k]];
                    if (k > 0) {
                        if (s[k] == 0) {       /* a broadcast value: convert it once */
                            tl_get_cast(it->dtype[k], it->loop_dtype[k])(bp[k], 0, p, 0, 1);
                            bs[k] = 0;
                        } else {
                            tl_get_cast(it->dtype[k], it->loop_dtype[k])(bp[k], bs[k], p, s[k], m);
                        }
                    }
                }
            }
            it->fn(bp, bs, m, it->extra);
            if (it->dtype[0] != it->loop_dtype[0])
                tl_get_cast(it->loop_dtype[0], it->dtype[0])(ptrs[0] + off * s[0], s[0], bp[0], bs[0], m);
        }
    }
}

/* Elements [b, e) in row-major order of the (coalesced) iteration space. */
static void run_range(void *vctx, int64_t b, int64_t e) {
    const run_ctx *ctx = (const run_ctx *)vctx;
    const tl_ew_iter *it = ctx->it;
    int nd = it->ndim, k, d;
    int64_t coord[TL_EW_MAX_DIMS], rem, idx = b, n;
    char *ptrs[TL_MAX_OPS];
    /* multi-index of b */
    rem = b;
    for (d = nd - 1; d >= 0; d--) {
        coord[d] = rem % it->shape[d];
        rem /= it->shape[d];
    }
    while (idx < e) {
        for (k = 0; k < it->nops; k++) {
            char *p = it->data[k];
            for (d = 0; d < nd; d++) p += coord[d] * it->strides[k][d];
            ptrs[k] = p;
        }
        n = it->shape[nd - 1] - coord[nd - 1];
        if (n > e - idx) n = e - idx;
        run_row(it, ctx->needs_cast, ptrs, n);
        idx += n;
        /* advance the multi-index by n (only ever finishes a row or the range) */
        coord[nd - 1] += n;
        for (d = nd - 1; d > 0 && coord[d] >= it->shape[d]; d--) {
            coord[d] = 0;
            coord[d - 1]++;
        }
    }
}

void tl_ew_run(const tl_ew_iter *it) {
    run_ctx ctx;
    int64_t total = 1;
    int k, d;
    ctx.it = it;
    ctx.needs_cast = 0;
    for (k = 0; k < it->nops; k++)
        if (it->dtype[k] != it->loop_dtype[k]) ctx.needs_cast = 1;
    if (it->ndim == 0) {
        /* a single element: treat as a 1-d row of length 1 */
        tl_ew_iter one = *it;
        one.ndim = 1;
        one.shape[0] = 1;
        for (k = 0; k < it->nops; k++) one.strides[k][0] = 0;
        ctx.it = &one;
        ctx.inner = 1;
        run_range(&ctx, 0, 1);
        return;
    }
    for (d = 0; d < it->ndim; d++) total *= it->shape[d];
    if (total == 0) return;
    ctx.inner = it->shape[it->ndim - 1];
    if (total < TL_EW_PARALLEL_MIN) {
        run_range(&ctx, 0, total);
        return;
    }
    tl_parallel_for(0, total, TL_EW_PARALLEL_MIN, run_range, &ctx);
}
