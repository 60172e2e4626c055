/* PLACEHOLDER until the vectorizable implementations land: libm wrappers with the final
   names, so the elementwise kernels build. */
#ifndef TL_CPU_MATH_H
#define TL_CPU_MATH_H
#include <math.h>
static inline float tl_expf(float x) { return expf(x); }
static inline float tl_exp2f(float x) { return exp2f(x); }
static inline float tl_expm1f(float x) { return expm1f(x); }
static inline float tl_logf(float x) { return logf(x); }
static inline float tl_log2f(float x) { return log2f(x); }
static inline float tl_log10f(float x) { return log10f(x); }
static inline float tl_log1pf(float x) { return log1pf(x); }
static inline float tl_sinf(float x) { return sinf(x); }
static inline float tl_cosf(float x) { return cosf(x); }
static inline float tl_tanf(float x) { return tanf(x); }
static inline float tl_tanhf(float x) { return tanhf(x); }
static inline float tl_sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }
static inline float tl_erff(float x) { return erff(x); }
static inline float tl_sinhf(float x) { return sinhf(x); }
static inline float tl_coshf(float x) { return coshf(x); }
static inline float tl_atanf(float x) { return atanf(x); }
static inline float tl_asinf(float x) { return asinf(x); }
static inline float tl_acosf(float x) { return acosf(x); }
static inline float tl_atan2f(float y, float x) { return atan2f(y, x); }
static inline float tl_geluf(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
static inline float tl_gelu_tanhf(float x) { return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x))); }
static inline float tl_siluf(float x) { return x / (1.0f + expf(-x)); }
static inline float tl_softplusf(float x, float beta, float threshold) { return x * beta > threshold ? x : log1pf(expf(x * beta)) / beta; }
static inline double tl_exp(double x) { return exp(x); }
static inline double tl_exp2(double x) { return exp2(x); }
static inline double tl_expm1(double x) { return expm1(x); }
static inline double tl_log(double x) { return log(x); }
static inline double tl_log2(double x) { return log2(x); }
static inline double tl_log10(double x) { return log10(x); }
static inline double tl_log1p(double x) { return log1p(x); }
static inline double tl_sin(double x) { return sin(x); }
static inline double tl_cos(double x) { return cos(x); }
static inline double tl_tan(double x) { return tan(x); }
static inline double tl_tanh(double x) { return tanh(x); }
static inline double tl_sigmoid(double x) { return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x)); }
static inline double tl_erf(double x) { return erf(x); }
static inline double tl_sinh(double x) { return sinh(x); }
static inline double tl_cosh(double x) { return cosh(x); }
static inline double tl_atan(double x) { return atan(x); }
static inline double tl_asin(double x) { return asin(x); }
static inline double tl_acos(double x) { return acos(x); }
static inline double tl_atan2(double y, double x) { return atan2(y, x); }
static inline double tl_gelu(double x) { return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440)); }
static inline double tl_gelu_tanh(double x) { return 0.5 * x * (1.0 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x))); }
static inline double tl_silu(double x) { return x * tl_sigmoid(x); }
static inline double tl_softplus(double x, double beta, double threshold) { return x * beta > threshold ? x : log1p(exp(x * beta)) / beta; }
#endif
