// tl_cuda.h: helpers shared by tensorlib's kernels, valid under nvcc and under the emulator
// (cuda/emu/tl_emu.h, which defines TL_EMU).
#pragma once

#define TL_MAX_DIMS 8
#define TL_FULL_MASK 0xffffffffu

// dtype codes of the strided descriptors (the Python side uses the same numbers)
enum { TL_F32 = 0, TL_F64 = 1, TL_I32 = 2, TL_I64 = 3, TL_U8 = 4, TL_BOOL = 5 };

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

// loads and stores through a runtime dtype code; the switch is uniform across a launch
template <class T>
__device__ __forceinline__ T tl_load(const void* p, long long off, int dt) {
    switch (dt) {
        case TL_F32: return (T)((const float*)p)[off];
        case TL_F64: return (T)((const double*)p)[off];
        case TL_I32: return (T)((const int*)p)[off];
        case TL_I64: return (T)((const long long*)p)[off];
        case TL_U8: return (T)((const unsigned char*)p)[off];
        default: return (T)(((const unsigned char*)p)[off] != 0);
    }
}
template <class T>
__device__ __forceinline__ void tl_store(void* p, long long off, int dt, T v) {
    switch (dt) {
        case TL_F32: ((float*)p)[off] = (float)v; break;
        case TL_F64: ((double*)p)[off] = (double)v; break;
        case TL_I32: ((int*)p)[off] = (int)v; break;
        case TL_I64: ((long long*)p)[off] = (long long)v; break;
        case TL_U8: ((unsigned char*)p)[off] = (unsigned char)v; break;
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
