"""The CUDA back end's fused nn kernels (cuda/nn_ops.cu): small convolutions in one launch
(:func:`launch_conv_direct`), convolution's im2col/col2im and bias steps, pooling,
batch/layer/group normalization, the LSTM/GRU cells, cross entropy and the masked softmax.

``CUDABackend.nn`` hands over the address of the front half's ``tl_nn_args``
(tensorlib/_core/cpu/cpu_nn.h); :func:`run` reads it through the ctypes mirror
:class:`NNArgs`, fills the device descriptor :class:`NNDev` and queues the op's kernels on
the current stream of the output's device, each tensor as its own pointer argument. The
index kernels and cross entropy report a bad index as the CPU does (a return of 1 with the
index in ``bad``), which needs the device's answer: those launches wait for their stream.

>>> import tensorlib                                                       # doctest: +SKIP
>>> x = tensorlib.randn(1, 1, 4, 4, device="cuda")                        # doctest: +SKIP
>>> tensorlib.nn.functional.max_pool2d(x, 2).shape                       # doctest: +SKIP
tensorlib.Size([1, 1, 2, 2])
"""
import ctypes

import numpy as np

from . import _ops, _runtime

c_i64 = ctypes.c_int64
NN_NONE = 2**63 - 1      # "no bad index" in the device's bad-index slot (atomicMin)
ROW_BLOCKS = 4096        # blocks of a block-per-row/channel launch (they stride over the rest)


class NNArgs(ctypes.Structure):
    """tl_nn_args of tensorlib/_core/cpu/cpu_nn.h, field for field (pointers as addresses)."""
    _fields_ = [("dtype", ctypes.c_int), ("flag", ctypes.c_int), ("mode", ctypes.c_int),
                ("n", c_i64), ("c", c_i64)] + [
        (f, c_i64 * 3) for f in ("in_", "out", "k", "s", "p", "dil")] + [
        (f, c_i64) for f in ("ld", "sp", "dp", "m", "groups", "hw", "divisor")] + [
        ("eps", ctypes.c_double), ("momentum", ctypes.c_double)] + [
        (f, ctypes.c_void_p) for f in ("x", "g", "w", "b", "y", "mean", "rstd", "rmean",
                                       "rvar", "gw", "gb", "idx")] + [
        ("bad", c_i64), ("src", ctypes.c_void_p * 5), ("dst", ctypes.c_void_p * 3),
        ("ignore_index", c_i64), ("smoothing", ctypes.c_double), ("rnd", ctypes.c_int),
        ("rdims", c_i64 * 6), ("rstr", c_i64 * 6), ("mcol", c_i64)]


class NNDev(ctypes.Structure):
    """tl_nn_dev of cuda/nn_ops.cu: the descriptor less its pointers."""
    _fields_ = [(f, ctypes.c_int) for f in ("flag", "mode", "rnd", "have")] + [
        ("n", c_i64), ("c", c_i64)] + [
        (f, c_i64 * 3) for f in ("in_", "out", "k", "s", "p", "dil")] + [
        (f, c_i64) for f in ("ld", "sp", "dp", "m", "groups", "hw", "divisor",
                             "ignore_index", "mcol")] + [
        ("rdims", c_i64 * 6), ("rstr", c_i64 * 6)] + [
        (f, ctypes.c_double) for f in ("eps", "momentum", "smoothing")]


# bits of NNDev.have: which optional pointers are present
H_W, H_B, H_Y, H_GW, H_GB, H_RMEAN, H_RVAR, H_S0, H_S1 = (1 << i for i in range(9))
AFFINE_GROUP = 2


# NNArgs and NNDev hold n .. divisor, and rdims .. rstr, in the same order: one copy each
_RUN = NNArgs.divisor.offset + 8 - NNArgs.n.offset
assert NNDev.divisor.offset + 8 - NNDev.n.offset == _RUN
assert NNArgs.rstr.offset - NNArgs.rdims.offset == NNDev.rstr.offset - NNDev.rdims.offset == 48


def _dev(a):
    d = NNDev()
    d.flag, d.mode, d.rnd = a.flag, a.mode, a.rnd
    src, dst = ctypes.addressof(a), ctypes.addressof(d)
    ctypes.memmove(dst + NNDev.n.offset, src + NNArgs.n.offset, _RUN)
    ctypes.memmove(dst + NNDev.rdims.offset, src + NNArgs.rdims.offset, 96)
    d.ignore_index, d.mcol = a.ignore_index, a.mcol
    d.eps, d.momentum, d.smoothing = a.eps, a.momentum, a.smoothing
    have = 0
    for bit, addr in ((H_W, a.w), (H_B, a.b), (H_Y, a.y), (H_GW, a.gw), (H_GB, a.gb),
                      (H_RMEAN, a.rmean), (H_RVAR, a.rvar), (H_S0, a.src[0]),
                      (H_S1, a.src[1])):
        if addr:
            have |= bit
    d.have = have
    return d


class _Launcher:
    """The launches of one op: kernels of nn_ops named ``tl_nn_<name>_<f32|f64>`` on the
    current stream of the device holding ``out`` (an address)."""

    def __init__(self, a, out):
        self.sfx = "f64" if a.dtype == 9 else "f32"
        self.out = out
        self.d = _dev(a)
        self._index = None

    @property
    def index(self):
        # asked at the first launch: an op with nothing to do may hold no device memory
        if self._index is None:
            self._index = _ops.device_of(self.out)
        return self._index

    def p(self, addr):
        """A pointer argument; an absent one (NULL) passes the output's, not read."""
        return _runtime.ptr(addr or self.out)

    def each(self, name, total, *ptrs):
        """A grid-stride launch over ``total`` items."""
        if total > 0:
            self._go(name, _ops._grid(total), _ops.BLOCK, [self.d, *map(self.p, ptrs)])

    def rows(self, name, rows, length, *ptrs):
        """A block per row (or channel) of ``length`` elements."""
        if rows > 0:
            threads = 32
            while threads < 256 and threads < length:
                threads *= 2
            self._go(name, min(rows, ROW_BLOCKS), threads, [self.d, *map(self.p, ptrs)])

    def _go(self, name, grid, block, args):
        _ops._rt().launch("nn_ops", f"tl_nn_{name}_{self.sfx}", grid, block, args,
                          _ops._stream(self.index))

    def bad_slot(self):
        """A device int64 holding NN_NONE, through tensorlib's allocator."""
        import tensorlib
        return tensorlib.full((1,), NN_NONE, dtype=tensorlib.int64,
                              device=tensorlib.device("cuda", self.index))

    def read(self, addr):
        """The int64 at device address ``addr`` (waits for the stream)."""
        host = np.empty(1, np.int64)
        _ops.memcpy_dtoh(host, addr, self.index)
        return int(host[0])


def _prod(v):
    return v[0] * v[1] * v[2]


def _im2col(a):
    _Launcher(a, a.y).each("im2col", a.c * _prod(a.k) * a.n * _prod(a.out), a.x, a.y)


def _col2im(a):
    _Launcher(a, a.y).each("col2im", a.n * a.c * _prod(a.in_), a.x, a.y)


# The most multiply-adds per output (C_in/groups * kD*kH*kW) that conv_direct takes. The direct
# kernel saves two or more launches (about 20 us of host time each; grouped im2col launches a
# GEMM per group), but it reuses nothing between outputs: each thread loads all its inputs
# and weights, where the tiled GEMM shares them, so long sums (deep channels, big kernels)
# stay with the GEMM. 64 covers the small layers whose time is launch overhead (3x3 over up
# to 7 channels, 5x5 over 2, 7x7 over 1, depthwise kernels up to 8x8); the crossover itself
# has not been measured (an H200 ran a depthwise 5x5 in 178 us direct, 2.8 ms via im2col).
CONV_DIRECT_TAPS = 64
# below this every offset of the direct kernel fits in int (the tests lower it to 0 to run
# the 64-bit path)
CONV_DIRECT_INT32 = 2**30


def launch_conv_direct(sfx, index, total, params):
    """Queue ``tl_nn_conv_direct_<sfx>`` over ``total`` outputs on device ``index``: its
    parameter block (x, w, b, y, then the tl_nn_dev descriptor) packed in C by
    ``CUDABackend.conv_direct``, which also applies CONV_DIRECT_TAPS and CONV_DIRECT_INT32."""
    _ops._rt().launch_packed("nn_ops", f"tl_nn_conv_direct_{sfx}", _ops._grid(total),
                             _ops.BLOCK, params, 4, _ops._stream(index), index)


def _bias_add(a):
    _Launcher(a, a.y).each("bias_add", a.n * a.c * a.m, a.w, a.y)


def _bias_grad(a):
    _Launcher(a, a.gw).rows("bias_grad", a.c, a.n * a.m, a.g, a.gw)


def _accumulate(a):
    _Launcher(a, a.y).each("accumulate", a.n, a.x, a.y)


def _max_pool(a):
    _Launcher(a, a.y).each("max_pool", a.n * a.c * a.out[1] * a.out[2], a.x, a.y, a.idx)


def _avg_pool(a):
    _Launcher(a, a.y).each("avg_pool", a.n * a.c * a.out[1] * a.out[2], a.x, a.y)


def _avg_pool_bwd(a):
    _Launcher(a, a.y).each("avg_pool_bwd", a.n * a.c * a.in_[1] * a.in_[2], a.g, a.y)


def _adapt_avg(a):
    _Launcher(a, a.y).each("adapt_avg", a.n * a.c * a.out[1] * a.out[2], a.x, a.y)


def _adapt_avg_bwd(a):
    _Launcher(a, a.y).each("adapt_avg_bwd", a.n * a.c * a.in_[1] * a.in_[2], a.g, a.y)


def _adapt_max(a):
    _Launcher(a, a.y).each("adapt_max", a.n * a.c * a.out[1] * a.out[2], a.x, a.y, a.idx)


def _index(a, add):
    if a.n * a.dp == 0:
        return 0
    L = _Launcher(a, a.y)
    L._go("zero", _ops._grid(a.n * a.dp), _ops.BLOCK,
          [np.int64(a.n * a.dp), _runtime.ptr(a.y)])
    if a.sp == 0:
        return 0
    bad = L.bad_slot()
    L._go("index", _ops._grid(a.n), _ops.BLOCK,
          [L.d, L.p(a.g if add else a.x), L.p(a.idx), L.p(a.y), L.p(bad.data_ptr()),
           np.int32(add)])
    pos = L.read(bad.data_ptr())
    if pos == NN_NONE:
        return 0
    a.bad = L.read(a.idx + 8 * pos)
    return 1


def _bn_fwd(a):
    L = _Launcher(a, a.y)
    L.rows("bn_fwd", a.c, a.n * a.m, a.x, a.w, a.b, a.y, a.mean, a.rstd, a.rmean, a.rvar)


def _bn_bwd(a):
    L = _Launcher(a, a.y or a.gw or a.gb)
    L.rows("bn_bwd", a.c, a.n * a.m, a.x, a.g, a.w, a.mean, a.rstd, a.rmean, a.rvar, a.y,
           a.gw, a.gb)


def _rownorm_fwd(a):
    _Launcher(a, a.y).rows("rownorm_fwd", a.n, a.m, a.x, a.w, a.b, a.y, a.mean, a.rstd)


def _rownorm_bwd(a):
    out = a.y or a.gw or a.gb
    if not out:
        return
    L = _Launcher(a, out)
    if a.y:
        L.rows("rownorm_bwd", a.n, a.m, a.x, a.g, a.w, a.mean, a.rstd, a.y)
    if a.gw or a.gb:
        if a.mode == AFFINE_GROUP:
            L.rows("group_wgrad", a.groups * a.c, a.n // max(a.groups, 1) * a.hw, a.x, a.g,
                   a.mean, a.rstd, a.gw, a.gb)
        elif a.m:
            # NN_WG_X columns x NN_WG_Y row lanes a block (nn_ops.cu)
            L._go("layer_wgrad", min((a.m + 31) // 32, ROW_BLOCKS), (32, 16),
                  [L.d, *map(L.p, (a.x, a.g, a.mean, a.rstd, a.gw, a.gb))])


def _lstm_fwd(a):
    s, t = a.src, a.dst
    _Launcher(a, t[0]).each("lstm_fwd", a.n * a.m, s[0], s[1], s[2], s[3] if a.flag else 0,
                            s[4] if a.flag else 0, t[0], t[1], t[2])


def _lstm_bwd(a):
    s, t = a.src, a.dst
    _Launcher(a, t[0]).each("lstm_bwd", a.n * a.m, s[0], s[1], s[2], s[3], s[4], t[0], t[1])


def _gru_fwd(a):
    s, t = a.src, a.dst
    _Launcher(a, t[0]).each("gru_fwd", a.n * a.m, s[0], s[1], s[2], s[3] if a.flag else 0,
                            s[4] if a.flag else 0, t[0], t[1])


def _gru_bwd(a):
    s, t = a.src, a.dst
    _Launcher(a, t[0]).each("gru_bwd", a.n * a.m, s[0], s[1], t[0], t[1], t[2])


def _xent_fwd(a):
    L = _Launcher(a, a.dst[0] or a.gb)
    if a.n == 0:
        L._go("xent_sums", 1, 32, [L.d, L.p(0), L.p(0), L.p(a.gw), L.p(a.gb)])
        return 0
    bad = L.bad_slot()
    t = a.dst
    L.rows("xent_fwd", a.n, a.m, a.x, a.idx, a.w, t[0], t[1], t[2], bad.data_ptr())
    L.rows("xent_sums", 1, a.n, t[0], t[2], a.gw, a.gb)
    return 0 if L.read(bad.data_ptr()) == NN_NONE else 1


def _xent_bwd(a):
    _Launcher(a, a.y).rows("xent_bwd", a.n, a.m, a.x, a.g, a.idx, a.w, a.src[0], a.rstd,
                           a.y)


def _msoftmax(a):
    _Launcher(a, a.y).rows("msoftmax", a.n, a.m, a.x, a.b if a.mode else 0, a.y)


def _msoftmax_bwd(a):
    _Launcher(a, a.dst[0]).rows("msoftmax_bwd", a.n, a.m, a.src[0], a.g, a.dst[0])


# cpu_nn.h's TL_NN_* order; a function returns 1 for a bad index (in a.bad), else 0/None
_OPS = (_im2col, _col2im, _bias_add, _bias_grad, _accumulate, _max_pool, _avg_pool,
        _avg_pool_bwd, _adapt_avg, _adapt_avg_bwd, _adapt_max,
        lambda a: _index(a, 1), lambda a: _index(a, 0), _bn_fwd, _bn_bwd, _rownorm_fwd,
        _rownorm_bwd, _lstm_fwd, _lstm_bwd, _gru_fwd, _gru_bwd, _xent_fwd, _xent_bwd,
        _msoftmax, _msoftmax_bwd)


def run(op, name, address, size):
    """Run nn kernel ``op`` (cpu_nn.h's numbering; ``name`` for messages) of the tl_nn_args
    at ``address`` (``size`` bytes, checked against the mirror) on its device. Returns 1
    when an index kernel met an index outside its plane (stored in the descriptor's
    ``bad``), else 0.

    >>> try:
    ...     run(99, "nope", 0, ctypes.sizeof(NNArgs))
    ... except NotImplementedError as e:
    ...     print(str(e)[:40])
    the fused nn kernel 'nope' is not implem
    """
    if size != ctypes.sizeof(NNArgs):
        raise RuntimeError(f"tensorlib.cuda._nn: tl_nn_args is {size} bytes but its mirror "
                           f"{ctypes.sizeof(NNArgs)} (rebuild the core)")
    if not 0 <= op < len(_OPS):
        raise NotImplementedError(f"the fused nn kernel '{name}' is not implemented on the "
                                  f"CUDA back end yet (run the layer on the CPU)")
    a = NNArgs.from_address(address)
    if a.dtype not in (8, 9):
        raise RuntimeError(f"nn kernel {op}: unsupported dtype code {a.dtype}")
    a.bad = -2**63
    return _OPS[op](a) or 0
