"""Adam, PyTorch's ``torch.optim.Adam`` (with AMSGrad, maximize, L2 or decoupled weight
decay), one fused pass per parameter group.

>>> w = tensorlib.nn.Parameter(tensorlib.tensor([1.0, -2.0]))
>>> opt = Adam([w], lr=0.1)
>>> (w * w).sum().backward(); opt.step(); [round(x, 4) for x in w.tolist()]
[0.9, -1.9]
"""
import tensorlib
from tensorlib.optim import _fused
from tensorlib.optim.optimizer import Optimizer, _group_defaults

__all__ = ["Adam"]


class Adam(Optimizer):
    """Adam (Kingma & Ba) with PyTorch's update rule and state: per parameter ``step`` (a
    0-d float tensor), ``exp_avg``, ``exp_avg_sq`` and, with ``amsgrad``,
    ``max_exp_avg_sq``; ``g = grad (+ weight_decay * p)``, or ``p *= 1 - lr * weight_decay``
    when ``decoupled_weight_decay`` (AdamW); ``m = lerp(m, g, 1 - beta1)``,
    ``v = beta2 * v + (1 - beta2) * g * g``, ``p -= lr / (1 - beta1^t) * m /
    (sqrt(v) / sqrt(1 - beta2^t) + eps)``. ``foreach``, ``capturable`` and ``fused`` are
    accepted for PyTorch's signature: every update here is one fused C pass over a group's
    tensors. The state tensors are counted under the memory role ``"optimizer-state"``.

    >>> w = tensorlib.zeros(2, requires_grad=True)
    >>> opt = Adam([w], lr=0.5, betas=(0.8, 0.9))
    >>> w.sum().backward(); opt.step(); w.tolist()
    [-0.5, -0.5]
    >>> sorted(opt.state[w])
    ['exp_avg', 'exp_avg_sq', 'step']
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        _fused._check_lr(lr, foreach, capturable)
        _fused._check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _fused._check_betas(betas)
        _fused._check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        tensor = tensorlib.Tensor
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], tensor) and isinstance(betas[1], tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for i, beta in enumerate(betas):
            if isinstance(beta, tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for "
                                     "capturable=False and foreach=True")
                if beta.numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        # as PyTorch: a one-element tensor beta is kept as a 0-d tensor (read at each step)
        betas = tuple(b.reshape(()) if isinstance(b, tensor) and b.dim() != 0 else b
                      for b in betas)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        _fused._check_fused(fused, foreach, differentiable)

    def __setstate__(self, state):
        super().__setstate__(state)
        _group_defaults(self, amsgrad=False, maximize=False, foreach=None, capturable=False,
                        differentiable=False, decoupled_weight_decay=False, fused=None)
        _fused._fix_scalar_states(self, ("step",))

    def step(self, closure=None):
        """One update of every parameter that has a gradient; returns ``closure()``'s loss
        when a closure is given."""
        loss = _fused._run_closure(closure)
        for group in self.param_groups:
            amsgrad = group["amsgrad"]

            def init(p):
                st = dict(step=_fused._scalar(0.0), exp_avg=_fused._zeros(p),
                          exp_avg_sq=_fused._zeros(p))
                if amsgrad:
                    st["max_exp_avg_sq"] = _fused._zeros(p)
                return st

            params, grads, states = _fused._gather(self, group, init)
            names = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq") if amsgrad else \
                ("exp_avg", "exp_avg_sq")
            beta1, beta2 = group["betas"]
            flags = ((_fused.MAXIMIZE if group["maximize"] else 0)
                     | (_fused.AMSGRAD if amsgrad else 0)
                     | (_fused.DECOUPLED if group["decoupled_weight_decay"] else 0))
            hp = (_fused._value(group["lr"]), group["weight_decay"], _fused._value(beta1),
                  _fused._value(beta2), group["eps"])
            _fused._launch(_fused.ADAM, params, grads,
                           [[s[n] for s in states] for n in names],
                           [[s["step"] for s in states]], hp, flags)
        return loss
