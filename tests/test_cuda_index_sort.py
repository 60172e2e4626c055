"""Sorting and indexing on the CUDA device (cuda/index_ops.cu through
tensorlib/cuda/_indexing.py), on the emulator (conftest: TENSORLIB_CUDA=emulate, two
devices), against the CPU back end and PyTorch: sort/argsort/topk/kthvalue/median/mode with
ties, NaNs and -0, rows shorter and longer than one shared-memory tile; gather/scatter/
scatter_add/scatter_reduce/index_* / take / put / index_put_ (accumulate) with repeated
indices; nonzero, masked_select, boolean-mask and tensor indexing (read and write), unique;
bad indices raise PyTorch's errors without writing anything."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlib

torch = pytest.importorskip("torch")
cuda = tensorlib.cuda
pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="no CUDA device (emulator off)")

DEV = "cuda"
ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
       "float64"]
SORTABLE = ALL


def _dt(name):
    return getattr(tensorlib, name)


def host(t):
    t = t.detach().cpu()
    if t.dtype == tensorlib.bfloat16:
        t = t.float()
    return t.numpy()


def same(a, b):
    """Bitwise-equal values (-0 and +0 told apart for floats); NaNs at the same places
    (arithmetic on a GPU makes its canonical NaN, x86 keeps the operand's sign and payload,
    so a NaN's bits are compared only where results are copies: ``same_bits``)."""
    x, y = host(a), host(b)
    assert x.shape == y.shape and x.dtype == y.dtype, (x.shape, y.shape, x.dtype, y.dtype)
    if x.dtype.kind == "f":
        nx, ny = np.isnan(x), np.isnan(y)
        assert np.array_equal(nx, ny), (x, y)
        u = f"u{x.itemsize}"
        assert np.array_equal(x[~nx].view(u), y[~ny].view(u)), (x, y)
    else:
        assert np.array_equal(x, y), (x, y)


def _values(rng, dtype, shape, ties=True):
    """Values with many ties (small range) and, for floats, NaN, inf and -0."""
    n = int(np.prod(shape))
    if dtype == "bool":
        a = rng.integers(0, 2, n).astype(bool)
    elif dtype in ("float16", "bfloat16", "float32", "float64"):
        a = (rng.integers(-4, 5, n) if ties else rng.standard_normal(n) * 10).astype(np.float64)
        special = rng.random(n)
        a[special < 0.08] = np.nan
        a[(special >= 0.08) & (special < 0.12)] = -0.0
        a[(special >= 0.12) & (special < 0.14)] = np.inf
        a[(special >= 0.14) & (special < 0.16)] = -np.inf
    else:
        lo, hi = (0, 6) if dtype == "uint8" else (-5, 6)
        a = rng.integers(lo, hi, n) if ties else rng.integers(-100, 100, n)
        if dtype == "uint8":
            a = np.abs(a)
    t = tensorlib.tensor(a.reshape(shape).tolist(), dtype=tensorlib.float64
                         if a.dtype.kind == "f" else None)
    return t.to(_dt(dtype))


def _torch(t):
    return torch.from_numpy(host(t.float() if t.dtype == tensorlib.bfloat16 else t).copy())


def same_bits(a, b):
    """Bitwise-equal values, NaN payloads included (results that are copies of inputs)."""
    x, y = host(a), host(b)
    assert x.shape == y.shape and x.dtype == y.dtype
    u = f"u{x.itemsize}" if x.dtype.kind == "f" else x.dtype
    assert np.array_equal(x.view(u), y.view(u)), (x, y)


# ---- sort / argsort / topk / kthvalue / median / mode ----------------------------------------

@settings(max_examples=25, deadline=None)
@given(st.sampled_from(SORTABLE), st.lists(st.integers(1, 7), min_size=1, max_size=3),
       st.data(), st.booleans(), st.integers(0, 2**31))
def test_sort_matches_cpu(dtype, shape, data, descending, seed):
    rng = np.random.default_rng(seed)
    x = _values(rng, dtype, shape)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    a = x.sort(dim, descending=descending, stable=True)
    b = x.to(DEV).sort(dim, descending=descending, stable=True)
    same_bits(a.values, b.values)
    same(a.indices, b.indices)
    same(x.argsort(dim, descending=descending, stable=True),
         x.to(DEV).argsort(dim, descending=descending, stable=True))


@pytest.mark.parametrize("n", [1, 2, 3, 63, 2048, 2049, 5000])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_row_lengths_against_torch(n, descending):
    # one tile, several tiles merged, a non-power-of-two tail
    rng = np.random.default_rng(n)
    a = rng.integers(-20, 20, (2, n)).astype(np.float32)
    a[rng.random((2, n)) < 0.05] = np.nan
    x = tensorlib.tensor(a.tolist(), device=DEV)
    r = x.sort(1, descending=descending, stable=True)
    t = torch.from_numpy(a).sort(dim=1, descending=descending, stable=True)
    np.testing.assert_array_equal(host(r.values), t.values.numpy())
    np.testing.assert_array_equal(host(r.indices), t.indices.numpy())


def test_sort_strided_and_nan_payloads():
    base = tensorlib.tensor([[3.0, float("nan"), -0.0, 0.0, 1.0, -float("nan")]] * 3)
    x, xd = base.t(), base.to(DEV).t()
    assert not xd.is_contiguous()
    for dim in (0, 1):
        for desc in (False, True):
            a, b = x.sort(dim, descending=desc), xd.sort(dim, descending=desc)
            same_bits(a.values, b.values)
            same(a.indices, b.indices)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([d for d in SORTABLE if d != "bool"]), st.integers(1, 40),
       st.integers(1, 3), st.booleans(), st.integers(0, 2**31))
def test_topk_matches_cpu_and_torch(dtype, n, rows, largest, seed):
    rng = np.random.default_rng(seed)
    x = _values(rng, dtype, (rows, n))
    k = int(rng.integers(0, n + 1))
    a = x.topk(k, 1, largest=largest)
    b = x.to(DEV).topk(k, 1, largest=largest)
    same(a.values, b.values)
    same(a.indices, b.indices)
    if dtype in ("float32", "float64", "int64", "int32"):
        t = _torch(x).topk(k, 1, largest=largest, sorted=True)
        np.testing.assert_array_equal(host(b.values), t.values.numpy())


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([d for d in SORTABLE if d != "bool"]), st.integers(1, 30),
       st.integers(1, 3), st.integers(0, 2**31))
def test_selection_and_mode_match_cpu(dtype, n, rows, seed):
    rng = np.random.default_rng(seed)
    x = _values(rng, dtype, (rows, n))
    xd = x.to(DEV)
    k = int(rng.integers(1, n + 1))
    for name, args in (("kthvalue", (k, 1)), ("median", (1,)), ("nanmedian", (1,)),
                       ("mode", (1,))):
        a, b = getattr(x, name)(*args), getattr(xd, name)(*args)
        same(a.values, b.values)
        same(a.indices, b.indices)
    same(x.median(), xd.median())
    if dtype in ("float32", "float64"):
        t = _torch(x)
        for name, args in (("kthvalue", (k, 1)), ("median", (1,)), ("nanmedian", (1,))):
            np.testing.assert_array_equal(host(getattr(xd, name)(*args).values),
                                          getattr(t, name)(*args).values.numpy())


def test_mode_and_median_ties_against_torch():
    a = np.array([[2, 1, 2, 1, 3], [5, 5, 4, 4, 4]], dtype=np.int64)
    x = tensorlib.tensor(a.tolist(), device=DEV)
    t = torch.from_numpy(a)
    m, tm = x.mode(1), t.mode(1)
    np.testing.assert_array_equal(host(m.values), tm.values.numpy())
    np.testing.assert_array_equal(host(m.indices), tm.indices.numpy())
    md, tmd = x.median(1), t.median(1)
    np.testing.assert_array_equal(host(md.values), tmd.values.numpy())


def test_sort_long_row_stable_against_numpy():
    # a row of several tiles merged: numpy's stable argsort is the reference
    rng = np.random.default_rng(0)
    a = rng.integers(0, 50, 4500).astype(np.int32)
    x = tensorlib.tensor(a.tolist(), dtype=tensorlib.int32, device=DEV)
    r = x.sort(stable=True)
    np.testing.assert_array_equal(host(r.indices), np.argsort(a, kind="stable"))
    np.testing.assert_array_equal(host(r.values), np.sort(a))


# ---- gather / scatter / index_* --------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(st.sampled_from(ALL), st.lists(st.integers(1, 5), min_size=1, max_size=3), st.data(),
       st.integers(0, 2**31))
def test_gather_scatter_match_cpu(dtype, shape, data, seed):
    rng = np.random.default_rng(seed)
    x = _values(rng, dtype, shape)
    src = _values(rng, dtype, shape)
    dim = data.draw(st.integers(0, len(shape) - 1))
    ishape = [int(rng.integers(1, s + 1)) for s in shape]
    idx = tensorlib.tensor(rng.integers(0, shape[dim], ishape).tolist(), dtype=tensorlib.int64)
    same_bits(x.gather(dim, idx), x.to(DEV).gather(dim, idx.to(DEV)))
    same_bits(x.scatter(dim, idx, src), x.to(DEV).scatter(dim, idx.to(DEV), src.to(DEV)))
    same(x.scatter_add(dim, idx, src), x.to(DEV).scatter_add(dim, idx.to(DEV), src.to(DEV)))
    for reduce in ("sum", "prod", "amax", "amin", "mean"):
        if reduce == "mean" and dtype == "bool":
            continue
        for inc in (True, False):
            same(x.scatter_reduce(dim, idx, src, reduce, include_self=inc),
                 x.to(DEV).scatter_reduce(dim, idx.to(DEV), src.to(DEV), reduce,
                                          include_self=inc))


def test_scatter_add_repeated_float_indices_equal_cpu_bitwise():
    # many updates of one element: applied in the CPU's order, so the rounding is the CPU's
    rng = np.random.default_rng(1)
    src = tensorlib.tensor(rng.standard_normal(3000).astype(np.float32).tolist())
    idx = tensorlib.tensor(rng.integers(0, 3, 3000).tolist())
    a = tensorlib.zeros(3).scatter_add(0, idx, src)
    b = tensorlib.zeros(3, device=DEV).scatter_add(0, idx.to(DEV), src.to(DEV))
    same(a, b)
    t = torch.zeros(3).scatter_add(0, torch.tensor(host(idx)), torch.tensor(host(src)))
    np.testing.assert_allclose(host(b), t.numpy(), rtol=1e-5, atol=1e-5)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(ALL), st.integers(1, 6), st.integers(1, 4), st.integers(0, 2**31))
def test_index_select_add_copy_fill_match_cpu(dtype, n, m, seed):
    rng = np.random.default_rng(seed)
    x = _values(rng, dtype, (n, m))
    k = int(rng.integers(1, 8))
    idx = tensorlib.tensor(rng.integers(0, n, k).tolist())
    src = _values(rng, dtype, (k, m))
    xd, idd, sd = x.to(DEV), idx.to(DEV), src.to(DEV)
    same(x.index_select(0, idx), xd.index_select(0, idd))
    same(x.index_select(1, idx % m), xd.index_select(1, idd % m))
    if dtype != "bool":
        same(x.index_add(0, idx, src), xd.index_add(0, idd, sd))
        alpha = 3 if dtype in ("uint8", "int8", "int16", "int32", "int64") else -1.5
        same(x.index_add(0, idx, src, alpha=alpha), xd.index_add(0, idd, sd, alpha=alpha))
    same(x.index_copy(0, idx, src), xd.index_copy(0, idd, sd))
    same(x.index_fill(0, idx, 1), xd.index_fill(0, idd, 1))
    same(x.take(idx), xd.take(idd))
    same(x.t().take(idx), xd.t().take(idd))
    p = tensorlib.tensor(rng.integers(-n * m, n * m, k).tolist())
    v = _values(rng, dtype, (k,))
    same(x.put(p, v), xd.put(p.to(DEV), v.to(DEV)))
    if dtype != "bool":
        same(x.put(p, v, accumulate=True), xd.put(p.to(DEV), v.to(DEV), accumulate=True))


# ---- value-dependent shapes ------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(st.sampled_from(ALL), st.lists(st.integers(0, 6), min_size=0, max_size=3),
       st.integers(0, 2**31))
def test_nonzero_masked_select_match_cpu(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    x = _values(rng, dtype, shape)
    xd = x.to(DEV)
    same(tensorlib.nonzero(x), tensorlib.nonzero(xd))
    for a, b in zip(tensorlib.nonzero(x, as_tuple=True), tensorlib.nonzero(xd, as_tuple=True)):
        same(a, b)
    mask = _values(rng, "bool", shape)
    same(x.masked_select(mask), xd.masked_select(mask.to(DEV)))
    same(x[mask], xd[mask.to(DEV)])
    same(x[mask], xd[mask])                       # a CPU mask for a device tensor
    y, yd = x.clone(), xd.clone()
    y[mask] = x[mask] if dtype == "bool" else 0
    yd[mask.to(DEV)] = xd[mask.to(DEV)] if dtype == "bool" else 0
    same(y, yd)


def test_nonzero_large_against_torch():
    rng = np.random.default_rng(3)
    a = (rng.random((37, 101)) < 0.3).astype(np.float32)
    x = tensorlib.tensor(a.tolist(), device=DEV)
    np.testing.assert_array_equal(host(tensorlib.nonzero(x)), torch.nonzero(torch.from_numpy(a)).numpy())
    np.testing.assert_array_equal(host(x[x > 0]), a[a > 0])


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(ALL), st.integers(1, 6), st.integers(1, 5), st.integers(0, 2**31))
def test_advanced_indexing_get_set_match_cpu(dtype, n, m, seed):
    rng = np.random.default_rng(seed)
    x = _values(rng, dtype, (n, m))
    xd = x.to(DEV)
    i = tensorlib.tensor(rng.integers(-n, n, 4).tolist())
    j = tensorlib.tensor(rng.integers(0, m, 4).tolist())
    for key in ((i,), (i, j), (slice(None), j), (i[:2, None], j[None, :3])):
        dkey = tuple(k.to(DEV) if isinstance(k, tensorlib.Tensor) else k for k in key)
        same(x[key], xd[dkey])
        same(x[key], xd[key])                      # CPU indices for a device tensor
        v = _values(rng, dtype, tuple(x[key].shape))
        y, yd = x.clone(), xd.clone()
        y[key] = v
        yd[dkey] = v.to(DEV)
        same(y, yd)
    same(x[[0, -1]], xd[[0, -1]])
    same(x[..., 0][x[..., 0] > 0] if dtype != "bool" else x[:, 0],
         xd[..., 0][xd[..., 0] > 0] if dtype != "bool" else xd[:, 0])


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([d for d in ALL if d != "bool"]), st.integers(1, 8),
       st.integers(0, 2**31))
def test_index_put_accumulate_repeated(dtype, n, seed):
    rng = np.random.default_rng(seed)
    x = _values(rng, dtype, (n, 3))
    i = tensorlib.tensor(rng.integers(0, n, 10).tolist())
    v = _values(rng, dtype, (10, 3))
    a = x.clone().index_put_((i,), v, accumulate=True)
    b = x.to(DEV).index_put_((i.to(DEV),), v.to(DEV), accumulate=True)
    same(a, b)
    a = x.clone().index_put_((i,), v)
    b = x.to(DEV).index_put_((i.to(DEV),), v.to(DEV))
    same(a, b)          # repeated indices: the last write wins, as on the CPU


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(ALL), st.integers(0, 30), st.integers(0, 2**31))
def test_unique_matches_cpu(dtype, n, seed):
    rng = np.random.default_rng(seed)
    x = _values(rng, dtype, (n,))
    xd = x.to(DEV)
    for ret in ((False, False), (True, True)):
        a = tensorlib.unique(x, return_inverse=ret[0], return_counts=ret[1])
        b = tensorlib.unique(xd, return_inverse=ret[0], return_counts=ret[1])
        for p, q in zip(a if ret[0] else (a,), b if ret[0] else (b,)):
            same(p, q)
    if dtype in ("float32", "int64") and not np.isnan(host(x).astype(float)).any():
        # (torch's CPU unique orders the inverse of repeated NaNs its own way)
        t = torch.unique(_torch(x), return_inverse=True, return_counts=True)
        for p, q in zip(b, t):
            np.testing.assert_array_equal(host(p), q.numpy())
    a = tensorlib.unique_consecutive(x, return_inverse=True, return_counts=True)
    b = tensorlib.unique_consecutive(xd, return_inverse=True, return_counts=True)
    for p, q in zip(a, b):
        same(p, q)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(ALL), st.integers(0, 7), st.integers(1, 3), st.integers(0, 1),
       st.integers(0, 2**31))
def test_unique_dim_matches_cpu(dtype, m, length, dim, seed):
    rng = np.random.default_rng(seed)
    x = _values(rng, dtype, (m, length) if dim == 0 else (length, m))
    xd = x.to(DEV)
    a = tensorlib.unique(x, dim=dim, return_inverse=True, return_counts=True)
    b = tensorlib.unique(xd, dim=dim, return_inverse=True, return_counts=True)
    for p, q in zip(a, b):
        same_bits(p, q)
    a = tensorlib.unique_consecutive(x, dim=dim, return_inverse=True, return_counts=True)
    b = tensorlib.unique_consecutive(xd, dim=dim, return_inverse=True, return_counts=True)
    for p, q in zip(a, b):
        same_bits(p, q)
    if dtype == "int64":
        t = torch.unique(_torch(x), dim=dim, return_inverse=True, return_counts=True)
        for p, q in zip(b, t):
            np.testing.assert_array_equal(host(p), q.numpy())


# ---- bad indices -----------------------------------------------------------------------------

def test_bad_indices_raise_pytorchs_errors_and_write_nothing():
    x = tensorlib.arange(6.0, device=DEV)
    with pytest.raises(IndexError, match="index 6 is out of bounds for dimension 0 with size 6"):
        x[tensorlib.tensor([0, 6], device=DEV)]
    with pytest.raises(IndexError, match="index -7 is out of bounds"):
        x[tensorlib.tensor([1, -7], device=DEV)] = 1.0
    assert host(x).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    with pytest.raises(RuntimeError, match="index 9 is out of bounds for dimension 0 with size 6"):
        x.scatter_add_(0, tensorlib.tensor([1, 9], device=DEV), tensorlib.ones(2, device=DEV))
    assert host(x).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    with pytest.raises(RuntimeError, match="index 7 is out of bounds"):
        x.gather(0, tensorlib.tensor([7], device=DEV))
    with pytest.raises(IndexError, match="index out of range in self"):
        x.index_select(0, tensorlib.tensor([2, 6], device=DEV))
    with pytest.raises(IndexError, match="out of range: tried to access index 8"):
        x.take(tensorlib.tensor([8], device=DEV))
    with pytest.raises(RuntimeError, match="same device"):
        tensorlib.arange(3.0)[tensorlib.tensor([0], device=DEV)]
    t = torch.arange(6.0)
    with pytest.raises(IndexError):
        t[torch.tensor([0, 6])]


# ---- checking mode ---------------------------------------------------------------------------

def test_kernels_pass_the_emulators_checking_mode():
    """Every kernel of index_ops.cu under forward, reverse and shuffled thread and block
    orders (a race or a missing barrier would give different results)."""
    if cuda.backend_name() != "emulator":
        pytest.skip("the emulator's checking mode")
    from tensorlib.cuda import _emulator as emu
    dev = emu.get_device(0)
    old, dev.check = dev.check, True
    try:
        rng = np.random.default_rng(5)
        a = rng.integers(-3, 3, (3, 2100)).astype(np.float32)
        a[0, ::7] = np.nan
        x = tensorlib.tensor(a.tolist(), device=DEV)
        r = x.sort(1, stable=True)
        t = torch.from_numpy(a).sort(dim=1, stable=True)
        np.testing.assert_array_equal(host(r.indices), t.indices.numpy())
        np.testing.assert_array_equal(host(x.median(1).values), torch.from_numpy(a).median(1).values.numpy())
        i = tensorlib.tensor(rng.integers(0, 4, 50).tolist(), device=DEV)
        s = tensorlib.tensor(rng.standard_normal(50).astype(np.float32).tolist(), device=DEV)
        same(tensorlib.zeros(4, device=DEV).scatter_add(0, i, s),
             tensorlib.zeros(4).scatter_add(0, i.cpu(), s.cpu()))
        same(tensorlib.nonzero(x > 0), tensorlib.nonzero(x.cpu() > 0))
        same(tensorlib.unique(x), tensorlib.unique(x.cpu()))
        same(x[x > 1], x.cpu()[x.cpu() > 1])
    finally:
        dev.check = old
