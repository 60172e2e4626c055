"""Functional convolution, pooling and normalization (``torch.nn.functional``'s names and
signatures) over the fused nn ops (tensorlib/ops/decl/nn.py): argument shorthands, unbatched
inputs, ``padding='same'``, the 1-D forms (run as 2-D with a unit height) and padding modes
are handled here; the work is one declared op each.

>>> import tensorlib.nn._functional_kernels as K
>>> K.conv1d(tensorlib.ones(1, 1, 4), tensorlib.ones(1, 1, 2)).tolist()
[[[2.0, 2.0, 2.0]]]
"""
import math

import tensorlib as _t

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "pad_for_conv", "max_pool1d", "max_pool2d",
           "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d", "avg_pool2d",
           "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices", "max_unpool1d", "max_unpool2d"]


def _tuple(v, n):
    if isinstance(v, (list, tuple)):
        return tuple(int(x) for x in v)
    return (int(v),) * n


# ---------------------------------------------------------------------------------------------
# convolution

def _conv(input, weight, bias, stride, padding, dilation, groups, k, name):
    if input.dim() not in (k + 1, k + 2):
        raise RuntimeError(f"Expected {k + 1}D (unbatched) or {k + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    unbatched = input.dim() == k + 1
    if unbatched:
        input = input.unsqueeze(0)
    stride, dilation = _tuple(stride, k), _tuple(dilation, k)
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * k
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            # total padding d * (k - 1) per dim; an odd total puts the extra element on the
            # right (PyTorch's choice), which the symmetric op cannot express: pad it here
            totals = [dilation[i] * (weight.shape[2 + i] - 1) for i in range(k)]
            padding = tuple(t // 2 for t in totals)
            extra = []
            for i in reversed(range(k)):
                extra += [0, totals[i] - 2 * padding[i]]
            if any(extra):
                input = pad_for_conv(input, extra, "zeros")
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    out = _t.convolution(input, weight, bias, stride, _tuple(padding, k), dilation, False,
                         (0,) * k, groups)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution of (N, C_in, L) or (C_in, L) with weight (C_out, C_in/groups, kL);
    ``padding`` may be ``'valid'`` or ``'same'``.

    >>> conv1d(tensorlib.ones(1, 1, 3), tensorlib.ones(1, 1, 3), padding='same').tolist()
    [[[2.0, 3.0, 2.0]]]
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution of (N, C_in, H, W) or (C_in, H, W) with weight
    (C_out, C_in/groups, kH, kW); ``padding`` may be ``'valid'`` or ``'same'``.

    >>> conv2d(tensorlib.ones(1, 1, 3, 3), tensorlib.ones(2, 1, 2, 2)).shape
    tensorlib.Size([1, 2, 2, 2])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution of (N, C_in, D, H, W) or (C_in, D, H, W).

    >>> conv3d(tensorlib.ones(1, 1, 3, 3, 3), tensorlib.ones(1, 1, 3, 3, 3)).item()
    27.0
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation, k, name):
    if input.dim() not in (k + 1, k + 2):
        raise RuntimeError(f"Expected {k + 1}D (unbatched) or {k + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    unbatched = input.dim() == k + 1
    if unbatched:
        input = input.unsqueeze(0)
    out = _t.convolution(input, weight, bias, _tuple(stride, k), _tuple(padding, k),
                         _tuple(dilation, k), True, _tuple(output_padding, k), groups)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """1-D transposed convolution; weight (C_in, C_out/groups, kL).

    >>> conv_transpose1d(tensorlib.ones(1, 1, 2), tensorlib.ones(1, 1, 2)).tolist()
    [[[1.0, 2.0, 1.0]]]
    """
    return _conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation, 1,
                   "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """2-D transposed convolution; weight (C_in, C_out/groups, kH, kW).

    >>> conv_transpose2d(tensorlib.ones(1, 1, 2, 2), tensorlib.ones(1, 3, 3, 3), stride=2).shape
    tensorlib.Size([1, 3, 5, 5])
    """
    return _conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation, 2,
                   "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """3-D transposed convolution; weight (C_in, C_out/groups, kD, kH, kW).

    >>> conv_transpose3d(tensorlib.ones(1, 1, 1, 1, 1), tensorlib.ones(1, 1, 2, 2, 2)).shape
    tensorlib.Size([1, 1, 2, 2, 2])
    """
    return _conv_t(input, weight, bias, stride, padding, output_padding, groups, dilation, 3,
                   "conv_transpose3d")


def _pad_index(n, lo, hi, mode, dim, shape, device):
    if mode == "reflect":
        if lo >= n or hi >= n:
            raise RuntimeError(f"Argument #4: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({lo}, {hi}) "
                               f"at dimension {dim} of input {list(shape)}")
        idx = [abs(i) if i < 0 else (2 * (n - 1) - i if i >= n else i)
               for i in range(-lo, n + hi)]
    elif mode == "replicate":
        idx = [min(max(i, 0), n - 1) for i in range(-lo, n + hi)]
    else:
        if lo > n or hi > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        idx = [i % n for i in range(-lo, n + hi)]
    return _t.tensor(idx, dtype=_t.int64, device=device)


def pad_for_conv(input, pad, mode="zeros", value=0.0):
    """Pad the trailing dims of ``input`` as ``F.pad`` does (``pad`` lists (left, right) pairs
    from the last dim backwards) with mode ``'zeros'``/``'constant'``, ``'reflect'``,
    ``'replicate'`` or ``'circular'``: the conv modules' ``padding_mode``. Built from
    ``cat`` and ``index_select``, so it is differentiable.

    >>> pad_for_conv(tensorlib.tensor([[1., 2., 3.]]), [2, 1], 'reflect').tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]
    """
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    x = input
    for j in range(len(pad) // 2):
        dim = input.dim() - 1 - j
        lo, hi = int(pad[2 * j]), int(pad[2 * j + 1])
        if lo == 0 and hi == 0:
            continue
        if mode in ("zeros", "constant"):
            parts = []
            for p in (lo, hi):
                shape = list(x.shape)
                shape[dim] = p
                parts.append(_t.full(shape, value, dtype=x.dtype, device=x.device))
            x = _t.cat([parts[0], x, parts[1]], dim)
        elif mode in ("reflect", "replicate", "circular"):
            idx = _pad_index(x.shape[dim], lo, hi, mode, dim, input.shape, x.device)
            x = x.index_select(dim, idx)
        else:
            raise NotImplementedError(f"Unrecognised padding mode {mode}")
    return x


# ---------------------------------------------------------------------------------------------
# pooling

def _check_1d(input, name):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"{name}() Expected 2D or 3D input tensor, but got "
                           f"{list(input.shape)}")


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    """2-D max pooling returning ``(values, indices)`` (flat within each H x W plane).

    >>> max_pool2d_with_indices(tensorlib.arange(4.).reshape(1, 2, 2), 2)[1].tolist()
    [[[3]]]
    """
    return _t.max_pool2d_with_indices(input, kernel_size, () if stride is None else stride,
                                      padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-D max pooling of (N, C, H, W) or (C, H, W); NaN propagates.

    >>> max_pool2d(tensorlib.arange(16.).reshape(1, 4, 4), 2).tolist()
    [[[5.0, 7.0], [13.0, 15.0]]]
    """
    out = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return out if return_indices else out[0]


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    """1-D max pooling returning ``(values, indices)``.

    >>> max_pool1d_with_indices(tensorlib.tensor([[1., 3., 2., 0.]]), 2)[1].tolist()
    [[1, 2]]
    """
    _check_1d(input, "max_pool1d")
    k, s = _tuple(kernel_size, 1)[0], _tuple(kernel_size if stride is None or (
        isinstance(stride, (list, tuple)) and len(stride) == 0) else stride, 1)[0]
    p, d = _tuple(padding, 1)[0], _tuple(dilation, 1)[0]
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but "
                           f"got padding={p} and kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    n = input.shape[-1]
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = num // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    if out <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    v, i = _t.max_pool2d_with_indices(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d),
                                      ceil_mode)
    return v.squeeze(-2), i.squeeze(-2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-D max pooling of (N, C, L) or (C, L).

    >>> max_pool1d(tensorlib.tensor([[1., 3., 2., 0.]]), 2).tolist()
    [[3.0, 2.0]]
    """
    out = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return out if return_indices else out[0]


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-D average pooling of (N, C, H, W) or (C, H, W).

    >>> avg_pool2d(tensorlib.ones(1, 2, 2), 2, padding=1).tolist()
    [[[0.25, 0.25], [0.25, 0.25]]]
    """
    return _t.avg_pool2d(input, kernel_size, () if stride is None else stride, padding,
                         ceil_mode, count_include_pad, divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-D average pooling of (N, C, L) or (C, L).

    >>> avg_pool1d(tensorlib.tensor([[1., 3., 2., 0.]]), 2).tolist()
    [[2.0, 1.0]]
    """
    _check_1d(input, "avg_pool1d")
    k = _tuple(kernel_size, 1)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else \
        _tuple(stride, 1)
    p = _tuple(padding, 1)
    if len(k) != 1 or len(s) != 1 or len(p) != 1:
        raise RuntimeError("avg_pool1d() argument 'kernel_size', 'stride' and 'padding' must "
                           "be a single int or a tuple of one int")
    out = _t.avg_pool2d(input.unsqueeze(-2), (1, k[0]), (1, s[0]), (0, p[0]), ceil_mode,
                        count_include_pad, None)
    return out.squeeze(-2)


def _adaptive_size(input, output_size, k):
    size = _tuple(output_size, k) if not isinstance(output_size, (list, tuple)) else \
        tuple(output_size)
    if len(size) != k:
        raise ValueError(f"output_size must have {k} elements, but got {len(size)}")
    return tuple(input.shape[input.dim() - k + i] if v is None else int(v)
                 for i, v in enumerate(size))


def adaptive_avg_pool2d(input, output_size):
    """Average pooling of (N, C, H, W) or (C, H, W) to ``output_size`` (an int, a pair, or
    None entries keeping the input size).

    >>> adaptive_avg_pool2d(tensorlib.arange(16.).reshape(1, 4, 4), (1, None)).tolist()
    [[[6.0, 7.0, 8.0, 9.0]]]
    """
    return _t.adaptive_avg_pool2d(input, _adaptive_size(input, output_size, 2))


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of (N, C, L) or (C, L) to ``output_size``.

    >>> adaptive_avg_pool1d(tensorlib.tensor([[1., 3., 2., 0.]]), 2).tolist()
    [[2.0, 1.0]]
    """
    _check_1d(input, "adaptive_avg_pool1d")
    (o,) = _adaptive_size(input, output_size, 1)
    return _t.adaptive_avg_pool2d(input.unsqueeze(-2), (1, o)).squeeze(-2)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    """Max pooling to ``output_size``: ``(values, indices)``.

    >>> adaptive_max_pool2d_with_indices(tensorlib.arange(4.).reshape(1, 2, 2), 1)[0].tolist()
    [[[3.0]]]
    """
    return _t.adaptive_max_pool2d(input, _adaptive_size(input, output_size, 2))


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max pooling of (N, C, H, W) or (C, H, W) to ``output_size``.

    >>> adaptive_max_pool2d(tensorlib.arange(16.).reshape(1, 4, 4), 2).tolist()
    [[[5.0, 7.0], [13.0, 15.0]]]
    """
    out = adaptive_max_pool2d_with_indices(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    """1-D max pooling to ``output_size``: ``(values, indices)``.

    >>> adaptive_max_pool1d_with_indices(tensorlib.tensor([[1., 3., 2., 0.]]), 2)[1].tolist()
    [[1, 2]]
    """
    _check_1d(input, "adaptive_max_pool1d")
    (o,) = _adaptive_size(input, output_size, 1)
    v, i = _t.adaptive_max_pool2d(input.unsqueeze(-2), (1, o))
    return v.squeeze(-2), i.squeeze(-2)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """1-D max pooling of (N, C, L) or (C, L) to ``output_size``.

    >>> adaptive_max_pool1d(tensorlib.tensor([[1., 3., 2., 0.]]), 2).tolist()
    [[3.0, 2.0]]
    """
    out = adaptive_max_pool1d_with_indices(input, output_size)
    return out if return_indices else out[0]


def _unpool_size(input, kernel_size, stride, padding, output_size, k):
    ks = _tuple(kernel_size, k)
    st = ks if stride is None else _tuple(stride, k)
    pd = _tuple(padding, k)
    default = tuple((input.shape[input.dim() - k + i] - 1) * st[i] - 2 * pd[i] + ks[i]
                    for i in range(k))
    if output_size is None:
        return default
    size = tuple(int(v) for v in output_size)
    if len(size) == k + 2:
        size = size[2:]
    if len(size) != k:
        raise ValueError(f"output_size should be a sequence containing {k} or {k + 2} "
                         f"elements, but it has a length of '{len(size)}'")
    for i in range(k):
        lo, hi = default[i] - st[i], default[i] + st[i]
        if not lo < size[i] < hi:
            raise ValueError(f'invalid output_size "{list(size)}" (dim {i} must be between '
                             f'{lo} and {hi})')
    return size


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool2d``: values back at their indices, zeros elsewhere.

    >>> v, i = max_pool2d(tensorlib.arange(4.).reshape(1, 2, 2), 2, return_indices=True)
    >>> max_unpool2d(v, i, 2).tolist()
    [[[0.0, 0.0], [0.0, 3.0]]]
    """
    return _t.max_unpool2d(input, indices,
                           _unpool_size(input, kernel_size, stride, padding, output_size, 2))


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of ``max_pool1d``.

    >>> v, i = max_pool1d(tensorlib.tensor([[1., 3., 2., 0.]]), 2, return_indices=True)
    >>> max_unpool1d(v, i, 2).tolist()
    [[0.0, 3.0, 2.0, 0.0]]
    """
    (o,) = _unpool_size(input, kernel_size, stride, padding, output_size, 1)
    return _t.max_unpool2d(input.unsqueeze(-2), indices.unsqueeze(-2), (1, o)).squeeze(-2)
