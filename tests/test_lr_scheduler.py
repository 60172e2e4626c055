"""Learning-rate schedulers side by side with torch.optim.lr_scheduler: the same arguments
give the same learning rates (and momenta/betas) at every step, state_dicts resume
identically (ours and torch's), bad arguments raise torch's errors."""
import math
import warnings

import pytest

import tensorlib
from tensorlib import optim
from tensorlib.optim import lr_scheduler as tl_sched

torch = pytest.importorskip("torch")
t_sched = torch.optim.lr_scheduler

STEPS = 30
LRS = (0.1, 0.03)


class _PlainOpt(optim.Optimizer):
    def __init__(self, params, lr=1e-3):
        super().__init__(params, dict(lr=lr))

    def step(self, closure=None):
        return None


class _TorchPlainOpt(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3):
        super().__init__(params, dict(lr=lr))

    def step(self, closure=None):
        return None


def _optimizers(kind="sgd", lrs=LRS):
    """The same two-group optimizer on both sides."""
    tl_groups = [{"params": [tensorlib.zeros(2, requires_grad=True)], "lr": lr} for lr in lrs]
    t_groups = [{"params": [torch.zeros(2, requires_grad=True)], "lr": lr} for lr in lrs]
    if kind == "sgd":
        return (optim.SGD(tl_groups, lr=0.5, momentum=0.9),
                torch.optim.SGD(t_groups, lr=0.5, momentum=0.9))
    if kind == "betas":
        return (optim.Adam(tl_groups, betas=(0.9, 0.99)),
                torch.optim.Adam(t_groups, betas=(0.9, 0.99)))
    return _PlainOpt(tl_groups), _TorchPlainOpt(t_groups)


def _close(a, b):
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300)


def _assert_same(tl_s, t_s, tl_opt, t_opt, where):
    ours, theirs = tl_s.get_last_lr(), t_s.get_last_lr()
    assert len(ours) == len(theirs)
    assert all(_close(a, b) for a, b in zip(ours, theirs)), (where, ours, theirs)
    for g, h in zip(tl_opt.param_groups, t_opt.param_groups):
        assert _close(g["lr"], h["lr"]), (where, g["lr"], h["lr"])
        assert g.get("initial_lr") == h.get("initial_lr"), where
        for key in ("momentum", "max_momentum", "base_momentum"):
            if key in h:
                assert _close(g[key], h[key]), (where, key, g[key], h[key])
        if "betas" in h:
            assert all(_close(a, b) for a, b in zip(g["betas"], h["betas"])), (where, g, h)


def _chained(m, o):
    return m.ChainedScheduler([m.ConstantLR(o, factor=0.5, total_iters=4),
                               m.ExponentialLR(o, gamma=0.9)])


def _chained2(m, o):
    return m.ChainedScheduler([m.LinearLR(o, start_factor=0.2, total_iters=6),
                               m.MultiStepLR(o, milestones=[5, 9], gamma=0.5)], optimizer=o)


def _sequential(m, o):
    return m.SequentialLR(o, [m.ConstantLR(o, factor=0.1, total_iters=3),
                              m.ExponentialLR(o, gamma=0.8)], milestones=[5])


def _sequential3(m, o):
    return m.SequentialLR(o, [m.LinearLR(o, start_factor=0.25, total_iters=4),
                              m.StepLR(o, step_size=3, gamma=0.5),
                              m.CosineAnnealingLR(o, T_max=8, eta_min=0.001)],
                          milestones=[4, 12])


def _nested(m, o):
    inner = m.SequentialLR(o, [m.LinearLR(o, start_factor=0.5, total_iters=3),
                               m.ExponentialLR(o, gamma=0.9)], milestones=[3])
    return m.ChainedScheduler([inner, m.StepLR(o, 4, gamma=0.5)])


class _Scale:
    """A callable object as scale_fn: its attributes travel in the state_dict."""

    def __init__(self):
        self.base = 0.9

    def __call__(self, x):
        return self.base ** x


CASES = {
    "lambda": ("sgd", lambda m, o: m.LambdaLR(o, lambda e: 0.95 ** e)),
    "lambda_per_group": ("sgd", lambda m, o: m.LambdaLR(o, [lambda e: 1 / (e + 1),
                                                            lambda e: 0.9 ** e])),
    "multiplicative": ("sgd", lambda m, o: m.MultiplicativeLR(o, lambda e: 0.9)),
    "multiplicative_per_group": ("sgd", lambda m, o: m.MultiplicativeLR(
        o, (lambda e: 0.95, lambda e: 1.0 - 0.01 * e))),
    "step": ("sgd", lambda m, o: m.StepLR(o, step_size=3, gamma=0.5)),
    "step_1": ("sgd", lambda m, o: m.StepLR(o, step_size=1, gamma=0.9)),
    "multistep": ("sgd", lambda m, o: m.MultiStepLR(o, milestones=[3, 7, 7, 12], gamma=0.3)),
    "constant": ("sgd", lambda m, o: m.ConstantLR(o, factor=0.5, total_iters=4)),
    "constant_default": ("sgd", lambda m, o: m.ConstantLR(o)),
    "linear": ("sgd", lambda m, o: m.LinearLR(o, start_factor=0.25, end_factor=0.9,
                                              total_iters=10)),
    "linear_default": ("sgd", lambda m, o: m.LinearLR(o)),
    "linear_down": ("sgd", lambda m, o: m.LinearLR(o, start_factor=1.0, end_factor=0.0,
                                                   total_iters=20)),
    "exponential": ("sgd", lambda m, o: m.ExponentialLR(o, gamma=0.9)),
    "polynomial": ("sgd", lambda m, o: m.PolynomialLR(o, total_iters=10, power=2.0)),
    "polynomial_default": ("sgd", lambda m, o: m.PolynomialLR(o)),
    "cosine": ("sgd", lambda m, o: m.CosineAnnealingLR(o, T_max=7, eta_min=0.001)),
    "cosine_zero_min": ("sgd", lambda m, o: m.CosineAnnealingLR(o, T_max=10)),
    "warm_restarts": ("sgd", lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2,
                                                                        eta_min=0.01)),
    "warm_restarts_1": ("sgd", lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5)),
    "cyclic": ("sgd", lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4)),
    "cyclic_triangular2": ("sgd", lambda m, o: m.CyclicLR(
        o, base_lr=[0.01, 0.002], max_lr=[0.1, 0.05], step_size_up=3, step_size_down=5,
        mode="triangular2", base_momentum=[0.8, 0.7], max_momentum=[0.95, 0.9])),
    "cyclic_exp_range": ("sgd", lambda m, o: m.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=4, mode="exp_range", gamma=0.9)),
    "cyclic_scale_fn": ("sgd", lambda m, o: m.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=2, step_size_down=3,
        scale_fn=_Scale(), scale_mode="iterations")),
    "cyclic_scale_fn_cycle": ("sgd", lambda m, o: m.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=5, scale_fn=lambda c: 1.0 / c)),
    "cyclic_betas": ("betas", lambda m, o: m.CyclicLR(o, base_lr=0.001, max_lr=0.01,
                                                      step_size_up=4, mode="triangular2")),
    "cyclic_no_momentum": ("plain", lambda m, o: m.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=4, cycle_momentum=False)),
    "onecycle": ("sgd", lambda m, o: m.OneCycleLR(o, max_lr=[1.0, 0.3], total_steps=STEPS)),
    "onecycle_linear": ("sgd", lambda m, o: m.OneCycleLR(
        o, max_lr=0.5, total_steps=40, anneal_strategy="linear", pct_start=0.25,
        div_factor=10.0, final_div_factor=100.0)),
    "onecycle_three_phase": ("sgd", lambda m, o: m.OneCycleLR(
        o, max_lr=0.5, epochs=4, steps_per_epoch=8, three_phase=True,
        base_momentum=[0.8, 0.75], max_momentum=0.9)),
    "onecycle_betas": ("betas", lambda m, o: m.OneCycleLR(o, max_lr=0.01, total_steps=35,
                                                          three_phase=True,
                                                          anneal_strategy="linear")),
    "onecycle_no_momentum": ("plain", lambda m, o: m.OneCycleLR(
        o, max_lr=0.01, total_steps=32, cycle_momentum=False)),
    "sequential": ("sgd", _sequential),
    "sequential3": ("sgd", _sequential3),
    "sequential_nested": ("sgd", _nested),
    "chained": ("sgd", _chained),
    "chained2": ("sgd", _chained2),
}


def _build(name):
    kind, factory = CASES[name]
    tl_opt, t_opt = _optimizers(kind)
    return tl_opt, t_opt, factory(tl_sched, tl_opt), factory(t_sched, t_opt)


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_sequence_as_torch(name):
    tl_opt, t_opt, tl_s, t_s = _build(name)
    _assert_same(tl_s, t_s, tl_opt, t_opt, "init")
    for i in range(STEPS):
        tl_opt.step(); t_opt.step()
        tl_s.step(); t_s.step()
        _assert_same(tl_s, t_s, tl_opt, t_opt, i)
        assert getattr(tl_s, "last_epoch", None) == getattr(t_s, "last_epoch", None)


@pytest.mark.parametrize("name", sorted(CASES))
def test_state_dict_resumes(name):
    """Halfway, a fresh optimizer and scheduler load the state (ours, and torch's) and go on
    exactly as the original torch pair does; torch's scheduler loads ours too."""
    kind, factory = CASES[name]
    tl_opt, t_opt, tl_s, t_s = _build(name)
    for _ in range(STEPS // 2):
        tl_opt.step(); t_opt.step(); tl_s.step(); t_s.step()
    sd = tl_s.state_dict()
    if name.startswith("lambda") or name.startswith("multiplicative"):
        assert all(fn is None for fn in sd["lr_lambdas"])
    if name == "cyclic_scale_fn":
        assert sd["_scale_fn_custom"] == {"base": 0.9}
    resumed = []
    for source_opt, source_sd in ((tl_opt, sd), (t_opt, t_s.state_dict())):
        opt, _ = _optimizers(kind, lrs=(0.7, 0.2))
        sched = factory(tl_sched, opt)
        opt.load_state_dict(source_opt.state_dict())
        sched.load_state_dict(source_sd)
        resumed.append((opt, sched))
    # ... and torch's scheduler resumes from our state_dict.
    _, torch_opt = _optimizers(kind, lrs=(0.7, 0.2))
    torch_sched = factory(t_sched, torch_opt)
    torch_opt.load_state_dict(t_opt.state_dict())
    torch_sched.load_state_dict(sd)
    for i in range(STEPS // 2):
        t_opt.step(); t_s.step()
        torch_opt.step(); torch_sched.step()
        assert torch_sched.get_last_lr() == t_s.get_last_lr()
        for opt, sched in resumed:
            opt.step(); sched.step()
            _assert_same(sched, t_s, opt, t_opt, i)


def test_state_dict_keys_match_torch():
    for name in ("step", "cyclic", "onecycle", "sequential", "warm_restarts", "lambda"):
        _, _, tl_s, t_s = _build(name)
        assert set(tl_s.state_dict()) == set(t_s.state_dict()), name


def test_callable_lambda_state_saved():
    class Decay:
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, epoch):
            return self.rate ** epoch

    tl_opt, _ = _optimizers()
    a = tl_sched.LambdaLR(tl_opt, [Decay(0.5), lambda e: 1.0])
    assert a.state_dict()["lr_lambdas"] == [{"rate": 0.5}, None]
    b = tl_sched.LambdaLR(tl_opt, [Decay(0.9), lambda e: 1.0])
    b.load_state_dict(a.state_dict())
    assert b.lr_lambdas[0].rate == 0.5


@pytest.mark.parametrize("name,epochs", [
    ("step", [0, 3, 4, 9, 2]), ("multistep", [1, 7, 13, 3]), ("constant", [2, 4, 9, 0]),
    ("linear", [3, 10, 15, 1]), ("exponential", [4, 0, 9]), ("polynomial", [3, 10, 12, 0]),
    ("cosine", [2, 7, 12, 5]), ("lambda", [5, 2]), ("cyclic", [3, 9]),
])
def test_step_with_epoch_closed_form(name, epochs):
    tl_opt, t_opt, tl_s, t_s = _build(name)
    for epoch in epochs:
        tl_opt.step(); t_opt.step()
        with pytest.warns(UserWarning, match="The epoch parameter"):
            tl_s.step(epoch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_s.step(epoch)
        _assert_same(tl_s, t_s, tl_opt, t_opt, epoch)


@pytest.mark.parametrize("T_0,T_mult", [(3, 1), (3, 2), (2, 3)])
def test_warm_restarts_fractional_epochs(T_0, T_mult):
    tl_opt, t_opt = _optimizers()
    tl_s = tl_sched.CosineAnnealingWarmRestarts(tl_opt, T_0=T_0, T_mult=T_mult, eta_min=0.001)
    t_s = t_sched.CosineAnnealingWarmRestarts(t_opt, T_0=T_0, T_mult=T_mult, eta_min=0.001)
    iters = 7
    for epoch in range(12):
        for i in range(iters):
            tl_opt.step(); t_opt.step()
            tl_s.step(epoch + i / iters); t_s.step(epoch + i / iters)
            _assert_same(tl_s, t_s, tl_opt, t_opt, (epoch, i))
            assert tl_s.last_epoch == t_s.last_epoch
            assert _close(tl_s.T_cur, t_s.T_cur) and tl_s.T_i == t_s.T_i


@pytest.mark.parametrize("name", ["cosine", "step", "exponential", "linear", "polynomial"])
def test_resume_with_last_epoch(name):
    """Built with ``last_epoch >= 0`` on an optimizer that has 'initial_lr' (resuming)."""
    kind, factory = CASES[name]
    tl_opt, t_opt = _optimizers(kind)
    for opt in (tl_opt, t_opt):
        for g in opt.param_groups:
            g["initial_lr"] = g["lr"] * 2
    mk = {"cosine": lambda m, o: m.CosineAnnealingLR(o, T_max=7, eta_min=0.001, last_epoch=4),
          "step": lambda m, o: m.StepLR(o, 3, gamma=0.5, last_epoch=5),
          "exponential": lambda m, o: m.ExponentialLR(o, 0.9, last_epoch=2),
          "linear": lambda m, o: m.LinearLR(o, start_factor=0.5, last_epoch=2),
          "polynomial": lambda m, o: m.PolynomialLR(o, total_iters=10, last_epoch=3)}[name]
    tl_s, t_s = mk(tl_sched, tl_opt), mk(t_sched, t_opt)
    _assert_same(tl_s, t_s, tl_opt, t_opt, "init")
    for i in range(10):
        tl_opt.step(); t_opt.step(); tl_s.step(); t_s.step()
        _assert_same(tl_s, t_s, tl_opt, t_opt, i)


PLATEAU = {
    "min_rel": dict(patience=2, factor=0.5),
    "min_abs": dict(patience=1, threshold=0.05, threshold_mode="abs", factor=0.3),
    "max_rel": dict(mode="max", patience=2, threshold=0.01),
    "max_abs": dict(mode="max", patience=0, threshold=0.02, threshold_mode="abs"),
    "cooldown": dict(patience=1, cooldown=3, factor=0.5),
    "min_lr_groups": dict(patience=0, factor=0.5, min_lr=[0.02, 0.001]),
    "min_lr_shared": dict(patience=0, factor=0.2, min_lr=0.005),
    "eps": dict(patience=0, factor=0.9, eps=0.005),
}


def _metrics(n=40):
    # A loss that improves in bursts and stalls in between (deterministic).
    return [1.0 / (1 + (i // 4)) + 0.03 * math.sin(i * 1.7) for i in range(n)]


@pytest.mark.parametrize("name", sorted(PLATEAU))
def test_reduce_on_plateau(name):
    kw = PLATEAU[name]
    tl_opt, t_opt = _optimizers()
    tl_s = tl_sched.ReduceLROnPlateau(tl_opt, **kw)
    t_s = t_sched.ReduceLROnPlateau(t_opt, **kw)
    metrics = _metrics()
    if kw.get("mode") == "max":
        metrics = [-m for m in metrics]
    for i, m in enumerate(metrics):
        tl_opt.step(); t_opt.step()
        tl_s.step(tensorlib.tensor(m, dtype=tensorlib.float64) if i % 2 else m)
        t_s.step(m)
        _assert_same(tl_s, t_s, tl_opt, t_opt, i)
        assert (tl_s.num_bad_epochs, tl_s.cooldown_counter, tl_s.best, tl_s.last_epoch) == \
            (t_s.num_bad_epochs, t_s.cooldown_counter, t_s.best, t_s.last_epoch)
        if i == 20:
            fresh_opt, _ = _optimizers()
            fresh = tl_sched.ReduceLROnPlateau(fresh_opt)
            fresh_opt.load_state_dict(tl_opt.state_dict())
            fresh.load_state_dict(t_s.state_dict())
            tl_opt, tl_s = fresh_opt, fresh
    assert any(g["lr"] != lr for g, lr in zip(t_opt.param_groups, LRS))


def test_plateau_added_group():
    tl_opt, t_opt = _optimizers()
    tl_s = tl_sched.ReduceLROnPlateau(tl_opt, patience=0, min_lr=[0.0, 0.0])
    t_s = t_sched.ReduceLROnPlateau(t_opt, patience=0, min_lr=[0.0, 0.0])
    tl_opt.add_param_group({"params": [tensorlib.zeros(1, requires_grad=True)]})
    t_opt.add_param_group({"params": [torch.zeros(1, requires_grad=True)]})
    tl_s.step(1.0); t_s.step(1.0)
    with pytest.raises(RuntimeError) as ours:
        tl_s.step(2.0)
    with pytest.raises(RuntimeError) as theirs:
        t_s.step(2.0)
    assert str(ours.value) == str(theirs.value)
    shared = tl_sched.ReduceLROnPlateau(tl_opt, patience=0, min_lr=0.01)
    tl_opt.add_param_group({"params": [tensorlib.zeros(1, requires_grad=True)], "lr": 1.0})
    shared.step(1.0); shared.step(2.0)
    assert shared.get_last_lr()[-1] == pytest.approx(0.1) and len(shared.min_lrs) == 4


def test_warns_when_scheduler_steps_before_optimizer():
    tl_opt, _ = _optimizers()
    sched = tl_sched.StepLR(tl_opt, 2)
    with pytest.warns(UserWarning, match=r"Detected call of `lr_scheduler.step\(\)` before"):
        sched.step()
    tl_opt, _ = _optimizers()
    sched = tl_sched.StepLR(tl_opt, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tl_opt.step()
        sched.step()
        sched.step()
    assert tl_opt._opt_called
    # The optimizer's own step hooks still run through the marking wrapper.
    calls = []
    tl_opt.register_step_post_hook(lambda o, a, k: calls.append(1))
    tl_opt.step()
    assert calls == [1]
    tl_opt, _ = _optimizers()
    sched = tl_sched.ExponentialLR(tl_opt, 0.5)
    tl_opt.step = lambda closure=None: None
    with pytest.warns(UserWarning, match="has been overridden after learning rate scheduler"):
        sched.step()


def test_step_wrapped_once_and_no_cycle():
    import gc
    import weakref
    tl_opt, _ = _optimizers()
    a = tl_sched.StepLR(tl_opt, 2)
    step = tl_opt.step
    tl_sched.ExponentialLR(tl_opt, 0.9)
    assert tl_opt.step is step
    ref = weakref.ref(tl_opt)
    gc.disable()
    try:
        del tl_opt, step, a
        assert ref() is None
    finally:
        gc.enable()


def test_get_lr_outside_step_warns():
    tl_opt, _ = _optimizers()
    sched = tl_sched.StepLR(tl_opt, 2)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()


def test_initial_lr_and_base_lrs():
    tl_opt, t_opt, tl_s, t_s = _build("step")
    assert [g["initial_lr"] for g in tl_opt.param_groups] == list(LRS)
    assert tl_s.base_lrs == t_s.base_lrs == list(LRS)
    assert issubclass(tl_sched._LRScheduler, tl_sched.LRScheduler)
    assert optim.lr_scheduler is tl_sched


def test_tensor_lr_filled_in_place():
    lr = tensorlib.tensor(0.5, dtype=tensorlib.float64)
    opt = _PlainOpt([tensorlib.zeros(1, requires_grad=True)], lr=lr)
    sched = tl_sched.ExponentialLR(opt, gamma=0.5)
    opt.step(); sched.step()
    assert opt.param_groups[0]["lr"] is lr and float(lr) == 0.25
    assert float(sched.get_last_lr()[0]) == 0.25 and sched.get_last_lr()[0] is not lr


def _same_error(torch_fn, tl_fn, exact=True):
    with pytest.raises(Exception) as theirs:
        torch_fn()
    with pytest.raises(Exception) as ours:
        tl_fn()
    assert type(ours.value) is type(theirs.value)
    if exact:
        assert str(ours.value) == str(theirs.value)
    else:
        prefix = str(theirs.value).split(" has ")[0]
        assert str(ours.value).startswith(prefix)


BAD = {
    "lambda_count": ("sgd", lambda m, o: m.LambdaLR(o, [lambda e: 1.0])),
    "multiplicative_count": ("sgd", lambda m, o: m.MultiplicativeLR(o, [lambda e: 1.0] * 3)),
    "multiplicative_not_callable": ("sgd", lambda m, o: m.MultiplicativeLR(o, 0.5)),
    "constant_factor": ("sgd", lambda m, o: m.ConstantLR(o, factor=1.5)),
    "linear_start": ("sgd", lambda m, o: m.LinearLR(o, start_factor=0)),
    "linear_end": ("sgd", lambda m, o: m.LinearLR(o, end_factor=1.5)),
    "resume_without_initial_lr": ("sgd", lambda m, o: m.StepLR(o, 2, last_epoch=3)),
    "warm_T_0": ("sgd", lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=0)),
    "warm_T_0_float": ("sgd", lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2.0)),
    "warm_T_mult": ("sgd", lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0)),
    "warm_eta_min": ("sgd", lambda m, o: m.CosineAnnealingWarmRestarts(o, 2, eta_min="0")),
    "warm_negative_epoch": ("sgd", lambda m, o: m.CosineAnnealingWarmRestarts(o, 2).step(-1)),
    "cyclic_mode": ("sgd", lambda m, o: m.CyclicLR(o, 0.1, 1.0, mode="square")),
    "cyclic_no_momentum": ("plain", lambda m, o: m.CyclicLR(o, 0.1, 1.0)),
    "cyclic_base_lr_len": ("sgd", lambda m, o: m.CyclicLR(o, [0.1, 0.2, 0.3], 1.0)),
    "cyclic_max_momentum_len": ("sgd", lambda m, o: m.CyclicLR(o, 0.1, 1.0,
                                                               max_momentum=[0.9])),
    "onecycle_total": ("sgd", lambda m, o: m.OneCycleLR(o, 1.0, total_steps=0)),
    "onecycle_total_float": ("sgd", lambda m, o: m.OneCycleLR(o, 1.0, total_steps=10.0)),
    "onecycle_epochs": ("sgd", lambda m, o: m.OneCycleLR(o, 1.0, epochs=-1, steps_per_epoch=2)),
    "onecycle_spe": ("sgd", lambda m, o: m.OneCycleLR(o, 1.0, epochs=2, steps_per_epoch=0)),
    "onecycle_neither": ("sgd", lambda m, o: m.OneCycleLR(o, 1.0, epochs=2)),
    "onecycle_pct": ("sgd", lambda m, o: m.OneCycleLR(o, 1.0, total_steps=10, pct_start=1.5)),
    "onecycle_pct_int": ("sgd", lambda m, o: m.OneCycleLR(o, 1.0, total_steps=10, pct_start=1)),
    "onecycle_anneal": ("sgd", lambda m, o: m.OneCycleLR(o, 1.0, total_steps=10,
                                                         anneal_strategy="exp")),
    "onecycle_no_momentum": ("plain", lambda m, o: m.OneCycleLR(o, 1.0, total_steps=10)),
    "onecycle_max_lr_len": ("sgd", lambda m, o: m.OneCycleLR(o, [1.0], total_steps=10)),
    "onecycle_overrun": ("sgd", lambda m, o: [s.step() for s in
                                               [m.OneCycleLR(o, 1.0, total_steps=3)]
                                               for _ in range(4)]),
    "plateau_factor": ("sgd", lambda m, o: m.ReduceLROnPlateau(o, factor=1.0)),
    "plateau_mode": ("sgd", lambda m, o: m.ReduceLROnPlateau(o, mode="least")),
    "plateau_threshold_mode": ("sgd", lambda m, o: m.ReduceLROnPlateau(o,
                                                                       threshold_mode="pct")),
    "plateau_min_lrs": ("sgd", lambda m, o: m.ReduceLROnPlateau(o, min_lr=[0.1])),
    "plateau_not_optimizer": ("sgd", lambda m, o: m.ReduceLROnPlateau(o.param_groups)),
    "not_optimizer": ("sgd", lambda m, o: m.StepLR(o.param_groups, 2)),
    "sequential_empty": ("sgd", lambda m, o: m.SequentialLR(o, [], milestones=[])),
    "sequential_milestones": ("sgd", lambda m, o: m.SequentialLR(
        o, [m.StepLR(o, 2), m.StepLR(o, 3)], milestones=[1, 2])),
    "sequential_plateau": ("sgd", lambda m, o: m.SequentialLR(
        o, [m.StepLR(o, 2), m.ReduceLROnPlateau(o)], milestones=[1])),
    "sequential_no_optimizer": ("sgd", lambda m, o: m.SequentialLR(o, [object()], [])),
    "chained_empty": ("sgd", lambda m, o: m.ChainedScheduler([])),
    "chained_plateau": ("sgd", lambda m, o: m.ChainedScheduler([m.ReduceLROnPlateau(o)])),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_arguments_raise_torchs_errors(name):
    kind, fn = BAD[name]
    tl_opt, t_opt = _optimizers(kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same_error(lambda: fn(t_sched, t_opt), lambda: fn(tl_sched, tl_opt))


def test_schedulers_of_another_optimizer():
    (tl_a, t_a), (tl_b, t_b) = _optimizers(), _optimizers()
    for build in (lambda m, a, b: m.SequentialLR(a, [m.StepLR(b, 2)], milestones=[]),
                  lambda m, a, b: m.ChainedScheduler([m.StepLR(a, 2), m.StepLR(b, 2)])):
        _same_error(lambda: build(t_sched, t_a, t_b), lambda: build(tl_sched, tl_a, tl_b),
                    exact=False)


def test_verbose_is_not_an_argument():
    """torch 2.13 removed the deprecated ``verbose`` argument; so do we."""
    tl_opt, t_opt = _optimizers()
    _same_error(lambda: t_sched.StepLR(t_opt, 2, verbose=True),
                lambda: tl_sched.StepLR(tl_opt, 2, verbose=True), exact=False)


def test_docstring_examples():
    import doctest
    failed = doctest.testmod(tl_sched, extraglobs={"tensorlib": tensorlib}).failed
    assert failed == 0
