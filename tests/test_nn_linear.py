"""Identity, Linear, Bilinear, Flatten, Unflatten against PyTorch (weights copied across:
outputs and every gradient), gradcheck in float64, the default initialisation's distribution,
and PyTorch's errors."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlib
import tensorlib.nn as nn
from tensorlib.autograd import gradcheck


def _copy_weights(ours, theirs):
    ours.load_state_dict({k: tensorlib.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})


def _err(fn):
    try:
        fn()
    except Exception as e:      # noqa: BLE001 (the class and message are compared)
        return type(e), str(e)
    return None


def _compare(torch, tm, ours, inputs, rtol=1e-5, atol=1e-6):
    """Forward and every gradient (inputs and parameters) side by side."""
    t_in = [torch.tensor(a, requires_grad=True) for a in inputs]
    o_in = [tensorlib.tensor(a, requires_grad=True) for a in inputs]
    ty, oy = tm(*t_in), ours(*o_in)
    assert tuple(oy.shape) == tuple(ty.shape)
    np.testing.assert_allclose(oy.detach().numpy(), ty.detach().numpy(), rtol=rtol, atol=atol)
    g = np.random.default_rng(7).standard_normal(tuple(ty.shape)).astype(inputs[0].dtype)
    ty.backward(torch.tensor(g))
    oy.backward(tensorlib.tensor(g))
    for a, b in zip(o_in, t_in):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=atol)
    tp = dict(tm.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), tp[name].grad.numpy(), rtol=rtol, atol=atol,
                                   err_msg=name)


@settings(max_examples=15)
@given(batch=st.lists(st.integers(1, 4), min_size=0, max_size=3),
       fin=st.integers(1, 9), fout=st.integers(1, 9), bias=st.booleans(),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_linear_matches_torch(batch, fin, fout, bias, dtype):
    torch = pytest.importorskip("torch")
    tm = torch.nn.Linear(fin, fout, bias=bias, dtype=getattr(torch, np.dtype(dtype).name))
    ours = nn.Linear(fin, fout, bias=bias, dtype=getattr(tensorlib, np.dtype(dtype).name))
    _copy_weights(ours, tm)
    x = np.random.default_rng(len(batch) + fin).standard_normal(tuple(batch) + (fin,))
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    _compare(torch, tm, ours, [x.astype(dtype)], **tol)


def test_linear_parameters_and_repr(torch):
    m = nn.Linear(5, 3)
    assert isinstance(m.weight, nn.Parameter) and m.weight.shape == (3, 5)
    assert m.bias.shape == (3,) and m.weight.requires_grad
    assert repr(m) == repr(torch.nn.Linear(5, 3))
    assert repr(nn.Linear(5, 3, bias=False)) == repr(torch.nn.Linear(5, 3, bias=False))
    assert nn.Linear(5, 3, bias=False).bias is None
    assert list(nn.Linear(5, 3, bias=False).state_dict()) == ["weight"]
    d = nn.Linear(2, 2, dtype=tensorlib.float64)
    assert d.weight.dtype == tensorlib.float64 and d.bias.dtype == tensorlib.float64


def test_linear_wrong_in_features_error(torch):
    for shape in ((4, 3), (7, 4, 3), (3,)):
        te = _err(lambda: torch.nn.Linear(5, 2)(torch.ones(shape)))
        oe = _err(lambda: nn.Linear(5, 2)(tensorlib.ones(shape)))
        assert oe == te, shape
    assert _err(lambda: nn.Linear(5, 2)(tensorlib.ones(4, 3)))[1] == (
        "mat1 and mat2 shapes cannot be multiplied (4x3 and 5x2)")


def _uniform_ok(values, bound):
    """All in [-bound, bound], and mean / variance / spread those of U(-bound, bound)."""
    v = np.asarray(values, dtype=np.float64).ravel()
    n = v.size
    assert np.all(np.abs(v) <= bound)
    var = bound * bound / 3
    assert abs(v.mean()) < 5 * math.sqrt(var / n)
    assert abs(v.var() - var) < 5 * math.sqrt(var * var * 0.8 / n)   # Var of x^2 = 4b^4/45
    # each tenth of the interval holds about a tenth of the values
    counts = np.histogram(v, bins=10, range=(-bound, bound))[0]
    assert np.all(np.abs(counts - n / 10) < 5 * math.sqrt(n / 10))


def test_linear_default_init_distribution(torch):
    tensorlib.manual_seed(0)
    fin, fout = 300, 200
    m = nn.Linear(fin, fout)
    bound = 1 / math.sqrt(fin)
    _uniform_ok(m.weight.detach().numpy(), bound)
    # the bias: 200 values are few; pool several layers
    biases = np.concatenate([nn.Linear(fin, fout).bias.detach().numpy() for _ in range(25)])
    _uniform_ok(biases, bound)
    # torch's own layers draw from the same distribution (same bound)
    tw = torch.nn.Linear(fin, fout).weight.detach().numpy()
    assert np.abs(tw).max() <= bound and np.abs(tw).max() > 0.99 * bound
    assert np.abs(m.weight.detach().numpy()).max() > 0.99 * bound
    m.reset_parameters()
    _uniform_ok(m.weight.detach().numpy(), bound)


def test_linear_reset_parameters_does_not_record_autograd():
    m = nn.Linear(3, 3)
    m.reset_parameters()
    assert m.weight.grad_fn is None and m.weight.is_leaf


def test_linear_gradcheck_float64():
    tensorlib.manual_seed(1)
    m = nn.Linear(4, 3, dtype=tensorlib.float64)
    x = tensorlib.randn(2, 4, dtype=tensorlib.float64, requires_grad=True)

    def f(x, w, b):
        return nn.modules.linear._linear(x, w, b)
    assert gradcheck(f, (x, m.weight, m.bias))
    x3 = tensorlib.randn(2, 2, 4, dtype=tensorlib.float64, requires_grad=True)
    assert gradcheck(lambda x: m(x), (x3,))
    assert gradcheck(lambda w: nn.modules.linear._linear(x3, w), (m.weight,))


def test_bilinear_matches_torch(torch):
    for batch, bias in (((5,), True), ((2, 3), False), ((), True)):
        tm = torch.nn.Bilinear(3, 4, 2, bias=bias)
        ours = nn.Bilinear(3, 4, 2, bias=bias)
        _copy_weights(ours, tm)
        rng = np.random.default_rng(3)
        x1 = rng.standard_normal(batch + (3,)).astype(np.float32)
        x2 = rng.standard_normal(batch + (4,)).astype(np.float32)
        _compare(torch, tm, ours, [x1, x2])
    assert repr(nn.Bilinear(3, 4, 2)) == repr(torch.nn.Bilinear(3, 4, 2))


def test_bilinear_gradcheck_float64():
    tensorlib.manual_seed(2)
    m = nn.Bilinear(3, 2, 2, dtype=tensorlib.float64)
    x1 = tensorlib.randn(4, 3, dtype=tensorlib.float64, requires_grad=True)
    x2 = tensorlib.randn(4, 2, dtype=tensorlib.float64, requires_grad=True)
    f = nn.modules.linear._bilinear
    assert gradcheck(f, (x1, x2, m.weight, m.bias))


def test_bilinear_init_and_errors(torch):
    tensorlib.manual_seed(3)
    m = nn.Bilinear(100, 7, 50)
    _uniform_ok(m.weight.detach().numpy(), 1 / math.sqrt(100))
    cases = [((2, 3), (2, 5), (4, 3, 6), None), ((2, 3), (3, 5), (4, 3, 5), None),
             ((2, 4), (2, 5), (4, 3, 5), None), ((2, 3), (2, 5), (4, 3, 5), (3,))]
    for a, b, w, bias in cases:
        te = _err(lambda: torch.nn.functional.bilinear(
            torch.ones(a), torch.ones(b), torch.ones(w),
            None if bias is None else torch.ones(bias)))
        oe = _err(lambda: nn.modules.linear._bilinear(
            tensorlib.ones(a), tensorlib.ones(b), tensorlib.ones(w),
            None if bias is None else tensorlib.ones(bias)))
        assert oe == te, (a, b, w, bias)


def test_identity(torch):
    x = tensorlib.ones(2, 3)
    assert nn.Identity(3, foo=4)(x) is x
    assert repr(nn.Identity()) == repr(torch.nn.Identity())


@pytest.mark.parametrize("args", [(), (0,), (0, -1), (1, 2), (-3, -2), (2, 2)])
def test_flatten_matches_torch(torch, args):
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    tm, ours = torch.nn.Flatten(*args), nn.Flatten(*args)
    _compare(torch, tm, ours, [x])
    assert repr(ours) == repr(tm)


@pytest.mark.parametrize("dim,size", [(1, (3, 4)), (-1, [2, 2, 5]), (0, (2, 1)), (1, (-1, 6))])
def test_unflatten_matches_torch(torch, dim, size):
    x = np.arange(2 * 12 * 20, dtype=np.float32).reshape(2, 12, 20)
    if dim == -1:
        x = x.reshape(2, 12, 20)
    tm, ours = torch.nn.Unflatten(dim, size), nn.Unflatten(dim, size)
    _compare(torch, tm, ours, [x])
    assert repr(ours) == repr(tm)


def test_unflatten_argument_errors(torch):
    for args in ((1, 3), (1, (2, 2.0)), ("a", (("a", 2),))):
        te = _err(lambda: torch.nn.Unflatten(*args))
        oe = _err(lambda: nn.Unflatten(*args))
        assert te is not None and oe == te, args


def test_mlp_trains_like_torch(torch):
    """Three SGD steps of a small MLP with weights copied across: same losses and weights."""
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Flatten(),
                               torch.nn.Linear(8, 3))
    onet = nn.Sequential(nn.Linear(4, 8), nn.Flatten(), nn.Linear(8, 3))
    _copy_weights(onet, tnet)
    x = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
    for _ in range(3):
        losses = []
        for lib, net in ((torch, tnet), (tensorlib, onet)):
            net.zero_grad()
            loss = (net(lib.tensor(x)).tanh() ** 2).mean()
            loss.backward()
            with lib.no_grad():
                for p in net.parameters():
                    p.sub_(0.5 * p.grad)
            losses.append(loss.item())
        assert losses[1] == pytest.approx(losses[0], rel=1e-5)
    for (k, a), b in zip(onet.state_dict().items(), tnet.state_dict().values()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
