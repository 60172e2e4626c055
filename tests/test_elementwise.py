"""Elementwise ops: arithmetic, math, activations, comparisons, logic and bitwise ops, clamp,
where, masked_fill, lerp, nan_to_num, round, isclose/allclose/equal.

Values are checked against NumPy: the inputs converted to the result dtype (as PyTorch's type
promotion converts them), the op computed in float64 (or int64, wrapping) and rounded back to
the result dtype. That is bit-exact for + - * / and every integer op, and within a few ulps
for the math functions. Where torch is installed the same calls run on torch (our spec):
result dtypes, values (bit-exact for integers, bool and float + - * / neg abs and
comparisons; torch.testing.assert_close tolerances for the math functions), NaN positions,
error classes and messages.

Inputs: random shapes (0-d, empty, broadcasting pairs), layouts (transposed, sliced with
steps, expanded/broadcast views) and all ten dtypes; Python scalars and 0-d tensors for the
promotion rules; every form (function, method, in-place ``_``, ``out=``).

The op tables are read from the declarations (tensorlib/ops/decl/elementwise.py): every
declared op is looked up by name in UNARY, BINARY or OWN_TESTS here, and a declared op
without a reference fails test_every_declared_elementwise_op_has_a_reference.

A library bug found here is fixed, not marked: the suite has no xfails.
"""
import math
import operator as _o
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st
from hypothesis.extra import numpy as hnp

import tensorlib as tl
import tensorlib.nn.functional as TLF
from tensorlib.ops.decl import elementwise as EW_DECL
from divergences import HALF_TIMES_PY_FLOAT_DTYPE, INTEGERS_WRAP
from strided_refs import (
    DTYPES, FLOAT_DTYPES, bf16_round, elements, float_inside, make_tensor, make_torch, np_dtype,
    tl_dtype, to_numpy)

INT_DTYPES = ["uint8", "int8", "int16", "int32", "int64"]
REDUCED = ["float16", "bfloat16"]
NAN, INF = float("nan"), float("inf")

# torch.testing.assert_close's default (rtol, atol) per float dtype
CLOSE = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
         "float64": (1e-7, 1e-7)}
# mantissa bits and smallest normal exponent, for ulp spacing
FLOAT_BITS = {"float16": (10, -14), "bfloat16": (7, -126), "float32": (23, -126),
              "float64": (52, -1022)}
FMAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38, "float32": 3.4028234663852886e38,
        "float64": sys.float_info.max}


def nnf(lib):
    """``lib.nn.functional`` for tensorlib or torch."""
    return lib.nn.functional


# ---------------------------------------------------------------------------------------------
# dtypes and NumPy references

def dname(x):
    """The dtype name ('float32') of a tensorlib or torch dtype or tensor."""
    return str(getattr(x, "dtype", x)).rsplit(".", 1)[-1]


def is_float(name):
    return name in FLOAT_DTYPES


def promote(*names):
    """PyTorch's promotion of tensor dtypes (tensorlib's promote_types is checked against
    torch's in test_dtype.py)."""
    out = names[0]
    for n in names[1:]:
        out = dname(tl.promote_types(tl_dtype(out), tl_dtype(n)))
    return out


def _combine(higher, lower):
    """PyTorch's rule for a higher-priority group's dtype meeting a lower one's: the lower
    group only matters when it is of a higher category (bool < integer < float)."""
    if higher is None or lower is None:
        return higher or lower
    if is_float(higher):
        return higher
    if higher == "bool" or is_float(lower):
        return promote(higher, lower)
    return higher


def result_dtype(*operands):
    """torch.result_type of operands given as (dtype name, ndim) for tensors, or Python
    numbers: dimensioned tensors outrank 0-d tensors, which outrank numbers (bool, int64 or
    the default float), each only within its category."""
    groups = [None, None, None]
    for o in operands:
        if isinstance(o, tuple):
            name, k = o[0], 0 if o[1] else 1
        else:
            name = "bool" if isinstance(o, (bool, np.bool_)) else \
                "int64" if isinstance(o, (int, np.integer)) else "float32"
            k = 2
        groups[k] = name if groups[k] is None else promote(groups[k], name)
    return _combine(groups[0], _combine(groups[1], groups[2]))


def np_as(a, name):
    """Values of ``a`` converted to dtype ``name`` as a tensor cast converts them: integers
    wrap, bool is ``!= 0``, bfloat16 rounds to nearest even (held in float32)."""
    a = np.asarray(a)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "bool":
            return a != 0
        if name == "bfloat16":
            return bf16_round(a.astype(np.float32))
        if is_float(name):
            return a.astype(np_dtype(name))
        if a.dtype.kind == "f":
            a = np.trunc(a)
        return a.astype(np.int64).astype(name)


def wide(a, name):
    """float64 for float dtypes, int64 for integers and bool (the reference's compute types)."""
    return np.asarray(a).astype(np.float64 if is_float(name) else np.int64)


def ref_op(fn, arrays, names, res, compute=None):
    """``fn`` on ``arrays`` (of dtypes ``names``) converted to ``compute`` (default: the result
    dtype ``res``) and widened, rounded back to ``res``."""
    compute = compute or res
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = fn(*[wide(np_as(a, compute), compute) for a in arrays])
    return np_as(r, res)


def spacing(ref, name):
    """The ulp of dtype ``name`` at the float64 values ``ref`` (the subnormal spacing below
    the normal range)."""
    mant, emin = FLOAT_BITS[name]
    a = np.abs(np.asarray(ref, dtype=np.float64))
    with np.errstate(all="ignore"):
        e = np.floor(np.log2(np.where((a > 0) & np.isfinite(a), a, 1.0)))
    return np.exp2(np.maximum(e, emin) - mant)


def check_values(got, want, name, ulps=0, zero_sign=False, what="", slack=0.0):
    """NumPy values ``got`` against ``want`` for dtype ``name``: same shape; integers and bool
    equal; floats with NaN in the same places, equal infinities (or, with ``ulps``, an
    overflow to infinity next to the largest finite value) and finite values within ``ulps``
    ulps plus ``slack`` (0: equal; ``zero_sign``: the sign of zeros too)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if not is_float(name):
        if not np.array_equal(got, want.astype(got.dtype)):
            bad = got != want.astype(got.dtype)
            raise AssertionError(f"{what} ({name}): got {got[bad][:8]}, want {want[bad][:8]}")
        return
    g, w = got.astype(np.float64), want.astype(np.float64)
    gn, wn = np.isnan(g), np.isnan(w)
    bad = gn != wn
    both = ~gn & ~wn
    inf = both & (np.isinf(g) | np.isinf(w))
    big = np.minimum(np.abs(g), np.abs(w)) >= FMAX[name] * (1 - 2.0 ** -7)
    edge = inf & big & (np.sign(g) == np.sign(w)) if ulps else np.zeros_like(inf)
    bad |= inf & ~edge & (g != w)
    fin = both & ~inf
    with np.errstate(all="ignore"):
        if ulps:
            bad |= fin & (np.abs(g - w) > ulps * spacing(w, name) + np.nan_to_num(slack))
        else:
            bad |= fin & (g != w)
    if zero_sign:
        bad |= fin & (g == 0) & (w == 0) & (np.signbit(g) != np.signbit(w))
    if bad.any():
        raise AssertionError(f"{what} ({name}, {ulps} ulps): {int(bad.sum())} of {bad.size} differ; "
                             f"got {g[bad][:8].tolist()}, want {w[bad][:8].tolist()}")


def check_close(got, want, name, what=""):
    """torch.testing.assert_close's rule: NaN in the same places, equal infinities, finite
    values within atol + rtol * |want|."""
    g, w = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert g.shape == w.shape, f"{what}: shape {g.shape} != {w.shape}"
    rtol, atol = CLOSE[name]
    gn, wn = np.isnan(g), np.isnan(w)
    fin = ~gn & ~wn & np.isfinite(g) & np.isfinite(w)
    bad = (gn != wn) | (~gn & ~wn & ~fin & (g != w))
    with np.errstate(all="ignore"):
        bad |= fin & (np.abs(g - w) > atol + rtol * np.abs(w))
    if bad.any():
        raise AssertionError(f"{what} ({name}): got {g[bad][:8].tolist()}, want {w[bad][:8].tolist()}")


def check_result(got, want, name, ulps=0, zero_sign=False, what="", slack=0.0):
    """A tensorlib result against reference values ``want`` of dtype ``name``."""
    assert dname(got) == name, f"{what}: dtype {dname(got)} != {name}"
    check_values(to_numpy(got), want, name, ulps, zero_sign, what, slack)


def check_torch(got, want, exact=True, zero_sign=True, what=""):
    """A tensorlib result against torch's: shape, dtype, values (bit-exact, or assert_close
    tolerances for floats when not ``exact``)."""
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    assert dname(got) == dname(want), f"{what}: dtype {dname(got)} != torch {dname(want)}"
    name = dname(got)
    if exact or not is_float(name):
        check_values(to_numpy(got), to_numpy(want), name, 0, zero_sign, what)
    else:
        check_close(to_numpy(got), to_numpy(want), name, what)


def run(fn, *args, **kwargs):
    """(result, None), or (None, the exception) — to compare outcomes across libraries."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args, **kwargs), None
    except Exception as e:          # noqa: BLE001 (the class is what gets compared)
        return None, e


def family(e):
    """The exception class to compare: RuntimeError and its subclass NotImplementedError count
    as one (torch picks between them per op and dtype; test_not_implemented_error_class pins
    the common cases)."""
    return RuntimeError if isinstance(e, RuntimeError) else type(e)


def same_outcome(ours, theirs, what):
    """Both libraries raised (the same exception family) or both returned. Returns whether
    there are results to compare."""
    (r1, e1), (r2, e2) = ours, theirs
    if e2 is not None:
        assert e1 is not None, f"{what}: torch raised {e2!r}, tensorlib returned {r1!r}"
        assert family(e1) is family(e2), f"{what}: tensorlib raised {e1!r}, torch {e2!r}"
        return False
    assert e1 is None, f"{what}: tensorlib raised {e1!r}, torch returned {r2!r}"
    return True


# ---------------------------------------------------------------------------------------------
# inputs: the same values as a tensorlib tensor, a NumPy array and a torch tensor, laid out
# the same way (a permutation of a stored base, a start and a positive step per dim, and dims
# broadcast from size 1 with stride 0)

def table_values(name, extremes=True, nonzero=False, nonneg=False):
    """A fixed set of telling values of dtype ``name`` (specials, signed zeros, extremes)."""
    if name == "bool":
        v = [True, False, True, True, False, False, True]
    elif name == "uint8":
        v = [0, 1, 2, 7, 100, 200, 255, 3] if extremes else [0, 1, 2, 7, 100, 200, 3]
    elif name in INT_DTYPES:
        info = np.iinfo(name)
        v = [0, 1, -1, 2, -7, 7, 100, -100, 127, -128]
        if extremes and name != "int8":
            v += [int(info.max), int(info.min), int(info.min) + 1]
    else:
        v = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.75, 7.0, -100.0, 1e4, 0.1, INF, -INF, NAN]
    if nonzero:
        v = [x for x in v if x != 0] if name != "bool" else [True]
    if nonneg:
        v = [x for x in v if not x < 0]
    return np_as(np.array(v), name)


MATH_GRID = np.concatenate([
    np.linspace(-10, 10, 81), [-100.0, -30.0, -20.5, 20.5, 30.0, 88.5, 100.0, 1e4, -1e4],
    [1e-3, -1e-3, 1e-6, 0.999, -0.999, 1.0001, 2.0 ** -20, 0.0, -0.0, INF, -INF, NAN]])


@st.composite
def layouts(draw, shape, allow_expand=True):
    """A layout for a tensor of ``shape``: (perm, steps, starts, expanded dims)."""
    nd = len(shape)
    if draw(st.integers(0, 3)) == 0:            # plain contiguous, often
        return tuple(range(nd)), (1,) * nd, (0,) * nd, (False,) * nd
    perm = tuple(draw(st.permutations(range(nd))))
    steps = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    starts = tuple(draw(st.integers(0, 1)) for _ in range(nd))
    expanded = tuple(allow_expand and n != 1 and draw(st.integers(0, 3)) == 0 for n in shape)
    return perm, steps, starts, expanded


def stored_shape(shape, layout):
    """The shape of the contiguous base that ``layout`` turns into ``shape``."""
    perm, steps, starts, expanded = layout
    logical = [1 if e else s0 + ((n - 1) * sp + 1 if n else 0)
               for n, sp, s0, e in zip(shape, steps, starts, expanded)]
    return tuple(logical[p] for p in perm)


def lay_out(base, shape, layout, kind):
    """Apply ``layout`` to a stored base (``kind``: "np", "tl" or "torch")."""
    perm, steps, starts, expanded = layout
    x = base
    if len(shape) > 1:
        inv = [int(i) for i in np.argsort(perm)]
        x = x.transpose(inv) if kind == "np" else x.permute(*inv)
    idx = tuple(slice(0, 1) if e else slice(s0, s0 + ((n - 1) * sp + 1 if n else 0), sp)
                for n, sp, s0, e in zip(shape, steps, starts, expanded))
    x = x[idx + (Ellipsis,)]
    if any(expanded):
        x = np.broadcast_to(x, shape) if kind == "np" else x.expand(*shape)
    return x


class Operand:
    """One input: ``t`` (tensorlib), ``n`` (NumPy, the dtype's values; bfloat16 as float32)
    and ``p`` (torch, or None) with the same values and layout."""

    def __init__(self, values, name, shape, layout, torch=None):
        self.name, self.shape, self.layout = name, tuple(shape), layout
        self.t = lay_out(make_tensor(values, name), shape, layout, "tl")
        self.n = lay_out(np.array(values), shape, layout, "np")
        self.p = lay_out(make_torch(torch, values, name), shape, layout, "torch") if torch else None
        assert tuple(self.t.shape) == self.shape

    def __repr__(self):
        return f"Operand({self.name}, {self.shape}, {self.layout}, {self.n.tolist()})"


def plain(values, name, torch=None, shape=None):
    """A contiguous Operand holding ``values`` (reshaped to ``shape``)."""
    v = np_as(values, name)
    if shape is not None:
        v = v.reshape(shape)
    nd = v.ndim
    return Operand(v, name, v.shape, (tuple(range(nd)), (1,) * nd, (0,) * nd, (False,) * nd), torch)


def with_specials(name, base):
    """Element strategy ``base`` plus, for float dtypes, NaN, the infinities and -0."""
    if not is_float(name):
        return base
    return st.one_of(base, base, base, st.sampled_from([NAN, INF, -INF, -0.0, 0.0]))


@st.composite
def operands(draw, shape, name, torch=None, elems=None, allow_expand=True):
    """An Operand of ``shape`` and dtype ``name`` with drawn values and layout."""
    layout = draw(layouts(shape, allow_expand))
    vals = draw(hnp.arrays(np_dtype(name), stored_shape(shape, layout),
                           elements=elems if elems is not None else elements(name)))
    if name == "bfloat16":
        vals = bf16_round(vals)
    return Operand(vals, name, shape, layout, torch)


def small_elements(name):
    """Finite values small enough to be exact in every dtype (|v| <= 100 for ints, integral
    halves for floats)."""
    if name == "bool":
        return st.booleans()
    lo = 0 if name == "uint8" else -100
    if is_float(name):
        return st.integers(-200, 200).map(lambda k: k / 2)
    return st.integers(lo, 100)


def math_elements(name, lo=-20.0, hi=20.0):
    """Float values in [lo, hi] of the dtype's width, with the specials."""
    if not is_float(name):
        return small_elements(name)
    width = 16 if name == "float16" else 64 if name == "float64" else 32
    if width == 16:
        lo, hi = max(lo, -6e4), min(hi, 6e4)
    return with_specials(name, float_inside(lo, hi, width))


SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)
PAIRS = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0,
                                           max_side=4)


# ---------------------------------------------------------------------------------------------
# unary ops: a registry (call, NumPy reference, dtype rule, tolerance) shared by the tests

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])
GELU_C = math.sqrt(2 / math.pi)


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0, e) / (1.0 + e)


def _softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.logaddexp(0.0, x * beta) / beta)


def _sign(x):
    # torch: sign(NaN) and sign(-0.) are 0
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


def _identity_for_ints(f):
    return lambda x: x if x.dtype.kind in "iub" else f(x)


MATH = {"float16": 1, "bfloat16": 1, "float32": 4, "float64": 4}   # ulps vs float64 reference
EXACT = {n: 0 for n in FLOAT_DTYPES}


class Unary:
    """An elementwise op of one tensor.

    ``call(lib, x)`` runs it in tensorlib or torch; ``ref`` is the NumPy reference on float64
    (or int64) values; ``rule`` gives the result dtype: same, nobool (bool raises), float
    (integers promote to the default float), floats (integers raise), bool, int (floats
    raise), hardtanh (bool, and uint8 with a negative limit, raise), square (bool gives
    int64); ``ulps`` per dtype;
    ``dom`` the value range drawn; ``method``/``inplace`` the Tensor method names (None: none);
    ``torch_skip`` input values where torch's result is off (left out of the parity table).
    """

    def __init__(self, call, ref, rule, ulps=EXACT, dom=(-20.0, 20.0), method=None,
                 inplace=None, zero_sign=True, torch_skip=(), torch_exact=None):
        self.call, self.ref, self.rule, self.ulps, self.dom = call, ref, rule, ulps, dom
        self.method, self.inplace, self.zero_sign = method, inplace, zero_sign
        self.torch_skip = torch_skip        # input values where torch is known to be wrong
        # bit-exact against torch (default: when exact against NumPy)
        self.torch_exact = all(v == 0 for v in ulps.values()) if torch_exact is None else torch_exact

    def result(self, name, params=()):
        """The result dtype for an input of dtype ``name``, or None if the op must raise."""
        r = self.rule
        if r == "same":
            return name
        if r == "nobool":
            return None if name == "bool" else name
        if r == "float":
            return name if is_float(name) else "float32"
        if r == "floats":
            return name if is_float(name) else None
        if r == "bool":
            return "bool"
        if r == "int":
            return None if is_float(name) else name
        if r == "hardtanh":
            return None if name == "bool" or (name == "uint8" and min(params) < 0) else name
        if r == "square":                   # pow(x, 2): bool ** int is int64
            return "int64" if name == "bool" else name
        raise AssertionError(r)


def _named(name, **kw):
    """A Unary that is ``lib.<name>(x)`` with method ``x.<name>()`` and ``x.<name>_()``."""
    inplace = kw.pop("inplace", name + "_")
    return Unary(lambda lib, x: getattr(lib, name)(x), method=name, inplace=inplace, **kw)


def _nn(name, *args, method=None, inplace=None, **kw):
    """A Unary that is ``lib.nn.functional.<name>(x, *args, **kw)``."""
    opts = {k: kw.pop(k) for k in ("approximate",) if k in kw}
    return Unary(lambda lib, x: getattr(nnf(lib), name)(x, *args, **opts), method=method,
                 inplace=inplace, **kw)


UNARY = {
    "neg": _named("neg", ref=np.negative, rule="nobool"),
    "abs": _named("abs", ref=np.abs, rule="nobool"),
    "sign": _named("sign", ref=_sign, rule="same"),
    "reciprocal": _named("reciprocal", ref=lambda x: 1.0 / x, rule="float"),
    "square": _named("square", ref=np.square, rule="square"),
    "exp": _named("exp", ref=np.exp, rule="float", ulps=MATH, dom=(-100.0, 100.0)),
    "exp2": _named("exp2", ref=np.exp2, rule="float", ulps=MATH, dom=(-140.0, 140.0)),
    "expm1": _named("expm1", ref=np.expm1, rule="float", ulps=MATH, dom=(-30.0, 100.0)),
    "log": _named("log", ref=np.log, rule="float", ulps=MATH, dom=(-1.0, 1e4)),
    "log2": _named("log2", ref=np.log2, rule="float", ulps=MATH, dom=(-1.0, 1e4)),
    "log10": _named("log10", ref=np.log10, rule="float", ulps=MATH, dom=(-1.0, 1e4)),
    "log1p": _named("log1p", ref=np.log1p, rule="float", ulps=MATH, dom=(-2.0, 1e4)),
    # sqrt is correctly rounded (checked against NumPy); torch's float32 sqrt is an ulp off
    # for some inputs (sqrt(4.75)), so it is compared with tolerances there
    "sqrt": _named("sqrt", ref=np.sqrt, rule="float", dom=(-1.0, 1e4), torch_exact=False),
    "rsqrt": _named("rsqrt", ref=lambda x: 1.0 / np.sqrt(x), rule="float", ulps=MATH, dom=(-1.0, 1e4)),
    "sin": _named("sin", ref=np.sin, rule="float", ulps=MATH, dom=(-100.0, 100.0)),
    "cos": _named("cos", ref=np.cos, rule="float", ulps=MATH, dom=(-100.0, 100.0)),
    "tan": _named("tan", ref=np.tan, rule="float", ulps=MATH, dom=(-1.5, 1.5)),
    "asin": _named("asin", ref=np.arcsin, rule="float", ulps=MATH, dom=(-1.5, 1.5)),
    "acos": _named("acos", ref=np.arccos, rule="float", ulps=MATH, dom=(-1.5, 1.5)),
    "atan": _named("atan", ref=np.arctan, rule="float", ulps=MATH, dom=(-100.0, 100.0)),
    "sinh": _named("sinh", ref=np.sinh, rule="float", ulps=MATH, dom=(-100.0, 100.0)),
    "cosh": _named("cosh", ref=np.cosh, rule="float", ulps=MATH, dom=(-100.0, 100.0)),
    "asinh": _named("asinh", ref=np.arcsinh, rule="float", ulps=MATH, dom=(-1e4, 1e4)),
    "acosh": _named("acosh", ref=np.arccosh, rule="float", ulps=MATH, dom=(0.5, 1e4)),
    "atanh": _named("atanh", ref=np.arctanh, rule="float", ulps=MATH, dom=(-1.5, 1.5)),
    "tanh": _named("tanh", ref=np.tanh, rule="float", ulps=MATH),
    "sigmoid": _named("sigmoid", ref=_sigmoid, rule="float", ulps=MATH, dom=(-100.0, 100.0)),
    "erf": _named("erf", ref=_erf, rule="float", ulps=MATH, dom=(-5.0, 5.0)),
    "erfc": _named("erfc", ref=_erfc, rule="float", ulps=MATH, dom=(-5.0, 12.0)),
    "logit": _named("logit", ref=lambda x: np.log(x / (1 - x)), rule="float", ulps=MATH,
                    dom=(-0.5, 1.5)),
    "logit_0.25": Unary(lambda lib, x: lib.logit(x, eps=0.25), rule="float", ulps=MATH,
                        ref=lambda x: np.log(np.clip(x, 0.25, 0.75) / (1 - np.clip(x, 0.25, 0.75)))),
    "relu": _named("relu", ref=lambda x: np.where((x > 0) | (x != x), x, np.zeros_like(x)), rule="nobool",
                   zero_sign=False),
    "floor": _named("floor", ref=_identity_for_ints(np.floor), rule="nobool"),
    "ceil": _named("ceil", ref=_identity_for_ints(np.ceil), rule="nobool"),
    "round": _named("round", ref=_identity_for_ints(np.round), rule="nobool"),
    "trunc": _named("trunc", ref=_identity_for_ints(np.trunc), rule="nobool"),
    "frac": _named("frac", ref=lambda x: x - np.trunc(x), rule="floats"),
    "isnan": _named("isnan", ref=np.isnan, rule="bool", inplace=None),
    "isinf": _named("isinf", ref=np.isinf, rule="bool", inplace=None),
    "isfinite": _named("isfinite", ref=np.isfinite, rule="bool", inplace=None),
    # the sign of NaN is not compared: torch's float32 -> bfloat16 conversion makes every NaN
    # negative (0xFFFF)
    "signbit": _named("signbit", ref=np.signbit, rule="bool", inplace=None, torch_skip=(NAN,)),
    "logical_not": _named("logical_not", ref=lambda x: x == 0, rule="bool"),
    "bitwise_not": _named("bitwise_not", ref=np.invert, rule="int"),
    "nan_to_num": _named("nan_to_num", ref=None, rule="same"),
    # activations (torch.nn.functional); gelu(+inf) is NaN in torch's float32 kernel (the exact
    # value, which tensorlib returns, is +inf)
    "silu": _nn("silu", ref=lambda x: x / (1.0 + np.exp(-x)), rule="floats", ulps=MATH,
                dom=(-100.0, 100.0)),
    "gelu": _nn("gelu", ref=lambda x: 0.5 * x * _erfc(-x * math.sqrt(0.5)), rule="floats",
                ulps=MATH, dom=(-10.0, 10.0), torch_skip=(INF,)),
    "gelu_tanh": _nn("gelu", approximate="tanh", rule="floats", ulps=MATH, dom=(-10.0, 10.0),
                     # 0.5 (1 + tanh(u)) is sigmoid(2u), without the cancellation for x < 0
                     ref=lambda x: x * _sigmoid(2 * GELU_C * (x + 0.044715 * x ** 3))),
    "softplus": _nn("softplus", ref=_softplus, rule="floats", ulps=MATH, dom=(-40.0, 40.0)),
    "softplus_b2_t5": _nn("softplus", 2.0, 5.0, ref=lambda x: _softplus(x, 2.0, 5.0),
                          rule="floats", ulps=MATH),
    "leaky_relu": _nn("leaky_relu", ref=lambda x: np.where(x > 0, x, x * 0.01), rule="floats",
                      ulps={"float16": 1, "bfloat16": 1, "float32": 1, "float64": 1}),
    "leaky_relu_0.2": _nn("leaky_relu", 0.2, ref=lambda x: np.where(x > 0, x, x * 0.2),
                          rule="floats", ulps={"float16": 1, "bfloat16": 1, "float32": 1, "float64": 1}),
    "elu": _nn("elu", ref=lambda x: np.where(x > 0, x, np.expm1(x)), rule="floats", ulps=MATH),
    "elu_0.5": _nn("elu", 0.5, ref=lambda x: np.where(x > 0, x, 0.5 * np.expm1(x)),
                   rule="floats", ulps=MATH),
    "hardtanh": _nn("hardtanh", ref=lambda x: np.minimum(np.maximum(x, -1.0), 1.0),
                    rule="hardtanh", zero_sign=False),
    "hardtanh_-2_0.5": _nn("hardtanh", -2.0, 0.5, rule="hardtanh", zero_sign=False,
                           ref=lambda x: np.minimum(np.maximum(x, -2.0), 0.5)),
    "hardtanh_0_2": _nn("hardtanh", 0.0, 2.0, rule="hardtanh", zero_sign=False,
                        ref=lambda x: np.minimum(np.maximum(x, 0.0), 2.0)),
    "F.relu": _nn("relu", ref=lambda x: np.where((x > 0) | (x != x), x, np.zeros_like(x)), rule="nobool",
                  zero_sign=False),
    "F.sigmoid": _nn("sigmoid", ref=_sigmoid, rule="float", ulps=MATH),
    "F.tanh": _nn("tanh", ref=np.tanh, rule="float", ulps=MATH),
}
HARDTANH_LIMITS = {"hardtanh": (-1.0, 1.0), "hardtanh_-2_0.5": (-2.0, 0.5), "hardtanh_0_2": (0.0, 2.0)}


def _nan_to_num_ref(x, name):
    if not is_float(name):
        return x
    return np.nan_to_num(x, nan=0.0, posinf=FMAX[name], neginf=-FMAX[name])


def unary_reference(op, values, name, perturb=0.0):
    """NumPy reference of UNARY[op] on ``values`` of dtype ``name``, as the result dtype.
    The math functions run in long double for float64 results; ``perturb`` scales the
    (converted) input by 1 + perturb first."""
    u = UNARY[op]
    res = u.result(name, HARDTANH_LIMITS.get(op, ()))
    if op == "nan_to_num":
        return ref_op(lambda x: _nan_to_num_ref(x, name), [values], [name], res)
    if op == "bitwise_not" and name == "bool":
        return np.logical_not(values)
    if res == "bool":                   # ops with a bool result look at the input's own values
        return ref_op(u.ref, [values], [name], res, compute=name)
    if not is_float(res) or u.ulps is EXACT:
        return ref_op(u.ref, [values], [name], res)
    x = np_as(values, res).astype(np.longdouble if res == "float64" else np.float64)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np_as(u.ref(x * (1 + perturb)).astype(np.float64), res)


def conditioning_slack(op, values, name):
    """How far the reference moves when the input moves by two of its ulps: the error any
    evaluation in the input's precision may make where the function is ill-conditioned."""
    res = UNARY[op].result(name, HARDTANH_LIMITS.get(op, ()))
    if not is_float(res) or UNARY[op].ulps is EXACT:
        return 0.0
    eps = 2.0 ** -FLOAT_BITS[res][0]
    w = unary_reference(op, values, name).astype(np.float64)
    with np.errstate(all="ignore"):
        d = [np.abs(unary_reference(op, values, name, k * eps).astype(np.float64) - w)
             for k in (2, -2)]
    return np.nan_to_num(np.maximum(*d), nan=0.0, posinf=0.0)




def declared_first(declared, table):
    """The declared ops, then the table's other entries (overloads such as ``gelu_tanh``): a
    declared op missing from the table fails its test with a KeyError instead of going
    untested."""
    return list(dict.fromkeys(list(declared) + list(table)))


UNARY_CASES = declared_first(EW_DECL.UNARY_OPS, UNARY)


def unary_input_values(op, name):
    """The fixed inputs of the parity table: the math grid (floats) or telling integers."""
    if is_float(name):
        return np_as(MATH_GRID, name)
    return table_values(name)


# every unary op with every dtype
UNARY_TABLE = [pytest.param(op, name, id=f"{op}-{name}") for op in UNARY_CASES for name in DTYPES]


@pytest.mark.parametrize("op", UNARY_CASES)
@given(data=st.data())
def test_unary_matches_numpy(op, data):
    """Every unary op on random shapes, layouts and dtypes: result dtype, errors and values
    against the NumPy reference (exact, or within the op's ulps)."""
    u = UNARY[op]
    name = data.draw(st.sampled_from(DTYPES), "dtype")
    shape = data.draw(SHAPES, "shape")
    elems = math_elements(name, *u.dom) if is_float(name) else elements(name)
    x = data.draw(operands(shape, name, elems=elems), "x")
    res = u.result(name, HARDTANH_LIMITS.get(op, ()))
    if res is None:
        with pytest.raises(RuntimeError):
            u.call(tl, x.t)
        return
    got = u.call(tl, x.t)
    assert tuple(got.shape) == shape
    assert_iterator_layout(got, [x.t])
    check_result(got, unary_reference(op, x.n, name), res, u.ulps.get(res, 0) if is_float(res) else 0,
                 zero_sign=u.zero_sign and u.ulps.get(res, 0) == 0, what=f"{op}({x!r})",
                 slack=conditioning_slack(op, x.n, name))


@pytest.mark.parametrize("op, name", UNARY_TABLE)
def test_unary_dtype_rule(op, name):
    """Each unary op and dtype raises, or returns the dtype, that PyTorch's rule for the op
    gives (checked against torch itself by test_unary_matches_torch)."""
    u = UNARY[op]
    x = plain(unary_input_values(op, name), name)
    res = u.result(name, HARDTANH_LIMITS.get(op, ()))
    if res is None:
        with pytest.raises(RuntimeError):
            u.call(tl, x.t)
    else:
        assert dname(u.call(tl, x.t)) == res


@pytest.mark.parametrize("op, name", UNARY_TABLE)
def test_unary_matches_torch(torch, op, name):
    """Each unary op and dtype on special values (NaN, infinities, signed zeros, integer
    extremes) against torch: error class, result dtype and values (bit-exact where the op is
    exact, assert_close tolerances for the math functions)."""
    u = UNARY[op]
    vals = unary_input_values(op, name)
    if u.torch_skip and is_float(name):
        skip = np.isin(vals, [v for v in u.torch_skip if v == v])
        if any(v != v for v in u.torch_skip):
            skip |= np.isnan(vals)
        vals = vals[~skip]
    x = plain(vals, name, torch)
    ours, theirs = run(u.call, tl, x.t), run(u.call, torch, x.p)
    if same_outcome(ours, theirs, f"{op}({name})"):
        check_torch(ours[0], theirs[0], exact=u.torch_exact, zero_sign=u.zero_sign, what=f"{op}({name})")


# ---------------------------------------------------------------------------------------------
# binary ops

def _trunc_div_int(x, y):
    q = np.floor_divide(x, y)
    return q + ((q * y != x) & ((x < 0) != (y < 0)))


def _shift(left):
    def f(x, y, bits):
        with np.errstate(all="ignore"):
            ok = (y >= 0) & (y < bits)
            s = np.where(ok, y, 0)
            if left:
                return np.where(ok, np.left_shift(x, s), 0)
            return np.where(ok, np.right_shift(x, s), np.where(x < 0, -1, 0))
    return f


class Binary:
    """An elementwise op of two operands.

    ``call(lib, a, b)``; ``ref(x, y)`` on float64/int64 values; ``rule``: same, sub (a bool
    operand raises), float (integers promote to the default float), nobool (a bool result
    raises), cmp (bool, compared in the promoted dtype), logical (bool, on each operand's
    truth), int (floats raise), shift (integers only), float2 (float result); ``domain``:
    divisor (nonzero when integral), pow (a small non-negative integral exponent), shift;
    ``scalar_ok``: whether a Python number may be an operand (maximum/minimum/atan2: no)."""

    def __init__(self, call, ref, rule, ulps=EXACT, domain=None, method=None, inplace=None,
                 torch_exact=None, zero_sign=True, scalar_ok=True):
        self.call, self.ref, self.rule, self.ulps, self.domain = call, ref, rule, ulps, domain
        self.method, self.inplace, self.zero_sign = method, inplace, zero_sign
        self.torch_exact = all(v == 0 for v in ulps.values()) if torch_exact is None else torch_exact
        self.scalar_ok = scalar_ok

    def result(self, an, bn, p=None):
        """The result dtype for operand dtypes ``an``/``bn`` (promoted: ``p``), or None if the
        op must raise."""
        p = p or promote(an, bn)
        r = self.rule
        if r in ("same", "maxmin"):
            return p
        if r == "sub":
            return None if "bool" in (an, bn) else p
        if r in ("float", "float2"):
            return p if is_float(p) else "float32"
        if r == "nobool":
            return None if p == "bool" else p
        if r in ("cmp", "logical"):
            return "bool"
        if r == "int":
            return None if is_float(p) else p
        if r == "shift":
            return None if is_float(p) or p == "bool" else p
        raise AssertionError(r)


def _op2(name, ref, rule, **kw):
    """``lib.<name>(a, b)``, method ``a.<name>(b)`` and ``a.<name>_(b)``."""
    kw.setdefault("method", name)
    kw.setdefault("inplace", name + "_")
    return Binary(lambda lib, a, b: getattr(lib, name)(a, b), ref, rule, **kw)


def _div_mode(mode):
    return lambda lib, a, b: lib.div(a, b, rounding_mode=mode)


ROUNDED = {"float16": 1, "bfloat16": 1, "float32": 1, "float64": 1}
BINARY = {
    "add": _op2("add", np.add, "same"),
    "sub": _op2("sub", np.subtract, "sub"),
    "mul": _op2("mul", np.multiply, "same"),
    "div": _op2("div", np.divide, "float"),
    "div_trunc": Binary(_div_mode("trunc"), None, "nobool", domain="divisor", ulps=ROUNDED,
                        torch_exact=False),
    "div_floor": Binary(_div_mode("floor"), np.floor_divide, "nobool", domain="divisor",
                        ulps=ROUNDED, torch_exact=False),
    "floor_divide": _op2("floor_divide", np.floor_divide, "nobool", domain="divisor",
                         ulps=ROUNDED, torch_exact=False),
    "remainder": _op2("remainder", np.remainder, "nobool", domain="divisor", ulps=ROUNDED,
                      torch_exact=False, zero_sign=False),
    "fmod": _op2("fmod", np.fmod, "nobool", domain="divisor", ulps=ROUNDED, torch_exact=False),
    "pow": _op2("pow", np.power, "nobool", domain="pow", ulps=MATH),
    "atan2": _op2("atan2", np.arctan2, "float2", ulps=MATH, scalar_ok=False),
    "maximum": _op2("maximum", np.maximum, "maxmin", zero_sign=False, scalar_ok=False),
    "minimum": _op2("minimum", np.minimum, "maxmin", zero_sign=False, scalar_ok=False),
    "bitwise_and": _op2("bitwise_and", np.bitwise_and, "int"),
    "bitwise_or": _op2("bitwise_or", np.bitwise_or, "int"),
    "bitwise_xor": _op2("bitwise_xor", np.bitwise_xor, "int"),
    "bitwise_left_shift": _op2("bitwise_left_shift", _shift(True), "shift", domain="shift"),
    "bitwise_right_shift": _op2("bitwise_right_shift", _shift(False), "shift", domain="shift"),
    "eq": _op2("eq", np.equal, "cmp"),
    "ne": _op2("ne", np.not_equal, "cmp"),
    "lt": _op2("lt", np.less, "cmp"),
    "le": _op2("le", np.less_equal, "cmp"),
    "gt": _op2("gt", np.greater, "cmp"),
    "ge": _op2("ge", np.greater_equal, "cmp"),
    "logical_and": _op2("logical_and", np.logical_and, "logical"),
    "logical_or": _op2("logical_or", np.logical_or, "logical"),
    "logical_xor": _op2("logical_xor", np.logical_xor, "logical"),
}
BINARY_CASES = declared_first(EW_DECL.BINARY_OPS, BINARY)
# aliases PyTorch also has: each must be the same op
ALIASES = {"subtract": "sub", "multiply": "mul", "divide": "div", "true_divide": "div",
           "not_equal": "ne", "less": "lt", "less_equal": "le", "greater": "gt",
           "greater_equal": "ge", "arctan2": "atan2", "absolute": "abs", "negative": "neg",
           "arcsin": "asin", "arccos": "acos", "arctan": "atan",
           "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh", "fix": "trunc", "clip": "clamp"}


def binary_reference(op, a, an, b, bn, p=None):
    """NumPy reference of BINARY[op] on values ``a`` (dtype ``an``) and ``b`` (``bn``),
    promoted to ``p`` (default: as two dimensioned tensors)."""
    bo = BINARY[op]
    p = p or promote(an, bn)
    res = bo.result(an, bn, p)
    if bo.rule == "cmp":
        return ref_op(bo.ref, [a, b], [an, bn], "bool", compute=p)
    if bo.rule == "logical":
        return bo.ref(np.asarray(a) != 0, np.asarray(b) != 0)
    if op == "div_trunc":
        if is_float(res):
            # the quotient rounded to the compute type (float32 for float16/bfloat16), truncated
            loop = "float32" if res in REDUCED else res
            q = ref_op(np.divide, [a, b], [an, bn], loop, compute=res)
            return np_as(np.trunc(q), res)
        return ref_op(_trunc_div_int, [a, b], [an, bn], res)
    if bo.domain == "shift":
        bits = 8 * np.dtype(np_dtype(res)).itemsize
        return ref_op(lambda x, y: bo.ref(x, y, bits), [a, b], [an, bn], res)
    return ref_op(bo.ref, [a, b], [an, bn], res)


def operand_elements(op, name, other, second, p=None):
    """Element strategy for an operand of BINARY[op] of dtype ``name`` (``other``: the other
    operand's dtype; ``second``: whether it is the divisor / exponent / shift; ``p``: the
    promoted dtype)."""
    bo = BINARY[op]
    p = p or promote(name, other)
    # values of another dtype that meet a float16/bfloat16 result stay exact in it (see
    # test_other_dtypes_are_not_rounded_to_a_reduced_result_first)
    mixed_reduced = (p in REDUCED or other in REDUCED) and name != p
    el = small_elements(name) if mixed_reduced else elements(name)
    el = with_specials(name, el)
    if second and not is_float(p):
        if bo.domain == "divisor":
            # nonzero also once converted to the promoted dtype (int16 512 is 0 as uint8:
            # that raises, see test_a_divisor_of_a_wider_dtype_that_is_zero_in_the_loop_raises)
            bits = 8 * np.dtype(np_dtype(p)).itemsize if p != "bool" else 0
            el = el.filter(lambda v: v != 0 and (not bits or int(v) % (1 << bits) != 0))
        elif bo.domain == "pow":
            el = st.booleans() if name == "bool" else st.integers(0, 40)
        elif bo.domain == "shift":
            # amounts from negative to past the width (those shift everything out)
            bits = 8 * np.dtype(np_dtype(p)).itemsize
            info = np.iinfo(np_dtype(name)) if name != "bool" else None
            el = st.booleans() if name == "bool" else \
                st.integers(max(int(info.min), -3), min(int(info.max), bits + 3))
    return el


@pytest.mark.parametrize("op", BINARY_CASES)
@given(data=st.data())
def test_binary_matches_numpy(op, data):
    """Every binary op on broadcasting pairs of random shapes, layouts and dtypes (mixed dtypes
    promote as in PyTorch): result dtype, errors and values against NumPy."""
    bo = BINARY[op]
    an = data.draw(st.sampled_from(DTYPES), "dtype a")
    bn = data.draw(st.sampled_from(DTYPES), "dtype b")
    (sa, sb), shape = data.draw(PAIRS, "shapes")
    p = result_dtype((an, len(sa)), (bn, len(sb)))
    a = data.draw(operands(sa, an, elems=operand_elements(op, an, bn, False, p)), "a")
    b = data.draw(operands(sb, bn, elems=operand_elements(op, bn, an, True, p)), "b")
    res = bo.result(an, bn, p)
    if res is None:
        with pytest.raises(RuntimeError):
            bo.call(tl, a.t, b.t)
        return
    got = bo.call(tl, a.t, b.t)
    assert tuple(got.shape) == shape
    assert_iterator_layout(got, [a.t, b.t])
    ulps = bo.ulps.get(res, 0) if is_float(res) else 0
    check_result(got, binary_reference(op, a.n, an, b.n, bn, p), res, ulps,
                 zero_sign=bo.zero_sign and ulps == 0, what=f"{op}({a!r}, {b!r})")


def _pair_values(op, an, bn):
    """Table inputs for BINARY[op] on dtypes an, bn: a column and a row, so that the result
    holds every pair."""
    bo = BINARY[op]
    p = promote(an, bn)
    ext_a, ext_b = bn not in REDUCED, an not in REDUCED
    a = table_values(an, extremes=ext_a)
    second = dict(extremes=ext_b)
    if not is_float(p):
        if bo.domain == "divisor":
            second["nonzero"] = True
        if bo.domain == "pow":
            second["nonneg"] = True
    b = table_values(bn, **second)
    if op == "div_trunc" and p in ("int32", "int64"):
        b = b[b != -1]          # torch traps (SIGFPE) on INT_MIN / -1 with rounding_mode='trunc'
    if bo.domain == "shift" and not is_float(p):
        bits = 8 * np.dtype(np_dtype(p)).itemsize
        b = np_as(np.array([0, 1, 3, bits - 1, bits, bits + 1] + ([-1] if bn not in ("bool", "uint8") else [])), bn)
    return a.reshape(-1, 1), b


@pytest.mark.parametrize("op", BINARY_CASES)
def test_binary_matches_torch(torch, op):
    """Each binary op on every pair of the ten dtypes, over every pair of telling values
    (NaN, infinities, signed zeros, integer extremes): error class, result dtype and values
    (bit-exact for integers, bool, + - * / and comparisons) against torch."""
    bo = BINARY[op]
    failures = []
    for an in DTYPES:
        for bn in DTYPES:
            av, bv = _pair_values(op, an, bn)
            a, b = plain(av, an, torch), plain(bv, bn, torch)
            what = f"{op}({an}, {bn})"
            try:
                ours, theirs = run(bo.call, tl, a.t, b.t), run(bo.call, torch, a.p, b.p)
                if same_outcome(ours, theirs, what):
                    # floor/trunc division, remainder and fmod are bit-exact as torch's in
                    # float32/float64 too (torch computes them in reduced precision for
                    # float16/bfloat16)
                    exact = bo.torch_exact or (bo.ulps is ROUNDED and dname(ours[0]) not in REDUCED)
                    if dname(ours[0]) in REDUCED and op in ("div_trunc", "div_floor", "floor_divide"):
                        # torch rounds the quotient to float16/bfloat16 before flooring it,
                        # tensorlib floors the float32 quotient: a unit apart at most
                        check_torch_units(ours[0], theirs[0], what)
                    else:
                        check_torch(ours[0], theirs[0], exact=exact, zero_sign=bo.zero_sign, what=what)
            except AssertionError as e:
                failures.append(str(e).splitlines()[0])
    assert not failures, "\n".join(failures[:20])


def check_torch_units(got, want, what):
    """Integral float results within one unit (and 2 ulps) of torch's."""
    assert dname(got) == dname(want), what
    g, w = to_numpy(got).astype(np.float64), to_numpy(want).astype(np.float64)
    same = (g == w) | (np.isnan(g) & np.isnan(w))
    with np.errstate(invalid="ignore"):
        near = np.abs(g - w) <= np.maximum(1.0, 2 * spacing(w, dname(got)))
    assert (same | near).all(), f"{what}: got {g[~(same | near)][:6]}, want {w[~(same | near)][:6]}"


@given(data=st.data())
def test_add_sub_alpha_match_numpy(data):
    """add/sub/rsub with alpha: a + alpha * b (integers wrap; a float alpha with integer
    tensors raises; float results within an ulp: torch fuses the multiply-add)."""
    an = data.draw(st.sampled_from([n for n in DTYPES if n != "bool"]), "dtype a")
    bn = data.draw(st.sampled_from([n for n in DTYPES if n != "bool"]), "dtype b")
    (sa, sb), shape = data.draw(PAIRS, "shapes")
    p = result_dtype((an, len(sa)), (bn, len(sb)))
    el = lambda n: small_elements(n) if (p in REDUCED or n in REDUCED) and n != p else elements(n)  # noqa: E731
    a = data.draw(operands(sa, an, elems=el(an)), "a")
    b = data.draw(operands(sb, bn, elems=el(bn)), "b")
    alpha = data.draw(st.one_of(st.integers(-5, 5), st.sampled_from([0.5, -2.25, 3.0])), "alpha")
    op = data.draw(st.sampled_from(["add", "sub", "rsub"]), "op")
    call = {"add": lambda: tl.add(a.t, b.t, alpha=alpha), "sub": lambda: tl.sub(a.t, b.t, alpha=alpha),
            "rsub": lambda: tl.rsub(a.t, b.t, alpha=alpha)}[op]
    if isinstance(alpha, float) and not is_float(p):
        with pytest.raises(RuntimeError, match="For integral input tensors, argument alpha must not "
                                               "be a floating point number."):
            call()
        return
    got = call()
    al = np_as(np.array(alpha), p).astype(np.float64 if is_float(p) else np.int64)
    f = {"add": lambda x, y: x + al * y, "sub": lambda x, y: x - al * y, "rsub": lambda x, y: y - al * x}[op]
    big = np.maximum(np.abs(np_as(a.n, p).astype(np.float64)), np.abs(al * np_as(b.n, p).astype(np.float64)))
    slack = spacing(np.broadcast_to(big, shape), p) if is_float(p) and alpha not in (0, 1, -1) else 0.0
    check_result(got, ref_op(f, [a.n, b.n], [an, bn], p), p, ulps=1 if is_float(p) else 0,
                 slack=slack, what=f"{op}({a!r}, {b!r}, alpha={alpha})")


def test_alpha_matches_torch(torch):
    """alpha with every dtype pair (int, float and bool alphas) against torch."""
    failures = []
    for an in DTYPES:
        for bn in DTYPES:
            av, bv = table_values(an, extremes=False).reshape(-1, 1), table_values(bn, extremes=False)
            a, b = plain(av, an, torch), plain(bv, bn, torch)
            for alpha in (2, -1, 0, True, 0.5):
                for f in (lambda L, x, y: L.add(x, y, alpha=alpha), lambda L, x, y: L.sub(x, y, alpha=alpha),
                          lambda L, x, y: L.rsub(x, y, alpha=alpha)):
                    what = f"alpha={alpha} {an} {bn}"
                    try:
                        ours, theirs = run(f, tl, a.t, b.t), run(f, torch, a.p, b.p)
                        if same_outcome(ours, theirs, what):
                            # float alphas: torch fuses the multiply-add (one rounding)
                            exact = not is_float(dname(ours[0])) or alpha in (0, 1, -1, True)
                            # (alpha=0: torch computes a - 0 * b as a + 0 * b, another zero sign)
                            check_torch(ours[0], theirs[0], exact=exact, zero_sign=alpha != 0, what=what)
                    except AssertionError as e:
                        failures.append(str(e).splitlines()[0])
    assert not failures, "\n".join(failures[:20])


def test_bool_add_alpha():
    """Bool add with alpha is ``a or (alpha and b)``."""
    a, b = tl.tensor([True, False, True]), tl.tensor([True, True, False])
    assert tl.add(a, b, alpha=0).tolist() == [True, False, True]
    assert tl.add(a, b, alpha=False).tolist() == [True, False, True]


def test_bool_alpha_needs_bool_result():
    """alpha=True/False is only for bool results."""
    with pytest.raises(RuntimeError, match="Boolean alpha only supported for Boolean results."):
        tl.add(tl.tensor([1, 2]), 1, alpha=True)


def test_maximum_minimum_propagate_nan():
    """maximum/minimum return NaN where either input is NaN (unlike fmax/fmin), any dtype
    pairing with a float."""
    a = tl.tensor([NAN, 1.0, NAN, -INF])
    b = tl.tensor([2.0, NAN, NAN, INF])
    assert np.isnan(to_numpy(tl.maximum(a, b))[:3]).all() and tl.maximum(a, b)[3].item() == INF
    assert np.isnan(to_numpy(tl.minimum(a, b))[:3]).all() and tl.minimum(a, b)[3].item() == -INF
    assert np.isnan(to_numpy(tl.maximum(tl.tensor([5, 6]), tl.tensor([NAN, 1.0]))))[0]
    assert tl.maximum(tl.tensor([True, False]), tl.tensor([False, False])).tolist() == [True, False]


# ---------------------------------------------------------------------------------------------
# Python scalars as operands (weak types) and the reflected operators

OPERATOR = {"add": _o.add, "sub": _o.sub, "mul": _o.mul, "div": _o.truediv,
            "floor_divide": _o.floordiv, "remainder": _o.mod, "pow": _o.pow,
            "bitwise_and": _o.and_, "bitwise_or": _o.or_, "bitwise_xor": _o.xor,
            "bitwise_left_shift": _o.lshift, "bitwise_right_shift": _o.rshift,
            "eq": _o.eq, "ne": _o.ne, "lt": _o.lt, "le": _o.le, "gt": _o.gt, "ge": _o.ge}
# (logical_and/or/xor take tensors only in torch: test_wrong_argument_types_raise_type_error)
SCALAR_OPS = [op for op in BINARY if BINARY[op].scalar_ok and BINARY[op].rule != "logical"]


def representable(s, name):
    """Whether Python number ``s`` is exactly a value of dtype ``name``."""
    if isinstance(s, bool) or s != s or s in (INF, -INF):
        return True
    v = np_as(np.array(s, dtype=np.float64 if isinstance(s, float) else np.int64), name)
    return float(v) == s if is_float(name) else int(v) == s


def scalar_skip(op, tn, s, reflected):
    """Inputs that make torch itself misbehave, left out of the scalar sweeps."""
    if op == "pow" and tn == "bool" and isinstance(s, bool):
        return True                  # torch special-cases x ** True (returns x)
    return False


@st.composite
def python_scalars(draw, tn):
    """A Python bool, int or float for an op with a tensor of dtype ``tn``."""
    kind = draw(st.sampled_from(["bool", "int", "float"]))
    if kind == "bool":
        return draw(st.booleans())
    if kind == "int":
        return draw(st.one_of(st.integers(-300, 300), st.integers(-2 ** 63, 2 ** 63 - 1)))
    if tn in REDUCED:
        return draw(st.one_of(st.integers(-512, 512).map(lambda k: k / 8),
                              st.sampled_from([NAN, INF, -INF, -0.0])))
    return draw(st.floats(allow_nan=True, allow_infinity=True))


@pytest.mark.parametrize("op", SCALAR_OPS)
@given(data=st.data())
def test_scalar_operand_matches_numpy(op, data):
    """A tensor with a Python number on either side (function form, and the reflected
    operator): the number is weak (it adopts the tensor's dtype within its category),
    values against NumPy."""
    bo = BINARY[op]
    tn = data.draw(st.sampled_from(DTYPES), "dtype")
    s = data.draw(python_scalars(tn), "scalar")
    reflected = op in OPERATOR and data.draw(st.booleans(), "reflected")
    assume(not scalar_skip(op, tn, s, reflected))
    # (mul/div keep a float16/bfloat16 tensor's scalar in float32, as torch does; the torch
    # test covers those, the NumPy reference here rounds it to the dtype)
    assume(tn not in REDUCED or representable(s, tn))
    p = result_dtype((tn, 1), s)
    sname = "bool" if isinstance(s, bool) else "int64" if isinstance(s, int) else "float64"
    res = bo.result(tn, sname, p)
    if bo.rule == "sub" and (tn == "bool" or isinstance(s, bool)):
        res = None                   # (a Python bool counts as a bool operand)
    if op == "pow" and not is_float(p) and not isinstance(s, float) and not reflected and \
            not representable(s, p):
        res = None                   # an exponent out of the result's range (torch's overflow)
    elem = elements(tn)
    if reflected and not is_float(p):
        if bo.domain == "divisor":
            elem = elem.filter(lambda v: v != 0)
        elif bo.domain == "pow":
            elem = st.booleans() if tn == "bool" else st.integers(0, 20)
        elif bo.domain == "shift":
            elem = st.booleans() if tn == "bool" else st.integers(0, 7)
    if not reflected and not is_float(p) and not isinstance(s, float):
        if bo.domain == "divisor":
            # nonzero also once wrapped to the promoted dtype (uint8 // 256 raises, see
            # test_int_division_by_scalar_that_wraps_to_zero_raises)
            bits = 8 * np.dtype(np_dtype(p)).itemsize if p != "bool" else 0
            assume(s != 0 and (not bits or int(s) % (1 << bits) != 0))
        if bo.domain == "pow":
            assume(s >= 0)
    x = data.draw(operands(data.draw(SHAPES, "shape"), tn, elems=with_specials(tn, elem)), "x")
    call = (lambda t: OPERATOR[op](s, t)) if reflected else (lambda t: bo.call(tl, t, s))
    if res is None:
        with pytest.raises(RuntimeError):
            call(x.t)
        return
    got = call(x.t)
    conv = res if bo.rule in ("float", "float2") else p       # what torch converts it to
    if isinstance(s, int) and not isinstance(s, bool) and not is_float(conv):
        sv = np_as(np.array(s & (2 ** 64 - 1), dtype=np.uint64).astype(np.int64), conv)  # wraps
    else:
        sv = np_as(np.array(float(s)), conv)
    if reflected and op == "div":
        # `s / x` is x.reciprocal() * s, as in PyTorch (same values to the last bit)
        r = ref_op(lambda v: 1.0 / v, [x.n], [tn], res)
        want = ref_op(np.multiply, [r, sv], [res, conv], res)
    elif reflected:
        want = binary_reference(op, sv, conv, x.n, tn, p)
    else:
        want = binary_reference(op, x.n, tn, sv, conv, p)
    ulps = bo.ulps.get(res, 0) if is_float(res) else 0
    check_result(got, want, res, ulps, zero_sign=bo.zero_sign and ulps == 0,
                 what=f"{op}({'scalar, x' if reflected else 'x, scalar'}) x={x!r} s={s!r}")


SCALARS = [True, False, 0, 1, 3, -2, 300, 70000, 2.5, -0.75, 1e10, INF, -INF, NAN, -0.0]


@pytest.mark.parametrize("op", SCALAR_OPS)
def test_scalar_operand_matches_torch(torch, op):
    """Each op with a tensor of every dtype and Python numbers (bool, int, float, special)
    on either side: error class, result dtype and values against torch."""
    bo = BINARY[op]
    failures = []
    for tn in DTYPES:
        for s in SCALARS:
            for reflected in ((False, True) if op in OPERATOR else (False,)):
                if scalar_skip(op, tn, s, reflected):
                    continue
                vals = table_values(tn, nonneg=reflected and op == "pow",
                                    nonzero=reflected and bo.domain == "divisor")
                if reflected and bo.domain == "shift" and not is_float(tn):
                    vals = table_values(tn, nonneg=True)[:5]
                x = plain(vals, tn, torch)
                if reflected:
                    f = lambda lib, t: OPERATOR[op](s, t)      # noqa: E731
                else:
                    f = lambda lib, t: bo.call(lib, t, s)      # noqa: E731
                what = f"{op}({'s, x' if reflected else 'x, s'}) x: {tn}, s={s!r}"
                try:
                    ours, theirs = run(f, tl, x.t), run(f, torch, x.p)
                    if same_outcome(ours, theirs, what):
                        exact = bo.torch_exact or (bo.ulps is ROUNDED and dname(ours[0]) not in REDUCED)
                        if dname(ours[0]) in REDUCED and op == "floor_divide":
                            check_torch_units(ours[0], theirs[0], what)
                        else:
                            check_torch(ours[0], theirs[0], exact=exact, zero_sign=bo.zero_sign, what=what)
                except AssertionError as e:
                    failures.append(str(e).splitlines()[0])
    assert not failures, "\n".join(failures[:20])


# ---------------------------------------------------------------------------------------------
# type promotion with Python numbers and 0-d tensors

PROMOTION_OPS = {
    "add": lambda lib, a, b: a + b, "mul": lambda lib, a, b: a * b,
    "rmul": lambda lib, a, b: b * a, "div": lambda lib, a, b: a / b,
    "rdiv": lambda lib, a, b: b / a, "floordiv": lambda lib, a, b: a // b,
    "mod": lambda lib, a, b: a % b, "pow": lambda lib, a, b: a ** b,
    "rpow": lambda lib, a, b: b ** a, "eq": lambda lib, a, b: a == b,
    "and": lambda lib, a, b: a & b, "sub": lambda lib, a, b: a - b,
    "fmod": lambda lib, a, b: lib.fmod(a, b),
    "where": lambda lib, a, b: lib.where(lib.ones(1, dtype=lib.bool), a, b),
    "where_r": lambda lib, a, b: lib.where(lib.ones(1, dtype=lib.bool), b, a),
    "clamp": lambda lib, a, b: lib.clamp(a, b),
    "maximum": lambda lib, a, b: lib.maximum(a, b if isinstance(b, lib.Tensor) else lib.tensor(b)),
    "atan2": lambda lib, a, b: lib.atan2(a, b) if isinstance(b, lib.Tensor) else a,
}


def _promotion_operand(lib, kind, spec):
    """The Python number ``spec`` (kind "scalar"), or a 1-d or 0-d tensor of dtype ``spec``."""
    if kind == "scalar":
        return spec
    return lib.ones((2,) if kind == "1d" else (), dtype=getattr(lib, spec))


@pytest.mark.parametrize("op", list(PROMOTION_OPS))
def test_promotion_with_scalars_and_0d_tensors_matches_torch(torch, op):
    """The result dtype of each op for a 1-d or 0-d tensor of every dtype meeting a Python
    bool/int/float, a 0-d tensor or a 1-d tensor of every dtype: as torch (errors included)."""
    f = PROMOTION_OPS[op]
    others = [("scalar", v) for v in (True, 2, 2.5)] + \
        [(k, n) for k in ("0d", "1d") for n in DTYPES]
    failures = []
    for kind_a in ("1d", "0d"):
        for an in DTYPES:
            for kind_b, bn in others:
                if op == "sub" and kind_b == "scalar" and bn is True:
                    continue             # test_sub_with_python_bool_raises
                if op in ("pow", "rpow") and an == "bool" and bn is True:
                    continue             # torch special-cases x ** True
                if op == "clamp" and an == "bool" and kind_b != "scalar" and bn == "bool":
                    continue             # test_clamp_bool_with_bool_tensor_bound
                ours = run(lambda: dname(f(tl, _promotion_operand(tl, kind_a, an), _promotion_operand(tl, kind_b, bn))))
                theirs = run(lambda: dname(f(torch, _promotion_operand(torch, kind_a, an), _promotion_operand(torch, kind_b, bn))))
                what = f"{op}({kind_a} {an}, {kind_b} {bn})"
                try:
                    if same_outcome(ours, theirs, what):
                        assert ours[0] == theirs[0], f"{what}: {ours[0]} != torch {theirs[0]}"
                except AssertionError as e:
                    failures.append(str(e).splitlines()[0])
    assert not failures, "\n".join(failures[:20])


@pytest.mark.parametrize("a, b, want", [
    (("float16", 1), 2.5, HALF_TIMES_PY_FLOAT_DTYPE),   # a Python float is weak
    (("bfloat16", 1), 2.5, "bfloat16"),
    (("int32", 1), 2.5, "float32"),                      # ints with a float: the default dtype
    (("int8", 1), 1000, "int8"),                         # a Python int is weak (wraps)
    (("bool", 1), True, "bool"),
    (("bool", 1), 3, "int64"),
    (("bool", 1), ("bool", 1), "bool"),
    (("uint8", 1), ("int8", 1), "int16"),
    (("float16", 1), ("bfloat16", 1), "float32"),
    (("float32", 1), ("float64", 0), "float32"),         # a 0-d tensor only counts by category
    (("int8", 1), ("int64", 0), "int8"),
    (("int8", 1), ("float64", 0), "float64"),            # ... unless of a higher category
    (("float16", 0), ("float64", 0), "float64"),
    (("bool", 1), ("uint8", 0), "uint8"),
    (("int64", 1), ("float16", 0), "float16"),
])
def test_promotion_rules(a, b, want):
    """PyTorch's promotion rules in the result dtype of ``a * b`` (and of our reference)."""
    want = np.dtype(want).name if not isinstance(want, str) else want
    assert result_dtype(a, b) == want
    x = tl.ones((3,) if a[1] else (), dtype=tl_dtype(a[0]))
    y = tl.ones((3,) if b[1] else (), dtype=tl_dtype(b[0])) if isinstance(b, tuple) else b
    assert dname(x * y) == want and dname(y * x) == want
    assert dname(tl.add(x, y)) == want and dname(tl.result_type(x, y)) == want


def test_half_times_python_float_keeps_half():
    """``half * 2.5`` stays float16 (weak Python float) and computes like torch."""
    x = tl.tensor([1.5, -2.0, 65504.0], dtype=tl.float16)
    y = x * 2.5
    assert y.dtype == tl.float16
    check_result(y, np.array([3.75, -5.0, np.inf], dtype=np.float16), "float16")
    assert (2.5 * x).dtype == tl.float16 and (x / 2.5).dtype == tl.float16


# ---------------------------------------------------------------------------------------------
# integer semantics: wraparound, INT_MIN / -1, division by zero

@pytest.mark.parametrize("name", INT_DTYPES)
def test_integer_overflow_wraps(name):
    """add/sub/mul/neg/abs/square/pow/shifts wrap around on overflow, as in PyTorch (and
    NumPy's fixed-width integers)."""
    assert INTEGERS_WRAP
    info = np.iinfo(name)
    a = np.array([info.max, info.min, info.max - 1, info.min + 1, 3], dtype=name)
    b = np.array([1, -1 if info.min else 1, info.max, 2, info.max], dtype=name)
    x, y = tl.from_numpy(a), tl.from_numpy(b)
    with np.errstate(over="ignore"):
        check_result(x + y, a + b, name)
        check_result(x - y, a - b, name)
        check_result(x * y, a * b, name)
        check_result(x.add(y, alpha=3), (a.astype(np.int64) + 3 * b.astype(np.int64)).astype(name), name)
        check_result(-x, (-a.astype(np.int64)).astype(name), name)
        check_result(x.abs(), np.abs(a.astype(np.int64)).astype(name), name)
        check_result(x.square(), (a.astype(np.int64) ** 2).astype(name), name)
        check_result(x ** 3, (a.astype(np.int64) ** 3).astype(name), name)
        check_result(x + 1, (a.astype(np.int64) + 1).astype(name), name)
        check_result(x << 1, (a.astype(np.int64) << 1).astype(name), name)
    assert (tl.tensor([info.max], dtype=tl_dtype(name)) + 1).item() == info.min


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64"])
def test_int_min_divided_by_minus_one(name):
    """INT_MIN // -1 wraps to INT_MIN and INT_MIN % -1 is 0 (no trap); fmod and the rounding
    modes of div agree."""
    m = int(np.iinfo(name).min)
    x = tl.tensor([m, m, 7], dtype=tl_dtype(name))
    assert (x // -1).tolist() == [m, m, -7]
    assert (x % -1).tolist() == [0, 0, 0]
    assert x.fmod(-1).tolist() == [0, 0, 0]
    assert x.div(-1, rounding_mode="floor").tolist() == [m, m, -7]
    assert x.div(-1, rounding_mode="trunc").tolist() == [m, m, -7]     # (torch traps here)
    d = tl.tensor([-1, -1, -1], dtype=tl_dtype(name))
    assert (x // d).tolist() == [m, m, -7] and (x % d).tolist() == [0, 0, 0]
    assert x.remainder(d).dtype == tl_dtype(name)


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64"])
def test_int_min_divided_by_minus_one_matches_torch(torch, name):
    """INT_MIN // -1, % -1 and fmod -1 as torch (whose trunc division traps, so not that)."""
    m = int(np.iinfo(name).min)
    x, p = tl.tensor([m, 5], dtype=tl_dtype(name)), torch.tensor([m, 5], dtype=getattr(torch, name))
    for f in (lambda v: v // -1, lambda v: v % -1, lambda v: v.fmod(-1),
              lambda v: v.div(-1, rounding_mode="floor"), lambda v: v.remainder(v.new_full((2,), -1))):
        check_torch(f(x), f(p))


DIV_BY_ZERO = {
    "floordiv": lambda x, z: x // z, "mod": lambda x, z: x % z,
    "floor_divide": lambda x, z: x.floor_divide(z), "remainder": lambda x, z: tl_or(x).remainder(x, z),
    "fmod": lambda x, z: x.fmod(z), "div_trunc": lambda x, z: x.div(z, rounding_mode="trunc"),
    "div_floor": lambda x, z: x.div(z, rounding_mode="floor"),
    "rfloordiv": lambda x, z: 5 // (x * 0 + z) if not isinstance(z, int) else 5 // (x * 0),
    "rmod": lambda x, z: 5 % (x * 0 + z) if not isinstance(z, int) else 5 % (x * 0),
    "ifloordiv": lambda x, z: x.__ifloordiv__(z), "imod": lambda x, z: x.__imod__(z),
}


def tl_or(x):
    """The library a tensor belongs to (tensorlib or torch)."""
    return tl if isinstance(x, tl.Tensor) else sys.modules["torch"]


@pytest.mark.cpu_only("the device gives -1, unchecked, as PyTorch's CUDA kernels")
@pytest.mark.parametrize("zero", ["scalar", "tensor", "broadcast"])
@pytest.mark.parametrize("op, name", [(op, n) for op in DIV_BY_ZERO for n in ("bool", "uint8", "int32", "int64")
                                      if n != "bool" or op in ("rfloordiv", "rmod")])
def test_integer_division_by_zero_raises(op, zero, name):
    """Integer floor/trunc division, remainder and fmod by zero (a Python 0, a zero element,
    a broadcast zero; reflected ``5 // x``; in place) raise RuntimeError("ZeroDivisionError"),
    as in PyTorch (bool // bool is not implemented at all, so bool only as a reflected
    divisor)."""
    x = tl.tensor([[4, 6, 3], [1, 2, 5]], dtype=tl_dtype(name)) if name != "bool" else \
        tl.tensor([[True, False, True], [True, True, True]])
    z = 0 if zero == "scalar" else tl.tensor([1, 0, 2], dtype=tl_dtype(name)) if zero == "tensor" \
        else tl.zeros((2, 1), dtype=tl_dtype(name))
    if name == "bool" and zero != "scalar":
        z = tl.tensor([True, False, True]) if zero == "tensor" else tl.zeros((2, 1), dtype=tl.bool)
    before = x.clone()
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        DIV_BY_ZERO[op](x, z)
    assert tl.equal(x, before)            # an in-place op that raised wrote nothing


@pytest.mark.cpu_only("the device gives -1, unchecked, as PyTorch's CUDA kernels")
@pytest.mark.parametrize("op", ["floordiv", "mod", "fmod", "div_trunc", "div_floor"])
@pytest.mark.parametrize("divisor", [512, -256, 256])
def test_a_divisor_of_a_wider_dtype_that_is_zero_in_the_loop_raises(op, divisor):
    """A 0-d int16 divisor promotes to the other operand's uint8/int8: 512 is 0 there, and
    the C loop would trap (SIGFPE) if it reached it."""
    for name in ("uint8", "int8"):
        x = tl.tensor([215, 216, 122], dtype=tl.uint8) if name == "uint8" else \
            tl.tensor([5, -7, 3], dtype=tl.int8)
        with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
            DIV_BY_ZERO[op](x, tl.tensor(divisor, dtype=tl.int16))


@pytest.mark.cpu_only("the device gives -1, unchecked, as PyTorch's CUDA kernels")
@pytest.mark.parametrize("op", ["floordiv", "mod", "fmod", "div_trunc", "div_floor", "rfloordiv", "rmod"])
def test_integer_division_by_zero_message_matches_torch(torch, op):
    """The exception class and message of integer division by zero are torch's."""
    f = DIV_BY_ZERO[op]
    for z in (0, "t"):
        e1 = run(f, tl.tensor([3, 4]), 0 if z == 0 else tl.tensor([1, 0]))[1]
        e2 = run(f, torch.tensor([3, 4]), 0 if z == 0 else torch.tensor([1, 0]))[1]
        assert e1 is not None and e2 is not None
        assert type(e1) is type(e2) and str(e1) == str(e2), (e1, e2)


@pytest.mark.parametrize("name", FLOAT_DTYPES)
def test_float_division_by_zero_gives_inf_and_nan(name):
    """Float division (true, floor, trunc), remainder and fmod by zero give IEEE infinities
    and NaN, never an error; integers divided by 0 (true division) too."""
    x = tl.tensor([1.0, -1.0, 0.0, INF, NAN], dtype=tl_dtype(name))
    with np.errstate(all="ignore"):
        for z in (0.0, -0.0):
            a = np_as(np.array([1.0, -1.0, 0.0, INF, NAN]), name).astype(np.float64)
            check_values(to_numpy(x / z), np.divide(a, z), name, zero_sign=True)
            check_values(to_numpy(x.div(z, rounding_mode="trunc")), np.divide(a, z), name)
            check_values(to_numpy(x.div(z, rounding_mode="floor")), np.divide(a, z), name)
            check_values(to_numpy(x // z), np.divide(a, z), name)
            check_values(to_numpy(x % z), np.full(5, np.nan), name)
            check_values(to_numpy(x.fmod(z)), np.full(5, np.nan), name)
        check_values(to_numpy(x / tl.zeros(5, dtype=tl_dtype(name))), np.divide(a, 0.0), name)
    y = tl.tensor([3, -3, 0]) / 0
    assert y.dtype == tl.float32
    check_values(to_numpy(y), np.array([INF, -INF, NAN]), "float32")
    check_values(to_numpy(tl.tensor([3, 0]).reciprocal()), np.array([0.33333334, INF]), "float32", ulps=1)
    check_values(to_numpy(3 / tl.tensor([0, -0.0])), np.array([INF, -INF]), "float32")


def test_float_division_by_zero_matches_torch(torch):
    """Float and integer true division by zero as torch (values and signs)."""
    for lib_expr in (lambda L: L.tensor([1.0, -1.0, 0.0, INF, NAN]) / 0,
                     lambda L: L.tensor([1.0, -1.0, 0.0]) / -0.0,
                     lambda L: L.tensor([2, -2, 0]) / 0,
                     lambda L: L.tensor([2, -2, 0]) / L.tensor([0, 0, 0]),
                     lambda L: L.tensor([1.0, -1.0, 0.0, 5.5]) // 0,
                     lambda L: L.tensor([1.0, -1.0, 0.0, 5.5]) % 0,
                     lambda L: L.tensor([1.0, -1.0, 0.0, 5.5]).fmod(0.0),
                     lambda L: 5 / L.tensor([0.0, -0.0, 2.0]),
                     lambda L: 5 // L.tensor([0.0, -0.0, 2.0]),
                     lambda L: 5 % L.tensor([0.0, -0.0, 2.0])):
        check_torch(lib_expr(tl), lib_expr(torch))


# ---------------------------------------------------------------------------------------------
# clamp / clip / clamp_min / clamp_max

def in_range_scalars(name):
    """Python numbers that are values of dtype ``name`` (bounds torch accepts unconverted)."""
    if name == "bool":
        return st.sampled_from([0, 1])
    if is_float(name):
        return st.one_of(small_elements(name), st.sampled_from([INF, -INF]))
    info = np.iinfo(name)
    return st.integers(int(info.min), int(info.max))


@st.composite
def clamp_bound(draw, name, shape):
    """None, a Python number or a tensor (broadcastable to ``shape``, any dtype) as a bound."""
    kind = draw(st.sampled_from(["none", "scalar", "scalar", "tensor"]))
    if kind == "none":
        return None
    if kind == "scalar":
        return draw(st.one_of(in_range_scalars(name), st.integers(-3, 3).map(lambda k: k + 0.5)))
    bn = draw(st.sampled_from([n for n in DTYPES if n != "bool"]))
    sub = shape[draw(st.integers(0, len(shape))):]
    sub = tuple(1 if draw(st.booleans()) else n for n in sub)
    return draw(operands(sub, bn, elems=with_specials(bn, small_elements(bn))))


def _bound_ref(b, res):
    """A clamp bound as reference values in the result dtype's compute type."""
    if b is None:
        return None
    v = np_as(b.n if isinstance(b, Operand) else np.array(b), res)
    return v.astype(np.float64 if is_float(res) else np.int64)


@given(data=st.data())
def test_clamp_matches_numpy(data):
    """clamp/clip with scalar or tensor bounds (either may be None; min > max gives max;
    NaN in x or in a tensor bound propagates; bounds take part in type promotion)."""
    name = data.draw(st.sampled_from(DTYPES), "dtype")
    shape = data.draw(SHAPES, "shape")
    x = data.draw(operands(shape, name, elems=with_specials(name, elements(name)) if name != "bool"
                           else st.booleans()), "x")
    lo, hi = data.draw(clamp_bound(name, shape), "min"), data.draw(clamp_bound(name, shape), "max")
    targ = lambda b: b.t if isinstance(b, Operand) else b          # noqa: E731
    if lo is None and hi is None:
        with pytest.raises(RuntimeError, match="At least one of 'min' or 'max' must not be None"):
            tl.clamp(x.t, None, None)
        return
    if lo is not None and hi is not None and isinstance(lo, Operand) != isinstance(hi, Operand):
        # PyTorch's overloads take two tensor bounds or two numbers, where a 0-d tensor reads
        # as a number (found by the fuzzer)
        t = lo if isinstance(lo, Operand) else hi
        if len(t.shape):
            with pytest.raises(TypeError, match="invalid combination of arguments"):
                tl.clamp(x.t, targ(lo), targ(hi))
        else:
            num = lambda b: b.t.item() if isinstance(b, Operand) else b    # noqa: E731
            got, want = tl.clamp(x.t, targ(lo), targ(hi)), tl.clamp(x.t, num(lo), num(hi))
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(to_numpy(got), to_numpy(want))   # (NaN == NaN)
        return
    ops = [(name, len(shape))] + [(b.name, len(b.shape)) if isinstance(b, Operand) else b
                                  for b in (lo, hi) if b is not None]
    res = result_dtype(*ops)
    if name == "bool" and res == "bool":
        return                              # test_clamp_bool_with_bool_tensor_bound
    got = data.draw(st.sampled_from(["clamp", "clip", "method"]), "form")
    got = {"clamp": tl.clamp, "clip": tl.clip, "method": tl.Tensor.clamp}[got](x.t, targ(lo), targ(hi))
    v = np_as(x.n, res).astype(np.float64 if is_float(res) else np.int64)
    with np.errstate(invalid="ignore"):
        if lo is not None:
            v = np.maximum(v, _bound_ref(lo, res))
        if hi is not None:
            v = np.minimum(v, _bound_ref(hi, res))
    check_result(got, np_as(v, res), res, what=f"clamp({x!r}, {lo!r}, {hi!r})")


@given(data=st.data())
def test_clamp_min_max_are_one_sided_clamps(data):
    """clamp_min(m) is clamp(min=m) and clamp_max(m) is clamp(max=m), scalar or tensor m."""
    name = data.draw(st.sampled_from([n for n in DTYPES if n != "bool"]), "dtype")
    shape = data.draw(SHAPES, "shape")
    x = data.draw(operands(shape, name), "x")
    m = data.draw(st.one_of(in_range_scalars(name), operands((), name)), "m")
    m = m.t if isinstance(m, Operand) else m
    for one, both in ((tl.clamp_min(x.t, m), tl.clamp(x.t, min=m)),
                      (tl.clamp_max(x.t, m), tl.clamp(x.t, max=m)),
                      (x.t.clamp_min(m), x.t.clamp(m)), (x.t.clamp_max(m), x.t.clamp(None, m))):
        assert one.dtype == both.dtype
        check_values(to_numpy(one), to_numpy(both), dname(one))


def test_clamp_min_greater_than_max_gives_max():
    """min > max sets every element to max (scalar and tensor bounds), as torch documents."""
    x = tl.tensor([-5.0, 0.0, 5.0, NAN])
    assert to_numpy(x.clamp(3, 1))[:3].tolist() == [1.0, 1.0, 1.0]
    assert to_numpy(tl.clamp(x, tl.tensor(3.0), tl.tensor([1.0])))[:3].tolist() == [1.0, 1.0, 1.0]
    assert tl.tensor([1, 5, 9]).clamp(7, 2).tolist() == [2, 2, 2]
    assert math.isnan(x.clamp(3, 1)[3].item())


CLAMP_BOUNDS = [(0, 3), (-1.5, 2.5), (None, 2), (1, None), (3, 1), (-100, 100), (0.5, None),
                (None, -0.5), (INF, None), (None, -INF), (NAN, None), (None, NAN),
                ("t", "t"), ("t", None), (None, "t"), ("tnan", "t"), ("t", "tnan")]


@pytest.mark.parametrize("lo, hi", CLAMP_BOUNDS, ids=str)
def test_clamp_matches_torch(torch, lo, hi):
    """clamp of every dtype with numeric, infinite, NaN and tensor bounds against torch."""
    failures = []
    for name in DTYPES:
        x = plain(table_values(name, extremes=False), name, torch)

        def bound(b, lib, k):
            if b == "t":
                return lib.tensor([[-1.0 + k], [2.0 + k]], dtype=lib.float32)
            if b == "tnan":
                return lib.tensor([[NAN], [1.0]], dtype=lib.float64)
            return b
        ours = run(lib_clamp, tl, x.t, bound(lo, tl, 0), bound(hi, tl, 1))
        theirs = run(lib_clamp, torch, x.p, bound(lo, torch, 0), bound(hi, torch, 1))
        what = f"clamp({name}, {lo}, {hi})"
        if name == "bool" and isinstance(lo, str) or name == "bool" and isinstance(hi, str):
            continue                      # test_clamp_bool_with_bool_tensor_bound
        if name == "uint8" and any(isinstance(b, int) and b < 0 for b in (lo, hi)):
            continue                      # test_out_of_range_scalar_raises_like_torch
        try:
            if same_outcome(ours, theirs, what):
                check_torch(ours[0], theirs[0], zero_sign=False, what=what)
        except AssertionError as e:
            failures.append(str(e).splitlines()[0])
    assert not failures, "\n".join(failures)


def lib_clamp(lib, x, lo, hi):
    return lib.clamp(x, lo, hi)


def test_clamp_with_a_number_reads_a_0d_bound_as_a_number(torch):
    """clamp(x, t0d, 1.5) is PyTorch's Number overload (ClampBackward1): the 0-d bound is
    read as a number, not saved, so writing into it before backward is no error; with two
    tensor bounds (or a tensor and None) it is the Tensor overload and saved."""
    for lib in (tl, torch):
        x = lib.tensor([0.2, 0.9, 2.0], dtype=lib.float64, requires_grad=True)
        lo = lib.tensor(0.5, dtype=lib.float64)
        y = lib.clamp(x, lo, 1.5)
        assert type(y.grad_fn).__name__ == "ClampBackward1"
        with lib.no_grad():
            lo.add_(1.0)
        y.sum().backward()
        assert x.grad.tolist() == [0.0, 1.0, 0.0]
        z = lib.clamp(x, lo, None)
        assert type(z.grad_fn).__name__ == "ClampBackward0"
        with lib.no_grad():
            lo.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()


def test_clamp_one_tensor_bound_and_a_number_fail_before_the_tensors_are_read(torch):
    """A tensor bound beside a number fits neither of PyTorch's overloads: the argument
    parser's TypeError comes first, before the autograd check of an input (here a chunk
    output written in place, whose use would raise RuntimeError)."""
    for lib in (tl, torch):
        base = lib.zeros(4, requires_grad=True)
        part = base.chunk(2)[0]
        with lib.no_grad():
            part.clamp_(None, 2)
        bound = lib.zeros(2)
        for args in ((bound, 1.5), (0.5, bound)):
            with pytest.raises(TypeError, match=r"clamp\(\) received an invalid combination"):
                lib.clamp(part, *args)
        with pytest.raises(RuntimeError, match="is a view and its base"):
            lib.clamp(part, bound, None)


def test_clamp_nan_min_with_max():
    """A NaN scalar min makes every result NaN, also with a max (torch: min(max(x, nan), m))."""
    got = tl.tensor([3.0, 0.0]).clamp(NAN, 2.0)
    assert np.isnan(to_numpy(got)).all(), got


def test_clamp_bool_with_bool_tensor_bound(torch):
    """clamp(bool, min/max bool tensors) is defined in torch (a maximum, then a minimum)."""
    got = tl.clamp(tl.tensor([True, False]), min=tl.tensor([True, True]))
    assert got.dtype == tl.bool and got.tolist() == [True, True]
    x, lo, hi = [True, False, True, False], [False, False, True, True], [True, False, False, True]
    for kw in ({"min": lo}, {"max": hi}):
        check_torch(tl.clamp(tl.tensor(x), **{k: tl.tensor(v) for k, v in kw.items()}),
                    torch.clamp(torch.tensor(x), **{k: torch.tensor(v) for k, v in kw.items()}))
    check_torch(tl.clamp_min(tl.tensor(x), tl.tensor(lo)),
                torch.clamp_min(torch.tensor(x), torch.tensor(lo)))
    # both bounds at once: not implemented for bool, in torch too
    f = lambda L: L.clamp(L.tensor(x), L.tensor(lo), L.tensor(hi))
    e1, e2 = run(f, tl)[1], run(f, torch)[1]
    assert type(e1) is type(e2) is NotImplementedError and str(e1) == str(e2), (e1, e2)


# ---------------------------------------------------------------------------------------------
# round(decimals), nan_to_num, lerp

def _round_ref(x, name, d):
    """torch's definition in the compute type (float32 for float16/bfloat16): rint(x * 10^d)
    / 10^d, or rint(x / 10^-d) * 10^-d."""
    ct = np.float64 if name == "float64" else np.float32
    v = np.asarray(x).astype(ct)
    ten = ct(10.0 ** abs(d))
    with np.errstate(all="ignore"):
        r = np.rint(v / ten) * ten if d < 0 else np.rint(v * ten) / ten
    return np_as(r, name)


@given(data=st.data())
def test_round_decimals_matches_numpy(data):
    """round(decimals=d) for float dtypes: half to even at the d-th decimal (negative d rounds
    to tens, hundreds...); decimals=0 is round(); integers raise for d != 0."""
    name = data.draw(st.sampled_from(FLOAT_DTYPES), "dtype")
    d = data.draw(st.integers(-4, 6), "decimals")
    x = data.draw(operands(data.draw(SHAPES, "shape"), name, elems=math_elements(name, -1e5, 1e5)), "x")
    got = tl.round(x.t, decimals=d)
    check_result(got, _round_ref(x.n, name, d) if d else np_as(np.round(x.n.astype(np.float64)), name),
                 name, what=f"round({x!r}, decimals={d})")
    check_values(to_numpy(x.t.round(decimals=d)), to_numpy(got), name)


def test_round_decimals_of_integers_raises():
    """round(decimals != 0) of integer tensors raises (torch: NotImplementedError)."""
    for name in ["uint8", "int32", "int64"]:
        with pytest.raises(RuntimeError):
            tl.round(tl.tensor([15], dtype=tl_dtype(name)), decimals=-1)
        assert tl.round(tl.tensor([15], dtype=tl_dtype(name))).tolist() == [15]


@pytest.mark.parametrize("d", [-3, -1, 1, 2, 3, 5])
@pytest.mark.parametrize("name", FLOAT_DTYPES)
def test_round_decimals_matches_torch(torch, name, d):
    """round(decimals) against torch on a grid of values with ties."""
    vals = np.concatenate([MATH_GRID, np.arange(-30, 30) * 0.125 + 0.0625, [1234.5678, -0.5, 0.5, 2.5e4]])
    x = plain(vals, name, torch)
    check_torch(tl.round(x.t, decimals=d), torch.round(x.p, decimals=d),
                exact=name not in REDUCED, zero_sign=False)


@given(data=st.data())
def test_nan_to_num_matches_numpy(data):
    """nan_to_num replaces NaN, +inf, -inf (defaults: 0 and the dtype's extremes; explicit
    values converted to the dtype, so out-of-range ones become inf); integers are copied."""
    name = data.draw(st.sampled_from([n for n in DTYPES if n != "bool"]), "dtype")
    x = data.draw(operands(data.draw(SHAPES, "shape"), name, elems=with_specials(name, elements(name))), "x")
    opt = st.one_of(st.none(), st.floats(-1e6, 1e6, allow_nan=False))
    nan, pos, neg = data.draw(opt, "nan"), data.draw(opt, "posinf"), data.draw(opt, "neginf")
    kw = {k: v for k, v in (("nan", nan), ("posinf", pos), ("neginf", neg)) if v is not None}
    got = tl.nan_to_num(x.t, **kw)
    assert got.data_ptr() != x.t.data_ptr() or got.numel() == 0
    if not is_float(name):
        check_result(got, x.n, name)
        return
    v = x.n.astype(np.float64)
    rep = lambda val, default: float(np_as(np.array(default if val is None else val), name))  # noqa: E731
    want = np.where(np.isnan(v), rep(nan, 0.0),
                    np.where(v == INF, rep(pos, FMAX[name]), np.where(v == -INF, rep(neg, -FMAX[name]), v)))
    check_result(got, np_as(want, name), name, what=f"nan_to_num({x!r}, {kw})")


@pytest.mark.parametrize("kw", [{}, {"nan": 1.5}, {"posinf": 2.0, "neginf": -3.0}, {"posinf": 1e6},
                                {"nan": 1e10, "neginf": 0.0}], ids=str)
def test_nan_to_num_matches_torch(torch, kw):
    """nan_to_num of every dtype against torch (bool: test_unary_matches_torch)."""
    for name in DTYPES:
        if name == "bool":
            continue
        x = plain(unary_input_values("nan_to_num", name), name, torch)
        check_torch(tl.nan_to_num(x.t, **kw), torch.nan_to_num(x.p, **kw), what=f"{name} {kw}")
        check_torch(x.t.clone().nan_to_num_(**kw), x.p.clone().nan_to_num_(**kw))


def _lerp_ref(s, e, w, name):
    s, e, w = (np_as(v, name).astype(np.float64) for v in (s, e, w))
    with np.errstate(all="ignore"):
        return np.where(np.abs(w) < 0.5, s + w * (e - s), e - (e - s) * (1 - w))


@given(data=st.data())
def test_lerp_matches_numpy(data):
    """lerp(start, end, weight) with a Python float or a tensor weight, broadcasting, for the
    float dtypes: start + weight * (end - start) within a couple of ulps of the operands, and
    exactly end at weight 1 and start at weight 0."""
    name = data.draw(st.sampled_from(FLOAT_DTYPES), "dtype")
    (s1, s2, s3), shape = data.draw(hnp.mutually_broadcastable_shapes(
        num_shapes=3, min_dims=0, max_dims=3, min_side=0, max_side=3), "shapes")
    el = math_elements(name, -1e3, 1e3).filter(math.isfinite)
    a = data.draw(operands(s1, name, elems=el), "start")
    b = data.draw(operands(s2, name, elems=el), "end")
    if data.draw(st.booleans(), "tensor weight"):
        w = data.draw(operands(s3, name, elems=math_elements(name, -2.0, 2.0).filter(math.isfinite)), "w")
        got, wn = tl.lerp(a.t, b.t, w.t), w.n
    else:
        wv = data.draw(st.sampled_from([0.0, 1.0, 0.5, 0.25, -1.0, 1.5, 0.3]), "w")
        got, wn, shape = tl.lerp(a.t, b.t, wv), np.float64(wv), np.broadcast_shapes(s1, s2)
    assert tuple(got.shape) == tuple(shape)
    want = _lerp_ref(a.n, b.n, wn, name)
    big = np.maximum(np.abs(a.n.astype(np.float64)), np.abs(b.n.astype(np.float64)))
    slack = 2 * spacing(np.broadcast_to(big, want.shape), name) * np.maximum(1, np.abs(wn))
    check_result(got, np_as(want, name), name, ulps=1, slack=slack, what=f"lerp({a!r}, {b!r}, {wn!r})")
    if isinstance(wn, np.float64) and wn in (0.0, 1.0):
        check_values(to_numpy(got), np.broadcast_to(to_numpy(a.t if wn == 0 else b.t), want.shape), name)


def test_lerp_matches_torch(torch):
    """lerp with scalar and tensor weights for the float dtypes against torch (finite values:
    torch's own results with infinities are NaN where the limit exists)."""
    vals = MATH_GRID[np.isfinite(MATH_GRID)]
    for name in FLOAT_DTYPES:
        a, b = plain(vals, name, torch), plain(vals[::-1].copy(), name, torch)
        for w in (0.0, 0.3, 0.5, 0.75, 1.0, -1.0, 2.0):
            check_torch(tl.lerp(a.t, b.t, w), torch.lerp(a.p, b.p, w), exact=False, what=f"{name} w={w}")
        w = plain(np.linspace(-1, 2, len(vals)), name, torch)
        check_torch(tl.lerp(a.t, b.t, w.t), torch.lerp(a.p, b.p, w.p), exact=False)
        check_torch(a.t.lerp(b.t, 0.3), a.p.lerp(b.p, 0.3), exact=False)
    with pytest.raises(RuntimeError):
        tl.lerp(tl.tensor([1, 2]), tl.tensor([3, 4]), 0.5)


LERP_MISMATCHED = {
    "end float64": lambda L: L.lerp(L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0], dtype=L.float64),
                                    0.5),
    "end 0-d float64": lambda L: L.lerp(L.tensor([1.0, 2.0]), L.tensor(3.0, dtype=L.float64), 0.5),
    "end half": lambda L: L.lerp(L.tensor([1.0, 2.0], dtype=L.float64),
                                 L.tensor([3.0, 4.0], dtype=L.float16), 0.5),
    "weight float64": lambda L: L.lerp(L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0]),
                                       L.tensor([0.5, 0.5], dtype=L.float64)),
    "end scalar": lambda L: L.lerp(L.tensor([1.0, 2.0]), 3.0, 0.5),
}


@pytest.mark.parametrize("case", list(LERP_MISMATCHED))
def test_lerp_rejects_mismatched_operands(case, torch):
    """lerp's end and weight tensors must have start's dtype, and end must be a tensor: the
    exception class and message are torch's."""
    f = LERP_MISMATCHED[case]
    e1, e2 = run(f, tl)[1], run(f, torch)[1]
    assert type(e1) is type(e2) and e2 is not None, (e1, e2)
    assert str(e1) == str(e2), (e1, e2)


def test_lerp_accepts_a_0d_weight_of_another_dtype(torch):
    """(A 0-d weight tensor is read as a number, whatever its dtype, in torch too.)"""
    f = lambda L: L.lerp(L.tensor([1.0, 2.0]), L.tensor([3.0, 5.0]), L.tensor(0.5, dtype=L.float64))
    check_torch(f(tl), f(torch))


# ---------------------------------------------------------------------------------------------
# where / masked_fill

@st.composite
def branch(draw, shape):
    """A ``where`` branch: a tensor of any dtype broadcastable to ``shape``, or a Python number."""
    if draw(st.integers(0, 3)) == 0:
        return draw(st.one_of(st.booleans(), st.integers(-100, 100),
                              st.integers(-40, 40).map(lambda k: k / 4), st.sampled_from([INF, NAN])))
    name = draw(st.sampled_from(DTYPES))
    sub = shape[draw(st.integers(0, len(shape))):]
    sub = tuple(1 if draw(st.booleans()) else n for n in sub)
    return draw(operands(sub, name, elems=with_specials(name, small_elements(name))))


@given(data=st.data())
def test_where_matches_numpy(data):
    """where(cond, x, y) with tensor or Python-number branches of any dtypes: broadcasting,
    the promoted dtype (numbers weak), values (exact), strided conditions."""
    (sc, sx), shape = data.draw(PAIRS, "shapes")
    cond = data.draw(operands(sc, "bool"), "cond")
    x, y = data.draw(branch(shape), "x"), data.draw(branch(shape), "y")
    ops = [(v.name, len(v.shape)) if isinstance(v, Operand) else v for v in (x, y)]
    res = result_dtype(*ops)
    arg = lambda v: v.t if isinstance(v, Operand) else v         # noqa: E731
    got = tl.where(cond.t, arg(x), arg(y))
    val = lambda v: np_as(v.n if isinstance(v, Operand) else np.array(v), res)   # noqa: E731
    want = np.where(cond.n, val(x), val(y))
    assert tuple(got.shape) == want.shape
    check_result(got, want, res, what=f"where({cond!r}, {x!r}, {y!r})")


def test_where_condition_dtypes():
    """The condition must be bool (uint8 is accepted, as torch still does); other dtypes raise
    with torch's message."""
    assert tl.where(tl.tensor([1, 0], dtype=tl.uint8), 1.0, 0.0).tolist() == [1.0, 0.0]
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor, but "
                                           "got a tensor with dtype Long"):
        tl.where(tl.tensor([1, 0]), 1.0, 0.0)


def test_where_matches_torch(torch):
    """where with every pair of branch dtypes, and Python-number branches, against torch."""
    cond_v = np.array([True, False, True, False, True, False, True])
    failures = []
    for an in DTYPES + ["py_int", "py_float", "py_bool"]:
        for bn in DTYPES + ["py_int", "py_float"]:
            def make(n, k):
                if n.startswith("py_"):
                    return {"py_int": (-3, -3), "py_float": (2.5, 2.5), "py_bool": (True, True)}[n]
                v = table_values(n, extremes=False)[:7]
                o = plain(np.resize(v, 7)[::k], n, torch)
                return o.t, o.p
            (ta, pa), (tb, pb) = make(an, 1), make(bn, -1)
            c = plain(cond_v, "bool", torch)
            what = f"where({an}, {bn})"
            try:
                ours, theirs = run(tl.where, c.t, ta, tb), run(torch.where, c.p, pa, pb)
                if same_outcome(ours, theirs, what):
                    check_torch(ours[0], theirs[0], what=what)
            except AssertionError as e:
                failures.append(str(e).splitlines()[0])
    assert not failures, "\n".join(failures[:20])


@given(data=st.data())
def test_masked_fill_matches_numpy(data):
    """masked_fill (function, method, in place) with a broadcastable bool mask and a Python
    number or 0-d tensor value, converted to the input's dtype."""
    name = data.draw(st.sampled_from(DTYPES), "dtype")
    shape = data.draw(SHAPES, "shape")
    x = data.draw(operands(shape, name, allow_expand=False), "x")
    sub = shape[data.draw(st.integers(0, len(shape)), "mask dims"):]
    sub = tuple(1 if data.draw(st.booleans()) else n for n in sub)
    mask = data.draw(operands(sub, "bool"), "mask")
    value = data.draw(st.one_of(in_range_scalars(name),
                                st.sampled_from(DTYPES).flatmap(lambda n: operands((), n, elems=small_elements(n)))),
                      "value")
    v = value.t if isinstance(value, Operand) else value
    pv = value.n.item() if isinstance(value, Operand) else value
    if name != "bool" and not is_float(name) and not isinstance(pv, bool):
        # a value outside the dtype raises, as in torch (an int may be negative for uint8)
        info = np.iinfo(np_dtype(name))
        lo = -int(info.max) if name == "uint8" and isinstance(pv, int) else int(info.min)
        if pv != pv or not lo <= pv <= int(info.max):
            with pytest.raises(RuntimeError, match="without overflow"):
                tl.masked_fill(x.t, mask.t, v)
            return
    vn = np_as(value.n if isinstance(value, Operand) else np.array(value), name)
    want = np.where(mask.n, vn, x.n)
    check_result(tl.masked_fill(x.t, mask.t, v), want, name)
    check_result(x.t.masked_fill(mask.t, v), want, name)
    t = x.t.clone() if data.draw(st.booleans(), "clone") else x.t
    ver = t._version
    assert t.masked_fill_(mask.t, v) is t
    assert t._version == ver + 1
    check_result(t, want, name)


def test_masked_fill_broadcasts_and_checks():
    """Out of place the mask may broadcast the input too; in place it may not. Non-bool masks
    and value tensors with dims raise (torch's messages)."""
    assert tl.zeros(3).masked_fill(tl.tensor([[True], [False]]), 1.0).tolist() == [[1.0] * 3, [0.0] * 3]
    with pytest.raises(RuntimeError):
        tl.zeros(3).masked_fill_(tl.tensor([[True], [False]]), 1.0)
    with pytest.raises(RuntimeError, match="masked_fill_ only supports boolean masks, but got mask with dtype"):
        tl.zeros(3).masked_fill(tl.tensor([1, 0, 1], dtype=tl.uint8), 1.0)
    with pytest.raises(RuntimeError, match="masked_fill_ only supports a 0-dimensional value tensor, "
                                           "but got tensor with 1 dimension"):
        tl.zeros(3).masked_fill(tl.tensor([True, False, True]), tl.tensor([1.0]))
    assert tl.tensor([1, 2, 3]).masked_fill(tl.tensor([True, False, True]), 2.7).tolist() == [2, 2, 2]


def test_masked_fill_matches_torch(torch):
    """masked_fill of every dtype with numbers and 0-d tensors of every dtype against torch."""
    mask_v = np.array([True, False, True, False, True, False, True])
    for name in DTYPES:
        x = plain(np.resize(table_values(name, extremes=False), 7), name, torch)
        m = plain(mask_v, "bool", torch)
        for v in [True, 0, 1, -1, 7, 2.7, -0.5]:
            if name == "uint8" and v < 0:
                continue                   # test_out_of_range_scalar_raises_like_torch
            check_torch(x.t.masked_fill(m.t, v), x.p.masked_fill(m.p, v), what=f"{name} {v}")
        for vn in DTYPES:
            v = plain(np.array(table_values(vn)[1]), vn, torch)        # a 0-d tensor
            check_torch(x.t.masked_fill(m.t, v.t), x.p.masked_fill(m.p, v.p), what=f"{name} {vn} tensor")


# ---------------------------------------------------------------------------------------------
# equal / isclose / allclose

@given(data=st.data())
def test_equal_matches_numpy(data):
    """equal(a, b): the same shape and equal elements (NaN is unequal to itself), for any
    dtypes and layouts; a copy, a copy with one element changed, another shape."""
    name = data.draw(st.sampled_from(DTYPES), "dtype")
    shape = data.draw(SHAPES, "shape")
    x = data.draw(operands(shape, name, elems=with_specials(name, elements(name))), "x")
    y = x.t.clone()
    assert tl.equal(x.t, y) == bool(np.array_equal(x.n, to_numpy(y)))
    assert tl.equal(x.t, y) == (not np.isnan(x.n.astype(np.float64)).any() if is_float(name) else True)
    if x.t.numel():
        idx = data.draw(st.tuples(*[st.integers(0, n - 1) for n in shape]), "index")
        y[idx] = tl.tensor(not x.t[idx].item()) if name == "bool" else x.t[idx] + 1
        want = bool(np.array_equal(x.n, to_numpy(y)))
        assert tl.equal(x.t, y) is want and x.t.equal(y) is want
    assert tl.equal(x.t, x.t.reshape(shape + (1,))) is False
    other = data.draw(st.sampled_from(DTYPES), "other dtype")
    if (other in REDUCED or name in REDUCED) and name != other:
        other = "float64"      # test_other_dtypes_are_not_rounded_to_a_reduced_result_first
    z = x.t.to(tl_dtype(other))
    assert tl.equal(x.t, z) is bool(np.array_equal(
        np_as(x.n, result_dtype((name, 1), (other, 1))), np_as(to_numpy(z), result_dtype((name, 1), (other, 1)))))


def test_equal_matches_torch(torch):
    """equal on shape, dtype, NaN, empty and aliasing cases as torch."""
    cases = [lambda L: (L.tensor([1, 2]), L.tensor([1.0, 2.0])),
             lambda L: (L.tensor([1.0, NAN]), L.tensor([1.0, NAN])),
             (lambda L: (lambda x: (x, x))(L.tensor([1.0, NAN]))),
             lambda L: (L.tensor([1.0]), L.tensor([[1.0]])),
             lambda L: (L.zeros(0), L.zeros(0, dtype=L.int64)),
             lambda L: (L.zeros(2, 0), L.zeros(0, 2)),
             lambda L: (L.tensor([0.0]), L.tensor([-0.0])),
             lambda L: (L.tensor([True, False]), L.tensor([1, 0], dtype=L.uint8)),
             lambda L: (L.tensor(3.0), L.tensor([3.0])),
             lambda L: (L.arange(6).view(2, 3).t(), L.arange(6).view(2, 3).t().contiguous())]
    for c in cases:
        assert tl.equal(*c(tl)) is torch.equal(*c(torch)), c(torch)
    for lib in (tl, torch):
        with pytest.raises(TypeError):
            lib.equal(lib.tensor([1.0]), 1.0)


def _isclose_ref(a, b, name, rtol, atol, equal_nan):
    """torch's isclose, computed as its kernels do in the dtype's precision."""
    def rnd(v):
        return np_as(v, name).astype(np.float64) if is_float(name) else v
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(all="ignore"):
        close = a64 == b64
        if equal_nan:
            close |= np.isnan(a64) & np.isnan(b64)
        if rtol == 0 and atol == 0:
            return close
        allowed = rnd(rnd(np.abs(b64) * rnd(np.float64(rtol))) + rnd(np.float64(atol))) if is_float(name) \
            else np.abs(b64) * rtol + atol
        err = rnd(np.abs(rnd(a64 - b64)))
        return close | (np.isfinite(err) & (err <= allowed))


@given(data=st.data())
def test_isclose_allclose_match_numpy(data):
    """isclose(a, b, rtol, atol, equal_nan) = |a - b| <= atol + rtol |b| or a == b (NaN equal
    only with equal_nan), broadcasting, for float and small integer values; allclose is its
    all() as a Python bool."""
    name = data.draw(st.sampled_from(DTYPES), "dtype")
    (sa, sb), shape = data.draw(PAIRS, "shapes")
    el = with_specials(name, small_elements(name) if not is_float(name) else elements(name))
    a = data.draw(operands(sa, name, elems=el), "a")
    if data.draw(st.booleans(), "near"):
        # b near a: a perturbed by a few ulps or a small relative amount
        bvals = np.broadcast_to(a.n, sb) if np.broadcast_shapes(sa, sb) == sb else None
        assume(bvals is not None)
        f = data.draw(st.sampled_from([0.0, 1e-6, -1e-5, 1e-4, 1e-3, 1e-2]), "rel")
        b = plain(np_as(bvals.astype(np.float64) * (1 + f), name), name, shape=sb)
    else:
        b = data.draw(operands(sb, name, elems=el), "b")
    rtol = data.draw(st.sampled_from([0.0, 1e-5, 1e-3, 0.1]), "rtol")
    atol = data.draw(st.sampled_from([0.0, 1e-8, 1e-3, 1.0]), "atol")
    equal_nan = data.draw(st.booleans(), "equal_nan")
    got = tl.isclose(a.t, b.t, rtol=rtol, atol=atol, equal_nan=equal_nan)
    want = _isclose_ref(np.broadcast_to(a.n, shape), np.broadcast_to(b.n, shape), name, rtol, atol, equal_nan)
    check_result(got, want, "bool", what=f"isclose({a!r}, {b!r}, {rtol}, {atol}, {equal_nan})")
    allc = tl.allclose(a.t, b.t, rtol, atol, equal_nan)
    assert allc is bool(want.all())
    assert a.t.isclose(b.t, rtol, atol, equal_nan).tolist() == got.tolist()
    assert a.t.allclose(b.t, rtol=rtol, atol=atol, equal_nan=equal_nan) is allc


def test_isclose_matches_torch(torch):
    """isclose of every dtype with several tolerances, infinities and NaN against torch."""
    for name in DTYPES:
        v = table_values(name, extremes=False)
        a = plain(v.reshape(-1, 1), name, torch)
        b = plain(v, name, torch)
        for rtol, atol, en in [(1e-5, 1e-8, False), (0, 0, True), (1e-3, 1.0, True), (0.5, 0, False),
                               (0, INF, False)]:
            ours = tl.isclose(a.t, b.t, rtol=rtol, atol=atol, equal_nan=en)
            check_torch(ours, torch.isclose(a.p, b.p, rtol=rtol, atol=atol, equal_nan=en),
                        what=f"{name} {rtol} {atol} {en}")
            assert tl.allclose(a.t[:3], b.t[:3], rtol, atol, en) is torch.allclose(a.p[:3], b.p[:3], rtol, atol, en)
    with pytest.raises(RuntimeError, match="Float did not match Double"):
        tl.isclose(tl.tensor([1.0]), tl.tensor([1.0], dtype=tl.float64))
    with pytest.raises(RuntimeError, match="Float did not match Double"):
        torch.isclose(torch.tensor([1.0]), torch.tensor([1.0], dtype=torch.float64))


@pytest.mark.parametrize("kw", [{"rtol": -1.0}, {"atol": -1.0}, {"atol": -1.5e-8},
                                {"rtol": -0.25, "atol": -1.0}], ids=str)
@pytest.mark.parametrize("fn", ["isclose", "allclose"])
def test_isclose_rejects_negative_tolerances(kw, fn, torch):
    """Negative tolerances are an error, with torch's message."""
    with pytest.raises(RuntimeError, match="must be greater than or equal to zero") as e:
        getattr(tl, fn)(tl.tensor([1.0]), tl.tensor([1.0]), **kw)
    with pytest.raises(RuntimeError) as t:
        getattr(torch, fn)(torch.tensor([1.0]), torch.tensor([1.0]), **kw)
    assert str(e.value) == str(t.value)


# ---------------------------------------------------------------------------------------------
# forms: function, method, in place (result is self, one version bump), out= (returned,
# resized when it has another shape, written through its strides when it has the right one)

CATEGORY = {"bool": 0, **{n: 1 for n in INT_DTYPES}, **{n: 2 for n in FLOAT_DTYPES}}


def can_cast(src, dst):
    """torch.can_cast: no float -> integer and no integer/float -> bool."""
    return CATEGORY[src] <= CATEGORY[dst]


@st.composite
def out_tensors(draw, shape, name):
    """An out= tensor: empty (to be resized), of another size (resized with a warning), or of
    the right shape as a transposed or stepped view of a bigger buffer."""
    kind = draw(st.sampled_from(["empty", "wrong", "right", "transposed", "stepped"]))
    d = tl_dtype(name)
    if kind == "empty":
        return tl.empty(0, dtype=d), kind
    if kind == "wrong":
        return tl.zeros(int(np.prod(shape)) + 3, dtype=d), kind
    if kind == "right" or len(shape) < 2 and kind == "transposed":
        return tl.zeros(shape, dtype=d), "right"
    if kind == "transposed":
        return tl.zeros(shape[::-1], dtype=d).permute(*range(len(shape) - 1, -1, -1)), kind
    return tl.zeros(tuple(2 * n for n in shape), dtype=d)[tuple(slice(None, None, 2) for _ in shape)], kind


def run_out(fn, out, kind):
    """Call ``fn(out)``; an out of another non-zero size must warn as torch does."""
    if kind == "wrong" and out.numel() != 0:
        with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
            return fn(out)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(out)


def check_out_call(fn, result, data):
    """``fn(out=...)`` for a drawn out tensor of the result's dtype or a wider one: returns
    out, bumps its version, holds the result converted to out's dtype, keeps out's strides
    when its shape was right."""
    res = dname(result)
    wider = [n for n in DTYPES if can_cast(res, n) and (CATEGORY[n] > CATEGORY[res] or n == res)]
    oname = data.draw(st.sampled_from(wider), "out dtype")
    out, kind = data.draw(out_tensors(tuple(result.shape), oname), "out")
    strides, ver = out.stride(), out._version
    got = run_out(lambda o: fn(out=o), out, kind)
    assert got is out and out._version > ver
    assert tuple(out.shape) == tuple(result.shape) and dname(out) == oname
    if kind in ("right", "transposed", "stepped"):
        assert out.stride() == strides
    check_values(to_numpy(out), np_as(to_numpy(result), oname), oname, zero_sign=False)


@pytest.mark.parametrize("op", [op for op in UNARY if UNARY[op].method])
@given(data=st.data())
def test_unary_forms_agree(op, data):
    """tensorlib.op(x), x.op(), x.op_() and tensorlib.op(x, out=o) agree (values and dtypes);
    the in-place form returns x, bumps its version once and raises when the result dtype
    cannot be cast to x's."""
    u = UNARY[op]
    names = [n for n in DTYPES if u.result(n) is not None]
    name = data.draw(st.sampled_from(names), "dtype")
    x = data.draw(operands(data.draw(SHAPES, "shape"), name, allow_expand=False,
                           elems=math_elements(name, *u.dom)), "x")
    f = getattr(tl, u.method)(x.t)
    m = getattr(x.t, u.method)()
    assert m.dtype == f.dtype
    check_values(to_numpy(m), to_numpy(f), dname(f))
    check_out_call(lambda out: getattr(tl, u.method)(x.t, out=out), f, data)
    if u.inplace:
        y = x.t.clone() if data.draw(st.booleans(), "clone") else x.t
        ver = y._version
        if not can_cast(dname(f), name):
            with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
                getattr(y, u.inplace)()
            return
        assert getattr(y, u.inplace)() is y
        assert y._version == ver + 1 and dname(y) == name
        check_values(to_numpy(y), np_as(to_numpy(f), name), name, zero_sign=False)


@pytest.mark.parametrize("op", [op for op in BINARY if BINARY[op].method])
@given(data=st.data())
def test_binary_forms_agree(op, data):
    """tensorlib.op(a, b), a.op(b), a.op_(b), tensorlib.op(a, b, out=o) and the operator
    agree; in place b broadcasts to a (never a to b), the result is a, and a result of a
    higher category than a's dtype raises."""
    bo = BINARY[op]
    an = data.draw(st.sampled_from(DTYPES), "dtype a")
    bn = data.draw(st.sampled_from(DTYPES), "dtype b")
    shape = data.draw(SHAPES, "shape")
    sb = shape[data.draw(st.integers(0, len(shape)), "b dims"):]
    sb = tuple(1 if data.draw(st.booleans()) else n for n in sb)
    p = result_dtype((an, len(shape)), (bn, len(sb)))
    res = bo.result(an, bn, p)
    assume(res is not None)
    a = data.draw(operands(shape, an, allow_expand=False, elems=operand_elements(op, an, bn, False, p)), "a")
    b = data.draw(operands(sb, bn, elems=operand_elements(op, bn, an, True, p)), "b")
    f = bo.call(tl, a.t, b.t)
    for g in [getattr(a.t, bo.method)(b.t)] + ([OPERATOR[op](a.t, b.t)] if op in OPERATOR else []):
        assert g.dtype == f.dtype
        check_values(to_numpy(g), to_numpy(f), dname(f))
    check_out_call(lambda out: getattr(tl, bo.method)(a.t, b.t, out=out), f, data)
    y = a.t.clone()
    ver = y._version
    if not can_cast(res, an):
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
            getattr(y, bo.inplace)(b.t)
        return
    assert getattr(y, bo.inplace)(b.t) is y
    assert y._version == ver + 1
    check_values(to_numpy(y), np_as(to_numpy(f), an), an, zero_sign=False)


AUGMENTED = {"add": _o.iadd, "sub": _o.isub, "mul": _o.imul, "div": _o.itruediv,
             "floor_divide": _o.ifloordiv, "remainder": _o.imod, "pow": _o.ipow,
             "bitwise_and": _o.iand, "bitwise_or": _o.ior, "bitwise_xor": _o.ixor,
             "bitwise_left_shift": _o.ilshift, "bitwise_right_shift": _o.irshift}


@pytest.mark.parametrize("op", list(AUGMENTED))
def test_augmented_assignment_keeps_identity_and_storage(op):
    """``x op= y`` (tensor or number y) updates x in place: same object, same storage, one
    version bump, the values of ``x op y`` converted to x's dtype; an int tensor with a float
    result raises RuntimeError."""
    for name, other in [("int64", 3), ("int32", tl.tensor([1, 2, 3], dtype=tl.int8)),
                        ("float32", 2.5), ("float16", tl.tensor([1.5, -2.0, 0.5])),
                        ("uint8", tl.tensor(2))]:
        x = tl.tensor([5, 6, 7], dtype=tl_dtype(name))
        if op in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                  "bitwise_right_shift") and (is_float(name) or isinstance(other, float) or
                                              isinstance(other, tl.Tensor) and other.is_floating_point()):
            continue
        expect = OPERATOR[op](x, other)
        ptr, ver, ident = x.data_ptr(), x._version, id(x)
        if not can_cast(dname(expect), name):
            with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                                   "output type"):
                AUGMENTED[op](x, other)
            assert x._version == ver
            continue
        y = AUGMENTED[op](x, other)
        assert y is x and id(y) == ident and x.data_ptr() == ptr and x._version == ver + 1
        check_values(to_numpy(x), np_as(to_numpy(expect), name), name)
    x = tl.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        x += 1.5


def test_augmented_assignment_matches_torch(torch):
    """``x += y`` and friends: identity, storage, version and errors as torch."""
    for lib in (tl, torch):
        x = lib.ones(3)
        ptr, ver = x.data_ptr(), x._version
        x += 2
        x *= lib.tensor([1.0, 2.0, 3.0])
        x -= 1
        x /= 2
        assert x.data_ptr() == ptr and x._version == ver + 4 and x.tolist() == [1.0, 2.5, 4.0]
        i = lib.tensor([7, -7])
        i //= 2
        i %= 3
        i **= 2
        assert i.tolist() == [0, 4]
    for expr in (lambda L: L.tensor([1, 2]).__iadd__(1.5), lambda L: L.tensor([1, 2]).__itruediv__(2),
                 lambda L: L.tensor([True]).__iadd__(1), lambda L: L.tensor([1, 2]).__imul__(L.tensor([0.5])),
                 lambda L: L.zeros(3).__iadd__(L.ones(2, 3))):
        e1, e2 = run(expr, tl)[1], run(expr, torch)[1]
        assert type(e1) is type(e2) is RuntimeError and str(e1) == str(e2), (e1, e2)


@pytest.mark.parametrize("op", ["add", "mul", "div", "eq", "logical_and", "maximum", "pow", "bitwise_or"])
def test_out_of_wrong_dtype_raises_like_torch(torch, op):
    """out= of a dtype the result cannot be cast to (float into int, int into bool) raises
    RuntimeError as in torch; a wider or same-category out is fine."""
    bo = BINARY[op]
    for an, on in [("float32", "int64"), ("int64", "bool"), ("float64", "uint8"), ("int32", "float16"),
                   ("float32", "float16"), ("bool", "int8"), ("float32", "bool")]:
        a, b = plain([1, 2, 3], an, torch), plain([1, 0, 1], an, torch)
        if bo.result(an, an) is None:
            continue
        ours = run(lambda: getattr(tl, op)(a.t, b.t, out=tl.empty(3, dtype=tl_dtype(on))))
        theirs = run(lambda: getattr(torch, op)(a.p, b.p, out=torch.empty(3, dtype=getattr(torch, on))))
        if same_outcome(ours, theirs, f"{op}({an}, out={on})"):
            check_torch(ours[0], theirs[0])
        else:
            assert isinstance(ours[1], RuntimeError)
            assert "can't be cast to the desired output type" in str(ours[1])


def test_out_dtype_error_message_matches_torch(torch):
    """The out= dtype error uses PyTorch's wording and type names."""
    with pytest.raises(RuntimeError) as e:
        tl.add(tl.tensor([1.0, 2.0]), 1, out=tl.empty(2, dtype=tl.int64))
    assert str(e.value) == "result type Float can't be cast to the desired output type Long"
    for f in (lambda L: L.exp(L.tensor([1.0], dtype=L.float64), out=L.empty(1, dtype=L.int64)),
              lambda L: L.mul(L.tensor([1, 2]), 2, out=L.empty(2, dtype=L.bool)),
              lambda L: L.add(L.tensor([1.5]), 1, out=L.empty(1, dtype=L.bool))):
        e1, e2 = run(f, tl)[1], run(f, torch)[1]
        assert type(e1) is type(e2) is RuntimeError and str(e1) == str(e2), (e1, e2)


def test_out_resize_matches_torch(torch):
    """out= of another shape is resized (silently when empty, with torch's UserWarning
    otherwise); out= of the right shape but other strides keeps them; an out that is an input
    is fine; one that partly overlaps an input raises."""
    for lib in (tl, torch):
        o = lib.empty(0)
        assert lib.add(lib.ones(2, 3), 1, out=o) is o and tuple(o.shape) == (2, 3) and o.is_contiguous()
        o = lib.empty(5)
        with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
            lib.mul(lib.ones(2, 3), 2, out=o)
        assert tuple(o.shape) == (2, 3)
        o = lib.zeros(3, 2).t()
        lib.add(lib.ones(2, 3), lib.arange(3.0), out=o)
        assert o.stride() == (1, 2) and o.tolist() == [[1.0, 2.0, 3.0]] * 2
        x = lib.arange(4.0)
        lib.exp(x, out=x)
        assert x.tolist()[0] == 1.0
        x = lib.arange(4.0)
        with pytest.raises(RuntimeError, match="unsupported operation: some elements of the input "
                                               "tensor and the written-to tensor refer to a single "
                                               "memory location"):
            lib.add(x[:3], 1, out=x[1:])


# ---------------------------------------------------------------------------------------------
# bad input

BROADCAST_OPS = {
    "add": lambda L, a, b: a + b, "mul": lambda L, a, b: L.mul(a, b), "div": lambda L, a, b: a / b,
    "floor_divide": lambda L, a, b: a // b, "remainder": lambda L, a, b: a % b,
    "fmod": lambda L, a, b: L.fmod(a, b), "pow": lambda L, a, b: a ** b,
    "atan2": lambda L, a, b: L.atan2(a, b), "maximum": lambda L, a, b: L.maximum(a, b),
    "eq": lambda L, a, b: a == b, "lt": lambda L, a, b: L.lt(a, b),
    "logical_and": lambda L, a, b: L.logical_and(a, b),
    "bitwise_and": lambda L, a, b: (a > 0) & (b > 0),
    "where": lambda L, a, b: L.where(a > 0, a, b), "clamp": lambda L, a, b: L.clamp(a, b),
    "lerp": lambda L, a, b: L.lerp(a, b, 0.5), "lerp_w": lambda L, a, b: L.lerp(a, a, b),
    "masked_fill": lambda L, a, b: a.masked_fill(b > 0, 1.0),
    "isclose": lambda L, a, b: L.isclose(a, b), "add_out": lambda L, a, b: L.add(a, b, out=L.empty(0)),
}


@pytest.mark.parametrize("op", list(BROADCAST_OPS))
@pytest.mark.parametrize("sa, sb", [((2, 3), (4,)), ((2, 3, 4), (2, 5, 4)), ((3,), (2, 2)),
                                    ((0,), (2,)), ((5, 1, 3), (4, 2))])
def test_broadcast_mismatch_raises_naming_both_shapes(op, sa, sb):
    """Shapes that do not broadcast raise RuntimeError saying which sizes clash and naming
    both shapes."""
    with pytest.raises(RuntimeError) as e:
        BROADCAST_OPS[op](tl, tl.ones(sa), tl.ones(sb))
    msg = str(e.value)
    assert msg.startswith("The size of tensor a (") and "must match the size of tensor b (" in msg
    assert "at non-singleton dimension" in msg
    if op not in ("bitwise_and", "where", "masked_fill", "lerp_w"):
        assert str(list(sa)) in msg and str(list(sb)) in msg, msg


@pytest.mark.parametrize("op", list(BROADCAST_OPS))
def test_broadcast_mismatch_matches_torch(torch, op):
    """The same error class as torch, with torch's message as the start of ours."""
    for sa, sb in [((2, 3), (4,)), ((2, 3, 4), (2, 5, 4)), ((3,), (2, 2))]:
        e1 = run(BROADCAST_OPS[op], tl, tl.ones(sa), tl.ones(sb))[1]
        e2 = run(BROADCAST_OPS[op], torch, torch.ones(sa), torch.ones(sb))[1]
        assert e1 is not None and e2 is not None
        assert type(e1) is type(e2), (e1, e2)
        assert str(e1).startswith(str(e2)), (str(e1), str(e2))


TYPE_ERRORS = {
    "add str": lambda L, x: L.add(x, "a"), "add list": lambda L, x: L.add(x, [1, 2]),
    "mul None": lambda L, x: L.mul(x, None), "sub dict": lambda L, x: L.sub(x, {}),
    "op str": lambda L, x: x + "a", "op None": lambda L, x: x * None, "rop str": lambda L, x: "a" - x,
    "exp str": lambda L, x: L.exp("a"),
    "exp float": lambda L, x: L.exp(1.0), "neg list": lambda L, x: L.neg([1.0, 2.0]),
    "sigmoid None": lambda L, x: L.sigmoid(None),
    "maximum number": lambda L, x: L.maximum(x, 2), "minimum number": lambda L, x: L.minimum(x, 2.0),
    "atan2 number": lambda L, x: L.atan2(x, 2.0), "where str": lambda L, x: L.where(x > 0, "a", 1.0),
    "masked_fill str": lambda L, x: x.masked_fill(x > 0, "a"), "clamp str": lambda L, x: L.clamp(x, "a"),
    "equal number": lambda L, x: L.equal(x, 1.0), "isclose number": lambda L, x: L.isclose(x, 1.0),
    "alpha str": lambda L, x: L.add(x, 1, alpha="a"), "gelu tensor approximate": lambda L, x: nnf(L).gelu(x, approximate=1),
    "pow str": lambda L, x: L.pow(x, "2"),
    "logical_and number": lambda L, x: L.logical_and(x, 1),
    "logical_or number": lambda L, x: L.logical_or(x, 1.5),
    "logical_xor bool": lambda L, x: x.logical_xor(True),
}


@pytest.mark.parametrize("call", list(TYPE_ERRORS.values()), ids=list(TYPE_ERRORS))
def test_wrong_argument_types_raise_type_error(call):
    """Arguments of the wrong type (strings, None, lists, numbers where a tensor is required)
    raise TypeError."""
    with pytest.raises(TypeError):
        call(tl, tl.tensor([1.0, -2.0]))


@pytest.mark.parametrize("call", [v for k, v in TYPE_ERRORS.items() if k != "logical_and number"],
                         ids=[k for k in TYPE_ERRORS if k != "logical_and number"])
def test_wrong_argument_types_match_torch(torch, call):
    """torch raises TypeError for the same calls."""
    with pytest.raises(TypeError):
        call(torch, torch.tensor([1.0, -2.0]))


INPLACE_ON_EXPANDED = {
    "add_": lambda x: x.add_(1), "mul_": lambda x: x.mul_(x), "neg_": lambda x: x.neg_(),
    "exp_": lambda x: x.exp_(), "clamp_": lambda x: x.clamp_(0, 1), "iadd": lambda x: _o.iadd(x, 1),
    "lt_": lambda x: x.lt_(0.5), "lerp_": lambda x: x.lerp_(x + 1, 0.5),
    "round_": lambda x: x.round_(decimals=1), "nan_to_num_": lambda x: x.nan_to_num_(),
    "relu_": lambda x: nnf(tl_or(x)).relu(x, inplace=True), "sigmoid_": lambda x: x.sigmoid_(),
    "out": lambda x: tl_or(x).add(tl_or(x).ones(3, 4), 1, out=x),
}


@pytest.mark.parametrize("op", list(INPLACE_ON_EXPANDED))
def test_inplace_on_expanded_view_raises(op):
    """Writing in place (or out=) into a view whose elements overlap (expanded, stride 0)
    raises RuntimeError, as in PyTorch, and leaves the memory alone."""
    base = tl.tensor([[0.25], [0.5], [0.75]])
    x = base.expand(3, 4)
    with pytest.raises(RuntimeError, match="unsupported operation: more than one element of the "
                                           "written-to tensor refers to a single memory location"):
        INPLACE_ON_EXPANDED[op](x)
    assert base.tolist() == [[0.25], [0.5], [0.75]]


def test_inplace_on_expanded_view_matches_torch(torch):
    """torch raises the same error (masked_fill_ aside: torch writes, see the report)."""
    for op, f in INPLACE_ON_EXPANDED.items():
        e = run(f, torch.tensor([[0.25], [0.5], [0.75]]).expand(3, 4))[1]
        assert isinstance(e, RuntimeError) and "more than one element of the written-to tensor" in str(e), op
    with pytest.raises(RuntimeError):
        tl.zeros(1).expand(3).masked_fill_(tl.tensor([True, False, True]), 1.0)


def test_inplace_overlap_rules():
    """In place, PyTorch's overlap rule: an input over the output's memory in another layout
    raises (a transposed alias too); exact aliasing is fine; a strided alias whose elements
    interleave with the output's is read through a copy."""
    msg = "some elements of the input tensor and the written-to"
    x = tl.arange(4.0)
    with pytest.raises(RuntimeError, match=msg):
        x[1:].add_(x[:-1])
    x = tl.arange(4.0)
    x.mul_(x)
    assert x.tolist() == [0.0, 1.0, 4.0, 9.0]
    x = tl.arange(4.0).view(2, 2)
    with pytest.raises(RuntimeError, match=msg):
        x.add_(x.t())
    assert x.tolist() == [[0.0, 1.0], [2.0, 3.0]] and x._version == 0    # nothing written
    x = tl.arange(4.0)
    x[::2].mul_(x[1::2])
    assert x.tolist() == [0.0, 1.0, 6.0, 3.0]
    # an input over the output's memory raises before a missing kernel of the dtype
    x = tl.arange(5.0)
    with pytest.raises(RuntimeError, match=msg):
        x ^= x[1:2]


# (name, fn(lib) -> the write) where only PyTorch's overlap rule decides: the same memory in
# a layout that differs in a size-1 dim's stride, or in the number of dims
OVERLAP_WRITES = {
    "copy_ transposed": lambda L: (lambda x: x.copy_(x.t()))(L.zeros(4, 4)),
    "copy_ size-1 stride": lambda L: (lambda y: y.copy_(y.as_strided((3, 1), (1, 5))))(
        L.zeros(3, 1)),
    "copy_ fewer dims": lambda L: (lambda y: y.copy_(y.view(3)))(L.zeros(3, 1)),
    "copy_ row of itself": lambda L: (lambda c: c.copy_(c[0]))(L.zeros(1, 3)),
    "copy_ 0-d of itself": lambda L: (lambda a: a.copy_(a.reshape(())))(L.zeros(1, 1, 1)),
    "copy_ dtype view": lambda L: (lambda x: x.copy_(x.view(L.int32)))(L.zeros(4)),
    "copy_ disjoint halves": lambda L: (lambda x: x[:, :2].copy_(x[:, 2:]))(L.zeros(4, 4)),
    "setitem () longer value": lambda L: (lambda a: a.__setitem__((), a.reshape(1, 1, 1, 1)))(
        L.zeros(1, 1, 1)),
    "setitem () shorter value": lambda L: (lambda a: a.__setitem__((), a.reshape(1)))(
        L.zeros(1, 1, 1)),
    "setitem () same shape": lambda L: (lambda a: a.__setitem__((), a))(L.zeros(1, 1, 1)),
    "setitem () 0-d value": lambda L: (lambda a: a.__setitem__((), a.reshape(())))(
        L.zeros(1, 1, 1)),
    "setitem None": lambda L: (lambda a: a.__setitem__(None, a))(L.zeros(1, 1)),
    "setitem None, recorded": lambda L: (lambda a: a.__setitem__(None, a))(
        L.zeros(2, requires_grad=True) * 1),
    "setitem () shorter value, recorded": lambda L: (lambda a: a.__setitem__((), a.reshape(1)))(
        L.zeros(1, 1, 1, requires_grad=True) * 1),
    "setitem () 0-d value, recorded": lambda L: (lambda a: a.__setitem__((), a.reshape(())))(
        L.zeros(1, 1, requires_grad=True) * 1),
    "setitem step slice of size-1 dim": lambda L: (lambda a: a.__setitem__(
        (Ellipsis, slice(-2, 1, 3)), a))(L.zeros(2, 1, dtype=L.float16)),
    "setitem () unsqueezed": lambda L: (lambda a: a.__setitem__((), a.unsqueeze(0)))(L.zeros(3)),
    "setitem () broadcast row": lambda L: (lambda a: a.__setitem__((), a[0]))(L.zeros(3)),
    "setitem unbind": lambda L: (lambda t: t.unbind(0)[0].__setitem__((), t))(
        L.zeros(1, 1, 1, dtype=L.uint8)),
    # index_put_ rejects shared memory before it checks the mask's shape, recorded or not
    "setitem mask, self value": lambda L: (lambda t: t.__setitem__(
        (slice(None), L.tensor([[True, False, True, False, True]])), t))(L.zeros(1, 1, 3)),
    "setitem mask, self value, recorded": lambda L: (lambda t: t.__setitem__(
        (slice(None), L.tensor([[True, False, True, False, True]])), t))(
        L.zeros(1, 1, 3, requires_grad=True) * 1),
    "add_ transposed": lambda L: (lambda x: x.add_(x.t()))(L.zeros(3, 3)),
    "add_ size-1 stride": lambda L: (lambda y: y.add_(y.as_strided((3, 1), (1, 7))))(
        L.zeros(3, 1)),
}


# a 0-d value fills only from the CPU (PyTorch's copy_to); a 0-d device tensor is expanded and
# copied, so on a CUDA device these raise, as PyTorch's CUDA tensors do
_CPU_FILL = pytest.mark.cpu_only("a 0-d CUDA value is expanded, not a fill: it raises there, "
                                 "as in PyTorch on CUDA")


@pytest.mark.parametrize("name", [pytest.param(n, marks=_CPU_FILL) if "0-d value" in n else n
                                  for n in OVERLAP_WRITES])
def test_overlap_writes_raise_as_pytorch(name, torch):
    e1, e2 = run(OVERLAP_WRITES[name], tl)[1], run(OVERLAP_WRITES[name], torch)[1]
    assert type(e1) is type(e2), (e1, e2)
    if e2 is not None:
        assert str(e1) == str(e2)


def test_inplace_broadcast_of_self_raises_like_torch(torch):
    """In place, self is never broadcast: torch's message names both shapes."""
    for lib in (tl, torch):
        with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast "
                                               r"shape \[2, 3\]"):
            lib.zeros(3).add_(lib.ones(2, 3))
        with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast "
                                               r"shape \[2, 3\]"):
            lib.zeros(3).mul_(lib.ones(2, 1))


# ---------------------------------------------------------------------------------------------
# functional variants, aliases, big strided inputs (the threaded path)

F_INPLACE = {
    "relu": lambda F, x: F.relu(x, inplace=True), "relu_": lambda F, x: F.relu_(x),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2, inplace=True),
    "elu": lambda F, x: F.elu(x, 0.5, inplace=True),
    "hardtanh": lambda F, x: F.hardtanh(x, -0.5, 0.25, inplace=True),
    "silu": lambda F, x: F.silu(x, inplace=True),
}


@pytest.mark.parametrize("op", F_INPLACE)
def test_functional_inplace_returns_input(op):
    """nn.functional activations with inplace=True write into their input (one version bump)
    and return it, with the out-of-place values."""
    for name in FLOAT_DTYPES:
        x = plain(MATH_GRID[np.isfinite(MATH_GRID)], name)
        expected = to_numpy(F_INPLACE[op](TLF, x.t.clone()))
        t = x.t.clone()
        ver = t._version
        got = F_INPLACE[op](TLF, t)
        assert got is t and t._version == ver + 1, op
        check_values(to_numpy(t), expected, name, zero_sign=False)


@pytest.mark.parametrize("op", list(F_INPLACE))
def test_functional_inplace_matches_torch(torch, op):
    """The values the inplace=True activations return are torch's."""
    for name in FLOAT_DTYPES:
        x = plain(MATH_GRID[np.isfinite(MATH_GRID)], name, torch)
        check_torch(F_INPLACE[op](TLF, x.t.clone()), F_INPLACE[op](torch.nn.functional, x.p.clone()),
                    exact=False, zero_sign=False, what=f"{op} {name}")


def test_functional_namespace():
    """tensorlib.nn.functional holds torch's names for the activations tensorlib has, and
    they are the same ops as the top-level functions."""
    x = tl.tensor([-2.0, -0.5, 0.0, 0.5, 2.0])
    for name in ["relu", "leaky_relu", "elu", "gelu", "silu", "softplus", "hardtanh", "sigmoid", "tanh"]:
        assert hasattr(TLF, name), name
        if hasattr(tl, name):
            check_values(to_numpy(getattr(TLF, name)(x)), to_numpy(getattr(tl, name)(x)), "float32")


@pytest.mark.parametrize("alias, op", list(ALIASES.items()))
def test_aliases_are_the_same_op(alias, op):
    """PyTorch's alias names (subtract, multiply, divide, true_divide, greater, arctan2,
    absolute, clip, ...) compute the same as the op, as functions and as methods."""
    x = tl.tensor([[-1.5, 0.25, 2.0], [0.5, -0.75, 3.0]])
    y = tl.tensor([0.5, -2.0, 1.5])
    args = (x,) if op in UNARY or op == "trunc" else (x, y) if op != "clamp" else (x, -1.0, 1.0)
    want = getattr(tl, op)(*args)
    for got in (getattr(tl, alias)(*args), getattr(x, alias)(*args[1:])):
        assert got.dtype == want.dtype
        check_values(to_numpy(got), to_numpy(want), dname(want))


@pytest.mark.parametrize("op", ["add", "mul", "div", "maximum", "exp", "sigmoid", "gelu", "lt", "where", "clamp"])
def test_large_strided_inputs_and_outputs(op):
    """Tensors big enough for the threaded path, transposed / stepped / expanded, with a
    transposed out=: values as NumPy's and as the small-tensor path."""
    rng = np.random.default_rng(7)
    a_np = rng.standard_normal((260, 300)).astype(np.float32)
    b_np = rng.standard_normal((300, 1)).astype(np.float32)
    a = tl.from_numpy(a_np).t()                            # (300, 260), transposed
    b = tl.from_numpy(b_np).expand(300, 260)               # stride 0
    c = tl.from_numpy(np.ascontiguousarray(a_np.T[:, ::-1]))[:, ::2]   # stepped
    an, bn, cn = a_np.T, np.broadcast_to(b_np, (300, 260)), np.ascontiguousarray(a_np.T[:, ::-1])[:, ::2]
    calls = {
        "add": (lambda: tl.add(a, b, out=o), lambda: an + bn),
        "mul": (lambda: tl.mul(a[:, ::2], c, out=o2), lambda: an[:, ::2] * cn),
        "div": (lambda: tl.div(a, b, out=o), lambda: an / bn),
        "maximum": (lambda: tl.maximum(a, b, out=o), lambda: np.maximum(an, bn)),
        "exp": (lambda: tl.exp(a, out=o), lambda: np.exp(an.astype(np.float64))),
        "sigmoid": (lambda: tl.sigmoid(a, out=o), lambda: _sigmoid(an.astype(np.float64))),
        "gelu": (lambda: TLF.gelu(a), lambda: 0.5 * an * _erfc(-an.astype(np.float64) * math.sqrt(0.5))),
        "lt": (lambda: tl.lt(a, b, out=ob), lambda: an < bn),
        "where": (lambda: tl.where(a > 0, a, b, out=o), lambda: np.where(an > 0, an, bn)),
        "clamp": (lambda: tl.clamp(a, tl.full_like(b, -0.5), b, out=o),
                  lambda: np.minimum(np.maximum(an, -0.5), bn)),
    }
    o = tl.empty(260, 300).t()
    o2 = tl.empty(300, 260)[:, ::2]
    ob = tl.empty(260, 300, dtype=tl.bool).t()
    fn, ref = calls[op]
    got = fn()
    want = np_as(ref(), "bool" if op == "lt" else "float32")
    exact = op in ("add", "mul", "div", "maximum", "lt", "where", "clamp")
    check_values(to_numpy(got), want, dname(got), ulps=0 if exact else 4)
    small = {"add": lambda: tl.add(a[:3, :5], b[:3, :5]), "exp": lambda: tl.exp(a[:3, :5])}.get(op)
    if small is not None:
        check_values(to_numpy(small()), to_numpy(got[:3, :5]), "float32")


# ---------------------------------------------------------------------------------------------
# PyTorch's edges: type promotion, scalar ranges, bad operands (each once a bug here)

_CRASH = """
import tensorlib as tl
try:
    {expr}
except RuntimeError as e:
    print(type(e).__name__, e)
"""


@pytest.mark.parametrize("expr", [
    "tl.tensor([5], dtype=tl.int8) // 256",
    "tl.tensor([5], dtype=tl.uint8) % 512",
    "tl.fmod(tl.tensor([5], dtype=tl.int16), 65536)",
    "tl.tensor([5], dtype=tl.int32).div(2 ** 32, rounding_mode='trunc')",
])
def test_int_division_by_scalar_that_wraps_to_zero_raises(expr):
    """The zero-divisor check looks at the divisor converted to the tensor's dtype (run in a
    subprocess: a C division by zero would kill the process with SIGFPE)."""
    # run beside the tensorlib this process imported: `python -c` puts its cwd first on
    # sys.path, and a checkout's root holds the sources without the compiled core
    here = os.path.dirname(os.path.dirname(os.path.abspath(tl.__file__)))
    r = subprocess.run([sys.executable, "-c", _CRASH.format(expr=expr)], capture_output=True,
                       text=True, timeout=120, cwd=here)
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr[-300:]}"
    assert r.stdout.strip() == "RuntimeError ZeroDivisionError"


@pytest.mark.parametrize("case", ["tensor ** tensor", "scalar ** tensor", "0-d exponent", "int8"])
def test_pow_negative_integer_tensor_exponent(case):
    """Integer powers with negative tensor exponents truncate toward zero like torch."""
    if case == "tensor ** tensor":
        got, want = tl.tensor([2, 1, -1, -1, 3]) ** tl.tensor([-1, -5, -3, -2, 0]), [0, 1, -1, 1, 1]
    elif case == "scalar ** tensor":
        got, want = tl.pow(2, tl.tensor([-1, 2])), [0, 4]
    elif case == "0-d exponent":
        got, want = tl.tensor([2, 1]) ** tl.tensor(-1), [0, 1]
    else:
        got, want = tl.tensor([-1, 2], dtype=tl.int8) ** tl.tensor([-3, -2], dtype=tl.int8), [-1, 0]
    assert got.tolist() == want


@pytest.mark.parametrize("make", [
    lambda lib: lib.arange(12.0).reshape(3, 4).t(),
    lambda lib: lib.arange(120.0).reshape(2, 3, 4, 5).permute(0, 2, 3, 1),
    lambda lib: lib.arange(16.0).reshape(1, 4, 1, 2, 1, 2).permute(0, 5, 2, 1, 4, 3),
    lambda lib: lib.arange(6.0).reshape(2, 3)[:, ::2],
])
@pytest.mark.parametrize("base", [2, 1, 0.5])
def test_pow_number_base_gives_a_contiguous_result(make, base):
    """pow(number, tensor) is laid out contiguously whatever the exponent's strides, as
    PyTorch's pow(Scalar, Tensor) is (found by the fuzzer); pow(tensor, number) and
    pow(tensor, tensor) follow their inputs' layout."""
    x = make(tl)
    for got in (tl.pow(base, x), base ** x):
        assert got.is_contiguous() and got.tolist() == (tl.tensor(float(base)) ** x).tolist()
    torch = pytest.importorskip("torch")
    y = make(torch)
    for got, want in ((tl.pow(base, x), torch.pow(base, y)), (x ** 2, y ** 2),
                      (tl.pow(tl.tensor(2.0), x), torch.pow(torch.tensor(2.0), y))):
        assert got.stride() == want.stride()
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("shape, strides", [
    ((1, 2, 1, 3), (2, 1, 1, 2)), ((2, 2, 1, 3), (6, 1, 6, 2)), ((2, 3, 4, 5), (60, 1, 15, 3)),
    ((2, 3, 1, 4, 5), (60, 1, 60, 15, 3)), ((1, 3, 1, 1), (3, 1, 1, 1)), ((2, 1, 3, 3), (9, 9, 3, 1)),
    ((2, 3, 4), (1, 2, 6)),
])
def test_output_layout_of_channels_last_operands_matches_torch(shape, strides):
    """Operands all of one 4-D (5-D) shape and channels-last dense (size-1 dims aside) give a
    channels-last result with PyTorch's own strides for the size-1 dims, which a later
    cat or suggest_memory_format reads (found by the fuzzer); a Python number operand
    makes the shapes differ, and then the operands' strides decide, as in TensorIterator."""
    torch = pytest.importorskip("torch")

    def layouts(lib):
        b = lib.empty_strided(shape, strides).fill_(1.5)
        c = lib.empty_strided(shape, strides).fill_(2.0)
        return [r.stride() for r in (b.exp(), b * c, b + 0, b > 0, lib.where(b > 0, b, c),
                                     lib.cat([b.exp()], 0), b.neg().neg())]
    assert layouts(tl) == layouts(torch)


def test_pow_negative_integer_scalar_exponent_raises():
    """A negative Python-int exponent of an integer tensor raises (torch's message)."""
    with pytest.raises(RuntimeError, match="^Integers to negative integer powers are not allowed.$"):
        tl.tensor([2, 3]) ** -1
    assert (tl.tensor([2.0]) ** -1).tolist() == [0.5]


@pytest.mark.parametrize("expr, want", [
    ("tl.tensor([257]) * tl.tensor([3.0], dtype=tl.bfloat16)", [768.0]),
    ("tl.tensor([70000]) * tl.tensor([0.5], dtype=tl.float16)", [INF]),
    ("tl.tensor([257]) == tl.tensor([256.0], dtype=tl.bfloat16)", [True]),
    ("tl.tensor([2049], dtype=tl.int16) - tl.tensor([2048.0], dtype=tl.float16)", [0.0]),
    ("tl.floor_divide(tl.tensor(65536.0, dtype=tl.bfloat16), tl.tensor([1.0], dtype=tl.float16))", [NAN]),
    ("tl.equal(tl.tensor([2049], dtype=tl.int16), tl.tensor([2048.0], dtype=tl.float16))", True),
])
def test_other_dtypes_are_not_rounded_to_a_reduced_result_first(expr, want, torch):
    """Type promotion converts every operand to the result dtype before computing (int 257 *
    bf16 3 is 256 * 3, int 70000 * half 0.5 is inf * 0.5), as in torch."""
    theirs = eval(expr.replace("tl.", "torch."))
    got = eval(expr)
    if isinstance(got, tl.Tensor):
        check_torch(got, theirs, what=expr)
    else:
        assert got is theirs
    if isinstance(got, tl.Tensor):
        got = [v if v == v else NAN for v in to_numpy(got).tolist()]
        assert all(g == w or g != g and w != w for g, w in zip(got, want)), got
    else:
        assert got is want


@pytest.mark.parametrize("expr, want", [
    ("tl.tensor([1.0, 3.0], dtype=tl.bfloat16) + 257", [256.0, 260.0]),
    ("tl.tensor([1.0, 3.0], dtype=tl.bfloat16) - 257", [-255.0, -253.0]),
    ("tl.tensor([-60000.0], dtype=tl.float16) + 70000", [INF]),
    ("tl.tensor([1.0, 1.0], dtype=tl.bfloat16).add(1.0, alpha=257)", [256.0, 256.0]),
    ("(tl.tensor([INF], dtype=tl.float16) == 70000).float()", [1.0]),
    ("tl.remainder(70000, tl.tensor([3.0], dtype=tl.float16))", [NAN]),
    ("tl.tensor([1.0, 3.0], dtype=tl.bfloat16).sub(1.0, alpha=257)", [-255.0, -253.0]),
    ("tl.div(tl.tensor([1000.0, 3000.0], dtype=tl.bfloat16), 1.001, rounding_mode='floor')",
     [1000.0, 3008.0]),
    ("tl.floor_divide(tl.tensor([1000.0, 3000.0], dtype=tl.bfloat16), 1.001)", [1000.0, 3008.0]),
    ("tl.tensor([300.0], dtype=tl.bfloat16) ** 1.001", [300.0]),
    ("(tl.tensor([1.0], dtype=tl.bfloat16) > 1.001).float()", [0.0]),
    ("70000 // tl.tensor([7.0], dtype=tl.float16)", [NAN]),
    ("tl.div(70000, tl.tensor([7.0], dtype=tl.float16), rounding_mode='trunc')", [INF]),
])
def test_reduced_float_rounds_python_scalar_first(expr, want, torch):
    """The weak Python scalar takes the tensor's float16/bfloat16 dtype before the op (alpha
    too), as in torch."""
    got = [v if v == v else NAN for v in to_numpy(eval(expr)).tolist()]
    assert all(g == w or g != g and w != w for g, w in zip(got, want)), got
    check_torch(eval(expr), eval(expr.replace("tl.", "torch.")), what=expr)


@given(data=st.data())
def test_reduced_float_mixed_operands_match_torch(data):
    """Random float16/bfloat16 tensors meeting tensors of every dtype and Python numbers
    through add/sub/mul/div/remainder/comparisons/pow: bit-exact with torch."""
    torch = pytest.importorskip("torch")
    red = data.draw(st.sampled_from(REDUCED), "reduced")
    other = data.draw(st.sampled_from(DTYPES + ["number", "int"]), "other")
    op = data.draw(st.sampled_from(["add", "sub", "mul", "div", "remainder", "eq", "lt", "pow",
                                    "maximum", "atan2"]), "op")
    vals = data.draw(st.lists(st.integers(-3000, 3000).map(lambda k: k / 8), min_size=1,
                              max_size=5), "values")
    a = plain(np.array(vals), red, torch)
    if other in ("number", "int"):
        if op in ("maximum", "atan2"):
            return
        b = data.draw(st.integers(-70000, 70000) if other == "int" else
                      st.floats(-1e5, 1e5, allow_nan=False), "b")
        bt = bp = b
    else:
        w = data.draw(st.lists(st.integers(-70000, 70000), min_size=len(vals),
                               max_size=len(vals)), "other values")
        w = np.array(w) / (1 if other in INT_DTYPES or other == "bool" else 7)
        if other == "bool":
            w = w > 0
        elif other == "uint8":
            w = np.abs(w) % 256
        elif other in INT_DTYPES:
            w = np.clip(w, np.iinfo(other).min, np.iinfo(other).max)
        o = plain(w, other, torch)
        bt, bp = o.t, o.p
    if op == "sub" and (other == "bool" or isinstance(bt, bool)):
        return
    f = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
         "div": lambda x, y: x / y, "eq": lambda x, y: x == y, "lt": lambda x, y: x < y,
         "pow": lambda x, y: x ** y}.get(op)
    ours = run(f or (lambda x, y: getattr(tl, op)(x, y)), a.t, bt)
    theirs = run(f or (lambda x, y: getattr(torch, op)(x, y)), a.p, bp)
    assert (ours[1] is None) == (theirs[1] is None), (ours, theirs)
    if theirs[1] is None:
        # (atan2 in float32 — float16 with bfloat16 promotes there — is a transcendental of
        # its own on each side, within an ulp of each other, not bit-equal)
        exact = not (op == "atan2" and dname(ours[0]) == "float32")
        # (torch's own scalar loop, which runs tensors of a few elements, divides a float16/
        # bfloat16 by an integer tensor without rounding the integer to that dtype first;
        # its vectorized loop and tensorlib round it: 0.125 / int16 2449 differs in the
        # last bit between torch's 1-element and 64-element results)
        exact = exact and not (op == "div" and other in INT_DTYPES)
        check_torch(ours[0], theirs[0], exact=exact, what=f"{red} {op} {other}")


def test_reduced_float_mul_div_keep_python_scalar_in_float32(torch):
    """(What torch does for mul and the divisions, rounding modes and floor_divide included,
    with the number as the second operand, and tensorlib too: the scalar is not rounded.)"""
    for f in (lambda L: L.tensor([0.5, 3.0], dtype=L.float16) * 70000,
              lambda L: L.tensor([0.5, 3.0], dtype=L.float16) / 70000,
              lambda L: L.tensor([0.5, 3.0], dtype=L.bfloat16) * 1.001,
              lambda L: L.div(L.tensor([1000.0, 2000.0], dtype=L.float16), 1.0001,
                              rounding_mode="trunc"),
              lambda L: L.tensor([1000.0, -2000.0], dtype=L.float16) // 1.0001):
        check_torch(f(tl), f(torch))


@pytest.mark.parametrize("expr", ["tl.tensor([1, 2]) - True", "tl.tensor([1.0]) - False",
                                  "True - tl.tensor([1, 2])", "tl.sub(tl.tensor([3]), True)"])
def test_sub_with_python_bool_raises(expr, torch):
    """A Python bool operand of sub/rsub raises like a bool tensor operand (torch's message)."""
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with a bool tensor "
                                           "is not supported") as e:
        eval(expr)
    with pytest.raises(RuntimeError) as t:
        eval(expr.replace("tl.", "torch."))
    assert str(e.value) == str(t.value)


def test_sub_of_two_bool_tensors_message(torch):
    """Two bool operands (a Python bool counting as one) get torch's two-bool-tensors message."""
    with pytest.raises(RuntimeError, match="with two bool tensors is not supported. Use the `\\^` or "
                                           "`logical_xor\\(\\)` operator instead."):
        tl.tensor([True]) - tl.tensor([False])
    for f in (lambda L: L.tensor([True]) - False, lambda L: True - L.tensor([False]),
              lambda L: L.tensor([True]).sub(L.tensor(True), alpha=2)):
        e1, e2 = run(f, tl)[1], run(f, torch)[1]
        assert type(e1) is type(e2) is RuntimeError and str(e1) == str(e2), (e1, e2)


def test_bool_operand_errors_match_torch(torch):
    """One bool operand of sub, and neg/`+` of a bool tensor, raise with torch's messages."""
    for f in (lambda L: L.tensor([1, 2]) - L.tensor([True, False]),
              lambda L: L.tensor([True, False]) - 1,
              lambda L: -L.tensor([True]), lambda L: +L.tensor([True]),
              lambda L: L.tensor([True]).neg()):
        e1, e2 = run(f, tl)[1], run(f, torch)[1]
        assert type(e1) is type(e2) is RuntimeError and str(e1) == str(e2), (e1, e2)


@pytest.mark.parametrize("call", [
    lambda L: L.exp(L.tensor([True])).bitwise_not(),
    lambda L: L.tensor([1.0]) & L.tensor([1.0]),
    lambda L: L.floor(L.tensor([True])),
    lambda L: L.frac(L.tensor([1])),
    lambda L: L.remainder(L.tensor([True]), L.tensor([True])),
    lambda L: nnf(L).elu(L.tensor([1])),
], ids=["bitwise_not float", "and float", "floor bool", "frac int", "remainder bool", "elu int"])
def test_not_implemented_error_class(call):
    """A dtype an op does not support raises NotImplementedError, like torch."""
    with pytest.raises(NotImplementedError):
        call(tl)


def test_relu_keeps_negative_zero():
    """relu passes -0.0 through, as torch does (and as hardtanh/leaky_relu here do)."""
    for f in (tl.relu, TLF.relu, lambda x: x.relu()):
        assert np.signbit(to_numpy(f(tl.tensor([-0.0, 1.0]))))[0]


@pytest.mark.parametrize("expr", [
    "np.float32(2.0) * tl.ones(2)", "np.float64(1.5) + tl.ones(2)", "np.int64(5) // tl.ones(2, dtype=tl.int64)",
    "tl.ones(2) + np.ones(2)",
])
def test_numpy_operands_give_tensors(expr):
    """Mixing NumPy numbers into operator expressions keeps the result a tensor."""
    assert isinstance(eval(expr), tl.Tensor)


@pytest.mark.filterwarnings("ignore:__array_wrap__:DeprecationWarning")  # (torch's)
@pytest.mark.parametrize("expr", [
    "x + np.ones(2)", "x - np.arange(2)", "x * np.ones((3, 1), dtype=np.int32)",
    "x / np.full(2, 4.0, dtype=np.float32)", "x // np.full(2, 0.5)", "x % np.full(2, 0.75)",
    "x ** np.full(2, 2, dtype=np.int8)", "x + np.array([True, False])", "np.sin(x)",
    "(x > 0) & np.array([True, False])", "np.add(x, 1)",
])
def test_numpy_array_operands_match_torch(expr, torch):
    """A Tensor operator or NumPy ufunc meeting an ndarray: NumPy computes it (NumPy's type
    promotion: float32 - int64 array is float64) and the result comes back as a tensor, a bool
    one as uint8, as in torch."""
    vals = [1.5, -2.0]
    ours = eval(expr, globals(), {"x": tl.tensor(vals)})
    assert isinstance(ours, tl.Tensor)
    check_torch(ours, eval(expr, globals(), {"x": torch.tensor(vals)}), what=expr)


@pytest.mark.filterwarnings("ignore:__array_wrap__:DeprecationWarning")  # (torch's)
def test_numpy_array_in_place_operator(torch):
    """``x += ndarray`` is not in place (the operator falls back to NumPy's, whose result
    rebinds x), as in torch."""
    for lib in (tl, torch):
        x = y = lib.tensor([1.0, 5.0])
        x += np.array([1.0, 2.0])
        assert x is not y and y.tolist() == [1.0, 5.0]
        assert x.dtype == lib.float64 and x.tolist() == [2.0, 7.0]


def test_numpy_scalar_on_the_right_is_a_python_number():
    """A NumPy scalar on the right is a (weak) Python number: half * np.float64 stays half."""
    y = tl.ones(2, dtype=tl.float16) * np.float64(2.5)
    assert y.dtype == tl.float16 and y.tolist() == [2.5, 2.5]
    assert (tl.ones(2, dtype=tl.int8) * np.int64(3)).dtype == tl.int8


@pytest.mark.parametrize("expr", [
    "tl.tensor([1, 2], dtype=tl.int8) ** 300",
    "tl.tensor([1.0], dtype=tl.float16) ** 70000",
    "tl.tensor([1, 2], dtype=tl.int8).clamp(-200, 300)",
    "tl.tensor([1.0], dtype=tl.float16).clamp(max=70000.0)",
    "tl.tensor([1, 2]).masked_fill(tl.tensor([True, False]), float('inf'))",
    "tl.tensor([1, 2], dtype=tl.uint8).masked_fill(tl.tensor([True, False]), 300)",
])
def test_out_of_range_scalar_raises_like_torch(expr, torch):
    """Scalar arguments that do not fit the tensor's dtype raise RuntimeError (torch's)."""
    with pytest.raises(RuntimeError, match="cannot be converted to type .* without overflow") as e:
        eval(expr)
    with pytest.raises(RuntimeError) as t:
        eval(expr.replace("tl.", "torch."))
    assert str(e.value) == str(t.value)


SCALAR_RANGE_EDGES = [
    "tl.tensor([1, 2], dtype=tl.uint8).masked_fill(tl.tensor([True, False]), -255)",
    "tl.tensor([1, 2], dtype=tl.uint8).masked_fill(tl.tensor([True, False]), -256)",
    "tl.tensor([1, 2], dtype=tl.uint8).masked_fill(tl.tensor([True, False]), -0.5)",
    "tl.tensor([1, 2], dtype=tl.uint8).masked_fill(tl.tensor([True, False]), 255.5)",
    "tl.tensor([1, 2], dtype=tl.uint8).clamp(-1)",
    "tl.tensor([1, 2], dtype=tl.int8).masked_fill(tl.tensor([True, False]), 127.9)",
    "tl.tensor([1, 2], dtype=tl.int8).masked_fill(tl.tensor([True, False]), -128)",
    "tl.tensor([1, 2]).masked_fill(tl.tensor([True, False]), float('nan'))",
    "tl.tensor([1.0, 2.0], dtype=tl.float16).masked_fill(tl.tensor([True, False]), 65504.0)",
    "tl.tensor([1.0, 2.0], dtype=tl.float16).masked_fill(tl.tensor([True, False]), 65504.5)",
    "tl.tensor([1.0, 2.0], dtype=tl.float16).masked_fill(tl.tensor([True, False]), -INF)",
    "tl.tensor([1.0, 2.0], dtype=tl.bfloat16).clamp(max=NAN)",
    "tl.tensor([1.0, 2.0]).masked_fill(tl.tensor([True, False]), 3.5e38)",
    "tl.tensor([True, False]).masked_fill(tl.tensor([True, False]), 1e300)",
    "tl.tensor([1, 2], dtype=tl.int8) ** 127",
    "tl.tensor([1, 2], dtype=tl.int8) ** 300.0",
    "tl.tensor([1.0, 2.0]) ** 1e39",
    "tl.tensor([1, 2], dtype=tl.int8).clamp(-200.5)",
    "tl.tensor([1, 2], dtype=tl.int8).clamp_(max=300)",
    "tl.tensor([1, 2], dtype=tl.int8).clamp_min(300)",
    "tl.tensor([1, 2], dtype=tl.int8) + 300",
    "tl.pow(300, tl.tensor([1, 2], dtype=tl.int8))",
]


@pytest.mark.parametrize("expr", SCALAR_RANGE_EDGES)
def test_scalar_range_edges_match_torch(expr, torch):
    """Where torch checks a scalar's range and where it does not (add wraps; a float32 pow
    takes any exponent; uint8 takes -255..255 from an int, reading -1 as 255; bool takes
    anything): the same result, or the same error."""
    ours = run(lambda: eval(expr))
    theirs = run(lambda: eval(expr.replace("tl.", "torch."), globals(), {"torch": torch}))
    if theirs[1] is not None:
        assert type(ours[1]) is type(theirs[1]) and str(ours[1]) == str(theirs[1]), (ours, theirs)
    else:
        assert ours[1] is None, ours[1]
        check_torch(ours[0], theirs[0], what=expr)


def test_masked_fill_inplace_broadcast_message(torch):
    """The in-place shape error names both shapes like every other in-place op."""
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        tl.zeros(3).masked_fill_(tl.tensor([[True, False, True], [False, False, True]]), 1.0)
    for f in (lambda L: L.zeros(3, 1).masked_fill_(L.tensor([[True, False]]), 1.0),
              lambda L: L.zeros(3).masked_fill_(L.tensor([True, False]), 1.0),
              lambda L: L.zeros(2, 3).masked_fill_(L.tensor([True, False, True]), 1.0)):
        (r1, e1), (r2, e2) = run(f, tl), run(f, torch)
        assert type(e1) is type(e2), (e1, e2)
        if e2 is None:
            check_torch(r1, r2)
        elif "output with shape" in str(e2):
            assert str(e1) == str(e2)


# ---------------------------------------------------------------------------------------------
# every declared elementwise op has a reference here

# declared ops checked by tests of their own rather than through UNARY/BINARY
OWN_TESTS = {
    "rsub": "test_add_sub_alpha_match_numpy", "clamp": "test_clamp_matches_numpy",
    "clamp_min": "test_clamp_min_max_are_one_sided_clamps",
    "clamp_max": "test_clamp_min_max_are_one_sided_clamps", "lerp": "test_lerp_matches_numpy",
    "where": "test_where_matches_numpy", "masked_fill": "test_masked_fill_matches_numpy",
    "equal": "test_equal_matches_numpy", "isclose": "test_isclose_allclose_match_numpy",
    "allclose": "test_isclose_allclose_match_numpy",
}


def test_every_declared_elementwise_op_has_a_reference():
    """Each op of tensorlib/ops/decl/elementwise.py is in UNARY or BINARY (with its NumPy
    reference) or has a test of its own: adding an op without a reference fails here."""
    missing = [d["name"] for d in EW_DECL.OPS
               if d["name"] not in UNARY and d["name"] not in BINARY and d["name"] not in OWN_TESTS]
    assert not missing, f"declared elementwise ops without a reference in this file: {missing}"
    assert all(callable(globals().get(t)) for t in OWN_TESTS.values())
    # every declared unary/binary op is also a case of the table tests
    assert set(EW_DECL.UNARY_OPS) <= set(UNARY_CASES)
    assert set(EW_DECL.BINARY_OPS) <= set(BINARY_CASES)


def test_declared_kernels_run_their_dtype_classes():
    """A kernel's declared dtype classes are exactly the loops that run: a class without an
    expression raises NotImplementedError or RuntimeError (as PyTorch), one with an
    expression computes (for unary kernels of a unary op, on a one-element tensor)."""
    cls_of = {"bool": "bool", "uint8": "uint8", "int32": "int", "float32": "float",
              "float64": "double"}
    for d in EW_DECL.OPS:
        if d["name"] not in EW_DECL.UNARY_OPS:
            continue
        (k,) = d["kernels"]
        for name, cls in cls_of.items():
            x = tl.ones(1, dtype=tl_dtype(name))
            rule = k["rule"]
            # the FLOAT rule computes integers and bool in the default float dtype
            runs = k["exprs"]["float" if rule == "FLOAT" and cls not in ("double",) else cls]
            if runs is not None and not (rule == "NO_BOOL" and name == "bool"):
                getattr(tl, d["name"])(x)
            else:
                with pytest.raises((NotImplementedError, RuntimeError)):
                    getattr(tl, d["name"])(x)


# ---------------------------------------------------------------------------------------------
# output layout: PyTorch's TensorIterator lays a new output out in the inputs' memory order

def iterator_strides(shape, inputs):
    """The strides PyTorch gives a new elementwise output of ``shape`` over the tensor
    ``inputs`` (a plain-Python statement of its rule): contiguous when every input is
    contiguous and of the output's shape; else the dims sorted innermost first by the
    inputs' strides (the first input whose strides differ decides; broadcast dims, stride 0,
    say nothing; equal strides put the smaller dim inside), starting from the reversed
    order and moving a dim only past those it must go outside of."""
    nd = len(shape)
    if all(tuple(t.shape) == tuple(shape) and t.is_contiguous() for t in inputs):
        perm = list(range(nd - 1, -1, -1))
    else:
        bst = []
        for t in inputs:
            off = nd - t.dim()
            bst.append([0 if i < off or (t.shape[i - off] == 1 and shape[i] != 1)
                        else t.stride()[i - off] for i in range(nd)])

        def swap(d0, d1):
            for st_ in bst:
                if st_[d0] == 0 or st_[d1] == 0:
                    continue
                if st_[d0] != st_[d1]:
                    return 1 if st_[d0] > st_[d1] else -1
                if shape[d0] > shape[d1]:
                    return 1
            return 0
        perm = list(range(nd - 1, -1, -1))
        for i in range(1, nd):
            d1 = i
            for d0 in range(i - 1, -1, -1):
                c = swap(perm[d0], perm[d1])
                if c > 0:
                    perm[d0], perm[d1] = perm[d1], perm[d0]
                    d1 = d0
                elif c < 0:
                    break
    out, cur = [0] * nd, 1
    for d in perm:
        out[d] = cur
        cur *= max(shape[d], 1)
    return out


def assert_iterator_layout(got, inputs):
    """``got``'s strides are PyTorch's for an elementwise result over ``inputs`` (on every
    dim of size > 1, the only ones a layout can tell apart)."""
    if got.numel() <= 1:
        return
    want = iterator_strides(tuple(got.shape), [t for t in inputs if isinstance(t, tl.Tensor)])
    assert [s for s, n in zip(got.stride(), got.shape) if n > 1] == \
        [s for s, n in zip(want, got.shape) if n > 1], (got.stride(), want)

def _layouts(lib):
    """Inputs of several layouts: transposed, permuted, overlapping (unfold), sliced,
    broadcast against a contiguous partner."""
    base = lib.arange(48, dtype=lib.float32).reshape(2, 3, 8)
    return [
        (base.transpose(0, 2),),
        (base.permute(1, 2, 0),),
        (base.permute(2, 0, 1)[:, :, ::2],),
        (base.unfold(2, 3, 2),),
        (base.transpose(1, 2), lib.ones(8, 1, dtype=lib.float64)),
        (lib.ones(3, dtype=lib.float64), base[0].t()),
        (base.transpose(0, 2), base.permute(2, 0, 1).contiguous().permute(0, 2, 1)),
        (base.mT, 2.5),
    ]


@pytest.mark.parametrize("case", range(8))
@pytest.mark.parametrize("fn", ["exp", "neg", "add", "mul", "clamp", "where", "gt"])
def test_elementwise_output_strides_follow_inputs(case, fn):
    """The strides of a new elementwise result match PyTorch's for every dim of size > 1."""
    torch = pytest.importorskip("torch")
    outs = []
    for lib in (tl, torch):
        args = _layouts(lib)[case]
        a = args[0]
        b = args[1] if len(args) > 1 else a
        if fn == "exp":
            r = a.exp()
        elif fn == "neg":
            r = -a
        elif fn == "add":
            r = a + b
        elif fn == "mul":
            r = lib.mul(b, a)
        elif fn == "clamp":
            r = a.clamp(1.0, 30.0)
        elif fn == "gt":
            r = a > b
        else:
            r = lib.where(a > 3, a, b)
        outs.append(r)
    r, t = outs
    assert tuple(r.shape) == tuple(t.shape)
    # the plain statement of the rule the property tests use agrees with torch here too
    ins = [x for x in _layouts(torch)[case] if isinstance(x, torch.Tensor)]
    if fn == "mul":
        ins = ins[::-1]                 # (called as mul(b, a): the first input decides)
    want = iterator_strides(tuple(t.shape), ins)
    assert [s for s, n in zip(want, t.shape) if n > 1] == \
        [s for s, n in zip(t.stride(), t.shape) if n > 1]
    assert [s for s, n in zip(r.stride(), r.shape) if n > 1] == \
        [s for s, n in zip(t.stride(), t.shape) if n > 1]
    np.testing.assert_allclose(r.numpy(), t.numpy(), rtol=1e-6)      # (exp: within ulps)


def test_inplace_into_an_expanded_tensor_is_refused_before_a_missing_kernel():
    """PyTorch checks an in-place output for aliased elements before it looks for a kernel of
    the dtypes: x ^= 1.5 on an expanded float tensor raises the overlap error, not the
    missing bitwise_xor kernel's NotImplementedError."""
    e = tl.zeros(1, 2).expand(3, 2)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        e ^= 1.5
    with pytest.raises(NotImplementedError, match="bitwise_xor"):
        f = tl.zeros(3, 2)
        f ^= 1.5


def test_inplace_refused_for_partial_overlap_keeps_the_version():
    """A write that raises writes nothing, its version included: x.pow_(v) with v a view
    partly overlapping x raises PyTorch's partial-overlap error and x._version stays."""
    x = tl.tensor([[3], [-1], [5]], dtype=tl.int32)
    v = x.unsqueeze(1)[1]
    with pytest.raises(RuntimeError, match="some elements of the input tensor"):
        x.pow_(v)
    assert x._version == 0 and x.flatten().tolist() == [3, -1, 5]


def test_half_mul_div_read_a_one_element_second_operand_unrounded():
    """PyTorch's mul and div kernels read a "scalar" second operand (a Python number or any
    one-element tensor) in float, unrounded: half * tensor(70000) is 35000 rounded to half
    (35008), not half(70000) = inf times the operand. Other ops, and larger operands,
    convert it to the half type first."""
    x = tl.tensor([0.5, 0.0, -2.0], dtype=tl.float16)
    for b in (70000, tl.tensor(70000), tl.tensor([70000]), tl.tensor(70000.0, dtype=tl.float64)):
        assert (x * b).tolist() == [35008.0, 0.0, float("-inf")]
    assert (x / tl.tensor(1e-8, dtype=tl.float64)).tolist() == [float("inf"), 0.0, float("-inf")]
    y = x.clone()
    y *= tl.tensor(70000)
    assert y.tolist() == [35008.0, 0.0, float("-inf")]
    assert (tl.tensor(70000) * x)[1].isnan().item()           # (the first operand converts)
    assert (x * tl.tensor([70000, 70000, 70000]))[1].isnan().item()
    assert (x + tl.tensor(70000)).tolist() == [float("inf")] * 2 + [float("inf")]


def test_out_of_a_wider_dtype_gets_the_half_rounded_result():
    """An op computed in float16 with out= of float32 writes the float16 result cast to
    float32 (PyTorch's), not the float32 loop's unrounded value."""
    a = tl.tensor([0.1, 1000.3], dtype=tl.float16)
    b = tl.tensor([0.2, 0.07], dtype=tl.float16)
    for fn in (tl.add, tl.mul, tl.atan2):
        o = tl.empty(2, dtype=tl.float32)
        assert fn(a, b, out=o).tolist() == fn(a, b).float().tolist()
    o = tl.empty(0, dtype=tl.float64)
    assert tl.exp(a, out=o).tolist() == tl.exp(a).double().tolist() and o.shape == (2,)


@pytest.mark.parametrize("name", EW_DECL.UNARY_OPS + EW_DECL.BINARY_OPS)
def test_bool_view_of_bytes_reads_truth_values(name):
    """A bool view of bytes other than 0 and 1 (``u8.view(bool)``) is read as its truth
    values, as PyTorch loads a bool: every op with a bool loop gives the result of the same
    op on the 0/1 tensor of those truth values."""
    raw = tl.tensor([0, 1, 2, 255, 7, 128, 0, 3], dtype=tl.uint8)
    b = raw.view(tl.bool)
    clean = raw.ne(0)
    other = tl.tensor([1, 1, 0, 5, 0, 64, 9, 2], dtype=tl.uint8).view(tl.bool)
    fn = getattr(tl, name)
    try:
        expected = fn(clean) if name in EW_DECL.UNARY_OPS else fn(clean, other.ne(False))
    except (RuntimeError, NotImplementedError, TypeError):
        return                                      # no bool loop
    got = fn(b) if name in EW_DECL.UNARY_OPS else fn(b, other)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got.numpy(), expected.numpy())   # (NaN equals NaN)
    if got.dtype == tl.bool:                        # and the bytes written are 0 or 1
        assert set(got.view(tl.uint8).tolist()) <= {0, 1}


@pytest.mark.parametrize("name", EW_DECL.UNARY_OPS + EW_DECL.BINARY_OPS)
def test_bool_view_of_bytes_matches_torch(name, torch):
    """The same bool views of bytes other than 0 and 1, run on torch: the same dtype, the same
    values (the math functions within assert_close's tolerance), the same error class."""
    raw, raw_other = [0, 1, 2, 255, 7, 128, 0, 3], [1, 1, 0, 5, 0, 64, 9, 2]

    def run(lib):
        b = lib.tensor(raw, dtype=lib.uint8).view(lib.bool)
        other = lib.tensor(raw_other, dtype=lib.uint8).view(lib.bool)
        fn = getattr(lib, name, None) or getattr(nnf(lib), name)
        try:
            return fn(b) if name in EW_DECL.UNARY_OPS else fn(b, other)
        except (RuntimeError, NotImplementedError, TypeError) as e:
            return type(e)

    got, expected = run(tl), run(torch)
    if isinstance(expected, type) or isinstance(got, type):
        assert got is expected
        return
    assert dname(got) == dname(expected)
    rtol, atol = CLOSE.get(dname(got), (0, 0))
    np.testing.assert_allclose(got.numpy().astype(np.float64),
                               expected.numpy().astype(np.float64), rtol=rtol, atol=atol)
