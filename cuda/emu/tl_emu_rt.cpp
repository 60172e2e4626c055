// tl_emu_rt.cpp: the emulator's runtime: blocks, fibers, barriers, warp exchange, faults,
// device memory. Built once into libtl_emu_rt.so and loaded RTLD_GLOBAL before any kernel
// module, whose calls to tl_emu_* resolve to it.
//
// A launch runs on the calling OS thread (a stream's worker), block after block. Inside a
// block the threads first run back to back as plain calls; the first barrier or warp
// operation turns the block into fibers: the thread that reached it keeps the worker's stack,
// every thread not yet started gets a fiber, and a waiting thread yields to the next live
// thread in the schedule's order until its barrier is released (every live thread it waits
// for has arrived). A thread that returns drops out of the barriers it would have joined.
// Faults (a signal while a kernel runs, a divergent barrier, a deadlock, __trap) leave the
// launch with siglongjmp and come back as an error code plus a message.
#include "tl_emu.h"

#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

namespace tl_emu {
thread_local ThreadState tls;
}
using tl_emu::tls;

namespace {

// ---- context switch -------------------------------------------------------------------------
// x86-64: a hand-written switch (callee-saved registers, MXCSR and the x87 control word on
// the old stack, then the stack pointer swapped): no system call, unlike swapcontext, which
// saves the signal mask on every switch. Elsewhere, or with -DTL_EMU_UCONTEXT: ucontext.
#if defined(__x86_64__) && !defined(TL_EMU_UCONTEXT)
#define TL_EMU_ASM_SWITCH 1
struct Context {
    void* sp;
};
extern "C" void tl_emu_switch(void** save_sp, void* next_sp);
asm(R"(
    .text
    .globl tl_emu_switch
    .hidden tl_emu_switch
    .type tl_emu_switch, @function
tl_emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size tl_emu_switch, .-tl_emu_switch
)");
// A new fiber's stack holds what tl_emu_switch pops: the control words, six registers and
// the entry as return address, above which a zero stands for the entry's own return address
// (the entry never returns), so the entry starts with the stack aligned as after a call.
void make_context(Context& c, char* lo, size_t size, void (*entry)()) {
    auto top = reinterpret_cast<uintptr_t>(lo + size) & ~uintptr_t(15);
    auto* w = reinterpret_cast<uint64_t*>(top);
    *--w = 0;
    *--w = reinterpret_cast<uint64_t>(entry);
    for (int k = 0; k < 6; ++k) *--w = 0;
    --w;
    uint32_t mxcsr;
    uint16_t fpucw;
    asm volatile("stmxcsr %0" : "=m"(mxcsr));
    asm volatile("fnstcw %0" : "=m"(fpucw));
    std::memcpy(reinterpret_cast<char*>(w), &mxcsr, 4);
    std::memcpy(reinterpret_cast<char*>(w) + 4, &fpucw, 2);
    c.sp = w;
}
inline void swap_context(Context& save, Context& next) { tl_emu_switch(&save.sp, next.sp); }
[[noreturn]] inline void jump_context(Context& next) {
    void* discard;
    tl_emu_switch(&discard, next.sp);
    __builtin_unreachable();
}
#else
struct Context {
    ucontext_t uc;
};
void make_context(Context& c, char* lo, size_t size, void (*entry)()) {
    getcontext(&c.uc);
    c.uc.uc_stack.ss_sp = lo;
    c.uc.uc_stack.ss_size = size;
    c.uc.uc_link = nullptr;
    makecontext(&c.uc, entry, 0);
}
inline void swap_context(Context& save, Context& next) { swapcontext(&save.uc, &next.uc); }
[[noreturn]] inline void jump_context(Context& next) {
    setcontext(&next.uc);
    __builtin_unreachable();
}
#endif

enum { NEW = 0, RUNNING = 1, DONE = 2 };

struct Thread {
    Context ctx;
    int state;
    unsigned barriers;  // __syncthreads passed so far
    char* stack;        // lowest byte of its fiber stack (guard page below)
};

struct Warp {
    unsigned live;     // lanes that exist and have not returned
    unsigned arrived;  // lanes waiting at the current warp barrier
    unsigned wait;     // the lanes the current warp barrier waits for
    unsigned long long gen;
    unsigned long long slot[2][32];  // double-buffered by gen parity: one barrier a shuffle
};

struct Block {
    unsigned n = 0, bx = 1, by = 1;
    std::vector<unsigned> order, pos;  // schedule: order[k] is a thread id, pos its inverse
    std::vector<Thread> t;
    std::vector<Warp> w;
    bool fibers = false;
    unsigned cur = 0, live = 0, idle = 0;
    unsigned arrived = 0, site = 0, site_index = 0;
    unsigned long long gen = 0;
    int count[2] = {0, 0};
    Context home;
    void (*thunk)(void**) = nullptr;
    void** params = nullptr;
};

thread_local Block* g_block = nullptr;
thread_local sigjmp_buf* g_jmp = nullptr;
thread_local volatile sig_atomic_t g_in_kernel = 0;
thread_local const char* g_kernel = "";
thread_local char g_error[2048];
thread_local void* g_fault_addr = nullptr;
thread_local int g_fault_write = -1;
thread_local std::vector<char*> g_stacks;
thread_local char* g_dyn = nullptr;  // dynamic shared memory mapping
thread_local size_t g_dyn_len = 0;
thread_local void* g_dyn_ptr = nullptr;   // the current launch's dynamic shared memory
thread_local bool g_altstack = false;

size_t page_size() {
    static size_t p = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return p;
}
size_t stack_size() {
    static size_t s = [] {
        const char* e = getenv("TENSORLIB_CUDA_EMU_STACK");
        size_t v = e ? strtoull(e, nullptr, 10) : 0;
        if (v < 16384) v = 65536;
        return (v + page_size() - 1) / page_size() * page_size();
    }();
    return s;
}

void set_current(Block& b, unsigned id) {
    b.cur = id;
    tls.linear = id;
    tls.tid.x = id % b.bx;
    tls.tid.y = (id / b.bx) % b.by;
    tls.tid.z = id / (b.bx * b.by);
}

[[noreturn]] void fail(const char* fmt, ...) {
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(g_error, sizeof g_error, "block (%u,%u,%u), thread (%u,%u,%u): %s",
             tls.bid.x, tls.bid.y, tls.bid.z, tls.tid.x, tls.tid.y,
             tls.tid.z, msg);
    g_in_kernel = 0;
    siglongjmp(*g_jmp, 1);
}

void fiber_entry();

// Every thread not started yet gets a fiber; the caller stays on the worker's stack.
void enter_fiber_mode(Block& b) {
    b.fibers = true;
    size_t ss = stack_size(), pg = page_size();
    size_t k = 0;
    for (unsigned id = 0; id < b.n; ++id) {
        Thread& th = b.t[id];
        if (th.state != NEW) continue;
        if (k == g_stacks.size()) {
            void* m = mmap(nullptr, ss + pg, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (m == MAP_FAILED) fail("cannot map a fiber stack");
            mprotect(m, pg, PROT_NONE);  // guard page: an overflow faults, never corrupts
            g_stacks.push_back(static_cast<char*>(m));
        }
        th.stack = g_stacks[k++];
        make_context(th.ctx, th.stack + pg, ss, fiber_entry);
    }
}

// the next live thread after `from` in schedule order (from itself when it is the only one)
unsigned next_live(Block& b, unsigned from) {
    unsigned p = b.pos[from];
    for (unsigned k = 1; k <= b.n; ++k) {
        unsigned id = b.order[(p + k) % b.n];
        if (b.t[id].state != DONE) return id;
    }
    return b.n;
}

void yield(Block& b) {
    unsigned me = b.cur, nx = next_live(b, me);
    if (nx == me || ++b.idle > 2 * b.live + 8)
        fail("deadlock: the live threads wait at barriers that can never be released "
             "(a __syncthreads or warp operation reached by only part of the block or warp)");
    set_current(b, nx);
    swap_context(b.t[me].ctx, b.t[nx].ctx);
}

void release_block(Block& b) {
    b.count[(b.gen + 1) & 1] = 0;
    b.arrived = 0;
    ++b.gen;
}

void maybe_release_warp(Warp& w) {
    unsigned need = w.wait & w.live;
    if (w.arrived && (w.arrived & need) == need) {
        w.arrived = 0;
        ++w.gen;
    }
}

// a thread returned from the kernel: it no longer holds back any barrier
void on_exit(Block& b, unsigned id) {
    b.t[id].state = DONE;
    --b.live;
    b.idle = 0;
    Warp& w = b.w[id / 32];
    w.live &= ~(1u << (id % 32));
    if (b.arrived && b.arrived == b.live) release_block(b);
    maybe_release_warp(w);
}

void fiber_entry() {
    Block& b = *g_block;
    b.t[b.cur].state = RUNNING;
    b.thunk(b.params);
    unsigned me = b.cur;
    on_exit(b, me);
    unsigned nx = next_live(b, me);
    if (nx < b.n) {
        set_current(b, nx);
        jump_context(b.t[nx].ctx);
    }
    jump_context(b.home);
}

Block& block_for_barrier() {
    Block& b = *g_block;
    if (!b.fibers) enter_fiber_mode(b);
    return b;
}

unsigned long long warp_exchange(unsigned mask, unsigned long long v, int* src_or_ballot) {
    Block& b = *g_block;
    unsigned id = b.cur, l = id % 32;
    Warp& w = b.w[id / 32];
    if (!(mask & (1u << l)))
        fail("warp operation called by lane %u, which its mask 0x%08x leaves out", l, mask);
    if (!w.arrived) w.wait = mask;
    unsigned long long g = w.gen;
    w.slot[g & 1][l] = v;
    w.arrived |= 1u << l;
    b.idle = 0;
    maybe_release_warp(w);
    if (w.gen == g) {
        if (!b.fibers) enter_fiber_mode(b);
        while (w.gen == g) yield(b);
    }
    if (src_or_ballot) {
        int s = *src_or_ballot;
        if (s < 0 || s > 31) s = static_cast<int>(l);
        return w.slot[g & 1][s];
    }
    unsigned bits = 0, lanes = w.wait;
    for (unsigned k = 0; k < 32; ++k)
        if ((lanes >> k & 1u) && w.slot[g & 1][k]) bits |= 1u << k;
    return bits;
}

// ---- signals: a fault inside a kernel becomes an error of the launch ----------------------
const int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
struct sigaction g_old[32];
std::mutex g_sig_mutex;

void on_signal(int sig, siginfo_t* si, void* uc) {
    if (g_in_kernel && g_jmp) {
        g_fault_addr = si->si_addr;
#if defined(__x86_64__) && defined(REG_ERR)
        if (sig == SIGSEGV)
            g_fault_write = (static_cast<ucontext_t*>(uc)->uc_mcontext.gregs[REG_ERR] & 2) ? 1 : 0;
#endif
        const char* what = sig == SIGFPE ? "arithmetic fault (integer division by zero?)"
                         : sig == SIGILL ? "illegal instruction"
                                         : "illegal memory access";
        Block* b = g_block;
        bool overflow = false;
        if (b && b->fibers && sig == SIGSEGV) {
            char* a = static_cast<char*>(si->si_addr);
            char* s = b->t[b->cur].stack;
            overflow = s && a >= s && a < s + page_size();
#if defined(__x86_64__) && defined(REG_RSP)
            // or the stack pointer itself went below the fiber's stack
            char* sp = reinterpret_cast<char*>(
                static_cast<ucontext_t*>(uc)->uc_mcontext.gregs[REG_RSP]);
            overflow = overflow || (s && sp < s + page_size() && sp + (1 << 30) > s);
#endif
        }
        char* a = static_cast<char*>(si->si_addr);
        if (!overflow && g_dyn && a >= g_dyn && a < g_dyn + g_dyn_len + page_size())
            what = "access past the end of the dynamic shared memory given at launch";
        if (overflow)
            snprintf(g_error, sizeof g_error,
                     "block (%u,%u,%u), thread (%u,%u,%u): fiber stack overflow (raise "
                     "TENSORLIB_CUDA_EMU_STACK, now %zu bytes)", tls.bid.x, tls.bid.y,
                     tls.bid.z, tls.tid.x, tls.tid.y, tls.tid.z,
                     stack_size());
        else
            snprintf(g_error, sizeof g_error,
                     "block (%u,%u,%u), thread (%u,%u,%u): %s%s at address %p", tls.bid.x,
                     tls.bid.y, tls.bid.z, tls.tid.x, tls.tid.y,
                     tls.tid.z, what,
                     g_fault_write == 1 ? " (write)" : g_fault_write == 0 ? " (read)" : "",
                     si->si_addr);
        g_in_kernel = 0;
        siglongjmp(*g_jmp, 2);
    }
    // not ours: hand it to whoever had it before
    struct sigaction& old = g_old[sig];
    if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction) {
        old.sa_sigaction(sig, si, uc);
    } else if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN && old.sa_handler) {
        old.sa_handler(sig);
    } else {
        sigaction(sig, &old, nullptr);  // the default action runs when the instruction retries
    }
}

void install_handlers() {
    std::lock_guard<std::mutex> lock(g_sig_mutex);
    for (int sig : kSignals) {
        struct sigaction cur;
        sigaction(sig, nullptr, &cur);
        if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_signal) continue;
        struct sigaction act;
        std::memset(&act, 0, sizeof act);
        act.sa_sigaction = on_signal;
        act.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
        sigemptyset(&act.sa_mask);
        g_old[sig] = cur;
        sigaction(sig, &act, nullptr);
    }
    if (!g_altstack) {  // a fiber stack overflow needs another stack to report on
        stack_t cur;
        sigaltstack(nullptr, &cur);
        if (cur.ss_flags & SS_DISABLE) {
            stack_t ss;
            ss.ss_size = 1 << 16;
            ss.ss_sp = malloc(ss.ss_size);
            ss.ss_flags = 0;
            sigaltstack(&ss, nullptr);
        }
        g_altstack = true;
    }
}

unsigned long long mix(unsigned long long x) {  // splitmix64
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void make_order(std::vector<unsigned>& o, unsigned n, int schedule, unsigned long long seed) {
    o.resize(n);
    for (unsigned k = 0; k < n; ++k) o[k] = schedule == 1 ? n - 1 - k : k;
    if (schedule == 2)
        for (unsigned k = n; k > 1; --k) std::swap(o[k - 1], o[mix(seed + k) % k]);
}

void run_block(Block& b) {
    b.fibers = false;
    b.live = b.n;
    b.idle = b.arrived = 0;
    b.gen = 0;
    b.count[0] = b.count[1] = 0;
    for (unsigned id = 0; id < b.n; ++id) {
        b.t[id].state = NEW;
        b.t[id].barriers = 0;
        b.t[id].stack = nullptr;
    }
    for (size_t k = 0; k < b.w.size(); ++k) {
        unsigned lanes = b.n - 32 * k >= 32 ? 32 : b.n - 32 * k;
        b.w[k].live = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
        b.w[k].arrived = b.w[k].wait = 0;
        b.w[k].gen = 0;
    }
    for (unsigned k = 0; k < b.n && !b.fibers; ++k) {
        unsigned id = b.order[k];
        set_current(b, id);
        b.t[id].state = RUNNING;
        b.thunk(b.params);  // may turn the block into fibers and run the others meanwhile
        unsigned me = b.cur;
        on_exit(b, me);
        if (b.fibers && b.live) {
            unsigned nx = next_live(b, me);
            set_current(b, nx);
            swap_context(b.home, b.t[nx].ctx);  // the last fiber to finish comes back here
        }
    }
}

}  // namespace

extern "C" {

void tl_emu_syncthreads(int line) {
    Block& b = block_for_barrier();
    Thread& me = b.t[b.cur];
    ++me.barriers;
    if (b.arrived == 0) {
        b.site = static_cast<unsigned>(line);
        b.site_index = me.barriers;
    } else if (b.site != static_cast<unsigned>(line) || b.site_index != me.barriers) {
        fail("divergent __syncthreads: this thread reached its barrier #%u at line %d while "
             "other threads wait at their barrier #%u at line %u", me.barriers, line,
             b.site_index, b.site);
    }
    unsigned long long g = b.gen;
    ++b.arrived;
    b.idle = 0;
    if (b.arrived == b.live) release_block(b);
    while (b.gen == g) yield(b);
}

int tl_emu_syncthreads_count(int pred, int line) {
    Block& b = *g_block;
    int slot = static_cast<int>(b.gen & 1);
    b.count[slot] += pred;
    tl_emu_syncthreads(line);
    return b.count[slot];
}

unsigned long long tl_emu_shfl(unsigned mask, unsigned long long value, int src_lane) {
    return warp_exchange(mask, value, &src_lane);
}

unsigned tl_emu_ballot(unsigned mask, int pred) {
    return static_cast<unsigned>(warp_exchange(mask, pred ? 1 : 0, nullptr));
}

void tl_emu_syncwarp(unsigned mask) { warp_exchange(mask, 0, nullptr); }

void* tl_emu_dynamic_shared(void) { return g_dyn_ptr; }

void tl_emu_fault(const char* what, const char* file, int line) {
    fail("%s (%s:%d)", what, file, line);
}

const char* tl_emu_last_error(void) { return g_error; }
void* tl_emu_fault_address(void) { return g_fault_addr; }

// Dynamic shared memory lies flush against a guard page, so reading or writing past the
// size given at launch faults.
static void* map_dynamic_shared(unsigned bytes, int poison) {
    size_t pg = page_size(), need = (static_cast<size_t>(bytes) + 15) / 16 * 16;
    size_t len = (need + pg - 1) / pg * pg;
    if (!g_dyn || len != g_dyn_len) {
        if (g_dyn) munmap(g_dyn, g_dyn_len + pg);
        void* m = mmap(nullptr, len + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
        if (m == MAP_FAILED) return nullptr;
        g_dyn = static_cast<char*>(m);
        g_dyn_len = len;
        mprotect(g_dyn + len, pg, PROT_NONE);
    }
    char* p = g_dyn + g_dyn_len - need;
    if (poison) std::memset(p, 0xff, need);  // NaN/-1 everywhere: uninitialised reads show
    return p;
}

int tl_emu_run(const tl_emu_cfg* c, const char* name, void (*thunk)(void**), void** params) {
    install_handlers();
    g_error[0] = 0;
    g_fault_addr = nullptr;
    g_fault_write = -1;
    g_kernel = name;
    static thread_local Block blk;
    Block& b = blk;
    b.bx = c->block[0];
    b.by = c->block[1];
    b.n = c->block[0] * c->block[1] * c->block[2];
    b.t.resize(b.n);
    b.w.resize((b.n + 31) / 32);
    b.pos.resize(b.n);
    b.thunk = thunk;
    b.params = params;
    tls.bdim = dim3(c->block[0], c->block[1], c->block[2]);
    tls.gdim = dim3(c->grid[0], c->grid[1], c->grid[2]);
    unsigned long long nblocks = 1ull * c->grid[0] * c->grid[1] * c->grid[2];
    // the shuffled block order: k -> (a * k + c) mod n with gcd(a, n) = 1, a bijection that
    // needs no table however large the grid
    unsigned long long mul = 1, add = 0;
    if (c->schedule == 2 && nblocks > 1) {
        mul = 1 + mix(c->seed) % (nblocks - 1);  // in [1, n - 1], walked until coprime
        auto gcd = [](unsigned long long x, unsigned long long y) {
            while (y) {
                unsigned long long t = x % y;
                x = y;
                y = t;
            }
            return x;
        };
        while (gcd(mul, nblocks) != 1) mul = mul % (nblocks - 1) + 1;
        add = mix(c->seed + 1) % nblocks;
    }
    sigjmp_buf jb;
    g_jmp = &jb;
    g_block = &b;
    if (sigsetjmp(jb, 1)) {
        g_in_kernel = 0;
        return 3;
    }
    g_in_kernel = 1;
    for (unsigned long long k = 0; k < nblocks; ++k) {
        unsigned long long bid = c->schedule == 1 ? nblocks - 1 - k
                               : c->schedule == 2
                                   ? (unsigned long long)(((unsigned __int128)mul * k + add) %
                                                          nblocks)
                                   : k;
        tls.bid.x = static_cast<unsigned>(bid % c->grid[0]);
        tls.bid.y = static_cast<unsigned>((bid / c->grid[0]) % c->grid[1]);
        tls.bid.z = static_cast<unsigned>(bid / (1ull * c->grid[0] * c->grid[1]));
        make_order(b.order, b.n, c->schedule, c->seed ^ mix(bid));
        for (unsigned q = 0; q < b.n; ++q) b.pos[b.order[q]] = q;
        g_dyn_ptr = map_dynamic_shared(c->shmem, c->check);
        run_block(b);
    }
    g_in_kernel = 0;
    return 0;
}

// ---- device memory: a separate mapping per allocation, a guard page after it ---------------
static std::mutex g_mem_mutex;
static std::map<char*, std::pair<char*, size_t>> g_maps;  // data -> (mapping, length)

void* tl_emu_malloc(unsigned long long bytes, int flush_end) {
    size_t pg = page_size(), len = (bytes + pg - 1) / pg * pg;
    if (len == 0) len = pg;
    void* m = mmap(nullptr, len + pg, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    char* base = static_cast<char*>(m);
    mprotect(base + len, pg, PROT_NONE);
    // flush_end: the data ends at the guard page, so an access one byte past it faults;
    // otherwise it starts on a page (aligned for vector loads, as cudaMalloc's 256 bytes)
    char* data = flush_end ? base + len - bytes : base;
    std::lock_guard<std::mutex> lock(g_mem_mutex);
    g_maps[data] = {base, len + pg};
    return data;
}

int tl_emu_free(void* p) {
    std::lock_guard<std::mutex> lock(g_mem_mutex);
    auto it = g_maps.find(static_cast<char*>(p));
    if (it == g_maps.end()) return -1;
    munmap(it->second.first, it->second.second);
    g_maps.erase(it);
    return 0;
}

}  // extern "C"
