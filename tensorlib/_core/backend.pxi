# The device back ends: who runs the descriptors an op's front half builds.
#
# Every op's front half -- argument checks, type promotion, broadcasting, the write rules,
# allocating the output on the inputs' device through that device's allocator -- is the same
# for every device. It ends by handing one descriptor to the back end of the output's device:
#
#   elementwise  the elementwise iterator (tl_ew_iter: coalesced shape, byte strides, dtypes)
#   copy         a strided copy with dtype conversion (shape, two pointers + element strides)
#   fill         one host value (any dtype) into every element of a tensor
#   reduce       the reduction descriptor (tl_red_t)
#   softmax      softmax / log_softmax over the middle dim of (outer, n, inner)
#   cumulative   cumsum / cumprod over the middle dim of (outer, n, inner)
#   bmm          a float32/float64 batched matrix product into a fresh contiguous output
#   igemm        an int64 batched matrix product (tl_igemm_args)
#   rows         a per-row kernel: sort, topk, kthvalue/median, mode (tl_rows_t)
#   index        a gather/scatter over precomputed int64 offsets (tl_index_run's arguments)
#   scale        out *= alpha, in place over a contiguous tensor
#   random       a random fill (uniform, normal, integers, bernoulli, randperm) of a tensor
#   nn           an nn kernel (tl_nn_args): im2col/col2im, pooling, normalization (nn_ops.pxi)
#   optim        an optimizer's fused update of many tensors in place (tl_optim_args,
#                optim_ops.pxi)
#
# A back end implements these methods and owns an allocator behind the same door
# (allocator.pyx), so counters, the profiler and the planner work on every device unchanged.
# ``has_data`` says whether the device holds values at all (false on meta): the front halves
# that need values (item, tolist, printing, numpy, data-dependent shapes such as nonzero) ask
# it first. (Reading a device's values from the host is a copy the CUDA back end will add.)
#
# cpu   today's C kernels (tensorlib/_core/cpu/), the thread pool, BLAS through NumPy.
# meta  runs nothing: tensors have shape, dtype, strides and counted bytes but no data, so a
#       program runs on meta for the price of its Python and front halves
#       (tensorlib.memory.estimate).
# A new device (cuda) subclasses Backend, and backend_for() learns its DeviceKind.


cdef class Backend:
    """The runner of one kind of device. The base class's methods are the interface
    (declared in tensor.pxd, with the attributes ``name`` and ``has_data``)."""

    cdef int elementwise(self, tl_ew_iter* it, int64_t numel) except -1:
        raise NotImplementedError(f"elementwise ops are not implemented on '{self.name}'")

    cdef int copy(self, int ndim, const int64_t* shape, char* dst, const int64_t* dst_strides,
                  int dst_dtype, const char* src, const int64_t* src_strides,
                  int src_dtype) except -1:
        raise NotImplementedError(f"copies are not implemented on '{self.name}'")

    cdef int fill(self, TensorBase t, const char* value, int value_dtype) except -1:
        raise NotImplementedError(f"fill is not implemented on '{self.name}'")

    cdef int reduce(self, tl_red_t* r, int64_t numel) except -1:
        raise NotImplementedError(f"reductions are not implemented on '{self.name}'")

    cdef int softmax(self, int dtype, int want_log, const char* x, char* y, int64_t outer,
                     int64_t n, int64_t inner) except -1:
        raise NotImplementedError(f"softmax is not implemented on '{self.name}'")

    cdef int cumulative(self, int prod, int dtype, const char* x, char* y, int64_t outer,
                        int64_t n, int64_t inner) except -1:
        raise NotImplementedError(f"cumsum/cumprod are not implemented on '{self.name}'")

    cdef int bmm(self, TensorBase out, int64_t B, int64_t M, int64_t N, int64_t K,
                 TensorBase a, LaMat ga, TensorBase b, LaMat gb) except -1:
        raise NotImplementedError(f"matrix products are not implemented on '{self.name}'")

    cdef int igemm(self, tl_igemm_args* g, bint big) except -1:
        raise NotImplementedError(f"integer matrix products are not implemented on '{self.name}'")

    cdef int rows(self, int op, const tl_rows_t* r, int flag, int64_t k, bint big) except -1:
        raise NotImplementedError(f"sorting is not implemented on '{self.name}'")

    cdef int index(self, int nd, const int64_t* shape, char* dst, const int64_t* dst_st,
                   const char* src, const int64_t* src_st, const int64_t* idx,
                   const int64_t* idx_st, int64_t idx_mul, int side, int dtype,
                   int op) except -1:
        raise NotImplementedError(f"indexing kernels are not implemented on '{self.name}'")

    cdef int scale(self, TensorBase t, double alpha_d, int64_t alpha_i) except -1:
        raise NotImplementedError(f"scaling is not implemented on '{self.name}'")

    cdef int random(self, TensorBase t, int kind, object generator, double a, double b,
                    int64_t lo, uint64_t span) except -1:
        raise NotImplementedError(f"random fills are not implemented on '{self.name}'")

    cdef int nn(self, int op, tl_nn_args* a, bint big) except -1:
        raise NotImplementedError(f"nn kernels are not implemented on '{self.name}'")

    cdef int conv_direct(self, tl_nn_args* a) except -1:
        """A whole non-transposed convolution as one kernel (the descriptor as
        _nn_conv_direct fills it); returns 1 when queued, 0 when not taken (the front half
        then runs im2col + GEMM). Not taken by default: CPU and meta keep that path."""
        return 0

    cdef int optim(self, const tl_optim_args* a, bint big) except -1:
        raise NotImplementedError(f"optimizer updates are not implemented on '{self.name}'")


cdef int _dispatch(int op, const tl_rows_t* r, int flag, int64_t k) noexcept nogil:
    if op == _OP_SORT:
        return tl_sort_rows(r, flag)
    if op == _OP_TOPK:
        return tl_topk_rows(r, k, flag)
    if op == _OP_SELECT:
        return tl_select_rows(r, k, flag)
    return tl_mode_rows(r)


# ---- the batched-product engine, out[B, M, N] = a[B, M, K] @ b[B, K, N]: every product of
# the linalg family and of the nn kernels ends here (integers and half types by their own
# route, float32/float64 through Backend.bmm)

cdef int _la_int_bmm(TensorBase out, int64_t B, int64_t M, int64_t N, int64_t K,
                  TensorBase a, LaMat ga, TensorBase b, LaMat gb) except -1:
    """Integers: our loop in int64 (operands of other integer types are widened first)."""
    cdef tl_igemm_args g
    cdef DType i64 = dtype_of(DT_INT64)
    cdef TensorBase o = out
    cdef int64_t n = B * M * N, one = 1
    if a._dtype.code != DT_INT64:
        a = _la_bmat_copy(a, &ga, B, M, K, i64)
    if b._dtype.code != DT_INT64 or (N > 1 and gb.sc != 1):
        b = _la_bmat_copy(b, &gb, B, K, N, i64)
    if out._dtype.code != DT_INT64:
        o = empty_tensor(1, &n, i64, out._storage.device)
    g.B = B
    g.M = M
    g.N = N
    g.K = K
    g.a = <const int64_t*>(a._storage.data + ga.off * 8)
    g.sab = ga.sb
    g.sam = ga.sr
    g.sak = ga.sc
    g.b = <const int64_t*>(b._storage.data + gb.off * 8)
    g.sbb = gb.sb
    g.sbk = gb.sr
    g.sbn = gb.sc
    g.c = <int64_t*>tensor_data(o)
    backend_of(o).igemm(&g, <double>n * <double>K >= NOGIL_THRESHOLD)
    if o is not out:
        backend_of(out).copy(1, &n, tensor_data(out), &one, out._dtype.code, tensor_data(o), &one,
                             DT_INT64)
    return 0


cdef int _la_bmm_into(TensorBase out, int64_t B, int64_t M, int64_t N, int64_t K,
                   TensorBase a, LaMat ga, TensorBase b, LaMat gb) except -1:
    """out = a @ b batch by batch. ``out`` is contiguous with B*M*N elements of a's dtype and
    shares no memory with the operands; a and b have the same dtype (bool only when K == 1).
    NumPy is called only for BLAS products, with out= into our memory.
    A batch stride of 0 broadcasts an operand."""
    cdef int code = a._dtype.code
    cdef int64_t n = B * M * N, one = 1
    cdef DType f32
    cdef TensorBase o32
    cdef uint8_t zero = 0
    if a._storage.device is not b._storage.device:
        same_device(a, b, "matmul")
    if n == 0:
        return 0
    if K == 0:
        return backend_of(out).fill(out, <char*>&zero, DT_BOOL)
    if B == 1:
        ga.sb = 0
        gb.sb = 0
    if code == DT_FLOAT16 or code == DT_BFLOAT16:
        f32 = dtype_of(DT_FLOAT32)
        a = _la_bmat_copy(a, &ga, B, M, K, f32)
        b = _la_bmat_copy(b, &gb, B, K, N, f32)
        o32 = empty_tensor(1, &n, f32, out._storage.device)
        _la_bmm_into(o32, B, M, N, K, a, ga, b, gb)
        backend_of(out).copy(1, &n, tensor_data(out), &one, code, tensor_data(o32), &one,
                             DT_FLOAT32)
        return 0
    if code == DT_BOOL and K != 1:
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    if code != DT_FLOAT32 and code != DT_FLOAT64:
        # integers (and bool outer products) accumulate in int64, read from int64 operands
        return _la_int_bmm(out, B, M, N, K, a, ga, b, gb)
    return backend_of(out).bmm(out, B, M, N, K, a, ga, b, gb)


# ---- the CPU float32/float64 batched product (Backend.bmm): NumPy's BLAS into our memory

# Float products of at most this many multiply-adds run in our own loop: below it the NumPy
# call (views, ufunc dispatch) costs more than the arithmetic.
cdef int64_t LA_SMALL_WORK = 1024

cdef object _la_np_matmul = np.matmul

cdef TensorBase _la_bmat_copy(TensorBase t, LaMat* g, int64_t B, int64_t R, int64_t C, DType dt):
    """A contiguous [B, R, C] copy (dtype dt) of the operand, from our allocator; a broadcast
    batch (stride 0) is copied once and stays broadcast. Updates ``g`` to describe the copy."""
    cdef int64_t sh[3]
    cdef int64_t st[3]
    cdef int64_t nb = 1 if (g.sb == 0 or B == 1) else B
    cdef TensorBase c
    sh[0] = nb
    sh[1] = R
    sh[2] = C
    st[0] = g.sb
    st[1] = g.sr
    st[2] = g.sc
    c = empty_tensor(3, sh, dt, t._storage.device)
    sh[0] = nb
    backend_of(t).copy(3, sh, tensor_data(c), c._strides, dt.code,
                       t._storage.data + g.off * t._dtype.itemsize, st, t._dtype.code)
    g.off = 0
    g.sb = 0 if nb == 1 else R * C
    g.sr = C
    g.sc = 1
    return c


cdef bint _la_blas_friendly(int64_t R, int64_t C, LaMat* g) noexcept:
    """Whether BLAS can read an R x C matrix in place: row-major (column stride 1, row stride
    >= C) or column-major (the transpose). Strides of size-1 dims address nothing, so they are
    first set to whatever makes the matrix friendly."""
    if R == 1 and C == 1:
        g.sr = 1
        g.sc = 1
    elif R == 1:
        if g.sc == 1:
            g.sr = C
        else:
            g.sr = 1
    elif C == 1:
        if g.sr == 1:
            g.sc = R
        else:
            g.sc = 1
    return (g.sc == 1 and g.sr >= C) or (g.sr == 1 and g.sc >= R)


cdef object _la_np_raw(TensorBase owner, int64_t off, int nd, const int64_t* shape, const int64_t* strides):
    """An ndarray over the owner's storage with explicit geometry (elements); its base is the
    Storage. Only for dtypes NumPy has (never bfloat16)."""
    cdef cnp.npy_intp dims[3]
    cdef cnp.npy_intp st[3]
    cdef int i, itemsize = owner._dtype.itemsize
    cdef cnp.ndarray arr
    for i in range(nd):
        dims[i] = shape[i]
        st[i] = strides[i] * itemsize
    descr = cnp.PyArray_DescrFromType(_NP_TYPENUM[owner._dtype.code])
    Py_INCREF(descr)   # PyArray_NewFromDescr steals a reference
    arr = PyArray_NewFromDescr(<PyTypeObject*>np.ndarray, descr, nd, dims, st,
                               <void*>(owner._storage.data + off * itemsize),
                               cnp.NPY_ARRAY_WRITEABLE, NULL)
    Py_INCREF(owner._storage)      # PyArray_SetBaseObject steals a reference
    PyArray_SetBaseObject(arr, owner._storage)
    return arr


cdef object _la_np_bmat(TensorBase t, LaMat g, int64_t B, int64_t R, int64_t C):
    cdef int64_t sh[3]
    cdef int64_t st[3]
    if B == 1:
        sh[0] = R
        sh[1] = C
        st[0] = g.sr
        st[1] = g.sc
        return _la_np_raw(t, g.off, 2, sh, st)
    sh[0] = B
    sh[1] = R
    sh[2] = C
    st[0] = g.sb
    st[1] = g.sr
    st[2] = g.sc
    return _la_np_raw(t, g.off, 3, sh, st)


cdef int _la_blas_bmm(TensorBase out, int64_t B, int64_t M, int64_t N, int64_t K,
                   TensorBase a, LaMat ga, TensorBase b, LaMat gb) except -1:
    """float32/float64: np.matmul into out's memory (contiguous [B, M, N])."""
    cdef LaMat go
    if B > 1 and gb.sb == 0 and ga.sc == 1 and ga.sr >= K and ga.sb == M * ga.sr:
        # a broadcast right operand and row-major batches of rows: one product of B*M rows
        # (one BLAS call instead of B)
        M *= B
        B = 1
    go = _la_bm(out._offset, M * N, N, 1)
    if not _la_blas_friendly(M, K, &ga):
        a = _la_bmat_copy(a, &ga, B, M, K, a._dtype)
    if not _la_blas_friendly(K, N, &gb):
        b = _la_bmat_copy(b, &gb, B, K, N, b._dtype)
    _la_np_matmul(_la_np_bmat(a, ga, B, M, K), _la_np_bmat(b, gb, B, K, N), _la_np_bmat(out, go, B, M, N))
    return 0


cdef int _la_small_bmm(TensorBase out, int64_t B, int64_t M, int64_t N, int64_t K,
                       TensorBase a, LaMat ga, TensorBase b, LaMat gb) except -1:
    """float32/float64 in our own strided loop (tiny products, and outer products: K == 1)."""
    if a._dtype.code == DT_FLOAT32:
        tl_gemm_small_f32(B, M, N, K, <float*>(a._storage.data + ga.off * 4), ga.sb, ga.sr, ga.sc,
                          <float*>(b._storage.data + gb.off * 4), gb.sb, gb.sr, gb.sc,
                          <float*>tensor_data(out))
    else:
        tl_gemm_small_f64(B, M, N, K, <double*>(a._storage.data + ga.off * 8), ga.sb, ga.sr, ga.sc,
                          <double*>(b._storage.data + gb.off * 8), gb.sb, gb.sr, gb.sc,
                          <double*>tensor_data(out))
    return 0


cdef int _la_cpu_bmm(TensorBase out, int64_t B, int64_t M, int64_t N, int64_t K,
                     TensorBase a, LaMat ga, TensorBase b, LaMat gb) except -1:
    """The CPU back end's float32/float64 batched product."""
    cdef int64_t n = B * M * N
    if K == 1 or <double>n * <double>K <= LA_SMALL_WORK:
        # an outer product is exact products (no BLAS needed; a sum starting from +0.0
        # would lose -0.0), and tiny products cost less than a NumPy call
        return _la_small_bmm(out, B, M, N, K, a, ga, b, gb)
    return _la_blas_bmm(out, B, M, N, K, a, ga, b, gb)


# ---- the CPU random fills (Backend.random)
from tensorlib._core.random cimport (
    Generator, fill_uniform, fill_normal, fill_int64, fill_bernoulli, fill_randperm)


cdef Generator _gen(object g):
    if g is None or isinstance(g, Generator):
        return <Generator>g
    raise TypeError(f"expected a tensorlib.Generator, but got {type(g).__name__}")


cdef int _cpu_random_fill(TensorBase t, int kind, object generator, double a, double b,
                          int64_t lo, uint64_t span) except -1:
    """The CPU back end's random fills: Philox streams from the generator (random.pyx)."""
    cdef Generator g = _gen(generator)
    if kind == RAND_UNIFORM:
        return fill_uniform(g, tensor_data(t), t._dtype.code == DT_FLOAT64, t._numel, a, b)
    if kind == RAND_NORMAL:
        return fill_normal(g, tensor_data(t), t._dtype.code == DT_FLOAT64, t._numel, a, b)
    if kind == RAND_INT64:
        return fill_int64(g, <int64_t*>tensor_data(t), t._numel, lo, span)
    if kind == RAND_BERNOULLI:
        return fill_bernoulli(g, <uint8_t*>tensor_data(t), t._numel, a)
    return fill_randperm(g, <int64_t*>tensor_data(t), t._numel)


@cython.final
cdef class CPUBackend(Backend):
    """Today's C kernels; large work runs without the GIL."""

    cdef int elementwise(self, tl_ew_iter* it, int64_t numel) except -1:
        if numel >= TL_EW_PARALLEL_MIN:
            with nogil:
                tl_ew_run(it)
        else:
            tl_ew_run(it)
        return 0

    cdef int copy(self, int ndim, const int64_t* shape, char* dst, const int64_t* dst_strides,
                  int dst_dtype, const char* src, const int64_t* src_strides,
                  int src_dtype) except -1:
        return copy_cast(ndim, shape, dst, dst_strides, dst_dtype, src, src_strides, src_dtype)

    cdef int fill(self, TensorBase t, const char* value, int value_dtype) except -1:
        cdef int64_t zeros[MAX_DIMS]
        cdef int i
        cdef bint zero = True
        if t._numel == 0:
            return 0        # an empty tensor may have no storage: memset(NULL, 0, 0) is UB
        for i in range(ITEMSIZE[value_dtype]):
            zero = zero and value[i] == 0
        if zero and t._contiguous:
            # every dtype's zero is all zero bits (+0.0 for floats)
            memset(tensor_data(t), 0, t._numel * t._dtype.itemsize)
            return 0
        memset(zeros, 0, t._ndim * sizeof(int64_t))
        return copy_cast(t._ndim, t._shape, tensor_data(t), t._strides, t._dtype.code, value,
                         zeros, value_dtype)

    cdef int reduce(self, tl_red_t* r, int64_t numel) except -1:
        cdef int rc
        if numel >= NOGIL_THRESHOLD:
            with nogil:
                rc = tl_reduce(r)
        else:
            rc = tl_reduce(r)
        if rc != 0:
            raise MemoryError("reduction: out of memory for partial results")
        return 0

    cdef int softmax(self, int dtype, int want_log, const char* x, char* y, int64_t outer,
                     int64_t n, int64_t inner) except -1:
        if outer * n * inner >= NOGIL_THRESHOLD:
            with nogil:
                tl_softmax(dtype, want_log, x, y, outer, n, inner)
        else:
            tl_softmax(dtype, want_log, x, y, outer, n, inner)
        return 0

    cdef int cumulative(self, int prod, int dtype, const char* x, char* y, int64_t outer,
                        int64_t n, int64_t inner) except -1:
        if outer * n * inner >= NOGIL_THRESHOLD:
            with nogil:
                tl_cumulative(prod, dtype, x, y, outer, n, inner)
        else:
            tl_cumulative(prod, dtype, x, y, outer, n, inner)
        return 0

    cdef int bmm(self, TensorBase out, int64_t B, int64_t M, int64_t N, int64_t K,
                 TensorBase a, LaMat ga, TensorBase b, LaMat gb) except -1:
        return _la_cpu_bmm(out, B, M, N, K, a, ga, b, gb)

    cdef int igemm(self, tl_igemm_args* g, bint big) except -1:
        if big:
            with nogil:
                tl_igemm(g)
        else:
            tl_igemm(g)
        return 0

    cdef int rows(self, int op, const tl_rows_t* r, int flag, int64_t k, bint big) except -1:
        cdef int rc
        if big:
            with nogil:
                rc = _dispatch(op, r, flag, k)
        else:
            rc = _dispatch(op, r, flag, k)
        if rc != 0:
            raise MemoryError("out of memory for the scratch space of a sort")
        return 0

    cdef int index(self, int nd, const int64_t* shape, char* dst, const int64_t* dst_st,
                   const char* src, const int64_t* src_st, const int64_t* idx,
                   const int64_t* idx_st, int64_t idx_mul, int side, int dtype,
                   int op) except -1:
        cdef int64_t total = 1
        cdef int i
        for i in range(nd):
            total *= shape[i]
        if total >= NOGIL_THRESHOLD:
            with nogil:
                tl_index_run(nd, shape, dst, dst_st, src, src_st, idx, idx_st, idx_mul, side,
                             dtype, op, 1)
        else:
            tl_index_run(nd, shape, dst, dst_st, src, src_st, idx, idx_st, idx_mul, side,
                         dtype, op, 0)
        return 0

    cdef int scale(self, TensorBase t, double alpha_d, int64_t alpha_i) except -1:
        tl_index_scale(t._dtype.code, t._numel, tensor_data(t), alpha_d, alpha_i)
        return 0

    cdef int random(self, TensorBase t, int kind, object generator, double a, double b,
                    int64_t lo, uint64_t span) except -1:
        return _cpu_random_fill(t, kind, generator, a, b, lo, span)

    cdef int nn(self, int op, tl_nn_args* a, bint big) except -1:
        return _nn_cpu_run(op, a, big)

    cdef int optim(self, const tl_optim_args* a, bint big) except -1:
        cdef int rc
        if big:
            with nogil:
                rc = tl_optim_run(a)
        else:
            rc = tl_optim_run(a)
        if rc != 0:
            raise MemoryError("optimizer step: out of memory for the work table")
        return 0


@cython.final
cdef class MetaBackend(Backend):
    """Runs nothing: the front half has already made the output (shape, dtype, strides and
    its counted bytes), which is all a meta tensor has."""

    cdef int elementwise(self, tl_ew_iter* it, int64_t numel) except -1:
        return 0

    cdef int copy(self, int ndim, const int64_t* shape, char* dst, const int64_t* dst_strides,
                  int dst_dtype, const char* src, const int64_t* src_strides,
                  int src_dtype) except -1:
        return 0

    cdef int fill(self, TensorBase t, const char* value, int value_dtype) except -1:
        return 0

    cdef int reduce(self, tl_red_t* r, int64_t numel) except -1:
        return 0

    cdef int softmax(self, int dtype, int want_log, const char* x, char* y, int64_t outer,
                     int64_t n, int64_t inner) except -1:
        return 0

    cdef int cumulative(self, int prod, int dtype, const char* x, char* y, int64_t outer,
                        int64_t n, int64_t inner) except -1:
        return 0

    cdef int bmm(self, TensorBase out, int64_t B, int64_t M, int64_t N, int64_t K,
                 TensorBase a, LaMat ga, TensorBase b, LaMat gb) except -1:
        return 0

    cdef int igemm(self, tl_igemm_args* g, bint big) except -1:
        return 0

    cdef int rows(self, int op, const tl_rows_t* r, int flag, int64_t k, bint big) except -1:
        return 0

    cdef int index(self, int nd, const int64_t* shape, char* dst, const int64_t* dst_st,
                   const char* src, const int64_t* src_st, const int64_t* idx,
                   const int64_t* idx_st, int64_t idx_mul, int side, int dtype,
                   int op) except -1:
        return 0

    cdef int scale(self, TensorBase t, double alpha_d, int64_t alpha_i) except -1:
        return 0

    cdef int random(self, TensorBase t, int kind, object generator, double a, double b,
                    int64_t lo, uint64_t span) except -1:
        return 0

    cdef int nn(self, int op, tl_nn_args* a, bint big) except -1:
        return 0

    cdef int optim(self, const tl_optim_args* a, bint big) except -1:
        return 0


cdef object _cuda_ops_mod = None
cdef dict _cuda_ew_names = None


cdef object _cuda_ops():
    global _cuda_ops_mod
    if _cuda_ops_mod is None:
        from tensorlib.cuda import _ops
        _cuda_ops_mod = _ops
    return _cuda_ops_mod


cdef dict _cuda_helpers = {}


cdef object _cuda_helper(str name):
    """The launcher module ``tensorlib.cuda.<name>`` (imported at first use)."""
    mod = _cuda_helpers.get(name)
    if mod is None:
        import importlib
        mod = _cuda_helpers[name] = importlib.import_module("tensorlib.cuda." + name)
    return mod
cdef object _cuda_index_mod = None


cdef object _cuda_index():
    """tensorlib.cuda._indexing: the sorting and indexing launches."""
    global _cuda_index_mod
    if _cuda_index_mod is None:
        from tensorlib.cuda import _indexing
        _cuda_index_mod = _indexing
    return _cuda_index_mod


cdef tuple _cuda_ew_kernel(tl_loop_fn fn):
    """The device kernel of a CPU loop: (``tl_ew_<op>_<loop type>``, the bytes of the op's
    parameters), or None. The loop tables and the generated .cu file come from the same
    declarations."""
    global _cuda_ew_names
    cdef const tl_loop_fn* table
    if _cuda_ew_names is None:
        from tensorlib.ops.cudagen import extra_bytes
        names = {}
        loops = _cuda_ops().LOOP_NAMES
        for name, sizes in extra_bytes().items():
            table = ew_loops(name)
            for code, lt in loops.items():
                if table[code] != NULL:
                    names[<uintptr_t>table[code]] = (f"tl_ew_{name}_{lt}", sizes.get(lt, 0))
        _cuda_ew_names = names
    return _cuda_ew_names.get(<uintptr_t>fn)


# tl_ew4 of cuda/tl_ew_device.h, and the parameter block of a generated elementwise kernel
# (out, a, b, c, descriptor): filled here in C, so a launch costs no Python per operand
cdef struct _cuda_ew4:
    int ndim, nops, scalar_mask, has_extra
    int dtype[4]
    long long n
    long long shape[8]
    long long stride[4][8]
    unsigned long long sval[4]
    double extra[8]

cdef struct _cuda_ew_params:
    uint64_t ptr[4]
    _cuda_ew4 d

# tl_nn_dev of cuda/nn_ops.cu, and the parameter block of tl_nn_conv_direct (x, w, b, y, then
# the descriptor); tensorlib/cuda/_nn.py's NNDev is the same struct for the other nn kernels
cdef struct _cuda_nn_dev:
    int flag, mode, rnd, have
    long long n, c
    long long in_[3]
    long long out[3]
    long long k[3]
    long long s[3]
    long long p[3]
    long long dil[3]
    long long ld, sp, dp, m, groups, hw, divisor, ignore_index, mcol
    long long rdims[6]
    long long rstr[6]
    double eps, momentum, smoothing

cdef struct _cuda_conv_params:
    uint64_t ptr[4]
    _cuda_nn_dev d

cdef int _NN_HAVE_B = 2     # tl_nn_dev.have's bit for a bias (nn_ops.cu's NN_B)

# item sizes by dtype code (tensorlib/_core/dtype.pyx)
cdef int _CUDA_ITEMSIZE[10]
_CUDA_ITEMSIZE[:] = [1, 1, 1, 2, 4, 8, 2, 2, 4, 8]


# the kernels of Backend.nn (cpu_nn.h's TL_NN_* order), for error messages
_CUDA_NN_NAMES = ("im2col", "col2im", "bias_add", "bias_grad", "accumulate", "max_pool",
                  "avg_pool", "avg_pool_backward", "adaptive_avg_pool",
                  "adaptive_avg_pool_backward", "adaptive_max_pool", "index_add", "index_set",
                  "batch_norm", "batch_norm_backward", "layer_norm/group_norm",
                  "layer_norm/group_norm_backward", "lstm_cell", "lstm_cell_backward",
                  "gru_cell", "gru_cell_backward", "cross_entropy", "cross_entropy_backward",
                  "masked_softmax", "masked_softmax_backward")


cdef class CUDABackend(Backend):
    """CUDA devices: each method queues one kernel of cuda/*.cu on the current stream of the
    output's device, through tensorlib.cuda._ops and the runtime (pycuda or the emulator).
    Kinds of work without a device kernel yet raise NotImplementedError (the base class)."""

    cdef int elementwise(self, tl_ew_iter* it, int64_t numel) except -1:
        cdef int j, k, size
        cdef bint broadcast
        cdef _cuda_ew_params p
        if numel == 0:
            return 0
        kernel = _cuda_ew_kernel(it.fn)
        if kernel is None:
            raise NotImplementedError("this elementwise kernel has no CUDA version")
        if it.ndim > 8:
            raise NotImplementedError(f"CUDA elementwise '{kernel[0]}': {it.ndim} dims after "
                                      f"coalescing (at most 8)")
        rt = _cuda_ops()._rt()
        index = rt.device_of(<uintptr_t>it.data[0])
        if index is None:
            raise RuntimeError(f"CUDA elementwise '{kernel[0]}': the output is not in "
                               f"device memory")
        memset(&p, 0, sizeof(p))
        p.d.ndim, p.d.nops, p.d.n = it.ndim, it.nops, numel
        for k in range(it.ndim):
            p.d.shape[k] = it.shape[k]
        for j in range(it.nops):
            size = _CUDA_ITEMSIZE[it.dtype[j]]
            p.d.dtype[j] = it.dtype[j]
            p.ptr[j] = <uintptr_t>it.data[j]
            broadcast = True
            for k in range(it.ndim):
                p.d.stride[j][k] = it.strides[j][k] // size
                broadcast = broadcast and it.strides[j][k] == 0
            # The front half puts only tensors of the output's device and host scalars (a
            # Python number, a 0-d CPU tensor) into one op; a scalar is never strided, so
            # only operands with every stride 0 need the address lookup.
            if j > 0 and broadcast:
                where = rt.device_of(p.ptr[j])
                if where is None:
                    p.d.scalar_mask |= 1 << j
                    memcpy(&p.d.sval[j], it.data[j], size)
                    p.ptr[j] = p.ptr[0]           # (not read: the kernel takes the slot)
                elif where != index:
                    raise RuntimeError(f"CUDA elementwise '{kernel[0]}': operand {j} is not "
                                       f"on cuda:{index}")
        for j in range(it.nops, 4):
            p.ptr[j] = p.ptr[0]
        if it.extra != NULL and kernel[1]:
            memcpy(p.d.extra, it.extra, <size_t>kernel[1])
            p.d.has_extra = 1
        _cuda_ops().launch_ew(kernel[0], index, numel, (<char*>&p)[:sizeof(p)])
        return 0

    cdef int copy(self, int ndim, const int64_t* shape, char* dst, const int64_t* dst_strides,
                  int dst_dtype, const char* src, const int64_t* src_strides,
                  int src_dtype) except -1:
        cdef int i
        _cuda_ops().copy(ndim, [shape[i] for i in range(ndim)], <uintptr_t>dst,
                         [dst_strides[i] for i in range(ndim)], dst_dtype, <uintptr_t>src,
                         [src_strides[i] for i in range(ndim)], src_dtype)
        return 0

    cdef int reduce(self, tl_red_t* r, int64_t numel) except -1:
        cdef int k
        _cuda_ops().reduce(
            r.op, r.post, r.in_dtype, r.ct, r.out_dtype, <uintptr_t>r.src, <uintptr_t>r.out,
            <uintptr_t>r.idx, <uintptr_t>r.center, r.p, r.post_a,
            [r.kshape[k] for k in range(r.nk)], [r.kin[k] for k in range(r.nk)],
            [r.kout[k] for k in range(r.nk)], [r.rshape[k] for k in range(r.nr)],
            [r.rin[k] for k in range(r.nr)])
        return 0

    cdef int softmax(self, int dtype, int want_log, const char* x, char* y, int64_t outer,
                     int64_t n, int64_t inner) except -1:
        _cuda_ops().softmax(dtype, want_log, <uintptr_t>x, <uintptr_t>y, outer, n, inner)
        return 0

    cdef int cumulative(self, int prod, int dtype, const char* x, char* y, int64_t outer,
                        int64_t n, int64_t inner) except -1:
        _cuda_ops().cumulative(prod, dtype, <uintptr_t>x, <uintptr_t>y, outer, n, inner)
        return 0

    cdef int bmm(self, TensorBase out, int64_t B, int64_t M, int64_t N, int64_t K,
                 TensorBase a, LaMat ga, TensorBase b, LaMat gb) except -1:
        cdef int isz = a._dtype.itemsize
        _cuda_ops().bmm(a._dtype.code, <uintptr_t>tensor_data(out), B, M, N, K,
                        <uintptr_t>(a._storage.data + ga.off * isz), (ga.sb, ga.sr, ga.sc),
                        <uintptr_t>(b._storage.data + gb.off * isz), (gb.sb, gb.sr, gb.sc))
        return 0

    cdef int random(self, TensorBase t, int kind, object generator, double a, double b,
                    int64_t lo, uint64_t span) except -1:
        # The CPU fill's argument checks (an empty fill checks and draws nothing), then the
        # device's Philox kernel at the (seed, offset) the CPU's fill would use, reserving
        # the same number of blocks (tensorlib/cuda/_random.py)
        cdef Generator g = _gen(generator)
        cdef int dbl = t._dtype.code == DT_FLOAT64
        if kind == RAND_UNIFORM:
            fill_uniform(g, NULL, dbl, 0, a, b)
        elif kind == RAND_NORMAL:
            fill_normal(g, NULL, dbl, 0, a, b)
        elif kind == RAND_BERNOULLI:
            fill_bernoulli(g, NULL, 0, a)
        if t._numel:
            _cuda_helper("_random").fill(kind, t._dtype.code, <uintptr_t>tensor_data(t),
                                         t._numel, g, a, b, lo, span)
        return 0

    cdef int nn(self, int op, tl_nn_args* a, bint big) except -1:
        # The descriptor goes to Python as its address: tensorlib.cuda._nn reads (and, for
        # an index kernel's bad index, writes) it through a ctypes mirror of tl_nn_args
        from tensorlib.cuda import _nn
        name = _CUDA_NN_NAMES[op] if 0 <= op < len(_CUDA_NN_NAMES) else str(op)
        return _nn.run(op, name, <uintptr_t>a, sizeof(tl_nn_args))

    cdef int conv_direct(self, tl_nn_args* a) except -1:
        # A small convolution in one launch (cuda/nn_ops.cu's tl_nn_conv_direct), its
        # parameter block packed here: at most _nn.CONV_DIRECT_TAPS multiply-adds per output
        # (else not taken: im2col + GEMM), 32-bit index math when every offset the kernel
        # forms is below _nn.CONV_DIRECT_INT32.
        cdef _cuda_conv_params p
        cdef int k
        cdef int64_t taps = a.k[0] * a.k[1] * a.k[2], total = a.n * a.m, bound
        nn = _cuda_helper("_nn")
        if (a.dtype != DT_FLOAT32 and a.dtype != DT_FLOAT64) or a.groups <= 0 or \
                (a.c // a.groups) * taps > nn.CONV_DIRECT_TAPS:
            return 0
        memset(&p, 0, sizeof(p))
        bound = max(a.n * a.c * a.in_[0] * a.in_[1] * a.in_[2], a.m * a.c * taps)
        for k in range(3):
            total *= a.out[k]
            bound = max(bound, a.in_[k] + 2 * a.p[k] + a.s[k])
            p.d.in_[k], p.d.out[k], p.d.k[k] = a.in_[k], a.out[k], a.k[k]
            p.d.s[k], p.d.p[k], p.d.dil[k] = a.s[k], a.p[k], a.dil[k]
        bound = max(bound, total)
        p.d.flag = 1 if bound < nn.CONV_DIRECT_INT32 else 0
        p.d.n, p.d.c, p.d.m, p.d.groups = a.n, a.c, a.m, a.groups
        p.d.have = _NN_HAVE_B if a.b != NULL else 0
        # an absent or empty operand (no bias; no input channels) passes y: never read
        p.ptr[3] = <uintptr_t>a.y
        p.ptr[0] = <uintptr_t>a.x if a.x != NULL else p.ptr[3]
        p.ptr[1] = <uintptr_t>a.w if a.w != NULL else p.ptr[3]
        p.ptr[2] = <uintptr_t>a.b if a.b != NULL else p.ptr[3]
        if total > 0:
            index = _cuda_ops().device_of(p.ptr[3])
            nn.launch_conv_direct("f32" if a.dtype == DT_FLOAT32 else "f64", index, total,
                                  (<char*>&p)[:sizeof(p)])
        return 1

    cdef int optim(self, const tl_optim_args* a, bint big) except -1:
        # the descriptor's address: tensorlib/cuda/_optim.py reads it through a ctypes
        # mirror of cpu_optim.h's struct, advances the 0-d states on the host (they live on
        # the CPU, as PyTorch's 'step') and queues one update per parameter
        _cuda_helper("_optim").run(<uintptr_t>a)
        return 0

    cdef int igemm(self, tl_igemm_args* g, bint big) except -1:
        _cuda_helper("_intops").igemm(<uintptr_t>g)
        return 0

    cdef int rows(self, int op, const tl_rows_t* r, int flag, int64_t k, bint big) except -1:
        # the descriptor as plain numbers (tensorlib/cuda/_indexing.py sorts on the device)
        cdef int i, nd = r.outer_nd
        _cuda_index().rows(
            op, flag, k, r.dtype, [r.outer_shape[i] for i in range(nd)],
            [r.src_os[i] for i in range(nd)],
            [r.o0_os[i] for i in range(nd)] if r.o0 != NULL else None,
            [r.o1_os[i] for i in range(nd)] if r.o1 != NULL else None,
            r.n, r.src_st, r.o0_st, r.o1_st, <uintptr_t>r.src, <uintptr_t>r.o0,
            <uintptr_t>r.o1)
        return 0

    cdef int index(self, int nd, const int64_t* shape, char* dst, const int64_t* dst_st,
                   const char* src, const int64_t* src_st, const int64_t* idx,
                   const int64_t* idx_st, int64_t idx_mul, int side, int dtype,
                   int op) except -1:
        # tl_index_run's arguments as plain numbers (tensorlib/cuda/_indexing.py)
        cdef int i
        _cuda_index().index(nd, [shape[i] for i in range(nd)], <uintptr_t>dst,
                            [dst_st[i] for i in range(nd)], <uintptr_t>src,
                            [src_st[i] for i in range(nd)], <uintptr_t>idx,
                            [idx_st[i] for i in range(nd)], idx_mul, side, dtype, op)
        return 0

    cdef int scale(self, TensorBase t, double alpha_d, int64_t alpha_i) except -1:
        if t._numel:
            _cuda_helper("_intops").scale(t._dtype.code, t._numel, <uintptr_t>tensor_data(t),
                                          alpha_d, alpha_i)
        return 0

    cdef int fill(self, TensorBase t, const char* value, int value_dtype) except -1:
        cdef int i
        _cuda_ops().copy(t._ndim, [t._shape[i] for i in range(t._ndim)],
                         <uintptr_t>tensor_data(t), [t._strides[i] for i in range(t._ndim)],
                         t._dtype.code, <uintptr_t>value, [0] * t._ndim, value_dtype)
        return 0


cdef Backend _make_backend(type cls, str name, bint has_data):
    cdef Backend b = cls.__new__(cls)
    b.name = name
    b.has_data = has_data
    return b


cdef Backend CPU_BACKEND = _make_backend(CPUBackend, "cpu", True)
cdef Backend META_BACKEND = _make_backend(MetaBackend, "meta", False)
cdef Backend CUDA_BACKEND = _make_backend(CUDABackend, "cuda", True)


cdef Backend backend_for(Device dev):
    """The back end that runs work on ``dev``."""
    if dev.kind == DEVICE_CPU:
        return CPU_BACKEND
    if dev.kind == DEVICE_META:
        return META_BACKEND
    if dev.kind == DEVICE_CUDA:
        return CUDA_BACKEND
    return _no_backend(dev)


cdef Backend _no_backend(Device dev):
    raise RuntimeError(f"no back end for device '{dev}' in this build")


cdef Backend backend_of(TensorBase t):
    return backend_for(t._storage.device)


cdef bint has_data(TensorBase t) noexcept:
    """Whether t has values (false on meta)."""
    return t._storage.device.kind != DEVICE_META


cdef int needs_data(TensorBase t, str what) except -1:
    """Raise PyTorch's error for reading values that a meta tensor does not have. On a CUDA
    device the host cannot read the memory: ``numpy`` raises PyTorch's TypeError, reading
    values (``item``, ``copy out``, a value-dependent result) goes through ``host_copy``, and
    ops whose host code would read device memory raise NotImplementedError."""
    if t._storage.device.kind == DEVICE_CUDA:
        if what == "numpy":
            raise TypeError(f"can't convert {t._storage.device} device type tensor to numpy. "
                            f"Use Tensor.cpu() to copy the tensor to host memory first.")
        if what in ("item", "copy out", "nonzero", "masked_select", "unique") or \
                what.startswith("a value-dependent"):
            # (the indexing and sorting families count on the device, read the count, fill)
            return 0
        raise NotImplementedError(f"{what}: not implemented on the CUDA back end yet (its "
                                  f"output shape depends on the values); run it on the CPU")
    if t._storage.device.kind == DEVICE_META:
        if what == "item":
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        if what == "numpy":
            raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to "
                            "copy the tensor to host memory first.")
        if what == "copy out":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        raise NotImplementedError(
            f"{what}: attempted to run this operator with Meta tensors, but its output shape "
            f"depends on the values, which meta tensors do not have")
    return 0


cdef Device common_device(tuple inputs):
    """The device an op over ``inputs`` (tensors and Python numbers) runs on. A 0-d CPU tensor
    may join tensors of another device, as a Python number would (PyTorch's rule); any other
    mix raises PyTorch's error."""
    cdef Device dev = None, d
    cdef bint dev_is_cpu_scalar = False
    cdef TensorBase t
    for x in inputs:
        if not isinstance(x, TensorBase):
            continue
        t = <TensorBase>x
        d = t._storage.device
        if dev is None:
            dev = d
            dev_is_cpu_scalar = t._ndim == 0 and d.kind == DEVICE_CPU
        elif d is not dev:
            if t._ndim == 0 and d.kind == DEVICE_CPU:
                continue
            if dev_is_cpu_scalar:
                dev = d
                dev_is_cpu_scalar = False
                continue
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {dev} and {d}!")
    return CPU if dev is None else dev


cdef int same_device(TensorBase a, TensorBase b, str op) except -1:
    """Two tensors an op reads together must share a device."""
    if a._storage.device is not b._storage.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {a._storage.device} and {b._storage.device}! "
                           f"(when checking arguments for {op})")
    return 0


# unique's host helpers (cpu_sort.c): data-dependent output sizes, so not behind Backend yet;
# exported (tensor.pxd) because the kernels are linked into this module alone
cdef int64_t host_runs(int dtype, const char* vals, int64_t n, int64_t* run_of) noexcept nogil:
    return tl_runs(dtype, vals, n, run_of)


cdef void host_unique_fill(int dtype, const char* sorted_vals, const int64_t* order,
                           const int64_t* run_of, int64_t n, char* uniq, int64_t* inverse,
                           int64_t* counts) noexcept nogil:
    tl_unique_fill(dtype, sorted_vals, order, run_of, n, uniq, inverse, counts)


cdef int host_sort_slices(int dtype, const char* data, int64_t m, int64_t len,
                          int64_t* perm) noexcept nogil:
    return tl_sort_slices(dtype, data, m, len, perm)


cdef int64_t host_slice_runs(int dtype, const char* data, const int64_t* perm, int64_t m,
                             int64_t len, int64_t* run_of) noexcept nogil:
    return tl_slice_runs(dtype, data, perm, m, len, run_of)


# the addmm epilogue (out = beta * out + alpha * x), host code of the linalg front half
cdef void host_axpby_f32(const int64_t* shape, float* out, const int64_t* so, const float* x,
                         const int64_t* sx, const float* y, const int64_t* sy, float alpha,
                         float beta, int use_x, int use_y) noexcept nogil:
    tl_axpby_f32(shape, out, so, x, sx, y, sy, alpha, beta, use_x, use_y)


cdef void host_axpby_f64(const int64_t* shape, double* out, const int64_t* so, const double* x,
                         const int64_t* sx, const double* y, const int64_t* sy, double alpha,
                         double beta, int use_x, int use_y) noexcept nogil:
    tl_axpby_f64(shape, out, so, x, sx, y, sy, alpha, beta, use_x, use_y)


cdef void host_axpby_i64(const int64_t* shape, int64_t* out, const int64_t* so, const int64_t* x,
                         const int64_t* sx, const int64_t* y, const int64_t* sy, int64_t alpha,
                         int64_t beta, int use_x, int use_y) noexcept nogil:
    tl_axpby_i64(shape, out, so, x, sx, y, sy, alpha, beta, use_x, use_y)


# the host code of the indexing family (cpu_index.c: offsets, bounds checks, nonzero, take)
cdef int host_index_offsets(int nb, const int64_t* bshape, int k, const tl_index_src* srcs,
                            int wrap, int64_t* out, int* bad_k, int64_t* bad_pos,
                            int64_t* bad_val) noexcept nogil:
    return tl_index_offsets(nb, bshape, k, srcs, wrap, out, bad_k, bad_pos, bad_val)


cdef void host_linear_to_offsets(int64_t n, int64_t* inout, int ndim, const int64_t* shape,
                                 const int64_t* strides) noexcept nogil:
    tl_linear_to_offsets(n, inout, ndim, shape, strides)


cdef int64_t host_nonzero_setup(tl_nz* p, int ndim, const int64_t* shape, const char* data,
                                const int64_t* strides, int dtype) noexcept nogil:
    return tl_nonzero_setup(p, ndim, shape, data, strides, dtype)


cdef int64_t host_nonzero_count(const tl_nz* p, int64_t* chunk_counts, int parallel) noexcept nogil:
    return tl_nonzero_count(p, chunk_counts, parallel)


cdef void host_nonzero_fill(const tl_nz* p, const int64_t* chunk_counts, int64_t* out,
                            int64_t dim_stride, const int64_t* muls, int parallel) noexcept nogil:
    tl_nonzero_fill(p, chunk_counts, out, dim_stride, muls, parallel)


cdef void host_nonzero_gather(const tl_nz* p, const int64_t* chunk_counts, char* out,
                              const char* src, const int64_t* src_strides, int itemsize,
                              int parallel) noexcept nogil:
    tl_nonzero_gather(p, chunk_counts, out, src, src_strides, itemsize, parallel)


cdef int host_index_take1(int64_t n, const int64_t* ix, char* dst, const char* src,
                          int64_t src_stride, int64_t size, int itemsize, int64_t* bad_pos,
                          int parallel) noexcept nogil:
    return tl_index_take1(n, ix, dst, src, src_stride, size, itemsize, bad_pos, parallel)


cdef void host_index_div_counts(int ndim, const int64_t* shape, char* data, const int64_t* strides,
                                int dtype, const int64_t* counts,
                                const int64_t* count_strides) noexcept nogil:
    tl_index_div_counts(ndim, shape, data, strides, dtype, counts, count_strides)
