"""Learning-rate schedulers, PyTorch's ``torch.optim.lr_scheduler``.

A scheduler owns an optimizer and rewrites each parameter group's ``"lr"`` (and, for the
cyclic schedules, ``"momentum"`` or ``"betas"``) every time ``scheduler.step()`` is called,
normally once per epoch after ``optimizer.step()``. The learning rates follow PyTorch's
formulas step for step, including its recursive ("chainable") forms, so a training script
sees the same sequence of rates as under torch and several schedulers may act on one optimizer.

>>> w = tensorlib.zeros(1, requires_grad=True)
>>> opt = tensorlib.optim.SGD([w], lr=1.0)
>>> sched = StepLR(opt, step_size=2, gamma=0.5)
>>> rates = []
>>> for epoch in range(5):
...     opt.step(); sched.step(); rates.append(sched.get_last_lr()[0])
>>> rates
[1.0, 0.5, 0.5, 0.25, 0.25]
"""
import math
import types
import warnings
import weakref
from bisect import bisect_right
from collections import Counter
from functools import wraps

import tensorlib
from tensorlib.optim.optimizer import Optimizer

__all__ = ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
           "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler",
           "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR",
           "PolynomialLR", "LRScheduler"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
    "where possible. Please use `scheduler.step()` to step the scheduler. During the "
    "deprecation, if epoch is different from None, the closed form is used instead of the new "
    "chainable form, where available. Please open an issue if you are unable to replicate your "
    "use case: https://github.com/pytorch/pytorch/issues/new/choose.")

_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and "
    "later, you should call them in the opposite order: `optimizer.step()` before "
    "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first "
    "value of the learning rate schedule. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate")

_OVERRIDDEN_WARNING = (
    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
    "initialization. Please, make sure to call `optimizer.step()` before `lr_scheduler.step()`. "
    "See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate")

_GET_LR_WARNING = ("To get the last learning rate computed by the scheduler, please use "
                   "`get_last_lr()`.")


def _copy_value(value):
    return value.clone() if isinstance(value, tensorlib.Tensor) else value


def _format_param(name, optimizer, param):
    """One value per parameter group: a list/tuple must have one entry per group, a single
    value is repeated."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(param)} values, param_groups has "
                             f"{len(optimizer.param_groups)}.")
    else:
        param = [param] * len(optimizer.param_groups)
    return [_copy_value(p) for p in param]


def _group_values(optimizer, key):
    return [_copy_value(group[key]) for group in optimizer.param_groups]


def _set_group_value(group, key, value):
    """Write ``value`` into ``group[key]``; a tensor-valued option is filled in place, so
    whoever holds that tensor (a compiled step, a captured graph) sees the new value."""
    if isinstance(group[key], tensorlib.Tensor):
        group[key].fill_(float(value))
    else:
        group[key] = value


def _mark_step_called(optimizer):
    """Make ``optimizer.step`` record that it ran (``optimizer._opt_called``), so the first
    ``scheduler.step()`` can warn when it comes before any ``optimizer.step()``. The
    instance attribute holds the optimizer weakly: no reference cycle through its own
    ``__dict__``."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    step = optimizer.step.__func__
    owner = weakref.ref(optimizer)

    @wraps(step)
    def step_and_mark(*args, **kwargs):
        opt = owner()
        opt._opt_called = True
        return step(opt, *args, **kwargs)

    step_and_mark._wrapped_by_lr_sched = True
    optimizer.step = step_and_mark


class _Flag:
    """Set the boolean attribute ``name`` of a scheduler for the duration of a block."""

    def __init__(self, scheduler, name):
        self.scheduler, self.name = scheduler, name

    def __enter__(self):
        setattr(self.scheduler, self.name, True)

    def __exit__(self, *exc):
        setattr(self.scheduler, self.name, False)


def _warn_if_outside_step(scheduler):
    if not scheduler._get_lr_called_within_step:
        warnings.warn(_GET_LR_WARNING, UserWarning, stacklevel=3)


class LRScheduler:
    """Base class of the epoch-indexed schedulers. On creation (``last_epoch=-1``) each group
    gets ``"initial_lr"`` (its current lr) and the scheduler takes its first step, setting
    the epoch-0 rates. Subclasses give ``get_lr()`` (the next rates, computed from the
    groups' current ones) and optionally ``_get_closed_form_lr()`` (the rates at
    ``last_epoch`` from ``base_lrs``, used by the deprecated ``step(epoch)``).

    Resuming with ``last_epoch >= 0`` requires ``"initial_lr"`` in every group (load the
    optimizer's state_dict first).

    >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=0.1)
    >>> sched = ExponentialLR(opt, gamma=0.5)
    >>> opt.param_groups[0]["initial_lr"], sched.last_epoch, sched.base_lrs
    (0.1, 0, [0.1])
    """

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy_value(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming scheduler with last_epoch >= 0.\nThis typically happens "
                        "when:\n1. You're trying to resume training from a checkpoint but "
                        "haven't properly loaded the optimizer state\n2. You're using "
                        "last_epoch >= 0 for a fresh training run (not recommended)")
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _mark_step_called(optimizer)
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        with _Flag(self, "_is_initial"):
            self.step()

    def state_dict(self):
        """The scheduler's state: every attribute except the optimizer.

        >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=0.1)
        >>> StepLR(opt, step_size=3).state_dict()["last_epoch"]
        0
        """
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restore the attributes saved by ``state_dict`` (ours or torch's: the keys agree).

        >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=0.1)
        >>> a, b = StepLR(opt, step_size=3), StepLR(opt, step_size=5)
        >>> opt.step(); a.step(); b.load_state_dict(a.state_dict()); b.step_size, b.last_epoch
        (3, 1)
        """
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The learning rates the last ``step()`` set, one per parameter group.

        >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=0.1)
        >>> ConstantLR(opt, factor=0.5).get_last_lr()
        [0.05]
        """
        return self._last_lr

    def get_lr(self):
        """The learning rates for the epoch ``last_epoch``; subclasses implement it, and
        ``step()`` calls it (read the current rates with ``get_last_lr()``).

        >>> class Halving(LRScheduler):
        ...     def get_lr(self):
        ...         return [base * 0.5 ** self.last_epoch for base in self.base_lrs]
        >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = Halving(opt); opt.step(); sched.step(); sched.get_last_lr()
        [0.5]
        """
        raise NotImplementedError

    def step(self, epoch=None):
        """Advance one epoch and write the new rates into the groups. Passing ``epoch`` is
        deprecated (a warning): it jumps there using the closed form where one exists.

        >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
        >>> sched = ExponentialLR(opt, gamma=0.5)
        >>> opt.step(); sched.step(); opt.param_groups[0]["lr"], sched.last_epoch
        (0.5, 1)
        """
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(_OVERRIDDEN_WARNING, UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(_ORDER_WARNING, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        with _Flag(self, "_get_lr_called_within_step"):
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


class _LRScheduler(LRScheduler):
    """The old name of ``LRScheduler``, kept for code that subclasses it.

    >>> issubclass(_LRScheduler, LRScheduler)
    True
    """


class _LambdaMixin:
    """state_dict/load_state_dict for schedulers holding ``lr_lambdas``: plain functions and
    lambdas are not saved (``None``), callable objects save their ``__dict__``."""

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        saved = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, attrs in zip(self.lr_lambdas, saved):
            if attrs is not None:
                fn.__dict__.update(attrs)


def _lambdas(optimizer, lr_lambda):
    if isinstance(lr_lambda, (list, tuple)):
        if len(lr_lambda) != len(optimizer.param_groups):
            raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                             f"{len(lr_lambda)}")
        return list(lr_lambda)
    return [lr_lambda] * len(optimizer.param_groups)


class LambdaLR(_LambdaMixin, LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``; ``lr_lambda`` is one function or one per
    group. Lambdas are not saved by ``state_dict`` (callable objects' attributes are).

    >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = LambdaLR(opt, lambda epoch: 0.5 ** epoch)
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """``base_lr * lr_lambda(last_epoch)`` per group."""
        _warn_if_outside_step(self)
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs,
                                                               strict=True)]


class MultiplicativeLR(_LambdaMixin, LRScheduler):
    """Multiply each group's lr by ``lr_lambda(epoch)`` at every step (not at creation).

    >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = MultiplicativeLR(opt, lambda epoch: 0.5)
    >>> opt.step(); sched.step(); opt.step(); sched.step(); sched.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """Each group's current lr times its lambda at ``last_epoch``."""
        _warn_if_outside_step(self)
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * fn(self.last_epoch)
                for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups, strict=True)]


class StepLR(LRScheduler):
    """Multiply the lr by ``gamma`` every ``step_size`` epochs.

    >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = StepLR(opt, step_size=1, gamma=0.1)
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.1]
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The current lr, times ``gamma`` on multiples of ``step_size``."""
        _warn_if_outside_step(self)
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the lr by ``gamma`` at each milestone epoch (by ``gamma**k`` for a milestone
    listed ``k`` times).

    >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = MultiStepLR(opt, milestones=[2], gamma=0.5)
    >>> for _ in range(3):
    ...     opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The current lr, reduced at milestones."""
        _warn_if_outside_step(self)
        if self.last_epoch not in self.milestones:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * self.gamma ** self.milestones[self.last_epoch]
                for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma ** passed for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """``lr * factor`` for the first ``total_iters`` epochs, then ``lr``.

    >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = ConstantLR(opt, factor=0.5, total_iters=1)
    >>> before = sched.get_last_lr(); opt.step(); sched.step(); before, sched.get_last_lr()
    ([0.5], [1.0])
    """

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """``factor`` applied at epoch 0, removed at ``total_iters``."""
        _warn_if_outside_step(self)
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * (1.0 / self.factor) for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    """The lr factor goes linearly from ``start_factor`` to ``end_factor`` over
    ``total_iters`` epochs, then stays.

    >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> rates = [sched.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     opt.step(); sched.step(); rates.append(sched.get_last_lr()[0])
    >>> rates
    [0.5, 0.75, 1.0, 1.0]
    """

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The current lr scaled by the ratio of this epoch's factor to the last one's."""
        _warn_if_outside_step(self)
        if self.last_epoch == 0:
            return [g["lr"] * self.start_factor for g in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        span = self.end_factor - self.start_factor
        ratio = 1.0 + span / (self.total_iters * self.start_factor
                              + (self.last_epoch - 1) * span)
        return [g["lr"] * ratio for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        span = self.end_factor - self.start_factor
        done = min(self.total_iters, self.last_epoch)
        return [base * (self.start_factor + span * done / self.total_iters)
                for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the lr by ``gamma`` every epoch.

    >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = ExponentialLR(opt, gamma=0.5)
    >>> opt.step(); sched.step(); opt.step(); sched.step(); sched.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The current lr times ``gamma``."""
        _warn_if_outside_step(self)
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class _SchedulerList:
    """state_dict/load_state_dict for schedulers made of schedulers: each inner scheduler's
    own state_dict, in order."""

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        inner = state.pop("_schedulers")
        self.__dict__.update(state)
        for scheduler, saved in zip(self._schedulers, inner):
            scheduler.load_state_dict(saved)


def _check_schedulers(owner, optimizer, schedulers):
    name = type(owner).__name__
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(f"{name} does not support `ReduceLROnPlateau` scheduler as it "
                             "requires additional kwargs to be specified when calling `step`, "
                             f"but got one at index {i} in the given schedulers sequence.")
        if optimizer != scheduler.optimizer:
            raise ValueError(f"{name} expects all schedulers to belong to the same optimizer, "
                             f"but got scheduler {type(scheduler).__name__} at index {i} has "
                             f"{scheduler.optimizer}, which is different from "
                             f"{type(optimizer).__name__}.")


class SequentialLR(_SchedulerList, LRScheduler):
    """Run ``schedulers[0]`` until ``milestones[0]``, then ``schedulers[1]`` (restarted
    from its epoch 0), and so on: warm-up followed by decay.

    >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
    >>> warm = ConstantLR(opt, factor=0.1, total_iters=2)
    >>> decay = ExponentialLR(opt, gamma=0.5)
    >>> sched = SequentialLR(opt, [warm, decay], milestones=[2])
    >>> rates = [sched.get_last_lr()[0]]
    >>> for _ in range(4):
    ...     opt.step(); sched.step(); rates.append(round(sched.get_last_lr()[0], 6))
    >>> rates
    [0.1, 0.1, 1.0, 0.5, 0.25]
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler, but got "
                             "no scheduler.")
        _check_schedulers(self, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be "
                             "one more than the number of milestone points, but got number of "
                             f"schedulers {len(schedulers)} and the number of milestones to be "
                             f"equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Each inner scheduler already stepped once when it was built; undo that so the
        # first one starts over from the initial rates at epoch 0.
        for group in optimizer.param_groups:
            _set_group_value(group, "lr", group["initial_lr"])
        self.recursive_undo()
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def recursive_undo(self, sched=None):
        """Move every (nested) inner scheduler's ``last_epoch`` one epoch back."""
        target = self if sched is None else sched
        if hasattr(target, "_schedulers"):
            for inner in target._schedulers:
                self.recursive_undo(inner)
        elif hasattr(target, "last_epoch"):
            target.last_epoch -= 1

    def step(self):
        """Step the scheduler in charge of this epoch; at a milestone the next one starts
        at its epoch 0."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class PolynomialLR(LRScheduler):
    """``lr = initial_lr * (1 - epoch / total_iters) ** power`` until ``total_iters``.

    >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = PolynomialLR(opt, total_iters=4, power=1.0)
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.75]
    """

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The current lr times the ratio of consecutive decay factors."""
        _warn_if_outside_step(self)
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        now = 1.0 - self.last_epoch / self.total_iters
        before = 1.0 - (self.last_epoch - 1) / self.total_iters
        factor = (now / before) ** self.power
        return [g["lr"] * factor for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        done = min(self.total_iters, self.last_epoch)
        return [base * (1.0 - done / self.total_iters) ** self.power for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from ``initial_lr`` to ``eta_min`` over ``T_max`` epochs (and back up
    after, as a cosine does), in PyTorch's recursive form.

    >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = CosineAnnealingLR(opt, T_max=2)
    >>> for _ in range(2):
    ...     opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.0]
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The next rate from the current one (from ``base_lrs`` when resuming)."""
        _warn_if_outside_step(self)
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        if self._step_count == 1 and self.last_epoch > 0:
            return [self.eta_min + (base - self.eta_min)
                    * (1 + math.cos(self.last_epoch * math.pi / self.T_max)) / 2
                    for base in self.base_lrs]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            bump = (1 - math.cos(math.pi / self.T_max)) / 2
            return [g["lr"] + (base - self.eta_min) * bump
                    for base, g in zip(self.base_lrs, self.optimizer.param_groups, strict=True)]
        ratio = ((1 + math.cos(math.pi * self.last_epoch / self.T_max))
                 / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max)))
        return [ratio * (g["lr"] - self.eta_min) + self.eta_min
                for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class ChainedScheduler(_SchedulerList, LRScheduler):
    """Step several schedulers together each epoch; their effects multiply (each must be
    one that works from the groups' current lr).

    >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = ChainedScheduler([ConstantLR(opt, factor=0.5, total_iters=2),
    ...                           ExponentialLR(opt, gamma=0.9)])
    >>> opt.step(); sched.step(); [round(x, 6) for x in sched.get_last_lr()]
    [0.45]
    """

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler to be "
                             "chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(self, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def step(self):
        """Step every scheduler in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")


class ReduceLROnPlateau(LRScheduler):
    """Multiply the lr by ``factor`` when ``step(metric)`` has seen no improvement for
    ``patience`` epochs: improvement is relative (``threshold_mode='rel'``) or absolute by
    ``threshold``, in ``mode`` 'min' or 'max'; after a reduction, ``cooldown`` epochs pass
    before counting again; lrs never go below ``min_lr`` (one per group or shared), and
    changes smaller than ``eps`` are skipped.

    >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = ReduceLROnPlateau(opt, patience=1, factor=0.5)
    >>> for loss in [1.0, 1.0, 1.0]:
    ...     sched.step(loss)
    >>> sched.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got "
                                 f"{len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        """Record one epoch's metric (anything ``float()`` accepts, e.g. a 0-d tensor)."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self, epoch):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs "
                    f"from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), "
                    "usually due to a new param group being added to the optimizer. Please "
                    "modify the `min_lrs` field to match the length of the `optimizer` param "
                    "groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old = float(group["lr"])
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:
                _set_group_value(group, "lr", new)

    @property
    def in_cooldown(self):
        """Whether a reduction happened less than ``cooldown`` epochs ago.

        >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
        >>> ReduceLROnPlateau(opt).in_cooldown
        False
        """
        return self.cooldown_counter > 0

    def _is_better(self, a, best):
        if self.mode == "min":
            if self.threshold_mode == "rel":
                return a < best * (1.0 - self.threshold)
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict):
        """Restore the saved attributes (and the comparison they configure).

        >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
        >>> a, b = ReduceLROnPlateau(opt, mode="max"), ReduceLROnPlateau(opt)
        >>> b.load_state_dict(a.state_dict()); b.mode
        'max'
        """
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold,
                             threshold_mode=self.threshold_mode)


def _cycle_momentum_setup(scheduler, optimizer, base_momentum, max_momentum, last_epoch):
    """Shared by CyclicLR and OneCycleLR: momentum cycles through group['momentum'] (SGD,
    RMSprop) or the first of group['betas'] (Adam and friends)."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` "
                         "option enabled")
    scheduler.use_beta1 = "betas" in optimizer.defaults
    max_momentums = _format_param("max_momentum", optimizer, max_momentum)
    base_momentums = _format_param("base_momentum", optimizer, base_momentum)
    if last_epoch == -1:
        for top, bottom, group in zip(max_momentums, base_momentums, optimizer.param_groups,
                                      strict=True):
            _set_momentum(scheduler, group, top)
            group["max_momentum"] = top
            group["base_momentum"] = bottom
    return base_momentums, max_momentums


def _set_momentum(scheduler, group, value):
    if scheduler.use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith, 2017), stepped once per batch: the lr goes from
    ``base_lr`` up to ``max_lr`` in ``step_size_up`` steps and back in ``step_size_down``,
    the amplitude scaled per cycle ('triangular': constant, 'triangular2': halved each
    cycle) or per iteration ('exp_range': ``gamma**iteration``), or by a custom
    ``scale_fn`` with ``scale_mode``. With ``cycle_momentum`` the momentum (or beta1)
    moves the opposite way between ``base_momentum`` and ``max_momentum``.

    >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=0.1,
    ...                           momentum=0.9)
    >>> sched = CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    >>> rates = []
    >>> for _ in range(4):
    ...     opt.step(); sched.step(); rates.append(round(sched.get_last_lr()[0], 6))
    >>> rates
    [0.3, 0.5, 0.3, 0.1]
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                _set_group_value(group, "lr", lr)
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.base_momentums, self.max_momentums = _cycle_momentum_setup(
                self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self):
        # The built-in modes fix the scale mode; a custom scale_fn keeps the one given.
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = self._triangular_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = self._triangular2_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            gamma = self.gamma
            self._scale_fn_ref = lambda x: gamma ** x
            self.scale_mode = "iterations"

    def scale_fn(self, x):
        """The amplitude scale at cycle (or iteration) ``x``.

        >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], momentum=0.9)
        >>> CyclicLR(opt, 0.1, 1.0, mode="triangular2").scale_fn(3)
        0.25
        """
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    @staticmethod
    def _triangular_scale_fn(x):
        return 1.0

    @staticmethod
    def _triangular2_scale_fn(x):
        return 1 / (2.0 ** (x - 1))

    def get_lr(self):
        """The rates at ``last_epoch`` (and the momenta, written into the groups)."""
        _warn_if_outside_step(self)
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            rise = x / self.step_ratio
        else:
            rise = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + ((top - base) * rise) * scale
               for base, top in zip(self.base_lrs, self.max_lrs, strict=True)]
        if self.cycle_momentum:
            for group, bottom, top in zip(self.optimizer.param_groups, self.base_momentums,
                                          self.max_momentums, strict=True):
                _set_momentum(self, group, top - ((top - bottom) * rise) * scale)
        return lrs

    def state_dict(self):
        """The attributes, with the scale function left out (a plain function or lambda
        saves as ``None``; a callable object saves its ``__dict__``).

        >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], momentum=0.9)
        >>> CyclicLR(opt, 0.1, 1.0).state_dict()["_scale_fn_custom"] is None
        True
        """
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict):
        """Restore the attributes; a callable scale object gets its saved attributes back.

        >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], momentum=0.9)
        >>> a, b = CyclicLR(opt, 0.1, 1.0, mode="exp_range", gamma=0.5), CyclicLR(opt, 0.1, 1.0)
        >>> b.load_state_dict(a.state_dict()); b.scale_fn(2)
        0.25
        """
        state = dict(state_dict)
        fn = state.pop("_scale_fn_custom")
        super().load_state_dict(state)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR (Loshchilov & Hutter): cosine annealing from ``initial_lr`` to ``eta_min`` over
    ``T_i`` epochs, then a restart, each period ``T_mult`` times the last. ``step(epoch)``
    accepts fractional epochs (``epoch + batch / batches``) for per-batch annealing.

    >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = CosineAnnealingWarmRestarts(opt, T_0=2)
    >>> rates = []
    >>> for _ in range(3):
    ...     opt.step(); sched.step(); rates.append(round(sched.get_last_lr()[0], 6))
    >>> rates
    [0.5, 1.0, 0.5]
    >>> sched.step(0.5); round(sched.get_last_lr()[0], 6)
    0.853553
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        """The rates at position ``T_cur`` of the current period ``T_i``."""
        _warn_if_outside_step(self)
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2 for base in self.base_lrs]

    def step(self, epoch=None):
        """Advance one epoch, or jump to ``epoch`` (may be fractional)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch < self.T_0:
                self.T_i = self.T_0
                self.T_cur = epoch
            elif self.T_mult == 1:
                self.T_cur = epoch % self.T_0
            else:
                # Periods T_0 * T_mult**k end at T_0 * (T_mult**(n) - 1) / (T_mult - 1).
                n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                self.T_i = self.T_0 * self.T_mult ** n
        self.last_epoch = math.floor(epoch)
        with _Flag(self, "_get_lr_called_within_step"):
            values = self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin), stepped once per batch for ``total_steps`` (or
    ``epochs * steps_per_epoch``) steps: the lr rises from ``max_lr / div_factor`` to
    ``max_lr`` over the first ``pct_start`` of the steps, then anneals ('cos' or 'linear')
    to ``initial_lr / final_div_factor``; ``three_phase`` comes back down to the initial lr
    symmetrically before the final anneal. With ``cycle_momentum`` the momentum (or beta1)
    moves opposite to the lr between ``max_momentum`` and ``base_momentum``.

    >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=0.1,
    ...                           momentum=0.9)
    >>> sched = OneCycleLR(opt, max_lr=1.0, total_steps=4, anneal_strategy="linear",
    ...                    pct_start=0.5)
    >>> rates = [sched.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     opt.step(); sched.step(); rates.append(round(sched.get_last_lr()[0], 6))
    >>> rates
    [0.04, 1.0, 0.500002, 4e-06]
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True,
                 base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError("Expected positive integer steps_per_epoch, but got "
                                 f"{steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND "
                             "steps_per_epoch)")
        rise_end = float(pct_start * self.total_steps) - 1
        last = self.total_steps - 1
        if three_phase:
            self._schedule_phases = [
                self._phase(rise_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                self._phase(float(2 * pct_start * self.total_steps) - 2, "max_lr",
                            "initial_lr", "base_momentum", "max_momentum"),
                self._phase(last, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._schedule_phases = [
                self._phase(rise_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                self._phase(last, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _format_param("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for top, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _cycle_momentum_setup(self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _phase(end_step, start_lr, end_lr, start_momentum, end_momentum):
        return {"end_step": end_step, "start_lr": start_lr, "end_lr": end_lr,
                "start_momentum": start_momentum, "end_momentum": end_momentum}

    def _anneal_func(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return self._annealing_cos(start, end, pct)
        if self._anneal_func_type == "linear":
            return self._annealing_linear(start, end, pct)
        raise ValueError(f"Unknown _anneal_func_type: {self._anneal_func_type}")

    @staticmethod
    def _annealing_cos(start, end, pct):
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _annealing_linear(start, end, pct):
        return (end - start) * pct + start

    def get_lr(self):
        """The rates at step ``last_epoch`` (and the momenta, written into the groups)."""
        _warn_if_outside_step(self)
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps "
                             f"is {self.total_steps}")
        lrs = []
        phases = self._schedule_phases
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(phases):
                end = phase["end_step"]
                if step <= end or i == len(phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal_func(group[phase["start_lr"]],
                                                 group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        _set_momentum(self, group, self._anneal_func(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct))
                    break
                start = end
        return lrs
