"""Automatic differentiation: define-by-run graphs walked backwards on demand.

>>> import tensorlib
>>> x = tensorlib.tensor([2.0], requires_grad=True)
>>> y = x * x + 3 * x
>>> y.backward(); x.grad.tolist()
[7.0]
"""
import warnings

from tensorlib._core import tensor as _C
from tensorlib._core.tensor import TensorBase
from tensorlib.autograd import graph
from tensorlib.autograd.engine import run_backward
from tensorlib.autograd.function import Function, FunctionCtx, once_differentiable
from tensorlib.autograd.grad_mode import (
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled)
from tensorlib.autograd.gradcheck import gradcheck, gradgradcheck

__all__ = ["backward", "grad", "Variable", "Function", "FunctionCtx", "once_differentiable",
           "gradcheck", "gradgradcheck", "no_grad", "enable_grad", "set_grad_enabled",
           "inference_mode", "is_grad_enabled", "is_inference_mode_enabled", "set_detect_anomaly",
           "detect_anomaly", "graph"]


def _tensor_list(x, what):
    if isinstance(x, TensorBase):
        return [x]
    if x is None:
        return []
    return list(x)


def _make_grads(outputs, grad_outputs):
    import tensorlib
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if out.requires_grad and out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = tensorlib.ones_like(out)
        elif not isinstance(g, TensorBase):
            g = tensorlib.tensor(g, dtype=out.dtype, device=out.device)
        elif g.shape != out.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                               f"output[{i}] has a shape of {out.shape}.")
        grads.append(g)
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the leaves.

    >>> x = tensorlib.ones(2, requires_grad=True)
    >>> tensorlib.autograd.backward([(x * 3).sum()]); x.grad.tolist()
    [3.0, 3.0]
    """
    outputs = _tensor_list(tensors, "tensors")
    grads = _tensor_list(grad_tensors, "grad_tensors") if grad_tensors is not None else [None] * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(grads)} tensors and {len(outputs)} gradients")
    if retain_graph is None:
        retain_graph = create_graph
    inputs = None if inputs is None else _tensor_list(inputs, "inputs")
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    for i, t in enumerate(outputs):
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
    run_backward(outputs, _make_grads(outputs, grads), retain_graph, create_graph, inputs,
                 accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs`` (nothing is accumulated).

    >>> x = tensorlib.tensor([3.0], requires_grad=True)
    >>> tensorlib.autograd.grad((x * x).sum(), x)[0].tolist()
    [6.0]
    """
    outs = _tensor_list(outputs, "outputs")
    ins = _tensor_list(inputs, "inputs")
    gouts = _tensor_list(grad_outputs, "grad_outputs") if grad_outputs is not None else [None] * len(outs)
    if retain_graph is None:
        retain_graph = create_graph
    if allow_unused is None:
        allow_unused = materialize_grads
    result = run_backward(outs, _make_grads(outs, gouts), retain_graph, create_graph, ins,
                          allow_unused=allow_unused, accumulate=False)
    if materialize_grads:
        import tensorlib
        result = tuple(tensorlib.zeros_like(i) if r is None else r for r, i in zip(result, ins))
    return result


def Variable(data, requires_grad=False, volatile=False):
    """The legacy wrapper: returns a Tensor (``Variable`` and ``Tensor`` merged long ago).

    >>> tensorlib.autograd.Variable(tensorlib.ones(1), requires_grad=True).requires_grad
    True
    """
    if not isinstance(data, TensorBase):
        raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
    t = _C._alias_of(data)
    if volatile:
        warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                      "instead.", UserWarning, stacklevel=2)
        return t
    if requires_grad:
        t.requires_grad_(True)
    return t


class set_detect_anomaly:
    """Anomaly mode: nodes remember the forward stack that created them, and an error in
    backward reports it; NaN gradients raise.

    >>> with tensorlib.autograd.set_detect_anomaly(True):
    ...     pass
    """

    def __init__(self, mode, check_nan=True):
        self._prev = _C._set_anomaly_enabled(bool(mode))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _C._set_anomaly_enabled(self._prev)


class detect_anomaly(set_detect_anomaly):
    """``with detect_anomaly():`` turns anomaly mode on for the block."""

    def __init__(self, check_nan=True):
        super().__init__(True, check_nan)
