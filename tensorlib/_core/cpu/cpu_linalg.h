/* Linear-algebra inner loops that do not go through BLAS: integer (batched) matrix products
   and the scaled sums of addmm/addmv/baddbmm. Float products go through NumPy's BLAS (see
   linalg.pxi); these loops cover what BLAS has no routine for. */
#ifndef TL_CPU_LINALG_H
#define TL_CPU_LINALG_H
#include <stdint.h>

/* c[b, i, j] = sum_k a[b, i, k] * b[b, k, j] in int64 with wraparound (-fwrapv), for
   b < B, i < M, j < N, k < K. Strides are in elements; `c` is contiguous [B, M, N].
   A batch stride may be 0 (a broadcast operand). Row-parallel on the thread pool: call
   with the GIL released. Results never depend on the thread count (integers are exact). */
typedef struct {
    int64_t B, M, N, K;
    const int64_t *a;
    int64_t sab, sam, sak;
    const int64_t *b;
    int64_t sbb, sbk, sbn;
    int64_t *c;
} tl_igemm_args;

void tl_igemm(const tl_igemm_args *g);

/* Float products too small for a BLAS call to pay off (the NumPy dispatch costs more than
   the arithmetic): any strides, accumulation in double, `c` contiguous [B, M, N]. The sum
   starts from the first product, so a single product keeps its sign (-0.0). */
void tl_gemm_small_f32(int64_t B, int64_t M, int64_t N, int64_t K, const float *a, int64_t sab,
                       int64_t sam, int64_t sak, const float *b, int64_t sbb, int64_t sbk,
                       int64_t sbn, float *c);
void tl_gemm_small_f64(int64_t B, int64_t M, int64_t N, int64_t K, const double *a,
                       int64_t sab, int64_t sam, int64_t sak, const double *b, int64_t sbb,
                       int64_t sbk, int64_t sbn, double *c);

/* out = alpha * x + beta * y over a 3-D index space `shape` (strides in elements; out may
   be x or y exactly). use_x = 0 ignores x (PyTorch's addmm with alpha == 0 ignores NaN in
   the product) and use_y = 0 ignores y (beta == 0 ignores NaN in the input). */
void tl_axpby_f32(const int64_t *shape, float *out, const int64_t *so, const float *x,
                  const int64_t *sx, const float *y, const int64_t *sy, float alpha, float beta,
                  int use_x, int use_y);
void tl_axpby_f64(const int64_t *shape, double *out, const int64_t *so, const double *x,
                  const int64_t *sx, const double *y, const int64_t *sy, double alpha,
                  double beta, int use_x, int use_y);
void tl_axpby_i64(const int64_t *shape, int64_t *out, const int64_t *so, const int64_t *x,
                  const int64_t *sx, const int64_t *y, const int64_t *sy, int64_t alpha,
                  int64_t beta, int use_x, int use_y);

#endif
