/* Reductions (sum, prod, max/min, arg-max/min, all/any, counts, norms, centered sums),
   softmax/log_softmax and cumulative sums/products on strided CPU tensors.

   The Cython side (reduce.pxi) parses arguments, picks dtypes, allocates outputs and
   describes the geometry: kept dims and reduced dims, each coalesced and ordered from the
   largest input stride to the smallest. tl_reduce then runs one of two layouts:

   TL_RED_INNER  the innermost reduced dim is read along its length (contiguous rows are
                 reduced in place; other strides and dtypes are gathered into a small buffer
                 of the compute type first). Each row is summed in blocks of TL_RED_BLOCK
                 elements by TL_RED_LANES independent accumulators; block results fold into
                 a wider state (double for floats), so errors grow with the block, not the
                 length of the row.
   TL_RED_OUTER  the innermost kept dim has stride 1: rows of the reduced dims are added
                 into a buffer of column accumulators (vectorized across the kept dim), with
                 the same block-then-fold cascade over row blocks.

   Work is split over outputs, or, when there are few outputs, over fixed chunks of the
   reduced space whose partial states are combined in chunk order: results never depend on
   the thread count. Call with the GIL released for large work. */
#ifndef TL_CPU_REDUCE_H
#define TL_CPU_REDUCE_H
#include <stdint.h>

#define TL_RED_MAXD 64

enum {
    TL_R_SUM = 0, TL_R_PROD, TL_R_MAX, TL_R_MIN,
    TL_R_ALL, TL_R_ANY, TL_R_NONZERO,        /* states are int64 (flags / counts) */
    TL_R_ABSSUM, TL_R_SUMSQ, TL_R_ABSMAX, TL_R_ABSMIN, TL_R_POWSUM,   /* vector norms */
    TL_R_CSQ,         /* sum of (x - center)^2: the second pass of var/std */
    TL_R_SUMEXP,      /* sum of exp(x - center): the second pass of logsumexp */
    TL_R_ARGMAX, TL_R_ARGMIN,   /* value and index of the first max/min (NaN wins) */
    TL_R_NUM_OPS
};

/* applied to each double state before it is stored */
enum {
    TL_POST_NONE = 0,
    TL_POST_DIV,          /* v / post_a                      (mean, var)  */
    TL_POST_SQRT_DIV,     /* sqrt(v / post_a)                (std, 2-norm with post_a = 1) */
    TL_POST_ROOT,         /* pow(v, 1 / post_a)              (p-norm) */
    TL_POST_LOG_CENTER    /* log(v) + center                 (logsumexp) */
};

enum { TL_RED_INNER = 0, TL_RED_OUTER = 1 };

typedef struct {
    int op, post, mode;
    int in_dtype;           /* dtype codes as in cpu_copy.h */
    int ct;                 /* compute dtype: TL_F32, TL_F64 or TL_I64 */
    int out_dtype;
    const char *src;        /* first element of the input */
    char *out;              /* values (NULL for argmax/argmin without values) */
    int64_t *idx;           /* indices for ARGMAX/ARGMIN (same element offsets as out) */
    const double *center;   /* per-output center (CSQ, SUMEXP, POST_LOG_CENTER), offsets as out */
    double p;               /* POWSUM exponent */
    double post_a;
    int nk, nr;             /* kept and reduced dims, outer to inner, size-1 dims dropped */
    int64_t kshape[TL_RED_MAXD], kin[TL_RED_MAXD], kout[TL_RED_MAXD];  /* strides in elements */
    int64_t rshape[TL_RED_MAXD], rin[TL_RED_MAXD];
} tl_red_t;

/* 0 on success, -1 when a scratch allocation failed (nothing else can fail). */
int tl_reduce(const tl_red_t *r);

/* Softmax (log = 0) or log_softmax (log = 1) along the middle dim of a contiguous
   [outer, n, inner] array; dtype TL_F32 or TL_F64; x and y may not overlap. */
int tl_softmax(int dtype, int want_log, const char *x, char *y, int64_t outer, int64_t n, int64_t inner);

/* Cumulative sum (prod = 0) or product (prod = 1) along the middle dim of a contiguous
   [outer, n, inner] array; dtype TL_F32, TL_F64 (accumulated in double) or TL_I64. */
void tl_cumulative(int prod, int dtype, const char *x, char *y, int64_t outer, int64_t n, int64_t inner);

#endif
