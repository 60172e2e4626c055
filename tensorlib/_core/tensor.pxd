# Published Cython interface of tensorlib tensors: `cimport` this to reach tensor data at C
# speed (see tensorlib.get_include()). Append-only: Cython does not check the layout of cdef
# classes across modules, so never reorder or remove a declaration; add new ones at the end.
from libc.stdint cimport int64_t
from tensorlib._core.dtype cimport dtype as DType
from tensorlib._core.allocator cimport Storage, device as Device

cdef enum:
    SMALL_DIMS = 6          # shapes/strides up to this rank live inside the object
    MAX_DIMS = 64           # as NumPy 2

cdef class VersionCounter:
    """Shared by a tensor and all its views; bumped by every write."""
    cdef public int64_t version

cdef class TensorBase:
    cdef Storage _storage
    cdef int64_t _offset            # storage offset, in elements
    cdef int _ndim
    cdef int64_t* _shape            # points into _small, or to a malloc'd block for big ranks
    cdef int64_t* _strides          # in elements
    cdef int64_t _small[2 * SMALL_DIMS]
    cdef int64_t _numel             # cached at creation
    cdef DType _dtype
    cdef bint _contiguous           # cached at creation (size-1 dims never break it)
    cdef VersionCounter _vc
    cdef TensorBase _view_base      # the root tensor a view was made from; never a chain
    cdef object _size_cache         # the tensorlib.Size, built on first use
    # autograd state
    cdef bint _requires_grad
    cdef object _grad
    cdef object _grad_fn
    cdef object _autograd_meta      # per-tensor extras used by the autograd layer
    cdef object __weakref__


cdef inline char* tensor_data(TensorBase t) noexcept:
    """Address of the first element (storage base + offset)."""
    return t._storage.data + t._offset * t._dtype.itemsize

cdef TensorBase empty_tensor(int ndim, const int64_t* shape, DType dt, Device dev)
cdef TensorBase make_view(TensorBase src, int ndim, const int64_t* shape, const int64_t* strides,
                          int64_t offset)
cdef int prepare_write(TensorBase out, TensorBase src) except -1

# The iterator (iterate.pxi): broadcasting, coalescing, the copy/cast table, overlap tests.
# Descriptor-level: strides in elements, dtype codes as in dtype.pxd.
cdef int broadcast_shapes(int nda, const int64_t* a, int ndb, const int64_t* b, int64_t* out) except -1
cdef int broadcast_strides(int nd_src, const int64_t* src_shape, const int64_t* src_strides,
                           int nd_dst, const int64_t* dst_shape, int64_t* out_strides) except -1
cdef int copy_cast(int ndim, const int64_t* shape,
                   char* dst, const int64_t* dst_strides, int dst_dtype,
                   const char* src, const int64_t* src_strides, int src_dtype) except -1
cdef bint has_internal_overlap(int ndim, const int64_t* shape, const int64_t* strides) noexcept
cdef bint is_non_overlapping_and_dense(int ndim, const int64_t* shape, const int64_t* strides) noexcept
cdef void extent(int ndim, const int64_t* shape, const int64_t* strides, int64_t* lo, int64_t* hi) noexcept
