# The opening every op-family module shares (included first by elementwise.pyx, linalg.pyx,
# reductions.pyx, sorting.pyx, random_ops.pyx, advindex.pyx): the C-level names of the core
# (tensor.pxd, joined by function pointers and Backend's vtable) and the op tables the
# family's generated code adds its ops to. Each module then cimports the kernel declarations
# it uses (kernels.pxd) and names the Python-level helpers its backward formulas call.
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
from tensorlib._core.tensor cimport *

import warnings

import numpy as np
from tensorlib._core import dtype as _dtype_mod
# the tables of every op, which the generated code adds this family's ops to
from tensorlib._core.tensor import (
    _GENERATED_FUNCTIONS, _GENERATED_METHODS, _NODE_CLASSES, _OPERATOR_SLOTS)
