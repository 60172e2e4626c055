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
