"""What the optimizers share: the fused kernel's entry point and codes (cpu_optim.h), the
argument checks PyTorch's optimizers share, and the gathering of a group's parameters,
gradients and states for one call of the kernel per group.

>>> _scalar_dtype()
tensorlib.float32
"""
import tensorlib
from tensorlib._core.tensor import _fused_optim

__all__ = []

# update codes and flags of cpu_optim.h
SGD, ADAM, ADAMAX, NADAM, RADAM, ADAGRAD, ADADELTA, RMSPROP, RPROP, ASGD = range(10)
MAXIMIZE, AMSGRAD, DECOUPLED, NESTEROV, MOMENTUM, CENTERED = 1, 2, 4, 8, 16, 32


def _scalar_dtype():
    """The dtype of the 0-d states (step, ...): float64 when that is the default dtype, else
    float32, as PyTorch."""
    if tensorlib.get_default_dtype() == tensorlib.float64:
        return tensorlib.float64
    return tensorlib.float32


def _scalar(value):
    """A fresh 0-d state tensor, on the CPU whatever the default device (PyTorch keeps them
    on the CPU without capturable; the update's coefficients are computed on the host)."""
    return tensorlib.tensor(float(value), dtype=_scalar_dtype(), device="cpu")


def _value(x):
    """A hyperparameter as a Python float (a one-element tensor lr is read once per step)."""
    if isinstance(x, tensorlib.Tensor):
        return float(x.item())
    return float(x)


def _check_lr(lr, foreach=None, capturable=False):
    if isinstance(lr, tensorlib.Tensor):
        if foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and "
                             "foreach=True")
        if lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check(ok, message):
    if not ok:
        raise ValueError(message)


def _check_betas(betas):
    _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
    _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")


def _check_fused(fused, foreach, differentiable):
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _run_closure(closure):
    if closure is None:
        return None
    with tensorlib.enable_grad():
        return closure()


def _gather(optimizer, group, init):
    """The group's parameters that have a gradient, their gradients and their state dicts;
    ``init(p)`` returns the state tensors of a parameter's first step (counted as optimizer
    state)."""
    if group.get("differentiable"):
        raise RuntimeError("differentiable=True is not supported: tensorlib's optimizers "
                           "update parameters with a fused kernel that autograd does not "
                           "record")
    params, grads, states = [], [], []
    state_of = optimizer.state
    for p in group["params"]:
        g = p.grad
        if g is None:
            continue
        st = state_of.get(p)
        if not st:
            first = init(p)
            # no entry for a parameter without state (SGD without momentum), as PyTorch
            st = optimizer._init_state(p, **first) if first else {}
        params.append(p)
        grads.append(g)
        states.append(st)
    return params, grads, states


def _fix_scalar_states(optimizer, names):
    """PyTorch's ``__setstate__`` repair: 0-d states saved as Python numbers (older files)
    become tensors of the scalar dtype."""
    for group in optimizer.param_groups:
        for p in group["params"]:
            st = optimizer.state.get(p)
            if not st:
                continue
            for name in names:
                if name in st and not isinstance(st[name], tensorlib.Tensor):
                    st[name] = _scalar(st[name])


def _zeros(p):
    return tensorlib.zeros_like(p, memory_format=tensorlib.preserve_format)


def _launch(op, params, grads, states, scalars, hp, flags=0, fresh=None):
    if params:
        _fused_optim(op, params, grads, states, scalars, tuple(float(h) for h in hp), flags,
                     fresh)
