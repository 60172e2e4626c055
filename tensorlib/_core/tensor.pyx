"""TensorBase: strided storage, views, the write-preparation step and every operator slot.

A tensor is (storage, offset, shape, strides, dtype) with offset and strides in elements.
Views share the storage and the version counter of their base and point at the root base.
Each op is declared once in tensorlib/ops/decl/; the build generates its argument-parsing
wrappers into build/generated/_ops_generated.pxi (included at the end of this module) from
those declarations, and the implementations live in the .pxi files included below.
"""
cimport cython
from cpython.object cimport PyObject, PyTypeObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.long cimport PyLong_FromLongLong, PyLong_AsLongLongAndOverflow
from libc.stdint cimport int64_t, uint64_t, uint8_t, uint16_t, INT64_MAX, INT64_MIN, uintptr_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcmp, memcpy, memmove, memset
from libc.math cimport ceil as c_ceil, floor as c_floor, pow as c_pow, isfinite as c_isfinite, isnan as c_isnan

from tensorlib._core.dtype cimport (
    dtype as DType, dtype_of, default_float_dtype, as_dtype, promote_codes, can_cast_codes,
    DT_BOOL, DT_UINT8, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_FLOAT16, DT_BFLOAT16,
    DT_FLOAT32, DT_FLOAT64, NUM_DTYPES)
from tensorlib._core.allocator cimport (
    Storage, device as Device, CPU, META, as_device, new_storage, borrow_storage, ROLE_SAVED,
    ROLE_ACTIVATION, ROLE_UNKNOWN, ROLE_TEMPORARY,
    storage_set_role, DEVICE_CPU, DEVICE_META, DEVICE_CUDA)

from tensorlib._core.kernels cimport *

import operator

import numpy as np
from tensorlib._core import dtype as _dtype_mod

cdef extern from *:
    bint mul_overflow "__builtin_mul_overflow" (int64_t a, int64_t b, int64_t* res) nogil
    bint add_overflow "__builtin_add_overflow" (int64_t a, int64_t b, int64_t* res) nogil

cdef extern from "cpu_copy.h" nogil:
    float tl_f16_to_f32(uint16_t h)
    float tl_bf16_to_f32(uint16_t h)

cdef extern from "cpu_pool.h" nogil:
    ctypedef void (*tl_chunk_fn)(void* ctx, int64_t begin, int64_t end) noexcept nogil
    void tl_parallel_for(int64_t begin, int64_t end, int64_t grain, tl_chunk_fn fn, void* ctx)
    int tl_get_num_threads()
    void tl_set_num_threads(int n)


include "iterate.pxi"


# The Python class every tensor is created as: tensorlib.Tensor registers itself here
# (a subclass with __slots__ = () so instances have exactly TensorBase's layout). Until it
# does, tensors are plain TensorBase (never NULL: _alloc_object calls its tp_new directly).
cdef type _TensorType = TensorBase
# Passed to tp_new, which ignores it (TensorBase has no __cinit__).
cdef tuple _NO_ARGS = ()
# The Size class (a tuple subclass defined in tensorlib/_tensor.py).
cdef object _SizeType = tuple
# Printing lives in pure Python (tensorlib/_tensor_str.py); registered at import.
cdef object _repr_fn = None


cdef object _return_types = None


cdef object _rtype(str name):
    """The named tuple type ``tensorlib.return_types.<name>`` (imported on first use: the
    package imports this module first)."""
    global _return_types
    if _return_types is None:
        import tensorlib.return_types as rt
        _return_types = rt
    return getattr(_return_types, name)


# PyTorch's names of the dtypes (ScalarType) in its error messages
_TORCH_TYPE_NAME = {DT_BOOL: "Bool", DT_UINT8: "Byte", DT_INT8: "Char", DT_INT16: "Short",
                    DT_INT32: "Int", DT_INT64: "Long", DT_FLOAT16: "Half", DT_BFLOAT16: "BFloat16",
                    DT_FLOAT32: "Float", DT_FLOAT64: "Double"}



cdef object _size_type():
    """The Size class (tensorlib.Size once registered)."""
    return _SizeType


def _register_types(tensor_type, size_type, repr_fn):
    """Called once by tensorlib._tensor: the public Tensor class, Size and the formatter."""
    global _TensorType, _SizeType, _repr_fn
    if not issubclass(tensor_type, TensorBase):
        raise TypeError("tensor type must subclass TensorBase")
    _TensorType = tensor_type
    _SizeType = size_type
    _repr_fn = repr_fn


@cython.final
@cython.freelist(64)
@cython.no_gc
cdef class VersionCounter:
    """The version shared by a tensor and its views: bumped by every write."""
    pass


# ---------------------------------------------------------------------------------------------
# creation of tensor objects

cdef VersionCounter _new_vc():
    return VersionCounter.__new__(VersionCounter)


cdef TensorBase _alloc_object():
    # tp_new of the registered subclass; no __init__ (that is the legacy Tensor(*sizes)).
    # Called through the slot: `TensorBase.__new__(_TensorType)` compiles to a Python-level
    # method lookup and call, which would be most of the cost of a small view.
    return <TensorBase>(<PyTypeObject*>_TensorType).tp_new(_TensorType, <PyObject*>_NO_ARGS, NULL)


cdef int _set_geometry(TensorBase t, int ndim, const int64_t* shape, const int64_t* strides) except -1:
    """Install shape/strides (strides NULL = contiguous) and cache numel and contiguity."""
    cdef int i
    cdef int64_t numel = 1, expected = 1
    cdef bint contig = True
    if ndim > MAX_DIMS:
        raise RuntimeError(f"tensors of more than {MAX_DIMS} dimensions are not supported (got {ndim})")
    if t._shape != t._small and t._shape != NULL:
        free(t._shape)
    if ndim <= SMALL_DIMS:
        t._shape = t._small
        t._strides = t._small + SMALL_DIMS
    else:
        t._shape = <int64_t*>malloc(2 * ndim * sizeof(int64_t))
        if t._shape == NULL:
            raise MemoryError()
        t._strides = t._shape + ndim
    t._ndim = ndim
    for i in range(ndim):
        if shape[i] < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {shape[i]}: "
                               f"{shape_str(ndim, shape)}")
        if mul_overflow(numel, shape[i], &numel):
            raise RuntimeError(f"numel of shape {shape_str(ndim, shape)} overflows int64")
        t._shape[i] = shape[i]
    if strides == NULL:
        for i in range(ndim - 1, -1, -1):
            t._strides[i] = expected
            if shape[i] > 1:
                expected *= shape[i]
        t._contiguous = True
    else:
        for i in range(ndim - 1, -1, -1):
            t._strides[i] = strides[i]
            if shape[i] != 1:
                if strides[i] != expected:
                    contig = False
                expected *= shape[i]
        t._contiguous = contig or numel == 0
    t._numel = numel
    t._size_cache = None
    return 0


cdef int64_t _checked_nbytes(int ndim, const int64_t* shape, int itemsize) except -1:
    cdef int64_t n = itemsize
    cdef int i
    for i in range(ndim):
        if shape[i] < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {shape[i]}: "
                               f"{shape_str(ndim, shape)}")
        if mul_overflow(n, shape[i], &n):
            raise RuntimeError(f"Trying to create tensor of shape {shape_str(ndim, shape)}: "
                               f"its size in bytes overflows int64")
    return n


cdef TensorBase empty_tensor(int ndim, const int64_t* shape, DType dt, Device dev):
    """A new contiguous tensor whose storage comes from dev's allocator (uninitialized)."""
    cdef int64_t nbytes = _checked_nbytes(ndim, shape, dt.itemsize)
    cdef TensorBase t = _alloc_object()
    _set_geometry(t, ndim, shape, NULL)
    t._storage = new_storage(nbytes, dev)
    t._dtype = dt
    t._vc = _new_vc()
    return t


cdef TensorBase _empty_like_shape(TensorBase like, DType dt=None):
    return empty_tensor(like._ndim, like._shape, like._dtype if dt is None else dt, like._storage.device)


cdef TensorBase make_view(TensorBase src, int ndim, const int64_t* shape, const int64_t* strides,
                          int64_t offset):
    """A view of src's storage: shares the storage, the version counter and the root base."""
    cdef TensorBase t = _alloc_object()
    _set_geometry(t, ndim, shape, strides)
    t._storage = src._storage
    t._offset = offset
    t._dtype = src._dtype
    t._vc = src._vc
    t._view_base = src._view_base if src._view_base is not None else src
    if src._autograd_meta is not None and \
            (<AutogradMeta>src._autograd_meta).creation != CREATION_DEFAULT:
        # a view of a split output, or of a view made under no_grad, inherits how that was
        # made (PyTorch's rule), so in-place on it raises the same error
        _meta(t).creation = (<AutogradMeta>src._autograd_meta).creation
        (<AutogradMeta>t._autograd_meta).view_version = src._vc.version
    elif src._requires_grad and not tl_grad_enabled:
        # a view made under no_grad: modifying it (or its base, graph._view_grad_fn) in
        # place later with grad on is an error
        _meta(t).creation = CREATION_NO_GRAD
        (<AutogradMeta>t._autograd_meta).view_version = src._vc.version
    return t


cdef TensorBase _alias(TensorBase src, VersionCounter vc):
    """Same storage and geometry, not a view: what detach() (shared vc) and .data (fresh vc) are."""
    cdef TensorBase t = _alloc_object()
    _set_geometry(t, src._ndim, src._shape, src._strides)
    t._storage = src._storage
    t._offset = src._offset
    t._dtype = src._dtype
    t._vc = vc
    return t


cdef object _make_size(int ndim, const int64_t* shape):
    cdef tuple tup = PyTuple_New(ndim)
    cdef int i
    cdef object v
    for i in range(ndim):
        v = PyLong_FromLongLong(shape[i])
        Py_INCREF(v)
        PyTuple_SET_ITEM(tup, i, v)
    if _SizeType is tuple:
        return tup
    return tuple.__new__(_SizeType, tup)


# ---------------------------------------------------------------------------------------------
# The write-preparation step. EVERY write goes through here: in-place ops, out=, __setitem__,
# copy_, fill_, random fills, +=. It bumps the version counter (so autograd can detect a saved
# tensor modified in place) and applies PyTorch's overlap rules.

cdef int _overlap(TensorBase a, TensorBase b) noexcept:
    """How b's memory meets a's, judged as PyTorch's get_overlap_status judges it (so the
    same writes raise): two dense layouts over the same bytes are FULL only with the very same
    strides (size-1 dims included: x.copy_(x.view(3)) of a (3, 1) x is PARTIAL there), and
    otherwise share elements in another order (PARTIAL); layouts that are not dense cannot be
    told cheaply (TOO_HARD: a caller reads b through a copy), unless they are one layout."""
    cdef int64_t alo, ahi, blo, bhi
    cdef int i
    if a._storage is not b._storage or a._numel == 0 or b._numel == 0:
        return OVERLAP_NO
    extent(a._ndim, a._shape, a._strides, &alo, &ahi)
    extent(b._ndim, b._shape, b._strides, &blo, &bhi)
    # byte ranges [lo, hi]
    alo = (alo + a._offset) * a._dtype.itemsize
    ahi = (ahi + a._offset + 1) * a._dtype.itemsize - 1
    blo = (blo + b._offset) * b._dtype.itemsize
    bhi = (bhi + b._offset + 1) * b._dtype.itemsize - 1
    if ahi < blo or bhi < alo:
        return OVERLAP_NO
    if not is_non_overlapping_and_dense(a._ndim, a._shape, a._strides) or \
            not is_non_overlapping_and_dense(b._ndim, b._shape, b._strides):
        return OVERLAP_FULL if _same_layout(a, b) else OVERLAP_TOO_HARD
    if alo != blo or ahi != bhi or a._ndim != b._ndim:
        return OVERLAP_PARTIAL
    for i in range(a._ndim):
        if a._strides[i] != b._strides[i]:
            return OVERLAP_PARTIAL
    # the same strides over the same bytes: the same elements, unless the element sizes differ
    # (PyTorch calls that FULL too and reads and writes the bytes in one pass)
    return OVERLAP_FULL if a._dtype.itemsize == b._dtype.itemsize else OVERLAP_TOO_HARD


cdef bint _same_layout(TensorBase a, TensorBase b) noexcept:
    cdef int i
    if a._offset != b._offset or a._ndim != b._ndim or a._dtype.itemsize != b._dtype.itemsize:
        return False
    for i in range(a._ndim):
        if a._shape[i] != b._shape[i] or (a._strides[i] != b._strides[i] and a._shape[i] > 1):
            return False
    return True


cdef int prepare_write(TensorBase out, TensorBase src) except -1:
    """Check that writing into ``out`` (reading ``src``, may be None) is well defined, then bump
    ``out``'s version. Raises PyTorch's errors for internal and partial overlap."""
    return _prepare_write(out, src, True)


cdef int prepare_inplace_write(TensorBase out, bint tracked) except -1:
    """The write step of an in-place op whose overlaps were checked already, in PyTorch's order
    (before the dtypes): autograd's in-place checks unless the op is one autograd never sees
    (PyTorch's logical_and_/or_/xor_/not_), then the version bump."""
    if tracked and tl_grad_enabled and (out._requires_grad or out._view_base is not None):
        _check_inplace(out)
    out._vc.version += 1
    return 0


cdef int prepare_fill(TensorBase out) except -1:
    """The write step of fill_/zero_ with a Python scalar: every element gets the same value, so
    a tensor with internal overlap (an expanded one) is fine, as in PyTorch."""
    return _prepare_write(out, None, False)


cdef int _prepare_write(TensorBase out, TensorBase src, bint check_internal,
                        bint tracked=True) except -1:
    _check_write_overlap(out, src, check_internal)
    if tracked and tl_grad_enabled and (out._requires_grad or out._view_base is not None):
        _check_inplace(out)
    out._vc.version += 1
    return 0


cdef int _check_write_overlap(TensorBase out, TensorBase src, bint check_internal) except -1:
    """PyTorch's overlap errors for writing into out while reading src (may be None)."""
    # copying a tensor onto itself (PyTorch's copy_ shortcut: same memory, shape, strides and
    # dtype) writes nothing new, so it is fine even when out has internal overlap (e.copy_(e)
    # on an expanded e)
    if check_internal and has_internal_overlap(out._ndim, out._shape, out._strides) and not (
            src is not None and _same_data(out, src)):
        raise internal_overlap_error()
    if src is not None and _overlap(out, src) == OVERLAP_PARTIAL:
        raise input_overlap_error()
    return 0


cdef object internal_overlap_error():
    """PyTorch's error for a write into a tensor some of whose elements share memory (an
    expanded one)."""
    return RuntimeError(
        "unsupported operation: more than one element of the written-to tensor refers to a "
        "single memory location. Please clone() the tensor before performing the operation.")


cdef object input_overlap_error():
    """PyTorch's error for a write whose input shares the written-to tensor's memory in a way
    its overlap rule rejects."""
    return RuntimeError(
        "unsupported operation: some elements of the input tensor and the written-to tensor "
        "refer to a single memory location. Please clone() the tensor before performing the "
        "operation.")


cdef bint _same_data(TensorBase a, TensorBase b) noexcept:
    """Whether a and b are the same elements of one storage in the same layout and dtype
    (strides of size-1 dims included, as PyTorch compares them)."""
    cdef int i
    if a._storage is not b._storage or a._dtype is not b._dtype or a._offset != b._offset \
            or a._ndim != b._ndim:
        return False
    for i in range(a._ndim):
        if a._shape[i] != b._shape[i] or a._strides[i] != b._strides[i]:
            return False
    return True


cdef int _check_copy_shapes(TensorBase dst, TensorBase src) except -1:
    """Raise (before anything is written or the version bumped) unless src broadcasts to dst."""
    cdef int64_t sstrides[MAX_DIMS]
    return broadcast_strides(src._ndim, src._shape, src._strides, dst._ndim, dst._shape, sstrides)


cdef int _copy_into(TensorBase dst, TensorBase src) except -1:
    """dst[...] = src with broadcasting and dtype conversion (no version bump: callers have
    run prepare_write). Reads through a temporary when src and dst share memory in a way a
    single pass could corrupt."""
    cdef int64_t sstrides[MAX_DIMS]
    cdef int ov
    if dst._storage.device is not src._storage.device:
        # only a 0-d CPU tensor joins another device (as a number would); explicit moves
        # (copy_, to) call _copy_across themselves
        if src._ndim == 0 and src._storage.device is CPU:
            return _copy_across(dst, src)
        same_device(dst, src, "copy")
    broadcast_strides(src._ndim, src._shape, src._strides, dst._ndim, dst._shape, sstrides)
    ov = _overlap(dst, src)
    if ov == OVERLAP_FULL and src._dtype is dst._dtype:
        return 0
    if ov != OVERLAP_NO and not (ov == OVERLAP_FULL and src._dtype.itemsize == dst._dtype.itemsize):
        src = _contiguous_copy(src)
        broadcast_strides(src._ndim, src._shape, src._strides, dst._ndim, dst._shape, sstrides)
    backend_of(dst).copy(dst._ndim, dst._shape, tensor_data(dst), dst._strides, dst._dtype.code,
                         tensor_data(src), sstrides, src._dtype.code)
    return 0


cdef int _copy_across(TensorBase dst, TensorBase src) except -1:
    """A copy between devices (dst[...] = src, broadcast and cast): into meta it writes
    nothing; out of meta there is nothing to read. Host and CUDA device copy contiguous bytes
    (a staging copy on either side when a layout or dtype differs); between two CUDA devices
    the bytes go through the host."""
    cdef Device dd = dst._storage.device, sd = src._storage.device
    cdef TensorBase h, stage
    if dd.kind == DEVICE_META:
        return 0
    needs_data(src, "copy out")
    if sd.kind == DEVICE_CUDA:
        h = host_copy(src)
        if dd.kind == DEVICE_CPU:
            return _copy_into(dst, h)
        return _copy_across(dst, h)
    if sd.kind == DEVICE_CPU and dd.kind == DEVICE_CUDA:
        # the host bytes, in dst's dtype and shape, contiguous
        h = empty_tensor(dst._ndim, dst._shape, dst._dtype, CPU)
        _copy_into(h, src)
        if dst._contiguous:
            stage = dst
        else:
            stage = empty_tensor(dst._ndim, dst._shape, dst._dtype, dd)
        if h._numel:
            _cuda_ops().memcpy_htod(<uintptr_t>tensor_data(stage), _byte_view(h), dd.index)
        if stage is not dst:
            _copy_into(dst, stage)
        return 0
    raise RuntimeError(f"copy between devices {src._storage.device} and {dst._storage.device} "
                       f"is not supported in this build")


cdef TensorBase host_copy(TensorBase t):
    """t's values on the CPU (t itself when it is there): a contiguous copy of a device
    tensor, waited for."""
    cdef TensorBase c, h
    if t._storage.device.kind != DEVICE_CUDA:
        return t
    c = t if t._contiguous else _contiguous_copy(t)
    h = empty_tensor(c._ndim, c._shape, c._dtype, CPU)
    if h._numel:
        _cuda_ops().memcpy_dtoh(_byte_view(h), <uintptr_t>tensor_data(c),
                                t._storage.device.index)
    return h


cdef TensorBase _contiguous_copy(TensorBase src, DType dt=None):
    cdef TensorBase out = _empty_like_shape(src, dt)
    backend_of(src).copy(src._ndim, src._shape, tensor_data(out), out._strides, out._dtype.code,
                         tensor_data(src), src._strides, src._dtype.code)
    return out


# ---------------------------------------------------------------------------------------------
# argument helpers shared by the generated wrappers (PyTorch-style TypeErrors)

cdef str _tname(object x):
    return "Tensor" if isinstance(x, TensorBase) else type(x).__name__


cdef TensorBase _targ(object x, str op, str name, int pos):
    if isinstance(x, TensorBase):
        return <TensorBase>x
    raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be Tensor, not {_tname(x)}")


cdef int64_t _iarg(object x, str op, str name, int pos) except? -1:
    cdef int ovf = 0
    cdef long long v
    if type(x) is int:
        v = PyLong_AsLongLongAndOverflow(x, &ovf)
        if ovf:
            raise ValueError("Overflow when unpacking long long")    # PyTorch's class
        return v
    if isinstance(x, bool) or isinstance(x, float) or x is None:
        raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be int, not {_tname(x)}")
    if isinstance(x, TensorBase):
        if (<TensorBase>x)._numel != 1 or (<TensorBase>x)._dtype.is_floating_point:
            raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be int, not Tensor")
        return _iarg(int(x), op, name, pos)
    try:
        index = x.__index__()
    except AttributeError:
        raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be int, "
                        f"not {_tname(x)}") from None
    return _iarg(index, op, name, pos)


cdef int64_t _ielem(object v, str op, str name, int i) except? -1:
    """Element i (from 0) of an int list, as PyTorch's parser takes it: the first element
    decides the type (a bool there is refused), a later bool counts as an int, and a value
    that does not fit int64 is a TypeError naming the element (not an overflow)."""
    cdef int ovf = 0
    cdef long long r
    if isinstance(v, TensorBase):
        return _iarg(v, op, name, i + 1)
    if i == 0 and isinstance(v, bool):
        raise TypeError(f"{op}(): argument '{name}' must be tuple of ints, but found element "
                        f"of type bool at pos 0")
    if not (isinstance(v, int) or hasattr(v, "__index__")) or isinstance(v, float):
        raise TypeError(f"{op}(): argument '{name}' failed to unpack the object at pos {i + 1} "
                        f"with error \"type must be tuple of ints,but got {_tname(v)}\"")
    r = PyLong_AsLongLongAndOverflow(v if type(v) is int else v.__index__(), &ovf)
    if ovf:
        raise TypeError(f"{op}(): argument '{name}' failed to unpack the object at pos {i + 1} "
                        f"with error \"Overflow when unpacking long long\"")
    return r


cdef bint _is_size_scalar(object x):
    """An int-like that can stand for one size: int, NumPy integer, integer 0-d tensor."""
    if isinstance(x, bool):
        return False
    if isinstance(x, (int, np.integer)):
        return True
    return isinstance(x, TensorBase) and (<TensorBase>x)._ndim == 0 \
        and not (<TensorBase>x)._dtype.is_floating_point and (<TensorBase>x)._dtype.code != DT_BOOL


cdef inline bint _all_ints(tuple t):
    """Every item an int that fits int64 (the common case, checked in C)."""
    # a loop, not all(<genexpr>): a generator expression would make Cython allocate a
    # closure on every call of the function that holds it
    cdef int ovf = 0
    for v in t:
        if type(v) is not int:
            return False
        PyLong_AsLongLongAndOverflow(v, &ovf)
        if ovf:
            return False
    return True


cdef tuple _ilist(object x, str op, str name, int pos):
    """int[]: an int (broadcast to a 1-list) or a sequence of ints."""
    if type(x) is tuple and _all_ints(<tuple>x):
        return <tuple>x
    if _is_size_scalar(x):
        return (_iarg(x, op, name, pos),)       # (one int too large: ValueError, as PyTorch)
    if isinstance(x, (tuple, list)) or (isinstance(x, TensorBase) and (<TensorBase>x)._ndim == 1):
        if isinstance(x, TensorBase):
            try:
                return tuple([_iarg(v, op, name, pos) for v in x])
            except TypeError:
                pass
        else:
            return tuple([_ielem(v, op, name, i) for i, v in enumerate(x)])
    raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be tuple of ints, "
                    f"not {_tname(x)}")


cdef tuple _iseq(object x, str op, str name, int pos):
    """A strict int[]: a sequence of ints, not one int (PyTorch's function forms, e.g.
    ``torch.reshape(x, (2, 3))``; the methods take varargs)."""
    if isinstance(x, (tuple, list)):
        return _ilist(x, op, name, pos)
    raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be tuple of ints, "
                    f"not {_tname(x)}")


cdef tuple _ivarargs(tuple args, str op, str name):
    """int[]...: f(2, 3) or f((2, 3)) or f([2, 3]) or f(Size)."""
    if len(args) == 1 and not isinstance(args[0], int):
        return _ilist(args[0], op, name, 1)     # also a single NumPy int / 0-d int tensor
    if _all_ints(args):
        return args
    if len(args) == 1 and isinstance(args[0], bool):
        raise TypeError(f"{op}(): argument '{name}' (position 1) must be tuple of ints, not bool")
    return tuple([_ielem(v, op, name, i) if not isinstance(v, TensorBase)
                  else _iarg(v, op, name, i + 1) for i, v in enumerate(args)])


cdef double _farg(object x, str op, str name, int pos) except? -1.5:
    if isinstance(x, (float, int)):
        return float(x)
    if isinstance(x, TensorBase) and (<TensorBase>x)._numel == 1:
        return float(x)
    try:
        return x.__float__()
    except AttributeError:
        raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be float, "
                        f"not {_tname(x)}") from None


cdef object _sarg(object x, str op, str name, int pos):
    """Scalar: a Python or NumPy number, passed through; tensors pass too (the op checks
    their size, as PyTorch's do)."""
    if isinstance(x, (int, float, TensorBase, np.bool_, np.integer, np.floating)):
        return x
    raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be Number, not {_tname(x)}")


cdef object _dtarg(object x, str op, str name):
    """dtype?: a tensorlib dtype, or the Python types PyTorch maps (float, int, bool, complex);
    as in PyTorch, not a name string and not a NumPy dtype."""
    if x is None or isinstance(x, DType):
        return x
    if x is float or x is int or x is bool or x is complex:
        return as_dtype(x)
    raise TypeError(f"{op}(): argument '{name}' must be tensorlib.dtype, not {_tname(x)}")


cdef int _bad_bool(object x, str op, str name) except -1:
    """bool parameters take True or False only (PyTorch refuses 1, None, numpy.bool_)."""
    raise TypeError(f"{op}(): argument '{name}' must be bool, not {_tname(x)}")


cdef str _strarg(object x, str op, str name):
    """A str parameter given something else: bytes are decoded (PyTorch takes them)."""
    if isinstance(x, str):
        return str(x)
    if isinstance(x, bytes):
        return (<bytes>x).decode()
    raise TypeError(f"{op}(): argument '{name}' must be str, not {_tname(x)}")


cdef int _check_kind(object x, int kind, str op, str name) except -1:
    """The parameters declared ``object`` whose name PyTorch types (``out``, ``layout``,
    ``memory_format``, ``device``): a TypeError for a value of another type. Called only when
    the value is not None."""
    if kind == ARG_OUT:
        if isinstance(x, (TensorBase, tuple, list)):
            return 0
        raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {_tname(x)}")
    if kind == ARG_LAYOUT:
        if x is _LAYOUT_STRIDED:
            return 0
        what = "tensorlib.memory_format" if type(x) is type(_LAYOUT_STRIDED) else _tname(x)
        raise TypeError(f"{op}(): argument '{name}' must be tensorlib.layout, not {what}")
    if kind == ARG_MEMORY_FORMAT:
        if type(x) is type(_LAYOUT_STRIDED) and x is not _LAYOUT_STRIDED:
            return 0
        what = "tensorlib.layout" if x is _LAYOUT_STRIDED else _tname(x)
        raise TypeError(f"{op}(): argument '{name}' must be tensorlib.memory_format, not {what}")
    if kind == ARG_DEVICE:
        if isinstance(x, (Device, str)) or (type(x) is int):
            return 0
        raise TypeError(f"{op}(): argument '{name}' must be tensorlib.device, not {_tname(x)}")
    return 0


# the device of factories called without one (tensorlib.set_default_device); None: the CPU
cdef Device _DEFAULT_DEVICE = None


def _set_default_device(dev):
    global _DEFAULT_DEVICE
    _DEFAULT_DEVICE = None if dev is None else as_device(dev)


def _get_default_device():
    return CPU if _DEFAULT_DEVICE is None else _DEFAULT_DEVICE


cdef Device _devarg(object x):
    if isinstance(x, TensorBase):
        raise TypeError("expected a device, but got Tensor")
    if x is None and _DEFAULT_DEVICE is not None:
        return _DEFAULT_DEVICE
    return as_device(x)


cdef int _wrap_dim(int64_t d, int ndim, bint scalar_ok=True) except -1:
    """A dim index in [-ndim, ndim) -> [0, ndim). 0-d tensors accept dims -1 and 0."""
    cdef int n = ndim if (ndim > 0 or not scalar_ok) else 1
    if d < -n or d >= n:
        if ndim == 0 and not scalar_ok:
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {d})")
    return <int>(d + n if d < 0 else d)


# ---------------------------------------------------------------------------------------------

cdef class TensorBase:
    """The C-level tensor. Use ``tensorlib.Tensor`` (this type, with Python-level extras)."""

    def __init__(self, *args, device=None, dtype=None):
        # Legacy constructor: Tensor(*sizes) and Tensor(Size) are uninitialized,
        # Tensor(sequence or ndarray) copies data into this dtype, Tensor(tensor) aliases a
        # tensor of this dtype. (``dtype`` is how the legacy FloatTensor & co. say which.)
        cdef DType dt = default_float_dtype() if dtype is None else as_dtype(dtype)
        cdef TensorBase src
        if len(args) == 1 and (isinstance(args[0], TensorBase) or not _is_size_scalar(args[0])):
            a = args[0]
            if isinstance(a, TensorBase):
                src = <TensorBase>a
                if dtype is not None and src._dtype is not dt:
                    raise TypeError(f"expected {dt} (got {src._dtype}): the legacy constructor of "
                                    f"{dt.legacy_name} aliases its argument and cannot convert it")
                _become(self, src)
                return
            if isinstance(a, _SizeType) and _SizeType is not tuple:
                _become(self, _new_empty(_ilist(a, "Tensor", "size", 1), dt, _devarg(device)))
                return
            if not _is_seq(a):
                raise TypeError(f"new(): data must be a sequence (got {type(a).__name__})")
            _become(self, _tensor_from_data(a, dt, _devarg(device), True))
            return
        shape = _ivarargs(args, "Tensor", "size") if args else (0,)
        _become(self, _new_empty(shape, dt, _devarg(device)))

    def __dealloc__(self):
        if self._shape != self._small and self._shape != NULL:
            free(self._shape)
        self._shape = NULL

    # -- metadata --------------------------------------------------------------------------
    @property
    def shape(self):
        if self._size_cache is None:
            self._size_cache = _make_size(self._ndim, self._shape)
        return self._size_cache

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return self._storage.device

    @property
    def ndim(self):
        return self._ndim

    @property
    def is_cuda(self):
        return self._storage.device.type == "cuda"

    @property
    def is_cpu(self):
        return self._storage.device.type == "cpu"

    @property
    def is_meta(self):
        return self._storage.device.kind == DEVICE_META

    @property
    def is_sparse(self):
        return False

    @property
    def is_quantized(self):
        return False

    @property
    def layout(self):
        return _LAYOUT_STRIDED

    @property
    def itemsize(self):
        return self._dtype.itemsize

    @property
    def nbytes(self):
        return self._numel * self._dtype.itemsize

    @property
    def _version(self):
        return self._vc.version

    @property
    def _base(self):
        return self._view_base

    def _is_view(self):
        """True when this tensor is a view of another (``_base`` is its root)."""
        return self._view_base is not None

    def size(self, dim=None):
        """The shape as a ``tensorlib.Size``, or the size of one dim.

        >>> tensorlib.zeros(2, 3).size(-1)
        3
        """
        if dim is None:
            if self._size_cache is None:
                self._size_cache = _make_size(self._ndim, self._shape)
            return self._size_cache
        return self._shape[_wrap_dim(_iarg(dim, "size", "dim", 1), self._ndim, False)]

    def stride(self, dim=None):
        """Strides in elements, as a tuple, or the stride of one dim.

        >>> tensorlib.zeros(2, 3).stride()
        (3, 1)
        """
        if dim is None:
            return tuple([self._strides[i] for i in range(self._ndim)])
        return self._strides[_wrap_dim(_iarg(dim, "stride", "dim", 1), self._ndim, False)]

    def dim(self):
        """Number of dimensions."""
        return self._ndim

    def ndimension(self):
        return self._ndim

    def numel(self):
        """Number of elements."""
        return self._numel

    def nelement(self):
        return self._numel

    def storage_offset(self):
        """Offset of the first element in the storage, in elements."""
        return self._offset

    def data_ptr(self):
        """Address of the first element."""
        return <size_t>tensor_data(self)

    def untyped_storage(self):
        """The Storage holding this tensor's bytes (shared by all its views)."""
        return self._storage

    def element_size(self):
        """Bytes per element."""
        return self._dtype.itemsize

    def is_contiguous(self, *, memory_format=None):
        """Whether the tensor is C-contiguous (size-1 dims are ignored).

        >>> tensorlib.zeros(2, 3).t().is_contiguous()
        False
        """
        if memory_format is not None and memory_format is not contiguous_format:
            raise RuntimeError(f"memory format {memory_format} is not supported")
        return self._contiguous

    def is_floating_point(self):
        return self._dtype.is_floating_point

    def is_complex(self):
        return False

    def is_signed(self):
        return self._dtype.is_signed

    def get_device(self):
        return -1 if self._storage.device.type == "cpu" else self._storage.device.index

    def is_set_to(self, TensorBase other not None):
        return (self._storage is other._storage and self._offset == other._offset
                and self.shape == other.shape and self.stride() == other.stride())

    # -- autograd state (the engine lives in tensorlib.autograd) ----------------------------
    @property
    def requires_grad(self):
        return _req(self)

    @requires_grad.setter
    def requires_grad(self, value):
        if value is not True and value is not False:
            raise RuntimeError("requires_grad must be a bool")
        _set_requires_grad(self, value)

    def requires_grad_(self, requires_grad=True):
        """Set requires_grad in place and return self."""
        if requires_grad is not True and requires_grad is not False:
            raise TypeError(f"requires_grad_(): argument 'requires_grad' (position 1) must be "
                            f"bool, not {_tname(requires_grad)}")
        _set_requires_grad(self, requires_grad)
        return self

    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, TensorBase):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if (<TensorBase>value).shape != self.shape:
                raise RuntimeError(f"assigned grad has data of a different size: "
                                   f"{(<TensorBase>value).shape} vs {self.shape}")
            if (<TensorBase>value)._dtype is not self._dtype:
                raise RuntimeError(f"assigned grad has data of a different type: "
                                   f"{(<TensorBase>value)._dtype} vs {self._dtype}")
        self._grad = value

    @property
    def grad_fn(self):
        if self._view_base is not None:
            _req(self)          # (a view may have joined its base's history)
            if self._autograd_meta is not None:
                return _view_grad_fn(self)
        return self._grad_fn

    @property
    def is_leaf(self):
        return not _req(self) or self.grad_fn is None

    @property
    def data(self):
        """The same data, outside autograd, with a fresh version counter."""
        if tl_trace_on:
            tr = _trace_enter()
            r = self.data
            _trace_exit(tr, "alias", ("self",), (self,), r)
            return r
        return _alias(self, _new_vc())

    @data.setter
    def data(self, value):
        cdef TensorBase v = _targ(value, "data", "value", 1)
        _become(self, v, keep_vc=True)

    # -- Python protocol slots --------------------------------------------------------------
    def __hash__(self):
        return id(self)

    def __len__(self):
        if self._ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self):
        if self._ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        if tl_trace_on:             # a tracer sees each row as one select
            return iter([_GENERATED_FUNCTIONS["select"](self, 0, i)
                         for i in range(self._shape[0])])
        return iter([_select(self, 0, i) for i in range(self._shape[0])])

    def __bool__(self):
        if self._numel != 1:
            raise RuntimeError(f"Boolean value of Tensor with {'no values' if self._numel == 0 else 'more than one value'} is ambiguous")
        return bool(_item(self))

    def __int__(self):
        return int(_scalar_item(self, "int"))

    def __float__(self):
        return float(_scalar_item(self, "float"))

    def __index__(self):
        if self._dtype.is_floating_point or self._numel != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(_item(self))

    def __complex__(self):
        return complex(_scalar_item(self, "complex"))

    def __format__(self, spec):
        if self._ndim == 0:
            return format(_item(self), spec)
        return format(repr(self), spec)

    def __repr__(self):
        return _repr_fn(self)

    def __array__(self, dtype=None, copy=None):
        """A NumPy array of this tensor (NumPy 2's protocol): by default on the same memory,
        converted to ``dtype`` when given; ``copy=True`` always copies, and ``copy=False``
        raises ``ValueError`` where a copy would be needed (another dtype, bfloat16).

        >>> t = tensorlib.zeros(2); numpy.asarray(t)[0] = 3; t.tolist()
        [3.0, 0.0]
        >>> numpy.array(tensorlib.ones(2), dtype=numpy.int32, copy=True).tolist()
        [1, 1]
        """
        if copy is False and self._dtype.code == DT_BFLOAT16:
            raise ValueError("Unable to avoid copy while creating an array as requested: "
                             "NumPy has no bfloat16")
        arr = _numpy_view(self, True)
        if dtype is not None:
            if copy is False and np.dtype(dtype) != arr.dtype:
                raise ValueError("Unable to avoid copy while creating an array as requested.")
            arr = arr.astype(dtype, copy=bool(copy))
        elif copy:
            arr = arr.copy()
        return arr

    @property
    def __cuda_array_interface__(self):
        """The CUDA array interface (version 3) of this CUDA tensor: ``shape``, ``typestr``,
        ``data`` (device address, read-only flag), ``strides`` in bytes (None when
        contiguous) and ``stream`` (the current stream: 1 for the default one). Only CUDA
        tensors have it; ``tensorlib.as_tensor`` reads it back without a copy.

        >>> hasattr(tensorlib.zeros(2), "__cuda_array_interface__")
        False
        """
        return _cuda_array_interface(self)

    @property
    def __array_interface__(self):
        """NumPy's array interface (version 3) over this CPU tensor's memory: ``shape``,
        ``typestr``, ``data`` (address, read-only flag) and ``strides`` in bytes (None when
        contiguous). Holding the dict does not keep the memory alive; NumPy keeps the tensor.

        >>> tensorlib.zeros(2, 3)[:, :2].__array_interface__["strides"]
        (12, 4)
        """
        return _array_interface(self)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Export this CPU tensor as a DLPack capsule, without a copy unless ``copy=True``:
        a ``"dltensor_versioned"`` capsule (DLPack 1.x) when the consumer's ``max_version``
        is (1, x) or newer, else a legacy ``"dltensor"`` one. The capsule keeps the tensor
        alive until its consumer calls the deleter (or until it dies unconsumed). Writes the
        consumer makes are not seen by the version counter (autograd's in-place checks).

        >>> t = tensorlib.arange(3.0); a = numpy.from_dlpack(t); a[0] = 5; t.tolist()
        [5.0, 1.0, 2.0]
        >>> t.__dlpack__(max_version=(1, 0))  # doctest: +ELLIPSIS
        <capsule object "dltensor_versioned" at ...>
        """
        return _dlpack_export(self, stream, max_version, dl_device, copy)

    def __dlpack_device__(self):
        """``(device_type, device_id)`` in DLPack's terms: ``(1, 0)`` for the CPU.

        >>> tensorlib.zeros(1).__dlpack_device__()
        (1, 0)
        """
        return _dlpack_device(self)

    def __getbuffer__(self, Py_buffer* buffer, int flags):
        _get_buffer(self, buffer, flags)

    def __releasebuffer__(self, Py_buffer* buffer):
        _release_buffer(self, buffer)

    def __getitem__(self, index):
        if tl_trace_on:             # a tracer is told of the subscript as one op
            tr = _trace_enter()
            r = self[index]
            _trace_exit(tr, "getitem", ("self", "index"), (self, index), r)
            return r
        r = _getitem(self, index)
        if tl_grad_enabled and _req(self):
            _record_getitem(self, r, index)
        return r

    def __setitem__(self, index, value):
        cdef TensorBase v
        cdef int k
        if tl_trace_on:
            tr = _trace_enter()
            self[index] = value
            _trace_exit(tr, "setitem", ("self", "index", "value"), (self, index, value), self)
            return
        if isinstance(value, (int, float, np.integer, np.floating)) and \
                not isinstance(value, (bool, np.bool_)):
            # PyTorch makes the number a tensor of self's dtype first: its overflow error wins
            # over a bad index or an autograd error (a float must fit an integer dtype, and
            # float32; float16/bfloat16 round it to inf)
            is_float = isinstance(value, (float, np.floating))
            if not is_float and not (-0x8000000000000000 <= value <= 0x7fffffffffffffff):
                raise ValueError("Overflow when unpacking long long")   # (PyTorch's int64 read)
            _check_scalar_fits(value, self._dtype, is_float,
                               is_float and self._dtype.code == DT_FLOAT32)
        if tl_grad_enabled and (_req(self) or _req(value)):
            if not _is_basic_only(index if type(index) is tuple else (index,)):
                # an advanced index: recorded as index_put_, as PyTorch does (advindex.pxi)
                _adv_setitem_recorded_fn(self, index, value)
                return
            # x[index] = v is x[index].copy_(v): autograd sees an in-place write into a view,
            # or into x itself where the index takes all of it
            if _index_is_whole(index if type(index) is tuple else (index,), self):
                dst = self
            else:
                dst = _getitem(self, index)
                if self._requires_grad:
                    _record_getitem(self, dst, index)
            if isinstance(value, TensorBase):
                # PyTorch's copy_to: a value of dst's shape is copied as it is; a 0-d CPU one
                # fills; any other loses all its leading size-1 dims and is expanded to dst's
                # shape (recorded views), and that is what copy_'s overlap check sees
                v = <TensorBase>value
                if tuple(v.shape) != tuple(dst.shape):
                    if v._ndim == 0 and v._storage.device is CPU:
                        _call_fill_(dst, value, True)
                        return
                    k = 0
                    while k < v._ndim and v._shape[k] == 1:
                        k += 1
                    if k:
                        value = value.view(tuple(v.shape)[k:])
                    value = value.expand(dst.shape)
                _call_copy_(dst, value, False, True)
            elif isinstance(value, (bool, int, float, np.generic)):
                # fill_ with the number as PyTorch's 0-d tensor of it, not fill_(number),
                # whose range check a half type does not get here
                _call_fill_(dst, _setitem_scalar(<TensorBase>dst, value), True)
            else:
                _call_fill_(dst, value, True)
            return
        _setitem(self, index, value)

    def __reduce_ex__(self, proto):
        return (_rebuild_tensor, (_numpy_copy(self), self._dtype.name, self._requires_grad,
                                  self.stride()))

    def __copy__(self):
        raise RuntimeError("copy.copy() of a tensor is not supported: use clone() or copy.deepcopy()")

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                               "the deepcopy protocol at the moment.")
        if id(self) in memo:
            return memo[id(self)]
        cdef TensorBase out = _contiguous_copy(self)
        out._requires_grad = _req(self)
        memo[id(self)] = out
        return out

    # -- conversions ------------------------------------------------------------------------
    def numpy(self, *, force=False):
        """A NumPy array sharing this tensor's memory (writes show on both sides).

        >>> t = tensorlib.zeros(3); t.numpy()[0] = 5; t[0].item()
        5.0
        """
        if force is not True and force is not False:
            raise TypeError(f"numpy(): argument 'force' must be bool, not {_tname(force)}")
        if _req(self) and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        if force and self._storage.device.kind == DEVICE_CUDA:
            return _numpy_view(host_copy(self), False)    # PyTorch: detach().cpu().numpy()
        return _numpy_view(self, False)

    def tolist(self):
        """Nested Python lists of Python scalars (a scalar for a 0-d tensor).

        >>> tensorlib.tensor([[1, 2]]).tolist()
        [[1, 2]]
        """
        needs_data(self, "copy out")
        return _numpy_copy(self).tolist()

    def item(self):
        """The value of a one-element tensor as a Python scalar."""
        if self._numel != 1:
            raise RuntimeError(f"a Tensor with {self._numel} elements cannot be converted to Scalar")
        return _item(self)

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """Without arguments the legacy type name (``'tensorlib.FloatTensor'``); with a dtype,
        a type name or a legacy tensor type, a converted tensor.

        >>> tensorlib.zeros(2).type()
        'tensorlib.FloatTensor'
        """
        if dtype is None:
            return "tensorlib." + self._dtype.legacy_name
        return _convert(self, _legacy_type_to_dtype(dtype), False)

    def type_as(self, other):
        """This tensor converted to ``other``'s dtype."""
        return _convert(self, _targ(other, "type_as", "other", 1)._dtype, False)

    def to(self, *args, **kwargs):
        """Convert dtype and/or device: ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``.
        Returns self when nothing changes (unless ``copy=True``).

        >>> tensorlib.ones(2).to(tensorlib.float64).dtype
        tensorlib.float64
        """
        return _to(self, args, kwargs)

    def cpu(self, *, memory_format=None):
        """This tensor on the CPU (self when already there).

        >>> tensorlib.ones(2).cpu().device
        device(type='cpu')
        """
        if self._storage.device is CPU:
            return self
        return _to_device(self, CPU, self._dtype)

    def record_stream(self, stream):
        """Tell the allocator that ``stream`` (a ``tensorlib.cuda.Stream``) uses this CUDA
        tensor's memory: when the memory is freed it goes back to its pool only after the
        work queued on ``stream`` by then has run.

        >>> if tensorlib.cuda.is_available():
        ...     x = tensorlib.ones(4, device="cuda"); s = tensorlib.cuda.Stream()
        ...     x.record_stream(s)
        """
        if self._storage.device.kind != DEVICE_CUDA:
            raise RuntimeError(f"record_stream: expected a CUDA tensor, got one on "
                               f"{self._storage.device}")
        if self._storage.cuda_streams is None:
            self._storage.cuda_streams = set()
        self._storage.cuda_streams.add(stream)

    def cuda(self, device=None, non_blocking=False, *, memory_format=None):
        """This tensor on a CUDA device (the current one by default; self when already
        there). ``non_blocking`` is accepted; host-to-device copies are always queued on the
        current stream.

        >>> if tensorlib.cuda.is_available():
        ...     assert tensorlib.ones(2).cuda().is_cuda
        """
        cdef Device d = as_device("cuda" if device is None else
                                  (f"cuda:{device}" if isinstance(device, int) else device))
        if d.kind != DEVICE_CUDA:
            raise RuntimeError(f"Invalid device, must be cuda device, got {d}")
        if self._storage.device is d:
            return self
        return _to_device(self, d, self._dtype)

    def float(self, *, memory_format=None):
        return _convert(self, dtype_of(DT_FLOAT32), False)

    def double(self, *, memory_format=None):
        return _convert(self, dtype_of(DT_FLOAT64), False)

    def half(self, *, memory_format=None):
        return _convert(self, dtype_of(DT_FLOAT16), False)

    def bfloat16(self, *, memory_format=None):
        return _convert(self, dtype_of(DT_BFLOAT16), False)

    def long(self, *, memory_format=None):
        return _convert(self, dtype_of(DT_INT64), False)

    def int(self, *, memory_format=None):
        return _convert(self, dtype_of(DT_INT32), False)

    def short(self, *, memory_format=None):
        return _convert(self, dtype_of(DT_INT16), False)

    def char(self, *, memory_format=None):
        return _convert(self, dtype_of(DT_INT8), False)

    def byte(self, *, memory_format=None):
        return _convert(self, dtype_of(DT_UINT8), False)

    def bool(self, *, memory_format=None):
        return _convert(self, dtype_of(DT_BOOL), False)

    # -- operators: each slot runs its declared op (tensorlib/ops/decl/: ``operators=``)
    # through the generated _slot_<name> (_ops_generated.pxi): the op's _call_<op>, with
    # autograd recording and the profiler's op name, as the named function.

    def __add__(self, other):
        return _slot_add(self, other)

    def __radd__(self, other):
        return _slot_radd(self, other)

    def __iadd__(self, other):
        return _slot_iadd(self, other)

    def __sub__(self, other):
        return _slot_sub(self, other)

    def __rsub__(self, other):
        return _slot_rsub(self, other)

    def __isub__(self, other):
        return _slot_isub(self, other)

    def __mul__(self, other):
        return _slot_mul(self, other)

    def __rmul__(self, other):
        return _slot_rmul(self, other)

    def __imul__(self, other):
        return _slot_imul(self, other)

    def __truediv__(self, other):
        return _slot_truediv(self, other)

    def __rtruediv__(self, other):
        # as PyTorch: `2 / x` is x.reciprocal() * 2 (elementwise.pxi)
        return _slot_rtruediv(self, other)

    def __itruediv__(self, other):
        return _slot_itruediv(self, other)

    def __floordiv__(self, other):
        return _slot_floordiv(self, other)

    def __rfloordiv__(self, other):
        return _slot_rfloordiv(self, other)

    def __ifloordiv__(self, other):
        return _slot_ifloordiv(self, other)

    def __mod__(self, other):
        return _slot_mod(self, other)

    def __rmod__(self, other):
        return _slot_rmod(self, other)

    def __imod__(self, other):
        return _slot_imod(self, other)

    def __pow__(self, other, mod=None):
        return _slot_pow(self, other)

    def __rpow__(self, other, mod=None):
        return _slot_rpow(self, other)

    def __ipow__(self, other):
        return _slot_ipow(self, other)

    def __matmul__(self, other):
        return _slot_matmul(self, other)

    def __rmatmul__(self, other):
        return _slot_rmatmul(self, other)

    def __and__(self, other):
        return _slot_and(self, other)

    def __rand__(self, other):
        return _slot_rand(self, other)

    def __iand__(self, other):
        return _slot_iand(self, other)

    def __or__(self, other):
        return _slot_or(self, other)

    def __ror__(self, other):
        return _slot_ror(self, other)

    def __ior__(self, other):
        return _slot_ior(self, other)

    def __xor__(self, other):
        return _slot_xor(self, other)

    def __rxor__(self, other):
        return _slot_rxor(self, other)

    def __ixor__(self, other):
        return _slot_ixor(self, other)

    def __lshift__(self, other):
        return _slot_lshift(self, other)

    def __rlshift__(self, other):
        return _slot_rlshift(self, other)

    def __ilshift__(self, other):
        return _slot_ilshift(self, other)

    def __rshift__(self, other):
        return _slot_rshift(self, other)

    def __rrshift__(self, other):
        return _slot_rrshift(self, other)

    def __irshift__(self, other):
        return _slot_irshift(self, other)

    def __eq__(self, other):
        return _slot_eq(self, other)

    def __ne__(self, other):
        return _slot_ne(self, other)

    def __lt__(self, other):
        return _slot_lt(self, other)

    def __le__(self, other):
        return _slot_le(self, other)

    def __gt__(self, other):
        return _slot_gt(self, other)

    def __ge__(self, other):
        return _slot_ge(self, other)

    def __neg__(self):
        return _slot_neg(self)

    def __pos__(self):
        if self._dtype.code == DT_BOOL:
            raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
        return self

    def __abs__(self):
        return _slot_abs(self)

    def __invert__(self):
        return _slot_invert(self)
    # properties that are views; with requires_grad they are recorded as PyTorch records them
    # (T: PermuteBackward0; mT, H, mH: TransposeBackward0)
    @property
    def T(self):
        if _req(self) or tl_trace_on:
            return _GENERATED_FUNCTIONS["permute"](self, tuple(range(self._ndim - 1, -1, -1)))
        return _reverse_dims(self)

    @property
    def mT(self):
        return self._matrix_transpose("mT")

    def _matrix_transpose(self, str name):
        # (a 0-d tensor is its own transpose: PyTorch returns it, deprecated, not a view)
        if self._ndim == 0:
            return self
        if self._ndim < 2:
            raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of "
                               f"matrices. Got {self._ndim}-D tensor.")
        if _req(self) or tl_trace_on:
            return _GENERATED_FUNCTIONS["transpose"](self, -2, -1)
        return _transpose(self, -2, -1)

    @property
    def H(self):
        if self._ndim == 0:
            return self
        if self._ndim != 2:
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). "
                               f"Got {self._ndim}-D tensor.")
        if _req(self) or tl_trace_on:
            return _GENERATED_FUNCTIONS["transpose"](self, 0, 1)
        return _reverse_dims(self)

    @property
    def mH(self):
        return self._matrix_transpose("mH")


cdef bint _slot_ok(object other):
    """Operands an operator slot accepts; anything else returns NotImplemented so Python can
    try the other side (e.g. a NumPy array's reflected op)."""
    return isinstance(other, (TensorBase, int, float)) or (isinstance(other, np.generic) and
                                                          not isinstance(other, np.ndarray))


cdef object _LAYOUT_STRIDED = None
cdef object contiguous_format = None


def _register_enums(strided, contiguous):
    global _LAYOUT_STRIDED, contiguous_format
    _LAYOUT_STRIDED = strided
    contiguous_format = contiguous


cdef int _become(TensorBase self, TensorBase src, bint keep_vc=False) except -1:
    """Make self an alias of src's data (used by the legacy constructor and .data = ...)."""
    _set_geometry(self, src._ndim, src._shape, src._strides)
    self._storage = src._storage
    self._offset = src._offset
    self._dtype = src._dtype
    if not keep_vc or self._vc is None:
        self._vc = _new_vc() if src._vc is None else src._vc
    self._view_base = src._view_base
    return 0


cdef int _set_requires_grad(TensorBase t, object value) except -1:
    cdef bint v = bool(value)
    if v and not t._dtype.is_floating_point:
        raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
    if not v and t._grad_fn is not None:
        raise RuntimeError("you can only change requires_grad flags of leaf variables. If you "
                           "want to use a computed variable in a subgraph that doesn't require "
                           "differentiation use var_no_grad = var.detach().")
    if v and not t._requires_grad and t._view_base is None:
        t._vc.rg_version = t._vc.version + 1
    t._requires_grad = v
    return 0


def _rebuild_tensor(arr, dtype_name, requires_grad, stride=None):
    """Unpickle: the values in ``arr`` (bfloat16 travels as float32) in the dtype named, laid
    out with the original strides when those are dense (a permuted tensor stays permuted, as
    with PyTorch), else contiguous."""
    cdef DType dt = _dtype_mod.DTYPES_BY_NAME[dtype_name]
    cdef TensorBase src = _tensor_from_data(arr, dt, CPU, True)
    cdef TensorBase t = src
    cdef int64_t st[MAX_DIMS]
    cdef int i
    if stride is not None and len(stride) == src._ndim:
        for i in range(src._ndim):
            st[i] = stride[i]
        if _keeps_layout(src._ndim, src._shape, st):
            t = _alloc_object()
            _set_geometry(t, src._ndim, src._shape, st)
            t._storage = new_storage(src._numel * dt.itemsize, CPU)
            t._dtype = dt
            t._vc = _new_vc()
            _copy_into(t, src)
    t._requires_grad = requires_grad
    return t


include "views.pxi"
include "copies.pxi"
include "interop.pxi"
include "creation.pxi"
include "indexing.pxi"
include "graph.pxi"
include "backend.pxi"
include "nn_ops.pxi"        # the nn family's front halves (still compiled into tensor)
include "optim_ops.pxi"     # the optimizers' fused update (tensorlib.optim)
include "_ew_tables.pxi"   # the elementwise loop tables, by kernel name (generated)

# The generated code of each op family fills these tables (see tensorlib/ops/codegen.py).
_GENERATED_FUNCTIONS = {}   # tensorlib.<name>
_GENERATED_METHODS = {}     # Tensor.<name>
_NODE_CLASSES = {}          # grad_fn types by name
_OPERATOR_SLOTS = {}        # operator slot -> (the declared op it runs, operand order, in place)
include "_ops_generated.pxi"


# ---------------------------------------------------------------------------------------------
# small module-level functions

def is_tensor(obj):
    """True when ``obj`` is a tensorlib tensor.

    >>> tensorlib.is_tensor(tensorlib.zeros(1)), tensorlib.is_tensor([1])
    (True, False)
    """
    return isinstance(obj, TensorBase)


def is_floating_point(input):
    """True when ``input``'s dtype is a floating-point type.

    >>> tensorlib.is_floating_point(tensorlib.zeros(1))
    True
    """
    return _targ(input, "is_floating_point", "input", 1)._dtype.is_floating_point


def numel(input):
    """Number of elements of ``input``.

    >>> tensorlib.numel(tensorlib.zeros(2, 3))
    6
    """
    return _targ(input, "numel", "input", 1)._numel


cdef int _wrapped_scalar_code(object x) except -1:
    if isinstance(x, bool):
        return DT_BOOL
    if isinstance(x, int):
        return DT_INT64
    if isinstance(x, float):
        return default_float_dtype().code
    raise TypeError(f"result_type(): expected a Tensor or a Number, but got {type(x).__name__}")


cdef int _combine_categories(int higher, int lower) noexcept:
    """PyTorch: a lower-priority operand only matters when it is of a higher category."""
    if higher < 0:
        return lower
    if lower < 0:
        return higher
    if dtype_of(higher).is_floating_point:
        return higher
    if higher == DT_BOOL or dtype_of(lower).is_floating_point:
        return promote_codes(higher, lower)
    return higher


cdef int result_type_codes(tuple operands) except -1:
    """PyTorch's result type: dimensioned tensors outrank 0-d tensors, which outrank Python
    scalars; a lower-priority operand only promotes across categories (bool < int < float)."""
    cdef int dim_r = -1, zero_r = -1, wrap_r = -1, c
    for x in operands:
        if isinstance(x, TensorBase):
            c = (<TensorBase>x)._dtype.code
            if (<TensorBase>x)._ndim > 0:
                dim_r = c if dim_r < 0 else promote_codes(dim_r, c)
            else:
                zero_r = c if zero_r < 0 else promote_codes(zero_r, c)
        else:
            c = _wrapped_scalar_code(x)
            wrap_r = c if wrap_r < 0 else promote_codes(wrap_r, c)
    return _combine_categories(dim_r, _combine_categories(zero_r, wrap_r))


def result_type(tensor1, tensor2):
    """The dtype an op on these operands computes in (PyTorch's promotion rules).

    >>> tensorlib.result_type(tensorlib.tensor([1, 2]), 1.5)
    tensorlib.float32
    """
    return dtype_of(result_type_codes((tensor1, tensor2)))


def get_num_threads():
    """Threads tensorlib's CPU kernels use (the caller plus pool workers).

    >>> tensorlib.get_num_threads() >= 1
    True
    """
    return tl_get_num_threads()


def set_num_threads(n):
    """Set the number of threads for CPU kernels. Results never depend on it: work is split
    into fixed chunks whatever the thread count.

    >>> tensorlib.set_num_threads(2); tensorlib.get_num_threads()
    2
    """
    if type(n) is not int:           # (PyTorch's class and message; a bool is refused too)
        raise RuntimeError(f"set_num_threads expects an int, but got {_tname(n)}")
    if n > 256:
        n = 256                      # the pool's cap (TL_MAX_THREADS)
    if n < 1:
        raise RuntimeError(f"set_num_threads expects a positive integer, but got {n}")
    tl_set_num_threads(n)


# ---------------------------------------------------------------------------------------------
# op families compiled as modules of their own (tensorlib/_core/<family>.pyx, listed in
# tensorlib/ops/codegen.py's FAMILY_MODULES). Their generated code adds their ops to the tables
# above; their Python-level names join this module's, so tensorlib._core.tensor still names
# every op; and the Python-level names they take from the core or from another family (the
# helpers backward formulas call) are bound here, once every family is loaded.

def _join_family(module):
    """This module takes the Python-level names of an op-family module that it lacks or
    left None (the helpers of other families that its own code calls)."""
    ns = globals()
    for name, value in module.__dict__.items():
        if not name.startswith("__") and value is not None and ns.get(name) is None:
            ns[name] = value


def _bind_family(module):
    """Bind the names an op-family module left None to this module's values."""
    ns, theirs = globals(), module.__dict__
    for name, value in list(theirs.items()):
        if value is None and not name.startswith("__") and ns.get(name) is not None:
            theirs[name] = ns[name]


from tensorlib._core import advindex as _indexing_family
from tensorlib._core import elementwise as _elementwise_family
from tensorlib._core import linalg as _linalg_family
from tensorlib._core import random_ops as _random_family
from tensorlib._core import reductions as _reductions_family
from tensorlib._core import sorting as _sorting_family
_FAMILIES = (_elementwise_family, _indexing_family, _linalg_family, _random_family,
             _reductions_family, _sorting_family)
for _family in _FAMILIES:
    _join_family(_family)
for _family in _FAMILIES:
    _bind_family(_family)
