# cython: language_level=3
"""tensorlib's C API for extensions: the functions that ``cimport tensorlib`` re-exports
(tensorlib/__init__.pxd) and, for plain C, one capsule ``_C_API`` holding a table of the same
functions with the field offsets the inline accessors of tensorlib/include/tensorlib.h read.

Nothing here runs on tensorlib's own paths: the module is imported by the extensions that use
it (Cython imports it when such an extension loads; C through ``tensorlib_import()``).

>>> from tensorlib._core import capi
>>> (capi.ABI_VERSION, capi.API_VERSION) >= (1, 1)
True
"""
from cpython.object cimport PyTypeObject
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int64_t, uintptr_t

from tensorlib._core.dtype cimport dtype as DType, dtype_of, NUM_DTYPES
from tensorlib._core.allocator cimport (
    Storage, device as Device, CPU, META, DEVICE_CPU, DEVICE_META, DEVICE_CUDA, as_device,
    new_storage, borrow_storage, storage_set_role)
from tensorlib._core.tensor cimport (
    TensorBase, MAX_DIMS, empty_tensor, _empty_preserving, _alloc_object,
    _set_geometry, _new_vc, prepare_write as _prepare_write, _op_enter, _op_exit)

import re as _re

ABI_VERSION = CAPI_ABI_VERSION
API_VERSION = CAPI_API_VERSION


cdef class ABI_1_API_1:
    """The version marker (see capi.pxd): an extension built against tensorlib imports it by
    the name it was built with, and an incompatible name raises ImportError here."""
    pass


_MARKER = _re.compile(r"ABI_(\d+)_API_(\d+)\Z")


def _version_error(int abi, int api):
    """The ImportError for an extension built against (abi, api) when this tensorlib does not
    serve it, or None when it does.

    >>> _version_error(ABI_VERSION, API_VERSION) is None
    True
    >>> print(_version_error(ABI_VERSION + 1, 1))  # doctest: +ELLIPSIS
    module compiled against tensorlib C ABI version 2, but this tensorlib (...) has ABI ...
    """
    import tensorlib
    here = f"this tensorlib ({tensorlib.__version__}, {tensorlib.__file__})"
    if abi != ABI_VERSION:
        return ImportError(
            f"module compiled against tensorlib C ABI version {abi}, but {here} has ABI "
            f"version {ABI_VERSION}: rebuild the extension against the installed tensorlib")
    if api > API_VERSION:
        return ImportError(
            f"module compiled against tensorlib C API level {api}, but {here} provides level "
            f"{API_VERSION}: upgrade tensorlib, or rebuild the extension against this one")
    return None


def __getattr__(name):
    # PEP 562: reached for a marker name other than this build's own (see capi.pxd)
    m = _MARKER.match(name)
    if m is None:
        raise AttributeError(f"module 'tensorlib._core.capi' has no attribute '{name}'")
    err = _version_error(int(m.group(1)), int(m.group(2)))
    if err is not None:
        raise err
    return ABI_1_API_1


# ---------------------------------------------------------------------------------------------
# creation

cdef DType _dtype_arg(int code, str fn):
    if code < 0 or code >= NUM_DTYPES:
        raise ValueError(f"{fn}: dtype code {code} is not a tensorlib dtype (0..{NUM_DTYPES - 1},"
                         f" the DT_* constants)")
    return dtype_of(code)


cdef Device _device_arg(int kind, str fn):
    if kind == DEVICE_CPU:
        return CPU
    if kind == DEVICE_META:
        return META
    if kind == DEVICE_CUDA:
        return as_device("cuda")
    raise ValueError(f"{fn}: device {kind} is not a tensorlib device kind (DEVICE_CPU, "
                     f"DEVICE_META or DEVICE_CUDA)")


cdef int _ndim_arg(int ndim, const int64_t* shape, str fn) except -1:
    if ndim < 0 or ndim > MAX_DIMS:
        raise ValueError(f"{fn}: ndim must be in 0..{MAX_DIMS}, got {ndim}")
    if ndim > 0 and shape == NULL:
        raise ValueError(f"{fn}: shape is NULL for a tensor of {ndim} dimensions")
    return 0


cdef str _ints(int n, const int64_t* v):
    return "[" + ", ".join([str(v[i]) for i in range(n)]) + "]"


cdef TensorBase empty(int ndim, const int64_t* shape, int dtype, int device):
    """A new contiguous, uninitialized tensor from the device's allocator (counted)."""
    _ndim_arg(ndim, shape, "empty")
    return empty_tensor(ndim, shape, _dtype_arg(dtype, "empty"), _device_arg(device, "empty"))


cdef TensorBase from_pointer(void* data, int ndim, const int64_t* shape, const int64_t* strides,
                             int dtype, object owner):
    """A CPU tensor over memory tensorlib does not own: ``owner`` is kept alive as long as the
    tensor (and its views) live, and the bytes are borrowed, not counted as tensorlib's.
    ``strides`` in elements, NULL for row-major."""
    cdef DType dt = _dtype_arg(dtype, "from_pointer")
    cdef int64_t span = 0
    cdef int i
    cdef bint empty_ = False
    cdef TensorBase t
    _ndim_arg(ndim, shape, "from_pointer")
    if data == NULL:
        raise ValueError("from_pointer: the data pointer is NULL")
    if <uintptr_t>data % dt.itemsize:
        raise ValueError(f"from_pointer: the data pointer {<uintptr_t>data:#x} is not aligned "
                         f"to the {dt.itemsize}-byte elements of {dt.name}")
    for i in range(ndim):
        if shape[i] < 0:
            raise RuntimeError(f"from_pointer: Trying to create tensor with negative dimension "
                               f"{shape[i]}: {_ints(ndim, shape)}")
        if strides != NULL and strides[i] < 0:
            raise ValueError(f"from_pointer: negative stride {strides[i]} in dim {i} (strides "
                             f"{_ints(ndim, strides)}): tensorlib tensors have no negative "
                             f"strides")
        empty_ = empty_ or shape[i] == 0
    t = _alloc_object()
    _set_geometry(t, ndim, shape, strides)
    if not empty_:
        for i in range(ndim):
            span += (shape[i] - 1) * t._strides[i]
        span += 1
    t._storage = borrow_storage(<char*>data, span * dt.itemsize, owner, CPU)
    t._dtype = dt
    t._vc = _new_vc()
    return t


cdef TensorBase empty_like(TensorBase t):
    """An uninitialized tensor of ``t``'s shape, dtype and device, laid out as PyTorch's
    ``empty_like`` (``t``'s strides when it is dense, else its memory order)."""
    if t is None:
        raise TypeError("empty_like: expected a tensor, got None")
    return _empty_preserving(t, t._dtype)


cdef Storage scratch(int64_t nbytes, int role, int device, const char* op):
    cdef Device dev = _device_arg(device, "scratch")
    cdef Storage s
    if nbytes < 0:
        raise ValueError(f"scratch: nbytes must be >= 0, got {nbytes}")
    name = (<bytes>op).decode() if op != NULL else None
    prev = _op_enter(name) if name is not None else None
    try:
        s = new_storage(nbytes, dev)
    finally:
        if name is not None:
            _op_exit(prev)
    storage_set_role(s, role)
    return s


cdef int prepare_write(TensorBase t) except -1:
    if t is None:
        raise TypeError("prepare_write: expected a tensor, got None")
    return _prepare_write(t, None)


# ---------------------------------------------------------------------------------------------
# the C table (tensorlib.h): the same functions taking PyObject*, type-checked

cdef extern from "tensorlib.h":
    # Cython's view of the table: the function slots as void* (their C types are in the header)
    ctypedef struct tensorlib_capi:
        unsigned int abi_version
        unsigned int api_version
        const char* version
        PyTypeObject* tensor_type
        PyTypeObject* storage_type
        Py_ssize_t off_storage, off_offset, off_ndim, off_shape, off_strides, off_numel
        Py_ssize_t off_dtype, off_contiguous, off_vc, off_requires_grad
        Py_ssize_t off_storage_data, off_storage_nbytes, off_storage_device
        Py_ssize_t off_dtype_code, off_dtype_itemsize, off_device_kind, off_vc_version
        void* empty
        void* from_pointer
        void* empty_like
        void* scratch
        void* prepare_write
    int TENSORLIB_ABI_VERSION
    int TENSORLIB_API_VERSION


cdef TensorBase _tensor_arg(object obj, str fn):
    if not isinstance(obj, TensorBase):
        raise TypeError(f"{fn}: expected a tensor, got {type(obj).__name__}")
    return <TensorBase>obj


cdef object _c_empty(int ndim, const int64_t* shape, int dtype, int device):
    return empty(ndim, shape, dtype, device)


cdef object _c_from_pointer(void* data, int ndim, const int64_t* shape, const int64_t* strides,
                            int dtype, object owner):
    return from_pointer(data, ndim, shape, strides, dtype, owner)


cdef object _c_empty_like(object t):
    return empty_like(_tensor_arg(t, "tl_empty_like"))


cdef object _c_scratch(int64_t nbytes, int role, int device, const char* op):
    return scratch(nbytes, role, device, op)


cdef int _c_prepare_write(object t) except -1:
    return prepare_write(_tensor_arg(t, "tl_prepare_write"))


cdef tensorlib_capi _table
cdef bytes _version_bytes


# offsetof on the structs Cython makes of the classes (their names are Cython's mangling of
# module and class: a change there fails to compile rather than giving wrong offsets)
cdef extern from *:
    """
    #define TL__T struct __pyx_obj_9tensorlib_5_core_6tensor_TensorBase
    #define TL__S struct __pyx_obj_9tensorlib_5_core_9allocator_Storage
    #define TL__D struct __pyx_obj_9tensorlib_5_core_5dtype_dtype
    #define TL__V struct __pyx_obj_9tensorlib_5_core_9allocator_device
    #define TL__C struct __pyx_obj_9tensorlib_5_core_6tensor_VersionCounter
    """
    Py_ssize_t OFF_T_STORAGE "offsetof(TL__T, _storage)"
    Py_ssize_t OFF_T_OFFSET "offsetof(TL__T, _offset)"
    Py_ssize_t OFF_T_NDIM "offsetof(TL__T, _ndim)"
    Py_ssize_t OFF_T_SHAPE "offsetof(TL__T, _shape)"
    Py_ssize_t OFF_T_STRIDES "offsetof(TL__T, _strides)"
    Py_ssize_t OFF_T_NUMEL "offsetof(TL__T, _numel)"
    Py_ssize_t OFF_T_DTYPE "offsetof(TL__T, _dtype)"
    Py_ssize_t OFF_T_CONTIGUOUS "offsetof(TL__T, _contiguous)"
    Py_ssize_t OFF_T_VC "offsetof(TL__T, _vc)"
    Py_ssize_t OFF_T_REQUIRES_GRAD "offsetof(TL__T, _requires_grad)"
    Py_ssize_t OFF_S_DATA "offsetof(TL__S, data)"
    Py_ssize_t OFF_S_NBYTES "offsetof(TL__S, _nbytes)"
    Py_ssize_t OFF_S_DEVICE "offsetof(TL__S, device)"
    Py_ssize_t OFF_D_CODE "offsetof(TL__D, code)"
    Py_ssize_t OFF_D_ITEMSIZE "offsetof(TL__D, itemsize)"
    Py_ssize_t OFF_V_KIND "offsetof(TL__V, kind)"
    Py_ssize_t OFF_C_VERSION "offsetof(TL__C, version)"


cdef object _make_capsule():
    global _version_bytes
    import tensorlib
    if TENSORLIB_ABI_VERSION != CAPI_ABI_VERSION or TENSORLIB_API_VERSION != CAPI_API_VERSION:
        raise ImportError("tensorlib.h and capi.pxd disagree on the C API version")
    _version_bytes = tensorlib.__version__.encode()
    _table.abi_version = CAPI_ABI_VERSION
    _table.api_version = CAPI_API_VERSION
    _table.version = _version_bytes
    _table.tensor_type = <PyTypeObject*>TensorBase
    _table.storage_type = <PyTypeObject*>Storage
    _table.off_storage = OFF_T_STORAGE
    _table.off_offset = OFF_T_OFFSET
    _table.off_ndim = OFF_T_NDIM
    _table.off_shape = OFF_T_SHAPE
    _table.off_strides = OFF_T_STRIDES
    _table.off_numel = OFF_T_NUMEL
    _table.off_dtype = OFF_T_DTYPE
    _table.off_contiguous = OFF_T_CONTIGUOUS
    _table.off_vc = OFF_T_VC
    _table.off_requires_grad = OFF_T_REQUIRES_GRAD
    _table.off_storage_data = OFF_S_DATA
    _table.off_storage_nbytes = OFF_S_NBYTES
    _table.off_storage_device = OFF_S_DEVICE
    _table.off_dtype_code = OFF_D_CODE
    _table.off_dtype_itemsize = OFF_D_ITEMSIZE
    _table.off_device_kind = OFF_V_KIND
    _table.off_vc_version = OFF_C_VERSION
    _table.empty = <void*>_c_empty
    _table.from_pointer = <void*>_c_from_pointer
    _table.empty_like = <void*>_c_empty_like
    _table.scratch = <void*>_c_scratch
    _table.prepare_write = <void*>_c_prepare_write
    return PyCapsule_New(<void*>&_table, b"tensorlib._core.capi._C_API", NULL)


_C_API = _make_capsule()


def _set_table_versions(int abi, int api):
    """Testing only: make the C table report other versions (what an extension built against
    another tensorlib would meet at tensorlib_import()); returns the previous pair."""
    prev = (_table.abi_version, _table.api_version)
    _table.abi_version = abi
    _table.api_version = api
    return prev
