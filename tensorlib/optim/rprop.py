"""Rprop, PyTorch's ``torch.optim.Rprop``: resilient backpropagation.

>>> w = tensorlib.nn.Parameter(tensorlib.tensor([1.0, -2.0]))
>>> opt = Rprop([w], lr=0.1)
>>> (w * w).sum().backward(); opt.step(); [round(x, 4) for x in w.tolist()]
[0.9, -1.9]
"""
import tensorlib
from tensorlib.optim import _fused
from tensorlib.optim.optimizer import Optimizer, _group_defaults

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Rprop (Riedmiller & Braun) with PyTorch's update rule and state (``step``, ``prev``,
    ``step_size``, the latter starting at ``lr``): where the gradient keeps its sign the
    element's step size grows by ``etas[1]``, where it flips it shrinks by ``etas[0]`` (and
    that element does not move this step), clamped to ``step_sizes``; then
    ``p -= sign(g) * step_size``. One fused pass per group.

    >>> w = tensorlib.zeros(2, requires_grad=True)
    >>> opt = Rprop([w], lr=0.5); w.sum().backward(); opt.step(); w.tolist()
    [-0.5, -0.5]
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _fused._check_lr(lr)
        _fused._check(0.0 < etas[0] < 1.0 < etas[1], f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
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
            lr = _fused._value(group["lr"])
            params, grads, states = _fused._gather(self, group, lambda p: dict(
                step=_fused._scalar(0.0), prev=_fused._zeros(p),
                step_size=tensorlib.full_like(p.grad, lr)))
            etaminus, etaplus = group["etas"]
            lo, hi = group["step_sizes"]
            hp = (lr, 0.0, etaminus, etaplus, lo, hi)
            _fused._launch(_fused.RPROP, params, grads,
                           [[s["prev"] for s in states], [s["step_size"] for s in states]],
                           [[s["step"] for s in states]], hp,
                           _fused.MAXIMIZE if group["maximize"] else 0)
        return loss
