"""The indexing family: advanced subscripts (x[int tensors / lists / masks], get and set),
index_put_, gather/scatter/scatter_add/scatter_reduce, index_select/index_add_/index_copy_/
index_fill_, masked_select/masked_scatter_, nonzero/argwhere, take/put_.

An op-family module (see sorting.pyx): its front halves (advindex.pxi) and its generated
wrappers and autograd nodes (build/generated/_ops_indexing.pxi, from
tensorlib/ops/decl/indexing.py), joined to the core by tensor.pxd. Basic subscripts stay in
the tensor module (indexing.pxi), which calls in here through pointers this module installs
(``_set_advanced_indexing``).
"""
include "family_prelude.pxi"
from tensorlib._core.kernels cimport *
from libc.stdint cimport uintptr_t

# Python-level helpers of the core that the backward formulas call: bound by the tensor
# module (``_bind_family``) once every op family is loaded
_INT_RANGE = _embed_backward = _scale = _sizes_of = None

include "advindex.pxi"
include "_ops_indexing.pxi"
