"""View ops: metadata only, never a copy.

Every op runs on contiguous, transposed, sliced and expanded inputs of every dtype and is
compared with the NumPy view of the same values (values, shape, strides in elements, storage
offset, memory shared with the root, contiguity) and, where torch is installed, with torch
(exact strides and offsets, including PyTorch's choices on size-1 dims, and error classes).
"""
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from numpy.lib.stride_tricks import as_strided as np_as_strided, sliding_window_view

import tensorlib as tl
from divergences import SQUEEZE_NON_ONE_DIM_IS_NOOP
from strided_refs import (
    DEVICES, DTYPES, WITH_FIXTURE, Case, assert_values, cases, check_torch, check_view, check_view_links,
    distinct_values, np_dtype, outcome, raw_numpy, tl_dtype)


def run_view(case, fn, np_fn, torch=None):
    """Apply view op ``fn`` (same call for tensorlib and torch) and check it against NumPy's
    ``np_fn`` and, when given, torch."""
    tv = fn(case.x)
    nv = np_fn(case.n)
    check_view(tv, nv, case.root, case.nroot)
    if torch is not None:
        check_torch(tv, fn(case.p))
    return tv


# ---------------------------------------------------------------------------------------------
# view / reshape: PyTorch's compatibility rule, checked against a brute-force oracle

def view_oracle(shape, strides, new_shape):
    """Element strides of a view of (shape, strides) with ``new_shape``, or None when no
    strided view addresses exactly the same elements in the same (C) order. Strides on size-1
    dims are free; they are reported as None."""
    numel = math.prod(shape)
    if numel == 0:
        return tuple(None for _ in new_shape)
    addrs = [sum(i * s for i, s in zip(idx, strides)) for idx in np.ndindex(*shape)]
    out = []
    for k, n in enumerate(new_shape):
        if n == 1:
            out.append(None)
            continue
        step = math.prod(new_shape[k + 1:])
        out.append(addrs[step] - addrs[0])
    for flat, idx in enumerate(np.ndindex(*new_shape)):
        if addrs[0] + sum(i * s for i, s in zip(idx, out) if s is not None) != addrs[flat]:
            return None
    return tuple(out)


def _factorize(n):
    f, d = [], 2
    while d * d <= n:
        while n % d == 0:
            f.append(d)
            n //= d
        d += 1
    if n > 1:
        f.append(n)
    return f


@st.composite
def target_shapes(draw, shape):
    """A shape with the same number of elements: dims of ``shape`` merged and split, or the
    prime factors regrouped; sometimes with 1s inserted and one size replaced by -1."""
    numel = math.prod(shape)
    if numel == 0:
        new = list(draw(st.lists(st.integers(0, 4), min_size=1, max_size=4)))
        if 0 not in new:
            new[draw(st.integers(0, len(new) - 1))] = 0
    elif draw(st.booleans()):
        # merge runs of adjacent dims
        new, run = [], 1
        for n in shape:
            run *= n
            if draw(st.booleans()):
                new.append(run)
                run = 1
        new.append(run)
    else:
        factors = draw(st.permutations(_factorize(numel)))
        new = []
        for f in factors:
            if new and draw(st.booleans()):
                new[-1] *= f
            else:
                new.append(f)
    for _ in range(draw(st.integers(0, 2))):
        new.insert(draw(st.integers(0, len(new))), 1)
    if numel > 0 and new and draw(st.booleans()):
        new[draw(st.integers(0, len(new) - 1))] = -1
    return tuple(new)


def _resolve(new, numel):
    if -1 not in new:
        return new
    rest = math.prod(n for n in new if n != -1)
    return tuple(numel // rest if n == -1 else n for n in new)


@pytest.mark.parametrize("device", DEVICES)
@given(st.data())
def test_view_follows_the_compatibility_rule(device, data):
    case = data.draw(cases(allow_expand=True, device=device))
    new = data.draw(target_shapes(case.x.shape))
    full = _resolve(new, case.x.numel())
    want = view_oracle(tuple(case.x.shape), case.x.stride(), full)
    if want is None:
        with pytest.raises(RuntimeError, match=r"reshape"):
            case.x.view(*new) if new else case.x.view(new)
        # reshape copies instead: same values, its own memory
        r = case.x.reshape(new)
        assert tuple(r.shape) == full and r._base is None and r.is_contiguous()
        if device == "meta":
            return                               # (no values on meta)
        assert_values(r, case.n.reshape(full))
        if r.numel() > 0 and device == "cpu":
            assert not np.shares_memory(raw_numpy(r), raw_numpy(case.root))
        return
    v = case.x.view(*new) if new else case.x.view(new)
    check_view(v, case.n.reshape(full), case.root, case.nroot) if case.n.size else None
    assert tuple(v.shape) == full
    for got, exp in zip(v.stride(), want):
        assert exp is None or got == exp, (v.stride(), want)
    assert v.storage_offset() == case.x.storage_offset()
    r = case.x.reshape(new)
    assert r.stride() == v.stride() and r.storage_offset() == v.storage_offset()
    check_view_links(r, case.root)
    # the shape can also come as one sequence
    assert case.x.view(list(new)).stride() == v.stride()
    assert case.x.view_as(tl.empty(full)).stride() == v.stride()


@WITH_FIXTURE
@given(st.data())
def test_view_and_reshape_match_torch(torch, data):
    case = data.draw(cases(torch=torch))
    new = data.draw(target_shapes(case.x.shape))
    vw = (lambda x: x.view(*new)) if new else (lambda x: x.view(new))
    got, exp = outcome(vw, case.x), outcome(vw, case.p)
    assert got[0] == exp[0] and (got[0] == "ok" or got[1] is exp[1]), (got, exp)
    if got[0] == "ok":
        check_torch(got[1], exp[1])
    r, pr = case.x.reshape(new), case.p.reshape(new)
    check_torch(r, pr)
    assert r._is_view() == pr._is_view()


def test_view_examples():
    x = tl.arange(24).view(2, 3, 4)
    assert x.view(4, -1).stride() == (6, 1)
    assert x.view(-1).shape == (24,)
    assert x.permute(1, 0, 2).view(3, 2, 2, 2).stride() == (4, 12, 2, 1)
    assert x[:, :, ::2].view(6, 2).stride() == (4, 2)
    with pytest.raises(RuntimeError, match=r"view size is not compatible.*\.reshape\(\.\.\.\)"):
        x.transpose(0, 1).view(24)
    with pytest.raises(RuntimeError, match=r"view size is not compatible"):
        x[:, :, :2].view(-1)
    # size-1 dims never get in the way; empty tensors view freely
    assert tl.zeros(3, 1, 4).transpose(0, 1).view(12).shape == (12,)
    assert tl.zeros(0, 3).t().view(3, 0, 1).stride() == (1, 1, 1)
    assert tl.tensor(5).view(1, 1).shape == (1, 1) and tl.ones(1, 1).view([]).shape == ()


@pytest.mark.parametrize("shape, err", [
    ((-1, -1), r"only one dimension can be inferred"),
    ((4, -1), r"shape '\[4, -1\]' is invalid for input of size 6"),
    ((7,), r"invalid for input of size 6"),
    ((-2, 3), r"invalid shape dimension -2"),
])
def test_view_bad_shapes(shape, err):
    with pytest.raises(RuntimeError, match=err):
        tl.arange(6).view(*shape)
    with pytest.raises(RuntimeError, match=err):
        tl.arange(6).reshape(shape)


def test_view_bad_argument_types():
    x = tl.arange(6)
    with pytest.raises(TypeError):
        x.view(2.0, 3)
    with pytest.raises(TypeError):
        x.view("a")
    with pytest.raises(TypeError):
        x.reshape(None)
    with pytest.raises(RuntimeError, match="ambiguous"):
        tl.zeros(0).view(0, -1)


def test_view_errors_match_torch(torch):
    for L in (tl, torch):
        x = L.arange(6)
        for shape in [(-1, -1), (4, -1), (-2, 3), (0, -1)]:
            with pytest.raises(RuntimeError):
                x.view(*shape)
        with pytest.raises(TypeError):
            x.view(2.0, 3)


# ---------------------------------------------------------------------------------------------
# view(dtype)

ITEMSIZE = {n: np_dtype(n).itemsize if n != "bfloat16" else 2 for n in DTYPES}
RAW = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _np_bits(case):
    """The raw bytes of case.x as unsigned ints of its itemsize (NumPy view)."""
    return raw_numpy(case.x).view(RAW[ITEMSIZE[case.name]])


@given(st.data())
def test_view_dtype_reinterprets_bytes(data):
    case = data.draw(cases(min_dims=1, allow_expand=False))
    new = data.draw(st.sampled_from(DTYPES))
    old_size, new_size = ITEMSIZE[case.name], ITEMSIZE[new]
    x = case.x
    ok = old_size == new_size or (
        x.stride(-1) == 1
        and (x.shape[-1] * old_size) % new_size == 0
        and (x.storage_offset() * old_size) % new_size == 0
        and all((s * old_size) % new_size == 0 for s in x.stride()[:-1]))
    if not ok:
        with pytest.raises(RuntimeError, match=r"to view .* as .*different element sizes"):
            x.view(tl_dtype(new))
        return
    v = x.view(tl_dtype(new))
    assert v.dtype == tl_dtype(new)
    assert v.untyped_storage() is x.untyped_storage()
    assert v.data_ptr() == x.data_ptr() or x.numel() == 0
    assert v.storage_offset() * new_size == x.storage_offset() * old_size
    if old_size == new_size:
        assert v.shape == x.shape and v.stride() == x.stride()
    else:
        ratio = old_size / new_size
        assert v.shape[:-1] == x.shape[:-1] and v.shape[-1] == x.shape[-1] * ratio
        assert v.stride()[:-1] == tuple(int(s * ratio) for s in x.stride()[:-1])
    if x.numel() and v.numel():
        # the bytes are the same bytes: NumPy's view of them agrees bit for bit
        if x.is_contiguous() or old_size == new_size:
            want = np.ascontiguousarray(_np_bits(case)).view(RAW[new_size]) \
                if x.stride(-1) == 1 else _np_bits(case).view(RAW[new_size])
            got = raw_numpy(v).view(RAW[new_size])
            np.testing.assert_array_equal(got, want.reshape(got.shape))
        if not x.is_cuda:
            assert np.shares_memory(raw_numpy(v), raw_numpy(case.root))


@WITH_FIXTURE
@given(st.data())
def test_view_dtype_matches_torch(torch, data):
    case = data.draw(cases(torch=torch, min_dims=0, allow_expand=True))
    new = data.draw(st.sampled_from(DTYPES))
    got = outcome(lambda: case.x.view(tl_dtype(new)))
    exp = outcome(lambda: case.p.view(getattr(torch, new)))
    assert got[0] == exp[0] and (got[0] == "ok" or got[1] is exp[1]), (got, exp)
    if got[0] == "ok":
        v, pv = got[1], exp[1]
        assert tuple(v.shape) == tuple(pv.shape) and v.stride() == pv.stride()
        assert v.storage_offset() == pv.storage_offset()
        # bit-identical contents (compare the raw bytes, NaN payloads included)
        bits = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"}[ITEMSIZE[new]]
        np.testing.assert_array_equal(v.view(getattr(tl, bits)).numpy(),
                                      pv.view(getattr(torch, bits if bits != "uint8" else "uint8")).numpy())
        # PyTorch does not record a dtype view as a view, but it shares the version counter
        assert v._is_view() == pv._is_view() and (v._base is None) == (pv._base is None)
        before = case.x._version
        v.zero_()
        assert case.x._version == before + 1


def test_view_dtype_examples():
    x = tl.tensor([1.0, -2.0], dtype=tl.float32)
    assert x.view(tl.int32).tolist() == np.array([1.0, -2.0], np.float32).view(np.int32).tolist()
    assert x.view(tl.uint8).shape == (8,) and x.view(tl.int16).stride() == (1,)
    assert x.view(tl.float64).shape == (1,)
    y = tl.zeros(2, 4, dtype=tl.int16)[:, 2:]
    assert y.view(tl.int32).storage_offset() == 1 and y.view(tl.int32).stride() == (2, 1)
    with pytest.raises(RuntimeError, match="self.dim\\(\\) cannot be 0"):
        tl.tensor(1.0).view(tl.float64)
    with pytest.raises(RuntimeError, match="stride\\(-1\\) must be 1"):
        tl.zeros(2, 2).t().view(tl.int16)
    with pytest.raises(RuntimeError, match="divisible by 2"):
        tl.zeros(3, dtype=tl.int32).view(tl.int64)
    with pytest.raises(RuntimeError, match="storage_offset\\(\\) must be divisible"):
        tl.zeros(4, dtype=tl.int32)[1:3].view(tl.int64)


# ---------------------------------------------------------------------------------------------
# transpose family, permute, movedim

@WITH_FIXTURE
@given(st.data())
def test_transpose_swapaxes_t_T_mT(torch, data):
    run_transposes(data, torch)


@pytest.mark.parametrize("device", DEVICES)
@given(st.data())
def test_transpose_swapaxes_t_T_mT_numpy(device, data):
    run_transposes(data, None, device)


def run_transposes(data, torch, device="cpu"):
    case = data.draw(cases(torch=torch, device=device))
    nd = case.x.dim()
    if nd == 0:
        v = case.x.transpose(0, -1)
        assert v.shape == () and v._base is case.root
        assert case.x.t().shape == () and case.x.T.shape == ()
        return
    d0 = data.draw(st.integers(-nd, nd - 1))
    d1 = data.draw(st.integers(-nd, nd - 1))
    for fn in (lambda x: x.transpose(d0, d1), lambda x: x.swapaxes(d0, d1),
               lambda x: x.swapdims(d0, d1), lambda x: tl_or_torch(x).transpose(x, d0, d1)):
        run_view(case, fn, lambda n: np.swapaxes(n, d0, d1), torch)
    run_view(case, lambda x: x.T, lambda n: n.T, torch)
    if nd <= 2:
        run_view(case, lambda x: x.t(), lambda n: n.T, torch)
    else:
        with pytest.raises(RuntimeError, match="t\\(\\) expects a tensor with <= 2 dimensions"):
            case.x.t()
    if nd >= 2:
        run_view(case, lambda x: x.mT, lambda n: np.swapaxes(n, -1, -2), torch)
    elif nd == 0:
        assert case.x.mT is case.x      # PyTorch: a 0-d tensor is its own (deprecated) mT
    else:
        with pytest.raises(RuntimeError, match="mT"):
            case.x.mT


def tl_or_torch(x):
    """The module a tensor comes from (so one lambda serves both libraries)."""
    return tl if isinstance(x, tl.Tensor) else __import__("torch")


@WITH_FIXTURE
@given(st.data())
def test_permute_and_movedim(torch, data):
    run_permutes(data, torch)


@pytest.mark.parametrize("device", DEVICES)
@given(st.data())
def test_permute_and_movedim_numpy(device, data):
    run_permutes(data, None, device)


def run_permutes(data, torch, device="cpu"):
    case = data.draw(cases(torch=torch, device=device, min_dims=1))
    nd = case.x.dim()
    perm = data.draw(st.permutations(range(nd)))
    signed = [p - nd if data.draw(st.booleans()) else p for p in perm]
    run_view(case, lambda x: x.permute(*signed) if signed else x.permute(signed), lambda n: n.transpose(perm), torch)
    run_view(case, lambda x: x.permute(signed), lambda n: n.transpose(perm), torch)
    run_view(case, lambda x: tl_or_torch(x).permute(x, signed), lambda n: n.transpose(perm), torch)
    k = data.draw(st.integers(1, nd))
    src = data.draw(st.permutations(range(nd)))[:k]
    dst = data.draw(st.permutations(range(nd)))[:k]
    run_view(case, lambda x: x.movedim(src, dst), lambda n: np.moveaxis(n, src, dst), torch)
    run_view(case, lambda x: x.moveaxis(src[0], dst[0] - nd),
             lambda n: np.moveaxis(n, src[0], dst[0] - nd), torch)


def test_permute_movedim_errors():
    x = tl.zeros(2, 3, 4)
    with pytest.raises(RuntimeError, match="number of dimensions"):
        x.permute(0, 1)
    with pytest.raises(RuntimeError, match="multiple times|duplicate"):
        x.permute(0, 1, 1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.permute(0, 1, 3)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.transpose(0, 3)
    with pytest.raises(RuntimeError, match="movedim"):
        x.movedim((0, 1), (2,))
    with pytest.raises(RuntimeError):
        x.movedim((0, 0), (1, 2))
    with pytest.raises(TypeError):
        x.transpose(0, 1.0)
    with pytest.raises(TypeError):
        x.permute(0, "1", 2)


# ---------------------------------------------------------------------------------------------
# expand family

@st.composite
def expand_targets(draw, shape):
    """A size list valid for expand(): leading new dims, -1 or the same size, or any size for a
    size-1 dim."""
    lead = [draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 2)))]
    rest = []
    for n in shape:
        choice = draw(st.integers(0, 2))
        rest.append(-1 if choice == 0 else draw(st.integers(0, 3)) if n == 1 and choice == 1 else n)
    return tuple(lead + rest)


@WITH_FIXTURE
@given(st.data())
def test_expand_family(torch, data):
    run_expands(data, torch)


@pytest.mark.parametrize("device", DEVICES)
@given(st.data())
def test_expand_family_numpy(device, data):
    run_expands(data, None, device)


def run_expands(data, torch, device="cpu"):
    case = data.draw(cases(torch=torch, device=device))
    sizes = data.draw(expand_targets(tuple(case.x.shape)))
    lead = len(sizes) - case.x.dim()
    full = tuple(case.x.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
    v = run_view(case, lambda x: x.expand(*sizes) if sizes else x.expand(sizes), lambda n: np.broadcast_to(n, full), torch)
    for i in range(len(full)):
        if full[i] != 1 and (i < lead or case.x.shape[i - lead] == 1):
            assert v.stride(i) == 0
    run_view(case, lambda x: x.expand(sizes), lambda n: np.broadcast_to(n, full), torch)
    run_view(case, lambda x: x.expand(tl.Size(sizes)) if isinstance(x, tl.Tensor) else x.expand(sizes),
             lambda n: np.broadcast_to(n, full), torch)
    run_view(case, lambda x: x.expand_as(tl.empty(full) if isinstance(x, tl.Tensor) else __import__("torch").empty(full)),
             lambda n: np.broadcast_to(n, full), torch)
    run_view(case, lambda x: tl_or_torch(x).broadcast_to(x, full), lambda n: np.broadcast_to(n, full), torch)


@WITH_FIXTURE
@given(st.data())
def test_broadcast_tensors(torch, data):
    a = data.draw(cases(torch=torch, max_dims=3, max_side=3))
    # a second operand whose shape broadcasts with a's
    shape = tuple(data.draw(st.sampled_from([1, n])) for n in a.x.shape[data.draw(st.integers(0, a.x.dim())):])
    shape = tuple([1] * data.draw(st.integers(0, 1))) + shape
    b = Case("float32", distinct_values(shape, "float32"), [], torch)
    nx, ny = np.broadcast_arrays(a.n, b.n)
    x, y = tl.broadcast_tensors(a.x, b.x)
    px, py = torch.broadcast_tensors(a.p, b.p)
    # an input that already has the common shape comes back as itself (as in PyTorch)
    for out, inp, n, case, pout, pinp in ((x, a.x, nx, a, px, a.p), (y, b.x, ny, b, py, b.p)):
        assert (out is inp) == (tuple(inp.shape) == n.shape) == (pout is pinp)
        if out is not inp:
            check_view(out, n, case.root, case.nroot)
    check_torch(x, px)
    check_torch(y, py)


def test_expand_errors_name_the_shapes():
    x = tl.zeros(3, 1)
    with pytest.raises(RuntimeError, match=r"expanded size of the tensor \(4\) must match the existing "
                                           r"size \(3\).*Target sizes: \[4, 4\].*Tensor sizes: \[3, 1\]"):
        x.expand(4, 4)
    with pytest.raises(RuntimeError, match=r"number of sizes provided \(1\).*\(2\)"):
        x.expand(4)
    with pytest.raises(RuntimeError, match=r"leading, non-existing dimension"):
        x.expand(-1, 3, 1)
    with pytest.raises(RuntimeError):
        x.expand(3, -2)
    with pytest.raises(RuntimeError, match=r"\(3\).*\(4\)"):
        tl.broadcast_tensors(tl.zeros(3), tl.zeros(4))
    with pytest.raises(RuntimeError, match=r"\[2, 4\]"):
        tl.broadcast_to(tl.zeros(3), (2, 4))
    with pytest.raises(TypeError):
        x.expand(3, 1.5)
    with pytest.raises(TypeError):
        tl.broadcast_tensors(tl.zeros(3), [1, 2, 3])


def test_expand_errors_match_torch(torch):
    for bad in [(4, 4), (4,), (-1, 3, 1), (3, -2)]:
        for L in (tl, torch):
            with pytest.raises(RuntimeError):
                L.zeros(3, 1).expand(*bad)


# ---------------------------------------------------------------------------------------------
# narrow, select, unsqueeze, squeeze, flatten, unflatten

def _index_along(nd, d, idx):
    return (slice(None),) * d + (idx, Ellipsis)      # Ellipsis: NumPy returns a view, even 0-d


@WITH_FIXTURE
@given(st.data())
def test_narrow_select(torch, data):
    run_narrow_select(data, torch)


@pytest.mark.parametrize("device", DEVICES)
@given(st.data())
def test_narrow_select_numpy(device, data):
    run_narrow_select(data, None, device)


def run_narrow_select(data, torch, device="cpu"):
    case = data.draw(cases(torch=torch, device=device, min_dims=1))
    nd = case.x.dim()
    d = data.draw(st.integers(-nd, nd - 1))
    n = case.x.shape[d]
    start = data.draw(st.integers(-n, n))
    s0 = start + n if start < 0 else start
    length = data.draw(st.integers(0, n - s0))
    run_view(case, lambda x: x.narrow(d, start, length),
             lambda a: a[_index_along(nd, d % nd, slice(s0, s0 + length))], torch)
    run_view(case, lambda x: tl_or_torch(x).narrow(x, d, start, length),
             lambda a: a[_index_along(nd, d % nd, slice(s0, s0 + length))], torch)
    if n > 0:
        i = data.draw(st.integers(-n, n - 1))
        run_view(case, lambda x: x.select(d, i), lambda a: a[_index_along(nd, d % nd, i)], torch)
        run_view(case, lambda x: tl_or_torch(x).select(x, d, i), lambda a: a[_index_along(nd, d % nd, i)], torch)
    bad = data.draw(st.sampled_from([n, -n - 1, n + 5]))
    with pytest.raises(IndexError, match="out of"):
        case.x.select(d, bad)
    if torch is not None:
        with pytest.raises(IndexError):
            case.p.select(d, bad)


def test_narrow_select_errors():
    x = tl.arange(10)
    with pytest.raises(RuntimeError, match="exceeds dimension size"):
        x.narrow(0, 8, 3)
    with pytest.raises(IndexError, match="start out of range"):
        x.narrow(0, 11, 0)
    with pytest.raises(RuntimeError, match="non-negative"):
        x.narrow(0, 2, -1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.narrow(1, 0, 1)
    with pytest.raises(RuntimeError, match="0-dim"):
        tl.tensor(1).narrow(0, 0, 1)
    with pytest.raises(IndexError, match="0-dim"):
        tl.tensor(1).select(0, 0)
    with pytest.raises(TypeError):
        x.narrow(0, 1.0, 2)
    # an empty narrow at the end keeps its offset (as in PyTorch)
    assert x.narrow(0, 10, 0).storage_offset() == 10


@WITH_FIXTURE
@given(st.data())
def test_unsqueeze_squeeze(torch, data):
    run_unsqueeze_squeeze(data, torch)


@pytest.mark.parametrize("device", DEVICES)
@given(st.data())
def test_unsqueeze_squeeze_numpy(device, data):
    run_unsqueeze_squeeze(data, None, device)


def run_unsqueeze_squeeze(data, torch, device="cpu"):
    case = data.draw(cases(torch=torch, device=device, max_side=3))
    nd = case.x.dim()
    d = data.draw(st.integers(-nd - 1, nd))
    run_view(case, lambda x: x.unsqueeze(d), lambda a: np.expand_dims(a, d), torch)
    run_view(case, lambda x: x.squeeze(), lambda a: a.squeeze(), torch)
    if nd == 0:
        run_view(case, lambda x: x.squeeze(0), lambda a: a, torch)
        run_view(case, lambda x: x.squeeze(-1), lambda a: a, torch)
        return
    e = data.draw(st.integers(-nd, nd - 1))
    assert SQUEEZE_NON_ONE_DIM_IS_NOOP     # NumPy raises on a non-1 dim; PyTorch leaves it
    np_squeeze = (lambda a: a.squeeze(e)) if case.x.shape[e] == 1 else (lambda a: a[...])
    run_view(case, lambda x: x.squeeze(e), np_squeeze, torch)
    dims = sorted(set(data.draw(st.lists(st.integers(0, nd - 1), max_size=nd))))
    ones = tuple(i for i in dims if case.x.shape[i] == 1)
    run_view(case, lambda x: x.squeeze(tuple(dims)), lambda a: a.squeeze(ones), torch)


def test_unsqueeze_squeeze_errors_and_strides():
    x = tl.zeros(2, 3)
    with pytest.raises(IndexError, match=r"range of \[-3, 2\]"):
        x.unsqueeze(3)
    with pytest.raises(IndexError):
        x.squeeze(2)
    with pytest.raises(RuntimeError, match="multiple times"):
        tl.zeros(1, 3, 1).squeeze((0, 0))
    with pytest.raises(TypeError):
        x.unsqueeze(None)
    # PyTorch's stride for an inserted dim: stride * size of the dim it lands before
    assert x.t().unsqueeze(1).stride() == (1, 6, 3)
    assert x.unsqueeze(2).stride() == (3, 1, 1)
    assert tl.tensor(1).unsqueeze(0).stride() == (1,)


@WITH_FIXTURE
@given(st.data())
def test_flatten_unflatten(torch, data):
    run_flatten(data, torch)


@pytest.mark.parametrize("device", DEVICES)
@given(st.data())
def test_flatten_unflatten_numpy(device, data):
    run_flatten(data, None, device)


def run_flatten(data, torch, device="cpu"):
    case = data.draw(cases(torch=torch, device=device))
    nd = case.x.dim()
    n = max(nd, 1)
    s = data.draw(st.integers(-n, n - 1))
    e = data.draw(st.integers(-n, n - 1))
    sw, ew = s % n, e % n
    shape = tuple(case.x.shape)
    if sw > ew:
        with pytest.raises(RuntimeError, match="start_dim cannot come after end_dim"):
            case.x.flatten(s, e)
        return
    want = shape[:sw] + (math.prod(shape[sw:ew + 1]),) + shape[ew + 1:] if nd else (1,)
    if view_oracle(shape, case.x.stride(), want) is None:
        f = case.x.flatten(s, e)
        assert tuple(f.shape) == want
        if not f.is_meta:
            assert_values(f, case.n.reshape(want))
        assert f._base is None
        if torch is not None:
            assert not case.p.flatten(s, e)._is_view()
    elif nd and sw == ew:
        assert case.x.flatten(s, e) is case.x      # nothing to merge: self, as in PyTorch
    else:
        run_view(case, lambda x: x.flatten(s, e), lambda a: a.reshape(want), torch)
    run_view(case, lambda x: x.flatten(), lambda a: a.reshape(-1) if a.size else a.reshape(0), torch) \
        if view_oracle(shape, case.x.stride(), (max(case.x.numel(), 0),)) is not None and nd != 1 else None
    if nd == 0:
        return
    # unflatten a dim back into factors (one may be -1)
    d = data.draw(st.integers(-nd, nd - 1))
    size = shape[d]
    if size == 0:
        sizes = (0, data.draw(st.integers(1, 3)))
    else:
        a = data.draw(st.sampled_from([k for k in range(1, size + 1) if size % k == 0]))
        sizes = (a, size // a) if data.draw(st.booleans()) else (a, -1)
    full = tuple(size // sizes[0] if v == -1 else v for v in sizes)
    want = shape[:d % nd] + full + shape[d % nd + 1:]
    run_view(case, lambda x: x.unflatten(d, sizes), lambda a: a.reshape(want), torch)


def test_flatten_unflatten_errors():
    x = tl.zeros(2, 3, 4)
    with pytest.raises(RuntimeError, match="start_dim cannot come after end_dim"):
        x.flatten(2, 1)
    with pytest.raises(IndexError):
        x.flatten(0, 3)
    with pytest.raises(IndexError):
        tl.tensor(1).flatten(0, 1)
    assert tl.tensor(1).flatten().shape == (1,)
    with pytest.raises(RuntimeError):
        x.unflatten(2, (3, 2))
    with pytest.raises(RuntimeError):
        x.unflatten(2, ())
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        x.unflatten(2, (-1, -1))
    assert x.transpose(1, 2).flatten(1)._base is None        # had to copy
    assert x.transpose(1, 2).unflatten(1, (2, 2)).stride() == (12, 2, 1, 4)


# ---------------------------------------------------------------------------------------------
# as_strided, unfold, diagonal

@WITH_FIXTURE
@given(st.data())
def test_as_strided(torch, data):
    run_as_strided(data, torch)


@pytest.mark.parametrize("device", DEVICES)
@given(st.data())
def test_as_strided_numpy(device, data):
    run_as_strided(data, None, device)


def run_as_strided(data, torch, device="cpu"):
    case = data.draw(cases(torch=torch, device=device, min_dims=1, allow_expand=False, max_steps=1))
    total = case.root.numel()
    nd = data.draw(st.integers(0, 3))
    size = tuple(data.draw(st.integers(0, 4)) for _ in range(nd))
    stride = tuple(data.draw(st.integers(0, 6)) for _ in range(nd))
    off = data.draw(st.none() | st.integers(0, total + 1))
    eff = case.x.storage_offset() if off is None else off
    need = (eff + sum((n - 1) * s for n, s in zip(size, stride)) + 1) if all(size) else 0
    if need > total:
        with pytest.raises(RuntimeError, match="out of bounds for storage"):
            case.x.as_strided(size, stride, off)
        if torch is not None:
            with pytest.raises(RuntimeError):
                case.p.as_strided(size, stride, off)
        return
    isz = case.nroot.itemsize
    flat = case.nroot.reshape(-1)
    run_view(case, lambda x: x.as_strided(size, stride, off),
             lambda a: np_as_strided(flat[eff:], size, tuple(s * isz for s in stride)) if math.prod(size)
             else np.empty(size, flat.dtype), torch) if math.prod(size) else None
    v = case.x.as_strided(size, stride, off)
    assert v.stride() == stride and v.storage_offset() == eff and v._base is case.root
    if torch is not None:
        check_torch(v, case.p.as_strided(size, stride, off))


def test_as_strided_errors():
    x = tl.arange(10)
    assert x.as_strided((3, 3), (1, 2)).tolist() == [[0, 2, 4], [1, 3, 5], [2, 4, 6]]
    assert x[2:].as_strided((3,), (1,)).tolist() == [2, 3, 4]       # keeps the view's offset
    assert x[2:].as_strided((3,), (1,), 0).tolist() == [0, 1, 2]
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.as_strided((3, 3), (1, 4))
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.as_strided((3,), (1,), 8)
    with pytest.raises(RuntimeError, match="[Nn]egative strides"):
        x.as_strided((3, 3), (1, -2))
    with pytest.raises(RuntimeError, match="storage offset"):
        x.as_strided((3,), (1,), -1)
    with pytest.raises(RuntimeError, match="mismatch in length of strides and shape"):
        x.as_strided((3,), (1, 2))
    with pytest.raises(RuntimeError, match="negative dimension"):
        x.as_strided((-1,), (1,))
    with pytest.raises(RuntimeError, match="overflow"):
        x.as_strided((2, 2), (2 ** 62, 2 ** 62))
    # an empty geometry may point anywhere
    assert x.as_strided((0, 5), (100, 100), 9).shape == (0, 5)


@WITH_FIXTURE
@given(st.data())
def test_unfold(torch, data):
    run_unfold(data, torch)


@pytest.mark.parametrize("device", DEVICES)
@given(st.data())
def test_unfold_numpy(device, data):
    run_unfold(data, None, device)


def run_unfold(data, torch, device="cpu"):
    case = data.draw(cases(torch=torch, device=device))
    nd = case.x.dim()
    n = max(nd, 1)
    d = data.draw(st.integers(-n, n - 1))
    length = case.x.shape[d] if nd else 1
    size = data.draw(st.integers(0, length + 1))
    step = data.draw(st.integers(1, 4))
    if size > length:
        with pytest.raises(RuntimeError, match="maximum size for tensor at dimension"):
            case.x.unfold(d, size, step)
        return
    if nd == 0:
        run_view(case, lambda x: x.unfold(d, size, step), lambda a: a.reshape(1)[:size], torch)
        return
    dd = d % nd

    def np_unfold(a):
        w = sliding_window_view(a, size, axis=dd) if size else \
            np.lib.stride_tricks.as_strided(a, a.shape[:dd] + (a.shape[dd] + 1,) + a.shape[dd + 1:] + (0,),
                                            a.strides + (a.strides[dd],))
        return w[_index_along(nd, dd, slice(None, None, step))]
    run_view(case, lambda x: x.unfold(d, size, step), np_unfold, torch)


def test_unfold_errors():
    x = tl.arange(10)
    assert x.unfold(0, 3, 2).tolist() == [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6, 7, 8]]
    with pytest.raises(RuntimeError, match="step is 0"):
        x.unfold(0, 3, 0)
    with pytest.raises(RuntimeError, match="size is -1"):
        x.unfold(0, -1, 1)
    with pytest.raises(IndexError):
        x.unfold(1, 2, 1)


@WITH_FIXTURE
@given(st.data())
def test_diagonal(torch, data):
    run_diagonal(data, torch)


@pytest.mark.parametrize("device", DEVICES)
@given(st.data())
def test_diagonal_numpy(device, data):
    run_diagonal(data, None, device)


def run_diagonal(data, torch, device="cpu"):
    case = data.draw(cases(torch=torch, device=device, min_dims=2))
    nd = case.x.dim()
    d1, d2 = data.draw(st.permutations(range(nd)))[:2]
    d1 -= nd * data.draw(st.integers(0, 1))
    off = data.draw(st.integers(-6, 6))
    tv = case.x.diagonal(off, d1, d2)
    nv = np.diagonal(case.n, off, d1, d2)
    check_view(tv, nv, case.root, case.nroot)
    assert tl.diagonal(case.x, offset=off, dim1=d1, dim2=d2).stride() == tv.stride()
    if torch is not None:
        check_torch(tv, case.p.diagonal(off, d1, d2))


def test_diagonal_errors():
    x = tl.arange(12).view(3, 4)
    assert x.diagonal(1).tolist() == [1, 6, 11] and x.diagonal(-1).tolist() == [4, 9]
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical"):
        x.diagonal(0, 0, 0)
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical"):
        x.diagonal(0, 1, -1)
    with pytest.raises(IndexError):
        x.diagonal(0, 0, 2)
    with pytest.raises(IndexError):
        tl.arange(3).diagonal()


# ---------------------------------------------------------------------------------------------
# split, chunk, unbind

@WITH_FIXTURE
@given(st.data())
def test_split_chunk_unbind(torch, data):
    run_split(data, torch)


@pytest.mark.parametrize("device", DEVICES)
@given(st.data())
def test_split_chunk_unbind_numpy(device, data):
    run_split(data, None, device)


def _check_pieces(case, pieces, np_pieces, ppieces):
    assert len(pieces) == len(np_pieces), (len(pieces), len(np_pieces))
    for i, (t, n) in enumerate(zip(pieces, np_pieces)):
        check_view(t, n, case.root, case.nroot)
        if ppieces is not None:
            check_torch(t, ppieces[i])


def run_split(data, torch, device="cpu"):
    case = data.draw(cases(torch=torch, device=device, min_dims=1))
    nd = case.x.dim()
    d = data.draw(st.integers(-nd, nd - 1))
    dd = d % nd
    n = case.x.shape[d]
    P = (lambda f: f(case.p)) if torch is not None else (lambda f: None)
    # equal pieces
    size = data.draw(st.integers(1 if n else 0, n + 2))
    starts = range(0, n, size) if n else [0]
    want = [case.n[_index_along(nd, dd, slice(s, s + size))] for s in starts]
    _check_pieces(case, case.x.split(size, d), want, P(lambda p: p.split(size, d)))
    _check_pieces(case, tl.split(case.x, size, dim=d), want, None)
    # given sizes
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=3)))
    sizes = [b - a for a, b in zip([0] + cuts, cuts + [n])]
    want = [case.n[_index_along(nd, dd, slice(a, b))] for a, b in zip([0] + cuts, cuts + [n])]
    _check_pieces(case, case.x.split(sizes, d), want, P(lambda p: p.split(sizes, d)))
    # chunk: pieces of ceil(n / chunks)
    chunks = data.draw(st.integers(1, 6))
    csize = -(-n // chunks)
    want = ([case.n[_index_along(nd, dd, slice(s, s + csize))] for s in range(0, n, csize)] if n
            else [case.n] * chunks)
    _check_pieces(case, case.x.chunk(chunks, d), want, P(lambda p: p.chunk(chunks, d)))
    # unbind
    want = [case.n[_index_along(nd, dd, i)] for i in range(n)]
    _check_pieces(case, case.x.unbind(d), want, P(lambda p: p.unbind(d)))
    _check_pieces(case, tl.unbind(case.x, d), want, None)


def test_split_chunk_unbind_errors():
    x = tl.arange(10)
    with pytest.raises(RuntimeError, match="sum exactly to 10"):
        x.split([3, 6])
    with pytest.raises(RuntimeError):
        x.split(-1)
    with pytest.raises(RuntimeError, match="split_size can only be 0"):
        x.split(0)
    with pytest.raises(RuntimeError, match="chunk expects `chunks` to be greater than 0"):
        x.chunk(0)
    with pytest.raises(RuntimeError):
        tl.tensor(1).chunk(1)
    with pytest.raises(IndexError):
        tl.tensor(1).unbind()
    with pytest.raises(IndexError):
        x.unbind(1)
    assert [p.tolist() for p in x.split(4)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert len(tl.arange(5).chunk(4)) == 3       # PyTorch: ceil-sized pieces, maybe fewer


def test_split_errors_match_torch(torch):
    for L in (tl, torch):
        with pytest.raises(RuntimeError):
            L.arange(10).split([3, 6])
        with pytest.raises(RuntimeError):
            L.arange(10).chunk(0)
        with pytest.raises(IndexError):
            L.tensor(1).unbind()


# ---------------------------------------------------------------------------------------------
# contiguity and metadata

@WITH_FIXTURE
@given(st.data())
def test_contiguous_and_metadata(torch, data):
    run_contiguous_metadata(data, torch)


@pytest.mark.parametrize("device", DEVICES)
@given(st.data())
def test_contiguous_and_metadata_numpy(device, data):
    run_contiguous_metadata(data, None, device)


def run_contiguous_metadata(data, torch, device="cpu"):
    case = data.draw(cases(torch=torch, device=device))
    x, n = case.x, case.n
    assert x.is_contiguous() == n.flags["C_CONTIGUOUS"]
    c = x.contiguous()
    if x.is_contiguous():
        assert c is x
    else:
        assert c._base is None and c.is_contiguous() and c.untyped_storage() is not x.untyped_storage()
        assert c.stride() == tuple(s // n.itemsize for s in np.ascontiguousarray(n).strides) or n.size <= 1
    assert c.device == x.device
    if not x.is_meta:
        assert_values(c, n)
    itemsize = 2 if case.name == "bfloat16" else n.itemsize
    assert x.element_size() == x.itemsize == itemsize
    assert x.numel() == x.nelement() == n.size == tl.numel(x)
    assert x.nbytes == n.size * itemsize
    assert x.dim() == x.ndim == x.ndimension() == n.ndim
    assert x.shape == x.size() == n.shape and type(x.shape) is tl.Size
    assert isinstance(x.shape, tuple)
    for d in range(-n.ndim, n.ndim):
        assert x.size(d) == n.shape[d] and x.stride(d) == x.stride()[d]
    with pytest.raises(IndexError):
        x.size(n.ndim)
    if n.size and x.is_cpu:
        assert x.data_ptr() == raw_numpy(x).__array_interface__["data"][0]
    if torch is not None:
        p = case.p
        assert x.is_contiguous() == p.is_contiguous() and x.stride() == p.stride()
        assert (x.contiguous() is x) == (p.contiguous() is p)
        assert x.contiguous().stride() == p.contiguous().stride()
        assert x.storage_offset() == p.storage_offset() and x.nbytes == p.nbytes


def test_size_is_a_tuple_subclass():
    s = tl.zeros(2, 3).shape
    assert isinstance(s, tuple) and s == (2, 3) and repr(s) == "tensorlib.Size([2, 3])"
    assert s.numel() == 6 and isinstance(s[0:1], tl.Size) and s[1] == 3
    assert tl.zeros(s).shape == s and tl.zeros(0, 3).shape.numel() == 0
    assert tl.tensor(1).shape == () and tl.tensor(1).stride() == ()


def test_size_one_and_empty_dims_never_break_contiguity():
    assert tl.zeros(3, 1, 4).transpose(0, 1).is_contiguous()
    assert tl.zeros(1, 1).t().is_contiguous()
    assert tl.zeros(0, 3).t().is_contiguous()
    assert tl.zeros(4, 1)[:, ::5].is_contiguous() is True
    assert not tl.zeros(3, 4)[:, ::2].is_contiguous()
    assert not tl.zeros(3, 1).expand(3, 4).is_contiguous()


def test_views_never_copy_and_see_writes():
    base = tl.zeros(4, 6)
    views = [base.view(6, 4), base.t(), base[1:, ::2], base.narrow(1, 2, 3), base.select(0, 1),
             base.unsqueeze(0), base.unfold(1, 2, 2), base.diagonal(), base.as_strided((2,), (5,)),
             base.split(2)[1], base.chunk(3, 1)[2], base.unbind(1)[3], base.movedim(0, 1),
             base.flatten(), base.unflatten(1, (2, 3)), base.expand(2, 4, 6), base.permute(1, 0),
             base[None, ..., 2], base.view(tl.int32), base.reshape(24), base.view_as(tl.empty(24))]
    for v in views:
        assert v.untyped_storage() is base.untyped_storage()
    base.numpy()[...] = np.arange(24, dtype=np.float32).reshape(4, 6)
    ref = np.arange(24, dtype=np.float32).reshape(4, 6)
    assert views[2].tolist() == ref[1:, ::2].tolist()
    assert views[7].tolist() == np.diagonal(ref).tolist()
    assert views[8].tolist() == [0.0, 5.0]


# ---------------------------------------------------------------------------------------------
# extreme arguments: an error of PyTorch's classes, or a view that stays inside its storage

EXTREME = st.sampled_from([0, 1, 2, 3, -1, -2, 2 ** 31, 2 ** 62, 2 ** 63 - 1, -2 ** 63, 2 ** 61 + 100])


def _assert_inside(v):
    """Every element of view v addresses memory inside its storage."""
    if v.numel() == 0:
        return
    last = v.storage_offset() + sum((n - 1) * s for n, s in zip(v.shape, v.stride()))
    assert v.storage_offset() >= 0 and min(v.stride(), default=0) >= 0
    assert (last + 1) * v.element_size() <= v.untyped_storage().nbytes()
    if v.numel() <= 4096:
        v.tolist()


@given(st.data())
def test_extreme_arguments_never_escape_the_storage(data):
    case = data.draw(cases(min_dims=1, max_steps=1))
    x = case.x
    a, b, c = data.draw(EXTREME), data.draw(EXTREME), data.draw(EXTREME)
    ops = [
        lambda: x.as_strided((a % 5, 2), (b, 1), c if c >= 0 else None),
        lambda: x.as_strided((2,), (a,), b),
        lambda: x.narrow(0, a, b),
        lambda: x.select(-1, a),
        lambda: x.unfold(0, a, b),
        lambda: x.diagonal(a, 0, -1) if x.dim() > 1 else x.unfold(-1, 1, a),
        lambda: x[a:b:c if c > 0 else 1],
        lambda: x[..., a::b if b > 0 else 2],
        lambda: x.split(a)[-1] if a else x.split(1)[0],
        # (an empty dim gives `chunks` empty pieces, as in PyTorch: keep that count small)
        lambda: x.chunk(a if x.shape[0] or a < 100 else 3)[0],
        lambda: x.expand(a, *x.shape),
        lambda: x.view(a, -1),
        lambda: x.unsqueeze(a),
        lambda: x.movedim(0, a),
    ]
    op = data.draw(st.sampled_from(ops))
    try:
        v = op()
    except (RuntimeError, IndexError, ValueError, TypeError):
        return
    _assert_inside(v)


# ---------------------------------------------------------------------------------------------
# wrong argument types: TypeError, as in PyTorch

WRONG_TYPES = [
    lambda L, x: x.view("a"), lambda L, x: x.view(None), lambda L, x: x.view(2.0, 3),
    lambda L, x: x.view(2, [3]), lambda L, x: x.reshape("a"), lambda L, x: x.reshape(2, [3]),
    lambda L, x: x.transpose("a", 1), lambda L, x: x.transpose(0, 1.0), lambda L, x: x.transpose(0),
    lambda L, x: x.narrow(0, "1", 2), lambda L, x: x.narrow(0, 1.0, 1), lambda L, x: x.narrow(0, 1),
    lambda L, x: x.select(0, 1.5), lambda L, x: x.select(0, None), lambda L, x: x.unsqueeze(1.0),
    lambda L, x: x.expand(2.5, 3), lambda L, x: x.expand("a"), lambda L, x: x.expand(),
    lambda L, x: x.permute(0.0, 1), lambda L, x: x.permute(), lambda L, x: x.flatten("a"),
    lambda L, x: x.unflatten(1.0, (3, 1)), lambda L, x: x.split(1.5), lambda L, x: x.split("a"),
    lambda L, x: x.chunk(2.0), lambda L, x: x.unbind(0.0), lambda L, x: x.unfold(0, 2.0, 1),
    lambda L, x: x.as_strided((2,), "a"), lambda L, x: x.as_strided((2,), (1,), 0.5),
    lambda L, x: x.diagonal(0.5), lambda L, x: x.movedim("a", 0), lambda L, x: x.movedim(0.0, 1),
    lambda L, x: x.squeeze(1.0), lambda L, x: x.squeeze("a"), lambda L, x: L.cat([x], dim=1.0),
    lambda L, x: L.stack([x], 1.5), lambda L, x: x.repeat(1.5, 1), lambda L, x: x.repeat(),
    lambda L, x: x.tile("a"), lambda L, x: x.roll(1.5), lambda L, x: x.roll(1, 0.5),
    lambda L, x: x.roll("a"), lambda L, x: x.tril(1.5), lambda L, x: x.flip(0.5),
    lambda L, x: x.copy_("a"), lambda L, x: x.copy_(None), lambda L, x: x.fill_("a"),
    lambda L, x: x.fill_(None), lambda L, x: x.expand_as([1, 2]), lambda L, x: x.view_as(3),
    lambda L, x: L.broadcast_tensors(x, 1), lambda L, x: x.size("a"), lambda L, x: x.stride(1.0),
    lambda L, x: L.cat(x), lambda L, x: L.cat([x, 1]), lambda L, x: x[1:1.5],
]


@pytest.mark.parametrize("k", range(len(WRONG_TYPES)))
def test_wrong_argument_types_raise_type_error(k):
    with pytest.raises(TypeError):
        WRONG_TYPES[k](tl, tl.zeros(2, 3))


@pytest.mark.parametrize("k", range(len(WRONG_TYPES)))
def test_wrong_argument_types_match_torch(torch, k):
    with pytest.raises(TypeError):
        WRONG_TYPES[k](torch, torch.zeros(2, 3))


@pytest.mark.parametrize("call", [
    lambda L, x: L.reshape(x, 3, 2), lambda L, x: L.reshape(x, 6), lambda L, x: L.permute(x, 1, 0),
    lambda L, x: L.flip(x, 0), lambda L, x: L.tile(x, 2), lambda L, x: L.maximum(x, 2),
    lambda L, x: L.minimum(x, 2.0), lambda L, x: L.atan2(x, 2), lambda L, x: x.maximum(2)])
def test_function_forms_take_sequences_and_tensors_like_torch(call):
    tensorlib = tl
    """The methods take varargs (x.reshape(3, 2)); PyTorch's function forms take a sequence,
    and maximum/minimum/atan2 take only tensors: anything else is PyTorch's TypeError."""
    x = tensorlib.ones(2, 3)
    with pytest.raises(TypeError, match=r"argument '(shape|dims|other)' \(position \d\) must be"
                                        r"|^(reshape|permute)\(\) takes 2 positional arguments but 3 were given"):
        call(tensorlib, x)
    assert tensorlib.reshape(x, (3, 2)).shape == (3, 2) and x.reshape(3, 2).shape == (3, 2)
    assert tensorlib.flip(x, [0]).shape == (2, 3) and tensorlib.tile(x, (2,)).shape == (2, 6)


@pytest.mark.parametrize("expr", [
    "x[4:2]", "x[10:2]", "x[4:2:2]", "x[1:][3:3:2]", "x.split(3)[1][3:]",
    "x.view(2, 3)[:, 3:1]", "x.view(2, 3)[2:1]", "x.view(2, 3)[:, 5:][1:]",
    "x.view(2, 3).narrow(1, 3, 0)", "x.view(2, 3).diagonal()[2:]",
])
def test_empty_slice_keeps_the_clamped_start_offset(expr):
    """An empty slice's storage offset is its clamped start's, as in PyTorch."""
    torch = pytest.importorskip("torch")
    ours = eval(expr, {"x": tl.arange(6)})
    theirs = eval(expr, {"x": torch.arange(6)})
    assert (ours.shape, ours.stride(), ours.storage_offset()) == (
        tuple(theirs.shape), theirs.stride(), theirs.storage_offset())
