/* Indexing kernels (see cpu_index.h for the contract: validate first, then loop). */
#include "cpu_index.h"
#include "cpu_copy.h"
#include "cpu_pool.h"
#include "cpu_simd.h"
#include <stdlib.h>
#include <string.h>

/* about this many elements of work per parallel chunk */
#define GRAIN_ELEMS 32768

/* ------------------------------------------------------------------------------------------
   row iteration: the innermost dim is a "row"; outer dims are walked with a counter */

static inline void unravel(int64_t r, int nouter, const int64_t *shape, int64_t *ctr) {
    for (int d = nouter - 1; d >= 0; d--) {
        ctr[d] = r % shape[d];
        r /= shape[d];
    }
}

static inline void next_row(int nouter, const int64_t *shape, int64_t *ctr) {
    for (int d = nouter - 1; d >= 0; d--) {
        if (++ctr[d] < shape[d]) return;
        ctr[d] = 0;
    }
}

static inline int64_t dot(int n, const int64_t *ctr, const int64_t *st) {
    int64_t s = 0;
    for (int d = 0; d < n; d++) s += ctr[d] * st[d];
    return s;
}

/* Run fn over [0, rows) in chunks of `grain`: on the pool when `parallel`, else inline
   (same chunks either way, so per-chunk results never depend on the thread count). */
static void run_chunks(int64_t rows, int64_t grain, tl_chunk_fn fn, void *ctx, int parallel) {
    if (rows <= 0) return;
    if (parallel) {
        tl_parallel_for(0, rows, grain, fn, ctx);
        return;
    }
    for (int64_t b = 0; b < rows; b += grain) fn(ctx, b, b + grain < rows ? b + grain : rows);
}

static int64_t grain_rows(int64_t inner, int64_t work_per_elem) {
    int64_t per_row = inner * work_per_elem;
    int64_t g = per_row > 0 ? GRAIN_ELEMS / per_row : 1;
    return g > 0 ? g : 1;
}

/* ------------------------------------------------------------------------------------------
   index validation -> private int64 offsets */

/* Index validation loops, in blocks: a block is first processed branch-free (so it
   vectorizes), collecting a "some value is bad" flag; only a flagged block is scanned again
   to find the first bad position. (uint64_t)v >= size catches negative values too. */
#define IDX_BLOCK 256

#define OFF_LOOP(NAME, T)                                                                     \
    TL_DISPATCH static int64_t NAME(int64_t *o, const T *p, int64_t st, int64_t n,           \
                                    int64_t size, int64_t mul, int wrap, int first) {         \
        for (int64_t b = 0; b < n; b += IDX_BLOCK) {                                          \
            int64_t e = n - b < IDX_BLOCK ? n : b + IDX_BLOCK;                                \
            uint64_t bad = 0;                                                                 \
            if (st == 1 && first) {                                                           \
                for (int64_t i = b; i < e; i++) {                                             \
                    int64_t v = (int64_t)p[i];                                                \
                    v += (wrap && v < 0) ? size : 0;                                          \
                    bad |= (uint64_t)v >= (uint64_t)size;                                     \
                    o[i] = v * mul;                                                           \
                }                                                                             \
            } else {                                                                          \
                for (int64_t i = b; i < e; i++) {                                             \
                    int64_t v = (int64_t)p[i * st];                                           \
                    v += (wrap && v < 0) ? size : 0;                                          \
                    bad |= (uint64_t)v >= (uint64_t)size;                                     \
                    o[i] = first ? v * mul : o[i] + v * mul;                                  \
                }                                                                             \
            }                                                                                 \
            if (bad) {                                                                        \
                for (int64_t i = b; i < e; i++) {                                             \
                    int64_t v = (int64_t)p[i * st];                                           \
                    v += (wrap && v < 0) ? size : 0;                                          \
                    if ((uint64_t)v >= (uint64_t)size) return i;                              \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
        return -1;                                                                            \
    }
OFF_LOOP(off_loop_i32, int32_t)
OFF_LOOP(off_loop_i64, int64_t)

/* check only (out == NULL): the caller then reads the index tensor itself */
#define CHECK_LOOP(NAME, T)                                                                   \
    TL_DISPATCH static int64_t NAME(const T *p, int64_t st, int64_t n, int64_t size,         \
                                    int wrap) {                                               \
        for (int64_t b = 0; b < n; b += IDX_BLOCK) {                                          \
            int64_t e = n - b < IDX_BLOCK ? n : b + IDX_BLOCK;                                \
            uint64_t bad = 0;                                                                 \
            if (st == 1) {                                                                    \
                for (int64_t i = b; i < e; i++) {                                             \
                    int64_t v = (int64_t)p[i];                                                \
                    v += (wrap && v < 0) ? size : 0;                                          \
                    bad |= (uint64_t)v >= (uint64_t)size;                                     \
                }                                                                             \
            } else {                                                                          \
                for (int64_t i = b; i < e; i++) {                                             \
                    int64_t v = (int64_t)p[i * st];                                           \
                    v += (wrap && v < 0) ? size : 0;                                          \
                    bad |= (uint64_t)v >= (uint64_t)size;                                     \
                }                                                                             \
            }                                                                                 \
            if (bad) {                                                                        \
                for (int64_t i = b; i < e; i++) {                                             \
                    int64_t v = (int64_t)p[i * st];                                           \
                    v += (wrap && v < 0) ? size : 0;                                          \
                    if ((uint64_t)v >= (uint64_t)size) return i;                              \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
        return -1;                                                                            \
    }
CHECK_LOOP(check_loop_i32, int32_t)
CHECK_LOOP(check_loop_i64, int64_t)

typedef struct {
    int nb, k, wrap;
    const int64_t *bshape;
    const tl_index_src *srcs;
    int64_t *out;
    int64_t inner, grain;
    int64_t *bad;      /* per chunk: first bad (position * k + which), or -1 */
} off_ctx;

static void off_rows(void *vctx, int64_t r0, int64_t r1) {
    off_ctx *c = (off_ctx *)vctx;
    int64_t ctr[TL_IDX_MAX_DIMS];
    int nouter = c->nb > 0 ? c->nb - 1 : 0;
    int64_t inner = c->inner, best = -1;
    unravel(r0, nouter, c->bshape, ctr);
    for (int64_t r = r0; r < r1 && best < 0; r++) {
        int64_t *o = c->out != NULL ? c->out + r * inner : NULL;
        for (int kk = 0; kk < c->k; kk++) {
            const tl_index_src *s = &c->srcs[kk];
            int64_t base = dot(nouter, ctr, s->strides);
            int64_t st = c->nb > 0 ? s->strides[c->nb - 1] : 0, badi;
            if (o == NULL)
                badi = s->is_int32 ? check_loop_i32((const int32_t *)s->data + base, st, inner, s->size, c->wrap)
                                   : check_loop_i64((const int64_t *)s->data + base, st, inner, s->size, c->wrap);
            else if (s->is_int32)
                badi = off_loop_i32(o, (const int32_t *)s->data + base, st, inner, s->size, s->mul,
                                    c->wrap, kk == 0);
            else
                badi = off_loop_i64(o, (const int64_t *)s->data + base, st, inner, s->size, s->mul,
                                    c->wrap, kk == 0);
            if (badi >= 0) {
                int64_t cand = (r * inner + badi) * c->k + kk;
                if (best < 0 || cand < best) best = cand;
            }
        }
        next_row(nouter, c->bshape, ctr);
    }
    c->bad[r0 / c->grain] = best;
}

int tl_index_offsets(int nb, const int64_t *bshape, int k, const tl_index_src *srcs, int wrap,
                     int64_t *out, int *bad_k, int64_t *bad_pos, int64_t *bad_val) {
    off_ctx c;
    int64_t total = 1, rows, nchunks, best = -1, one_bad;
    for (int d = 0; d < nb; d++) total *= bshape[d];
    if (total == 0 || k == 0) return 0;
    c.nb = nb;
    c.k = k;
    c.wrap = wrap;
    c.bshape = bshape;
    c.srcs = srcs;
    c.out = out;
    c.inner = nb > 0 ? bshape[nb - 1] : 1;
    rows = total / c.inner;
    c.grain = grain_rows(c.inner, k);
    nchunks = (rows + c.grain - 1) / c.grain;
    c.bad = nchunks > 1 ? (int64_t *)malloc(nchunks * sizeof(int64_t)) : &one_bad;
    if (c.bad == NULL) {            /* no memory for per-chunk slots: one serial chunk */
        c.grain = rows;
        nchunks = 1;
        c.bad = &one_bad;
    }
    run_chunks(rows, c.grain, off_rows, &c, nchunks > 1 && total >= GRAIN_ELEMS);
    for (int64_t i = 0; i < nchunks; i++) {
        if (c.bad[i] >= 0) {
            best = c.bad[i];
            break;                   /* chunks are in position order */
        }
    }
    if (c.bad != &one_bad) free(c.bad);
    if (best < 0) return 0;
    {
        int64_t ctr[TL_IDX_MAX_DIMS];
        int kk = (int)(best % k);
        int64_t pos = best / k, off;
        unravel(pos, nb, bshape, ctr);
        off = dot(nb, ctr, srcs[kk].strides);
        *bad_k = kk;
        *bad_pos = pos;
        *bad_val = srcs[kk].is_int32 ? (int64_t)((const int32_t *)srcs[kk].data)[off]
                                     : ((const int64_t *)srcs[kk].data)[off];
    }
    return 1;
}

void tl_linear_to_offsets(int64_t n, int64_t *inout, int ndim, const int64_t *shape,
                          const int64_t *strides) {
    for (int64_t i = 0; i < n; i++) {
        int64_t l = inout[i], off = 0;
        for (int d = ndim - 1; d >= 0; d--) {
            off += (l % shape[d]) * strides[d];
            l /= shape[d];
        }
        inout[i] = off;
    }
}

/* ------------------------------------------------------------------------------------------
   the strided gather/scatter loop */

typedef void (*row_fn)(char *d, int64_t ds, const char *s, int64_t ss, const int64_t *ix,
                       int64_t is, int64_t mul, int64_t n);

#define GATHER_FN(NAME, T)                                                                    \
    TL_DISPATCH static void NAME(char *d, int64_t ds, const char *s, int64_t ss,             \
                                 const int64_t *ix, int64_t is, int64_t mul, int64_t n) {    \
        if (is == 0) { /* one source row */                                                   \
            const char *row = s + ix[0] * mul;                                                \
            if (ds == (int64_t)sizeof(T) && ss == (int64_t)sizeof(T)) {                       \
                memcpy(d, row, (size_t)n * sizeof(T));                                        \
                return;                                                                       \
            }                                                                                 \
            for (int64_t i = 0; i < n; i++) *(T *)(d + i * ds) = *(const T *)(row + i * ss);  \
            return;                                                                           \
        }                                                                                     \
        if (ds == (int64_t)sizeof(T) && ss == 0 && is == 1 && mul == (int64_t)sizeof(T)) {    \
            T *TL_RESTRICT dd = (T *)d;                                                       \
            const T *TL_RESTRICT sp = (const T *)s;                                           \
            for (int64_t i = 0; i < n; i++) dd[i] = sp[ix[i]];                                \
            return;                                                                           \
        }                                                                                     \
        for (int64_t i = 0; i < n; i++)                                                       \
            *(T *)(d + i * ds) = *(const T *)(s + i * ss + ix[i * is] * mul);                 \
    }

#define SCATTER_FN(NAME, T)                                                                   \
    static void NAME(char *d, int64_t ds, const char *s, int64_t ss, const int64_t *ix,      \
                     int64_t is, int64_t mul, int64_t n) {                                    \
        if (is == 0) {                                                                        \
            char *row = d + ix[0] * mul;                                                      \
            if (ds == (int64_t)sizeof(T) && ss == (int64_t)sizeof(T)) {                       \
                memcpy(row, s, (size_t)n * sizeof(T));                                        \
                return;                                                                       \
            }                                                                                 \
            for (int64_t i = 0; i < n; i++) *(T *)(row + i * ds) = *(const T *)(s + i * ss);  \
            return;                                                                           \
        }                                                                                     \
        if (ds == 0 && is == 1 && ss == (int64_t)sizeof(T)) { /* 1-d scatter */              \
            const T *sp = (const T *)s;                                                       \
            for (int64_t i = 0; i < n; i++) *(T *)(d + ix[i] * mul) = sp[i];                  \
            return;                                                                           \
        }                                                                                     \
        for (int64_t i = 0; i < n; i++)                                                       \
            *(T *)(d + i * ds + ix[i * is] * mul) = *(const T *)(s + i * ss);                 \
    }

GATHER_FN(gather_1, uint8_t)
GATHER_FN(gather_2, uint16_t)
GATHER_FN(gather_4, uint32_t)
GATHER_FN(gather_8, uint64_t)
SCATTER_FN(scatter_1, uint8_t)
SCATTER_FN(scatter_2, uint16_t)
SCATTER_FN(scatter_4, uint32_t)
SCATTER_FN(scatter_8, uint64_t)

/* accumulating scatters: load both in the dtype's compute type, combine, store */
#define ACC_FN(NAME, T, CT, LD, STO, COMB)                                                    \
    static void NAME(char *d, int64_t ds, const char *s, int64_t ss, const int64_t *ix,      \
                     int64_t is, int64_t mul, int64_t n) {                                    \
        if (ds == 0 && is == 1 && ss == (int64_t)sizeof(T)) { /* 1-d scatter */              \
            const T *sp = (const T *)s;                                                       \
            for (int64_t i = 0; i < n; i++) {                                                 \
                T *p = (T *)(d + ix[i] * mul);                                                \
                CT a = LD(*p), b = LD(sp[i]);                                                 \
                *p = STO(COMB(a, b));                                                         \
            }                                                                                 \
            return;                                                                           \
        }                                                                                     \
        for (int64_t i = 0; i < n; i++) {                                                     \
            T *p = (T *)(d + i * ds + ix[i * is] * mul);                                      \
            CT a = LD(*p), b = LD(*(const T *)(s + i * ss));                                  \
            *p = STO(COMB(a, b));                                                             \
        }                                                                                     \
    }

#define ID(x) (x)
#define LD_BOOL(x) ((int)((x) != 0))
#define ST_BOOL(v) ((uint8_t)((v) != 0))
#define C_ADD(a, b) ((a) + (b))
#define C_MUL(a, b) ((a) * (b))
#define C_OR(a, b) ((a) | (b))
#define C_AND(a, b) ((a) & (b))
#define C_IMAX(a, b) ((b) > (a) ? (b) : (a))
#define C_IMIN(a, b) ((b) < (a) ? (b) : (a))
/* NaN wins (PyTorch's scatter_reduce amax/amin propagate NaN) */
#define C_FMAX(a, b) (((b) != (b) || (b) > (a)) ? (b) : (a))
#define C_FMIN(a, b) (((b) != (b) || (b) < (a)) ? (b) : (a))

#define ACC_INT(SUF, T)                                                                       \
    ACC_FN(acc_add_##SUF, T, int64_t, ID, (T), C_ADD)                                         \
    ACC_FN(acc_mul_##SUF, T, int64_t, ID, (T), C_MUL)                                         \
    ACC_FN(acc_max_##SUF, T, int64_t, ID, (T), C_IMAX)                                        \
    ACC_FN(acc_min_##SUF, T, int64_t, ID, (T), C_IMIN)
#define ACC_FLT(SUF, T, CT, LD, STO)                                                          \
    ACC_FN(acc_add_##SUF, T, CT, LD, STO, C_ADD)                                              \
    ACC_FN(acc_mul_##SUF, T, CT, LD, STO, C_MUL)                                              \
    ACC_FN(acc_max_##SUF, T, CT, LD, STO, C_FMAX)                                             \
    ACC_FN(acc_min_##SUF, T, CT, LD, STO, C_FMIN)

ACC_FN(acc_add_bool, uint8_t, int, LD_BOOL, ST_BOOL, C_OR)
ACC_FN(acc_mul_bool, uint8_t, int, LD_BOOL, ST_BOOL, C_AND)
ACC_FN(acc_max_bool, uint8_t, int, LD_BOOL, ST_BOOL, C_OR)
ACC_FN(acc_min_bool, uint8_t, int, LD_BOOL, ST_BOOL, C_AND)
ACC_INT(u8, uint8_t)
ACC_INT(i8, int8_t)
ACC_INT(i16, int16_t)
ACC_INT(i32, int32_t)
ACC_INT(i64, int64_t)
ACC_FLT(f16, uint16_t, float, tl_f16_to_f32, tl_f32_to_f16)
ACC_FLT(bf16, uint16_t, float, tl_bf16_to_f32, tl_f32_to_bf16)
ACC_FLT(f32, float, float, ID, ID)
ACC_FLT(f64, double, double, ID, ID)

#define ACC_ROW(SUF) {acc_add_##SUF, acc_mul_##SUF, acc_max_##SUF, acc_min_##SUF}
static const row_fn ACC_TABLE[TL_NUM_DTYPES][4] = {
    ACC_ROW(bool), ACC_ROW(u8), ACC_ROW(i8), ACC_ROW(i16), ACC_ROW(i32),
    ACC_ROW(i64), ACC_ROW(f16), ACC_ROW(bf16), ACC_ROW(f32), ACC_ROW(f64)};

static const int ITEMSIZE[TL_NUM_DTYPES] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};

typedef struct {
    int ndim;
    int64_t shape[TL_IDX_MAX_DIMS], dst_st[TL_IDX_MAX_DIMS], src_st[TL_IDX_MAX_DIMS],
        idx_st[TL_IDX_MAX_DIMS];
    char *dst;
    const char *src;
    const int64_t *idx;
    int64_t idx_mul;
    int side;
    row_fn fn;
} run_ctx;

static void run_rows(void *vctx, int64_t r0, int64_t r1) {
    run_ctx *c = (run_ctx *)vctx;
    int nouter = c->ndim - 1;
    int64_t ctr[TL_IDX_MAX_DIMS];
    int64_t n = c->shape[nouter], ds = c->dst_st[nouter], ss = c->src_st[nouter],
            is = c->idx_st[nouter];
    unravel(r0, nouter, c->shape, ctr);
    for (int64_t r = r0; r < r1; r++) {
        c->fn(c->dst + dot(nouter, ctr, c->dst_st), ds, c->src + dot(nouter, ctr, c->src_st), ss,
              c->idx + dot(nouter, ctr, c->idx_st), is, c->idx_mul, n);
        next_row(nouter, c->shape, ctr);
    }
}

void tl_index_run(int ndim, const int64_t *shape, char *dst, const int64_t *dst_st,
                  const char *src, const int64_t *src_st, const int64_t *idx,
                  const int64_t *idx_st, int64_t idx_mul, int side, int dtype, int op,
                  int parallel) {
    run_ctx c;
    int n = 0, isz = ITEMSIZE[dtype];
    int64_t total = 1;
    /* drop size-1 dims; merge a dim into the next when every operand allows it */
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) return;
        total *= shape[i];
        if (shape[i] == 1) continue;
        c.shape[n] = shape[i];
        c.dst_st[n] = dst_st[i];
        c.src_st[n] = src_st[i];
        c.idx_st[n] = idx_st[i];
        n++;
    }
    {
        int m = 0;
        for (int i = 0; i < n; i++) {
            if (m > 0 && c.dst_st[m - 1] == c.dst_st[i] * c.shape[i] &&
                c.src_st[m - 1] == c.src_st[i] * c.shape[i] &&
                c.idx_st[m - 1] == c.idx_st[i] * c.shape[i]) {
                c.shape[m - 1] *= c.shape[i];
                c.dst_st[m - 1] = c.dst_st[i];
                c.src_st[m - 1] = c.src_st[i];
                c.idx_st[m - 1] = c.idx_st[i];
            } else {
                c.shape[m] = c.shape[i];
                c.dst_st[m] = c.dst_st[i];
                c.src_st[m] = c.src_st[i];
                c.idx_st[m] = c.idx_st[i];
                m++;
            }
        }
        n = m;
    }
    if (n == 0) {
        c.shape[0] = 1;
        c.dst_st[0] = c.src_st[0] = c.idx_st[0] = 0;
        n = 1;
    }
    c.ndim = n;
    c.dst = dst;
    c.src = src;
    c.idx = idx;
    c.idx_mul = idx_mul;
    c.side = side;
    if (op == TL_IDX_COPY) {
        static const row_fn G[9] = {0, gather_1, gather_2, 0, gather_4, 0, 0, 0, gather_8};
        static const row_fn S[9] = {0, scatter_1, scatter_2, 0, scatter_4, 0, 0, 0, scatter_8};
        c.fn = side == TL_IDX_SIDE_SRC ? G[isz] : S[isz];
    } else {
        c.fn = ACC_TABLE[dtype][op - 1];
    }
    {
        int64_t inner = c.shape[n - 1], rows = total / inner;
        /* only gathers run in parallel: each output element is written once, so any split
           is race-free; scatters may hit one element from many positions */
        run_chunks(rows, grain_rows(inner, 1), run_rows, &c,
                   parallel && side == TL_IDX_SIDE_SRC && total >= GRAIN_ELEMS);
    }
}

/* ------------------------------------------------------------------------------------------
   x[idx] for a 1-d x and a contiguous int64 idx, in one pass: each block of indices is
   checked (branch-free) before any of its elements is read, so no read leaves x; a bad
   index stops the chunk. Only used with a fresh output, which is dropped on error. */

#define TAKE1_FN(NAME, T)                                                                     \
    TL_DISPATCH static int64_t NAME(T *TL_RESTRICT d, const T *TL_RESTRICT s, int64_t sst,   \
                                    const int64_t *TL_RESTRICT ix, int64_t n, int64_t size) { \
        for (int64_t b = 0; b < n; b += IDX_BLOCK) {                                          \
            int64_t e = n - b < IDX_BLOCK ? n : b + IDX_BLOCK;                                \
            uint64_t bad = 0;                                                                 \
            for (int64_t i = b; i < e; i++) {                                                 \
                int64_t v = ix[i] + (ix[i] < 0 ? size : 0);                                   \
                bad |= (uint64_t)v >= (uint64_t)size;                                         \
            }                                                                                 \
            if (bad) {                                                                        \
                for (int64_t i = b; i < e; i++) {                                             \
                    int64_t v = ix[i] + (ix[i] < 0 ? size : 0);                               \
                    if ((uint64_t)v >= (uint64_t)size) return i;                              \
                }                                                                             \
            }                                                                                 \
            if (sst == 1) {                                                                   \
                for (int64_t i = b; i < e; i++) d[i] = s[ix[i] + (ix[i] < 0 ? size : 0)];     \
            } else {                                                                          \
                for (int64_t i = b; i < e; i++)                                               \
                    d[i] = s[(ix[i] + (ix[i] < 0 ? size : 0)) * sst];                         \
            }                                                                                 \
        }                                                                                     \
        return -1;                                                                            \
    }
TAKE1_FN(take1_1, uint8_t)
TAKE1_FN(take1_2, uint16_t)
TAKE1_FN(take1_4, uint32_t)
TAKE1_FN(take1_8, uint64_t)

typedef struct {
    char *dst;
    const char *src;
    int64_t sst, size, grain;
    const int64_t *ix;
    int isz;
    int64_t *bad;          /* per chunk: first bad position or -1 */
} take1_ctx;

static void take1_rows(void *vctx, int64_t b, int64_t e) {
    take1_ctx *c = (take1_ctx *)vctx;
    int64_t n = e - b, r;
    switch (c->isz) {
    case 1: r = take1_1((uint8_t *)c->dst + b, (const uint8_t *)c->src, c->sst, c->ix + b, n, c->size); break;
    case 2: r = take1_2((uint16_t *)c->dst + b, (const uint16_t *)c->src, c->sst, c->ix + b, n, c->size); break;
    case 4: r = take1_4((uint32_t *)c->dst + b, (const uint32_t *)c->src, c->sst, c->ix + b, n, c->size); break;
    default: r = take1_8((uint64_t *)c->dst + b, (const uint64_t *)c->src, c->sst, c->ix + b, n, c->size); break;
    }
    c->bad[b / c->grain] = r < 0 ? -1 : b + r;
}

int tl_index_take1(int64_t n, const int64_t *ix, char *dst, const char *src, int64_t src_stride,
                   int64_t size, int itemsize, int64_t *bad_pos, int parallel) {
    take1_ctx c;
    int64_t one, nchunks;
    if (n <= 0) return 0;
    c.dst = dst;
    c.src = src;
    c.sst = src_stride;
    c.size = size;
    c.ix = ix;
    c.isz = itemsize;
    c.grain = GRAIN_ELEMS;
    nchunks = (n + c.grain - 1) / c.grain;
    c.bad = nchunks > 1 ? (int64_t *)malloc(nchunks * sizeof(int64_t)) : &one;
    if (c.bad == NULL) {
        c.grain = n;
        nchunks = 1;
        c.bad = &one;
    }
    run_chunks(n, c.grain, take1_rows, &c, parallel && nchunks > 1);
    *bad_pos = -1;
    for (int64_t i = 0; i < nchunks; i++) {
        if (c.bad[i] >= 0) {
            *bad_pos = c.bad[i];
            break;
        }
    }
    if (c.bad != &one) free(c.bad);
    return *bad_pos >= 0;
}

/* ------------------------------------------------------------------------------------------
   nonzero */

/* "nonzero" per dtype class: half types compare their bits without the sign (so -0 is zero
   and NaN is nonzero); floats compare as floats (NaN != 0). */
#define NZ_COUNT_FN(NAME, T, PRED)                                                            \
    TL_DISPATCH static int64_t NAME(const char *p, int64_t st, int64_t n) {                  \
        int64_t cnt = 0;                                                                      \
        if (st == (int64_t)sizeof(T)) {                                                       \
            const T *q = (const T *)p;                                                        \
            for (int64_t i = 0; i < n; i++) cnt += PRED(q[i]);                                \
        } else {                                                                              \
            for (int64_t i = 0; i < n; i++) cnt += PRED(*(const T *)(p + i * st));            \
        }                                                                                     \
        return cnt;                                                                           \
    }
#define P_NZ(x) ((x) != 0)
#define P_HALF(x) (((x) & 0x7fffu) != 0)
NZ_COUNT_FN(nz_count_1, uint8_t, P_NZ)
NZ_COUNT_FN(nz_count_i16, int16_t, P_NZ)
NZ_COUNT_FN(nz_count_half, uint16_t, P_HALF)
NZ_COUNT_FN(nz_count_i32, int32_t, P_NZ)
NZ_COUNT_FN(nz_count_i64, int64_t, P_NZ)
NZ_COUNT_FN(nz_count_f32, float, P_NZ)
NZ_COUNT_FN(nz_count_f64, double, P_NZ)

static int64_t nz_count_row(const char *p, int64_t st, int64_t n, int dtype) {
    switch (dtype) {
    case TL_BOOL: case TL_U8: case TL_I8: return nz_count_1(p, st, n);
    case TL_I16: return nz_count_i16(p, st, n);
    case TL_F16: case TL_BF16: return nz_count_half(p, st, n);
    case TL_I32: return nz_count_i32(p, st, n);
    case TL_I64: return nz_count_i64(p, st, n);
    case TL_F32: return nz_count_f32(p, st, n);
    default: return nz_count_f64(p, st, n);
    }
}

int64_t tl_nonzero_setup(tl_nz *p, int ndim, const int64_t *shape, const char *data,
                         const int64_t *strides, int dtype) {
    int64_t total = 1;
    p->ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        p->shape[i] = shape[i];
        p->strides[i] = strides[i];
        total *= shape[i];
    }
    p->data = data;
    p->dtype = dtype;
    p->inner = ndim > 0 ? shape[ndim - 1] : 1;
    p->rows = p->inner > 0 ? total / p->inner : 0;
    p->grain_rows = grain_rows(p->inner, 1);
    p->nchunks = p->rows > 0 ? (p->rows + p->grain_rows - 1) / p->grain_rows : 1;
    return p->nchunks;
}

typedef struct {
    const tl_nz *p;
    int64_t *counts;          /* per chunk */
    int64_t *out;
    int64_t dim_stride;
    const int64_t *muls;
    /* values mode: copy the selected elements of src instead of writing positions */
    char *vout;
    const char *src;
    const int64_t *src_st;    /* bytes */
    int isz;
} nz_ctx;

static void nz_count_rows(void *vctx, int64_t r0, int64_t r1) {
    nz_ctx *c = (nz_ctx *)vctx;
    const tl_nz *p = c->p;
    int nouter = p->ndim > 0 ? p->ndim - 1 : 0;
    int64_t ctr[TL_IDX_MAX_DIMS], cnt = 0;
    int64_t st = p->ndim > 0 ? p->strides[p->ndim - 1] : 0;
    unravel(r0, nouter, p->shape, ctr);
    for (int64_t r = r0; r < r1; r++) {
        cnt += nz_count_row(p->data + dot(nouter, ctr, p->strides), st, p->inner, p->dtype);
        next_row(nouter, p->shape, ctr);
    }
    c->counts[r0 / p->grain_rows] = cnt;
}

int64_t tl_nonzero_count(const tl_nz *p, int64_t *chunk_counts, int parallel) {
    nz_ctx c;
    int64_t total = 0;
    c.p = p;
    c.counts = chunk_counts;
    chunk_counts[0] = 0;
    run_chunks(p->rows, p->grain_rows, nz_count_rows, &c,
               parallel && p->rows * p->inner >= GRAIN_ELEMS);
    for (int64_t i = 0; i < p->nchunks; i++) total += chunk_counts[i];
    return total;
}

/* Positions (start + i) of the nonzero elements among n strided elements, written to pos;
   returns how many. Branch-free: every position is stored, the count advances only past
   nonzero ones (pos needs room for n entries). */
#define NZ_BLOCK_FN(NAME, T, PRED)                                                            \
    static int64_t NAME(const char *p, int64_t st, int64_t n, int64_t start, int64_t *pos) { \
        int64_t c = 0;                                                                        \
        if (st == (int64_t)sizeof(T)) {                                                       \
            const T *q = (const T *)p;                                                        \
            for (int64_t i = 0; i < n; i++) {                                                 \
                pos[c] = start + i;                                                           \
                c += PRED(q[i]);                                                              \
            }                                                                                 \
        } else {                                                                              \
            for (int64_t i = 0; i < n; i++) {                                                 \
                pos[c] = start + i;                                                           \
                c += PRED(*(const T *)(p + i * st));                                          \
            }                                                                                 \
        }                                                                                     \
        return c;                                                                             \
    }
NZ_BLOCK_FN(nz_block_1, uint8_t, P_NZ)
NZ_BLOCK_FN(nz_block_i16, int16_t, P_NZ)
NZ_BLOCK_FN(nz_block_half, uint16_t, P_HALF)
NZ_BLOCK_FN(nz_block_i32, int32_t, P_NZ)
NZ_BLOCK_FN(nz_block_i64, int64_t, P_NZ)
NZ_BLOCK_FN(nz_block_f32, float, P_NZ)
NZ_BLOCK_FN(nz_block_f64, double, P_NZ)

static int64_t nz_block(const char *p, int64_t st, int64_t n, int64_t start, int64_t *pos,
                        int dtype) {
    switch (dtype) {
    case TL_BOOL: case TL_U8: case TL_I8: return nz_block_1(p, st, n, start, pos);
    case TL_I16: return nz_block_i16(p, st, n, start, pos);
    case TL_F16: case TL_BF16: return nz_block_half(p, st, n, start, pos);
    case TL_I32: return nz_block_i32(p, st, n, start, pos);
    case TL_I64: return nz_block_i64(p, st, n, start, pos);
    case TL_F32: return nz_block_f32(p, st, n, start, pos);
    default: return nz_block_f64(p, st, n, start, pos);
    }
}

#define NZ_BLOCK 512

static void copy_selected(char *out, const char *src, int64_t st, const int64_t *pos, int64_t n,
                          int isz) {
    switch (isz) {
    case 1: for (int64_t j = 0; j < n; j++) ((uint8_t *)out)[j] = *(const uint8_t *)(src + pos[j] * st); break;
    case 2: for (int64_t j = 0; j < n; j++) ((uint16_t *)out)[j] = *(const uint16_t *)(src + pos[j] * st); break;
    case 4: for (int64_t j = 0; j < n; j++) ((uint32_t *)out)[j] = *(const uint32_t *)(src + pos[j] * st); break;
    default: for (int64_t j = 0; j < n; j++) ((uint64_t *)out)[j] = *(const uint64_t *)(src + pos[j] * st); break;
    }
}

static void nz_fill_rows(void *vctx, int64_t r0, int64_t r1) {
    nz_ctx *c = (nz_ctx *)vctx;
    const tl_nz *p = c->p;
    int nd = p->ndim, nouter = nd > 0 ? nd - 1 : 0;
    int64_t ctr[TL_IDX_MAX_DIMS], pos[NZ_BLOCK], k = 0, chunk = r0 / p->grain_rows;
    int64_t st = nd > 0 ? p->strides[nd - 1] : 0, inner = p->inner, ds = c->dim_stride;
    int64_t *out = c->out;
    for (int64_t i = 0; i < chunk; i++) k += c->counts[i];
    unravel(r0, nouter, p->shape, ctr);
    for (int64_t r = r0; r < r1; r++) {
        const char *row = p->data + dot(nouter, ctr, p->strides);
        if (c->src != NULL) {
            const char *srow = c->src + dot(nouter, ctr, c->src_st);
            int64_t sst = nd > 0 ? c->src_st[nd - 1] : 0;
            for (int64_t b = 0; b < inner; b += NZ_BLOCK) {
                int64_t n = inner - b < NZ_BLOCK ? inner - b : NZ_BLOCK;
                int64_t cnt = nz_block(row + b * st, st, n, b, pos, p->dtype);
                copy_selected(c->vout + k * c->isz, srow, sst, pos, cnt, c->isz);
                k += cnt;
            }
            next_row(nouter, p->shape, ctr);
            continue;
        }
        int64_t base = c->muls != NULL ? dot(nouter, ctr, c->muls) : 0;
        int64_t m = (c->muls != NULL && nd > 0) ? c->muls[nd - 1] : 0;
        for (int64_t b = 0; b < inner; b += NZ_BLOCK) {
            int64_t n = inner - b < NZ_BLOCK ? inner - b : NZ_BLOCK;
            int64_t cnt = nz_block(row + b * st, st, n, b, pos, p->dtype);
            if (c->muls != NULL) {
                for (int64_t j = 0; j < cnt; j++) out[k + j] = base + pos[j] * m;
            } else {
                for (int d = 0; d < nouter; d++)
                    for (int64_t j = 0; j < cnt; j++) out[d * ds + k + j] = ctr[d];
                if (nd > 0)
                    for (int64_t j = 0; j < cnt; j++) out[(nd - 1) * ds + k + j] = pos[j];
            }
            k += cnt;
        }
        next_row(nouter, p->shape, ctr);
    }
}

void tl_nonzero_fill(const tl_nz *p, const int64_t *chunk_counts, int64_t *out,
                     int64_t dim_stride, const int64_t *muls, int parallel) {
    nz_ctx c;
    c.p = p;
    c.counts = (int64_t *)chunk_counts;
    c.out = out;
    c.dim_stride = dim_stride;
    c.muls = muls;
    c.src = NULL;
    run_chunks(p->rows, p->grain_rows, nz_fill_rows, &c,
               parallel && p->rows * p->inner >= GRAIN_ELEMS);
}

void tl_nonzero_gather(const tl_nz *p, const int64_t *chunk_counts, char *out, const char *src,
                       const int64_t *src_strides, int itemsize, int parallel) {
    nz_ctx c;
    c.p = p;
    c.counts = (int64_t *)chunk_counts;
    c.out = NULL;
    c.muls = NULL;
    c.vout = out;
    c.src = src;
    c.src_st = src_strides;
    c.isz = itemsize;
    run_chunks(p->rows, p->grain_rows, nz_fill_rows, &c,
               parallel && p->rows * p->inner >= GRAIN_ELEMS);
}

/* ------------------------------------------------------------------------------------------
   small helpers for index_add_(alpha) and scatter_reduce('mean') */

void tl_index_scale(int dtype, int64_t n, char *data, double alpha_d, int64_t alpha_i) {
    int64_t i;
    switch (dtype) {
    case TL_BOOL: for (i = 0; i < n; i++) ((uint8_t *)data)[i] = (uint8_t)(data[i] != 0 && alpha_i != 0); break;
    case TL_U8: for (i = 0; i < n; i++) ((uint8_t *)data)[i] = (uint8_t)(((uint8_t *)data)[i] * alpha_i); break;
    case TL_I8: for (i = 0; i < n; i++) ((int8_t *)data)[i] = (int8_t)(((int8_t *)data)[i] * alpha_i); break;
    case TL_I16: for (i = 0; i < n; i++) ((int16_t *)data)[i] = (int16_t)(((int16_t *)data)[i] * alpha_i); break;
    case TL_I32: for (i = 0; i < n; i++) ((int32_t *)data)[i] = (int32_t)(((int32_t *)data)[i] * alpha_i); break;
    case TL_I64: for (i = 0; i < n; i++) ((int64_t *)data)[i] *= alpha_i; break;
    case TL_F16: {
        uint16_t *q = (uint16_t *)data;
        for (i = 0; i < n; i++) q[i] = tl_f32_to_f16(tl_f16_to_f32(q[i]) * (float)alpha_d);
        break;
    }
    case TL_BF16: {
        uint16_t *q = (uint16_t *)data;
        for (i = 0; i < n; i++) q[i] = tl_f32_to_bf16(tl_bf16_to_f32(q[i]) * (float)alpha_d);
        break;
    }
    case TL_F32: for (i = 0; i < n; i++) ((float *)data)[i] *= (float)alpha_d; break;
    default: for (i = 0; i < n; i++) ((double *)data)[i] *= alpha_d; break;
    }
}

static inline int64_t floor_div(int64_t a, int64_t b) {
    /* b > 0 here, so no INT64_MIN / -1 */
    int64_t q = a / b;
    if ((a % b != 0) && (a < 0)) q--;
    return q;
}

void tl_index_div_counts(int ndim, const int64_t *shape, char *data, const int64_t *strides,
                         int dtype, const int64_t *counts, const int64_t *count_strides) {
    int64_t ctr[TL_IDX_MAX_DIMS], total = 1;
    for (int d = 0; d < ndim; d++) {
        total *= shape[d];
        ctr[d] = 0;
    }
    for (int64_t j = 0; j < total; j++) {
        char *p = data + dot(ndim, ctr, strides);
        int64_t c = counts[dot(ndim, ctr, count_strides)];
        if (c > 0) {
            switch (dtype) {
            case TL_U8: *(uint8_t *)p = (uint8_t)floor_div(*(uint8_t *)p, c); break;
            case TL_I8: *(int8_t *)p = (int8_t)floor_div(*(int8_t *)p, c); break;
            case TL_I16: *(int16_t *)p = (int16_t)floor_div(*(int16_t *)p, c); break;
            case TL_I32: *(int32_t *)p = (int32_t)floor_div(*(int32_t *)p, c); break;
            case TL_I64: *(int64_t *)p = floor_div(*(int64_t *)p, c); break;
            case TL_F16: *(uint16_t *)p = tl_f32_to_f16(tl_f16_to_f32(*(uint16_t *)p) / (float)c); break;
            case TL_BF16: *(uint16_t *)p = tl_f32_to_bf16(tl_bf16_to_f32(*(uint16_t *)p) / (float)c); break;
            case TL_F32: *(float *)p = *(float *)p / (float)c; break;
            case TL_F64: *(double *)p = *(double *)p / (double)c; break;
            default: break;
            }
        }
        next_row(ndim, shape, ctr);   /* advances the full counter (all dims) */
    }
}
