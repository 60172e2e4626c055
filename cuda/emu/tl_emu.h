// tl_emu.h: the shim that lets tensorlib's .cu kernels compile with the host C++ compiler.
//
// The emulator compiles a kernel file as `g++ -x c++ -include tl_emu.h FILE.cu` plus a
// generated trailer holding one TL_EMU_EXPORT(name) per `extern "C" __global__` kernel.
// CUDA threads run as fibers (cuda/emu/tl_emu_rt.cpp, linked in at load time): a block runs
// to completion on one OS thread, its threads as plain calls until one of them reaches a
// barrier or a warp operation, then as fibers that yield round-robin until the barrier is
// released. So `__shared__` is per block as `static thread_local`, and the built-in index
// variables are thread-locals rewritten at every switch.
#pragma once
#define TL_EMU 1

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

// CUDA declares these classification functions globally, as C does; <cmath> puts them in std
using std::signbit;
using std::isnan;
using std::isinf;
using std::isfinite;

#ifdef TL_EMU_DISCOVER
// kernel discovery: the loader preprocesses the file and looks for this marker
#define __global__ __tl_emu_global__
#else
#define __global__
#endif
#define __device__
#define __host__
#define __constant__ static
#define __shared__ static thread_local
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __align__(n) alignas(n)

struct uint3 { unsigned x, y, z; };
struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

namespace tl_emu {
struct ThreadState {
    uint3 tid, bid;  // named apart from the macros below
    dim3 bdim, gdim;
    unsigned linear;  // threadIdx as one number: x + y * blockDim.x + z * blockDim.x * blockDim.y
};
extern thread_local ThreadState tls;  // defined by the runtime
}  // namespace tl_emu

// read-only, like CUDA's built-ins
#define threadIdx (static_cast<const uint3&>(::tl_emu::tls.tid))
#define blockIdx (static_cast<const uint3&>(::tl_emu::tls.bid))
#define blockDim (static_cast<const dim3&>(::tl_emu::tls.bdim))
#define gridDim (static_cast<const dim3&>(::tl_emu::tls.gdim))
#define warpSize 32

struct tl_emu_cfg {
    unsigned grid[3], block[3];
    unsigned shmem;              // dynamic shared memory, bytes
    int schedule;                // 0 forward, 1 reverse, 2 shuffled
    unsigned long long seed;     // of the shuffled schedule
    int check;                   // poison dynamic shared memory at each block start
};

extern "C" {
int tl_emu_run(const tl_emu_cfg* cfg, const char* name, void (*thunk)(void**), void** params);
void tl_emu_syncthreads(int line);
int tl_emu_syncthreads_count(int pred, int line);
unsigned long long tl_emu_shfl(unsigned mask, unsigned long long value, int src_lane);
unsigned tl_emu_ballot(unsigned mask, int pred);
void tl_emu_syncwarp(unsigned mask);
void* tl_emu_dynamic_shared(void);
[[noreturn]] void tl_emu_fault(const char* what, const char* file, int line);
}

// ---- barriers and warp operations --------------------------------------------------------
#define __syncthreads() tl_emu_syncthreads(__LINE__)
#define __syncthreads_count(p) tl_emu_syncthreads_count((p) ? 1 : 0, __LINE__)
#define __syncthreads_or(p) (tl_emu_syncthreads_count((p) ? 1 : 0, __LINE__) != 0)
#define __syncthreads_and(p) \
    (tl_emu_syncthreads_count((p) ? 0 : 1, __LINE__) == 0)
#define __trap() tl_emu_fault("__trap() called", __FILE__, __LINE__)

namespace tl_emu {
template <class T>
inline unsigned long long to_bits(T v) {
    static_assert(sizeof(T) <= 8, "warp shuffles move at most 8 bytes");
    unsigned long long b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
}
template <class T>
inline T from_bits(unsigned long long b) {
    T v;
    std::memcpy(&v, &b, sizeof(T));
    return v;
}
inline int lane() { return static_cast<int>(tls.linear & 31u); }
}  // namespace tl_emu

// The source lane of each shuffle follows the CUDA programming guide: lanes are split into
// groups of `width`; a source outside the caller's group yields the caller's own value.
template <class T>
inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
    int l = tl_emu::lane(), base = l & ~(width - 1);
    return tl_emu::from_bits<T>(tl_emu_shfl(mask, tl_emu::to_bits(v), base + (src % width)));
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
    int l = tl_emu::lane(), base = l & ~(width - 1), s = l + static_cast<int>(delta);
    if (s >= base + width) s = l;
    return tl_emu::from_bits<T>(tl_emu_shfl(mask, tl_emu::to_bits(v), s));
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
    int l = tl_emu::lane(), base = l & ~(width - 1), s = l - static_cast<int>(delta);
    if (s < base) s = l;
    return tl_emu::from_bits<T>(tl_emu_shfl(mask, tl_emu::to_bits(v), s));
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
    int l = tl_emu::lane(), base = l & ~(width - 1), s = l ^ lane_mask;
    if (s >= base + width || s < base) s = l;
    return tl_emu::from_bits<T>(tl_emu_shfl(mask, tl_emu::to_bits(v), s));
}
inline unsigned __ballot_sync(unsigned mask, int pred) { return tl_emu_ballot(mask, pred); }
inline int __any_sync(unsigned mask, int pred) { return tl_emu_ballot(mask, pred) != 0; }
inline int __all_sync(unsigned mask, int pred) {
    return tl_emu_ballot(mask, !pred) == 0;
}
inline void __syncwarp(unsigned mask = 0xffffffffu) { tl_emu_syncwarp(mask); }

// ---- atomics: real ones, since streams run kernels concurrently on several OS threads -----
#define TL_EMU_ATOMIC_INT(T)                                                                  \
    inline T atomicAdd(T* p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }     \
    inline T atomicSub(T* p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_SEQ_CST); }     \
    inline T atomicAnd(T* p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); }     \
    inline T atomicOr(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }       \
    inline T atomicXor(T* p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_SEQ_CST); }     \
    inline T atomicExch(T* p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }   \
    inline T atomicCAS(T* p, T cmp, T v) {                                                   \
        __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
        return cmp;                                                                          \
    }                                                                                        \
    inline T atomicMax(T* p, T v) {                                                          \
        T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);                                        \
        while (old < v && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, \
                                                       __ATOMIC_SEQ_CST)) {                  \
        }                                                                                    \
        return old;                                                                          \
    }                                                                                        \
    inline T atomicMin(T* p, T v) {                                                          \
        T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);                                        \
        while (v < old && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, \
                                                       __ATOMIC_SEQ_CST)) {                  \
        }                                                                                    \
        return old;                                                                          \
    }
TL_EMU_ATOMIC_INT(int)
TL_EMU_ATOMIC_INT(unsigned)
TL_EMU_ATOMIC_INT(long long)
TL_EMU_ATOMIC_INT(unsigned long long)
#undef TL_EMU_ATOMIC_INT

#define TL_EMU_ATOMIC_FLOAT(T)                                                               \
    inline T atomicAdd(T* p, T v) {                                                          \
        T old, want;                                                                         \
        __atomic_load(p, &old, __ATOMIC_SEQ_CST);                                            \
        do {                                                                                 \
            want = old + v;                                                                  \
        } while (!__atomic_compare_exchange(p, &old, &want, false, __ATOMIC_SEQ_CST,        \
                                            __ATOMIC_SEQ_CST));                              \
        return old;                                                                          \
    }                                                                                        \
    inline T atomicExch(T* p, T v) {                                                         \
        T old;                                                                               \
        __atomic_exchange(p, &v, &old, __ATOMIC_SEQ_CST);                                    \
        return old;                                                                          \
    }
TL_EMU_ATOMIC_FLOAT(float)
TL_EMU_ATOMIC_FLOAT(double)
#undef TL_EMU_ATOMIC_FLOAT

inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// ---- device functions CUDA has and the C library lacks -----------------------------------
template <class T>
inline T __ldg(const T* p) { return *p; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __saturatef(float x) { return x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }
inline int __float_as_int(float x) { int i; std::memcpy(&i, &x, 4); return i; }
inline float __int_as_float(int i) { float x; std::memcpy(&x, &i, 4); return x; }
inline unsigned __float_as_uint(float x) { unsigned i; std::memcpy(&i, &x, 4); return i; }
inline float __uint_as_float(unsigned i) { float x; std::memcpy(&x, &i, 4); return x; }
inline long long __double_as_longlong(double x) {
    long long i; std::memcpy(&i, &x, 8); return i;
}
inline double __longlong_as_double(long long i) { double x; std::memcpy(&x, &i, 8); return x; }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __ffs(int x) { return __builtin_ffs(x); }
#define TL_EMU_MINMAX(T)                                        \
    inline T min(T a, T b) { return b < a ? b : a; }            \
    inline T max(T a, T b) { return a < b ? b : a; }
TL_EMU_MINMAX(int)
TL_EMU_MINMAX(unsigned)
TL_EMU_MINMAX(long long)
TL_EMU_MINMAX(unsigned long long)
TL_EMU_MINMAX(float)
TL_EMU_MINMAX(double)
#undef TL_EMU_MINMAX

// ---- exported launch trampolines -----------------------------------------------------------
namespace tl_emu {
// One letter per parameter, matched by the Python side against the arguments it packs:
// P pointer, f float, d double, i int, I unsigned, q int64, Q uint64, h/H 16-bit, b/B 8-bit,
// ? bool, S<size>; a struct passed by value.
template <class T>
void put_code(std::string& s) {
    if constexpr (std::is_pointer_v<T>) s += 'P';
    else if constexpr (std::is_same_v<T, bool>) s += '?';
    else if constexpr (std::is_same_v<T, float>) s += 'f';
    else if constexpr (std::is_same_v<T, double>) s += 'd';
    else if constexpr (std::is_integral_v<T>) {
        static const char sgn[] = "bhiq", uns[] = "BHIQ";
        int k = sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3;
        s += std::is_signed_v<T> ? sgn[k] : uns[k];
    } else {
        static_assert(std::is_trivially_copyable_v<T>, "kernel parameters must be PODs");
        s += 'S' + std::to_string(sizeof(T)) + ';';
    }
}
template <class... A>
const char* signature(void (*)(A...)) {
    static const std::string s = [] {
        std::string r;
        (put_code<A>(r), ...);
        return r;
    }();
    return s.c_str();
}
template <class... A, std::size_t... I>
void invoke_impl(void (*k)(A...), void** p, std::index_sequence<I...>) {
    k(*static_cast<std::remove_reference_t<A>*>(p[I])...);
}
template <class... A>
void invoke(void (*k)(A...), void** p) {
    invoke_impl(k, p, std::index_sequence_for<A...>{});
}
}  // namespace tl_emu

#define TL_EMU_EXPORT(NAME)                                                                  \
    extern "C" int tl_emu_launch__##NAME(const tl_emu_cfg* c, void** p) {                    \
        return tl_emu_run(c, #NAME, [](void** q) { ::tl_emu::invoke(&NAME, q); }, p);        \
    }                                                                                        \
    extern "C" const char* tl_emu_sig__##NAME(void) { return ::tl_emu::signature(&NAME); }
