# Indexing entry points: x[index] and x[index] = value.
# Basic indices (ints, slices with positive steps, None, Ellipsis) give views and assignment
# writes through the view; integer tensors, lists, NumPy arrays, bools and masks follow
# PyTorch's advanced-indexing rules (advindex.pxi) and give copies.
# (included into tensor.pyx)


cdef object _getitem(TensorBase t, object index):
    # fast paths for the two most common forms
    if type(index) is int:
        return _select(t, 0, index)
    if type(index) is slice and t._ndim > 0:
        s = <slice>index
        return _slice(t, 0, s.start, s.stop, 1 if s.step is None else _iarg(s.step, "slice", "step", 3))
    return _index_get(t, _index_tuple(index))


cdef int _setitem(TensorBase t, object index, object value) except -1:
    return _index_set(t, index, value)
