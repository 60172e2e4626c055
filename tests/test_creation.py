"""Creation ops: empty/zeros/ones/full, the *_like and new_* forms, arange/linspace/logspace,
eye, meshgrid, empty_strided and the legacy constructors. Values and dtypes against NumPy,
layouts, dtype inference and error classes against PyTorch."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64",
         "float16", "bfloat16", "float32", "float64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


def D(name):
    return getattr(tensorlib, name)


def tname(d):
    return str(d).split(".")[-1]


def values(t):
    """A tensor's values as a NumPy array (bfloat16 widened to float32)."""
    if t.dtype is tensorlib.bfloat16:
        t = t.float()
    return t.numpy()


def contiguous_strides(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


@pytest.fixture
def default_dtype():
    saved = tensorlib.get_default_dtype()
    yield
    tensorlib.set_default_dtype(saved)


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)
dtype_names = st.sampled_from(NAMES)


def np_dtype(name):
    return np.float32 if name == "bfloat16" else np.dtype(name)


# ---------------------------------------------------------------------------------------------
# empty / zeros / ones / full

@given(shape=shapes, name=dtype_names)
def test_zeros_ones_empty_full(shape, name):
    d = D(name)
    for make, ref in ((tensorlib.zeros, np.zeros), (tensorlib.ones, np.ones)):
        t = make(*shape, dtype=d) if shape else make((), dtype=d)
        assert t.shape == shape and t.dtype is d
        assert t.stride() == contiguous_strides(shape) and t.storage_offset() == 0
        assert t.is_contiguous() and t.numel() == int(np.prod(shape))
        assert t.untyped_storage().nbytes() == t.numel() * d.itemsize
        assert np.array_equal(values(t), ref(shape, dtype=np_dtype(name)))
    e = tensorlib.empty(shape, dtype=d)
    assert e.shape == shape and e.dtype is d and e.stride() == contiguous_strides(shape)
    fill = True if name == "bool" else 3 if name in INTS else 2.5
    f = tensorlib.full(shape, fill, dtype=d)
    assert f.dtype is d and np.array_equal(values(f), np.full(shape, fill, dtype=np_dtype(name)))


def test_size_argument_forms():
    for t in (tensorlib.zeros(2, 3), tensorlib.zeros((2, 3)), tensorlib.zeros([2, 3]),
              tensorlib.zeros(tensorlib.Size([2, 3])), tensorlib.zeros(size=(2, 3)),
              tensorlib.zeros(np.int64(2), 3), tensorlib.zeros((np.int32(2), 3))):
        assert t.shape == (2, 3)
    assert tensorlib.ones(np.int64(4)).shape == (4,)
    assert tensorlib.ones(tensorlib.tensor(4)).shape == (4,)
    assert tensorlib.zeros(()).shape == () and tensorlib.zeros([]).shape == ()
    assert tensorlib.empty(0).shape == (0,) and tensorlib.zeros(2, 0).stride() == (1, 1)


def test_size_argument_forms_match_torch(torch):
    for args in [(np.int64(2),), (torch.tensor(2),), ((2, 3),), ([],)]:
        targs = args
        largs = tuple(tensorlib.tensor(2) if isinstance(a, torch.Tensor) else a for a in args)
        assert torch.ones(*targs).shape == tensorlib.ones(*largs).shape


@pytest.mark.parametrize("bad", [2.5, "a", None, (2, "a"), (2, 2.0), True, [2, None]])
def test_bad_size_type_raises_type_error(bad):
    with pytest.raises(TypeError):
        tensorlib.zeros(bad)
    with pytest.raises(TypeError):
        tensorlib.empty(bad)


def test_bad_size_type_like_torch(torch):
    for bad in [2.5, "a", None, (2, "a"), (2, 2.0)]:
        with pytest.raises(TypeError):
            torch.zeros(bad)


@pytest.mark.parametrize("make", [tensorlib.zeros, tensorlib.ones, tensorlib.empty,
                                  lambda *s: tensorlib.full(s, 1.0), tensorlib.Tensor])
def test_negative_and_overflowing_sizes_raise_runtime_error(make):
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        make(-1)
    with pytest.raises(RuntimeError, match="negative dimension -3"):
        make(2, -3)
    with pytest.raises(RuntimeError, match="overflow"):
        make(2 ** 40, 2 ** 40)
    with pytest.raises(RuntimeError, match="overflow"):
        make(2 ** 31, 2 ** 31, 2 ** 2)
    with pytest.raises(RuntimeError):
        make(2 ** 62, 2 ** 62)


def test_overflowing_sizes_like_torch(torch):
    for shape in [(-1,), (2 ** 40, 2 ** 40), (2 ** 31, 2 ** 31, 4)]:
        with pytest.raises(RuntimeError):
            torch.zeros(*shape)
        with pytest.raises(RuntimeError):
            tensorlib.zeros(*shape)


def test_item_count_overflow_with_small_itemsize():
    # the element count itself overflows int64 (2**62 * 4 with int8 elements)
    with pytest.raises(RuntimeError, match="overflow"):
        tensorlib.empty(2 ** 62, 4, dtype=tensorlib.int8)
    with pytest.raises(RuntimeError):
        tensorlib.empty_strided((2 ** 62, 4), (4, 1), dtype=tensorlib.int8)


@pytest.mark.parametrize("fill, want", [(True, "bool"), (3, "int64"), (2.5, "float32"),
                                        (np.float64(2.5), "float32"), (-1, "int64")])
def test_full_dtype_inference(fill, want):
    assert tensorlib.full((2,), fill).dtype is D(want)


def test_full_dtype_inference_vs_torch(torch):
    for fill in (True, 3, 2.5, -7):
        assert tname(torch.full((2,), fill).dtype) == tensorlib.full((2,), fill).dtype.name
    assert tname(torch.full((2,), torch.tensor(3)).dtype) == \
        tensorlib.full((2,), tensorlib.tensor(3)).dtype.name
    assert tname(torch.full((2,), torch.tensor(3.5)).dtype) == \
        tensorlib.full((2,), tensorlib.tensor(3.5)).dtype.name


def test_full_follows_default_dtype(default_dtype):
    tensorlib.set_default_dtype(tensorlib.float64)
    assert tensorlib.full((2,), 1.5).dtype is tensorlib.float64
    assert tensorlib.full((2,), 1).dtype is tensorlib.int64


FULL_CASES = [(300, "uint8"), (-1, "uint8"), (-255, "uint8"), (-256, "uint8"), (128, "int8"),
              (-129, "int8"), (2 ** 31, "int32"), (2 ** 63, "int64"), (float("nan"), "int32"),
              (float("inf"), "int64"), (1e10, "int32"), (127.9, "int8"), (-0.9, "uint8"),
              (255.0, "uint8"), (1.5, "int32"), (1e6, "float16"), (float("inf"), "float16"),
              (float("nan"), "float16"), (1e39, "float32"), (1e39, "bfloat16"), (65504.0, "float16"),
              (1e300, "float64"), (2.5, "bool"), (float("nan"), "bool"), (100000, "float16")]


@pytest.mark.parametrize("fill, name", FULL_CASES)
def test_full_overflow_vs_torch(torch, fill, name):
    try:
        want = torch.full((2,), fill, dtype=getattr(torch, name))
    except RuntimeError:
        with pytest.raises(RuntimeError, match="without overflow"):
            tensorlib.full((2,), fill, dtype=D(name))
        with pytest.raises(RuntimeError, match="without overflow"):
            tensorlib.zeros(2, dtype=D(name)).fill_(fill)
        return
    got = tensorlib.full((2,), fill, dtype=D(name))
    want = want.float() if name == "bfloat16" else want
    np.testing.assert_array_equal(values(got), want.numpy())
    np.testing.assert_array_equal(values(tensorlib.zeros(2, dtype=D(name)).fill_(fill)), want.numpy())


# PyTorch names the dtype by its C++ type in the overflow message
C_NAME = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
          "int64": "int64_t", "float16": "c10::Half"}


def test_full_overflow_defined():
    assert tensorlib.full((2,), -1, dtype=tensorlib.uint8).tolist() == [255, 255]
    for fill, name in [(300, "uint8"), (-256, "uint8"), (128, "int8"), (float("nan"), "int32"),
                       (127.9, "int8"), (1e6, "float16"), (2 ** 63, "int64")]:
        with pytest.raises(RuntimeError, match=f"cannot be converted to type {C_NAME[name]} without overflow"):
            tensorlib.full((1,), fill, dtype=D(name))


def test_scalar_overflow_messages_are_pytorchs(torch):
    """One rule and one message for a number a dtype cannot hold, in PyTorch's words (its C++
    type names), whichever op takes the number."""
    cases = [lambda L: L.zeros(2, dtype=L.uint8).fill_(300),
             lambda L: L.full((2,), -256, dtype=L.uint8),
             lambda L: L.full((2,), 2 ** 63, dtype=L.int64),
             lambda L: L.zeros(2, dtype=L.int8).fill_(float("nan")),
             lambda L: L.zeros(2, dtype=L.int32).fill_(2.5e9),
             lambda L: L.zeros(2, dtype=L.float16).fill_(1e6),
             lambda L: L.zeros(2, dtype=L.bfloat16).masked_fill(L.tensor([True, False]), 1e39),
             lambda L: L.zeros(2).clamp(0, 1e39),
             lambda L: L.zeros(2, dtype=L.int16).clamp(max=40000),
             lambda L: L.zeros(2, dtype=L.uint8).masked_fill_(L.tensor([True, False]), 256)]
    for f in cases:
        msgs = []
        for L in (tensorlib, torch):
            with pytest.raises(RuntimeError) as e:
                f(L)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]


def test_python_ints_beyond_int64_read_as_pytorchs_uint64_scalar():
    """PyTorch reads a Python int number argument as int64, or as uint64 in [2^63, 2^64):
    a float tensor takes its value, an integer loop its bits (2^63 wraps to -2^63), a fill
    or bound of an integer dtype overflows; anything wider raises OverflowError."""
    x = tensorlib.zeros(2).fill_(2 ** 63)
    assert x.tolist() == [2.0 ** 63] * 2
    assert tensorlib.ones(2, dtype=tensorlib.int64).mul(2 ** 63).tolist() == [-2 ** 63] * 2
    assert tensorlib.ones(2, dtype=tensorlib.int32).add(2 ** 63 + 5).tolist() == [6, 6]
    assert (tensorlib.ones(2) + (2 ** 64 - 1)).tolist() == [2.0 ** 64] * 2
    with pytest.raises(RuntimeError, match="int64_t without overflow"):
        tensorlib.zeros(2, dtype=tensorlib.int64).fill_(2 ** 63)
    for f in (lambda v: tensorlib.zeros(2).fill_(v), lambda v: tensorlib.zeros(2).add(v),
              lambda v: tensorlib.zeros(2).clamp(max=v), lambda v: tensorlib.full((2,), v),
              lambda v: tensorlib.zeros(2).masked_fill(tensorlib.tensor([True, False]), v)):
        for v in (2 ** 64, -2 ** 63 - 1):
            with pytest.raises(OverflowError, match="int too big to convert"):
                f(v)


def test_python_ints_beyond_int64_match_torch(torch):
    mask = lambda L: L.tensor([True, False])                              # noqa: E731
    ops = [lambda L, v: L.zeros(2).fill_(v), lambda L, v: L.zeros(2, dtype=L.int64).fill_(v),
           lambda L, v: L.zeros(2, dtype=L.float16).fill_(v),
           lambda L, v: L.zeros(2, dtype=L.bool).fill_(v),
           lambda L, v: L.zeros(2).clamp(max=v), lambda L, v: L.zeros(2, dtype=L.int64).clamp(max=v),
           lambda L, v: L.zeros(2).masked_fill(mask(L), v),
           lambda L, v: L.full((2,), v), lambda L, v: L.full((2,), v, dtype=L.float32),
           lambda L, v: L.ones(2).add(v), lambda L, v: L.ones(2, dtype=L.int32).add(v),
           lambda L, v: L.ones(2, dtype=L.int64).mul(v), lambda L, v: v + L.ones(2, dtype=L.int64),
           lambda L, v: L.ones(2, dtype=L.int64).lt(v), lambda L, v: L.ones(2).pow(v),
           lambda L, v: L.ones(2, dtype=L.int64).div(v), lambda L, v: L.where(mask(L), L.ones(2), v)]
    for f in ops:
        for v in (2 ** 63, 2 ** 63 + 5, 2 ** 64 - 1, 2 ** 64, -2 ** 63 - 1, -2 ** 63, 10 ** 30):
            res = []
            for L in (tensorlib, torch):
                try:
                    res.append(f(L, v).tolist())
                except (RuntimeError, OverflowError) as e:
                    res.append(type(e))
            assert res[0] == res[1], (v, res)


@pytest.mark.parametrize("bad", ["a", None, [1], object()])
def test_full_bad_fill_value_type(bad):
    with pytest.raises(TypeError, match="must be Number"):
        tensorlib.full((2,), bad)


@pytest.mark.parametrize("make", [
    lambda **kw: tensorlib.zeros(2, **kw), lambda **kw: tensorlib.ones(2, **kw),
    lambda **kw: tensorlib.empty(2, **kw), lambda **kw: tensorlib.full((2,), 1.0, **kw),
    lambda **kw: tensorlib.arange(3.0, **kw), lambda **kw: tensorlib.linspace(0, 1, 3, **kw),
    lambda **kw: tensorlib.logspace(0, 1, 3, **kw), lambda **kw: tensorlib.eye(2, **kw),
    lambda **kw: tensorlib.tensor([1.0, 2.0], **kw),
    lambda **kw: tensorlib.zeros_like(tensorlib.zeros(2), **kw),
    lambda **kw: tensorlib.zeros(2).new_ones(3, **kw),
    lambda **kw: tensorlib.empty_strided((2,), (1,), **kw),
])
def test_requires_grad_factories(make):
    t = make(requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.grad_fn is None
    assert not make().requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        make(requires_grad=True, dtype=tensorlib.int64)


def test_requires_grad_int_like_torch(torch):
    with pytest.raises(RuntimeError, match="floating point"):
        torch.zeros(2, dtype=torch.int64, requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point"):
        torch.arange(3, requires_grad=True)
    with pytest.raises(RuntimeError):
        tensorlib.arange(3, requires_grad=True)


def test_device_argument():
    for dev in ("cpu", "cpu:0", tensorlib.device("cpu"), None):
        t = tensorlib.zeros(2, device=dev)
        assert t.device == tensorlib.device("cpu") and t.is_cpu and not t.is_cuda
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        tensorlib.zeros(2, device="cuda:9")     # (the emulated devices are cuda:0 and cuda:1)
    with pytest.raises(RuntimeError):
        tensorlib.zeros(2, device="gpu")
    with pytest.raises(TypeError):
        tensorlib.zeros(2, device=tensorlib.zeros(1))


def test_device_objects():
    d = tensorlib.device("cpu")
    assert d.type == "cpu" and d.index is None and str(d) == "cpu"
    assert repr(d) == "device(type='cpu')"
    assert d == tensorlib.device("cpu") and d != tensorlib.device("cpu:0")
    assert tensorlib.device("cpu", 0).index == 0 and tensorlib.device("cuda:1").index == 1
    assert hash(d) == hash(tensorlib.device("cpu"))
    with pytest.raises(RuntimeError):
        tensorlib.device("foo")
    with pytest.raises(RuntimeError):
        tensorlib.device("cuda:x")
    with pytest.raises(RuntimeError, match="negative"):
        tensorlib.device("cpu", -1)
    with pytest.raises(TypeError):
        tensorlib.device(None)


def test_device_objects_match_torch(torch):
    for spec in [("cpu",), ("cpu", 0), ("cpu:0",), ("cuda:1",), ("cuda", 2)]:
        a, b = torch.device(*spec), tensorlib.device(*spec)
        assert (a.type, a.index, str(a), repr(a)) == (b.type, b.index, str(b), repr(b))


def test_empty_strided():
    t = tensorlib.empty_strided((2, 3), (1, 2))
    assert t.shape == (2, 3) and t.stride() == (1, 2) and t.dtype is tensorlib.float32
    assert t.untyped_storage().nbytes() == 6 * 4
    assert tensorlib.empty_strided((2, 3), (0, 0)).untyped_storage().nbytes() == 4
    assert tensorlib.empty_strided((0, 3), (3, 1)).untyped_storage().nbytes() == 0
    assert tensorlib.empty_strided((2, 2), (4, 1), dtype=tensorlib.int16).untyped_storage().nbytes() == 12
    with pytest.raises(RuntimeError):
        tensorlib.empty_strided((2, 3), (-1, 2))
    with pytest.raises(RuntimeError):
        tensorlib.empty_strided((2, 3), (1,))


def test_empty_strided_storage_vs_torch(torch):
    for size, stride in [((2, 3), (1, 2)), ((2, 3), (0, 0)), ((0, 3), (3, 1)), ((3, 1, 2), (2, 7, 1))]:
        assert torch.empty_strided(size, stride).untyped_storage().nbytes() == \
            tensorlib.empty_strided(size, stride).untyped_storage().nbytes()


# ---------------------------------------------------------------------------------------------
# *_like: dtype/shape, and PyTorch's preserve_format strides

def layouts():
    """(description, builder(lib)) for assorted dense and non-dense layouts."""
    return [
        ("permuted", lambda L: L.zeros(2, 3, 4).permute(2, 0, 1)),
        ("transposed", lambda L: L.zeros(2, 3).t()),
        ("strided", lambda L: L.zeros(4, 6)[::2, ::2]),
        ("column", lambda L: L.zeros(4, 6)[:, 1:3]),
        ("expanded", lambda L: L.zeros(3, 1).expand(3, 4)),
        ("permuted size-1", lambda L: L.zeros(2, 1, 3).permute(2, 1, 0)),
        ("dense with odd size-1 stride", lambda L: L.zeros(2, 3, 4).permute(1, 2, 0)[:, :, :1]),
        ("strided permuted", lambda L: L.zeros(4, 6, 8)[::2].permute(2, 0, 1)),
        ("expanded permuted", lambda L: L.zeros(2, 3, 1).expand(2, 3, 4).permute(2, 0, 1)),
        ("empty transposed", lambda L: L.zeros(0, 3).t()),
        ("scalar", lambda L: L.zeros(())),
    ]


@pytest.mark.parametrize("name, build", layouts(), ids=[n for n, _ in layouts()])
def test_like_strides_match_torch(torch, name, build):
    a, b = build(torch), build(tensorlib)
    assert a.shape == b.shape and a.stride() == b.stride()
    for fn in ("empty_like", "zeros_like", "ones_like"):
        assert getattr(torch, fn)(a).stride() == getattr(tensorlib, fn)(b).stride(), fn
    assert torch.full_like(a, 7).stride() == tensorlib.full_like(b, 7).stride()
    assert a.clone().stride() == b.clone().stride()
    assert torch.empty_like(a, memory_format=torch.contiguous_format).stride() == \
        tensorlib.empty_like(b, memory_format=tensorlib.contiguous_format).stride()


@given(data=st.data())
def test_like_strides_random_layouts_vs_torch(data):
    torch = pytest.importorskip("torch")
    nd = data.draw(st.integers(0, 4))
    shape = [data.draw(st.sampled_from([0, 1, 1, 2, 3, 4])) for _ in range(nd)]
    strides = [data.draw(st.sampled_from([0, 1, 2, 3, 4, 6, 8, 12, 24])) for _ in range(nd)]
    extent = 1 + sum((s - 1) * st_ for s, st_ in zip(shape, strides) if s > 0)
    a = torch.zeros(extent + 4).as_strided(shape, strides)
    b = tensorlib.zeros(extent + 4).as_strided(shape, strides)
    assert torch.empty_like(a).stride() == tensorlib.empty_like(b).stride()


def test_like_preserves_permutation_by_hand():
    x = tensorlib.zeros(2, 3, 4).permute(2, 0, 1)          # strides (1, 12, 4)
    assert tensorlib.empty_like(x).stride() == (1, 12, 4)
    y = tensorlib.zeros(4, 6, 8)[::2].permute(2, 0, 1)     # not dense: order kept, made dense
    assert tensorlib.empty_like(y).stride() == (1, 48, 8)
    z = tensorlib.zeros(3, 1).expand(3, 4)                  # overlapping: contiguous
    assert tensorlib.empty_like(z).stride() == (4, 1)


@pytest.mark.parametrize("name", NAMES)
def test_like_values_and_dtypes(name):
    src = tensorlib.zeros(2, 3, dtype=D(name)).t()
    for fn, want in (("zeros_like", 0), ("ones_like", 1)):
        t = getattr(tensorlib, fn)(src)
        assert t.dtype is D(name) and t.shape == (3, 2)
        assert np.array_equal(values(t), np.full((3, 2), want, dtype=np_dtype(name)))
        assert t.data_ptr() != src.data_ptr()
    f = tensorlib.full_like(src, 1)
    assert f.dtype is D(name) and np.all(values(f) == 1)
    e = tensorlib.empty_like(src, dtype=tensorlib.float64)
    assert e.dtype is tensorlib.float64 and e.stride() == (1, 3)
    z = tensorlib.zeros_like(src, dtype=tensorlib.int8)
    assert z.dtype is tensorlib.int8 and z.tolist() == [[0, 0]] * 3


def test_like_full_value_conversion():
    assert tensorlib.full_like(tensorlib.zeros(2, dtype=tensorlib.int32), 7.9).tolist() == [7, 7]
    assert tensorlib.full_like(tensorlib.zeros(2, dtype=tensorlib.int32), 7.5,
                               dtype=tensorlib.float64).tolist() == [7.5, 7.5]
    with pytest.raises(RuntimeError, match="overflow"):
        tensorlib.full_like(tensorlib.zeros(2, dtype=tensorlib.uint8), 256)


def test_like_requires_grad_and_bad_input():
    t = tensorlib.zeros_like(tensorlib.zeros(2), requires_grad=True)
    assert t.requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        tensorlib.zeros_like(tensorlib.zeros(2, dtype=tensorlib.int32), requires_grad=True)
    with pytest.raises(TypeError, match="must be Tensor"):
        tensorlib.zeros_like([1, 2])
    assert not tensorlib.ones_like(tensorlib.ones(2, requires_grad=True)).requires_grad


# ---------------------------------------------------------------------------------------------
# new_*

@pytest.mark.parametrize("name", NAMES)
def test_new_factories_keep_dtype(name):
    src = tensorlib.zeros(2, dtype=D(name))
    assert src.new_zeros(3).dtype is D(name) and src.new_zeros(3).tolist() == values(tensorlib.zeros(3, dtype=D(name))).tolist()
    assert src.new_ones((2, 2)).dtype is D(name)
    assert np.all(values(src.new_ones((2, 2))) == 1)
    assert src.new_empty(4).dtype is D(name) and src.new_empty(4).shape == (4,)
    assert src.new_full((2,), 1).dtype is D(name)
    assert src.new_tensor([1, 0]).dtype is D(name)
    for fn in ("new_zeros", "new_ones", "new_empty"):
        assert getattr(src, fn)(2, dtype=tensorlib.float64).dtype is tensorlib.float64


def test_new_factories_details():
    s = tensorlib.zeros(2, dtype=tensorlib.int16)
    assert s.new_zeros((3, 2)).shape == (3, 2)
    assert s.new_full((3,), 5.7).tolist() == [5, 5, 5]
    assert s.new_full((3,), 5.7, dtype=tensorlib.float64).tolist() == [5.7] * 3
    assert s.new_tensor([1.7, 2]).tolist() == [1, 2]
    assert s.new_tensor([1, 2], dtype=tensorlib.float16).dtype is tensorlib.float16
    assert tensorlib.zeros(2, dtype=tensorlib.float64).new_tensor([True]).tolist() == [1.0]
    n = tensorlib.zeros(2).new_tensor(np.array([1, 2], dtype=np.int8))
    assert n.dtype is tensorlib.float32 and n.tolist() == [1.0, 2.0]
    # new_* outputs are contiguous whatever self's layout, and never require grad by default
    assert tensorlib.zeros(2, 3).t().new_zeros(2, 3).stride() == (3, 1)
    assert not tensorlib.ones(2, requires_grad=True).new_zeros(2).requires_grad
    assert tensorlib.zeros(2).new_zeros(2, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        tensorlib.zeros(2, dtype=tensorlib.int64).new_zeros(2, requires_grad=True)
    assert tensorlib.zeros(2, dtype=tensorlib.int64).new_zeros(
        2, dtype=tensorlib.float32, requires_grad=True).requires_grad
    with pytest.raises(RuntimeError, match="negative"):
        tensorlib.zeros(2).new_empty(-1)
    with pytest.warns(UserWarning, match="copy construct"):
        tensorlib.zeros(2).new_tensor(tensorlib.ones(2))


def test_new_factories_vs_torch(torch):
    for name in NAMES:
        a, b = torch.zeros(2, dtype=getattr(torch, name)), tensorlib.zeros(2, dtype=D(name))
        for fn, args in (("new_zeros", (3,)), ("new_ones", (3,)), ("new_empty", (3,)),
                         ("new_full", ((3,), 1)), ("new_tensor", ([1, 0],))):
            assert tname(getattr(a, fn)(*args).dtype) == getattr(b, fn)(*args).dtype.name


# ---------------------------------------------------------------------------------------------
# arange

def test_arange_dtype_inference(default_dtype):
    assert tensorlib.arange(5).dtype is tensorlib.int64
    assert tensorlib.arange(5.0).dtype is tensorlib.float32
    assert tensorlib.arange(0, 5, 0.5).dtype is tensorlib.float32
    assert tensorlib.arange(np.float64(2.5)).dtype is tensorlib.float32
    assert tensorlib.arange(np.int32(3)).dtype is tensorlib.int64
    assert tensorlib.arange(tensorlib.tensor(3)).dtype is tensorlib.int64
    assert tensorlib.arange(tensorlib.tensor(3.5)).dtype is tensorlib.float32
    assert tensorlib.arange(True).tolist() == [0]
    tensorlib.set_default_dtype(tensorlib.float64)
    assert tensorlib.arange(5.0).dtype is tensorlib.float64


@pytest.mark.parametrize("args", [(5,), (1, 5), (1, 5, 2), (0, -5, -1), (10, 0, -3), (0,), (5, 5),
                                  (-3, 3), (0, 2 ** 62, 2 ** 61), (2 ** 53, 2 ** 53 + 5),
                                  (-(2 ** 63), 2 ** 63 - 1, 2 ** 62), (7, 100, 13)])
def test_arange_integers_exact(args):
    t = tensorlib.arange(*args)
    assert t.dtype is tensorlib.int64
    assert t.tolist() == list(range(*args))


@pytest.mark.parametrize("args", [(5.0,), (1, 2.5, 0.5), (-3.5, 3.5), (1, -1, -0.5), (10, 0, -3.0),
                                  (0, 1, 0.25), (0, 1, 0.1), (-1.0, 1.0, 0.1), (0, 10, 0.3),
                                  (0, 1, 1 / 3), (1e-3, 1.0, 1e-2), (1, 0.99999999, -1e-9)])
def test_arange_floats_vs_numpy(args):
    t = tensorlib.arange(*args, dtype=tensorlib.float64)
    want = np.arange(*args, dtype=np.float64)
    assert t.shape == want.shape                       # same size rule: ceil((end - start) / step)
    np.testing.assert_allclose(t.numpy(), want, rtol=0, atol=1e-15 * max(1, np.abs(want).max(initial=0)))
    f = tensorlib.arange(*args)
    assert f.dtype is tensorlib.float32 and f.shape == want.shape
    np.testing.assert_allclose(f.numpy(), want.astype(np.float32), rtol=2e-7, atol=1e-7)


ARANGE_CASES = [
    (5,), (5.0,), (1, 5, 2), (0, 1, 0.25), (0, -5, -1), (10, 0, -3.0), (0, 1, 0.1), (-1.0, 1.0, 0.1),
    (0, 10, 0.3), (0.5,), (2.5,), (0, 2 ** 62, 2 ** 61), ((2.5,), "int64"), ((0.5,), "int64"),
    ((-2.5, 2.5), "int64"), ((-2.5, 2.5), "int32"), ((2.5,), "int32"), ((0.9, 3.1), "int16"),
    ((0, 10, 3), "uint8"), ((250, 260), "uint8"), ((0, 300, 100), "int8"), ((5,), "float16"),
    ((0, 5, 1.5), "float16"), ((0, 1, 0.25), "bfloat16"), ((2048, 2060), "float16"),
    ((256, 270), "bfloat16"), ((2 ** 24, 2 ** 24 + 6), "float32"), ((0, 2 ** 53, 2 ** 50), "float64"),
    ((0, 10, 3), "float64"), ((5,), "int8"),
]


def _exact_in_torch(args, dtype):
    """Torch's float arange mixes vector and scalar evaluation, so only values that are exact
    at every step (integer-valued or dyadic steps and bounds) are compared exactly."""
    if dtype is not None and dtype not in FLOATS:
        return True
    return all(float(a) * 4 == int(float(a) * 4) for a in args)


@pytest.mark.parametrize("case", ARANGE_CASES, ids=str)
def test_arange_vs_torch(torch, case):
    args, dtype = (case, None) if not isinstance(case[-1], str) else case
    kw_t = {} if dtype is None else {"dtype": getattr(torch, dtype)}
    kw_l = {} if dtype is None else {"dtype": D(dtype)}
    a, b = torch.arange(*args, **kw_t), tensorlib.arange(*args, **kw_l)
    assert tname(a.dtype) == b.dtype.name and tuple(a.shape) == tuple(b.shape)
    va = (a.float() if a.dtype == torch.bfloat16 else a).numpy()
    if _exact_in_torch(args, dtype):
        np.testing.assert_array_equal(values(b), va)
    else:
        np.testing.assert_allclose(values(b), va, rtol=1e-6, atol=1e-6)


def test_arange_errors():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        tensorlib.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        tensorlib.arange(0.0, 5, 0.0)
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
        tensorlib.arange(0, 5, -1)
    with pytest.raises(RuntimeError, match="inconsistent with step sign"):
        tensorlib.arange(0, -1, 0.1)
    with pytest.raises(RuntimeError, match="unsupported range: 0 -> inf"):
        tensorlib.arange(float("inf"))
    with pytest.raises(RuntimeError, match="unsupported range: 0 -> nan"):
        tensorlib.arange(float("nan"))
    with pytest.raises(NotImplementedError, match="Bool"):
        tensorlib.arange(5, dtype=tensorlib.bool)
    with pytest.raises(TypeError, match="must be Number"):
        tensorlib.arange("a")
    with pytest.raises(TypeError, match="must be Number"):
        tensorlib.arange(None)
    with pytest.raises(TypeError, match="must be Number"):
        tensorlib.arange(tensorlib.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="overflow"):
        tensorlib.arange(0, 1e300, 1e-300)
    with pytest.raises(RuntimeError, match="overflow"):
        tensorlib.arange(0, 1e20, 1e19, dtype=tensorlib.int64)


def test_arange_errors_like_torch(torch):
    for args, kw in [((0, 5, 0), {}), ((0, 5, -1), {}), ((float("inf"),), {}), ((float("nan"),), {})]:
        with pytest.raises(RuntimeError) as et:
            torch.arange(*args, **kw)
        with pytest.raises(RuntimeError) as el:
            tensorlib.arange(*args, **kw)
        assert str(et.value).split(":")[0] == str(el.value).split(":")[0]
    with pytest.raises(NotImplementedError):
        torch.arange(5, dtype=torch.bool)
    with pytest.raises(TypeError):
        torch.arange("a")


def test_arange_out():
    out = tensorlib.empty(3)
    with pytest.warns(UserWarning, match="resized"):           # as PyTorch warns
        r = tensorlib.arange(0, 5, out=out)
    assert r is out and out.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    o2 = tensorlib.empty(5, dtype=tensorlib.int32)
    tensorlib.arange(5, out=o2)
    assert o2.dtype is tensorlib.int32 and o2.tolist() == [0, 1, 2, 3, 4]


@given(start=st.integers(-50, 50), end=st.integers(-50, 50), step=st.integers(-7, 7).filter(bool))
def test_arange_integer_sweep(start, end, step):
    if (step > 0 and end < start) or (step < 0 and end > start):
        with pytest.raises(RuntimeError):
            tensorlib.arange(start, end, step)
        return
    assert tensorlib.arange(start, end, step).tolist() == list(range(start, end, step))


@given(start=st.floats(-100, 100), span=st.floats(0, 100), step=st.floats(0.01, 10))
def test_arange_float_sweep_vs_numpy(start, span, step):
    end = start + span
    t = tensorlib.arange(start, end, step, dtype=tensorlib.float64)
    want = np.arange(start, end, step, dtype=np.float64)
    assert t.shape == want.shape
    # NumPy steps by (start + step) - start, which differs from step by up to an ulp of start
    # and drifts linearly; tensorlib computes start + i * step
    tol = 4e-16 * max(len(want), 1) * (1 + abs(start) + abs(end))
    np.testing.assert_allclose(t.numpy(), want, rtol=0, atol=tol)


# ---------------------------------------------------------------------------------------------
# linspace / logspace

@pytest.mark.parametrize("start, end, steps", [(0, 1, 5), (0, 1, 1), (0, 1, 0), (0, 1, 2), (3, -3, 7),
                                              (0, 1, 11), (-10, 10, 33), (0.1, 0.7, 10), (1e-3, 1e3, 9),
                                              (5, 5, 4), (-1, 1, 100)])
def test_linspace_vs_numpy(start, end, steps):
    t = tensorlib.linspace(start, end, steps, dtype=tensorlib.float64)
    want = np.linspace(start, end, steps)
    assert t.shape == (steps,) and t.dtype is tensorlib.float64
    np.testing.assert_allclose(t.numpy(), want, rtol=4e-16, atol=4e-16 * max(abs(start), abs(end)))
    if steps >= 1:
        assert t[0].item() == float(start)
    if steps >= 2:
        assert t[-1].item() == float(end)          # both endpoints exact
    f = tensorlib.linspace(start, end, steps)
    assert f.dtype is tensorlib.float32
    np.testing.assert_allclose(f.numpy(), want.astype(np.float32), rtol=1e-6, atol=1e-6)


@given(start=st.floats(-1e6, 1e6), end=st.floats(-1e6, 1e6), steps=st.integers(2, 40))
def test_linspace_endpoints_exact_and_monotone(start, end, steps):
    t = tensorlib.linspace(start, end, steps, dtype=tensorlib.float64).numpy()
    assert t[0] == start and t[-1] == end
    d = np.diff(t)
    assert np.all(d >= 0) if end >= start else np.all(d <= 0)
    np.testing.assert_allclose(t, np.linspace(start, end, steps), rtol=1e-13, atol=1e-9)


LINSPACE_CASES = [
    ((0, 1, 5), None), ((0, 1, 1), None), ((0, 1, 0), None), ((3, -3, 7), None),
    ((-10, 10, 33), None), ((0, 1, 3), "float16"), ((0, 65504, 3), "float16"), ((0, 1, 5), "bfloat16"),
    ((0, 10, 5), "int64"), ((0, 10, 6), "int64"), ((0, 10, 4), "int64"), ((10, 0, 4), "int64"),
    ((-5, 5, 4), "int32"), ((0, 255, 5), "uint8"), ((0, 10, 4), "uint8"), ((0, 2.5, 3), "int64"),
    ((0.5, 2.5, 3), "int64"), ((-0.5, 2.5, 3), "int64"), ((0.5, 1.5, 3), "int64"),
    ((0.9, 10.9, 3), "int32"), ((1, 2, 1), "int64"), ((0, 1, 7), "float64"),
]


@pytest.mark.parametrize("case", LINSPACE_CASES, ids=str)
def test_linspace_vs_torch(torch, case):
    args, dtype = case
    a = torch.linspace(*args, **({} if dtype is None else {"dtype": getattr(torch, dtype)}))
    b = tensorlib.linspace(*args, **({} if dtype is None else {"dtype": D(dtype)}))
    assert tname(a.dtype) == b.dtype.name and tuple(a.shape) == tuple(b.shape)
    va = (a.float() if a.dtype == torch.bfloat16 else a).numpy()
    if dtype in INTS or args in [(0, 1, 5), (0, 1, 1), (0, 1, 0), (3, -3, 7), (-10, 10, 33),
                                 (0, 1, 3), (0, 65504, 3)]:
        np.testing.assert_array_equal(values(b), va)     # exact in both
    else:
        np.testing.assert_allclose(values(b), va, rtol=2e-7, atol=1e-7)


def test_linspace_errors_and_details():
    with pytest.raises(RuntimeError, match="non-negative"):
        tensorlib.linspace(0, 1, -1)
    with pytest.raises(TypeError):
        tensorlib.linspace(0, 1, 2.5)
    with pytest.raises(NotImplementedError, match="Bool"):
        tensorlib.linspace(0, 1, 5, dtype=tensorlib.bool)
    with pytest.raises(NotImplementedError, match="Bool"):
        tensorlib.logspace(0, 1, 5, dtype=tensorlib.bool)
    with pytest.raises(TypeError, match="must be Number"):
        tensorlib.linspace("a", 1, 3)
    t = tensorlib.linspace(tensorlib.tensor(0.0), tensorlib.tensor(1.0), 3)
    assert t.tolist() == [0.0, 0.5, 1.0]
    assert np.isnan(tensorlib.linspace(0, float("nan"), 3).numpy()).all()
    out = tensorlib.empty(2)
    with pytest.warns(UserWarning, match="resized"):
        assert tensorlib.linspace(0, 1, 3, out=out) is out
    assert out.tolist() == [0.0, 0.5, 1.0]
    assert tensorlib.linspace(1, 3, 3).dtype is tensorlib.float32
    # integer dtypes truncate the endpoints first (PyTorch): 0.5..1.5 is 0..1
    assert tensorlib.linspace(0.5, 1.5, 3, dtype=tensorlib.int64).tolist() == [0, 0, 1]


@pytest.mark.parametrize("start, end, steps, base", [(0, 2, 3, 10.0), (0, 2, 3, 2.0), (-2, 2, 5, 10.0),
                                                    (0, 10, 11, 10.0), (0, 1, 5, 0.5), (0.1, 0.7, 10, 10.0),
                                                    (0, 1, 1, 3.0), (2, 2, 1, 10.0), (0, 1, 0, 10.0),
                                                    (0, 40, 3, 10.0)])
def test_logspace_vs_numpy(start, end, steps, base):
    t = tensorlib.logspace(start, end, steps, base, dtype=tensorlib.float64)
    want = np.logspace(start, end, steps, base=base)
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-14)
    t32 = tensorlib.logspace(start, end, steps, base=base)
    assert t32.dtype is tensorlib.float32
    with np.errstate(over="ignore"):                   # 1e40 is inf in float32
        np.testing.assert_allclose(t32.numpy(), want.astype(np.float32), rtol=2e-7)


LOGSPACE_CASES = [
    ((0, 2, 3), {}), ((0, 2, 3), {"base": 2}), ((-2, 2, 5), {}), ((0, 10, 11), {"dtype": "float64"}),
    ((0, 3, 4), {"dtype": "int64"}), ((0, 3, 4), {"base": 2, "dtype": "int64"}),
    ((0, 3, 4), {"dtype": "int32"}), ((0, 2.5, 3), {"dtype": "int64"}),
    ((0, 1, 3), {"base": 2.5, "dtype": "int64"}), ((0, 20, 3), {"dtype": "int64"}),
    ((0, 3, 4), {"dtype": "uint8"}), ((0, 1, 5), {"base": -2}), ((0, 2, 5), {"dtype": "float16"}),
    ((0.1, 0.7, 10), {}),
]


@pytest.mark.parametrize("case", LOGSPACE_CASES, ids=str)
def test_logspace_vs_torch(torch, case):
    args, kw = case
    kt = {k: (getattr(torch, v) if k == "dtype" else v) for k, v in kw.items()}
    kl = {k: (D(v) if k == "dtype" else v) for k, v in kw.items()}
    a, b = torch.logspace(*args, **kt), tensorlib.logspace(*args, **kl)
    assert tname(a.dtype) == b.dtype.name and tuple(a.shape) == tuple(b.shape)
    if kw.get("dtype") in INTS:
        np.testing.assert_array_equal(b.numpy(), a.numpy())
    else:
        np.testing.assert_allclose(values(b), a.float().numpy(), rtol=2e-7, equal_nan=True)


# ---------------------------------------------------------------------------------------------
# eye

@pytest.mark.parametrize("n, m", [(3, None), (2, 3), (3, 2), (0, None), (0, 3), (3, 0), (1, 1), (5, 7)])
@pytest.mark.parametrize("name", ["float32", "int64", "bool", "bfloat16", "float16", "uint8"])
def test_eye_vs_numpy(n, m, name):
    t = tensorlib.eye(n, dtype=D(name)) if m is None else tensorlib.eye(n, m, dtype=D(name))
    want = np.eye(n, m, dtype=np_dtype(name))
    assert t.dtype is D(name) and t.shape == want.shape and t.is_contiguous()
    np.testing.assert_array_equal(values(t), want)
    if m is not None:
        np.testing.assert_array_equal(values(tensorlib.eye(n, m=m, dtype=D(name))), want)


def test_eye_details():
    assert tensorlib.eye(2).dtype is tensorlib.float32
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0"):
        tensorlib.eye(-1)
    with pytest.raises(RuntimeError, match="m must be greater or equal to 0"):
        tensorlib.eye(2, -1)
    with pytest.raises(TypeError):
        tensorlib.eye(3, 4.0)
    out = tensorlib.empty(5)
    with pytest.warns(UserWarning, match="resized"):
        assert tensorlib.eye(2, out=out) is out
    assert out.tolist() == [[1.0, 0.0], [0.0, 1.0]]


def test_eye_vs_torch(torch):
    for args in [(3,), (2, 3), (3, 2), (0,), (0, 3)]:
        np.testing.assert_array_equal(torch.eye(*args).numpy(), tensorlib.eye(*args).numpy())
    for bad in [(-1,), (2, -1)]:
        with pytest.raises(RuntimeError):
            torch.eye(*bad)


# ---------------------------------------------------------------------------------------------
# meshgrid

@pytest.mark.parametrize("sizes", [(2, 3), (2, 3, 4), (1, 5), (3,), (0, 3), (4, 1, 2)])
@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_vs_numpy(sizes, indexing):
    xs = [tensorlib.arange(10 * i, 10 * i + s) for i, s in enumerate(sizes)]
    got = tensorlib.meshgrid(*xs, indexing=indexing)
    want = np.meshgrid(*[x.numpy() for x in xs], indexing=indexing)
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype is tensorlib.int64
        np.testing.assert_array_equal(g.numpy(), w)
    # list and tuple arguments
    for g, w in zip(tensorlib.meshgrid(list(xs), indexing=indexing), want):
        np.testing.assert_array_equal(g.numpy(), w)


@pytest.mark.parametrize("sizes", [(2, 3), (2, 3, 4), (0, 3), (3,)])
@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_vs_torch(torch, sizes, indexing):
    a = torch.meshgrid(*[torch.arange(s) for s in sizes], indexing=indexing)
    b = tensorlib.meshgrid(*[tensorlib.arange(s) for s in sizes], indexing=indexing)
    for x, y in zip(a, b):
        assert tuple(x.shape) == tuple(y.shape) and x.stride() == y.stride()
        assert x.tolist() == y.tolist()


def test_meshgrid_outputs_are_views():
    x, y = tensorlib.arange(2), tensorlib.arange(3)
    gx, gy = tensorlib.meshgrid(x, y, indexing="xy")
    assert gx.shape == (3, 2) and gx.stride() == (0, 1)
    assert gx.untyped_storage() is x.untyped_storage()
    assert gy.untyped_storage() is y.untyped_storage()
    x[1] = 7
    assert gx[:, 1].tolist() == [7, 7, 7]
    s, v = tensorlib.meshgrid(tensorlib.tensor(5), tensorlib.arange(3), indexing="ij")
    assert s.shape == (1, 3) and s.tolist() == [[5, 5, 5]]


def test_meshgrid_errors_and_warning():
    with pytest.warns(UserWarning, match="indexing"):
        g = tensorlib.meshgrid(tensorlib.arange(2), tensorlib.arange(3))
    assert g[0].shape == (2, 3)                       # default is ij
    with pytest.raises(RuntimeError, match="indexing"):
        tensorlib.meshgrid(tensorlib.arange(2), indexing="foo")
    with pytest.raises(RuntimeError, match="same dtype"):
        tensorlib.meshgrid(tensorlib.arange(2), tensorlib.arange(3.0), indexing="ij")
    with pytest.raises(RuntimeError, match="non-empty"):
        tensorlib.meshgrid(indexing="ij")
    with pytest.raises(RuntimeError, match="0D or 1D"):
        tensorlib.meshgrid(tensorlib.zeros(2, 2), indexing="ij")
    with pytest.raises(TypeError):
        tensorlib.meshgrid(tensorlib.arange(2), [1, 2], indexing="ij")


def test_meshgrid_errors_like_torch(torch):
    with pytest.raises(RuntimeError):
        torch.meshgrid(torch.arange(2), torch.arange(3.0), indexing="ij")
    with pytest.raises(RuntimeError):
        torch.meshgrid(indexing="ij")


# ---------------------------------------------------------------------------------------------
# legacy constructors

LEGACY = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
          "BFloat16Tensor": "bfloat16", "ByteTensor": "uint8", "CharTensor": "int8",
          "ShortTensor": "int16", "IntTensor": "int32", "LongTensor": "int64", "BoolTensor": "bool"}


@pytest.mark.parametrize("cls, name", LEGACY.items())
def test_legacy_types(cls, name):
    C = getattr(tensorlib, cls)
    t = C(2, 3)                                       # uninitialized, by sizes
    assert t.shape == (2, 3) and t.dtype is D(name) and isinstance(t, tensorlib.Tensor)
    assert isinstance(t, C) and type(t) is tensorlib.Tensor
    d = C([1, 0])                                     # data, converted to the type
    assert d.dtype is D(name) and values(d).tolist() == [1, 0]
    assert C(tensorlib.Size([2, 1])).shape == (2, 1)
    assert C((1, 0)).shape == (2,)                    # a tuple is data, only a Size is a shape
    assert C().shape == (0,) and C().dtype is D(name)
    assert C.dtype is D(name)
    assert d.type() == "tensorlib." + cls
    assert tensorlib.zeros(1).type(C).dtype is D(name)
    assert tensorlib.zeros(1).type("torch." + cls).dtype is D(name)
    assert tensorlib.zeros(1).type("tensorlib." + cls).dtype is D(name)
    others = [c for c in LEGACY if c != cls]
    assert not any(isinstance(t, getattr(tensorlib, o)) for o in others)
    assert not isinstance(np.zeros(2), C)


@pytest.mark.parametrize("cls, name", LEGACY.items())
def test_legacy_types_vs_torch(torch, cls, name):
    for args in [([1, 0],), ((1, 0),), (2, 3), (torch.Size([2, 1]),), ()]:
        a = getattr(torch, cls)(*args)
        largs = tuple(tensorlib.Size(x) if isinstance(x, torch.Size) else x for x in args)
        b = getattr(tensorlib, cls)(*largs)
        assert tname(a.dtype) == b.dtype.name and tuple(a.shape) == tuple(b.shape)
        assert a.type().split(".")[-1] == b.type().split(".")[-1]
        if isinstance(args[0] if args else None, (list, tuple)) and not isinstance(args[0], torch.Size):
            assert (a.float() if a.dtype == torch.bfloat16 else a).tolist() == values(b).tolist()


def test_legacy_tensor_constructor(default_dtype):
    assert tensorlib.Tensor(2, 3).shape == (2, 3) and tensorlib.Tensor(2, 3).dtype is tensorlib.float32
    assert tensorlib.Tensor().shape == (0,)
    t = tensorlib.Tensor([1, 2])
    assert t.dtype is tensorlib.float32 and t.tolist() == [1.0, 2.0]
    assert tensorlib.Tensor([True, False]).tolist() == [1.0, 0.0]
    assert tensorlib.Tensor((2, 3)).tolist() == [2.0, 3.0]
    assert tensorlib.Tensor(tensorlib.Size([2, 3])).shape == (2, 3)
    assert tensorlib.Tensor(np.array([1, 2])).tolist() == [1.0, 2.0]
    assert tensorlib.Tensor(np.int64(3)).shape == (3,)
    assert tensorlib.Tensor([[]]).shape == (1, 0)
    src = tensorlib.tensor([1, 2])
    alias = tensorlib.Tensor(src)                     # aliases, whatever the dtype
    assert alias.dtype is tensorlib.int64 and alias.data_ptr() == src.data_ptr()
    z = tensorlib.tensor(5)
    assert tensorlib.Tensor(z).shape == () and tensorlib.Tensor(z).data_ptr() == z.data_ptr()
    assert tensorlib.LongTensor([1.5, 2]).tolist() == [1, 2]
    f = tensorlib.tensor([1.0])
    assert tensorlib.FloatTensor(f).data_ptr() == f.data_ptr()
    tensorlib.set_default_dtype(tensorlib.float64)
    assert tensorlib.Tensor(2).dtype is tensorlib.float64


def test_legacy_constructor_errors():
    with pytest.raises(TypeError, match="sequence"):
        tensorlib.Tensor(2.5)
    with pytest.raises(TypeError):
        tensorlib.Tensor("a")
    with pytest.raises(TypeError):
        tensorlib.Tensor(2, 3.5)
    with pytest.raises(TypeError):
        tensorlib.LongTensor(tensorlib.tensor([1.5]))
    with pytest.raises(TypeError):
        tensorlib.FloatTensor(tensorlib.tensor([1]))
    with pytest.raises(RuntimeError, match="negative"):
        tensorlib.Tensor(-1)
    with pytest.raises(ValueError):
        tensorlib.Tensor([[1, 2], [3]])
    with pytest.raises(TypeError):
        tensorlib.FloatTensor(2, dtype=tensorlib.float64)


def test_legacy_constructor_errors_like_torch(torch):
    for args in [(2.5,), ("a",), (2, 3.5)]:
        with pytest.raises(TypeError):
            torch.Tensor(*args)
    with pytest.raises(TypeError):
        torch.LongTensor(torch.tensor([1.5]))
    with pytest.raises(RuntimeError):
        torch.Tensor(-1)


def test_scalar_tensor():
    assert tensorlib.scalar_tensor(3).dtype is tensorlib.float32
    assert tensorlib.scalar_tensor(3).shape == ()
    assert tensorlib.scalar_tensor(3, dtype=tensorlib.int64).item() == 3
    assert tensorlib.scalar_tensor(True).item() == 1.0
