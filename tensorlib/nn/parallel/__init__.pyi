"""Type stubs of tensorlib.nn.parallel."""
from tensorlib.nn.modules import Module, _device

__all__ = ["DataParallel"]


class DataParallel(Module):
    module: Module
    def __init__(
        self, module: Module, device_ids: list[int | _device] | None = None,
        output_device: _device = None, dim: int = 0,
    ) -> None: ...
    def forward(self, *inputs: object, **kwargs: object) -> object: ...
