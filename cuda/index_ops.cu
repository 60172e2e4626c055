// index_ops.cu: the sorting and indexing families of the CUDA back end (launched by
// tensorlib/cuda/_index.py): validated index offsets, the gather/scatter loop of
// cpu_index.h's tl_index_run, nonzero (count, scan, fill), unique's runs, and the row sorts
// behind sort/argsort/topk/kthvalue/median/mode (cpu_sort.h's tl_rows_t).
//
// dtype codes here are tensorlib's (bool 0, uint8 1, int8 2, int16 3, int32 4, int64 5,
// float16 6, bfloat16 7, float32 8, float64 9), not tl_cuda.h's TL_* ones. Geometry too long
// for a parameter list (shapes and strides of up to 64 dims) travels in a small int64 device
// array ("meta") that the launcher uploads; strides are in bytes where the name says so.
//
// Nothing here depends on timing: a scatter sorts its (destination, position) pairs and
// applies every destination's updates in one thread in the CPU's order, so results are
// bitwise the CPU's (no float atomics), and a bad index is reported through atomicMin of
// its position, whatever order threads run in.
#include "tl_cuda.h"

typedef long long ll;
typedef unsigned long long ull;

enum { D_BOOL = 0, D_U8, D_I8, D_I16, D_I32, D_I64, D_F16, D_BF16, D_F32, D_F64 };
enum { OP_COPY = 0, OP_ADD, OP_MUL, OP_MAX, OP_MIN };
enum { ROWS_SORT = 0, ROWS_TOPK, ROWS_SELECT, ROWS_MODE };
enum { SEL_KTH = 0, SEL_MEDIAN, SEL_NANMEDIAN };

#define SORT_TILE 2048      // elements one block sorts in shared memory

__device__ __forceinline__ int ix_isz(int dt) {
    return dt <= D_I8 ? 1 : (dt == D_I16 || dt == D_F16 || dt == D_BF16) ? 2
           : (dt == D_I32 || dt == D_F32) ? 4 : 8;
}

__device__ __forceinline__ void ix_copy_item(char* d, const char* s, int isz) {
    switch (isz) {
        case 1: *(unsigned char*)d = *(const unsigned char*)s; break;
        case 2: *(unsigned short*)d = *(const unsigned short*)s; break;
        case 4: *(unsigned*)d = *(const unsigned*)s; break;
        default: *(ull*)d = *(const ull*)s; break;
    }
}

// ---- order keys (cpu_sort.c's): unsigned order == PyTorch's order; -0 and +0 one key,
// every NaN one key above +inf

__device__ __forceinline__ ull ix_key_half(unsigned h, unsigned inf) {
    unsigned u = h == 0x8000u ? 0u : h;
    unsigned flipm = (0u - (u >> 15)) & 0xffffu;
    unsigned k = u ^ (flipm | 0x8000u);
    return (h & 0x7fffu) > inf ? 0xffffull : (ull)k;
}

__device__ __forceinline__ ull ix_key(int dt, const char* p) {
    switch (dt) {
        case D_I8: return (ull)((unsigned char)*(const signed char*)p ^ 0x80u);
        case D_I16: return (ull)((unsigned short)*(const short*)p ^ 0x8000u);
        case D_I32: return (ull)((unsigned)*(const int*)p ^ 0x80000000u);
        case D_I64: return (ull)*(const ll*)p ^ (1ull << 63);
        case D_F16: return ix_key_half(*(const unsigned short*)p, 0x7c00u);
        case D_BF16: return ix_key_half(*(const unsigned short*)p, 0x7f80u);
        case D_F32: {
            unsigned u0 = *(const unsigned*)p, u = u0 == 0x80000000u ? 0u : u0;
            unsigned k = u ^ ((0u - (u >> 31)) | 0x80000000u);
            return (u0 & 0x7fffffffu) > 0x7f800000u ? 0xffffffffull : (ull)k;
        }
        case D_F64: {
            ull u0 = *(const ull*)p, u = u0 == (1ull << 63) ? 0ull : u0;
            ull k = u ^ ((0ull - (u >> 63)) | (1ull << 63));
            return (u0 & 0x7fffffffffffffffull) > 0x7ff0000000000000ull ? ~0ull : k;
        }
        default: return (ull)*(const unsigned char*)p;   // bool, uint8
    }
}

// all ones in the key's width: the NaN key of a float dtype, the flip of a descending sort
__device__ __forceinline__ ull ix_key_mask(int dt) {
    int isz = ix_isz(dt);
    return isz == 8 ? ~0ull : ((1ull << (8 * isz)) - 1);
}

__device__ __forceinline__ bool ix_is_float(int dt) { return dt >= D_F16; }

// element offset of C-order position i over (nd, shape, stride)
__device__ __forceinline__ ll ix_off(ll i, int nd, const ll* shape, const ll* stride) {
    ll off = 0;
    for (int d = nd - 1; d >= 0; --d) {
        ll s = shape[d], q = i / s;
        off += (i - q * s) * stride[d];
        i = q;
    }
    return off;
}

// ---- validated offsets: out[j] = sum_k idx_k[j] * mul_k over the broadcast shape
// meta: shape[nb], then per index tensor: address, is_int32, size, mul, strides[nb]
// (elements). The first bad (position, k) lands in *bad as position * 64 + k.

extern "C" __global__ void tl_ix_offsets(const ll* meta, ll* out, ull* bad, ll total, int nk,
                                         int nb, int wrap, int has_out) {
    TL_FOR_EACH(i, total) {
        ll acc = 0;
        for (int k = 0; k < nk; ++k) {
            const ll* m = meta + nb + (ll)k * (4 + nb);
            ll off = ix_off(i, nb, meta, m + 4);
            ll v = m[1] ? (ll)((const int*)(size_t)m[0])[off] : ((const ll*)(size_t)m[0])[off];
            if (wrap && v < 0) v += m[2];
            if (v < 0 || v >= m[2]) {
                atomicMin(bad, (ull)i * 64ull + (ull)k);
                acc = 0;
                break;
            }
            acc += v * m[3];
        }
        if (has_out) out[i] = acc;
    }
}

// linear (C-order) element numbers -> element offsets in a strided tensor
// meta: nd, shape[nd], strides[nd] (elements)
extern "C" __global__ void tl_ix_linear_to_offsets(const ll* meta, ll* inout, ll n) {
    int nd = (int)meta[0];
    TL_FOR_EACH(i, n) inout[i] = ix_off(inout[i], nd, meta + 1, meta + 1 + nd);
}

// ---- the gather / scatter loop of tl_index_run
// meta: shape[nd], dst_st[nd], src_st[nd] (bytes), idx_st[nd] (elements)

extern "C" __global__ void tl_ix_gather(const ll* meta, char* dst, const char* src,
                                        const ll* idx, ll total, ll idx_mul, int nd, int isz) {
    TL_FOR_EACH(i, total) {
        ll d = ix_off(i, nd, meta, meta + nd), s = ix_off(i, nd, meta, meta + 2 * nd);
        ll x = ix_off(i, nd, meta, meta + 3 * nd);
        ix_copy_item(dst + d, src + s + idx[x] * idx_mul, isz);
    }
}

// a scatter, step 1: the destination byte offset of every position, as a sort key
extern "C" __global__ void tl_ix_scatter_keys(const ll* meta, const ll* idx, ull* keys,
                                              ll* pos, ll total, ll idx_mul, int nd) {
    TL_FOR_EACH(i, total) {
        ll d = ix_off(i, nd, meta, meta + nd) + idx[ix_off(i, nd, meta, meta + 3 * nd)] * idx_mul;
        keys[i] = (ull)d ^ (1ull << 63);
        pos[i] = i;
    }
}

template <class T>
__device__ __forceinline__ T ix_comb(int op, T a, T b) {
    switch (op) {
        case OP_ADD: return a + b;
        case OP_MUL: return a * b;
        case OP_MAX: return (b != b || b > a) ? b : a;    // NaN wins, as on the CPU
        default: return (b != b || b < a) ? b : a;
    }
}

__device__ __forceinline__ ll ix_icomb(int op, ll a, ll b) {
    switch (op) {
        case OP_ADD: return (ll)((ull)a + (ull)b);           // wraps, as the CPU's int64
        case OP_MUL: return (ll)((ull)a * (ull)b);
        case OP_MAX: return b > a ? b : a;
        default: return b < a ? b : a;
    }
}

__device__ void ix_apply(char* d, const char* s, int dt, int op) {
    if (op == OP_COPY) {
        ix_copy_item(d, s, ix_isz(dt));
        return;
    }
    switch (dt) {
        case D_BOOL: {
            int a = *(unsigned char*)d != 0, b = *(const unsigned char*)s != 0;
            *(unsigned char*)d = (unsigned char)((op == OP_ADD || op == OP_MAX) ? (a | b) : (a & b));
            break;
        }
        case D_U8: *(unsigned char*)d = (unsigned char)ix_icomb(op, *(unsigned char*)d,
                                                                *(const unsigned char*)s); break;
        case D_I8: *(signed char*)d = (signed char)ix_icomb(op, *(signed char*)d,
                                                            *(const signed char*)s); break;
        case D_I16: *(short*)d = (short)ix_icomb(op, *(short*)d, *(const short*)s); break;
        case D_I32: *(int*)d = (int)ix_icomb(op, *(int*)d, *(const int*)s); break;
        case D_I64: *(ll*)d = ix_icomb(op, *(ll*)d, *(const ll*)s); break;
        case D_F16:
            *(unsigned short*)d = tl_float_to_half(ix_comb<float>(
                op, tl_half_to_float(*(unsigned short*)d),
                tl_half_to_float(*(const unsigned short*)s)));
            break;
        case D_BF16:
            *(unsigned short*)d = tl_float_to_bf16(ix_comb<float>(
                op, tl_bf16_to_float(*(unsigned short*)d),
                tl_bf16_to_float(*(const unsigned short*)s)));
            break;
        case D_F32: *(float*)d = ix_comb<float>(op, *(float*)d, *(const float*)s); break;
        default: *(double*)d = ix_comb<double>(op, *(double*)d, *(const double*)s); break;
    }
}

// a scatter, step 2 (after the (key, position) pairs are sorted): the first thread of every
// run of equal destinations applies the run's updates in position order (the CPU's serial
// order), so repeated indices give the CPU's result, bit for bit
extern "C" __global__ void tl_ix_scatter_apply(const ll* meta, char* dst, const char* src,
                                               const ll* idx, const ull* keys, const ll* pos,
                                               ll total, ll idx_mul, int nd, int dt, int op) {
    TL_FOR_EACH(i, total) {
        if (i > 0 && keys[i] == keys[i - 1]) continue;
        for (ll e = i; e < total && keys[e] == keys[i]; ++e) {
            ll p = pos[e];
            ll d = ix_off(p, nd, meta, meta + nd) + idx[ix_off(p, nd, meta, meta + 3 * nd)] * idx_mul;
            ix_apply(dst + d, src + ix_off(p, nd, meta, meta + 2 * nd), dt, op);
        }
    }
}

// scatter_reduce's mean: data[p] /= counts[p] where counts[p] > 0 (floor for integers)
// meta: nd, shape[nd], data strides[nd] (bytes), count strides[nd] (elements)
__device__ __forceinline__ ll ix_floor_div(ll a, ll b) {
    ll q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

extern "C" __global__ void tl_ix_div_counts(const ll* meta, char* data, const ll* counts,
                                            ll total, int dt) {
    int nd = (int)meta[0];
    const ll* shape = meta + 1;
    TL_FOR_EACH(i, total) {
        ll c = counts[ix_off(i, nd, shape, shape + 2 * nd)];
        if (c <= 0) continue;
        char* p = data + ix_off(i, nd, shape, shape + nd);
        switch (dt) {
            case D_U8: *(unsigned char*)p = (unsigned char)ix_floor_div(*(unsigned char*)p, c); break;
            case D_I8: *(signed char*)p = (signed char)ix_floor_div(*(signed char*)p, c); break;
            case D_I16: *(short*)p = (short)ix_floor_div(*(short*)p, c); break;
            case D_I32: *(int*)p = (int)ix_floor_div(*(int*)p, c); break;
            case D_I64: *(ll*)p = ix_floor_div(*(ll*)p, c); break;
            case D_F16:
                *(unsigned short*)p = tl_float_to_half(tl_half_to_float(*(unsigned short*)p) / (float)c);
                break;
            case D_BF16:
                *(unsigned short*)p = tl_float_to_bf16(tl_bf16_to_float(*(unsigned short*)p) / (float)c);
                break;
            case D_F32: *(float*)p = *(float*)p / (float)c; break;
            case D_F64: *(double*)p = *(double*)p / (double)c; break;
            default: break;
        }
    }
}

// ---- nonzero: per-chunk counts, an exclusive scan of them, then the fill
// meta: nd, shape[nd], strides[nd] (bytes)

__device__ __forceinline__ bool ix_nonzero(int dt, const char* p) {
    switch (dt) {
        case D_I16: return *(const short*)p != 0;
        case D_I32: return *(const int*)p != 0;
        case D_I64: return *(const ll*)p != 0;
        case D_F16: case D_BF16: return (*(const unsigned short*)p & 0x7fffu) != 0;
        case D_F32: return *(const float*)p != 0.0f;          // NaN is nonzero
        case D_F64: return *(const double*)p != 0.0;
        default: return *(const unsigned char*)p != 0;
    }
}

extern "C" __global__ void tl_nz_count(const ll* meta, const char* data, ll* counts, ll total,
                                       ll chunk, ll nchunks, int dt) {
    int nd = (int)meta[0];
    const ll* shape = meta + 1;
    TL_FOR_EACH(c, nchunks) {
        ll cnt = 0, end = (c + 1) * chunk < total ? (c + 1) * chunk : total;
        for (ll i = c * chunk; i < end; ++i)
            cnt += ix_nonzero(dt, data + ix_off(i, nd, shape, shape + nd));
        counts[c] = cnt;
    }
}

// one thread: counts[0..n) -> exclusive prefix sums, counts[n] = the total (n is the number
// of chunks, a few thousand at most, so a serial scan costs less than a launch)
extern "C" __global__ void tl_nz_scan(ll* counts, ll n) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        ll acc = 0;
        for (ll c = 0; c < n; ++c) {
            ll v = counts[c];
            counts[c] = acc;
            acc += v;
        }
        counts[n] = acc;
    }
}

// use_muls: out[k] = sum_d coord_d * muls[d]; else coordinates out[d * dim_stride + k]
extern "C" __global__ void tl_nz_fill(const ll* meta, const char* data, const ll* base,
                                      ll* out, const ll* muls, ll total, ll chunk, ll nchunks,
                                      ll dim_stride, int dt, int use_muls) {
    int nd = (int)meta[0];
    const ll* shape = meta + 1;
    TL_FOR_EACH(c, nchunks) {
        ll k = base[c], end = (c + 1) * chunk < total ? (c + 1) * chunk : total;
        for (ll i = c * chunk; i < end; ++i) {
            if (!ix_nonzero(dt, data + ix_off(i, nd, shape, shape + nd))) continue;
            ll rest = i, acc = 0;
            for (int d = nd - 1; d >= 0; --d) {
                ll q = rest / shape[d], coord = rest - q * shape[d];
                rest = q;
                if (use_muls) acc += coord * muls[d];
                else out[d * dim_stride + k] = coord;
            }
            if (use_muls) out[k] = acc;
            ++k;
        }
    }
}

// ---- unique over a sorted (or, for unique_consecutive, any) contiguous sequence

// flags[i] = 1 where a new run starts after i == 0 (equal: one key and not NaN)
extern "C" __global__ void tl_uniq_flags(const char* v, ll* flags, ll n, int dt) {
    int isz = ix_isz(dt);
    ull nan_key = ix_is_float(dt) ? ix_key_mask(dt) : 0ull;
    TL_FOR_EACH(i, n) {
        if (i == 0) {
            flags[i] = 0;
            continue;
        }
        ull a = ix_key(dt, v + (i - 1) * isz), b = ix_key(dt, v + i * isz);
        flags[i] = !(a == b && !(ix_is_float(dt) && a == nan_key));
    }
}

// run_of: the inclusive prefix sums of the flags (run number of every element)
extern "C" __global__ void tl_uniq_fill(const char* v, const ll* run_of, const ll* order,
                                        char* uniq, ll* inverse, ll* starts, ll n, int isz,
                                        int has_order, int want_inverse) {
    TL_FOR_EACH(i, n) {
        ll r = run_of[i];
        if (i == 0 || run_of[i - 1] != r) {
            ix_copy_item(uniq + r * isz, v + i * isz, isz);
            starts[r] = i;
        }
        if (want_inverse) inverse[has_order ? order[i] : i] = r;
    }
}

extern "C" __global__ void tl_uniq_counts(const ll* starts, ll* counts, ll nu, ll n) {
    TL_FOR_EACH(r, nu) counts[r] = (r + 1 < nu ? starts[r + 1] : n) - starts[r];
}

// ---- row sorts: (key, index) pairs, ordered by key then index (a total order, so any
// correct sort is the stable one)
// meta: outer nd, outer shape, then outer strides (elements) of the input, output 0, output 1

__device__ __forceinline__ bool ix_less(ull ka, ll ia, ull kb, ll ib) {
    return ka < kb || (ka == kb && ia < ib);
}

extern "C" __global__ void tl_sort_keys(const ll* meta, const char* src, ull* keys, ll* idx,
                                        ll nrows, ll n, ll src_st, int dt, ll flip) {
    int nd = (int)meta[0], isz = ix_isz(dt);
    const ll* shape = meta + 1;
    TL_FOR_EACH(i, nrows * n) {
        ll r = i / n, j = i - r * n;
        ll off = ix_off(r, nd, shape, shape + nd) + j * src_st;
        keys[i] = ix_key(dt, src + off * isz) ^ (ull)flip;
        idx[i] = j;
    }
}

// one block per tile of `tile` (a power of two <= SORT_TILE) consecutive elements of a row:
// a bitonic sort in shared memory, padded past the row's end with keys that sort last
extern "C" __global__ void tl_sort_tiles(ull* keys, ll* idx, ll nrows, ll n, ll tile) {
    __shared__ ull sk[SORT_TILE];
    __shared__ ll si[SORT_TILE];
    ll tiles_per_row = (n + tile - 1) / tile;
    for (ll b = blockIdx.x; b < nrows * tiles_per_row; b += gridDim.x) {
        ll r = b / tiles_per_row, t0 = (b - r * tiles_per_row) * tile;
        ll len = n - t0 < tile ? n - t0 : tile, base = r * n + t0;
        for (ll t = threadIdx.x; t < tile; t += blockDim.x) {
            sk[t] = t < len ? keys[base + t] : ~0ull;
            si[t] = t < len ? idx[base + t] : 0x7fffffffffffffffll;
        }
        __syncthreads();
        for (ll k = 2; k <= tile; k <<= 1) {
            for (ll j = k >> 1; j > 0; j >>= 1) {
                for (ll t = threadIdx.x; t < tile; t += blockDim.x) {
                    ll u = t ^ j;
                    if (u > t) {
                        bool up = (t & k) == 0;
                        bool gt = ix_less(sk[u], si[u], sk[t], si[t]);
                        if (gt == up) {
                            ull tk = sk[t];
                            ll ti = si[t];
                            sk[t] = sk[u];
                            si[t] = si[u];
                            sk[u] = tk;
                            si[u] = ti;
                        }
                    }
                }
                __syncthreads();
            }
        }
        for (ll t = threadIdx.x; t < len; t += blockDim.x) {
            keys[base + t] = sk[t];
            idx[base + t] = si[t];
        }
        __syncthreads();
    }
}

// one merge pass: sorted runs of w elements within each row -> runs of 2w. Every element
// finds its place by a binary search in the partner run (a merge path per element), so the
// pass has no inter-thread dependence and any row length works.
extern "C" __global__ void tl_sort_merge(const ull* ka, const ll* ia, ull* kb, ll* ib,
                                         ll nrows, ll n, ll w) {
    TL_FOR_EACH(i, nrows * n) {
        ll r = i / n, j = i - r * n, run = j / w, start = run * w;
        ll pstart = (run & 1) ? start - w : start + w;
        ll plen = pstart >= n ? 0 : (n - pstart < w ? n - pstart : w);
        ull k = ka[i];
        ll x = ia[i], lo = 0, hi = plen;
        const ull* pk = ka + r * n + pstart;
        const ll* pi = ia + r * n + pstart;
        while (lo < hi) {
            ll mid = (lo + hi) >> 1;
            if (ix_less(pk[mid], pi[mid], k, x)) lo = mid + 1;
            else hi = mid;
        }
        ll o = r * n + (run & ~1ll) * w + (j - start) + lo;
        kb[o] = k;
        ib[o] = x;
    }
}

// sort / topk outputs: the first `kcount` of every sorted row, values read back from the
// input through the indices (so NaN payloads and -0 come through unchanged)
extern "C" __global__ void tl_sort_out(const ll* meta, const char* src, const ll* idx,
                                       char* o0, ll* o1, ll nrows, ll n, ll kcount, ll src_st,
                                       ll o0_st, ll o1_st, int dt, int has0, int has1) {
    int nd = (int)meta[0], isz = ix_isz(dt);
    const ll* shape = meta + 1;
    TL_FOR_EACH(i, nrows * kcount) {
        ll r = i / kcount, j = i - r * kcount, id = idx[r * n + j];
        if (has0)
            ix_copy_item(o0 + (ix_off(r, nd, shape, shape + 2 * nd) + j * o0_st) * isz,
                         src + (ix_off(r, nd, shape, shape + nd) + id * src_st) * isz, isz);
        if (has1) o1[ix_off(r, nd, shape, shape + 3 * nd) + j * o1_st] = id;
    }
}

// kthvalue / median / nanmedian / mode: one thread per ascending-sorted row (keys unflipped)
extern "C" __global__ void tl_sort_pick(const ll* meta, const char* src, const ull* keys,
                                        const ll* idx, char* o0, ll* o1, ll nrows, ll n,
                                        ll src_st, int dt, int op, int which, ll kth, int has0,
                                        int has1) {
    int nd = (int)meta[0], isz = ix_isz(dt);
    const ll* shape = meta + 1;
    ull nan_key = ix_key_mask(dt);
    bool fl = ix_is_float(dt);
    TL_FOR_EACH(r, nrows) {
        const ull* k = keys + r * n;
        ll pos;
        if (op == ROWS_MODE) {
            ll best_len = 0, i = 0;
            pos = 0;
            while (i < n) {
                ll e = i + 1;
                if (!(fl && k[i] == nan_key))
                    while (e < n && k[e] == k[i]) ++e;
                if (e - i > best_len) {
                    best_len = e - i;
                    pos = e - 1;               // the last index of the most frequent value
                }
                i = e;
            }
        } else if (which == SEL_KTH) {
            pos = kth;
        } else {
            ll nans = 0;
            if (fl)
                while (nans < n && k[n - 1 - nans] == nan_key) ++nans;
            if (nans > 0 && (which == SEL_MEDIAN || nans == n)) pos = n - nans;  // first NaN
            else pos = (n - nans - 1) / 2;
        }
        ll id = idx[r * n + pos];
        if (has0)
            ix_copy_item(o0 + ix_off(r, nd, shape, shape + 2 * nd) * isz,
                         src + (ix_off(r, nd, shape, shape + nd) + id * src_st) * isz, isz);
        if (has1) o1[ix_off(r, nd, shape, shape + 3 * nd)] = id;
    }
}

// ---- unique(dim=...): m contiguous slices of L elements, sorted by an LSD series of stable
// sorts (one per column, last column first) and compared whole

// keys of column c of the slices in the current order perm; idx: the current positions
extern "C" __global__ void tl_slice_keys(const char* data, const ll* perm, ull* keys, ll* idx,
                                         ll m, ll L, ll c, int dt) {
    int isz = ix_isz(dt);
    TL_FOR_EACH(i, m) {
        keys[i] = ix_key(dt, data + (perm[i] * L + c) * isz);
        idx[i] = i;
    }
}

extern "C" __global__ void tl_slice_permute(const ll* perm, const ll* idx, ll* out, ll m) {
    TL_FOR_EACH(i, m) out[i] = perm[idx[i]];
}

// flags[i] = 1 where slice perm[i] differs from slice perm[i - 1] (a slice holding a NaN
// equals no other)
extern "C" __global__ void tl_slice_flags(const char* data, const ll* perm, ll* flags, ll m,
                                          ll L, int dt) {
    int isz = ix_isz(dt);
    ull nan_key = ix_is_float(dt) ? ix_key_mask(dt) : 0ull;
    TL_FOR_EACH(i, m) {
        ll f = 0;
        if (i > 0) {
            const char* a = data + perm[i - 1] * L * isz;
            const char* b = data + perm[i] * L * isz;
            for (ll c = 0; c < L && !f; ++c) {
                ull ka = ix_key(dt, a + c * isz), kb = ix_key(dt, b + c * isz);
                f = ka != kb || (ix_is_float(dt) && ka == nan_key);
            }
        }
        flags[i] = f;
    }
}

extern "C" __global__ void tl_slice_fill(const char* data, const ll* perm, const ll* run_of,
                                         char* uniq, ll* inverse, ll* starts, ll m, ll L,
                                         int isz) {
    TL_FOR_EACH(i, m) {
        ll r = run_of[i], p = perm[i];
        if (i == 0 || run_of[i - 1] != r) {
            for (ll c = 0; c < L; ++c)
                ix_copy_item(uniq + (r * L + c) * isz, data + (p * L + c) * isz, isz);
            starts[r] = i;
        }
        inverse[p] = r;
    }
}
