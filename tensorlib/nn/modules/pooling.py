"""Pooling layers: ``MaxPool1d``/``2d``, ``MaxUnpool1d``/``2d``, ``AvgPool1d``/``2d`` and
``AdaptiveAvgPool1d``/``2d``, ``AdaptiveMaxPool1d``/``2d`` (PyTorch's ``torch.nn`` names,
arguments and reprs) over the fused pooling ops.

>>> pool = tensorlib.nn.MaxPool2d(2)
>>> pool
MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
>>> pool(tensorlib.zeros(1, 3, 4, 4)).shape
tensorlib.Size([1, 3, 2, 2])
"""
from tensorlib.nn import _functional_kernels as K
from tensorlib.nn.modules.module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxUnpool1d", "MaxUnpool2d", "AvgPool1d", "AvgPool2d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d"]


def _ntuple(v, n):
    if isinstance(v, (list, tuple)):
        return tuple(v)
    return (v,) * n


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices",
                     "ceil_mode"]

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling over (N, C, L) or (C, L).

    >>> tensorlib.nn.MaxPool1d(2)(tensorlib.tensor([[1., 3., 2., 0.]])).tolist()
    [[3.0, 2.0]]
    """

    def forward(self, input):
        return K.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling over (N, C, H, W) or (C, H, W).

    >>> tensorlib.nn.MaxPool2d(3, stride=2, padding=1)
    MaxPool2d(kernel_size=3, stride=2, padding=1, dilation=1, ceil_mode=False)
    """

    def forward(self, input):
        return K.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _MaxUnpoolNd(Module):
    _dims = 0

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        n = self._dims
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride if stride is not None else kernel_size, n)
        self.padding = _ntuple(padding, n)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool1d``: ``forward(input, indices, output_size=None)``.

    >>> v, i = tensorlib.nn.MaxPool1d(2, return_indices=True)(tensorlib.tensor([[1., 3.]]))
    >>> tensorlib.nn.MaxUnpool1d(2)(v, i).tolist()
    [[0.0, 3.0]]
    """
    _dims = 1

    def forward(self, input, indices, output_size=None):
        return K.max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of ``MaxPool2d``: ``forward(input, indices, output_size=None)``.

    >>> tensorlib.nn.MaxUnpool2d(2)
    MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))
    """
    _dims = 2

    def forward(self, input, indices, output_size=None):
        return K.max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class AvgPool1d(Module):
    """1-D average pooling over (N, C, L) or (C, L).

    >>> tensorlib.nn.AvgPool1d(2)
    AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    """
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, 1)
        self.stride = _ntuple(stride if stride is not None else kernel_size, 1)
        self.padding = _ntuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input):
        return K.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AvgPool2d(Module):
    """2-D average pooling over (N, C, H, W) or (C, H, W).

    >>> tensorlib.nn.AvgPool2d(2)(tensorlib.ones(1, 2, 2)).tolist()
    [[[1.0]]]
    """
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                     "divisor_override"]

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input):
        return K.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptivePool(Module):
    __constants__ = ["output_size"]

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    """Average pooling of (N, C, L) or (C, L) to a fixed length.

    >>> tensorlib.nn.AdaptiveAvgPool1d(1)(tensorlib.tensor([[1., 3.]])).tolist()
    [[2.0]]
    """

    def forward(self, input):
        return K.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptivePool):
    """Average pooling of (N, C, H, W) or (C, H, W) to a fixed size (None keeps a dim).

    >>> tensorlib.nn.AdaptiveAvgPool2d((1, 1))
    AdaptiveAvgPool2d(output_size=(1, 1))
    """

    def forward(self, input):
        return K.adaptive_avg_pool2d(input, self.output_size)


class _AdaptiveMaxPool(_AdaptivePool):
    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """Max pooling of (N, C, L) or (C, L) to a fixed length.

    >>> tensorlib.nn.AdaptiveMaxPool1d(1)(tensorlib.tensor([[1., 3.]])).tolist()
    [[3.0]]
    """

    def forward(self, input):
        return K.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """Max pooling of (N, C, H, W) or (C, H, W) to a fixed size.

    >>> tensorlib.nn.AdaptiveMaxPool2d(2)
    AdaptiveMaxPool2d(output_size=2)
    """

    def forward(self, input):
        return K.adaptive_max_pool2d(input, self.output_size, self.return_indices)
