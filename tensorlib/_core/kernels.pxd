# The C kernels of the CPU back end (tensorlib/_core/cpu/*.h) as Cython sees them: the
# descriptors the front halves fill (tl_ew_iter, tl_red_t, tl_igemm_args, tl_rows_t) and
# the functions that run them. Declarations only: the kernels are compiled into the tensor
# extension (one thread pool); the op-family modules cimport the descriptor types from here
# and hand them to the back end (``Backend`` in tensor.pxd).
from libc.stdint cimport int64_t

cdef extern from "cpu_elementwise.h" nogil:
    ctypedef void (*tl_loop_fn)(char** data, const int64_t* strides, int64_t n, const void* extra)
    ctypedef struct tl_ew_iter:
        int nops
        int ndim
        int64_t shape[64]
        int64_t strides[4][64]
        char* data[4]
        int dtype[4]
        int loop_dtype[4]
        tl_loop_fn fn
        const void* extra
    void tl_ew_run(const tl_ew_iter* it)
    int TL_EW_PARALLEL_MIN


cdef extern from "cpu_reduce.h" nogil:
    enum:
        TL_R_SUM, TL_R_PROD, TL_R_MAX, TL_R_MIN, TL_R_ALL, TL_R_ANY, TL_R_NONZERO
        TL_R_ABSSUM, TL_R_SUMSQ, TL_R_ABSMAX, TL_R_ABSMIN, TL_R_POWSUM, TL_R_CSQ, TL_R_SUMEXP
        TL_R_ARGMAX, TL_R_ARGMIN
        TL_POST_NONE, TL_POST_DIV, TL_POST_SQRT_DIV, TL_POST_ROOT, TL_POST_LOG_CENTER
        TL_RED_INNER, TL_RED_OUTER
    ctypedef struct tl_red_t:
        int op, post, mode, in_dtype, ct, out_dtype
        const char* src
        char* out
        int64_t* idx
        const double* center
        double p, post_a
        int nk, nr
        int64_t kshape[64]
        int64_t kin[64]
        int64_t kout[64]
        int64_t rshape[64]
        int64_t rin[64]
    int tl_reduce(const tl_red_t* r)
    int tl_softmax(int dtype, int want_log, const char* x, char* y, int64_t outer, int64_t n,
                   int64_t inner)
    void tl_cumulative(int prod, int dtype, const char* x, char* y, int64_t outer, int64_t n,
                       int64_t inner)


cdef extern from "cpu_linalg.h" nogil:
    ctypedef struct tl_igemm_args:
        int64_t B, M, N, K
        const int64_t* a
        int64_t sab, sam, sak
        const int64_t* b
        int64_t sbb, sbk, sbn
        int64_t* c
    void tl_igemm(const tl_igemm_args* g)
    void tl_gemm_small_f32(int64_t B, int64_t M, int64_t N, int64_t K, const float* a, int64_t sab,
                           int64_t sam, int64_t sak, const float* b, int64_t sbb, int64_t sbk,
                           int64_t sbn, float* c)
    void tl_gemm_small_f64(int64_t B, int64_t M, int64_t N, int64_t K, const double* a, int64_t sab,
                           int64_t sam, int64_t sak, const double* b, int64_t sbb, int64_t sbk,
                           int64_t sbn, double* c)
    void tl_axpby_f32(const int64_t* shape, float* out, const int64_t* so, const float* x,
                      const int64_t* sx, const float* y, const int64_t* sy, float alpha,
                      float beta, int use_x, int use_y)
    void tl_axpby_f64(const int64_t* shape, double* out, const int64_t* so, const double* x,
                      const int64_t* sx, const double* y, const int64_t* sy, double alpha,
                      double beta, int use_x, int use_y)
    void tl_axpby_i64(const int64_t* shape, int64_t* out, const int64_t* so, const int64_t* x,
                      const int64_t* sx, const int64_t* y, const int64_t* sy, int64_t alpha,
                      int64_t beta, int use_x, int use_y)


cdef extern from "cpu_sort.h" nogil:
    ctypedef struct tl_rows_t:
        int dtype
        int outer_nd
        const int64_t* outer_shape
        const int64_t* src_os
        const int64_t* o0_os
        const int64_t* o1_os
        int64_t nrows
        int64_t n
        int64_t src_st
        int64_t o0_st
        int64_t o1_st
        const char* src
        char* o0
        int64_t* o1
    int tl_sort_rows(const tl_rows_t* r, int descending)
    int tl_topk_rows(const tl_rows_t* r, int64_t k, int largest)
    int tl_select_rows(const tl_rows_t* r, int64_t k, int which)
    int tl_mode_rows(const tl_rows_t* r)
    int64_t tl_runs(int dtype, const char* vals, int64_t n, int64_t* run_of)
    void tl_unique_fill(int dtype, const char* sorted_vals, const int64_t* order,
                        const int64_t* run_of, int64_t n, char* uniq, int64_t* inverse,
                        int64_t* counts)
    int tl_sort_slices(int dtype, const char* data, int64_t m, int64_t len, int64_t* perm)
    int64_t tl_slice_runs(int dtype, const char* data, const int64_t* perm, int64_t m,
                          int64_t len, int64_t* run_of)
    enum:
        TL_SELECT_KTH
        TL_SELECT_MEDIAN
        TL_SELECT_NANMEDIAN


cdef extern from "cpu_index.h" nogil:
    enum:
        TL_IDX_MAX_DIMS
        TL_IDX_COPY
        TL_IDX_ADD
        TL_IDX_MUL
        TL_IDX_MAX
        TL_IDX_MIN
        TL_IDX_SIDE_SRC
        TL_IDX_SIDE_DST
    ctypedef struct tl_index_src:
        const char* data
        int is_int32
        int64_t strides[64]
        int64_t size
        int64_t mul
    ctypedef struct tl_nz:
        int64_t nchunks
    int tl_index_offsets(int nb, const int64_t* bshape, int k, const tl_index_src* srcs, int wrap,
                         int64_t* out, int* bad_k, int64_t* bad_pos, int64_t* bad_val)
    void tl_linear_to_offsets(int64_t n, int64_t* inout, int ndim, const int64_t* shape,
                              const int64_t* strides)
    void tl_index_run(int ndim, const int64_t* shape, char* dst, const int64_t* dst_st,
                      const char* src, const int64_t* src_st, const int64_t* idx,
                      const int64_t* idx_st, int64_t idx_mul, int side, int dtype, int op,
                      int parallel)
    int64_t tl_nonzero_setup(tl_nz* p, int ndim, const int64_t* shape, const char* data,
                             const int64_t* strides, int dtype)
    int64_t tl_nonzero_count(const tl_nz* p, int64_t* chunk_counts, int parallel)
    void tl_nonzero_fill(const tl_nz* p, const int64_t* chunk_counts, int64_t* out,
                         int64_t dim_stride, const int64_t* muls, int parallel)
    void tl_nonzero_gather(const tl_nz* p, const int64_t* chunk_counts, char* out, const char* src,
                           const int64_t* src_strides, int itemsize, int parallel)
    int tl_index_take1(int64_t n, const int64_t* ix, char* dst, const char* src, int64_t src_stride,
                       int64_t size, int itemsize, int64_t* bad_pos, int parallel)
    void tl_index_scale(int dtype, int64_t n, char* data, double alpha_d, int64_t alpha_i)
    void tl_index_div_counts(int ndim, const int64_t* shape, char* data, const int64_t* strides,
                             int dtype, const int64_t* counts, const int64_t* count_strides)


# the per-row kernels of cpu_sort.h that ``Backend.rows`` runs
cdef enum RowsOp:
    _OP_SORT
    _OP_TOPK
    _OP_SELECT
    _OP_MODE


cdef extern from "cpu_nn.h" nogil:
    enum:
        TL_NN_IM2COL, TL_NN_COL2IM, TL_NN_BIAS_ADD, TL_NN_BIAS_GRAD, TL_NN_ACCUMULATE,
        TL_NN_MAXPOOL, TL_NN_AVGPOOL, TL_NN_AVGPOOL_BWD, TL_NN_ADAPT_AVG, TL_NN_ADAPT_AVG_BWD,
        TL_NN_ADAPT_MAX, TL_NN_INDEX_ADD, TL_NN_INDEX_SET, TL_NN_BN_FWD,
        TL_NN_BN_BWD, TL_NN_ROWNORM_FWD, TL_NN_ROWNORM_BWD, TL_NN_LSTM_FWD, TL_NN_LSTM_BWD,
        TL_NN_GRU_FWD, TL_NN_GRU_BWD, TL_NN_XENT_FWD, TL_NN_XENT_BWD,
        TL_NN_MSOFTMAX, TL_NN_MSOFTMAX_BWD
    enum:
        TL_NN_AFFINE_NONE, TL_NN_AFFINE_LAYER, TL_NN_AFFINE_GROUP
    ctypedef struct tl_nn_args:
        int dtype
        int flag
        int mode
        int64_t n, c
        int64_t in_ "in"[3]
        int64_t out[3]
        int64_t k[3]
        int64_t s[3]
        int64_t p[3]
        int64_t dil[3]
        int64_t ld
        int64_t sp, dp
        int64_t m
        int64_t groups, hw
        int64_t divisor
        double eps, momentum
        const void* x
        const void* g
        const void* w
        const void* b
        void* y
        void* mean
        void* rstd
        void* rmean
        void* rvar
        void* gw
        void* gb
        int64_t* idx
        int64_t bad
        const void* src[5]
        void* dst[3]
        int64_t ignore_index
        double smoothing
        int rnd
        int64_t rdims[6]
        int64_t rstr[6]
        int64_t mcol
    int tl_nn_run(int op, tl_nn_args* a)


from libc.stdint cimport uint8_t

cdef extern from "cpu_optim.h" nogil:
    enum:
        TL_OPT_SGD, TL_OPT_ADAM, TL_OPT_ADAMAX, TL_OPT_NADAM, TL_OPT_RADAM, TL_OPT_ADAGRAD,
        TL_OPT_ADADELTA, TL_OPT_RMSPROP, TL_OPT_RPROP, TL_OPT_ASGD, TL_OPT_NUM_OPS
    enum:
        TL_OPT_MAXIMIZE, TL_OPT_AMSGRAD, TL_OPT_DECOUPLED, TL_OPT_NESTEROV, TL_OPT_MOMENTUM,
        TL_OPT_CENTERED
    enum:
        TL_OPT_MAX_STATE, TL_OPT_MAX_SCALAR, TL_OPT_MAX_HP
    ctypedef struct tl_optim_args:
        int op
        int dtype
        int scalar_dtype[3]
        int flags
        int64_t n
        char** param
        char** grad
        char** state[3]
        char** scalar[3]
        const int64_t* numel
        const uint8_t* fresh
        double hp[8]
    int tl_optim_run(const tl_optim_args* a)
