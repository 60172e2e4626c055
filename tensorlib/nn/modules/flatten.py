"""``Flatten`` and ``Unflatten``: reshape one range of dimensions (PyTorch's ``torch.nn``).

>>> tensorlib.nn.Flatten()(tensorlib.zeros(2, 3, 4)).shape
tensorlib.Size([2, 12])
>>> tensorlib.nn.Unflatten(1, (3, 4))(tensorlib.zeros(2, 12)).shape
tensorlib.Size([2, 3, 4])
"""
from tensorlib.nn.modules.module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flatten dims ``start_dim`` .. ``end_dim`` into one (by default all but the batch
    dimension).

    >>> tensorlib.nn.Flatten(0, -1)(tensorlib.zeros(2, 3)).shape
    tensorlib.Size([6])
    """

    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size`` (a tuple or list of ints, one of
    which may be -1).

    >>> tensorlib.nn.Unflatten(-1, [2, -1])(tensorlib.zeros(3, 8)).shape
    tensorlib.Size([3, 2, 4])
    """

    __constants__ = ["dim", "unflattened_size"]

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self._require_tuple_int(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    @staticmethod
    def _require_tuple_int(value):
        if isinstance(value, (tuple, list)):
            for i, elem in enumerate(value):
                if not isinstance(elem, int):
                    raise TypeError(f"unflattened_size must be tuple of ints, but found element "
                                    f"of type {type(elem).__name__} at pos {i}")
            return
        raise TypeError(f"unflattened_size must be a tuple of ints, but found type "
                        f"{type(value).__name__}")

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
