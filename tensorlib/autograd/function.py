"""Custom differentiable operations: ``tensorlib.autograd.Function``.

>>> import tensorlib
>>> class Square(tensorlib.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x * x
...     @staticmethod
...     def backward(ctx, grad):
...         x, = ctx.saved_tensors
...         return 2 * x * grad
>>> x = tensorlib.tensor([3.0], requires_grad=True)
>>> Square.apply(x).backward(); x.grad.tolist()
[6.0]
"""
from tensorlib._core import tensor as _C
from tensorlib._core.tensor import TensorBase

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """The ``ctx`` of a Function: what forward leaves for backward."""

    def __init__(self):
        self._saved = None
        self._to_save = ()
        self._non_differentiable = ()
        self._dirty = ()
        self.needs_input_grad = ()
        self.materialize_grads = True
        self._node = None

    def save_for_backward(self, *tensors):
        """Keep tensors (or None) for backward; read them back with ``saved_tensors``."""
        for t in tensors:
            if t is not None and not isinstance(t, TensorBase):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self._to_save = tensors

    @property
    def saved_tensors(self):
        """The tensors given to save_for_backward (checked against in-place changes)."""
        if self._saved is None:
            if self._to_save and self._node is None:
                return self._to_save
            raise RuntimeError(_C._released_message())
        node = self._node() if self._node is not None else None
        return tuple(None if s is None else _C._unpack_saved(s, node) for s in self._saved)

    def mark_non_differentiable(self, *tensors):
        """Outputs that never need a gradient (e.g. indices)."""
        self._non_differentiable = tensors

    def mark_dirty(self, *tensors):
        """Inputs that forward modified in place (and returns)."""
        self._dirty = tensors

    def set_materialize_grads(self, value):
        """Whether backward receives zeros (True) or None for outputs without a gradient."""
        self.materialize_grads = bool(value)


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        # the node class: "<Name>Backward", as PyTorch names it
        cls._backward_cls = type(name + "Backward", (_C.Node,),
                                 {"__slots__": (), "__module__": cls.__module__})


class Function(metaclass=_FunctionMeta):
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``; call
    ``apply``. backward returns one gradient per forward argument (None for non-tensors)."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        import weakref
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, TensorBase) and a.requires_grad for a in args)
        record = _C._is_grad_enabled() and any(ctx.needs_input_grad)
        prev = _C._set_grad_enabled(False)
        try:
            outputs = cls.forward(ctx, *args, **kwargs)
        finally:
            _C._set_grad_enabled(prev)
        if not record:
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        node = _C._new_function_node(cls._backward_cls, _function_backward, tuple(args))
        node._num_outputs = len(outs)
        node._output_meta = tuple((o.shape, o.dtype, o.device) if isinstance(o, TensorBase) else None
                                  for o in outs)
        non_diff = set(id(t) for t in ctx._non_differentiable)
        dirty = set(id(t) for t in ctx._dirty)
        result = []
        for i, o in enumerate(outs):
            if isinstance(o, TensorBase):
                if id(o) in non_diff:
                    pass
                elif any(o is a for a in args) and id(o) not in dirty:
                    # an input returned as is: the output is a new view of it in the graph
                    o = o.view_as(o)
                    _C._set_grad_fn(o, node, i)
                elif o.dtype.is_floating_point:
                    _C._set_grad_fn(o, node, i)
            result.append(o)
        outs_ids = {id(o): i for i, o in enumerate(result) if isinstance(o, TensorBase)}
        ctx._saved = tuple(
            None if t is None else _C._save_for_backward(t, id(t) in outs_ids)
            for t in ctx._to_save)
        ctx._node = weakref.ref(node)
        node._saved = (ctx, cls)
        return result[0] if single else tuple(result)


def _function_backward(node, grads):
    if node._released or node._saved is None:
        raise RuntimeError(_C._released_message())
    ctx, cls = node._saved
    if ctx.materialize_grads:
        grads = tuple(_C._materialize(grads, node._output_meta))
    result = cls.backward(ctx, *grads)
    if not isinstance(result, tuple):
        result = (result,)
    n = len(node.next_edges)
    if len(result) != n:
        if len(result) > n and all(r is None for r in result[n:]):
            result = result[:n]
        else:
            raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect number of "
                               f"gradients (expected {n}, got {len(result)})")
    return result


def once_differentiable(fn):
    """Mark a backward as not itself differentiable (it runs with grad mode off)."""
    import functools

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _C._set_grad_enabled(False)
        try:
            return fn(ctx, *args)
        finally:
            _C._set_grad_enabled(prev)
    return wrapper
