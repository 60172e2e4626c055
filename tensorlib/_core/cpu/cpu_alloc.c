/* The caching allocator. See cpu_alloc.h for the contract and the policy. */
#define _GNU_SOURCE
#include "cpu_alloc.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef struct tl_segment tl_segment;

/* Metadata of one block: kept here, never inside the block. */
typedef struct tl_block {
    char *ptr;
    int64_t size;                    /* bytes of the block (>= the rounded request) */
    int64_t requested;               /* exact request while allocated */
    int64_t rounded;                 /* request rounded to 512 while allocated */
    struct tl_block *prev, *next;    /* neighbours in address order within the segment; also
                                        `next` links the spare list of recycled metadata */
    tl_segment *seg;
    struct tl_block *left, *right;   /* free tree links (a treap keyed by (size, address)) */
    uint32_t prio;
    int32_t stream;
    uint8_t allocated, kind, pool;
    uint8_t quick;                   /* free, parked in its stream's quick list (not merged) */
} tl_block;

struct tl_segment {
    char *base;
    int64_t size;
    int32_t pool, stream;
    tl_block *first;                 /* the block at `base`; never merged away */
    tl_segment *prev, *next;         /* every segment, in creation order */
};

/* Quick lists (deferred coalescing, as in dlmalloc's fast bins): a freed small block of at
 * most TL_QUICK_MAX bytes is parked, unmerged, in a LIFO list of its exact size, and the next
 * request of that size takes it back without touching the free tree (no merge, no split).
 * Any other request of the stream first merges every parked block back ("flush"), so best fit
 * over merged free blocks holds for it; so do empty_cache, a retry under the limit, a
 * snapshot and the statistics. Bounded: TL_QUICK_DEPTH blocks per size, TL_QUICK_BYTES in all
 * per stream. */
#define TL_QUICK_MAX (64 << 10)
#define TL_QUICK_CLASSES (TL_QUICK_MAX / TL_ALLOC_ROUND + 1)
#define TL_QUICK_DEPTH 8
#define TL_QUICK_BYTES (1 << 20)

typedef struct {
    int32_t stream;
    tl_block *root[2];               /* free trees of the small and the large pool */
    tl_block *quick[TL_QUICK_CLASSES];   /* linked through `left` */
    uint8_t quick_n[TL_QUICK_CLASSES];
    int64_t quick_bytes;
} tl_stream_pools;

/* Live blocks by address: open addressing, linear probing, backward-shift deletion. */
typedef struct {
    uintptr_t *keys;                 /* 0 = empty */
    tl_block **vals;
    int bits;
    int64_t count;
} tl_ptrmap;

struct tl_allocator {
    pthread_mutex_t mu;              /* guards everything below */
    tl_alloc_backend backend;
    int caching;
    int64_t limit;                   /* on reserved bytes; < 0: none */
    tl_alloc_stats st;
    tl_stream_pools *pools;
    int npools, cap_pools;
    tl_segment *segments, *last_segment;
    tl_ptrmap live;
    tl_block *spare;                 /* recycled block metadata */
    uint64_t rng;                    /* treap priorities */
};

/* ---------------------------------------------------------------- fork safety */

#define TL_MAX_ALLOCATORS 64
static tl_allocator *registry[TL_MAX_ALLOCATORS];
static int nregistry = 0;
static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;

/* A fork while another thread holds an allocator's mutex would leave it locked forever in
 * the child: take every mutex around fork() and give them back on both sides. */
static void atfork_prepare(void) {
    pthread_mutex_lock(&registry_mu);
    for (int i = 0; i < nregistry; i++) pthread_mutex_lock(&registry[i]->mu);
}

static void atfork_parent(void) {
    for (int i = nregistry - 1; i >= 0; i--) pthread_mutex_unlock(&registry[i]->mu);
    pthread_mutex_unlock(&registry_mu);
}

__attribute__((constructor)) static void register_atfork(void) {
    pthread_atfork(atfork_prepare, atfork_parent, atfork_parent);
}

/* ---------------------------------------------------------------- back ends */

/* Large-pool segments (multiples of 2 MiB) are mapped 2 MiB-aligned and advised for
 * transparent huge pages: a big tensor is then faulted in 2 MiB at a time (its first touch is
 * about 2.5x faster) and costs fewer TLB entries. Small-pool segments keep 4 KiB pages, so
 * their resident size follows what is used. */
static void *mmap_reserve(void *ctx, int64_t size, int pool) {
    (void)ctx;
    const int64_t huge = TL_ALLOC_LARGE_ROUND;
    void *p;
    if (pool == TL_POOL_LARGE && size % huge == 0 && (uint64_t)size <= (uint64_t)SIZE_MAX - huge) {
        char *raw = mmap(NULL, (size_t)(size + huge), PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw != MAP_FAILED) {
            char *q = (char *)(((uintptr_t)raw + huge - 1) & ~(uintptr_t)(huge - 1));
            if (q > raw) munmap(raw, (size_t)(q - raw));                   /* trim the head */
            if (raw + huge > q) munmap(q + size, (size_t)(raw + huge - q)); /* and the tail */
#ifdef MADV_HUGEPAGE
            madvise(q, (size_t)size, MADV_HUGEPAGE);
#endif
            return q;
        }
    }
    p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void mmap_release(void *ctx, void *ptr, int64_t size) {
    (void)ctx;
    munmap(ptr, (size_t)size);
}

/* 64-byte alignment by hand: plain malloc is served from glibc's per-thread cache, while
 * posix_memalign splits and frees chunks on every call. The distance back to the malloc'd
 * pointer (16..64: malloc aligns to 16) is kept in the byte just before the block. */
static void *malloc_reserve(void *ctx, int64_t size, int pool) {
    (void)ctx;
    (void)pool;
    if ((uint64_t)size > (uint64_t)SIZE_MAX - 64) return NULL;
    char *raw = malloc((size_t)size + 64);
    if (raw == NULL) return NULL;
    char *p = (char *)(((uintptr_t)raw + 64) & ~(uintptr_t)63);
    ((uint8_t *)p)[-1] = (uint8_t)(p - raw);
    return p;
}

static void malloc_release(void *ctx, void *ptr, int64_t size) {
    (void)ctx;
    (void)size;
    free((char *)ptr - ((uint8_t *)ptr)[-1]);
}

/* The meta device's segments: address space only (PROT_NONE, no swap reserved). Nothing is
 * ever read or written there -- the meta back end runs no kernel -- and a stray access faults
 * at once instead of touching real memory. Its counters are therefore exactly those a CPU run
 * of the same program would show, at no cost in memory. */
static void *noaccess_reserve(void *ctx, int64_t size, int pool) {
    (void)ctx;
    (void)pool;
    void *p = mmap(NULL, (size_t)size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

const tl_alloc_backend tl_cpu_mmap_backend = {mmap_reserve, mmap_release, NULL};
const tl_alloc_backend tl_noaccess_backend = {noaccess_reserve, mmap_release, NULL};
const tl_alloc_backend tl_cpu_malloc_backend = {malloc_reserve, malloc_release, NULL};

/* ---------------------------------------------------------------- statistics */

/* Counters move on every request: kept to a few independent read-modify-writes that the
 * compiler can inline and interleave (each counter exists for "all" and for its pool). */
static inline void stat_up(tl_stat *t, int64_t d) {
    int64_t cur = t->current + d;
    t->current = cur;
    t->allocated += d;
    if (cur > t->peak) t->peak = cur;
}

static inline void stat_down(tl_stat *t, int64_t d) {
    t->current -= d;
    t->freed += d;
}

static inline void stat_add(tl_stat *s, int pool, int64_t delta) {
    if (delta > 0) {
        stat_up(&s[TL_POOL_ALL], delta);
        stat_up(&s[pool], delta);
    } else {
        stat_down(&s[TL_POOL_ALL], -delta);
        stat_down(&s[pool], -delta);
    }
}

/* The counters of one block handed out (sign +1) or given back (-1). */
static inline void count_block(tl_allocator *a, int pool, int kind, int64_t nbytes, int64_t rounded,
                               int64_t block_size, int sign) {
    stat_add(a->st.active, pool, sign);
    stat_add(a->st.active_bytes, pool, sign * block_size);
    if (kind == TL_KIND_TENSOR) {
        stat_add(a->st.allocation, pool, sign);
        stat_add(a->st.allocated_bytes, pool, sign * rounded);
        stat_add(a->st.requested_bytes, pool, sign * nbytes);
    } else {
        stat_add(a->st.arena_bytes, pool, sign * block_size);
    }
}

static void count_segment(tl_allocator *a, int pool, int64_t size, int sign) {
    stat_add(a->st.reserved_bytes, pool, sign * size);
    stat_add(a->st.segment, pool, sign);
    if (sign > 0)
        a->st.num_device_alloc++;
    else
        a->st.num_device_free++;
}

static int pool_of(int64_t rounded) {
    return rounded <= TL_ALLOC_SMALL_MAX ? TL_POOL_SMALL : TL_POOL_LARGE;
}

static int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

/* ---------------------------------------------------------------- block metadata */

static tl_block *block_new(tl_allocator *a) {
    static const tl_block zero;       /* a struct copy: plain stores (memset became rep stos) */
    tl_block *b = a->spare;
    if (b != NULL)
        a->spare = b->next;
    else if ((b = malloc(sizeof(tl_block))) == NULL)
        return NULL;
    *b = zero;
    return b;
}

static void block_put(tl_allocator *a, tl_block *b) {
    b->next = a->spare;
    a->spare = b;
}

/* ---------------------------------------------------------------- free trees (treaps) */

static int key_less(const tl_block *x, const tl_block *y) {
    return x->size < y->size || (x->size == y->size && (uintptr_t)x->ptr < (uintptr_t)y->ptr);
}

static tl_block *treap_merge(tl_block *x, tl_block *y) {       /* every key of x < y's */
    if (x == NULL) return y;
    if (y == NULL) return x;
    if (x->prio > y->prio) {
        x->right = treap_merge(x->right, y);
        return x;
    }
    y->left = treap_merge(x, y->left);
    return y;
}

static void treap_split(tl_block *t, const tl_block *key, tl_block **lo, tl_block **hi) {
    if (t == NULL) {
        *lo = *hi = NULL;
    } else if (key_less(t, key)) {
        treap_split(t->right, key, &t->right, hi);
        *lo = t;
    } else {
        treap_split(t->left, key, lo, &t->left);
        *hi = t;
    }
}

static tl_block *treap_erase(tl_block *t, const tl_block *x) {
    if (t == NULL) return NULL;
    if (t == x) return treap_merge(t->left, t->right);
    if (key_less(x, t))
        t->left = treap_erase(t->left, x);
    else
        t->right = treap_erase(t->right, x);
    return t;
}

/* the smallest free block of at least `size` bytes (lowest address among equals) */
static tl_block *treap_best_fit(tl_block *t, int64_t size) {
    tl_block *best = NULL;
    while (t != NULL) {
        if (t->size >= size) {
            best = t;
            t = t->left;
        } else {
            t = t->right;
        }
    }
    return best;
}

static uint32_t next_prio(tl_allocator *a) {         /* xorshift64* */
    a->rng ^= a->rng >> 12;
    a->rng ^= a->rng << 25;
    a->rng ^= a->rng >> 27;
    return (uint32_t)((a->rng * 0x2545F4914F6CDD1DULL) >> 32);
}

static int is_split(const tl_block *b) { return b->prev != NULL || b->next != NULL; }

static void free_insert(tl_allocator *a, tl_block **root, tl_block *b) {
    tl_block *lo, *hi;
    b->left = b->right = NULL;
    b->prio = next_prio(a);
    treap_split(*root, b, &lo, &hi);
    *root = treap_merge(treap_merge(lo, b), hi);
    if (is_split(b)) {
        stat_add(a->st.inactive_split, b->pool, 1);
        stat_add(a->st.inactive_split_bytes, b->pool, b->size);
    }
}

static void free_remove(tl_allocator *a, tl_block **root, tl_block *b) {
    *root = treap_erase(*root, b);
    b->left = b->right = NULL;
    if (is_split(b)) {
        stat_add(a->st.inactive_split, b->pool, -1);
        stat_add(a->st.inactive_split_bytes, b->pool, -b->size);
    }
}

/* ---------------------------------------------------------------- pointer map */

static uint64_t ptrmap_home(const tl_ptrmap *m, uintptr_t key) {
    return ((uint64_t)(key >> 6) * 0x9E3779B97F4A7C15ULL) >> (64 - m->bits);
}

static int ptrmap_grow(tl_ptrmap *m, int bits) {
    uint64_t cap = 1ULL << bits, old_cap = m->keys ? 1ULL << m->bits : 0;
    uintptr_t *keys = calloc(cap, sizeof(uintptr_t));
    tl_block **vals = calloc(cap, sizeof(tl_block *));
    if (keys == NULL || vals == NULL) {
        free(keys);
        free(vals);
        return 0;
    }
    uintptr_t *old_keys = m->keys;
    tl_block **old_vals = m->vals;
    m->keys = keys;
    m->vals = vals;
    m->bits = bits;
    for (uint64_t i = 0; i < old_cap; i++) {
        if (old_keys[i] == 0) continue;
        uint64_t j = ptrmap_home(m, old_keys[i]);
        while (keys[j] != 0) j = (j + 1) & (cap - 1);
        keys[j] = old_keys[i];
        vals[j] = old_vals[i];
    }
    free(old_keys);
    free(old_vals);
    return 1;
}

/* room for one more entry at a load factor of at most 1/2 */
static int ptrmap_reserve(tl_ptrmap *m) {
    if (m->keys != NULL && (m->count + 1) * 2 <= (int64_t)(1ULL << m->bits)) return 1;
    return ptrmap_grow(m, m->keys == NULL ? 10 : m->bits + 1);
}

static void ptrmap_put(tl_ptrmap *m, tl_block *b) {     /* after ptrmap_reserve */
    uint64_t mask = (1ULL << m->bits) - 1, i = ptrmap_home(m, (uintptr_t)b->ptr);
    while (m->keys[i] != 0) i = (i + 1) & mask;
    m->keys[i] = (uintptr_t)b->ptr;
    m->vals[i] = b;
    m->count++;
}

static tl_block *ptrmap_take(tl_ptrmap *m, void *ptr) {
    if (m->keys == NULL || ptr == NULL) return NULL;
    uint64_t mask = (1ULL << m->bits) - 1, i = ptrmap_home(m, (uintptr_t)ptr);
    while (m->keys[i] != (uintptr_t)ptr) {
        if (m->keys[i] == 0) return NULL;
        i = (i + 1) & mask;
    }
    tl_block *b = m->vals[i];
    /* backward shift: move later entries of the run into the hole when their home allows */
    uint64_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (m->keys[j] == 0) break;
        uint64_t k = ptrmap_home(m, m->keys[j]);
        int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            i = j;
        }
    }
    m->keys[i] = 0;
    m->vals[i] = NULL;
    m->count--;
    return b;
}

/* ---------------------------------------------------------------- streams and segments */

static tl_stream_pools *pools_get(tl_allocator *a, int32_t stream, int create) {
    for (int i = 0; i < a->npools; i++)
        if (a->pools[i].stream == stream) return &a->pools[i];
    if (!create) return NULL;
    if (a->npools == a->cap_pools) {
        int cap = a->cap_pools ? 2 * a->cap_pools : 4;
        tl_stream_pools *p = realloc(a->pools, (size_t)cap * sizeof(*p));
        if (p == NULL) return NULL;
        a->pools = p;
        a->cap_pools = cap;
    }
    tl_stream_pools *p = &a->pools[a->npools++];
    memset(p, 0, sizeof(*p));
    p->stream = stream;
    return p;
}

static tl_block **root_of(tl_allocator *a, const tl_block *b) {
    return &pools_get(a, b->stream, 0)->root[b->pool - 1];   /* its pools exist */
}

/* A new segment of `size` bytes as one free block (not in any tree), or NULL with *why. */
static tl_block *new_segment(tl_allocator *a, int32_t stream, int pool, int64_t size, int *why) {
    if (a->limit >= 0 && a->st.reserved_bytes[TL_POOL_ALL].current > a->limit - size) {
        *why = TL_ALLOC_ERR_LIMIT;
        return NULL;
    }
    tl_segment *s = malloc(sizeof(tl_segment));
    tl_block *b = block_new(a);
    if (s == NULL || b == NULL) {
        free(s);
        if (b) block_put(a, b);
        *why = TL_ALLOC_ERR_META;
        return NULL;
    }
    char *base = a->backend.reserve(a->backend.ctx, size, pool);
    if (base == NULL) {
        free(s);
        block_put(a, b);
        *why = TL_ALLOC_ERR_SYSTEM;
        return NULL;
    }
    s->base = base;
    s->size = size;
    s->pool = pool;
    s->stream = stream;
    s->first = b;
    s->next = NULL;
    s->prev = a->last_segment;
    if (a->last_segment)
        a->last_segment->next = s;
    else
        a->segments = s;
    a->last_segment = s;
    b->ptr = base;
    b->size = size;
    b->seg = s;
    b->stream = stream;
    b->pool = (uint8_t)pool;
    count_segment(a, pool, size, +1);
    return b;
}

static void release_segment(tl_allocator *a, tl_segment *s) {
    a->backend.release(a->backend.ctx, s->base, s->size);
    count_segment(a, s->pool, s->size, -1);
    if (s->prev)
        s->prev->next = s->next;
    else
        a->segments = s->next;
    if (s->next)
        s->next->prev = s->prev;
    else
        a->last_segment = s->prev;
    block_put(a, s->first);
    free(s);
}

/* A free block goes back into its free tree, merged with its free neighbours (parked quick
 * blocks are not merged: they are merged when they are flushed). */
static void release_block(tl_allocator *a, tl_block *b) {
    tl_block **root = root_of(a, b);
    tl_block *p = b->prev, *n = b->next;
    if (p != NULL && !p->allocated && !p->quick) {   /* merge into the free block before */
        free_remove(a, root, p);
        p->size += b->size;
        p->next = n;
        if (n) n->prev = p;
        block_put(a, b);
        b = p;
    }
    if (n != NULL && !n->allocated && !n->quick) {   /* absorb the free block after */
        free_remove(a, root, n);
        b->size += n->size;
        b->next = n->next;
        if (n->next) n->next->prev = b;
        block_put(a, n);
    }
    free_insert(a, root, b);
}

static int quick_class(const tl_block *b) {
    return b->pool == TL_POOL_SMALL && b->size <= TL_QUICK_MAX ? (int)(b->size / TL_ALLOC_ROUND) : -1;
}

static void quick_park(tl_allocator *a, tl_stream_pools *sp, tl_block *b, int c) {
    b->quick = 1;
    b->left = sp->quick[c];
    sp->quick[c] = b;
    sp->quick_n[c]++;
    sp->quick_bytes += b->size;
    (void)a;         /* inactive_split counts merged free blocks: parked ones when flushed */
}

static tl_block *quick_take(tl_allocator *a, tl_stream_pools *sp, int c) {
    tl_block *b = sp->quick[c];
    sp->quick[c] = b->left;
    sp->quick_n[c]--;
    sp->quick_bytes -= b->size;
    b->quick = 0;
    b->left = NULL;
    (void)a;
    return b;
}

/* Merge every parked block of a stream (or of all streams) back into the free trees. */
static void quick_flush(tl_allocator *a, tl_stream_pools *sp) {
    if (sp->quick_bytes == 0) return;
    for (int c = 0; c < TL_QUICK_CLASSES; c++)
        while (sp->quick[c] != NULL) release_block(a, quick_take(a, sp, c));
}

static void quick_flush_all(tl_allocator *a) {
    for (int i = 0; i < a->npools; i++) quick_flush(a, &a->pools[i]);
}

/* Return every entirely free segment (all streams) to the system. */
static int64_t release_cached(tl_allocator *a) {
    int64_t released = 0;
    quick_flush_all(a);
    tl_segment *s = a->segments, *next;
    for (; s != NULL; s = next) {
        next = s->next;
        tl_block *b = s->first;
        if (b->allocated || b->next != NULL) continue;
        free_remove(a, root_of(a, b), b);
        released += s->size;
        release_segment(a, s);
    }
    return released;
}

/* A segment for a rounded request: the pool's usual size, else (the limit or the system
 * refused it) just the request rounded to a page. */
static tl_block *grow(tl_allocator *a, int32_t stream, int pool, int64_t rounded, int *why) {
    int64_t want = pool == TL_POOL_SMALL ? TL_ALLOC_SMALL_SEGMENT : round_up(rounded, TL_ALLOC_LARGE_ROUND);
    tl_block *b = new_segment(a, stream, pool, want, why);
    int64_t least = round_up(rounded, TL_ALLOC_PAGE);
    if (b == NULL && *why != TL_ALLOC_ERR_META && least < want)
        b = new_segment(a, stream, pool, least, why);
    return b;
}

/* ---------------------------------------------------------------- malloc / free */

static int malloc_cached(tl_allocator *a, int64_t nbytes, int64_t rounded, int32_t stream,
                         int32_t kind, void **out) {
    int pool = pool_of(rounded), why = TL_ALLOC_OK;
    tl_stream_pools *sp = pools_get(a, stream, 1);
    if (sp == NULL || !ptrmap_reserve(&a->live)) return TL_ALLOC_ERR_META;
    tl_block *b = NULL;
    if (pool == TL_POOL_SMALL && rounded <= TL_QUICK_MAX && sp->quick[rounded / TL_ALLOC_ROUND] != NULL) {
        b = quick_take(a, sp, (int)(rounded / TL_ALLOC_ROUND));   /* exact size: no split */
        goto serve;
    }
    quick_flush(a, sp);
    tl_block **root = &sp->root[pool - 1];
    b = treap_best_fit(*root, rounded);
    if (b != NULL) {
        free_remove(a, root, b);
    } else {
        b = grow(a, stream, pool, rounded, &why);
        if (b == NULL && why != TL_ALLOC_ERR_META && release_cached(a) > 0) {
            a->st.num_alloc_retries++;
            b = grow(a, stream, pool, rounded, &why);
        }
        if (b == NULL) {
            a->st.num_ooms++;
            return why;
        }
    }
    int64_t rest = b->size - rounded;
    if (rest >= (pool == TL_POOL_SMALL ? TL_ALLOC_ROUND : TL_ALLOC_LARGE_SPLIT_MIN)) {
        tl_block *r = block_new(a);
        if (r != NULL) {            /* without metadata memory, the whole block is handed out */
            r->ptr = b->ptr + rounded;
            r->size = rest;
            r->seg = b->seg;
            r->stream = b->stream;
            r->pool = b->pool;
            r->prev = b;
            r->next = b->next;
            if (b->next) b->next->prev = r;
            b->next = r;
            b->size = rounded;
            free_insert(a, root, r);
        }
    }
serve:
    b->allocated = 1;
    b->requested = nbytes;
    b->rounded = rounded;
    b->kind = (uint8_t)kind;
    ptrmap_put(&a->live, b);
    count_block(a, b->pool, kind, nbytes, rounded, b->size, +1);
    *out = b->ptr;
    return TL_ALLOC_OK;
}

static int free_cached(tl_allocator *a, void *ptr) {
    tl_block *b = ptrmap_take(&a->live, ptr);
    if (b == NULL) return -1;
    count_block(a, b->pool, b->kind, b->requested, b->rounded, b->size, -1);
    b->allocated = 0;
    b->requested = b->rounded = 0;
    int c = quick_class(b);
    if (c >= 0) {
        tl_stream_pools *sp = pools_get(a, b->stream, 0);
        if (sp->quick_n[c] < TL_QUICK_DEPTH && sp->quick_bytes + b->size <= TL_QUICK_BYTES) {
            quick_park(a, sp, b, c);
            return 0;
        }
    }
    release_block(a, b);
    return 0;
}

/* caching off: one back-end call per request; a "segment" is the rounded request itself */
static int malloc_direct(tl_allocator *a, int64_t nbytes, int64_t rounded, int32_t kind, void **out) {
    int pool = pool_of(rounded);
    if (a->limit >= 0 && a->st.reserved_bytes[TL_POOL_ALL].current > a->limit - rounded) {
        a->st.num_ooms++;
        return TL_ALLOC_ERR_LIMIT;
    }
    void *p = a->backend.reserve(a->backend.ctx, rounded, pool);
    if (p == NULL) {
        a->st.num_ooms++;
        return TL_ALLOC_ERR_SYSTEM;
    }
    count_segment(a, pool, rounded, +1);
    count_block(a, pool, kind, nbytes, rounded, rounded, +1);
    *out = p;
    return TL_ALLOC_OK;
}

static void free_direct(tl_allocator *a, void *ptr, int64_t rounded, int64_t nbytes, int32_t kind) {
    int pool = pool_of(rounded);
    a->backend.release(a->backend.ctx, ptr, rounded);
    count_block(a, pool, kind, nbytes, rounded, rounded, -1);
    count_segment(a, pool, rounded, -1);
}

int tl_alloc_malloc(tl_allocator *a, int64_t nbytes, int32_t stream, int32_t kind,
                    void **out, int64_t *rounded) {
    int rc;
    *out = NULL;
    if (nbytes < 0) return TL_ALLOC_ERR_INVALID;
    if (nbytes > TL_ALLOC_MAX_REQUEST) {      /* beyond any address space; no overflow below */
        pthread_mutex_lock(&a->mu);
        a->st.num_ooms++;
        pthread_mutex_unlock(&a->mu);
        return TL_ALLOC_ERR_SYSTEM;
    }
    int64_t r = nbytes == 0 ? TL_ALLOC_ROUND : round_up(nbytes, TL_ALLOC_ROUND);
    pthread_mutex_lock(&a->mu);
    if (a->caching)
        rc = malloc_cached(a, nbytes, r, stream, kind, out);
    else
        rc = malloc_direct(a, nbytes, r, kind, out);
    pthread_mutex_unlock(&a->mu);
    if (rc == TL_ALLOC_OK) *rounded = r;
    return rc;
}

int tl_alloc_free(tl_allocator *a, void *ptr, int64_t rounded, int64_t nbytes, int32_t kind) {
    int rc = 0;
    pthread_mutex_lock(&a->mu);
    if (a->caching)
        rc = free_cached(a, ptr);
    else
        free_direct(a, ptr, rounded, nbytes, kind);
    pthread_mutex_unlock(&a->mu);
    return rc;
}

void tl_alloc_note_external(tl_allocator *a, int64_t rounded, int64_t nbytes, int sign) {
    int pool = pool_of(rounded);
    pthread_mutex_lock(&a->mu);
    stat_add(a->st.allocated_bytes, pool, sign * rounded);
    stat_add(a->st.requested_bytes, pool, sign * nbytes);
    pthread_mutex_unlock(&a->mu);
}

/* ---------------------------------------------------------------- the rest of the API */

tl_allocator *tl_alloc_create(const tl_alloc_backend *backend, int caching) {
    tl_allocator *a = calloc(1, sizeof(tl_allocator));
    if (a == NULL) return NULL;
    pthread_mutex_init(&a->mu, NULL);
    a->backend = *backend;
    a->caching = caching;
    a->limit = -1;
    a->rng = 0x9E3779B97F4A7C15ULL ^ (uint64_t)(uintptr_t)a;
    pthread_mutex_lock(&registry_mu);
    if (nregistry < TL_MAX_ALLOCATORS) registry[nregistry++] = a;
    pthread_mutex_unlock(&registry_mu);
    return a;
}

int tl_alloc_caching(const tl_allocator *a) { return a->caching; }

int64_t tl_alloc_empty_cache(tl_allocator *a) {
    pthread_mutex_lock(&a->mu);
    int64_t released = a->caching ? release_cached(a) : 0;
    pthread_mutex_unlock(&a->mu);
    return released;
}

void tl_alloc_set_limit(tl_allocator *a, int64_t limit) {
    pthread_mutex_lock(&a->mu);
    a->limit = limit < 0 ? -1 : limit;
    if (a->caching && a->limit >= 0 && a->st.reserved_bytes[TL_POOL_ALL].current > a->limit)
        release_cached(a);
    pthread_mutex_unlock(&a->mu);
}

int64_t tl_alloc_get_limit(tl_allocator *a) {
    pthread_mutex_lock(&a->mu);
    int64_t limit = a->limit;
    pthread_mutex_unlock(&a->mu);
    return limit;
}

void tl_alloc_get_stats(tl_allocator *a, tl_alloc_stats *out) {
    pthread_mutex_lock(&a->mu);
    quick_flush_all(a);              /* inactive_split counts merged free blocks */
    *out = a->st;
    pthread_mutex_unlock(&a->mu);
}

static tl_stat *stat_arrays(tl_alloc_stats *s, int *n) {
    /* every tl_stat array of the struct, laid out contiguously before the scalar counters */
    *n = (int)(offsetof(tl_alloc_stats, num_alloc_retries) / sizeof(tl_stat));
    return (tl_stat *)s;
}

void tl_alloc_reset_peak(tl_allocator *a) {
    int n;
    pthread_mutex_lock(&a->mu);
    tl_stat *s = stat_arrays(&a->st, &n);
    for (int i = 0; i < n; i++) s[i].peak = s[i].current;
    pthread_mutex_unlock(&a->mu);
}

void tl_alloc_reset_accumulated(tl_allocator *a) {
    int n;
    pthread_mutex_lock(&a->mu);
    tl_stat *s = stat_arrays(&a->st, &n);
    for (int i = 0; i < n; i++) s[i].allocated = s[i].freed = 0;
    a->st.num_alloc_retries = a->st.num_ooms = 0;
    a->st.num_device_alloc = a->st.num_device_free = 0;
    pthread_mutex_unlock(&a->mu);
}

int64_t tl_alloc_snapshot(tl_allocator *a, tl_block_info *out, int64_t cap) {
    int64_t n = 0;
    pthread_mutex_lock(&a->mu);
    quick_flush_all(a);              /* show free neighbours merged */
    for (tl_segment *s = a->segments; s != NULL; s = s->next) {
        for (tl_block *b = s->first; b != NULL; b = b->next, n++) {
            if (n >= cap) continue;
            tl_block_info *o = &out[n];
            o->segment_address = (uintptr_t)s->base;
            o->segment_size = s->size;
            o->pool = s->pool;
            o->stream = s->stream;
            o->address = (uintptr_t)b->ptr;
            o->size = b->size;
            o->requested = b->requested;
            o->allocated = b->allocated;
            o->kind = b->kind;
        }
    }
    pthread_mutex_unlock(&a->mu);
    return n;
}

/* ---------------------------------------------------------------- test helper */

int tl_alloc_stress(tl_allocator *a, int64_t iters, int64_t max_bytes, uint64_t seed,
                    int32_t stream) {
    enum { SLOTS = 64 };
    void *ptr[SLOTS] = {0};
    int64_t size[SLOTS] = {0}, rounded[SLOTS] = {0};
    uint8_t mark[SLOTS] = {0};
    uint64_t x = seed | 1;
    int rc = 0;
    for (int64_t it = 0; it < iters && rc == 0; it++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int k = (int)(x % SLOTS);
        if (ptr[k] == NULL) {
            /* mostly small requests, sometimes large ones */
            int64_t n = 1 + (int64_t)((x >> 8) % (uint64_t)((x >> 40) % 8 == 0 ? max_bytes : 4096));
            if (tl_alloc_malloc(a, n, stream, TL_KIND_TENSOR, &ptr[k], &rounded[k]) != 0) {
                rc = -2;
                break;
            }
            size[k] = n;
            mark[k] = (uint8_t)(x >> 56);
            memset(ptr[k], mark[k], (size_t)n);
        } else {
            for (int64_t i = 0; i < size[k]; i++)
                if (((uint8_t *)ptr[k])[i] != mark[k]) rc = -1;
            tl_alloc_free(a, ptr[k], rounded[k], size[k], TL_KIND_TENSOR);
            ptr[k] = NULL;
        }
    }
    for (int k = 0; k < SLOTS; k++)
        if (ptr[k] != NULL) tl_alloc_free(a, ptr[k], rounded[k], size[k], TL_KIND_TENSOR);
    return rc;
}
