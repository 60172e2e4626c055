"""Type stubs of tensorlib.optim (written by hand; tests/test_typing.py checks each signature
against the runtime)."""
from collections.abc import Callable, Iterable
from typing import TypeAlias, overload

from tensorlib import Tensor
from tensorlib.optim import lr_scheduler as lr_scheduler, optimizer as optimizer
from tensorlib.optim import swa_utils as swa_utils

__all__ = ["ASGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "NAdam",
           "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "lr_scheduler", "optimizer",
           "swa_utils"]

_Params: TypeAlias = Iterable[Tensor] | Iterable[dict[str, object]] | Iterable[tuple[str, Tensor]]
_Hook: TypeAlias = Callable[..., object]


class _RemovableHandle:
    def remove(self) -> None: ...


class Optimizer:
    """The base of the optimizers: parameter groups, per-parameter state, hooks."""
    defaults: dict[str, object]
    state: dict[Tensor, dict[str, object]]
    param_groups: list[dict[str, object]]
    def __init__(self, params: _Params, defaults: dict[str, object]) -> None: ...
    def add_param_group(self, param_group: dict[str, object]) -> None: ...
    def zero_grad(self, set_to_none: bool = True) -> None: ...
    @overload
    def step(self, closure: None = None) -> None: ...
    @overload
    def step(self, closure: Callable[[], float | Tensor]) -> float | Tensor: ...
    def state_dict(self) -> dict[str, object]: ...
    def load_state_dict(self, state_dict: dict[str, object]) -> None: ...
    def register_step_pre_hook(self, hook: _Hook) -> _RemovableHandle: ...
    def register_step_post_hook(self, hook: _Hook) -> _RemovableHandle: ...
    def register_state_dict_pre_hook(
        self, hook: _Hook, prepend: bool = False,
    ) -> _RemovableHandle: ...
    def register_state_dict_post_hook(
        self, hook: _Hook, prepend: bool = False,
    ) -> _RemovableHandle: ...
    def register_load_state_dict_pre_hook(
        self, hook: _Hook, prepend: bool = False,
    ) -> _RemovableHandle: ...
    def register_load_state_dict_post_hook(
        self, hook: _Hook, prepend: bool = False,
    ) -> _RemovableHandle: ...


class ASGD(Optimizer):
    def __init__(
        self, params: _Params, lr: float | Tensor = 0.01, lambd: float = 0.0001,
        alpha: float = 0.75, t0: float = 1000000.0, weight_decay: float = 0,
        foreach: bool | None = None, maximize: bool = False, differentiable: bool = False,
        capturable: bool = False,
    ) -> None: ...

class Adadelta(Optimizer):
    def __init__(
        self, params: _Params, lr: float | Tensor = 1.0, rho: float = 0.9, eps: float = 1e-06,
        weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
        maximize: bool = False, differentiable: bool = False,
    ) -> None: ...

class Adagrad(Optimizer):
    def __init__(
        self, params: _Params, lr: float | Tensor = 0.01, lr_decay: float = 0,
        weight_decay: float = 0, initial_accumulator_value: float = 0, eps: float = 1e-10,
        foreach: bool | None = None, *, maximize: bool = False, differentiable: bool = False,
        fused: bool | None = None,
    ) -> None: ...
    def share_memory(self) -> None: ...

class Adam(Optimizer):
    def __init__(
        self, params: _Params, lr: float | Tensor = 0.001,
        betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0,
        amsgrad: bool = False, *, foreach: bool | None = None, maximize: bool = False,
        capturable: bool = False, differentiable: bool = False, fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None: ...

class AdamW(Optimizer):
    def __init__(
        self, params: _Params, lr: float | Tensor = 0.001,
        betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0.01,
        amsgrad: bool = False, *, maximize: bool = False, foreach: bool | None = None,
        capturable: bool = False, differentiable: bool = False, fused: bool | None = None,
    ) -> None: ...

class Adamax(Optimizer):
    def __init__(
        self, params: _Params, lr: float | Tensor = 0.002,
        betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0,
        foreach: bool | None = None, *, maximize: bool = False, differentiable: bool = False,
        capturable: bool = False,
    ) -> None: ...

class LBFGS(Optimizer):
    def __init__(
        self, params: _Params, lr: float | Tensor = 1, max_iter: int = 20,
        max_eval: int | None = None, tolerance_grad: float = 1e-07,
        tolerance_change: float = 1e-09, history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None: ...

class NAdam(Optimizer):
    def __init__(
        self, params: _Params, lr: float | Tensor = 0.002,
        betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0,
        momentum_decay: float = 0.004, decoupled_weight_decay: bool = False, *,
        foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
        differentiable: bool = False,
    ) -> None: ...

class RAdam(Optimizer):
    def __init__(
        self, params: _Params, lr: float | Tensor = 0.001,
        betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-08, weight_decay: float = 0,
        decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
        maximize: bool = False, capturable: bool = False, differentiable: bool = False,
    ) -> None: ...

class RMSprop(Optimizer):
    def __init__(
        self, params: _Params, lr: float | Tensor = 0.01, alpha: float = 0.99, eps: float = 1e-08,
        weight_decay: float = 0, momentum: float = 0, centered: bool = False,
        capturable: bool = False, foreach: bool | None = None, maximize: bool = False,
        differentiable: bool = False,
    ) -> None: ...

class Rprop(Optimizer):
    def __init__(
        self, params: _Params, lr: float | Tensor = 0.01, etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-06, 50), *, capturable: bool = False,
        foreach: bool | None = None, maximize: bool = False, differentiable: bool = False,
    ) -> None: ...

class SGD(Optimizer):
    def __init__(
        self, params: _Params, lr: float | Tensor = 0.001, momentum: float = 0,
        dampening: float = 0, weight_decay: float = 0, nesterov: bool = False, *,
        maximize: bool = False, foreach: bool | None = None, differentiable: bool = False,
        fused: bool | None = None,
    ) -> None: ...
