"""Adagrad, PyTorch's ``torch.optim.Adagrad``.

>>> w = tensorlib.nn.Parameter(tensorlib.tensor([1.0, -2.0]))
>>> opt = Adagrad([w], lr=0.1)
>>> (w * w).sum().backward(); opt.step(); [round(x, 4) for x in w.tolist()]
[0.9, -1.9]
"""
import tensorlib
from tensorlib.optim import _fused
from tensorlib.optim.optimizer import Optimizer, _group_defaults

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad (Duchi et al.) with PyTorch's update rule and state (``step``, ``sum``, made
    for every parameter when the optimizer is built, ``sum`` filled with
    ``initial_accumulator_value``): ``g = grad (+ weight_decay * p)``, ``sum += g * g``,
    ``p -= lr / (1 + (t - 1) * lr_decay) * g / (sqrt(sum) + eps)``. One fused pass per
    group.

    >>> w = tensorlib.zeros(2, requires_grad=True)
    >>> opt = Adagrad([w], lr=0.5, initial_accumulator_value=3.0)
    >>> w.sum().backward(); opt.step(); w.tolist()
    [-0.25, -0.25]
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        _fused._check_lr(lr)
        _fused._check(0.0 <= lr_decay, f"Invalid lr_decay value: {lr_decay}")
        _fused._check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _fused._check(0.0 <= initial_accumulator_value,
                      f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        _fused._check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        _fused._check_fused(fused, foreach, differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, **self._first_state(p, group))

    @staticmethod
    def _first_state(p, group):
        return dict(step=_fused._scalar(0.0), sum=tensorlib.full_like(
            p, group["initial_accumulator_value"], memory_format=tensorlib.preserve_format))

    def __setstate__(self, state):
        super().__setstate__(state)
        _group_defaults(self, foreach=None, maximize=False, differentiable=False, fused=None)
        _fused._fix_scalar_states(self, ("step",))

    def share_memory(self):
        """Move every ``sum`` to shared memory (for Hogwild-style training)."""
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss
        when a closure is given."""
        loss = _fused._run_closure(closure)
        for group in self.param_groups:
            params, grads, states = _fused._gather(
                self, group, lambda p: self._first_state(p, group))
            hp = (_fused._value(group["lr"]), group["weight_decay"], group["lr_decay"],
                  group["eps"])
            _fused._launch(_fused.ADAGRAD, params, grads, [[s["sum"] for s in states]],
                           [[s["step"] for s in states]], hp,
                           _fused.MAXIMIZE if group["maximize"] else 0)
        return loss
