"""The sorting family: sort/argsort/msort, topk, kthvalue, median/nanmedian, mode, unique.

An op-family module: its front halves (sort.pxi) and its generated wrappers, autograd nodes
and tables (build/generated/_ops_sorting.pxi, from tensorlib/ops/decl/sorting.py). It reaches
the core through tensor.pxd (TensorBase, the back end, autograd recording: C calls); the
tensor module imports it at the end of its own initialization, takes its Python-level names
and binds the names it left None (``_join_family``/``_bind_family``), so
``tensorlib._core.tensor`` still names every op and formulas call helpers by name.
"""
cimport cython
from libc.stdint cimport int64_t, uint64_t, uint8_t, uint16_t, INT64_MAX, INT64_MIN
from libc.stdlib cimport malloc, free, qsort
from libc.string cimport memcmp, memcpy, memmove, memset
from libc.math cimport (
    ceil as c_ceil, floor as c_floor, pow as c_pow, isfinite as c_isfinite, isnan as c_isnan)

from tensorlib._core.dtype cimport (
    dtype as DType, dtype_of, default_float_dtype, as_dtype, promote_codes, can_cast_codes,
    DT_BOOL, DT_UINT8, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_FLOAT16, DT_BFLOAT16,
    DT_FLOAT32, DT_FLOAT64, NUM_DTYPES)
from tensorlib._core.allocator cimport Storage, device as Device, CPU, META, as_device
from tensorlib._core.kernels cimport tl_rows_t, RowsOp, _OP_SORT, _OP_TOPK, _OP_SELECT, _OP_MODE
from tensorlib._core.kernels cimport TL_SELECT_KTH, TL_SELECT_MEDIAN, TL_SELECT_NANMEDIAN
from tensorlib._core.tensor cimport *

import warnings

import numpy as np
from tensorlib._core import dtype as _dtype_mod
# the tables of every op, which the generated code adds this family's ops to
from tensorlib._core.tensor import (
    _GENERATED_FUNCTIONS, _GENERATED_METHODS, _NODE_CLASSES, _OPERATOR_SLOTS)

# Python-level helpers of the core that the backward formulas call: bound by the tensor
# module (``_bind_family``) once every op family is loaded
_evenly_distribute_all = _sizes_of = _take_along_backward = None

include "sort.pxi"
include "_ops_sorting.pxi"
