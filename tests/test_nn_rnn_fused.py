"""The fused recurrent cells ``_thnn_fused_lstm_cell`` / ``_thnn_fused_gru_cell`` and their
backward ops. PyTorch runs these ops only on CUDA, so the reference is torch's own CPU cell
functions (``torch.lstm_cell`` / ``torch.gru_cell``, fed the same weights) for outputs and
every gradient, torch's composite gate arithmetic for the workspace, torch's meta kernels
for the shapes; plus gradcheck/gradgradcheck in float64, thread-count independence, meta,
the error messages, and the LSTM/GRU layers' use of the fused path."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlib
from tensorlib.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

TOL = {"float32": dict(rtol=1e-5, atol=1e-5), "float64": dict(rtol=1e-10, atol=1e-12)}


def _np(t):
    return t.detach().numpy()


def _ours(a, requires_grad=False):
    return tensorlib.tensor(a.detach().numpy().copy(), requires_grad=requires_grad)


def _case(kind, B, I, H, dtype, seed, bias=True):
    """Torch tensors for one cell step: x, h, (c), w_ih, w_hh, (b_ih, b_hh)."""
    g = torch.Generator().manual_seed(seed)
    G = (4 if kind == "lstm" else 3) * H
    dt = getattr(torch, dtype)

    def r(*s):
        return torch.randn(*s, generator=g, dtype=dt)
    t = dict(x=r(B, I), h=r(B, H), w_ih=r(G, I) * 0.5, w_hh=r(G, H) * 0.5)
    if kind == "lstm":
        t["c"] = r(B, H)
    if bias:
        t["b_ih"], t["b_hh"] = r(G), r(G)
    return t


def _close(a, b, dtype):
    np.testing.assert_allclose(_np(a), b.detach().numpy(), **TOL[dtype])


def _run_ours(kind, t):
    """The fused cell over our copies of t; returns (outputs, our leaves by name)."""
    ours = {k: _ours(v, True) for k, v in t.items()}
    ig = ours["x"].matmul(ours["w_ih"].t())
    hg = ours["h"].matmul(ours["w_hh"].t())
    ib, hb = ours.get("b_ih"), ours.get("b_hh")
    if kind == "lstm":
        return tensorlib._thnn_fused_lstm_cell(ig, hg, ours["c"], ib, hb), ours
    return tensorlib._thnn_fused_gru_cell(ig, hg, ours["h"], ib, hb), ours


def _run_torch(kind, t):
    tt = {k: v.clone().requires_grad_(True) for k, v in t.items()}
    if kind == "lstm":
        hy, cy = torch.lstm_cell(tt["x"], (tt["h"], tt["c"]), tt["w_ih"], tt["w_hh"],
                                 tt.get("b_ih"), tt.get("b_hh"))
        return (hy, cy), tt
    return (torch.gru_cell(tt["x"], tt["h"], tt["w_ih"], tt["w_hh"], tt.get("b_ih"),
                           tt.get("b_hh")),), tt


@settings(max_examples=12, deadline=None)
@given(kind=st.sampled_from(["lstm", "gru"]), B=st.integers(1, 6), I=st.integers(1, 5),
       H=st.integers(1, 9), dtype=st.sampled_from(["float32", "float64"]),
       bias=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_against_torch_cells(kind, B, I, H, dtype, bias, seed):
    t = _case(kind, B, I, H, dtype, seed, bias)
    out, ours = _run_ours(kind, t)
    ref, tt = _run_torch(kind, t)
    _close(out[0], ref[0], dtype)
    if kind == "lstm":
        _close(out[1], ref[1], dtype)
    # every gradient, with a weight per output so that both hy and cy gradients count
    g = torch.Generator().manual_seed(seed + 1)
    ws = [torch.randn(r.shape, generator=g, dtype=r.dtype) for r in ref]
    sum(torch.sum(r * w) for r, w in zip(ref, ws)).backward()
    total = None
    for o, w in zip(out, ws):
        term = (o * _ours(w)).sum()
        total = term if total is None else total + term
    total.backward()
    for k in t:
        _close(ours[k].grad, tt[k].grad, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_workspace_and_direct_backward(dtype):
    """The workspace holds what torch's CUDA kernels save (LSTM: the activated gates i, f, g,
    o; GRU: r, z, n, the hidden n part, hx); the backward ops against torch's autograd of the
    composite arithmetic, the bias gradients the sums over the batch."""
    B, H = 5, 7
    dt = getattr(torch, dtype)
    gen = torch.Generator().manual_seed(3)

    def r(*s):
        return torch.randn(*s, generator=gen, dtype=dt)
    # LSTM
    ig, hg, cx, ib, hb = r(B, 4 * H), r(B, 4 * H), r(B, H), r(4 * H), r(4 * H)
    ghy, gcy = r(B, H), r(B, H)
    leaves = [t.clone().requires_grad_(True) for t in (ig, hg, cx, ib, hb)]
    i, f, g, o = (leaves[0] + leaves[1] + leaves[3] + leaves[4]).chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * leaves[2] + i * g
    hy = o * cy.tanh()
    (hy * ghy).sum().add((cy * gcy).sum()).backward()
    y, c, ws = tensorlib._thnn_fused_lstm_cell(*[_ours(t) for t in (ig, hg, cx, ib, hb)])
    _close(y, hy, dtype)
    _close(c, cy, dtype)
    _close(ws, torch.cat([i, f, g, o], 1), dtype)
    gg, gcx, gb = tensorlib._thnn_fused_lstm_cell_backward(_ours(ghy), _ours(gcy), _ours(cx),
                                                            c, ws, True)
    _close(gg, leaves[0].grad, dtype)
    _close(gcx, leaves[2].grad, dtype)
    _close(gb, leaves[3].grad, dtype)
    # only one of the two gradients given
    gg1, gcx1, gb1 = tensorlib._thnn_fused_lstm_cell_backward(None, _ours(gcy), _ours(cx), c,
                                                               ws, False)
    leaves2 = [t.clone().requires_grad_(True) for t in (ig, cx)]
    i, f, g, o = (leaves2[0] + hg + ib + hb).chunk(4, 1)
    ((f.sigmoid() * leaves2[1] + i.sigmoid() * g.tanh()) * gcy).sum().backward()
    _close(gg1, leaves2[0].grad, dtype)
    _close(gcx1, leaves2[1].grad, dtype)
    assert gb1 is None
    assert tensorlib._thnn_fused_lstm_cell_backward(None, None, _ours(cx), c, ws, True) == \
        (None, None, None)
    # GRU
    ig, hg, hx, ib, hb = r(B, 3 * H), r(B, 3 * H), r(B, H), r(3 * H), r(3 * H)
    ghy = r(B, H)
    leaves = [t.clone().requires_grad_(True) for t in (ig, hg, hx, ib, hb)]
    xr, xz, xn = (leaves[0] + leaves[3]).chunk(3, 1)
    hr, hz, hn = (leaves[1] + leaves[4]).chunk(3, 1)
    rg, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
    n = (xn + rg * hn).tanh()
    hy = n + z * (leaves[2] - n)
    (hy * ghy).sum().backward()
    y, ws = tensorlib._thnn_fused_gru_cell(*[_ours(t) for t in (ig, hg, hx, ib, hb)])
    _close(y, hy, dtype)
    _close(ws, torch.cat([rg, z, n, hn, hx], 1), dtype)
    got = tensorlib._thnn_fused_gru_cell_backward(_ours(ghy), ws, True)
    for a, leaf in zip(got, leaves):
        _close(a, leaf.grad, dtype)
    assert tensorlib._thnn_fused_gru_cell_backward(_ours(ghy), ws, False)[3:] == (None, None)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
@pytest.mark.parametrize("bias", [True, False])
def test_gradcheck_and_double_backward(kind, bias):
    gen = np.random.default_rng(7)
    B, H = 3, 2
    G = (4 if kind == "lstm" else 3) * H

    def r(*s):
        return tensorlib.tensor(gen.standard_normal(s), dtype=tensorlib.float64,
                                requires_grad=True)
    args = (r(B, G), r(B, G), r(B, H)) + ((r(G), r(G)) if bias else ())
    if kind == "lstm":
        def fn(*a):
            hy, cy, _ = tensorlib._thnn_fused_lstm_cell(*a)
            return hy, cy
    else:
        def fn(*a):
            return tensorlib._thnn_fused_gru_cell(*a)[0]
    assert gradcheck(fn, args, eps=1e-6, atol=1e-8)
    assert gradgradcheck(fn, args, eps=1e-6, atol=1e-8)


def test_thread_count_independent():
    gen = np.random.default_rng(11)
    B, H = 64, 300
    ig, hg = (tensorlib.tensor(gen.standard_normal((B, 4 * H)), dtype=tensorlib.float32)
              for _ in range(2))
    cx = tensorlib.tensor(gen.standard_normal((B, H)), dtype=tensorlib.float32)
    b = tensorlib.tensor(gen.standard_normal(4 * H), dtype=tensorlib.float32)
    old = tensorlib.get_num_threads()
    outs = []
    try:
        for n in (1, 2, 3):
            tensorlib.set_num_threads(n)
            hy, cy, ws = tensorlib._thnn_fused_lstm_cell(ig, hg, cx, b, b)
            back = tensorlib._thnn_fused_lstm_cell_backward(hy, cy, cx, cy, ws, True)
            gy, gws = tensorlib._thnn_fused_gru_cell(ig[:, :3 * H], hg[:, :3 * H], cx)
            gb = tensorlib._thnn_fused_gru_cell_backward(gy, gws, True)
            outs.append([_np(t) for t in (hy, cy, ws, gy, gws) + tuple(back) + tuple(gb)])
    finally:
        tensorlib.set_num_threads(old)
    for o in outs[1:]:
        for a, b in zip(o, outs[0]):
            assert np.array_equal(a, b)


def test_meta_shapes():
    """On meta: the shapes alone (torch has a meta kernel for the LSTM cell only; the GRU
    workspace is [B, 5H] as in its CUDA kernel)."""
    def m(*s, lib=tensorlib):
        return lib.empty(*s, device="meta")
    for B, H in ((2, 3), (0, 4)):
        G = 4 * H
        ours = tensorlib._thnn_fused_lstm_cell(m(B, G), m(B, G), m(B, H), m(G), m(G))
        ref = torch.ops.aten._thnn_fused_lstm_cell(
            m(B, G, lib=torch), m(B, G, lib=torch), m(B, H, lib=torch), m(G, lib=torch),
            m(G, lib=torch))
        assert [tuple(t.shape) for t in ours] == [tuple(t.shape) for t in ref]
        assert all(t.device.type == "meta" for t in ours)
        gg, gcx, gb = tensorlib._thnn_fused_lstm_cell_backward(m(B, H), None, m(B, H), ours[1],
                                                                ours[2], True)
        assert [tuple(t.shape) for t in (gg, gcx, gb)] == [(B, G), (B, H), (G,)]
        G = 3 * H
        hy, ws = tensorlib._thnn_fused_gru_cell(m(B, G), m(B, G), m(B, H), m(G), m(G))
        assert (tuple(hy.shape), tuple(ws.shape)) == ((B, H), (B, 5 * H))
        got = tensorlib._thnn_fused_gru_cell_backward(m(B, H), ws, True)
        assert [tuple(t.shape) for t in got] == [(B, G)] * 2 + [(B, H)] + [(G,)] * 2
        assert all(t.device.type == "meta" for t in got)


def _raises(match, fn, *args):
    with pytest.raises(RuntimeError, match=match):
        fn(*args)


def test_errors():
    z = tensorlib.zeros
    lstm, gru = tensorlib._thnn_fused_lstm_cell, tensorlib._thnn_fused_gru_cell
    w = r"\(while checking arguments for _thnn_fused_lstm_cell\)"
    _raises(r"Expected 2-dimensional tensor, but got 1-dimensional tensor for argument #1 "
            r"'input_gates' " + w, lstm, z(8), z(8), z(2, 2))
    _raises(r"Expected tensor for argument #1 'input_gates' to have same size as tensor for "
            r"argument #2 'hidden_gates'; but \[2, 8\] does not equal \[3, 8\] " + w,
            lstm, z(2, 8), z(3, 8), z(2, 2))
    _raises(r"Expected tensor for argument #4 'input_bias' to have 8 elements; but it "
            r"actually has 7 elements " + w, lstm, z(2, 8), z(2, 8), z(2, 2), z(7), z(7))
    _raises(r"Expected tensor for argument #4 'input_bias' to have same size as tensor for "
            r"argument #5 'hidden_bias'", lstm, z(2, 8), z(2, 8), z(2, 2), z(8), z(1, 8))
    _raises(r"Expected 2-dimensional tensor, but got 1-dimensional tensor for argument #3 "
            r"'cx'", lstm, z(2, 8), z(2, 8), z(4))
    _raises(r"Expected tensor for argument #3 'cx' to have 4 elements; but it actually has "
            r"6 elements", lstm, z(2, 8), z(2, 8), z(3, 2))
    _raises(r"Expected tensor for argument #3 'hx' to have 4 elements; but it actually has "
            r"6 elements \(while checking arguments for _thnn_fused_gru_cell\)",
            gru, z(2, 6), z(2, 6), z(3, 2))
    _raises(r"\"_thnn_fused_lstm_cell\" not implemented for 'Half'", lstm,
            z(2, 8, dtype=tensorlib.float16), z(2, 8, dtype=tensorlib.float16),
            z(2, 2, dtype=tensorlib.float16))
    _raises(r"\"_thnn_fused_gru_cell\" not implemented for 'Long'", gru,
            z(2, 6, dtype=tensorlib.int64), z(2, 6, dtype=tensorlib.int64),
            z(2, 2, dtype=tensorlib.int64))
    _raises(r"expected scalar type Float but found Double", lstm, z(2, 8),
            z(2, 8, dtype=tensorlib.float64), z(2, 2))


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_layers_take_the_fused_path(mode, monkeypatch):
    """LSTM/GRU layers and cells in float32/float64 run one fused kernel per step; float16
    keeps the composite arithmetic (the kernels take float32/float64 only)."""
    name = "_thnn_fused_lstm_cell" if mode == "LSTM" else "_thnn_fused_gru_cell"
    calls = []
    real = getattr(tensorlib, name)

    def spy(*a):
        calls.append(a[0].dtype)
        return real(*a)
    monkeypatch.setattr(tensorlib, name, spy)
    layer = getattr(tensorlib.nn, mode)(3, 4, num_layers=2, bidirectional=True)
    layer(tensorlib.zeros(5, 2, 3))
    assert len(calls) == 5 * 2 * 2
    cell = getattr(tensorlib.nn, mode + "Cell")(3, 4)
    cell(tensorlib.zeros(2, 3))
    assert len(calls) == 21
    getattr(tensorlib.nn, mode + "Cell")(3, 4, dtype=tensorlib.float16)(
        tensorlib.zeros(2, 3, dtype=tensorlib.float16))
    assert len(calls) == 21


def test_lstm_layer_double_backward_against_torch():
    """create_graph through the fused LSTM: the gradient of a gradient norm, against torch."""
    ref = torch.nn.LSTM(3, 4, dtype=torch.float64)
    ours = tensorlib.nn.LSTM(3, 4, dtype=tensorlib.float64)
    with tensorlib.no_grad():
        for (n, p), q in zip(ref.named_parameters(), ours.parameters()):
            q.copy_(_ours(p))
    x = torch.randn(4, 2, 3, dtype=torch.float64, requires_grad=True)
    xo = _ours(x, True)
    out = ref(x)[0].pow(2).sum()
    (gx,) = torch.autograd.grad(out, x, create_graph=True)
    gx.pow(2).sum().backward()
    out_o = ours(xo)[0].pow(2).sum()
    (gxo,) = tensorlib.autograd.grad(out_o, xo, create_graph=True)
    gxo.pow(2).sum().backward()
    _close(gxo, gx, "float64")
    _close(xo.grad, x.grad, "float64")
    for p, q in zip(ref.parameters(), ours.parameters()):
        _close(q.grad, p.grad, "float64")


@pytest.mark.parametrize("needs", [(True, True, True), (True, False, False),
                                   (False, True, False), (False, False, True)])
def test_backward_frees_the_node(needs):
    """The one backward pass kept for a node's later inputs is dropped with its last one:
    nothing outlives the graph (gc disabled, so a cycle would keep it), and each needed
    gradient is the one computed with every input requiring grad."""
    import gc
    import weakref
    gen = np.random.default_rng(5)
    vals = [gen.standard_normal(s) for s in ((2, 8), (2, 8), (2, 2))]
    full = [tensorlib.tensor(v, requires_grad=True) for v in vals]
    hy, cy, _ = tensorlib._thnn_fused_lstm_cell(*full)
    (hy.sum() + (2 * cy).sum()).backward()
    was = gc.isenabled()
    gc.disable()
    try:
        part = [tensorlib.tensor(v, requires_grad=n) for v, n in zip(vals, needs)]
        hy, cy, ws = tensorlib._thnn_fused_lstm_cell(*part)
        node = weakref.ref(hy.grad_fn)
        (hy.sum() + (2 * cy).sum()).backward()
        del hy, cy, ws
        assert node() is None
    finally:
        if was:
            gc.enable()
    for p, f, n in zip(part, full, needs):
        if n:
            np.testing.assert_array_equal(_np(p.grad), _np(f.grad))
        else:
            assert p.grad is None
