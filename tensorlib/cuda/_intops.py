"""The CUDA back end's integer matrix product (``CUDABackend.igemm``) and in-place scaling
(``CUDABackend.scale``): cuda/int_ops.cu's kernels, queued on the current stream of the
output's device.

>>> import tensorlib                                                        # doctest: +SKIP
>>> a = tensorlib.tensor([[1, 2], [3, 4]], device="cuda")                   # doctest: +SKIP
>>> (a @ a).cpu().tolist()                                                  # doctest: +SKIP
[[7, 10], [15, 22]]
"""
import ctypes

import numpy as np

from . import _ops, _runtime


class IgemmArgs(ctypes.Structure):
    """cpu_linalg.h's ``tl_igemm_args``, field for field."""
    _fields_ = [(f, ctypes.c_int64) for f in ("B", "M", "N", "K")] + [
        ("a", ctypes.c_void_p)] + [(f, ctypes.c_int64) for f in ("sab", "sam", "sak")] + [
        ("b", ctypes.c_void_p)] + [(f, ctypes.c_int64) for f in ("sbb", "sbk", "sbn")] + [
        ("c", ctypes.c_void_p)]


class IgemmDev(ctypes.Structure):
    """``tl_igemm_dev`` of cuda/int_ops.cu."""
    _fields_ = [(f, ctypes.c_longlong) for f in
                ("B", "M", "N", "K", "sab", "sam", "sak", "sbb", "sbk", "sbn")]


def igemm(address):
    """Run the ``tl_igemm_args`` at ``address``: c (contiguous int64 [B, M, N]) = a @ b."""
    g = IgemmArgs.from_address(address)
    total = g.B * g.M * g.N
    if total <= 0:
        return
    d = IgemmDev(*[getattr(g, f) for f, _ in IgemmDev._fields_])
    c = g.c
    # with K == 0 the operands may hold no memory: the output's address stands in, unread
    a = g.a if g.K > 0 else c
    b = g.b if g.K > 0 else c
    index = _ops.device_of(c)
    _runtime.get_runtime().launch(
        "int_ops", "tl_igemm_i64", _ops._grid(total), _ops.BLOCK,
        [_runtime.ptr(c), _runtime.ptr(a), _runtime.ptr(b), d], _ops._stream(index))


def scale(dtype, n, address, alpha_d, alpha_i):
    """``n`` contiguous elements of dtype code ``dtype`` at ``address`` *= alpha (alpha_d for
    floating types, alpha_i for integers and bool), as the CPU's tl_index_scale."""
    if n <= 0:
        return
    _runtime.get_runtime().launch(
        "int_ops", "tl_scale", _ops._grid(n), _ops.BLOCK,
        [_runtime.ptr(address), np.int64(n), np.int32(dtype), np.float64(alpha_d),
         np.int64(alpha_i)], _ops._stream(_ops.device_of(address)))
