# Basic indexing: ints, negative ints, slices with positive steps, None, Ellipsis and bools.
# Every basic index is a view; assignment writes through that view.
# (included into tensor.pyx)


cdef object _getitem(TensorBase t, object index):
    # fast paths for the two most common forms
    if type(index) is int and t._ndim > 0:
        return _select_index(t, 0, 0, index)
    if type(index) is slice and t._ndim > 0:
        s = <slice>index
        return _slice(t, 0, s.start, s.stop, s.step)
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


cdef TensorBase _select_index(TensorBase r, int dim, int orig_dim, object i):
    """r.select(dim, i) for an integer index; errors name the dim of the indexed tensor."""
    cdef int64_t n = r._shape[dim]
    i = i.__index__()
    if i < -n or i >= n:
        raise IndexError(f"index {i} is out of bounds for dimension {orig_dim} with size {n}")
    return _select(r, dim, i)


cdef TensorBase _basic_index(TensorBase t, tuple index):
    cdef int consumed = 0, dim = 0, ell = 0, orig = 0
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
    if t._ndim == 0 and consumed > 0:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    if consumed > t._ndim:
        raise IndexError(f"too many indices for tensor of dimension {t._ndim}")
    # dim: position in the result being built; orig: the dim of t the next index applies to
    for x in index:
        if x is Ellipsis:
            dim += t._ndim - consumed
            orig += t._ndim - consumed
        elif x is None:
            r = _unsqueeze(r, dim)
            dim += 1
        elif isinstance(x, bool):
            # x[True] adds a dim of size 1; x[False] adds a dim of size 0
            r = _unsqueeze(r, dim)
            if not x:
                r = _slice(r, dim, 0, 0, None)
            dim += 1
        elif type(x) is slice:
            r = _slice(r, dim, x.start, x.stop, x.step)
            dim += 1
            orig += 1
        else:
            r = _select_index(r, dim, orig, x)
            orig += 1
    if r is t:
        # x[()], x[...]: still a new view (x[...] is not x), as in PyTorch
        r = make_view(t, t._ndim, t._shape, t._strides, t._offset)
    return r


cdef TensorBase _strip_leading_ones(TensorBase v, int ndim):
    """The value of x[i] = v without leading size-1 dims beyond ndim (PyTorch and NumPy both
    accept x[:] = ones(1, 1, 3) for a 1-d destination)."""
    cdef int k = 0
    while v._ndim - k > ndim and v._shape[k] == 1:
        k += 1
    if k == 0:
        return v
    return make_view(v, v._ndim - k, v._shape + k, v._strides + k, v._offset)


cdef int _setitem(TensorBase t, object index, object value) except -1:
    cdef TensorBase dst = _getitem(t, index)
    if isinstance(value, TensorBase):
        value = _strip_leading_ones(<TensorBase>value, dst._ndim)
        # PyTorch expands the value to the destination's shape before copying, so only a value
        # with as many elements as the destination can partially overlap it; a broadcast one
        # is read through a temporary by _copy_into (x[:] = x[0] is well defined)
        _check_copy_shapes(dst, <TensorBase>value)
        prepare_write(dst, <TensorBase>value if (<TensorBase>value)._numel == dst._numel else None)
        _copy_into(dst, <TensorBase>value)
    elif isinstance(value, (bool, int, float)) or isinstance(value, np.generic):
        prepare_write(dst, None)
        _fill_raw(dst, value)
    else:
        src = _strip_leading_ones(_tensor_from_data(value, dst._dtype, dst._storage.device, True),
                                  dst._ndim)
        _check_copy_shapes(dst, src)
        prepare_write(dst, src)
        _copy_into(dst, src)
    return 0
