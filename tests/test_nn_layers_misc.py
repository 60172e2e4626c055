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


# --------------------------------------------------------------------------- interpolate

INTERP = [("nearest", 3), ("nearest", 4), ("nearest", 5), ("nearest-exact", 4), ("linear", 3),
          ("bilinear", 4), ("bicubic", 4), ("trilinear", 5), ("area", 4), ("area", 3)]


@pytest.mark.parametrize("mode,nd", INTERP, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_interpolate(mode, nd, dtype):
    x = randn((2, 3) + (5, 7, 4)[:nd - 2], dtype)
    sizes = [dict(size=(9, 3, 6)[:nd - 2]), dict(size=4), dict(scale_factor=2),
             dict(scale_factor=1.7), dict(scale_factor=0.6, recompute_scale_factor=True),
             dict(scale_factor=(1.5, 2.3, 0.7)[:nd - 2])]
    corners = [None] if mode in ("nearest", "nearest-exact", "area") else [False, True]
    # bicubic sums four taps with alternating signs: float32 cancellation near 0 needs atol
    tol = dict(rtol=1e-5, atol=1e-5) if mode == "bicubic" and dtype == "float32" else None
    for kw in sizes:
        for ac in corners:
            compare(torch, "interpolate", [x], dict(kw, mode=mode, align_corners=ac),
                    dtype=dtype, tol=tol)


def test_interpolate_errors_and_gradcheck():
    x = tensorlib.ones(1, 1, 4)
    with pytest.raises(ValueError, match="only one of size or scale_factor should be defined"):
        F.interpolate(x, size=2, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor should be defined"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="align_corners option can only be set with the "
                                         "interpolating modes"):
        F.interpolate(x, size=2, align_corners=True)
    with pytest.raises(NotImplementedError, match="Got 3D input, but bilinear mode needs 4D "
                                                  "input"):
        F.interpolate(x, size=2, mode="bilinear")
    t = tensorlib.tensor(randn((1, 2, 3, 4)), requires_grad=True)
    assert gradcheck(lambda a: F.interpolate(a, scale_factor=1.5, mode="bicubic"), (t,))


# --------------------------------------------------------------------------- modules

import tensorlib.nn as nn  # noqa: E402

REPRS = [
    "nn.ReLU()", "nn.ReLU(True)", "nn.ReLU6()", "nn.LeakyReLU()", "nn.LeakyReLU(0.2, True)",
    "nn.ELU()", "nn.CELU(0.5)", "nn.SELU()", "nn.GELU()", "nn.GELU('tanh')", "nn.SiLU(True)",
    "nn.Mish()", "nn.Hardtanh()", "nn.Hardswish()", "nn.Hardsigmoid()", "nn.Softplus()",
    "nn.Threshold(0.1, 2.0)", "nn.GLU()", "nn.Softmax()", "nn.Softmax(1)", "nn.PReLU()",
    "nn.PReLU(3)", "nn.RReLU()", "nn.Hardshrink()", "nn.Softshrink(0.2)", "nn.Softmin(0)",
    "nn.LogSoftmax(1)", "nn.Softmax2d()", "nn.Sigmoid()", "nn.Tanh()", "nn.LogSigmoid()",
    "nn.Softsign()", "nn.Tanhshrink()",
    "nn.L1Loss()", "nn.MSELoss()", "nn.CrossEntropyLoss()", "nn.NLLLoss()", "nn.BCELoss()",
    "nn.BCEWithLogitsLoss()", "nn.SmoothL1Loss()", "nn.HuberLoss()", "nn.KLDivLoss()",
    "nn.PoissonNLLLoss()", "nn.GaussianNLLLoss()", "nn.MarginRankingLoss()",
    "nn.HingeEmbeddingLoss()", "nn.SoftMarginLoss()", "nn.MultiLabelSoftMarginLoss()",
    "nn.MultiLabelMarginLoss()", "nn.MultiMarginLoss()", "nn.CosineEmbeddingLoss()",
    "nn.TripletMarginLoss()", "nn.TripletMarginWithDistanceLoss()", "nn.CTCLoss()",
    "nn.Dropout()", "nn.Dropout1d(0.1)", "nn.Dropout2d(0.2, True)", "nn.Dropout3d()",
    "nn.AlphaDropout()", "nn.FeatureAlphaDropout(0.3)",
    "nn.Embedding(10, 3)", "nn.Embedding(10, 3, padding_idx=-1, max_norm=2.0, norm_type=1.0, "
    "scale_grad_by_freq=True, sparse=True)", "nn.EmbeddingBag(10, 3)",
    "nn.EmbeddingBag(10, 3, max_norm=1.0, mode='sum', padding_idx=0)",
    "nn.LayerNorm(4)", "nn.LayerNorm((2, 3), elementwise_affine=False)",
    "nn.LayerNorm(4, bias=False)", "nn.GroupNorm(2, 4)", "nn.GroupNorm(2, 4, affine=False)",
    "nn.BatchNorm1d(3)", "nn.BatchNorm2d(3, momentum=None, affine=False)",
    "nn.BatchNorm3d(2, track_running_stats=False)", "nn.InstanceNorm1d(3)",
    "nn.InstanceNorm2d(3, affine=True, track_running_stats=True)", "nn.InstanceNorm3d(2)",
    "nn.LocalResponseNorm(2)", "nn.ConstantPad1d(2, 3.5)", "nn.ConstantPad2d((1, 2, 3, 4), 0.0)",
    "nn.ConstantPad3d(1, 1.0)", "nn.ZeroPad1d(2)", "nn.ZeroPad2d(1)",
    "nn.ZeroPad3d((1, 2, 0, 1, 1, 1))",
    "nn.ReflectionPad1d(2)", "nn.ReflectionPad2d((1, 1, 2, 2))", "nn.ReflectionPad3d(1)",
    "nn.ReplicationPad1d(1)", "nn.ReplicationPad2d((1, 1, 2, 2))", "nn.ReplicationPad3d(2)",
    "nn.CircularPad1d(1)", "nn.CircularPad2d(2)", "nn.CircularPad3d(1)",
    "nn.PixelShuffle(2)", "nn.PixelUnshuffle(3)", "nn.ChannelShuffle(2)",
    "nn.Upsample(scale_factor=2)", "nn.Upsample(size=(3, 4), mode='bilinear')",
    "nn.Upsample(scale_factor=(2, 3))", "nn.UpsamplingNearest2d(scale_factor=2)",
    "nn.UpsamplingBilinear2d(size=4)", "nn.CosineSimilarity()", "nn.PairwiseDistance()",
]


def test_module_reprs_and_state_match_torch():
    for src in REPRS:
        ours = eval(src, {"nn": nn})
        theirs = eval(src, {"nn": torch.nn})
        assert repr(ours) == repr(theirs), src
        assert list(ours.state_dict()) == list(theirs.state_dict()), src
        for k, v in theirs.state_dict().items():
            if k not in ("weight",) or src.startswith(("nn.LayerNorm", "nn.GroupNorm",
                                                       "nn.PReLU", "nn.BatchNorm",
                                                       "nn.InstanceNorm")):
                assert_close(ours.state_dict()[k], v, "float32", what=f"{src} {k}")


def _copy_params(ours, theirs):
    sd = {k: tensorlib.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()}
    ours.load_state_dict(sd)


def _run_pair(ours, theirs, inputs, grad_params=True, dtype="float32", grad=None):
    def wants(i, x):
        return x.dtype.kind == "f" and (grad is None or i in grad)
    a = [tensorlib.tensor(x, requires_grad=wants(i, x)) if isinstance(x, np.ndarray)
         else x for i, x in enumerate(inputs)]
    b = [torch.tensor(x, requires_grad=wants(i, x)) if isinstance(x, np.ndarray)
         else x for i, x in enumerate(inputs)]
    oa, ob = ours(*a), theirs(*b)
    assert_close(oa, ob, dtype)
    g = randn(tuple(ob.shape), dtype, 11)
    oa.backward(tensorlib.tensor(g))
    ob.backward(torch.tensor(g))
    for x, y in zip(a, b):
        if isinstance(y, torch.Tensor) and y.requires_grad:
            assert_close(x.grad, y.grad, dtype)
    if grad_params:
        ps = dict(theirs.named_parameters())
        for name, p in ours.named_parameters():
            if p.grad is not None or ps[name].grad is not None:
                assert_close(p.grad, ps[name].grad, dtype, what=name)


def test_batchnorm_module_training_and_eval():
    for momentum in (0.1, None):
        ours, theirs = nn.BatchNorm2d(3, momentum=momentum), torch.nn.BatchNorm2d(
            3, momentum=momentum)
        with torch.no_grad():
            theirs.weight.uniform_(0.5, 2)
            theirs.bias.uniform_(-1, 1)
        _copy_params(ours, theirs)
        for step in range(3):
            _run_pair(ours, theirs, [randn((4, 3, 2, 3), "float32", step)])
        for name in ("running_mean", "running_var"):
            assert_close(getattr(ours, name), getattr(theirs, name), "float32", what=name)
        assert ours.num_batches_tracked.item() == 3
        ours.eval()
        theirs.eval()
        _run_pair(ours, theirs, [randn((2, 3, 2, 3), "float32", 9)])
    m = nn.BatchNorm1d(3)
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        m(tensorlib.ones(2, 3, 4, 5))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        m(tensorlib.ones(1, 3))


def test_norm_and_misc_modules_match_torch():
    pairs = [
        ("nn.LayerNorm((3, 4))", [(2, 3, 4)]), ("nn.GroupNorm(2, 4)", [(2, 4, 3)]),
        ("nn.InstanceNorm1d(4, affine=True, track_running_stats=True)", [(2, 4, 5)]),
        ("nn.InstanceNorm2d(4)", [(4, 3, 5)]), ("nn.LocalResponseNorm(3)", [(2, 4, 5)]),
        ("nn.PReLU(4)", [(2, 4, 3)]), ("nn.Softmax2d()", [(2, 4, 3, 3)]),
        ("nn.Softmax(dim=1)", [(2, 4)]), ("nn.GLU(1)", [(2, 4)]),
        ("nn.Upsample(scale_factor=2, mode='bilinear')", [(1, 2, 3, 3)]),
        ("nn.ReflectionPad2d((1, 2, 0, 1))", [(1, 2, 3, 3)]),
        ("nn.CircularPad1d(1)", [(2, 3)]), ("nn.ZeroPad2d(1)", [(2, 3, 3)]),
        ("nn.PixelShuffle(2)", [(1, 8, 2, 2)]), ("nn.ChannelShuffle(2)", [(1, 4, 2)]),
        ("nn.CosineSimilarity(dim=0)", [(3, 4), (3, 4)]),
        ("nn.PairwiseDistance(p=1.0)", [(3, 4), (3, 4)]),
    ]
    for src, shapes in pairs:
        ours, theirs = eval(src, {"nn": nn}), eval(src, {"nn": torch.nn})
        with torch.no_grad():
            for p in theirs.parameters():
                p.uniform_(0.5, 1.5)
        _copy_params(ours, theirs)
        _run_pair(ours, theirs, [randn(s, "float32", i) for i, s in enumerate(shapes)])
        for k, v in theirs.state_dict().items():
            assert_close(ours.state_dict()[k], v, "float32", what=f"{src} {k}")


def test_loss_modules_match_torch():
    x, y = randn((4, 5), "float32"), randn((4, 5), "float32", 1)
    t = np.array([0, 3, 4, 1])
    w = rand((5,), "float32", 2, 0.5, 2.0)
    p = rand((4, 5), "float32", 3, 0.1, 0.9)
    cases = [
        ("L1Loss()", [x, y]), ("MSELoss(reduction='sum')", [x, y]),
        ("CrossEntropyLoss(weight=W, label_smoothing=0.1)", [x, t]),
        ("NLLLoss(weight=W, ignore_index=3)", [x, t]), ("BCELoss(weight=W)", [p, p[::-1].copy()]),
        ("BCEWithLogitsLoss(pos_weight=W)", [x, p]), ("SmoothL1Loss(beta=0.5)", [x, y]),
        ("HuberLoss(delta=0.5)", [x, y]), ("KLDivLoss(reduction='batchmean')", [x, p]),
        ("PoissonNLLLoss()", [x, p]), ("MultiMarginLoss(p=2, weight=W)", [x, t]),
        ("MultiLabelSoftMarginLoss(weight=W)", [x, (p > 0.5).astype("float32")]),
        ("SoftMarginLoss()", [x, np.sign(y)]), ("HingeEmbeddingLoss()", [x, np.sign(y)]),
        ("GaussianNLLLoss()", [x, y, p]), ("MarginRankingLoss(0.1)", [x, y, np.sign(y)]),
        ("CosineEmbeddingLoss()", [x, y, np.array([1.0, -1.0, 1.0, -1.0], "float32")]),
        ("TripletMarginLoss(swap=True)", [x, y, p]),
        ("L1Loss(size_average=False)", [x, y]),
    ]
    import warnings
    for src, inputs in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = eval("nn." + src, {"nn": nn, "W": tensorlib.tensor(w)})
            theirs = eval("nn." + src, {"nn": torch.nn, "W": torch.tensor(w)})
        assert ours.reduction == theirs.reduction
        two = src.startswith(("Margin", "Cosine", "Triplet", "Gaussian"))
        _run_pair(ours, theirs, inputs, grad_params=False, grad=(0, 1) if two else (0,))
    lp = np.log(rand((6, 2, 4), "float32", 5))
    lp = lp - np.log(np.exp(lp).sum(-1, keepdims=True))
    _run_pair(nn.CTCLoss(), torch.nn.CTCLoss(),
              [lp, np.array([[1, 2], [3, 3]]), [6, 5], [2, 2]], grad_params=False, grad=(0,))


def test_embedding_modules():
    torch_emb = torch.nn.Embedding(6, 3, padding_idx=2)
    emb = nn.Embedding(6, 3, padding_idx=2)
    assert emb.weight[2].tolist() == [0.0, 0.0, 0.0]
    _copy_params(emb, torch_emb)
    _run_pair(emb, torch_emb, [np.array([[0, 2], [5, 2]])])
    pre = randn((4, 2), "float32")
    e1 = nn.Embedding.from_pretrained(tensorlib.tensor(pre))
    e2 = torch.nn.Embedding.from_pretrained(torch.tensor(pre))
    assert repr(e1) == repr(e2) and not e1.weight.requires_grad
    assert nn.Embedding.from_pretrained(tensorlib.tensor(pre), freeze=False).weight.requires_grad
    assert_close(e1(tensorlib.tensor([3, 1])), e2(torch.tensor([3, 1])), "float32")
    with pytest.raises(AssertionError, match="Embeddings parameter is expected to be "
                                             "2-dimensional"):
        nn.Embedding.from_pretrained(tensorlib.ones(3))
    tensorlib.manual_seed(0)
    w = nn.Embedding(1000, 4).weight.detach().numpy()
    assert abs(w.mean()) < 0.05 and abs(w.std() - 1) < 0.05       # N(0, 1) init
    for mode in ("sum", "mean", "max"):
        tb, ob = torch.nn.EmbeddingBag(7, 3, mode=mode), nn.EmbeddingBag(7, 3, mode=mode)
        _copy_params(ob, tb)
        flat, offs = np.array([1, 2, 4, 5, 4, 3]), np.array([0, 2, 2])
        oa = ob(tensorlib.tensor(flat), tensorlib.tensor(offs))
        ot = tb(torch.tensor(flat), torch.tensor(offs))
        assert_close(oa, ot, "float32")
        g = randn(tuple(ot.shape), "float32")
        oa.backward(tensorlib.tensor(g))
        ot.backward(torch.tensor(g))
        assert_close(ob.weight.grad, tb.weight.grad, "float32")


def test_dropout_and_activation_modules_follow_training_flag():
    d = nn.Dropout(0.5)
    x = tensorlib.ones(1000)
    assert (d(x).numpy() == 0).any()
    d.eval()
    assert (d(x).numpy() == 1).all()
    r = nn.RReLU(0.1, 0.3)
    neg = -tensorlib.ones(500)
    assert len(set(r(neg).tolist())) > 1
    r.eval()
    assert set(r(neg).tolist()) == {float(np.float32(-0.2))}
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got -0.1"):
        nn.Dropout(-0.1)


# --------------------------------------------------------------------------- sampling grids

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [2, 3])
def test_affine_grid_and_grid_sample(k, dtype):
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-9, atol=1e-11)
    x = randn((2, 3) + (4, 5, 6)[:k], dtype)
    # locations beyond [-1, 1] exercise the padding modes
    g = rand((2,) + (3, 4, 2)[:k] + (k,), dtype, 1, -1.3, 1.3)
    for mode in ("bilinear", "nearest", "bicubic"):
        if mode == "bicubic" and k == 3:
            continue
        for pm in ("zeros", "border", "reflection"):
            for ac in (False, True):
                compare(torch, "grid_sample", [x, g], {"mode": mode, "padding_mode": pm,
                                                       "align_corners": ac},
                        grad=(0, 1), dtype=dtype, tol=tol)
    theta = randn((2, k, k + 1), dtype, 2)
    for ac in (False, True):
        compare(torch, "affine_grid", [theta, (2, 3) + (4, 5, 6)[:k]], {"align_corners": ac},
                grad=(0,), dtype=dtype, tol=tol)


def test_grid_sample_gradcheck_and_errors():
    x = tensorlib.tensor(randn((1, 2, 3, 4)), requires_grad=True)
    g = tensorlib.tensor(rand((1, 2, 3, 2), seed=1, lo=-1.2, hi=1.2), requires_grad=True)
    for pm in ("zeros", "border", "reflection"):
        assert gradcheck(lambda a, b: F.grid_sample(a, b, "bilinear", pm, False), (x, g))
    assert gradcheck(lambda a, b: F.grid_sample(a, b, "bicubic", "zeros", True), (x, g))
    th = tensorlib.tensor(randn((1, 2, 3)), requires_grad=True)
    assert gradcheck(lambda t: F.affine_grid(t, (1, 1, 3, 2), align_corners=False), (th,))
    with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
        F.grid_sample(x.detach(), g.detach())
    with pytest.raises(ValueError, match="expected mode to be 'bilinear', 'nearest' or "
                                         "'bicubic', but got: 'cubic'"):
        F.grid_sample(x, g, mode="cubic", align_corners=False)
    with pytest.raises(ValueError, match=r"Expected a batch of 2D affine matrices of shape "
                                         r"Nx2x3 for size torch.Size\(\[1, 1, 3, 2\]\). Got "
                                         r"torch.Size\(\[1, 3, 3\]\)."):
        F.affine_grid(tensorlib.ones(1, 3, 3), (1, 1, 3, 2), align_corners=False)
    with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
        F.grid_sample(tensorlib.ones(1, 1, 2, 2, 2), tensorlib.zeros(1, 1, 1, 1, 3),
                      mode="bicubic", align_corners=False)


# --------------------------------------------------------------------------- meta, memory

def _training_calls(dev):
    """A spread of functionals as a training step uses them, on device ``dev``."""
    def run():
        x = tensorlib.randn(4, 3, 6, 6, device=dev, requires_grad=True)
        w = tensorlib.randn(5, 3 * 6 * 6, device=dev, requires_grad=True)
        emb = tensorlib.randn(10, 8, device=dev, requires_grad=True)
        idx = tensorlib.zeros(4, 3, dtype=tensorlib.int64, device=dev)
        y = tensorlib.zeros(4, dtype=tensorlib.int64, device=dev)
        h = F.gelu(F.batch_norm(x, None, None, training=True))
        h = F.dropout(F.pad(h, (1, 1, 1, 1), mode="reflect"), 0.1)
        h = F.interpolate(h, size=(6, 6), mode="bilinear", align_corners=False)
        h = F.layer_norm(F.unfold(h, 3, padding=1).sum(1), (36,))
        logits = F.linear(F.relu(h).repeat(1, 3), w)
        e = F.embedding(idx, emb, padding_idx=0)
        att = F.scaled_dot_product_attention(e, e, e, is_causal=True)
        loss = F.cross_entropy(logits, y, label_smoothing=0.1) + F.mse_loss(att, e.detach()) \
            + F.binary_cross_entropy_with_logits(logits, torch_like_zeros(logits))
        loss.backward()
        return loss, x.grad, w.grad, emb.grad
    return run


def torch_like_zeros(t):
    return tensorlib.zeros(t.shape, dtype=t.dtype, device=t.device)


def test_functionals_run_on_meta_with_cpu_shapes():
    cpu = _training_calls("cpu")()
    meta = _training_calls("meta")()
    for a, b in zip(cpu, meta):
        assert b.is_meta and tuple(a.shape) == tuple(b.shape)


def test_no_memory_left_after_backward_without_gc(no_gc):
    from tensorlib import memory
    run = _training_calls("cpu")
    run()                                   # warm any one-time allocations
    base = memory.memory_allocated()
    out = run()
    del out
    assert memory.memory_allocated() == base
    base = memory.memory_allocated()
    lp = tensorlib.randn(6, 2, 4, requires_grad=True)
    F.ctc_loss(lp.log_softmax(2), tensorlib.tensor([[1, 2], [3, 3]]), [6, 5], [2, 2]).backward()
    x = tensorlib.randn(1, 2, 4, 4, requires_grad=True)
    g = tensorlib.rand(1, 3, 3, 2, requires_grad=True)
    F.grid_sample(x, g, "bicubic", "reflection", False).sum().backward()
    del lp, x, g
    assert memory.memory_allocated() == base


LEAK_CASES = {
    "affine_grid": (lambda t: F.affine_grid(t, (2, 1, 3, 4), align_corners=False), (2, 2, 3)),
    "bilinear": (lambda t: F.bilinear(t, t, tensorlib.ones(2, 6, 6)), (3, 4, 6)),
    "linear_3d": (lambda t: F.linear(t, tensorlib.ones(2, 6), tensorlib.ones(2)), (3, 4, 6)),
    "pdist": (F.pdist, (5, 3)),
    "group_norm": (lambda t: F.group_norm(t, 3), (2, 3, 4)),
    "fold": (lambda t: F.fold(t, (4, 4), 2), (1, 8, 9)),
    "bicubic": (lambda t: F.interpolate(t, scale_factor=2, mode="bicubic"), (1, 2, 3, 3)),
    "multilabel_margin": (lambda t: F.multilabel_margin_loss(
        t, tensorlib.tensor([[1, 0, -1, 2]] * 3)), (3, 4)),
    "embedding_bag_max": (lambda w: F.embedding_bag(tensorlib.tensor([1, 2, 3, 4]), w,
                                                    tensorlib.tensor([0, 2]), mode="max"),
                          (6, 3)),
    "grid_sample_3d": (lambda t: F.grid_sample(t, tensorlib.zeros(1, 2, 2, 2, 3),
                                               align_corners=True), (1, 2, 3, 3, 3)),
}


@pytest.mark.parametrize("name", sorted(LEAK_CASES))
def test_functional_graphs_free_by_refcount(name, no_gc):
    from tensorlib import memory
    fn, shape = LEAK_CASES[name]

    def step():
        x = tensorlib.randn(*shape, requires_grad=True)
        fn(x).sum().backward()
    step()
    base = memory.memory_allocated()
    step()
    assert memory.memory_allocated() == base
