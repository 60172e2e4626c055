# Linear algebra: mm, matmul, bmm, mv, dot, outer, addmm, addmv, baddbmm, tensordot, einsum.
#
# Every product reduces to one engine, _la_bmm_into (backend.pxi, in the core, shared with the
# nn kernels): out[B, M, N] = a[B, M, K] @ b[B, K, N], the operands described by (tensor,
# LaMat geometry) so transposes, slices and broadcast batches
# need no view objects. float32/float64 go through NumPy's BLAS: np.matmul with out= into our
# own storage, so NumPy never allocates tensor data (the allocator rule). Operands BLAS cannot
# read in place (neither row- nor column-major, or broadcast inside a matrix) are first copied
# into memory from our allocator. float16/bfloat16 compute in float32 temporaries and round
# once. Integers use our own loops (cpu_linalg.c: int64 accumulation with wraparound, which
# modulo 2**bits is exactly what a narrower wrapping type gives). tensordot and einsum are
# permute/reshape plus the same engine; einsum's sums are products with a ones vector.
# (included into linalg.pyx, the linalg family's module)
from libc.math cimport fabs
from libc.float cimport FLT_MAX
import operator


# dtype names as PyTorch's messages spell them: C++ types, ScalarType names, and the C types
# of "value cannot be converted to type ... without overflow".
cdef tuple _la_CPP_NAME = ("bool", "unsigned char", "signed char", "short int", "int", "long int",
                        "c10::Half", "c10::BFloat16", "float", "double")
cdef tuple _la_ST_NAME = ("Bool", "Byte", "Char", "Short", "Int", "Long", "Half", "BFloat16",
                       "Float", "Double")
cdef tuple _la_VAL_NAME = ("bool", "uint8_t", "int8_t", "int16_t", "int32_t", "int64_t",
                        "c10::Half", "c10::BFloat16", "float", "double")

# how an op words an out= tensor of the wrong dtype
cdef enum LaOutMsg:
    LA_OUT_EXPECTED = 0        # mm, bmm, addmm, addmv, baddbmm, batched matmul
    LA_OUT_RESULT = 1          # dot (and matmul of two vectors)
    LA_OUT_TENSORDOT = 2




cdef inline str _la_cpp(TensorBase t):
    return _la_CPP_NAME[t._dtype.code]


cdef inline str _la_st(TensorBase t):
    return _la_ST_NAME[t._dtype.code]


cdef inline LaMat _la_bm2(TensorBase t) noexcept:
    """A matrix (2-D tensor) as a batch of one."""
    return _la_bm(t._offset, 0, t._strides[0], t._strides[1])


cdef inline LaMat _la_bm3(TensorBase t) noexcept:
    return _la_bm(t._offset, t._strides[0], t._strides[1], t._strides[2])


cdef int _la_no_bool(TensorBase t, str kernel, TensorBase other=None) except -1:
    """PyTorch has no Bool product kernel, but fills an empty product (an operand of no
    elements: an empty result or K == 0) before choosing one; dot has no such exit."""
    if t._dtype.code == DT_BOOL:
        if other is not None and (t._numel == 0 or other._numel == 0):
            return 0
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    return 0


# ---------------------------------------------------------------------------------------------
# the engine

# ---------------------------------------------------------------------------------------------
# results and out=

cdef TensorBase _la_out_tensor(object out, int nd, const int64_t* shape, DType dt, Device dev,
                            int msg, str op):
    """A new result tensor, or the out= tensor checked (dtype), resized and prepared."""
    cdef TensorBase o
    if out is None:
        return empty_tensor(nd, shape, dt, dev)
    o = _targ(out, op, "out", 0)
    if o._dtype is not dt:
        if msg == LA_OUT_RESULT:
            raise RuntimeError(f"result dtype {_la_st(o)} does not match input dtype {_la_ST_NAME[dt.code]}")
        if msg == LA_OUT_TENSORDOT:
            raise RuntimeError(f"tensordot: Expected the output tensor to have dtype {_la_ST_NAME[dt.code]}, "
                               f"but got an output tensor with dtype {_la_st(o)}")
        raise RuntimeError(f"Expected out tensor to have dtype {_la_CPP_NAME[dt.code]}, but got {_la_cpp(o)} instead")
    _resize_out(o, nd, shape)
    prepare_write(o, None)
    return o


cdef TensorBase _la_scratch(TensorBase o, TensorBase a, TensorBase b):
    """Where to compute a result bound for ``o``: o itself when it is contiguous and shares no
    memory with the operands (BLAS cannot write over its inputs), else a temporary."""
    if o._contiguous and _overlap(o, a) == OVERLAP_NO and _overlap(o, b) == OVERLAP_NO:
        return o
    return _empty_like_shape(o)


cdef TensorBase _la_deliver(TensorBase o, TensorBase t):
    if t is not o:
        _copy_into(o, t)
    return o


cdef TensorBase _la_product(object out, int nd, const int64_t* shape, int msg, str op,
                         int64_t B, int64_t M, int64_t N, int64_t K,
                         TensorBase a, LaMat ga, TensorBase b, LaMat gb):
    """The result of a product (shape ``shape``, B*M*N elements), fresh or into out=."""
    cdef TensorBase o = _la_out_tensor(out, nd, shape, a._dtype, a._storage.device, msg, op)
    cdef TensorBase t = o if out is None else _la_scratch(o, a, b)
    _la_bmm_into(t, B, M, N, K, a, ga, b, gb)
    return _la_deliver(o, t)


# ---------------------------------------------------------------------------------------------
# mm, bmm, mv, dot, outer

cdef TensorBase _la_mm2(TensorBase a, TensorBase b, object out, str op):
    """A product of two matrices (checks in PyTorch's order: shapes, dtypes, Bool)."""
    cdef int64_t sh[2]
    if a._shape[1] != b._shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._shape[0]}x{a._shape[1]} "
                           f"and {b._shape[0]}x{b._shape[1]})")
    if a._dtype is not b._dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_la_cpp(a)} != {_la_cpp(b)}")
    _la_no_bool(a, "addmm_impl_cpu_", b)
    sh[0] = a._shape[0]
    sh[1] = b._shape[1]
    return _la_product(out, 2, sh, LA_OUT_EXPECTED, op, 1, sh[0], sh[1], a._shape[1], a, _la_bm2(a), b, _la_bm2(b))


cdef TensorBase _mm(TensorBase a, TensorBase b, object out):
    """mm(input, mat2): the matrix product of two 2-D tensors."""
    if a._ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b._ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return _la_mm2(a, b, out, "mm")


cdef TensorBase _bmm(TensorBase a, TensorBase b, object out):
    """bmm(input, mat2): batched products of 3-D tensors with equal batch sizes."""
    cdef int64_t sh[3]
    if a._ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b._ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    a = _la_empty_as(a, b)
    _la_check_bmm(a._shape[0], a._shape[2], b._shape[0], b._shape[1], a, b)
    sh[0] = a._shape[0]
    sh[1] = a._shape[1]
    sh[2] = b._shape[2]
    return _la_product(out, 3, sh, LA_OUT_EXPECTED, "bmm", sh[0], sh[1], sh[2], a._shape[2],
                    a, _la_bm3(a), b, _la_bm3(b))


cdef TensorBase _la_empty_as(TensorBase a, TensorBase b):
    """PyTorch's bmm runs no kernel for an empty product and makes its result with the second
    operand's dtype, so mismatched dtypes pass there: a is read as b's dtype."""
    if a._dtype is not b._dtype and (a._numel == 0 or b._numel == 0):
        if _grad_on() and (_req(a) or _req(b)) and \
                not b._dtype.is_floating_point:
            # (an integer result of a differentiable op: PyTorch's autograd refuses it)
            raise RuntimeError(f"Autograd not support dtype: {b._dtype.legacy_name[:-6]}")
        return _to_dtype(a, b._dtype, False)
    return a


cdef int _la_check_bmm(int64_t B, int64_t K, int64_t B2, int64_t K2, TensorBase a, TensorBase b) except -1:
    if B != B2 or K != K2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{B}, {K}] but got: [{B2}, {K2}].")
    # (PyTorch's bmm picks its kernel by the first operand's dtype, then compares the second's)
    _la_no_bool(a, "bmm", b)
    if a._dtype is not b._dtype:
        raise RuntimeError(f"expected scalar type {_la_st(a)} but found {_la_st(b)}")
    return 0


cdef TensorBase _mv(TensorBase a, TensorBase v, object out):
    """mv(input, vec): matrix (M x K) times vector (K)."""
    cdef int64_t M
    if a._ndim == 0:
        _wrap_dim(0, 0, False)          # PyTorch sizes the result first: an IndexError
    if a._ndim != 2 or v._ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a._ndim}, {v._ndim}")
    M = a._shape[0]
    if a._shape[1] != v._shape[0]:
        raise RuntimeError(f"size mismatch, got input ({M}), mat ({M}x{a._shape[1]}), vec ({v._shape[0]})")
    res = _targ(out, "mv", "out", 0) if out is not None else v
    if a._dtype is not v._dtype or (<TensorBase>res)._dtype is not v._dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_la_st(<TensorBase>res)}, {_la_st(a)}, and {_la_st(v)}")
    _la_no_bool(a, "addmv_impl_cpu", v)
    return _la_product(out, 1, &M, LA_OUT_EXPECTED, "mv", 1, M, 1, a._shape[1],
                    a, _la_bm2(a), v, _la_bm(v._offset, 0, v._strides[0], 0))


cdef TensorBase _dot(TensorBase a, TensorBase b, object out):
    """dot(input, tensor): the inner product of two 1-D tensors (a 0-d result)."""
    if a._ndim != 1 or b._ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a._ndim}D and {b._ndim}D tensors")
    if a._dtype is not b._dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_la_st(a)} and {_la_st(b)}")
    if a._numel != b._numel:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a._numel}] and src [{b._numel}] "
                           f"to have the same number of elements, but got {a._numel} and {b._numel} "
                           f"elements respectively")
    _la_no_bool(a, "dot")
    return _la_product(out, 0, NULL, LA_OUT_RESULT, "dot", 1, 1, 1, a._shape[0],
                    a, _la_bm(a._offset, 0, 0, a._strides[0]), b, _la_bm(b._offset, 0, b._strides[0], 0))


cdef TensorBase _outer(TensorBase a, TensorBase b, object out):
    """outer(input, vec2): a[i] * b[j] with type promotion (exact products, K == 1)."""
    cdef int64_t sh[2]
    cdef int64_t st[2]
    cdef int code
    cdef DType dt
    cdef TensorBase o, t
    if a._ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {a._ndim}-D")
    if b._ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {b._ndim}-D")
    code = result_type_codes((a, b))
    dt = dtype_of(code)
    sh[0] = a._shape[0]
    sh[1] = b._shape[0]
    if out is None:
        o = empty_tensor(2, sh, dt, a._storage.device)
        if sh[0] == 0 and sh[1] == 1:
            # PyTorch's outer is input.reshape(-1, 1) * vec2, laid out by TensorIterator: for a
            # (0, 1) result its tie-break on equal strides puts dim 0 inside, strides (1, 0)
            st[0] = 1
            st[1] = 0
            _set_geometry(o, 2, sh, st)
    else:
        o = _targ(out, "outer", "out", 0)
        if not can_cast_codes(code, o._dtype.code):
            raise RuntimeError(f"result type {_la_ST_NAME[code]} can't be cast to the desired output "
                               f"type {_la_st(o)}")
        _resize_out(o, 2, sh)
        prepare_write(o, None)
    if a._dtype is not dt:
        a = _contiguous_copy(a, dt)
    if b._dtype is not dt:
        b = _contiguous_copy(b, dt)
    t = _la_scratch(o, a, b) if o._dtype is dt else empty_tensor(2, sh, dt, o._storage.device)
    _la_bmm_into(t, 1, sh[0], sh[1], 1, a, _la_bm(a._offset, 0, a._strides[0], 0),
                 b, _la_bm(b._offset, 0, 0, b._strides[0]))
    return _la_deliver(o, t)


# ---------------------------------------------------------------------------------------------
# matmul: every rank case, with PyTorch's folding rule deciding which op's message an error gets

cdef bint _la_foldable(int nd, const int64_t* shape, const int64_t* strides) noexcept:
    """Whether all dims but the last merge into one without a copy (PyTorch folds the batch of
    a >= 3-D operand into the rows of one mm/mv then)."""
    cdef int i
    cdef int64_t n = 1
    for i in range(nd):
        n *= shape[i]
    if n == 0:
        return True
    for i in range(nd - 2):
        if strides[i] != strides[i + 1] * shape[i + 1]:
            return False
    return True


cdef TensorBase _la_batched_operand(TensorBase t, int tb, int nb, const int64_t* bshape, int64_t B,
                                 int64_t R, int64_t C, int64_t sr, int64_t sc, LaMat* g):
    """Describe t's first ``tb`` dims, broadcast to the batch shape, as one batch stride in g.
    When they do not merge into one stride, t broadcast to [B, R, C] is copied (our allocator)."""
    cdef int64_t st[MAX_DIMS]
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t expected = 0
    cdef int i, j
    cdef bint first = True, ok = True
    cdef TensorBase c
    for i in range(nb):
        j = i - (nb - tb)
        st[i] = 0 if (j < 0 or t._shape[j] == 1) else t._strides[j]
    g.sb = 0
    for i in range(nb - 1, -1, -1):
        if bshape[i] == 1:
            continue
        if first:
            g.sb = st[i]
            first = False
        elif st[i] != expected:
            ok = False
            break
        expected = st[i] * bshape[i]
    g.off = t._offset
    g.sr = sr
    g.sc = sc
    if ok:
        return t
    for i in range(nb):
        sh[i] = bshape[i]
    sh[nb] = R
    sh[nb + 1] = C
    st[nb] = sr
    st[nb + 1] = sc
    c = empty_tensor(nb + 2, sh, t._dtype, t._storage.device)
    backend_of(t).copy(nb + 2, sh, tensor_data(c), c._strides, t._dtype.code, tensor_data(t), st,
                       t._dtype.code)
    g[0] = _la_bm(0, R * C, C, 1)
    return c


cdef str _la_infer_batch(int na, const int64_t* a, int nb, const int64_t* b, int64_t* out, int* nd_out):
    """Broadcast two batch shapes (PyTorch's message names the dim of the longer one)."""
    cdef int nd = na if na > nb else nb
    cdef int i
    cdef int64_t sa, sb
    for i in range(nd - 1, -1, -1):
        sa = a[na - nd + i] if i >= nd - na else 1
        sb = b[nb - nd + i] if i >= nd - nb else 1
        if sa == sb or sb == 1:
            out[i] = sa
        elif sa == 1:
            out[i] = sb
        else:
            return (f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                    f"non-singleton dimension {i}")
    nd_out[0] = nd
    return None


cdef TensorBase _matmul(TensorBase a, TensorBase b, object out):
    """matmul(input, other) for every rank case (also the ``@`` operator)."""
    cdef int da = a._ndim, db = b._ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return _dot(a, b, out)
    if da == 2 and db == 1:
        return _mv(a, b, out)
    if da == 2 and db == 2:
        return _la_mm2(a, b, out, "matmul")
    if da == 1 and db == 2:
        return _la_matmul_deliver(_la_squeeze_dim0(_la_mm2(_unsqueeze(a, 0), b, None, "matmul")), out)
    return _la_matmul_nd(a, b, out)


cdef object _matmul_op(TensorBase a, TensorBase b, object out):
    """matmul (and ``@``): the kernels above, or while recording PyTorch's decomposition into
    recorded ops, so the graph (MmBackward0 after a ViewBackward0 fold, BmmBackward0 after
    expands, UnsafeViewBackward0 at the end, ...) and what it saves are PyTorch's."""
    if _grad_on() and (_req(a) or _req(b)):
        if out is not None:
            _check_out_no_grad("matmul", (a, b))
        return _matmul_recorded(a, b)
    return _matmul(a, b, out)


cdef bint _matmul_should_fold(TensorBase t1, TensorBase t2):
    """PyTorch's rule for folding the batch dims of the larger operand into one mm/mv: when
    the other operand is a vector or a matrix, and either it requires grad (a smaller graph
    for backward) or the fold needs no copy."""
    cdef bint larger = t1._ndim >= t2._ndim
    cdef TensorBase a = t1 if larger else _transpose(t2, -1, -2)
    cdef int dim_b = t2._ndim if larger else t1._ndim
    if not (a._ndim >= 3 and dim_b <= 2):
        return False
    # (a named operand, not `(t2 if larger else t1)._requires_grad`: Cython 3.3 leaks a
    # reference to the conditional expression's temporary when the test is false)
    cdef TensorBase other = t2 if larger else t1
    if _req(other):
        return True
    if t1._ndim == 2:
        return False
    return _la_foldable(a._ndim, a._shape, a._strides)


cdef object _matmul_recorded(TensorBase t1, TensorBase t2):
    cdef int d1 = t1._ndim, d2 = t2._ndim
    if d1 == 0 or d2 == 0:
        return _matmul(t1, t2, None)          # raises PyTorch's error
    if d1 == 1 and d2 == 1:
        return _call_dot(t1, t2, None, False)
    if d1 == 2 and d2 == 1:
        return _call_mv(t1, t2, None, False)
    if d1 == 1 and d2 == 2:
        return _call_squeeze_(_call_mm(_call_unsqueeze(t1, 0, False), t2, None, False), 0, True)
    if d1 == 2 and d2 == 2:
        return _call_mm(t1, t2, None, False)
    cdef int64_t m1 = t1._shape[d1 - 1]
    cdef int64_t m2 = t2._shape[d2 - 2] if d2 > 1 else t2._shape[0]
    if m1 != m2:
        return _matmul(t1, t2, None)          # raises PyTorch's error with the shapes
    cdef bint transpose
    cdef TensorBase a, b, r
    # PyTorch drops a batch of one from a 3-D operand that requires grad when the other is a
    # real 3-D batch: the product then folds into one mm, a smaller graph for backward
    if d1 == 3 and d2 == 3 and (t1._shape[0] == 1) != (t2._shape[0] == 1):
        if t1._shape[0] == 1 and _req(t1):
            return _matmul_recorded(_call_squeeze(t1, 0, False), t2)
        if t2._shape[0] == 1 and _req(t2):
            return _matmul_recorded(t1, _call_squeeze(t2, 0, False))
    if _matmul_should_fold(t1, t2):
        transpose = d2 > d1
        if transpose:
            a = _call_transpose(t2, -1, -2, False)
            b = _call_t(t1, False) if d1 == 2 else t1
        else:
            a, b = t1, t2
        lead = list(a.shape)[:-1]
        af = _call_reshape(a, (_la_prod(lead), a._shape[a._ndim - 1]), False)
        if b._ndim == 2:
            lead.append(b._shape[1])
            r = _call__unsafe_view(_call_mm(af, b, None, False), tuple(lead), False)
            return _call_contiguous(_call_transpose(r, -1, -2, False), None, False) if transpose else r
        return _call__unsafe_view(_call_mv(af, b, None, False), tuple(lead), False)
    # batched: broadcast the batch dims, flatten them, one bmm, then the output's shape
    cdef int64_t n = t1._shape[d1 - 2] if d1 > 1 else 1
    cdef int64_t p = t2._shape[d2 - 1] if d2 > 1 else 1
    cdef int64_t bsh[MAX_DIMS]
    cdef int nbd = broadcast_shapes(max(d1 - 2, 0), t1._shape, max(d2 - 2, 0), t2._shape, bsh)
    batch = [bsh[i] for i in range(nbd)]
    nb = _la_prod(batch)
    e1 = _call_reshape(_call_expand(t1, tuple(batch + [n, m1]), False, False), (nb, n, m1), False)
    if d2 == 1:
        e2 = _call_unsqueeze(_call_reshape(_call_expand(t2, tuple(batch + [m2]), False, False), (nb, m2), False), 2, False)
    else:
        e2 = _call_reshape(_call_expand(t2, tuple(batch + [m2, p]), False, False), (nb, m2, p), False)
    out_shape = batch + ([n] if d1 > 1 else []) + ([p] if d2 > 1 else [])
    r = _call_bmm(e1, e2, None, False)
    if d2 == 1:
        r = _call_squeeze(r, -1, False)
    return _call__unsafe_view(r, tuple(out_shape), False)


cdef TensorBase _la_squeeze_dim0(TensorBase t):
    return _view_of(t, _shape_list(t)[1:], _stride_list(t)[1:], t._offset)


cdef TensorBase _la_matmul_deliver(TensorBase r, object out):
    cdef TensorBase o
    if out is None:
        return r
    o = _la_out_tensor(out, r._ndim, r._shape, r._dtype, r._storage.device, LA_OUT_EXPECTED, "matmul")
    _copy_into(o, r)
    return o


cdef TensorBase _la_matmul_nd(TensorBase a, TensorBase b, object out):
    """matmul with an operand of >= 3 dims: folded into one mm/mv when PyTorch folds, else
    batched with broadcasting."""
    cdef int da = a._ndim, db = b._ndim, nb = 0, i
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int64_t bshape[MAX_DIMS]
    cdef int64_t M, K, K2, N, B = 1
    cdef TensorBase t1, r
    cdef LaMat ga, gb
    cdef list lead
    if da >= 3 and db <= 2 and _la_foldable(da, a._shape, a._strides):
        lead = _shape_list(a)[:-1]
        t1 = _reshape(a, (_la_prod(lead), a._shape[da - 1]))
        if db == 2:
            r = _la_mm2(t1, b, None, "matmul")
            lead.append(b._shape[1])
        else:
            r = _mv(t1, b, None)
        return _la_matmul_deliver(_reshape(r, tuple(lead)), out)
    if da == 1 and db >= 3:
        # PyTorch folds b.mT when its leading dims merge: then it is one mv
        for i in range(db):
            sh[i] = b._shape[i]
            st[i] = b._strides[i]
        sh[db - 2], sh[db - 1] = sh[db - 1], sh[db - 2]
        st[db - 2], st[db - 1] = st[db - 1], st[db - 2]
        if _la_foldable(db, sh, st):
            t1 = make_view(b, db, sh, st, b._offset)
            lead = _shape_list(t1)[:-1]
            r = _mv(_reshape(t1, (_la_prod(lead), sh[db - 1])), a, None)
            return _la_matmul_deliver(_reshape(r, tuple(lead)), out)
    # batched: 1-D operands become a row (a) or a column (b); batch shapes broadcast
    M = a._shape[da - 2] if da >= 2 else 1
    K = a._shape[da - 1]
    K2 = b._shape[db - 2] if db >= 2 else b._shape[0]
    N = b._shape[db - 1] if db >= 2 else 1
    err = _la_infer_batch(da - 2 if da >= 2 else 0, a._shape, db - 2 if db >= 2 else 0, b._shape, bshape, &nb)
    if err is not None:
        raise RuntimeError(err)
    for i in range(nb):
        B *= bshape[i]
    a = _la_empty_as(a, b)
    _la_check_bmm(B, K, B, K2, a, b)
    t1 = _la_batched_operand(a, da - 2 if da >= 2 else 0, nb, bshape, B, M, K,
                          a._strides[da - 2] if da >= 2 else 0, a._strides[da - 1], &ga)
    r = _la_batched_operand(b, db - 2 if db >= 2 else 0, nb, bshape, B, K, N,
                         b._strides[db - 2] if db >= 2 else b._strides[0],
                         b._strides[db - 1] if db >= 2 else 0, &gb)
    for i in range(nb):
        sh[i] = bshape[i]
    i = nb
    if da >= 2:
        sh[i] = M
        i += 1
    if db >= 2:
        sh[i] = N
        i += 1
    return _la_product(out, i, sh, LA_OUT_EXPECTED, "matmul", B, M, N, K, t1, ga, r, gb)


cdef int64_t _la_prod(list xs):
    cdef int64_t n = 1
    for x in xs:
        n *= <int64_t>x
    return n


# ---------------------------------------------------------------------------------------------
# addmm, addmv, baddbmm: beta * input + alpha * product

cdef int _la_check_number(object v, str op, str name) except -1:
    if isinstance(v, (bool, int, float)) or isinstance(v, np.number) or isinstance(v, np.bool_):
        return 0
    raise TypeError(f"{op}(): argument '{name}' must be Number, not {type(v).__name__}")


cdef int _la_overflow(int code) except -1:
    raise RuntimeError(f"value cannot be converted to type {_la_VAL_NAME[code]} without overflow")


cdef double _la_float_scalar(object v, int code) except? -1.5:
    """A scalar for a float op (half types compute in float, so float's range applies)."""
    cdef double d
    try:
        d = float(v)
    except OverflowError:
        _la_overflow(code if code == DT_FLOAT64 else DT_FLOAT32)
    if code != DT_FLOAT64 and c_isfinite(d) and fabs(d) > FLT_MAX:
        _la_overflow(DT_FLOAT32)
    return d


cdef int64_t _la_int_scalar(object v, int code) except? -1:
    """A scalar for an integer op: truncated toward zero, range-checked against the dtype."""
    lo, hi = _INT_RANGE.get(code, (-(1 << 63), (1 << 63) - 1))
    if isinstance(v, float) or isinstance(v, np.floating):
        if not c_isfinite(v) or v < lo or v > hi:
            _la_overflow(code)
        return int(v)
    iv = int(v)
    if iv < lo or iv > hi:
        _la_overflow(code)
    return iv


cdef int _la_pad3(int nd, const int64_t* shape, const int64_t* strides, int64_t* sh3, int64_t* st3) noexcept:
    cdef int i, j
    for i in range(3):
        j = i - (3 - nd)
        sh3[i] = shape[j] if j >= 0 else 1
        st3[i] = strides[j] if j >= 0 else 0
    return 0


cdef TensorBase _la_addprod(str op, TensorBase inp, TensorBase a, LaMat ga, TensorBase b, LaMat gb,
                         int64_t B, int64_t M, int64_t N, int64_t K, int nd, int64_t* S,
                         object beta, object alpha, object out, bint inplace, bint alpha0_skips):
    """beta * inp + alpha * (a @ b), shape S (nd <= 3 dims). The product is computed in the
    compute dtype (float32 for half types, int64 for integers), scaled by our own loop, and
    rounded/wrapped into the result once. beta == 0 ignores NaN in inp (and alpha == 0
    ignores the product where PyTorch does: addmm, addmv)."""
    cdef DType dt = a._dtype
    cdef int code = dt.code
    cdef int cc = DT_FLOAT32 if code in (DT_FLOAT16, DT_BFLOAT16, DT_FLOAT32) else \
        (DT_FLOAT64 if code == DT_FLOAT64 else DT_INT64)
    cdef DType cdt = dtype_of(cc)
    cdef double fb = 0, fa = 0
    cdef int64_t ib = 0, ia = 0
    cdef bint use_x, use_y
    cdef TensorBase y, p, dest = None, r
    cdef int64_t sh3[3]
    cdef int64_t sp3[3]
    cdef int64_t sy3[3]
    cdef int64_t ystr[3]
    cdef int i
    cdef bint same
    _la_check_number(beta, op, "beta")
    _la_check_number(alpha, op, "alpha")
    if cc == DT_INT64:
        ib = _la_int_scalar(beta, code)
        ia = _la_int_scalar(alpha, code)
        use_y = ib != 0
        use_x = ia != 0 or not alpha0_skips
    else:
        fb = _la_float_scalar(beta, code)
        fa = _la_float_scalar(alpha, code)
        use_y = fb != 0
        use_x = fa != 0 or not alpha0_skips
    if inplace:
        same = inp._ndim == nd
        for i in range(nd if same else 0):
            same = same and inp._shape[i] == S[i]
        if not same:
            raise RuntimeError(f"Bad in-place call: input tensor size {list(inp.shape)} and output "
                               f"tensor size {shape_str(nd, S)} should match")
        prepare_write(inp, None)
        dest = inp
    else:
        y = _expand(inp, tuple([S[i] for i in range(nd)]))   # PyTorch's broadcast message
        if out is not None:
            dest = _la_out_tensor(out, nd, S, dt, a._storage.device, LA_OUT_EXPECTED, op)
    # the product, in the compute dtype (straight into the result when they coincide)
    p = empty_tensor(nd, S, cdt, a._storage.device)
    if p._numel == 0:
        return dest if dest is not None else p if code == cc else empty_tensor(nd, S, dt, a._storage.device)
    if use_x:
        if code != cc and cc == DT_FLOAT32 and K > 0:
            a = _la_bmat_copy(a, &ga, B, M, K, cdt)
            b = _la_bmat_copy(b, &gb, B, K, N, cdt)
        _la_bmm_into(p, B, M, N, K, a, ga, b, gb)
    # the input, in the compute dtype, read with broadcast strides
    y = inp
    if use_y and inp._dtype.code != cc:
        y = _contiguous_copy(inp, cdt)
    broadcast_strides(y._ndim, y._shape, y._strides, nd, S, ystr)
    _la_pad3(nd, S, p._strides, sh3, sp3)
    _la_pad3(nd, S, ystr, sh3, sy3)
    if not has_data(p):
        pass                          # (meta: no epilogue to run)
    elif p._storage.device.type == "cuda":
        # the host cannot touch device memory (and the product may not have run yet): the
        # epilogue is queued after it as elementwise kernels, on the same stream
        _la_device_axpby(p, y, fa if cc != DT_INT64 else ia, fb if cc != DT_INT64 else ib,
                         use_x, use_y, tuple([S[i] for i in range(nd)]))
    elif cc == DT_FLOAT32:
        host_axpby_f32(sh3, <float*>tensor_data(p), sp3, <float*>tensor_data(p), sp3,
                     <float*>tensor_data(y), sy3, <float>fa, <float>fb, use_x, use_y)
    elif cc == DT_FLOAT64:
        host_axpby_f64(sh3, <double*>tensor_data(p), sp3, <double*>tensor_data(p), sp3,
                     <double*>tensor_data(y), sy3, fa, fb, use_x, use_y)
    else:
        host_axpby_i64(sh3, <int64_t*>tensor_data(p), sp3, <int64_t*>tensor_data(p), sp3,
                     <int64_t*>tensor_data(y), sy3, ia, ib, use_x, use_y)
    if dest is not None:
        _copy_into(dest, p)
        return dest
    if code == cc:
        return p
    r = empty_tensor(nd, S, dt, a._storage.device)
    backend_of(p).copy(nd, S, tensor_data(r), r._strides, code, tensor_data(p), p._strides, cc)
    return r


cdef int _la_device_axpby(TensorBase p, TensorBase y, object alpha, object beta, bint use_x,
                          bint use_y, tuple shape) except -1:
    """p = alpha * p + beta * y (y broadcast to p's shape) with the device's elementwise
    kernels; p is fresh (no graph), y is read detached."""
    if not use_x:
        p.zero_()
    elif alpha != 1:
        p.mul_(alpha)
    if use_y:
        p.add_(y.detach().expand(*shape), alpha=beta)
    return 0


cdef TensorBase _addmm(TensorBase inp, TensorBase m1, TensorBase m2, object beta, object alpha,
                       object out, bint inplace):
    """addmm(input, mat1, mat2, beta=1, alpha=1): beta * input + alpha * (mat1 @ mat2)."""
    cdef int64_t S[2]
    if inp._dtype is not m2._dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_la_st(inp)} and {_la_st(m2)}")
    if m1._dtype is not m2._dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_la_st(m1)} and {_la_st(m2)}")
    if m1._ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {m1._ndim}-D tensor")
    if m2._ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {m2._ndim}-D tensor")
    if m1._shape[1] != m2._shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m1._shape[0]}x{m1._shape[1]} "
                           f"and {m2._shape[0]}x{m2._shape[1]})")
    _la_no_bool(m1, "addmm_impl_cpu_", m2)
    S[0] = m1._shape[0]
    S[1] = m2._shape[1]
    return _la_addprod("addmm", inp, m1, _la_bm2(m1), m2, _la_bm2(m2), 1, S[0], S[1], m1._shape[1], 2, S,
                    beta, alpha, out, inplace, True)


cdef TensorBase _addmv(TensorBase inp, TensorBase mat, TensorBase vec, object beta, object alpha,
                       object out, bint inplace):
    """addmv(input, mat, vec, beta=1, alpha=1): beta * input + alpha * (mat @ vec)."""
    cdef int64_t M
    if not (mat._ndim == 2 and vec._ndim == 1 and inp._ndim <= 1):
        raise RuntimeError(f"vector + matrix @ vector expected, got {inp._ndim}, {mat._ndim}, {vec._ndim}")
    M = mat._shape[0]
    if mat._shape[1] != vec._shape[0] or (inp._numel != M and inp._numel != 1):
        raise RuntimeError(f"size mismatch, got input ({inp._numel}), mat ({M}x{mat._shape[1]}), "
                           f"vec ({vec._shape[0]})")
    if inp._dtype is not mat._dtype or mat._dtype is not vec._dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_la_st(inp)}, {_la_st(mat)}, and {_la_st(vec)}")
    _la_no_bool(mat, "addmv_impl_cpu", vec)
    return _la_addprod("addmv", inp, mat, _la_bm2(mat), vec, _la_bm(vec._offset, 0, vec._strides[0], 0),
                    1, M, 1, mat._shape[1], 1, &M, beta, alpha, out, inplace, True)


cdef TensorBase _baddbmm(TensorBase inp, TensorBase b1, TensorBase b2, object beta, object alpha,
                         object out, bint inplace):
    """baddbmm(input, batch1, batch2, beta=1, alpha=1): beta * input + alpha * (batch1 @ batch2)."""
    cdef int64_t S[3]
    if not inplace:
        # PyTorch broadcasts the input to the result shape before checking the batches (so a
        # missing dim is an IndexError there)
        _expand(inp, (b1._shape[_wrap_dim(0, b1._ndim, False)], b1._shape[_wrap_dim(1, b1._ndim, False)],
                      b2._shape[_wrap_dim(2, b2._ndim, False)]))
    if b1._ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2._ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if inp._dtype is not b1._dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_la_cpp(inp)}, batch1: {_la_cpp(b1)}, "
                           f"batch2: {_la_cpp(b2)}")
    if b1._shape[0] != b2._shape[0] or b1._shape[2] != b2._shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b1._shape[0]}, {b1._shape[2]}] but got: [{b2._shape[0]}, {b2._shape[1]}].")
    if b1._dtype is not b2._dtype:
        raise RuntimeError(f"expected scalar type {_la_st(b1)} but found {_la_st(b2)}")
    _la_no_bool(b1, "baddbmm")
    S[0] = b1._shape[0]
    S[1] = b1._shape[1]
    S[2] = b2._shape[2]
    # PyTorch's baddbmm does not special-case alpha == 0 (0 * NaN stays NaN)
    return _la_addprod("baddbmm", inp, b1, _la_bm3(b1), b2, _la_bm3(b2), S[0], S[1], S[2], b1._shape[2], 3, S,
                    beta, alpha, out, inplace, False)


# ---------------------------------------------------------------------------------------------
# tensordot

cdef list _la_dims_list(object d, str name, int pos):
    if isinstance(d, (list, tuple)):
        return [_iarg(x, "tensordot", name, pos) for x in d]
    raise TypeError(f"tensordot(): argument '{name}' (position {pos}) must be tuple of ints, "
                    f"not {type(d).__name__}")


cdef TensorBase _tensordot(TensorBase a, TensorBase b, object dims, object out):
    """tensordot(a, b, dims=2): contract dims of a with dims of b (an int n: a's last n with
    b's first n; or two lists)."""
    cdef int64_t n
    cdef list da, db, free_a, free_b, sa, sb
    cdef int i, x, y
    cdef int64_t K = 1, Ma = 1, Nb = 1
    cdef TensorBase ap, bp, r, t
    cdef int64_t sh[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int nd
    if isinstance(dims, TensorBase):
        dims = int(dims) if (<TensorBase>dims)._numel == 1 else dims.tolist()
    if isinstance(dims, int):
        n = dims
        if n < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={n}")
        if n > a._ndim or n > b._ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={n}")
        da = list(range(-n, 0))
        db = list(range(n))
    elif isinstance(dims, (list, tuple)):
        if len(dims) != 2:
            raise ValueError(f"not enough values to unpack (expected 2, got {len(dims)})" if len(dims) < 2
                             else "too many values to unpack (expected 2)")
        d0, d1 = dims
        da = _la_dims_list(d0, "dims_self", 3)
        db = _la_dims_list(d1, "dims_other", 4)
    else:
        raise RuntimeError(f"tensordot expects dims to be int or tuple[list[int], list[int]] or "
                           f"list[list[int]] containing two lists, but got dims={dims}")
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    if a._dtype is not b._dtype:
        raise RuntimeError("both inputs should have same dtype")
    wa = _wrap_dims(da, a._ndim, "tensordot")
    wb = _wrap_dims(db, b._ndim, "tensordot")
    # contracted sizes must match, or one be 1 (that side broadcasts: stride 0)
    sa = _shape_list(a)
    sb = _shape_list(b)
    sta = _stride_list(a)
    stb = _stride_list(b)
    for i in range(len(wa)):
        x = wa[i]
        y = wb[i]
        if sa[x] != sb[y]:
            if sa[x] == 1:
                sa[x] = sb[y]
                sta[x] = 0
            elif sb[y] == 1:
                sb[y] = sa[x]
                stb[y] = 0
            else:
                raise RuntimeError(f"contracted dimensions need to match, but first has size {sa[x]} in "
                                   f"dim {da[i]} and second has size {sb[y]} in dim {db[i]}")
        K *= sa[x]
    _la_no_bool(a, "addmm_impl_cpu_")
    free_a = [i for i in range(a._ndim) if i not in wa]
    free_b = [i for i in range(b._ndim) if i not in wb]
    pa = free_a + wa
    pb = wb + free_b
    if out is None and _grad_on() and (_req(a) or _req(b)):
        return _tensordot_recorded(a, b, sa, sb, pa, pb, len(free_a), len(free_b))
    ap = _view_of(a, [sa[i] for i in pa], [sta[i] for i in pa], a._offset)
    bp = _view_of(b, [sb[i] for i in pb], [stb[i] for i in pb], b._offset)
    out_shape = [sa[i] for i in free_a] + [sb[i] for i in free_b]
    for i in free_a:
        Ma *= sa[i]
    for i in free_b:
        Nb *= sb[i]
    ap = _reshape(ap, (Ma, K))
    bp = _reshape(bp, (K, Nb))
    nd = len(out_shape)
    for i in range(nd):
        sh[i] = out_shape[i]
    r = _la_out_tensor(out, nd, sh, a._dtype, a._storage.device, LA_OUT_TENSORDOT, "tensordot")
    t = r if out is None else _la_scratch(r, a, b)
    _la_bmm_into(t, 1, Ma, Nb, K, ap, _la_bm2(ap), bp, _la_bm2(bp))
    return _la_deliver(r, t)


# ---------------------------------------------------------------------------------------------
# einsum

cdef inline str _la_lab_char(int L):
    return chr(65 + L) if L < 26 else chr(97 + L - 26)


cdef list _einsum_term(str eq, int start, int end, int k, bint output):
    """Labels of one term (0-25 'A'-'Z', 26-51 'a'-'z'; -1 for an ellipsis)."""
    cdef list labs = []
    cdef bint ell = False
    cdef int i = start
    cdef str c
    while i < end:
        c = eq[i]
        if c == " ":
            i += 1
            continue
        if c == ".":
            if ell:
                raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was already found"
                                   if output else
                                   f"einsum(): found '.' for operand {k} for which an ellipsis was already found")
            if i + 3 > end or eq[i:i + 3] != "...":
                raise RuntimeError("einsum(): found '.' for output that is not part of any ellipsis (...)"
                                   if output else
                                   f"einsum(): found '.' for operand {k} that is not part of any ellipsis")
            labs.append(-1)
            ell = True
            i += 3
            continue
        if "A" <= c <= "Z":
            labs.append(ord(c) - 65)
        elif "a" <= c <= "z":
            labs.append(ord(c) - 97 + 26)
        else:
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, "
                               f"subscripts must be in [a-zA-Z]")
        i += 1
    return labs


cdef tuple _einsum_sublist(tuple args):
    """einsum(op0, sublist0, op1, sublist1, ..., [sublist_out]) -> (equation, operands)."""
    ops = list(args[0::2])
    subs = list(args[1::2])
    out_sub = None
    if len(args) % 2 == 1:
        out_sub = ops.pop()
    eq = ",".join([_la_sublist_term(s) for s in subs])
    if out_sub is not None:
        eq += "->" + _la_sublist_term(out_sub)
    return eq, ops


cdef str _la_sublist_term(object sub):
    cdef list s = []
    for x in sub:
        if x is Ellipsis:
            s.append("...")
            continue
        v = operator.index(x)
        if v < 0 or v >= 52:
            raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
        s.append(_la_lab_char(v))
    return "".join(s)


cdef object _einsum(tuple args):
    """einsum(equation, *operands): Einstein summation (explicit or implicit output, ellipsis,
    repeated indices for diagonals/traces, size-1 broadcasting), and the sublist form."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at "
                         "least one operand and its subscripts list")
    first = args[0]
    if isinstance(first, str):
        eq = first
        ops = list(args[1:])
        if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
            ops = list(ops[0])
    elif isinstance(first, TensorBase):
        eq, ops = _einsum_sublist(args)
    else:
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not {type(first).__name__}")
    for i, x in enumerate(ops):
        if not isinstance(x, TensorBase):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got {type(x).__name__}")
    return _einsum_eq(eq, ops)


cdef object _einsum_eq(str eq, list ops):
    cdef int n = len(ops), k, E = 0, d, i
    cdef TensorBase t
    arrow = eq.find("->")
    lhs_end = arrow if arrow >= 0 else len(eq)
    # terms, split at commas (checked character by character)
    terms = []
    start = 0
    for i in range(lhs_end + 1):
        if i == lhs_end or eq[i] == ",":
            terms.append(_einsum_term(eq, start, i, len(terms), False))
            start = i + 1
    out_labs = _einsum_term(eq, arrow + 2, len(eq), 0, True) if arrow >= 0 else None
    if len(terms) > n:
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < n:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    # expand ellipses: operand k's ellipsis dims align right with the global ones (labels 52+)
    ell_nd = []
    for k in range(n):
        t = ops[k]
        nl = sum(1 for L in terms[k] if L >= 0)
        if -1 in terms[k]:
            if nl > t._ndim:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({nl}) is more than "
                                   f"the number of dimensions ({t._ndim}) for operand {k}")
            ell_nd.append(t._ndim - nl)
            E = max(E, t._ndim - nl)
        elif nl != t._ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({nl}) does not match "
                               f"the number of dimensions ({t._ndim}) for operand {k} and no ellipsis was given")
        else:
            ell_nd.append(0)
    labels = []
    for k in range(n):
        full = []
        for L in terms[k]:
            if L == -1:
                full.extend(range(52 + E - ell_nd[k], 52 + E))
            else:
                full.append(L)
        labels.append(full)
    # sizes: equal within an operand (diagonals), broadcasting (1 vs n) across operands
    size = {}
    counts = {}
    for k in range(n):
        t = ops[k]
        seen = {}
        for d, L in enumerate(labels[k]):
            s = t._shape[d]
            counts[L] = counts.get(L, 0) + 1
            if L in seen:
                if s != seen[L]:
                    raise RuntimeError(f"einsum(): subscript {_la_lab_char(L)} is repeated for operand {k} but "
                                       f"the sizes don't match, {s} != {seen[L]}")
                continue
            seen[L] = s
            g = size.get(L)
            if g is not None and g != s and g != 1 and s != 1:
                if L >= 52:
                    raise RuntimeError(f"einsum(): dimension {d} covered by ellipsis in operand {k}has size "
                                       f"{s} which does not broadcast with previously seen ellipsis with size "
                                       f"{g} for the respective dimension")
                raise RuntimeError(f"einsum(): subscript {_la_lab_char(L)} has size {s} for operand {k} which "
                                   f"does not broadcast with previously seen size {g}")
            if g is None or g == 1:
                size[L] = s
    # the output labels
    ell_labels = list(range(52, 52 + E))
    if out_labs is None:
        out = ell_labels + sorted([L for L, c in counts.items() if c == 1 and L < 52])
    else:
        out = []
        for L in out_labs:
            if L == -1:
                out.extend(ell_labels)
                continue
            if L not in counts:
                raise RuntimeError(f"einsum(): output subscript {_la_lab_char(L)} does not appear in the "
                                   f"equation for any input operand")
            if L in out:
                raise RuntimeError(f"einsum(): output subscript {_la_lab_char(L)} appears more than once in "
                                   f"the output")
            out.append(L)
    if any([_req((<TensorBase>x)) for x in ops]) and _grad_on():
        return _einsum_recorded(ops, labels, out)
    prepped = [_einsum_diag(ops[k], labels[k]) for k in range(n)]
    if n == 1:
        return _einsum_single(prepped[0][0], prepped[0][1], out)
    return _einsum_multi([_einsum_squeeze(t, labs) for t, labs in prepped], out, size)


cdef tuple _einsum_diag(TensorBase t, list labs):
    """Repeated labels -> one diagonal dim (a view: the strides add)."""
    new_labs, shape, strides = [], [], []
    for d, L in enumerate(labs):
        if L in new_labs:
            strides[new_labs.index(L)] += t._strides[d]
            continue
        new_labs.append(L)
        shape.append(t._shape[d])
        strides.append(t._strides[d])
    return _view_of(t, shape, strides, t._offset), new_labs


cdef tuple _einsum_squeeze(TensorBase t, list labs):
    """Size-1 dims dropped: they broadcast against the other operands."""
    keep = [i for i in range(t._ndim) if t._shape[i] != 1]
    if len(keep) == t._ndim:
        return t, labs
    v = _view_of(t, [t._shape[i] for i in keep], [t._strides[i] for i in keep], t._offset)
    return v, [labs[i] for i in keep]


cdef TensorBase _einsum_arrange(TensorBase t, list labs, list out):
    """t (labels labs, all in out) viewed in out's order, with a size-1 dim where a label is
    absent (given the stride a contiguous layout would have there)."""
    cdef int i, n = len(out)
    cdef int64_t inner = 1
    shape = [1] * n
    strides = [1] * n
    for i in range(n - 1, -1, -1):
        L = out[i]
        if L in labs:
            shape[i] = t._shape[labs.index(L)]
            strides[i] = t._strides[labs.index(L)]
            inner = strides[i] * shape[i] if shape[i] > 1 else strides[i]
        else:
            strides[i] = inner
    return _view_of(t, shape, strides, t._offset)


cdef tuple _einsum_sum(TensorBase t, list labs, list sum_labs):
    """Sum t over the given labels: a product with a ones vector (no reduction kernel needed)."""
    cdef int64_t S = 1, Mk = 1, one = 1
    cdef TensorBase x, ones, r
    kept = [L for L in labs if L not in sum_labs]
    perm = [labs.index(L) for L in kept] + [labs.index(L) for L in sum_labs]
    for L in sum_labs:
        S *= t._shape[labs.index(L)]
    kshape = [t._shape[labs.index(L)] for L in kept]
    for s in kshape:
        Mk *= s
    x = _reshape(_permute(t, tuple(perm)), (Mk, S))
    ones = empty_tensor(1, &S, t._dtype, t._storage.device)
    _fill_raw(ones, 1)
    r = empty_tensor(1, &Mk, t._dtype, t._storage.device)
    _la_bmm_into(r, 1, Mk, 1, S, x, _la_bm2(x), ones, _la_bm(0, 0, 1, 0))
    return _reshape(r, tuple(kshape)), kept


cdef TensorBase _einsum_single(TensorBase t, list labs, list out):
    sum_labs = [L for L in labs if L not in out]
    if not sum_labs:
        return _einsum_arrange(t, labs, out)              # a view, as in PyTorch
    if not t._dtype.is_floating_point:
        t = _to_dtype(t, dtype_of(DT_INT64), False)       # a sum: integers accumulate in int64
    t, labs = _einsum_squeeze(t, labs)
    sum_labs = [L for L in labs if L not in out]
    if sum_labs:
        # kept dims in output order first, so the sum comes out contiguous (as in PyTorch)
        order = [L for L in out if L in labs] + sum_labs
        t, labs = _einsum_sum(_einsum_arrange(t, labs, order), order, sum_labs)
    return _einsum_arrange(t, labs, out)


cdef TensorBase _einsum_multi(list prepped, list out, dict size):
    """Contract left to right; each pair is one batched product (batch, left, contracted, right)."""
    cdef int n = len(prepped), k
    cdef TensorBase ct, rt, A, Bm, P
    cdef int64_t B, M, N, K
    cdef int64_t nP
    ct, cl = prepped[0]
    rank = {L: i for i, L in enumerate(out)}
    for k in range(1, n):
        rt, rl = prepped[k]
        later = set(out)
        for j in range(k + 1, n):
            later.update(prepped[j][1])
        summed = False
        ls = [L for L in cl if L not in rl and L not in later]
        rs = [L for L in rl if L not in cl and L not in later]
        contr = [L for L in cl if L in rl and L not in later]
        if ct._dtype is not rt._dtype:
            if contr or ls or rs:
                raise RuntimeError(f"expected scalar type {_la_st(ct)} but found {_la_st(rt)}")
            common = dtype_of(promote_codes(ct._dtype.code, rt._dtype.code))
            ct = _to_dtype(ct, common, False)
            rt = _to_dtype(rt, common, False)
        if ct._dtype.code == DT_BOOL and (contr or ls or rs):
            raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
        if ls:
            ct, cl = _einsum_sum(ct, cl, ls)
        if rs:
            rt, rl = _einsum_sum(rt, rl, rs)
        # groups keep the operands' dim order (as PyTorch's results' strides show); the
        # operands swap when the output wants the right group first
        keyd = {L: rank.get(L, 1000 + L) for L in cl + rl}
        batch = [L for L in cl if L in rl and L in later]
        left = [L for L in cl if L not in rl]
        right = [L for L in rl if L not in cl]
        if left and right and keyd[right[0]] < keyd[left[0]]:
            ct, rt = rt, ct
            cl, rl = rl, cl
            left, right = right, left
        B = _la_prod([size[L] for L in batch])
        M = _la_prod([size[L] for L in left])
        N = _la_prod([size[L] for L in right])
        K = _la_prod([size[L] for L in contr])
        A = _reshape(_einsum_arrange(ct, cl, batch + left + contr), (B, M, K))
        Bm = _reshape(_einsum_arrange(rt, rl, batch + contr + right), (B, K, N))
        nP = B * M * N
        P = empty_tensor(1, &nP, A._dtype, A._storage.device)
        _la_bmm_into(P, B, M, N, K, A, _la_bm3(A), Bm, _la_bm3(Bm))
        cl = batch + left + right
        ct = _reshape(P, tuple([size[L] for L in cl]))
    # a permuted view when the output order is not (batch, left, right), as in PyTorch
    return _einsum_arrange(ct, cl, out)


# ---- backward helpers (autograd formulas in tensorlib/ops/decl/ call these)
# tensordot and einsum have no node of their own (as in PyTorch): when an input requires grad
# they are built from recorded ops (expand/diagonal/permute/reshape/sum/mul/mm/bmm), so the
# gradient flows through those ops' formulas and create_graph works.

def _tensordot_recorded(a, b, list sa, list sb, list pa, list pb, int nfa, int nfb):
    """tensordot as permute + reshape + mm + reshape (the result's grad_fn is a
    ViewBackward0, as in PyTorch). ``sa``/``sb`` are the shapes with size-1 contracted dims
    broadcast against the other side."""
    if list(a.shape) != sa:
        a = a.expand(tuple(sa))
    if list(b.shape) != sb:
        b = b.expand(tuple(sb))
    fa = [sa[i] for i in pa[:nfa]]
    fb = [sb[i] for i in pb[len(pb) - nfb:]]
    cdef int64_t Ma = _la_prod(fa), Nb = _la_prod(fb)
    cdef int64_t K = _la_prod([sa[i] for i in pa[nfa:]])
    r = a.permute(tuple(pa)).reshape(Ma, K).mm(b.permute(tuple(pb)).reshape(K, Nb))
    return r.reshape(tuple(fa + fb))


def _einsum_align(t, list labs, list new):
    """t (labels labs) with its dims in the order of ``new`` and size 1 where a label of new
    is absent (so that products broadcast)."""
    present = [L for L in new if L in labs]
    if present != labs:
        t = t.permute(tuple([labs.index(L) for L in present]))
    shape = tuple([t.shape[present.index(L)] if L in labs else 1 for L in new])
    return t if tuple(t.shape) == shape else t.reshape(shape)


def _einsum_recorded(list ops, list labels, list out):
    """einsum from recorded ops: repeated labels -> diagonal; single operand -> permute
    (+ sum); pairs contracted left to right as batched products (bmm), or multiplied
    elementwise when nothing is contracted."""
    prepped = []
    for t, labs in zip(ops, labels):
        labs = list(labs)
        while len(set(labs)) != len(labs):
            i = next(k for k in range(len(labs)) if labs[k] in labs[k + 1:])
            j = labs.index(labs[i], i + 1)
            L = labs[i]
            t = t.diagonal(0, i, j)                       # the diagonal becomes the last dim
            labs = [labs[k] for k in range(len(labs)) if k != i and k != j] + [L]
        prepped.append((t, labs))
    ct, cl = prepped[0]
    if len(prepped) == 1:
        sum_labs = [L for L in cl if L not in out]
        ct = ct.permute(tuple([cl.index(L) for L in out + sum_labs]))
        if sum_labs:
            ct = ct.sum(tuple(range(len(out), len(cl))))
        return ct
    for k in range(1, len(prepped)):
        rt, rl = prepped[k]
        later = set(out)
        for j in range(k + 1, len(prepped)):
            later.update(prepped[j][1])
        shared = [L for L in cl if L in rl]
        contr = [L for L in shared if L not in later]
        ls = [L for L in cl if L not in rl and L not in later]
        rs = [L for L in rl if L not in cl and L not in later]
        if ct.dtype != rt.dtype and (contr or ls or rs):
            raise RuntimeError(f"expected scalar type {_la_st(ct)} but found {_la_st(rt)}")
        if ls:
            ct = ct.sum(tuple([cl.index(L) for L in ls]))
            cl = [L for L in cl if L not in ls]
        if rs:
            rt = rt.sum(tuple([rl.index(L) for L in rs]))
            rl = [L for L in rl if L not in rs]
        # size-1 shared dims broadcast against the other side
        cs = list(ct.shape)
        rsz = list(rt.shape)
        for L in shared:
            x, y = cl.index(L), rl.index(L)
            if cs[x] == 1 and rsz[y] != 1:
                cs[x] = rsz[y]
            elif rsz[y] == 1 and cs[x] != 1:
                rsz[y] = cs[x]
        if cs != list(ct.shape):
            ct = ct.expand(tuple(cs))
        if rsz != list(rt.shape):
            rt = rt.expand(tuple(rsz))
        batch = [L for L in shared if L in later]
        left = [L for L in cl if L not in rl]
        right = [L for L in rl if L not in cl]
        new = batch + left + right
        if not contr:
            ct = _einsum_align(ct, cl, new) * _einsum_align(rt, rl, new)
            cl = new
            continue
        bs = [cs[cl.index(L)] for L in batch]
        lsz = [cs[cl.index(L)] for L in left]
        rsz2 = [rsz[rl.index(L)] for L in right]
        K = _la_prod([cs[cl.index(L)] for L in contr])
        A = ct.permute(tuple([cl.index(L) for L in batch + left + contr])).reshape(
            _la_prod(bs), _la_prod(lsz), K)
        Bm = rt.permute(tuple([rl.index(L) for L in batch + contr + right])).reshape(
            _la_prod(bs), K, _la_prod(rsz2))
        ct = A.bmm(Bm).reshape(tuple(bs + lsz + rsz2))
        cl = new
    perm = [cl.index(L) for L in out]
    if perm != list(range(len(perm))):
        ct = ct.permute(tuple(perm))
    return ct


cdef inline bint _column_major(tuple strides):
    """A 2-D operand laid out column by column (a transposed contiguous matrix)."""
    return strides[0] == 1 and strides[1] > 1


cdef object _mm_mat1_grad(object grad, object mat2, tuple mat1_strides):
    """d(mat1 @ mat2)/d mat1 = grad @ mat2^T, in mat1's layout: column-major when mat1 was."""
    if _column_major(mat1_strides):
        return mat2.mm(grad.t()).t()
    return grad.mm(mat2.t())


cdef object _mm_mat2_grad(object grad, object mat1, tuple mat2_strides):
    """d(mat1 @ mat2)/d mat2 = mat1^T @ grad, in mat2's layout: column-major when mat2 was
    (Linear's weight.t(), whose gradient is then the weight's, row-major, with no copy)."""
    if _column_major(mat2_strides):
        return grad.t().mm(mat1).t()
    return mat1.t().mm(grad)
