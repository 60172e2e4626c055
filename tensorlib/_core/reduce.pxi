# Reductions: sum, mean, prod, std/var (+ _mean), max/min (whole, per dim with indices, or
# the binary form), amax/amin, argmax/argmin, all/any, count_nonzero, norm, logsumexp, and
# the dim-wise cumsum/cumprod, softmax and log_softmax. Kernels in cpu_reduce.c.
#
# Here: argument checking (PyTorch's errors), dtype rules, output allocation, and the
# geometry handed to the kernels: kept and reduced dims, size-1 dims dropped, each group
# ordered by input stride and coalesced, then one of two layouts (see cpu_reduce.h).
# (included into reductions.pyx, the reductions family's module)
import sys as _sys
from libc.math cimport INFINITY



# ---------------------------------------------------------------------------------------------
# dims and geometry

cdef list _reduce_mask(TensorBase t, object dim, str op):
    """Which dims ``dim`` reduces: None or () mean all of them; an int or a sequence of ints
    (wrapped, checked, no repeats)."""
    cdef int nd = t._ndim
    cdef list mask = [False] * nd
    if dim is None:
        return [True] * nd
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return [True] * nd
        dims = [_iarg(d, op, "dim", 2) for d in dim]
        # PyTorch's std/var wrap and check each dim in turn (a repeat wins over a later bad
        # dim); its other reductions wrap every dim before they look for repeats
        if not (op.startswith("std") or op.startswith("var")):
            dims = [_wrap_dim(d, nd) for d in dims]
        for i in range(len(dims)):
            dims[i] = _wrap_dim(dims[i], nd)
            if dims[i] in dims[:i]:
                raise RuntimeError(f"dim {dims[i]} appears multiple times in the list of dims")
    else:
        dims = [_wrap_dim(_iarg(dim, op, "dim", 2), nd)]
    for d in dims:
        if nd > 0:
            mask[d] = True
    return mask


cdef tuple _reduced_shape(TensorBase t, list mask, bint keepdim):
    cdef list shape = []
    cdef int i
    for i in range(t._ndim):
        if mask[i]:
            if keepdim:
                shape.append(1)
        else:
            shape.append(t._shape[i])
    return tuple(shape)


cdef int64_t _reduced_count(TensorBase t, list mask):
    cdef int64_t n = 1
    cdef int i
    for i in range(t._ndim):
        if mask[i]:
            n *= t._shape[i]
    return n


cdef int _red_coalesce(DimInfo* d, int n, bint two) noexcept:
    """Merge neighbours (already ordered outer to inner) whose strides line up; ``two``: the
    second stride (output) must line up as well."""
    cdef int i, m = 0
    for i in range(n):
        if m > 0 and d[m - 1].dst_stride == d[i].dst_stride * d[i].size and \
                (not two or d[m - 1].src_stride == d[i].src_stride * d[i].size):
            d[m - 1].size *= d[i].size
            d[m - 1].dst_stride = d[i].dst_stride
            d[m - 1].src_stride = d[i].src_stride
        else:
            d[m] = d[i]
            m += 1
    return m


cdef int _red_geometry(tl_red_t* r, TensorBase x, list mask, bint keep_order) except -1:
    """Fill r's dims from x and the reduced mask, for a contiguous output of the kept dims.
    keep_order: leave the reduced dims in logical order (their flat index is reported)."""
    cdef DimInfo kd[MAX_DIMS]
    cdef DimInfo rd[MAX_DIMS]
    cdef int64_t ost[MAX_DIMS]
    cdef int64_t os = 1
    cdef int i, nk = 0, nr = 0
    for i in range(x._ndim - 1, -1, -1):
        if not mask[i]:
            ost[i] = os
            os *= x._shape[i]
    for i in range(x._ndim):
        if x._shape[i] == 1:
            continue
        if mask[i]:
            rd[nr].size = x._shape[i]
            rd[nr].dst_stride = x._strides[i]
            rd[nr].src_stride = 0
            nr += 1
        else:
            kd[nk].size = x._shape[i]
            kd[nk].dst_stride = x._strides[i]     # input stride
            kd[nk].src_stride = ost[i]            # output stride
            nk += 1
    if nk > 1:
        qsort(kd, nk, sizeof(DimInfo), _by_dst_stride_desc)
    if nr > 1 and not keep_order:
        qsort(rd, nr, sizeof(DimInfo), _by_dst_stride_desc)
    nk = _red_coalesce(kd, nk, True)
    nr = _red_coalesce(rd, nr, False)
    if nr == 0:
        rd[0].size = 1
        rd[0].dst_stride = 0
        nr = 1
    for i in range(nk):
        r.kshape[i] = kd[i].size
        r.kin[i] = kd[i].dst_stride
        r.kout[i] = kd[i].src_stride
    for i in range(nr):
        r.rshape[i] = rd[i].size
        r.rin[i] = rd[i].dst_stride
    r.nk = nk
    r.nr = nr
    # OUTER when the kept dims hold the unit stride: vectorize across them
    r.mode = TL_RED_OUTER if (nk > 0 and r.kin[nk - 1] == 1 and r.rin[nr - 1] != 1) else TL_RED_INNER
    return 0


cdef int _compute_code(int code) noexcept:
    if code == DT_FLOAT64:
        return DT_FLOAT64
    if code == DT_FLOAT32 or code == DT_FLOAT16 or code == DT_BFLOAT16:
        return DT_FLOAT32
    return DT_INT64


cdef int _red_run(tl_red_t* r, TensorBase x) except -1:
    r.src = tensor_data(x)
    r.in_dtype = x._dtype.code
    return backend_of(x).reduce(r, x._numel)


cdef TensorBase _reduce(TensorBase x, list mask, bint keepdim, int op, DType out_dt,
                        int post=TL_POST_NONE, double post_a=1.0, double p=0.0,
                        TensorBase center=None):
    """One reduction of x over ``mask`` into a new contiguous tensor of dtype out_dt."""
    cdef tl_red_t r
    cdef TensorBase out = _new_empty(_reduced_shape(x, mask, keepdim), out_dt, x._storage.device)
    _red_geometry(&r, x, mask, False)
    r.op = op
    r.post = post
    r.post_a = post_a
    r.p = p
    r.ct = _compute_code(x._dtype.code)
    r.out_dtype = out_dt.code
    r.out = tensor_data(out)
    r.idx = NULL
    r.center = NULL if center is None else <const double*>tensor_data(center)
    _red_run(&r, x)
    return out


cdef tuple _reduce_arg(TensorBase x, int dim, bint keepdim, bint is_max, bint want_values):
    """(values or None, indices) of the first max/min along ``dim`` (-1: flattened)."""
    cdef tl_red_t r
    cdef list mask
    cdef TensorBase values = None, indices
    cdef tuple shape
    if dim < 0:
        shape = tuple([1] * x._ndim) if keepdim else ()
        x = _reshape(_contiguous(x), (-1,))
        mask = [True] * x._ndim
    else:
        mask = [i == dim for i in range(x._ndim)]
        shape = _reduced_shape(x, mask, keepdim)
    indices = _new_empty(shape, dtype_of(DT_INT64), x._storage.device)
    if want_values:
        values = _new_empty(shape, x._dtype, x._storage.device)
    _red_geometry(&r, x, mask, True)
    r.op = TL_R_ARGMAX if is_max else TL_R_ARGMIN
    r.post = TL_POST_NONE
    r.ct = _compute_code(x._dtype.code)
    r.out_dtype = x._dtype.code
    r.out = NULL if values is None else tensor_data(values)
    r.idx = <int64_t*>tensor_data(indices)
    r.center = NULL
    _red_run(&r, x)
    return values, indices


cdef str _tn(TensorBase t):
    return _TORCH_TYPE_NAME[t._dtype.code]


cdef TensorBase _as_dtype_arg(TensorBase x, object dtype):
    """Reductions with dtype=: the input is converted first, as PyTorch does."""
    if dtype is None or dtype is x._dtype:
        return x
    return _to_dtype(x, <DType>dtype, False)


cdef DType _sum_dtype(TensorBase x):
    """sum/prod/cumsum of bool and integers give int64."""
    return x._dtype if x._dtype.is_floating_point else dtype_of(DT_INT64)


cdef int _check_grad_dtype(TensorBase x, object dtype) except -1:
    """An integer or bool dtype= on an input that requires grad: PyTorch's autograd refuses
    to make the (non-differentiable) result."""
    if dtype is not None and not (<DType>dtype).is_floating_point and _req(x) \
            and _grad_on():
        raise RuntimeError(f"Autograd not support dtype: {_TORCH_TYPE_NAME[(<DType>dtype).code]}")
    return 0


cdef TensorBase _as_asked(TensorBase r, object dtype):
    """A sum/prod computed in int64 as the integer or bool ``dtype=`` asked for: PyTorch
    accumulates in that dtype, wrapping, which the int64 result cast to it reproduces."""
    if dtype is not None and r._dtype is not dtype:
        return _to_dtype(r, <DType>dtype, False)
    return r


cdef int _check_nonempty_dims(TensorBase x, list mask, str op, bint dim_given) except -1:
    """max/min/amax/amin/argmax-style ops have no identity: nothing to reduce is an error."""
    cdef int i
    if not dim_given or x._ndim == 0:
        if x._numel == 0:
            raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() "
                               f"== 0. Specify the reduction dim with the 'dim' argument.")
        return 0
    for i in range(x._ndim):
        if mask[i] and x._shape[i] == 0:
            raise IndexError(f"{op}(): Expected reduction dim {i} to have non-zero size.")
    return 0


cdef bint _dims_given(object dim):
    return dim is not None and not (isinstance(dim, (tuple, list)) and len(dim) == 0)


# ---------------------------------------------------------------------------------------------
# the ops

cdef TensorBase _sum(TensorBase x, object dim, bint keepdim, object dtype, object out):
    _check_grad_dtype(x, dtype)
    x = _as_dtype_arg(x, dtype)
    cdef list mask = _reduce_mask(x, dim, "sum")
    return _into_out(_as_asked(_reduce(x, mask, keepdim, TL_R_SUM, _sum_dtype(x)), dtype), out,
                     "sum")


cdef DType _mean_dtype(TensorBase x, object dtype, str op):
    if dtype is not None:
        if not (<DType>dtype).is_floating_point:
            raise RuntimeError(f"{op}(): could not infer output dtype. Optional dtype must be either "
                               f"a floating point or complex dtype. Got: "
                               f"{_TORCH_TYPE_NAME[(<DType>dtype).code]}")
        return <DType>dtype
    if not x._dtype.is_floating_point:
        raise RuntimeError(f"{op}(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {_tn(x)}")
    return x._dtype


cdef TensorBase _mean(TensorBase x, object dim, bint keepdim, object dtype, object out):
    cdef DType dt = _mean_dtype(x, dtype, "mean")
    if (dt.code == DT_FLOAT16 or dt.code == DT_BFLOAT16) and x._dtype is not dt:
        # PyTorch's mean into a half type converts other inputs to float32, not to the half
        # type (whose range a large input or partial sum would overflow); the sum is float
        # either way and rounds to dt once
        x = _as_dtype_arg(x, dtype_of(DT_FLOAT32))
    else:
        x = _as_dtype_arg(x, dt)
    cdef list mask = _reduce_mask(x, dim, "mean")
    return _into_out(_reduce(x, mask, keepdim, TL_R_SUM, dt, TL_POST_DIV,
                             <double>_reduced_count(x, mask)), out, "mean")


cdef TensorBase _prod(TensorBase x, object dim, bint keepdim, object dtype, object out):
    _check_grad_dtype(x, dtype)
    x = _as_dtype_arg(x, dtype)
    cdef list mask
    if dim is None:
        mask = [True] * x._ndim
    else:
        mask = _reduce_mask(x, _iarg(dim, "prod", "dim", 2), "prod")
    return _into_out(_as_asked(_reduce(x, mask, keepdim, TL_R_PROD, _sum_dtype(x)), dtype),
                     out, "prod")


# -- std / var: two passes (the mean, then the sum of squared deviations), both in double
# for float32 input, so the result is stable however large the mean is against the spread.

cdef tuple _var_impl(TensorBase x, object dim, object unbiased, bint keepdim, object correction,
                     bint take_sqrt, bint want_mean, str op):
    cdef double corr
    cdef list mask
    cdef int64_t n
    cdef TensorBase mean, res
    if isinstance(dim, bool):          # legacy var(unbiased) form: var(True)
        if unbiased is not None:
            raise TypeError(f"{op}(): unbiased given twice")
        unbiased, dim = dim, None
    if unbiased is not None and correction is not None:
        raise TypeError(f"{op}() received an invalid combination of arguments: 'unbiased' and "
                        f"'correction' cannot both be given")
    if correction is not None:
        corr = _farg(correction, op, "correction", 0)
    else:
        corr = 1.0 if (unbiased is None or unbiased) else 0.0
    if not x._dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    mask = _reduce_mask(x, dim, op)
    n = _reduced_count(x, mask)
    if n - corr <= 0:
        warnings.warn(f"{op}(): degrees of freedom is <= 0. Correction should be strictly less "
                      f"than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)
    mean = _reduce(x, mask, keepdim, TL_R_SUM, dtype_of(DT_FLOAT64), TL_POST_DIV, <double>n)
    res = _reduce(x, mask, keepdim, TL_R_CSQ, x._dtype,
                  TL_POST_SQRT_DIV if take_sqrt else TL_POST_DIV,
                  (n - corr) if n - corr > 0 else 0.0, 0.0, mean)
    if want_mean:
        return res, _to_dtype(mean, x._dtype, False)
    return res, None


cdef TensorBase _var(TensorBase x, object dim, object unbiased, bint keepdim, object correction,
                     object out):
    return _into_out(_var_impl(x, dim, unbiased, keepdim, correction, False, False, "var")[0],
                     out, "var")


cdef TensorBase _std(TensorBase x, object dim, object unbiased, bint keepdim, object correction,
                     object out):
    return _into_out(_var_impl(x, dim, unbiased, keepdim, correction, True, False, "std")[0],
                     out, "std")


cdef tuple _var_mean(TensorBase x, object dim, object unbiased, bint keepdim, object correction):
    return _var_impl(x, dim, unbiased, keepdim, correction, False, True, "var_mean")


cdef tuple _std_mean(TensorBase x, object dim, object unbiased, bint keepdim, object correction):
    return _var_impl(x, dim, unbiased, keepdim, correction, True, True, "std_mean")


# -- max / min / amax / amin / argmax / argmin

cdef object _binary_extreme(TensorBase x, object other, object out, bint is_max):
    """max(x, other) is maximum(x, other) (elementwise, found by name: it lives elsewhere)."""
    name = "maximum" if is_max else "minimum"
    fn = getattr(_sys.modules.get("tensorlib"), name, None)
    if fn is None:
        raise NotImplementedError(f"{'max' if is_max else 'min'}(input, other): "
                                  f"tensorlib.{name} is not available in this build")
    return fn(x, other) if out is None else fn(x, other, out=out)


cdef object _max_min(TensorBase x, object dim, object keepdim, object other, object out, bint is_max):
    cdef str op = "max" if is_max else "min"
    cdef int d
    cdef list mask
    cdef TensorBase values, indices
    if isinstance(dim, TensorBase) or other is not None:
        if other is None:
            other, dim = dim, None
        elif dim is not None:
            raise TypeError(f"{op}(): 'other' and 'dim' cannot both be given")
        return _binary_extreme(x, other, out, is_max)
    if dim is None:
        if keepdim is not None and keepdim is not False:
            raise TypeError(f"{op}(): keepdim requires a dim")
        _check_nonempty_dims(x, None, op, False)
        mask = [True] * x._ndim
        return _into_out(_reduce(x, mask, False, TL_R_MAX if is_max else TL_R_MIN, x._dtype),
                         out, op)
    d = _wrap_dim(_iarg(dim, op, "dim", 2), x._ndim)
    mask = [i == d for i in range(x._ndim)]
    _check_nonempty_dims(x, mask, op, True)
    values, indices = _reduce_arg(x, d if x._ndim > 0 else -1, bool(keepdim), is_max, True)
    if x._ndim == 0:
        # fresh 0-d tensors, as PyTorch returns (a view of the temporaries would make an
        # in-place write into the result look like a write into a view)
        values, indices = _clone(_reshape(values, ())), _clone(_reshape(indices, ()))
    if out is not None:
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"{op}(): argument 'out' must be a tuple of two Tensors")
        values = _into_out(values, out[0], op)
        indices = _into_out(indices, out[1], op)
    return _rtype(op)((values, indices))


cdef TensorBase _amax_amin(TensorBase x, object dim, bint keepdim, object out, bint is_max):
    cdef str op = "amax" if is_max else "amin"
    cdef int wd
    if isinstance(dim, (tuple, list)) and x._numel == 0 and x._ndim > 0:
        # PyTorch checks each listed dim for size 0 before it looks for repeats
        for d in dim:
            wd = _wrap_dim(_iarg(d, op, "dim", 2), x._ndim)
            if x._shape[wd] == 0:
                raise IndexError(f"{op}(): Expected reduction dim {wd} to have non-zero size.")
    cdef list mask = _reduce_mask(x, dim, op)
    _check_nonempty_dims(x, mask, op, _dims_given(dim))
    return _into_out(_reduce(x, mask, keepdim, TL_R_MAX if is_max else TL_R_MIN, x._dtype), out, op)


cdef TensorBase _argmax_argmin(TensorBase x, object dim, bint keepdim, bint is_max):
    cdef str op = "argmax" if is_max else "argmin"
    cdef int d
    if x._dtype.code == DT_BOOL:
        raise RuntimeError(f"{op}(): does not support bool input")
    if dim is None:
        if x._numel == 0:
            raise IndexError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0.")
        return _reduce_arg(x, -1, keepdim, is_max, False)[1]
    d = _wrap_dim(_iarg(dim, op, "dim", 2), x._ndim)
    if x._ndim == 0:
        return _reshape(_reduce_arg(x, -1, False, is_max, False)[1], ())
    if x._shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")
    return _reduce_arg(x, d, keepdim, is_max, False)[1]


# -- all / any / count_nonzero

cdef TensorBase _all_any(TensorBase x, object dim, bint keepdim, object out, bint is_all):
    cdef str op = "all" if is_all else "any"
    cdef list mask = _reduce_mask(x, dim, op)
    cdef DType dt = x._dtype if x._dtype.code == DT_UINT8 else dtype_of(DT_BOOL)
    return _into_out(_reduce(x, mask, keepdim, TL_R_ALL if is_all else TL_R_ANY, dt), out, op)


cdef TensorBase _count_nonzero(TensorBase x, object dim):
    cdef list mask = _reduce_mask(x, dim, "count_nonzero")
    return _reduce(x, mask, False, TL_R_NONZERO, dtype_of(DT_INT64))


# -- norm

cdef TensorBase _norm(TensorBase x, object p, object dim, bint keepdim, object out, object dtype):
    cdef double pv
    cdef list mask
    cdef DType dt
    cdef TensorBase res
    cdef str which
    if not x._dtype.is_floating_point:
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_tn(x)}")
    if dtype is not None:
        dt = <DType>dtype
        if not dt.is_floating_point or dt.itemsize < x._dtype.itemsize:
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({_tn(x)}) should be "
                               f"convertible without narrowing to the specified dtype "
                               f"({_TORCH_TYPE_NAME[dt.code]})")
        x = _as_dtype_arg(x, dt)
    if p is None:
        p = "fro"
    if isinstance(p, str):
        if p != "fro":
            if p == "nuc":
                raise NotImplementedError("norm(): the nuclear norm needs singular values: use "
                                          "tensorlib.linalg.matrix_norm")
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
        if isinstance(dim, (tuple, list)) and len(dim) > 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                               f"{' '.join(str(d) for d in dim)}")
        pv = 2.0
    else:
        pv = _farg(p, "norm", "p", 2)
    mask = _reduce_mask(x, dim, "norm")
    if pv == INFINITY or pv == -INFINITY:
        which = "inf" if pv > 0 else "-inf"
        if not _dims_given(dim) and x._numel == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {which} norm on an empty "
                               f"tensor because the operation does not have an identity")
        for i in range(x._ndim):
            if mask[i] and x._shape[i] == 0 and _dims_given(dim):
                raise RuntimeError(f"linalg.vector_norm cannot compute the {which} norm on the "
                                   f"dimension {i} because this dimension is empty and the "
                                   f"operation does not have an identity")
        res = _reduce(x, mask, keepdim, TL_R_ABSMAX if pv > 0 else TL_R_ABSMIN, x._dtype)
    elif pv == 0.0:
        res = _reduce(x, mask, keepdim, TL_R_NONZERO, x._dtype)
    elif pv == 1.0 or _reduces_one_element(x, mask):
        # one element per output: |x| itself, as PyTorch gives it (x^2 could overflow)
        res = _reduce(x, mask, keepdim, TL_R_ABSSUM, x._dtype)
    elif pv == 2.0:
        res = _reduce(x, mask, keepdim, TL_R_SUMSQ, x._dtype, TL_POST_SQRT_DIV, 1.0)
    else:
        res = _reduce(x, mask, keepdim, TL_R_POWSUM, x._dtype, TL_POST_ROOT, pv, pv)
    return _into_out(res, out, "norm")


cdef bint _reduces_one_element(TensorBase x, list mask):
    """Whether every output of a reduction over the dims in mask reads exactly one element."""
    cdef Py_ssize_t i, n = 1
    for i in range(x._ndim):
        if mask[i]:
            n *= x._shape[i]
    return n == 1


# -- logsumexp: the max m per output, then log(sum(exp(x - m))) + m (m = 0 where it is
# infinite, so rows of -inf give -inf and a +inf gives +inf)

cdef TensorBase _logsumexp(TensorBase x, object dim, bint keepdim, object out):
    cdef list mask
    cdef TensorBase center
    cdef double* c
    cdef int64_t i
    if not x._dtype.is_floating_point:
        x = _to_dtype(x, default_float_dtype(), False)
    mask = _reduce_mask(x, dim, "logsumexp")
    center = _reduce(x, mask, keepdim, TL_R_MAX, dtype_of(DT_FLOAT64))
    if center._storage.device.type == "cuda":
        # on the device, after the max (a NaN center gives NaN either way)
        center.nan_to_num_(0.0, 0.0, 0.0)
    else:
        c = <double*>tensor_data(center)
        for i in range(center._numel if has_data(center) else 0):
            if c[i] == INFINITY or c[i] == -INFINITY:
                c[i] = 0.0
    return _into_out(_reduce(x, mask, keepdim, TL_R_SUMEXP, x._dtype, TL_POST_LOG_CENTER, 1.0,
                             0.0, center), out, "logsumexp")


# -- dim-wise ops on contiguous [outer, n, inner] views

cdef int _split3(TensorBase x, int d, int64_t* outer, int64_t* n, int64_t* inner) except -1:
    cdef int i
    outer[0] = 1
    inner[0] = 1
    n[0] = x._shape[d] if x._ndim > 0 else 1
    for i in range(d):
        outer[0] *= x._shape[i]
    for i in range(d + 1, x._ndim):
        inner[0] *= x._shape[i]
    return 0


cdef TensorBase _softmax_impl(TensorBase x, int64_t dim, object dtype, bint want_log):
    cdef str op = "log_softmax" if want_log else "softmax"
    cdef int d
    cdef int64_t outer, n, inner
    cdef DType res_dt
    cdef TensorBase xc, y
    x = _as_dtype_arg(x, dtype)
    d = _wrap_dim(dim, x._ndim)
    if not x._dtype.is_floating_point:
        kern = "lastdim_kernel_impl" if (x._ndim <= 1 or d == x._ndim - 1) else "kernel_impl"
        raise NotImplementedError(f'"{op}_{kern}" not implemented for \'{_tn(x)}\'')
    res_dt = x._dtype
    xc = _contiguous(x) if x._dtype.code in (DT_FLOAT32, DT_FLOAT64) else \
        _contiguous_copy(x, dtype_of(DT_FLOAT32))
    y = _new_empty(tuple(x.shape), xc._dtype, x._storage.device)
    cdef const char* xp = tensor_data(xc)
    cdef char* yp = tensor_data(y)
    cdef int code = xc._dtype.code
    _split3(xc, d, &outer, &n, &inner)
    backend_of(xc).softmax(code, want_log, xp, yp, outer, n, inner)
    return _to_dtype(y, res_dt, False)


cdef TensorBase _softmax(TensorBase x, int64_t dim, object dtype):
    return _softmax_impl(x, dim, dtype, False)


cdef TensorBase _log_softmax(TensorBase x, int64_t dim, object dtype):
    return _softmax_impl(x, dim, dtype, True)


cdef TensorBase _cumulative(TensorBase x, int64_t dim, object dtype, object out, bint inplace,
                            bint prod):
    cdef str op = ("cumprod" if prod else "cumsum") + ("_" if inplace else "")
    cdef int d, code
    cdef int64_t outer, n, inner
    cdef DType res_dt
    cdef TensorBase src = x, xc, y
    d = _wrap_dim(dim, x._ndim)     # (PyTorch checks the dim before the dtype)
    if inplace and dtype is not None and dtype is not x._dtype:
        raise RuntimeError(f"{op}(): dtype {dtype} does not match the tensor's dtype {x._dtype}")
    if dtype is not None and (<DType>dtype).code == DT_BOOL and x._numel != 0 and x._ndim != 0:
        # (an empty or 0-d input runs no kernel in PyTorch: no error; this error comes before
        # autograd's dtype check)
        raise NotImplementedError(f'"{"cumprod" if prod else "cumsum"}_out_cpu" not '
                                  f"implemented for 'Bool'")
    _check_grad_dtype(x, dtype)
    x = _as_dtype_arg(x, dtype)
    res_dt = x._dtype if inplace or dtype is not None else _sum_dtype(x)
    code = _compute_code(x._dtype.code)
    xc = _contiguous(x) if x._dtype.code == code else _contiguous_copy(x, dtype_of(code))
    y = _new_empty(tuple(x.shape), xc._dtype, x._storage.device)
    cdef const char* xp = tensor_data(xc)
    cdef char* yp = tensor_data(y)
    _split3(xc, d, &outer, &n, &inner)
    backend_of(xc).cumulative(prod, code, xp, yp, outer, n, inner)
    if inplace:
        prepare_write(src, None)
        _copy_into(src, y)
        return src
    return _into_out(_to_dtype(y, res_dt, False), out, op)


cdef TensorBase _cumsum(TensorBase x, int64_t dim, object dtype, object out, bint inplace):
    return _cumulative(x, dim, dtype, out, inplace, False)


cdef TensorBase _cumprod(TensorBase x, int64_t dim, object dtype, object out, bint inplace):
    return _cumulative(x, dim, dtype, out, inplace, True)


# ---- backward helpers (autograd formulas in tensorlib/ops/decl/ call these)
# Written in tensorlib ops (recorded), so create_graph=True differentiates through them.

def _has_zero(t):
    """Whether t has a zero (a meta tensor has no values: the zero-free formula is taken)."""
    return False if t.is_meta else bool((t == 0).any())


def _rev_cumsum(t, int d):
    """Sums from each position to the end of dim d."""
    return t.flip(d).cumsum(d).flip(d)


def _prod_others(x, int d):
    """For each element, the product of the other elements along dim d: an exclusive prefix
    product times an exclusive suffix product. Exact with any number of zeros, and a
    polynomial in x (so its derivatives are right at zeros too)."""
    cdef int64_t n = x.shape[d]
    one = _GENERATED_FUNCTIONS["ones_like"](x.narrow(d, 0, 1))
    cat = _GENERATED_FUNCTIONS["cat"]
    pre = cat([one, x.narrow(d, 0, n - 1)], d).cumprod(d)
    suf = cat([x.narrow(d, 1, n - 1), one], d).flip(d).cumprod(d).flip(d)
    return pre * suf


def _prod_backward(grad, self, result, dim, keepdim):
    """d prod / d x_j = the product of the other elements: result / x_j when no element is
    zero; otherwise the exact prefix/suffix form (one zero: only the zero gets a gradient;
    two or more: all gradients are zero)."""
    sizes = tuple(self.shape)
    if self.dim() == 0:
        return grad.reshape(())
    # (an empty input takes the division form too, as in PyTorch: under create_graph its
    # gradient then has a history)
    if dim is None:
        if not _has_zero(self):
            return grad * result / self
        if self.numel() == 1:
            return grad.reshape(sizes)
        return (grad * _prod_others(self.reshape(-1), 0)).reshape(sizes)
    d = int(dim) % self.dim()
    g = _expand_reduced(grad, sizes, d, keepdim)
    if not _has_zero(self):
        return g * _expand_reduced(result, sizes, d, keepdim) / self
    # (with zeros, a product of one element passes the gradient itself, as PyTorch's: under
    # create_graph it has no history of self)
    return g if sizes[d] == 1 else g * _prod_others(self, d)


def _cumprod_backward(grad, self, dim, result):
    """d/dx_j of sum_i g_i * prod_{k<=i} x_k = sum_{i>=j} g_i * prod_{k<=i, k!=j} x_k.
    Without zeros that is rev_cumsum(g * y)_j / x_j. With zeros: the exact O(n) form for a
    plain backward, and under create_graph the polynomial O(n^2) form, whose own derivatives
    are right at the zeros as well."""
    d = int(dim) % self.dim() if self.dim() else 0
    if self.numel() <= 1 or self.shape[d] == 1:
        # each product is its one factor: the gradient is grad itself, as in PyTorch, which
        # under create_graph then has no history of self
        return grad
    if not _has_zero(self):
        return _rev_cumsum(grad * result, d) / self
    if _grad_on():
        return _cumprod_backward_poly(grad, self, d)
    return _cumprod_backward_zeros(grad, self, d, result)


def _cumprod_backward_zeros(grad, self, int d, result):
    """Before a slice's first zero z1 the division form holds (later products are zero on
    both sides). At z1 the gradient is prod(x[:z1]) * sum_{z1<=i<z2} g_i * prod_{z1<k<=i} x_k
    (z2 the second zero; later terms hold x_z2 = 0 and are left out). After z1 it is zero.
    PyTorch's grouping, so the values that overflow (inf, or NaN where an overflowed product
    meets a masked-out gradient) are the same."""
    where = _GENERATED_FUNCTIONS["where"]
    is0 = self == 0
    zc = is0.cumsum(d)
    before = zc == 0
    from_first = zc == 1
    first = is0 & from_first
    between = from_first & ~first
    w = where(before, grad * result, 0.0)
    a = where(before, _rev_cumsum(w, d) / where(before, self, 1.0), 0.0)
    tail = (where(between, self, 1.0).cumprod(d) * where(from_first, grad, 0.0)).sum(d, True)
    b = where(first, tail * where(before, self, 1.0).prod(d, True), 0.0)
    return a + b


def _cumprod_backward_poly(grad, self, int d):
    """grad_j = (prod_{k<j} x_k) * sum_{i>=j} g_i * prod_{j<k<=i} x_k, built from an (n, n)
    table of running products: no division, a polynomial in x."""
    where = _GENERATED_FUNCTIONS["where"]
    x = self.movedim(d, -1)
    g = grad.movedim(d, -1)
    cdef int64_t n = x.shape[-1]
    ar = _GENERATED_FUNCTIONS["arange"](n, device=x.device)
    later = ar.unsqueeze(0) > ar.unsqueeze(1)           # [j, i]: i > j
    table = where(later, x.unsqueeze(-2), 1.0).cumprod(-1)   # [.., j, i] = prod_{j<k<=i} x_k
    s = (where(ar.unsqueeze(0) >= ar.unsqueeze(1), table, 0.0) * g.unsqueeze(-2)).sum(-1)
    one = _GENERATED_FUNCTIONS["ones_like"](x.narrow(-1, 0, 1))
    pre = _GENERATED_FUNCTIONS["cat"]([one, x.narrow(-1, 0, n - 1)], -1).cumprod(-1)
    return (pre * s).movedim(-1, d)


def _max_other_backward(grads, self, dim, other, bigger):
    """The gradient of ``other`` in max(input, other) (``other`` may arrive as ``dim``)."""
    o = other if other is not None else dim
    if not isinstance(o, TensorBase):
        return None
    return _max_min_share(grads[0], o, self, bigger)


def _var_mean_backward(grads, self, dim, correction, keepdim, unbiased, take_sqrt):
    """var_mean/std_mean: the gradients from both outputs, added."""
    if isinstance(dim, bool):              # legacy var_mean(input, unbiased) form
        unbiased, dim = dim, None
    gv, gm = grads[0], grads[1]
    sizes = tuple(self.shape)
    out = None
    if gv is not None:
        if take_sqrt:
            std = _GENERATED_FUNCTIONS["std"](self, dim, unbiased, keepdim, correction=correction)
            out = _std_backward(gv, self, std, dim, correction, keepdim, unbiased)
        else:
            out = _var_backward(gv, self, dim, correction, keepdim, unbiased)
    if gm is not None:
        t = _expand_reduced(gm, sizes, dim, keepdim) / _bw_reduced_count(sizes, dim)
        out = t if out is None else out + t
    return out
