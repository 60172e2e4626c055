"""dtypes, PyTorch's promotion lattice, finfo/iinfo and the default float dtype."""
from cpython.ref cimport PyObject
import numpy as np

# The dtype objects by code. Python objects cannot be C array elements, so the array holds
# borrowed pointers and _ALL keeps them alive.
cdef PyObject* _DTYPE_PTRS[NUM_DTYPES]
cdef dtype _default_dtype


cdef dtype dtype_of(int code):
    return <dtype>_DTYPE_PTRS[code]

# (code, name, itemsize, floating, signed, legacy tensor type name, numpy name)
_TABLE = (
    (DT_BOOL, "bool", 1, False, False, "BoolTensor", "bool"),
    (DT_UINT8, "uint8", 1, False, False, "ByteTensor", "uint8"),
    (DT_INT8, "int8", 1, False, True, "CharTensor", "int8"),
    (DT_INT16, "int16", 2, False, True, "ShortTensor", "int16"),
    (DT_INT32, "int32", 4, False, True, "IntTensor", "int32"),
    (DT_INT64, "int64", 8, False, True, "LongTensor", "int64"),
    (DT_FLOAT16, "float16", 2, True, True, "HalfTensor", "float16"),
    (DT_BFLOAT16, "bfloat16", 2, True, True, "BFloat16Tensor", None),
    (DT_FLOAT32, "float32", 4, True, True, "FloatTensor", "float32"),
    (DT_FLOAT64, "float64", 8, True, True, "DoubleTensor", "float64"),
)


cdef class dtype:
    """A tensor element type, e.g. ``tensorlib.float32``.

    >>> tensorlib.float16.itemsize, tensorlib.float16.is_floating_point
    (2, True)
    """

    def __cinit__(self, *args):
        if args != (None,):
            raise TypeError("cannot create 'tensorlib.dtype' instances")

    def __repr__(self):
        return "tensorlib." + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))

    @property
    def is_complex(self):
        return False

    def to_real(self):
        return self

    def to_complex(self):
        raise RuntimeError(f"to_complex is not supported for {self!r}: complex dtypes are out of scope")


def _dtype_by_name(name):
    return DTYPES_BY_NAME[name]


DTYPES_BY_NAME = {}
cdef dtype _d
for _code, _name, _size, _flt, _sgn, _legacy, _npname in _TABLE:
    _d = dtype(None)
    _d.code = _code
    _d.name = _name
    _d.itemsize = _size
    _d.is_floating_point = _flt
    _d.is_signed = _sgn
    _d.legacy_name = _legacy
    _d._np = np.dtype(_npname) if _npname is not None else None
    _DTYPE_PTRS[_code] = <PyObject*>_d
    DTYPES_BY_NAME[_name] = _d

_ALL = tuple(DTYPES_BY_NAME.values())
bool_ = dtype_of(DT_BOOL)
uint8 = dtype_of(DT_UINT8)
int8 = dtype_of(DT_INT8)
int16 = dtype_of(DT_INT16)
int32 = dtype_of(DT_INT32)
int64 = dtype_of(DT_INT64)
float16 = dtype_of(DT_FLOAT16)
bfloat16 = dtype_of(DT_BFLOAT16)
float32 = dtype_of(DT_FLOAT32)
float64 = dtype_of(DT_FLOAT64)
_default_dtype = float32

# PyTorch's aliases
ALIASES = {
    "half": float16, "float": float32, "double": float64, "short": int16, "int": int32,
    "long": int64, "bool": bool_,
}

_NP_TO_DTYPE = {d._np: d for d in DTYPES_BY_NAME.values() if d._np is not None}

# ---------------------------------------------------------------------------------------------
# Promotion. The lattice is PyTorch's: bool < integers < floating; uint8 with a signed integer
# needs int16; float16 with bfloat16 needs float32. It is tabulated once so the hot path is a
# C array lookup.
cdef signed char _PROMOTE[NUM_DTYPES][NUM_DTYPES]


cdef int _promote_slow(int a, int b):
    if a == b:
        return a
    if a == DT_BOOL:
        return b
    if b == DT_BOOL:
        return a
    cdef dtype da = dtype_of(a)
    cdef dtype db = dtype_of(b)
    if da.is_floating_point and db.is_floating_point:
        if {a, b} == {DT_FLOAT16, DT_BFLOAT16}:
            return DT_FLOAT32
        return a if da.itemsize > db.itemsize else b
    if da.is_floating_point:
        return a
    if db.is_floating_point:
        return b
    # both integers
    if a == DT_UINT8 or b == DT_UINT8:
        other = b if a == DT_UINT8 else a
        return DT_INT16 if other == DT_INT8 else other
    return a if da.itemsize > db.itemsize else b


for _i in range(NUM_DTYPES):
    for _j in range(NUM_DTYPES):
        _PROMOTE[_i][_j] = _promote_slow(_i, _j)


cdef int promote_codes(int a, int b) noexcept:
    return _PROMOTE[a][b]


cdef bint can_cast_codes(int src, int dst) noexcept:
    # PyTorch's rule for same-kind casts: never floating -> integral, never non-bool -> bool.
    if dtype_of(src).is_floating_point and not dtype_of(dst).is_floating_point:
        return False
    if src != DT_BOOL and dst == DT_BOOL:
        return False
    return True


cdef dtype default_float_dtype():
    return _default_dtype


cdef dtype as_dtype(object obj):
    if isinstance(obj, dtype):
        return <dtype>obj
    if obj is float:
        return float64         # PyTorch: dtype=float means double, whatever the default dtype
    if obj is int:
        return int64
    if obj is bool:
        return bool_
    if isinstance(obj, str) and obj in DTYPES_BY_NAME:
        return DTYPES_BY_NAME[obj]
    try:
        npd = np.dtype(obj) if not isinstance(obj, str) else None
    except TypeError:
        npd = None
    if npd is not None and npd in _NP_TO_DTYPE:
        return _NP_TO_DTYPE[npd]
    raise TypeError(f"expected a tensorlib.dtype (e.g. tensorlib.float32), but got {obj!r}")


def to_dtype(obj):
    """Convert ``obj`` (a dtype, NumPy dtype, or ``float``/``int``/``bool``) to a tensorlib dtype.

    >>> to_dtype(numpy.float64)
    tensorlib.float64
    """
    return as_dtype(obj)


def from_numpy_dtype(npd):
    """The tensorlib dtype of a NumPy dtype, or None when tensorlib has no such dtype."""
    return _NP_TO_DTYPE.get(np.dtype(npd))


def get_default_dtype():
    """The default floating-point dtype (float32 unless changed).

    >>> tensorlib.get_default_dtype()
    tensorlib.float32
    """
    return _default_dtype


def set_default_dtype(d):
    """Set the dtype that Python floats and float constructors default to.

    >>> tensorlib.set_default_dtype(tensorlib.float64); tensorlib.tensor([1.5]).dtype
    tensorlib.float64
    """
    global _default_dtype
    if not isinstance(d, dtype):            # a dtype object only, as PyTorch (not float, "float64")
        raise TypeError("invalid dtype object: only floating-point types are supported as the "
                        "default type")
    cdef dtype dd = <dtype>d
    if dd.code not in (DT_FLOAT16, DT_BFLOAT16, DT_FLOAT32, DT_FLOAT64):
        raise TypeError(f"only floating-point types are supported as the default type, got {dd!r}")
    _default_dtype = dd


def promote_types(type1, type2):
    """The smallest dtype both arguments can be cast to without losing kind.

    >>> tensorlib.promote_types(tensorlib.uint8, tensorlib.int8)
    tensorlib.int16
    """
    return dtype_of(_PROMOTE[as_dtype(type1).code][as_dtype(type2).code])


def can_cast(from_, to):
    """Whether a same-kind cast is allowed under PyTorch's casting rules.

    >>> tensorlib.can_cast(tensorlib.float64, tensorlib.int32)
    False
    """
    return can_cast_codes(as_dtype(from_).code, as_dtype(to).code)


# ---------------------------------------------------------------------------------------------
class finfo:
    """Machine limits of a floating dtype (PyTorch's ``torch.finfo``).

    >>> tensorlib.finfo(tensorlib.float16).max
    65504.0
    """

    def __init__(self, type=None):
        cdef dtype d = _default_dtype if type is None else as_dtype(type)
        if not d.is_floating_point:
            raise TypeError(f"finfo only supports floating-point dtypes, got {d!r}")
        self.dtype = d.name
        if d.code == DT_BFLOAT16:
            self.bits, self.eps, self.max = 16, 2.0 ** -7, float.fromhex("0x1.fep127")
            self.tiny = 2.0 ** -126
            self.resolution = 0.01
            self.smallest_subnormal = 2.0 ** -133
        else:
            fi = np.finfo(d._np)
            self.bits = int(fi.bits)
            self.eps = float(fi.eps)
            self.max = float(fi.max)
            self.tiny = float(fi.smallest_normal)
            # PyTorch's resolution is exactly 10**-precision (NumPy's is that power of ten
            # rounded to the dtype: 9.99999997e-07 for float32)
            self.resolution = 10.0 ** -int(fi.precision)
            self.smallest_subnormal = float(fi.smallest_subnormal)
        self.min = -self.max
        self.smallest_normal = self.tiny

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype (PyTorch's ``torch.iinfo``).

    >>> tensorlib.iinfo(tensorlib.int8).min
    -128
    """

    def __init__(self, type):
        cdef dtype d = as_dtype(type)
        if d.is_floating_point:
            raise TypeError(f"iinfo only supports integer dtypes, got {d!r}")
        if d.code == DT_BOOL:
            raise TypeError(f"{d!r} is not supported by tensorlib.iinfo")
        self.dtype = d.name
        ii = np.iinfo(d._np)
        self.bits, self.min, self.max = int(ii.bits), int(ii.min), int(ii.max)

    def __repr__(self):
        # PyTorch prints the bounds as floats (%g)
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"
