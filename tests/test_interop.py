"""NumPy interop and Python conversions: from_numpy / .numpy() share memory both ways,
__array__, tensor(data) from nested sequences, Python scalar conversions, pickling, and the
.to() / .type() / type_as overloads."""
import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib

NP_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
NAMES = NP_NAMES[:6] + ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


def D(name):
    return getattr(tensorlib, name)


def tname(d):
    return str(d).split(".")[-1]


def sample(name, shape):
    n = int(np.prod(shape))
    if name == "bool":
        return (np.arange(n) % 3 == 0).reshape(shape)
    return (np.arange(n) % 100 + 1).astype(name).reshape(shape)


def same_error(torch_fn, tl_fn):
    """Both raise the same exception class, or both return."""
    def outcome(fn):
        try:
            fn()
        except Exception as e:     # noqa: BLE001 - the class is what is compared
            return type(e)
        return None
    return outcome(torch_fn), outcome(tl_fn)


# ---------------------------------------------------------------------------------------------
# from_numpy: no copy, writes seen both ways

@pytest.mark.parametrize("name", NP_NAMES)
def test_from_numpy_shares_memory_both_ways(name):
    a = sample(name, (3, 4))
    t = tensorlib.from_numpy(a)
    assert t.dtype is D(name) and t.shape == (3, 4) and t.stride() == (4, 1)
    assert t.storage_offset() == 0 and t.data_ptr() == a.ctypes.data
    assert t.untyped_storage().is_borrowed
    one = True if name == "bool" else 1
    zero = False if name == "bool" else 0
    a[1, 2] = zero
    assert t[1, 2].item() == zero                       # NumPy write seen by the tensor
    t[2, 3] = one
    assert a[2, 3] == one                               # tensor write seen by NumPy
    t.fill_(one)
    assert np.all(a == one)
    assert np.array_equal(t.numpy(), a) and t.numpy().ctypes.data == a.ctypes.data


@pytest.mark.parametrize("name", NP_NAMES)
@pytest.mark.parametrize("view", ["T", "cols", "step", "sub", "0d", "empty", "bcast"])
def test_from_numpy_non_contiguous(name, view):
    base = sample(name, (4, 6))
    a = {"T": lambda: base.T, "cols": lambda: base[:, 1:4], "step": lambda: base[::2, ::3],
         "sub": lambda: base[1:3, 2:5].T, "0d": lambda: base[1, 2, ...],
         "empty": lambda: base[:, 3:3], "bcast": lambda: np.broadcast_to(base[0], (3, 6))}[view]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")               # broadcast_to arrays are read-only
        t = tensorlib.from_numpy(a)
    item = a.itemsize
    assert t.shape == a.shape
    assert t.stride() == tuple(s // item for s in a.strides)
    if a.size:
        assert t.data_ptr() == a.ctypes.data
    assert np.array_equal(t.numpy(), a)
    assert t.is_contiguous() == (a.flags.c_contiguous or a.size == 0)
    if view in ("T", "cols", "step", "sub") and name != "bool":
        base[...] = 0
        assert not t.numpy().any()                      # still the same memory
        t.fill_(7)
        assert np.all(a == 7)


def test_from_numpy_byte_offsets_keep_alignment():
    a = np.arange(10, dtype=np.int32).view(np.int16)[1::3]
    t = tensorlib.from_numpy(a)
    assert t.stride() == (3,) and t.tolist() == a.tolist()


def test_from_numpy_keeps_array_alive():
    t = tensorlib.from_numpy(np.arange(5.0))
    import gc
    gc.collect()
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_from_numpy_negative_stride_raises():
    for a in (np.arange(6)[::-1], np.arange(6.0).reshape(2, 3)[:, ::-1]):
        with pytest.raises(ValueError, match="negative"):
            tensorlib.from_numpy(a)


@pytest.mark.parametrize("a", [np.array([1, 2], dtype=np.uint16), np.array([1 + 2j]),
                               np.array([1], dtype=object), np.array(["a"]),
                               np.zeros(3, dtype=[("a", "i4")]), np.array([1.0], dtype=np.longdouble)],
                         ids=["uint16", "complex", "object", "str", "struct", "longdouble"])
def test_from_numpy_unsupported_dtype_raises_type_error(a):
    with pytest.raises(TypeError, match="can't convert np.ndarray"):
        tensorlib.from_numpy(a)


def test_from_numpy_other_errors():
    with pytest.raises(TypeError, match="expected np.ndarray"):
        tensorlib.from_numpy([1, 2])
    with pytest.raises(TypeError, match="expected np.ndarray"):
        tensorlib.from_numpy(np.float64(1))
    with pytest.raises(ValueError, match="byte order"):
        tensorlib.from_numpy(np.array([1, 2], dtype=">i4"))
    odd = np.lib.stride_tricks.as_strided(np.zeros(10, np.int32), shape=(3,), strides=(6,))
    with pytest.raises(ValueError, match="multiple of the element byte size"):
        tensorlib.from_numpy(odd)


def test_from_numpy_errors_like_torch(torch):
    cases = [np.arange(6)[::-1], np.array([1 + 2j], dtype=object), np.array(["a"]),
             np.array([1, 2], dtype=">i4"), [1, 2]]
    for a in cases:
        et, el = same_error(lambda: torch.from_numpy(a), lambda: tensorlib.from_numpy(a))
        assert et is el is not None and et in (TypeError, ValueError), a


def test_from_numpy_readonly_warns():
    a = np.arange(3.0)
    a.flags.writeable = False
    with pytest.warns(UserWarning, match="not writable"):
        t = tensorlib.from_numpy(a)
    assert t.tolist() == [0.0, 1.0, 2.0]


def test_as_tensor_shares_when_it_can():
    a = np.arange(4.0)
    t = tensorlib.as_tensor(a)
    assert t.data_ptr() == a.ctypes.data and t.dtype is tensorlib.float64
    c = tensorlib.as_tensor(a, dtype=tensorlib.float32)
    assert c.data_ptr() != a.ctypes.data and c.dtype is tensorlib.float32
    x = tensorlib.arange(3)
    assert tensorlib.as_tensor(x) is x
    assert tensorlib.as_tensor(x, dtype=tensorlib.float64).dtype is tensorlib.float64
    assert tensorlib.as_tensor([1, 2]).dtype is tensorlib.int64
    assert tensorlib.as_tensor([1, 2.0]).dtype is tensorlib.float32
    assert tensorlib.as_tensor(3).shape == ()
    assert tensorlib.as_tensor(np.float32(1.5)).dtype is tensorlib.float32
    assert tensorlib.as_tensor([np.int8(1)]).dtype is tensorlib.int8


# ---------------------------------------------------------------------------------------------
# .numpy(): no copy, writes seen both ways

@pytest.mark.parametrize("name", NP_NAMES)
def test_numpy_shares_memory_both_ways(name):
    t = tensorlib.tensor(sample(name, (2, 3)))
    a = t.numpy()
    assert a.dtype == np.dtype(name) and a.shape == (2, 3) and a.ctypes.data == t.data_ptr()
    assert a.flags.writeable
    one = True if name == "bool" else 5
    a[0, 1] = one
    assert t[0, 1].item() == one
    t[1, 2] = one
    assert a[1, 2] == one


@pytest.mark.parametrize("make", [lambda: tensorlib.arange(6).view(2, 3).t(),
                                  lambda: tensorlib.arange(6).view(2, 3)[:, 1:],
                                  lambda: tensorlib.arange(12)[::3],
                                  lambda: tensorlib.zeros(3, 1).expand(3, 4),
                                  lambda: tensorlib.tensor(5), lambda: tensorlib.zeros(0, 3)],
                         ids=["t", "cols", "step", "expand", "0d", "empty"])
def test_numpy_of_views(make):
    t = make()
    a = t.numpy()
    assert a.shape == tuple(t.shape)
    assert a.tolist() == t.tolist()
    if t.numel():                                  # (empty arrays get 0 strides, as from torch)
        assert a.strides == tuple(s * t.element_size() for s in t.stride())
        assert a.ctypes.data == t.data_ptr()


def test_numpy_outlives_tensor():
    t = tensorlib.arange(4.0)
    a = t.numpy()
    del t
    import gc
    gc.collect()
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_numpy_errors():
    with pytest.raises(TypeError, match="BFloat16"):
        tensorlib.ones(2, dtype=tensorlib.bfloat16).numpy()
    t = tensorlib.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        t.numpy()
    assert t.numpy(force=True).tolist() == [1.0, 1.0]
    assert t.detach().numpy().tolist() == [1.0, 1.0]


def test_numpy_errors_like_torch(torch):
    et, el = same_error(lambda: torch.ones(2, dtype=torch.bfloat16).numpy(),
                        lambda: tensorlib.ones(2, dtype=tensorlib.bfloat16).numpy())
    assert et is el is TypeError
    et, el = same_error(lambda: torch.ones(2, requires_grad=True).numpy(),
                        lambda: tensorlib.ones(2, requires_grad=True).numpy())
    assert et is el is RuntimeError


# ---------------------------------------------------------------------------------------------
# __array__

def test_array_protocol():
    t = tensorlib.arange(3)
    a = np.asarray(t)
    assert a.dtype == np.int64 and a.ctypes.data == t.data_ptr()       # no copy
    f = np.asarray(t, dtype=np.float32)
    assert f.dtype == np.float32 and f.tolist() == [0.0, 1.0, 2.0]
    c = np.array(t)                                                     # np.array copies
    assert c.ctypes.data != t.data_ptr() and c.tolist() == [0, 1, 2]
    s = np.array(t, copy=False)                                         # possible: shares
    assert s.ctypes.data == t.data_ptr()
    assert t.__array__().ctypes.data == t.data_ptr()
    assert t.__array__(copy=True).ctypes.data != t.data_ptr()
    assert t.__array__(np.float64).dtype == np.float64
    assert t.__array__(np.int64, copy=False).ctypes.data == t.data_ptr()
    with pytest.raises(ValueError, match="copy"):
        t.__array__(np.float64, copy=False)
    assert np.add(t, 1).tolist() == [1, 2, 3]                         # NumPy funcs accept tensors
    with pytest.raises(TypeError):
        np.asarray(tensorlib.ones(2, dtype=tensorlib.bfloat16))


@pytest.mark.parametrize("name", NP_NAMES)
def test_asarray_matches_torch(torch, name):
    a = sample(name, (2, 3))
    tt, tl = torch.from_numpy(a.copy()), tensorlib.from_numpy(a.copy())
    x, y = np.asarray(tt.t()), np.asarray(tl.t())
    assert x.dtype == y.dtype and x.strides == y.strides and np.array_equal(x, y)


# ---------------------------------------------------------------------------------------------
# tensor(data)

@pytest.mark.parametrize("data, want", [
    ([1, 2, 3], "int64"), ([1.0, 2], "float32"), ([True, False], "bool"), ([True, 2], "int64"),
    ([True, 2.5], "float32"), (3, "int64"), (3.5, "float32"), (True, "bool"), ([], "float32"),
    ([[]], "float32"), (((1, 2), (3, 4)), "int64"), (range(4), "int64"),
    (np.float32(1.5), "float32"), (np.float64(1.5), "float64"), (np.int32(7), "int32"),
    (np.bool_(True), "bool"), (np.float16(1.5), "float16"), (np.uint8(200), "uint8"),
    ([np.float32(1.5), 2], "float32"), ([np.int8(1), np.int8(2)], "int8"), ([np.int8(1), 2], "int64"),
    ([np.int8(1), np.int16(2)], "int16"), ([np.uint8(1), np.int8(2)], "int16"),
    ([np.float16(1), 2], "float16"), ([np.float16(1), 2.5], "float32"),
    ([np.float32(1), np.float64(2.5)], "float64"),
    ([np.array([1, 2], dtype=np.int8), np.array([3, 4], dtype=np.int8)], "int8"),
    ("tensor-int32", "int32"), ("tensor-float16", "float16"), ("tensor-mixed", "float32"),
])
def test_tensor_dtype_inference(data, want):
    if isinstance(data, str):
        data = {"tensor-int32": [tensorlib.tensor(1, dtype=tensorlib.int32)],
                "tensor-float16": [tensorlib.tensor(1.5, dtype=tensorlib.float16), 5],
                "tensor-mixed": [tensorlib.tensor(1.5, dtype=tensorlib.bfloat16),
                                 tensorlib.tensor(1.5, dtype=tensorlib.float16)]}[data]
    assert tensorlib.tensor(data).dtype is D(want)


def test_tensor_dtype_inference_vs_torch(torch):
    cases = [[1, 2], [1.0, 2], [True, 2], [np.float64(1.5)], np.int32(7), [np.int8(1), np.int16(2)],
             [np.uint8(1), np.int8(2)], [np.float16(1), 2.5], [np.float16(1), 2], [[1, 2], [3, 4]],
             [], [[], []], np.float16(1.5), [np.array([1, 2], dtype=np.int8)]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # torch: lists of ndarrays are slow
        for data in cases:
            assert tname(torch.tensor(data).dtype) == tensorlib.tensor(data).dtype.name, data
    for d in ["int8", "int32", "float16", "bfloat16", "float64", "bool"]:
        a = torch.tensor([torch.tensor(1, dtype=getattr(torch, d)), 2])
        b = tensorlib.tensor([tensorlib.tensor(1, dtype=D(d)), 2])
        assert tname(a.dtype) == b.dtype.name, d


def test_tensor_follows_default_dtype():
    saved = tensorlib.get_default_dtype()
    try:
        tensorlib.set_default_dtype(tensorlib.float64)
        assert tensorlib.tensor([1.5]).dtype is tensorlib.float64
        assert tensorlib.tensor([]).dtype is tensorlib.float64
        assert tensorlib.tensor([np.float32(1.5)]).dtype is tensorlib.float32
    finally:
        tensorlib.set_default_dtype(saved)


@given(data=st.recursive(st.integers(-2 ** 40, 2 ** 40) | st.booleans() | st.floats(-1e30, 1e30),
                         lambda children: st.lists(children, min_size=1, max_size=3), max_leaves=20))
def test_tensor_from_nested_vs_numpy(data):
    try:
        want = np.array(data)
    except ValueError:
        want = None                                      # ragged for NumPy too
    if want is None or want.dtype == object:
        with pytest.raises((ValueError, TypeError)):
            tensorlib.tensor(data)
        return
    t = tensorlib.tensor(data)
    assert t.shape == want.shape
    assert t.stride() == tuple(s // want.itemsize for s in want.strides) if want.size else True
    expected = {"b": "bool", "i": "int64", "f": "float32"}[want.dtype.kind]
    assert t.dtype is D(expected)
    np.testing.assert_array_equal(t.numpy(), want.astype(t.numpy().dtype))


def test_tensor_values_and_copies():
    a = np.arange(6.0).reshape(2, 3)
    t = tensorlib.tensor(a)
    assert t.data_ptr() != a.ctypes.data and t.tolist() == a.tolist()     # always copies
    a[0, 0] = 9
    assert t[0, 0].item() == 0.0
    assert tensorlib.tensor(a.T).is_contiguous() and tensorlib.tensor(a.T).tolist() == a.T.tolist()
    assert tensorlib.tensor(np.array(5, dtype=np.int16)).dtype is tensorlib.int16
    assert tensorlib.tensor([[1, 2], [3, 4]], dtype=tensorlib.float64).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert tensorlib.tensor([1.7, -1.7], dtype=tensorlib.int64).tolist() == [1, -1]
    assert tensorlib.tensor([-1], dtype=tensorlib.uint8).tolist() == [255]
    assert tensorlib.tensor([2 ** 63], dtype=tensorlib.float64).tolist() == [2.0 ** 63]
    assert tensorlib.tensor([2 ** 70], dtype=tensorlib.float32).item() == float(2 ** 70)
    assert tensorlib.tensor([0.5, 0.0, float("nan")], dtype=tensorlib.bool).tolist() == [True, False, True]
    assert tensorlib.tensor([1e300], dtype=tensorlib.float16).tolist() == [math.inf]
    assert tensorlib.tensor([[tensorlib.tensor(1.5)]]).tolist() == [[1.5]]
    assert tensorlib.tensor([tensorlib.tensor([1, 2]), tensorlib.tensor([3, 4])]).tolist() == [[1, 2], [3, 4]]
    src = tensorlib.tensor([1, 2], dtype=tensorlib.int8)
    with pytest.warns(UserWarning, match="copy construct"):
        c = tensorlib.tensor(src, dtype=tensorlib.float64)
    assert c.tolist() == [1.0, 2.0] and c.data_ptr() != src.data_ptr()


def test_tensor_ragged_raises_value_error():
    with pytest.raises(ValueError, match=r"expected sequence of length 1 at dim 1 \(got 2\)"):
        tensorlib.tensor([[1], [2, 3]])
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at dim 1 \(got 1\)"):
        tensorlib.tensor([[1, 2], [3]])
    with pytest.raises(ValueError, match=r"at dim 2 \(got 2\)"):
        tensorlib.tensor([[[1]], [[1, 2]]])
    with pytest.raises(ValueError, match=r"at dim 1 \(got 0\)"):
        tensorlib.tensor([[1], []])


def test_tensor_ragged_message_matches_torch(torch):
    for data in ([[1], [2, 3]], [[1, 2], [3]], [[[1]], [[1, 2]]], [[1], []]):
        with pytest.raises(ValueError) as et:
            torch.tensor(data)
        with pytest.raises(ValueError) as el:
            tensorlib.tensor(data)
        assert str(et.value) == str(el.value)


def test_tensor_depth_mismatch_raises_type_error():
    # a number where a sequence belongs, or the reverse (PyTorch raises TypeError too); these
    # once produced garbage instead of an error
    for data in ([[1, 2], 3], [1, [2, 3]], [[1, 2], [3, [4]]], [[1, 2], [3, (4, 5)]]):
        with pytest.raises(TypeError, match="rectangular"):
            tensorlib.tensor(data)


def test_tensor_bad_leaves():
    for bad in ("abc", ["a"], b"x", [1, "a"]):
        with pytest.raises(TypeError):
            tensorlib.tensor(bad)
    for bad in (None, [None], {1: 2}, {1, 2}, object(), [object()], tensorlib.float32):
        with pytest.raises(RuntimeError, match="Could not infer dtype"):
            tensorlib.tensor(bad)
    with pytest.raises(TypeError, match="complex"):
        tensorlib.tensor(1 + 2j)
    with pytest.raises(TypeError):
        tensorlib.tensor([np.uint16(3)])


def test_tensor_bad_leaves_like_torch(torch):
    for bad in (None, [None], {1: 2}, {1, 2}, object(), "abc", [1, "a"]):
        et, el = same_error(lambda: torch.tensor(bad), lambda: tensorlib.tensor(bad))
        assert et is el, bad


# PyTorch names the dtype by its C++ type in the overflow message
C_NAME = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
          "int64": "int64_t"}


def test_tensor_integer_overflow():
    # beyond int64: PyTorch's ValueError
    for data in (2 ** 63, [2 ** 63], -(2 ** 63) - 1, [1, 2 ** 64], [[2 ** 70]]):
        with pytest.raises(ValueError, match="Overflow when unpacking long"):
            tensorlib.tensor(data)
    # not representable in the requested integer dtype: PyTorch's RuntimeError
    for data, name in ((300, "uint8"), ([300], "uint8"), ([-256], "uint8"), ([128], "int8"),
                       ([-129], "int8"), ([2 ** 31], "int32"), ([2 ** 15], "int16"),
                       ([float("nan")], "int64"), ([float("inf")], "int32"), ([1e10], "int32"),
                       ([1e10], "int8"), ([127.9], "int8"), ([-0.9], "uint8"), ([9.3e18], "int64")):
        with pytest.raises(RuntimeError, match=f"value cannot be converted to type {C_NAME[name]} without overflow"):
            tensorlib.tensor(data, dtype=D(name))


OVERFLOW_CASES = [(2 ** 63, None), ([2 ** 63], None), ([2 ** 63], "int8"), ([2 ** 63], "float64"),
                  ([300], "uint8"), ([-1], "uint8"), ([-255], "uint8"), ([-256], "uint8"),
                  ([255], "int8"), ([float("nan")], "int64"), ([2.0 ** 63], "int64"),
                  ([-(2.0 ** 63)], "int64"), ([9.3e18], "int64"), ([127.9], "int8"),
                  ([-1.5], "uint8"), ([2.5], "int64"), ([1e5], "float16"), ([1e39], "float32"),
                  ([np.int64(300)], "uint8"), ([2], "bool"), ([2 ** 63], "bool")]


@pytest.mark.parametrize("data, name", OVERFLOW_CASES, ids=str)
def test_tensor_overflow_vs_torch(torch, data, name):
    kt = {} if name is None else {"dtype": getattr(torch, name)}
    kl = {} if name is None else {"dtype": D(name)}
    try:
        want = torch.tensor(data, **kt)
    except Exception as e:     # noqa: BLE001
        with pytest.raises(type(e)):
            tensorlib.tensor(data, **kl)
        return
    got = tensorlib.tensor(data, **kl)
    assert tname(want.dtype) == got.dtype.name and want.tolist() == got.tolist()


# ---------------------------------------------------------------------------------------------
# Python scalars: tolist, item, int, float, bool, index, len, iteration

def scalar_cases(lib):
    return [lib.tensor([[1, 2], [3, 4]]), lib.tensor([[1.5, 2], [3, 4]]), lib.tensor([True, False]),
            lib.tensor(3), lib.tensor(3.5), lib.tensor([0.1], dtype=lib.float16),
            lib.tensor([0.1], dtype=lib.bfloat16), lib.tensor([0.1]), lib.tensor([200], dtype=lib.uint8),
            lib.tensor([-1], dtype=lib.int8), lib.tensor([-5], dtype=lib.int16),
            lib.tensor([7], dtype=lib.int32), lib.zeros(2, 0), lib.zeros(0, 2), lib.tensor([[5]]),
            lib.arange(6).view(2, 3).t(), lib.tensor(float("nan")), lib.tensor([float("-inf")])]


def describe(x):
    if isinstance(x, (float, complex)) and x != x:
        return (type(x).__name__, repr(x))
    if isinstance(x, list):
        return [describe(v) for v in x]
    return (type(x).__name__, x)


def test_scalar_conversions_vs_torch(torch):
    convs = {"tolist": lambda t: t.tolist(), "item": lambda t: t.item(), "int": int, "float": float,
             "bool": bool, "index": lambda t: t.__index__(), "len": len,
             "iter": lambda t: [x.tolist() for x in t], "complex": complex,
             "format": lambda t: format(t, ".3f") if t.dim() == 0 else None}
    for a, b in zip(scalar_cases(torch), scalar_cases(tensorlib)):
        for name, fn in convs.items():
            try:
                want = ("ok", describe(fn(a)))
            except Exception as e:     # noqa: BLE001
                want = ("raises", type(e))
            try:
                got = ("ok", describe(fn(b)))
            except Exception as e:     # noqa: BLE001
                got = ("raises", type(e))
            assert got == want, (name, a)


def test_scalar_conversions_by_hand():
    assert tensorlib.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert type(tensorlib.tensor([1]).tolist()[0]) is int
    assert type(tensorlib.tensor([1.0]).tolist()[0]) is float
    assert type(tensorlib.tensor([True]).tolist()[0]) is bool
    assert tensorlib.tensor(3).tolist() == 3
    assert tensorlib.tensor([0.1], dtype=tensorlib.float16).item() == float(np.float16(0.1))
    assert tensorlib.tensor([0.1], dtype=tensorlib.bfloat16).item() == 0.10009765625
    assert tensorlib.tensor([[5]]).item() == 5
    with pytest.raises(RuntimeError, match="2 elements"):
        tensorlib.tensor([5, 6]).item()
    with pytest.raises(RuntimeError):
        tensorlib.tensor([]).item()
    assert int(tensorlib.tensor(-3.7)) == -3 and float(tensorlib.tensor([3])) == 3.0
    with pytest.raises(ValueError):
        int(tensorlib.tensor([3, 4]))
    assert bool(tensorlib.tensor([0.5])) and not bool(tensorlib.tensor(0))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(tensorlib.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(tensorlib.tensor([]))
    assert [10, 20, 30][tensorlib.tensor(1)] == 20
    assert range(10)[tensorlib.tensor([2])] == 2
    with pytest.raises(TypeError):
        [10, 20][tensorlib.tensor(1.0)]
    assert hex(tensorlib.tensor(10)) == "0xa"
    assert len(tensorlib.zeros(3, 2)) == 3 and len(tensorlib.zeros(0)) == 0
    with pytest.raises(TypeError):
        len(tensorlib.tensor(5))
    with pytest.raises(TypeError):
        iter(tensorlib.tensor(5))
    rows = list(tensorlib.arange(6).view(2, 3))
    assert [r.tolist() for r in rows] == [[0, 1, 2], [3, 4, 5]]
    base = tensorlib.arange(6).view(2, 3)
    r0, r1 = list(base)
    assert r1.untyped_storage() is base.untyped_storage() and r1.storage_offset() == 3
    assert f"{tensorlib.tensor(2.5):.2f}" == "2.50"


@given(name=st.sampled_from(NAMES), shape=st.lists(st.integers(0, 3), max_size=3).map(tuple))
def test_tolist_vs_numpy(name, shape):
    a = sample("float32" if name == "bfloat16" else name, shape)
    t = tensorlib.tensor(a).to(D(name))
    want = a.tolist() if name != "bfloat16" else a.astype(np.float32).tolist()
    assert t.tolist() == want
    if t.numel() == 1:
        assert t.item() == np.asarray(want).reshape(()).item()


# ---------------------------------------------------------------------------------------------
# pickling

@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("make", [lambda d: tensorlib.arange(6).view(2, 3).to(d),
                                  lambda d: tensorlib.arange(6).view(2, 3).to(d).t(),
                                  lambda d: tensorlib.tensor(2, dtype=d),
                                  lambda d: tensorlib.zeros(0, 3, dtype=d),
                                  lambda d: tensorlib.arange(12).to(d)[::3]],
                         ids=["plain", "transposed", "0d", "empty", "strided"])
def test_pickle_round_trip(name, make):
    t = make(D(name))
    u = pickle.loads(pickle.dumps(t))
    assert u.dtype is t.dtype and u.shape == t.shape
    assert u.tolist() == t.tolist()
    assert u.data_ptr() != t.data_ptr() or t.numel() == 0
    if t.is_contiguous() or t.stride() == (1, 3):
        assert u.stride() == t.stride()          # dense layouts (a transpose) are kept


def test_pickle_requires_grad_and_objects():
    t = tensorlib.tensor([1.5, 2.0], requires_grad=True)
    u = pickle.loads(pickle.dumps(t))
    assert u.requires_grad and u.is_leaf and u.tolist() == [1.5, 2.0]
    for obj in (tensorlib.float16, tensorlib.bfloat16, tensorlib.device("cpu"), tensorlib.Size([2, 3])):
        assert pickle.loads(pickle.dumps(obj)) == obj
    assert pickle.loads(pickle.dumps(tensorlib.float16)) is tensorlib.float16


def test_pickle_strides_match_torch(torch):
    a = pickle.loads(pickle.dumps(torch.arange(6.0).view(2, 3).t()))
    b = pickle.loads(pickle.dumps(tensorlib.arange(6.0).view(2, 3).t()))
    assert a.stride() == b.stride()


# ---------------------------------------------------------------------------------------------
# .to() / .type() / type_as / shortcuts

def test_to_overloads():
    t = tensorlib.ones(2)
    assert t.to(tensorlib.int8).dtype is tensorlib.int8
    assert t.to("cpu") is t and t.to(tensorlib.device("cpu")) is t and t.to(None) is t
    assert t.to() is t and t.to(dtype=None) is t
    assert t.to("cpu", tensorlib.int8).dtype is tensorlib.int8
    assert t.to(tensorlib.device("cpu"), tensorlib.int8, False, True).dtype is tensorlib.int8
    assert t.to(tensorlib.int8, False, True).dtype is tensorlib.int8
    assert t.to(tensorlib.ones(1, dtype=tensorlib.int16)).dtype is tensorlib.int16
    assert t.to(tensorlib.ones(1, dtype=tensorlib.int16), True, True).dtype is tensorlib.int16
    assert t.to(dtype=tensorlib.int16, device="cpu", copy=True).dtype is tensorlib.int16
    assert t.to("cpu", non_blocking=True) is t
    assert t.to(tensorlib.float32) is t                      # nothing to do: self
    c = t.to(tensorlib.float32, copy=True)
    assert c is not t and c.data_ptr() != t.data_ptr()
    assert t.to(tensorlib.ones(3), copy=True) is not t
    assert t.to(float).dtype is tensorlib.float64 and t.to(int).dtype is tensorlib.int64
    assert t.to(bool).dtype is tensorlib.bool
    assert t.to(tensorlib.float64, memory_format=tensorlib.contiguous_format).dtype is tensorlib.float64
    nc = tensorlib.arange(6.0).view(2, 3).t()
    assert nc.to(tensorlib.float64).stride() == (1, 3)       # preserve_format


def test_to_errors():
    t = tensorlib.ones(2)
    with pytest.raises(TypeError):
        t.to(tensorlib.int8, tensorlib.int8)
    with pytest.raises(TypeError):
        t.to(tensorlib.float64, "cpu")
    with pytest.raises(TypeError):
        t.to(foo=1)
    with pytest.raises(RuntimeError):
        t.to("foo")
    with pytest.raises(RuntimeError):
        t.to("cuda:9")
    with pytest.raises(RuntimeError):
        t.to(5)


def test_to_vs_torch(torch):
    calls = [lambda L, t: t.to(L.int8), lambda L, t: t.to("cpu", L.int8),
             lambda L, t: t.to(L.int8, False, True), lambda L, t: t.to(L.ones(1, dtype=L.int16)),
             lambda L, t: t.to(float), lambda L, t: t.to(), lambda L, t: t.to(L.int8, L.int8),
             lambda L, t: t.to(foo=1), lambda L, t: t.to("foo"), lambda L, t: t.to(5),
             lambda L, t: t.to(L.float64, "cpu")]
    for call in calls:
        def run(L):
            try:
                r = call(L, L.ones(2))
                return ("ok", tname(r.dtype), r.tolist())
            except Exception as e:     # noqa: BLE001
                return ("raises", type(e))
        assert run(torch) == run(tensorlib)


@pytest.mark.parametrize("method, name", [("float", "float32"), ("double", "float64"), ("half", "float16"),
                                          ("bfloat16", "bfloat16"), ("long", "int64"), ("int", "int32"),
                                          ("short", "int16"), ("char", "int8"), ("byte", "uint8"),
                                          ("bool", "bool")])
def test_shortcut_conversions(method, name):
    src = tensorlib.tensor([1.5, -2.0, 0.0])
    out = getattr(src, method)()
    assert out.dtype is D(name)
    want = np.array([1.5, -2.0, 0.0], dtype=np.float32)
    if name != "bfloat16":
        np.testing.assert_array_equal(out.numpy(), want.astype(name))
    same = src.to(D(name))
    assert getattr(same, method)() is same                   # already that dtype: self
    assert src.cpu() is src


LEGACY_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                "bfloat16": "BFloat16Tensor", "uint8": "ByteTensor", "int8": "CharTensor",
                "int16": "ShortTensor", "int32": "IntTensor", "int64": "LongTensor", "bool": "BoolTensor"}


@pytest.mark.parametrize("name", NAMES)
def test_type_and_type_as(name):
    t = tensorlib.ones(2, dtype=D(name))
    assert t.type() == "tensorlib." + LEGACY_NAMES[name]
    x = tensorlib.ones(2)
    assert x.type(D(name)).dtype is D(name)
    assert x.type("torch." + LEGACY_NAMES[name]).dtype is D(name)
    assert x.type(getattr(tensorlib, LEGACY_NAMES[name])).dtype is D(name)
    assert x.type(D(name), True).dtype is D(name)
    assert x.type(dtype=D(name), non_blocking=True).dtype is D(name)
    assert x.type_as(t).dtype is D(name)
    assert t.type_as(t) is t and t.type(D(name)) is t


def test_type_errors():
    x = tensorlib.ones(2)
    with pytest.raises(ValueError, match="invalid type"):
        x.type("torch.Foo")
    with pytest.raises(TypeError):
        x.type(5)
    with pytest.raises(TypeError, match="must be Tensor"):
        x.type_as(5)


def test_type_vs_torch(torch):
    for name in NAMES:
        a, b = torch.ones(2, dtype=getattr(torch, name)), tensorlib.ones(2, dtype=D(name))
        assert a.type().split(".")[-1] == b.type().split(".")[-1]
    for spec in ("torch.Foo", 5):
        et, el = same_error(lambda: torch.ones(2).type(spec), lambda: tensorlib.ones(2).type(spec))
        assert et is el
