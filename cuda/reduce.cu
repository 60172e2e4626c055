// reduce.cu: sum / max / min of each contiguous row of a (rows, cols) array.
//
// One block per row (grid-stride over rows): each thread folds a strided slice of the row,
// then the block combines the partials with warp shuffles and one shared-memory round. The
// order of every addition is fixed by the launch shape, so results do not depend on timing.
// float32 sums accumulate in double; float64 sums use Kahan compensation per thread.
// blockDim must be (32k, 1, 1), k = 1..32.
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
