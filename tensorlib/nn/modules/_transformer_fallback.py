"""``LayerNorm`` and ``Dropout`` for the Transformer layers, used only while
``tensorlib.nn.modules.normalization``/``dropout`` are absent from the tree; the same
parameter names, defaults and reprs as PyTorch's, over ``F.layer_norm``/``F.dropout``.

>>> LayerNorm(3)
LayerNorm((3,), eps=1e-05, elementwise_affine=True, bias=True)
"""
import tensorlib
from tensorlib.nn import functional as F
from tensorlib.nn.modules.module import Module
from tensorlib.nn.parameter import Parameter

__all__ = ["LayerNorm", "Dropout"]


class LayerNorm(Module):
    """Layer normalisation over the trailing ``normalized_shape`` dims with a learnt
    ``weight`` (ones) and ``bias`` (zeros).

    >>> [round(v, 4) for v in LayerNorm(2)(tensorlib.tensor([[1.0, 3.0]]))[0].tolist()]
    [-1.0, 1.0]
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        fk = {"device": device, "dtype": dtype}
        if elementwise_affine:
            self.weight = Parameter(tensorlib.ones(self.normalized_shape, **fk))
            if bias:
                self.bias = Parameter(tensorlib.zeros(self.normalized_shape, **fk))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class Dropout(Module):
    """Zero each element with probability ``p`` in training mode, scaling the rest by
    1 / (1 - p); the identity in eval mode.

    >>> Dropout(0.5).eval()(tensorlib.ones(2)).tolist()
    [1.0, 1.0]
    """

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"
