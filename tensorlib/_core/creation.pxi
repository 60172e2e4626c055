# Creation ops: empty/zeros/ones/full and their *_like / new_* forms, arange, linspace,
# logspace, eye, meshgrid, tensor/as_tensor.
# (included into tensor.pyx)
from libc.math cimport ceil, pow as c_pow, isfinite


cdef TensorBase _new_empty(tuple shape, DType dt, Device dev):
    cdef int64_t sh[MAX_DIMS]
    cdef int i, n = len(shape)
    if n > MAX_DIMS:
        raise RuntimeError(f"tensors of more than {MAX_DIMS} dimensions are not supported (got {n})")
    for i in range(n):
        sh[i] = shape[i]
    return empty_tensor(n, sh, dt, dev)


cdef TensorBase _finish(TensorBase t, bint requires_grad):
    if requires_grad:
        _set_requires_grad(t, True)
    return t


cdef TensorBase _into_out(TensorBase result, object out, str op):
    """Deliver a freshly computed result into an out= tensor (resizing it as PyTorch does)."""
    cdef TensorBase o
    if out is None:
        return result
    o = _check_out(out, result._dtype, op)
    _resize_out(o, result._ndim, result._shape)
    prepare_write(o, None)
    _copy_into(o, result)
    return o


cdef TensorBase _empty(tuple size, object dt, object dev, object out):
    cdef DType d = default_float_dtype() if dt is None else <DType>dt
    cdef TensorBase o
    cdef int64_t sh[MAX_DIMS]
    cdef int i
    if out is not None:
        o = _targ(out, "empty", "out", 0)
        if len(size) > MAX_DIMS:
            raise RuntimeError(f"tensors of more than {MAX_DIMS} dimensions are not supported")
        for i in range(len(size)):
            sh[i] = size[i]
        _resize_out(o, len(size), sh)
        return o
    return _new_empty(size, d, _devarg(dev))


cdef TensorBase _zeros(tuple size, object dt, object dev):
    cdef TensorBase t = _new_empty(size, default_float_dtype() if dt is None else <DType>dt, _devarg(dev))
    memset(tensor_data(t), 0, t._numel * t._dtype.itemsize)
    return t


cdef TensorBase _full(tuple size, object value, object dt, object dev):
    cdef DType d
    if dt is None:
        if isinstance(value, TensorBase):
            d = (<TensorBase>value)._dtype
        elif isinstance(value, bool):
            d = dtype_of(DT_BOOL)
        elif isinstance(value, int):
            d = dtype_of(DT_INT64)
        else:
            d = default_float_dtype()
    else:
        d = <DType>dt
    cdef TensorBase t = _new_empty(size, d, _devarg(dev))
    _fill_raw(t, value)
    return t


cdef TensorBase _like(TensorBase like, object dt, object dev, object memory_format):
    cdef DType d = like._dtype if dt is None else <DType>dt
    if dev is not None:
        _devarg(dev)
    if memory_format is contiguous_format:
        return empty_tensor(like._ndim, like._shape, d, like._storage.device)
    return _empty_preserving(like, d)


cdef bint _is_float_number(object v):
    if isinstance(v, TensorBase):
        return (<TensorBase>v)._dtype.is_floating_point
    return isinstance(v, float) or isinstance(v, np.floating)


cdef TensorBase _arange(object start, object end, object step, object dt, object dev, object out):
    cdef DType d
    cdef double fs, fe, fst
    cdef int64_t n, i, is_, ist
    cdef TensorBase t
    if end is None:
        start, end = 0, start
    for v in (start, end, step):
        if isinstance(v, TensorBase) and (<TensorBase>v)._numel != 1:
            raise RuntimeError("arange: start, end and step must be scalars")
    use_float = _is_float_number(start) or _is_float_number(end) or _is_float_number(step)
    if dt is None:
        d = default_float_dtype() if use_float else dtype_of(DT_INT64)
    else:
        d = <DType>dt
    fs = float(start)
    fe = float(end)
    fst = float(step)
    if not (isfinite(fs) and isfinite(fe)):
        raise RuntimeError(f"unsupported range: {fs} -> {fe}")
    if fst == 0:
        raise RuntimeError("step must be nonzero")
    if (fst > 0 and fe < fs) or (fst < 0 and fe > fs):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if not use_float and not d.is_floating_point:
        # exact integer arithmetic: ceil((end - start) / step)
        is_, ist = int(start), int(step)
        span = int(end) - is_
        n = -((-span) // ist) if ist > 0 else -((span) // -ist)
    else:
        n = <int64_t>ceil((fe - fs) / fst)
    if n < 0:
        n = 0
    t = _new_empty((n,), dtype_of(DT_INT64) if (not use_float and not d.is_floating_point) else dtype_of(DT_FLOAT64), _devarg(dev))
    if t._dtype.code == DT_INT64:
        is_, ist = int(start), int(step)
        for i in range(n):
            (<int64_t*>tensor_data(t))[i] = is_ + i * ist
    else:
        for i in range(n):
            (<double*>tensor_data(t))[i] = fs + i * fst
    return _into_out(_to_dtype(t, d, False), out, "arange")


cdef TensorBase _linspace(object start, object end, int64_t steps, object dt, object dev, object out, double base, bint log):
    cdef DType d = default_float_dtype() if dt is None else <DType>dt
    cdef double fs = float(start), fe = float(end), step
    cdef int64_t i, half
    cdef double* p
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    cdef TensorBase t = _new_empty((steps,), dtype_of(DT_FLOAT64), _devarg(dev))
    p = <double*>tensor_data(t)
    if steps == 1:
        p[0] = fs
    elif steps > 1:
        # symmetric evaluation: the first half counts up from start, the second half down from
        # end, so both endpoints are exact
        step = (fe - fs) / (steps - 1)
        half = steps // 2
        for i in range(steps):
            p[i] = fs + step * i if i < half else fe - step * (steps - i - 1)
    if log:
        for i in range(steps):
            p[i] = c_pow(base, p[i])
    return _into_out(_to_dtype(t, d, False), out, "logspace" if log else "linspace")


cdef TensorBase _eye(int64_t n, object m, object dt, object dev, object out):
    cdef int64_t mm = n if m is None else m
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if mm < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {mm}")
    cdef TensorBase t = _zeros((n, mm), dt, dev)
    _fill_raw(_diagonal(t, 0, 0, 1), 1)
    return _into_out(t, out, "eye")


cdef tuple _meshgrid(tuple tensors, object indexing):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=1)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    ts = [_targ(x, "meshgrid", "tensors", 1) for x in tensors]
    for t in ts:
        if (<TensorBase>t)._ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t!r}")
    if not ts:
        return ()
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    sizes = tuple([(<TensorBase>t)._numel for t in ts])
    n = len(ts)
    out = []
    for i, t in enumerate(ts):
        shape = [1] * n
        shape[i] = sizes[i]
        out.append(_expand(_view(<TensorBase>t, tuple(shape)), sizes))
    if swap:
        out = [_transpose(<TensorBase>o, 0, 1) for o in out]
        out[0], out[1] = out[1], out[0]
    return tuple(out)


cdef TensorBase _as_tensor(object data, object dt, object dev):
    """Share memory when possible (a tensor or an ndarray of a supported dtype), else copy."""
    cdef TensorBase t
    if isinstance(data, TensorBase):
        t = <TensorBase>data
        return t if dt is None else _to_dtype(t, <DType>dt, False)
    if isinstance(data, np.ndarray) and _dtype_mod.from_numpy_dtype(data.dtype) is not None \
            and data.dtype.isnative and all(s >= 0 for s in data.strides):
        t = _borrow_numpy(<cnp.ndarray>data)
        return t if dt is None else _to_dtype(t, <DType>dt, False)
    return _tensor_from_data(data, default_float_dtype() if dt is None else <DType>dt, _devarg(dev), dt is not None)
