// reduce.cu: reductions of contiguous rows (sum / max / min / argmax / argmin of each row of
// a (rows, cols) array) and of whole arrays (two launches: partials per block, then one).
//
// Row kernels: one block per row (grid-stride over rows); each thread folds a strided slice
// of the row, then the block combines the partials with warp shuffles and one shared-memory
// round. The order of every operation is fixed by the launch shape, so results do not depend
// on timing. float32 sums accumulate in double; float64 sums use Kahan compensation per
// thread. blockDim must be (32k, 1, 1), k = 1..32.
#include "tl_cuda.h"

extern "C" __global__ void tl_sum_rows_f32(const float* x, float* out, long long rows,
                                           long long cols) {
    __shared__ double part[32];
    TL_ASSERT((blockDim.x & 31) == 0 && blockDim.y == 1 && blockDim.z == 1);
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* row = x + r * cols;
        double acc = 0.0;
        for (long long j = threadIdx.x; j < cols; j += blockDim.x) acc += (double)row[j];
        acc = tl_block_reduce(acc, tl_sum_op(), 0.0, part);
        if (threadIdx.x == 0) out[r] = (float)acc;
    }
}

extern "C" __global__ void tl_sum_rows_f64(const double* x, double* out, long long rows,
                                           long long cols) {
    __shared__ double part[32];
    TL_ASSERT((blockDim.x & 31) == 0 && blockDim.y == 1 && blockDim.z == 1);
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const double* row = x + r * cols;
        double acc = 0.0, c = 0.0;  // Kahan: c holds the low part lost by each addition
        for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
            double y = row[j] - c, t = acc + y;
            c = (t - acc) - y;
            acc = t;
        }
        acc = tl_block_reduce(acc, tl_sum_op(), 0.0, part);
        if (threadIdx.x == 0) out[r] = acc;
    }
}

// max/min over rows of cols >= 1 (an empty max is an error the caller raises); NaN wins
#define TL_EXTREME_ROWS(NAME, OP, T, SFX, IDENT)                                           \
    extern "C" __global__ void tl_##NAME##_rows_##SFX(const T* x, T* out, long long rows, \
                                                      long long cols) {                    \
        __shared__ T part[32];                                                             \
        TL_ASSERT((blockDim.x & 31) == 0 && blockDim.y == 1 && blockDim.z == 1);           \
        for (long long r = blockIdx.x; r < rows; r += gridDim.x) {                         \
            const T* row = x + r * cols;                                                   \
            T acc = IDENT;                                                                 \
            for (long long j = threadIdx.x; j < cols; j += blockDim.x)                     \
                acc = OP()(acc, row[j]);                                                   \
            acc = tl_block_reduce(acc, OP(), (T)(IDENT), part);                            \
            if (threadIdx.x == 0) out[r] = acc;                                            \
        }                                                                                  \
    }
TL_EXTREME_ROWS(max, tl_max_op, float, f32, -INFINITY)
TL_EXTREME_ROWS(max, tl_max_op, double, f64, -INFINITY)
TL_EXTREME_ROWS(min, tl_min_op, float, f32, INFINITY)
TL_EXTREME_ROWS(min, tl_min_op, double, f64, INFINITY)

// ---- whole-array reductions in two launches ------------------------------------------------
// Pass 1: every block folds a grid-stride slice of x into one partial (in double for sums);
// pass 2: tl_sum_finish_* (or the *_rows_* kernels with rows = 1) folds the partials. The
// result depends only on the grid size, never on timing.
extern "C" __global__ void tl_sum_partial_f32(const float* x, double* partial, long long n) {
    __shared__ double part[32];
    TL_ASSERT((blockDim.x & 31) == 0 && blockDim.y == 1 && blockDim.z == 1);
    double acc = 0.0;
    TL_FOR_EACH(i, n) acc += (double)x[i];
    acc = tl_block_reduce(acc, tl_sum_op(), 0.0, part);
    if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

extern "C" __global__ void tl_sum_partial_f64(const double* x, double* partial, long long n) {
    __shared__ double part[32];
    TL_ASSERT((blockDim.x & 31) == 0 && blockDim.y == 1 && blockDim.z == 1);
    double acc = 0.0, c = 0.0;
    TL_FOR_EACH(i, n) {
        double y = x[i] - c, t = acc + y;
        c = (t - acc) - y;
        acc = t;
    }
    acc = tl_block_reduce(acc, tl_sum_op(), 0.0, part);
    if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

#define TL_SUM_FINISH(T, SFX)                                                                \
    extern "C" __global__ void tl_sum_finish_##SFX(const double* partial, T* out,           \
                                                   long long nparts) {                       \
        __shared__ double part[32];                                                          \
        TL_ASSERT((blockDim.x & 31) == 0 && blockDim.y == 1 && gridDim.x == 1);              \
        double acc = 0.0;                                                                    \
        for (long long j = threadIdx.x; j < nparts; j += blockDim.x) acc += partial[j];      \
        acc = tl_block_reduce(acc, tl_sum_op(), 0.0, part);                                  \
        if (threadIdx.x == 0) out[0] = (T)acc;                                               \
    }
TL_SUM_FINISH(float, f32)
TL_SUM_FINISH(double, f64)

#define TL_EXTREME_PARTIAL(NAME, OP, T, SFX, IDENT)                                          \
    extern "C" __global__ void tl_##NAME##_partial_##SFX(const T* x, T* partial,            \
                                                         long long n) {                      \
        __shared__ T part[32];                                                               \
        TL_ASSERT((blockDim.x & 31) == 0 && blockDim.y == 1 && blockDim.z == 1);             \
        T acc = IDENT;                                                                       \
        TL_FOR_EACH(i, n) acc = OP()(acc, x[i]);                                             \
        acc = tl_block_reduce(acc, OP(), (T)(IDENT), part);                                  \
        if (threadIdx.x == 0) partial[blockIdx.x] = acc;                                     \
    }
TL_EXTREME_PARTIAL(max, tl_max_op, float, f32, -INFINITY)
TL_EXTREME_PARTIAL(max, tl_max_op, double, f64, -INFINITY)
TL_EXTREME_PARTIAL(min, tl_min_op, float, f32, INFINITY)
TL_EXTREME_PARTIAL(min, tl_min_op, double, f64, INFINITY)

// ---- argmax / argmin along contiguous rows -------------------------------------------------
// The first index of the extreme value; a NaN counts as the extreme (the first NaN wins), as
// torch.argmax and numpy.argmax do.
template <class T, bool MAX>
__device__ __forceinline__ bool tl_arg_better(T v, long long i, T w, long long j) {
    bool vn = v != v, wn = w != w;
    if (vn || wn) return vn && (!wn || i < j);
    if (v != w) return MAX ? v > w : v < w;
    return i < j;
}

template <class T, bool MAX>
__device__ __forceinline__ void tl_arg_rows(const T* x, long long* out, long long rows,
                                            long long cols, T* sv, long long* si) {
    TL_ASSERT((blockDim.x & 31) == 0 && blockDim.y == 1 && blockDim.z == 1);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* row = x + r * cols;
        T v = MAX ? (T)-INFINITY : (T)INFINITY;
        long long i = cols;  // "no element yet": loses every tie
        for (long long j = threadIdx.x; j < cols; j += blockDim.x)
            if (tl_arg_better<T, MAX>(row[j], j, v, i)) {
                v = row[j];
                i = j;
            }
        for (int o = 16; o > 0; o >>= 1) {
            T w = __shfl_down_sync(TL_FULL_MASK, v, o);
            long long k = __shfl_down_sync(TL_FULL_MASK, i, o);
            if (tl_arg_better<T, MAX>(w, k, v, i)) {
                v = w;
                i = k;
            }
        }
        if (lane == 0) {
            sv[warp] = v;
            si[warp] = i;
        }
        __syncthreads();
        if (warp == 0) {
            v = lane < nwarps ? sv[lane] : (MAX ? (T)-INFINITY : (T)INFINITY);
            i = lane < nwarps ? si[lane] : cols;
            for (int o = 16; o > 0; o >>= 1) {
                T w = __shfl_down_sync(TL_FULL_MASK, v, o);
                long long k = __shfl_down_sync(TL_FULL_MASK, i, o);
                if (tl_arg_better<T, MAX>(w, k, v, i)) {
                    v = w;
                    i = k;
                }
            }
            if (lane == 0) out[r] = i < cols ? i : 0;  // an empty row (the caller raises)
        }
        __syncthreads();
    }
}

#define TL_ARG_ROWS(NAME, MAX, T, SFX)                                                       \
    extern "C" __global__ void tl_##NAME##_rows_##SFX(const T* x, long long* out,           \
                                                      long long rows, long long cols) {      \
        __shared__ T sv[32];                                                                 \
        __shared__ long long si[32];                                                         \
        tl_arg_rows<T, MAX>(x, out, rows, cols, sv, si);                                     \
    }
TL_ARG_ROWS(argmax, true, float, f32)
TL_ARG_ROWS(argmax, true, double, f64)
TL_ARG_ROWS(argmin, false, float, f32)
TL_ARG_ROWS(argmin, false, double, f64)
