"""The CUDA kernels (cuda/*.cu) on the emulator against NumPy, the emulator's own contracts
(checking mode, faults, streams, events, device memory), and the nvcc compile gate."""

import ctypes
import os
import shutil
import sys
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlib
from tensorlib.cuda import _emulator as emu

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# Subprocesses run beside the tensorlib this process imported (site-packages when installed,
# the checkout when built in place): `python -c` puts its cwd first on sys.path, and the
# checkout's root holds the sources without the compiled core.
RUN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(tensorlib.__file__)))
SIZES = [1, 31, 257, 1000, 4099]  # non-multiples of the block size, one larger than a grid

F32, F64, I32, I64, U8, BOOL, F16, BF16, I8, I16 = range(10)
CODES = {np.dtype(np.float32): F32, np.dtype(np.float64): F64, np.dtype(np.int32): I32,
         np.dtype(np.int64): I64, np.dtype(np.uint8): U8, np.dtype(np.bool_): BOOL,
         np.dtype(np.float16): F16, np.dtype(np.int8): I8, np.dtype(np.int16): I16}


class EwDesc(ctypes.Structure):
    # mirrors struct tl_ew_desc in cuda/tl_cuda.h
    _fields_ = [("ndim", ctypes.c_int), ("dtype", ctypes.c_int * 3),
                ("shape", ctypes.c_longlong * 8), ("stride", (ctypes.c_longlong * 8) * 3)]


@pytest.fixture(scope="module")
def ew():
    return emu.load_kernels("elementwise")


@pytest.fixture(scope="module")
def red():
    return emu.load_kernels("reduce")


@pytest.fixture(scope="module")
def tk():
    return emu.load_module(os.path.join(HERE, "cuda_test_kernels.cu"))


def i64(n):
    return np.int64(n)


def launch_1d(n, block=128, max_blocks=4):
    # few blocks, so the grid-stride loops wrap for the larger sizes
    return dict(grid=max(1, min(max_blocks, -(-n // block))), block=block)


class OnDevice:
    """A NumPy array's whole base buffer on the device, and pointers to views of it."""

    def __init__(self, base):
        assert base.flags.c_contiguous
        self.base = base
        self.dev = emu.to_device(self.base)

    def ptr(self, view):
        off = view.__array_interface__["data"][0] - self.base.__array_interface__["data"][0]
        return self.dev + off

    def read(self):
        return emu.from_device(self.dev, self.base.shape, self.base.dtype)


def desc(out, *ins, codes=None):
    # codes: dtype codes by operand, for the dtypes NumPy lacks (bfloat16 as uint16 bits)
    d = EwDesc()
    d.ndim = out.ndim
    for j, a in enumerate((out,) + ins):
        a = np.broadcast_to(a, out.shape) if j else a
        d.dtype[j] = codes[j] if codes else CODES[a.dtype]
        for k in range(out.ndim):
            d.stride[j][k] = a.strides[k] // a.itemsize
    for k in range(out.ndim):
        d.shape[k] = out.shape[k]
    return d


# ---- elementwise ----------------------------------------------------------------------------

BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
          "maximum": np.maximum, "minimum": np.minimum}
UNARY = {"neg": np.negative, "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "abs": np.abs,
         "tanh": np.tanh}


@pytest.mark.parametrize("dtype,sfx,rtol", [(np.float32, "f32", 1e-6), (np.float64, "f64", 1e-14)])
@pytest.mark.parametrize("n", SIZES)
def test_binary_contiguous(ew, dtype, sfx, rtol, n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(dtype)
    b = (rng.standard_normal(n) + 3).astype(dtype)
    if n > 2:
        a[1] = np.nan  # maximum/minimum propagate NaN
    da, db, out = emu.to_device(a), emu.to_device(b), emu.mem_alloc(a.nbytes)
    for name, ref in BINARY.items():
        getattr(ew, f"tl_{name}_{sfx}")(da, db, out, i64(n), **launch_1d(n))
        got = emu.from_device(out, (n,), dtype)
        np.testing.assert_allclose(got, ref(a, b), rtol=rtol, atol=0, err_msg=name)


@pytest.mark.parametrize("dtype,sfx,rtol", [(np.float32, "f32", 2e-6), (np.float64, "f64", 1e-14)])
@pytest.mark.parametrize("n", SIZES)
def test_unary_contiguous(ew, dtype, sfx, rtol, n):
    a = np.random.default_rng(n).uniform(0.1, 5, n).astype(dtype)
    a[0] = -a[0] if n > 1 else a[0]
    da, out = emu.to_device(a), emu.mem_alloc(a.nbytes)
    with np.errstate(invalid="ignore"):
        for name, ref in UNARY.items():
            getattr(ew, f"tl_{name}_{sfx}")(da, out, i64(n), **launch_1d(n))
            got = emu.from_device(out, (n,), dtype)
            np.testing.assert_allclose(got, ref(a), rtol=rtol, atol=0, err_msg=name)


def test_binary_strided_broadcast_and_cast(ew):
    # a: float32 transposed, sliced view; b: float64 row broadcast along dim 0 read backwards;
    # out: a float32 strided view, computed in float64
    rng = np.random.default_rng(0)
    abase = rng.standard_normal((9, 14)).astype(np.float32)
    bbase = rng.standard_normal(30)
    obase = np.zeros((7, 21), np.float32)
    a = abase[1:, ::2].T                  # (7, 8), strides (2, 14) elements, offset 14
    b = bbase[::-1][3:11][None, :]        # (1, 8), negative stride
    out = obase[::1, 3:19:2]              # (7, 8)
    A, B, O = OnDevice(abase), OnDevice(bbase), OnDevice(obase)
    d = desc(out, a, b)
    ew.tl_mul_strided_f64(A.ptr(a), B.ptr(b), O.ptr(out), d, i64(out.size), grid=2, block=32)
    got = O.read()
    want = obase.copy()
    want[::1, 3:19:2] = (a.astype(np.float64) * b).astype(np.float32)
    np.testing.assert_array_equal(got, want)  # untouched elements stay zero


def _random_layout(shape, rng):
    # a slice of a bigger base per dim (step -3..3, never 0) and a transpose
    steps = [int(rng.choice([-3, -2, -1, 1, 2, 3])) for _ in shape]
    base_shape = [n * abs(k) + 2 for n, k in zip(shape, steps)]
    idx = tuple(slice(1, 1 + n * k, k) if k > 0 else slice(n * -k, 0, k)
                for n, k in zip(shape, steps))
    return base_shape, idx


@settings(deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=4), seed=st.integers(0, 2**31),
       dts=st.sampled_from([(np.float32, np.float64, np.float32),
                            (np.float16, np.int32, np.float64),
                            (np.float64, np.float64, np.float16),
                            (np.int8, np.float32, np.int64)]))
def test_strided_binary_random_layouts(ew, shape, seed, dts):
    rng = np.random.default_rng(seed)
    ta, tb, to = dts
    perm = rng.permutation(len(shape))
    a_shape, a_idx = _random_layout(shape, rng)
    o_shape, o_idx = _random_layout(shape, rng)
    abase = (rng.standard_normal(a_shape) * 8).astype(ta)
    obase = np.zeros(o_shape, to)
    a = abase[a_idx].transpose(perm)
    out = obase[o_idx].transpose(perm)
    bshape = [1 if rng.random() < 0.4 else n for n in out.shape]  # broadcast dims
    b = (rng.standard_normal(bshape) * 8).astype(tb)
    A, B, O = OnDevice(abase), OnDevice(b), OnDevice(obase)
    ew.tl_add_strided_f64(A.ptr(a), B.ptr(b), O.ptr(out), desc(out, a, b), i64(out.size),
                          grid=2, block=32)
    total = a.astype(np.float64) + b.astype(np.float64)
    if np.dtype(to) == np.float16:
        total = total.astype(np.float32)  # the kernel stores half through float
    expected = np.zeros(o_shape, to)
    expected[o_idx].transpose(perm)[...] = total.astype(to)  # the same view, on a copy
    np.testing.assert_array_equal(O.read(), expected)


@pytest.mark.parametrize("n", [5, 1000])
def test_unary_strided_int_input(ew, n):
    xbase = np.arange(-n, n, 2, dtype=np.int64)
    x = xbase[::-1]
    X = OnDevice(xbase)
    out = np.zeros(x.shape, np.float32)
    O = OnDevice(out)
    ew.tl_abs_strided_f32(X.ptr(x), O.ptr(out), desc(out, x), i64(x.size), grid=3, block=64)
    np.testing.assert_array_equal(O.read(), np.abs(x).astype(np.float32))


@pytest.mark.parametrize("dtype,sfx", [(np.float32, "f32"), (np.float64, "f64"),
                                       (np.int32, "i32"), (np.int64, "i64"), (np.uint8, "u8")])
def test_fill(ew, dtype, sfx):
    n = 1037
    a = emu.mem_alloc(n * np.dtype(dtype).itemsize)
    getattr(ew, f"tl_fill_{sfx}")(a, dtype(7), i64(n), **launch_1d(n))
    assert (emu.from_device(a, (n,), dtype) == 7).all()
    base = np.zeros((10, 12), dtype)
    view = base[1::3, ::-5]
    B = OnDevice(base)
    getattr(ew, f"tl_fill_strided_{sfx}")(B.ptr(view), dtype(3), desc(view), i64(view.size),
                                          grid=1, block=32)
    base[1::3, ::-5] = 3
    np.testing.assert_array_equal(B.read(), base)


TYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}


@pytest.mark.parametrize("src", TYPES)
@pytest.mark.parametrize("dst", TYPES)
def test_cast_contiguous(ew, src, dst):
    x = np.random.default_rng(1).uniform(-1e4, 1e4, 301).astype(TYPES[src])
    d = emu.mem_alloc(301 * np.dtype(TYPES[dst]).itemsize)
    getattr(ew, f"tl_cast_{src}_{dst}")(emu.to_device(x), d, i64(301), **launch_1d(301, 64))
    np.testing.assert_array_equal(emu.from_device(d, (301,), TYPES[dst]), x.astype(TYPES[dst]))


@pytest.mark.parametrize("src,dst", [(np.int64, np.int64), (np.int64, np.float64),
                                     (np.float64, np.int32), (np.float32, np.bool_),
                                     (np.int32, np.uint8), (np.bool_, np.float32),
                                     (np.uint8, np.int64)])
def test_copy_strided_casts(ew, src, dst):
    base = np.random.default_rng(2).integers(-100, 200, (6, 9))
    if src is np.int64:
        base = base + 2**60  # exact only if int64 never goes through a double
    if src is np.float64:
        base = base + 0.75
    base = base.astype(src)
    view = base[::2, ::-1].T
    out = np.zeros(view.shape, dst)
    S, O = OnDevice(base), OnDevice(out)
    ew.tl_copy_strided(S.ptr(view), O.ptr(out), desc(out, view), i64(view.size), grid=1,
                       block=32)
    want = view != 0 if dst is np.bool_ else view.astype(dst)
    np.testing.assert_array_equal(O.read(), want)


def _copy(ew, src, dst_dtype, codes=None):
    out = np.zeros(src.shape, dst_dtype)
    S, O = OnDevice(src), OnDevice(out)
    ew.tl_copy_strided(S.ptr(src), O.ptr(out), desc(out, src, codes=codes), i64(src.size),
                       grid=4, block=128)
    return O.read()


def test_float16_conversions_round_to_nearest_even(ew):
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    got = _copy(ew, every, np.float32)
    np.testing.assert_array_equal(got, every.astype(np.float32))  # NaN == NaN here
    rng = np.random.default_rng(7)
    x = np.concatenate([
        rng.standard_normal(3000).astype(np.float32) * 1000,
        (rng.standard_normal(2000) * 1e-5).astype(np.float32),   # subnormal halves
        every[np.isfinite(every)].astype(np.float32) * np.float32(1 + 2**-11),  # ties
        np.float32([65504, 65519.99, 65520, 1e6, -1e6, np.inf, -np.inf, np.nan, 0.0, -0.0,
                    2**-25, 2**-25 * 1.0001, 2**-24, 1.5 * 2**-24, 2**-14 * (1 - 2**-12)])])
    got = _copy(ew, x, np.float16)
    with np.errstate(over="ignore"):
        want = x.astype(np.float16)
    np.testing.assert_array_equal(got.view(np.uint16)[~np.isnan(want)],
                                  want.view(np.uint16)[~np.isnan(want)])
    assert np.isnan(got[np.isnan(want)]).all()


def test_bfloat16_conversions_match_torch(ew):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    x = np.concatenate([rng.standard_normal(5000).astype(np.float32) * 1e3,
                        np.float32([np.inf, -np.inf, 0.0, -0.0, 3.4e38, 1e-40, 1.00390625])])
    bits = _copy(ew, x, np.uint16, codes=[BF16, F32])
    want = torch.from_numpy(x).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    np.testing.assert_array_equal(bits, want)
    back = _copy(ew, bits, np.float32, codes=[F32, BF16])
    np.testing.assert_array_equal(back, torch.from_numpy(x).to(torch.bfloat16).float().numpy())


def test_half_inputs_computed_in_float32(ew):
    rng = np.random.default_rng(9)
    a = rng.standard_normal((33, 17)).astype(np.float16)
    b = rng.standard_normal(17).astype(np.int8)
    out = np.zeros((33, 17), np.float16)
    A, B, O = OnDevice(a), OnDevice(b), OnDevice(out)
    ew.tl_mul_strided_f32(A.ptr(a), B.ptr(b), O.ptr(out), desc(out, a, b[None, :]),
                          i64(out.size), grid=3, block=64)
    want = (a.astype(np.float32) * b.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(O.read(), want)


# ---- reductions -----------------------------------------------------------------------------

@pytest.mark.parametrize("cols", [1, 31, 33, 1000, 4097])
@pytest.mark.parametrize("block", [32, 96, 256])
def test_row_reductions_under_every_schedule(red, cols, block):
    rows = 5
    rng = np.random.default_rng(cols + block)
    x32 = (rng.standard_normal((rows, cols)) * 100 + 50).astype(np.float32)
    x64 = rng.standard_normal((rows, cols)) * 1e3
    x32[2, cols // 2] = np.nan
    x64[3, 0] = np.nan
    d32, d64 = emu.to_device(x32), emu.to_device(x64)
    o32, o64 = emu.mem_alloc(rows * 4), emu.mem_alloc(rows * 8)
    # check=True: forward, reverse and shuffled thread and block orders must agree bit for bit
    for name in ("sum", "max", "min"):
        getattr(red, f"tl_{name}_rows_f32")(d32, o32, i64(rows), i64(cols), grid=2,
                                            block=block, check=True)
        getattr(red, f"tl_{name}_rows_f64")(d64, o64, i64(rows), i64(cols), grid=2,
                                            block=block, check=True)
        g32 = emu.from_device(o32, (rows,), np.float32)
        g64 = emu.from_device(o64, (rows,), np.float64)
        if name == "sum":
            w32 = x32.astype(np.float64).sum(1)
            ok = ~np.isnan(w32)
            # accumulated in double: within float32 rounding of the exact sum
            np.testing.assert_allclose(g32[ok], w32[ok], rtol=1e-7, atol=0)
            assert np.isnan(g32[~ok]).all()
            np.testing.assert_allclose(g64, x64.sum(1), rtol=1e-13, atol=0)
        else:
            ref = np.max if name == "max" else np.min
            np.testing.assert_array_equal(g32, ref(x32, 1))
            np.testing.assert_array_equal(g64, ref(x64, 1))


@pytest.mark.parametrize("n", SIZES + [100003])
def test_whole_array_reductions_in_two_launches(red, n):
    rng = np.random.default_rng(n)
    x32 = (rng.standard_normal(n) * 10 + 3).astype(np.float32)
    x64 = rng.standard_normal(n) * 10 + 3
    nb = 5
    parts, p32, p64 = emu.mem_alloc(8 * nb), emu.mem_alloc(4 * nb), emu.mem_alloc(8 * nb)
    o32, o64 = emu.mem_alloc(4), emu.mem_alloc(8)
    d32, d64 = emu.to_device(x32), emu.to_device(x64)
    red.tl_sum_partial_f32(d32, parts, i64(n), grid=nb, block=128)
    red.tl_sum_finish_f32(parts, o32, i64(nb), grid=1, block=64)
    np.testing.assert_allclose(emu.from_device(o32, (1,), np.float32),
                               [x32.astype(np.float64).sum()], rtol=1e-7)
    red.tl_sum_partial_f64(d64, parts, i64(n), grid=nb, block=128)
    red.tl_sum_finish_f64(parts, o64, i64(nb), grid=1, block=64)
    np.testing.assert_allclose(emu.from_device(o64, (1,), np.float64), [x64.sum()],
                               rtol=1e-13)
    for name, ref in (("max", np.max), ("min", np.min)):
        getattr(red, f"tl_{name}_partial_f32")(d32, p32, i64(n), grid=nb, block=128)
        getattr(red, f"tl_{name}_rows_f32")(p32, o32, i64(1), i64(nb), grid=1, block=32)
        assert emu.from_device(o32, (1,), np.float32)[0] == ref(x32)
        getattr(red, f"tl_{name}_partial_f64")(d64, p64, i64(n), grid=nb, block=128)
        getattr(red, f"tl_{name}_rows_f64")(p64, o64, i64(1), i64(nb), grid=1, block=32)
        assert emu.from_device(o64, (1,), np.float64)[0] == ref(x64)


@pytest.mark.parametrize("dtype,sfx", [(np.float32, "f32"), (np.float64, "f64")])
@pytest.mark.parametrize("cols", [1, 7, 100, 1031])
def test_argmax_argmin_rows_first_index_and_nan(red, dtype, sfx, cols):
    rows = 6
    x = np.random.default_rng(cols).integers(-3, 4, (rows, cols)).astype(dtype)  # many ties
    x[1, :] = -np.inf
    x[2, cols // 2] = np.nan
    x[3, cols - 1] = np.nan
    x[3, 0] = np.nan
    dx, out = emu.to_device(x), emu.mem_alloc(8 * rows)
    for name, ref in (("argmax", np.argmax), ("argmin", np.argmin)):
        getattr(red, f"tl_{name}_rows_{sfx}")(dx, out, i64(rows), i64(cols), grid=4,
                                              block=64, check=True)
        np.testing.assert_array_equal(emu.from_device(out, (rows,), np.int64), ref(x, 1),
                                      err_msg=name)


def test_float32_sum_is_accurate(red):
    # 2**20 values whose float32 running sum would drift: 1 + many tiny values
    n = 1 << 16
    x = np.full(n, 1e-4, np.float32)
    x[0] = 1e4
    o = emu.mem_alloc(4)
    red.tl_sum_rows_f32(emu.to_device(x), o, i64(1), i64(n), grid=1, block=256)
    exact = x.astype(np.float64).sum()
    assert emu.from_device(o, (1,), np.float32)[0] == np.float32(exact)


def test_reduction_rejects_a_block_that_is_not_whole_warps(red):
    o = emu.mem_alloc(4)
    red.tl_sum_rows_f32(emu.to_device(np.ones(10, np.float32)), o, i64(1), i64(10), grid=1,
                        block=48)
    with pytest.raises(emu.KernelError, match=r"tl_sum_rows_f32.*assertion failed"):
        emu.synchronize()


# ---- checking mode and faults ---------------------------------------------------------------

def test_missing_syncthreads_is_caught_by_checking_mode(tk):
    x = emu.to_device(np.arange(256, dtype=np.int32))
    o = emu.mem_alloc(4)
    tk.t_tree_sum(x, o, np.int32(256), grid=1, block=256, check=True)
    assert emu.from_device(o, (1,), np.int32)[0] == 255 * 256 // 2
    tk.t_tree_sum_racy(x, o, np.int32(256), grid=1, block=256, check=True)
    with pytest.raises(emu.KernelError, match=r"'t_tree_sum_racy'.*depends on the thread order"):
        emu.synchronize()


def test_a_race_between_blocks_is_caught_by_checking_mode(tk):
    out = emu.to_device(np.zeros(6, np.int32))
    tk.t_interblock_race(out, grid=6, block=32)
    emu.synchronize()  # in order by luck: the emulator runs blocks forward by default
    assert emu.from_device(out, (6,), np.int32).tolist() == [1, 2, 3, 4, 5, 6]
    emu.memcpy_htod(out, np.zeros(6, np.int32))
    tk.t_interblock_race(out, grid=6, block=32, check=True)
    with pytest.raises(emu.KernelError, match="depends on the thread order"):
        emu.synchronize()


def test_divergent_syncthreads_is_reported(tk):
    tk.t_divergent(emu.mem_alloc(64 * 4), grid=1, block=64)
    with pytest.raises(emu.KernelError, match=r"'t_divergent'.*divergent __syncthreads"):
        emu.synchronize()


def test_a_barrier_no_one_can_pass_is_a_deadlock_error(tk):
    tk.t_deadlock(emu.mem_alloc(32 * 4), grid=1, block=32)
    with pytest.raises(emu.KernelError, match=r"'t_deadlock'.*deadlock"):
        emu.synchronize()


@pytest.fixture
def checking_device():
    d = emu.get_device(0)
    old = d.check
    d.check = True
    yield d
    d.check = old


def test_out_of_bounds_write_names_the_kernel_and_the_allocation(tk, checking_device):
    out = emu.mem_alloc(64 * 4)  # in checking mode: the allocation ends at a guard page
    tk.t_out_of_bounds(out, np.int32(64), grid=1, block=128)
    with pytest.raises(emu.KernelError) as info:
        emu.synchronize()
    msg = str(info.value)
    assert info.value.kernel == "t_out_of_bounds"
    assert "thread (64,0,0)" in msg and "illegal memory access (write)" in msg
    assert "0 bytes past the end of a 256-byte device allocation" in msg
    # the interpreter and the emulator go on
    tk.t_out_of_bounds(out, np.int32(63), grid=1, block=128)
    emu.synchronize()
    assert (emu.from_device(out, (64,), np.float32) == 1).all()


def test_checking_mode_allocations_start_as_garbage(checking_device):
    h = emu.from_device(emu.mem_alloc(12), (3,), np.float32)
    assert np.isnan(h).all()  # a kernel that forgets to write an output is seen


def test_device_assert_and_dynamic_shared_overrun(tk):
    x = emu.to_device(np.arange(-3, 61, dtype=np.float32))
    tk.t_assert_positive(x, np.int32(64), grid=2, block=32)
    with pytest.raises(emu.KernelError, match=r"assertion failed: x\[i\] > 0.0f "
                                              r"\(.*cuda_test_kernels.cu:\d+\)"):
        emu.synchronize()
    tk.t_dyn_overrun(emu.mem_alloc(256), np.int32(64), grid=1, block=64, shared=256)
    with pytest.raises(emu.KernelError, match="past the end of the dynamic shared memory"):
        emu.synchronize()


def test_a_fault_fails_later_work_on_its_stream_until_synchronized(tk, ew):
    s = emu.Stream()
    a = emu.mem_alloc(64 * 4)
    tk.t_divergent(a, grid=1, block=64, stream=s)
    ew.tl_fill_f32(a, np.float32(5), i64(64), grid=1, block=64, stream=s)  # skipped
    with pytest.raises(emu.KernelError):
        s.synchronize()
    s.synchronize()  # the error was reported once
    ew.tl_fill_f32(a, np.float32(5), i64(64), grid=1, block=64, stream=s)
    h = np.zeros(64, np.float32)
    emu.memcpy_dtoh(h, a, s)
    assert (h == 5).all()


# ---- the intrinsics -------------------------------------------------------------------------

def test_dynamic_shared_memory(tk):
    x = np.arange(50, dtype=np.float32) * 3
    out = emu.mem_alloc(200)
    tk.t_dyn_reverse(emu.to_device(x), out, np.int32(50), grid=1, block=64, shared=200,
                     check=True)
    np.testing.assert_array_equal(emu.from_device(out, (50,), np.float32), x[::-1])


def test_warp_shuffles_and_ballot(tk):
    n = 96
    x = np.random.default_rng(3).integers(0, 100, n).astype(np.int32)
    s, c, b = emu.mem_alloc(4 * n), emu.mem_alloc(4 * n), emu.mem_alloc(4 * n)
    tk.t_warp_ops(emu.to_device(x), s, c, b, grid=1, block=n, check=True)
    w = x.reshape(-1, 32)
    np.testing.assert_array_equal(emu.from_device(s, (n,), np.int32),
                                  np.repeat(w.sum(1), 32))
    np.testing.assert_array_equal(emu.from_device(c, (n,), np.int32), np.cumsum(w, 1).ravel())
    bits = ((w & 1).astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(1)
    np.testing.assert_array_equal(emu.from_device(b, (n,), np.uint32),
                                  np.repeat(bits.astype(np.uint32), 32))


def test_syncthreads_count(tk):
    x = np.random.default_rng(4).standard_normal(300).astype(np.float32)
    o = emu.mem_alloc(3 * 4)
    tk.t_count_positive(emu.to_device(x), o, np.int32(300), grid=3, block=128)
    want = [(x[k * 128:(k + 1) * 128] > 0).sum() for k in range(3)]
    np.testing.assert_array_equal(emu.from_device(o, (3,), np.int32), want)


def test_atomics_across_blocks_and_streams(tk):
    x = np.random.default_rng(5).integers(0, 16, 5000).astype(np.int32)
    dx = emu.to_device(x)
    bins, mx = emu.to_device(np.zeros(16, np.int32)), emu.to_device(np.int32([-1]))
    streams = [emu.Stream(), emu.Stream()]
    for s in streams:  # two launches that may run at once on two worker threads
        tk.t_histogram(dx, bins, mx, np.int32(5000), grid=7, block=64, stream=s)
    emu.synchronize()
    np.testing.assert_array_equal(emu.from_device(bins, (16,), np.int32),
                                  2 * np.bincount(x, minlength=16))
    assert emu.from_device(mx, (1,), np.int32)[0] == x.max()


# ---- arguments and launch configuration -----------------------------------------------------

def test_bad_launches_raise_at_launch(ew):
    a = emu.mem_alloc(16)
    k = ew.tl_fill_f32
    with pytest.raises(emu.LaunchError, match="invalid launch configuration"):
        k(a, np.float32(1), i64(4), grid=1, block=2048)
    with pytest.raises(emu.LaunchError, match="invalid launch configuration"):
        k(a, np.float32(1), i64(4), grid=(1, 70000), block=32)
    with pytest.raises(emu.LaunchError, match="dynamic shared memory"):
        k(a, np.float32(1), i64(4), grid=1, block=32, shared=1 << 20)
    with pytest.raises(TypeError, match=r"tl_fill_f32' argument #1: expected numpy.float32, "
                                        r"got float"):
        k(a, 1.0, i64(4), grid=1, block=32)
    with pytest.raises(TypeError, match=r"argument #2: expected numpy.int64, got int32"):
        k(a, np.float32(1), np.int32(4), grid=1, block=32)
    with pytest.raises(TypeError, match="host numpy array"):
        k(np.zeros(4, np.float32), np.float32(1), i64(4), grid=1, block=32)
    with pytest.raises(emu.LaunchError, match="takes 3 arguments"):
        k(a, np.float32(1), grid=1, block=32)
    with pytest.raises(AttributeError, match="no kernel 'tl_nope'"):
        ew.tl_nope


def test_device_memory_is_opaque_to_the_host():
    a = emu.to_device(np.ones(4, np.float32))
    with pytest.raises(TypeError):
        memoryview(a)
    with pytest.raises(TypeError):
        np.frombuffer(a, np.float32)
    with pytest.raises(emu.EmulatorError, match="overrun a device allocation of 16 bytes"):
        emu.memcpy_htod(a + 8, np.ones(4, np.float32))
    a.free()
    with pytest.raises(emu.EmulatorError, match="freed"):
        emu.from_device(a, (4,), np.float32)
    with pytest.raises(ValueError, match="invalid device ordinal 5"):
        emu.get_device(5)


# ---- streams and events ---------------------------------------------------------------------

@pytest.fixture
def slow_device():
    d = emu.get_device(0)
    d.latency = 0.05  # every queued operation waits: asynchrony becomes visible
    yield d
    d.latency = 0.0


def test_stream_work_is_asynchronous(ew, slow_device):
    s = emu.Stream()
    a = emu.mem_alloc(400)
    h = np.zeros(100, np.float32)
    ew.tl_fill_f32(a, np.float32(2), i64(100), grid=1, block=128, stream=s)
    emu.memcpy_dtoh_async(h, a, s)
    t0 = time.perf_counter()
    queued = not s.query()
    if time.perf_counter() - t0 < 0.04:  # the machine did not stall past the latency
        assert queued
        assert (h == 0).all()   # read before synchronize: not there yet
    s.synchronize()
    assert s.query() and (h == 2).all()


def test_queued_work_waits_for_a_held_stream(ew):
    s = emu.Stream()
    gate = s.hold()
    a = emu.mem_alloc(400)
    h = np.zeros(100, np.float32)
    ew.tl_fill_f32(a, np.float32(2), i64(100), grid=1, block=128, stream=s)
    emu.memcpy_dtoh_async(h, a, s)
    time.sleep(0.01)
    assert not s.query() and (h == 0).all()
    gate.release()
    s.synchronize()
    assert s.query() and (h == 2).all()


def test_a_forgotten_wait_between_streams_gives_a_wrong_answer(ew):
    producer, consumer = emu.Stream(), emu.Stream()
    a = emu.to_device(np.zeros(100, np.float32))
    h = np.zeros(100, np.float32)
    gate = producer.hold()  # the producer is slow
    ew.tl_fill_f32(a, np.float32(3), i64(100), grid=1, block=128, stream=producer)
    emu.memcpy_dtoh_async(h, a, consumer)          # no wait: races the producer, and wins
    consumer.synchronize()
    assert (h == 0).all()
    gate.release()
    producer.synchronize()
    gate = producer.hold()
    ew.tl_fill_f32(a, np.float32(4), i64(100), grid=1, block=128, stream=producer)
    done = emu.Event()
    done.record(producer)
    consumer.wait_event(done)                      # the fix: order by an event
    emu.memcpy_dtoh_async(h, a, consumer)
    time.sleep(0.01)
    assert not consumer.query() and not done.query()
    gate.release()
    consumer.synchronize()
    assert done.query() and (h == 4).all()


def test_events_time_and_order(tk, slow_device):
    s = emu.Stream()
    start, end = emu.Event(enable_timing=True), emu.Event(enable_timing=True)
    start.record(s)
    tk.t_spin(emu.mem_alloc(4), np.int32(10), grid=1, block=32, stream=s)
    end.record(s)
    assert not end.query()
    with pytest.raises(emu.EmulatorError, match="synchronize the end event first"):
        start.elapsed_time(end)
    end.synchronize()
    assert start.query() and end.query()
    assert start.elapsed_time(end) >= 2 * 0.05 * 1000 * 0.9  # two delayed operations
    with pytest.raises(emu.EmulatorError, match="enable_timing"):
        emu.Event().elapsed_time(end)


def test_wait_stream_and_device_synchronize(ew):
    s1, s2 = emu.Stream(), emu.Stream()
    a, b = emu.mem_alloc(40), emu.mem_alloc(40)
    gate = s1.hold()
    ew.tl_fill_f32(a, np.float32(6), i64(10), grid=1, block=32, stream=s1)
    s2.wait_stream(s1)
    emu.memcpy_dtod_async(b, a, 40, s2)
    time.sleep(0.01)
    assert not s2.query()
    gate.release()
    emu.synchronize()
    assert s1.query() and s2.query()
    assert (emu.from_device(b, (10,), np.float32) == 6).all()


def test_record_event_and_event_wait(ew):
    s1, s2 = emu.Stream(), emu.Stream()
    a, h = emu.mem_alloc(16), np.zeros(4, np.float32)
    gate = s1.hold()
    ew.tl_fill_f32(a, np.float32(9), i64(4), grid=1, block=32, stream=s1)
    ev = s1.record_event()
    ev.wait(s2)
    emu.memcpy_dtoh_async(h, a, s2)
    gate.release()
    s2.synchronize()
    assert ev.query() and (h == 9).all()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_cannot_use_the_parents_streams():
    code = (
        "import os, numpy as np\n"
        "from tensorlib.cuda import _emulator as emu\n"
        "s = emu.Stream(); a = emu.to_device(np.ones(2))\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    try:\n"
        "        emu.memcpy_htod_async(a, np.zeros(2), s)\n"
        "        os._exit(3)\n"
        "    except RuntimeError as e:\n"
        "        os._exit(7 if 'forked subprocess' in str(e) else 4)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "print('child', os.waitstatus_to_exitcode(status))\n"
        "emu.memcpy_htod(a, np.zeros(2), s)\n"
        "print('parent ok')\n")
    r = _run_python(code)
    assert r.returncode == 0, r.stderr
    assert "child 7" in r.stdout and "parent ok" in r.stdout


# ---- compiling ------------------------------------------------------------------------------

def test_modules_are_cached_by_content(tmp_path, monkeypatch):
    monkeypatch.setenv("TENSORLIB_CACHE", str(tmp_path))
    src = tmp_path / "k.cu"
    src.write_text('#include "tl_cuda.h"\nextern "C" __global__ void k1(int* x) '
                   '{ x[threadIdx.x] = threadIdx.x; }\n')
    m = emu.load_module(str(src))
    assert m.kernel_names == ("k1",) and emu.load_module(str(src)) is m
    sos = lambda: sorted(p for p in os.listdir(tmp_path / "cuda-emu") if p.endswith(".so"))
    built = sos()
    src.write_text(src.read_text().replace("threadIdx.x;", "2 * threadIdx.x;"))
    m2 = emu.load_module(str(src))
    assert m2 is not m and len(sos()) == len(built) + 1
    a = emu.mem_alloc(16)
    m2.k1(a, grid=1, block=4)
    assert emu.from_device(a, (4,), np.int32).tolist() == [0, 2, 4, 6]


def test_a_compile_error_is_a_clear_python_error(tmp_path, monkeypatch):
    monkeypatch.setenv("TENSORLIB_CACHE", str(tmp_path))
    src = tmp_path / "bad.cu"
    src.write_text('extern "C" __global__ void k(int* x) { x[0] = undefined_name; }\n')
    with pytest.raises(emu.EmulatorError, match="undefined_name"):
        emu.load_module(str(src))


def _run_python(code, **env):
    import subprocess
    e = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=RUN_DIR, env=e, timeout=120)


def test_a_fiber_stack_overflow_is_an_error_not_a_crash():
    code = (
        "import numpy as np\n"
        "from tensorlib.cuda import _emulator as emu\n"
        f"m = emu.load_module({os.path.join(HERE, 'cuda_test_kernels.cu')!r})\n"
        "o = emu.mem_alloc(4 * 32)\n"
        "m.t_big_frame(o, np.int32(1), grid=1, block=2)\n"
        "try:\n"
        "    emu.synchronize()\n"
        "except emu.KernelError as e:\n"
        "    print('ERR', e)\n"
        "else:\n"
        "    print('OK', emu.from_device(o, (2,), np.float32).tolist())\n")
    r = _run_python(code)
    assert r.returncode == 0, r.stderr
    assert "ERR" in r.stdout and "fiber stack overflow" in r.stdout
    assert "TENSORLIB_CUDA_EMU_STACK" in r.stdout
    r = _run_python(code, TENSORLIB_CUDA_EMU_STACK=str(1 << 18))
    assert r.returncode == 0, r.stderr
    assert "OK [1032256.0, 1032256.0]" in r.stdout  # sum of j + 1, j = 0, 512, ..., 32256


def test_two_emulated_devices_keep_their_memory_apart():
    code = (
        "import numpy as np\n"
        "from tensorlib.cuda import _emulator as emu\n"
        "assert emu.device_count() == 2\n"
        "k = emu.load_kernels('elementwise').tl_fill_f32\n"
        "a0, a1 = emu.mem_alloc(16, 0), emu.mem_alloc(16, 1)\n"
        "s1 = emu.Stream(1)\n"
        "k(a1, np.float32(2), np.int64(4), grid=1, block=32, stream=s1)\n"
        "s1.synchronize()\n"
        "print(emu.from_device(a1, (4,), np.float32, s1).tolist())\n"
        "try:\n"
        "    k(a0, np.float32(2), np.int64(4), grid=1, block=32, stream=s1)\n"
        "except emu.LaunchError as e:\n"
        "    print('ERR', e)\n")
    r = _run_python(code, TENSORLIB_CUDA_DEVICES="2")
    assert r.returncode == 0, r.stderr
    assert "[2.0, 2.0, 2.0, 2.0]" in r.stdout
    assert "a pointer argument is on cuda:0 but the launch is on cuda:1" in r.stdout


def test_the_cuda_readme_example_runs():
    import re
    readme = os.path.join(ROOT, "cuda", "README.md")
    if not os.path.exists(readme):
        pytest.skip("cuda/README.md is not beside the tests (installed package)")
    blocks = re.findall(r"```python\n(.*?)```", open(readme).read(), re.S)
    assert blocks
    ns = {}
    exec(blocks[0], ns)
    x = emu.from_device(ns["x"], (4, 1000), np.float32)
    np.testing.assert_allclose(ns["sums"], x.sum(1, dtype=np.float64), rtol=1e-6)


needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None,
                                reason="nvcc is not on PATH: the CUDA compile gate needs the "
                                       "CUDA toolkit (CI machines have it)")


def _gate():
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    try:
        import cuda_compile_gate
    finally:
        sys.path.pop(0)
    return cuda_compile_gate


@needs_nvcc
def test_nvcc_compile_gate_passes_on_every_kernel_file(capsys):
    assert _gate().main([]) == 0, capsys.readouterr().out


@needs_nvcc
def test_nvcc_compile_gate_catches_what_the_emulator_accepts(tmp_path):
    # a __global__ calling a __global__ compiles on the host, never under nvcc
    bad = tmp_path / "bad.cu"
    bad.write_text('extern "C" __global__ void a(int* x) { x[0] = 1; }\n'
                   'extern "C" __global__ void b(int* x) { a(x); }\n')
    problems = _gate().check_file(str(bad))
    assert problems and "nvcc failed" in problems[0]


def test_docstring_examples():
    import doctest
    result = doctest.testmod(emu, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 20 and result.failed == 0


def test_the_portable_context_switch_passes_the_barrier_tests():
    # the x86-64 switch is the default there; the ucontext one must keep working elsewhere
    import subprocess
    env = dict(os.environ, TENSORLIB_CUDA_EMU_UCONTEXT="1")
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k",
         "(reductions or syncthreads or divergent or deadlock or warp or dynamic or stack) "
         "and not portable"], capture_output=True, text=True, cwd=RUN_DIR, env=env, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "failed" not in r.stdout
