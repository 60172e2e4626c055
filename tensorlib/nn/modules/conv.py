"""Convolution layers: ``Conv1d``/``Conv2d``/``Conv3d`` and ``ConvTranspose1d``/``2d``/``3d``
(PyTorch's ``torch.nn`` names, arguments, default initialisation and reprs) over the fused
``convolution`` op.

>>> conv = tensorlib.nn.Conv2d(3, 8, 3, padding=1)
>>> conv
Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
>>> conv(tensorlib.zeros(2, 3, 5, 5)).shape
tensorlib.Size([2, 8, 5, 5])
"""
import math

import tensorlib
from tensorlib.nn import _functional_kernels as K
from tensorlib.nn.modules.linear import _fan_in, _kaiming_uniform_a_sqrt5_, _uniform_
from tensorlib.nn.modules.module import Module
from tensorlib.nn.parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d"]

_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _ntuple(v, n):
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v,) * n


class _ConvNd(Module):
    """What every convolution layer shares: arguments, parameters, initialisation, repr."""

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode",
                     "output_padding", "in_channels", "out_channels", "kernel_size"]
    _dims = 0

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None):
        super().__init__()
        n = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's order (last dim first) of the padding the non-zeros modes apply
        if isinstance(self.padding, str):
            pads = [0, 0] * n
            if self.padding == "same":
                for d, k, i in zip(self.dilation, self.kernel_size, range(n - 1, -1, -1)):
                    total = d * (k - 1)
                    pads[2 * i] = total // 2
                    pads[2 * i + 1] = total - total // 2
            self._reversed_padding_repeated_twice = pads
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(self.padding)
                                                     for _ in range(2)]
        shape = ((in_channels, out_channels // groups) if transposed else
                 (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(tensorlib.empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(tensorlib.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Draw new weights (kaiming_uniform_ with a=sqrt(5)) and bias
        (U(-1/sqrt(fan_in), 1/sqrt(fan_in))), as PyTorch."""
        _kaiming_uniform_a_sqrt5_(self.weight)
        if self.bias is not None:
            fan_in = _fan_in(self.weight)
            _uniform_(self.bias, 1 / math.sqrt(fan_in) if fan_in > 0 else 0)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"

    def _conv_forward(self, input, weight, bias):
        n = self._dims
        if self.padding_mode != "zeros":
            input = K.pad_for_conv(input, self._reversed_padding_repeated_twice,
                                   self.padding_mode)
            return K._conv(input, weight, bias, self.stride, (0,) * n, self.dilation,
                           self.groups, n, f"conv{n}d")
        return K._conv(input, weight, bias, self.stride, self.padding, self.dilation,
                       self.groups, n, f"conv{n}d")

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) or (C_in, L).

    >>> tensorlib.nn.Conv1d(2, 4, 3, stride=2, bias=False)
    Conv1d(2, 4, kernel_size=(3,), stride=(2,), bias=False)
    """
    _dims = 1

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W).

    >>> tensorlib.nn.Conv2d(4, 4, 3, groups=4, padding_mode='reflect', padding=1)
    Conv2d(4, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), groups=4, padding_mode=reflect)
    """
    _dims = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)


class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W).

    >>> tensorlib.nn.Conv3d(1, 2, 2)(tensorlib.zeros(1, 1, 3, 3, 3)).shape
    tensorlib.Size([1, 2, 2, 2, 2])
    """
    _dims = 3

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)


class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f'{self.__class__.__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         transposed, output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, dims,
                        dilation=None):
        """The output_padding that makes the output ``output_size`` (validated)."""
        if output_size is None:
            return self.output_padding
        lead = 2 if input.dim() == dims + 2 else 1
        if len(output_size) == lead + dims:
            output_size = output_size[lead:]
        if len(output_size) != dims:
            raise ValueError(f"ConvTranspose{dims}D: for {input.dim()}D input, output_size "
                             f"must have {dims} or {lead + dims} elements (got "
                             f"{len(output_size)})")
        lo, hi = [], []
        for d in range(dims):
            size = ((input.shape[d + lead] - 1) * stride[d] - 2 * padding[d] +
                    (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1) + 1)
            lo.append(size)
            hi.append(size + stride[d] - 1)
        for d in range(dims):
            if not lo[d] <= output_size[d] <= hi[d]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {lo} to {hi} (for an input of "
                                 f"{input.shape[lead:]})")
        return tuple(output_size[d] - lo[d] for d in range(dims))

    def forward(self, input, output_size=None):
        n = self._dims
        op = self._output_padding(input, output_size, self.stride, self.padding,
                                  self.kernel_size, n, self.dilation)
        return K._conv_t(input, self.weight, self.bias, self.stride, self.padding, op,
                         self.groups, self.dilation, n, f"conv_transpose{n}d")


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution; weight (in_channels, out_channels/groups, kL).

    >>> tensorlib.nn.ConvTranspose1d(2, 3, 3, stride=2)(tensorlib.zeros(1, 2, 4)).shape
    tensorlib.Size([1, 3, 9])
    """
    _dims = 1

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution; ``forward(input, output_size)`` picks output_padding.

    >>> up = tensorlib.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
    >>> up(tensorlib.zeros(1, 4, 5, 5), output_size=(10, 10)).shape
    tensorlib.Size([1, 2, 10, 10])
    """
    _dims = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution.

    >>> tensorlib.nn.ConvTranspose3d(1, 1, 2)(tensorlib.zeros(1, 1, 2, 2, 2)).shape
    tensorlib.Size([1, 1, 3, 3, 3])
    """
    _dims = 3

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)
