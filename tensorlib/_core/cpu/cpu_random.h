/*
 * cpu_random.h -- counter-based Philox4x32-10 random number generation for tensorlib.
 *
 * Plain C99, no global state.  Compile with -O3 -fwrapv (never -ffast-math: the
 * uniform bound guards and Box-Muller rely on IEEE semantics).
 *
 * Algorithm: Philox4x32 with 10 rounds, as published in
 *   J. K. Salmon, M. A. Moraes, R. O. Dror, D. E. Shaw,
 *   "Parallel Random Numbers: As Easy as 1, 2, 3", SC'11.
 * This is an independent implementation written from that description.
 *
 * ---------------------------------------------------------------------------
 * Counter / key conventions
 * ---------------------------------------------------------------------------
 * A fill is described by (seed, offset, n):
 *   key      = { (uint32_t)seed, (uint32_t)(seed >> 32) }
 *   block b  (b = 0, 1, 2, ...) of the fill uses the 128-bit counter
 *            C = (offset + b) mod 2^64
 *            ctr = { C[31:0], C[63:32], 0, 0 }
 *   (counter words 2 and 3 are always zero; the 64-bit block index wraps, so
 *   splitting a fill with offset + a/elements_per_block computed in uint64
 *   arithmetic is exact everywhere, including across the 2^64 wrap).
 *   Each block yields 4 x 32-bit words x0..x3.  64-bit draws are formed as
 *            d0 = x0 | (uint64_t)x1 << 32,   d1 = x2 | (uint64_t)x3 << 32.
 *
 * Element i of every fill except randperm depends only on (seed, offset, i):
 *
 *   fill                 elements/block  element i uses
 *   uniform f32          4               word  x[i%4] of block i/4 (top 24 bits)
 *   uniform f64          2               draw  d[i%2] of block i/2 (top 53 bits)
 *   normal  f32          4               words (x0,x1) or (x2,x3) of block i/4;
 *                                        even i -> r*cos, odd i -> r*sin
 *   normal  f64          2               draws (d0,d1) of block i/2;
 *                                        even i -> r*cos, odd i -> r*sin
 *   int64                2               draw  d[i%2] of block i/2
 *   bernoulli            2               draw  d[i%2] of block i/2 (top 53 bits)
 *   randperm             2               step k of the shuffle uses draw k
 *
 * A fill of n elements therefore consumes ceil(n / elements_per_block) blocks
 * (see tl_philox_blocks_*); a generator advances its offset by exactly that
 * many blocks.  To split a fill across threads, cut it at element indices that
 * are multiples of elements_per_block: the chunk [a, b) is produced by calling
 * the same function with offset + a/elements_per_block, out + a and n = b - a,
 * and the result is bit-identical to the single call.
 */
#ifndef TENSORLIB_CPU_RANDOM_H
#define TENSORLIB_CPU_RANDOM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Elements produced per 128-bit block by each fill kind (see table above). */
#define TL_PHILOX_EPB_UNIFORM_F32 4
#define TL_PHILOX_EPB_UNIFORM_F64 2
#define TL_PHILOX_EPB_NORMAL_F32 4
#define TL_PHILOX_EPB_NORMAL_F64 2
#define TL_PHILOX_EPB_INT64 2
#define TL_PHILOX_EPB_BERNOULLI 2

/* One Philox4x32-10 block: out = philox(ctr, key).  For known-answer tests.
 * Example: ctr = {0,0,0,0}, key = {0,0} -> {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}. */
void tl_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

/* Number of 128-bit blocks a fill of n elements consumes (0 for n <= 0).
 * uniform/normal: ceil(n/4) for float32 (is_double == 0), ceil(n/2) for float64.
 * int64 and randperm: ceil(n/2).  bernoulli: ceil(n/2). */
int64_t tl_philox_blocks_uniform(int64_t n, int is_double);
int64_t tl_philox_blocks_normal(int64_t n, int is_double);
int64_t tl_philox_blocks_int(int64_t n);
int64_t tl_philox_blocks_bernoulli(int64_t n);

/* Uniform on [lo, hi).  float32 uses 24 random bits (u = k * 2^-24), float64 uses
 * 53 bits (u = k * 2^-53); the value lo + u*(hi-lo) is clamped to the largest
 * representable number below hi so rounding can never return hi.  If hi <= lo
 * (after rounding to the output type) every element is lo.  The caller must
 * ensure lo, hi and hi - lo are finite. */
void tl_rand_uniform_f32(uint64_t seed, uint64_t offset, float* out, int64_t n, double lo, double hi);
void tl_rand_uniform_f64(uint64_t seed, uint64_t offset, double* out, int64_t n, double lo, double hi);

/* Normal(mean, std) by the Box-Muller transform; the radius uniform lies in
 * (0, 1] so log(0) never happens.  float32: radius uniform from a full 32-bit
 * word, ((float)x + 1) * 2^-32 in [2^-32, 1], angle from 24 bits, transform in
 * single precision (max |z| ~ 6.66); float64: 53-bit uniforms, transform in
 * double precision (max |z| ~ 8.57).  out = mean + std * z. */
void tl_rand_normal_f32(uint64_t seed, uint64_t offset, float* out, int64_t n, double mean, double std);
void tl_rand_normal_f64(uint64_t seed, uint64_t offset, double* out, int64_t n, double mean, double std);

/* out[i] = lo + (d % range) computed in wrapping 64-bit arithmetic, i.e. uniform-ish
 * integers in [lo, lo + range).  range may be anything from 1 to 2^64-1;
 * range == 0 is taken to mean 2^64 (every int64 value, out[i] = lo + d).
 * (The modulo is slightly biased when range does not divide 2^64; the bias is
 * below range / 2^64.) */
void tl_rand_int64(uint64_t seed, uint64_t offset, int64_t* out, int64_t n, int64_t lo, uint64_t range);

/* out[i] = 1 if u < p else 0, u a 53-bit uniform in [0,1).  p <= 0 gives all 0,
 * p >= 1 gives all 1. */
void tl_rand_bernoulli_u8(uint64_t seed, uint64_t offset, uint8_t* out, int64_t n, double p);

/* Random permutation of 0..n-1 by the (forward) Fisher-Yates shuffle:
 *   out[i] = i;  for k = 0 .. n-2: j = k + d_k % (n - k); swap(out[k], out[j])
 * where d_k is 64-bit draw k (block k/2, half k%2).  Consumes
 * tl_philox_blocks_int(n) = ceil(n/2) blocks.  Not splittable across threads. */
void tl_randperm_int64(uint64_t seed, uint64_t offset, int64_t* out, int64_t n);

#ifdef __cplusplus
}
#endif

#endif /* TENSORLIB_CPU_RANDOM_H */
