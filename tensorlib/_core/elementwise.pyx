"""The elementwise family: arithmetic, comparisons, bitwise and logical ops, the math
functions, where/clamp/lerp, and the Python operators that run them.

An op-family module (see sorting.pyx): its front halves (elementwise.pxi), its generated
wrappers, autograd nodes and operator slots (build/generated/_ops_elementwise.pxi, from
tensorlib/ops/decl/elementwise.py) and its EwOps (_ew_ops.pxi), joined to the core by
tensor.pxd. The typed loops stay in the tensor module (cpu_elementwise.c, beside the driver
and the thread pool); the EwOps get their tables from it by name (``ew_loops``), and the
operator slots go into TensorBase's slot table (``_set_slot``) at import.
"""
include "family_prelude.pxi"
from tensorlib._core.kernels cimport *

# Python-level helpers of the core that the backward formulas call: bound by the tensor
# module (``_bind_family``) once every op family is loaded
_sizes_of = _scale = _zeros_grad = _max_min_share = _TORCH_TYPE_NAME = None
_clamp_backward = _clamp_bound_backward = _elu_backward = _gelu_backward = None
_pow_backward_exponent = _pow_backward_self = _silu_backward = _softplus_backward = None
_relu_backward = _atan2_recip = _C_TYPE_NAME = None

include "elementwise.pxi"
include "_ops_elementwise.pxi"
