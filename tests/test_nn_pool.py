"""Pooling (max with indices, average, adaptive average/max, max-unpooling; 1-D and 2-D)
against PyTorch: values, indices and gradients on the same inputs, gradcheck in float64,
meta shapes, error messages and thread-count independence."""
import numpy as np
import pytest

import tensorlib
import tensorlib.nn._functional_kernels as K

torch = pytest.importorskip("torch")
F = torch.nn.functional

TOL = {torch.float32: 1e-5, torch.float64: 1e-10}


def tl_of(t, grad=False):
    out = tensorlib.tensor(t.detach().numpy())
    return out.requires_grad_() if grad else out


def close(ours, ref, dtype=torch.float64):
    a = np.asarray(ours.tolist(), dtype=np.float64)
    b = ref.detach().double().numpy()
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, rtol=TOL[dtype], atol=TOL[dtype])


def same_indices(ours, ref):
    assert ours.dtype == tensorlib.int64
    assert np.array_equal(np.asarray(ours.tolist()), ref.numpy())


def run_both(ref_fn, our_fn, shape, dtype, seed=0, multi=False):
    """Forward and backward of a pooling in torch and tensorlib on the same input."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, dtype=dtype, generator=gen, requires_grad=True)
    xx = tl_of(x, True)
    r, o = ref_fn(x), our_fn(xx)
    rv, ov = (r[0], o[0]) if multi else (r, o)
    gy = torch.randn(rv.shape, dtype=dtype, generator=gen)
    rv.backward(gy)
    ov.backward(tl_of(gy))
    close(ov, rv, dtype)
    close(xx.grad, x.grad, dtype)
    if multi:
        same_indices(o[1], r[1])
    return o


MAX2D = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(3, 2), stride=(2, 3), padding=(1, 0), dilation=(2, 1), ceil_mode=True),
    dict(kernel_size=3, stride=2, ceil_mode=True),
    dict(kernel_size=(2, 4), stride=1, padding=(1, 2), dilation=(1, 2)),
]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("kw", MAX2D)
def test_max_pool2d(kw, dtype):
    o = run_both(lambda x: F.max_pool2d(x, return_indices=True, **kw),
                 lambda x: K.max_pool2d(x, return_indices=True, **kw),
                 (2, 3, 9, 10), dtype, multi=True)
    assert type(o[0].grad_fn).__name__ == "MaxPool2DWithIndicesBackward0"
    run_both(lambda x: F.max_pool2d(x, **kw), lambda x: K.max_pool2d(x, **kw), (3, 9, 10), dtype)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=2, dilation=2, ceil_mode=True)])
def test_max_pool1d(kw):
    run_both(lambda x: F.max_pool1d(x, return_indices=True, **kw),
             lambda x: K.max_pool1d(x, return_indices=True, **kw), (2, 3, 13), torch.float64,
             multi=True)
    run_both(lambda x: F.max_pool1d(x, **kw), lambda x: K.max_pool1d(x, **kw), (3, 13),
             torch.float64)


def test_max_pool_nan_and_ties():
    x = torch.tensor([[[[1., float("nan"), 3., 3.], [float("nan"), 0., 3., 2.]]]])
    v, i = F.max_pool2d(x, 2, return_indices=True)
    vv, ii = K.max_pool2d(tl_of(x), 2, return_indices=True)
    np.testing.assert_array_equal(np.asarray(vv.tolist()), v.numpy())
    same_indices(ii, i)
    x = torch.full((1, 1, 3, 3), -float("inf"))
    v, i = F.max_pool2d(x, 2, stride=1, padding=1, return_indices=True)
    vv, ii = K.max_pool2d(tl_of(x), 2, stride=1, padding=1, return_indices=True)
    same_indices(ii, i)


AVG2D = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=(3, 2), stride=(2, 3), padding=(1, 1), ceil_mode=True),
    dict(kernel_size=(3, 2), stride=(2, 3), padding=(1, 1), ceil_mode=True,
         count_include_pad=False),
    dict(kernel_size=3, stride=1, padding=1, divisor_override=5),
]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("kw", AVG2D)
def test_avg_pool2d(kw, dtype):
    o = run_both(lambda x: F.avg_pool2d(x, **kw), lambda x: K.avg_pool2d(x, **kw),
                 (2, 3, 9, 10), dtype)
    assert type(o.grad_fn).__name__ == "AvgPool2DBackward0"


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=4, stride=3, padding=2, ceil_mode=True,
                                     count_include_pad=False)])
def test_avg_pool1d(kw):
    run_both(lambda x: F.avg_pool1d(x, **kw), lambda x: K.avg_pool1d(x, **kw), (2, 3, 13),
             torch.float64)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("size", [(3, 3), (4, 5), (9, 8), 1, (5, 2), (None, 3), (13, 11)])
def test_adaptive_pool2d(size, dtype):
    o = run_both(lambda x: F.adaptive_avg_pool2d(x, size),
                 lambda x: K.adaptive_avg_pool2d(x, size), (2, 3, 9, 8), dtype)
    assert type(o.grad_fn).__name__ == "AdaptiveAvgPool2DBackward0"
    o = run_both(lambda x: F.adaptive_max_pool2d(x, size, return_indices=True),
                 lambda x: K.adaptive_max_pool2d(x, size, return_indices=True), (3, 9, 8),
                 dtype, multi=True)
    assert type(o[0].grad_fn).__name__ == "AdaptiveMaxPool2DBackward0"


@pytest.mark.parametrize("size", [1, 3, 5, 7, 12])
def test_adaptive_pool1d(size):
    run_both(lambda x: F.adaptive_avg_pool1d(x, size), lambda x: K.adaptive_avg_pool1d(x, size),
             (2, 3, 7), torch.float64)
    run_both(lambda x: F.adaptive_max_pool1d(x, size, return_indices=True),
             lambda x: K.adaptive_max_pool1d(x, size, return_indices=True), (3, 7),
             torch.float64, multi=True)


@pytest.mark.parametrize("hw, k, s, out", [((8, 8), 2, None, None), ((9, 9), 3, 2, None),
                                           ((9, 8), 2, 2, (9, 8)), ((9, 9), 2, 2, (1, 1, 9, 9))])
def test_max_unpool2d(hw, k, s, out):
    x = torch.randn(2, 3, *hw, dtype=torch.float64)
    v, i = F.max_pool2d(x, k, s, return_indices=True)
    v.requires_grad_()
    u = F.max_unpool2d(v, i, k, s, output_size=out)
    gu = torch.randn(u.shape, dtype=torch.float64)
    u.backward(gu)
    vv = tl_of(v, True)
    uu = K.max_unpool2d(vv, tl_of(i), k, s, output_size=out)
    assert type(uu.grad_fn).__name__ == "MaxUnpool2DBackward0"
    uu.backward(tl_of(gu))
    close(uu, u)
    close(vv.grad, v.grad)


def test_max_unpool1d():
    x = torch.randn(2, 3, 10, dtype=torch.float64)
    v, i = F.max_pool1d(x, 2, return_indices=True)
    close(K.max_unpool1d(tl_of(v), tl_of(i), 2), F.max_unpool1d(v, i, 2))


def test_gradcheck_float64():
    gen = torch.Generator().manual_seed(7)
    x = tl_of(torch.randn(2, 2, 5, 6, dtype=torch.float64, generator=gen), True)
    gc = tensorlib.autograd.gradcheck
    assert gc(lambda x: K.max_pool2d(x, 3, 2, 1), (x,))
    assert gc(lambda x: K.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), (x,))
    assert gc(lambda x: K.adaptive_avg_pool2d(x, (4, 4)), (x,))
    assert gc(lambda x: K.adaptive_max_pool2d(x, (2, 4)), (x,))
    v, i = K.max_pool2d(x.detach(), 2, return_indices=True)
    assert gc(lambda v: K.max_unpool2d(v, i, 2), (v.requires_grad_(),))


def test_double_backward():
    gen = torch.Generator().manual_seed(11)
    x = tl_of(torch.randn(2, 2, 5, 6, dtype=torch.float64, generator=gen), True)
    ggc = tensorlib.autograd.gradgradcheck
    assert ggc(lambda x: K.max_pool2d(x, 3, 2, 1), (x,))
    assert ggc(lambda x: K.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
               (x,))
    assert ggc(lambda x: K.adaptive_avg_pool2d(x, (4, 4)), (x,))
    assert ggc(lambda x: K.adaptive_max_pool2d(x, (2, 4)), (x,))
    v, i = K.max_pool2d(x.detach(), 2, return_indices=True)
    assert ggc(lambda v: K.max_unpool2d(v, i, 2), (v.requires_grad_(),))


def test_meta_shapes():
    cases = [
        (lambda m, x: m.max_pool2d(x, 3, 2, 1, ceil_mode=True), (2, 3, 9, 10)),
        (lambda m, x: m.avg_pool2d(x, (3, 2), (2, 1), ceil_mode=True), (3, 9, 10)),
        (lambda m, x: m.adaptive_avg_pool2d(x, (4, 3)), (2, 3, 9, 10)),
        (lambda m, x: m.adaptive_max_pool2d(x, 5), (2, 3, 9, 10)),
        (lambda m, x: m.max_pool1d(x, 3), (2, 3, 10)),
        (lambda m, x: m.avg_pool1d(x, 3, 2, 1), (2, 3, 10)),
        (lambda m, x: m.adaptive_avg_pool1d(x, 4), (2, 3, 10)),
    ]
    for fn, shape in cases:
        ref = fn(F, torch.empty(shape, device="meta"))
        x = tensorlib.empty(shape, device="meta", requires_grad=True)
        out = fn(K, x)
        assert out.device.type == "meta" and tuple(out.shape) == tuple(ref.shape)
        out.sum().backward()
        assert tuple(x.grad.shape) == shape
    v, i = K.max_pool2d(tensorlib.empty(2, 3, 8, 8, device="meta"), 2, return_indices=True)
    assert tuple(K.max_unpool2d(v, i, 2).shape) == (2, 3, 8, 8)


def _same_error(ref, ours):
    with pytest.raises(Exception) as e_ref:
        ref()
    with pytest.raises(type(e_ref.value)) as e_ours:
        ours()
    # (our Size prints as tensorlib.Size where PyTorch's prints torch.Size)
    assert str(e_ours.value).replace("tensorlib.Size", "torch.Size") == str(e_ref.value)


@pytest.mark.parametrize("name, shape, args, kw", [
    ("max_pool2d", (1, 3, 5, 5), (3,), dict(padding=2)),
    ("max_pool2d", (1, 3, 2, 2), (3,), {}),
    ("max_pool2d", (1, 3, 5, 5), (3,), dict(stride=0)),
    ("max_pool2d", (5, 5, 5, 5, 5), (3,), {}),
    ("max_pool2d", (1, 3, 5, 5), (0,), {}),
    ("max_pool2d", (1, 3, 5, 5), (2,), dict(dilation=0)),
    ("max_pool2d", (1, 3, 5, 5), (3,), dict(padding=-1)),
    ("max_pool2d", (1, 3, 5, 5), ((2, 2, 2),), {}),
    ("avg_pool2d", (1, 3, 5, 5), (0,), {}),
    ("adaptive_avg_pool2d", (3, 5), (2,), {}),
    ("adaptive_max_pool2d", (1, 3, 5, 5), ((-1, 2),), {}),
    ("avg_pool2d", (1, 3, 5, 5), (3,), dict(padding=2)),
    ("avg_pool2d", (1, 3, 2, 2), (3,), {}),
    ("avg_pool2d", (1, 3, 5, 5), (2,), dict(divisor_override=0)),
    ("adaptive_avg_pool2d", (1, 3, 0, 5), (3,), {}),
    ("max_pool1d", (1, 3, 2), (3,), {}),
    ("avg_pool1d", (1, 3, 2), (3,), {}),
])
def test_errors_match_torch(name, shape, args, kw):
    _same_error(lambda: getattr(F, name)(torch.randn(shape), *args, **kw),
                lambda: getattr(K, name)(tensorlib.randn(shape), *args, **kw))


def test_unpool_errors_match_torch():
    x = torch.randn(1, 1, 2, 2)
    _same_error(lambda: F.max_unpool2d(x, torch.tensor([[[[0, 1], [99, 3]]]]), 2),
                lambda: K.max_unpool2d(tl_of(x), tensorlib.tensor([[[[0, 1], [99, 3]]]]), 2))
    _same_error(lambda: F.max_unpool2d(x, torch.zeros(1, 1, 2, 2), 2),
                lambda: K.max_unpool2d(tl_of(x), tensorlib.zeros(1, 1, 2, 2), 2))
    _same_error(lambda: F.max_unpool2d(x, torch.zeros(1, 1, 2, 1).long(), 2),
                lambda: K.max_unpool2d(tl_of(x), tensorlib.zeros(1, 1, 2, 1).long(), 2))


def test_results_do_not_depend_on_thread_count():
    x = tl_of(torch.randn(8, 16, 40, 40), True)
    old = tensorlib.get_num_threads()
    res = []
    try:
        for n in (1, 3):
            tensorlib.set_num_threads(n)
            x.grad = None
            y = K.avg_pool2d(x, 3, 2, 1) + K.max_pool2d(x, 3, 2, 1) + \
                K.adaptive_avg_pool2d(x, 20)
            y.sum().backward()
            res.append((y.detach().numpy().copy(), x.grad.numpy().copy()))
    finally:
        tensorlib.set_num_threads(old)
    assert all(np.array_equal(a, b) for a, b in zip(*res))


# ---------------------------------------------------------------------------------------------
# the layers

@pytest.mark.parametrize("name, args, kw, shape", [
    ("MaxPool1d", (3,), dict(stride=2, padding=1), (2, 3, 10)),
    ("MaxPool2d", (3,), dict(stride=2, padding=1, ceil_mode=True), (2, 3, 9, 9)),
    ("MaxPool2d", ((2, 3),), dict(dilation=(2, 1)), (3, 9, 9)),
    ("AvgPool1d", (3,), dict(stride=2, padding=1, count_include_pad=False), (2, 3, 10)),
    ("AvgPool2d", (3,), dict(stride=2, padding=1, divisor_override=4), (2, 3, 9, 9)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 10)),
    ("AdaptiveAvgPool2d", ((3, None),), {}, (2, 3, 9, 7)),
    ("AdaptiveMaxPool1d", (4,), {}, (2, 3, 10)),
    ("AdaptiveMaxPool2d", (3,), {}, (3, 9, 7)),
])
def test_modules_match_torch(name, args, kw, shape):
    ref, ours = getattr(torch.nn, name)(*args, **kw), getattr(tensorlib.nn, name)(*args, **kw)
    assert repr(ours) == repr(ref)
    run_both(ref, ours, shape, torch.float64)
    if "Max" in name:
        r, o = getattr(torch.nn, name)(*args, **kw, return_indices=True), \
            getattr(tensorlib.nn, name)(*args, **kw, return_indices=True)
        run_both(r, o, shape, torch.float64, multi=True)


def test_max_unpool_modules_match_torch():
    for dims, shape in ((1, (2, 3, 8)), (2, (2, 3, 8, 6))):
        pool = getattr(torch.nn, f"MaxPool{dims}d")(2, return_indices=True)
        ref, ours = getattr(torch.nn, f"MaxUnpool{dims}d")(2), \
            getattr(tensorlib.nn, f"MaxUnpool{dims}d")(2)
        assert repr(ours) == repr(ref)
        v, i = pool(torch.randn(*shape, dtype=torch.float64))
        close(ours(tl_of(v), tl_of(i)), ref(v, i))
