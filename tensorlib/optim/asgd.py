"""ASGD, PyTorch's ``torch.optim.ASGD``: averaged stochastic gradient descent.

>>> w = tensorlib.nn.Parameter(tensorlib.tensor([1.0, -2.0]))
>>> opt = ASGD([w], lr=0.1)
>>> (w * w).sum().backward(); opt.step(); [round(x, 4) for x in w.tolist()]
[0.8, -1.6]
"""
import tensorlib
from tensorlib.optim import _fused
from tensorlib.optim.optimizer import Optimizer, _group_defaults

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """ASGD (Polyak & Juditsky) with PyTorch's update rule and state (``step``, ``eta``,
    ``mu``, ``ax``): ``p = p * (1 - lambd * eta) - eta * g``; the average
    ``ax += (p - ax) * mu`` (a copy of ``p`` while ``mu`` is 1); then
    ``eta = lr / (1 + lambd * lr * t)^alpha`` and ``mu = 1 / max(1, t - t0)``. One fused
    pass per group.

    >>> w = tensorlib.zeros(2, requires_grad=True)
    >>> opt = ASGD([w], lr=0.5); w.sum().backward(); opt.step(); opt.state[w]["ax"].tolist()
    [-0.5, -0.5]
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _fused._check_lr(lr)
        _fused._check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _group_defaults(self, foreach=None, maximize=False, differentiable=False, capturable=False)
        _fused._fix_scalar_states(self, ("step", "eta", "mu"))

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss
        when a closure is given."""
        loss = _fused._run_closure(closure)
        for group in self.param_groups:
            lr = _fused._value(group["lr"])
            params, grads, states = _fused._gather(self, group, lambda p: dict(
                step=_fused._scalar(0.0), eta=_fused._scalar(lr), mu=_fused._scalar(1.0),
                ax=_fused._zeros(p)))
            hp = (lr, group["weight_decay"], group["lambd"], group["alpha"], group["t0"],
                  _fused._scalar_dtype() == tensorlib.float32)
            _fused._launch(_fused.ASGD, params, grads, [[s["ax"] for s in states]],
                           [[s[n] for s in states] for n in ("step", "eta", "mu")], hp,
                           _fused.MAXIMIZE if group["maximize"] else 0)
        return loss
