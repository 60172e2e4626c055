"""tensorlib.nn.init against torch.nn.init: gains, fans and errors exactly; the random
initialisers by their distributions (Kolmogorov-Smirnov distance to the exact CDF with a fixed
seed and large tensors), bounds and generator reproducibility; eye_/dirac_/constant_ exactly;
orthogonal_ by W W^T = I."""
import math
import warnings

import numpy as np
import pytest

import tensorlib
from tensorlib.nn import init

_erf = np.frompyfunc(math.erf, 1, 1)
N = 20000
# Kolmogorov's distribution: P(sqrt(n) D > 1.95) ~ 0.001; the seed is fixed, so this is a
# check of the law, not a flaky test
KS_LIMIT = 1.95 / math.sqrt(N)


def _ks(samples, cdf):
    x = np.sort(np.asarray(samples, dtype=np.float64).ravel())
    n = x.size
    f = cdf(x)
    hi = np.arange(1, n + 1) / n
    lo = np.arange(0, n) / n
    return max(np.max(hi - f), np.max(f - lo))


def _phi(x):
    return (1.0 + np.asarray(_erf(np.asarray(x, dtype=np.float64) / math.sqrt(2.0)),
                             dtype=np.float64)) / 2.0


def _gen(seed=1234):
    g = tensorlib.Generator()
    g.manual_seed(seed)
    return g


GAIN_CASES = [("linear", None), ("conv1d", None), ("conv2d", None), ("conv3d", None),
              ("conv_transpose1d", None), ("conv_transpose2d", None),
              ("conv_transpose3d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
              ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu", None)]


@pytest.mark.parametrize("name,param", GAIN_CASES)
def test_calculate_gain_matches_torch(torch, name, param):
    assert init.calculate_gain(name, param) == torch.nn.init.calculate_gain(name, param)


@pytest.mark.parametrize("name,param", [("leaky_relu", True), ("leaky_relu", "0.1"),
                                        ("softmax", None), ("gelu", None)])
def test_calculate_gain_errors_match_torch(torch, name, param):
    with pytest.raises(ValueError) as theirs:
        torch.nn.init.calculate_gain(name, param)
    with pytest.raises(ValueError) as ours:
        init.calculate_gain(name, param)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("shape", [(3, 4), (5, 2, 3), (6, 4, 3, 2), (2, 3, 1, 2, 2),
                                   (0, 3), (3, 0, 2)])
def test_fans_match_torch(torch, shape):
    assert (init._calculate_fan_in_and_fan_out(tensorlib.empty(*shape))
            == torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape)))


def _same_error(torch, ours_fn, theirs_fn, cls=ValueError):
    with pytest.raises(cls) as theirs:
        theirs_fn(torch)
    with pytest.raises(cls) as ours:
        ours_fn(tensorlib)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("call", [
    lambda m: m.nn.init._calculate_fan_in_and_fan_out(m.empty(3)),
    lambda m: m.nn.init.xavier_uniform_(m.empty(3)),
    lambda m: m.nn.init.kaiming_normal_(m.empty(3, 4), mode="fan_avg"),
    lambda m: m.nn.init.eye_(m.empty(3, 4, 5)),
    lambda m: m.nn.init.dirac_(m.empty(3, 4)),
    lambda m: m.nn.init.dirac_(m.empty(3, 4, 5), groups=2),
    lambda m: m.nn.init.orthogonal_(m.empty(3)),
    lambda m: m.nn.init.sparse_(m.empty(3, 4, 2), 0.5),
])
def test_errors_match_torch(torch, call):
    _same_error(torch, call, call)


def test_constant_ones_zeros_exact(torch):
    for fn, args in [("constant_", (0.25,)), ("ones_", ()), ("zeros_", ())]:
        ours = getattr(init, fn)(tensorlib.empty(3, 4), *args)
        theirs = getattr(torch.nn.init, fn)(torch.empty(3, 4), *args)
        assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2), (0, 3)])
def test_eye_exact(torch, shape):
    assert init.eye_(tensorlib.empty(*shape)).tolist() == \
        torch.nn.init.eye_(torch.empty(*shape)).tolist()


@pytest.mark.parametrize("shape,groups", [((4, 4, 3), 1), ((6, 2, 3, 3), 2), ((4, 6, 2, 3), 1),
                                          ((6, 3, 3, 2, 3), 3), ((3, 5, 4), 3)])
def test_dirac_exact(torch, shape, groups):
    assert init.dirac_(tensorlib.empty(*shape), groups).tolist() == \
        torch.nn.init.dirac_(torch.empty(*shape), groups).tolist()


def test_leaf_parameter_filled_under_no_grad():
    w = tensorlib.empty(3, 4, requires_grad=True)
    for fn in (init.zeros_, init.ones_, init.xavier_uniform_, init.kaiming_normal_,
               init.orthogonal_, init.eye_, lambda t: init.trunc_normal_(t),
               lambda t: init.sparse_(t, 0.5), lambda t: init.constant_(t, 2.0)):
        assert fn(w) is w
        assert w.requires_grad and w.grad_fn is None


def test_generator_reproducible():
    for fn in (init.uniform_, init.normal_, init.xavier_normal_, init.kaiming_uniform_,
               init.orthogonal_, init.trunc_normal_):
        a = fn(tensorlib.empty(6, 7), generator=_gen(7))
        b = fn(tensorlib.empty(6, 7), generator=_gen(7))
        c = fn(tensorlib.empty(6, 7), generator=_gen(8))
        assert a.tolist() == b.tolist() and a.tolist() != c.tolist()
    a = init.sparse_(tensorlib.empty(6, 7), 0.5, generator=_gen(3))
    b = init.sparse_(tensorlib.empty(6, 7), 0.5, generator=_gen(3))
    assert a.tolist() == b.tolist()


def test_uniform_distribution():
    w = init.uniform_(tensorlib.empty(N), -1.5, 2.5, generator=_gen()).numpy()
    assert w.min() >= -1.5 and w.max() < 2.5
    assert _ks(w, lambda x: (x + 1.5) / 4.0) < KS_LIMIT


def test_normal_distribution():
    w = init.normal_(tensorlib.empty(N, dtype=tensorlib.float64), 0.5, 2.0,
                     generator=_gen()).numpy()
    assert _ks(w, lambda x: _phi((x - 0.5) / 2.0)) < KS_LIMIT


@pytest.mark.parametrize("mean,std,a,b", [(0.0, 1.0, -2.0, 2.0), (0.3, 0.5, -0.2, 1.0),
                                          (0.0, 1.0, 1.0, 1.5), (0.0, 2.0, -0.1, 0.1),
                                          (5.0, 1.0, -1.0, 1.0)])
def test_trunc_normal_distribution(mean, std, a, b):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w = init.trunc_normal_(tensorlib.empty(N, dtype=tensorlib.float64), mean, std, a, b,
                               generator=_gen()).numpy()
    far = mean < a - 2 * std or mean > b + 2 * std
    assert any("more than 2 std" in str(c.message) for c in caught) == far
    assert w.min() >= a and w.max() <= b
    pa, pb = _phi((a - mean) / std), _phi((b - mean) / std)
    assert _ks(w, lambda x: (_phi((x - mean) / std) - pa) / (pb - pa)) < KS_LIMIT


def test_trunc_normal_float32_bounds():
    w = init.trunc_normal_(tensorlib.empty(N), 0.0, 1.0, -0.1, 0.1, generator=_gen())
    assert float(w.min()) >= -0.1 and float(w.max()) <= 0.1


@pytest.mark.parametrize("shape", [(40, 50), (30, 20, 3, 3)])
@pytest.mark.parametrize("mode", ["fan_in", "fan_out"])
def test_kaiming_and_xavier_scales(shape, mode):
    fan_in = shape[1] * math.prod(shape[2:])
    fan_out = shape[0] * math.prod(shape[2:])
    fan = fan_in if mode == "fan_in" else fan_out
    gain = math.sqrt(2.0 / (1 + 0.1 ** 2))
    bound = gain * math.sqrt(3.0 / fan)
    w = init.kaiming_uniform_(tensorlib.empty(*shape), a=0.1, mode=mode,
                              generator=_gen()).numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert _ks(w, lambda x: (x + bound) / (2 * bound)) < 1.95 / math.sqrt(w.size)
    std = math.sqrt(2.0) / math.sqrt(fan)
    w = init.kaiming_normal_(tensorlib.empty(*shape, dtype=tensorlib.float64), mode=mode,
                             nonlinearity="relu", generator=_gen()).numpy()
    assert _ks(w, lambda x: _phi(x / std)) < 1.95 / math.sqrt(w.size)
    bound = 1.5 * math.sqrt(6.0 / (fan_in + fan_out))
    w = init.xavier_uniform_(tensorlib.empty(*shape), gain=1.5, generator=_gen()).numpy()
    assert _ks(w, lambda x: (x + bound) / (2 * bound)) < 1.95 / math.sqrt(w.size)
    std = 0.5 * math.sqrt(2.0 / (fan_in + fan_out))
    w = init.xavier_normal_(tensorlib.empty(*shape, dtype=tensorlib.float64), gain=0.5,
                            generator=_gen()).numpy()
    assert _ks(w, lambda x: _phi(x / std)) < 1.95 / math.sqrt(w.size)


def test_kaiming_zero_element_warns_like_torch(torch):
    for fn in ("kaiming_uniform_", "kaiming_normal_"):
        with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
            getattr(init, fn)(tensorlib.empty(0, 3))


@pytest.mark.parametrize("shape", [(4, 4), (3, 7), (7, 3), (4, 2, 3)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_orthogonal(shape, dtype):
    dt = getattr(tensorlib, dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    w = init.orthogonal_(tensorlib.empty(*shape, dtype=dt), gain=2.0, generator=_gen())
    m = w.reshape(shape[0], -1).numpy().astype(np.float64) / 2.0
    if m.shape[0] <= m.shape[1]:
        np.testing.assert_allclose(m @ m.T, np.eye(m.shape[0]), atol=tol)
    else:
        np.testing.assert_allclose(m.T @ m, np.eye(m.shape[1]), atol=tol)


def test_orthogonal_is_haar_distributed():
    # for a Haar-random orthogonal 2x2 matrix the angle is uniform on (-pi, pi]: a Q with
    # unfixed signs would be concentrated
    angles = []
    g = _gen()
    for _ in range(400):
        q = init.orthogonal_(tensorlib.empty(2, 2, dtype=tensorlib.float64), generator=g)
        angles.append(math.atan2(q[1, 0].item(), q[0, 0].item()))
    assert _ks(angles, lambda x: (x + math.pi) / (2 * math.pi)) < 1.95 / math.sqrt(400)


def test_sparse_zeros_per_column():
    w = init.sparse_(tensorlib.empty(50, 40, dtype=tensorlib.float64), 0.3, std=0.5,
                     generator=_gen())
    assert (w == 0).sum(0).tolist() == [15] * 40
    nz = w.numpy()[w.numpy() != 0]
    assert _ks(nz, lambda x: _phi(x / 0.5)) < 1.95 / math.sqrt(nz.size)


def test_meta_tensors_are_no_ops():
    for fn in (init.orthogonal_, init.trunc_normal_, lambda t: init.sparse_(t, 0.5),
               init.zeros_):
        w = tensorlib.empty(3, 4, device="meta")
        assert fn(w) is w


def test_deprecated_aliases_warn(torch):
    with pytest.warns(FutureWarning, match=r"`nn.init.uniform` is now deprecated in favor of "
                      r"`nn.init.uniform_`"):
        init.uniform(tensorlib.empty(2))
