// nn_ops.cu: the fused nn kernels of the CUDA back end, the device twins of the CPU's
// tensorlib/_core/cpu/cpu_nn_impl.h (see cpu_nn.h for what each computes), float32 and
// float64. tensorlib/cuda/_nn.py fills the descriptor from the CPU's tl_nn_args and passes
// every tensor as its own pointer argument.
//
// Determinism: no float atomics. An output element is written by one thread; a sum over a
// row or a channel is a per-thread strided walk and a shared-memory tree in double, fixed by
// the launch shape. Where a CPU kernel adds into an output element in a known order
// (col2im, the pooling backwards, the index kernels), the device kernel gathers in that same
// order, so those results equal the CPU's bit for bit.
#include "tl_ew_device.h"

// tl_nn_args of cpu_nn.h less its pointers; `have` flags the optional pointer arguments
struct tl_nn_dev {
    int flag, mode, rnd, have;
    long long n, c;
    long long in[3], out[3], k[3], s[3], p[3], dil[3];
    long long ld, sp, dp, m, groups, hw, divisor, ignore_index, mcol;
    long long rdims[6], rstr[6];
    double eps, momentum, smoothing;
};

// bits of tl_nn_dev.have
enum { NN_W = 1, NN_B = 2, NN_Y = 4, NN_GW = 8, NN_GB = 16, NN_RMEAN = 32, NN_RVAR = 64,
       NN_S0 = 128, NN_S1 = 256 };
enum { NN_AFFINE_LAYER = 1, NN_AFFINE_GROUP = 2 };

#define NN_NONE 0x7fffffffffffffffLL

template <class T> __device__ __forceinline__ T nn_sigm(T x);
template <> __device__ __forceinline__ float nn_sigm<float>(float x) { return tl_sigmoidf(x); }
template <> __device__ __forceinline__ double nn_sigm<double>(double x) { return tl_sigmoid(x); }

// the sum (or max) of v over the block, in every thread; `part` is 32 doubles of shared memory
template <class Op>
__device__ __forceinline__ double nn_allreduce(double v, Op op, double identity, double* part) {
    v = tl_block_reduce(v, op, identity, part);
    if (threadIdx.x == 0) part[0] = v;
    __syncthreads();
    v = part[0];
    __syncthreads();
    return v;
}

// ---- convolution: im2col / col2im over 3 spatial dims --------------------------------------

template <class T>
__device__ __forceinline__ void nn_im2col(const tl_nn_dev& d, const T* x, T* y) {
    const long long D = d.in[0], H = d.in[1], W = d.in[2];
    const long long OH = d.out[1], OW = d.out[2], L = d.out[0] * OH * OW;
    const long long KH = d.k[1], KW = d.k[2], K = d.k[0] * KH * KW;
    const long long cols = d.n * L;
    TL_FOR_EACH(i, d.c * K * cols) {
        const long long row = i / cols, col = i - row * cols;
        const long long ci = row / K, kk = row - ci * K, ni = col / L, l = col - ni * L;
        const long long kd = kk / (KH * KW), kh = (kk / KW) % KH, kw = kk % KW;
        const long long od = l / (OH * OW), oh = (l / OW) % OH, ow = l % OW;
        const long long id = od * d.s[0] - d.p[0] + kd * d.dil[0];
        const long long ih = oh * d.s[1] - d.p[1] + kh * d.dil[1];
        const long long iw = ow * d.s[2] - d.p[2] + kw * d.dil[2];
        T v = (T)0;
        if (id >= 0 && id < D && ih >= 0 && ih < H && iw >= 0 && iw < W)
            v = x[(((ni * d.c + ci) * D + id) * H + ih) * W + iw];
        y[row * d.ld + col] = v;
    }
}

// the grid position o along one dim that kernel tap kk reads input position i from, or -1
__device__ __forceinline__ long long nn_tap(long long i, long long kk, long long s, long long p,
                                            long long dil, long long out) {
    const long long t = i + p - kk * dil;
    if (t < 0 || t % s != 0) return -1;
    const long long o = t / s;
    return o < out ? o : -1;
}

// y = the sum of the column entries of each input element, gathered in the CPU's order
// (kernel taps in order; each tap reaches an input element from at most one grid position)
template <class T>
__device__ __forceinline__ void nn_col2im(const tl_nn_dev& d, const T* x, T* y) {
    const long long D = d.in[0], H = d.in[1], W = d.in[2], I = D * H * W;
    const long long OH = d.out[1], OW = d.out[2], L = d.out[0] * OH * OW;
    const long long KD = d.k[0], KH = d.k[1], KW = d.k[2], K = KD * KH * KW;
    TL_FOR_EACH(i, d.n * d.c * I) {
        const long long pl = i / I, e = i - pl * I, ni = pl / d.c, ci = pl - ni * d.c;
        const long long id = e / (H * W), ih = (e / W) % H, iw = e % W;
        const T* src = x + ci * K * d.ld + ni * L;
        T acc = (T)0;
        for (long long kd = 0; kd < KD; ++kd) {
            const long long od = nn_tap(id, kd, d.s[0], d.p[0], d.dil[0], d.out[0]);
            if (od < 0) continue;
            for (long long kh = 0; kh < KH; ++kh) {
                const long long oh = nn_tap(ih, kh, d.s[1], d.p[1], d.dil[1], OH);
                if (oh < 0) continue;
                for (long long kw = 0; kw < KW; ++kw) {
                    const long long ow = nn_tap(iw, kw, d.s[2], d.p[2], d.dil[2], OW);
                    if (ow < 0) continue;
                    acc += src[((kd * KH + kh) * KW + kw) * d.ld + (od * OH + oh) * OW + ow];
                }
            }
        }
        y[i] = acc;
    }
}

// A small convolution in one launch (the im2col + GEMM + copy path is three, and on a GPU
// each launch costs more host time than this kernel's work): one thread per output element
// of y [n, m, out] (m = output channels, c = input channels, split into `groups`), the
// output columns fastest so that neighbouring threads read neighbouring inputs. The sum runs
// in T in a fixed order (input channel, then kd, kh, kw), the bias (NN_B) added last.
// Index math in I: int when the host found every offset below 2^31 (flag), since 64-bit
// division and multiplies cost a GPU several times the work of a short sum.
template <class T, class I>
__device__ __forceinline__ void nn_conv_direct(const tl_nn_dev& d, const T* x, const T* w,
                                               const T* b, T* y) {
    const I D = (I)d.in[0], H = (I)d.in[1], W = (I)d.in[2], DHW = D * H * W;
    const I OH = (I)d.out[1], OW = (I)d.out[2], OHW = OH * OW, L = (I)d.out[0] * OHW;
    const I KD = (I)d.k[0], KH = (I)d.k[1], KW = (I)d.k[2], K = KD * KH * KW;
    const I C = (I)d.c, M = (I)d.m, CG = C / (I)d.groups, MG = M / (I)d.groups;
    const I s0 = (I)d.s[0], s1 = (I)d.s[1], s2 = (I)d.s[2];
    const I dl0 = (I)d.dil[0], dl1 = (I)d.dil[1], dl2 = (I)d.dil[2];
    const bool bias = (d.have & NN_B) != 0;
    TL_FOR_EACH(i64, d.n * d.m * d.out[0] * OHW) {
        const I i = (I)i64;
        const I pl = i / L, l = i - pl * L, ni = pl / M, co = pl - ni * M;
        const I od = l / OHW, r = l - od * OHW, oh = r / OW, ow = r - oh * OW;
        const I d0 = od * s0 - (I)d.p[0], h0 = oh * s1 - (I)d.p[1], w0 = ow * s2 - (I)d.p[2];
        const T* xs = x + (ni * C + (co / MG) * CG) * DHW;
        const T* ws = w + co * CG * K;
        T acc = (T)0;
        for (I ci = 0; ci < CG; ++ci, xs += DHW, ws += K) {
            for (I kd = 0; kd < KD; ++kd) {
                const I id = d0 + kd * dl0;
                if (id < 0 || id >= D) continue;
                for (I kh = 0; kh < KH; ++kh) {
                    const I ih = h0 + kh * dl1;
                    if (ih < 0 || ih >= H) continue;
                    const T* row = xs + (id * H + ih) * W;
                    const T* wr = ws + (kd * KH + kh) * KW;
                    for (I kw = 0; kw < KW; ++kw) {
                        const I iw = w0 + kw * dl2;
                        if (iw >= 0 && iw < W) acc += row[iw] * wr[kw];
                    }
                }
            }
        }
        y[i64] = bias ? acc + b[co] : acc;
    }
}

template <class T>
__device__ __forceinline__ void nn_bias_add(const tl_nn_dev& d, const T* w, T* y) {
    TL_FOR_EACH(i, d.n * d.c * d.m) y[i] += w[(i / d.m) % d.c];
}

// gw[c] = the sum of g [n, c, m] over n and m: a block per channel
template <class T>
__device__ __forceinline__ void nn_bias_grad(const tl_nn_dev& d, const T* g, T* gw) {
    __shared__ double part[32];
    const long long cnt = d.n * d.m;
    for (long long ci = blockIdx.x; ci < d.c; ci += gridDim.x) {
        double acc = 0;
        for (long long j = threadIdx.x; j < cnt; j += blockDim.x) {
            const long long ni = j / d.m;
            acc += (double)g[(ni * d.c + ci) * d.m + (j - ni * d.m)];
        }
        acc = tl_block_reduce(acc, tl_sum_op(), 0.0, part);
        if (threadIdx.x == 0) gw[ci] = (T)acc;
    }
}

template <class T>
__device__ __forceinline__ void nn_accumulate(const tl_nn_dev& d, const T* x, T* y) {
    TL_FOR_EACH(i, d.n) y[i] += x[i];
}

// ---- pooling over 2-D planes (in[1] x in[2] -> out[1] x out[2]) ---------------------------

template <class T>
__device__ __forceinline__ void nn_max_pool(const tl_nn_dev& d, const T* x, T* y,
                                            long long* ix) {
    const long long H = d.in[1], W = d.in[2], OH = d.out[1], OW = d.out[2];
    TL_FOR_EACH(i, d.n * d.c * OH * OW) {
        const long long pl = i / (OH * OW), oh = (i / OW) % OH, ow = i % OW;
        const T* xp = x + pl * H * W;
        long long h0 = oh * d.s[1] - d.p[1], w0 = ow * d.s[2] - d.p[2];
        const long long h1 = h0 + (d.k[1] - 1) * d.dil[1] + 1;
        const long long w1 = w0 + (d.k[2] - 1) * d.dil[2] + 1;
        while (h0 < 0) h0 += d.dil[1];
        while (w0 < 0) w0 += d.dil[2];
        long long best = h0 * W + w0;
        T bv = -(T)INFINITY;
        for (long long h = h0; h < h1 && h < H; h += d.dil[1])
            for (long long w = w0; w < w1 && w < W; w += d.dil[2]) {
                const T v = xp[h * W + w];
                if (v > bv || v != v) {   // NaN propagates: each NaN takes the place
                    bv = v;
                    best = h * W + w;
                }
            }
        y[i] = bv;
        ix[i] = best;
    }
}

// an average pool output's window, clipped to the input, and its divisor (cpu_nn_impl.h)
__device__ __forceinline__ long long nn_avg_window(const tl_nn_dev& d, long long oh,
                                                   long long ow, long long* h0, long long* h1,
                                                   long long* w0, long long* w1) {
    const long long H = d.in[1], W = d.in[2];
    long long hs = oh * d.s[1] - d.p[1], ws = ow * d.s[2] - d.p[2];
    long long he = hs + d.k[1], we = ws + d.k[2];
    if (he > H + d.p[1]) he = H + d.p[1];
    if (we > W + d.p[2]) we = W + d.p[2];
    const long long pool = (he - hs) * (we - ws);
    if (hs < 0) hs = 0;
    if (ws < 0) ws = 0;
    if (he > H) he = H;
    if (we > W) we = W;
    *h0 = hs; *h1 = he; *w0 = ws; *w1 = we;
    if (d.divisor) return d.divisor;
    if (d.flag) return pool;
    return (he - hs) * (we - ws);
}

template <class T>
__device__ __forceinline__ void nn_avg_pool(const tl_nn_dev& d, const T* x, T* y) {
    const long long H = d.in[1], W = d.in[2], OH = d.out[1], OW = d.out[2];
    TL_FOR_EACH(i, d.n * d.c * OH * OW) {
        const long long pl = i / (OH * OW), oh = (i / OW) % OH, ow = i % OW;
        const T* xp = x + pl * H * W;
        long long h0, h1, w0, w1;
        const long long div = nn_avg_window(d, oh, ow, &h0, &h1, &w0, &w1);
        double acc = 0;
        for (long long h = h0; h < h1; ++h)
            for (long long w = w0; w < w1; ++w) acc += (double)xp[h * W + w];
        y[i] = (h0 >= h1 || w0 >= w1) ? (T)0 : (T)(acc / (double)div);
    }
}

// the grid positions [*lo, *hi] whose window of k taps at stride s, padding p may hold i
__device__ __forceinline__ void nn_covering(long long i, long long k, long long s, long long p,
                                            long long out, long long* lo, long long* hi) {
    const long long a = i + p - k + 1, b = i + p;
    *lo = a <= 0 ? 0 : (a + s - 1) / s;
    *hi = b < 0 ? -1 : b / s;
    if (*hi > out - 1) *hi = out - 1;
}

// grad_input of an average pool, gathered per input element in the CPU's (oh, ow) order
template <class T>
__device__ __forceinline__ void nn_avg_pool_bwd(const tl_nn_dev& d, const T* g, T* y) {
    const long long H = d.in[1], W = d.in[2], OH = d.out[1], OW = d.out[2];
    TL_FOR_EACH(i, d.n * d.c * H * W) {
        const long long pl = i / (H * W), h = (i / W) % H, w = i % W;
        const T* gp = g + pl * OH * OW;
        long long oh0, oh1, ow0, ow1;
        nn_covering(h, d.k[1], d.s[1], d.p[1], OH, &oh0, &oh1);
        nn_covering(w, d.k[2], d.s[2], d.p[2], OW, &ow0, &ow1);
        T acc = (T)0;
        for (long long oh = oh0; oh <= oh1; ++oh)
            for (long long ow = ow0; ow <= ow1; ++ow) {
                long long h0, h1, w0, w1;
                const long long div = nn_avg_window(d, oh, ow, &h0, &h1, &w0, &w1);
                if (h < h0 || h >= h1 || w < w0 || w >= w1) continue;
                acc += (T)((double)gp[oh * OW + ow] / (double)div);
            }
        y[i] = acc;
    }
}

// PyTorch's adaptive windows: [floor(o * in / out), ceil((o + 1) * in / out))
__device__ __forceinline__ long long nn_astart(long long o, long long in, long long out) {
    return (o * in) / out;
}
__device__ __forceinline__ long long nn_aend(long long o, long long in, long long out) {
    return ((o + 1) * in + out - 1) / out;
}

template <class T>
__device__ __forceinline__ void nn_adapt_avg(const tl_nn_dev& d, const T* x, T* y) {
    const long long H = d.in[1], W = d.in[2], OH = d.out[1], OW = d.out[2];
    TL_FOR_EACH(i, d.n * d.c * OH * OW) {
        const long long pl = i / (OH * OW), oh = (i / OW) % OH, ow = i % OW;
        const T* xp = x + pl * H * W;
        const long long h0 = nn_astart(oh, H, OH), h1 = nn_aend(oh, H, OH);
        const long long w0 = nn_astart(ow, W, OW), w1 = nn_aend(ow, W, OW);
        double acc = 0;
        for (long long h = h0; h < h1; ++h)
            for (long long w = w0; w < w1; ++w) acc += (double)xp[h * W + w];
        y[i] = (T)(acc / (double)((h1 - h0) * (w1 - w0)));
    }
}

// the adaptive windows holding input position i: o from floor(i * out / in) to
// ceil((i + 1) * out / in) - 1
template <class T>
__device__ __forceinline__ void nn_adapt_avg_bwd(const tl_nn_dev& d, const T* g, T* y) {
    const long long H = d.in[1], W = d.in[2], OH = d.out[1], OW = d.out[2];
    TL_FOR_EACH(i, d.n * d.c * H * W) {
        const long long pl = i / (H * W), h = (i / W) % H, w = i % W;
        const T* gp = g + pl * OH * OW;
        long long oh1 = ((h + 1) * OH + H - 1) / H - 1, ow1 = ((w + 1) * OW + W - 1) / W - 1;
        if (oh1 > OH - 1) oh1 = OH - 1;
        if (ow1 > OW - 1) ow1 = OW - 1;
        T acc = (T)0;
        for (long long oh = h * OH / H; oh <= oh1; ++oh) {
            const long long h0 = nn_astart(oh, H, OH), h1 = nn_aend(oh, H, OH);
            if (h < h0 || h >= h1) continue;
            for (long long ow = w * OW / W; ow <= ow1; ++ow) {
                const long long w0 = nn_astart(ow, W, OW), w1 = nn_aend(ow, W, OW);
                if (w < w0 || w >= w1) continue;
                acc += (T)((double)gp[oh * OW + ow] / (double)((h1 - h0) * (w1 - w0)));
            }
        }
        y[i] = acc;
    }
}

template <class T>
__device__ __forceinline__ void nn_adapt_max(const tl_nn_dev& d, const T* x, T* y,
                                             long long* ix) {
    const long long H = d.in[1], W = d.in[2], OH = d.out[1], OW = d.out[2];
    TL_FOR_EACH(i, d.n * d.c * OH * OW) {
        const long long pl = i / (OH * OW), oh = (i / OW) % OH, ow = i % OW;
        const T* xp = x + pl * H * W;
        const long long h0 = nn_astart(oh, H, OH), h1 = nn_aend(oh, H, OH);
        const long long w0 = nn_astart(ow, W, OW), w1 = nn_aend(ow, W, OW);
        long long best = h0 * W + w0;
        T bv = -(T)INFINITY;
        for (long long h = h0; h < h1; ++h)
            for (long long w = w0; w < w1; ++w) {
                const T v = xp[h * W + w];
                if (v > bv || v != v) {
                    bv = v;
                    best = h * W + w;
                }
            }
        y[i] = bv;
        ix[i] = best;
    }
}

// ---- index kernels: y planes of dp zeroed (tl_nn_zero), then one thread per plane walks its
// sp sources in order, as the CPU does (add: y[idx[j]] += g[j]; set: y[idx[j]] = x[j]). An
// index outside its plane is skipped; bad[0] gets the smallest source position holding one.

template <class T>
__device__ __forceinline__ void nn_zero(long long n, T* y) {
    TL_FOR_EACH(i, n) y[i] = (T)0;
}

template <class T>
__device__ __forceinline__ void nn_index(const tl_nn_dev& d, const T* src, const long long* idx,
                                         T* y, long long* bad, int add) {
    TL_FOR_EACH(pl, d.n) {
        const long long* ix = idx + pl * d.sp;
        const T* s = src + pl * d.sp;
        T* yp = y + pl * d.dp;
        for (long long j = 0; j < d.sp; ++j) {
            const long long v = ix[j];
            if (v < 0 || v >= d.dp) {
                atomicMin(bad, pl * d.sp + j);
                continue;
            }
            if (add) yp[v] += s[j]; else yp[v] = s[j];
        }
    }
}

// ---- batch norm over [n, c, m]: a block per channel -----------------------------------------

template <class T>
__device__ __forceinline__ void nn_bn_fwd(const tl_nn_dev& d, const T* x, const T* w,
                                          const T* b, T* y, T* mean_out, T* rstd_out, T* rmean,
                                          T* rvar) {
    __shared__ double part[32];
    const long long N = d.n, C = d.c, M = d.m, cnt = N * M;
    for (long long ci = blockIdx.x; ci < C; ci += gridDim.x) {
        double mean, invstd;
        if (d.flag) {
            double s = 0, q = 0;
            for (long long j = threadIdx.x; j < cnt; j += blockDim.x) {
                const long long ni = j / M;
                s += (double)x[(ni * C + ci) * M + (j - ni * M)];
            }
            mean = nn_allreduce(s, tl_sum_op(), 0.0, part) / (double)cnt;
            for (long long j = threadIdx.x; j < cnt; j += blockDim.x) {
                const long long ni = j / M;
                const double t = (double)x[(ni * C + ci) * M + (j - ni * M)] - mean;
                q += t * t;
            }
            q = nn_allreduce(q, tl_sum_op(), 0.0, part);
            invstd = 1.0 / sqrt(q / (double)cnt + d.eps);
            if (threadIdx.x == 0) {
                mean_out[ci] = (T)mean;
                rstd_out[ci] = (T)invstd;
                if (d.have & NN_RMEAN)
                    rmean[ci] = (T)((1 - d.momentum) * (double)rmean[ci] + d.momentum * mean);
                if (d.have & NN_RVAR) {
                    const double unb = cnt > 1 ? q / (double)(cnt - 1) : (double)INFINITY;
                    rvar[ci] = (T)((1 - d.momentum) * (double)rvar[ci] + d.momentum * unb);
                }
            }
        } else {
            mean = (double)rmean[ci];
            invstd = 1.0 / sqrt((double)rvar[ci] + d.eps);
        }
        const double gam = (d.have & NN_W) ? (double)w[ci] : 1.0;
        const double bet = (d.have & NN_B) ? (double)b[ci] : 0.0;
        const double sc = gam * invstd, sh = bet - mean * sc;
        for (long long j = threadIdx.x; j < cnt; j += blockDim.x) {
            const long long ni = j / M, o = (ni * C + ci) * M + (j - ni * M);
            y[o] = (T)(x[o] * sc + sh);
        }
    }
}

template <class T>
__device__ __forceinline__ void nn_bn_bwd(const tl_nn_dev& d, const T* x, const T* g,
                                          const T* w, const T* smean, const T* srstd,
                                          const T* rmean, const T* rvar, T* y, T* gw, T* gb) {
    __shared__ double part[32];
    const long long N = d.n, C = d.c, M = d.m, cnt = N * M;
    for (long long ci = blockIdx.x; ci < C; ci += gridDim.x) {
        double mean, invstd;
        if (d.flag) {
            mean = (double)smean[ci];
            invstd = (double)srstd[ci];
        } else {
            mean = (double)rmean[ci];
            invstd = 1.0 / sqrt((double)rvar[ci] + d.eps);
        }
        double sg = 0, sgx = 0;
        for (long long j = threadIdx.x; j < cnt; j += blockDim.x) {
            const long long ni = j / M, o = (ni * C + ci) * M + (j - ni * M);
            sg += (double)g[o];
            sgx += (double)g[o] * ((double)x[o] - mean);
        }
        sg = nn_allreduce(sg, tl_sum_op(), 0.0, part);
        sgx = nn_allreduce(sgx, tl_sum_op(), 0.0, part);
        if (threadIdx.x == 0) {
            if (d.have & NN_GB) gb[ci] = (T)sg;
            if (d.have & NN_GW) gw[ci] = (T)(sgx * invstd);
        }
        if (!(d.have & NN_Y)) continue;
        const double gam = (d.have & NN_W) ? (double)w[ci] : 1.0;
        const double k = gam * invstd;
        const double mg = sg / (double)cnt, c2 = invstd * invstd * sgx / (double)cnt;
        for (long long j = threadIdx.x; j < cnt; j += blockDim.x) {
            const long long ni = j / M, o = (ni * C + ci) * M + (j - ni * M);
            y[o] = d.flag ? (T)(k * ((double)g[o] - mg - ((double)x[o] - mean) * c2))
                          : (T)(k * (double)g[o]);
        }
    }
}

// ---- layer / group norm: n rows of m elements, a block per row ----------------------------

__device__ __forceinline__ long long nn_affine_at(const tl_nn_dev& d, long long r, long long e) {
    return d.mode == NN_AFFINE_LAYER ? e : (r % d.groups) * d.c + e / d.hw;
}

template <class T>
__device__ __forceinline__ void nn_rownorm_fwd(const tl_nn_dev& d, const T* x, const T* w,
                                               const T* b, T* y, T* mean_out, T* rstd_out) {
    __shared__ double part[32];
    const long long M = d.m;
    for (long long r = blockIdx.x; r < d.n; r += gridDim.x) {
        const T* xr = x + r * M;
        T* yr = y + r * M;
        double s = 0, q = 0;
        for (long long i = threadIdx.x; i < M; i += blockDim.x) s += (double)xr[i];
        s = nn_allreduce(s, tl_sum_op(), 0.0, part);
        const double mean = M ? s / (double)M : 0.0;
        for (long long i = threadIdx.x; i < M; i += blockDim.x) {
            const double t = (double)xr[i] - mean;
            q += t * t;
        }
        q = nn_allreduce(q, tl_sum_op(), 0.0, part);
        const double rstd = 1.0 / sqrt((M ? q / (double)M : 0.0) + d.eps);
        if (threadIdx.x == 0) {
            mean_out[r] = (T)mean;
            rstd_out[r] = (T)rstd;
        }
        for (long long i = threadIdx.x; i < M; i += blockDim.x) {
            double v = ((double)xr[i] - mean) * rstd;
            if (d.have & NN_W) v *= (double)w[nn_affine_at(d, r, i)];
            if (d.have & NN_B) v += (double)b[nn_affine_at(d, r, i)];
            yr[i] = (T)v;
        }
    }
}

template <class T>
__device__ __forceinline__ void nn_rownorm_bwd(const tl_nn_dev& d, const T* x, const T* g,
                                               const T* w, const T* smean, const T* srstd,
                                               T* y) {
    __shared__ double part[32];
    const long long M = d.m;
    for (long long r = blockIdx.x; r < d.n; r += gridDim.x) {
        const T* xr = x + r * M;
        const T* gr = g + r * M;
        T* yr = y + r * M;
        const double mean = (double)smean[r], rstd = (double)srstd[r];
        double s1 = 0, s2 = 0;
        for (long long i = threadIdx.x; i < M; i += blockDim.x) {
            const double gam = (d.have & NN_W) ? (double)w[nn_affine_at(d, r, i)] : 1.0;
            const double gx = (double)gr[i] * gam;
            s1 += gx;
            s2 += gx * ((double)xr[i] - mean) * rstd;
        }
        s1 = nn_allreduce(s1, tl_sum_op(), 0.0, part) / (double)(M ? M : 1);
        s2 = nn_allreduce(s2, tl_sum_op(), 0.0, part) / (double)(M ? M : 1);
        for (long long i = threadIdx.x; i < M; i += blockDim.x) {
            const double gam = (d.have & NN_W) ? (double)w[nn_affine_at(d, r, i)] : 1.0;
            const double xh = ((double)xr[i] - mean) * rstd;
            yr[i] = (T)(rstd * ((double)gr[i] * gam - s1 - xh * s2));
        }
    }
}

// layer norm's weight/bias gradients: a block of NN_WG_X columns x NN_WG_Y row lanes; lane y
// sums rows y, y + NN_WG_Y, ... of its column, then the lanes' sums are added in lane order
#define NN_WG_X 32
#define NN_WG_Y 16
template <class T>
__device__ __forceinline__ void nn_layer_wgrad(const tl_nn_dev& d, const T* x, const T* g,
                                               const T* smean, const T* srstd, T* gw, T* gb) {
    __shared__ double pw[NN_WG_Y][NN_WG_X], pb[NN_WG_Y][NN_WG_X];
    const long long M = d.m;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long step = (long long)gridDim.x * NN_WG_X;
    for (long long e0 = (long long)blockIdx.x * NN_WG_X; e0 < M; e0 += step) {
        const long long e = e0 + tx;
        double sw = 0, sb = 0;
        if (e < M)
            for (long long r = ty; r < d.n; r += NN_WG_Y) {
                const double gv = (double)g[r * M + e];
                sb += gv;
                sw += gv * (((double)x[r * M + e] - (double)smean[r]) * (double)srstd[r]);
            }
        pw[ty][tx] = sw;
        pb[ty][tx] = sb;
        __syncthreads();
        if (ty == 0 && e < M) {
            for (int q = 1; q < NN_WG_Y; ++q) {
                sw += pw[q][tx];
                sb += pb[q][tx];
            }
            if (d.have & NN_GW) gw[e] = (T)sw;
            if (d.have & NN_GB) gb[e] = (T)sb;
        }
        __syncthreads();
    }
}

// group norm's weight/bias gradients: a block per channel (c: channels per group)
template <class T>
__device__ __forceinline__ void nn_group_wgrad(const tl_nn_dev& d, const T* x, const T* g,
                                               const T* smean, const T* srstd, T* gw, T* gb) {
    __shared__ double part[32];
    const long long M = d.m, G = d.groups, Cg = d.c, HW = d.hw, cnt = d.n / G * HW;
    for (long long ch = blockIdx.x; ch < G * Cg; ch += gridDim.x) {
        const long long gi = ch / Cg, j = ch % Cg;
        double sw = 0, sb = 0;
        for (long long q = threadIdx.x; q < cnt; q += blockDim.x) {
            const long long ni = q / HW, i = q - ni * HW, r = ni * G + gi;
            const long long o = r * M + j * HW + i;
            const double gv = (double)g[o];
            sb += gv;
            sw += gv * (((double)x[o] - (double)smean[r]) * (double)srstd[r]);
        }
        sw = nn_allreduce(sw, tl_sum_op(), 0.0, part);
        sb = nn_allreduce(sb, tl_sum_op(), 0.0, part);
        if (threadIdx.x == 0) {
            if (d.have & NN_GW) gw[ch] = (T)sw;
            if (d.have & NN_GB) gb[ch] = (T)sb;
        }
    }
}

// ---- recurrent cells: a thread per (row, hidden unit), the CPU's expressions in T ---------

template <class T>
__device__ __forceinline__ void nn_lstm_fwd(const tl_nn_dev& d, const T* ig, const T* hg,
                                            const T* cx, const T* ib, const T* hb, T* hy, T* cy,
                                            T* ws) {
    const long long H = d.m, G = 4 * H;
    TL_FOR_EACH(i, d.n * H) {
        const long long r = i / H, j = i - r * H;
        T a[4];
        for (int q = 0; q < 4; ++q) {
            const long long o = r * G + q * H + j;
            a[q] = d.flag ? (ig[o] + hg[o]) + (ib[q * H + j] + hb[q * H + j]) : ig[o] + hg[o];
        }
        const T gi = nn_sigm<T>(a[0]), gf = nn_sigm<T>(a[1]);
        const T gg = tl_tanh(a[2]), go = nn_sigm<T>(a[3]);
        T* w = ws + r * G + j;
        w[0] = gi;
        w[H] = gf;
        w[2 * H] = gg;
        w[3 * H] = go;
        const T c = gf * cx[i] + gi * gg;
        cy[i] = c;
        hy[i] = go * tl_tanh(c);
    }
}

template <class T>
__device__ __forceinline__ void nn_lstm_bwd(const tl_nn_dev& d, const T* ghy, const T* gcy,
                                            const T* cx, const T* cy, const T* ws, T* gg,
                                            T* gcx) {
    const long long H = d.m, G = 4 * H;
    TL_FOR_EACH(i, d.n * H) {
        const long long r = i / H, j = i - r * H;
        const T* w = ws + r * G + j;
        T* o = gg + r * G + j;
        const T tc = tl_tanh(cy[i]), go = w[3 * H];
        const T gh = (d.have & NN_S0) ? ghy[i] : (T)0;
        const T gc = ((d.have & NN_S1) ? gcy[i] : (T)0) + gh * go * ((T)1 - tc * tc);
        o[3 * H] = gh * tc * go * ((T)1 - go);
        const T a = w[0], f = w[H], g = w[2 * H];
        o[0] = gc * g * a * ((T)1 - a);
        o[H] = gc * cx[i] * f * ((T)1 - f);
        o[2 * H] = gc * a * ((T)1 - g * g);
        gcx[i] = gc * f;
    }
}

// ws per row: r, z, n, the hidden part of n before the reset gate, hx
template <class T>
__device__ __forceinline__ void nn_gru_fwd(const tl_nn_dev& d, const T* ig, const T* hg,
                                           const T* hx, const T* ib, const T* hb, T* hy, T* ws) {
    const long long H = d.m, G = 3 * H;
    TL_FOR_EACH(i, d.n * H) {
        const long long r = i / H, j = i - r * H;
        const T* a = ig + r * G + j;
        const T* h = hg + r * G + j;
        T* w = ws + r * 5 * H + j;
        T gr, gz, hn, pre;
        if (d.flag) {
            gr = nn_sigm<T>((a[0] + h[0]) + (ib[j] + hb[j]));
            gz = nn_sigm<T>((a[H] + h[H]) + (ib[H + j] + hb[H + j]));
            hn = h[2 * H] + hb[2 * H + j];
            pre = (a[2 * H] + ib[2 * H + j]) + gr * hn;
        } else {
            gr = nn_sigm<T>(a[0] + h[0]);
            gz = nn_sigm<T>(a[H] + h[H]);
            hn = h[2 * H];
            pre = a[2 * H] + gr * hn;
        }
        const T n = tl_tanh(pre);
        w[0] = gr;
        w[H] = gz;
        w[2 * H] = n;
        w[3 * H] = hn;
        w[4 * H] = hx[i];
        hy[i] = n + gz * (hx[i] - n);
    }
}

template <class T>
__device__ __forceinline__ void nn_gru_bwd(const tl_nn_dev& d, const T* gh, const T* ws, T* gi,
                                           T* ghg, T* ghx) {
    const long long H = d.m, G = 3 * H;
    TL_FOR_EACH(i, d.n * H) {
        const long long r = i / H, j = i - r * H;
        const T* w = ws + r * 5 * H + j;
        const T rg = w[0], z = w[H], n = w[2 * H], hn = w[3 * H], hx = w[4 * H], g = gh[i];
        const T gn = g * ((T)1 - z) * ((T)1 - n * n);
        const T gz = g * (hx - n) * z * ((T)1 - z);
        const T gr = gn * hn * rg * ((T)1 - rg);
        T* a = gi + r * G + j;
        T* b = ghg + r * G + j;
        a[0] = gr;
        a[H] = gz;
        a[2 * H] = gn;
        b[0] = gr;
        b[H] = gz;
        b[2 * H] = gn * rg;
        ghx[i] = g * z;
    }
}

// ---- cross entropy: a block per row ---------------------------------------------------------
// lse = max + log(sum(exp(x - max))), loss = (1 - ls) * w[t] * (lse - x[t])
//                                             + ls / m * sum_k w[k] * (lse - x[k])
template <class T>
__device__ __forceinline__ void nn_xent_fwd(const tl_nn_dev& d, const T* x, const long long* idx,
                                            const T* w, T* loss, T* lse, T* rw,
                                            long long* bad) {
    __shared__ double part[32];
    const long long M = d.m;
    const double ls = d.smoothing;
    const bool hw = (d.have & NN_W) != 0;
    for (long long r = blockIdx.x; r < d.n; r += gridDim.x) {
        const T* xr = x + r * M;
        const long long t = idx[r];
        if (t == d.ignore_index || t < 0 || t >= M) {
            if (threadIdx.x == 0) {
                loss[r] = lse[r] = rw[r] = (T)0;
                if (t != d.ignore_index) atomicMin(bad, r);
            }
            continue;
        }
        double mx = -(double)INFINITY;
        for (long long k = threadIdx.x; k < M; k += blockDim.x) mx = tl_nanmax(mx, (double)xr[k]);
        mx = nn_allreduce(mx, tl_max_op(), -(double)INFINITY, part);
        const T mt = (T)mx;
        double s = 0;
        for (long long k = threadIdx.x; k < M; k += blockDim.x) s += (double)tl_exp(xr[k] - mt);
        s = nn_allreduce(s, tl_sum_op(), 0.0, part);
        const double l = mx + log(s), wt = hw ? (double)w[t] : 1.0;
        double v = (1.0 - ls) * wt * (l - (double)xr[t]);
        if (ls > 0) {
            double sm = 0;
            for (long long k = threadIdx.x; k < M; k += blockDim.x)
                sm += (hw ? (double)w[k] : 1.0) * (l - (double)xr[k]);
            v += ls / (double)M * nn_allreduce(sm, tl_sum_op(), 0.0, part);
        }
        if (threadIdx.x == 0) {
            loss[r] = (T)v;
            lse[r] = (T)l;
            rw[r] = (T)wt;
        }
    }
}

// the reduced loss (mean: over the row weights' sum) and that sum; one block
template <class T>
__device__ __forceinline__ void nn_xent_sums(const tl_nn_dev& d, const T* loss, const T* rw,
                                             T* out, T* denom) {
    __shared__ double part[32];
    double sl = 0, sw = 0;
    for (long long r = threadIdx.x; r < d.n; r += blockDim.x) {
        sl += (double)loss[r];
        sw += (double)rw[r];
    }
    sl = tl_block_reduce(sl, tl_sum_op(), 0.0, part);
    sw = tl_block_reduce(sw, tl_sum_op(), 0.0, part);
    if (threadIdx.x == 0) {
        if (d.have & NN_GW) *out = (T)(d.flag == 1 ? sl / sw : sl);
        *denom = (T)sw;
    }
}

// grad_input[r, k] = g_r * (p_k * c - ls / m * w[k] - (1 - ls) * w[t] * [k == t]),
// p = exp(x - lse), c = (1 - ls) * w[t] + ls / m * sum(w); zero for an ignored row
template <class T>
__device__ __forceinline__ void nn_xent_bwd(const tl_nn_dev& d, const T* x, const T* g,
                                            const long long* idx, const T* w, const T* lse,
                                            const T* denom, T* y) {
    __shared__ double part[32];
    const long long M = d.m;
    const double ls = d.smoothing, lm = ls / (double)M;
    const bool hw = (d.have & NN_W) != 0;
    double wall = (double)M;
    if (hw) {
        double s = 0;
        for (long long k = threadIdx.x; k < M; k += blockDim.x) s += (double)w[k];
        wall = nn_allreduce(s, tl_sum_op(), 0.0, part);
    }
    for (long long r = blockIdx.x; r < d.n; r += gridDim.x) {
        const T* xr = x + r * M;
        T* yr = y + r * M;
        const long long t = idx[r];
        if (t == d.ignore_index || t < 0 || t >= M) {
            for (long long k = threadIdx.x; k < M; k += blockDim.x) yr[k] = (T)0;
            continue;
        }
        const double gr = d.flag == 0 ? (double)g[r]
                        : d.flag == 1 ? (double)g[0] / (double)denom[0] : (double)g[0];
        const double wt = hw ? (double)w[t] : 1.0;
        const T c = (T)(gr * ((1.0 - ls) * wt + lm * wall)), l = lse[r], cw = (T)(gr * lm);
        const T gt = (T)(gr * (1.0 - ls) * wt);
        for (long long k = threadIdx.x; k < M; k += blockDim.x) {
            T v = tl_exp(xr[k] - l) * c - (hw ? cw * w[k] : cw);
            if (k == t) v -= gt;
            yr[k] = v;
        }
    }
}

// ---- masked softmax: a block per row --------------------------------------------------------

__device__ __forceinline__ long long nn_mask_row(const tl_nn_dev& d, long long r) {
    long long off = 0;
    for (int k = d.rnd - 1; k >= 0; --k) {
        off += (r % d.rdims[k]) * d.rstr[k];
        r /= d.rdims[k];
    }
    return off;
}

template <class T>
__device__ __forceinline__ void nn_msoftmax(const tl_nn_dev& d, const T* x, const void* mask,
                                            T* y) {
    __shared__ double part[32];
    const long long M = d.m, mc = d.mcol;
    const T scale = (T)d.momentum, ninf = (T)-INFINITY;
    for (long long r = blockIdx.x; r < d.n; r += gridDim.x) {
        const T* xr = x + r * M;
        T* yr = y + r * M;
        const long long last = (d.flag & 1) ? r % d.out[0] : M - 1;
        const long long mo = d.mode ? nn_mask_row(d, r) : 0;
        double mx = -(double)INFINITY;
        for (long long j = threadIdx.x; j < M; j += blockDim.x) {
            T v = xr[j] * scale;
            if (j > last) v = ninf;
            else if (d.mode == 1 && !((const unsigned char*)mask)[mo + j * mc]) v = ninf;
            else if (d.mode == 2) v += ((const T*)mask)[mo + j * mc];
            yr[j] = v;
            mx = tl_nanmax(mx, (double)v);
        }
        mx = nn_allreduce(mx, tl_max_op(), -(double)INFINITY, part);
        if (mx == -(double)INFINITY) {
            const T fill = (d.flag & 2) ? (T)0 : (T)NAN;
            for (long long j = threadIdx.x; j < M; j += blockDim.x) yr[j] = fill;
            continue;
        }
        const T mt = (T)mx;
        double s = 0;
        for (long long j = threadIdx.x; j < M; j += blockDim.x) {
            const T e = tl_exp(yr[j] - mt);
            yr[j] = e;
            s += (double)e;
        }
        const T inv = (T)1 / (T)nn_allreduce(s, tl_sum_op(), 0.0, part);
        for (long long j = threadIdx.x; j < M; j += blockDim.x) yr[j] *= inv;
    }
}

template <class T>
__device__ __forceinline__ void nn_msoftmax_bwd(const tl_nn_dev& d, const T* yv, const T* g,
                                                T* gx) {
    __shared__ double part[32];
    const long long M = d.m;
    const T scale = (T)d.momentum;
    for (long long r = blockIdx.x; r < d.n; r += gridDim.x) {
        const T* yr = yv + r * M;
        const T* gr = g + r * M;
        double dot = 0;
        for (long long j = threadIdx.x; j < M; j += blockDim.x) dot += (double)gr[j] * yr[j];
        const T dt = (T)nn_allreduce(dot, tl_sum_op(), 0.0, part);
        for (long long j = threadIdx.x; j < M; j += blockDim.x)
            gx[r * M + j] = scale * yr[j] * (gr[j] - dt);
    }
}

// ---- entry points ---------------------------------------------------------------------------

#define NN_ENTRY(SFX, T)                                                                         \
    extern "C" __global__ void tl_nn_im2col_##SFX(tl_nn_dev d, const T* x, T* y) {               \
        nn_im2col<T>(d, x, y);                                                                   \
    }                                                                                            \
    extern "C" __global__ void tl_nn_col2im_##SFX(tl_nn_dev d, const T* x, T* y) {               \
        nn_col2im<T>(d, x, y);                                                                   \
    }                                                                                            \
    extern "C" __global__ void tl_nn_conv_direct_##SFX(const T* x, const T* w, const T* b, T* y, \
                                                       tl_nn_dev d) {                            \
        if (d.flag) nn_conv_direct<T, int>(d, x, w, b, y);                                       \
        else nn_conv_direct<T, long long>(d, x, w, b, y);                                        \
    }                                                                                            \
    extern "C" __global__ void tl_nn_bias_add_##SFX(tl_nn_dev d, const T* w, T* y) {             \
        nn_bias_add<T>(d, w, y);                                                                 \
    }                                                                                            \
    extern "C" __global__ void tl_nn_bias_grad_##SFX(tl_nn_dev d, const T* g, T* gw) {           \
        nn_bias_grad<T>(d, g, gw);                                                               \
    }                                                                                            \
    extern "C" __global__ void tl_nn_accumulate_##SFX(tl_nn_dev d, const T* x, T* y) {           \
        nn_accumulate<T>(d, x, y);                                                               \
    }                                                                                            \
    extern "C" __global__ void tl_nn_max_pool_##SFX(tl_nn_dev d, const T* x, T* y,               \
                                                    long long* ix) {                             \
        nn_max_pool<T>(d, x, y, ix);                                                             \
    }                                                                                            \
    extern "C" __global__ void tl_nn_avg_pool_##SFX(tl_nn_dev d, const T* x, T* y) {             \
        nn_avg_pool<T>(d, x, y);                                                                 \
    }                                                                                            \
    extern "C" __global__ void tl_nn_avg_pool_bwd_##SFX(tl_nn_dev d, const T* g, T* y) {         \
        nn_avg_pool_bwd<T>(d, g, y);                                                             \
    }                                                                                            \
    extern "C" __global__ void tl_nn_adapt_avg_##SFX(tl_nn_dev d, const T* x, T* y) {            \
        nn_adapt_avg<T>(d, x, y);                                                                \
    }                                                                                            \
    extern "C" __global__ void tl_nn_adapt_avg_bwd_##SFX(tl_nn_dev d, const T* g, T* y) {        \
        nn_adapt_avg_bwd<T>(d, g, y);                                                            \
    }                                                                                            \
    extern "C" __global__ void tl_nn_adapt_max_##SFX(tl_nn_dev d, const T* x, T* y,              \
                                                     long long* ix) {                            \
        nn_adapt_max<T>(d, x, y, ix);                                                            \
    }                                                                                            \
    extern "C" __global__ void tl_nn_zero_##SFX(long long n, T* y) { nn_zero<T>(n, y); }         \
    extern "C" __global__ void tl_nn_index_##SFX(tl_nn_dev d, const T* src,                      \
                                                 const long long* idx, T* y, long long* bad,     \
                                                 int add) {                                      \
        nn_index<T>(d, src, idx, y, bad, add);                                                   \
    }                                                                                            \
    extern "C" __global__ void tl_nn_bn_fwd_##SFX(tl_nn_dev d, const T* x, const T* w,           \
                                                  const T* b, T* y, T* mean, T* rstd,            \
                                                  T* rmean, T* rvar) {                           \
        nn_bn_fwd<T>(d, x, w, b, y, mean, rstd, rmean, rvar);                                    \
    }                                                                                            \
    extern "C" __global__ void tl_nn_bn_bwd_##SFX(tl_nn_dev d, const T* x, const T* g,           \
                                                  const T* w, const T* mean, const T* rstd,      \
                                                  const T* rmean, const T* rvar, T* y, T* gw,    \
                                                  T* gb) {                                       \
        nn_bn_bwd<T>(d, x, g, w, mean, rstd, rmean, rvar, y, gw, gb);                            \
    }                                                                                            \
    extern "C" __global__ void tl_nn_rownorm_fwd_##SFX(tl_nn_dev d, const T* x, const T* w,      \
                                                       const T* b, T* y, T* mean, T* rstd) {     \
        nn_rownorm_fwd<T>(d, x, w, b, y, mean, rstd);                                            \
    }                                                                                            \
    extern "C" __global__ void tl_nn_rownorm_bwd_##SFX(tl_nn_dev d, const T* x, const T* g,      \
                                                       const T* w, const T* mean,                \
                                                       const T* rstd, T* y) {                    \
        nn_rownorm_bwd<T>(d, x, g, w, mean, rstd, y);                                            \
    }                                                                                            \
    extern "C" __global__ void tl_nn_layer_wgrad_##SFX(tl_nn_dev d, const T* x, const T* g,      \
                                                       const T* mean, const T* rstd, T* gw,      \
                                                       T* gb) {                                  \
        nn_layer_wgrad<T>(d, x, g, mean, rstd, gw, gb);                                          \
    }                                                                                            \
    extern "C" __global__ void tl_nn_group_wgrad_##SFX(tl_nn_dev d, const T* x, const T* g,      \
                                                       const T* mean, const T* rstd, T* gw,      \
                                                       T* gb) {                                  \
        nn_group_wgrad<T>(d, x, g, mean, rstd, gw, gb);                                          \
    }                                                                                            \
    extern "C" __global__ void tl_nn_lstm_fwd_##SFX(tl_nn_dev d, const T* ig, const T* hg,       \
                                                    const T* cx, const T* ib, const T* hb,       \
                                                    T* hy, T* cy, T* ws) {                       \
        nn_lstm_fwd<T>(d, ig, hg, cx, ib, hb, hy, cy, ws);                                       \
    }                                                                                            \
    extern "C" __global__ void tl_nn_lstm_bwd_##SFX(tl_nn_dev d, const T* ghy, const T* gcy,     \
                                                    const T* cx, const T* cy, const T* ws,       \
                                                    T* gg, T* gcx) {                             \
        nn_lstm_bwd<T>(d, ghy, gcy, cx, cy, ws, gg, gcx);                                        \
    }                                                                                            \
    extern "C" __global__ void tl_nn_gru_fwd_##SFX(tl_nn_dev d, const T* ig, const T* hg,        \
                                                   const T* hx, const T* ib, const T* hb,        \
                                                   T* hy, T* ws) {                               \
        nn_gru_fwd<T>(d, ig, hg, hx, ib, hb, hy, ws);                                            \
    }                                                                                            \
    extern "C" __global__ void tl_nn_gru_bwd_##SFX(tl_nn_dev d, const T* gh, const T* ws,        \
                                                   T* gi, T* ghg, T* ghx) {                      \
        nn_gru_bwd<T>(d, gh, ws, gi, ghg, ghx);                                                  \
    }                                                                                            \
    extern "C" __global__ void tl_nn_xent_fwd_##SFX(tl_nn_dev d, const T* x,                     \
                                                    const long long* idx, const T* w, T* loss,   \
                                                    T* lse, T* rw, long long* bad) {             \
        nn_xent_fwd<T>(d, x, idx, w, loss, lse, rw, bad);                                        \
    }                                                                                            \
    extern "C" __global__ void tl_nn_xent_sums_##SFX(tl_nn_dev d, const T* loss, const T* rw,    \
                                                     T* out, T* denom) {                         \
        nn_xent_sums<T>(d, loss, rw, out, denom);                                                \
    }                                                                                            \
    extern "C" __global__ void tl_nn_xent_bwd_##SFX(tl_nn_dev d, const T* x, const T* g,         \
                                                    const long long* idx, const T* w,            \
                                                    const T* lse, const T* denom, T* y) {        \
        nn_xent_bwd<T>(d, x, g, idx, w, lse, denom, y);                                          \
    }                                                                                            \
    extern "C" __global__ void tl_nn_msoftmax_##SFX(tl_nn_dev d, const T* x, const void* mask,   \
                                                    T* y) {                                      \
        nn_msoftmax<T>(d, x, mask, y);                                                           \
    }                                                                                            \
    extern "C" __global__ void tl_nn_msoftmax_bwd_##SFX(tl_nn_dev d, const T* y, const T* g,     \
                                                        T* gx) {                                 \
        nn_msoftmax_bwd<T>(d, y, g, gx);                                                         \
    }

NN_ENTRY(f32, float)
NN_ENTRY(f64, double)
