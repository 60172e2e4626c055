# Indexing entry points: x[index] and x[index] = value.
# Basic indices (ints, slices with positive steps, None, Ellipsis) give views and assignment
# writes through the view; integer tensors, lists, NumPy arrays, bools and masks follow
# PyTorch's advanced-indexing rules (advindex.pxi) and give copies.
# (included into tensor.pyx)


cdef extern from "Python.h":
    # the fields of a slice object, read directly (attribute lookups cost more than the view)
    ctypedef struct PySliceObject:
        PyObject* start
        PyObject* stop
        PyObject* step


cdef object _getitem(TensorBase t, object index):
    # fast paths for the two most common forms
    if type(index) is int and t._ndim > 0:
        return _select_index(t, 0, 0, index)
    if type(index) is slice and t._ndim > 0:
        return _slice(t, 0, <object>(<PySliceObject*>index).start,
                      <object>(<PySliceObject*>index).stop, <object>(<PySliceObject*>index).step)
    cdef tuple idx = index if type(index) is tuple else (index,)
    if _is_basic_only(idx):
        return _basic_index(t, idx)
    # tensors, lists, arrays, bools: advanced indexing (advindex.pxi)
    return _adv_getitem_fn(t, index)


cdef bint _is_basic_only(tuple index):
    """Only ints, slices, None and Ellipsis: the result is a view of one geometry."""
    for x in index:
        if type(x) is int or type(x) is slice or x is None or x is Ellipsis:
            continue
        if isinstance(x, bool) or not _is_int_index(x):
            return False
        if isinstance(x, TensorBase) and (<TensorBase>x)._dtype.code == DT_UINT8:
            return False        # a uint8 tensor is a (deprecated) mask, as in PyTorch
    return True


cdef bint _index_is_whole(tuple index, TensorBase t):
    """Whether ``t[index] = v`` writes into t itself and not into a view: PyTorch's subscript
    keeps t for Ellipsis and for a slice with start 0, step 1 and a stop at or past the dim's
    end (the start as given: ``t[-n:]`` is a view), so autograd records CopyBackwards on t
    rather than CopySlices."""
    cdef int nslices = 0, d = 0
    for x in index:
        if x is Ellipsis:
            continue
        if type(x) is not slice:
            return False
        nslices += 1
    if nslices > t._ndim:
        return False                    # (the subscript raises)
    for x in index:
        if x is Ellipsis:
            d += t._ndim - nslices
            continue
        # (past the last dim, see _entry_past_end, only a slice with no stop is whole)
        if not _slice_is_whole(x, t._shape[d] if d < t._ndim else INT64_MAX):
            return False
        d += 1
    return True


cdef bint _slice_is_whole(slice x, int64_t n):
    """Whether x takes all of a dim of size n in order: PyTorch's subscript then applies no
    view (start 0 as given, step 1, stop at or past the end). A bad bound is the
    subscript's error to raise, so it is not whole."""
    try:
        return (x.start is None or operator.index(x.start) == 0) and (
            x.step is None or operator.index(x.step) == 1) and (
            x.stop is None or operator.index(x.stop) >= n)
    except TypeError:
        return False


cdef bint _entry_past_end(int kind, object v, int dim, int nd, int pos) except -1:
    """For the pos-th entry of a subscript (of IndexKind kind, value v) falling at ``dim``
    past the last of the nd dims of the view so far: whether to skip it, or its IndexError.
    Only several ellipses get here: PyTorch lets each stand for all the dims the other
    entries leave (``x[..., 0, ...]`` is ``x[..., 0]``), so a later entry can fall past the
    end. There None and a bool still add a dim at the end, ints and index tensors raise
    PyTorch's IndexError, and so does a slice, unless it is ``:`` (from 0, step 1, no stop),
    which is skipped. PyTorch skips a slice that takes a whole dim, and past the last one
    compares the stop with a size it reads beyond the tensor's sizes (stale memory, often
    a stride): ``:`` is skipped there whatever that reads, a bounded stop only sometimes,
    and we raise for it."""
    if kind == IK_NONE or kind == IK_BOOL:
        if dim == nd:
            return False
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-nd - 1}, {nd}], but got {dim})")
    if kind == IK_SLICE:
        if (<slice>v).step is not None:
            _slice_step((<slice>v).step)    # (PyTorch checks the step first, as in range)
        if _slice_is_whole(v, INT64_MAX):
            return True
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(nd, 1)}, {max(nd, 1) - 1}], but got {dim})")
    if kind == IK_INT:
        raise IndexError(f"index {v} is out of bounds for dimension {pos} with size 0")
    raise IndexError(f"too many indices for tensor of dimension {nd} (got {dim + 1})")


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
    """Apply the entries left to right (as PyTorch's successive select/slice/unsqueeze would,
    with its errors) to a local copy of the geometry, then make ONE view: no
    intermediate tensors. Always a new view, even for x[()] and x[...] (as in PyTorch)."""
    cdef int consumed = 0, dim = 0, nd = t._ndim
    cdef bint skip
    cdef int pos = 0        # PyTorch's out-of-bounds error names the entry's position
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int64_t off = t._offset, idx
    for x in index:
        if type(x) is int or type(x) is slice:
            consumed += 1
        elif x is Ellipsis or x is None or isinstance(x, bool):
            pass
        elif _is_int_index(x):
            consumed += 1
        else:
            raise IndexError(
                f"only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                f"are valid indices (got {type(x).__name__}); indexing with tensors and lists "
                f"(advanced indexing) is not available yet")
    if t._ndim == 0 and consumed > 0:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    if consumed > t._ndim:
        raise IndexError(f"too many indices for tensor of dimension {t._ndim}")
    memcpy(sh, t._shape, nd * sizeof(int64_t))
    memcpy(st, t._strides, nd * sizeof(int64_t))
    for x in index:
        if dim >= nd and x is not Ellipsis:       # (only after a second ellipsis)
            if x is None or isinstance(x, bool):
                skip = _entry_past_end(IK_NONE, x, dim, nd, pos)
            elif type(x) is slice:
                skip = _entry_past_end(IK_SLICE, x, dim, nd, pos)
            else:
                skip = _entry_past_end(IK_INT, x.__index__(), dim, nd, pos)
            if skip:
                dim += 1
                pos += 1
                continue
        if type(x) is slice:
            _slice_geometry(sh, st, &off, dim, <object>(<PySliceObject*>x).start,
                            <object>(<PySliceObject*>x).stop, <object>(<PySliceObject*>x).step)
            dim += 1
        elif x is Ellipsis:
            dim += t._ndim - consumed
        elif x is None or isinstance(x, bool):
            # None and True insert a dim of size 1 (unsqueeze); False one of size 0
            if nd + 1 > MAX_DIMS:
                raise RuntimeError(f"tensors of more than {MAX_DIMS} dimensions are not supported "
                                   f"(got {nd + 1})")
            memmove(sh + dim + 1, sh + dim, (nd - dim) * sizeof(int64_t))
            memmove(st + dim + 1, st + dim, (nd - dim) * sizeof(int64_t))
            st[dim] = st[dim + 1] * sh[dim + 1] if dim < nd else 1
            sh[dim] = 0 if x is False else 1
            nd += 1
            dim += 1
        else:
            # select: the dim disappears
            idx = x if type(x) is int else x.__index__()
            if idx < -sh[dim] or idx >= sh[dim]:
                raise IndexError(f"index {idx} is out of bounds for dimension {pos} with size {sh[dim]}")
            off += (idx + sh[dim] if idx < 0 else idx) * st[dim]
            memmove(sh + dim, sh + dim + 1, (nd - dim - 1) * sizeof(int64_t))
            memmove(st + dim, st + dim + 1, (nd - dim - 1) * sizeof(int64_t))
            nd -= 1
        pos += 1
    return make_view(t, nd, sh, st, off)


cdef TensorBase _strip_leading_ones(TensorBase v, int ndim):
    """The value of x[i] = v without leading size-1 dims beyond ndim (PyTorch and NumPy both
    accept x[:] = ones(1, 1, 3) for a 1-d destination)."""
    cdef int k = 0
    while v._ndim - k > ndim and v._shape[k] == 1:
        k += 1
    if k == 0:
        return v
    return make_view(v, v._ndim - k, v._shape + k, v._strides + k, v._offset)


cdef TensorBase _copy_to_operand(TensorBase dst, TensorBase v):
    """What PyTorch's x[i] = v hands to copy_, whose overlap check decides whether the write
    raises: v itself when it has dst's shape; nothing for a 0-d CPU v (a fill, read before
    the write); else v without all its leading size-1 dims, expanded to dst's shape (a new
    dim of size 1 gets the stride the next dim spans, a broadcast one 0; a v of size-1 dims
    only is a 0-d view, and gets 0s).
    Only a v sharing dst's storage needs it; a broadcast one overlaps as TOO_HARD and
    _copy_into reads it through a temporary (x[:] = x[0] is well defined)."""
    cdef int64_t strides[MAX_DIMS]
    cdef int k = 0, i, j
    if v._storage is not dst._storage:
        return None
    if v._ndim == dst._ndim and all([v._shape[i] == dst._shape[i] for i in range(v._ndim)]):
        return v
    if v._ndim == 0 and v._storage.device is CPU:
        return None
    while k < v._ndim and v._shape[k] == 1:
        k += 1
    if k == v._ndim:                     # (every dim stripped: a 0-d view, expanded)
        for i in range(dst._ndim):
            strides[i] = 0
        return make_view(v, dst._ndim, dst._shape, strides, v._offset)
    if v._ndim - k > dst._ndim:
        return None                      # (cannot broadcast: _check_copy_shapes raises)
    for i in range(dst._ndim - 1, -1, -1):
        j = v._ndim - (dst._ndim - i)    # v's dim aligned with dst's dim i
        if j >= k:
            if v._shape[j] == dst._shape[i]:
                strides[i] = v._strides[j]
            elif v._shape[j] == 1:
                strides[i] = 0
            else:
                return None              # (cannot broadcast: _check_copy_shapes raises)
        elif dst._shape[i] == 1:
            strides[i] = dst._shape[i + 1] * strides[i + 1] if i + 1 < dst._ndim else 1
        else:
            strides[i] = 0
    return make_view(v, dst._ndim, dst._shape, strides, v._offset)


cdef TensorBase _setitem_scalar(TensorBase dst, object value):
    """The 0-d tensor PyTorch makes of a number before x[i] = v writes it: a floating dtype
    rounds it (beyond float16/bfloat16's range to inf; __setitem__ has range-checked it for
    the other dtypes, float32 included), others store it as fill_ does."""
    cdef TensorBase s = empty_tensor(0, NULL, dst._dtype, dst._storage.device)
    if dst._dtype.is_floating_point and isinstance(value, (int, float)) and \
            not isinstance(value, bool):
        _fill_rounded(s, value)
    else:
        _fill_raw(s, value)
    return s


cdef int _setitem(TensorBase t, object index, object value) except -1:
    cdef tuple idx = index if type(index) is tuple else (index,)
    if not _is_basic_only(idx):
        return _adv_setitem_fn(t, index, value)
    cdef TensorBase dst = _getitem(t, index)
    if isinstance(value, TensorBase):
        seen = _copy_to_operand(dst, <TensorBase>value)
        value = _strip_leading_ones(<TensorBase>value, dst._ndim)
        _check_copy_shapes(dst, <TensorBase>value)
        prepare_write(dst, seen)
        if (<TensorBase>value)._storage.device is not dst._storage.device:
            # x[i] = v is a copy_ into a view, and copy_ moves values between devices
            _copy_across(dst, <TensorBase>value)
        else:
            _copy_into(dst, <TensorBase>value)
    elif dst._dtype.is_floating_point and isinstance(value, (int, float)) and \
            not isinstance(value, bool):
        prepare_write(dst, None)
        _fill_rounded(dst, value)
    elif isinstance(value, (bool, int, float)) or isinstance(value, np.generic):
        prepare_write(dst, None)
        _fill_raw(dst, value)
    else:
        if value is None or isinstance(value, (str, bytes, dict, set)):
            raise TypeError(f"can't assign a {type(value).__name__} to a "
                            f"tensorlib.{dst._dtype.legacy_name}")
        src = _strip_leading_ones(_tensor_from_data(value, dst._dtype, dst._storage.device, True),
                                  dst._ndim)
        _check_copy_shapes(dst, src)
        prepare_write(dst, src)
        _copy_into(dst, src)
    return 0


# Advanced indexing lives in the indexing family's module (advindex.pyx), which installs its
# entry points here at import: one C call through a pointer.
cdef object _adv_unset_get(TensorBase t, object index):
    raise RuntimeError("advanced indexing was used before its module was loaded")


cdef int _adv_unset_set(TensorBase t, object index, object value) except -1:
    raise RuntimeError("advanced indexing was used before its module was loaded")


cdef AdvGetFn _adv_getitem_fn = _adv_unset_get
cdef AdvSetFn _adv_setitem_fn = _adv_unset_set
cdef AdvSetFn _adv_setitem_recorded_fn = _adv_unset_set


cdef int _set_advanced_indexing(AdvGetFn get, AdvSetFn set_, AdvSetFn set_recorded) except -1:
    global _adv_getitem_fn, _adv_setitem_fn, _adv_setitem_recorded_fn
    _adv_getitem_fn = get
    _adv_setitem_fn = set_
    _adv_setitem_recorded_fn = set_recorded
    return 0
