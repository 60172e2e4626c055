"""Linear algebra: mm, matmul, bmm, mv, dot, outer, addmm, addmv, baddbmm, tensordot, einsum.

Values are checked against NumPy (float64 references with tolerances for floats, exact int64
references wrapped to the dtype for integers, np.einsum/np.tensordot as references), error
messages against PyTorch 2.13's text, and shapes/dtypes/strides against torch where installed.
"""
import gc
import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib as tl
from tensorlib import memory

from divergences import BOOL_MATMUL_RAISES, EINSUM_BROADCASTS_SIZE_ONE

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
# |relative error| bound of a sum of K products against a float64 reference
TOL = {"float32": 2e-5, "float64": 1e-12, "float16": 4e-3, "bfloat16": 3e-2}


def rng(seed=0):
    return np.random.default_rng(seed)


def make(arr, dtype):
    """A tensorlib tensor with arr's values in dtype (bfloat16 via float32)."""
    dt = getattr(tl, dtype)
    if dtype == "bfloat16":
        return tl.tensor(np.asarray(arr, dtype=np.float32), dtype=dt)
    return tl.tensor(np.asarray(arr).astype(dtype))


def values(t):
    """t's values as float64 (floats) or int64 (integers) NumPy data."""
    if t.dtype.is_floating_point:
        return t.float().numpy().astype(np.float64) if t.dtype == tl.bfloat16 else t.numpy().astype(np.float64)
    return t.numpy().astype(np.int64)


def rounded(arr, dtype):
    """The operand values as the dtype holds them (what the reference should multiply)."""
    if dtype == "bfloat16":
        return values(make(arr, dtype))
    return np.asarray(arr).astype(dtype).astype(np.float64 if dtype in FLOATS else np.int64)


def sample(shape, dtype, r):
    if dtype in FLOATS:
        return r.uniform(-2, 2, size=shape)
    if dtype == "uint8":
        return r.integers(0, 256, size=shape)
    info = np.iinfo(dtype)
    return r.integers(max(info.min, -1000), min(info.max, 1000), size=shape)


def check_product(got, ref64, dtype, K):
    """got (tensorlib) against a float64/int64 reference of the exact operand values."""
    if dtype in INTS:
        expect = ref64.astype(np.int64).astype(dtype)           # wraps as PyTorch does
        np.testing.assert_array_equal(got.numpy(), expect)
        return
    scale = np.abs(ref64).max() if ref64.size else 1.0
    tol = TOL[dtype] * max(1.0, scale) * max(1, K) ** 0.5 * 4
    np.testing.assert_allclose(values(got), ref64, atol=tol, rtol=TOL[dtype] * 4)


# ---------------------------------------------------------------------------------------------
# matmul over every rank case

RANK_SHAPES = [
    ((3,), (3,)),                    # dot
    ((2, 3), (3,)),                  # mv
    ((3,), (3, 4)),                  # vector @ matrix
    ((2, 3), (3, 4)),                # mm
    ((5, 2, 3), (3,)),               # folded mv
    ((5, 2, 3), (3, 4)),             # folded mm
    ((3,), (5, 3, 4)),               # vector @ batch
    ((2, 3), (5, 3, 4)),             # matrix @ batch
    ((5, 2, 3), (5, 3, 4)),          # bmm
    ((2, 1, 2, 3), (3, 3, 4)),       # broadcast batches
    ((1, 2, 3), (4, 1, 3, 2)),
    ((6, 1, 4, 3), (5, 3, 2)),
    ((0, 2, 3), (3, 4)),             # empty batch
    ((2, 0), (0, 3)),                # K == 0: zeros
    ((2, 3), (3, 0)),
    ((1, 1), (1, 1)),
    ((7, 1), (1, 5)),                # K == 1: outer products
    ((40, 30), (30, 20)),            # large enough for BLAS
    ((3, 40, 30), (30, 20)),
]


@pytest.mark.parametrize("sa,sb", RANK_SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "float16"])
def test_matmul_rank_cases_match_numpy(sa, sb, dtype):
    r = rng(hash((sa, sb)) % 1000)
    a, b = sample(sa, dtype, r), sample(sb, dtype, r)
    got = tl.matmul(make(a, dtype), make(b, dtype))
    ref = np.matmul(rounded(a, dtype), rounded(b, dtype))
    assert tuple(got.shape) == ref.shape
    assert got.dtype == getattr(tl, dtype)
    assert got.is_contiguous()
    check_product(got, ref, dtype, sa[-1])


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_mm_every_dtype(dtype):
    r = rng(1)
    a, b = sample((9, 33), dtype, r), sample((33, 17), dtype, r)
    got = tl.mm(make(a, dtype), make(b, dtype))
    assert got.dtype == getattr(tl, dtype)
    check_product(got, rounded(a, dtype) @ rounded(b, dtype), dtype, 33)


def test_integer_matmul_wraps_exactly():
    # int8 products overflow: PyTorch wraps (mod 2**8), as an int64 sum truncated does
    a = np.full((3, 50), 100, dtype=np.int64)
    b = np.full((50, 2), 100, dtype=np.int64)
    got = tl.mm(make(a, "int8"), make(b, "int8"))
    assert got.tolist() == (a @ b).astype(np.int8).tolist()
    big = tl.tensor([2 ** 62, 2 ** 62, 2 ** 62])
    assert tl.dot(big, tl.tensor([1, 1, 1])).item() == -(2 ** 62)    # int64 wraps too


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_large_integer_matmul_parallel_and_exact(dtype):
    # above the threshold the loop runs on the thread pool with the GIL released; results
    # never depend on the thread count
    r = rng(2)
    a, b = sample((3, 130, 90), dtype, r), sample((90, 70), dtype, r)
    ta, tb = make(a, dtype), make(b, dtype)
    n = tl.get_num_threads()
    try:
        tl.set_num_threads(1)
        one = tl.matmul(ta, tb).numpy().copy()
        tl.set_num_threads(2)
        two = tl.matmul(ta, tb).numpy()
    finally:
        tl.set_num_threads(n)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(two, (a.astype(np.int64) @ b.astype(np.int64)).astype(dtype))


@st.composite
def matmul_shapes(draw):
    da = draw(st.integers(1, 4))
    db = draw(st.integers(1, 4))
    m, k, n = draw(st.integers(1, 6)), draw(st.integers(0, 6)), draw(st.integers(1, 6))
    nb = max(da, db) - 2
    batch = [draw(st.integers(1, 3)) for _ in range(max(nb, 0))]
    def bshape(d):
        if d <= 2:
            return []
        own = batch[len(batch) - (d - 2):]
        return [s if draw(st.booleans()) else 1 for s in own]
    sa = bshape(da) + ([m, k] if da >= 2 else [k])
    sb = bshape(db) + ([k, n] if db >= 2 else [k])
    return tuple(sa), tuple(sb)


def layout(arr, how):
    """A tensor with arr's values in a layout: contiguous, transposed storage, sliced storage
    (every other element), or broadcast from a smaller tensor (when the values allow)."""
    if how == "contiguous" or arr.ndim < 2:
        if how == "sliced" and arr.ndim >= 1:
            wide = np.zeros(arr.shape[:-1] + (2 * arr.shape[-1],), arr.dtype)
            wide[..., ::2] = arr
            return tl.tensor(wide)[..., ::2]
        return tl.tensor(arr)
    if how == "transposed":
        return tl.tensor(np.ascontiguousarray(np.swapaxes(arr, -1, -2))).transpose(-1, -2)
    if how == "sliced":
        wide = np.zeros(arr.shape[:-2] + (arr.shape[-2], 3 * arr.shape[-1] + 1), arr.dtype)
        wide[..., 1::3] = arr
        return tl.tensor(wide)[..., 1::3]
    raise AssertionError(how)


LAYOUTS = ["contiguous", "transposed", "sliced"]


@given(shapes=matmul_shapes(), la=st.sampled_from(LAYOUTS), lb=st.sampled_from(LAYOUTS),
       dtype=st.sampled_from(["float64", "float32", "int64"]))
def test_matmul_hypothesis_against_numpy(shapes, la, lb, dtype):
    sa, sb = shapes
    r = rng(len(sa) * 7 + len(sb))
    a, b = sample(sa, dtype, r).astype(dtype), sample(sb, dtype, r).astype(dtype)
    ta, tb = layout(a, la), layout(b, lb)
    np.testing.assert_array_equal(ta.numpy(), a)
    got = tl.matmul(ta, tb)
    ref = np.matmul(a.astype(np.float64 if dtype != "int64" else np.int64),
                    b.astype(np.float64 if dtype != "int64" else np.int64))
    assert tuple(got.shape) == ref.shape
    check_product(got, ref, dtype, sa[-1])


def test_broadcast_operands_with_zero_strides():
    # stride-0 dims inside a matrix are not BLAS-readable: copied through our allocator
    r = rng(3)
    col = r.uniform(-1, 1, size=(40, 1))
    b = r.uniform(-1, 1, size=(30, 20))
    ta = tl.tensor(col).expand(40, 30)
    np.testing.assert_allclose(tl.mm(ta, tl.tensor(b)).numpy(), np.broadcast_to(col, (40, 30)) @ b, rtol=1e-12)
    row = tl.tensor(r.uniform(-1, 1, size=(1, 2, 30, 20))).expand(3, 2, 30, 20)
    got = tl.matmul(tl.tensor(r.uniform(-1, 1, size=(3, 1, 40, 30))), row)
    assert got.shape == (3, 2, 40, 20)


def test_bmm_and_batched_values():
    r = rng(4)
    a, b = r.uniform(size=(64, 20, 30)), r.uniform(size=(64, 30, 10))
    np.testing.assert_allclose(tl.bmm(tl.tensor(a), tl.tensor(b)).numpy(), a @ b, rtol=1e-12)
    # transposed batches: a permuted view, read in place
    tA = tl.tensor(np.ascontiguousarray(a.transpose(1, 0, 2))).permute(1, 0, 2)
    np.testing.assert_allclose(tl.bmm(tA, tl.tensor(b)).numpy(), a @ b, rtol=1e-12)


def test_mv_dot_outer_values():
    r = rng(5)
    m, v, w = r.uniform(size=(7, 5)), r.uniform(size=5), r.uniform(size=7)
    np.testing.assert_allclose(tl.mv(tl.tensor(m), tl.tensor(v)).numpy(), m @ v, rtol=1e-12)
    np.testing.assert_allclose(tl.mv(tl.tensor(m).t(), tl.tensor(w)).numpy(), m.T @ w, rtol=1e-12)
    assert tl.dot(tl.tensor(v), tl.tensor(v)).shape == ()
    np.testing.assert_allclose(tl.dot(tl.tensor(v), tl.tensor(v)).item(), v @ v, rtol=1e-12)
    np.testing.assert_allclose(tl.outer(tl.tensor(v), tl.tensor(w)).numpy(), np.outer(v, w))
    # outer is a product, not a sum: signs of zero survive, dtypes promote
    o = tl.outer(tl.tensor([-0.0, 1.0]), tl.tensor([1.0, -2.0]))
    assert np.signbit(o.numpy()[0, 0]) and o.tolist() == [[-0.0, -0.0], [1.0, -2.0]]
    assert tl.outer(tl.tensor([1, 2], dtype=tl.int32), tl.tensor([1.5])).dtype == tl.float32
    assert tl.outer(tl.tensor([True, False]), tl.tensor([True])).tolist() == [[True], [False]]
    assert tl.ger(tl.tensor([1, 2]), tl.tensor([3])).tolist() == [[3], [6]]
    bf = tl.outer(tl.ones(2, dtype=tl.bfloat16), tl.full((3,), 3, dtype=tl.bfloat16))
    assert bf.dtype == tl.bfloat16 and bf.float().tolist() == [[3.0] * 3] * 2


def test_half_types_compute_in_float32():
    # a float16 sum of many products would lose the small terms; float32 accumulation keeps them
    a = np.ones((1, 4096), np.float16)
    b = np.full((4096, 1), 0.25, np.float16)
    got = tl.mm(make(a, "float16"), make(b, "float16"))
    assert got.dtype == tl.float16 and got.item() == 1024.0
    got = tl.mm(make(a, "bfloat16"), make(b, "bfloat16"))
    assert got.dtype == tl.bfloat16 and got.item() == 1024.0


# ---------------------------------------------------------------------------------------------
# addmm / addmv / baddbmm

@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int16"])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2), (0, 1), (2, 0), (-1, 3)])
def test_addmm_addmv_baddbmm_against_numpy(dtype, beta, alpha):
    r = rng(6)
    if dtype in INTS:
        beta, alpha = int(beta), int(alpha)      # PyTorch truncates the scalars for integers
    m1, m2 = sample((4, 6), dtype, r), sample((6, 5), dtype, r)
    for inp_shape in [(4, 5), (5,), (1, 5), (4, 1), ()]:
        inp = sample(inp_shape, dtype, r)
        got = tl.addmm(make(inp, dtype), make(m1, dtype), make(m2, dtype), beta=beta, alpha=alpha)
        ref = beta * rounded(inp, dtype) + alpha * (rounded(m1, dtype) @ rounded(m2, dtype))
        check_product(got, np.broadcast_to(ref, (4, 5)), dtype, 6)
    mat, vec, inp = sample((4, 6), dtype, r), sample((6,), dtype, r), sample((4,), dtype, r)
    got = tl.addmv(make(inp, dtype), make(mat, dtype), make(vec, dtype), beta=beta, alpha=alpha)
    check_product(got, beta * rounded(inp, dtype) + alpha * (rounded(mat, dtype) @ rounded(vec, dtype)), dtype, 6)
    b1, b2, inp = sample((3, 4, 6), dtype, r), sample((3, 6, 2), dtype, r), sample((4, 1), dtype, r)
    got = tl.baddbmm(make(inp, dtype), make(b1, dtype), make(b2, dtype), beta=beta, alpha=alpha)
    check_product(got, beta * rounded(inp, dtype) + alpha * (rounded(b1, dtype) @ rounded(b2, dtype)), dtype, 6)


def test_addmm_scalar_rules():
    nan = float("nan")
    # beta == 0 ignores NaN in input; alpha == 0 ignores the product in addmm/addmv ...
    assert tl.addmm(tl.full((2, 2), nan), tl.ones(2, 3), tl.ones(3, 2), beta=0).tolist() == [[3.0] * 2] * 2
    assert tl.addmm(tl.ones(2, 2), tl.full((2, 3), nan), tl.ones(3, 2), alpha=0).tolist() == [[1.0] * 2] * 2
    assert tl.addmv(tl.ones(2), tl.full((2, 3), nan), tl.ones(3), alpha=0).tolist() == [1.0, 1.0]
    # ... but not in baddbmm (PyTorch computes 0 * NaN there)
    assert np.isnan(tl.baddbmm(tl.ones(1, 2, 2), tl.full((1, 2, 3), nan), tl.ones(1, 3, 2), alpha=0).numpy()).all()
    # integer ops truncate float scalars and range-check them
    i64 = tl.int64
    got = tl.addmm(tl.full((2, 2), 3, dtype=i64), tl.ones(2, 3, dtype=i64), tl.ones(3, 2, dtype=i64), beta=1.5, alpha=2.7)
    assert got.tolist() == [[9, 9], [9, 9]]
    with pytest.raises(RuntimeError, match=r"value cannot be converted to type int8_t without overflow"):
        tl.addmm(tl.zeros(2, 2, dtype=tl.int8), tl.zeros(2, 3, dtype=tl.int8), tl.zeros(3, 2, dtype=tl.int8), beta=300)
    with pytest.raises(RuntimeError, match=r"value cannot be converted to type float without overflow"):
        tl.addmm(tl.zeros(2, 2), tl.zeros(2, 3), tl.zeros(3, 2), alpha=1e300)
    with pytest.raises(TypeError, match="alpha"):
        tl.addmm(tl.zeros(2, 2), tl.zeros(2, 3), tl.zeros(3, 2), alpha="a")


def test_inplace_variants_write_self():
    x = tl.ones(2, 5)
    v = x._version
    y = x.addmm_(tl.ones(2, 3), tl.ones(3, 5), beta=2)
    assert y is x and x._version > v and x.tolist() == [[5.0] * 5] * 2
    base = tl.zeros(5, 2)
    xt = base.t()                                   # a non-contiguous self
    xt.addmm_(tl.ones(2, 3), tl.ones(3, 5))
    assert base.tolist() == [[3.0, 3.0]] * 5
    h = tl.ones(2, dtype=tl.float16)
    assert h.addmv_(tl.ones(2, 3, dtype=tl.float16), tl.ones(3, dtype=tl.float16)) is h
    assert h.tolist() == [4.0, 4.0] and h.dtype == tl.float16
    b = tl.ones(2, 2, 5)
    assert b.baddbmm_(tl.ones(2, 2, 3), tl.ones(2, 3, 5), alpha=2).tolist()[0][0] == [7.0] * 5
    with pytest.raises(RuntimeError, match=r"Bad in-place call: input tensor size \[1, 5\] and output tensor size \[2, 5\] should match"):
        tl.ones(1, 5).addmm_(tl.ones(2, 3), tl.ones(3, 5))
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        tl.ones(1).expand(5).addmv_(tl.ones(5, 3), tl.ones(3))       # PyTorch: races; we refuse


def test_methods_exist_and_agree():
    a, b = tl.ones(2, 3), tl.ones(3, 4)
    for name in ["mm", "matmul"]:
        assert getattr(a, name)(b).tolist() == [[3.0] * 4] * 2
    assert tl.ones(2, 2, 3).bmm(tl.ones(2, 3, 1)).shape == (2, 2, 1)
    assert a.mv(tl.ones(3)).tolist() == [3.0, 3.0]
    assert tl.ones(3).dot(tl.ones(3)).item() == 3.0
    assert tl.ones(2).outer(tl.ones(3)).shape == (2, 3) and tl.ones(2).ger(tl.ones(3)).shape == (2, 3)
    assert tl.zeros(2, 4).addmm(a, b).tolist() == [[3.0] * 4] * 2
    assert tl.zeros(2).addmv(a, tl.ones(3)).tolist() == [3.0, 3.0]
    assert tl.zeros(1, 2, 4).baddbmm(tl.ones(1, 2, 3), tl.ones(1, 3, 4)).shape == (1, 2, 4)


# ---------------------------------------------------------------------------------------------
# out=

def test_out_is_written_resized_and_checked():
    a, b = tl.ones(2, 3), tl.ones(3, 4)
    o = tl.empty(2, 4)
    assert tl.mm(a, b, out=o) is o and o.tolist() == [[3.0] * 4] * 2
    o = tl.empty(5)
    with pytest.warns(UserWarning, match="resized"):
        assert tl.matmul(a, b, out=o).shape == (2, 4)
    assert o.tolist() == [[3.0] * 4] * 2
    # non-contiguous out
    base = tl.zeros(4, 2)
    tl.mm(a, b, out=base.t())
    assert base.tolist() == [[3.0, 3.0]] * 4
    # out aliasing an input: computed into a temporary first
    sq = tl.tensor([[1.0, 2.0], [3.0, 4.0]])
    tl.mm(sq, sq, out=sq)
    assert sq.tolist() == [[7.0, 10.0], [15.0, 22.0]]
    for fn, args in [(tl.mv, (a, tl.ones(3))), (tl.dot, (tl.ones(3), tl.ones(3))),
                     (tl.bmm, (tl.ones(1, 2, 3), tl.ones(1, 3, 1))),
                     (tl.addmm, (tl.zeros(2, 4), a, b)), (tl.outer, (tl.ones(2), tl.ones(3))),
                     (tl.tensordot, (a, b, 1)), (tl.matmul, (tl.ones(2, 2, 3), b))]:
        out = tl.empty(0)
        res = fn(*args, out=out)
        assert res is out and out.tolist() == fn(*args).tolist()
    o = tl.empty(2, 4, dtype=tl.float64)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double instead"):
        tl.mm(a, b, out=o)
    with pytest.raises(RuntimeError, match="result dtype Double does not match input dtype Float"):
        tl.dot(tl.ones(3), tl.ones(3), out=tl.empty(0, dtype=tl.float64))
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        tl.outer(tl.ones(3), tl.ones(3), out=tl.empty(0, dtype=tl.int64))
    assert tl.outer(tl.ones(3), tl.ones(3), out=tl.empty(0, dtype=tl.float64)).dtype == tl.float64


# ---------------------------------------------------------------------------------------------
# error messages (PyTorch 2.13's text)

z = tl.zeros
f64, i64, i32 = tl.float64, tl.int64, tl.int32

ERRORS = [
    (lambda: tl.mm(z(2, 3), z(4, 5)), RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
    (lambda: tl.mm(z(2, 3), z(3, 5, dtype=f64)), RuntimeError,
     "expected m1 and m2 to have the same dtype, but got: float != double"),
    (lambda: tl.mm(z(2, 3, dtype=i64), z(3, 5)), RuntimeError,
     "expected m1 and m2 to have the same dtype, but got: long int != float"),
    (lambda: tl.mm(z(2, 3, dtype=tl.bool), z(3, 5, dtype=tl.bool)), NotImplementedError,
     "\"addmm_impl_cpu_\" not implemented for 'Bool'"),
    (lambda: tl.mm(z(3), z(3, 5)), RuntimeError, "self must be a matrix"),
    (lambda: tl.mm(z(2, 3), z(3)), RuntimeError, "mat2 must be a matrix"),
    (lambda: tl.matmul(z(3), z(4)), RuntimeError,
     "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of elements, "
     "but got 3 and 4 elements respectively"),
    (lambda: tl.matmul(z(3), z(4, 5)), RuntimeError, "mat1 and mat2 shapes cannot be multiplied (1x3 and 4x5)"),
    (lambda: tl.matmul(z(2, 3), z(4)), RuntimeError, "size mismatch, got input (2), mat (2x3), vec (4)"),
    (lambda: tl.matmul(z(2, 2, 3), z(4, 5)), RuntimeError, "mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)"),
    (lambda: tl.matmul(z(7, 2, 3), z(4)), RuntimeError, "size mismatch, got input (14), mat (14x3), vec (4)"),
    (lambda: tl.matmul(z(2, 2, 3), z(3, 3, 5)), RuntimeError,
     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"),
    (lambda: tl.matmul(z(2, 2, 3, 3), z(3, 3, 2, 3)), RuntimeError,      # the last mismatching dim
     "The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 1"),
    (lambda: tl.matmul(z(3), z(7, 4, 5)), RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [7, 3] but got: [7, 4]."),
    (lambda: tl.matmul(z(2, 3, 4).mT, z(2)), RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 2]."),
    (lambda: tl.matmul(z(()), z(4)), RuntimeError,
     "both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
    (lambda: tl.matmul(z(2, 2, 3), z(2, 3, 4, dtype=f64)), RuntimeError, "expected scalar type Float but found Double"),
    (lambda: tl.matmul(z(2, 3), z(3, dtype=f64)), RuntimeError,
     "addmv input tensors must have the same dtype, but got Double, Float, and Double"),
    (lambda: tl.matmul(z(2, 2, 3, dtype=tl.bool), z(2, 3, 2, dtype=tl.bool)), NotImplementedError,
     "\"bmm\" not implemented for 'Bool'"),
    (lambda: tl.bmm(z(2, 2, 3), z(2, 4, 5)), RuntimeError,
     "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4]."),
    (lambda: tl.bmm(z(2, 3), z(3, 3, 5)), RuntimeError, "batch1 must be a 3D tensor"),
    (lambda: tl.bmm(z(2, 2, 3), z(3, 5)), RuntimeError, "batch2 must be a 3D tensor"),
    (lambda: tl.bmm(z(2, 2, 3), z(2, 3, 5, dtype=f64)), RuntimeError, "expected scalar type Float but found Double"),
    (lambda: tl.mv(z(2, 3), z(4)), RuntimeError, "size mismatch, got input (2), mat (2x3), vec (4)"),
    (lambda: tl.mv(z(2, 3), z(3, 1)), RuntimeError, "vector + matrix @ vector expected, got 1, 2, 2"),
    (lambda: tl.mv(z(2, 3, dtype=i32), z(3)), RuntimeError,
     "addmv input tensors must have the same dtype, but got Float, Int, and Float"),
    (lambda: tl.mv(z(2, 3, dtype=tl.bool), z(3, dtype=tl.bool)), NotImplementedError,
     "\"addmv_impl_cpu\" not implemented for 'Bool'"),
    (lambda: tl.dot(z(3), z(3, dtype=f64)), RuntimeError,
     "dot : expected both vectors to have same dtype, but found Float and Double"),
    (lambda: tl.dot(z(3, 1), z(3)), RuntimeError, "1D tensors expected, but got 2D and 1D tensors"),
    (lambda: tl.dot(z(3, dtype=tl.bool), z(3, dtype=tl.bool)), NotImplementedError,
     "\"dot\" not implemented for 'Bool'"),
    (lambda: tl.outer(z(3, 2), z(4)), RuntimeError, "outer: Expected 1-D argument self, but got 2-D"),
    (lambda: tl.outer(z(3), z(4, 2)), RuntimeError, "outer: Expected 1-D argument vec2, but got 2-D"),
    (lambda: tl.addmm(z(3, 5), z(2, 3), z(3, 5)), RuntimeError,
     "The expanded size of the tensor (2) must match the existing size (3) at non-singleton dimension 0.  "
     "Target sizes: [2, 5].  Tensor sizes: [3, 5]"),
    (lambda: tl.addmm(z(2, 5, dtype=f64), z(2, 3), z(3, 5)), RuntimeError,
     "self and mat2 must have the same dtype, but got Double and Float"),
    (lambda: tl.addmm(z(2, 5), z(2, 3, dtype=f64), z(3, 5)), RuntimeError,
     "mat1 and mat2 must have the same dtype, but got Double and Float"),
    (lambda: tl.addmm(z(2, 5), z(3), z(3, 5)), RuntimeError, "mat1 must be a matrix, got 1-D tensor"),
    (lambda: tl.addmv(z(2, 2), z(2, 3), z(3)), RuntimeError, "vector + matrix @ vector expected, got 2, 2, 1"),
    (lambda: tl.addmv(z(3), z(2, 3), z(3)), RuntimeError, "size mismatch, got input (3), mat (2x3), vec (3)"),
    (lambda: tl.addmv(z(2, dtype=f64), z(2, 3), z(3)), RuntimeError,
     "addmv input tensors must have the same dtype, but got Double, Float, and Float"),
    (lambda: tl.baddbmm(z(2, 2, 5, dtype=f64), z(2, 2, 3), z(2, 3, 5)), RuntimeError,
     "Input dtypes must be the same, got: input double, batch1: float, batch2: float"),
    (lambda: tl.baddbmm(z(2, 5), z(2, 3), z(2, 3, 5)), RuntimeError,    # input broadcast first
     "The expanded size of the tensor (3) must match the existing size (2) at non-singleton dimension 1.  "
     "Target sizes: [2, 3, 5].  Tensor sizes: [2, 5]"),
    (lambda: tl.baddbmm(z(2, 2, 5), z(2, 3), z(3, 5)), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda: tl.mv(z(()), z(3)), IndexError, "Dimension specified as 0 but tensor has no dimensions"),
    (lambda: tl.addmm(z(2), z(2, 1, 2), z((), dtype=f64)), RuntimeError,    # dtypes before ranks
     "self and mat2 must have the same dtype, but got Float and Double"),
    (lambda: tl.baddbmm(z(2, 2, 5, dtype=tl.bool), z(2, 2, 3, dtype=tl.bool), z(2, 3, 5, dtype=tl.bool)),
     NotImplementedError, "\"baddbmm\" not implemented for 'Bool'"),
    (lambda: tl.tensordot(z(2, 3), z(4, 5), dims=1), RuntimeError,
     "contracted dimensions need to match, but first has size 3 in dim -1 and second has size 4 in dim 0"),
    (lambda: tl.tensordot(z(2, 3), z(3, 5), dims=3), RuntimeError,
     "tensordot expects dims < ndim_a or ndim_b, but got dims=3"),
    (lambda: tl.tensordot(z(2, 3), z(3, 5), dims=-1), RuntimeError, "tensordot expects dims >= 0, but got dims=-1"),
    (lambda: tl.tensordot(z(2, 3), z(3, 5, dtype=f64), dims=1), RuntimeError, "both inputs should have same dtype"),
    (lambda: tl.tensordot(z(2, 3), z(3, 2), dims=([1, 0], [0])), RuntimeError,
     "both dimension lists should have same length"),
    (lambda: tl.tensordot(z(2, 3), z(3, 2), dims=1.0), RuntimeError,
     "tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] containing two "
     "lists, but got dims=1.0"),
    (lambda: tl.tensordot(z(2, 3), z(3, 2), dims=[1, 0]), TypeError,
     "tensordot(): argument 'dims_self' (position 3) must be tuple of ints, not int"),
    (lambda: tl.tensordot(z(2, 3), z(3, 2), dims=1, out=z(2, 2, dtype=f64)), RuntimeError,
     "tensordot: Expected the output tensor to have dtype Float, but got an output tensor with dtype Double"),
    (lambda: tl.einsum("ij,jk->ik", z(2, 3), z(4, 5)), RuntimeError,
     "einsum(): subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3"),
    (lambda: tl.einsum("ij,jk", z(2, 3)), RuntimeError,
     "einsum(): fewer operands were provided than specified in the equation"),
    (lambda: tl.einsum("ij", z(2, 3), z(3)), RuntimeError,
     "einsum(): more operands were provided than specified in the equation"),
    (lambda: tl.einsum("ij,jk->ik", z(2, 3), z(3, 5, dtype=f64)), RuntimeError,
     "expected scalar type Float but found Double"),
    (lambda: tl.einsum("ij->ik", z(2, 3)), RuntimeError,
     "einsum(): output subscript k does not appear in the equation for any input operand"),
    (lambda: tl.einsum("ijk->ij", z(2, 3)), RuntimeError,
     "einsum(): the number of subscripts in the equation (3) does not match the number of dimensions (2) "
     "for operand 0 and no ellipsis was given"),
    (lambda: tl.einsum("ijk...", z(3, 2)), RuntimeError,
     "einsum(): the number of subscripts in the equation (3) is more than the number of dimensions (2) for operand 0"),
    (lambda: tl.einsum("ij->ii", z(2, 3)), RuntimeError, "einsum(): output subscript i appears more than once in the output"),
    (lambda: tl.einsum("ii->i", z(2, 3)), RuntimeError,
     "einsum(): subscript i is repeated for operand 0 but the sizes don't match, 3 != 2"),
    (lambda: tl.einsum("i1", z(2)), RuntimeError,
     "einsum(): invalid subscript given at index 1 in the equation string, subscripts must be in [a-zA-Z]"),
    (lambda: tl.einsum("i.j", z(2, 3)), RuntimeError, "einsum(): found '.' for operand 0 that is not part of any ellipsis"),
    (lambda: tl.einsum("....", z(2, 3)), RuntimeError,
     "einsum(): found '.' for operand 0 for which an ellipsis was already found"),
    (lambda: tl.einsum("i->i.", z(2)), RuntimeError,
     "einsum(): found '.' for output that is not part of any ellipsis (...)"),
    (lambda: tl.einsum("...i,...i", z(2, 3), z(4, 3)), RuntimeError,
     "einsum(): dimension 0 covered by ellipsis in operand 1has size 4 which does not broadcast with "
     "previously seen ellipsis with size 2 for the respective dimension"),
    (lambda: tl.einsum("ij,jk", z(2, 3, dtype=tl.bool), z(3, 4, dtype=tl.bool)), NotImplementedError,
     "\"bmm\" not implemented for 'Bool'"),
    (lambda: tl.einsum(z(3, 4), [0, 52], [52]), ValueError,
     "einsum(): subscript in subscript list is not within the valid range [0, 52)"),
    (lambda: tl.einsum("ij,jk"), ValueError,
     "einsum(): must specify the equation string and at least one operand, or at least one operand and "
     "its subscripts list"),
    (lambda: tl.einsum("i", 1), TypeError, "expected Tensor as element 0 in argument 1, but got int"),
    (lambda: tl.einsum(1, z(2)), TypeError, "einsum(): argument 'equation' (position 1) must be str, not int"),
]


def test_bool_products_raise_unlike_numpy():
    a = np.array([[True, False], [True, True]])
    assert (a @ a).dtype == np.bool_                  # NumPy computes it
    for fn, args in [(tl.mm, (a, a)), (tl.matmul, (a[None], a[None])), (tl.mv, (a, a[0])), (tl.dot, (a[0], a[0]))]:
        with pytest.raises(BOOL_MATMUL_RAISES, match="not implemented for 'Bool'"):
            fn(*[tl.tensor(x) for x in args])


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_error_messages(i):
    fn, cls, msg = ERRORS[i]
    with pytest.raises(cls) as info:
        fn()
    assert str(info.value) == msg


# ---------------------------------------------------------------------------------------------
# tensordot and einsum against NumPy

TENSORDOT_CASES = [
    ((2, 3, 4), (3, 4, 5), 2),
    ((2, 3, 4), (4, 5), 1),
    ((2, 3), (4, 5), 0),
    ((2, 3), (2, 3), 2),
    ((3, 4, 5), (5, 3, 2), ([0, 2], [1, 0])),
    ((3, 4, 5), (4, 3), ([-2, 0], [0, 1])),
    ((0, 3), (3, 2), 1),
]


@pytest.mark.parametrize("sa,sb,dims", TENSORDOT_CASES)
def test_tensordot_against_numpy(sa, sb, dims):
    r = rng(7)
    a, b = r.uniform(-1, 1, size=sa), r.uniform(-1, 1, size=sb)
    got = tl.tensordot(tl.tensor(a), tl.tensor(b), dims=dims)
    ref = np.tensordot(a, b, axes=dims if isinstance(dims, int) else (dims[0], dims[1]))
    assert tuple(got.shape) == ref.shape
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12, atol=1e-12)
    # transposed operands, int dtype, and dims given as a tensor
    got = tl.tensordot(tl.tensor((a * 10).astype(np.int64)), tl.tensor((b * 10).astype(np.int64)), dims=dims)
    ref = np.tensordot((a * 10).astype(np.int64), (b * 10).astype(np.int64),
                       axes=dims if isinstance(dims, int) else (dims[0], dims[1]))
    np.testing.assert_array_equal(got.numpy(), ref)


def test_tensordot_broadcasts_size_one_and_tensor_dims():
    got = tl.tensordot(tl.ones(2, 1), tl.ones(3, 2), dims=([1], [0]))
    assert got.tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert tl.tensordot(tl.ones(2, 3), tl.ones(3, 2), dims=tl.tensor(1)).shape == (2, 2)
    assert tl.tensordot(tl.ones(2, 3), tl.ones(3, 2), dims=tl.tensor([[1], [0]])).shape == (2, 2)


EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij,kj->ik", [(2, 3), (4, 3)]),
    ("ji,jk->ki", [(3, 2), (3, 4)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("bij,bjk->ibk", [(2, 3, 4), (2, 4, 5)]),
    ("ii", [(4, 4)]),
    ("ii->i", [(4, 4)]),
    ("iij->ij", [(3, 3, 2)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("ijk->ki", [(2, 3, 4)]),
    ("ij->ji", [(2, 3)]),
    ("ba", [(2, 3)]),
    ("i,i", [(5,), (5,)]),
    ("i,i->i", [(5,), (5,)]),
    ("i,j", [(2,), (3,)]),
    ("i,j->ji", [(2,), (3,)]),
    ("i,j->", [(2,), (3,)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("ij,ij->ji", [(3, 4), (3, 4)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("i,j,k->ijk", [(2,), (3,), (4,)]),
    ("ij,ij,ij->i", [(2, 3), (2, 3), (2, 3)]),
    ("abc,cd,bd->ad", [(2, 3, 4), (4, 5), (3, 5)]),
    ("...ij,...jk", [(2, 2, 3), (3, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (4, 3, 5)]),
    ("...,...", [(2, 3), (3,)]),
    ("i...->...", [(2, 3)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("...a->a", [(2, 3, 4)]),
    ("...->", [(2, 3, 4)]),
    ("i...j", [(3, 2, 4)]),
    ("ij...,j...->...", [(3, 2, 4), (2, 1)]),
    ("Ab,bC", [(2, 3), (3, 4)]),
    ("a b -> b a", [(2, 3)]),
    ("i,i", [(1,), (3,)]),
    ("ij,jk", [(2, 1), (3, 4)]),
    ("", [()]),
    ("ij,jk->ik", [(2, 0), (0, 3)]),
    ("ij,jk->ik", [(0, 3), (3, 2)]),
]


def numpy_einsum(eq, arrays):
    """np.einsum with PyTorch's extras spelled out: '...' becomes explicit letters (PyTorch sums
    ellipsis dims missing from an explicit output; NumPy refuses), and size-1 dims are
    broadcast to the size the label has elsewhere (PyTorch broadcasts them, NumPy does not)."""
    assert EINSUM_BROADCASTS_SIZE_ONE
    lhs, arrow, rhs = eq.replace(" ", "").partition("->")
    terms = lhs.split(",")
    E = max([a.ndim - len(t.replace("...", "")) for t, a in zip(terms, arrays) if "..." in t] + [0])
    ell = "".join(c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in eq)[:E]
    terms = [t.replace("...", ell[E - (a.ndim - len(t.replace("...", ""))):]) for t, a in zip(terms, arrays)]
    if arrow:
        rhs = rhs.replace("...", ell)
    else:
        counts = {c: "".join(terms).count(c) for c in "".join(terms) if c not in ell}
        rhs = ell + "".join(sorted(c for c, n in counts.items() if n == 1))
    size = {}
    for t, a in zip(terms, arrays):
        for c, s in zip(t, a.shape):
            size[c] = s if size.get(c, 1) == 1 else size[c]
    grown = [np.broadcast_to(a, [size[c] for c in t]) for t, a in zip(terms, arrays)]
    return np.einsum(",".join(terms) + "->" + rhs, *grown)


@pytest.mark.parametrize("eq,shapes", EINSUM_CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_einsum_against_numpy(eq, shapes, dtype):
    r = rng(8)
    arrays = [sample(s, dtype, r).astype(dtype) for s in shapes]
    got = tl.einsum(eq, *[tl.tensor(a) for a in arrays])
    ref = numpy_einsum(eq, [a.astype(np.float64) if dtype != "int64" else a for a in arrays])
    assert tuple(got.shape) == np.shape(ref)
    if dtype == "int64":
        np.testing.assert_array_equal(got.numpy(), ref)
    else:
        np.testing.assert_allclose(got.numpy(), ref, rtol=TOL[dtype] * 10, atol=TOL[dtype] * 100)


def test_einsum_forms_views_and_dtypes():
    a = tl.arange(12.).view(3, 4)
    assert tl.einsum("ij,jk->ik", [a, a.t()]).shape == (3, 3)           # operands as a list
    assert tl.einsum(a, [0, 1], [1]).tolist() == a.numpy().sum(0).tolist()   # sublist form
    assert tl.einsum(a, [0, Ellipsis], [Ellipsis]).shape == (4,)
    assert tl.einsum(tl.arange(3.), [0], tl.arange(3.), [0]).item() == 5.0
    # no sum: a view sharing memory, like PyTorch
    t = tl.einsum("ij->ji", a)
    assert t._base is a._base and t.stride() == (1, 4) and t.data_ptr() == a.data_ptr()
    d = tl.einsum("ii->i", tl.arange(9.).view(3, 3))
    assert d.tolist() == [0.0, 4.0, 8.0] and d.stride() == (4,)
    # single-operand sums of integers are int64 (a sum), products keep the dtype
    assert tl.einsum("i->", tl.ones(3, dtype=tl.int32)).dtype == tl.int64
    assert tl.einsum("ii", tl.ones(3, 3, dtype=tl.bool)).dtype == tl.int64
    assert tl.einsum("ii->i", tl.ones(3, 3, dtype=tl.uint8)).dtype == tl.uint8
    assert tl.einsum("ij,jk", tl.ones(2, 3, dtype=tl.int8), tl.ones(3, 4, dtype=tl.int8)).dtype == tl.int8
    assert tl.einsum("i,i->", tl.full((3,), 100, dtype=tl.int8), tl.full((3,), 100, dtype=tl.int8)).item() == 48
    assert tl.einsum("ij->", tl.ones(2, 3, dtype=tl.float16)).dtype == tl.float16
    assert tl.einsum("i,j", tl.ones(2, dtype=tl.bool), tl.ones(3, dtype=tl.bool)).dtype == tl.bool
    # operands without a contraction between them promote (PyTorch multiplies them)
    assert tl.einsum("i,j", tl.ones(3), tl.ones(3, dtype=tl.float64)).dtype == tl.float64


# ---------------------------------------------------------------------------------------------
# the allocator rule: NumPy never allocates tensor data; transposes are read in place

def test_numpy_allocates_no_tensor_data():
    r = rng(9)
    a = tl.tensor(r.uniform(size=(128, 96)).astype(np.float32))
    b = tl.tensor(r.uniform(size=(96, 64)).astype(np.float32))
    c = tl.tensor(r.uniform(size=(4, 96, 64)).astype(np.float32))
    ops = [lambda: tl.mm(a, b), lambda: tl.mm(b.t(), a.t()), lambda: tl.matmul(a, c),
           lambda: tl.einsum("ij,bjk->bik", a, c), lambda: tl.tensordot(a, b, 1),
           lambda: tl.addmm(tl.zeros(128), b.t(), a.t()), lambda: tl.outer(a[0], b[0]),
           lambda: tl.mm(a[:, ::2], b[::2]), lambda: tl.mm(a.half(), b.half())]
    for op in ops:
        op()                                    # warm up (imports, caches)
    gc.collect()
    tracemalloc.start()
    try:
        for op in ops:
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
            op()
            peak = tracemalloc.get_traced_memory()[1] - before
            # tensor data is 12 KiB and more here: only small Python objects may show up
            assert peak < 8192, peak
    finally:
        tracemalloc.stop()


def test_transposed_operands_need_no_copy():
    a = tl.ones(64, 48)
    b = tl.ones(48, 32)
    out_bytes = 64 * 32 * 4
    for x, y in [(a, b), (a.t().contiguous().t(), b), (a, b.t().contiguous().t())]:
        gc.collect()
        base = memory.memory_allocated()
        memory.reset_peak_memory_stats()
        r = tl.mm(x, y)
        assert memory.max_memory_allocated() - base == out_bytes
        del r
        assert memory.memory_allocated() == base
    # a layout BLAS cannot read is copied through our allocator (and freed)
    gc.collect()
    base = memory.memory_allocated()
    memory.reset_peak_memory_stats()
    r = tl.mm(tl.ones(64, 96)[:, ::2], b)
    assert memory.max_memory_allocated() - base >= out_bytes + 64 * 48 * 4
    del r
    assert memory.memory_allocated() == base


# ---------------------------------------------------------------------------------------------
# PyTorch parity (shapes, dtypes, strides, values, error classes and messages)

PARITY = [
    "T.matmul(o(2,3), o(3))", "T.matmul(o(3), o(3,4))", "T.matmul(o(5,2,3), o(3))",
    "T.matmul(o(3), o(5,3,4))", "T.matmul(o(2,1,2,3), o(3,3,4))", "T.matmul(o(2,3).t(), o(2,4))",
    "T.matmul(z(3), z(7,4,5))", "T.matmul(z(7,2,3), z(4))", "T.matmul(z(2,3), z(3,dtype=f64))",
    "T.mm(o(0,3), o(3,4))", "T.mm(o(2,0), o(0,4))", "T.dot(o(0), o(0))",
    "T.dot(T.full((3,),100,dtype=i8), T.full((3,),100,dtype=i8))",
    "T.mv(o(2,3,dtype=i8), o(3,dtype=i8))", "T.outer(o(3,dtype=i32), o(4,dtype=b))",
    "T.addmm(o(5), o(2,3), o(3,5), beta=2)", "T.addmv(o(()), o(2,3), o(3))",
    "T.baddbmm(o(5), o(2,2,3), o(2,3,5))", "T.baddbmm(z(2,5), z(2,3), z(2,3,5))",
    "T.addmm(o(2,5,dtype=i8), o(2,3,dtype=i8), o(3,5,dtype=i8), alpha=-1.5)",
    "T.addmm(z(2,5,dtype=i64), z(2,3,dtype=i64), z(3,5,dtype=i64), alpha=2**63)",
    "T.tensordot(o(2,3), o(3,2), dims=0)", "T.tensordot(o(2,3), o(3,2), dims=True)",
    "T.tensordot(o(2,3), o(3,2), dims=([1],))", "T.tensordot(o(2,3), o(3,2), dims=([5],[0]))",
    "T.einsum('bij,bjk->ibk', T.arange(24.).view(2,3,4), T.arange(40.).view(2,4,5))",
    "T.einsum('...ij,...jk->...ik', o(2,1,2,3), o(4,3,5))",
    "T.einsum('ij,jk->ki', T.arange(6.).view(2,3), T.arange(12.).view(3,4))",
    "T.einsum('ij,ij->ji', T.arange(6.).view(2,3), T.arange(6.).view(2,3))",
    "T.einsum('ijk->ki', T.arange(24.).view(2,3,4))", "T.einsum('i->i', o(1))",
    "T.einsum('i...', T.arange(6.).view(3,2))", "T.einsum('aA', o(2,3))",
    "T.einsum('i,i->i', o(3), o(3,dtype=i32))", "T.einsum('i', o(()))",
    "T.einsum(o(3,4), [0,1.0], [0])", "T.einsum('i,i', [o(3)], o(3))",
    "T.einsum('a->->a', o(2))", "T.einsum('i->', T.full((3,),2**62,dtype=i64))",
]


@pytest.mark.parametrize("expr", PARITY)
def test_torch_parity(torch, expr):
    def run(T):
        env = dict(T=T, o=T.ones, z=T.zeros, f64=T.float64, i32=T.int32, i64=T.int64, i8=T.int8, b=T.bool)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = eval(expr, env)
        except Exception as e:             # noqa: BLE001 - comparing the exception itself
            return type(e).__name__, str(e).split("\n")[0]
        return tuple(r.shape), str(r.dtype).split(".")[-1], r.tolist(), tuple(r.stride())
    mine, theirs = run(tl), run(torch)
    if theirs[0] == "TypeError":               # argument-parsing TypeErrors: class only
        assert mine[0] == "TypeError"
    else:
        assert mine == theirs


def test_torch_parity_random_values(torch):
    r = rng(10)
    for sa, sb in RANK_SHAPES:
        a, b = r.uniform(-1, 1, size=sa), r.uniform(-1, 1, size=sb)
        got = tl.matmul(tl.tensor(a), tl.tensor(b)).numpy()
        ref = torch.matmul(torch.tensor(a), torch.tensor(b)).numpy()
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
