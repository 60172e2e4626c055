"""Functional activations, PyTorch's ``torch.nn.functional`` names and signatures.

>>> import tensorlib.nn.functional as F
>>> F.gelu(tensorlib.tensor([0.0])).tolist()
[0.0]
"""
import tensorlib as _t

__all__ = ["relu", "relu_", "leaky_relu", "elu", "gelu", "silu", "softplus", "hardtanh",
           "sigmoid", "tanh", "softmax", "log_softmax"]


def relu(input, inplace=False):
    """max(x, 0). ``inplace=True`` overwrites ``input``.

    >>> relu(tensorlib.tensor([-1.0, 1.0])).tolist()
    [0.0, 1.0]
    """
    return input.relu_() if inplace else _t.relu(input)


def relu_(input):
    """relu in place.

    >>> relu_(tensorlib.tensor([-1.0])).tolist()
    [0.0]
    """
    return input.relu_()


leaky_relu = _t.leaky_relu
elu = _t.elu
gelu = _t.gelu
softplus = _t.softplus
hardtanh = _t.hardtanh


def silu(input, inplace=False):
    """x * sigmoid(x).

    >>> silu(tensorlib.tensor([0.0])).tolist()
    [0.0]
    """
    return input.silu_() if inplace else _t.silu(input)


def sigmoid(input):
    """1 / (1 + exp(-x)).

    >>> sigmoid(tensorlib.tensor([0.0])).tolist()
    [0.5]
    """
    return _t.sigmoid(input)


def tanh(input):
    """Hyperbolic tangent.

    >>> tanh(tensorlib.tensor([0.0])).tolist()
    [0.0]
    """
    return _t.tanh(input)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Softmax along ``dim`` (stable).

    >>> softmax(tensorlib.tensor([0.0, 0.0]), dim=0).tolist()
    [0.5, 0.5]
    """
    return _t.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Log of softmax along ``dim`` (stable).

    >>> round(log_softmax(tensorlib.tensor([0.0, 0.0]), dim=0)[0].item(), 4)
    -0.6931
    """
    return _t.log_softmax(input, dim, dtype=dtype)
