"""Stochastic gradient descent, PyTorch's ``torch.optim.SGD``.

>>> w = tensorlib.nn.Parameter(tensorlib.tensor([1.0, 2.0]))
>>> opt = SGD([w], lr=0.25, momentum=0.9)
>>> (w * w).sum().backward(); opt.step(); w.tolist()
[0.5, 1.0]
"""
import tensorlib
from tensorlib.optim.optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    """SGD with optional momentum (``dampening``, ``nesterov``), L2 ``weight_decay`` and
    ``maximize``, PyTorch's update rule: ``g = grad + wd * p``; with momentum
    ``buf = momentum * buf + (1 - dampening) * g`` (the first step ``buf = g``) and
    ``g = buf`` (or ``g + momentum * buf`` for Nesterov); ``p -= lr * g``. ``foreach`` and
    ``fused`` are accepted for PyTorch's signature (every update here is one fused pass).

    >>> w = tensorlib.zeros(3, requires_grad=True)
    >>> opt = SGD([w], lr=0.5); w.sum().backward(); opt.step(); w.tolist()
    [-0.5, -0.5, -0.5]
    """

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
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

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss
        when a closure is given."""
        loss = None
        if closure is not None:
            with tensorlib.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
            weight_decay, nesterov = group["weight_decay"], group["nesterov"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = -p.grad if group["maximize"] else p.grad
                if weight_decay != 0:
                    g = g.add(p, alpha=weight_decay)
                if momentum != 0:
                    buf = self.state[p].get("momentum_buffer")
                    if buf is None:
                        buf = self._init_state(p, momentum_buffer=g.clone())["momentum_buffer"]
                    else:
                        buf.mul_(momentum).add_(g, alpha=1 - dampening)
                    g = g.add(buf, alpha=momentum) if nesterov else buf
                p.add_(g, alpha=-lr)
        return loss
