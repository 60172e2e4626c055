// random_ops.cu: Philox4x32-10 fills on the device, the same streams as the CPU's
// (tensorlib/_core/cpu/cpu_random.c) for the same seed and offset.
//
// A fill at (seed, offset) gives block b the counter {lo32(offset + b), hi32(offset + b), 0, 0}
// (the sum modulo 2**64) and the key {lo32(seed), hi32(seed)}; element i depends only on its
// block, so one thread computes one block and writes that block's elements:
//   uniform/normal float32: 4 elements a block; float64, int64, bernoulli: 2 (one 64-bit draw
//   each, low word first). randperm is the CPU's forward Fisher-Yates, draw k for step k, run
//   by one thread (each step depends on the one before).
// Arithmetic is rounded step by step as the CPU's C (tl_rn.h). normal's transcendentals: on the
// emulator the host's logf/cosf/sinf/log/cos/sin, the CPU's own; on a GPU float32 computes
// them in double and rounds (correctly rounded float32 values, as glibc's nearly always are),
// and float64 uses CUDA's log/cos/sin (at most 1-2 ulp from glibc's).
#include "tl_cuda.h"
#include "tl_rn.h"

#define TL_PHILOX_M0 0xD2511F53u
#define TL_PHILOX_M1 0xCD9E8D57u
#define TL_PHILOX_W0 0x9E3779B9u
#define TL_PHILOX_W1 0xBB67AE85u
#define TL_TWO_PI 6.283185307179586476925286766559

__device__ __forceinline__ void philox_block(unsigned long long seed, unsigned long long ctr,
                                             unsigned w[4]) {
    unsigned c0 = (unsigned)ctr, c1 = (unsigned)(ctr >> 32), c2 = 0u, c3 = 0u;
    unsigned k0 = (unsigned)seed, k1 = (unsigned)(seed >> 32);
    for (int r = 0; r < 10; ++r) {
        const unsigned long long p0 = (unsigned long long)TL_PHILOX_M0 * c0;
        const unsigned long long p1 = (unsigned long long)TL_PHILOX_M1 * c2;
        const unsigned n0 = (unsigned)(p1 >> 32) ^ c1 ^ k0;
        const unsigned n2 = (unsigned)(p0 >> 32) ^ c3 ^ k1;
        c1 = (unsigned)p1;
        c3 = (unsigned)p0;
        c0 = n0;
        c2 = n2;
        k0 += TL_PHILOX_W0;
        k1 += TL_PHILOX_W1;
    }
    w[0] = c0;
    w[1] = c1;
    w[2] = c2;
    w[3] = c3;
}

__device__ __forceinline__ unsigned long long draw64(const unsigned w[4], int t) {
    return (unsigned long long)w[2 * t] | ((unsigned long long)w[2 * t + 1] << 32);
}

#define TL_BLOCKS(n, per) (((n) + (per) - 1) / (per))

// uniform on [lo, lo + span): the CPU computes in double, rounds to float, clamps to
// [flo, fmax] (fmax the largest float below the upper bound)
extern "C" __global__ void tl_philox_uniform_f32(float* out, long long n,
                                                 unsigned long long seed,
                                                 unsigned long long offset, double lo,
                                                 double span, float flo, float fmax) {
    TL_FOR_EACH(b, TL_BLOCKS(n, 4)) {
        unsigned w[4];
        philox_block(seed, offset + (unsigned long long)b, w);
        for (int t = 0; t < 4; ++t) {
            long long e = b * 4 + t;
            if (e >= n) break;
            const double u = tl_rn_mul((double)(w[t] >> 8), 0x1p-24);
            float v = (float)tl_rn_add(lo, tl_rn_mul(u, span));
            v = v > fmax ? fmax : v;
            v = v < flo ? flo : v;
            out[e] = v;
        }
    }
}

extern "C" __global__ void tl_philox_uniform_f64(double* out, long long n,
                                                 unsigned long long seed,
                                                 unsigned long long offset, double lo,
                                                 double span, double dmax) {
    TL_FOR_EACH(b, TL_BLOCKS(n, 2)) {
        unsigned w[4];
        philox_block(seed, offset + (unsigned long long)b, w);
        for (int t = 0; t < 2; ++t) {
            long long e = b * 2 + t;
            if (e >= n) break;
            const double u = tl_rn_mul((double)(draw64(w, t) >> 11), 0x1p-53);
            double v = tl_rn_add(lo, tl_rn_mul(u, span));
            v = v > dmax ? dmax : v;
            v = v < lo ? lo : v;
            out[e] = v;
        }
    }
}

__device__ __forceinline__ float rnd_logf(float x) {
#ifdef TL_EMU
    return logf(x);
#else
    return (float)log((double)x);
#endif
}
__device__ __forceinline__ float rnd_cosf(float x) {
#ifdef TL_EMU
    return cosf(x);
#else
    return (float)cos((double)x);
#endif
}
__device__ __forceinline__ float rnd_sinf(float x) {
#ifdef TL_EMU
    return sinf(x);
#else
    return (float)sin((double)x);
#endif
}

// Box-Muller: words (2j, 2j+1) of a block give elements 2j (cosine) and 2j+1 (sine)
extern "C" __global__ void tl_philox_normal_f32(float* out, long long n,
                                                unsigned long long seed,
                                                unsigned long long offset, double mean,
                                                double sd) {
    TL_FOR_EACH(b, TL_BLOCKS(n, 4)) {
        unsigned w[4];
        philox_block(seed, offset + (unsigned long long)b, w);
        for (int t = 0; t < 4; t += 2) {
            long long e = b * 4 + t;
            if (e >= n) break;
            const float u1 = tl_rn_mul((float)w[t] + 1.0f, 0x1p-32f);   // (0, 1]
            const float u2 = tl_rn_mul((float)(w[t + 1] >> 8), 0x1p-24f);   // [0, 1)
            const float r = sqrtf(tl_rn_mul(-2.0f, rnd_logf(u1)));
            const float th = tl_rn_mul((float)TL_TWO_PI, u2);
            out[e] = (float)tl_rn_add(mean, tl_rn_mul(sd, (double)tl_rn_mul(r, rnd_cosf(th))));
            if (e + 1 < n)
                out[e + 1] = (float)tl_rn_add(mean,
                                              tl_rn_mul(sd, (double)tl_rn_mul(r, rnd_sinf(th))));
        }
    }
}

extern "C" __global__ void tl_philox_normal_f64(double* out, long long n,
                                                unsigned long long seed,
                                                unsigned long long offset, double mean,
                                                double sd) {
    TL_FOR_EACH(b, TL_BLOCKS(n, 2)) {
        unsigned w[4];
        philox_block(seed, offset + (unsigned long long)b, w);
        long long e = b * 2;
        const double u1 = tl_rn_mul((double)(draw64(w, 0) >> 11) + 1.0, 0x1p-53);   // (0, 1]
        const double u2 = tl_rn_mul((double)(draw64(w, 1) >> 11), 0x1p-53);         // [0, 1)
        const double r = sqrt(tl_rn_mul(-2.0, log(u1)));
        const double th = tl_rn_mul(TL_TWO_PI, u2);
        out[e] = tl_rn_add(mean, tl_rn_mul(sd, tl_rn_mul(r, cos(th))));
        if (e + 1 < n) out[e + 1] = tl_rn_add(mean, tl_rn_mul(sd, tl_rn_mul(r, sin(th))));
    }
}

// lo + draw % range (range 0: 2**64; a power of two masks, which is the same value)
extern "C" __global__ void tl_philox_int64(long long* out, long long n, unsigned long long seed,
                                           unsigned long long offset, long long lo,
                                           unsigned long long range) {
    const bool pow2 = (range & (range - 1ull)) == 0ull;
    const unsigned long long mask = range - 1ull;
    TL_FOR_EACH(b, TL_BLOCKS(n, 2)) {
        unsigned w[4];
        philox_block(seed, offset + (unsigned long long)b, w);
        for (int t = 0; t < 2; ++t) {
            long long e = b * 2 + t;
            if (e >= n) break;
            const unsigned long long d = draw64(w, t);
            out[e] = (long long)((unsigned long long)lo + (pow2 ? (d & mask) : d % range));
        }
    }
}

// 1 where the draw's 53-bit fraction is below p: k * 2**-53 < p <=> k < p * 2**53 (thresh)
extern "C" __global__ void tl_philox_bernoulli(unsigned char* out, long long n,
                                               unsigned long long seed,
                                               unsigned long long offset, double thresh) {
    TL_FOR_EACH(b, TL_BLOCKS(n, 2)) {
        unsigned w[4];
        philox_block(seed, offset + (unsigned long long)b, w);
        for (int t = 0; t < 2; ++t) {
            long long e = b * 2 + t;
            if (e >= n) break;
            out[e] = (unsigned char)((double)(draw64(w, t) >> 11) < thresh);
        }
    }
}

// a permutation of 0..n-1: the CPU's forward Fisher-Yates, one thread
extern "C" __global__ void tl_philox_randperm(long long* out, long long n,
                                              unsigned long long seed,
                                              unsigned long long offset) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    for (long long i = 0; i < n; ++i) out[i] = i;
    unsigned w[4];
    for (long long k = 0; k + 1 < n; ++k) {
        if ((k & 1) == 0) philox_block(seed, offset + (unsigned long long)(k / 2), w);
        const long long j = k + (long long)(draw64(w, (int)(k & 1)) % (unsigned long long)(n - k));
        TL_ASSERT(j >= k && j < n);
        const long long tmp = out[k];
        out[k] = out[j];
        out[j] = tmp;
    }
}
