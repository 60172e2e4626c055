// elementwise.cu: fill, copy/cast and unary/binary float ops, contiguous and strided.
//
// Contiguous kernels take same-dtype arrays of n elements. Strided kernels take a tl_ew_desc
// (shape, per-operand strides in elements and dtypes): they compute in the type their name
// says (f32 or f64) and convert on load and store, so one launch also casts and broadcasts;
// float16/bfloat16 operands are computed in float32 through the f32 kernels.
// All kernels are grid-stride loops: any grid covers any n.
#include "tl_cuda.h"

#define TL_OP2(NAME, EXPR)                                                                 \
    struct op_##NAME {                                                                     \
        template <class T>                                                                 \
        __device__ __forceinline__ T operator()(T a, T b) const { return EXPR; }          \
    };
#define TL_OP1(NAME, EXPR)                                                                 \
    struct op_##NAME {                                                                     \
        template <class T>                                                                 \
        __device__ __forceinline__ T operator()(T a) const { return EXPR; }               \
    };
TL_OP2(add, a + b)
TL_OP2(sub, a - b)
TL_OP2(mul, a * b)
TL_OP2(div, a / b)
TL_OP2(maximum, tl_nanmax(a, b))
TL_OP2(minimum, tl_nanmin(a, b))
TL_OP1(neg, -a)
TL_OP1(exp, tl_exp(a))
TL_OP1(log, tl_log(a))
TL_OP1(sqrt, tl_sqrt(a))
TL_OP1(abs, tl_abs(a))
TL_OP1(tanh, tl_tanh(a))

template <class T, class Op>
__device__ __forceinline__ void binary_contig(const T* a, const T* b, T* out, long long n) {
    Op op;
    TL_FOR_EACH(i, n) out[i] = op(a[i], b[i]);
}
template <class T, class Op>
__device__ __forceinline__ void binary_strided(const void* a, const void* b, void* out,
                                               const tl_ew_desc& d, long long n) {
    Op op;
    TL_FOR_EACH(i, n) {
        long long off[3];
        tl_offsets(i, d, 3, off);
        T x = tl_load<T>(a, off[1], d.dtype[1]), y = tl_load<T>(b, off[2], d.dtype[2]);
        tl_store<T>(out, off[0], d.dtype[0], op(x, y));
    }
}
template <class T, class Op>
__device__ __forceinline__ void unary_contig(const T* a, T* out, long long n) {
    Op op;
    TL_FOR_EACH(i, n) out[i] = op(a[i]);
}
template <class T, class Op>
__device__ __forceinline__ void unary_strided(const void* a, void* out, const tl_ew_desc& d,
                                              long long n) {
    Op op;
    TL_FOR_EACH(i, n) {
        long long off[3];
        tl_offsets(i, d, 2, off);
        tl_store<T>(out, off[0], d.dtype[0], op(tl_load<T>(a, off[1], d.dtype[1])));
    }
}

#define TL_BINARY(NAME, T, SFX)                                                            \
    extern "C" __global__ void tl_##NAME##_##SFX(const T* a, const T* b, T* out,         \
                                                  long long n) {                           \
        binary_contig<T, op_##NAME>(a, b, out, n);                                         \
    }                                                                                      \
    extern "C" __global__ void tl_##NAME##_strided_##SFX(const void* a, const void* b,   \
                                                          void* out, tl_ew_desc d,         \
                                                          long long n) {                   \
        binary_strided<T, op_##NAME>(a, b, out, d, n);                                     \
    }
#define TL_UNARY(NAME, T, SFX)                                                             \
    extern "C" __global__ void tl_##NAME##_##SFX(const T* a, T* out, long long n) {      \
        unary_contig<T, op_##NAME>(a, out, n);                                             \
    }                                                                                      \
    extern "C" __global__ void tl_##NAME##_strided_##SFX(const void* a, void* out,       \
                                                          tl_ew_desc d, long long n) {     \
        unary_strided<T, op_##NAME>(a, out, d, n);                                         \
    }
#define TL_FLOAT_OPS(T, SFX)                                                               \
    TL_BINARY(add, T, SFX)                                                                 \
    TL_BINARY(sub, T, SFX)                                                                 \
    TL_BINARY(mul, T, SFX)                                                                 \
    TL_BINARY(div, T, SFX)                                                                 \
    TL_BINARY(maximum, T, SFX)                                                             \
    TL_BINARY(minimum, T, SFX)                                                             \
    TL_UNARY(neg, T, SFX)                                                                  \
    TL_UNARY(exp, T, SFX)                                                                  \
    TL_UNARY(log, T, SFX)                                                                  \
    TL_UNARY(sqrt, T, SFX)                                                                 \
    TL_UNARY(abs, T, SFX)                                                                  \
    TL_UNARY(tanh, T, SFX)
TL_FLOAT_OPS(float, f32)
TL_FLOAT_OPS(double, f64)

// ---- fill -------------------------------------------------------------------------------
#define TL_FILL(T, SFX)                                                                    \
    extern "C" __global__ void tl_fill_##SFX(T* out, T value, long long n) {             \
        TL_FOR_EACH(i, n) out[i] = value;                                                  \
    }                                                                                      \
    extern "C" __global__ void tl_fill_strided_##SFX(T* out, T value, tl_ew_desc d,      \
                                                      long long n) {                       \
        TL_FOR_EACH(i, n) {                                                                \
            long long off[3];                                                              \
            tl_offsets(i, d, 1, off);                                                      \
            out[off[0]] = value;                                                           \
        }                                                                                  \
    }
TL_FILL(float, f32)
TL_FILL(double, f64)
TL_FILL(int, i32)
TL_FILL(long long, i64)
TL_FILL(unsigned char, u8)

// ---- copy / cast ------------------------------------------------------------------------
// Contiguous casts between the four main dtypes (C conversions: float to int truncates).
#define TL_CAST(S, SS, D, DS)                                                              \
    extern "C" __global__ void tl_cast_##SS##_##DS(const S* src, D* dst, long long n) {   \
        TL_FOR_EACH(i, n) dst[i] = (D)src[i];                                              \
    }
#define TL_CAST_FROM(S, SS)                                                                \
    TL_CAST(S, SS, float, f32)                                                             \
    TL_CAST(S, SS, double, f64)                                                            \
    TL_CAST(S, SS, int, i32)                                                               \
    TL_CAST(S, SS, long long, i64)
TL_CAST_FROM(float, f32)
TL_CAST_FROM(double, f64)
TL_CAST_FROM(int, i32)
TL_CAST_FROM(long long, i64)

// Any strided copy between any two dtypes of the descriptor. Integers travel as 64-bit
// integers and floats as doubles, so int64 -> int64 stays exact beyond 2**53.
extern "C" __global__ void tl_copy_strided(const void* src, void* dst, tl_ew_desc d,
                                           long long n) {
    int sdt = d.dtype[1], ddt = d.dtype[0];
    bool is_float = sdt == TL_F32 || sdt == TL_F64 || sdt == TL_F16 || sdt == TL_BF16;
    TL_FOR_EACH(i, n) {
        long long off[3];
        tl_offsets(i, d, 2, off);
        if (is_float) tl_store<double>(dst, off[0], ddt, tl_load<double>(src, off[1], sdt));
        else tl_store<long long>(dst, off[0], ddt, tl_load<long long>(src, off[1], sdt));
    }
}
