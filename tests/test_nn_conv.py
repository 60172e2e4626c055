"""Convolution and transposed convolution (the declared ``convolution`` op and the functional
conv1d/2d/3d, conv_transpose1d/2d/3d) against PyTorch: forward and every gradient on the
same inputs and weights, gradcheck in float64, meta shapes, error messages, thread count."""
import gc
import weakref

import numpy as np
import pytest

import tensorlib
import tensorlib.nn._functional_kernels as K
from tensorlib._core import tensor as _core

torch = pytest.importorskip("torch")
F = torch.nn.functional

TOL = {torch.float32: 1e-5, torch.float64: 1e-10}
TL_DT = {torch.float32: tensorlib.float32, torch.float64: tensorlib.float64}


def tl_of(t, grad=False):
    out = tensorlib.tensor(t.detach().numpy())
    return out.requires_grad_() if grad else out


def close(ours, ref, dtype):
    a = np.asarray(ours.tolist(), dtype=np.float64)
    b = ref.detach().double().numpy()
    assert a.shape == b.shape
    scale = max(1.0, float(np.abs(b).max()) if b.size else 1.0)
    np.testing.assert_allclose(a, b, rtol=TOL[dtype], atol=TOL[dtype] * scale)


# (input shape, weight shape, stride, padding, dilation, groups, transposed, output_padding)
CASES = [
    ((2, 3, 7, 6), (4, 3, 3, 2), 1, 0, 1, 1, False, 0),
    ((3, 4, 9, 8), (6, 2, 3, 3), (2, 1), (1, 2), (2, 1), 2, False, 0),
    ((2, 4, 8, 8), (4, 1, 3, 3), 1, 1, 1, 4, False, 0),              # depthwise
    ((2, 4, 8, 8), (8, 1, 3, 3), 2, 1, 1, 4, False, 0),              # depthwise, multiplier 2
    ((1, 3, 5, 5), (2, 3, 1, 1), 1, 0, 1, 1, False, 0),              # 1x1
    ((2, 4, 9), (4, 1, 3), 2, 1, 1, 4, False, 0),                     # 1-D
    ((2, 3, 11), (5, 3, 4), 3, 2, 2, 1, False, 0),
    ((2, 2, 5, 4, 6), (3, 2, 2, 3, 2), (1, 2, 1), (1, 0, 1), (1, 1, 2), 1, False, 0),   # 3-D
    ((2, 4, 5, 6), (4, 3, 3, 3), 2, 1, 1, 2, True, (1, 0)),          # transposed 2-D
    ((2, 3, 7), (3, 2, 3), 3, 1, 2, 1, True, 2),                      # transposed 1-D
    ((2, 2, 3, 4, 3), (2, 2, 2, 2, 3), (2, 1, 2), (0, 1, 1), 1, 1, True, (1, 0, 0)),
    ((1, 4, 4, 4), (4, 1, 3, 3), 2, 0, 1, 4, True, 1),               # transposed depthwise
]


def _per_dim(v, k):
    return list(v) if isinstance(v, tuple) else [v] * k


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("case", CASES)
def test_convolution_forward_and_grads_match_torch(case, dtype):
    xs, ws, st, pd, dl, g, tr, op = case
    k = len(xs) - 2
    st, pd, dl, op = (_per_dim(v, k) for v in (st, pd, dl, op))
    gen = torch.Generator().manual_seed(hash(case) % 1000)
    x = torch.randn(*xs, dtype=dtype, generator=gen, requires_grad=True)
    w = torch.randn(*ws, dtype=dtype, generator=gen, requires_grad=True)
    cout = ws[1] * g if tr else ws[0]
    b = torch.randn(cout, dtype=dtype, generator=gen, requires_grad=True)
    y = torch.convolution(x, w, b, st, pd, dl, tr, op, g)
    gy = torch.randn(y.shape, dtype=dtype, generator=gen)
    y.backward(gy)
    xx, ww, bb = tl_of(x, True), tl_of(w, True), tl_of(b, True)
    yy = tensorlib.convolution(xx, ww, bb, st, pd, dl, tr, op, g)
    assert type(yy.grad_fn).__name__ == "ConvolutionBackward0"
    assert yy.dtype == TL_DT[dtype]
    yy.backward(tl_of(gy))
    close(yy, y, dtype)
    close(xx.grad, x.grad, dtype)
    close(ww.grad, w.grad, dtype)
    close(bb.grad, b.grad, dtype)


def test_functional_forms_match_torch():
    gen = torch.Generator().manual_seed(1)
    r = lambda *s: torch.randn(*s, dtype=torch.float64, generator=gen)  # noqa: E731
    x1, x2, x3 = r(2, 4, 10), r(2, 4, 7, 6), r(1, 2, 4, 5, 4)
    checks = [
        (F.conv1d, K.conv1d, (x1, r(6, 2, 3), r(6)), dict(stride=2, padding=1, groups=2)),
        (F.conv2d, K.conv2d, (x2, r(3, 4, 3, 2)), dict(dilation=(2, 1), padding=(1, 0))),
        (F.conv2d, K.conv2d, (x2[0], r(3, 4, 3, 3)), dict(padding=1)),   # unbatched
        (F.conv3d, K.conv3d, (x3, r(2, 2, 2, 2, 2), r(2)), dict(padding=1)),
        (F.conv_transpose1d, K.conv_transpose1d, (x1, r(4, 3, 3)),
         dict(stride=2, output_padding=1)),
        (F.conv_transpose2d, K.conv_transpose2d, (x2, r(4, 2, 3, 3), r(4)),
         dict(stride=2, padding=1, groups=2, dilation=2)),
        (F.conv_transpose2d, K.conv_transpose2d, (x2[1], r(4, 1, 2, 2)), dict(stride=2)),
        (F.conv_transpose3d, K.conv_transpose3d, (x3, r(2, 3, 2, 2, 2)), dict(stride=2)),
    ]
    for ref, ours, args, kw in checks:
        close(ours(*[tl_of(a) for a in args], **kw), ref(*args, **kw), torch.float64)


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("k, d", [(3, 1), (4, 1), (2, 3), (5, 2)])
def test_padding_same_and_valid(k, d):
    gen = torch.Generator().manual_seed(k * 10 + d)
    x = torch.randn(2, 3, 9, 8, dtype=torch.float64, generator=gen, requires_grad=True)
    w = torch.randn(4, 3, k, k - 1 if k > 2 else k, dtype=torch.float64, generator=gen,
                    requires_grad=True)
    for padding in ("same", "valid"):
        y = F.conv2d(x, w, padding=padding, dilation=d)
        gy = torch.randn(y.shape, dtype=torch.float64, generator=gen)
        x.grad = w.grad = None
        y.backward(gy)
        xx, ww = tl_of(x, True), tl_of(w, True)
        yy = K.conv2d(xx, ww, padding=padding, dilation=d)
        yy.backward(tl_of(gy))
        close(yy, y, torch.float64)
        close(xx.grad, x.grad, torch.float64)
        close(ww.grad, w.grad, torch.float64)
    y1 = F.conv1d(x[:, :, 0], w[:, :, 0], padding="same")
    close(K.conv1d(tl_of(x[:, :, 0]), tl_of(w[:, :, 0]), padding="same"), y1, torch.float64)


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_padding_modes_match_torch_pad(mode):
    x = torch.randn(2, 3, 5, 4, dtype=torch.float64, requires_grad=True)
    pads = [2, 1, 1, 3]
    ref = F.pad(x, pads, mode="constant" if mode == "zeros" else mode)
    gy = torch.randn(ref.shape, dtype=torch.float64)
    ref.backward(gy)
    xx = tl_of(x, True)
    out = K.pad_for_conv(xx, pads, mode)
    out.backward(tl_of(gy))
    close(out, ref, torch.float64)
    close(xx.grad, x.grad, torch.float64)


def test_gradcheck_float64():
    gen = torch.Generator().manual_seed(3)
    for tr in (False, True):
        x = tl_of(torch.randn(2, 4, 4, 5, dtype=torch.float64, generator=gen), True)
        w = tl_of(torch.randn(4, 2, 2, 3, dtype=torch.float64, generator=gen), True)
        b = tl_of(torch.randn(4 if tr else 4, dtype=torch.float64, generator=gen), True)
        fn = lambda x, w, b: tensorlib.convolution(  # noqa: E731
            x, w, b, [2, 1], [1, 0], [1, 2], tr, [1, 0] if tr else [0, 0], 2)
        assert tensorlib.autograd.gradcheck(fn, (x, w, b))


def test_double_backward():
    """convolution_backward is differentiable: gradgradcheck in float64, and a gradient
    penalty's gradients match PyTorch's."""
    gen = torch.Generator().manual_seed(8)
    for tr in (False, True):
        x = tl_of(torch.randn(2, 4, 4, 5, dtype=torch.float64, generator=gen), True)
        w = tl_of(torch.randn(4, 2, 2, 3, dtype=torch.float64, generator=gen), True)
        b = tl_of(torch.randn(4, dtype=torch.float64, generator=gen), True)
        fn = lambda x, w, b: tensorlib.convolution(  # noqa: E731
            x, w, b, [2, 1], [1, 0], [1, 2], tr, [1, 0] if tr else [0, 0], 2)
        assert tensorlib.autograd.gradgradcheck(fn, (x, w, b))
    x = torch.randn(2, 3, 6, 6, dtype=torch.float64, generator=gen, requires_grad=True)
    w = torch.randn(4, 3, 3, 3, dtype=torch.float64, generator=gen, requires_grad=True)
    b = torch.randn(4, dtype=torch.float64, generator=gen, requires_grad=True)
    xx, ww, bb = tl_of(x, True), tl_of(w, True), tl_of(b, True)
    for lib, (p, q, r) in ((torch, (x, w, b)), (tensorlib, (xx, ww, bb))):
        y = lib.convolution(p, q, r, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
        gx, gw = lib.autograd.grad((y * y).sum(), (p, q), create_graph=True)
        ((gx * gx).sum() + (gw * gw).sum()).backward()
    for a, r in ((xx.grad, x.grad), (ww.grad, w.grad), (bb.grad, b.grad)):
        close(a, r, torch.float64)


def test_batch_chunks_give_the_same_result():
    """A small column budget splits the batch into chunks (grad_weight then accumulates
    over chunks); the results equal the single-chunk ones."""
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(5, 4, 6, 6, dtype=torch.float64, generator=gen)
    w = torch.randn(6, 2, 3, 3, dtype=torch.float64, generator=gen)
    gy1 = torch.randn(5, 6, 4, 4, dtype=torch.float64, generator=gen)
    gy2 = torch.randn(5, 4, 8, 8, dtype=torch.float64, generator=gen)
    runs = []
    old = _core._nn_cols_bytes(None)
    try:
        for budget in (old, 8 * 4 * 9 * 16 * 2):      # about two samples per chunk
            _core._nn_cols_bytes(budget)
            out = []
            for tr, gy in ((False, gy1), (True, gy2)):
                xx = tl_of(x if not tr else x[:, :4], True)
                ww = tl_of(w if not tr else w[:4], True)
                yy = tensorlib.convolution(xx, ww, None, [1, 1], [0, 0], [1, 1], tr, [0, 0], 2)
                yy.backward(tl_of(gy))
                out += [np.asarray(t.tolist()) for t in (yy, xx.grad, ww.grad)]
            runs.append(out)
    finally:
        _core._nn_cols_bytes(old)
    for a, b in zip(*runs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    y = F.conv2d(x, w, groups=2)
    close(tensorlib.tensor(runs[1][0]), y, torch.float64)


def test_results_do_not_depend_on_thread_count():
    gen = torch.Generator().manual_seed(5)
    x = tl_of(torch.randn(4, 8, 24, 24, generator=gen), True)
    w = tl_of(torch.randn(8, 4, 3, 3, generator=gen), True)
    gy = tl_of(torch.randn(4, 8, 22, 22, generator=gen))
    old = tensorlib.get_num_threads()
    res = []
    try:
        for n in (1, 2, 3):
            tensorlib.set_num_threads(n)
            x.grad = w.grad = None
            y = tensorlib.convolution(x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 2)
            y.backward(gy)
            res.append([y.detach().numpy().copy(), x.grad.numpy().copy()])
    finally:
        tensorlib.set_num_threads(old)
    for r in res[1:]:
        for a, b in zip(res[0], r):
            assert np.array_equal(a, b)


@pytest.mark.parametrize("case", CASES)
def test_meta_shapes(case):
    xs, ws, st, pd, dl, g, tr, op = case
    k = len(xs) - 2
    st, pd, dl, op = (_per_dim(v, k) for v in (st, pd, dl, op))
    y = torch.convolution(torch.empty(xs, device="meta"), torch.empty(ws, device="meta"), None,
                          st, pd, dl, tr, op, g)
    x = tensorlib.empty(xs, device="meta", requires_grad=True)
    w = tensorlib.empty(ws, device="meta", requires_grad=True)
    yy = tensorlib.convolution(x, w, None, st, pd, dl, tr, op, g)
    assert yy.device.type == "meta" and tuple(yy.shape) == tuple(y.shape)
    yy.sum().backward()
    assert tuple(x.grad.shape) == xs and tuple(w.grad.shape) == ws


def _same_error(ref, ours):
    with pytest.raises(Exception) as e_ref:
        ref()
    with pytest.raises(type(e_ref.value)) as e_ours:
        ours()
    # (our Size prints as tensorlib.Size where PyTorch's prints torch.Size)
    assert str(e_ours.value).replace("tensorlib.Size", "torch.Size") == str(e_ref.value)


@pytest.mark.parametrize("xs, ws, kw", [
    ((8, 4, 32, 32), (64, 3, 3, 3), {}),
    ((1, 3, 2, 2), (64, 3, 3, 3), {}),
    ((1, 3, 5, 5), (64, 3, 3, 3), dict(padding=-1)),
    ((1, 3, 5, 5), (64, 3, 3, 3), dict(stride=0)),
    ((1, 3, 5, 5), (64, 3, 3, 3), dict(dilation=0)),
    ((1, 4, 5, 5), (6, 2, 3, 3), dict(groups=3)),
    ((1, 6, 5, 5), (4, 2, 3, 3), dict(groups=3)),
    ((1, 3, 5, 5), (2, 3, 3, 3), dict(groups=0)),
    ((5, 5), (64, 3, 3, 3), {}),
    ((1, 3, 5, 5), (64, 3, 3, 3), dict(padding="same", stride=2)),
    ((1, 3, 5, 5), (64, 3, 3, 3), dict(padding="foo")),
])
def test_conv2d_errors_match_torch(xs, ws, kw):
    _same_error(lambda: F.conv2d(torch.randn(xs), torch.randn(ws), **kw),
                lambda: K.conv2d(tensorlib.randn(xs), tensorlib.randn(ws), **kw))


def test_other_errors_match_torch():
    tx, tw = torch.randn(1, 3, 5, 5), torch.randn(64, 3, 3, 3)
    x, w = tl_of(tx), tl_of(tw)
    _same_error(lambda: F.conv2d(tx.double(), tw), lambda: K.conv2d(x.double(), w))
    _same_error(lambda: F.conv2d(tx, tw, torch.randn(3)),
                lambda: K.conv2d(x, w, tensorlib.randn(3)))
    _same_error(lambda: F.conv2d(tx, tw, torch.randn(64).double()),
                lambda: K.conv2d(x, w, tensorlib.randn(64).double()))
    _same_error(lambda: F.conv1d(torch.randn(1, 3, 5), torch.randn(2, 3, 3, 3)),
                lambda: tensorlib.convolution(tensorlib.randn(1, 3, 5), tensorlib.randn(2, 3, 3, 3),
                                              None, [1], [0], [1], False, [0], 1))
    _same_error(lambda: torch.convolution(tx, tw, None, [1, 1, 1], [0, 0], [1, 1], False,
                                          [0, 0], 1),
                lambda: tensorlib.convolution(x, w, None, [1, 1, 1], [0, 0], [1, 1], False,
                                              [0, 0], 1))
    for k, fr, fo in ((1, F.conv_transpose1d, K.conv_transpose1d),
                      (2, F.conv_transpose2d, K.conv_transpose2d),
                      (3, F.conv_transpose3d, K.conv_transpose3d)):
        xs, ws = (1, 4) + (5,) * k, (4, 4) + (3,) * k
        _same_error(lambda: fr(torch.randn(xs), torch.randn(ws), output_padding=1),
                    lambda: fo(tensorlib.randn(xs), tensorlib.randn(ws), output_padding=1))
    _same_error(lambda: F.conv_transpose2d(torch.randn(1, 3, 5, 5), torch.randn(4, 2, 3, 3)),
                lambda: K.conv_transpose2d(tensorlib.randn(1, 3, 5, 5),
                                           tensorlib.randn(4, 2, 3, 3)))


def test_no_reference_cycles():
    was = gc.isenabled()
    gc.disable()
    try:
        x = tensorlib.randn(2, 3, 6, 6, requires_grad=True)
        w = tensorlib.randn(4, 3, 3, 3, requires_grad=True)
        y = tensorlib.convolution(x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
        node = weakref.ref(y.grad_fn)
        y.sum().backward()
        del y
        assert node() is None
    finally:
        if was:
            gc.enable()


# ---------------------------------------------------------------------------------------------
# the layers

MODULES = [
    ("Conv1d", (3, 4, 3), dict(stride=2, padding=1), (2, 3, 11)),
    ("Conv2d", (4, 6, 3), dict(padding="same", groups=2, dilation=2), (2, 4, 7, 8)),
    ("Conv2d", (4, 4, (3, 2)), dict(padding=(1, 2), padding_mode="reflect"), (2, 4, 7, 8)),
    ("Conv2d", (3, 5, 3), dict(padding=1, padding_mode="circular", bias=False), (3, 6, 6)),
    ("Conv2d", (3, 5, 2), dict(padding=1, padding_mode="replicate"), (1, 3, 6, 6)),
    ("Conv3d", (2, 3, 2), dict(stride=(1, 2, 1)), (1, 2, 4, 5, 4)),
    ("ConvTranspose1d", (3, 4, 3), dict(stride=2, output_padding=1), (2, 3, 5)),
    ("ConvTranspose2d", (4, 6, 3), dict(stride=2, padding=1, groups=2), (2, 4, 5, 4)),
    ("ConvTranspose3d", (2, 2, 2), dict(stride=2), (1, 2, 2, 3, 2)),
]


@pytest.mark.parametrize("name, args, kw, shape", MODULES)
def test_modules_match_torch(name, args, kw, shape):
    ref = getattr(torch.nn, name)(*args, **kw).double()
    ours = getattr(tensorlib.nn, name)(*args, **kw, dtype=tensorlib.float64)
    assert repr(ours) == repr(ref)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in ref.named_parameters()]
    for (_, p), (_, q) in zip(ours.named_parameters(), ref.named_parameters()):
        assert tuple(p.shape) == tuple(q.shape)
        # PyTorch's default init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias
        fan_in = ref.weight.shape[1] * int(np.prod(ref.weight.shape[2:]))
        assert float(p.detach().abs().max()) <= 1 / np.sqrt(fan_in) + 1e-12
        p.data = tl_of(q)
    x = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
    y = ref(x)
    gy = torch.randn(y.shape, dtype=torch.float64)
    y.backward(gy)
    xx = tl_of(x, True)
    yy = ours(xx)
    yy.backward(tl_of(gy))
    close(yy, y, torch.float64)
    close(xx.grad, x.grad, torch.float64)
    for (_, p), (_, q) in zip(ours.named_parameters(), ref.named_parameters()):
        close(p.grad, q.grad, torch.float64)


def test_conv_transpose_output_size_and_module_errors():
    ref = torch.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1).double()
    ours = tensorlib.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, dtype=tensorlib.float64)
    ours.weight.data, ours.bias.data = tl_of(ref.weight), tl_of(ref.bias)
    x = torch.randn(1, 4, 5, 5, dtype=torch.float64)
    for size in [(9, 9), (10, 10), (1, 2, 10, 9)]:
        close(ours(tl_of(x), output_size=size), ref(x, output_size=size), torch.float64)
    _same_error(lambda: ref(x, output_size=(12, 12)), lambda: ours(tl_of(x), output_size=(12, 12)))
    for kw in (dict(groups=0), dict(groups=2, in_channels=3), dict(padding="full"),
               dict(padding="same", stride=2)):
        args = dict(in_channels=4, out_channels=4, kernel_size=3)
        args.update(kw)
        _same_error(lambda: torch.nn.Conv2d(**args), lambda: tensorlib.nn.Conv2d(**args))
    # (the message lists a set, whose order varies between processes)
    with pytest.raises(ValueError, match="padding_mode must be one of .*, but got "
                                         "padding_mode='mirror'"):
        tensorlib.nn.Conv2d(4, 4, 3, padding_mode="mirror")
    _same_error(lambda: torch.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect"),
                lambda: tensorlib.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect"))


def test_docstring_examples():
    """The examples in the nn ops' docstrings, the functional wrappers and the layers run."""
    import doctest
    import tensorlib.nn.modules.conv as conv_mod
    import tensorlib.nn.modules.pooling as pool_mod
    from tensorlib.ops.decl import nn as decl_nn
    globs = {"tensorlib": tensorlib}
    failed = 0
    for mod in (K, conv_mod, pool_mod):
        failed += doctest.testmod(mod, extraglobs=globs).failed
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    for d in decl_nn.OPS:
        for test in finder.find(getattr(tensorlib, d["name"]), d["name"], globs=globs):
            failed += runner.run(test).failed
    assert failed == 0


def test_empty_batch_and_strided_operands():
    x = torch.randn(0, 3, 5, 5, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, 3, 3, 3, dtype=torch.float64, requires_grad=True)
    F.conv2d(x, w, padding=1).sum().backward()
    xx, ww = tl_of(x, True), tl_of(w, True)
    y = K.conv2d(xx, ww, padding=1)
    assert tuple(y.shape) == (0, 4, 5, 5)
    y.sum().backward()
    close(ww.grad, w.grad, torch.float64)
    # channels-last input, a transposed weight and a strided gradient
    x = torch.randn(2, 5, 6, 3, dtype=torch.float64).permute(0, 3, 1, 2).requires_grad_()
    w = torch.randn(3, 4, 3, 3, dtype=torch.float64).transpose(0, 1).requires_grad_()
    xx = tl_of(x.detach().permute(0, 2, 3, 1)).permute(0, 3, 1, 2).detach().requires_grad_()
    ww = tl_of(w.detach().transpose(0, 1)).transpose(0, 1).detach().requires_grad_()
    assert not xx.is_contiguous() and not ww.is_contiguous()
    y = F.conv2d(x, w, stride=2, padding=1)
    gy = torch.randn(y.shape[::-1], dtype=torch.float64).permute(3, 2, 1, 0)
    y.backward(gy)
    yy = K.conv2d(xx, ww, stride=2, padding=1)
    yy.backward(tl_of(gy.permute(3, 2, 1, 0)).permute(3, 2, 1, 0))
    close(yy, y, torch.float64)
    close(xx.grad, x.grad, torch.float64)
    close(ww.grad, w.grad, torch.float64)
