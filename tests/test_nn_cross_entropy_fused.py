"""cross_entropy's fused kernel (log_softmax + nll_loss in one pass, _nn_cross_entropy):
values and gradients against torch over random shapes, weights, ignored targets and label
smoothing; gradcheck and gradgradcheck in float64; what the node keeps; bad targets."""
import gc

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlib
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

TOL = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-10, atol=1e-12)}


def _case(n, c, dtype, with_weight, n_ignored, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((n, c)) * 3).astype(dtype)
    t = rng.integers(0, c, n)
    t[:n_ignored] = -100
    w = rng.random(c).astype(dtype) + 0.1 if with_weight else None
    return x, t, w


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 9), c=st.integers(1, 12), dtype=st.sampled_from([np.float32, np.float64]),
       with_weight=st.booleans(), ignored=st.integers(0, 2),
       reduction=st.sampled_from(["none", "mean", "sum"]),
       smoothing=st.sampled_from([0.0, 0.1, 1.0]), seed=st.integers(0, 2**16))
def test_matches_torch(n, c, dtype, with_weight, ignored, reduction, smoothing, seed):
    x, t, w = _case(n, c, dtype, with_weight, min(ignored, n - 1), seed)
    X = torch.tensor(x, requires_grad=True)
    ref = torch.nn.functional.cross_entropy(
        X, torch.tensor(t), weight=None if w is None else torch.tensor(w),
        reduction=reduction, label_smoothing=smoothing)
    g = np.random.default_rng(seed + 1).standard_normal(tuple(ref.shape)).astype(dtype)
    ref.backward(torch.tensor(g))
    Y = tensorlib.tensor(x, requires_grad=True)
    out = F.cross_entropy(Y, tensorlib.tensor(t), weight=None if w is None else tensorlib.tensor(w),
                          reduction=reduction, label_smoothing=smoothing)
    assert type(out.grad_fn).__name__ == "NnCrossEntropyBackward0"
    out.backward(tensorlib.tensor(g))
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), **TOL[dtype])
    np.testing.assert_allclose(Y.grad.numpy(), X.grad.numpy(), **TOL[dtype])


def test_unbatched_and_strided_logits():
    x = torch.randn(6, 4, dtype=torch.float64)
    cases = ((x[0], torch.tensor(2)), (x.t().contiguous().t(), torch.tensor([0, 1, 2, 3, 0, 1])),
             (x[::2], torch.tensor([3, 2, 1])))
    for inp, tgt in cases:
        for reduction in ("none", "mean"):
            ref = torch.nn.functional.cross_entropy(inp, tgt, reduction=reduction)
            ours = F.cross_entropy(tensorlib.tensor(inp.numpy()), tensorlib.tensor(tgt.numpy()),
                                   reduction=reduction)
            assert tuple(ours.shape) == tuple(ref.shape)
            np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-12)


def test_all_targets_ignored_gives_torchs_nan_and_zero_grad():
    X = torch.randn(3, 4, requires_grad=True)
    ref = torch.nn.functional.cross_entropy(X, torch.full((3,), -100))
    ref.backward()
    Y = tensorlib.tensor(X.detach().numpy(), requires_grad=True)
    out = F.cross_entropy(Y, tensorlib.full((3,), -100, dtype=tensorlib.int64))
    out.backward()
    assert np.isnan(out.item()) and np.isnan(ref.item())
    np.testing.assert_array_equal(np.nan_to_num(Y.grad.numpy()), np.nan_to_num(X.grad.numpy()))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("with_weight", [False, True])
def test_gradcheck_and_gradgradcheck(reduction, smoothing, with_weight):
    x, t, w = _case(4, 3, np.float64, with_weight, 1, 7)
    X = tensorlib.tensor(x, requires_grad=True)
    T = tensorlib.tensor(t)
    W = None if w is None else tensorlib.tensor(w)

    def f(inp):
        return F.cross_entropy(inp, T, weight=W, reduction=reduction, label_smoothing=smoothing)

    assert gradcheck(f, (X,))
    assert gradgradcheck(f, (X,))


def test_double_backward_matches_torch():
    x, t, w = _case(5, 4, np.float64, True, 1, 3)
    X = torch.tensor(x, requires_grad=True)
    (gx,) = torch.autograd.grad(torch.nn.functional.cross_entropy(
        X, torch.tensor(t), weight=torch.tensor(w), label_smoothing=0.2), X, create_graph=True)
    (gx * gx).sum().backward()
    Y = tensorlib.tensor(x, requires_grad=True)
    (gy,) = tensorlib.autograd.grad(F.cross_entropy(
        Y, tensorlib.tensor(t), weight=tensorlib.tensor(w), label_smoothing=0.2), Y,
        create_graph=True)
    (gy * gy).sum().backward()
    np.testing.assert_allclose(gy.detach().numpy(), gx.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(Y.grad.numpy(), X.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.cpu_only("counts the CPU allocator's bytes")
def test_node_keeps_the_logits_and_one_value_per_row_and_frees_them():
    gc.disable()
    try:
        tensorlib.memory.reset_peak_memory_stats()
        x = tensorlib.randn(256, 1000, requires_grad=True)
        t = tensorlib.randint(0, 1000, (256,))
        before = tensorlib.memory.memory_allocated()
        loss = F.cross_entropy(x, t)
        # kept for the backward: the row log-sum-exps and the divisor (the logits are x
        # itself); no [256, 1000] log_softmax
        kept = tensorlib.memory.memory_allocated() - before
        assert kept < 256 * 1000 * 4 // 10
        loss.backward()
        del loss
        assert tensorlib.memory.memory_allocated() == before + x.grad.untyped_storage().nbytes()
    finally:
        gc.enable()


def test_weight_requiring_grad_takes_the_composite_path_with_a_weight_gradient():
    x, t, w = _case(5, 3, np.float64, True, 0, 1)
    W = tensorlib.tensor(w, requires_grad=True)
    out = F.cross_entropy(tensorlib.tensor(x), tensorlib.tensor(t), weight=W)
    assert type(out.grad_fn).__name__ != "NnCrossEntropyBackward0"
    out.backward()
    assert W.grad is not None


def test_target_out_of_range_is_torchs_index_error_naming_the_first():
    x = tensorlib.randn(4, 3)
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        F.cross_entropy(x, tensorlib.tensor([0, 5, -3, 1]))
    with pytest.raises(IndexError, match="Target -3 is out of bounds."):
        F.cross_entropy(x, tensorlib.tensor([0, -100, -3, 7]))
    # the ignored value is never a read
    F.cross_entropy(x, tensorlib.tensor([0, -100, 2, 1]))


def test_bad_shapes_and_dtypes():
    x = tensorlib.randn(4, 3)
    with pytest.raises(ValueError, match=r"Expected input batch_size \(4\) to match target "
                                         r"batch_size \(3\)"):
        F.cross_entropy(x, tensorlib.tensor([0, 1, 2]))
    with pytest.raises(RuntimeError, match="weight tensor should be defined either for all 3 "
                                           "classes or no classes"):
        F.cross_entropy(x, tensorlib.tensor([0, 1, 2, 0]), weight=tensorlib.ones(4))
    with pytest.raises(RuntimeError, match="expected target dtype to be Long"):
        tensorlib._nn_cross_entropy(x, tensorlib.tensor([0, 1, 2, 0], dtype=tensorlib.int32),
                                    None, 1, -100, 0.0)
    with pytest.raises(RuntimeError, match="expected input of 2 dimensions"):
        tensorlib._nn_cross_entropy(tensorlib.randn(2, 3, 4), tensorlib.tensor([0, 1]),
                                    None, 1, -100, 0.0)


@pytest.mark.cpu_only("counts the CPU allocator's bytes")
def test_meta_estimate_equals_the_measured_cpu_peak():
    def step(x, t):
        loss = F.cross_entropy(x, t, label_smoothing=0.1)
        loss.backward()
        return loss

    def args():
        return (tensorlib.randn(64, 100).requires_grad_(), tensorlib.randint(0, 100, (64,)))

    est = tensorlib.memory.estimate(step, *args())
    a = args()
    base = tensorlib.memory.memory_allocated()
    tensorlib.memory.reset_peak_memory_stats()
    step(*a)
    assert est.peak_bytes - est.inputs_bytes == tensorlib.memory.max_memory_allocated() - base


def test_thread_count_does_not_change_results():
    x = tensorlib.randn(4096, 50)
    t = tensorlib.randint(0, 50, (4096,))
    old = tensorlib.get_num_threads()
    try:
        tensorlib.set_num_threads(1)
        a = F.cross_entropy(x, t).item()
        tensorlib.set_num_threads(2)
        b = F.cross_entropy(x, t).item()
    finally:
        tensorlib.set_num_threads(old)
    assert a == b
