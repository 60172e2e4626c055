/* Indexing kernels: index validation, the strided gather/scatter loop, nonzero.

   Contract: every index a write loop sees has been validated first. tl_index_offsets reads
   the user's index tensors (int32 or int64, any strides, broadcast), checks every value
   against its dim size and writes a private int64 array; only after it succeeds do the
   gather/scatter loops run, and they consume nothing but that array. So an out-of-range
   index never reaches a loop that dereferences it, and an index tensor that aliases the
   output cannot change under the loop. */
#ifndef TL_CPU_INDEX_H
#define TL_CPU_INDEX_H
#include <stdint.h>

#define TL_IDX_MAX_DIMS 64

/* reductions of the scatter side */
enum { TL_IDX_COPY = 0, TL_IDX_ADD, TL_IDX_MUL, TL_IDX_MAX, TL_IDX_MIN };
/* which operand the index applies to */
enum { TL_IDX_SIDE_SRC = 0, TL_IDX_SIDE_DST = 1 };

/* One index tensor read over a broadcast shape. */
typedef struct {
    const char *data;                    /* first element */
    int is_int32;                        /* else int64 */
    int64_t strides[TL_IDX_MAX_DIMS];    /* elements, already broadcast (0 on broadcast dims) */
    int64_t size;                        /* size of the dim it indexes */
    int64_t mul;                         /* out += value * mul */
} tl_index_src;

/* out[j] = sum_k v_k[j] * mul_k for every j of the broadcast shape (C order), where v_k is
   index tensor k with negative values wrapped when `wrap` (else they are errors).
   Returns 0, or 1 when a value is out of range: then *bad_k / *bad_pos / *bad_val name
   the first bad value in (position, k) order and `out` holds garbage. With out == NULL it
   only checks (reading the index tensors once, writing nothing). Safe to call with
   the GIL released; parallel above `grain_elems` positions. */
int tl_index_offsets(int nb, const int64_t *bshape, int k, const tl_index_src *srcs, int wrap,
                     int64_t *out, int *bad_k, int64_t *bad_pos, int64_t *bad_val);

/* Linear (C-order) element numbers -> element offsets in a strided tensor. */
void tl_linear_to_offsets(int64_t n, int64_t *inout, int ndim, const int64_t *shape,
                          const int64_t *strides);

/* The strided index loop over an n-d space `shape`:
     side SRC:  dst[p.dst_st] = src[p.src_st + idx[p.idx_st] * idx_mul]          (gather)
     side DST:  dst[p.dst_st + idx[p.idx_st] * idx_mul] (op)= src[p.src_st]     (scatter)
   dst/src strides in bytes, idx strides in elements, idx values validated by the caller.
   `parallel` splits gathers over threads (scatters always run serially, so repeated
   indices are applied in order and results are deterministic). */
void tl_index_run(int ndim, const int64_t *shape, char *dst, const int64_t *dst_st,
                  const char *src, const int64_t *src_st, const int64_t *idx,
                  const int64_t *idx_st, int64_t idx_mul, int side, int dtype, int op,
                  int parallel);

/* x[idx] for a 1-d x (element stride src_stride) and a contiguous int64 idx, checking each
   block of indices before reading through it. Returns 1 with *bad_pos on a bad index (dst
   then holds garbage: callers pass a fresh output and drop it). */
int tl_index_take1(int64_t n, const int64_t *ix, char *dst, const char *src, int64_t src_stride,
                   int64_t size, int itemsize, int64_t *bad_pos, int parallel);

/* nonzero: chunks of rows of a strided n-d array (innermost dim = a row). */
typedef struct {
    int ndim;
    int64_t shape[TL_IDX_MAX_DIMS];
    int64_t strides[TL_IDX_MAX_DIMS];    /* bytes */
    const char *data;
    int dtype;
    int64_t rows, inner, grain_rows, nchunks;
} tl_nz;

/* Set up `p` (call first); returns the number of chunks (>= 1). */
int64_t tl_nonzero_setup(tl_nz *p, int ndim, const int64_t *shape, const char *data,
                         const int64_t *strides, int dtype);
/* Count nonzero elements, per chunk (chunk_counts has p->nchunks entries); returns total. */
int64_t tl_nonzero_count(const tl_nz *p, int64_t *chunk_counts, int parallel);
/* Write positions of nonzero elements in C order. When muls is NULL, coordinates:
   out[d * dim_stride + i]; else element offsets: out[i] = sum_d coord_d * muls[d]. */
void tl_nonzero_fill(const tl_nz *p, const int64_t *chunk_counts, int64_t *out,
                     int64_t dim_stride, const int64_t *muls, int parallel);

/* Copy the elements of src (same shape as the mask in p; strides in bytes) where the mask
   is nonzero, in C order, to the contiguous out. */
void tl_nonzero_gather(const tl_nz *p, const int64_t *chunk_counts, char *out, const char *src,
                       const int64_t *src_strides, int itemsize, int parallel);

/* data[i] *= alpha (contiguous; integers use alpha_i and wrap, floats alpha_d). */
void tl_index_scale(int dtype, int64_t n, char *data, double alpha_d, int64_t alpha_i);

/* Strided data[p] /= counts[p] where counts[p] > 0 (floor division for integers). */
void tl_index_div_counts(int ndim, const int64_t *shape, char *data, const int64_t *strides,
                         int dtype, const int64_t *counts, const int64_t *count_strides);

#endif
