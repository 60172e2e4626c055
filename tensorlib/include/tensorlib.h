/* tensorlib's C API for plain C extensions (Cython code uses `cimport tensorlib` instead:
   tensorlib/__init__.pxd, the same functions).

   Compile with include_dirs=[tensorlib.get_include()]. In the module's init function call

       if (tensorlib_import() < 0) return NULL;

   as NumPy's import_array(): it imports tensorlib, fetches the capsule
   tensorlib._core.capi._C_API and checks that the installed tensorlib serves the ABI version
   this header describes (equal) and its API level (at least this one), raising ImportError
   otherwise. The table pointer is static: call it in every C file that uses the API.

   A tensor is a PyObject*. Check it first with tl_check(obj) (1: a tensor, 0: not, -1: error);
   the accessors below assume a tensor and read its fields at the offsets the table gives (the
   object layout stays tensorlib's own), so they are cheap and need no GIL. Shapes and strides
   are int64 arrays of tl_ndim(t) entries, strides in elements (tl_stride_bytes for bytes).
   Functions returning PyObject* give a new reference, or NULL with a Python exception set. */
#ifndef TENSORLIB_H
#define TENSORLIB_H

#include <Python.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ABI: the table's layout and the meaning of its entries (must equal the installed one's).
   API: entries appended to the table (the installed level must be at least this one). */
#define TENSORLIB_ABI_VERSION 1
#define TENSORLIB_API_VERSION 1

/* dtype codes: tensorlib.<dtype>.code (tensorlib/_core/dtype.pxd's DTypeCode) */
enum {
    TL_DTYPE_BOOL = 0, TL_DTYPE_UINT8 = 1, TL_DTYPE_INT8 = 2, TL_DTYPE_INT16 = 3,
    TL_DTYPE_INT32 = 4, TL_DTYPE_INT64 = 5, TL_DTYPE_FLOAT16 = 6, TL_DTYPE_BFLOAT16 = 7,
    TL_DTYPE_FLOAT32 = 8, TL_DTYPE_FLOAT64 = 9, TL_NUM_DTYPE_CODES = 10
};

/* device kinds (allocator.pxd's DeviceKind); TL_DEVICE_CUDA means the current CUDA device */
enum { TL_DEVICE_CPU = 0, TL_DEVICE_META = 1, TL_DEVICE_CUDA = 2 };

/* storage roles of the memory profiler (allocator.pxd's StorageRole; tensorlib.memory) */
enum {
    TL_ROLE_UNKNOWN = 0, TL_ROLE_PARAMETER = 1, TL_ROLE_BUFFER = 2, TL_ROLE_INPUT = 3,
    TL_ROLE_ACTIVATION = 4, TL_ROLE_SAVED = 5, TL_ROLE_GRADIENT = 6,
    TL_ROLE_OPTIMIZER_STATE = 7, TL_ROLE_TEMPORARY = 8
};

/* The table in the capsule. Append-only: a new entry raises TENSORLIB_API_VERSION; any other
   change raises TENSORLIB_ABI_VERSION. */
typedef struct {
    unsigned int abi_version;
    unsigned int api_version;
    const char *version;                /* tensorlib.__version__ */
    PyTypeObject *tensor_type;          /* tensors are instances of it (or of a subclass) */
    PyTypeObject *storage_type;         /* what tl_scratch returns */
    /* byte offsets of the fields the accessors read */
    Py_ssize_t off_storage, off_offset, off_ndim, off_shape, off_strides, off_numel;
    Py_ssize_t off_dtype, off_contiguous, off_vc, off_requires_grad;
    Py_ssize_t off_storage_data, off_storage_nbytes, off_storage_device;
    Py_ssize_t off_dtype_code, off_dtype_itemsize, off_device_kind, off_vc_version;
    /* functions (the GIL held) */
    PyObject *(*empty)(int ndim, const int64_t *shape, int dtype, int device);
    PyObject *(*from_pointer)(void *data, int ndim, const int64_t *shape,
                              const int64_t *strides, int dtype, PyObject *owner);
    PyObject *(*empty_like)(PyObject *t);
    PyObject *(*scratch)(int64_t nbytes, int role, int device, const char *op);
    int (*prepare_write)(PyObject *t);
} tensorlib_capi;

#if defined(__GNUC__) || defined(__clang__)
#define TL__UNUSED __attribute__((unused))
#else
#define TL__UNUSED
#endif

static const tensorlib_capi *tensorlib_API TL__UNUSED = NULL;

static TL__UNUSED int tensorlib_import(void)
{
    PyObject *mod, *cap;
    const tensorlib_capi *api;
    if (tensorlib_API != NULL)
        return 0;
    mod = PyImport_ImportModule("tensorlib._core.capi");
    if (mod == NULL)
        return -1;
    cap = PyObject_GetAttrString(mod, "_C_API");
    Py_DECREF(mod);
    if (cap == NULL)
        return -1;
    /* the module keeps the capsule, and the table, alive for the whole process */
    api = (const tensorlib_capi *)PyCapsule_GetPointer(cap, "tensorlib._core.capi._C_API");
    Py_DECREF(cap);
    if (api == NULL)
        return -1;
    if (api->abi_version != TENSORLIB_ABI_VERSION) {
        PyErr_Format(PyExc_ImportError,
                     "module compiled against tensorlib C ABI version %d, but this tensorlib "
                     "(%s) has ABI version %d: rebuild the extension against the installed "
                     "tensorlib", TENSORLIB_ABI_VERSION, api->version, (int)api->abi_version);
        return -1;
    }
    if (api->api_version < TENSORLIB_API_VERSION) {
        PyErr_Format(PyExc_ImportError,
                     "module compiled against tensorlib C API level %d, but this tensorlib (%s) "
                     "provides level %d: upgrade tensorlib, or rebuild the extension against "
                     "this one", TENSORLIB_API_VERSION, api->version, (int)api->api_version);
        return -1;
    }
    tensorlib_API = api;
    return 0;
}

#define TL__AT(obj, field, type) (*(type *)((char *)(obj) + tensorlib_API->field))

/* 1 when obj is a tensor, 0 when not, -1 (exception set) when tensorlib cannot be imported */
static inline int tl_check(PyObject *obj)
{
    if (tensorlib_API == NULL && tensorlib_import() < 0)
        return -1;
    return PyObject_TypeCheck(obj, tensorlib_API->tensor_type);
}

/* ---- accessors: t must be a tensor (tl_check); no GIL needed ---- */
static inline int tl_ndim(PyObject *t) { return TL__AT(t, off_ndim, int); }
static inline const int64_t *tl_shape(PyObject *t) { return TL__AT(t, off_shape, int64_t *); }
static inline const int64_t *tl_strides(PyObject *t) { return TL__AT(t, off_strides, int64_t *); }
static inline int64_t tl_numel(PyObject *t) { return TL__AT(t, off_numel, int64_t); }
static inline int tl_dtype(PyObject *t)
{
    return TL__AT(TL__AT(t, off_dtype, PyObject *), off_dtype_code, int);
}
static inline int tl_itemsize(PyObject *t)
{
    return TL__AT(TL__AT(t, off_dtype, PyObject *), off_dtype_itemsize, int);
}
static inline int64_t tl_stride_bytes(PyObject *t, int dim)
{
    return tl_strides(t)[dim] * tl_itemsize(t);
}
/* the device kind (TL_DEVICE_*) */
static inline int tl_device(PyObject *t)
{
    PyObject *s = TL__AT(t, off_storage, PyObject *);
    return TL__AT(TL__AT(s, off_storage_device, PyObject *), off_device_kind, int);
}
static inline int tl_is_contiguous(PyObject *t) { return TL__AT(t, off_contiguous, int); }
static inline int tl_requires_grad(PyObject *t) { return TL__AT(t, off_requires_grad, int); }
/* address of the first element (storage base + offset); host memory only on TL_DEVICE_CPU */
static inline char *tl_data(PyObject *t)
{
    PyObject *s = TL__AT(t, off_storage, PyObject *);
    return TL__AT(s, off_storage_data, char *) + TL__AT(t, off_offset, int64_t) * tl_itemsize(t);
}
/* the version counter, shared with the tensor's views; a write from C must bump it (or go
   through tl_prepare_write) so that autograd sees a saved tensor modified in place */
static inline int64_t tl_version(PyObject *t)
{
    return TL__AT(TL__AT(t, off_vc, PyObject *), off_vc_version, int64_t);
}
static inline void tl_bump_version(PyObject *t)
{
    TL__AT(TL__AT(t, off_vc, PyObject *), off_vc_version, int64_t) += 1;
}
/* the bytes of a storage returned by tl_scratch, and their number */
static inline char *tl_storage_data(PyObject *s) { return TL__AT(s, off_storage_data, char *); }
static inline int64_t tl_storage_nbytes(PyObject *s)
{
    return TL__AT(s, off_storage_nbytes, int64_t);
}

/* ---- creation and the doors: the GIL held; a new reference or NULL with an exception ---- */
/* a new contiguous, uninitialized tensor from the device's allocator (counted) */
static inline PyObject *tl_empty(int ndim, const int64_t *shape, int dtype, int device)
{
    if (tensorlib_API == NULL && tensorlib_import() < 0)
        return NULL;
    return tensorlib_API->empty(ndim, shape, dtype, device);
}
/* a CPU tensor over memory tensorlib does not own (borrowed: not counted); owner is kept
   alive while the tensor or a view of it lives; strides in elements, NULL for row-major.
   ValueError for a NULL or misaligned pointer or a negative stride, RuntimeError for a
   negative size. */
static inline PyObject *tl_from_pointer(void *data, int ndim, const int64_t *shape,
                                        const int64_t *strides, int dtype, PyObject *owner)
{
    if (tensorlib_API == NULL && tensorlib_import() < 0)
        return NULL;
    return tensorlib_API->from_pointer(data, ndim, shape, strides, dtype, owner);
}
/* uninitialized, with t's shape, dtype, device and (dense) layout */
static inline PyObject *tl_empty_like(PyObject *t)
{
    if (tensorlib_API == NULL && tensorlib_import() < 0)
        return NULL;
    return tensorlib_API->empty_like(t);
}
/* nbytes of scratch memory through the allocator's door: counted in the device's memory
   statistics and seen by the memory profiler with `role` (TL_ROLE_*) as made by op `op`
   (may be NULL). Returns the Storage (tl_storage_data gives its bytes); Py_DECREF frees it. */
static inline PyObject *tl_scratch(int64_t nbytes, int role, int device, const char *op)
{
    if (tensorlib_API == NULL && tensorlib_import() < 0)
        return NULL;
    return tensorlib_API->scratch(nbytes, role, device, op);
}
/* the write door: PyTorch's checks for an in-place write into t, then the version bump;
   0, or -1 with an exception */
static inline int tl_prepare_write(PyObject *t)
{
    if (tensorlib_API == NULL && tensorlib_import() < 0)
        return -1;
    return tensorlib_API->prepare_write(t);
}

#ifdef __cplusplus
}
#endif
#endif /* TENSORLIB_H */
