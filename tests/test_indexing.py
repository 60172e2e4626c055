"""Basic indexing (ints, negative ints, slices with positive steps, None, Ellipsis) and
basic-index assignment.

Every index is a view: values, shape, strides, storage offset and memory sharing are compared
with NumPy's view for the same index, and strides/offsets with torch where installed.
Assignment is compared with NumPy assignment on a mirror of the whole base.
"""
import itertools

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib as tl
from divergences import NEGATIVE_SLICE_STEP_RAISES
from strided_refs import (
    DTYPES, FLOAT_DTYPES, WITH_FIXTURE, assert_values, bf16_round, cases, check_torch,
    check_view, elements, make_tensor, make_torch, np_dtype, pos_slices)
from hypothesis.extra import numpy as hnp


@st.composite
def basic_indices(draw, shape):
    """A basic index for ``shape``: in-range ints (negative too), slices with positive steps
    and any bounds, up to two None, and at most one Ellipsis. Returns (index, uses_ellipsis)."""
    nd = len(shape)
    k = draw(st.integers(0, nd))
    ell = draw(st.booleans())
    split = draw(st.integers(0, k)) if ell else k
    dims = list(range(split)) + list(range(nd - (k - split), nd))
    items = []
    for d in dims:
        n = shape[d]
        if n > 0 and draw(st.booleans()):
            items.append(draw(st.integers(-n, n - 1)))
        else:
            items.append(draw(pos_slices(n)))
    if ell:
        items.insert(split, Ellipsis)
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    if len(items) == 1 and draw(st.booleans()):
        return items[0], ell
    return tuple(items), ell


def np_index(a, index, ell):
    """NumPy's view for a basic index (a trailing Ellipsis keeps 0-d results views)."""
    if ell:
        return a[index]
    return a[(index if isinstance(index, tuple) else (index,)) + (Ellipsis,)]


@given(st.data())
def test_basic_index_matches_numpy_view(data):
    case = data.draw(cases())
    index, ell = data.draw(basic_indices(tuple(case.x.shape)))
    tv = case.x[index]
    check_view(tv, np_index(case.n, index, ell), case.root, case.nroot)


@WITH_FIXTURE
@given(st.data())
def test_basic_index_matches_torch(torch, data):
    case = data.draw(cases(torch=torch))
    index, _ = data.draw(basic_indices(tuple(case.x.shape)))
    check_torch(case.x[index], case.p[index])


@given(st.data())
def test_chained_indexing_views_point_at_the_root(data):
    case = data.draw(cases(max_steps=1))
    i1, e1 = data.draw(basic_indices(tuple(case.x.shape)))
    v1, n1 = case.x[i1], np_index(case.n, i1, e1)
    i2, e2 = data.draw(basic_indices(tuple(v1.shape)))
    check_view(v1[i2], np_index(n1, i2, e2), case.root, case.nroot)


@WITH_FIXTURE
@given(st.data())
def test_out_of_range_int_raises_index_error(torch, data):
    case = data.draw(cases(torch=torch, min_dims=1))
    nd = case.x.dim()
    d = data.draw(st.integers(0, nd - 1))
    n = case.x.shape[d]
    bad = data.draw(st.sampled_from([n, n + 1, -n - 1, -n - 7, 2 ** 40]))
    index = (slice(None),) * d + (bad,)
    with pytest.raises(IndexError, match=f"index {bad} is out of bounds for dimension {d} with size {n}"):
        case.x[index]
    with pytest.raises(IndexError):
        case.p[index]
    with pytest.raises(IndexError):
        case.n[index]


def _several_ellipses():
    """Subscripts with two or more ellipses: each stands for all the dims the other entries
    leave, so later entries can fall past the last dim (where PyTorch skips ``:``, adds a
    dim for None at the end, raises ValueError for a step below 1 and IndexError for the
    rest; a slice with a stop there is left out: see _entry_past_end)."""
    E = Ellipsis
    entries = [E, 0, -1, slice(None), slice(1, None), slice(0, None, 1), None, [0, 1], "mask"]
    out = [c for n in (2, 3) for c in itertools.product(entries, repeat=n) if c.count(E) >= 2]
    out += [(E, 0, E, slice(None), None), (0, E, 1, E, 2), (E, E, slice(None), E, None),
            (E, 1, E, slice(0, -1)), (E, [1], E, 0), (E, E, slice(None, None, 2)),
            (E, E, slice(None, None, -1)), (E, 0, E, slice(None, None, -1)),
            (E, E, slice(None, None, 0)), (E, E, E, slice(1, None, -2))]
    return out


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3)])
def test_several_ellipses_match_torch(torch, shape):
    """x[index], x[index] = v and their autograd (values, strides, grad, grad_fn names,
    exception classes) against PyTorch, on every subscript of _several_ellipses."""
    base = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)

    def run(lib, index):
        index = tuple(lib.tensor([True, False]) if e == "mask" else e for e in index)
        x = lib.tensor(base, requires_grad=True)
        try:
            r = x[index]
            (r * r).sum().backward()
            got = (r.tolist(), tuple(r.shape), r.stride() if r._base is not None else None,
                   x.grad.tolist(), type(r.grad_fn).__name__)
        except (IndexError, ValueError) as e:
            got = type(e)
        w = lib.tensor(base, requires_grad=True) * 1
        try:
            w[index] = lib.tensor(7.0, dtype=lib.float64, device="cpu", requires_grad=True)
            wrote = (w.tolist(), type(w.grad_fn).__name__)
        except (IndexError, ValueError) as e:
            wrote = type(e)
        return got, wrote

    for index in _several_ellipses():
        assert run(tl, index) == run(torch, index), index


@pytest.mark.parametrize("index", [
    slice(None), (slice(None),), slice(0, 5), (slice(0, 2), slice(0, 3)), slice(1, None),
    Ellipsis, None, 0, (None, 0), (0, None), (slice(1, None), None), (Ellipsis, slice(None)),
    (slice(None), 0, None), (slice(-2, None),), (slice(None, None, 1), slice(0, 2))])
def test_basic_index_grad_fn_names_match_torch(torch, index):
    """PyTorch names x[index]'s node after the last view the subscript applies: a slice
    that takes a whole dim in a tuple applies none, x[...] is an alias, while a bare slice
    takes its own path and is always SliceBackward0."""
    names = [type(L.ones(2, 3, requires_grad=True)[index].grad_fn).__name__
             for L in (tl, torch)]
    assert names[0] == names[1]


def test_several_ellipses_examples():
    x = tl.arange(24).view(2, 3, 4)
    assert x[..., 0, ...].tolist() == x[:, :, 0].tolist()       # the first ... spans 2 dims
    assert x[..., 0, ..., :].tolist() == x[:, 0].tolist()       # each ... spans 1
    assert x[0, ..., 1, ...].tolist() == x[0, :, 1].tolist()
    assert x[..., ...].shape == (2, 3, 4) and x[..., ..., :].shape == (2, 3, 4)
    y = tl.zeros(2, 3)
    y[..., 1, ...] = 5
    assert y.tolist() == [[0, 5, 0], [0, 5, 0]]
    for bad in [(..., ..., 0), (0, ..., ..., 1), (..., 0, ..., None), (..., ..., slice(1, None)),
                (..., ..., [0]), (..., ..., slice(0, 5))]:
        with pytest.raises(IndexError):
            x[bad]


@given(st.data())
def test_negative_and_zero_steps_raise_value_error(data):
    case = data.draw(cases(min_dims=1, max_steps=1))
    d = data.draw(st.integers(0, case.x.dim() - 1))
    step = data.draw(st.integers(-5, 0))
    index = (slice(None),) * d + (slice(None, None, step),)
    # NumPy reverses (or rejects 0); PyTorch raises ValueError for every non-positive step
    with pytest.raises(NEGATIVE_SLICE_STEP_RAISES, match="step must be greater than zero|cannot be zero"):
        case.x[index]


def test_index_examples():
    x = tl.arange(24).view(2, 3, 4)
    assert x[1, -1].tolist() == [20, 21, 22, 23]
    assert x[..., 1].tolist() == [[1, 5, 9], [13, 17, 21]]
    assert x[None, ..., None].shape == (1, 2, 3, 4, 1)
    assert x[:, None, 1:, ::2].stride() == (12, 12, 4, 2)
    assert x[1, ..., None, 2].shape == (3, 1)
    assert x[()].shape == x.shape and x[()]._base is x._base and x[()] is not x
    assert x[...] is not x and x[...]._base is x._base
    assert x[1:100:3].shape == (1, 3, 4) and x[-100:100].shape == (2, 3, 4)
    # empty results keep PyTorch's offsets: start * stride
    assert x[:, 5:1].storage_offset() == 12
    assert x[..., 3:, 1].storage_offset() == 13
    assert x[2:].storage_offset() == 24
    # bounds and steps beyond int64 clamp like Python slices
    assert x[:2 ** 70].shape == (2, 3, 4) and x[-2 ** 70:].shape == (2, 3, 4)
    assert x[2 ** 70:].shape == (0, 3, 4)
    assert x[::2 ** 70].shape == (1, 3, 4) and x[:, ::2 ** 62].shape == (2, 1, 4)


def test_index_with_index_like_objects():
    x = tl.arange(12).view(3, 4)
    assert x[tl.tensor(1)].tolist() == [4, 5, 6, 7]
    assert x[tl.tensor(1), tl.tensor(-1)].item() == 7
    assert x[np.int64(2), np.int32(0)].item() == 8
    assert x[tl.tensor(1):].shape == (2, 4)
    assert x[:, np.int64(1)::np.int64(2)].tolist() == [[1, 3], [5, 7], [9, 11]]

    class Idx:
        def __index__(self):
            return 2
    assert x[Idx()].tolist() == [8, 9, 10, 11] and x[:Idx()].shape == (2, 4)


def test_bool_indices_add_a_dim():
    x = tl.arange(6).view(2, 3)
    assert x[True].shape == (1, 2, 3) and x[False].shape == (0, 2, 3)
    assert x[1, True].tolist() == [[3, 4, 5]]
    assert tl.tensor(5)[True].shape == (1,)


def test_zero_dim_indexing():
    x = tl.tensor(5.0)
    for index in (None, Ellipsis, ()):
        v = x[index]
        assert v._base is x and v.data_ptr() == x.data_ptr()
    assert x[None].shape == (1,) and x[...].shape == () and x[None, None].shape == (1, 1)
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        x[0]
    with pytest.raises(IndexError):
        x[:]


def test_bad_indices():
    x = tl.arange(24).view(2, 3, 4)
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 3"):
        x[0, 0, 0, 0]
    with pytest.raises(IndexError, match=r"only integers, slices"):
        x[1.0]
    with pytest.raises(IndexError, match=r"only integers, slices"):
        x[:, 1.5]
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 1 with size 3"):
        x[1, 3]
    with pytest.raises(IndexError, match="index 4 is out of bounds for dimension 1 with size 4"):
        x[..., 4]
    with pytest.raises(TypeError, match="slice indices must be integers"):
        x[1:1.5]
    with pytest.raises(TypeError, match="slice indices must be integers"):
        x["a":]
    with pytest.raises(TypeError, match="slice indices must be integers"):
        x[::1.0]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[::-1]
    with pytest.raises(ValueError, match="cannot be zero"):
        x[:, ::0]
    with pytest.raises(IndexError, match="index 1 is out of bounds for dimension 2 with size 0"):
        x[..., ..., 1]          # (each ... spans the 2 dims the 1 leaves: it falls past them)
    with pytest.raises(IndexError):
        tl.zeros(0, 3)[0]


def test_bad_indices_match_torch_classes(torch):
    for L in (tl, torch):
        x = L.arange(24).view(2, 3, 4)
        for index, err in [((0, 0, 0, 0), IndexError), (1.0, IndexError), ((1, 3), IndexError),
                           ((Ellipsis, 4), IndexError), (slice(1, 1.5), TypeError),
                           (slice(None, None, -1), ValueError), (slice(None, None, 0), ValueError)]:
            with pytest.raises(err):
                x[index]
        with pytest.raises(IndexError):
            L.tensor(5.0)[0]


def test_iteration_and_len():
    x = tl.arange(6).view(3, 2)
    rows = list(x)
    assert len(x) == 3 and [r.tolist() for r in rows] == [[0, 1], [2, 3], [4, 5]]
    assert all(r._base is x._base for r in rows)
    with pytest.raises(TypeError):
        len(tl.tensor(1))
    with pytest.raises(TypeError):
        iter(tl.tensor(1))


# ---------------------------------------------------------------------------------------------
# assignment

def _np_value_for(value, dst_name):
    """NumPy reference for ``value`` converted to ``dst_name`` (bfloat16 rounded, in float32)."""
    if dst_name == "bfloat16":
        return bf16_round(np.asarray(value, dtype=np.float32))
    return np.asarray(value).astype(np_dtype(dst_name))


@st.composite
def set_values(draw, shape):
    """A value for x[index] = value: a Python scalar, a tensor broadcastable to ``shape`` of any
    dtype (small non-negative values: every conversion is exact or truncating), or an ndarray.
    Returns (value for tensorlib, value for torch or None, NumPy reference values, its dtype)."""
    kind = draw(st.sampled_from(["int", "float", "bool", "tensor", "tensor", "ndarray"]))
    if kind == "int":
        v = draw(st.integers(0, 100))
        return v, v, np.int64(v), "int64"
    if kind == "float":
        v = draw(st.integers(0, 200)) / 2
        return v, v, np.float64(v), "float64"
    if kind == "bool":
        v = draw(st.booleans())
        return v, v, np.bool_(v), "bool"
    k = draw(st.integers(0, len(shape)))
    vshape = tuple(draw(st.sampled_from([1, n])) for n in shape[len(shape) - k:])
    vshape = (1,) * draw(st.integers(0, 1)) + vshape if k == len(shape) else vshape
    name = draw(st.sampled_from(DTYPES))
    if name in FLOAT_DTYPES:
        vals = draw(hnp.arrays(np.float64, vshape, elements=st.integers(0, 200).map(lambda i: i / 2)))
        vals = vals.astype(np_dtype(name))
    else:
        vals = draw(hnp.arrays(np_dtype(name), vshape, elements=elements(name, small=True).filter(
            lambda v: v >= 0 if not isinstance(v, bool) else True)))
    if kind == "ndarray" and name != "bfloat16":
        return vals, vals, vals, name
    return make_tensor(vals, name), ("tensor", vals, name), vals, name


@WITH_FIXTURE
@given(st.data())
def test_setitem_matches_numpy_and_torch(torch, data):
    run_setitem(data, torch)


@given(st.data())
def test_setitem_matches_numpy(data):
    run_setitem(data, None)


def run_setitem(data, torch):
    case = data.draw(cases(torch=torch, allow_expand=False))
    index, ell = data.draw(basic_indices(tuple(case.x.shape)))
    dst_shape = np_index(case.n, index, ell).shape
    value, pvalue, nvalue, vname = data.draw(set_values(dst_shape))
    before = case.root._version
    case.x[index] = value
    ref = case.nroot.copy()
    from strided_refs import apply_steps
    np_index(apply_steps(ref, case.steps, "np"), index, ell)[...] = _np_value_for(nvalue, case.name)
    assert_values(case.root, ref)
    assert case.root._version == before + 1 and case.x._version == before + 1
    if torch is not None:
        if isinstance(pvalue, tuple):
            pvalue = make_torch(torch, pvalue[1], pvalue[2])
        if isinstance(pvalue, np.ndarray):
            pvalue = torch.from_numpy(pvalue)
        case.p[index] = pvalue
        np.testing.assert_array_equal(ref, case.proot.float().numpy() if case.name == "bfloat16"
                                      else case.proot.numpy())


def test_setitem_examples():
    x = tl.zeros(3, 4)
    x[1:, 2] = tl.tensor([7.0, 8.0])
    x[0] = 1
    x[..., None, 3] = tl.tensor([[5.0], [6.0], [9.0]])
    x[2, :2] = np.array([3, 4])
    assert x.tolist() == [[1, 1, 1, 5], [0, 0, 7, 6], [3, 4, 8, 9]]
    y = tl.zeros(2, 2, dtype=tl.int32)
    y[0] = 3.9                       # truncates, as a C cast and PyTorch do
    y[1, 1] = True
    assert y.tolist() == [[3, 3], [0, 1]]
    z = tl.zeros(3, dtype=tl.bfloat16)
    z[:] = tl.tensor([1.0, 1 / 3, 300.5])
    assert z.float().tolist() == bf16_round(np.array([1.0, 1 / 3, 300.5], np.float32)).tolist()


def test_setitem_errors():
    x = tl.zeros(3, 4)
    with pytest.raises(RuntimeError, match=r"\(3\).*\(2\)|\(2\).*\(3\)"):
        x[1:, 2] = tl.tensor([7.0, 8.0, 9.0])
    with pytest.raises(IndexError):
        x[5] = 1
    with pytest.raises(ValueError):
        x[::-1] = 1
    with pytest.raises(TypeError):
        x[0] = "a"
    with pytest.raises(TypeError):
        x[0] = None
    with pytest.raises(RuntimeError, match="overflow"):
        tl.zeros(2, dtype=tl.int32)[0] = 2 ** 40
    u = tl.zeros(2, dtype=tl.uint8)
    u[:] = -1                           # wraps, as in PyTorch
    assert u.tolist() == [255, 255]
    assert x._version == 0              # nothing was written


def test_setitem_errors_match_torch(torch):
    for L in (tl, torch):
        x = L.zeros(3, 4)
        with pytest.raises(RuntimeError):
            x[1:, 2] = L.tensor([7.0, 8.0, 9.0])
        with pytest.raises(IndexError):
            x[5] = 1
        with pytest.raises(ValueError):
            x[::-1] = 1
        with pytest.raises(TypeError):
            x[0] = "a"
        with pytest.raises(RuntimeError):
            L.zeros(2, dtype=L.int32)[0] = 2 ** 40


def test_setitem_check_order_matches_torch(torch):
    """Which error wins when several apply: a number's overflow before the index, the leaf
    check and shared memory before the mask's shape; x[x] = v runs as masked_fill_."""
    cases = [
        lambda L: L.zeros((), dtype=L.uint8).__setitem__(L.tensor(0), 1000),
        lambda L: L.zeros(3, dtype=L.uint8).__setitem__(7, 1000),
        lambda L: L.ones(1, requires_grad=True).__setitem__(
            L.zeros(0, dtype=L.bool), L.zeros(0)),
        lambda L: (lambda x: x.__setitem__(L.ones(3, 4, dtype=L.bool), x))(L.zeros(0, 0, 3)),
        lambda L: (lambda x: x.__setitem__(x, 1))(L.tensor([True, False, True])),
        lambda L: (lambda x: x.__setitem__(x > 0, x))(L.tensor([1.0, -1.0])),
    ]
    for f in cases:
        res = []
        for L in (tl, torch):
            try:
                f(L)
                res.append(None)
            except Exception as e:      # the class decides; messages as PyTorch's
                res.append(type(e))
        assert res[0] == res[1]


@pytest.mark.cpu_only("PyTorch runs x[mask] = v as masked_fill_ only for a CPU value; a "
                      "device value goes through index_put_, unchecked")
def test_mask_write_of_one_value_checks_its_range_as_masked_fill(torch):
    """x[mask] = a one-element CPU tensor runs as masked_fill_(mask, value.item()) in
    PyTorch: a value x's dtype cannot hold raises its overflow error, even when nothing is
    selected, while a one-element index_put of a wider dtype elsewhere just converts."""
    for lib in (tl, torch):
        for shape in ([1], [], [1, 1]):
            x = lib.zeros(1, 0, 0, dtype=lib.uint8)
            with pytest.raises(RuntimeError, match="overflow"):
                x[lib.tensor([True])] = lib.tensor(300, dtype=lib.int32).reshape(shape)
        x = lib.zeros(2, dtype=lib.uint8)
        with pytest.raises(RuntimeError, match="overflow"):
            x[lib.tensor([True, False])] = lib.tensor([300.0])
        with pytest.raises(RuntimeError, match="overflow"):
            lib.zeros(2, dtype=lib.float16)[lib.tensor([True, False])] = lib.tensor([1e10])
        assert x.tolist() == [0, 0] and x._version == 0
        x[lib.tensor([True, False])] = lib.tensor([-1], dtype=lib.int32)    # wraps, as fill_
        x[lib.tensor([False, True])] = lib.tensor([3.7])                    # truncates
        assert x.tolist() == [255, 3]


@pytest.mark.parametrize("index", [(), Ellipsis, slice(None), (slice(None), slice(None)),
                                   (Ellipsis, slice(None)), slice(0, 2), slice(0, 9),
                                   slice(None, None, 1), (slice(None), Ellipsis)])
def test_setitem_of_the_whole_tensor_writes_into_it(torch, index):
    """x[...] = v, x[:] = v, x[()] = v: PyTorch's subscript keeps x itself (a slice with
    start 0, step 1 and a stop at or past the end), so autograd records copy_ on x
    (CopyBackwards), no view and no CopySlices; a second backward through a graph that
    saved nothing then works."""
    names = []
    for lib in (tl, torch):
        a = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
        v = lib.full((2,), 3.0, dtype=lib.float64, requires_grad=True)
        x = a.clone()
        x[index] = v
        names.append(x.grad_fn.name().rsplit("::", 1)[-1])
        y = x.t().trunc()
        y.sum().backward()
        y.sum().backward()              # nothing saved was freed
        assert v.grad.tolist() == [0.0, 0.0]
    assert names == ["CopyBackwards", "CopyBackwards"]


@pytest.mark.parametrize("index", [slice(-2, None), slice(0, 1), slice(0, 2, 2), None, 0,
                                   (slice(None), 0), (Ellipsis, None)])
def test_setitem_of_part_writes_into_a_view(torch, index):
    """Any other subscript (a start given as -n included) writes through a view: CopySlices."""
    names = []
    for lib in (tl, torch):
        x = lib.ones(2, 2, requires_grad=True) * 1
        x[index] = lib.full((1,), 3.0, requires_grad=True)
        names.append(x.grad_fn.name().rsplit("::", 1)[-1])
    assert names == ["CopySlices", "CopySlices"]


def test_uint8_mask_write_checks_the_mask_shape_before_its_dtype():
    """x[uint8_mask] = value: PyTorch checks the mask's shape (IndexError) before
    masked_fill_ rejects the uint8 dtype (RuntimeError)."""
    torch = pytest.importorskip("torch")
    for lib in (tl, torch):
        x = lib.zeros(1, 2)
        with pytest.raises(IndexError, match="shape of the mask"):
            x[lib.ones(1, 1, dtype=lib.uint8)] = 1.0
        with pytest.raises(RuntimeError, match="only supports boolean masks"):
            x[lib.ones(1, 2, dtype=lib.uint8)] = 1.0
