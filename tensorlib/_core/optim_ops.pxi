# The optimizers' fused update: the front half of ``Backend.optim`` (cpu_optim.h).
#
# tensorlib.optim gathers, per parameter group, the parameters that have a gradient, their
# gradients, their state tensors and their 0-d states (step, ...), and calls _fused_optim
# once. Here every tensor is checked before any pointer reaches C (shapes, dtypes, devices,
# a gradient sharing memory with its parameter), the tensors are sorted into one launch per
# (device, dtype, 0-d states' dtypes), and each launch hands the back end arrays of pointers:
# one pass over all the tensors of the group, in place.
#
# The C loop runs over a parameter's memory in order, which is also the gradient's and each
# state's when they are dense with the same strides -- the usual case, since states are made
# zeros_like(param) and gradients are accumulated in the parameter's layout. A tensor that
# is not (a gradient in another layout, a parameter that is a strided view with gaps, a state
# loaded in another layout) goes through a copy in the parameter's dense layout, written back
# afterwards when the kernel writes it: correct for every layout, with a temporary only then.

cdef bint _optim_same_order(TensorBase a, TensorBase b) noexcept:
    """``a`` and ``b`` have the same shape and the same strides on every dim longer than 1
    (so dense tensors store their elements in the same order)."""
    cdef int i
    if a._ndim != b._ndim:
        return False
    for i in range(a._ndim):
        if a._shape[i] != b._shape[i] or (a._shape[i] > 1 and a._strides[i] != b._strides[i]):
            return False
    return True


cdef str _optim_shape(TensorBase t):
    return "[" + ", ".join([str(t._shape[i]) for i in range(t._ndim)]) + "]"


cdef int _optim_check_like(TensorBase p, object x, int k) except -1:
    """``x`` (the gradient when ``k`` is -1, else state ``k``) is a tensor of ``p``'s shape,
    dtype and device."""
    cdef TensorBase t
    cdef str what
    if isinstance(x, TensorBase):
        t = <TensorBase>x
        if t._dtype is p._dtype and t._ndim == p._ndim and \
                t._storage.device.kind == p._storage.device.kind and \
                memcmp(t._shape, p._shape, p._ndim * sizeof(int64_t)) == 0:
            return 0
    what = "gradient" if k < 0 else f"state {k}"
    if not isinstance(x, TensorBase):
        raise TypeError(f"optimizer step: expected the {what} to be a Tensor, but got "
                        f"{type(x).__name__}")
    t = <TensorBase>x
    if t._storage.device != p._storage.device:
        raise RuntimeError(f"optimizer step: the {what} is on {t._storage.device} but its "
                           f"parameter is on {p._storage.device}")
    if t._dtype is not p._dtype:
        raise RuntimeError(f"optimizer step: the {what} has dtype {t._dtype} but its parameter "
                           f"has dtype {p._dtype}")
    if t._ndim != p._ndim or memcmp(t._shape, p._shape, p._ndim * sizeof(int64_t)) != 0:
        raise RuntimeError(f"optimizer step: the {what} has shape {_optim_shape(t)} but its "
                           f"parameter has shape {_optim_shape(p)}")
    return 0


cdef TensorBase _optim_in_layout(TensorBase ref, TensorBase t, list writebacks, bint written):
    """``t`` itself when it can be run over in ``ref``'s memory order, else a copy in
    ``ref``'s layout (to be copied back into ``t`` afterwards when the kernel writes it)."""
    cdef TensorBase c
    if t._contiguous and ref._contiguous:      # same shape (checked): same order
        return t
    if is_non_overlapping_and_dense(t._ndim, t._shape, t._strides) and _optim_same_order(ref, t):
        return t
    c = _empty_preserving(ref, t._dtype)
    _copy_into(c, t)
    if written:
        writebacks.append((t, c))
    return c


def _fused_optim(int op, list params, list grads, list states, list scalars, tuple hp,
                 int flags, object fresh=None):
    """Run optimizer ``op`` (``TL_OPT_*`` of cpu_optim.h) once over every parameter:
    ``params[i]`` updated in place from ``grads[i]``, ``states[k][i]`` its k-th state
    tensor, ``scalars[k][i]`` its k-th 0-d state (updated in place), ``hp`` the
    hyperparameters, ``flags`` the ``TL_OPT_*`` options, ``fresh[i]`` (SGD) true when the
    momentum buffer is still to be set from the gradient. Internal: tensorlib.optim's
    optimizers call it; the layout is cpu_optim.h's.

    >>> from tensorlib._core.tensor import _fused_optim
    >>> p = tensorlib.ones(3); g = tensorlib.full((3,), 2.0)
    >>> _fused_optim(0, [p], [g], [], [], (0.5, 0.0, 0.0, 0.0), 0); p.tolist()
    [0.0, 0.0, 0.0]
    """
    cdef Py_ssize_t n = len(params), i, j, m, nstate = len(states), nscalar = len(scalars)
    cdef int k, code, scodes, again
    cdef list same
    cdef TensorBase p, g, t, ref
    cdef tl_optim_args a
    cdef list writebacks = [], scalar_backs = []
    cdef dict buckets = {}, seen = {}
    cdef list rows, keep = []
    cdef char** ptrs = NULL
    cdef int64_t* numel = NULL
    cdef uint8_t* fr = NULL
    cdef int64_t total
    cdef Device dev
    if nstate > TL_OPT_MAX_STATE or nscalar > TL_OPT_MAX_SCALAR or len(hp) > TL_OPT_MAX_HP:
        raise ValueError("optimizer step: too many states or hyperparameters for the kernel")
    if not 0 <= op < TL_OPT_NUM_OPS:
        raise ValueError(f"optimizer step: unknown update {op}")
    if len(grads) != n or any(len(s) != n for s in states) or any(len(s) != n for s in scalars):
        raise ValueError("optimizer step: every list must have one entry per parameter")
    # check everything first: nothing is written unless every tensor is acceptable
    for i in range(n):
        if not isinstance(params[i], TensorBase):
            raise TypeError(f"optimizer step: expected a Tensor parameter, but got "
                            f"{type(params[i]).__name__}")
        p = <TensorBase>params[i]
        code = p._dtype.code
        if code != DT_FLOAT32 and code != DT_FLOAT64 and code != DT_FLOAT16 and \
                code != DT_BFLOAT16:
            raise RuntimeError(f"optimizer step: parameters of dtype {p._dtype} are not "
                               f"supported (floating-point parameters only)")
        _optim_check_like(p, grads[i], -1)
        g = <TensorBase>grads[i]
        if _overlap(p, g) != OVERLAP_NO:
            raise RuntimeError("optimizer step: a parameter's gradient shares memory with the "
                               "parameter itself; the update would read values it has "
                               "already written")
        for k in range(nstate):
            _optim_check_like(p, states[k][i], k)
            if _overlap(p, <TensorBase>states[k][i]) != OVERLAP_NO or \
                    _overlap(g, <TensorBase>states[k][i]) != OVERLAP_NO:
                raise RuntimeError("optimizer step: an optimizer state tensor shares memory "
                                   "with its parameter or gradient")
        scodes = 0      # one bit per 0-d state: float64
        for k in range(nscalar):
            t = scalars[k][i] if isinstance(scalars[k][i], TensorBase) else None
            if t is None or t._numel != 1 or (t._dtype.code != DT_FLOAT32 and
                                              t._dtype.code != DT_FLOAT64) or \
                    (t._storage.device.kind != DEVICE_CPU and
                     t._storage.device.kind != DEVICE_CUDA):
                raise RuntimeError("optimizer step: a 0-d state (such as 'step') must be a "
                                   "one-element float32 or float64 tensor on the CPU or a "
                                   "CUDA device")
            if t._dtype.code == DT_FLOAT64:
                scodes |= 1 << k
        dev = p._storage.device
        # a parameter listed twice (PyTorch warns, and updates it twice in turn), or two that
        # share memory: the later one goes in a later launch, never beside the other in one
        # parallel pass (parameters have storages of their own, so this is one lookup)
        again = 0
        same = seen.get(id(p._storage))
        if same is None:
            seen[id(p._storage)] = [(p, 0)]
        else:
            for other, r in same:
                if r >= again and _overlap(p, <TensorBase>other) != OVERLAP_NO:
                    again = r + 1
            same.append((p, again))
        buckets.setdefault((again, dev.kind, code, scodes), []).append(i)
    # the write step of every written tensor (version bump, PyTorch's overlap rule), then the
    # layout: copies only for tensors that cannot be run over in the parameter's order
    for rows in buckets.values():
        for i in rows:
            prepare_write(<TensorBase>params[i], None)
            for k in range(nstate):
                prepare_write(<TensorBase>states[k][i], None)
            for k in range(nscalar):
                prepare_write(<TensorBase>scalars[k][i], None)
    try:
        for (again, kind, code, scodes), rows in buckets.items():
            m = len(rows)
            ptrs = <char**>malloc((2 + nstate + nscalar) * m * sizeof(char*) + 1)
            numel = <int64_t*>malloc(m * sizeof(int64_t) + 1)
            fr = <uint8_t*>malloc(m + 1)
            if ptrs == NULL or numel == NULL or fr == NULL:
                raise MemoryError("optimizer step: out of memory for the pointer tables")
            memset(&a, 0, sizeof(a))
            a.op = op
            a.dtype = code
            for k in range(TL_OPT_MAX_SCALAR):
                a.scalar_dtype[k] = DT_FLOAT64 if scodes & (1 << k) else DT_FLOAT32
            a.flags = flags
            a.n = m
            a.param = ptrs
            a.grad = ptrs + m
            for k in range(nstate):
                a.state[k] = ptrs + (2 + k) * m
            for k in range(nscalar):
                a.scalar[k] = ptrs + (2 + nstate + k) * m
            a.numel = numel
            a.fresh = fr
            for k in range(len(hp)):
                a.hp[k] = hp[k]
            total = 0
            for j in range(m):
                i = rows[j]
                p = <TensorBase>params[i]
                ref = p
                if not is_non_overlapping_and_dense(p._ndim, p._shape, p._strides):
                    ref = _optim_in_layout(p, p, writebacks, True)
                t = _optim_in_layout(ref, <TensorBase>grads[i], writebacks, False)
                keep.append(t)
                a.param[j] = tensor_data(ref)
                a.grad[j] = tensor_data(t)
                for k in range(nstate):
                    t = _optim_in_layout(ref, <TensorBase>states[k][i], writebacks, True)
                    keep.append(t)
                    a.state[k][j] = tensor_data(t)
                for k in range(nscalar):
                    t = <TensorBase>scalars[k][i]
                    if t._storage.device.kind == DEVICE_CUDA:
                        # a 'step' on the device (PyTorch allows it, e.g. loaded under a CUDA
                        # default device): the kernels read 0-d states on the host, so a host
                        # copy is advanced and copied back
                        h = empty_tensor(t._ndim, t._shape, t._dtype, CPU)
                        _copy_across(h, t)
                        keep.append(h)
                        scalar_backs.append((t, h))
                        t = h
                    a.scalar[k][j] = tensor_data(t)
                numel[j] = p._numel
                fr[j] = 1 if (fresh is not None and fresh[i]) else 0
                total += p._numel
            backend_for((<TensorBase>params[rows[0]])._storage.device).optim(
                &a, total >= NOGIL_THRESHOLD)
            for dst, src in scalar_backs:
                _copy_across(<TensorBase>dst, <TensorBase>src)
            scalar_backs = []
            free(ptrs)
            free(numel)
            free(fr)
            ptrs = NULL
            numel = NULL
            fr = NULL
        for dst, src in writebacks:
            _copy_into(<TensorBase>dst, <TensorBase>src)
    finally:
        free(ptrs)
        free(numel)
        free(fr)
    return None
