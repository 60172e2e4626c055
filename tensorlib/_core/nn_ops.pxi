# The nn family: convolution (and its transpose), pooling, batch/layer/group normalization.
#
# Front halves: PyTorch's argument checks and messages, output shapes, allocation through the
# device's allocator, then the back end's ``nn`` kernels (cpu_nn.c) and, for convolution, its
# ``copy`` and ``bmm``. Convolutions run over three spatial dims (1-D and 2-D get leading
# size-1 dims). The forward is im2col into a column matrix [C*K, n*L] of a batch chunk (the
# chunk's samples side by side, so one GEMM per group covers the chunk) and the product with
# the weight; transposed convolution is the same algebra read backwards (GEMM, then col2im).
# A back end may first take a whole small forward as one kernel (Backend.conv_direct: CUDA's
# direct convolution, where launches cost more than the work); CPU and meta never do.
# Column buffers are bounded (NN_COLS_BYTES) by splitting the batch into fixed chunks, so
# results do not depend on anything but the shapes. On meta every launch is a no-op and the
# same intermediates are allocated, so the memory estimate matches a CPU run.
# (included into tensor.pyx)

# the kernels' declarations (tl_nn_args, TL_NN_*, tl_nn_run) are in kernels.pxd


# dtype names as PyTorch's messages spell them
cdef tuple _NN_ST = ("Bool", "Byte", "Char", "Short", "Int", "Long", "Half", "BFloat16", "Float",
                     "Double")
cdef tuple _NN_CPP = ("bool", "unsigned char", "signed char", "short int", "int", "long int",
                      "c10::Half", "c10::BFloat16", "float", "double")

# the largest column matrix of one batch chunk
cdef int64_t NN_COLS_BYTES = 1 << 26


def _nn_cols_bytes(object n):
    """The column-matrix budget per batch chunk in bytes (for tests of the chunked path):
    returns the current one, and sets ``n`` unless it is None."""
    global NN_COLS_BYTES
    cdef int64_t old = NN_COLS_BYTES
    if n is not None:
        NN_COLS_BYTES = n
    return old


cdef int _nn_cpu_run(int op, tl_nn_args* a, bint big) except -1:
    """The CPU back end's nn kernels; returns 1 if an index kernel met a bad index."""
    cdef int rc
    if big:
        with nogil:
            rc = tl_nn_run(op, a)
    else:
        rc = tl_nn_run(op, a)
    if rc == 2:
        raise RuntimeError(f"nn kernel {op}: unsupported dtype code {a.dtype}")
    return rc


cdef inline void _nn_clear(tl_nn_args* a) noexcept:
    cdef int i
    memset(a, 0, sizeof(tl_nn_args))
    for i in range(3):
        a.in_[i] = 1
        a.out[i] = 1
        a.k[i] = 1
        a.s[i] = 1
        a.dil[i] = 1


cdef inline char* _nn_ptr(TensorBase t):
    return NULL if t is None else tensor_data(t)


cdef str _nn_list(tuple t):
    return "[" + ", ".join(str(v) for v in t) + "]"


cdef str _nn_sizes(TensorBase t):
    return _nn_list(tuple(t.shape))


cdef TensorBase _nn_c(TensorBase t):
    """t itself when contiguous, else a contiguous copy (through the back end)."""
    if t is None or t._contiguous:
        return t
    return _contiguous_copy(t)


cdef TensorBase _nn_mat(int64_t R, int64_t C, TensorBase like):
    """A new contiguous [R, C] matrix of like's dtype on like's device."""
    cdef int64_t sh[2]
    sh[0] = R
    sh[1] = C
    return empty_tensor(2, sh, like._dtype, like._storage.device)


cdef TensorBase _nn_empty(object shape, DType dt, Device dev):
    cdef int64_t sh[MAX_DIMS]
    cdef int nd = len(shape), i
    for i in range(nd):
        sh[i] = shape[i]
    return empty_tensor(nd, sh, dt, dev)


cdef int _nn_float(TensorBase t, str kernel) except -1:
    if t._dtype.code != DT_FLOAT32 and t._dtype.code != DT_FLOAT64:
        raise RuntimeError(f"\"{kernel}\" not implemented for '{_NN_ST[t._dtype.code]}'")
    return 0


cdef int _nn_same_dtype(TensorBase x, TensorBase t) except -1:
    if t is not None and t._dtype is not x._dtype:
        raise RuntimeError(f"expected scalar type {_NN_ST[x._dtype.code]} but found "
                           f"{_NN_ST[t._dtype.code]}")
    return 0


cdef int _nn_launch(TensorBase on, int op, tl_nn_args* a, int64_t work) except -1:
    """One launch into the back end of ``on``'s device."""
    a.dtype = on._dtype.code
    return backend_of(on).nn(op, a, work >= NOGIL_THRESHOLD)


cdef int64_t _nn_prod(tuple t):
    cdef int64_t p = 1
    for v in t:
        p *= v
    return p


# ---------------------------------------------------------------------------------------------
# convolution

cdef tuple _nn_expand(tuple v, int k, str name):
    """One entry per spatial dim (a single value repeats), with PyTorch's message."""
    if len(v) == k:
        return v
    if len(v) == 1:
        return v * k
    raise RuntimeError(f"expected {name} to be a single integer value or a list of {k} values "
                       f"to match the convolution dimensions, but got {name}={_nn_list(v)}")


cdef inline void _nn_set3(int64_t* dst, tuple v, int64_t fill) noexcept:
    """The 3-D form of a per-dim tuple: leading dims get ``fill``."""
    cdef int k = len(v), i
    for i in range(3):
        dst[i] = fill if i < 3 - k else v[i - (3 - k)]


cdef int _nn_conv_geometry(tl_nn_args* a, tuple img, tuple grid, tuple ks, tuple stride,
                           tuple padding, tuple dilation) except -1:
    _nn_set3(a.in_, img, 1)
    _nn_set3(a.out, grid, 1)
    _nn_set3(a.k, ks, 1)
    _nn_set3(a.s, stride, 1)
    _nn_set3(a.p, padding, 0)
    _nn_set3(a.dil, dilation, 1)
    return 0


cdef TensorBase _nn_rows(TensorBase owner, int64_t off, int64_t R, int64_t C):
    """The contiguous [R, C] block of a contiguous tensor at element ``off`` (a GEMM target)."""
    cdef int64_t sh[2]
    cdef int64_t st[2]
    sh[0] = R
    sh[1] = C
    st[0] = C
    st[1] = 1
    return make_view(owner, 2, sh, st, owner._offset + off)


cdef int _nn_gemm(TensorBase out, int64_t M, int64_t N, int64_t K, TensorBase a, int64_t aoff,
                  int64_t asr, int64_t asc, TensorBase b, int64_t boff, int64_t bsr,
                  int64_t bsc) except -1:
    """out[M, N] (contiguous) = A @ B, A and B given by offset and row/column strides."""
    return _la_bmm_into(out, 1, M, N, K, a, _la_bm(a._offset + aoff, 0, asr, asc),
                        b, _la_bm(b._offset + boff, 0, bsr, bsc))


cdef TensorBase _nn_to_cnl(TensorBase t, int64_t n0, int64_t nb, int64_t C, int64_t L):
    """Samples n0..n0+nb of a contiguous [N, C, L] tensor as a contiguous [C, nb * L] matrix
    (the samples side by side): a view for one sample, else a permuted copy."""
    cdef int64_t sh[3]
    cdef int64_t ss[3]
    cdef int64_t ds[3]
    cdef TensorBase out
    if nb == 1:
        return _nn_rows(t, n0 * C * L, C, L)
    out = _nn_mat(C, nb * L, t)
    sh[0] = nb
    sh[1] = C
    sh[2] = L
    ss[0] = C * L
    ss[1] = L
    ss[2] = 1
    ds[0] = L
    ds[1] = nb * L
    ds[2] = 1
    backend_of(t).copy(3, sh, tensor_data(out), ds, t._dtype.code,
                       tensor_data(t) + n0 * C * L * t._dtype.itemsize, ss, t._dtype.code)
    return out


cdef int _nn_from_cnl(TensorBase dst, TensorBase src, int64_t n0, int64_t nb, int64_t C,
                      int64_t L) except -1:
    """The inverse of _nn_to_cnl: a [C, nb * L] matrix into samples n0.. of [N, C, L]."""
    cdef int64_t sh[3]
    cdef int64_t ss[3]
    cdef int64_t ds[3]
    if nb == 1 and src._storage is dst._storage:
        return 0
    sh[0] = nb
    sh[1] = C
    sh[2] = L
    ds[0] = C * L
    ds[1] = L
    ds[2] = 1
    ss[0] = L
    ss[1] = nb * L
    ss[2] = 1
    backend_of(dst).copy(3, sh, tensor_data(dst) + n0 * C * L * dst._dtype.itemsize, ds,
                         dst._dtype.code, tensor_data(src), ss, src._dtype.code)
    return 0


cdef TensorBase _nn_im2col(TensorBase x, int64_t n0, int64_t nb, int64_t C, tuple img,
                           tuple grid, tuple ks, tuple stride, tuple padding, tuple dilation):
    """The column matrix [C*K, nb*L] of samples n0.. of a contiguous [N, C, *img] tensor."""
    cdef tl_nn_args a
    cdef int64_t K = _nn_prod(ks), L = _nn_prod(grid), I = _nn_prod(img)
    cdef TensorBase cols = _nn_mat(C * K, nb * L, x)
    _nn_clear(&a)
    _nn_conv_geometry(&a, img, grid, ks, stride, padding, dilation)
    a.n = nb
    a.c = C
    a.ld = nb * L
    a.x = tensor_data(x) + n0 * C * I * x._dtype.itemsize
    a.y = tensor_data(cols)
    _nn_launch(x, TL_NN_IM2COL, &a, nb * C * K * L)
    return cols


cdef int _nn_col2im(TensorBase cols, TensorBase y, int64_t n0, int64_t nb, int64_t C,
                    tuple img, tuple grid, tuple ks, tuple stride, tuple padding,
                    tuple dilation) except -1:
    """Samples n0.. of the contiguous [N, C, *img] tensor y = the sum of the column matrix."""
    cdef tl_nn_args a
    cdef int64_t K = _nn_prod(ks), L = _nn_prod(grid), I = _nn_prod(img)
    _nn_clear(&a)
    _nn_conv_geometry(&a, img, grid, ks, stride, padding, dilation)
    a.n = nb
    a.c = C
    a.ld = nb * L
    a.x = tensor_data(cols)
    a.y = tensor_data(y) + n0 * C * I * y._dtype.itemsize
    _nn_launch(y, TL_NN_COL2IM, &a, nb * C * (K * L + I))
    return 0


cdef int _nn_bias(TensorBase y, TensorBase bias, int64_t N, int64_t C, int64_t L) except -1:
    cdef tl_nn_args a
    _nn_clear(&a)
    a.n = N
    a.c = C
    a.m = L
    a.w = tensor_data(bias)
    a.y = tensor_data(y)
    return _nn_launch(y, TL_NN_BIAS_ADD, &a, N * C * L)


cdef TensorBase _nn_bias_grad(TensorBase g, int64_t N, int64_t C, int64_t L):
    """The sum of a contiguous [N, C, L] gradient over N and L."""
    cdef tl_nn_args a
    cdef TensorBase gb = empty_tensor(1, &C, g._dtype, g._storage.device)
    _nn_clear(&a)
    a.n = N
    a.c = C
    a.m = L
    a.g = tensor_data(g)
    a.gw = tensor_data(gb)
    _nn_launch(g, TL_NN_BIAS_GRAD, &a, N * C * L)
    return gb


cdef int _nn_accumulate(TensorBase y, TensorBase x) except -1:
    cdef tl_nn_args a
    _nn_clear(&a)
    a.n = y._numel
    a.x = tensor_data(x)
    a.y = tensor_data(y)
    return _nn_launch(y, TL_NN_ACCUMULATE, &a, y._numel)


cdef int _nn_conv_direct(TensorBase x, TensorBase w, TensorBase bias, TensorBase out,
                        int64_t G, tuple img, tuple grid, tuple ks, tuple stride, tuple padding,
                        tuple dilation) except -1:
    """Offers a whole (non-transposed) convolution, bias included, to the back end as one
    kernel (Backend.conv_direct): returns 1 when it was queued into ``out``, else 0."""
    cdef tl_nn_args a
    _nn_clear(&a)
    _nn_conv_geometry(&a, img, grid, ks, stride, padding, dilation)
    a.dtype = x._dtype.code
    a.n = x._shape[0]
    a.c = x._shape[1]
    a.m = out._shape[1]
    a.groups = G
    a.x = tensor_data(x)
    a.w = tensor_data(w)
    a.b = _nn_ptr(bias)
    a.y = tensor_data(out)
    return backend_of(out).conv_direct(&a)


cdef int64_t _nn_chunk(int64_t N, int64_t rows, int64_t L, int itemsize) noexcept:
    """Samples per batch chunk: as many as keep the column matrix under NN_COLS_BYTES."""
    cdef int64_t per = rows * L * itemsize
    if per <= 0:
        return N if N > 0 else 1
    cdef int64_t nb = NN_COLS_BYTES // per
    if nb < 1:
        nb = 1
    return nb if nb < N else (N if N > 0 else 1)


cdef tuple _nn_conv_check(TensorBase input, TensorBase weight, TensorBase bias, tuple stride,
                          tuple padding, tuple dilation, bint transposed, tuple output_padding,
                          int64_t groups):
    """PyTorch's checks of convolution's arguments, in its order. Returns the per-dim tuples
    (stride, padding, dilation, output_padding) and the spatial output shape."""
    cdef int wd = weight._ndim, k = wd - 2, i
    cdef int64_t C = input._shape[1] if input._ndim > 1 else 0
    common_device((input, weight) if bias is None else (input, weight, bias))
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if wd < 3:
        raise RuntimeError(f"weight should have at least three dimensions, but got weight of "
                           f"size {_nn_sizes(weight)}")
    if input._ndim != wd:
        raise RuntimeError(f"Expected {wd}-dimensional input for {wd}-dimensional weight "
                           f"{_nn_sizes(weight)}, but got {input._ndim}-dimensional input of "
                           f"size {_nn_sizes(input)} instead")
    if k > 3:
        raise RuntimeError(f"convolution over {k} spatial dims is not supported (1 to 3)")
    stride = _nn_expand(stride, k, "stride")
    padding = _nn_expand(padding, k, "padding")
    dilation = _nn_expand(dilation, k, "dilation")
    output_padding = _nn_expand(output_padding, k, "output_padding")
    if any(v <= 0 for v in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(v < 0 for v in padding):
        raise RuntimeError("negative padding is not supported")
    if any(v < 0 for v in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(v <= 0 for v in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {_nn_list(dilation)}")
    if weight._shape[0] % groups != 0 and not transposed:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{_nn_sizes(weight)}] "
                           f"instead")
    if not transposed:
        if C != weight._shape[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {_nn_sizes(weight)}, "
                               f"expected input{_nn_sizes(input)} to have "
                               f"{weight._shape[1] * groups} channels, but got {C} channels "
                               f"instead")
        if bias is not None and (bias._ndim != 1 or bias._shape[0] != weight._shape[0]):
            raise RuntimeError(f"Given weight of size {_nn_sizes(weight)}, expected bias to be "
                               f"1-dimensional with {weight._shape[0]} elements, but got bias "
                               f"of size {_nn_sizes(bias)} instead")
        padded = tuple(input._shape[2 + i] + 2 * padding[i] for i in range(k))
        ksz = tuple(dilation[i] * (weight._shape[2 + i] - 1) + 1 for i in range(k))
        if any(ksz[i] > padded[i] for i in range(k)):
            raise RuntimeError(f"Calculated padded input size per channel: "
                               f"({' x '.join(str(v) for v in padded)}). Kernel size: "
                               f"({' x '.join(str(v) for v in ksz)}). Kernel size can't be "
                               f"greater than actual input size")
        osz = tuple((padded[i] - ksz[i]) // stride[i] + 1 for i in range(k))
    else:
        if C != weight._shape[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {_nn_sizes(weight)}, "
                               f"expected input{_nn_sizes(input)} to have {weight._shape[0]} "
                               f"channels, but got {C} channels instead")
        if weight._shape[0] % groups != 0:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                               f"{groups} at dimension 0, but got weight of size "
                               f"[{_nn_sizes(weight)}] instead")
        if bias is not None and (bias._ndim != 1 or
                                 bias._shape[0] != weight._shape[1] * groups):
            raise RuntimeError(f"Given transposed=1, weight of size {_nn_sizes(weight)}, "
                               f"expected bias to be 1-dimensional with "
                               f"{weight._shape[1] * groups} elements, but got bias of size "
                               f"{_nn_sizes(bias)} instead")
        if any(output_padding[i] >= stride[i] and output_padding[i] >= dilation[i]
               for i in range(k)):
            names = ("depth", "height", "width")[3 - max(k, 2):]
            ext = 1 if k == 1 else 0          # PyTorch runs 1-D as 2-D with a unit height
            op = (0,) * ext + output_padding
            st = (1,) * ext + stride
            dl = (1,) * ext + dilation
            raise RuntimeError(
                "output padding must be smaller than either stride or dilation, but got " +
                " ".join(f"output_padding_{n}: {v}" for n, v in zip(names, op)) + " " +
                " ".join(f"stride_{n}: {v}" for n, v in zip(names, st)) + " " +
                " ".join(f"dilation_{n}: {v}" for n, v in zip(names, dl)))
        osz = tuple((input._shape[2 + i] - 1) * stride[i] - 2 * padding[i] +
                    dilation[i] * (weight._shape[2 + i] - 1) + output_padding[i] + 1
                    for i in range(k))
        if any(v <= 0 for v in osz):
            raise RuntimeError(f"Given input size per channel: "
                               f"({' x '.join(str(input._shape[2 + i]) for i in range(k))}). "
                               f"Calculated output size per channel: "
                               f"({' x '.join(str(v) for v in osz)}). Output size is too small")
    _nn_float(input, "slow_conv2d_cpu")
    _nn_same_dtype(input, weight)
    if bias is not None and bias._dtype is not input._dtype:
        raise RuntimeError(f"Input type ({_NN_CPP[input._dtype.code]}) and bias type "
                           f"({_NN_CPP[bias._dtype.code]}) should be the same")
    return stride, padding, dilation, output_padding, osz


cdef object _nn_convolution(TensorBase input, TensorBase weight, TensorBase bias, tuple stride,
                            tuple padding, tuple dilation, bint transposed,
                            tuple output_padding, int64_t groups):
    stride, padding, dilation, output_padding, osz = _nn_conv_check(
        input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    cdef TensorBase x = _nn_c(input), w = _nn_c(weight), out, cols, tmp, xt
    cdef int64_t N = input._shape[0], Cin = input._shape[1], G = groups
    cdef int64_t Cout = weight._shape[1] * G if transposed else weight._shape[0]
    cdef int64_t CinG = Cin // G, CoutG = Cout // G, g, n0, nb, chunk
    cdef tuple ks = tuple(weight.shape[2:]), isz = tuple(input.shape[2:])
    cdef int64_t K = _nn_prod(ks), Li = _nn_prod(isz), Lo = _nn_prod(osz)
    out = _nn_empty((N, Cout) + osz, input._dtype, input._storage.device)
    if out._numel == 0:
        return out
    if not transposed and _nn_conv_direct(x, w, _nn_c(bias), out, G, isz, osz, ks, stride,
                                          padding, dilation):
        return out
    if not transposed:
        chunk = _nn_chunk(N, Cin * K, Lo, x._dtype.itemsize)
        for n0 in range(0, N, chunk):
            nb = min(chunk, N - n0)
            cols = _nn_im2col(x, n0, nb, Cin, isz, osz, ks, stride, padding, dilation)
            # [Cout, nb * Lo]: for one sample, the output's own rows
            tmp = _nn_rows(out, n0 * Cout * Lo, Cout, Lo) if nb == 1 else \
                _nn_mat(Cout, nb * Lo, x)
            for g in range(G):
                _nn_gemm(_nn_rows(tmp, g * CoutG * nb * Lo, CoutG, nb * Lo), CoutG, nb * Lo,
                         CinG * K, w, g * CoutG * CinG * K, CinG * K, 1,
                         cols, g * CinG * K * nb * Lo, nb * Lo, 1)
            _nn_from_cnl(out, tmp, n0, nb, Cout, Lo)
    else:
        chunk = _nn_chunk(N, Cout * K, Li, x._dtype.itemsize)
        for n0 in range(0, N, chunk):
            nb = min(chunk, N - n0)
            xt = _nn_to_cnl(x, n0, nb, Cin, Li)
            cols = _nn_mat(Cout * K, nb * Li, x)
            for g in range(G):
                # cols_g [CoutG*K, nb*Li] = W_g^T @ x_g, W_g the [CinG, CoutG*K] block
                _nn_gemm(_nn_rows(cols, g * CoutG * K * nb * Li, CoutG * K, nb * Li),
                         CoutG * K, nb * Li, CinG, w, g * CinG * CoutG * K, 1, CoutG * K,
                         xt, g * CinG * nb * Li, nb * Li, 1)
            _nn_col2im(cols, out, n0, nb, Cout, osz, isz, ks, stride, padding, dilation)
    if bias is not None:
        _nn_bias(out, _nn_c(bias), N, Cout, Lo)
    return out


cdef object _nn_convolution_backward(TensorBase grad_output, TensorBase input,
                                     TensorBase weight, tuple stride, tuple padding,
                                     tuple dilation, bint transposed, tuple output_padding,
                                     int64_t groups, object output_mask):
    stride, padding, dilation, output_padding, osz = _nn_conv_check(
        input, weight, None, stride, padding, dilation, transposed, output_padding, groups)
    cdef int64_t N = input._shape[0], Cin = input._shape[1], G = groups
    cdef int64_t Cout = weight._shape[1] * G if transposed else weight._shape[0]
    cdef tuple ks = tuple(weight.shape[2:]), isz = tuple(input.shape[2:])
    if tuple(grad_output.shape) != (N, Cout) + osz:
        raise RuntimeError(f"convolution_backward: expected grad_output of size "
                           f"{_nn_list((N, Cout) + osz)}, but got {_nn_sizes(grad_output)}")
    _nn_same_dtype(input, grad_output)
    mask = tuple(output_mask)
    cdef bint want_i = mask[0], want_w = mask[1], want_b = mask[2]
    cdef TensorBase go = _nn_c(grad_output), x = _nn_c(input), w = _nn_c(weight)
    cdef TensorBase gi = None, gw = None, gb = None, gw_part = None, gwt, cols, got, xt, t2
    cdef int64_t CinG = Cin // G, CoutG = Cout // G, g, n0, nb, chunk
    cdef int64_t K = _nn_prod(ks), Li = _nn_prod(isz), Lo = _nn_prod(osz)
    cdef Device dev = input._storage.device
    cdef uint8_t zero = 0
    if want_b:
        gb = _nn_bias_grad(go, N, Cout, Lo)
    if want_i:
        gi = _nn_empty(tuple(input.shape), input._dtype, dev)
    if want_w:
        gw = _nn_empty(tuple(weight.shape), weight._dtype, dev)
        if N == 0 or Lo == 0 or Li == 0:
            backend_of(gw).fill(gw, <char*>&zero, DT_BOOL)
    if (want_i or want_w) and N > 0 and Lo > 0 and Li > 0:
        if not transposed:
            chunk = _nn_chunk(N, Cin * K, Lo, x._dtype.itemsize)
            for n0 in range(0, N, chunk):
                nb = min(chunk, N - n0)
                got = _nn_to_cnl(go, n0, nb, Cout, Lo)
                if want_w:
                    cols = _nn_im2col(x, n0, nb, Cin, isz, osz, ks, stride, padding, dilation)
                    gwt = gw if n0 == 0 else (
                        gw_part if gw_part is not None else _empty_like_shape(gw))
                    gw_part = None if n0 == 0 else gwt
                    for g in range(G):
                        # gw_g [CoutG, CinG*K] = go_g [CoutG, nb*Lo] @ cols_g^T
                        _nn_gemm(_nn_rows(gwt, g * CoutG * CinG * K, CoutG, CinG * K), CoutG,
                                 CinG * K, nb * Lo, got, g * CoutG * nb * Lo, nb * Lo, 1,
                                 cols, g * CinG * K * nb * Lo, 1, nb * Lo)
                    if n0 != 0:
                        _nn_accumulate(gw, gwt)
                if want_i:
                    cols = _nn_mat(Cin * K, nb * Lo, x)
                    for g in range(G):
                        # cols_g [CinG*K, nb*Lo] = W_g^T @ go_g
                        _nn_gemm(_nn_rows(cols, g * CinG * K * nb * Lo, CinG * K, nb * Lo),
                                 CinG * K, nb * Lo, CoutG, w, g * CoutG * CinG * K, 1, CinG * K,
                                 got, g * CoutG * nb * Lo, nb * Lo, 1)
                    _nn_col2im(cols, gi, n0, nb, Cin, isz, osz, ks, stride, padding, dilation)
        else:
            chunk = _nn_chunk(N, Cout * K, Li, x._dtype.itemsize)
            for n0 in range(0, N, chunk):
                nb = min(chunk, N - n0)
                # the transposed conv's output side is the image of the column matrix
                cols = _nn_im2col(go, n0, nb, Cout, osz, isz, ks, stride, padding, dilation)
                if want_i:
                    t2 = _nn_rows(gi, n0 * Cin * Li, Cin, Li) if nb == 1 else \
                        _nn_mat(Cin, nb * Li, x)
                    for g in range(G):
                        # gx_g [CinG, nb*Li] = W_g [CinG, CoutG*K] @ cols_g
                        _nn_gemm(_nn_rows(t2, g * CinG * nb * Li, CinG, nb * Li), CinG, nb * Li,
                                 CoutG * K, w, g * CinG * CoutG * K, CoutG * K, 1,
                                 cols, g * CoutG * K * nb * Li, nb * Li, 1)
                    _nn_from_cnl(gi, t2, n0, nb, Cin, Li)
                if want_w:
                    xt = _nn_to_cnl(x, n0, nb, Cin, Li)
                    gwt = gw if n0 == 0 else (
                        gw_part if gw_part is not None else _empty_like_shape(gw))
                    gw_part = None if n0 == 0 else gwt
                    for g in range(G):
                        # gw_g [CinG, CoutG*K] = x_g [CinG, nb*Li] @ cols_g^T
                        _nn_gemm(_nn_rows(gwt, g * CinG * CoutG * K, CinG, CoutG * K), CinG,
                                 CoutG * K, nb * Li, xt, g * CinG * nb * Li, nb * Li, 1,
                                 cols, g * CoutG * K * nb * Li, 1, nb * Li)
                    if n0 != 0:
                        _nn_accumulate(gw, gwt)
    elif want_i and gi._numel:
        backend_of(gi).fill(gi, <char*>&zero, DT_BOOL)
    return (gi, gw, gb)


# ---------------------------------------------------------------------------------------------
# pooling over (N, C, H, W) or (C, H, W): the kernels see (planes, H, W)

cdef tuple _nn_pair(tuple v, str op, str what, bint allow_empty):
    if len(v) == 2:
        return v
    if len(v) == 1:
        return v * 2
    if allow_empty and len(v) == 0:
        return None
    if what == "kernel_size":
        raise RuntimeError(f"{op}: kernel_size must either be a single int, or a tuple of two "
                           f"ints")
    if what == "stride":
        raise RuntimeError(f"{op}: stride must either be omitted, a single int, or a tuple of "
                           f"two ints")
    if what == "dilation":
        raise RuntimeError(f"{op}: dilation must be either a single int, or a tuple of two ints")
    raise RuntimeError(f"{op}: {what} must either be a single int, or a tuple of two ints")


cdef int64_t _nn_pool_out(int64_t size, int64_t k, int64_t pad, int64_t stride, int64_t dil,
                          bint ceil_mode) noexcept:
    """PyTorch's pooling output size (a last window starting in the right padding is
    dropped in ceil mode)."""
    cdef int64_t num = size + 2 * pad - dil * (k - 1) - 1 + (stride - 1 if ceil_mode else 0)
    cdef int64_t o = (num // stride if num >= 0 else -((-num + stride - 1) // stride)) + 1
    if ceil_mode and (o - 1) * stride >= size + pad:
        o -= 1
    return o


cdef tuple _nn_pool_check(TensorBase x, str op, tuple ks, tuple st, tuple pad, tuple dil,
                          bint ceil_mode):
    """Checks and output size (OH, OW) of a 2-D window pooling."""
    cdef int64_t H, W, OH, OW
    if not ((x._ndim == 3 or x._ndim == 4) and
            all(x._shape[i] != 0 for i in range(1, x._ndim))):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if st[0] == 0 or st[1] == 0:
        raise RuntimeError("stride should not be zero")
    if ks[0] <= 0 or ks[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {ks[0]} "
                           f"kW: {ks[1]}")
    if st[0] < 0 or st[1] < 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {st[0]} "
                           f"dW: {st[1]}")
    if dil[0] <= 0 or dil[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dil[0]} "
                           f"dilationW: {dil[1]}")
    for i in range(2):
        if pad[i] < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pad[i]}")
        if pad[i] > ((ks[i] - 1) * dil[i] + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pad[i]}, kernel_size={ks[i]} and dilation={dil[i]}")
    H = x._shape[x._ndim - 2]
    W = x._shape[x._ndim - 1]
    OH = _nn_pool_out(H, ks[0], pad[0], st[0], dil[0], ceil_mode)
    OW = _nn_pool_out(W, ks[1], pad[1], st[1], dil[1], ceil_mode)
    if OH < 1 or OW < 1:
        C = x._shape[x._ndim - 3]
        raise RuntimeError(f"Given input size: ({C}x{H}x{W}). Calculated output size: "
                           f"({C}x{OH}x{OW}). Output size is too small")
    _nn_float(x, op)
    return (OH, OW)


cdef inline int64_t _nn_planes(TensorBase x) noexcept:
    cdef int64_t p = 1
    cdef int i
    for i in range(x._ndim - 2):
        p *= x._shape[i]
    return p


cdef int _nn_pool_args(tl_nn_args* a, TensorBase x, int64_t OH, int64_t OW) except -1:
    _nn_clear(a)
    a.n = _nn_planes(x)
    a.c = 1
    a.in_[1] = x._shape[x._ndim - 2]
    a.in_[2] = x._shape[x._ndim - 1]
    a.out[1] = OH
    a.out[2] = OW
    return 0


cdef object _nn_max_pool2d(TensorBase self, tuple kernel_size, tuple stride, tuple padding,
                           tuple dilation, bint ceil_mode):
    cdef str op = "max_pool2d"
    ks = _nn_pair(kernel_size, op, "kernel_size", False)
    st = _nn_pair(stride, op, "stride", True) or ks
    pad = _nn_pair(padding, op, "padding", False)
    dil = _nn_pair(dilation, op, "dilation", False)
    OH, OW = _nn_pool_check(self, op, ks, st, pad, dil, ceil_mode)
    cdef tl_nn_args a
    cdef TensorBase x = _nn_c(self)
    shape = tuple(self.shape[:-2]) + (OH, OW)
    cdef TensorBase y = _nn_empty(shape, self._dtype, self._storage.device)
    cdef TensorBase idx = _nn_empty(shape, dtype_of(DT_INT64), self._storage.device)
    _nn_pool_args(&a, x, OH, OW)
    for i in range(2):
        a.k[1 + i] = ks[i]
        a.s[1 + i] = st[i]
        a.p[1 + i] = pad[i]
        a.dil[1 + i] = dil[i]
    a.x = tensor_data(x)
    a.y = tensor_data(y)
    a.idx = <int64_t*>tensor_data(idx)
    _nn_launch(x, TL_NN_MAXPOOL, &a, y._numel * ks[0] * ks[1])
    return (y, idx)


cdef object _nn_index_backward(TensorBase grad_output, TensorBase self, TensorBase indices,
                               str op):
    """The gradient of a max pooling: each output gradient added at its plane index."""
    cdef tl_nn_args a
    if tuple(grad_output.shape) != tuple(indices.shape) or grad_output._ndim != self._ndim:
        raise RuntimeError(f"{op}_backward: expected grad_output of size "
                           f"{_nn_sizes(indices)}, but got {_nn_sizes(grad_output)}")
    if indices._dtype.code != DT_INT64:
        raise RuntimeError(f"{op}_backward: expected indices of dtype Long, but got "
                           f"{_NN_ST[indices._dtype.code]}")
    _nn_float(self, op + "_backward")
    _nn_same_dtype(self, grad_output)
    cdef TensorBase g = _nn_c(grad_output), ix = _nn_c(indices)
    cdef TensorBase gi = _empty_like_shape(self)
    _nn_clear(&a)
    a.n = _nn_planes(self)
    a.sp = grad_output._shape[grad_output._ndim - 2] * grad_output._shape[grad_output._ndim - 1]
    a.dp = self._shape[self._ndim - 2] * self._shape[self._ndim - 1]
    a.g = tensor_data(g)
    a.y = tensor_data(gi)
    a.idx = <int64_t*>tensor_data(ix)
    if _nn_launch(gi, TL_NN_INDEX_ADD, &a, a.n * (a.sp + a.dp)):
        raise RuntimeError(f"{op}_backward: index {a.bad} is out of bounds for a plane of "
                           f"{a.dp} elements")
    return gi


cdef object _nn_avg_pool2d(TensorBase self, tuple kernel_size, tuple stride, tuple padding,
                           bint ceil_mode, bint count_include_pad, object divisor_override):
    cdef str op = "avg_pool2d"
    ks = _nn_pair(kernel_size, op, "kernel_size", False)
    st = _nn_pair(stride, op, "stride", True) or ks
    pad = _nn_pair(padding, op, "padding", False)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    OH, OW = _nn_pool_check(self, op, ks, st, pad, (1, 1), ceil_mode)
    cdef tl_nn_args a
    cdef TensorBase x = _nn_c(self)
    cdef TensorBase y = _nn_empty(tuple(self.shape[:-2]) + (OH, OW), self._dtype,
                                  self._storage.device)
    _nn_pool_args(&a, x, OH, OW)
    for i in range(2):
        a.k[1 + i] = ks[i]
        a.s[1 + i] = st[i]
        a.p[1 + i] = pad[i]
    a.flag = count_include_pad
    a.divisor = 0 if divisor_override is None else divisor_override
    a.x = tensor_data(x)
    a.y = tensor_data(y)
    _nn_launch(x, TL_NN_AVGPOOL, &a, y._numel * ks[0] * ks[1])
    return y


cdef object _nn_avg_pool2d_backward(TensorBase grad_output, TensorBase self, tuple kernel_size,
                                    tuple stride, tuple padding, bint ceil_mode,
                                    bint count_include_pad, object divisor_override):
    cdef str op = "avg_pool2d"
    ks = _nn_pair(kernel_size, op, "kernel_size", False)
    st = _nn_pair(stride, op, "stride", True) or ks
    pad = _nn_pair(padding, op, "padding", False)
    OH, OW = _nn_pool_check(self, op, ks, st, pad, (1, 1), ceil_mode)
    if tuple(grad_output.shape) != tuple(self.shape[:-2]) + (OH, OW):
        raise RuntimeError(f"avg_pool2d_backward: expected grad_output of size "
                           f"{_nn_list(tuple(self.shape[:-2]) + (OH, OW))}, but got "
                           f"{_nn_sizes(grad_output)}")
    _nn_same_dtype(self, grad_output)
    cdef tl_nn_args a
    cdef TensorBase g = _nn_c(grad_output), gi = _empty_like_shape(self)
    _nn_pool_args(&a, self, OH, OW)
    for i in range(2):
        a.k[1 + i] = ks[i]
        a.s[1 + i] = st[i]
        a.p[1 + i] = pad[i]
    a.flag = count_include_pad
    a.divisor = 0 if divisor_override is None else divisor_override
    a.g = tensor_data(g)
    a.y = tensor_data(gi)
    _nn_launch(gi, TL_NN_AVGPOOL_BWD, &a, gi._numel + g._numel * ks[0] * ks[1])
    return gi


cdef tuple _nn_adaptive_check(TensorBase x, tuple output_size, str op):
    if x._ndim != 3 and x._ndim != 4:
        raise RuntimeError(f"{op}(): Expected 3D or 4D tensor, but got {_nn_sizes(x)}")
    for i in range(1, x._ndim):
        if x._shape[i] == 0:
            raise RuntimeError(f"{op}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {_nn_sizes(x)} with dimension "
                               f"{i} being empty")
    if len(output_size) == 1:
        output_size = output_size * 2
    if len(output_size) != 2:
        raise RuntimeError(f"{op}(): internal error: output_size.size() must be 2")
    _nn_float(x, op)
    return output_size


cdef object _nn_adaptive_pool2d(TensorBase self, tuple output_size, bint is_max):
    cdef str op = "adaptive_max_pool2d" if is_max else "adaptive_avg_pool2d"
    OH, OW = _nn_adaptive_check(self, output_size, op)
    cdef tl_nn_args a
    cdef TensorBase x = _nn_c(self), idx = None
    shape = tuple(self.shape[:-2]) + (OH, OW)
    cdef TensorBase y = _nn_empty(shape, self._dtype, self._storage.device)
    _nn_pool_args(&a, x, OH, OW)
    a.x = tensor_data(x)
    a.y = tensor_data(y)
    if is_max:
        idx = _nn_empty(shape, dtype_of(DT_INT64), self._storage.device)
        a.idx = <int64_t*>tensor_data(idx)
    _nn_launch(x, TL_NN_ADAPT_MAX if is_max else TL_NN_ADAPT_AVG, &a, x._numel + y._numel)
    return (y, idx) if is_max else y


cdef object _nn_adaptive_avg_pool2d_backward(TensorBase grad_output, TensorBase self):
    if grad_output._ndim != self._ndim or \
            tuple(grad_output.shape[:-2]) != tuple(self.shape[:-2]):
        raise RuntimeError(f"adaptive_avg_pool2d_backward: grad_output of size "
                           f"{_nn_sizes(grad_output)} does not match input of size "
                           f"{_nn_sizes(self)}")
    _nn_float(self, "adaptive_avg_pool2d_backward")
    _nn_same_dtype(self, grad_output)
    cdef tl_nn_args a
    cdef TensorBase g = _nn_c(grad_output), gi = _empty_like_shape(self)
    _nn_pool_args(&a, self, grad_output._shape[grad_output._ndim - 2],
                  grad_output._shape[grad_output._ndim - 1])
    a.g = tensor_data(g)
    a.y = tensor_data(gi)
    _nn_launch(gi, TL_NN_ADAPT_AVG_BWD, &a, gi._numel + g._numel)
    return gi


cdef object _nn_max_unpool2d(TensorBase self, TensorBase indices, tuple output_size):
    if indices._dtype.code != DT_INT64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{_NN_ST[indices._dtype.code]}")
    if len(output_size) != 2:
        raise RuntimeError(f"There should be exactly two elements (height, width) in "
                           f"output_size, but got {len(output_size)} elements.")
    if self._ndim != 3 and self._ndim != 4:
        raise RuntimeError(f"Input to max_unpooling2d should be a 3d or 4d Tensor, but got a "
                           f"tensor with {self._ndim} dimensions.")
    if tuple(self.shape) != tuple(indices.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({_nn_sizes(self)}) but got indices tensor with shape: "
                           f"{_nn_sizes(indices)}")
    for i in range(1, self._ndim):
        if self._shape[i] <= 0:
            raise RuntimeError(f"max_unpooling2d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but got {_nn_sizes(self)} with dimension "
                               f"{i} being empty.")
    _nn_float(self, "max_unpooling2d_forward_out")
    cdef int64_t OH = output_size[0], OW = output_size[1]
    cdef tl_nn_args a
    cdef TensorBase x = _nn_c(self), ix = _nn_c(indices)
    cdef TensorBase y = _nn_empty(tuple(self.shape[:-2]) + (OH, OW), self._dtype,
                                  self._storage.device)
    _nn_clear(&a)
    a.n = _nn_planes(self)
    a.sp = self._shape[self._ndim - 2] * self._shape[self._ndim - 1]
    a.dp = OH * OW
    a.x = tensor_data(x)
    a.y = tensor_data(y)
    a.idx = <int64_t*>tensor_data(ix)
    if _nn_launch(y, TL_NN_INDEX_SET, &a, a.n * (a.sp + a.dp)):
        raise RuntimeError(f"Found an invalid max index: {a.bad} (output volumes are of size "
                           f"{OH}x{OW})")
    return y


def _nn_conv_double_backward(int which, grads, grad_output, input, weight, stride, padding,
                             dilation, transposed, output_padding, groups):
    """The gradient of convolution_backward for its input ``which`` (0: grad_output,
    1: input, 2: weight), from the gradients (ggI, ggW, ggB) of its outputs. The three
    outputs are bilinear in (grad_output, input) and (grad_output, weight), so each term is
    a convolution or a convolution_backward with one operand replaced."""
    conv = _GENERATED_FUNCTIONS["convolution"]
    conv_bw = _GENERATED_FUNCTIONS["convolution_backward"]
    ggi, ggw, ggb = (tuple(grads) + (None, None, None))[:3]
    args = (stride, padding, dilation, transposed, output_padding, groups)
    if which == 1:
        return None if ggw is None else \
            conv_bw(grad_output, input, ggw, None, *args, (True, False, False))[0]
    if which == 2:
        return None if ggi is None else \
            conv_bw(grad_output, ggi, weight, None, *args, (False, True, False))[1]
    out = None
    if ggi is not None:
        out = conv(ggi, weight, None, *args)
    if ggw is not None:
        t = conv(input, ggw, None, *args)
        out = t if out is None else out + t
    if ggb is not None:
        t = ggb.reshape((1, -1) + (1,) * (grad_output.dim() - 2)).expand(grad_output.shape)
        out = t if out is None else out + t
    return out


def _nn_norm_grad(int kind, int which, grads, input, weight, mean, rstd, running_mean,
                  running_var, training, eps, extra):
    """The gradient of a norm (kind 0: batch, 1: layer, 2: group) for its input ``which``
    (0: input, 1: weight, 2: bias). Normally the fused backward op; while a graph of the
    gradient is being built (create_graph), the same formulas in recorded ops, with the
    statistics recomputed from the input so that their dependence on it is differentiated
    too (the double backward)."""
    cdef tuple mask = (which == 0, which == 1, which == 2)
    cdef int nd = input.dim()
    g = _nn_grad0(grads, input)
    if not tl_grad_enabled:
        if kind == 0:
            return _GENERATED_FUNCTIONS["native_batch_norm_backward"](
                g, input, weight, running_mean, running_var, mean, rstd, training, eps,
                mask)[which]
        if kind == 1:
            return _GENERATED_FUNCTIONS["native_layer_norm_backward"](
                g, input, extra, mean, rstd, weight, None, mask)[which]
        N, C, HxW, group = extra
        return _GENERATED_FUNCTIONS["native_group_norm_backward"](
            g, input, mean, rstd, weight, N, C, HxW, group, mask)[which]
    shape = tuple(input.shape)
    if kind == 1:
        k = len(extra)
        dims = tuple(range(nd - k, nd))            # normalized over these
        outer = tuple(range(nd - k))                # weight/bias gradients sum over these
        x, gx = input, g
        w = weight
    else:
        # batch: statistics per channel over (N, *); group: per (sample, group) row
        if kind == 0:
            dims = (0,) + tuple(range(2, nd))
            x, gx = input, g
        else:
            N, C, HxW, group = extra
            dims = (2,)
            x, gx = input.reshape(N, group, -1), g.reshape(N, group, -1)
        outer = (0,) + tuple(range(2, nd))
        w = None if weight is None else weight.reshape((1, -1) + (1,) * (nd - 2))
    if which == 2:
        return g.sum(outer) if outer else g
    if kind == 0 and not training:
        r = (running_var + eps).rsqrt().reshape((1, -1) + (1,) * (nd - 2))
        xhat = (input - running_mean.reshape((1, -1) + (1,) * (nd - 2))) * r
        if which == 1:
            return (g * xhat).sum(outer)
        return g * r if w is None else g * w * r
    mu = x.mean(dims, keepdim=True)
    xc = x - mu
    r = ((xc * xc).mean(dims, keepdim=True) + eps).rsqrt()
    xhat = xc * r
    if which == 1:
        t = (gx * xhat).reshape(shape)
        return t.sum(outer) if outer else t
    if w is not None:
        gx = (g * w).reshape(tuple(x.shape))
    gi = r * (gx - gx.mean(dims, keepdim=True) - xhat * (gx * xhat).mean(dims, keepdim=True))
    return gi.reshape(shape)


def _nn_grad0(grads, like):
    """The first output's gradient of a multi-output node (zeros when it got none)."""
    g = grads[0]
    return _GENERATED_FUNCTIONS["zeros_like"](like) if g is None else g


# ---------------------------------------------------------------------------------------------
# normalization

cdef int _nn_vec(TensorBase t, int64_t n, str name) except -1:
    if t is not None and t._numel != n:
        raise RuntimeError(f"{name} should contain {n} elements not {t._numel}")
    return 0


cdef object _nn_batch_norm(TensorBase input, TensorBase weight, TensorBase bias,
                           TensorBase running_mean, TensorBase running_var, bint training,
                           double momentum, double eps):
    if input._ndim < 2:
        raise RuntimeError(f"batch_norm: expected an input of at least 2 dims (N, C, ...), "
                           f"but got input of size {_nn_sizes(input)}")
    cdef int64_t N = input._shape[0], C = input._shape[1], M = input._numel // max(N * C, 1)
    common_device(tuple(t for t in (input, weight, bias, running_mean, running_var)
                        if t is not None))
    _nn_float(input, "batch_norm")
    for t, name in ((weight, "weight"), (bias, "bias"), (running_mean, "running_mean"),
                    (running_var, "running_var")):
        _nn_vec(t, C, name)
        _nn_same_dtype(input, t)
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("batch_norm: running_mean and running_var must be defined in "
                           "evaluation mode")
    cdef tl_nn_args a
    cdef Device dev = input._storage.device
    cdef TensorBase x = _nn_c(input), y = _empty_like_shape(input)
    cdef TensorBase mean, rstd, rm = None, rv = None
    cdef int64_t zero = 0
    if training:
        mean = empty_tensor(1, &C, input._dtype, dev)
        rstd = empty_tensor(1, &C, input._dtype, dev)
        if running_mean is not None:
            prepare_write(running_mean, None)
            rm = _nn_c(running_mean)
        if running_var is not None:
            prepare_write(running_var, None)
            rv = _nn_c(running_var)
    else:
        mean = empty_tensor(1, &zero, input._dtype, dev)
        rstd = empty_tensor(1, &zero, input._dtype, dev)
        rm = _nn_c(running_mean)
        rv = _nn_c(running_var)
    _nn_clear(&a)
    a.n = N
    a.c = C
    a.m = M
    a.flag = training
    a.eps = eps
    a.momentum = momentum
    a.x = tensor_data(x)
    a.y = tensor_data(y)
    a.w = _nn_ptr(_nn_c(weight))
    a.b = _nn_ptr(_nn_c(bias))
    a.mean = _nn_ptr(mean) if training else NULL
    a.rstd = _nn_ptr(rstd) if training else NULL
    a.rmean = _nn_ptr(rm)
    a.rvar = _nn_ptr(rv)
    if input._numel:
        _nn_launch(x, TL_NN_BN_FWD, &a, 3 * input._numel)
    if training and rm is not None and rm is not running_mean:
        _copy_into(running_mean, rm)
    if training and rv is not None and rv is not running_var:
        _copy_into(running_var, rv)
    return (y, mean, rstd)


cdef object _nn_batch_norm_backward(TensorBase grad_out, TensorBase input, TensorBase weight,
                                    TensorBase running_mean, TensorBase running_var,
                                    TensorBase save_mean, TensorBase save_invstd, bint train,
                                    double eps, object output_mask):
    cdef int64_t N = input._shape[0], C = input._shape[1], M = input._numel // max(N * C, 1)
    mask = tuple(output_mask)
    _nn_float(input, "batch_norm_backward")
    _nn_same_dtype(input, grad_out)
    if tuple(grad_out.shape) != tuple(input.shape):
        raise RuntimeError(f"batch_norm_backward: grad_out of size {_nn_sizes(grad_out)} does "
                           f"not match input of size {_nn_sizes(input)}")
    if train and (save_mean is None or save_invstd is None):
        raise RuntimeError("batch_norm_backward: save_mean and save_invstd are needed in "
                           "training mode")
    if not train and (running_mean is None or running_var is None):
        raise RuntimeError("batch_norm_backward: running_mean and running_var are needed in "
                           "evaluation mode")
    cdef tl_nn_args a
    cdef Device dev = input._storage.device
    cdef TensorBase gi = _empty_like_shape(input) if mask[0] else None
    cdef TensorBase gw = empty_tensor(1, &C, input._dtype, dev) if mask[1] else None
    cdef TensorBase gb = empty_tensor(1, &C, input._dtype, dev) if mask[2] else None
    cdef TensorBase x = _nn_c(input), g = _nn_c(grad_out)
    _nn_clear(&a)
    a.n = N
    a.c = C
    a.m = M
    a.flag = train
    a.eps = eps
    a.x = tensor_data(x)
    a.g = tensor_data(g)
    a.w = _nn_ptr(_nn_c(weight))
    a.mean = _nn_ptr(_nn_c(save_mean)) if train else NULL
    a.rstd = _nn_ptr(_nn_c(save_invstd)) if train else NULL
    a.rmean = NULL if train else _nn_ptr(_nn_c(running_mean))
    a.rvar = NULL if train else _nn_ptr(_nn_c(running_var))
    a.y = _nn_ptr(gi)
    a.gw = _nn_ptr(gw)
    a.gb = _nn_ptr(gb)
    _nn_launch(input, TL_NN_BN_BWD, &a, 2 * input._numel)
    return (gi, gw, gb)


cdef object _nn_layer_norm(TensorBase input, tuple normalized_shape, TensorBase weight,
                           TensorBase bias, double eps):
    cdef int k = len(normalized_shape)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    ns = _nn_list(normalized_shape)
    if weight is not None and tuple(weight.shape) != normalized_shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {_nn_sizes(weight)} and normalized_shape = {ns}")
    if bias is not None and tuple(bias.shape) != normalized_shape:
        raise RuntimeError(f"Expected bias to be of same shape as normalized_shape, but got "
                           f"bias of shape {_nn_sizes(bias)} and normalized_shape = {ns}")
    if input._ndim < k or tuple(input.shape[input._ndim - k:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={ns}, expected input with shape "
                           f"[*, {ns[1:-1]}], but got input of size{_nn_sizes(input)}")
    common_device(tuple(t for t in (input, weight, bias) if t is not None))
    _nn_float(input, "LayerNormKernelImpl")
    _nn_same_dtype(input, weight)
    _nn_same_dtype(input, bias)
    cdef int64_t M = _nn_prod(normalized_shape), R = input._numel // M if M else 0
    cdef Device dev = input._storage.device
    stat_shape = tuple(input.shape[:input._ndim - k]) + (1,) * k
    cdef TensorBase x = _nn_c(input), y = _empty_like_shape(input)
    cdef TensorBase mean = _nn_empty(stat_shape, input._dtype, dev)
    cdef TensorBase rstd = _nn_empty(stat_shape, input._dtype, dev)
    cdef tl_nn_args a
    _nn_clear(&a)
    a.n = R
    a.m = M
    a.eps = eps
    a.mode = TL_NN_AFFINE_LAYER
    a.x = tensor_data(x)
    a.y = tensor_data(y)
    a.w = _nn_ptr(_nn_c(weight))
    a.b = _nn_ptr(_nn_c(bias))
    a.mean = tensor_data(mean)
    a.rstd = tensor_data(rstd)
    if R:
        _nn_launch(x, TL_NN_ROWNORM_FWD, &a, 3 * input._numel)
    return (y, mean, rstd)


cdef object _nn_layer_norm_backward(TensorBase grad_out, TensorBase input,
                                    tuple normalized_shape, TensorBase mean, TensorBase rstd,
                                    TensorBase weight, TensorBase bias, object output_mask):
    mask = tuple(output_mask)
    cdef int64_t M = _nn_prod(normalized_shape), R = input._numel // M if M else 0
    _nn_float(input, "LayerNormBackwardKernelImpl")
    _nn_same_dtype(input, grad_out)
    if tuple(grad_out.shape) != tuple(input.shape):
        raise RuntimeError(f"layer_norm_backward: grad_out of size {_nn_sizes(grad_out)} does "
                           f"not match input of size {_nn_sizes(input)}")
    cdef Device dev = input._storage.device
    cdef TensorBase gi = _empty_like_shape(input) if mask[0] else None
    cdef TensorBase gw = _nn_empty(normalized_shape, input._dtype, dev) if mask[1] else None
    cdef TensorBase gb = _nn_empty(normalized_shape, input._dtype, dev) if mask[2] else None
    cdef TensorBase x = _nn_c(input), g = _nn_c(grad_out)
    cdef tl_nn_args a
    _nn_clear(&a)
    a.n = R
    a.m = M
    a.mode = TL_NN_AFFINE_LAYER
    a.x = tensor_data(x)
    a.g = tensor_data(g)
    a.w = _nn_ptr(_nn_c(weight))
    a.mean = tensor_data(_nn_c(mean))
    a.rstd = tensor_data(_nn_c(rstd))
    a.y = _nn_ptr(gi)
    a.gw = _nn_ptr(gw)
    a.gb = _nn_ptr(gb)
    _nn_launch(input, TL_NN_ROWNORM_BWD, &a, 3 * input._numel)
    return (gi, gw, gb)


cdef object _nn_group_norm(TensorBase input, TensorBase weight, TensorBase bias, int64_t N,
                           int64_t C, int64_t HxW, int64_t group, double eps):
    if group <= 0 or C % group != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {_nn_sizes(input)} and "
                           f"num_groups={group}")
    for t, name in ((weight, "weight"), (bias, "bias")):
        if t is not None and (t._ndim != 1 or t._numel != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {_nn_sizes(t)} and "
                               f"input of shape {_nn_sizes(input)}")
    if input._numel != N * C * HxW:
        raise RuntimeError(f"Expected the input of shape {_nn_sizes(input)} to have "
                           f"N * C * HxW = {N * C * HxW} elements")
    common_device(tuple(t for t in (input, weight, bias) if t is not None))
    _nn_float(input, "GroupNormKernelImpl")
    _nn_same_dtype(input, weight)
    _nn_same_dtype(input, bias)
    cdef Device dev = input._storage.device
    cdef TensorBase x = _nn_c(input), y = _empty_like_shape(input)
    cdef TensorBase mean = _nn_empty((N, group), input._dtype, dev)
    cdef TensorBase rstd = _nn_empty((N, group), input._dtype, dev)
    cdef tl_nn_args a
    _nn_clear(&a)
    a.n = N * group
    a.m = (C // group) * HxW
    a.c = C // group
    a.groups = group
    a.hw = HxW
    a.eps = eps
    a.mode = TL_NN_AFFINE_GROUP
    a.x = tensor_data(x)
    a.y = tensor_data(y)
    a.w = _nn_ptr(_nn_c(weight))
    a.b = _nn_ptr(_nn_c(bias))
    a.mean = tensor_data(mean)
    a.rstd = tensor_data(rstd)
    if a.n:
        _nn_launch(x, TL_NN_ROWNORM_FWD, &a, 3 * input._numel)
    return (y, mean, rstd)


cdef object _nn_group_norm_backward(TensorBase grad_out, TensorBase input, TensorBase mean,
                                    TensorBase rstd, TensorBase weight, int64_t N, int64_t C,
                                    int64_t HxW, int64_t group, object output_mask):
    mask = tuple(output_mask)
    _nn_float(input, "GroupNormBackwardKernelImpl")
    _nn_same_dtype(input, grad_out)
    if tuple(grad_out.shape) != tuple(input.shape):
        raise RuntimeError(f"group_norm_backward: grad_out of size {_nn_sizes(grad_out)} does "
                           f"not match input of size {_nn_sizes(input)}")
    cdef Device dev = input._storage.device
    cdef TensorBase gi = _empty_like_shape(input) if mask[0] else None
    cdef TensorBase gw = empty_tensor(1, &C, input._dtype, dev) if mask[1] else None
    cdef TensorBase gb = empty_tensor(1, &C, input._dtype, dev) if mask[2] else None
    cdef TensorBase x = _nn_c(input), g = _nn_c(grad_out)
    cdef tl_nn_args a
    cdef uint8_t zero = 0
    _nn_clear(&a)
    a.n = N * group
    a.m = (C // group) * HxW
    a.c = C // group
    a.groups = group
    a.hw = HxW
    a.mode = TL_NN_AFFINE_GROUP
    a.x = tensor_data(x)
    a.g = tensor_data(g)
    a.w = _nn_ptr(_nn_c(weight))
    a.mean = tensor_data(_nn_c(mean))
    a.rstd = tensor_data(_nn_c(rstd))
    a.y = _nn_ptr(gi)
    a.gw = _nn_ptr(gw)
    a.gb = _nn_ptr(gb)
    if a.n:
        _nn_launch(input, TL_NN_ROWNORM_BWD, &a, 3 * input._numel)
    else:
        for t in (gw, gb):
            if t is not None:
                backend_of(<TensorBase>t).fill(<TensorBase>t, <char*>&zero, DT_BOOL)
    return (gi, gw, gb)


# ---------------------------------------------------------------------------------------------
# recurrent cells: the gate arithmetic of one LSTM / GRU step after the gate GEMMs

cdef str _nn_cell_arg(int pos, str name):
    return f"argument #{pos} '{name}'"


cdef int _nn_cell_dim(TensorBase t, int d, int pos, str name, str fn) except -1:
    if t._ndim != d:
        raise RuntimeError(f"Expected {d}-dimensional tensor, but got {t._ndim}-dimensional "
                           f"tensor for {_nn_cell_arg(pos, name)} (while checking arguments "
                           f"for {fn})")
    return 0


cdef int _nn_cell_numel(TensorBase t, int64_t n, int pos, str name, str fn) except -1:
    if t._numel != n:
        raise RuntimeError(f"Expected tensor for {_nn_cell_arg(pos, name)} to have {n} "
                           f"elements; but it actually has {t._numel} elements (while checking "
                           f"arguments for {fn})")
    return 0


cdef int _nn_cell_same(TensorBase t, TensorBase u, int pt, str nt, int pu, str nu,
                       str fn) except -1:
    if u is None or tuple(t.shape) != tuple(u.shape):
        raise RuntimeError(f"Expected tensor for {_nn_cell_arg(pt, nt)} to have same size as "
                           f"tensor for {_nn_cell_arg(pu, nu)}; but {_nn_sizes(t)} does not "
                           f"equal {'[]' if u is None else _nn_sizes(u)} (while checking "
                           f"arguments for {fn})")
    return 0


cdef int64_t _nn_cell_check(str fn, TensorBase ig, TensorBase hg, TensorBase ib, TensorBase hb,
                            int factor, TensorBase hx, str hname) except -1:
    """PyTorch's checks of a fused cell's arguments (the biases count only when input_bias
    is given); returns the hidden size."""
    _nn_cell_dim(ig, 2, 1, "input_gates", fn)
    _nn_cell_same(ig, hg, 1, "input_gates", 2, "hidden_gates", fn)
    cdef int64_t B = ig._shape[0], G = ig._shape[1]
    if ib is not None:
        _nn_cell_dim(ib, 1, 4, "input_bias", fn)
        _nn_cell_numel(ib, G, 4, "input_bias", fn)
        _nn_cell_same(ib, hb, 4, "input_bias", 5, "hidden_bias", fn)
    _nn_cell_dim(hx, 2, 3, hname, fn)
    _nn_cell_numel(hx, B * G // factor, 3, hname, fn)
    if G % factor:
        raise RuntimeError(f"{fn}: the gates' size {G} is not a multiple of {factor}")
    common_device(tuple(t for t in (ig, hg, hx, ib, hb) if t is not None))
    _nn_float(ig, fn)
    for t in (hg, hx, ib, hb):
        _nn_same_dtype(ig, t)
    return G // factor


cdef object _nn_lstm_cell(TensorBase input_gates, TensorBase hidden_gates, TensorBase cx,
                          TensorBase input_bias, TensorBase hidden_bias):
    cdef str fn = "_thnn_fused_lstm_cell"
    cdef int64_t H = _nn_cell_check(fn, input_gates, hidden_gates, input_bias, hidden_bias, 4,
                                    cx, "cx")
    cdef int64_t B = input_gates._shape[0]
    cdef bint bias = input_bias is not None
    cdef Device dev = input_gates._storage.device
    cdef TensorBase ig = _nn_c(input_gates), hg = _nn_c(hidden_gates), c = _nn_c(cx)
    cdef TensorBase ib = _nn_c(input_bias) if bias else None
    cdef TensorBase hb = _nn_c(hidden_bias) if bias else None
    cdef TensorBase hy = _nn_empty(tuple(cx.shape), input_gates._dtype, dev)
    cdef TensorBase cy = _nn_empty(tuple(cx.shape), input_gates._dtype, dev)
    cdef TensorBase ws = _nn_mat(B, 4 * H, input_gates)
    cdef tl_nn_args a
    _nn_clear(&a)
    a.n = B
    a.m = H
    a.flag = bias
    a.src[0] = tensor_data(ig)
    a.src[1] = tensor_data(hg)
    a.src[2] = tensor_data(c)
    a.src[3] = _nn_ptr(ib)
    a.src[4] = _nn_ptr(hb)
    a.dst[0] = tensor_data(hy)
    a.dst[1] = tensor_data(cy)
    a.dst[2] = tensor_data(ws)
    if B * H:
        _nn_launch(ws, TL_NN_LSTM_FWD, &a, 8 * B * H)
    return (hy, cy, ws)


cdef object _nn_gru_cell(TensorBase input_gates, TensorBase hidden_gates, TensorBase hx,
                         TensorBase input_bias, TensorBase hidden_bias):
    cdef str fn = "_thnn_fused_gru_cell"
    cdef int64_t H = _nn_cell_check(fn, input_gates, hidden_gates, input_bias, hidden_bias, 3,
                                    hx, "hx")
    cdef int64_t B = input_gates._shape[0]
    cdef bint bias = input_bias is not None
    cdef Device dev = input_gates._storage.device
    cdef TensorBase ig = _nn_c(input_gates), hg = _nn_c(hidden_gates), h = _nn_c(hx)
    cdef TensorBase ib = _nn_c(input_bias) if bias else None
    cdef TensorBase hb = _nn_c(hidden_bias) if bias else None
    cdef TensorBase hy = _nn_empty(tuple(hx.shape), input_gates._dtype, dev)
    cdef TensorBase ws = _nn_mat(B, 5 * H, input_gates)
    cdef tl_nn_args a
    _nn_clear(&a)
    a.n = B
    a.m = H
    a.flag = bias
    a.src[0] = tensor_data(ig)
    a.src[1] = tensor_data(hg)
    a.src[2] = tensor_data(h)
    a.src[3] = _nn_ptr(ib)
    a.src[4] = _nn_ptr(hb)
    a.dst[0] = tensor_data(hy)
    a.dst[1] = tensor_data(ws)
    if B * H:
        _nn_launch(ws, TL_NN_GRU_FWD, &a, 8 * B * H)
    return (hy, ws)


cdef TensorBase _nn_cell_bias_grad(TensorBase g):
    """The sum over the batch of a contiguous [B, G] gradient (in double, a fixed order)."""
    cdef int64_t G = g._shape[1]
    cdef TensorBase out = empty_tensor(1, &G, g._dtype, g._storage.device)
    cdef tl_nn_args a
    _nn_clear(&a)
    a.n = g._shape[0]
    a.c = G
    a.m = 1
    a.g = tensor_data(g)
    a.gw = tensor_data(out)
    _nn_launch(g, TL_NN_BIAS_GRAD, &a, g._numel)
    return out


cdef int _nn_cell_bwd_check(TensorBase t, int64_t n, TensorBase like, str name,
                            str fn) except -1:
    if t is None:
        return 0
    _nn_same_dtype(like, t)
    if t._numel != n:
        raise RuntimeError(f"{fn}: {name} of size {_nn_sizes(t)} does not match the "
                           f"{n} elements of the hidden state")
    return 0


cdef object _nn_lstm_cell_backward(TensorBase grad_hy, TensorBase grad_cy, TensorBase cx,
                                   TensorBase cy, TensorBase workspace, bint has_bias):
    cdef str fn = "_thnn_fused_lstm_cell_backward"
    if grad_hy is None and grad_cy is None:
        return (None, None, None)
    _nn_cell_dim(workspace, 2, 5, "workspace", fn)
    _nn_float(workspace, fn)
    cdef int64_t B = workspace._shape[0], G = workspace._shape[1], H = G // 4
    if G % 4:
        raise RuntimeError(f"{fn}: the workspace's size {G} is not a multiple of 4")
    for t, name in ((grad_hy, "grad_hy"), (grad_cy, "grad_cy"), (cx, "cx"), (cy, "cy")):
        _nn_cell_bwd_check(t, B * H, workspace, name, fn)
    common_device(tuple(t for t in (grad_hy, grad_cy, cx, cy, workspace) if t is not None))
    cdef TensorBase ghy = _nn_c(grad_hy), gcy = _nn_c(grad_cy), c = _nn_c(cx), y = _nn_c(cy)
    cdef TensorBase ws = _nn_c(workspace)
    cdef TensorBase gg = _nn_mat(B, G, workspace)
    cdef TensorBase gcx = _nn_empty(tuple(cx.shape), workspace._dtype, workspace._storage.device)
    cdef tl_nn_args a
    _nn_clear(&a)
    a.n = B
    a.m = H
    a.src[0] = _nn_ptr(ghy)
    a.src[1] = _nn_ptr(gcy)
    a.src[2] = tensor_data(c)
    a.src[3] = tensor_data(y)
    a.src[4] = tensor_data(ws)
    a.dst[0] = tensor_data(gg)
    a.dst[1] = tensor_data(gcx)
    if B * H:
        _nn_launch(ws, TL_NN_LSTM_BWD, &a, 8 * B * H)
    return (gg, gcx, _nn_cell_bias_grad(gg) if has_bias else None)


cdef object _nn_gru_cell_backward(TensorBase grad_hy, TensorBase workspace, bint has_bias):
    cdef str fn = "_thnn_fused_gru_cell_backward"
    _nn_cell_dim(workspace, 2, 2, "workspace", fn)
    _nn_float(workspace, fn)
    cdef int64_t B = workspace._shape[0], W = workspace._shape[1], H = W // 5
    if W % 5:
        raise RuntimeError(f"{fn}: the workspace's size {W} is not a multiple of 5")
    _nn_cell_bwd_check(grad_hy, B * H, workspace, "grad_hy", fn)
    common_device((grad_hy, workspace))
    cdef Device dev = workspace._storage.device
    cdef TensorBase g = _nn_c(grad_hy), ws = _nn_c(workspace)
    cdef TensorBase gi = _nn_mat(B, 3 * H, workspace), gh = _nn_mat(B, 3 * H, workspace)
    cdef TensorBase ghx = _nn_empty(tuple(grad_hy.shape), workspace._dtype, dev)
    cdef tl_nn_args a
    _nn_clear(&a)
    a.n = B
    a.m = H
    a.src[0] = tensor_data(g)
    a.src[1] = tensor_data(ws)
    a.dst[0] = tensor_data(gi)
    a.dst[1] = tensor_data(gh)
    a.dst[2] = tensor_data(ghx)
    if B * H:
        _nn_launch(ws, TL_NN_GRU_BWD, &a, 8 * B * H)
    if not has_bias:
        return (gi, gh, ghx, None, None)
    return (gi, gh, ghx, _nn_cell_bias_grad(gi), _nn_cell_bias_grad(gh))


# a node's gradients for its inputs still to come (see _nn_rnn_cell_grad)
cdef dict _NN_CELL_GRADS = {}


def _nn_rnn_cell_grad(Node node, int kind, int which, tuple grads, ig, hg, h, ib, hb, cy, ws):
    """The gradient of a fused cell (kind 0: LSTM, 1: GRU) for its input ``which``
    (input_gates, hidden_gates, cx/hx, input_bias, hidden_bias). One backward pass computes
    them all: it is kept until the node's last input that needs a gradient has taken its
    own. While a graph of the gradient is being built (create_graph) the pass is composed of
    recorded ops over the recomputed gates instead, so the double backward works too."""
    entry = _NN_CELL_GRADS.pop(id(node), None)
    cdef tuple got
    if entry is not None and entry[0] is node:
        got = entry[1]
    else:
        got = _nn_cell_grads(kind, grads, ig, hg, h, ib, hb, cy, ws)
    cdef int j
    for j in range(which + 1, 5):
        if node.next_edges[j][0] is not None:
            _NN_CELL_GRADS[id(node)] = (node, got)
            break
    return got[which]


cdef tuple _nn_cell_grads(int kind, tuple grads, ig, hg, h, ib, hb, cy, ws):
    cdef bint bias = ib is not None
    ghy = grads[0]
    if kind == 0:
        gcy = grads[1] if len(grads) > 1 else None
        if ghy is None and gcy is None:
            return (None,) * 5
        if not tl_grad_enabled:
            gg, gcx, gb = _GENERATED_FUNCTIONS["_thnn_fused_lstm_cell_backward"](
                ghy, gcy, h, cy, ws, bias)
            return (gg, gg, gcx, gb, gb)
        return _nn_lstm_grad_graph(ghy, gcy, ig, hg, h, ib, hb)
    if ghy is None:
        return (None,) * 5
    if not tl_grad_enabled:
        return tuple(_GENERATED_FUNCTIONS["_thnn_fused_gru_cell_backward"](ghy, ws, bias))
    return _nn_gru_grad_graph(ghy, ig, hg, h, ib, hb)


cdef tuple _nn_lstm_grad_graph(ghy, gcy, ig, hg, cx, ib, hb):
    gates = ig + hg if ib is None else ig + hg + ib + hb
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    c = cx.reshape(i.shape)
    tc = (f * c + i * g).tanh()
    gc = None if gcy is None else gcy.reshape(i.shape)
    if ghy is not None:
        gh = ghy.reshape(i.shape)
        t = gh * o * (1 - tc * tc)
        gc = t if gc is None else gc + t
        go = gh * tc * o * (1 - o)
    else:
        go = _GENERATED_FUNCTIONS["zeros_like"](o)
    gates_grad = _GENERATED_FUNCTIONS["cat"](
        [gc * g * i * (1 - i), gc * c * f * (1 - f), gc * i * (1 - g * g), go], 1)
    gb = gates_grad.sum(0) if ib is not None else None
    return (gates_grad, gates_grad, (gc * f).reshape(cx.shape), gb, gb)


cdef tuple _nn_gru_grad_graph(ghy, ig, hg, hx, ib, hb):
    xg = ig if ib is None else ig + ib
    hgs = hg if ib is None else hg + hb
    xr, xz, xn = xg.chunk(3, 1)
    hr, hz, hn = hgs.chunk(3, 1)
    r = (xr + hr).sigmoid()
    z = (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    g = ghy.reshape(n.shape)
    gn = g * (1 - z) * (1 - n * n)
    gz = g * (hx.reshape(n.shape) - n) * z * (1 - z)
    gr = gn * hn * r * (1 - r)
    cat = _GENERATED_FUNCTIONS["cat"]
    gi = cat([gr, gz, gn], 1)
    gh = cat([gr, gz, gn * r], 1)
    ghx = (g * z).reshape(hx.shape)
    if ib is None:
        return (gi, gh, ghx, None, None)
    return (gi, gh, ghx, gi.sum(0), gh.sum(0))


# ---------------------------------------------------------------------------------------------
# cross entropy: log_softmax and nll_loss in one pass over the logits

cdef int _nn_xent_check(TensorBase input, TensorBase target, TensorBase weight,
                        int64_t reduction, str fn) except -1:
    if input._ndim != 2:
        raise RuntimeError(f"{fn}: expected input of 2 dimensions (batch, classes), got "
                           f"{_nn_sizes(input)}")
    if target._ndim != 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target.shape[0] != input.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0]}).")
    if target._dtype.code != DT_INT64:
        raise RuntimeError(f"expected target dtype to be Long, but got "
                           f"{_NN_ST[target._dtype.code]}")
    if reduction < 0 or reduction > 2:
        raise ValueError(f"{fn}: reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction}")
    common_device(tuple(t for t in (input, target, weight) if t is not None))
    _nn_float(input, fn)
    _nn_same_dtype(input, weight)
    if weight is not None and (weight._ndim != 1 or weight._numel != input.shape[1]):
        raise RuntimeError(f"weight tensor should be defined either for all {input.shape[1]} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{_nn_sizes(weight)}")
    return 0


cdef int _nn_xent_bad(TensorBase target, int64_t C, int64_t ignore_index) except -1:
    """Raise PyTorch's error for the first target outside [0, C) (a kernel reported one)."""
    for t in target.tolist():
        if t != ignore_index and not 0 <= t < C:
            raise IndexError(f"Target {t} is out of bounds.")
    raise IndexError("Target is out of bounds.")


cdef object _nn_cross_entropy(TensorBase input, TensorBase target, TensorBase weight,
                              int64_t reduction, int64_t ignore_index, double label_smoothing):
    _nn_xent_check(input, target, weight, reduction, "cross_entropy")
    cdef int64_t N = input.shape[0], C = input.shape[1]
    cdef Device dev = input._storage.device
    cdef TensorBase x = _nn_c(input), t = _nn_c(target), w = _nn_c(weight)
    cdef TensorBase rows = _nn_empty((N,), input._dtype, dev)
    cdef TensorBase lse = _nn_empty((N,), input._dtype, dev)
    cdef TensorBase rw = _nn_empty((N,), input._dtype, dev)
    cdef TensorBase denom = _nn_empty((), input._dtype, dev)
    cdef TensorBase out = rows if reduction == 0 else _nn_empty((), input._dtype, dev)
    cdef tl_nn_args a
    _nn_clear(&a)
    a.n = N
    a.m = C
    a.flag = <int>reduction
    a.ignore_index = ignore_index
    a.smoothing = label_smoothing
    a.x = tensor_data(x)
    a.idx = <int64_t*>tensor_data(t)
    a.w = _nn_ptr(w)
    a.dst[0] = tensor_data(rows)
    a.dst[1] = tensor_data(lse)
    a.dst[2] = tensor_data(rw)
    a.gw = NULL if reduction == 0 else tensor_data(out)
    a.gb = tensor_data(denom)
    if _nn_launch(x, TL_NN_XENT_FWD, &a, 3 * N * C) == 1:
        _nn_xent_bad(t, C, ignore_index)
    return (out, lse, denom)


cdef object _nn_cross_entropy_backward(TensorBase grad, TensorBase input, TensorBase target,
                                       TensorBase weight, int64_t reduction,
                                       int64_t ignore_index, double label_smoothing,
                                       TensorBase lse, TensorBase denom):
    _nn_xent_check(input, target, weight, reduction, "cross_entropy_backward")
    cdef int64_t N = input.shape[0], C = input.shape[1]
    _nn_same_dtype(input, grad)
    if grad._numel != (N if reduction == 0 else 1):
        raise RuntimeError(f"cross_entropy_backward: grad of size {_nn_sizes(grad)} does not "
                           f"match the loss of input {_nn_sizes(input)}")
    if lse._numel != N or denom._numel != 1:
        raise RuntimeError("cross_entropy_backward: lse must hold one value per row and denom "
                           "one value")
    _nn_same_dtype(input, lse)
    _nn_same_dtype(input, denom)
    common_device((input, grad, lse, denom))
    cdef TensorBase x = _nn_c(input), t = _nn_c(target), g = _nn_c(grad)
    cdef TensorBase gi = _empty_like_shape(input)
    cdef tl_nn_args a
    _nn_clear(&a)
    a.n = N
    a.m = C
    a.flag = <int>reduction
    a.ignore_index = ignore_index
    a.smoothing = label_smoothing
    a.x = tensor_data(x)
    a.g = tensor_data(g)
    a.idx = <int64_t*>tensor_data(t)
    a.w = _nn_ptr(_nn_c(weight))
    a.src[0] = tensor_data(_nn_c(lse))
    a.rstd = tensor_data(_nn_c(denom))
    a.y = tensor_data(gi)
    _nn_launch(x, TL_NN_XENT_BWD, &a, 3 * N * C)
    return gi


def _nn_xent_grad(grads, input, target, weight, reduction, ignore_index, label_smoothing,
                  lse, denom):
    """The gradient of ``_nn_cross_entropy`` for its input: the fused backward op, or, while
    a graph of the gradient is being built (create_graph), the same formula in recorded ops
    (softmax of the input), so the double backward works too."""
    g = _nn_grad0(grads, denom if reduction else lse)
    if not tl_grad_enabled:
        return _GENERATED_FUNCTIONS["_nn_cross_entropy_backward"](
            g, input, target, weight, reduction, ignore_index, label_smoothing, lse, denom)
    F = _GENERATED_FUNCTIONS
    C = input.shape[1]
    keep = target != ignore_index
    safe = F["where"](keep, target, 0)
    onehot = F["zeros_like"](input).scatter(1, safe.unsqueeze(1), 1.0)
    wt = keep.to(input.dtype) if weight is None else weight[safe] * keep
    wall = C if weight is None else weight.sum()
    coef = wt * (1 - label_smoothing) + (label_smoothing / C) * wall * keep
    smooth = (label_smoothing / C) * (keep.to(input.dtype).unsqueeze(1)
                                      if weight is None else keep.unsqueeze(1) * weight)
    gi = F["softmax"](input, 1) * coef.unsqueeze(1) - smooth \
        - onehot * (wt * (1 - label_smoothing)).unsqueeze(1)
    if reduction == 0:
        return gi * g.unsqueeze(1)
    return gi * (g / denom if reduction == 1 else g)


# ---------------------------------------------------------------------------------------------
# attention weights: softmax(scores * scale + mask) per row, with causal and bool/additive masks

cdef object _nn_masked_softmax(TensorBase input, TensorBase mask, double scale, bint causal,
                               bint zero_dead_rows):
    cdef int nd = input._ndim, d
    if nd < 1 or nd > 7:
        raise RuntimeError(f"_nn_masked_softmax: expected scores of 1 to 7 dimensions, got "
                           f"{_nn_sizes(input)}")
    if causal and nd < 2:
        raise RuntimeError("_nn_masked_softmax: a causal mask needs scores of at least 2 "
                           "dimensions (..., L, S)")
    _nn_float(input, "masked_softmax")
    cdef int64_t st[MAX_DIMS]
    cdef tl_nn_args a
    _nn_clear(&a)
    if mask is not None:
        common_device((input, mask))
        if mask._dtype.code == DT_BOOL:
            a.mode = 1
        elif mask._dtype is input._dtype:
            a.mode = 2
        else:
            raise RuntimeError(f"Expected attn_mask dtype to be bool or to match the scores' "
                               f"dtype, but got {_NN_ST[mask._dtype.code]} and "
                               f"{_NN_ST[input._dtype.code]}")
        broadcast_strides(mask._ndim, mask._shape, mask._strides, nd, input._shape, st)
        a.b = tensor_data(mask)
        a.rnd = nd - 1
        for d in range(nd - 1):
            a.rdims[d] = input._shape[d]
            a.rstr[d] = st[d]
        a.mcol = st[nd - 1]
    cdef TensorBase x = _nn_c(input), y = _empty_like_shape(input)
    cdef int64_t M = input._shape[nd - 1]
    a.n = input._numel // M if M else 0
    a.m = M
    a.out[0] = input._shape[nd - 2] if nd >= 2 else 1
    a.flag = (1 if causal else 0) | (2 if zero_dead_rows else 0)
    a.momentum = scale
    a.x = tensor_data(x)
    a.y = tensor_data(y)
    if a.n:
        _nn_launch(x, TL_NN_MSOFTMAX, &a, 3 * input._numel)
    return y


cdef object _nn_masked_softmax_backward(TensorBase grad_output, TensorBase output, double scale):
    _nn_float(output, "masked_softmax_backward")
    _nn_same_dtype(output, grad_output)
    if tuple(grad_output.shape) != tuple(output.shape):
        raise RuntimeError(f"masked_softmax_backward: grad_output of size "
                           f"{_nn_sizes(grad_output)} does not match output of size "
                           f"{_nn_sizes(output)}")
    common_device((grad_output, output))
    cdef TensorBase y = _nn_c(output), g = _nn_c(grad_output), gx = _empty_like_shape(output)
    cdef int64_t M = output.shape[-1] if output._ndim else 1
    cdef tl_nn_args a
    _nn_clear(&a)
    a.n = output._numel // M if M else 0
    a.m = M
    a.momentum = scale
    a.src[0] = tensor_data(y)
    a.g = tensor_data(g)
    a.dst[0] = tensor_data(gx)
    if a.n:
        _nn_launch(y, TL_NN_MSOFTMAX_BWD, &a, 2 * output._numel)
    return gx


def _nn_msm_grad(grad, result, scale):
    """The gradient of ``_nn_masked_softmax`` for its scores: the fused backward op, or,
    while a graph of the gradient is being built, the same formula in recorded ops."""
    if not tl_grad_enabled:
        return _GENERATED_FUNCTIONS["_nn_masked_softmax_backward"](grad, result, scale)
    return (grad - (grad * result).sum(-1, keepdim=True)) * result * scale
