/* The nn family's CPU kernels: convolution's im2col/col2im and bias steps, pooling (max with
   indices, average, adaptive), max-unpooling, and batch/layer/group normalization forward and
   backward, each in one pass over (N * C) planes or rows.

   One descriptor (tl_nn_args) and one entry point (tl_nn_run) serve every kernel; the front
   half (tensorlib/_core/nn_ops.pxi) fills the fields an op reads. All tensors are contiguous
   float32 or float64 (dtype codes as dtype.pxd: 8 and 9), all of one dtype; indices int64.

   Determinism: work is split over planes/rows/channels in fixed chunks (tl_parallel_for), each
   output element is written by one chunk, and every sum runs in a fixed order in double, so
   results never depend on the thread count. Call with the GIL released for large work. */
#ifndef TL_CPU_NN_H
#define TL_CPU_NN_H
#include <stdint.h>

enum {
    TL_NN_IM2COL = 0,     /* x [n, c, in] -> cols: row (ci*K + kk), column (ni*L + l), ld */
    TL_NN_COL2IM,         /* cols -> y [n, c, in]: y = 0, then the sum of every column entry */
    TL_NN_BIAS_ADD,       /* y [n, c, hw] += w[c] */
    TL_NN_BIAS_GRAD,      /* gw[c] = sum over n, hw of g [n, c, hw] */
    TL_NN_ACCUMULATE,     /* y[i] += x[i], i < n */
    TL_NN_MAXPOOL,        /* x planes [in1, in2] -> y, idx planes [out1, out2] */
    TL_NN_AVGPOOL,        /* x -> y (flag: count_include_pad, divisor: override or 0) */
    TL_NN_AVGPOOL_BWD,    /* g [out] -> y [in] */
    TL_NN_ADAPT_AVG,      /* x [in] -> y [out] */
    TL_NN_ADAPT_AVG_BWD,  /* g [out] -> y [in] */
    TL_NN_ADAPT_MAX,      /* x [in] -> y, idx [out] */
    TL_NN_INDEX_ADD,      /* y planes of dp zeroed, then y[idx[j]] += g[j] over sp entries */
    TL_NN_INDEX_SET,      /* y planes of dp zeroed, then y[idx[j]] = x[j] over sp entries */
    TL_NN_BN_FWD,         /* batch norm forward over [n, c, hw] (flag: training) */
    TL_NN_BN_BWD,         /* batch norm backward (flag: training) */
    TL_NN_ROWNORM_FWD,    /* layer/group norm forward: n rows of m (affine: mode) */
    TL_NN_ROWNORM_BWD,
    TL_NN_LSTM_FWD,       /* fused LSTM cell: n rows, m = hidden size (see src/dst below) */
    TL_NN_LSTM_BWD,
    TL_NN_GRU_FWD,        /* fused GRU cell */
    TL_NN_GRU_BWD,
    TL_NN_XENT_FWD,       /* cross entropy of n rows of m logits (see the fields below) */
    TL_NN_XENT_BWD,
    TL_NN_MSOFTMAX,       /* masked softmax of n rows of m scores (see the fields below) */
    TL_NN_MSOFTMAX_BWD,
    TL_NN_NUM_OPS
};

/* affine modes of the row norms */
enum { TL_NN_AFFINE_NONE = 0, TL_NN_AFFINE_LAYER = 1, TL_NN_AFFINE_GROUP = 2 };

typedef struct {
    int dtype;
    int flag;               /* avg pool: count_include_pad; batch norm: training */
    int mode;               /* row norms: affine mode */
    int64_t n, c;           /* planes are n * c; row norms: n rows */
    int64_t in[3], out[3];  /* image-side and grid-side spatial sizes (d, h, w) */
    int64_t k[3], s[3], p[3], dil[3];
    int64_t ld;             /* row stride of the column matrix */
    int64_t sp, dp;         /* index kernels: source and destination plane sizes */
    int64_t m;              /* row norms: row length; batch norm: hw */
    int64_t groups, hw;     /* group norm: groups, spatial size (channels per group in c) */
    int64_t divisor;
    double eps, momentum;
    const void *x;          /* input */
    const void *g;          /* incoming gradient */
    const void *w;          /* weight (gamma, or bias for BIAS_ADD), may be NULL */
    const void *b;          /* bias (beta), may be NULL */
    void *y;                /* output (or grad_input, may be NULL in BN_BWD/ROWNORM_BWD) */
    void *mean, *rstd;      /* saved statistics */
    void *rmean, *rvar;     /* running statistics (batch norm), may be NULL */
    void *gw, *gb;          /* weight and bias gradients, may be NULL */
    int64_t *idx;
    int64_t bad;
    /* The recurrent cells (rows of [n, G * m], G = 4 for LSTM, 3 for GRU; flag: has bias):
       LSTM_FWD src: input_gates, hidden_gates, cx, input_bias, hidden_bias (biases may be
                NULL); dst: hy, cy, workspace [n, 4m] (the activated gates i, f, g, o).
       LSTM_BWD src: grad_hy, grad_cy (either may be NULL), cx, cy, workspace;
                dst: grad_gates [n, 4m], grad_cx.
       GRU_FWD  src: as LSTM_FWD with hx for cx; dst: hy, workspace [n, 5m] (r, z, n, the
                hidden part of n before the reset gate, hx).
       GRU_BWD  src: grad_hy, workspace; dst: grad_input_gates, grad_hidden_gates, grad_hx. */
    const void *src[5];
    void *dst[3];            /* index kernels: an out-of-range index found (else INT64_MIN) */
    /* Cross entropy (log_softmax + nll in one pass) over n rows of m logits x, class targets
       idx (a target equal to ignore_index is skipped; any other outside [0, m) is reported
       in bad), class weights w (or NULL), label smoothing:
       flag: the reduction, PyTorch's codes (0 none, 1 mean, 2 sum).
       XENT_FWD dst: per-row loss [n], per-row log-sum-exp [n] (saved for the backward),
                per-row weight [n] (the target's class weight, 0 when ignored); gb: the sum
                of the row weights (the mean's divisor), gw (or NULL): the reduced loss.
       XENT_BWD x, g: the incoming gradient (one per row with flag 0, else one value),
                src[0]: log-sum-exp, rstd: the divisor; y = grad_input [n, m]. */
    int64_t ignore_index;
    double smoothing;
    /* Masked softmax (attention weights) of n rows of m scores x, y = softmax(x * scale
       + mask) per row. The mask (b: uint8 keep flags when mode is 1, additive values of
       the scores' type when mode is 2, none when 0) is read at a strided offset: row r
       unravels over the rows' shape rdims[0..rnd) (the scores' leading dims) with strides
       rstr, the column with stride mcol. flag bit 0: causal (row r % out[0] keeps the
       columns up to it); bit 1: a row with nothing kept gives zeros (else NaN). Scale in
       momentum.
       MSOFTMAX_BWD: y (the forward's output, in src[0]) and g -> x-shaped grad in dst[0]:
       scale * y * (g - sum(g * y)). */
    int rnd;
    int64_t rdims[6], rstr[6], mcol;
} tl_nn_args;

/* Run one kernel; returns 0, or 1 when an index kernel met an index outside its plane
   (a->bad holds it), 2 for an unknown op or dtype. */
int tl_nn_run(int op, tl_nn_args *a);

#endif
