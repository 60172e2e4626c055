"""Parameter initialisation, PyTorch's ``torch.nn.init``.

Every initialiser fills its tensor in place under ``no_grad`` (so a leaf parameter that
requires grad can be filled) and returns it; the random ones draw from ``generator`` when one
is given, else from the default generator.

>>> import tensorlib
>>> w = tensorlib.empty(3, 5)
>>> tensorlib.nn.init.eye_(w).sum().item()
3.0
>>> tensorlib.nn.init.calculate_gain("relu") == 2 ** 0.5
True
"""
import math
import warnings

import numpy as _np

import tensorlib as _t

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_",
           "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_",
           "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform",
           "xavier_normal", "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
               "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for ``nonlinearity``: 1 for linear/conv/sigmoid, 5/3 for tanh,
    sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky_relu (``param`` is the negative
    slope, default 0.01) and 3/4 for selu.

    >>> calculate_gain("tanh") == 5 / 3
    True
    >>> round(calculate_gain("leaky_relu", 0.2), 6)
    1.38675
    """
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, float) or (isinstance(param, int)
                                          and not isinstance(param, bool)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill ``tensor`` with samples of U(a, b).

    >>> w = uniform_(tensorlib.empty(100), -2.0, -1.0)
    >>> bool(((w >= -2) & (w < -1)).all())
    True
    """
    with _t.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill ``tensor`` with samples of N(mean, std^2).

    >>> normal_(tensorlib.empty(2, 3), 1.0, 0.0).tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    with _t.no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _norm_cdf(x):
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill ``tensor`` with samples of N(mean, std^2) truncated to [a, b].

    When most of the normal's mass lies in [a, b], samples outside are redrawn from the
    normal; otherwise candidates are drawn uniformly on [a, b] and accepted with probability
    pdf(x) / pdf(mode), which stays efficient for a narrow or far-off window.

    >>> w = trunc_normal_(tensorlib.empty(1000), a=-0.5, b=0.5)
    >>> bool(((w >= -0.5) & (w <= 0.5)).all())
    True
    """
    if tensor.is_meta:
        return tensor
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    with _t.no_grad():
        mass = _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std)
        if mass > 0.3:
            # the bounds as the tensor's dtype rounds them, so that the test and the stored
            # values agree
            lo = tensor.new_tensor(a).item()
            hi = tensor.new_tensor(b).item()
            tensor.normal_(mean, std, generator=generator)
            while True:
                bad = (tensor < lo) | (tensor > hi)
                if not bool(bad.any()):
                    break
                fresh = _t.empty_like(tensor).normal_(mean, std, generator=generator)
                tensor.copy_(_t.where(bad, fresh, tensor))
            return tensor
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        tensor.uniform_(a, b, generator=generator)
        pending = None
        cand = tensor
        while True:
            log_ratio = ((cand - mean) / std).pow(2).mul(-0.5).sub(log_peak)
            reject = _t.empty_like(tensor).uniform_(generator=generator).log_().gt(log_ratio)
            pending = reject if pending is None else (pending & reject)
            if not bool(pending.any()):
                return tensor
            cand = _t.empty_like(tensor).uniform_(a, b, generator=generator)
            # only the still-pending places take the new candidate; the others keep theirs
            tensor.copy_(_t.where(pending, cand, tensor))


def constant_(tensor, val):
    """Fill ``tensor`` with ``val``.

    >>> constant_(tensorlib.empty(2), 0.5).tolist()
    [0.5, 0.5]
    """
    with _t.no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """Fill ``tensor`` with ones.

    >>> ones_(tensorlib.empty(2)).tolist()
    [1.0, 1.0]
    """
    with _t.no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor):
    """Fill ``tensor`` with zeros.

    >>> zeros_(tensorlib.empty(2)).tolist()
    [0.0, 0.0]
    """
    with _t.no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fill a 2-D ``tensor`` with the identity (ones on the main diagonal).

    >>> eye_(tensorlib.empty(2, 3)).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with _t.no_grad():
        tensor.zero_()
        n = min(tensor.shape)
        if n:
            tensor.diagonal().fill_(1.0)
    return tensor


def dirac_(tensor, groups=1):
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta, so that the convolution
    passes as many input channels through unchanged as it can (per group).

    >>> dirac_(tensorlib.empty(2, 2, 3))[:, :, 1].tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    dims = tensor.ndimension()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    if tensor.is_meta:
        return tensor
    per_group = sizes[0] // groups
    centre = tuple(s // 2 for s in sizes[2:])
    with _t.no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min(per_group, sizes[1])):
                tensor[(g * per_group + d, d) + centre] = 1
    return tensor


def _calculate_fan_in_and_fan_out(tensor):
    """(fan_in, fan_out) of a weight laid out as (out, in, *kernel).

    >>> _calculate_fan_in_and_fan_out(tensorlib.empty(4, 3, 5))
    (15, 20)
    """
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than "
                         "2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)).

    >>> w = xavier_uniform_(tensorlib.empty(3, 5))
    >>> bool(w.abs().max() <= (6 / 8) ** 0.5)
    True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).

    >>> xavier_normal_(tensorlib.empty(3, 5)).shape
    tensorlib.Size([3, 5])
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He uniform: U(-bound, bound), bound = gain * sqrt(3 / fan), fan chosen by ``mode``
    and gain by ``nonlinearity`` (``a`` is leaky_relu's negative slope).

    >>> w = kaiming_uniform_(tensorlib.empty(4, 6), nonlinearity="relu")
    >>> bool(w.abs().max() <= 1.0)
    True
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He normal: N(0, std^2), std = gain / sqrt(fan).

    >>> kaiming_normal_(tensorlib.empty(4, 6), mode="fan_out").shape
    tensorlib.Size([4, 6])
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor, gain=1, generator=None):
    """Fill ``tensor`` (2-D or more; trailing dims flattened) with a (semi-)orthogonal
    matrix times ``gain``: the Q of a Gaussian matrix's QR, its columns' signs fixed by R's
    diagonal so that Q is uniform over the orthogonal group.

    >>> w = orthogonal_(tensorlib.empty(3, 5))
    >>> bool(((w @ w.T) - tensorlib.eye(3)).abs().max() < 1e-5)
    True
    """
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0 or tensor.is_meta:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    work = _t.empty(rows, cols, dtype=_t.float64).normal_(0, 1, generator=generator)
    host = work.numpy()
    if rows < cols:
        host = host.T
    # tensorlib has no QR yet: factor on the host (NumPy's result arrays are host copies,
    # written back into our storage below)
    q, r = _np.linalg.qr(host)
    q *= _np.sign(_np.diag(r))
    if rows < cols:
        q = q.T
    with _t.no_grad():
        work.copy_(_t.from_numpy(_np.ascontiguousarray(q)))
        tensor.view_as(work).copy_(work)
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fill a 2-D ``tensor`` with N(0, std^2) values and set ``ceil(sparsity * rows)``
    randomly chosen entries of every column to zero.

    >>> w = sparse_(tensorlib.empty(10, 3), sparsity=0.3)
    >>> (w == 0).sum(0).tolist()
    [3, 3, 3]
    """
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    if tensor.is_meta:
        return tensor
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with _t.no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            zero_rows = _t.randperm(rows, generator=generator)[:num_zeros]
            tensor[zero_rows, col] = 0
    return tensor


def _deprecated(fn):
    old = fn.__name__[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of "
                      f"`nn.init.{fn.__name__}`.", FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)

    deprecated_init.__name__ = old
    deprecated_init.__doc__ = (f"Deprecated alias of :func:`{fn.__name__}` (warns).\n\n"
                               f"    >>> callable({old})\n    True\n")
    return deprecated_init


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
