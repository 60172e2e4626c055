# Creation ops: empty/zeros/ones/full and their *_like / new_* forms, arange, linspace,
# logspace, eye, meshgrid, tensor/as_tensor.
# (included into tensor.pyx)


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
    cdef uint8_t zero = 0
    backend_of(t).fill(t, <char*>&zero, DT_BOOL)
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
    cdef Device target = like._storage.device if dev is None else _devarg(dev)
    if memory_format is contiguous_format:
        return empty_tensor(like._ndim, like._shape, d, target)
    return _empty_preserving(like, d, target)


cdef bint _is_float_number(object v):
    if isinstance(v, TensorBase):
        return (<TensorBase>v)._dtype.is_floating_point
    return isinstance(v, float) or isinstance(v, np.floating)


cdef object _range_scalar(object v, str op, str name, int pos):
    """A range bound or step as a Python number (one-element tensors are unwrapped)."""
    if isinstance(v, TensorBase):
        if (<TensorBase>v)._numel != 1:
            raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be Number, not Tensor")
        return _item(<TensorBase>v)
    return v


cdef int64_t _trunc_to_int64(object v, DType d) except? -1:
    """A bound converted to an integer dtype's accumulator as PyTorch does: floats truncate
    toward zero; anything outside int64 raises."""
    cdef double f
    if _is_float_number(v):
        f = v
        if not (f >= -9223372036854775808.0 and f < 9223372036854775808.0):
            if not c_isfinite(f):
                raise RuntimeError(f"unsupported range: value {f:g} cannot be converted to {d.name}")
            raise RuntimeError(f"value cannot be converted to type int64 without overflow: {f:g}")
        return <int64_t>f
    try:
        return v
    except OverflowError:
        raise RuntimeError(f"value cannot be converted to type int64 without overflow: {v}") from None


cdef int64_t _checked_size(double size_d, str op) except -1:
    if not (size_d >= 0 and size_d < 9.2e18):
        raise RuntimeError(f"{op}: invalid size {size_d:g}, possible overflow?")
    return <int64_t>size_d


cdef Device _host_side(Device dev):
    """Where a creation function that writes its values from the host builds them: the CPU
    for a CUDA device (the host cannot write device memory; the result is copied over)."""
    return CPU if dev.kind == DEVICE_CUDA else dev


cdef TensorBase _onto(TensorBase t, Device dev):
    return t if t._storage.device is dev else _copy_to_device(t, t._dtype, dev)


cdef TensorBase _arange(object start, object end, object step, object dt, object dev, object out):
    """PyTorch's arange: float dtypes compute ``start + i * step`` in double; integer dtypes
    truncate the bounds and step to int64 first (int64 sizes itself exactly from those,
    the narrower integer dtypes from the untruncated values, as PyTorch does)."""
    cdef DType d
    cdef double fs, fe, fst
    cdef int64_t n, i, xs, xe, xst
    cdef TensorBase t
    cdef int64_t* ip
    cdef double* dp
    if end is None:
        start, end = 0, start
    start = _range_scalar(start, "arange", "start", 1)
    end = _range_scalar(end, "arange", "end", 2)
    step = _range_scalar(step, "arange", "step", 3)
    if dt is None:
        use_float = _is_float_number(start) or _is_float_number(end) or _is_float_number(step)
        d = default_float_dtype() if use_float else dtype_of(DT_INT64)
    else:
        d = <DType>dt
    if d.code == DT_BOOL:
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
    cdef Device target = _devarg(dev)
    if d.is_floating_point:
        fs = float(start)
        fe = float(end)
        fst = float(step)
        if fst == 0:
            raise RuntimeError("step must be nonzero")
        if not (c_isfinite(fs) and c_isfinite(fe)):
            raise RuntimeError(f"unsupported range: {fs:g} -> {fe:g}")
        if (fst > 0 and fe < fs) or (fst < 0 and fe > fs):
            raise RuntimeError("upper bound and lower bound inconsistent with step sign")
        n = _checked_size(c_ceil((fe - fs) / fst), "arange")
        t = _new_empty((n,), dtype_of(DT_FLOAT64), _host_side(target))
        dp = <double*>tensor_data(t)
        for i in range(n if has_data(t) else 0):
            dp[i] = fs + i * fst
    else:
        xs = _trunc_to_int64(start, d)
        xe = _trunc_to_int64(end, d)
        xst = _trunc_to_int64(step, d)
        if xst == 0:
            raise RuntimeError("step must be nonzero")
        if (xst > 0 and xe < xs) or (xst < 0 and xe > xs):
            raise RuntimeError("upper bound and lower bound inconsistent with step sign")
        if d.code == DT_INT64:
            size = -((<object>xs - <object>xe) // <object>xst)    # exact ceil((xe - xs) / xst)
            if size > INT64_MAX:
                raise RuntimeError(f"arange: invalid size {size}, possible overflow?")
            n = size
        else:
            n = _checked_size(c_ceil((float(end) - float(start)) / float(step)), "arange")
        t = _new_empty((n,), dtype_of(DT_INT64), _host_side(target))
        ip = <int64_t*>tensor_data(t)
        for i in range(n if has_data(t) else 0):
            ip[i] = xs + i * xst                 # wraps (-fwrapv), then the cast wraps to d
    return _into_out(_onto(_to_dtype(t, d, False), target), out, "arange")


cdef TensorBase _linspace(object start, object end, int64_t steps, object dt, object dev, object out, double base, bint log):
    """Evaluated in double from both ends (first half up from start, second half down from
    end), so both endpoints are exact. Integer dtypes truncate the endpoints first, as
    PyTorch does."""
    cdef DType d = default_float_dtype() if dt is None else <DType>dt
    cdef double fs, fe, step
    cdef int64_t i, half
    cdef double* p
    start = _range_scalar(start, "logspace" if log else "linspace", "start", 1)
    end = _range_scalar(end, "logspace" if log else "linspace", "end", 2)
    if d.code == DT_BOOL:
        raise NotImplementedError(f"\"{'logspace' if log else 'linspace'}_cpu\" not implemented for 'Bool'")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if d.is_floating_point:
        fs = float(start)
        fe = float(end)
    else:
        fs = <double>_trunc_to_int64(start, d)
        fe = <double>_trunc_to_int64(end, d)
    cdef Device target = _devarg(dev)
    cdef TensorBase t = _new_empty((steps,), dtype_of(DT_FLOAT64), _host_side(target))
    p = <double*>tensor_data(t)
    if not has_data(t):
        pass                           # (meta: the shape and the dtype are the result)
    elif steps == 1:
        p[0] = fs
    elif steps > 1:
        step = (fe - fs) / (steps - 1)
        half = steps // 2
        for i in range(steps):
            p[i] = fs + step * i if i < half else fe - step * (steps - i - 1)
    if log and has_data(t):
        for i in range(steps):
            p[i] = c_pow(base, p[i])
    return _into_out(_onto(_to_dtype(t, d, False), target), out,
                     "logspace" if log else "linspace")


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
    """Grids as expanded views. ``xy`` is ``ij`` with the first two inputs swapped and the
    first two outputs swapped back, so output k varies along the dim input k would have in
    Cartesian (x across columns) order."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        # stacklevel=1: Cython functions push no Python frames, so 1 is the caller
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=1)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    ts = [_targ(x, "meshgrid", "tensors", 1) for x in tensors]
    if not ts:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in ts:
        if (<TensorBase>t)._ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t!r}")
        if (<TensorBase>t)._dtype is not (<TensorBase>ts[0])._dtype:
            raise RuntimeError(f"meshgrid expects all tensors to have the same dtype (got "
                               f"{(<TensorBase>ts[0])._dtype} and {(<TensorBase>t)._dtype})")
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    sizes = tuple([(<TensorBase>t)._numel for t in ts])
    n = len(ts)
    out = []
    # with an input that requires grad, through the recorded ops (ViewBackward0, ExpandBackward0)
    cdef bint rec = tl_grad_enabled and any([_req(t) for t in ts])
    for i, t in enumerate(ts):
        shape = [1] * n
        shape[i] = sizes[i]
        if rec:
            out.append(_GENERATED_METHODS["expand"](_GENERATED_METHODS["view"](t, *shape), *sizes))
        else:
            out.append(_expand(_view(<TensorBase>t, tuple(shape)), sizes))
    if swap:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


cdef TensorBase _as_tensor(object data, object dt, object dev):
    """Share memory when possible (a tensor or an ndarray of a supported dtype), else copy."""
    cdef TensorBase t
    # no device: the default one (set_default_device), as PyTorch's factories take it
    cdef Device d = _DEFAULT_DEVICE if dev is None else _devarg(dev)
    data = _foreign_memory(data)
    if isinstance(data, TensorBase):
        t = <TensorBase>data
    elif isinstance(data, np.ndarray) and _dtype_mod.from_numpy_dtype(data.dtype) is not None \
            and data.dtype.isnative and all(s >= 0 for s in data.strides):
        t = _borrow_numpy(<cnp.ndarray>data)
    else:
        t = None
    if t is not None:
        if d is not None and d is not t._storage.device:
            return _copy_to_device(t, t._dtype if dt is None else <DType>dt, d)
        return t if dt is None else _to_dtype(t, <DType>dt, False)
    return _tensor_from_data(data, default_float_dtype() if dt is None else <DType>dt, _devarg(dev), dt is not None)


cdef TensorBase _tensor_copy(object data, object dt, object dev, str name):
    """tensor(data) / Tensor.new_tensor(data): always a copy; from a tensor PyTorch warns
    that clone() says it better (and keeps autograd out of it)."""
    if isinstance(data, TensorBase):
        warnings.warn(f"To copy construct from a tensor, it is recommended to use "
                      f"sourceTensor.detach().clone() or sourceTensor.detach().clone()"
                      f".requires_grad_(True), rather than {name}(sourceTensor).",
                      UserWarning, stacklevel=1)
    return _tensor_from_data(data, default_float_dtype() if dt is None else <DType>dt,
                             _devarg(dev), dt is not None)

