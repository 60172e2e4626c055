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

/* LSD radix sort on the key's `nbytes` low bytes, 8 bits per pass; passes whose digit is the
   same for every item are skipped. Stable, so ties keep index order. Returns a or b,
   whichever holds the result. */
static ITEM *FN(radix)(ITEM *a, ITEM *b, int64_t n, int nbytes) {
    int64_t hist[8][256];
    memset(hist, 0, sizeof(int64_t) * 256 * (size_t)nbytes);
    for (int64_t i = 0; i < n; i++) {
        uint64_t k = KEY_OF(a[i]);
        for (int d = 0; d < nbytes; d++) hist[d][(k >> (8 * d)) & 255]++;
    }
    for (int d = 0; d < nbytes; d++) {
        int64_t *h = hist[d], sum = 0;
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

/* Sort n items (b: scratch of n items). Returns a or b, whichever holds the result. */
static ITEM *FN(sort)(ITEM *a, ITEM *b, int64_t n, int nbytes) {
    if (n <= RADIX_MIN) {
        FN(introsort)(a, n, FN(depth_limit)(n));
        return a;
    }
    return FN(radix)(a, b, n, nbytes);
}

/* Order keys of n elements (stride st, in elements) with indices i0, i0+1, ... */
static void FN(load)(int dtype, const char *src, int64_t st, int64_t n, uint64_t flip, ITEM *out,
                     int64_t i0);

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

/* Write cnt sorted items: indices to o1 (if any) and the input values they name to o0. */
static void FN(write)(const ITEM *a, int64_t cnt, int isz, const char *in, int64_t in_st,
                      char *o0, int64_t o0_st, int64_t *o1, int64_t o1_st) {
    if (o1) {
        for (int64_t i = 0; i < cnt; i++) o1[i * o1_st] = IDX_OF(a[i]);
    }
    if (!o0) return;
    switch (isz) {
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

/* Any item of blk[0..n) less than t? (t comes from earlier positions, so only keys matter.) */
TL_DISPATCH static int FN(any_below)(const ITEM *TL_RESTRICT blk, int64_t n, uint64_t tkey) {
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++) c += KEY_OF(blk[i]) < tkey;
    return c != 0;
}

/* The k smallest items among elements [b, e) of a row (k >= 1), unsorted, into buf[0..k)
   (fewer when e - b < k); returns how many. buf holds cap > k items, blk TOPK_BLOCK items.
   Items are filtered a block at a time against the k-th smallest seen so far. */
static int64_t FN(topk_scan)(int dtype, const char *src, int64_t st, int64_t b, int64_t e,
                             uint64_t flip, int64_t k, ITEM *buf, int64_t cap, ITEM *blk) {
    int64_t m = 0, isz = tl_itemsize(dtype);
    int have = 0;
    ITEM t = MAKE(0, 0);
    for (int64_t s = b; s < e; s += TOPK_BLOCK) {
        int64_t len = e - s < TOPK_BLOCK ? e - s : TOPK_BLOCK;
        FN(load)(dtype, src + s * st * isz, st, len, flip, blk, s);
        if (have && !FN(any_below)(blk, len, KEY_OF(t))) continue;
        for (int64_t j = 0; j < len; j++) {
            if (have && !LESS(blk[j], t)) continue;
            buf[m++] = blk[j];
            if (m == cap) {
                FN(select)(buf, m, k - 1);
                m = k;
                t = buf[k - 1];
                have = 1;
            }
        }
    }
    if (m > k) {
        FN(select)(buf, m, k - 1);
        m = k;
    }
    return m;
}

#undef TL_DEF_LOAD
#undef FN
#undef TL_CAT
#undef TL_CAT2
