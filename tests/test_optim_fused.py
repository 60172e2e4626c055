"""Every fused optimizer side by side with torch.optim: parameters and every state tensor
after several steps (float32 and float64, parameter groups with different learning rates,
a transposed parameter), state_dict exchange in both directions mid-training, PyTorch's
argument errors, the memory role of the state, no allocation during a step, and results
that do not depend on the thread count."""
import doctest
import gc
import importlib
import warnings

import numpy as np
import pytest

import tensorlib
from tensorlib import optim
from tensorlib._core.tensor import _fused_optim

torch = pytest.importorskip("torch")

SHAPES = ((3, 4), (5,), (2, 2, 2), "t(4, 3)")

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.2, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, betas=(0.5, 0.9), amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.02, maximize=True, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, amsgrad=True, weight_decay=0.3, maximize=True)),
    ("Adamax", dict(lr=0.05)),
    ("Adamax", dict(lr=0.05, betas=(0.6, 0.8), weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.05)),
    ("NAdam", dict(lr=0.05, momentum_decay=0.1, weight_decay=0.1)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.05)),
    ("RAdam", dict(lr=0.05, betas=(0.8, 0.6), weight_decay=0.1)),
    ("RAdam", dict(lr=0.05, betas=(0.9, 0.7), weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, weight_decay=0.1, initial_accumulator_value=0.5,
                     maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.5, eps=1e-4, weight_decay=0.1, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.8, maximize=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.8, centered=True)),
    ("Rprop", dict(lr=0.05)),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=0.1, alpha=0.5, t0=2, weight_decay=0.1, maximize=True)),
]
IDS = [f"{name}-{cfg}" for name, cfg in CASES]
TOL = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=1e-10, atol=1e-12)}


def _leaves(lib, dtype, seed=0):
    """Parameters of several shapes, the last one a transposed (non-contiguous) leaf."""
    rng = np.random.default_rng(seed)
    out = []
    for shape in SHAPES:
        if shape == "t(4, 3)":
            a = rng.standard_normal((4, 3)).astype(dtype)
            out.append(lib.tensor(a).t().detach().requires_grad_(True))
        else:
            out.append(lib.tensor(rng.standard_normal(shape).astype(dtype), requires_grad=True))
    return out


def _loss(params, step):
    """A loss whose gradient changes sign and size with the parameters and the step."""
    total = 0
    for i, p in enumerate(params):
        total = total + (p * p).sum() * (0.5 + 0.1 * i) + (p * (step + 1)).sin().sum() * 1.5
    return total


def _make(lib, name, params, cfg):
    return getattr(lib.optim, name)(params, **cfg)


def _grads(params, lib, step, layout="same"):
    """The same gradients for both libraries, computed in NumPy (float64) from each side's
    current parameters, so the comparison sees the optimizer alone: the gradient of
    ``_loss``. A transposed parameter gets a gradient in its own layout, or a contiguous one
    (``layout="contiguous"``)."""
    for i, p in enumerate(params):
        x = p.detach().double().numpy()
        g = x * (1.0 + 0.2 * i) + 1.5 * (step + 1) * np.cos(x * (step + 1))
        if p.dim() == 2 and p.stride(0) == 1 and layout == "same":
            p.grad = lib.tensor(np.ascontiguousarray(g.T)).to(p.dtype).t()
        else:
            p.grad = lib.tensor(np.array(g, order="C")).to(p.dtype)


def _step_both(pair, step, layout="same"):
    for (opt, params), lib in zip(pair, (tensorlib, torch)):
        opt.zero_grad()
        _grads(params, lib, step, layout)
        opt.step()


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _assert_same_state(opt_a, opt_b, tol):
    sa, sb = opt_a.state_dict(), opt_b.state_dict()
    assert sa["param_groups"] == sb["param_groups"]
    assert sorted(sa["state"]) == sorted(sb["state"])
    for k, st in sb["state"].items():
        assert sorted(sa["state"][k]) == sorted(st)
        for name, v in st.items():
            ours = sa["state"][k][name]
            if isinstance(v, torch.Tensor):
                assert isinstance(ours, tensorlib.Tensor), name
                assert str(ours.dtype).split(".")[-1] == str(v.dtype).split(".")[-1], name
                assert tuple(ours.shape) == tuple(v.shape), name
                _close(ours, v, tol, name)
            else:
                assert ours == v, name


def _close(a, b, tol, name=""):
    """Within rounding: relative to each element and to the tensor's scale (a state that is
    a sum with cancellation keeps the absolute error of its largest terms)."""
    a, b = _np(a), _np(b)
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    np.testing.assert_allclose(a, b, rtol=tol["rtol"], atol=tol["atol"] + tol["rtol"] * scale,
                               err_msg=name)


def _assert_same_params(ours, theirs, tol):
    for a, b in zip(ours, theirs):
        _close(a, b, tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, cfg", CASES, ids=IDS)
def test_matches_torch(name, cfg, dtype):
    ours, theirs = _leaves(tensorlib, dtype), _leaves(torch, dtype)
    opt_a, opt_b = _make(tensorlib, name, ours, cfg), _make(torch, name, theirs, cfg)
    for step in range(6):
        _step_both([(opt_a, ours), (opt_b, theirs)], step)
        _assert_same_params(ours, theirs, TOL[dtype])
    _assert_same_state(opt_a, opt_b, TOL[dtype])


@pytest.mark.parametrize("name, cfg", [c for c in CASES if c[0] in ("Adam", "NAdam", "ASGD")])
def test_default_dtype_float64_makes_float64_steps(name, cfg):
    # PyTorch's 0-d states follow the default dtype when it is float64
    ours, theirs = _leaves(tensorlib, "float64"), _leaves(torch, "float64")
    old_a, old_b = tensorlib.get_default_dtype(), torch.get_default_dtype()
    tensorlib.set_default_dtype(tensorlib.float64)
    torch.set_default_dtype(torch.float64)
    try:
        opt_a, opt_b = _make(tensorlib, name, ours, cfg), _make(torch, name, theirs, cfg)
        for step in range(5):
            _step_both([(opt_a, ours), (opt_b, theirs)], step)
    finally:
        tensorlib.set_default_dtype(old_a)
        torch.set_default_dtype(old_b)
    assert opt_a.state[ours[0]]["step"].dtype == tensorlib.float64
    _assert_same_params(ours, theirs, TOL["float64"])
    _assert_same_state(opt_a, opt_b, TOL["float64"])


@pytest.mark.parametrize("name, cfg", CASES[1::3], ids=IDS[1::3])
def test_gradient_in_another_layout_than_its_parameter(name, cfg):
    # the transposed parameter gets a contiguous gradient: read through a copy in the
    # parameter's layout, with the same result
    ours, theirs = _leaves(tensorlib, "float64"), _leaves(torch, "float64")
    opt_a, opt_b = _make(tensorlib, name, ours, cfg), _make(torch, name, theirs, cfg)
    for step in range(4):
        _step_both([(opt_a, ours), (opt_b, theirs)], step, layout="contiguous")
        assert ours[3].grad.is_contiguous() and not ours[3].is_contiguous()
    assert ours[3].stride() == (1, 3)
    _assert_same_params(ours, theirs, TOL["float64"])
    _assert_same_state(opt_a, opt_b, TOL["float64"])


@pytest.mark.parametrize("name, cfg", CASES[::2], ids=IDS[::2])
def test_param_groups_with_different_lrs(name, cfg):
    ours, theirs = _leaves(tensorlib, "float32"), _leaves(torch, "float32")
    lr = cfg.get("lr", 1.0)

    def groups(params):
        return [{"params": params[:1], "lr": lr * 3}, {"params": params[1:3]},
                {"params": params[3:], "lr": lr / 2}]

    opt_a = _make(tensorlib, name, groups(ours), cfg)
    opt_b = _make(torch, name, groups(theirs), cfg)
    for step in range(4):
        _step_both([(opt_a, ours), (opt_b, theirs)], step)
    _assert_same_params(ours, theirs, TOL["float32"])
    _assert_same_state(opt_a, opt_b, TOL["float32"])


def _to_torch(obj):
    if isinstance(obj, tensorlib.Tensor):
        return torch.from_numpy(obj.numpy().copy())
    if isinstance(obj, dict):
        return {k: _to_torch(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_torch(v) for v in obj)
    return obj


def _from_torch(obj):
    if isinstance(obj, torch.Tensor):
        return tensorlib.tensor(obj.numpy())
    if isinstance(obj, dict):
        return {k: _from_torch(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_from_torch(v) for v in obj)
    return obj


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, cfg", CASES, ids=IDS)
def test_state_dict_exchange_both_ways(name, cfg, dtype):
    # float64 parameters: a loaded state_dict's mu_product / eta / mu become float64 (the
    # parameter's dtype) while 'step' stays float32, on both sides
    ours, theirs = _leaves(tensorlib, dtype), _leaves(torch, dtype)
    opt_a, opt_b = _make(tensorlib, name, ours, cfg), _make(torch, name, theirs, cfg)
    for step in range(3):
        _step_both([(opt_a, ours), (opt_b, theirs)], step)
    # torch's state continues here and ours in torch: both go on exactly as before
    fresh_a = _make(tensorlib, name, ours, cfg)
    fresh_a.load_state_dict(_from_torch(opt_b.state_dict()))
    fresh_b = _make(torch, name, theirs, cfg)
    fresh_b.load_state_dict(_to_torch(opt_a.state_dict()))
    for st in fresh_a.state.values():
        for v in st.values():
            if isinstance(v, tensorlib.Tensor):
                assert v.untyped_storage().role_name == "optimizer-state"
    for step in range(3, 6):
        _step_both([(fresh_a, ours), (fresh_b, theirs)], step)
    _assert_same_params(ours, theirs, TOL[dtype])
    _assert_same_state(fresh_a, fresh_b, TOL[dtype])


@pytest.mark.parametrize("name, cfg", CASES, ids=IDS)
def test_state_role_and_no_allocation_in_step(name, cfg):
    params = [tensorlib.nn.Parameter(tensorlib.randn(64, 32)), tensorlib.nn.Parameter(
        tensorlib.randn(32, 64).t()), tensorlib.nn.Parameter(tensorlib.randn(100))]
    opt = _make(tensorlib, name, params, cfg)
    _loss(params, 0).backward()
    opt.step()
    for p in params:
        for key, v in opt.state[p].items():
            assert v.untyped_storage().role_name == "optimizer-state", key
    # what earlier tests left to the cycle collector, or to a device stream, is freed first:
    # freed during the step, it would read as the step's doing
    gc.collect()
    if params[0].is_cuda:
        tensorlib.cuda.synchronize()
    before = tensorlib.memory.memory_allocated()
    tensorlib.memory.reset_peak_memory_stats()
    opt.step()
    assert tensorlib.memory.memory_allocated() == before
    assert tensorlib.memory.max_memory_allocated() == before


@pytest.mark.parametrize("name, cfg", CASES, ids=IDS)
def test_thread_count_does_not_change_results(name, cfg):
    results = []
    old = tensorlib.get_num_threads()
    try:
        for threads in (1, 2):
            tensorlib.set_num_threads(threads)
            tensorlib.manual_seed(0)
            params = [tensorlib.nn.Parameter(tensorlib.randn(50_000)),
                      tensorlib.nn.Parameter(tensorlib.randn(300, 70).t()),
                      tensorlib.nn.Parameter(tensorlib.randn(7))]
            opt = _make(tensorlib, name, params, cfg)
            for step in range(3):
                opt.zero_grad()
                _loss(params, step).backward()
                opt.step()
            results.append([p.detach().numpy().copy() for p in params])
    finally:
        tensorlib.set_num_threads(old)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


VALIDATION = [
    ("SGD", dict(lr=-0.1)),
    ("SGD", dict(momentum=-1.0)),
    ("Adam", dict(lr=-1.0)),
    ("Adam", dict(eps=-1.0)),
    ("Adam", dict(betas=(1.0, 0.9))),
    ("Adam", dict(betas=(0.9, -0.1))),
    ("Adam", dict(weight_decay=-1.0)),
    ("Adam", dict(betas=(0, 0.9))),
    ("AdamW", dict(betas=(0.9, 1.5))),
    ("Adamax", dict(betas=(1.0, 0.9))),
    ("Adamax", dict(eps=-1.0)),
    ("NAdam", dict(momentum_decay=-0.1)),
    ("NAdam", dict(betas=(0.9, 1.0))),
    ("RAdam", dict(weight_decay=-0.5)),
    ("Adagrad", dict(lr_decay=-1.0)),
    ("Adagrad", dict(initial_accumulator_value=-1.0)),
    ("Adagrad", dict(eps=-1.0)),
    ("Adadelta", dict(rho=1.5)),
    ("Adadelta", dict(lr=-1.0)),
    ("RMSprop", dict(alpha=-0.5)),
    ("RMSprop", dict(momentum=-0.5)),
    ("Rprop", dict(etas=(1.5, 1.2))),
    ("Rprop", dict(etas=(0.5, 0.9))),
    ("ASGD", dict(weight_decay=-1.0)),
    ("Adam", dict(fused=True, foreach=True)),
    ("SGD", dict(fused=True, differentiable=True)),
]


@pytest.mark.parametrize("name, bad", VALIDATION, ids=[f"{n}-{b}" for n, b in VALIDATION])
def test_argument_errors_match_torch(name, bad):
    with pytest.raises(Exception) as theirs:
        getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **bad)
    with pytest.raises(theirs.type) as ours:
        getattr(optim, name)([tensorlib.zeros(1, requires_grad=True)], **bad)
    assert str(ours.value) == str(theirs.value)


def test_tensor_lr_matches_torch():
    ours, theirs = _leaves(tensorlib, "float32"), _leaves(torch, "float32")
    opt_a = optim.Adam(ours, lr=tensorlib.tensor(0.05))
    opt_b = torch.optim.Adam(theirs, lr=torch.tensor(0.05))
    for step in range(3):
        _step_both([(opt_a, ours), (opt_b, theirs)], step)
    _assert_same_params(ours, theirs, TOL["float32"])
    ours, theirs = _leaves(tensorlib, "float32"), _leaves(torch, "float32")
    opt_a = optim.Adam(ours, betas=(tensorlib.tensor([0.8]), tensorlib.tensor(0.9)))
    opt_b = torch.optim.Adam(theirs, betas=(torch.tensor([0.8]), torch.tensor(0.9)))
    assert [b.dim() for b in opt_a.param_groups[0]["betas"]] == [0, 0]
    for step in range(3):
        _step_both([(opt_a, ours), (opt_b, theirs)], step)
    _assert_same_params(ours, theirs, TOL["float32"])
    with pytest.raises(ValueError, match="betas must be either both floats or both Tensors"):
        optim.Adam(ours, betas=(tensorlib.tensor(0.8), 0.9))
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        optim.Adam(ours, lr=tensorlib.tensor([0.1, 0.2]))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_parameters_are_updated_in_float32(dtype):
    # the state stays in the parameter's dtype; each step computes in float32 and rounds once
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 9)).astype(np.float32)
    p = tensorlib.tensor(a).to(getattr(tensorlib, dtype)).requires_grad_(True)
    q = torch.tensor(a).to(getattr(torch, dtype)).float().requires_grad_(True)
    opt_a, opt_b = optim.Adam([p], lr=0.05), torch.optim.Adam([q], lr=0.05)
    for step in range(3):
        _step_both([(opt_a, [p]), (opt_b, [q])], step)
    assert p.dtype == getattr(tensorlib, dtype)
    assert opt_a.state[p]["exp_avg"].dtype == p.dtype
    np.testing.assert_allclose(p.detach().float().numpy(), q.detach().numpy(), rtol=3e-2,
                               atol=3e-2)


def test_bad_gradients_raise_before_anything_is_written():
    w = tensorlib.nn.Parameter(tensorlib.ones(4))
    opt = optim.Adam([w], lr=0.1)
    w.grad = tensorlib.ones(4)
    opt.step()
    snapshot = [w.detach().numpy().copy(), opt.state[w]["step"].item()]
    w.grad = w.detach()            # the same memory as the parameter
    with pytest.raises(RuntimeError, match="shares memory with the parameter"):
        opt.step()
    # what the .grad setter already refuses, the kernel's front half checks again
    step, avg, sq = (opt.state[w][k] for k in ("step", "exp_avg", "exp_avg_sq"))
    hp = (0.1, 0.0, 0.9, 0.999, 1e-8)
    for bad, msg in [(tensorlib.ones(4, dtype=tensorlib.float64), "has dtype tensorlib.float64"),
                     (tensorlib.ones(2, 2), r"has shape \[2, 2\] but its parameter has "
                                            r"shape \[4\]"),
                     (3.0, "expected the gradient to be a Tensor")]:
        with pytest.raises((RuntimeError, TypeError), match=msg):
            _fused_optim(1, [w], [bad], [[avg], [sq]], [[step]], hp, 0)
    with pytest.raises(RuntimeError, match="0-d state"):
        _fused_optim(1, [w], [tensorlib.ones(4)], [[avg], [sq]], [[avg]], hp, 0)
    np.testing.assert_array_equal(w.detach().numpy(), snapshot[0])
    assert opt.state[w]["step"].item() == snapshot[1]
    i = tensorlib.zeros(3, dtype=tensorlib.int64)
    i.grad = tensorlib.zeros(3, dtype=tensorlib.int64)
    with pytest.raises(RuntimeError, match="floating-point parameters only"):
        optim.SGD([i], lr=0.1).step()


def test_strided_parameter_with_gaps_is_updated_in_place():
    # a parameter that is a view with gaps: updated through a copy and written back, the
    # elements between its own untouched
    base = tensorlib.zeros(6, 4)
    w = base[::2, 1:3].detach().requires_grad_(True)
    base_t = torch.zeros(6, 4)
    v = base_t[::2, 1:3].detach().requires_grad_(True)
    opt_a, opt_b = optim.SGD([w], lr=0.1, momentum=0.9), torch.optim.SGD([v], lr=0.1,
                                                                          momentum=0.9)
    for step in range(3):
        _step_both([(opt_a, [w]), (opt_b, [v])], step)
    np.testing.assert_allclose(base.numpy(), base_t.numpy(), rtol=1e-6, atol=1e-7)


def test_meta_parameters_step_without_data():
    w = tensorlib.nn.Parameter(tensorlib.empty(1000, device="meta"))
    w.grad = tensorlib.empty(1000, device="meta")
    opt = optim.Adam([w])
    opt.step()
    assert opt.state[w]["exp_avg"].device.type == "meta"


@pytest.mark.parametrize("name", ["adam", "adamw", "adamax", "nadam", "radam", "adagrad",
                                  "adadelta", "rmsprop", "rprop", "asgd", "sgd", "_fused"])
def test_docstring_examples(name):
    module = importlib.import_module(f"tensorlib.optim.{name}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = doctest.testmod(module, extraglobs={"tensorlib": tensorlib},
                                 optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_differentiable_is_refused_at_the_first_step():
    w = tensorlib.zeros(2, requires_grad=True)
    opt = optim.Adam([w], differentiable=True)
    w.grad = tensorlib.ones(2)
    with pytest.raises(RuntimeError, match="differentiable=True is not supported"):
        opt.step()


try:
    from hypothesis import given, settings, strategies as st
except ImportError:        # pragma: no cover
    given = None

if given is not None:
    _shape = st.lists(st.integers(0, 5), min_size=0, max_size=3).map(tuple)

    @settings(max_examples=25, deadline=None)
    @given(shapes=st.lists(_shape, min_size=1, max_size=4),
           case=st.sampled_from([c for c in CASES if c[0] in ("Adam", "SGD", "RMSprop")]),
           dtype=st.sampled_from(["float32", "float64"]))
    def test_random_shapes_match_torch(shapes, case, dtype):
        # 0-d and empty parameters included
        name, cfg = case
        rng = np.random.default_rng(len(shapes))
        arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
        ours = [tensorlib.tensor(a, requires_grad=True) for a in arrays]
        theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
        opt_a, opt_b = _make(tensorlib, name, ours, cfg), _make(torch, name, theirs, cfg)
        for step in range(3):
            _step_both([(opt_a, ours), (opt_b, theirs)], step)
        _assert_same_params(ours, theirs, TOL[dtype])
        _assert_same_state(opt_a, opt_b, TOL[dtype])


@pytest.mark.parametrize("name, cfg", [("Adam", dict(lr=0.05)),
                                       ("SGD", dict(lr=0.05, momentum=0.9))])
def test_parameter_listed_twice_is_updated_twice_like_torch(name, cfg):
    ours, theirs = _leaves(tensorlib, "float64"), _leaves(torch, "float64")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt_a = _make(tensorlib, name, [ours[0], ours[1], ours[0]], cfg)
        opt_b = _make(torch, name, [theirs[0], theirs[1], theirs[0]], cfg)
    for step in range(3):
        _step_both([(opt_a, ours[:2]), (opt_b, theirs[:2])], step)
    _assert_same_params(ours[:2], theirs[:2], TOL["float64"])
    _assert_same_state(opt_a, opt_b, TOL["float64"])


def test_parameters_sharing_memory_are_updated_in_turn():
    # two leaves that overlap in one storage: updated one after the other, as PyTorch's loop
    # does, never both in one parallel pass
    base_a, base_b = tensorlib.zeros(40_000), torch.zeros(40_000)
    ours = [base_a[:30_000].detach().requires_grad_(True),
            base_a[10_000:].detach().requires_grad_(True)]
    theirs = [base_b[:30_000].detach().requires_grad_(True),
              base_b[10_000:].detach().requires_grad_(True)]
    opt_a = optim.SGD(ours, lr=0.1, momentum=0.9)
    opt_b = torch.optim.SGD(theirs, lr=0.1, momentum=0.9)
    for step in range(3):
        _step_both([(opt_a, ours), (opt_b, theirs)], step)
    _close(base_a, base_b, TOL["float32"])


NAMES = ["SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "Adagrad", "Adadelta", "RMSprop",
         "Rprop", "ASGD"]


@pytest.mark.parametrize("name", NAMES)
def test_signature_repr_and_group_keys_match_torch(name):
    import inspect
    ours, theirs = getattr(optim, name), getattr(torch.optim, name)
    sig = [(p.name, p.kind, p.default) for p in inspect.signature(ours).parameters.values()]
    ref = [(p.name, p.kind, p.default) for p in inspect.signature(theirs).parameters.values()]
    assert sig == ref
    a = ours([tensorlib.zeros(1, requires_grad=True)], lr=0.1)
    b = theirs([torch.zeros(1, requires_grad=True)], lr=0.1)
    assert repr(a) == repr(b)
    assert list(a.param_groups[0]) == list(b.param_groups[0])
    assert a.defaults == b.defaults


@pytest.mark.parametrize("name", NAMES)
def test_deepcopy_keeps_state(name):
    import copy
    w = tensorlib.nn.Parameter(tensorlib.ones(3))
    opt = getattr(optim, name)([w], lr=0.1)
    w.grad = tensorlib.ones(3)
    opt.step()
    clone = copy.deepcopy(opt)
    p2 = clone.param_groups[0]["params"][0]
    assert sorted(clone.state[p2]) == sorted(opt.state[w])
    p2.grad = tensorlib.ones(3)
    clone.step()
    assert not np.array_equal(p2.detach().numpy(), w.detach().numpy())
