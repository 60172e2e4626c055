"""tensorlib.nn.utils against torch.nn.utils: gradient clipping (every norm type, the
returned norm, the non-finite error), parameters <-> vector, and the rnn packing helpers
(same inputs -> same data, batch_sizes, indices, padded outputs; gradients through
pack/pad against torch's)."""
import math
import types

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib
from tensorlib.nn import utils as U
from tensorlib.nn.utils import rnn as R


def _pair(torch, arrays, requires_grad=False):
    ours = [tensorlib.tensor(a, requires_grad=requires_grad) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=requires_grad) for a in arrays]
    return ours, theirs


def _grads(rng, shapes, dtype=np.float32):
    return [rng.standard_normal(s).astype(dtype) * 3 for s in shapes]


def _with_grads(torch, grads):
    ours, theirs = [], []
    for g in grads:
        a = tensorlib.zeros(*g.shape, dtype=getattr(tensorlib, str(g.dtype)),
                            requires_grad=True)
        b = torch.zeros(*g.shape, dtype=getattr(torch, str(g.dtype)), requires_grad=True)
        a.grad, b.grad = tensorlib.tensor(g), torch.tensor(g)
        ours.append(a)
        theirs.append(b)
    return ours, theirs


def _close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(a.detach().numpy() if hasattr(a, "detach") else a),
                               np.asarray(b.detach().numpy() if hasattr(b, "detach") else b),
                               rtol=rtol, atol=atol)


# ---------------------------------------------------------------- clipping

@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, 0.5, "inf", float("inf"), -math.inf, 0])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
def test_clip_grad_norm_matches_torch(torch, norm_type, max_norm):
    grads = _grads(np.random.default_rng(0), [(3, 4), (5,), (2, 1, 3)])
    ours, theirs = _with_grads(torch, grads)
    ours.append(tensorlib.zeros(2, requires_grad=True))      # a parameter without a grad
    theirs.append(torch.zeros(2, requires_grad=True))
    t_ours = U.clip_grad_norm_(ours, max_norm, norm_type)
    t_theirs = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    assert t_ours.shape == t_theirs.shape == ()
    _close(t_ours, t_theirs)
    for a, b in zip(ours, theirs):
        assert (a.grad is None) == (b.grad is None)
        if a.grad is not None:
            _close(a.grad, b.grad)


def test_clip_grad_norm_float64_and_single_tensor(torch):
    g = np.random.default_rng(1).standard_normal((4, 4))
    (a,), (b,) = _with_grads(torch, [g])
    _close(U.clip_grad_norm_(a, 0.1), torch.nn.utils.clip_grad_norm_(b, 0.1), rtol=1e-12)
    assert a.grad.dtype == tensorlib.float64
    _close(a.grad, b.grad, rtol=1e-12, atol=0)


def test_total_norm_and_clip_with_norm(torch):
    grads = _grads(np.random.default_rng(2), [(3,), (2, 2)])
    ours, theirs = _with_grads(torch, grads)
    for p in (2.0, 1.0, float("inf")):
        n1 = U.get_total_norm([x.grad for x in ours], p)
        n2 = torch.nn.utils.get_total_norm([x.grad for x in theirs], p)
        _close(n1, n2)
    U.clip_grads_with_norm_(ours, 1.0, U.get_total_norm([x.grad for x in ours]))
    torch.nn.utils.clip_grads_with_norm_(theirs, 1.0,
                                         torch.nn.utils.get_total_norm([x.grad for x in theirs]))
    for a, b in zip(ours, theirs):
        _close(a.grad, b.grad)
    assert U.get_total_norm([]).item() == 0.0


def test_clip_grad_norm_nonfinite(torch):
    for bad in (float("nan"), float("inf")):
        g = np.array([1.0, bad], dtype=np.float32)
        ours, theirs = _with_grads(torch, [g])
        with pytest.raises(RuntimeError) as e_theirs:
            torch.nn.utils.clip_grad_norm_(theirs, 1.0, error_if_nonfinite=True)
        with pytest.raises(RuntimeError) as e_ours:
            U.clip_grad_norm_(ours, 1.0, error_if_nonfinite=True)
        assert str(e_ours.value) == str(e_theirs.value)
        n_ours = U.clip_grad_norm_(ours, 1.0)
        n_theirs = torch.nn.utils.clip_grad_norm_(theirs, 1.0)
        assert math.isnan(n_ours.item()) == math.isnan(n_theirs.item())
        np.testing.assert_array_equal(ours[0].grad.numpy(), theirs[0].grad.numpy())


def test_clip_grad_norm_empty_generator_warns():
    with pytest.warns(UserWarning, match="empty generator"):
        assert U.clip_grad_norm_((p for p in []), 1.0).item() == 0.0


def test_clip_grad_norm_deprecated_alias_warns():
    w = tensorlib.zeros(1, requires_grad=True)
    w.grad = tensorlib.tensor([3.0])
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        assert U.clip_grad_norm(w, 1.0).item() == 3.0


def test_clip_grad_norm_not_recorded():
    w = tensorlib.zeros(3, requires_grad=True)
    w.grad = tensorlib.tensor([3.0, 4.0, 0.0], requires_grad=True)
    n = U.clip_grad_norm_(w, 1.0)
    assert n.grad_fn is None and w.grad.grad_fn is None


def test_clip_grad_value_matches_torch(torch):
    grads = _grads(np.random.default_rng(3), [(3, 4), (6,)])
    ours, theirs = _with_grads(torch, grads)
    assert U.clip_grad_value_(ours, 1.25) is None
    torch.nn.utils.clip_grad_value_(theirs, 1.25)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


# ------------------------------------------------------- parameters <-> vector

def test_parameters_to_vector_and_back(torch):
    arrays = [np.arange(6.0).reshape(2, 3), np.array([7.0, 8.0]), np.ones((1, 1, 2))]
    ours, theirs = _pair(torch, arrays, requires_grad=True)
    v1 = U.parameters_to_vector(ours)
    v2 = torch.nn.utils.parameters_to_vector(theirs)
    assert v1.tolist() == v2.tolist()
    (v1 * tensorlib.arange(10.0)).sum().backward()
    (v2 * torch.arange(10.0)).sum().backward()
    for a, b in zip(ours, theirs):
        assert a.grad.tolist() == b.grad.tolist()
    vec = np.linspace(-1, 1, 10)
    U.vector_to_parameters(tensorlib.tensor(vec), ours)
    torch.nn.utils.vector_to_parameters(torch.tensor(vec), theirs)
    for a, b in zip(ours, theirs):
        assert a.tolist() == b.tolist() and a.shape == b.shape and a.requires_grad


def test_vector_to_parameters_type_error(torch):
    with pytest.raises(TypeError) as theirs:
        torch.nn.utils.vector_to_parameters([1.0], [torch.zeros(1)])
    with pytest.raises(TypeError) as ours:
        U.vector_to_parameters([1.0], [tensorlib.zeros(1)])
    assert str(ours.value) == str(theirs.value)


# ---------------------------------------------------------------- rnn packing

def _same_packed(p_ours, p_theirs, exact=True):
    assert isinstance(p_ours, R.PackedSequence)
    if exact:
        assert p_ours.data.tolist() == p_theirs.data.tolist()
    else:
        _close(p_ours.data, p_theirs.data)
    assert p_ours.batch_sizes.tolist() == p_theirs.batch_sizes.tolist()
    assert p_ours.batch_sizes.dtype == tensorlib.int64
    for i in ("sorted_indices", "unsorted_indices"):
        a, b = getattr(p_ours, i), getattr(p_theirs, i)
        assert (a is None) == (b is None)
        if a is not None:
            assert a.tolist() == b.tolist()


@st.composite
def _batches(draw):
    batch = draw(st.integers(1, 5))
    lengths = draw(st.lists(st.integers(1, 6), min_size=batch, max_size=batch))
    extra = draw(st.integers(0, 2))
    feat = draw(st.sampled_from([(), (3,), (2, 2)]))
    return lengths, extra, feat, draw(st.booleans())


@given(_batches())
def test_pack_pad_roundtrip_matches_torch(case):
    torch = pytest.importorskip("torch")
    lengths, extra, feat, batch_first = case
    steps = max(lengths) + extra
    shape = (len(lengths), steps) + feat if batch_first else (steps, len(lengths)) + feat
    x = np.random.default_rng(len(lengths)).standard_normal(shape)
    xo = tensorlib.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    sorted_ok = all(a >= b for a, b in zip(lengths, lengths[1:]))
    for enforce in (True, False):
        for lens in (lengths, tensorlib.tensor(lengths)):
            tlens = lens if isinstance(lens, list) else torch.tensor(lengths)
            if enforce and not sorted_ok:
                with pytest.raises(RuntimeError) as theirs:
                    torch.nn.utils.rnn.pack_padded_sequence(xt, tlens, batch_first, True)
                with pytest.raises(RuntimeError) as ours:
                    R.pack_padded_sequence(xo, lens, batch_first, True)
                assert str(ours.value) == str(theirs.value)
                continue
            po = R.pack_padded_sequence(xo, lens, batch_first, enforce)
            pt = torch.nn.utils.rnn.pack_padded_sequence(xt, tlens, batch_first, enforce)
            _same_packed(po, pt)
            for total in (None, steps + 1):
                yo, lo = R.pad_packed_sequence(po, batch_first, -2.5, total)
                yt, lt = torch.nn.utils.rnn.pad_packed_sequence(pt, batch_first, -2.5, total)
                assert yo.tolist() == yt.tolist() and lo.tolist() == lt.tolist()
                assert lo.dtype == tensorlib.int64
            # gradients through pack then pad
            w = np.random.default_rng(0).standard_normal(tuple(yt.shape))
            (yo * tensorlib.tensor(w)).sum().backward()
            (yt * torch.tensor(w)).sum().backward()
            np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
            xo.grad = None
            xt.grad = None


def test_pack_errors_match_torch(torch):
    x = np.zeros((4, 3, 2))
    cases = [[3, 1], [3, 1, 0], [2, 3, 1]]
    for lengths in cases:
        with pytest.raises(RuntimeError) as theirs:
            torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), lengths)
        with pytest.raises(RuntimeError) as ours:
            R.pack_padded_sequence(tensorlib.tensor(x), lengths)
        assert str(ours.value) == str(theirs.value)
    for make in (lambda m: m.zeros(0, 3, 2),):
        with pytest.raises(RuntimeError) as theirs:
            torch.nn.utils.rnn.pack_padded_sequence(make(torch), [0, 0, 0])
        with pytest.raises(RuntimeError) as ours:
            R.pack_padded_sequence(make(tensorlib), [0, 0, 0])
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), torch.tensor([[3, 2, 1]]))
    with pytest.raises(RuntimeError) as ours:
        R.pack_padded_sequence(tensorlib.tensor(x), tensorlib.tensor([[3, 2, 1]]))
    assert str(ours.value) == str(theirs.value)
    # longer than the padded input: torch reads past it; we refuse
    with pytest.raises(RuntimeError, match="larger than"):
        R.pack_padded_sequence(tensorlib.tensor(x), [5, 1, 1])
    p = R.pack_sequence([tensorlib.ones(3), tensorlib.ones(2)])
    pt = torch.nn.utils.rnn.pack_sequence([torch.ones(3), torch.ones(2)])
    with pytest.raises(ValueError) as theirs:
        torch.nn.utils.rnn.pad_packed_sequence(pt, total_length=2)
    with pytest.raises(ValueError) as ours:
        R.pad_packed_sequence(p, total_length=2)
    assert str(ours.value) == str(theirs.value)


def test_pack_ties_keep_torch_order(torch):
    seqs = [np.full(n, float(i)) for i, n in enumerate([2, 3, 2, 3, 1, 2])]
    po = R.pack_sequence([tensorlib.tensor(s) for s in seqs], enforce_sorted=False)
    pt = torch.nn.utils.rnn.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    _same_packed(po, pt)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence_matches_torch(torch, batch_first, side):
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((n, 2)) for n in (3, 1, 4, 0)]
    ours, theirs = _pair(torch, arrays, requires_grad=True)
    yo = R.pad_sequence(ours, batch_first, 7.0, side)
    yt = torch.nn.utils.rnn.pad_sequence(theirs, batch_first, 7.0, side)
    assert yo.tolist() == yt.tolist()
    w = rng.standard_normal(tuple(yt.shape))
    (yo * tensorlib.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    for a, b in zip(ours, theirs):
        assert a.grad.tolist() == b.grad.tolist()


def test_pad_sequence_dtype_and_broadcast(torch):
    yo = R.pad_sequence([tensorlib.ones(2), tensorlib.ones(3, dtype=tensorlib.int64)])
    yt = torch.nn.utils.rnn.pad_sequence([torch.ones(2), torch.ones(3, dtype=torch.int64)])
    assert yo.tolist() == yt.tolist() and yo.dtype == tensorlib.float32
    yo = R.pad_sequence([tensorlib.ones(2, 3), tensorlib.zeros(1, 1)])
    yt = torch.nn.utils.rnn.pad_sequence([torch.ones(2, 3), torch.zeros(1, 1)])
    assert yo.tolist() == yt.tolist()


@pytest.mark.parametrize("call", [
    lambda m: m.nn.utils.rnn.pad_sequence([]),
    lambda m: m.nn.utils.rnn.pad_sequence(3),
    lambda m: m.nn.utils.rnn.pad_sequence([m.ones(2)], padding_side="up"),
])
def test_pad_sequence_errors_match_torch(torch, call):
    try:
        call(torch)
    except Exception as e:
        theirs = e
    with pytest.raises(type(theirs)) as ours:
        call(tensorlib)
    assert str(ours.value) == str(theirs)


def test_unpad_and_unpack_sequence(torch):
    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal((n, 2)) for n in (2, 4, 1)]
    ours, theirs = _pair(torch, arrays)
    po = R.pack_sequence(ours, enforce_sorted=False)
    pt = torch.nn.utils.rnn.pack_sequence(theirs, enforce_sorted=False)
    _same_packed(po, pt)
    for a, b in zip(R.unpack_sequence(po), torch.nn.utils.rnn.unpack_sequence(pt)):
        assert a.tolist() == b.tolist()
    padded = R.pad_sequence(ours)
    before = padded.shape
    out = R.unpad_sequence(padded, tensorlib.tensor([2, 4, 1]))
    assert padded.shape == before
    assert [o.tolist() for o in out] == [a.tolist() for a in arrays]


def test_packed_sequence_methods():
    p = R.pack_sequence([tensorlib.ones(2), tensorlib.ones(3)], enforce_sorted=False)
    assert p.to("cpu") is p and p.to(tensorlib.float32) is p
    q = p.double()
    assert q.data.dtype == tensorlib.float64 and isinstance(q, R.PackedSequence)
    assert q.sorted_indices.tolist() == [1, 0] and q.batch_sizes is p.batch_sizes
    assert p.is_cuda is False
    data, batch_sizes, sorted_indices, unsorted_indices = p     # a 4-tuple
    assert R.PackedSequence(data, batch_sizes, sorted_indices).unsorted_indices.tolist() \
        == [1, 0]
    r = R.PackedSequence((data, batch_sizes))
    assert r.data is data and r.sorted_indices is None
    assert repr(p).startswith("PackedSequence(data=tensor(")
    assert R.invert_permutation(None) is None
    assert isinstance(U.rnn, types.ModuleType)


# ------------------------------------------------------------------ parametrizations

from tensorlib.nn.utils import parametrize as P  # noqa: E402
from tensorlib.nn.utils import parametrizations as PS  # noqa: E402


def _linear_twins(torch, n_in=4, n_out=3, dtype="float64"):
    torch.manual_seed(n_in * 100 + n_out)       # the same numbers on every run
    t = torch.nn.Linear(n_in, n_out).to(getattr(torch, dtype))
    m = tensorlib.nn.Linear(n_in, n_out, dtype=getattr(tensorlib, dtype))
    with tensorlib.no_grad():
        m.weight.copy_(tensorlib.tensor(t.weight.detach().numpy()))
        m.bias.copy_(tensorlib.tensor(t.bias.detach().numpy()))
    return m, t


def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()
    return Symmetric()


def _scale(lib, k):
    class Scale(lib.nn.Module):
        def forward(self, X):
            return X * k
    return Scale()


def test_parametrize_matches_torch(torch):
    m, t = _linear_twins(torch, 3, 3)
    P.register_parametrization(m, "weight", _symmetric(tensorlib))
    torch.nn.utils.parametrize.register_parametrization(t, "weight", _symmetric(torch))
    assert type(m).__name__ == type(t).__name__ == "ParametrizedLinear"
    assert isinstance(m, tensorlib.nn.Linear)
    assert sorted(m.state_dict()) == sorted(t.state_dict())
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in t.named_parameters()]
    np.testing.assert_allclose(m.weight.detach().numpy(), t.weight.detach().numpy())
    np.testing.assert_allclose(m.parametrizations.weight.original.detach().numpy(),
                               t.parametrizations.weight.original.detach().numpy())
    x = np.random.default_rng(0).standard_normal((5, 3))
    (m(tensorlib.tensor(x)) ** 2).sum().backward()
    (t(torch.tensor(x)) ** 2).sum().backward()
    for (n, a), (_, b) in zip(m.named_parameters(), t.named_parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, err_msg=n)
    # assignment goes through right_inverse
    a = np.arange(9.0).reshape(3, 3)
    m.weight = tensorlib.tensor(a)
    t.weight = torch.tensor(a)
    assert m.parametrizations.weight.original.tolist() == \
        t.parametrizations.weight.original.tolist()
    assert m.weight.tolist() == t.weight.tolist()
    # a second parametrization chains after the first
    P.register_parametrization(m, "weight", _scale(tensorlib, 2.0))
    torch.nn.utils.parametrize.register_parametrization(t, "weight", _scale(torch, 2.0))
    assert m.weight.tolist() == t.weight.tolist() and len(m.parametrizations.weight) == 2
    for leave in (True, False):
        m2, t2 = _linear_twins(torch, 3, 3)
        for mod, lib in ((m2, tensorlib), (t2, torch)):
            lib.nn.utils.parametrize.register_parametrization(mod, "weight", _symmetric(lib))
        orig = m2.parametrizations.weight.original
        P.remove_parametrizations(m2, "weight", leave_parametrized=leave)
        torch.nn.utils.parametrize.remove_parametrizations(t2, "weight", leave)
        assert type(m2) is tensorlib.nn.Linear and m2.weight is orig
        assert not P.is_parametrized(m2) and not hasattr(m2, "parametrizations")
        assert m2.weight.tolist() == t2.weight.tolist()
        assert isinstance(m2.weight, tensorlib.nn.Parameter)


def test_parametrize_errors_match_torch(torch):
    def both(fn):
        excs = []
        for lib in (torch, tensorlib):
            with pytest.raises(Exception) as e:
                fn(lib)
            excs.append(e.value)
        assert type(excs[0]) is type(excs[1])
        return [str(e).replace("torch", "tensorlib") for e in excs]

    def shrink(lib):
        class S(lib.nn.Module):
            def forward(self, X):
                return X[:1]
        return S()

    a, b = both(lambda lib: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.Linear(2, 2), "weight", shrink(lib)))
    assert a.splitlines()[0] == b.splitlines()[0]
    assert "unparametrized shape" in b and "parametrized shape" in b
    a, b = both(lambda lib: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.Linear(2, 2), "nope", _scale(lib, 1.0)))
    assert a.split("'")[0] == b.split("'")[0] and "with name 'nope'" in b
    a, b = both(lambda lib: lib.nn.utils.parametrize.remove_parametrizations(
        lib.nn.Linear(2, 2), "weight"))
    assert a.endswith("does not have a parametrization on weight") and \
        b.endswith("does not have a parametrization on weight")
    # unsafe allows a shape change
    m = P.register_parametrization(tensorlib.nn.Linear(2, 2), "weight", shrink(tensorlib),
                                   unsafe=True)
    assert tuple(m.weight.shape) == (1, 2)
    # no right_inverse: assignment fails like torch's
    m = P.register_parametrization(tensorlib.nn.Linear(2, 2), "weight", _scale(tensorlib, 2.0))
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        m.weight = tensorlib.zeros(2, 2)
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        import pickle
        pickle.dumps(m)


def test_parametrize_cached_and_buffers():
    m = tensorlib.nn.Linear(2, 2)
    m.register_buffer("scale", tensorlib.ones(2))
    P.register_parametrization(m, "scale", _scale(tensorlib, 3.0))
    assert m.scale.tolist() == [3.0, 3.0]
    assert "parametrizations.scale.original" in dict(m.named_buffers())
    with P.cached():
        first = m.scale
        assert m.scale is first
        with P.cached():
            assert m.scale is first
        assert m.scale is first
    assert m.scale is not first
    assert P.type_before_parametrizations(m) is tensorlib.nn.Linear
    assert P.is_parametrized(m, "scale") and not P.is_parametrized(m, "weight")


@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm_matches_torch(torch, dim):
    m, t = _linear_twins(torch, 4, 3)
    PS.weight_norm(m, dim=dim)
    torch.nn.utils.parametrizations.weight_norm(t, dim=dim)
    assert sorted(m.state_dict()) == sorted(t.state_dict())
    for k in ("original0", "original1"):
        a = getattr(m.parametrizations.weight, k)
        b = getattr(t.parametrizations.weight, k)
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(m.weight.detach().numpy(), t.weight.detach().numpy(),
                               rtol=1e-12)
    with torch.no_grad():
        t.parametrizations.weight.original0.mul_(1.5)
    with tensorlib.no_grad():
        m.parametrizations.weight.original0.mul_(1.5)
    x = np.random.default_rng(1).standard_normal((5, 4))
    (m(tensorlib.tensor(x)) ** 2).sum().backward()
    (t(torch.tensor(x)) ** 2).sum().backward()
    for (n, a), (_, b) in zip(m.named_parameters(), t.named_parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, err_msg=n)


def test_weight_norm_3d_and_legacy_state_dict(torch):
    class W(tensorlib.nn.Module):
        def __init__(self, w):
            super().__init__()
            self.weight = tensorlib.nn.Parameter(tensorlib.tensor(w))

    w = np.random.default_rng(2).standard_normal((3, 2, 4))
    for dim in (0, 1, 2):
        m = PS.weight_norm(W(w), dim=dim)
        g = m.parametrizations.weight.original0.detach().numpy()
        other = tuple(d for d in range(3) if d != dim)
        np.testing.assert_allclose(g, np.sqrt((w ** 2).sum(axis=other, keepdims=True)))
        np.testing.assert_allclose(m.weight.detach().numpy(), w, rtol=1e-12)
    m = PS.weight_norm(W(w))
    m.load_state_dict({"weight_g": tensorlib.full((3, 1, 1), 2.0),
                       "weight_v": tensorlib.tensor(w)})
    norms = np.sqrt((w ** 2).sum(axis=(1, 2), keepdims=True))
    np.testing.assert_allclose(m.weight.detach().numpy(), 2.0 * w / norms, rtol=1e-12)


def test_spectral_norm_matches_torch(torch):
    m, t = _linear_twins(torch, 5, 4)
    PS.spectral_norm(m)
    torch.nn.utils.parametrizations.spectral_norm(t)
    assert sorted(m.state_dict()) == sorted(t.state_dict())
    # the power iteration starts from random vectors: start ours from torch's
    pm, pt = m.parametrizations.weight[0], t.parametrizations.weight[0]
    with tensorlib.no_grad():
        pm._u.copy_(tensorlib.tensor(pt._u.numpy()))
        pm._v.copy_(tensorlib.tensor(pt._v.numpy()))
    x = np.random.default_rng(3).standard_normal((2, 5))
    for _ in range(3):                       # training: one power step per forward
        m.zero_grad()
        t.zero_grad()
        (m(tensorlib.tensor(x)) ** 2).sum().backward()
        (t(torch.tensor(x)) ** 2).sum().backward()
        np.testing.assert_allclose(pm._u.numpy(), pt._u.numpy(), rtol=1e-10)
        for (n, a), (_, b) in zip(m.named_parameters(), t.named_parameters()):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, err_msg=n)
    m.eval()
    t.eval()
    u = pm._u.numpy().copy()
    np.testing.assert_allclose(m.weight.detach().numpy(), t.weight.detach().numpy(),
                               rtol=1e-10)
    assert (pm._u.numpy() == u).all()
    # sigma of the normalised weight is ~1 after the iteration converges
    m.train()
    for _ in range(30):
        w = m.weight
    assert abs(np.linalg.svd(w.detach().numpy(), compute_uv=False)[0] - 1.0) < 1e-6


def test_spectral_norm_errors(torch):
    for lib in (torch, tensorlib):
        with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
            lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), "w")
        with pytest.raises(ValueError, match="n_power_iterations=0"):
            lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2),
                                                        n_power_iterations=0)
        with pytest.raises(IndexError, match=r"range of \[-2, 1\] but got 2"):
            lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), dim=2)


# ---------------------------------------------------- legacy hook-based weight/spectral norm

@pytest.mark.parametrize("dim", [0, 1, None])
def test_legacy_weight_norm_matches_torch(torch, dim):
    m, t = _linear_twins(torch, 4, 3)
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        U.weight_norm(m, dim=dim)
    with pytest.warns(FutureWarning):
        torch.nn.utils.weight_norm(t, dim=dim)
    assert sorted(m.state_dict()) == sorted(t.state_dict())
    for n in ("weight_g", "weight_v"):
        np.testing.assert_allclose(getattr(m, n).detach().numpy(),
                                   getattr(t, n).detach().numpy(), rtol=1e-12)
    with torch.no_grad():
        t.weight_g.mul_(0.5)
    with tensorlib.no_grad():
        m.weight_g.mul_(0.5)
    x = np.random.default_rng(4).standard_normal((5, 4))
    (m(tensorlib.tensor(x)) ** 2).sum().backward()
    (t(torch.tensor(x)) ** 2).sum().backward()
    for (n, a), (_, b) in zip(m.named_parameters(), t.named_parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, err_msg=n)
    with pytest.raises(RuntimeError) as ours, pytest.warns(FutureWarning):
        U.weight_norm(m, dim=dim)
    with pytest.raises(RuntimeError) as theirs, pytest.warns(FutureWarning):
        torch.nn.utils.weight_norm(t, dim=dim)
    assert str(ours.value) == str(theirs.value)
    U.remove_weight_norm(m)
    torch.nn.utils.remove_weight_norm(t)
    assert sorted(m.state_dict()) == sorted(t.state_dict())
    assert isinstance(m.weight, tensorlib.nn.Parameter)
    np.testing.assert_allclose(m.weight.detach().numpy(), t.weight.detach().numpy(),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        U.remove_weight_norm(m)


def test_legacy_spectral_norm_matches_torch(torch):
    m, t = _linear_twins(torch, 5, 4)
    U.spectral_norm(m)
    torch.nn.utils.spectral_norm(t)
    assert sorted(m.state_dict()) == sorted(t.state_dict())
    with tensorlib.no_grad():
        m.weight_u.copy_(tensorlib.tensor(t.weight_u.numpy()))
        m.weight_v.copy_(tensorlib.tensor(t.weight_v.numpy()))
    x = np.random.default_rng(5).standard_normal((3, 5))
    for _ in range(3):
        m.zero_grad()
        t.zero_grad()
        (m(tensorlib.tensor(x)) ** 2).sum().backward()
        (t(torch.tensor(x)) ** 2).sum().backward()
        np.testing.assert_allclose(m.weight_u.numpy(), t.weight_u.numpy(), rtol=1e-10)
        np.testing.assert_allclose(m.weight_v.numpy(), t.weight_v.numpy(), rtol=1e-10)
        for (n, a), (_, b) in zip(m.named_parameters(), t.named_parameters()):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, err_msg=n)
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        U.spectral_norm(m)
    U.remove_spectral_norm(m)
    torch.nn.utils.remove_spectral_norm(t)
    assert sorted(m.state_dict()) == sorted(t.state_dict())
    np.testing.assert_allclose(m.weight.detach().numpy(), t.weight.detach().numpy(),
                               rtol=1e-10)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
        U.remove_spectral_norm(m)


# ------------------------------------------------------------------------- orthogonal

class _Holder:
    """A module with one weight of a given shape, for both libraries."""

    @staticmethod
    def make(lib, w):
        class W(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = lib.nn.Parameter(lib.tensor(w))
        return W()


def _assert_orthonormal(w):
    q = w.detach().numpy()
    q = q if q.shape[-2] >= q.shape[-1] else np.swapaxes(q, -1, -2)
    eye = np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2)
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, eye, atol=1e-10)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 3), (2, 4, 2)])
@pytest.mark.parametrize("omap", [None, "matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("triv", [True, False])
def test_orthogonal_matches_torch(torch, shape, omap, triv):
    rng = np.random.default_rng(8)
    w = rng.standard_normal(shape)
    m, t = _Holder.make(tensorlib, w), _Holder.make(torch, w)
    if not triv and omap in (None, "matrix_exp", "cayley") and shape[-1] != shape[-2]:
        if omap is None:
            omap = "householder"
    PS.orthogonal(m, orthogonal_map=omap, use_trivialization=triv)
    torch.nn.utils.parametrizations.orthogonal(t, orthogonal_map=omap,
                                               use_trivialization=triv)
    assert sorted(m.state_dict()) == sorted(t.state_dict())
    pm, pt = m.parametrizations.weight, t.parametrizations.weight
    if triv and shape[-1] != shape[-2]:
        # the base is completed with random columns: start ours from torch's
        with tensorlib.no_grad():
            pm[0].base.copy_(tensorlib.tensor(pt[0].base.numpy()))
    np.testing.assert_allclose(pm.original.detach().numpy(), pt.original.detach().numpy(),
                               rtol=1e-10, atol=1e-12)
    if triv:
        np.testing.assert_allclose(pm[0].base.numpy(), pt[0].base.numpy(), rtol=1e-10,
                                   atol=1e-12)
    if triv:
        _assert_orthonormal(m.weight)
    # move away from the map's origin, so that the map itself is exercised
    step = 0.3 * rng.standard_normal(shape)
    with tensorlib.no_grad():
        pm.original.add_(tensorlib.tensor(step))
    with torch.no_grad():
        pt.original.add_(torch.tensor(step))
    wo, wt = m.weight, t.weight
    np.testing.assert_allclose(wo.detach().numpy(), wt.detach().numpy(), rtol=1e-9,
                               atol=1e-11)
    effective = omap or ("matrix_exp" if shape[-1] == shape[-2] else "householder")
    if effective != "householder":
        # householder's sign column is the original's diagonal truncated to int (torch's
        # rule), so it stays orthogonal only near the origin
        _assert_orthonormal(wo)
    g = rng.standard_normal(shape)
    (wo * tensorlib.tensor(g)).sum().backward()
    (wt * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(pm.original.grad.numpy(), pt.original.grad.numpy(),
                               rtol=1e-8, atol=1e-10)


def test_orthogonal_assignment_and_errors(torch):
    w = np.random.default_rng(9).standard_normal((4, 4))
    m, t = _Holder.make(tensorlib, w), _Holder.make(torch, w)
    PS.orthogonal(m)
    torch.nn.utils.parametrizations.orthogonal(t)
    q = np.linalg.qr(np.random.default_rng(10).standard_normal((4, 4)))[0]
    m.weight = tensorlib.tensor(q)
    t.weight = torch.tensor(q)
    np.testing.assert_allclose(m.weight.detach().numpy(), t.weight.detach().numpy(),
                               atol=1e-12)
    np.testing.assert_allclose(m.weight.detach().numpy(), q, atol=1e-12)
    for call in (lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2),
                                                                      "bias"),
                 lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2),
                                                                      orthogonal_map="qr"),
                 lambda lib: setattr(lib.nn.utils.parametrizations.orthogonal(
                     lib.nn.Linear(3, 3), use_trivialization=False), "weight",
                     lib.eye(3))):
        excs = []
        for lib in (torch, tensorlib):
            with pytest.raises(Exception) as e:
                call(lib)
            excs.append(e.value)
        assert type(excs[0]) is type(excs[1])
        assert str(excs[0]) == str(excs[1])


# ------------------------------------------------------------------ docstring examples

@pytest.mark.parametrize("name", [
    "tensorlib.nn.init", "tensorlib.nn.utils", "tensorlib.nn.utils.rnn",
    "tensorlib.nn.utils.clip_grad", "tensorlib.nn.utils.convert_parameters",
    "tensorlib.nn.utils.parametrize", "tensorlib.nn.utils.parametrizations",
    "tensorlib.nn.utils.weight_norm", "tensorlib.nn.utils.spectral_norm",
    "tensorlib.nn.utils.init",
    "tensorlib.nn.modules.rnn"])
def test_docstring_examples(name):
    import doctest
    import sys
    import warnings as _w
    module = sys.modules[name]
    with _w.catch_warnings():
        _w.simplefilter("ignore")
        result = doctest.testmod(module, extraglobs={"tensorlib": tensorlib},
                                 optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_parametrized_module_deepcopies():
    import copy
    m = PS.weight_norm(tensorlib.nn.Linear(3, 2))
    m2 = copy.deepcopy(m)
    assert type(m2).__name__ == "ParametrizedLinear" and type(m2) is type(m)
    assert m2.parametrizations.weight.original1 is not m.parametrizations.weight.original1
    assert m2.weight.tolist() == m.weight.tolist()
    with tensorlib.no_grad():
        m2.parametrizations.weight.original0.mul_(2.0)
    assert m2.weight.tolist() != m.weight.tolist()


def test_skip_init(torch):
    m = U.skip_init(tensorlib.nn.Linear, 3, 4, bias=False)
    t = torch.nn.utils.skip_init(torch.nn.Linear, 3, 4, bias=False)
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    # torch's recurrent layers take (*args, **kwargs), which its skip_init refuses; ours
    # name device= and are accepted
    m = U.skip_init(tensorlib.nn.LSTM, 3, 4, num_layers=2)
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in torch.nn.LSTM(3, 4, 2).named_parameters()]
    assert all(p.device.type == "cpu" for p in m.parameters())
    for bad in (int, tensorlib.nn.Identity):
        with pytest.raises(RuntimeError) as theirs:
            torch.nn.utils.skip_init(getattr(torch.nn, bad.__name__, bad))
        with pytest.raises(RuntimeError) as ours:
            U.skip_init(bad)
        assert str(ours.value).split(";")[0] == str(theirs.value).split(";")[0]


def test_clipping_gradients_that_share_memory(torch):
    # the engine may give two leaves one gradient buffer (x + y) or a broadcast one
    # (sum's backward): clipping must scale each parameter's gradient exactly once
    for clip in ("norm", "value"):
        ours = [tensorlib.ones(3, requires_grad=True) for _ in range(3)]
        theirs = [torch.ones(3, requires_grad=True) for _ in range(3)]
        for ps, lib in ((ours, tensorlib), (theirs, torch)):
            ((ps[0] + ps[1]) * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
            ps[2].sum().backward()
        if clip == "norm":
            n1 = U.clip_grad_norm_(ours, 0.5)
            n2 = torch.nn.utils.clip_grad_norm_(theirs, 0.5)
            _close(n1, n2)
        else:
            U.clip_grad_value_(ours, 0.5)
            torch.nn.utils.clip_grad_value_(theirs, 0.5)
        for a, b in zip(ours, theirs):
            _close(a.grad, b.grad)
            assert a.grad.untyped_storage().role_name == "gradient"
    m, t = tensorlib.nn.LSTM(3, 4), torch.nn.LSTM(3, 4)
    with tensorlib.no_grad():
        for p, q in zip(m.parameters(), t.parameters()):
            p.copy_(tensorlib.tensor(q.detach().numpy()))
    x = np.random.default_rng(0).standard_normal((5, 2, 3)).astype(np.float32)
    m(tensorlib.tensor(x))[0].sum().backward()
    t(torch.tensor(x))[0].sum().backward()
    _close(U.clip_grad_norm_(m.parameters(), 0.1),
           torch.nn.utils.clip_grad_norm_(t.parameters(), 0.1))
    for p, q in zip(m.parameters(), t.parameters()):
        _close(p.grad, q.grad)
