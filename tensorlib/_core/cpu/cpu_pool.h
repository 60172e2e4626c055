/* tensorlib's thread pool: small, fork-safe and deterministic. Between jobs a worker polls
   for the next one for 50 us, then sleeps on a condition variable (so an idle pool never
   competes with BLAS threads for long, and a loop of ops does not pay a wake-up per op).
   Workers block the asynchronous signals (SIGINT, SIGTERM, ...), which go to Python's
   threads.

   Determinism: tl_parallel_for splits [begin, end) into chunks of exactly `grain` items
   (the last may be shorter) whatever the thread count, and calls fn once per chunk. A
   reduction that keeps one partial per chunk and combines partials in chunk order therefore
   gives bit-identical results with 1 or N threads.

   Call it with the GIL released. Nested calls (from inside a chunk) run serially. */
#ifndef TL_CPU_POOL_H
#define TL_CPU_POOL_H
#include <stdint.h>

typedef void (*tl_chunk_fn)(void *ctx, int64_t begin, int64_t end);

/* Run fn over [begin, end) in chunks of `grain` (>= 1). Runs inline when there is a single
   chunk, a single thread, or when called from inside a parallel region. */
void tl_parallel_for(int64_t begin, int64_t end, int64_t grain, tl_chunk_fn fn, void *ctx);

int tl_get_num_threads(void);
void tl_set_num_threads(int n);        /* n >= 1; takes effect for the next job */
int tl_in_parallel_region(void);

#endif
