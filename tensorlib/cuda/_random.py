"""Random fills on a CUDA device (``CUDABackend.random``): cuda/random_ops.cu's Philox
kernels at the generator's (seed, offset), so a device fill holds the CPU's numbers for the
same seed and the generator's offset advances by the blocks the CPU's fill would reserve.

The back end has already run the CPU fill's argument checks; here the generator (None: the
default one) reserves the fill's blocks and the kernel is queued on the current stream of
the tensor's device.

>>> import tensorlib                                                 # doctest: +SKIP
>>> tensorlib.manual_seed(0); a = tensorlib.randn(5, device="cuda")  # doctest: +SKIP
>>> tensorlib.manual_seed(0); b = tensorlib.randn(5)                 # doctest: +SKIP
>>> bool((a.cpu() == b).all())                                       # doctest: +SKIP
True
"""
import numpy as np

from tensorlib._core import random as _core_random

from . import _ops, _runtime

# RAND_* of tensorlib/_core/tensor.pxd
UNIFORM, NORMAL, INT64, BERNOULLI, PERM = range(5)
F32, F64 = 8, 9
_U64 = (1 << 64) - 1


def _blocks(n, per):
    return (n + per - 1) // per


def reserve(generator, nblocks):
    """(seed, offset) of a fill of ``nblocks`` Philox blocks, advancing the generator past
    them (modulo 2**64, as the CPU's generator wraps)."""
    g = _core_random.default_generator if generator is None else generator
    base = _core_random.Generator          # (a subclass's get_state returns a tensor)
    seed = int.from_bytes(base.get_state(g)[8:16], "little")
    off = base.get_offset(g)
    base.set_offset(g, (off + nblocks) & _U64)
    return seed, off


def fill(kind, dtype, address, n, generator, a, b, lo, span):
    """Fill the ``n`` contiguous elements at ``address`` (dtype code ``dtype``: float32/64
    for uniform/normal, int64 for integers and permutations, bool for bernoulli)."""
    if n <= 0:
        return
    rt = _runtime.get_runtime()
    index = _ops.device_of(address)
    stream = _ops._stream(index)
    out = _runtime.ptr(address)
    dbl = dtype == F64
    if kind == UNIFORM:
        seed, off = reserve(generator, _blocks(n, 2 if dbl else 4))
        grid = _ops._grid(_blocks(n, 2 if dbl else 4))
        head = [out, np.int64(n), np.uint64(seed), np.uint64(off), np.float64(a),
                np.float64(b - a)]
        if dbl:
            dmax = np.nextafter(np.float64(b), -np.inf) if b > a else np.float64(a)
            rt.launch("random_ops", "tl_philox_uniform_f64", grid, _ops.BLOCK,
                      head + [np.float64(dmax)], stream)
        else:
            flo, fhi = np.float32(a), np.float32(b)
            fmax = np.nextafter(fhi, np.float32(-np.inf)) if fhi > flo else flo
            rt.launch("random_ops", "tl_philox_uniform_f32", grid, _ops.BLOCK,
                      head + [np.float32(flo), np.float32(fmax)], stream)
    elif kind == NORMAL:
        per = 2 if dbl else 4
        seed, off = reserve(generator, _blocks(n, per))
        rt.launch("random_ops", "tl_philox_normal_f64" if dbl else "tl_philox_normal_f32",
                  _ops._grid(_blocks(n, per)), _ops.BLOCK,
                  [out, np.int64(n), np.uint64(seed), np.uint64(off), np.float64(a),
                   np.float64(b)], stream)
    elif kind == INT64:
        seed, off = reserve(generator, _blocks(n, 2))
        rt.launch("random_ops", "tl_philox_int64", _ops._grid(_blocks(n, 2)), _ops.BLOCK,
                  [out, np.int64(n), np.uint64(seed), np.uint64(off), np.int64(lo),
                   np.uint64(span & _U64)], stream)
    elif kind == BERNOULLI:
        seed, off = reserve(generator, _blocks(n, 2))
        rt.launch("random_ops", "tl_philox_bernoulli", _ops._grid(_blocks(n, 2)), _ops.BLOCK,
                  [out, np.int64(n), np.uint64(seed), np.uint64(off),
                   np.float64(a * 9007199254740992.0)], stream)
    elif kind == PERM:
        seed, off = reserve(generator, _blocks(n, 2))
        rt.launch("random_ops", "tl_philox_randperm", 1, 1,
                  [out, np.int64(n), np.uint64(seed), np.uint64(off)], stream)
    else:
        raise ValueError(f"CUDA random fill: unknown kind {kind}")
