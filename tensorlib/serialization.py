"""Saving and loading, PyTorch's ``torch.save`` / ``torch.load``, in PyTorch's own file formats.

``save`` writes PyTorch's zip format: ``<archive>/data.pkl`` (a protocol-2 pickle of the
object graph in which every tensor is ``torch._utils._rebuild_tensor_v2`` over a persistent
storage id) and one record ``<archive>/data/<key>`` per storage, each 64-byte aligned so it can
be memory-mapped, plus the ``byteorder``, ``version`` and format records. The pickle names
torch's globals, so real PyTorch loads the file with ``weights_only=True``; ``load`` maps those
names to tensorlib's own rebuild functions, so PyTorch's files load without torch installed.
``load`` also reads PyTorch's legacy (pre-1.6) format.

``weights_only=True`` is the default: the unpickler then resolves only an explicit list of
globals (tensor rebuild functions, storage types, dtypes, ``OrderedDict``, ``torch.Size``,
NumPy's array and scalar reconstruction and dtypes) plus what :func:`add_safe_globals` adds;
any other global is refused with ``pickle.UnpicklingError`` naming it before anything runs.

>>> import io
>>> buf = io.BytesIO()
>>> x = tensorlib.arange(6.).view(2, 3)
>>> tensorlib.save({"x": x, "row": x[1]}, buf)
>>> _ = buf.seek(0)
>>> d = tensorlib.load(buf)
>>> d["row"].tolist(), d["row"].untyped_storage() is d["x"].untyped_storage()
([3.0, 4.0, 5.0], True)
"""
import collections
import io
import os
import pickle
import struct
import sys
import warnings
import zipfile
import zlib
from _compat_pickle import IMPORT_MAPPING, NAME_MAPPING

import numpy as np

from tensorlib._core import dtype as _dtype_mod
from tensorlib._core.allocator import device as _Device
from tensorlib._core.tensor import TensorBase, from_numpy, _alias_of

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "get_unsafe_globals_in_checkpoint"]

DEFAULT_PROTOCOL = 2
MAGIC_NUMBER = 0x1950A86A20F9469CFC6C          # the legacy format's first pickle
PROTOCOL_VERSION = 1001                        # the legacy format's second pickle
_ALIGNMENT = 64                                # zip records' data start on this boundary
_ZIP_VERSION_RECORD = b"3\n"
_ZIP64_LIMIT = 0xFFFFFFFF                      # sizes/offsets from here on need Zip64 fields

# dtype name <-> the legacy typed-storage class PyTorch names in its pickles
_STORAGE_NAMES = {
    "float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
    "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage",
    "bool": "BoolStorage",
}
# torch dtypes and storages tensorlib cannot hold: named in the error instead of "unknown"
_UNSUPPORTED_DTYPES = ("complex32", "complex64", "complex128", "chalf", "cfloat", "cdouble",
                       "uint16", "uint32", "uint64", "qint8", "quint8", "qint32", "quint4x2",
                       "quint2x4", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                       "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "bits8",
                       "bits16", "bits1x8", "bits2x4", "bits4x2")
_UNSUPPORTED_STORAGES = ("ComplexFloatStorage", "ComplexDoubleStorage", "QInt8Storage",
                         "QUInt8Storage", "QInt32Storage", "QUInt4x2Storage",
                         "QUInt2x4Storage")
_UNSUPPORTED_REBUILDS = {
    "_rebuild_sparse_tensor": "sparse tensors", "_rebuild_qtensor": "quantized tensors",
    "_rebuild_nested_tensor": "nested tensors", "_rebuild_wrapper_subclass": "tensor subclasses",
    "_rebuild_device_tensor_from_numpy": "device tensors saved through NumPy",
    "_rebuild_device_tensor_from_cpu_tensor": "device tensors saved through a CPU copy",
    "_rebuild_xla_tensor": "XLA tensors", "_rebuild_mtia_tensor": "MTIA tensors",
}
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")


def _tl():
    import tensorlib
    return tensorlib


# -- pickle globals: the names PyTorch writes, our objects behind them ---------------------------

class _Global:
    """A global written by name (``GLOBAL module name``) whatever is importable here."""

    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __repr__(self):
        return f"{self.module}.{self.name}"

    def __call__(self, *args):      # pickle's save_reduce wants a callable
        raise TypeError(f"{self!r} is only a name written into a pickle")


_G = {}


def _global(module, name):
    key = (module, name)
    g = _G.get(key)
    if g is None:
        g = _G[key] = _Global(module, name)
    return g


class _StorageType:
    """What ``torch.FloatStorage`` & co. stand for when loading: the dtype of a storage."""

    __slots__ = ("dtype", "name")

    def __init__(self, dtype, name):
        self.dtype, self.name = dtype, name

    def __repr__(self):
        return f"torch.{self.name}"


class _StorageRef:
    """A storage being loaded: its bytes as a 1-d uint8 tensor (``base``), their dtype, and
    where they came from (for error messages)."""

    __slots__ = ("base", "dtype", "key", "nbytes")

    def __init__(self, base, dtype, key):
        self.base, self.dtype, self.key = base, dtype, key
        self.nbytes = base.numel()

    def typed(self, dtype):
        itemsize = dtype.itemsize
        n = self.nbytes - self.nbytes % itemsize
        base = self.base if n == self.nbytes else self.base[:n]
        return base.view(dtype) if itemsize > 1 or dtype is not _tl().uint8 else base


def _check_ints(what, values):
    if not isinstance(values, (tuple, list)) or not all(
            type(v) is int and v >= 0 for v in values):
        raise RuntimeError(f"corrupt checkpoint: tensor {what} must be a sequence of "
                           f"non-negative ints, got {values!r}")
    return tuple(values)


def _tensor_on(storage, offset, size, stride, dtype=None):
    """A tensor of ``size``/``stride`` at ``offset`` (elements) in ``storage``, sharing it;
    out-of-range geometry raises before any view exists."""
    if not isinstance(storage, _StorageRef):
        raise pickle.UnpicklingError(
            f"corrupt checkpoint: a tensor's storage must be a persistent storage id, "
            f"got {type(storage).__name__}")
    dtype = storage.dtype if dtype is None else dtype
    size, stride = _check_ints("size", size), _check_ints("stride", stride)
    if len(size) != len(stride):
        raise RuntimeError(f"corrupt checkpoint: tensor size {list(size)} and stride "
                           f"{list(stride)} differ in length")
    if type(offset) is not int or offset < 0:
        raise RuntimeError(f"corrupt checkpoint: storage offset {offset!r} is not a "
                           f"non-negative int")
    typed = storage.typed(dtype)
    n = typed.numel()
    if 0 not in size:
        last = offset + sum((s - 1) * st for s, st in zip(size, stride))
        if last >= n:
            raise RuntimeError(
                f"corrupt checkpoint: a tensor of size {list(size)}, stride {list(stride)} "
                f"and storage offset {offset} needs {last + 1} elements of {dtype} but its "
                f"storage (record '{storage.key}') holds {n}")
    elif offset > n:
        raise RuntimeError(f"corrupt checkpoint: storage offset {offset} is past the end of "
                           f"storage '{storage.key}' ({n} elements)")
    t = typed.as_strided(size, stride, offset)
    # a tensor of its own over the shared storage, as torch's set_() makes: not a view
    return _alias_of(t, False)


def _set_requires_grad(t, requires_grad):
    if requires_grad:
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"corrupt checkpoint: a tensor of dtype {t.dtype} cannot "
                               f"require grad")
        t.requires_grad_(True)
    return t


def _rebuild_tensor(storage, storage_offset, size, stride):
    """``torch._utils._rebuild_tensor``: a tensor over a loaded storage."""
    return _tensor_on(storage, storage_offset, size, stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    """``torch._utils._rebuild_tensor_v2``: a tensor over a loaded storage, with its
    requires_grad (backward hooks are never serialized, as in PyTorch)."""
    t = _tensor_on(storage, storage_offset, size, stride)
    return _set_requires_grad(t, bool(requires_grad))


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    """``torch._utils._rebuild_tensor_v3``: as v2 with the dtype given apart from the storage."""
    if not isinstance(dtype, _dtype_mod.dtype):
        raise pickle.UnpicklingError(f"corrupt checkpoint: {dtype!r} is not a dtype")
    t = _tensor_on(storage, storage_offset, size, stride, dtype)
    return _set_requires_grad(t, bool(requires_grad))


def _set_state(obj, state):
    """Attributes restored on a Parameter or tensor: plain names only (never a property,
    a method or a dunder of the class, which could change what the object is)."""
    if state is None:
        return obj
    dict_state, slots_state = (state if isinstance(state, tuple) and len(state) == 2
                               else (state, None))
    for part in (dict_state, slots_state):
        if not part:
            continue
        if not isinstance(part, dict):
            raise pickle.UnpicklingError(f"corrupt checkpoint: object state must be a dict, "
                                         f"got {type(part).__name__}")
        for k, v in part.items():
            if not isinstance(k, str) or k.startswith("__") or hasattr(type(obj), k):
                raise pickle.UnpicklingError(
                    f"refusing to set attribute {k!r} of a {type(obj).__name__} while loading")
            d = getattr(obj, "__dict__", None)
            if d is None:
                # tensorlib.Tensor has slots only: a plain tensor cannot carry attributes
                warnings.warn(f"the attribute {k!r} saved on a tensor is dropped: "
                              f"tensorlib.Tensor objects carry no attributes", UserWarning,
                              stacklevel=2)
                continue
            d[k] = v
    return obj


def _rebuild_parameter(data, requires_grad, backward_hooks):
    """``torch._utils._rebuild_parameter``: a Parameter sharing ``data``'s storage."""
    from tensorlib.nn import Parameter
    if not isinstance(data, TensorBase):
        raise pickle.UnpicklingError(f"corrupt checkpoint: Parameter data must be a tensor, "
                                     f"got {type(data).__name__}")
    return Parameter(data, bool(requires_grad))


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    """``torch._utils._rebuild_parameter_with_state``: a Parameter and its attributes."""
    return _set_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    """``torch._utils._rebuild_meta_tensor_no_storage``: a meta tensor (no data)."""
    if not isinstance(dtype, _dtype_mod.dtype):
        raise pickle.UnpicklingError(f"corrupt checkpoint: {dtype!r} is not a dtype")
    t = _tl().empty_strided(_check_ints("size", size), _check_ints("stride", stride),
                            dtype=dtype, device="meta")
    return _set_requires_grad(t, bool(requires_grad))


def _rebuild_from_type_v2(func, new_type, args, state):
    """``torch._tensor._rebuild_from_type_v2``: a tensor rebuilt by ``func`` plus attributes;
    only tensorlib's own Tensor and Parameter types are accepted as ``new_type``."""
    from tensorlib.nn import Parameter
    if func not in _REBUILD_FUNCTIONS:
        raise pickle.UnpicklingError(f"_rebuild_from_type_v2 with unsupported function "
                                     f"{func!r}")
    ret = func(*args)
    if new_type is Parameter and not isinstance(ret, Parameter):
        ret = Parameter(ret, ret.requires_grad)
    elif new_type is not _tl().Tensor and not isinstance(ret, new_type):
        raise pickle.UnpicklingError(f"tensor subclass {new_type!r} is not supported")
    return _set_state(ret, state)


def _get_layout(name):
    """``torch.serialization._get_layout``: only the strided layout exists here."""
    if name == "torch.strided":
        return _tl().strided
    raise pickle.UnpicklingError(f"layout {name!r} is not supported by tensorlib")


def _device(*args):
    """``torch.device`` as pickled (``('cpu',)`` or ``('cuda', 0)``)."""
    if len(args) == 2 and args[1] is not None:
        return _Device(f"{args[0]}:{int(args[1])}")
    if len(args) not in (1, 2) or not isinstance(args[0], str):
        raise pickle.UnpicklingError(f"corrupt checkpoint: torch.device{args!r}")
    return _Device(args[0])


def _codecs_encode(obj, encoding="utf-8", errors="strict"):
    """``_codecs.encode`` as protocol-2 pickles use it for bytes: text codecs only."""
    if not isinstance(obj, str) or encoding not in ("latin1", "latin-1", "utf-8", "utf8",
                                                     "ascii") or errors != "strict":
        raise pickle.UnpicklingError(f"_codecs.encode is only allowed to make bytes from str "
                                     f"with latin1/utf-8/ascii, got {encoding!r}")
    return obj.encode(encoding)


_np_multiarray = getattr(np, "_core", None) or np.core
_np_reconstruct_real = _np_multiarray.multiarray._reconstruct
_np_scalar_real = _np_multiarray.multiarray.scalar


def _np_reconstruct(subtype, shape, dtype):
    """NumPy's ``_reconstruct`` restricted to a plain empty ndarray (``BUILD`` fills it)."""
    if subtype is not np.ndarray:
        raise pickle.UnpicklingError(f"only numpy.ndarray can be reconstructed, got "
                                     f"{subtype!r}")
    return _np_reconstruct_real(np.ndarray, (0,), dtype)


def _np_scalar(dtype, obj=None):
    """NumPy's ``scalar`` for plain (non-object) dtypes from raw bytes."""
    if not isinstance(dtype, np.dtype) or dtype.hasobject or not isinstance(obj, bytes):
        raise pickle.UnpicklingError(f"only NumPy scalars of plain dtypes from bytes can be "
                                     f"loaded with weights_only=True (got {dtype!r})")
    return _np_scalar_real(dtype, obj)


def _np_frombuffer(buf, dtype, shape, order):
    """NumPy's ``_frombuffer`` (arrays in protocol-5 pickles), for plain dtypes and a buffer
    holding exactly the array's bytes."""
    if (not isinstance(buf, (bytes, bytearray)) or not isinstance(dtype, np.dtype)
            or dtype.hasobject or not isinstance(shape, tuple)
            or not all(type(n) is int and n >= 0 for n in shape) or order not in ("C", "F")):
        raise pickle.UnpicklingError("only NumPy arrays of plain dtypes can be loaded with "
                                     "weights_only=True")
    if int(np.prod(shape, dtype=np.int64)) * dtype.itemsize != len(buf):
        raise pickle.UnpicklingError(f"corrupt checkpoint: a NumPy array of shape {shape} "
                                     f"and dtype {dtype} with {len(buf)} bytes")
    return np.frombuffer(bytearray(buf), dtype=dtype).reshape(shape, order=order)


_REBUILD_FUNCTIONS = frozenset([_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3,
                                _rebuild_parameter, _rebuild_parameter_with_state,
                                _rebuild_meta_tensor_no_storage])


def _torch_names():
    """name -> object for every global a PyTorch checkpoint of plain tensors may name."""
    tl = _tl()
    from tensorlib.nn import Parameter
    names = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._utils._rebuild_meta_tensor_no_storage": _rebuild_meta_tensor_no_storage,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.serialization._get_layout": _get_layout,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Tensor": tl.Tensor,
        "torch.Size": tl.Size,
        "torch.device": _device,
        "_codecs.encode": _codecs_encode,
        "builtins.set": set, "builtins.frozenset": frozenset,
        "builtins.bytearray": _bytearray, "builtins.complex": complex,
        "torch.UntypedStorage": _StorageType(tl.uint8, "UntypedStorage"),
        "torch.storage.UntypedStorage": _StorageType(tl.uint8, "UntypedStorage"),
    }
    for name, sname in _STORAGE_NAMES.items():
        dt = getattr(tl, name)
        names[f"torch.{name}"] = dt
        names[f"torch.{sname}"] = _StorageType(dt, sname)
    for alias, name in (("half", "float16"), ("float", "float32"), ("double", "float64"),
                        ("short", "int16"), ("int", "int32"), ("long", "int64")):
        names[f"torch.{alias}"] = getattr(tl, name)
    for mod in ("numpy.core.multiarray", "numpy._core.multiarray"):
        names[f"{mod}._reconstruct"] = _np_reconstruct
        names[f"{mod}.scalar"] = _np_scalar
        names[f"{mod.rsplit('.', 1)[0]}.numeric._frombuffer"] = _np_frombuffer
    names["numpy.ndarray"] = np.ndarray
    names["numpy.dtype"] = np.dtype
    for code in "?bBhHiIlLqQefdg":
        cls = type(np.dtype(code))
        names[f"numpy.dtypes.{cls.__name__}"] = cls
    return names


_NAMES = None


def _bytearray(*args):
    """``bytearray`` as protocol-2 pickles use it (from a str or bytes), never from a size."""
    if not args or not isinstance(args[0], (str, bytes)):
        raise pickle.UnpicklingError("bytearray is only allowed from str or bytes")
    return bytearray(*args)


def _callables():
    """The allowed globals a pickle may call (REDUCE/NEWOBJ): not the classes that are only
    arguments (numpy.ndarray for _reconstruct, torch.Tensor as _rebuild_from_type_v2's
    type), whose constructors would allocate whatever size a file asks for."""
    names = _names()
    from tensorlib.nn import Parameter
    return [_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,
            _rebuild_parameter_with_state, _rebuild_meta_tensor_no_storage,
            _rebuild_from_type_v2, _get_layout, _device, _codecs_encode, _bytearray,
            collections.OrderedDict, collections.Counter, set, frozenset, complex,
            names["torch.Size"], Parameter, _np_reconstruct, _np_scalar, _np_frombuffer,
            np.dtype]


def _names():
    global _NAMES
    if _NAMES is None:
        _NAMES = _torch_names()
    return _NAMES


def _unsupported(module, name):
    """The reason a known PyTorch global cannot be loaded here, or None."""
    full = f"{module}.{name}"
    if module == "torch._utils" and name in _UNSUPPORTED_REBUILDS:
        return f"{full} ({_UNSUPPORTED_REBUILDS[name]}) is not supported by tensorlib"
    if module == "torch" and (name in _UNSUPPORTED_DTYPES or name in _UNSUPPORTED_STORAGES):
        return f"{full}: this dtype is not supported by tensorlib"
    return None


# -- safe globals (weights_only=True) ------------------------------------------------------------

_user_safe = set()


def add_safe_globals(safe_globals):
    """Allow more globals in ``load(..., weights_only=True)``: classes or functions (named
    ``module.qualname``), or ``(obj, "full.name")`` pairs. Globals of ``os``/``sys`` are never
    allowed.

    >>> class Point:
    ...     pass
    >>> tensorlib.serialization.add_safe_globals([Point])
    >>> Point in tensorlib.serialization.get_safe_globals()
    True
    >>> tensorlib.serialization.clear_safe_globals()
    """
    for g in safe_globals:
        if isinstance(g, tuple):
            if len(g) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got tuple of length: {len(g)}")
            if type(g[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full "
                                f"path, but got: {type(g[1])}")
    _user_safe.update(safe_globals)


def get_safe_globals():
    """The globals :func:`add_safe_globals` added (a list).

    >>> tensorlib.serialization.get_safe_globals()
    []
    """
    return list(_user_safe)


def clear_safe_globals():
    """Forget every global :func:`add_safe_globals` added.

    >>> tensorlib.serialization.clear_safe_globals(); tensorlib.serialization.get_safe_globals()
    []
    """
    _user_safe.clear()


class safe_globals:
    """Context manager: ``globals`` are allowed by ``weights_only=True`` inside the block.

    >>> import collections
    >>> with tensorlib.serialization.safe_globals([collections.deque]):
    ...     collections.deque in tensorlib.serialization.get_safe_globals()
    True
    >>> collections.deque in tensorlib.serialization.get_safe_globals()
    False
    """

    def __init__(self, safe_globals):
        self.safe_globals = list(safe_globals)
        self._added = []

    def __enter__(self):
        self._added = [g for g in self.safe_globals if g not in _user_safe]
        add_safe_globals(self.safe_globals)
        return self

    def __exit__(self, *exc):
        _user_safe.difference_update(self._added)
        return False


def _user_names():
    out = {}
    for g in _user_safe:
        if isinstance(g, tuple):
            out[g[1]] = g[0]
        else:
            out[f"{g.__module__}.{g.__qualname__}"] = g
    return out


def _map_name(module, name):
    """Python 2 names (protocol-2 pickles) to Python 3's, as pickle's own find_class does."""
    if (module, name) in NAME_MAPPING:
        return NAME_MAPPING[(module, name)]
    return IMPORT_MAPPING.get(module, module), name


def _unsupported_global_message(full):
    return (f"Unsupported global: GLOBAL {full} was not an allowed global by default. "
            f"Please use `tensorlib.serialization.add_safe_globals([{full}])` or the "
            f"`tensorlib.serialization.safe_globals([{full}])` context manager to allowlist "
            f"this global if you trust this class/function.")


def _is_list(x):
    return type(x) is list


class _WeightsOnlyUnpickler(pickle._Unpickler):
    """A pickle reader that resolves only allow-listed globals and lets them do only what a
    checkpoint needs: calls (REDUCE/NEWOBJ) of allowed callables, BUILD of OrderedDict
    attributes, NumPy arrays/dtypes and allow-listed classes, APPEND to lists, SETITEM to dicts.
    Extension codes and protocol-0 class instantiation are refused."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file, persistent_load, **kw):
        super().__init__(file, **kw)
        self._persistent = persistent_load
        self._allowed = dict(_names())
        self._allowed.update(_user_names())
        self._callable_ids = {id(v) for v in _callables()}
        self._callable_ids.update(id(v) for v in _user_names().values())
        self._user_types = {id(v) for v in _user_names().values() if isinstance(v, type)}

    def persistent_load(self, pid):
        return self._persistent(pid)

    def find_class(self, module, name):
        module, name = _map_name(module, name)
        full = f"{module}.{name}"
        if module.split(".")[0] in _BLOCKED_MODULES:
            raise pickle.UnpicklingError(
                f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked.")
        obj = self._allowed.get(full)
        if obj is not None:
            return obj
        reason = _unsupported(module, name)
        if reason is not None:
            raise pickle.UnpicklingError(reason)
        raise pickle.UnpicklingError(_unsupported_global_message(full))

    def _check_callable(self, func, what):
        if id(func) not in self._callable_ids or isinstance(func, (_StorageType,
                                                                   _dtype_mod.dtype)):
            raise pickle.UnpicklingError(f"Trying to {what} unrecognized object {func!r}")

    def load_reduce(self):
        args = self.stack.pop()
        func = self.stack[-1]
        self._check_callable(func, "call reduce for")
        if not isinstance(args, tuple):
            raise pickle.UnpicklingError("corrupt checkpoint: REDUCE arguments must be a tuple")
        self.stack[-1] = func(*args)
    dispatch[pickle.REDUCE[0]] = load_reduce

    def load_newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        self._check_callable(cls, "create a new object of")
        if not isinstance(cls, type) or not isinstance(args, tuple):
            raise pickle.UnpicklingError(f"corrupt checkpoint: NEWOBJ of {cls!r}")
        from tensorlib.nn import Parameter
        self.append(Parameter(*args) if cls is Parameter else cls.__new__(cls, *args))
    dispatch[pickle.NEWOBJ[0]] = load_newobj

    def load_newobj_ex(self):
        kwargs = self.stack.pop()
        args = self.stack.pop()
        cls = self.stack.pop()
        self._check_callable(cls, "create a new object of")
        if not isinstance(cls, type) or not isinstance(args, tuple) or not isinstance(
                kwargs, dict):
            raise pickle.UnpicklingError(f"corrupt checkpoint: NEWOBJ_EX of {cls!r}")
        self.append(cls.__new__(cls, *args, **kwargs))
    dispatch[pickle.NEWOBJ_EX[0]] = load_newobj_ex

    def load_build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        t = type(inst)
        if t is collections.OrderedDict or t is collections.Counter:
            # the attributes torch attaches to a state_dict (``_metadata``)
            if not isinstance(state, dict) or not all(isinstance(k, str) and
                                                      not k.startswith("__") for k in state):
                raise pickle.UnpicklingError("corrupt checkpoint: BUILD of an OrderedDict "
                                             "with a non-attribute state")
            inst.__dict__.update(state)
        elif t is np.ndarray:
            if (not isinstance(state, tuple) or len(state) not in (4, 5)
                    or not isinstance(state[-3], np.dtype) or state[-3].hasobject
                    or not isinstance(state[-1], (bytes, bytearray))):
                raise pickle.UnpicklingError(
                    "only NumPy arrays of plain (non-object) dtypes can be loaded with "
                    "weights_only=True")
            try:
                inst.__setstate__(state)
            except (ValueError, TypeError) as e:
                raise pickle.UnpicklingError(f"corrupt checkpoint: NumPy array state ({e})") \
                    from None
        elif isinstance(inst, np.dtype):
            try:
                inst.__setstate__(state)
            except (ValueError, TypeError) as e:
                raise pickle.UnpicklingError(f"corrupt checkpoint: NumPy dtype state ({e})") \
                    from None
        elif isinstance(inst, TensorBase) and not isinstance(inst, type):
            _set_state(inst, state)
        elif id(t) in self._user_types:
            setstate = getattr(inst, "__setstate__", None)
            if setstate is not None and getattr(t, "__setstate__", None) is not \
                    getattr(object, "__setstate__", None):
                setstate(state)
            else:
                slotstate = None
                if isinstance(state, tuple) and len(state) == 2:
                    state, slotstate = state
                if state:
                    inst.__dict__.update(state)
                for k, v in (slotstate or {}).items():
                    setattr(inst, k, v)
        else:
            raise pickle.UnpicklingError(
                f"Can only build Tensor, Parameter, OrderedDict, NumPy arrays or types "
                f"allowlisted via `add_safe_globals`, but got {t}")
    dispatch[pickle.BUILD[0]] = load_build

    def load_append(self):
        value = self.stack.pop()
        if not _is_list(self.stack[-1]):
            raise pickle.UnpicklingError(f"Can only append to lists, but got "
                                         f"{type(self.stack[-1])}")
        self.stack[-1].append(value)
    dispatch[pickle.APPEND[0]] = load_append

    def load_appends(self):
        items = self.pop_mark()
        if not _is_list(self.stack[-1]):
            raise pickle.UnpicklingError(f"Can only extend lists, but got "
                                         f"{type(self.stack[-1])}")
        self.stack[-1].extend(items)
    dispatch[pickle.APPENDS[0]] = load_appends

    def _check_dict(self, op):
        if type(self.stack[-1]) not in (dict, collections.OrderedDict, collections.Counter):
            raise pickle.UnpicklingError(
                f"Can only {op} for dict, collections.OrderedDict, collections.Counter, "
                f"but got {type(self.stack[-1])}")

    def load_setitem(self):
        value = self.stack.pop()
        key = self.stack.pop()
        self._check_dict("SETITEM")
        self.stack[-1][key] = value
    dispatch[pickle.SETITEM[0]] = load_setitem

    def load_setitems(self):
        items = self.pop_mark()
        self._check_dict("SETITEMS")
        d = self.stack[-1]
        for i in range(0, len(items) - 1, 2):
            d[items[i]] = items[i + 1]
    dispatch[pickle.SETITEMS[0]] = load_setitems

    def load_additems(self):
        items = self.pop_mark()
        if type(self.stack[-1]) is not set:
            raise pickle.UnpicklingError("Can only add items to sets")
        self.stack[-1].update(items)
    dispatch[pickle.ADDITEMS[0]] = load_additems

    def load_bytearray8(self):
        # pickle's own reader allocates the declared length before reading: read, then copy
        (n,) = struct.unpack("<Q", self.read(8))
        data = self.read(n)
        if len(data) != n:
            raise pickle.UnpicklingError(f"corrupt checkpoint: a bytearray of {n} bytes is "
                                         f"truncated")
        self.append(bytearray(data))
    dispatch[pickle.BYTEARRAY8[0]] = load_bytearray8

    def _refuse(self):
        raise pickle.UnpicklingError("pickle opcode not allowed with weights_only=True "
                                     "(extension codes and protocol-0 instances)")
    for _op in (pickle.EXT1, pickle.EXT2, pickle.EXT4, pickle.INST, pickle.OBJ):
        dispatch[_op[0]] = _refuse
    del _op


class _FullUnpickler(pickle.Unpickler):
    """``weights_only=False``: any global, with PyTorch's tensor names mapped to ours."""

    def __init__(self, file, persistent_load, **kw):
        super().__init__(file, **kw)
        self._persistent = persistent_load

    def persistent_load(self, pid):
        return self._persistent(pid)

    def find_class(self, module, name):
        module, name = _map_name(module, name)
        obj = _names().get(f"{module}.{name}")
        if obj is not None and (module.startswith("torch") or module == "collections"):
            return obj
        if module.startswith("torch"):
            reason = _unsupported(module, name)
            if reason is not None:
                raise pickle.UnpicklingError(reason)
        return super().find_class(module, name)


# -- saving ---------------------------------------------------------------------------------------

class _StorageToken:
    __slots__ = ("pid",)

    def __init__(self, pid):
        self.pid = pid


class _Saver(pickle._Pickler):
    """PyTorch's pickle of an object graph: tensors as ``_rebuild_tensor_v2`` over persistent
    storage ids, tensorlib's dtypes/Size/device under torch's names."""

    def __init__(self, file, protocol, legacy):
        super().__init__(file, protocol=protocol)
        self._legacy = legacy
        self.storages = {}          # key -> a 1-d tensor over the whole storage
        self._keys = {}             # id(Storage) -> (key, token, dtype, Storage)

    def persistent_id(self, obj):
        if type(obj) is _StorageToken:
            return obj.pid
        return None

    def save(self, obj, save_persistent_id=True):
        if type(obj) is _Global or isinstance(obj, _dtype_mod.dtype):
            x = self.memo.get(id(obj))
            if x is not None:
                i = x[0]
                self.write(pickle.BINGET + bytes([i]) if i < 256 else
                           pickle.LONG_BINGET + struct.pack("<I", i))
                return
            if type(obj) is _Global:
                module, name = obj.module, obj.name
            else:
                module, name = "torch", obj.name
            self.write(pickle.GLOBAL + module.encode() + b"\n" + name.encode() + b"\n")
            self.memoize(obj)
            return
        super().save(obj, save_persistent_id)

    def _token(self, t):
        s = t.untyped_storage()
        entry = self._keys.get(id(s))
        dt = t.dtype
        if entry is None:
            key = str(len(self._keys))
            numel = s.nbytes() // dt.itemsize
            loc = str(t.device)
            pid = ("storage", _global("torch", _STORAGE_NAMES[dt.name]), key, loc, numel)
            if self._legacy:
                pid = pid + (None,)
            token = _StorageToken(pid)
            entry = self._keys[id(s)] = (key, token, dt, s)
            if t.device.type != "meta":
                whole = _alias_of(t, False).as_strided((numel,), (1,), 0)
                self.storages[key] = whole
        elif entry[2] is not dt:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same "
                               "data as different types")
        return entry[1]

    def reducer_override(self, obj):
        if isinstance(obj, TensorBase):
            from tensorlib.nn import Parameter
            hooks = collections.OrderedDict()
            if isinstance(obj, Parameter):
                data = _alias_of(obj, False)
                state = obj.__dict__
                if state:
                    return (_global("torch._utils", "_rebuild_parameter_with_state"),
                            (data, obj.requires_grad, hooks, dict(state)))
                return (_global("torch._utils", "_rebuild_parameter"),
                        (data, obj.requires_grad, hooks))
            if obj.device.type == "meta":
                return (_global("torch._utils", "_rebuild_meta_tensor_no_storage"),
                        (obj.dtype, tuple(obj.shape), tuple(obj.stride()), obj.requires_grad))
            return (_global("torch._utils", "_rebuild_tensor_v2"),
                    (self._token(obj), obj.storage_offset(), tuple(obj.shape),
                     tuple(obj.stride()), obj.requires_grad, hooks))
        tl = _tl()
        if type(obj) is tl.Size:
            return (_global("torch", "Size"), (tuple(obj),))
        if type(obj) is _Device:
            return (_global("torch", "device"), (str(obj),))
        return NotImplemented


def _storage_bytes(whole):
    """The bytes of a storage (a 1-d tensor over all of it) as a memoryview, from the host."""
    tl = _tl()
    if whole.device.type != "cpu":
        whole = whole.to("cpu")
    if whole.numel() == 0:
        return memoryview(b"")
    return memoryview(whole.view(tl.uint8).numpy()).cast("B")


class _ZipWriter:
    """A STORED zip archive written front to back (no seeking: sizes and CRCs are known
    before each record), every record's data aligned to ``_ALIGNMENT`` bytes through padding
    in its local header's extra field, Zip64 records where sizes or offsets need them."""

    def __init__(self, f, prefix):
        self.f, self.prefix, self.pos, self.entries = f, prefix, 0, []

    def _write(self, b):
        self.f.write(b)
        self.pos += len(b)

    def record(self, name, data, crc=None):
        data = memoryview(data).cast("B") if not isinstance(data, bytes) else data
        size = len(data)
        crc = zlib.crc32(data) if crc is None else crc
        fname = f"{self.prefix}/{name}".encode()
        offset = self.pos
        zip64 = size >= _ZIP64_LIMIT or offset >= _ZIP64_LIMIT
        extra = struct.pack("<HHQQ", 1, 16, size, size) if zip64 else b""
        start = offset + 30 + len(fname) + len(extra) + 4
        pad = (-start) % _ALIGNMENT
        extra += struct.pack("<HH", 0x4246, pad) + b"Z" * pad      # "FB": torch's padding id
        csize = 0xFFFFFFFF if zip64 else size
        self._write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 45 if zip64 else 20, 0x800, 0,
                                0, 0x21, crc, csize, csize, len(fname), len(extra)))
        self._write(fname)
        self._write(extra)
        self._write(data)
        self.entries.append((fname, crc, size, offset))

    def close(self):
        cd_start = self.pos
        for fname, crc, size, offset in self.entries:
            fields = []
            if size >= _ZIP64_LIMIT:
                fields += [size, size]
            if offset >= _ZIP64_LIMIT:
                fields.append(offset)
            extra = (struct.pack("<HH", 1, 8 * len(fields)) + struct.pack(
                f"<{len(fields)}Q", *fields)) if fields else b""
            s32 = 0xFFFFFFFF if size >= _ZIP64_LIMIT else size
            o32 = 0xFFFFFFFF if offset >= _ZIP64_LIMIT else offset
            self._write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45 if fields else 20,
                                    0x800, 0, 0, 0x21, crc, s32, s32, len(fname), len(extra),
                                    0, 0, 0, 0, o32))
            self._write(fname)
            self._write(extra)
        cd_size = self.pos - cd_start
        n = len(self.entries)
        if n >= 0xFFFF or cd_start >= _ZIP64_LIMIT or cd_size >= _ZIP64_LIMIT:
            eocd64 = self.pos
            self._write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, n, n,
                                    cd_size, cd_start))
            self._write(struct.pack("<IIQI", 0x07064B50, 0, eocd64, 1))
            self._write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, min(n, 0xFFFF),
                                    min(n, 0xFFFF), 0xFFFFFFFF, 0xFFFFFFFF, 0))
        else:
            self._write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, n, n, cd_size, cd_start, 0))


# Below this many bytes of storages, their CRCs are computed in line.
_CRC_THREADS_FROM = 1 << 24


def _write_storages(w, records):
    """Write ``records`` ((name, bytes), ...) in order. For a large checkpoint the CRC of
    every record is computed on two threads while earlier records are written (zlib and the
    file write both release the GIL), so the checksums cost little beyond the writes."""
    if sum(len(data) for _, data in records) < _CRC_THREADS_FROM:
        for name, data in records:
            w.record(name, data)
        return
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=2) as pool:
        crcs = [pool.submit(zlib.crc32, data) for _, data in records]
        for (name, data), crc in zip(records, crcs):
            w.record(name, data, crc.result())


def _open_for(f, mode):
    """(file object, close it when done?) for a path, a PathLike or a file object."""
    if isinstance(f, (str, bytes, os.PathLike)):
        return open(f, mode), True
    return f, False


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Save ``obj`` (tensors, Parameters, state_dicts, nested containers, NumPy arrays,
    Python scalars) to ``f`` (a path, ``pathlib.Path`` or a writable binary file object) in
    PyTorch's zip format, which ``torch.load(f, weights_only=True)`` reads. Tensors sharing
    a storage (views) are saved with that storage once and load sharing it again.
    ``_use_new_zipfile_serialization=False`` writes PyTorch's legacy (pre-1.6) format.

    >>> import io
    >>> buf = io.BytesIO()
    >>> tensorlib.save(tensorlib.nn.Linear(2, 1).state_dict(), buf)
    >>> sorted(tensorlib.load(io.BytesIO(buf.getvalue())).keys())
    ['bias', 'weight']
    """
    if pickle_module is not pickle and pickle_module is not None:
        raise ValueError("tensorlib.save writes torch's pickle with the standard pickle "
                         "module only")
    buf = io.BytesIO()
    saver = _Saver(buf, pickle_protocol, legacy=not _use_new_zipfile_serialization)
    saver.dump(obj)
    fileobj, close = _open_for(f, "wb")
    try:
        if _use_new_zipfile_serialization:
            w = _ZipWriter(fileobj, "archive")
            w.record("data.pkl", buf.getvalue())
            w.record(".format_version", b"1")
            w.record(".storage_alignment", str(_ALIGNMENT).encode())
            if not _disable_byteorder_record:
                w.record("byteorder", sys.byteorder.encode())
            _write_storages(w, [(f"data/{key}", _storage_bytes(whole))
                                for key, whole in saver.storages.items()])
            w.record("version", _ZIP_VERSION_RECORD)
            w.record(".data/serialization_id",
                     str(int.from_bytes(os.urandom(16), "little")).zfill(40).encode())
            w.close()
        else:
            _legacy_save(fileobj, buf.getvalue(), saver, pickle_protocol)
        fileobj.flush()
    finally:
        if close:
            fileobj.close()


def _legacy_save(fileobj, data_pkl, saver, protocol):
    sys_info = {"protocol_version": PROTOCOL_VERSION,
                "little_endian": sys.byteorder == "little",
                "type_sizes": {"short": struct.calcsize("=h"), "int": struct.calcsize("=i"),
                               "long": struct.calcsize("=l")}}
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, sys_info):
        pickle.dump(header, fileobj, protocol=protocol)
    fileobj.write(data_pkl)
    keys = sorted(saver.storages)
    pickle.dump(keys, fileobj, protocol=protocol)
    for key in keys:
        whole = saver.storages[key]
        fileobj.write(struct.pack("=q", whole.numel()))     # native, as sys_info says
        fileobj.write(_storage_bytes(whole))


# -- loading --------------------------------------------------------------------------------------

def _is_storage_callable(map_location):
    return callable(map_location) and not isinstance(map_location, (dict, str, _Device, type))


def _restore_device(location, map_location):
    """The device a storage saved at ``location`` loads to."""
    if isinstance(map_location, dict):
        location = map_location.get(location, location)
    elif isinstance(map_location, (str, _Device)):
        location = map_location
    elif map_location is not None and not _is_storage_callable(map_location):
        raise TypeError(f"map_location must be a string, device, dict or callable, got "
                        f"{type(map_location).__name__}")
    if isinstance(location, _Device):
        location = str(location)
    if not isinstance(location, str):
        raise pickle.UnpicklingError(f"corrupt checkpoint: storage location {location!r}")
    kind = location.split(":")[0]
    if kind == "cuda":
        from tensorlib import cuda
        if not cuda.is_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but "
                "tensorlib.cuda.is_available() is False. If you are running on a CPU-only "
                "machine, please use tensorlib.load with map_location=tensorlib.device('cpu') "
                "to map your storages to the CPU.")
    elif kind not in ("cpu", "meta"):
        raise RuntimeError(f"don't know how to restore data location of a storage (tagged "
                           f"with {location})")
    return _Device(location)


def _readinto_exact(f, view, what):
    got, n = 0, len(view)
    while got < n:
        k = f.readinto(view[got:])
        if not k:
            raise RuntimeError(f"corrupt checkpoint: {what} is truncated ({got} of {n} bytes)")
        got += k


def _empty_bytes(nbytes, dev):
    tl = _tl()
    return tl.empty(nbytes, dtype=tl.uint8, device="meta" if dev.type == "meta" else "cpu")


def _storage_device(location, map_location):
    """Where a storage is first made: a map_location callable is handed it on the CPU."""
    if _is_storage_callable(map_location):
        return _Device("cpu")
    return _restore_device(location, map_location)


def _finish_storage(base, location, dev, map_location):
    """Hand a CPU storage to a map_location callable (None from it: the saved location, as
    with no map_location), then move the storage to its device."""
    if _is_storage_callable(map_location):
        s = base.untyped_storage()
        res = map_location(s, location)
        if res is None:
            dev = _restore_device(location, None)
        elif res is not s:
            raise TypeError("a map_location callable must return the storage it was given "
                            "(to keep it where it is) or None")
    if dev.type not in ("cpu", "meta") or (dev.type == "meta" and base.device.type != "meta"):
        base = base.to(dev)
    return base


class _ZipSource:
    """Storages of a zip checkpoint: each read (or mapped) from its own record."""

    legacy = False

    def __init__(self, zf, fileobj, size, prefix, byteorder, mmap_file):
        self.zf, self.fileobj, self.size, self.prefix = zf, fileobj, size, prefix
        self.byteorder, self.mmap_file, self._mm = byteorder, mmap_file, None
        self.infos = {i.filename: i for i in zf.infolist()}

    def locate(self, name):
        """(data offset, nbytes, stored?) of the entry ``name``, checked against the file."""
        info = self.infos[name]
        if not 0 <= info.header_offset < self.size:
            raise RuntimeError(f"corrupt checkpoint: zip entry {name!r} starts outside the "
                               f"file")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise RuntimeError(f"corrupt checkpoint: zip entry {name!r} uses compression "
                               f"method {info.compress_type} (only stored and deflated "
                               f"records are read)")
        self.fileobj.seek(info.header_offset)
        head = self.fileobj.read(30)
        if len(head) != 30 or head[:4] != b"PK\x03\x04":
            raise RuntimeError(f"corrupt checkpoint: bad local header for zip entry {name!r}")
        nl, el = struct.unpack("<HH", head[26:30])
        start = info.header_offset + 30 + nl + el
        if info.compress_type == zipfile.ZIP_STORED:
            if info.compress_size != info.file_size or start + info.file_size > self.size:
                raise RuntimeError(f"corrupt checkpoint: zip entry {name!r} runs past the end "
                                   f"of the file (truncated?)")
            return start, info.file_size, True
        # a compressed entry may not declare more than deflate can expand to
        if (info.file_size > 1032 * info.compress_size + 1024
                or start + info.compress_size > self.size):
            raise RuntimeError(f"corrupt checkpoint: zip entry {name!r} declares "
                               f"{info.file_size} bytes from {info.compress_size}")
        return start, info.file_size, False

    def read_into(self, name, view):
        start, n, stored = self.locate(name)
        if stored:
            self.fileobj.seek(start)
            _readinto_exact(self.fileobj, view, f"zip entry {name!r}")
        else:
            try:
                with self.zf.open(name) as r:
                    _readinto_exact(r, view, f"zip entry {name!r}")
            except (zipfile.BadZipFile, zlib.error, EOFError) as e:
                raise RuntimeError(f"corrupt checkpoint: zip entry {name!r}: {e}") from None

    def read_small(self, name):
        full = f"{self.prefix}/{name}"
        if full not in self.infos:
            return None
        n = self.locate(full)[1]
        buf = bytearray(n)
        self.read_into(full, memoryview(buf))
        return bytes(buf)

    def storage(self, key, nbytes, dtype, location, map_location):
        name = f"{self.prefix}/data/{key}"
        if name not in self.infos:
            raise RuntimeError(f"corrupt checkpoint: the record '{name}' of storage {key!r} "
                               f"is missing from the archive")
        start, n, stored = self.locate(name)
        if n < nbytes:
            raise RuntimeError(f"corrupt checkpoint: the record '{name}' holds {n} bytes but "
                               f"its storage of {nbytes // dtype.itemsize} {dtype} elements "
                               f"needs {nbytes}")
        dev = _storage_device(location, map_location)
        swap = self.byteorder != sys.byteorder and dtype.itemsize > 1
        if dev.type == "meta":
            base = _empty_bytes(nbytes, dev)
        elif self.mmap_file is not None and stored and not swap and start % dtype.itemsize == 0:
            if self._mm is None:
                self._mm = np.memmap(self.mmap_file, dtype=np.uint8, mode="c")
            base = from_numpy(self._mm[start:start + nbytes])
        else:
            # read on the host; _finish_storage moves the bytes to a CUDA device
            base = _empty_bytes(nbytes, _Device("cpu") if dev.type == "cuda" else dev)
            if nbytes:
                arr = base.numpy()
                if n == nbytes:
                    self.read_into(name, memoryview(arr))
                else:
                    tmp = bytearray(n)
                    self.read_into(name, memoryview(tmp))
                    arr[:] = np.frombuffer(tmp, np.uint8, nbytes)
                if swap:
                    arr.view(f"u{dtype.itemsize}").byteswap(inplace=True)
        return _finish_storage(base, location, dev, map_location)


class _LegacySource:
    """Storages of a legacy checkpoint: they follow the pickle (in the order of a key list,
    each an 8-byte element count then its bytes), so the pickle's storages are allocated as
    it names them, the bytes read into them afterwards (``fill``). The sum of their sizes may
    not exceed what is left of the file."""

    legacy = True

    def __init__(self, fileobj, size, little):
        self.fileobj, self.size, self.little = fileobj, size, little
        self.pending = {}           # key -> (base, numel, itemsize)
        self.declared = 0

    def storage(self, key, nbytes, dtype, location, map_location):
        self.declared += nbytes
        if self.declared > self.size - self.fileobj.tell():
            raise RuntimeError(
                f"corrupt checkpoint: legacy storage {key!r} of {nbytes} bytes does not fit in "
                f"what is left of the file (storages declare {self.declared} bytes)")
        dev = _storage_device(location, map_location)
        if dev.type not in ("cpu", "meta"):
            raise RuntimeError("files in PyTorch's legacy format load to cpu or meta only: "
                               "load with map_location='cpu', then move the tensors")
        base = _finish_storage(_empty_bytes(nbytes, dev), location, dev, map_location)
        self.pending[key] = (base, nbytes // dtype.itemsize, dtype.itemsize)
        return base

    def fill(self, keys):
        f = self.fileobj
        if set(keys) != set(self.pending):
            missing = sorted(set(self.pending) - set(keys)) or sorted(set(keys) -
                                                                       set(self.pending))
            raise RuntimeError(f"corrupt checkpoint: legacy storage keys {missing} are named "
                               f"by only one of the pickle and the storage list")
        for key in keys:
            base, numel, itemsize = self.pending[key]
            raw = f.read(8)
            if len(raw) != 8:
                raise RuntimeError(f"corrupt checkpoint: legacy storage {key!r} is truncated")
            n = struct.unpack("<q" if self.little else ">q", raw)[0]
            if n != numel:
                raise RuntimeError(f"corrupt checkpoint: legacy storage {key!r} holds {n} "
                                   f"elements, the pickle declares {numel}")
            nbytes = numel * itemsize
            if base.device.type == "meta":
                if f.seek(nbytes, 1) > self.size:
                    raise RuntimeError(f"corrupt checkpoint: legacy storage {key!r} is "
                                       f"truncated")
                continue
            if nbytes:
                arr = base.numpy()
                _readinto_exact(f, memoryview(arr), f"legacy storage {key!r}")
                if not self.little and itemsize > 1:
                    arr.view(f"u{itemsize}").byteswap(inplace=True)


class _Passthrough(Exception):
    """An exception from reading storages or from a map_location callable, carried through
    the unpickler untouched (the unpickler's own failures are reported as corruption)."""

    def __init__(self, exc):
        super().__init__(exc)
        self.exc = exc


def _persistent_loader(source, map_location):
    load = _storage_loader(source, map_location)

    def persistent_load(pid):
        try:
            return load(pid)
        except pickle.UnpicklingError:
            raise
        except Exception as e:
            raise _Passthrough(e) from None

    return persistent_load


def _storage_loader(source, map_location):
    loaded = {}

    def persistent_load(pid):
        if type(pid) is not tuple or len(pid) not in (5, 6) or pid[0] not in ("storage",
                                                                               b"storage"):
            raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, but got "
                                         f"{pid!r:.80}")
        storage_type, key, location, numel = pid[1:5]
        view_metadata = pid[5] if len(pid) == 6 else None
        if isinstance(location, bytes):
            location = location.decode("ascii")
        if not isinstance(storage_type, _StorageType):
            raise pickle.UnpicklingError(f"corrupt checkpoint: {storage_type!r} is not a "
                                         f"storage type")
        if (not isinstance(key, str) or "/" in key or "\\" in key or key in ("", ".", "..")
                or type(numel) is not int or numel < 0):
            raise pickle.UnpicklingError(f"corrupt checkpoint: storage id {pid!r:.120}")
        dtype = storage_type.dtype
        ref = loaded.get(key)
        if ref is None:
            base = source.storage(key, numel * dtype.itemsize, dtype, location, map_location)
            ref = loaded[key] = _StorageRef(base, dtype, key)
        if view_metadata is not None:
            if not isinstance(view_metadata, tuple) or len(view_metadata) != 3:
                raise pickle.UnpicklingError("corrupt checkpoint: storage view metadata")
            view_key, offset, size = view_metadata
            if type(offset) is not int or type(size) is not int or offset < 0 or size < 0 or (
                    (offset + size) * dtype.itemsize > ref.nbytes):
                raise RuntimeError(f"corrupt checkpoint: storage view {view_metadata!r} is "
                                   f"outside storage {key!r}")
            lo = offset * dtype.itemsize
            return _StorageRef(ref.base[lo:lo + size * dtype.itemsize], dtype, view_key)
        return ref

    return persistent_load


def _no_persistent(pid):
    raise pickle.UnpicklingError("unexpected persistent id")


def _unpickle(f, persistent_load, weights_only, pickle_module, encoding):
    try:
        return _unpickle_inner(f, persistent_load, weights_only, pickle_module, encoding)
    except _Passthrough as p:
        raise p.exc.with_traceback(p.exc.__traceback__) from None


def _unpickle_inner(f, persistent_load, weights_only, pickle_module, encoding):
    if weights_only:
        try:
            return _WeightsOnlyUnpickler(f, persistent_load, encoding=encoding).load()
        except pickle.UnpicklingError as e:
            raise pickle.UnpicklingError(
                f"Weights only load failed. {e}\ntensorlib.load with weights_only=True (the "
                f"default) resolves only allow-listed globals. Re-running with "
                f"weights_only=False can run arbitrary code: do it only if you trust the "
                f"source of the checkpoint.") from None
        except (EOFError, IndexError, struct.error, KeyError, UnicodeDecodeError, ValueError,
                TypeError, AttributeError, OverflowError, MemoryError) as e:
            # the pickle machine's failures on a damaged stream, and calls of the allowed
            # functions with arguments no real checkpoint has (storage reading's errors pass
            # through _Passthrough untouched; our checks raise RuntimeError/UnpicklingError)
            raise pickle.UnpicklingError(f"corrupt checkpoint: the pickle could not be read "
                                         f"({type(e).__name__}: {e})") from None
    mod = pickle_module or pickle
    if mod is pickle:
        return _FullUnpickler(f, persistent_load, encoding=encoding).load()
    u = mod.Unpickler(f, encoding=encoding)
    u.persistent_load = persistent_load
    return u.load()


def _load_zip(fileobj, size, map_location, weights_only, pickle_module, mmap_file, encoding):
    try:
        zf = zipfile.ZipFile(fileobj)
        infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, struct.error,
            UnicodeDecodeError, OverflowError, NotImplementedError) as e:
        raise RuntimeError(f"PytorchStreamReader failed reading zip archive: the file is "
                           f"truncated or not a zip archive ({e})") from None
    if not infos:
        raise RuntimeError("PytorchStreamReader failed reading zip archive: the archive is "
                           "empty")
    seen = set()
    for info in infos:
        _check_name(info.filename)
        if info.filename in seen:
            raise RuntimeError(f"corrupt checkpoint: zip entry {info.filename!r} appears twice")
        seen.add(info.filename)
    prefix = infos[0].filename.split("/")[0]
    source = _ZipSource(zf, fileobj, size, prefix, sys.byteorder, mmap_file)
    pkl = source.read_small("data.pkl")
    if pkl is None:
        raise RuntimeError(f"PytorchStreamReader failed locating file data.pkl: file not "
                           f"found (archive '{prefix}')")
    byteorder = source.read_small("byteorder")
    if byteorder is not None:
        source.byteorder = byteorder.decode("ascii", "replace")
        if source.byteorder not in ("little", "big"):
            raise RuntimeError(f"corrupt checkpoint: unknown byteorder {byteorder!r}")
    return _unpickle(io.BytesIO(pkl), _persistent_loader(source, map_location), weights_only,
                     pickle_module, encoding)


def _load_legacy(fileobj, size, map_location, weights_only, pickle_module, encoding):
    def header(what):
        try:
            return _WeightsOnlyUnpickler(fileobj, _no_persistent, encoding=encoding).load()
        except Exception as e:
            raise pickle.UnpicklingError(
                f"the file is neither a zip archive (PyTorch's format since 1.6) nor a "
                f"checkpoint in PyTorch's legacy format: reading its {what} failed "
                f"({type(e).__name__}: {e})") from None

    if header("magic number") != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file? (not PyTorch's legacy format)")
    version = header("protocol version")
    if version != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {version}")
    sys_info = header("system info")
    little = sys_info.get("little_endian", True) if isinstance(sys_info, dict) else True
    source = _LegacySource(fileobj, size, little)
    result = _unpickle(fileobj, _persistent_loader(source, map_location), weights_only,
                       pickle_module, encoding)
    keys = header("storage key list")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise RuntimeError("corrupt checkpoint: the legacy storage key list is not a list of "
                           "str")
    source.fill(keys)
    return result


def _file_size(f):
    pos = f.tell()
    size = f.seek(0, 2)
    f.seek(pos)
    return size


def _check_name(name):
    parts = name.replace("\\", "/").split("/")
    if name.startswith("/") or "\\" in name or ".." in parts or ":" in parts[0]:
        raise RuntimeError(f"corrupt checkpoint: zip entry {name!r} has an unsafe path")


def _is_tar(f, start):
    f.seek(start + 257)
    magic = f.read(5)
    f.seek(start)
    return magic == b"ustar"


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Load an object saved by :func:`save` or by ``torch.save`` (zip or legacy format),
    without PyTorch installed.

    ``f``: a path, ``pathlib.Path`` or readable binary file object (``io.BytesIO`` too).
    ``weights_only=True`` (the default) resolves only allow-listed globals (tensors, dtypes,
    ``OrderedDict``, ``torch.Size``, NumPy arrays/scalars, and :func:`add_safe_globals`);
    any other raises ``pickle.UnpicklingError`` naming it, before anything runs.
    ``map_location``: a device or string (every storage goes there), a dict mapping saved
    locations to new ones, or a callable ``(storage, location) -> storage or None``.
    ``mmap=True``: storages are mapped from the file (copy-on-write), not read: borrowed
    memory, not counted by the allocator.

    >>> import io
    >>> buf = io.BytesIO(); tensorlib.save([tensorlib.ones(2), 3], buf)
    >>> tensorlib.load(io.BytesIO(buf.getvalue()))
    [tensor([1., 1.]), 3]
    """
    if weights_only is None:        # PyTorch's default since 2.6
        weights_only = True
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    encoding = pickle_load_args.pop("encoding", "utf-8")
    if pickle_load_args:
        raise TypeError(f"load() got unexpected keyword arguments {sorted(pickle_load_args)}")
    path = f if isinstance(f, (str, os.PathLike)) else None
    fileobj, close = _open_for(f, "rb")
    try:
        start = fileobj.tell() if fileobj.seekable() else 0
        if not fileobj.seekable() or start:
            fileobj = io.BytesIO(fileobj.read())
        size = _file_size(fileobj)
        magic = fileobj.read(4)
        fileobj.seek(0)
        if magic in (b"PK\x03\x04", b"PK\x05\x06"):
            mmap_file = None
            if mmap:
                if path is not None:
                    mmap_file = path
                elif isinstance(fileobj, io.BufferedReader) and start == 0:
                    mmap_file = fileobj
                else:
                    raise ValueError("f must be a file path (or a file opened from one) in "
                                     "order to use the mmap argument")
            return _load_zip(fileobj, size, map_location, weights_only, pickle_module,
                             mmap_file, encoding)
        if mmap:
            raise RuntimeError("mmap can only be used with files saved with "
                               "`tensorlib.save(_use_new_zipfile_serialization=True)`, please "
                               "re-save your checkpoint with this option in order to use mmap.")
        if size >= 262 and _is_tar(fileobj, 0):
            raise RuntimeError("this checkpoint is in PyTorch's legacy .tar format (before "
                               "0.4), which tensorlib cannot read")
        return _load_legacy(fileobj, size, map_location, weights_only, pickle_module, encoding)
    finally:
        if close:
            fileobj.close()


def get_unsafe_globals_in_checkpoint(f):
    """The globals a zip checkpoint's pickle names that ``weights_only=True`` would refuse
    (read without unpickling anything).

    >>> import io
    >>> buf = io.BytesIO(); tensorlib.save({"w": tensorlib.ones(1)}, buf); _ = buf.seek(0)
    >>> tensorlib.serialization.get_unsafe_globals_in_checkpoint(buf)
    []
    """
    import pickletools
    fileobj, close = _open_for(f, "rb")
    try:
        zf = zipfile.ZipFile(fileobj)
        names = [n for n in zf.namelist() if n.endswith("/data.pkl") and n.count("/") == 1]
        if not names:
            raise RuntimeError("PytorchStreamReader failed locating file data.pkl")
        data = zf.read(names[0])
    finally:
        if close:
            fileobj.close()
    allowed = dict(_names())
    allowed.update(_user_names())
    found, strings = set(), []
    for op, arg, _ in pickletools.genops(data):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8"):
            strings.append(arg)
        if op.name == "GLOBAL":
            module, name = _map_name(*arg.split(" ", 1))
            found.add(f"{module}.{name}")
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            module, name = _map_name(strings[-2], strings[-1])
            found.add(f"{module}.{name}")
    return sorted(g for g in found if g not in allowed)
