// tl_cuda.h: helpers shared by tensorlib's kernels, valid under nvcc and under the emulator
// (cuda/emu/tl_emu.h, which defines TL_EMU).
#pragma once

#define TL_MAX_DIMS 8
#define TL_FULL_MASK 0xffffffffu

// dtype codes of the strided descriptors (the Python side uses the same numbers)
enum {
    TL_F32 = 0, TL_F64 = 1, TL_I32 = 2, TL_I64 = 3, TL_U8 = 4, TL_BOOL = 5,
    TL_F16 = 6, TL_BF16 = 7, TL_I8 = 8, TL_I16 = 9
};

// float16 / bfloat16 as their bits, converted by hand (round to nearest even, NaN kept), so
// the conversions are the same under nvcc and the emulator and need no cuda_fp16.h
__device__ __forceinline__ unsigned tl_f2u(float f) {
    union { float f; unsigned u; } c;
    c.f = f;
    return c.u;
}
__device__ __forceinline__ float tl_u2f(unsigned u) {
    union { float f; unsigned u; } c;
    c.u = u;
    return c.f;
}
__device__ __forceinline__ unsigned short tl_float_to_half(float f) {
    unsigned x = tl_f2u(f), sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
    if (a >= 0x7f800000u) return (unsigned short)(sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (a >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);  // rounds past 65504
    if (a < 0x38800000u) {  // below 2**-14: a half subnormal (or zero)
        if (a <= 0x33000000u) return (unsigned short)sign;  // at most 2**-25: ties to 0
        unsigned e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, shift = 126u - e;
        unsigned q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u))) ++q;
        return (unsigned short)(sign | q);
    }
    unsigned r = a - (112u << 23);  // rebias the exponent from 127 to 15
    return (unsigned short)(sign | ((r + 0x0fffu + ((r >> 13) & 1u)) >> 13));
}
__device__ __forceinline__ float tl_half_to_float(unsigned short h) {
    unsigned sign = (unsigned)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1fu) return tl_u2f(sign | 0x7f800000u | (m << 13));
    if (e == 0) {
        if (m == 0) return tl_u2f(sign);
        e = 113;  // a subnormal: normalise
        while (!(m & 0x400u)) {
            m <<= 1;
            --e;
        }
        return tl_u2f(sign | (e << 23) | ((m & 0x3ffu) << 13));
    }
    return tl_u2f(sign | ((e + 112u) << 23) | (m << 13));
}
__device__ __forceinline__ unsigned short tl_float_to_bf16(float f) {
    unsigned x = tl_f2u(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);
    return (unsigned short)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
__device__ __forceinline__ float tl_bf16_to_float(unsigned short b) {
    return tl_u2f((unsigned)b << 16);
}

// A strided elementwise launch: a coalesced shape and, per operand, strides in elements
// (0 broadcasts). Operand 0 is the output, 1 and 2 the inputs. Passed to kernels by value.
struct tl_ew_desc {
    int ndim;
    int dtype[3];
    long long shape[TL_MAX_DIMS];
    long long stride[3][TL_MAX_DIMS];
};

// a device-side check: a trap on the GPU, a fault naming the kernel and line on the emulator
#ifdef TL_EMU
#define TL_ASSERT(c) ((c) ? (void)0 : tl_emu_fault("assertion failed: " #c, __FILE__, __LINE__))
#else
#define TL_ASSERT(c) ((c) ? (void)0 : __trap())
#endif

// grid-stride loop over [0, n)
#define TL_FOR_EACH(i, n)                                                                \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n);        \
         i += (long long)blockDim.x * gridDim.x)

// element offsets of the linear index i, one per operand
__device__ __forceinline__ void tl_offsets(long long i, const tl_ew_desc& d, int nops,
                                           long long off[3]) {
    off[0] = off[1] = off[2] = 0;
    for (int k = d.ndim - 1; k >= 0; --k) {
        long long s = d.shape[k], q = i / s, idx = i - q * s;
        i = q;
        for (int j = 0; j < nops; ++j) off[j] += idx * d.stride[j][k];
    }
}

// Float -> integer as the CPU converts (tensorlib/_core/cpu/cpu_copy.h): NaN and
// out-of-range values give the type's minimum (x86's answer; the GPU's cvt would saturate),
// narrower types go through int32 and wrap. An integer value converts as C does (wraps).
__device__ __forceinline__ long long tl_f2i64(double v) {
    return (v >= -9223372036854775808.0 && v < 9223372036854775808.0) ? (long long)v
                                                                      : (-0x7fffffffffffffffLL - 1);
}
__device__ __forceinline__ int tl_f2i32(double v) {
    return (v > -2147483649.0 && v < 2147483648.0) ? (int)v : (-0x7fffffff - 1);
}
template <class T> __device__ __forceinline__ long long tl_to_i64(T v) { return (long long)v; }
template <> __device__ __forceinline__ long long tl_to_i64<float>(float v) { return tl_f2i64(v); }
template <> __device__ __forceinline__ long long tl_to_i64<double>(double v) { return tl_f2i64(v); }
template <class T> __device__ __forceinline__ int tl_to_i32(T v) { return (int)v; }
template <> __device__ __forceinline__ int tl_to_i32<float>(float v) { return tl_f2i32(v); }
template <> __device__ __forceinline__ int tl_to_i32<double>(double v) { return tl_f2i32(v); }
// a float value into the integer loop type I (8 bytes: int64's rule; narrower: int32's)
template <class I> __device__ __forceinline__ I tl_f2int(double v) {
    return sizeof(I) == 8 ? (I)tl_f2i64(v) : (I)tl_f2i32(v);
}

// loads and stores through a runtime dtype code; the switch is uniform across a launch
template <class T>
__device__ __forceinline__ T tl_load(const void* p, long long off, int dt) {
    switch (dt) {
        case TL_F32: return (T)((const float*)p)[off];
        case TL_F64: return (T)((const double*)p)[off];
        case TL_I32: return (T)((const int*)p)[off];
        case TL_I64: return (T)((const long long*)p)[off];
        case TL_U8: return (T)((const unsigned char*)p)[off];
        case TL_I8: return (T)((const signed char*)p)[off];
        case TL_I16: return (T)((const short*)p)[off];
        case TL_F16: return (T)tl_half_to_float(((const unsigned short*)p)[off]);
        case TL_BF16: return (T)tl_bf16_to_float(((const unsigned short*)p)[off]);
        default: return (T)(((const unsigned char*)p)[off] != 0);
    }
}
template <class T>
__device__ __forceinline__ void tl_store(void* p, long long off, int dt, T v) {
    switch (dt) {
        case TL_F32: ((float*)p)[off] = (float)v; break;
        case TL_F64: ((double*)p)[off] = (double)v; break;
        case TL_I32: ((int*)p)[off] = tl_to_i32(v); break;
        case TL_I64: ((long long*)p)[off] = tl_to_i64(v); break;
        case TL_U8: ((unsigned char*)p)[off] = (unsigned char)tl_to_i32(v); break;
        case TL_I8: ((signed char*)p)[off] = (signed char)tl_to_i32(v); break;
        case TL_I16: ((short*)p)[off] = (short)tl_to_i32(v); break;
        case TL_F16: ((unsigned short*)p)[off] = tl_float_to_half((float)v); break;
        case TL_BF16: ((unsigned short*)p)[off] = tl_float_to_bf16((float)v); break;
        default: ((unsigned char*)p)[off] = (v != (T)0); break;
    }
}

__device__ __forceinline__ float tl_exp(float x) { return expf(x); }
__device__ __forceinline__ double tl_exp(double x) { return exp(x); }
__device__ __forceinline__ float tl_log(float x) { return logf(x); }
__device__ __forceinline__ double tl_log(double x) { return log(x); }
__device__ __forceinline__ float tl_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double tl_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float tl_abs(float x) { return fabsf(x); }
__device__ __forceinline__ double tl_abs(double x) { return fabs(x); }
__device__ __forceinline__ float tl_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double tl_tanh(double x) { return tanh(x); }

// max/min that propagate NaN, as torch.maximum / torch.max do
template <class T>
__device__ __forceinline__ T tl_nanmax(T a, T b) { return (a != a || a > b) ? a : b; }
template <class T>
__device__ __forceinline__ T tl_nanmin(T a, T b) { return (a != a || a < b) ? a : b; }

// ---- block reductions: warp shuffles, then one partial per warp through shared memory -----
struct tl_sum_op {
    template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
struct tl_max_op {
    template <class T> __device__ __forceinline__ T operator()(T a, T b) const {
        return tl_nanmax(a, b);
    }
};
struct tl_min_op {
    template <class T> __device__ __forceinline__ T operator()(T a, T b) const {
        return tl_nanmin(a, b);
    }
};

template <class T, class Op>
__device__ __forceinline__ T tl_warp_reduce(T v, Op op) {
    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_down_sync(TL_FULL_MASK, v, o));
    return v;
}

// The block's reduction of v, valid in thread 0. `part` is shared memory of 32 T. Needs
// blockDim.x a multiple of 32 and blockDim.y == blockDim.z == 1; every thread must call it.
template <class T, class Op>
__device__ __forceinline__ T tl_block_reduce(T v, Op op, T identity, T* part) {
    v = tl_warp_reduce(v, op);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    if (lane == 0) part[warp] = v;
    __syncthreads();
    if (warp == 0) v = tl_warp_reduce(lane < nwarps ? part[lane] : identity, op);
    __syncthreads();  // part is free again for the caller's next reduction
    return v;
}
