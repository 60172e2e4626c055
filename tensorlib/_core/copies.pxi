# Ops that produce new memory from existing tensors: clone, copy_, fill_, to, cat, stack,
# flip, repeat, tile, roll, tril/triu. All copying ends in copy_cast (iterate.pyx); all writes
# into existing tensors go through prepare_write.
# (included into tensor.pyx)
import warnings


cdef TensorBase _empty_strided(tuple size, tuple stride, DType dt, Device dev):
    """A new tensor with the given geometry whose storage holds exactly its extent."""
    cdef int64_t lo, hi
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int i, n = len(size)
    cdef TensorBase t
    if len(stride) != n:
        raise RuntimeError(f"mismatch in length of strides and shape: {list(size)} vs {list(stride)}")
    for i in range(n):
        sh[i] = size[i]
        st[i] = stride[i]
        if st[i] < 0:
            raise RuntimeError(f"empty_strided: negative strides are not supported: {list(stride)}")
    _checked_nbytes(n, sh, dt.itemsize)
    extent(n, sh, st, &lo, &hi)
    hi += 1                    # elements spanned (0 for an empty tensor)
    t = _alloc_object()
    _set_geometry(t, n, sh, st)
    t._storage = new_storage(_checked_nbytes(1, &hi, dt.itemsize), dev)
    t._dtype = dt
    t._vc = _new_vc()
    return t


cdef bint _keeps_layout(int ndim, const int64_t* shape, const int64_t* strides):
    """PyTorch's non-overlapping-and-dense test for preserve_format: the dims of size >= 2,
    taken by increasing stride, tile memory exactly (size-1 dims never disqualify; an empty
    tensor always keeps its strides)."""
    cdef int64_t order[MAX_DIMS]
    cdef int i, j, n = 0
    cdef int64_t need = 1, k
    for i in range(ndim):
        if shape[i] == 0:
            return True
    for i in range(ndim):
        if shape[i] >= 2:
            # insertion by increasing stride
            j = n
            while j > 0 and strides[order[j - 1]] > strides[i]:
                order[j] = order[j - 1]
                j -= 1
            order[j] = i
            n += 1
    for j in range(n):
        k = order[j]
        if strides[k] != need:
            return False
        need *= shape[k]
    return True


cdef int _swap_order(const int64_t* shape, const int64_t* strides, int64_t a, int64_t b) noexcept:
    """Whether dim a (now inner) must go outside dim b: 1 yes, -1 no, 0 cannot tell."""
    if strides[a] == 0 or strides[b] == 0:
        return 0
    if strides[a] != strides[b]:
        return 1 if strides[a] > strides[b] else -1
    return 1 if shape[a] > shape[b] else 0


cdef void _dense_strides_like(int ndim, const int64_t* shape, const int64_t* strides,
                              int64_t* out) noexcept:
    """Contiguous strides laid out in ``strides``' memory order (PyTorch's inference for a
    non-dense input): dims sorted innermost first by stride with an insertion sort that
    leaves undecidable pairs (a 0 stride) in their original order."""
    cdef int64_t perm[MAX_DIMS]
    cdef int i, d0, d1
    cdef int64_t tmp, cur = 1
    cdef int c
    for i in range(ndim):
        perm[i] = ndim - 1 - i
    for i in range(1, ndim):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = _swap_order(shape, strides, perm[d0], perm[d1])
            if c > 0:
                tmp = perm[d0]
                perm[d0] = perm[d1]
                perm[d1] = tmp
                d1 = d0
            elif c < 0:
                break
    for i in range(ndim):
        out[perm[i]] = cur
        cur *= shape[perm[i]]


cdef TensorBase _empty_preserving(TensorBase like, DType dt, Device dev=None):
    """Uninitialized tensor like ``like`` in PyTorch's preserve_format: the very same strides
    when ``like`` is non-overlapping and dense (size-1 dims included), else contiguous strides
    in ``like``'s memory order; on ``dev`` (default: ``like``'s device)."""
    cdef TensorBase t
    cdef int64_t st[MAX_DIMS]
    if dt is None:
        dt = like._dtype
    if _keeps_layout(like._ndim, like._shape, like._strides):
        memcpy(st, like._strides, like._ndim * sizeof(int64_t))
    else:
        _dense_strides_like(like._ndim, like._shape, like._strides, st)
    t = _alloc_object()
    _set_geometry(t, like._ndim, like._shape, st)
    t._storage = new_storage(_checked_nbytes(like._ndim, like._shape, dt.itemsize),
                             like._storage.device if dev is None else dev)
    t._dtype = dt
    t._vc = _new_vc()
    return t


cdef TensorBase _clone(TensorBase t, object memory_format=None, DType dt=None):
    cdef TensorBase out
    if memory_format is contiguous_format:
        out = _empty_like_shape(t, dt)
    else:
        out = _empty_preserving(t, dt)
    backend_of(t).copy(t._ndim, t._shape, tensor_data(out), out._strides, out._dtype.code,
                       tensor_data(t), t._strides, t._dtype.code)
    return out


cdef TensorBase _copy_(TensorBase self, object src, bint non_blocking=False):
    cdef TensorBase s
    if isinstance(src, (bool, int, float)):
        # PyTorch accepts a Python number (copied like a 0-d tensor of it)
        prepare_write(self, None)
        _fill_raw(self, src)
        return self
    s = _targ(src, "copy_", "src", 1)
    _check_write_overlap(self, s, True)     # (PyTorch's order: overlaps, then the shapes)
    _check_copy_shapes(self, s)
    prepare_inplace_write(self, True)
    if s._storage.device is not self._storage.device:
        _copy_across(self, s)             # copy_ moves data between devices
    else:
        _copy_into(self, s)
    return self


cdef union FillElement:
    uint8_t b
    int64_t i
    double d


cdef int _fill_element(TensorBase t, object value, FillElement* dst, int* dst_dt) except -1:
    """The one element a fill of t writes, from a number or a 0-d tensor: dst, of dtype
    dst_dt (bool, int64 or float64; the fill casts it). Checked as PyTorch checks a stored
    scalar (_check_scalar_fits). Returns 1 for a meta value: nothing to write."""
    cdef int64_t iv
    cdef double dv
    if isinstance(value, TensorBase):
        if (<TensorBase>value)._ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{(<TensorBase>value)._ndim} dimensions.")
        if not has_data(<TensorBase>value):
            return 1                 # a meta value: only a meta tensor can be filled with it
        value = _item(<TensorBase>value)
    if isinstance(value, (bool, np.bool_)):
        dst.b = bool(value)
        dst_dt[0] = DT_BOOL
    elif isinstance(value, (int, np.integer)):
        _check_scalar_fits(value, t._dtype, False, True)
        if _python_int(value, &iv):
            # a uint64 number: only a floating or bool dtype holds one (checked above)
            dst.d = value
            dst_dt[0] = DT_FLOAT64
        else:
            dst.i = iv
            dst_dt[0] = DT_INT64
    else:
        try:
            dv = value
        except TypeError:
            raise TypeError(f"fill_(): argument 'value' must be Number, not {type(value).__name__}") from None
        _check_scalar_fits(dv, t._dtype, True, True)
        dst.d = dv
        dst_dt[0] = DT_FLOAT64
    return 0


cdef int _fill_rounded(TensorBase t, object value) except -1:
    """Fill a floating t with a Python int or float rounded once to its dtype, with no range
    check: as PyTorch's x[i] = v, which makes the number a 0-d tensor of x's dtype first
    (float16/bfloat16 beyond range: inf; an int converts from int64 directly, not through a
    double). The caller has checked what PyTorch checks (the int64 range, float32's)."""
    cdef FillElement element
    if isinstance(value, int):
        element.i = value
        return backend_of(t).fill(t, <char*>&element, DT_INT64)
    element.d = value
    return backend_of(t).fill(t, <char*>&element, DT_FLOAT64)


cdef int _fill_raw(TensorBase t, object value) except -1:
    """Write a Python scalar (or a 0-d tensor's value) into every element (no version
    bump). Like PyTorch, a value the dtype cannot hold raises instead of wrapping."""
    cdef FillElement element
    cdef int element_dt
    if _fill_element(t, value, &element, &element_dt):
        return 0
    return backend_of(t).fill(t, <char*>&element, element_dt)


# What PyTorch accepts when it stores one Python scalar into an integer dtype. Integers must lie
# in [min, max], except that uint8 also takes negatives down to -255 (they wrap, as in C);
# floats must lie in [min, max] before truncation (so 127.9 does not fit int8), and NaN never
# fits. The float bounds are the integer bounds rounded to double, as PyTorch compares them
# (so 2.0**63 passes for int64 and converts to its minimum).
_INT_RANGE = {DT_UINT8: (0, 255), DT_INT8: (-128, 127), DT_INT16: (-32768, 32767),
              DT_INT32: (-2147483648, 2147483647),
              DT_INT64: (-9223372036854775808, 9223372036854775807)}
# the same integer bounds for C (uint8's low bound is the -255 it accepts)
cdef int64_t _INT_LO[NUM_DTYPES]
cdef int64_t _INT_HI[NUM_DTYPES]
for _code, (_lo, _hi) in _INT_RANGE.items():
    _INT_LO[_code] = -_hi if _code == DT_UINT8 else _lo
    _INT_HI[_code] = _hi
del _code, _lo, _hi
# C++ names of the dtypes in PyTorch's scalar overflow message
_C_TYPE_NAME = {DT_BOOL: "bool", DT_UINT8: "uint8_t", DT_INT8: "int8_t", DT_INT16: "int16_t",
                DT_INT32: "int", DT_INT64: "int64_t", DT_FLOAT16: "c10::Half",
                DT_BFLOAT16: "c10::BFloat16", DT_FLOAT32: "float", DT_FLOAT64: "double"}


cdef int _check_scalar_fits(object v, DType dt, bint is_float, bint check_float_dtype) except -1:
    """Raise PyTorch's RuntimeError (its words) when scalar ``v`` cannot be stored in ``dt``
    without overflow. ``check_float_dtype``: also range-check floating dtypes (fill_/full and
    the number arguments of ops do; the element stores of tensor(data) do not, and round to
    inf instead)."""
    cdef double f, fmax
    cdef int64_t iv
    cdef bint bad = False, is_uint64 = False
    cdef int code = dt.code
    if not is_float:
        is_uint64 = _python_int(v, &iv)     # (an int wider than a uint64 raises)
    if code == DT_BOOL or code == DT_FLOAT64:
        return 0
    if dt.is_floating_point:
        if check_float_dtype:
            # finite values beyond the dtype's largest overflow (inf and NaN are stored as is)
            fmax = (65504.0 if code == DT_FLOAT16 else 3.3895313892515355e38
                    if code == DT_BFLOAT16 else 3.4028234663852886e38)
            f = v
            bad = c_isfinite(f) and (f > fmax or f < -fmax)
    elif is_float:
        f = v                           # (NaN fails both; uint8 takes no negative float)
        bad = not (f >= <double>(0 if code == DT_UINT8 else _INT_LO[code]) and
                   f <= <double>_INT_HI[code])
    else:
        bad = is_uint64 or iv > _INT_HI[code] or iv < _INT_LO[code]
    if bad:
        raise RuntimeError(f"value cannot be converted to type {_C_TYPE_NAME[code]} without "
                           f"overflow")
    return 0


cdef TensorBase _fill_(TensorBase self, object value):
    cdef FillElement element
    cdef int element_dt
    if isinstance(value, TensorBase):
        prepare_write(self, None)       # a 0-d value: read before the first write
        _fill_raw(self, value)
        return self
    # a value the dtype cannot hold raises before the write counts (PyTorch's version
    # counter does not move)
    _fill_element(self, value, &element, &element_dt)
    prepare_fill(self)
    backend_of(self).fill(self, <char*>&element, element_dt)
    return self


cdef TensorBase _zero_(TensorBase self):
    cdef uint8_t zero = 0
    prepare_fill(self)
    backend_of(self).fill(self, <char*>&zero, DT_BOOL)
    return self


cdef TensorBase _to_dtype(TensorBase t, DType dt, bint copy):
    if dt is t._dtype and not copy:
        return t
    return _clone(t, None, dt)


cdef object _convert(TensorBase t, DType dt, bint copy):
    """The user-facing dtype conversions (``to``, ``type``, ``float``, ...): self when nothing
    changes; otherwise a copy, recorded (ToCopyBackward0) when the result is floating point.
    An integer or bool result is never differentiable, as in PyTorch."""
    if dt is t._dtype and not copy:
        return t
    if dt.is_floating_point:
        return _call__to_copy(t, dt, None, False)
    return _clone(t, None, dt)


cdef object _legacy_type_to_dtype(object spec):
    """'torch.FloatTensor' / 'tensorlib.LongTensor' / a legacy class / a dtype -> dtype."""
    if isinstance(spec, str):
        name = spec.rsplit(".", 1)[-1]
        for d in _dtype_mod.DTYPES_BY_NAME.values():
            if (<DType>d).legacy_name == name:
                return d
        raise ValueError(f"invalid type: '{spec}'")
    legacy = getattr(spec, "_legacy_dtype", None)
    if legacy is not None:
        return legacy
    return as_dtype(spec)


cdef object _to(TensorBase t, tuple args, dict kwargs):
    """Parse Tensor.to's overloads: (dtype), (device, dtype), (tensor), keywords."""
    dt = kwargs.pop("dtype", None)
    dev = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    non_blocking = kwargs.pop("non_blocking", False)
    for name, v in (("copy", copy), ("non_blocking", non_blocking)):
        if v is not True and v is not False:        # bools only, as PyTorch's parser
            raise TypeError(f"to(): argument '{name}' must be bool, not {_tname(v)}")
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    rest = list(args)
    if rest and isinstance(rest[0], TensorBase):
        other = <TensorBase>rest.pop(0)
        dt, dev = other._dtype, other._storage.device
    elif rest and (isinstance(rest[0], (str, Device)) or rest[0] is None
                   or (isinstance(rest[0], int) and not isinstance(rest[0], bool))):
        dev = rest.pop(0)                        # an int is a device index, as in PyTorch
    if rest and not isinstance(rest[0], bool):
        dt = rest.pop(0)
    # trailing non_blocking, copy: bools only (to(dtype, dtype) is an error, as in PyTorch)
    if len(rest) > 2 or not all(isinstance(v, bool) for v in rest):
        raise TypeError(f"to() received an invalid combination of arguments - got "
                        f"({', '.join(_tname(a) for a in args)}): expected (device, dtype, "
                        f"non_blocking, copy), (dtype, non_blocking, copy) or (tensor, "
                        f"non_blocking, copy)")
    if len(rest) == 2:
        copy = rest[1]
    cdef DType target = t._dtype if dt is None else _dtarg(dt, "to", "dtype")
    cdef Device d = t._storage.device if dev is None else _devarg(dev)
    if d is not t._storage.device:
        return _to_device(t, d, target)
    return _convert(t, target, bool(copy))


cdef TensorBase _to_device(TensorBase t, Device dev, DType dt):
    """A copy of t on another device (strides as t's when t is dense, else contiguous),
    recorded as ToCopyBackward0 when it is differentiable."""
    if dt.is_floating_point:
        return _call__to_copy(t, dt, dev, False)
    return _copy_to_device(t, dt, dev)


cdef TensorBase _to_copy(TensorBase t, object dt, object dev):
    cdef DType d = t._dtype if dt is None else <DType>dt
    if dev is None or dev is t._storage.device:
        return _clone(t, None, d)
    return _copy_to_device(t, d, <Device>dev)


cdef TensorBase _copy_to_device(TensorBase t, DType dt, Device dev):
    cdef TensorBase out
    if t._contiguous or not is_non_overlapping_and_dense(t._ndim, t._shape, t._strides):
        out = empty_tensor(t._ndim, t._shape, dt, dev)
    else:
        out = _empty_strided(tuple(t.shape), t.stride(), dt, dev)
    _copy_across(out, t)
    return out


cdef int _resize_out(TensorBase out, int ndim, const int64_t* shape) except -1:
    """Give ``out`` the shape an op produces (PyTorch resizes out= tensors, warning when a
    non-empty one had another shape)."""
    cdef int i
    cdef int64_t need
    cdef bint same = out._ndim == ndim
    if same:
        for i in range(ndim):
            if out._shape[i] != shape[i]:
                same = False
                break
    if same:
        return 0
    if out._numel != 0:
        # stacklevel=1: Cython functions push no Python frames, so 1 is the caller
        warnings.warn(f"An output with one or more elements was resized since it had shape "
                      f"{list(out.shape)}, which does not match the required output shape "
                      f"{shape_str(ndim, shape)}. This behavior is deprecated.", UserWarning, stacklevel=1)
    need = _checked_nbytes(ndim, shape, out._dtype.itemsize)
    if need + out._offset * out._dtype.itemsize > out._storage._nbytes:
        out._storage = new_storage(need, out._storage.device)
        out._offset = 0
    _set_geometry(out, ndim, shape, NULL)
    return 0


cdef TensorBase _check_out(object out, DType result, str op):
    cdef TensorBase o = _targ(out, op, "out", 0)
    if not can_cast_codes(result.code, o._dtype.code):
        raise RuntimeError(f"result type {_TORCH_TYPE_NAME[result.code]} can't be cast to the "
                           f"desired output type {_TORCH_TYPE_NAME[o._dtype.code]}")
    return o


cdef bint _strides_like_channels_last(TensorBase t):
    """Whether a 4-D (5-D) tensor's strides read as channels-last (channels-last-3d), by the
    rule PyTorch's suggest_memory_format applies: walking C, then the spatial dims from the
    last, then N, each stride is at least the extent of the dims walked before it. Ambiguous
    layouts read as contiguous: a zero-size dim, a zero channel stride, or N's stride equal to
    C's (N x 1 x 1 x 1 tensors)."""
    cdef int order[5]
    cdef int i, d
    cdef int64_t floor = 0
    if (t._ndim != 4 and t._ndim != 5) or t._strides[1] == 0:
        return False
    order[0] = 1
    for i in range(1, t._ndim - 1):
        order[i] = t._ndim - i        # the spatial dims, the last first
    order[t._ndim - 1] = 0
    for i in range(t._ndim):
        d = order[i]
        if t._shape[d] == 0 or t._strides[d] < floor:
            return False
        if d == 0 and floor == t._strides[1]:
            return False
        floor = t._strides[d] * (t._shape[d] if t._shape[d] > 1 else 1)
    return True


cdef void channels_last_strides(int ndim, const int64_t* shape, int64_t* strides) noexcept:
    """PyTorch's channels_last strides for a 4-D shape (channels_last_3d for 5-D): dense with
    the channel dim innermost, then the spatial dims from the last, then N; a dim of size 0
    steps as one of size 1."""
    cdef int64_t acc
    cdef int i
    strides[1] = 1
    acc = shape[1] if shape[1] > 0 else 1
    for i in range(ndim - 1, 1, -1):
        strides[i] = acc
        acc *= shape[i] if shape[i] > 0 else 1
    strides[0] = acc


cdef TensorBase _cat(object tensors, int64_t dim, object out):
    if isinstance(tensors, TensorBase) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"cat(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{_tname(tensors)}")
    cdef list ts = []
    cdef TensorBase t, ref = None, o
    cdef int i, d, k
    cdef int64_t total = 0, pos = 0
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t cl_st[MAX_DIMS]
    cdef int rdt = -1
    if len(tensors) == 0:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for k, x in enumerate(tensors):
        t = _targ(x, "cat", "tensors", 1)
        if t._ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {k}) cannot be concatenated")
        rdt = t._dtype.code if rdt < 0 else promote_codes(rdt, t._dtype.code)
        # legacy behaviour: 1-D empty tensors are skipped whatever the other shapes
        if t._ndim == 1 and t._shape[0] == 0:
            continue
        ts.append((k, t))
        if ref is None:
            ref = t
    if ref is None:
        ref = _targ(tensors[0], "cat", "tensors", 1)
    # (only legacy empty tensors: PyTorch returns one without looking at dim)
    d = _wrap_dim(dim, ref._ndim) if ts else 0
    for k, t in ts:
        if t._ndim != ref._ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref._ndim} and {t._ndim}")
        for i in range(t._ndim):
            if i != d and t._shape[i] != ref._shape[i]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected "
                                   f"size {ref._shape[i]} but got size {t._shape[i]} for tensor number "
                                   f"{k} in the list. (shapes {[list(x.shape) for x in tensors]})")
        total += t._shape[d]
    memcpy(sh, ref._shape, ref._ndim * sizeof(int64_t))
    sh[d] = total
    if out is None:
        # PyTorch's cat keeps a channels-last layout when every input has one
        if all([_strides_like_channels_last(<TensorBase>x) for x in tensors]):
            o = empty_tensor(ref._ndim, sh, dtype_of(rdt), ref._storage.device)
            channels_last_strides(ref._ndim, sh, cl_st)
            _set_geometry(o, ref._ndim, sh, cl_st)
        else:
            o = empty_tensor(ref._ndim, sh, dtype_of(rdt), ref._storage.device)
    else:
        o = _check_out(out, dtype_of(rdt), "cat")
        for _, t in ts:
            if _overlap(o, t) != OVERLAP_NO:
                raise RuntimeError("unsupported operation: the input tensors cannot refer to any of "
                                   "the output memory locations. Found overlap in input tensor")
        _resize_out(o, ref._ndim, sh)
        prepare_write(o, None)
    for _, t in ts:
        _copy_into(_slice(o, d, pos, pos + t._shape[d], 1), t)
        pos += t._shape[d]
    return o


cdef TensorBase _stack(object tensors, int64_t dim, object out):
    if isinstance(tensors, TensorBase) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"stack(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{_tname(tensors)}")
    if len(tensors) == 0:
        raise RuntimeError("stack expects a non-empty TensorList")
    cdef TensorBase first = _targ(tensors[0], "stack", "tensors", 1), t
    cdef int d = _wrap_dim(dim, first._ndim + 1, False)
    for k, x in enumerate(tensors):
        t = _targ(x, "stack", "tensors", 1)
        if t.shape != first.shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(first.shape)} "
                               f"at entry 0 and {list(t.shape)} at entry {k}")
    if out is not None or d == first._ndim:
        return _cat([_unsqueeze(<TensorBase>x, d) for x in tensors], d, out)
    # PyTorch stacks as a cat along d and then splits d into (len(tensors), size): the layout
    # follows the inputs as they are, so a 4-d channels-last input stays so inside each
    # slice, and a 3-d one whose unsqueezed view would look channels-last gives a
    # contiguous result
    cdef TensorBase o = _cat(tensors, d, None)
    cdef int64_t sh[MAX_DIMS + 1]
    cdef int64_t st[MAX_DIMS + 1]
    cdef int i
    for i in range(o._ndim):
        sh[i + (i > d)] = o._shape[i]
    sh[d], sh[d + 1] = len(tensors), first._shape[d]
    # (the strides PyTorch's view gives, size-1 dims included; o stays a tensor of its own)
    _compute_view_strides(o, o._ndim + 1, sh, st)
    _set_geometry(o, o._ndim + 1, sh, st)
    return o


cdef TensorBase _flip(TensorBase t, object dims):
    """A copy with the order of elements reversed along dims (read through negative strides)."""
    cdef int64_t st[MAX_DIMS]
    cdef int64_t off = t._offset
    cdef TensorBase rev, out
    memcpy(st, t._strides, t._ndim * sizeof(int64_t))
    for d in _wrap_dims((dims,) if isinstance(dims, int) else dims, t._ndim, "flip"):
        if t._shape[d] > 0:
            off += (t._shape[d] - 1) * st[d]
        st[d] = -st[d]
    # an internal view with negative strides: never handed to the user
    rev = make_view(t, t._ndim, t._shape, st, off)
    out = _empty_preserving(t, None)        # PyTorch keeps a dense input's layout
    _copy_into(out, rev)
    return out


cdef TensorBase _repeat(TensorBase t, tuple repeats):
    cdef int n = len(repeats), lead = n - t._ndim, i
    if n < t._ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    for r in repeats:
        if r < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {r}: {list(repeats)}")
    padded_shape = [1] * lead + _shape_list(t)
    padded_strides = [0] * lead + _stride_list(t)
    out_shape = tuple([repeats[i] * padded_shape[i] for i in range(n)])
    for v in out_shape:
        if v > INT64_MAX:
            raise RuntimeError(f"repeat: the result's shape {list(out_shape)} overflows int64")
    cdef TensorBase out = _new_empty(out_shape, t._dtype, t._storage.device)
    if out._numel == 0:
        return out
    # read the input as [r0, s0, r1, s1, ...] with 0 strides along the repeat dims, and write
    # the output viewed the same way: one strided copy does the whole thing.
    src = _view_of(t, [v for i in range(n) for v in (repeats[i], padded_shape[i])],
                   [v for i in range(n) for v in (0, padded_strides[i])], t._offset)
    dst = _view(out, tuple([v for i in range(n) for v in (repeats[i], padded_shape[i])]))
    _copy_into(dst, src)
    return out


cdef TensorBase _tile(TensorBase t, tuple dims):
    if len(dims) < t._ndim:
        dims = (1,) * (t._ndim - len(dims)) + dims
    return _repeat(t, dims)


cdef TensorBase _roll(TensorBase t, object shifts, object dims):
    cdef TensorBase src, out
    cdef int64_t n, s
    cdef int d
    shifts_t = _ilist(shifts, "roll", "shifts", 1)
    if dims is None or (isinstance(dims, (tuple, list)) and len(dims) == 0):
        if len(shifts_t) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts_t)}, dims:0")
        if t._ndim == 1:
            return _roll(t, shifts_t[0], 0)
        if t._numel == 0:
            return _clone(t, contiguous_format)       # (PyTorch rolls the flattened copy)
        out = _roll(_reshape(t, (-1,)), shifts_t[0], 0)
        _set_geometry(out, t._ndim, t._shape, NULL)      # a fresh contiguous result: reshape it
        return out
    dims_t = _ilist(dims, "roll", "dims", 2)
    if len(shifts_t) != len(dims_t):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts_t)}, dims:{len(dims_t)}")
    src = t
    if t._numel == 0:
        for dim in dims_t:
            _wrap_dim(dim, t._ndim, False)
        return _clone(t)                 # PyTorch: an empty input keeps its layout
    for shift, dim in zip(shifts_t, dims_t):
        d = _wrap_dim(dim, t._ndim, False)
        n = t._shape[d]
        out = _empty_like_shape(t)
        s = shift % n if n > 0 else 0
        _copy_into(_slice(out, d, s, n, 1), _slice(src, d, 0, n - s, 1))
        _copy_into(_slice(out, d, 0, s, 1), _slice(src, d, n - s, n, 1))
        src = out
    return src if src is not t else _clone(t)


cdef int _tri_zero(TensorBase t, int64_t k, bint lower) except -1:
    """Zero the part above diagonal k (lower=True, tril) or below it (triu), row by row."""
    cdef int64_t rows, cols, i
    if t._ndim < 2:
        raise RuntimeError(f"{'tril' if lower else 'triu'}: input tensor must have at least 2 dimensions")
    rows = t._shape[t._ndim - 2]
    cols = t._shape[t._ndim - 1]
    cdef int rd = t._ndim - 2, cd = t._ndim - 1
    # clamp k so i + k + 1 cannot overflow (any |k| beyond the matrix means "all" or "none")
    k = min(max(k, -rows - 1), cols + 1)
    for i in range(rows):
        row = _select(t, rd, i)
        if lower:
            if i + k + 1 < cols:
                _fill_raw(_slice(row, row._ndim - 1, max(i + k + 1, 0), cols, 1), 0)
        else:
            if min(i + k, cols) > 0:
                _fill_raw(_slice(row, row._ndim - 1, 0, min(i + k, cols), 1), 0)
    return 0


cdef TensorBase _tril(TensorBase t, int64_t diagonal, bint lower, bint inplace):
    cdef TensorBase out
    if inplace:
        prepare_write(t, None)
        out = t
    else:
        out = _clone(t, contiguous_format)      # PyTorch's tril/triu return contiguous results
    _tri_zero(out, diagonal, lower)
    return out
