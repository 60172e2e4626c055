"""The linalg family: mm, matmul, bmm, mv, dot, outer, addmm, addmv, baddbmm, tensordot,
einsum.

An op-family module (see sorting.pyx): its front halves (linalg.pxi) and its generated
wrappers, autograd nodes and operator slots (build/generated/_ops_linalg.pxi, from
tensorlib/ops/decl/linalg.py), joined to the core by tensor.pxd. The CPU product itself
(NumPy's BLAS into our memory, or our small-product loop) is the CPU back end's ``bmm``,
in the tensor module (backend.pxi).
"""
include "family_prelude.pxi"
from tensorlib._core.kernels cimport *

# Python-level helpers of the core that the backward formulas call: bound by the tensor
# module (``_bind_family``) once every op family is loaded
_sizes_of = _scale = _INT_RANGE = None

include "linalg.pxi"
include "_ops_linalg.pxi"
