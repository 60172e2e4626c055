"""The legacy tensor types early PyTorch code uses: ``FloatTensor(2, 3)``,
``LongTensor([1, 2])``, ``isinstance(t, FloatTensor)`` and ``t.type(LongTensor)``."""
from tensorlib._core.dtype import DTYPES_BY_NAME
from tensorlib._tensor import Tensor


class _LegacyTensorMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls._legacy_dtype

    def __repr__(cls):
        return f"<class 'tensorlib.{cls.__name__}'>"


def _legacy_type(dtype):
    def __new__(cls, *args, **kwargs):
        if "dtype" in kwargs:
            raise TypeError(f"{cls.__name__}() got an unexpected keyword argument 'dtype'")
        return Tensor(*args, dtype=dtype, **kwargs)

    doc = (f"Legacy constructor of {dtype!r} tensors: ``{dtype.legacy_name}(2, 3)`` is "
           f"uninitialized, ``{dtype.legacy_name}([1, 2])`` copies data.\n\n"
           f"    >>> tensorlib.{dtype.legacy_name}([1, 2]).dtype\n    {dtype!r}\n")
    return _LegacyTensorMeta(dtype.legacy_name, (), {
        "__new__": __new__, "_legacy_dtype": dtype, "dtype": dtype, "__doc__": doc,
        "__module__": "tensorlib"})


_types = {d.legacy_name: _legacy_type(d) for d in DTYPES_BY_NAME.values()}
FloatTensor = _types["FloatTensor"]
DoubleTensor = _types["DoubleTensor"]
HalfTensor = _types["HalfTensor"]
BFloat16Tensor = _types["BFloat16Tensor"]
ByteTensor = _types["ByteTensor"]
CharTensor = _types["CharTensor"]
ShortTensor = _types["ShortTensor"]
IntTensor = _types["IntTensor"]
LongTensor = _types["LongTensor"]
BoolTensor = _types["BoolTensor"]
