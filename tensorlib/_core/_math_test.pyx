"""TEST-ONLY hook into the float32/float64 elementary functions of cpu_math.h (the ones the
elementwise kernels call), so tests can measure their error against float64 references and
benchmarks can time them. Not part of the public API, and not part of the tensor module: the
build compiles this module and cpu_math_test.c at -O3 even in development builds, since the
point is to test the vectorized code the kernels run.
"""
from libc.stdint cimport int64_t

import numpy as np

cdef extern from "cpu_math_test.h" nogil:
    int tl_math_test_run(const char* name, int isa, int is_double, const void* x,
                         const void* y, void* out, int64_t n, double beta, double threshold)
    const char* const tl_math_test_names[]

_MATH_ISAS = {"dispatch": 0, "avx512f": 1, "avx2": 2, "baseline": 3}


def _math_names():
    """Names accepted by _math_eval (test hook)."""
    cdef int i = 0
    names = []
    while tl_math_test_names[i] != NULL:
        names.append(tl_math_test_names[i].decode())
        i += 1
    return names


def _math_eval(str name, arr, arr2=None, *, double beta=1.0, double threshold=20.0,
               str isa="dispatch", out=None):
    """TEST HOOK: apply cpu_math.h's ``name`` elementwise to a NumPy float32/float64 array.

    Runs the TL_DISPATCH loop (the clone the kernels use on this CPU), or with
    ``isa="avx512f" | "avx2" | "baseline"`` that clone compiled on its own (float32 only;
    ValueError when this CPU lacks it). ``arr2`` is x for atan2(arr, arr2) and y for pow(arr, arr2); beta/threshold
    are softplus's. Returns a new array (or fills ``out``).

    >>> import numpy as np
    >>> from tensorlib._core._math_test import _math_eval
    >>> _math_eval("exp", np.array([0.0, 1.0], dtype=np.float32))
    array([1.       , 2.7182817], dtype=float32)
    """
    a = np.ascontiguousarray(arr)
    if a.dtype != np.float32 and a.dtype != np.float64:
        raise TypeError(f"_math_eval: expected a float32 or float64 array, got {a.dtype}")
    if isa not in _MATH_ISAS:
        raise ValueError(f"_math_eval: unknown isa {isa!r}")
    b = None
    if arr2 is not None:
        b = np.ascontiguousarray(arr2, dtype=a.dtype)
        if b.shape != a.shape:
            raise ValueError(f"_math_eval: shapes {a.shape} and {b.shape} differ")
    elif name in ("atan2", "pow"):
        raise ValueError(f"_math_eval: {name} needs two arrays")
    if out is None:
        out = np.empty_like(a)
    elif (not isinstance(out, np.ndarray) or out.dtype != a.dtype or out.shape != a.shape
          or not out.flags.c_contiguous or not out.flags.writeable):
        raise ValueError("_math_eval: out must be a writable C-contiguous array like arr")
    cdef bytes bname = name.encode()
    cdef const char* cname = bname
    cdef size_t px = a.ctypes.data, po = out.ctypes.data
    cdef size_t py = b.ctypes.data if b is not None else 0
    cdef int64_t n = a.size
    cdef int code = _MATH_ISAS[isa], dbl = a.dtype == np.float64, rc
    with nogil:
        rc = tl_math_test_run(cname, code, dbl, <const void*>px, <const void*>py, <void*>po,
                              n, beta, threshold)
    if rc == -1:
        raise ValueError(f"_math_eval: unknown function {name!r}")
    if rc == -2:
        raise ValueError(f"_math_eval: isa {isa!r} is not available here for {a.dtype}")
    return out
