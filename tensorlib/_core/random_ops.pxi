# Random tensor ops: rand/randn/randint/randperm, the in-place fills (uniform_, normal_,
# random_, bernoulli_) and bernoulli/normal. Streams come from the counter-based Philox
# generator in random.pyx; every fill is a write and goes through prepare_write.
# Half types are drawn in float32 and rounded (stored as such, computed in float32).
# (included into random_ops.pyx, the random family's module)



cdef TensorBase _draw_target(TensorBase t, int want):
    """Where a fill of dtype code ``want`` writes: t itself when it is contiguous with that
    dtype, else a contiguous scratch tensor (from the allocator) copied into t afterwards."""
    if t._contiguous and t._dtype.code == want:
        return t
    return empty_tensor(t._ndim, t._shape, dtype_of(want), t._storage.device)


cdef TensorBase _deliver(TensorBase t, TensorBase drawn):
    if drawn is not t:
        _copy_into(t, drawn)
    return t


cdef int _real_code(TensorBase t, str op) except -1:
    if not t._dtype.is_floating_point:
        raise RuntimeError(f'"{op}" not implemented for \'{_TORCH_TYPE_NAME[t._dtype.code]}\'')
    return DT_FLOAT64 if t._dtype.code == DT_FLOAT64 else DT_FLOAT32


cdef TensorBase _uniform_(TensorBase t, double lo, double hi, object generator):
    cdef int code = _real_code(t, "check_uniform_bounds")
    prepare_write(t, None)
    cdef TensorBase d = _draw_target(t, code)
    backend_of(d).random(d, RAND_UNIFORM, generator, lo, hi, 0, 0)
    return _deliver(t, d)


cdef TensorBase _normal_(TensorBase t, double mean, double std, object generator):
    cdef int code = _real_code(t, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    prepare_write(t, None)
    cdef TensorBase d = _draw_target(t, code)
    backend_of(d).random(d, RAND_NORMAL, generator, mean, std, 0, 0)
    return _deliver(t, d)


cdef int64_t _int_high(DType dt) except? -1:
    """Exclusive upper bound of random_() with no bounds: 2**digits+1 for floats (every
    integer is exactly representable), the max + 1 for integers."""
    if dt.code == DT_FLOAT64:
        return (1 << 53) + 1
    if dt.code == DT_FLOAT32:
        return (1 << 24) + 1
    if dt.code == DT_FLOAT16:
        return (1 << 11) + 1
    if dt.code == DT_BFLOAT16:
        return (1 << 8) + 1
    if dt.code == DT_BOOL:
        return 2
    if dt.code == DT_INT64:
        return -1        # means 2**63
    return _INT_RANGE[dt.code][1] + 1


cdef TensorBase _random_(TensorBase t, object from_, object to, object generator):
    """Integers uniform on [from, to): random_() / random_(to) / random_(from, to)."""
    cdef int64_t lo, hi
    cdef uint64_t span
    if to is None and from_ is not None:
        from_, to = 0, from_               # random_(to)
    lo = 0 if from_ is None else _iarg(from_, "random_", "from", 1)
    if to is None:
        hi = _int_high(t._dtype)
        span = (<uint64_t>1 << 63) - <uint64_t>lo if hi == -1 else <uint64_t>(hi - lo)
    else:
        hi = _iarg(to, "random_", "to", 2)
        if hi <= lo:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}")
        span = <uint64_t>hi - <uint64_t>lo
    prepare_write(t, None)
    cdef TensorBase d = _draw_target(t, DT_INT64)
    backend_of(d).random(d, RAND_INT64, generator, 0, 0, lo, span)
    return _deliver(t, d)


cdef TensorBase _bernoulli_(TensorBase t, object p, object generator):
    cdef TensorBase u, pt, d
    cdef double* up
    cdef double* pp
    cdef uint8_t* out
    cdef int64_t i
    cdef double pv
    if not isinstance(p, TensorBase):
        pv = _farg(p, "bernoulli_", "p", 1)      # (a TypeError before anything is written)
        prepare_write(t, None)
        d = _draw_target(t, DT_BOOL)
        backend_of(d).random(d, RAND_BERNOULLI, generator, pv, 0, 0, 0)
        return _deliver(t, d)
    # per-element probabilities: draw u ~ U[0, 1) and keep u < p (on the host)
    if t._storage.device.type == "cuda" or (<TensorBase>p)._storage.device.type == "cuda":
        return _bernoulli_tensor_p_device(t, <TensorBase>p, generator)
    pt = _contiguous_copy(_expand(<TensorBase>p, tuple(t.shape)), dtype_of(DT_FLOAT64))
    pp = <double*>tensor_data(pt)
    for i in range(pt._numel if has_data(pt) else 0):
        if not (0 <= pp[i] <= 1):
            raise RuntimeError(f"bernoulli_: expected all probabilities to be in [0, 1], got {pp[i]}")
    u = empty_tensor(t._ndim, t._shape, dtype_of(DT_FLOAT64), t._storage.device)
    backend_of(u).random(u, RAND_UNIFORM, generator, 0.0, 1.0, 0, 0)
    prepare_write(t, None)
    d = empty_tensor(t._ndim, t._shape, dtype_of(DT_BOOL), t._storage.device)
    if has_data(u) and not has_data(pt):
        same_device(u, pt, "bernoulli_")
    up = <double*>tensor_data(u)
    out = <uint8_t*>tensor_data(d)
    for i in range(u._numel if has_data(u) else 0):
        out[i] = up[i] < pp[i]
    return _deliver(t, d)


cdef TensorBase _bernoulli_tensor_p_device(TensorBase t, TensorBase p, object generator):
    """bernoulli_ with per-element probabilities on a CUDA device: the CPU's draws (u ~ U[0, 1)
    in float64, the same generator blocks) and its test u < p, run by device kernels."""
    cdef TensorBase u, pt
    if p._storage.device is not t._storage.device:
        same_device(t, p, "bernoulli_")
    pt = _to_dtype(_expand(p, tuple(t.shape)), dtype_of(DT_FLOAT64), False)
    if bool(((pt >= 0) & (pt <= 1)).logical_not().any()):
        vals = pt.cpu().reshape(-1).tolist()
        bad = next(v for v in vals if not (0 <= v <= 1))
        raise RuntimeError(f"bernoulli_: expected all probabilities to be in [0, 1], got {bad}")
    u = empty_tensor(t._ndim, t._shape, dtype_of(DT_FLOAT64), t._storage.device)
    backend_of(u).random(u, RAND_UNIFORM, generator, 0.0, 1.0, 0, 0)
    prepare_write(t, None)
    return _deliver(t, <TensorBase>(u < pt))


cdef TensorBase _normal_tensor_device(object mean, object std, object generator,
                                      TensorBase ref):
    """normal with tensor mean and/or std on a CUDA device: the CPU's float64 standard normal
    draws, then mean + std * z in float64 by device kernels (each rounded as the CPU's loop
    rounds), cast to the tensor's dtype."""
    cdef Device dev = ref._storage.device
    cdef DType f64 = dtype_of(DT_FLOAT64)
    cdef TensorBase z
    tens = [x for x in (mean, std) if isinstance(x, TensorBase)]
    for x in tens:
        if (<TensorBase>x)._storage.device is not dev:
            same_device(ref, <TensorBase>x, "normal")
    z = _new_empty(_broadcast_shape_of(tens), f64, dev)
    backend_of(z).random(z, RAND_NORMAL, generator, 0.0, 1.0, 0, 0)
    m = _to_dtype(<TensorBase>mean, f64, False) if isinstance(mean, TensorBase) else float(mean)
    s = _to_dtype(<TensorBase>std, f64, False) if isinstance(std, TensorBase) else float(std)
    if bool((s < 0).any()) if isinstance(s, TensorBase) else s < 0:
        raise RuntimeError("normal expects all elements of std >= 0.0")
    return _to_dtype(<TensorBase>(m + s * z), ref._dtype, False)


cdef DType _float_dtype_arg(object dt, str op):
    cdef DType d = default_float_dtype() if dt is None else <DType>dt
    if not d.is_floating_point:
        raise RuntimeError(f'"{op}" not implemented for \'{_TORCH_TYPE_NAME[d.code]}\'')
    return d


cdef TensorBase _rand(tuple size, object generator, object dt, object dev):
    return _uniform_(_new_empty(size, _float_dtype_arg(dt, "check_uniform_bounds"), _devarg(dev)),
                     0.0, 1.0, generator)


cdef TensorBase _randn(tuple size, object generator, object dt, object dev):
    return _normal_(_new_empty(size, _float_dtype_arg(dt, "normal_kernel_cpu"), _devarg(dev)),
                    0.0, 1.0, generator)


cdef TensorBase _randint(object low, object high, object size, object generator, object dt, object dev):
    """randint(high, size) or randint(low, high, size)."""
    if size is None:
        if high is None or not isinstance(high, (tuple, list)) and not isinstance(high, _size_type()):
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    cdef tuple shape = _ilist(size, "randint", "size", 3)
    cdef TensorBase t = _new_empty(shape, dtype_of(DT_INT64) if dt is None else <DType>dt, _devarg(dev))
    cdef int64_t lo = _iarg(low, "randint", "low", 1), hi = _iarg(high, "randint", "high", 2)
    if hi <= lo:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}")
    return _random_(t, lo, hi, generator)


cdef TensorBase _randperm(int64_t n, object generator, object dt, object dev):
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    cdef TensorBase t = _new_empty((n,), dtype_of(DT_INT64), _devarg(dev))
    backend_of(t).random(t, RAND_PERM, generator, 0, 0, 0, 0)
    return t if dt is None else _to_dtype(t, <DType>dt, False)


cdef TensorBase _bernoulli(TensorBase input, object p, object generator):
    cdef TensorBase out = _empty_preserving(input, None)
    return _bernoulli_(out, input if p is None else p, generator)


cdef TensorBase _normal(object mean, object std, object size, object generator, object dt, object dev):
    """normal(mean, std[, size]): scalars with a size, or tensors broadcast against each other."""
    cdef TensorBase z, m, s
    cdef double* zp
    cdef double* mp
    cdef double* sp
    cdef int64_t i
    if not isinstance(mean, TensorBase) and not isinstance(std, TensorBase):
        if size is None:
            raise TypeError("normal() with scalar mean and std needs a size")
        return _normal_(_new_empty(_ilist(size, "normal", "size", 3),
                                   _float_dtype_arg(dt, "normal_kernel_cpu"), _devarg(dev)),
                        float(mean), float(std), generator)
    ref = mean if isinstance(mean, TensorBase) else std
    if (<TensorBase>ref)._storage.device.type == "cuda":
        return _normal_tensor_device(mean, std, generator, <TensorBase>ref)
    out_dt = (<TensorBase>ref)._dtype
    shape = _broadcast_shape_of([x for x in (mean, std) if isinstance(x, TensorBase)])
    m = _contiguous_copy(_expand(mean if isinstance(mean, TensorBase) else _full((), mean, dtype_of(DT_FLOAT64), None), shape), dtype_of(DT_FLOAT64))
    s = _contiguous_copy(_expand(std if isinstance(std, TensorBase) else _full((), std, dtype_of(DT_FLOAT64), None), shape), dtype_of(DT_FLOAT64))
    z = _new_empty(shape, dtype_of(DT_FLOAT64), m._storage.device)
    backend_of(z).random(z, RAND_NORMAL, generator, 0.0, 1.0, 0, 0)
    if has_data(m) != has_data(s):
        same_device(m, s, "normal")
    zp = <double*>tensor_data(z)
    mp = <double*>tensor_data(m)
    sp = <double*>tensor_data(s)
    for i in range(z._numel if has_data(z) else 0):
        if sp[i] < 0:
            raise RuntimeError(f"normal expects all elements of std >= 0.0")
        zp[i] = mp[i] + sp[i] * zp[i]
    return _to_dtype(z, out_dt, False)
