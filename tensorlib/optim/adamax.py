"""Adamax, PyTorch's ``torch.optim.Adamax``: Adam with the infinity norm.

>>> w = tensorlib.nn.Parameter(tensorlib.tensor([1.0, -2.0]))
>>> opt = Adamax([w], lr=0.1)
>>> (w * w).sum().backward(); opt.step(); [round(x, 4) for x in w.tolist()]
[0.9, -1.9]
"""
from tensorlib.optim import _fused
from tensorlib.optim.optimizer import Optimizer, _group_defaults

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Adamax (Kingma & Ba, section 7) with PyTorch's update rule and state (``step``,
    ``exp_avg``, ``exp_inf``): ``g = grad (+ weight_decay * p)``,
    ``m = lerp(m, g, 1 - beta1)``, ``u = max(beta2 * u, |g| + eps)``,
    ``p -= lr / (1 - beta1^t) * m / u``; one fused pass per group.

    >>> w = tensorlib.zeros(2, requires_grad=True)
    >>> opt = Adamax([w], lr=0.5); w.sum().backward(); opt.step(); w.tolist()
    [-0.5, -0.5]
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _fused._check_lr(lr)
        _fused._check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _fused._check_betas(betas)
        _fused._check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
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
                step=_fused._scalar(0.0), exp_avg=_fused._zeros(p), exp_inf=_fused._zeros(p)))
            beta1, beta2 = group["betas"]
            hp = (_fused._value(group["lr"]), group["weight_decay"], beta1, beta2, group["eps"])
            _fused._launch(_fused.ADAMAX, params, grads,
                           [[s["exp_avg"] for s in states], [s["exp_inf"] for s in states]],
                           [[s["step"] for s in states]], hp,
                           _fused.MAXIMIZE if group["maximize"] else 0)
        return loss
