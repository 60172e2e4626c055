# tensorlib's public Cython API: `cimport tensorlib` (NumPy's __init__.pxd is the model).
#
#     cimport tensorlib as ctl
#     def scale_(ctl.Tensor t, double a):
#         cdef double* p = <double*>ctl.data(t)
#         ...
#
# Build with include_dirs=[tensorlib.get_include()] (the C headers these declarations name);
# Cython finds this file on sys.path beside tensorlib/__init__.py. Accessors are inline and
# GIL-free; creation and the doors (empty, from_pointer, empty_like, scratch, prepare_write)
# need the GIL and live in tensorlib._core.capi. When an extension built against this file
# loads, Cython imports the version marker ABI_<n>_API_<m> from tensorlib._core.capi: a
# tensorlib with another ABI, or a lower API level, raises ImportError there (never a crash).
#
# Append-only, like the .pxd files it cimports (tensorlib/_core/{tensor,allocator,dtype,capi}.pxd).
from libc.stdint cimport int64_t

from tensorlib._core.tensor cimport TensorBase, TensorBase as Tensor, VersionCounter, MAX_DIMS
from tensorlib._core.dtype cimport (
    DTypeCode, DT_BOOL, DT_UINT8, DT_INT8, DT_INT16, DT_INT32, DT_INT64, DT_FLOAT16, DT_BFLOAT16,
    DT_FLOAT32, DT_FLOAT64, NUM_DTYPES)
from tensorlib._core.allocator cimport (
    Storage, DeviceKind, DEVICE_CPU, DEVICE_META, DEVICE_CUDA, StorageRole, ROLE_UNKNOWN,
    ROLE_PARAMETER, ROLE_BUFFER, ROLE_INPUT, ROLE_ACTIVATION, ROLE_SAVED, ROLE_GRADIENT,
    ROLE_OPTIMIZER_STATE, ROLE_TEMPORARY)
from tensorlib._core.capi cimport (
    ABI_1_API_1, CAPI_ABI_VERSION as ABI_VERSION, CAPI_API_VERSION as API_VERSION,
    empty, from_pointer, empty_like, scratch, prepare_write)


# ---- accessors (no GIL, no checks: t must be a tensor, not None) ----------------------------

cdef inline char* data(Tensor t) noexcept nogil:
    """Address of the first element: storage base + offset (host memory on the CPU only)."""
    return t._storage.data + t._offset * t._dtype.itemsize

cdef inline int ndim(Tensor t) noexcept nogil:
    return t._ndim

cdef inline const int64_t* shape(Tensor t) noexcept nogil:
    """ndim(t) sizes."""
    return t._shape

cdef inline const int64_t* strides(Tensor t) noexcept nogil:
    """ndim(t) strides, in elements."""
    return t._strides

cdef inline int64_t stride_bytes(Tensor t, int dim) noexcept nogil:
    """The stride of ``dim`` in bytes."""
    return t._strides[dim] * t._dtype.itemsize

cdef inline int64_t numel(Tensor t) noexcept nogil:
    return t._numel

cdef inline int dtype(Tensor t) noexcept nogil:
    """The dtype code (DT_*)."""
    return t._dtype.code

cdef inline int itemsize(Tensor t) noexcept nogil:
    return t._dtype.itemsize

cdef inline int device(Tensor t) noexcept nogil:
    """The device kind (DEVICE_*)."""
    return t._storage.device.kind

cdef inline bint is_contiguous(Tensor t) noexcept nogil:
    """Row-major contiguous (size-1 dims never break it)."""
    return t._contiguous

cdef inline bint requires_grad(Tensor t) noexcept nogil:
    return t._requires_grad

cdef inline int64_t version(Tensor t) noexcept nogil:
    """The version counter, shared with the tensor's views."""
    return t._vc.version

cdef inline void bump_version(Tensor t) noexcept nogil:
    """Record a write made from C (a saved tensor modified in place is then caught by
    autograd). ``prepare_write`` (with the GIL) also runs PyTorch's checks first."""
    t._vc.version += 1

cdef inline char* storage_data(Storage s) noexcept nogil:
    """The bytes of a storage, such as one from ``scratch``."""
    return s.data

cdef inline int64_t storage_nbytes(Storage s) noexcept nogil:
    return s._nbytes
