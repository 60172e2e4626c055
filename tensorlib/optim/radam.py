"""RAdam, PyTorch's ``torch.optim.RAdam``: Adam with a rectified adaptive learning rate.

>>> w = tensorlib.nn.Parameter(tensorlib.tensor([1.0, -2.0]))
>>> opt = RAdam([w], lr=0.1)
>>> (w * w).sum().backward(); opt.step(); [round(x, 4) for x in w.tolist()]
[0.8, -1.6]
"""
from tensorlib.optim import _fused
from tensorlib.optim.optimizer import Optimizer, _group_defaults

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """RAdam (Liu et al.) with PyTorch's update rule and state (``step``, ``exp_avg``,
    ``exp_avg_sq``): while the variance rectification term ``rho_t`` is at most 5 the step
    is plain momentum SGD, then Adam's step times the rectification; weight decay as L2 or,
    with ``decoupled_weight_decay``, on the parameter (RAdamW). One fused pass per group.

    >>> w = tensorlib.zeros(2, requires_grad=True)
    >>> opt = RAdam([w], lr=0.5); w.sum().backward(); opt.step(); w.tolist()
    [-0.5, -0.5]
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _fused._check_lr(lr)
        _fused._check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _fused._check_betas(betas)
        _fused._check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _group_defaults(self, foreach=None, maximize=False, differentiable=False,
                        decoupled_weight_decay=False, capturable=False)
        _fused._fix_scalar_states(self, ("step",))

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss
        when a closure is given."""
        loss = _fused._run_closure(closure)
        for group in self.param_groups:
            params, grads, states = _fused._gather(self, group, lambda p: dict(
                step=_fused._scalar(0.0), exp_avg=_fused._zeros(p),
                exp_avg_sq=_fused._zeros(p)))
            beta1, beta2 = group["betas"]
            flags = ((_fused.MAXIMIZE if group["maximize"] else 0)
                     | (_fused.DECOUPLED if group["decoupled_weight_decay"] else 0))
            hp = (_fused._value(group["lr"]), group["weight_decay"], beta1, beta2, group["eps"])
            _fused._launch(_fused.RADAM, params, grads,
                           [[s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states]],
                           [[s["step"] for s in states]], hp, flags)
        return loss
