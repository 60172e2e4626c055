/* pthread pool with fixed chunking. See cpu_pool.h for the contract. */
#define _GNU_SOURCE
#include "cpu_pool.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define TL_MAX_THREADS 256

/* How long a worker keeps polling for the next job, and the caller for the workers' last
   chunks, before sleeping on a condition variable. A futex wake-up costs tens of
   microseconds on a virtual machine (bench/bench_pool.py measured 2-19 us lost per job of 40K
   to 256K elements); the next op of a loop usually comes sooner than this, and an idle pool
   stops burning the core after it. */
#define TL_SPIN_NS 50000

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Poll *word until it differs from `old` or TL_SPIN_NS pass; whether it changed. */
static int spin_while_equal(const uint64_t *word, uint64_t old) {
    int64_t deadline = 0;
    for (unsigned i = 0;; i++) {
        if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != old) return 1;
        cpu_relax();
        if ((i & 63) == 63) {
            int64_t t = now_ns();
            if (deadline == 0) deadline = t + TL_SPIN_NS;
            else if (t > deadline) return 0;
        }
    }
}

typedef struct {
    tl_chunk_fn fn;
    void *ctx;
    int64_t begin, end, grain;
    int64_t nchunks;
    int64_t next;        /* next chunk to claim (guarded by pool.mu) */
    uint64_t done;       /* chunks finished (written under pool.mu, polled by the caller) */
} job_t;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake;     /* workers wait here for a new job */
    pthread_cond_t finished; /* the caller waits here for the job to complete */
    pthread_mutex_t run_mu;  /* one job at a time (callers from several Python threads) */
    pthread_t threads[TL_MAX_THREADS];
    int nworkers;            /* started worker threads */
    int wanted;              /* desired total threads (workers + caller) */
    uint64_t generation;     /* bumped for every job (under mu; workers poll it) */
    job_t *job;
    int shutdown;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
          PTHREAD_MUTEX_INITIALIZER, {0}, 0, 0, 0, NULL, 0};

static __thread int in_region = 0;

int tl_in_parallel_region(void) { return in_region; }

static int default_threads(void) {
    const char *env = getenv("TENSORLIB_NUM_THREADS");
    long n = 0;
    if (!env) env = getenv("OMP_NUM_THREADS");
    if (env) n = strtol(env, NULL, 10);
    if (n <= 0) n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n <= 0) n = 1;
    if (n > TL_MAX_THREADS) n = TL_MAX_THREADS;
    return (int)n;
}

int tl_get_num_threads(void) {
    if (pool.wanted == 0) pool.wanted = default_threads();
    return pool.wanted;
}

void tl_set_num_threads(int n) {
    if (n < 1) n = 1;
    if (n > TL_MAX_THREADS) n = TL_MAX_THREADS;
    __atomic_store_n(&pool.wanted, n, __ATOMIC_RELAXED);   /* workers read it as they go */
}

/* Claim and run chunks of the current job until none are left. Called with pool.mu held;
   returns with it held. */
static void run_chunks(job_t *job) {
    while (job->next < job->nchunks) {
        int64_t c = job->next++;
        int64_t b = job->begin + c * job->grain;
        int64_t e = b + job->grain < job->end ? b + job->grain : job->end;
        pthread_mutex_unlock(&pool.mu);
        in_region = 1;
        job->fn(job->ctx, b, e);
        in_region = 0;
        pthread_mutex_lock(&pool.mu);
        /* release: the chunk's writes are visible to a caller that sees the count */
        __atomic_store_n(&job->done, job->done + 1, __ATOMIC_RELEASE);
        if ((int64_t)job->done == job->nchunks) pthread_cond_broadcast(&pool.finished);
    }
}

/* A worker waits for a generation it has not seen: polling first (TL_SPIN_NS), then
   asleep. A job it finds already finished (pool.job reset) is skipped, and so is every job
   while the thread count is set below its number (it sleeps without polling then). */
static void *worker_main(void *arg) {
    const int id = (int)(intptr_t)arg;     /* 1 .. nworkers; the caller is thread 0 */
    uint64_t seen = 0;
    pthread_mutex_lock(&pool.mu);
    for (;;) {
        if (!pool.shutdown && pool.generation == seen) {
            if (id < __atomic_load_n(&pool.wanted, __ATOMIC_RELAXED)) {
                pthread_mutex_unlock(&pool.mu);
                spin_while_equal(&pool.generation, seen);
                pthread_mutex_lock(&pool.mu);
            }
            while (!pool.shutdown && pool.generation == seen)
                pthread_cond_wait(&pool.wake, &pool.mu);
        }
        if (pool.shutdown) break;
        seen = pool.generation;
        if (pool.job != NULL && id < __atomic_load_n(&pool.wanted, __ATOMIC_RELAXED))
            run_chunks(pool.job);
    }
    pthread_mutex_unlock(&pool.mu);
    return NULL;
}

/* Start workers up to wanted - 1 (the caller is the last thread). Called with pool.mu held.
   The workers block the asynchronous signals (they inherit the creating thread's mask), so
   Ctrl-C and the like reach a Python thread and interrupt its blocking call at once; the
   synchronous ones (SIGSEGV, SIGFPE, ...) stay deliverable for the sanitizers' reports. */
static void ensure_workers(int wanted) {
    static const int async_signals[] = {SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGALRM, SIGUSR1,
                                        SIGUSR2, SIGCHLD, SIGWINCH};
    sigset_t block, old;
    if (pool.nworkers >= wanted - 1) return;
    sigemptyset(&block);
    for (size_t i = 0; i < sizeof async_signals / sizeof async_signals[0]; i++)
        sigaddset(&block, async_signals[i]);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    while (pool.nworkers < wanted - 1 && pool.nworkers < TL_MAX_THREADS) {
        if (pthread_create(&pool.threads[pool.nworkers], NULL, worker_main,
                           (void *)(intptr_t)(pool.nworkers + 1)) != 0)
            break;
        pool.nworkers++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void tl_parallel_for(int64_t begin, int64_t end, int64_t grain, tl_chunk_fn fn, void *ctx) {
    job_t job;
    int64_t c, nchunks;
    if (end <= begin) return;
    if (grain < 1) grain = 1;
    nchunks = (end - begin + grain - 1) / grain;
    if (nchunks == 1 || in_region || tl_get_num_threads() == 1) {
        /* serial: the same chunks, in order */
        int outer = in_region;
        in_region = 1;
        for (c = 0; c < nchunks; c++) {
            int64_t b = begin + c * grain;
            fn(ctx, b, b + grain < end ? b + grain : end);
        }
        in_region = outer;
        return;
    }
    job.fn = fn;
    job.ctx = ctx;
    job.begin = begin;
    job.end = end;
    job.grain = grain;
    job.nchunks = nchunks;
    job.next = 0;
    job.done = 0;
    pthread_mutex_lock(&pool.run_mu);
    pthread_mutex_lock(&pool.mu);
    ensure_workers(tl_get_num_threads() < nchunks ? tl_get_num_threads() : (int)nchunks);
    pool.job = &job;
    __atomic_store_n(&pool.generation, pool.generation + 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&pool.wake);      /* no system call when no worker sleeps */
    run_chunks(&job);
    if ((int64_t)job.done < job.nchunks) {
        /* the workers' last chunks: poll a while before sleeping */
        uint64_t d = job.done;
        pthread_mutex_unlock(&pool.mu);
        while ((int64_t)d < job.nchunks && spin_while_equal(&job.done, d))
            d = __atomic_load_n(&job.done, __ATOMIC_ACQUIRE);
        pthread_mutex_lock(&pool.mu);
        while ((int64_t)job.done < job.nchunks) pthread_cond_wait(&pool.finished, &pool.mu);
    }
    pool.job = NULL;
    pthread_mutex_unlock(&pool.mu);
    pthread_mutex_unlock(&pool.run_mu);
}

/* fork(): the child has none of the parent's threads. Hold the locks across fork so the
   child never inherits them mid-update, then forget the workers in the child; they are
   started again on its first parallel job (data-loader workers fork). */
static void atfork_prepare(void) {
    pthread_mutex_lock(&pool.run_mu);
    pthread_mutex_lock(&pool.mu);
}
static void atfork_parent(void) {
    pthread_mutex_unlock(&pool.mu);
    pthread_mutex_unlock(&pool.run_mu);
}
static void atfork_child(void) {
    pthread_mutex_init(&pool.mu, NULL);
    pthread_mutex_init(&pool.run_mu, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.finished, NULL);
    pool.nworkers = 0;
    pool.job = NULL;
    pool.generation = 0;
    in_region = 0;
}

__attribute__((constructor)) static void register_atfork(void) {
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}
