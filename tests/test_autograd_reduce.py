"""Autograd of the reduction, sorting and linalg families: prod/cumprod (exact at zeros),
median/nanmedian/mode/msort, var_mean/std_mean, broadcast_tensors, unique, tensordot,
einsum, and the overload-dependent node names (sum(dim) is SumBackward1, max(dim)
MaxBackward0, max(a, b) MaximumBackward0, matmul of vectors DotBackward0 ...).

Every case is checked three ways: gradcheck (float64 finite differences), gradgradcheck
where the formula is recorded, and parity with PyTorch (grad_fn names of the differentiable
outputs and the input gradients for a fixed weighting of the outputs).
"""
import numpy as np
import pytest

import tensorlib
from tensorlib.autograd import gradcheck, gradgradcheck

NAN = float("nan")


def distinct(*shape, seed=0, low=0.5, high=2.0):
    """Values with no ties and no zeros (random signs), float64."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape)) if shape else 1
    v = rng.permutation(np.linspace(low, high, n)) * rng.choice([-1.0, 1.0], n)
    return v.reshape(shape)


def with_zeros(*shape, zeros, seed=0):
    a = distinct(*shape, seed=seed).reshape(-1)
    for z in zeros:
        a[z] = 0.0
    return a.reshape(shape)


A34 = distinct(3, 4)
A234 = distinct(2, 3, 4, seed=1)
Z1 = np.array([[1.5, 0.0, 2.0, -1.0], [2.0, 3.0, 0.5, 1.2], [0.7, -1.1, 1.3, 0.0]])
Z2 = np.array([[1.5, 0.0, 2.0, 0.0], [2.0, 0.0, 0.5, 1.2], [0.0, 0.0, 1.3, 0.9]])
TIES = np.array([[2.0, 1.0, 2.0, 3.0, 2.0], [5.0, 5.0, 4.0, 4.0, 1.0]])
WITH_NAN = np.array([[2.0, NAN, 1.0, 3.0], [1.0, 4.0, 2.0, 0.5], [NAN, NAN, 1.0, 2.0]])
V4 = distinct(4, seed=2)
B45 = distinct(4, 5, seed=3)


# (id, fn(lib, *inputs), numpy inputs, checks): True = gradcheck + gradgradcheck + torch parity;
# "first" = no gradgradcheck; "parity" = torch parity only (ties and NaNs: not differentiable there, finite differences
# see an average of the one-sided slopes)
CASES = [
    # ---- prod: whole tensor (ProdBackward0) and along a dim (ProdBackward1)
    ("prod", lambda L, x: x.prod(), [A34], True),
    ("prod_dim0", lambda L, x: x.prod(0), [A34], True),
    ("prod_dim_neg_keepdim", lambda L, x: x.prod(-1, keepdim=True), [A234], True),
    ("prod_fn_dim_kw", lambda L, x: L.prod(x, dim=1), [A234], True),
    ("prod_0d", lambda L, x: x.prod(), [np.array(1.7)], True),
    ("prod_0d_dim", lambda L, x: x.prod(0, keepdim=True), [np.array(1.7)], True),
    ("prod_one_zero", lambda L, x: x.prod(), [with_zeros(3, 4, zeros=[5])], True),
    ("prod_two_zeros", lambda L, x: x.prod(), [with_zeros(3, 4, zeros=[1, 10])], True),
    ("prod_dim_zeros", lambda L, x: x.prod(1), [Z1], True),
    ("prod_dim_two_zeros", lambda L, x: x.prod(1), [Z2], True),
    ("prod_dim0_two_zeros", lambda L, x: x.prod(0, keepdim=True), [Z2], True),
    ("prod_len1_dim", lambda L, x: x.prod(1), [distinct(3, 1)], True),
    # ---- cumprod
    ("cumprod0", lambda L, x: x.cumprod(0), [A34], True),
    ("cumprod_neg", lambda L, x: x.cumprod(-1), [A234], True),
    ("cumprod_fn", lambda L, x: L.cumprod(x, dim=1), [A34], True),
    ("cumprod_0d", lambda L, x: x.cumprod(0), [np.array(-1.3)], True),
    ("cumprod_one_zero", lambda L, x: x.cumprod(1), [Z1], True),
    ("cumprod_two_zeros", lambda L, x: x.cumprod(1), [Z2], True),
    ("cumprod_zeros_dim0", lambda L, x: x.cumprod(0), [Z2], True),
    ("cumprod_zero_first_last", lambda L, x: x.cumprod(0), [np.array([0.0, 1.5, -2.0, 0.0])], True),
    # (in-place ops save a detached copy of the input: first order only)
    ("cumprod_inplace", lambda L, x: (x * 1).cumprod_(1), [A34], "first"),
    # ---- median / nanmedian: whole tensor shares among equal elements; with dim via indices
    ("median", lambda L, x: x.median(), [A34], True),
    ("median_ties", lambda L, x: x.median(), [TIES], "parity"),
    ("median_dim", lambda L, x: x.median(1), [A34], True),
    ("median_dim_keepdim_neg", lambda L, x: x.median(-2, keepdim=True), [A234], True),
    ("median_dim_ties", lambda L, x: L.median(x, 1), [TIES], "parity"),
    ("median_nan", lambda L, x: x.median(), [WITH_NAN], "parity"),
    ("median_dim_nan", lambda L, x: x.median(1), [WITH_NAN], "parity"),
    ("nanmedian", lambda L, x: x.nanmedian(), [WITH_NAN], "parity"),
    ("nanmedian_dim", lambda L, x: x.nanmedian(1), [WITH_NAN], "parity"),
    ("nanmedian_dim0_keepdim", lambda L, x: L.nanmedian(x, 0, keepdim=True), [A34], True),
    ("median_0d_dim", lambda L, x: x.median(0), [np.array(2.5)], True),
    # ---- mode (ModeBackward0; the index of a tie is the last occurrence)
    ("mode", lambda L, x: x.mode(), [TIES], "parity"),
    ("mode_dim0_keepdim", lambda L, x: x.mode(0, keepdim=True), [TIES], "parity"),
    ("mode_distinct", lambda L, x: L.mode(x, -1), [A234], True),
    # ---- sorting
    ("msort", lambda L, x: x.msort(), [A34], True),
    ("msort_fn_3d", lambda L, x: L.msort(x), [A234], True),
    ("msort_ties", lambda L, x: x.msort(), [TIES.T.copy()], "parity"),
    ("sort", lambda L, x: x.sort(), [A34], True),
    ("sort_desc_dim0", lambda L, x: x.sort(0, descending=True), [TIES], "parity"),
    ("topk", lambda L, x: x.topk(2), [A34], True),
    ("topk_smallest_dim0", lambda L, x: x.topk(2, 0, largest=False), [A34], True),
    ("kthvalue", lambda L, x: x.kthvalue(2), [A34], True),
    ("kthvalue_keepdim", lambda L, x: x.kthvalue(2, 0, keepdim=True), [A34], True),
    # ---- var_mean / std_mean: gradients from both outputs
    ("var_mean", lambda L, x: L.var_mean(x), [A34], True),
    ("var_mean_dim", lambda L, x: L.var_mean(x, 1), [A34], True),
    ("var_mean_dims_keepdim", lambda L, x: L.var_mean(x, (0, 2), keepdim=True), [A234], True),
    ("var_mean_correction0", lambda L, x: L.var_mean(x, -1, correction=0), [A234], True),
    ("var_mean_unbiased_false", lambda L, x: L.var_mean(x, 0, unbiased=False), [A34], True),
    ("var_mean_only_var", lambda L, x: L.var_mean(x, 1)[0], [A34], True),
    ("var_mean_only_mean", lambda L, x: L.var_mean(x, 1)[1], [A34], True),
    ("var_mean_legacy_unbiased", lambda L, x: L.var_mean(x, False), [A34], True),
    ("var_legacy_unbiased", lambda L, x: x.var(False), [A34], True),
    ("std_legacy_unbiased", lambda L, x: x.std(True), [A34], True),
    ("std_mean", lambda L, x: L.std_mean(x), [A34], True),
    ("std_mean_dim_keepdim", lambda L, x: L.std_mean(x, 1, keepdim=True), [A234], True),
    ("std_mean_correction2", lambda L, x: L.std_mean(x, 1, correction=2), [A34], True),
    ("std_mean_only_std", lambda L, x: L.std_mean(x, 0)[0], [A34], True),
    # ---- the overloads with their own node names
    ("sum_dim", lambda L, x: x.sum(1), [A34], True),
    ("sum_dims", lambda L, x: x.sum((0, -1), keepdim=True), [A234], True),
    ("mean_dim", lambda L, x: x.mean(-1), [A34], True),
    ("max_dim", lambda L, x: x.max(1), [A34], True),
    ("min_dim_keepdim", lambda L, x: x.min(0, keepdim=True), [A34], True),
    ("max_all_ties", lambda L, x: x.max(), [TIES], "parity"),
    ("max_all_nan", lambda L, x: x.max(), [WITH_NAN], "parity"),
    ("min_all_ties", lambda L, x: x.min(), [TIES], "parity"),
    ("max_binary", lambda L, x, y: L.max(x, y), [A34, distinct(4, seed=5)], True),
    ("min_binary_kw", lambda L, x, y: x.min(other=y), [A34, distinct(3, 4, seed=6)], True),
    ("max_binary_ties", lambda L, x, y: L.max(x, y), [TIES, TIES[:, ::-1].copy()], "parity"),
    ("matmul_dot", lambda L, x, y: x.matmul(y), [V4, distinct(4, seed=7)], True),
    ("matmul_mv", lambda L, x, y: x.matmul(y), [A34, V4], True),
    ("matmul_vm", lambda L, x, y: y.matmul(x), [A34, distinct(3, seed=8)], True),
    ("matmul_batched", lambda L, x, y: x.matmul(y), [A234, B45], True),
    ("matmul_batched_vec", lambda L, x, y: x.matmul(y), [A234, V4], True),
    # ---- broadcast_tensors: each expanded output is an ExpandBackward0
    ("broadcast_tensors", lambda L, x, y: L.broadcast_tensors(x, y), [distinct(3, 1), V4], True),
    ("broadcast_tensors_same_shape", lambda L, x, y: L.broadcast_tensors(x, y), [A34, V4], True),
    ("broadcast_tensors_three", lambda L, x, y, z: L.broadcast_tensors(x, y, z),
     [distinct(2, 1, 1), distinct(3, 1, seed=2), distinct(4, seed=3)], True),
    # ---- tensordot (a ViewBackward0 over mm, as in PyTorch)
    ("tensordot_int", lambda L, a, b: L.tensordot(a, b, 1), [A34, B45], True),
    ("tensordot_2", lambda L, a, b: L.tensordot(a, b), [A234, distinct(3, 4, 2, seed=4)], True),
    ("tensordot_lists", lambda L, a, b: L.tensordot(a, b, ([0, 2], [1, 0])), [A234, distinct(4, 2, 5, seed=4)], True),
    ("tensordot_0", lambda L, a, b: L.tensordot(a, b, 0), [V4, distinct(3, seed=9)], True),
    ("tensordot_neg_dims", lambda L, a, b: L.tensordot(a, b, ([-1], [-2])), [A34, B45], True),
    ("tensordot_one_side", lambda L, a: L.tensordot(a, L.tensor(B45, dtype=L.float64), 1), [A34], True),
    # ---- einsum
    ("einsum_mm", lambda L, a, b: L.einsum("ij,jk->ik", a, b), [A34, B45], True),
    ("einsum_transpose", lambda L, a: L.einsum("ij->ji", a), [A34], True),
    ("einsum_sum_all", lambda L, a: L.einsum("ij->", a), [A34], True),
    ("einsum_sum_rows", lambda L, a: L.einsum("ij->i", a), [A34], True),
    ("einsum_implicit", lambda L, a, b: L.einsum("ij,jk", a, b), [A34, B45], True),
    ("einsum_diag", lambda L, a: L.einsum("ii->i", a), [distinct(4, 4)], True),
    ("einsum_trace", lambda L, a: L.einsum("ii", a), [distinct(4, 4)], True),
    ("einsum_mul", lambda L, a, b: L.einsum("ij,ij->ij", a, b), [A34, distinct(3, 4, seed=3)], True),
    ("einsum_inner", lambda L, a, b: L.einsum("ij,ij->", a, b), [A34, distinct(3, 4, seed=3)], True),
    ("einsum_outer", lambda L, a, b: L.einsum("i,j->ij", a, b), [V4, distinct(3, seed=3)], True),
    ("einsum_bmm", lambda L, a, b: L.einsum("bij,bjk->bik", a, b), [A234, distinct(2, 4, 5, seed=3)], True),
    ("einsum_batch_out_order", lambda L, a, b: L.einsum("bij,bjk->kbi", a, b), [A234, distinct(2, 4, 5, seed=3)], True),
    ("einsum_three", lambda L, a, b, c: L.einsum("ij,jk,kl->il", a, b, c),
     [A34, B45, distinct(5, 2, seed=4)], True),
    ("einsum_ellipsis", lambda L, a, b: L.einsum("...j,...j->...", a, b), [A234, distinct(3, 4, seed=5)], True),
    ("einsum_broadcast_1", lambda L, a, b: L.einsum("ij,ij->i", a, b), [A34, distinct(1, 4, seed=5)], True),
    ("einsum_sum_one_side", lambda L, a, b: L.einsum("ij,k->i", a, b), [A34, distinct(2, seed=5)], True),
    ("einsum_diag_pair", lambda L, a, b: L.einsum("iij,j->i", a, b), [distinct(3, 3, 4, seed=6), V4], True),
    ("einsum_sublist", lambda L, a, b: L.einsum(a, [0, 1], b, [1, 2], [0, 2]), [A34, B45], True),
    ("einsum_one_requires_grad", lambda L, a: L.einsum("ij,jk->ik", a, L.tensor(B45, dtype=L.float64)), [A34], True),
]


# einsum's result node follows its contraction plan: here PyTorch's plan ends in a view where
# ours ends in a permute or a mul (values and gradients still match)
EINSUM_NAMES_DIFFER = {"einsum_batch_out_order", "einsum_ellipsis", "einsum_sum_one_side"}


def _outputs(r):
    return list(r) if isinstance(r, tuple) else [r]


def _leaves(lib, arrays):
    return [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]


def _weights(o):
    n = int(np.prod(o.shape)) if len(o.shape) else 1
    return np.linspace(0.5, 1.5, n).reshape(tuple(o.shape))


def _run(lib, fn, arrays):
    """grad_fn names of the outputs and the inputs' gradients of a fixed weighted sum."""
    xs = _leaves(lib, arrays)
    outs = _outputs(fn(lib, *xs))
    names = [None if o.grad_fn is None else type(o.grad_fn).__name__ for o in outs]
    diff = [o for o in outs if o.requires_grad]
    loss = None
    for o in diff:
        term = (o * lib.tensor(_weights(o), dtype=o.dtype)).sum()
        loss = term if loss is None else loss + term
    grads = lib.autograd.grad(loss, xs, allow_unused=True) if loss is not None else [None] * len(xs)
    return names, [None if g is None else g.detach().numpy() for g in grads], outs


SMOOTH = [c for c in CASES if c[3] is True]
FIRST = [c for c in CASES if c[3] in (True, "first")]


@pytest.mark.parametrize("case", FIRST, ids=[c[0] for c in FIRST])
def test_gradcheck(case):
    _, fn, arrays, _ = case
    xs = _leaves(tensorlib, arrays)
    assert gradcheck(lambda *a: fn(tensorlib, *a), tuple(xs))


@pytest.mark.parametrize("case", SMOOTH, ids=[c[0] for c in SMOOTH])
def test_gradgradcheck(case):
    _, fn, arrays, _ = case
    xs = _leaves(tensorlib, arrays)
    assert gradgradcheck(lambda *a: fn(tensorlib, *a), tuple(xs))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(torch, case):
    _, fn, arrays, _ = case
    names, grads, outs = _run(tensorlib, fn, arrays)
    tnames, tgrads, touts = _run(torch, fn, arrays)
    if case[0] not in EINSUM_NAMES_DIFFER:
        assert names == tnames
    for o, t in zip(outs, touts):
        assert o.requires_grad == t.requires_grad
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12)
    for g, t in zip(grads, tgrads):
        assert (g is None) == (t is None)
        if g is not None:
            np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# hand-computed values: prod and cumprod at zeros

def test_prod_gradient_at_zeros_by_hand():
    x = tensorlib.tensor([2.0, 0.0, 3.0, 4.0], dtype=tensorlib.float64, requires_grad=True)
    x.prod().backward()
    assert x.grad.tolist() == [0.0, 24.0, 0.0, 0.0]        # one zero: the others' product
    y = tensorlib.tensor([2.0, 0.0, 3.0, 0.0], dtype=tensorlib.float64, requires_grad=True)
    y.prod().backward()
    assert y.grad.tolist() == [0.0, 0.0, 0.0, 0.0]         # two zeros: all zero
    z = tensorlib.tensor([[0.0, 5.0], [0.0, 0.0]], dtype=tensorlib.float64, requires_grad=True)
    z.prod(1).sum().backward()
    assert z.grad.tolist() == [[5.0, 0.0], [0.0, 0.0]]


@pytest.mark.filterwarnings("ignore:std\\(\\)")
@pytest.mark.parametrize("create_graph", [False, True])
def test_std_gradient_is_zero_where_std_is_zero(create_graph):
    """A slice whose elements are all equal has std 0, where sqrt's derivative is infinite:
    PyTorch's std gradient is 0 there (not grad / 0 times 0 = NaN); other slices are
    untouched, and NaN (no degrees of freedom) stays NaN."""
    x = tensorlib.tensor([[1.5, 1.5, 1.5], [1.0, 2.0, 3.0]], dtype=tensorlib.float64,
                         requires_grad=True)
    x.std(1, correction=0).sum().backward(create_graph=create_graph)
    # row 1: d/dx_i sqrt(mean((x - m)^2)) = (x_i - m) / (n std), std = sqrt(2/3)
    s = (2 / 3) ** 0.5
    np.testing.assert_allclose(x.grad.detach().numpy(),
                               [[0, 0, 0], [-1 / (3 * s), 0, 1 / (3 * s)]], rtol=1e-12)
    for fn in (lambda t: t.std(correction=0), lambda t: t.std(dim=-1, correction=0),
               lambda t: tensorlib.std_mean(t, correction=0)[0]):
        for values in ([2.0], [2.0, 2.0], 7.0):
            t = tensorlib.tensor(values, requires_grad=True)
            fn(t).backward(create_graph=create_graph)
            assert t.grad.tolist() == (np.zeros_like(values).tolist())
    t = tensorlib.tensor([2.0], requires_grad=True)
    t.std().backward()                  # correction 1 of one element: std is NaN
    assert np.isnan(t.grad.item())


@pytest.mark.filterwarnings("ignore:std\\(\\)")
def test_std_gradient_at_zero_std_matches_torch(torch):
    """First and second order, on torch's side too (NaN compared as NaN)."""
    def grads(lib):
        res = []
        for values, kw in (([[1.5, 1.5], [1.0, 4.0]], {"dim": 1, "correction": 0}),
                           ([3.0], {"dim": 0, "correction": 0}), ([[2.0, 2.0]], {}),
                           ([2.0], {})):
            x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
            (g,) = lib.autograd.grad(x.std(**kw).sum(), x, create_graph=True)
            (gg,) = lib.autograd.grad(g.sum(), x, allow_unused=True)
            res.append((g.detach().numpy(), None if gg is None else gg.numpy()))
        return res

    for (g, gg), (tg, tgg) in zip(grads(tensorlib), grads(torch)):
        np.testing.assert_allclose(g, tg, rtol=1e-12)
        assert (gg is None) == (tgg is None)
        if gg is not None:
            np.testing.assert_allclose(gg, tgg, rtol=1e-12)


def test_cumprod_gradient_at_zeros_by_hand():
    x = tensorlib.tensor([2.0, 0.0, 3.0, 4.0], dtype=tensorlib.float64, requires_grad=True)
    x.cumprod(0).sum().backward()
    # y = [x0, x0x1, x0x1x2, x0x1x2x3]; d/dx0 = 1 + x1 + x1x2 + x1x2x3 = 1; d/dx1 = x0 + x0x2 + x0x2x3 = 32
    assert x.grad.tolist() == [1.0, 32.0, 0.0, 0.0]
    y = tensorlib.tensor([2.0, 0.0, 3.0, 0.0], dtype=tensorlib.float64, requires_grad=True)
    y.cumprod(0).sum().backward()
    assert y.grad.tolist() == [1.0, 8.0, 0.0, 0.0]


def test_cumprod_second_order_at_zeros_by_hand():
    # d2/dx1dx2 of sum(cumprod([x0, x1, x2, x3])) = x0 + x0*x3 at x1 = 0
    x = tensorlib.tensor([2.0, 0.0, 3.0, 4.0], dtype=tensorlib.float64, requires_grad=True)
    (g,) = tensorlib.autograd.grad(x.cumprod(0).sum(), x, create_graph=True)
    (h,) = tensorlib.autograd.grad(g[1], x)
    assert h.tolist() == [1.0 + 3.0 + 12.0, 0.0, 2.0 + 8.0, 6.0]


# (input, dtype, weights, PyTorch 2.13's gradient): where a product overflows, the
# gradient at the first zero is inf, or NaN once the overflowed running product meets the
# masked-out weights past a second zero, exactly as PyTorch groups it
CUMPROD_OVERFLOW = [
    ([1e-30, 0.0, 1e30, 1e10, 0.0, 2.0], "float32", [1, 2, 3, 4, 5, 6], [1.0, NAN, 0, 0, 0, 0]),
    ([1e-30, 0.0, 1e30, 1e10, 3.0, 2.0], "float32", [1, 2, 3, 4, 5, 6],
     [1.0, float("inf"), 0, 0, 0, 0]),
    ([1e30, 1e30, 0.0, 5.0, 0.0], "float32", [1, 2, 3, 4, 5], [float("inf")] * 3 + [0, 0]),
    ([2.0, 3.0, 0.0, 4.0, 5.0, 0.0, 6.0], "float32", [1, 2, 3, 4, 5, 6, 7],
     [7.0, 4.0, 714.0, 0, 0, 0, 0]),
    ([0.5, 0.0, 3.0, 1e3, 70.0, 0.0], "float16", [1] * 6, [1.0, NAN, 0, 0, 0, 0]),
]


@pytest.mark.parametrize("values, dtype, weights, expected", CUMPROD_OVERFLOW)
def test_cumprod_gradient_at_zeros_overflows_as_pytorch(values, dtype, weights, expected):
    dt = getattr(tensorlib, dtype)
    x = tensorlib.tensor(values, dtype=dt, requires_grad=True)
    (g,) = tensorlib.autograd.grad(x.cumprod(0), x, tensorlib.tensor(weights, dtype=dt))
    np.testing.assert_array_equal(g.float().numpy(), np.array(expected, dtype=np.float32))


def test_prod_dtype_argument_gives_input_dtype_gradient():
    x = tensorlib.tensor([1.5, -2.0, 3.0], dtype=tensorlib.float64, requires_grad=True)
    r = x.prod(dtype=tensorlib.float32)
    assert r.dtype is tensorlib.float32 and type(r.grad_fn).__name__ == "ProdBackward0"
    r.backward()
    assert x.grad.dtype is tensorlib.float64
    np.testing.assert_allclose(x.grad.numpy(), [-6.0, 4.5, -3.0])


# ---------------------------------------------------------------------------------------------
# median / mode / msort details

def test_median_whole_tensor_shares_gradient_among_ties(torch):
    for lib in (tensorlib, torch):
        x = lib.tensor([2.0, 1.0, 2.0, 3.0, 2.0], dtype=lib.float64, requires_grad=True)
        x.median().backward()
        np.testing.assert_allclose(x.grad.numpy(), [1 / 3, 0, 1 / 3, 0, 1 / 3])


def test_median_with_dim_sends_gradient_to_returned_index():
    x = tensorlib.tensor([[2.0, 1.0, 2.0, 3.0, 2.0]], dtype=tensorlib.float64, requires_grad=True)
    values, indices = x.median(1)
    values.sum().backward()
    expect = [0.0] * 5
    expect[indices.item()] = 1.0
    assert x.grad.tolist() == [expect]
    assert indices.requires_grad is False and indices.grad_fn is None


def test_median_of_empty_tensor_has_empty_gradient():
    x = tensorlib.zeros(0, dtype=tensorlib.float64, requires_grad=True)
    r = x.median()
    assert type(r.grad_fn).__name__ == "MedianBackward0"
    r.backward()
    assert x.grad.shape == (0,)


def test_median_out_with_grad_raises():
    x = tensorlib.ones(3, 2, dtype=tensorlib.float64, requires_grad=True)
    out = (tensorlib.empty(3, dtype=tensorlib.float64), tensorlib.empty(3, dtype=tensorlib.int64))
    with pytest.raises(RuntimeError, match="out=.*don't support automatic differentiation"):
        tensorlib.median(x, 1, out=out)


def test_integer_inputs_record_nothing():
    x = tensorlib.tensor([[3, 1, 2]])
    for r in (x.prod(), x.cumprod(1), x.median(), x.mode(1)[0], x.msort(), tensorlib.unique(x)):
        assert r.grad_fn is None and not r.requires_grad


def test_no_grad_records_nothing():
    x = tensorlib.tensor(A34, dtype=tensorlib.float64, requires_grad=True)
    with tensorlib.no_grad():
        outs = [x.prod(), x.prod(1), x.cumprod(0), x.median(), x.nanmedian(0)[0], x.mode(0)[0],
                x.msort(), tensorlib.var_mean(x)[0],
                tensorlib.tensordot(x, x, 2), tensorlib.einsum("ij,ij->i", x, x)]
        view = tensorlib.broadcast_tensors(x, x[0])[1]
    assert all(o.grad_fn is None and not o.requires_grad for o in outs)
    # a view made under no_grad of a tensor that requires grad reads requires_grad=True, with
    # no history (PyTorch's rule for views)
    assert view.grad_fn is None and view.requires_grad and view.is_leaf


# ---------------------------------------------------------------------------------------------
# broadcast_tensors

def test_broadcast_tensors_returns_inputs_of_the_common_shape_themselves(torch):
    for lib in (tensorlib, torch):
        x = lib.zeros(3, 4, dtype=lib.float64, requires_grad=True)
        y = lib.zeros(4, dtype=lib.float64, requires_grad=True)
        a, b = lib.broadcast_tensors(x, y)
        assert a is x and b is not y
        assert b.shape == (3, 4) and b.stride() == (0, 1)
        b.sum().backward()
        assert y.grad.tolist() == [3.0] * 4


# ---------------------------------------------------------------------------------------------
# unique / unique_consecutive: a grad_fn, and PyTorch's error on backward

UNIQUE_CASES = [
    ("unique", lambda L, x: L.unique(x), "_unique2", "Unique2Backward0"),
    ("unique_unsorted", lambda L, x: L.unique(x, sorted=False), "_unique2", "Unique2Backward0"),
    ("unique_inverse", lambda L, x: L.unique(x, return_inverse=True, return_counts=True)[0], "_unique2", "Unique2Backward0"),
    ("unique_method", lambda L, x: x.unique(), "_unique2", "Unique2Backward0"),
    ("unique_dim", lambda L, x: L.unique(x, dim=0), "unique_dim", "UniqueDimBackward0"),
    ("unique_consecutive", lambda L, x: L.unique_consecutive(x), "unique_consecutive", "UniqueConsecutiveBackward0"),
    ("unique_consecutive_dim", lambda L, x: L.unique_consecutive(x, return_counts=True, dim=1)[0],
     "unique_consecutive", "UniqueConsecutiveBackward0"),
]


@pytest.mark.parametrize("case", UNIQUE_CASES, ids=[c[0] for c in UNIQUE_CASES])
def test_unique_backward_is_not_implemented(case):
    _, fn, op, node = case
    x = tensorlib.tensor([[1.0, 1.0, 2.0], [1.0, 1.0, 2.0]], dtype=tensorlib.float64, requires_grad=True)
    r = fn(tensorlib, x)
    assert r.requires_grad and type(r.grad_fn).__name__ == node
    with pytest.raises(NotImplementedError, match=f"the derivative for '{op}' is not implemented"):
        r.sum().backward()


@pytest.mark.parametrize("case", UNIQUE_CASES, ids=[c[0] for c in UNIQUE_CASES])
def test_unique_matches_torch(torch, case):
    _, fn, op, node = case
    res = []
    for lib in (tensorlib, torch):
        x = lib.tensor([[1.0, 1.0, 2.0], [1.0, 1.0, 2.0]], dtype=lib.float64, requires_grad=True)
        r = fn(lib, x)
        with pytest.raises(NotImplementedError) as e:
            r.sum().backward()
        res.append((type(r.grad_fn).__name__, r.detach().numpy().tolist(), str(e.value)))
    assert res[0] == res[1]


def test_unique_inverse_and_counts_do_not_require_grad():
    x = tensorlib.tensor([3.0, 1.0, 3.0], requires_grad=True)
    values, inverse, counts = tensorlib.unique(x, return_inverse=True, return_counts=True)
    assert values.requires_grad
    assert not inverse.requires_grad and not counts.requires_grad


# ---------------------------------------------------------------------------------------------
# max(input, other) and tensordot/einsum errors

def test_max_binary_gradients_by_hand():
    x = tensorlib.tensor([1.0, 5.0, 2.0], dtype=tensorlib.float64, requires_grad=True)
    y = tensorlib.tensor([3.0, 4.0, 2.0], dtype=tensorlib.float64, requires_grad=True)
    r = tensorlib.max(x, y)
    assert type(r.grad_fn).__name__ == "MaximumBackward0"
    r.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.5] and y.grad.tolist() == [1.0, 0.0, 0.5]


def test_tensordot_and_einsum_errors_with_grad():
    a = tensorlib.ones(3, 4, dtype=tensorlib.float64, requires_grad=True)
    b = tensorlib.ones(5, 2, dtype=tensorlib.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="contracted dimensions need to match"):
        tensorlib.tensordot(a, b, 1)
    with pytest.raises(RuntimeError, match="expected scalar type"):
        tensorlib.einsum("ij,jk->ik", a, tensorlib.ones(4, 2, dtype=tensorlib.float32))
    with pytest.raises(RuntimeError, match="does not broadcast"):
        tensorlib.einsum("ij,ij->i", a, b)


def test_einsum_contraction_with_grad_matches_no_grad_values():
    a = tensorlib.tensor(A234, dtype=tensorlib.float64, requires_grad=True)
    b = tensorlib.tensor(distinct(2, 4, 5, seed=3), dtype=tensorlib.float64)
    for eq in ("bij,bjk->bik", "bij,bjk->kbi", "bij,bjk->", "bij,bjk->j", "bij,bkj->bk"):
        bb = b if eq != "bij,bkj->bk" else b.transpose(1, 2)
        r = tensorlib.einsum(eq, a, bb)
        with tensorlib.no_grad():
            r0 = tensorlib.einsum(eq, a, bb)
        assert r.requires_grad and r0.shape == r.shape
        np.testing.assert_allclose(r.detach().numpy(), r0.numpy(), rtol=1e-12)
        np.testing.assert_allclose(r0.numpy(), np.einsum(eq, A234, bb.numpy()), rtol=1e-12)


def test_prod_of_one_element_with_zero_passes_the_gradient_itself(torch):
    """prod over a dim of size 1 (or of a one-element tensor) holding a zero gives the
    incoming gradient itself, as PyTorch's: under create_graph it has no history of x."""
    for lib in (tensorlib, torch):
        x = lib.tensor([[0.0, 2.0, 0.0]], dtype=lib.bfloat16, requires_grad=True)
        (g,) = lib.autograd.grad(x.prod(-2), x, lib.ones(3, dtype=lib.bfloat16),
                                 create_graph=True)
        assert g.tolist() == [[1.0, 1.0, 1.0]] and not g.requires_grad
        y = lib.tensor([[0.0]], dtype=lib.float64, requires_grad=True)
        (h,) = lib.autograd.grad(y.prod(), y, create_graph=True)
        assert h.tolist() == [[1.0]] and not h.requires_grad
