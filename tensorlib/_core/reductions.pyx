"""The reductions family: sum, mean, prod, std/var, max/min, amax/amin, argmax/argmin,
all/any, count_nonzero, norm, logsumexp, cumsum/cumprod, softmax/log_softmax.

An op-family module (see sorting.pyx): its front halves (reduce.pxi) and its generated
wrappers, autograd nodes and slots (build/generated/_ops_reductions.pxi, from
tensorlib/ops/decl/reductions.py), joined to the core by tensor.pxd.
"""
include "family_prelude.pxi"
from tensorlib._core.kernels cimport *

# Python-level helpers of the core that the backward formulas call: bound by the tensor
# module (``_bind_family``) once every op family is loaded
_sizes_of = _bw_reduced_count = _evenly_distribute = _evenly_distribute_all = None
_expand_reduced = _max_backward = _max_min_share = _norm_backward = _var_backward = None
_std_backward = None
_TORCH_TYPE_NAME = None

include "reduce.pxi"
include "_ops_reductions.pxi"
