"""Normalisation layers: LayerNorm, GroupNorm, LocalResponseNorm, BatchNorm1d/2d/3d and
InstanceNorm1d/2d/3d (PyTorch's arguments, buffers, momentum=None cumulative average,
reprs).

>>> tensorlib.nn.BatchNorm1d(3)
BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
"""
import warnings

import tensorlib
from tensorlib.nn import functional as F
from tensorlib.nn.modules.module import Module
from tensorlib.nn.parameter import Parameter

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm", "BatchNorm1d", "BatchNorm2d",
           "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


def _fill_(t, value):
    with tensorlib.no_grad():
        t.fill_(value)


def _register_affine(module, shape, affine, bias, device, dtype):
    """The learnable per-feature scale and shift of a norm layer (``weight``, ``bias``),
    registered as None when ``affine`` (or ``bias``) is off, as PyTorch does."""
    if affine:
        module.weight = Parameter(tensorlib.empty(shape, device=device, dtype=dtype))
        if bias:
            module.bias = Parameter(tensorlib.empty(shape, device=device, dtype=dtype))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(module):
    """Scale ones, shift zeros."""
    if module.weight is not None:
        _fill_(module.weight, 1.0)
    if module.bias is not None:
        _fill_(module.bias, 0.0)


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dims, with a learnable elementwise
    affine (ones and zeros).

    >>> LayerNorm(4)
    LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _register_affine(self, self.normalized_shape, elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        """Weight ones, bias zeros."""
        _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalise groups of channels, then a per-channel affine.

    >>> GroupNorm(2, 4)
    GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)
    """

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = \
            num_groups, num_channels, eps, affine
        _register_affine(self, num_channels, affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        """Weight ones, bias zeros."""
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims, with a
    learnable elementwise scale (ones).

    >>> RMSNorm(4)
    RMSNorm((4,), eps=None, elementwise_affine=True)
    """

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(tensorlib.empty(self.normalized_shape, device=device,
                                                    dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Weight ones."""
        if self.weight is not None:
            _fill_(self.weight, 1.0)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Normalise by the activity of neighbouring channels.

    >>> LocalResponseNorm(2)
    LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    """

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class _NormBase(Module):
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _register_affine(self, num_features, affine, bias, device, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", tensorlib.zeros(num_features, device=device,
                                                                 dtype=dtype))
            self.register_buffer("running_var", tensorlib.ones(num_features, device=device,
                                                               dtype=dtype))
            self.register_buffer("num_batches_tracked",
                                 tensorlib.tensor(0, dtype=tensorlib.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        """Running mean 0, variance 1, no batches tracked."""
        if self.track_running_stats:
            _fill_(self.running_mean, 0.0)
            _fill_(self.running_var, 1.0)
            _fill_(self.num_batches_tracked, 0)

    def reset_parameters(self):
        """Running statistics reset, weight ones, bias zeros."""
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with tensorlib.no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:        # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep else None,
                            self.running_var if keep else None, self.weight, self.bias,
                            use_batch, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs.

    >>> BatchNorm1d(2)(tensorlib.tensor([[1.0, 2.0], [3.0, 2.0]])).tolist()[0][1]
    0.0
    """

    def _check_input_dim(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs.

    >>> BatchNorm2d(3, momentum=None)
    BatchNorm2d(3, eps=1e-05, momentum=None, affine=True, bias=True, track_running_stats=True)
    """

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W) inputs.

    >>> BatchNorm3d(3).running_var.tolist()
    [1.0, 1.0, 1.0]
    """

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _InstanceNorm(_NormBase):
    _expected = None

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def forward(self, input):
        n = self._expected
        if input.dim() not in (n - 1, n):
            raise ValueError(f"expected {n - 1}D or {n}D input (got {input.dim()}D input)")
        unbatched = input.dim() == n - 1
        if unbatched:
            input = input.unsqueeze(0)
        if input.shape[1] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim=1 to match num_features "
                                 f"({self.num_features}), but got: {input.shape[1]}.")
            warnings.warn(f"input's size at dim=1 does not match num_features. You can "
                          f"silence this warning by not passing in num_features, which is not "
                          f"used because affine=False", stacklevel=2)
        out = F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                              self.bias, self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or (C, L) inputs.

    >>> InstanceNorm1d(3)
    InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)
    """
    _expected = 3


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or (C, H, W) inputs.

    >>> InstanceNorm2d(3, affine=True).weight.tolist()
    [1.0, 1.0, 1.0]
    """
    _expected = 4


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) or (C, D, H, W) inputs.

    >>> InstanceNorm3d(2).running_mean is None
    True
    """
    _expected = 5
