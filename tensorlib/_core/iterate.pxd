# Published Cython interface of the iterator: broadcasting, dimension coalescing, the copy/cast
# table and the overlap predicates used by the write-preparation step. Works on raw
# descriptors (pointer, shape, strides in elements, dtype code), so it sits below TensorBase.
# Append-only (see dtype.pxd).
from libc.stdint cimport int64_t

cdef enum:
    MAX_DIMS = 64

cdef int broadcast_shapes(int nda, const int64_t* a, int ndb, const int64_t* b, int64_t* out) except -1
cdef int broadcast_strides(int nd_src, const int64_t* src_shape, const int64_t* src_strides,
                           int nd_dst, const int64_t* dst_shape, int64_t* out_strides) except -1
cdef int copy_cast(int ndim, const int64_t* shape,
                   char* dst, const int64_t* dst_strides, int dst_dtype,
                   const char* src, const int64_t* src_strides, int src_dtype) except -1
cdef bint has_internal_overlap(int ndim, const int64_t* shape, const int64_t* strides) noexcept
cdef bint is_non_overlapping_and_dense(int ndim, const int64_t* shape, const int64_t* strides) noexcept
cdef void extent(int ndim, const int64_t* shape, const int64_t* strides, int64_t* lo, int64_t* hi) noexcept
cdef str shape_str(int ndim, const int64_t* shape)
