"""Type stubs of tensorlib.optim.lr_scheduler (written by hand; tests/test_typing.py checks
each signature against the runtime)."""
from collections.abc import Callable, Sequence

from tensorlib.optim import Optimizer

__all__ = ['LambdaLR', 'MultiplicativeLR', 'StepLR', 'MultiStepLR', 'ConstantLR', 'LinearLR',
           'ExponentialLR', 'SequentialLR', 'CosineAnnealingLR', 'ChainedScheduler',
           'ReduceLROnPlateau', 'CyclicLR', 'CosineAnnealingWarmRestarts', 'OneCycleLR',
           'PolynomialLR', 'LRScheduler']


class LRScheduler:
    optimizer: Optimizer
    last_epoch: int
    base_lrs: list[float]
    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None: ...
    def state_dict(self) -> dict[str, object]: ...
    def load_state_dict(self, state_dict: dict[str, object]) -> None: ...
    def get_last_lr(self) -> list[float]: ...
    def get_lr(self) -> list[float]: ...
    def step(self, epoch: int | None = None) -> None: ...


class LambdaLR(LRScheduler):
    def __init__(
        self, optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]], last_epoch: int = -1,
    ) -> None: ...
    def get_lr(self) -> list[float]: ...


class MultiplicativeLR(LRScheduler):
    def __init__(
        self, optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]], last_epoch: int = -1,
    ) -> None: ...
    def get_lr(self) -> list[float]: ...


class StepLR(LRScheduler):
    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1,
    ) -> None: ...
    def get_lr(self) -> list[float]: ...


class MultiStepLR(LRScheduler):
    def __init__(
        self, optimizer: Optimizer, milestones: Sequence[int], gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None: ...
    def get_lr(self) -> list[float]: ...


class ConstantLR(LRScheduler):
    def __init__(
        self, optimizer: Optimizer, factor: float = 0.3333333333333333, total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None: ...
    def get_lr(self) -> list[float]: ...


class LinearLR(LRScheduler):
    def __init__(
        self, optimizer: Optimizer, start_factor: float = 0.3333333333333333,
        end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1,
    ) -> None: ...
    def get_lr(self) -> list[float]: ...


class ExponentialLR(LRScheduler):
    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None: ...
    def get_lr(self) -> list[float]: ...


class SequentialLR(LRScheduler):
    def __init__(
        self, optimizer: Optimizer, schedulers: Sequence[LRScheduler], milestones: Sequence[int],
        last_epoch: int = -1,
    ) -> None: ...
    def recursive_undo(self, sched: LRScheduler | None = None) -> None: ...
    def step(self) -> None: ...  # type: ignore[override]


class CosineAnnealingLR(LRScheduler):
    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1,
    ) -> None: ...
    def get_lr(self) -> list[float]: ...


class ChainedScheduler(LRScheduler):
    def __init__(
        self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None,
    ) -> None: ...
    def step(self) -> None: ...  # type: ignore[override]


class ReduceLROnPlateau(LRScheduler):
    @property
    def in_cooldown(self) -> bool: ...
    def __init__(
        self, optimizer: Optimizer, mode: str = 'min', factor: float = 0.1, patience: int = 10,
        threshold: float = 0.0001, threshold_mode: str = 'rel', cooldown: int = 0,
        min_lr: float | Sequence[float] = 0, eps: float = 1e-08,
    ) -> None: ...
    def step(self, metrics: float, epoch: int | None = None) -> None: ...  # type: ignore[override]
    def load_state_dict(self, state_dict: dict[str, object]) -> None: ...


class CyclicLR(LRScheduler):
    def __init__(
        self, optimizer: Optimizer, base_lr: float | Sequence[float],
        max_lr: float | Sequence[float], step_size_up: int = 2000,
        step_size_down: int | None = None, mode: str = 'triangular', gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None, scale_mode: str = 'cycle',
        cycle_momentum: bool = True, base_momentum: float | Sequence[float] = 0.8,
        max_momentum: float | Sequence[float] = 0.9, last_epoch: int = -1,
    ) -> None: ...
    def scale_fn(self, x: float) -> float: ...
    def get_lr(self) -> list[float]: ...
    def state_dict(self) -> dict[str, object]: ...
    def load_state_dict(self, state_dict: dict[str, object]) -> None: ...


class CosineAnnealingWarmRestarts(LRScheduler):
    def __init__(
        self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None: ...
    def get_lr(self) -> list[float]: ...
    def step(self, epoch: int | float | None = None) -> None: ...


class OneCycleLR(LRScheduler):
    def __init__(
        self, optimizer: Optimizer, max_lr: float | Sequence[float],
        total_steps: int | None = None, epochs: int | None = None,
        steps_per_epoch: int | None = None, pct_start: float = 0.3, anneal_strategy: str = 'cos',
        cycle_momentum: bool = True, base_momentum: float | Sequence[float] = 0.85,
        max_momentum: float | Sequence[float] = 0.95, div_factor: float = 25.0,
        final_div_factor: float = 10000.0, three_phase: bool = False, last_epoch: int = -1,
    ) -> None: ...
    def get_lr(self) -> list[float]: ...


class PolynomialLR(LRScheduler):
    def __init__(
        self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1,
    ) -> None: ...
    def get_lr(self) -> list[float]: ...
