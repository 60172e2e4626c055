/* Typed copy/cast kernels: the one table every copy and dtype conversion goes through. */
#ifndef TL_CPU_COPY_H
#define TL_CPU_COPY_H
#include <stdint.h>
#include <string.h>
#include <math.h>

/* dtype codes, identical to DTypeCode in dtype.pxd */
enum { TL_BOOL = 0, TL_U8, TL_I8, TL_I16, TL_I32, TL_I64, TL_F16, TL_BF16, TL_F32, TL_F64, TL_NUM_DTYPES };

/* strides in bytes */
typedef void (*tl_cast_fn)(char *dst, int64_t dst_stride, const char *src, int64_t src_stride, int64_t n);

tl_cast_fn tl_get_cast(int src_dtype, int dst_dtype);

/* Copy an n-d strided array (strides in bytes, dims already coalesced, innermost last). */
void tl_copy_nd(int ndim, const int64_t *shape, char *dst, const int64_t *dst_strides, int dst_dtype,
                const char *src, const int64_t *src_strides, int src_dtype);

/* Half precision conversions: round to nearest even, NaN stays NaN, no undefined behaviour. */
static inline float tl_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
    float f;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (mant << 13);
    } else {
        /* zero or subnormal: mant * 2^-24 is exact in float */
        f = (float)mant * 5.9604644775390625e-08f;
        memcpy(&bits, &f, 4);
        bits |= sign;
    }
    memcpy(&f, &bits, 4);
    return f;
}

static inline uint16_t tl_f32_to_f16(float f) {
    uint32_t x, ax;
    uint16_t sign;
    memcpy(&x, &f, 4);
    sign = (uint16_t)((x >> 16) & 0x8000u);
    ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return sign | 0x7e00u | (uint16_t)((ax >> 13) & 0x3ffu);  /* NaN */
    if (ax >= 0x477ff000u) return sign | 0x7c00u;   /* >= 65520 rounds to inf */
    if (ax >= 0x38800000u) {                        /* normal half: rebias, round mantissa */
        uint32_t r = ax - 0x38000000u;
        r += 0xfffu + ((r >> 13) & 1u);
        return sign | (uint16_t)(r >> 13);
    } else {                                         /* subnormal half: units of 2^-24 */
        float a;
        memcpy(&a, &ax, 4);
        return sign | (uint16_t)nearbyintf(a * 16777216.0f);
    }
}

static inline float tl_bf16_to_f32(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static inline uint16_t tl_f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);  /* quiet NaN */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

/* Float -> integer without undefined behaviour. NaN and out-of-range values give the type's
   minimum, which is what x86 hardware (and so PyTorch on x86) produces; narrow types go
   through int32 and wrap, as PyTorch does. */
static inline int64_t tl_f64_to_i64(double v) {
    if (v >= -9223372036854775808.0 && v < 9223372036854775808.0) return (int64_t)v;
    return INT64_MIN;
}
static inline int32_t tl_f64_to_i32(double v) {
    if (v > -2147483649.0 && v < 2147483648.0) return (int32_t)v;
    return INT32_MIN;
}
#endif
