"""Gradient clipping, PyTorch's ``torch.nn.utils.clip_grad``.

>>> import tensorlib
>>> w = tensorlib.zeros(2, requires_grad=True)
>>> w.grad = tensorlib.tensor([3.0, 4.0])
>>> clip_grad_norm_([w], max_norm=1.0).item()
5.0
>>> [round(v, 4) for v in w.grad.tolist()]
[0.6, 0.8]
"""
import types
import warnings

import tensorlib as _t
from tensorlib.autograd.engine import _mark_gradient

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _as_list(tensors):
    return [tensors] if isinstance(tensors, _t.Tensor) else list(tensors)


def _writable_grads(parameters):
    """The parameters' gradients, each safe to scale in place. The autograd engine may hand
    one gradient tensor (or views of one buffer) to several leaves, or store a broadcast
    (stride-0) gradient; scaling those in place would scale a shared buffer twice or fail.
    Such a gradient is replaced by a dense copy of itself first (PyTorch's leaves never
    share gradient memory)."""
    grads, seen = [], set()
    for p in parameters:
        g = p.grad
        if g is None:
            continue
        ptr = g.untyped_storage().data_ptr()
        expanded = any(st == 0 and n > 1 for st, n in zip(g.stride(), g.shape))
        if ptr in seen or expanded:
            with _t.no_grad():
                g = g.clone()
            _mark_gradient(g)
            p.grad = g
            ptr = g.untyped_storage().data_ptr()
        seen.add(ptr)
        grads.append(g)
    return grads


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type`` norm of the norms of ``tensors`` (as if concatenated into one
    vector), a 0-d tensor; ``inf`` is the largest absolute value. ``foreach`` is accepted and
    ignored (there is one implementation).

    >>> get_total_norm([tensorlib.tensor([3.0]), tensorlib.tensor([4.0])]).item()
    5.0
    >>> get_total_norm([tensorlib.tensor([3.0, -7.0])], float("inf")).item()
    7.0
    """
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _t.tensor(0.0)
    first_device = tensors[0].device
    norms = [g.detach().norm(norm_type) for g in tensors]
    total = _t.stack([n.to(first_device) for n in norms]).norm(norm_type)
    if error_if_nonfinite and bool(total.isnan() | total.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients of ``parameters`` in place by ``min(1, max_norm / (total_norm +
    1e-6))``, given their precomputed ``total_norm``.

    >>> w = tensorlib.zeros(2, requires_grad=True)
    >>> w.grad = tensorlib.tensor([6.0, 8.0])
    >>> clip_grads_with_norm_([w], 5.0, tensorlib.tensor(10.0))
    >>> [round(v, 4) for v in w.grad.tolist()]
    [3.0, 4.0]
    """
    grads = _writable_grads(_as_list(parameters))
    max_norm = float(max_norm)
    if not grads:
        return
    with _t.no_grad():
        # multiplying by a coefficient clamped to 1 (rather than testing it) keeps the
        # result a tensor computation with no host round trip on an accelerator
        coef = _t.clamp(max_norm / (total_norm + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Clip the gradients of ``parameters`` (a tensor or an iterable of them) so that their
    total ``norm_type`` norm is at most ``max_norm``; returns the total norm before clipping.
    ``error_if_nonfinite=True`` raises when that norm is nan or inf.

    >>> w = tensorlib.zeros(3, requires_grad=True)
    >>> w.grad = tensorlib.tensor([1.0, -2.0, 0.5])
    >>> clip_grad_norm_(w, 1.0, norm_type="inf").item()
    2.0
    >>> [round(v, 4) for v in w.grad.tolist()]
    [0.5, -1.0, 0.25]
    """
    if isinstance(parameters, _t.Tensor):
        parameters = [parameters]
    else:
        was_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if was_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will "
                          "occur.", stacklevel=2)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    """Deprecated spelling of :func:`clip_grad_norm_` (warns).

    >>> callable(clip_grad_norm)
    True
    """
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient of ``parameters`` in place to [-clip_value, clip_value].

    >>> w = tensorlib.zeros(3, requires_grad=True)
    >>> w.grad = tensorlib.tensor([1.0, -2.0, 0.5])
    >>> clip_grad_value_(w, 0.75)
    >>> w.grad.tolist()
    [0.75, -0.75, 0.5]
    """
    clip_value = float(clip_value)
    with _t.no_grad():
        for g in _writable_grads(_as_list(parameters)):
            g.clamp_(min=-clip_value, max=clip_value)
