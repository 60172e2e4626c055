"""Batch, layer and group normalization (the fused native_* ops and their functionals)
against PyTorch: outputs, saved statistics, running-stat updates and every gradient on the
same inputs and parameters, gradcheck in float64, meta shapes and error messages."""
import numpy as np
import pytest

import tensorlib
import tensorlib.nn.functional as K      # ours; F is torch's

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
    scale = max(1.0, float(np.abs(b).max()) if b.size else 1.0)
    np.testing.assert_allclose(a, b, rtol=TOL[dtype], atol=TOL[dtype] * scale)


def rand(gen, *shape, dtype=torch.float64, grad=False):
    return torch.randn(*shape, dtype=dtype, generator=gen).requires_grad_(grad)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 5, 4), (3, 2, 2, 3, 2)])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_native_batch_norm(shape, training, affine, dtype):
    gen = torch.Generator().manual_seed(len(shape))
    C = shape[1]
    x = rand(gen, *shape, dtype=dtype, grad=True)
    w = rand(gen, C, dtype=dtype, grad=True) if affine else None
    b = rand(gen, C, dtype=dtype, grad=True) if affine else None
    rm, rv = rand(gen, C, dtype=dtype), torch.rand(C, dtype=dtype, generator=gen) + 0.5
    rm2, rv2 = tl_of(rm), tl_of(rv)
    out = torch.native_batch_norm(x, w, b, rm, rv, training, 0.3, 1e-5)
    gy = rand(gen, *shape, dtype=dtype)
    out[0].backward(gy)
    xx = tl_of(x, True)
    ww, bb = (tl_of(w, True), tl_of(b, True)) if affine else (None, None)
    o2 = tensorlib.native_batch_norm(xx, ww, bb, rm2, rv2, training, 0.3, 1e-5)
    assert type(o2[0].grad_fn).__name__ == "NativeBatchNormBackward0"
    o2[0].backward(tl_of(gy))
    for a, r in zip(o2, out):
        close(a, r, dtype)
    close(rm2, rm, dtype)
    close(rv2, rv, dtype)
    close(xx.grad, x.grad, dtype)
    if affine:
        close(ww.grad, w.grad, dtype)
        close(bb.grad, b.grad, dtype)


def test_batch_norm_functional_and_two_forwards_one_backward():
    """The running statistics change in place at every training step; a backward after a
    second forward still works (they are not saved in training mode), as in PyTorch."""
    gen = torch.Generator().manual_seed(0)
    x = rand(gen, 4, 3, 5, grad=True)
    w, b = rand(gen, 3, grad=True), rand(gen, 3, grad=True)
    rm, rv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    xx, ww, bb, rm2, rv2 = tl_of(x, True), tl_of(w, True), tl_of(b, True), tl_of(rm), tl_of(rv)
    y = F.batch_norm(x, rm, rv, w, b, True, 0.1) + F.batch_norm(x * 2, rm, rv, w, b, True, 0.1)
    y2 = K.batch_norm(xx, rm2, rv2, ww, bb, True, 0.1) + \
        K.batch_norm(xx * 2, rm2, rv2, ww, bb, True, 0.1)
    gy = rand(gen, 4, 3, 5)
    y.backward(gy)
    y2.backward(tl_of(gy))
    for a, r in ((y2, y), (rm2, rm), (rv2, rv), (xx.grad, x.grad), (ww.grad, w.grad),
                 (bb.grad, b.grad)):
        close(a, r)
    close(K.batch_norm(xx, rm2, rv2, ww, bb), F.batch_norm(x, rm, rv, w, b))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("shape, ns", [((4, 3), (3,)), ((2, 3, 5), (5,)), ((2, 3, 5), (3, 5)),
                                       ((2, 2, 3, 4), (4,)), ((7,), (7,))])
@pytest.mark.parametrize("affine", [True, False])
def test_native_layer_norm(shape, ns, affine, dtype):
    gen = torch.Generator().manual_seed(len(shape) + len(ns))
    x = rand(gen, *shape, dtype=dtype, grad=True)
    w = rand(gen, *ns, dtype=dtype, grad=True) if affine else None
    b = rand(gen, *ns, dtype=dtype, grad=True) if affine else None
    out = torch.native_layer_norm(x, ns, w, b, 1e-5)
    gy = rand(gen, *shape, dtype=dtype)
    out[0].backward(gy)
    xx = tl_of(x, True)
    ww, bb = (tl_of(w, True), tl_of(b, True)) if affine else (None, None)
    o2 = tensorlib.native_layer_norm(xx, ns, ww, bb, 1e-5)
    assert type(o2[0].grad_fn).__name__ == "NativeLayerNormBackward0"
    o2[0].backward(tl_of(gy))
    for a, r in zip(o2, out):
        close(a, r, dtype)
    close(xx.grad, x.grad, dtype)
    if affine:
        close(ww.grad, w.grad, dtype)
        close(bb.grad, b.grad, dtype)
    close(K.layer_norm(xx, ns, ww, bb), F.layer_norm(x, ns, w, b), dtype)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("shape, groups", [((4, 6), 3), ((2, 6, 5), 2), ((2, 4, 3, 3), 4),
                                           ((3, 4, 2, 3), 1), ((2, 6, 2, 2, 2), 3)])
@pytest.mark.parametrize("affine", [True, False])
def test_native_group_norm(shape, groups, affine, dtype):
    gen = torch.Generator().manual_seed(groups)
    C = shape[1]
    x = rand(gen, *shape, dtype=dtype, grad=True)
    w = rand(gen, C, dtype=dtype, grad=True) if affine else None
    b = rand(gen, C, dtype=dtype, grad=True) if affine else None
    hw = int(np.prod(shape[2:]))
    out = torch.native_group_norm(x, w, b, shape[0], C, hw, groups, 1e-5)
    gy = rand(gen, *shape, dtype=dtype)
    out[0].backward(gy)
    xx = tl_of(x, True)
    ww, bb = (tl_of(w, True), tl_of(b, True)) if affine else (None, None)
    o2 = tensorlib.native_group_norm(xx, ww, bb, shape[0], C, hw, groups, 1e-5)
    assert type(o2[0].grad_fn).__name__ == "NativeGroupNormBackward0"
    o2[0].backward(tl_of(gy))
    for a, r in zip(o2, out):
        close(a, r, dtype)
    close(xx.grad, x.grad, dtype)
    if affine:
        close(ww.grad, w.grad, dtype)
        close(bb.grad, b.grad, dtype)
    close(K.group_norm(xx, groups, ww, bb), F.group_norm(x, groups, w, b), dtype)


def test_gradcheck_float64():
    gen = torch.Generator().manual_seed(9)
    x = tl_of(rand(gen, 3, 4, 2), True)
    w, b = tl_of(rand(gen, 4), True), tl_of(rand(gen, 4), True)
    gc = tensorlib.autograd.gradcheck
    assert gc(lambda x, w, b: tensorlib.native_batch_norm(x, w, b, None, None, True, 0.1,
                                                          1e-5)[0], (x, w, b))
    rm, rv = tl_of(rand(gen, 4)), tl_of(torch.rand(4, dtype=torch.float64) + 0.5)
    assert gc(lambda x, w, b: tensorlib.native_batch_norm(x, w, b, rm, rv, False, 0.1,
                                                          1e-5)[0], (x, w, b))
    w2, b2 = tl_of(rand(gen, 4, 2), True), tl_of(rand(gen, 4, 2), True)
    assert gc(lambda x, w, b: K.layer_norm(x, (4, 2), w, b), (x, w2, b2))
    assert gc(lambda x, w, b: K.group_norm(x, 2, w, b), (x, w, b))


def test_double_backward():
    """With create_graph the norms' gradients are recorded: gradgradcheck in float64, and a
    gradient penalty's gradients match PyTorch's."""
    gen = torch.Generator().manual_seed(10)
    x = tl_of(rand(gen, 3, 4, 2), True)
    w, b = tl_of(rand(gen, 4), True), tl_of(rand(gen, 4), True)
    rm, rv = tl_of(rand(gen, 4)), tl_of(torch.rand(4, dtype=torch.float64) + 0.5)
    w2, b2 = tl_of(rand(gen, 4, 2), True), tl_of(rand(gen, 4, 2), True)
    ggc = tensorlib.autograd.gradgradcheck
    assert ggc(lambda x, w, b: K.batch_norm(x, None, None, w, b, True), (x, w, b))
    assert ggc(lambda x, w, b: K.batch_norm(x, rm, rv, w, b, False), (x, w, b))
    assert ggc(lambda x, w, b: K.layer_norm(x, (4, 2), w, b), (x, w2, b2))
    assert ggc(lambda x: K.layer_norm(x, (2,)), (x,))
    assert ggc(lambda x, w, b: K.group_norm(x, 2, w, b), (x, w, b))
    tx = rand(gen, 4, 6, 3, grad=True)
    tw, tb = rand(gen, 6, grad=True), rand(gen, 6, grad=True)
    xx, ww, bb = tl_of(tx, True), tl_of(tw, True), tl_of(tb, True)
    for lib, fl, (p, q, r) in ((torch, F, (tx, tw, tb)), (tensorlib, K, (xx, ww, bb))):
        y = fl.group_norm(p, 3, q, r) + fl.batch_norm(p, None, None, q, r, True) + \
            fl.layer_norm(p, (3,)) * 2
        gx, gw = lib.autograd.grad((y * y).sum(), (p, q), create_graph=True)
        ((gx * gx).sum() + (gw * gw).sum()).backward()
    for a, r in ((xx.grad, tx.grad), (ww.grad, tw.grad), (bb.grad, tb.grad)):
        close(a, r)


def test_meta_shapes():
    x = tensorlib.empty(4, 6, 5, device="meta", requires_grad=True)
    w = tensorlib.empty(6, device="meta", requires_grad=True)
    tx = torch.empty(4, 6, 5, device="meta")
    for ours, ref in (
            (tensorlib.native_batch_norm(x, w, None, None, None, True, 0.1, 1e-5),
             torch.native_batch_norm(tx, None, None, None, None, True, 0.1, 1e-5)),
            (tensorlib.native_layer_norm(x, [6, 5], None, None, 1e-5),
             torch.native_layer_norm(tx, [6, 5], None, None, 1e-5)),
            (tensorlib.native_group_norm(x, w, None, 4, 6, 5, 3, 1e-5),
             torch.native_group_norm(tx, None, None, 4, 6, 5, 3, 1e-5))):
        assert [tuple(t.shape) for t in ours] == [tuple(t.shape) for t in ref]
        assert all(t.device.type == "meta" for t in ours)
        ours[0].sum().backward()
        assert tuple(x.grad.shape) == (4, 6, 5)


def _same_error(ref, ours):
    with pytest.raises(Exception) as e_ref:
        ref()
    with pytest.raises(type(e_ref.value)) as e_ours:
        ours()
    # (our Size prints as tensorlib.Size where PyTorch's prints torch.Size)
    assert str(e_ours.value).replace("tensorlib.Size", "torch.Size") == str(e_ref.value)


def test_errors_match_torch():
    tx, x = torch.randn(4, 3), tensorlib.randn(4, 3)
    _same_error(lambda: F.batch_norm(torch.randn(1, 3), torch.zeros(3), torch.ones(3),
                                     training=True),
                lambda: K.batch_norm(tensorlib.randn(1, 3), tensorlib.zeros(3),
                                     tensorlib.ones(3), training=True))
    _same_error(lambda: F.batch_norm(tx, torch.zeros(4), torch.ones(3)),
                lambda: K.batch_norm(x, tensorlib.zeros(4), tensorlib.ones(3)))
    _same_error(lambda: F.layer_norm(tx, (4,)), lambda: K.layer_norm(x, (4,)))
    _same_error(lambda: F.layer_norm(tx, (3,), torch.ones(4)),
                lambda: K.layer_norm(x, (3,), tensorlib.ones(4)))
    _same_error(lambda: F.layer_norm(tx, (3,), None, torch.ones(4)),
                lambda: K.layer_norm(x, (3,), None, tensorlib.ones(4)))
    _same_error(lambda: F.layer_norm(tx, ()), lambda: K.layer_norm(x, ()))
    _same_error(lambda: F.group_norm(torch.randn(4, 6), 4),
                lambda: K.group_norm(tensorlib.randn(4, 6), 4))
    _same_error(lambda: torch.native_group_norm(torch.randn(4, 6), torch.ones(5), None, 4, 6, 1,
                                                3, 1e-5),
                lambda: tensorlib.native_group_norm(tensorlib.randn(4, 6), tensorlib.ones(5),
                                                    None, 4, 6, 1, 3, 1e-5))


def test_results_do_not_depend_on_thread_count():
    gen = torch.Generator().manual_seed(2)
    x = tl_of(rand(gen, 16, 32, 20, 20, dtype=torch.float32), True)
    w = tl_of(rand(gen, 32, dtype=torch.float32), True)
    old = tensorlib.get_num_threads()
    res = []
    try:
        for n in (1, 3):
            tensorlib.set_num_threads(n)
            x.grad = w.grad = None
            y = K.batch_norm(x, None, None, w, None, True) + K.group_norm(x, 4, w) + \
                K.layer_norm(x, (20, 20))
            y.sum().backward()
            res.append([t.detach().numpy().copy() for t in (y, x.grad, w.grad)])
    finally:
        tensorlib.set_num_threads(old)
    assert all(np.array_equal(a, b) for a, b in zip(*res))


def test_no_reference_cycles():
    """The saved mean/rstd are outputs of the node that saves them: saved as outputs, they
    keep no reference to it, so graph and tensors fall by reference counting alone."""
    import gc
    import weakref
    was = gc.isenabled()
    gc.disable()
    try:
        x = tensorlib.randn(4, 3, 5, requires_grad=True)
        w = tensorlib.randn(3, requires_grad=True)
        for make in (lambda: tensorlib.native_batch_norm(x, w, None, None, None, True, 0.1,
                                                         1e-5),
                     lambda: tensorlib.native_layer_norm(x, [5], None, None, 1e-5),
                     lambda: tensorlib.native_group_norm(x, w, None, 4, 3, 5, 3, 1e-5)):
            out = make()
            node, refs = weakref.ref(out[0].grad_fn), [weakref.ref(o) for o in out]
            del out
            assert node() is None and all(r() is None for r in refs)
    finally:
        if was:
            gc.enable()
