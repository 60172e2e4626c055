"""The public Tensor class and Size.

``Tensor`` is the C-level ``TensorBase`` with Python-level extras only: ``__slots__ = ()``
keeps the instance layout identical, and every operator stays a C slot of TensorBase. The
method variants of the declared ops (generated from tensorlib/ops/decl/) are installed here.
"""
import weakref

from tensorlib._core import tensor as _C
from tensorlib._core.tensor import TensorBase
from tensorlib._core.dtype import get_default_dtype
from tensorlib import _tensor_str

__all__ = ["Tensor", "Size", "strided", "contiguous_format", "preserve_format", "channels_last"]


class Size(tuple):
    """The shape of a tensor: a tuple of ints.

    >>> tensorlib.zeros(2, 3).shape
    tensorlib.Size([2, 3])
    """

    __slots__ = ()
    __module__ = "tensorlib"                # pickled and printed as tensorlib.Size

    def numel(self):
        """Product of the sizes (the number of elements of a tensor of this shape)."""
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f"tensorlib.Size({list(self)})"

    def __getitem__(self, index):
        result = tuple.__getitem__(self, index)
        return Size(result) if isinstance(index, slice) else result

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))

    def __reduce__(self):
        return (Size, (tuple(self),))


class _Constant:
    """A named singleton such as ``tensorlib.strided`` or ``tensorlib.contiguous_format``."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "tensorlib." + self.name

    def __reduce__(self):
        return self.name


strided = _Constant("strided")
contiguous_format = _Constant("contiguous_format")
preserve_format = _Constant("preserve_format")
channels_last = _Constant("channels_last")


class Tensor(TensorBase):
    """A strided n-dimensional array on a device, with autograd state.

    ``Tensor(*sizes)`` makes an uninitialized float tensor and ``Tensor(sequence)`` copies
    data (the legacy constructors); prefer ``tensorlib.tensor`` / ``tensorlib.empty``.

    >>> tensorlib.Tensor([1, 2])
    tensor([1., 2.])
    """

    __slots__ = ()
    __module__ = "tensorlib"
    # NumPy scalars and arrays defer their operators to ours (`np.float32(2) * t` is a
    # Tensor), as PyTorch arranges with the same attribute
    __array_priority__ = 1000

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """The result of a NumPy ufunc that had a tensor operand, as a tensor: what
        ``t + ndarray`` and ``numpy.sin(t)`` return (NumPy computes them, with NumPy's type
        promotion, as in PyTorch). As PyTorch, a bool result comes back as uint8.

        >>> (tensorlib.ones(2) + numpy.ones(2)).dtype
        tensorlib.float64
        """
        if array.dtype == bool:
            array = array.astype("uint8")
        import tensorlib
        return tensorlib.tensor(array)        # (a copy: tensor memory is tensorlib's)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute the gradient of this tensor with respect to the graph's leaves and
        accumulate it into their ``.grad``; saved activations are freed as backward goes,
        unless ``retain_graph=True``.

        >>> x = tensorlib.ones(2, requires_grad=True); (x * x).sum().backward(); x.grad.tolist()
        [2.0, 2.0]
        """
        from tensorlib import autograd
        autograd.backward(self, None if gradient is None else [gradient], retain_graph,
                          create_graph, inputs)

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor
        replaces the gradient. Returns a handle with ``remove()``.

        >>> x = tensorlib.ones(2, requires_grad=True)
        >>> h = x.register_hook(lambda g: g * 2); (x * 1).sum().backward(); x.grad.tolist()
        [2.0, 2.0]
        """
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        fn = self.grad_fn
        if fn is None:
            meta = _C._meta_of(self)
            if meta.hooks is None:
                meta.hooks = []
            meta.hooks.append(hook)
            return _C._RemovableHandle(meta.hooks, hook)
        nr = _C._meta_of(self).output_nr
        if fn._pre_hooks is None:
            fn._pre_hooks = {}
        hooks = fn._pre_hooks.setdefault(nr, [])
        hooks.append(hook)
        return _C._RemovableHandle(hooks, hook)

    def retain_grad(self):
        """Keep ``.grad`` for this non-leaf tensor after backward.

        >>> x = tensorlib.ones(2, requires_grad=True); y = x * 2; y.retain_grad()
        >>> y.sum().backward(); y.grad.tolist()
        [1.0, 1.0]
        """
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or _C._meta_of(self).retains_grad:
            return
        ref = weakref.ref(self)     # weak: the hook lives on the node, which self keeps alive

        def retain(grad):
            # a contiguous copy, as PyTorch's; under create_graph it keeps grad's history
            # (the clone is recorded), so a second derivative can flow through .grad
            t = ref()
            if t is not None:
                t.grad = (grad.clone(memory_format=contiguous_format) if t.grad is None
                          else t.grad + grad)
            return None

        retain._tl_retains_grad = True     # (an in-place op moves it to the new grad_fn)
        _C._meta_of(self).retains_grad = True
        self.register_hook(retain)

    @property
    def retains_grad(self):
        return self.grad_fn is not None and _C._meta_of(self).retains_grad

    def detach_(self):
        """Detach this tensor from the graph in place (it becomes a leaf)."""
        _C._detach_inplace(self)
        return self

    def share_memory_(self):
        """Move the storage (with every tensor on it) into shared memory, in place: processes
        forked afterwards (DataLoader workers, ``multiprocessing``) see writes both ways. A
        no-op when already shared, and for meta tensors.

        >>> t = tensorlib.zeros(3); t.share_memory_().is_shared()
        True
        """
        from tensorlib.utils.data import _shm
        return _shm.share_memory_(self)

    def is_shared(self):
        """Whether the storage lives in shared memory (``share_memory_``, or a batch
        received from a DataLoader worker).

        >>> tensorlib.zeros(3).is_shared()
        False
        """
        from tensorlib.utils.data import _shm
        return _shm.segment_of(self) is not None

    def pin_memory(self, device=None):
        """A copy of this CPU tensor in page-locked host memory, from which copies to a CUDA
        device run without staging (``to("cuda", non_blocking=True)`` then overlaps with the
        host); self when already pinned. Needs a CUDA runtime (RuntimeError otherwise).

        >>> if tensorlib.cuda.is_available():
        ...     assert tensorlib.ones(3).pin_memory().is_pinned()
        """
        from tensorlib.cuda import _runtime
        if self.device.type != "cpu":
            raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be "
                               f"pinned")
        if self.is_pinned():
            return self
        rt = _runtime.get_runtime()
        nbytes = self.numel() * self.element_size()
        mem = rt.host_alloc(max(nbytes, 1))
        from tensorlib._core.allocator import _adopt_memory
        from tensorlib._core.tensor import _tensor_on_storage
        stride, acc = [], 1
        for n in reversed(self.shape):
            stride.append(acc)
            acc *= max(n, 1)
        out = _tensor_on_storage(_adopt_memory(mem.address, nbytes, mem, "input"), self.dtype,
                                 tuple(self.shape), tuple(reversed(stride)), 0)
        return out.copy_(self)

    def is_pinned(self, device=None):
        """Whether this tensor's memory is page-locked host memory (``pin_memory``).

        >>> tensorlib.ones(2).is_pinned()
        False
        """
        from tensorlib.cuda._runtime import PinnedHostMemory
        return (self.device.type == "cpu"
                and isinstance(self.untyped_storage()._owner, PinnedHostMemory))

    def __reduce_ex__(self, proto):
        # A meta tensor has no values to carry: like PyTorch, it pickles as its geometry
        # (shape, strides, dtype) and unpickles as a meta tensor.
        if self.is_meta:
            return (_rebuild_meta_tensor,
                    (tuple(self.shape), self.stride(), self.dtype, self.requires_grad))
        return TensorBase.__reduce_ex__(self, proto)


def _rebuild_meta_tensor(size, stride, dtype, requires_grad):
    from tensorlib import empty_strided
    return empty_strided(size, stride, dtype=dtype, device="meta").requires_grad_(requires_grad)


for _name, _fn in _C._GENERATED_METHODS.items():
    setattr(Tensor, _name, _fn)


def _repr(t):
    grad_fn = t.grad_fn
    if t.is_meta:
        return _tensor_str.meta_repr(
            tuple(t.shape), t.dtype.name, default_dtype_name=get_default_dtype().name,
            requires_grad=t.requires_grad and grad_fn is None,
            grad_fn_name=None if grad_fn is None else grad_fn.name())
    values = t.float() if t.dtype.name == "bfloat16" else t
    return _tensor_str.tensor_repr(
        values.numpy(force=True), t.dtype.name,
        default_dtype_name=get_default_dtype().name,
        requires_grad=t.requires_grad and grad_fn is None,
        grad_fn_name=None if grad_fn is None else grad_fn.name(),
        device=str(t.device))


_C._register_types(Tensor, Size, _repr)
_C._register_enums(strided, contiguous_format)
