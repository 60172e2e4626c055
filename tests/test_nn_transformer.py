"""MultiheadAttention and the Transformer family side by side with PyTorch: torch's
weights copied into ours through state_dict (NumPy values), the same inputs, and the
outputs, every input gradient and every parameter gradient compared; state_dict keys,
initialisation statistics, gradcheck and torch's errors for bad masks."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlib
from tensorlib.nn._attention import multi_head_attention_forward

torch = pytest.importorskip("torch")

pytestmark = [
    # both libraries warn alike when a bool key padding mask meets a float attention mask
    pytest.mark.filterwarnings("ignore:Support for mismatched"),
    pytest.mark.filterwarnings("ignore:enable_nested_tensor is True"),
    pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors"),
]

# float32: sums over at most a few dozen terms of O(1) values, so 1e-5 relative holds; the
# absolute part covers gradients that cancel to near zero (LayerNorm's sum of gradients)
TOL = {"float32": dict(rtol=1e-5, atol=2e-6), "float64": dict(rtol=1e-10, atol=1e-12)}
NP = {"float32": np.float32, "float64": np.float64}


def _np(x):
    return x.detach().numpy()


def copy_weights(theirs, ours):
    """Load torch's state_dict into ours (strict: the key sets must be equal)."""
    sd = {k: tensorlib.tensor(v.detach().numpy().copy()) for k, v in theirs.state_dict().items()}
    ours.load_state_dict(sd)


def pair(tcls, ocls, *args, dtype="float32", train=False, **kwargs):
    torch.manual_seed(0)
    theirs = tcls(*args, **kwargs)
    ours = ocls(*args, **kwargs)
    if dtype == "float64":
        theirs, ours = theirs.double(), ours.double()
    copy_weights(theirs, ours)
    theirs.train(train)
    ours.train(train)
    return theirs, ours


def compare(theirs, ours, arrays, call, dtype, tol=None, seed=1):
    """``call(lib, module, *tensors)`` in both libraries with the same ``arrays`` (requiring
    grad); compares the outputs (a tensor or a tuple, None entries skipped) and, through
    random cotangents, the gradients of every input and every parameter."""
    tol = tol or TOL[dtype]
    rng = np.random.default_rng(seed)
    res = {}
    cots = None
    for lib, mod in ((torch, theirs), (tensorlib, ours)):
        xs = [lib.tensor(a).requires_grad_() for a in arrays]
        out = call(lib, mod, *xs)
        outs = [o for o in (out if isinstance(out, tuple) else (out,)) if o is not None]
        if cots is None:
            cots = [rng.standard_normal(tuple(o.shape)).astype(NP[dtype]) for o in outs]
        loss = sum((o * lib.tensor(g)).sum() for o, g in zip(outs, cots))
        loss.backward()
        res[lib] = ([_np(o) for o in outs], [None if x.grad is None else _np(x.grad) for x in xs],
                    {n: (None if p.grad is None else _np(p.grad))
                     for n, p in mod.named_parameters()})
    (to, tx, tp), (oo, ox, op) = res[torch], res[tensorlib]
    assert len(to) == len(oo)
    for i, (a, b) in enumerate(zip(oo, to)):
        assert a.dtype == b.dtype and a.shape == b.shape, (i, a.dtype, b.dtype, a.shape, b.shape)
        np.testing.assert_allclose(a, b, err_msg=f"output {i}", **tol)
    for i, (a, b) in enumerate(zip(ox, tx)):
        assert (a is None) == (b is None), f"grad of input {i}"
        if b is not None:
                np.testing.assert_allclose(a, b, err_msg=f"grad of input {i}", **tol)
    assert list(op) == list(tp)
    for n in tp:
        assert (op[n] is None) == (tp[n] is None), n
        if tp[n] is not None:
            np.testing.assert_allclose(op[n], tp[n], err_msg=f"grad of {n}", **tol)
    return oo


def rnd(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(NP[dtype])


def masks(lib, spec, dtype):
    """Build the mask arguments of a case in library ``lib`` from NumPy arrays."""
    out = {}
    for k, v in spec.items():
        if isinstance(v, np.ndarray):
            v = lib.tensor(v.astype(NP[dtype]) if v.dtype.kind == "f" else v)
        out[k] = v
    return out


# ------------------------------------------------------------------ MultiheadAttention

E, H, L, S, N = 8, 2, 5, 4, 3
_rng = np.random.default_rng(7)
BOOL_LS = _rng.random((L, S)) < 0.3
BOOL_LS[:, 0] = False                          # every query keeps one key
FLOAT_LS = _rng.standard_normal((L, S))
BOOL_3D = _rng.random((N * H, L, S)) < 0.3
BOOL_3D[..., 1] = False
FLOAT_3D = _rng.standard_normal((N * H, L, S))
KPM_BOOL = np.array([[False, False, True, True], [False, True, False, False],
                     [False, False, False, False]])
KPM_FLOAT = np.where(KPM_BOOL, -1e9, 0.0) + 0.5 * _rng.standard_normal((N, S))

MASK_CASES = {
    "none": {},
    "bool2d": {"attn_mask": BOOL_LS},
    "float2d": {"attn_mask": FLOAT_LS},
    "bool3d": {"attn_mask": BOOL_3D},
    "float3d": {"attn_mask": FLOAT_3D},
    "kpm_bool": {"key_padding_mask": KPM_BOOL},
    "kpm_float": {"key_padding_mask": KPM_FLOAT},
    "bool2d+kpm": {"attn_mask": BOOL_LS, "key_padding_mask": KPM_BOOL},
    "float3d+kpm_float": {"attn_mask": FLOAT_3D, "key_padding_mask": KPM_FLOAT},
}


def mha_call(kind, spec, dtype, batch_first, **fw):
    def call(lib, mod, q, k, v):
        if batch_first:
            q, k, v = (x.transpose(0, 1).contiguous() for x in (q, k, v))
        if kind == "self":
            k = v = q
        elif kind == "kv":
            v = k
        return mod(q, k, v, **masks(lib, spec, dtype), **fw)
    return call


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mask", list(MASK_CASES))
@pytest.mark.parametrize("need_weights,average", [(True, True), (True, False), (False, True)])
def test_mha_masks(dtype, mask, need_weights, average):
    spec = MASK_CASES[mask]
    # query length L, key length S: cross attention with distinct key and value tensors
    theirs, ours = pair(torch.nn.MultiheadAttention, tensorlib.nn.MultiheadAttention, E, H,
                        dtype=dtype)
    arrays = [rnd((L, N, E), dtype, 1), rnd((S, N, E), dtype, 2), rnd((S, N, E), dtype, 3)]
    compare(theirs, ours, arrays, mha_call("qkv", spec, dtype, False, need_weights=need_weights,
                                           average_attn_weights=average), dtype)


_SAME = [{}, {"bias": False}, {"add_bias_kv": True}, {"add_zero_attn": True},
         {"add_bias_kv": True, "add_zero_attn": True}]
# key/value of other widths than the query cannot be the query tensor itself
_SEPARATE = [{"kdim": 3, "vdim": 6}, {"kdim": 3, "vdim": 6, "bias": False, "add_bias_kv": True}]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("kind,config", [(k, c) for k in ("self", "kv", "qkv") for c in _SAME]
                         + [("qkv", c) for c in _SEPARATE])
def test_mha_configs(dtype, batch_first, kind, config):
    theirs, ours = pair(torch.nn.MultiheadAttention, tensorlib.nn.MultiheadAttention, E, H,
                        dtype=dtype, batch_first=batch_first, **config)
    Sk = L if kind == "self" else S
    arrays = [rnd((L, N, E), dtype, 1), rnd((Sk, N, config.get("kdim", E)), dtype, 2),
              rnd((Sk, N, config.get("vdim", E)), dtype, 3)]
    extra = 1 if config.get("add_bias_kv") else 0
    extra += 1 if config.get("add_zero_attn") else 0
    spec = {"key_padding_mask": KPM_BOOL[:, :1].repeat(Sk, 1) & (np.arange(Sk) >= 2)}
    if kind != "self":
        spec["attn_mask"] = FLOAT_LS[:, :Sk]
    for need_weights in (True, False):
        out = compare(theirs, ours, arrays, mha_call(kind, spec, dtype, batch_first,
                                                     need_weights=need_weights), dtype)
        if need_weights:
            assert out[1].shape == (N, L, Sk + extra)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mask", ["none", "bool2d", "float3d", "kpm_bool", "bool2d+kpm"])
def test_mha_unbatched(dtype, mask):
    spec = dict(MASK_CASES[mask])
    if "key_padding_mask" in spec:
        spec["key_padding_mask"] = spec["key_padding_mask"][1]
    if mask == "float3d":
        spec["attn_mask"] = FLOAT_3D[:H]
    for batch_first in (False, True):
        theirs, ours = pair(torch.nn.MultiheadAttention, tensorlib.nn.MultiheadAttention, E, H,
                            dtype=dtype, batch_first=batch_first)
        arrays = [rnd((L, E), dtype, 1), rnd((S, E), dtype, 2), rnd((S, E), dtype, 3)]
        for nw, avg in ((True, True), (True, False), (False, True)):
            out = compare(theirs, ours, arrays, mha_call("qkv", spec, dtype, False,
                                                         need_weights=nw,
                                                         average_attn_weights=avg), dtype)
            assert out[0].shape == (L, E)


@pytest.mark.parametrize("need_weights", [False, True])
def test_mha_train_mode_dropout_zero_and_is_causal(need_weights):
    theirs, ours = pair(torch.nn.MultiheadAttention, tensorlib.nn.MultiheadAttention, E, H,
                        dtype="float64", train=True, dropout=0.0, batch_first=True)
    causal = np.triu(np.full((L, L), -np.inf), 1)
    arrays = [rnd((N, L, E), "float64", 1)]

    def call(lib, mod, x):
        return mod(x, x, x, attn_mask=lib.tensor(causal), is_causal=True,
                   need_weights=need_weights)
    compare(theirs, ours, arrays, call, "float64")


@settings(max_examples=25, deadline=None)
@given(heads=st.sampled_from([1, 2, 3]), head_dim=st.integers(1, 3), tgt=st.integers(1, 5),
       src=st.integers(1, 5), batch=st.integers(0, 3), batch_first=st.booleans(),
       need_weights=st.booleans(), average=st.booleans(),
       attn=st.sampled_from([None, "bool2d", "float2d", "bool3d", "float3d"]),
       kpm=st.sampled_from([None, "bool", "float"]), extras=st.integers(0, 3),
       seed=st.integers(0, 2**16))
def test_mha_random(heads, head_dim, tgt, src, batch, batch_first, need_weights, average,
                    attn, kpm, extras, seed):
    # batch 0 stands for an unbatched call
    emb = heads * head_dim
    rng = np.random.default_rng(seed)
    nb = max(batch, 1)
    spec = {}
    if attn:
        shape = (tgt, src) if attn.endswith("2d") else (nb * heads, tgt, src)
        m = rng.random(shape) < 0.4 if attn.startswith("bool") else rng.standard_normal(shape)
        if attn.startswith("bool"):
            m[..., 0] = False                      # every query keeps a key
        spec["attn_mask"] = m
    if kpm:
        m = rng.random((nb, src)) < 0.4
        m[:, 0] = False
        spec["key_padding_mask"] = m if kpm == "bool" else np.where(m, -1e4, 0.0) + rng.random(
            (nb, src))
        if batch == 0:
            spec["key_padding_mask"] = spec["key_padding_mask"][0]
    theirs, ours = pair(torch.nn.MultiheadAttention, tensorlib.nn.MultiheadAttention, emb,
                        heads, dtype="float64", batch_first=batch_first,
                        add_bias_kv=bool(extras & 1), add_zero_attn=bool(extras & 2))
    shape = (lambda n: (n, batch, emb)) if batch else (lambda n: (n, emb))
    arrays = [rng.standard_normal(shape(tgt)), rng.standard_normal(shape(src)),
              rng.standard_normal(shape(src))]
    compare(theirs, ours, arrays, mha_call("qkv", spec, "float64", batch_first and batch > 0,
                                           need_weights=need_weights,
                                           average_attn_weights=average), "float64")


def test_mha_dropout_in_training_only():
    mha = tensorlib.nn.MultiheadAttention(E, H, dropout=0.5)
    x = tensorlib.randn(L, N, E)
    mha.eval()
    a, wa = mha(x, x, x)
    b, wb = mha(x, x, x)
    assert tensorlib.equal(a, b)
    # the weights of a row sum to one without dropout; with it, kept weights are scaled
    np.testing.assert_allclose(wa.sum(-1).detach().numpy(), np.ones((N, L)), rtol=1e-6)
    mha.train()
    _, wt = mha(x, x, x, average_attn_weights=False)
    zeros = (wt == 0).float().mean().item()
    assert 0.2 < zeros < 0.8


def test_mha_fully_masked_rows():
    # a query row whose every key is masked: zeros through scaled_dot_product_attention
    # (need_weights=False), NaN through the explicit softmax (need_weights=True), as torch
    theirs, ours = pair(torch.nn.MultiheadAttention, tensorlib.nn.MultiheadAttention, E, H,
                        dtype="float64")
    m = BOOL_LS.copy()
    m[2] = True
    q, k = rnd((L, N, E), "float64", 1), rnd((S, N, E), "float64", 2)
    for nw in (False, True):
        t = theirs(torch.tensor(q), torch.tensor(k), torch.tensor(k),
                   attn_mask=torch.tensor(m), need_weights=nw)
        o = ours(tensorlib.tensor(q), tensorlib.tensor(k), tensorlib.tensor(k),
                 attn_mask=tensorlib.tensor(m), need_weights=nw)
        np.testing.assert_allclose(_np(o[0]), _np(t[0]), rtol=1e-10, atol=1e-12)
        assert np.isnan(_np(o[0])[2]).all() == nw
        if nw:
            np.testing.assert_allclose(_np(o[1]), _np(t[1]), rtol=1e-10, atol=1e-12)
    # the gradient stays finite where the row is dropped
    x = tensorlib.tensor(q).requires_grad_()
    ours(x, x, x, attn_mask=tensorlib.tensor(np.ones((L, L), bool) & ~np.eye(L, dtype=bool)
                                             | (np.arange(L) == 2)[:, None]),
         need_weights=False)[0].sum().backward()
    assert np.isfinite(_np(x.grad)).all()


def test_mha_state_dict_and_init():
    for kw in ({}, {"bias": False}, {"add_bias_kv": True}, {"kdim": 3, "vdim": 5},
               {"kdim": 3, "add_bias_kv": True, "bias": False}):
        t, o = torch.nn.MultiheadAttention(E, H, **kw), tensorlib.nn.MultiheadAttention(E, H, **kw)
        tsd, osd = t.state_dict(), o.state_dict()
        assert list(osd) == list(tsd), kw
        assert all(tuple(osd[k].shape) == tuple(tsd[k].shape) for k in tsd)
        assert [n for n, _ in o.named_parameters()] == [n for n, _ in t.named_parameters()]
        assert type(o.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
        assert isinstance(o.out_proj, tensorlib.nn.Linear)
        assert repr(o) == repr(t)
        for name in ("in_proj_weight", "q_proj_weight", "k_proj_weight", "v_proj_weight",
                     "in_proj_bias", "bias_k", "bias_v"):
            assert (getattr(o, name) is None) == (getattr(t, name) is None), name
    # initialisation: Glorot uniform bound sqrt(6 / (E + 3E)) on in_proj_weight, zero biases
    big = tensorlib.nn.MultiheadAttention(64, 4, add_bias_kv=True)
    w = big.in_proj_weight.detach().numpy()
    bound = math.sqrt(6.0 / (64 + 3 * 64))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound
    assert not big.in_proj_bias.detach().numpy().any()
    assert not big.out_proj.bias.detach().numpy().any()
    # bias_k (1, 1, 64): Glorot normal, std sqrt(2 / (64 + 64))
    bk = np.concatenate([big.bias_k.detach().numpy().ravel(), big.bias_v.detach().numpy().ravel()])
    assert abs(bk.std() - math.sqrt(2.0 / 128)) < 0.03
    sep = tensorlib.nn.MultiheadAttention(64, 4, kdim=32)
    kw_ = sep.k_proj_weight.detach().numpy()
    assert np.abs(kw_).max() <= math.sqrt(6.0 / (32 + 64))


def test_mha_gradcheck():
    rng = np.random.default_rng(3)

    def t(*shape):
        return tensorlib.tensor(rng.standard_normal(shape)).requires_grad_()
    q, k, v = t(3, 2, 4), t(2, 2, 4), t(2, 2, 4)
    w, b, wo, bo, bk, bv = t(12, 4), t(12), t(4, 4), t(4), t(1, 1, 4), t(1, 1, 4)
    mask = tensorlib.tensor(rng.standard_normal((3, 2)))
    kpm = tensorlib.tensor(np.array([[False, True], [False, False]]))

    def f(q, k, v, w, b, wo, bo, bk, bv):
        out, weights = multi_head_attention_forward(
            q, k, v, 4, 2, w, b, bk, bv, True, 0.0, wo, bo, attn_mask=mask,
            key_padding_mask=kpm, average_attn_weights=False)
        return out, weights
    assert tensorlib.autograd.gradcheck(f, (q, k, v, w, b, wo, bo, bk, bv))

    def g(q, wq, wk, wv, k, v):
        return multi_head_attention_forward(
            q, k, v, 4, 2, None, None, None, None, False, 0.0, wo, None, need_weights=False,
            use_separate_proj_weight=True, q_proj_weight=wq, k_proj_weight=wk,
            v_proj_weight=wv)[0]
    assert tensorlib.autograd.gradcheck(g, (t(3, 4), t(4, 4), t(4, 3), t(4, 5), t(2, 3),
                                            t(2, 5)))


def _errors(fn_t, fn_o):
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(Exception) as eo:
        fn_o()
    assert type(eo.value) is type(et.value), (eo.value, et.value)
    assert str(eo.value) == str(et.value)
    return str(eo.value)


@pytest.mark.parametrize("case", [
    dict(attn_mask=np.zeros((3, 4), bool)),
    dict(attn_mask=np.zeros((3, 4))),
    dict(attn_mask=np.zeros((5, L, S), bool)),
    dict(attn_mask=np.zeros((1, 1, L, S), bool)),
    dict(attn_mask=np.zeros((L, S), np.int64)),
    dict(key_padding_mask=np.zeros((N, S), np.int32)),
    dict(key_padding_mask=np.zeros((N, S + 1), bool)),
    dict(key_padding_mask=np.zeros((N + 1, S), bool)),
    dict(key_padding_mask=np.zeros((N,), bool)),
    dict(is_causal=True),
    dict(attn_mask=np.zeros((L, S), np.float32)),
    dict(key_padding_mask=np.zeros((N, S), np.float16)),
    dict(attn_mask=np.zeros((L, S), np.float16), need_weights=False),
    dict(key_padding_mask=np.zeros((N, S), np.float16), need_weights=False),
    dict(key=np.zeros((S, N, E)), value=np.zeros((S + 1, N, E))),
    dict(key=np.zeros((S, E)), value=np.zeros((S, E))),
    dict(query=np.zeros((L, N, E + 2))),
    dict(query=np.zeros((2, L, N, E)), key=np.zeros((2, S, N, E)), value=np.zeros((2, S, N, E))),
    dict(query=np.zeros((L, E)), key=np.zeros((S, E)), value=np.zeros((S, E)),
         attn_mask=np.zeros((H + 1, L, S), bool)),
    dict(query=np.zeros((L, E)), key=np.zeros((S, E)), value=np.zeros((S, E)),
         key_padding_mask=np.zeros((1, S), bool)),
])
def test_mha_errors(case):
    args = {"query": np.zeros((L, N, E)), "key": np.zeros((S, N, E)),
            "value": np.zeros((S, N, E))}
    args.update(case)
    t = torch.nn.MultiheadAttention(E, H).double()
    o = tensorlib.nn.MultiheadAttention(E, H).double()

    def run(lib, mod):
        kw = {k: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in args.items()}
        return lambda: mod(**kw)
    msg = _errors(run(torch, t), run(tensorlib, o))
    if "attn_mask" in case and case["attn_mask"].shape == (3, 4):
        assert msg == ("The shape of the 2D attn_mask is torch.Size([3, 4]), but should be "
                       "(5, 4).")


def test_mha_constructor_errors():
    for args in ((0, 2), (4, 0), (-1, 1)):
        _errors(lambda: torch.nn.MultiheadAttention(*args),
                lambda: tensorlib.nn.MultiheadAttention(*args))
    _errors(lambda: torch.nn.MultiheadAttention(6, 4),
            lambda: tensorlib.nn.MultiheadAttention(6, 4))


def test_mha_mismatched_mask_types_warn():
    mha = tensorlib.nn.MultiheadAttention(E, H)
    x = tensorlib.zeros(L, N, E)
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and "
                                         "attn_mask is deprecated"):
        mha(x, x, x, attn_mask=tensorlib.zeros(L, L),
            key_padding_mask=tensorlib.zeros(N, L, dtype=tensorlib.bool))


# ------------------------------------------------------------------ Transformer family

D, NH, FF = 8, 2, 12
SRC_CAUSAL = np.triu(np.full((L, L), -np.inf), 1)
T_LEN = 4
TGT_CAUSAL_BOOL = np.triu(np.ones((T_LEN, T_LEN), bool), 1)
KPM_SRC = np.array([[False] * L, [False, False, False, True, True], [False] * 4 + [True]])
KPM_TGT = np.array([[False] * T_LEN, [False, False, True, True], [False] * 3 + [True]])
MEM_MASK = np.random.default_rng(5).standard_normal((T_LEN, L))


def _bf(x, batch_first):
    return x.transpose(0, 1).contiguous() if batch_first and x.dim() == 3 else x


ACTS = {"relu": "relu", "gelu": "gelu", "callable": None}


def _act(lib, name):
    if name == "callable":
        return lib.tanh
    return name


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("train", [False, True])
def test_encoder_layer(dtype, batch_first, norm_first, train):
    kw = dict(dim_feedforward=FF, dropout=0.0, batch_first=batch_first, norm_first=norm_first)
    for act in ("relu", "gelu", "callable"):
        torch.manual_seed(0)
        theirs = torch.nn.TransformerEncoderLayer(D, NH, activation=_act(torch, act), **kw)
        ours = tensorlib.nn.TransformerEncoderLayer(D, NH, activation=_act(tensorlib, act), **kw)
        if dtype == "float64":
            theirs, ours = theirs.double(), ours.double()
        copy_weights(theirs, ours)
        theirs.train(train)
        ours.train(train)
        specs = [{}, {"src_mask": SRC_CAUSAL, "is_causal": True},
                 {"src_key_padding_mask": KPM_SRC},
                 {"src_mask": SRC_CAUSAL != 0, "src_key_padding_mask": KPM_SRC}]
        for spec in specs if act == "relu" else specs[:2]:
            def call(lib, mod, x):
                return _bf(mod(_bf(x, batch_first), **masks(lib, spec, dtype)), batch_first)
            compare(theirs, ours, [rnd((L, N, D), dtype, 1)], call, dtype)
    assert ours.activation_relu_or_gelu == theirs.activation_relu_or_gelu == 0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer(dtype, batch_first, norm_first):
    kw = dict(dim_feedforward=FF, dropout=0.0, batch_first=batch_first, norm_first=norm_first)
    theirs, ours = pair(torch.nn.TransformerDecoderLayer, tensorlib.nn.TransformerDecoderLayer,
                        D, NH, dtype=dtype, activation="gelu", **kw)
    specs = [{}, {"tgt_mask": TGT_CAUSAL_BOOL, "tgt_key_padding_mask": KPM_TGT,
                  "memory_key_padding_mask": KPM_SRC},
             {"tgt_mask": np.where(TGT_CAUSAL_BOOL, -np.inf, 0.0), "tgt_is_causal": True,
              "memory_mask": MEM_MASK}]
    for spec in specs:
        def call(lib, mod, tgt, mem):
            return _bf(mod(_bf(tgt, batch_first), _bf(mem, batch_first),
                           **masks(lib, spec, dtype)), batch_first)
        compare(theirs, ours, [rnd((T_LEN, N, D), dtype, 1), rnd((L, N, D), dtype, 2)], call,
                dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer(dtype, batch_first, norm_first):
    kw = dict(d_model=D, nhead=NH, num_encoder_layers=2, num_decoder_layers=2,
              dim_feedforward=FF, dropout=0.0, batch_first=batch_first, norm_first=norm_first)
    for train in (False, True):
        theirs, ours = pair(torch.nn.Transformer, tensorlib.nn.Transformer, dtype=dtype,
                            train=train, **kw)
        spec = {"src_key_padding_mask": KPM_SRC, "tgt_key_padding_mask": KPM_TGT,
                "memory_key_padding_mask": KPM_SRC, "memory_mask": MEM_MASK}

        def call(lib, mod, src, tgt):
            m = masks(lib, spec, dtype)
            m["tgt_mask"] = lib.nn.Transformer.generate_square_subsequent_mask(
                T_LEN, dtype=getattr(lib, dtype))
            return _bf(mod(_bf(src, batch_first), _bf(tgt, batch_first), **m), batch_first)
        compare(theirs, ours, [rnd((L, N, D), dtype, 1), rnd((T_LEN, N, D), dtype, 2)], call,
                dtype)


def test_transformer_unbatched_and_options():
    for kw in ({"bias": False}, {"activation": "gelu", "layer_norm_eps": 1e-3},
               {"norm_first": True, "bias": False}):
        kw.update(d_model=D, nhead=NH, num_encoder_layers=1, num_decoder_layers=2,
                  dim_feedforward=FF)
        theirs, ours = pair(torch.nn.Transformer, tensorlib.nn.Transformer, dtype="float64",
                            **kw)
        assert list(ours.state_dict()) == list(theirs.state_dict())

        def call(lib, mod, src, tgt):
            return mod(src, tgt, tgt_mask=lib.nn.Transformer.generate_square_subsequent_mask(
                T_LEN, dtype=lib.float64))
        out = compare(theirs, ours, [rnd((L, D), "float64", 1), rnd((T_LEN, D), "float64", 2)],
                      call, "float64")
        assert out[0].shape == (T_LEN, D)


def test_encoder_decoder_stacks():
    # TransformerEncoder with a norm and a causal mask that it detects, then a decoder stack
    for dtype in ("float32", "float64"):
        torch.manual_seed(0)
        tl = torch.nn.TransformerEncoderLayer(D, NH, FF, dropout=0.0)
        ol = tensorlib.nn.TransformerEncoderLayer(D, NH, FF, dropout=0.0)
        theirs = torch.nn.TransformerEncoder(tl, 3, norm=torch.nn.LayerNorm(D),
                                             enable_nested_tensor=False)
        ours = tensorlib.nn.TransformerEncoder(ol, 3, norm=type(ol.norm1)(D),
                                               enable_nested_tensor=False)
        if dtype == "float64":
            theirs, ours = theirs.double(), ours.double()
        copy_weights(theirs, ours)
        for spec in ({"mask": SRC_CAUSAL}, {"mask": SRC_CAUSAL, "is_causal": True},
                     {"src_key_padding_mask": KPM_SRC}, {"mask": FLOAT_LS[:, :1] * np.ones(L)}):
            def call(lib, mod, x):
                return mod(x, **masks(lib, spec, dtype))
            compare(theirs, ours, [rnd((L, N, D), dtype, 1)], call, dtype)
        dl_t = torch.nn.TransformerDecoderLayer(D, NH, FF, dropout=0.0, batch_first=True)
        dl_o = tensorlib.nn.TransformerDecoderLayer(D, NH, FF, dropout=0.0, batch_first=True)
        dt, do = torch.nn.TransformerDecoder(dl_t, 2), tensorlib.nn.TransformerDecoder(dl_o, 2)
        if dtype == "float64":
            dt, do = dt.double(), do.double()
        copy_weights(dt, do)

        def dcall(lib, mod, tgt, mem):
            return mod(tgt, mem, tgt_mask=lib.tensor(TGT_CAUSAL_BOOL))
        compare(dt, do, [rnd((N, T_LEN, D), dtype, 1), rnd((N, L, D), dtype, 2)], dcall, dtype)
    # the layers are independent copies
    assert ours.layers[0].linear1.weight is not ours.layers[1].linear1.weight
    assert not ours.use_nested_tensor


def test_transformer_state_dict_keys_and_load():
    kw = dict(d_model=D, nhead=NH, num_encoder_layers=2, num_decoder_layers=1,
              dim_feedforward=FF)
    t, o = torch.nn.Transformer(**kw), tensorlib.nn.Transformer(**kw)
    tsd, osd = t.state_dict(), o.state_dict()
    assert list(osd) == list(tsd)
    assert all(tuple(osd[k].shape) == tuple(tsd[k].shape) for k in tsd)
    copy_weights(t, o)
    assert all(np.array_equal(o.state_dict()[k].numpy(), tsd[k].numpy()) for k in tsd)
    assert repr(o.encoder.layers[0]) == repr(t.encoder.layers[0])
    # every matrix Glorot uniform: |w| <= sqrt(6 / (fan_in + fan_out)); vectors keep theirs
    for name, p in o.named_parameters():
        a = p.detach().numpy()
        if a.ndim > 1:
            assert np.abs(a).max() <= math.sqrt(6.0 / sum(a.shape)), name
        elif name.endswith("norm1.weight"):
            assert (a == 1).all()


def test_generate_square_subsequent_mask():
    for sz in (1, 4):
        ours = tensorlib.nn.Transformer.generate_square_subsequent_mask(sz)
        theirs = torch.nn.Transformer.generate_square_subsequent_mask(sz)
        assert ours.dtype == tensorlib.float32
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    m = tensorlib.nn.Transformer.generate_square_subsequent_mask(3, dtype=tensorlib.float64)
    assert m.dtype == tensorlib.float64


def test_transformer_errors():
    kw = dict(d_model=D, nhead=NH, num_encoder_layers=1, num_decoder_layers=1,
              dim_feedforward=FF)
    t, o = torch.nn.Transformer(**kw), tensorlib.nn.Transformer(**kw)
    for src, tgt in (((L, N, D), (T_LEN, N + 1, D)), ((L, N, D), (T_LEN, N, D + 1)),
                     ((L, N, D + 1), (T_LEN, N, D + 1))):
        _errors(lambda: t(torch.zeros(src), torch.zeros(tgt)),
                lambda: o(tensorlib.zeros(src), tensorlib.zeros(tgt)))
    _errors(lambda: torch.nn.TransformerEncoderLayer(D, NH, activation="tanh"),
            lambda: tensorlib.nn.TransformerEncoderLayer(D, NH, activation="tanh"))
    _errors(lambda: torch.nn.TransformerDecoderLayer(D, NH, activation="elu"),
            lambda: tensorlib.nn.TransformerDecoderLayer(D, NH, activation="elu"))
    # a 2-D source mask of the wrong size reaches the attention's check
    te = torch.nn.TransformerEncoderLayer(D, NH, FF)
    oe = tensorlib.nn.TransformerEncoderLayer(D, NH, FF)
    _errors(lambda: te(torch.zeros(L, N, D), src_mask=torch.zeros(L, L + 1)),
            lambda: oe(tensorlib.zeros(L, N, D), src_mask=tensorlib.zeros(L, L + 1)))
    _errors(lambda: te(torch.zeros(L, N, D), src_mask=torch.zeros(L, L, dtype=torch.int64)),
            lambda: oe(tensorlib.zeros(L, N, D), src_mask=tensorlib.zeros(L, L,
                                                                         dtype=tensorlib.int64)))


def test_activation_modules_and_codes():
    # an activation module or function: the same outputs and PyTorch's fused-kernel code
    for tact, oact, code in ((torch.nn.ReLU(), tensorlib.nn.ReLU(), 1),
                             (torch.nn.GELU(), tensorlib.nn.GELU(), 2),
                             (torch.nn.functional.gelu, tensorlib.nn.functional.gelu, 2),
                             (torch.nn.functional.relu, tensorlib.nn.functional.relu, 1),
                             (torch.nn.SiLU(), tensorlib.nn.SiLU(), 0)):
        theirs, ours = pair(torch.nn.TransformerEncoderLayer,
                            tensorlib.nn.TransformerEncoderLayer, D, NH, FF, dtype="float64",
                            dropout=0.0, activation=None)
        theirs.activation, ours.activation = tact, oact
        t2 = torch.nn.TransformerEncoderLayer(D, NH, FF, activation=tact)
        o2 = tensorlib.nn.TransformerEncoderLayer(D, NH, FF, activation=oact)
        assert o2.activation_relu_or_gelu == t2.activation_relu_or_gelu == code
        compare(theirs, ours, [rnd((L, N, D), "float64", 1)], lambda lib, m, x: m(x), "float64")


def test_causal_mask_detection_as_torch():
    from tensorlib.nn.modules.transformer import _detect_is_causal_mask
    from torch.nn.modules.transformer import _detect_is_causal_mask as t_detect
    cases = [(SRC_CAUSAL, None, None), (SRC_CAUSAL, None, L), (SRC_CAUSAL, None, L + 1),
             (SRC_CAUSAL, False, None), (FLOAT_LS, None, None), (TGT_CAUSAL_BOOL, None, None),
             (~TGT_CAUSAL_BOOL, None, None), (np.triu(np.full((3, 3), -np.inf)), None, None),
             (None, None, 3), (None, True, None), (SRC_CAUSAL.astype(np.float32), None, None)]
    for mask, hint, size in cases:
        om = None if mask is None else tensorlib.tensor(mask)
        tm = None if mask is None else torch.tensor(mask)
        assert _detect_is_causal_mask(om, hint, size) == t_detect(tm, hint, size)


def test_freed_without_gc(no_gc):
    from tensorlib import memory
    base = memory.memory_allocated()
    model = tensorlib.nn.Transformer(D, NH, 1, 1, FF, dropout=0.1)
    src, tgt = tensorlib.randn(L, N, D, requires_grad=True), tensorlib.randn(T_LEN, N, D)
    out = model(src, tgt, tgt_mask=model.generate_square_subsequent_mask(T_LEN),
                src_key_padding_mask=tensorlib.tensor(KPM_SRC))
    out.sum().backward()
    mha = tensorlib.nn.MultiheadAttention(D, NH, add_bias_kv=True, add_zero_attn=True)
    o, w = mha(src, src, src, attn_mask=tensorlib.tensor(SRC_CAUSAL != 0))
    (o.sum() + w.sum()).backward()
    del model, src, tgt, out, mha, o, w
    assert memory.memory_allocated() == base


def test_copy_and_pickle():
    import copy
    import pickle
    layer = tensorlib.nn.TransformerDecoderLayer(D, NH, FF, dropout=0.0, activation="gelu")
    layer.eval()
    x, m = tensorlib.randn(T_LEN, N, D), tensorlib.randn(L, N, D)
    ref = layer(x, m)
    for other in (copy.deepcopy(layer), pickle.loads(pickle.dumps(layer))):
        assert tensorlib.equal(other(x, m), ref)
        assert other.self_attn.in_proj_weight is not layer.self_attn.in_proj_weight


def _warning_messages(fn):
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [str(x.message) for x in w if "nested" in str(x.message)]


def test_encoder_nested_tensor_warnings_as_torch():
    for kw in ({}, {"batch_first": True}, {"batch_first": True, "norm_first": True},
               {"batch_first": True, "bias": False}, {"batch_first": True, "activation": "gelu"},
               {"batch_first": True, "activation": torch.tanh}):
        okw = dict(kw)
        if "activation" in kw and kw["activation"] is torch.tanh:
            okw["activation"] = tensorlib.tanh
        for nested in (True, False):
            tl = torch.nn.TransformerEncoderLayer(D, NH, FF, **kw)
            ol = tensorlib.nn.TransformerEncoderLayer(D, NH, FF, **okw)
            tw = _warning_messages(lambda: torch.nn.TransformerEncoder(tl, 1, None, nested))
            ow = _warning_messages(lambda: tensorlib.nn.TransformerEncoder(ol, 1, None, nested))
            assert ow == tw, kw
    for heads in (1, 2):
        tl = torch.nn.TransformerEncoderLayer(D, heads, FF, batch_first=True)
        ol = tensorlib.nn.TransformerEncoderLayer(D, heads, FF, batch_first=True)
        te, oe = torch.nn.TransformerEncoder(tl, 1), tensorlib.nn.TransformerEncoder(ol, 1)
        assert oe.use_nested_tensor == te.use_nested_tensor == (heads == 2)


NOT_LEFT_ALIGNED = np.array([[False, True, False, False, False], [False] * 5,
                             [False] * 4 + [True]])


@pytest.mark.parametrize("kpm", ["bool", "float", "float_values", "not_left_aligned"])
def test_encoder_inference_padding_as_torch(kpm):
    # in eval mode without gradients PyTorch runs batch-first padded batches as nested tensors:
    # padded positions come out as zeros before the final norm
    kp = {"bool": KPM_SRC, "float": np.where(KPM_SRC, -np.inf, 0.0).astype(np.float32),
          "float_values": np.where(KPM_SRC, 0.5, 0.0).astype(np.float32),
          "not_left_aligned": NOT_LEFT_ALIGNED}[kpm]
    torch.manual_seed(0)
    for norm in (False, True):
        tl = torch.nn.TransformerEncoderLayer(D, NH, FF, batch_first=True)
        ol = tensorlib.nn.TransformerEncoderLayer(D, NH, FF, batch_first=True)
        te = torch.nn.TransformerEncoder(tl, 2, torch.nn.LayerNorm(D) if norm else None)
        oe = tensorlib.nn.TransformerEncoder(ol, 2, tensorlib.nn.LayerNorm(D) if norm else None)
        copy_weights(te, oe)
        x = rnd((N, L, D), "float32", 4)
        for train, grad, mask in ((False, False, None), (False, True, None),
                                  (True, False, None), (False, False, SRC_CAUSAL)):
            te.train(train)
            oe.train(train)
            margs_t = {"src_key_padding_mask": torch.tensor(kp)}
            margs_o = {"src_key_padding_mask": tensorlib.tensor(kp)}
            if mask is not None:
                margs_t["mask"] = torch.tensor(mask.astype(np.float32))
                margs_o["mask"] = tensorlib.tensor(mask.astype(np.float32))
            with torch.set_grad_enabled(grad):
                t = te(torch.tensor(x), **margs_t)
            with tensorlib.set_grad_enabled(grad):
                o = oe(tensorlib.tensor(x), **margs_o)
            if train:
                continue            # dropout: the draws differ between the libraries
            if kpm == "float_values" and mask is not None and not grad:
                # torch's fused encoder layer (eval, no grad, batch-first) reads float masks
                # as bool (nonzero = masked), unlike its own general path; we keep the
                # general path's additive semantics (a divergence, noted in the docstring)
                continue
            # torch's fused kernels round differently from its general path
            np.testing.assert_allclose(_np(o), _np(t), rtol=1e-5, atol=1e-5,
                                       err_msg=f"{train} {grad} {mask is not None}")


def test_meta_shapes():
    # on the meta device (no values): every mask and padding tensor follows the input
    mha = tensorlib.nn.MultiheadAttention(E, H, add_bias_kv=True, add_zero_attn=True,
                                          kdim=3).to("meta")
    q, k = tensorlib.zeros(L, N, E, device="meta"), tensorlib.zeros(S, N, 3, device="meta")
    v = tensorlib.zeros(S, N, E, device="meta")
    kpm = tensorlib.zeros(N, S, dtype=tensorlib.bool, device="meta")
    am = tensorlib.zeros(L, S, dtype=tensorlib.bool, device="meta")
    for nw in (True, False):
        out, w = mha(q, k, v, key_padding_mask=kpm, attn_mask=am, need_weights=nw)
        assert out.device.type == "meta" and tuple(out.shape) == (L, N, E)
        assert (w is None) if not nw else tuple(w.shape) == (N, L, S + 2)
    model = tensorlib.nn.Transformer(D, NH, 1, 1, FF).to("meta").eval()
    src = tensorlib.zeros(L, N, D, device="meta")
    tgt = tensorlib.zeros(T_LEN, N, D, device="meta")
    mask = model.generate_square_subsequent_mask(T_LEN, device="meta")
    out = model(src, tgt, tgt_mask=mask, tgt_is_causal=True,
                src_key_padding_mask=tensorlib.zeros(N, L, dtype=tensorlib.bool, device="meta"))
    assert out.device.type == "meta" and tuple(out.shape) == (T_LEN, N, D)


def test_dropout_in_training_only():
    model = tensorlib.nn.Transformer(D, NH, 1, 1, FF, dropout=0.5, batch_first=True)
    src, tgt = tensorlib.randn(N, L, D), tensorlib.randn(N, T_LEN, D)
    model.eval()
    assert tensorlib.equal(model(src, tgt), model(src, tgt))
    model.train()
    a, b = model(src, tgt), model(src, tgt)
    assert not tensorlib.equal(a, b)
    a.sum().backward()
    assert all(p.grad is not None for p in model.parameters())


def test_custom_encoder_decoder():
    # custom parts replace the default stacks; their parameters are the model's
    kw = dict(d_model=D, nhead=NH, dim_feedforward=FF, dropout=0.0)
    for lib in (torch, tensorlib):
        enc = lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(D, NH, FF, dropout=0.0),
                                        1, enable_nested_tensor=False)
        dec = lib.nn.TransformerDecoder(lib.nn.TransformerDecoderLayer(D, NH, FF, dropout=0.0),
                                        1)
        lib.manual_seed(0)
        if lib is torch:
            theirs = lib.nn.Transformer(custom_encoder=enc, custom_decoder=dec, **kw)
        else:
            ours = lib.nn.Transformer(custom_encoder=enc, custom_decoder=dec, **kw)
    assert ours.encoder is not None and ours.encoder.norm is None
    assert list(ours.state_dict()) == list(theirs.state_dict())
    copy_weights(theirs, ours)
    compare(theirs, ours, [rnd((L, N, D), "float64", 1).astype(np.float32),
                           rnd((T_LEN, N, D), "float64", 2).astype(np.float32)],
            lambda lib, m, s, t: m(s, t), "float32")


@pytest.mark.parametrize("need_weights", [True, False])
def test_functional_static_kv(need_weights):
    # F.multi_head_attention_forward with static_k/static_v (per-head keys/values given)
    hd = E // H
    arrays = [rnd((L, N, E), "float64", 1), rnd((S, N, E), "float64", 2),
              rnd((3 * E, E), "float64", 3), rnd((3 * E,), "float64", 4),
              rnd((E, E), "float64", 5), rnd((N * H, S + 1, hd), "float64", 6),
              rnd((N * H, S + 1, hd), "float64", 7)]

    def call(lib, mod, q, k, w, b, wo, sk, sv):
        f = (torch.nn.functional.multi_head_attention_forward if lib is torch
             else multi_head_attention_forward)
        kpm = lib.tensor(np.c_[KPM_BOOL, np.zeros(N, bool)])
        return f(q, k, k, E, H, w, b, None, None, True, 0.0, wo, None, training=False,
                 key_padding_mask=kpm, need_weights=need_weights, static_k=sk, static_v=sv,
                 average_attn_weights=False)
    compare(torch.nn.Module(), tensorlib.nn.Module(), arrays, call, "float64")
    for bad in ((N * H + 1, S, hd), (N * H, S, hd + 1)):
        def run(lib):
            q = lib.zeros(L, N, E, dtype=lib.float64)
            w, wo = lib.zeros(3 * E, E, dtype=lib.float64), lib.zeros(E, E, dtype=lib.float64)
            f = (torch.nn.functional.multi_head_attention_forward if lib is torch
                 else multi_head_attention_forward)
            sk = lib.zeros(bad, dtype=lib.float64)
            return lambda: f(q, q, q, E, H, w, None, None, None, False, 0.0, wo, None,
                             static_k=sk)
        _errors(run(torch), run(tensorlib))
