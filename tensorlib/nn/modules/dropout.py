"""Dropout layers (active in training mode only), PyTorch's names and reprs.

>>> d = tensorlib.nn.Dropout(0.2); d
Dropout(p=0.2, inplace=False)
>>> d.eval()(tensorlib.ones(2)).tolist()
[1.0, 1.0]
"""
from tensorlib.nn import functional as F
from tensorlib.nn.modules.module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout"]


class _DropoutNd(Module):
    __constants__ = ["p", "inplace"]
    _fn = None

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero elements with probability p, scale the rest by 1 / (1 - p).

    >>> Dropout(1.0)(tensorlib.ones(2)).tolist()
    [0.0, 0.0]
    """
    _fn = staticmethod(F.dropout)


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) / (C, L) inputs.

    >>> Dropout1d()
    Dropout1d(p=0.5, inplace=False)
    """
    _fn = staticmethod(F.dropout1d)


class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) inputs.

    >>> Dropout2d()
    Dropout2d(p=0.5, inplace=False)
    """
    _fn = staticmethod(F.dropout2d)


class Dropout3d(_DropoutNd):
    """Zero whole channels of (N, C, D, H, W) inputs.

    >>> Dropout3d()
    Dropout3d(p=0.5, inplace=False)
    """
    _fn = staticmethod(F.dropout3d)


class AlphaDropout(_DropoutNd):
    """Dropout keeping a SELU network's mean and variance.

    >>> AlphaDropout()
    AlphaDropout(p=0.5, inplace=False)
    """
    _fn = staticmethod(F.alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    """AlphaDropout of whole channels.

    >>> FeatureAlphaDropout()
    FeatureAlphaDropout(p=0.5, inplace=False)
    """
    _fn = staticmethod(F.feature_alpha_dropout)
