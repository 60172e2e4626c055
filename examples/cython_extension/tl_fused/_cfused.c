/* tl_fused's plain-C half: the same fused op through tensorlib.h (no Cython). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include "tensorlib.h"

/* x must be a CPU float32/float64 tensor; returns 0, or -1 with an exception */
static int check_float_cpu(PyObject *x, const char *fn)
{
    int ok = tl_check(x);
    if (ok < 0)
        return -1;
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "%s: expected a tensor, got %s", fn, Py_TYPE(x)->tp_name);
        return -1;
    }
    if (tl_device(x) != TL_DEVICE_CPU) {
        PyErr_Format(PyExc_RuntimeError, "%s: expected a CPU tensor", fn);
        return -1;
    }
    if (tl_dtype(x) != TL_DTYPE_FLOAT32 && tl_dtype(x) != TL_DTYPE_FLOAT64) {
        PyErr_Format(PyExc_TypeError, "%s: expected float32 or float64, got dtype code %d", fn,
                     tl_dtype(x));
        return -1;
    }
    return 0;
}

static int check_pair(PyObject *x, PyObject *y, const char *fn)
{
    int i;
    if (check_float_cpu(x, fn) < 0 || check_float_cpu(y, fn) < 0)
        return -1;
    if (tl_dtype(x) != tl_dtype(y)) {
        PyErr_Format(PyExc_TypeError, "%s: x and y must have one dtype", fn);
        return -1;
    }
    if (!tl_is_contiguous(x) || !tl_is_contiguous(y)) {
        PyErr_Format(PyExc_ValueError, "%s: x and y must be contiguous", fn);
        return -1;
    }
    if (tl_ndim(x) != tl_ndim(y))
        goto differ;
    for (i = 0; i < tl_ndim(x); i++)
        if (tl_shape(x)[i] != tl_shape(y)[i])
            goto differ;
    return 0;
differ:
    PyErr_Format(PyExc_ValueError, "%s: x and y have different shapes", fn);
    return -1;
}

static void scale_add_into(PyObject *out, PyObject *x, PyObject *y, double a)
{
    int64_t i, n = tl_numel(x);
    if (tl_dtype(x) == TL_DTYPE_FLOAT32) {
        float *o = (float *)tl_data(out), af = (float)a;
        const float *px = (const float *)tl_data(x), *py = (const float *)tl_data(y);
        for (i = 0; i < n; i++)
            o[i] = af * px[i] + py[i];
    } else {
        double *o = (double *)tl_data(out);
        const double *px = (const double *)tl_data(x), *py = (const double *)tl_data(y);
        for (i = 0; i < n; i++)
            o[i] = a * px[i] + py[i];
    }
}

/* c_scale_add(x, y, a) -> a * x + y, a new tensor (contiguous float inputs) */
static PyObject *c_scale_add(PyObject *self, PyObject *args)
{
    PyObject *x, *y, *out;
    double a;
    if (!PyArg_ParseTuple(args, "OOd:c_scale_add", &x, &y, &a))
        return NULL;
    if (check_pair(x, y, "c_scale_add") < 0)
        return NULL;
    out = tl_empty(tl_ndim(x), tl_shape(x), tl_dtype(x), TL_DEVICE_CPU);
    if (out == NULL)
        return NULL;
    if (tl_numel(x) < 32768) {      /* releasing the GIL costs more than a small loop */
        scale_add_into(out, x, y, a);
    } else {
        Py_BEGIN_ALLOW_THREADS
        scale_add_into(out, x, y, a);
        Py_END_ALLOW_THREADS
    }
    return out;
}

/* c_scale_add_(x, y, a): x = a * x + y in place, through the write door; returns x */
static PyObject *c_scale_add_(PyObject *self, PyObject *args)
{
    PyObject *x, *y;
    double a;
    if (!PyArg_ParseTuple(args, "OOd:c_scale_add_", &x, &y, &a))
        return NULL;
    if (check_pair(x, y, "c_scale_add_") < 0 || tl_prepare_write(x) < 0)
        return NULL;
    scale_add_into(x, x, y, a);
    Py_INCREF(x);
    return x;
}

/* c_wrap(buf): a float64 tensor over a writable C-contiguous buffer of doubles (no copy);
   the exporting object is the owner the tensor keeps alive */
static PyObject *c_wrap(PyObject *self, PyObject *obj)
{
    Py_buffer view;
    PyObject *t;
    int64_t n;
    if (PyObject_GetBuffer(obj, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0)
        return NULL;
    if (view.itemsize != 8 || view.format == NULL || strcmp(view.format, "d") != 0) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_TypeError, "c_wrap: expected a buffer of doubles");
        return NULL;
    }
    n = (int64_t)(view.len / 8);
    t = tl_from_pointer(view.buf, 1, &n, NULL, TL_DTYPE_FLOAT64, obj);
    PyBuffer_Release(&view);    /* the owner, not the view, keeps the memory */
    return t;
}

/* c_wrap_address(address, shape, dtype, owner): from_pointer on a raw address (tests) */
static PyObject *c_wrap_address(PyObject *self, PyObject *args)
{
    unsigned long long address;
    PyObject *shape, *owner;
    int dtype, nd, i;
    int64_t sh[8];
    if (!PyArg_ParseTuple(args, "KO!iO:c_wrap_address", &address, &PyTuple_Type, &shape, &dtype,
                          &owner))
        return NULL;
    nd = (int)PyTuple_GET_SIZE(shape);
    if (nd > 8) {
        PyErr_SetString(PyExc_ValueError, "c_wrap_address: at most 8 dims");
        return NULL;
    }
    for (i = 0; i < nd; i++) {
        sh[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
        if (sh[i] == -1 && PyErr_Occurred())
            return NULL;
    }
    return tl_from_pointer((void *)(uintptr_t)address, nd, sh, NULL, dtype, owner);
}

/* c_scratch(nbytes): zeroed scratch memory (role temporary, op "c_scratch") as a Storage */
static PyObject *c_scratch(PyObject *self, PyObject *arg)
{
    long long n = PyLong_AsLongLong(arg);
    PyObject *s;
    if (n == -1 && PyErr_Occurred())
        return NULL;
    s = tl_scratch(n, TL_ROLE_TEMPORARY, TL_DEVICE_CPU, "c_scratch");
    if (s == NULL)
        return NULL;
    if (tl_storage_nbytes(s) != n) {
        Py_DECREF(s);
        PyErr_SetString(PyExc_AssertionError, "c_scratch: tl_storage_nbytes disagrees");
        return NULL;
    }
    if (n > 0)
        memset(tl_storage_data(s), 0, (size_t)n);
    return s;
}

static PyObject *c_identity(PyObject *self, PyObject *x)
{
    int ok = tl_check(x);
    if (ok <= 0) {
        if (ok == 0)
            PyErr_SetString(PyExc_TypeError, "c_identity: expected a tensor");
        return NULL;
    }
    Py_INCREF(x);
    return x;
}

/* what the accessors say, as a dict (the same keys as the Cython half's info) */
static PyObject *c_info(PyObject *self, PyObject *t)
{
    PyObject *shape, *strides, *sbytes, *d;
    int i, nd, ok = tl_check(t);
    if (ok <= 0) {
        if (ok == 0)
            PyErr_SetString(PyExc_TypeError, "c_info: expected a tensor");
        return NULL;
    }
    nd = tl_ndim(t);
    shape = PyList_New(nd);
    strides = PyList_New(nd);
    sbytes = PyList_New(nd);
    if (!shape || !strides || !sbytes)
        goto fail;
    for (i = 0; i < nd; i++) {
        PyList_SET_ITEM(shape, i, PyLong_FromLongLong(tl_shape(t)[i]));
        PyList_SET_ITEM(strides, i, PyLong_FromLongLong(tl_strides(t)[i]));
        PyList_SET_ITEM(sbytes, i, PyLong_FromLongLong(tl_stride_bytes(t, i)));
    }
    d = Py_BuildValue("{s:i,s:O,s:O,s:O,s:L,s:i,s:i,s:i,s:O,s:O,s:L,s:K}",
                      "ndim", nd, "shape", shape, "strides", strides, "stride_bytes", sbytes,
                      "numel", (long long)tl_numel(t), "dtype", tl_dtype(t),
                      "itemsize", tl_itemsize(t), "device", tl_device(t),
                      "contiguous", tl_is_contiguous(t) ? Py_True : Py_False,
                      "requires_grad", tl_requires_grad(t) ? Py_True : Py_False,
                      "version", (long long)tl_version(t),
                      "data", (unsigned long long)(uintptr_t)tl_data(t));
    Py_DECREF(shape);
    Py_DECREF(strides);
    Py_DECREF(sbytes);
    return d;
fail:
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    Py_XDECREF(sbytes);
    return NULL;
}

static PyObject *c_bump(PyObject *self, PyObject *t)
{
    if (c_identity(self, t) == NULL)
        return NULL;
    Py_DECREF(t);
    Py_BEGIN_ALLOW_THREADS
    tl_bump_version(t);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *c_empty_like(PyObject *self, PyObject *t)
{
    return tl_empty_like(t);
}

static PyObject *c_built_against(PyObject *self, PyObject *unused)
{
    return Py_BuildValue("(ii)", TENSORLIB_ABI_VERSION, TENSORLIB_API_VERSION);
}

static PyMethodDef methods[] = {
    {"c_scale_add", c_scale_add, METH_VARARGS, "c_scale_add(x, y, a) -> a * x + y (C API)."},
    {"c_scale_add_", c_scale_add_, METH_VARARGS, "c_scale_add_(x, y, a): x = a * x + y."},
    {"c_wrap", c_wrap, METH_O, "c_wrap(buf): a float64 tensor over buf's memory."},
    {"c_wrap_address", c_wrap_address, METH_VARARGS,
     "c_wrap_address(address, shape, dtype, owner): tl_from_pointer (for tests)."},
    {"c_scratch", c_scratch, METH_O, "c_scratch(nbytes): zeroed scratch memory (a Storage)."},
    {"c_identity", c_identity, METH_O, "c_identity(x) -> x."},
    {"c_info", c_info, METH_O, "c_info(t): the accessors' values."},
    {"c_bump", c_bump, METH_O, "c_bump(t): bump t's version counter."},
    {"c_empty_like", c_empty_like, METH_O, "c_empty_like(t): tl_empty_like."},
    {"c_built_against", c_built_against, METH_NOARGS, "(ABI, API) of tensorlib.h."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_cfused", "tl_fused's C half (tensorlib.h).", -1, methods
};

PyMODINIT_FUNC PyInit__cfused(void)
{
    if (tensorlib_import() < 0)
        return NULL;
    return PyModule_Create(&moduledef);
}
