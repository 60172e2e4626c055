"""RMSprop, PyTorch's ``torch.optim.RMSprop``.

>>> w = tensorlib.nn.Parameter(tensorlib.tensor([1.0, -2.0]))
>>> opt = RMSprop([w], lr=0.01)
>>> (w * w).sum().backward(); opt.step(); [round(x, 4) for x in w.tolist()]
[0.9, -1.9]
"""
from tensorlib.optim import _fused
from tensorlib.optim.optimizer import Optimizer, _group_defaults

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop (Hinton) with PyTorch's update rule and state (``step``, ``square_avg``, and
    ``momentum_buffer`` when ``momentum > 0``, ``grad_avg`` when ``centered``):
    ``v = alpha * v + (1 - alpha) * g * g``; centered: ``a = lerp(a, g, 1 - alpha)`` and
    the denominator is ``sqrt(v - a * a) + eps``, else ``sqrt(v) + eps``; with momentum
    ``buf = momentum * buf + g / denom`` and ``p -= lr * buf``, else
    ``p -= lr * g / denom``. One fused pass per group.

    >>> w = tensorlib.zeros(2, requires_grad=True)
    >>> opt = RMSprop([w], momentum=0.9, centered=True); w.sum().backward(); opt.step()
    >>> sorted(opt.state[w])
    ['grad_avg', 'momentum_buffer', 'square_avg', 'step']
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _fused._check_lr(lr)
        _fused._check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _fused._check(0.0 <= momentum, f"Invalid momentum value: {momentum}")
        _fused._check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _fused._check(0.0 <= alpha, f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        _group_defaults(self, momentum=0, centered=False, foreach=None, maximize=False,
                        differentiable=False, capturable=False)
        _fused._fix_scalar_states(self, ("step",))

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss
        when a closure is given."""
        loss = _fused._run_closure(closure)
        for group in self.param_groups:
            momentum, centered = group["momentum"], group["centered"]

            def init(p):
                st = dict(step=_fused._scalar(0.0), square_avg=_fused._zeros(p))
                if momentum > 0:
                    st["momentum_buffer"] = _fused._zeros(p)
                if centered:
                    st["grad_avg"] = _fused._zeros(p)
                return st

            params, grads, states = _fused._gather(self, group, init)
            names = ["square_avg"]
            flags = _fused.MAXIMIZE if group["maximize"] else 0
            if momentum > 0:
                names.append("momentum_buffer")
                flags |= _fused.MOMENTUM
            if centered:
                names.append("grad_avg")
                flags |= _fused.CENTERED
            hp = (_fused._value(group["lr"]), group["weight_decay"], group["alpha"],
                  group["eps"], momentum)
            _fused._launch(_fused.RMSPROP, params, grads,
                           [[s[n] for s in states] for n in names],
                           [[s["step"] for s in states]], hp, flags)
        return loss
