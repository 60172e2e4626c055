// Test-only kernels for tests/test_cuda_emulator.py: deliberate bugs the emulator's checking
// mode must catch, and small users of the intrinsics the shim provides.
#include "tl_cuda.h"

// shared-memory tree sum of one block's values, correct
extern "C" __global__ void t_tree_sum(const int* x, int* out, int n) {
    __shared__ int s[256];
    int t = threadIdx.x;
    s[t] = t < n ? x[t] : 0;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h >>= 1) {
        if (t < h) s[t] += s[t + h];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

// the same with the barrier inside the loop forgotten: a race
extern "C" __global__ void t_tree_sum_racy(const int* x, int* out, int n) {
    __shared__ int s[256];
    int t = threadIdx.x;
    s[t] = t < n ? x[t] : 0;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h >>= 1) {
        if (t < h) s[t] += s[t + h];
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

// a barrier in both branches of an if: divergent
extern "C" __global__ void t_divergent(int* out) {
    if (threadIdx.x % 2 == 0) {
        __syncthreads();
        out[threadIdx.x] = 1;
    } else {
        __syncthreads();
        out[threadIdx.x] = 2;
    }
}

// writes one element past the end of out
extern "C" __global__ void t_out_of_bounds(float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) out[i] = 1.0f;
}

extern "C" __global__ void t_assert_positive(const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) TL_ASSERT(x[i] > 0.0f);
}

// half the warp waits at a shuffle, the other half at __syncthreads: never released
extern "C" __global__ void t_deadlock(float* out) {
    float v = threadIdx.x;
    if (threadIdx.x < 16) v = __shfl_down_sync(TL_FULL_MASK, v, 1);
    __syncthreads();
    out[threadIdx.x] = v;
}

// reverses n floats of one block through dynamic shared memory
extern "C" __global__ void t_dyn_reverse(const float* x, float* out, int n) {
    extern __shared__ float buf[];
    int t = threadIdx.x;
    if (t < n) buf[t] = x[t];
    __syncthreads();
    if (t < n) out[t] = buf[n - 1 - t];
}

// reads one float past the dynamic shared memory given at launch
extern "C" __global__ void t_dyn_overrun(float* out, int n) {
    extern __shared__ float buf[];
    buf[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = buf[threadIdx.x + 1];
}

// warp intrinsics: per lane, xor-butterfly sum, inclusive scan (shfl_up), ballot of odd values
extern "C" __global__ void t_warp_ops(const int* x, int* sum, int* scan, unsigned* ballot) {
    int t = threadIdx.x, v = x[t], s = v;
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(TL_FULL_MASK, s, o);
    sum[t] = s;
    int c = v;
    for (int o = 1; o < 32; o <<= 1) {
        int u = __shfl_up_sync(TL_FULL_MASK, c, o);
        if ((t & 31) >= o) c += u;
    }
    scan[t] = c;
    ballot[t] = __ballot_sync(TL_FULL_MASK, v & 1);
}

// __syncthreads_count of positive values, per block
extern "C" __global__ void t_count_positive(const float* x, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int c = __syncthreads_count(i < n && x[i] > 0.0f);
    if (threadIdx.x == 0) out[blockIdx.x] = c;
}

// integer atomics from every thread of every block
extern "C" __global__ void t_histogram(const int* x, int* bins, int* maxv, int n) {
    TL_FOR_EACH(i, n) {
        atomicAdd(&bins[x[i]], 1);
        atomicMax(maxv, x[i]);
    }
}

// a long-running kernel (busy loop), to see streams overlap the host
extern "C" __global__ void t_spin(float* out, int iters) {
    float v = 0.0f;
    for (int k = 0; k < iters; ++k) v = v * 0.5f + 1.0f;
    if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = v;
}

// a big local array live across a barrier: needs more than the default fiber stack
extern "C" __global__ void t_big_frame(float* out, int k) {
    volatile float big[32768];  // 128 KiB
    for (int j = 0; j < 32768; j += 512) big[j] = (float)(j + k);
    __syncthreads();
    float s = 0.0f;
    for (int j = 0; j < 32768; j += 512) s += big[j];
    out[threadIdx.x] = s;
}

// each block reads what the previous block wrote: correct only if blocks run in order
extern "C" __global__ void t_interblock_race(int* out) {
    if (threadIdx.x == 0) out[blockIdx.x] = blockIdx.x ? out[blockIdx.x - 1] + 1 : 1;
}
