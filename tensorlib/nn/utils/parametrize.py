"""Parametrizations, PyTorch's ``torch.nn.utils.parametrize``: a module's parameter or
buffer replaced by a function of stored tensors, computed on each access.

``register_parametrization(module, "weight", P)`` moves ``module.weight`` to
``module.parametrizations.weight.original`` (after ``P.right_inverse`` when ``P`` has one)
and makes ``module.weight`` a property returning ``P(original)``; assigning to
``module.weight`` goes through ``right_inverse``. The module's class is swapped for a
subclass ``Parametrized<Name>`` holding the property, and restored by
``remove_parametrizations`` once nothing is parametrized.

>>> import tensorlib
>>> from tensorlib import nn
>>> class Symmetric(nn.Module):
...     def forward(self, X):
...         return X.triu() + X.triu(1).transpose(-1, -2)
>>> m = nn.Linear(3, 3)
>>> _ = register_parametrization(m, "weight", Symmetric())
>>> bool((m.weight == m.weight.T).all()), type(m).__name__
(True, 'ParametrizedLinear')
>>> _ = remove_parametrizations(m, "weight")
>>> type(m).__name__
'Linear'
"""
import collections.abc
import contextlib
import copy
import copyreg

import tensorlib as _t
from tensorlib.nn.modules.container import ModuleDict, ModuleList
from tensorlib.nn.parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

_cache_depth = 0
_cache = {}


@contextlib.contextmanager
def cached():
    """Inside this context a parametrized tensor is computed once per module and name and
    reused (e.g. a weight read at every step of a recurrent loop); the cache is dropped when
    the outermost context exits.

    >>> from tensorlib import nn
    >>> class Twice(nn.Module):
    ...     def forward(self, X):
    ...         return 2 * X
    >>> m = register_parametrization(nn.Linear(2, 2), "weight", Twice())
    >>> with cached():
    ...     m.weight is m.weight
    True
    >>> m.weight is m.weight
    False
    """
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache.clear()


def _register_parameter_or_buffer(module, name, value):
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _maybe_set(dest, src):
    # PyTorch swaps the storage with set_(); assigning .data does the same here and keeps
    # the Parameter object (optimizers hold it)
    dest.data = src.detach() if isinstance(src, _t.Tensor) else src


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and the tensor(s) they are
    computed from: ``original`` (or ``original0``, ``original1``, ... when the first
    ``right_inverse`` returns a sequence). Calling it computes the parametrized tensor.

    >>> from tensorlib import nn
    >>> class Neg(nn.Module):
    ...     def forward(self, X):
    ...         return -X
    >>> m = register_parametrization(nn.Linear(2, 1), "bias", Neg())
    >>> type(m.parametrizations.bias).__name__
    'ParametrizationList'
    """

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with _t.no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, _t.Tensor) and not isinstance(new, collections.abc.Sequence):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, _t.Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {original.dtype}\n"
                    f"right_inverse(original).dtype: {new.dtype}")
            if new is not original:
                with _t.no_grad():
                    _maybe_set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, piece in enumerate(new):
                if not isinstance(piece, _t.Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                     f"tensors (list, tuple...). Got element {i} of the "
                                     f"sequence with type {type(piece).__name__}.")
                if isinstance(original, Parameter):
                    piece = Parameter(piece.detach(), original.requires_grad)
                else:
                    piece = piece.detach().requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", piece)
        if not self.unsafe:
            z = self()
            if not isinstance(z, _t.Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(z).__name__}.")
            if z.dtype != original_dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized dtype: {original_dtype}\n"
                    f"parametrized dtype: {z.dtype}")
            if z.shape != original_shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless `unsafe` flag is enabled.\n"
                    f"unparametrized shape: {original_shape}\n"
                    f"parametrized shape: {z.shape}")

    def right_inverse(self, value):
        """Store ``value`` as the parametrized tensor: run it backwards through the
        parametrizations' ``right_inverse`` (last to first) into the originals.

        >>> from tensorlib import nn
        >>> class Neg(nn.Module):
        ...     def forward(self, X):
        ...         return -X
        ...     def right_inverse(self, Y):
        ...         return -Y
        >>> m = register_parametrization(nn.Linear(1, 1), "bias", Neg())
        >>> m.bias = tensorlib.tensor([3.0])
        >>> m.parametrizations.bias.original.tolist(), m.bias.tolist()
        ([-3.0], [3.0])
        """
        with _t.no_grad():
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                else:
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
            if self.is_tensor:
                if not isinstance(value, _t.Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _maybe_set(self.original, value)
            else:
                if not isinstance(value, collections.abc.Sequence):
                    raise ValueError("'right_inverse' must return a sequence of tensors. "
                                     f"Got {type(value).__name__}.")
                if len(value) != self.ntensors:
                    raise ValueError("'right_inverse' must return a sequence of tensors of "
                                     f"length {self.ntensors}. Got a sequence of length "
                                     f"{len(value)}.")
                for i, piece in enumerate(value):
                    original_i = getattr(self, f"original{i}")
                    if not isinstance(piece, _t.Tensor):
                        raise ValueError(f"`right_inverse` must return a sequence of tensors. "
                                         f"Got element {i} of type {type(piece).__name__}")
                    if original_i.dtype != piece.dtype:
                        raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                         f"{piece.dtype} while `original{i}` has dtype "
                                         f"{original_i.dtype}")
                    _maybe_set(original_i, piece)

    def forward(self):
        """The parametrized tensor: the parametrizations applied in order to the originals.

        >>> from tensorlib import nn
        >>> class Neg(nn.Module):
        ...     def forward(self, X):
        ...         return -X
        >>> m = register_parametrization(nn.Linear(1, 1), "bias", Neg())
        >>> bool((m.parametrizations.bias() == m.bias).all())
        True
        """
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _getstate(self):
    raise RuntimeError(
        "Serialization of parametrized modules is only supported through state_dict(). "
        "See:\nhttps://pytorch.org/tutorials/beginner/saving_loading_models.html"
        "#saving-loading-a-general-checkpoint-for-inference-and-or-resuming-training")


def _deepcopy(self, memo):
    # pickling is refused (_getstate), so deepcopy copies the instance dict itself
    obj = memo.get(id(self))
    if obj is not None:
        return obj
    replica = self.__new__(self.__class__)
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(self.__class__):
        if hasattr(self, slot):
            setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
    return replica


def _inject_new_class(module):
    cls = module.__class__
    attrs = {"__getstate__": _getstate}
    if not hasattr(cls, "__deepcopy__"):
        attrs["__deepcopy__"] = _deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), attrs)


def _inject_property(module, tensor_name):
    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if _cache_depth:
            key = (id(self), tensor_name)
            value = _cache.get(key)
            if value is None:
                value = parametrization()
                _cache[key] = value
            return value
        return parametrization()

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Parametrize ``module.<tensor_name>`` (a parameter, a buffer, or an already
    parametrized tensor, in which case ``parametrization`` is applied after the existing
    ones) by the module ``parametrization``; see the module's docstring. Unless ``unsafe``,
    the parametrization must keep the tensor's shape and dtype. Returns ``module``.

    >>> from tensorlib import nn
    >>> class Scale(nn.Module):
    ...     def forward(self, X):
    ...         return 10 * X
    >>> m = register_parametrization(nn.Linear(2, 1, bias=False), "weight", Scale())
    >>> sorted(m.state_dict())
    ['parametrizations.weight.original']
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, _t.Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(x).__name__}.")
            if x.dtype != y.dtype:
                raise ValueError(
                    "Registering a parametrization may not change the dtype of the tensor, "
                    "unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.dtype: {y.dtype}\n"
                    f"parametrization(module.{tensor_name}).dtype: {x.dtype}")
            if x.shape != y.shape:
                raise ValueError(
                    "Registering a parametrization may not change the shape of the tensor, "
                    "unless the `unsafe` flag is enabled.\n"
                    f"module.{tensor_name}.shape: {y.shape}\n"
                    f"parametrization(module.{tensor_name}).shape: {x.shape}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(x)
                except NotImplementedError:
                    pass
                else:
                    if not isinstance(z, _t.Tensor):
                        raise ValueError(f"parametrization.right_inverse must return a "
                                         f"tensor. Got: {type(z).__name__}")
                    if z.dtype != y.dtype:
                        raise ValueError(
                            "The tensor returned by parametrization.right_inverse must have "
                            f"the same dtype as module.{tensor_name}, unless the `unsafe` "
                            f"flag is enabled.\nmodule.{tensor_name}.dtype: {y.dtype}\n"
                            f"returned dtype: {z.dtype}")
                    if z.shape != y.shape:
                        raise ValueError(
                            "The tensor returned by parametrization.right_inverse must have "
                            f"the same shape as module.{tensor_name}, unless the `unsafe` "
                            f"flag is enabled.\nmodule.{tensor_name}.shape: {y.shape}\n"
                            f"returned shape: {z.shape}")
        plist = module.parametrizations[tensor_name]
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Whether ``module`` has any parametrization (or one on ``tensor_name``).

    >>> from tensorlib import nn
    >>> is_parametrized(nn.Linear(2, 2))
    False
    """
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Remove the parametrizations on ``module.<tensor_name>``; the tensor becomes a plain
    parameter/buffer again holding its current parametrized value (``leave_parametrized``)
    or its original. The same Parameter object is kept where possible. Returns ``module``.

    >>> from tensorlib import nn
    >>> class One(nn.Module):
    ...     def forward(self, X):
    ...         return X * 0 + 1
    >>> m = register_parametrization(nn.Linear(2, 1), "bias", One())
    >>> remove_parametrizations(m, "bias").bias.tolist()
    [1.0]
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with _t.no_grad():
                value = getattr(module, tensor_name)
                _maybe_set(original, value)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a "
                             "tensor that is parametrized in terms of a sequence of tensors.")
        with _t.no_grad():
            value = getattr(module, tensor_name)
        first = plist.original0
        if isinstance(first, Parameter):
            original = Parameter(value.detach(), first.requires_grad)
        else:
            original = value.detach().requires_grad_(first.requires_grad)
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    """The module's class before any parametrization was registered.

    >>> from tensorlib import nn
    >>> type_before_parametrizations(nn.Linear(1, 1)).__name__
    'Linear'
    """
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Copy the parametrizations of ``from_module`` (all, or those on ``tensor_name``) and
    their original tensors onto ``to_module``. Returns ``to_module``.

    >>> from tensorlib import nn
    >>> class Neg(nn.Module):
    ...     def forward(self, X):
    ...         return -X
    >>> a = register_parametrization(nn.Linear(2, 2), "weight", Neg())
    >>> b = transfer_parametrizations_and_params(a, nn.Linear(2, 2))
    >>> bool((a.weight == b.weight).all())
    True
    """
    if not is_parametrized(from_module):
        return to_module
    names = ([tensor_name] if isinstance(tensor_name, str)
             else list(from_module.parametrizations) if tensor_name is None
             else list(tensor_name))
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name,
                    Parameter(getattr(from_module, name).detach().clone()))
        plist = from_module.parametrizations[name]
        for p in plist:
            register_parametrization(to_module, name, p, unsafe=True)
        with _t.no_grad():
            target = to_module.parametrizations[name]
            if plist.is_tensor:
                _maybe_set(target.original, plist.original.clone())
            else:
                for i in range(plist.ntensors):
                    _maybe_set(getattr(target, f"original{i}"),
                               getattr(plist, f"original{i}").clone())
    return to_module
