"""NAdam, PyTorch's ``torch.optim.NAdam``: Adam with Nesterov momentum.

>>> w = tensorlib.nn.Parameter(tensorlib.tensor([1.0, -2.0]))
>>> opt = NAdam([w], lr=0.1)
>>> (w * w).sum().backward(); opt.step(); [round(x, 3) for x in w.tolist()]
[0.894, -1.894]
"""
from tensorlib.optim import _fused
from tensorlib.optim.optimizer import Optimizer, _group_defaults

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """NAdam (Dozat) with PyTorch's momentum schedule ``mu_t = beta1 * (1 - 0.5 *
    0.96^(t * momentum_decay))`` and state (``step``, ``mu_product``, ``exp_avg``,
    ``exp_avg_sq``); weight decay as L2 or, with ``decoupled_weight_decay``, on the
    parameter (NAdamW). One fused pass per group.

    >>> w = tensorlib.zeros(2, requires_grad=True)
    >>> opt = NAdam([w], lr=0.5); w.sum().backward(); opt.step()
    >>> sorted(opt.state[w])
    ['exp_avg', 'exp_avg_sq', 'mu_product', 'step']
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _fused._check_lr(lr)
        _fused._check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _fused._check_betas(betas)
        _fused._check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _fused._check(0.0 <= momentum_decay, f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _group_defaults(self, maximize=False, foreach=None, capturable=False, differentiable=False,
                        decoupled_weight_decay=False)
        _fused._fix_scalar_states(self, ("step", "mu_product"))

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss
        when a closure is given."""
        loss = _fused._run_closure(closure)
        for group in self.param_groups:
            params, grads, states = _fused._gather(self, group, lambda p: dict(
                step=_fused._scalar(0.0), mu_product=_fused._scalar(1.0),
                exp_avg=_fused._zeros(p), exp_avg_sq=_fused._zeros(p)))
            beta1, beta2 = group["betas"]
            flags = ((_fused.MAXIMIZE if group["maximize"] else 0)
                     | (_fused.DECOUPLED if group["decoupled_weight_decay"] else 0))
            hp = (_fused._value(group["lr"]), group["weight_decay"], beta1, beta2, group["eps"],
                  group["momentum_decay"])
            _fused._launch(_fused.NADAM, params, grads,
                           [[s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states]],
                           [[s["step"] for s in states], [s["mu_product"] for s in states]],
                           hp, flags)
        return loss
