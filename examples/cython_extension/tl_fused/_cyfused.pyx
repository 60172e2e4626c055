# cython: boundscheck=False, wraparound=False, cdivision=True
"""tl_fused's Cython half: tensors in, tensors out, no Python call in the inner loops."""
from cython cimport floating
from cython.parallel cimport prange
from libc.math cimport exp
from libc.stdint cimport int64_t

cimport tensorlib as ctl

def built_against():
    """The (ABI, API) versions of the tensorlib this module was compiled against."""
    return (ctl.ABI_VERSION, ctl.API_VERSION)


cdef str _shape_str(ctl.Tensor t):
    return "[" + ", ".join([str(ctl.shape(t)[i]) for i in range(ctl.ndim(t))]) + "]"


cdef int _check_float_cpu(ctl.Tensor t, str fn) except -1:
    if ctl.device(t) != ctl.DEVICE_CPU:
        raise RuntimeError(f"{fn}: expected a CPU tensor")
    if ctl.dtype(t) != ctl.DT_FLOAT32 and ctl.dtype(t) != ctl.DT_FLOAT64:
        raise TypeError(f"{fn}: expected float32 or float64, got dtype code {ctl.dtype(t)}")
    return 0


cdef int _check_pair(ctl.Tensor x, ctl.Tensor y, str fn) except -1:
    cdef int i
    cdef bint same = ctl.ndim(x) == ctl.ndim(y)
    _check_float_cpu(x, fn)
    _check_float_cpu(y, fn)
    if ctl.dtype(x) != ctl.dtype(y):
        raise TypeError(f"{fn}: x and y must have one dtype (codes {ctl.dtype(x)} and "
                        f"{ctl.dtype(y)})")
    i = 0
    while same and i < ctl.ndim(x):
        same = ctl.shape(x)[i] == ctl.shape(y)[i]
        i += 1
    if not same:
        raise ValueError(f"{fn}: shapes {_shape_str(x)} and {_shape_str(y)} differ")
    return 0


cdef void _flat(floating* out, const floating* x, const floating* y, floating a,
                int64_t n) noexcept nogil:
    cdef int64_t i
    for i in range(n):
        out[i] = a * x[i] + y[i]


cdef void _flat_any(ctl.Tensor out, ctl.Tensor x, ctl.Tensor y, double a) noexcept nogil:
    if ctl.dtype(x) == ctl.DT_FLOAT32:
        _flat(<float*>ctl.data(out), <const float*>ctl.data(x), <const float*>ctl.data(y),
              <float>a, ctl.numel(x))
    else:
        _flat(<double*>ctl.data(out), <const double*>ctl.data(x), <const double*>ctl.data(y), a,
              ctl.numel(x))


def scale_add(ctl.Tensor x not None, ctl.Tensor y not None, double a):
    """``a * x + y`` in one pass: a raw loop over the data pointers (inputs made contiguous
    first if they are not). A new tensor from tensorlib's allocator.

    >>> import tensorlib
    >>> scale_add(tensorlib.ones(2), tensorlib.ones(2), 3.0).tolist()
    [4.0, 4.0]
    """
    _check_pair(x, y, "scale_add")
    if not ctl.is_contiguous(x):
        x = x.contiguous()
    if not ctl.is_contiguous(y):
        y = y.contiguous()
    cdef ctl.Tensor out = ctl.empty(ctl.ndim(x), ctl.shape(x), ctl.dtype(x), ctl.DEVICE_CPU)
    if ctl.numel(x) < 32768:      # releasing the GIL costs more than a small loop
        _flat_any(out, x, y, a)
    else:
        with nogil:
            _flat_any(out, x, y, a)
    return out


cdef void _rows(floating* out, const floating* x, int64_t xs0, int64_t xs1, const floating* y,
                int64_t ys0, int64_t ys1, floating a, int64_t rows, int64_t cols) noexcept nogil:
    cdef int64_t i, j
    for i in prange(rows, schedule="static"):
        for j in range(cols):
            out[i * cols + j] = a * x[i * xs0 + j * xs1] + y[i * ys0 + j * ys1]


def scale_add_rows(ctl.Tensor x not None, ctl.Tensor y not None, double a):
    """``a * x + y`` for 2-D tensors of any strides: a ``prange`` over the rows, without the
    GIL (OpenMP threads).

    >>> import tensorlib
    >>> scale_add_rows(tensorlib.ones(2, 2).t(), tensorlib.zeros(2, 2), 2.0).tolist()
    [[2.0, 2.0], [2.0, 2.0]]
    """
    _check_pair(x, y, "scale_add_rows")
    if ctl.ndim(x) != 2:
        raise ValueError(f"scale_add_rows: expected 2-D tensors, got shape {_shape_str(x)}")
    cdef ctl.Tensor out = ctl.empty(2, ctl.shape(x), ctl.dtype(x), ctl.DEVICE_CPU)
    cdef int64_t rows = ctl.shape(x)[0], cols = ctl.shape(x)[1]
    cdef const int64_t* xs = ctl.strides(x)
    cdef const int64_t* ys = ctl.strides(y)
    with nogil:
        if ctl.dtype(x) == ctl.DT_FLOAT32:
            _rows(<float*>ctl.data(out), <const float*>ctl.data(x), xs[0], xs[1],
                  <const float*>ctl.data(y), ys[0], ys[1], <float>a, rows, cols)
        else:
            _rows(<double*>ctl.data(out), <const double*>ctl.data(x), xs[0], xs[1],
                  <const double*>ctl.data(y), ys[0], ys[1], a, rows, cols)
    return out


def scale_add_(ctl.Tensor x not None, ctl.Tensor y not None, double a):
    """``x = a * x + y`` in place (contiguous tensors), through tensorlib's write door: its
    checks (a leaf that requires grad raises, as in PyTorch) and the version bump autograd
    relies on. Returns ``x``.

    >>> import tensorlib
    >>> x = tensorlib.ones(2); v = x._version; _ = scale_add_(x, x, 1.0)
    >>> x.tolist(), x._version - v
    ([2.0, 2.0], 1)
    """
    _check_pair(x, y, "scale_add_")
    if not (ctl.is_contiguous(x) and ctl.is_contiguous(y)):
        raise ValueError("scale_add_: x and y must be contiguous")
    ctl.prepare_write(x)
    with nogil:
        _flat_any(x, x, y, a)
    return x


cdef void _softmax(floating* out, const floating* x, int64_t xs0, int64_t xs1, double* tmp,
                   int64_t rows, int64_t cols) noexcept nogil:
    cdef int64_t i, j
    cdef double m, s
    for i in prange(rows, schedule="static"):
        m = x[i * xs0]
        for j in range(1, cols):
            if x[i * xs0 + j * xs1] > m:
                m = x[i * xs0 + j * xs1]
        s = 0
        for j in range(cols):
            tmp[i * cols + j] = exp(x[i * xs0 + j * xs1] - m)
            s = s + tmp[i * cols + j]
        for j in range(cols):
            out[i * cols + j] = <floating>(tmp[i * cols + j] / s)


def softmax_rows(ctl.Tensor x not None):
    """Softmax over the last dim of a 2-D tensor, the exponentials kept in float64 in scratch
    memory from tensorlib's allocator (counted; the memory profiler sees it as ``temporary``
    memory made by ``softmax_rows``).

    >>> import tensorlib
    >>> softmax_rows(tensorlib.zeros(1, 4)).tolist()
    [[0.25, 0.25, 0.25, 0.25]]
    """
    _check_float_cpu(x, "softmax_rows")
    if ctl.ndim(x) != 2 or ctl.shape(x)[1] == 0:
        raise ValueError(f"softmax_rows: expected a 2-D tensor with columns, got shape "
                         f"{_shape_str(x)}")
    cdef int64_t rows = ctl.shape(x)[0], cols = ctl.shape(x)[1]
    cdef ctl.Tensor out = ctl.empty(2, ctl.shape(x), ctl.dtype(x), ctl.DEVICE_CPU)
    cdef ctl.Storage tmp = ctl.scratch(rows * cols * sizeof(double), ctl.ROLE_TEMPORARY,
                                       ctl.DEVICE_CPU, b"softmax_rows")
    cdef double* t = <double*>ctl.storage_data(tmp)
    cdef const int64_t* xs = ctl.strides(x)
    with nogil:
        if ctl.dtype(x) == ctl.DT_FLOAT32:
            _softmax(<float*>ctl.data(out), <const float*>ctl.data(x), xs[0], xs[1], t, rows, cols)
        else:
            _softmax(<double*>ctl.data(out), <const double*>ctl.data(x), xs[0], xs[1], t, rows,
                     cols)
    return out       # the scratch storage is given back to the allocator here


def hold_scratch(int64_t nbytes):
    """``nbytes`` of scratch memory (role ``temporary``, op ``hold_scratch``) as a Storage
    that gives it back when it dies."""
    s = ctl.scratch(nbytes, ctl.ROLE_TEMPORARY, ctl.DEVICE_CPU, b"hold_scratch")
    assert ctl.storage_nbytes(s) == nbytes
    return s


def wrap(double[::1] buf not None, owner):
    """A float64 tensor over the memory of ``buf`` (a C-contiguous buffer of doubles that
    ``owner`` keeps alive, such as a NumPy array passed as both): no copy, borrowed memory
    (not counted by tensorlib.memory), ``owner`` alive as long as the tensor is."""
    cdef int64_t n = buf.shape[0]
    return ctl.from_pointer(&buf[0] if n else NULL, 1, &n, NULL, ctl.DT_FLOAT64, owner)


def wrap_address(size_t address, shape, strides, int dtype, owner):
    """``from_pointer`` on a raw address (for testing its checks)."""
    cdef int64_t sh[8]
    cdef int64_t st[8]
    cdef int i, nd = len(shape)
    if nd > 8:
        raise ValueError("wrap_address: at most 8 dims")
    for i in range(nd):
        sh[i] = shape[i]
        st[i] = strides[i] if strides is not None else 0
    return ctl.from_pointer(<void*>address, nd, sh, st if strides is not None else NULL, dtype,
                            owner)


def identity(ctl.Tensor x not None):
    """Returns ``x``: the cost of passing a tensor in and out."""
    return x


def info(ctl.Tensor t not None):
    """What the accessors say about ``t`` (read without the GIL)."""
    cdef int nd, i
    cdef int64_t n, v
    cdef int code, isz, dev
    cdef bint contig, rg
    cdef size_t addr
    with nogil:
        nd = ctl.ndim(t)
        n = ctl.numel(t)
        code = ctl.dtype(t)
        isz = ctl.itemsize(t)
        dev = ctl.device(t)
        contig = ctl.is_contiguous(t)
        rg = ctl.requires_grad(t)
        v = ctl.version(t)
        addr = <size_t>ctl.data(t)
    return dict(ndim=nd, shape=[ctl.shape(t)[i] for i in range(nd)],
                strides=[ctl.strides(t)[i] for i in range(nd)],
                stride_bytes=[ctl.stride_bytes(t, i) for i in range(nd)], numel=n, dtype=code,
                itemsize=isz, device=dev, contiguous=contig, requires_grad=rg, version=v,
                data=addr)


def bump(ctl.Tensor t not None):
    """Bump ``t``'s version counter without the GIL."""
    with nogil:
        ctl.bump_version(t)


def empty_like(ctl.Tensor t not None):
    """``ctl.empty_like``: uninitialized, ``t``'s shape, dtype, device and dense layout."""
    return ctl.empty_like(t)


def empty(shape, int dtype, int device):
    """``ctl.empty`` with a shape sequence."""
    cdef int64_t sh[8]
    cdef int i, nd = len(shape)
    if nd > 8:
        raise ValueError("empty: at most 8 dims")
    for i in range(nd):
        sh[i] = shape[i]
    return ctl.empty(nd, sh, dtype, device)
