"""AdamW, PyTorch's ``torch.optim.AdamW``: Adam with decoupled weight decay.

>>> w = tensorlib.nn.Parameter(tensorlib.ones(2))
>>> opt = AdamW([w], lr=0.1, weight_decay=0.5)
>>> w.sum().backward(); opt.step(); [round(x, 4) for x in w.tolist()]
[0.85, 0.85]
"""
from tensorlib.optim.adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): each step first shrinks the
    parameter, ``p *= 1 - lr * weight_decay`` (default ``weight_decay=1e-2``), then applies
    Adam's update; same state and options as :class:`Adam`.

    >>> w = tensorlib.zeros(3, requires_grad=True)
    >>> opt = AdamW([w], lr=0.1); w.sum().backward(); opt.step()
    >>> [round(x, 4) for x in w.tolist()]
    [-0.1, -0.1, -0.1]
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
