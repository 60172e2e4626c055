"""The sorting family: sort/argsort/msort, topk, kthvalue, median/nanmedian, mode, unique.

An op-family module: its front halves (sort.pxi) and its generated wrappers, autograd nodes
and tables (build/generated/_ops_sorting.pxi, from tensorlib/ops/decl/sorting.py). It reaches
the core through tensor.pxd (TensorBase, the back end, autograd recording: C calls); the
tensor module imports it at the end of its own initialization, takes its Python-level names
and binds the names it left None (``_join_family``/``_bind_family``), so
``tensorlib._core.tensor`` still names every op and formulas call helpers by name.
"""
include "family_prelude.pxi"
from tensorlib._core.kernels cimport tl_rows_t, RowsOp, _OP_SORT, _OP_TOPK, _OP_SELECT, _OP_MODE
from tensorlib._core.kernels cimport TL_SELECT_KTH, TL_SELECT_MEDIAN, TL_SELECT_NANMEDIAN

# Python-level helpers of the core that the backward formulas call: bound by the tensor
# module (``_bind_family``) once every op family is loaded
_evenly_distribute_all = _sizes_of = _take_along_backward = None

include "sort.pxi"
include "_ops_sorting.pxi"
