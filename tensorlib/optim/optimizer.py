"""The optimizer base class, PyTorch's ``torch.optim.Optimizer``.

An optimizer holds ``param_groups`` (a list of dicts: ``"params"``, a list of tensors, plus
the group's options, missing ones filled from ``defaults``) and ``state`` (a dict from each
parameter to its per-parameter state: momentum buffers, moment estimates, a step count).
Subclasses implement ``step``; everything else — adding groups, ``zero_grad``, step hooks,
and ``state_dict``/``load_state_dict`` in PyTorch's layout (parameters numbered in group
order, so a state_dict written by torch loads here and ours loads in torch) — lives here.

>>> w = tensorlib.nn.Parameter(tensorlib.ones(2))
>>> opt = tensorlib.optim.SGD([w], lr=0.5)
>>> w.sum().backward(); opt.step(); w.tolist()
[0.5, 0.5]
"""
import functools
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from copy import deepcopy
from itertools import chain
import warnings

import tensorlib
from tensorlib.utils.hooks import RemovableHandle

__all__ = ["Optimizer", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook", "required"]


class _RequiredParameter:
    """The default of an option every group must give (``required``)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

_global_step_pre_hooks = OrderedDict()
_global_step_post_hooks = OrderedDict()

_HOOK_DICTS = ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
               "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
               "_optimizer_load_state_dict_pre_hooks", "_optimizer_load_state_dict_post_hooks")


def register_optimizer_step_pre_hook(hook):
    """Run ``hook(optimizer, args, kwargs)`` before every optimizer's ``step``; it may return
    ``(new_args, new_kwargs)``. Returns a handle whose ``remove()`` unregisters it.

    >>> h = tensorlib.optim.optimizer.register_optimizer_step_pre_hook(lambda o, a, k: None)
    >>> h.remove()
    """
    handle = RemovableHandle(_global_step_pre_hooks)
    _global_step_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """Run ``hook(optimizer, args, kwargs)`` after every optimizer's ``step``.

    >>> h = tensorlib.optim.optimizer.register_optimizer_step_post_hook(lambda o, a, k: None)
    >>> h.remove()
    """
    handle = RemovableHandle(_global_step_post_hooks)
    _global_step_post_hooks[handle.id] = hook
    return handle


def _with_step_hooks(step):
    """Wrap a subclass's ``step``: the global and the optimizer's pre-hooks (which may
    replace the arguments), the step under ``no_grad`` (unless the optimizer was built with
    ``differentiable=True``), then the post-hooks."""
    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        for hook in chain(_global_step_pre_hooks.values(),
                          self._optimizer_step_pre_hooks.values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{step} must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {result}.")
                args, kwargs = result
        with tensorlib.set_grad_enabled(bool(self.defaults.get("differentiable", False))):
            out = step(self, *args, **kwargs)
        for hook in chain(self._optimizer_step_post_hooks.values(),
                          _global_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out
    wrapper._wrapped_by_step_hooks = True
    return wrapper


def _group_defaults(optimizer, **options):
    """Fill options a state_dict from an older PyTorch may lack into every parameter group
    (what each optimizer's ``__setstate__`` does after the base's)."""
    for group in optimizer.param_groups:
        for name, value in options.items():
            group.setdefault(name, value)


def _cast_state(param, value, key=None):
    """A loaded state value made to match ``param``: tensors moved to its device and, when
    the parameter is floating point, cast to its dtype — except ``"step"``, a count that
    keeps its own dtype, as in PyTorch."""
    if isinstance(value, tensorlib.Tensor):
        if key == "step":
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)
    if isinstance(value, dict):
        return {k: _cast_state(param, v, k) for k, v in value.items()}
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        return type(value)(_cast_state(param, v) for v in value)
    return value


class Optimizer:
    """Base class of the optimizers: ``params`` is an iterable of tensors, of
    ``(name, tensor)`` pairs, or of dicts (parameter groups, each with its own options);
    ``defaults`` fills the options a group leaves out.

    >>> a, b = tensorlib.zeros(2, requires_grad=True), tensorlib.zeros(3, requires_grad=True)
    >>> opt = tensorlib.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.1}], lr=1.0)
    >>> [g["lr"] for g in opt.param_groups]
    [1.0, 0.1]
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_wrapped_by_step_hooks", False):
            cls.step = _with_step_hooks(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        for name in _HOOK_DICTS:
            setattr(self, name, OrderedDict())
        if isinstance(params, tensorlib.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + tensorlib.typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in _HOOK_DICTS:
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self.defaults.setdefault("differentiable", False)

    def __repr__(self):
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {key}: {group[key]}" for key in sorted(group) if key != "params")
        return "\n".join(lines) + "\n)"

    def add_param_group(self, param_group):
        """Add a group of parameters with its own options (those it leaves out come from
        ``defaults``): how a fine-tuning script unfreezes layers as training goes on.

        >>> a, b = tensorlib.zeros(1, requires_grad=True), tensorlib.zeros(1, requires_grad=True)
        >>> opt = tensorlib.optim.SGD([a], lr=0.1)
        >>> opt.add_param_group({"params": b, "lr": 0.01}); len(opt.param_groups)
        2
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, tensorlib.Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        tensors, names = [], []
        for p in params:
            if isinstance(p, tuple):
                names.append(p[0])
                p = p[1]
            tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. "
                                 "Some param names are missing")
            param_group["param_names"] = names
        for p in tensors:
            if not isinstance(p, tensorlib.Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + tensorlib.typename(p))
            if not self.defaults.get("differentiable", None) and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len({id(p) for p in tensors}) != len(tensors):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Clear every parameter's ``.grad``: drop it (``set_to_none=True``, the default: the
        memory is freed and the next backward writes a fresh gradient) or fill it with zeros.

        >>> w = tensorlib.ones(2, requires_grad=True); opt = tensorlib.optim.SGD([w])
        >>> w.sum().backward(); opt.zero_grad(); w.grad is None
        True
        """
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                if p.grad.grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                p.grad.zero_()

    def step(self, closure=None):
        """Update the parameters once from their ``.grad``; ``closure``, when given,
        re-evaluates the model and returns the loss (LBFGS needs it). Subclasses implement
        this.
        """
        raise NotImplementedError

    def _init_state(self, p, **tensors):
        """Create ``p``'s state on its first step: each keyword a tensor (or a number) that
        becomes ``self.state[p][name]``, with tensor storages counted under the memory role
        ``"optimizer-state"``."""
        state = self.state[p]
        for name, value in tensors.items():
            if isinstance(value, tensorlib.Tensor) and value.device.type != "meta":
                value.untyped_storage().role = "optimizer-state"
            state[name] = value
        return state

    # -- hooks ---------------------------------------------------------------------------

    def _register(self, hooks, hook, prepend=False):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_step_pre_hook(self, hook):
        """Run ``hook(optimizer, args, kwargs)`` before this optimizer's ``step``; it may
        return ``(new_args, new_kwargs)``.

        >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)])
        >>> h = opt.register_step_pre_hook(lambda o, a, k: None); h.remove()
        """
        return self._register(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """Run ``hook(optimizer, args, kwargs)`` after this optimizer's ``step``.

        >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)])
        >>> h = opt.register_step_post_hook(lambda o, a, k: None); h.remove()
        """
        return self._register(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """Run ``hook(optimizer)`` before ``state_dict`` packs the state.

        >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)])
        >>> h = opt.register_state_dict_pre_hook(lambda o: None); h.remove()
        """
        return self._register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """Run ``hook(optimizer, state_dict)`` on the packed state; a returned dict replaces
        it.

        >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)])
        >>> h = opt.register_state_dict_post_hook(lambda o, sd: None); h.remove()
        """
        return self._register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """Run ``hook(optimizer, state_dict)`` before loading; a returned dict is loaded
        instead.

        >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)])
        >>> h = opt.register_load_state_dict_pre_hook(lambda o, sd: None); h.remove()
        """
        return self._register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """Run ``hook(optimizer)`` after loading.

        >>> opt = tensorlib.optim.SGD([tensorlib.zeros(1, requires_grad=True)])
        >>> h = opt.register_load_state_dict_post_hook(lambda o: None); h.remove()
        """
        return self._register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state_dict ----------------------------------------------------------------------

    def state_dict(self):
        """The optimizer's state in PyTorch's layout: ``{"state": {i: {...}},
        "param_groups": [{options..., "params": [i, ...]}]}``, parameters numbered by their
        position in the groups (one listed twice in a group: its last position). The state
        tensors are the optimizer's own, not copies.

        >>> w = tensorlib.zeros(2, requires_grad=True)
        >>> opt = tensorlib.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> w.sum().backward(); opt.step()
        >>> sd = opt.state_dict(); list(sd["state"][0]), sd["param_groups"][0]["params"]
        (['momentum_buffer'], [0])
        """
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        numbers = {}
        groups = []
        start = 0
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            # numbered by position, as PyTorch: a parameter listed twice in one group takes
            # its last position, one already numbered in an earlier group keeps that number
            numbers.update({id(p): i for i, p in enumerate(group["params"], start)
                            if id(p) not in numbers})
            packed["params"] = [numbers[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {(numbers[id(k)] if isinstance(k, tensorlib.Tensor) else k): v
                 for k, v in self.state.items()}
        state_dict = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        """Load a ``state_dict`` (ours or torch's): the groups must match this optimizer's in
        number and sizes; their options replace the current ones, and each state tensor is
        copied to its parameter's device (and dtype, for floating-point parameters).

        >>> w = tensorlib.zeros(2, requires_grad=True)
        >>> opt = tensorlib.optim.SGD([w], lr=0.1)
        >>> opt.load_state_dict({"state": {}, "param_groups": [
        ...     {**opt.state_dict()["param_groups"][0], "lr": 0.5}]})
        >>> opt.param_groups[0]["lr"]
        0.5
        """
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        by_number = dict(zip(chain.from_iterable(s["params"] for s in saved_groups),
                             chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in by_number:
                param = by_number[k]
                state[param] = _cast_state(param, v)
                for value in state[param].values():
                    if isinstance(value, tensorlib.Tensor) and value.device.type != "meta":
                        value.untyped_storage().role = "optimizer-state"
            else:
                state[k] = v
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
        self.__setstate__({"state": state, "param_groups": saved_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)
