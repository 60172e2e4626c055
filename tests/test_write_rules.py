"""The write rules: version counters, _base, detach/.data, hashing, and the overlap checks of
the one write-preparation step every write goes through.

The overlap property test writes between random strided views of one storage and checks:
we raise exactly where PyTorch's rule says (internal overlap of the destination; two dense
operands sharing memory other than as the same range with the same strides), the same writes
PyTorch rejects, and every write we accept gives the well-defined answer "read the whole
source, then write" (computed with NumPy on a copy of the source: NumPy's own overlapping
assignment, like PyTorch's, may not buffer). Where the layouts are not dense PyTorch does not
judge and writes in its loop order; tensorlib reads such a source through a temporary.
"""
import itertools

import numpy as np
import pytest
from hypothesis import given, strategies as st
from numpy.lib.stride_tricks import as_strided as np_as_strided

import tensorlib as tl
from strided_refs import WITH_FIXTURE, assert_values, cases

OVERLAP = r"unsupported operation: some elements of the input tensor and the written-to tensor"
INTERNAL = r"unsupported operation: more than one element of the written-to tensor"


# ---------------------------------------------------------------------------------------------
# version counter and _base

def test_fresh_tensors_and_reads():
    x = tl.zeros(2, 3)
    assert x._version == 0 and x._base is None and not x._is_view()
    for read in (lambda: x.clone(), lambda: x.contiguous(), lambda: x.numpy(), lambda: x.tolist(),
                 lambda: x.t(), lambda: x[0], lambda: x.sum() if hasattr(x, "sum") else None,
                 lambda: x.to(tl.float64), lambda: repr(x), lambda: x.view(tl.int32)):
        read()
    assert x._version == 0


# (op, how many bumps in PyTorch): each runs on a fresh float tensor of shape (3, 3)
WRITES = [
    ("copy_", lambda L, x: x.copy_(L.ones(3, 3))),
    ("copy_ number", lambda L, x: x.copy_(2)),
    ("fill_", lambda L, x: x.fill_(2)),
    ("fill_ tensor", lambda L, x: x.fill_(L.tensor(2.0))),
    ("zero_", lambda L, x: x.zero_()),
    ("setitem scalar", lambda L, x: x.__setitem__(0, 1.0)),
    ("setitem tensor", lambda L, x: x.__setitem__((slice(1, None), 2), L.ones(2))),
    ("setitem ndarray", lambda L, x: x.__setitem__(1, np.ones(3, np.float32))),
    ("setitem all", lambda L, x: x.__setitem__(Ellipsis, 5)),
    ("tril_", lambda L, x: x.tril_()),
    ("triu_", lambda L, x: x.triu_(1)),
    ("t_", lambda L, x: x.t_()),
    ("transpose_", lambda L, x: x.transpose_(0, 1)),
    ("swapaxes_", lambda L, x: x.swapaxes_(0, 1)),
    ("unsqueeze_", lambda L, x: x.unsqueeze_(0)),
    ("squeeze_", lambda L, x: x.squeeze_()),
    ("cat out=", lambda L, x: L.cat([L.ones(1, 3), L.ones(2, 3)], out=x)),
    ("stack out=", lambda L, x: L.stack([L.ones(3), L.ones(3), L.ones(3)], out=x)),
    ("tril out=", lambda L, x: L.tril(L.ones(3, 3), out=x)),
    ("zeros out=", lambda L, x: L.zeros(3, 3, out=x)),
]


@pytest.mark.parametrize("name, op", WRITES, ids=[w[0] for w in WRITES])
def test_every_write_bumps_the_version_once(name, op):
    x = tl.arange(9.0).view(3, 3)       # a view: the root, x and other views share one counter
    root, other = x._base, x[1:]
    before = root._version
    op(tl, x)
    assert x._version == root._version == other._version == before + 1


@pytest.mark.parametrize("name, op", WRITES, ids=[w[0] for w in WRITES])
def test_version_bumps_match_torch(torch, name, op):
    if name == "setitem ndarray":
        pytest.skip("torch refuses to assign an ndarray (tensorlib and NumPy accept it)")
    x, p = tl.arange(9.0).view(3, 3), torch.arange(9.0).view(3, 3)
    op(tl, x)
    op(torch, p)
    assert x._version == p._version and x._base._version == p._base._version


def test_views_share_the_version_counter_and_point_at_the_root():
    b = tl.zeros(4, 6)
    v = b[1:]
    w = v.t()[0]
    u = w.unsqueeze(0).expand(3, 3)
    for t in (v, w, u):
        assert t._base is b and t._is_view()
    v[0, 0] = 1
    assert b._version == v._version == w._version == u._version == 1
    b.fill_(2)
    assert w._version == 2
    w.copy_(tl.ones(3))
    assert b._version == 3 and b[1:, 0].tolist() == [1, 1, 1]


def test_detach_data_and_non_views():
    b = tl.zeros(2, 3)
    b.fill_(1)
    d = b.detach()
    assert d._version == 1 and d._base is None and not d._is_view()
    assert d.data_ptr() == b.data_ptr() and d.untyped_storage() is b.untyped_storage()
    d.zero_()                                   # detach shares the counter
    assert b._version == d._version == 2
    dd = b.data
    assert dd._version == 0 and dd._base is None and dd.data_ptr() == b.data_ptr()
    dd.fill_(3)                                 # .data has its own counter
    assert dd._version == 1 and b._version == 2 and b[0, 0].item() == 3
    v = b[1:]
    assert v.detach()._base is None and v.detach()._version == b._version
    for fresh in (b.clone(), b.t().contiguous(), b.t().reshape(6), b.to(tl.float64),
                  b.t().flatten(), b.repeat(1, 1)):
        assert fresh._base is None and fresh._version == 0
    assert b.contiguous() is b and b.reshape(6)._base is b
    # a dtype view shares memory and the counter but, as in PyTorch, is not recorded as a view
    i = b.view(tl.int32)
    assert i._base is None and not i._is_view()
    i.zero_()
    assert b._version == 3


def test_data_setter_keeps_the_version_counter():
    x, y = tl.zeros(3), tl.ones(3)
    v = x.view(3)
    x.data = y
    assert x.data_ptr() == y.data_ptr() and x._version == 0
    x.fill_(3)
    assert x._version == v._version == 1 and y._version == 0 and y.tolist() == [3, 3, 3]


def test_tensors_hash_by_identity():
    a, b = tl.zeros(2), tl.zeros(2)
    assert hash(a) == id(a) and hash(a) != hash(b)
    d = {a: 1, b: 2}
    assert d[a] == 1 and d[b] == 2 and len({a, b, a}) == 2
    assert a.detach() not in d and a[...] not in d


@given(st.data())
def test_random_view_chains_share_one_counter(data):
    case = data.draw(cases(allow_expand=False, min_dims=1))
    views = [case.x]
    for _ in range(data.draw(st.integers(1, 4))):
        src = data.draw(st.sampled_from(views))
        op = data.draw(st.sampled_from(["t", "slice", "unsqueeze", "flatten_view", "select", "dtype"]))
        if op == "t" and src.dim() == 2:
            views.append(src.t())
        elif op == "slice" and src.dim():
            views.append(src[::2])
        elif op == "unsqueeze":
            views.append(src.unsqueeze(0))
        elif op == "select" and src.dim() and src.shape[0]:
            views.append(src[0])
        elif op == "dtype":
            views.append(src.view(tl.uint8) if src.element_size() == 1 else src.view(src.dtype))
        else:
            views.append(src.view(src.shape))
    target = data.draw(st.sampled_from(views))
    before = case.root._version
    target.fill_(0)
    # roots: the original, and (as in PyTorch) any dtype view, which is not recorded as a view
    roots = [case.root] + [v for v in views if not v._is_view()]
    for v in views:
        assert v._version == before + 1
        assert v._base is None or any(v._base is r for r in roots)
        assert v._base is None or v._base._base is None          # never a chain


# ---------------------------------------------------------------------------------------------
# overlap: the examples

def test_partial_overlap_raises():
    x = tl.arange(5.0)
    with pytest.raises(RuntimeError, match=OVERLAP):
        x[1:].copy_(x[:-1])
    with pytest.raises(RuntimeError, match=OVERLAP):
        x[:-1].copy_(x[1:])
    with pytest.raises(RuntimeError, match=OVERLAP):
        x[1:] = x[:-1]
    y = tl.arange(8.0, dtype=tl.float64)
    with pytest.raises(RuntimeError, match=OVERLAP):
        y.view(tl.float32)[1:5].copy_(y[:4])        # byte ranges overlap across itemsizes
    assert x.tolist() == [0, 1, 2, 3, 4] and x._version == 0   # nothing written, no bump


def test_partial_overlap_matches_torch(torch):
    for L in (tl, torch):
        x = L.arange(5.0)
        with pytest.raises(RuntimeError, match="unsupported operation"):
            x[1:].copy_(x[:-1])
        with pytest.raises(RuntimeError, match="unsupported operation"):
            x[:-1] = x[1:]


def test_writing_into_an_expanded_tensor_raises():
    x = tl.arange(4.0)
    e = x.expand(3, 4)
    for write in (lambda: e.copy_(tl.zeros(3, 4)), lambda: e.__setitem__((slice(None), 0), tl.ones(3)),
                  lambda: e.__setitem__(slice(None), 5), lambda: e.fill_(tl.tensor(2.0)),
                  lambda: e.tril_(), lambda: tl.cat([tl.ones(2, 4), tl.ones(1, 4)], out=e)):
        with pytest.raises(RuntimeError, match=INTERNAL):
            write()
    assert x.tolist() == [0, 1, 2, 3] and x._version == 0
    # a selected row of it is an ordinary tensor
    e[1].copy_(tl.ones(4))
    assert x.tolist() == [1, 1, 1, 1]
    # filling with one Python number is well defined (every element gets it): PyTorch allows it
    e.fill_(7)
    assert x.tolist() == [7, 7, 7, 7]
    e.copy_(e)                            # onto itself: nothing changes, as in PyTorch
    assert x._version == 3
    e.zero_()
    assert x.tolist() == [0, 0, 0, 0]


def test_expanded_writes_match_torch(torch):
    for L in (tl, torch):
        e = L.arange(4.0).expand(3, 4)
        for write in (lambda: e.copy_(L.zeros(3, 4)), lambda: e.__setitem__(slice(None), 5),
                      lambda: e.fill_(L.tensor(2.0))):
            with pytest.raises(RuntimeError, match="more than one element"):
                write()
        e.fill_(1)
        e.zero_()


def test_exact_aliasing_is_fine():
    x = tl.arange(6.0).view(2, 3)
    x.copy_(x)
    x[:] = x
    x.copy_(x.view(2, 3))
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]] and x._version == 3
    # same memory, another dtype of the same size: converted element by element in place
    f = tl.tensor([1.0, 2.0])
    i = f.view(tl.int32)
    i.copy_(f)
    assert i.tolist() == [1, 2]


def test_transposed_copy_raises_when_dense_else_goes_through_a_temporary():
    """A transposed alias of dense memory raises PyTorch's overlap error; one PyTorch cannot
    judge (not dense) is read through a temporary."""
    x = tl.arange(9.0).view(3, 3)
    for write in (lambda: x.t().copy_(x), lambda: x.copy_(x.t()),
                  lambda: x.__setitem__(slice(None), x.t())):
        with pytest.raises(RuntimeError, match=OVERLAP):
            write()
    assert x.tolist() == np.arange(9.0).reshape(3, 3).tolist() and x._version == 0
    y = tl.arange(16.0).view(4, 4)[:3, :3]
    y.t().copy_(y)
    assert y.tolist() == np.arange(16.0).reshape(4, 4)[:3, :3].T.tolist()
    z = tl.arange(16.0).view(4, 4)[:3, :3]
    z[:] = z.t()
    assert z.tolist() == np.arange(16.0).reshape(4, 4)[:3, :3].T.tolist()


def test_broadcast_sources_read_first():
    x = tl.arange(4.0)
    with pytest.raises(RuntimeError, match=OVERLAP):
        x.copy_(x[1])                     # copy_ checks the source as given (as PyTorch does)
    y = tl.arange(4.0)
    y[:] = y[2:3]
    assert y.tolist() == [2, 2, 2, 2]
    z = tl.arange(4.0)
    z.fill_(z[3])
    assert z.tolist() == [3, 3, 3, 3]
    # a broadcast row from the same storage: the value is read before anything is written
    # (PyTorch gives a loop-order-dependent answer here; NumPy and tensorlib read first)
    m = tl.arange(9.0).view(3, 3)
    m[:] = m.flatten()[1:4]
    assert m.tolist() == [[1, 2, 3]] * 3


def test_disjoint_interleaved_views_are_fine():
    x = tl.arange(6.0)
    x[::2].copy_(x[1::2])
    assert x.tolist() == [1, 1, 3, 3, 5, 5]
    m = tl.arange(12.0).view(3, 4)
    m[:, :2] = m[:, 2:]
    assert m.tolist() == [[2, 3, 2, 3], [6, 7, 6, 7], [10, 11, 10, 11]]


def test_cat_out_overlapping_an_input_raises():
    x = tl.arange(4.0)
    with pytest.raises(RuntimeError, match="unsupported operation"):
        tl.cat([x[:2], x[2:]], out=x)
    with pytest.raises(RuntimeError, match="unsupported operation"):
        tl.stack([x[:2], x[2:]], out=x.view(2, 2))
    assert x.tolist() == [0, 1, 2, 3]


# ---------------------------------------------------------------------------------------------
# overlap: the property

def _addresses(shape, strides, off):
    return [off + sum(i * s for i, s in zip(idx, strides)) for idx in itertools.product(*map(range, shape))]


def _dense(shape, strides):
    """Non-overlapping and dense (ignoring size-1 dims), computed by brute force."""
    addrs = _addresses(shape, strides, 0)
    return not addrs or sorted(addrs) == list(range(min(addrs), min(addrs) + len(addrs)))


def _expected_to_raise(dshape, dstr, doff, sshape, sstr, soff):
    """PyTorch's rule, restated independently: a copy onto exactly itself (the same shape,
    strides and offset) is fine; otherwise a destination with a stride-0 dim of size > 1
    raises, and two dense operands (as given, before broadcasting) sharing memory raise,
    unless they span the same range with the very same strides."""
    if (dshape, dstr, doff) == (sshape, sstr, soff):
        return None                    # a copy onto itself: nothing to check (as in PyTorch)
    if any(s == 0 and n > 1 for n, s in zip(dshape, dstr)):
        return INTERNAL
    da, sa = _addresses(dshape, dstr, doff), _addresses(sshape, sstr, soff)
    if not da or not sa:
        return None
    if max(da) < min(sa) or max(sa) < min(da):
        return None
    if _dense(dshape, dstr) and _dense(sshape, sstr) and (
            (min(da), max(da)) != (min(sa), max(sa)) or dstr != sstr):
        return OVERLAP
    return None


@st.composite
def _strides_for(draw, shape):
    """Any small strides, or (half the time) dense strides in a random order of dims."""
    if draw(st.booleans()):
        return tuple(draw(st.integers(0, 5)) for _ in shape)
    order = draw(st.permutations(range(len(shape))))
    strides, step = [0] * len(shape), 1
    for d in reversed(order):
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


@st.composite
def overlapping_writes(draw):
    """A storage of N elements and two strided views of it (dst, src), src broadcastable to
    dst, both inside the storage."""
    nd = draw(st.integers(1, 3))
    dshape = tuple(draw(st.integers(1, 4)) for _ in range(nd))
    dstr = draw(_strides_for(dshape))
    k = draw(st.integers(0, nd))
    sshape = tuple(draw(st.sampled_from([1, n])) for n in dshape[nd - k:])
    sstr = draw(_strides_for(sshape))
    dspan = sum((n - 1) * s for n, s in zip(dshape, dstr)) + 1
    sspan = sum((n - 1) * s for n, s in zip(sshape, sstr)) + 1
    size = max(dspan, sspan) + draw(st.integers(0, 6))
    doff = draw(st.integers(0, size - dspan))
    soff = draw(st.integers(0, size - sspan))
    return size, (dshape, dstr, doff), (sshape, sstr, soff)


def _np_view(buf, geom):
    shape, strides, off = geom
    return np_as_strided(buf[off:], shape, tuple(s * buf.itemsize for s in strides))


def run_overlap(data, torch):
    size, dgeom, sgeom = data.draw(overlapping_writes())
    root = tl.arange(float(size), dtype=tl.float64)
    dst, src = root.as_strided(*dgeom), root.as_strided(*sgeom)
    want_err = _expected_to_raise(*dgeom, *sgeom)
    if torch is not None:
        proot = torch.arange(float(size), dtype=torch.float64)
        try:
            proot.as_strided(*dgeom).copy_(proot.as_strided(*sgeom))
            torch_raised = False
        except RuntimeError:
            torch_raised = True
        assert torch_raised == (want_err is not None)
    if want_err is not None:
        with pytest.raises(RuntimeError, match=want_err):
            dst.copy_(src)
        assert root.tolist() == list(range(size)) and root._version == 0
        return
    dst.copy_(src)
    assert root._version == 1
    addrs = _addresses(*dgeom)
    if len(set(addrs)) == len(addrs):       # distinct destination elements: one right answer
        ref = np.arange(float(size))
        _np_view(ref, dgeom)[...] = _np_view(ref, sgeom).copy()     # read everything, then write
        assert_values(root, ref)


@given(st.data())
def test_overlap_rules_property(data):
    run_overlap(data, None)


@WITH_FIXTURE
@given(st.data())
def test_overlap_rules_match_torch(torch, data):
    run_overlap(data, torch)


@given(st.data())
def test_setitem_follows_the_same_rules(data):
    """x[index] = view of x: NumPy's answer whenever we accept the write."""
    n = data.draw(st.integers(2, 8))
    a, b = sorted(data.draw(st.lists(st.integers(0, n), min_size=2, max_size=2)))
    step = data.draw(st.integers(1, 3))
    c = data.draw(st.integers(0, n))
    x = tl.arange(float(n))
    dst = slice(a, b, step)
    m = len(range(a, b, step))
    src = slice(c, c + m * step, step) if c + (m - 1) * step < n else slice(0, m)
    ref = np.arange(float(n))
    try:
        x[dst] = x[src]
    except RuntimeError as e:
        assert "unsupported operation" in str(e)
        assert m > 1 and x.tolist() == list(range(n))
        lo_d, hi_d = a, a + (m - 1) * step
        s0 = src.start
        lo_s, hi_s = s0, s0 + (m - 1) * (src.step or 1)
        assert not (hi_d < lo_s or hi_s < lo_d) and (lo_d, hi_d) != (lo_s, hi_s)
        return
    ref[dst] = ref[src].copy()        # (NumPy alone may not buffer an overlapping read)
    assert x.tolist() == ref.tolist()
