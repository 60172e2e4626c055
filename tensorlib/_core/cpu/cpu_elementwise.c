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
   once per call (read parameters from `extra`). */

#define BINARY_LOOP(NAME, T, OT, PRE, EXPR)                                                   \
    TL_DISPATCH static void NAME(char **d, const int64_t *s, int64_t n, const void *extra) {  \
        char *po = d[0];                                                                      \
        const char *pa = d[1], *pb = d[2];                                                    \
        int64_t i;                                                                            \
        PRE;                                                                                  \
        (void)extra;                                                                          \
        if (s[0] == sizeof(OT) && s[1] == sizeof(T) && s[2] == sizeof(T)) {                   \
            OT *o = (OT *)po;                                                                 \
            const T *a = (const T *)pa, *b = (const T *)pb;                                   \
            for (i = 0; i < n; i++) { T x = a[i], y = b[i]; o[i] = (OT)(EXPR); }              \
        } else if (s[0] == sizeof(OT) && s[1] == sizeof(T) && s[2] == 0) {                    \
            OT *o = (OT *)po;                                                                 \
            const T *a = (const T *)pa;                                                       \
            const T y = *(const T *)pb;                                                       \
            for (i = 0; i < n; i++) { T x = a[i]; o[i] = (OT)(EXPR); }                        \
        } else if (s[0] == sizeof(OT) && s[1] == 0 && s[2] == sizeof(T)) {                    \
            OT *o = (OT *)po;                                                                 \
            const T x = *(const T *)pa;                                                       \
            const T *b = (const T *)pb;                                                       \
            for (i = 0; i < n; i++) { T y = b[i]; o[i] = (OT)(EXPR); }                        \
        } else {                                                                              \
            for (i = 0; i < n; i++) {                                                         \
                T x = *(const T *)(pa + i * s[1]), y = *(const T *)(pb + i * s[2]);           \
                *(OT *)(po + i * s[0]) = (OT)(EXPR);                                          \
            }                                                                                 \
        }                                                                                     \
    }

#define UNARY_LOOP(NAME, T, OT, PRE, EXPR)                                                    \
    TL_DISPATCH static void NAME(char **d, const int64_t *s, int64_t n, const void *extra) {  \
        char *po = d[0];                                                                      \
        const char *pa = d[1];                                                                \
        int64_t i;                                                                            \
        PRE;                                                                                  \
        (void)extra;                                                                          \
        if (s[0] == sizeof(OT) && s[1] == sizeof(T)) {                                        \
            OT *o = (OT *)po;                                                                 \
            const T *a = (const T *)pa;                                                       \
            for (i = 0; i < n; i++) { T x = a[i]; o[i] = (OT)(EXPR); }                        \
        } else {                                                                              \
            for (i = 0; i < n; i++) {                                                         \
                T x = *(const T *)(pa + i * s[1]);                                            \
                *(OT *)(po + i * s[0]) = (OT)(EXPR);                                          \
            }                                                                                 \
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

/* Instantiate a loop for every integer type, or every float type, or all. */
#define INT_LOOPS(KIND, NAME, PRE, EXPR, OUTT)                                                \
    KIND(NAME##_u8, u8, OUTT(u8), PRE(u8), EXPR)                                               \
    KIND(NAME##_i8, i8, OUTT(i8), PRE(i8), EXPR)                                               \
    KIND(NAME##_i16, i16, OUTT(i16), PRE(i16), EXPR)                                           \
    KIND(NAME##_i32, i32, OUTT(i32), PRE(i32), EXPR)                                           \
    KIND(NAME##_i64, i64, OUTT(i64), PRE(i64), EXPR)
#define FLOAT_LOOPS(KIND, NAME, PRE, EXPR, OUTT)                                              \
    KIND(NAME##_f32, f32, OUTT(f32), PRE(f32), EXPR)                                           \
    KIND(NAME##_f64, f64, OUTT(f64), PRE(f64), EXPR)
#define SAME(T) T
#define BOOLOUT(T) b8
#define NOPRE(T) NONE
#define ALPHA(T) const T alpha = extra ? *(const T *)extra : (T)1

#define INT_TABLE(name, b) TABLE(name, b, name##_u8, name##_i8, name##_i16, name##_i32, name##_i64, NULL, NULL)
#define FLOAT_TABLE(name) TABLE(name, NULL, NULL, NULL, NULL, NULL, NULL, name##_f32, name##_f64)
#define ALL_TABLE(name, b) TABLE(name, b, name##_u8, name##_i8, name##_i16, name##_i32, name##_i64, name##_f32, name##_f64)

/* ------------------------------------------------------------------------------------------
   Binary arithmetic */

INT_LOOPS(BINARY_LOOP, add, ALPHA, x + alpha * y, SAME)
FLOAT_LOOPS(BINARY_LOOP, add, ALPHA, x + alpha * y, SAME)
BINARY_LOOP(add_b8, b8, b8, NONE, (x | y) != 0)
ALL_TABLE(add, add_b8)

INT_LOOPS(BINARY_LOOP, sub, ALPHA, x - alpha * y, SAME)
FLOAT_LOOPS(BINARY_LOOP, sub, ALPHA, x - alpha * y, SAME)
ALL_TABLE(sub, NULL)

INT_LOOPS(BINARY_LOOP, mul, NOPRE, x * y, SAME)
FLOAT_LOOPS(BINARY_LOOP, mul, NOPRE, x * y, SAME)
BINARY_LOOP(mul_b8, b8, b8, NONE, (x & y) != 0)
ALL_TABLE(mul, mul_b8)

FLOAT_LOOPS(BINARY_LOOP, div, NOPRE, x / y, SAME)
FLOAT_TABLE(div)

/* Integer division helpers: the caller has already raised for a zero divisor; y == -1 is
   spelled out because MIN / -1 overflows (undefined in C, a trap on x86). */
#define IDIV_TRUNC(T, x, y) ((y) == -1 ? (T)(0 - (x)) : (T)((x) / (y)))
#define IDIV_FLOOR(T, x, y) ((y) == -1 ? (T)(0 - (x)) : (T)((x) / (y) - (((x) % (y) != 0) && (((x) < 0) != ((y) < 0)))))
#define IMOD_PY(T, x, y) ((y) == -1 ? (T)0 : (T)((x) % (y) + ((((x) % (y)) != 0 && ((((x) % (y)) < 0) != ((y) < 0))) ? (y) : 0)))
#define IMOD_C(T, x, y) ((y) == -1 ? (T)0 : (T)((x) % (y)))
/* unsigned types never see y == -1 */
#define UDIV(x, y) ((x) / (y))
#define UMOD(x, y) ((x) % (y))

BINARY_LOOP(div_trunc_u8, u8, u8, NONE, UDIV(x, y))
BINARY_LOOP(div_trunc_i8, i8, i8, NONE, IDIV_TRUNC(i8, x, y))
BINARY_LOOP(div_trunc_i16, i16, i16, NONE, IDIV_TRUNC(i16, x, y))
BINARY_LOOP(div_trunc_i32, i32, i32, NONE, IDIV_TRUNC(i32, x, y))
BINARY_LOOP(div_trunc_i64, i64, i64, NONE, IDIV_TRUNC(i64, x, y))
FLOAT_LOOPS(BINARY_LOOP, div_trunc, NOPRE, trunc(x / y), SAME)
ALL_TABLE(div_trunc, NULL)

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
BINARY_LOOP(div_floor_u8, u8, u8, NONE, UDIV(x, y))
BINARY_LOOP(div_floor_i8, i8, i8, NONE, IDIV_FLOOR(i8, x, y))
BINARY_LOOP(div_floor_i16, i16, i16, NONE, IDIV_FLOOR(i16, x, y))
BINARY_LOOP(div_floor_i32, i32, i32, NONE, IDIV_FLOOR(i32, x, y))
BINARY_LOOP(div_floor_i64, i64, i64, NONE, IDIV_FLOOR(i64, x, y))
BINARY_LOOP(div_floor_f32, f32, f32, NONE, py_floordivf(x, y))
BINARY_LOOP(div_floor_f64, f64, f64, NONE, py_floordiv(x, y))
ALL_TABLE(div_floor, NULL)

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
BINARY_LOOP(remainder_u8, u8, u8, NONE, UMOD(x, y))
BINARY_LOOP(remainder_i8, i8, i8, NONE, IMOD_PY(i8, x, y))
BINARY_LOOP(remainder_i16, i16, i16, NONE, IMOD_PY(i16, x, y))
BINARY_LOOP(remainder_i32, i32, i32, NONE, IMOD_PY(i32, x, y))
BINARY_LOOP(remainder_i64, i64, i64, NONE, IMOD_PY(i64, x, y))
BINARY_LOOP(remainder_f32, f32, f32, NONE, py_modf(x, y))
BINARY_LOOP(remainder_f64, f64, f64, NONE, py_mod(x, y))
ALL_TABLE(remainder, NULL)

BINARY_LOOP(fmod_u8, u8, u8, NONE, UMOD(x, y))
BINARY_LOOP(fmod_i8, i8, i8, NONE, IMOD_C(i8, x, y))
BINARY_LOOP(fmod_i16, i16, i16, NONE, IMOD_C(i16, x, y))
BINARY_LOOP(fmod_i32, i32, i32, NONE, IMOD_C(i32, x, y))
BINARY_LOOP(fmod_i64, i64, i64, NONE, IMOD_C(i64, x, y))
BINARY_LOOP(fmod_f32, f32, f32, NONE, fmodf(x, y))
BINARY_LOOP(fmod_f64, f64, f64, NONE, fmod(x, y))
ALL_TABLE(fmod, NULL)

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
static inline float powf_(float x, float y) { return y == 2.0f ? x * x : powf(x, y); }
static inline double pow_(double x, double y) { return y == 2.0 ? x * x : pow(x, y); }
INT_LOOPS(BINARY_LOOP, pow, NOPRE, ipow((int64_t)x, (int64_t)y), SAME)
BINARY_LOOP(pow_f32, f32, f32, NONE, powf_(x, y))
BINARY_LOOP(pow_f64, f64, f64, NONE, pow_(x, y))
ALL_TABLE(pow, NULL)

BINARY_LOOP(atan2_f32, f32, f32, NONE, tl_atan2f(x, y))
BINARY_LOOP(atan2_f64, f64, f64, NONE, tl_atan2(x, y))
FLOAT_TABLE(atan2)

/* maximum/minimum propagate NaN (PyTorch), unlike fmax/fmin */
#define FMAX(x, y) ((x) != (x) ? (x) : ((y) != (y) ? (y) : ((x) > (y) ? (x) : (y))))
#define FMIN(x, y) ((x) != (x) ? (x) : ((y) != (y) ? (y) : ((x) < (y) ? (x) : (y))))
INT_LOOPS(BINARY_LOOP, maximum, NOPRE, (x > y ? x : y), SAME)
FLOAT_LOOPS(BINARY_LOOP, maximum, NOPRE, FMAX(x, y), SAME)
BINARY_LOOP(maximum_b8, b8, b8, NONE, (x | y) != 0)
ALL_TABLE(maximum, maximum_b8)
INT_LOOPS(BINARY_LOOP, minimum, NOPRE, (x < y ? x : y), SAME)
FLOAT_LOOPS(BINARY_LOOP, minimum, NOPRE, FMIN(x, y), SAME)
BINARY_LOOP(minimum_b8, b8, b8, NONE, (x & y) != 0)
ALL_TABLE(minimum, minimum_b8)

INT_LOOPS(BINARY_LOOP, bitwise_and, NOPRE, x & y, SAME)
BINARY_LOOP(bitwise_and_b8, b8, b8, NONE, x & y)
INT_TABLE(bitwise_and, bitwise_and_b8)
INT_LOOPS(BINARY_LOOP, bitwise_or, NOPRE, x | y, SAME)
BINARY_LOOP(bitwise_or_b8, b8, b8, NONE, x | y)
INT_TABLE(bitwise_or, bitwise_or_b8)
INT_LOOPS(BINARY_LOOP, bitwise_xor, NOPRE, x ^ y, SAME)
BINARY_LOOP(bitwise_xor_b8, b8, b8, NONE, x ^ y)
INT_TABLE(bitwise_xor, bitwise_xor_b8)

/* shifts: a count outside [0, width) gives 0 (left) or the sign fill (right), as PyTorch */
#define SHL(T, x, y) ((y) < 0 || (y) >= (T)(8 * sizeof(T)) ? (T)0 : (T)((uint64_t)(x) << (y)))
#define SHR(T, x, y) ((y) < 0 || (y) >= (T)(8 * sizeof(T)) ? (T)((x) < 0 ? -1 : 0) : (T)((x) >> (y)))
BINARY_LOOP(lshift_u8, u8, u8, NONE, ((int)y >= 8 ? 0 : (u8)(x << y)))
BINARY_LOOP(lshift_i8, i8, i8, NONE, SHL(i8, x, y))
BINARY_LOOP(lshift_i16, i16, i16, NONE, SHL(i16, x, y))
BINARY_LOOP(lshift_i32, i32, i32, NONE, SHL(i32, x, y))
BINARY_LOOP(lshift_i64, i64, i64, NONE, SHL(i64, x, y))
INT_TABLE(lshift, NULL)
BINARY_LOOP(rshift_u8, u8, u8, NONE, ((int)y >= 8 ? 0 : (u8)(x >> y)))
BINARY_LOOP(rshift_i8, i8, i8, NONE, SHR(i8, x, y))
BINARY_LOOP(rshift_i16, i16, i16, NONE, SHR(i16, x, y))
BINARY_LOOP(rshift_i32, i32, i32, NONE, SHR(i32, x, y))
BINARY_LOOP(rshift_i64, i64, i64, NONE, SHR(i64, x, y))
INT_TABLE(rshift, NULL)

/* ------------------------------------------------------------------------------------------
   Comparisons and logic (bool output) */
#define CMP(name, EXPR)                                                                       \
    INT_LOOPS(BINARY_LOOP, name, NOPRE, EXPR, BOOLOUT)                                         \
    FLOAT_LOOPS(BINARY_LOOP, name, NOPRE, EXPR, BOOLOUT)                                       \
    BINARY_LOOP(name##_b8, b8, b8, NONE, EXPR)                                                 \
    ALL_TABLE(name, name##_b8)
CMP(eq, x == y)
CMP(ne, x != y)
CMP(lt, x < y)
CMP(le, x <= y)
CMP(gt, x > y)
CMP(ge, x >= y)
CMP(logical_and, (x != 0) & (y != 0))
CMP(logical_or, (x != 0) | (y != 0))
CMP(logical_xor, (x != 0) ^ (y != 0))

/* ------------------------------------------------------------------------------------------
   Unary */
INT_LOOPS(UNARY_LOOP, neg, NOPRE, 0 - x, SAME)
FLOAT_LOOPS(UNARY_LOOP, neg, NOPRE, -x, SAME)
ALL_TABLE(neg, NULL)

UNARY_LOOP(abs_u8, u8, u8, NONE, x)
UNARY_LOOP(abs_i8, i8, i8, NONE, x < 0 ? 0 - x : x)
UNARY_LOOP(abs_i16, i16, i16, NONE, x < 0 ? 0 - x : x)
UNARY_LOOP(abs_i32, i32, i32, NONE, x < 0 ? 0 - x : x)
UNARY_LOOP(abs_i64, i64, i64, NONE, x < 0 ? 0 - x : x)
UNARY_LOOP(abs_f32, f32, f32, NONE, fabsf(x))
UNARY_LOOP(abs_f64, f64, f64, NONE, fabs(x))
ALL_TABLE(abs, NULL)        /* as PyTorch: "abs_cpu" not implemented for 'Bool' */

INT_LOOPS(UNARY_LOOP, sign, NOPRE, (x > 0) - (x < 0), SAME)
FLOAT_LOOPS(UNARY_LOOP, sign, NOPRE, (x > 0) - (x < 0), SAME)
UNARY_LOOP(sign_b8, b8, b8, NONE, x)
ALL_TABLE(sign, sign_b8)

FLOAT_LOOPS(UNARY_LOOP, reciprocal, NOPRE, 1 / x, SAME)
FLOAT_TABLE(reciprocal)

INT_LOOPS(UNARY_LOOP, square, NOPRE, x * x, SAME)
FLOAT_LOOPS(UNARY_LOOP, square, NOPRE, x * x, SAME)
UNARY_LOOP(square_b8, b8, b8, NONE, x)
ALL_TABLE(square, square_b8)

#define MATH1(name, F32EXPR, F64EXPR)                                                         \
    UNARY_LOOP(name##_f32, f32, f32, NONE, F32EXPR)                                            \
    UNARY_LOOP(name##_f64, f64, f64, NONE, F64EXPR)                                            \
    FLOAT_TABLE(name)
MATH1(exp, tl_expf(x), tl_exp(x))
MATH1(exp2, tl_exp2f(x), tl_exp2(x))
MATH1(expm1, tl_expm1f(x), tl_expm1(x))
MATH1(log, tl_logf(x), tl_log(x))
MATH1(log2, tl_log2f(x), tl_log2(x))
MATH1(log10, tl_log10f(x), tl_log10(x))
MATH1(log1p, tl_log1pf(x), tl_log1p(x))
MATH1(sqrt, sqrtf(x), sqrt(x))
MATH1(rsqrt, 1.0f / sqrtf(x), 1.0 / sqrt(x))
MATH1(sin, tl_sinf(x), tl_sin(x))
MATH1(cos, tl_cosf(x), tl_cos(x))
MATH1(tan, tl_tanf(x), tl_tan(x))
MATH1(asin, tl_asinf(x), tl_asin(x))
MATH1(acos, tl_acosf(x), tl_acos(x))
MATH1(atan, tl_atanf(x), tl_atan(x))
MATH1(sinh, tl_sinhf(x), tl_sinh(x))
MATH1(cosh, tl_coshf(x), tl_cosh(x))
MATH1(tanh, tl_tanhf(x), tl_tanh(x))
MATH1(sigmoid, tl_sigmoidf(x), tl_sigmoid(x))
MATH1(erf, tl_erff(x), tl_erf(x))
MATH1(silu, tl_siluf(x), tl_silu(x))
MATH1(gelu, tl_geluf(x), tl_gelu(x))
MATH1(gelu_tanh, tl_gelu_tanhf(x), tl_gelu_tanh(x))
MATH1(frac, x - truncf(x), x - trunc(x))

/* relu selects x unless x < 0, as PyTorch: NaN and -0.0 pass through */
INT_LOOPS(UNARY_LOOP, relu, NOPRE, x > 0 ? x : 0, SAME)
FLOAT_LOOPS(UNARY_LOOP, relu, NOPRE, x < 0 ? 0 : x, SAME)
const tl_loop_fn tl_ew_relu[TL_NUM_DT] = {NULL, relu_u8, relu_i8, relu_i16, relu_i32, relu_i64,
                                          NULL, NULL, relu_f32, relu_f64};

/* rounding: integers are already integral */
#define IDENT_INT_LOOPS(name)                                                                 \
    UNARY_LOOP(name##_u8, u8, u8, NONE, x)                                                     \
    UNARY_LOOP(name##_i8, i8, i8, NONE, x)                                                     \
    UNARY_LOOP(name##_i16, i16, i16, NONE, x)                                                  \
    UNARY_LOOP(name##_i32, i32, i32, NONE, x)                                                  \
    UNARY_LOOP(name##_i64, i64, i64, NONE, x)
IDENT_INT_LOOPS(floor)
UNARY_LOOP(floor_f32, f32, f32, NONE, floorf(x))
UNARY_LOOP(floor_f64, f64, f64, NONE, floor(x))
ALL_TABLE(floor, NULL)
IDENT_INT_LOOPS(ceil)
UNARY_LOOP(ceil_f32, f32, f32, NONE, ceilf(x))
UNARY_LOOP(ceil_f64, f64, f64, NONE, ceil(x))
ALL_TABLE(ceil, NULL)
IDENT_INT_LOOPS(round)
UNARY_LOOP(round_f32, f32, f32, NONE, nearbyintf(x))
UNARY_LOOP(round_f64, f64, f64, NONE, nearbyint(x))
ALL_TABLE(round, NULL)
IDENT_INT_LOOPS(trunc)
UNARY_LOOP(trunc_f32, f32, f32, NONE, truncf(x))
UNARY_LOOP(trunc_f64, f64, f64, NONE, trunc(x))
ALL_TABLE(trunc, NULL)

INT_LOOPS(UNARY_LOOP, bitwise_not, NOPRE, ~x, SAME)
UNARY_LOOP(bitwise_not_b8, b8, b8, NONE, !x)
INT_TABLE(bitwise_not, bitwise_not_b8)

INT_LOOPS(UNARY_LOOP, logical_not, NOPRE, x == 0, BOOLOUT)
FLOAT_LOOPS(UNARY_LOOP, logical_not, NOPRE, x == 0, BOOLOUT)
UNARY_LOOP(logical_not_b8, b8, b8, NONE, x == 0)
ALL_TABLE(logical_not, logical_not_b8)

#define BOOL_FLOAT_PRED(name, F32EXPR, F64EXPR, INTVAL)                                       \
    INT_LOOPS(UNARY_LOOP, name, NOPRE, INTVAL, BOOLOUT)                                        \
    UNARY_LOOP(name##_b8, b8, b8, NONE, INTVAL)                                                \
    UNARY_LOOP(name##_f32, f32, b8, NONE, F32EXPR)                                             \
    UNARY_LOOP(name##_f64, f64, b8, NONE, F64EXPR)                                             \
    ALL_TABLE(name, name##_b8)
BOOL_FLOAT_PRED(isnan, x != x, x != x, 0)
BOOL_FLOAT_PRED(isinf, fabsf(x) == INFINITY, fabs(x) == INFINITY, 0)
BOOL_FLOAT_PRED(isfinite, fabsf(x) < INFINITY, fabs(x) < INFINITY, 1)
BOOL_FLOAT_PRED(signbit, signbit(x) != 0, signbit(x) != 0, x < 0)

/* parameterised activations; extra points to doubles */
#define P(k) (((const double *)extra)[k])
UNARY_LOOP(leaky_relu_f32, f32, f32, const f32 slope = (f32)P(0), x > 0 ? x : x * slope)
UNARY_LOOP(leaky_relu_f64, f64, f64, const f64 slope = P(0), x > 0 ? x : x * slope)
FLOAT_TABLE(leaky_relu)
UNARY_LOOP(elu_f32, f32, f32, const f32 al = (f32)P(0); const f32 sc = (f32)P(1); const f32 is = (f32)P(2),
           x > 0 ? x * sc : al * sc * tl_expm1f(x * is))
UNARY_LOOP(elu_f64, f64, f64, const f64 al = P(0); const f64 sc = P(1); const f64 is = P(2),
           x > 0 ? x * sc : al * sc * tl_expm1(x * is))
FLOAT_TABLE(elu)
UNARY_LOOP(softplus_f32, f32, f32, const f32 beta = (f32)P(0); const f32 th = (f32)P(1), tl_softplusf(x, beta, th))
UNARY_LOOP(softplus_f64, f64, f64, const f64 beta = P(0); const f64 th = P(1), tl_softplus(x, beta, th))
FLOAT_TABLE(softplus)
UNARY_LOOP(hardtanh_f32, f32, f32, const f32 lo = (f32)P(0); const f32 hi = (f32)P(1), x < lo ? lo : (x > hi ? hi : x))
UNARY_LOOP(hardtanh_f64, f64, f64, const f64 lo = P(0); const f64 hi = P(1), x < lo ? lo : (x > hi ? hi : x))
FLOAT_TABLE(hardtanh)
/* round(x, decimals): scale, round half to even, unscale (negative decimals scale down) */
UNARY_LOOP(round_decimals_f32, f32, f32, const f32 ten = (f32)P(0); const int neg = P(1) != 0,
           neg ? nearbyintf(x / ten) * ten : nearbyintf(x * ten) / ten)
UNARY_LOOP(round_decimals_f64, f64, f64, const f64 ten = P(0); const int neg = P(1) != 0,
           neg ? nearbyint(x / ten) * ten : nearbyint(x * ten) / ten)
FLOAT_TABLE(round_decimals)
UNARY_LOOP(nan_to_num_f32, f32, f32, const f32 nv = (f32)P(0); const f32 pv = (f32)P(1); const f32 mv = (f32)P(2),
           x != x ? nv : (x == INFINITY ? pv : (x == -INFINITY ? mv : x)))
UNARY_LOOP(nan_to_num_f64, f64, f64, const f64 nv = P(0); const f64 pv = P(1); const f64 mv = P(2),
           x != x ? nv : (x == INFINITY ? pv : (x == -INFINITY ? mv : x)))
FLOAT_TABLE(nan_to_num)

/* clamp with scalar bounds. extra: double lo, double hi, double has_lo, double has_hi for
   float loops; for integer loops the bounds are int64 at byte offset 32 (lo) and 40 (hi).
   A NaN bound makes the result NaN, as in PyTorch. */
typedef struct { double lo, hi, has_lo, has_hi; int64_t ilo, ihi; } clamp_params;
#define CP ((const clamp_params *)extra)
#define CLAMP_F(T)                                                                            \
    const T lo = (T)CP->lo; const T hi = (T)CP->hi;                                           \
    const int hl = CP->has_lo != 0, hh = CP->has_hi != 0
#define CLAMP_I(T)                                                                            \
    const int64_t lo = CP->ilo; const int64_t hi = CP->ihi;                                   \
    const int hl = CP->has_lo != 0, hh = CP->has_hi != 0
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
CLAMP3(u8) CLAMP3(i8) CLAMP3(i16) CLAMP3(i32) CLAMP3(i64) CLAMP3F(f32) CLAMP3F(f64)
TABLE(clamp, NULL, clamp_u8, clamp_i8, clamp_i16, clamp_i32, clamp_i64, clamp_f32, clamp_f64)

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
