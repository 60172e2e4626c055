"""The meta device: tensors with shape, dtype, strides and counted bytes but no data.

Every op must behave on meta exactly as on the CPU in everything but values: output shapes,
strides, dtypes, views, requires_grad and grad_fn, gradients' shapes, errors, and the bytes
the allocator counts. The sweeps below run each case on the CPU and on meta side by side
(the CPU run is the reference); memory.estimate is checked against measured CPU peaks.
"""

import numpy as np
import pytest

import tensorlib
from tensorlib import memory
from test_autograd_sweep import CASES as AUTOGRAD_CASES

META = tensorlib.device("meta")


# exact byte counts: no cyclic collection may free anything mid-test
pytestmark = pytest.mark.usefixtures("gc_off_for_module")


def _leaves(shapes, device, dtype=tensorlib.float64, requires_grad=True, seed=0):
    rng = np.random.default_rng(seed)
    return [tensorlib.tensor(rng.uniform(0.5, 1.5, size=s), dtype=dtype, device=device,
                             requires_grad=requires_grad) for s in shapes]


def _geometry(t):
    if not isinstance(t, tensorlib.Tensor):
        return t
    return (tuple(t.shape), t.stride(), t.dtype, t.requires_grad,
            None if t.grad_fn is None else type(t.grad_fn).__name__, t.is_contiguous(),
            t._base is not None)


class _On:
    """tensorlib, with the tensors a case builds from data (its index tensors) on ``device``,
    so that everything the case allocates is counted on the device measured."""

    def __init__(self, device):
        self._device = device

    def tensor(self, data, **kwargs):
        return tensorlib.tensor(data, device=self._device, **kwargs)

    def __getattr__(self, name):
        return getattr(tensorlib, name)


def _run_case(fn, shapes, device):
    """Output geometry, the bytes the call allocated on ``device`` (result included), and the
    inputs' gradient shapes after backward."""
    leaves = _leaves(shapes, device)
    before = memory.memory_allocated(device)
    memory.reset_peak_memory_stats(device)
    out = fn(_On(device), *[x * 1 for x in leaves])
    peak = memory.max_memory_allocated(device) - before
    grads = None
    if out.requires_grad:
        out.backward(tensorlib.ones_like(out))
        grads = [None if x.grad is None else (tuple(x.grad.shape), x.grad.stride())
                 for x in leaves]
    return _geometry(out), out.device.type, peak, grads


# cases that cannot run on meta as written, and why
NOT_ON_META = {
    "t_on_slice": "it multiplies by an arange made on the CPU (a device mix, as in PyTorch)",
}
# cases whose backward selects elements by the values of a mask: NotImplementedError on meta
VALUE_DEPENDENT_BACKWARD = {"masked_scatter"}


@pytest.mark.parametrize("name", sorted(set(AUTOGRAD_CASES) - set(NOT_ON_META)))
def test_autograd_sweep_on_meta_matches_cpu(name):
    fn, shapes, *_ = AUTOGRAD_CASES[name]
    if name in VALUE_DEPENDENT_BACKWARD:
        with pytest.raises(NotImplementedError, match="masked_select"):
            _run_case(fn, shapes, "meta")
        return
    cpu = _run_case(fn, shapes, "cpu")
    meta = _run_case(fn, shapes, "meta")
    assert meta[1] == "meta"
    assert meta[0] == cpu[0]                 # shape, strides, dtype, grad_fn, view or not
    assert meta[2] == cpu[2]                 # the same bytes allocated, peak included
    assert meta[3] == cpu[3]                 # gradients of the same geometry


def _t(*shape, dtype=tensorlib.float32):
    return lambda dev: tensorlib.ones(*shape, dtype=dtype, device=dev)


# name: (fn(x, device), input) -- ops across the families, forward only
OPS = {
    "add_broadcast": lambda d: tensorlib.ones(3, 1, device=d) + tensorlib.ones(4, device=d),
    "mul_promote": lambda d: tensorlib.ones(3, dtype=tensorlib.int32, device=d) * 2.5,
    "div_int": lambda d: tensorlib.arange(6, device=d) / 4,
    "floordiv_int": lambda d: tensorlib.arange(6, device=d) // 2,
    "pow_half": lambda d: tensorlib.ones(4, dtype=tensorlib.float16, device=d) ** 2,
    "compare": lambda d: tensorlib.ones(2, 3, device=d) > tensorlib.zeros(3, device=d),
    "where": lambda d: tensorlib.where(tensorlib.ones(2, 3, dtype=tensorlib.bool, device=d),
                                       tensorlib.ones(3, device=d), 0.0),
    "inplace_on_view": lambda d: tensorlib.ones(4, 4, device=d)[1:, ::2].add_(1),
    "out_resize": lambda d: tensorlib.add(tensorlib.ones(3, device=d), 1,
                                          out=tensorlib.empty(0, device=d)),
    "sum_dim": lambda d: tensorlib.ones(2, 3, 4, device=d).sum((0, 2), keepdim=True),
    "mean_dtype": lambda d: tensorlib.ones(2, 3, device=d).mean(1, dtype=tensorlib.float64),
    "var": lambda d: tensorlib.ones(5, 6, device=d).var(0),
    "argmax": lambda d: tensorlib.ones(5, 6, device=d).argmax(1),
    "max_dim": lambda d: tensorlib.ones(5, 6, device=d).max(1).indices,
    "norm": lambda d: tensorlib.ones(5, 6, device=d).norm(dim=1),
    "logsumexp": lambda d: tensorlib.ones(5, 6, device=d).logsumexp(0),
    "softmax": lambda d: tensorlib.ones(5, 6, dtype=tensorlib.float16, device=d).softmax(0),
    "cumsum_int": lambda d: tensorlib.ones(5, 6, dtype=tensorlib.int32, device=d).cumsum(1),
    "sort": lambda d: tensorlib.ones(5, 6, device=d).sort(1, descending=True).values,
    "topk": lambda d: tensorlib.ones(5, 6, device=d).topk(2).indices,
    "kthvalue": lambda d: tensorlib.ones(5, 6, device=d).kthvalue(2, 0).values,
    "median": lambda d: tensorlib.ones(5, 6, device=d).median(1).values,
    "matmul_batched": lambda d: tensorlib.ones(2, 3, 4, device=d) @ tensorlib.ones(4, 5, device=d),
    "matmul_int": lambda d: tensorlib.ones(3, 4, dtype=tensorlib.int32, device=d)
    @ tensorlib.ones(4, 2, dtype=tensorlib.int32, device=d),
    "matmul_half": lambda d: tensorlib.ones(3, 4, dtype=tensorlib.bfloat16, device=d)
    @ tensorlib.ones(4, 2, dtype=tensorlib.bfloat16, device=d),
    "addmm": lambda d: tensorlib.addmm(tensorlib.ones(2, device=d), tensorlib.ones(3, 4, device=d),
                                       tensorlib.ones(4, 2, device=d), beta=0.5),
    "einsum": lambda d: tensorlib.einsum("ij,jk->ik", tensorlib.ones(3, 4, device=d),
                                         tensorlib.ones(4, 5, device=d)),
    "cat": lambda d: tensorlib.cat([tensorlib.ones(2, 3, device=d), tensorlib.zeros(1, 3, device=d)]),
    "stack": lambda d: tensorlib.stack([tensorlib.ones(3, device=d)] * 4, 1),
    "transpose_contiguous": lambda d: tensorlib.ones(3, 4, device=d).t().contiguous(),
    "reshape_copy": lambda d: tensorlib.ones(3, 4, device=d).t().reshape(12),
    "flip": lambda d: tensorlib.ones(3, 4, device=d).flip(0),
    "repeat": lambda d: tensorlib.ones(3, 4, device=d).repeat(2, 1, 1),
    "tril": lambda d: tensorlib.ones(4, 4, device=d).tril(),
    "roll": lambda d: tensorlib.ones(4, 4, device=d).roll(1, 0),
    "clone_preserve": lambda d: tensorlib.ones(4, 4, device=d).t().clone(),
    "to_dtype": lambda d: tensorlib.ones(4, device=d).to(tensorlib.int8),
    "gather": lambda d: tensorlib.ones(3, 4, device=d).gather(
        1, tensorlib.zeros(3, 2, dtype=tensorlib.int64, device=d)),
    "scatter_add": lambda d: tensorlib.zeros(3, 4, device=d).scatter_add(
        0, tensorlib.zeros(2, 4, dtype=tensorlib.int64, device=d),
        tensorlib.ones(2, 4, device=d)),
    "index_tensor": lambda d: tensorlib.ones(5, 4, device=d)[tensorlib.tensor([0, 3, 3], device=d)],
    "index_mixed": lambda d: tensorlib.ones(5, 4, 3, device=d)[:, tensorlib.tensor([1, 2], device=d), 0],
    "index_setitem": lambda d: tensorlib.ones(5, 4, device=d).index_put_(
        (tensorlib.tensor([0, 1], device=d),), tensorlib.zeros(4, device=d)),
    "index_select": lambda d: tensorlib.ones(5, 4, device=d).index_select(1, tensorlib.tensor([0, 2], device=d)),
    "take": lambda d: tensorlib.ones(5, 4, device=d).t().take(tensorlib.tensor([0, 7], device=d)),
    "masked_fill": lambda d: tensorlib.ones(5, 4, device=d).masked_fill(
        tensorlib.ones(4, dtype=tensorlib.bool, device=d), 2.0),
    "zeros": lambda d: tensorlib.zeros(3, 4, dtype=tensorlib.int16, device=d),
    "full": lambda d: tensorlib.full((3, 4), 7, device=d),
    "arange": lambda d: tensorlib.arange(0, 10, 3, device=d),
    "arange_float": lambda d: tensorlib.arange(0.0, 1.0, 0.25, device=d),
    "linspace": lambda d: tensorlib.linspace(0, 1, 7, device=d),
    "eye": lambda d: tensorlib.eye(3, 4, device=d),
    "rand": lambda d: tensorlib.rand(3, 4, device=d),
    "randn_double": lambda d: tensorlib.randn(3, 4, dtype=tensorlib.float64, device=d),
    "randint": lambda d: tensorlib.randint(0, 5, (3, 4), device=d),
    "randperm": lambda d: tensorlib.randperm(6, device=d),
    "bernoulli_tensor_p": lambda d: tensorlib.bernoulli(tensorlib.full((3,), 0.5, device=d)),
    "normal_tensors": lambda d: tensorlib.normal(tensorlib.zeros(3, device=d), tensorlib.ones(3, device=d)),
    "empty_like": lambda d: tensorlib.empty_like(tensorlib.ones(3, 4, device=d).t()),
    "tensor_from_data": lambda d: tensorlib.tensor([[1, 2], [3, 4]], dtype=tensorlib.float16, device=d),
    "zero_strided": lambda d: tensorlib.ones(4, 4, device=d)[:, ::2].zero_(),
    "fill_strided": lambda d: tensorlib.ones(4, 4, device=d)[::2].fill_(3),
}


def _declared_elementwise():
    """Every declared op that runs an elementwise kernel: (name, arity)."""
    from tensorlib.ops.decl import elementwise as decl
    out = []
    for d in decl.OPS:
        if d["kernels"]:
            params = [p.strip() for p in d["sig"].split("*")[0].split(",") if p.strip()]
            required = [p for p in params if "=" not in p]
            out.append((d["name"], len(required)))
    return out


def _function(name):
    return getattr(tensorlib, name, None) or getattr(tensorlib.nn.functional, name)


@pytest.mark.parametrize("dtype", [tensorlib.float32, tensorlib.float16, tensorlib.int64,
                                   tensorlib.uint8, tensorlib.bool], ids=str)
@pytest.mark.parametrize("name, arity", _declared_elementwise(), ids=lambda v: str(v))
def test_every_declared_elementwise_op_on_meta_matches_cpu(name, arity, dtype):
    """Same result geometry and bytes, or the same error, for every declared kernel op."""
    fn = _function(name)

    def call(device):
        x = tensorlib.ones(3, 1, 4, dtype=dtype, device=device).transpose(0, 2)   # strided
        args = (x,) if arity == 1 else (x, tensorlib.ones(3, 1, dtype=dtype, device=device))
        return fn(*args)

    try:
        cpu = _forward(call, "cpu")
    except Exception as e:                        # the dtype is refused: so must meta refuse it
        with pytest.raises(type(e)) as meta:
            call("meta")
        assert str(meta.value) == str(e)
        return
    meta = _forward(call, "meta")
    assert meta[1] == "meta" and meta[0] == cpu[0] and meta[2:] == cpu[2:]


def _forward(fn, device):
    before = memory.memory_allocated(device)
    memory.reset_peak_memory_stats(device)
    out = fn(device)
    peak = memory.max_memory_allocated(device) - before
    return _geometry(out), out.device.type, peak, memory.memory_allocated(device) - before


@pytest.mark.parametrize("name", sorted(OPS))
def test_ops_on_meta_match_cpu(name):
    cpu = _forward(OPS[name], "cpu")
    meta = _forward(OPS[name], "meta")
    assert meta[1] == "meta"
    assert meta[0] == cpu[0]
    assert meta[2:] == cpu[2:]               # peak and live bytes, exactly


@pytest.mark.parametrize("fn", [
    lambda d: tensorlib.ones(3, 4, device=d) + tensorlib.ones(5, device=d),
    lambda d: tensorlib.ones(3, 4, device=d) @ tensorlib.ones(3, 4, device=d),
    lambda d: tensorlib.ones(3, 4, device=d).view(5),
    lambda d: tensorlib.ones(3, 4, device=d).t().view(12),
    lambda d: tensorlib.ones(3, 4, device=d).sum(2),
    lambda d: tensorlib.ones(3, 4, device=d)[5],
    lambda d: tensorlib.ones(3, dtype=tensorlib.bool, device=d) - tensorlib.ones(3, dtype=tensorlib.bool, device=d),
    lambda d: tensorlib.ones(3, device=d) & 1,
    lambda d: tensorlib.ones(3, device=d).expand(3, 4).add_(1),
    lambda d: tensorlib.ones(3, 4, device=d).softmax(0, dtype=tensorlib.int32),
], ids=["broadcast", "matmul", "view_numel", "view_rule", "dim_range", "index_range",
        "bool_sub", "float_bitwise", "expanded_write", "softmax_dtype"])
def test_errors_on_meta_match_cpu(fn):
    with pytest.raises(Exception) as cpu:
        fn("cpu")
    with pytest.raises(Exception) as meta:
        fn("meta")
    assert type(meta.value) is type(cpu.value)
    assert str(meta.value) == str(cpu.value)


def test_meta_tensor_basics():
    x = tensorlib.empty(2, 3, device="meta")
    assert x.device == META and x.is_meta and not x.is_cpu
    assert x.shape == (2, 3) and x.stride() == (3, 1)
    assert x.get_device() == -1 or x.get_device() is None
    assert tensorlib.device("meta") == META and str(META) == "meta"
    v = x.t()[1:]
    assert v.is_meta and v._base is x and v.stride() == (1, 3)
    assert tensorlib.ones(2).to("meta").is_meta
    assert tensorlib.ones(2).to(device="meta", dtype=tensorlib.float64).dtype == tensorlib.float64
    assert tensorlib.ones(2, 3).t().to("meta").stride() == (1, 3)     # dense strides kept
    assert tensorlib.empty(2, device="meta").to("meta").is_meta
    with pytest.raises(RuntimeError, match="meta device index"):
        tensorlib.empty(2, device="meta:1")


def test_meta_tensor_pickles_as_its_geometry():
    # PyTorch pickles a meta tensor as shape, strides and dtype (there are no values to carry)
    import pickle
    x = tensorlib.empty(2, 3, device="meta", dtype=tensorlib.float16).t().requires_grad_()
    y = pickle.loads(pickle.dumps(x))
    assert y.is_meta and y.is_leaf and y.requires_grad
    assert (y.shape, y.stride(), y.dtype) == ((3, 2), (1, 3), tensorlib.float16)
    torch = pytest.importorskip("torch")
    tx = torch.empty(2, 3, device="meta", dtype=torch.float16).t().requires_grad_()
    ty = pickle.loads(pickle.dumps(tx))
    assert (tuple(ty.shape), ty.stride(), ty.requires_grad) == (y.shape, y.stride(), True)


def test_meta_repr_is_pytorchs():
    assert repr(tensorlib.empty(2, 3, device="meta")) == "tensor(..., device='meta', size=(2, 3))"
    assert repr(tensorlib.empty(2, dtype=tensorlib.int64, device="meta")) == \
        "tensor(..., device='meta', size=(2,), dtype=tensorlib.int64)"
    x = tensorlib.empty(2, device="meta", requires_grad=True)
    assert repr(x) == "tensor(..., device='meta', size=(2,), requires_grad=True)"
    assert repr(x * 2) == "tensor(..., device='meta', size=(2,), grad_fn=<MulBackward0>)"


@pytest.mark.parametrize("read, exc, msg", [
    (lambda x: x[0, 0].item(), RuntimeError, "Tensor.item() cannot be called on meta tensors"),
    (lambda x: float(x[0, 0]), RuntimeError, "Tensor.item() cannot be called on meta tensors"),
    (lambda x: bool(x[0, 0]), RuntimeError, "Tensor.item() cannot be called on meta tensors"),
    (lambda x: x.tolist(), NotImplementedError, "Cannot copy out of meta tensor; no data!"),
    (lambda x: x.cpu(), NotImplementedError, "Cannot copy out of meta tensor; no data!"),
    (lambda x: x.to("cpu"), NotImplementedError, "Cannot copy out of meta tensor; no data!"),
    (lambda x: tensorlib.zeros(2, 3).copy_(x), NotImplementedError,
     "Cannot copy out of meta tensor; no data!"),
    (lambda x: x.numpy(), TypeError, "can't convert meta device type tensor to numpy"),
    (lambda x: np.asarray(x), TypeError, "can't convert meta device type tensor to numpy"),
    (lambda x: x.nonzero(), NotImplementedError, "nonzero"),
    (lambda x: x[x > 0], NotImplementedError, "masked_select"),
    (lambda x: x.masked_select(x > 0), NotImplementedError, "masked_select"),
    (lambda x: x.unique(), NotImplementedError, "unique"),
    (lambda x: x.equal(x), NotImplementedError, ""),
    (lambda x: x.allclose(x), NotImplementedError, ""),
])
def test_reading_values_of_meta_raises(read, exc, msg):
    x = tensorlib.empty(2, 3, device="meta")
    with pytest.raises(exc) as e:
        read(x)
    assert msg in str(e.value)


def test_mixing_devices_raises_pytorchs_error():
    m, c = tensorlib.empty(2, 3, device="meta"), tensorlib.ones(2, 3)
    msg = "Expected all tensors to be on the same device, but found at least two devices"
    for fn in (lambda: m + c, lambda: c * m, lambda: m @ c.t(), lambda: c.add_(m),
               lambda: tensorlib.add(c, c, out=m), lambda: tensorlib.cat([m, c]),
               lambda: tensorlib.stack([c, m]), lambda: m.index_put_((tensorlib.tensor([0]),), c[0]),
               lambda: c[tensorlib.zeros(1, dtype=tensorlib.int64, device="meta")]):
        with pytest.raises(RuntimeError, match=msg):
            fn()
    # a 0-d CPU tensor joins any device, as a Python number would (PyTorch's rule)
    assert (m + tensorlib.tensor(2.0)).is_meta
    assert (tensorlib.tensor(2.0) * m).is_meta
    # copying into meta writes nothing and is allowed; index tensors may stay on the CPU
    assert m.copy_(c) is m
    assert m[tensorlib.tensor([1, 0])].shape == (2, 3)
    m[0] = tensorlib.tensor(1.0)                     # a CPU scalar written into meta
    assert m.index_put_((tensorlib.tensor([0]),), tensorlib.tensor(2.0)).is_meta


def test_counters_follow_the_same_rules_on_every_device(device, no_gc):
    before = memory.memory_allocated(device)
    x = tensorlib.empty(1000, device=device)                 # 4000 bytes -> 4096
    views = [x[1:], x.view(10, 100), x[::2], x.t()]
    y = x.to(tensorlib.float64)                              # 8000 -> 8192
    assert memory.memory_allocated(device) - before == 4096 + 8192
    del views, y
    assert memory.memory_allocated(device) - before == 4096
    del x
    assert memory.memory_allocated(device) == before
    assert tensorlib.empty(0, device=device).device.type == device


def test_meta_counters_are_the_cpus_and_cost_nothing():
    before = memory.memory_allocated("meta")
    x = tensorlib.empty(1000, device="meta")                 # 4000 bytes -> 4096
    views = [x[1:], x.view(10, 100)]
    assert memory.memory_allocated("meta") - before == 4096
    big = tensorlib.empty(2 ** 36, dtype=tensorlib.uint8, device="meta")   # 64 GiB, not real
    assert memory.memory_allocated("meta") - before == 4096 + 2 ** 36
    del x, views, big
    assert memory.memory_allocated("meta") == before
    assert memory.memory_stats("meta")["num_ooms"] >= 0


def test_meta_memory_limit_answers_will_it_fit():
    memory.set_per_process_memory_limit(2 ** 30, device="meta")
    try:
        a = tensorlib.empty(2 ** 28, device="meta")          # 1 GiB: fits
        with pytest.raises(tensorlib.OutOfMemoryError, match="META allocator"):
            tensorlib.empty(2 ** 20, device="meta")
        del a
    finally:
        memory.set_per_process_memory_limit(None, device="meta")


def test_meta_autograd_backward_frees_like_cpu():
    def step(device):
        w = tensorlib.ones(64, 32, device=device, requires_grad=True)
        x = tensorlib.ones(16, 64, device=device)
        before = memory.memory_allocated(device)
        loss = (x @ w).tanh().sum()
        loss.backward()
        after = memory.memory_allocated(device) - before
        return after, tuple(w.grad.shape), w.grad.device.type
    cpu, meta = step("cpu"), step("meta")
    assert meta[0] == cpu[0] and meta[1] == cpu[1] and meta[2] == "meta"


# ---- memory.estimate ----------------------------------------------------------------------

def _mlp(x, ws):
    for w, b in ws[:-1]:
        x = (x @ w + b).relu()
    w, b = ws[-1]
    return x @ w + b


def _layer_norm(x, eps=1e-5):
    n = x.shape[-1]
    d = x - x.sum(-1, keepdim=True) / n
    return d * ((d * d).sum(-1, keepdim=True) / n + eps).rsqrt()


def _block(x, p):
    h = _layer_norm(x)
    q, k, v = h @ p["wq"], h @ p["wk"], h @ p["wv"]
    s = q @ k.transpose(-1, -2) * (1.0 / q.shape[-1] ** 0.5)
    e = (s - s.amax(-1, keepdim=True)).exp()
    x = x + (e / e.sum(-1, keepdim=True) @ v) @ p["wo"]
    h = _layer_norm(x)
    return x + tensorlib.gelu(h @ p["w1"]) @ p["w2"]


def _chain(x, n=1000):
    for i in range(n):
        x = (x * 1.0001).sin() if i % 2 else x + 0.5
    return x


def _workloads():
    g = tensorlib.Generator().manual_seed(0)
    sizes = [512, 1024, 1024, 512]
    ws = [(tensorlib.randn(a, c, generator=g), tensorlib.randn(c, generator=g))
          for a, c in zip(sizes, sizes[1:])]
    d, hidden = 128, 512
    p = {n: tensorlib.randn(d, d, generator=g) for n in ("wq", "wk", "wv", "wo")}
    p["w1"] = tensorlib.randn(d, hidden, generator=g)
    p["w2"] = tensorlib.randn(hidden, d, generator=g)
    return {
        "mlp": lambda: (_mlp, (tensorlib.randn(64, 512, generator=g), ws)),
        "block": lambda: (_block, (tensorlib.randn(4, 64, d, generator=g), p)),
        "chain_1000": lambda: (_chain, (tensorlib.randn(1024, generator=g),)),
    }


def _measured_peak(fn, args):
    """What a CPU run reaches: max_memory_allocated above the bytes allocated before the
    inputs existed (the inputs are copied here, as estimate copies them)."""
    base = memory.memory_allocated()
    args = _copy(args)
    memory.reset_peak_memory_stats()
    out = fn(*args)
    return memory.max_memory_allocated() - base, out


def _copy(x):
    if isinstance(x, tensorlib.Tensor):
        return x.clone()
    if isinstance(x, (tuple, list)):
        return type(x)(_copy(v) for v in x)
    if isinstance(x, dict):
        return {k: _copy(v) for k, v in x.items()}
    return x


@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
@pytest.mark.parametrize("name", ["mlp", "block", "chain_1000"])
def test_estimate_equals_the_measured_peak(name, grad):
    fn, args = _workloads()[name]()
    with tensorlib.set_grad_enabled(grad):
        est = memory.estimate(fn, *args)
        real, out = _measured_peak(fn, args)
    assert est.peak_bytes == real
    assert est.result.shape == out.shape and est.result.is_meta
    assert est.plan is not None and est.plan.lower_bound_bytes <= est.peak_bytes
    if not grad:
        # under no_grad the planner's arena reaches its lower bound on these workloads
        assert est.plan.arena_bytes == est.plan.lower_bound_bytes


def test_estimate_with_backward_and_kwargs():
    def train_step(x, w, *, scale):
        loss = ((x @ w).tanh() * scale).sum()
        loss.backward()
        return w.grad
    x = tensorlib.randn(32, 256)
    w = tensorlib.randn(256, 128, requires_grad=True)
    est = memory.estimate(train_step, x, w, scale=2.0)
    base = memory.memory_allocated()
    x2, w2 = x.clone(), w.detach().clone().requires_grad_()
    memory.reset_peak_memory_stats()
    train_step(x2, w2, scale=2.0)
    assert est.peak_bytes == memory.max_memory_allocated() - base
    assert w.grad is None                      # the real tensors were never touched
    assert est.result.shape == (256, 128) and est.result.is_meta


def test_estimate_allocates_no_real_memory_and_reports():
    x = tensorlib.ones(1024, 1024)            # 4 MiB
    memory.reset_peak_memory_stats()
    before = memory.max_memory_allocated()
    est = memory.estimate(lambda t: (t @ t).exp() + t, x)
    assert memory.max_memory_allocated() == before          # not one CPU byte
    assert est.inputs_bytes == 4 * 2 ** 20
    assert est.peak_bytes == 3 * 4 * 2 ** 20
    assert est.fits(12 * 2 ** 20) and not est.fits(12 * 2 ** 20 - 1)
    text = est.report()
    assert "memory estimate" in text and "memory plan" in text
    assert "peak=12582912" in repr(est)


def test_estimate_docstring_examples():
    import doctest
    from tensorlib.memory import estimation
    result = doctest.testmod(estimation, extraglobs={"tensorlib": tensorlib},
                             optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 8


def test_profiler_and_planner_work_on_meta():
    with tensorlib.no_grad(), memory.profile() as prof:
        x = tensorlib.ones(1024, device="meta")
        y = (x * 2).exp() + 1
    assert prof.peak_bytes == 12288 and prof.by_role(at="peak") == {"activation": 12288}
    assert [(e.kind, e.op, str(e.device)) for e in prof.events][:3] == [
        ("alloc", "ones", "meta"), ("alloc", "mul", "meta"), ("alloc", "exp", "meta")]
    del y

    @memory.plan
    def f(x):
        h = (x * 2).exp()
        return (h + 1).sin() * h
    x = tensorlib.randn(1000, device="meta")
    before = memory.memory_stats("meta")["allocation.all.allocated"]
    a, b = f(x), f(x)                               # recorded, then replayed from the arena
    assert (f.stats.recordings, f.stats.replays) == (1, 1)
    assert a.is_meta and b.is_meta and f.last_plan.device == tensorlib.device("meta")
    # the replayed call asked the allocator for its result only
    assert memory.memory_stats("meta")["allocation.all.allocated"] - before == 5 + 1


def test_like_constructors_honour_device():
    for fn, extra in [("empty_like", ()), ("zeros_like", ()), ("ones_like", ()),
                      ("full_like", (3.0,)), ("rand_like", ()), ("randn_like", ()),
                      ("randint_like", (5,))]:
        x = tensorlib.ones(2, 3).t()
        y = getattr(tensorlib, fn)(x, *extra, device="meta")
        assert y.is_meta and y.stride() == (1, 3), fn          # preserve_format on meta too
        back = getattr(tensorlib, fn)(tensorlib.empty(2, device="meta"), *extra, device="cpu")
        assert back.is_cpu, fn
