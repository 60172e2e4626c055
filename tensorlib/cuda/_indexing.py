"""The CUDA back end's sorting and indexing launches (kernels of cuda/index_ops.cu).

``CUDABackend.rows`` and ``CUDABackend.index`` (tensorlib/_core/backend.pxi) hand their
descriptors here as plain numbers, and the indexing family's front halves
(tensorlib/_core/advindex.pxi) call :func:`offsets`, :func:`nonzero`,
:func:`linear_to_offsets` and :func:`div_counts` for device tensors; ``unique`` calls
:func:`unique_flat`. Scratch space is tensor memory from tensorlib's allocator, on the
current stream of the output's device, and every launch is queued on that stream.

Value-dependent sizes are read as PyTorch reads them: a count kernel, a synchronizing copy
of the count to the host, then the fill. Index validation is done the same way: the offsets
kernel records the first bad index in a device flag that the host reads before any kernel
writes through the offsets, so a bad index raises PyTorch's IndexError/RuntimeError (not a
device-side assert) and nothing is written out of bounds.

Scatters are deterministic: the (destination, position) pairs are sorted and one thread per
destination applies its updates in the CPU's order, so ``scatter_add`` / ``index_add_`` /
``index_put_(accumulate=True)`` of floats give the CPU's result bit for bit (PyTorch's CUDA
versions use float atomics and are not deterministic).

>>> import tensorlib                                                      # doctest: +SKIP
>>> x = tensorlib.tensor([3.0, 1.0, 2.0], device="cuda")                  # doctest: +SKIP
>>> x.sort().indices.cpu().tolist()                                       # doctest: +SKIP
[1, 2, 0]
"""
import ctypes

import numpy as np

from . import _runtime
from . import _ops

FAMILY = "index_ops"
SORT_TILE = 2048          # as in index_ops.cu
OP_SORT, OP_TOPK, OP_SELECT, OP_MODE = 0, 1, 2, 3
SIDE_SRC, SIDE_DST = 0, 1
NZ_CHUNK = 256            # elements each thread of the nonzero kernels walks
ITEMSIZE = _ops.ITEMSIZE


def _tl():
    import tensorlib
    return tensorlib


def _launch(name, n, args, index, block=_ops.BLOCK, grid=None):
    if grid is None:
        grid = max(1, min((n + block - 1) // block, _ops._rt().grid_cap))
    _ops._rt().launch(FAMILY, name, grid, block, args, _ops._stream(index))


def _p(address):
    return _runtime.ptr(address)


def _i64(v):
    return np.int64(v)


def _i32(v):
    return np.int32(v)


def _empty(n, index, dtype=None):
    tl = _tl()
    return tl.empty(max(int(n), 1), dtype=dtype or tl.int64, device=f"cuda:{index}")


def _meta(values, index):
    """A small int64 device array of geometry (shapes, strides, addresses)."""
    tl = _tl()
    vals = [int(v) for v in values] or [0]
    return tl.tensor(vals, dtype=tl.int64, device=f"cuda:{index}")


def _read_i64(address, index):
    h = np.empty(1, np.int64)
    _ops.memcpy_dtoh(h, address, index)
    return int(h[0])


def _prod(xs):
    n = 1
    for x in xs:
        n *= int(x)
    return n


# ---- validated offsets ---------------------------------------------------------------------

def offsets(B, idxs, sizes, muls, wrap, out):
    """out[j] = sum_k idxs[k][j] * muls[k] over the broadcast shape B (every index tensor on
    the device, int32 or int64, with B's rank), values checked against [-size, size) (wrap)
    or [0, size). ``out`` may be None (check only). Returns None, or (k, value) of the
    first bad value in (position, k) order."""
    index = idxs[0].device.index
    nb, total = len(B), _prod(B)
    meta = list(B)
    for t, size, mul in zip(idxs, sizes, muls):
        meta += [t.data_ptr(), int(t.dtype == _tl().int32), size, mul] + list(t.stride())
    m = _meta(meta, index)
    flag = _meta([-1], index)
    target = out if out is not None else flag
    _launch("tl_ix_offsets", total,
            [_p(m.data_ptr()), _p(target.data_ptr()), _p(flag.data_ptr()), _i64(total),
             _i32(len(idxs)), _i32(nb), _i32(int(wrap)), _i32(int(out is not None))], index)
    bad = _read_i64(flag.data_ptr(), index)
    if bad == -1:
        return None
    bad &= (1 << 64) - 1
    pos, k = bad // 64, bad % 64
    t = idxs[k]
    off, rest = 0, pos
    for d in range(nb - 1, -1, -1):
        rest, c = divmod(rest, B[d])
        off += c * t.stride()[d]
    isz = t.element_size()
    h = np.empty(1, np.int32 if isz == 4 else np.int64)
    _ops.memcpy_dtoh(h, t.data_ptr() + off * isz, index)
    return (k, int(h[0]))


def linear_to_offsets(offs, shape, strides):
    """offs (contiguous int64, in place): C-order element numbers -> element offsets of a
    tensor of that shape and those strides."""
    n = offs.numel()
    if n == 0:
        return
    index = offs.device.index
    m = _meta([len(shape)] + list(shape) + list(strides), index)
    _launch("tl_ix_linear_to_offsets", n, [_p(m.data_ptr()), _p(offs.data_ptr()), _i64(n)],
            index)


def div_counts(shape, data, data_strides, dtype, counts, count_strides):
    """scatter_reduce's mean: data[p] /= counts[p] where counts[p] > 0 (strided; data
    strides in bytes, count strides in elements)."""
    total = _prod(shape)
    if total == 0:
        return
    index = _ops.device_of(data)
    m = _meta([len(shape)] + list(shape) + list(data_strides) + list(count_strides), index)
    _launch("tl_ix_div_counts", total,
            [_p(m.data_ptr()), _p(data), _p(counts), _i64(total), _i32(dtype)], index)


# ---- the gather / scatter loop -------------------------------------------------------------

def _host_index_to_device(idx, shape, idx_st, index):
    """An offsets array that lives on the host (a CPU index joining a device tensor): the
    elements the loop reads, copied over. Returns (device tensor, its address)."""
    extent = 1 + sum((s - 1) * st for s, st in zip(shape, idx_st))
    host = np.frombuffer(ctypes.string_at(idx, extent * 8), dtype=np.int64).copy()
    t = _tl().from_numpy(host).to(f"cuda:{index}")
    return t, t.data_ptr()


def index(nd, shape, dst, dst_st, src, src_st, idx, idx_st, idx_mul, side, dtype, op):
    """tl_index_run on the device: side SRC is a gather (dst[p] = src[p + idx[p] * mul]),
    side DST a scatter (dst[p + idx[p] * mul] (op)= src[p]); strides in bytes (idx's in
    elements), the idx values already validated."""
    total = _prod(shape)
    if total == 0:
        return
    index = _ops.device_of(dst)
    # Scratch tensors live until their launches are queued (held here), no longer: the
    # allocator hands a freed block out again only to work queued after them on the stream.
    held = []
    if _ops._rt().device_of(idx) is None:
        t, idx = _host_index_to_device(idx, shape, idx_st, index)
        held.append(t)
    if _ops._rt().device_of(src) is None:
        # a host value (a 0-d CPU tensor): one element, read through zero strides
        host = np.frombuffer(ctypes.string_at(src, ITEMSIZE[dtype]), np.uint8).copy()
        held.append(_tl().from_numpy(host).to(f"cuda:{index}"))
        src = held[-1].data_ptr()
        src_st = [0] * nd
    m = _meta(list(shape) + list(dst_st) + list(src_st) + list(idx_st), index)
    if side == SIDE_SRC:
        _launch("tl_ix_gather", total,
                [_p(m.data_ptr()), _p(dst), _p(src), _p(idx), _i64(total), _i64(idx_mul),
                 _i32(nd), _i32(ITEMSIZE[dtype])], index)
        del held
        return
    keys, pos = _empty(total, index), _empty(total, index)
    _launch("tl_ix_scatter_keys", total,
            [_p(m.data_ptr()), _p(idx), _p(keys.data_ptr()), _p(pos.data_ptr()),
             _i64(total), _i64(idx_mul), _i32(nd)], index)
    keys, pos = _sort_pairs(keys, pos, 1, total, index)
    _launch("tl_ix_scatter_apply", total,
            [_p(m.data_ptr()), _p(dst), _p(src), _p(idx), _p(keys.data_ptr()),
             _p(pos.data_ptr()), _i64(total), _i64(idx_mul), _i32(nd), _i32(dtype), _i32(op)],
            index)
    del held


# ---- nonzero / unique ----------------------------------------------------------------------

def nonzero(t, muls):
    """Positions of t's nonzero elements in C order: coordinates in an int64 (ndim, N)
    tensor (muls None) or element offsets sum_d coord_d * muls[d] in an (N,) tensor."""
    tl = _tl()
    index = t.device.index
    nd, total = t.dim(), t.numel()
    dev = f"cuda:{index}"
    if total == 0:
        return tl.empty((nd, 0) if muls is None else (0,), dtype=tl.int64, device=dev)
    isz = t.element_size()
    shape = list(t.shape) or [1]
    strides = [s * isz for s in t.stride()] or [0]
    m = _meta([len(shape)] + shape + strides, index)
    nchunks = (total + NZ_CHUNK - 1) // NZ_CHUNK
    counts = _empty(nchunks + 1, index)
    code = _dtype_code(t.dtype)
    _launch("tl_nz_count", nchunks,
            [_p(m.data_ptr()), _p(t.data_ptr()), _p(counts.data_ptr()), _i64(total),
             _i64(NZ_CHUNK), _i64(nchunks), _i32(code)], index)
    _launch("tl_nz_scan", 1, [_p(counts.data_ptr()), _i64(nchunks)], index, block=1)
    n = _read_i64(counts.data_ptr() + nchunks * 8, index)
    out = tl.empty((nd, n) if muls is None else (n,), dtype=tl.int64, device=dev)
    if out.numel() == 0:            # (no nonzero element, or a 0-d t: no coordinates)
        return out
    mul_t = _meta(list(muls) if muls is not None else [0], index)
    _launch("tl_nz_fill", nchunks,
            [_p(m.data_ptr()), _p(t.data_ptr()), _p(counts.data_ptr()), _p(out.data_ptr()),
             _p(mul_t.data_ptr()), _i64(total), _i64(NZ_CHUNK), _i64(nchunks), _i64(n),
             _i32(code), _i32(int(muls is not None))], index)
    return out


def unique_flat(svals, order, shape):
    """unique's outputs from a sorted contiguous 1-d ``svals`` (and the sort's permutation
    ``order``, or None): (unique values, inverse of ``shape``, counts)."""
    tl = _tl()
    index = svals.device.index
    n = svals.numel()
    dev = f"cuda:{index}"
    if n == 0:
        return (tl.empty(0, dtype=svals.dtype, device=dev),
                tl.empty(shape, dtype=tl.int64, device=dev),
                tl.empty(0, dtype=tl.int64, device=dev))
    code = _dtype_code(svals.dtype)
    flags = _empty(n, index)
    _launch("tl_uniq_flags", n, [_p(svals.data_ptr()), _p(flags.data_ptr()), _i64(n),
                                 _i32(code)], index)
    run_of = tl.cumsum(flags, 0)
    nu = _read_i64(run_of.data_ptr() + (n - 1) * 8, index) + 1
    uniq = tl.empty(nu, dtype=svals.dtype, device=dev)
    inverse = tl.empty(shape, dtype=tl.int64, device=dev)
    starts = _empty(nu, index)
    counts = tl.empty(nu, dtype=tl.int64, device=dev)
    _launch("tl_uniq_fill", n,
            [_p(svals.data_ptr()), _p(run_of.data_ptr()),
             _p((order if order is not None else run_of).data_ptr()), _p(uniq.data_ptr()),
             _p(inverse.data_ptr()), _p(starts.data_ptr()), _i64(n),
             _i32(svals.element_size()), _i32(int(order is not None)), _i32(1)], index)
    _launch("tl_uniq_counts", nu, [_p(starts.data_ptr()), _p(counts.data_ptr()), _i64(nu),
                                   _i64(n)], index)
    return uniq, inverse, counts


def _dtype_code(dt):
    tl = _tl()
    return [tl.bool, tl.uint8, tl.int8, tl.int16, tl.int32, tl.int64, tl.float16,
            tl.bfloat16, tl.float32, tl.float64].index(dt)


# ---- row sorts -----------------------------------------------------------------------------

def _tile(n):
    t = 2
    while t < n and t < SORT_TILE:
        t *= 2
    return t


def _sort_pairs(keys, idx, nrows, n, index):
    """Sort every row of n (key, index) pairs (contiguous rows) by key then index: one
    shared-memory bitonic sort per tile of up to SORT_TILE elements, then merge passes
    (any row length). Returns the sorted (keys, idx) tensors."""
    tile = _tile(n)
    tiles = nrows * ((n + tile - 1) // tile)
    block = max(32, min(256, tile // 2))
    _launch("tl_sort_tiles", 0, [_p(keys.data_ptr()), _p(idx.data_ptr()), _i64(nrows),
                                 _i64(n), _i64(tile)], index, block=block,
            grid=max(1, min(tiles, 65535)))
    w = tile
    if w < n:
        kb, ib = _empty(nrows * n, index), _empty(nrows * n, index)
        while w < n:
            _launch("tl_sort_merge", nrows * n,
                    [_p(keys.data_ptr()), _p(idx.data_ptr()), _p(kb.data_ptr()),
                     _p(ib.data_ptr()), _i64(nrows), _i64(n), _i64(w)], index)
            keys, idx, kb, ib = kb, ib, keys, idx
            w *= 2
    return keys, idx


def rows(op, flag, k, dtype, oshape, src_os, o0_os, o1_os, n, src_st, o0_st, o1_st, src, o0,
         o1):
    """tl_rows_t on the device (cpu_sort.h): sort (flag: descending), topk (flag: largest),
    select (flag: kth / median / nanmedian, k 0-based), mode. Strides in elements."""
    nrows = _prod(oshape)
    if nrows * n == 0:
        return
    index = _ops.device_of(o0 or o1)
    nd = len(oshape)
    zeros = [0] * nd
    m = _meta([nd] + list(oshape) + list(src_os) + list(o0_os or zeros) + list(o1_os or zeros),
              index)
    width = 8 * ITEMSIZE[dtype]
    mask = (1 << width) - 1
    flip = mask if (op in (OP_SORT, OP_TOPK) and flag) else 0
    if flip >= 1 << 63:
        flip -= 1 << 64           # (passed as a long long)
    keys, idx = _empty(nrows * n, index), _empty(nrows * n, index)
    _launch("tl_sort_keys", nrows * n,
            [_p(m.data_ptr()), _p(src), _p(keys.data_ptr()), _p(idx.data_ptr()),
             _i64(nrows), _i64(n), _i64(src_st), _i32(dtype), _i64(flip)], index)
    keys, idx = _sort_pairs(keys, idx, nrows, n, index)
    any_out = o0 or o1
    if op in (OP_SORT, OP_TOPK):
        kcount = n if op == OP_SORT else k
        if kcount == 0:
            return
        _launch("tl_sort_out", nrows * kcount,
                [_p(m.data_ptr()), _p(src), _p(idx.data_ptr()), _p(o0 or any_out),
                 _p(o1 or any_out), _i64(nrows), _i64(n), _i64(kcount), _i64(src_st),
                 _i64(o0_st), _i64(o1_st), _i32(dtype), _i32(int(bool(o0))),
                 _i32(int(bool(o1)))], index)
        return
    _launch("tl_sort_pick", nrows,
            [_p(m.data_ptr()), _p(src), _p(keys.data_ptr()), _p(idx.data_ptr()),
             _p(o0 or any_out), _p(o1 or any_out), _i64(nrows), _i64(n), _i64(src_st),
             _i32(dtype), _i32(op), _i32(flag if op == OP_SELECT else 0), _i64(k),
             _i32(int(bool(o0))), _i32(int(bool(o1)))], index)


def unique_dim(moved, consecutive):
    """unique over the slices moved[i] of a contiguous tensor (dim 0 is the unique dim):
    (unique slices (nu, *rest), inverse (m,), counts (nu,)). Sorted lexicographically by
    the order keys (one stable sort per column, last column first) unless consecutive."""
    tl = _tl()
    index = moved.device.index
    dev = f"cuda:{index}"
    m = moved.shape[0]
    rest = tuple(moved.shape[1:])
    L = _prod(rest)
    if m == 0:
        return (tl.empty((0,) + rest, dtype=moved.dtype, device=dev),
                tl.empty(0, dtype=tl.int64, device=dev), tl.empty(0, dtype=tl.int64, device=dev))
    code = _dtype_code(moved.dtype)
    data = _p(moved.data_ptr())
    perm = tl.arange(m, device=dev)
    if not consecutive:
        for c in range(L - 1, -1, -1):
            keys, idx = _empty(m, index), _empty(m, index)
            _launch("tl_slice_keys", m, [data, _p(perm.data_ptr()), _p(keys.data_ptr()),
                                         _p(idx.data_ptr()), _i64(m), _i64(L), _i64(c),
                                         _i32(code)], index)
            keys, idx = _sort_pairs(keys, idx, 1, m, index)
            nxt = _empty(m, index)
            _launch("tl_slice_permute", m, [_p(perm.data_ptr()), _p(idx.data_ptr()),
                                            _p(nxt.data_ptr()), _i64(m)], index)
            perm = nxt
    flags = _empty(m, index)
    _launch("tl_slice_flags", m, [data, _p(perm.data_ptr()), _p(flags.data_ptr()), _i64(m),
                                  _i64(L), _i32(code)], index)
    run_of = tl.cumsum(flags, 0)
    nu = _read_i64(run_of.data_ptr() + (m - 1) * 8, index) + 1
    uniq = tl.empty((nu,) + rest, dtype=moved.dtype, device=dev)
    inverse = tl.empty(m, dtype=tl.int64, device=dev)
    starts = _empty(nu, index)
    counts = tl.empty(nu, dtype=tl.int64, device=dev)
    _launch("tl_slice_fill", m, [data, _p(perm.data_ptr()), _p(run_of.data_ptr()),
                                 _p(uniq.data_ptr() if uniq.numel() else inverse.data_ptr()),
                                 _p(inverse.data_ptr()), _p(starts.data_ptr()), _i64(m),
                                 _i64(L), _i32(moved.element_size())], index)
    _launch("tl_uniq_counts", nu, [_p(starts.data_ptr()), _p(counts.data_ptr()), _i64(nu),
                                   _i64(m)], index)
    return uniq, inverse, counts
