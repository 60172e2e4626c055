# NumPy interop and Python scalars: .numpy() and from_numpy share memory both ways; item(),
# tolist() and tensor(data) convert values.
# (included into tensor.pyx)
cimport numpy as cnp
from cpython.ref cimport Py_INCREF

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


cdef object _numpy_copy(TensorBase t):
    """Values as a NumPy array (bfloat16 widened to float32) for tolist/pickling."""
    if t._dtype.code == DT_BFLOAT16:
        t = _clone(t, None, dtype_of(DT_FLOAT32))
    return _numpy_view(t, True)


cdef object _item(TensorBase t):
    """The first element as a Python scalar (callers check numel)."""
    needs_data(t, "item")
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
    tmp = empty_tensor(len(shape), sh, dtype_of(buf_code), dev)
    if has_data(tmp):
        _fill_values(data, tensor_data(tmp), 0, buf_code, dt, 0, len(shape))
    else:
        # the values are still checked (range, types) as on the CPU, in host scratch memory
        scratch = empty_tensor(len(shape), sh, dtype_of(buf_code), CPU)
        _fill_values(data, tensor_data(scratch), 0, buf_code, dt, 0, len(shape))
    return _to_dtype(tmp, dt, False)
