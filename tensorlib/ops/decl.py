"""THE declarations file: every tensorlib op, declared once.

Each entry gives the op's name, its signature (see codegen.py for the little language), its
variants (``function``: ``tensorlib.name(...)``; ``method``: ``Tensor.name(...)``), aliases,
the implementation it dispatches to (a cdef function in tensorlib/_core/*.pxi; default
``_<name>(args in order)``), and its documentation with a short example.

The autograd slots are part of every declaration: ``node`` (the grad_fn's type name, as in
PyTorch), ``view_of`` (the input whose storage a view op's output shares) and ``backward``
(the formula per input, in tensorlib ops); what a node saves is derived from the formulas and
depends on which inputs need grad (mm saves its input only if the weight requires grad).
The autograd layer (issue 4) reads them from here; nothing else declares an op.
"""

F = "function"
M = "method"
FM = "function method"

# Keyword tails shared by the factory functions.
FACTORY = "dtype? dtype=None, object layout=None, device? device=None, bool requires_grad=False, bool pin_memory=False"
LIKE = "dtype? dtype=None, object layout=None, device? device=None, bool requires_grad=False, object memory_format=None"


def op(name, sig, variants=FM, impl=None, doc=None, aliases=(), node=None, view_of=None,
       backward=None, input_name="input", outputs="single", node_if=(), inplace_view=False,
       record_inplace_only=False, records_itself=False):
    """One declaration. ``backward`` maps each differentiable input to its gradient formula
    (tensorlib ops over ``grad``/``grads``, the inputs, ``result`` and ``X_sizes``-style
    metadata); what the node saves is derived from it (codegen.autograd_plan).
    ``outputs="multi"``: the op returns a tuple of tensors, each an output of the node.
    ``node_if``: ((node name, condition over the arguments), ...) for overloads PyTorch gives
    another node name (``sum(dim)`` is SumBackward1); the first true condition wins.
    ``inplace_view``: an in-place op that changes only the geometry (t_, squeeze_): the node
    replaces self's grad_fn, or on a view the grad_fn is regenerated from the base.
    ``record_inplace_only``: only the in-place variant is differentiable (``x.lt_(y)`` keeps
    x's float dtype; ``x.lt(y)`` is bool), so the out-of-place one records nothing.
    ``records_itself``: the implementation may record its own history (a copying ``reshape``
    is PyTorch's clone + _unsafe_view); the op's node is recorded only when it did not."""
    return dict(name=name, sig=sig, variants=variants, impl=impl, doc=doc, aliases=aliases,
                node=node, view_of=view_of, backward=backward, input_name=input_name,
                outputs=outputs, node_if=node_if, inplace_view=inplace_view,
                record_inplace_only=record_inplace_only, records_itself=records_itself)


OPS = [
    # ------------------------------------------------------------------ views (no copy)
    op("view", "Tensor self, object... shape", M, impl="_view_dispatch({self}, {shape})",
       node="ViewBackward0", backward={'self': 'grad.reshape(self_sizes)'}, view_of="self",
       doc="A view with a new shape (PyTorch's compatibility rule; one -1 is inferred), or a "
           "reinterpretation as another dtype.\n\n    >>> tensorlib.arange(6).view(2, -1).shape\n"
           "    tensorlib.Size([2, 3])"),
    op("view_as", "Tensor self, Tensor other", M, impl="_view({self}, tuple({other}.shape))",
       node="ViewBackward0", backward={'self': 'grad.reshape(self_sizes)'}, view_of="self",
       doc="``self.view(other.shape)``.\n\n    >>> tensorlib.arange(4).view_as(tensorlib.zeros(2, 2)).shape\n"
           "    tensorlib.Size([2, 2])"),
    # reshape records what PyTorch's does: a view of a contiguous input is ViewBackward0, of
    # a non-contiguous one ReshapeAliasBackward0, and a copy CloneBackward0 + UnsafeViewBackward0
    op("reshape", "Tensor self, int[]... shape", impl="_reshape_op({self}, {shape})", records_itself=True,
       node="ViewBackward0", node_if=(("ReshapeAliasBackward0", "not self.is_contiguous()"),), backward={'self': 'grad.reshape(self_sizes)'}, view_of="self",
       doc="A view when the view rule allows one, otherwise a copy.\n\n"
           "    >>> tensorlib.arange(6).reshape(3, 2).shape\n    tensorlib.Size([3, 2])"),
    op("reshape_as", "Tensor self, Tensor other", M, impl="_reshape_op({self}, tuple({other}.shape))", records_itself=True,
       node="ViewBackward0", node_if=(("ReshapeAliasBackward0", "not self.is_contiguous()"),), backward={'self': 'grad.reshape(self_sizes)'}, view_of="self",
       doc="``self.reshape(other.shape)``.\n\n    >>> tensorlib.arange(4).reshape_as(tensorlib.zeros(2, 2)).shape\n"
           "    tensorlib.Size([2, 2])"),
    op("transpose", "Tensor self, int dim0, int dim1", aliases=("swapaxes", "swapdims"),
       node="TransposeBackward0", backward={'self': 'grad.transpose(dim0, dim1)'}, view_of="self",
       doc="A view with dims ``dim0`` and ``dim1`` swapped.\n\n"
           "    >>> tensorlib.zeros(2, 3).transpose(0, 1).shape\n    tensorlib.Size([3, 2])"),
    op("t", "Tensor self", node="TBackward0", backward={'self': 'grad.t()'}, view_of="self",
       doc="Transpose of a tensor with at most 2 dims.\n\n"
           "    >>> tensorlib.zeros(2, 3).t().stride()\n    (1, 3)"),
    op("permute", "Tensor self, int[]... dims", node="PermuteBackward0", backward={'self': 'grad.permute(_inverse_perm(dims))'}, view_of="self",
       doc="A view with dims reordered.\n\n"
           "    >>> tensorlib.zeros(2, 3, 4).permute(2, 0, 1).shape\n    tensorlib.Size([4, 2, 3])"),
    op("movedim", "Tensor self, object source, object destination", aliases=("moveaxis",),
       node="PermuteBackward0", backward={'self': 'grad.movedim(destination, source)'}, view_of="self",
       doc="A view with dims ``source`` moved to positions ``destination``.\n\n"
           "    >>> tensorlib.zeros(2, 3, 4).movedim(0, -1).shape\n    tensorlib.Size([3, 4, 2])"),
    op("expand", "Tensor self, int[]... size, *, bool implicit=False", M,
       impl="_expand({self}, {size})", node="ExpandBackward0", backward={'self': 'grad'}, view_of="self",
       doc="A view with size-1 dims repeated (stride 0); -1 keeps a size.\n\n"
           "    >>> tensorlib.zeros(3, 1).expand(-1, 4).stride()\n    (1, 0)"),
    op("expand_as", "Tensor self, Tensor other", M, impl="_expand({self}, tuple({other}.shape))",
       node="ExpandBackward0", backward={'self': 'grad'}, view_of="self",
       doc="``self.expand(other.shape)``.\n\n    >>> tensorlib.zeros(1).expand_as(tensorlib.zeros(3)).shape\n"
           "    tensorlib.Size([3])"),
    op("broadcast_to", "Tensor self, int[] size", impl="_expand({self}, {size})",
       node="ExpandBackward0", backward={'self': 'grad'}, view_of="self",
       doc="A view broadcast to ``size``.\n\n    >>> tensorlib.broadcast_to(tensorlib.zeros(3), (2, 3)).shape\n"
           "    tensorlib.Size([2, 3])"),
    op("broadcast_tensors", "object... tensors", F, impl="_broadcast_tensors({tensors})",
       node="ExpandBackward0",
       doc="Views of the tensors broadcast to their common shape.\n\n"
           "    >>> a, b = tensorlib.broadcast_tensors(tensorlib.zeros(3, 1), tensorlib.zeros(4))\n"
           "    >>> a.shape\n    tensorlib.Size([3, 4])"),
    op("narrow", "Tensor self, int dim, int start, int length", node="SliceBackward0", backward={'self': '_narrow_backward(grad, self_sizes, dim, start, length)'}, view_of="self",
       doc="A view of ``length`` elements from ``start`` along ``dim``.\n\n"
           "    >>> tensorlib.arange(5).narrow(0, 1, 2).tolist()\n    [1, 2]"),
    op("select", "Tensor self, int dim, int index", node="SelectBackward0", backward={'self': '_select_backward(grad, self_sizes, dim, index)'}, view_of="self",
       doc="A view of index ``index`` along ``dim`` (that dim removed).\n\n"
           "    >>> tensorlib.arange(6).view(2, 3).select(1, 2).tolist()\n    [2, 5]"),
    op("unsqueeze", "Tensor self, int dim", node="UnsqueezeBackward0", backward={'self': 'grad.squeeze(dim)'}, view_of="self",
       doc="A view with a size-1 dim inserted at ``dim``.\n\n"
           "    >>> tensorlib.zeros(3).unsqueeze(0).shape\n    tensorlib.Size([1, 3])"),
    op("squeeze", "Tensor self, object dim=None", node="SqueezeBackward0",
       node_if=(("SqueezeBackward2", "isinstance(dim, (tuple, list))"), ("SqueezeBackward1", "dim is not None")), backward={'self': 'grad.reshape(self_sizes)'}, view_of="self",
       doc="A view without size-1 dims (all, or those in ``dim``; a non-1 dim is left alone).\n\n"
           "    >>> tensorlib.zeros(1, 3, 1).squeeze().shape\n    tensorlib.Size([3])"),
    op("flatten", "Tensor self, int start_dim=0, int end_dim=-1", node="ViewBackward0", node_if=(("ReshapeAliasBackward0", "not self.is_contiguous()"),), records_itself=True, backward={'self': 'grad.reshape(self_sizes)'}, view_of="self",
       doc="Dims ``start_dim..end_dim`` merged into one (a view when possible).\n\n"
           "    >>> tensorlib.zeros(2, 3, 4).flatten(1).shape\n    tensorlib.Size([2, 12])"),
    op("unflatten", "Tensor self, int dim, int[] sizes", node="ViewBackward0", backward={'self': 'grad.reshape(self_sizes)'}, view_of="self",
       doc="Dim ``dim`` split into ``sizes`` (one -1 allowed).\n\n"
           "    >>> tensorlib.zeros(2, 12).unflatten(1, (3, -1)).shape\n    tensorlib.Size([2, 3, 4])"),
    op("as_strided", "Tensor self, int[] size, int[] stride, int? storage_offset=None",
       impl="_as_strided({self}, {size}, {stride}, {storage_offset})",
       node="AsStridedBackward0", backward={'self': '_as_strided_backward(grad, self_sizes, self_strides, self_offset, size, stride, storage_offset)'}, view_of="self",
       doc="A view with explicit geometry (checked against the storage's bounds).\n\n"
           "    >>> tensorlib.arange(4).as_strided((2, 2), (1, 1)).tolist()\n    [[0, 1], [1, 2]]"),
    op("unfold", "Tensor self, int dimension, int size, int step", M, node="UnfoldBackward0", backward={'self': '_unfold_backward(grad, self_sizes, dimension, size, step)'},
       view_of="self",
       doc="A view of all windows of ``size`` along ``dimension`` with stride ``step``.\n\n"
           "    >>> tensorlib.arange(5).unfold(0, 2, 2).tolist()\n    [[0, 1], [2, 3]]"),
    op("diagonal", "Tensor self, int offset=0, int dim1=0, int dim2=1", node="DiagonalBackward0", backward={'self': '_diagonal_backward(grad, self_sizes, offset, dim1, dim2)'},
       view_of="self",
       doc="A view of a diagonal, appended as the last dim.\n\n"
           "    >>> tensorlib.arange(9).view(3, 3).diagonal().tolist()\n    [0, 4, 8]"),
    op("split", "Tensor self, object split_size_or_sections, int dim=0", node="SplitBackward0", backward={'self': '_split_backward(grads, node, dim)'}, outputs='multi',
       node_if=(("SplitWithSizesBackward0", "isinstance(split_size_or_sections, (list, tuple))"),), view_of="self",
       doc="Views of equal pieces (the last may be smaller) or of the given sizes.\n\n"
           "    >>> [p.tolist() for p in tensorlib.arange(5).split(2)]\n    [[0, 1], [2, 3], [4]]"),
    op("chunk", "Tensor self, int chunks, int dim=0", node="SplitBackward0", backward={'self': '_split_backward(grads, node, dim)'}, outputs='multi', view_of="self",
       doc="Views of at most ``chunks`` pieces.\n\n"
           "    >>> len(tensorlib.arange(5).chunk(3))\n    3"),
    op("unbind", "Tensor self, int dim=0", node="UnbindBackward0", backward={'self': '_unbind_backward(grads, node, dim)'}, outputs='multi', view_of="self",
       doc="Views of every index along ``dim``.\n\n"
           "    >>> [t.tolist() for t in tensorlib.arange(4).view(2, 2).unbind(1)]\n    [[0, 2], [1, 3]]"),
    op("detach", "Tensor self", node=None,
       doc="The same data cut from the graph (shares the version counter).\n\n"
           "    >>> tensorlib.ones(2, requires_grad=True).detach().requires_grad\n    False"),
    op("contiguous", "Tensor self, *, object memory_format=None", M, impl="_contiguous({self})",
       node="CloneBackward0", backward={'self': 'grad'},
       doc="Self when already contiguous, else a contiguous copy.\n\n"
           "    >>> t = tensorlib.zeros(2, 3); t.contiguous() is t\n    True"),
    # in-place metadata changes
    # (recorded like PyTorch's TBackward1 ...; on a view, the view's grad_fn is regenerated
    # from its base with the new geometry instead)
    op("t_", "Tensor self", M, impl="_set_geometry_inplace({self}, _t({self}))",
       node="TBackward1", backward={'self': 'grad.t()'}, inplace_view=True,
       doc="Transpose in place (metadata only).\n\n    >>> tensorlib.zeros(2, 3).t_().shape\n"
           "    tensorlib.Size([3, 2])"),
    op("transpose_", "Tensor self, int dim0, int dim1", M, aliases=("swapaxes_", "swapdims_"),
       impl="_set_geometry_inplace({self}, _transpose({self}, {dim0}, {dim1}))",
       node="TransposeBackward1", backward={'self': 'grad.transpose(dim0, dim1)'}, inplace_view=True,
       doc="Swap two dims in place (metadata only).\n\n    >>> tensorlib.zeros(2, 3).transpose_(0, 1).shape\n"
           "    tensorlib.Size([3, 2])"),
    op("squeeze_", "Tensor self, object dim=None", M,
       impl="_set_geometry_inplace({self}, _squeeze({self}, {dim}))",
       node="SqueezeBackward3", node_if=(("SqueezeBackward4", "dim is not None"),),
       backward={'self': 'grad.reshape(self_sizes)'}, inplace_view=True,
       doc="Squeeze in place.\n\n    >>> tensorlib.zeros(1, 2).squeeze_().shape\n    tensorlib.Size([2])"),
    op("unsqueeze_", "Tensor self, int dim", M,
       impl="_set_geometry_inplace({self}, _unsqueeze({self}, {dim}))",
       node="UnsqueezeBackward1", backward={'self': 'grad.squeeze(dim)'}, inplace_view=True,
       doc="Unsqueeze in place.\n\n    >>> tensorlib.zeros(2).unsqueeze_(1).shape\n    tensorlib.Size([2, 1])"),

    # ------------------------------------------------------------------ copies
    op("clone", "Tensor self, *, object memory_format=None", impl="_clone({self}, {memory_format})",
       node="CloneBackward0", backward={'self': 'grad'},
       doc="A copy with its own memory (same strides when they are dense).\n\n"
           "    >>> t = tensorlib.ones(2); c = t.clone(); c[0] = 5; t.tolist()\n    [1.0, 1.0]"),
    op("_to_copy", "Tensor self, dtype? dtype=None, *, device? device=None", F,
       impl="_to_copy({self}, {dtype}, {device})",
       node="ToCopyBackward0", backward={'self': 'grad.to(self_device, self_dtype)'},
       doc="A copy converted to ``dtype``: what ``to``/``type``/``float``/... run when the dtype "
           "changes (recorded, so gradients flow back in the input's dtype).\n\n"
           "    >>> tensorlib._to_copy(tensorlib.ones(2), dtype=tensorlib.float64).dtype\n"
           "    tensorlib.float64"),
    op("copy_", "Tensor self, object src, bool non_blocking=False", M,
       impl="_copy_({self}, {src}, {non_blocking})", node="CopyBackwards", backward={'self': '_zeros_grad(grad)', 'src': 'grad'},
       doc="Copy ``src`` into self in place, broadcasting and converting dtype.\n\n"
           "    >>> tensorlib.zeros(2, 2).copy_(tensorlib.tensor([1, 2])).tolist()\n    [[1.0, 2.0], [1.0, 2.0]]"),
    op("fill_", "Tensor self, Scalar value", M, node="FillBackward2",
       node_if=(("FillBackward3", "isinstance(value, TensorBase)"),),
       backward={'self': '_zeros_grad(grad)', 'value': 'grad.sum()'},
       doc="Set every element to ``value``.\n\n    >>> tensorlib.zeros(2).fill_(3).tolist()\n    [3.0, 3.0]"),
    op("zero_", "Tensor self", M, node="ZeroBackward0", backward={'self': '_zeros_grad(grad)'},
       doc="Set every element to zero.\n\n    >>> tensorlib.ones(2).zero_().tolist()\n    [0.0, 0.0]"),
    op("cat", "Tensor[] tensors, int dim=0, *, object out=None", F, aliases=("concat", "concatenate"),
       node="CatBackward0", backward={'tensors': '_cat_backward(grad, tensors_sizes, dim)'},
       doc="Concatenate along ``dim`` (dtypes promote; shapes must match elsewhere).\n\n"
           "    >>> tensorlib.cat([tensorlib.zeros(1), tensorlib.ones(2)]).tolist()\n    [0.0, 1.0, 1.0]"),
    op("stack", "Tensor[] tensors, int dim=0, *, object out=None", F, node="StackBackward0", backward={'tensors': 'grad.unbind(dim)'},
       doc="Stack equal-shaped tensors along a new dim.\n\n"
           "    >>> tensorlib.stack([tensorlib.zeros(2), tensorlib.ones(2)]).shape\n    tensorlib.Size([2, 2])"),
    op("flip", "Tensor self, int[]... dims", node="FlipBackward0", backward={'self': 'grad.flip(dims)'},
       doc="A copy with the order of elements reversed along ``dims``.\n\n"
           "    >>> tensorlib.arange(3).flip(0).tolist()\n    [2, 1, 0]"),
    op("fliplr", "Tensor self", impl="_flip({self}, (1,))", node="FlipBackward0", backward={'self': 'grad.fliplr()'},
       doc="Flip the columns (dim 1).\n\n    >>> tensorlib.arange(4).view(2, 2).fliplr().tolist()\n    [[1, 0], [3, 2]]"),
    op("flipud", "Tensor self", impl="_flip({self}, (0,))", node="FlipBackward0", backward={'self': 'grad.flipud()'},
       doc="Flip the rows (dim 0).\n\n    >>> tensorlib.arange(4).view(2, 2).flipud().tolist()\n    [[2, 3], [0, 1]]"),
    op("repeat", "Tensor self, int[]... repeats", M, node="RepeatBackward0", backward={'self': '_repeat_backward(grad, self_sizes, repeats)'},
       doc="A copy tiled ``repeats`` times along each dim.\n\n"
           "    >>> tensorlib.tensor([1, 2]).repeat(2).tolist()\n    [1, 2, 1, 2]"),
    op("tile", "Tensor self, int[]... dims", node="RepeatBackward0", backward={'self': '_tile_backward(grad, self_sizes, dims)'},
       doc="Like repeat, padding ``dims`` with leading 1s.\n\n"
           "    >>> tensorlib.tensor([[1, 2]]).tile(2).tolist()\n    [[1, 2, 1, 2]]"),
    op("roll", "Tensor self, object shifts, object dims=None", node="RollBackward0", backward={'self': 'grad.roll(tuple(-v for v in shifts) if isinstance(shifts, (tuple, list)) else -shifts, dims)'},
       doc="A copy rotated by ``shifts`` along ``dims`` (flattened when dims is None).\n\n"
           "    >>> tensorlib.arange(4).roll(1).tolist()\n    [3, 0, 1, 2]"),
    op("tril", "Tensor self, int diagonal=0, *, object out=None",
       impl="_into_out(_tril({self}, {diagonal}, True, False), {out}, 'tril')", node="TrilBackward0", backward={'self': 'grad.tril(diagonal)'},
       doc="A copy with elements above diagonal ``diagonal`` zeroed.\n\n"
           "    >>> tensorlib.ones(2, 2).tril().tolist()\n    [[1.0, 0.0], [1.0, 1.0]]"),
    op("triu", "Tensor self, int diagonal=0, *, object out=None",
       impl="_into_out(_tril({self}, {diagonal}, False, False), {out}, 'triu')", node="TriuBackward0", backward={'self': 'grad.triu(diagonal)'},
       doc="A copy with elements below diagonal ``diagonal`` zeroed.\n\n"
           "    >>> tensorlib.ones(2, 2).triu().tolist()\n    [[1.0, 1.0], [0.0, 1.0]]"),
    op("tril_", "Tensor self, int diagonal=0", M, impl="_tril({self}, {diagonal}, True, True)",
       node="TrilBackward0", backward={'self': 'grad.tril(diagonal)'},
       doc="tril in place.\n\n    >>> tensorlib.ones(2, 2).tril_().tolist()\n    [[1.0, 0.0], [1.0, 1.0]]"),
    op("triu_", "Tensor self, int diagonal=0", M, impl="_tril({self}, {diagonal}, False, True)",
       node="TriuBackward0", backward={'self': 'grad.triu(diagonal)'},
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
       impl="_finish(_tensor_copy({data}, {dtype} or {self}._dtype, {device}, 'tensor.new_tensor'), {requires_grad})",
       doc="A copy of ``data`` with self's dtype.\n\n    >>> tensorlib.zeros(1).new_tensor([1, 2]).dtype\n    tensorlib.float32"),
    op("tensor", "object data, *, dtype? dtype=None, device? device=None, bool requires_grad=False, bool pin_memory=False", F,
       impl="_finish(_tensor_copy({data}, {dtype}, {device}, 'tensorlib.tensor'), {requires_grad})",
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
       node="UniformBackward0", backward={'self': '_zeros_grad(grad)'},
       doc="Fill with uniform samples on [from_, to).\n\n    >>> float(tensorlib.empty(3).uniform_(2, 3).min()) >= 2\n    True"),
    op("normal_", "Tensor self, float mean=0.0, float std=1.0, *, object generator=None", M,
       node="NormalBackward0", backward={'self': '_zeros_grad(grad)'},
       doc="Fill with normal samples.\n\n    >>> tensorlib.empty(3).normal_(0, 1).shape\n    tensorlib.Size([3])"),
    op("random_", "Tensor self, object from_=None, object to=None, *, object generator=None", M,
       node="RandomBackward2", node_if=(("RandomBackward0", "to is not None"), ("RandomBackward1", "from_ is not None")), backward={'self': '_zeros_grad(grad)'},
       doc="Fill with integers uniform on [from_, to) (``random_(to)``: [0, to)).\n\n"
           "    >>> tensorlib.empty(3).random_(0, 2).tolist() in ([a, b, c] for a in (0., 1.) for b in (0., 1.) for c in (0., 1.))\n    True"),
    op("bernoulli_", "Tensor self, object p=0.5, *, object generator=None", M,
       node="BernoulliBackward2", node_if=(("BernoulliBackward1", "isinstance(p, TensorBase)"),), backward={'self': '_zeros_grad(grad)'},
       doc="Fill with 1 with probability ``p`` (a number or a tensor), else 0.\n\n"
           "    >>> set(tensorlib.empty(8).bernoulli_(0.5).tolist()) <= {0.0, 1.0}\n    True"),
    op("bernoulli", "Tensor self, object p=None, *, object generator=None",
       node="BernoulliBackward0", backward={'self': '_zeros_grad(grad)'},
       doc="Samples 1 with the probability given by each element of ``input``.\n\n"
           "    >>> tensorlib.bernoulli(tensorlib.ones(3)).tolist()\n    [1.0, 1.0, 1.0]"),
    op("normal", f"object mean, object std=1.0, object size=None, *, object generator=None, object out=None, {FACTORY}", F,
       impl="_finish(_into_out(_normal({mean}, {std}, {size}, {generator}, {dtype}, {device}), {out}, 'normal'), {requires_grad})",
       doc="Normal samples with scalar or tensor mean/std.\n\n"
           "    >>> tensorlib.normal(0.0, 1.0, size=(2,)).shape\n    tensorlib.Size([2])"),

    # ------------------------------------------------------------------ linear algebra
    # Float products run on NumPy's BLAS with out= into our storage; integers on our own loops
    # (linalg.pxi, cpu_linalg.c). Composite ops (matmul, tensordot, einsum) have no node of
    # their own: their grad_fn is that of the op they reduce to.
    op("mm", "Tensor self, Tensor mat2, *, object out=None", impl="_mm({self}, {mat2}, {out})",
       node="MmBackward0", backward={'self': 'grad.mm(mat2.t())', 'mat2': 'self.t().mm(grad)'},
       doc="Matrix product of two 2-D tensors.\n\n"
           "    >>> tensorlib.mm(tensorlib.ones(2, 3), tensorlib.ones(3, 4)).shape\n    tensorlib.Size([2, 4])"),
    # matmul records no node of its own: while recording it runs as PyTorch decomposes it
    # (dot/mv/mm/bmm and views, linalg.pxi), so grad_fn, next_functions and what is saved
    # are PyTorch's
    op("matmul", "Tensor self, Tensor other, *, object out=None", impl="_matmul_op({self}, {other}, {out})",
       doc="Matrix product for every rank: dot (1-D, 1-D), mv, mm, and batched products with "
           "broadcast batch dims (a 1-D operand is a row on the left, a column on the right).\n\n"
           "    >>> tensorlib.matmul(tensorlib.ones(5, 2, 3), tensorlib.ones(3)).shape\n    tensorlib.Size([5, 2])"),
    op("_unsafe_view", "Tensor self, int[] size", F, impl="_unsafe_view({self}, {size})",
       node="UnsafeViewBackward0", backward={'self': 'grad.reshape(self_sizes)'},
       doc="A reshaped alias of a tensor nothing else uses (the result of a copy), recorded as "
           "a new tensor rather than a view: what a copying ``reshape`` and a folded ``matmul`` "
           "end in.\n\n    >>> tensorlib._unsafe_view(tensorlib.zeros(6), (2, 3))._is_view()\n    False"),
    op("bmm", "Tensor self, Tensor mat2, *, object out=None", impl="_bmm({self}, {mat2}, {out})",
       node="BmmBackward0", backward={'self': 'grad.bmm(mat2.transpose(1, 2))', 'mat2': 'self.transpose(1, 2).bmm(grad)'},
       doc="Batched matrix product of two 3-D tensors with the same batch size.\n\n"
           "    >>> tensorlib.bmm(tensorlib.ones(4, 2, 3), tensorlib.ones(4, 3, 5)).shape\n"
           "    tensorlib.Size([4, 2, 5])"),
    op("mv", "Tensor self, Tensor vec, *, object out=None", impl="_mv({self}, {vec}, {out})",
       node="MvBackward0", backward={'self': 'grad.unsqueeze(1) * vec', 'vec': 'self.t().mv(grad)'},
       doc="Matrix-vector product.\n\n"
           "    >>> tensorlib.mv(tensorlib.ones(2, 3), tensorlib.ones(3)).tolist()\n    [3.0, 3.0]"),
    op("dot", "Tensor self, Tensor tensor, *, object out=None", impl="_dot({self}, {tensor}, {out})",
       node="DotBackward0", backward={'self': 'grad * tensor', 'tensor': 'grad * self'},
       doc="Inner product of two 1-D tensors of the same dtype (a 0-d result).\n\n"
           "    >>> tensorlib.dot(tensorlib.tensor([1, 2]), tensorlib.tensor([3, 4])).item()\n    11"),
    op("outer", "Tensor self, Tensor vec2, *, object out=None", impl="_outer({self}, {vec2}, {out})",
       aliases=("ger",), node="MulBackward0", backward={'self': 'grad.mv(vec2)', 'vec2': 'grad.t().mv(self)'},
       doc="Outer product ``input[i] * vec2[j]`` of two 1-D tensors (dtypes promote).\n\n"
           "    >>> tensorlib.outer(tensorlib.tensor([1, 2]), tensorlib.tensor([1, 10])).tolist()\n"
           "    [[1, 10], [2, 20]]"),
    op("addmm", "Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, object out=None",
       "function method inplace",
       impl="_addmm({self}, {mat1}, {mat2}, {beta}, {alpha}, {out}, {inplace})", node="AddmmBackward0", backward={'self': '_scale(grad, beta)', 'mat1': '_scale(grad.mm(mat2.t()), alpha)', 'mat2': '_scale(mat1.t().mm(grad), alpha)'},
       doc="``beta * input + alpha * (mat1 @ mat2)`` (input broadcasts; beta=0 ignores NaN in it).\n\n"
           "    >>> tensorlib.addmm(tensorlib.ones(2, 2), tensorlib.ones(2, 3), tensorlib.ones(3, 2), beta=2).tolist()\n"
           "    [[5.0, 5.0], [5.0, 5.0]]"),
    op("addmv", "Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1, object out=None",
       "function method inplace",
       impl="_addmv({self}, {mat}, {vec}, {beta}, {alpha}, {out}, {inplace})", node="AddmvBackward0", backward={'self': '_scale(grad, beta)', 'mat': '_scale(grad.unsqueeze(1) * vec, alpha)', 'vec': '_scale(mat.t().mv(grad), alpha)'},
       doc="``beta * input + alpha * (mat @ vec)``.\n\n"
           "    >>> tensorlib.addmv(tensorlib.ones(2), tensorlib.ones(2, 3), tensorlib.ones(3), alpha=2).tolist()\n"
           "    [7.0, 7.0]"),
    op("baddbmm", "Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, object out=None",
       "function method inplace",
       impl="_baddbmm({self}, {batch1}, {batch2}, {beta}, {alpha}, {out}, {inplace})",
       node="BaddbmmBackward0", backward={'self': '_scale(grad, beta)', 'batch1': '_scale(grad.bmm(batch2.transpose(1, 2)), alpha)', 'batch2': '_scale(batch1.transpose(1, 2).bmm(grad), alpha)'},
       doc="``beta * input + alpha * bmm(batch1, batch2)``.\n\n"
           "    >>> tensorlib.baddbmm(tensorlib.zeros(4, 2, 5), tensorlib.ones(4, 2, 3), tensorlib.ones(4, 3, 5)).shape\n"
           "    tensorlib.Size([4, 2, 5])"),
    op("tensordot", "Tensor a, Tensor b, object dims=2, object out=None", F,
       impl="_tensordot({a}, {b}, {dims}, {out})", input_name="a",
       doc="Contract ``a`` and ``b`` over dims: an int n (a's last n with b's first n) or two "
           "lists of dims.\n\n"
           "    >>> tensorlib.tensordot(tensorlib.ones(2, 3, 4), tensorlib.ones(3, 4, 5)).shape\n"
           "    tensorlib.Size([2, 5])"),
    op("einsum", "object... args", F, impl="_einsum({args})",
       doc="Einstein summation: ``einsum('ij,jk->ik', a, b)``; implicit output (labels seen once, "
           "sorted), ``...``, repeated labels (diagonals, traces), size-1 broadcasting, and the "
           "sublist form ``einsum(a, [0, 1], b, [1, 2])``.\n\n"
           "    >>> tensorlib.einsum('ii', tensorlib.eye(3)).item()\n    3.0"),
]


# ---------------------------------------------------------------------------------------------
# Elementwise compute (elementwise.pxi). Binary and unary ops share one signature shape each,
# so they are declared from tables; every entry is still one op with its own node and doc.
FMI = "function method inplace"

# backward formulas of the table ops (``result`` is the op's output; see codegen.py)
_GRAD = {
    "mul": {"self": "grad * other", "other": "grad * self"},
    "maximum": {"self": "_max_min_share(grad, self, other, True)", "other": "_max_min_share(grad, other, self, True)"},
    "minimum": {"self": "_max_min_share(grad, self, other, False)", "other": "_max_min_share(grad, other, self, False)"},
    "atan2": {"self": "grad * other / (self * self + other * other)",
              "other": "-grad * self / (self * self + other * other)"},
    "neg": {"self": "-grad"},
    "abs": {"self": "grad * self.sign()"},
    "sign": {"self": "grad * 0"},
    "reciprocal": {"self": "-grad * result * result"},
    "square": {"self": "2 * grad * self"},
    "exp": {"self": "grad * result"},
    "exp2": {"self": "grad * result * 0.6931471805599453"},
    "expm1": {"self": "grad * (result + 1)"},
    "log": {"self": "grad / self"},
    "log2": {"self": "grad / (self * 0.6931471805599453)"},
    "log10": {"self": "grad / (self * 2.302585092994046)"},
    "log1p": {"self": "grad / (self + 1)"},
    "sqrt": {"self": "grad / (2 * result)"},
    "rsqrt": {"self": "-0.5 * grad * result * result * result"},
    "sin": {"self": "grad * self.cos()"},
    "cos": {"self": "-grad * self.sin()"},
    "tan": {"self": "grad * (1 + result * result)"},
    "asin": {"self": "grad * (1 - self * self).rsqrt()"},
    "acos": {"self": "-grad * (1 - self * self).rsqrt()"},
    "atan": {"self": "grad / (1 + self * self)"},
    "sinh": {"self": "grad * self.cosh()"},
    "cosh": {"self": "grad * self.sinh()"},
    "tanh": {"self": "grad * (1 - result * result)"},
    "sigmoid": {"self": "grad * result * (1 - result)"},
    "erf": {"self": "grad * 1.1283791670955126 * (-self * self).exp()"},
    "relu": {"self": "grad * (result > 0)"},
    "silu": {"self": "_silu_backward(grad, self)"},
    "floor": {"self": "grad * 0"},
    "ceil": {"self": "grad * 0"},
    "trunc": {"self": "grad * 0"},
}

_BINARY = [
    # name, EwOp, node, aliases, example input -> output
    ("mul", "OP_MUL", "MulBackward0", ("multiply",), "tensorlib.tensor([1, 2]).mul(3).tolist()", "[3, 6]"),
    ("maximum", "OP_MAXIMUM", "MaximumBackward0", (), "tensorlib.maximum(tensorlib.tensor([1, 5]), tensorlib.tensor([3, 2])).tolist()", "[3, 5]"),
    ("minimum", "OP_MINIMUM", "MinimumBackward0", (), "tensorlib.minimum(tensorlib.tensor([1, 5]), tensorlib.tensor([3, 2])).tolist()", "[1, 2]"),
    ("atan2", "OP_ATAN2", "Atan2Backward0", ("arctan2",), "round(tensorlib.atan2(tensorlib.tensor([1.]), tensorlib.tensor([1.])).item(), 4)", "0.7854"),
    ("bitwise_and", "OP_BITWISE_AND", None, (), "tensorlib.tensor([6]).bitwise_and(3).tolist()", "[2]"),
    ("bitwise_or", "OP_BITWISE_OR", None, (), "tensorlib.tensor([6]).bitwise_or(3).tolist()", "[7]"),
    ("bitwise_xor", "OP_BITWISE_XOR", None, (), "tensorlib.tensor([6]).bitwise_xor(3).tolist()", "[5]"),
    ("bitwise_left_shift", "OP_LSHIFT", None, (), "tensorlib.tensor([1]).bitwise_left_shift(3).tolist()", "[8]"),
    ("bitwise_right_shift", "OP_RSHIFT", None, (), "tensorlib.tensor([8]).bitwise_right_shift(3).tolist()", "[1]"),
    ("eq", "OP_EQ", None, (), "tensorlib.tensor([1, 2]).eq(2).tolist()", "[False, True]"),
    ("ne", "OP_NE", None, ("not_equal",), "tensorlib.tensor([1, 2]).ne(2).tolist()", "[True, False]"),
    ("lt", "OP_LT", None, ("less",), "tensorlib.tensor([1, 2]).lt(2).tolist()", "[True, False]"),
    ("le", "OP_LE", None, ("less_equal",), "tensorlib.tensor([1, 2]).le(2).tolist()", "[True, True]"),
    ("gt", "OP_GT", None, ("greater",), "tensorlib.tensor([1, 2]).gt(1).tolist()", "[False, True]"),
    ("ge", "OP_GE", None, ("greater_equal",), "tensorlib.tensor([1, 2]).ge(2).tolist()", "[False, True]"),
    ("logical_and", "OP_LOGICAL_AND", None, (), "tensorlib.tensor([1, 0]).logical_and(tensorlib.tensor([1, 1])).tolist()", "[True, False]"),
    ("logical_or", "OP_LOGICAL_OR", None, (), "tensorlib.tensor([1, 0]).logical_or(tensorlib.tensor([0, 0])).tolist()", "[True, False]"),
    ("logical_xor", "OP_LOGICAL_XOR", None, (), "tensorlib.tensor([1, 0]).logical_xor(tensorlib.tensor([1, 1])).tolist()", "[False, True]"),
]
# Comparisons are differentiable only in place: ``x.lt_(y)`` keeps x's float dtype and its
# gradient (to x's old values and to y) is zero, as in PyTorch (LtBackward0/1).
_COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}
for _n, _op, _node, _al, _ex, _res in _BINARY:
    _cmp = _n in _COMPARISONS
    # maximum/minimum/atan2 take only tensors in PyTorch (a number is a TypeError)
    _other = "Tensor other" if _n in ("maximum", "minimum", "atan2") else "object other"
    OPS.append(op(_n, f"Tensor self, {_other}, *, object out=None", FMI, aliases=_al,
                  node=f"{_n.capitalize()}Backward0" if _cmp else _node,
                  node_if=((f"{_n.capitalize()}Backward1", "isinstance(other, TensorBase)"),) if _cmp else (),
                  record_inplace_only=_cmp,
                  backward={"self": "_zeros_grad(grad)", "other": "_zeros_grad(grad)"} if _cmp else _GRAD.get(_n),
                  impl=f"_binary({_op}, {{self}}, {{other}}, {{out}}, {{inplace}})",
                  doc=f"Elementwise ``{_n}`` with broadcasting and type promotion.\n\n    >>> {_ex}\n    {_res}"))

_UNARY = [
    # name, EwOp, node, aliases, example
    ("neg", "OP_NEG", "NegBackward0", ("negative",), "tensorlib.tensor([1, -2]).neg().tolist()", "[-1, 2]"),
    ("abs", "OP_ABS", "AbsBackward0", ("absolute",), "tensorlib.tensor([-1, 2]).abs().tolist()", "[1, 2]"),
    ("sign", "OP_SIGN", "SignBackward0", (), "tensorlib.tensor([-3., 0., 2.]).sign().tolist()", "[-1.0, 0.0, 1.0]"),
    ("reciprocal", "OP_RECIPROCAL", "ReciprocalBackward0", (), "tensorlib.tensor([2.]).reciprocal().tolist()", "[0.5]"),
    ("square", "OP_SQUARE", "PowBackward0", (), "tensorlib.tensor([3]).square().tolist()", "[9]"),
    ("exp", "OP_EXP", "ExpBackward0", (), "tensorlib.tensor([0.]).exp().tolist()", "[1.0]"),
    ("exp2", "OP_EXP2", "Exp2Backward0", (), "tensorlib.tensor([3.]).exp2().tolist()", "[8.0]"),
    ("expm1", "OP_EXPM1", "Expm1Backward0", (), "tensorlib.tensor([0.]).expm1().tolist()", "[0.0]"),
    ("log", "OP_LOG", "LogBackward0", (), "tensorlib.tensor([1.]).log().tolist()", "[0.0]"),
    ("log2", "OP_LOG2", "Log2Backward0", (), "tensorlib.tensor([8.]).log2().tolist()", "[3.0]"),
    ("log10", "OP_LOG10", "Log10Backward0", (), "tensorlib.tensor([100.]).log10().tolist()", "[2.0]"),
    ("log1p", "OP_LOG1P", "Log1PBackward0", (), "tensorlib.tensor([0.]).log1p().tolist()", "[0.0]"),
    ("sqrt", "OP_SQRT", "SqrtBackward0", (), "tensorlib.tensor([4.]).sqrt().tolist()", "[2.0]"),
    ("rsqrt", "OP_RSQRT", "RsqrtBackward0", (), "tensorlib.tensor([4.]).rsqrt().tolist()", "[0.5]"),
    ("sin", "OP_SIN", "SinBackward0", (), "tensorlib.tensor([0.]).sin().tolist()", "[0.0]"),
    ("cos", "OP_COS", "CosBackward0", (), "tensorlib.tensor([0.]).cos().tolist()", "[1.0]"),
    ("tan", "OP_TAN", "TanBackward0", (), "tensorlib.tensor([0.]).tan().tolist()", "[0.0]"),
    ("asin", "OP_ASIN", "AsinBackward0", ("arcsin",), "tensorlib.tensor([0.]).asin().tolist()", "[0.0]"),
    ("acos", "OP_ACOS", "AcosBackward0", ("arccos",), "tensorlib.tensor([1.]).acos().tolist()", "[0.0]"),
    ("atan", "OP_ATAN", "AtanBackward0", ("arctan",), "tensorlib.tensor([0.]).atan().tolist()", "[0.0]"),
    ("sinh", "OP_SINH", "SinhBackward0", (), "tensorlib.tensor([0.]).sinh().tolist()", "[0.0]"),
    ("cosh", "OP_COSH", "CoshBackward0", (), "tensorlib.tensor([0.]).cosh().tolist()", "[1.0]"),
    ("tanh", "OP_TANH", "TanhBackward0", (), "tensorlib.tensor([0.]).tanh().tolist()", "[0.0]"),
    ("sigmoid", "OP_SIGMOID", "SigmoidBackward0", (), "tensorlib.tensor([0.]).sigmoid().tolist()", "[0.5]"),
    ("erf", "OP_ERF", "ErfBackward0", (), "tensorlib.tensor([0.]).erf().tolist()", "[0.0]"),
    ("relu", "OP_RELU", "ReluBackward0", (), "tensorlib.tensor([-1., 2.]).relu().tolist()", "[0.0, 2.0]"),
    ("silu", "OP_SILU", "SiluBackward0", (), "tensorlib.tensor([0.]).silu().tolist()", "[0.0]"),
    ("floor", "OP_FLOOR", "FloorBackward0", (), "tensorlib.tensor([1.5, -1.5]).floor().tolist()", "[1.0, -2.0]"),
    ("ceil", "OP_CEIL", "CeilBackward0", (), "tensorlib.tensor([1.5, -1.5]).ceil().tolist()", "[2.0, -1.0]"),
    ("trunc", "OP_TRUNC", "TruncBackward0", ("fix",), "tensorlib.tensor([1.5, -1.5]).trunc().tolist()", "[1.0, -1.0]"),
    ("isnan", "OP_ISNAN", None, (), "tensorlib.tensor([float('nan'), 1.]).isnan().tolist()", "[True, False]"),
    ("isinf", "OP_ISINF", None, (), "tensorlib.tensor([float('inf'), 1.]).isinf().tolist()", "[True, False]"),
    ("isfinite", "OP_ISFINITE", None, (), "tensorlib.tensor([float('inf'), 1.]).isfinite().tolist()", "[False, True]"),
    ("signbit", "OP_SIGNBIT", None, (), "tensorlib.tensor([-0., 1.]).signbit().tolist()", "[True, False]"),
    ("logical_not", "OP_LOGICAL_NOT", None, (), "tensorlib.tensor([0, 3]).logical_not().tolist()", "[True, False]"),
    ("bitwise_not", "OP_BITWISE_NOT", None, (), "tensorlib.tensor([0]).bitwise_not().tolist()", "[-1]"),
]
_NO_INPLACE = {"isnan", "isinf", "isfinite", "signbit"}

for _n, _op, _node, _al, _ex, _res in _UNARY:
    OPS.append(op(_n, "Tensor self, *, object out=None",
                  "function method" if _n in _NO_INPLACE else FMI, aliases=_al, node=_node,
                  backward=_GRAD.get(_n),
                  impl=f"_unary({_op}, {{self}}, {{out}}, {{inplace}})",
                  doc=f"Elementwise ``{_n}``.\n\n    >>> {_ex}\n    {_res}"))

OPS += [
    op("add", "Tensor self, object other, *, object alpha=1, object out=None", FMI,
       impl="_add({self}, {other}, {alpha}, {out}, {inplace})", node="AddBackward0", backward={'self': 'grad', 'other': '_scale(grad, alpha)'},
       doc="``input + alpha * other`` with broadcasting and type promotion.\n\n"
           "    >>> tensorlib.tensor([1, 2]).add(tensorlib.tensor([10, 20]), alpha=2).tolist()\n    [21, 42]"),
    op("sub", "Tensor self, object other, *, object alpha=1, object out=None", FMI, aliases=("subtract",),
       impl="_add({self}, {other}, {alpha}, {out}, {inplace}, True)", node="SubBackward0", backward={'self': 'grad', 'other': '_scale(grad, -alpha)'},
       doc="``input - alpha * other``.\n\n    >>> tensorlib.tensor([5]).sub(2).tolist()\n    [3]"),
    op("rsub", "Tensor self, object other, *, object alpha=1", F,
       impl="_add({other}, {self}, {alpha}, None, False, True)", node="RsubBackward0", node_if=(("RsubBackward1", "not isinstance(other, TensorBase)"),), backward={'self': '_scale(grad, -alpha)', 'other': 'grad'},
       doc="``other - alpha * input``.\n\n    >>> tensorlib.rsub(tensorlib.tensor([1]), 5).tolist()\n    [4]"),
    op("div", "object self, object other, *, object rounding_mode=None, object out=None", FMI,
       aliases=("divide", "true_divide"), impl="_div({self}, {other}, {rounding_mode}, {out}, {inplace})",
       node="DivBackward0", node_if=(("DivBackward2", "rounding_mode is not None"),), backward={'self': '(grad / other) if rounding_mode is None else grad * 0', 'other': '(-grad * self / (other * other)) if rounding_mode is None else grad * 0'},
       doc="True division (integers give floats), or rounded with ``rounding_mode`` 'trunc'/'floor'.\n\n"
           "    >>> tensorlib.tensor([7, -7]).div(2, rounding_mode='floor').tolist()\n    [3, -4]"),
    op("floor_divide", "Tensor self, object other, *, object out=None", FMI,
       impl="_int_safe_binary(OP_DIV_FLOOR, {self}, {other}, {out}, {inplace})",
       doc="Division rounded toward negative infinity (Python's ``//``).\n\n"
           "    >>> tensorlib.tensor([-7]).floor_divide(2).tolist()\n    [-4]"),
    op("remainder", "object self, object other, *, object out=None", FMI,
       impl="_int_safe_binary(OP_REMAINDER, {self}, {other}, {out}, {inplace})", node="RemainderBackward0", node_if=(("RemainderBackward1", "isinstance(other, TensorBase)"),), backward={'self': 'grad', 'other': "-grad * self.div(other, rounding_mode='floor')"},
       doc="Python's modulus: the result has the sign of the divisor.\n\n"
           "    >>> tensorlib.tensor([-7]).remainder(3).tolist()\n    [2]"),
    op("fmod", "Tensor self, object other, *, object out=None", FMI,
       impl="_int_safe_binary(OP_FMOD, {self}, {other}, {out}, {inplace})", node="FmodBackward0", node_if=(("FmodBackward1", "isinstance(other, TensorBase)"),), backward={'self': 'grad', 'other': "-grad * self.div(other, rounding_mode='trunc')"},
       doc="C's modulus: the result has the sign of the dividend.\n\n"
           "    >>> tensorlib.tensor([-7]).fmod(3).tolist()\n    [-1]"),
    op("pow", "object self, object exponent, *, object out=None", FMI,
       impl="_pow({self}, {exponent}, {out}, {inplace})", node="PowBackward0",
       node_if=(("PowBackward2", "not isinstance(self, TensorBase)"), ("PowBackward1", "isinstance(exponent, TensorBase)")), backward={'self': '_pow_backward_self(grad, self, exponent)', 'exponent': '_pow_backward_exponent(grad, self, exponent, result)'},
       doc="``input ** exponent`` (either may be a number).\n\n"
           "    >>> tensorlib.pow(tensorlib.tensor([2, 3]), 2).tolist()\n    [4, 9]"),
    op("round", "Tensor self, *, int decimals=0, object out=None", FMI,
       impl="_round({self}, {decimals}, {out}, {inplace})", node="RoundBackward0", node_if=(("RoundBackward1", "decimals != 0"),), backward={'self': 'grad * 0'},
       doc="Round half to even (to ``decimals`` places).\n\n"
           "    >>> tensorlib.tensor([0.5, 1.5, 2.567]).round(decimals=1).tolist()[2]\n    2.6"),
    op("frac", "Tensor self, *, object out=None", FMI, impl="_frac({self}, {out}, {inplace})",
       node="FracBackward0", backward={'self': 'grad'},
       doc="Fractional part, ``x - trunc(x)``.\n\n    >>> tensorlib.tensor([1.25, -1.25]).frac().tolist()\n    [0.25, -0.25]"),
    op("nan_to_num", "Tensor self, object nan=0.0, object posinf=None, object neginf=None, *, object out=None", FMI,
       impl="_nan_to_num({self}, {nan}, {posinf}, {neginf}, {out}, {inplace})", node="NanToNumBackward0", backward={'self': 'grad * self.isfinite()'},
       doc="Replace NaN, +inf and -inf (by default with 0 and the dtype's extremes).\n\n"
           "    >>> tensorlib.tensor([float('nan'), 1.]).nan_to_num().tolist()\n    [0.0, 1.0]"),
    op("clamp", "Tensor self, object min=None, object max=None, *, object out=None", FMI, aliases=("clip",),
       impl="_clamp({self}, {min}, {max}, {out}, {inplace})", node="ClampBackward1",
       node_if=(("ClampBackward0", "isinstance(min, TensorBase) or isinstance(max, TensorBase)"),), backward={'self': '_clamp_backward(grad, self, min, max)', 'min': '_clamp_bound_backward(grad, self, min, False, max)', 'max': '_clamp_bound_backward(grad, self, max, True, min)'},
       doc="Limit values to [min, max] (numbers or tensors; either may be None).\n\n"
           "    >>> tensorlib.tensor([-2, 0, 5]).clamp(-1, 3).tolist()\n    [-1, 0, 3]"),
    op("clamp_min", "Tensor self, object min, *, object out=None", FMI,
       impl="_clamp({self}, {min}, None, {out}, {inplace})", node="ClampMinBackward0", node_if=(("ClampMinBackward1", "isinstance(min, TensorBase)"),),
       backward={'self': '_clamp_backward(grad, self, min, None)', 'min': '_clamp_bound_backward(grad, self, min, False)'},
       doc="``clamp(min=min)``.\n\n    >>> tensorlib.tensor([-2, 5]).clamp_min(0).tolist()\n    [0, 5]"),
    op("clamp_max", "Tensor self, object max, *, object out=None", FMI,
       impl="_clamp({self}, None, {max}, {out}, {inplace})", node="ClampMaxBackward0", node_if=(("ClampMaxBackward1", "isinstance(max, TensorBase)"),),
       backward={'self': '_clamp_backward(grad, self, None, max)', 'max': '_clamp_bound_backward(grad, self, max, True)'},
       doc="``clamp(max=max)``.\n\n    >>> tensorlib.tensor([-2, 5]).clamp_max(0).tolist()\n    [-2, 0]"),
    op("lerp", "Tensor self, object end, object weight, *, object out=None", FMI,
       impl="_lerp({self}, {end}, {weight}, {out}, {inplace})", node="LerpBackward0", node_if=(("LerpBackward1", "isinstance(weight, TensorBase)"),), backward={'self': 'grad * (1 - weight)', 'end': 'grad * weight', 'weight': 'grad * (end - self)'},
       doc="Linear interpolation ``input + weight * (end - input)``.\n\n"
           "    >>> tensorlib.tensor([0.]).lerp(tensorlib.tensor([10.]), 0.25).tolist()\n    [2.5]"),
    op("where", "Tensor condition, object self, object other, *, object out=None", F,
       impl="_where({condition}, {self}, {other}, {out})", node="WhereBackward0", backward={'self': 'where(condition, grad, 0.0)', 'other': 'where(condition, 0.0, grad)'}, input_name="condition",
       doc="Elements of ``input`` where ``condition`` holds, else of ``other``.\n\n"
           "    >>> tensorlib.where(tensorlib.tensor([True, False]), 1, 0).tolist()\n    [1, 0]"),
    op("masked_fill", "Tensor self, object mask, object value", "function method inplace",
       impl="_masked_fill({self}, {mask}, {value}, {inplace})", node="MaskedFillBackward0", node_if=(("MaskedFillBackward1", "isinstance(value, TensorBase)"),),
       backward={'self': 'grad.masked_fill(mask, 0)', 'value': 'where(mask, grad, 0.0).sum()'},
       doc="``value`` where ``mask`` is True, else ``input``.\n\n"
           "    >>> tensorlib.zeros(3).masked_fill(tensorlib.tensor([True, False, True]), 7).tolist()\n    [7.0, 0.0, 7.0]"),
    op("equal", "Tensor self, object other", FM, impl="_equal({self}, {other})",
       doc="True when both tensors have the same shape and elements.\n\n"
           "    >>> tensorlib.equal(tensorlib.tensor([1, 2]), tensorlib.tensor([1, 2]))\n    True"),
    op("isclose", "Tensor self, object other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False", FM,
       impl="_isclose({self}, {other}, {rtol}, {atol}, {equal_nan})",
       doc="``|input - other| <= atol + rtol * |other|`` elementwise.\n\n"
           "    >>> tensorlib.isclose(tensorlib.tensor([1.0]), tensorlib.tensor([1.0 + 1e-9])).tolist()\n    [True]"),
    op("allclose", "Tensor self, object other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False", FM,
       impl="_allclose({self}, {other}, {rtol}, {atol}, {equal_nan})",
       doc="Whether every element is close (see isclose).\n\n"
           "    >>> tensorlib.allclose(tensorlib.tensor([1.0]), tensorlib.tensor([1.00001]))\n    True"),
    # activations (also in tensorlib.nn.functional)
    op("leaky_relu", "Tensor self, float negative_slope=0.01, bool inplace=False", F,
       impl="_float_only(OP_LEAKY_RELU, {self}, None, {inplace}, ({negative_slope},))", node="LeakyReluBackward0", backward={'self': 'where(self > 0, grad, grad * negative_slope)'},
       doc="``x`` if x > 0 else ``negative_slope * x``.\n\n"
           "    >>> tensorlib.leaky_relu(tensorlib.tensor([-1., 1.]), 0.1).tolist()\n    [-0.10000000149011612, 1.0]"),
    op("elu", "Tensor self, float alpha=1.0, bool inplace=False", F,
       impl="_float_only(OP_ELU, {self}, None, {inplace}, ({alpha}, 1.0, 1.0))", node="EluBackward0", backward={'self': '_elu_backward(grad, self, alpha)'},
       doc="``x`` if x > 0 else ``alpha * (exp(x) - 1)``.\n\n"
           "    >>> tensorlib.elu(tensorlib.tensor([0., 1.])).tolist()\n    [0.0, 1.0]"),
    op("gelu", "Tensor self, *, object approximate='none'", F,
       impl="_gelu({self}, {approximate}, None, False)", node="GeluBackward0", backward={'self': '_gelu_backward(grad, self, approximate)'},
       doc="Gaussian error linear unit (exact, or ``approximate='tanh'``).\n\n"
           "    >>> tensorlib.gelu(tensorlib.tensor([0.])).tolist()\n    [0.0]"),
    op("softplus", "Tensor self, float beta=1.0, float threshold=20.0", F,
       impl="_float_only(OP_SOFTPLUS, {self}, None, False, ({beta}, {threshold}))", node="SoftplusBackward0", backward={'self': '_softplus_backward(grad, self, beta, threshold)'},
       doc="``log(1 + exp(beta * x)) / beta`` (linear above ``threshold``).\n\n"
           "    >>> round(tensorlib.softplus(tensorlib.tensor([0.])).item(), 4)\n    0.6931"),
    op("hardtanh", "Tensor self, float min_val=-1.0, float max_val=1.0, bool inplace=False", F,
       impl="_float_only(OP_HARDTANH, {self}, None, {inplace}, ({min_val}, {max_val}))", node="HardtanhBackward0", backward={'self': 'grad * ((self > min_val) & (self < max_val))'},
       doc="Clamp to [min_val, max_val].\n\n    >>> tensorlib.hardtanh(tensorlib.tensor([-3., 0.5])).tolist()\n    [-1.0, 0.5]"),
    # ------------------------------------------------------------------ sorting
    op("sort", "Tensor self, int dim=-1, bool descending=False, *, object stable=None, object out=None",
       impl="_sort({self}, {dim}, {descending}, {stable}, {out})", node="SortBackward0", backward={'self': '_take_along_backward(grads[0], self_sizes, dim, indices, True)'}, outputs="multi",
       doc="Sorted values along ``dim`` and the indices they came from, as ``(values, indices)``. "
           "Always stable (ties keep their order, also when descending); NaN sorts as the largest "
           "value.\n\n"
           "    >>> tensorlib.sort(tensorlib.tensor([3, 1, 2])).indices.tolist()\n    [1, 2, 0]"),
    op("argsort", "Tensor self, int dim=-1, bool descending=False, *, bool stable=False, object out=None",
       impl="_argsort({self}, {dim}, {descending}, {stable}, {out})",
       doc="The indices that sort ``dim`` (``sort(...).indices``).\n\n"
           "    >>> tensorlib.tensor([3., 1., 2.]).argsort(descending=True).tolist()\n    [0, 2, 1]"),
    op("msort", "Tensor self, *, object out=None", impl="_msort({self}, {out})", node="SortBackward0",
       backward={'self': '_msort_backward(grad, self)'},
       doc="Values sorted along dim 0.\n\n"
           "    >>> tensorlib.msort(tensorlib.tensor([[2, 0], [1, 3]])).tolist()\n    [[1, 0], [2, 3]]"),
    op("topk", "Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True, *, object out=None",
       impl="_topk({self}, {k}, {dim}, {largest}, {sorted}, {out})", node="TopkBackward0", backward={'self': '_take_along_backward(grads[0], self_sizes, dim, indices, True)'}, outputs="multi",
       doc="The ``k`` largest (``largest=False``: smallest) elements along ``dim`` with their "
           "indices, as ``(values, indices)``; NaN counts as the largest value.\n\n"
           "    >>> tensorlib.topk(tensorlib.tensor([1., 5., 3.]), 2).values.tolist()\n    [5.0, 3.0]"),
    op("kthvalue", "Tensor self, int k, int dim=-1, bool keepdim=False, *, object out=None",
       impl="_kthvalue({self}, {k}, {dim}, {keepdim}, {out})", node="KthvalueBackward0", backward={'self': '_take_along_backward(grads[0], self_sizes, dim, indices, keepdim)'}, outputs="multi",
       doc="The ``k``-th smallest element (1-based) along ``dim`` and its index.\n\n"
           "    >>> tensorlib.kthvalue(tensorlib.tensor([4, 1, 3]), 2).values.item()\n    3"),
    # median/nanmedian: PyTorch's node is MedianBackward0/NanmedianBackward0 for the whole-tensor
    # form and MedianBackward1/NanmedianBackward1 with a dim.
    op("median", "Tensor self, object dim=None, bool keepdim=False, *, object out=None",
       impl="_median({self}, {dim}, {keepdim}, {out})", node="MedianBackward0", outputs="auto",
       node_if=(("MedianBackward1", "dim is not None"),),
       backward={'self': '_median_backward(grads, self, result, indices, dim, keepdim)'},
       doc="The lower median (of an even count, the smaller middle value): of all elements, or "
           "along ``dim`` as ``(values, indices)``. NaN if there is a NaN.\n\n"
           "    >>> tensorlib.median(tensorlib.tensor([4., 1., 3., 2.])).item()\n    2.0"),
    op("nanmedian", "Tensor self, object dim=None, bool keepdim=False, *, object out=None",
       impl="_nanmedian({self}, {dim}, {keepdim}, {out})", node="NanmedianBackward0", outputs="auto",
       node_if=(("NanmedianBackward1", "dim is not None"),),
       backward={'self': '_median_backward(grads, self, result, indices, dim, keepdim)'},
       doc="median() ignoring NaNs (NaN only where every value is NaN).\n\n"
           "    >>> tensorlib.nanmedian(tensorlib.tensor([4., float('nan'), 1.])).item()\n    1.0"),
    op("mode", "Tensor self, int dim=-1, bool keepdim=False, *, object out=None",
       impl="_mode({self}, {dim}, {keepdim}, {out})", node="ModeBackward0", outputs="multi",
       backward={'self': '_take_along_backward(grads[0], self_sizes, dim, indices, keepdim)'},
       doc="The most frequent value along ``dim`` (the smallest of equally frequent ones) and an "
           "index where it occurs (the last).\n\n"
           "    >>> tensorlib.mode(tensorlib.tensor([2, 1, 2, 1, 3])).values.item()\n    1"),
    op("unique", "Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False, object dim=None",
       impl="_unique({self}, {sorted}, {return_inverse}, {return_counts}, {dim})", node="Unique2Backward0",
       node_if=(("UniqueDimBackward0", "dim is not None"),), outputs="auto",
       backward={'self': "_not_implemented_backward('unique_dim' if dim is not None else '_unique2')"},
       doc="The sorted distinct elements (or slices along ``dim``), optionally with each "
           "element's position in them and each one's count.\n\n"
           "    >>> tensorlib.unique(tensorlib.tensor([3, 1, 3]), return_counts=True)\n"
           "    (tensor([1, 3]), tensor([1, 2]))"),
    op("unique_consecutive", "Tensor self, bool return_inverse=False, bool return_counts=False, object dim=None",
       impl="_unique_consecutive({self}, {return_inverse}, {return_counts}, {dim})",
       node="UniqueConsecutiveBackward0", outputs="auto",
       backward={'self': "_not_implemented_backward('unique_consecutive')"},
       doc="Collapse each run of equal consecutive elements (or slices along ``dim``) to one.\n\n"
           "    >>> tensorlib.unique_consecutive(tensorlib.tensor([1, 1, 2, 1])).tolist()\n    [1, 2, 1]"),
    # ------------------------------------------------------------------ indexing
    op("index_select", "Tensor self, int dim, Tensor index, *, object out=None",
       impl="_index_select({self}, {dim}, {index}, {out})", node="IndexSelectBackward0",
       backward={'self': '_index_select_backward(grad, self_sizes, dim, index)'},
       doc="The entries of ``index`` (int32/int64 vector) along ``dim``, as a new tensor.\n\n"
           "    >>> tensorlib.arange(6).view(3, 2).index_select(0, tensorlib.tensor([2, 0])).tolist()\n"
           "    [[4, 5], [0, 1]]"),
    op("gather", "Tensor self, int dim, Tensor index, *, bool sparse_grad=False, object out=None",
       impl="_gather({self}, {dim}, {index}, {sparse_grad}, {out})", node="GatherBackward0",
       backward={'self': '_gather_backward(grad, self_sizes, dim, index)'},
       doc="``out[i][j] = input[index[i][j]][j]`` (dim 0): one index per output element.\n\n"
           "    >>> tensorlib.gather(tensorlib.tensor([[1, 2], [3, 4]]), 1, tensorlib.tensor([[1], [0]])).tolist()\n"
           "    [[2], [3]]"),
    op("scatter", "Tensor self, int dim, Tensor index, object src=None, *, object value=None, object reduce=None, object out=None",
       "function method inplace",
       impl="_scatter({self}, {dim}, {index}, {src}, {value}, {reduce}, {out}, {inplace})",
       node="ScatterBackward0",
       node_if=(("_NotImplementedNode", "reduce is not None"),
                ("ScatterBackward1", "not isinstance(src, TensorBase)")),
       backward={'self': '_scatter_self_backward(grad, dim, index, reduce)',
                 'src': '_scatter_src_backward(grad, dim, index, src_sizes, reduce)'},
       doc="Write ``src`` (a tensor or a number) at ``index`` along ``dim``; ``reduce`` = "
           "'add' or 'multiply' combines instead.\n\n"
           "    >>> tensorlib.zeros(3).scatter(0, tensorlib.tensor([2]), 5.0).tolist()\n"
           "    [0.0, 0.0, 5.0]"),
    op("scatter_add", "Tensor self, int dim, Tensor index, Tensor src, *, object out=None",
       "function method inplace",
       impl="_scatter_add({self}, {dim}, {index}, {src}, {out}, {inplace})", node="ScatterAddBackward0",
       backward={'self': 'grad', 'src': '_scatter_src_backward(grad, dim, index, src_sizes, None)'},
       doc="Add ``src`` into self at ``index`` along ``dim`` (repeated indices accumulate, in order).\n\n"
           "    >>> tensorlib.zeros(2).scatter_add(0, tensorlib.tensor([1, 1]), tensorlib.ones(2)).tolist()\n"
           "    [0.0, 2.0]"),
    op("scatter_reduce", "Tensor self, int dim, Tensor index, Tensor src, object reduce, *, bool include_self=True, object out=None",
       "function method inplace",
       impl="_scatter_reduce({self}, {dim}, {index}, {src}, {reduce}, {include_self}, {out}, {inplace})",
       node="ScatterReduceBackward0",
       backward={'self': '_scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result, 0)',
                 'src': '_scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result, 1)'},
       doc="Reduce ``src`` into self at ``index`` with 'sum', 'prod', 'mean', 'amax' or 'amin'.\n\n"
           "    >>> tensorlib.zeros(2).scatter_reduce(0, tensorlib.tensor([0, 0]), tensorlib.tensor([3., 5.]), 'amax').tolist()\n"
           "    [5.0, 0.0]"),
    op("index_add", "Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1, object out=None",
       "function method inplace",
       impl="_index_accumulate({self}, {dim}, {index}, {source}, {alpha}, {inplace}, {out}, 0)",
       node="IndexAddBackward0",
       backward={'self': 'grad', 'source': '_index_source_backward(grad, dim, index, source_sizes, alpha)'},
       doc="Add ``alpha * source`` into the slices of self chosen by ``index`` along ``dim``.\n\n"
           "    >>> tensorlib.zeros(3).index_add(0, tensorlib.tensor([0, 0]), tensorlib.ones(2)).tolist()\n"
           "    [2.0, 0.0, 0.0]"),
    op("index_copy", "Tensor self, int dim, Tensor index, Tensor source, *, object out=None",
       "function method inplace",
       impl="_index_accumulate({self}, {dim}, {index}, {source}, None, {inplace}, {out}, 1)",
       node="IndexCopyBackward0",
       backward={'self': 'grad.index_fill(dim, index, 0)',
                 'source': '_index_source_backward(grad, dim, index, source_sizes, 1)'},
       doc="Copy the slices of ``source`` into self at ``index`` (int64) along ``dim``.\n\n"
           "    >>> tensorlib.zeros(3).index_copy(0, tensorlib.tensor([2]), tensorlib.ones(1)).tolist()\n"
           "    [0.0, 0.0, 1.0]"),
    op("index_fill", "Tensor self, int dim, Tensor index, object value", "function method inplace",
       impl="_index_fill({self}, {dim}, {index}, {value}, {inplace})", node="IndexFillBackward0",
       node_if=(("IndexFillBackward1", "isinstance(value, TensorBase)"),),
       backward={'self': 'grad.index_fill(dim, index, 0)', 'value': '_index_fill_value_backward(grad, dim, index)'},
       doc="Fill the slices of self chosen by ``index`` (int64) along ``dim`` with ``value``.\n\n"
           "    >>> tensorlib.zeros(3).index_fill(0, tensorlib.tensor([-1]), 7).tolist()\n"
           "    [0.0, 0.0, 7.0]"),
    op("index_put", "Tensor self, object indices, Tensor values, bool accumulate=False",
       "function method inplace",
       impl="_index_put({self}, {indices}, {values}, {accumulate}, {inplace})", node="IndexPutBackward0",
       backward={'self': '_index_put_self_backward(grad, indices, accumulate)',
                 'values': '_index_put_values_backward(grad, indices)'},
       doc="``self[indices] = values`` (a tuple of index tensors); ``accumulate`` adds, repeated "
           "indices included.\n\n"
           "    >>> tensorlib.zeros(3).index_put((tensorlib.tensor([1, 1]),), tensorlib.tensor(2.), accumulate=True).tolist()\n"
           "    [0.0, 4.0, 0.0]"),
    op("index_put_", "Tensor self, object indices, Tensor values, bool accumulate=False", F,
       impl="_index_put({self}, {indices}, {values}, {accumulate}, True)", node="IndexPutBackward0",
       backward={'self': '_index_put_self_backward(grad, indices, accumulate)',
                 'values': '_index_put_values_backward(grad, indices)'},
       doc="``input[indices] = values`` in place (the function form of ``Tensor.index_put_``).\n\n"
           "    >>> x = tensorlib.zeros(2); _ = tensorlib.index_put_(x, (tensorlib.tensor([1]),), tensorlib.tensor(3.)); x.tolist()\n"
           "    [0.0, 3.0]"),
    op("masked_select", "Tensor self, Tensor mask, *, object out=None",
       impl="_masked_select({self}, {mask}, {out})", node="MaskedSelectBackward0",
       backward={'self': '_masked_select_backward(grad, self_sizes, mask)'},
       doc="The elements where the (broadcast) bool ``mask`` is True, as a 1-d tensor.\n\n"
           "    >>> x = tensorlib.arange(4); tensorlib.masked_select(x, x > 1).tolist()\n"
           "    [2, 3]"),
    op("masked_scatter", "Tensor self, Tensor mask, Tensor source", "function method inplace",
       impl="_masked_scatter({self}, {mask}, {source}, {inplace})", node="MaskedScatterBackward0",
       backward={'self': 'grad.masked_fill(mask, 0)', 'source': '_masked_scatter_source_backward(grad, mask, source_sizes)'},
       doc="Copy ``source``'s leading elements, in order, where ``mask`` is True.\n\n"
           "    >>> tensorlib.zeros(3).masked_scatter(tensorlib.tensor([True, False, True]), tensorlib.tensor([1., 2.])).tolist()\n"
           "    [1.0, 0.0, 2.0]"),
    op("nonzero", "Tensor self, *, object out=None, bool as_tuple=False",
       impl="_nonzero({self}, {out}, {as_tuple})",
       doc="Indices of the nonzero elements: an int64 (N, ndim) tensor, or one tensor per dim "
           "with ``as_tuple``.\n\n"
           "    >>> tensorlib.tensor([[0, 1], [1, 0]]).nonzero().tolist()\n"
           "    [[0, 1], [1, 0]]"),
    op("argwhere", "Tensor self", impl="_nonzero({self}, None, False)",
       doc="Same as ``nonzero(input)``.\n\n"
           "    >>> tensorlib.argwhere(tensorlib.tensor([0, 3, 0, 4])).tolist()\n"
           "    [[1], [3]]"),
    op("take", "Tensor self, Tensor index, *, object out=None", impl="_take({self}, {index}, {out})",
       node="TakeBackward0", backward={'self': '_take_backward(grad, self_sizes, index)'},
       doc="Elements of ``input`` read as 1-d (C order) at ``index`` (int64; negative counts from the end).\n\n"
           "    >>> tensorlib.take(tensorlib.tensor([[1, 2], [3, 4]]), tensorlib.tensor([0, -1])).tolist()\n"
           "    [1, 4]"),
    op("put", "Tensor self, Tensor index, Tensor source, bool accumulate=False", "function method inplace",
       impl="_put({self}, {index}, {source}, {accumulate}, {inplace})", node="PutBackward0",
       backward={'self': '_put_self_backward(grad, index, accumulate)', 'source': 'grad.take(index).reshape(source_sizes)'},
       doc="Write ``source`` into self read as 1-d (C order) at ``index``; ``accumulate`` adds.\n\n"
           "    >>> tensorlib.zeros(2, 2).put(tensorlib.tensor([3]), tensorlib.tensor([9.])).tolist()\n"
           "    [[0.0, 0.0], [0.0, 9.0]]"),
    # ---- reductions
    op("sum", "Tensor self, object dim=None, bool keepdim=False, *, dtype? dtype=None, object out=None",
       node="SumBackward0", node_if=(("SumBackward1", "dim is not None"),), backward={'self': '_expand_reduced(grad, self_sizes, dim, keepdim)'},
       doc="Sum over all dims, a dim or a tuple of dims (bool and integers give int64).\n\n"
           "    >>> tensorlib.arange(6).view(2, 3).sum(1).tolist()\n    [3, 12]"),
    op("mean", "Tensor self, object dim=None, bool keepdim=False, *, dtype? dtype=None, object out=None",
       node="MeanBackward0", node_if=(("MeanBackward1", "dim is not None"),), backward={'self': '_expand_reduced(grad, self_sizes, dim, keepdim) / _bw_reduced_count(self_sizes, dim)'},
       doc="Mean over all dims, a dim or a tuple of dims (floating-point input or dtype).\n\n"
           "    >>> tensorlib.tensor([[1., 2.], [3., 5.]]).mean(0).tolist()\n    [2.0, 3.5]"),
    op("prod", "Tensor self, object dim=None, bool keepdim=False, *, dtype? dtype=None, object out=None",
       node="ProdBackward0", node_if=(("ProdBackward1", "dim is not None"),),
       backward={'self': '_prod_backward(grad, self, result, dim, keepdim)'},
       doc="Product over all elements or along one dim (bool and integers give int64).\n\n"
           "    >>> tensorlib.tensor([[1, 2], [3, 4]]).prod(1).tolist()\n    [2, 12]"),
    op("var", "Tensor self, object dim=None, object unbiased=None, bool keepdim=False, *, object correction=None, object out=None",
       node="VarBackward0", backward={'self': '_var_backward(grad, self, dim, correction, keepdim, unbiased)'},
       doc="Variance, divided by ``N - correction`` (unbiased: correction 1, by default).\n\n"
           "    >>> tensorlib.tensor([1., 2., 3., 4.]).var().item()\n    1.6666666269302368"),
    op("std", "Tensor self, object dim=None, object unbiased=None, bool keepdim=False, *, object correction=None, object out=None",
       node="StdBackward0", backward={'self': '_var_backward(grad / (2 * result), self, dim, correction, keepdim, unbiased)'},
       doc="Standard deviation: the square root of var (unbiased by default).\n\n"
           "    >>> tensorlib.tensor([1., 3.]).std().item()\n    1.4142135381698608"),
    op("var_mean", "Tensor self, object dim=None, object unbiased=None, bool keepdim=False, *, object correction=None", F,
       node="VarMeanBackward0", outputs="multi",
       backward={'self': '_var_mean_backward(grads, self, dim, correction, keepdim, unbiased, False)'},
       doc="``(var, mean)`` in one call.\n\n"
           "    >>> [t.item() for t in tensorlib.var_mean(tensorlib.tensor([1., 3.]))]\n    [2.0, 2.0]"),
    op("std_mean", "Tensor self, object dim=None, object unbiased=None, bool keepdim=False, *, object correction=None", F,
       node="StdMeanBackward0", outputs="multi",
       backward={'self': '_var_mean_backward(grads, self, dim, correction, keepdim, unbiased, True)'},
       doc="``(std, mean)`` in one call.\n\n"
           "    >>> [t.item() for t in tensorlib.std_mean(tensorlib.tensor([1., 1.]))]\n    [0.0, 1.0]"),
    op("max", "Tensor self, object dim=None, object keepdim=None, *, object other=None, object out=None",
       impl="_max_min({self}, {dim}, {keepdim}, {other}, {out}, True)", node="MaxBackward1", outputs="auto",
       node_if=(("MaximumBackward0", "other is not None or isinstance(dim, TensorBase)"), ("MaxBackward0", "dim is not None")),
       backward={'self': '_max_backward(grads, self, result, indices, dim, keepdim, other, True)',
                 'dim': '_max_other_backward(grads, self, dim, other, True)',
                 'other': '_max_other_backward(grads, self, dim, other, True)'},
       doc="The largest element (NaN if any); with ``dim`` a ``(values, indices)`` named tuple "
           "(first index on ties); ``max(input, other)`` is ``maximum``.\n\n"
           "    >>> values, indices = tensorlib.tensor([[1, 5, 5]]).max(1)\n"
           "    >>> values.tolist(), indices.tolist()\n    ([5], [1])"),
    op("min", "Tensor self, object dim=None, object keepdim=None, *, object other=None, object out=None",
       impl="_max_min({self}, {dim}, {keepdim}, {other}, {out}, False)", node="MinBackward1", outputs="auto",
       node_if=(("MinimumBackward0", "other is not None or isinstance(dim, TensorBase)"), ("MinBackward0", "dim is not None")),
       backward={'self': '_max_backward(grads, self, result, indices, dim, keepdim, other, False)',
                 'dim': '_max_other_backward(grads, self, dim, other, False)',
                 'other': '_max_other_backward(grads, self, dim, other, False)'},
       doc="The smallest element (NaN if any); with ``dim`` a ``(values, indices)`` named tuple; "
           "``min(input, other)`` is ``minimum``.\n\n"
           "    >>> tensorlib.tensor([[4, 2], [1, 3]]).min(0).indices.tolist()\n    [1, 0]"),
    op("amax", "Tensor self, object dim=(), bool keepdim=False, *, object out=None",
       impl="_amax_amin({self}, {dim}, {keepdim}, {out}, True)", node="AmaxBackward0", backward={'self': '_evenly_distribute(grad, self, result, dim, keepdim)'},
       doc="Largest values over all dims, a dim or a tuple of dims (NaN propagates).\n\n"
           "    >>> tensorlib.tensor([[1, 5], [7, 2]]).amax(1).tolist()\n    [5, 7]"),
    op("amin", "Tensor self, object dim=(), bool keepdim=False, *, object out=None",
       impl="_amax_amin({self}, {dim}, {keepdim}, {out}, False)", node="AminBackward0", backward={'self': '_evenly_distribute(grad, self, result, dim, keepdim)'},
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
       node="LinalgVectorNormBackward0", backward={'self': '_norm_backward(grad, self, p, dim, keepdim, result)'},
       doc="Vector p-norm over all dims, a dim or a tuple of dims: p = 'fro' (2), 1, 2, inf, "
           "-inf, 0 (count of nonzeros) or any other number.\n\n"
           "    >>> tensorlib.tensor([3., -4.]).norm().item(), tensorlib.tensor([3., -4.]).norm(1).item()\n"
           "    (5.0, 7.0)"),
    op("logsumexp", "Tensor self, object dim, bool keepdim=False, *, object out=None",
       node="LogsumexpBackward0", backward={'self': '_expand_reduced(grad, self_sizes, dim, keepdim) * (self - _expand_reduced(result, self_sizes, dim, keepdim)).exp()'},
       doc="``log(sum(exp(input)))`` over ``dim``, computed stably (shifted by the max).\n\n"
           "    >>> round(tensorlib.tensor([1000., 1000.]).logsumexp(0).item(), 3)\n    1000.693"),
    op("cumsum", "Tensor self, int dim, *, dtype? dtype=None, object out=None", "function method inplace",
       impl="_cumsum({self}, {dim}, {dtype}, {out}, {inplace})", node="CumsumBackward0", backward={'self': 'grad.flip(dim).cumsum(dim).flip(dim)'},
       doc="Running sums along ``dim`` (bool and integers give int64).\n\n"
           "    >>> tensorlib.tensor([1, 2, 3]).cumsum(0).tolist()\n    [1, 3, 6]"),
    op("cumprod", "Tensor self, int dim, *, dtype? dtype=None, object out=None", "function method inplace",
       impl="_cumprod({self}, {dim}, {dtype}, {out}, {inplace})", node="CumprodBackward0", backward={'self': '_cumprod_backward(grad, self, dim, result)'},
       doc="Running products along ``dim`` (bool and integers give int64).\n\n"
           "    >>> tensorlib.tensor([1, 2, 3]).cumprod(0).tolist()\n    [1, 2, 6]"),
    op("softmax", "Tensor self, int dim, dtype? dtype=None", node="SoftmaxBackward0", backward={'self': 'result * (grad - (grad * result).sum(dim, keepdim=True))'},
       doc="``exp(x) / sum(exp(x))`` along ``dim``, computed stably (shifted by the max).\n\n"
           "    >>> tensorlib.tensor([0., 0.]).softmax(0).tolist()\n    [0.5, 0.5]"),
    op("log_softmax", "Tensor self, int dim, dtype? dtype=None", node="LogSoftmaxBackward0", backward={'self': 'grad - result.exp() * grad.sum(dim, keepdim=True)'},
       doc="``x - logsumexp(x)`` along ``dim``, computed stably.\n\n"
           "    >>> round(tensorlib.tensor([0., 0.]).log_softmax(0)[0].item(), 4)\n    -0.6931"),
]
