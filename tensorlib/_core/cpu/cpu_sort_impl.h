/* Sorting algorithms over one item type, instantiated twice by cpu_sort.c (no include guard):
   "p" items pack a 32-bit order key and a 32-bit index into one uint64 (the fast path: 8-byte
   items, plain integer compares), "w" items hold a 64-bit key and a 64-bit index.

   The including file defines ITEM, SFX, KEY_OF(it) (uint64_t), IDX_OF(it) (int64_t),
   MAKE(key, idx) and LESS(a, b) (key, then index: a strict total order, since indices are
   distinct — so every algorithm here gives the same, stable, result). */

#define TL_CAT2(a, b) a##_##b
#define TL_CAT(a, b) TL_CAT2(a, b)
#define FN(name) TL_CAT(name, SFX)

static inline void FN(swap)(ITEM *a, ITEM *b) {
    ITEM t = *a;
    *a = *b;
    *b = t;
}

static void FN(insertion)(ITEM *a, int64_t n) {
    for (int64_t i = 1; i < n; i++) {
        ITEM x = a[i];
        int64_t j = i;
        while (j > 0 && LESS(x, a[j - 1])) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

static void FN(sift_down)(ITEM *a, int64_t root, int64_t n) {
    for (;;) {
        int64_t c = 2 * root + 1;
        if (c >= n) return;
        if (c + 1 < n && LESS(a[c], a[c + 1])) c++;
        if (!LESS(a[root], a[c])) return;
        FN(swap)(&a[root], &a[c]);
        root = c;
    }
}

static void FN(heapsort)(ITEM *a, int64_t n) {
    for (int64_t i = n / 2 - 1; i >= 0; i--) FN(sift_down)(a, i, n);
    for (int64_t i = n - 1; i > 0; i--) {
        FN(swap)(&a[0], &a[i]);
        FN(sift_down)(a, 0, i);
    }
}

/* Hoare partition around the median of a[0], a[n/2], a[n-1] (n > 3). Afterwards a[0..i) <=
   pivot <= a[i..n) with 1 <= i <= n-1; returns i. The ordered ends act as sentinels. */
static int64_t FN(partition)(ITEM *a, int64_t n) {
    int64_t mid = n / 2, i = 0, j = n - 1;
    ITEM p;
    if (LESS(a[mid], a[0])) FN(swap)(&a[mid], &a[0]);
    if (LESS(a[n - 1], a[mid])) FN(swap)(&a[n - 1], &a[mid]);
    if (LESS(a[mid], a[0])) FN(swap)(&a[mid], &a[0]);
    p = a[mid];
    for (;;) {
        do i++; while (LESS(a[i], p));
        do j--; while (LESS(p, a[j]));
        if (i >= j) return i;
        FN(swap)(&a[i], &a[j]);
    }
}

static int FN(depth_limit)(int64_t n) {
    int d = 0;
    while (n > 1) {
        n >>= 1;
        d++;
    }
    return 2 * d + 4;
}

/* Introsort: quicksort, heapsort when the recursion gets too deep, insertion sort for
   small ranges. */
static void FN(introsort)(ITEM *a, int64_t n, int depth) {
    while (n > 24) {
        int64_t i;
        if (depth-- <= 0) {
            FN(heapsort)(a, n);
            return;
        }
        i = FN(partition)(a, n);
        if (i < n - i) {                 /* recurse on the smaller side, loop on the larger */
            FN(introsort)(a, i, depth);
            a += i;
            n -= i;
        } else {
            FN(introsort)(a + i, n - i, depth);
            n = i;
        }
    }
    FN(insertion)(a, n);
}

/* Introselect: afterwards a[k] is the (k+1)-th smallest, a[0..k) <= a[k] <= a[k+1..n). */
static void FN(select)(ITEM *a, int64_t n, int64_t k) {
    int depth = FN(depth_limit)(n);
    while (n > 24) {
        int64_t i;
        if (depth-- <= 0) {
            FN(heapsort)(a, n);
            return;
        }
        i = FN(partition)(a, n);
        if (k < i) {
            n = i;
        } else {
            a += i;
            n -= i;
            k -= i;
        }
    }
    FN(insertion)(a, n);
}

/* LSD radix sort on the low `kbits` bits of the key, 8 bits per pass, for rows that fit in
   cache; passes whose digit is the same for every item are skipped. Stable, so ties keep
   index order. hist: LSD_HIST entries. Returns a or b, whichever holds the result. */
static ITEM *FN(lsd)(ITEM *a, ITEM *b, int64_t n, int kbits, int64_t *hist) {
    int nd = (kbits + 7) / 8;
    memset(hist, 0, sizeof(int64_t) * 256 * (size_t)nd);
    for (int64_t i = 0; i < n; i++) {
        uint64_t k = KEY_OF(a[i]);
#pragma GCC unroll 8
        for (int d = 0; d < nd; d++) hist[d * 256 + ((k >> (8 * d)) & 255)]++;
    }
    for (int d = 0; d < nd; d++) {
        int64_t *h = hist + d * 256, sum = 0;
        int sh = 8 * d;
        ITEM *t;
        if (h[(KEY_OF(a[0]) >> sh) & 255] == n) continue;
        for (int v = 0; v < 256; v++) {
            int64_t c = h[v];
            h[v] = sum;
            sum += c;
        }
        for (int64_t i = 0; i < n; i++) {
            ITEM it = a[i];
            b[h[(KEY_OF(it) >> sh) & 255]++] = it;
        }
        t = a;
        a = b;
        b = t;
    }
    return a;
}

static ITEM *FN(rsort)(ITEM *a, ITEM *b, int64_t n, int kbits, int64_t *hist);

/* One MSD step: stable scatter of a into b by the top MSD_BITS of the low `kbits` key bits
   (bucket starts left in starts[0..nb]), then each bucket sorted on the remaining bits. */
static void FN(msd_buckets)(ITEM *a, ITEM *b, const int64_t *starts, int64_t nb, int sh,
                            int64_t *hist) {
    for (int64_t v = 0; v < nb; v++) {
        int64_t off = starts[v], cnt = starts[v + 1] - off;
        ITEM *r;
        if (cnt < 2) continue;
        r = FN(rsort)(b + off, a + off, cnt, sh, hist);
        if (r != b + off) memcpy(b + off, r, sizeof(ITEM) * (size_t)cnt);
    }
}

/* Radix sort of the low `kbits` key bits: while the row is too big for the cache, one
   most-significant-digit scatter pass (11 bits; the only pass that goes to memory), then
   each bucket on its own; rows that fit are LSD-sorted. Stable. hist: RSORT_HIST entries.
   Returns a or b, whichever holds the result. */
static ITEM *FN(rsort)(ITEM *a, ITEM *b, int64_t n, int kbits, int64_t *hist) {
    while (kbits > 0 && n > LSD_MAX) {
        int dbits = kbits < MSD_BITS ? kbits : MSD_BITS, sh = kbits - dbits;
        int64_t nb = (int64_t)1 << dbits, *cnt = hist, sum = 0;
        uint64_t mask = (uint64_t)nb - 1;
        memset(cnt, 0, sizeof(int64_t) * (size_t)(nb + 1));
        for (int64_t i = 0; i < n; i++) cnt[(KEY_OF(a[i]) >> sh) & mask]++;
        kbits = sh;
        if (cnt[(KEY_OF(a[0]) >> sh) & mask] == n) continue;       /* one bucket: next bits */
        for (int64_t v = 0; v <= nb; v++) {                          /* counts -> starts */
            int64_t c = cnt[v];
            cnt[v] = sum;
            sum += c;
        }
        {
            int64_t *pos = hist + nb + 1;                            /* running positions */
            memcpy(pos, cnt, sizeof(int64_t) * (size_t)nb);
            for (int64_t i = 0; i < n; i++) {
                ITEM it = a[i];
                b[pos[(KEY_OF(it) >> sh) & mask]++] = it;
            }
        }
        FN(msd_buckets)(a, b, cnt, nb, sh, hist + 2 * nb + 1);
        return b;
    }
    if (kbits == 0 || n < 2) return a;
    if (n <= RADIX_MIN) {
        FN(introsort)(a, n, FN(depth_limit)(n));
        return a;
    }
    return FN(lsd)(a, b, n, kbits, hist);
}

/* Sort n items (b: scratch of n items). Returns a or b, whichever holds the result. */
static ITEM *FN(sort)(ITEM *a, ITEM *b, int64_t n, int kbits, int64_t *hist) {
    if (n <= RADIX_MIN) {
        FN(introsort)(a, n, FN(depth_limit)(n));
        return a;
    }
    return FN(rsort)(a, b, n, kbits, hist);
}

/* Radix select: the item of rank k (0-based) among a[0..n), by key digits from the top,
   keeping only the bucket that holds rank k (compaction keeps index order, so once all key
   bits are used the survivors are equal keys in index order). Destroys a. hist: RADIX_HIST. */
static ITEM FN(rselect)(ITEM *a, int64_t n, int64_t k, int kbits, int64_t *hist) {
    int shift = kbits;
    while (n > 64 && shift > 0) {
        int dbits = n >= ((int64_t)1 << 16) ? 16 : (n >= 4096 ? 11 : 8);
        int64_t nb, below = 0, m = 0;
        uint64_t mask, bucket = 0;
        if (dbits > shift) dbits = shift;
        shift -= dbits;
        nb = (int64_t)1 << dbits;
        mask = (uint64_t)nb - 1;
        memset(hist, 0, sizeof(int64_t) * (size_t)nb);
        for (int64_t i = 0; i < n; i++) hist[(KEY_OF(a[i]) >> shift) & mask]++;
        while (below + hist[bucket] <= k) below += hist[bucket++];
        k -= below;
        if (hist[bucket] == n) continue;
        for (int64_t i = 0; i < n; i++) {
            ITEM it = a[i];
            a[m] = it;
            m += ((KEY_OF(it) >> shift) & mask) == bucket;
        }
        n = m;
    }
    if (shift > 0) FN(select)(a, n, k);
    return a[k];
}

/* Order keys of n elements (stride st, in elements) with indices i0, i0+1, ... */
#define TL_DEF_LOAD(NAME, CT, KEYFN)                                                          \
    TL_DISPATCH static void TL_CAT(FN(load), NAME)(const CT *TL_RESTRICT s, int64_t st,        \
                                                   int64_t n, uint64_t flip,                  \
                                                   ITEM *TL_RESTRICT out, int64_t i0) {       \
        if (st == 1) {                                                                        \
            for (int64_t i = 0; i < n; i++) out[i] = MAKE(KEYFN(s[i]) ^ flip, i0 + i);         \
        } else {                                                                              \
            for (int64_t i = 0; i < n; i++) out[i] = MAKE(KEYFN(s[i * st]) ^ flip, i0 + i);    \
        }                                                                                     \
    }

TL_DEF_LOAD(u8, uint8_t, key_u8)
TL_DEF_LOAD(i8, int8_t, key_i8)
TL_DEF_LOAD(i16, int16_t, key_i16)
TL_DEF_LOAD(i32, int32_t, key_i32)
TL_DEF_LOAD(i64, int64_t, key_i64)
TL_DEF_LOAD(f16, uint16_t, key_f16)
TL_DEF_LOAD(bf16, uint16_t, key_bf16)
TL_DEF_LOAD(f32, uint32_t, key_f32)
TL_DEF_LOAD(f64, uint64_t, key_f64)

static void FN(load)(int dtype, const char *src, int64_t st, int64_t n, uint64_t flip, ITEM *out,
                     int64_t i0) {
    switch (dtype) {
    case TL_BOOL:
    case TL_U8: TL_CAT(FN(load), u8)((const uint8_t *)src, st, n, flip, out, i0); break;
    case TL_I8: TL_CAT(FN(load), i8)((const int8_t *)src, st, n, flip, out, i0); break;
    case TL_I16: TL_CAT(FN(load), i16)((const int16_t *)src, st, n, flip, out, i0); break;
    case TL_I32: TL_CAT(FN(load), i32)((const int32_t *)src, st, n, flip, out, i0); break;
    case TL_I64: TL_CAT(FN(load), i64)((const int64_t *)src, st, n, flip, out, i0); break;
    case TL_F16: TL_CAT(FN(load), f16)((const uint16_t *)src, st, n, flip, out, i0); break;
    case TL_BF16: TL_CAT(FN(load), bf16)((const uint16_t *)src, st, n, flip, out, i0); break;
    case TL_F32: TL_CAT(FN(load), f32)((const uint32_t *)src, st, n, flip, out, i0); break;
    default: TL_CAT(FN(load), f64)((const uint64_t *)src, st, n, flip, out, i0); break;
    }
}

/* Values back from their keys (exact when the row had no NaN and no -0), for cnt items. */
#define TL_DEF_UNKEY(NAME, UT, UNKEYFN)                                                       \
    TL_DISPATCH static void TL_CAT(FN(unkey), NAME)(const ITEM *TL_RESTRICT a, int64_t cnt,    \
                                                    uint64_t flip, UT *TL_RESTRICT o,          \
                                                    int64_t st) {                             \
        if (st == 1) {                                                                        \
            for (int64_t i = 0; i < cnt; i++) o[i] = (UT)UNKEYFN(KEY_OF(a[i]) ^ flip);         \
        } else {                                                                              \
            for (int64_t i = 0; i < cnt; i++) o[i * st] = (UT)UNKEYFN(KEY_OF(a[i]) ^ flip);    \
        }                                                                                     \
    }

TL_DEF_UNKEY(u8, uint8_t, unkey_u8)
TL_DEF_UNKEY(i8, uint8_t, unkey_i8)
TL_DEF_UNKEY(i16, uint16_t, unkey_i16)
TL_DEF_UNKEY(i32, uint32_t, unkey_i32)
TL_DEF_UNKEY(i64, uint64_t, unkey_i64)
TL_DEF_UNKEY(f16, uint16_t, unkey_f16)
TL_DEF_UNKEY(f32, uint32_t, unkey_f32)
TL_DEF_UNKEY(f64, uint64_t, unkey_f64)

TL_DISPATCH static void FN(write_idx)(const ITEM *TL_RESTRICT a, int64_t cnt,
                                      int64_t *TL_RESTRICT o1, int64_t st) {
    if (st == 1) {
        for (int64_t i = 0; i < cnt; i++) o1[i] = IDX_OF(a[i]);
    } else {
        for (int64_t i = 0; i < cnt; i++) o1[i * st] = IDX_OF(a[i]);
    }
}

/* Write cnt sorted items: indices to o1 (if any) and their values to o0 (if any): rebuilt
   from the keys when `exact`, else read from the input through the index. */
static void FN(write)(const ITEM *a, int64_t cnt, int dtype, int exact, uint64_t flip,
                      const char *in, int64_t in_st, char *o0, int64_t o0_st, int64_t *o1,
                      int64_t o1_st) {
    if (o1) FN(write_idx)(a, cnt, o1, o1_st);
    if (!o0) return;
    if (exact) {
        switch (dtype) {
        case TL_BOOL:
        case TL_U8: TL_CAT(FN(unkey), u8)(a, cnt, flip, (uint8_t *)o0, o0_st); return;
        case TL_I8: TL_CAT(FN(unkey), i8)(a, cnt, flip, (uint8_t *)o0, o0_st); return;
        case TL_I16: TL_CAT(FN(unkey), i16)(a, cnt, flip, (uint16_t *)o0, o0_st); return;
        case TL_I32: TL_CAT(FN(unkey), i32)(a, cnt, flip, (uint32_t *)o0, o0_st); return;
        case TL_I64: TL_CAT(FN(unkey), i64)(a, cnt, flip, (uint64_t *)o0, o0_st); return;
        case TL_F16:
        case TL_BF16: TL_CAT(FN(unkey), f16)(a, cnt, flip, (uint16_t *)o0, o0_st); return;
        case TL_F32: TL_CAT(FN(unkey), f32)(a, cnt, flip, (uint32_t *)o0, o0_st); return;
        default: TL_CAT(FN(unkey), f64)(a, cnt, flip, (uint64_t *)o0, o0_st); return;
        }
    }
    switch (tl_itemsize(dtype)) {
    case 1:
        for (int64_t i = 0; i < cnt; i++) o0[i * o0_st] = in[IDX_OF(a[i]) * in_st];
        break;
    case 2: {
        const uint16_t *s = (const uint16_t *)in;
        uint16_t *d = (uint16_t *)o0;
        for (int64_t i = 0; i < cnt; i++) d[i * o0_st] = s[IDX_OF(a[i]) * in_st];
        break;
    }
    case 4: {
        const uint32_t *s = (const uint32_t *)in;
        uint32_t *d = (uint32_t *)o0;
        for (int64_t i = 0; i < cnt; i++) d[i * o0_st] = s[IDX_OF(a[i]) * in_st];
        break;
    }
    default: {
        const uint64_t *s = (const uint64_t *)in;
        uint64_t *d = (uint64_t *)o0;
        for (int64_t i = 0; i < cnt; i++) d[i * o0_st] = s[IDX_OF(a[i]) * in_st];
        break;
    }
    }
}

/* How many items have key k? */
TL_DISPATCH static int64_t FN(count_key)(const ITEM *TL_RESTRICT a, int64_t n, uint64_t k) {
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++) c += KEY_OF(a[i]) == k;
    return c;
}

/* Any key of blk[0..n) below tkey? */
TL_DISPATCH static int FN(any_below)(const ITEM *TL_RESTRICT blk, int64_t n, uint64_t tkey) {
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++) c += KEY_OF(blk[i]) < tkey;
    return c != 0;
}

/* The k smallest items among elements [b, e) of a row (1 <= k <= e - b) into buf[0..k),
   unsorted. The first k are sorted; every later element is tested against the largest kept
   one t (a vector test per group of 32 first: later elements have larger indices, so only
   keys matter). Small k: insertion into the sorted k. Larger k: candidates gather in buf
   (capacity cap > k) and a select trims them back to k when it fills. blk: TOPK_BLOCK items. */
static void FN(topk_scan)(int dtype, const char *src, int64_t st, int64_t b, int64_t e,
                          uint64_t flip, int64_t k, ITEM *buf, int64_t cap, ITEM *blk) {
    int64_t isz = tl_itemsize(dtype), m = k;
    int small = k <= TOPK_INSERT_MAX;
    ITEM t;
    FN(load)(dtype, src + b * st * isz, st, k, flip, buf, b);
    FN(introsort)(buf, k, FN(depth_limit)(k));
    t = buf[k - 1];
    for (int64_t s = b + k; s < e; s += TOPK_BLOCK) {
        int64_t len = e - s < TOPK_BLOCK ? e - s : TOPK_BLOCK;
        FN(load)(dtype, src + s * st * isz, st, len, flip, blk, s);
        for (int64_t g = 0; g < len; g += 32) {
            int64_t ge = g + 32 < len ? g + 32 : len;
            if (!FN(any_below)(blk + g, ge - g, KEY_OF(t))) continue;
            for (int64_t j = g; j < ge; j++) {
                ITEM x = blk[j];
                if (!LESS(x, t)) continue;
                if (small) {
                    int64_t p = k - 1;
                    while (p > 0 && LESS(x, buf[p - 1])) {
                        buf[p] = buf[p - 1];
                        p--;
                    }
                    buf[p] = x;
                    t = buf[k - 1];
                } else {
                    buf[m++] = x;
                    if (m == cap) {
                        FN(select)(buf, m, k - 1);
                        m = k;
                        t = buf[k - 1];
                    }
                }
            }
        }
    }
    if (m > k) FN(select)(buf, m, k - 1);
}

/* ---- one long row, all threads: the MSD scatter pass over fixed chunks of ROW_CHUNK items
   (each chunk counts its digits; bucket offsets are laid out bucket-major then chunk-minor, so
   the scatter stays stable), then the buckets sorted in parallel. The result is the unique
   stable order, whatever the thread count. */
typedef struct {
    ITEM *a, *b;
    int64_t n, nchunks, nb;
    int sh;                        /* the MSD digit is key bits [sh, sh + MSD_BITS) */
    int64_t *hist;                 /* [chunk][bucket] */
    int64_t *starts;               /* [bucket + 1] */
    int dtype;
    const char *src;
    int64_t src_st;
    uint64_t flip;
    int *special;                  /* per chunk */
    int exact, failed;
    char *o0;
    int64_t o0_st, *o1, o1_st;
} FN(par_t);

static void FN(par_range)(const FN(par_t) *c, int64_t chunk, int64_t *b, int64_t *e) {
    *b = chunk * ROW_CHUNK;
    *e = *b + ROW_CHUNK < c->n ? *b + ROW_CHUNK : c->n;
}

static void FN(par_load)(void *ctx, int64_t cb, int64_t ce) {
    FN(par_t) *c = (FN(par_t) *)ctx;
    for (int64_t ch = cb; ch < ce; ch++) {
        int64_t b, e;
        FN(par_range)(c, ch, &b, &e);
        const char *p = c->src + b * c->src_st * tl_itemsize(c->dtype);
        FN(load)(c->dtype, p, c->src_st, e - b, c->flip, c->a + b, b);
        c->special[ch] = c->o0 && has_special(c->dtype, p, c->src_st, e - b);
    }
}

static void FN(par_hist)(void *ctx, int64_t cb, int64_t ce) {
    FN(par_t) *c = (FN(par_t) *)ctx;
    uint64_t mask = (uint64_t)c->nb - 1;
    for (int64_t ch = cb; ch < ce; ch++) {
        int64_t b, e, *h = c->hist + ch * c->nb;
        FN(par_range)(c, ch, &b, &e);
        memset(h, 0, sizeof(int64_t) * (size_t)c->nb);
        for (int64_t i = b; i < e; i++) h[(KEY_OF(c->a[i]) >> c->sh) & mask]++;
    }
}

static void FN(par_scatter)(void *ctx, int64_t cb, int64_t ce) {
    FN(par_t) *c = (FN(par_t) *)ctx;
    uint64_t mask = (uint64_t)c->nb - 1;
    for (int64_t ch = cb; ch < ce; ch++) {
        int64_t b, e, *h = c->hist + ch * c->nb;
        FN(par_range)(c, ch, &b, &e);
        for (int64_t i = b; i < e; i++) {
            ITEM it = c->a[i];
            c->b[h[(KEY_OF(it) >> c->sh) & mask]++] = it;
        }
    }
}

static void FN(par_buckets)(void *ctx, int64_t vb, int64_t ve) {
    FN(par_t) *c = (FN(par_t) *)ctx;
    int64_t *hist = (int64_t *)malloc(sizeof(int64_t) * RSORT_HIST);
    if (!hist) {
        __atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    FN(msd_buckets)(c->a, c->b, c->starts + vb, ve - vb, c->sh, hist);
    free(hist);
}

static void FN(par_write)(void *ctx, int64_t cb, int64_t ce) {
    FN(par_t) *c = (FN(par_t) *)ctx;
    int64_t isz = tl_itemsize(c->dtype);
    for (int64_t ch = cb; ch < ce; ch++) {
        int64_t b, e;
        FN(par_range)(c, ch, &b, &e);
        FN(write)(c->b + b, e - b, c->dtype, c->exact, c->flip, c->src, c->src_st,
                  c->o0 ? c->o0 + b * c->o0_st * isz : NULL, c->o0_st,
                  c->o1 ? c->o1 + b * c->o1_st : NULL, c->o1_st);
    }
}

/* Stable sort of one long row into the outputs, with all threads. Returns 0 or -1. */
static int FN(sort_row_par)(int dtype, const char *src, int64_t src_st, int64_t n, uint64_t flip,
                            char *o0, int64_t o0_st, int64_t *o1, int64_t o1_st) {
    FN(par_t) c;
    int kbits = 8 * key_bytes(dtype);
    ITEM *base;
    memset(&c, 0, sizeof c);
    c.n = n;
    c.nchunks = (n + ROW_CHUNK - 1) / ROW_CHUNK;
    c.nb = (int64_t)1 << MSD_BITS;
    base = (ITEM *)malloc(sizeof(ITEM) * (size_t)n * 2);
    c.hist = (int64_t *)malloc(sizeof(int64_t) * (size_t)(c.nchunks * c.nb + c.nb + 1));
    c.special = (int *)malloc(sizeof(int) * (size_t)c.nchunks);
    if (!base || !c.hist || !c.special) {
        free(base);
        free(c.hist);
        free(c.special);
        return -1;
    }
    c.a = base;
    c.b = base + n;
    c.starts = c.hist + c.nchunks * c.nb;
    c.dtype = dtype;
    c.src = src;
    c.src_st = src_st;
    c.flip = flip;
    c.o0 = o0;
    c.o0_st = o0_st;
    c.o1 = o1;
    c.o1_st = o1_st;
    tl_parallel_for(0, c.nchunks, 1, FN(par_load), &c);
    for (int i = 0; i < c.nchunks; i++) c.exact |= c.special[i];
    c.exact = !c.exact;
    /* the most significant 11 bits that are not the same for every item */
    for (;;) {
        int64_t sum = 0, top = 0;
        if (kbits <= MSD_BITS) {
            /* a key this short: the LSD sort on one thread is quick */
            ITEM *r = FN(rsort)(c.a, c.b, n, kbits, c.hist);
            if (r != c.b) memcpy(c.b, r, sizeof(ITEM) * (size_t)n);
            break;
        }
        c.sh = kbits - MSD_BITS;
        tl_parallel_for(0, c.nchunks, 1, FN(par_hist), &c);
        for (int64_t v = 0; v < c.nb; v++) {
            int64_t tot = 0;
            for (int64_t ch = 0; ch < c.nchunks; ch++) tot += c.hist[ch * c.nb + v];
            if (tot > top) top = tot;
        }
        if (top == n) {
            kbits = c.sh;
            continue;
        }
        for (int64_t v = 0; v < c.nb; v++) {
            c.starts[v] = sum;
            for (int64_t ch = 0; ch < c.nchunks; ch++) {
                int64_t *h = c.hist + ch * c.nb + v, cnt = *h;
                *h = sum;
                sum += cnt;
            }
        }
        c.starts[c.nb] = n;
        tl_parallel_for(0, c.nchunks, 1, FN(par_scatter), &c);
        tl_parallel_for(0, c.nb, 64, FN(par_buckets), &c);
        break;
    }
    if (!c.failed) tl_parallel_for(0, c.nchunks, 1, FN(par_write), &c);
    free(base);
    free(c.hist);
    free(c.special);
    return c.failed ? -1 : 0;
}

/* ---- topk of one long row, all threads: each fixed segment (long enough next to k that
   the per-segment start-up stays small) keeps its own k smallest, then the candidates are
   merged (the k smallest are unique under the total order, so the result
   does not depend on the thread count). */
typedef struct {
    int dtype;
    const char *src;
    int64_t src_st, n, k, seg;
    uint64_t flip;
    ITEM *cand;                    /* [segment][k] */
    int64_t *count;                /* per segment */
    int failed;
} FN(ptopk_t);

static void FN(ptopk_seg)(void *ctx, int64_t sb, int64_t se) {
    FN(ptopk_t) *c = (FN(ptopk_t) *)ctx;
    int64_t cap = topk_cap(c->k);
    ITEM *buf = (ITEM *)malloc(sizeof(ITEM) * (size_t)(cap + TOPK_BLOCK));
    if (!buf) {
        __atomic_store_n(&c->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (int64_t sg = sb; sg < se; sg++) {
        int64_t b = sg * c->seg, e = b + c->seg < c->n ? b + c->seg : c->n;
        int64_t kk = c->k < e - b ? c->k : e - b;
        FN(topk_scan)(c->dtype, c->src, c->src_st, b, e, c->flip, kk, buf, cap, buf + cap);
        memcpy(c->cand + sg * c->k, buf, sizeof(ITEM) * (size_t)kk);
        c->count[sg] = kk;
    }
    free(buf);
}

static int FN(topk_row_par)(int dtype, const char *src, int64_t src_st, int64_t n, int64_t k,
                            uint64_t flip, char *o0, int64_t o0_st, int64_t *o1, int64_t o1_st) {
    FN(ptopk_t) c;
    int64_t seg = topk_segment(k), nseg = (n + seg - 1) / seg, m = 0, *hist;
    ITEM *s;
    c.dtype = dtype;
    c.src = src;
    c.src_st = src_st;
    c.n = n;
    c.k = k;
    c.seg = seg;
    c.flip = flip;
    c.failed = 0;
    c.cand = (ITEM *)malloc(sizeof(ITEM) * (size_t)(nseg * k * 2));
    c.count = (int64_t *)malloc(sizeof(int64_t) * (size_t)nseg);
    hist = (int64_t *)malloc(sizeof(int64_t) * (size_t)hist_entries(nseg * k));
    if (!c.cand || !c.count || !hist) {
        free(c.cand);
        free(c.count);
        free(hist);
        return -1;
    }
    tl_parallel_for(0, nseg, 1, FN(ptopk_seg), &c);
    if (!c.failed) {
        for (int64_t sg = 0; sg < nseg; sg++) {
            memmove(c.cand + m, c.cand + sg * k, sizeof(ITEM) * (size_t)c.count[sg]);
            m += c.count[sg];
        }
        FN(select)(c.cand, m, k - 1);
        s = FN(sort)(c.cand, c.cand + nseg * k, k, 8 * key_bytes(dtype), hist);
        FN(write)(s, k, dtype, 0, flip, src, src_st, o0, o0_st, o1, o1_st);
    }
    free(c.cand);
    free(c.count);
    free(hist);
    return c.failed ? -1 : 0;
}

/* ---- radix select over one long row, all threads: the first level (load, count the top 16
   key bits, keep the bucket holding the wanted rank) runs over fixed chunks; the survivors,
   concatenated in chunk order (so still in index order), finish on one thread. Also counts
   the NaN keys (for median/nanmedian). */
typedef struct {
    ITEM *a;
    int64_t n, nchunks, chunk;
    int dtype, shift;
    const char *src;
    int64_t src_st;
    uint64_t nan_key, bucket;
    int64_t *hist;                 /* [chunk][65536] */
    int64_t *nans, *kept;          /* per chunk */
} FN(psel_t);

static void FN(psel_count)(void *ctx, int64_t cb, int64_t ce) {
    FN(psel_t) *c = (FN(psel_t) *)ctx;
    for (int64_t ch = cb; ch < ce; ch++) {
        int64_t b = ch * c->chunk, e = b + c->chunk < c->n ? b + c->chunk : c->n;
        int64_t *h = c->hist + ch * 65536;
        FN(load)(c->dtype, c->src + b * c->src_st * tl_itemsize(c->dtype), c->src_st, e - b, 0,
                 c->a + b, b);
        c->nans[ch] = c->nan_key ? FN(count_key)(c->a + b, e - b, c->nan_key) : 0;
        memset(h, 0, sizeof(int64_t) * 65536);
        for (int64_t i = b; i < e; i++) h[(KEY_OF(c->a[i]) >> c->shift) & 65535]++;
    }
}

static void FN(psel_keep)(void *ctx, int64_t cb, int64_t ce) {
    FN(psel_t) *c = (FN(psel_t) *)ctx;
    for (int64_t ch = cb; ch < ce; ch++) {
        int64_t b = ch * c->chunk, e = b + c->chunk < c->n ? b + c->chunk : c->n, m = b;
        for (int64_t i = b; i < e; i++) {
            ITEM it = c->a[i];
            c->a[m] = it;
            m += ((KEY_OF(it) >> c->shift) & 65535) == c->bucket;
        }
        c->kept[ch] = m - b;
    }
}

/* The item of rank k of a long row (which: TL_SELECT_*; for median and nanmedian k is
   worked out here from the NaN count). Returns 0 or -1. */
static int FN(select_row_par)(int dtype, const char *src, int64_t src_st, int64_t n, int64_t k,
                              int which, ITEM *res) {
    FN(psel_t) c;
    int kbits = 8 * key_bytes(dtype);
    int64_t nans = 0, below = 0, m = 0, *hist, tot;
    memset(&c, 0, sizeof c);
    c.n = n;
    c.chunk = 4 * ROW_CHUNK;
    c.nchunks = (n + c.chunk - 1) / c.chunk;
    c.dtype = dtype;
    c.src = src;
    c.src_st = src_st;
    c.shift = kbits - 16;
    c.nan_key = which != TL_SELECT_KTH && is_float(dtype) ? key_mask(dtype) : 0;
    c.a = (ITEM *)malloc(sizeof(ITEM) * (size_t)n);
    c.hist = (int64_t *)malloc(sizeof(int64_t) * (size_t)(c.nchunks * 65536 + 2 * c.nchunks));
    if (!c.a || !c.hist) {
        free(c.a);
        free(c.hist);
        return -1;
    }
    c.nans = c.hist + c.nchunks * 65536;
    c.kept = c.nans + c.nchunks;
    tl_parallel_for(0, c.nchunks, 1, FN(psel_count), &c);
    for (int64_t ch = 0; ch < c.nchunks; ch++) nans += c.nans[ch];
    if (c.nan_key && nans > 0 && (which == TL_SELECT_MEDIAN || nans == n)) {
        int64_t p = 0;                                   /* the first NaN */
        while (KEY_OF(c.a[p]) != c.nan_key) p++;
        *res = c.a[p];
        free(c.a);
        free(c.hist);
        return 0;
    }
    if (which != TL_SELECT_KTH) k = (n - nans - 1) / 2;
    for (c.bucket = 0;; c.bucket++) {
        tot = 0;
        for (int64_t ch = 0; ch < c.nchunks; ch++) tot += c.hist[ch * 65536 + c.bucket];
        if (below + tot > k) break;
        below += tot;
    }
    k -= below;
    tl_parallel_for(0, c.nchunks, 1, FN(psel_keep), &c);
    for (int64_t ch = 0; ch < c.nchunks; ch++) {
        memmove(c.a + m, c.a + ch * c.chunk, sizeof(ITEM) * (size_t)c.kept[ch]);
        m += c.kept[ch];
    }
    hist = c.hist;                                       /* reused: 65536 entries suffice */
    *res = FN(rselect)(c.a, m, k, kbits, hist);
    free(c.a);
    free(c.hist);
    return 0;
}

#undef TL_DEF_LOAD
#undef TL_DEF_UNKEY
#undef FN
#undef TL_CAT
#undef TL_CAT2
