"""Shared references for the view / indexing / copy / write-rule tests.

An input is built three times from the same values: as a tensorlib tensor, as a NumPy array
(the value reference; float32 stands in for bfloat16) and, when torch is installed, as a
torch tensor (the behavioural spec). The same layout steps (permute, positive-step slices,
expand) are then applied to all three, so every test can run an op on a transposed, sliced
or expanded input and compare values, shapes, strides (in elements), storage offsets and
memory sharing.
"""
import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tensorlib as tl

# For @given tests that also take the (function-scoped, stateless) ``torch`` fixture; keeps
# the active profile's example count.
WITH_FIXTURE = settings(suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64",
          "float16", "bfloat16", "float32", "float64"]
FLOAT_DTYPES = ["float16", "bfloat16", "float32", "float64"]


def tl_dtype(name):
    return getattr(tl, "bool" if name == "bool" else name)


def torch_dtype(torch, name):
    return getattr(torch, name)


def np_dtype(name):
    """The NumPy dtype holding a tensorlib dtype's values (float32 for bfloat16)."""
    return np.dtype(np.float32 if name == "bfloat16" else name)


def bf16_round(a):
    """float32 values rounded to the nearest bfloat16 (ties to even), still as float32."""
    a = np.array(a, dtype=np.float32, order="C")        # (ascontiguousarray makes 0-d 1-d)
    bits = a.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(a), a, out).reshape(a.shape)


def distinct_values(shape, name):
    """A C-contiguous array whose elements are as distinct as the dtype allows, so a wrong
    offset or stride shows in the values."""
    n = int(np.prod(shape, dtype=np.int64))
    k = np.arange(n, dtype=np.int64)
    if name == "bool":
        v = (k % 3) == 1
    elif name in ("uint8", "int8"):
        v = ((k * 7 + 3) % 251) - (0 if name == "uint8" else 125)
    elif name == "bfloat16":
        v = ((k % 256) - 128) * 0.5     # 8 significant bits: exact in bfloat16
    elif name in FLOAT_DTYPES:
        v = (k - n // 2) * 0.5          # exact in float16 for n < 4096
    else:
        v = k * 3 - n
    return np.asarray(v, dtype=np_dtype(name)).reshape(shape)


# the devices the device-neutral tests run on (values are read only where a device has data;
# cuda: the emulator, see conftest.py)
DEVICES = ("cpu", "meta", "cuda")


def make_tensor(a, name, device=None):
    """A contiguous tensorlib tensor of dtype ``name`` holding the values of NumPy array ``a``
    (on meta: its shape and dtype only; no device: the default one)."""
    return tl.tensor(np.array(a, order="C"), device=device).to(tl_dtype(name))


def make_torch(torch, a, name):
    # (torch.tensor(empty ndarray) would get 0 strides; copy into a fresh contiguous tensor)
    a = np.array(a, order="C")
    return torch.empty(a.shape, dtype=torch_dtype(torch, name)).copy_(torch.from_numpy(a))


def to_numpy(t):
    """Values of a tensorlib or torch tensor as a NumPy array (bfloat16 widened to float32).
    A meta tensor has none: tests that read values do not run on meta."""
    assert not getattr(t, "is_meta", False), "a meta tensor has no values to compare"
    if "bfloat16" in str(t.dtype):
        t = t.float()
    if hasattr(t, "detach"):
        t = t.detach()
    if getattr(t, "is_cuda", False):
        t = t.cpu()      # the host reads a device's values through a copy
    return np.array(t.numpy(), copy=True)


def raw_numpy(t):
    """An ndarray over the tensorlib tensor's own memory (bfloat16 seen as int16); for a
    CUDA tensor, over a host copy of its values."""
    if t.dtype == tl.bfloat16:
        t = t.view(tl.int16)
    return t.cpu().numpy() if t.is_cuda else t.numpy()


def assert_values(t, expected):
    got = to_numpy(t)
    expected = np.asarray(expected)
    assert tuple(got.shape) == tuple(expected.shape), (got.shape, expected.shape)
    np.testing.assert_array_equal(got, expected.astype(got.dtype, copy=False))


def np_strides(a):
    """NumPy strides in elements."""
    return tuple(s // a.itemsize for s in a.strides)


def np_offset(view, root):
    """Storage offset (in elements) of NumPy view ``view`` inside C-contiguous ``root``."""
    return (view.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // root.itemsize


def check_view(tv, nv, troot, nroot):
    """tensorlib view ``tv`` against NumPy view ``nv`` (of the mirror ``nroot``): values, shape,
    strides on dims of size > 1 (NumPy is free on size-1 dims), storage offset (when not
    empty: NumPy's empty views may point anywhere), and memory shared with the root."""
    assert tuple(tv.shape) == nv.shape, (tuple(tv.shape), nv.shape)
    assert isinstance(tv.shape, tl.Size) and tv.size() == tv.shape
    assert tv.device == troot.device
    if not tv.is_meta:
        assert_values(tv, nv)
    if nv.size > 1:
        for d in range(nv.ndim):
            if nv.shape[d] > 1:
                assert tv.stride(d) == np_strides(nv)[d], (tv.stride(), np_strides(nv))
    if nv.size > 0:
        assert tv.storage_offset() == np_offset(nv, nroot), (tv.storage_offset(), np_offset(nv, nroot))
        if not (tv.is_meta or tv.is_cuda):
            assert np.shares_memory(raw_numpy(tv), raw_numpy(troot))
        assert tv.data_ptr() == troot.data_ptr() + tv.storage_offset() * tv.element_size()
    assert tv.untyped_storage() is troot.untyped_storage()
    assert tv.is_contiguous() == nv.flags["C_CONTIGUOUS"] or nv.size <= 1
    assert tv.dtype == troot.dtype
    check_view_links(tv, troot)


def check_view_links(tv, troot):
    """A view points at the root base and shares its version counter."""
    root = troot if troot._base is None else troot._base
    assert tv._is_view() and tv._base is root
    v = root._version
    assert tv._version == v


def check_torch(tv, pv):
    """tensorlib result ``tv`` against torch result ``pv``: shape, strides, offset, values."""
    assert tuple(tv.shape) == tuple(pv.shape), (tuple(tv.shape), tuple(pv.shape))
    assert tv.stride() == pv.stride(), (tv.stride(), pv.stride(), tuple(pv.shape))
    assert tv.storage_offset() == pv.storage_offset(), (tv.storage_offset(), pv.storage_offset())
    assert tv.is_contiguous() == pv.is_contiguous()
    assert str(tv.dtype).split(".")[-1] == str(pv.dtype).split(".")[-1]
    np.testing.assert_array_equal(to_numpy(tv), to_numpy(pv))


def outcome(fn, *args):
    """('ok', result) or ('err', exception class) — to compare error behaviour across libs."""
    try:
        return "ok", fn(*args)
    except (RuntimeError, IndexError, ValueError, TypeError) as e:
        return "err", type(e)


# ---------------------------------------------------------------------------------------------
# layouts: the same steps applied to tensorlib, NumPy and torch

def apply_steps(x, steps, kind):
    """Apply layout steps to ``x`` ("tl", "torch" or "np")."""
    for step in steps:
        op = step[0]
        if op == "permute":
            x = x.transpose(step[1]) if kind == "np" else x.permute(step[1])
        elif op == "slice":
            x = x[step[1] + (Ellipsis,)]         # NumPy: a 0-d x[()] would be a scalar copy
        elif op == "expand":
            x = np.broadcast_to(x, step[1]) if kind == "np" else x.expand(step[1])
    return x


def _shape_after(shape, step):
    op = step[0]
    if op == "permute":
        return tuple(shape[p] for p in step[1])
    if op == "slice":
        return tuple(len(range(*s.indices(n))) for s, n in zip(step[1], shape))
    return tuple(step[1])


@st.composite
def pos_slices(draw, n):
    """A slice with a positive (or absent) step and any bounds, in or out of range."""
    start = draw(st.none() | st.integers(-n - 2, n + 2))
    stop = draw(st.none() | st.integers(-n - 2, n + 2))
    step = draw(st.none() | st.integers(1, n + 2))
    return slice(start, stop, step)


@st.composite
def layout_steps(draw, shape, allow_expand=True, max_steps=2):
    """Up to ``max_steps`` steps turning a contiguous ``shape`` into a transposed, sliced or
    expanded one. Returns (steps, final shape)."""
    steps = []
    kinds = ["permute", "slice"] + (["expand"] if allow_expand else [])
    for _ in range(draw(st.integers(0, max_steps))):
        kind = draw(st.sampled_from(kinds))
        if kind == "permute":
            step = ("permute", tuple(draw(st.permutations(range(len(shape))))))
        elif kind == "slice":
            step = ("slice", tuple(draw(pos_slices(n)) for n in shape))
        else:
            lead = draw(st.integers(0, 1))
            new = [draw(st.integers(0, 3))] * lead + [
                draw(st.integers(0, 3)) if n == 1 else n for n in shape]
            step = ("expand", tuple(new))
        steps.append(step)
        shape = _shape_after(shape, step)
    return steps, shape


class Case:
    """One input built three ways; ``x``/``n``/``p`` are the laid-out tensorlib tensor, NumPy
    array and torch tensor (None without torch); ``root``/``nroot``/``proot`` the contiguous
    originals."""

    def __init__(self, name, values, steps, torch=None, device="cpu"):
        self.name = name
        self.values = values
        self.steps = steps
        self.root = make_tensor(values, name, device)
        self.nroot = np.array(values, dtype=np_dtype(name))      # its own copy
        self.x = apply_steps(self.root, steps, "tl")
        self.n = apply_steps(self.nroot, steps, "np")
        self.torch = torch
        if torch is not None:
            self.proot = make_torch(torch, values, name)
            self.p = apply_steps(self.proot, steps, "torch")

    @property
    def expanded(self):
        return any(s[0] == "expand" for s in self.steps)

    def __repr__(self):
        return f"Case({self.name}, base {self.values.shape}, steps {self.steps})"


@st.composite
def cases(draw, torch=None, dtypes=DTYPES, min_dims=0, max_dims=4, max_side=5,
          allow_expand=True, max_steps=2, values="distinct", device="cpu"):
    """A Case: a base of a drawn dtype and shape, then drawn layout steps."""
    name = draw(st.sampled_from(dtypes))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=max_side))
    if values == "distinct":
        vals = distinct_values(shape, name)
    else:
        vals = draw(hnp.arrays(np_dtype(name), shape, elements=elements(name)))
        if name == "bfloat16":
            vals = bf16_round(vals)
    steps, _ = draw(layout_steps(shape, allow_expand, max_steps))
    return Case(name, vals, steps, torch, device)


def float_inside(lo, hi, width):
    """st.floats of the given width within [lo, hi], bounds moved inward to representable values."""
    t = {16: np.float16, 32: np.float32, 64: np.float64}[width]
    a, b = t(lo), t(hi)
    if a < lo:
        a = np.nextafter(a, t(0))
    if b > hi:
        b = np.nextafter(b, t(0))
    return st.floats(float(a), float(b), width=width)


def elements(name, small=False):
    """Element strategy for hnp.arrays: finite values, exactly representable in the dtype."""
    if name == "bool":
        return st.booleans()
    if name in FLOAT_DTYPES:
        width = 16 if name == "float16" else 32 if name in ("bfloat16", "float32") else 64
        bound = 100.0 if small else 6e4 if width == 16 else 2.0 ** 100
        return st.floats(-bound, bound, width=width, allow_nan=False, allow_infinity=False)
    info = np.iinfo(name)
    if small:
        return st.integers(max(info.min, -100), min(info.max, 100))
    return st.integers(int(info.min), int(info.max))
