"""Creation functions (factories and the ``*_like`` forms)."""
from .common import F, FACTORY, LIKE, M, op

OPS = [
    op("empty", f"int[]... size, *, object out=None, {FACTORY}, object memory_format=None", F,
       impl="_finish(_empty({size}, {dtype}, {device}, {out}), {requires_grad})",
       doc="An uninitialized tensor.\n\n    >>> tensorlib.empty(2, 3).shape\n"
           "    tensorlib.Size([2, 3])"),
    op("zeros", f"int[]... size, *, object out=None, {FACTORY}", F,
       impl="_finish(_into_out(_zeros({size}, {dtype}, {device}), {out}, 'zeros'), "
            "{requires_grad})",
       doc="A tensor of zeros.\n\n    >>> tensorlib.zeros(2).tolist()\n    [0.0, 0.0]"),
    op("ones", f"int[]... size, *, object out=None, {FACTORY}", F,
       impl="_finish(_into_out(_full({size}, 1, {dtype} or default_float_dtype(), {device}), "
            "{out}, 'ones'), {requires_grad})",
       doc="A tensor of ones.\n\n    >>> tensorlib.ones(2, dtype=tensorlib.int64).tolist()\n"
           "    [1, 1]"),
    op("full", f"int[]! size, Scalar fill_value, *, object out=None, {FACTORY}", F,
       impl="_finish(_into_out(_full({size}, {fill_value}, {dtype}, {device}), {out}, 'full'), "
            "{requires_grad})",
       doc="A tensor filled with ``fill_value`` (dtype inferred from it).\n\n"
           "    >>> tensorlib.full((2,), 7).tolist()\n    [7, 7]"),
    op("empty_like", f"Tensor self, *, {LIKE}", F,
       impl="_finish(_like({self}, {dtype}, {device}, {memory_format}), {requires_grad})",
       doc="An uninitialized tensor shaped like ``input``.\n\n"
           "    >>> tensorlib.empty_like(tensorlib.zeros(2, 3)).shape\n    tensorlib.Size([2, 3])"),
    op("zeros_like", f"Tensor self, *, {LIKE}", F,
       impl="_finish(_zero_(_like({self}, {dtype}, {device}, {memory_format})), {requires_grad})",
       doc="Zeros shaped like ``input``.\n\n"
           "    >>> tensorlib.zeros_like(tensorlib.ones(2)).tolist()\n    [0.0, 0.0]"),
    op("ones_like", f"Tensor self, *, {LIKE}", F,
       impl="_finish(_fill_(_like({self}, {dtype}, {device}, {memory_format}), 1), "
            "{requires_grad})",
       doc="Ones shaped like ``input``.\n\n"
           "    >>> tensorlib.ones_like(tensorlib.zeros(2)).tolist()\n    [1.0, 1.0]"),
    op("full_like", f"Tensor self, Scalar fill_value, *, {LIKE}", F,
       impl="_finish(_fill_(_like({self}, {dtype}, {device}, {memory_format}), {fill_value}), "
            "{requires_grad})",
       doc="``fill_value`` shaped like ``input``.\n\n"
           "    >>> tensorlib.full_like(tensorlib.zeros(2), 4).tolist()\n    [4.0, 4.0]"),
    op("new_empty",
       "Tensor self, int[]... size, *, dtype? dtype=None, device? device=None, "
       "bool? requires_grad=False", M,
       impl="_finish(_new_empty({size}, {dtype} or {self}._dtype, "
            "_devarg({device}) if {device} is not None else {self}._storage.device), "
            "{requires_grad})",
       doc="An uninitialized tensor with self's dtype and device.\n\n"
           "    >>> tensorlib.zeros(1, dtype=tensorlib.int32).new_empty(2).dtype\n"
           "    tensorlib.int32"),
    op("new_zeros",
       "Tensor self, int[]... size, *, dtype? dtype=None, device? device=None, "
       "bool? requires_grad=False", M,
       impl="_finish(_zeros({size}, {dtype} or {self}._dtype, {device}), {requires_grad})",
       doc="Zeros with self's dtype.\n\n    >>> tensorlib.ones(1, "
           "dtype=tensorlib.int64).new_zeros(2).tolist()\n    [0, 0]"),
    op("new_ones",
       "Tensor self, int[]... size, *, dtype? dtype=None, device? device=None, "
       "bool? requires_grad=False", M,
       impl="_finish(_full({size}, 1, {dtype} or {self}._dtype, {device}), {requires_grad})",
       doc="Ones with self's dtype.\n\n    >>> tensorlib.zeros(1, "
           "dtype=tensorlib.int64).new_ones(2).tolist()\n    [1, 1]"),
    op("new_full",
       "Tensor self, int[]! size, Scalar fill_value, *, dtype? dtype=None, device? device=None, "
       "bool? requires_grad=False", M,
       impl="_finish(_full({size}, {fill_value}, {dtype} or {self}._dtype, {device}), "
            "{requires_grad})",
       doc="``fill_value`` with self's dtype.\n\n"
           "    >>> tensorlib.zeros(1).new_full((2,), 3).tolist()\n    [3.0, 3.0]"),
    op("new_tensor",
       "Tensor self, object data, *, dtype? dtype=None, device? device=None, "
       "bool requires_grad=False", M,
       impl="_finish(_tensor_copy({data}, {dtype} or {self}._dtype, {device}, "
            "'tensor.new_tensor'), {requires_grad})",
       doc="A copy of ``data`` with self's dtype.\n\n"
           "    >>> tensorlib.zeros(1).new_tensor([1, 2]).dtype\n    tensorlib.float32"),
    op("tensor",
       "object data, *, dtype? dtype=None, device? device=None, bool requires_grad=False, "
       "bool pin_memory=False", F,
       impl="_finish(_tensor_copy({data}, {dtype}, {device}, 'tensorlib.tensor'), {requires_grad})",
       doc="A tensor copied from nested lists, scalars, NumPy arrays or tensors.\n\n"
           "    >>> tensorlib.tensor([[1, 2], [3, 4]]).dtype\n    tensorlib.int64"),
    op("as_tensor", "object data, *, dtype? dtype=None, device? device=None", F,
       impl="_as_tensor({data}, {dtype}, {device})",
       doc="Like tensor(), but shares memory with a tensor or ndarray when it can.\n\n"
           "    >>> a = numpy.zeros(2); tensorlib.as_tensor(a).data_ptr() == a.ctypes.data\n"
           "    True"),
    op("empty_strided", f"int[]! size, int[]! stride, *, {FACTORY}", F,
       impl="_finish(_empty_strided({size}, {stride}, {dtype} or default_float_dtype(), "
            "_devarg({device})), {requires_grad})",
       doc="An uninitialized tensor with the given strides.\n\n"
           "    >>> tensorlib.empty_strided((2, 3), (1, 2)).stride()\n    (1, 2)"),
    op("scalar_tensor", f"Scalar s, *, {FACTORY}", F,
       impl="_finish(_tensor_from_data({s}, {dtype} or default_float_dtype(), _devarg({device}), "
            "True), {requires_grad})",
       doc="A 0-d tensor (default float dtype).\n\n    >>> tensorlib.scalar_tensor(3).dtype\n"
           "    tensorlib.float32"),
    op("arange", f"Scalar start, Scalar end=None, Scalar step=1, *, object out=None, {FACTORY}", F,
       impl="_finish(_arange({start}, {end}, {step}, {dtype}, {device}, {out}), {requires_grad})",
       doc="Values from ``start`` to ``end`` (exclusive) by ``step``; int64 unless a bound is a "
           "float.\n\n"
           "    >>> tensorlib.arange(1, 4).tolist()\n    [1, 2, 3]"),
    op("linspace", f"Scalar start, Scalar end, int steps, *, object out=None, {FACTORY}", F,
       impl="_finish(_linspace({start}, {end}, {steps}, {dtype}, {device}, {out}, 10.0, False), "
            "{requires_grad})",
       doc="``steps`` evenly spaced values from ``start`` to ``end`` inclusive.\n\n"
           "    >>> tensorlib.linspace(0, 1, 3).tolist()\n    [0.0, 0.5, 1.0]"),
    op("logspace",
       f"Scalar start, Scalar end, int steps, float base=10.0, *, object out=None, {FACTORY}", F,
       impl="_finish(_linspace({start}, {end}, {steps}, {dtype}, {device}, {out}, {base}, True), "
            "{requires_grad})",
       doc="``base ** linspace(start, end, steps)``.\n\n"
           "    >>> tensorlib.logspace(0, 2, 3).tolist()\n    [1.0, 10.0, 100.0]"),
    op("eye", f"int n, int? m=None, *, object out=None, {FACTORY}", F,
       impl="_finish(_eye({n}, {m}, {dtype}, {device}, {out}), {requires_grad})",
       doc="An identity matrix.\n\n    >>> tensorlib.eye(2).tolist()\n"
           "    [[1.0, 0.0], [0.0, 1.0]]"),
    op("meshgrid", "object... tensors, object indexing=None", F,
       impl="_meshgrid({tensors}, {indexing})",
       doc="Coordinate grids (views) from 1-D tensors.\n\n"
           "    >>> x, y = tensorlib.meshgrid(tensorlib.arange(2), tensorlib.arange(3), "
           "indexing='ij')\n"
           "    >>> x.shape\n    tensorlib.Size([2, 3])"),

]
