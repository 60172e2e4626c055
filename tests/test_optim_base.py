"""The optimizer base class (param groups, zero_grad, hooks, state_dict in PyTorch's layout)
and SGD, side by side with torch."""
import copy
import doctest
import importlib
import pickle
import warnings

import numpy as np
import pytest

import tensorlib
from tensorlib import optim

torch = pytest.importorskip("torch")


def _pair(shapes, seed=0):
    """The same starting parameters as tensorlib and torch leaves."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    ours = [tensorlib.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    return ours, theirs


def _loss(params, lib, step):
    """A loss whose gradient changes with the parameters and the step."""
    total = 0
    for i, p in enumerate(params):
        total = total + ((p * p).sum() * (0.5 + 0.1 * i) + (p * (step + 1)).sin().sum())
    return total


def _run(make_ours, make_theirs, shapes=((3, 4), (5,), (2, 2, 2)), steps=5, groups=None):
    ours, theirs = _pair(shapes)
    if groups is None:
        opt_a, opt_b = make_ours(ours), make_theirs(theirs)
    else:
        opt_a = make_ours([dict(g, params=[ours[i] for i in g["params"]]) for g in groups])
        opt_b = make_theirs([dict(g, params=[theirs[i] for i in g["params"]]) for g in groups])
    for step in range(steps):
        opt_a.zero_grad()
        opt_b.zero_grad()
        _loss(ours, tensorlib, step).backward()
        _loss(theirs, torch, step).backward()
        opt_a.step()
        opt_b.step()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    return opt_a, opt_b, ours, theirs


SGD_CONFIGS = [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3),
    dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01),
    dict(lr=0.05, momentum=0.5, maximize=True),
    dict(lr=0.02, weight_decay=0.1),
]


@pytest.mark.parametrize("cfg", SGD_CONFIGS, ids=str)
def test_sgd_matches_torch(cfg):
    opt_a, opt_b, _, _ = _run(lambda p: optim.SGD(p, **cfg), lambda p: torch.optim.SGD(p, **cfg))
    sa, sb = opt_a.state_dict(), opt_b.state_dict()
    assert sa["param_groups"] == sb["param_groups"]
    assert sorted(sa["state"]) == sorted(sb["state"])
    for k in sb["state"]:
        assert sorted(sa["state"][k]) == sorted(sb["state"][k])
        for name, v in sb["state"][k].items():
            np.testing.assert_allclose(sa["state"][k][name].numpy(), v.numpy(), rtol=1e-5)


def test_param_groups_with_different_lrs_match_torch():
    groups = [{"params": [0], "lr": 0.5}, {"params": [1, 2], "momentum": 0.9}]
    _run(lambda g: optim.SGD(g, lr=0.01), lambda g: torch.optim.SGD(g, lr=0.01), groups=groups)


def test_repr_matches_torch():
    a, b = _pair([(2,)])
    assert repr(optim.SGD(a, lr=0.1, momentum=0.9)) == repr(torch.optim.SGD(b, lr=0.1,
                                                                            momentum=0.9))


def _to_torch(obj):
    if isinstance(obj, tensorlib.Tensor):
        return torch.tensor(obj.numpy())
    if isinstance(obj, dict):
        return {k: _to_torch(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_to_torch(v) for v in obj]
    return obj


def _from_torch(obj):
    if isinstance(obj, torch.Tensor):
        return tensorlib.tensor(obj.numpy())
    if isinstance(obj, dict):
        return {k: _from_torch(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_from_torch(v) for v in obj]
    return obj


def test_state_dict_exchange_both_ways():
    cfg = dict(lr=0.05, momentum=0.9)
    opt_a, opt_b, ours, theirs = _run(lambda p: optim.SGD(p, **cfg),
                                      lambda p: torch.optim.SGD(p, **cfg), steps=3)
    # torch's state loads here, ours in torch; both then continue identically
    fresh_a = optim.SGD(ours, lr=1.0)
    fresh_a.load_state_dict(_from_torch(opt_b.state_dict()))
    fresh_b = torch.optim.SGD(theirs, lr=1.0)
    fresh_b.load_state_dict(_to_torch(opt_a.state_dict()))
    assert fresh_a.param_groups[0]["lr"] == fresh_b.param_groups[0]["lr"] == 0.05
    for step in range(3, 6):
        for o in (fresh_a, fresh_b):
            o.zero_grad()
        _loss(ours, tensorlib, step).backward()
        _loss(theirs, torch, step).backward()
        fresh_a.step()
        fresh_b.step()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_load_state_dict_casts_to_param_dtype_and_keeps_role():
    w = tensorlib.zeros(2, dtype=tensorlib.float64, requires_grad=True)
    opt = optim.SGD([w], lr=0.1, momentum=0.9)
    opt.load_state_dict({"state": {0: {"momentum_buffer": tensorlib.ones(2)}},
                         "param_groups": [opt.state_dict()["param_groups"][0]]})
    buf = opt.state[w]["momentum_buffer"]
    assert buf.dtype == tensorlib.float64
    assert buf.untyped_storage().role_name == "optimizer-state"


def test_load_state_dict_mismatch_errors():
    a, b = tensorlib.zeros(1, requires_grad=True), tensorlib.zeros(1, requires_grad=True)
    opt = optim.SGD([a, b])
    sd = opt.state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        optim.SGD([{"params": [a]}, {"params": [b]}]).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        optim.SGD([a]).load_state_dict(sd)


def test_momentum_state_is_counted_as_optimizer_state():
    w = tensorlib.nn.Parameter(tensorlib.zeros(1000))
    opt = optim.SGD([w], lr=0.1, momentum=0.9)
    w.sum().backward()
    opt.step()
    assert opt.state[w]["momentum_buffer"].untyped_storage().role_name == "optimizer-state"


@pytest.mark.parametrize("bad, exc, msg", [
    (dict(lr=-1.0), ValueError, "Invalid learning rate: -1.0"),
    (dict(momentum=-0.5), ValueError, "Invalid momentum value: -0.5"),
    (dict(weight_decay=-1), ValueError, "Invalid weight_decay value: -1"),
    (dict(nesterov=True), ValueError, "Nesterov momentum requires a momentum and zero dampening"),
])
def test_sgd_argument_errors_match_torch(bad, exc, msg):
    with pytest.raises(exc, match=msg):
        optim.SGD([tensorlib.zeros(1, requires_grad=True)], **bad)
    with pytest.raises(exc, match=msg):
        torch.optim.SGD([torch.zeros(1, requires_grad=True)], **bad)


def test_construction_errors():
    a = tensorlib.zeros(2, requires_grad=True)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts, but got "
                                        "tensorlib.FloatTensor"):
        optim.SGD(a)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([])
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([a * 2])
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the "
                                        "params is int"):
        optim.SGD([a, 3])
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        optim.SGD([{"params": [a]}, {"params": [a]}])
    with pytest.raises(TypeError, match="ordered collections"):
        optim.SGD([{"params": {a}}])
    with pytest.raises(TypeError, match="param_group must be a dict"):
        optim.SGD([a]).add_param_group([a])
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([a, a])


def test_named_parameters_give_param_names():
    m = tensorlib.nn.Linear(2, 3)
    opt = optim.SGD(m.named_parameters(), lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]
    with pytest.raises(ValueError, match="with/without names"):
        opt.add_param_group({"params": [tensorlib.zeros(1, requires_grad=True)]})


def test_zero_grad_modes():
    w = tensorlib.ones(3, requires_grad=True)
    opt = optim.SGD([w])
    (w * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert w.grad is not None and w.grad.tolist() == [0.0, 0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None


def test_step_runs_without_recording_a_graph_and_returns_closure_loss():
    w = tensorlib.ones(2, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert loss.item() == 2.0
    assert w.grad_fn is None and w.is_leaf
    np.testing.assert_allclose(w.detach().numpy(), [0.8, 0.8], rtol=1e-6)


def test_step_hooks_order_and_argument_replacement():
    w = tensorlib.ones(1, requires_grad=True)
    opt = optim.SGD([w], lr=1.0)
    seen = []
    calls = []

    def closure():
        calls.append("closure")
        return tensorlib.tensor(0.0)

    h_global = optim.optimizer.register_optimizer_step_pre_hook(
        lambda o, a, k: seen.append("global-pre"))
    h_pre = opt.register_step_pre_hook(lambda o, a, k: (seen.append("pre"), ((closure,), {}))[1])
    h_post = opt.register_step_post_hook(lambda o, a, k: seen.append(("post", len(a))))
    h_gpost = optim.optimizer.register_optimizer_step_post_hook(
        lambda o, a, k: seen.append("global-post"))
    try:
        opt.step()
    finally:
        for h in (h_global, h_pre, h_post, h_gpost):
            h.remove()
    assert seen == ["global-pre", "pre", ("post", 1), "global-post"]
    assert calls == ["closure"]
    seen.clear()
    opt.step()
    assert seen == []
    bad = opt.register_step_pre_hook(lambda o, a, k: 5)
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt.step()
    bad.remove()


def test_state_dict_hooks():
    w = tensorlib.ones(1, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    assert opt.state_dict()["extra"] == 1
    seen = []
    opt.register_load_state_dict_pre_hook(lambda o, sd: seen.append("pre"))
    opt.register_load_state_dict_post_hook(lambda o: seen.append("post"))
    opt.load_state_dict(opt.state_dict())
    assert seen == ["pre", "post"]


def test_optimizer_pickles_and_deepcopies():
    w = tensorlib.ones(2, requires_grad=True)
    opt = optim.SGD([w], lr=0.1, momentum=0.9)
    w.sum().backward()
    opt.step()
    for clone in (pickle.loads(pickle.dumps(opt)), copy.deepcopy(opt)):
        p2 = clone.param_groups[0]["params"][0]
        assert clone.state[p2]["momentum_buffer"].tolist() == [1.0, 1.0]
        assert repr(clone) == repr(opt)
        clone.register_step_pre_hook(lambda o, a, k: None)


def test_lr_change_in_param_group_takes_effect():
    w = tensorlib.zeros(1, requires_grad=True)
    opt = optim.SGD([w], lr=0.1)
    opt.param_groups[0]["lr"] = 2.0
    w.sum().backward()
    opt.step()
    assert w.tolist() == [-2.0]


def test_typename_matches_torch():
    double = tensorlib.zeros(1, dtype=tensorlib.float64)
    assert tensorlib.typename(double) == "tensorlib.DoubleTensor"
    assert tensorlib.typename(3) == torch.typename(3) == "int"
    assert tensorlib.typename([]) == torch.typename([]) == "list"


@pytest.mark.parametrize("name", ["tensorlib.optim", "tensorlib.optim.optimizer",
                                  "tensorlib.optim.sgd"])
def test_docstring_examples(name):
    module = importlib.import_module(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = doctest.testmod(module, extraglobs={"tensorlib": tensorlib},
                                 optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
