"""Autograd through dtype conversions and ops that may return their input unchanged:
``to``/``type``/``float``/... record ToCopyBackward0 (the gradient comes back in the input's
dtype), integer results are never differentiable, and ``contiguous``/``to`` handing back the
input itself leave its history alone (a leaf stays a leaf). In-place ops that save their input
save a recorded copy, so double backward reaches the input's earlier history."""
import numpy as np
import pytest

import tensorlib
from tensorlib.autograd import gradcheck, gradgradcheck

f64 = tensorlib.float64


def leaf(*shape, dtype=f64, seed=0):
    rng = np.random.default_rng(seed)
    return tensorlib.tensor(rng.uniform(0.5, 1.5, size=shape), dtype=dtype, requires_grad=True)


CONVERSIONS = {
    "to_dtype": lambda x: x.to(tensorlib.float32),
    "to_tensor": lambda x: x.to(tensorlib.zeros(1, dtype=tensorlib.float16)),
    "to_device_dtype": lambda x: x.to("cpu", tensorlib.bfloat16),
    "to_kw_copy": lambda x: x.to(dtype=x.dtype, copy=True),
    "float": lambda x: x.float(), "double": lambda x: x.double(), "half": lambda x: x.half(),
    "bfloat16": lambda x: x.bfloat16(),
    "type_name": lambda x: x.type("tensorlib.FloatTensor"),
    "type_dtype": lambda x: x.type(tensorlib.float32),
    "type_as": lambda x: x.type_as(tensorlib.zeros(1)),
}


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
def test_conversion_records_to_copy_and_returns_the_gradient_in_the_input_dtype(name):
    dt = tensorlib.float32 if name == "double" else f64      # a conversion that changes it
    x = leaf(2, 3, dtype=dt)
    y = CONVERSIONS[name](x)
    assert y.requires_grad and y.grad_fn.name() == "ToCopyBackward0"
    (y.to(f64) * tensorlib.arange(6.0, dtype=f64).view(2, 3)).sum().backward()
    assert x.grad.dtype == dt
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(6.0).reshape(2, 3))


def test_conversion_gradcheck_and_gradgradcheck_in_float64():
    x = leaf(3, 2)
    f = lambda t: (t.to(f64, copy=True) * t).sin()   # noqa: E731
    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))
    g = lambda t: t.double().pow(3)                  # noqa: E731  (same dtype: t itself)
    assert gradgradcheck(g, (x,))


@pytest.mark.parametrize("method", ["long", "int", "short", "char", "byte", "bool"])
def test_integer_and_bool_results_are_not_differentiable(method):
    x = leaf(3)
    y = getattr(x, method)()
    assert not y.requires_grad and y.grad_fn is None
    assert not x.to(tensorlib.int64).requires_grad


@pytest.mark.parametrize("fn", [lambda x: x.contiguous(), lambda x: x.to(x.dtype),
                                lambda x: x.to("cpu"), lambda x: x.cpu(), lambda x: x.float(),
                                lambda x: x.type(tensorlib.float32)])
def test_an_unchanged_input_is_returned_with_its_history_untouched(fn):
    x = leaf(2, 2, dtype=tensorlib.float32)
    assert fn(x) is x
    assert x.is_leaf and x.grad_fn is None
    h = x * 2
    node = h.grad_fn
    assert fn(h) is h and h.grad_fn is node


def test_contiguous_of_a_transposed_tensor_still_records():
    x = leaf(2, 3)
    y = x.t().contiguous()
    assert y.grad_fn is not None and y.is_contiguous()
    (y * tensorlib.arange(6.0, dtype=f64).view(3, 2)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(6.0).reshape(3, 2).T)


def test_copy_from_another_dtype_broadcasts_its_gradient_back():
    s = leaf(3)
    y = tensorlib.zeros(2, 3) * 1
    y.copy_(s)
    y.sum().backward()
    assert s.grad.dtype == f64
    np.testing.assert_array_equal(s.grad.numpy(), [2.0, 2.0, 2.0])


def test_double_backward_through_an_inplace_op_that_saves_its_input():
    a, b = leaf(4, seed=1), leaf(4, seed=2)

    def f(a, b):
        y = a * 1
        y.mul_(b)                    # saves y's value from before the write
        z = y * 1
        z.cumprod_(0)
        return z

    assert gradcheck(f, (a, b))
    assert gradgradcheck(f, (a, b))


def test_matches_torch(torch):
    x = leaf(2, 3, dtype=tensorlib.float32)
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    for f in (lambda t, m: t.double() * 3, lambda t, m: t.to(m.float16).float() ** 2,
              lambda t, m: t.type_as(m.zeros(1, dtype=m.float64)).exp()):
        y, ty = f(x, tensorlib), f(tx, torch)
        assert y.grad_fn.name() == ty.grad_fn.name()
        y.sum().backward()
        ty.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
        x.grad = None
        tx.grad = None
