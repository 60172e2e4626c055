"""The CUDA device end to end, on the emulator (conftest sets TENSORLIB_CUDA=emulate and two
devices): tensors on cuda, every declared elementwise op against the CPU, reductions, softmax,
scans, matrix products, copies between devices, memory counters, streams and events, and the
errors PyTorch raises. On a GPU machine the same file runs on the real device
(TENSORLIB_CUDA=pycuda)."""
import ctypes
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib
import tensorlib.ops.decl.elementwise as EW
from tensorlib.ops import cudagen

cuda = tensorlib.cuda
pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="no CUDA device (emulator off)")
EMULATED = cuda.is_available() and cuda.backend_name() == "emulator"
TWO_DEVICES = cuda.is_available() and cuda.device_count() >= 2
# Tests that gate a stream (hold its queue until released) or check the emulator's own
# description run on the emulator only; tests of two devices need two (a GPU machine has one).
emulator_only = pytest.mark.skipif(not EMULATED, reason="gates an emulated stream")
two_devices = pytest.mark.skipif(not TWO_DEVICES, reason="needs two CUDA devices")
RUN_DIR = os.path.dirname(os.path.dirname(tensorlib.__file__))
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64"]


def _dt(name):
    return getattr(tensorlib, name)


def host(t):
    """Values of a tensor as a NumPy array (device tensors through .cpu())."""
    t = t.detach().cpu()
    if t.dtype == tensorlib.bfloat16:
        t = t.float()
    return t.numpy()


def same(got, want, rtol=0.0, atol=0.0):
    """Device result against the CPU result: shape, dtype, values (NaN where NaN)."""
    assert got.device.type == "cuda"
    assert tuple(got.shape) == tuple(want.shape) and got.dtype == want.dtype
    g, w = host(got), host(want)
    if rtol == 0 and atol == 0 and g.dtype.kind != "f":
        np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol,
                                   atol=atol, equal_nan=True)


def tol(dtype):
    """CUDA's float32 functions are not the CPU's hand-written ones: a few ulp apart."""
    return {"float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (2e-6, 1e-6),
            "float64": (1e-12, 1e-14)}.get(dtype, (0, 0))


def test_generated_kernels_are_up_to_date():
    """cuda/ew_ops.cu is what cudagen writes from the declarations today."""
    path = os.path.join(cuda.kernel_dir(), "ew_ops.cu")
    with open(path) as f:
        assert f.read() == cudagen.generate(), "run python -m tensorlib.ops.cudagen"


# ---- devices and tensors ------------------------------------------------------------------

def test_devices_and_placement():
    assert cuda.is_available() and cuda.device_count() >= 1
    assert cuda.backend_name() == ("emulator" if EMULATED else "pycuda")
    x = tensorlib.ones(3, device="cuda")
    assert x.is_cuda and x.device == tensorlib.device("cuda", 0) and str(x.device) == "cuda:0"
    with cuda.device(0):
        assert cuda.current_device() == 0
    assert tensorlib.ones(2).cuda().is_cuda
    y = tensorlib.arange(4.0).to("cuda")
    assert y.to("cuda") is y and y.cuda() is y and y.cpu().device.type == "cpu"
    assert repr(y) == "tensor([0., 1., 2., 3.], device='cuda:0')"
    p = cuda.get_device_properties(0)
    assert p.total_memory > 0 and cuda.get_device_capability(0) == (p.major, p.minor)
    assert ("emulator" in cuda.get_device_name()) == EMULATED


@two_devices
def test_placement_on_the_second_device():
    assert tensorlib.zeros(2, device="cuda:1").device.index == 1
    assert tensorlib.zeros(2, device=1).device == tensorlib.device("cuda:1")
    with cuda.device(1):
        assert cuda.current_device() == 1
        assert tensorlib.empty(2, device="cuda").device.index == 1
    assert cuda.current_device() == 0
    assert tensorlib.ones(2).cuda(1).device.index == 1


@pytest.mark.parametrize("name", DTYPES)
def test_round_trip_every_dtype(name):
    a = np.arange(-6, 18).reshape(4, 6) % 7
    x = tensorlib.tensor(a).to(_dt(name))
    d = x.cuda()
    assert d.dtype == x.dtype and d.shape == x.shape and d.stride() == x.stride()
    same(d, x)
    # strided both ways: a transposed slice up, a strided view down, into strided memory
    v = x.t()[1:, ::2]
    same(v.cuda(), v.contiguous())
    dst = tensorlib.zeros(6, 8).to(_dt(name))[:, ::2]
    dst.copy_(d.t())
    np.testing.assert_array_equal(host(dst), host(x.t()))
    # between the two devices, and a dtype change on the way
    if TWO_DEVICES:
        e = d.to("cuda:1")
        assert e.device.index == 1
        same(e.to("cuda:0"), d)
    same(d.to(tensorlib.float64), x.to(tensorlib.float64).cuda())


def test_creation_on_the_device():
    same(tensorlib.arange(7, device="cuda"), tensorlib.arange(7).cuda())
    same(tensorlib.arange(0.5, 3, 0.25, device="cuda"), tensorlib.arange(0.5, 3, 0.25).cuda())
    same(tensorlib.linspace(-1, 1, 9, device="cuda"), tensorlib.linspace(-1, 1, 9).cuda())
    same(tensorlib.eye(3, 4, device="cuda"), tensorlib.eye(3, 4).cuda())
    same(tensorlib.full((2, 3), 7, device="cuda"), tensorlib.full((2, 3), 7).cuda())
    same(tensorlib.tensor([[1, 2], [3, 4]], device="cuda"), tensorlib.tensor([[1, 2], [3, 4]]).cuda())
    z = tensorlib.zeros(5, dtype=tensorlib.int32, device="cuda")
    z.fill_(3)
    z[1:3] = 9
    assert z.tolist() == [3, 9, 9, 3, 3] and z.sum().item() == 27
    assert tensorlib.ones(2, 3, device="cuda")[1, 2].item() == 1.0
    assert tensorlib.zeros_like(z).device == z.device


def test_float_to_int_casts_give_the_cpu_answer():
    """Out-of-range and NaN floats convert as on the CPU (the type's minimum, narrow types
    through int32), not as the GPU's saturating conversion would."""
    nan, inf = float("nan"), float("inf")
    vals = [nan, inf, -inf, 1e10, -1e10, 1e19, -1e19, 2.0 ** 63, -(2.0 ** 63), 300.0, -1.0,
            2.7, -2.7, 0.0, 70000.0]
    for src in ("float32", "float64", "float16", "bfloat16"):
        x = tensorlib.tensor(vals, dtype=tensorlib.float64).to(_dt(src))
        for dst in ("int64", "int32", "int16", "int8", "uint8", "bool"):
            same(x.cuda().to(_dt(dst)), x.to(_dt(dst)))


def test_small_integer_powers_are_exact():
    """x ** 0, x ** 1 and x ** 2 give the CPU's exact answers (CUDA's pow is within 2 ulp)."""
    x = tensorlib.tensor([3.0, -0.0, 1e-300, 7.1, float("nan"), float("inf")],
                         dtype=tensorlib.float64)
    for e in (0.0, 1.0, 2.0):
        same(x.cuda() ** e, x ** e)
        same(x.float().cuda() ** e, x.float() ** e)


def test_random_matches_the_cpu_stream():
    """Device random numbers come from the same Philox stream as the CPU's: uniform ones
    bit for bit; normal ones too on the emulator (the host's libm), within one float32 ulp
    on a GPU (its log/cos are not glibc's: cuda/random_ops.cu)."""
    tensorlib.manual_seed(7)
    a = tensorlib.randn(100)
    b = tensorlib.rand(50)
    tensorlib.manual_seed(7)
    same(tensorlib.randn(100, device="cuda"), a.cuda(), 0.0 if EMULATED else 2 ** -23)
    same(tensorlib.rand(50, device="cuda"), b.cuda())


# ---- every declared elementwise op against the CPU -----------------------------------------

def _inputs(name, binary):
    """Values every op accepts without raising on the CPU: integers away from zero for the
    divisor, floats spread over signs and magnitudes."""
    if name == "bool":
        a = np.array([True, False, True, True, False, False])
        b = np.array([True, True, False, True, False, True])
    elif name in ("float16", "bfloat16", "float32", "float64"):
        a = np.array([-2.5, -0.75, -0.0, 0.3, 1.0, 2.25])
        b = np.array([1.5, -0.5, 2.0, 0.7, -3.0, 0.25])
    else:
        a = np.array([-7, -2, 0, 1, 5, 9]) if name != "uint8" else np.array([0, 1, 5, 9, 200, 3])
        b = np.array([3, -2, 1, 4, 2, 7]) if name != "uint8" else np.array([3, 2, 1, 4, 2, 7])
    dt = _dt(name)
    x = tensorlib.tensor(a).to(dt).view(2, 3)
    y = tensorlib.tensor(b).to(dt).view(2, 3)
    return (x, y) if binary else (x,)


def _cpu_outcome(fn, args):
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001 - the device must raise the same class
        return None, type(e)


@pytest.mark.parametrize("op", EW.UNARY_OPS)
def test_unary_ops_match_the_cpu(op):
    fn = getattr(tensorlib, op)
    checked = 0
    for name in DTYPES:
        args = _inputs(name, False)
        want, err = _cpu_outcome(fn, args)
        dev = [a.cuda() for a in args]
        if err is not None:
            with pytest.raises(err):
                fn(*dev)
            continue
        rtol, atol = tol(want.dtype.__str__().split(".")[-1])
        same(fn(*dev), want, rtol, atol)
        # the transposed (non-contiguous) input and out= into a strided tensor
        same(fn(dev[0].t()), fn(args[0].t()), rtol, atol)
        checked += 1
    assert checked, f"{op}: no dtype ran"


@pytest.mark.parametrize("op", EW.BINARY_OPS)
def test_binary_ops_match_the_cpu(op):
    fn = getattr(tensorlib, op)
    for name in DTYPES:
        x, y = _inputs(name, True)
        want, err = _cpu_outcome(fn, (x, y))
        dx, dy = x.cuda(), y.cuda()
        if err is not None:
            with pytest.raises(err):
                fn(dx, dy)
            continue
        rtol, atol = tol(str(want.dtype).split(".")[-1])
        same(fn(dx, dy), want, rtol, atol)
        # broadcasting a row, and a Python number
        same(fn(dx, dy[1]), fn(x, y[1]), rtol, atol)
        scalar = 2 if name != "bool" else True
        w2, e2 = _cpu_outcome(fn, (x, scalar))
        if e2 is None:
            same(fn(dx, scalar), w2, rtol, atol)


def test_mixed_dtypes_scalars_and_in_place():
    x = tensorlib.tensor([[1, 2, 3], [4, 5, 6]], dtype=tensorlib.int32)
    y = tensorlib.tensor([0.5, 1.5, 2.5], dtype=tensorlib.float16)
    dx, dy = x.cuda(), y.cuda()
    same(dx * dy, x * y, 1e-3)
    same(dx + 2.5, x + 2.5)
    same(dx + tensorlib.tensor(3.0), x + 3.0)           # a 0-d CPU tensor joins
    same(tensorlib.add(dx, dx, alpha=3), tensorlib.add(x, x, alpha=3))
    same(dx.clamp(2, 5), x.clamp(2, 5))
    same(tensorlib.where(dx > 3, dx, -dx), tensorlib.where(x > 3, x, -x))
    f = tensorlib.tensor([0.0, 0.25, 1.0]).cuda()
    same(tensorlib.lerp(f, f + 10, 0.3), tensorlib.lerp(f.cpu(), f.cpu() + 10, 0.3), 1e-6)
    same(tensorlib.nn.functional.leaky_relu(f - 0.5, 0.2),
         tensorlib.nn.functional.leaky_relu(f.cpu() - 0.5, 0.2), 1e-7)
    v = dx._version
    dx.mul_(2)
    dx[:, 1].add_(100)
    assert dx._version == v + 2
    assert dx.tolist() == [[2, 104, 6], [8, 110, 12]]
    out = tensorlib.empty(2, 3, device="cuda")
    tensorlib.mul(dx, 0.5, out=out)
    assert out.tolist() == [[1.0, 52.0, 3.0], [4.0, 55.0, 6.0]]


def test_integer_division_by_zero_gives_minus_one_on_the_device():
    """The GPU does not trap and PyTorch's CUDA kernels do not check (the CPU raises)."""
    x = tensorlib.tensor([7, -7, 3]).cuda()
    z = tensorlib.tensor([0, 0, 2]).cuda()
    assert (x // z).tolist() == [-1, -1, 1]
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        x.cpu() // z.cpu()


# ---- reductions, softmax, scans, products ---------------------------------------------------

@given(st.integers(1, 5), st.integers(1, 70), st.sampled_from(["float32", "float64", "int64"]),
       st.integers(0, 2), st.booleans())
def test_reductions_match_the_cpu(rows, cols, name, dim, transpose):
    rng = np.random.default_rng(rows * 100 + cols)
    a = rng.standard_normal((rows, cols, 3)) * 4
    x = tensorlib.tensor(a).to(_dt(name))
    if transpose:
        x = x.transpose(0, 2)
    d = x.cuda()
    dim = dim % x.ndim
    rtol = 1e-5 if name == "float32" else 1e-12
    same(d.sum(), x.sum(), rtol, 1e-6)
    same(d.sum(dim), x.sum(dim), rtol, 1e-6)
    same(d.amax(dim, keepdim=True), x.amax(dim, keepdim=True))
    same(d.amin(), x.amin())
    same(d.argmax(dim), x.argmax(dim))
    same(d.argmin(), x.argmin())
    v, i = d.max(dim)
    same(v, x.max(dim).values)
    same(i, x.max(dim).indices)
    same((d > 0).any(dim), (x > 0).any(dim))
    same((d > -100).all(), (x > -100).all())
    same(tensorlib.count_nonzero(d > 1, dim), tensorlib.count_nonzero(x > 1, dim))
    if name != "int64":
        same(d.mean(dim), x.mean(dim), rtol, 1e-6)
        same(d.var(dim, correction=0), x.var(dim, correction=0), rtol * 10, 1e-6)
        same(d.std(), x.std(), rtol * 10, 1e-6)
        same(d.norm(), x.norm(), rtol, 1e-6)
        same(d.norm(1, dim), x.norm(1, dim), rtol, 1e-6)
        same(d.norm(float("inf")), x.norm(float("inf")))
        same(d.logsumexp(dim), x.logsumexp(dim), rtol, 1e-6)
        same(d.prod(dim), x.prod(dim), rtol * 10, 1e-6)
        same(tensorlib.softmax(d, dim), tensorlib.softmax(x, dim), rtol * 10, 1e-7)
        same(tensorlib.log_softmax(d, dim), tensorlib.log_softmax(x, dim), rtol * 10, 1e-6)
    same(d.cumsum(dim), x.cumsum(dim), rtol, 1e-5)


def test_reduction_exactness_and_ties():
    ones = tensorlib.ones(1 << 20, device="cuda")
    assert ones.sum().item() == float(1 << 20)
    x = tensorlib.tensor([[1.0, 3.0, 3.0, float("nan"), float("nan")], [2, 2, 1, 0, 2]]).cuda()
    assert x.argmax(1).tolist() == [3, 0]       # the first NaN; the first of tied maxima
    assert x.argmin(1).tolist() == [3, 4 - 1]
    assert tensorlib.isnan(x.max(1).values).tolist() == [True, False]


def test_long_rows_split_over_blocks_give_the_cpu_answer():
    """Few outputs with long rows are split over several blocks whose parts are combined in
    a fixed tree: ties and NaNs keep the first index across parts, sums stay accurate."""
    n = 50_000
    v = np.zeros((2, n), np.float32)
    v[0, [7, 20_000, 45_000]] = 5.0            # tied maxima in different parts
    v[1, [30_000, 40_000]] = np.nan            # NaNs in later parts only
    v[1, 3] = 9.0
    x = tensorlib.tensor(v).cuda()
    assert x.argmax(1).tolist() == [7, 30_000]
    assert x.max(1).indices.tolist() == [7, 30_000]
    assert x.argmin(1).tolist() == [0, 30_000]
    got = x[0].max()
    assert got.item() == 5.0
    r = np.random.default_rng(5).standard_normal((3, n)).astype(np.float32)
    xr = tensorlib.tensor(r)
    for name in ("sum", "mean", "prod", "amax", "std", "logsumexp"):
        want = getattr(xr, name)(1)
        same(getattr(xr.cuda(), name)(1), want, 2e-6, 1e-6)
    same(xr.cuda().sum(), xr.sum(), 2e-6, 1e-6)
    same(xr.cuda().norm(), xr.norm(), 2e-6, 1e-6)
    ones = tensorlib.ones(3 << 16, device="cuda")
    assert ones.sum().item() == float(3 << 16) and ones.mean().item() == 1.0


@pytest.mark.parametrize("n", [64, 100, 2500, 9000, 16384, 16385])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_over_long_rows(n, dtype):
    """Rows of 64 or more elements take a block each (up to 16K kept in registers, longer
    ones read three times): NaN rows, -inf entries, large values."""
    rng = np.random.default_rng(n)
    a = rng.standard_normal((5, n)) * 30
    a[1, 7] = np.nan
    a[2, ::3] = -np.inf
    a[3] += 1e4
    x = tensorlib.tensor(a).to(_dt(dtype))
    rtol, atol = (2e-5, 1e-6) if dtype == "float32" else (1e-12, 1e-13)
    for f in (tensorlib.softmax, tensorlib.log_softmax):
        same(f(x.cuda(), 1), f(x, 1), rtol, atol)
        same(f(x.cuda().t(), 0), f(x.t(), 0), rtol, atol)

def test_column_reductions_read_neighbours():
    """sum over the rows of a wide matrix: one thread per column (the coalesced walk)."""
    r = np.random.default_rng(6).standard_normal((70, 2500))
    xr = tensorlib.tensor(r)
    for name in ("sum", "amax", "argmin", "var"):
        same(getattr(xr.cuda(), name)(0), getattr(xr, name)(0), 1e-12, 1e-12)


# ---- the 16-byte vector paths: lengths around the vector width, misaligned views --------

def _bits(t):
    return host(t).view(np.uint8)


@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 1023, 4096 + 3])
@pytest.mark.parametrize("dtype", ["float32", "int32", "float64", "int64"])
def test_elementwise_vector_path_lengths_and_alignment(n, dtype):
    """Aligned operands take 16-byte vectors and a scalar tail; operands all one element
    into aligned buffers (x[1:], y[1:], out[1:]) a scalar head, then vectors; operands at
    different offsets the scalar loop. All give the CPU's answer, and the same bits."""
    rng = np.random.default_rng(n + 11)
    a = tensorlib.tensor(rng.standard_normal(n + 1) * 50).to(_dt(dtype))
    b = tensorlib.tensor(rng.standard_normal(n + 1) * 50).to(_dt(dtype))
    da, db = a.cuda(), b.cuda()
    flt = dtype.startswith("float")
    results = []
    for s in (slice(0, n), slice(1, n + 1)):
        x, y, dx, dy = a[s], b[s], da[s], db[s]
        same(dx + dy, x + y)
        same(dx * dy, x * y)
        # x + alpha * y: nvcc fuses it into one fma, the CPU rounds twice
        same(tensorlib.add(dx, dy, alpha=3), tensorlib.add(x, y, alpha=3), *tol(dtype))
        same(dx + 3, x + 3)
        same(2 * dy, 2 * y)
        same(-dx, -x)
        same(dx.abs(), x.abs())
        if flt:
            same(tensorlib.exp(dx / 50), tensorlib.exp(x / 50), *tol(dtype))
            results.append([tensorlib.exp(dx / 50), dx * dy + 1])    # [1]: misaligned
        # a misaligned output with aligned inputs, and the other way round
        out = tensorlib.empty(n + 1, dtype=_dt(dtype), device="cuda")[1:]
        tensorlib.mul(da[:n], db[:n], out=out)
        same(out, a[:n] * b[:n])
        tensorlib.add(da[1:], db[:n], out=out)
        same(out, a[1:] + b[:n])
        # every operand at the same offset from a 16-byte boundary
        out_s = tensorlib.empty(n + 1, dtype=_dt(dtype), device="cuda")[s]
        tensorlib.mul(dx, dy, out=out_s)
        same(out_s, x * y)
        if flt:
            results[-1].append(out_s)
    if flt:     # vector path and scalar path: the same expression, the same bits
        aligned = [tensorlib.exp(da[1:].clone() / 50), da[1:].clone() * db[1:].clone() + 1,
                   da[1:].clone() * db[1:].clone()]
        scalar = da[1:] * db[1:].clone()        # different offsets: the scalar loop
        for u, v in zip(aligned + [scalar], results[1] + [results[1][2]]):
            assert (_bits(u) == _bits(v)).all()


@pytest.mark.parametrize("n", [1, 3, 5, 1023, 4096 + 3, 50_003, 1 << 18])
def test_float32_sums_of_vectors_with_misaligned_starts(n):
    """Long contiguous float32 rows are summed with 16-byte loads after a scalar head up to
    the first 16-byte boundary; every start offset and row alignment gives the sum in double
    rounded to float (the CPU's float32 sum of 2^18 elements is further off than that)."""
    r = np.random.default_rng(n).standard_normal((3, n + 3)).astype(np.float32)
    x = tensorlib.tensor(r)
    d = x.cuda()
    x64 = x.double()
    for off in range(4):
        same(d[0, off:off + n].sum(), x64[0, off:off + n].sum().float(), 2e-6, 1e-6)
        same(d[:, off:off + n].sum(1), x64[:, off:off + n].sum(1).float(), 2e-6, 1e-6)
        same(d[:, off:off + n].mean(1), x64[:, off:off + n].mean(1).float(), 2e-6, 1e-6)
    flat = d.reshape(-1)
    same(flat.sum(), x64.reshape(-1).sum().float(), 2e-6, 1e-6)
    same(flat[1:].sum(), x64.reshape(-1)[1:].sum().float(), 2e-6, 1e-6)
    ones = tensorlib.ones(n + 5, device="cuda")
    for off in range(4):
        assert ones[off:].sum().item() == float(n + 5 - off)


@pytest.mark.parametrize("n", [4096, 4099, 16384])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_vector_rows_and_misaligned_input(n, dtype):
    """Rows of whole 16-byte vectors take vector loads and stores; a row length off the
    vector width or an input starting one element in takes the scalar walks."""
    rng = np.random.default_rng(n)
    a = rng.standard_normal(4 * n + 1) * 30
    a[7] = np.nan
    a[2 * n:3 * n:3] = -np.inf
    flat = tensorlib.tensor(a).to(_dt(dtype))
    dflat = flat.cuda()
    rtol, atol = (2e-5, 1e-6) if dtype == "float32" else (1e-12, 1e-13)
    for s in (slice(0, 4 * n), slice(1, 4 * n + 1)):
        x, dx = flat[s].view(4, n), dflat[s].view(4, n)
        for f in (tensorlib.softmax, tensorlib.log_softmax):
            same(f(dx, 1), f(x, 1), rtol, atol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matrix_products_match_the_cpu(dtype):
    rng = np.random.default_rng(3)
    a = tensorlib.tensor(rng.standard_normal((3, 20, 33))).to(_dt(dtype))
    b = tensorlib.tensor(rng.standard_normal((3, 33, 17))).to(_dt(dtype))
    rtol = 1e-5 if dtype == "float32" else 1e-12
    same(a.cuda() @ b.cuda(), a @ b, rtol, 1e-5)
    same(a[0].cuda() @ b[0].cuda(), a[0] @ b[0], rtol, 1e-5)
    same(a[0].cuda().t() @ a[0].cuda(), a[0].t() @ a[0], rtol, 1e-5)       # strided operand
    same(a.cuda() @ b[0].cuda(), a @ b[0], rtol, 1e-5)                      # broadcast batch
    w, bias = b[0, :, :5].t().contiguous(), tensorlib.ones(5).to(_dt(dtype))
    same(tensorlib.nn.functional.linear(a[1].cuda(), w.cuda(), bias.cuda()),
         tensorlib.nn.functional.linear(a[1], w, bias), rtol, 1e-5)
    h = a[0].half()
    same(h.cuda() @ h.cuda().t(), h @ h.t(), 2e-3, 1e-2)



@pytest.mark.parametrize("batch,m,k,n", [(64, 129, 20, 131), (1, 67, 9, 65), (2, 5, 0, 3)])
@pytest.mark.parametrize("layout", ["nn", "tn", "nt", "tt"])
def test_register_tiled_products_over_tile_edges(batch, m, k, n, layout):
    """Both tile sizes (128 for many blocks, 64 otherwise), sizes off the tile edges, K not
    a multiple of the slice depth, and operands transposed (staged along their contiguous
    index)."""
    rng = np.random.default_rng(m + n)
    a = tensorlib.tensor(rng.standard_normal((batch, k, m) if layout[0] == "t"
                                             else (batch, m, k)).astype(np.float32))
    b = tensorlib.tensor(rng.standard_normal((batch, n, k) if layout[1] == "t"
                                             else (batch, k, n)).astype(np.float32))
    a = a.transpose(1, 2) if layout[0] == "t" else a
    b = b.transpose(1, 2) if layout[1] == "t" else b
    same(a.cuda() @ b.cuda(), a @ b, 1e-5, 1e-5)
    same(a.double().cuda() @ b.double().cuda(), a.double() @ b.double(), 1e-12, 1e-12)

# ---- autograd and modules on the device ----------------------------------------------------

def test_autograd_on_the_device_matches_the_cpu():
    tensorlib.manual_seed(0)
    w1, w2 = tensorlib.randn(8, 16), tensorlib.randn(16, 3)
    x = tensorlib.randn(5, 8)
    grads = []
    for dev in ("cpu", "cuda"):
        a = w1.detach().to(dev).requires_grad_()
        b = w2.detach().to(dev).requires_grad_()
        h = (x.to(dev) @ a).tanh()
        loss = tensorlib.log_softmax(h @ b, 1).sum(1).mean() + (a * a).sum() * 0.01
        loss.backward()
        assert a.grad.device.type == dev
        grads.append((loss.item(), host(a.grad), host(b.grad)))
    (l0, ga0, gb0), (l1, ga1, gb1) = grads
    assert abs(l0 - l1) < 1e-5
    np.testing.assert_allclose(ga1, ga0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gb1, gb0, rtol=1e-5, atol=1e-6)


def test_module_to_device():
    m = tensorlib.nn.Sequential(tensorlib.nn.Linear(4, 6), tensorlib.nn.GELU(),
                                tensorlib.nn.Linear(6, 2))
    x = tensorlib.randn(3, 4)
    want = m(x)
    m.cuda()
    assert all(p.is_cuda for p in m.parameters())
    same(m(x.cuda()), want, 1e-5, 1e-6)
    assert m.to("cpu")(x).device.type == "cpu"


def test_unported_kernels_raise_naming_the_op():
    # what the device does not run says so: here, operands whose layouts leave more dims
    # after coalescing than the elementwise descriptor holds
    x = tensorlib.ones((2,) * 9, device="cuda")
    with pytest.raises(NotImplementedError, match="CUDA (copy|elementwise).*: 9 dims"):
        x + x.permute(*range(8, -1, -1))


# ---- memory ---------------------------------------------------------------------------------

def test_device_memory_is_counted_exactly():
    cuda.synchronize()
    base_gpu, base_cpu = cuda.memory_allocated(), tensorlib.memory.memory_allocated()
    x = tensorlib.empty(1000, device="cuda")           # 4000 bytes -> 4096 rounded
    assert cuda.memory_allocated() - base_gpu == 4096
    assert tensorlib.memory.memory_allocated("cuda:0") == cuda.memory_allocated()
    y = x * 2
    assert cuda.memory_allocated() - base_gpu == 8192
    assert tensorlib.memory.memory_allocated() == base_cpu       # no host memory held
    assert cuda.max_memory_allocated() >= cuda.memory_allocated()
    assert cuda.memory_stats()["allocation.all.current"] >= 2
    if TWO_DEVICES:
        on1 = cuda.memory_allocated(1)
        z = tensorlib.empty(10, device="cuda:1")
        assert cuda.memory_allocated(1) - on1 == 512
        assert cuda.memory_allocated() - base_gpu == 8192
        del z
        assert cuda.memory_allocated(1) == on1
    del x, y
    assert cuda.memory_allocated() == base_gpu
    assert cuda.memory_reserved() >= cuda.memory_allocated()
    cuda.empty_cache()
    free, total = cuda.mem_get_info()
    assert 0 < free <= total
    assert "CUDA" in cuda.memory_summary() or "cuda" in cuda.memory_summary()


def test_out_of_device_memory_is_recoverable():
    cuda.synchronize()
    keep = tensorlib.ones(1 << 16, device="cuda")
    total = cuda.get_device_properties().total_memory
    try:
        cuda.set_per_process_memory_fraction((cuda.memory_reserved() + (1 << 20)) / total)
        with pytest.raises(cuda.OutOfMemoryError, match="CUDA"):
            tensorlib.empty(1 << 24, device="cuda")
        assert keep.sum().item() == 1 << 16                # nothing already there is lost
        assert tensorlib.empty(1000, device="cuda").numel() == 1000
    finally:
        tensorlib.memory.set_per_process_memory_limit(None, "cuda:0")
    assert tensorlib.empty(1 << 22, device="cuda").numel() == 1 << 22


def test_profiler_sees_device_memory():
    from tensorlib.memory import profile
    x = tensorlib.ones(256, device="cuda")
    with profile() as prof:
        y = (x * 2).exp()
        del y
    got = [(e.kind, e.bytes, str(e.device), e.op) for e in prof.events]
    assert got == [("alloc", 1024, "cuda:0", "mul"), ("alloc", 1024, "cuda:0", "exp"),
                   ("free", 1024, "cuda:0", "mul"), ("free", 1024, "cuda:0", "exp")]


def test_planner_replays_a_device_inference_loop_in_one_arena():
    from tensorlib.memory import plan
    w = tensorlib.randn(64, 64, device="cuda")

    @plan
    def f(inp):
        h = (inp @ w).relu()
        return (h @ w).sum(1)

    inp = tensorlib.randn(8, 64, device="cuda")
    want = ((inp.cpu() @ w.cpu()).relu() @ w.cpu()).sum(1)
    for _ in range(3):
        r = f(inp)
    p = f.last_plan
    assert str(p.device) == "cuda:0" and p.num_requests >= 3
    assert p.arena_bytes <= 1.05 * p.lower_bound_bytes
    calls = cuda.memory_stats()["allocation.all.allocated"]
    for _ in range(5):
        r = f(inp)
    # only the result (it outlives the call) comes from the allocator
    assert cuda.memory_stats()["allocation.all.allocated"] - calls == 5 * p.num_escaping
    np.testing.assert_allclose(host(r), want.numpy(), rtol=1e-4, atol=1e-4)


# ---- streams and events ---------------------------------------------------------------------

@emulator_only
def test_work_is_asynchronous_and_a_missing_wait_reads_stale_values():
    s = cuda.Stream()
    y = tensorlib.zeros(4, device="cuda")
    cuda.synchronize()
    gate = s._native.hold()                     # the emulator's stream waits before the op
    with cuda.stream(s):
        y.add_(1)                               # queued on s, not run yet
    assert not s.query()
    stale = y.cpu()                             # the default stream does not wait for s
    assert stale.tolist() == [0.0, 0.0, 0.0, 0.0]
    gate.release()
    cuda.current_stream().wait_stream(s)        # the fix: order the streams
    assert y.cpu().tolist() == [1.0, 1.0, 1.0, 1.0]
    assert s.query()


@emulator_only
def test_blocks_belong_to_their_stream_and_record_stream_delays_reuse():
    cuda.synchronize()
    s = cuda.Stream()
    x = tensorlib.empty(4096, device="cuda")
    addr = x.data_ptr()
    del x
    with cuda.stream(s):                        # another stream's pool: not x's block
        assert tensorlib.empty(4096, device="cuda").data_ptr() != addr
    y = tensorlib.empty(4096, device="cuda")    # the same stream's pool: x's block again
    assert y.data_ptr() == addr
    gate = s._native.hold()
    with cuda.stream(s):
        z = y * 2                               # s reads y, not run yet
    y.record_stream(s)
    del y
    # while s may still read it, the block is not handed out again
    assert tensorlib.empty(4096, device="cuda").data_ptr() != addr
    gate.release()
    s.synchronize()
    w = tensorlib.empty(4096, device="cuda")
    assert w.data_ptr() == addr                  # after s's work, back in the pool
    assert z.shape == (4096,)
    with pytest.raises(RuntimeError, match="CUDA tensor"):
        tensorlib.ones(2).record_stream(s)


def test_planned_device_memory_leaves_the_counters():
    from tensorlib.memory import plan
    cuda.synchronize()
    base = cuda.memory_allocated()

    @plan
    def f(x):
        return ((x * 2).exp() + 1).sum()

    x = tensorlib.ones(1000, device="cuda")
    for _ in range(4):
        r = f(x)
    del r
    assert cuda.memory_allocated() == base + 4096           # only x is left


@emulator_only
def test_events_order_and_time_streams():
    s1, s2 = cuda.Stream(), cuda.Stream()
    a = tensorlib.ones(1000, device="cuda")
    s1.wait_stream(cuda.current_stream())      # a is filled on the default stream
    start, mid = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    gate = s1._native.hold()
    with cuda.stream(s1):
        start.record()
        b = a * 3
        mid.record()
    s2.wait_event(mid)
    with cuda.stream(s2):
        c = b + 1
    assert not mid.query()
    gate.release()
    s2.synchronize()
    assert c.sum().item() == 4000.0 and mid.query()
    assert start.elapsed_time(mid) >= 0
    with pytest.raises(RuntimeError, match="enable_timing"):
        cuda.Event().elapsed_time(mid)
    cuda.synchronize()


@pytest.mark.skipif(EMULATED, reason="the emulator's version gates a stream instead")
def test_streams_and_events_on_a_real_device():
    """Work queued on a side stream is still running when the host returns; an event orders
    a second stream after it; elapsed_time measures it."""
    s1, s2 = cuda.Stream(), cuda.Stream()
    a = tensorlib.ones(2048, 2048, device="cuda")
    s1.wait_stream(cuda.current_stream())
    start, mid = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    with cuda.stream(s1):
        start.record()
        b = a
        for _ in range(20):                     # tens of milliseconds of work on s1
            b = (b @ a) * (1.0 / 2048)
        mid.record()
    busy = not s1.query()
    s2.wait_event(mid)
    with cuda.stream(s2):
        c = b + 1
    s2.synchronize()
    assert busy and mid.query()
    assert c[0, :4].tolist() == [2.0] * 4 and start.elapsed_time(mid) > 0
    cuda.synchronize()


def test_stream_api_shapes():
    s = cuda.Stream(priority=-1)
    assert s.device == tensorlib.device("cuda", 0) and s.priority == -1
    assert cuda.current_stream() == cuda.default_stream()
    with cuda.stream(s):
        assert cuda.current_stream() is s
    assert cuda.current_stream() == cuda.default_stream()
    e = s.record_event()
    e.synchronize()
    assert e.query() and s.query()
    if TWO_DEVICES:
        s1 = cuda.Stream(device=1)
        assert s1.device.index == 1
        with cuda.stream(s1):
            assert cuda.current_device() == 1
        assert cuda.current_device() == 0


# ---- errors ---------------------------------------------------------------------------------

def test_errors():
    x = tensorlib.ones(2, device="cuda")
    with pytest.raises(RuntimeError, match="same device.*cuda:0.*cpu|same device.*cpu.*cuda:0"):
        x + tensorlib.ones(2)
    if TWO_DEVICES:
        with pytest.raises(RuntimeError, match="same device"):
            x + tensorlib.ones(2, device="cuda:1")
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        tensorlib.ones(2, device="cuda:5")
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        cuda.set_device(7)
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        x.numpy()
    assert x.numpy(force=True).tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="must be cuda"):
        tensorlib.ones(2).cuda("cpu")


def _run(code, **env):
    e = dict(os.environ)
    e.pop("TENSORLIB_CUDA", None)
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=RUN_DIR, env=e, timeout=300)


@emulator_only
def test_runtime_choice_and_its_errors():
    probe = ("import tensorlib; print(tensorlib.cuda.is_available(), "
             "tensorlib.cuda.device_count())")
    r = _run(probe, TENSORLIB_CUDA="off")
    assert r.returncode == 0 and r.stdout.split() == ["False", "0"], r.stderr
    r = _run("import tensorlib; tensorlib.ones(1, device='cuda')", TENSORLIB_CUDA="off")
    assert r.returncode != 0 and "RuntimeError" in r.stderr and "turned off" in r.stderr
    r = _run("import tensorlib; tensorlib.cuda.is_available()", TENSORLIB_CUDA="bogus")
    assert "ValueError" in r.stderr and "TENSORLIB_CUDA='bogus'" in r.stderr
    # pycuda is not installed here (or has no driver): a clear error, never a crash
    r = _run("import tensorlib; tensorlib.ones(1, device='cuda')", TENSORLIB_CUDA="pycuda")
    assert r.returncode == 1 and "CudaDriverMissing" in r.stderr and "pycuda" in r.stderr
    r = _run("import tensorlib\ntry:\n tensorlib.ones(1, device='cuda')\n"
             "except ImportError as e:\n print('ImportError', isinstance(e, RuntimeError))",
             TENSORLIB_CUDA="pycuda")
    assert r.stdout.strip() == "ImportError True", r.stderr
    # import never picks a runtime
    r = _run("import tensorlib, tensorlib.cuda as c; print(c.is_initialized())",
             TENSORLIB_CUDA="emulate")
    assert r.stdout.strip() == "False", r.stderr


def test_pinned_host_memory():
    x = tensorlib.arange(6.0).view(2, 3).t()
    base = tensorlib.memory.memory_allocated()
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned() and p.pin_memory() is p
    assert p.tolist() == x.tolist() and p.is_contiguous() and p.device.type == "cpu"
    assert tensorlib.memory.memory_allocated() - base >= 24        # counted while it lives
    d = p.to("cuda", non_blocking=True)
    assert d.tolist() == x.tolist()
    del p
    assert tensorlib.memory.memory_allocated() == base
    w = tensorlib.ones(3, requires_grad=True)
    q = w.pin_memory()
    (q * 2).sum().backward()
    assert q.is_pinned() and w.grad.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        d.pin_memory()
    batch = {"x": tensorlib.ones(2), "y": (tensorlib.zeros(1), 3)}
    dl = tensorlib.utils.data.DataLoader([batch] * 2, batch_size=None, pin_memory=True)
    got = next(iter(dl))
    assert got["x"].is_pinned() and got["y"][0].is_pinned() and got["y"][1] == 3
    r = _run("import warnings, tensorlib\nwarnings.simplefilter('error')\ntry:\n"
             " tensorlib.utils.data.DataLoader([1], pin_memory=True)\n"
             "except UserWarning as e:\n print('warned', 'pin_memory' in str(e))\n"
             "try:\n tensorlib.ones(2).pin_memory()\nexcept RuntimeError as e:\n"
             " print(type(e).__name__)", TENSORLIB_CUDA="off")
    assert r.stdout.split() == ["warned", "True", "CudaUnavailable"], r.stderr

# ---- DataParallel ---------------------------------------------------------------------------

@two_devices
def test_data_parallel_on_two_devices_equals_one_device():
    tensorlib.manual_seed(1)
    nn = tensorlib.nn
    m = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3)).cuda()
    x = tensorlib.randn(10, 6, device="cuda")
    out1 = m(x)
    (out1 * out1).sum().backward()
    want = [p.grad.cpu() for p in m.parameters()]
    m.zero_grad()
    dp = nn.DataParallel(m)
    assert dp.device_ids == [0, 1] and dp.output_device == 0
    cuda.synchronize(1)
    cuda.reset_peak_memory_stats(1)
    out2 = dp(x)
    assert out2.device == tensorlib.device("cuda", 0) and out2.shape == (10, 3)
    assert cuda.max_memory_allocated(1) > 0              # a replica ran on cuda:1
    same(out2, out1.detach(), 1e-6, 1e-6)
    (out2 * out2).sum().backward()
    for p, g in zip(m.parameters(), want):
        assert p.grad.device == tensorlib.device("cuda", 0)
        np.testing.assert_allclose(host(p.grad), g.numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="device_ids\\[0\\]"):
        nn.DataParallel(nn.Linear(2, 2))(tensorlib.ones(4, 2, device="cuda"))


# ---- the pycuda back end's own logic, on a stand-in driver ----------------------------------

def test_pycuda_runtime_bookkeeping_on_a_stand_in_driver(monkeypatch, tmp_path):
    """Without a GPU, PycudaRuntime runs on a fake ``pycuda.driver`` that records every call:
    segments and address lookup, contexts pushed and popped around each call, launch
    arguments (device addresses as sized ints), modules loaded from the cubin cache."""
    import types
    from tensorlib.cuda import _runtime as rt_mod, kernel_cache
    calls = []
    monkeypatch.setenv("TENSORLIB_CUDA_CACHE", str(tmp_path))
    nvcc_runs = []

    def fake_nvcc(cmd):
        nvcc_runs.append(cmd)
        with open(cmd[cmd.index("-o") + 1], "wb") as f:
            f.write(b"cubin")
        return types.SimpleNamespace(returncode=0, stdout="", stderr="")

    monkeypatch.setattr(kernel_cache, "_run_nvcc", fake_nvcc)
    monkeypatch.setattr(kernel_cache.shutil, "which", lambda name: "/usr/bin/" + name)
    addr = iter(range(1 << 32, 1 << 40, 1 << 24))

    class Alloc:
        def __init__(self, n):
            self.a, self.n = next(addr), n

        def __int__(self):
            return self.a

        def free(self):
            calls.append(("free", self.a))

    class Ctx:
        def __init__(self, i):
            self.i = i

        def push(self):
            calls.append(("push", self.i))

        def pop(self):
            calls.append(("pop", self.i))

    class Device:
        def __init__(self, i):
            self.i = i

        @staticmethod
        def count():
            return 2

        def retain_primary_context(self):
            return Ctx(self.i)

        def name(self):
            return f"Fake GPU {self.i}"

        def compute_capability(self):
            return (9, 0)

        def total_memory(self):
            return 80 << 30

        def get_attribute(self, a):
            return {16: 132}.get(a, -1)

    class FakeStream:
        def is_done(self):
            calls.append(("is_done", self))
            return True

        def synchronize(self):
            calls.append(("stream_sync", self))

        def wait_for_event(self, e):
            calls.append(("wait", self, e))

    class FakeEvent:
        def __init__(self, flags=0):
            self.flags = flags

        def record(self, stream):
            calls.append(("record", self, stream))

        def query(self):
            return True

        def synchronize(self):
            calls.append(("event_sync", self))

        def time_till(self, other):
            return 1.5

    drv = types.SimpleNamespace(
        init=lambda: None, Device=Device, MemoryError=MemoryError,
        mem_alloc=lambda n: Alloc(n),
        memcpy_htod_async=lambda d, h, s: calls.append(("htod", d, h.nbytes, s)),
        memcpy_dtoh_async=lambda h, d, s: calls.append(("dtoh", d, h.nbytes, s)),
        memcpy_dtod_async=lambda d, s_, n, s: calls.append(("dtod", d, s_, n, s)),
        Stream=FakeStream, Event=FakeEvent,
        event_flags=types.SimpleNamespace(DISABLE_TIMING=2),
        host_alloc_flags=types.SimpleNamespace(PORTABLE=1),
        pagelocked_empty=lambda n, dt, order, flags: np.zeros(n, dt),
        device_attribute=types.SimpleNamespace(MULTIPROCESSOR_COUNT=16),
        Context=types.SimpleNamespace(synchronize=lambda: calls.append(("sync",))))
    loaded = []

    class Function:                       # pycuda's Function: its low-level launch
        def __init__(self, name):
            self.name = name

        def _launch_kernel(self, grid, block, params, shared, stream):
            calls.append(("launch", self.name, params, grid, block, shared, stream))

    class Module:
        def get_function(self, name):
            return Function(name)

    def module_from_file(path):
        with open(path, "rb") as f:
            loaded.append((path, f.read()))
        return Module()

    drv.module_from_file = module_from_file
    pkg = types.ModuleType("pycuda")
    pkg.driver = drv
    monkeypatch.setitem(sys.modules, "pycuda", pkg)
    monkeypatch.setitem(sys.modules, "pycuda.driver", drv)
    rt = rt_mod.PycudaRuntime()
    assert rt.device_count() == 2 and rt.device_name(1) == "Fake GPU 1"
    assert rt.properties(0)["major"] == 9 and rt.properties(0)["multi_processor_count"] == 132
    assert rt.grid_cap == 4 * 132               # grid-stride launches: 4 blocks per SM
    a0 = rt.reserve(0, 1000)
    a1 = rt.reserve(1, 4096)
    assert rt.device_of(a0 + 999) == 0 and rt.device_of(a1) == 1
    assert rt.device_of(a0 + 5000) is None and rt.device_of(12345) is None
    assert calls[-2:] == [("push", 1), ("pop", 1)]
    calls.clear()
    rt.htod(a1 + 8, np.zeros(4, np.float32), "s")
    assert calls[:3] == [("push", 1), ("htod", a1 + 8, 16, "s"), ("pop", 1)]
    # an event after the copy keeps the host array alive until the copy has run
    assert [c[0] for c in calls[3:]] == ["push", "pop", "push", "record", "pop"]
    assert calls[-2][2] == "s" and rt._inflight[-1][1].nbytes == 16
    calls.clear()

    class Desc(ctypes.Structure):                 # a descriptor passed by value
        _fields_ = [("v", ctypes.c_longlong)]

    desc = Desc(7)
    rt.launch("ew_ops", "tl_ew_add_f32", 7, 256,
              [rt_mod.ptr(a1), np.float32(2), desc], "s")
    rt.launch("ew_ops", "tl_ew_mul_f32", (2, 3), (16, 16), [rt_mod.ptr(a1 + 64)], None, 128)
    # one module per (device, file): a cubin for the device's architecture, compiled once
    # into the cache and loaded from there
    assert [c[:3] for c in nvcc_runs] == [["nvcc", "-cubin", "-arch=sm_90"]]
    assert len(loaded) == 1 and loaded[0] == (kernel_cache.cubin_path("ew_ops", "sm_90"),
                                              b"cubin")
    (_, n1, args1, g1, b1, sh1, s1), = [c for c in calls if c[0] == "launch"][:1]
    assert n1 == "tl_ew_add_f32" and g1 == (7, 1, 1) and b1 == (256, 1, 1) and s1 == "s"
    # one parameter block, each argument at its C alignment: 8 + 4 (+4 padding) + 8 bytes
    raw = bytes(args1)
    assert len(raw) == 24
    assert int.from_bytes(raw[:8], "little") == a1 and raw[8:12] == np.float32(2).tobytes()
    assert raw[12:16] == bytes(4) and int.from_bytes(raw[16:], "little") == 7
    with pytest.raises(TypeError, match="kernel argument 0: int"):
        rt.launch("ew_ops", "tl_ew_add_f32", 1, 1, [5], None)
    launches = [c for c in calls if c[0] == "launch"]
    assert launches[1][3] == (2, 3, 1) and launches[1][4] == (16, 16, 1) and launches[1][5] == 128
    assert ("push", 1) in calls and ("push", 0) not in calls  # launched where its pointer lives
    with pytest.raises(RuntimeError, match="not in device memory"):
        rt.htod(7, np.zeros(1), None)
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        rt.reserve(2, 16)
    rt.release(1, a1)
    assert ("free", a1) in calls and rt.device_of(a1) is None
    pinned = rt.host_alloc(100)
    assert pinned.nbytes == 100 and pinned.address == pinned.array.ctypes.data
    # streams and events: driver calls with the stream's device context current
    s1 = rt.new_stream(1)
    assert rt.default_stream(1) is rt.default_stream(1) and rt.default_stream(1) is not s1
    ev, timed = rt.new_event(False), rt.new_event(True)
    calls.clear()
    ev.record(s1)
    assert ev.raw.flags == 2 and calls[-3:] == [("push", 1), ("record", ev.raw, s1.raw),
                                               ("pop", 1)]
    rt.default_stream(1).wait_event(ev)
    assert ("wait", rt.default_stream(1).raw, ev.raw) in calls
    assert s1.query() and ev.query() and calls[-2:] == [("push", 1), ("pop", 1)]
    timed.record(s1)
    timed2 = rt.new_event(True)
    timed2.record(rt.default_stream(1))
    assert timed.raw.flags == 0 and timed.elapsed_time(timed2) == 1.5
    calls.clear()
    rt.launch("ew_ops", "tl_ew_mul_f32", 1, 1, [rt_mod.ptr(a0)], s1)
    assert [c[-1] for c in calls if c[0] == "launch"] == [s1.raw]   # the raw pycuda stream
    # a block packed by the caller goes to the driver as it is, in the device's context
    calls.clear()
    block = rt_mod.pack_kernel_args([rt_mod.ptr(a0), desc])
    rt.launch_packed("ew_ops", "tl_ew_mul_f32", 3, 128, block, 1, s1, 0)
    assert calls == [("push", 0), ("launch", "tl_ew_mul_f32", block, (3, 1, 1), (128, 1, 1),
                                   0, s1.raw), ("pop", 0)]
    # device 0 loads its own module of the same cubin; a second runtime (a new process)
    # finds the cubin in the cache: no compiler
    rt_mod.PycudaRuntime().launch("ew_ops", "tl_ew_add_f32", 1, 1, [rt_mod.ptr(a0)], None,
                                  index=0)
    assert len(nvcc_runs) == 1 and len(loaded) == 3


# ---- __cuda_array_interface__ ---------------------------------------------------------------

def test_cuda_array_interface_round_trip_without_a_copy():
    x = tensorlib.arange(12.0, device="cuda").view(3, 4)
    cai = x.__cuda_array_interface__
    assert cai["version"] == 3 and cai["shape"] == (3, 4) and cai["typestr"] == "<f4"
    assert cai["data"] == (x.data_ptr(), False) and cai["strides"] is None
    assert cai["stream"] == 1
    t = x.t()
    assert t.__cuda_array_interface__["strides"] == (4, 16)

    class Producer:                       # another library's device array, seen by protocol
        def __init__(self, cai):
            self.__cuda_array_interface__ = cai

    y = tensorlib.as_tensor(Producer(t.__cuda_array_interface__))
    assert y.device == x.device and y.data_ptr() == t.data_ptr() and y.stride() == (1, 4)
    y[0, 0] = 100.0                       # the same memory
    assert x[0, 0].item() == 100.0
    y.record_stream(cuda.Stream())        # borrowed memory: recorded, never deferred
    before = cuda.memory_allocated()
    del y
    assert cuda.memory_allocated() == before    # borrowed: never counted as ours
    assert not hasattr(tensorlib.zeros(2), "__cuda_array_interface__")
    with pytest.raises(RuntimeError, match="requires grad"):
        tensorlib.ones(2, device="cuda", requires_grad=True).__cuda_array_interface__
    with pytest.raises(BufferError, match="not in the memory"):
        tensorlib.as_tensor(Producer({"version": 3, "shape": (2,), "typestr": "<f4",
                                      "data": (4096, False), "strides": None}))
