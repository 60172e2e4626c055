"""Reductions, softmax/log_softmax and cumulative ops against NumPy (float64 reference) and,
where installed, PyTorch (dtypes, shapes, strides, values, errors).

Inputs come in four layouts: contiguous, permuted (transposed), sliced (every other element
along each dim) and expanded (a stride-0 dim), so every kernel layout (inner rows, outer
columns, gathers, converted dtypes) is reached.
"""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib
from divergences import STD_DEFAULT_CORRECTION, INT_SUM_DTYPE

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["bool", "uint8", "int8", "int16", "int32", "int64"]
LAYOUTS = ["contiguous", "permuted", "sliced", "expanded"]

# |error| <= RTOL * |ref| + ATOL * (sum of |x| over the reduced elements)
TOL = {"float32": (2e-5, 2e-6), "float64": (1e-12, 1e-14), "float16": (2e-3, 1e-3),
       "bfloat16": (1.6e-2, 8e-3)}

# the spacing of subnormal results (products can land there)
SUBNORMAL = {"float16": 6e-8, "bfloat16": 1e-40, "float32": 1.5e-45, "float64": 5e-324}


def tl_dtype(name):
    return getattr(tensorlib, name)


def as_np(t):
    """Values of a tensorlib tensor as a NumPy array (bfloat16 widened to float32)."""
    if t.dtype == tensorlib.bfloat16:
        t = t.float()
    return np.asarray(t.numpy())


def make(shape, dtype, layout, seed, scale=1.0):
    """A tensorlib tensor of ``shape`` and ``dtype`` laid out as ``layout``, with values from
    a seeded generator, and its values as float64/int64 NumPy."""
    rng = np.random.default_rng(seed)
    nd = len(shape)
    if layout == "permuted" and nd >= 2:
        perm = list(rng.permutation(nd))
        base_shape = [shape[p] for p in perm]
    elif layout == "sliced":
        base_shape = [2 * s for s in shape]
    elif layout == "expanded" and nd >= 1:
        e = int(rng.integers(nd))
        base_shape = list(shape)
        base_shape[e] = 1
    else:
        base_shape = list(shape)
    if dtype == "bool":
        vals = rng.random(base_shape) < 0.5
    elif dtype in INTS:
        lo = 0 if dtype == "uint8" else -5
        vals = rng.integers(lo, 6, size=base_shape)
    else:
        vals = rng.standard_normal(base_shape) * scale
    np_dtype = np.float32 if dtype == "bfloat16" else np.dtype(dtype)
    t = tensorlib.from_numpy(np.array(vals, dtype=np_dtype, order="C")).to(tl_dtype(dtype), copy=True)
    if layout == "permuted" and nd >= 2:
        inv = [perm.index(i) for i in range(nd)]
        t = t.permute(*inv)
    elif layout == "sliced":
        for d in range(nd):
            t = t.narrow(d, 0, 2 * shape[d]) if shape[d] else t
        idx = tuple(slice(None, None, 2) for _ in range(nd))
        t = t[idx] if nd else t
    elif layout == "expanded" and nd >= 1:
        t = t.expand(*shape)
    assert tuple(t.shape) == tuple(shape)
    ref = as_np(t).astype(np.int64 if dtype in INTS else np.float64)
    return t, ref


@st.composite
def inputs(draw, dtypes, min_dims=0, max_dims=4, max_side=5):
    nd = draw(st.integers(min_dims, max_dims))
    shape = tuple(draw(st.lists(st.integers(0, max_side), min_size=nd, max_size=nd)))
    dtype = draw(st.sampled_from(dtypes))
    layout = draw(st.sampled_from(LAYOUTS))
    seed = draw(st.integers(0, 2 ** 31))
    t, ref = make(shape, dtype, layout, seed)
    return t, ref, dtype


@st.composite
def dim_specs(draw, nd, allow_tuple=True):
    """None, an int (maybe negative) or a tuple of distinct dims."""
    if nd == 0:
        return draw(st.sampled_from([None, 0, -1] + ([()] if allow_tuple else [])))
    kinds = ["none", "int"] + (["tuple"] if allow_tuple else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "none":
        return None
    if kind == "int":
        return draw(st.integers(-nd, nd - 1))
    dims = draw(st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd, unique=True))
    return tuple(d - nd if draw(st.booleans()) else d for d in dims)


def np_axis(dim, nd):
    if dim is None or dim == ():
        return tuple(range(nd))
    if isinstance(dim, int):
        return (dim % nd,) if nd else ()
    return tuple(d % nd for d in dim)


def check_close(got, ref, dtype, scale=None):
    rt, at = TOL.get(dtype, (0, 0))
    g = as_np(got).astype(np.float64)
    r = np.asarray(ref, dtype=np.float64)
    assert g.shape == r.shape, (g.shape, r.shape)
    atol = at * (1.0 if scale is None else np.asarray(scale, dtype=np.float64)) + SUBNORMAL.get(dtype, 0)
    ok = np.isclose(g, r, rtol=rt, atol=0) | (np.abs(g - r) <= atol) | (np.isnan(g) & np.isnan(r))
    ok |= (g == r)
    assert ok.all(), f"dtype {dtype}\ngot {g}\nref {r}"


def check_contiguous(t):
    assert t.is_contiguous()
    assert t.storage_offset() == 0


# ------------------------------------------------------------------------------------------
# sum / mean / prod

@given(inputs(FLOATS + INTS), st.data(), st.booleans())
def test_sum_matches_numpy(inp, data, keepdim):
    t, ref, dtype = inp
    dim = data.draw(dim_specs(t.ndim))
    got = t.sum(dim, keepdim=keepdim) if dim is not None else t.sum(keepdim=keepdim) if keepdim else t.sum()
    axis = np_axis(dim, t.ndim)
    exp = ref.sum(axis=axis, keepdims=keepdim) if t.ndim else ref
    if keepdim and dim is None and t.ndim:
        exp = ref.sum(axis=axis, keepdims=True)
    assert got.dtype == (tl_dtype(dtype) if dtype in FLOATS else tensorlib.int64)
    check_contiguous(got)
    if dtype in INTS:
        np.testing.assert_array_equal(as_np(got), exp.astype(INT_SUM_DTYPE))
    else:
        check_close(got, exp, dtype, np.abs(ref).sum(axis=axis, keepdims=keepdim) if t.ndim else np.abs(ref))


@given(inputs(FLOATS), st.data(), st.booleans())
def test_mean_matches_numpy(inp, data, keepdim):
    t, ref, dtype = inp
    dim = data.draw(dim_specs(t.ndim))
    got = t.mean(dim, keepdim)
    axis = np_axis(dim, t.ndim)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exp = ref.mean(axis=axis, keepdims=keepdim) if t.ndim else ref
        scale = np.abs(ref).mean(axis=axis, keepdims=keepdim) if t.ndim else np.abs(ref)
    assert got.dtype == t.dtype
    check_close(got, exp, dtype, scale)


@given(inputs(FLOATS + INTS, max_side=4), st.data(), st.booleans())
def test_prod_matches_numpy(inp, data, keepdim):
    t, ref, dtype = inp
    dim = None if t.ndim == 0 else data.draw(st.one_of(st.none(), st.integers(-t.ndim, t.ndim - 1)))
    got = t.prod() if dim is None else t.prod(dim, keepdim)
    exp = ref.prod() if dim is None else ref.prod(axis=dim, keepdims=keepdim)
    if dtype in INTS:
        assert got.dtype == tensorlib.int64
        np.testing.assert_array_equal(as_np(got), exp)
    else:
        check_close(got, exp, dtype, np.abs(exp))


def test_sum_dtypes_and_dtype_arg(torch):
    x = tensorlib.tensor([[1, 2, 3], [4, 5, 6]], dtype=tensorlib.int32)
    assert x.sum().dtype == tensorlib.int64 and x.sum().item() == 21
    assert tensorlib.tensor([True, True, False]).sum().item() == 2
    assert x.sum(dtype=tensorlib.float32).dtype == tensorlib.float32
    assert x.sum(1, dtype=tensorlib.int32).tolist() == [6, 15]
    assert x.sum(1).dtype == tensorlib.int64
    h = tensorlib.ones(3, dtype=tensorlib.float16)
    assert h.sum().dtype == tensorlib.float16 and h.sum().item() == 3.0
    assert h.prod().dtype == tensorlib.float16
    # () and [] mean every dim, as in PyTorch
    assert x.sum(()).item() == 21 and x.sum([]).item() == 21
    assert x.sum((0, 1)).item() == 21 and x.sum([-1]).tolist() == [6, 15]
    assert x.sum(None, True).shape == (1, 1)
    assert tensorlib.tensor(3.).sum(0).item() == 3.0
    assert tensorlib.tensor(3.).sum(-1, keepdim=True).shape == ()


def test_integer_sums_wrap():
    big = tensorlib.tensor([2 ** 62, 2 ** 62, 2 ** 62, 2 ** 62])
    assert big.sum().item() == 0            # 2**64 wraps to 0, as PyTorch
    assert tensorlib.tensor([2 ** 32, 2 ** 32]).prod().item() == 0


def test_mean_errors_and_dtype(torch):
    i = tensorlib.arange(6)
    with pytest.raises(RuntimeError, match=r"mean\(\): could not infer output dtype. Input dtype "
                                           r"must be either a floating point or complex dtype. Got: Long"):
        i.mean()
    with pytest.raises(RuntimeError, match="Got: Bool"):
        tensorlib.tensor([True]).mean()
    with pytest.raises(RuntimeError, match="Optional dtype must be either a floating point"):
        tensorlib.ones(2).mean(dtype=tensorlib.int64)
    m = i.mean(dtype=tensorlib.float64)
    assert m.dtype == tensorlib.float64 and m.item() == 2.5
    assert tensorlib.ones(3, dtype=tensorlib.float16).mean().dtype == tensorlib.float16


def test_empty_reductions(torch):
    e = tensorlib.empty(0, 3)
    assert e.sum().item() == 0.0 and e.prod().item() == 1.0
    assert math.isnan(e.mean().item())
    assert [math.isnan(v) for v in e.mean(0).tolist()] == [True] * 3
    assert e.mean(1).shape == (0,) and e.sum(1).shape == (0,)
    assert e.all().item() is True and e.any().item() is False
    assert e.count_nonzero().item() == 0 and e.norm().item() == 0.0
    assert e.logsumexp(0).tolist() == [-math.inf] * 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isnan(e.var().item())
    assert tensorlib.empty(0, dtype=tensorlib.int64).prod().item() == 1


# ------------------------------------------------------------------------------------------
# var / std

@given(inputs(["float32", "float64"], min_dims=1), st.data(), st.booleans(),
       st.sampled_from([None, 0, 1, 2]))
def test_var_std_match_numpy(inp, data, keepdim, correction):
    t, ref, dtype = inp
    dim = data.draw(dim_specs(t.ndim))
    axis = np_axis(dim, t.ndim)
    n = int(np.prod([t.shape[a] for a in axis])) if axis else 1
    corr = STD_DEFAULT_CORRECTION if correction is None else correction
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got_v = t.var(dim, keepdim=keepdim, correction=correction) if correction is not None \
            else t.var(dim, keepdim=keepdim)
        got_s = t.std(dim, keepdim=keepdim, correction=correction) if correction is not None \
            else t.std(dim, keepdim=keepdim)
        if n == 0:
            exp_v = np.full(got_v.shape, np.nan)
        else:
            dev = ((ref - ref.mean(axis=axis, keepdims=True)) ** 2).sum(axis=axis, keepdims=keepdim)
            exp_v = dev / max(0, n - corr) if n - corr > 0 else dev / 0.0
    scale = (np.abs(ref) ** 2).max() if ref.size else 1.0
    check_close(got_v, exp_v, dtype, scale * 4)
    check_close(got_s, np.sqrt(exp_v), dtype, np.sqrt(scale) * 4)


def test_var_is_stable_for_large_means():
    base = np.random.default_rng(1).standard_normal(100000)
    x = tensorlib.tensor((base + 1e4).astype(np.float32))
    ref = np.var(np.asarray(x.numpy(), dtype=np.float64), ddof=1)
    assert abs(x.var().item() - ref) <= 1e-4 * ref


def test_var_signatures(torch):
    x = tensorlib.tensor([[0., 1., 2.], [3., 4., 6.]])
    tx = torch.tensor(x.tolist())
    assert x.var().item() == pytest.approx(tx.var().item())
    assert x.std(True).item() == pytest.approx(tx.std(True).item())          # var(unbiased)
    assert x.std(False).item() == pytest.approx(tx.std(False).item())
    assert x.var(1, True).tolist() == pytest.approx(tx.var(1, True).tolist())  # dim, unbiased
    assert x.var(0, True, True).shape == tx.var(0, True, True).shape        # + keepdim
    assert x.var(1, unbiased=False).tolist() == pytest.approx(tx.var(1, unbiased=False).tolist())
    assert x.std(correction=0).item() == pytest.approx(tx.std(correction=0).item())
    assert x.var(correction=1.5).item() == pytest.approx(tx.var(correction=1.5).item())
    v, m = tensorlib.var_mean(x, 1)
    tv, tm = torch.var_mean(tx, 1)
    assert v.tolist() == pytest.approx(tv.tolist()) and m.tolist() == pytest.approx(tm.tolist())
    s, m = tensorlib.std_mean(x)
    ts, tm = torch.std_mean(tx)
    assert s.item() == pytest.approx(ts.item()) and m.item() == pytest.approx(tm.item())
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        r = tensorlib.tensor([1.]).var()
    assert math.isnan(r.item())
    with pytest.warns(UserWarning):
        assert tensorlib.tensor([1., 2., 3.]).var(correction=5).item() == math.inf
    with pytest.raises(RuntimeError, match="std and var only support floating point"):
        tensorlib.arange(3).std()
    h = tensorlib.ones(3, dtype=tensorlib.float16)
    assert h.var().dtype == tensorlib.float16 and h.std().item() == 0.0


# ------------------------------------------------------------------------------------------
# max / min / amax / amin / argmax / argmin

@given(inputs(FLOATS + INTS), st.data(), st.booleans())
def test_amax_amin_match_numpy(inp, data, keepdim):
    t, ref, dtype = inp
    dim = data.draw(dim_specs(t.ndim))
    axis = np_axis(dim, t.ndim)
    whole = dim is None or dim == ()
    if (t.numel() == 0) if whole else any(t.shape[a] == 0 for a in axis):
        with pytest.raises(RuntimeError if whole else IndexError, match="Expected reduction dim"):
            t.amax(() if dim is None else dim)
        return
    for fn, npf in (("amax", np.max), ("amin", np.min)):
        got = getattr(t, fn)(() if dim is None else dim, keepdim)
        assert got.dtype == t.dtype
        exp = npf(ref, axis=axis, keepdims=keepdim) if t.ndim else ref
        np.testing.assert_array_equal(as_np(got).astype(ref.dtype), exp)


@given(inputs(["float32", "float64", "float16", "int64", "int32", "uint8", "bfloat16"], min_dims=1),
       st.data(), st.booleans())
def test_max_min_dim_match_numpy(inp, data, keepdim):
    t, ref, dtype = inp
    d = data.draw(st.integers(-t.ndim, t.ndim - 1))
    if t.shape[d] == 0:
        with pytest.raises(IndexError, match="Expected reduction dim"):
            t.max(d)
        return
    for fn, argf in (("max", np.argmax), ("min", np.argmin)):
        values, indices = getattr(t, fn)(d, keepdim)
        r = getattr(t, fn)(d, keepdim=keepdim)
        assert r.values.tolist() == values.tolist() and r.indices.tolist() == indices.tolist()
        exp_i = argf(ref, axis=d)              # NumPy also picks the first of ties
        exp_v = np.take_along_axis(ref, np.expand_dims(exp_i, d), d)
        if not keepdim:
            exp_v = exp_v.squeeze(d)
        else:
            exp_i = np.expand_dims(exp_i, d)
        assert indices.dtype == tensorlib.int64 and values.dtype == t.dtype
        np.testing.assert_array_equal(as_np(indices), exp_i)
        np.testing.assert_array_equal(as_np(values).astype(ref.dtype), exp_v)
        ai = getattr(t, "arg" + fn)(d, keepdim)
        np.testing.assert_array_equal(as_np(ai), exp_i)


@given(inputs(["float32", "float64", "int64", "int8"], min_dims=0))
def test_argmax_flattened(inp):
    t, ref, dtype = inp
    if t.numel() == 0:
        with pytest.raises(IndexError):
            t.argmax()
        return
    assert t.argmax().item() == int(np.argmax(ref))
    assert t.argmin().item() == int(np.argmin(ref))
    assert t.max().item() == ref.max() and t.min().item() == ref.min()
    assert t.argmax(keepdim=True).shape == tuple([1] * t.ndim)


def test_nan_handling(torch):
    nan = math.nan
    x = tensorlib.tensor([1., nan, 3., nan])
    assert math.isnan(x.max().item()) and math.isnan(x.min().item())
    assert x.argmax().item() == 1 and x.argmin().item() == 1   # the first NaN
    r = tensorlib.tensor([[1., nan, 5., nan]]).max(1)
    assert math.isnan(r.values.item()) and r.indices.item() == 1
    assert math.isnan(tensorlib.tensor([[1., nan, 3.]]).amax(1).item())
    assert tensorlib.tensor([nan, 1.]).amin().isnan().item() if hasattr(tensorlib.Tensor, "isnan") \
        else math.isnan(tensorlib.tensor([nan, 1.]).amin().item())
    assert math.isnan(tensorlib.tensor([1., nan]).sum().item())
    # NaN in a long row and in columns (vectorized paths)
    big = np.arange(100000, dtype=np.float32)
    big[70001] = nan
    tb = tensorlib.tensor(big)
    assert tb.argmax().item() == 70001 and math.isnan(tb.max().item())
    cols = tensorlib.tensor(big.reshape(1000, 100))
    assert math.isnan(cols.amax(0)[1].item()) and not math.isnan(cols.amax(0)[2].item())
    assert cols.max(0).indices[1].item() == 700
    assert tensorlib.tensor([nan, 0.]).count_nonzero().item() == 1


def test_ties_pick_the_first_index():
    x = tensorlib.tensor([3, 1, 3, 1])
    assert x.argmax().item() == 0 and x.argmin().item() == 1
    m = tensorlib.tensor([[1, 3, 3], [2, 2, 0]])
    assert m.max(1).indices.tolist() == [1, 0]
    assert m.t().max(0).indices.tolist() == [1, 0]         # columns layout
    assert tensorlib.tensor([-math.inf, -math.inf]).argmax().item() == 0
    assert tensorlib.zeros(5000, 3).argmax(0).tolist() == [0, 0, 0]


def test_max_min_forms(torch):
    x = tensorlib.tensor([[1., 7.], [4., 2.]])
    r = tensorlib.max(x, 1)
    assert isinstance(r, tensorlib.return_types.max) and isinstance(r, tuple)
    assert type(r).__module__ == "tensorlib.return_types"
    v, i = x.min(dim=0, keepdim=True)
    assert v.tolist() == [[1., 2.]] and i.tolist() == [[0, 1]]
    assert repr(r).startswith("tensorlib.return_types.max(\nvalues=tensor(")
    assert x.max().item() == 7.0 and x.min().item() == 1.0
    s = tensorlib.tensor(5.)
    assert s.max(0).values.item() == 5.0 and s.max(0).indices.item() == 0
    b = tensorlib.tensor([[True, False]])
    assert b.max().item() is True and b.max(1).indices.tolist() == [0]
    assert b.amin(1).tolist() == [False]
    if hasattr(tensorlib, "maximum"):
        assert tensorlib.max(x, tensorlib.zeros(2)).tolist() == x.tolist()
    else:
        with pytest.raises(NotImplementedError):
            tensorlib.max(x, tensorlib.zeros(2))
    vo, io = tensorlib.empty(2), tensorlib.empty(2, dtype=tensorlib.int64)
    out = tensorlib.max(x, 1, out=(vo, io))
    assert vo.tolist() == [7., 4.] and io.tolist() == [1, 0] and out.values is vo


def test_max_min_errors(torch):
    e = tensorlib.empty(0, 3)
    for fn in ("max", "min", "amax", "amin"):
        with pytest.raises(RuntimeError, match=fn + r"\(\): Expected reduction dim to be specified "
                                                r"for input.numel\(\) == 0"):
            getattr(e, fn)()
        with pytest.raises(IndexError, match=fn + r"\(\): Expected reduction dim 0 to have non-zero size"):
            getattr(e, fn)(0)
    assert e.max(1).values.shape == (0,) and e.amax(1).shape == (0,)
    with pytest.raises(IndexError, match="argmax"):
        e.argmax()
    with pytest.raises(IndexError, match="argmax"):
        e.argmax(0)
    assert e.argmax(1).shape == (0,)
    with pytest.raises(RuntimeError, match=r"argmax\(\): does not support bool input"):
        tensorlib.tensor([True]).argmax()
    with pytest.raises(RuntimeError, match=r"argmin\(\): does not support bool input"):
        tensorlib.tensor([True]).argmin(0)


# ------------------------------------------------------------------------------------------
# all / any / count_nonzero

@given(inputs(FLOATS + INTS), st.data(), st.booleans())
def test_all_any_count_match_numpy(inp, data, keepdim):
    t, ref, dtype = inp
    dim = data.draw(dim_specs(t.ndim))
    axis = np_axis(dim, t.ndim)
    for fn, npf in (("all", np.all), ("any", np.any)):
        got = getattr(t, fn)(dim, keepdim) if dim is not None else getattr(t, fn)()
        exp = npf(ref != 0, axis=axis, keepdims=keepdim and dim is not None) if t.ndim else ref != 0
        assert got.dtype == (tensorlib.uint8 if dtype == "uint8" else tensorlib.bool)
        np.testing.assert_array_equal(as_np(got).astype(bool), exp)
    got = t.count_nonzero(dim)
    exp = np.count_nonzero(ref, axis=axis) if t.ndim else int(ref != 0)
    assert got.dtype == tensorlib.int64
    np.testing.assert_array_equal(as_np(got), exp)


def test_all_any_dtypes(torch):
    u = tensorlib.tensor([1, 0, 3], dtype=tensorlib.uint8)
    for fn in ("all", "any"):
        tu = torch.tensor([1, 0, 3], dtype=torch.uint8)
        assert str(getattr(u, fn)().dtype).split(".")[1] == str(getattr(tu, fn)().dtype).split(".")[1]
        assert getattr(u, fn)().item() == getattr(tu, fn)().item()
    assert tensorlib.tensor([1, 2], dtype=tensorlib.int8).all().dtype == tensorlib.bool
    assert tensorlib.empty(0).all().item() is True and tensorlib.empty(0).any().item() is False
    assert tensorlib.tensor([math.nan]).all().item() is True
    assert tensorlib.ones(2, 3).all(dim=(0, 1), keepdim=True).shape == (1, 1)


# ------------------------------------------------------------------------------------------
# norm

@given(inputs(["float32", "float64", "float16"]), st.data(), st.booleans(),
       st.sampled_from(["fro", 1, 2, math.inf, -math.inf, 0, 3, 0.5, -1]))
def test_norm_matches_numpy(inp, data, keepdim, p):
    t, ref, dtype = inp
    dim = data.draw(dim_specs(t.ndim))
    if p == "fro" and isinstance(dim, tuple) and len(dim) > 2:
        dim = dim[:2]
    axis = np_axis(dim, t.ndim)
    whole = dim is None or dim == ()
    empty = (t.numel() == 0) if whole else any(t.shape[a] == 0 for a in axis)
    if p in (math.inf, -math.inf) and empty:
        with pytest.raises(RuntimeError, match="does not have an identity"):
            t.norm(p, dim, keepdim)
        return
    got = t.norm(p, dim, keepdim)
    a = np.abs(ref)
    kd = keepdim
    with np.errstate(divide="ignore"):
        if p == math.inf:
            exp = a.max(axis=axis, keepdims=kd) if t.ndim else a
        elif p == -math.inf:
            exp = a.min(axis=axis, keepdims=kd) if t.ndim else a
        elif p == 0:
            exp = (a != 0).sum(axis=axis, keepdims=kd) if t.ndim else (a != 0)
        else:
            pv = 2 if p == "fro" else p
            exp = ((a ** pv).sum(axis=axis, keepdims=kd) if t.ndim else a ** pv) ** (1 / pv)
    assert got.dtype == t.dtype
    check_close(got, exp, dtype, np.abs(exp) + 1e-30)


def test_norm_errors_and_dtype(torch):
    x = tensorlib.tensor([3., -4.])
    assert x.norm().item() == 5.0 and x.norm(1).item() == 7.0
    assert x.norm(math.inf).item() == 4.0 and x.norm(-math.inf).item() == 3.0
    assert x.norm(0).item() == 2.0
    assert tensorlib.norm(x, p=2, dim=0).item() == 5.0
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point or complex "
                                           "tensor as input. Got Long"):
        tensorlib.arange(3).norm()
    with pytest.raises(RuntimeError, match="Order abc not supported"):
        x.norm("abc")
    with pytest.raises(RuntimeError, match="dim must be a 2-tuple"):
        tensorlib.ones(2, 2, 2).norm("fro", dim=(0, 1, 2))
    assert x.norm(dtype=tensorlib.float64).dtype == tensorlib.float64
    with pytest.raises(RuntimeError, match="without narrowing"):
        x.double().norm(dtype=tensorlib.float32)
    with pytest.raises(RuntimeError, match="inf norm on an empty tensor"):
        tensorlib.empty(0).norm(math.inf)


# ------------------------------------------------------------------------------------------
# logsumexp

@given(inputs(["float32", "float64", "int64", "bool"]), st.data(), st.booleans())
def test_logsumexp_matches_numpy(inp, data, keepdim):
    t, ref, dtype = inp
    dim = data.draw(dim_specs(t.ndim))
    if dim is None:
        dim = ()
    axis = np_axis(dim, t.ndim)
    got = t.logsumexp(dim, keepdim)
    with np.errstate(divide="ignore"):
        exp = np.log(np.exp(ref.astype(np.float64)).sum(axis=axis, keepdims=keepdim)) if t.ndim \
            else ref.astype(np.float64)
    assert got.dtype == (t.dtype if dtype in FLOATS else tensorlib.float32)
    check_close(got, exp, "float32" if dtype not in FLOATS else dtype, 1.0)


def test_logsumexp_is_stable(torch):
    x = tensorlib.tensor([[1000., 1000.], [-1000., -1000.]])
    assert x.logsumexp(1).tolist() == pytest.approx([1000 + math.log(2), -1000 + math.log(2)])
    inf = math.inf
    assert tensorlib.tensor([-inf, -inf]).logsumexp(0).item() == -inf
    assert tensorlib.tensor([inf, 1.]).logsumexp(0).item() == inf
    assert math.isnan(tensorlib.tensor([math.nan, 1.]).logsumexp(0).item())
    assert tensorlib.tensor([[-inf, 0.]]).logsumexp(1).item() == 0.0
    assert tensorlib.tensor([1, 2]).logsumexp(0).dtype == tensorlib.float32
    assert tensorlib.tensor([1., 2.], dtype=tensorlib.float16).logsumexp(0).dtype == tensorlib.float16


# ------------------------------------------------------------------------------------------
# cumsum / cumprod

@given(inputs(FLOATS + INTS, min_dims=0, max_side=6), st.data())
def test_cumsum_cumprod_match_numpy(inp, data):
    t, ref, dtype = inp
    d = data.draw(st.integers(-max(t.ndim, 1), max(t.ndim, 1) - 1))
    for fn, npf in (("cumsum", np.cumsum), ("cumprod", np.cumprod)):
        got = getattr(t, fn)(d)
        exp = npf(ref, axis=d) if t.ndim else ref
        assert got.dtype == (t.dtype if dtype in FLOATS else tensorlib.int64)
        assert got.shape == t.shape
        check_contiguous(got)
        if dtype in INTS:
            np.testing.assert_array_equal(as_np(got), exp)
        else:
            check_close(got, exp, dtype, np.abs(npf(np.abs(ref), axis=d)) if t.ndim else 1.0)


def test_cumulative_forms(torch):
    x = tensorlib.tensor([[1, 2], [3, 4]], dtype=tensorlib.int32)
    assert x.cumsum(1, dtype=tensorlib.float32).dtype == tensorlib.float32
    assert tensorlib.tensor([True, True]).cumsum(0).tolist() == [1, 2]
    y = x.clone()
    assert y.cumsum_(0) is y and y.dtype == tensorlib.int32 and y.tolist() == [[1, 2], [4, 6]]
    f = tensorlib.tensor([1., 2., 3.])
    v = f._version
    f.cumprod_(0)
    assert f.tolist() == [1., 2., 6.] and f._version > v
    out = tensorlib.empty(3)
    assert tensorlib.cumsum(tensorlib.tensor([1., 1., 1.]), 0, out=out) is out
    assert out.tolist() == [1., 2., 3.]
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.cumsum(2)
    assert tensorlib.tensor(3).cumsum(0).item() == 3
    with pytest.raises(TypeError):
        x.cumsum()


# ------------------------------------------------------------------------------------------
# softmax / log_softmax

@given(inputs(FLOATS, min_dims=0, max_side=6), st.data())
def test_softmax_matches_numpy(inp, data):
    t, ref, dtype = inp
    d = data.draw(st.integers(-max(t.ndim, 1), max(t.ndim, 1) - 1))
    ax = d % t.ndim if t.ndim else None
    if t.ndim:
        m = ref.max(axis=ax, keepdims=True) if ref.size else ref
        e = np.exp(ref - m)
        s = e.sum(axis=ax, keepdims=True)
        exp_sm = e / s
        exp_lsm = ref - m - np.log(s)
    else:
        exp_sm, exp_lsm = np.ones_like(ref), np.zeros_like(ref)
    sm, lsm = t.softmax(d), tensorlib.log_softmax(t, d)
    for got in (sm, lsm):
        assert got.dtype == t.dtype and got.shape == t.shape
        check_contiguous(got)
    check_close(sm, exp_sm, dtype, 1.0)
    check_close(lsm, exp_lsm, dtype, np.abs(exp_lsm) + 1.0)


def test_softmax_edge_cases(torch):
    inf = math.inf
    assert all(math.isnan(v) for v in tensorlib.tensor([-inf, -inf]).softmax(0).tolist())
    assert all(math.isnan(v) for v in tensorlib.tensor([inf, 1.]).softmax(0).tolist())
    assert tensorlib.tensor([-inf, 0.]).softmax(0).tolist() == [0.0, 1.0]
    assert tensorlib.tensor([-inf, 0.]).log_softmax(0).tolist() == [-inf, 0.0]
    assert tensorlib.tensor([1000., 0.]).softmax(0).tolist() == [1.0, 0.0]
    assert tensorlib.tensor(2.).softmax(0).item() == 1.0
    assert tensorlib.tensor(2.).log_softmax(0).item() == 0.0
    assert tensorlib.empty(0, 3).softmax(1).shape == (0, 3)
    assert tensorlib.empty(3, 0).softmax(1).shape == (3, 0)
    with pytest.raises(NotImplementedError, match='"softmax_lastdim_kernel_impl" not implemented for \'Long\''):
        tensorlib.arange(6).view(2, 3).softmax(1)
    with pytest.raises(NotImplementedError, match='"log_softmax_kernel_impl" not implemented for \'Bool\''):
        tensorlib.tensor([[True, False]]).log_softmax(0)
    s = tensorlib.arange(6).view(2, 3).softmax(1, dtype=tensorlib.float64)
    assert s.dtype == tensorlib.float64
    with pytest.raises(IndexError, match="Dimension out of range"):
        tensorlib.ones(2, 3).softmax(2)
    with pytest.raises(TypeError):
        tensorlib.ones(2, 3).softmax(1.0)


def test_softmax_parity_large_rows(torch):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((64, 1000)) * 10).astype(np.float32)
    for dim in (0, 1):
        for name in ("softmax", "log_softmax"):
            got = getattr(tensorlib.tensor(a), name)(dim).numpy()
            exp = getattr(torch.from_numpy(a), name)(dim).numpy()
            np.testing.assert_allclose(got, exp, rtol=3e-6, atol=1e-6)


# ------------------------------------------------------------------------------------------
# accuracy on large inputs (where a single float32 accumulator would drift) and results that do
# not depend on the thread count

@pytest.mark.parametrize("layout", ["whole", "contiguous dim", "strided dim", "strided columns"])
def test_sum_of_2_25_float32_ones_is_exact(layout):
    n = 1 << 25
    ones = tensorlib.ones(n)
    if layout == "whole":
        got = ones.sum()
        assert got.item() == 33554432.0
    elif layout == "contiguous dim":
        got = ones.view(1, n).sum(1)
        assert got.tolist() == [33554432.0]
    elif layout == "strided dim":
        big = tensorlib.ones(2 * n)[::2]           # stride 2: gathered rows
        assert big.sum().item() == 33554432.0
        assert big.view(1, n).sum(1).tolist() == [33554432.0]
        del big
        # stride 0 (expanded), as rows and as columns (outer layout)
        assert tensorlib.ones(2, 1).expand(2, n).sum(1).tolist() == [33554432.0] * 2
        assert tensorlib.ones(1, 3).expand(n, 3).sum(0).tolist() == [33554432.0] * 3
        pairs = ones.view(n // 2, 2)               # columns of 2**24 rows: the dense short-row path
        assert pairs.sum(0).tolist() == [16777216.0, 16777216.0]
        assert pairs.t().sum(1).tolist() == [16777216.0, 16777216.0]
    else:
        got = ones.view(n // 1024, 1024).sum(0)    # column sums over 32768 rows
        assert (got.numpy() == 32768.0).all()


def test_mean_of_16M_uniform_is_accurate():
    tensorlib.manual_seed(0)
    x = tensorlib.rand(1 << 24)
    ref = np.asarray(x.numpy(), dtype=np.float64).mean()
    assert abs(x.mean().item() - ref) < 1e-6
    assert abs(x.view(4096, 4096).t().mean().item() - ref) < 1e-6


def test_results_do_not_depend_on_thread_count():
    # Parallel tasks group consecutive chunks by the thread count (each chunk keeps its own
    # partial): 5 threads and a length that is no multiple of the chunk make uneven groups.
    tensorlib.manual_seed(1)
    x = tensorlib.randn(1 << 21)
    odd = tensorlib.randn((1 << 21) + 4099)
    views = [x, x.view(2048, 1024), x.view(2048, 1024).t(), x.view(2, -1)]
    old = tensorlib.get_num_threads()
    try:
        results = []
        for n in (1, 2, 3, 5):
            tensorlib.set_num_threads(n)
            results.append([x.sum().item(), views[1].sum(0).numpy().copy(), views[2].sum(1).numpy().copy(),
                            views[3].sum(1).numpy().copy(), x.norm().item(), x.var().item(),
                            x.view(2, -1).logsumexp(1).numpy().copy(), odd.sum().item(),
                            odd.mean().item(), odd.amax().item(), odd[:1 << 21].view(512, -1).sum(1).numpy().copy(),
                            odd[:-3].view(-1, 4).sum(0).numpy().copy()])
        for r in results[1:]:
            for i in (0, 4, 5, 7, 8, 9):
                assert r[i] == results[0][i], i
            for i in (1, 2, 3, 6, 10, 11):
                np.testing.assert_array_equal(r[i], results[0][i])
    finally:
        tensorlib.set_num_threads(old)


def test_big_reductions_match_numpy():
    """The parallel and split paths (above the work thresholds) in every layout."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((1024, 700)).astype(np.float32)
    t = tensorlib.tensor(a)
    a64 = a.astype(np.float64)
    for got, exp, scale in [
            (t.sum(), a64.sum(), np.abs(a64).sum()),
            (t.sum(0), a64.sum(0), np.abs(a64).sum(0)),
            (t.sum(1), a64.sum(1), np.abs(a64).sum(1)),
            (t.t().sum(0), a64.sum(1), np.abs(a64).sum(1)),
            (t.t().sum(1), a64.sum(0), np.abs(a64).sum(0)),
            (t[:, ::3].sum(0), a64[:, ::3].sum(0), np.abs(a64[:, ::3]).sum(0)),
            (t[::2].sum(1), a64[::2].sum(1), np.abs(a64[::2]).sum(1)),
            (t.view(-1, 4).sum(0), a64.reshape(-1, 4).sum(0), np.abs(a64).reshape(-1, 4).sum(0)),
            (t.view(-1, 4).t().sum(1), a64.reshape(-1, 4).sum(0), np.abs(a64).reshape(-1, 4).sum(0)),
            (t.norm(), np.sqrt((a64 ** 2).sum()), np.sqrt((a64 ** 2).sum())),
            (t.var(0), a64.var(0, ddof=1), a64.var(0)),
            (t.std(), a64.std(ddof=1), a64.std()),
            (t.logsumexp(0), np.log(np.exp(a64).sum(0)), 1.0),
            (t.view(2, -1).logsumexp(1), np.log(np.exp(a64.reshape(2, -1)).sum(1)), 1.0)]:
        check_close(got, exp, "float32", scale)
    assert t.argmax().item() == int(np.argmax(a))
    np.testing.assert_array_equal(t.argmax(0).numpy(), np.argmax(a, 0))
    np.testing.assert_array_equal(t.t().argmin(1).numpy(), np.argmin(a, 0))
    np.testing.assert_array_equal(t.amax(0).numpy(), a.max(0))
    np.testing.assert_array_equal(t.view(-1, 2).amin(0).numpy(), a.reshape(-1, 2).min(0))
    half = tensorlib.tensor(a).half()
    check_close(half.sum(0), a64.sum(0), "float16", np.abs(a64).sum(0))
    ints = tensorlib.tensor((a * 100).astype(np.int32))
    assert ints.sum().item() == int((a * 100).astype(np.int32).astype(np.int64).sum())
    np.testing.assert_array_equal(ints.view(-1, 2).sum(0).numpy(),
                                  (a * 100).astype(np.int32).astype(np.int64).reshape(-1, 2).sum(0))


# ------------------------------------------------------------------------------------------
# bad input and PyTorch parity

def test_dim_errors(torch):
    x = tensorlib.ones(2, 3)
    for fn in ("sum", "mean", "amax", "all", "count_nonzero", "logsumexp", "norm", "std"):
        with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                                             r"\[-2, 1\], but got 2\)"):
            if fn == "norm":
                x.norm(2, 2)
            else:
                getattr(x, fn)(2)
    for fn in ("max", "argmax", "prod", "cumsum", "softmax", "log_softmax"):
        with pytest.raises(IndexError, match="Dimension out of range"):
            getattr(x, fn)(-3)
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        x.sum((0, 0))
    with pytest.raises(RuntimeError, match="appears multiple times"):
        x.count_nonzero((1, -1))
    with pytest.raises(TypeError):
        x.sum(1.0)
    with pytest.raises(TypeError):
        x.prod((0, 1))
    with pytest.raises(IndexError):
        tensorlib.tensor(3.).sum(1)


CASES = [
    ("sum", lambda m, x: m.sum(x, 1)),
    ("sum_kd", lambda m, x: x.sum((0, 2), keepdim=True)),
    ("mean", lambda m, x: x.mean(-1)),
    ("prod", lambda m, x: x.prod(1)),
    ("var", lambda m, x: x.var(1)),
    ("std", lambda m, x: x.std((0, 1), correction=0)),
    ("amax", lambda m, x: x.amax((1, 2))),
    ("amin", lambda m, x: x.amin(0, True)),
    ("maxv", lambda m, x: x.max(1)[0]),
    ("maxi", lambda m, x: x.max(1)[1]),
    ("mini", lambda m, x: x.min(2, keepdim=True)[1]),
    ("argmax", lambda m, x: x.argmax(0)),
    ("argmin", lambda m, x: x.argmin()),
    ("all", lambda m, x: x.all(1)),
    ("any", lambda m, x: x.any((0, 1))),
    ("count", lambda m, x: x.count_nonzero((0, 2))),
    ("norm", lambda m, x: x.norm(dim=1)),
    ("norm1", lambda m, x: x.norm(1, (0, 2), True)),
    ("lse", lambda m, x: x.logsumexp(1)),
    ("cumsum", lambda m, x: x.cumsum(1)),
    ("cumprod", lambda m, x: x.cumprod(0)),
    ("softmax", lambda m, x: x.softmax(1)),
    ("log_softmax", lambda m, x: x.log_softmax(2)),
]


@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_torch_parity(torch, name, fn, layout):
    t, ref = make((3, 4, 5), "float32", layout, seed=7)
    tt = torch.from_numpy(np.ascontiguousarray(t.numpy()))
    got, exp = fn(tensorlib, t), fn(torch, tt)
    assert str(got.dtype).split(".")[1] == str(exp.dtype).split(".")[1]
    assert tuple(got.shape) == tuple(exp.shape)
    assert got.stride() == exp.stride()
    np.testing.assert_allclose(as_np(got).astype(np.float64), exp.double().numpy(), rtol=2e-5, atol=1e-5)


def test_return_types_module():
    assert tensorlib.return_types.max._fields == ("values", "indices")
    r = tensorlib.return_types.min((tensorlib.tensor(1), tensorlib.tensor(2)))
    assert r.values.item() == 1 and r[1].item() == 2 and len(r) == 2
    import pickle
    r2 = pickle.loads(pickle.dumps(tensorlib.ones(2, 2).max(1)))
    assert type(r2) is tensorlib.return_types.max and r2.indices.tolist() == [0, 0]


def test_no_memory_left_behind():
    """Scratch tensors (var's mean, logsumexp's max, half/contiguous copies) are all freed."""
    import gc
    gc.disable()
    try:
        x = tensorlib.randn(64, 33).t()
        h = tensorlib.randn(16, 8).half()
        before = tensorlib.memory.memory_allocated()
        for _ in range(3):
            x.var(0), x.std(), x.logsumexp(1), x.softmax(0), x.cumsum(1), x.norm(3, 1)
            h.softmax(1), h.cumsum(0), h.sum(1), x.max(1), x.argmax(), tensorlib.var_mean(x, 1)
        assert tensorlib.memory.memory_allocated() == before
    finally:
        gc.enable()


def test_reduction_dims_wrap_before_the_repeat_check():
    """sum/mean/amax/... wrap every dim before they look for repeats (an out-of-range dim
    after a repeat raises IndexError); std/var find the repeat first, as in PyTorch."""
    torch = pytest.importorskip("torch")
    for name in ("sum", "mean", "amax", "amin", "logsumexp", "count_nonzero", "std", "var"):
        for dims in ((0, 0), (0, 0, 5), (-1, -1, -3), (5, 0, 0)):
            errs = []
            for lib in (tensorlib, torch):
                try:
                    getattr(lib.ones(3, 2), name)(dim=dims)
                    errs.append(None)
                except (IndexError, RuntimeError) as e:
                    errs.append((type(e), str(e)))
            assert errs[0] == errs[1], (name, dims)


def test_mean_into_a_half_type_sums_in_float32():
    """mean(dtype=float16/bfloat16) of another dtype converts the input to float32, not to
    the half type, as PyTorch does: a value beyond float16's range must not become inf."""
    torch = pytest.importorskip("torch")
    vals = [70000, -69990, 3, 1]
    for dt in ("float16", "bfloat16"):
        for src in ("int32", "float32", "float64"):
            ours = tensorlib.tensor(vals, dtype=getattr(tensorlib, src)).mean(
                dtype=getattr(tensorlib, dt))
            theirs = torch.tensor(vals, dtype=getattr(torch, src)).mean(dtype=getattr(torch, dt))
            assert ours.dtype is getattr(tensorlib, dt)
            assert ours.item() == theirs.item() == float(theirs.float())


@pytest.mark.parametrize("dim", [None, 1])
def test_prod_of_an_empty_input_has_a_gradient_with_history(dim):
    """Under create_graph the gradient of prod over an empty input is built from the input
    and result (PyTorch's division form), so it has a history, as PyTorch's does."""
    torch = pytest.importorskip("torch")
    for lib in (tensorlib, torch):
        x = lib.ones(0, 4, requires_grad=True)
        y = lib.prod(x) if dim is None else lib.prod(x, dim=dim, keepdim=True)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        assert tuple(g.shape) == (0, 4) and g.requires_grad
