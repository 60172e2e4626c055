"""Type stubs of tensorlib.nn.parameter."""
from tensorlib import Tensor

__all__ = ["Parameter", "Buffer"]


class Parameter(Tensor):
    """A tensor that is a module's parameter (``requires_grad`` by default)."""
    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None: ...


class Buffer(Tensor):
    """A tensor registered as a module's buffer when assigned to one."""
    persistent: bool
    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None: ...
