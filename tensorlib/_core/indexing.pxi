# Basic indexing: ints, negative ints, slices with positive steps, None, Ellipsis and bools.
# Every basic index is a view; assignment writes through that view.
# (included into tensor.pyx)


cdef object _getitem(TensorBase t, object index):
    # fast paths for the two most common forms
    if type(index) is int:
        return _select(t, 0, index)
    if type(index) is slice and t._ndim > 0:
        s = <slice>index
        return _slice(t, 0, s.start, s.stop, 1 if s.step is None else _iarg(s.step, "slice", "step", 3))
    return _basic_index(t, index if type(index) is tuple else (index,))


cdef bint _is_int_index(object x):
    if isinstance(x, bool):
        return False
    if isinstance(x, int):
        return True
    if isinstance(x, TensorBase):
        return (<TensorBase>x)._ndim == 0 and not (<TensorBase>x)._dtype.is_floating_point \
            and (<TensorBase>x)._dtype.code != DT_BOOL
    return hasattr(x, "__index__") and not isinstance(x, (list, tuple, np.ndarray))


cdef TensorBase _basic_index(TensorBase t, tuple index):
    cdef int consumed = 0, dim = 0, ell = 0
    cdef TensorBase r = t
    for x in index:
        if x is Ellipsis:
            ell += 1
        elif x is None or isinstance(x, bool):
            pass
        elif type(x) is slice or _is_int_index(x):
            consumed += 1
        else:
            raise IndexError(
                f"only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                f"are valid indices (got {type(x).__name__}); indexing with tensors and lists "
                f"(advanced indexing) is not available yet")
    if ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > t._ndim:
        raise IndexError(f"too many indices for tensor of dimension {t._ndim}")
    for x in index:
        if x is Ellipsis:
            dim += t._ndim - consumed
        elif x is None:
            r = _unsqueeze(r, dim)
            dim += 1
        elif isinstance(x, bool):
            # x[True] adds a dim of size 1; x[False] adds a dim of size 0
            r = _unsqueeze(r, dim)
            if not x:
                r = _slice(r, dim, 0, 0, 1)
            dim += 1
        elif type(x) is slice:
            r = _slice(r, dim, x.start, x.stop, 1 if x.step is None else _iarg(x.step, "slice", "step", 3))
            dim += 1
        else:
            try:
                r = _select(r, dim, x.__index__())
            except IndexError:
                raise IndexError(f"index {x.__index__()} is out of bounds for dimension {dim} with "
                                 f"size {r._shape[dim]}") from None
    return r


cdef int _setitem(TensorBase t, object index, object value) except -1:
    cdef TensorBase dst = _getitem(t, index)
    if isinstance(value, TensorBase):
        prepare_write(dst, <TensorBase>value)
        _copy_into(dst, <TensorBase>value)
    elif isinstance(value, (bool, int, float)) or isinstance(value, np.generic):
        prepare_write(dst, None)
        _fill_raw(dst, value)
    else:
        src = _tensor_from_data(value, dst._dtype, dst._storage.device, True)
        prepare_write(dst, src)
        _copy_into(dst, src)
    return 0
