// tl_ew_device.h: what the elementwise expressions of tensorlib/ops/decl/elementwise.py call,
// on the device. ew_ops.cu (generated from those declarations) includes it, so one C
// expression per op and dtype class serves the CPU loops and the CUDA kernels.
//
// Each helper has the meaning of its CPU twin (tensorlib/_core/cpu/cpu_elementwise.c and
// cpu_math.h); the float32 transcendental functions are CUDA's own (within a few ulp, not the
// CPU's hand-written kernels), so float32 results agree with the CPU within tolerance, not
// bit for bit. Integer division by zero gives -1 (quotient) and the dividend (remainder):
// the GPU does not trap and PyTorch's CUDA kernels do not check.
#ifndef TL_EW_DEVICE_H
#define TL_EW_DEVICE_H
#include "tl_cuda.h"

typedef unsigned char b8;
typedef unsigned char u8;
typedef signed char i8;
typedef short i16;
typedef int i32;
typedef long long i64;
typedef float f32;
typedef double f64;

#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif

#define NONE ((void)0)
// add/sub: extra is alpha in the loop dtype, or absent for 1
#define ALPHA(T) const T alpha = extra ? *(const T *)extra : (T)1
// parameterised ops: extra holds doubles
#define P(k) (((const double *)extra)[k])

#define IDIV_TRUNC(T, x, y) ((y) == 0 ? (T)-1 : (y) == -1 ? (T)(0 - (x)) : (T)((x) / (y)))
#define IDIV_FLOOR(T, x, y)                                                                \
    ((y) == 0 ? (T)-1 : (y) == -1 ? (T)(0 - (x))                                           \
     : (T)((x) / (y) - (((x) % (y) != 0) && (((x) < 0) != ((y) < 0)))))
#define IMOD_PY(T, x, y)                                                                   \
    ((y) == 0 ? (T)(x) : (y) == -1 ? (T)0                                                  \
     : (T)((x) % (y) + ((((x) % (y)) != 0 && ((((x) % (y)) < 0) != ((y) < 0))) ? (y) : 0)))
#define IMOD_C(T, x, y) ((y) == 0 ? (T)(x) : (y) == -1 ? (T)0 : (T)((x) % (y)))
#define UDIV(x, y) ((y) == 0 ? (x) - (x) - 1 : (x) / (y))
#define UMOD(x, y) ((y) == 0 ? (x) : (x) % (y))
#define FMAX(x, y) ((x) != (x) ? (x) : ((y) != (y) ? (y) : ((x) > (y) ? (x) : (y))))
#define FMIN(x, y) ((x) != (x) ? (x) : ((y) != (y) ? (y) : ((x) < (y) ? (x) : (y))))
#define SHL(T, x, y) ((y) < 0 || (y) >= (T)(8 * sizeof(T)) ? (T)0 : (T)((unsigned long long)(x) << (y)))
#define SHR(T, x, y) ((y) < 0 || (y) >= (T)(8 * sizeof(T)) ? (T)((x) < 0 ? -1 : 0) : (T)((x) >> (y)))

__device__ __forceinline__ double py_floordiv(double a, double b) {
    if (b == 0) return a / b;
    double mod = fmod(a, b), div = (a - mod) / b, fl;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
    if (div != 0) {
        fl = floor(div);
        if (div - fl > 0.5) fl += 1.0;
    } else {
        fl = copysign(0.0, a / b);
    }
    return fl;
}
__device__ __forceinline__ float py_floordivf(float a, float b) {
    if (b == 0) return a / b;
    float mod = fmodf(a, b), div = (a - mod) / b, fl;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0f;
    if (div != 0) {
        fl = floorf(div);
        if (div - fl > 0.5f) fl += 1.0f;
    } else {
        fl = copysignf(0.0f, a / b);
    }
    return fl;
}
__device__ __forceinline__ double py_mod(double a, double b) {
    double r = fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
__device__ __forceinline__ float py_modf(float a, float b) {
    float r = fmodf(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}
__device__ __forceinline__ long long ipow(long long base, long long e) {
    unsigned long long result = 1, b = (unsigned long long)base;
    if (e < 0) return base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;
    while (e) {
        if (e & 1) result *= b;
        b *= b;
        e >>= 1;
    }
    return (long long)result;
}
// exponents 0, 1 and 2 exactly (the CPU's libm is exact there; CUDA's pow is within 2 ulp)
__device__ __forceinline__ float powf_(float x, float y) {
    return y == 2.0f ? x * x : y == 1.0f ? x : y == 0.0f ? 1.0f : powf(x, y);
}
__device__ __forceinline__ double pow_(double x, double y) {
    return y == 2.0 ? x * x : y == 1.0 ? x : y == 0.0 ? 1.0 : pow(x, y);
}

// float32 (CUDA's functions) and float64; tl_exp/tl_log/tl_tanh(double) are in tl_cuda.h
#define TL_F1(NAME, FN) __device__ __forceinline__ float NAME##f(float x) { return FN##f(x); }
#define TL_D1(NAME, FN) __device__ __forceinline__ double NAME(double x) { return FN(x); }
TL_F1(tl_exp, exp) TL_F1(tl_exp2, exp2) TL_F1(tl_expm1, expm1) TL_F1(tl_log, log)
TL_F1(tl_log2, log2) TL_F1(tl_log10, log10) TL_F1(tl_log1p, log1p) TL_F1(tl_sin, sin)
TL_F1(tl_cos, cos) TL_F1(tl_tan, tan) TL_F1(tl_tanh, tanh) TL_F1(tl_erf, erf)
TL_F1(tl_erfc, erfc) TL_F1(tl_sinh, sinh) TL_F1(tl_cosh, cosh) TL_F1(tl_atan, atan)
TL_F1(tl_asin, asin) TL_F1(tl_acos, acos)
TL_D1(tl_exp2, exp2) TL_D1(tl_expm1, expm1) TL_D1(tl_log2, log2) TL_D1(tl_log10, log10)
TL_D1(tl_log1p, log1p) TL_D1(tl_sin, sin) TL_D1(tl_cos, cos) TL_D1(tl_tan, tan)
TL_D1(tl_erf, erf) TL_D1(tl_erfc, erfc) TL_D1(tl_sinh, sinh) TL_D1(tl_cosh, cosh)
TL_D1(tl_atan, atan) TL_D1(tl_asin, asin) TL_D1(tl_acos, acos)
__device__ __forceinline__ float tl_atan2f(float y, float x) { return atan2f(y, x); }
__device__ __forceinline__ double tl_atan2(double y, double x) { return atan2(y, x); }

// the ones libm lacks, in the CPU's stable forms
__device__ __forceinline__ float tl_sigmoidf(float x) {
    float e = expf(-fabsf(x));
    return (x >= 0.0f ? 1.0f : e) / (1.0f + e);
}
__device__ __forceinline__ double tl_sigmoid(double x) {
    double e = exp(-fabs(x));
    return (x >= 0.0 ? 1.0 : e) / (1.0 + e);
}
__device__ __forceinline__ float tl_siluf(float x) {
    float e = expf(-fabsf(x));
    return (x >= 0.0f ? x : x * e) / (1.0f + e);
}
__device__ __forceinline__ double tl_silu(double x) {
    double e = exp(-fabs(x));
    return (x >= 0.0 ? x : x * e) / (1.0 + e);
}
// float32 gelu in double: erfc magnifies the rounding of its float argument by 2 z^2 (9 ulp
// at x = -3), where the CPU's gelu is within 0.53 ulp
__device__ __forceinline__ float tl_geluf(float x) {
    const double xd = x;
    return (float)(0.5 * xd * erfc(xd * -0.70710678118654752440));
}
__device__ __forceinline__ double tl_gelu(double x) {
    return 0.5 * x * erfc(x * -0.70710678118654752440);
}
__device__ __forceinline__ float tl_gelu_tanhf(float x) {
    float v = x * (1.5957691216057308f + 0.071354816272919f * (x * x));
    float e = expf(-fabsf(v));
    return (v >= 0.0f ? x : x * e) / (1.0f + e);
}
__device__ __forceinline__ double tl_gelu_tanh(double x) {
    double v = x * (1.5957691216057308 + 0.071354816272919 * (x * x));
    double e = exp(-fabs(v));
    return (v >= 0.0 ? x : x * e) / (1.0 + e);
}
__device__ __forceinline__ float tl_softplusf(float x, float beta, float threshold) {
    float bx = x * beta;
    return bx > threshold ? x : ((bx > 0.0f ? bx : 0.0f) + log1pf(expf(-fabsf(bx)))) / beta;
}
__device__ __forceinline__ double tl_softplus(double x, double beta, double threshold) {
    double bx = x * beta;
    return bx > threshold ? x : ((bx > 0.0 ? bx : 0.0) + log1p(exp(-fabs(bx)))) / beta;
}

// clamp with scalar bounds (see cpu_elementwise.c): doubles lo, hi, has_lo, has_hi for float
// loops, int64 bounds after them for integer loops
struct clamp_params { double lo, hi, has_lo, has_hi; long long ilo, ihi; };
#define CP ((const clamp_params *)extra)
#define CLAMP_F(T)                                                                         \
    const T lo = (T)CP->lo; const T hi = (T)CP->hi;                                        \
    const int hl = CP->has_lo != 0, hh = CP->has_hi != 0
#define CLAMP_I(T)                                                                         \
    const long long lo = CP->ilo; const long long hi = CP->ihi;                            \
    const int hl = CP->has_lo != 0, hh = CP->has_hi != 0
#define CLAMP_EXPR(x)                                                                      \
    ((hl && lo != lo) ? lo : (hh && (x > hi || hi != hi) ? hi                              \
                              : ((hl && x < lo) ? (hh && lo > hi ? hi : lo) : x)))

// ---- the launch descriptor and the per-element addressing ----------------------------------
#define TL_EW_MAXD 8
// A strided elementwise launch with up to 4 operands (0 = output). Strides in elements;
// an operand whose bit is set in scalar_mask is a host scalar whose bits are in sval[k] (a
// Python number, or a 0-d CPU tensor joining a device op). extra: the op's parameters.
struct tl_ew4 {
    int ndim, nops, scalar_mask, has_extra;
    int dtype[4];
    long long n;
    long long shape[TL_EW_MAXD];
    long long stride[4][TL_EW_MAXD];
    unsigned long long sval[4];
    double extra[8];
};

__device__ __forceinline__ void tl_ew4_offsets(long long i, const tl_ew4& d, long long off[4]) {
    if (d.ndim == 1) {              // contiguous or evenly strided operands: no division
#pragma unroll
        for (int j = 0; j < 4; ++j) off[j] = i * d.stride[j][0];
        return;
    }
    off[0] = off[1] = off[2] = off[3] = 0;
    for (int k = d.ndim - 1; k >= 0; --k) {
        long long s = d.shape[k], q = i / s, idx = i - q * s;
        i = q;
#pragma unroll
        for (int j = 0; j < 4; ++j) off[j] += idx * d.stride[j][k];
    }
}

// Whether a launch can take a kernel's fast path: one dim, and every operand a host scalar
// or contiguous in the dtype the kernel reads it as (code c[k]; -1: no such operand).
__device__ __forceinline__ bool tl_ew4_fast(const tl_ew4& d, int c0, int c1, int c2, int c3) {
    if (d.ndim != 1) return false;
    const int c[4] = {c0, c1, c2, c3};
    for (int k = 0; k < d.nops; ++k) {
        if (k > 0 && ((d.scalar_mask >> k) & 1)) continue;
        if (d.stride[k][0] != 1 || d.dtype[k] != c[k]) return false;
    }
    return true;
}

// 16 bytes of T as one struct, so a load or store of it is one 16-byte access
template <class T> struct __align__(16) tl_v16 { T v[16 / sizeof(T)]; };

// The fast path's vector loop: how many elements of `size` bytes come before the first
// 16-byte boundary, when the output and every operand in memory (not a host scalar) sit at
// the same offset from one (all aligned: 0; all views from element 1 of aligned buffers: 3
// floats), else -1 (no vector loop).
__device__ __forceinline__ long long tl_ew4_head16(const tl_ew4& d, const void* o,
                                                   const void* a, const void* b, const void* c,
                                                   int size) {
    const unsigned long long m = (unsigned long long)o & 15;
    const void* p[3] = {a, b, c};
    for (int k = 1; k < d.nops && k < 4; ++k)
        if (!((d.scalar_mask >> k) & 1) && ((unsigned long long)p[k - 1] & 15) != m) return -1;
    if (m % (unsigned long long)size) return -1;
    return (long long)(((16 - m) & 15) / (unsigned long long)size);
}

// dtype codes as tensorlib numbers them (tensorlib/_core/dtype.pyx): the descriptor's
enum {
    TLC_BOOL = 0, TLC_U8 = 1, TLC_I8 = 2, TLC_I16 = 3, TLC_I32 = 4, TLC_I64 = 5, TLC_F16 = 6,
    TLC_BF16 = 7, TLC_F32 = 8, TLC_F64 = 9
};

// a value of storage dtype dt read into the loop type T; float -> integer as the CPU's
// casts do (tl_f2int: C's direct conversion is undefined out of range)
// the dtype code of a loop type, for the common case of an operand already in it
template <class T> struct tl_code { static constexpr int value = -1; };
template <> struct tl_code<float> { static constexpr int value = 8; };
template <> struct tl_code<double> { static constexpr int value = 9; };
template <> struct tl_code<int> { static constexpr int value = 4; };
template <> struct tl_code<long long> { static constexpr int value = 5; };

template <class T>
__device__ __forceinline__ T tl_ld(const void* p, long long off, int dt) {
    if (dt == tl_code<T>::value) return ((const T*)p)[off];
    switch (dt) {
        case TLC_F32: { float v = ((const float*)p)[off];
                       return (T)1.5 == (T)1 ? tl_f2int<T>(v) : (T)v; }
        case TLC_F64: { double v = ((const double*)p)[off];
                       return (T)1.5 == (T)1 ? tl_f2int<T>(v) : (T)v; }
        case TLC_F16: { float v = tl_half_to_float(((const unsigned short*)p)[off]);
                       return (T)1.5 == (T)1 ? tl_f2int<T>(v) : (T)v; }
        case TLC_BF16: { float v = tl_bf16_to_float(((const unsigned short*)p)[off]);
                        return (T)1.5 == (T)1 ? tl_f2int<T>(v) : (T)v; }
        case TLC_I32: return (T)((const int*)p)[off];
        case TLC_I64: return (T)((const long long*)p)[off];
        case TLC_U8: return (T)((const unsigned char*)p)[off];
        case TLC_I8: return (T)((const signed char*)p)[off];
        case TLC_I16: return (T)((const short*)p)[off];
        default: return (T)(((const unsigned char*)p)[off] != 0);
    }
}
// the same for a bool loop: any non-zero value is true
__device__ __forceinline__ b8 tl_ldb(const void* p, long long off, int dt) {
    switch (dt) {
        case TLC_F32: return ((const float*)p)[off] != 0.0f;
        case TLC_F64: return ((const double*)p)[off] != 0.0;
        case TLC_F16: return (((const unsigned short*)p)[off] & 0x7fffu) != 0;
        case TLC_BF16: return (((const unsigned short*)p)[off] & 0x7fffu) != 0;
        case TLC_I32: return ((const int*)p)[off] != 0;
        case TLC_I64: return ((const long long*)p)[off] != 0;
        case TLC_I16: return ((const short*)p)[off] != 0;
        default: return ((const unsigned char*)p)[off] != 0;
    }
}
template <class T>
__device__ __forceinline__ void tl_st(void* p, long long off, int dt, T v) {
    if (dt == tl_code<T>::value) {
        ((T*)p)[off] = v;
        return;
    }
    switch (dt) {
        case TLC_F32: ((float*)p)[off] = (float)v; break;
        case TLC_F64: ((double*)p)[off] = (double)v; break;
        case TLC_F16: ((unsigned short*)p)[off] = tl_float_to_half((float)v); break;
        case TLC_BF16: ((unsigned short*)p)[off] = tl_float_to_bf16((float)v); break;
        case TLC_I32: ((int*)p)[off] = tl_to_i32(v); break;
        case TLC_I64: ((long long*)p)[off] = tl_to_i64(v); break;
        case TLC_U8: ((unsigned char*)p)[off] = (unsigned char)tl_to_i32(v); break;
        case TLC_I8: ((signed char*)p)[off] = (signed char)tl_to_i32(v); break;
        case TLC_I16: ((short*)p)[off] = (short)tl_to_i32(v); break;
        default: ((unsigned char*)p)[off] = (v != (T)0); break;
    }
}

// A host scalar's bits (little-endian, in the low bytes) read as storage dtype dt. The bits
// are passed by value: taking the address of a kernel parameter makes the compiler copy the
// whole descriptor to local memory in every thread.
template <class T>
__device__ __forceinline__ T tl_ld_bits(unsigned long long bits, int dt) {
    unsigned char b[8];
    memcpy(b, &bits, 8);
    return tl_ld<T>(b, 0, dt);
}
__device__ __forceinline__ b8 tl_ldb_bits(unsigned long long bits, int dt) {
    unsigned char b[8];
    memcpy(b, &bits, 8);
    return tl_ldb(b, 0, dt);
}

// operand k of a launch: its device memory, or a host scalar
#define TL_IS_SCALAR(k) ((d.scalar_mask >> (k)) & 1)
#define TL_LD(T, k, p) (TL_IS_SCALAR(k) ? tl_ld_bits<T>(d.sval[k], d.dtype[k])               \
                                        : tl_ld<T>((p), off[k], d.dtype[k]))
#define TL_LDB(k, p) (TL_IS_SCALAR(k) ? tl_ldb_bits(d.sval[k], d.dtype[k])                     \
                                      : tl_ldb((p), off[k], d.dtype[k]))
// the op's parameters, copied out of the descriptor once per thread (see tl_ld_bits)
#define TL_EXTRA                                                                           \
    double extra_[8];                                                                      \
    for (int k_ = 0; k_ < 8; ++k_) extra_[k_] = d.extra[k_];                               \
    const void* extra = d.has_extra ? (const void*)extra_ : 0

#endif
