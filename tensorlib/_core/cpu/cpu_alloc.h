/* The caching allocator of one device: plain C, thread-safe (its own mutex, never the GIL).
 *
 * Shape (the GPU layer reuses it with another back end):
 *   - Memory is obtained from the system in SEGMENTS through a back end (mmap on the CPU).
 *     A segment is carved into BLOCKS; block metadata lives in separate structs, never inside
 *     the blocks (device memory cannot hold it, and a buffer overrun must not corrupt it).
 *   - Every block carries a stream; free blocks sit in per-(stream, pool) trees ordered by
 *     (size, address): best fit is a lower-bound search, O(log n) expected (a treap).
 *   - Requests are rounded up to 512 bytes. Rounded requests of at most 1 MiB come from the
 *     SMALL pool (2 MiB segments, split down to 512 bytes); larger ones from the LARGE pool
 *     (segments of the request rounded up to 2 MiB; a block is split only when at least 1 MiB
 *     would remain). Freed blocks merge with free neighbours of the same segment.
 *   - Deferred coalescing for the commonest case: a freed small block of at most 64 KiB is
 *     parked in a per-stream list of its exact size and handed back to the next request of
 *     that size without touching the tree (a few per size, 1 MiB per stream at most); any
 *     other request of the stream, empty_cache(), a retry, a snapshot or reading the
 *     statistics first merges the parked blocks back, so best fit and coalescing hold there.
 *   - tl_alloc_empty_cache() returns every entirely free segment to the system.
 *   - An optional limit applies to reserved bytes (the sum of segment sizes). A request that
 *     needs a new segment beyond it first releases the cached segments and retries, then
 *     tries a segment of just the request's size, and only then fails.
 *   - caching == 0 (TENSORLIB_CACHING=0): every request goes straight to the back end and
 *     every free straight back (for debugging with ASAN/valgrind, and as a baseline).
 *
 * Counters follow PyTorch's memory_stats() names; see tl_alloc_stats. */
#ifndef TL_CPU_ALLOC_H
#define TL_CPU_ALLOC_H

#include <stdint.h>

#define TL_ALLOC_ROUND 512                        /* requests are rounded up to this */
#define TL_ALLOC_SMALL_MAX (1LL << 20)            /* largest rounded request of the small pool */
#define TL_ALLOC_SMALL_SEGMENT (2LL << 20)        /* size of a small-pool segment */
#define TL_ALLOC_LARGE_ROUND (2LL << 20)          /* large segments: request rounded to this */
#define TL_ALLOC_LARGE_SPLIT_MIN (1LL << 20)      /* split a large block only if >= this remains */
#define TL_ALLOC_PAGE 4096                        /* fallback segments are rounded to this */
#define TL_ALLOC_MAX_REQUEST (1LL << 62)          /* anything above cannot be served */

/* pools of the statistics arrays: [TL_POOL_ALL] sums the other two */
enum { TL_POOL_ALL = 0, TL_POOL_SMALL = 1, TL_POOL_LARGE = 2, TL_NPOOLS = 3 };

/* what a block is used for: tensor storages are "allocations"; a planner's arena reserves
 * memory (active, reserved) but its bytes count as allocated only slice by slice */
enum { TL_KIND_TENSOR = 0, TL_KIND_ARENA = 1 };

/* results of tl_alloc_malloc */
enum {
    TL_ALLOC_OK = 0,
    TL_ALLOC_ERR_SYSTEM = 1,     /* the back end refused (even after releasing the cache) */
    TL_ALLOC_ERR_LIMIT = 2,      /* the memory limit refused (even after releasing the cache) */
    TL_ALLOC_ERR_INVALID = 3,    /* negative size */
    TL_ALLOC_ERR_META = 4,       /* no memory for the allocator's own bookkeeping */
};

typedef struct { int64_t current, peak, allocated, freed; } tl_stat;

typedef struct {
    tl_stat allocation[TL_NPOOLS];           /* tensor requests served (count) */
    tl_stat allocated_bytes[TL_NPOOLS];      /* their rounded sizes, plus arena slices */
    tl_stat requested_bytes[TL_NPOOLS];      /* their exact sizes, plus arena slices */
    tl_stat active[TL_NPOOLS];               /* blocks in use (count), arenas included */
    tl_stat active_bytes[TL_NPOOLS];         /* their sizes (a block may exceed its request) */
    tl_stat reserved_bytes[TL_NPOOLS];       /* sizes of the segments held from the system */
    tl_stat segment[TL_NPOOLS];              /* number of those segments */
    tl_stat inactive_split[TL_NPOOLS];       /* free blocks inside partly used segments */
    tl_stat inactive_split_bytes[TL_NPOOLS];
    tl_stat arena_bytes[TL_NPOOLS];          /* blocks handed out as planner arenas */
    int64_t num_alloc_retries;               /* requests that released the cache and retried */
    int64_t num_ooms;                        /* requests that failed */
    int64_t num_device_alloc;                /* segments obtained from the back end */
    int64_t num_device_free;                 /* segments returned to it */
} tl_alloc_stats;

/* Where segments come from. reserve() returns NULL on failure; memory must be aligned to at
 * least 512 bytes (mmap: a page). `pool` (TL_POOL_SMALL/LARGE) is a hint: the CPU back end
 * maps large segments 2 MiB-aligned with transparent huge pages. */
typedef struct {
    void *(*reserve)(void *ctx, int64_t size, int pool);
    void (*release)(void *ctx, void *ptr, int64_t size);
    void *ctx;
} tl_alloc_backend;

/* one block of a snapshot */
typedef struct {
    uintptr_t segment_address;
    int64_t segment_size;
    int32_t pool;                /* TL_POOL_SMALL or TL_POOL_LARGE */
    int32_t stream;
    uintptr_t address;
    int64_t size;
    int64_t requested;           /* exact request size (0 when free) */
    int32_t allocated;
    int32_t kind;
} tl_block_info;

typedef struct tl_allocator tl_allocator;

/* The CPU back end: mmap/munmap (caching; huge pages for large segments) or 64-byte-aligned
 * malloc/free (no caching). */
extern const tl_alloc_backend tl_cpu_mmap_backend;
extern const tl_alloc_backend tl_cpu_malloc_backend;
/* Address space with no memory behind it (PROT_NONE): the meta device's segments. */
extern const tl_alloc_backend tl_noaccess_backend;

/* NULL when out of memory. caching == 0: straight through to the back end. */
tl_allocator *tl_alloc_create(const tl_alloc_backend *backend, int caching);
int tl_alloc_caching(const tl_allocator *a);

/* Serve nbytes (>= 0; 0 gets a 512-byte block) on a stream. On success *out is the block,
 * 64-byte aligned, and *rounded the request rounded up to 512 (what allocated_bytes counts). */
int tl_alloc_malloc(tl_allocator *a, int64_t nbytes, int32_t stream, int32_t kind,
                    void **out, int64_t *rounded);
/* Give a block back. rounded/nbytes/kind must be those of the request (the caching path
 * checks them against its own records). Returns 0, or -1 for a pointer it never handed out. */
int tl_alloc_free(tl_allocator *a, void *ptr, int64_t rounded, int64_t nbytes, int32_t kind);
/* Bytes served from elsewhere (a planner's arena) that count as allocated: sign = +1 / -1. */
void tl_alloc_note_external(tl_allocator *a, int64_t rounded, int64_t nbytes, int sign);
/* Return every entirely free segment to the system; the number of bytes released. */
int64_t tl_alloc_empty_cache(tl_allocator *a);
/* limit < 0: none. Lowering the limit below the reserved bytes releases the cache. */
void tl_alloc_set_limit(tl_allocator *a, int64_t limit);
int64_t tl_alloc_get_limit(tl_allocator *a);
void tl_alloc_get_stats(tl_allocator *a, tl_alloc_stats *out);
void tl_alloc_reset_peak(tl_allocator *a);
void tl_alloc_reset_accumulated(tl_allocator *a);
/* Fill up to cap entries (segments in creation order, blocks by address); returns the number
 * of blocks there are (call again with a larger array when it exceeds cap). */
int64_t tl_alloc_snapshot(tl_allocator *a, tl_block_info *out, int64_t cap);

/* Test helper: `iters` random allocations and frees of up to `max_bytes` each on `stream`,
 * each block filled with a pattern that is checked before it is freed. Runs without the GIL
 * (call it from several threads at once). Returns 0, or -1 when a pattern was overwritten
 * (two live blocks overlapped), -2 on an allocation failure. */
int tl_alloc_stress(tl_allocator *a, int64_t iters, int64_t max_bytes, uint64_t seed,
                    int32_t stream);

#endif
