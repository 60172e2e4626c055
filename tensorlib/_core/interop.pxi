# NumPy interop and Python scalars: .numpy() and from_numpy share memory both ways; item(),
# tolist() and tensor(data) convert values; DLPack, the buffer protocol and NumPy's array
# interface exchange memory with other libraries.
# (included into tensor.pyx)
cimport numpy as cnp
from cpython.ref cimport Py_INCREF, Py_XDECREF
from cpython.exc cimport PyErr_Fetch, PyErr_Restore
from cpython.buffer cimport (PyObject_CheckBuffer, PyBUF_WRITABLE, PyBUF_FORMAT, PyBUF_ND,
                             PyBUF_STRIDES, PyBUF_C_CONTIGUOUS, PyBUF_F_CONTIGUOUS,
                             PyBUF_ANY_CONTIGUOUS)
from libc.stdint cimport int32_t, uint32_t

cnp.import_array()

cdef extern from "cpu_copy.h" nogil:
    int64_t tl_f64_to_i64(double v)

cdef extern from "numpy/arrayobject.h":
    int PyArray_SetBaseObject(cnp.ndarray arr, object obj) except -1
    object PyArray_NewFromDescr(PyTypeObject* subtype, cnp.dtype descr, int nd, cnp.npy_intp* dims,
                                cnp.npy_intp* strides, void* data, int flags, PyObject* obj)

cdef int _NP_TYPENUM[NUM_DTYPES]
_NP_TYPENUM[:] = [cnp.NPY_BOOL, cnp.NPY_UINT8, cnp.NPY_INT8, cnp.NPY_INT16, cnp.NPY_INT32,
                  cnp.NPY_INT64, cnp.NPY_FLOAT16, -1, cnp.NPY_FLOAT32, cnp.NPY_FLOAT64]


cdef object _numpy_view(TensorBase t, bint for_array):
    """An ndarray over this tensor's memory; its base is the Storage, which keeps it alive."""
    cdef cnp.npy_intp dims[MAX_DIMS]
    cdef cnp.npy_intp strides[MAX_DIMS]
    cdef int i, itemsize = t._dtype.itemsize
    cdef cnp.ndarray arr
    if t._dtype.code == DT_BFLOAT16:
        raise TypeError("Got unsupported ScalarType BFloat16")
    if t._storage.device.type != "cpu":
        raise TypeError(f"can't convert {t._storage.device} device type tensor to numpy. "
                        f"Use Tensor.cpu() to copy the tensor to host memory first.")
    for i in range(t._ndim):
        dims[i] = t._shape[i]
        strides[i] = t._strides[i] * itemsize
    descr = cnp.PyArray_DescrFromType(_NP_TYPENUM[t._dtype.code])
    Py_INCREF(descr)   # PyArray_NewFromDescr steals a reference
    arr = PyArray_NewFromDescr(
        <PyTypeObject*>np.ndarray, descr, t._ndim, dims, strides,
        <void*>tensor_data(t) if t._numel > 0 else NULL, cnp.NPY_ARRAY_WRITEABLE, NULL)
    Py_INCREF(t._storage)      # PyArray_SetBaseObject steals a reference
    PyArray_SetBaseObject(arr, t._storage)
    return arr


cdef object _byte_view(TensorBase t):
    """The bytes of a contiguous tensor as a 1-D uint8 ndarray whose base is the Storage (so
    an asynchronous copy holding the array keeps the memory alive)."""
    cdef cnp.npy_intp n = t._numel * t._dtype.itemsize
    cdef cnp.ndarray arr
    descr = cnp.PyArray_DescrFromType(cnp.NPY_UINT8)
    Py_INCREF(descr)
    arr = PyArray_NewFromDescr(<PyTypeObject*>np.ndarray, descr, 1, &n, NULL,
                               <void*>tensor_data(t), cnp.NPY_ARRAY_WRITEABLE | cnp.NPY_ARRAY_C_CONTIGUOUS, NULL)
    Py_INCREF(t._storage)
    PyArray_SetBaseObject(arr, t._storage)
    return arr


cdef object _numpy_copy(TensorBase t):
    """Values as a NumPy array (bfloat16 widened to float32) for tolist/pickling."""
    t = host_copy(t)
    if t._dtype.code == DT_BFLOAT16:
        t = _clone(t, None, dtype_of(DT_FLOAT32))
    return _numpy_view(t, True)


cdef object _item(TensorBase t):
    """The first element as a Python scalar (callers check numel)."""
    needs_data(t, "item")
    t = host_copy(t)
    cdef char* p = tensor_data(t)
    cdef int c = t._dtype.code
    if c == DT_FLOAT32:
        return (<float*>p)[0]
    if c == DT_FLOAT64:
        return (<double*>p)[0]
    if c == DT_INT64:
        return (<int64_t*>p)[0]
    if c == DT_INT32:
        return (<int*>p)[0]
    if c == DT_BOOL:
        return (<uint8_t*>p)[0] != 0
    if c == DT_FLOAT16:
        return tl_f16_to_f32((<uint16_t*>p)[0])
    if c == DT_BFLOAT16:
        return tl_bf16_to_f32((<uint16_t*>p)[0])
    if c == DT_UINT8:
        return (<uint8_t*>p)[0]
    if c == DT_INT8:
        return (<signed char*>p)[0]
    return (<short*>p)[0]


cdef object _scalar_item(TensorBase t, str kind):
    if t._numel != 1:
        raise ValueError(f"only one element tensors can be converted to Python scalars")
    return _item(t)


def from_numpy(ndarray):
    """A tensor sharing ``ndarray``'s memory (no copy; writes show on both sides).

    >>> a = numpy.arange(3.0); t = tensorlib.from_numpy(a); a[0] = 7; t[0].item()
    7.0
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return _borrow_numpy(<cnp.ndarray>ndarray)


cdef TensorBase _borrow_numpy(cnp.ndarray arr):
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int i, nd = cnp.PyArray_NDIM(arr)
    cdef int itemsize = cnp.PyArray_ITEMSIZE(arr)
    cdef int64_t span = 0
    cdef TensorBase t
    if not arr.dtype.isnative and _dtype_mod.from_numpy_dtype(arr.dtype.newbyteorder("=")) is not None:
        raise ValueError("given numpy array has byte order different from the native byte order. "
                         "Conversion between byte orders is currently not supported.")
    dt = _dtype_mod.from_numpy_dtype(arr.dtype) if arr.dtype.isnative else None
    if dt is None:
        raise TypeError(f"can't convert np.ndarray of type {arr.dtype}. The only supported types "
                        f"are: float64, float32, float16, int64, int32, int16, int8, uint8, and bool.")
    if nd > MAX_DIMS:
        raise RuntimeError(f"arrays of more than {MAX_DIMS} dimensions are not supported (got {nd})")
    for i in range(nd):
        sh[i] = cnp.PyArray_DIMS(arr)[i]
        st[i] = cnp.PyArray_STRIDES(arr)[i]
        if st[i] < 0:
            raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                             "with negative strides are not currently supported. (You can probably "
                             "work around this by making a copy of your array  with array.copy().) ")
        if st[i] % itemsize:
            raise ValueError("given numpy array strides not a multiple of the element byte size. "
                             "Copy the numpy array to reallocate the memory.")
        st[i] //= itemsize
    for i in range(nd):
        if sh[i] == 0:
            span = -1
            break
        span += (sh[i] - 1) * st[i]
    if not arr.flags.writeable:
        # stacklevel=1: Cython functions push no Python frames, so 1 is the caller
        warnings.warn("The given NumPy array is not writable, and PyTorch does not support "
                      "non-writable tensors. This means writing to this tensor will result in "
                      "undefined behavior.", UserWarning, stacklevel=1)
    t = _alloc_object()
    _set_geometry(t, nd, sh, st)
    t._storage = borrow_storage(<char*>cnp.PyArray_DATA(arr), (span + 1) * itemsize, arr, CPU)
    t._dtype = dt
    t._vc = _new_vc()
    return t


def _tensor_on_storage(Storage storage, dtype, size, stride, int64_t storage_offset=0):
    """A tensor of ``dtype`` viewing ``storage`` with ``size``, ``stride`` and
    ``storage_offset`` (in elements), checked to lie inside it: how a DataLoader batch is
    rebuilt on the shared memory its worker filled.

    >>> s = tensorlib.arange(6.0).untyped_storage()
    >>> tensorlib._core.tensor._tensor_on_storage(s, tensorlib.float32, (2, 2), (1, 2), 1).tolist()
    [[1.0, 3.0], [2.0, 4.0]]
    """
    cdef DType dt = as_dtype(dtype)
    cdef int64_t n = storage._nbytes // dt.itemsize
    cdef TensorBase t = _alloc_object()
    _set_geometry(t, 1, &n, NULL)
    t._storage = storage
    t._dtype = dt
    t._vc = _new_vc()
    return _as_strided(t, tuple(int(x) for x in size), tuple(int(x) for x in stride),
                       storage_offset)


# -- tensor(data): nested sequences of Python/NumPy scalars --------------------------------------
#
# Like PyTorch: the shape is read off the first element at every depth, then every element is
# checked against it (a wrong length is a ValueError, a number where a sequence belongs or the
# reverse a TypeError). Without a dtype, each leaf has one (Python bool/int/float -> bool,
# int64, the default float dtype; NumPy scalars and 0-d tensors keep theirs) and the result is
# their promotion. Values travel through an int64, double or bool buffer chosen by the target
# dtype; integers that do not fit int64 raise PyTorch's ValueError, and values that do not fit
# an integer target raise its RuntimeError.

cdef bint _is_seq(object v):
    if isinstance(v, (list, tuple)):
        return True
    if isinstance(v, (str, bytes, bytearray, dict)):
        return False
    if isinstance(v, TensorBase):
        return (<TensorBase>v)._ndim > 0
    if isinstance(v, np.ndarray):
        return (<cnp.ndarray>v).ndim > 0
    if isinstance(v, np.generic):
        return False
    return hasattr(v, "__len__") and hasattr(v, "__getitem__") and not hasattr(v, "keys")


cdef int _leaf_code(object v) except -1:
    """The dtype code a single value contributes to inference."""
    if isinstance(v, (bool, np.bool_)):
        return DT_BOOL
    if isinstance(v, (np.integer, np.floating)) or (isinstance(v, np.ndarray) and (<cnp.ndarray>v).ndim == 0):
        d = _dtype_mod.from_numpy_dtype(v.dtype) if v.dtype.isnative else None
        if d is None:
            raise TypeError(f"can't convert np.{v.dtype} value {v!r}. The only supported types are: "
                            f"float64, float32, float16, int64, int32, int16, int8, uint8, and bool.")
        return (<DType>d).code
    if isinstance(v, int):
        return DT_INT64
    if isinstance(v, float):
        return default_float_dtype().code
    if isinstance(v, TensorBase):          # 0-d (sequences never reach here)
        return (<TensorBase>v)._dtype.code
    if isinstance(v, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(v).__name__}'")
    if isinstance(v, (complex, np.complexfloating)):
        raise TypeError("complex values are not supported (complex dtypes are out of scope)")
    raise RuntimeError(f"Could not infer dtype of {type(v).__name__}")


cdef list _infer_shape(object data):
    """Sizes along the chain of first elements."""
    cdef list shape = []
    cdef Py_ssize_t n
    while _is_seq(data):
        n = len(data)
        shape.append(n)
        if len(shape) > MAX_DIMS:
            raise ValueError(f"too many dimensions: more than {MAX_DIMS}")
        if n == 0:
            break
        data = data[0]
    return shape


cdef int _check_infer(object obj, int depth, list shape, int code) except -2:
    """Check obj against shape from ``depth`` on; return the promotion of ``code`` and the
    leaves' dtype codes (-1: no leaf yet)."""
    cdef int ndim = len(shape), c
    cdef Py_ssize_t n
    if depth == ndim:
        if _is_seq(obj):
            raise TypeError(f"expected a number at dim {depth} but got a sequence of length "
                            f"{len(obj)} ({type(obj).__name__}): nested lists must be rectangular")
        c = _leaf_code(obj)
        return c if code < 0 else promote_codes(code, c)
    if not _is_seq(obj):
        raise TypeError(f"expected a sequence of length {shape[depth]} at dim {depth} but got a "
                        f"{type(obj).__name__}: nested lists must be rectangular")
    n = len(obj)
    if n != shape[depth]:
        raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth} (got {n})")
    if depth == ndim - 1 and type(obj) is list:
        return _infer_list_of_leaves(<list>obj, depth + 1, code)
    for v in obj:
        code = _check_infer(v, depth + 1, shape, code)
    return code


cdef int _infer_list_of_leaves(list obj, int depth, int code) except -2:
    """The innermost level, usually a list of plain Python numbers: exact-type checks first."""
    cdef int c, float_code = default_float_dtype().code
    for v in obj:
        if type(v) is float:
            c = float_code
        elif type(v) is int:
            c = DT_INT64
        elif type(v) is bool:
            c = DT_BOOL
        else:
            if _is_seq(v):
                raise TypeError(f"expected a number at dim {depth} but got a sequence of length "
                                f"{len(v)} ({type(v).__name__}): nested lists must be rectangular")
            c = _leaf_code(v)
        code = c if code < 0 else promote_codes(code, c)
    return code


cdef bint _leaf_is_float(object v):
    if isinstance(v, TensorBase):
        return (<TensorBase>v)._dtype.is_floating_point
    if isinstance(v, np.ndarray):
        return v.dtype.kind == "f"
    return isinstance(v, (float, np.floating))


cdef int64_t _fill_values(object obj, char* buf, int64_t pos, int buf_code, DType dt,
                          int depth, int ndim) except -1:
    """Write the leaves of (already checked) obj in row-major order into buf, whose slots are
    int64, double or bool (``buf_code``), checking each value against the target ``dt``."""
    if depth < ndim:
        if depth == ndim - 1 and type(obj) is list:
            return _fill_list_of_leaves(<list>obj, buf, pos, buf_code, dt)
        for v in obj:
            pos = _fill_values(v, buf, pos, buf_code, dt, depth + 1, ndim)
        return pos
    _fill_leaf(obj, buf, pos, buf_code, dt)
    return pos + 1


cdef int64_t _fill_list_of_leaves(list obj, char* buf, int64_t pos, int buf_code, DType dt) except -1:
    """The innermost level: plain floats into a double buffer and plain ints into an int64
    target take no Python-level checks."""
    for v in obj:
        if buf_code == DT_FLOAT64 and type(v) is float:
            (<double*>buf)[pos] = <double>v
        elif buf_code == DT_INT64 and dt.code == DT_INT64 and type(v) is int:
            try:
                (<int64_t*>buf)[pos] = <int64_t>v
            except OverflowError:
                raise ValueError(f"Overflow when unpacking long long: {v} does not fit in int64") from None
        else:
            _fill_leaf(v, buf, pos, buf_code, dt)
        pos += 1
    return pos


cdef int _fill_leaf(object obj, char* buf, int64_t pos, int buf_code, DType dt) except -1:
    cdef int64_t iv
    if isinstance(obj, TensorBase):
        obj = _item(<TensorBase>obj)
    elif isinstance(obj, np.ndarray):
        obj = obj[()]
    if buf_code == DT_FLOAT64:
        (<double*>buf)[pos] = float(obj)
    elif buf_code == DT_BOOL:
        (<uint8_t*>buf)[pos] = bool(obj)
    elif _leaf_is_float(obj):
        _check_scalar_fits(obj, dt, True, False)
        (<int64_t*>buf)[pos] = tl_f64_to_i64(float(obj))
    else:
        try:
            iv = obj
        except OverflowError:
            raise ValueError(f"Overflow when unpacking long long: {obj} does not fit in int64") from None
        _check_scalar_fits(iv, dt, False, False)
        (<int64_t*>buf)[pos] = iv
    return 0


cdef TensorBase _tensor_from_data(object data, DType dt, Device dev, bint dtype_given):
    """tensor(data): always copies. Infers the dtype from the values (see above) unless
    ``dtype_given``."""
    cdef TensorBase src, tmp
    cdef int64_t sh[MAX_DIMS]
    cdef int i, code, buf_code
    if isinstance(data, TensorBase):
        src = <TensorBase>data
        if src._storage.device is not dev:
            return _copy_to_device(src, dt if dtype_given else src._dtype, dev)
        return _clone(src, contiguous_format, dt if dtype_given else src._dtype)
    data = _foreign_memory(data)
    if isinstance(data, TensorBase):
        src = <TensorBase>data
        if src._storage.device is not dev:
            return _copy_to_device(src, dt if dtype_given else src._dtype, dev)
        return _clone(src, contiguous_format, dt if dtype_given else src._dtype)
    if isinstance(data, np.ndarray) and (<cnp.ndarray>data).dtype.kind in "biuf":
        arr = <cnp.ndarray>data
        if not arr.dtype.isnative or _dtype_mod.from_numpy_dtype(arr.dtype) is None \
                or any(s < 0 for s in arr.strides):
            arr = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("="))
            if _dtype_mod.from_numpy_dtype(arr.dtype) is None:
                raise TypeError(f"can't convert np.ndarray of type {data.dtype}. The only supported "
                                f"types are: float64, float32, float16, int64, int32, int16, int8, "
                                f"uint8, and bool.")
        src = _borrow_numpy(arr)
        if dev is not CPU:
            return _copy_to_device(src, dt if dtype_given else src._dtype, dev)
        return _clone(src, contiguous_format, dt if dtype_given else src._dtype)
    shape = _infer_shape(data)
    code = _check_infer(data, 0, shape, -1)
    if not dtype_given:
        dt = default_float_dtype() if code < 0 else dtype_of(code)   # only empty sequences: default
    buf_code = DT_FLOAT64 if dt.is_floating_point else DT_BOOL if dt.code == DT_BOOL else DT_INT64
    for i in range(len(shape)):
        sh[i] = shape[i]
    if dev.kind == DEVICE_CUDA:
        # the values are written on the host, converted there, then copied over
        tmp = empty_tensor(len(shape), sh, dtype_of(buf_code), CPU)
        _fill_values(data, tensor_data(tmp), 0, buf_code, dt, 0, len(shape))
        return _copy_to_device(_to_dtype(tmp, dt, False), dt, dev)
    tmp = empty_tensor(len(shape), sh, dtype_of(buf_code), dev)
    if has_data(tmp):
        _fill_values(data, tensor_data(tmp), 0, buf_code, dt, 0, len(shape))
    else:
        # the values are still checked (range, types) as on the CPU, in host scratch memory
        scratch = empty_tensor(len(shape), sh, dtype_of(buf_code), CPU)
        _fill_values(data, tensor_data(scratch), 0, buf_code, dt, 0, len(shape))
    return _to_dtype(tmp, dt, False)


cdef object _foreign_memory(object data):
    """For tensor()/as_tensor(): an object of another library that exposes its memory
    (``__dlpack__``, ``__array_interface__``, the buffer protocol) as a tensor on that memory
    (through DLPack) or an ndarray on it; anything else unchanged. DLPack comes first; memory
    it cannot share (read-only, a tensor that requires grad) goes through NumPy's protocols."""
    if isinstance(data, (TensorBase, np.ndarray, np.generic, list, tuple, str, bytes, bytearray,
                         int, float, bool, dict)):
        return data
    if hasattr(data, "__cuda_array_interface__"):
        return _from_cuda_array_interface(data)
    if hasattr(data, "__dlpack__") and hasattr(data, "__dlpack_device__"):
        try:
            return from_dlpack(data)
        except BufferError:
            pass
    if PyObject_CheckBuffer(data) or hasattr(data, "__array_interface__"):
        return np.asarray(data)
    return data


# -- DLPack ---------------------------------------------------------------------------------------
#
# Export: __dlpack__ hands out one malloc'd block (the managed tensor, then its shape and strides)
# whose manager_ctx is a strong reference to the exported tensor; the deleter drops that
# reference (taking the GIL: consumers may call it from any thread) and frees the block. The
# capsule's destructor calls the deleter only while the capsule still has its unconsumed name,
# so it runs exactly once whether or not a consumer took the tensor.
# Import: from_dlpack renames the capsule "used_..." and gives the managed tensor to a
# _DLPackOwner, the owner of a borrowed Storage (not counted by the allocator); the deleter
# runs when the last tensor on that storage dies.


cdef extern from "dlpack.h" nogil:
    enum:
        TL_DL_CPU, TL_DL_CUDA, TL_DL_INT, TL_DL_UINT, TL_DL_FLOAT, TL_DL_BFLOAT, TL_DL_BOOL
        TL_DLPACK_MAJOR, TL_DLPACK_MINOR
    uint64_t TL_DL_FLAG_READ_ONLY
    uint64_t TL_DL_FLAG_IS_COPIED
    ctypedef struct tl_dl_version:
        uint32_t major
        uint32_t minor
    ctypedef struct tl_dl_device:
        int32_t device_type
        int32_t device_id
    ctypedef struct tl_dl_dtype:
        uint8_t code
        uint8_t bits
        uint16_t lanes
    ctypedef struct tl_dl_tensor:
        void* data
        tl_dl_device device
        int32_t ndim
        tl_dl_dtype dtype
        int64_t* shape
        int64_t* strides
        uint64_t byte_offset
    ctypedef struct tl_dl_managed:
        tl_dl_tensor dl_tensor
        void* manager_ctx
        void (*deleter)(tl_dl_managed*) noexcept nogil
    ctypedef struct tl_dl_managed_versioned:
        tl_dl_version version
        void* manager_ctx
        void (*deleter)(tl_dl_managed_versioned*) noexcept nogil
        uint64_t flags
        tl_dl_tensor dl_tensor


cdef extern from "Python.h":
    # declared on PyObject* (not object): the destructor runs on a capsule whose reference
    # count is already zero, and must not take a new reference to it
    ctypedef void (*_capsule_dtor)(PyObject*)
    object PyCapsule_New(void* pointer, const char* name, _capsule_dtor destructor)
    int PyCapsule_IsValid(PyObject* capsule, const char* name)
    void* PyCapsule_GetPointer(PyObject* capsule, const char* name)
    const char* PyCapsule_GetName(PyObject* capsule)
    int PyCapsule_SetName(PyObject* capsule, const char* name) except -1
    bint PyCapsule_CheckExact(object o)

cdef const char* _DL_NAME = b"dltensor"
cdef const char* _DL_NAME_V = b"dltensor_versioned"
cdef const char* _DL_USED = b"used_dltensor"
cdef const char* _DL_USED_V = b"used_dltensor_versioned"

# (code, bits) of each dtype in DLPack's terms, by tensorlib dtype code
cdef uint8_t _DL_CODE[NUM_DTYPES]
cdef uint8_t _DL_BITS[NUM_DTYPES]
_DL_CODE[:] = [TL_DL_BOOL, TL_DL_UINT, TL_DL_INT, TL_DL_INT, TL_DL_INT, TL_DL_INT, TL_DL_FLOAT,
               TL_DL_BFLOAT, TL_DL_FLOAT, TL_DL_FLOAT]
_DL_BITS[:] = [8, 8, 8, 16, 32, 64, 16, 16, 32, 64]


cdef void _dl_delete(tl_dl_managed* m) noexcept nogil:
    if m == NULL:
        return
    with gil:
        Py_XDECREF(<PyObject*>m.manager_ctx)
    free(m)


cdef void _dl_delete_v(tl_dl_managed_versioned* m) noexcept nogil:
    if m == NULL:
        return
    with gil:
        Py_XDECREF(<PyObject*>m.manager_ctx)
    free(m)


cdef void _dl_capsule_dtor(PyObject* cap) noexcept:
    """A capsule nobody consumed frees its managed tensor; a consumed one ("used_...") owns
    nothing."""
    cdef PyObject *et
    cdef PyObject *ev
    cdef PyObject *tb
    cdef tl_dl_managed* m
    cdef tl_dl_managed_versioned* mv
    PyErr_Fetch(&et, &ev, &tb)
    if PyCapsule_IsValid(cap, _DL_NAME_V):
        mv = <tl_dl_managed_versioned*>PyCapsule_GetPointer(cap, _DL_NAME_V)
        if mv.deleter != NULL:
            mv.deleter(mv)
    elif PyCapsule_IsValid(cap, _DL_NAME):
        m = <tl_dl_managed*>PyCapsule_GetPointer(cap, _DL_NAME)
        if m.deleter != NULL:
            m.deleter(m)
    PyErr_Restore(et, ev, tb)


cdef int _fill_dl_tensor(tl_dl_tensor* d, TensorBase t, int64_t* sh) except -1:
    """Describe ``t`` in ``d``; ``sh`` has room for the shape and the strides."""
    cdef int i
    d.data = <void*>tensor_data(t)
    d.device.device_type = TL_DL_CPU
    d.device.device_id = 0
    d.ndim = t._ndim
    d.dtype.code = _DL_CODE[t._dtype.code]
    d.dtype.bits = _DL_BITS[t._dtype.code]
    d.dtype.lanes = 1
    d.shape = sh
    d.strides = sh + t._ndim
    d.byte_offset = 0
    for i in range(t._ndim):
        sh[i] = t._shape[i]
        sh[t._ndim + i] = t._strides[i]
    return 0


cdef object _dlpack_export(TensorBase t, object stream, object max_version, object dl_device,
                           object copy):
    cdef tl_dl_managed* m
    cdef tl_dl_managed_versioned* mv
    cdef size_t extra = 2 * max(t._ndim, 1) * sizeof(int64_t)
    cdef bint copied = False
    if _req(t):
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if t._storage.device.kind != DEVICE_CPU:
        raise BufferError(f"Cannot pack tensors on {t._storage.device.type}: tensorlib "
                          f"exports CPU tensors through DLPack")
    if stream is not None:
        raise RuntimeError(f"stream must be None for a CPU tensor (got {stream!r})")
    if dl_device is not None:
        dev = tuple(dl_device)
        if len(dev) != 2 or dev[0] != TL_DL_CPU:
            if copy is False:
                raise BufferError(f"unsupported device requested: {dl_device!r} would need a "
                                  f"copy to another device, and copy=False")
            raise BufferError(f"unsupported device requested: {dl_device!r} (tensorlib exports "
                              f"to the CPU, (1, 0), only)")
    if copy:
        t = _contiguous_copy(t)
        copied = True
    versioned = max_version is not None and tuple(max_version)[0] >= 1
    if versioned:
        mv = <tl_dl_managed_versioned*>malloc(sizeof(tl_dl_managed_versioned) + extra)
        if mv == NULL:
            raise MemoryError()
        _fill_dl_tensor(&mv.dl_tensor, t, <int64_t*>(mv + 1))
        mv.version.major = TL_DLPACK_MAJOR
        mv.version.minor = TL_DLPACK_MINOR
        mv.flags = TL_DL_FLAG_IS_COPIED if copied else 0
        mv.deleter = _dl_delete_v
        Py_INCREF(t)
        mv.manager_ctx = <void*>t
        try:
            return PyCapsule_New(mv, _DL_NAME_V, _dl_capsule_dtor)
        except BaseException:
            _dl_delete_v(mv)
            raise
    m = <tl_dl_managed*>malloc(sizeof(tl_dl_managed) + extra)
    if m == NULL:
        raise MemoryError()
    _fill_dl_tensor(&m.dl_tensor, t, <int64_t*>(m + 1))
    m.deleter = _dl_delete
    Py_INCREF(t)
    m.manager_ctx = <void*>t
    try:
        return PyCapsule_New(m, _DL_NAME, _dl_capsule_dtor)
    except BaseException:
        _dl_delete(m)
        raise


cdef object _dlpack_device(TensorBase t):
    cdef Device d = t._storage.device
    if d.kind == DEVICE_CPU:
        return (TL_DL_CPU, 0)
    if d.type == "cuda":
        return (TL_DL_CUDA, 0 if d.index is None else d.index)
    raise ValueError(f"Unknown device type {d.type} for Dlpack")


@cython.final
cdef class _DLPackOwner:
    """Owns a consumed DLPack managed tensor: the storage borrowing its memory keeps this
    alive, and the producer's deleter runs (once) when it dies."""
    cdef void* managed
    cdef bint versioned

    def __dealloc__(self):
        cdef tl_dl_managed* m
        cdef tl_dl_managed_versioned* mv
        if self.managed == NULL:
            return
        if self.versioned:
            mv = <tl_dl_managed_versioned*>self.managed
            if mv.deleter != NULL:
                mv.deleter(mv)
        else:
            m = <tl_dl_managed*>self.managed
            if m.deleter != NULL:
                m.deleter(m)
        self.managed = NULL


cdef DType _dl_dtype(tl_dl_dtype d):
    cdef int c
    if d.lanes == 1:
        for c in range(NUM_DTYPES):
            if _DL_CODE[c] == d.code and _DL_BITS[c] == d.bits:
                return dtype_of(c)
    kinds = {TL_DL_INT: "int", TL_DL_UINT: "uint", TL_DL_FLOAT: "float", TL_DL_BFLOAT: "bfloat",
             TL_DL_BOOL: "bool", 5: "complex", 3: "opaque handle"}
    name = f"{kinds.get(d.code, f'type code {d.code}')}{d.bits}"
    if d.lanes != 1:
        name += f"x{d.lanes}"
    raise RuntimeError(f"Unsupported dtype in DLTensor: {name} (tensorlib supports bool, uint8, "
                       f"int8, int16, int32, int64, float16, bfloat16, float32 and float64)")


cdef TensorBase _from_capsule(object cap, object copy):
    cdef PyObject* p = <PyObject*>cap
    cdef tl_dl_managed* m = NULL
    cdef tl_dl_managed_versioned* mv = NULL
    cdef tl_dl_tensor* d
    cdef bint read_only = False
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int64_t span = 0, contig = 1
    cdef int i, j, nd
    cdef const char* cname
    cdef bint negative = False, empty = False
    cdef DType dt
    cdef TensorBase t
    cdef _DLPackOwner owner
    if not PyCapsule_CheckExact(cap):
        raise TypeError(f"from_dlpack: __dlpack__ returned a {type(cap).__name__}, not a "
                        f"DLPack capsule")
    if PyCapsule_IsValid(p, _DL_NAME_V):
        mv = <tl_dl_managed_versioned*>PyCapsule_GetPointer(p, _DL_NAME_V)
        if mv.version.major > TL_DLPACK_MAJOR:
            raise BufferError(f"from_dlpack: DLPack version {mv.version.major}."
                              f"{mv.version.minor} is newer than this tensorlib supports "
                              f"({TL_DLPACK_MAJOR}.{TL_DLPACK_MINOR})")
        d = &mv.dl_tensor
        read_only = (mv.flags & TL_DL_FLAG_READ_ONLY) != 0
    elif PyCapsule_IsValid(p, _DL_NAME):
        m = <tl_dl_managed*>PyCapsule_GetPointer(p, _DL_NAME)
        d = &m.dl_tensor
    else:
        cname = PyCapsule_GetName(p)
        name = (<bytes>cname).decode() if cname != NULL else None
        raise RuntimeError(f"from_dlpack received an invalid capsule (named {name!r}). Note that "
                           f"DLTensor capsules can be consumed only once, so you might have "
                           f"already constructed a tensor from it once.")
    if d.device.device_type != TL_DL_CPU:
        raise BufferError(f"from_dlpack: unsupported device type {d.device.device_type} "
                          f"(tensorlib imports CPU memory, device type {TL_DL_CPU}, only)")
    dt = _dl_dtype(d.dtype)
    nd = d.ndim
    if nd < 0 or nd > MAX_DIMS:
        raise RuntimeError(f"from_dlpack: a DLTensor of {nd} dimensions is not supported "
                           f"(at most {MAX_DIMS})")
    for i in range(nd - 1, -1, -1):
        sh[i] = d.shape[i]
        if sh[i] < 0:
            raise RuntimeError(f"from_dlpack: negative size {sh[i]} in dim {i}")
        st[i] = contig if d.strides == NULL else d.strides[i]
        empty = empty or sh[i] == 0
        contig *= sh[i] if sh[i] > 1 else 1
    for i in range(nd - 1, -1, -1):
        # a stride that addresses nothing (a size-1 dim, or any dim of an empty tensor) is
        # made the row-major one: tensorlib has no negative strides
        if st[i] < 0 and (sh[i] <= 1 or empty):
            st[i] = 1
            for j in range(i + 1, nd):
                st[i] *= sh[j] if sh[j] > 1 else 1
        negative = negative or st[i] < 0
    if read_only and copy is not True:
        raise BufferError("from_dlpack: the producer exports this memory read-only and "
                          "tensorlib tensors are writable; pass copy=True for a copy")
    if negative and copy is False:
        raise BufferError("from_dlpack: the DLTensor has negative strides, which tensorlib "
                          "tensors cannot view; copy=False forbids the copy that would need")
    cdef char* data = <char*>d.data + d.byte_offset
    # consumed from here on: the deleter is ours to call
    PyCapsule_SetName(p, _DL_USED_V if mv != NULL else _DL_USED)
    owner = _DLPackOwner.__new__(_DLPackOwner)
    owner.managed = <void*>mv if mv != NULL else <void*>m
    owner.versioned = mv != NULL
    if copy is True or negative:
        t = empty_tensor(nd, sh, dt, CPU)
        if not empty:
            copy_cast(nd, sh, tensor_data(t), t._strides, dt.code, data, st, dt.code)
        return t      # the owner dies here and releases the producer's memory
    if not empty:
        for i in range(nd):
            span += (sh[i] - 1) * st[i]
        span += 1
    t = _alloc_object()
    _set_geometry(t, nd, sh, st)
    t._storage = borrow_storage(data, span * dt.itemsize, owner, CPU)
    t._dtype = dt
    t._vc = _new_vc()
    return t


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor on the memory of ``ext_tensor`` (any object with ``__dlpack__``, such as a
    NumPy array or a PyTorch tensor, or a DLPack capsule), without a copy: writes show on
    both sides, and the producer's memory stays alive while the tensor does (it is borrowed,
    not counted by ``tensorlib.memory``).

    ``copy=True`` copies into tensorlib's memory; ``copy=False`` raises ``BufferError``
    rather than copy; by default (``None``) only memory with negative strides is copied.
    Read-only memory (NumPy's non-writable arrays) needs ``copy=True``. ``device`` may only
    be None or the CPU.

    >>> a = numpy.arange(3.0); t = tensorlib.from_dlpack(a); t[0] = 7.0; a.tolist()
    [7.0, 1.0, 2.0]
    """
    if copy is not None:
        copy = bool(copy)
    if device is not None and as_device(device).kind != DEVICE_CPU:
        raise BufferError(f"from_dlpack: device={device!r}: tensorlib imports to the CPU only")
    if PyCapsule_CheckExact(ext_tensor):
        return _from_capsule(ext_tensor, copy)
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack capsule "
                        f"(got {type(ext_tensor).__name__})")
    if hasattr(ext_tensor, "__dlpack_device__"):
        dev = ext_tensor.__dlpack_device__()
        if int(dev[0]) != TL_DL_CPU:
            raise BufferError(f"from_dlpack: unsupported device {tuple(dev)!r} (tensorlib "
                              f"imports CPU memory, device type {TL_DL_CPU}, only)")
    try:
        cap = ext_tensor.__dlpack__(max_version=(TL_DLPACK_MAJOR, TL_DLPACK_MINOR))
    except TypeError:
        cap = ext_tensor.__dlpack__()     # an exporter from before DLPack 1.0
    return _from_capsule(cap, copy)


# -- the buffer protocol --------------------------------------------------------------------------
#
# A CPU tensor exports its memory (strided as it is) with a PEP 3118 format, always writable.
# The version counter cannot see writes through a buffer: it is bumped when a buffer is
# requested writable (PyBUF_WRITABLE: file.readinto(t), ctypes from_buffer) and again when
# that buffer is released. memoryview(t) and NumPy ask for a buffer that may be read-only, so
# writes through them are invisible to autograd, as writes through t.numpy() are.


cdef const char* _BUF_FORMAT[NUM_DTYPES]
_BUF_FORMAT[:] = [b"?", b"B", b"b", b"h", b"i", b"q", b"e", NULL, b"f", b"d"]


cdef bint _is_f_contiguous(TensorBase t) noexcept:
    cdef int64_t expect = 1
    cdef int i
    for i in range(t._ndim):
        if t._shape[i] != 1 and t._strides[i] != expect:
            return t._numel == 0
        expect *= t._shape[i]
    return True


cdef int _get_buffer(TensorBase t, Py_buffer* buf, int flags) except -1:
    cdef Py_ssize_t* dims
    cdef int i, nd = t._ndim, itemsize = t._dtype.itemsize
    if t._storage.device.kind != DEVICE_CPU:
        raise BufferError(f"a {t._storage.device.type} tensor has no buffer on the host: "
                          f"use Tensor.cpu() first")
    if _BUF_FORMAT[t._dtype.code] == NULL:
        raise BufferError(f"{t._dtype} has no buffer-protocol (PEP 3118) format: convert it, "
                          f"e.g. with .float()")
    if (flags & PyBUF_STRIDES) != PyBUF_STRIDES and not t._contiguous:
        raise BufferError("this tensor is not contiguous: a buffer without strides needs a "
                          "contiguous tensor (call .contiguous())")
    if (flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS and not t._contiguous:
        raise BufferError("tensor is not C-contiguous")
    if (flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS and not _is_f_contiguous(t):
        raise BufferError("tensor is not Fortran-contiguous")
    if (flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS \
            and not (t._contiguous or _is_f_contiguous(t)):
        raise BufferError("tensor is not contiguous")
    # internal: the Storage the pointer lies in (the tensor could be given other storage by
    # set_/resize_ while the buffer is held), whether the buffer was asked writable, then the
    # shape and the strides
    dims = <Py_ssize_t*>malloc((2 * nd + 2) * sizeof(Py_ssize_t))
    if dims == NULL:
        raise MemoryError()
    Py_INCREF(t._storage)
    dims[0] = <Py_ssize_t><PyObject*>t._storage
    dims[1] = (flags & PyBUF_WRITABLE) == PyBUF_WRITABLE
    for i in range(nd):
        dims[2 + i] = t._shape[i]
        dims[2 + nd + i] = t._strides[i] * itemsize
    if dims[1]:
        t._vc.version += 1
    buf.buf = <void*>tensor_data(t)
    buf.obj = t
    buf.len = t._numel * itemsize
    buf.itemsize = itemsize
    buf.readonly = 0
    # without PyBUF_ND the consumer sees flat bytes, described as PyBuffer_FillInfo does
    buf.ndim = nd if flags & PyBUF_ND else 1
    buf.format = <char*>_BUF_FORMAT[t._dtype.code] if flags & PyBUF_FORMAT else NULL
    buf.shape = dims + 2 if flags & PyBUF_ND else NULL
    buf.strides = dims + 2 + nd if (flags & PyBUF_STRIDES) == PyBUF_STRIDES else NULL
    buf.suboffsets = NULL
    buf.internal = <void*>dims
    return 0


cdef void _release_buffer(TensorBase t, Py_buffer* buf) noexcept:
    cdef Py_ssize_t* dims = <Py_ssize_t*>buf.internal
    if dims == NULL:
        return
    if dims[1]:
        t._vc.version += 1
    Py_XDECREF(<PyObject*>dims[0])
    free(dims)
    buf.internal = NULL


# -- __cuda_array_interface__ (version 3) ---------------------------------------------------------

cdef dict _cuda_array_interface(TensorBase t):
    """The CUDA array interface of a CUDA tensor (AttributeError on other devices, so that
    hasattr() says False, as in PyTorch)."""
    cdef int i, itemsize = t._dtype.itemsize
    if t._storage.device.kind != DEVICE_CUDA:
        raise AttributeError(f"Can't get __cuda_array_interface__ on non-CUDA tensor type: "
                             f"tensorlib.{t._dtype.legacy_name} If CUDA data is required use "
                             f"tensor.cuda() to copy tensor to device memory.")
    if _req(t):
        raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad. "
                           "If gradients aren't required, use var.detach() to get Variable "
                           "that doesn't require grad.")
    if t._dtype.code == DT_BFLOAT16:
        raise TypeError("dtype bfloat16 is not supported by __cuda_array_interface__")
    from tensorlib import cuda
    stream = cuda.current_stream(t._storage.device.index)
    native = stream._native
    # the stream the data is ready on: the legacy default stream is 1, others their handle
    handle = 1 if stream._id == 0 else int(getattr(native, "handle", id(native)))
    return {
        "version": 3,
        "shape": tuple([t._shape[i] for i in range(t._ndim)]),
        "typestr": cnp.PyArray_DescrFromType(_NP_TYPENUM[t._dtype.code]).str,
        "data": (<size_t>tensor_data(t) if t._numel else 0, False),
        "strides": None if t._contiguous else tuple([t._strides[i] * itemsize
                                                     for i in range(t._ndim)]),
        "stream": handle,
    }


cdef TensorBase _from_cuda_array_interface(object obj):
    """A tensor on the device memory ``obj`` describes (no copy): the memory must lie in a
    CUDA device of tensorlib's runtime; ``obj`` is kept alive by the storage."""
    cai = obj.__cuda_array_interface__
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int i, nd
    cdef int64_t span = 0, n = 1
    if cai.get("version", 0) > 3:
        raise BufferError(f"__cuda_array_interface__ version {cai.get('version')} is newer "
                          f"than 3, the one tensorlib reads")
    shape = tuple(cai["shape"])
    nd = len(shape)
    if nd > MAX_DIMS:
        raise ValueError(f"__cuda_array_interface__: {nd} dims (at most {MAX_DIMS})")
    ptr, read_only = cai["data"]
    if read_only:
        raise BufferError("__cuda_array_interface__: the producer's memory is read-only and "
                          "tensorlib tensors are writable")
    npd = np.dtype(cai["typestr"])
    dt = _dtype_mod.from_numpy_dtype(npd) if npd.isnative else None
    if dt is None:
        raise TypeError(f"__cuda_array_interface__: unsupported typestr {cai['typestr']!r}")
    strides = cai.get("strides")
    for i in range(nd):
        sh[i] = shape[i]
        n *= sh[i]
    if strides is None:
        st_ = 1
        for i in range(nd - 1, -1, -1):
            st[i] = st_
            st_ *= sh[i]
    else:
        for i in range(nd):
            if strides[i] % npd.itemsize or strides[i] < 0:
                raise BufferError(f"__cuda_array_interface__: stride {strides[i]} is not a "
                                  f"non-negative multiple of the item size {npd.itemsize}")
            st[i] = strides[i] // npd.itemsize
    index = None
    if n:
        from tensorlib.cuda import _runtime
        index = _runtime.get_runtime().device_of(ptr) if ptr else None
        if index is None:
            raise BufferError(f"__cuda_array_interface__: address 0x{ptr:x} is not in the "
                              f"memory of a tensorlib CUDA device")
        for i in range(nd):
            span += (sh[i] - 1) * st[i]
        span += 1
    if index is None:
        from tensorlib.cuda import current_device
        index = current_device()
    stream = cai.get("stream")
    if stream is not None and stream != 1:
        from tensorlib import cuda
        cuda.synchronize(index)     # another stream's producer: its work first
    t = _alloc_object()
    _set_geometry(t, nd, sh, st)
    t._storage = borrow_storage(<char*><size_t>ptr, span * npd.itemsize, obj,
                                as_device(f"cuda:{index}"))
    t._dtype = dt
    t._vc = _new_vc()
    return t


# -- __array_interface__ --------------------------------------------------------------------------

cdef dict _array_interface(TensorBase t):
    """AttributeError where there is no interface, so that hasattr() says False and NumPy
    goes on to __array__, whose error is PyTorch's."""
    cdef int i, itemsize = t._dtype.itemsize
    if t._dtype.code == DT_BFLOAT16:
        raise AttributeError("a bfloat16 tensor has no __array_interface__ (NumPy has no "
                             "bfloat16)")
    if t._storage.device.kind != DEVICE_CPU:
        raise AttributeError(f"a {t._storage.device.type} tensor has no __array_interface__ "
                             f"(its memory is not on the host): use Tensor.cpu() first")
    return {
        "version": 3,
        "shape": tuple([t._shape[i] for i in range(t._ndim)]),
        "typestr": cnp.PyArray_DescrFromType(_NP_TYPENUM[t._dtype.code]).str,
        "data": (<size_t>tensor_data(t), False),
        "strides": None if t._contiguous else tuple([t._strides[i] * itemsize
                                                     for i in range(t._ndim)]),
    }
