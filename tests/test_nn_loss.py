"""tensorlib.nn.functional losses side by side with torch.nn.functional: every reduction,
the legacy size_average/reduce arguments, forward and gradients in float32 and float64,
gradcheck in float64, and PyTorch's errors for bad shapes and targets."""
import warnings

import numpy as np
import pytest

import tensorlib
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck

from nn_ref import assert_close, compare, rand, randn

torch = pytest.importorskip("torch")
TF = torch.nn.functional

REDUCTIONS = ["none", "mean", "sum"]
DTYPES = ["float32", "float64"]
SHAPES = [(5,), (3, 4), (2, 3, 4)]


def _sign(shape, seed):
    return np.where(np.random.default_rng(seed).random(shape) > 0.5, 1.0, -1.0)


def _cases(shape, dtype):
    """(name, args, kwargs, grad positions) for the elementwise-target losses."""
    x, y = randn(shape, dtype, 1), randn(shape, dtype, 2)
    p, t = rand(shape, dtype, 3, 0.05, 0.95), rand(shape, dtype, 4)
    s = _sign(shape, 5).astype(dtype)
    pos = rand(shape, dtype, 6, 0.1, 3.0)
    return [
        ("l1_loss", [x, y], {}, (0, 1)),
        ("mse_loss", [x, y], {}, (0, 1)),
        ("smooth_l1_loss", [x, y], {}, (0, 1)),
        ("smooth_l1_loss", [x, y], {"beta": 0.5}, (0, 1)),
        ("smooth_l1_loss", [x, y], {"beta": 0.0}, (0, 1)),
        ("huber_loss", [x, y], {}, (0, 1)),
        ("huber_loss", [x, y], {"delta": 0.3}, (0, 1)),
        ("binary_cross_entropy", [p, t], {}, (0, 1)),
        ("binary_cross_entropy", [p, t], {"weight": rand(shape[-1:], dtype, 7)}, (0, 1)),
        ("binary_cross_entropy_with_logits", [x * 3, t], {}, (0, 1)),
        ("binary_cross_entropy_with_logits", [x * 3, t],
         {"weight": rand(shape, dtype, 8), "pos_weight": rand(shape[-1:], dtype, 9, 0.5, 2)},
         (0, 1)),
        ("kl_div", [np.log(p), t], {"reduction": "batchmean"}, (0, 1)),
        ("kl_div", [np.log(p), np.log(pos)], {"log_target": True}, (0, 1)),
        ("poisson_nll_loss", [x, pos], {}, (0, 1)),
        ("poisson_nll_loss", [pos, pos * 2], {"log_input": False, "full": True}, (0, 1)),
        ("gaussian_nll_loss", [x, y, pos], {}, (0, 1, 2)),
        ("gaussian_nll_loss", [x, y, pos], {"full": True, "eps": 0.5}, (0, 1, 2)),
        ("hinge_embedding_loss", [x, s], {}, (0,)),
        ("hinge_embedding_loss", [x, s], {"margin": 0.2}, (0,)),
        ("soft_margin_loss", [x, s], {}, (0,)),
        ("margin_ranking_loss", [x, y, s], {}, (0, 1)),
        ("margin_ranking_loss", [x, y, s], {"margin": 0.5}, (0, 1)),
    ]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_pointwise_losses(shape, reduction, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # kl_div's 'mean' warning, in both
        for name, args, kw, grad in _cases(shape, dtype):
            if reduction == "batchmean" and name != "kl_div":
                continue
            kw = dict(kw, reduction=reduction)
            compare(torch, name, args, kw, grad=grad, dtype=dtype)


@pytest.mark.parametrize("case", range(22))
def test_pointwise_loss_gradcheck(case):
    name, args, kw, grad = _cases((2, 3), "float64")[case]
    ts = [tensorlib.tensor(a, requires_grad=i in grad) if isinstance(a, np.ndarray) else a
          for i, a in enumerate(args)]
    kw = {k: tensorlib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradcheck(lambda *t: getattr(F, name)(*t, **kw), tuple(ts))


def test_legacy_reduction_arguments():
    x, y = randn((3, 4)), randn((3, 4), seed=1)
    for sa in (None, True, False):
        for red in (None, True, False):
            if sa is None and red is None:
                continue
            for name in ("l1_loss", "mse_loss", "smooth_l1_loss", "soft_margin_loss"):
                with pytest.warns(UserWarning) as ours:
                    a = getattr(F, name)(tensorlib.tensor(x), tensorlib.tensor(y),
                                         size_average=sa, reduce=red)
                with pytest.warns(UserWarning) as theirs:
                    b = getattr(TF, name)(torch.tensor(x), torch.tensor(y),
                                          size_average=sa, reduce=red)
                assert_close(a, b)
                assert str(ours[0].message) == str(theirs[0].message)
    logp = np.log(rand((4, 3), seed=2))
    t = np.array([0, 2, 1, 2])
    with pytest.warns(UserWarning, match="reduction='sum'"):
        a = F.nll_loss(tensorlib.tensor(logp), tensorlib.tensor(t), size_average=False)
    assert_close(a, TF.nll_loss(torch.tensor(logp), torch.tensor(t), reduction="sum"))


def test_size_mismatch_warning_and_errors():
    with pytest.warns(UserWarning, match=r"Using a target size \(torch.Size\(\[4\]\)\) that is "
                                         r"different to the input size \(torch.Size\(\[3, 4\]\)\)"):
        F.mse_loss(tensorlib.ones(3, 4), tensorlib.ones(4))
    cases = [
        (lambda: F.l1_loss(tensorlib.ones(2), tensorlib.ones(2), reduction="bad"), ValueError,
         "bad is not a valid value for reduction"),
        (lambda: F.binary_cross_entropy(tensorlib.rand(3), tensorlib.rand(2)), ValueError,
         r"Using a target size \(torch.Size\(\[2\]\)\) that is different to the input size "
         r"\(torch.Size\(\[3\]\)\) is deprecated"),
        (lambda: F.binary_cross_entropy(tensorlib.rand(3) + 1, tensorlib.rand(3)),
         RuntimeError, "all elements of input should be between 0 and 1"),
        (lambda: F.binary_cross_entropy_with_logits(tensorlib.rand(3), tensorlib.rand(2)),
         ValueError, r"Target size \(torch.Size\(\[2\]\)\) must be the same as input size "
                     r"\(torch.Size\(\[3\]\)\)"),
        (lambda: F.margin_ranking_loss(tensorlib.ones(3), tensorlib.ones(3), tensorlib.ones(3, 1)),
         RuntimeError, "margin_ranking_loss : All input tensors should have same dimension"),
        (lambda: F.gaussian_nll_loss(tensorlib.ones(3, 2), tensorlib.ones(3, 2),
                                     tensorlib.ones(3, 3)), ValueError, "var is of incorrect size"),
        (lambda: F.gaussian_nll_loss(tensorlib.ones(3, 2), tensorlib.ones(3, 2),
                                     -tensorlib.ones(3, 2)), ValueError,
         "var has negative entry/entries"),
        (lambda: F.multi_margin_loss(tensorlib.ones(3, 5), tensorlib.tensor([0, 1, 2]), p=3),
         ValueError, "only p == 1 and p == 2 supported"),
        (lambda: F.multi_margin_loss(tensorlib.ones(3, 5), tensorlib.tensor([0, 1, 7])),
         RuntimeError, "target out of range"),
        (lambda: F.multilabel_margin_loss(tensorlib.ones(3, 5),
                                          tensorlib.tensor([[0, 1, 7, -1, 0]] * 3)),
         RuntimeError, "argument #2 'target' is out of range"),
        (lambda: F.triplet_margin_loss(tensorlib.ones(3, 2), tensorlib.ones(3, 2),
                                       tensorlib.ones(3)), RuntimeError,
         "anchor 2D, positive 2D, and negative 1D inputs"),
        (lambda: F.cosine_embedding_loss(tensorlib.ones(3, 2), tensorlib.ones(3, 2),
                                         tensorlib.ones(3, 2)), RuntimeError,
         "0D or 1D target tensor expected, multi-target not supported"),
    ]
    for fn, cls, msg in cases:
        with pytest.raises(cls, match=msg):
            fn()
        g = dict(fn.__globals__, tensorlib=torch, F=TF)
        with pytest.raises(cls, match=msg):          # torch raises the same
            type(fn)(fn.__code__, g)()


# --------------------------------------------------------------------------- classification

def _class_case(kind, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if kind == "NC":
        x, t = randn((5, 4), dtype, seed), rng.integers(0, 4, 5)
    elif kind == "C":
        x, t = randn((4,), dtype, seed), np.array(2)
    else:
        x, t = randn((3, 4, 2, 3), dtype, seed), rng.integers(0, 4, (3, 2, 3))
    return x, t


@pytest.mark.parametrize("kind", ["NC", "C", "NCd"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_entropy_and_nll(kind, reduction, dtype):
    x, t = _class_case(kind, dtype)
    w = rand((4,), dtype, 9, 0.2, 2.0)
    for kw in ({}, {"weight": w}, {"ignore_index": 1}, {"weight": w, "ignore_index": 2},
               {"label_smoothing": 0.15}, {"label_smoothing": 0.2, "weight": w,
                                            "ignore_index": 0}):
        kw = dict(kw, reduction=reduction)
        if kind == "C" and "ignore_index" in kw and kw["ignore_index"] == 2 \
                and reduction == "mean":
            continue        # every target ignored: 0 / 0 in both (NaN), checked below
        compare(torch, "cross_entropy", [x, t], kw, dtype=dtype)
        kw.pop("label_smoothing", None)
        compare(torch, "nll_loss", [x, t], kw, dtype=dtype)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_entropy_probability_targets(reduction, dtype):
    for shape in [(5, 4), (4,), (3, 4, 2, 3)]:
        x = randn(shape, dtype)
        p = rand(shape, dtype, 1)
        p = p / p.sum(axis=0 if len(shape) == 1 else 1, keepdims=True)
        w = rand((4,), dtype, 9, 0.2, 2.0)
        for kw in ({}, {"weight": w}, {"label_smoothing": 0.3},
                   {"weight": w, "label_smoothing": 0.1}):
            compare(torch, "cross_entropy", [x, p], dict(kw, reduction=reduction),
                    grad=(0, 1), dtype=dtype)


def test_cross_entropy_gradcheck_and_all_ignored():
    x, t = _class_case("NCd", "float64")
    xt = tensorlib.tensor(np.ascontiguousarray(x[:2, :, :1]), requires_grad=True)
    tt = tensorlib.tensor(np.ascontiguousarray(t[:2, :1]))
    w = tensorlib.tensor(rand((4,), seed=9, lo=0.2, hi=2))
    assert gradcheck(lambda a: F.cross_entropy(a, tt, weight=w, label_smoothing=0.1,
                                               ignore_index=1), (xt,))
    assert gradcheck(lambda a: F.nll_loss(a, tt, weight=w), (xt,))
    p = tensorlib.tensor(rand((2, 4), seed=3), requires_grad=True)
    x2 = tensorlib.tensor(np.ascontiguousarray(x[:2, :, 0, 0]), requires_grad=True)
    assert gradcheck(lambda a, b: F.cross_entropy(a, b), (x2, p))
    out = F.cross_entropy(tensorlib.zeros(2, 3), tensorlib.tensor([1, 1]), ignore_index=1)
    ref = TF.cross_entropy(torch.zeros(2, 3), torch.tensor([1, 1]), ignore_index=1)
    assert np.isnan(out.item()) and np.isnan(ref.item())


def test_class_target_errors():
    cases = [
        (lambda: F.cross_entropy(tensorlib.ones(3, 5), tensorlib.tensor([0, 5, 1])), IndexError,
         "Target 5 is out of bounds."),
        (lambda: F.nll_loss(tensorlib.ones(3, 5), tensorlib.tensor([0, -3, 1])), IndexError,
         "Target -3 is out of bounds."),
        (lambda: F.nll_loss(tensorlib.ones(2, 3, 4), tensorlib.tensor([[0, 9, 1, 1]] * 2)),
         IndexError, "Target 9 is out of bounds."),
        (lambda: F.nll_loss(tensorlib.ones(3, 5), tensorlib.tensor([0, 1])), ValueError,
         r"Expected input batch_size \(3\) to match target batch_size \(2\)."),
        (lambda: F.nll_loss(tensorlib.ones(2, 3, 4), tensorlib.tensor([[0, 1, 1]] * 2)),
         RuntimeError, r"Expected target size \[2, 4\], got \[2, 3\]"),
        (lambda: F.nll_loss(tensorlib.ones(3, 5), tensorlib.tensor([0, 1, 1]),
                            weight=tensorlib.ones(2)),
         RuntimeError, "weight tensor should be defined either for all 5 classes or no classes "
                       r"but got weight tensor of shape: \[2\]"),
        (lambda: F.nll_loss(tensorlib.ones(()), tensorlib.tensor(0)), ValueError,
         r"Expected 1 or more dimensions \(got 0\)"),
        (lambda: F.cross_entropy(tensorlib.ones(3, 5), tensorlib.rand(3)), RuntimeError,
         "expected target dtype to be Long or Byte, but got Float"),
    ]
    for fn, cls, msg in cases:
        with pytest.raises(cls, match=msg):
            fn()
        g = dict(fn.__globals__, tensorlib=torch, F=TF)
        with pytest.raises(cls, match=msg):
            type(fn)(fn.__code__, g)()


# --------------------------------------------------------------------------- margin losses

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_multi_class_margin_losses(reduction, dtype):
    rng = np.random.default_rng(0)
    x = randn((5, 4), dtype)
    t = rng.integers(0, 4, 5)
    w = rand((4,), dtype, 2, 0.2, 2.0)
    kw = {"reduction": reduction}
    for extra in ({}, {"p": 2}, {"margin": 0.4, "weight": w}, {"p": 2, "weight": w}):
        compare(torch, "multi_margin_loss", [x, t], dict(kw, **extra), dtype=dtype)
    compare(torch, "multi_margin_loss", [x[0], np.array([2])], kw, dtype=dtype)
    ml = np.array([[3, 0, -1, 1], [1, 2, 3, -1], [0, 0, 1, -1], [-1, 2, 1, 0], [0, 1, 2, 3]])
    compare(torch, "multilabel_margin_loss", [x, ml], kw, dtype=dtype)
    compare(torch, "multilabel_margin_loss", [x[0], ml[0]], kw, dtype=dtype)
    lab = (rng.random((5, 4)) > 0.5).astype(dtype)
    compare(torch, "multilabel_soft_margin_loss", [x, lab], kw, grad=(0, 1), dtype=dtype)
    compare(torch, "multilabel_soft_margin_loss", [x, lab], dict(kw, weight=w), grad=(0, 1),
            dtype=dtype)
    x1, x2 = randn((5, 3), dtype, 3), randn((5, 3), dtype, 4)
    y = _sign((5,), 6).astype(dtype)
    for margin in (0.0, 0.3):
        compare(torch, "cosine_embedding_loss", [x1, x2, y], dict(kw, margin=margin),
                grad=(0, 1), dtype=dtype)
    compare(torch, "cosine_embedding_loss", [x1[0], x2[0], y[:1].reshape(())], kw, grad=(0, 1),
            dtype=dtype)
    a, p, n = randn((5, 3), dtype, 7), randn((5, 3), dtype, 8), randn((5, 3), dtype, 9)
    for extra in ({}, {"margin": 2.0, "p": 1.0}, {"swap": True}, {"eps": 0.1, "p": 3}):
        compare(torch, "triplet_margin_loss", [a, p, n], dict(kw, **extra), grad=(0, 1, 2),
                dtype=dtype)
    compare(torch, "triplet_margin_with_distance_loss", [a, p, n], dict(kw, swap=True),
            grad=(0, 1, 2), dtype=dtype)
    cos_d = (lambda lib: lambda u, v: 1 - lib.nn.functional.cosine_similarity(u, v))
    compare(torch, "triplet_margin_with_distance_loss", [a, p, n], dict(kw, margin=0.5),
            grad=(0, 1, 2), dtype=dtype,
            ours=lambda *t, **k: F.triplet_margin_with_distance_loss(
                *t, distance_function=cos_d(tensorlib), **k),
            theirs=lambda *t, **k: TF.triplet_margin_with_distance_loss(
                *t, distance_function=cos_d(torch), **k))


def test_margin_losses_gradcheck():
    x = tensorlib.tensor(randn((3, 4)), requires_grad=True)
    t = tensorlib.tensor([1, 3, 0])
    w = tensorlib.tensor(rand((4,), seed=2, lo=0.2, hi=2))
    assert gradcheck(lambda a: F.multi_margin_loss(a, t, p=2, weight=w), (x,))
    ml = tensorlib.tensor([[3, 0, -1, 1], [1, 2, 3, -1], [0, -1, 1, 2]])
    assert gradcheck(lambda a: F.multilabel_margin_loss(a, ml), (x,))
    lab = tensorlib.tensor((randn((3, 4), seed=3) > 0).astype("float64"))
    assert gradcheck(lambda a: F.multilabel_soft_margin_loss(a, lab, weight=w), (x,))
    y = tensorlib.tensor([1.0, -1.0, 1.0])
    x2 = tensorlib.tensor(randn((3, 4), seed=4), requires_grad=True)
    assert gradcheck(lambda a, b: F.cosine_embedding_loss(a, b, y, margin=-0.5), (x, x2))
    x3 = tensorlib.tensor(randn((3, 4), seed=5), requires_grad=True)
    assert gradcheck(lambda a, b, c: F.triplet_margin_loss(a, b, c, margin=3.0, swap=True),
                     (x, x2, x3))


# --------------------------------------------------------------------------- CTC

def _ctc_inputs(dtype, seed=0, T=12, N=3, C=5, S=4):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((T, N, C)).astype(dtype)
    lp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    tl = np.array([S, 2, 3])[:N]
    targets = rng.integers(1, C, (N, S))
    targets[0, 1] = targets[0, 0]            # a repeated label needs a blank between
    il = np.array([T, T - 2, 7])[:N]
    return lp, targets, il, tl


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_ctc_loss(reduction, dtype):
    lp, targets, il, tl = _ctc_inputs(dtype)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-9, atol=1e-10)
    kw = {"reduction": reduction}
    compare(torch, "ctc_loss", [lp, targets, il, tl], kw, dtype=dtype, tol=tol)
    # concatenated 1-D targets, tensor or list lengths, another blank
    flat = np.concatenate([targets[n, :tl[n]] for n in range(3)])
    compare(torch, "ctc_loss", [lp, flat, tuple(il), tuple(tl)], kw, dtype=dtype, tol=tol)
    lp2, t2, il2, tl2 = _ctc_inputs(dtype, seed=1)
    t2 = np.where(t2 == 4, 0, t2)           # label 0 is a class, 4 the blank
    compare(torch, "ctc_loss", [lp2, t2, il2, tl2], dict(kw, blank=4), dtype=dtype, tol=tol)
    # unbatched
    compare(torch, "ctc_loss", [lp[:, 0], targets[0], il[:1].reshape(()), tl[:1].reshape(())],
            kw, dtype=dtype, tol=tol,
            theirs=lambda a, b, c, d, **k: TF.ctc_loss(a, b, c, d, **k),
            ours=lambda a, b, c, d, **k: F.ctc_loss(a, b, c, d, **k))


def test_ctc_impossible_and_gradcheck():
    # 3 frames cannot emit "1 1" (needs a blank between): infinite loss; zero_infinity -> 0
    lp = np.log(np.full((3, 1, 3), 1 / 3))
    args = [lp, np.array([[1, 1]]), np.array([3]), np.array([2])]
    for zi in (False, True):
        compare(torch, "ctc_loss", args, {"reduction": "sum", "zero_infinity": zi},
                grad=(0,) if zi else ())
    lp, targets, il, tl = _ctc_inputs("float64", T=6, N=2, C=4, S=2)
    x = tensorlib.tensor(lp, requires_grad=True)
    assert gradcheck(lambda a: F.ctc_loss(a.log_softmax(2), tensorlib.tensor(targets),
                                          il.tolist(), tl.tolist()), (x,))
