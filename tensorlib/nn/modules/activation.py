"""Activation layers over ``tensorlib.nn.functional``, PyTorch's names, arguments and reprs.

>>> tensorlib.nn.LeakyReLU(0.2)
LeakyReLU(negative_slope=0.2)
>>> tensorlib.nn.ReLU()(tensorlib.tensor([-1.0, 2.0])).tolist()
[0.0, 2.0]
"""
import tensorlib
from tensorlib.nn import functional as F
from tensorlib.nn.modules.module import Module
from tensorlib.nn.parameter import Parameter

__all__ = ["Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh",
           "SiLU", "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink",
           "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink", "PReLU", "Softsign",
           "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax"]


def _inplace_only(inplace):
    return "inplace=True" if inplace else ""


def _inplace_tail(inplace):
    return ", inplace=True" if inplace else ""


class Threshold(Module):
    """``x`` if x > threshold else ``value``.

    >>> Threshold(0.5, -1.0)(tensorlib.tensor([0.2, 1.0])).tolist()
    [-1.0, 1.0]
    """

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_inplace_tail(self.inplace)}"


class ReLU(Module):
    """max(x, 0).

    >>> ReLU(inplace=True)
    ReLU(inplace=True)
    """

    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_only(self.inplace)


class RReLU(Module):
    """Randomized leaky ReLU (random slopes in training, their mean in eval).

    >>> RReLU()
    RReLU(lower=0.125, upper=0.3333333333333333)
    """

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_inplace_tail(self.inplace)}"


class Hardtanh(Module):
    """clamp(x, min_val, max_val).

    >>> Hardtanh(-2.0, 2.0)
    Hardtanh(min_val=-2.0, max_val=2.0)
    """

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None or max_value is not None:
            import warnings
            warnings.warn("keyword argument `min_value` and `max_value` is deprecated and "
                          "renamed to `min_val` and `max_val`", FutureWarning, stacklevel=2)
            min_val = min_value if min_value is not None else min_val
            max_val = max_value if max_value is not None else max_val
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        assert self.max_val > self.min_val

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_tail(self.inplace)}"


class ReLU6(Hardtanh):
    """min(max(x, 0), 6).

    >>> ReLU6()(tensorlib.tensor([7.0])).tolist()
    [6.0]
    """

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_only(self.inplace)


class _Stateless(Module):
    _fn = None

    def forward(self, input):
        return type(self)._fn(input)


class Sigmoid(_Stateless):
    """1 / (1 + exp(-x)).

    >>> Sigmoid()(tensorlib.tensor([0.0])).tolist()
    [0.5]
    """
    _fn = staticmethod(F.sigmoid)


class Tanh(_Stateless):
    """Hyperbolic tangent.

    >>> Tanh()(tensorlib.tensor([0.0])).tolist()
    [0.0]
    """
    _fn = staticmethod(F.tanh)


class LogSigmoid(_Stateless):
    """log(sigmoid(x)).

    >>> round(LogSigmoid()(tensorlib.tensor([0.0])).item(), 4)
    -0.6931
    """
    _fn = staticmethod(F.logsigmoid)


class Softsign(_Stateless):
    """x / (1 + |x|).

    >>> Softsign()(tensorlib.tensor([1.0])).tolist()
    [0.5]
    """
    _fn = staticmethod(F.softsign)


class Tanhshrink(_Stateless):
    """x - tanh(x).

    >>> Tanhshrink()(tensorlib.tensor([0.0])).tolist()
    [0.0]
    """
    _fn = staticmethod(F.tanhshrink)


class _InplaceAct(Module):
    __constants__ = ["inplace"]
    _fn = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, inplace=self.inplace)


class Hardsigmoid(_InplaceAct):
    """relu6(x + 3) / 6.

    >>> Hardsigmoid()(tensorlib.tensor([0.0])).tolist()
    [0.5]
    """
    _fn = staticmethod(F.hardsigmoid)


class Hardswish(_InplaceAct):
    """x * relu6(x + 3) / 6.

    >>> Hardswish()(tensorlib.tensor([4.0])).tolist()
    [4.0]
    """
    _fn = staticmethod(F.hardswish)


class SiLU(_InplaceAct):
    """x * sigmoid(x).

    >>> SiLU(inplace=True)
    SiLU(inplace=True)
    """
    _fn = staticmethod(F.silu)

    def extra_repr(self):
        return _inplace_only(self.inplace)


class Mish(_InplaceAct):
    """x * tanh(softplus(x)).

    >>> Mish()(tensorlib.tensor([0.0])).tolist()
    [0.0]
    """
    _fn = staticmethod(F.mish)

    def extra_repr(self):
        return _inplace_only(self.inplace)


class SELU(_InplaceAct):
    """Scaled ELU with the self-normalising constants.

    >>> SELU()
    SELU()
    """
    _fn = staticmethod(F.selu)

    def extra_repr(self):
        return _inplace_only(self.inplace)


class ELU(Module):
    """``x`` if x > 0 else ``alpha * (exp(x) - 1)``.

    >>> ELU(0.5)
    ELU(alpha=0.5)
    """

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_tail(self.inplace)}"


class CELU(ELU):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

    >>> CELU()
    CELU(alpha=1.0)
    """

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class GLU(Module):
    """a * sigmoid(b) for the halves of ``dim``.

    >>> GLU()
    GLU(dim=-1)
    """

    __constants__ = ["dim"]

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(Module):
    """x * Phi(x) (``approximate='tanh'``: the tanh approximation).

    >>> GELU()
    GELU(approximate='none')
    """

    __constants__ = ["approximate"]

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    """``x`` if |x| > lambd else 0.

    >>> Hardshrink()
    Hardshrink(0.5)
    """

    __constants__ = ["lambd"]

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """Shrink towards 0 by lambd, 0 inside [-lambd, lambd].

    >>> Softshrink(0.2)
    Softshrink(0.2)
    """

    def forward(self, input):
        return F.softshrink(input, self.lambd)


class LeakyReLU(Module):
    """``x`` if x > 0 else ``negative_slope * x``.

    >>> LeakyReLU()
    LeakyReLU(negative_slope=0.01)
    """

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_tail(self.inplace)}"


class Softplus(Module):
    """log(1 + exp(beta x)) / beta, linear above ``threshold``.

    >>> Softplus()
    Softplus(beta=1.0, threshold=20.0)
    """

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(Module):
    """Leaky ReLU with a learnable slope per channel (or one for all), initialised to
    ``init``.

    >>> PReLU(3).weight.tolist()
    [0.25, 0.25, 0.25]
    """

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(tensorlib.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        """Fill the slopes with ``init``."""
        with tensorlib.no_grad():
            self.weight.fill_(self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class _SoftmaxBase(Module):
    __constants__ = ["dim"]
    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input):
        return type(self)._fn(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    """Softmax along ``dim``.

    >>> Softmax(dim=0)(tensorlib.zeros(2)).tolist()
    [0.5, 0.5]
    """
    _fn = staticmethod(F.softmax)


class Softmin(_SoftmaxBase):
    """Softmax of -x along ``dim``.

    >>> Softmin(dim=0)
    Softmin(dim=0)
    """
    _fn = staticmethod(F.softmin)


class LogSoftmax(_SoftmaxBase):
    """log(softmax(x)) along ``dim``.

    >>> LogSoftmax(dim=1)
    LogSoftmax(dim=1)
    """
    _fn = staticmethod(F.log_softmax)


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of a (N, C, H, W) or (C, H, W) input.

    >>> Softmax2d()(tensorlib.zeros(2, 1, 1)).reshape(-1).tolist()
    [0.5, 0.5]
    """

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)
