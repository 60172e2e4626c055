"""The fused nn kernels on a CUDA device (cuda/nn_ops.cu, through tensorlib.cuda._nn): each
op's forward and every gradient on the device against the same op on the CPU (the CPU's C
kernels are the reference: equal within float tolerance, bit for bit where the device sums in
the CPU's order) and against torch where it is a plain call; odd shapes, strides, padding,
dilation, ceil mode, weights / ignore_index / label smoothing, masks; the bad-index errors;
a small CNN and an MLP trained for two steps on the device against the CPU.

Runs on the emulator (conftest: TENSORLIB_CUDA=emulate) and, unchanged, under its checking
mode (TENSORLIB_CUDA_EMU_CHECK=1: shuffled thread orders, guarded memory)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlib
import tensorlib.nn as nn
import tensorlib.nn.functional as F

cuda = tensorlib.cuda
pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="no CUDA device (emulator off)")

TOL = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=1e-10, atol=1e-12)}
DTYPES = ["float32", "float64"]


def _host(t):
    return t.detach().cpu().numpy()


def _leaf(a, dev, grad=True):
    t = tensorlib.tensor(a, device=dev)
    if grad and a.dtype.kind == "f":
        t.requires_grad_(True)
    return t


def both(fn, *arrays, dtype="float64", grad=True, seed=0, exact=False):
    """fn(*tensors) on the CPU and on cuda from the same arrays; the first output (and every
    floating output) compared, then backpropagated with the same random gradient and every
    input gradient compared. Returns the device run's outputs."""
    runs = []
    for dev in ("cpu", "cuda"):
        leaves = [_leaf(a, dev, grad) if isinstance(a, np.ndarray) else a for a in arrays]
        out = fn(*leaves)
        outs = out if isinstance(out, tuple) else (out,)
        res = [_host(o) for o in outs]
        if grad:
            rng = np.random.default_rng(seed + 1)
            seed_g = tensorlib.tensor(rng.standard_normal(outs[0].shape).astype(dtype),
                                      device=dev)
            outs[0].backward(seed_g)
            res += [_host(x.grad) if x.grad is not None else None
                    for x in leaves if isinstance(x, tensorlib.Tensor) and x.requires_grad]
        runs.append(res)
    for c, d in zip(*runs):
        if c is None:
            assert d is None
            continue
        assert c.shape == d.shape and c.dtype == d.dtype
        if exact or c.dtype.kind != "f":
            np.testing.assert_array_equal(d, c)
        else:
            np.testing.assert_allclose(d, c, **TOL[dtype])
    return runs[1]


def rand(rng, *shape, dtype="float64"):
    return rng.standard_normal(shape).astype(dtype)


# ---- convolution: im2col, col2im, bias add/grad ---------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("stride,padding,dilation,groups,bias", [
    (1, 0, 1, 1, True), ((2, 1), (1, 2), (1, 2), 1, True), (3, 2, 2, 2, False),
    ((1, 2), 0, (2, 1), 3, True)])
def test_conv2d_forward_and_gradients(dtype, stride, padding, dilation, groups, bias):
    rng = np.random.default_rng(1)
    x = rand(rng, 2, 6, 9, 7, dtype=dtype)
    w = rand(rng, 6, 6 // groups, 3, 2, dtype=dtype)
    b = rand(rng, 6, dtype=dtype)
    args = (x, w, b) if bias else (x, w)
    both(lambda x, w, b=None: F.conv2d(x, w, b, stride, padding, dilation, groups), *args,
         dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv1d_conv3d_and_transposed(dtype):
    rng = np.random.default_rng(2)
    both(lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2),
         rand(rng, 3, 4, 11, dtype=dtype), rand(rng, 5, 4, 3, dtype=dtype),
         rand(rng, 5, dtype=dtype), dtype=dtype)
    both(lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=(1, 0, 1)),
         rand(rng, 2, 2, 4, 5, 3, dtype=dtype), rand(rng, 3, 2, 2, 3, 2, dtype=dtype),
         rand(rng, 3, dtype=dtype), dtype=dtype)
    both(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1,
                                            dilation=(1, 2)),
         rand(rng, 2, 4, 5, 4, dtype=dtype), rand(rng, 4, 3, 3, 3, dtype=dtype),
         rand(rng, 3, dtype=dtype), dtype=dtype)


def test_conv2d_matches_torch_and_strided_input():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x, w, b = rand(rng, 2, 7, 8, 3), rand(rng, 4, 3, 3, 3), rand(rng, 4)
    xt = torch.tensor(x, requires_grad=True)
    wt, bt = torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)
    ref = torch.nn.functional.conv2d(xt.permute(0, 3, 1, 2), wt, bt, padding=1, stride=(2, 1))
    g = rng.standard_normal(tuple(ref.shape))
    ref.backward(torch.tensor(g))
    xs, ws, bs = (_leaf(a, "cuda") for a in (x, w, b))
    # the input's channels are its last dim: a permuted (non-contiguous) view
    out = F.conv2d(xs.permute(0, 3, 1, 2), ws, bs, padding=1, stride=(2, 1))
    out.backward(tensorlib.tensor(g, device="cuda"))
    np.testing.assert_allclose(_host(out), ref.detach().numpy(), rtol=1e-10, atol=1e-12)
    for ours, theirs in ((xs, xt), (ws, wt), (bs, bt)):
        np.testing.assert_allclose(_host(ours.grad), theirs.grad.numpy(), rtol=1e-10,
                                   atol=1e-12)


@settings(max_examples=6, deadline=None)
@given(n=st.integers(1, 3), c=st.integers(1, 3), h=st.integers(1, 7), w=st.integers(1, 7),
       k=st.integers(1, 3), s=st.integers(1, 3), p=st.integers(0, 1), d=st.integers(1, 2))
def test_conv2d_random_geometry(n, c, h, w, k, s, p, d):
    if h + 2 * p < d * (k - 1) + 1 or w + 2 * p < d * (k - 1) + 1:
        return
    rng = np.random.default_rng(n * 100 + h * 10 + w)
    both(lambda x, wt, b: F.conv2d(x, wt, b, s, p, d), rand(rng, n, c, h, w),
         rand(rng, 2, c, k, k), rand(rng, 2))


# ---- convolution in one launch (CUDABackend.conv_direct, cuda/nn_ops.cu) ------------------------

def _forward(fn, *arrays, dtype):
    """fn on the CPU and on cuda (no gradients); the device's kernels launched meanwhile."""
    from tensorlib.cuda import _ops
    ref = _host(fn(*(tensorlib.tensor(a) for a in arrays)))
    dev = [tensorlib.tensor(a, device="cuda") for a in arrays]
    rt, names = _ops._rt(), []
    orig = rt.launch
    rt.launch = lambda family, name, *args, **kw: (names.append(name),
                                                   orig(family, name, *args, **kw))[1]
    try:
        out = _host(fn(*dev))
    finally:
        del rt.launch
    assert out.shape == ref.shape and out.dtype == ref.dtype
    # float32 sums in float (the CPU's GEMM in its own order): cancellation needs an atol
    np.testing.assert_allclose(out, ref, **({"float32": dict(rtol=1e-5, atol=1e-5),
                                            "float64": dict(rtol=1e-12, atol=1e-12)}[dtype]))
    return names


DIRECT = {"float32": ["tl_nn_conv_direct_f32"], "float64": ["tl_nn_conv_direct_f64"]}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("stride,padding,dilation,groups,bias", [
    (1, 0, 1, 1, False), (1, 1, 1, 1, True), ((2, 1), (1, 2), (1, 2), 1, True),
    (3, 2, 2, 2, False), ((1, 2), 0, (2, 1), 3, True), (2, (0, 3), 1, 6, True)])
def test_conv2d_direct_is_one_launch(dtype, stride, padding, dilation, groups, bias):
    rng = np.random.default_rng(11)
    x, b = rand(rng, 3, 6, 9, 7, dtype=dtype), rand(rng, 6, dtype=dtype)
    w = rand(rng, 6, 6 // groups, 3, 2, dtype=dtype)         # at most 6 * 6 = 36 taps
    args = (x, w, b) if bias else (x, w)
    names = _forward(lambda x, w, b=None: F.conv2d(x, w, b, stride, padding, dilation, groups),
                     *args, dtype=dtype)
    assert names == DIRECT[dtype]                            # bias included, nothing else


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index64", [False, True])
def test_conv1d_conv3d_direct(dtype, index64, monkeypatch):
    from tensorlib.cuda import _nn
    if index64:                                  # the kernel's 64-bit index math
        monkeypatch.setattr(_nn, "CONV_DIRECT_INT32", 0)
    rng = np.random.default_rng(12)
    names = _forward(lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=3, dilation=2,
                                              groups=2),
                     rand(rng, 3, 8, 13, dtype=dtype), rand(rng, 4, 4, 5, dtype=dtype),
                     rand(rng, 4, dtype=dtype), dtype=dtype)
    assert names == DIRECT[dtype]
    names = _forward(lambda x, w: F.conv3d(x, w, None, stride=(1, 2, 1), padding=(1, 0, 2),
                                           dilation=(2, 1, 1)),
                     rand(rng, 2, 2, 5, 6, 4, dtype=dtype), rand(rng, 3, 2, 2, 3, 2,
                                                                  dtype=dtype), dtype=dtype)
    assert names == DIRECT[dtype]


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv_direct_threshold_and_empty(dtype):
    from tensorlib.cuda import _nn
    rng = np.random.default_rng(13)
    fn = lambda x, w, b: F.conv2d(x, w, b, padding=1)  # noqa: E731
    taps = _nn.CONV_DIRECT_TAPS
    # exactly at the threshold: one launch; one tap more: im2col + GEMM + copy + bias
    x, w = rand(rng, 2, taps // 4, 5, 6, dtype=dtype), rand(rng, 3, taps // 4, 2, 2, dtype=dtype)
    assert _forward(fn, x, w, rand(rng, 3, dtype=dtype), dtype=dtype) == DIRECT[dtype]
    x, w = rand(rng, 2, taps + 1, 5, 6, dtype=dtype), rand(rng, 3, taps + 1, 1, 1, dtype=dtype)
    names = _forward(fn, x, w, rand(rng, 3, dtype=dtype), dtype=dtype)
    assert len(names) > 1 and not any("conv_direct" in n for n in names)
    assert any("im2col" in n for n in names)
    # an empty batch launches nothing; no input channels give the bias alone
    assert _forward(fn, rand(rng, 0, 3, 5, 6, dtype=dtype), rand(rng, 4, 3, 3, 3, dtype=dtype),
                    rand(rng, 4, dtype=dtype), dtype=dtype) == []
    x, w = np.zeros((2, 0, 4, 4), dtype), np.zeros((3, 0, 3, 3), dtype)
    assert _forward(fn, x, w, rand(rng, 3, dtype=dtype), dtype=dtype) == DIRECT[dtype]


def test_conv_direct_leaves_cpu_and_meta_alone():
    # CPU and meta keep im2col + GEMM: meta's estimate still holds the column matrix
    # [3*9, 2*36] (a CPU run's memory), the direct kernel allocates nothing but the output
    rng = np.random.default_rng(14)
    x, w = rand(rng, 2, 3, 8, 8, dtype="float32"), rand(rng, 4, 3, 3, 3, dtype="float32")
    out_b, cols_b = 2 * 4 * 36 * 4, 27 * 72 * 4
    est = tensorlib.memory.estimate(lambda x, w: F.conv2d(x, w), tensorlib.tensor(x),
                                    tensorlib.tensor(w))
    assert est.peak_bytes - est.inputs_bytes >= out_b + cols_b
    xd, wd = tensorlib.tensor(x, device="cuda"), tensorlib.tensor(w, device="cuda")
    cuda.synchronize()
    base = cuda.memory_allocated()
    cuda.reset_max_memory_allocated()
    out = F.conv2d(xd, wd)
    assert cuda.max_memory_allocated() - base < cols_b
    torch = pytest.importorskip("torch")
    ref = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w)).numpy()
    for got in (_host(out), _host(F.conv2d(tensorlib.tensor(x), tensorlib.tensor(w)))):
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_forward_and_gradients(dtype):
    rng = np.random.default_rng(4)
    both(lambda x, w, b: F.linear(x, w, b), rand(rng, 3, 5, 7, dtype=dtype),
         rand(rng, 4, 7, dtype=dtype), rand(rng, 4, dtype=dtype), dtype=dtype)


# ---- pooling -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k,s,p,d,ceil", [(2, None, 0, 1, False), (3, 2, 1, 1, True),
                                          ((3, 2), (1, 2), (1, 0), (2, 1), False),
                                          (2, 3, 1, 2, True)])
def test_max_pool2d_values_indices_and_gradient(dtype, k, s, p, d, ceil):
    rng = np.random.default_rng(5)
    x = rand(rng, 2, 3, 9, 8, dtype=dtype)
    out, idx = both(lambda x: F.max_pool2d(x, k, s, p, d, ceil_mode=ceil, return_indices=True),
                    x, dtype=dtype, exact=True)[:2]
    torch = pytest.importorskip("torch")
    r, ri = torch.nn.functional.max_pool2d(torch.tensor(x), k, s, p, d, ceil_mode=ceil,
                                           return_indices=True)
    np.testing.assert_array_equal(out, r.numpy())
    np.testing.assert_array_equal(idx, ri.numpy())


def test_max_pool_nan_propagates_and_ties_take_the_first():
    x = np.array([[[[1.0, 1.0, np.nan, 2.0], [0.0, 1.0, 3.0, 3.0]]]])
    out, idx = both(lambda x: F.max_pool2d(x, 2, return_indices=True), x, grad=False,
                    exact=True)
    assert idx.ravel().tolist() == [0, 2]
    assert out[0, 0, 0, 0] == 1.0 and np.isnan(out[0, 0, 0, 1])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k,s,p,ceil,cip,div", [(2, None, 0, False, True, None),
                                                (3, 2, 1, True, False, None),
                                                ((3, 2), (2, 1), (1, 1), True, True, None),
                                                (3, 2, 1, False, True, 5)])
def test_avg_pool2d_forward_and_gradient(dtype, k, s, p, ceil, cip, div):
    rng = np.random.default_rng(6)
    x = rand(rng, 2, 3, 7, 8, dtype=dtype)
    fn = lambda x: F.avg_pool2d(x, k, s, p, ceil, cip, div)  # noqa: E731
    out = both(fn, x, dtype=dtype)[0]
    torch = pytest.importorskip("torch")
    ref = torch.nn.functional.avg_pool2d(torch.tensor(x), k, s, p, ceil, cip, div)
    np.testing.assert_allclose(out, ref.numpy(), **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size,out", [((7, 5), (3, 2)), ((4, 4), (7, 5)), ((6, 9), (1, 1)),
                                      ((5, 6), (5, 4))])
def test_adaptive_pools_forward_and_gradient(dtype, size, out):
    rng = np.random.default_rng(7)
    x = rand(rng, 2, 3, *size, dtype=dtype)
    both(lambda x: F.adaptive_avg_pool2d(x, out), x, dtype=dtype)
    both(lambda x: F.adaptive_max_pool2d(x, out, return_indices=True), x, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_max_unpool_and_its_bad_index(dtype):
    # (its backward is a gather: advanced indexing, not an nn kernel)
    rng = np.random.default_rng(8)
    x = rand(rng, 2, 3, 6, 8, dtype=dtype)
    pooled = {}
    for dev in ("cpu", "cuda"):
        y, i = F.max_pool2d(tensorlib.tensor(x, device=dev), 2, return_indices=True)
        pooled[dev] = (y, i)
    both(lambda y: F.max_unpool2d(y, pooled["cuda" if y.is_cuda else "cpu"][1], 2),
         _host(pooled["cpu"][0]), dtype=dtype, grad=False, exact=True)
    bad = pooled["cuda"][1].clone()
    bad[0, 1, 0, 0] = 999
    with pytest.raises(RuntimeError, match="Found an invalid max index: 999"):
        F.max_unpool2d(pooled["cuda"][0], bad, 2)


# ---- normalization -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_forward_gradients_and_running_stats(dtype, training, affine):
    rng = np.random.default_rng(9)
    x = rand(rng, 3, 4, 5, 3, dtype=dtype)
    rm0, rv0 = rand(rng, 4, dtype=dtype), np.abs(rand(rng, 4, dtype=dtype)) + 0.5
    stats = {}

    def fn(x, w=None, b=None):
        dev = "cuda" if x.is_cuda else "cpu"
        rm, rv = tensorlib.tensor(rm0, device=dev), tensorlib.tensor(rv0, device=dev)
        stats[dev] = (rm, rv)
        return F.batch_norm(x, rm, rv, w, b, training=training, momentum=0.3, eps=1e-4)
    args = (x, rand(rng, 4, dtype=dtype), rand(rng, 4, dtype=dtype)) if affine else (x,)
    both(fn, *args, dtype=dtype)
    for c, d in zip(stats["cpu"], stats["cuda"]):
        np.testing.assert_allclose(_host(d), _host(c), **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_and_group_norm(dtype, affine):
    rng = np.random.default_rng(10)
    x = rand(rng, 3, 5, 6, dtype=dtype)
    la = (rand(rng, 5, 6, dtype=dtype), rand(rng, 5, 6, dtype=dtype)) if affine else ()
    both(lambda x, w=None, b=None: F.layer_norm(x, (5, 6), w, b, eps=1e-3), x, *la,
         dtype=dtype)
    x = rand(rng, 2, 6, 4, 3, dtype=dtype)
    ga = (rand(rng, 6, dtype=dtype), rand(rng, 6, dtype=dtype)) if affine else ()
    both(lambda x, w=None, b=None: F.group_norm(x, 3, w, b, eps=1e-4), x, *ga, dtype=dtype)


def test_layer_norm_weight_gradients_over_many_rows_and_columns():
    # more rows than the weight-gradient kernel's row lanes, columns over two blocks
    rng = np.random.default_rng(22)
    both(lambda x, w, b: F.layer_norm(x, (45,), w, b), rand(rng, 41, 45), rand(rng, 45),
         rand(rng, 45))


def test_layer_norm_long_rows_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(11)
    x, w, b = rand(rng, 4, 700), rand(rng, 700), rand(rng, 700)
    out = both(lambda x, w, b: F.layer_norm(x, (700,), w, b), x, w, b)[0]
    ref = torch.nn.functional.layer_norm(torch.tensor(x), (700,), torch.tensor(w),
                                         torch.tensor(b))
    np.testing.assert_allclose(out, ref.numpy(), rtol=1e-10, atol=1e-12)


# ---- recurrent cells -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias", [True, False])
def test_fused_lstm_and_gru_cells(dtype, bias):
    rng = np.random.default_rng(12)
    B, H = 3, 5
    lb = (rand(rng, 4 * H, dtype=dtype), rand(rng, 4 * H, dtype=dtype)) if bias else ()
    both(lambda ig, hg, cx, ib=None, hb=None:
         tensorlib._thnn_fused_lstm_cell(ig, hg, cx, ib, hb)[:2],
         rand(rng, B, 4 * H, dtype=dtype), rand(rng, B, 4 * H, dtype=dtype),
         rand(rng, B, H, dtype=dtype), *lb, dtype=dtype)

    def lstm_both(ig, hg, cx, ib=None, hb=None):
        hy, cy, _ = tensorlib._thnn_fused_lstm_cell(ig, hg, cx, ib, hb)
        return hy * 2 + cy.sin()
    both(lstm_both, rand(rng, B, 4 * H, dtype=dtype), rand(rng, B, 4 * H, dtype=dtype),
         rand(rng, B, H, dtype=dtype), *lb, dtype=dtype)
    gb = (rand(rng, 3 * H, dtype=dtype), rand(rng, 3 * H, dtype=dtype)) if bias else ()
    both(lambda ig, hg, hx, ib=None, hb=None:
         tensorlib._thnn_fused_gru_cell(ig, hg, hx, ib, hb)[0],
         rand(rng, B, 3 * H, dtype=dtype), rand(rng, B, 3 * H, dtype=dtype),
         rand(rng, B, H, dtype=dtype), *gb, dtype=dtype)


def test_lstm_and_gru_layers_on_the_device():
    for cls in (nn.LSTM, nn.GRU):
        tensorlib.manual_seed(0)
        cpu = cls(4, 6, num_layers=2, batch_first=True).double()
        dev = cls(4, 6, num_layers=2, batch_first=True).double()
        dev.load_state_dict(cpu.state_dict())
        dev.to("cuda")
        x = np.random.default_rng(13).standard_normal((3, 5, 4))
        for m, d in ((cpu, "cpu"), (dev, "cuda")):
            out = m(tensorlib.tensor(x, device=d))[0]
            out.sum().backward()
        np.testing.assert_allclose(_host(dev(tensorlib.tensor(x, device="cuda"))[0]),
                                   _host(cpu(tensorlib.tensor(x))[0]), rtol=1e-10, atol=1e-12)
        for (name, p), q in zip(cpu.named_parameters(), dev.parameters()):
            np.testing.assert_allclose(_host(q.grad), _host(p.grad), rtol=1e-10, atol=1e-12,
                                       err_msg=name)


# ---- cross entropy -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted,ignore,smoothing", [(False, -100, 0.0), (True, 2, 0.0),
                                                       (True, -100, 0.2), (False, 1, 0.1)])
def test_cross_entropy_forward_and_gradient(dtype, reduction, weighted, ignore, smoothing):
    rng = np.random.default_rng(14)
    N, C = 7, 5
    x = rand(rng, N, C, dtype=dtype)
    t = rng.integers(0, C, N)
    t[3] = ignore if ignore >= 0 else t[3]
    w = np.abs(rand(rng, C, dtype=dtype)) + 0.1

    def fn(x, w=None):
        tt = tensorlib.tensor(t, device="cuda" if x.is_cuda else "cpu")
        # a class weight that needs no gradient: the fused kernel's case
        w = None if w is None else w.detach()
        return F.cross_entropy(x, tt, weight=w, ignore_index=ignore, reduction=reduction,
                               label_smoothing=smoothing)
    out = both(fn, x, *((w,) if weighted else ()), dtype=dtype)[0]
    torch = pytest.importorskip("torch")
    ref = torch.nn.functional.cross_entropy(
        torch.tensor(x), torch.tensor(t), weight=torch.tensor(w) if weighted else None,
        ignore_index=ignore, reduction=reduction, label_smoothing=smoothing)
    np.testing.assert_allclose(out, ref.numpy(), **TOL[dtype])


def test_cross_entropy_long_rows_and_bad_target():
    rng = np.random.default_rng(15)
    x = rand(rng, 3, 1000)
    t = np.array([5, 999, 0])
    both(lambda x: F.cross_entropy(x, tensorlib.tensor(t, device=x.device)), x)
    xs = tensorlib.tensor(x[:, :4], device="cuda")
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        F.cross_entropy(xs, tensorlib.tensor(t, device="cuda"))


# ---- masked softmax ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mask_kind,causal", [(None, True), ("bool", False), ("float", True),
                                              ("bool", True)])
def test_masked_softmax_forward_and_gradient(dtype, mask_kind, causal):
    rng = np.random.default_rng(16)
    s = rand(rng, 2, 3, 4, 6, dtype=dtype)
    mask = None
    if mask_kind == "bool":
        mask = rng.random((4, 6)) > 0.3
        mask[1] = False          # a dead row
    elif mask_kind == "float":
        mask = rand(rng, 2, 1, 4, 6, dtype=dtype)

    def fn(s):
        m = None if mask is None else tensorlib.tensor(mask, device=s.device)
        return tensorlib._nn_masked_softmax(s, m, 0.7, causal, True)
    both(fn, s, dtype=dtype)


def test_sdpa_and_multihead_attention_on_the_device():
    rng = np.random.default_rng(17)
    q, k, v = rand(rng, 2, 2, 5, 4), rand(rng, 2, 2, 7, 4), rand(rng, 2, 2, 7, 4)
    both(lambda q, k, v: F.scaled_dot_product_attention(q, k, v), q, k, v)
    both(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), q, k, v)


# ---- whole models --------------------------------------------------------------------------

def _train_twice(make, x, t, loss_fn):
    """Two SGD steps of a model on the CPU and a copy on cuda; returns both models."""
    tensorlib.manual_seed(0)
    cpu = make().double()
    dev = make().double()
    dev.load_state_dict(cpu.state_dict())
    dev.to("cuda")
    for m, d in ((cpu, "cpu"), (dev, "cuda")):
        m.train()
        for _ in range(2):
            m.zero_grad()
            loss = loss_fn(m(tensorlib.tensor(x, device=d)), tensorlib.tensor(t, device=d))
            loss.backward()
            with tensorlib.no_grad():
                for p in m.parameters():
                    p -= 0.1 * p.grad
    return cpu, dev


def _same_state(cpu, dev):
    for (name, a), b in zip(cpu.state_dict().items(), dev.state_dict().values()):
        np.testing.assert_allclose(_host(b), _host(a), rtol=1e-9, atol=1e-11, err_msg=name)


def test_small_cnn_train_step_matches_the_cpu():
    rng = np.random.default_rng(18)
    x = rng.standard_normal((4, 3, 10, 9))
    t = rng.integers(0, 5, 4)

    def make():
        return nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Conv2d(6, 8, 3, stride=2, groups=2),
                             nn.AvgPool2d(2, ceil_mode=True), nn.AdaptiveAvgPool2d(1),
                             nn.Flatten(), nn.Linear(8, 5))
    cpu, dev = _train_twice(make, x, t, F.cross_entropy)
    _same_state(cpu, dev)


def test_mlp_train_step_matches_the_cpu():
    rng = np.random.default_rng(19)
    x = rng.standard_normal((6, 12))
    t = rng.integers(0, 4, 6)

    def make():
        return nn.Sequential(nn.Linear(12, 16), nn.LayerNorm(16), nn.GELU(), nn.Linear(16, 4))
    cpu, dev = _train_twice(make, x, t,
                            lambda y, t: F.cross_entropy(y, t, label_smoothing=0.1))
    _same_state(cpu, dev)


def test_results_are_deterministic():
    rng = np.random.default_rng(20)
    x = tensorlib.tensor(rand(rng, 8, 300, dtype="float32"), device="cuda")
    t = tensorlib.tensor(rng.integers(0, 300, 8), device="cuda")
    a = [_host(F.cross_entropy(x, t)), _host(F.layer_norm(x, (300,))),
         _host(F.batch_norm(x, None, None, training=True))]
    b = [_host(F.cross_entropy(x, t)), _host(F.layer_norm(x, (300,))),
         _host(F.batch_norm(x, None, None, training=True))]
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


def test_integer_inputs_raise_as_on_the_cpu():
    x = tensorlib.ones(1, 1, 4, 4, dtype=tensorlib.int64, device="cuda")
    with pytest.raises(RuntimeError, match="not implemented for 'Long'"):
        F.max_pool2d(x, 2)


def test_empty_inputs():
    rng = np.random.default_rng(21)
    x = rand(rng, 0, 3, 5, 5)
    both(lambda x, w: F.conv2d(x, w), x, rand(rng, 4, 3, 3, 3))
    both(lambda x: F.max_pool2d(x, 2), x)
    both(lambda x: F.avg_pool2d(x, 2), x)
    both(lambda x: F.adaptive_avg_pool2d(x, 3), x)
    both(lambda x: F.layer_norm(x, (5,)), rand(rng, 0, 5))
    both(lambda x: F.group_norm(x, 1), rand(rng, 0, 3, 2))
    t = np.zeros(0, np.int64)
    for reduction in ("mean", "sum", "none"):
        both(lambda x: F.cross_entropy(x, tensorlib.tensor(t, device=x.device),
                                       reduction=reduction), rand(rng, 0, 3), grad=False)
