/* Test-only loops over the cpu_math.h functions, so the tests measure exactly what the
   kernels run: each loop is a TL_DISPATCH function (the clone picked for this CPU), and for
   float32 each clone is also compiled on its own (target avx512f / x86-64-v3, called avx2
   here / baseline) so the tests can check every code path the dispatcher could pick.
   setup.py compiles this file at -O3 even in development builds, since the point is to
   test the vectorized code. */
#include <string.h>
#include "cpu_math.h"
#include "cpu_math_test.h"
#include "cpu_simd.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define TL_MT_CLONES 1
#define TL_MT_AVX512F_ATTR __attribute__((target("avx512f")))
#if __GNUC__ >= 11
#define TL_MT_AVX2_ATTR __attribute__((target("arch=x86-64-v3")))
#else
#define TL_MT_AVX2_ATTR __attribute__((target("avx2")))
#endif
#else
#define TL_MT_CLONES 0
#define TL_MT_AVX512F_ATTR
#define TL_MT_AVX2_ATTR
#endif

typedef void (*tl_mt_f32)(const float *x, const float *y, float *o, int64_t n, float b, float t);
typedef void (*tl_mt_f64)(const double *x, const double *y, double *o, int64_t n, double b, double t);

/* One loop body per arity; the unused parameters keep a single signature. */
#define TL_MT_BODY1(FN) for (int64_t i = 0; i < n; i++) o[i] = FN(x[i]);
#define TL_MT_BODY2(FN) for (int64_t i = 0; i < n; i++) o[i] = FN(x[i], y[i]);
#define TL_MT_BODYS(FN) for (int64_t i = 0; i < n; i++) o[i] = FN(x[i], b, t);
#define TL_MT_BODYN(FN) FN(x, o, n);

#define TL_MT_LOOP(ATTR, NAME, T, BODY, FN)                                                  \
    static ATTR void NAME(const T *TL_RESTRICT x, const T *TL_RESTRICT y, T *TL_RESTRICT o,   \
                          int64_t n, T b, T t)                                              \
    {                                                                                       \
        (void)y; (void)b; (void)t;                                                          \
        BODY(FN)                                                                            \
    }

#if TL_MT_CLONES
#define TL_MT_F32(NAME, BODY, FN)                                                           \
    TL_MT_LOOP(TL_DISPATCH, mt_##NAME##_f, float, BODY, FN)                                 \
    TL_MT_LOOP(TL_MT_AVX512F_ATTR, mt_##NAME##_f_avx512f, float, BODY, FN)                  \
    TL_MT_LOOP(TL_MT_AVX2_ATTR, mt_##NAME##_f_avx2, float, BODY, FN)                        \
    TL_MT_LOOP(, mt_##NAME##_f_base, float, BODY, FN)
#define TL_MT_F32_ROW(NAME) {mt_##NAME##_f, mt_##NAME##_f_avx512f, mt_##NAME##_f_avx2, mt_##NAME##_f_base}
#else
#define TL_MT_F32(NAME, BODY, FN) TL_MT_LOOP(TL_DISPATCH, mt_##NAME##_f, float, BODY, FN)
#define TL_MT_F32_ROW(NAME) {mt_##NAME##_f, 0, 0, 0}
#endif

/* erf_n: tl_erff_n and tl_erf_n, the array versions contiguous tensors run. tanh_n:
   tl_tanhf_n, and tl_tanh per element (float64 has no array version). erfc_n:
   float64 tl_erfc_n likewise; its float32 side is tl_erfcf per element, which has no array
   version. */
TL_MATH_INLINE void tl_mt_erfcf_n(const float *x, float *o, int64_t n)
{
    for (int64_t i = 0; i < n; i++) o[i] = tl_erfcf(x[i]);
}

/* log_n and exp_n: float32 tl_logf_n and tl_expf_n (the array versions contiguous tensors
   run); their float64 side is tl_log and tl_exp per element. log_v8, exp_v8, erf_v8 and
   tanh_v8: the
   float32 array versions' AVX2 paths forced where the CPU has AVX2 and FMA, even on an
   AVX-512 CPU (where the array versions take the 16-lane paths); per element elsewhere and
   for the last n % 8. */
#define TL_MT_F64_PER_ELEMENT(NAME, FN)                                                     \
    TL_MATH_INLINE void NAME(const double *x, double *o, int64_t n)                         \
    {                                                                                       \
        for (int64_t i = 0; i < n; i++) o[i] = FN(x[i]);                                    \
    }
#ifdef TL__V16
#define TL_MT_V8_LEAD(V8)                                                                   \
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {                  \
        i = n & ~(int64_t)7;                                                                \
        V8(x, o, i);                                                                        \
    }
#else
#define TL_MT_V8_LEAD(V8)
#endif
#define TL_MT_F32_V8(NAME, V8, FN)                                                          \
    TL_MATH_INLINE void NAME(const float *x, float *o, int64_t n)                           \
    {                                                                                       \
        int64_t i = 0;                                                                      \
        TL_MT_V8_LEAD(V8)                                                                   \
        for (; i < n; i++) o[i] = FN(x[i]);                                                 \
    }
TL_MT_F64_PER_ELEMENT(tl_mt_log_n, tl_log)
TL_MT_F64_PER_ELEMENT(tl_mt_exp_n, tl_exp)
TL_MT_F64_PER_ELEMENT(tl_mt_tanh_n, tl_tanh)
TL_MT_F32_V8(tl_mt_logf_v8, tl__logf_v8, tl_logf)
TL_MT_F32_V8(tl_mt_expf_v8, tl__expf_v8, tl_expf)
TL_MT_F32_V8(tl_mt_erff_v8, tl__erff_v8, tl_erff)
TL_MT_F32_V8(tl_mt_tanhf_v8, tl__tanhf_v8, tl_tanhf)

#define TL_MT_FN(NAME, BODY, FN32, FN64)                                                    \
    TL_MT_F32(NAME, BODY, FN32)                                                             \
    TL_MT_LOOP(TL_DISPATCH, mt_##NAME##_d, double, BODY, FN64)

/* name, arity, float32 function, float64 function */
#define TL_MT_TABLE(X)                                       \
    X(exp, TL_MT_BODY1, tl_expf, tl_exp)                     \
    X(exp2, TL_MT_BODY1, tl_exp2f, tl_exp2)                  \
    X(expm1, TL_MT_BODY1, tl_expm1f, tl_expm1)               \
    X(log, TL_MT_BODY1, tl_logf, tl_log)                     \
    X(log2, TL_MT_BODY1, tl_log2f, tl_log2)                  \
    X(log10, TL_MT_BODY1, tl_log10f, tl_log10)               \
    X(log1p, TL_MT_BODY1, tl_log1pf, tl_log1p)               \
    X(sin, TL_MT_BODY1, tl_sinf, tl_sin)                     \
    X(cos, TL_MT_BODY1, tl_cosf, tl_cos)                     \
    X(tan, TL_MT_BODY1, tl_tanf, tl_tan)                     \
    X(tanh, TL_MT_BODY1, tl_tanhf, tl_tanh)                  \
    X(sigmoid, TL_MT_BODY1, tl_sigmoidf, tl_sigmoid)         \
    X(erf, TL_MT_BODY1, tl_erff, tl_erf)                     \
    X(erfc, TL_MT_BODY1, tl_erfcf, tl_erfc)                  \
    X(sinh, TL_MT_BODY1, tl_sinhf, tl_sinh)                  \
    X(cosh, TL_MT_BODY1, tl_coshf, tl_cosh)                  \
    X(atan, TL_MT_BODY1, tl_atanf, tl_atan)                  \
    X(asin, TL_MT_BODY1, tl_asinf, tl_asin)                  \
    X(acos, TL_MT_BODY1, tl_acosf, tl_acos)                  \
    X(gelu, TL_MT_BODY1, tl_geluf, tl_gelu)                  \
    X(gelu_tanh, TL_MT_BODY1, tl_gelu_tanhf, tl_gelu_tanh)   \
    X(silu, TL_MT_BODY1, tl_siluf, tl_silu)                  \
    X(atan2, TL_MT_BODY2, tl_atan2f, tl_atan2)               \
    X(pow, TL_MT_BODY2, tl_powf, tl_pow)                     \
    X(softplus, TL_MT_BODYS, tl_softplusf, tl_softplus)    \
    X(sin_n, TL_MT_BODYN, tl_sinf_n, tl_sin_n)            \
    X(cos_n, TL_MT_BODYN, tl_cosf_n, tl_cos_n)            \
    X(tan_n, TL_MT_BODYN, tl_tanf_n, tl_tan_n)            \
    X(erf_n, TL_MT_BODYN, tl_erff_n, tl_erf_n)            \
    X(erf_v8, TL_MT_BODYN, tl_mt_erff_v8, tl_erf_n)       \
    X(tanh_n, TL_MT_BODYN, tl_tanhf_n, tl_mt_tanh_n)      \
    X(tanh_v8, TL_MT_BODYN, tl_mt_tanhf_v8, tl_mt_tanh_n) \
    X(erfc_n, TL_MT_BODYN, tl_mt_erfcf_n, tl_erfc_n)       \
    X(log_n, TL_MT_BODYN, tl_logf_n, tl_mt_log_n)          \
    X(log_v8, TL_MT_BODYN, tl_mt_logf_v8, tl_mt_log_n)     \
    X(exp_n, TL_MT_BODYN, tl_expf_n, tl_mt_exp_n)          \
    X(exp_v8, TL_MT_BODYN, tl_mt_expf_v8, tl_mt_exp_n)

TL_MT_TABLE(TL_MT_FN)

typedef struct {
    const char *name;
    tl_mt_f32 f32[4];
    tl_mt_f64 f64;
} tl_mt_entry;

#define TL_MT_ENTRY(NAME, BODY, FN32, FN64) {#NAME, TL_MT_F32_ROW(NAME), mt_##NAME##_d},
static const tl_mt_entry tl_mt_entries[] = {TL_MT_TABLE(TL_MT_ENTRY)};
#define TL_MT_NAME(NAME, BODY, FN32, FN64) #NAME,
const char *const tl_math_test_names[] = {TL_MT_TABLE(TL_MT_NAME) 0};

static int tl_mt_isa_ok(int isa)
{
#if TL_MT_CLONES
    __builtin_cpu_init();
    if (isa == TL_MT_AVX512F) return __builtin_cpu_supports("avx512f");
    if (isa == TL_MT_AVX2) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return isa == TL_MT_DISPATCH || isa == TL_MT_BASELINE;
#else
    return isa == TL_MT_DISPATCH;
#endif
}

int tl_math_test_run(const char *name, int isa, int is_double, const void *x, const void *y,
                     void *out, int64_t n, double beta, double threshold)
{
    size_t k;
    for (k = 0; k < sizeof tl_mt_entries / sizeof tl_mt_entries[0]; k++)
        if (strcmp(tl_mt_entries[k].name, name) == 0) break;
    if (k == sizeof tl_mt_entries / sizeof tl_mt_entries[0]) return -1;
    if (isa < 0 || isa > 3 || !tl_mt_isa_ok(isa) || (is_double && isa != TL_MT_DISPATCH)) return -2;
    if (is_double) {
        tl_mt_entries[k].f64((const double *)x, (const double *)y, (double *)out, n, beta, threshold);
    } else {
        if (!tl_mt_entries[k].f32[isa]) return -2;
        tl_mt_entries[k].f32[isa]((const float *)x, (const float *)y, (float *)out, n, (float)beta,
                                  (float)threshold);
    }
    return 0;
}
