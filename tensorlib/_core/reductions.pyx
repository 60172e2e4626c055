"""The reductions family: sum, mean, prod, std/var, max/min, amax/amin, argmax/argmin,
all/any, count_nonzero, norm, logsumexp, cumsum/cumprod, softmax/log_softmax.

An op-family module (see sorting.pyx): its front halves (reduce.pxi) and its generated
wrappers, autograd nodes and slots (build/generated/_ops_reductions.pxi, from
tensorlib/ops/decl/reductions.py), joined to the core by tensor.pxd.
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
from tensorlib._core.kernels cimport *
from tensorlib._core.tensor cimport *

import warnings

import numpy as np
from tensorlib._core import dtype as _dtype_mod
# the tables of every op, which the generated code adds this family's ops to
from tensorlib._core.tensor import (
    _GENERATED_FUNCTIONS, _GENERATED_METHODS, _NODE_CLASSES, _OPERATOR_SLOTS)

# Python-level helpers of the core that the backward formulas call: bound by the tensor
# module (``_bind_family``) once every op family is loaded
_sizes_of = _bw_reduced_count = _evenly_distribute = _evenly_distribute_all = None
_expand_reduced = _max_backward = _max_min_share = _norm_backward = _var_backward = None
_TORCH_TYPE_NAME = None

include "reduce.pxi"
include "_ops_reductions.pxi"
