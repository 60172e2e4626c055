/* The nn family's CPU kernels (see cpu_nn.h for the contract). */
#include "cpu_nn.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu_math.h"
#include "cpu_pool.h"
#include "cpu_simd.h"

/* Aim for about this many element visits per parallel chunk. */
#define NN_GRAIN 32768

/* Record an index outside its plane: any makes the call fail; which one is reported may
   depend on the thread timing only when several planes hold bad indices. */
static void nn_bad(tl_nn_args *a, int64_t v) {
    int64_t none = INT64_MIN;
    __atomic_compare_exchange_n(&a->bad, &none, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* PyTorch's adaptive windows: [floor(o * in / out), ceil((o + 1) * in / out)) */
static inline int64_t nn_start(int64_t o, int64_t in, int64_t out) { return (o * in) / out; }
static inline int64_t nn_end(int64_t o, int64_t in, int64_t out) {
    return ((o + 1) * in + out - 1) / out;
}

/* float64 tanh over an array: per element (vectorized where it is inlined) */
static inline void nn_tanh_n_f64(const double *x, double *o, int64_t n)
{
    for (int64_t i = 0; i < n; i++) o[i] = tl_tanh(x[i]);
}

#define T float
#define SFX f32
#define NN_SIGM tl_sigmoidf
#define NN_TANH_N tl_tanhf_n
#define NN_EXP tl_expf
#include "cpu_nn_impl.h"
#undef T
#undef SFX
#undef NN_SIGM
#undef NN_TANH_N
#undef NN_EXP
#define T double
#define SFX f64
#define NN_SIGM tl_sigmoid
#define NN_TANH_N nn_tanh_n_f64
#define NN_EXP tl_exp
#include "cpu_nn_impl.h"
#undef T
#undef SFX
#undef NN_SIGM
#undef NN_TANH_N
#undef NN_EXP

#define XENT_SUMS(SFX, T)                                                        \
    static void xent_sums_##SFX(tl_nn_args *a) {                                 \
        const T *loss = (const T *)a->dst[0], *rw = (const T *)a->dst[2];         \
        double sl = 0, sw = 0;                                                    \
        for (int64_t r = 0; r < a->n; r++) { sl += loss[r]; sw += rw[r]; }        \
        if (a->gw) *(T *)a->gw = (T)(a->flag == 1 ? sl / sw : sl);                \
        *(T *)a->gb = (T)sw;                                                      \
    }
XENT_SUMS(f32, float)
XENT_SUMS(f64, double)

static int64_t nn_grain(int64_t work_per_item) {
    if (work_per_item < 1) work_per_item = 1;
    return NN_GRAIN / work_per_item > 1 ? NN_GRAIN / work_per_item : 1;
}

#define PICK(name) (f64 ? name##_f64 : name##_f32)

int tl_nn_run(int op, tl_nn_args *a) {
    const int f64 = a->dtype == 9;
    tl_chunk_fn fn;
    int64_t items, work;
    if (a->dtype != 8 && a->dtype != 9) return 2;
    const int64_t in3 = a->in[0] * a->in[1] * a->in[2];
    const int64_t out3 = a->out[0] * a->out[1] * a->out[2];
    const int64_t K = a->k[0] * a->k[1] * a->k[2];
    a->bad = INT64_MIN;
    switch (op) {
    case TL_NN_IM2COL: fn = PICK(im2col_chunk); items = a->n * a->c; work = K * out3; break;
    case TL_NN_COL2IM: fn = PICK(col2im_chunk); items = a->n * a->c; work = K * out3 + in3; break;
    case TL_NN_BIAS_ADD: fn = PICK(bias_add_chunk); items = a->n * a->c; work = a->m; break;
    case TL_NN_BIAS_GRAD: fn = PICK(bias_grad_chunk); items = a->c; work = a->n * a->m; break;
    case TL_NN_ACCUMULATE: fn = PICK(accumulate_chunk); items = a->n; work = 1; break;
    case TL_NN_MAXPOOL: fn = PICK(maxpool_chunk); items = a->n * a->c; work = out3 * K; break;
    case TL_NN_AVGPOOL: fn = PICK(avgpool_chunk); items = a->n * a->c; work = out3 * K; break;
    case TL_NN_AVGPOOL_BWD:
        fn = PICK(avgpool_bwd_chunk); items = a->n * a->c; work = out3 * K + in3; break;
    case TL_NN_ADAPT_AVG: fn = PICK(adapt_avg_chunk); items = a->n * a->c; work = in3 + out3; break;
    case TL_NN_ADAPT_AVG_BWD:
        fn = PICK(adapt_avg_bwd_chunk); items = a->n * a->c; work = in3 + out3; break;
    case TL_NN_ADAPT_MAX: fn = PICK(adapt_max_chunk); items = a->n * a->c; work = in3 + out3; break;
    case TL_NN_INDEX_ADD: fn = PICK(index_add_chunk); items = a->n; work = a->sp + a->dp; break;
    case TL_NN_INDEX_SET: fn = PICK(index_set_chunk); items = a->n; work = a->sp + a->dp; break;
    case TL_NN_BN_FWD: fn = PICK(bn_fwd_chunk); items = a->c; work = 3 * a->n * a->m; break;
    case TL_NN_BN_BWD: fn = PICK(bn_bwd_chunk); items = a->c; work = 2 * a->n * a->m; break;
    case TL_NN_ROWNORM_FWD: fn = PICK(rownorm_fwd_chunk); items = a->n; work = 3 * a->m; break;
    case TL_NN_LSTM_FWD: fn = PICK(lstm_fwd_chunk); items = a->n; work = 8 * a->m; break;
    case TL_NN_LSTM_BWD: fn = PICK(lstm_bwd_chunk); items = a->n; work = 8 * a->m; break;
    case TL_NN_GRU_FWD: fn = PICK(gru_fwd_chunk); items = a->n; work = 8 * a->m; break;
    case TL_NN_GRU_BWD: fn = PICK(gru_bwd_chunk); items = a->n; work = 8 * a->m; break;
    case TL_NN_XENT_BWD: fn = PICK(xent_bwd_chunk); items = a->n; work = 3 * a->m; break;
    case TL_NN_MSOFTMAX: fn = PICK(msoftmax_chunk); items = a->n; work = 3 * a->m; break;
    case TL_NN_MSOFTMAX_BWD: fn = PICK(msoftmax_bwd_chunk); items = a->n; work = 2 * a->m; break;
    case TL_NN_XENT_FWD:
        tl_parallel_for(0, a->n, nn_grain(3 * a->m), PICK(xent_fwd_chunk), a);
        /* the sums in row order, in double: the same on any thread count */
        if (f64) xent_sums_f64(a); else xent_sums_f32(a);
        return a->bad != INT64_MIN ? 1 : 0;
    case TL_NN_ROWNORM_BWD:
        /* grad_input by rows, then the affine gradients by columns / channels */
        if (a->y)
            tl_parallel_for(0, a->n, nn_grain(2 * a->m), PICK(rownorm_bwd_chunk), a);
        if (a->gw || a->gb) {
            if (a->mode == TL_NN_AFFINE_GROUP) {
                const int64_t C = a->groups * a->c;
                tl_parallel_for(0, C, nn_grain(a->n / a->groups * a->hw),
                                PICK(group_wgrad_chunk), a);
            } else {
                tl_parallel_for(0, a->m, nn_grain(a->n), PICK(layer_wgrad_chunk), a);
            }
        }
        return 0;
    default: return 2;
    }
    if (items > 0) tl_parallel_for(0, items, nn_grain(work), fn, a);
    return a->bad != INT64_MIN ? 1 : 0;
}
