"""Type stubs of tensorlib.nn.parallel."""
from typing import Any, Sequence

from tensorlib.nn.modules import Module, _device

__all__ = ["DataParallel", "scatter", "replicate", "parallel_apply", "gather"]


class DataParallel(Module):
    module: Module
    device_ids: list[int]
    output_device: int | None
    def __init__(
        self, module: Module, device_ids: list[int | _device] | None = None,
        output_device: _device = None, dim: int = 0,
    ) -> None: ...
    def forward(self, *inputs: object, **kwargs: object) -> object: ...


def scatter(obj: object, device_ids: Sequence[int], dim: int = 0) -> list[Any]: ...
def replicate(module: Module, device_ids: Sequence[int]) -> list[Module]: ...
def parallel_apply(replicas: Sequence[Module], inputs: Sequence[Sequence[object]],
                   kwargs: Sequence[dict[str, object]], device_ids: Sequence[int]) -> list[Any]: ...
def gather(outputs: Sequence[object], target_device: int, dim: int = 0) -> Any: ...
