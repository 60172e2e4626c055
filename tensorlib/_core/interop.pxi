# NumPy interop and Python scalars: .numpy() and from_numpy share memory both ways; item(),
# tolist() and tensor(data) convert values.
# (included into tensor.pyx)
cimport numpy as cnp
from cpython.ref cimport Py_INCREF

cnp.import_array()

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
        warnings.warn("The given NumPy array is not writable, and PyTorch does not support "
                      "non-writable tensors. This means writing to this tensor will result in "
                      "undefined behavior.", UserWarning, stacklevel=1)
    t = _alloc_object()
    _set_geometry(t, nd, sh, st)
    t._storage = borrow_storage(<char*>cnp.PyArray_DATA(arr), (span + 1) * itemsize, arr, CPU)
    t._dtype = dt
    t._vc = _new_vc()
    return t


# -- tensor(data): nested sequences of Python/NumPy scalars --------------------------------------

cdef enum ValueKind:
    KIND_NONE = 0
    KIND_BOOL = 1
    KIND_INT = 2
    KIND_FLOAT = 3


cdef int _leaf_kind(object v) except -1:
    if isinstance(v, bool) or isinstance(v, np.bool_):
        return KIND_BOOL
    if isinstance(v, int) or isinstance(v, np.integer):
        return KIND_INT
    if isinstance(v, float) or isinstance(v, np.floating):
        return KIND_FLOAT
    if isinstance(v, TensorBase) and (<TensorBase>v)._ndim == 0:
        if (<TensorBase>v)._dtype.is_floating_point:
            return KIND_FLOAT
        return KIND_BOOL if (<TensorBase>v)._dtype.code == DT_BOOL else KIND_INT
    if isinstance(v, complex):
        raise TypeError("complex values are not supported (complex dtypes are out of scope)")
    raise TypeError(f"new(): invalid data type '{type(v).__name__}'")


cdef bint _is_seq(object v):
    if isinstance(v, (str, bytes)):
        return False
    if isinstance(v, TensorBase):
        return (<TensorBase>v)._ndim > 0
    if isinstance(v, np.ndarray):
        return (<cnp.ndarray>v).ndim > 0
    return isinstance(v, (list, tuple)) or (hasattr(v, "__len__") and hasattr(v, "__getitem__"))


cdef int _scan(object obj, int depth, list shape, int kind) except -1:
    """Infer the shape (checking it is rectangular) and the widest value kind."""
    cdef Py_ssize_t n
    if not _is_seq(obj):
        if depth != len(shape):
            raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth} "
                             f"(got {type(obj).__name__})" if depth < len(shape) else
                             f"expected a number at dim {depth}")
        k = _leaf_kind(obj)
        return k if k > kind else kind
    n = len(obj)
    if depth == len(shape):
        if depth >= MAX_DIMS:
            raise ValueError(f"too many dimensions: more than {MAX_DIMS}")
        shape.append(n)
    elif depth > len(shape) or shape[depth] != n:
        raise ValueError(f"expected sequence of length {shape[depth] if depth < len(shape) else 0} "
                         f"at dim {depth} (got {n})")
    for i in range(n):
        kind = _scan(obj[i], depth + 1, shape, kind)
    if n == 0 and depth + 1 < len(shape):
        raise ValueError(f"expected sequence of length {shape[depth + 1]} at dim {depth + 1} (got 0)")
    return kind


cdef int64_t _fill_values(object obj, char* buf, int64_t pos, int kind) except -1:
    """Write the leaves of obj in row-major order into buf (int64, double or uint8 slots)."""
    if _is_seq(obj):
        for v in obj:
            pos = _fill_values(v, buf, pos, kind)
        return pos
    if isinstance(obj, TensorBase):
        obj = _item(<TensorBase>obj)
    if kind == KIND_FLOAT:
        (<double*>buf)[pos] = float(obj)
    elif kind == KIND_INT:
        try:
            (<int64_t*>buf)[pos] = int(obj)
        except OverflowError:
            raise RuntimeError(f"Overflow when unpacking long: {obj} does not fit in int64") from None
    else:
        (<uint8_t*>buf)[pos] = bool(obj)
    return pos + 1


cdef TensorBase _tensor_from_data(object data, DType dt, Device dev, bint dtype_given):
    """tensor(data): always copies. Infers bool/int64/default-float from the values unless
    ``dtype_given``."""
    cdef TensorBase src, tmp
    cdef int64_t sh[MAX_DIMS]
    cdef int i
    if isinstance(data, TensorBase):
        src = <TensorBase>data
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
        return _clone(src, contiguous_format, dt if dtype_given else src._dtype)
    shape = []
    kind = _scan(data, 0, shape, KIND_NONE)
    for i in range(len(shape)):
        sh[i] = shape[i]
    if kind == KIND_NONE:            # only empty sequences: the default dtype
        kind = KIND_FLOAT
    tmp = empty_tensor(len(shape), sh,
                       dtype_of(DT_FLOAT64 if kind == KIND_FLOAT else DT_INT64 if kind == KIND_INT else DT_BOOL),
                       dev)
    _fill_values(data, tensor_data(tmp), 0, kind)
    if not dtype_given:
        dt = default_float_dtype() if kind == KIND_FLOAT else tmp._dtype
    elif kind == KIND_INT and not dt.is_floating_point and dt.code != DT_INT64 and dt.code != DT_BOOL:
        _check_int_range(tmp, dt)
    return _to_dtype(tmp, dt, False)


cdef int _check_int_range(TensorBase t, DType dt) except -1:
    lo, hi = _INT_RANGE[dt.code]
    cdef int64_t* p = <int64_t*>tensor_data(t)
    cdef int64_t i
    for i in range(t._numel):
        if p[i] < lo or p[i] > hi:
            raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow: {p[i]}")
    return 0
