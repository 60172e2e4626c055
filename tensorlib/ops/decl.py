"""THE declarations file: every tensorlib op, declared once.

Each entry gives the op's name, its signature (see codegen.py for the little language), its
variants (``function``: ``tensorlib.name(...)``; ``method``: ``Tensor.name(...)``), aliases,
the implementation it dispatches to (a cdef function in tensorlib/_core/*.pxi; default
``_<name>(args in order)``), and its documentation with a short example.

The autograd slots are part of every declaration: ``node`` (the grad_fn's type name, as in
PyTorch), ``view_of`` (the input whose storage a view op's output shares), ``saves`` (what the
node keeps, keyed by which inputs need grad) and ``backward`` (the formula, in tensorlib ops).
The autograd layer (issue 4) reads them from here; nothing else declares an op.
"""

F = "function"
M = "method"
FM = "function method"

# Keyword tails shared by the factory functions.
FACTORY = "dtype? dtype=None, object layout=None, device? device=None, bool requires_grad=False, bool pin_memory=False"
LIKE = "dtype? dtype=None, object layout=None, device? device=None, bool requires_grad=False, object memory_format=None"


def op(name, sig, variants=FM, impl=None, doc=None, aliases=(), node=None, view_of=None,
       saves=None, backward=None, input_name="input"):
    return dict(name=name, sig=sig, variants=variants, impl=impl, doc=doc, aliases=aliases,
                node=node, view_of=view_of, saves=saves, backward=backward, input_name=input_name)


OPS = [
    # ------------------------------------------------------------------ views (no copy)
    op("view", "Tensor self, object... shape", M, impl="_view_dispatch({self}, {shape})",
       node="ViewBackward0", view_of="self",
       doc="A view with a new shape (PyTorch's compatibility rule; one -1 is inferred), or a "
           "reinterpretation as another dtype.\n\n    >>> tensorlib.arange(6).view(2, -1).shape\n"
           "    tensorlib.Size([2, 3])"),
    op("view_as", "Tensor self, Tensor other", M, impl="_view({self}, tuple({other}.shape))",
       node="ViewBackward0", view_of="self",
       doc="``self.view(other.shape)``.\n\n    >>> tensorlib.arange(4).view_as(tensorlib.zeros(2, 2)).shape\n"
           "    tensorlib.Size([2, 2])"),
    op("reshape", "Tensor self, int[]... shape", impl="_reshape({self}, {shape})",
       node="ViewBackward0", view_of="self",
       doc="A view when the view rule allows one, otherwise a copy.\n\n"
           "    >>> tensorlib.arange(6).reshape(3, 2).shape\n    tensorlib.Size([3, 2])"),
    op("reshape_as", "Tensor self, Tensor other", M, impl="_reshape({self}, tuple({other}.shape))",
       node="ViewBackward0", view_of="self",
       doc="``self.reshape(other.shape)``.\n\n    >>> tensorlib.arange(4).reshape_as(tensorlib.zeros(2, 2)).shape\n"
           "    tensorlib.Size([2, 2])"),
    op("transpose", "Tensor self, int dim0, int dim1", aliases=("swapaxes", "swapdims"),
       node="TransposeBackward0", view_of="self",
       doc="A view with dims ``dim0`` and ``dim1`` swapped.\n\n"
           "    >>> tensorlib.zeros(2, 3).transpose(0, 1).shape\n    tensorlib.Size([3, 2])"),
    op("t", "Tensor self", node="TBackward0", view_of="self",
       doc="Transpose of a tensor with at most 2 dims.\n\n"
           "    >>> tensorlib.zeros(2, 3).t().stride()\n    (1, 3)"),
    op("permute", "Tensor self, int[]... dims", node="PermuteBackward0", view_of="self",
       doc="A view with dims reordered.\n\n"
           "    >>> tensorlib.zeros(2, 3, 4).permute(2, 0, 1).shape\n    tensorlib.Size([4, 2, 3])"),
    op("movedim", "Tensor self, object source, object destination", aliases=("moveaxis",),
       node="PermuteBackward0", view_of="self",
       doc="A view with dims ``source`` moved to positions ``destination``.\n\n"
           "    >>> tensorlib.zeros(2, 3, 4).movedim(0, -1).shape\n    tensorlib.Size([3, 4, 2])"),
    op("expand", "Tensor self, int[]... size, *, bool implicit=False", M,
       impl="_expand({self}, {size})", node="ExpandBackward0", view_of="self",
       doc="A view with size-1 dims repeated (stride 0); -1 keeps a size.\n\n"
           "    >>> tensorlib.zeros(3, 1).expand(-1, 4).stride()\n    (1, 0)"),
    op("expand_as", "Tensor self, Tensor other", M, impl="_expand({self}, tuple({other}.shape))",
       node="ExpandBackward0", view_of="self",
       doc="``self.expand(other.shape)``.\n\n    >>> tensorlib.zeros(1).expand_as(tensorlib.zeros(3)).shape\n"
           "    tensorlib.Size([3])"),
    op("broadcast_to", "Tensor self, int[] size", impl="_expand({self}, {size})",
       node="ExpandBackward0", view_of="self",
       doc="A view broadcast to ``size``.\n\n    >>> tensorlib.broadcast_to(tensorlib.zeros(3), (2, 3)).shape\n"
           "    tensorlib.Size([2, 3])"),
    op("broadcast_tensors", "object... tensors", F, impl="_broadcast_tensors({tensors})",
       node="ExpandBackward0",
       doc="Views of the tensors broadcast to their common shape.\n\n"
           "    >>> a, b = tensorlib.broadcast_tensors(tensorlib.zeros(3, 1), tensorlib.zeros(4))\n"
           "    >>> a.shape\n    tensorlib.Size([3, 4])"),
    op("narrow", "Tensor self, int dim, int start, int length", node="SliceBackward0", view_of="self",
       doc="A view of ``length`` elements from ``start`` along ``dim``.\n\n"
           "    >>> tensorlib.arange(5).narrow(0, 1, 2).tolist()\n    [1, 2]"),
    op("select", "Tensor self, int dim, int index", node="SelectBackward0", view_of="self",
       doc="A view of index ``index`` along ``dim`` (that dim removed).\n\n"
           "    >>> tensorlib.arange(6).view(2, 3).select(1, 2).tolist()\n    [2, 5]"),
    op("unsqueeze", "Tensor self, int dim", node="UnsqueezeBackward0", view_of="self",
       doc="A view with a size-1 dim inserted at ``dim``.\n\n"
           "    >>> tensorlib.zeros(3).unsqueeze(0).shape\n    tensorlib.Size([1, 3])"),
    op("squeeze", "Tensor self, object dim=None", node="SqueezeBackward0", view_of="self",
       doc="A view without size-1 dims (all, or those in ``dim``; a non-1 dim is left alone).\n\n"
           "    >>> tensorlib.zeros(1, 3, 1).squeeze().shape\n    tensorlib.Size([3])"),
    op("flatten", "Tensor self, int start_dim=0, int end_dim=-1", node="ViewBackward0", view_of="self",
       doc="Dims ``start_dim..end_dim`` merged into one (a view when possible).\n\n"
           "    >>> tensorlib.zeros(2, 3, 4).flatten(1).shape\n    tensorlib.Size([2, 12])"),
    op("unflatten", "Tensor self, int dim, int[] sizes", node="ViewBackward0", view_of="self",
       doc="Dim ``dim`` split into ``sizes`` (one -1 allowed).\n\n"
           "    >>> tensorlib.zeros(2, 12).unflatten(1, (3, -1)).shape\n    tensorlib.Size([2, 3, 4])"),
    op("as_strided", "Tensor self, int[] size, int[] stride, int? storage_offset=None",
       impl="_as_strided({self}, {size}, {stride}, {storage_offset})",
       node="AsStridedBackward0", view_of="self",
       doc="A view with explicit geometry (checked against the storage's bounds).\n\n"
           "    >>> tensorlib.arange(4).as_strided((2, 2), (1, 1)).tolist()\n    [[0, 1], [1, 2]]"),
    op("unfold", "Tensor self, int dimension, int size, int step", M, node="UnfoldBackward0",
       view_of="self",
       doc="A view of all windows of ``size`` along ``dimension`` with stride ``step``.\n\n"
           "    >>> tensorlib.arange(5).unfold(0, 2, 2).tolist()\n    [[0, 1], [2, 3]]"),
    op("diagonal", "Tensor self, int offset=0, int dim1=0, int dim2=1", node="DiagonalBackward0",
       view_of="self",
       doc="A view of a diagonal, appended as the last dim.\n\n"
           "    >>> tensorlib.arange(9).view(3, 3).diagonal().tolist()\n    [0, 4, 8]"),
    op("split", "Tensor self, object split_size_or_sections, int dim=0", node="SplitBackward0",
       view_of="self",
       doc="Views of equal pieces (the last may be smaller) or of the given sizes.\n\n"
           "    >>> [p.tolist() for p in tensorlib.arange(5).split(2)]\n    [[0, 1], [2, 3], [4]]"),
    op("chunk", "Tensor self, int chunks, int dim=0", node="SplitBackward0", view_of="self",
       doc="Views of at most ``chunks`` pieces.\n\n"
           "    >>> len(tensorlib.arange(5).chunk(3))\n    3"),
    op("unbind", "Tensor self, int dim=0", node="UnbindBackward0", view_of="self",
       doc="Views of every index along ``dim``.\n\n"
           "    >>> [t.tolist() for t in tensorlib.arange(4).view(2, 2).unbind(1)]\n    [[0, 2], [1, 3]]"),
    op("detach", "Tensor self", node=None,
       doc="The same data cut from the graph (shares the version counter).\n\n"
           "    >>> tensorlib.ones(2, requires_grad=True).detach().requires_grad\n    False"),
    op("contiguous", "Tensor self, *, object memory_format=None", M, impl="_contiguous({self})",
       node="CloneBackward0",
       doc="Self when already contiguous, else a contiguous copy.\n\n"
           "    >>> t = tensorlib.zeros(2, 3); t.contiguous() is t\n    True"),
    # in-place metadata changes
    op("t_", "Tensor self", M, impl="_set_geometry_inplace({self}, _t({self}))",
       doc="Transpose in place (metadata only).\n\n    >>> tensorlib.zeros(2, 3).t_().shape\n"
           "    tensorlib.Size([3, 2])"),
    op("transpose_", "Tensor self, int dim0, int dim1", M, aliases=("swapaxes_", "swapdims_"),
       impl="_set_geometry_inplace({self}, _transpose({self}, {dim0}, {dim1}))",
       doc="Swap two dims in place (metadata only).\n\n    >>> tensorlib.zeros(2, 3).transpose_(0, 1).shape\n"
           "    tensorlib.Size([3, 2])"),
    op("squeeze_", "Tensor self, object dim=None", M,
       impl="_set_geometry_inplace({self}, _squeeze({self}, {dim}))",
       doc="Squeeze in place.\n\n    >>> tensorlib.zeros(1, 2).squeeze_().shape\n    tensorlib.Size([2])"),
    op("unsqueeze_", "Tensor self, int dim", M,
       impl="_set_geometry_inplace({self}, _unsqueeze({self}, {dim}))",
       doc="Unsqueeze in place.\n\n    >>> tensorlib.zeros(2).unsqueeze_(1).shape\n    tensorlib.Size([2, 1])"),

    # ------------------------------------------------------------------ copies
    op("clone", "Tensor self, *, object memory_format=None", impl="_clone({self}, {memory_format})",
       node="CloneBackward0",
       doc="A copy with its own memory (same strides when they are dense).\n\n"
           "    >>> t = tensorlib.ones(2); c = t.clone(); c[0] = 5; t.tolist()\n    [1.0, 1.0]"),
    op("copy_", "Tensor self, object src, bool non_blocking=False", M,
       impl="_copy_({self}, {src}, {non_blocking})", node="CopyBackwards",
       doc="Copy ``src`` into self in place, broadcasting and converting dtype.\n\n"
           "    >>> tensorlib.zeros(2, 2).copy_(tensorlib.tensor([1, 2])).tolist()\n    [[1.0, 2.0], [1.0, 2.0]]"),
    op("fill_", "Tensor self, Scalar value", M, node="FillBackward0",
       doc="Set every element to ``value``.\n\n    >>> tensorlib.zeros(2).fill_(3).tolist()\n    [3.0, 3.0]"),
    op("zero_", "Tensor self", M, node="ZeroBackward0",
       doc="Set every element to zero.\n\n    >>> tensorlib.ones(2).zero_().tolist()\n    [0.0, 0.0]"),
    op("cat", "Tensor[] tensors, int dim=0, *, object out=None", F, aliases=("concat", "concatenate"),
       node="CatBackward0",
       doc="Concatenate along ``dim`` (dtypes promote; shapes must match elsewhere).\n\n"
           "    >>> tensorlib.cat([tensorlib.zeros(1), tensorlib.ones(2)]).tolist()\n    [0.0, 1.0, 1.0]"),
    op("stack", "Tensor[] tensors, int dim=0, *, object out=None", F, node="StackBackward0",
       doc="Stack equal-shaped tensors along a new dim.\n\n"
           "    >>> tensorlib.stack([tensorlib.zeros(2), tensorlib.ones(2)]).shape\n    tensorlib.Size([2, 2])"),
    op("flip", "Tensor self, int[]... dims", node="FlipBackward0",
       doc="A copy with the order of elements reversed along ``dims``.\n\n"
           "    >>> tensorlib.arange(3).flip(0).tolist()\n    [2, 1, 0]"),
    op("fliplr", "Tensor self", impl="_flip({self}, (1,))", node="FlipBackward0",
       doc="Flip the columns (dim 1).\n\n    >>> tensorlib.arange(4).view(2, 2).fliplr().tolist()\n    [[1, 0], [3, 2]]"),
    op("flipud", "Tensor self", impl="_flip({self}, (0,))", node="FlipBackward0",
       doc="Flip the rows (dim 0).\n\n    >>> tensorlib.arange(4).view(2, 2).flipud().tolist()\n    [[2, 3], [0, 1]]"),
    op("repeat", "Tensor self, int[]... repeats", M, node="RepeatBackward0",
       doc="A copy tiled ``repeats`` times along each dim.\n\n"
           "    >>> tensorlib.tensor([1, 2]).repeat(2).tolist()\n    [1, 2, 1, 2]"),
    op("tile", "Tensor self, int[]... dims", node="RepeatBackward0",
       doc="Like repeat, padding ``dims`` with leading 1s.\n\n"
           "    >>> tensorlib.tensor([[1, 2]]).tile(2).tolist()\n    [[1, 2, 1, 2]]"),
    op("roll", "Tensor self, object shifts, object dims=None", node="RollBackward0",
       doc="A copy rotated by ``shifts`` along ``dims`` (flattened when dims is None).\n\n"
           "    >>> tensorlib.arange(4).roll(1).tolist()\n    [3, 0, 1, 2]"),
    op("tril", "Tensor self, int diagonal=0, *, object out=None",
       impl="_into_out(_tril({self}, {diagonal}, True, False), {out}, 'tril')", node="TrilBackward0",
       doc="A copy with elements above diagonal ``diagonal`` zeroed.\n\n"
           "    >>> tensorlib.ones(2, 2).tril().tolist()\n    [[1.0, 0.0], [1.0, 1.0]]"),
    op("triu", "Tensor self, int diagonal=0, *, object out=None",
       impl="_into_out(_tril({self}, {diagonal}, False, False), {out}, 'triu')", node="TriuBackward0",
       doc="A copy with elements below diagonal ``diagonal`` zeroed.\n\n"
           "    >>> tensorlib.ones(2, 2).triu().tolist()\n    [[1.0, 1.0], [0.0, 1.0]]"),
    op("tril_", "Tensor self, int diagonal=0", M, impl="_tril({self}, {diagonal}, True, True)",
       node="TrilBackward0",
       doc="tril in place.\n\n    >>> tensorlib.ones(2, 2).tril_().tolist()\n    [[1.0, 0.0], [1.0, 1.0]]"),
    op("triu_", "Tensor self, int diagonal=0", M, impl="_tril({self}, {diagonal}, False, True)",
       node="TriuBackward0",
       doc="triu in place.\n\n    >>> tensorlib.ones(2, 2).triu_().tolist()\n    [[1.0, 1.0], [0.0, 1.0]]"),

    # ------------------------------------------------------------------ creation
    op("empty", f"int[]... size, *, object out=None, {FACTORY}, object memory_format=None", F,
       impl="_finish(_empty({size}, {dtype}, {device}, {out}), {requires_grad})",
       doc="An uninitialized tensor.\n\n    >>> tensorlib.empty(2, 3).shape\n    tensorlib.Size([2, 3])"),
    op("zeros", f"int[]... size, *, object out=None, {FACTORY}", F,
       impl="_finish(_into_out(_zeros({size}, {dtype}, {device}), {out}, 'zeros'), {requires_grad})",
       doc="A tensor of zeros.\n\n    >>> tensorlib.zeros(2).tolist()\n    [0.0, 0.0]"),
    op("ones", f"int[]... size, *, object out=None, {FACTORY}", F,
       impl="_finish(_into_out(_full({size}, 1, {dtype} or default_float_dtype(), {device}), {out}, 'ones'), {requires_grad})",
       doc="A tensor of ones.\n\n    >>> tensorlib.ones(2, dtype=tensorlib.int64).tolist()\n    [1, 1]"),
    op("full", f"int[] size, Scalar fill_value, *, object out=None, {FACTORY}", F,
       impl="_finish(_into_out(_full({size}, {fill_value}, {dtype}, {device}), {out}, 'full'), {requires_grad})",
       doc="A tensor filled with ``fill_value`` (dtype inferred from it).\n\n"
           "    >>> tensorlib.full((2,), 7).tolist()\n    [7, 7]"),
    op("empty_like", f"Tensor self, *, {LIKE}", F,
       impl="_finish(_like({self}, {dtype}, {device}, {memory_format}), {requires_grad})",
       doc="An uninitialized tensor shaped like ``input``.\n\n"
           "    >>> tensorlib.empty_like(tensorlib.zeros(2, 3)).shape\n    tensorlib.Size([2, 3])"),
    op("zeros_like", f"Tensor self, *, {LIKE}", F,
       impl="_finish(_zero_(_like({self}, {dtype}, {device}, {memory_format})), {requires_grad})",
       doc="Zeros shaped like ``input``.\n\n    >>> tensorlib.zeros_like(tensorlib.ones(2)).tolist()\n    [0.0, 0.0]"),
    op("ones_like", f"Tensor self, *, {LIKE}", F,
       impl="_finish(_fill_(_like({self}, {dtype}, {device}, {memory_format}), 1), {requires_grad})",
       doc="Ones shaped like ``input``.\n\n    >>> tensorlib.ones_like(tensorlib.zeros(2)).tolist()\n    [1.0, 1.0]"),
    op("full_like", f"Tensor self, Scalar fill_value, *, {LIKE}", F,
       impl="_finish(_fill_(_like({self}, {dtype}, {device}, {memory_format}), {fill_value}), {requires_grad})",
       doc="``fill_value`` shaped like ``input``.\n\n    >>> tensorlib.full_like(tensorlib.zeros(2), 4).tolist()\n    [4.0, 4.0]"),
    op("new_empty", "Tensor self, int[]... size, *, dtype? dtype=None, device? device=None, bool requires_grad=False", M,
       impl="_finish(_new_empty({size}, {dtype} or {self}._dtype, _devarg({device}) if {device} is not None else {self}._storage.device), {requires_grad})",
       doc="An uninitialized tensor with self's dtype and device.\n\n"
           "    >>> tensorlib.zeros(1, dtype=tensorlib.int32).new_empty(2).dtype\n    tensorlib.int32"),
    op("new_zeros", "Tensor self, int[]... size, *, dtype? dtype=None, device? device=None, bool requires_grad=False", M,
       impl="_finish(_zeros({size}, {dtype} or {self}._dtype, {device}), {requires_grad})",
       doc="Zeros with self's dtype.\n\n    >>> tensorlib.ones(1, dtype=tensorlib.int64).new_zeros(2).tolist()\n    [0, 0]"),
    op("new_ones", "Tensor self, int[]... size, *, dtype? dtype=None, device? device=None, bool requires_grad=False", M,
       impl="_finish(_full({size}, 1, {dtype} or {self}._dtype, {device}), {requires_grad})",
       doc="Ones with self's dtype.\n\n    >>> tensorlib.zeros(1, dtype=tensorlib.int64).new_ones(2).tolist()\n    [1, 1]"),
    op("new_full", "Tensor self, int[] size, Scalar fill_value, *, dtype? dtype=None, device? device=None, bool requires_grad=False", M,
       impl="_finish(_full({size}, {fill_value}, {dtype} or {self}._dtype, {device}), {requires_grad})",
       doc="``fill_value`` with self's dtype.\n\n    >>> tensorlib.zeros(1).new_full((2,), 3).tolist()\n    [3.0, 3.0]"),
    op("new_tensor", "Tensor self, object data, *, dtype? dtype=None, device? device=None, bool requires_grad=False", M,
       impl="_finish(_tensor_from_data({data}, {dtype} or {self}._dtype, _devarg({device}), True), {requires_grad})",
       doc="A copy of ``data`` with self's dtype.\n\n    >>> tensorlib.zeros(1).new_tensor([1, 2]).dtype\n    tensorlib.float32"),
    op("tensor", "object data, *, dtype? dtype=None, device? device=None, bool requires_grad=False, bool pin_memory=False", F,
       impl="_finish(_tensor_from_data({data}, {dtype} or default_float_dtype(), _devarg({device}), {dtype} is not None), {requires_grad})",
       doc="A tensor copied from nested lists, scalars, NumPy arrays or tensors.\n\n"
           "    >>> tensorlib.tensor([[1, 2], [3, 4]]).dtype\n    tensorlib.int64"),
    op("as_tensor", "object data, dtype? dtype=None, device? device=None", F,
       impl="_as_tensor({data}, {dtype}, {device})",
       doc="Like tensor(), but shares memory with a tensor or ndarray when it can.\n\n"
           "    >>> a = numpy.zeros(2); tensorlib.as_tensor(a).data_ptr() == a.ctypes.data\n    True"),
    op("empty_strided", f"int[] size, int[] stride, *, {FACTORY}", F,
       impl="_finish(_empty_strided({size}, {stride}, {dtype} or default_float_dtype(), _devarg({device})), {requires_grad})",
       doc="An uninitialized tensor with the given strides.\n\n"
           "    >>> tensorlib.empty_strided((2, 3), (1, 2)).stride()\n    (1, 2)"),
    op("scalar_tensor", f"Scalar s, *, {FACTORY}", F,
       impl="_finish(_tensor_from_data({s}, {dtype} or default_float_dtype(), _devarg({device}), True), {requires_grad})",
       doc="A 0-d tensor (default float dtype).\n\n    >>> tensorlib.scalar_tensor(3).dtype\n    tensorlib.float32"),
    op("arange", f"Scalar start, Scalar end=None, Scalar step=1, *, object out=None, {FACTORY}", F,
       impl="_finish(_arange({start}, {end}, {step}, {dtype}, {device}, {out}), {requires_grad})",
       doc="Values from ``start`` to ``end`` (exclusive) by ``step``; int64 unless a bound is a float.\n\n"
           "    >>> tensorlib.arange(1, 4).tolist()\n    [1, 2, 3]"),
    op("linspace", f"Scalar start, Scalar end, int steps, *, object out=None, {FACTORY}", F,
       impl="_finish(_linspace({start}, {end}, {steps}, {dtype}, {device}, {out}, 10.0, False), {requires_grad})",
       doc="``steps`` evenly spaced values from ``start`` to ``end`` inclusive.\n\n"
           "    >>> tensorlib.linspace(0, 1, 3).tolist()\n    [0.0, 0.5, 1.0]"),
    op("logspace", f"Scalar start, Scalar end, int steps, float base=10.0, *, object out=None, {FACTORY}", F,
       impl="_finish(_linspace({start}, {end}, {steps}, {dtype}, {device}, {out}, {base}, True), {requires_grad})",
       doc="``base ** linspace(start, end, steps)``.\n\n"
           "    >>> tensorlib.logspace(0, 2, 3).tolist()\n    [1.0, 10.0, 100.0]"),
    op("eye", f"int n, int? m=None, *, object out=None, {FACTORY}", F,
       impl="_finish(_eye({n}, {m}, {dtype}, {device}, {out}), {requires_grad})",
       doc="An identity matrix.\n\n    >>> tensorlib.eye(2).tolist()\n    [[1.0, 0.0], [0.0, 1.0]]"),
    op("meshgrid", "object... tensors, object indexing=None", F, impl="_meshgrid({tensors}, {indexing})",
       doc="Coordinate grids (views) from 1-D tensors.\n\n"
           "    >>> x, y = tensorlib.meshgrid(tensorlib.arange(2), tensorlib.arange(3), indexing='ij')\n"
           "    >>> x.shape\n    tensorlib.Size([2, 3])"),

    # ------------------------------------------------------------------ random (Philox streams)
    op("rand", f"int[]... size, *, object generator=None, object out=None, {FACTORY}", F,
       impl="_finish(_into_out(_rand({size}, {generator}, {dtype}, {device}), {out}, 'rand'), {requires_grad})",
       doc="Uniform samples on [0, 1).\n\n    >>> tensorlib.manual_seed(0); tensorlib.rand(2).shape\n"
           "    tensorlib.Size([2])"),
    op("randn", f"int[]... size, *, object generator=None, object out=None, {FACTORY}", F,
       impl="_finish(_into_out(_randn({size}, {generator}, {dtype}, {device}), {out}, 'randn'), {requires_grad})",
       doc="Standard normal samples.\n\n    >>> tensorlib.randn(2, 3).shape\n    tensorlib.Size([2, 3])"),
    op("randint", f"object low, object high=None, object size=None, *, object generator=None, object out=None, {FACTORY}", F,
       impl="_finish(_into_out(_randint({low}, {high}, {size}, {generator}, {dtype}, {device}), {out}, 'randint'), {requires_grad})",
       doc="Integers uniform on [low, high): ``randint(high, size)`` or ``randint(low, high, size)``.\n\n"
           "    >>> tensorlib.randint(0, 3, (4,)).dtype\n    tensorlib.int64"),
    op("randperm", f"int n, *, object generator=None, object out=None, {FACTORY}", F,
       impl="_finish(_into_out(_randperm({n}, {generator}, {dtype}, {device}), {out}, 'randperm'), {requires_grad})",
       doc="A random permutation of 0..n-1.\n\n    >>> sorted(tensorlib.randperm(4).tolist())\n    [0, 1, 2, 3]"),
    op("rand_like", f"Tensor self, *, {LIKE}", F,
       impl="_finish(_uniform_(_like({self}, {dtype}, {device}, {memory_format}), 0.0, 1.0, None), {requires_grad})",
       doc="Uniform samples shaped like ``input``.\n\n    >>> tensorlib.rand_like(tensorlib.zeros(2)).shape\n"
           "    tensorlib.Size([2])"),
    op("randn_like", f"Tensor self, *, {LIKE}", F,
       impl="_finish(_normal_(_like({self}, {dtype}, {device}, {memory_format}), 0.0, 1.0, None), {requires_grad})",
       doc="Normal samples shaped like ``input``.\n\n    >>> tensorlib.randn_like(tensorlib.zeros(2)).shape\n"
           "    tensorlib.Size([2])"),
    op("randint_like", f"Tensor self, object low, object high=None, *, {LIKE}", F,
       impl="_finish(_random_(_like({self}, {dtype}, {device}, {memory_format}), {low} if {high} is not None else 0, {high} if {high} is not None else {low}, None), {requires_grad})",
       doc="Random integers shaped like ``input``.\n\n    >>> tensorlib.randint_like(tensorlib.zeros(2), 5).shape\n"
           "    tensorlib.Size([2])"),
    op("uniform_", "Tensor self, float from_=0.0, float to=1.0, *, object generator=None", M,
       doc="Fill with uniform samples on [from_, to).\n\n    >>> float(tensorlib.empty(3).uniform_(2, 3).min()) >= 2\n    True"),
    op("normal_", "Tensor self, float mean=0.0, float std=1.0, *, object generator=None", M,
       doc="Fill with normal samples.\n\n    >>> tensorlib.empty(3).normal_(0, 1).shape\n    tensorlib.Size([3])"),
    op("random_", "Tensor self, object from_=None, object to=None, *, object generator=None", M,
       doc="Fill with integers uniform on [from_, to) (``random_(to)``: [0, to)).\n\n"
           "    >>> tensorlib.empty(3).random_(0, 2).tolist() in ([a, b, c] for a in (0., 1.) for b in (0., 1.) for c in (0., 1.))\n    True"),
    op("bernoulli_", "Tensor self, object p=0.5, *, object generator=None", M,
       doc="Fill with 1 with probability ``p`` (a number or a tensor), else 0.\n\n"
           "    >>> set(tensorlib.empty(8).bernoulli_(0.5).tolist()) <= {0.0, 1.0}\n    True"),
    op("bernoulli", "Tensor self, object p=None, *, object generator=None",
       doc="Samples 1 with the probability given by each element of ``input``.\n\n"
           "    >>> tensorlib.bernoulli(tensorlib.ones(3)).tolist()\n    [1.0, 1.0, 1.0]"),
    op("normal", f"object mean, object std=1.0, object size=None, *, object generator=None, object out=None, {FACTORY}", F,
       impl="_finish(_into_out(_normal({mean}, {std}, {size}, {generator}, {dtype}, {device}), {out}, 'normal'), {requires_grad})",
       doc="Normal samples with scalar or tensor mean/std.\n\n"
           "    >>> tensorlib.normal(0.0, 1.0, size=(2,)).shape\n    tensorlib.Size([2])"),

    # ---- reductions
    op("sum", "Tensor self, object dim=None, bool keepdim=False, *, dtype? dtype=None, object out=None",
       node="SumBackward0",
       doc="Sum over all dims, a dim or a tuple of dims (bool and integers give int64).\n\n"
           "    >>> tensorlib.arange(6).view(2, 3).sum(1).tolist()\n    [3, 12]"),
    op("mean", "Tensor self, object dim=None, bool keepdim=False, *, dtype? dtype=None, object out=None",
       node="MeanBackward0",
       doc="Mean over all dims, a dim or a tuple of dims (floating-point input or dtype).\n\n"
           "    >>> tensorlib.tensor([[1., 2.], [3., 5.]]).mean(0).tolist()\n    [2.0, 3.5]"),
    op("prod", "Tensor self, object dim=None, bool keepdim=False, *, dtype? dtype=None, object out=None",
       node="ProdBackward0",
       doc="Product over all elements or along one dim (bool and integers give int64).\n\n"
           "    >>> tensorlib.tensor([[1, 2], [3, 4]]).prod(1).tolist()\n    [2, 12]"),
    op("var", "Tensor self, object dim=None, object unbiased=None, bool keepdim=False, *, object correction=None, object out=None",
       node="VarBackward0",
       doc="Variance, divided by ``N - correction`` (unbiased: correction 1, by default).\n\n"
           "    >>> tensorlib.tensor([1., 2., 3., 4.]).var().item()\n    1.6666666269302368"),
    op("std", "Tensor self, object dim=None, object unbiased=None, bool keepdim=False, *, object correction=None, object out=None",
       node="StdBackward0",
       doc="Standard deviation: the square root of var (unbiased by default).\n\n"
           "    >>> tensorlib.tensor([1., 3.]).std().item()\n    1.4142135381698608"),
    op("var_mean", "Tensor self, object dim=None, object unbiased=None, bool keepdim=False, *, object correction=None", F,
       node="VarMeanBackward0",
       doc="``(var, mean)`` in one call.\n\n"
           "    >>> [t.item() for t in tensorlib.var_mean(tensorlib.tensor([1., 3.]))]\n    [2.0, 2.0]"),
    op("std_mean", "Tensor self, object dim=None, object unbiased=None, bool keepdim=False, *, object correction=None", F,
       node="StdMeanBackward0",
       doc="``(std, mean)`` in one call.\n\n"
           "    >>> [t.item() for t in tensorlib.std_mean(tensorlib.tensor([1., 1.]))]\n    [0.0, 1.0]"),
    op("max", "Tensor self, object dim=None, object keepdim=None, *, object other=None, object out=None",
       impl="_max_min({self}, {dim}, {keepdim}, {other}, {out}, True)", node="MaxBackward1",
       doc="The largest element (NaN if any); with ``dim`` a ``(values, indices)`` named tuple "
           "(first index on ties); ``max(input, other)`` is ``maximum``.\n\n"
           "    >>> values, indices = tensorlib.tensor([[1, 5, 5]]).max(1)\n"
           "    >>> values.tolist(), indices.tolist()\n    ([5], [1])"),
    op("min", "Tensor self, object dim=None, object keepdim=None, *, object other=None, object out=None",
       impl="_max_min({self}, {dim}, {keepdim}, {other}, {out}, False)", node="MinBackward1",
       doc="The smallest element (NaN if any); with ``dim`` a ``(values, indices)`` named tuple; "
           "``min(input, other)`` is ``minimum``.\n\n"
           "    >>> tensorlib.tensor([[4, 2], [1, 3]]).min(0).indices.tolist()\n    [1, 0]"),
    op("amax", "Tensor self, object dim=(), bool keepdim=False, *, object out=None",
       impl="_amax_amin({self}, {dim}, {keepdim}, {out}, True)", node="AmaxBackward0",
       doc="Largest values over all dims, a dim or a tuple of dims (NaN propagates).\n\n"
           "    >>> tensorlib.tensor([[1, 5], [7, 2]]).amax(1).tolist()\n    [5, 7]"),
    op("amin", "Tensor self, object dim=(), bool keepdim=False, *, object out=None",
       impl="_amax_amin({self}, {dim}, {keepdim}, {out}, False)", node="AminBackward0",
       doc="Smallest values over all dims, a dim or a tuple of dims (NaN propagates).\n\n"
           "    >>> tensorlib.tensor([[1, 5], [7, 2]]).amin(0).tolist()\n    [1, 2]"),
    op("argmax", "Tensor self, object dim=None, bool keepdim=False",
       impl="_argmax_argmin({self}, {dim}, {keepdim}, True)",
       doc="Index of the first largest value (flattened when ``dim`` is None; NaN counts as largest).\n\n"
           "    >>> tensorlib.tensor([3, 9, 9]).argmax().item()\n    1"),
    op("argmin", "Tensor self, object dim=None, bool keepdim=False",
       impl="_argmax_argmin({self}, {dim}, {keepdim}, False)",
       doc="Index of the first smallest value (flattened when ``dim`` is None).\n\n"
           "    >>> tensorlib.tensor([[3, 1], [0, 4]]).argmin(1).tolist()\n    [1, 0]"),
    op("all", "Tensor self, object dim=None, bool keepdim=False, *, object out=None",
       impl="_all_any({self}, {dim}, {keepdim}, {out}, True)",
       doc="Whether every element is nonzero (bool; uint8 for uint8 input).\n\n"
           "    >>> tensorlib.tensor([[1, 0], [2, 3]]).all(1).tolist()\n    [False, True]"),
    op("any", "Tensor self, object dim=None, bool keepdim=False, *, object out=None",
       impl="_all_any({self}, {dim}, {keepdim}, {out}, False)",
       doc="Whether some element is nonzero (bool; uint8 for uint8 input).\n\n"
           "    >>> tensorlib.tensor([[0, 0], [0, 3]]).any(1).tolist()\n    [False, True]"),
    op("count_nonzero", "Tensor self, object dim=None",
       doc="Number of nonzero elements over all dims, a dim or a tuple of dims (int64).\n\n"
           "    >>> tensorlib.tensor([[0, 1], [2, 3]]).count_nonzero(0).tolist()\n    [1, 2]"),
    op("norm", "Tensor self, object p='fro', object dim=None, bool keepdim=False, *, object out=None, dtype? dtype=None",
       node="LinalgVectorNormBackward0",
       doc="Vector p-norm over all dims, a dim or a tuple of dims: p = 'fro' (2), 1, 2, inf, "
           "-inf, 0 (count of nonzeros) or any other number.\n\n"
           "    >>> tensorlib.tensor([3., -4.]).norm().item(), tensorlib.tensor([3., -4.]).norm(1).item()\n"
           "    (5.0, 7.0)"),
    op("logsumexp", "Tensor self, object dim, bool keepdim=False, *, object out=None",
       node="LogsumexpBackward0",
       doc="``log(sum(exp(input)))`` over ``dim``, computed stably (shifted by the max).\n\n"
           "    >>> round(tensorlib.tensor([1000., 1000.]).logsumexp(0).item(), 3)\n    1000.693"),
    op("cumsum", "Tensor self, int dim, *, dtype? dtype=None, object out=None", "function method inplace",
       impl="_cumsum({self}, {dim}, {dtype}, {out}, {inplace})", node="CumsumBackward0",
       doc="Running sums along ``dim`` (bool and integers give int64).\n\n"
           "    >>> tensorlib.tensor([1, 2, 3]).cumsum(0).tolist()\n    [1, 3, 6]"),
    op("cumprod", "Tensor self, int dim, *, dtype? dtype=None, object out=None", "function method inplace",
       impl="_cumprod({self}, {dim}, {dtype}, {out}, {inplace})", node="CumprodBackward0",
       doc="Running products along ``dim`` (bool and integers give int64).\n\n"
           "    >>> tensorlib.tensor([1, 2, 3]).cumprod(0).tolist()\n    [1, 2, 6]"),
    op("softmax", "Tensor self, int dim, dtype? dtype=None", node="SoftmaxBackward0",
       doc="``exp(x) / sum(exp(x))`` along ``dim``, computed stably (shifted by the max).\n\n"
           "    >>> tensorlib.tensor([0., 0.]).softmax(0).tolist()\n    [0.5, 0.5]"),
    op("log_softmax", "Tensor self, int dim, dtype? dtype=None", node="LogSoftmaxBackward0",
       doc="``x - logsumexp(x)`` along ``dim``, computed stably.\n\n"
           "    >>> round(tensorlib.tensor([0., 0.]).log_softmax(0)[0].item(), 4)\n    -0.6931"),
]
