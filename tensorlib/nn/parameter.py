"""``Parameter`` and ``Buffer``: the tensors a ``Module`` registers, PyTorch's
``torch.nn.Parameter`` / ``torch.nn.Buffer``.

A Parameter is a ``Tensor`` that shares the memory (and the version counter) of the data it
was made from; its storage is counted under the memory role ``"parameter"``.

>>> p = tensorlib.nn.Parameter(tensorlib.zeros(2))
>>> p
Parameter containing:
tensor([0., 0.], requires_grad=True)
>>> isinstance(p, tensorlib.Tensor), p.untyped_storage().role_name
(True, 'parameter')
"""
from tensorlib._core.tensor import TensorBase
from tensorlib._tensor import Tensor

__all__ = ["Parameter", "Buffer"]

PARAMETER_ROLE = "parameter"
_TENSOR_DATA = TensorBase.data          # the descriptor Parameter.data extends
BUFFER_ROLE = "buffer"


def _mark(t, role):
    """Count ``t``'s storage under a memory role (tensorlib.memory.profile reports by role)."""
    if t is not None:
        t.untyped_storage().role = role


def _alias_as(cls, data):
    """A new instance of the Tensor subclass ``cls`` sharing ``data``'s storage, geometry and
    version counter, outside the graph (the legacy one-tensor constructor of TensorBase
    aliases its argument)."""
    obj = TensorBase.__new__(cls)
    TensorBase.__init__(obj, data.detach())
    return obj


class Parameter(Tensor):
    """A tensor that is a module parameter: assigning one to a ``Module`` attribute
    registers it (it then appears in ``parameters()`` and ``state_dict()``). It shares the
    memory of ``data``; ``requires_grad`` defaults to True.

    >>> p = tensorlib.nn.Parameter(tensorlib.ones(3)); p.requires_grad
    True
    >>> tensorlib.nn.Parameter()
    Parameter containing:
    tensor([], requires_grad=True)
    """

    # no __slots__: a Parameter carries a __dict__ (users tag parameters with attributes)

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from tensorlib import empty
            data = empty(0)
        if not isinstance(data, TensorBase):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not "
                            f"{type(data).__name__}")
        obj = _alias_as(cls, data)
        obj.requires_grad_(requires_grad)
        _mark(obj, PARAMETER_ROLE)
        return obj

    def __init__(self, data=None, requires_grad=True):
        pass            # everything happened in __new__ (TensorBase.__init__ is the legacy one)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    @property
    def data(self):
        """The same memory outside autograd (a plain Tensor); assigning replaces the
        parameter's data in place (the new memory is counted as a parameter's)."""
        return _TENSOR_DATA.__get__(self)

    @data.setter
    def data(self, value):
        _TENSOR_DATA.__set__(self, value)
        _mark(self, PARAMETER_ROLE)

    def __deepcopy__(self, memo):
        # as PyTorch: a fresh copy of the values with the same requires_grad (no .grad)
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.data, self.requires_grad, dict(self.__dict__)))


def _rebuild_parameter(data, requires_grad, state):
    """Unpickle a Parameter (its data travels as a Tensor, its attributes as a dict)."""
    p = Parameter(data, requires_grad)
    p.__dict__.update(state)
    return p


class Buffer(Tensor):
    """A tensor that is a module buffer: assigning one to a ``Module`` attribute registers
    it as a buffer (``persistent=False`` keeps it out of ``state_dict()``). It shares the
    memory of ``data``.

    >>> m = tensorlib.nn.Module(); m.running = tensorlib.nn.Buffer(tensorlib.zeros(2))
    >>> list(m.state_dict())
    ['running']
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from tensorlib import empty
            data = empty(0)
        if not isinstance(data, TensorBase):
            raise TypeError(f"Buffer(): argument 'data' must be Tensor, not "
                            f"{type(data).__name__}")
        obj = _alias_as(cls, data)
        if data.requires_grad:
            obj.requires_grad_(True)
        obj.persistent = persistent
        return obj

    def __init__(self, data=None, *, persistent=True):
        pass

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), persistent=self.persistent)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (_rebuild_buffer, (self.data, self.persistent))


def _rebuild_buffer(data, persistent):
    """Unpickle a Buffer."""
    return Buffer(data, persistent=persistent)
