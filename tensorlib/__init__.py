"""tensorlib: PyTorch's programming model on a Cython core, with memory you can see and plan.

>>> import tensorlib as torch
>>> x = torch.arange(6.).view(2, 3)
>>> x.t().is_contiguous(), x[:, 1].tolist()
(False, [1.0, 4.0])
"""
import os as _os

from tensorlib._core.dtype import (
    dtype, bool_ as bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
    get_default_dtype, set_default_dtype, promote_types, can_cast, finfo, iinfo)
from tensorlib._core.allocator import device, OutOfMemoryError
from tensorlib._core import tensor as _C
from tensorlib._core.tensor import from_numpy, from_dlpack
from tensorlib._tensor import (
    Tensor, Size, strided, contiguous_format, preserve_format, channels_last)
from tensorlib._tensor_str import set_printoptions, get_printoptions
from tensorlib._legacy import (
    FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor, CharTensor, ShortTensor,
    IntTensor, LongTensor, BoolTensor)
from tensorlib import memory
from tensorlib import autograd
from tensorlib.autograd import (
    no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
    is_inference_mode_enabled)
from tensorlib import random
from tensorlib import return_types
from tensorlib.random import (
    Generator, default_generator, manual_seed, seed, initial_seed, get_rng_state, set_rng_state)

# PyTorch's dtype aliases
half, float, double = float16, float32, float64
short, int, long = int16, int32, int64

globals().update(_C._GENERATED_FUNCTIONS)
result_type = _C.result_type
is_tensor = _C.is_tensor
is_floating_point = _C.is_floating_point
numel = _C.numel
get_num_threads = _C.get_num_threads
set_num_threads = _C.set_num_threads

__version__ = "0.1.0"


def get_include():
    """The folder of tensorlib's C headers, for extensions built against it: ``tensorlib.h``
    (the C API: ``tensorlib_import()``, the accessors, ``tl_empty``, ``tl_from_pointer``, ...)
    and the headers that the published ``.pxd`` files name. A Cython extension that does
    ``cimport tensorlib`` needs ``include_dirs=[tensorlib.get_include()]`` and nothing else:
    Cython finds ``tensorlib/__init__.pxd`` beside the installed package, as NumPy's.

    >>> import os; os.path.exists(os.path.join(tensorlib.get_include(), "tensorlib.h"))
    True
    """
    return _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "include")


def set_default_device(device):
    """Make ``device`` where factory functions (``zeros``, ``tensor``, ``arange``, ...) put
    tensors when they are given no ``device=``; ``None`` restores the CPU.

    >>> tensorlib.set_default_device("meta"); tensorlib.zeros(2).device
    device(type='meta')
    >>> tensorlib.set_default_device(None); tensorlib.zeros(2).device
    device(type='cpu')
    """
    _C._set_default_device(device)


def get_default_device():
    """The device factory functions use when given none (the CPU unless changed).

    >>> tensorlib.get_default_device()
    device(type='cpu')
    """
    return _C._get_default_device()


def typename(obj):
    """The name of ``obj``'s type as PyTorch spells it in messages: a tensor's legacy type
    name, otherwise the class's qualified name (builtins unqualified).

    >>> typename(tensorlib.zeros(1)), typename(3), typename(tensorlib.nn.Identity())
    ('tensorlib.FloatTensor', 'int', 'tensorlib.nn.modules.linear.Identity')
    """
    if isinstance(obj, Tensor):
        return obj.type()
    cls = obj if isinstance(obj, type) else type(obj)
    module = getattr(cls, "__module__", "") or ""
    name = getattr(cls, "__qualname__", cls.__name__)
    return name if module in ("", "builtins") else f"{module}.{name}"
from tensorlib import nn  # noqa: E402  (after the ops it re-exports exist)
from tensorlib import cuda, optim, serialization, utils  # noqa: E402
from tensorlib.serialization import save, load  # noqa: E402
from tensorlib import safetensors  # noqa: E402


def __getattr__(name):
    # tensorlib.onnx after a plain `import tensorlib`, as torch.onnx; imported on first use so
    # that importing tensorlib does not load the exporter
    if name == "onnx":
        import importlib
        return importlib.import_module("tensorlib.onnx")
    raise AttributeError(f"module 'tensorlib' has no attribute '{name}'")
