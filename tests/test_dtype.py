"""dtypes: objects and aliases, PyTorch's promotion / result_type / can_cast, finfo/iinfo, the
default dtype, and the copy/cast table (every (source, destination) pair) against NumPy, with
float16/bfloat16 rounding and float -> int edge cases against PyTorch where NumPy differs."""
import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib
from divergences import F64_TO_F16_ROUNDS_THROUGH_F32

# NumPy's own casts of NaN/inf (the references) warn; the values are what is compared
pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in cast:RuntimeWarning")

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64",
         "float16", "bfloat16", "float32", "float64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
NUMPY_NAMES = [n for n in NAMES if n != "bfloat16"]


def D(name):
    return getattr(tensorlib, name)


def T(torch, name):
    return getattr(torch, name)


def tname(torch_dtype):
    return str(torch_dtype).split(".")[-1]


@pytest.fixture
def default_dtype():
    """Restore the default dtype whatever the test does to it."""
    saved = tensorlib.get_default_dtype()
    yield
    tensorlib.set_default_dtype(saved)


# ---------------------------------------------------------------------------------------------
# dtype objects

ITEMSIZE = {"bool": 1, "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8,
            "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}


@pytest.mark.parametrize("name", NAMES)
def test_dtype_attributes(name):
    d = D(name)
    assert isinstance(d, tensorlib.dtype)
    assert repr(d) == "tensorlib." + name
    assert d.itemsize == ITEMSIZE[name]
    assert d.is_floating_point == (name in FLOATS)
    assert d.is_signed == (name not in ("bool", "uint8"))
    assert d.is_complex is False
    assert pickle.loads(pickle.dumps(d)) is d
    t = tensorlib.zeros(2, dtype=d)
    assert t.dtype is d and t.element_size() == ITEMSIZE[name]
    assert t.is_floating_point() == (name in FLOATS)


@pytest.mark.parametrize("name", NAMES)
def test_dtype_attributes_match_torch(torch, name):
    d, td = D(name), T(torch, name)
    assert d.itemsize == td.itemsize
    assert d.is_floating_point == td.is_floating_point
    assert d.is_signed == td.is_signed


def test_aliases():
    assert tensorlib.float is tensorlib.float32
    assert tensorlib.double is tensorlib.float64
    assert tensorlib.half is tensorlib.float16
    assert tensorlib.long is tensorlib.int64
    assert tensorlib.int is tensorlib.int32
    assert tensorlib.short is tensorlib.int16
    assert tensorlib.bool.itemsize == 1


def test_dtype_cannot_be_constructed():
    with pytest.raises(TypeError):
        tensorlib.dtype()


def test_python_types_as_dtype(default_dtype):
    # PyTorch: dtype=float is double whatever the default, int is int64, bool is bool
    tensorlib.set_default_dtype(tensorlib.float16)
    assert tensorlib.zeros(1, dtype=float).dtype is tensorlib.float64
    assert tensorlib.zeros(1, dtype=int).dtype is tensorlib.int64
    assert tensorlib.zeros(1, dtype=bool).dtype is tensorlib.bool
    assert tensorlib.ones(2).to(float).dtype is tensorlib.float64


def test_python_types_as_dtype_match_torch(torch):
    for py in (float, int, bool):
        assert tname(torch.zeros(1, dtype=py).dtype) == tensorlib.zeros(1, dtype=py).dtype.name


def test_bad_dtype_argument():
    with pytest.raises(TypeError, match="dtype"):
        tensorlib.zeros(2, dtype=5)
    with pytest.raises(TypeError):
        tensorlib.promote_types(tensorlib.float32, "not a dtype")


# ---------------------------------------------------------------------------------------------
# promotion

def test_promote_types_all_pairs_vs_torch(torch):
    bad = []
    for a in NAMES:
        for b in NAMES:
            got = tensorlib.promote_types(D(a), D(b))
            want = tname(torch.promote_types(T(torch, a), T(torch, b)))
            if got.name != want:
                bad.append((a, b, got.name, want))
    assert bad == []


# hand-checked corners of the lattice (also run without torch)
@pytest.mark.parametrize("a, b, want", [
    ("uint8", "int8", "int16"), ("uint8", "int16", "int16"), ("bool", "uint8", "uint8"),
    ("bool", "float16", "float16"), ("float16", "bfloat16", "float32"),
    ("bfloat16", "int64", "bfloat16"), ("int64", "float16", "float16"),
    ("int32", "int64", "int64"), ("float32", "float64", "float64"), ("bool", "bool", "bool"),
])
def test_promote_types_lattice(a, b, want):
    assert tensorlib.promote_types(D(a), D(b)) is D(want)
    assert tensorlib.promote_types(D(b), D(a)) is D(want)


def test_promote_types_is_symmetric_and_idempotent():
    for a in NAMES:
        assert tensorlib.promote_types(D(a), D(a)) is D(a)
        for b in NAMES:
            assert tensorlib.promote_types(D(a), D(b)) is tensorlib.promote_types(D(b), D(a))


def _operand(lib, name, kind):
    if kind == "0d":
        return lib.zeros((), dtype=getattr(lib, name))
    if kind == "nd":
        return lib.zeros(2, dtype=getattr(lib, name))
    return {"pybool": True, "pyint": 3, "pyfloat": 2.5}[kind]


KINDS = ["0d", "nd", "pybool", "pyint", "pyfloat"]


def test_result_type_all_combinations_vs_torch(torch):
    bad = []
    for a in NAMES:
        for ka in ("0d", "nd"):
            for b in NAMES + [None]:
                for kb in (KINDS if b is not None else ["pybool", "pyint", "pyfloat"]):
                    if b is None and kb in ("0d", "nd"):
                        continue
                    if b is not None and kb not in ("0d", "nd"):
                        continue
                    for swap in (False, True):
                        x = (_operand(tensorlib, a, ka), _operand(tensorlib, b, kb))
                        y = (_operand(torch, a, ka), _operand(torch, b, kb))
                        if swap:
                            x, y = x[::-1], y[::-1]
                        got = tensorlib.result_type(*x).name
                        want = tname(torch.result_type(*y))
                        if got != want:
                            bad.append((a, ka, b, kb, swap, got, want))
    assert bad == []


@pytest.mark.parametrize("x, y, want", [
    # dimensioned tensors outrank 0-d tensors, which outrank Python scalars, within a category
    (("nd", "int8"), ("0d", "int64"), "int8"),
    (("nd", "int8"), ("0d", "float64"), "float64"),      # 0-d of a higher category: its own
    (("nd", "int8"), ("0d", "float16"), "float16"),
    (("nd", "bool"), ("0d", "int32"), "int32"),
    (("nd", "float16"), ("0d", "float64"), "float16"),
    (("nd", "int32"), 2.5, "float32"),
    (("nd", "uint8"), -1, "uint8"),
    (("nd", "bool"), 1, "int64"),
    (("nd", "bool"), True, "bool"),
    (("0d", "int16"), 1.0, "float32"),
    (("0d", "bfloat16"), 1.0, "bfloat16"),
    (("0d", "int8"), ("0d", "uint8"), "int16"),
])
def test_result_type_rules(x, y, want):
    def make(v):
        if isinstance(v, tuple):
            return _operand(tensorlib, v[1], v[0])
        return v
    assert tensorlib.result_type(make(x), make(y)) is D(want)
    assert tensorlib.result_type(make(y), make(x)) is D(want)


def test_result_type_python_scalars():
    assert tensorlib.result_type(1, 2) is tensorlib.int64
    assert tensorlib.result_type(1, 2.0) is tensorlib.float32
    assert tensorlib.result_type(True, False) is tensorlib.bool
    assert tensorlib.result_type(True, 2) is tensorlib.int64


def test_result_type_follows_default_dtype(default_dtype):
    tensorlib.set_default_dtype(tensorlib.float64)
    assert tensorlib.result_type(tensorlib.zeros(2, dtype=tensorlib.int32), 1.5) is tensorlib.float64
    # a float tensor keeps its dtype against a Python float
    assert tensorlib.result_type(tensorlib.zeros(2, dtype=tensorlib.float16), 1.5) is tensorlib.float16


def test_result_type_bad_operand():
    with pytest.raises(TypeError):
        tensorlib.result_type(tensorlib.zeros(1), "x")
    with pytest.raises(TypeError):
        tensorlib.result_type(None, tensorlib.zeros(1))


def test_can_cast_all_pairs_vs_torch(torch):
    bad = []
    for a in NAMES:
        for b in NAMES:
            got = tensorlib.can_cast(D(a), D(b))
            want = torch.can_cast(T(torch, a), T(torch, b))
            if got != want:
                bad.append((a, b, got, want))
    assert bad == []


def test_can_cast_rules():
    # same-kind: never floating -> integral, never non-bool -> bool
    for a in NAMES:
        for b in NAMES:
            want = not (a in FLOATS and b not in FLOATS) and not (a != "bool" and b == "bool")
            assert tensorlib.can_cast(D(a), D(b)) == want, (a, b)


# ---------------------------------------------------------------------------------------------
# finfo / iinfo

@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_finfo_vs_numpy(name):
    f, n = tensorlib.finfo(D(name)), np.finfo(np.dtype(name))
    assert f.bits == n.bits
    assert f.eps == float(n.eps)
    assert f.max == float(n.max)
    assert f.min == float(n.min)
    assert f.tiny == f.smallest_normal == float(n.smallest_normal)
    assert f.resolution == 10.0 ** -n.precision
    assert f.dtype == name


def test_finfo_bfloat16_by_hand():
    f = tensorlib.finfo(tensorlib.bfloat16)
    assert f.bits == 16
    assert f.eps == 2.0 ** -7
    assert f.max == (2 - 2.0 ** -7) * 2.0 ** 127
    assert f.min == -f.max
    assert f.tiny == 2.0 ** -126
    assert f.resolution == 0.01


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_vs_torch(torch, name):
    f, g = tensorlib.finfo(D(name)), torch.finfo(T(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(f, field) == getattr(g, field), field
    assert f.dtype == g.dtype


def test_finfo_default_follows_default_dtype(default_dtype):
    assert tensorlib.finfo().bits == 32
    tensorlib.set_default_dtype(tensorlib.float64)
    assert tensorlib.finfo().eps == np.finfo(np.float64).eps


@pytest.mark.parametrize("name", INTS)
def test_iinfo(name):
    i, n = tensorlib.iinfo(D(name)), np.iinfo(np.dtype(name))
    assert (i.bits, i.min, i.max, i.dtype) == (n.bits, n.min, n.max, name)
    assert isinstance(i.min, int) and isinstance(i.max, int)


@pytest.mark.parametrize("name", INTS)
def test_iinfo_vs_torch(torch, name):
    i, g = tensorlib.iinfo(D(name)), torch.iinfo(T(torch, name))
    assert (i.bits, i.min, i.max, i.dtype) == (g.bits, g.min, g.max, g.dtype)
    assert repr(i) == repr(g)


def test_finfo_iinfo_wrong_kind_raises():
    for name in INTS + ["bool"]:
        with pytest.raises(TypeError):
            tensorlib.finfo(D(name))
    for name in FLOATS + ["bool"]:
        with pytest.raises(TypeError):
            tensorlib.iinfo(D(name))


def test_finfo_iinfo_wrong_kind_raises_like_torch(torch):
    with pytest.raises(TypeError):
        torch.iinfo(torch.bool)
    with pytest.raises(TypeError):
        torch.finfo(torch.int32)


# ---------------------------------------------------------------------------------------------
# default dtype

def test_default_dtype_is_float32():
    assert tensorlib.get_default_dtype() is tensorlib.float32


@pytest.mark.parametrize("name", FLOATS)
def test_set_default_dtype(default_dtype, name):
    tensorlib.set_default_dtype(D(name))
    assert tensorlib.get_default_dtype() is D(name)
    assert tensorlib.tensor([1.5]).dtype is D(name)
    assert tensorlib.tensor(1.5).dtype is D(name)
    assert tensorlib.zeros(2).dtype is D(name)
    assert tensorlib.ones(2).dtype is D(name)
    assert tensorlib.empty(2).dtype is D(name)
    assert tensorlib.full((2,), 1.5).dtype is D(name)
    assert tensorlib.arange(2.0).dtype is D(name)
    assert tensorlib.linspace(0, 1, 3).dtype is D(name)
    assert tensorlib.eye(2).dtype is D(name)
    assert tensorlib.Tensor(2).dtype is D(name)
    # integers and bools do not follow it
    assert tensorlib.tensor([1]).dtype is tensorlib.int64
    assert tensorlib.arange(2).dtype is tensorlib.int64
    assert tensorlib.tensor([True]).dtype is tensorlib.bool


def test_set_default_dtype_rejects_non_float(default_dtype):
    for name in INTS + ["bool"]:
        with pytest.raises(TypeError):
            tensorlib.set_default_dtype(D(name))
    assert tensorlib.get_default_dtype() is tensorlib.float32


def test_set_default_dtype_rejects_non_float_like_torch(torch):
    saved = torch.get_default_dtype()
    try:
        with pytest.raises(TypeError):
            torch.set_default_dtype(torch.int32)
    finally:
        torch.set_default_dtype(saved)


# ---------------------------------------------------------------------------------------------
# the copy/cast table

def bf16_round(x32):
    """float32 -> bfloat16 bits, round to nearest even, NaN kept quiet (by hand)."""
    bits = np.ascontiguousarray(x32, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(x32)
    rounded[nan] = ((bits[nan] >> 16) | 0x40).astype(np.uint16)
    return rounded


def bf16_to_f32(bits16):
    return (np.asarray(bits16, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def bf16_tensor(values32):
    """A bfloat16 tensor holding the bf16 rounding of the float32 values."""
    return tensorlib.tensor(np.asarray(values32, dtype=np.float32)).to(tensorlib.bfloat16)


def bf16_bits(t):
    """The raw bits of a bfloat16 tensor (through an int16 reinterpretation)."""
    return t.view(tensorlib.int16).numpy().view(np.uint16)


def values_for(name):
    """Source values exactly representable in ``name``, in range for every destination when
    converted to an integer type (NumPy's out-of-range float->int casts are undefined)."""
    if name == "bool":
        return np.array([True, False, True])
    if name in INTS:
        info = np.iinfo(np.dtype(name))
        return np.array(sorted({0, 1, 2, 127, info.max, info.min, info.max // 3, -1 if info.min else 5,
                                100, 255 if info.max >= 255 else 7}), dtype=name)
    return np.array([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.5, 3.75, 100.0, -100.25, 126.5, 1e-3],
                    dtype=np.float32 if name == "bfloat16" else name)


def as_tensorlib(name, arr):
    if name == "bfloat16":
        return bf16_tensor(arr)
    return tensorlib.from_numpy(np.ascontiguousarray(arr))


def reference_values(name, arr):
    """The source values as NumPy would hold them (bfloat16 by hand, widened to float32)."""
    if name == "bfloat16":
        return bf16_to_f32(bf16_round(arr.astype(np.float32)))
    return arr


def reference_cast(values, dst):
    """NumPy's cast (bfloat16 by hand): returns comparable float64/int/bool values."""
    if dst == "bfloat16":
        return bf16_to_f32(bf16_round(values.astype(np.float32)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return values.astype(dst)


def result_values(t):
    if t.dtype is tensorlib.bfloat16:
        return bf16_to_f32(bf16_bits(t))
    return t.numpy()


def assert_same_values(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    if got.dtype.kind == "f" or want.dtype.kind == "f":
        g, w = got.astype(np.float64), want.astype(np.float64)
        assert np.array_equal(np.isnan(g), np.isnan(w))
        ok = ~np.isnan(g)
        assert np.array_equal(g[ok], w[ok])
        # signed zeros survive casts
        assert np.array_equal(np.signbit(g[ok]), np.signbit(w[ok]))
    else:
        assert np.array_equal(got, want)


@pytest.mark.parametrize("src", NAMES)
@pytest.mark.parametrize("dst", NAMES)
def test_cast_table_vs_numpy(src, dst):
    arr = values_for(src)
    t = as_tensorlib(src, arr)
    out = t.to(D(dst))
    assert out.dtype is D(dst)
    assert out.shape == t.shape and out.is_contiguous()
    assert_same_values(result_values(out), reference_cast(reference_values(src, arr), dst))
    if src != dst:
        assert out.data_ptr() != t.data_ptr()


@pytest.mark.parametrize("src", NAMES)
@pytest.mark.parametrize("dst", NAMES)
def test_cast_table_vs_torch(torch, src, dst):
    arr = values_for(src)
    t = as_tensorlib(src, arr)
    if src == "bfloat16":
        tt = torch.from_numpy(arr.astype(np.float32)).to(torch.bfloat16)
    else:
        tt = torch.from_numpy(np.ascontiguousarray(arr))
    got = result_values(t.to(D(dst)))
    want = tt.to(T(torch, dst))
    want = want.float().numpy() if dst == "bfloat16" else want.numpy()
    assert_same_values(got, want)


@given(data=st.data())
def test_cast_of_strided_tensors(data):
    """Casts read and write through arbitrary (permuted, sliced) layouts."""
    src = data.draw(st.sampled_from(NUMPY_NAMES))
    dst = data.draw(st.sampled_from(NAMES))
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    base = values_for(src)
    arr = np.resize(base, tuple(s * 2 for s in shape))
    t = tensorlib.from_numpy(arr)
    idx = tuple(slice(0, None, 2) for _ in shape)
    view = t[idx]
    perm = data.draw(st.permutations(range(len(shape))))
    view = view.permute(*perm)
    ref = arr[idx].transpose(perm)
    out = view.to(D(dst))
    assert out.shape == tuple(ref.shape)
    assert_same_values(result_values(out), reference_cast(ref, dst))


def test_cast_to_same_dtype_returns_self_and_copy_makes_new():
    t = tensorlib.arange(4)
    assert t.to(tensorlib.int64) is t
    c = t.to(tensorlib.int64, copy=True)
    assert c is not t and c.data_ptr() != t.data_ptr()
    assert c.tolist() == t.tolist()


def test_bool_copy_normalises_bytes():
    raw = np.array([0, 2, 255, 1], dtype=np.uint8)
    t = tensorlib.from_numpy(raw.view(np.bool_))
    c = t.clone()
    assert c.numpy().view(np.uint8).tolist() == [0, 1, 1, 1]
    assert t.to(tensorlib.int32).tolist() == [0, 1, 1, 1]
    assert t.to(tensorlib.float32).tolist() == [0.0, 1.0, 1.0, 1.0]


# -- float16: every bit pattern widens exactly; narrowing rounds to nearest even -------------

def test_float16_every_bit_pattern_widens_exactly():
    bits = np.arange(1 << 16, dtype=np.uint16)
    t = tensorlib.from_numpy(bits.view(np.float16))
    assert_same_values(t.to(tensorlib.float32).numpy(), bits.view(np.float16).astype(np.float32))
    assert_same_values(t.to(tensorlib.float64).numpy(), bits.view(np.float16).astype(np.float64))


def test_float16_narrowing_rounds_to_nearest_even():
    # every float16 value, the midpoints between neighbours (ties), and values just off them
    h = np.arange(0, 0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64)
    mids = (h[:-1] + h[1:]) / 2
    below = np.nextafter(mids.astype(np.float32), np.float32(0))
    above = np.nextafter(mids.astype(np.float32), np.float32(np.inf))
    x = np.concatenate([h, mids, below, above, [65504.0, 65519.99, 65520.0, 1e6, np.inf, np.nan,
                                                  2.0 ** -25, 2.0 ** -26, 3 * 2.0 ** -26]])
    x = np.concatenate([x, -x]).astype(np.float32)
    got = tensorlib.from_numpy(x).to(tensorlib.float16).numpy()
    assert_same_values(got, x.astype(np.float16))
    # ties really went to even: 1 + 2**-11 is halfway between 1 and 1 + 2**-10
    assert tensorlib.tensor([1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11]).half().tolist() == [1.0, 1 + 2.0 ** -9]


@given(st.lists(st.floats(width=32, allow_nan=True), min_size=1, max_size=50))
def test_float16_narrowing_random(values):
    x = np.array(values, dtype=np.float32)
    assert_same_values(tensorlib.from_numpy(x).half().numpy(), x.astype(np.float16))


def test_float64_to_float16_rounds_through_float32_like_torch(torch):
    # 1 + 2**-11 + 2**-40: float64 -> float16 directly rounds up; through float32 it is a tie
    # that goes to even. PyTorch (and so tensorlib) goes through float32; NumPy does not.
    x = np.array([1 + 2.0 ** -11 + 2.0 ** -40, 65519.99999], dtype=np.float64)
    got = tensorlib.from_numpy(x).half().numpy()
    assert_same_values(got, torch.from_numpy(x).half().numpy())
    assert F64_TO_F16_ROUNDS_THROUGH_F32
    assert not np.array_equal(got, x.astype(np.float16))    # the documented divergence
    assert_same_values(got, x.astype(np.float32).astype(np.float16))


# -- bfloat16 -------------------------------------------------------------------------------

def test_bfloat16_every_bit_pattern_widens_exactly():
    bits = np.arange(1 << 16, dtype=np.uint16)
    t = tensorlib.from_numpy(bits.view(np.int16)).view(tensorlib.bfloat16)
    want = bf16_to_f32(bits)
    assert_same_values(t.to(tensorlib.float32).numpy(), want)
    assert_same_values(t.to(tensorlib.float64).numpy(), want.astype(np.float64))


def test_bfloat16_narrowing_rounds_to_nearest_even():
    b = np.arange(0, 0x7F80, 7, dtype=np.uint16)
    lo, hi = bf16_to_f32(b[:-1]).astype(np.float64), bf16_to_f32(b[:-1] + 1).astype(np.float64)
    mids = ((lo + hi) / 2).astype(np.float32)                  # exact in float32
    x = np.concatenate([mids, np.nextafter(mids, np.float32(0)), np.nextafter(mids, np.float32(np.inf)),
                        np.array([np.inf, np.nan, 3.3895314e38, 3.4e38, 1e-45], np.float32)])
    x = np.concatenate([x, -x])
    t = tensorlib.from_numpy(x).to(tensorlib.bfloat16)
    assert np.array_equal(bf16_bits(t), bf16_round(x))
    # 1 + 2**-8 is halfway between 1 and 1 + 2**-7: ties to even
    assert tensorlib.tensor([1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8]).bfloat16().tolist() == [1.0, 1 + 2.0 ** -6]


@given(st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=50))
def test_bfloat16_narrowing_random(values):
    x = np.array(values, dtype=np.float32)
    assert np.array_equal(bf16_bits(tensorlib.from_numpy(x).bfloat16()), bf16_round(x))


def test_bfloat16_rounding_vs_torch(torch):
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 1 << 32, size=20000, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    x = x[~np.isnan(x)]
    got = bf16_bits(tensorlib.from_numpy(x).bfloat16())
    want = torch.from_numpy(x).bfloat16().view(torch.int16).numpy().view(np.uint16)
    assert np.array_equal(got, want)
    # and from float64 and the integer types
    d = rng.standard_normal(1000) * 10.0 ** rng.integers(-30, 30, 1000)
    got = tensorlib.from_numpy(d).bfloat16().float().numpy()
    assert_same_values(got, torch.from_numpy(d).bfloat16().float().numpy())
    i = rng.integers(-(1 << 62), 1 << 62, 1000)
    got = tensorlib.from_numpy(i).bfloat16().float().numpy()
    assert_same_values(got, torch.from_numpy(i).bfloat16().float().numpy())


# -- float -> integer: NaN, infinities and out-of-range values ----------------------------------

EDGE = [float("nan"), float("inf"), float("-inf"), 1e10, -1e10, 3e9, -3e9, 2.0 ** 31, -(2.0 ** 31),
        2.0 ** 31 - 0.5, 128.5, 127.9, -128.9, 255.9, 256.0, 300.7, -1.0, -0.9, -129.0, 65504.0,
        1e19, -1e19, 2.0 ** 63, -(2.0 ** 63), 9.2e18, 0.0, -0.0, 1.5, -1.5]


@pytest.mark.parametrize("src", FLOATS)
@pytest.mark.parametrize("dst", INTS + ["bool"])
def test_float_to_int_edge_cases_vs_torch(torch, src, dst):
    x = np.array(EDGE, dtype=np.float64)
    t = tensorlib.from_numpy(x).to(D(src))
    tt = torch.from_numpy(x).to(T(torch, src))
    assert_same_values(t.to(D(dst)).numpy(), tt.to(T(torch, dst)).numpy())


def test_float_to_int_edge_cases_defined():
    """Without torch: NaN and out-of-range values give the type's minimum (x86 semantics) for
    int32/int64; narrower types go through int32 and wrap; in-range values truncate."""
    x = tensorlib.tensor([float("nan"), float("inf"), -1e10, 1e10, 2.7, -2.7], dtype=tensorlib.float64)
    assert x.to(tensorlib.int64).tolist() == [-2 ** 63, -2 ** 63, -10 ** 10, 10 ** 10, 2, -2]
    assert x.to(tensorlib.int32).tolist() == [-2 ** 31] * 4 + [2, -2]
    assert x.to(tensorlib.int8).tolist() == [0, 0, 0, 0, 2, -2]
    assert tensorlib.tensor([300.0, -1.0]).to(tensorlib.uint8).tolist() == [44, 255]
    assert tensorlib.tensor([float("nan"), 0.0, -0.0, 0.1]).bool().tolist() == [True, False, False, True]


def test_int_to_float_rounding():
    # int64 -> float32 is one correctly rounded step (2**24 + 1 ties to even)
    i = np.array([2 ** 24 + 1, 2 ** 24 + 3, 2 ** 62 + 2 ** 38 + 1, -(2 ** 63)], dtype=np.int64)
    assert_same_values(tensorlib.from_numpy(i).float().numpy(), i.astype(np.float32))
    assert_same_values(tensorlib.from_numpy(i).double().numpy(), i.astype(np.float64))
    assert_same_values(tensorlib.from_numpy(i).half().numpy(), i.astype(np.float16))


def test_integer_narrowing_wraps():
    i = np.array([300, -1, 2 ** 40 + 5, -(2 ** 63), 2 ** 63 - 1], dtype=np.int64)
    for dst in ("uint8", "int8", "int16", "int32"):
        assert_same_values(tensorlib.from_numpy(i).to(D(dst)).numpy(), i.astype(dst))


@pytest.mark.parametrize("name", NAMES)
def test_item_roundtrip_extremes(name):
    """Extreme values survive a trip through tensor(..., dtype) and item()."""
    if name == "bool":
        vals = [True, False]
    elif name in INTS:
        info = np.iinfo(np.dtype(name))
        vals = [int(info.min), int(info.max), 0]
    else:
        f = tensorlib.finfo(D(name))
        vals = [f.max, -f.max, f.tiny, f.eps, math.inf, -math.inf]
    t = tensorlib.tensor(vals, dtype=D(name))
    assert [t[i].item() for i in range(len(vals))] == vals
