"""The CUDA back end's launches: from a front half's descriptor to a kernel on a stream.

``CUDABackend`` (tensorlib/_core/backend.pxi) hands each method's descriptor here as plain
numbers (device addresses are ints); these functions pick the kernel, fill its launch
descriptor and queue it on the current stream of the device that holds the output, through
the runtime interface (:mod:`tensorlib.cuda._runtime`). Nothing here waits: a result is
ready when its stream has run it (``tensorlib.cuda.synchronize()``, or a copy to the host,
which waits for its stream).

>>> import tensorlib                                            # doctest: +SKIP
>>> x = tensorlib.arange(4.0, device="cuda")                   # doctest: +SKIP
>>> (x * 2).cpu().tolist()                                     # doctest: +SKIP
[0.0, 2.0, 4.0, 6.0]
"""
import ctypes

import numpy as np

from . import _runtime

# dtype codes (tensorlib/_core/dtype.pyx) -> loop type names and item sizes
LOOP_NAMES = {0: "b8", 1: "u8", 2: "i8", 3: "i16", 4: "i32", 5: "i64", 8: "f32", 9: "f64"}
ITEMSIZE = [1, 1, 1, 2, 4, 8, 2, 2, 4, 8]
MAXD = 8
BLOCK = 256
MANY_OUTPUTS = 1 << 14   # a reduction with this many outputs takes a thread per output


class EW4(ctypes.Structure):
    """tl_ew4 of cuda/tl_ew_device.h, field for field."""
    _fields_ = [("ndim", ctypes.c_int), ("nops", ctypes.c_int),
                ("scalar_mask", ctypes.c_int), ("has_extra", ctypes.c_int),
                ("dtype", ctypes.c_int * 4), ("n", ctypes.c_longlong),
                ("shape", ctypes.c_longlong * MAXD),
                ("stride", (ctypes.c_longlong * MAXD) * 4),
                ("sval", ctypes.c_ulonglong * 4), ("extra", ctypes.c_double * 8)]


def _rt():
    return _runtime._runtime or _runtime.get_runtime()


def _stream(index):
    return _cuda()._current_native(index)


_cuda_mod = None


def _cuda():
    global _cuda_mod
    if _cuda_mod is None:
        from tensorlib import cuda
        _cuda_mod = cuda
    return _cuda_mod


def _grid(n):
    g = (n + BLOCK - 1) // BLOCK
    cap = _rt().grid_cap
    return g if 0 < g < cap else max(1, min(g, cap))


def device_of(address):
    """The device index of a device address (RuntimeError for host memory)."""
    i = _rt().device_of(address)
    if i is None:
        raise RuntimeError(f"CUDA back end: address 0x{address:x} is not device memory")
    return i


def launch_ew(kernel, index, numel, params):
    """Queue generated elementwise kernel ``kernel`` (``tl_ew_<op>_<loop type>``) over
    ``numel`` elements on device ``index``'s current stream. ``params``: its parameter block
    (four operand addresses, then the ``tl_ew4`` descriptor), which ``CUDABackend``
    fills in C from the front half's iterator."""
    _rt().launch_packed("ew_ops", kernel, _grid(numel), BLOCK, params, 4, _stream(index),
                        index)


def _ew_launch(kernel, nops, ndim, shape, strides, data, dtypes, extra, extra_nbytes, numel):
    if numel == 0:
        return
    if ndim > MAXD:
        raise NotImplementedError(f"CUDA elementwise '{kernel}': {ndim} dims after "
                                  f"coalescing (at most {MAXD})")
    rt = _rt()
    index = device_of(data[0])
    d = EW4()
    d.ndim, d.nops, d.n = ndim, nops, numel
    d.shape[:ndim] = shape[:ndim]
    dt, sval, stride = d.dtype, d.sval, d.stride
    args = [_runtime.ptr(data[0])]
    for j in range(nops):
        dt[j] = dtypes[j]
        size = ITEMSIZE[dtypes[j]]
        st = strides[j]
        where = index if j == 0 else rt.device_of(data[j])
        if where is None and not any(st):
            # a host scalar: a Python number or a 0-d CPU tensor joining the op
            d.scalar_mask |= 1 << j
            sval[j] = int.from_bytes(ctypes.string_at(data[j], size).ljust(8, b"\0"),
                                     "little")
            args.append(args[0])          # (not read: the kernel takes the slot)
        else:
            if where != index:
                raise RuntimeError(f"CUDA elementwise '{kernel}': operand {j} is not on "
                                   f"cuda:{index}")
            stride[j][:ndim] = [s // size for s in st[:ndim]]
            if j > 0:
                args.append(_runtime.ptr(data[j]))
    while len(args) < 4:
        args.append(args[0])
    if extra_nbytes:
        ctypes.memmove(ctypes.addressof(d.extra), extra, extra_nbytes)
        d.has_extra = 1
    args.append(d)
    rt.launch("ew_ops", kernel, _grid(numel), BLOCK, args, _stream(index), index=index)


def copy(ndim, shape, dst, dst_strides, dst_dtype, src, src_strides, src_dtype):
    """A strided copy with dtype conversion (strides in elements) between two device
    tensors, or from a host scalar (all source strides 0) — a fill."""
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return
    ndim, shape, (dst_strides, src_strides) = _coalesce(shape, [dst_strides, src_strides])
    if ndim > MAXD:
        raise NotImplementedError(f"CUDA copy: {ndim} dims (at most {MAXD})")
    isz_d, isz_s = ITEMSIZE[dst_dtype], ITEMSIZE[src_dtype]
    if (dst_dtype == src_dtype and _dense(ndim, shape, dst_strides)
            and _dense(ndim, shape, src_strides)):
        rt = _rt()
        index = device_of(dst)
        if rt.device_of(src) == index:
            # the same bytes in the same order: the driver's device-to-device copy
            rt.dtod(dst, src, n * isz_d, _stream(index))
            return
    _ew_launch("tl_ew_copy", 2, ndim, shape,
               [[s * isz_d for s in dst_strides], [s * isz_s for s in src_strides]],
               [dst, src], [dst_dtype, src_dtype], 0, 0, n)


def _coalesce(shape, strides):
    """Fewer dims walking the same elements: size-1 dims dropped, and neighbours merged
    where every operand steps through them as through one (strides in elements).

    >>> _coalesce([2, 1, 3], [[3, 9, 1], [0, 0, 0]])
    (1, [6], [[1], [0]])
    """
    keep = [k for k in range(len(shape)) if shape[k] != 1]
    out_shape, out_st = [], [[] for _ in strides]
    for k in keep:
        if out_shape and all(st[k] * shape[k] == o[-1] for st, o in zip(strides, out_st)):
            out_shape[-1] *= shape[k]
            for st, o in zip(strides, out_st):
                o[-1] = st[k]
        else:
            out_shape.append(shape[k])
            for st, o in zip(strides, out_st):
                o.append(st[k])
    return len(out_shape), out_shape, out_st


def _dense(ndim, shape, strides):
    """Whether element strides walk the shape in row-major order with no gaps."""
    want = 1
    for k in range(ndim - 1, -1, -1):
        if shape[k] != 1 and strides[k] != want:
            return False
        want *= shape[k]
    return True


def memcpy_htod(dst, host, index):
    """Queue a copy of the contiguous host array ``host`` to ``dst`` on the current stream
    (the array is kept alive until it has run)."""
    _rt().htod(dst, host, _stream(index))


def memcpy_dtoh(host, src, index):
    """Copy ``src`` into the host array ``host`` and wait for it (and for the work queued
    before it on the current stream)."""
    from tensorlib import cuda
    stream = cuda.current_stream(index)
    _rt().dtoh(host, src, stream._native)
    stream.synchronize()




# ---- reductions, softmax, scans, matrix products (cuda/tensor_ops.cu) --------------------

RED_DIMS = 8
RED_SPLIT = 16          # a split row gives each thread about this many elements
RED_MAX_PARTS = 1024    # parts per output at most (one block each)


class RedDesc(ctypes.Structure):
    """tl_red_dev of cuda/tensor_ops.cu."""
    _fields_ = [(f, ctypes.c_int) for f in ("op", "post", "in_dtype", "out_dtype", "int_state",
                                             "nk", "nr", "has_out", "has_idx", "has_center")] + [
        ("p", ctypes.c_double), ("post_a", ctypes.c_double),
        ("nout", ctypes.c_longlong), ("nred", ctypes.c_longlong),
        ("parts", ctypes.c_longlong)] + [
        (f, ctypes.c_longlong * RED_DIMS) for f in ("kshape", "kin", "kout", "rshape", "rin")]


R_ALL, R_ANY, R_NONZERO = 4, 5, 6
CT_I64 = 5        # the compute dtype code of integer reductions (tensorlib's int64)


def reduce(op, post, in_dtype, ct, out_dtype, src, out, idx, center, p, post_a,
           kshape, kin, kout, rshape, rin):
    """A reduction (tl_red_t of cpu_reduce.h, addresses as ints, 0 for absent pointers)."""
    nk, nr = len(kshape), len(rshape)
    if nk > RED_DIMS or nr > RED_DIMS:
        raise NotImplementedError(f"CUDA reduction: {nk} kept and {nr} reduced dims after "
                                  f"coalescing (at most {RED_DIMS} each)")
    d = RedDesc()
    d.op, d.post, d.in_dtype, d.out_dtype = op, post, in_dtype, out_dtype
    d.int_state = 1 if (ct == CT_I64 or op in (R_ALL, R_ANY, R_NONZERO)) else 0
    d.nk, d.nr = nk, nr
    d.has_out, d.has_idx, d.has_center = int(out != 0), int(idx != 0), int(center != 0)
    d.p, d.post_a = p, post_a
    nout = 1
    for k in range(nk):
        d.kshape[k], d.kin[k], d.kout[k] = kshape[k], kin[k], kout[k]
        nout *= kshape[k]
    nred = 1
    for k in range(nr):
        d.rshape[k], d.rin[k] = rshape[k], rin[k]
        nred *= rshape[k]
    d.nout, d.nred = nout, nred
    if nout == 0:
        return
    index = device_of(out or idx)
    any_ptr = out or idx
    args = [_runtime.ptr(src if nred else any_ptr), _runtime.ptr(out or any_ptr),
            _runtime.ptr(idx or any_ptr), _runtime.ptr(center or any_ptr), d]
    columns = nk and nr and kin[nk - 1] == 1 and rin[nr - 1] != 1
    if nred <= 64 or nout >= MANY_OUTPUTS or (columns and nout >= 2048):
        # few elements per output, outputs enough to fill the device, or outputs that are
        # neighbours in memory while their reduced elements are not: a thread each, so a
        # warp reads 32 neighbours at each step
        d.parts = 1
        _rt().launch("tensor_ops", "tl_reduce_thread", _grid(nout), BLOCK, args,
                     _stream(index))
        return
    threads = 32
    while threads < 256 and threads < nred // 8:
        threads *= 2
    # few outputs and long rows: split each row over several blocks, then combine the parts
    # in a fixed tree (the split depends on the sizes only, so the result does too)
    d.parts = (min(-(-nred // (threads * RED_SPLIT)), RED_MAX_PARTS)
               if nout < 256 and nred >= 1 << 14 else 1)
    blocks = min(nout * d.parts, 1 << 20)
    stream = _stream(index)
    if d.parts == 1:
        _rt().launch("tensor_ops", "tl_reduce_block", blocks, threads,
                     args[:4] + [args[1], d], stream)
        return
    import tensorlib
    partial = tensorlib.empty(nout * d.parts * 16, dtype=tensorlib.uint8,
                              device=f"cuda:{index}")
    p = _runtime.ptr(partial.data_ptr())
    _rt().launch("tensor_ops", "tl_reduce_block", blocks, threads, args[:4] + [p, d], stream)
    # a block per output folds its parts (a multiple of 32 threads, up to 256)
    _rt().launch("tensor_ops", "tl_reduce_finish", nout, min(256, -(-d.parts // 32) * 32),
                 args[1:4] + [p, d], stream)
    # the caching allocator hands the block out again only to work queued after these
    # launches on the same stream


def softmax(dtype, want_log, x, y, outer, n, inner):
    """softmax/log_softmax over the middle dim of contiguous [outer, n, inner] (float32/64)."""
    cols = outer * inner
    if cols == 0 or n == 0:
        return
    if inner == 1 and n >= 64:
        # contiguous rows long enough for a block each
        threads = 128 if n < 2048 else 512
        name = {8: "tl_softmax_rows_f32", 9: "tl_softmax_rows_f64"}[dtype]
        if dtype == 8 and not want_log:
            name = "tl_softmax_rows_st_f32"          # exp once per element
        _rt().launch("tensor_ops", name, min(outer, 1 << 20), threads,
                     [_runtime.ptr(x), _runtime.ptr(y), np.int64(outer), np.int64(n),
                      np.int32(want_log)], _stream(device_of(y)))
        return
    name = {8: "tl_softmax_f32", 9: "tl_softmax_f64"}[dtype]
    _rt().launch("tensor_ops", name, _grid(cols), BLOCK,
                 [_runtime.ptr(x), _runtime.ptr(y), np.int64(outer), np.int64(n),
                  np.int64(inner), np.int32(want_log)], _stream(device_of(y)))


def cumulative(prod, dtype, x, y, outer, n, inner):
    """cumsum/cumprod over the middle dim of contiguous [outer, n, inner]."""
    cols = outer * inner
    if cols == 0 or n == 0:
        return
    name = {8: "tl_scan_f32", 9: "tl_scan_f64", 5: "tl_scan_i64"}.get(dtype)
    if name is None:
        raise NotImplementedError(f"CUDA cumsum/cumprod: dtype code {dtype}")
    _rt().launch("tensor_ops", name, _grid(cols), BLOCK,
                 [_runtime.ptr(x), _runtime.ptr(y), np.int64(outer), np.int64(n),
                  np.int64(inner), np.int32(prod)], _stream(device_of(y)))


class Mat(ctypes.Structure):
    """tl_mat of cuda/tensor_ops.cu."""
    _fields_ = [("sb", ctypes.c_longlong), ("sr", ctypes.c_longlong),
                ("sc", ctypes.c_longlong)]


def bmm(dtype, out, B, M, N, K, a, ga, b, gb):
    """out (contiguous B x M x N) = a @ b per batch; ga/gb: (sb, sr, sc) in elements."""
    if B * M * N == 0:
        return
    if K == 1:
        # products with nothing to sum (outer): one multiply each, so a -0.0 product stays
        # -0.0 as on the CPU (a GEMM's sum would start at +0)
        size = ITEMSIZE[dtype]
        _ew_launch(f"tl_ew_mul_{'f32' if dtype == 8 else 'f64'}", 3, 3, (B, M, N),
                   [(M * N * size, N * size, size), (ga[0] * size, ga[1] * size, 0),
                    (gb[0] * size, 0, gb[2] * size)], [out, a, b], [dtype] * 3, 0, 0, B * M * N)
        return
    tile = 128 if dtype == 8 else 64
    name = {8: "tl_bmm_f32", 9: "tl_bmm_f64"}[dtype]
    if dtype == 8 and -(-M // 128) * -(-N // 128) * B < 256:
        tile, name = 64, "tl_bmm_small_f32"     # more, smaller tiles keep the device busy
    grid = (-(-N // tile), -(-M // tile), max(1, min(B, 65535)))
    if grid[1] > 65535:
        raise NotImplementedError(f"CUDA bmm: {M} rows (at most {65535 * tile})")
    _rt().launch("tensor_ops", name, grid, 256,
                 [_runtime.ptr(out), _runtime.ptr(a), _runtime.ptr(b), np.int64(B),
                  np.int64(M), np.int64(N), np.int64(K), Mat(*ga), Mat(*gb)],
                 _stream(device_of(out)))
