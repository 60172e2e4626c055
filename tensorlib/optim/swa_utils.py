"""Weight averaging, PyTorch's ``torch.optim.swa_utils``: ``AveragedModel`` keeps a running
average (SWA, equal weights) or an exponential moving average (EMA) of a model's
parameters; ``SWALR`` anneals the learning rate to a constant for the averaging phase;
``update_bn`` recomputes BatchNorm statistics for the averaged weights.

>>> model = tensorlib.nn.Linear(2, 1)
>>> swa = AveragedModel(model)
>>> with tensorlib.no_grad():
...     _ = model.weight.fill_(1.0); swa.update_parameters(model)
...     _ = model.weight.fill_(3.0); swa.update_parameters(model)
>>> swa.module.weight.tolist(), swa.n_averaged.item()
([[2.0, 2.0]], 2)
"""
import itertools
import math
import warnings
from copy import deepcopy

import tensorlib
from tensorlib.nn import Module
from tensorlib.nn.modules.normalization import _BatchNorm
from tensorlib.optim.lr_scheduler import LRScheduler, _GET_LR_WARNING, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place EMA update over lists of tensors:
    ``ema = decay * ema + (1 - decay) * current`` (a ``lerp_`` for floating-point tensors).

    >>> ema, cur = [tensorlib.zeros(2)], [tensorlib.ones(2)]
    >>> get_ema_multi_avg_fn(0.75)(ema, cur, 1); ema[0].tolist()
    [0.25, 0.25]
    """
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _):
        with tensorlib.no_grad():
            if ema_param_list[0].is_floating_point():
                for ema, cur in zip(ema_param_list, current_param_list, strict=True):
                    ema.lerp_(cur, 1 - decay)
            else:
                for ema, cur in zip(ema_param_list, current_param_list, strict=True):
                    ema.copy_(ema * decay + cur * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """An in-place running-mean update over lists of tensors: after ``n`` averaged models,
    ``avg += (current - avg) / (n + 1)``.

    >>> avg, cur = [tensorlib.zeros(2)], [tensorlib.full((2,), 3.0)]
    >>> get_swa_multi_avg_fn()(avg, cur, 2); avg[0].tolist()
    [1.0, 1.0]
    """

    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with tensorlib.no_grad():
            if averaged_param_list[0].is_floating_point():
                # The weight is computed as PyTorch does (a default-dtype tensor when
                # num_averaged is one), so the averages agree to the last bit.
                weight = 1 / (num_averaged + 1)
                weight = weight.item() if isinstance(weight, tensorlib.Tensor) else weight
                for avg, cur in zip(averaged_param_list, current_param_list, strict=True):
                    avg.lerp_(cur, weight)
            elif isinstance(num_averaged, tensorlib.Tensor):
                raise RuntimeError(
                    "Integer division with addcdiv is no longer supported, and in a future  "
                    "release addcdiv will perform a true division of tensor1 and tensor2. The "
                    "historic addcdiv behavior can be implemented as (input + value * "
                    "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and "
                    "as (input + value * tensor1 / tensor2) for float inputs. The future "
                    "addcdiv behavior is just the latter implementation: (input + value * "
                    "tensor1 / tensor2), for all dtypes.")
            else:
                for avg, cur in zip(averaged_param_list, current_param_list, strict=True):
                    avg.add_(cur - avg, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """A per-tensor EMA: returns ``decay * ema + (1 - decay) * current``.

    >>> get_ema_avg_fn(0.5)(tensorlib.zeros(1), tensorlib.ones(1), 1).tolist()
    [0.5]
    """
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with tensorlib.no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """A per-tensor running mean: returns ``avg + (current - avg) / (n + 1)``.

    >>> get_swa_avg_fn()(tensorlib.zeros(1), tensorlib.full((1,), 4.0), 3).tolist()
    [1.0]
    """

    def swa_update(averaged_param, current_param, num_averaged):
        with tensorlib.no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` (on ``device`` if given) whose parameters are an average of the
    ones passed to ``update_parameters``: an equal-weight running mean (SWA) by default, or
    what ``avg_fn(averaged, current, n_averaged)`` returns per tensor, or what
    ``multi_avg_fn(averaged_list, current_list, n_averaged)`` does in place per group of
    tensors of one device and dtype. ``use_buffers=True`` averages the buffers too;
    otherwise they are copied from the model. ``n_averaged`` is a buffer (saved with the
    state_dict). Calling it runs the averaged copy.

    >>> model = tensorlib.nn.Linear(2, 1)
    >>> ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
    >>> ema.update_parameters(model); ema(tensorlib.ones(1, 2)).shape
    tensorlib.Size([1, 1])
    """

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged",
                             tensorlib.tensor(0, dtype=tensorlib.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        """The averaged model's forward."""
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Fold ``model``'s current parameters (and buffers, with ``use_buffers``) into the
        average; the first call copies them.

        >>> model = tensorlib.nn.Linear(1, 1, bias=False)
        >>> swa = AveragedModel(model)
        >>> for v in (1.0, 2.0, 6.0):
        ...     with tensorlib.no_grad():
        ...         _ = model.weight.fill_(v)
        ...     swa.update_parameters(model)
        >>> swa.module.weight.item()
        3.0
        """
        with tensorlib.no_grad():
            self._update(model)

    def _update(self, model):
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        averaged, current = [], []
        first = bool(self.n_averaged == 0)
        for p_avg, p_model in zip(mine, theirs):
            p_model = p_model.detach().to(p_avg.device)
            averaged.append(p_avg.detach())
            current.append(p_model)
            if first:
                p_avg.detach().copy_(p_model)
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                groups = {}
                for p_avg, p_model in zip(averaged, current):
                    key = (p_avg.device, p_avg.dtype)
                    groups.setdefault(key, ([], []))
                    groups[key][0].append(p_avg)
                    groups[key][1].append(p_model)
                for (device, _), (avg_list, cur_list) in groups.items():
                    n = self.n_averaged.to(device)
                    if self.multi_avg_fn is not None:
                        self.multi_avg_fn(avg_list, cur_list, n)
                    else:
                        # One tensor at a time, the formula PyTorch uses on the CPU.
                        swa = get_swa_avg_fn()
                        for p_avg, p_model in zip(avg_list, cur_list, strict=True):
                            p_avg.copy_(swa(p_avg, p_model, n))
            else:
                for p_avg, p_model in zip(averaged, current, strict=True):
                    n = self.n_averaged.to(p_avg.device)
                    p_avg.copy_(self.avg_fn(p_avg, p_model, n))
        if not self.use_buffers:
            # Buffers (BatchNorm statistics) are not averaged: keep the model's latest.
            for b_avg, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_avg.detach().copy_(b_model.detach().to(b_avg.device))
        self.n_averaged += 1


def update_bn(loader, model, device=None):
    """Recompute every BatchNorm layer's running statistics with one pass over ``loader``
    (batches, or tuples/lists whose first item is the input; moved to ``device`` if given):
    the statistics are reset and accumulated as a plain average (``momentum=None``); the
    layers' momenta and the model's training mode are restored after. Nothing happens when
    the model has no BatchNorm layer.

    >>> model = tensorlib.nn.BatchNorm1d(2)
    >>> update_bn([tensorlib.tensor([[0.0, 1.0], [2.0, 3.0]])], model)
    >>> model.running_mean.tolist()
    [1.0, 2.0]
    """
    with tensorlib.no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to its ``swa_lr`` (one value or one per group) over
    ``anneal_epochs`` steps ('cos' or 'linear'), then hold it: the schedule for the
    averaging phase of SWA.

    >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = SWALR(opt, swa_lr=0.5, anneal_epochs=2, anneal_strategy="linear")
    >>> rates = [sched.get_last_lr()[0]]
    >>> for _ in range(3):
    ...     opt.step(); sched.step(); rates.append(sched.get_last_lr()[0])
    >>> rates
    [1.0, 0.75, 0.5, 0.5]
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        for value, group in zip(_format_param("swa_lr", optimizer, swa_lr),
                                optimizer.param_groups, strict=True):
            group["swa_lr"] = value
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        # The lr the annealing started from, recovered from the current one.
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        """The rates for the next step of the annealing."""
        if not self._get_lr_called_within_step:
            warnings.warn(_GET_LR_WARNING, UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / span)))
        alpha = self.anneal_func(max(0, min(1, step / span)))
        groups = self.optimizer.param_groups
        starts = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        return [g["swa_lr"] * alpha + lr * (1 - alpha)
                for g, lr in zip(groups, starts, strict=True)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" \
            else self._linear_anneal

    def state_dict(self):
        """The attributes except the optimizer and the annealing function.

        >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
        >>> "anneal_func" in SWALR(opt, swa_lr=0.1).state_dict()
        False
        """
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        """Restore the attributes and the annealing function they name.

        >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)], lr=1.0)
        >>> a = SWALR(opt, 0.1, anneal_strategy="linear"); b = SWALR(opt, 0.1)
        >>> b.load_state_dict(a.state_dict()); b.anneal_func(0.5)
        0.5
        """
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
