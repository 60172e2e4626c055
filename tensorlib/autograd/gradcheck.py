"""Check analytical gradients against finite differences (float64).

>>> import tensorlib
>>> x = tensorlib.rand(3, dtype=tensorlib.float64, requires_grad=True)
>>> tensorlib.autograd.gradcheck(lambda t: (t * t).sin(), (x,))
True
"""
from tensorlib._core.tensor import TensorBase

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised when analytical and numerical gradients disagree."""


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _differentiable_outputs(fn, inputs):
    return [o for o in _as_tuple(fn(*inputs)) if isinstance(o, TensorBase) and o.requires_grad]


def _numerical_jacobian(fn, inputs, target, eps):
    """d(outputs)/d(target) by central differences, one input element at a time."""
    import tensorlib
    flat = target.detach().reshape(-1) if target.is_contiguous() else None
    if flat is None:
        raise GradcheckError("gradcheck needs contiguous inputs")
    columns = []

    def evaluate():
        # fn may itself differentiate (gradgradcheck), so it runs with grad mode on
        return [o.detach().clone().reshape(-1) for o in _differentiable_outputs(fn, inputs)]

    for j in range(target.numel()):
        orig = flat[j].item()
        with tensorlib.no_grad():
            flat[j] = orig + eps
        plus = evaluate()
        with tensorlib.no_grad():
            flat[j] = orig - eps
        minus = evaluate()
        with tensorlib.no_grad():
            flat[j] = orig
        columns.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    return columns          # columns[j][k] = d out_k / d target_j (a vector over out_k's elements)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, fast_mode=False, **kwargs):
    """Compare the analytical Jacobian (autograd) with central differences for every input
    that requires grad. Use float64 inputs.

    >>> x = tensorlib.rand(2, dtype=tensorlib.float64, requires_grad=True)
    >>> tensorlib.autograd.gradcheck(lambda t: t.exp(), (x,))
    True
    """
    import tensorlib
    inputs = _as_tuple(inputs)
    targets = [t for t in inputs if isinstance(t, TensorBase) and t.requires_grad]
    for t in targets:
        if t.dtype is not tensorlib.float64:
            import warnings
            warnings.warn(f"Input #{inputs.index(t)} requires gradient and is not a double "
                          f"precision floating point. gradcheck is meant for float64 inputs.")
    outputs = _differentiable_outputs(func, inputs)
    for k, out in enumerate(outputs):
        n_out = out.numel()
        # analytical: one backward per output element
        analytical = [tensorlib.zeros(t.numel(), n_out, dtype=tensorlib.float64) for t in targets]
        for i in range(n_out):
            g = tensorlib.zeros(n_out, dtype=out.dtype)
            g[i] = 1
            outs = _differentiable_outputs(func, inputs)
            grads = tensorlib.autograd.grad(outs[k], targets, g.reshape(out.shape),
                                            allow_unused=True)
            for a, gr in zip(analytical, grads):
                if gr is not None:
                    a[:, i] = gr.reshape(-1).to(tensorlib.float64)
        for t, a in zip(targets, analytical):
            numerical = _numerical_jacobian(func, inputs, t, eps)
            for j in range(t.numel()):
                num = numerical[j][k].to(tensorlib.float64)
                ana = a[j]
                if not tensorlib.allclose(ana, num, rtol=rtol, atol=atol):
                    msg = (f"Jacobian mismatch for output {k} with respect to input "
                           f"{[i for i, x in enumerate(inputs) if x is t][0]}, element {j}:\nnumerical:{num}\nanalytical:{ana}\n")
                    if raise_exception:
                        raise GradcheckError(msg)
                    return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, **kwargs):
    """gradcheck of the gradient itself (second derivatives via create_graph=True).

    >>> x = tensorlib.rand(2, dtype=tensorlib.float64, requires_grad=True)
    >>> tensorlib.autograd.gradgradcheck(lambda t: t * t * t, (x,))
    True
    """
    import tensorlib
    inputs = _as_tuple(inputs)
    outputs = _differentiable_outputs(func, inputs)
    if grad_outputs is None:
        grad_outputs = tuple(tensorlib.rand(o.shape, dtype=o.dtype, requires_grad=True) for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    targets_idx = [i for i, t in enumerate(inputs) if isinstance(t, TensorBase) and t.requires_grad]

    def first_grads(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = _differentiable_outputs(func, ins)
        grads = tensorlib.autograd.grad(outs, [ins[i] for i in targets_idx], gos,
                                        create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_grads, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
