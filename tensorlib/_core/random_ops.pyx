"""The random family: rand/randn/randint/randperm, the in-place fills (uniform_, normal_,
random_, bernoulli_) and bernoulli/normal.

An op-family module (see sorting.pyx): its front halves (random_ops.pxi) and its generated
wrappers and autograd nodes (build/generated/_ops_random.pxi, from
tensorlib/ops/decl/random.py), joined to the core by tensor.pxd. The fills themselves (the
Philox streams of random.pyx) are the CPU back end's ``random``, in the tensor module.
"""
include "family_prelude.pxi"
from tensorlib._core.kernels cimport *

# Python-level helpers of the core that the backward formulas call: bound by the tensor
# module (``_bind_family``) once every op family is loaded
_INT_RANGE = _zeros_grad = _TORCH_TYPE_NAME = None

include "random_ops.pxi"
include "_ops_random.pxi"
