"""Fused ops over tensorlib tensors written outside tensorlib: ``scale_add(x, y, a)`` is
``a * x + y`` in one pass.

- ``scale_add``: Cython, a raw loop over the data pointers (contiguous float32/float64);
- ``scale_add_rows``: Cython, a ``prange`` over the rows of 2-D tensors without the GIL
  (any strides);
- ``scale_add_``: Cython, in place into ``x`` through tensorlib's write door;
- ``softmax_rows``: Cython, row-wise softmax whose per-row scratch comes from tensorlib's
  allocator (counted, and seen by the memory profiler as ``temporary`` memory of
  ``softmax_rows``);
- ``c_scale_add``: the same op in plain C through ``tensorlib.h``;
- ``wrap``/``c_wrap``: tensors over memory tensorlib does not own (``from_pointer``).

>>> import tensorlib, tl_fused
>>> tl_fused.scale_add(tensorlib.ones(3), tensorlib.arange(3.0), 2.0).tolist()
[2.0, 3.0, 4.0]
"""
from tl_fused._cyfused import (scale_add, scale_add_rows, scale_add_, softmax_rows, hold_scratch,
                               wrap, wrap_address, identity, info, bump, empty, empty_like,
                               built_against)
from tl_fused._cfused import (c_scale_add, c_scale_add_, c_wrap, c_wrap_address, c_scratch,
                              c_identity, c_info, c_bump, c_empty_like, c_built_against)

__all__ = ["scale_add", "scale_add_rows", "scale_add_", "softmax_rows", "hold_scratch", "wrap",
           "wrap_address", "identity", "info", "bump", "empty", "empty_like", "built_against",
           "c_scale_add", "c_scale_add_", "c_wrap", "c_wrap_address", "c_scratch", "c_identity",
           "c_info", "c_bump", "c_empty_like", "c_built_against"]
