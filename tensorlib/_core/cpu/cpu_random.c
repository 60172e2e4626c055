/*
 * cpu_random.c -- Philox4x32-10 counter-based random fills for tensorlib.
 *
 * Plain C99, no globals; compile with -O3 -fwrapv (never -ffast-math).
 * See cpu_random.h for the counter/key and blocks-consumed conventions.
 *
 * Independent implementation from the published description of Philox
 * (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3", SC'11):
 *   one round maps (c0, c1, c2, c3) with key (k0, k1) to
 *     (hi(M1*c2) ^ c1 ^ k0,  lo(M1*c2),  hi(M0*c0) ^ c3 ^ k1,  lo(M0*c0))
 *   and the key is bumped by the Weyl constants (W0, W1) between rounds.
 */
#include "cpu_random.h"

#include <math.h>
#include <string.h>

#define TL_PHILOX_M0 0xD2511F53u
#define TL_PHILOX_M1 0xCD9E8D57u
#define TL_PHILOX_W0 0x9E3779B9u
#define TL_PHILOX_W1 0xBB67AE85u
#define TL_PHILOX_ROUNDS 10

/* Blocks computed per batch: enough independent lanes to keep the multiplier
 * busy, small enough to stay in L1 (256 bytes of output words). */
#define TL_BATCH 16

#define TL_TWO_PI 6.283185307179586476925286766559

/* ------------------------------------------------------------------------- */
/* Core permutation                                                           */
/* ------------------------------------------------------------------------- */

void tl_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    int r;
    for (r = 0; r < TL_PHILOX_ROUNDS; r++) {
        const uint64_t p0 = (uint64_t)TL_PHILOX_M0 * (uint64_t)c0;
        const uint64_t p1 = (uint64_t)TL_PHILOX_M1 * (uint64_t)c2;
        const uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        const uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
        k0 += TL_PHILOX_W0;
        k1 += TL_PHILOX_W1;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/*
 * Compute TL_BATCH consecutive blocks b0 .. b0+TL_BATCH-1 of the fill (seed, offset)
 * and store them block-major: words[4*j + w] is word w of block b0 + j.
 * Block b uses the counter {lo32(offset + b), hi32(offset + b), 0, 0}, the sum
 * taken modulo 2^64.
 */
static void philox_batch(uint64_t seed, uint64_t offset, uint64_t b0, uint32_t words[4 * TL_BATCH])
{
    const uint32_t key0 = (uint32_t)seed, key1 = (uint32_t)(seed >> 32);
    int j, r;

    /* The lanes are independent; the fixed-length round loop is fully unrolled
     * by the compiler, leaving 20 independent 32x32->64-bit multiplies per lane. */
    for (j = 0; j < TL_BATCH; j++) {
        const uint64_t ctr = offset + (b0 + (uint64_t)j); /* wraps mod 2^64 */
        uint32_t c0 = (uint32_t)ctr, c1 = (uint32_t)(ctr >> 32), c2 = 0u, c3 = 0u;
        uint32_t k0 = key0, k1 = key1;
        for (r = 0; r < TL_PHILOX_ROUNDS; r++) {
            const uint64_t p0 = (uint64_t)TL_PHILOX_M0 * (uint64_t)c0;
            const uint64_t p1 = (uint64_t)TL_PHILOX_M1 * (uint64_t)c2;
            const uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
            const uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
            c1 = (uint32_t)p1;
            c3 = (uint32_t)p0;
            c0 = n0;
            c2 = n2;
            k0 += TL_PHILOX_W0;
            k1 += TL_PHILOX_W1;
        }
        words[4 * j + 0] = c0;
        words[4 * j + 1] = c1;
        words[4 * j + 2] = c2;
        words[4 * j + 3] = c3;
    }
}

/* 64-bit draw t of a batch (t = 0 .. 2*TL_BATCH-1): low word first. */
static inline uint64_t draw64(const uint32_t* words, int64_t t)
{
    return (uint64_t)words[2 * t] | ((uint64_t)words[2 * t + 1] << 32);
}

/* ------------------------------------------------------------------------- */
/* Blocks consumed                                                            */
/* ------------------------------------------------------------------------- */

static int64_t ceil_div(int64_t n, int64_t d)
{
    if (n <= 0) return 0;
    return n / d + (n % d != 0); /* no overflow even for n near INT64_MAX */
}

int64_t tl_philox_blocks_uniform(int64_t n, int is_double)
{
    return ceil_div(n, is_double ? TL_PHILOX_EPB_UNIFORM_F64 : TL_PHILOX_EPB_UNIFORM_F32);
}

int64_t tl_philox_blocks_normal(int64_t n, int is_double)
{
    return ceil_div(n, is_double ? TL_PHILOX_EPB_NORMAL_F64 : TL_PHILOX_EPB_NORMAL_F32);
}

int64_t tl_philox_blocks_int(int64_t n)
{
    return ceil_div(n, TL_PHILOX_EPB_INT64);
}

int64_t tl_philox_blocks_bernoulli(int64_t n)
{
    return ceil_div(n, TL_PHILOX_EPB_BERNOULLI);
}

/* ------------------------------------------------------------------------- */
/* Uniform                                                                    */
/* ------------------------------------------------------------------------- */

void tl_rand_uniform_f32(uint64_t seed, uint64_t offset, float* out, int64_t n, double lo, double hi)
{
    uint32_t w[4 * TL_BATCH];
    const int64_t nblocks = tl_philox_blocks_uniform(n, 0);
    const float flo = (float)lo;
    const float fhi = (float)hi;
    /* largest float the result may take: strictly below hi */
    const float fmax = (fhi > flo) ? nextafterf(fhi, -INFINITY) : flo;
    const double span = hi - lo;
    int64_t b0;

    for (b0 = 0; b0 < nblocks; b0 += TL_BATCH) {
        const int64_t e0 = b0 * TL_PHILOX_EPB_UNIFORM_F32;
        int64_t cnt = n - e0, t;
        float* o = out + e0;
        if (cnt > 4 * TL_BATCH) cnt = 4 * TL_BATCH;
        philox_batch(seed, offset, (uint64_t)b0, w);
        for (t = 0; t < cnt; t++) {
            const double u = (double)(w[t] >> 8) * 0x1p-24; /* [0, 1), 24 bits */
            float v = (float)(lo + u * span);
            v = v > fmax ? fmax : v;
            v = v < flo ? flo : v;
            o[t] = v;
        }
    }
}

void tl_rand_uniform_f64(uint64_t seed, uint64_t offset, double* out, int64_t n, double lo, double hi)
{
    uint32_t w[4 * TL_BATCH];
    const int64_t nblocks = tl_philox_blocks_uniform(n, 1);
    const double dmax = (hi > lo) ? nextafter(hi, -INFINITY) : lo;
    const double span = hi - lo;
    int64_t b0;

    for (b0 = 0; b0 < nblocks; b0 += TL_BATCH) {
        const int64_t e0 = b0 * TL_PHILOX_EPB_UNIFORM_F64;
        int64_t cnt = n - e0, t;
        double* o = out + e0;
        if (cnt > 2 * TL_BATCH) cnt = 2 * TL_BATCH;
        philox_batch(seed, offset, (uint64_t)b0, w);
        for (t = 0; t < cnt; t++) {
            const double u = (double)(draw64(w, t) >> 11) * 0x1p-53; /* [0, 1), 53 bits */
            double v = lo + u * span;
            v = v > dmax ? dmax : v;
            v = v < lo ? lo : v;
            o[t] = v;
        }
    }
}

/* ------------------------------------------------------------------------- */
/* Normal (Box-Muller)                                                        */
/* ------------------------------------------------------------------------- */

void tl_rand_normal_f32(uint64_t seed, uint64_t offset, float* out, int64_t n, double mean, double std)
{
    uint32_t w[4 * TL_BATCH];
    const int64_t nblocks = tl_philox_blocks_normal(n, 0);
    int64_t b0;

    for (b0 = 0; b0 < nblocks; b0 += TL_BATCH) {
        const int64_t e0 = b0 * TL_PHILOX_EPB_NORMAL_F32;
        int64_t cnt = n - e0, t;
        float* o = out + e0;
        if (cnt > 4 * TL_BATCH) cnt = 4 * TL_BATCH;
        philox_batch(seed, offset, (uint64_t)b0, w);
        /* pairs (w[t], w[t+1]) for even t -> elements t (cos) and t+1 (sin) */
        for (t = 0; t < cnt; t += 2) {
            /* radius uniform from all 32 bits: in [2^-32, 1], never 0 */
            const float u1 = ((float)w[t] + 1.0f) * 0x1p-32f;
            const float u2 = (float)(w[t + 1] >> 8) * 0x1p-24f; /* [0, 1) */
            const float r = sqrtf(-2.0f * logf(u1));
            const float th = (float)TL_TWO_PI * u2;
            o[t] = (float)(mean + std * (double)(r * cosf(th)));
            if (t + 1 < cnt) o[t + 1] = (float)(mean + std * (double)(r * sinf(th)));
        }
    }
}

void tl_rand_normal_f64(uint64_t seed, uint64_t offset, double* out, int64_t n, double mean, double std)
{
    uint32_t w[4 * TL_BATCH];
    const int64_t nblocks = tl_philox_blocks_normal(n, 1);
    int64_t b0;

    for (b0 = 0; b0 < nblocks; b0 += TL_BATCH) {
        const int64_t e0 = b0 * TL_PHILOX_EPB_NORMAL_F64;
        int64_t cnt = n - e0, t;
        double* o = out + e0;
        if (cnt > 2 * TL_BATCH) cnt = 2 * TL_BATCH;
        philox_batch(seed, offset, (uint64_t)b0, w);
        /* block j -> draws (2j, 2j+1) -> elements 2j (cos) and 2j+1 (sin) */
        for (t = 0; t < cnt; t += 2) {
            const double u1 = ((double)(draw64(w, t) >> 11) + 1.0) * 0x1p-53; /* (0, 1] */
            const double u2 = (double)(draw64(w, t + 1) >> 11) * 0x1p-53;     /* [0, 1) */
            const double r = sqrt(-2.0 * log(u1));
            const double th = TL_TWO_PI * u2;
            o[t] = mean + std * (r * cos(th));
            if (t + 1 < cnt) o[t + 1] = mean + std * (r * sin(th));
        }
    }
}

/* ------------------------------------------------------------------------- */
/* Integers                                                                   */
/* ------------------------------------------------------------------------- */

void tl_rand_int64(uint64_t seed, uint64_t offset, int64_t* out, int64_t n, int64_t lo, uint64_t range)
{
    uint32_t w[4 * TL_BATCH];
    const int64_t nblocks = tl_philox_blocks_int(n);
    const uint64_t ulo = (uint64_t)lo;
    /* range == 0 means 2^64; a power of two (incl. 2^64) reduces to a mask,
     * which gives exactly the same values as the modulo */
    const int pow2 = (range & (range - 1)) == 0;
    const uint64_t mask = range - 1; /* 2^64-1 when range == 0 */
    int64_t b0;

    for (b0 = 0; b0 < nblocks; b0 += TL_BATCH) {
        const int64_t e0 = b0 * TL_PHILOX_EPB_INT64;
        int64_t cnt = n - e0, t;
        int64_t* o = out + e0;
        if (cnt > 2 * TL_BATCH) cnt = 2 * TL_BATCH;
        philox_batch(seed, offset, (uint64_t)b0, w);
        if (pow2) {
            for (t = 0; t < cnt; t++) o[t] = (int64_t)(ulo + (draw64(w, t) & mask));
        } else {
            for (t = 0; t < cnt; t++) o[t] = (int64_t)(ulo + draw64(w, t) % range);
        }
    }
}

void tl_rand_bernoulli_u8(uint64_t seed, uint64_t offset, uint8_t* out, int64_t n, double p)
{
    uint32_t w[4 * TL_BATCH];
    const int64_t nblocks = tl_philox_blocks_bernoulli(n);
    /* u = k * 2^-53 < p  <=>  k < p * 2^53 (exact scaling by a power of two) */
    const double thresh = p * 0x1p53;
    int64_t b0;

    if (n <= 0) return;
    if (!(p > 0.0)) { memset(out, 0, (size_t)n); return; }
    if (p >= 1.0) { memset(out, 1, (size_t)n); return; }

    for (b0 = 0; b0 < nblocks; b0 += TL_BATCH) {
        const int64_t e0 = b0 * TL_PHILOX_EPB_BERNOULLI;
        int64_t cnt = n - e0, t;
        uint8_t* o = out + e0;
        if (cnt > 2 * TL_BATCH) cnt = 2 * TL_BATCH;
        philox_batch(seed, offset, (uint64_t)b0, w);
        for (t = 0; t < cnt; t++) o[t] = (uint8_t)((double)(draw64(w, t) >> 11) < thresh);
    }
}

void tl_randperm_int64(uint64_t seed, uint64_t offset, int64_t* out, int64_t n)
{
    uint32_t w[4 * TL_BATCH];
    const int64_t nblocks = tl_philox_blocks_int(n);
    int64_t i, b0;

    if (n <= 0) return;
    for (i = 0; i < n; i++) out[i] = i;

    /* forward Fisher-Yates: step k (0 <= k < n-1) uses draw k */
    for (b0 = 0; b0 < nblocks; b0 += TL_BATCH) {
        const int64_t k0 = b0 * TL_PHILOX_EPB_INT64;
        int64_t t, cnt = (n - 1) - k0;
        if (cnt <= 0) break;
        if (cnt > 2 * TL_BATCH) cnt = 2 * TL_BATCH;
        philox_batch(seed, offset, (uint64_t)b0, w);
        for (t = 0; t < cnt; t++) {
            const int64_t k = k0 + t;
            const int64_t j = k + (int64_t)(draw64(w, t) % (uint64_t)(n - k));
            const int64_t tmp = out[k];
            out[k] = out[j];
            out[j] = tmp;
        }
    }
}
