/* Sorting and selection kernels (see cpu_sort.h for the contract). */
#include "cpu_sort.h"

#include <stdlib.h>
#include <string.h>

#include "cpu_copy.h"
#include "cpu_pool.h"
#include "cpu_simd.h"

/* Rows up to this long are sorted by introsort; longer ones by LSD radix sort. */
#define RADIX_MIN 64
/* topk filters its input this many elements at a time. */
#define TOPK_BLOCK 512
/* Aim for about this many elements of work per parallel chunk of rows. */
#define GRAIN_ELEMS 32768

static int64_t tl_itemsize(int dtype) {
    static const int8_t sz[TL_NUM_DTYPES] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
    return sz[dtype];
}

static int is_float(int dtype) { return dtype >= TL_F16; }

/* Width of the order key in bytes. */
static int key_bytes(int dtype) {
    static const int8_t kb[TL_NUM_DTYPES] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
    return kb[dtype];
}

static uint64_t key_mask(int dtype) {
    int b = key_bytes(dtype);
    return b == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * b)) - 1);
}

/* ---- order keys: unsigned order == PyTorch's order. Floats: -0 == +0, every NaN is one key
   above +inf. Written branch-free so the load loops vectorize. */
static inline uint64_t key_u8(uint8_t v) { return v; }
static inline uint64_t key_i8(int8_t v) { return (uint8_t)v ^ 0x80u; }
static inline uint64_t key_i16(int16_t v) { return (uint16_t)v ^ 0x8000u; }
static inline uint64_t key_i32(int32_t v) { return (uint32_t)v ^ 0x80000000u; }
static inline uint64_t key_i64(int64_t v) { return (uint64_t)v ^ ((uint64_t)1 << 63); }

static inline uint64_t key_half(uint16_t h, uint16_t inf) {
    uint32_t u = h == 0x8000u ? 0u : h;                    /* -0 -> +0 */
    uint32_t flipm = (0u - (u >> 15)) & 0xffffu;           /* all ones when negative */
    uint32_t k = u ^ (flipm | 0x8000u);
    return (h & 0x7fffu) > inf ? 0xffffu : k;
}
static inline uint64_t key_f16(uint16_t h) { return key_half(h, 0x7c00u); }
static inline uint64_t key_bf16(uint16_t h) { return key_half(h, 0x7f80u); }

static inline uint64_t key_f32(uint32_t u0) {
    uint32_t u = u0 == 0x80000000u ? 0u : u0;
    uint32_t k = u ^ ((0u - (u >> 31)) | 0x80000000u);
    return (u0 & 0x7fffffffu) > 0x7f800000u ? 0xffffffffu : k;
}

static inline uint64_t key_f64(uint64_t u0) {
    uint64_t u = u0 == ((uint64_t)1 << 63) ? 0u : u0;
    uint64_t k = u ^ ((0u - (u >> 63)) | ((uint64_t)1 << 63));
    return (u0 & 0x7fffffffffffffffULL) > 0x7ff0000000000000ULL ? ~(uint64_t)0 : k;
}

/* Key of one element (scalar use). */
static uint64_t key_any(int dtype, const char *p) {
    switch (dtype) {
    case TL_BOOL:
    case TL_U8: return key_u8(*(const uint8_t *)p);
    case TL_I8: return key_i8(*(const int8_t *)p);
    case TL_I16: { int16_t v; memcpy(&v, p, 2); return key_i16(v); }
    case TL_I32: { int32_t v; memcpy(&v, p, 4); return key_i32(v); }
    case TL_I64: { int64_t v; memcpy(&v, p, 8); return key_i64(v); }
    case TL_F16: { uint16_t v; memcpy(&v, p, 2); return key_f16(v); }
    case TL_BF16: { uint16_t v; memcpy(&v, p, 2); return key_bf16(v); }
    case TL_F32: { uint32_t v; memcpy(&v, p, 4); return key_f32(v); }
    default: { uint64_t v; memcpy(&v, p, 8); return key_f64(v); }
    }
}

/* The key every NaN of a float dtype gets (unflipped); no key of an integer dtype matches. */
static int is_nan_key(int dtype, uint64_t k) { return is_float(dtype) && k == key_mask(dtype); }

/* ---- the two item types */
typedef struct {
    uint64_t key;
    int64_t idx;
} tl_wide_t;

#define ITEM uint64_t
#define SFX p
#define KEY_OF(it) ((it) >> 32)
#define IDX_OF(it) ((int64_t)((it) & 0xffffffffu))
#define MAKE(k, i) (((uint64_t)(k) << 32) | (uint64_t)(uint32_t)(i))
#define LESS(a, b) ((a) < (b))
#include "cpu_sort_impl.h"
#undef ITEM
#undef SFX
#undef KEY_OF
#undef IDX_OF
#undef MAKE
#undef LESS

static inline tl_wide_t make_wide(uint64_t k, int64_t i) {
    tl_wide_t w;
    w.key = k;
    w.idx = i;
    return w;
}
#define ITEM tl_wide_t
#define SFX w
#define KEY_OF(it) ((it).key)
#define IDX_OF(it) ((it).idx)
#define MAKE(k, i) make_wide((k), (i))
#define LESS(a, b) ((a).key < (b).key || ((a).key == (b).key && (a).idx < (b).idx))
#include "cpu_sort_impl.h"
#undef ITEM
#undef SFX
#undef KEY_OF
#undef IDX_OF
#undef MAKE
#undef LESS

/* ---- row drivers */
enum { OP_SORT, OP_TOPK, OP_SELECT, OP_MODE };

typedef struct {
    const tl_rows_t *r;
    int op;
    int flag;          /* SORT: descending; TOPK: largest; SELECT: which */
    int64_t k;         /* TOPK: k; SELECT/KTH: 0-based rank */
    int failed;
} job_t;

/* Packed items need the key in 32 bits and every index in 32 bits. */
static int use_wide(const tl_rows_t *r) { return key_bytes(r->dtype) > 4 || r->n > 0xffffffffLL; }

static int topk_streams(int64_t n, int64_t k) { return n >= 4 * TOPK_BLOCK && k * 16 <= n; }

static int64_t topk_cap(int64_t k) { return k + (k > 256 ? k : 256); }

/* Scratch items one row needs. */
static int64_t scratch_items(const job_t *j) {
    int64_t n = j->r->n;
    if (j->op == OP_SELECT) return n;
    if (j->op == OP_TOPK && topk_streams(n, j->k)) return topk_cap(j->k) + TOPK_BLOCK + j->k;
    return 2 * n;
}

/* Element offsets of a row's first element in the input and both outputs. */
static void row_offsets(const tl_rows_t *r, int64_t row, int64_t *oi, int64_t *o0, int64_t *o1) {
    *oi = *o0 = *o1 = 0;
    for (int d = r->outer_nd - 1; d >= 0; d--) {
        int64_t s = r->outer_shape[d], c = row % s;
        row /= s;
        *oi += c * r->src_os[d];
        if (r->o0_os) *o0 += c * r->o0_os[d];
        if (r->o1_os) *o1 += c * r->o1_os[d];
    }
}

/* One row, for either item type. */
#define TL_DEF_ROW(SFX, ITEM)                                                                 \
    static void row_##SFX(const job_t *j, ITEM *a, const char *in, char *o0, int64_t *o1) {   \
        const tl_rows_t *r = j->r;                                                            \
        int64_t n = r->n, isz = tl_itemsize(r->dtype);                                        \
        int nb = key_bytes(r->dtype);                                                         \
        uint64_t mask = key_mask(r->dtype);                                                   \
        ITEM *s;                                                                              \
        switch (j->op) {                                                                      \
        case OP_SORT:                                                                         \
            load_##SFX(r->dtype, in, r->src_st, n, j->flag ? mask : 0, a, 0);                  \
            s = sort_##SFX(a, a + n, n, nb);                                                  \
            write_##SFX(s, n, isz, in, r->src_st, o0, r->o0_st, o1, r->o1_st);                 \
            return;                                                                           \
        case OP_TOPK: {                                                                       \
            int64_t k = j->k;                                                                 \
            uint64_t flip = j->flag ? mask : 0;                                               \
            if (topk_streams(n, k)) {                                                         \
                int64_t cap = topk_cap(k);                                                    \
                int64_t m = topk_scan_##SFX(r->dtype, in, r->src_st, 0, n, flip, k, a, cap,    \
                                            a + cap);                                         \
                s = sort_##SFX(a, a + cap + TOPK_BLOCK, m, nb);                               \
            } else {                                                                          \
                load_##SFX(r->dtype, in, r->src_st, n, flip, a, 0);                            \
                if (k < n) select_##SFX(a, n, k - 1);                                         \
                s = sort_##SFX(a, a + n, k, nb);                                              \
            }                                                                                 \
            write_##SFX(s, k, isz, in, r->src_st, o0, r->o0_st, o1, r->o1_st);                 \
            return;                                                                           \
        }                                                                                     \
        case OP_SELECT: {                                                                     \
            int64_t k = j->k, pick = -1;                                                      \
            load_##SFX(r->dtype, in, r->src_st, n, 0, a, 0);                                   \
            if (j->flag != TL_SELECT_KTH && is_float(r->dtype)) {                             \
                int64_t nans = 0;                                                             \
                for (int64_t i = 0; i < n; i++) {                                             \
                    if (KEY_OF_##SFX(a[i]) == mask) {                                         \
                        if (nans++ == 0) pick = i;                                            \
                        if (j->flag == TL_SELECT_MEDIAN) break;                               \
                    }                                                                         \
                }                                                                             \
                if (j->flag == TL_SELECT_NANMEDIAN && nans < n) pick = -1;                    \
                k = (n - nans - 1) / 2;                                                       \
            } else if (j->flag != TL_SELECT_KTH) {                                            \
                k = (n - 1) / 2;                                                              \
            }                                                                                 \
            if (pick < 0) {                                                                   \
                select_##SFX(a, n, k);                                                        \
                pick = k;                                                                     \
            }                                                                                 \
            write_##SFX(a + pick, 1, isz, in, r->src_st, o0, r->o0_st, o1, r->o1_st);          \
            return;                                                                           \
        }                                                                                     \
        default: { /* OP_MODE */                                                              \
            int64_t best_len = 0, best_end = 0;                                               \
            load_##SFX(r->dtype, in, r->src_st, n, 0, a, 0);                                   \
            s = sort_##SFX(a, a + n, n, nb);                                                  \
            for (int64_t i = 0; i < n;) {                                                     \
                uint64_t key = KEY_OF_##SFX(s[i]);                                            \
                int64_t e = i + 1;                                                            \
                if (!is_nan_key(r->dtype, key))                                               \
                    while (e < n && KEY_OF_##SFX(s[e]) == key) e++;                           \
                if (e - i > best_len) {                                                       \
                    best_len = e - i;                                                         \
                    best_end = e - 1;                                                         \
                }                                                                             \
                i = e;                                                                        \
            }                                                                                 \
            write_##SFX(s + best_end, 1, isz, in, r->src_st, o0, r->o0_st, o1, r->o1_st);      \
            return;                                                                           \
        }                                                                                     \
        }                                                                                     \
    }

#define KEY_OF_p(it) ((it) >> 32)
#define KEY_OF_w(it) ((it).key)
TL_DEF_ROW(p, uint64_t)
TL_DEF_ROW(w, tl_wide_t)

static void rows_chunk(void *ctx, int64_t b, int64_t e) {
    job_t *j = (job_t *)ctx;
    const tl_rows_t *r = j->r;
    int wide = use_wide(r);
    int64_t isz = tl_itemsize(r->dtype);
    void *mem = malloc((size_t)scratch_items(j) * (wide ? sizeof(tl_wide_t) : sizeof(uint64_t)));
    if (!mem) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (int64_t row = b; row < e; row++) {
        int64_t oi, o0, o1;
        const char *in;
        char *v;
        int64_t *ix;
        row_offsets(r, row, &oi, &o0, &o1);
        in = r->src + oi * isz;
        v = r->o0 ? r->o0 + o0 * isz : NULL;
        ix = r->o1 ? r->o1 + o1 : NULL;
        if (wide) row_w(j, (tl_wide_t *)mem, in, v, ix);
        else row_p(j, (uint64_t *)mem, in, v, ix);
    }
    free(mem);
}

static int run_rows(const tl_rows_t *r, int op, int flag, int64_t k) {
    job_t j;
    int64_t grain;
    if (r->nrows <= 0 || r->n <= 0) return 0;
    j.r = r;
    j.op = op;
    j.flag = flag;
    j.k = k;
    j.failed = 0;
    grain = GRAIN_ELEMS / r->n;
    if (grain < 1) grain = 1;
    tl_parallel_for(0, r->nrows, grain, rows_chunk, &j);
    return j.failed ? -1 : 0;
}

int tl_sort_rows(const tl_rows_t *r, int descending) { return run_rows(r, OP_SORT, descending, 0); }

int tl_topk_rows(const tl_rows_t *r, int64_t k, int largest) {
    if (k <= 0) return 0;
    return run_rows(r, OP_TOPK, largest, k);
}

int tl_select_rows(const tl_rows_t *r, int64_t k, int which) { return run_rows(r, OP_SELECT, which, k); }

int tl_mode_rows(const tl_rows_t *r) { return run_rows(r, OP_MODE, 0, 0); }

/* ---- unique */

/* Equal under PyTorch's comparison: -0 == +0 (same key), NaN equals nothing. */
static int elem_equal(int dtype, const char *a, const char *b) {
    uint64_t ka = key_any(dtype, a);
    return ka == key_any(dtype, b) && !is_nan_key(dtype, ka);
}

int64_t tl_runs(int dtype, const char *vals, int64_t n, int64_t *run_of) {
    int64_t isz = tl_itemsize(dtype), run = 0;
    if (n <= 0) return 0;
    run_of[0] = 0;
    for (int64_t i = 1; i < n; i++) {
        if (!elem_equal(dtype, vals + (i - 1) * isz, vals + i * isz)) run++;
        run_of[i] = run;
    }
    return run + 1;
}

void tl_unique_fill(int dtype, const char *sorted_vals, const int64_t *order, const int64_t *run_of,
                    int64_t n, char *uniq, int64_t *inverse, int64_t *counts) {
    int64_t isz = tl_itemsize(dtype);
    for (int64_t i = 0; i < n; i++) {
        int64_t r = run_of[i];
        if (i == 0 || r != run_of[i - 1]) {
            memcpy(uniq + r * isz, sorted_vals + i * isz, (size_t)isz);
            if (counts) counts[r] = 0;
        }
        if (counts) counts[r]++;
        if (inverse) inverse[order ? order[i] : i] = r;
    }
}

static int slice_cmp(int dtype, const char *data, int64_t len, int64_t a, int64_t b) {
    int64_t isz = tl_itemsize(dtype);
    const char *pa = data + a * len * isz, *pb = data + b * len * isz;
    for (int64_t t = 0; t < len; t++) {
        uint64_t ka = key_any(dtype, pa + t * isz), kb = key_any(dtype, pb + t * isz);
        if (ka != kb) return ka < kb ? -1 : 1;
    }
    return 0;
}

/* Stable merge sort of slice numbers (bottom-up, ping-pong between perm and tmp). */
int tl_sort_slices(int dtype, const char *data, int64_t m, int64_t len, int64_t *perm) {
    int64_t *tmp, *src, *dst;
    for (int64_t i = 0; i < m; i++) perm[i] = i;
    if (m < 2) return 0;
    tmp = (int64_t *)malloc((size_t)m * sizeof(int64_t));
    if (!tmp) return -1;
    src = perm;
    dst = tmp;
    for (int64_t w = 1; w < m; w *= 2) {
        for (int64_t lo = 0; lo < m; lo += 2 * w) {
            int64_t mid = lo + w < m ? lo + w : m, hi = lo + 2 * w < m ? lo + 2 * w : m;
            int64_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = slice_cmp(dtype, data, len, src[j], src[i]) < 0 ? src[j++] : src[i++];
            while (i < mid) dst[o++] = src[i++];
            while (j < hi) dst[o++] = src[j++];
        }
        int64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != perm) memcpy(perm, src, (size_t)m * sizeof(int64_t));
    free(tmp);
    return 0;
}

static int slice_equal(int dtype, const char *data, int64_t len, int64_t a, int64_t b) {
    int64_t isz = tl_itemsize(dtype);
    const char *pa = data + a * len * isz, *pb = data + b * len * isz;
    for (int64_t t = 0; t < len; t++)
        if (!elem_equal(dtype, pa + t * isz, pb + t * isz)) return 0;
    return 1;
}

int64_t tl_slice_runs(int dtype, const char *data, const int64_t *perm, int64_t m, int64_t len,
                      int64_t *run_of) {
    int64_t run = 0;
    if (m <= 0) return 0;
    run_of[0] = 0;
    for (int64_t i = 1; i < m; i++) {
        int64_t a = perm ? perm[i - 1] : i - 1, b = perm ? perm[i] : i;
        if (!slice_equal(dtype, data, len, a, b)) run++;
        run_of[i] = run;
    }
    return run + 1;
}
