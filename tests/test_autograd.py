"""Autograd: gradients against finite differences (gradcheck, float64) and torch, the engine's
memory semantics (with the garbage collector off), errors, hooks, grad modes, Function."""

import numpy as np
import pytest

import tensorlib
from tensorlib.autograd import gradcheck, gradgradcheck
from tensorlib.ops.decl import elementwise as EW_DECL

f64 = tensorlib.float64


def leaf(*shape, low=-1.0, high=1.0, seed=0):
    rng = np.random.default_rng(seed)
    return tensorlib.tensor(rng.uniform(low, high, size=shape), dtype=f64, requires_grad=True)


# --------------------------------------------------------------------------- gradcheck per op
UNARY = {
    "exp": lambda x: x.exp(), "log": lambda x: (x.abs() + 0.5).log(),
    "log2": lambda x: (x.abs() + 0.5).log2(), "log10": lambda x: (x.abs() + 0.5).log10(),
    "log1p": lambda x: x.abs().log1p(), "expm1": lambda x: x.expm1(), "exp2": lambda x: x.exp2(),
    "sqrt": lambda x: (x.abs() + 0.1).sqrt(), "rsqrt": lambda x: (x.abs() + 0.1).rsqrt(),
    "sin": lambda x: x.sin(), "cos": lambda x: x.cos(), "tan": lambda x: x.tan(),
    "asin": lambda x: (x * 0.9).asin(), "acos": lambda x: (x * 0.9).acos(), "atan": lambda x: x.atan(),
    "sinh": lambda x: x.sinh(), "cosh": lambda x: x.cosh(), "tanh": lambda x: x.tanh(),
    "asinh": lambda x: x.asinh(), "acosh": lambda x: (x.abs() + 1.5).acosh(),
    "atanh": lambda x: (x * 0.9).atanh(),
    "logit": lambda x: (x * 0.4 + 0.5).logit(), "logit_eps": lambda x: x.logit(eps=0.2),
    "sigmoid": lambda x: x.sigmoid(), "erf": lambda x: x.erf(), "neg": lambda x: -x,
    "erfc": lambda x: x.erfc(),
    "abs": lambda x: (x + 0.05).abs(), "reciprocal": lambda x: (x.abs() + 0.5).reciprocal(),
    "square": lambda x: x.square(), "silu": lambda x: x.silu(),
    "gelu": lambda x: tensorlib.gelu(x), "gelu_tanh": lambda x: tensorlib.gelu(x, approximate="tanh"),
    "elu": lambda x: tensorlib.elu(x + 0.05), "softplus": lambda x: tensorlib.softplus(x),
    "leaky_relu": lambda x: tensorlib.leaky_relu(x + 0.05, 0.1),
    "relu": lambda x: (x + 0.05).relu(), "pow_scalar": lambda x: (x.abs() + 0.5) ** 2.5,
    "rpow": lambda x: 2.0 ** x, "clamp": lambda x: x.clamp(-0.5, 0.5),
    "frac": lambda x: (x + 2.0).frac(), "hardtanh": lambda x: tensorlib.hardtanh(x * 2),
    # zero gradients, away from the jumps
    "sign": lambda x: (x + 2.0).sign(), "floor": lambda x: (x * 0.3 + 0.5).floor(),
    "ceil": lambda x: (x * 0.3 + 0.5).ceil(), "trunc": lambda x: (x * 0.3 + 0.5).trunc(),
}
# the differentiable unary ops declared in tensorlib/ops/decl/elementwise.py: each must have a
# case above (a missing one fails with a KeyError rather than going unchecked)
DECLARED_UNARY = [d["name"] for d in EW_DECL.OPS if d["name"] in EW_DECL.UNARY_OPS and d["backward"]]


@pytest.mark.parametrize("name", sorted(set(UNARY) | set(DECLARED_UNARY)))
def test_gradcheck_unary(name):
    x = leaf(3, 4, seed=1)
    if name == "clamp":    # stay away from the kinks
        x = tensorlib.tensor([[-0.9, -0.2, 0.3, 0.8]], dtype=f64, requires_grad=True)
    assert gradcheck(UNARY[name], (x,))


BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b.abs() + 0.5), "pow": lambda a, b: (a.abs() + 0.5) ** b,
    "add_alpha": lambda a, b: tensorlib.add(a, b, alpha=2.5),
    "sub_alpha": lambda a, b: tensorlib.sub(a, b, alpha=-1.5),
    "maximum": lambda a, b: tensorlib.maximum(a, b), "minimum": lambda a, b: tensorlib.minimum(a, b),
    "atan2": lambda a, b: tensorlib.atan2(a, b + 2), "lerp": lambda a, b: a.lerp(b, 0.3),
    "where": lambda a, b: tensorlib.where(a > 0, a, b), "remainder": lambda a, b: a.remainder(b.abs() + 2),
}


DECLARED_BINARY = [d["name"] for d in EW_DECL.OPS if d["name"] in EW_DECL.BINARY_OPS
                   and d["backward"] and not d["record_inplace_only"]]


@pytest.mark.parametrize("name", sorted(set(BINARY) | set(DECLARED_BINARY)))
def test_gradcheck_binary_broadcasting(name):
    a = leaf(3, 4, seed=2)
    b = leaf(4, seed=3)           # broadcast: the gradient must be summed back to (4,)
    assert gradcheck(BINARY[name], (a, b))


VIEWS = {
    "view": lambda x: x.view(4, 3), "reshape_t": lambda x: x.t().reshape(12),
    "transpose": lambda x: x.transpose(0, 1) * 1, "permute": lambda x: x.unsqueeze(0).permute(2, 0, 1),
    "expand": lambda x: x[:1].expand(5, 4), "narrow": lambda x: x.narrow(1, 1, 2),
    "select": lambda x: x.select(1, 2), "slice_step": lambda x: x[::2, 1::2],
    "index_int": lambda x: x[1], "none_ellipsis": lambda x: x[None, ..., 1],
    "unsqueeze_squeeze": lambda x: x.unsqueeze(1).squeeze(1), "flatten": lambda x: x.flatten(),
    "unflatten": lambda x: x.unflatten(1, (2, 2)), "as_strided": lambda x: x.as_strided((2, 2), (1, 4), 1),
    "unfold": lambda x: x.unfold(1, 2, 1), "diagonal": lambda x: x.diagonal(1),
    "movedim": lambda x: x.movedim(0, 1), "clone": lambda x: x.clone(), "flip": lambda x: x.flip(0),
    "roll": lambda x: x.roll(1, 1), "tril": lambda x: x.tril(), "triu": lambda x: x.triu(1),
    "repeat": lambda x: x.repeat(2, 1, 1), "tile": lambda x: x.tile((2,)),
    "cat": lambda x: tensorlib.cat([x, x * 2], 1), "stack": lambda x: tensorlib.stack([x, x.exp()], 2),
    "split": lambda x: x.split(3, 1)[0] * x.split(3, 1)[1].sum() if hasattr(x, "sum") else x.split(3, 1)[0],
    "chunk": lambda x: x.chunk(2, 1)[1], "unbind": lambda x: x.unbind(0)[2],
    "contiguous": lambda x: x.t().contiguous(), "masked_fill": lambda x: x.masked_fill(x > 0.2, 0.0),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_gradcheck_views_and_copies(name):
    assert gradcheck(VIEWS[name], (leaf(3, 4, seed=4),))


def test_gradgradcheck_second_order():
    x = leaf(2, 3, seed=5)
    assert gradgradcheck(lambda t: (t * t * t).sin(), (x,))
    assert gradgradcheck(lambda t: t.tanh() * t.exp(), (x,))


def test_gradient_penalty_create_graph():
    x = tensorlib.tensor([1.5, -0.5], dtype=f64, requires_grad=True)
    y = (x ** 3)
    (g,) = tensorlib.autograd.grad(y, x, tensorlib.ones(2, dtype=f64), create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * np.array([1.5, -0.5]) ** 2)
    g.backward(tensorlib.ones(2, dtype=f64))          # d/dx of 3x^2 = 6x
    np.testing.assert_allclose(x.grad.numpy(), 6 * np.array([1.5, -0.5]))


# --------------------------------------------------------------------------- parity with torch
def test_matches_torch_on_a_composite(torch):
    rng = np.random.default_rng(7)
    a0, b0 = rng.standard_normal((3, 4)), rng.standard_normal(4)
    a, b = (tensorlib.tensor(v, requires_grad=True) for v in (a0, b0))
    ta, tb = (torch.tensor(v, requires_grad=True) for v in (a0, b0))
    out = ((a * b).tanh() / (b.abs() + 1) + a.sigmoid()[:, 1:3].repeat(1, 2)).exp()
    tout = ((ta * tb).tanh() / (tb.abs() + 1) + ta.sigmoid()[:, 1:3].repeat(1, 2)).exp()
    g = rng.standard_normal((3, 4))
    out.backward(tensorlib.tensor(g))
    tout.backward(torch.tensor(g))
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-10)


def test_inplace_into_views_of_non_leaf_matches_torch(torch):
    def run(lib):
        a = lib.ones(3, 4, dtype=lib.float64, requires_grad=True)
        b = a * 1
        b[:, 1] = lib.tensor([5.0, 6.0, 7.0], dtype=lib.float64)
        b[:, 2:4].mul_(2)
        b[0] += 3
        (b * b).backward(lib.ones(3, 4, dtype=lib.float64))
        return a.grad.numpy()
    np.testing.assert_array_equal(run(tensorlib), run(torch))


# --------------------------------------------------------------------------- non-differentiable points
def test_relu_at_zero_has_zero_gradient():
    x = tensorlib.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    x.relu().backward(tensorlib.ones(3))
    assert x.grad.tolist() == [0.0, 0.0, 1.0]


def test_maximum_ties_share_the_gradient():
    a = tensorlib.tensor([1.0, 2.0], requires_grad=True)
    b = tensorlib.tensor([1.0, 1.0], requires_grad=True)
    tensorlib.maximum(a, b).backward(tensorlib.ones(2))
    assert a.grad.tolist() == [0.5, 1.0] and b.grad.tolist() == [0.5, 0.0]


# --------------------------------------------------------------------------- classic snippets
def test_while_loop_on_values():
    x = tensorlib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x
    while float((y * y).detach().numpy().sum()) < 100:
        y = (y ** 2).relu()
    assert y.grad_fn is not None and y.grad_fn.name() == "ReluBackward0"


def test_register_hook_inspects_and_replaces():
    seen = []
    x = tensorlib.ones(3, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: seen.append(g.tolist()))
    h = x.register_hook(lambda g: g * 10)
    y.backward(tensorlib.ones(3))
    assert seen == [[1.0, 1.0, 1.0]] and x.grad.tolist() == [20.0] * 3
    h.remove()
    x.grad = None
    (x * 2).backward(tensorlib.ones(3))
    assert x.grad.tolist() == [2.0] * 3


def test_hook_changing_shape_raises():
    x = tensorlib.ones(3, requires_grad=True)
    x.register_hook(lambda g: tensorlib.ones(2))
    with pytest.raises(RuntimeError, match="changed the size"):
        (x * 2).backward(tensorlib.ones(3))


def test_retain_grad_and_accumulation():
    x = tensorlib.ones(2, requires_grad=True)
    y = x * 3
    y.retain_grad()
    y.backward(tensorlib.ones(2), retain_graph=True)
    y.backward(tensorlib.ones(2))
    assert y.grad.tolist() == [2.0, 2.0] and x.grad.tolist() == [6.0, 6.0]


def test_retained_grad_keeps_its_history_under_create_graph():
    """As PyTorch: the retained .grad is a contiguous clone, recorded when backward builds a
    graph, so a second derivative flows through it (d/dy of sum(y*y) = 2y; again: 2)."""
    x = tensorlib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x.t() * 1
    y.retain_grad()
    (y * y).sum().backward(create_graph=True)
    assert y.grad.requires_grad and type(y.grad.grad_fn).__name__ == "CloneBackward0"
    assert y.grad.is_contiguous() and y.grad.tolist() == [[2.0, 6.0], [4.0, 8.0]]
    (gx,) = tensorlib.autograd.grad(y.grad.sum(), x)
    assert gx.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    z = x * 1
    z.retain_grad()
    (z * z).sum().backward()                # no graph: a plain copy
    assert not z.grad.requires_grad and z.grad.grad_fn is None


# --------------------------------------------------------------------------- errors
def test_backward_twice_raises_and_retain_graph_allows_it():
    x = tensorlib.ones(2, requires_grad=True)
    y = x.exp() * 2
    y.backward(tensorlib.ones(2), retain_graph=True)
    y.backward(tensorlib.ones(2))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward(tensorlib.ones(2))


def test_errors_like_torch():
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        tensorlib.ones(2).backward(tensorlib.ones(2))
    x = tensorlib.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(tensorlib.ones(3))
    with pytest.raises(RuntimeError, match="floating point"):
        tensorlib.ones(2, dtype=tensorlib.int64, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        x[0].mul_(2)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        x.numpy()
    y = tensorlib.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        tensorlib.autograd.grad(x * 2, [x, y], tensorlib.ones(2))
    assert tensorlib.autograd.grad(x * 2, [x, y], tensorlib.ones(2), allow_unused=True)[1] is None


def test_modified_saved_tensor_raises_version_error():
    x = tensorlib.ones(3, requires_grad=True)
    y = x.tanh()
    z = y.exp()          # saves its output
    z.mul_(2)            # bumps z's version: ExpBackward0 saved z
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*is at version 1; expected version 0"):
        z.backward(tensorlib.ones(3))


def test_index_tensors_written_after_indexing_raise_at_backward():
    """x[mask] and x[idx] save the index tensors: a later in-place write would send the
    gradient to other elements, so backward raises as PyTorch's does."""
    x = tensorlib.ones(2, 3, requires_grad=True)
    mask = tensorlib.tensor([True, False, True])
    y = x[:, mask]
    mask.fill_(True)
    with pytest.raises(RuntimeError, match=r"BoolTensor \[3\]\] is at version 1; expected "
                                           r"version 0"):
        y.sum().backward()
    idx = tensorlib.tensor([0, 0, 2])
    y = x[1, idx]
    y.sum().backward(retain_graph=True)       # unchanged: runs, repeated indices accumulate
    assert x.grad.tolist() == [[0.0, 0.0, 0.0], [2.0, 0.0, 1.0]]
    idx.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_op_reading_its_own_output_raises_at_backward():
    """x.div_(x), x.mul_(x), x.pow_(x) and x[:1].mul_(x[1:]) read an input the op itself then
    overwrites: PyTorch saves it at the version before the write, so backward raises (the
    gradient would otherwise be computed from the written values: x / x gave -0.63, not 0).
    add_ saves nothing and runs."""
    writes = {"div_": lambda t: t.div_(t), "mul_": lambda t: t.mul_(t),
              "pow_": lambda t: t.pow_(t), "view": lambda t: t[:1].mul_(t[1:])}
    for name, write in writes.items():
        x = tensorlib.tensor([0.7, 0.2], dtype=tensorlib.float64, requires_grad=True)
        t = x.expm1() + 0.3
        write(t)
        with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
            tensorlib.autograd.grad(t.sum(), x)
    x = tensorlib.tensor([0.7, 0.2], dtype=tensorlib.float64, requires_grad=True)
    t = x.expm1() + 0.3
    t.add_(t)
    (g,) = tensorlib.autograd.grad(t.sum(), x)
    np.testing.assert_allclose(g.numpy(), 2 * np.exp([0.7, 0.2]), rtol=1e-15)


def test_pow_of_one_half_is_sqrt(torch):
    """x ** 0.5 is sqrt(x) and x ** -0.5 is 1 / sqrt(x) in float32, float64 and bfloat16, as
    in PyTorch: -inf gives NaN and -0.0 keeps its sign (C's pow gives inf and +0.0)."""
    vals = [float("-inf"), -3.0, -0.0, 0.0, 2.5, float("inf"), float("nan")]
    for dt in ("float32", "float64", "bfloat16", "float16"):
        for e in (0.5, -0.5):
            got = tensorlib.tensor(vals, dtype=getattr(tensorlib, dt)).pow(e).double().numpy()
            want = torch.tensor(vals, dtype=getattr(torch, dt)).pow(e).double().numpy()
            np.testing.assert_array_equal(got, want)
            ok = ~np.isnan(want)                  # (a NaN's sign bit is not compared)
            np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]))


def test_zero_dim_mask_index_is_read_at_once():
    """A 0-d bool (or uint8) index is a condition PyTorch reads when indexing (an unsqueeze
    and a fresh index), so writing into it before backward is no error and changes nothing."""
    for dtype, cond, expected in ((tensorlib.bool, True, [[1.0, 1.0], [1.0, 1.0]]),
                                  (tensorlib.bool, False, [[0.0, 0.0], [0.0, 0.0]]),
                                  (tensorlib.uint8, 1, [[1.0, 1.0], [1.0, 1.0]])):
        x = tensorlib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        m = tensorlib.tensor(cond, dtype=dtype)
        y = x[m]
        assert tuple(y.shape) == ((1, 2, 2) if cond else (0, 2, 2))
        m.zero_()
        y.sum().backward()
        assert x.grad.tolist() == expected


def test_inplace_on_multi_output_view_and_no_grad_view():
    x = tensorlib.ones(4, requires_grad=True) * 1
    a, b = x.split(2)
    with pytest.raises(RuntimeError, match="returns multiple views"):
        a.mul_(2)
    base = tensorlib.ones(4, requires_grad=True) * 1
    with tensorlib.no_grad():
        v = base[:2]
    with pytest.raises(RuntimeError, match="created in no_grad mode"):
        v.mul_(2)


@pytest.mark.parametrize("index", ["long", "float", "int"])
def test_multi_output_view_check_comes_before_the_index_dtype(index):
    """x[idx] = v into a view split returned, v requiring grad: PyTorch's autograd check
    (the view may not be written in place) raises before the index kernel rejects a float
    index (found by the fuzzer)."""
    view = tensorlib.arange(3.0).split(1)[2]
    idx = {"long": tensorlib.tensor([0]), "float": tensorlib.tensor([0.0]), "int": 0}[index]
    with pytest.raises(RuntimeError, match="returns multiple views"):
        view[idx] = tensorlib.ones(1, requires_grad=True)
    with pytest.raises(IndexError, match="must be long, int, byte or bool"):
        view[tensorlib.tensor([0.0])] = tensorlib.ones(1)      # nothing to record


# --------------------------------------------------------------------------- grad modes
def test_grad_modes_and_decorators():
    x = tensorlib.ones(2, requires_grad=True)
    with tensorlib.no_grad():
        assert not (x * 2).requires_grad
        with tensorlib.enable_grad():
            assert (x * 2).requires_grad
    with tensorlib.set_grad_enabled(False):
        assert not tensorlib.is_grad_enabled()
    assert tensorlib.is_grad_enabled()

    @tensorlib.no_grad()
    def gen():
        yield (x * 2).requires_grad
        yield (x * 3).requires_grad
    assert list(gen()) == [False, False]
    with tensorlib.inference_mode():
        assert not (x * 2).requires_grad
    v = tensorlib.autograd.Variable(tensorlib.ones(2), requires_grad=True)
    assert v.requires_grad
    with pytest.warns(UserWarning, match="volatile"):
        tensorlib.autograd.Variable(tensorlib.ones(2), volatile=True)


def test_grad_mode_is_thread_local():
    import threading
    seen = []
    with tensorlib.no_grad():
        t = threading.Thread(target=lambda: seen.append(tensorlib.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]


# --------------------------------------------------------------------------- Function
def test_custom_function():
    class Cube(tensorlib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x * x * x * k

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            assert ctx.needs_input_grad == (True, False)
            return grad * 3 * x * x * ctx.k, None

    x = tensorlib.tensor([2.0], dtype=f64, requires_grad=True)
    y = Cube.apply(x, 2.0)
    assert type(y.grad_fn).__name__ == "CubeBackward"
    y.backward(tensorlib.ones(1, dtype=f64))
    assert x.grad.tolist() == [24.0]
    assert gradcheck(lambda t: Cube.apply(t, 1.5), (leaf(3, seed=9),))


# --------------------------------------------------------------------------- memory semantics
def mem():
    return tensorlib.memory.memory_allocated()


def test_saved_activations_freed_by_backward(no_gc):
    x = tensorlib.rand(64, 256, requires_grad=True)
    base = mem()
    h = x
    for _ in range(4):
        h = (h * 1.5).tanh()        # tanh saves its output: one activation per layer
    out = h
    held = mem() - base
    assert held >= 4 * 64 * 256 * 4
    out.backward(tensorlib.ones(64, 256))
    # the graph's saved activations are gone while `out` itself is still referenced
    assert mem() - base == 64 * 256 * 4 + x.grad.nbytes
    assert out.grad_fn is not None


def test_retain_graph_keeps_activations_until_next_backward(no_gc):
    x = tensorlib.rand(64, 256, requires_grad=True)
    base = mem()
    out = (x * 2).tanh().exp()
    before = mem()
    out.backward(tensorlib.ones(64, 256), retain_graph=True)
    grad_bytes = x.grad.nbytes
    assert mem() - base >= (before - base)
    out.backward(tensorlib.ones(64, 256))
    assert mem() - base == out.nbytes + grad_bytes


def test_memory_falls_during_backward(no_gc):
    unit = 32 * 1024 * 4                    # one activation
    x = tensorlib.rand(32, 1024, requires_grad=True)
    h = x
    for _ in range(12):
        h = h.tanh()                        # each node saves its output
    h0 = mem()
    seen = {}
    nodes = [h.grad_fn]
    for _ in range(11):
        nodes.append(nodes[-1].next_functions[0][0])
    for i in (3, 9):                        # hooks seen from inside the backward
        nodes[i].register_prehook(lambda grads, i=i: seen.__setitem__(i, mem()))
    del nodes
    h.backward(tensorlib.ones(32, 1024))
    # between the two probes six nodes ran and each gave its saved output back
    assert seen[9] == seen[3] - 6 * unit
    assert seen[9] < h0


def test_no_grad_loop_keeps_memory_flat(no_gc):
    w = tensorlib.rand(128, 128, requires_grad=True)
    x = tensorlib.rand(128, 128)
    with tensorlib.no_grad():
        y = (x * w).tanh()
        m0 = mem()
        for _ in range(20):
            y = (y * w).tanh()
        assert mem() == m0


def test_list_of_outputs_grows_by_activations_only_with_grad(no_gc):
    w = tensorlib.rand(64, 64, requires_grad=True)
    x = tensorlib.rand(64, 64)
    outs = []
    m0 = mem()
    for _ in range(5):
        outs.append((x * w).tanh().exp())
    grew_grad = mem() - m0
    outs.clear()
    m1 = mem()
    with tensorlib.no_grad():
        for _ in range(5):
            outs.append((x * w).tanh().exp())
    grew_nograd = mem() - m1
    assert grew_nograd == 5 * 64 * 64 * 4
    assert grew_grad >= 2 * grew_nograd


def test_total_loss_item_keeps_no_graph(no_gc):
    w = tensorlib.rand(64, 64, requires_grad=True)
    x = tensorlib.rand(64, 64)
    total = 0.0
    m0 = mem()
    for _ in range(5):
        loss = (x * w).tanh()[0, 0]
        total += loss.item()
    del loss
    assert mem() == m0
    total_t = 0
    for _ in range(5):
        total_t = total_t + (x * w).tanh()[0, 0]
    assert mem() > m0 + 4 * 64 * 64 * 4     # every graph kept alive through total_t
    del total_t
    assert mem() == m0


def test_deep_chain_is_iterative():
    x = tensorlib.ones(1, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward(tensorlib.ones(1))
    assert x.grad.tolist() == [1.0]


def test_leaf_gradients_follow_pytorchs_accumulation_rules():
    torch = pytest.importorskip("torch")
    for lib in (tensorlib, torch):
        # one gradient handed to two leaves (add) and an expanded one (sum): each leaf gets
        # its own dense buffer, so an in-place update of one never shows in the other
        a, b = lib.ones(3, requires_grad=True), lib.ones(3, requires_grad=True)
        (a + b).sum().backward()
        assert a.grad.stride() == (1,) and b.grad.stride() == (1,)
        a.grad.mul_(2)
        assert a.grad.tolist() == [2.0] * 3 and b.grad.tolist() == [1.0] * 3
        # later gradients are added in place: the same .grad object
        g = a.grad
        (a * 3).sum().backward()
        assert g is a.grad and g.tolist() == [5.0] * 3
        # the gradient is laid out like its (dense) leaf
        w = lib.ones(3, 4).t().detach().requires_grad_()
        (w * 2).sum().backward()
        assert w.grad.stride() == (1, 4)
        # create_graph: a copy with a graph of its own
        x = lib.ones(3, requires_grad=True)
        (x * x).sum().backward(create_graph=True)
        assert type(x.grad.grad_fn).__name__ == "CopyBackwards"
        x.grad = None


def test_transpose_properties_are_recorded_as_pytorch_records_them():
    torch = pytest.importorskip("torch")
    for name, shape in [("T", (2, 3)), ("T", (2, 3, 4)), ("mT", (2, 3, 4)), ("H", (2, 3)),
                        ("mH", (2, 3))]:
        x = tensorlib.randn(*shape, requires_grad=True)
        tx = torch.tensor(x.detach().numpy(), requires_grad=True)
        y, ty = getattr(x, name), getattr(tx, name)
        assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
        g = np.arange(y.numel(), dtype=np.float32).reshape(tuple(y.shape))
        y.backward(tensorlib.tensor(g))
        ty.backward(torch.tensor(g))
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    with pytest.raises(RuntimeError, match="tensor.H is only supported on matrices"):
        tensorlib.ones(3).H


def test_slicing_a_view_that_overlaps_itself_backpropagates_like_pytorch():
    torch = pytest.importorskip("torch")
    # unfold's windows share elements: the slice's gradient must land on the elements the
    # slice read, each counted once per window that holds it
    a = np.arange(12.0).reshape(3, 4)
    g = np.arange(16.0).reshape(2, 2, 2, 2)
    x = tensorlib.tensor(a, requires_grad=True)
    x.unfold(0, 2, 1)[:, 1:3].unsqueeze(1).expand(2, 2, 2, 2).backward(tensorlib.tensor(g))
    tx = torch.tensor(a, requires_grad=True)
    tx.unfold(0, 2, 1)[:, 1:3].unsqueeze(1).expand(2, 2, 2, 2).backward(torch.tensor(g))
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_recorded_matmul_that_folds_batch_dims_holds_no_extra_reference():
    import sys
    x = tensorlib.randn(12, 6, 6, requires_grad=True)
    w = tensorlib.ones(6, 6)
    before = sys.getrefcount(w)
    for left in (True, False):
        y = tensorlib.matmul(x, w) if left else tensorlib.matmul(w, x)
        del y
        assert sys.getrefcount(w) == before


def test_a_gradient_that_is_a_view_is_kept_only_when_nothing_else_holds_its_memory():
    # Linear's weight gradient is the transpose of a product: kept as it is (row-major,
    # nothing else holds the product); a transpose of a gradient another leaf also took
    # must be copied, or an in-place update of one would show in the other
    w = tensorlib.ones(3, 4, requires_grad=True)
    b = tensorlib.ones(4, 3, requires_grad=True)
    (w.t() + b).sum().backward()
    assert w.grad.data_ptr() != b.grad.data_ptr()
    b.grad.mul_(3)
    assert w.grad.tolist() == [[1.0] * 4] * 3
    lin = tensorlib.nn.Linear(5, 2)
    lin(tensorlib.ones(4, 5)).sum().backward()
    g = lin.weight.grad
    assert g.is_contiguous() and g.untyped_storage().nbytes() == 2 * 5 * 4
    # a slice of a larger gradient (cat's backward) is copied: it would keep all of it alive
    x, y = tensorlib.ones(2, 3, requires_grad=True), tensorlib.ones(2, 3, requires_grad=True)
    (tensorlib.cat([x, y]) * 2).sum().backward()
    assert x.grad.untyped_storage().nbytes() == 2 * 3 * 4


# ---------------------------------------------------------------------------------------------
# divergences the differential fuzzer found (tests/fuzz_programs.py), checked against torch

def _both():
    torch = pytest.importorskip("torch")
    return (tensorlib, torch)


def test_leaf_that_stopped_requiring_grad_gets_no_gradient():
    """AccumulateGrad skips a leaf whose requires_grad was turned off after the graph was built
    (with and without create_graph)."""
    for create in (False, True):
        grads = []
        for lib in _both():
            x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
            w = lib.tensor([0.5, 0.5, 0.5], requires_grad=True)
            y = (x * w).sum()
            x.requires_grad_(False)
            y.backward(create_graph=create)
            grads.append((x.grad, w.grad.detach().numpy().copy()))
        (gx, gw), (hx, hw) = grads
        assert gx is None and hx is None
        np.testing.assert_array_equal(gw, hw)


def test_second_backward_accumulates_in_place():
    """A later gradient is added into the existing .grad in place (its _version moves), also
    for an empty leaf."""
    for shape in ((3,), (0, 2)):
        seen = []
        for lib in _both():
            x = lib.ones(*shape, requires_grad=True)
            (x * 2).sum().backward()
            g = x.grad
            v = g._version
            (x * 3).sum().backward()
            seen.append((x.grad is g, g._version - v, x.grad.detach().numpy().tolist()))
        assert seen[0] == seen[1]


def test_backward_gradient_of_another_dtype_is_converted():
    res = []
    for lib in _both():
        x = lib.tensor([1.0, 2.0], dtype=lib.bfloat16, requires_grad=True)
        x.backward(lib.tensor([0.5, 4.0], dtype=lib.float64))
        res.append((str(x.grad.dtype).rsplit(".", 1)[-1], x.grad.float().tolist()))
    assert res[0] == res[1] == ("bfloat16", [0.5, 4.0])


@pytest.mark.parametrize("op", ["logical_and_", "logical_or_", "logical_xor_", "logical_not_"])
def test_logical_inplace_is_invisible_to_autograd(op):
    """logical_*_ has no derivative in PyTorch and so none of autograd's in-place checks: it
    writes a leaf that requires grad, and a graph through a non-leaf is left as it was."""
    res = []
    for lib in _both():
        x = lib.tensor([1.0, 0.0, 2.0], requires_grad=True)
        other = () if op == "logical_not_" else (lib.tensor([1.0, 1.0, 0.0]),)
        getattr(x, op)(*other)
        y = x.detach().clone().requires_grad_(True)
        z = y * 2
        getattr(z, op)(*other)
        z.sum().backward()
        res.append((x.requires_grad, x.is_leaf, x.detach().tolist(), x._version,
                    type(z.grad_fn).__name__, y.grad.tolist()))
    assert res[0] == res[1]


def test_view_dtype_is_not_differentiable():
    res = []
    for lib in _both():
        x = lib.ones(2, 2, requires_grad=True) * 2
        res.append([(v.requires_grad, v.grad_fn is None)
                    for v in (x.view(lib.float32), x.view(lib.int32), x.view(4))])
    assert res[0] == res[1]


def test_cat_of_legacy_empty_tensors_gives_empty_gradients():
    res = []
    for lib in _both():
        x = lib.zeros(0, dtype=lib.float64, requires_grad=True)
        w = lib.ones(2, 2, dtype=lib.float64, requires_grad=True)
        lib.cat([x, x], -1).backward(lib.zeros(0, dtype=lib.float64))
        g1 = None if x.grad is None else tuple(x.grad.shape)
        lib.cat([x, w], 1).sum().backward()
        res.append((g1, tuple(x.grad.shape), w.grad.tolist()))
    assert res[0] == res[1]


def test_multi_output_view_written_outside_autograd_raises_on_history():
    """An unbind/split output written in place under no_grad (or through its base) has no
    history PyTorch can rebuild: reading grad_fn/is_leaf or using it raises, naming the
    function; an untouched output reads as usual."""
    for lib in _both():
        x = lib.ones(1, 3, requires_grad=True)
        x.detach().zero_()              # (a fresh leaf whose version is not 0)
        a, b, c = x.unbind(1)
        assert type(a.grad_fn).__name__ == "UnbindBackward0"
        with lib.no_grad():
            a.mul_(2)
        for f in (lambda: a.grad_fn, lambda: b.is_leaf, lambda: a.sum()):
            with pytest.raises(RuntimeError, match="Output [01] of Unbind is a view and its "
                                                   "base or another view"):
                f()
        y = lib.ones(4, requires_grad=True) * 1
        p, q = y.split(2)
        y.mul_(2)
        with pytest.raises(RuntimeError, match="Output 0 of Split is a view"):
            p.grad_fn


# --------------------------------------------------------------------------- views and base history
def test_view_made_before_its_base_gained_history_carries_the_gradient():
    """b did not require grad when v was made; b.add_(w) gives b a history, and v (PyTorch:
    a view requires grad when its base does) then carries the gradient to w. Before, v kept
    requires_grad=False and the gradient through it was silently dropped."""
    w = tensorlib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = tensorlib.zeros(3)
    v = b[:2]
    chain = b[1:][1:]                  # a view of a view: its root base is b too
    assert not v.requires_grad
    b.add_(w)
    assert v.requires_grad and not v.is_leaf and chain.requires_grad
    assert type(v.grad_fn).__name__ == "AsStridedBackward0"
    loss = (v * 2).sum() + (chain * 5).sum() + w.sum()
    loss.backward()
    # d/dw: 2 on the two elements v sees, 5 on the one chain sees, 1 everywhere from w.sum()
    assert w.grad.tolist() == [3.0, 3.0, 6.0]


def test_view_of_base_with_history_joins_as_an_operand_not_first():
    """The join happens wherever the view is first read: as the second operand of a recorded
    op (where the first already decided to record) and as an argument to matmul."""
    w = tensorlib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = tensorlib.zeros(2, 2)
    v, u = b[0], b.t()
    b.copy_(w)
    y = (w[0] * v).sum() + (w @ u).sum()
    y.backward()
    torch = pytest.importorskip("torch")
    tw = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    tb = torch.zeros(2, 2)
    tv, tu = tb[0], tb.t()
    tb.copy_(tw)
    ((tw[0] * tv).sum() + (tw @ tu).sum()).backward()
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy())


def test_split_output_of_base_that_gained_history_raises_on_its_history():
    """A chunk of a tensor that did not require grad, whose base then gained a history:
    requires_grad reads True and grad_fn raises PyTorch's error, and so does a bitwise op
    (PyTorch's autograd layer reads the histories of ops without a derivative too)."""
    b = tensorlib.zeros(2, 4)
    (c,) = b.chunk(1, -1)
    b.mul_(tensorlib.ones(4, requires_grad=True))
    assert c.requires_grad
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and its base"):
        c.grad_fn
    a = tensorlib.ones(4, requires_grad=True) * 1
    s = a.split(2)
    a.fill_(2.0)
    with pytest.raises(RuntimeError, match="Output 0 of Split is a view and its base"):
        tensorlib.bitwise_and(tensorlib.ones(2, dtype=tensorlib.bool), s[0])
    with pytest.raises(NotImplementedError, match="bitwise_and"):
        tensorlib.bitwise_and(tensorlib.ones(2, dtype=tensorlib.bool), tensorlib.ones(2))


@pytest.mark.parametrize("retain", [False, True])
def test_second_backward_through_an_inplace_write_into_a_view(retain):
    """An in-place op on a view makes its base's history a CopySlices; backward frees the
    in-place node it wraps (PyTorch's CopySlices drops it, even when it saved nothing), so a
    second backward raises unless the first retained the graph."""
    x = tensorlib.ones(3, requires_grad=True)
    c = x + 1
    c[0:2].add_(2)
    s = c.sum()
    s.backward(retain_graph=retain)
    if retain:
        s.backward()
        assert x.grad.tolist() == [2.0, 2.0, 2.0]
    else:
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            s.backward()


@pytest.mark.parametrize("index", [[0], ([0, 1],), (slice(None), [1, 1])])
def test_second_backward_through_an_advanced_index_given_as_lists(index):
    """PyTorch turns a list index into tensors that IndexBackward0 saves: the first backward
    frees them, so a second one raises even though no index was a tensor (before, the
    lists stayed and the second backward added into .grad again)."""
    x = tensorlib.ones(2, 3, requires_grad=True)
    y = x[index].sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    g = x.grad.clone()
    z = x[index].sum()
    z.backward(retain_graph=True)
    z.backward()
    assert (x.grad - g).tolist() == (2 * g).tolist()


def test_div_gradient_of_the_divisor_does_not_square_it():
    """d(a/b)/db = -(a/b)/b, formed as PyTorch forms it: b * b would overflow float32 at
    b = 1e20 (the gradient became -0), and for a / a the two terms cancel exactly."""
    a = tensorlib.tensor([1e20, 3.0], requires_grad=True)
    b = tensorlib.tensor([1e20, 7.0], requires_grad=True)
    (a / b).backward(tensorlib.ones(2))
    want = -((np.float32([1e20, 3.0]) / np.float32([1e20, 7.0])) / np.float32([1e20, 7.0]))
    assert b.grad.numpy().tolist() == want.tolist() and b.grad[0].item() != 0
    x = tensorlib.tensor([0.3, 1.7, -2.9], dtype=tensorlib.bfloat16, requires_grad=True)
    (x / x).backward(tensorlib.tensor([0.7, -1.3, 2.1], dtype=tensorlib.bfloat16))
    assert x.grad.float().tolist() == [0.0, 0.0, 0.0]


def test_index_put_saves_its_indices_with_their_versions():
    """PyTorch's IndexPutBackward0 saves the index tensors: writing a mask or an index in
    place before backward raises its version error (before, the gradient was scattered by
    the new values), and the indices go with the graph, so a second backward raises."""
    x = tensorlib.zeros(3)
    m = tensorlib.tensor([True, False, True])
    v = tensorlib.ones(2, requires_grad=True)
    x[m] = v
    m[0] = False
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        x.sum().backward()
    i = tensorlib.tensor([0, 2])
    y = tensorlib.zeros(3).index_put((i,), v)
    i.add_(0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    s = tensorlib.zeros(3).index_put((tensorlib.tensor([0, 2]),), v * 3).sum()
    v.grad = None
    s.backward()
    assert v.grad.tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        s.backward()


@pytest.mark.parametrize("op", ["flatten", "contiguous"])
def test_op_handing_back_its_input_reads_no_history(op):
    """contiguous() of a contiguous tensor and flatten() of a 1-d one give the input back, as
    PyTorch's composites do, without reading its history: a stale unbind output passes
    through them (and raises where a new tensor is made from it)."""
    x = tensorlib.zeros(0, 3, requires_grad=True)
    u = x.unbind(1)
    with tensorlib.no_grad():
        u[2].add_(1)
    assert getattr(u[1], op)() is u[1]
    with pytest.raises(RuntimeError, match="Output 1 of Unbind is a view"):
        u[1].unsqueeze(0).flatten() if op == "flatten" else u[1].expand(2, 0).contiguous()


def test_views_made_under_no_grad_follow_pytorchs_rules():
    """A view made under no_grad of a tensor that requires grad reads requires_grad=True (as
    a leaf with no history: the gradient through it goes nowhere, as in PyTorch), an
    in-place write into it raises, and so does reading its history after its base changed
    (an optimizer step); a view of a leaf that called requires_grad_() afterwards likewise."""
    w = tensorlib.ones(3, requires_grad=True)
    with tensorlib.no_grad():
        v = w[:2]
    assert v.requires_grad and v.is_leaf and v.grad_fn is None
    y = (v * 2).sum()
    assert y.requires_grad and y.grad_fn.next_functions[0][0].next_functions[0] == (None, 0)
    y.backward()
    assert w.grad is None and v.grad is None
    with pytest.raises(RuntimeError, match="created in no_grad mode and is being modified"):
        v.mul_(2)
    with tensorlib.no_grad():
        w.add_(1)
    with pytest.raises(RuntimeError, match="created in no_grad mode and its base"):
        v.grad_fn
    b = tensorlib.zeros(3)
    v2 = b[:2]
    b.requires_grad_()
    assert v2.requires_grad and v2.is_leaf
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        v2.add_(1)


@pytest.mark.parametrize("op", [lambda t: t.isfinite(), lambda t: t.argsort()])
def test_ops_composed_from_differentiable_ones_read_stale_split_history(op):
    """PyTorch builds isfinite from abs and argsort from sort: a stale unbind output raises."""
    a = tensorlib.ones(4, requires_grad=True) * 1
    s = a.unbind(0)
    a[[0]] = 2.0
    with pytest.raises(RuntimeError, match="Output 1 of Unbind is a view and its base"):
        op(s[1])
    assert s[1].isnan().tolist() is False      # (isnan is self != self: no history read)


def test_pow_tensor_exponent_zero_gives_a_zero_gradient():
    """With a tensor exponent PyTorch selects 0 where the exponent is 0: an infinite base
    (0 * inf) and a uint8 exponent at a zero base (e - 1 wraps to 255: 0 * 0 ** 255 is fine,
    but inf ** 255 * 0 is not) give 0, not NaN."""
    x = tensorlib.tensor([float("inf"), 0.0, 2.0, float("inf")], requires_grad=True)
    e = tensorlib.tensor([0, 0, 3, 1], dtype=tensorlib.uint8)
    (x ** e).backward(tensorlib.ones(4))
    assert x.grad.tolist() == [0.0, 0.0, 12.0, 1.0]
    h = tensorlib.tensor(float("inf"), dtype=tensorlib.float16, requires_grad=True)
    (h ** tensorlib.tensor(0.0, dtype=tensorlib.float16)).backward()
    assert h.grad.item() == 0.0


def test_pow_exponent_gradient_takes_the_log_of_the_base_as_computed():
    """d(b ** e)/de = result * log(b) with b in the dtype the op computed in (PyTorch casts
    it first): a float64 0-d base of 1.5e-323 is 0 in float32, log -inf; the zeros where
    b == 0 and e >= 0 are selected before grad multiplies, so an inf grad there is NaN."""
    b = tensorlib.tensor(1.5e-323, dtype=tensorlib.float64)
    e = tensorlib.tensor([-0.0, 3.5], requires_grad=True)
    (b ** e).backward(tensorlib.tensor([3.0, 1.0]))
    g = e.grad.numpy()
    assert g[0] == -np.inf and np.isnan(g[1])      # 3 * 1 * -inf; 1 * 0 * -inf
    z = tensorlib.tensor([0.0, 2.0])
    e = tensorlib.tensor([1.0, 1.0], requires_grad=True)
    (z ** e).backward(tensorlib.tensor([float("inf"), 1.0]))
    g = e.grad.numpy()
    assert np.isnan(g[0]) and g[1] == np.float32(2 * np.log(np.float32(2.0)))
    e = tensorlib.tensor([1.0, -1.0], requires_grad=True)
    (0 ** e).backward(tensorlib.tensor([float("inf"), 1.0]))
    g = e.grad.numpy()
    assert np.isnan(g[0]) and g[1] == -np.inf


def test_atan2_gradient_is_zero_where_the_squares_sum_to_zero():
    """PyTorch's atan2 backward masks 1 / (y^2 + x^2) to 0 where the sum is 0: at the
    origin, where the squares underflow (1e-200), and where an int64 square wraps to 0."""
    y = tensorlib.tensor([0.0, -0.0, 1e-200, 3.0], dtype=tensorlib.float64, requires_grad=True)
    x = tensorlib.tensor([0.0, 0.0, 1e-200, 4.0], dtype=tensorlib.float64, requires_grad=True)
    tensorlib.atan2(y, x).backward(tensorlib.ones(4, dtype=tensorlib.float64))
    assert y.grad.tolist() == [0.0, 0.0, 0.0, 4.0 / 25.0]
    assert x.grad.tolist() == [0.0, 0.0, 0.0, -3.0 / 25.0]
    o = tensorlib.tensor([-0.0], dtype=tensorlib.float64, requires_grad=True)
    tensorlib.atan2(tensorlib.tensor([-2 ** 63]), o).backward(
        tensorlib.tensor([-1.0], dtype=tensorlib.float64))
    assert o.grad.tolist() == [0.0]


def test_pow_false_exponent_gradient_is_pytorchs_formula():
    """pow(x, False) is 1, but PyTorch's zero-exponent shortcut leaves out False: the
    gradient is 0 * x ** -1 (NaN at 0 and at NaN, -0.0 for negative x)."""
    x = tensorlib.tensor([0.0, -1.5, 2.0, float("nan")], requires_grad=True)
    tensorlib.pow(x, False).backward(tensorlib.ones(4))
    g = x.grad.numpy()
    assert np.isnan(g[0]) and np.isnan(g[3]) and g[1] == 0 and np.signbit(g[1]) and g[2] == 0
    x.grad = None
    tensorlib.pow(x, 0).backward(tensorlib.ones(4))
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("expr", [
    "x.round()", "x.round(decimals=1)", "x.floor()", "x.ceil()", "x.trunc()", "x.sign()",
    "x.pow(0)", "x.div(y, rounding_mode='floor')", "y.div(x, rounding_mode='trunc')",
])
def test_zero_derivatives_give_zeros_whatever_the_incoming_gradient(expr):
    """A derivative that is zero gives zeros, not grad * 0: an inf or NaN coming from above
    (cumprod's backward at a zero, say) must not turn into NaN (PyTorch: zeros_like)."""
    torch = pytest.importorskip("torch")
    got = []
    for lib in (tensorlib, torch):
        x = lib.tensor([1.25, 0.0, -2.5], requires_grad=True)
        y = lib.tensor([2.0, 3.0, 4.0], requires_grad=True)
        out = eval(expr, {"x": x, "y": y})
        out.backward(lib.tensor([float("inf"), float("nan"), 1.0]))
        got.append([None if v.grad is None else v.grad.tolist() for v in (x, y)])
    assert got[0] == got[1]
    assert got[0][0] == [0.0, 0.0, 0.0]


def test_backward_from_a_view_without_history_raises_pytorchs_error():
    """A view of a leaf that called requires_grad_() after the view was made reads
    requires_grad=True but has no history: backward from it raises (it crashed inside the
    engine), as PyTorch's does."""
    torch = pytest.importorskip("torch")
    for lib in (tensorlib, torch):
        base = lib.tensor(2.0)
        view = base.flatten()
        base.requires_grad_(True)
        assert view.requires_grad and view.grad_fn is None
        with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
            view.backward()


def test_a_stale_split_output_raises_before_the_op_checks_its_arguments():
    """PyTorch's autograd layer reads every input's history before the op runs, so a split
    output whose base was written raises the split error even where the op itself would
    reject its arguments (stack on an out-of-range dim)."""
    torch = pytest.importorskip("torch")
    for lib in (tensorlib, torch):
        base = lib.ones(3, 3, requires_grad=True) * 1
        parts = base.chunk(3)
        base.mul_(2)
        with pytest.raises(RuntimeError, match="Output 1 of SplitBackward0|Output 1 of Split"):
            lib.stack([parts[1]], 3)
        with pytest.raises(IndexError):
            lib.stack([parts[1].detach()], 3)


@pytest.mark.parametrize("write", ["view", "base", "none"])
def test_view_of_a_leaf_made_before_requires_grad_joins_it_once_written(write):
    """A view made before its leaf called requires_grad_() has no history of its own; once
    the storage is written after that, PyTorch regenerates its grad_fn (an
    AsStridedBackward0 to the leaf), so the gradient through it reaches the leaf."""
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (tensorlib, torch):
        base = lib.tensor([1.0, 2.0, 3.0])
        v = base[:2]
        base.requires_grad_(True)
        assert v.requires_grad and v.is_leaf and v.grad_fn is None
        with lib.no_grad():
            if write == "view":
                v.mul_(2)
            elif write == "base":
                base.add_(1)
        seen.append((v.is_leaf, type(v.grad_fn).__name__))
        if write != "none":
            (v * 3).sum().backward()
            seen.append(base.grad.tolist())
    assert seen[:len(seen) // 2] == seen[len(seen) // 2:]
    if write != "none":
        assert seen[0] == (False, "AsStridedBackward0") and seen[1] == [3.0, 3.0, 0.0]


@pytest.mark.parametrize("make", ["plain", "slice", "ellipsis", "0-d ellipsis"])
def test_retain_grad_follows_a_tensor_through_an_in_place_op(make):
    """retain_grad() keeps .grad the gradient of the tensor's current version after an
    in-place op, for a view as for a plain tensor (a view lost it: .grad stayed None)."""
    torch = pytest.importorskip("torch")
    got = []
    for lib in (tensorlib, torch):
        a = lib.ones(3, requires_grad=True)
        x = {"plain": lambda: a * 1, "slice": lambda: (a * 1)[1:],
             "ellipsis": lambda: (a * 1)[...], "0-d ellipsis": lambda: (a * 1).sum()[...]}[make]()
        x.retain_grad()
        x.mul_(2)
        (x * 3).sum().backward()
        got.append((x.grad.tolist(), a.grad.tolist()))
    assert got[0] == got[1]


@pytest.mark.parametrize("shape, dim", [((1,), 0), ((1, 3), 0), ((3, 1), 1), ((3, 1), -1)])
def test_cumprod_of_one_element_passes_the_gradient_through(shape, dim):
    """cumprod over one element (a tensor of one, or a dim of size 1; found by the fuzzer)
    gives the incoming gradient itself, as PyTorch's does: under create_graph it has no
    history of the input."""
    torch = pytest.importorskip("torch")
    w = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
    for lib in (tensorlib, torch):
        x = lib.full(shape, 2.0, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(x.cumprod(dim), x, lib.tensor(w), create_graph=True)
        assert g.tolist() == w.tolist() and not g.requires_grad
