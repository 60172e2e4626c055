"""Named tuples returned by ops that give several tensors, named as ``torch.return_types``.

>>> tensorlib.sort(tensorlib.tensor([2, 1])).indices.tolist()
[1, 0]
"""
from collections import namedtuple

# One per line, alphabetical, so families can add theirs without conflicts.
kthvalue = namedtuple("kthvalue", ["values", "indices"])
median = namedtuple("median", ["values", "indices"])
mode = namedtuple("mode", ["values", "indices"])
nanmedian = namedtuple("nanmedian", ["values", "indices"])
sort = namedtuple("sort", ["values", "indices"])
topk = namedtuple("topk", ["values", "indices"])

# the reductions' (values, indices) types (max, min, aminmax ...) live with their ops
from tensorlib._core.tensor import _RETURN_TYPES  # noqa: E402

globals().update({k: v for k, v in _RETURN_TYPES.items() if k not in globals()})
