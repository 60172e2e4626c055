"""The recurrent layers against torch.nn with the same weights copied across: outputs, final
states and every gradient (input, h0/c0, each weight) in float32 (1e-5 relative) and float64
(1e-10), batch_first both ways, bidirectional, multi-layer, projections, packed
variable-length batches, unbatched input; parameter names/shapes/init/reprs, torch's error
messages, and gradcheck on the cells."""
import math
import warnings
import zlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlib
from tensorlib import nn
from tensorlib.nn.utils import rnn as R

# torch's own note that its LSTM with projections skips oneDNN
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported")

TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-10, atol=1e-12)}


def _np(t):
    return t.detach().numpy()


def _close(a, b, dtype):
    a, b = _np(a), _np(b)
    tol = dict(TOL[dtype])
    # float32 gradients are sums with cancellation: an element far below the tensor's
    # scale is compared at the tensor's scale (1e-5 of its largest element)
    if dtype == "float32" and b.size:
        tol["atol"] = max(tol["atol"], 1e-5 * float(np.abs(b).max()))
    np.testing.assert_allclose(a, b, **tol)


def _twins(torch, kind, *args, dtype="float32", **kwargs):
    """Our layer and torch's with torch's (random) weights copied into ours."""
    # torch's random init, seeded by the configuration: every run compares the same numbers
    torch.manual_seed(zlib.crc32(repr((kind, args, sorted(kwargs.items()))).encode()))
    theirs = getattr(torch.nn, kind)(*args, **kwargs).to(getattr(torch, dtype))
    ours = getattr(nn, kind)(*args, **kwargs, dtype=getattr(tensorlib, dtype))
    names_ours = [n for n, _ in ours.named_parameters()]
    names_theirs = [n for n, _ in theirs.named_parameters()]
    assert names_ours == names_theirs
    with tensorlib.no_grad():
        for (n, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert tuple(p.shape) == tuple(q.shape), n
            p.copy_(tensorlib.tensor(q.detach().numpy()))
    return ours, theirs


def _leaf(torch, array):
    return (tensorlib.tensor(array, requires_grad=True),
            torch.tensor(array, requires_grad=True))


def _check_grads(ours, theirs, leaves, dtype):
    for n, p in ours.named_parameters():
        q = dict(theirs.named_parameters())[n]
        assert (p.grad is None) == (q.grad is None), n
        _close(p.grad, q.grad, dtype)
    for a, b in leaves:
        _close(a.grad, b.grad, dtype)


def _loss_weights(rng, shape, dtype):
    return rng.standard_normal(shape).astype(dtype)


def _backward(pairs_out, rng, dtype, torch):
    """sum(out * w) over every output, the same w for both libraries."""
    lo, lt = 0, 0
    for a, b in pairs_out:
        w = _loss_weights(rng, tuple(b.shape), dtype)
        lo = lo + (a * tensorlib.tensor(w)).sum()
        lt = lt + (b * torch.tensor(w)).sum()
    lo.backward()
    lt.backward()


CONFIGS = [  # (num_layers, bidirectional, batch_first, bias)
    (1, False, False, True), (2, True, True, True), (2, False, True, False),
    (1, True, False, True)]
MODES = [("RNN", {}), ("RNN", {"nonlinearity": "relu"}), ("LSTM", {}),
         ("LSTM", {"proj_size": 3}), ("GRU", {})]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("kind,extra", MODES)
def test_layer_matches_torch(torch, kind, extra, config, dtype):
    layers, bidir, batch_first, bias = config
    rng = np.random.default_rng(zlib.crc32(repr((kind, extra, config, dtype)).encode()))
    ours, theirs = _twins(torch, kind, 4, 5, layers, bias=bias, batch_first=batch_first,
                          bidirectional=bidir, dtype=dtype, **extra)
    T, B = 6, 3
    shape = (B, T, 4) if batch_first else (T, B, 4)
    x = _leaf(torch, rng.standard_normal(shape).astype(dtype))
    dirs = 2 if bidir else 1
    hsize = extra.get("proj_size", 5)
    h0 = _leaf(torch, rng.standard_normal((layers * dirs, B, hsize)).astype(dtype))
    leaves = [x, h0]
    if kind == "LSTM":
        c0 = _leaf(torch, rng.standard_normal((layers * dirs, B, 5)).astype(dtype))
        leaves.append(c0)
        out_o, (h_o, c_o) = ours(x[0], (h0[0], c0[0]))
        out_t, (h_t, c_t) = theirs(x[1], (h0[1], c0[1]))
        outs = [(out_o, out_t), (h_o, h_t), (c_o, c_t)]
    else:
        out_o, h_o = ours(x[0], h0[0])
        out_t, h_t = theirs(x[1], h0[1])
        outs = [(out_o, out_t), (h_o, h_t)]
    for a, b in outs:
        assert tuple(a.shape) == tuple(b.shape)
        assert a.dtype == getattr(tensorlib, dtype)
        _close(a, b, dtype)
    _backward(outs, rng, dtype, torch)
    _check_grads(ours, theirs, leaves, dtype)


@pytest.mark.parametrize("kind,extra", MODES)
@pytest.mark.parametrize("batch_first", [False, True])
def test_default_state_and_unbatched(torch, kind, extra, batch_first):
    ours, theirs = _twins(torch, kind, 3, 4, 2, batch_first=batch_first, bidirectional=True,
                          dtype="float64", **extra)
    rng = np.random.default_rng(1)
    x = _leaf(torch, rng.standard_normal((5, 3)))          # unbatched: (T, in)
    ro, rt = ours(x[0]), theirs(x[1])
    flat_o = [ro[0]] + (list(ro[1]) if kind == "LSTM" else [ro[1]])
    flat_t = [rt[0]] + (list(rt[1]) if kind == "LSTM" else [rt[1]])
    for a, b in zip(flat_o, flat_t):
        assert tuple(a.shape) == tuple(b.shape)
        _close(a, b, "float64")
    _backward(list(zip(flat_o, flat_t)), rng, "float64", torch)
    _check_grads(ours, theirs, [x], "float64")
    # unbatched with an explicit (2-D) state
    hs = extra.get("proj_size", 4)
    h = rng.standard_normal((4, hs))
    if kind == "LSTM":
        state_o = (tensorlib.tensor(h), tensorlib.tensor(rng.standard_normal((4, 4))))
        state_t = tuple(torch.tensor(s.numpy()) for s in state_o)
    else:
        state_o, state_t = tensorlib.tensor(h), torch.tensor(h)
    _close(ours(x[0], state_o)[0], theirs(x[1], state_t)[0], "float64")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind,extra", MODES)
@pytest.mark.parametrize("bidir", [False, True])
def test_packed_matches_torch(torch, kind, extra, bidir, dtype):
    layers = 2
    ours, theirs = _twins(torch, kind, 3, 5, layers, bidirectional=bidir, dtype=dtype,
                          **extra)
    rng = np.random.default_rng(7)
    lengths = [3, 6, 1, 4, 6]
    T, B = max(lengths), len(lengths)
    x = _leaf(torch, rng.standard_normal((T, B, 3)).astype(dtype))
    dirs = 2 if bidir else 1
    hsize = extra.get("proj_size", 5)
    h0 = _leaf(torch, rng.standard_normal((layers * dirs, B, hsize)).astype(dtype))
    leaves = [x, h0]
    po = R.pack_padded_sequence(x[0], lengths, enforce_sorted=False)
    pt = torch.nn.utils.rnn.pack_padded_sequence(x[1], lengths, enforce_sorted=False)
    if kind == "LSTM":
        c0 = _leaf(torch, rng.standard_normal((layers * dirs, B, 5)).astype(dtype))
        leaves.append(c0)
        out_o, (h_o, c_o) = ours(po, (h0[0], c0[0]))
        out_t, (h_t, c_t) = theirs(pt, (h0[1], c0[1]))
        states = [(h_o, h_t), (c_o, c_t)]
    else:
        out_o, h_o = ours(po, h0[0])
        out_t, h_t = theirs(pt, h0[1])
        states = [(h_o, h_t)]
    assert isinstance(out_o, R.PackedSequence)
    assert out_o.batch_sizes.tolist() == out_t.batch_sizes.tolist()
    assert out_o.sorted_indices.tolist() == out_t.sorted_indices.tolist()
    assert out_o.unsorted_indices.tolist() == out_t.unsorted_indices.tolist()
    _close(out_o.data, out_t.data, dtype)
    for a, b in states:
        _close(a, b, dtype)
    pad_o, len_o = R.pad_packed_sequence(out_o, batch_first=True)
    pad_t, len_t = torch.nn.utils.rnn.pad_packed_sequence(out_t, batch_first=True)
    assert len_o.tolist() == len_t.tolist()
    _backward([(pad_o, pad_t)] + states, rng, dtype, torch)
    _check_grads(ours, theirs, leaves, dtype)


def test_packed_without_state_sorted(torch):
    ours, theirs = _twins(torch, "GRU", 2, 3, bidirectional=True, dtype="float64")
    seqs = [np.random.default_rng(i).standard_normal((n, 2)) for i, n in enumerate([4, 4, 2])]
    po = R.pack_sequence([tensorlib.tensor(s) for s in seqs])
    pt = torch.nn.utils.rnn.pack_sequence([torch.tensor(s) for s in seqs])
    (out_o, h_o), (out_t, h_t) = ours(po), theirs(pt)
    assert out_o.sorted_indices is None
    _close(out_o.data, out_t.data, "float64")
    _close(h_o, h_t, "float64")


def test_parameters_init_and_repr(torch):
    m = nn.LSTM(3, 4, 2, bidirectional=True, proj_size=2)
    t = torch.nn.LSTM(3, 4, 2, bidirectional=True, proj_size=2)
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    assert repr(m) == repr(t)
    for kind, kw in [("GRU", dict(num_layers=2, bias=False, batch_first=True, dropout=0.2)),
                     ("RNN", dict(nonlinearity="relu")), ("RNNCell", {}),
                     ("LSTMCell", dict(bias=False)), ("GRUCell", {}),
                     ("RNNCell", dict(nonlinearity="relu"))]:
        assert repr(getattr(nn, kind)(3, 4, **kw)) == repr(getattr(torch.nn, kind)(3, 4, **kw))
    big = nn.GRU(8, 64, 2)
    bound = 1 / math.sqrt(64)
    for _, p in big.named_parameters():
        v = p.detach().numpy()
        assert v.min() >= -bound and v.max() <= bound and v.max() > 0.9 * bound
    assert len(m.all_weights) == 4 and len(m._flat_weights) == 20
    assert set(m.state_dict()) == set(t.state_dict())
    cell = nn.LSTMCell(3, 4, bias=False)
    assert cell.bias_ih is None and [n for n, _ in cell.named_parameters()] == \
        ["weight_ih", "weight_hh"]


def test_load_torch_state_dict(torch):
    t = torch.nn.LSTM(3, 4, num_layers=2)
    m = nn.LSTM(3, 4, num_layers=2)
    m.load_state_dict({k: tensorlib.tensor(v.numpy()) for k, v in t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 2, 3)).astype(np.float32)
    _close(m(tensorlib.tensor(x))[0], t(torch.tensor(x))[0], "float32")


def _error(torch, make, call):
    theirs_exc = None
    try:
        call(torch, make(torch))
    except Exception as e:
        theirs_exc = e
    assert theirs_exc is not None
    with pytest.raises(type(theirs_exc)) as ours:
        call(tensorlib, make(tensorlib))
    msg = str(theirs_exc).replace("torch.", "tensorlib.")
    assert str(ours.value) == msg


@pytest.mark.parametrize("make,call", [
    (lambda m: m.nn.RNN(4, 5), lambda m, l: l(m.randn(3, 2, 5))),
    (lambda m: m.nn.RNN(4, 5), lambda m, l: l(m.randn(3, 2, 4).double())),
    (lambda m: m.nn.RNN(4, 5), lambda m, l: l(m.randn(3, 2, 4), m.randn(1, 3, 5))),
    (lambda m: m.nn.RNN(4, 5), lambda m, l: l(m.randn(3, 2, 4), m.randn(3, 5))),
    (lambda m: m.nn.RNN(4, 5), lambda m, l: l(m.randn(2, 4), m.randn(1, 1, 5))),
    (lambda m: m.nn.RNN(4, 5), lambda m, l: l(m.randn(1, 3, 2, 4))),
    (lambda m: m.nn.LSTM(4, 5), lambda m, l: l(m.randn(1, 3, 2, 4))),
    (lambda m: m.nn.GRU(4, 5), lambda m, l: l(m.randn(1, 3, 2, 4))),
    (lambda m: m.nn.LSTM(4, 5),
     lambda m, l: l(m.randn(3, 2, 4), (m.randn(1, 2, 5), m.randn(1, 3, 5)))),
    (lambda m: m.nn.LSTM(4, 5),
     lambda m, l: l(m.randn(3, 2, 4), (m.randn(1, 3, 5), m.randn(1, 3, 5)))),
    (lambda m: m.nn.LSTM(4, 5, proj_size=2),
     lambda m, l: l(m.randn(3, 2, 4), (m.randn(1, 2, 5), m.randn(1, 2, 5)))),
    (lambda m: m.nn.LSTM(4, 5),
     lambda m, l: l(m.randn(3, 2, 4), (m.randn(2, 5), m.randn(1, 2, 5)))),
    (lambda m: m.nn.LSTM(4, 5),
     lambda m, l: l(m.randn(2, 4), (m.randn(1, 2, 5), m.randn(1, 5)))),
    (lambda m: m.nn.RNN(4, 5),
     lambda m, l: l(m.nn.utils.rnn.pack_sequence([m.randn(3, 4)]), m.randn(1, 2, 5))),
    (lambda m: m.nn.RNNCell(4, 5), lambda m, l: l(m.randn(3, 5))),
    (lambda m: m.nn.RNNCell(4, 5), lambda m, l: l(m.randn(3, 4), m.randn(2, 5))),
    (lambda m: m.nn.RNNCell(4, 5), lambda m, l: l(m.randn(3, 4), m.randn(3, 6))),
    (lambda m: m.nn.RNNCell(4, 5), lambda m, l: l(m.randn(3, 3, 4))),
    (lambda m: m.nn.RNNCell(4, 5), lambda m, l: l(m.randn(3, 4), m.randn(1, 3, 5))),
    (lambda m: m.nn.RNNCell(4, 5, nonlinearity="sigmoid"), lambda m, l: l(m.randn(3, 4))),
    (lambda m: m.nn.LSTMCell(4, 5),
     lambda m, l: l(m.randn(3, 4), (m.randn(3, 5), m.randn(2, 5)))),
    (lambda m: m.nn.LSTMCell(4, 5),
     lambda m, l: l(m.randn(3, 4), (m.randn(3, 5), m.randn(3, 6)))),
    (lambda m: m.nn.LSTMCell(4, 5), lambda m, l: l(m.randn(3, 3, 4))),
    (lambda m: m.nn.GRUCell(4, 5), lambda m, l: l(m.randn(3, 4), m.randn(3, 6))),
    (lambda m: m.nn.GRUCell(4, 5), lambda m, l: l(m.randn(3, 3, 4))),
    (lambda m: m.nn.GRUCell(4, 5), lambda m, l: l(m.randn(3, 4).double())),
    (lambda m: m.nn.LSTMCell(4, 5), lambda m, l: l(m.randn(3, 4).double())),
    (lambda m: None, lambda m, l: m.nn.RNN(4, 5, nonlinearity="sigmoid")),
    (lambda m: None, lambda m, l: m.nn.LSTM(4, 5, proj_size=5)),
    (lambda m: None, lambda m, l: m.nn.LSTM(4, 5, proj_size=-1)),
    (lambda m: None, lambda m, l: m.nn.LSTM(4, 0)),
    (lambda m: None, lambda m, l: m.nn.LSTM(4, 5.0)),
    (lambda m: None, lambda m, l: m.nn.LSTM(4, 5, num_layers=0)),
    (lambda m: None, lambda m, l: m.nn.LSTM(4, 5, dropout=1.5)),
    (lambda m: None, lambda m, l: m.nn.LSTM(4, 5, dropout=True)),
    (lambda m: None, lambda m, l: m.nn.GRU(4, 5, proj_size=2)),
    (lambda m: None, lambda m, l: m.nn.RNN(4, 5, proj_size=2)),
])
def test_errors_match_torch(torch, make, call):
    _error(torch, make, call)


def test_dropout_warning_and_between_layers(torch):
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.5)
    # dropout=1 zeroes the second layer's input: deterministic, so comparable with torch
    ours, theirs = _twins(torch, "LSTM", 3, 4, 2, dropout=1.0, dtype="float64")
    x = np.random.default_rng(2).standard_normal((5, 2, 3))
    _close(ours(tensorlib.tensor(x))[0], theirs(torch.tensor(x))[0], "float64")
    ours.eval()
    theirs.eval()
    _close(ours(tensorlib.tensor(x))[0], theirs(torch.tensor(x))[0], "float64")
    m = nn.GRU(3, 4, 2, dropout=0.5, dtype=tensorlib.float64)
    xt = tensorlib.tensor(x)
    m.eval()
    a = m(xt)[0]
    assert m(xt)[0].tolist() == a.tolist()
    m.train()
    assert m(xt)[0].tolist() != a.tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind,extra", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                                        ("LSTMCell", {}), ("GRUCell", {}),
                                        ("GRUCell", {"bias": False})])
def test_cells_match_torch(torch, kind, extra, dtype):
    ours, theirs = _twins(torch, kind, 4, 3, dtype=dtype, **extra)
    rng = np.random.default_rng(3)
    for batched in (True, False):
        lead = (5,) if batched else ()
        x = _leaf(torch, rng.standard_normal(lead + (4,)).astype(dtype))
        h = _leaf(torch, rng.standard_normal(lead + (3,)).astype(dtype))
        leaves = [x, h]
        if kind == "LSTMCell":
            c = _leaf(torch, rng.standard_normal(lead + (3,)).astype(dtype))
            leaves.append(c)
            outs = list(zip(ours(x[0], (h[0], c[0])), theirs(x[1], (h[1], c[1]))))
        else:
            outs = [(ours(x[0], h[0]), theirs(x[1], h[1]))]
        for a, b in outs:
            assert tuple(a.shape) == tuple(b.shape)
            _close(a, b, dtype)
        ours.zero_grad()
        theirs.zero_grad()
        _backward(outs, rng, dtype, torch)
        _check_grads(ours, theirs, leaves, dtype)
    # no state given
    x = rng.standard_normal((2, 4)).astype(dtype)
    a, b = ours(tensorlib.tensor(x)), theirs(torch.tensor(x))
    for p, q in (zip(a, b) if kind == "LSTMCell" else [(a, b)]):
        _close(p, q, dtype)


@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_gradcheck(kind):
    cell = getattr(nn, kind)(3, 2, dtype=tensorlib.float64)
    x = tensorlib.randn(2, 3, dtype=tensorlib.float64, requires_grad=True)
    h = tensorlib.randn(2, 2, dtype=tensorlib.float64, requires_grad=True)
    params = list(cell.parameters())
    if kind == "LSTMCell":
        c = tensorlib.randn(2, 2, dtype=tensorlib.float64, requires_grad=True)
        fn = (lambda x, h, c, *ps: cell(x, (h, c)))
        inputs = (x, h, c)
    else:
        fn = (lambda x, h, *ps: cell(x, h))
        inputs = (x, h)
    assert tensorlib.autograd.gradcheck(fn, inputs + tuple(params))


def test_gradcheck_small_bidirectional_lstm_packed():
    m = nn.LSTM(2, 3, bidirectional=True, proj_size=1, dtype=tensorlib.float64)
    x = tensorlib.randn(3, 2, 2, dtype=tensorlib.float64, requires_grad=True)

    def fn(x, *ps):
        p = R.pack_padded_sequence(x, [3, 2])
        out, (h, c) = m(p)
        return out.data, h, c
    assert tensorlib.autograd.gradcheck(fn, (x,) + tuple(m.parameters()))


def _rounded(nbytes):
    return -(-nbytes // 512) * 512


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_memory_after_backward_is_only_gradients(no_gc, kind):
    # every activation, gate and per-step state is freed by reference counting alone: what
    # is left after backward is the gradients, to the byte
    from tensorlib import memory
    m = getattr(nn, kind)(3, 8, 2, bidirectional=True)
    x = tensorlib.randn(6, 4, 3, requires_grad=True)
    h0 = tensorlib.randn(4, 4, 8, requires_grad=True)
    state = (h0, tensorlib.randn(4, 4, 8)) if kind == "LSTM" else h0
    start = memory.memory_allocated()
    packed = R.pack_padded_sequence(x, [6, 5, 3, 1])
    out, final = m(packed, state)
    R.pad_packed_sequence(out)[0].sum().backward()
    del out, final, packed
    grads = [p.grad for p in m.parameters()] + [x.grad, h0.grad]
    # (the engine may hand one gradient buffer to two leaves, e.g. bias_ih and bias_hh, so
    # count storages)
    storages = {g.untyped_storage().data_ptr(): g.untyped_storage().nbytes() for g in grads}
    assert memory.memory_allocated() - start == sum(_rounded(n) for n in storages.values())


def test_no_graph_cycles(no_gc):
    import weakref
    m = nn.LSTM(2, 3, 2, bidirectional=True)
    x = tensorlib.randn(4, 2, 2, requires_grad=True)
    out, (h, c) = m(x)
    ref = weakref.ref(out.grad_fn)
    (out.sum() + h.sum() + c.sum()).backward()
    del out, h, c
    assert ref() is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.flatten_parameters()


@st.composite
def _rnn_cases(draw):
    kind = draw(st.sampled_from(["RNN", "LSTM", "GRU"]))
    hidden = draw(st.integers(1, 4))
    proj = draw(st.integers(0, hidden - 1)) if kind == "LSTM" and hidden > 1 else 0
    lengths = draw(st.lists(st.integers(1, 5), min_size=1, max_size=4))
    return dict(kind=kind, input_size=draw(st.integers(1, 3)), hidden=hidden, proj=proj,
                layers=draw(st.integers(1, 2)), bidir=draw(st.booleans()),
                batch_first=draw(st.booleans()), bias=draw(st.booleans()),
                packed=draw(st.booleans()), lengths=lengths)


@settings(max_examples=15)
@given(_rnn_cases())
def test_random_configurations_match_torch(case):
    torch = pytest.importorskip("torch")
    kw = dict(bias=case["bias"], batch_first=case["batch_first"],
              bidirectional=case["bidir"], dtype="float64")
    if case["proj"]:
        kw["proj_size"] = case["proj"]
    ours, theirs = _twins(torch, case["kind"], case["input_size"], case["hidden"],
                          case["layers"], **kw)
    lengths = case["lengths"]
    T, B = max(lengths), len(lengths)
    shape = (B, T, case["input_size"]) if case["batch_first"] else (T, B, case["input_size"])
    x = _leaf(torch, np.random.default_rng(T * 7 + B).standard_normal(shape))
    if case["packed"]:
        xo = R.pack_padded_sequence(x[0], lengths, case["batch_first"], enforce_sorted=False)
        xt = torch.nn.utils.rnn.pack_padded_sequence(x[1], lengths, case["batch_first"],
                                                     enforce_sorted=False)
    else:
        xo, xt = x
    ro, rt = ours(xo), theirs(xt)
    out_o, out_t = ro[0], rt[0]
    if case["packed"]:
        out_o = R.pad_packed_sequence(out_o, case["batch_first"])[0]
        out_t = torch.nn.utils.rnn.pad_packed_sequence(out_t, case["batch_first"])[0]
    states_o = list(ro[1]) if case["kind"] == "LSTM" else [ro[1]]
    states_t = list(rt[1]) if case["kind"] == "LSTM" else [rt[1]]
    pairs = [(out_o, out_t)] + list(zip(states_o, states_t))
    for a, b in pairs:
        assert tuple(a.shape) == tuple(b.shape)
        _close(a, b, "float64")
    _backward(pairs, np.random.default_rng(0), "float64", torch)
    _check_grads(ours, theirs, [x], "float64")
