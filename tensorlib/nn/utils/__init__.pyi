"""Type stubs of tensorlib.nn.utils (the gradient clipping and parameter-vector helpers and
the weight reparametrizations; the ``rnn``/``parametrize``/``parametrizations`` submodules
are read from their sources)."""
from collections.abc import Iterable
from typing import TypeVar

from tensorlib import Tensor
from tensorlib.nn.modules import Module
from tensorlib.nn.utils import (parametrizations as parametrizations,
                                parametrize as parametrize, rnn as rnn)

_M = TypeVar("_M", bound=Module)
_Tensors = Tensor | Iterable[Tensor]

__all__ = ['clip_grad_norm', 'clip_grad_norm_', 'clip_grad_value_', 'clip_grads_with_norm_',
           'get_total_norm', 'parameters_to_vector', 'vector_to_parameters', 'rnn',
           'parametrize', 'parametrizations', 'weight_norm', 'remove_weight_norm',
           'spectral_norm', 'remove_spectral_norm', 'skip_init']


def clip_grad_norm(
    parameters: _Tensors, max_norm: float, norm_type: float = 2.0,
    error_if_nonfinite: bool = False, foreach: bool | None = None,
) -> Tensor: ...
def clip_grad_norm_(
    parameters: _Tensors, max_norm: float, norm_type: float = 2.0,
    error_if_nonfinite: bool = False, foreach: bool | None = None,
) -> Tensor: ...
def clip_grad_value_(
    parameters: _Tensors, clip_value: float, foreach: bool | None = None,
) -> None: ...
def clip_grads_with_norm_(
    parameters: _Tensors, max_norm: float, total_norm: Tensor, foreach: bool | None = None,
) -> None: ...
def get_total_norm(
    tensors: _Tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor: ...
def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor: ...
def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None: ...
def weight_norm(module: _M, name: str = 'weight', dim: int | None = 0) -> _M: ...
def remove_weight_norm(module: _M, name: str = 'weight') -> _M: ...
def spectral_norm(
    module: _M, name: str = 'weight', n_power_iterations: int = 1, eps: float = 1e-12,
    dim: int | None = None,
) -> _M: ...
def remove_spectral_norm(module: _M, name: str = 'weight') -> _M: ...
def skip_init(module_cls: type[_M], *args: object, **kwargs: object) -> _M: ...
