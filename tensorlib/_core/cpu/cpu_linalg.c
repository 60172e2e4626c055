/* Integer matrix products and the scaled sums of addmm/addmv/baddbmm (see cpu_linalg.h). */
#include <string.h>

#include "cpu_linalg.h"
#include "cpu_pool.h"
#include "cpu_simd.h"

/* c[0:n] += s * b[0:n]: the i-k-j inner loop, contiguous so it vectorizes. */
TL_DISPATCH static void axpy_row_i64(int64_t *TL_RESTRICT c, const int64_t *TL_RESTRICT b,
                                     int64_t s, int64_t n) {
    for (int64_t j = 0; j < n; j++) c[j] += s * b[j];
}

/* sum_k a[k*sa] * b[k*sb] (the N == 1 case: matrix-vector and dot products). */
TL_DISPATCH static int64_t dot_i64(const int64_t *a, int64_t sa, const int64_t *b, int64_t sb,
                                   int64_t n) {
    int64_t acc = 0;
    if (sa == 1 && sb == 1) {
        for (int64_t k = 0; k < n; k++) acc += a[k] * b[k];
    } else {
        for (int64_t k = 0; k < n; k++) acc += a[k * sa] * b[k * sb];
    }
    return acc;
}

/* Bytes of B's rows kept hot while a chunk of rows walks them (fits a typical L2). */
#define KBLOCK_BYTES (128 * 1024)

/* Rows [r0, r1) of the flattened [B*M, N] result. */
static void igemm_chunk(void *ctx, int64_t r0, int64_t r1) {
    const tl_igemm_args *g = (const tl_igemm_args *)ctx;
    const int64_t M = g->M, N = g->N, K = g->K;
    if (N == 1) {
        for (int64_t r = r0; r < r1; r++) {
            const int64_t bi = r / M, i = r % M;
            g->c[r] = dot_i64(g->a + bi * g->sab + i * g->sam, g->sak, g->b + bi * g->sbb, g->sbk, K);
        }
        return;
    }
    memset(g->c + r0 * N, 0, (size_t)((r1 - r0) * N) * sizeof(int64_t));
    int64_t kb = KBLOCK_BYTES / (N * (int64_t)sizeof(int64_t));
    if (kb < 1) kb = 1;
    /* k-blocked so a block of B's rows is reused by every row of the chunk */
    for (int64_t k0 = 0; k0 < K; k0 += kb) {
        const int64_t k1 = k0 + kb < K ? k0 + kb : K;
        for (int64_t r = r0; r < r1; r++) {
            const int64_t bi = r / M, i = r % M;
            const int64_t *arow = g->a + bi * g->sab + i * g->sam;
            const int64_t *bmat = g->b + bi * g->sbb;
            int64_t *crow = g->c + r * N;
            for (int64_t k = k0; k < k1; k++) {
                const int64_t s = arow[k * g->sak];
                if (s != 0) axpy_row_i64(crow, bmat + k * g->sbk, s, N);
            }
        }
    }
}

void tl_igemm(const tl_igemm_args *g) {
    const int64_t rows = g->B * g->M;
    if (rows <= 0 || g->N <= 0) return;
    int64_t work = g->N * (g->K > 0 ? g->K : 1);
    /* ~32K multiply-adds per chunk, but at least 8 rows so the k-blocks get reused */
    int64_t grain = (int64_t)32768 / work;
    if (grain < 8) grain = 8;
    if (grain > 1024) grain = 1024;
    tl_parallel_for(0, rows, grain, igemm_chunk, (void *)g);
}

#define GEMM_SMALL(NAME, T)                                                                  \
    void NAME(int64_t B, int64_t M, int64_t N, int64_t K, const T *a, int64_t sab, int64_t sam, \
              int64_t sak, const T *b, int64_t sbb, int64_t sbk, int64_t sbn, T *c) {           \
        for (int64_t bi = 0; bi < B; bi++)                                                     \
            for (int64_t i = 0; i < M; i++) {                                                  \
                const T *ar = a + bi * sab + i * sam;                                          \
                for (int64_t j = 0; j < N; j++) {                                              \
                    const T *bc = b + bi * sbb + j * sbn;                                      \
                    double acc = (double)ar[0] * (double)bc[0];                                \
                    for (int64_t k = 1; k < K; k++) acc += (double)ar[k * sak] * (double)bc[k * sbk]; \
                    *c++ = (T)acc;                                                             \
                }                                                                              \
            }                                                                                  \
    }

GEMM_SMALL(tl_gemm_small_f32, float)
GEMM_SMALL(tl_gemm_small_f64, double)

/* out = alpha * x + beta * y, each term dropped when its flag is 0. */
#define AXPBY(NAME, T)                                                                       \
    void NAME(const int64_t *shape, T *out, const int64_t *so, const T *x, const int64_t *sx, \
              const T *y, const int64_t *sy, T alpha, T beta, int use_x, int use_y) {        \
        for (int64_t b = 0; b < shape[0]; b++) {                                             \
            for (int64_t i = 0; i < shape[1]; i++) {                                         \
                T *o = out + b * so[0] + i * so[1];                                          \
                const T *xp = use_x ? x + b * sx[0] + i * sx[1] : 0;                         \
                const T *yp = use_y ? y + b * sy[0] + i * sy[1] : 0;                         \
                const int64_t n = shape[2], s0 = so[2];                                      \
                if (use_x && use_y) {                                                        \
                    const int64_t s1 = sx[2], s2 = sy[2];                                    \
                    for (int64_t j = 0; j < n; j++)                                          \
                        o[j * s0] = alpha * xp[j * s1] + beta * yp[j * s2];                  \
                } else if (use_x) {                                                          \
                    const int64_t s1 = sx[2];                                                \
                    for (int64_t j = 0; j < n; j++) o[j * s0] = alpha * xp[j * s1];          \
                } else if (use_y) {                                                          \
                    const int64_t s2 = sy[2];                                                \
                    for (int64_t j = 0; j < n; j++) o[j * s0] = beta * yp[j * s2];           \
                } else {                                                                     \
                    for (int64_t j = 0; j < n; j++) o[j * s0] = 0;                           \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }

TL_DISPATCH AXPBY(tl_axpby_f32, float)
TL_DISPATCH AXPBY(tl_axpby_f64, double)
TL_DISPATCH AXPBY(tl_axpby_i64, int64_t)
