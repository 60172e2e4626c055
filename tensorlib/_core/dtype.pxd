# Published Cython interface of tensorlib's dtypes. Append-only: Cython does not check the
# layout of cdef classes across modules, so never reorder or remove a declaration.
from libc.stdint cimport int64_t

cdef enum DTypeCode:
    DT_BOOL = 0
    DT_UINT8 = 1
    DT_INT8 = 2
    DT_INT16 = 3
    DT_INT32 = 4
    DT_INT64 = 5
    DT_FLOAT16 = 6
    DT_BFLOAT16 = 7
    DT_FLOAT32 = 8
    DT_FLOAT64 = 9
    NUM_DTYPES = 10

cdef class dtype:
    cdef readonly int code
    cdef readonly int itemsize
    cdef readonly bint is_floating_point
    cdef readonly bint is_signed
    cdef readonly str name          # "float32"
    cdef readonly str legacy_name   # "FloatTensor"
    cdef readonly object _np        # the NumPy dtype, or None (bfloat16)

cdef dtype dtype_of(int code)          # the dtype object of a code (no bounds check)
cdef dtype default_float_dtype()
cdef int promote_codes(int a, int b) noexcept
cdef bint can_cast_codes(int src, int dst) noexcept
cdef dtype as_dtype(object obj)      # dtype object, NumPy dtype or Python type -> dtype; TypeError otherwise
