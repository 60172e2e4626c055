# The iterator: broadcasting, coalescing and the typed copy/cast table, on raw descriptors
# (pointer, shape, strides in elements, dtype code) so it knows nothing of TensorBase.
# Every copy in tensorlib (copy_, clone, contiguous, to, cat ...) ends in copy_cast; the
# elementwise and reduction drivers build on the same coalescing.
# (included into tensor.pyx; its cdef functions are declared in tensor.pxd)
from libc.stdlib cimport qsort

cdef extern from "cpu_copy.h" nogil:
    void tl_copy_nd(int ndim, const int64_t* shape, char* dst, const int64_t* dst_strides,
                    int dst_dtype, const char* src, const int64_t* src_strides, int src_dtype)

cdef int ITEMSIZE[10]
ITEMSIZE[:] = [1, 1, 1, 2, 4, 8, 2, 2, 4, 8]

# Copies above this many elements release the GIL.


cdef str shape_str(int ndim, const int64_t* shape):
    return "[" + ", ".join([str(shape[i]) for i in range(ndim)]) + "]"


cdef int broadcast_shapes(int nda, const int64_t* a, int ndb, const int64_t* b, int64_t* out) except -1:
    """PyTorch broadcasting: align from the right; sizes must match or one of them be 1."""
    cdef int nd = nda if nda > ndb else ndb
    cdef int i
    cdef int64_t sa, sb
    for i in range(nd - 1, -1, -1):     # from the last dim, so the message names the same dim as PyTorch's
        sa = a[nda - nd + i] if i >= nd - nda else 1
        sb = b[ndb - nd + i] if i >= nd - ndb else 1
        if sa == sb or sb == 1:
            out[i] = sa
        elif sa == 1:
            out[i] = sb
        else:
            raise RuntimeError(
                f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at non-singleton "
                f"dimension {i}: shapes {shape_str(nda, a)} and {shape_str(ndb, b)} cannot be broadcast")
    return nd


cdef int broadcast_strides(int nd_src, const int64_t* src_shape, const int64_t* src_strides,
                           int nd_dst, const int64_t* dst_shape, int64_t* out_strides) except -1:
    """Strides that read ``src`` as if expanded to ``dst_shape`` (0 along broadcast dims)."""
    cdef int i, j
    if nd_src > nd_dst:
        raise RuntimeError(f"source of shape {shape_str(nd_src, src_shape)} cannot be broadcast "
                           f"to {shape_str(nd_dst, dst_shape)}")
    for i in range(nd_dst):
        j = i - (nd_dst - nd_src)
        if j < 0:
            out_strides[i] = 0
        elif src_shape[j] == dst_shape[i]:
            out_strides[i] = src_strides[j] if dst_shape[i] != 1 else 0
        elif src_shape[j] == 1:
            out_strides[i] = 0
        else:
            raise RuntimeError(
                f"The expanded size of the tensor ({dst_shape[i]}) must match the existing size "
                f"({src_shape[j]}) at non-singleton dimension {i}.  Target sizes: "
                f"{shape_str(nd_dst, dst_shape)}.  Tensor sizes: {shape_str(nd_src, src_shape)}")
    return 0


cdef int _by_dst_stride_desc(const void* pa, const void* pb) noexcept nogil:
    cdef const DimInfo* a = <const DimInfo*>pa
    cdef const DimInfo* b = <const DimInfo*>pb
    cdef int64_t sa = a.dst_stride if a.dst_stride >= 0 else -a.dst_stride
    cdef int64_t sb = b.dst_stride if b.dst_stride >= 0 else -b.dst_stride
    if sa != sb:
        return -1 if sa > sb else 1
    sa = a.src_stride if a.src_stride >= 0 else -a.src_stride
    sb = b.src_stride if b.src_stride >= 0 else -b.src_stride
    if sa != sb:
        return -1 if sa > sb else 1
    return 0


cdef int copy_cast(int ndim, const int64_t* shape,
                   char* dst, const int64_t* dst_strides, int dst_dtype,
                   const char* src, const int64_t* src_strides, int src_dtype) except -1:
    """Copy ``src`` into ``dst`` (same shape; strides in elements), converting dtypes.

    Dims are put in the destination's memory order, size-1 dims dropped and adjacent dims
    merged wherever both operands allow, so most copies become one long inner loop.
    """
    cdef DimInfo dims[MAX_DIMS]
    cdef int64_t cshape[MAX_DIMS]
    cdef int64_t cdst[MAX_DIMS]
    cdef int64_t csrc[MAX_DIMS]
    cdef int i, n = 0
    cdef int64_t numel = 1
    cdef int dsz = ITEMSIZE[dst_dtype], ssz = ITEMSIZE[src_dtype]
    for i in range(ndim):
        if shape[i] == 0:
            return 0
        numel *= shape[i]
        if shape[i] != 1:
            dims[n].size = shape[i]
            dims[n].dst_stride = dst_strides[i]
            dims[n].src_stride = src_strides[i]
            n += 1
    if n > 1:
        qsort(dims, n, sizeof(DimInfo), _by_dst_stride_desc)
    # merge dim i into the running outer dim when both strides line up
    cdef int m = 0
    for i in range(n):
        if m > 0 and cdst[m - 1] == dims[i].dst_stride * dims[i].size \
                and csrc[m - 1] == dims[i].src_stride * dims[i].size:
            cshape[m - 1] *= dims[i].size
            cdst[m - 1] = dims[i].dst_stride
            csrc[m - 1] = dims[i].src_stride
        else:
            cshape[m] = dims[i].size
            cdst[m] = dims[i].dst_stride
            csrc[m] = dims[i].src_stride
            m += 1
    for i in range(m):
        cdst[i] *= dsz
        csrc[i] *= ssz
    if numel >= NOGIL_THRESHOLD:
        with nogil:
            tl_copy_nd(m, cshape, dst, cdst, dst_dtype, src, csrc, src_dtype)
    else:
        tl_copy_nd(m, cshape, dst, cdst, dst_dtype, src, csrc, src_dtype)
    return 0


cdef bint has_internal_overlap(int ndim, const int64_t* shape, const int64_t* strides) noexcept:
    """True when two elements certainly share memory (a 0 stride on a dim of size > 1); never
    for a tensor without elements (PyTorch counts it as dense)."""
    cdef int i
    for i in range(ndim):
        if shape[i] == 0:
            return False
    for i in range(ndim):
        if strides[i] == 0 and shape[i] > 1:
            return True
    return False


cdef bint is_non_overlapping_and_dense(int ndim, const int64_t* shape, const int64_t* strides) noexcept:
    """True when the elements exactly tile a contiguous range (some permutation of dims)."""
    cdef DimInfo dims[MAX_DIMS]
    cdef int i, n = 0
    cdef int64_t expected = 1
    for i in range(ndim):
        if shape[i] == 0:
            return True
        if shape[i] != 1:
            dims[n].size = shape[i]
            dims[n].dst_stride = strides[i]
            dims[n].src_stride = 0
            n += 1
    qsort(dims, n, sizeof(DimInfo), _by_dst_stride_desc)
    for i in range(n - 1, -1, -1):
        if dims[i].dst_stride != expected:
            return False
        expected *= dims[i].size
    return True


cdef void extent(int ndim, const int64_t* shape, const int64_t* strides, int64_t* lo, int64_t* hi) noexcept:
    """Element offsets [lo, hi] spanned by a strided array (relative to its first element)."""
    cdef int i
    lo[0] = 0
    hi[0] = 0
    for i in range(ndim):
        if shape[i] == 0:
            lo[0] = 0
            hi[0] = -1
            return
        if strides[i] >= 0:
            hi[0] += strides[i] * (shape[i] - 1)
        else:
            lo[0] += strides[i] * (shape[i] - 1)
