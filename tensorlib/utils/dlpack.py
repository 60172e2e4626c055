"""DLPack exchange, PyTorch's ``torch.utils.dlpack``: ``to_dlpack`` makes a capsule of a
tensor, ``from_dlpack`` takes a capsule or any object with ``__dlpack__`` (a NumPy array, a
PyTorch, JAX or CuPy CPU array), both without copying.

>>> from tensorlib.utils.dlpack import to_dlpack, from_dlpack
>>> t = from_dlpack(to_dlpack(tensorlib.arange(3)))
>>> t.tolist()
[0, 1, 2]
"""
from tensorlib._core.tensor import from_dlpack

__all__ = ["to_dlpack", "from_dlpack"]


def to_dlpack(tensor):
    """A legacy ``"dltensor"`` DLPack capsule over ``tensor``'s memory (no copy), to be
    consumed once by another library's ``from_dlpack``; the capsule keeps the tensor alive.
    Consumers that know DLPack 1.x take the tensor itself (``__dlpack__``) instead.

    >>> tensorlib.utils.dlpack.to_dlpack(tensorlib.zeros(2))  # doctest: +ELLIPSIS
    <capsule object "dltensor" at ...>
    """
    return tensor.__dlpack__()
