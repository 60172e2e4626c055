"""swa_utils side by side with torch.optim.swa_utils: the same weights copied across,
tensorlib.nn modules against torch.nn modules."""
import warnings

import numpy as np
import pytest

import tensorlib
from tensorlib.optim import swa_utils
from tensorlib import optim

torch = pytest.importorskip("torch")
t_swa = torch.optim.swa_utils


def _models():
    ours = tensorlib.nn.Sequential(
        tensorlib.nn.Linear(3, 5, dtype=tensorlib.float64),
        tensorlib.nn.BatchNorm1d(5, dtype=tensorlib.float64), tensorlib.nn.ReLU(),
        tensorlib.nn.Linear(5, 2, dtype=tensorlib.float64))
    theirs = torch.nn.Sequential(
        torch.nn.Linear(3, 5, dtype=torch.float64), torch.nn.BatchNorm1d(5, dtype=torch.float64),
        torch.nn.ReLU(), torch.nn.Linear(5, 2, dtype=torch.float64))
    return ours, theirs


def _load(ours, theirs, rng):
    """New random weights, the same on both sides."""
    with torch.no_grad(), tensorlib.no_grad():
        for (name, p), (name2, q) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert name == name2
            value = rng.standard_normal(tuple(q.shape))
            q.copy_(torch.tensor(value))
            p.copy_(tensorlib.tensor(value, dtype=tensorlib.float64))


def _train_step(ours, theirs, rng):
    """New weights and one training-mode forward (moves the BatchNorm statistics)."""
    _load(ours, theirs, rng)
    x = rng.standard_normal((8, 3))
    ours.train(); theirs.train()
    ours(tensorlib.tensor(x, dtype=tensorlib.float64)); theirs(torch.tensor(x))


def _assert_state_equal(ours, theirs, rtol=1e-12):
    a, b = ours.state_dict(), theirs.state_dict()
    assert list(a) == list(b)
    for key in a:
        assert str(a[key].dtype).split(".")[-1] == str(b[key].dtype).split(".")[-1], key
        np.testing.assert_allclose(np.array(a[key].tolist()), b[key].numpy(), rtol=rtol,
                                   atol=1e-14, err_msg=key)


AVERAGING = {
    "swa": lambda m: dict(),
    "swa_buffers": lambda m: dict(use_buffers=True),
    "ema_multi": lambda m: dict(multi_avg_fn=m.get_ema_multi_avg_fn(0.9)),
    "ema_multi_buffers": lambda m: dict(multi_avg_fn=m.get_ema_multi_avg_fn(0.8),
                                        use_buffers=True),
    "swa_multi": lambda m: dict(multi_avg_fn=m.get_swa_multi_avg_fn()),
    "ema": lambda m: dict(avg_fn=m.get_ema_avg_fn(0.95)),
    "ema_buffers": lambda m: dict(avg_fn=m.get_ema_avg_fn(0.7), use_buffers=True),
    "swa_fn": lambda m: dict(avg_fn=m.get_swa_avg_fn()),
    "custom": lambda m: dict(avg_fn=lambda avg, cur, n: 0.5 * avg + 0.5 * cur),
    "device": lambda m: dict(device="cpu"),
}


@pytest.mark.parametrize("name", sorted(AVERAGING))
def test_averaged_model_matches_torch(name):
    rng = np.random.default_rng(1)
    ours, theirs = _models()
    _load(ours, theirs, rng)
    avg_ours = swa_utils.AveragedModel(ours, **AVERAGING[name](swa_utils))
    avg_theirs = t_swa.AveragedModel(theirs, **AVERAGING[name](t_swa))
    _assert_state_equal(avg_ours, avg_theirs)
    for _ in range(6):
        _train_step(ours, theirs, rng)
        avg_ours.update_parameters(ours)
        avg_theirs.update_parameters(theirs)
        _assert_state_equal(avg_ours, avg_theirs)
    assert avg_ours.n_averaged.item() == 6
    assert avg_ours.module is not ours
    x = rng.standard_normal((4, 3))
    avg_ours.eval(); avg_theirs.eval()
    np.testing.assert_allclose(np.array(avg_ours(tensorlib.tensor(x, dtype=tensorlib.float64))
                                        .tolist()),
                               avg_theirs(torch.tensor(x)).detach().numpy(), rtol=1e-12)


def test_swa_is_the_mean_of_the_snapshots():
    rng = np.random.default_rng(2)
    ours, theirs = _models()
    avg = swa_utils.AveragedModel(ours)
    snapshots = []
    for _ in range(5):
        _train_step(ours, theirs, rng)
        avg.update_parameters(ours)
        snapshots.append(np.array(ours[0].weight.tolist()))
    np.testing.assert_allclose(np.array(avg.module[0].weight.tolist()),
                               np.mean(snapshots, axis=0), rtol=1e-12)
    # Buffers are copied, not averaged, without use_buffers.
    np.testing.assert_array_equal(np.array(avg.module[1].running_mean.tolist()),
                                  np.array(ours[1].running_mean.tolist()))


def test_averaged_model_state_dict_loads_in_torch_layout():
    rng = np.random.default_rng(3)
    ours, theirs = _models()
    avg_ours = swa_utils.AveragedModel(ours)
    avg_theirs = t_swa.AveragedModel(theirs)
    _train_step(ours, theirs, rng)
    avg_theirs.update_parameters(theirs)
    state = {k: tensorlib.tensor(v.numpy()) for k, v in avg_theirs.state_dict().items()}
    avg_ours.load_state_dict(state)
    _assert_state_equal(avg_ours, avg_theirs)


def test_errors():
    ours, theirs = _models()
    for bad in (-0.1, 1.5):
        for name in ("get_ema_avg_fn", "get_ema_multi_avg_fn"):
            with pytest.raises(ValueError) as a:
                getattr(t_swa, name)(bad)
            with pytest.raises(ValueError) as b:
                getattr(swa_utils, name)(bad)
            assert str(a.value) == str(b.value)
    fn = lambda a, b, n: a  # noqa: E731
    with pytest.raises(AssertionError) as a:
        t_swa.AveragedModel(theirs, avg_fn=fn, multi_avg_fn=fn)
    with pytest.raises(AssertionError) as b:
        swa_utils.AveragedModel(ours, avg_fn=fn, multi_avg_fn=fn)
    assert str(a.value) == str(b.value)
    # SWA's multi-tensor average of integer buffers fails in torch as here.
    results = []
    for mod, model in ((t_swa, theirs), (swa_utils, ours)):
        avg = mod.AveragedModel(model, multi_avg_fn=mod.get_swa_multi_avg_fn(),
                                use_buffers=True)
        avg.update_parameters(model)
        with pytest.raises(RuntimeError) as e:
            avg.update_parameters(model)
        results.append(str(e.value))
    assert results[0] == results[1]


@pytest.mark.parametrize("with_targets", [False, True])
def test_update_bn_matches_torch(with_targets):
    rng = np.random.default_rng(5)
    ours, theirs = _models()
    _load(ours, theirs, rng)
    batches = [rng.standard_normal((6, 3)) for _ in range(4)]
    if with_targets:
        loader_ours = [(tensorlib.tensor(b, dtype=tensorlib.float64), 0) for b in batches]
        loader_theirs = [[torch.tensor(b), 0] for b in batches]
    else:
        loader_ours = [tensorlib.tensor(b, dtype=tensorlib.float64) for b in batches]
        loader_theirs = [torch.tensor(b) for b in batches]
    ours.eval(); theirs.eval()
    ours[1].momentum = theirs[1].momentum = 0.3
    swa_utils.update_bn(loader_ours, ours, device="cpu" if with_targets else None)
    t_swa.update_bn(loader_theirs, theirs)
    _assert_state_equal(ours, theirs, rtol=1e-12)
    assert not ours.training and ours[1].momentum == 0.3
    assert ours[1].num_batches_tracked.item() == 4
    # The running statistics are the plain average of the per-batch ones.
    pre = [b @ np.array(ours[0].weight.tolist()).T + np.array(ours[0].bias.tolist())
           for b in batches]
    np.testing.assert_allclose(np.array(ours[1].running_mean.tolist()),
                               np.mean([p.mean(0) for p in pre], axis=0), rtol=1e-12)


def test_update_bn_without_batchnorm_does_nothing():
    model = tensorlib.nn.Linear(2, 2)
    model.eval()
    swa_utils.update_bn(iter(()), model)
    assert not model.training


def _sgd_pair(lrs=(0.5, 0.2)):
    tl = optim.SGD([{"params": [tensorlib.zeros(1, requires_grad=True)], "lr": lr}
                    for lr in lrs])
    tt = torch.optim.SGD([{"params": [torch.zeros(1, requires_grad=True)], "lr": lr}
                          for lr in lrs])
    return tl, tt


@pytest.mark.parametrize("kw", [
    dict(swa_lr=0.05), dict(swa_lr=[0.05, 0.01], anneal_epochs=3, anneal_strategy="linear"),
    dict(swa_lr=0.1, anneal_epochs=0), dict(swa_lr=0.3, anneal_epochs=1, anneal_strategy="cos"),
    dict(swa_lr=0.01, anneal_epochs=7, anneal_strategy="cos"),
])
def test_swalr_matches_torch(kw):
    tl, tt = _sgd_pair()
    ours, theirs = swa_utils.SWALR(tl, **kw), t_swa.SWALR(tt, **kw)
    for i in range(30):
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12, abs=1e-300)
        assert [g["lr"] for g in tl.param_groups] == pytest.approx(
            [g["lr"] for g in tt.param_groups], rel=1e-12)
        assert [g["swa_lr"] for g in tl.param_groups] == [g["swa_lr"] for g in tt.param_groups]
        tl.step(); tt.step(); ours.step(); theirs.step()
        if i == 12:
            fresh_opt, _ = _sgd_pair((0.9, 0.9))
            fresh = swa_utils.SWALR(fresh_opt, swa_lr=0.5, anneal_strategy="linear")
            fresh_opt.load_state_dict(tl.state_dict())
            state = theirs.state_dict()
            assert set(state) == set(ours.state_dict())
            fresh.load_state_dict(state)
            tl, ours = fresh_opt, fresh


def test_swalr_errors():
    for kw in (dict(swa_lr=0.1, anneal_strategy="step"), dict(swa_lr=0.1, anneal_epochs=-1),
               dict(swa_lr=0.1, anneal_epochs=2.5), dict(swa_lr=[0.1, 0.2, 0.3])):
        tl, tt = _sgd_pair()
        with pytest.raises(ValueError) as a:
            t_swa.SWALR(tt, **kw)
        with pytest.raises(ValueError) as b:
            swa_utils.SWALR(tl, **kw)
        assert str(a.value) == str(b.value)
    tl, _ = _sgd_pair()
    sched = swa_utils.SWALR(tl, swa_lr=0.1)
    with pytest.warns(UserWarning, match="get_last_lr"):
        sched.get_lr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tl.step(); sched.step()


def test_docstring_examples():
    import doctest
    assert doctest.testmod(swa_utils, extraglobs={"tensorlib": tensorlib}).failed == 0
