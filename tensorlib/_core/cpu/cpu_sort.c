/* Sorting and selection kernels (see cpu_sort.h for the contract). */
#include "cpu_sort.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_copy.h"
#include "cpu_pool.h"
#include "cpu_simd.h"

/* Rows up to RADIX_MIN long are sorted by introsort; up to LSD_MAX (two buffers of them fit
   in L2) by LSD radix sort; longer ones get MSD passes of MSD_BITS first. */
#define RADIX_MIN 64
#define LSD_MAX 65536
#define MSD_BITS 11
/* Histogram entries: LSD (8 digits of 8 bits), rsort (an MSD level needs 2 * 2^11 + 1, and
   there are at most 6 levels over a 64-bit key, then LSD). */
#define LSD_HIST 2048
#define RSORT_HIST (6 * (2 * 2048 + 1) + LSD_HIST)
/* topk filters its input this many elements at a time, and keeps up to this many smallest
   by insertion (more: by select). */
#define TOPK_BLOCK 512
#define TOPK_INSERT_MAX 32
/* Strided rows are handled TILE_ROWS neighbours at a time when at most TILE_MAX_N long. */
#define TILE_ROWS 16
#define TILE_MAX_N 16384
/* Aim for about this many elements of work per parallel chunk of rows. */
#define GRAIN_ELEMS 32768
/* A single row at least this long is split across threads (fixed chunks of ROW_CHUNK). */
#define PAR_ROW_MIN 131072
#define ROW_CHUNK 65536

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

/* Does a float row hold elements whose bits the keys lose (NaN payloads and signs, -0)? Then
   sorted values are read back through the indices instead of rebuilt from the keys. (A
   separate pass: folded into the key loop it would keep that loop from vectorizing.) */
#define TL_DEF_SPECIAL(NAME, UT, EXPR)                                                        \
    TL_DISPATCH static int special_##NAME(const UT *TL_RESTRICT s, int64_t st, int64_t n) {    \
        int sp = 0;                                                                           \
        if (st == 1) {                                                                        \
            for (int64_t i = 0; i < n; i++) { UT v = s[i]; sp |= EXPR; }                      \
        } else {                                                                              \
            for (int64_t i = 0; i < n; i++) { UT v = s[i * st]; sp |= EXPR; }                 \
        }                                                                                     \
        return sp;                                                                            \
    }
TL_DEF_SPECIAL(f16, uint16_t, (v == 0x8000u) | ((v & 0x7fffu) > 0x7c00u))
TL_DEF_SPECIAL(bf16, uint16_t, (v == 0x8000u) | ((v & 0x7fffu) > 0x7f80u))
TL_DEF_SPECIAL(f32, uint32_t, (v == 0x80000000u) | ((v & 0x7fffffffu) > 0x7f800000u))
TL_DEF_SPECIAL(f64, uint64_t,
               (v == ((uint64_t)1 << 63)) | ((v & 0x7fffffffffffffffULL) > 0x7ff0000000000000ULL))

static int has_special(int dtype, const char *src, int64_t st, int64_t n) {
    switch (dtype) {
    case TL_F16: return special_f16((const uint16_t *)src, st, n);
    case TL_BF16: return special_bf16((const uint16_t *)src, st, n);
    case TL_F32: return special_f32((const uint32_t *)src, st, n);
    case TL_F64: return special_f64((const uint64_t *)src, st, n);
    default: return 0;
    }
}

/* Inverse of the keys (for rows without special elements). */
static inline uint64_t unkey_u8(uint64_t k) { return k; }
static inline uint64_t unkey_i8(uint64_t k) { return k ^ 0x80u; }
static inline uint64_t unkey_i16(uint64_t k) { return k ^ 0x8000u; }
static inline uint64_t unkey_i32(uint64_t k) { return k ^ 0x80000000u; }
static inline uint64_t unkey_i64(uint64_t k) { return k ^ ((uint64_t)1 << 63); }
static inline uint64_t unkey_f16(uint64_t k) { return (k & 0x8000u) ? (k ^ 0x8000u) : (~k & 0xffffu); }
static inline uint64_t unkey_f32(uint64_t k) {
    return (k & 0x80000000u) ? (k ^ 0x80000000u) : (~k & 0xffffffffu);
}
static inline uint64_t unkey_f64(uint64_t k) {
    return (k & ((uint64_t)1 << 63)) ? (k ^ ((uint64_t)1 << 63)) : ~k;
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

/* topk keeps a running candidate set when k is small next to the row; else it sorts. */
static int topk_streams(int64_t n, int64_t k) { return n > 64 && k * 8 <= n; }

static int64_t topk_cap(int64_t k) { return k + (k > 256 ? k : 256); }

/* Segment length when one long row's topk is split across threads. */
static int64_t topk_segment(int64_t k) { return k * 256 > ROW_CHUNK ? k * 256 : ROW_CHUNK; }

/* Histogram entries for sorting n items, or radix-selecting among them (one digit of up to
   16 bits, used from 65536 items on). */
static int64_t hist_entries(int64_t n) {
    int64_t h = LSD_HIST;
    if (n > LSD_MAX) h = RSORT_HIST;
    if (n >= 65536) h = 65536;
    return h;
}
_Static_assert(RSORT_HIST <= 65536, "rsort's histograms fit in radix select's");

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

/* Scratch items one row needs. */
static int64_t scratch_items(int op, int64_t n, int64_t k) {
    if (op == OP_SELECT) return n;
    if (op == OP_TOPK && topk_streams(n, k)) return topk_cap(k) + TOPK_BLOCK + k;
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

/* Where one row reads and writes (strides along the row, in elements). */
typedef struct {
    const char *in;
    int64_t in_st;
    char *o0;
    int64_t o0_st;
    int64_t *o1;
    int64_t o1_st;
} rowio_t;

/* One row, for either item type. */
#define TL_DEF_ROW(SFX, ITEM)                                                                 \
    static void row_##SFX(const job_t *j, ITEM *a, int64_t *hist, const rowio_t *io) {        \
        const tl_rows_t *r = j->r;                                                            \
        const char *in = io->in;                                                              \
        char *o0 = io->o0;                                                                    \
        int64_t *o1 = io->o1, n = r->n, in_st = io->in_st;                                    \
        int kbits = 8 * key_bytes(r->dtype), dt = r->dtype;                                   \
        uint64_t mask = key_mask(dt);                                                         \
        ITEM *s;                                                                              \
        switch (j->op) {                                                                      \
        case OP_SORT: {                                                                       \
            uint64_t flip = j->flag ? mask : 0;                                               \
            int exact = o0 && !has_special(dt, in, in_st, n);                             \
            load_##SFX(dt, in, in_st, n, flip, a, 0);                                     \
            s = sort_##SFX(a, a + n, n, kbits, hist);                                         \
            write_##SFX(s, n, dt, exact, flip, in, in_st, o0, io->o0_st, o1, io->o1_st);    \
            return;                                                                           \
        }                                                                                     \
        case OP_TOPK: {                                                                       \
            int64_t k = j->k;                                                                 \
            uint64_t flip = j->flag ? mask : 0;                                               \
            if (topk_streams(n, k)) {                                                         \
                int64_t cap = topk_cap(k);                                                    \
                topk_scan_##SFX(dt, in, in_st, 0, n, flip, k, a, cap, a + cap);           \
                s = sort_##SFX(a, a + cap + TOPK_BLOCK, k, kbits, hist);                      \
            } else {                                                                          \
                load_##SFX(dt, in, in_st, n, flip, a, 0);                                 \
                s = sort_##SFX(a, a + n, n, kbits, hist);                                     \
            }                                                                                 \
            write_##SFX(s, k, dt, 0, flip, in, in_st, o0, io->o0_st, o1, io->o1_st);        \
            return;                                                                           \
        }                                                                                     \
        case OP_SELECT: {                                                                     \
            int64_t k = j->k, pick = -1;                                                      \
            ITEM it;                                                                          \
            load_##SFX(dt, in, in_st, n, 0, a, 0);                                        \
            if (j->flag != TL_SELECT_KTH && is_float(dt)) {                                   \
                int64_t nans = count_key_##SFX(a, n, mask);                                   \
                if (nans > 0 && (j->flag == TL_SELECT_MEDIAN || nans == n)) {                 \
                    pick = 0;                                      /* the first NaN */        \
                    while (KEY_OF_##SFX(a[pick]) != mask) pick++;                             \
                }                                                                             \
                k = (n - nans - 1) / 2;                                                       \
            } else if (j->flag != TL_SELECT_KTH) {                                            \
                k = (n - 1) / 2;                                                              \
            }                                                                                 \
            it = pick >= 0 ? a[pick] : rselect_##SFX(a, n, k, kbits, hist);                  \
            write_##SFX(&it, 1, dt, 0, 0, in, in_st, o0, io->o0_st, o1, io->o1_st);         \
            return;                                                                           \
        }                                                                                     \
        default: { /* OP_MODE */                                                              \
            int64_t best_len = 0, best_end = 0;                                               \
            load_##SFX(dt, in, in_st, n, 0, a, 0);                                        \
            s = sort_##SFX(a, a + n, n, kbits, hist);                                         \
            for (int64_t i = 0; i < n;) {                                                     \
                uint64_t key = KEY_OF_##SFX(s[i]);                                            \
                int64_t e = i + 1;                                                            \
                if (!is_nan_key(dt, key))                                                     \
                    while (e < n && KEY_OF_##SFX(s[e]) == key) e++;                           \
                if (e - i > best_len) {                                                       \
                    best_len = e - i;                                                         \
                    best_end = e - 1;                                                         \
                }                                                                             \
                i = e;                                                                        \
            }                                                                                 \
            write_##SFX(s + best_end, 1, dt, 0, 0, in, in_st, o0, io->o0_st, o1,           \
                        io->o1_st);                                                            \
            return;                                                                           \
        }                                                                                     \
        }                                                                                     \
    }

#define KEY_OF_p(it) ((it) >> 32)
#define KEY_OF_w(it) ((it).key)
TL_DEF_ROW(p, uint64_t)
TL_DEF_ROW(w, tl_wide_t)

/* Scratch for one chunk: items, then the histogram. */
static void *chunk_scratch(const job_t *j, int wide, int64_t **hist) {
    int64_t n = j->r->n;
    size_t isz = wide ? sizeof(tl_wide_t) : sizeof(uint64_t);
    size_t items = (size_t)scratch_items(j->op, n, j->k) * isz;
    items = (items + 63) & ~(size_t)63;
    char *mem = (char *)malloc(items + (size_t)hist_entries(n) * sizeof(int64_t));
    if (mem) *hist = (int64_t *)(mem + items);
    return mem;
}

/* Output elements per row. */
static int64_t out_len(const job_t *j) {
    return j->op == OP_SORT ? j->r->n : (j->op == OP_TOPK ? j->k : 1);
}

static void run_row(const job_t *j, void *mem, int64_t *hist, const rowio_t *io) {
    if (use_wide(j->r)) row_w(j, (tl_wide_t *)mem, hist, io);
    else row_p(j, (uint64_t *)mem, hist, io);
}

/* dst[t][i] = src[t + i * st] for g rows of n (elements of isz bytes). */
static void tile_gather(int64_t isz, char *dst, const char *src, int64_t n, int64_t g, int64_t st) {
#define TL_GATHER(T)                                                                          \
    for (int64_t i = 0; i < n; i++)                                                           \
        for (int64_t t = 0; t < g; t++) ((T *)dst)[t * n + i] = ((const T *)src)[t + i * st];
    switch (isz) {
    case 1: TL_GATHER(uint8_t) break;
    case 2: TL_GATHER(uint16_t) break;
    case 4: TL_GATHER(uint32_t) break;
    default: TL_GATHER(uint64_t) break;
    }
#undef TL_GATHER
}

/* dst[off[t] + i * st] = src[t][i] for g rows of m. */
static void tile_scatter(int64_t isz, char *dst, const int64_t *off, int64_t st, const char *src,
                         int64_t m, int64_t g) {
#define TL_SCATTER(T)                                                                         \
    for (int64_t i = 0; i < m; i++)                                                           \
        for (int64_t t = 0; t < g; t++) ((T *)dst)[off[t] + i * st] = ((const T *)src)[t * m + i];
    switch (isz) {
    case 1: TL_SCATTER(uint8_t) break;
    case 2: TL_SCATTER(uint16_t) break;
    case 4: TL_SCATTER(uint32_t) break;
    default: TL_SCATTER(uint64_t) break;
    }
#undef TL_SCATTER
}

/* Rows along a strided dim whose neighbours sit next to each other in memory (sorting a
   C-contiguous tensor along dim 0): up to TILE_ROWS of them are copied into contiguous rows
   together (reading whole cache lines), computed there, and their outputs copied back the
   same way. Returns how many rows it did (0: not applicable). */
static int64_t tile_rows(const job_t *j, int64_t row, int64_t end, void *mem, int64_t *hist,
                         char *tile) {
    const tl_rows_t *r = j->r;
    int64_t n = r->n, m = out_len(j), isz = tl_itemsize(r->dtype), g, inner, oi[TILE_ROWS],
            o0[TILE_ROWS], o1[TILE_ROWS];
    char *tin, *tv;
    int64_t *tix;
    if (!tile) return 0;
    inner = r->outer_shape[r->outer_nd - 1];
    g = inner - row % inner;                      /* rows left in this run of neighbours */
    if (g > end - row) g = end - row;
    if (g > TILE_ROWS) g = TILE_ROWS;
    if (g < 2) return 0;
    tin = tile;
    tv = tin + TILE_ROWS * n * isz;
    tix = (int64_t *)(tv + ((TILE_ROWS * m * isz + 7) & ~(int64_t)7));
    for (int64_t t = 0; t < g; t++) row_offsets(r, row + t, &oi[t], &o0[t], &o1[t]);
    tile_gather(isz, tin, r->src + oi[0] * isz, n, g, r->src_st);
    for (int64_t t = 0; t < g; t++) {
        rowio_t io = {tin + t * n * isz, 1, r->o0 ? tv + t * m * isz : NULL, 1,
                      r->o1 ? tix + t * m : NULL, 1};
        run_row(j, mem, hist, &io);
    }
    if (r->o0) tile_scatter(isz, r->o0, o0, r->o0_st, tv, m, g);
    if (r->o1) tile_scatter(8, (char *)r->o1, o1, r->o1_st, (const char *)tix, m, g);
    return g;
}

static void rows_chunk(void *ctx, int64_t b, int64_t e) {
    job_t *j = (job_t *)ctx;
    const tl_rows_t *r = j->r;
    int wide = use_wide(r);
    int64_t isz = tl_itemsize(r->dtype), *hist = NULL, n = r->n, m = out_len(j);
    void *mem = chunk_scratch(j, wide, &hist);
    char *tile = NULL;
    if (!mem) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    if (r->src_st != 1 && r->outer_nd > 0 && r->src_os[r->outer_nd - 1] == 1 && n <= TILE_MAX_N &&
        e - b >= 2)
        tile = (char *)malloc((size_t)(TILE_ROWS * (n * isz + m * isz + 8 + m * 8)));
    for (int64_t row = b; row < e;) {
        int64_t oi, o0, o1, done = tile_rows(j, row, e, mem, hist, tile);
        rowio_t io;
        if (done) {
            row += done;
            continue;
        }
        row_offsets(r, row, &oi, &o0, &o1);
        io.in = r->src + oi * isz;
        io.in_st = r->src_st;
        io.o0 = r->o0 ? r->o0 + o0 * isz : NULL;
        io.o0_st = r->o0_st;
        io.o1 = r->o1 ? r->o1 + o1 : NULL;
        io.o1_st = r->o1_st;
        run_row(j, mem, hist, &io);
        row++;
    }
    free(tile);
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

/* ---- int64 rows whose values span less than 2^32 (indices, labels, counts) sort as 32-bit
   keys, with half the memory traffic: v - min, top bit flipped, is an int32 in the same
   order. The rows are copied so, sorted (or their mode found) as int32, and the values come
   back with the bias added. */
#define NARROW_MIN 65536

static int64_t row_elem(const tl_rows_t *r, int64_t row, const int64_t *os) {
    int64_t off = 0;
    for (int d = r->outer_nd - 1; d >= 0; d--) {
        off += (row % r->outer_shape[d]) * os[d];
        row /= r->outer_shape[d];
    }
    return off;
}

TL_DISPATCH static void minmax_i64(const int64_t *TL_RESTRICT v, int64_t st, int64_t n, int64_t *mn,
                                   int64_t *mx) {
    int64_t lo = *mn, hi = *mx;
    if (st == 1) {
        for (int64_t i = 0; i < n; i++) {
            lo = v[i] < lo ? v[i] : lo;
            hi = v[i] > hi ? v[i] : hi;
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            lo = v[i * st] < lo ? v[i * st] : lo;
            hi = v[i * st] > hi ? v[i * st] : hi;
        }
    }
    *mn = lo;
    *mx = hi;
}

TL_DISPATCH static void bias_i64(const int64_t *TL_RESTRICT v, int64_t st, int64_t n, int64_t mn,
                                 uint32_t *TL_RESTRICT out) {
    if (st == 1) {
        for (int64_t i = 0; i < n; i++) out[i] = (uint32_t)((uint64_t)v[i] - (uint64_t)mn) ^ 0x80000000u;
    } else {
        for (int64_t i = 0; i < n; i++)
            out[i] = (uint32_t)((uint64_t)v[i * st] - (uint64_t)mn) ^ 0x80000000u;
    }
}

TL_DISPATCH static void unbias_i64(const uint32_t *TL_RESTRICT v, int64_t n, int64_t mn,
                                   int64_t *TL_RESTRICT out, int64_t st) {
    if (st == 1) {
        for (int64_t i = 0; i < n; i++) out[i] = (int64_t)((uint64_t)(v[i] ^ 0x80000000u) + (uint64_t)mn);
    } else {
        for (int64_t i = 0; i < n; i++)
            out[i * st] = (int64_t)((uint64_t)(v[i] ^ 0x80000000u) + (uint64_t)mn);
    }
}

/* Returns 1 when done, 0 when not applicable, -1 when out of memory. */
static int narrow_i64(const tl_rows_t *r, int op, int flag) {
    int64_t mn = INT64_MAX, mx = INT64_MIN, n = r->n, m = op == OP_SORT ? n : 1, rc, stride;
    int64_t src_os[64], o0_os[64];
    uint32_t *tin, *tout = NULL;
    tl_rows_t q;
    if (r->dtype != TL_I64 || r->nrows <= 0 || n <= 0 || n > 0xffffffffLL ||
        r->nrows * n < NARROW_MIN || r->outer_nd > 64)
        return 0;
    for (int64_t row = 0; row < r->nrows; row++)
        minmax_i64((const int64_t *)r->src + row_elem(r, row, r->src_os), r->src_st, n, &mn, &mx);
    if ((uint64_t)mx - (uint64_t)mn > 0xffffffffULL) return 0;
    tin = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)(r->nrows * n));
    if (r->o0) tout = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)(r->nrows * m));
    if (!tin || (r->o0 && !tout)) {
        free(tin);
        free(tout);
        return -1;
    }
    for (int64_t row = 0; row < r->nrows; row++)
        bias_i64((const int64_t *)r->src + row_elem(r, row, r->src_os), r->src_st, n, mn, tin + row * n);
    /* the copies are C-contiguous over the same outer dims */
    stride = 1;
    for (int d = r->outer_nd - 1; d >= 0; d--) {
        src_os[d] = stride * n;
        o0_os[d] = stride * m;
        stride *= r->outer_shape[d];
    }
    q = *r;
    q.dtype = TL_I32;
    q.src = (const char *)tin;
    q.src_os = src_os;
    q.src_st = 1;
    q.o0 = (char *)tout;
    q.o0_os = tout ? o0_os : NULL;
    q.o0_st = 1;
    rc = op == OP_SORT ? tl_sort_rows(&q, flag) : tl_mode_rows(&q);
    if (rc == 0 && tout)
        for (int64_t row = 0; row < r->nrows; row++)
            unbias_i64(tout + row * m, m, mn, (int64_t *)r->o0 + row_elem(r, row, r->o0_os), r->o0_st);
    free(tin);
    free(tout);
    return rc == 0 ? 1 : -1;
}

/* Few long rows: one at a time, each split across the threads. */
static int few_long_rows(const tl_rows_t *r) {
    return r->n >= PAR_ROW_MIN && r->nrows < tl_get_num_threads() && !tl_in_parallel_region();
}

int tl_sort_rows(const tl_rows_t *r, int descending) {
    int narrow = narrow_i64(r, OP_SORT, descending);
    if (narrow) return narrow > 0 ? 0 : -1;
    if (r->nrows > 0 && few_long_rows(r)) {
        int64_t isz = tl_itemsize(r->dtype);
        uint64_t flip = descending ? key_mask(r->dtype) : 0;
        for (int64_t row = 0; row < r->nrows; row++) {
            int64_t oi, o0, o1;
            char *v;
            int64_t *ix;
            int rc;
            row_offsets(r, row, &oi, &o0, &o1);
            v = r->o0 ? r->o0 + o0 * isz : NULL;
            ix = r->o1 ? r->o1 + o1 : NULL;
            rc = use_wide(r)
                ? sort_row_par_w(r->dtype, r->src + oi * isz, r->src_st, r->n, flip, v, r->o0_st, ix, r->o1_st)
                : sort_row_par_p(r->dtype, r->src + oi * isz, r->src_st, r->n, flip, v, r->o0_st, ix, r->o1_st);
            if (rc) return rc;
        }
        return 0;
    }
    return run_rows(r, OP_SORT, descending, 0);
}

int tl_topk_rows(const tl_rows_t *r, int64_t k, int largest) {
    if (k <= 0) return 0;
    if (r->nrows > 0 && few_long_rows(r) && topk_streams(r->n, k) && r->n >= 2 * topk_segment(k)) {
        int64_t isz = tl_itemsize(r->dtype);
        uint64_t flip = largest ? key_mask(r->dtype) : 0;
        for (int64_t row = 0; row < r->nrows; row++) {
            int64_t oi, o0, o1;
            char *v;
            int64_t *ix;
            int rc;
            row_offsets(r, row, &oi, &o0, &o1);
            v = r->o0 ? r->o0 + o0 * isz : NULL;
            ix = r->o1 ? r->o1 + o1 : NULL;
            rc = use_wide(r)
                ? topk_row_par_w(r->dtype, r->src + oi * isz, r->src_st, r->n, k, flip, v, r->o0_st, ix, r->o1_st)
                : topk_row_par_p(r->dtype, r->src + oi * isz, r->src_st, r->n, k, flip, v, r->o0_st, ix, r->o1_st);
            if (rc) return rc;
        }
        return 0;
    }
    return run_rows(r, OP_TOPK, largest, k);
}

int tl_select_rows(const tl_rows_t *r, int64_t k, int which) {
    if (r->nrows > 0 && few_long_rows(r) && key_bytes(r->dtype) >= 2) {
        int64_t isz = tl_itemsize(r->dtype);
        for (int64_t row = 0; row < r->nrows; row++) {
            int64_t oi, o0, o1;
            int rc;
            rowio_t io;
            row_offsets(r, row, &oi, &o0, &o1);
            io.in = r->src + oi * isz;
            io.in_st = r->src_st;
            if (use_wide(r)) {
                tl_wide_t it;
                rc = select_row_par_w(r->dtype, io.in, io.in_st, r->n, k, which, &it);
                if (!rc) write_w(&it, 1, r->dtype, 0, 0, io.in, io.in_st, r->o0 ? r->o0 + o0 * isz : NULL,
                                 0, r->o1 ? r->o1 + o1 : NULL, 0);
            } else {
                uint64_t it;
                rc = select_row_par_p(r->dtype, io.in, io.in_st, r->n, k, which, &it);
                if (!rc) write_p(&it, 1, r->dtype, 0, 0, io.in, io.in_st, r->o0 ? r->o0 + o0 * isz : NULL,
                                 0, r->o1 ? r->o1 + o1 : NULL, 0);
            }
            if (rc) return rc;
        }
        return 0;
    }
    return run_rows(r, OP_SELECT, which, k);
}

int tl_mode_rows(const tl_rows_t *r) {
    int narrow = narrow_i64(r, OP_MODE, 0);
    if (narrow) return narrow > 0 ? 0 : -1;
    return run_rows(r, OP_MODE, 0, 0);
}

/* ---- unique */

/* Equal under PyTorch's comparison: -0 == +0 (same key), NaN equals nothing. */
static int elem_equal(int dtype, const char *a, const char *b) {
    uint64_t ka = key_any(dtype, a);
    return ka == key_any(dtype, b) && !is_nan_key(dtype, ka);
}

/* run_of[i] = number of runs of equal values in v[0..i]: typed loops (== is PyTorch's equality
   for int and float types: -0 == +0, NaN != NaN); half types compare by key. */
#define TL_DEF_RUNS(NAME, CT, EQ)                                                             \
    static int64_t runs_##NAME(const CT *v, int64_t n, int64_t *run_of) {                     \
        int64_t run = 0;                                                                      \
        run_of[0] = 0;                                                                        \
        for (int64_t i = 1; i < n; i++) {                                                     \
            run += !(EQ(v[i - 1], v[i]));                                                     \
            run_of[i] = run;                                                                  \
        }                                                                                     \
        return run + 1;                                                                       \
    }
#define TL_EQ(a, b) ((a) == (b))
#define TL_EQ_F16(a, b) (key_f16(a) == key_f16(b) && ((a) & 0x7fffu) <= 0x7c00u)
#define TL_EQ_BF16(a, b) (key_bf16(a) == key_bf16(b) && ((a) & 0x7fffu) <= 0x7f80u)
TL_DEF_RUNS(u8, uint8_t, TL_EQ)
TL_DEF_RUNS(i16, int16_t, TL_EQ)
TL_DEF_RUNS(i32, int32_t, TL_EQ)
TL_DEF_RUNS(i64, int64_t, TL_EQ)
TL_DEF_RUNS(f16, uint16_t, TL_EQ_F16)
TL_DEF_RUNS(bf16, uint16_t, TL_EQ_BF16)
TL_DEF_RUNS(f32, float, TL_EQ)
TL_DEF_RUNS(f64, double, TL_EQ)

int64_t tl_runs(int dtype, const char *vals, int64_t n, int64_t *run_of) {
    if (n <= 0) return 0;
    switch (dtype) {
    case TL_BOOL:
    case TL_U8:
    case TL_I8: return runs_u8((const uint8_t *)vals, n, run_of);
    case TL_I16: return runs_i16((const int16_t *)vals, n, run_of);
    case TL_I32: return runs_i32((const int32_t *)vals, n, run_of);
    case TL_I64: return runs_i64((const int64_t *)vals, n, run_of);
    case TL_F16: return runs_f16((const uint16_t *)vals, n, run_of);
    case TL_BF16: return runs_bf16((const uint16_t *)vals, n, run_of);
    case TL_F32: return runs_f32((const float *)vals, n, run_of);
    default: return runs_f64((const double *)vals, n, run_of);
    }
}

void tl_unique_fill(int dtype, const char *sorted_vals, const int64_t *order, const int64_t *run_of,
                    int64_t n, char *uniq, int64_t *inverse, int64_t *counts) {
    /* first value of every run (typed copies: one call per element would dominate) */
#define TL_FIRSTS(T)                                                                          \
    for (int64_t i = 0; i < n; i++)                                                           \
        if (i == 0 || run_of[i] != run_of[i - 1]) ((T *)uniq)[run_of[i]] = ((const T *)sorted_vals)[i];
    switch (tl_itemsize(dtype)) {
    case 1: TL_FIRSTS(uint8_t) break;
    case 2: TL_FIRSTS(uint16_t) break;
    case 4: TL_FIRSTS(uint32_t) break;
    default: TL_FIRSTS(uint64_t) break;
    }
#undef TL_FIRSTS
    if (counts && n > 0) {
        int64_t start = 0;
        for (int64_t i = 1; i <= n; i++) {
            if (i == n || run_of[i] != run_of[i - 1]) {
                counts[run_of[i - 1]] = i - start;
                start = i;
            }
        }
    }
    if (inverse) {
        if (order) {
            for (int64_t i = 0; i < n; i++) inverse[order[i]] = run_of[i];
        } else {
            memcpy(inverse, run_of, sizeof(int64_t) * (size_t)n);
        }
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
