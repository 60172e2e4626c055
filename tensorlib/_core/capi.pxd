# The functions of tensorlib's public Cython and C API (tensorlib/__init__.pxd re-exports them;
# tensorlib/include/tensorlib.h reaches the same ones through a capsule). Append-only, like
# the other published .pxd files, with one exception: the marker class below, renamed when
# the versions change.
from libc.stdint cimport int64_t
from tensorlib._core.tensor cimport TensorBase
from tensorlib._core.allocator cimport Storage

# The version marker. An extension that cimports tensorlib imports this class by name when it
# is loaded (Cython imports every class of the .pxd files it cimports): the name it was built
# with says the ABI (layouts and meanings: must be equal) and the API level (functions
# appended: the installed one must be at least as high). capi's module __getattr__ answers a
# name it cannot serve with an ImportError naming both versions. Keep the numbers equal to
# TENSORLIB_ABI_VERSION and TENSORLIB_API_VERSION in tensorlib.h (tests/test_cython_extension.py).
cdef class ABI_1_API_1:
    pass

cdef enum:
    CAPI_ABI_VERSION = 1
    CAPI_API_VERSION = 1

# Creation from C (the GIL held; NULL/exception on error). dtype is a DTypeCode, device a
# DeviceKind (DEVICE_CPU, DEVICE_META, DEVICE_CUDA: the current CUDA device).
cdef TensorBase empty(int ndim, const int64_t* shape, int dtype, int device)
cdef TensorBase from_pointer(void* data, int ndim, const int64_t* shape, const int64_t* strides,
                             int dtype, object owner)
cdef TensorBase empty_like(TensorBase t)
# Memory through the allocator's door for an extension's own use: counted in the device's
# memory statistics, seen by the profiler as made by ``op`` (may be NULL) with ``role``
# (a StorageRole), and given back when the returned Storage dies. Its bytes are Storage.data.
cdef Storage scratch(int64_t nbytes, int role, int device, const char* op)
# The write door: PyTorch's checks for writing into ``t`` in place (a leaf that requires grad
# while grad is on, an expanded tensor), then the version bump. Call it before a C write that
# autograd should see; bump_version alone (tensorlib.pxd, nogil) only bumps.
cdef int prepare_write(TensorBase t) except -1
