"""Stochastic gradient descent, PyTorch's ``torch.optim.SGD``.

>>> w = tensorlib.nn.Parameter(tensorlib.tensor([1.0, 2.0]))
>>> opt = SGD([w], lr=0.25, momentum=0.9)
>>> (w * w).sum().backward(); opt.step(); w.tolist()
[0.5, 1.0]
"""
import tensorlib
from tensorlib.optim import _fused
from tensorlib.optim.optimizer import Optimizer, _group_defaults

__all__ = ["SGD"]


class SGD(Optimizer):
    """SGD with optional momentum (``dampening``, ``nesterov``), L2 ``weight_decay`` and
    ``maximize``, PyTorch's update rule: ``g = grad + wd * p``; with momentum
    ``buf = momentum * buf + (1 - dampening) * g`` (the first step ``buf = g``) and
    ``g = buf`` (or ``g + momentum * buf`` for Nesterov); ``p -= lr * g``. ``foreach`` and
    ``fused`` are accepted for PyTorch's signature (every update here is one fused pass over
    the group's tensors).

    >>> w = tensorlib.zeros(3, requires_grad=True)
    >>> opt = SGD([w], lr=0.5); w.sum().backward(); opt.step(); w.tolist()
    [-0.5, -0.5, -0.5]
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        _fused._check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _fused._check_fused(fused, foreach, differentiable)

    def __setstate__(self, state):
        super().__setstate__(state)
        _group_defaults(self, nesterov=False, maximize=False, foreach=None, differentiable=False,
                        fused=False)

    def step(self, closure=None):
        """One update of every parameter that has a gradient (one fused pass per group);
        returns ``closure()``'s loss when a closure is given."""
        loss = _fused._run_closure(closure)
        for group in self.param_groups:
            params, grads, states = _fused._gather(self, group, _no_state)
            momentum = group["momentum"]
            flags = ((_fused.MAXIMIZE if group["maximize"] else 0)
                     | (_fused.NESTEROV if group["nesterov"] else 0))
            hp = (_fused._value(group["lr"]), group["weight_decay"], momentum,
                  group["dampening"])
            if momentum == 0:
                _fused._launch(_fused.SGD, params, grads, [], [], hp, flags)
                continue
            fresh = [s.get("momentum_buffer") is None for s in states]
            bufs = []
            for p, st, new in zip(params, states, fresh):
                if new:
                    # set from the gradient by the kernel, like PyTorch's clone of it
                    st = self._init_state(p, momentum_buffer=tensorlib.empty_like(
                        p, memory_format=tensorlib.preserve_format))
                bufs.append(st["momentum_buffer"])
            _fused._launch(_fused.SGD, params, grads, [bufs], [], hp, flags | _fused.MOMENTUM,
                           fresh)
        return loss


def _no_state(p):
    return {}
