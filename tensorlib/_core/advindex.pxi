# Advanced indexing and the index ops: x[int tensors / lists / masks] (get and set),
# index_put_, gather/scatter/scatter_add/scatter_reduce, index_select/index_add_/index_copy_/
# index_fill_, masked_select/masked_scatter_, nonzero/argwhere, take/put_.
#
# Every op first turns the user's indices into a private, validated int64 array (bounds and
# dtype checked, negative values wrapped where PyTorch wraps) and only then runs a C loop
# (cpu_index.c) that reads nothing but that array. Writes go through prepare_write after
# validation, so a bad index raises before anything is written or the version moves.
# (included into advindex.pyx, the indexing family's module)



_INDEX_DTYPE_MSG = "tensors used as indices must be long, int, byte or bool tensors"


cdef str _tname_short(DType dt):
    """PyTorch's short scalar-type name ("Float", "Long") used in its error messages."""
    return dt.legacy_name[:-6]


cdef bint _is_index_dtype(int code) noexcept:
    return code == DT_INT64 or code == DT_INT32


cdef int _assert_no_overlap(TensorBase a, TensorBase b) except -1:
    """PyTorch's assert_no_overlap: raise when two dense tensors share any memory (exact
    aliasing included). Non-dense pairs it cannot judge pass; callers then read through a
    copy when the storages are shared."""
    cdef int64_t alo, ahi, blo, bhi
    if a is b:
        raise input_overlap_error()        # (even an empty one, as in PyTorch)
    if a._storage is not b._storage or a._numel == 0 or b._numel == 0:
        return 0
    if not is_non_overlapping_and_dense(a._ndim, a._shape, a._strides) or \
            not is_non_overlapping_and_dense(b._ndim, b._shape, b._strides):
        return 0
    alo = a._offset * a._dtype.itemsize
    ahi = alo + a._numel * a._dtype.itemsize
    blo = b._offset * b._dtype.itemsize
    bhi = blo + b._numel * b._dtype.itemsize
    if alo < bhi and blo < ahi:
        raise input_overlap_error()
    return 0


cdef int _run_index(TensorBase on, tuple reads, int nd, const int64_t* shape, char* dst,
                    const int64_t* dst_st, const char* src, const int64_t* src_st,
                    const int64_t* idx, const int64_t* idx_st, int64_t idx_mul, int side,
                    int dtype, int op) except -1:
    """One gather/scatter kernel, run by the back end of ``on`` (the tensor written).
    ``reads`` is (the values read, the index): values share on's device (a 0-d CPU tensor
    joins any); an index may live on the CPU whatever the device (as in PyTorch), but a
    tensor with data is never addressed through an index that has none."""
    cdef TensorBase values = <TensorBase>reads[0], index = <TensorBase>reads[1]
    if values._storage.device is not on._storage.device and not (
            values._ndim == 0 and values._storage.device is CPU):
        same_device(on, values, "index")
    if _on_cuda(index) and index._storage.device is not on._storage.device:
        same_device(on, index, "index")      # (the host cannot read device offsets)
    if has_data(on) and not has_data(index):
        same_device(on, index, "index")
    return backend_of(on).index(nd, shape, dst, dst_st, src, src_st, idx, idx_st, idx_mul, side,
                                dtype, op)


cdef object _cuda_index_mod = None


cdef object _cuda_idx():
    """tensorlib.cuda._indexing: the device halves of this family (offsets, nonzero, counts)."""
    global _cuda_index_mod
    if _cuda_index_mod is None:
        from tensorlib.cuda import _indexing
        _cuda_index_mod = _indexing
    return _cuda_index_mod


cdef inline bint _on_cuda(TensorBase t) noexcept:
    return t._storage.device.type == "cuda"


cdef TensorBase _to_dev(TensorBase t, Device dev):
    """An index tensor on ``dev``: a CPU index is copied over (PyTorch accepts CPU indices
    for device tensors); one on another device is PyTorch's device-mismatch error."""
    if t._storage.device is dev:
        return t
    if t._storage.device is not CPU:
        raise RuntimeError(f"indices should be either on cpu or on the same device as the "
                           f"indexed tensor ({dev})")
    return <TensorBase>(<object>t).to(dev)


cdef TensorBase _device_offsets(tuple B, list idxs, list sizes, list muls, bint wrap,
                                object on_error, bint check_only, Device dev):
    """_offsets on a CUDA device: one kernel computes the offsets and records the first bad
    index in a device flag; the host reads that flag (a synchronizing copy, as PyTorch's
    ``nonzero``) and raises before any kernel writes through the offsets."""
    cdef TensorBase out = None
    cdef int64_t total = 1
    for b in B:
        total *= <int64_t>b
    if not check_only:
        out = _new_empty(B, dtype_of(DT_INT64), dev)
    if total == 0 or not idxs:
        return out
    ix = [_to_dev(<TensorBase>x, dev) for x in idxs]
    bad = _cuda_idx().offsets(B, ix, sizes, muls, wrap, out)
    if bad is not None:
        raise on_error(bad[0], bad[1], sizes[bad[0]])
    return out


cdef TensorBase _offsets(tuple B, list idxs, list sizes, list muls, bint wrap, object on_error,
                         bint check_only=False, Device dev=None):
    """Validated element offsets: out[j] = sum_k idx_k[j] * muls[k] over the broadcast shape B
    (idx_k already expanded to B; int32 or int64). A value outside [-size, size) (wrap) or
    [0, size) raises on_error(k, value, size). check_only: validate, return None."""
    cdef int k = len(idxs), nb = len(B), i, kk, bad_k = 0, rc
    cdef int64_t bad_pos = 0, bad_val = 0, total = 1
    cdef int64_t bsh[MAX_DIMS]
    cdef TensorBase out = None, t
    cdef tl_index_src* srcs
    if dev is None:
        dev = CPU
    for x in idxs:
        if not has_data(<TensorBase>x):
            dev = (<TensorBase>x)._storage.device
    if dev.type == "cuda":
        return _device_offsets(B, idxs, sizes, muls, wrap, on_error, check_only, dev)
    for x in idxs:
        if _on_cuda(<TensorBase>x):
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {dev} and "
                               f"{(<TensorBase>x)._storage.device}!")
    if not check_only:
        out = _new_empty(B, dtype_of(DT_INT64), dev)
    for i in range(nb):
        bsh[i] = B[i]
        total *= bsh[i]
    if total == 0 or k == 0 or not backend_for(dev).has_data:
        # an index or a tensor without data (meta): nothing to check, and the offsets are
        # made where the data is, so they are counted as on the CPU
        return out
    srcs = <tl_index_src*>malloc(k * sizeof(tl_index_src))
    if srcs == NULL:
        raise MemoryError()
    for kk in range(k):
        t = <TensorBase>idxs[kk]
        srcs[kk].data = tensor_data(t)
        srcs[kk].is_int32 = t._dtype.code == DT_INT32
        for i in range(nb):
            srcs[kk].strides[i] = t._strides[i]
        srcs[kk].size = sizes[kk]
        srcs[kk].mul = muls[kk]
    cdef int64_t* po = NULL if check_only else <int64_t*>tensor_data(out)
    if total >= NOGIL_THRESHOLD:
        with nogil:
            rc = host_index_offsets(nb, bsh, k, srcs, wrap, po, &bad_k, &bad_pos, &bad_val)
    else:
        rc = host_index_offsets(nb, bsh, k, srcs, wrap, po, &bad_k, &bad_pos, &bad_val)
    free(srcs)
    if rc:
        raise on_error(bad_k, bad_val, sizes[bad_k])
    return out


cdef TensorBase _nonzero_buffer(TensorBase t, list muls):
    """Positions of t's nonzero elements in C order. muls None: coordinates in an int64
    (ndim, N) buffer; else element offsets (N,) = sum_d coord_d * muls[d]."""
    needs_data(t, "nonzero")
    if _on_cuda(t):
        # count on the device, read the count (a synchronization), then fill
        return <TensorBase>_cuda_idx().nonzero(t, muls)
    cdef tl_nz p
    cdef int64_t nchunks, n, i
    cdef int64_t* counts
    cdef int64_t m[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int64_t sh[2]
    cdef bint par = t._numel >= NOGIL_THRESHOLD
    cdef TensorBase out
    cdef int64_t* po
    cdef int64_t* pm
    for i in range(t._ndim):
        st[i] = t._strides[i] * t._dtype.itemsize
        if muls is not None:
            m[i] = muls[i]
    nchunks = host_nonzero_setup(&p, t._ndim, t._shape, tensor_data(t), st, t._dtype.code)
    counts = <int64_t*>malloc(nchunks * sizeof(int64_t))
    if counts == NULL:
        raise MemoryError()
    try:
        if par:
            with nogil:
                n = host_nonzero_count(&p, counts, 1)
        else:
            n = host_nonzero_count(&p, counts, 0)
        if muls is None:
            sh[0] = t._ndim
            sh[1] = n
            out = empty_tensor(2, sh, dtype_of(DT_INT64), t._storage.device)
        else:
            sh[0] = n
            out = empty_tensor(1, sh, dtype_of(DT_INT64), t._storage.device)
        po = <int64_t*>tensor_data(out)
        pm = NULL if muls is None else m
        if par:
            with nogil:
                host_nonzero_fill(&p, counts, po, n, pm, 1)
        else:
            host_nonzero_fill(&p, counts, po, n, pm, 0)
    finally:
        free(counts)
    return out


cdef TensorBase _masked_gather(TensorBase src, TensorBase mask):
    """src's elements where mask (same shape) is nonzero, in C order: one pass that copies
    values directly (no offsets array)."""
    needs_data(mask, "masked_select")
    needs_data(src, "masked_select")
    cdef TensorBase offs
    if _on_cuda(src) or _on_cuda(mask):
        if not _on_cuda(src):
            same_device(src, mask, "masked_select")
        # offsets of the mask's nonzero positions in src (same shape), then one gather
        offs = _nonzero_buffer(_to_dev(mask, src._storage.device), list(src.stride()))
        return _plan_gather(_flat1(src), [0], (offs._shape[0],), offs, 0, None, "", ())
    cdef tl_nz p
    cdef int64_t nchunks, n, i
    cdef int64_t* counts
    cdef int64_t mst[MAX_DIMS]
    cdef int64_t sst[MAX_DIMS]
    cdef int64_t sh[1]
    cdef bint par = mask._numel >= NOGIL_THRESHOLD
    cdef TensorBase out
    cdef char* po
    cdef const char* ps = tensor_data(src)
    cdef int isz = src._dtype.itemsize
    for i in range(mask._ndim):
        mst[i] = mask._strides[i] * mask._dtype.itemsize
        sst[i] = src._strides[i] * isz
    nchunks = host_nonzero_setup(&p, mask._ndim, mask._shape, tensor_data(mask), mst, mask._dtype.code)
    counts = <int64_t*>malloc(nchunks * sizeof(int64_t))
    if counts == NULL:
        raise MemoryError()
    try:
        if par:
            with nogil:
                n = host_nonzero_count(&p, counts, 1)
        else:
            n = host_nonzero_count(&p, counts, 0)
        sh[0] = n
        out = empty_tensor(1, sh, src._dtype, src._storage.device)
        po = tensor_data(out)
        if par:
            with nogil:
                host_nonzero_gather(&p, counts, po, ps, sst, isz, 1)
        else:
            host_nonzero_gather(&p, counts, po, ps, sst, isz, 0)
    finally:
        free(counts)
    return out


cdef int _contig_strides(int nd, const int64_t* shape, int64_t* out) noexcept:
    cdef int64_t acc = 1
    cdef int i
    for i in range(nd - 1, -1, -1):
        out[i] = acc
        acc *= shape[i] if shape[i] > 1 else 1
    return 0


# ---------------------------------------------------------------------------------------------
# the indexing plan: r (a view) indexed at `dims` by offsets of broadcast shape B, the B block
# placed at `pos` among r's remaining dims

cdef int _space(TensorBase r, list dims, tuple B, int pos, int64_t* shape, int64_t* r_st,
                int64_t* idx_st) except -1:
    """The kernel's iteration space (= the result's shape): r's strides in bytes there (0 on
    the B dims, where the offsets take over) and the offsets' strides (0 on r's dims)."""
    cdef int nb = len(B), n = 0, i, isz = r._dtype.itemsize
    cdef int64_t bst[MAX_DIMS]
    cdef int64_t bsh[MAX_DIMS]
    kept = [d for d in range(r._ndim) if d not in dims]
    if len(kept) + nb > MAX_DIMS:
        raise RuntimeError(f"indexing result would have more than {MAX_DIMS} dimensions")
    for i in range(nb):
        bsh[i] = B[i]
    _contig_strides(nb, bsh, bst)
    for d in kept[:pos]:
        shape[n] = r._shape[<int>d]
        r_st[n] = r._strides[<int>d] * isz
        idx_st[n] = 0
        n += 1
    for i in range(nb):
        shape[n] = bsh[i]
        r_st[n] = 0
        idx_st[n] = bst[i]
        n += 1
    for d in kept[pos:]:
        shape[n] = r._shape[<int>d]
        r_st[n] = r._strides[<int>d] * isz
        idx_st[n] = 0
        n += 1
    return n


cdef int _iter_order(int n, const int64_t* shape, const int64_t* a, const int64_t* b,
                     int64_t* perm) noexcept:
    """The dims innermost first as PyTorch's TensorIterator orders them for an output from
    two operands' strides over the output's shape (a first): insertion sort from the reversed
    order; the first operand whose strides (0: broadcast, no say) differ decides, on equal
    strides the smaller dim goes inside. Returns whether the order is not the plain one."""
    cdef int i, d0, d1, k, c
    cdef int64_t s0, s1, tmp
    cdef const int64_t* ops[2]
    ops[0] = a
    ops[1] = b
    for i in range(n):
        perm[i] = n - 1 - i
    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = 0
            for k in range(2):
                s0 = ops[k][perm[d0]]
                s1 = ops[k][perm[d1]]
                if s0 == 0 or s1 == 0:
                    continue
                if s0 != s1:
                    c = 1 if s0 > s1 else -1
                    break
                if shape[perm[d0]] > shape[perm[d1]]:
                    c = 1
                    break
            if c > 0:
                tmp = perm[d0]
                perm[d0] = perm[d1]
                perm[d1] = tmp
                d1 = d0
            elif c < 0:
                break
    for i in range(n):
        if perm[i] != n - 1 - i:
            return True
    return False


cdef TensorBase _plan_gather(TensorBase r, list dims, tuple B, TensorBase offsets, int pos,
                             object out, str out_msg, tuple inputs, int64_t unit=1,
                             bint iter_layout=False):
    """r[plan] into a new tensor (or into out=). Offsets count in units of ``unit`` elements.
    ``iter_layout``: lay a new result out in the memory order r's strides suggest, as
    PyTorch's index does (x.t()[None][[0]] keeps x.t()'s order); else contiguous."""
    cdef int64_t shape[MAX_DIMS]
    cdef int64_t rst[MAX_DIMS]
    cdef int64_t ist[MAX_DIMS]
    cdef int64_t dst[MAX_DIMS]
    cdef int64_t perm[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int64_t ios[MAX_DIMS]
    cdef int64_t cur
    cdef int n = _space(r, dims, B, pos, shape, rst, ist), i
    cdef TensorBase res, o = None
    if out is not None:
        o = _out_for(out, r._dtype, out_msg, inputs, n, shape)
    res = o if (o is not None and not _shares_any(o, inputs)) else \
        empty_tensor(n, shape, r._dtype, r._storage.device)
    if o is None and iter_layout and n > 1:
        # the index operand as PyTorch shapes it: the indices' shape with size-1 dims for r's
        # kept dims, contiguous (broadcast, stride 0, over a kept dim of size > 1)
        cur = 1
        for i in range(n - 1, -1, -1):
            if pos <= i < pos + len(B):
                ios[i] = cur
                cur *= shape[i]
            else:
                ios[i] = cur if shape[i] == 1 else 0
        iter_layout = _iter_order(n, shape, rst, ios, perm)
    if o is None and iter_layout and n > 1:
        cur = 1
        for i in range(n):
            st[perm[i]] = cur
            cur *= shape[perm[i]]
        _set_geometry(res, n, shape, st)        # (the same bytes, restrided)
    for i in range(n):
        dst[i] = res._strides[i] * r._dtype.itemsize
    _run_index(res, (r, offsets), n, shape, tensor_data(res), dst, tensor_data(r), rst,
               <int64_t*>tensor_data(offsets), ist, unit * r._dtype.itemsize, TL_IDX_SIDE_SRC,
               r._dtype.code, TL_IDX_COPY)
    if o is not None and res is not o:
        _copy_into(o, res)
        return o
    return res


cdef int _value_strides(TensorBase r, list dims, tuple B, int pos, TensorBase value,
                        bint strip, int64_t* vst) except -1:
    """The value's strides (bytes) over the indexing result's shape, broadcasting; raises
    PyTorch's shape-mismatch error. ``strip``: drop leading size-1 dims of the value first
    (what x[idx] = v does; index_put_ does not). vst may be NULL (check only)."""
    cdef int64_t shape[MAX_DIMS]
    cdef int64_t rst[MAX_DIMS]
    cdef int64_t ist[MAX_DIMS]
    cdef int64_t tmp[MAX_DIMS]
    cdef int n = _space(r, dims, B, pos, shape, rst, ist), i, lead = 0
    cdef int64_t* out = vst
    if out == NULL:
        out = &tmp[0]
    if strip:
        while value._ndim - lead > n and value._shape[lead] == 1:
            lead += 1
    try:
        broadcast_strides(value._ndim - lead, value._shape + lead, value._strides + lead, n, shape,
                          out)
    except RuntimeError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(value.shape)} cannot be "
                           f"broadcast to indexing result of shape {shape_str(n, shape)}") from None
    if vst != NULL:
        for i in range(n):
            vst[i] *= value._dtype.itemsize
    return n


cdef int _plan_scatter(TensorBase r, list dims, tuple B, TensorBase offsets, int pos,
                       TensorBase value, int op, int64_t unit=1, bint strip=False) except -1:
    """r[plan] (op)= value, value broadcast to the indexing result. Callers have validated,
    checked overlap and run prepare_write."""
    cdef int64_t shape[MAX_DIMS]
    cdef int64_t rst[MAX_DIMS]
    cdef int64_t ist[MAX_DIMS]
    cdef int64_t vst[MAX_DIMS]
    cdef int n = _space(r, dims, B, pos, shape, rst, ist)
    _value_strides(r, dims, B, pos, value, strip, vst)
    _run_index(r, (value, offsets), n, shape, tensor_data(r), rst, tensor_data(value), vst,
               <int64_t*>tensor_data(offsets), ist, unit * r._dtype.itemsize, TL_IDX_SIDE_DST,
               r._dtype.code, op)
    return 0


cdef TensorBase _flat1(TensorBase t):
    """A 1-element, stride-0 view at t's first element: indexing it with element offsets
    (relative to that element) reaches every element of t."""
    return _view_of(t, [1], [0], t._offset)


cdef bint _shares_any(TensorBase o, tuple inputs):
    for x in inputs:
        if x is not None and (<TensorBase>x)._storage is o._storage:
            return True
    return False


cdef TensorBase _out_for(object out, DType dt, str msg, tuple inputs, int nd, const int64_t* shape):
    """Check an out= tensor (dtype must equal; no memory shared with the inputs), resize it
    and prepare it for writing."""
    cdef TensorBase o = _targ(out, "out", "out", 0)
    if o._dtype is not dt:
        raise RuntimeError(msg.format(expected=dt.name, got=o._dtype.name))
    for x in inputs:
        if x is not None:
            _assert_no_overlap(o, <TensorBase>x)
    _resize_out(o, nd, shape)
    prepare_write(o, None)
    return o


# ---------------------------------------------------------------------------------------------
# parsing a subscript

cdef str _pytype_name(object x):
    cdef object tp = type(x)
    if tp.__module__ in ("builtins", None):
        return tp.__name__
    return f"{tp.__module__}.{tp.__name__}"


cdef object _seq_index_tensor(object seq):
    """A list index as PyTorch reads it: bool tensor when every value is a bool, else int64
    (floats truncate toward zero)."""
    cdef TensorBase t = _tensor_from_data(seq, dtype_of(DT_INT64), CPU, False)
    if t._dtype.code == DT_BOOL or t._dtype.code == DT_INT64:
        return t
    return _to_dtype(t, dtype_of(DT_INT64), False)


cdef tuple _classify(object x):
    """(kind, value) for one element of a subscript tuple."""
    cdef TensorBase t
    if x is None:
        return (IK_NONE, None)
    if x is Ellipsis:
        return (IK_ELLIPSIS, None)
    if type(x) is slice:
        return (IK_SLICE, x)
    if type(x) is int:
        return (IK_INT, x)
    if isinstance(x, bool):
        return (IK_BOOL, bool(x))
    if isinstance(x, TensorBase):
        t = <TensorBase>x
        if t._dtype.code == DT_BOOL or t._dtype.code == DT_UINT8:
            if t._ndim == 0:
                return (IK_BOOL, bool(_item(t)))
            return (IK_TENSOR, t)
        if not _is_index_dtype(t._dtype.code):
            return (IK_TENSOR, t)       # (rejected once the indices are counted, as PyTorch)
        if t._ndim == 0:
            return (IK_INT, int(_item(t)))
        return (IK_TENSOR, t)
    if isinstance(x, np.ndarray):
        if x.ndim == 0 and x.dtype.kind in "iu":
            return (IK_INT, int(x))
        if x.ndim == 0 and x.dtype.kind == "b":
            return (IK_BOOL, bool(x))
        t = _tensor_from_data(x, dtype_of(DT_INT64), CPU, False)
        return _classify(t)
    if isinstance(x, (list, tuple, range)):
        return (IK_TENSOR, _seq_index_tensor(x))
    if isinstance(x, np.bool_):
        raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                         f"Variables are valid indices (got {_pytype_name(x)})")
    if not isinstance(x, float) and hasattr(x, "__index__"):
        try:
            return (IK_INT, x.__index__())
        except TypeError:
            pass
    raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                     f"Variables are valid indices (got {_pytype_name(x)})")


cdef tuple _index_tuple(object index):
    """The subscript as a tuple. A list holding slices, None, Ellipsis, sequences or tensors
    is read as a tuple (PyTorch's legacy rule, with its deprecation warning); any other list
    is one index tensor."""
    if type(index) is tuple:
        return <tuple>index
    if isinstance(index, tuple):
        return tuple(index)
    if type(index) is list and len(<list>index) < 32:
        for e in <list>index:
            if e is None or e is Ellipsis or type(e) is slice or isinstance(
                    e, (TensorBase, list, tuple, range, np.ndarray, str)):
                warnings.warn("Using a non-tuple sequence for multidimensional indexing is "
                              "deprecated; use x[tuple(seq)] instead of x[seq]. A future version "
                              "will read it as a tensor index, x[tensor(seq)], which will give "
                              "an error or a different result.", UserWarning, stacklevel=1)
                return tuple(<list>index)
    return (index,)


cdef tuple _index_parse(TensorBase t, tuple index, bint check_masks=True):
    """Apply the basic part of a subscript (ints, slices, None, Ellipsis) as views, and collect
    the advanced part. Returns (view, [(dim, tensor, is_mask), ...], [user index tensors]).
    ``check_masks``: check each mask's shape here (a write checks later, in PyTorch's order:
    see _index_write)."""
    cdef int consumed = 0, dim = 0, i, m, nsel = 0, nadv = 0
    cdef TensorBase r = t, it, sl
    cdef list items = []
    cdef list adv = []
    cdef list users = []
    for x in index:
        kind, v = _classify(x)
        items.append((kind, v))
        if kind == IK_SLICE or kind == IK_INT:
            consumed += 1
        elif kind == IK_TENSOR:
            it = <TensorBase>v
            consumed += it._ndim if (it._dtype.code == DT_BOOL or it._dtype.code == DT_UINT8) else 1
    if consumed > t._ndim:
        if t._ndim == 0 and len(items) == 1 and items[0][0] == IK_INT:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"too many indices for tensor of dimension {t._ndim}")
    for kind, v in items:
        if kind == IK_TENSOR or kind == IK_BOOL:
            nadv += 1
    for kind, v in items:
        # (a write checks the indices' dtypes after the overlap of its operands, in
        # _index_write, as PyTorch's index_put_ does)
        if check_masks and kind == IK_TENSOR and not _is_index_dtype((<TensorBase>v)._dtype.code) \
                and (<TensorBase>v)._dtype.code != DT_BOOL and (<TensorBase>v)._dtype.code != DT_UINT8:
            raise IndexError(_INDEX_DTYPE_MSG)
    for pos, (kind, v) in enumerate(items):
        if dim >= r._ndim and kind != IK_ELLIPSIS and _entry_past_end(kind, v, dim, r._ndim, pos):
            dim += 1                    # (only after a second ellipsis)
            continue
        if kind == IK_ELLIPSIS:
            dim += t._ndim - consumed
        elif kind == IK_NONE:
            r = _unsqueeze(r, dim)
            dim += 1
        elif kind == IK_BOOL:
            # x[True] / x[False]: a new dim indexed by [0] / [] (an advanced index, so it
            # broadcasts with the others, as in PyTorch)
            r = _unsqueeze(r, dim)
            it = _new_empty((1 if v else 0,), dtype_of(DT_INT64), CPU)
            if v:
                (<int64_t*>tensor_data(it))[0] = 0
            adv.append((dim, it, False))
            dim += 1
        elif kind == IK_SLICE:
            sl = _slice(r, dim, v.start, v.stop,
                        1 if v.step is None else _iarg(v.step, "slice", "step", 3))
            # PyTorch's subscript keeps the tensor itself for a slice that takes a whole dim
            # in order, so the advanced part then sees x itself (x[:, mask] = x is a full
            # overlap even when x is empty)
            if not (nadv and sl._offset == r._offset and sl._shape[dim] == r._shape[dim] and
                    sl._strides[dim] == r._strides[dim]):
                r = sl
            dim += 1
        elif kind == IK_INT:
            if v < -r._shape[dim] or v >= r._shape[dim]:
                # PyTorch names the dim as if selected dims were still there
                raise IndexError(f"index {v} is out of bounds for dimension {dim + nsel} with "
                                 f"size {r._shape[dim]}")
            r = _select(r, dim, v)
            nsel += 1
        else:
            it = <TensorBase>v
            users.append(it)
            if it._dtype.code == DT_BOOL or it._dtype.code == DT_UINT8:
                if it._dtype.code == DT_UINT8:
                    warnings.warn("indexing with dtype tensorlib.uint8 is now deprecated, please "
                                  "use a dtype tensorlib.bool instead.", UserWarning, stacklevel=1)
                if check_masks:
                    _check_mask_shape(r, it, dim)
                adv.append((dim, it, True))
                dim += it._ndim
            else:
                adv.append((dim, it, False))
                dim += 1
    return (r, adv, users)


cdef int _check_mask_shape(TensorBase r, TensorBase it, int dim) except -1:
    cdef int i
    if dim + it._ndim > r._ndim:
        raise IndexError(f"too many indices for tensor of dimension {r._ndim}")
    for i in range(it._ndim):
        if it._shape[i] != r._shape[dim + i]:
            raise IndexError(
                f"The shape of the mask {list(it.shape)} at index {i} does not match "
                f"the shape of the indexed tensor {list(r.shape)} at index {dim + i}")
    return 0


cdef object _adv_bounds_error(int k, int64_t v, int64_t size):
    if size == 0:
        return IndexError("index is out of bounds for dimension with size 0")
    return IndexError(f"index {v} is out of bounds for dimension {k} with size {size}")


cdef tuple _adv_resolve(TensorBase r, list adv, TensorBase value=None, bint strip=False,
                        TensorBase like=None):
    """(dims, B, offsets, pos) for the advanced entries of a parsed subscript. With a value
    (a write), its shape is checked against the indexing result before the indices are
    validated (PyTorch's order of errors); with ``like``, then its dtype (it must be like's)."""
    cdef TensorBase it, coords
    cdef int d, j, m
    cdef list dims = []
    cdef list idxs = []
    cdef int64_t bsh[MAX_DIMS]
    cdef int64_t tmp[MAX_DIMS]
    cdef int nb = 0
    if len(adv) == 1 and adv[0][2]:
        # a lone mask: offsets straight from its nonzero positions
        d, it = adv[0][0], adv[0][1]
        dims = list(range(d, d + it._ndim))
        offs = _nonzero_buffer(it, [r._strides[d + j] for j in range(it._ndim)])
        if value is not None:
            _value_strides(r, dims, (offs._shape[0],), d, value, strip, NULL)
            if like is not None:
                _value_tensor(value, like)
        return (dims, (offs._shape[0],), offs, d)
    for d, it, is_mask in adv:
        if is_mask:
            coords = _nonzero_buffer(it, None)
            for j in range(it._ndim):
                dims.append(d + j)
                idxs.append(_select(coords, 0, j))
        else:
            dims.append(d)
            idxs.append(it)
    for j in range(len(idxs)):
        # PyTorch checks this before the value's shape (an empty dim has no valid index)
        if r._shape[<int>dims[j]] == 0 and (<TensorBase>idxs[j])._numel > 0:
            raise IndexError("index is out of bounds for dimension with size 0")
    for it in idxs:
        try:
            nb = broadcast_shapes(nb, bsh, it._ndim, it._shape, tmp)
        except RuntimeError:
            raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                             "with shapes " + ", ".join([str(list(x.shape)) for x in idxs])) from None
        memcpy(bsh, tmp, nb * sizeof(int64_t))
    B = tuple([bsh[j] for j in range(nb)])
    adjacent = dims[len(dims) - 1] - dims[0] + 1 == len(dims)
    pos = dims[0] if adjacent else 0
    if value is not None:
        _value_strides(r, dims, B, pos, value, strip, NULL)
        if like is not None:
            _value_tensor(value, like)
    if r._numel == 0 and any(r._shape[k] == 0 for k in range(r._ndim) if k not in dims):
        # the result is empty whatever the indices say: PyTorch runs no kernel, so checks no
        # bounds (x[[5]] of a (1, 0) tensor is a (1, 0) result)
        offs = _new_empty(B, dtype_of(DT_INT64), r._storage.device)
        return (dims, B, offs, pos)
    offs = _offsets(B, [_expand(<TensorBase>x, B) for x in idxs],
                    [r._shape[<int>dd] for dd in dims], [r._strides[<int>dd] for dd in dims],
                    True, _adv_bounds_error, False, r._storage.device)
    return (dims, B, offs, pos)


# ---------------------------------------------------------------------------------------------
# __getitem__ / __setitem__ / index_put_

cdef object _index_get(TensorBase t, tuple index):
    r, adv, users = _index_parse(t, index)
    if not adv:
        return r
    if len(adv) == 1 and adv[0][2] and adv[0][0] == 0 and (<TensorBase>adv[0][1])._ndim == (<TensorBase>r)._ndim:
        return _masked_gather(<TensorBase>r, <TensorBase>adv[0][1])     # x[mask]: one pass
    if len(adv) == 1 and (<TensorBase>r)._ndim == 1 and not _on_cuda(<TensorBase>r):
        it = <TensorBase>adv[0][1]
        if it._dtype.code == DT_INT64 and it._contiguous and not _on_cuda(it):
            return _take1(<TensorBase>r, it)                               # x[idx]: one pass
    dims, B, offs, pos = _adv_resolve(<TensorBase>r, adv)
    return _plan_gather(<TensorBase>r, dims, B, offs, pos, None, "", (), 1, True)


cdef TensorBase _take1(TensorBase r, TensorBase idx):
    """x[idx] for a 1-d x and a contiguous int64 idx: checked and gathered in one pass."""
    cdef TensorBase out = empty_tensor(idx._ndim, idx._shape, r._dtype, r._storage.device)
    cdef int64_t bad = -1, n = idx._numel
    cdef int rc
    cdef const int64_t* pi = <const int64_t*>tensor_data(idx)
    cdef char* po = tensor_data(out)
    cdef const char* ps = tensor_data(r)
    cdef int64_t sst = r._strides[0], size = r._shape[0]
    cdef int isz = r._dtype.itemsize
    if _on_cuda(r) or _on_cuda(idx):
        same_device(r, idx, "index")      # (device tensors are indexed by _plan_gather)
        raise RuntimeError("_take1 runs on the host")
    if not has_data(idx) and has_data(r):
        same_device(r, idx, "index")
    if not has_data(r) or not has_data(idx):
        return out
    if n >= NOGIL_THRESHOLD:
        with nogil:
            rc = host_index_take1(n, pi, po, ps, sst, size, isz, &bad, 1)
    else:
        rc = host_index_take1(n, pi, po, ps, sst, size, isz, &bad, 0)
    if rc:
        raise _adv_bounds_error(0, pi[bad], size)
    return out


cdef TensorBase _value_tensor(object value, TensorBase like):
    """The right-hand side of an indexed write as a tensor of ``like``'s dtype: a tensor must
    have it already (PyTorch's rule for index_put_ and ``x[adv] = v`` alike); numbers and
    sequences are converted."""
    cdef TensorBase v
    if isinstance(value, TensorBase):
        v = <TensorBase>value
        if v._dtype is not like._dtype:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, "
                               f"got {_tname_short(like._dtype)} for the destination and "
                               f"{_tname_short(v._dtype)} for the source.")
        return v
    if like._dtype.is_floating_point and isinstance(value, (int, float)) and \
            not isinstance(value, bool):
        # rounded as x[i] = v rounds it: beyond the dtype's range it becomes inf (PyTorch
        # range-checks a floating fill_, not an indexed write)
        return _tensor_from_data(value, like._dtype, like._storage.device, True)
    if isinstance(value, (bool, int, float)) or isinstance(value, np.generic):
        v = empty_tensor(0, NULL, like._dtype, like._storage.device)
        _fill_raw(v, value)
        return v
    return _tensor_from_data(value, like._dtype, like._storage.device, True)


cdef int _inplace_leaf_check(TensorBase t) except -1:
    """PyTorch's autograd layer rejects index_put_ into a leaf that requires grad (or a view
    of one) before the op looks at its indices (prepare_write repeats the full check)."""
    if not _grad_on() or not _req(t):
        return 0
    if t._grad_fn is None and t._view_base is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    _check_view_rebase(t)               # (PyTorch's order: how the view was made first)
    if t._view_base is not None and t._view_base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    return 0


cdef bint _is_masked_fill(list adv, TensorBase v, bint accumulate):
    """Whether PyTorch's index_put_ runs as masked_fill_ with the value's one element: a lone
    mask, a one-element value, no accumulation."""
    return not accumulate and v._numel == 1 and len(adv) == 1 and adv[0][2]


cdef int _index_write(TensorBase r, list adv, list users, object value, bint accumulate,
                      bint strict) except -1:
    """r[adv] = value (or += with accumulate): validate, check overlap, then write.
    strict: index_put_'s rule of no dropping of leading size-1 value dims."""
    cdef TensorBase v
    _inplace_leaf_check(r)
    # (a tensor value's dtype is checked after the indices' and the value's shapes)
    v = <TensorBase>value if isinstance(value, TensorBase) else _value_tensor(value, r)
    # PyTorch's index_put_ runs x[mask] = one value as masked_fill_ (the mask may be x
    # itself, the value any dtype); otherwise it rejects shared memory before it looks at
    # the indices
    if _is_masked_fill(adv, v, accumulate):
        # (the mask's shape is checked before masked_fill_ looks at its dtype)
        _check_mask_shape(r, <TensorBase>adv[0][1], adv[0][0])
        if (<TensorBase>adv[0][1])._dtype.code == DT_UINT8:
            raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with "
                               "dtype unsigned char")
        if v._dtype is not r._dtype:
            if has_data(v) and not _on_cuda(v):
                # (masked_fill_ takes a CPU value as a number: one r's dtype cannot hold
                # raises PyTorch's overflow error, even when the mask selects nothing)
                _check_scalar_fits(_item(v), r._dtype, v._dtype.is_floating_point, True)
            v = _to_dtype(v, r._dtype, False)
    else:
        if v is r and not strict and v._ndim and v._shape[0] == 1:
            # x[idx] = x: PyTorch's subscript hands index_put_ the value with its leading
            # size-1 dims sliced off, a tensor of its own, so only shared memory counts
            _assert_no_overlap(r, make_view(v, v._ndim, v._shape, v._strides, v._offset))
        else:
            _assert_no_overlap(r, v)
        for u in users:
            _assert_no_overlap(r, <TensorBase>u)
    for d, it, is_mask in adv:
        if is_mask:
            _check_mask_shape(r, <TensorBase>it, d)
        elif not _is_index_dtype((<TensorBase>it)._dtype.code):
            raise IndexError(_INDEX_DTYPE_MSG)
    dims, B, offs, pos = _adv_resolve(r, adv, v, not strict, r)
    if v._storage is r._storage:
        v = _contiguous_copy(v)          # shares memory in a way we cannot judge: read a copy
    prepare_write(r, None)
    _plan_scatter(r, dims, B, offs, pos, v, TL_IDX_ADD if accumulate else TL_IDX_COPY, 1,
                  not strict)
    return 0


cdef int _index_set(TensorBase t, object index, object value) except -1:
    r, adv, users = _index_parse(t, _index_tuple(index), False)
    cdef TensorBase dst = <TensorBase>r
    if adv:
        return _index_write(dst, adv, users, value, False, False)
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


cdef tuple _index_put_parse(TensorBase self, object indices, str op):
    """index_put_'s indices: a tuple/list of tensors, each indexing the next dim(s)."""
    if isinstance(indices, TensorBase) or not isinstance(indices, (tuple, list)):
        raise TypeError(f"{op}(): argument 'indices' (position 1) must be tuple of Tensors, not "
                        f"{_tname(indices)}")
    cdef list adv = []
    cdef list users = []
    cdef int dim = 0, i
    cdef TensorBase it
    cdef bint internal = type(indices) is _PutIndices
    for k, x in enumerate(indices):
        if x is None and internal:
            dim += 1                    # a dim taken whole (x[:, idx] = v)
            continue
        if not isinstance(x, TensorBase):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got "
                            f"{_pytype_name(x)}")
        it = <TensorBase>x
        users.append(it)
        if it._dtype.code == DT_BOOL or it._dtype.code == DT_UINT8:
            if dim + it._ndim > self._ndim:
                raise IndexError(f"too many indices for tensor of dimension {self._ndim}")
            # (the mask's shape is checked by _index_write, in PyTorch's order)
            if it._ndim == 0:
                # PyTorch: a lone 0-d bool mask selects the whole tensor (True) or nothing
                if len(indices) != 1 or it._dtype.code != DT_BOOL:
                    raise IndexError(f"{op}(): a 0-dimensional boolean index is only supported "
                                     f"alone")
                adv.append((dim, it, True))
                continue
            adv.append((dim, it, True))
            dim += it._ndim
        elif _is_index_dtype(it._dtype.code):
            if dim + 1 > self._ndim:
                raise IndexError(f"too many indices for tensor of dimension {self._ndim}")
            adv.append((dim, it, False))
            dim += 1
        else:
            raise IndexError(_INDEX_DTYPE_MSG)
    return (adv, users)


cdef TensorBase _index_put(TensorBase self, object indices, TensorBase values, bint accumulate,
                           bint inplace):
    adv, users = _index_put_parse(self, indices, "index_put_" if inplace else "index_put")
    cdef TensorBase target = self if inplace else _clone(self)
    cdef TensorBase v
    if not adv or (adv[0][2] and (<TensorBase>adv[0][1])._ndim == 0):
        # no indices, or a lone 0-d mask: the whole tensor (or, for False, nothing)
        v = _value_tensor(values, target)
        _value_strides(target, [], (), 0, v, False, NULL)
        if adv and not _item(<TensorBase>adv[0][1]):
            return target
        _assert_no_overlap(target, v)
        if accumulate:
            # every element is indexed once: a gather-free add through the index kernel
            offs = _new_empty((), dtype_of(DT_INT64), CPU)
            (<int64_t*>tensor_data(offs))[0] = 0
            if v._storage is target._storage:
                v = _contiguous_copy(v)
            prepare_write(target, None)
            _plan_scatter(target, [], (), offs, 0, v, TL_IDX_ADD)
        else:
            prepare_write(target, v)
            _copy_into(target, v)
        return target
    _index_write(target, adv, users, values, accumulate, True)
    return target


# ---------------------------------------------------------------------------------------------
# index_select / index_add_ / index_copy_ / index_fill_

cdef TensorBase _index_vector(TensorBase index, str op, bint long_only, object err_cls,
                              str dtype_msg):
    """An index argument that must be a vector (or a scalar) of an allowed dtype (the rank is
    checked first, as in PyTorch)."""
    if index._ndim > 1:
        if op.startswith("index_copy"):
            raise IndexError(f"{op}(): Index should have dimension 1 or 0 (got {index._ndim})")
        raise IndexError(f"{op}(): Index is supposed to be a vector, but got dim: {index._ndim} "
                         f"with type: {_tname_short(index._dtype)} and size: {list(index.shape)}")
    if long_only:
        if index._dtype.code != DT_INT64:
            raise err_cls(dtype_msg.format(got=_tname_short(index._dtype)))
    elif not _is_index_dtype(index._dtype.code):
        raise err_cls(dtype_msg.format(got=_tname_short(index._dtype)))
    return _reshape(index, (-1,)) if index._ndim == 0 else index


cdef TensorBase _as_1d(TensorBase t):
    """0-d tensors act as 1-d of size 1 in the dim-wise index ops."""
    return _reshape(t, (1,)) if t._ndim == 0 else t


cdef object _index_error_for(TensorBase self, TensorBase idx, int d, bint is_select):
    """The bounds error of index_select / index_add_. PyTorch words it by code path: "index
    out of range in self" (IndexError) on most, a RuntimeError on others; we follow its
    choice and add the value and size."""
    def err(k, v, s):
        # (PyTorch's dim-1 fast path, and its path for an empty self, check with a
        # RuntimeError)
        if is_select and self._ndim > 1 and (d == 1 or self._numel == 0):
            return RuntimeError(f"INDICES element is out of DATA bounds, id={v} axis_dim={s}")
        if is_select or idx._dtype.code == DT_INT32 or self._ndim <= 1:
            return IndexError(f"index out of range in self (index {v} for dimension {d} with "
                              f"size {s})")
        return RuntimeError(f"index {v} is out of bounds for dimension {d} with size {s}")
    return err


cdef TensorBase _index_select(TensorBase self, int64_t dim, TensorBase index, object out):
    cdef int d = _wrap_dim(dim, self._ndim)
    cdef TensorBase idx = _index_vector(index, "index_select", False, RuntimeError,
                                        "index_select(): Expected dtype int32 or int64 for index")
    cdef TensorBase src
    cdef int64_t n
    if self._ndim == 0:
        if idx._numel != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                               f"{idx._numel} value(s)")
        _offsets((1,), [idx], [1], [0], False,
                 lambda k, v, s: IndexError("index out of range in self"), False,
                 self._storage.device)
        res = _clone(self)
        if out is None:
            return res
        src = _out_for(out, self._dtype, "index_select(): self and result must have the same "
                       "scalar type (expected {expected}, got {got})", (self, index), 0, NULL)
        _copy_into(src, res)
        return src
    n = idx._shape[0]
    if self._ndim > 1 and self._shape[d] == 0 and n > 0:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    offs = _offsets((n,), [idx], [self._shape[d]], [1], False,
                    _index_error_for(self, idx, d, True), False, self._storage.device)
    return _plan_gather(self, [d], (n,), offs, d, out,
                        "index_select(): self and result must have the same scalar type "
                        "(expected {expected}, got {got})", (self, index), self._strides[d])


cdef int _check_index_source(TensorBase self, int d, TensorBase idx, TensorBase source,
                             str op) except -1:
    cdef TensorBase s1 = _as_1d(self), src1 = _as_1d(source)
    cdef int i
    if src1._ndim != s1._ndim:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding "
                           f"the specified dimension. Got self.shape = {list(self.shape)} "
                           f"source.shape = {list(source.shape)}")
    for i in range(s1._ndim):
        if i != d and s1._shape[i] != src1._shape[i]:
            raise RuntimeError(f"source tensor shape must match self tensor shape, "
                               f"excluding the specified dimension. Got self.shape = "
                               f"{list(self.shape)} source.shape = {list(source.shape)}")
    if idx._shape[0] != src1._shape[d]:
        if op.startswith("index_copy"):
            raise IndexError(f"{op}(): Number of indices ({idx._shape[0]}) should be equal to "
                             f"source.size(dim) ({src1._shape[d]})")
        raise RuntimeError(f"{op}(): Number of indices ({idx._shape[0]}) should be equal to "
                           f"source.size(dim): ({src1._shape[d]}), for dim: {d}")
    return 0


cdef TensorBase _index_accumulate(TensorBase self, int64_t dim, TensorBase index,
                                  TensorBase source, object alpha, bint inplace, object out,
                                  int mode):
    """index_add (mode 0) and index_copy (mode 1), in place or into a copy/out=."""
    cdef str op = ("index_add" if mode == 0 else "index_copy") + ("_" if inplace else "")
    cdef TensorBase idx, target, s1, src
    cdef int d = _wrap_dim(dim, self._ndim)
    if mode == 0:
        idx = _index_vector(index, op, False, RuntimeError,
                            op + "(): Expected dtype int32/int64 for index but got {got}")
        if source._dtype is not self._dtype:
            raise RuntimeError(f"{op}(): self ({_tname_short(self._dtype)}) and source "
                               f"({_tname_short(source._dtype)}) must have the same scalar type")
    else:
        if index._ndim <= 1 and self._ndim > 0 and source._ndim > 0 and source._ndim != self._ndim:
            raise IndexError(f"{op}(): When source and destination are not scalars, their "
                             f"dimensionality must match. Source dimensionality ({source._ndim}), "
                             f"destination dimensionality ({self._ndim})")
        idx = _index_vector(index, op, True, RuntimeError,
                            op + "(): Expected a long tensor for index, but got {got}")
        if source._dtype is not self._dtype:
            raise RuntimeError(f"{op}(): self and source expected to have the same dtype, but got "
                               f"(self) {_tname_short(self._dtype)} and (source) "
                               f"{_tname_short(source._dtype)}")
    if mode == 0 and source._ndim != self._ndim:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(self.shape)} "
                           f"source.shape = {list(source.shape)}")
    _check_index_source(self, d, idx, source, op)
    s1 = _as_1d(self)
    if mode == 0:
        err = _index_error_for(self, idx, d, False)
    else:
        err = lambda k, v, s: IndexError(f"{op}(): index {v} is out of bounds for dimension {d} "
                                         f"with size {s}")
    offs = _offsets((idx._shape[0],), [idx], [s1._shape[d]], [1], False, err, False,
                    self._storage.device)
    target = _inplace_target(self, inplace, out, op, (index, source))
    s1 = _as_1d(target)
    if inplace:
        _assert_no_overlap(target, idx)
        _assert_no_overlap(target, source)
    src = _as_1d(source)
    if src._storage is target._storage or (mode == 0 and alpha is not None and not _is_one(alpha)):
        src = _contiguous_copy(src)
        if mode == 0 and alpha is not None and not _is_one(alpha):
            _scale_raw(src, alpha)
    prepare_write(target, None)
    _plan_scatter(s1, [d], (idx._shape[0],), offs, d, src,
                  TL_IDX_ADD if mode == 0 else TL_IDX_COPY, s1._strides[d])
    return target


cdef bint _is_one(object alpha):
    return not isinstance(alpha, TensorBase) and alpha == 1


cdef int _scale_raw(TensorBase t, object alpha) except -1:
    """t (contiguous, fresh) *= alpha with alpha cast to t's dtype as PyTorch does."""
    cdef double ad = 0.0
    cdef int64_t ai = 0
    if isinstance(alpha, TensorBase):
        if not has_data(<TensorBase>alpha):
            return 0                  # (a meta alpha: t is meta too)
        alpha = _item(<TensorBase>alpha)
    if t._dtype.is_floating_point:
        ad = float(alpha)
    else:
        if isinstance(alpha, float) and t._dtype.code != DT_BOOL:
            if alpha != alpha or alpha in (float("inf"), float("-inf")):
                raise RuntimeError(f"value cannot be converted to type {t._dtype.name} without overflow")
        ai = int(alpha)
    if _on_cuda(t):
        # (a device multiply by the alpha cast as above: the same products as the CPU's
        # scale loop, which the CUDA back end does not have)
        _mul_inplace(t, ad if t._dtype.is_floating_point else (bool(ai) if t._dtype.code
                                                                 == DT_BOOL else ai))
        return 0
    return backend_of(t).scale(t, ad, ai)


cdef object _mul_inplace(TensorBase t, object alpha):
    import tensorlib
    with tensorlib.no_grad():
        (<object>t).mul_(alpha)


cdef TensorBase _inplace_target(TensorBase self, bint inplace, object out, str op, tuple inputs):
    """Where an in-place style op writes: self, a clone of self, or out= holding a copy of self."""
    cdef TensorBase o
    if inplace:
        return self
    if out is None:
        return _clone(self)
    o = _targ(out, op, "out", 0)
    if o._dtype is not self._dtype:
        raise RuntimeError(f"{op}(): Expected out tensor to have dtype {self._dtype.name}, but got "
                           f"{o._dtype.name} instead")
    for x in inputs:
        if x is not None:
            _assert_no_overlap(o, <TensorBase>x)
    _resize_out(o, self._ndim, self._shape)
    prepare_write(o, self)
    _copy_into(o, self)
    return o


cdef TensorBase _index_fill(TensorBase self, int64_t dim, TensorBase index, object value,
                            bint inplace):
    cdef str op = "index_fill_" if inplace else "index_fill"
    cdef TensorBase idx, target, v, s1
    _sarg(value, op, "value", 3)           # a Number or a Tensor, checked first as PyTorch
    cdef int d = _wrap_dim(dim, self._ndim)
    if index._dtype.code != DT_INT64:
        raise IndexError(f"{op}(): Expected dtype int64 for index.")
    if index._ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    idx = _reshape(index, (-1,))
    if isinstance(value, TensorBase) and (<TensorBase>value)._ndim != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {(<TensorBase>value)._ndim} dimension(s).")
    s1 = _as_1d(self)
    offs = _offsets((idx._shape[0],), [idx], [s1._shape[d]], [1], True,
                    lambda k, v, s: IndexError(f"index {v} is out of bounds for dimension {d} "
                                               f"with size {s}"), False, self._storage.device)
    target = self if inplace else _clone(self)
    if inplace:
        _assert_no_overlap(target, idx)
    v = empty_tensor(0, NULL, self._dtype, self._storage.device)
    _fill_raw(v, value)
    prepare_write(target, None)
    s1 = _as_1d(target)
    _plan_scatter(s1, [d], (idx._shape[0],), offs, d, v, TL_IDX_COPY, s1._strides[d])
    return target


# ---------------------------------------------------------------------------------------------
# gather / scatter / scatter_add / scatter_reduce: one index per element, along one dim

cdef int _check_gather_shapes(TensorBase self, int d, TensorBase index, TensorBase src,
                              bint is_gather) except -1:
    cdef int nd = self._ndim if self._ndim > 0 else 1
    cdef int ni = index._ndim if index._ndim > 0 else 1
    cdef int ns, i
    cdef int64_t si, ss, sx
    if ni != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as "
                           + ("input" if is_gather else "self") + " tensor")
    if src is not None:
        ns = src._ndim if src._ndim > 0 else 1
        if ni > ns:
            # (PyTorch reads src's size along every index dim first: an IndexError)
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ns}, "
                             f"{ns - 1}], but got {ns})")
        if ni != ns:
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if index._numel == 0:
        return 0
    for i in range(nd):
        si = index._shape[i] if index._ndim > 0 else 1
        ss = self._shape[i] if self._ndim > 0 else 1
        if is_gather:
            if i != d and si > ss:
                raise RuntimeError(f"Size does not match at dimension {i} expected index "
                                   f"{list(index.shape)} to be no larger than self "
                                   f"{list(self.shape)} apart from dimension {d}")
        else:
            sx = (src._shape[i] if src._ndim > 0 else 1) if src is not None else si
            if (i != d and si > ss) or si > sx:
                raise RuntimeError(f"Expected index {list(index.shape)} to be no larger than self "
                                   f"{list(self.shape)} apart from dimension {d}"
                                   + (f" and to be no larger size than src {list(src.shape)}"
                                      if src is not None else ""))
    return 0


cdef TensorBase _dim_indices(TensorBase index, int64_t size, int d, str op, TensorBase writes=None,
                             Device dev=None):
    """index's values checked against [0, size). An int64 index that the op will not write
    (``writes`` is the written tensor) is read in place after one checking pass; otherwise
    a private contiguous int64 copy is made (int32 values, or memory shared with ``writes``)."""
    if not _is_index_dtype(index._dtype.code):
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
    B = tuple(index.shape)
    err = lambda k, v, s: RuntimeError(f"index {v} is out of bounds for dimension {d} with size {s}")
    if index._dtype.code == DT_INT64 and (writes is None or index._storage is not writes._storage):
        _offsets(B, [index], [size], [1], False, err, True, dev)
        return index
    return _offsets(B, [index], [size], [1], False, err, False, dev)


cdef TensorBase _gather(TensorBase self, int64_t dim, TensorBase index, bint sparse_grad, object out):
    cdef int d = _wrap_dim(dim, self._ndim), i, nd
    cdef TensorBase s1, idx, res, o = None
    cdef int64_t shape[MAX_DIMS]
    cdef int64_t sst[MAX_DIMS]
    cdef int64_t ist[MAX_DIMS]
    cdef int64_t dst[MAX_DIMS]
    if not _is_index_dtype(index._dtype.code):
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    _check_gather_shapes(self, d, index, None, True)
    s1 = _as_1d(self)
    idx = _dim_indices(index, s1._shape[d], d, "gather", None, self._storage.device)
    nd = index._ndim
    for i in range(nd):
        shape[i] = index._shape[i]
        sst[i] = 0 if i == d else s1._strides[i] * self._dtype.itemsize
        ist[i] = idx._strides[i]
    if out is not None:
        o = _out_for(out, self._dtype, "Expected out tensor to have dtype {expected}, but got "
                     "{got} instead", (self, index), nd, shape)
    res = o if (o is not None and not _shares_any(o, (self, index))) else \
        empty_tensor(nd, shape, self._dtype, self._storage.device)
    for i in range(nd):
        dst[i] = res._strides[i] * self._dtype.itemsize
    _run_index(res, (self, idx), nd, shape, tensor_data(res), dst, tensor_data(self), sst,
               <int64_t*>tensor_data(idx), ist, s1._strides[d] * self._dtype.itemsize,
               TL_IDX_SIDE_SRC, self._dtype.code, TL_IDX_COPY)
    if o is not None and res is not o:
        _copy_into(o, res)
        return o
    return res


cdef int _scatter_raw(TensorBase target, int d, TensorBase idx, TensorBase src, int op) except -1:
    """target[... idx ...] (op)= src over idx's shape (validated int64 contiguous idx)."""
    cdef TensorBase t1 = _as_1d(target)
    cdef int nd = idx._ndim, i
    cdef int64_t shape[MAX_DIMS]
    cdef int64_t tst[MAX_DIMS]
    cdef int64_t sst[MAX_DIMS]
    cdef int64_t ist[MAX_DIMS]
    for i in range(nd):
        shape[i] = idx._shape[i]
        tst[i] = 0 if i == d else t1._strides[i] * target._dtype.itemsize
        sst[i] = (src._strides[i] if src._ndim > 0 else 0) * src._dtype.itemsize
        ist[i] = idx._strides[i]
    _run_index(target, (src, idx), nd, shape, tensor_data(target), tst, tensor_data(src), sst,
               <int64_t*>tensor_data(idx), ist, t1._strides[d] * target._dtype.itemsize,
               TL_IDX_SIDE_DST, target._dtype.code, op)
    return 0


cdef tuple _scatter_prepare(TensorBase self, int64_t dim, TensorBase index, object src,
                            object value, str op, object out=None):
    """Common checks of the scatter family: (dim, validated index, src tensor or 0-d value)."""
    cdef TensorBase s = None, idx
    cdef int d
    if src is not None and value is not None:
        raise TypeError(f"{op}() got both 'src' and 'value'")
    if src is None:
        src = value
    if src is None:
        raise TypeError(f"{op}() missing required argument 'src' or 'value'")
    d = _wrap_dim(dim, self._ndim)
    if not _is_index_dtype(index._dtype.code):
        raise RuntimeError(f"{op.rstrip('_')}(): Expected dtype int32/int64 for index")
    if isinstance(src, TensorBase):
        s = <TensorBase>src
        if s._dtype is not self._dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        _check_gather_shapes(self, d, index, s, False)
    else:
        _check_gather_shapes(self, d, index, None, False)
        s = empty_tensor(0, NULL, self._dtype, self._storage.device)
        _fill_raw(s, src)
    # the tensor written is self (in place) or out=: an index sharing its memory is copied
    idx = _dim_indices(index, _as_1d(self)._shape[d], d, op.rstrip('_'),
                       <TensorBase>out if isinstance(out, TensorBase) else self,
                       self._storage.device)
    return (d, idx, s)


cdef int _scatter_op_code(object reduce, bint is_tensor_src) except -1:
    if reduce is None:
        return TL_IDX_COPY
    if is_tensor_src:
        warnings.warn("The reduce argument of tensorlib.scatter with Tensor src is deprecated and "
                      "will be removed in a future release. Use tensorlib.scatter_reduce instead "
                      "for more reduction options.", UserWarning, stacklevel=1)
    if reduce == "add":
        return TL_IDX_ADD
    if reduce == "multiply":
        return TL_IDX_MUL
    raise RuntimeError("reduce argument must be either add or multiply.")


cdef TensorBase _scatter(TensorBase self, int64_t dim, TensorBase index, object src, object value,
                         object reduce, object out, bint inplace):
    cdef str op = "scatter_" if inplace else "scatter"
    d, idx, s = _scatter_prepare(self, dim, index, src, value, op, out)
    cdef int code = _scatter_op_code(reduce, isinstance(src, TensorBase))
    return _scatter_finish(self, d, idx, s, index, code, inplace, out, op)


cdef TensorBase _scatter_finish(TensorBase self, int d, TensorBase idx, TensorBase s,
                                TensorBase index, int code, bint inplace, object out, str op):
    cdef TensorBase target = _inplace_target(self, inplace, out, op, (index, s))
    _assert_no_overlap(target, index)
    _assert_no_overlap(target, s)
    if s._storage is target._storage:
        s = _contiguous_copy(s)
    prepare_write(target, None)
    _scatter_raw(target, d, idx, s, code)
    return target


cdef TensorBase _scatter_add(TensorBase self, int64_t dim, TensorBase index, TensorBase src,
                             object out, bint inplace):
    cdef str op = "scatter_add_" if inplace else "scatter_add"
    d, idx, s = _scatter_prepare(self, dim, index, src, None, op, out)
    return _scatter_finish(self, d, idx, s, index, TL_IDX_ADD, inplace, out, op)


_REDUCE_CODES = {"sum": TL_IDX_ADD, "prod": TL_IDX_MUL, "mean": TL_IDX_ADD,
                 "amax": TL_IDX_MAX, "amin": TL_IDX_MIN}


cdef object _reduce_identity(DType dt, str reduce):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dt.code == DT_BOOL:
        return reduce == "amin"
    if dt.is_floating_point:
        return float("-inf") if reduce == "amax" else float("inf")
    lo, hi = _INT_RANGE[dt.code] if dt.code != DT_INT64 else (-(1 << 63), (1 << 63) - 1)
    return lo if reduce == "amax" else hi


cdef TensorBase _scatter_reduce(TensorBase self, int64_t dim, TensorBase index, TensorBase src,
                                str reduce, bint include_self, object out, bint inplace):
    cdef str op = "scatter_reduce_" if inplace else "scatter_reduce"
    cdef TensorBase target, ident, counts, one
    cdef int64_t cst[MAX_DIMS]
    cdef int64_t tst[MAX_DIMS]
    cdef int i
    if reduce not in _REDUCE_CODES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if reduce == "mean" and self._dtype.code == DT_BOOL:
        raise NotImplementedError('"scatter_reduce" with reduce="mean" is not implemented for '
                                  "'Bool'")
    d, idx, s = _scatter_prepare(self, dim, index, src, None, op, out)
    target = _inplace_target(self, inplace, out, op, (index, s))
    _assert_no_overlap(target, index)
    _assert_no_overlap(target, s)
    if (<TensorBase>s)._storage is target._storage:
        s = _contiguous_copy(s)
    prepare_write(target, None)
    if not include_self:
        ident = empty_tensor(0, NULL, self._dtype, self._storage.device)
        _fill_raw(ident, _reduce_identity(self._dtype, reduce))
        _scatter_raw(target, d, idx, ident, TL_IDX_COPY)
    _scatter_raw(target, d, idx, s, _REDUCE_CODES[reduce])
    if reduce == "mean":
        counts = _new_empty(tuple(_as_1d(target).shape), dtype_of(DT_INT64),
                            target._storage.device)
        _fill_raw(counts, 1 if include_self else 0)
        one = empty_tensor(0, NULL, dtype_of(DT_INT64), target._storage.device)
        _fill_raw(one, 1)
        _scatter_raw(counts, d, idx, one, TL_IDX_ADD)
        for i in range(counts._ndim):
            tst[i] = _as_1d(target)._strides[i] * self._dtype.itemsize
        if _on_cuda(target):
            _cuda_idx().div_counts(list(counts.shape), <uintptr_t>tensor_data(target),
                                   [tst[i] for i in range(counts._ndim)], self._dtype.code,
                                   <uintptr_t>tensor_data(counts), list(counts.stride()))
        elif has_data(target):
            host_index_div_counts(counts._ndim, counts._shape, tensor_data(target), tst,
                                self._dtype.code, <int64_t*>tensor_data(counts),
                                counts._strides)
    return target


# ---------------------------------------------------------------------------------------------
# masked_select / masked_scatter_

cdef TensorBase _masked_select(TensorBase self, TensorBase mask, object out):
    if mask._dtype.code != DT_BOOL:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _broadcast_shape_of((self, mask))
    cdef TensorBase s = _expand(self, shape), m = _expand(mask, shape), res, o
    cdef int64_t sh[1]
    res = _masked_gather(s, m)
    if out is None:
        return res
    sh[0] = res._numel
    o = _out_for(out, self._dtype, "masked_select(): self and result must have the same scalar "
                 "type (expected {expected}, got {got})", (self, mask), 1, sh)
    _copy_into(o, res)
    return o


cdef TensorBase _masked_scatter(TensorBase self, TensorBase mask, TensorBase source, bint inplace):
    cdef str op = "masked_scatter_" if inplace else "masked_scatter"
    cdef TensorBase target, m, src
    cdef int64_t n
    if mask._dtype.code != DT_BOOL:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_tname_short(mask._dtype)}")
    if source._dtype is not self._dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got "
                           f"{_tname_short(self._dtype)} and {_tname_short(source._dtype)}")
    if inplace:
        target = self
    else:
        target = _contiguous_copy(_expand(self, _broadcast_shape_of((self, mask))))
    m = _expand(mask, tuple(target.shape))
    if not has_data(m) or not has_data(target):
        if has_data(target):
            same_device(target, m, op)
        prepare_write(target, None)       # (meta: which elements are written is unknown)
        return target
    offs = _nonzero_buffer(m, [target._strides[i] for i in range(target._ndim)])
    n = offs._shape[0]
    if n > source._numel:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    src = source
    if not src._contiguous or src._storage is target._storage:
        src = _contiguous_copy(src)
    prepare_write(target, None)
    _plan_scatter(_flat1(target), [0], (n,), offs, 0, _slice(_reshape(src, (-1,)), 0, 0, n, 1),
                  TL_IDX_COPY)
    return target


# ---------------------------------------------------------------------------------------------
# nonzero / argwhere

cdef object _nonzero(TensorBase self, object out, bint as_tuple):
    cdef TensorBase buf, res
    cdef int64_t n
    cdef int64_t sh[2]
    cdef int64_t st[2]
    if as_tuple:
        if out is not None:
            raise RuntimeError("nonzero does not support the out kwarg when as_tuple is True")
        buf = _nonzero_buffer(_as_1d(self), None)
        return tuple([_select(buf, 0, i) for i in range(buf._shape[0])])
    buf = _nonzero_buffer(self, None)
    n = buf._shape[1]
    # PyTorch's layout: (N, ndim) with strides (1, N), i.e. the (ndim, N) buffer transposed
    sh[0] = n
    sh[1] = self._ndim
    st[0] = 1
    st[1] = n
    res = _alloc_object()
    _set_geometry(res, 2, sh, st)
    res._storage = buf._storage
    res._offset = 0
    res._dtype = buf._dtype
    res._vc = _new_vc()
    if out is None:
        return res
    o = _targ(out, "nonzero", "out", 0)
    if (<TensorBase>o)._dtype.code != DT_INT64:
        raise RuntimeError(f"nonzero: Expected out tensor to have scalar type Long but got scalar "
                           f"type {_tname_short((<TensorBase>o)._dtype)}")
    return _into_out(res, o, "nonzero")


# ---------------------------------------------------------------------------------------------
# take / put_

cdef TensorBase _linear_offsets(TensorBase self, TensorBase index, str op):
    """index's values as element offsets into self read in C order (negative wrap)."""
    if index._dtype.code != DT_INT64:
        raise RuntimeError(f"{op}(): Expected a long tensor for index, but got "
                           f"{_tname_short(index._dtype)}")
    cdef int64_t numel = self._numel
    B = tuple(index.shape)
    offs = _offsets(B, [index], [numel], [1], True,
                    lambda k, v, s: IndexError(f"out of range: tried to access index {v} on a "
                                               f"tensor of {s} elements."), False,
                    self._storage.device)
    if not self._contiguous and _on_cuda(offs):
        _cuda_idx().linear_to_offsets(offs, list(self.shape), list(self.stride()))
    elif not self._contiguous and has_data(offs):
        host_linear_to_offsets(offs._numel, <int64_t*>tensor_data(offs), self._ndim, self._shape,
                             self._strides)
    return offs


cdef TensorBase _take(TensorBase self, TensorBase index, object out):
    offs = _linear_offsets(self, index, "take")
    cdef int64_t n = offs._numel
    if out is not None and (<TensorBase>_targ(out, "take", "out", 0))._dtype is not self._dtype:
        raise RuntimeError(f"take(): self and out expected to have the same dtype, but got "
                           f"self.dtype = {_tname_short(self._dtype)} and out.dtype = "
                           f"{_tname_short((<TensorBase>out)._dtype)}")
    return _plan_gather(_flat1(self), [0], tuple(index.shape), offs, 0, out, "{expected}{got}",
                        (self, index))


cdef TensorBase _put(TensorBase self, TensorBase index, TensorBase source, bint accumulate,
                     bint inplace):
    cdef str op = "put_" if inplace else "put"
    cdef TensorBase target, src
    if source._dtype is not self._dtype:
        raise RuntimeError(f"{op}(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_tname_short(self._dtype)} and source.dtype = "
                           f"{_tname_short(source._dtype)}")
    if index._dtype.code != DT_INT64:
        raise RuntimeError(f"{op}(): Expected a long tensor for index, but got "
                           f"{_tname_short(index._dtype)}")
    if source._numel != index._numel:
        raise IndexError(f"{op}(): Expected source and index to have the same number of elements, "
                         f"but got source.numel() = {source._numel}, index.numel() = "
                         f"{index._numel}")
    target = self if inplace else _clone(self)
    offs = _reshape(_linear_offsets(target, index, op), (-1,))
    if inplace:
        _assert_no_overlap(target, index)
        _assert_no_overlap(target, source)
    src = _reshape(source, (-1,))
    if src._storage is target._storage:
        src = _contiguous_copy(src)
    prepare_write(target, None)
    _plan_scatter(_flat1(target), [0], (offs._numel,), offs, 0, src, TL_IDX_ADD if accumulate else TL_IDX_COPY)
    return target


# ---------------------------------------------------------------------------------------------
# x[advanced index] = v with autograd: recorded as index_put_ (as PyTorch does), on the view
# the basic part of the subscript selects

class _PutIndices(tuple):
    """index_put_'s indices built from a subscript: a None entry takes a dim whole (the ``:``
    of ``x[:, idx]``). Only made internally; the public index_put_ takes tensors only, as
    PyTorch's Python API does."""
    __slots__ = ()


cdef tuple _subscript_put(TensorBase t, object index):
    """(view, indices) such that ``view.index_put_(indices, v)`` is ``t[index] = v``. The view
    is t itself when the basic part of the subscript leaves t's geometry alone (``x[:, idx]``,
    ``x[..., idx]``: PyTorch's grad_fn is then IndexPutBackward0, not CopySlices)."""
    r, adv, users = _index_parse(t, _index_tuple(index), False)
    cdef TensorBase v = <TensorBase>r
    cdef list ind = []
    cdef int i, pos = 0, d
    cdef TensorBase it
    for d, it, is_mask in adv:
        while pos < d:
            ind.append(None)
            pos += 1
        ind.append(it)
        pos += it._ndim if is_mask else 1
    if v._ndim == t._ndim and v._offset == t._offset:
        for i in range(t._ndim):
            if v._shape[i] != t._shape[i] or v._strides[i] != t._strides[i]:
                break
        else:
            v = t
    return (v, _PutIndices(ind))


cdef int _recorded_write_check(TensorBase t) except -1:
    """The autograd checks of an in-place write into t that autograd records (t or the
    value requires grad), which PyTorch runs before the op looks at its indices: a leaf
    that requires grad, and how a view was made (under no_grad, or by split/chunk/unbind),
    the latter also when only the value requires grad."""
    _inplace_leaf_check(t)
    _check_view_rebase(t)
    return 0


cdef int _index_set_recorded(TensorBase t, object index, object value) except -1:
    """``t[index] = value`` for an advanced index while grad mode is on and t or the value
    requires grad: an index_put_ on the view of t the basic part selects (in place on a view,
    so t's base gets a CopySlices history), the value cast and stripped of leading size-1
    dims through recorded ops so its gradient flows back."""
    try:
        v_, ind = _subscript_put(t, index)
    except IndexError as e:
        if str(e) == _INDEX_DTYPE_MSG:
            _recorded_write_check(t)    # (PyTorch's autograd checks run before the kernel)
        raise
    cdef TensorBase r = <TensorBase>v_, v
    cdef int lead = 0
    if r is not t and _req(t):
        _record_getitem(t, r, None)        # the view carries t's history into the in-place op
    if isinstance(value, TensorBase):
        v = <TensorBase>value
        masked_fill = v._numel == 1 and len(ind) and all(
            x is None or (<TensorBase>x)._dtype.code in (DT_BOOL, DT_UINT8) for x in ind) \
            and sum(x is not None for x in ind) == 1
        if v._dtype is not r._dtype and masked_fill:
            v = v.to(r._dtype)              # (a masked_fill_ in PyTorch: see _is_masked_fill)
        # PyTorch's order: autograd, shared memory (index_put_'s, not masked_fill_'s), masks'
        # shapes, dtypes
        _recorded_write_check(r)
        if not masked_fill:
            _assert_no_overlap(r, v)
            for x in ind:
                if x is not None:
                    _assert_no_overlap(r, <TensorBase>x)
        for d, it, is_mask in (<tuple>_index_put_parse(r, ind, "index_put_"))[0]:
            if is_mask:
                _check_mask_shape(r, <TensorBase>it, d)
            elif r._shape[d] == 0 and (<TensorBase>it)._numel > 0:
                raise _adv_bounds_error(d, 0, 0)    # (before the dtypes, as in _adv_resolve)
        _value_tensor(v, r)                 # the dtypes must match (raises as PyTorch does)
        # the indexing result's rank: what leading size-1 dims of the value may be dropped to
        res_nd = _index_result_ndim(r, list(ind))
        while v._ndim - lead > res_nd and v._shape[lead] == 1:
            lead += 1
        if lead:
            v = v.reshape(tuple(v.shape)[lead:])
    else:
        v = _value_tensor(value, r)
    _call_index_put(r, ind, v, False, True)
    return 0


cdef int _index_result_ndim(TensorBase r, list ind) except -1:
    """The rank of r[ind]: r's dims not indexed, plus the broadcast rank of the indices (a
    mask contributes one dim)."""
    cdef int consumed = 0, nb = 0, k
    cdef TensorBase it
    for x in ind:
        if x is None:
            continue
        it = <TensorBase>x
        mask = it._dtype.code == DT_BOOL or it._dtype.code == DT_UINT8
        consumed += it._ndim if mask else 1
        k = 1 if mask else it._ndim
        nb = k if k > nb else nb
    return r._ndim - consumed + nb


# ---- backward helpers (autograd formulas in decl.py call these)

# PyTorch's placeholder node for an op it records but cannot differentiate (scatter with reduce=)
_NotImplementedNode = type("NotImplemented", (Node,), {"__slots__": (), "__module__": "tensorlib.autograd"})


_ErrorNode = type("Error", (Node,), {"__slots__": (), "__module__": "tensorlib.autograd"})


def _bw_error(Node node, tuple grads):
    raise RuntimeError(_saved_of(node)[0])


cdef object _error_node_output(TensorBase t, str msg):
    """t's values, with a node that raises ``msg`` if it is ever differentiated."""
    cdef TensorBase r = _alias(t, t._vc)
    cdef Node n = _new_node(_ErrorNode, _bw_error, (t,))
    n._saved = (msg,)
    _set_history(r, n)
    return r


def _zeros_of(sizes, like):
    return _GENERATED_FUNCTIONS["zeros"](tuple(sizes), dtype=like.dtype, device=like.device)


def _narrow_to(t, sizes):
    """The leading ``sizes`` block of t (the part of a scatter source the index reaches)."""
    sizes = tuple(sizes)
    if tuple(t.shape) == sizes:
        return t
    return t[tuple([slice(0, n) for n in sizes])]


def _pad_to(g, sizes):
    """g placed in the leading block of zeros of ``sizes`` (elements the op never read get 0)."""
    sizes = tuple(sizes)
    if tuple(g.shape) == sizes:
        return g
    return _embed_backward(g, sizes, lambda z: z[tuple([slice(0, n) for n in g.shape])])


def _index_select_backward(grad, sizes, dim, index):
    if len(sizes) == 0:
        return grad.reshape(())
    return _zeros_of(sizes, grad).index_add(dim, index, grad)


def _gather_backward(grad, sizes, dim, index):
    return _zeros_of(sizes, grad).scatter_add(dim, index, grad)


def _scatter_not_implemented(reduce):
    if reduce is not None:
        raise RuntimeError("derivative for aten::scatter is not implemented")


def _scatter_self_backward(grad, dim, index, reduce):
    _scatter_not_implemented(reduce)
    return grad.scatter(dim, index, 0)


def _scatter_src_backward(grad, dim, index, src_sizes, reduce):
    """src's gradient: what reached each written position. PyTorch fails when src is larger
    than index (a shape error in its engine); the elements the op never read get 0 here."""
    _scatter_not_implemented(reduce)
    return _pad_to(grad.gather(dim, index), src_sizes)


def _scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result, which):
    """Gradient of scatter_reduce for self (which=0) or src (which=1). Each output element is
    a reduction over a group: self's element (when include_self) and the src elements
    scattered there. sum/mean: the (averaged) gradient; prod: the product of the group's
    other elements (zeros included exactly); amax/amin: shared evenly by the elements equal
    to the result (PyTorch counts self's element among the ties even when include_self is
    False, and then gives self no gradient)."""
    s = _narrow_to(src, index.shape)
    dt = grad.dtype
    zeros_like = _GENERATED_FUNCTIONS["zeros_like"]
    where = _GENERATED_FUNCTIONS["where"]
    if reduce == "sum":
        gs, gsrc = grad, (grad.gather(dim, index) if which else None)
    elif reduce == "mean":
        base = _GENERATED_FUNCTIONS["ones_like"](self.detach()) if include_self else zeros_like(self.detach())
        count = base.scatter_add(dim, index, _GENERATED_FUNCTIONS["ones_like"](s.detach())).clamp(min=1)
        g = grad / count
        gs, gsrc = g, (g.gather(dim, index) if which else None)
    elif reduce in ("amax", "amin"):
        self_is = (self == result).to(dt)
        value = result.gather(dim, index)
        src_is = (s == value).to(dt)
        g = grad / self_is.scatter_add(dim, index, src_is)
        gs = g * self_is
        gsrc = g.gather(dim, index) * src_is if which else None
    elif reduce == "prod":
        gs = gsrc = None
        if which == 0 and include_self:
            # the product of the others in self's group: the src values scattered there (no
            # division, so zeros are exact and the formula does not read self)
            gs = grad * _GENERATED_FUNCTIONS["ones_like"](self.detach()).scatter_reduce(
                dim, index, s, "prod")
        elif which == 0:
            gs = grad
        else:
            src_zero = s == 0
            zeros_in_group = zeros_like(self.detach()).scatter_add(
                dim, index, src_zero.to(dt)).gather(dim, index)
            lone_zero = src_zero & (zeros_in_group == 1)
            # a lone zero's others: the group's product with that zero read as 1
            without = self.scatter_reduce(dim, index, where(lone_zero, 1.0, s), "prod",
                                          include_self=include_self)
            gsrc = where(lone_zero, (grad * without).gather(dim, index),
                         (grad * result).gather(dim, index) / where(src_zero, 1.0, s))
            if _grad_on() and gsrc.requires_grad and bool((zeros_in_group > 1).any()):
                # exact to first order only when zeros repeat in a group: differentiating it
                # again raises (PyTorch's Error node)
                gsrc = _error_node_output(gsrc, "scatter_reduce(): Double backward is "
                                          "unsupported for src when >1 zeros in src are "
                                          "scattered to the same position in self")
    else:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if which:
        return _pad_to(gsrc, src.shape)
    if not include_self:
        gs = gs.scatter(dim, index, 0)       # self's elements that were written over
    return gs


def _index_source_backward(grad, dim, index, source_sizes, alpha):
    """index_add/index_copy: each source slice gets the gradient of the slice it went to."""
    g = grad.index_select(dim, index) if grad.dim() else grad
    return _scale(g, alpha).reshape(tuple(source_sizes))


def _index_fill_value_backward(grad, dim, index):
    """The filled positions' gradients summed (each position once, repeated indices or not)."""
    return (grad - grad.index_fill(dim, index, 0)).sum()


def _put_subscript(indices):
    """index_put_'s indices as a subscript of x[...]."""
    return tuple([slice(None) if i is None else i for i in indices])


def _index_put_self_backward(grad, indices, accumulate):
    if accumulate:
        return grad
    return grad.index_put(indices, _GENERATED_FUNCTIONS["zeros"]((), dtype=grad.dtype, device=grad.device))


def _index_put_values_backward(grad, indices):
    # broadcast values: the engine sums the gradient back to the values' shape
    return grad[_put_subscript(indices)]


def _masked_select_backward(grad, sizes, mask):
    z = _zeros_of(sizes, grad)
    if tuple(mask.shape) != tuple(sizes):
        z = z.expand(_broadcast_shape_of((z, mask))).contiguous()
    return z.masked_scatter(mask, grad)


def _masked_scatter_source_backward(grad, mask, source_sizes):
    """The gradients of the masked positions in order; source elements never read get 0."""
    g = grad.masked_select(mask)
    total = 1
    for n in source_sizes:
        total *= n
    if g.numel() < total:
        g = _GENERATED_FUNCTIONS["cat"]([g, _zeros_of((total - g.numel(),), grad)])
    return g.reshape(tuple(source_sizes))


def _take_backward(grad, sizes, index):
    return _zeros_of(sizes, grad).put(index, grad, accumulate=True)


def _put_self_backward(grad, index, accumulate):
    if accumulate:
        return grad
    return grad.put(index, _zeros_of(tuple(index.shape), grad))


# ---------------------------------------------------------------------------------------------
# the indexing family's part of TensorBase's subscripts (installed in the tensor module)

def _bw_advanced_index(Node node, tuple grads):
    cdef tuple s = _saved_of(node)
    sizes, index = s
    # (each raises once the graph was freed, or when the tensor was written in place since)
    if isinstance(index, tuple):
        index = tuple([_unpack(i, node) for i in index])
    else:
        index = _unpack(index, node)
    grad = grads[0]
    z = _GENERATED_FUNCTIONS["zeros"](sizes, dtype=grad.dtype, device=grad.device)
    # repeated indices accumulate: z[index] += grad as index_put_ (accumulate=True) on the view
    # the subscript's basic part selects (recorded, so create_graph gives double backward)
    r, ind = _subscript_put(z, index)
    _call_index_put(r, ind, grad, True, True)
    return (z,)


cdef object _adv_getitem(TensorBase t, object index):
    """``t[index]`` for an index that is not basic (indexing.pxi decides)."""
    return _index_get(t, _index_tuple(index))


_set_advanced_indexing(_adv_getitem, _index_set, _index_set_recorded)
