# Sorting and selection: sort/argsort/msort, topk, kthvalue, median/nanmedian, mode and
# unique/unique_consecutive, on the C kernels of cpu_sort.c.
#
# Semantics are PyTorch's: NaN sorts as the largest value (first when descending), -0 == +0,
# sorts are stable (ties keep their order, in both directions), median of an even count is
# the lower middle, and (values, indices) pairs come back as tensorlib.return_types tuples.
# Results are computed into fresh tensors; out= receives a copy (so an out= that aliases the
# input is fine).
# (included into sorting.pyx, the sorting family's module)

# PyTorch names dtypes by their C++ types in out= dtype errors.
_CPP_TYPE_NAME = {DT_BOOL: "bool", DT_UINT8: "unsigned char", DT_INT8: "signed char",
                  DT_INT16: "short int", DT_INT32: "int", DT_INT64: "long int",
                  DT_FLOAT16: "c10::Half", DT_BFLOAT16: "c10::BFloat16", DT_FLOAT32: "float",
                  DT_FLOAT64: "double"}

# ---------------------------------------------------------------------------------------------
# rows: the kernels see the input as rows along one dim

cdef struct _Rows:
    tl_rows_t r
    int64_t shape[MAX_DIMS]
    int64_t src_os[MAX_DIMS]
    int64_t o0_os[MAX_DIMS]
    int64_t o1_os[MAX_DIMS]


cdef int _out_geometry(TensorBase o, int ndim, int d, int64_t* outer, int64_t* along) noexcept:
    """Outer strides and along-dim stride of an output with the input's rank (dim d kept) or
    one less (dim d removed)."""
    cdef int i, j = 0
    if o._ndim == ndim:
        for i in range(ndim):
            if i != d:
                outer[j] = o._strides[i]
                j += 1
        along[0] = o._strides[d]
    else:
        for i in range(o._ndim):
            outer[i] = o._strides[i]
        along[0] = 0
    return 0


cdef int _rows_setup(_Rows* g, TensorBase t, int d, TensorBase vals, TensorBase idx) except -1:
    """Describe t (ndim >= 1) as rows along dim d, writing vals and/or idx (may be None)."""
    cdef int i, j = 0
    cdef tl_rows_t* r = &g.r
    r.nrows = 1
    for i in range(t._ndim):
        if i != d:
            g.shape[j] = t._shape[i]
            g.src_os[j] = t._strides[i]
            r.nrows *= t._shape[i]
            j += 1
    r.dtype = t._dtype.code
    r.outer_nd = j
    r.outer_shape = g.shape
    r.src_os = g.src_os
    r.n = t._shape[d]
    r.src_st = t._strides[d]
    r.src = tensor_data(t)
    r.o0 = NULL
    r.o1 = NULL
    r.o0_os = NULL
    r.o1_os = NULL
    r.o0_st = 0
    r.o1_st = 0
    if vals is not None:
        _out_geometry(vals, t._ndim, d, g.o0_os, &r.o0_st)
        r.o0_os = g.o0_os
        r.o0 = tensor_data(vals)
    if idx is not None:
        _out_geometry(idx, t._ndim, d, g.o1_os, &r.o1_st)
        r.o1_os = g.o1_os
        r.o1 = <int64_t*>tensor_data(idx)
    return 0


cdef int _run(int op, TensorBase t, int d, TensorBase vals, TensorBase idx, int flag,
              int64_t k) except -1:
    """Run one row kernel over t along d, with the GIL released for large inputs. Rows of
    one element (0-d tensors among them) need no kernel."""
    cdef _Rows g
    cdef int rc = 0
    cdef bint big = t._numel >= NOGIL_THRESHOLD
    if t._numel == 0:
        return 0
    if _dim_size(t, d) == 1:
        # one element per row: it is the answer, at index 0 (no per-row kernel calls for,
        # say, a sort along a size-1 dim of a million rows)
        if vals is not None:
            _copy_into(vals, t if vals._ndim == t._ndim else _squeeze(t, d))
        if idx is not None:
            _fill_raw(idx, 0)
        return 0
    _rows_setup(&g, t, d, vals, idx)
    return backend_of(t).rows(op, &g.r, flag, k, big)


# ---------------------------------------------------------------------------------------------
# argument checks and out=

cdef int _dim_of(TensorBase t, int64_t dim) except -1:
    return _wrap_dim(dim, t._ndim)


cdef int64_t _dim_size(TensorBase t, int d) noexcept:
    return t._shape[d] if t._ndim > 0 else 1


cdef int _nonempty_dim(TensorBase t, int d, str op) except -1:
    if _dim_size(t, d) == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")
    return 0


cdef int _no_bool(TensorBase t, str kernel) except -1:
    if t._dtype.code == DT_BOOL:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    return 0


cdef TensorBase _out_like(TensorBase t, int d, int64_t size, bint keep, DType dt):
    """A contiguous output shaped like t with dim d of length ``size`` (removed when not keep)."""
    cdef int64_t sh[MAX_DIMS]
    cdef int i, j = 0
    for i in range(t._ndim):
        if i == d:
            if not keep:
                continue
            sh[j] = size
        else:
            sh[j] = t._shape[i]
        j += 1
    return empty_tensor(j, sh, dt, t._storage.device)


cdef TensorBase _out_tensor(object o, DType want, str op):
    cdef TensorBase t = _targ(o, op, "out", 0)
    if t._dtype is not want:
        raise RuntimeError(f"Expected out tensor to have dtype {_CPP_TYPE_NAME[want.code]}, but got "
                           f"{_CPP_TYPE_NAME[t._dtype.code]} instead")
    return t


cdef TensorBase _deliver_out(TensorBase result, object out, TensorBase input, str op):
    """result, or a copy of it in out= (resized as PyTorch does; exact dtype required)."""
    cdef TensorBase o
    if out is None:
        return result
    o = _out_tensor(out, result._dtype, op)
    _resize_out(o, result._ndim, result._shape)
    prepare_write(o, input)
    _copy_into(o, result)
    return o


cdef object _pair(str name, TensorBase vals, TensorBase idx, object out, TensorBase input):
    """The (values, indices) named tuple, delivered into out=(values, indices) if given."""
    if out is not None:
        if not isinstance(out, (tuple, list)):
            raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not {_tname(out)}")
        if len(out) != 2:
            raise TypeError(f"expected tuple of 2 elements but got {len(out)}")
        vals = _deliver_out(vals, out[0], input, name)
        idx = _deliver_out(idx, out[1], input, name)
    return _rtype(name)((vals, idx))


# ---------------------------------------------------------------------------------------------
# sort / argsort / msort

cdef int _sort_into(TensorBase t, int d, bint descending, TensorBase vals, TensorBase idx) except -1:
    return _run(_OP_SORT, t, d, vals, idx, descending, 0)


cdef object _sort(TensorBase t, int64_t dim, bint descending, object stable, object out):
    """Stable sort along dim (the kernel is always stable, so ``stable`` only documents
    intent): values and the indices they came from."""
    cdef int d = _dim_of(t, dim)
    cdef TensorBase vals = _empty_preserving(t, None)
    cdef TensorBase idx = _empty_preserving(t, dtype_of(DT_INT64))
    _sort_into(t, d, descending, vals, idx)
    return _pair("sort", vals, idx, out, t)


cdef TensorBase _argsort(TensorBase t, int64_t dim, bint descending, object stable, object out):
    cdef int d = _dim_of(t, dim)
    cdef TensorBase idx = _empty_preserving(t, dtype_of(DT_INT64))
    _sort_into(t, d, descending, None, idx)
    return _deliver_out(idx, out, t, "argsort")


cdef TensorBase _msort(TensorBase t, object out):
    cdef int d = _wrap_dim(0, t._ndim)
    cdef TensorBase vals = _empty_preserving(t, None)
    _sort_into(t, d, False, vals, None)
    return _deliver_out(vals, out, t, "msort")


# ---------------------------------------------------------------------------------------------
# topk / kthvalue / median / nanmedian / mode

cdef object _topk(TensorBase t, int64_t k, int64_t dim, bint largest, bint sorted, object out):
    """The k largest (smallest) elements along dim, largest (smallest) first. The kernel
    always sorts them (``sorted=False`` allows any order). Ties go to the lower index."""
    cdef int d = _dim_of(t, dim)
    cdef int64_t n = _dim_size(t, d)
    cdef TensorBase vals, idx
    if k < 0 or k > n:
        raise RuntimeError("selected index k out of range")
    if t._dtype.code == DT_BOOL:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if t._ndim == 0:
        k = 1                  # PyTorch: a 0-d input gives its element back, even for k=0
    vals = _out_like(t, d, k, True, t._dtype)
    idx = _out_like(t, d, k, True, dtype_of(DT_INT64))
    if k > 0:
        _run(_OP_TOPK, t, d, vals, idx, largest, k)
    return _pair("topk", vals, idx, out, t)


cdef object _select_op(str name, TensorBase t, int d, bint keepdim, int which, int64_t k,
                       object out):
    cdef TensorBase vals = _out_like(t, d, 1, keepdim, t._dtype)
    cdef TensorBase idx = _out_like(t, d, 1, keepdim, dtype_of(DT_INT64))
    _run(_OP_SELECT, t, d, vals, idx, which, k)
    return _pair(name, vals, idx, out, t)


cdef object _kthvalue(TensorBase t, int64_t k, int64_t dim, bint keepdim, object out):
    """The k-th smallest element (1-based) along dim and its index."""
    cdef int d = _dim_of(t, dim)
    _no_bool(t, "kthvalue_cpu")
    _nonempty_dim(t, d, "kthvalue")
    if k < 1 or k > _dim_size(t, d):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return _select_op("kthvalue", t, d, keepdim, TL_SELECT_KTH, k - 1, out)


cdef TensorBase _median_all(TensorBase t, int which, str kernel):
    """Median of all elements as a 0-d tensor (NaN for an empty tensor)."""
    cdef TensorBase flat, vals, idx
    cdef int64_t n = t._numel
    _no_bool(t, kernel)
    vals = empty_tensor(0, NULL, t._dtype, t._storage.device)
    if n == 0:
        # PyTorch returns NaN converted to the dtype: x86 turns it into INT_MIN for 32/64-bit
        # integers and 0 (the low bits of INT32_MIN) for narrower ones.
        if t._dtype.is_floating_point:
            _fill_raw(vals, float("nan"))
        elif t._dtype.code == DT_INT64:
            _fill_raw(vals, INT64_MIN)
        elif t._dtype.code == DT_INT32:
            _fill_raw(vals, -2147483648)
        else:
            _fill_raw(vals, 0)
        return vals
    flat = _flat_contiguous(t)
    idx = empty_tensor(0, NULL, dtype_of(DT_INT64), t._storage.device)
    _run(_OP_SELECT, flat, 0, vals, idx, which, 0)
    return vals


cdef object _median(TensorBase t, object dim, bint keepdim, object out):
    """Lower median: of all elements (a tensor), or along dim ((values, indices)). A row with
    a NaN has median NaN, at its first NaN."""
    if dim is None:
        if out is not None:
            raise TypeError("median(): out= needs a dim")
        return _median_all(t, TL_SELECT_MEDIAN, "median_cpu")
    cdef int d = _dim_of(t, _iarg(dim, "median", "dim", 2))
    _no_bool(t, "median_out")
    _nonempty_dim(t, d, "median")
    return _select_op("median", t, d, keepdim, TL_SELECT_MEDIAN, 0, out)


cdef object _nanmedian(TensorBase t, object dim, bint keepdim, object out):
    """Lower median ignoring NaNs (NaN, at the first index, when a row is all NaN)."""
    if dim is None:
        if out is not None:
            raise TypeError("nanmedian(): out= needs a dim")
        return _median_all(t, TL_SELECT_NANMEDIAN, "nanmedian_cpu")
    cdef int d = _dim_of(t, _iarg(dim, "nanmedian", "dim", 2))
    _no_bool(t, "nanmedian_out")
    _nonempty_dim(t, d, "median")            # PyTorch's message names median here too
    return _select_op("nanmedian", t, d, keepdim, TL_SELECT_NANMEDIAN, 0, out)


cdef object _mode(TensorBase t, int64_t dim, bint keepdim, object out):
    """Most frequent value along dim (the smallest among ties) and the last index where it
    occurs (PyTorch's choice for short rows; NaN never equals NaN)."""
    cdef int d = _dim_of(t, dim)
    cdef TensorBase vals, idx
    _nonempty_dim(t, d, "mode")
    vals = _out_like(t, d, 1, keepdim, t._dtype)
    idx = _out_like(t, d, 1, keepdim, dtype_of(DT_INT64))
    _run(_OP_MODE, t, d, vals, idx, 0, 0)
    return _pair("mode", vals, idx, out, t)


# ---------------------------------------------------------------------------------------------
# unique / unique_consecutive

cdef object _unique_result(TensorBase values, TensorBase inverse, TensorBase counts,
                           bint return_inverse, bint return_counts):
    if not return_inverse and not return_counts:
        return values
    res = [values]
    if return_inverse:
        res.append(inverse)
    if return_counts:
        res.append(counts)
    return tuple(res)


cdef TensorBase _flat_contiguous(TensorBase t):
    cdef int64_t n = t._numel
    return _reshape(t, (n,)) if t._contiguous else _reshape(_contiguous_copy(t), (n,))


cdef object _unique_flat(TensorBase t, bint consecutive, bint return_inverse, bint return_counts):
    """unique over all elements: sort (unless consecutive), find runs, fill the outputs."""
    needs_data(t, "unique")
    cdef TensorBase flat = _flat_contiguous(t)
    cdef int64_t n = flat._numel, nu
    cdef TensorBase svals, order = None, runs, uniq, inverse, counts
    cdef int64_t* order_p = NULL
    cdef int64_t* inv_p = NULL
    cdef int64_t* cnt_p = NULL
    cdef int dt = t._dtype.code
    if consecutive:
        svals = flat
    else:
        svals = empty_tensor(1, &n, t._dtype, t._storage.device)
        if return_inverse:
            order = empty_tensor(1, &n, dtype_of(DT_INT64), t._storage.device)
        _sort_into(flat, 0, False, svals, order)
        if order is not None:
            order_p = <int64_t*>tensor_data(order)
    if t._storage.device.type == "cuda":
        # runs, their count (read by the host: the output size), then the fill, on the device
        from tensorlib.cuda import _indexing
        uniq, inverse, counts = _indexing.unique_flat(svals, order, tuple(t.shape))
        return _unique_result(uniq, inverse, counts, return_inverse, return_counts)
    runs = empty_tensor(1, &n, dtype_of(DT_INT64), t._storage.device)
    cdef char* sp = tensor_data(svals)
    cdef int64_t* rp = <int64_t*>tensor_data(runs)
    with nogil:                  # (cheap next to the sort, so whatever the size)
        nu = host_runs(dt, sp, n, rp)
    uniq = empty_tensor(1, &nu, t._dtype, t._storage.device)
    inverse = _new_empty(tuple(t.shape), dtype_of(DT_INT64), t._storage.device)
    counts = empty_tensor(1, &nu, dtype_of(DT_INT64), t._storage.device)
    if return_inverse:
        inv_p = <int64_t*>tensor_data(inverse)
    if return_counts:
        cnt_p = <int64_t*>tensor_data(counts)
    cdef char* up = tensor_data(uniq)
    with nogil:
        host_unique_fill(dt, sp, order_p, rp, n, up, inv_p, cnt_p)
    return _unique_result(uniq, inverse, counts, return_inverse, return_counts)


cdef object _unique_dim(TensorBase t, int d, bint consecutive, bint return_inverse,
                        bint return_counts):
    """unique over slices along dim d: slices are compared as a whole (lexicographically)."""
    needs_data(t, "unique")
    cdef int64_t m = t._shape[d], length, nu, i, isz = t._dtype.itemsize
    cdef TensorBase moved, runs, perm_t = None, inverse, counts, uq
    cdef int64_t* perm = NULL
    cdef int64_t* rp
    cdef int64_t* inv
    cdef int64_t* cnt
    cdef char* src
    cdef char* dst
    cdef int dt = t._dtype.code, rc = 0
    cdef int64_t sh[MAX_DIMS]
    if t._numel == 0 and m != 0:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    moved = _contiguous(_movedim(t, d, 0))
    length = t._numel // m if m else 0
    if t._storage.device.type == "cuda":
        # sort, runs, their count (read by the host: the output size), the fill, on the device
        from tensorlib.cuda import _indexing
        uq, inverse, counts = _indexing.unique_dim(moved, consecutive)
        return _unique_result(_contiguous(_movedim(uq, 0, d)), inverse, counts,
                              return_inverse, return_counts)
    runs = empty_tensor(1, &m, dtype_of(DT_INT64), t._storage.device)
    src = tensor_data(moved)
    if not consecutive:
        perm_t = empty_tensor(1, &m, dtype_of(DT_INT64), t._storage.device)
        perm = <int64_t*>tensor_data(perm_t)
        with nogil:
            rc = host_sort_slices(dt, src, m, length, perm)
        if rc != 0:
            raise MemoryError("out of memory in unique")
    rp = <int64_t*>tensor_data(runs)
    with nogil:
        nu = host_slice_runs(dt, src, perm, m, length, rp)
    # unique slices, in the moved layout, then moved back (contiguous)
    for i in range(moved._ndim):
        sh[i] = moved._shape[i]
    sh[0] = nu
    uq = empty_tensor(moved._ndim, sh, t._dtype, t._storage.device)
    inverse = empty_tensor(1, &m, dtype_of(DT_INT64), t._storage.device)
    counts = empty_tensor(1, &nu, dtype_of(DT_INT64), t._storage.device)
    inv = <int64_t*>tensor_data(inverse)
    cnt = <int64_t*>tensor_data(counts)
    dst = tensor_data(uq)
    for i in range(m):
        if i == 0 or rp[i] != rp[i - 1]:
            memcpy(dst + rp[i] * length * isz, src + (perm[i] if perm else i) * length * isz,
                   length * isz)
            cnt[rp[i]] = 0
        cnt[rp[i]] += 1
        inv[perm[i] if perm else i] = rp[i]
    return _unique_result(_contiguous(_movedim(uq, 0, d)), inverse, counts,
                          return_inverse, return_counts)


cdef object _unique(TensorBase t, bint sorted, bint return_inverse, bint return_counts, object dim):
    """Sorted unique elements (PyTorch's CPU unique sorts even with sorted=False)."""
    if dim is None:
        return _unique_flat(t, False, return_inverse, return_counts)
    cdef int d = _wrap_dim(_iarg(dim, "unique", "dim", 5), t._ndim, False)
    return _unique_dim(t, d, False, return_inverse, return_counts)


cdef object _unique_consecutive(TensorBase t, bint return_inverse, bint return_counts, object dim):
    """Collapse runs of equal consecutive elements (or slices along dim)."""
    if dim is None:
        return _unique_flat(t, True, return_inverse, return_counts)
    cdef int d = _wrap_dim(_iarg(dim, "unique_consecutive", "dim", 4), t._ndim, False)
    return _unique_dim(t, d, True, return_inverse, return_counts)


# ---- backward helpers (autograd formulas in decl.py call these)

def _median_backward(grads, self, result, indices, dim, keepdim):
    """median/nanmedian: with a dim the gradient goes to the returned index; over all
    elements, PyTorch shares it evenly among the elements equal to the median."""
    if indices is not None:
        return _take_along_backward(grads[0], tuple(self.shape), int(dim), indices, keepdim)
    return _evenly_distribute_all(grads[0], self, result)


def _msort_backward(grad, self):
    """msort is sort(0).values: the kernel is stable, so argsort(0) gives the same order."""
    if self.dim() == 0:
        return grad
    return _take_along_backward(grad, tuple(self.shape), 0, self.argsort(0, stable=True), True)


def _not_implemented_backward(str name):
    """unique/unique_consecutive record a node (the values output has a grad_fn, as in
    PyTorch) whose backward raises PyTorch's error."""
    raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
