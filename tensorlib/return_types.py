"""Named-tuple results of ops that return several tensors, like ``torch.return_types``.

>>> values, indices = tensorlib.tensor([[1, 3, 2]]).max(1)
>>> isinstance(tensorlib.tensor([[1]]).max(1), tensorlib.return_types.max)
True
"""
from tensorlib._core.tensor import _RETURN_TYPES

globals().update(_RETURN_TYPES)
__all__ = sorted(_RETURN_TYPES)
