"""Side-by-side checks of tensorlib.nn.functional against torch.nn.functional: the same
NumPy inputs, the same call, the outputs and every input's gradient compared."""
import numpy as np

import tensorlib

TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-10, atol=1e-12)}


def to_tl(a, requires_grad=False):
    if isinstance(a, np.ndarray):
        t = tensorlib.tensor(a)
        return t.requires_grad_() if requires_grad else t
    return a


def to_torch(torch, a, requires_grad=False):
    if isinstance(a, np.ndarray):
        t = torch.tensor(a)
        return t.requires_grad_() if requires_grad else t
    return a


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def assert_close(ours, theirs, dtype="float64", tol=None, what=""):
    tol = tol or TOL[dtype]
    a, b = _np(ours), _np(theirs)
    assert a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}"
    np.testing.assert_allclose(a, b, err_msg=what, equal_nan=True, **tol)


def compare(torch, name, args, kwargs=None, grad=(0,), dtype="float64", tol=None, seed=0,
            ours=None, theirs=None):
    """Run ``F.name(*args, **kwargs)`` in both libraries (NumPy arrays become tensors; the
    positions in ``grad`` require grad), compare the output and, through a random cotangent,
    the gradient of each position in ``grad``. Returns our output."""
    import torch.nn.functional as TF
    import tensorlib.nn.functional as F
    kwargs = kwargs or {}
    ours = ours or getattr(F, name)
    theirs = theirs or getattr(TF, name)
    a = [to_tl(x, i in grad) for i, x in enumerate(args)]
    b = [to_torch(torch, x, i in grad) for i, x in enumerate(args)]
    kw_a = {k: to_tl(v) for k, v in kwargs.items()}
    kw_b = {k: to_torch(torch, v) for k, v in kwargs.items()}
    out_a = ours(*a, **kw_a)
    out_b = theirs(*b, **kw_b)
    assert_close(out_a, out_b, dtype, tol, f"{name} forward")
    if grad and out_b.requires_grad:
        g = np.random.default_rng(seed).standard_normal(tuple(out_b.shape)).astype(dtype)
        out_a.backward(tensorlib.tensor(g))
        out_b.backward(torch.tensor(g))
        for i in grad:
            assert_close(a[i].grad, b[i].grad, dtype, tol, f"{name} grad of argument {i}")
    return out_a


def randn(shape, dtype="float64", seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def rand(shape, dtype="float64", seed=0, lo=0.0, hi=1.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(dtype)
