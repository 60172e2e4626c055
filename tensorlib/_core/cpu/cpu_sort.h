/* Sorting and selection kernels: sort/argsort, topk, kthvalue/median/nanmedian, mode and the
   run scans behind unique/unique_consecutive.

   Every element is mapped to an unsigned "order key" whose unsigned order is PyTorch's order:
   integers flip their sign bit, floats map their bits so that -inf < ... < -0 == +0 < ... <
   +inf < NaN (every NaN gets the same, largest key; -0 and +0 get the same key). A row is
   sorted as (key, original index) pairs, so the result is always stable: equal elements keep
   their order (descending flips the key, not the index, so ties stay in original order there
   too). Sorted values are rebuilt from the keys, or, for float rows holding a -0 or a NaN
   (whose bits the keys do not keep), read back from the input through the index.

   Algorithms: radix sort (an MSD pass of 11 bits while a row is bigger than the cache, then
   LSD passes of 8 bits; introsort below 64 items; int64 rows spanning < 2^32 use 32-bit
   keys), a streaming filter for topk with small k, radix select for kthvalue/median.

   Rows: an input tensor is seen as `nrows` rows of `n` elements along one dim; the other dims
   ("outer" dims, C order) enumerate the rows. All strides are in elements. Rows are processed
   in parallel over fixed chunks of rows, or, for a few long rows, each row is split across
   the threads in fixed chunks; results never depend on the thread count. Call with the GIL
   released. Scratch space is malloc'd per call (it is not tensor memory). */
#ifndef TL_CPU_SORT_H
#define TL_CPU_SORT_H
#include <stdint.h>

typedef struct {
    int dtype;                  /* TL_* code of the input (and of the values output) */
    int outer_nd;
    const int64_t *outer_shape;
    const int64_t *src_os;      /* outer strides of the input */
    const int64_t *o0_os;       /* outer strides of output 0 (values) */
    const int64_t *o1_os;       /* outer strides of output 1 (int64 indices) */
    int64_t nrows;              /* product of outer_shape */
    int64_t n;                  /* row length (size of the dim) */
    int64_t src_st, o0_st, o1_st;/* strides along the dim */
    const char *src;            /* the input */
    char *o0;                   /* values, or NULL when not wanted */
    int64_t *o1;                /* indices, or NULL when not wanted */
} tl_rows_t;

/* All return 0, or -1 when scratch memory could not be allocated. */

/* Stable sort of every row (ascending, or descending with ties in original order). */
int tl_sort_rows(const tl_rows_t *r, int descending);

/* The k largest (or smallest) of every row, sorted, into outputs with k elements per row. */
int tl_topk_rows(const tl_rows_t *r, int64_t k, int largest);

enum { TL_SELECT_KTH = 0, TL_SELECT_MEDIAN = 1, TL_SELECT_NANMEDIAN = 2 };
/* One value and index per row (outputs: one element per row):
   KTH: the k-th smallest (k is 0-based here); MEDIAN: the lower median, or the first NaN
   when the row has one; NANMEDIAN: the lower median of the non-NaN values (the first NaN
   when all are NaN). */
int tl_select_rows(const tl_rows_t *r, int64_t k, int which);

/* Most frequent value of every row (the smallest among equally frequent ones; NaN never
   equals NaN) and the last index where it occurs. One element per row. */
int tl_mode_rows(const tl_rows_t *r);

/* Runs of equal values in `vals` (n contiguous elements of `dtype`; -0 == +0, NaN != NaN):
   run_of[i] = number of the run holding element i. Returns the number of runs. */
int64_t tl_runs(int dtype, const char *vals, int64_t n, int64_t *run_of);

/* unique's outputs from a sorted sequence and its runs: uniq gets the first value of every
   run, counts (may be NULL) the run lengths, inverse (may be NULL) at position order[i]
   (identity when order is NULL) the run of element i. */
void tl_unique_fill(int dtype, const char *sorted_vals, const int64_t *order, const int64_t *run_of,
                    int64_t n, char *uniq, int64_t *inverse, int64_t *counts);

/* unique(dim=...): `data` holds m slices of `len` contiguous elements. perm receives the
   stable lexicographic order of the slices (by order keys). Returns 0 or -1 (memory). */
int tl_sort_slices(int dtype, const char *data, int64_t m, int64_t len, int64_t *perm);

/* Runs of equal slices taken in the order perm (identity when NULL): run_of[i] for the i-th
   slice in that order. A slice holding a NaN equals no other. Returns the number of runs. */
int64_t tl_slice_runs(int dtype, const char *data, const int64_t *perm, int64_t m, int64_t len,
                      int64_t *run_of);

#endif
