"""Tests for tensorlib._tensor_str: reprs must equal PyTorch's, character for character.

Tests marked with the ``torch`` fixture build the same tensor in PyTorch and
compare ``repr``; they are skipped when torch is not installed.  The first
block uses hand-written expected strings and needs no torch.
"""

import math
import re
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from tensorlib._tensor_str import get_printoptions, printoptions, set_printoptions, tensor_repr

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16",
          "int8", "uint8", "bool"]
FLOAT_DTYPES = ["float32", "float64", "float16", "bfloat16"]
INT_RANGES = {"int64": (-2**63, 2**63 - 1), "int32": (-2**31, 2**31 - 1),
              "int16": (-2**15, 2**15 - 1), "int8": (-128, 127), "uint8": (0, 255)}

SETTINGS = settings(max_examples=50, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


@pytest.fixture(autouse=True)
def restore_printoptions():
    """Leave tensorlib's (and torch's, when present) print options as found."""
    saved = get_printoptions()
    torch = _maybe_torch()
    if torch is not None:
        torch_saved = torch._tensor_str.get_printoptions()
        default_dtype = torch.get_default_dtype()
    yield
    set_printoptions(**saved)
    if torch is not None:
        torch.set_printoptions(**torch_saved)
        torch.set_default_dtype(default_dtype)


def _maybe_torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def set_both(torch, **options):
    """Apply the same print options to tensorlib and torch."""
    set_printoptions(**options)
    torch.set_printoptions(**options)


def check(torch, data, dtype_name, *, requires_grad=False, mul=False):
    """Assert tensor_repr matches torch's repr for ``data`` as ``dtype_name``.

    The values handed to tensor_repr are read back from the torch tensor, so
    both sides print exactly the same (already rounded) numbers.
    """
    tt = torch.tensor(np.asarray(data), dtype=getattr(torch, dtype_name),
                      requires_grad=requires_grad)
    grad_fn_name = None
    if mul:
        tt = tt * 1
        grad_fn_name = type(tt.grad_fn).__name__
    plain = tt.detach()
    values = plain.float().numpy() if dtype_name == "bfloat16" else plain.numpy()
    kwargs = dict(default_dtype_name=str(torch.get_default_dtype()).replace("torch.", ""),
                  requires_grad=tt.requires_grad and not mul, grad_fn_name=grad_fn_name)
    expected = repr(tt)
    # Exact comparison uses module="torch": "tensorlib." is 4 characters longer
    # than "torch.", which can legitimately move a suffix onto its own line.
    actual = tensor_repr(values, dtype_name, module="torch", **kwargs)
    assert actual == expected, f"\nexpected:\n{expected}\nactual:\n{actual}"
    # With our own module name the text must agree up to that line breaking.
    ours = tensor_repr(values, dtype_name, **kwargs)
    assert _unwrap(ours) == _unwrap(expected.replace("torch.", "tensorlib."))


def _unwrap(text):
    """Collapse line breaks and indentation after commas."""
    return re.sub(r",\s+", ", ", text)


# ---------------------------------------------------------------------------
# Hand-written expectations (no torch needed)
# ---------------------------------------------------------------------------

NAN, INF = math.nan, math.inf

HAND_WRITTEN = [
    (np.array(3.5), "float32", "tensor(3.5000)"),
    (np.array(-0.0), "float32", "tensor(-0.)"),
    (np.array([1.0, 2.0, 3.0]), "float32", "tensor([1., 2., 3.])"),
    (np.array([-0.0, 0.0]), "float32", "tensor([-0., 0.])"),
    (np.array([[1, -2], [30, 4]]), "int64", "tensor([[ 1, -2],\n        [30,  4]])"),
    (np.array([True, False]), "bool", "tensor([ True, False])"),
    (np.array([1e10, 1.0]), "float32", "tensor([1.0000e+10, 1.0000e+00])"),
    (np.array([NAN, -INF, 1.5]), "float32", "tensor([   nan,   -inf, 1.5000])"),
    (np.array([-0.0, 1.0, NAN, 100.0, INF]), "float32",
     "tensor([ -0.,   1.,  nan, 100.,  inf])"),
    (np.array([0.1, 0.25], dtype=np.float16), "float16",
     "tensor([0.1000, 0.2500], dtype=tensorlib.float16)"),
    (np.array([1.5, 2.0], dtype=np.float32), "bfloat16",
     "tensor([1.5000, 2.0000], dtype=tensorlib.bfloat16)"),
    (np.zeros((0, 3)), "float32", "tensor([], size=(0, 3))"),
    (np.zeros((0,), dtype=np.int32), "int32", "tensor([], dtype=tensorlib.int32)"),
    (np.zeros((0,), dtype=np.int64), "int64", "tensor([], dtype=tensorlib.int64)"),
    (np.array([1, 2], dtype=np.uint8), "uint8", "tensor([1, 2], dtype=tensorlib.uint8)"),
    (np.arange(1001), "int64", "tensor([   0,    1,    2,  ...,  998,  999, 1000])"),
    (np.arange(1.0, 9.0).reshape(2, 2, 2), "float32",
     "tensor([[[1., 2.],\n         [3., 4.]],\n\n        [[5., 6.],\n         [7., 8.]]])"),
    (np.arange(30) * 1.5, "float32",
     "tensor([ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n"
     "        12.0000, 13.5000, 15.0000, 16.5000, 18.0000, 19.5000, 21.0000, 22.5000,\n"
     "        24.0000, 25.5000, 27.0000, 28.5000, 30.0000, 31.5000, 33.0000, 34.5000,\n"
     "        36.0000, 37.5000, 39.0000, 40.5000, 42.0000, 43.5000])"),
]


@pytest.mark.parametrize("values, dtype_name, expected", HAND_WRITTEN)
def test_hand_written(values, dtype_name, expected):
    assert tensor_repr(values, dtype_name) == expected


def test_hand_written_suffixes():
    ones = np.ones((2, 3))
    assert tensor_repr(ones, "float32", requires_grad=True) == (
        "tensor([[1., 1., 1.],\n        [1., 1., 1.]], requires_grad=True)")
    # grad_fn wins over requires_grad, as in PyTorch.
    assert tensor_repr(np.ones(2), "float32", requires_grad=True,
                       grad_fn_name="MulBackward0") == "tensor([1., 1.], grad_fn=<MulBackward0>)"
    assert tensor_repr(np.array([1.0, 2.0]), "float32", device="cuda:0") == (
        "tensor([1., 2.], device='cuda:0')")
    assert tensor_repr(np.array([1.0, 2.0]), "float64", device="cuda:1", module="torch") == (
        "tensor([1., 2.], device='cuda:1', dtype=torch.float64)")
    assert tensor_repr(np.array([1.0]), "float32", prefix="Parameter(") == "Parameter([1.])"


def test_default_dtype_rule():
    # float32 is shown once float64 is the default; int64 and bool never are.
    assert tensor_repr(np.array([1.0]), "float64", default_dtype_name="float64") == "tensor([1.])"
    assert tensor_repr(np.array([1.0]), "float32", default_dtype_name="float64") == (
        "tensor([1.], dtype=tensorlib.float32)")
    assert tensor_repr(np.array([1]), "int64", default_dtype_name="float64") == "tensor([1])"
    assert tensor_repr(np.array([True]), "bool") == "tensor([True])"
    assert tensor_repr(np.zeros((0,), dtype=bool), "bool") == "tensor([], dtype=tensorlib.bool)"


def test_unknown_dtype_rejected():
    with pytest.raises(ValueError):
        tensor_repr(np.array([1.0]), "complex64")


def test_printoptions_api():
    assert get_printoptions() == {"precision": 4, "threshold": 1000, "edgeitems": 3,
                                  "linewidth": 80, "sci_mode": None}
    set_printoptions(profile="short", linewidth=100)
    assert get_printoptions() == {"precision": 2, "threshold": 1000, "edgeitems": 2,
                                  "linewidth": 100, "sci_mode": None}
    set_printoptions(sci_mode=True)
    assert get_printoptions()["sci_mode"] is True
    set_printoptions(precision=3)  # like PyTorch, an omitted sci_mode resets it
    assert get_printoptions()["sci_mode"] is None
    set_printoptions(profile="full")
    assert get_printoptions()["threshold"] == math.inf
    set_printoptions(profile="default")
    with printoptions(precision=1, threshold=5):
        assert tensor_repr(np.arange(10.0) / 4, "float32") == (
            "tensor([0.0, 0.2, 0.5,  ..., 1.8, 2.0, 2.2])")
    assert get_printoptions()["precision"] == 4


def test_edgeitems_zero_hand_written():
    set_printoptions(threshold=3, edgeitems=0)
    assert tensor_repr(np.arange(8).reshape(2, 4), "int64") == "tensor([...], size=(2, 4))"


# ---------------------------------------------------------------------------
# Hand-picked cases compared against torch
# ---------------------------------------------------------------------------

def _sample_values(dtype_name, shape, rng):
    """Deterministic varied values for ``dtype_name`` with the given shape."""
    if dtype_name == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype_name in INT_RANGES:
        low, high = INT_RANGES[dtype_name]
        return rng.integers(max(low, -1000), min(high, 1000), size=shape, endpoint=True)
    return rng.standard_normal(size=shape) * 10


SHAPES = [(), (1,), (5,), (2, 3), (3, 1, 2), (2, 2, 2, 2), (0,), (0, 3), (2, 0, 4), (1, 0)]


@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_shapes_per_dtype(torch, dtype_name, shape):
    rng = np.random.default_rng(zlib.crc32(repr((dtype_name, shape)).encode()))
    check(torch, _sample_values(dtype_name, shape, rng), dtype_name)


@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("shape", [(1001,), (40, 30), (5, 300), (11, 12, 13), (4, 5, 6, 9),
                                   (2000, 1), (7, 7, 7, 7)], ids=str)
def test_summarized(torch, dtype_name, shape):
    rng = np.random.default_rng(7)
    check(torch, _sample_values(dtype_name, shape, rng), dtype_name)


FLOAT_CASES = {
    "integer_valued": [1.0, -2.0, 300.0, 0.0],
    "negative": [-1.5, -0.25, -100.125],
    "huge": [1e10, 2.5e12, -3e9],
    "tiny": [1e-5, 2e-6, -3e-7],
    "wide_range": [1e-3, 5.0, 1234.5],
    "just_over_1e8": [1.5e8, 1.0],
    "nan_inf_mixed": [NAN, INF, -INF, 1.25, 0.0],
    "only_nonfinite": [NAN, INF, -INF],
    "only_zeros": [0.0, -0.0, 0.0],
    "zeros_and_nan": [0.0, NAN],
    "int_with_nan": [1.0, NAN, 1000.0],
    "huge_integers": [1e20, 3e20, 0.0],
    "rounding_carry": [9.99996, 0.5],
    "neg_zero_int": [-0.0, 5.0, -12.0],
}


@pytest.mark.parametrize("dtype_name", FLOAT_DTYPES)
@pytest.mark.parametrize("case", sorted(FLOAT_CASES))
def test_float_styles(torch, dtype_name, case):
    values = np.array(FLOAT_CASES[case])
    check(torch, values, dtype_name)
    check(torch, values.reshape(1, -1).repeat(3, axis=0), dtype_name)
    check(torch, np.array(values[0]), dtype_name)


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_wide_rows_wrap(torch, dtype_name):
    rng = np.random.default_rng(3)
    for shape in [(100,), (3, 40), (2, 2, 33)]:
        check(torch, _sample_values(dtype_name, shape, rng), dtype_name)
    if dtype_name in FLOAT_DTYPES:
        check(torch, rng.standard_normal(60) * 1e6, dtype_name)


@pytest.mark.parametrize("dtype_name", ["float32", "float64", "float16", "bfloat16"])
def test_grad_suffixes(torch, dtype_name):
    rng = np.random.default_rng(5)
    for shape in [(), (3,), (2, 3), (70,), (4, 16), (2000,)]:
        values = rng.standard_normal(shape)
        check(torch, values, dtype_name, requires_grad=True)
        check(torch, values, dtype_name, requires_grad=True, mul=True)


def test_suffix_wrapping(torch):
    # Rows that end close to linewidth push the suffix onto its own line.
    for n in range(1, 12):
        check(torch, np.arange(n) + 0.5, "float64", requires_grad=True, mul=True)
        check(torch, np.arange(n * 7).reshape(n, 7) * 1000.5, "float16")


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_default_dtype_float64(torch, dtype_name):
    torch.set_default_dtype(torch.float64)
    rng = np.random.default_rng(11)
    check(torch, _sample_values(dtype_name, (2, 3), rng), dtype_name)
    check(torch, _sample_values(dtype_name, (0, 2), rng), dtype_name)


@pytest.mark.parametrize("options", [
    {"precision": 2}, {"precision": 0}, {"precision": 8}, {"threshold": 5},
    {"edgeitems": 1, "threshold": 10}, {"edgeitems": 0, "threshold": 10},
    {"linewidth": 40}, {"linewidth": 1}, {"sci_mode": True}, {"sci_mode": False},
    {"profile": "short"}, {"profile": "full"}, {"profile": "short", "precision": 6},
], ids=str)
@pytest.mark.parametrize("dtype_name", ["float32", "float16", "int64", "bool"])
def test_printoptions_against_torch(torch, options, dtype_name):
    set_both(torch, **options)
    rng = np.random.default_rng(13)
    for shape in [(), (4,), (30,), (3, 8), (12, 12), (2, 3, 20), (1200,)]:
        check(torch, _sample_values(dtype_name, shape, rng), dtype_name)
    if dtype_name == "float32":
        for values in FLOAT_CASES.values():
            check(torch, np.array(values), dtype_name)


# ---------------------------------------------------------------------------
# Property-based comparison against torch
# ---------------------------------------------------------------------------

def _float_elements(dtype_name):
    """Float values spread over many magnitudes, with specials, for ``dtype_name``."""
    width = {"float16": 16, "bfloat16": 32, "float32": 32, "float64": 64}[dtype_name]
    bound = {"float16": 6e4, "bfloat16": 1e38, "float32": 1e38, "float64": 1e300}[dtype_name]
    return st.one_of(
        st.floats(width=width, allow_nan=True, allow_infinity=True),
        st.floats(-bound, bound),
        st.floats(-1000, 1000),
        st.integers(-10000, 10000).map(float),
        st.sampled_from([0.0, -0.0, 1e-5, 1e8, 1.5e8, NAN, INF, -INF]),
    )


def _elements(dtype_name):
    if dtype_name == "bool":
        return st.booleans()
    if dtype_name in INT_RANGES:
        low, high = INT_RANGES[dtype_name]
        return st.one_of(st.integers(low, high), st.integers(max(low, -20), min(high, 20)))
    return _float_elements(dtype_name)


def _numpy_dtype(dtype_name):
    # Floats are drawn as float64 and rounded by torch.tensor(); check() reads
    # the rounded values back, so both sides see the same numbers.
    if dtype_name == "bool":
        return np.bool_
    return np.float64 if dtype_name in FLOAT_DTYPES else np.int64


@st.composite
def arrays(draw, dtype_name, max_dims=4, max_side=6):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0,
                                  max_side=max_side))
    return draw(hnp.arrays(_numpy_dtype(dtype_name), shape, elements=_elements(dtype_name)))


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_random_arrays(torch, dtype_name):
    @SETTINGS
    @given(data=arrays(dtype_name))
    def run(data):
        check(torch, data, dtype_name)

    run()


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_random_long_rows(torch, dtype_name):
    @SETTINGS
    @given(data=arrays(dtype_name, max_dims=2, max_side=40))
    def run(data):
        check(torch, data, dtype_name)

    run()


@pytest.mark.parametrize("dtype_name", DTYPES)
def test_random_large_summarized(torch, dtype_name):
    # Large arrays come from a seeded NumPy generator: drawing thousands of
    # elements through hypothesis would be slow.
    @SETTINGS
    @given(shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=40),
           seed=st.integers(0, 2**32 - 1),
           scale=st.sampled_from([1.0, 1e-6, 1e9, 0.0]))
    def run(shape, seed, scale):
        assume(int(np.prod(shape)) > 1000)
        rng = np.random.default_rng(seed)
        values = _sample_values(dtype_name, shape, rng)
        if dtype_name in FLOAT_DTYPES:
            values = values * scale
        check(torch, values, dtype_name)

    run()


@pytest.mark.parametrize("dtype_name", ["float32", "float64", "float16", "int16", "bool"])
def test_random_printoptions(torch, dtype_name):
    @SETTINGS
    @given(data=arrays(dtype_name, max_dims=3, max_side=12),
           precision=st.integers(0, 8), threshold=st.integers(0, 60),
           edgeitems=st.integers(0, 4), linewidth=st.integers(10, 120),
           sci_mode=st.sampled_from([None, True, False]))
    def run(data, precision, threshold, edgeitems, linewidth, sci_mode):
        set_both(torch, precision=precision, threshold=threshold, edgeitems=edgeitems,
                 linewidth=linewidth, sci_mode=sci_mode)
        check(torch, data, dtype_name)

    run()


@pytest.mark.parametrize("dtype_name", FLOAT_DTYPES)
def test_random_grad_suffixes(torch, dtype_name):
    @SETTINGS
    @given(data=arrays(dtype_name, max_dims=2, max_side=30), mul=st.booleans())
    def run(data, mul):
        check(torch, data, dtype_name, requires_grad=True, mul=mul)

    run()
