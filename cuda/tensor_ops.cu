// tensor_ops.cu: the reductions, softmax, scans and matrix products of the CUDA back end,
// each taking the descriptor the CPU's kernels take (tensorlib/_core/cpu/cpu_reduce.h,
// cpu_linalg.h) in device form.
//
// Results never depend on timing: every reduction's order of operations is fixed by its
// launch shape (a per-thread strided walk, then a shared-memory tree), float32 and float64
// inputs are accumulated in double, integer inputs in int64 (wrapping, as on the CPU).
#include "tl_ew_device.h"

#define TL_RED_DIMS 8

// reduction ops and post-processing: the numbers of cpu_reduce.h
enum {
    R_SUM = 0, R_PROD, R_MAX, R_MIN, R_ALL, R_ANY, R_NONZERO, R_ABSSUM, R_SUMSQ, R_ABSMAX,
    R_ABSMIN, R_POWSUM, R_CSQ, R_SUMEXP, R_ARGMAX, R_ARGMIN
};
enum { POST_NONE = 0, POST_DIV, POST_SQRT_DIV, POST_ROOT, POST_LOG_CENTER };

// tl_red_t of cpu_reduce.h: kept dims (kshape, kin: input strides, kout: output strides)
// and reduced dims (rshape, rin), strides in elements, outer to inner
struct tl_red_dev {
    int op, post, in_dtype, out_dtype, int_state, nk, nr, has_out, has_idx, has_center;
    double p, post_a;
    long long nout, nred;
    long long parts;            // tl_reduce_block: blocks per output (1: no split)
    long long kshape[TL_RED_DIMS], kin[TL_RED_DIMS], kout[TL_RED_DIMS];
    long long rshape[TL_RED_DIMS], rin[TL_RED_DIMS];
};

__device__ __forceinline__ void red_kept(const tl_red_dev& d, long long o, long long* in,
                                         long long* out) {
    *in = *out = 0;
    for (int k = d.nk - 1; k >= 0; --k) {
        long long s = d.kshape[k], q = o / s, idx = o - q * s;
        o = q;
        *in += idx * d.kin[k];
        *out += idx * d.kout[k];
    }
}

__device__ __forceinline__ long long red_off(const tl_red_dev& d, long long r) {
    if (d.nr == 1) return r * d.rin[0];
    long long off = 0;
    for (int k = d.nr - 1; k >= 0; --k) {
        long long s = d.rshape[k], q = r / s;
        off += (r - q * s) * d.rin[k];
        r = q;
    }
    return off;
}

// the state of one partial reduction: a value and, for argmax/argmin, its index
template <class S>
struct red_state {
    S v;
    long long i;
};

template <class S>
__device__ __forceinline__ red_state<S> red_identity(int op) {
    red_state<S> s;
    s.i = -1;
    switch (op) {
        case R_PROD: case R_ALL: s.v = (S)1; break;
        default: s.v = (S)0; break;
    }
    return s;
}

template <class S>
__device__ __forceinline__ bool is_nan(S v) { return v != v; }

// one input value in the state's type. all/any/count_nonzero look only at whether it is
// non-zero: a float such as 0.5 must not be truncated to 0 on its way to the int64 state.
template <class S>
__device__ __forceinline__ S red_ld(const void* src, long long off, const tl_red_dev& d) {
    if (d.op == R_ALL || d.op == R_ANY || d.op == R_NONZERO)
        return (S)tl_ldb(src, off, d.in_dtype);
    return tl_ld<S>(src, off, d.in_dtype);
}

// fold one input value x (at reduced index r) into s
template <class S>
__device__ __forceinline__ void red_step(red_state<S>& s, S x, long long r, const tl_red_dev& d,
                                         double c) {
    switch (d.op) {
        case R_SUM: s.v += x; break;
        case R_PROD: s.v *= x; break;
        case R_MAX: case R_MIN: case R_ABSMAX: case R_ABSMIN: {
            if (d.op == R_ABSMAX || d.op == R_ABSMIN) x = x < 0 ? -x : x;
            bool mx = d.op == R_MAX || d.op == R_ABSMAX;
            if (s.i < 0 || (is_nan(x) && !is_nan(s.v)) ||
                (!is_nan(s.v) && (mx ? x > s.v : x < s.v))) {
                s.v = x;
                s.i = r;
            }
            break;
        }
        case R_ALL: s.v = (s.v != 0 && x != 0) ? 1 : 0; break;
        case R_ANY: s.v = (s.v != 0 || x != 0) ? 1 : 0; break;
        case R_NONZERO: s.v += (x != 0) ? 1 : 0; break;
        case R_ABSSUM: s.v += x < 0 ? -x : x; break;
        case R_SUMSQ: s.v += x * x; break;
        case R_POWSUM: s.v += (S)pow((double)(x < 0 ? -x : x), d.p); break;
        case R_CSQ: { double t = (double)x - c; s.v += (S)(t * t); break; }
        case R_SUMEXP: s.v += (S)exp((double)x - c); break;
        case R_ARGMAX: case R_ARGMIN: {
            bool mx = d.op == R_ARGMAX;
            if (s.i < 0 || (is_nan(x) && !is_nan(s.v)) ||
                (!is_nan(s.v) && (mx ? x > s.v : x < s.v))) {
                s.v = x;
                s.i = r;
            }
            break;
        }
    }
}

// combine two partial states, whichever indices each covers: the first NaN wins, and among
// equal values the first index (so any walk order gives the CPU's answer)
template <class S>
__device__ __forceinline__ red_state<S> red_combine(red_state<S> a, red_state<S> b, int op) {
    switch (op) {
        case R_PROD: a.v *= b.v; return a;
        case R_ALL: a.v = (a.v != 0 && b.v != 0) ? 1 : 0; return a;
        case R_ANY: a.v = (a.v != 0 || b.v != 0) ? 1 : 0; return a;
        case R_MAX: case R_MIN: case R_ABSMAX: case R_ABSMIN:
        case R_ARGMAX: case R_ARGMIN: {
            if (b.i < 0) return a;
            if (a.i < 0) return b;
            const bool an = is_nan(a.v), bn = is_nan(b.v);
            if (an || bn) return (an && bn) ? (b.i < a.i ? b : a) : (an ? a : b);
            bool mx = op == R_MAX || op == R_ABSMAX || op == R_ARGMAX;
            if (mx ? b.v > a.v : b.v < a.v) return b;
            return (b.v == a.v && b.i < a.i) ? b : a;
        }
        default: a.v += b.v; return a;
    }
}

template <class S>
__device__ __forceinline__ void red_store(const tl_red_dev& d, red_state<S> s, void* out,
                                          long long* idx, long long oo, double c) {
    if (d.has_idx) idx[oo] = s.i < 0 ? 0 : s.i;
    if (!d.has_out) return;
    if (d.int_state) {
        tl_st<long long>(out, oo, d.out_dtype, (long long)s.v);
        return;
    }
    double v = (double)s.v;
    switch (d.post) {
        case POST_DIV: v = v / d.post_a; break;
        case POST_SQRT_DIV: v = sqrt(v / d.post_a); break;
        case POST_ROOT: v = pow(v, 1.0 / d.post_a); break;
        case POST_LOG_CENTER: v = log(v) + c; break;
        default: break;
    }
    tl_st<double>(out, oo, d.out_dtype, v);
}

// One thread's walk over the reduced indices r, r + step, ... below hi, folded in that
// order. With one reduced dim of float32/float64 (the common case after coalescing) the
// values are read directly, several loads in flight before they are folded: the memory
// system needs that parallelism to run at full bandwidth, and the order is unchanged.
template <class S, class T>
__device__ __forceinline__ void red_walk_1d(red_state<S>& s, const T* p, long long r,
                                            long long hi, long long step, long long st,
                                            const tl_red_dev& d, double c) {
    if (d.op == R_SUM) {
        S a = s.v;
        for (; r + 7 * step < hi; r += 8 * step) {
            T x[8];
#pragma unroll
            for (int k = 0; k < 8; ++k) x[k] = p[(r + k * step) * st];
#pragma unroll
            for (int k = 0; k < 8; ++k) a += (S)x[k];
        }
        for (; r < hi; r += step) a += (S)p[r * st];
        s.v = a;
        return;
    }
    for (; r + 3 * step < hi; r += 4 * step) {
        T x[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) x[k] = p[(r + k * step) * st];
#pragma unroll
        for (int k = 0; k < 4; ++k) red_step<S>(s, (S)x[k], r + k * step, d, c);
    }
    for (; r < hi; r += step) red_step<S>(s, (S)p[r * st], r, d, c);
}

template <class S>
__device__ __forceinline__ void red_walk(red_state<S>& s, const void* src, long long ko,
                                         long long r, long long hi, long long step,
                                         const tl_red_dev& d, double c) {
    if (d.nr == 1 && !d.int_state && d.in_dtype == TLC_F32)
        red_walk_1d<S, float>(s, (const float*)src + ko, r, hi, step, d.rin[0], d, c);
    else if (d.nr == 1 && !d.int_state && d.in_dtype == TLC_F64)
        red_walk_1d<S, double>(s, (const double*)src + ko, r, hi, step, d.rin[0], d, c);
    else
        for (; r < hi; r += step)
            red_step<S>(s, red_ld<S>(src, ko + red_off(d, r), d), r, d, c);
}

// small reductions: one thread per output walks its reduced elements in order
template <class S>
__device__ __forceinline__ void reduce_thread(const void* src, void* out, long long* idx,
                                              const double* center, const tl_red_dev& d) {
    TL_FOR_EACH(o, d.nout) {
        long long ko, oo;
        red_kept(d, o, &ko, &oo);
        double c = d.has_center ? center[oo] : 0.0;
        red_state<S> s = red_identity<S>(d.op);
        red_walk<S>(s, src, ko, 0, d.nred, 1, d, c);
        red_store<S>(d, s, out, idx, oo, c);
    }
}

template <class S>
__device__ __forceinline__ red_state<S> red_shfl(red_state<S> s, int w) {
    red_state<S> o;
    o.v = __shfl_down_sync(0xffffffffu, s.v, w);
    o.i = __shfl_down_sync(0xffffffffu, s.i, w);
    return o;
}

// The block's states combined in a fixed tree: warp shuffles, then the warps' results
// through shared memory (blockDim.x a multiple of 32, at most 1024). The result is thread
// 0's; the caller synchronizes before sv/si are used again.
template <class S>
__device__ __forceinline__ red_state<S> red_block_tree(red_state<S> s, S* sv, long long* si,
                                                       int op) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    for (int w = 16; w > 0; w >>= 1) s = red_combine<S>(s, red_shfl<S>(s, w), op);
    if (lane == 0) {
        sv[warp] = s.v;
        si[warp] = s.i;
    }
    __syncthreads();
    if (warp == 0) {
        s = red_identity<S>(op);
        if (lane < nwarps) {
            s.v = sv[lane];
            s.i = si[lane];
        }
        for (int w = 16; w > 0; w >>= 1) s = red_combine<S>(s, red_shfl<S>(s, w), op);
    }
    return s;
}

// A float32 sum over contiguous p[lo, hi), walked by the block's threads (thread t, blockDim.x
// of them): the elements before the first 16-byte boundary one each, then 16-byte vectors
// (vector t, t + blockDim.x, ...; 4 vectors in flight per thread), then the tail one each.
// Each thread folds in a fixed order, in double, so the result depends on the sizes and
// the address's alignment only.
__device__ __forceinline__ double red_sum_vec_f32(double a, const float* p, long long lo,
                                                  long long hi) {
    const long long t = threadIdx.x, step = blockDim.x;
    long long head = (long long)((16 - ((unsigned long long)(p + lo) & 15)) & 15) / 4;
    if (head > hi - lo) head = hi - lo;
    if (t < head) a += (double)p[lo + t];
    const long long v0 = lo + head, nv = (hi - v0) / 4;
    const tl_v16<float>* pv = (const tl_v16<float>*)(p + v0);
    long long j = t;
    for (; j + 3 * step < nv; j += 4 * step) {
        tl_v16<float> x[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) x[k] = pv[j + k * step];
#pragma unroll
        for (int k = 0; k < 4; ++k)
#pragma unroll
            for (int e = 0; e < 4; ++e) a += (double)x[k].v[e];
    }
    for (; j < nv; j += step)
#pragma unroll
        for (int e = 0; e < 4; ++e) a += (double)pv[j].v[e];
    const long long tail = v0 + nv * 4 + t;
    if (tail < hi) a += (double)p[tail];
    return a;
}

// large reductions: d.parts blocks per output, block b taking part b % parts of output
// b / parts. Its threads walk the part with stride blockDim.x (neighbouring threads read
// neighbouring elements when the reduced dim is contiguous), then combine in a fixed tree:
// warp shuffles, then the warps' results through shared memory (blockDim.x a multiple of
// 32, at most 1024). With one part the result is stored; otherwise the part's state goes to
// `partial`, and tl_reduce_finish combines the parts in a fixed tree. The order of operations
// depends only on the launch shape, which depends only on the sizes.
template <class S>
__device__ __forceinline__ void reduce_block(const void* src, void* out, long long* idx,
                                             const double* center, red_state<S>* partial,
                                             const tl_red_dev& d) {
    __shared__ S sv[32];
    __shared__ long long si[32];
    const int t = threadIdx.x;
    const long long chunk = (d.nred + d.parts - 1) / d.parts;
    // float32 sums over a contiguous reduced dim: 16-byte loads
    const bool vec_sum = !d.int_state && d.op == R_SUM && d.in_dtype == TLC_F32 &&
                         d.nr == 1 && d.rin[0] == 1;
    for (long long b = blockIdx.x; b < d.nout * d.parts; b += gridDim.x) {
        const long long o = b / d.parts, part = b - o * d.parts;
        long long ko, oo;
        red_kept(d, o, &ko, &oo);
        const double c = d.has_center ? center[oo] : 0.0;
        red_state<S> s = red_identity<S>(d.op);
        const long long lo = part * chunk, hi = lo + chunk < d.nred ? lo + chunk : d.nred;
        if (vec_sum)
            s.v = (S)red_sum_vec_f32((double)s.v, (const float*)src + ko, lo, hi);
        else red_walk<S>(s, src, ko, lo + t, hi, blockDim.x, d, c);
        s = red_block_tree<S>(s, sv, si, d.op);
        if (t == 0) {
            if (d.parts == 1) red_store<S>(d, s, out, idx, oo, c);
            else partial[b] = s;
        }
        __syncthreads();
    }
}

// the parts of each output combined by a block (one per output) in a fixed tree: each
// thread folds parts t, t + blockDim.x, ... in order, then red_block_tree
template <class S>
__device__ __forceinline__ void reduce_finish(void* out, long long* idx, const double* center,
                                              const red_state<S>* partial,
                                              const tl_red_dev& d) {
    __shared__ S sv[32];
    __shared__ long long si[32];
    for (long long o = blockIdx.x; o < d.nout; o += gridDim.x) {
        long long ko, oo;
        red_kept(d, o, &ko, &oo);
        red_state<S> s = red_identity<S>(d.op);
        for (long long p = threadIdx.x; p < d.parts; p += blockDim.x)
            s = red_combine<S>(s, partial[o * d.parts + p], d.op);
        s = red_block_tree<S>(s, sv, si, d.op);
        if (threadIdx.x == 0) red_store<S>(d, s, out, idx, oo, d.has_center ? center[oo] : 0.0);
        __syncthreads();
    }
}

extern "C" __global__ void tl_reduce_thread(const void* src, void* out, long long* idx,
                                            const double* center, tl_red_dev d) {
    if (d.int_state) reduce_thread<long long>(src, out, idx, center, d);
    else reduce_thread<double>(src, out, idx, center, d);
}

extern "C" __global__ void tl_reduce_block(const void* src, void* out, long long* idx,
                                           const double* center, void* partial,
                                           tl_red_dev d) {
    if (d.int_state)
        reduce_block<long long>(src, out, idx, center, (red_state<long long>*)partial, d);
    else reduce_block<double>(src, out, idx, center, (red_state<double>*)partial, d);
}

extern "C" __global__ void tl_reduce_finish(void* out, long long* idx, const double* center,
                                            const void* partial, tl_red_dev d) {
    if (d.int_state)
        reduce_finish<long long>(out, idx, center, (const red_state<long long>*)partial, d);
    else reduce_finish<double>(out, idx, center, (const red_state<double>*)partial, d);
}

// ---- softmax / log_softmax over the middle dim of a contiguous [outer, n, inner] array -----
// one thread per (outer, inner) column: max, then the sum of exponentials in double, then
// the outputs; in the input's dtype (float32 or float64)
template <class T>
__device__ __forceinline__ void softmax_cols(const T* x, T* y, long long outer, long long n,
                                             long long inner, int want_log) {
    TL_FOR_EACH(c, outer * inner) {
        long long o = c / inner, i = c - o * inner;
        const T* px = x + o * n * inner + i;
        T* py = y + o * n * inner + i;
        double m = n > 0 ? (double)px[0] : 0.0;
        for (long long k = 1; k < n; ++k) {
            double v = (double)px[k * inner];
            if (v > m || v != v) m = v;
        }
        double s = 0.0;
        for (long long k = 0; k < n; ++k) s += exp((double)px[k * inner] - m);
        double ls = log(s);
        for (long long k = 0; k < n; ++k) {
            double v = (double)px[k * inner] - m;
            py[k * inner] = (T)(want_log ? v - ls : exp(v) / s);
        }
    }
}

// Softmax over contiguous rows (inner == 1): a block per row. Three walks over the row (its
// maximum, the sum of exponentials, the outputs), each coalesced; the row is read again
// from the cache, so memory sees one read and one write. The block combines in a fixed
// tree (warp shuffles, then shared memory), so the result depends on the sizes only.
__device__ __forceinline__ float sm_exp(float v) { return expf(v); }
__device__ __forceinline__ double sm_exp(double v) { return exp(v); }

template <class S>
__device__ __forceinline__ S block_combine(S v, bool is_max, S* shared) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    for (int w = 16; w > 0; w >>= 1) {
        S o = __shfl_down_sync(0xffffffffu, v, w);
        v = is_max ? ((v > o || v != v) ? v : o) : v + o;
    }
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < nw ? shared[lane] : shared[0];
        if (!is_max && lane >= nw) v = 0;
        for (int w = 16; w > 0; w >>= 1) {
            S o = __shfl_down_sync(0xffffffffu, v, w);
            v = is_max ? ((v > o || v != v) ? v : o) : v + o;
        }
        if (lane == 0) shared[0] = v;
    }
    __syncthreads();
    v = shared[0];
    __syncthreads();
    return v;
}

// the block's maximum of a row (NaN wins), every thread getting it
template <class T>
__device__ __forceinline__ T row_max(const T* px, long long n, T* sh_max) {
    T m = px[0];
    for (long long k = threadIdx.x; k < n; k += blockDim.x) {
        const T v = px[k];
        if (v > m || v != v) m = v;
    }
    return block_combine<T>(m, true, sh_max);
}

// Rows of whole 16-byte vectors (n a multiple of 16 / sizeof(T), x and y 16-byte aligned)
// are walked a vector per access: each thread's elements and their order change, so the
// double sum's rounding may; the maximum and the formula per element do not.
template <class T>
__device__ __forceinline__ bool sm_vec_ok(const T* x, const T* y, long long n) {
    return n % (16 / (long long)sizeof(T)) == 0 &&
           (((unsigned long long)x | (unsigned long long)y) & 15) == 0;
}

template <class T>
__device__ __forceinline__ T row_max_vec(const tl_v16<T>* pv, long long nv, T* sh_max) {
    T m = pv[0].v[0];
    for (long long k = threadIdx.x; k < nv; k += blockDim.x) {
        const tl_v16<T> xv = pv[k];
#pragma unroll
        for (int e = 0; e < 16 / (int)sizeof(T); ++e) {
            const T v = xv.v[e];
            if (v > m || v != v) m = v;
        }
    }
    return block_combine<T>(m, true, sh_max);
}

template <class T>
__device__ __forceinline__ void softmax_rows(const T* x, T* y, long long rows, long long n,
                                             int want_log) {
    __shared__ double sh_sum[32];
    __shared__ T sh_max[32];
    constexpr int W = 16 / (int)sizeof(T);
    typedef tl_v16<T> V;
    if (sm_vec_ok(x, y, n)) {
        const long long nv = n / W;
        for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
            const V* pv = (const V*)(x + r * n);
            V* qv = (V*)(y + r * n);
            const T m = row_max_vec<T>(pv, nv, sh_max);
            double s = 0.0;
            for (long long k = threadIdx.x; k < nv; k += blockDim.x) {
                const V xv = pv[k];
#pragma unroll
                for (int e = 0; e < W; ++e) s += (double)sm_exp(xv.v[e] - m);
            }
            s = block_combine<double>(s, false, sh_sum);
            const T ls = (T)log(s), inv = (T)(1.0 / s);
            for (long long k = threadIdx.x; k < nv; k += blockDim.x) {
                const V xv = pv[k];
                V o;
#pragma unroll
                for (int e = 0; e < W; ++e) {
                    const T v = xv.v[e] - m;
                    o.v[e] = want_log ? v - ls : sm_exp(v) * inv;
                }
                qv[k] = o;
            }
        }
        return;
    }
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* px = x + r * n;
        T* py = y + r * n;
        const T m = row_max<T>(px, n, sh_max);
        double s = 0.0;
        for (long long k = threadIdx.x; k < n; k += blockDim.x) s += (double)sm_exp(px[k] - m);
        s = block_combine<double>(s, false, sh_sum);
        const T ls = (T)log(s), inv = (T)(1.0 / s);
        for (long long k = threadIdx.x; k < n; k += blockDim.x) {
            const T v = px[k] - m;
            py[k] = want_log ? v - ls : sm_exp(v) * inv;
        }
    }
}

// float32 softmax (not log): the second walk writes exp(x - max), the third scales it, so
// exp is taken once per element. On an H200 (bench/results/gpu_tuning_H200_2026-11-27.log)
// this beat the three-walk kernel by 7% at 512 threads for 4096x4096; keeping each thread's
// values in registers instead was slower (fewer blocks fit an SM). float64 measured best
// with the three-walk kernel.
template <class T>
__device__ __forceinline__ void softmax_rows_store(const T* x, T* y, long long rows,
                                                   long long n) {
    __shared__ double sh_sum[32];
    __shared__ T sh_max[32];
    constexpr int W = 16 / (int)sizeof(T);
    typedef tl_v16<T> V;
    if (sm_vec_ok(x, y, n)) {
        const long long nv = n / W;
        for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
            const V* pv = (const V*)(x + r * n);
            V* qv = (V*)(y + r * n);
            const T m = row_max_vec<T>(pv, nv, sh_max);
            double s = 0.0;
            for (long long k = threadIdx.x; k < nv; k += blockDim.x) {
                const V xv = pv[k];
                V o;
#pragma unroll
                for (int e = 0; e < W; ++e) {
                    o.v[e] = sm_exp(xv.v[e] - m);
                    s += (double)o.v[e];
                }
                qv[k] = o;
            }
            s = block_combine<double>(s, false, sh_sum);
            const T inv = (T)(1.0 / s);
            for (long long k = threadIdx.x; k < nv; k += blockDim.x) {
                V o = qv[k];
#pragma unroll
                for (int e = 0; e < W; ++e) o.v[e] *= inv;
                qv[k] = o;
            }
        }
        return;
    }
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* px = x + r * n;
        T* py = y + r * n;
        const T m = row_max<T>(px, n, sh_max);
        double s = 0.0;
        for (long long k = threadIdx.x; k < n; k += blockDim.x) {
            const T e = sm_exp(px[k] - m);
            py[k] = e;
            s += (double)e;
        }
        s = block_combine<double>(s, false, sh_sum);
        const T inv = (T)(1.0 / s);
        for (long long k = threadIdx.x; k < n; k += blockDim.x) py[k] *= inv;
    }
}
extern "C" __global__ void tl_softmax_rows_st_f32(const float* x, float* y, long long rows,
                                                  long long n, int want_log) {
    softmax_rows_store<float>(x, y, rows, n);
}

extern "C" __global__ void tl_softmax_rows_f32(const float* x, float* y, long long rows,
                                               long long n, int want_log) {
    softmax_rows<float>(x, y, rows, n, want_log);
}
extern "C" __global__ void tl_softmax_rows_f64(const double* x, double* y, long long rows,
                                               long long n, int want_log) {
    softmax_rows<double>(x, y, rows, n, want_log);
}

extern "C" __global__ void tl_softmax_f32(const float* x, float* y, long long outer,
                                          long long n, long long inner, int want_log) {
    softmax_cols<float>(x, y, outer, n, inner, want_log);
}
extern "C" __global__ void tl_softmax_f64(const double* x, double* y, long long outer,
                                          long long n, long long inner, int want_log) {
    softmax_cols<double>(x, y, outer, n, inner, want_log);
}

// ---- cumsum / cumprod over the middle dim: one thread per column, in order ---------------
template <class T, class A>
__device__ __forceinline__ void scan_cols(const T* x, T* y, long long outer, long long n,
                                          long long inner, int prod) {
    TL_FOR_EACH(c, outer * inner) {
        long long o = c / inner, i = c - o * inner;
        const T* px = x + o * n * inner + i;
        T* py = y + o * n * inner + i;
        A acc = prod ? (A)1 : (A)0;
        for (long long k = 0; k < n; ++k) {
            acc = prod ? acc * (A)px[k * inner] : acc + (A)px[k * inner];
            py[k * inner] = (T)acc;
        }
    }
}

extern "C" __global__ void tl_scan_f32(const float* x, float* y, long long outer, long long n,
                                       long long inner, int prod) {
    scan_cols<float, double>(x, y, outer, n, inner, prod);
}
extern "C" __global__ void tl_scan_f64(const double* x, double* y, long long outer,
                                       long long n, long long inner, int prod) {
    scan_cols<double, double>(x, y, outer, n, inner, prod);
}
extern "C" __global__ void tl_scan_i64(const long long* x, long long* y, long long outer,
                                       long long n, long long inner, int prod) {
    scan_cols<long long, long long>(x, y, outer, n, inner, prod);
}

// ---- batched matrix product: out[b] = a[b] @ b[b], out contiguous (B, M, N) ----------------
// float32 accumulates in float, as cuBLAS does; float64 in double
struct tl_mat {
    long long sb, sr, sc;   // batch, row, column strides in elements
};

// Register tiles: a block of 256 threads computes a BM x BN tile of the output, each
// thread a TM x TN patch of it, from BK-deep slices of a and b staged in shared memory; the
// next slice is fetched into registers while the current one is multiplied. Edges are
// padded with zeros on load, so the inner loop has no bounds checks. Each output's K
// products are summed in a fixed order.
template <class T, int BM, int BN, int BK, int TM, int TN>
__device__ __forceinline__ void gemm_tiles(T* out, const T* a, const T* b, long long B,
                                           long long M, long long N, long long K, tl_mat ga,
                                           tl_mat gb) {
    constexpr int NT = (BM / TM) * (BN / TN);          // threads per block
    constexpr int LA = BM * BK / NT, LB = BK * BN / NT;  // elements each thread stages
    __shared__ T As[BK][BM + 4];           // a's slice, k-major; padded rows
    __shared__ T Bs[BK][BN + 4];           // keep staging stores off one bank
    const int tid = threadIdx.x, tx = tid % (BN / TN), ty = tid / (BN / TN);
    // which index neighbouring threads take when staging: the one contiguous in memory
    const bool a_k_fast = ga.sc == 1, b_n_fast = gb.sc == 1 || gb.sr != 1;
    const long long m0 = (long long)blockIdx.y * BM, n0 = (long long)blockIdx.x * BN;
    for (long long z = blockIdx.z; z < B; z += gridDim.z) {
        const T* pa = a + z * ga.sb;
        const T* pb = b + z * gb.sb;
        T acc[TM][TN];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = (T)0;
        T ra[LA], rb[LB];
        auto fetch = [&](long long k0) {
#pragma unroll
            for (int l = 0; l < LA; ++l) {
                const int e = tid + l * NT;
                const int kk = a_k_fast ? e % BK : e / BM, mm = a_k_fast ? e / BK : e % BM;
                const long long gm = m0 + mm, gk = k0 + kk;
                ra[l] = (gm < M && gk < K) ? pa[gm * ga.sr + gk * ga.sc] : (T)0;
            }
#pragma unroll
            for (int l = 0; l < LB; ++l) {
                const int e = tid + l * NT;
                const int nn = b_n_fast ? e % BN : e / BK, kk = b_n_fast ? e / BN : e % BK;
                const long long gk = k0 + kk, gn = n0 + nn;
                rb[l] = (gk < K && gn < N) ? pb[gk * gb.sr + gn * gb.sc] : (T)0;
            }
        };
        auto stage = [&]() {
#pragma unroll
            for (int l = 0; l < LA; ++l) {
                const int e = tid + l * NT;
                As[a_k_fast ? e % BK : e / BM][a_k_fast ? e / BK : e % BM] = ra[l];
            }
#pragma unroll
            for (int l = 0; l < LB; ++l) {
                const int e = tid + l * NT;
                Bs[b_n_fast ? e / BN : e % BK][b_n_fast ? e % BN : e / BK] = rb[l];
            }
        };
        fetch(0);
        for (long long k0 = 0; k0 < K; k0 += BK) {
            stage();
            __syncthreads();
            if (k0 + BK < K) fetch(k0 + BK);
#pragma unroll
            for (int kk = 0; kk < BK; ++kk) {
                T ar[TM], br[TN];
#pragma unroll
                for (int i = 0; i < TM; ++i) ar[i] = As[kk][ty * TM + i];
#pragma unroll
                for (int j = 0; j < TN; ++j) br[j] = Bs[kk][tx * TN + j];
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < TN; ++j) acc[i][j] += ar[i] * br[j];
            }
            __syncthreads();
        }
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const long long r = m0 + ty * TM + i;
            if (r >= M) break;
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                const long long c = n0 + tx * TN + j;
                if (c < N) out[(z * M + r) * N + c] = acc[i][j];
            }
        }
    }
}

// f32: 128 x 128 tiles for large products, 64 x 64 when there would be too few blocks
extern "C" __global__ void __launch_bounds__(256)
tl_bmm_f32(float* out, const float* a, const float* b, long long B, long long M, long long N,
           long long K, tl_mat ga, tl_mat gb) {
    gemm_tiles<float, 128, 128, 8, 8, 8>(out, a, b, B, M, N, K, ga, gb);
}
extern "C" __global__ void __launch_bounds__(256)
tl_bmm_small_f32(float* out, const float* a, const float* b, long long B, long long M,
                 long long N, long long K, tl_mat ga, tl_mat gb) {
    gemm_tiles<float, 64, 64, 8, 4, 4>(out, a, b, B, M, N, K, ga, gb);
}
extern "C" __global__ void __launch_bounds__(256)
tl_bmm_f64(double* out, const double* a, const double* b, long long B, long long M,
           long long N, long long K, tl_mat ga, tl_mat gb) {
    gemm_tiles<double, 64, 64, 8, 4, 4>(out, a, b, B, M, N, K, ga, gb);
}
