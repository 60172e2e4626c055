"""Sorting and selection: sort/argsort/msort, topk, kthvalue, median/nanmedian, mode,
unique/unique_consecutive.

Values are checked against NumPy (stable argsort, lexsort for stable descending, partition-free
references computed from a stable sort) and against PyTorch where installed. Sorting is always
stable here, so sort/argsort indices must equal torch's stable sort exactly; for topk, kthvalue,
median and mode (whose tie-breaking torch leaves to its algorithm) the indices must pick out the
reported values.
"""
import collections

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import tensorlib as tl
from divergences import median_lower

NAN = float("nan")
ALL_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
              "float32", "float64"]
NUMERIC = [d for d in ALL_DTYPES if d != "bool"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
# the torch fixture only hands over the module, so sharing it between examples is fine
TORCH_OK = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


# ---------------------------------------------------------------------------------------------
# helpers

def rand_array(rng, shape, dtype, specials=True):
    """Values with many ties; floats get NaN, +-inf and -0 mixed in."""
    n = int(np.prod(shape))
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype in ("uint8",):
        return rng.integers(0, 256, n).astype(np.uint8).reshape(shape)
    if dtype in ("int8", "int16", "int32", "int64"):
        info = np.iinfo(dtype)
        v = rng.integers(-6, 6, n)
        big = rng.integers(info.min, info.max, n, endpoint=True, dtype=np.int64)
        return np.where(rng.random(n) < 0.3, big, v).astype(dtype).reshape(shape)
    v = rng.integers(-8, 8, n).astype(np.float64) / 2
    v = np.where(rng.random(n) < 0.3, rng.standard_normal(n) * 100, v)
    if specials:
        pick = rng.random(n)
        v = np.where(pick < 0.05, np.nan, v)
        v = np.where((pick >= 0.05) & (pick < 0.08), np.inf, v)
        v = np.where((pick >= 0.08) & (pick < 0.10), -np.inf, v)
        v = np.where((pick >= 0.10) & (pick < 0.14), -0.0, v)
    return v.reshape(shape)


def to_tl(a, dtype):
    """A tensorlib tensor of dtype from a NumPy array (bfloat16 via float32, exactly
    representable values are kept; others round, which is fine for order tests)."""
    if dtype == "bfloat16":
        return tl.from_numpy(np.ascontiguousarray(a, dtype=np.float32)).to(tl.bfloat16)
    return tl.from_numpy(np.ascontiguousarray(a).astype(dtype))


def np_of(t):
    """NumPy copy of a tensorlib tensor; half types compared in float32 (bfloat16 has no NumPy
    dtype, float16 too for uniformity)."""
    if t.dtype in (tl.bfloat16, tl.float16):
        return t.float().numpy().copy()
    return t.numpy().copy()


def ref_values(t):
    """The values a tensor holds, as NumPy (what the references sort)."""
    return np_of(t)


def same(a, b, signs=True):
    """Equal values (NaN == NaN), equal shapes and dtypes; -0 and +0 distinguished unless
    signs=False (where either zero of a tie is a right answer)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    if a.dtype.kind == "f":
        assert np.array_equal(np.isnan(a), np.isnan(b)), (a, b)
        m = ~np.isnan(a)
        assert np.array_equal(a[m], b[m]), (a, b)
        if signs:
            assert np.array_equal(np.signbit(a[m]), np.signbit(b[m])), (a, b)
    else:
        assert np.array_equal(a, b), (a, b)


def desc_order(a, axis):
    """Stable descending order (ties in original order, NaN first), via lexsort."""
    a = np.moveaxis(a, axis, -1)
    out = np.empty(a.shape, dtype=np.int64)
    for idx in np.ndindex(*a.shape[:-1]):
        row = a[idx]
        if row.dtype.kind == "f":
            prim = ~np.isnan(row)
            sec = -np.where(np.isnan(row), 0, row)
            out[idx] = np.lexsort((sec, prim))
        elif row.dtype == bool:
            out[idx] = np.lexsort((~row,))
        elif row.dtype.kind == "u":
            out[idx] = np.lexsort((np.iinfo(row.dtype).max - row,))
        else:
            out[idx] = np.lexsort((~row,))
    return np.moveaxis(out, -1, axis)


def strided_variant(t, how):
    """The same values in another layout: transposed, or every other element of a bigger one."""
    if how == "contiguous" or t.dim() < 1:
        return t
    if how == "transposed":
        return t.permute(*reversed(range(t.dim()))).contiguous().permute(*reversed(range(t.dim())))
    # step 2 along the last dim of a doubled buffer
    big = tl.zeros(*t.shape[:-1], t.shape[-1] * 2, dtype=t.dtype)
    view = big[..., ::2]
    view.copy_(t)
    return view


shapes = st.lists(st.integers(0, 9), min_size=1, max_size=3).map(tuple) | \
    st.sampled_from([(70,), (3, 130), (257,), (2, 65, 3), ()])
layouts = st.sampled_from(["contiguous", "transposed", "step"])


# ---------------------------------------------------------------------------------------------
# sort / argsort / msort

@given(shape=shapes, dtype=st.sampled_from(ALL_DTYPES), seed=st.integers(0, 2**31),
       descending=st.booleans(), layout=layouts, data=st.data())
def test_sort_matches_numpy_stable(shape, dtype, seed, descending, layout, data):
    rng = np.random.default_rng(seed)
    t = strided_variant(to_tl(rand_array(rng, shape, dtype), dtype), layout)
    ndim = max(t.dim(), 1)
    dim = data.draw(st.integers(-ndim, ndim - 1))
    a = ref_values(t)
    v, i = tl.sort(t, dim=dim, descending=descending)
    assert v.dtype == t.dtype and i.dtype == tl.int64
    assert v.shape == t.shape and i.shape == t.shape
    if a.ndim == 0:
        same(np_of(v), a)
        assert i.item() == 0
        return
    order = desc_order(a, dim) if descending else np.argsort(a, axis=dim, kind="stable")
    assert np.array_equal(i.numpy(), order)
    same(np_of(v), np.take_along_axis(a, order, axis=dim))
    assert np.array_equal(tl.argsort(t, dim, descending).numpy(), order)


@TORCH_OK
@given(shape=shapes, dtype=st.sampled_from(ALL_DTYPES), seed=st.integers(0, 2**31),
       descending=st.booleans(), layout=layouts, data=st.data())
def test_sort_matches_torch_stable(torch, shape, dtype, seed, descending, layout, data):
    rng = np.random.default_rng(seed)
    t = strided_variant(to_tl(rand_array(rng, shape, dtype), dtype), layout)
    ndim = max(t.dim(), 1)
    dim = data.draw(st.integers(-ndim, ndim - 1))
    tt = torch.from_numpy(ref_values(t)).to(getattr(torch, dtype))
    if layout == "transposed" and tt.dim() > 1:
        tt = tt.permute(*reversed(range(tt.dim()))).contiguous().permute(*reversed(range(tt.dim())))
    rv, ri = torch.sort(tt, dim=dim, descending=descending, stable=True)
    v, i = t.sort(dim=dim, descending=descending, stable=True)
    assert np.array_equal(i.numpy(), ri.numpy())
    same(np_of(v), rv.float().numpy() if dtype in ("float16", "bfloat16") else rv.numpy())
    # outputs keep a dense input's layout, like torch's (a size-1 dim's stride is arbitrary)
    if t.numel() > 0:
        big = [d for d in range(v.dim()) if v.shape[d] > 1]
        assert [v.stride(d) for d in big] == [rv.stride(d) for d in big]
        assert [i.stride(d) for d in big] == [ri.stride(d) for d in big]


def test_sort_nan_inf_zero_order(torch):
    x = [3.0, NAN, 1.0, 2.0, NAN, 1.0, -0.0, 0.0, -np.inf, np.inf]
    for desc in (False, True):
        v, i = tl.sort(tl.tensor(x), descending=desc)
        rv, ri = torch.sort(torch.tensor(x), descending=desc, stable=True)
        assert i.tolist() == ri.tolist()
        same(v.numpy(), rv.numpy())
    # a negative NaN (sign bit set) is still the largest value
    neg_nan = np.array([1.0, -np.nan, -1.0], dtype=np.float32)
    neg_nan[1] = np.frombuffer(np.uint32(0xFFC00000).tobytes(), np.float32)[0]
    assert tl.sort(tl.from_numpy(neg_nan)).indices.tolist() == [2, 0, 1]


def test_sort_ties_keep_order_and_zero_signs():
    v, i = tl.sort(tl.tensor([0.0, -0.0, 0.0]))
    assert i.tolist() == [0, 1, 2]
    assert np.signbit(v.numpy()).tolist() == [False, True, False]
    v, i = tl.sort(tl.tensor([2, 1, 2, 1, 2]), descending=True)
    assert i.tolist() == [0, 2, 4, 1, 3]


def test_sort_integer_extremes_all_dtypes():
    for dt in ["int8", "int16", "int32", "int64", "uint8"]:
        info = np.iinfo(dt)
        a = np.array([info.max, 0, info.min, -1 if info.min < 0 else 1, info.min, info.max], dtype=dt)
        v, i = tl.sort(tl.from_numpy(a))
        assert np.array_equal(v.numpy(), np.sort(a, kind="stable"))
        assert np.array_equal(i.numpy(), np.argsort(a, kind="stable"))


@pytest.mark.parametrize("specials", [True, False])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("n", [1, 2, 17, 64, 65, 300, 5000, 70000])
def test_sort_sizes_and_dtypes(dtype, n, specials):
    """Every size class (insertion, introsort, 8- and 11-bit radix), both item layouts (packed
    32-bit keys, wide 64-bit keys), values rebuilt from keys or read back by index."""
    rng = np.random.default_rng(n)
    t = to_tl(rand_array(rng, (2, n), dtype, specials), dtype)
    a = ref_values(t)
    for desc in (False, True):
        v, i = tl.sort(t, descending=desc)
        order = desc_order(a, 1) if desc else np.argsort(a, axis=1, kind="stable")
        assert np.array_equal(i.numpy(), order)
        same(np_of(v), np.take_along_axis(a, order, 1))


def test_sort_non_innermost_dim_large():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((300, 40)).astype(np.float32)
    t = tl.from_numpy(a)
    v, i = tl.sort(t, 0)
    assert np.array_equal(i.numpy(), np.argsort(a, 0, kind="stable"))
    assert np.array_equal(v.numpy(), np.sort(a, 0))
    assert v.stride() == (40, 1)
    tt = t.t()                                 # strides (1, 40): sort along the strided dim 1
    v, i = tl.sort(tt, 1, descending=True)
    assert np.array_equal(v.numpy(), -np.sort(-a.T, 1))
    assert v.stride() == tt.stride()


def test_sort_zero_dim_and_empty():
    s = tl.tensor(5.0)
    v, i = tl.sort(s)
    assert v.shape == () and v.item() == 5.0 and i.shape == () and i.item() == 0
    assert tl.argsort(s).shape == () and tl.msort(s).item() == 5.0
    for shape, dim in [((0,), 0), ((0, 3), 1), ((3, 0), 1), ((3, 0), 0)]:
        v, i = tl.sort(tl.zeros(*shape), dim)
        assert v.shape == shape and i.shape == shape and i.dtype == tl.int64


def test_sort_errors():
    x = tl.zeros(3, 4)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        tl.sort(x, 2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.argsort(-3)
    with pytest.raises(IndexError, match=r"\[-1, 0\], but got 1"):
        tl.sort(tl.tensor(1.0), 1)
    with pytest.raises(TypeError):
        tl.sort([1, 2])
    with pytest.raises(TypeError):
        tl.sort(x, 1.0)


def test_sort_out_and_named_tuple():
    x = tl.tensor([3.0, 1.0, 2.0])
    r = tl.sort(x)
    assert type(r) is tl.return_types.sort and type(r).__name__ == "sort"
    assert r._fields == ("values", "indices")
    v, i = tl.empty(0), tl.empty(0, dtype=tl.int64)
    r = tl.sort(x, descending=True, out=(v, i))
    assert r.values is v and r.indices is i
    assert v.tolist() == [3.0, 2.0, 1.0] and i.tolist() == [0, 2, 1]
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got long int instead"):
        tl.sort(x, out=(tl.empty(0, dtype=tl.int64), i))
    with pytest.raises(RuntimeError, match="dtype long int, but got float"):
        tl.sort(x, out=(v, tl.empty(0)))
    with pytest.raises(TypeError, match="expected tuple of 2 elements but got 1"):
        tl.sort(x, out=(v,))
    # out aliasing the input: an in-place sort
    y = tl.tensor([2, 0, 1])
    tl.sort(y, out=(y, i))
    assert y.tolist() == [0, 1, 2] and i.tolist() == [1, 2, 0]
    # a non-empty out of the wrong shape is resized with PyTorch's warning
    v = tl.zeros(5)
    with pytest.warns(UserWarning, match="resized"):
        tl.sort(x, out=(v, tl.empty(0, dtype=tl.int64)))
    assert v.tolist() == [1.0, 2.0, 3.0]
    a = tl.empty(0, dtype=tl.int64)
    assert tl.argsort(x, out=a) is a and a.tolist() == [1, 2, 0]
    m = tl.empty(0)
    assert tl.msort(x, out=m) is m and m.tolist() == [1.0, 2.0, 3.0]


def test_sort_version_counter_and_fresh_memory():
    x = tl.tensor([3.0, 1.0, 2.0])
    v, i = tl.sort(x)
    assert v.data_ptr() != x.data_ptr() and v._base is None and i._base is None
    assert x.tolist() == [3.0, 1.0, 2.0]
    v2, i2 = tl.empty(3), tl.empty(3, dtype=tl.int64)
    before = v2._version
    tl.sort(x, out=(v2, i2))
    assert v2._version > before


def test_msort_and_argsort_methods(torch):
    rng = np.random.default_rng(1)
    a = rng.integers(0, 5, (6, 4))
    t = tl.from_numpy(a)
    assert np.array_equal(t.msort().numpy(), np.sort(a, 0))
    assert np.array_equal(tl.msort(t).numpy(), torch.msort(torch.from_numpy(a)).numpy())
    assert np.array_equal(t.argsort(0, stable=True).numpy(), np.argsort(a, 0, kind="stable"))
    assert np.array_equal(t.argsort(dim=1, descending=True).numpy(),
                          torch.from_numpy(a).argsort(dim=1, descending=True, stable=True).numpy())


def test_sort_thread_count_does_not_matter():
    """Many rows (split by rows) and one long row (split within the row) give the same
    answer with 1 or 3 threads."""
    rng = np.random.default_rng(2)
    many = tl.from_numpy(rng.integers(0, 50, (64, 3000)).astype(np.float32))
    one = tl.from_numpy(rng.integers(0, 1000, 300_000).astype(np.float32))
    old = tl.get_num_threads()
    results = []
    try:
        for n in (1, 3):
            tl.set_num_threads(n)
            results.append([r.numpy() for t in (many, one) for r in (*tl.sort(t), *tl.topk(t, 7))])
    finally:
        tl.set_num_threads(old)
    for a, b in zip(*results):
        assert np.array_equal(a, b)
    assert np.array_equal(results[0][5], np.argsort(one.numpy(), kind="stable"))


# ---------------------------------------------------------------------------------------------
# topk

def check_topk(t, k, dim, largest, vals, idx):
    a = ref_values(t)
    d = dim % max(a.ndim, 1)
    if a.ndim == 0:
        same(np_of(vals), a)
        return
    order = desc_order(a, d) if largest else np.argsort(a, axis=d, kind="stable")
    want = np.take_along_axis(a, np.take(order, np.arange(k), axis=d), axis=d)
    same(np_of(vals), want, signs=False)       # values sorted, NaN counted as largest
    assert idx.dtype == tl.int64 and idx.shape == vals.shape
    same(np.take_along_axis(a, idx.numpy(), axis=d), np_of(vals))   # indices point at the values
    # the indices within a row are distinct
    if k > 0:
        ii = np.moveaxis(idx.numpy(), d, -1).reshape(-1, k)
        assert all(len(set(r)) == k for r in ii)


@given(shape=shapes, dtype=st.sampled_from(NUMERIC), seed=st.integers(0, 2**31),
       largest=st.booleans(), layout=layouts, data=st.data())
def test_topk_matches_numpy(shape, dtype, seed, largest, layout, data):
    rng = np.random.default_rng(seed)
    t = strided_variant(to_tl(rand_array(rng, shape, dtype), dtype), layout)
    ndim = max(t.dim(), 1)
    dim = data.draw(st.integers(-ndim, ndim - 1))
    n = t.shape[dim] if t.dim() else 1
    k = data.draw(st.integers(0, n))
    v, i = tl.topk(t, k, dim, largest=largest)
    if t.dim():
        exp = list(t.shape)
        exp[dim] = k
        assert tuple(v.shape) == tuple(exp) and v.is_contiguous()
    check_topk(t, k, dim, largest, v, i)


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("n,k", [(5000, 10), (5000, 1), (5000, 300), (100000, 50), (3000, 3000)])
def test_topk_streaming_and_full(dtype, n, k):
    """k small next to n takes the streaming filter; k large the select + sort path."""
    rng = np.random.default_rng(n + k)
    t = to_tl(rand_array(rng, (n,), dtype), dtype)
    for largest in (True, False):
        v, i = tl.topk(t, k, largest=largest)
        check_topk(t, k, 0, largest, v, i)


def test_topk_sorted_input_worst_cases():
    """Ascending / descending / constant input: the filter threshold keeps moving."""
    for a in [np.arange(20000, dtype=np.float32), np.arange(20000, 0, -1).astype(np.float32),
              np.zeros(20000, np.float32)]:
        t = tl.from_numpy(a)
        for largest in (True, False):
            v, i = tl.topk(t, 20, largest=largest)
            check_topk(t, 20, 0, largest, v, i)
    v, i = tl.topk(tl.zeros(20000), 5)
    assert i.tolist() == [0, 1, 2, 3, 4]       # ties go to the lower index


def test_topk_nan_matches_torch(torch):
    x = [3.0, NAN, 1.0, 2.0, NAN, 1.0, -0.0, 0.0]
    for k in range(9):
        for largest in (True, False):
            v, i = tl.topk(tl.tensor(x), k, largest=largest)
            rv, ri = torch.topk(torch.tensor(x), k, largest=largest)
            # -0 and +0 tie: torch's order between them is its own; compare as numbers
            assert np.array_equal(np.nan_to_num(v.numpy(), nan=9), np.nan_to_num(rv.numpy(), nan=9))
            assert np.array_equal(np.array(x)[i.numpy()], v.numpy(), equal_nan=True)


@TORCH_OK
@given(shape=st.lists(st.integers(1, 8), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from(NUMERIC), seed=st.integers(0, 2**31), largest=st.booleans(),
       data=st.data())
def test_topk_values_match_torch(torch, shape, dtype, seed, largest, data):
    rng = np.random.default_rng(seed)
    t = to_tl(rand_array(rng, shape, dtype), dtype)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(0, shape[dim]))
    tt = torch.from_numpy(ref_values(t)).to(getattr(torch, dtype))
    rv, ri = torch.topk(tt, k, dim, largest=largest)
    v, i = t.topk(k, dim, largest=largest)
    want = rv.float().numpy() if dtype in ("float16", "bfloat16") else rv.numpy()
    got = np_of(v)
    assert got.shape == want.shape
    if got.dtype.kind == "f":
        assert np.array_equal(got, want, equal_nan=True)
    else:
        assert np.array_equal(got, want)


def test_topk_edge_cases_and_errors():
    x = tl.tensor([[1.0, 5.0, 3.0]])
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        tl.topk(x, 4)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        tl.topk(x, -1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        tl.topk(x, 1, dim=2)
    with pytest.raises(RuntimeError, match="topk does not support bool dtypes on CPU"):
        tl.topk(tl.tensor([True, False]), 1)
    with pytest.raises(TypeError, match=r"topk\(\): argument 'k' \(position 2\) must be int, not float"):
        tl.topk(x, 2.0)
    v, i = tl.topk(x, 0)
    assert v.shape == (1, 0) and i.shape == (1, 0)
    v, i = tl.topk(tl.zeros(0, 3), 2)
    assert v.shape == (0, 2)
    v, i = tl.topk(tl.zeros(3, 0), 0)
    assert v.shape == (3, 0)
    for k in (0, 1):                           # 0-d: PyTorch gives the element back
        v, i = tl.topk(tl.tensor(5.0), k)
        assert v.shape == () and v.item() == 5.0 and i.item() == 0
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        tl.topk(tl.tensor(5.0), 2)
    r = x.topk(2, sorted=False, largest=False)
    assert type(r) is tl.return_types.topk and sorted(r.values[0].tolist()) == [1.0, 3.0]
    v, i = tl.empty(0), tl.empty(0, dtype=tl.int64)
    r = tl.topk(x, 2, out=(v, i))
    assert r.values is v and v.tolist() == [[5.0, 3.0]] and i.tolist() == [[1, 2]]
    with pytest.raises(RuntimeError, match="dtype long int, but got int instead"):
        tl.topk(x, 2, out=(v, tl.empty(0, dtype=tl.int32)))


# ---------------------------------------------------------------------------------------------
# kthvalue / median / nanmedian

def nan_last_sorted(a, axis):
    return np.sort(a, axis=axis)             # NumPy puts NaN last too


@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=3).map(tuple) | st.sampled_from([(3, 100), (70,)]),
       dtype=st.sampled_from(NUMERIC), seed=st.integers(0, 2**31), keepdim=st.booleans(),
       layout=layouts, data=st.data())
def test_kthvalue_matches_numpy(shape, dtype, seed, keepdim, layout, data):
    rng = np.random.default_rng(seed)
    t = strided_variant(to_tl(rand_array(rng, shape, dtype), dtype), layout)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    k = data.draw(st.integers(1, shape[dim]))
    a = ref_values(t)
    v, i = tl.kthvalue(t, k, dim, keepdim)
    want = np.take(nan_last_sorted(a, dim), [k - 1], axis=dim)
    got_i = i.numpy() if keepdim else np.expand_dims(i.numpy(), dim)
    got_v = np_of(v) if keepdim else np.expand_dims(np_of(v), dim)
    same(got_v, want, signs=False)
    same(np.take_along_axis(a, got_i, axis=dim), got_v)
    assert v.dtype == t.dtype and i.dtype == tl.int64


def median_ref(a, axis):
    """PyTorch's median along axis: the lower middle, NaN (at the first NaN) if any."""
    lower = median_lower(a, axis=axis)
    if a.dtype.kind == "f":
        has_nan = np.isnan(a).any(axis=axis)
        lower = np.where(has_nan, np.nan, lower).astype(a.dtype)
    return lower


def nanmedian_ref(a, axis):
    a = np.moveaxis(a, axis, -1)
    out = np.empty(a.shape[:-1], a.dtype)
    for idx in np.ndindex(*a.shape[:-1]):
        row = a[idx]
        ok = row[~np.isnan(row)]
        out[idx] = np.sort(ok)[(len(ok) - 1) // 2] if len(ok) else np.nan
    return out


@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=3).map(tuple) | st.sampled_from([(3, 100), (70,)]),
       dtype=st.sampled_from(NUMERIC), seed=st.integers(0, 2**31), keepdim=st.booleans(),
       layout=layouts, nan=st.booleans(), data=st.data())
def test_median_and_nanmedian_match_reference(shape, dtype, seed, keepdim, layout, nan, data):
    rng = np.random.default_rng(seed)
    t = strided_variant(to_tl(rand_array(rng, shape, dtype, specials=nan), dtype), layout)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    a = ref_values(t)
    d = dim % len(shape)
    for fn, ref in [(tl.median, median_ref), (tl.nanmedian, nanmedian_ref)]:
        if ref is nanmedian_ref and a.dtype.kind != "f":
            ref = median_ref
        v, i = fn(t, dim, keepdim)
        want = ref(a, d)
        if keepdim:
            want = np.expand_dims(want, d)
        same(np_of(v), want, signs=False)
        got_i = i.numpy() if keepdim else np.expand_dims(i.numpy(), d)
        picked = np.take_along_axis(a, got_i, axis=d)
        same(picked, np_of(v) if keepdim else np.expand_dims(np_of(v), d))
        # the whole-tensor form
        whole = fn(t)
        assert whole.shape == () and whole.dtype == t.dtype
        same(np_of(whole), ref(a.reshape(-1), 0), signs=False)


def test_median_nan_index_is_first_nan(torch):
    x = [1.0, NAN, 3.0, NAN, 2.0]
    r = tl.median(tl.tensor(x), 0)
    assert np.isnan(r.values.item()) and r.indices.item() == 1
    m = [[1.0, NAN, NAN], [NAN, 2.0, NAN]]
    r, tr = tl.median(tl.tensor(m), 1), torch.median(torch.tensor(m), 1)
    assert r.indices.tolist() == tr.indices.tolist()
    r, tr = tl.nanmedian(tl.tensor(m), 1), torch.nanmedian(torch.tensor(m), 1)
    assert r.indices.tolist() == tr.indices.tolist()
    assert np.array_equal(r.values.numpy(), tr.values.numpy(), equal_nan=True)
    assert tl.nanmedian(tl.tensor([NAN, 1.0, NAN, 3.0, 2.0, 5.0])).item() == 2.0
    assert np.isnan(tl.nanmedian(tl.tensor([NAN, NAN])).item())


def test_median_even_count_is_lower_middle(torch):
    x = [4.0, 1.0, 3.0, 2.0]
    assert tl.median(tl.tensor(x)).item() == 2.0 == torch.median(torch.tensor(x)).item()
    r = tl.median(tl.tensor([[4, 1, 3, 2], [8, 6, 7, 5]]), 1)
    assert r.values.tolist() == [2, 6] and r.indices.tolist() == [3, 1]


def test_select_errors_and_edges(torch):
    x = tl.zeros(3, 4)
    with pytest.raises(RuntimeError, match=r"kthvalue\(\): selected number k out of range for dimension 1"):
        tl.kthvalue(x, 5)
    with pytest.raises(RuntimeError, match="selected number k out of range for dimension 0"):
        tl.kthvalue(x, 0, 0)
    with pytest.raises(IndexError, match=r"kthvalue\(\): Expected reduction dim 1 to have non-zero size"):
        tl.kthvalue(tl.zeros(3, 0), 1, 1)
    with pytest.raises(IndexError, match=r"median\(\): Expected reduction dim 0 to have non-zero size"):
        tl.median(tl.zeros(0, 3), 0)
    with pytest.raises(IndexError, match=r"median\(\): Expected reduction dim 0"):
        tl.nanmedian(tl.zeros(0, 3), 0)
    with pytest.raises(IndexError, match=r"mode\(\): Expected reduction dim 0 to have non-zero size"):
        tl.mode(tl.zeros(0, 3), 0)
    with pytest.raises(NotImplementedError, match="\"kthvalue_cpu\" not implemented for 'Bool'"):
        tl.kthvalue(tl.tensor([True]), 1)
    with pytest.raises(NotImplementedError, match="\"median_cpu\" not implemented for 'Bool'"):
        tl.median(tl.tensor([True]))
    with pytest.raises(NotImplementedError, match="median_out"):
        tl.median(tl.tensor([True]), 0)
    with pytest.raises(IndexError):
        tl.median(x, 2)
    # empty reductions over a non-empty dim
    assert tl.kthvalue(tl.zeros(0, 3), 1, 1).values.shape == (0,)
    assert tl.median(tl.zeros(0, 3), 1, keepdim=True).values.shape == (0, 1)
    assert tl.mode(tl.zeros(0, 3), 1).indices.shape == (0,)
    # median of nothing: NaN, or what PyTorch's NaN-to-integer conversion gives
    assert np.isnan(tl.median(tl.empty(0)).item())
    assert np.isnan(tl.median(tl.empty(0, dtype=tl.float16)).float().item())
    for dt in ["int64", "int32", "int16", "int8", "uint8"]:
        assert tl.median(tl.empty(0, dtype=getattr(tl, dt))).item() == \
            torch.median(torch.empty(0, dtype=getattr(torch, dt))).item()
    # 0-d
    s = tl.tensor(7.0)
    for r in (tl.kthvalue(s, 1), tl.median(s, 0), tl.mode(s), tl.nanmedian(s, -1),
              tl.kthvalue(s, 1, keepdim=True)):
        assert r.values.shape == () and r.values.item() == 7.0 and r.indices.item() == 0
    assert tl.median(s).item() == 7.0


def test_select_out_and_methods():
    x = tl.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    r = x.kthvalue(2, 1, True)
    assert type(r) is tl.return_types.kthvalue and r.values.tolist() == [[2.0], [4.0]]
    assert r.indices.tolist() == [[2], [2]]
    v, i = tl.empty(0), tl.empty(0, dtype=tl.int64)
    assert tl.median(x, 1, out=(v, i)).values is v and v.tolist() == [2.0, 4.0] and i.tolist() == [2, 2]
    assert type(x.median(0)) is tl.return_types.median
    assert type(x.nanmedian(0)) is tl.return_types.nanmedian
    assert x.median().item() == 2.0 and x.nanmedian().item() == 2.0
    with pytest.raises(RuntimeError, match="dtype float, but got double"):
        tl.kthvalue(x, 1, out=(tl.empty(0, dtype=tl.float64), i))
    r = tl.mode(x, 0, out=(v, i))
    assert r.values is v and r.indices is i


# ---------------------------------------------------------------------------------------------
# mode

def mode_ref(row):
    """Most frequent (NaN never equal to anything), smallest among ties, last index of it."""
    keyed = [(0.0 if (isinstance(x, float) and x == 0) else x) for x in row.tolist()]
    counts = collections.Counter(x for x in keyed if x == x)
    nan_pos = [j for j, x in enumerate(keyed) if x != x]
    if counts:
        best = max(counts.values())
        cands = sorted(v for v, c in counts.items() if c == best)
        if best > 1 or not nan_pos:
            val = cands[0]
            return val, max(j for j, x in enumerate(keyed) if x == val)
        return cands[0], max(j for j, x in enumerate(keyed) if x == cands[0])
    return float("nan"), nan_pos[0]


@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=3).map(tuple) | st.sampled_from([(3, 100)]),
       dtype=st.sampled_from(ALL_DTYPES), seed=st.integers(0, 2**31), keepdim=st.booleans(),
       layout=layouts, data=st.data())
def test_mode_matches_reference(shape, dtype, seed, keepdim, layout, data):
    rng = np.random.default_rng(seed)
    t = strided_variant(to_tl(rand_array(rng, shape, dtype), dtype), layout)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    d = dim % len(shape)
    a = ref_values(t)
    v, i = tl.mode(t, dim, keepdim)
    vv, ii = np_of(v), i.numpy()
    if not keepdim:
        vv, ii = np.expand_dims(vv, d), np.expand_dims(ii, d)
    am = np.moveaxis(a, d, -1)
    vm, im = np.moveaxis(vv, d, -1), np.moveaxis(ii, d, -1)
    for idx in np.ndindex(*am.shape[:-1]):
        val, pos = mode_ref(am[idx])
        got = vm[idx][0]
        assert (got == val) or (got != got and val != val), (am[idx], got, val)
        assert im[idx][0] == pos


def test_mode_index_matches_torch_short_rows(torch):
    """PyTorch returns the last occurrence for rows of up to 16 elements."""
    rng = np.random.default_rng(5)
    for n in range(1, 17):
        for _ in range(20):
            a = rng.integers(0, 4, (3, n))
            r, tr = tl.mode(tl.from_numpy(a)), torch.mode(torch.from_numpy(a))
            assert r.values.tolist() == tr.values.tolist()
            assert r.indices.tolist() == tr.indices.tolist()
    for x in ([-0.0, 0.0], [0.0, -0.0], [1.0, 0.0, 1.0, 0.0]):
        r, tr = tl.mode(tl.tensor(x)), torch.mode(torch.tensor(x))
        assert r.indices.item() == tr.indices.item()
        assert np.signbit(r.values.item()) == np.signbit(tr.values.item())


def test_mode_bool_and_nan():
    r = tl.mode(tl.tensor([True, False, True]))
    assert r.values.item() is True and r.indices.item() == 2
    r = tl.mode(tl.tensor([NAN, NAN]))
    assert np.isnan(r.values.item()) and r.indices.item() == 0
    r = tl.mode(tl.tensor([2.0, NAN, NAN, 2.0]))
    assert r.values.item() == 2.0 and r.indices.item() == 3


# ---------------------------------------------------------------------------------------------
# unique / unique_consecutive

def check_inverse(a, u, inv, want_inv):
    """inverse maps every element to its unique entry: exactly the reference's for numbers;
    each NaN gets its own NaN entry (which one is the sort's business in NumPy and torch)."""
    a, inv, want_inv = a.reshape(-1), inv.reshape(-1), np.asarray(want_inv).reshape(-1)
    nan = np.isnan(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool)
    assert np.array_equal(inv[~nan], want_inv[~nan])
    assert np.all(np.isnan(u[inv[nan]])) and len(set(inv[nan].tolist())) == nan.sum()

@given(shape=shapes, dtype=st.sampled_from(ALL_DTYPES), seed=st.integers(0, 2**31),
       layout=layouts, ri=st.booleans(), rc=st.booleans())
def test_unique_matches_numpy(shape, dtype, seed, layout, ri, rc):
    rng = np.random.default_rng(seed)
    t = strided_variant(to_tl(rand_array(rng, shape, dtype), dtype), layout)
    a = ref_values(t)
    kw = {"equal_nan": False} if a.dtype.kind == "f" else {}
    u, inv, cnt = np.unique(a, return_inverse=True, return_counts=True, **kw)
    res = tl.unique(t, return_inverse=ri, return_counts=rc)
    if not ri and not rc:
        res = (res,)
    assert len(res) == 1 + ri + rc
    got_u = np_of(res[0])
    assert res[0].dtype == t.dtype
    # NumPy keeps one zero of either sign; so do we (the first in sorted order) -- compare as numbers
    assert np.array_equal(got_u, u, equal_nan=True) if a.dtype.kind == "f" else np.array_equal(got_u, u)
    if ri:
        assert res[1].shape == t.shape and res[1].dtype == tl.int64
        check_inverse(a, got_u, res[1].numpy(), inv)
    if rc:
        assert np.array_equal(res[-1].numpy(), cnt)


def test_unique_matches_torch(torch):
    rng = np.random.default_rng(3)
    for dtype in ALL_DTYPES:
        a = rand_array(rng, (5, 40), dtype)
        t = to_tl(a, dtype)
        tt = torch.from_numpy(ref_values(t)).to(getattr(torch, dtype))
        u, inv, cnt = tl.unique(t, return_inverse=True, return_counts=True)
        ru, rinv, rcnt = torch.unique(tt, return_inverse=True, return_counts=True)
        want = ru.float().numpy() if dtype in ("float16", "bfloat16") else ru.numpy()
        same(np_of(u), want, signs=False)    # which zero stands for -0 == +0 is the sort's choice
        check_inverse(ref_values(t), np_of(u), inv.numpy(), rinv.numpy())
        assert np.array_equal(cnt.numpy(), rcnt.numpy())
        u2 = tl.unique(t, sorted=False)
        same(np_of(u2), want, signs=False)                  # PyTorch's CPU unique sorts anyway


@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3).map(tuple),
       dtype=st.sampled_from(ALL_DTYPES), seed=st.integers(0, 2**31), layout=layouts,
       data=st.data())
def test_unique_dim_matches_numpy(shape, dtype, seed, layout, data):
    rng = np.random.default_rng(seed)
    a0 = rng.integers(0, 2, shape)             # few distinct slices
    t = strided_variant(to_tl(a0, dtype), layout)
    a = ref_values(t)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    u, inv, cnt = np.unique(a, return_inverse=True, return_counts=True, axis=dim)
    gu, ginv, gcnt = tl.unique(t, return_inverse=True, return_counts=True, dim=dim)
    assert gu.is_contiguous()
    assert np.array_equal(np_of(gu), u)
    assert np.array_equal(ginv.numpy(), inv.reshape(-1)) and np.array_equal(gcnt.numpy(), cnt)


def test_unique_dim_torch_cases(torch):
    m = [[1, 2], [0, 5], [1, 2], [0, 5], [0, 1]]
    for dim in (0, 1, -1):
        got = tl.unique(tl.tensor(m), dim=dim, return_inverse=True, return_counts=True)
        want = torch.unique(torch.tensor(m), dim=dim, return_inverse=True, return_counts=True)
        for g, w in zip(got, want):
            assert g.tolist() == w.tolist()
    # rows holding a NaN equal no other row; -0 equals +0
    got = tl.unique(tl.tensor([[1.0, NAN], [1.0, NAN], [0.0, 5.0]]), dim=0, return_inverse=True)
    assert got[0].shape == (3, 2) and got[1].tolist() == [1, 2, 0]
    got = tl.unique(tl.tensor([[0.0, -0.0], [-0.0, 0.0]]), dim=0, return_inverse=True)
    assert got[0].tolist() == [[0.0, -0.0]] and got[1].tolist() == [0, 0]


def test_unique_empty_and_errors():
    u, inv, cnt = tl.unique(tl.empty(0, 3), return_inverse=True, return_counts=True)
    assert u.shape == (0,) and inv.shape == (0, 3) and cnt.shape == (0,)
    u, inv, cnt = tl.unique(tl.empty(0, 3), dim=0, return_inverse=True, return_counts=True)
    assert u.shape == (0, 3) and inv.shape == (0,) and cnt.shape == (0,)
    u, inv, cnt = tl.unique(tl.empty(3, 0), dim=1, return_inverse=True, return_counts=True)
    assert u.shape == (3, 0)
    with pytest.raises(RuntimeError, match="There are 0 sized dimensions, and they aren't selected"):
        tl.unique(tl.empty(3, 0), dim=0)
    with pytest.raises(IndexError, match="specified as 0 but tensor has no dimensions"):
        tl.unique(tl.tensor(3), dim=0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        tl.unique(tl.zeros(2, 2), dim=2)
    u, inv, cnt = tl.unique(tl.tensor(3), return_inverse=True, return_counts=True)
    assert u.tolist() == [3] and inv.shape == () and inv.item() == 0 and cnt.tolist() == [1]
    # method form, positional flags
    u, inv = tl.tensor([3, 1, 3]).unique(True, True)
    assert u.tolist() == [1, 3] and inv.tolist() == [1, 0, 1]
    u, c = tl.unique(tl.tensor([3, 1, 3]), return_counts=True)
    assert c.tolist() == [1, 2]


def consecutive_ref(values):
    out, inv, cnt = [], [], []
    for x in values:
        if out and x == out[-1]:               # NaN != NaN starts a new run
            cnt[-1] += 1
        else:
            out.append(x)
            cnt.append(1)
        inv.append(len(out) - 1)
    return out, inv, cnt


@given(shape=shapes, dtype=st.sampled_from(ALL_DTYPES), seed=st.integers(0, 2**31), layout=layouts)
def test_unique_consecutive_matches_reference(shape, dtype, seed, layout):
    rng = np.random.default_rng(seed)
    a0 = np.sort(rand_array(rng, shape, dtype), axis=None).reshape(shape) if rng.random() < 0.5 \
        else rand_array(rng, shape, dtype)
    t = strided_variant(to_tl(a0, dtype), layout)
    a = ref_values(t)
    out, inv, cnt = consecutive_ref(a.reshape(-1).tolist())
    u, ginv, gcnt = tl.unique_consecutive(t, return_inverse=True, return_counts=True)
    assert np.array_equal(np_of(u), np.array(out, dtype=a.dtype).reshape(-1), equal_nan=a.dtype.kind == "f")
    assert ginv.shape == t.shape and ginv.numpy().reshape(-1).tolist() == inv
    assert gcnt.tolist() == cnt


def test_unique_consecutive_torch(torch):
    cases = [[3, 3, 1, 1, 2, 1, 3], [2.0, NAN, NAN, 2.0, -0.0, 0.0]]
    for x in cases:
        got = tl.unique_consecutive(tl.tensor(x), return_inverse=True, return_counts=True)
        want = torch.unique_consecutive(torch.tensor(x), return_inverse=True, return_counts=True)
        assert np.array_equal(got[0].numpy(), want[0].numpy(), equal_nan=True)
        assert got[1].tolist() == want[1].tolist() and got[2].tolist() == want[2].tolist()
    m = [[1, 2], [1, 2], [0, 5], [1, 2]]
    for dim in (0, 1):
        got = tl.unique_consecutive(tl.tensor(m), dim=dim, return_inverse=True, return_counts=True)
        want = torch.unique_consecutive(torch.tensor(m), dim=dim, return_inverse=True, return_counts=True)
        for g, w in zip(got, want):
            assert g.tolist() == w.tolist()
    assert tl.tensor([1, 1, 2]).unique_consecutive().tolist() == [1, 2]
    with pytest.raises(RuntimeError, match="There are 0 sized dimensions"):
        tl.unique_consecutive(tl.empty(3, 0), dim=0)


# ---------------------------------------------------------------------------------------------
# large inputs (parallel chunks, radix passes, the wide item path)

@pytest.mark.parametrize("specials", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "int64", "float64", "int16", "bfloat16", "float16"])
def test_large_rows(dtype, specials):
    """Long single rows take the all-threads radix sort and segmented topk; rows without NaN
    or -0 get their values rebuilt from the keys, others read back through the indices."""
    rng = np.random.default_rng(11)
    t = to_tl(rand_array(rng, (200_000,), dtype, specials), dtype)
    a = ref_values(t)
    v, i = tl.sort(t)
    order = np.argsort(a, kind="stable")
    assert np.array_equal(i.numpy(), order)
    same(np_of(v), a[order])
    v, i = tl.sort(t, descending=True)
    order = desc_order(a, 0)
    assert np.array_equal(i.numpy(), order)
    same(np_of(v), a[order])
    for k in (1, 10, 100, 5000):
        v, i = tl.topk(t, k, largest=k != 100)
        check_topk(t, k, 0, k != 100, v, i)
    kv, ki = tl.kthvalue(t, 12345)
    same(np_of(kv), np.sort(a)[12344], signs=False)
    same(a[ki.item()], np_of(kv))
    for fn, ref in [(tl.median, median_ref), (tl.nanmedian, nanmedian_ref if a.dtype.kind == "f" else median_ref)]:
        mv, mi = fn(t, 0)
        same(np_of(mv), ref(a, 0), signs=False)
        same(a[mi.item()], np_of(mv))
        if a.dtype.kind == "f" and np.isnan(a).any() and fn is tl.median:
            assert mi.item() == np.flatnonzero(np.isnan(a))[0]
        same(np_of(fn(t)), ref(a, 0), signs=False)
    u, c = tl.unique(t, return_counts=True)
    assert int(np.sum(c.numpy())) == a.size


def test_many_rows_parallel():
    rng = np.random.default_rng(12)
    a = rng.standard_normal((1000, 129)).astype(np.float32)
    t = tl.from_numpy(a)
    assert np.array_equal(tl.argsort(t, 1).numpy(), np.argsort(a, 1, kind="stable"))
    assert np.array_equal(tl.argsort(t, 0).numpy(), np.argsort(a, 0, kind="stable"))
    v, i = tl.topk(t, 5, 0)
    check_topk(t, 5, 0, True, v, i)
    same(tl.median(t, 1).values.numpy(), median_lower(a, axis=1))


@pytest.mark.parametrize("lo,hi", [(-5, 5), (2**40, 2**40 + 2**32 - 1), (-2**62, -2**62 + 2**31)])
def test_int64_narrow_range(lo, hi):
    """int64 tensors spanning less than 2^32 are sorted as 32-bit keys: values, indices,
    descending order and mode must be exactly those of the 64-bit path / NumPy."""
    rng = np.random.default_rng(13)
    a = rng.integers(lo, hi, (40, 3000), endpoint=True, dtype=np.int64)
    a[0, 0], a[-1, -1] = lo, hi                # both ends of the range present
    t = tl.from_numpy(a)
    for dim in (0, 1):
        v, i = tl.sort(t, dim)
        assert np.array_equal(i.numpy(), np.argsort(a, dim, kind="stable"))
        assert np.array_equal(v.numpy(), np.sort(a, dim))
        v, i = tl.sort(t, dim, descending=True)
        order = desc_order(a, dim)
        assert np.array_equal(i.numpy(), order)
        assert np.array_equal(v.numpy(), np.take_along_axis(a, order, dim))
    flat = tl.from_numpy(a.reshape(-1))        # one long row: the all-threads path
    assert np.array_equal(tl.argsort(flat).numpy(), np.argsort(a.reshape(-1), kind="stable"))
    small = tl.from_numpy(rng.integers(lo, lo + 20, (100, 2000), dtype=np.int64))
    mv, mi = tl.mode(small, 1)
    for r in range(0, 100, 17):
        val, pos = mode_ref(small.numpy()[r])
        assert mv[r].item() == val and mi[r].item() == pos
    u, c = tl.unique(t, return_counts=True)
    ru, rc = np.unique(a, return_counts=True)
    assert np.array_equal(u.numpy(), ru) and np.array_equal(c.numpy(), rc)


def test_size_one_dim_rows():
    """A dim of size 1: each element is its own answer, at index 0."""
    rng = np.random.default_rng(14)
    a = rng.standard_normal((3000, 1, 2)).astype(np.float32)
    t = tl.from_numpy(a)
    v, i = tl.sort(t, 1, descending=True)
    assert np.array_equal(v.numpy(), a) and not i.numpy().any() and v.stride() == t.stride()
    v, i = tl.topk(t, 1, 1)
    assert np.array_equal(v.numpy(), a) and i.shape == (3000, 1, 2)
    for fn in (tl.median, tl.mode, tl.nanmedian):
        v, i = fn(t, 1)
        assert np.array_equal(v.numpy(), a[:, 0]) and i.shape == (3000, 2) and not i.numpy().any()
    v, i = tl.kthvalue(t, 1, 1, keepdim=True)
    assert np.array_equal(v.numpy(), a)


def test_out_partial_overlap_raises():
    x = tl.arange(6.0).flip(0).contiguous()
    i = tl.empty(0, dtype=tl.int64)
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        tl.sort(x[:3], out=(x[1:4], i))
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        tl.topk(x, 2, out=(x[:2], i))
    assert x.tolist() == [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]
