# View ops: new geometry over the same storage, never a copy. Each returns make_view(...),
# which shares the storage and version counter and records the root base.
# (included into tensor.pyx)


cdef TensorBase _view_of(TensorBase src, shape, strides, int64_t offset):
    """make_view from Python sequences (for the less hot ops)."""
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int i, n = len(shape)
    if n > MAX_DIMS:
        raise RuntimeError(f"tensors of more than {MAX_DIMS} dimensions are not supported (got {n})")
    for i in range(n):
        sh[i] = shape[i]
        st[i] = strides[i]
    return make_view(src, n, sh, st, offset)


cdef list _shape_list(TensorBase t):
    return [t._shape[i] for i in range(t._ndim)]


cdef list _stride_list(TensorBase t):
    return [t._strides[i] for i in range(t._ndim)]


cdef int _infer_size(tuple shape, int64_t numel, int64_t* out) except -1:
    """Resolve one -1 in a requested shape against numel (PyTorch's infer_size)."""
    cdef int i, n = len(shape), infer = -1
    cdef int64_t s, newsize = 1
    if n > MAX_DIMS:
        raise RuntimeError(f"tensors of more than {MAX_DIMS} dimensions are not supported (got {n})")
    for i in range(n):
        s = shape[i]
        if s == -1:
            if infer >= 0:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s >= 0:
            if mul_overflow(newsize, s, &newsize):
                raise RuntimeError(f"shape '{list(shape)}' is invalid: its number of elements overflows int64")
        else:
            raise RuntimeError(f"invalid shape dimension {s}")
        out[i] = s
    if numel == newsize or (infer >= 0 and newsize > 0 and numel % newsize == 0):
        if infer >= 0:
            if newsize == 0:
                raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because "
                                   "the unspecified dimension size -1 can be any value and is ambiguous")
            out[infer] = numel // newsize
        return n
    if infer >= 0 and newsize == 0:
        raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because "
                           "the unspecified dimension size -1 can be any value and is ambiguous")
    raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")


cdef bint _compute_view_strides(TensorBase t, int nd, const int64_t* newshape, int64_t* newstride) noexcept:
    """PyTorch's view rule: the new shape must be expressible by splitting and merging dims
    within chunks of the old shape that are contiguous with each other. Size-1 dims never
    matter. Returns False when no view exists (then reshape() must copy)."""
    cdef int i, td, vd
    cdef int64_t chunk_base, tensor_numel, view_numel, expected
    if t._numel == 0:
        if nd == t._ndim and memcmp(newshape, t._shape, nd * sizeof(int64_t)) == 0:
            memcpy(newstride, t._strides, nd * sizeof(int64_t))      # same shape: keep (PyTorch)
            return True
        expected = 1
        for i in range(nd - 1, -1, -1):
            newstride[i] = expected
            expected *= newshape[i] if newshape[i] > 1 else 1
        return True
    if t._ndim == 0:
        for i in range(nd):
            newstride[i] = 1
        return True
    vd = nd - 1
    chunk_base = t._strides[t._ndim - 1]
    tensor_numel = 1
    view_numel = 1
    for td in range(t._ndim - 1, -1, -1):
        tensor_numel *= t._shape[td]
        if td == 0 or (t._shape[td - 1] != 1 and t._strides[td - 1] != tensor_numel * chunk_base):
            while vd >= 0 and (view_numel < tensor_numel or newshape[vd] == 1):
                newstride[vd] = view_numel * chunk_base
                view_numel *= newshape[vd]
                vd -= 1
            if view_numel != tensor_numel:
                return False
            if td > 0:
                chunk_base = t._strides[td - 1]
                tensor_numel = 1
                view_numel = 1
    return vd == -1


cdef TensorBase _view(TensorBase t, tuple shape):
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int nd = _infer_size(shape, t._numel, sh)
    if not _compute_view_strides(t, nd, sh, st):
        raise RuntimeError(
            f"view size is not compatible with input tensor's size and stride (at least one "
            f"dimension spans across two contiguous subspaces). Use .reshape(...) instead. "
            f"(input size {shape_str(t._ndim, t._shape)}, stride {shape_str(t._ndim, t._strides)}, "
            f"requested {shape_str(nd, sh)})")
    return make_view(t, nd, sh, st, t._offset)


cdef TensorBase _view_dtype(TensorBase t, DType dt):
    """Reinterpret the bytes as another dtype; the last dim absorbs a change of itemsize."""
    cdef int old = t._dtype.itemsize, new = dt.itemsize
    cdef int i
    cdef TensorBase v
    if old == new:
        v = make_view(t, t._ndim, t._shape, t._strides, t._offset)
        v._dtype = dt
        v._view_base = None      # see the end of this function
        v._requires_grad = False
        return v
    if t._ndim == 0:
        raise RuntimeError(f"self.dim() cannot be 0 to view {t._dtype} as {dt} (different element sizes)")
    if t._strides[t._ndim - 1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 to view {t._dtype} as {dt} (different element sizes), "
                           f"but got {t._strides[t._ndim - 1]}")
    shape = _shape_list(t)
    strides = _stride_list(t)
    if new < old:
        ratio = old // new
        shape[-1] *= ratio
        strides = [s * ratio for s in strides[:-1]] + [1]
        offset = t._offset * ratio
    else:
        ratio = new // old
        if (shape[-1] * old) % new:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} to view {t._dtype} as {dt} "
                               f"(different element sizes), but got {shape[-1]}")
        if (t._offset * old) % new:
            raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} to view {t._dtype} as "
                               f"{dt} (different element sizes), but got {t._offset}")
        for s in strides[:-1]:
            if s % ratio:
                raise RuntimeError(f"self.stride(i) must be divisible by {ratio} to view {t._dtype} as "
                                   f"{dt} (different element sizes) for all i != -1, but got {s}")
        shape[-1] //= ratio
        strides = [s // ratio for s in strides[:-1]] + [1]
        offset = t._offset // ratio
    v = _view_of(t, shape, strides, offset)
    v._dtype = dt
    # PyTorch does not record a dtype view as a view (no autograd link between dtypes):
    # it shares the storage and the version counter, but _base is None, _is_view() False,
    # and the result never requires grad (a leaf, whatever its input)
    v._view_base = None
    v._requires_grad = False
    return v


cdef object _view_dispatch(TensorBase t, tuple args):
    """Tensor.view(*shape) or Tensor.view(dtype)."""
    if len(args) == 0:
        raise TypeError("view() received an invalid combination of arguments - got (), but "
                        "expected one of: (dtype dtype) or (tuple of ints size)")
    if len(args) == 1 and args[0] is None:
        raise TypeError("view() received an invalid combination of arguments - got (NoneType), "
                        "but expected one of: (dtype dtype) or (tuple of ints size)")
    if len(args) == 1 and not isinstance(args[0], (int, tuple, list)) and not isinstance(args[0], TensorBase):
        # a dtype as PyTorch's parser takes one (not a name string, not a NumPy dtype)
        dt = args[0]
        if isinstance(dt, DType) or dt is float or dt is int or dt is bool or dt is complex:
            return _view_dtype(t, as_dtype(dt))
    return _view(t, _ivarargs(args, "view", "size"))


cdef TensorBase _reshape(TensorBase t, tuple shape):
    """A view when the view rule allows one, else a contiguous copy."""
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int nd = _infer_size(shape, t._numel, sh)
    cdef TensorBase c
    if _compute_view_strides(t, nd, sh, st):
        return make_view(t, nd, sh, st, t._offset)
    c = _contiguous_copy(t)
    _set_geometry(c, nd, sh, NULL)
    return c


cdef TensorBase _reshape_op(TensorBase t, tuple shape):
    """reshape: a view when the view rule allows one, else a copy. While recording, the copy
    is made as PyTorch makes it, a recorded contiguous clone reshaped by _unsafe_view, so the
    graph reads UnsafeViewBackward0 -> CloneBackward0 (the view is recorded by the caller)."""
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int nd
    if not (tl_grad_enabled and _req(t)):
        return _reshape(t, shape)
    nd = _infer_size(shape, t._numel, sh)
    if _compute_view_strides(t, nd, sh, st):
        return make_view(t, nd, sh, st, t._offset)
    return _call__unsafe_view(_call_clone(t, contiguous_format, False), tuple([sh[i] for i in range(nd)]), False)


cdef TensorBase _unsafe_view(TensorBase t, tuple shape):
    """A reshaped alias that autograd does not treat as a view (its input is a fresh copy
    nothing else holds), as PyTorch's _unsafe_view."""
    cdef TensorBase v = _reshape(t, shape)
    if v._storage is t._storage:
        v._view_base = None
    return v


cdef TensorBase _transpose(TensorBase t, int64_t d0, int64_t d1):
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int a = _wrap_dim(d0, t._ndim), b = _wrap_dim(d1, t._ndim)
    if t._ndim == 0:
        return make_view(t, 0, t._shape, t._strides, t._offset)
    memcpy(sh, t._shape, t._ndim * sizeof(int64_t))
    memcpy(st, t._strides, t._ndim * sizeof(int64_t))
    sh[a], sh[b] = sh[b], sh[a]
    st[a], st[b] = st[b], st[a]
    return make_view(t, t._ndim, sh, st, t._offset)


cdef TensorBase _t(TensorBase t):
    if t._ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {t._ndim}D")
    return _transpose(t, 0, 1 if t._ndim == 2 else 0)


cdef TensorBase _reverse_dims(TensorBase t):
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int i, n = t._ndim
    for i in range(n):
        sh[i] = t._shape[n - 1 - i]
        st[i] = t._strides[n - 1 - i]
    return make_view(t, n, sh, st, t._offset)


cdef list _wrap_dims(dims, int ndim, str op):
    cdef list out = []
    for d in dims:
        w = _wrap_dim(d, ndim)
        if w in out:
            raise RuntimeError(f"{op}(): dim {w} appears multiple times in the list of dims")
        out.append(w)
    return out


cdef TensorBase _permute(TensorBase t, tuple dims):
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int i, d
    if len(dims) != t._ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not "
                           f"match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {t._ndim} is not equal to len(dims) = {len(dims)}")
    wrapped = _wrap_dims(dims, t._ndim, "permute")
    for i in range(t._ndim):
        d = wrapped[i]
        sh[i] = t._shape[d]
        st[i] = t._strides[d]
    return make_view(t, t._ndim, sh, st, t._offset)


cdef TensorBase _movedim(TensorBase t, source, destination):
    src = list(_ilist(source, "movedim", "source", 1))
    dst = list(_ilist(destination, "movedim", "destination", 2))
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should "
                           f"contain the same number of dims as destination ({dst} dims)")
    src = _wrap_dims(src, t._ndim, "movedim")
    dst = _wrap_dims(dst, t._ndim, "movedim")
    if t._ndim == 0:
        return _permute(t, ())      # (dims 0 and -1 name a 0-d tensor's only "dim")
    order = [-1] * t._ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter([i for i in range(t._ndim) if i not in src])
    for i in range(t._ndim):
        if order[i] == -1:
            order[i] = next(rest)
    return _permute(t, tuple(order))


cdef TensorBase _expand(TensorBase t, tuple sizes):
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int i, j, n = len(sizes)
    cdef int64_t s
    if n < t._ndim:
        raise RuntimeError(f"expand({t.type()}{{{list(t.shape)}}}, size={list(sizes)}): the number of "
                           f"sizes provided ({n}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({t._ndim})")
    if n > MAX_DIMS:
        raise RuntimeError(f"tensors of more than {MAX_DIMS} dimensions are not supported (got {n})")
    # PyTorch's geometry: a new leading dim starts as size 1 with the stride it would have
    # if contiguous over the dims after it; any dim whose size changes gets stride 0
    for i in range(n - 1, -1, -1):
        j = i - (n - t._ndim)
        s = sizes[i]
        if j < 0:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            sh[i] = s
            st[i] = 0 if s != 1 or i == n - 1 else sh[i + 1] * st[i + 1]
        elif s == -1 or s == t._shape[j]:
            sh[i] = t._shape[j]
            st[i] = t._strides[j]
        elif t._shape[j] == 1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            sh[i] = s
            st[i] = 0
        else:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size "
                               f"({t._shape[j]}) at non-singleton dimension {i}.  Target sizes: "
                               f"{list(sizes)}.  Tensor sizes: {list(t.shape)}")
    return make_view(t, n, sh, st, t._offset)


cdef tuple _broadcast_shape_of(tensors):
    cdef int64_t a[MAX_DIMS]
    cdef int64_t b[MAX_DIMS]
    cdef int nd = 0
    cdef TensorBase t
    for x in tensors:
        t = _targ(x, "broadcast_tensors", "tensors", 1)
        nd = broadcast_shapes(nd, a, t._ndim, t._shape, b)
        memcpy(a, b, nd * sizeof(int64_t))
    return tuple([a[i] for i in range(nd)])


cdef tuple _broadcast_tensors(tensors):
    """An input that already has the common shape comes back as is (as in PyTorch: its
    grad_fn is its own); the others are expanded, through the recorded ``expand`` (so each
    gets an ExpandBackward0) when autograd is recording."""
    shape = _broadcast_shape_of(tensors)
    cdef bint rec = tl_grad_enabled and any([_req(x) for x in tensors])
    return tuple([x if tuple((<TensorBase>x).shape) == shape
                  else (x.expand(shape) if rec else _expand(<TensorBase>x, shape))
                  for x in tensors])


cdef object _slice_index(object x):
    """A slice bound or step as a Python int (Python's own TypeError for anything else)."""
    if type(x) is int:
        return x
    if isinstance(x, TensorBase):
        return _iarg(x, "slice", "index", 1)
    try:
        return x.__index__()
    except AttributeError:
        raise TypeError("slice indices must be integers or None or have an __index__ method") from None


cdef int64_t _clamp_bound(object x, int64_t n, int64_t default) except? -1:
    """Python's slice clamping: negative counts from the end, then clip to [0, n]. Done on
    Python ints so bounds beyond int64 (x[:2**70]) clamp instead of overflowing."""
    if x is None:
        return default
    x = _slice_index(x)
    if x < 0:
        x += n
        return 0 if x < 0 else x
    return n if x > n else x


cdef object _slice_step(object step):
    """A slice's step as an int, or PyTorch's ValueError: zero, or negative."""
    step = _slice_index(step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    return step


cdef int _slice_geometry(int64_t* shape, int64_t* strides, int64_t* offset, int dim,
                         object start, object stop, object step) except -1:
    """Apply start:stop:step (Python's clamping; step must be positive) to one dim of a
    geometry in place. As in PyTorch, an empty result still starts at ``start`` (its storage
    offset). Shared by _slice and the one-pass basic indexing."""
    cdef int64_t n = shape[dim], a, b, length, st_step, k = 1
    if step is not None:
        step = _slice_step(step)
        # a step >= n picks at most one element, so any such step selects the same memory:
        # clamp a huge one to n to keep the stride product inside int64
        k = step if step <= n else (n if n > 0 else 1)
    a = _clamp_bound(start, n, 0)
    b = _clamp_bound(stop, n, n)
    length = (b - a - 1) // k + 1 if b > a else 0
    if step is not None and n < step <= INT64_MAX and \
            not mul_overflow(strides[dim], <int64_t>step, &st_step):
        k = step                 # keep PyTorch's stride whenever it is representable
    if mul_overflow(strides[dim], k, &st_step):
        raise RuntimeError(f"slice step {step} overflows the stride of dimension {dim}")
    offset[0] += a * strides[dim]
    shape[dim] = length
    strides[dim] = st_step
    return 0


cdef TensorBase _slice(TensorBase t, int dim, object start, object stop, object step):
    """t[..., start:stop:step, ...] along dim (see _slice_geometry)."""
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int64_t off = t._offset
    memcpy(sh, t._shape, t._ndim * sizeof(int64_t))
    memcpy(st, t._strides, t._ndim * sizeof(int64_t))
    _slice_geometry(sh, st, &off, dim, start, stop, step)
    return make_view(t, t._ndim, sh, st, off)


cdef TensorBase _narrow(TensorBase t, int64_t dim, int64_t start, int64_t length):
    if t._ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    cdef int d
    cdef int64_t n
    if length < 0:      # (PyTorch checks the length before the dim)
        raise RuntimeError("narrow(): length must be non-negative.")
    d = _wrap_dim(dim, t._ndim)
    n = t._shape[d]
    if start < -n or start > n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if start < 0:
        start += n
    if length > n - start:               # (start + length could overflow)
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return _slice(t, d, start, start + length, 1)


cdef TensorBase _select(TensorBase t, int64_t dim, int64_t index):
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int i, j = 0, d
    if t._ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, t._ndim)
    cdef int64_t n = t._shape[d]
    if index < -n or index >= n:
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {n}")
    if index < 0:
        index += n
    for i in range(t._ndim):
        if i != d:
            sh[j] = t._shape[i]
            st[j] = t._strides[i]
            j += 1
    return make_view(t, t._ndim - 1, sh, st, t._offset + index * t._strides[d])


cdef TensorBase _unsqueeze(TensorBase t, int64_t dim):
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int d = _wrap_dim(dim, t._ndim + 1, False)
    cdef int i, j = 0
    if t._ndim + 1 > MAX_DIMS:       # check before writing ndim + 1 entries into sh/st
        raise RuntimeError(f"tensors of more than {MAX_DIMS} dimensions are not supported (got {t._ndim + 1})")
    for i in range(t._ndim + 1):
        if i == d:
            sh[i] = 1
            st[i] = t._strides[d] * t._shape[d] if d < t._ndim else 1
        else:
            sh[i] = t._shape[j]
            st[i] = t._strides[j]
            j += 1
    return make_view(t, t._ndim + 1, sh, st, t._offset)


cdef TensorBase _squeeze(TensorBase t, object dim):
    """squeeze(): drop every size-1 dim; squeeze(d) or squeeze((d0, d1)): drop those that
    have size 1 (a non-1 dim is left alone, as in PyTorch)."""
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int i, j = 0
    if dim is None:
        drop = [i for i in range(t._ndim) if t._shape[i] == 1]
    else:
        dims = _ilist(dim, "squeeze", "dim", 1)
        drop = [d for d in _wrap_dims(dims, t._ndim, "squeeze") if t._ndim > 0 and t._shape[d] == 1]
    for i in range(t._ndim):
        if i not in drop:
            sh[j] = t._shape[i]
            st[j] = t._strides[i]
            j += 1
    return make_view(t, j, sh, st, t._offset)


cdef TensorBase _flatten(TensorBase t, int64_t start_dim, int64_t end_dim):
    cdef int s = _wrap_dim(start_dim, t._ndim), e = _wrap_dim(end_dim, t._ndim)
    if t._ndim == 0:
        return _reshape_op(t, (1,))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return t
    shape = _shape_list(t)
    n = 1
    for v in shape[s:e + 1]:
        n *= v
    return _reshape_op(t, tuple(shape[:s] + [n] + shape[e + 1:]))     # (recorded like reshape)


cdef TensorBase _unflatten(TensorBase t, int64_t dim, tuple sizes):
    cdef int d = _wrap_dim(dim, t._ndim)
    cdef int64_t inferred[MAX_DIMS]
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    _infer_size(sizes, t._shape[d], inferred)
    shape = _shape_list(t)
    new = shape[:d] + [inferred[i] for i in range(len(sizes))] + shape[d + 1:]
    return _view(t, tuple(new))


cdef TensorBase _as_strided(TensorBase t, tuple size, tuple stride, object storage_offset):
    cdef int64_t off = t._offset if storage_offset is None else storage_offset
    cdef int64_t need, sz
    cdef int i
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {list(size)} vs {list(stride)}")
    for s in stride:
        if s < 0:
            raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    if off < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {off}")
    # the last element must lie inside the storage (all in int64 with overflow checks: a
    # wrapped bound would let the view address memory outside the storage)
    need = 0
    for i in range(len(size)):
        if size[i] == 0:
            need = -1
            break
        if mul_overflow(<int64_t>(size[i] - 1), <int64_t>stride[i], &sz) or add_overflow(need, sz, &need):
            raise RuntimeError(f"as_strided: sizes {list(size)} and strides {list(stride)} overflow int64")
    if need >= 0:
        if add_overflow(need, off, &need) or add_overflow(need, 1, &need) or \
                mul_overflow(need, <int64_t>t._dtype.itemsize, &need):
            raise RuntimeError(f"as_strided: sizes {list(size)}, strides {list(stride)} and storage "
                               f"offset {off} overflow int64")
        if need > t._storage._nbytes:
            raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                               f"{off}, and itemsize {t._dtype.itemsize} requiring a storage size of "
                               f"{need} are out of bounds for storage of size {t._storage._nbytes}")
    return _view_of(t, size, stride, off)


cdef TensorBase _unfold(TensorBase t, int64_t dimension, int64_t size, int64_t step):
    cdef int d
    shape = _shape_list(t) or [1]
    strides = _stride_list(t) or [1]
    d = _wrap_dim(dimension, t._ndim)
    if size > shape[d]:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {shape[d]} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    new_shape = list(shape)
    new_strides = list(strides)
    new_shape[d] = (shape[d] - size) // step + 1
    new_strides[d] = strides[d] * step
    if new_strides[d] > INT64_MAX:
        # only when a huge step leaves one window, whose stride is never used: keep int64
        new_strides[d] = strides[d]
    if t._ndim == 0:
        return _view_of(t, [size], [1], t._offset)
    return _view_of(t, new_shape + [size], new_strides + [strides[d]], t._offset)


cdef TensorBase _diagonal(TensorBase t, int64_t offset, int64_t dim1, int64_t dim2):
    cdef int d1 = _wrap_dim(dim1, t._ndim), d2 = _wrap_dim(dim2, t._ndim)
    cdef int64_t n, off = t._offset
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    if offset >= 0:
        n = min(t._shape[d1], t._shape[d2] - offset)
    else:
        n = min(t._shape[d1] + offset, t._shape[d2])
    if n <= 0:
        n = 0
    elif offset >= 0:
        off += offset * t._strides[d2]
    else:
        off -= offset * t._strides[d1]
    shape = [t._shape[i] for i in range(t._ndim) if i != d1 and i != d2] + [n]
    strides = [t._strides[i] for i in range(t._ndim) if i != d1 and i != d2] + [t._strides[d1] + t._strides[d2]]
    return _view_of(t, shape, strides, off)


cdef tuple _split(TensorBase t, object split_size_or_sections, int64_t dim):
    cdef int d
    if t._ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, t._ndim)
    cdef int64_t n = t._shape[d], size, start = 0
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                               f"tensor's size at dimension {d}), but got split_sizes={sizes}")
        out = []
        for s in sizes:
            out.append(_slice(t, d, start, start + s, 1))
            start += s
        return tuple(out)
    size = _iarg(split_size_or_sections, "split", "split_size", 2)
    if size < 0 or (size == 0 and n != 0):
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}"
                           if size == 0 else f"split expects split_size be non-negative, but got split_size={size}")
    if n == 0:
        return (_slice(t, d, 0, 0, 1),)
    return tuple([_slice(t, d, s, s + size, 1) for s in range(0, n, size)])


cdef tuple _chunk(TensorBase t, int64_t chunks, int64_t dim):
    if t._ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    cdef int d = _wrap_dim(dim, t._ndim)
    cdef int64_t n = t._shape[d]
    cdef int64_t size = (n + chunks - 1) // chunks
    if size == 0:
        # PyTorch: a 0-size dim gives `chunks` empty pieces only when n == 0
        return tuple([_slice(t, d, 0, 0, 1) for _ in range(chunks if n == 0 else 1)])
    return _split(t, size, d)


cdef tuple _unbind(TensorBase t, int64_t dim):
    if t._ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    cdef int d = _wrap_dim(dim, t._ndim)
    return tuple([_select(t, d, i) for i in range(t._shape[d])])


cdef TensorBase _detach(TensorBase t):
    """Same data, shared version counter, cut from the graph (not a view)."""
    return _alias(t, t._vc)


cdef TensorBase _contiguous(TensorBase t):
    if t._contiguous:
        return t
    return _contiguous_copy(t)


cdef TensorBase _set_geometry_inplace(TensorBase t, TensorBase v):
    """Metadata-changing in-place ops (t_, transpose_, squeeze_, ...): take v's geometry.
    No data is written, but they are in-place ops, so (as in PyTorch) they bump the version,
    and autograd's in-place rules apply (a leaf that requires grad raises)."""
    cdef bint keep_grad_fn = False
    if tl_grad_enabled and (t._requires_grad or t._view_base is not None):
        _check_inplace(t)
        # a view about to be recorded: its grad_fn (for the geometry before the op) is made
        # current now and kept current across the version bump, so the op's node links to it
        if t._requires_grad and t._view_base is not None and t._autograd_meta is not None:
            _view_grad_fn(t)
            keep_grad_fn = True
    _set_geometry(t, v._ndim, v._shape, v._strides)
    t._offset = v._offset
    t._vc.version += 1
    if keep_grad_fn:
        (<AutogradMeta>t._autograd_meta).view_version = t._vc.version
    return t
