"""Functional layers, PyTorch's ``torch.nn.functional``: names, signatures, defaults, errors.

Everything here is composed from tensorlib's public ops, so autograd differentiates it
with no extra code. The composites that cost several passes over memory, and would gain
most from a fused kernel, say so in their docstring ("composite:").

>>> import tensorlib.nn.functional as F
>>> F.gelu(tensorlib.tensor([0.0])).tolist()
[0.0]
"""
import math as _math
import warnings as _warnings

import tensorlib as _t

__all__ = [
    # activations
    "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "prelu", "rrelu", "rrelu_", "elu",
    "elu_", "selu", "selu_", "celu", "celu_", "gelu", "silu", "mish", "sigmoid", "tanh",
    "hardtanh", "hardtanh_", "hardswish", "hardsigmoid", "softplus", "softsign", "tanhshrink",
    "threshold", "threshold_", "glu", "softmax", "log_softmax", "softmin", "logsigmoid",
    "hardshrink", "softshrink", "gumbel_softmax",
    # losses
    "l1_loss", "mse_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "cross_entropy", "nll_loss", "kl_div",
    "poisson_nll_loss", "gaussian_nll_loss", "margin_ranking_loss", "hinge_embedding_loss",
    "soft_margin_loss", "multilabel_soft_margin_loss", "multilabel_margin_loss",
    "multi_margin_loss", "cosine_embedding_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss", "ctc_loss",
    # others
    "linear", "bilinear", "one_hot", "normalize", "cosine_similarity", "pairwise_distance",
    "pdist", "pad", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
    "feature_alpha_dropout", "embedding", "embedding_bag", "layer_norm", "group_norm",
    "batch_norm", "instance_norm", "local_response_norm", "scaled_dot_product_attention",
    "unfold", "fold", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
    "native_channel_shuffle", "interpolate", "upsample", "affine_grid", "grid_sample",
    "rms_norm", "linear_cross_entropy", "upsample_nearest", "upsample_bilinear",
]


# --------------------------------------------------------------------------- helpers

def _needs_grad(*ts):
    return _t.is_grad_enabled() and any(
        t is not None and isinstance(t, _t.Tensor) and t.requires_grad for t in ts)


def _assign_(input, result):
    """Write ``result`` into ``input`` (the ``inplace=True`` path of a composite)."""
    input.copy_(result)
    return input


def _inplace_composite(fn, input, *args):
    # The composite saves its input for backward; run it on a clone so that overwriting
    # ``input`` afterwards does not invalidate what the graph saved.
    src = input.clone() if _needs_grad(input) else input
    return _assign_(input, fn(src, *args))


def _legacy_reduction(size_average, reduce, emit_warning=True):
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        _warnings.warn("size_average and reduce args will be deprecated, please use "
                       f"reduction='{ret}' instead.", stacklevel=3)
    return ret


def _resolve_reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return _legacy_reduction(size_average, reduce)
    return reduction


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _torch_size(shape):
    return "torch.Size([" + ", ".join(str(s) for s in shape) + "])"


def _list(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _tuple(v, n):
    if isinstance(v, (tuple, list)):
        if len(v) != n:
            raise ValueError(f"expected {n} values, got {len(v)}")
        return tuple(int(a) for a in v)
    return (int(v),) * n


# --------------------------------------------------------------------------- activations

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


def relu6(input, inplace=False):
    """min(max(x, 0), 6).

    >>> relu6(tensorlib.tensor([-1.0, 7.0])).tolist()
    [0.0, 6.0]
    """
    return _t.hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` if x > 0 else ``negative_slope * x``.

    >>> leaky_relu(tensorlib.tensor([-1.0, 2.0]), 0.5).tolist()
    [-0.5, 2.0]
    """
    return _t.leaky_relu(input, negative_slope, inplace)


def leaky_relu_(input, negative_slope=0.01):
    """leaky_relu in place.

    >>> leaky_relu_(tensorlib.tensor([-2.0]), 0.5).tolist()
    [-1.0]
    """
    return _t.leaky_relu(input, negative_slope, True)


def elu(input, alpha=1.0, inplace=False):
    """``x`` if x > 0 else ``alpha * (exp(x) - 1)``.

    >>> elu(tensorlib.tensor([0.0, 1.0])).tolist()
    [0.0, 1.0]
    """
    return _t.elu(input, alpha, inplace)


def elu_(input, alpha=1.0):
    """elu in place.

    >>> elu_(tensorlib.tensor([1.0])).tolist()
    [1.0]
    """
    return _t.elu(input, alpha, True)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """clamp(x, min_val, max_val).

    >>> hardtanh(tensorlib.tensor([-3.0, 0.5])).tolist()
    [-1.0, 0.5]
    """
    return _t.hardtanh(input, min_val, max_val, inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """hardtanh in place.

    >>> hardtanh_(tensorlib.tensor([3.0])).tolist()
    [1.0]
    """
    return _t.hardtanh(input, min_val, max_val, True)


def prelu(input, weight):
    """``x`` if x >= 0 else ``weight * x``, one learnable slope per channel (dim 1) or one
    in all.

    >>> prelu(tensorlib.tensor([[-2.0, 3.0]]), tensorlib.tensor([0.5, 0.1])).tolist()
    [[-1.0, 3.0]]
    """
    channels = input.shape[1] if input.dim() >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {weight.numel()} and channel size = "
                           f"{channels}.")
    if weight.numel() != 1 and input.dim() >= 2:
        weight = weight.reshape((channels,) + (1,) * (input.dim() - 2))
    elif weight.dim() > 0:
        weight = weight.reshape(())
    return _t.where(input >= 0, input, input * weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky relu: in training each negative element gets a slope drawn from
    U(lower, upper) (tensorlib's generator); in eval the slope is (lower + upper) / 2.

    >>> rrelu(tensorlib.tensor([-4.0, 1.0]), 0.25, 0.25).tolist()
    [-1.0, 1.0]
    """
    if not training:
        return _t.leaky_relu(input, (lower + upper) / 2, inplace)
    slope = _t.empty_like(input).uniform_(lower, upper)
    if inplace:
        return _inplace_composite(lambda x: _t.where(x >= 0, x, x * slope), input)
    return _t.where(input >= 0, input, input * slope)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """rrelu in place.

    >>> rrelu_(tensorlib.tensor([-4.0]), 0.25, 0.25).tolist()
    [-1.0]
    """
    return rrelu(input, lower, upper, training, True)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _selu(x):
    return _t.elu(x, _SELU_ALPHA, False) * _SELU_SCALE


def selu(input, inplace=False):
    """scale * elu(x, alpha) with the self-normalising constants.

    >>> round(selu(tensorlib.tensor([1.0])).item(), 4)
    1.0507
    """
    if inplace:
        return _inplace_composite(_selu, input)
    return _selu(input)


def selu_(input):
    """selu in place.

    >>> selu_(tensorlib.tensor([0.0])).tolist()
    [0.0]
    """
    return selu(input, True)


def _celu(x, alpha):
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _t.elu(x / alpha, 1.0, False) * alpha


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

    >>> celu(tensorlib.tensor([2.0])).tolist()
    [2.0]
    """
    if inplace:
        return _inplace_composite(_celu, input, alpha)
    return _celu(input, alpha)


def celu_(input, alpha=1.0):
    """celu in place.

    >>> celu_(tensorlib.tensor([2.0])).tolist()
    [2.0]
    """
    return celu(input, alpha, True)


def gelu(input, approximate="none"):
    """x * Phi(x); ``approximate='tanh'`` uses the tanh approximation.

    >>> gelu(tensorlib.tensor([0.0]), approximate="tanh").tolist()
    [0.0]
    """
    return _t.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    """x * sigmoid(x).

    >>> silu(tensorlib.tensor([0.0])).tolist()
    [0.0]
    """
    return input.silu_() if inplace else _t.silu(input)


def _mish(x):
    return x * _t.tanh(_t.softplus(x))


def mish(input, inplace=False):
    """x * tanh(softplus(x)). composite: three passes.

    >>> mish(tensorlib.tensor([0.0])).tolist()
    [0.0]
    """
    if inplace:
        return _inplace_composite(_mish, input)
    return _mish(input)


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


def _hardswish(x):
    return x * _t.hardtanh(x + 3.0, 0.0, 6.0) / 6.0


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6. composite.

    >>> hardswish(tensorlib.tensor([-4.0, 0.0, 4.0])).tolist()
    [-0.0, 0.0, 4.0]
    """
    if inplace:
        return _inplace_composite(_hardswish, input)
    return _hardswish(input)


def _hardsigmoid(x):
    return _t.hardtanh(x + 3.0, 0.0, 6.0) / 6.0


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6. composite.

    >>> hardsigmoid(tensorlib.tensor([-4.0, 0.0, 4.0])).tolist()
    [0.0, 0.5, 1.0]
    """
    if inplace:
        return _inplace_composite(_hardsigmoid, input)
    return _hardsigmoid(input)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta, linear above ``threshold``.

    >>> round(softplus(tensorlib.tensor([0.0])).item(), 4)
    0.6931
    """
    return _t.softplus(input, beta, threshold)


def softsign(input):
    """x / (1 + |x|). composite.

    >>> softsign(tensorlib.tensor([1.0])).tolist()
    [0.5]
    """
    return input / (input.abs() + 1)


def tanhshrink(input):
    """x - tanh(x).

    >>> tanhshrink(tensorlib.tensor([0.0])).tolist()
    [0.0]
    """
    return input - _t.tanh(input)


def threshold(input, threshold, value, inplace=False):
    """``x`` if x > threshold else ``value``.

    >>> threshold(tensorlib.tensor([0.5, 2.0]), 1.0, -1.0).tolist()
    [-1.0, 2.0]
    """
    if inplace:
        return input.masked_fill_(input <= threshold, value)
    return _t.where(input > threshold, input, value)


def threshold_(input, threshold, value):
    """threshold in place.

    >>> threshold_(tensorlib.tensor([0.5]), 1.0, -1.0).tolist()
    [-1.0]
    """
    return input.masked_fill_(input <= threshold, value)


def glu(input, dim=-1):
    """Gated linear unit: a * sigmoid(b) for the two halves of ``dim``.

    >>> glu(tensorlib.tensor([1.0, 0.0])).tolist()
    [0.5]
    """
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim % input.dim()
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{input.shape[d]}")
    a, b = input.chunk(2, d)
    return a * _t.sigmoid(b)


def _softmax_dim(name, ndim, stacklevel):
    _warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                   "to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Softmax along ``dim`` (stable).

    >>> softmax(tensorlib.tensor([0.0, 0.0]), dim=0).tolist()
    [0.5, 0.5]
    """
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return _t.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Log of softmax along ``dim`` (stable).

    >>> round(log_softmax(tensorlib.tensor([0.0, 0.0]), dim=0)[0].item(), 4)
    -0.6931
    """
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _t.log_softmax(input, dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along ``dim``.

    >>> softmin(tensorlib.tensor([0.0, 0.0]), dim=0).tolist()
    [0.5, 0.5]
    """
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    return _t.softmax(-input, dim)


def logsigmoid(input):
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|. composite: two passes.

    >>> round(logsigmoid(tensorlib.tensor([0.0])).item(), 4)
    -0.6931
    """
    # threshold inf: the kernel's max(y, 0) + log1p(exp(-|y|)) is exact for every y
    return -_t.softplus(-input, 1.0, float("inf"))


def hardshrink(input, lambd=0.5):
    """``x`` if |x| > lambd else 0.

    >>> hardshrink(tensorlib.tensor([0.2, -1.0])).tolist()
    [0.0, -1.0]
    """
    return _t.where(input.abs() > lambd, input, 0.0)


def softshrink(input, lambd=0.5):
    """x - lambd if x > lambd, x + lambd if x < -lambd, else 0.

    >>> softshrink(tensorlib.tensor([0.2, -1.0])).tolist()
    [0.0, -0.5]
    """
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return input - input.clamp(-lambd, lambd)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """Sample from the Gumbel-softmax distribution (``hard``: one-hot in the forward pass,
    the soft sample's gradient in the backward pass). Uses tensorlib's generator.

    >>> tensorlib.manual_seed(0) is not None
    True
    >>> gumbel_softmax(tensorlib.zeros(2, 3), hard=True).sum(-1).tolist()
    [1.0, 1.0]
    """
    if eps != 1e-10:
        _warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    # -log(Exp(1)) with Exp(1) = -log(U), U in (0, 1]
    u = _t.empty_like(logits).uniform_(0.0, 1.0)
    gumbels = -_t.log(-_t.log(1.0 - u))
    y_soft = _t.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = _t.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# --------------------------------------------------------------------------- losses

def _warn_size(input, target, stacklevel=3):
    if tuple(target.shape) != tuple(input.shape):
        _warnings.warn(f"Using a target size ({_torch_size(target.shape)}) that is different "
                       f"to the input size ({_torch_size(input.shape)}). This will likely "
                       "lead to incorrect results due to broadcasting. Please ensure they "
                       "have the same size.", stacklevel=stacklevel)


def _weighted(loss, weight, input, reduction, mean_by_weight):
    """PyTorch's elementwise-weighted reductions (l1/mse: the mean divides by the sum of
    the weights; huber: by the element count)."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_by_weight else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


def _pointwise_loss(input, target, size_average, reduce, reduction, weight, elementwise):
    """l1/mse: ``elementwise(input - target)``, optionally weighted, then reduced."""
    _warn_size(input, target, stacklevel=4)
    reduction = _resolve_reduction(size_average, reduce, reduction)
    if weight is None:
        _check_reduction(reduction)
    loss = elementwise(input - target)
    if weight is not None:
        return _weighted(loss, weight, input, reduction, True)
    return _reduce(loss, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error.

    >>> l1_loss(tensorlib.tensor([1.0, 3.0]), tensorlib.tensor([0.0, 0.0])).item()
    2.0
    """
    return _pointwise_loss(input, target, size_average, reduce, reduction, weight, _t.abs)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error.

    >>> mse_loss(tensorlib.tensor([1.0, 3.0]), tensorlib.tensor([0.0, 0.0])).item()
    5.0
    """
    return _pointwise_loss(input, target, size_average, reduce, reduction, weight, _t.square)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (``beta=0``: l1).

    >>> smooth_l1_loss(tensorlib.tensor([0.5, 3.0]), tensorlib.zeros(2), reduction="sum").item()
    2.625
    """
    _warn_size(input, target)
    reduction = _resolve_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    loss = _t.where(d < beta, d.square() * (0.5 / beta), d - 0.5 * beta)
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere.

    >>> huber_loss(tensorlib.tensor([0.5, 3.0]), tensorlib.zeros(2), reduction="sum").item()
    2.625
    """
    _warn_size(input, target)
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    d = (input - target).abs()
    loss = _t.where(d < delta, d.square() * 0.5, (d - 0.5 * delta) * delta)
    if weight is not None:
        return _weighted(loss, weight, input, reduction, False)
    return _reduce(loss, reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 as PyTorch does.

    >>> round(binary_cross_entropy(tensorlib.tensor([0.5]), tensorlib.tensor([1.0])).item(), 4)
    0.6931
    """
    reduction = _resolve_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({_torch_size(target.shape)}) that is different "
                         f"to the input size ({_torch_size(input.shape)}) is deprecated. "
                         "Please ensure they have the same size.")
    _check_reduction(reduction)
    if _reads(input) and bool(((input < 0) | (input > 1)).any()):
        raise RuntimeError("all elements of input should be between 0 and 1")
    log_x = _t.log(input).clamp_min(-100.0)
    log_1mx = _t.log1p(-input).clamp_min(-100.0)
    loss = -(target * (log_x - log_1mx) + log_1mx)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Sigmoid + binary cross entropy in one stable formula:
    (1 - t) x + (1 + (pos_weight - 1) t) softplus(-x).

    >>> round(binary_cross_entropy_with_logits(tensorlib.tensor([0.0]),
    ...                                        tensorlib.tensor([1.0])).item(), 4)
    0.6931
    """
    reduction = _resolve_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({_torch_size(target.shape)}) must be the same as input "
                         f"size ({_torch_size(input.shape)})")
    _check_reduction(reduction)
    # softplus(-x), computed as max(-x, 0) + log1p(exp(-|x|)) for every x (threshold inf)
    sp = _t.softplus(-input, 1.0, float("inf"))
    if pos_weight is not None:
        loss = (1 - target) * input + (1 + (pos_weight - 1) * target) * sp
    else:
        loss = (1 - target) * input + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _reads(t):
    """Whether value checks can read ``t`` (meta tensors hold no values: skipped)."""
    return not t.is_meta and t.numel() > 0


def _check_class_targets(target, n_classes, ignore_index):
    """PyTorch's bounds check on class indices, before anything reads with them. Returns
    whether some target may equal ``ignore_index`` (False only when none can)."""
    if not _reads(target) or target.numel() == 0:
        return True
    lo, hi = target.min().item(), target.max().item()
    if lo < 0 or hi >= n_classes:
        bad = ((target < 0) | (target >= n_classes)) & (target != ignore_index)
        if bool(bad.any()):
            first = target.reshape(-1)[bad.reshape(-1).nonzero()[0, 0]].item()
            raise IndexError(f"Target {first} is out of bounds.")
    return lo <= ignore_index <= hi


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log likelihood of class indices: -input[n, target[n]] * weight[target[n]];
    the mean divides by the sum of the weights of the targets not ignored.

    >>> nll_loss(tensorlib.tensor([[-1.0, -2.0]]), tensorlib.tensor([1])).item()
    2.0
    """
    reduction = _resolve_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    dim = input.dim()
    if dim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {dim})")
    if dim != 1 and input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0]}).")
    if target.dtype not in (_t.int64, _t.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{_dtype_name(target.dtype)}")
    n_classes = input.shape[1] if dim > 1 else input.shape[0]
    if weight is not None and weight.numel() != n_classes:
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes "
                           f"or no classes but got weight tensor of shape: "
                           f"{_list(weight.shape)}")
    if dim == 1:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        input = input.unsqueeze(0)
        target = target.reshape(1)
    elif dim == 2:
        if target.dim() != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    else:
        expected = (input.shape[0],) + tuple(input.shape[2:])
        if tuple(target.shape) != expected:
            raise RuntimeError(f"Expected target size {_list(expected)}, got "
                               f"{_list(target.shape)}")
    target = target.long()
    if not _check_class_targets(target, n_classes, ignore_index) and weight is None:
        # every target counts with weight one: a gather and a reduction
        picked = -input.gather(1, target.unsqueeze(1)).squeeze(1)
        if reduction == "none":
            return picked.reshape(()) if dim == 1 else picked
        return picked.sum() if reduction == "sum" else picked.mean()
    keep = target != ignore_index
    safe = _t.where(keep, target, 0)
    picked = -input.gather(1, safe.unsqueeze(1)).squeeze(1)
    if weight is not None:
        w = weight.to(input.dtype)[safe] * keep
    else:
        w = keep.to(input.dtype)
    loss = picked * w
    if reduction == "none":
        return loss.reshape(()) if dim == 1 else loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / w.sum()


def _dtype_name(dt):
    names = {_t.float32: "Float", _t.float64: "Double", _t.float16: "Half",
             _t.bfloat16: "BFloat16", _t.int32: "Int", _t.int64: "Long", _t.int16: "Short",
             _t.int8: "Char", _t.uint8: "Byte", _t.bool: "Bool"}
    return names.get(dt, str(dt))


def _fused_cross_entropy_applies(input, target, weight):
    """Whether cross_entropy runs as one fused kernel (log_softmax + nll_loss in one pass,
    saving only each row's log-sum-exp): logits [N, C] or [C] of float32/float64 with class
    indices, and a class weight that needs no gradient (PyTorch has none for it either; the
    composite path below gives one)."""
    if input.dtype not in (_t.float32, _t.float64) or input.dim() > 2:
        return False
    if target.dtype not in (_t.int64, _t.uint8) or target.dim() != input.dim() - 1:
        return False
    return weight is None or (weight.dtype == input.dtype and not weight.requires_grad)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """log_softmax over dim 1 (dim 0 for unbatched input) then nll_loss; ``target`` holds
    class indices or, with the input's shape and a float dtype, class probabilities.

    >>> round(cross_entropy(tensorlib.zeros(1, 2), tensorlib.tensor([0])).item(), 4)
    0.6931
    """
    reduction = _resolve_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if _fused_cross_entropy_applies(input, target, weight):
        unbatched = input.dim() == 1
        if unbatched:
            input, target = input.unsqueeze(0), target.reshape(1)
        code = {"none": 0, "mean": 1, "sum": 2}[reduction]
        loss = _t._nn_cross_entropy(input, target.long(), weight, code, ignore_index,
                                    float(label_smoothing))[0]
        return loss.reshape(()) if unbatched and code == 0 else loss
    class_dim = 0 if input.dim() == 1 else 1
    n_classes = input.shape[class_dim]
    logp = _t.log_softmax(input, class_dim)
    wshape = [1] * input.dim()
    wshape[class_dim] = n_classes
    if target.is_floating_point() and tuple(target.shape) == tuple(input.shape):
        if weight is not None and weight.numel() != n_classes:
            raise RuntimeError(f"weight tensor should be defined either for all {n_classes} "
                               f"classes or no classes but got weight tensor of shape: "
                               f"{_list(weight.shape)}")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        prod = logp * target
        if weight is not None:
            prod = prod * weight.reshape(wshape)
        loss = -prod.sum(class_dim)
        if reduction == "none":
            return loss
        if reduction == "sum":
            return loss.sum()
        return loss.sum() / (input.numel() / n_classes) if input.numel() else loss.sum() / 0.0
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing <= 0:
        return nll
    if class_dim == 0:
        target = target.reshape(())
    keep = target != ignore_index
    smooth = -(logp * weight.reshape(wshape) if weight is not None else logp).sum(class_dim)
    smooth = smooth * keep
    if reduction == "none":
        ret = smooth
    elif reduction == "sum":
        ret = smooth.sum()
    elif weight is not None:
        ret = smooth.sum() / (weight[_t.where(keep, target, 0)] * keep).sum()
    else:
        ret = smooth.sum() / keep.sum()
    return nll * (1 - label_smoothing) + ret * (label_smoothing / n_classes)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...), computed in
    one piece (``options``, PyTorch's chunking hints, change no result and are ignored);
    ``ignore_index=None`` ignores no class.

    >>> w = tensorlib.zeros(2, 3)
    >>> round(linear_cross_entropy(tensorlib.ones(1, 3), w, tensorlib.tensor([0])).item(), 4)
    0.6931
    """
    logits = linear(input, linear_weight, linear_bias)
    if ignore_index is None:
        ignore_index = -(2 ** 62)          # no class index can equal it
    return cross_entropy(logits, target, weight, None, ignore_index, None, reduction,
                         label_smoothing)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Pointwise KL divergence, ``input`` in log space: target * (log target - input), or
    with ``log_target`` exp(target) * (target - input). ``'batchmean'`` divides the sum by
    the batch size.

    >>> kl_div(tensorlib.tensor([0.0]), tensorlib.tensor([1.0]), reduction="sum").item()
    0.0
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    elif reduction == "mean":
        _warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                       "support size.'batchmean' divides only by the batch size, and aligns "
                       "with the KL div math definition.'mean' will be changed to behave the "
                       "same as 'batchmean' in the next major release.", stacklevel=2)
    if reduction not in ("none", "mean", "sum", "batchmean"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_target:
        loss = _t.exp(target) * (target - input)
    else:
        # xlogy(t, t): 0 where t == 0 (no NaN in either pass), NaN for t < 0
        safe = _t.where(target == 0, 1.0, target)
        loss = target * (_t.log(safe) - input)
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.dim() != 0 else total
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """Poisson negative log likelihood: exp(x) - t x (``log_input``) or x - t log(x + eps),
    plus Stirling's term for t > 1 when ``full``.

    >>> poisson_nll_loss(tensorlib.tensor([0.0]), tensorlib.tensor([0.0])).item()
    1.0
    """
    reduction = _resolve_reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = _t.exp(input) - target * input
    else:
        loss = input - target * _t.log(input + eps)
    if full:
        safe = _t.where(target > 1, target, 1.0)
        stirling = safe * _t.log(safe) - safe + 0.5 * _t.log(2 * _math.pi * safe)
        loss = loss + _t.where(target > 1, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Gaussian negative log likelihood 0.5 (log var + (x - t)^2 / var) (+ 0.5 log 2 pi when
    ``full``); ``var`` is clamped at ``eps`` with the clamp invisible to autograd.

    >>> gaussian_nll_loss(tensorlib.zeros(2), tensorlib.zeros(2), tensorlib.ones(2)).item()
    0.0
    """
    if not isinstance(var, _t.Tensor):
        var = _t.full_like(input, float(var))
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.dim() > 0
                  and var.shape[-1] == 1):         # (N, 1) against (N, D) broadcasts
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if _reads(var) and bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    # clamp the value only: gradients flow to var as if unclamped (PyTorch clamps under
    # no_grad on a clone)
    var = var + (var.clamp_min(eps) - var).detach()
    loss = 0.5 * (_t.log(var) + (input - target).square() / var)
    if full:
        loss = loss + 0.5 * _math.log(2 * _math.pi)
    return _reduce(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -target * (input1 - input2) + margin).

    >>> margin_ranking_loss(tensorlib.tensor([1.0]), tensorlib.tensor([2.0]),
    ...                     tensorlib.tensor([1.0])).item()
    1.0
    """
    reduction = _resolve_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError("margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {_torch_size(input1.shape)}, input2: "
                           f"{_torch_size(input2.shape)}, target: {_torch_size(target.shape)} ")
    loss = _t.relu(margin - target * (input1 - input2))
    return _reduce(loss, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """x where target is 1, max(0, margin - x) where target is -1.

    >>> hinge_embedding_loss(tensorlib.tensor([0.3, 2.0]), tensorlib.tensor([-1.0, 1.0]),
    ...                      reduction="sum").item()
    2.700000047683716
    """
    reduction = _resolve_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    neg = _t.where(target != 1, _t.relu(margin - input), 0.0)
    pos = _t.where(target != -1, input, 0.0)
    return _reduce(neg + pos, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * x)).

    >>> round(soft_margin_loss(tensorlib.tensor([0.0]), tensorlib.tensor([1.0])).item(), 4)
    0.6931
    """
    reduction = _resolve_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    loss = _t.log1p(_t.exp(-target * input))
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """One-vs-all logistic loss averaged over the classes (last dim).

    >>> round(multilabel_soft_margin_loss(tensorlib.zeros(1, 2), tensorlib.ones(1, 2)).item(), 4)
    0.6931
    """
    reduction = _resolve_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    return _reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-class multi-label hinge loss: the targets of a row are its leading non-negative
    class indices (up to the first -1); every (target j, non-target i) pair adds
    max(0, 1 - (x[j] - x[i])), the sum divided by the class count. composite: O(C^2) memory
    per row.

    >>> multilabel_margin_loss(tensorlib.tensor([[0.1, 0.2, 0.4, 0.8]]),
    ...                        tensorlib.tensor([[3, 0, -1, 1]])).item()
    0.8500000238418579
    """
    reduction = _resolve_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    unbatched = input.dim() <= 1
    if input.dim() > 2:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {_list(input.shape)}")
    x = input.reshape(1, -1) if unbatched else input
    t = target.reshape(1, -1) if unbatched else target
    if tuple(t.shape) != tuple(x.shape):
        raise RuntimeError(f"inconsistent target size: {_list(target.shape)} for input of "
                           f"size: {_list(input.shape)}")
    C = x.shape[1]
    t = t.long()
    valid = (t >= 0).long().cumprod(1).bool()       # entries before the first -1
    if _reads(t) and bool(((t < -1) | (t >= C)).masked_select(valid | (t < -1)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    safe = _t.where(valid, t, 0)
    counts = _t.zeros(x.shape, dtype=x.dtype, device=x.device).scatter_add(
        1, safe, valid.to(x.dtype))
    is_target = counts > 0
    # margins[n, j, i] = 1 - x[n, j] + x[n, i]
    margins = _t.relu(1.0 - x.unsqueeze(2) + x.unsqueeze(1))
    pair = counts.unsqueeze(2) * (~is_target).to(x.dtype).unsqueeze(1)
    loss = (margins * pair).sum((1, 2)) / C
    if unbatched:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Multi-class hinge loss: sum over i != y of max(0, margin - x[y] + x[i])^p * w[y],
    divided by the class count.

    >>> multi_margin_loss(tensorlib.tensor([[0.1, 0.2, 0.4, 0.8]]), tensorlib.tensor([3])).item()
    0.32499998807907104
    """
    reduction = _resolve_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    unbatched = input.dim() <= 1
    x = input.reshape(1, -1) if unbatched else input
    t = target.reshape(-1)
    if x.dim() != 2 or t.shape[0] != x.shape[0]:
        raise RuntimeError(f"inconsistent target size, expected {x.shape[0]} but got "
                           f"{_list(target.shape)}")
    C = x.shape[1]
    t = t.long()
    if _reads(t) and bool(((t < 0) | (t >= C)).any()):
        raise RuntimeError("target out of range")
    xy = x.gather(1, t.unsqueeze(1))
    z = _t.relu(margin - xy + x)
    if p == 2:
        z = z.square()
    if weight is not None:
        z = z * weight.to(x.dtype)[t].unsqueeze(1)
    not_y = _t.ones(x.shape, dtype=x.dtype, device=x.device).scatter_(1, t.unsqueeze(1), 0.0)
    loss = (z * not_y).sum(1) / C
    if unbatched:
        loss = loss.reshape(target.shape)
    return _reduce(loss, reduction)


_COS_EPS = 1e-12


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1.

    >>> round(cosine_embedding_loss(tensorlib.tensor([[1.0, 0.0]]), tensorlib.tensor([[0.0, 1.0]]),
    ...                             tensorlib.tensor([1.0])).item(), 4)
    1.0
    """
    reduction = _resolve_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != input2.dim():
        raise RuntimeError(f"cosine_embedding_loss: Input1 and Input2 must have the same "
                           f"dimension, but got {input1.dim()} and {input2.dim()}")
    d = input1.dim() - 1
    prod = (input1 * input2).sum(d)
    m1 = input1.square().sum(d) + _COS_EPS
    m2 = input2.square().sum(d) + _COS_EPS
    cos = prod / _t.sqrt(m1 * m2)
    pos = _t.where(target == 1, 1 - cos, 0.0)
    neg = _t.where(target == -1, _t.relu(cos - margin), 0.0)
    return _reduce(pos + neg, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0) with d the p-norm pairwise distance (``swap``:
    d(a, n) replaced by min(d(a, n), d(p, n))).

    >>> triplet_margin_loss(tensorlib.zeros(1, 2), tensorlib.zeros(1, 2),
    ...                     tensorlib.zeros(1, 2)).item()
    1.0
    """
    reduction = _resolve_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    a, pos, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pos == n):
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a}D, positive {pos}D, "
                           f"and negative {n}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _t.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(_t.relu(margin + d_pos - d_neg), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """triplet_margin_loss with any distance (default: pairwise_distance).

    >>> triplet_margin_with_distance_loss(tensorlib.zeros(1, 2), tensorlib.zeros(1, 2),
    ...                                   tensorlib.zeros(1, 2)).item()
    1.0
    """
    if margin <= 0:
        raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, "
                         f"got {margin} instead")
    _check_reduction(reduction)
    a, pos, n = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pos == n):
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a}D, positive {pos}D, "
                           f"and negative {n}D inputs")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _t.minimum(d_neg, dist(positive, negative))
    return _reduce(_t.relu(margin + d_pos - d_neg), reduction)


# --------------------------------------------------------------------------- distances

def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """p-norm of x1 - x2 + eps over the last dim.

    >>> pairwise_distance(tensorlib.tensor([[3.0, 0.0]]), tensorlib.tensor([[0.0, 4.0]]),
    ...                   eps=0.0).tolist()
    [5.0]
    """
    ndim = max(x1.dim(), x2.dim())
    diff = x1 - x2 + eps
    if ndim == 0:
        return diff.abs()
    return _t.norm(diff, p, ndim - 1, keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine of the angle between x1 and x2 along ``dim`` (each norm clamped at ``eps``).

    >>> cosine_similarity(tensorlib.tensor([[1.0, 0.0]]), tensorlib.tensor([[2.0, 0.0]])).tolist()
    [1.0]
    """
    n1 = _t.norm(x1, 2, dim, True).clamp_min(eps)
    n2 = _t.norm(x2, 2, dim, True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pdist(input, p=2):
    """Distances between every pair of rows (i < j) of an (N, M) input, row-major.

    >>> pdist(tensorlib.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])).tolist()
    [5.0, 1.0, 4.242640495300293]
    """
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    import numpy as np
    n = input.shape[0]
    if n < 2:
        return input.new_zeros(0)
    iu, ju = np.triu_indices(n, 1)          # host index lists, copied into our storage
    ii = _t.tensor(iu.astype(np.int64), device=input.device)
    jj = _t.tensor(ju.astype(np.int64), device=input.device)
    return _t.norm(input.index_select(0, ii) - input.index_select(0, jj), p, 1)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """x / max(||x||_p, eps) along ``dim``.

    >>> normalize(tensorlib.tensor([[3.0, 4.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    denom = _t.norm(input, p, dim, True).clamp_min(eps)
    if out is None:
        return input / denom
    return _t.div(input, denom, out=out)


# --------------------------------------------------------------------------- linear

def linear(input, weight, bias=None):
    """input @ weight.T + bias.

    >>> linear(tensorlib.ones(1, 2), tensorlib.ones(3, 2), tensorlib.zeros(3)).tolist()
    [[2.0, 2.0, 2.0]]
    """
    if input.dim() > 2 and weight.dim() == 2:
        # one 2-D product over the flattened leading dims (the N-d @ 2-d matmul path of
        # the core keeps a block alive per call when recording autograd today)
        lead = tuple(input.shape[:-1])
        out = linear(input.reshape(-1, input.shape[-1]), weight, bias)
        return out.reshape(lead + (weight.shape[0],))
    if input.dim() == 2 and weight.dim() == 2 and bias is not None:
        return _t.addmm(bias, input, weight.t())
    out = _t.matmul(input, weight.t())
    return out + bias if bias is not None else out


def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = x1[..., i] W[o, i, j] x2[..., j] + b[o].

    >>> bilinear(tensorlib.ones(1, 2), tensorlib.ones(1, 3), tensorlib.ones(4, 2, 3)).tolist()
    [[6.0, 6.0, 6.0, 6.0]]
    """
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-dimensional but got "
                           f"{weight.dim()} dims")
    O, I, J = weight.shape
    if input1.shape[-1] != I or input2.shape[-1] != J:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {I}" if input1.shape[-1] != I else
                           f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {J}")
    lead = tuple(input1.shape[:-1])
    x1 = input1.reshape(-1, I)
    x2 = input2.reshape(-1, J)
    # (N, I) @ (I, O*J) -> (N, O, J), then contract J against x2
    tmp = _t.matmul(x1, weight.permute(1, 0, 2).reshape(I, O * J)).reshape(-1, O, J)
    out = _t.bmm(tmp, x2.unsqueeze(2)).squeeze(2)
    if bias is not None:
        out = out + bias
    return out.reshape(lead + (O,))


def one_hot(tensor, num_classes=-1):
    """int64 one-hot encoding along a new last dim.

    >>> one_hot(tensorlib.tensor([0, 2])).tolist()
    [[1, 0, 0], [0, 0, 1]]
    """
    if tensor.dtype != _t.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return _t.zeros(tuple(tensor.shape) + (num_classes,), dtype=_t.int64,
                        device=tensor.device)
    if _reads(tensor):
        if bool((tensor < 0).any()):
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = int(tensor.max().item()) + 1
        elif bool((tensor >= num_classes).any()):
            raise RuntimeError("Class values must be smaller than num_classes.")
    elif num_classes == -1:
        raise RuntimeError("Can not infer total number of classes from a meta tensor.")
    out = _t.zeros(tuple(tensor.shape) + (num_classes,), dtype=_t.int64, device=tensor.device)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)


# --------------------------------------------------------------------------- padding

def _pad_indices(n, lo, hi, mode, dim, shape, device):
    """Source index along one dim for each output position. Negative pads crop first; the
    positive ones then pad the cropped range (PyTorch's order)."""
    if mode == "reflect" and (lo >= n or hi >= n):
        raise RuntimeError(f"Argument #4: Padding size should be less than the "
                           f"corresponding input dimension, but got: padding ({lo}, {hi}) "
                           f"at dimension {dim} of input {_list(shape)}")
    if mode == "circular" and (lo > n or hi > n):
        raise RuntimeError("Padding value causes wrapping around more than once.")
    start = max(-lo, 0)
    m = n - max(-lo, 0) - max(-hi, 0)
    # (circular padding that crops everything and adds nothing is an empty dim, as PyTorch)
    if m < 0 or (m == 0 and not (mode == "circular" and lo <= 0 and hi <= 0)):
        raise RuntimeError(f"input tensor size {n} is too small for padding ({lo}, {hi}) at "
                           f"dimension {dim}")
    idx = []
    for i in range(-max(lo, 0), m + max(hi, 0)):
        if mode == "reflect":
            j = -i if i < 0 else (2 * (m - 1) - i if i >= m else i)
        elif mode == "replicate":
            j = min(max(i, 0), m - 1)
        else:
            j = i % m
        idx.append(start + j)
    return _t.tensor(idx, dtype=_t.int64, device=device)


def pad(input, pad, mode="constant", value=None):
    """Pad the last len(pad) // 2 dims; ``pad`` lists (left, right) pairs from the last dim
    backwards. Modes: constant (any dims, negative pads crop), reflect, replicate, circular
    (1 to 3 padded dims).

    >>> pad(tensorlib.tensor([[1.0, 2.0]]), (1, 1)).tolist()
    [[0.0, 1.0, 2.0, 0.0]]
    >>> pad(tensorlib.tensor([[[1.0, 2.0, 3.0]]]), (2, 1), mode="reflect").tolist()
    [[[3.0, 2.0, 1.0, 2.0, 3.0, 2.0]]]
    """
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    ndim = input.dim()
    npad = len(pad) // 2
    if mode == "constant":
        if npad > ndim:
            raise RuntimeError("Padding length should be less than or equal to two times the "
                               f"input dimension but got padding length {len(pad)} and input of "
                               f"dimension {ndim}")
        return _constant_pad(input, pad, 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise ValueError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if npad not in (1, 2, 3) or ndim not in (npad + 1, npad + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    out = input
    for k in range(npad):
        dim = ndim - 1 - k
        lo, hi = pad[2 * k], pad[2 * k + 1]
        if lo == 0 and hi == 0:
            continue
        idx = _pad_indices(input.shape[dim], lo, hi, mode, dim, tuple(input.shape),
                           input.device)
        out = out.index_select(dim, idx)
    return out


def _constant_pad(input, pad, value):
    shape = list(input.shape)
    src = input
    ndim = input.dim()
    # negative pads crop first
    for k in range(len(pad) // 2):
        dim = ndim - 1 - k
        lo, hi = pad[2 * k], pad[2 * k + 1]
        start = -lo if lo < 0 else 0
        stop = shape[dim] + hi if hi < 0 else shape[dim]
        if start or stop != shape[dim]:
            if stop - start < 0:
                raise RuntimeError(f"The input size {shape[dim]}, plus negative padding {lo} "
                                   f"and {hi} resulted in a negative output size, which is "
                                   f"invalid. Check dimension {dim} of your input.")
            src = src.narrow(dim, start, stop - start)
    out_shape = list(src.shape)
    region = [slice(None)] * ndim
    for k in range(len(pad) // 2):
        dim = ndim - 1 - k
        lo, hi = max(pad[2 * k], 0), max(pad[2 * k + 1], 0)
        region[dim] = slice(lo, lo + src.shape[dim])
        out_shape[dim] += lo + hi
    out = _t.full(out_shape, value, dtype=input.dtype, device=input.device)
    out[tuple(region)] = src
    return out


# --------------------------------------------------------------------------- dropout

def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _apply_noise(input, noise, inplace):
    if inplace:
        return input.mul_(noise)
    return input * noise


def _dropout_mask(input, p, shape):
    keep = 1.0 - p
    noise = _t.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(keep)
    return noise.div_(keep) if keep > 0 else noise


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by 1 / (1 - p) (training
    only), drawing from tensorlib's generator.

    >>> dropout(tensorlib.ones(3), 0.5, training=False).tolist()
    [1.0, 1.0, 1.0]
    """
    _check_p(p)
    if not training or p == 0:
        return input
    if p == 1:
        return input.mul_(0.0) if inplace else input * 0.0
    return _apply_noise(input, _dropout_mask(input, p, tuple(input.shape)), inplace)


def _feature_dropout(input, p, training, inplace, spatial_from, alpha=False):
    _check_p(p)
    if not training or p == 0:
        return input
    shape = tuple(input.shape[:spatial_from]) + (1,) * (input.dim() - spatial_from)
    if alpha:
        return _alpha_noise(input, p, shape, inplace)
    if p == 1:
        return input.mul_(0.0) if inplace else input * 0.0
    return _apply_noise(input, _dropout_mask(input, p, shape), inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of a (N, C, L) or (C, L) input.

    >>> dropout1d(tensorlib.ones(2, 3), training=False).shape
    tensorlib.Size([2, 3])
    """
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout "
                           "on inputs with 1 spatial dimension, a channel dimension, and an "
                           "optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, input.dim() - 1)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of a (N, C, H, W) input (a 3-D input is taken as (N, C, L) with a
    warning, as PyTorch does).

    >>> dropout2d(tensorlib.ones(1, 2, 3, 3), training=False).shape
    tensorlib.Size([1, 2, 3, 3])
    """
    if input.dim() not in (3, 4):
        _warnings.warn(f"dropout2d: Received a {input.dim()}-D input to dropout2d, which is "
                       "deprecated and will result in an error in a future release. To retain "
                       "the behavior and silence this warning, please use dropout instead. "
                       "Note that dropout2d exists to provide channel-wise dropout on inputs "
                       "with 2 spatial dimensions, a channel dimension, and an optional batch "
                       "dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if input.dim() == 3:
        _warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                       "channel-wise 1D dropout behavior is desired - input is interpreted as "
                       "shape (N, C, L), where C is the channel dim. This behavior will change "
                       "in a future release to interpret the input as one without a batch "
                       "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
                       "behavior, please switch to using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace, min(2, input.dim()))


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of a (N, C, D, H, W) or (C, D, H, W) input.

    >>> dropout3d(tensorlib.ones(1, 2, 2, 2, 2), training=False).shape
    tensorlib.Size([1, 2, 2, 2, 2])
    """
    if input.dim() not in (4, 5):
        _warnings.warn(f"dropout3d: Received a {input.dim()}-D input to dropout3d, which is "
                       "deprecated and will result in an error in a future release. To retain "
                       "the behavior and silence this warning, please use dropout instead. "
                       "Note that dropout3d exists to provide channel-wise dropout on inputs "
                       "with 3 spatial dimensions, a channel dimension, and an optional batch "
                       "dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    return _feature_dropout(input, p, training, inplace, input.dim() - 3)


_ALPHA = 1.7580993408473766


def _alpha_noise(input, p, shape, inplace):
    if p == 1:
        return input.mul_(0.0) if inplace else input * 0.0
    keep = _t.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1.0 - p)
    a = 1.0 / _math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    # kept: a * x; dropped: the SELU saturation value, shifted so the mean stays 0
    b = (keep - 1.0) * (_ALPHA * a) + _ALPHA * a * p
    noise = keep * a
    if inplace:
        return input.mul_(noise).add_(b)
    return input * noise + b


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps a SELU network's mean and variance (dropped values go to the SELU
    saturation value, then an affine correction).

    >>> alpha_dropout(tensorlib.ones(2), 0.5).tolist()
    [1.0, 1.0]
    """
    _check_p(p)
    if not training or p == 0:
        return input
    return _alpha_noise(input, p, tuple(input.shape), inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels (dim 1 of a batched input).

    >>> feature_alpha_dropout(tensorlib.ones(1, 2, 2), 0.5).shape
    tensorlib.Size([1, 2, 2])
    """
    return _feature_dropout(input, p, training, inplace, 2, alpha=True)


# --------------------------------------------------------------------------- embeddings

def _renorm_rows_(weight, indices, max_norm, norm_type):
    """Scale in place the rows of ``weight`` that ``indices`` touch down to ``max_norm``."""
    with _t.no_grad():
        rows = indices.reshape(-1).unique()
        norms = _t.norm(weight[rows], norm_type, 1)
        over = norms > max_norm
        if bool(over.any()):
            rows = rows[over]
            scale = max_norm / (norms[over] + 1e-7)
            weight[rows] = weight[rows] * scale.unsqueeze(1).to(weight.dtype)


def _warn_dense(name):
    _warnings.warn(f"{name}: tensorlib has no sparse tensors; sparse=True gives the weight a "
                   "dense gradient (the same values)", stacklevel=3)


def _check_indices(input, n):
    if _reads(input) and bool(((input < 0) | (input >= n)).any()):
        raise IndexError("index out of range in self")


def _freq_scale(out, idx, n):
    """Scale the gradient of each gathered row by 1 / (its count in the batch) while
    keeping the forward value."""
    ones = _t.ones(idx.shape, dtype=out.dtype, device=out.device)
    counts = _t.zeros(n, dtype=out.dtype, device=out.device).index_add(0, idx, ones)
    inv = (1.0 / counts[idx]).reshape((-1,) + (1,) * (out.dim() - 1))
    scaled = out * inv
    return scaled + (out - scaled).detach()


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` picked by the integer ``input``; the row at ``padding_idx``
    gets no gradient; ``max_norm`` renormalises the rows used, in place.

    >>> embedding(tensorlib.tensor([1]), tensorlib.tensor([[0.0], [5.0]])).tolist()
    [[5.0]]
    """
    n = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < n, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -n, "Padding_idx must be within num_embeddings"
            padding_idx = n + padding_idx
    if sparse:
        _warn_dense("embedding")
    if input.dtype not in (_t.int64, _t.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{input.dtype} instead (while checking arguments for embedding)")
    _check_indices(input, n)
    if max_norm is not None and _reads(input):
        _renorm_rows_(weight, input, max_norm, norm_type)
    idx = input.reshape(-1).long()
    out = weight.index_select(0, idx)
    if _needs_grad(weight):
        if scale_grad_by_freq:
            out = _freq_scale(out, idx, n)
        if padding_idx is not None:
            keep = (idx != padding_idx).unsqueeze(1)
            out = _t.where(keep, out, out.detach())
    return out.reshape(tuple(input.shape) + (weight.shape[1],))


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of embeddings without materialising the lookups per bag:
    a 2-D input is one bag per row; a 1-D input is cut into bags at ``offsets``. Empty bags
    give zeros. composite: index_select + index_add / scatter_reduce.

    >>> w = tensorlib.tensor([[1.0], [2.0], [4.0]])
    >>> embedding_bag(tensorlib.tensor([0, 1, 2]), w, tensorlib.tensor([0, 2]), mode="sum").tolist()
    [[3.0], [4.0]]
    """
    n, D = weight.shape
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        B, L = input.shape
        offsets = (_t.arange(0, B * L, L, dtype=_t.int64, device=input.device) if L
                   else _t.zeros(B, dtype=_t.int64, device=input.device))
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
        include_last_offset = False
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum' "
                                  f"(got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    if sparse:
        _warn_dense("embedding_bag")
    if padding_idx is not None:
        if padding_idx >= n or padding_idx < -n:
            raise AssertionError("padding_idx must be within the number of embeddings")
        padding_idx %= n
    _check_indices(input, n)
    if max_norm is not None and _reads(input):
        _renorm_rows_(weight, input, max_norm, norm_type)
    offsets = offsets.long()
    nbags = offsets.shape[0] - 1 if include_last_offset else offsets.shape[0]
    total = input.shape[0]
    if _reads(offsets):
        if offsets[0].item() != 0:
            raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                               f"mini-batch has to start from position 0. However, got "
                               f"{offsets[0].item()}")
        if offsets[-1].item() > total:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {total}, "
                               f"but got offsets[-1] of {offsets[-1].item()}")
    idx = input.long()
    dev = weight.device
    # bag of each position: how many bag starts lie at or before it, minus one
    starts = offsets[1:nbags] if nbags > 0 else offsets[:0]
    marks = _t.zeros(total + 1, dtype=_t.int64, device=dev).index_add(
        0, starts, _t.ones(starts.shape, dtype=_t.int64, device=dev))
    bag = marks[:total].cumsum(0)
    if include_last_offset and nbags >= 0 and offsets.numel():
        # positions at or after the last offset belong to no bag
        inside = _t.arange(total, dtype=_t.int64, device=dev) < offsets[-1]
    else:
        inside = _t.ones(total, dtype=_t.bool, device=dev)
    if padding_idx is not None:
        inside = inside & (idx != padding_idx)
    rows = weight.index_select(0, idx)
    if scale_grad_by_freq and _needs_grad(weight):
        rows = _freq_scale(rows, idx, n)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    # positions outside every bag (padding, after the last offset) stay in place with no
    # weight, so the shapes never depend on the values
    bag = bag.clamp(0, max(nbags - 1, 0))
    keep = inside.unsqueeze(1)
    if nbags == 0:
        return _t.zeros((0, D), dtype=weight.dtype, device=dev)
    if mode == "max":
        rows = rows.masked_fill(~keep, float("-inf"))
        out = _t.zeros((nbags, D), dtype=weight.dtype, device=dev).scatter_reduce(
            0, bag.unsqueeze(1).expand(bag.shape[0], D), rows, "amax", include_self=False)
        # a bag of padding only reduces -inf rows: PyTorch gives zeros
        return out.masked_fill(out == float("-inf"), 0.0)
    out = _t.zeros((nbags, D), dtype=weight.dtype, device=dev).index_add(
        0, bag, rows * keep)
    if mode == "mean":
        counts = _t.zeros(nbags, dtype=weight.dtype, device=dev).index_add(
            0, bag, inside.to(weight.dtype))
        out = out / counts.clamp_min(1.0).unsqueeze(1)
    return out


# --------------------------------------------------------------------------- normalization
# float32/float64 run the fused one-pass ops (native_layer_norm, native_group_norm,
# native_batch_norm: tensorlib/ops/decl/nn.py); half precision and mixed dtypes run the
# composites below them.

def _fused_norm_dtypes(input, *others):
    dt = input.dtype
    return (dt == _t.float32 or dt == _t.float64) and all(
        o is None or o.dtype == dt for o in others)


def _normalized_shape(input, normalized_shape):
    """``normalized_shape`` as a tuple, checked against the input's trailing dims with
    PyTorch's messages (layer_norm and rms_norm)."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    ns = tuple(int(v) for v in normalized_shape)
    k = len(ns)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    if input.dim() < k or tuple(input.shape[input.dim() - k:]) != ns:
        raise RuntimeError(f"Given normalized_shape={_list(ns)}, expected input with shape "
                           f"[*, {', '.join(str(v) for v in ns)}], but got input of size"
                           f"{_list(input.shape)}")
    return ns


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the trailing ``normalized_shape`` dims (biased variance), then scale
    and shift. composite: var_mean + two elementwise passes.

    >>> [round(v, 4) for v in layer_norm(tensorlib.tensor([[1.0, 3.0]]), (2,))[0].tolist()]
    [-1.0, 1.0]
    """
    ns = _normalized_shape(input, normalized_shape)
    k = len(ns)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {_list(t.shape)} and normalized_shape = "
                               f"{_list(ns)}")
    if _fused_norm_dtypes(input, weight, bias):
        return _t.native_layer_norm(input, ns, weight, bias, eps)[0]
    dims = tuple(range(input.dim() - k, input.dim()))
    var, mean = _t.var_mean(input, dim=dims, correction=0, keepdim=True)
    out = (input - mean) * _t.rsqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise each group of channels of each sample, then a per-channel affine.

    >>> y = group_norm(tensorlib.tensor([[[1.0], [3.0]]]), 1)
    >>> [round(v, 4) for v in y.reshape(-1).tolist()]
    [-1.0, 1.0]
    """
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    N, C = input.shape[0], input.shape[1]
    if C % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {_list(input.shape)} and "
                           f"num_groups={num_groups}")
    if _fused_norm_dtypes(input, weight, bias):
        hw = input.numel() // (N * C) if N * C else _math.prod(input.shape[2:])
        return _t.native_group_norm(input, weight, bias, N, C, hw, num_groups, eps)[0]
    x = input.reshape(N, num_groups, -1)
    var, mean = _t.var_mean(x, dim=2, correction=0, keepdim=True)
    out = ((x - mean) * _t.rsqrt(var + eps)).reshape(input.shape)
    cshape = (C,) + (1,) * (input.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(cshape)
    if bias is not None:
        out = out + bias.reshape(cshape)
    return out


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) over the trailing ``normalized_shape`` dims, times
    ``weight`` (``eps`` None: the dtype's machine epsilon).

    >>> [round(v, 4) for v in rms_norm(tensorlib.tensor([[3.0, 4.0]]), (2,), eps=0.0)[0].tolist()]
    [0.8485, 1.1314]
    """
    ns = _normalized_shape(input, normalized_shape)
    k = len(ns)
    if eps is None:
        eps = _t.finfo(input.dtype).eps
    dims = tuple(range(input.dim() - k, input.dim()))
    out = input * _t.rsqrt(input.square().mean(dims, keepdim=True) + eps)
    return out * weight if weight is not None else out


def _update_running_(running, value, momentum):
    with _t.no_grad():
        running.mul_(1 - momentum).add_(value.detach().to(running.dtype) * momentum)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalise each channel (dim 1) over the batch and spatial dims. In training the batch
    statistics are used and the running ones (when given) updated in place:
    running = (1 - momentum) * running + momentum * batch (unbiased variance); in eval the
    running statistics are used.

    >>> y = batch_norm(tensorlib.tensor([[1.0], [3.0]]), None, None, training=True)
    >>> [round(v, 4) for v in y.reshape(-1).tolist()]
    [-1.0, 1.0]
    """
    if input.dim() < 2:
        raise ValueError(f"Expected 2D or 3D input (got {input.dim()}D input)")
    C = input.shape[1]
    if training:
        count = input.numel() // C if C else 0
        if count == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got "
                             f"input size {_torch_size(input.shape)}")
    use_batch = training
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean must be defined in evaluation mode")
    if _fused_norm_dtypes(input, weight, bias, running_mean, running_var) \
            and momentum is not None:
        return _t.native_batch_norm(input, weight, bias, running_mean, running_var, training,
                                    momentum, eps)[0]
    cshape = (1, C) + (1,) * (input.dim() - 2)
    if use_batch:
        dims = (0,) + tuple(range(2, input.dim()))
        var, mean = _t.var_mean(input, dim=dims, correction=0, keepdim=True)
        if running_mean is not None:
            _update_running_(running_mean, mean.reshape(C), momentum)
        if running_var is not None:
            n = input.numel() // C
            _update_running_(running_var, var.reshape(C) * (n / (n - 1)), momentum)
    else:
        mean = running_mean.reshape(cshape)
        var = running_var.reshape(cshape)
    out = (input - mean) * _t.rsqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(cshape)
    if bias is not None:
        out = out + bias.reshape(cshape)
    return out


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalise each channel of each sample over its spatial dims; running statistics
    (when given) are updated with the batch average of the per-instance ones.

    >>> [round(v, 4) for v in instance_norm(tensorlib.tensor([[[1.0, 3.0]]])).reshape(-1).tolist()]
    [-1.0, 1.0]
    """
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher input (got {input.dim()}D input)")
    N, C = input.shape[0], input.shape[1]
    cshape = (1, C) + (1,) * (input.dim() - 2)
    if use_input_stats:
        if input.numel() // (N * C) == 1 if N * C else False:
            raise ValueError(f"Expected more than 1 spatial element when training, got input "
                             f"size {_torch_size(input.shape)}")
        dims = tuple(range(2, input.dim()))
        var, mean = _t.var_mean(input, dim=dims, correction=0, keepdim=True)
        if running_mean is not None:
            _update_running_(running_mean, mean.reshape(N, C).mean(0), momentum)
        if running_var is not None:
            n = input.numel() // (N * C)
            _update_running_(running_var, (var.reshape(N, C) * (n / (n - 1))).mean(0),
                             momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when "
                               "use_input_stats is false")
        mean = running_mean.reshape(cshape)
        var = running_var.reshape(cshape)
    out = (input - mean) * _t.rsqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(cshape)
    if bias is not None:
        out = out + bias.reshape(cshape)
    return out


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha * mean of x^2 over ``size`` neighbouring channels)^beta.
    composite: pad + unfold over the channel dim.

    >>> local_response_norm(tensorlib.ones(1, 2, 1), 2, alpha=0.0).reshape(-1).tolist()
    [1.0, 1.0]
    """
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          "
                         f"input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    sq = input.square()
    # zero-pad the channel dim by (size // 2, (size - 1) // 2), then average windows of size
    padded = _constant_pad(sq.movedim(1, -1), [size // 2, (size - 1) // 2], 0.0)
    avg = padded.unfold(-1, size, 1).mean(-1).movedim(-1, 1)
    div = (avg * alpha + k).pow(beta)
    return input / div


# --------------------------------------------------------------------------- attention

def _fused_softmax_applies(scores, mask):
    """Whether attention weights come from the fused masked-softmax kernel (one pass per
    row, masks read in place): float32/float64 scores of at most 7 dims, and no mask or a
    bool mask or a float one of the scores' dtype that needs no gradient."""
    if scores.dtype not in (_t.float32, _t.float64) or not 1 <= scores.dim() <= 7:
        return False
    if mask is None or mask.dtype == _t.bool:
        return True
    return mask.dtype == scores.dtype and not mask.requires_grad


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(Q K^T * scale + mask) V over the last two dims. A bool mask keeps where True,
    a float mask is added; ``is_causal`` masks the upper triangle; rows with every key
    masked give zeros. A matmul, the fused masked softmax (scale and mask applied in the
    same pass), a matmul.

    >>> q = tensorlib.ones(1, 2, 4)
    >>> scaled_dot_product_attention(q, q, q).shape
    tensorlib.Size([1, 2, 4])
    """
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    L, S, E = query.shape[-2], key.shape[-2], query.shape[-1]
    if attn_mask is not None and attn_mask.dtype != _t.bool and not attn_mask.is_floating_point():
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {_c_name(attn_mask.dtype)} and  "
                           f"query.dtype: {_c_name(query.dtype)} instead.")
    if enable_gqa and key.dim() >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = key.unsqueeze(-3).expand(*key.shape[:-2], rep, S, E).reshape(
            *key.shape[:-3], key.shape[-3] * rep, S, E)
        Ev = value.shape[-1]
        value = value.unsqueeze(-3).expand(*value.shape[:-2], rep, S, Ev).reshape(
            *value.shape[:-3], value.shape[-3] * rep, S, Ev)
    s = 1.0 / _math.sqrt(E) if scale is None else scale
    scores = _t.matmul(query, key.transpose(-2, -1))
    mask = attn_mask
    if mask is not None and mask.is_floating_point() and mask.dtype != scores.dtype \
            and not mask.requires_grad:
        mask = mask.to(scores.dtype)
    if _fused_softmax_applies(scores, mask):
        attn = _t._nn_masked_softmax(scores, mask, s, is_causal, True)
    else:
        scores = scores * s
        keep = None
        if is_causal:
            keep = _t.ones((L, S), dtype=_t.bool, device=query.device).tril()
        elif mask is not None and mask.dtype == _t.bool:
            keep = mask
        if keep is not None:
            scores = scores.masked_fill(~keep, float("-inf"))
        elif mask is not None:
            scores = scores + mask
        attn = _t.softmax(scores, -1)
        if keep is not None:
            # a row with every key masked attends to nothing
            attn = attn.masked_fill(~keep.any(-1, keepdim=True), 0.0)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return _t.matmul(attn, value)


def _c_name(dt):
    names = {_t.float32: "float", _t.float64: "double", _t.int64: "long int", _t.int32: "int",
             _t.float16: "c10::Half", _t.bfloat16: "c10::BFloat16", _t.uint8: "unsigned char",
             _t.int8: "signed char", _t.int16: "short int", _t.bool: "bool"}
    return names.get(dt, str(dt))


# --------------------------------------------------------------------------- im2col

def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: sliding (kh, kw) blocks of a (N, C, H, W) (or (C, H, W)) input as columns,
    (N, C * kh * kw, L).

    >>> unfold(tensorlib.arange(4.0).reshape(1, 1, 2, 2), 2).reshape(-1).tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    unbatched = input.dim() == 3
    if input.dim() not in (3, 4):
        raise NotImplementedError(f"Input Error: Only 3D or 4D input Tensors are supported "
                                  f"(got {input.dim()}D)")
    x = input.unsqueeze(0) if unbatched else input
    kh, kw = _tuple(kernel_size, 2)
    dh, dw = _tuple(dilation, 2)
    ph, pw = _tuple(padding, 2)
    sh, sw = _tuple(stride, 2)
    N, C, H, W = x.shape
    if ph or pw:
        x = _constant_pad(x, [pw, pw, ph, ph], 0.0)
    ekh, ekw = dh * (kh - 1) + 1, dw * (kw - 1) + 1
    oh = (H + 2 * ph - ekh) // sh + 1
    ow = (W + 2 * pw - ekw) // sw + 1
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"Given input with spatial size ({H}, {W}), kernel_size=({kh}, {kw}), "
                           f"dilation=({dh}, {dw}), padding=({ph}, {pw}), calculated shape of "
                           f"the array of sliding blocks as ({oh}, {ow}), but its components "
                           f"must be at least one.")
    # (N, C, oh, ow, ekh, ekw); dilation picks every dh-th / dw-th tap (index_select, as
    # basic slicing of this overlapping view has a wrong backward in the core today)
    blocks = x.unfold(2, ekh, sh).unfold(3, ekw, sw)
    if dh > 1:
        blocks = blocks.index_select(4, _t.arange(0, ekh, dh, dtype=_t.int64, device=x.device))
    if dw > 1:
        blocks = blocks.index_select(5, _t.arange(0, ekw, dw, dtype=_t.int64, device=x.device))
    cols = blocks.permute(0, 1, 4, 5, 2, 3).reshape(N, C * kh * kw, oh * ow)
    return cols.squeeze(0) if unbatched else cols


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """col2im: sum the (N, C * kh * kw, L) columns back into (N, C, H, W), overlaps
    added. composite: index_add over precomputed positions.

    >>> fold(tensorlib.ones(1, 4, 1), (2, 2), 2).reshape(-1).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    unbatched = input.dim() == 2
    if input.dim() not in (2, 3):
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input "
                                  f"Tensors are supported (got {input.dim()}D)")
    x = input.unsqueeze(0) if unbatched else input
    H, W = _tuple(output_size, 2)
    kh, kw = _tuple(kernel_size, 2)
    dh, dw = _tuple(dilation, 2)
    ph, pw = _tuple(padding, 2)
    sh, sw = _tuple(stride, 2)
    N, CK, L = x.shape
    if CK % (kh * kw):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={CK} and "
                           f"kernel_size=({kh}, {kw})")
    C = CK // (kh * kw)
    oh = (H + 2 * ph - (dh * (kh - 1) + 1)) // sh + 1
    ow = (W + 2 * pw - (dw * (kw - 1) + 1)) // sw + 1
    if oh * ow != L:
        raise RuntimeError(f"Given output_size=({H}, {W}), kernel_size=({kh}, {kw}), "
                           f"dilation=({dh}, {dw}), padding=({ph}, {pw}), stride=({sh}, {sw}), "
                           f"expected size of input's dimension 2 to match the calculated "
                           f"number of sliding blocks {oh} * {ow} = {oh * ow}, but got "
                           f"input.size(2)={L}.")
    Hp, Wp = H + 2 * ph, W + 2 * pw

    def ar(n):
        return _t.arange(n, dtype=_t.int64, device=x.device)
    # padded flat position of tap (i, j) of block (a, b)
    row = (ar(kh) * dh).reshape(kh, 1, 1, 1) + (ar(oh) * sh).reshape(1, 1, oh, 1)
    col = (ar(kw) * dw).reshape(1, kw, 1, 1) + (ar(ow) * sw).reshape(1, 1, 1, ow)
    pos = (row * Wp + col).reshape(-1)                      # (kh * kw * oh * ow,)
    src = x.reshape(N, C, kh * kw * L)
    out = _t.zeros((N, C, Hp * Wp), dtype=x.dtype, device=x.device).index_add(2, pos, src)
    out = out.reshape(N, C, Hp, Wp)[:, :, ph:ph + H, pw:pw + W]
    return out.squeeze(0) if unbatched else out


# --------------------------------------------------------------------------- shuffles

def pixel_shuffle(input, upscale_factor):
    """(*, C r^2, H, W) -> (*, C, H r, W r).

    >>> pixel_shuffle(tensorlib.arange(4.0).reshape(1, 4, 1, 1), 2).reshape(-1).tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    r = int(upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    C, H, W = input.shape[-3:]
    if C % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={C} "
                           f"is not divisible by {r * r}")
    lead = tuple(input.shape[:-3])
    k = len(lead)
    x = input.reshape(lead + (C // (r * r), r, r, H, W))
    perm = tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2)
    return x.permute(perm).reshape(lead + (C // (r * r), H * r, W * r))


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H r, W r) -> (*, C r^2, H, W), the inverse of pixel_shuffle.

    >>> pixel_unshuffle(tensorlib.arange(4.0).reshape(1, 1, 2, 2), 2).reshape(-1).tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    r = int(downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    C, H, W = input.shape[-3:]
    if H % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by "
                           f"downscale_factor, but input.size(-2)={H} is not divisible by {r}")
    if W % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by "
                           f"downscale_factor, but input.size(-1)={W} is not divisible by {r}")
    lead = tuple(input.shape[:-3])
    k = len(lead)
    x = input.reshape(lead + (C, H // r, r, W // r, r))
    perm = tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3)
    return x.permute(perm).reshape(lead + (C * r * r, H // r, W // r))


def channel_shuffle(input, groups):
    """Interleave the channels (dim 1) of ``groups`` groups.

    >>> channel_shuffle(tensorlib.arange(4.0).reshape(1, 4, 1), 2).reshape(-1).tolist()
    [0.0, 2.0, 1.0, 3.0]
    """
    if input.dim() < 3:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    C = input.shape[1]
    if C % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {C} channels "
                           f"and {groups} groups.")
    N = input.shape[0]
    rest = tuple(input.shape[2:])
    x = input.reshape((N, groups, C // groups) + rest).transpose(1, 2)
    return x.reshape(input.shape)


native_channel_shuffle = channel_shuffle


# --------------------------------------------------------------------------- interpolate

def _aa_matrix(n_in, n_out, kind, align_corners, scale, np_dtype):
    """(n_out, n_in) antialiased weights (PIL's separable filters, as PyTorch's
    antialias=True): the filter is stretched by in/out when downsampling, and each row is
    normalised to sum to one."""
    import numpy as np
    if align_corners:
        ratio = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale is not None and scale > 0 else n_in / n_out
    interp = {"linear": 2, "cubic": 4, "lanczos": 6}[kind]
    support = interp * 0.5 * ratio if ratio >= 1.0 else interp * 0.5
    invscale = 1.0 / ratio if ratio >= 1.0 else 1.0

    def sinc(x):
        return 1.0 if x == 0 else _math.sin(_math.pi * x) / (_math.pi * x)

    def filt(x):
        x = abs(x)
        if kind == "linear":
            return max(0.0, 1.0 - x)
        if kind == "lanczos":
            return sinc(x) * sinc(x / 3.0) if x < 3.0 else 0.0
        a = -0.5
        if x < 1.0:
            return ((a + 2) * x - (a + 3)) * x * x + 1
        if x < 2.0:
            return (((x - 5) * x + 8) * x - 4) * a
        return 0.0
    W = np.zeros((n_out, n_in), dtype=np.float64)
    for i in range(n_out):
        center = ratio * (i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), n_in)
        ws = [filt((j + lo - center + 0.5) * invscale) for j in range(hi - lo)]
        total = sum(ws)
        for j, w in enumerate(ws):
            W[i, lo + j] = w / total if total != 0 else 0.0
    return W.astype(np_dtype)


def _interp_matrix(n_in, n_out, mode, align_corners, scale, np_dtype):
    """(n_out, n_in) weights of one spatial dim (linear, cubic or area), computed in the
    input's precision as PyTorch's kernels do."""
    import numpy as np
    f = np_dtype.type
    W = np.zeros((n_out, n_in), dtype=np_dtype)
    if mode == "area":
        for j in range(n_out):
            lo = (j * n_in) // n_out
            hi = -((-(j + 1) * n_in) // n_out)
            W[j, lo:hi] = f(1.0) / f(hi - lo)
        return W
    if align_corners:
        ratio = f((n_in - 1) / (n_out - 1)) if n_out > 1 else f(0.0)
    else:
        ratio = f(1.0 / scale) if scale is not None and scale > 0 else f(n_in / n_out)
    for j in range(n_out):
        if align_corners:
            src = ratio * f(j)
        else:
            src = ratio * (f(j) + f(0.5)) - f(0.5)
            if mode == "linear" and src < 0:
                src = f(0.0)
        if mode == "linear":
            i0 = int(src)
            i1 = i0 + (1 if i0 < n_in - 1 else 0)
            l1 = src - f(i0)
            W[j, i0] += f(1.0) - l1
            W[j, i1] += l1
        else:
            i = int(np.floor(src))
            t = src - f(i)
            A = f(-0.75)

            def near(x):
                return ((A + f(2)) * x - (A + f(3))) * x * x + f(1)

            def far(x):
                return ((A * x - f(5) * A) * x + f(8) * A) * x - f(4) * A
            coeffs = (far(t + f(1)), near(t), near(f(1) - t), far(f(2) - t))
            for k, c in enumerate(coeffs):
                W[j, min(max(i - 1 + k, 0), n_in - 1)] += c
    return W


def _nearest_index(n_in, n_out, scale, exact, device):
    import numpy as np
    s = np.float32(1.0 / scale) if scale is not None and scale > 0 else \
        np.float32(n_in) / np.float32(n_out)
    idx = []
    for j in range(n_out):
        if exact:
            v = int(np.floor((np.float32(j) + np.float32(0.5)) * s))
        elif n_out == n_in:
            v = j
        elif n_out == 2 * n_in:
            v = j >> 1
        else:
            v = int(np.floor(np.float32(j) * s))
        idx.append(min(v, n_in - 1))
    return _t.tensor(idx, dtype=_t.int64, device=device)


_INTERP_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3, "lanczos": 2}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims (all but the first two) of ``input``: modes nearest,
    nearest-exact, linear (3-D), bilinear / bicubic (4-D, ``antialias`` too), lanczos (4-D,
    antialias), trilinear (5-D) and area, with PyTorch's source-index rules for
    ``align_corners``, ``scale_factor`` and ``recompute_scale_factor``. composite: one
    index_select (nearest) or one small matrix product (the others) per spatial dim.

    >>> interpolate(tensorlib.tensor([[[1.0, 3.0]]]), scale_factor=2, mode="linear").tolist()
    [[[1.0, 1.5, 2.5, 3.0]]]
    """
    import numpy as np
    spatial = input.dim() - 2
    if spatial < 1:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {input.dim()}D) for the modes: nearest | linear | "
                                  f"bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    modes = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area",
             "lanczos")
    if mode not in modes:
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {input.dim()}D) for the modes: nearest | linear | "
                                  f"bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if mode in _INTERP_DIMS and _INTERP_DIMS[mode] != spatial:
        need = _INTERP_DIMS[mode] + 2
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {need}D "
                                  f"input")
    in_sizes = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != spatial:
                raise ValueError(f"Input and output must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{in_sizes} and output size of {list(size)}. Please provide "
                                 f"input tensor in (N, C, d1, d2, ...,dK) format and output "
                                 f"size in (o1, o2, ...,oK) format.")
            out_sizes = [int(v) for v in size]
        else:
            out_sizes = [int(size)] * spatial
        scales = [None] * spatial
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != spatial:
                raise ValueError(f"Input and scale_factor must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{in_sizes} and scale_factor of shape {list(scale_factor)}. "
                                 f"Please provide input tensor in (N, C, d1, d2, ...,dK) "
                                 f"format and scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(v) for v in scale_factor]
        else:
            scales = [float(scale_factor)] * spatial
        out_sizes = [int(_math.floor(n * s)) for n, s in zip(in_sizes, scales)]
        if recompute_scale_factor:
            scales = [None] * spatial
    else:
        raise ValueError("either size or scale_factor should be defined")
    if mode == "area":
        scales = [None] * spatial
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    np_dtype = np.dtype("float64" if input.dtype == _t.float64 else "float32")
    out = input
    for k in range(spatial):
        d = 2 + k
        n_in, n_out = in_sizes[k], out_sizes[k]
        if n_out <= 0:
            raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                               f"({', '.join(map(str, in_sizes))}) and output "
                               f"({', '.join(map(str, out_sizes))})")
        if mode in ("nearest", "nearest-exact"):
            if n_in != n_out or mode == "nearest-exact" or scales[k] is not None:
                out = out.index_select(d, _nearest_index(n_in, n_out, scales[k],
                                                         mode == "nearest-exact", input.device))
            continue
        kind = {"area": "area", "bicubic": "cubic", "lanczos": "lanczos"}.get(mode, "linear")
        if antialias:
            W = _aa_matrix(n_in, n_out, kind, align_corners, scales[k], np_dtype)
        else:
            W = _interp_matrix(n_in, n_out, kind, align_corners, scales[k], np_dtype)
        Wt = _t.tensor(W, dtype=input.dtype, device=input.device)
        moved = out.movedim(d, -1)
        lead = tuple(moved.shape[:-1])
        out = _t.mm(moved.reshape(-1, n_in), Wt.t()).reshape(lead + (n_out,)).movedim(-1, d)
    return out


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """interpolate under its old name (PyTorch warns it is deprecated).

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     upsample(tensorlib.ones(1, 1, 1), scale_factor=2).tolist()
    [[[1.0, 1.0]]]
    """
    _warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate "
                   "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """interpolate(mode='nearest') under its old name (deprecated in PyTorch, warns).

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     upsample_nearest(tensorlib.ones(1, 1, 1), scale_factor=2).tolist()
    [[[1.0, 1.0]]]
    """
    _warnings.warn("nn.functional.upsample_nearest is deprecated. Use "
                   "nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """interpolate(mode='bilinear', align_corners=True) under its old name (warns).

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     upsample_bilinear(tensorlib.ones(1, 1, 1, 1), scale_factor=2).shape
    tensorlib.Size([1, 1, 2, 2])
    """
    _warnings.warn("nn.functional.upsample_bilinear is deprecated. Use "
                   "nn.functional.interpolate instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# --------------------------------------------------------------------------- sampling grids

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                  "old behavior is desired. See the documentation of grid_sample for details.")


def _base_coords(n, align_corners, dtype, device):
    if n <= 1:
        return _t.zeros(max(n, 0), dtype=dtype, device=device)
    c = _t.linspace(-1.0, 1.0, n, dtype=dtype, device=device)
    return c if align_corners else c * ((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    """Sampling grid (N, H, W, 2) (or (N, D, H, W, 3)) of the affine maps ``theta``
    (N, 2, 3) (or (N, 3, 4)) in normalised [-1, 1] coordinates, for ``grid_sample``.

    >>> g = affine_grid(tensorlib.tensor([[[1.0, 0, 0], [0, 1.0, 0]]]), (1, 1, 1, 2),
    ...                 align_corners=False)
    >>> g.tolist()
    [[[[-0.5, 0.0], [0.5, 0.0]]]]
    """
    if align_corners is None:
        _warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = [int(v) for v in size]
    tshape = _torch_size(theta.shape)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{_torch_size(size)}. Got {tshape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{_torch_size(size)}. Got {tshape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size "
                                  f"{_torch_size(size)}.")
    if align_corners and min(spatial) == 1:
        _warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                       "grids when align_corners=True. This is not an intended use case of "
                       "affine_grid. See the documentation of affine_grid for details.",
                       stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    N = size[0]
    k = len(spatial)
    # base[..., :] = (x, y[, z], 1) with x along the last spatial dim
    # (D,) H, W
    axes = [_base_coords(n, align_corners, theta.dtype, theta.device) for n in spatial]
    parts = []
    for a in range(k):
        sd = k - 1 - a                         # spatial dim holding coordinate a
        shape = [1] * k
        shape[sd] = spatial[sd]
        parts.append(axes[sd].reshape(shape).expand(*spatial))
    parts.append(_t.ones(spatial, dtype=theta.dtype, device=theta.device))
    base = _t.stack(parts, -1).reshape(1, -1, k + 1)                      # (1, P, k+1)
    grid = _t.matmul(base, theta.transpose(1, 2))                          # (N, P, k)
    return grid.reshape([N] + spatial + [k])


def _unnormalize(c, n, align_corners):
    if align_corners:
        return (c + 1) * ((n - 1) / 2)
    return ((c + 1) * n - 1) / 2


def _reflect(c, lo2, hi2):
    """Reflect coordinates into [lo2 / 2, hi2 / 2] (differentiable, gradient +-1)."""
    if lo2 == hi2:
        return c * 0
    lo = lo2 / 2
    span = (hi2 - lo2) / 2
    c = (c - lo).abs()
    extra = _t.fmod(c, span)
    flips = _t.floor(c / span).detach()
    even = _t.fmod(flips, 2) == 0
    return _t.where(even, extra + lo, span - extra + lo)


def _pad_coord(c, n, padding_mode, align_corners):
    if padding_mode == "border":
        return c.clamp(0, n - 1)
    if padding_mode == "reflection":
        c = _reflect(c, 0, 2 * (n - 1)) if align_corners else _reflect(c, -1, 2 * n - 1)
        return c.clamp(0, n - 1)
    return c


def _cubic_coeffs(t):
    A = -0.75

    def near(x):
        return ((A + 2) * x - (A + 3)) * x * x + 1

    def far(x):
        return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` (N, C, H, W) / (N, C, D, H, W) at the normalised locations of
    ``grid`` (N, Ho, Wo, 2) / (N, Do, Ho, Wo, 3): bilinear, nearest or (4-D) bicubic,
    with zeros, border or reflection padding; differentiable in input and grid.
    composite: one gather per tap (4, 8 or 16 taps).

    >>> x = tensorlib.tensor([[[[1.0, 3.0]]]])
    >>> grid_sample(x, tensorlib.tensor([[[[0.0, 0.0]]]]), align_corners=True).item()
    2.0
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        _warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if input.dim() not in (4, 5) or grid.dim() != input.dim():
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number "
                           f"of dimensions, but got input with sizes {_list(input.shape)} and "
                           f"grid with sizes {_list(grid.shape)}")
    k = input.dim() - 2
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {_list(input.shape)} and grid with sizes "
                           f"{_list(grid.shape)}")
    if grid.shape[-1] != k:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {k} in last dimension, "
                           f"but got grid with sizes {_list(grid.shape)}")
    if mode == "bicubic" and k != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    N, C = input.shape[0], input.shape[1]
    sizes = list(input.shape[2:])                 # (D,) H, W
    out_sp = list(grid.shape[1:-1])
    P = 1
    for v in out_sp:
        P *= v
    flat_in = input.reshape(N, C, -1)
    g = grid.reshape(N, P, k)
    # per coordinate a (x: last spatial dim), its size and its stride in the flat input
    dims = []
    stride = 1
    for a in range(k):
        n = sizes[k - 1 - a]
        dims.append((g[:, :, a], n, stride))
        stride *= n

    def tap(indices, weight):
        """weight * input at integer positions ``indices`` (one per coordinate), 0 where
        any position falls outside."""
        valid = None
        flat = None
        for (c, n, st), i in zip(dims, indices):
            ok = (i >= 0) & (i <= n - 1)
            valid = ok if valid is None else valid & ok
            term = i.clamp(0, n - 1).long() * st
            flat = term if flat is None else flat + term
        vals = flat_in.gather(2, flat.unsqueeze(1).expand(N, C, P))
        return vals * (weight * valid).unsqueeze(1)

    out = None
    if mode == "bicubic":
        (cx, nx, _), (cy, ny, _) = dims
        ix = _unnormalize(cx, nx, align_corners)
        iy = _unnormalize(cy, ny, align_corners)
        x0, y0 = _t.floor(ix).detach(), _t.floor(iy).detach()
        wx, wy = _cubic_coeffs(ix - x0), _cubic_coeffs(iy - y0)
        for j in range(4):
            for i in range(4):
                px = _pad_coord(x0 - 1 + i, nx, padding_mode, align_corners)
                py = _pad_coord(y0 - 1 + j, ny, padding_mode, align_corners)
                # PyTorch reads a padded tap at its truncated coordinate
                t = tap([px.trunc().detach(), py.trunc().detach()], wx[i] * wy[j])
                out = t if out is None else out + t
    else:
        coords = [_pad_coord(_unnormalize(c, n, align_corners), n, padding_mode, align_corners)
                  for c, n, _ in dims]
        if mode == "nearest":
            # weight 1 that stays connected to grid, so grid.grad is zeros as in PyTorch
            out = tap([c.round().detach() for c in coords], coords[0] * 0 + 1)
        else:
            lows = [_t.floor(c).detach() for c in coords]
            fr = [c - lo for c, lo in zip(coords, lows)]
            for corner in range(1 << k):
                idx, w = [], None
                for a in range(k):
                    hi = (corner >> a) & 1
                    idx.append(lows[a] + hi)
                    wa = fr[a] if hi else 1 - fr[a]
                    w = wa if w is None else w * wa
                t = tap(idx, w)
                out = t if out is None else out + t
    return out.reshape([N, C] + out_sp)


# --------------------------------------------------------------------------- CTC

def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist temporal classification loss: -log of the total probability of every
    alignment of each target (blanks and repeats allowed) under ``log_probs`` (T, N, C)
    (or (T, C) unbatched), by the forward algorithm in log space. ``'mean'`` divides each
    sample's loss by its target length, then averages. The gradient is PyTorch's
    (exp(log_probs) - posteriors, see below). composite: a Python loop over time steps
    (a fused kernel with the beta recursion would be much faster).

    >>> lp = tensorlib.log_softmax(tensorlib.zeros(2, 1, 2), 2)
    >>> round(ctc_loss(lp, tensorlib.tensor([[1]]), [2], [1]).item(), 4)
    0.2877
    """
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        if targets.dim() == 1:
            targets = targets.unsqueeze(0)
    T, N, C = log_probs.shape
    as_list = lambda v: [int(a) for a in (v.reshape(-1).tolist() if isinstance(v, _t.Tensor)
                                          else (v if isinstance(v, (list, tuple)) else [v]))]
    in_len = as_list(input_lengths)
    tg_len = as_list(target_lengths)
    if len(in_len) != N:
        raise RuntimeError(f"input_lengths must be of size batch_size")
    if len(tg_len) != N:
        raise RuntimeError(f"target_lengths must be of size batch_size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    # the targets of each sample, from a padded (N, S) or a concatenated 1-D tensor
    tg = targets.long()
    if tg.dim() == 2:
        seqs = [tg[n, :tg_len[n]] for n in range(N)]
    else:
        seqs, at = [], 0
        for n in range(N):
            seqs.append(tg[at:at + tg_len[n]])
            at += tg_len[n]
    for n in range(N):
        if in_len[n] > T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got "
                               f"value {in_len[n]} (while checking arguments for ctc_loss_cpu)")
        if tg.dim() == 2 and tg_len[n] > tg.shape[1]:
            raise RuntimeError(f"Expected tensor to have size at least {tg_len[n]} at dimension "
                               f"1, but got size {tg.shape[1]} for argument #2 'targets' (while "
                               f"checking arguments for ctc_loss_cpu)")
    Smax = max(tg_len) if tg_len else 0
    S = 2 * Smax + 1
    # extended labels: blank, l1, blank, l2, ..., blank (padded with blanks)
    ext = _t.full((N, S), blank, dtype=_t.int64)
    allow_skip = _t.zeros((N, S), dtype=_t.bool)
    valid = _t.zeros((N, S), dtype=_t.bool)
    for n in range(N):
        L = tg_len[n]
        if L:
            labels = seqs[n]
            if bool(((labels < 0) | (labels >= C)).any()):
                raise RuntimeError("ctc_loss: target index out of range")
            ext[n, 1:2 * L:2] = labels
            if L > 1:
                # a label may be reached from two steps back unless it repeats that label
                allow_skip[n, 3:2 * L:2] = labels[1:] != labels[:-1]
        valid[n, :2 * L + 1] = True
    neg_inf = float("-inf")
    lp = log_probs.transpose(0, 1)                                   # (N, T, C)
    emit = lp.gather(2, ext.unsqueeze(1).expand(N, T, S))            # (N, T, S)
    alpha = _t.full((N, S), neg_inf, dtype=log_probs.dtype)
    init = _t.zeros((N, S), dtype=_t.bool)
    init[:, 0] = True
    if S > 1:
        init[:, 1] = _t.tensor([L > 0 for L in tg_len], dtype=_t.bool)
    alpha = _t.where(init & valid, emit[:, 0], alpha)
    pad_col = _t.full((N, 1), neg_inf, dtype=log_probs.dtype)
    pad_two = _t.full((N, 2), neg_inf, dtype=log_probs.dtype)
    finals = [None] * N
    for n in range(N):
        if in_len[n] == 1:
            finals[n] = alpha[n]
    for t in range(1, T):
        prev1 = _t.cat([pad_col, alpha[:, :-1]], 1)
        prev2 = _t.cat([pad_two, alpha[:, :-2]], 1) if S > 2 else _t.full_like(alpha, neg_inf)
        prev2 = _t.where(allow_skip, prev2, neg_inf)
        stacked = _t.stack([alpha, prev1, prev2], 0)
        top = stacked.amax(0).detach()
        # logsumexp with a finite shift, so an all -inf triple gives -inf and no NaN grads
        shift = _t.where(_t.isfinite(top), top, 0.0)
        summed = _t.exp(stacked - shift).sum(0)
        reach = summed > 0
        lse = _t.where(reach, _t.log(_t.where(reach, summed, 1.0)) + shift, neg_inf)
        alpha = _t.where(valid, lse + emit[:, t], neg_inf)
        for n in range(N):
            if in_len[n] == t + 1:
                finals[n] = alpha[n]
    losses = []
    for n in range(N):
        L = tg_len[n]
        a = finals[n]
        if a is None:                       # input length 0
            losses.append(_t.tensor(0.0 if L == 0 else float("inf"), dtype=log_probs.dtype)
                          + log_probs.sum() * 0)
            continue
        if L == 0:
            ends = a[0:1]
        else:
            ends = a[2 * L - 1:2 * L + 1]
        m = ends.max().detach()
        if not bool(_t.isfinite(m)):
            losses.append(-ends.max())          # +inf: no alignment fits
            continue
        losses.append(-(_t.log(_t.exp(ends - m).sum()) + m))
    loss = _t.stack(losses)
    if _needs_grad(log_probs):
        # PyTorch's CTC backward returns exp(log_probs) - posteriors: the gradient with
        # respect to the logits of a log_softmax that produced log_probs (identical after
        # log_softmax's backward, as each frame's posteriors sum to one). Adding
        # sum(exp(lp)) - its detached value (0) to each sample's loss gives that same
        # gradient for log_probs fed in directly.
        frame = _t.arange(T, dtype=_t.int64).unsqueeze(1) < _t.tensor(in_len, dtype=_t.int64)
        mass = (_t.exp(log_probs).sum(2) * frame).sum(0)            # (N,)
        loss = loss + (mass - mass.detach())
    if zero_infinity:
        loss = _t.where(_t.isinf(loss), 0.0, loss)
    if reduction == "none":
        return loss.reshape(()) if unbatched else loss
    if reduction == "sum":
        return loss.sum()
    lengths = _t.tensor(tg_len, dtype=loss.dtype).clamp_min(1)
    return (loss / lengths).mean()


# Convolution and pooling are declared ops with fused kernels (tensorlib/ops/decl/nn.py);
# their functional forms live in _functional_kernels, attention's in _attention (which imports
# this module, hence at the end).
from tensorlib.nn._functional_kernels import *  # noqa: E402,F401,F403
from tensorlib.nn import _functional_kernels  # noqa: E402
from tensorlib.nn._attention import (  # noqa: E402,F401
    multi_head_attention_forward, _canonical_mask, _none_or_dtype)

__all__ += _functional_kernels.__all__ + ["multi_head_attention_forward"]
