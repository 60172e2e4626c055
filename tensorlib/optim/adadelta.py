"""Adadelta, PyTorch's ``torch.optim.Adadelta``.

>>> w = tensorlib.nn.Parameter(tensorlib.tensor([1.0, -2.0]))
>>> opt = Adadelta([w], lr=1.0)
>>> (w * w).sum().backward(); opt.step(); [round(x, 4) for x in w.tolist()]
[0.9968, -1.9968]
"""
from tensorlib.optim import _fused
from tensorlib.optim.optimizer import Optimizer, _group_defaults

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Adadelta (Zeiler) with PyTorch's update rule and state (``step``, ``square_avg``,
    ``acc_delta``): ``v = rho * v + (1 - rho) * g * g``,
    ``delta = sqrt(u + eps) / sqrt(v + eps) * g``, ``u = rho * u + (1 - rho) * delta^2``,
    ``p -= lr * delta``. One fused pass per group.

    >>> w = tensorlib.zeros(2, requires_grad=True)
    >>> opt = Adadelta([w]); w.sum().backward(); opt.step(); sorted(opt.state[w])
    ['acc_delta', 'square_avg', 'step']
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _fused._check_lr(lr)
        _fused._check(0.0 <= rho <= 1.0, f"Invalid rho value: {rho}")
        _fused._check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _fused._check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _group_defaults(self, foreach=None, maximize=False, differentiable=False, capturable=False)
        _fused._fix_scalar_states(self, ("step",))

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss
        when a closure is given."""
        loss = _fused._run_closure(closure)
        for group in self.param_groups:
            params, grads, states = _fused._gather(self, group, lambda p: dict(
                step=_fused._scalar(0.0), square_avg=_fused._zeros(p),
                acc_delta=_fused._zeros(p)))
            hp = (_fused._value(group["lr"]), group["weight_decay"], group["rho"], group["eps"])
            _fused._launch(_fused.ADADELTA, params, grads,
                           [[s["square_avg"] for s in states], [s["acc_delta"] for s in states]],
                           [[s["step"] for s in states]], hp,
                           _fused.MAXIMIZE if group["maximize"] else 0)
        return loss
