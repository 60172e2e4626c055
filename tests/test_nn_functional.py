"""tensorlib.nn.functional activations and the non-loss functionals, side by side with
torch.nn.functional: forward and gradients, float32 and float64, gradcheck, errors."""
import warnings

import numpy as np
import pytest

import tensorlib
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck

from nn_ref import assert_close, compare, rand, randn

torch = pytest.importorskip("torch")
TF = torch.nn.functional

SHAPES = [(7,), (3, 5), (2, 3, 4)]

# (name, kwargs) for the pointwise activations
ACTIVATIONS = [
    ("relu", {}), ("relu6", {}), ("leaky_relu", {}), ("leaky_relu", {"negative_slope": 0.2}),
    ("elu", {}), ("elu", {"alpha": 0.5}), ("selu", {}), ("celu", {}), ("celu", {"alpha": 2.0}),
    ("gelu", {}), ("gelu", {"approximate": "tanh"}), ("silu", {}), ("mish", {}),
    ("sigmoid", {}), ("tanh", {}), ("hardtanh", {}), ("hardtanh", {"min_val": -2.0,
                                                                   "max_val": 0.5}),
    ("hardswish", {}), ("hardsigmoid", {}), ("softplus", {}),
    ("softplus", {"beta": 2.0, "threshold": 1.5}), ("softsign", {}), ("tanhshrink", {}),
    ("logsigmoid", {}), ("hardshrink", {}), ("hardshrink", {"lambd": 1.0}), ("softshrink", {}),
    ("softshrink", {"lambd": 0.2}), ("rrelu", {}),
]


def _act_input(shape, dtype, seed=0):
    # scaled so the piecewise activations see every branch, kept away from the kinks
    x = randn(shape, dtype, seed) * 4
    x[np.abs(x) < 1e-3] = 0.5
    for kink in (-3.0, 3.0, 0.5, -0.5, 1.0, -1.0, 0.2, -0.2, 6.0, 1.5):
        x[np.abs(x - kink) < 1e-3] += 0.01
    return x


@pytest.mark.parametrize("name,kw", ACTIVATIONS, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation_matches_torch(name, kw, dtype):
    # PyTorch's hardsigmoid backward multiplies by the float32 constant 1.0f / 6.0f even in
    # float64 (3e-8 relative); ours is the exact 1/6 (checked by gradcheck below)
    tol = dict(rtol=1e-7, atol=1e-12) if name == "hardsigmoid" and dtype == "float64" else None
    for i, shape in enumerate(SHAPES):
        compare(torch, name, [_act_input(shape, dtype, i)], kw, dtype=dtype, tol=tol)


def test_activation_large_values():
    x = np.array([-100.0, -30.0, -20.5, 0.0, 20.5, 30.0, 100.0])
    for name in ("logsigmoid", "softplus", "mish", "selu", "celu", "sigmoid", "silu"):
        compare(torch, name, [x], dtype="float64")


@pytest.mark.parametrize("name,kw", [a for a in ACTIVATIONS if a[0] != "rrelu"] +
                         [("threshold", {"threshold": 0.3, "value": -2.0})],
                         ids=lambda v: str(v))
def test_activation_gradcheck(name, kw):
    x = tensorlib.tensor(_act_input((2, 3), "float64", 5), requires_grad=True)
    assert gradcheck(lambda t: getattr(F, name)(t, **kw), (x,))


def test_threshold_and_glu():
    x = _act_input((4, 6), "float64")
    compare(torch, "threshold", [x, 0.3, -2.0])
    for dim in (-1, 0, 1):
        compare(torch, "glu", [x], {"dim": dim})
    assert gradcheck(lambda t: F.glu(t, 0), (tensorlib.tensor(x, requires_grad=True),))
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 "
                                           "is size 5"):
        F.glu(tensorlib.ones(3, 5))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_family(dtype):
    x = randn((2, 3, 4), dtype)
    for name in ("softmax", "log_softmax", "softmin"):
        for dim in (0, 1, 2, -1):
            compare(torch, name, [x], {"dim": dim}, dtype=dtype)
    compare(torch, "softmin", [x], {"dim": 1, "dtype": torch.float64},
            ours=lambda t, dim, dtype: F.softmin(t, dim=dim, dtype=tensorlib.float64),
            dtype="float64" if dtype == "float64" else "float32")
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        y = F.softmax(tensorlib.tensor(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_close(y, TF.softmax(torch.tensor(x)), dtype)
        assert_close(F.log_softmax(tensorlib.tensor(x[0])),
                     TF.log_softmax(torch.tensor(x[0])), dtype)


def test_prelu():
    x = _act_input((2, 3, 4), "float64")
    compare(torch, "prelu", [x, np.array([0.1, 0.2, -0.3])], grad=(0, 1))
    compare(torch, "prelu", [x, np.array([0.25])], grad=(0, 1))
    compare(torch, "prelu", [x[0, 0], np.array([0.25])], grad=(0, 1))
    with pytest.raises(RuntimeError, match="Found parameter numbers = 3 and channel size = 5"):
        F.prelu(tensorlib.ones(3, 5), tensorlib.ones(3))


def test_inplace_variants():
    x = _act_input((3, 4), "float64")
    for name, ref in [("relu_", TF.relu), ("elu_", TF.elu), ("leaky_relu_", TF.leaky_relu),
                      ("hardtanh_", TF.hardtanh), ("selu_", TF.selu), ("celu_", TF.celu)]:
        a = tensorlib.tensor(x)
        out = getattr(F, name)(a)
        assert out is a
        assert_close(a, ref(torch.tensor(x)))
    for name in ("relu", "relu6", "elu", "selu", "celu", "silu", "mish", "hardswish",
                 "hardsigmoid", "leaky_relu", "hardtanh", "threshold"):
        args = (0.3, -2.0) if name == "threshold" else ()
        leaf = tensorlib.tensor(x, requires_grad=True)
        a = leaf * 1.0
        out = getattr(F, name)(a, *args, inplace=True)
        assert out is a
        tleaf = torch.tensor(x, requires_grad=True)
        tout = getattr(TF, name)(tleaf * 1.0, *args, inplace=True)
        assert_close(out, tout)
        tol = dict(rtol=1e-7, atol=1e-12) if name == "hardsigmoid" else None  # see above
        g = randn((3, 4))
        out.backward(tensorlib.tensor(g))
        tout.backward(torch.tensor(g))
        assert_close(leaf.grad, tleaf.grad, tol=tol, what=name)


def test_rrelu_training_uses_slopes_in_range():
    tensorlib.manual_seed(0)
    x = tensorlib.tensor(-np.ones(1000), requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = -y.detach().numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and slopes.std() > 0.03
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slopes)
    tensorlib.manual_seed(0)
    again = F.rrelu(tensorlib.tensor(-np.ones(1000)), 0.1, 0.3, training=True)
    np.testing.assert_array_equal(again.numpy(), y.detach().numpy())
    pos = tensorlib.tensor(np.ones(5))
    assert F.rrelu(pos, training=True).tolist() == [1.0] * 5


def test_gumbel_softmax():
    tensorlib.manual_seed(1)
    logits = tensorlib.tensor(randn((4, 5)), requires_grad=True)
    y = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(y.sum(-1).detach().numpy(), np.ones(4))
    h = F.gumbel_softmax(logits, hard=True)
    hv = h.detach().numpy()
    assert set(np.unique(hv)) <= {0.0, 1.0} and (hv.sum(-1) == 1).all()
    h.sum().backward()        # the soft sample's gradient: rows of softmax sum to 0
    np.testing.assert_allclose(logits.grad.numpy().sum(-1), np.zeros(4), atol=1e-12)


# --------------------------------------------------------------------------- others

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linear_and_bilinear(dtype):
    x, w, b = randn((4, 3), dtype), randn((5, 3), dtype, 1), randn((5,), dtype, 2)
    compare(torch, "linear", [x, w, b], grad=(0, 1, 2), dtype=dtype)
    compare(torch, "linear", [x, w], grad=(0, 1), dtype=dtype)
    compare(torch, "linear", [randn((2, 4, 3), dtype), w, b], grad=(0, 1, 2), dtype=dtype)
    compare(torch, "linear", [randn((3,), dtype), w, b], grad=(0, 1, 2), dtype=dtype)
    x1, x2 = randn((4, 3), dtype), randn((4, 2), dtype, 1)
    W, bb = randn((5, 3, 2), dtype, 2), randn((5,), dtype, 3)
    compare(torch, "bilinear", [x1, x2, W, bb], grad=(0, 1, 2, 3), dtype=dtype)
    compare(torch, "bilinear", [randn((2, 4, 3), dtype), randn((2, 4, 2), dtype), W],
            grad=(0, 1, 2), dtype=dtype)


def test_linear_gradcheck():
    x = tensorlib.tensor(randn((3, 2)), requires_grad=True)
    w = tensorlib.tensor(randn((4, 2), seed=1), requires_grad=True)
    b = tensorlib.tensor(randn((4,), seed=2), requires_grad=True)
    assert gradcheck(F.linear, (x, w, b))
    w3 = tensorlib.tensor(randn((2, 3, 2), seed=3), requires_grad=True)
    assert gradcheck(F.bilinear, (tensorlib.tensor(randn((2, 3)), requires_grad=True),
                                  x[:2].detach().requires_grad_(), w3))


def test_one_hot():
    t = np.array([[0, 3], [2, 1]])
    assert F.one_hot(tensorlib.tensor(t)).tolist() == TF.one_hot(torch.tensor(t)).tolist()
    assert F.one_hot(tensorlib.tensor(t), 6).tolist() == TF.one_hot(torch.tensor(t), 6).tolist()
    assert F.one_hot(tensorlib.tensor(t)).dtype == tensorlib.int64
    for bad, kw, msg in [([1.0], {}, "only applicable to index tensor of type LongTensor"),
                         ([-1], {}, "Class values must be non-negative."),
                         ([3], {"num_classes": 2}, "Class values must be smaller than")]:
        with pytest.raises(RuntimeError, match=msg):
            F.one_hot(tensorlib.tensor(bad), **kw)
    with pytest.raises(RuntimeError, match="Can not infer total number of classes"):
        F.one_hot(tensorlib.tensor([], dtype=tensorlib.int64))
    assert tuple(F.one_hot(tensorlib.tensor([], dtype=tensorlib.int64), 3).shape) == (0, 3)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_distances(dtype):
    x1, x2 = randn((4, 5), dtype), randn((4, 5), dtype, 1)
    for p in (1.0, 2.0, 3.0):
        compare(torch, "normalize", [x1], {"p": p, "dim": 1}, dtype=dtype)
        compare(torch, "pairwise_distance", [x1, x2], {"p": p}, grad=(0, 1), dtype=dtype)
    compare(torch, "normalize", [randn((2, 3, 4), dtype)], {"dim": -1}, dtype=dtype)
    compare(torch, "pairwise_distance", [x1, x2], {"keepdim": True, "eps": 0.1}, grad=(0, 1),
            dtype=dtype)
    compare(torch, "pairwise_distance", [x1, x2[0]], grad=(0, 1), dtype=dtype)
    for dim in (0, 1):
        compare(torch, "cosine_similarity", [x1, x2], {"dim": dim}, grad=(0, 1), dtype=dtype)
    compare(torch, "cosine_similarity", [randn((2, 3, 4), dtype), randn((3, 4), dtype)],
            {"dim": -1}, grad=(0, 1), dtype=dtype)
    compare(torch, "pdist", [x1], grad=(0,), dtype=dtype)
    compare(torch, "pdist", [x1], {"p": 1.0}, grad=(0,), dtype=dtype)


def test_distance_gradcheck():
    a = tensorlib.tensor(randn((3, 4)), requires_grad=True)
    b = tensorlib.tensor(randn((3, 4), seed=1), requires_grad=True)
    assert gradcheck(F.cosine_similarity, (a, b))
    assert gradcheck(F.pairwise_distance, (a, b))
    assert gradcheck(F.normalize, (a,))
    assert gradcheck(F.pdist, (a,))


PADS = [
    ("constant", (2, 3), 3), ("constant", (1, 0, 2, 1), 4), ("constant", (-1, 2, 1, -1), 4),
    ("constant", (1, 1, 1, 1, 1, 1), 5), ("constant", (1, 2, 0, 1, 1, 0), 3),
    ("reflect", (2, 1), 3), ("reflect", (2, 1), 2), ("reflect", (1, 2, 2, 1), 4),
    ("reflect", (1, 2, 2, 1, 1, 1), 5), ("replicate", (3, 1), 3), ("replicate", (1, 2, 3, 0), 4),
    ("replicate", (1, 0, 1, 2, 2, 1), 5), ("circular", (2, 1), 3), ("circular", (1, 2, 2, 1), 4),
    ("circular", (1, 2, 1, 1, 2, 0), 5), ("circular", (-1, 2), 3), ("reflect", (-1, 2), 3),
    ("replicate", (2, -1, -1, 1), 4), ("replicate", (1, 1, 1, 1), 3),
]


@pytest.mark.parametrize("mode,pads,ndim", PADS, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pad_matches_torch(mode, pads, ndim, dtype):
    shape = (2, 3, 4, 5, 3)[:ndim]
    kw = {"mode": mode}
    compare(torch, "pad", [randn(shape, dtype), pads], kw, dtype=dtype)
    if mode == "constant":
        compare(torch, "pad", [randn(shape, dtype), pads], {"value": 2.5}, dtype=dtype)


def test_pad_gradcheck_and_errors():
    x = tensorlib.tensor(randn((1, 2, 4, 3)), requires_grad=True)
    for mode in ("constant", "reflect", "replicate", "circular"):
        assert gradcheck(lambda t: F.pad(t, (1, 2, 2, 1), mode=mode), (x,))
    cases = [
        (lambda: F.pad(tensorlib.ones(1, 1, 3), (3, 3), mode="reflect"), RuntimeError,
         r"Padding size should be less than the corresponding input dimension, but got: "
         r"padding \(3, 3\) at dimension 2 of input \[1, 1, 3\]"),
        (lambda: F.pad(tensorlib.ones(3), (1, 1), mode="reflect"), NotImplementedError,
         "Padding size 2 is not supported for 1D input tensor."),
        (lambda: F.pad(tensorlib.ones(1, 3), (1, 1, 1)), RuntimeError,
         "Padding length must be divisible by 2"),
        (lambda: F.pad(tensorlib.ones(1, 3), (1,) * 6), RuntimeError,
         "Padding length should be less than or equal to two times the input dimension but "
         "got padding length 6 and input of dimension 2"),
        (lambda: F.pad(tensorlib.ones(1, 1, 3), (1, 1), mode="foo"), NotImplementedError,
         "Unrecognised padding mode foo"),
        (lambda: F.pad(tensorlib.ones(1, 1, 3), (4, 1), mode="circular"), RuntimeError,
         "Padding value causes wrapping around more than once."),
    ]
    for fn, cls, msg in cases:
        with pytest.raises(cls, match=msg):
            fn()
        with pytest.raises(cls, match=msg):     # the same class and message in torch
            fn.__code__.co_consts and None
            _torch_version(fn)()


def _torch_version(fn):
    """The same lambda evaluated with torch in place of tensorlib and F."""
    g = dict(fn.__globals__, tensorlib=torch, F=TF)
    return type(fn)(fn.__code__, g)


def test_dropout_family():
    x = tensorlib.ones(2000, dtype=tensorlib.float64)
    for fn in (F.dropout, F.alpha_dropout, F.feature_alpha_dropout, F.dropout1d):
        assert fn(x.reshape(20, 100), 0.3, training=False) is not None
        np.testing.assert_array_equal(fn(x.reshape(20, 100), 0.3, training=False).numpy(),
                                      np.ones((20, 100)))
    tensorlib.manual_seed(0)
    y = F.dropout(x, 0.25).numpy()
    assert set(np.unique(y)) == {0.0, 1 / 0.75}
    assert abs((y == 0).mean() - 0.25) < 0.05
    tensorlib.manual_seed(0)
    np.testing.assert_array_equal(F.dropout(x, 0.25).numpy(), y)     # the generator's stream
    assert (F.dropout(x, 1.0).numpy() == 0).all() and F.dropout(x, 0.0) is x
    leaf = tensorlib.tensor(np.ones(100), requires_grad=True)
    out = F.dropout(leaf, 0.5)
    out.sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), out.detach().numpy())
    a = x.clone()
    assert F.dropout(a, 0.5, inplace=True) is a
    # channel-wise: whole (n, c) planes are zero or scaled
    z = F.dropout2d(tensorlib.ones(8, 16, 3, 3), 0.5).numpy()
    per = z.reshape(8, 16, 9)
    assert ((per == 0).all(-1) | (per == 2.0).all(-1)).all()
    z3 = F.dropout3d(tensorlib.ones(4, 8, 2, 2, 2), 0.5).numpy().reshape(4, 8, 8)
    assert ((z3 == 0).all(-1) | (z3 == 2.0).all(-1)).all()
    z1 = F.dropout1d(tensorlib.ones(4, 8, 5), 0.5).numpy()
    assert ((z1 == 0).all(-1) | (z1 == 2.0).all(-1)).all()
    # alpha dropout keeps mean 0 / variance 1 of a standard normal input
    tensorlib.manual_seed(3)
    n = tensorlib.randn(200000, dtype=tensorlib.float64)
    ad = F.alpha_dropout(n, 0.2, training=True).numpy()
    assert abs(ad.mean()) < 0.02 and abs(ad.std() - 1) < 0.02
    fa = F.feature_alpha_dropout(tensorlib.ones(4, 8, 5), 0.5, training=True).numpy()
    assert (fa == fa[..., :1]).all()
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        F.dropout(x, 1.5)
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received "
                                           "a 4D input"):
        F.dropout1d(tensorlib.ones(1, 2, 3, 4))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scaled_dot_product_attention(dtype):
    q, k, v = randn((2, 3, 4, 8), dtype), randn((2, 3, 6, 8), dtype, 1), \
        randn((2, 3, 6, 5), dtype, 2)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else None
    name = "scaled_dot_product_attention"
    compare(torch, name, [q, k, v], grad=(0, 1, 2), dtype=dtype, tol=tol)
    compare(torch, name, [q, k, v], {"scale": 0.3}, grad=(0, 1, 2), dtype=dtype, tol=tol)
    qs = randn((2, 3, 6, 8), dtype, 3)
    compare(torch, name, [qs, k, v], {"is_causal": True}, grad=(0, 1, 2), dtype=dtype, tol=tol)
    bmask = np.random.default_rng(4).random((4, 6)) > 0.4
    bmask[1] = False                                   # a row with every key masked
    compare(torch, name, [q, k, v], {"attn_mask": bmask}, grad=(0, 1, 2), dtype=dtype, tol=tol)
    fmask = randn((2, 1, 4, 6), dtype, 5)
    compare(torch, name, [q, k, v], {"attn_mask": fmask}, grad=(0, 1, 2), dtype=dtype, tol=tol)
    kg, vg = randn((2, 1, 6, 8), dtype, 6), randn((2, 1, 6, 5), dtype, 7)
    compare(torch, name, [q, kg, vg], {"enable_gqa": True}, grad=(0, 1, 2), dtype=dtype, tol=tol)


def test_attention_dropout_and_errors():
    q = tensorlib.ones(1, 2, 4)
    tensorlib.manual_seed(0)
    out = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert tuple(out.shape) == (1, 2, 4)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when "
                                           "is_causal=True"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=tensorlib.ones(2, 2) > 0,
                                       is_causal=True)
    with pytest.raises(RuntimeError, match="Expected attn_mask dtype to be bool or float or to "
                                           "match query dtype, but got attn_mask.dtype: long "
                                           "int and  query.dtype: float instead."):
        F.scaled_dot_product_attention(q, q, q, attn_mask=tensorlib.ones(2, 2,
                                                                         dtype=tensorlib.int64))
    with pytest.raises(RuntimeError):
        F.scaled_dot_product_attention(q, q, q, attn_mask=tensorlib.ones(3, 2))
    a = [tensorlib.tensor(randn((1, 3, 2), seed=i), requires_grad=True) for i in range(3)]
    assert gradcheck(lambda *t: F.scaled_dot_product_attention(*t, is_causal=True),
                     tuple(a))


UNFOLDS = [dict(kernel_size=2), dict(kernel_size=(2, 3), stride=2),
           dict(kernel_size=3, padding=1, dilation=2), dict(kernel_size=(3, 2), padding=(1, 0),
                                                            stride=(1, 2), dilation=(1, 2))]


@pytest.mark.parametrize("kw", UNFOLDS, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unfold_fold(kw, dtype):
    x = randn((2, 3, 7, 8), dtype)
    cols = compare(torch, "unfold", [x], kw, dtype=dtype)
    compare(torch, "unfold", [x[0]], kw, dtype=dtype)
    c = np.ascontiguousarray(cols.detach().numpy())
    compare(torch, "fold", [c, (7, 8)], kw, dtype=dtype)
    compare(torch, "fold", [c[0], (7, 8)], kw, dtype=dtype)


def test_fold_unfold_gradcheck_and_errors():
    x = tensorlib.tensor(randn((1, 2, 4, 4)), requires_grad=True)
    assert gradcheck(lambda t: F.unfold(t, 2, padding=1, stride=2), (x,))
    c = tensorlib.tensor(randn((1, 8, 9)), requires_grad=True)
    assert gradcheck(lambda t: F.fold(t, (4, 4), 2, padding=1, stride=2), (c,))
    with pytest.raises(RuntimeError, match="expected size of input's dimension 2 to match"):
        F.fold(tensorlib.ones(1, 8, 5), (4, 4), 2)
    with pytest.raises(RuntimeError, match="divisible by the product of kernel_size"):
        F.fold(tensorlib.ones(1, 7, 9), (4, 4), 2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_shuffles(dtype):
    compare(torch, "pixel_shuffle", [randn((2, 8, 3, 4), dtype), 2], dtype=dtype)
    compare(torch, "pixel_shuffle", [randn((5, 2, 9, 3, 2), dtype), 3], dtype=dtype)
    compare(torch, "pixel_unshuffle", [randn((2, 2, 6, 4), dtype), 2], dtype=dtype)
    compare(torch, "pixel_unshuffle", [randn((2, 6, 4), dtype), 2], dtype=dtype)
    compare(torch, "channel_shuffle", [randn((2, 6, 3), dtype), 3],
            theirs=lambda x, g: torch.nn.ChannelShuffle(g)(x), dtype=dtype)
    compare(torch, "channel_shuffle", [randn((2, 6, 3, 2), dtype), 2],
            theirs=lambda x, g: torch.nn.ChannelShuffle(g)(x), dtype=dtype)
    with pytest.raises(RuntimeError, match="input.size\\(-3\\)=5 is not divisible by 4"):
        F.pixel_shuffle(tensorlib.ones(1, 5, 2, 2), 2)
    with pytest.raises(RuntimeError, match="Number of channels must be divisible by groups"):
        F.channel_shuffle(tensorlib.ones(1, 5, 2), 2)
