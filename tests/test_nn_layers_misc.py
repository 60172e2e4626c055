"""Normalisation, embeddings and local response norm of tensorlib.nn.functional side by side
with torch: forward, gradients, running statistics updated in place, errors."""
import numpy as np
import pytest

import tensorlib
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck

from nn_ref import assert_close, compare, rand, randn

torch = pytest.importorskip("torch")
TF = torch.nn.functional

DTYPES = ["float32", "float64"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm(dtype):
    x = randn((2, 3, 4, 5), dtype)
    for ns in [(5,), (4, 5), (3, 4, 5)]:
        w, b = rand(ns, dtype, 1, 0.5, 2.0), randn(ns, dtype, 2)
        compare(torch, "layer_norm", [x, ns], grad=(0,), dtype=dtype)
        compare(torch, "layer_norm", [x, ns, w, b], {"eps": 1e-3}, grad=(0, 2, 3), dtype=dtype)
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with "
                                           r"shape \[\*, 4\], but got input of size\[3, 5\]"):
        F.layer_norm(tensorlib.ones(3, 5), (4,))


@pytest.mark.parametrize("dtype", DTYPES)
def test_group_norm(dtype):
    x = randn((2, 6, 4, 3), dtype)
    w, b = rand((6,), dtype, 1, 0.5, 2.0), randn((6,), dtype, 2)
    for g in (1, 2, 3, 6):
        compare(torch, "group_norm", [x, g], grad=(0,), dtype=dtype)
        compare(torch, "group_norm", [x, g, w, b], grad=(0, 2, 3), dtype=dtype)
    compare(torch, "group_norm", [randn((3, 4, 5), dtype), 2], grad=(0,), dtype=dtype)
    with pytest.raises(RuntimeError, match=r"Expected number of channels in input to be "
                                           r"divisible by num_groups, but got input of shape "
                                           r"\[2, 6, 4\] and num_groups=4"):
        F.group_norm(tensorlib.ones(2, 6, 4), 4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5), (2, 3, 4, 2)], ids=str)
def test_batch_norm(shape, dtype):
    x = randn(shape, dtype)
    C = shape[1]
    w, b = rand((C,), dtype, 1, 0.5, 2.0), randn((C,), dtype, 2)
    for momentum in (0.1, 0.5):
        rm, rv = randn((C,), dtype, 3), rand((C,), dtype, 4, 0.5, 2.0)
        ours_m, ours_v = tensorlib.tensor(rm), tensorlib.tensor(rv)
        th_m, th_v = torch.tensor(rm), torch.tensor(rv)
        compare(torch, "batch_norm", [x, None, None, w, b], {"training": True,
                                                             "momentum": momentum},
                grad=(0, 3, 4), dtype=dtype,
                ours=lambda *a, **k: F.batch_norm(a[0], ours_m, ours_v, *a[3:], **k),
                theirs=lambda *a, **k: TF.batch_norm(a[0], th_m, th_v, *a[3:], **k))
        assert_close(ours_m, th_m, dtype, what="running_mean")
        assert_close(ours_v, th_v, dtype, what="running_var")
        # eval uses (and keeps) the running statistics
        compare(torch, "batch_norm", [x, ours_m.numpy().copy(), ours_v.numpy().copy(), w, b],
                {"training": False}, grad=(0, 3, 4), dtype=dtype)
    compare(torch, "batch_norm", [x, None, None], {"training": True}, grad=(0,), dtype=dtype)


def test_batch_norm_errors_and_gradcheck():
    with pytest.raises(ValueError, match=r"Expected more than 1 value per channel when "
                                         r"training, got input size torch.Size\(\[1, 3\]\)"):
        F.batch_norm(tensorlib.ones(1, 3), None, None, training=True)
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        F.batch_norm(tensorlib.ones(2, 3), None, None, training=False)
    x = tensorlib.tensor(randn((4, 2, 3)), requires_grad=True)
    w = tensorlib.tensor(rand((2,), seed=1, lo=0.5, hi=2), requires_grad=True)
    b = tensorlib.tensor(randn((2,), seed=2), requires_grad=True)
    assert gradcheck(lambda *a: F.batch_norm(a[0], None, None, a[1], a[2], training=True),
                     (x, w, b))
    assert gradcheck(lambda *a: F.layer_norm(a[0], (3,), None, None), (x,))
    assert gradcheck(lambda *a: F.group_norm(a[0], 2, a[1], a[2]), (x, w, b))
    assert gradcheck(lambda *a: F.instance_norm(a[0], weight=a[1], bias=a[2]), (x, w, b))


@pytest.mark.parametrize("dtype", DTYPES)
def test_instance_norm(dtype):
    x = randn((3, 2, 4, 5), dtype)
    w, b = rand((2,), dtype, 1, 0.5, 2.0), randn((2,), dtype, 2)
    compare(torch, "instance_norm", [x], grad=(0,), dtype=dtype)
    compare(torch, "instance_norm", [x], {"weight": w, "bias": b}, grad=(0,), dtype=dtype)
    rm, rv = randn((2,), dtype, 3), rand((2,), dtype, 4, 0.5, 2.0)
    om, ov, tm, tv = tensorlib.tensor(rm), tensorlib.tensor(rv), torch.tensor(rm), \
        torch.tensor(rv)
    compare(torch, "instance_norm", [x], {"momentum": 0.3}, grad=(0,), dtype=dtype,
            ours=lambda a, **k: F.instance_norm(a, om, ov, **k),
            theirs=lambda a, **k: TF.instance_norm(a, tm, tv, **k))
    assert_close(om, tm, dtype)
    assert_close(ov, tv, dtype)
    compare(torch, "instance_norm", [x, rm, rv], {"use_input_stats": False}, grad=(0,),
            dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_local_response_norm(dtype):
    for shape in [(2, 5, 3), (2, 6, 3, 4), (1, 4, 2, 2, 3)]:
        for size in (1, 2, 3, 4):
            compare(torch, "local_response_norm", [randn(shape, dtype), size],
                    {"alpha": 0.1, "beta": 0.6, "k": 1.5}, dtype=dtype)
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality"):
        F.local_response_norm(tensorlib.ones(3, 4), 2)
    x = tensorlib.tensor(randn((1, 4, 3)), requires_grad=True)
    assert gradcheck(lambda a: F.local_response_norm(a, 3, alpha=0.5), (x,))


@pytest.mark.parametrize("dtype", DTYPES)
def test_embedding(dtype):
    w = randn((6, 3), dtype)
    idx = np.array([[0, 2, 2], [5, 1, 2]])
    compare(torch, "embedding", [idx, w], grad=(1,), dtype=dtype)
    compare(torch, "embedding", [idx, w], {"padding_idx": 2}, grad=(1,), dtype=dtype)
    compare(torch, "embedding", [idx, w], {"padding_idx": -1}, grad=(1,), dtype=dtype)
    compare(torch, "embedding", [idx, w], {"scale_grad_by_freq": True}, grad=(1,), dtype=dtype)
    compare(torch, "embedding", [idx[0], w], grad=(1,), dtype=dtype)
    # max_norm renormalises the rows used, in place, in both
    ow, tw = tensorlib.tensor(w * 3), torch.tensor(w * 3)
    a = F.embedding(tensorlib.tensor(idx), ow, max_norm=1.5, norm_type=1.0)
    b = TF.embedding(torch.tensor(idx), tw, max_norm=1.5, norm_type=1.0)
    assert_close(a, b, dtype)
    assert_close(ow, tw, dtype, what="weight renormalised in place")
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(tensorlib.tensor([1]), tensorlib.ones(4, 3), padding_idx=5)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(tensorlib.tensor([1, 7]), tensorlib.ones(4, 3))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode, dtype):
    w = randn((7, 3), dtype)
    flat = np.array([1, 2, 4, 5, 4, 3, 2, 6])
    offsets = np.array([0, 2, 2, 5])                # an empty bag
    kw = {"mode": mode}
    compare(torch, "embedding_bag", [flat, w, offsets], kw, grad=(1,), dtype=dtype)
    compare(torch, "embedding_bag", [flat, w, np.array([0, 2, 5, 8])],
            dict(kw, include_last_offset=True), grad=(1,), dtype=dtype)
    compare(torch, "embedding_bag", [flat.reshape(2, 4), w], kw, grad=(1,), dtype=dtype)
    compare(torch, "embedding_bag", [flat, w, offsets], dict(kw, padding_idx=4), grad=(1,),
            dtype=dtype)
    if mode == "sum":
        psw = rand((8,), dtype, 3)
        compare(torch, "embedding_bag", [flat, w, offsets], {"per_sample_weights": psw,
                                                            "mode": "sum"},
                grad=(1,), dtype=dtype)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(tensorlib.tensor([1, 2]), tensorlib.ones(4, 3))
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(tensorlib.tensor([[1, 2]]), tensorlib.ones(4, 3), tensorlib.tensor([0]))
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for "
                                                  "mode='sum'"):
        F.embedding_bag(tensorlib.tensor([[1, 2]]), tensorlib.ones(4, 3), mode="mean",
                        per_sample_weights=tensorlib.ones(1, 2))
