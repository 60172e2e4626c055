"""Linear layers: ``Identity``, ``Linear``, ``Bilinear`` (PyTorch's ``torch.nn`` names,
arguments, default initialisation and reprs).

>>> fc = tensorlib.nn.Linear(3, 2)
>>> fc
Linear(in_features=3, out_features=2, bias=True)
>>> fc(tensorlib.zeros(5, 3)).shape
tensorlib.Size([5, 2])
"""
import math

import tensorlib
from tensorlib._core import tensor as _C
from tensorlib.nn import functional as F, init
from tensorlib.nn.modules.module import Module
from tensorlib.nn.parameter import Parameter

__all__ = ["Identity", "Linear", "Bilinear"]


# -- the initialisation and functional forms these layers need: tensorlib.nn.init and
#    tensorlib.nn.functional's when they define them, else these small equivalents ------------
def _uniform_(t, bound):
    """Fill ``t`` in place from U(-bound, bound), outside autograd."""
    if hasattr(init, "uniform_"):
        return init.uniform_(t, -bound, bound)
    prev = _C._set_grad_enabled(False)
    try:
        return t.uniform_(-bound, bound)
    finally:
        _C._set_grad_enabled(prev)


def _fan_in(t):
    """Inputs per output unit: size(1) times the receptive field (dims 2..)."""
    if t.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    return t.shape[1] * math.prod(t.shape[2:])


def _kaiming_uniform_a_sqrt5_(t):
    if hasattr(init, "kaiming_uniform_"):
        return init.kaiming_uniform_(t, a=math.sqrt(5))
    # kaiming_uniform_(t, a=sqrt(5)): gain sqrt(2 / (1 + 5)), bound gain * sqrt(3 / fan_in),
    # which is 1 / sqrt(fan_in)
    fan_in = _fan_in(t)
    gain = math.sqrt(2.0 / (1 + 5))
    bound = math.sqrt(3.0) * gain / math.sqrt(fan_in) if fan_in > 0 else 0.0
    return _uniform_(t, bound)


def _linear(input, weight, bias=None):
    """y = input @ weight.T + bias (one fused addmm for 2-d input)."""
    if bias is not None and input.ndim == 2:
        return tensorlib.addmm(bias, input, weight.t())
    out = tensorlib.matmul(input, weight.t())
    return out if bias is None else out + bias


def _bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]."""
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-dimensional, got {weight.ndim} dims")
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    for d in range(input1.ndim - 1):
        if input1.shape[d] != input2.shape[d]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: "
                               f"got {input1.shape[d]} and {input2.shape[d]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {weight.shape[2]}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[-1] if bias.ndim else 1} but expected {weight.shape[0]}")
    out = tensorlib.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


_F_linear = getattr(F, "linear", _linear)
_F_bilinear = getattr(F, "bilinear", _bilinear)


class Identity(Module):
    """Returns its input unchanged (arguments are accepted and ignored).

    >>> tensorlib.nn.Identity(54, unused="x")(tensorlib.ones(2)).tolist()
    [1.0, 1.0]
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x A^T + b over the last dimension: ``weight`` (out_features, in_features) and
    ``bias`` (out_features), both drawn from U(-1/sqrt(in_features), 1/sqrt(in_features))
    as in PyTorch.

    >>> fc = tensorlib.nn.Linear(4, 3, bias=False); fc.weight.shape, fc.bias
    (tensorlib.Size([3, 4]), None)
    """

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(tensorlib.empty((out_features, in_features), device=device,
                                                dtype=dtype))
        if bias:
            self.bias = Parameter(tensorlib.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw new weights (kaiming_uniform_ with a=sqrt(5)) and bias
        (U(-1/sqrt(fan_in), 1/sqrt(fan_in)))."""
        _kaiming_uniform_a_sqrt5_(self.weight)
        if self.bias is not None:
            fan_in = _fan_in(self.weight)
            _uniform_(self.bias, 1 / math.sqrt(fan_in) if fan_in > 0 else 0)

    def forward(self, input):
        # the parameters straight from their dict: attribute access would first fail on the
        # instance and then reach Module.__getattr__ (a parametrized weight is a property of
        # the module's class and no longer in the dict)
        params = self._parameters
        weight = params["weight"] if "weight" in params else self.weight
        bias = params["bias"] if "bias" in params else self.bias
        return _F_linear(input, weight, bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """y = x1^T A x2 + b: ``weight`` (out_features, in1_features, in2_features), ``bias``
    (out_features), both from U(-1/sqrt(in1_features), 1/sqrt(in1_features)).

    >>> bl = tensorlib.nn.Bilinear(2, 3, 4)
    >>> bl(tensorlib.ones(5, 2), tensorlib.ones(5, 3)).shape
    tensorlib.Size([5, 4])
    """

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(tensorlib.empty((out_features, in1_features, in2_features),
                                                device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(tensorlib.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw new weight and bias from U(-1/sqrt(in1_features), 1/sqrt(in1_features))."""
        bound = 1 / math.sqrt(self.weight.shape[1]) if self.weight.shape[1] > 0 else 0.0
        _uniform_(self.weight, bound)
        if self.bias is not None:
            _uniform_(self.bias, bound)

    def forward(self, input1, input2):
        return _F_bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
