"""Views (no copy) and in-place metadata changes."""
from .common import F, M, op

OPS = [
    op("view", "Tensor self, object... shape", M, impl="_view_dispatch({self}, {shape})",
       node="ViewBackward0", backward={'self': 'grad.reshape(self_sizes)'}, view_of="self",
       # a dtype view is not differentiable (PyTorch: even to the same dtype)
       record_if="not (len({shape}) == 1 and isinstance({shape}[0], (DType, type)))",
       doc="A view with a new shape (PyTorch's compatibility rule; one -1 is inferred), or a "
           "reinterpretation as another dtype.\n\n    >>> tensorlib.arange(6).view(2, -1).shape\n"
           "    tensorlib.Size([2, 3])"),
    op("view_as", "Tensor self, Tensor other", M, impl="_view({self}, tuple({other}.shape))",
       node="ViewBackward0", backward={'self': 'grad.reshape(self_sizes)'}, view_of="self",
       doc="``self.view(other.shape)``.\n\n"
           "    >>> tensorlib.arange(4).view_as(tensorlib.zeros(2, 2)).shape\n"
           "    tensorlib.Size([2, 2])"),
    # reshape records what PyTorch's does: a view of a contiguous input is ViewBackward0, of
    # a non-contiguous one ReshapeAliasBackward0, and a copy CloneBackward0 + UnsafeViewBackward0
    op("reshape", "Tensor self, int[]... shape", impl="_reshape_op({self}, {shape})",
       records_itself=True,
       node="ViewBackward0", node_if=(("ReshapeAliasBackward0", "not self.is_contiguous()"),),
       backward={'self': 'grad.reshape(self_sizes)'}, view_of="self",
       doc="A view when the view rule allows one, otherwise a copy.\n\n"
           "    >>> tensorlib.arange(6).reshape(3, 2).shape\n    tensorlib.Size([3, 2])"),
    op("reshape_as", "Tensor self, Tensor other", M,
       impl="_reshape_op({self}, tuple({other}.shape))", records_itself=True,
       node="ViewBackward0", node_if=(("ReshapeAliasBackward0", "not self.is_contiguous()"),),
       backward={'self': 'grad.reshape(self_sizes)'}, view_of="self",
       doc="``self.reshape(other.shape)``.\n\n"
           "    >>> tensorlib.arange(4).reshape_as(tensorlib.zeros(2, 2)).shape\n"
           "    tensorlib.Size([2, 2])"),
    op("transpose", "Tensor self, int dim0, int dim1", aliases=("swapaxes", "swapdims"),
       node="TransposeBackward0", backward={'self': 'grad.transpose(dim0, dim1)'}, view_of="self",
       doc="A view with dims ``dim0`` and ``dim1`` swapped.\n\n"
           "    >>> tensorlib.zeros(2, 3).transpose(0, 1).shape\n    tensorlib.Size([3, 2])"),
    op("t", "Tensor self", node="TBackward0", backward={'self': 'grad.t()'}, view_of="self",
       doc="Transpose of a tensor with at most 2 dims.\n\n"
           "    >>> tensorlib.zeros(2, 3).t().stride()\n    (1, 3)"),
    op("permute", "Tensor self, int[]... dims", node="PermuteBackward0",
       backward={'self': 'grad.permute(_inverse_perm(dims))'}, view_of="self",
       doc="A view with dims reordered.\n\n"
           "    >>> tensorlib.zeros(2, 3, 4).permute(2, 0, 1).shape\n"
           "    tensorlib.Size([4, 2, 3])"),
    op("movedim", "Tensor self, object source, object destination", aliases=("moveaxis",),
       node="PermuteBackward0", backward={'self': 'grad.movedim(destination, source)'},
       node_if=(("AliasBackward0", "self.dim() == 0"),), view_of="self",
       doc="A view with dims ``source`` moved to positions ``destination``.\n\n"
           "    >>> tensorlib.zeros(2, 3, 4).movedim(0, -1).shape\n    tensorlib.Size([3, 4, 2])"),
    op("expand", "Tensor self, int[]... size, *, bool implicit=False", M,
       impl="_expand({self}, {size})", node="ExpandBackward0", backward={'self': 'grad'},
       view_of="self",
       doc="A view with size-1 dims repeated (stride 0); -1 keeps a size.\n\n"
           "    >>> tensorlib.zeros(3, 1).expand(-1, 4).stride()\n    (1, 0)"),
    op("expand_as", "Tensor self, Tensor other", M, impl="_expand({self}, tuple({other}.shape))",
       node="ExpandBackward0", backward={'self': 'grad'}, view_of="self",
       doc="``self.expand(other.shape)``.\n\n"
           "    >>> tensorlib.zeros(1).expand_as(tensorlib.zeros(3)).shape\n"
           "    tensorlib.Size([3])"),
    op("broadcast_to", "Tensor self, int[]... size", impl="_expand({self}, {size})",
       node="ExpandBackward0", backward={'self': 'grad'}, view_of="self",
       doc="A view broadcast to ``size``.\n\n"
           "    >>> tensorlib.broadcast_to(tensorlib.zeros(3), (2, 3)).shape\n"
           "    tensorlib.Size([2, 3])"),
    op("broadcast_tensors", "object... tensors", F, impl="_broadcast_tensors({tensors})",
       node="ExpandBackward0",
       doc="Views of the tensors broadcast to their common shape.\n\n"
           "    >>> a, b = tensorlib.broadcast_tensors(tensorlib.zeros(3, 1), tensorlib.zeros(4))\n"
           "    >>> a.shape\n    tensorlib.Size([3, 4])"),
    op("narrow", "Tensor self, int dim, int start, int length", node="SliceBackward0",
       backward={'self': '_narrow_backward(grad, self_sizes, dim, start, length)'}, view_of="self",
       doc="A view of ``length`` elements from ``start`` along ``dim``.\n\n"
           "    >>> tensorlib.arange(5).narrow(0, 1, 2).tolist()\n    [1, 2]"),
    op("select", "Tensor self, int dim, int index", node="SelectBackward0",
       backward={'self': '_select_backward(grad, self_sizes, dim, index)'}, view_of="self",
       doc="A view of index ``index`` along ``dim`` (that dim removed).\n\n"
           "    >>> tensorlib.arange(6).view(2, 3).select(1, 2).tolist()\n    [2, 5]"),
    op("unsqueeze", "Tensor self, int dim", node="UnsqueezeBackward0",
       backward={'self': 'grad.squeeze(dim)'}, view_of="self",
       doc="A view with a size-1 dim inserted at ``dim``.\n\n"
           "    >>> tensorlib.zeros(3).unsqueeze(0).shape\n    tensorlib.Size([1, 3])"),
    op("squeeze", "Tensor self, object dim=None", node="SqueezeBackward0",
       node_if=(("SqueezeBackward2", "isinstance(dim, (tuple, list))"),
                ("SqueezeBackward1", "dim is not None")),
       backward={'self': 'grad.reshape(self_sizes)'}, view_of="self",
       doc="A view without size-1 dims (all, or those in ``dim``; a non-1 dim is left alone).\n\n"
           "    >>> tensorlib.zeros(1, 3, 1).squeeze().shape\n    tensorlib.Size([3])"),
    op("flatten", "Tensor self, int start_dim=0, int end_dim=-1", node="ViewBackward0",
       node_if=(("ReshapeAliasBackward0", "not self.is_contiguous()"),), records_itself=True,
       may_return_self=True,
       backward={'self': 'grad.reshape(self_sizes)'}, view_of="self",
       doc="Dims ``start_dim..end_dim`` merged into one (a view when possible).\n\n"
           "    >>> tensorlib.zeros(2, 3, 4).flatten(1).shape\n    tensorlib.Size([2, 12])"),
    op("unflatten", "Tensor self, int dim, int[]! sizes", node="ViewBackward0",
       backward={'self': 'grad.reshape(self_sizes)'}, view_of="self",
       doc="Dim ``dim`` split into ``sizes`` (one -1 allowed).\n\n"
           "    >>> tensorlib.zeros(2, 12).unflatten(1, (3, -1)).shape\n"
           "    tensorlib.Size([2, 3, 4])"),
    op("as_strided", "Tensor self, int[]! size, int[]! stride, int? storage_offset=None",
       impl="_as_strided({self}, {size}, {stride}, {storage_offset})",
       node="AsStridedBackward0",
       backward={'self': '_as_strided_backward(grad, self_sizes, self_strides, self_offset, size, '
                         'stride, storage_offset)'},
       view_of="self",
       doc="A view with explicit geometry (checked against the storage's bounds).\n\n"
           "    >>> tensorlib.arange(4).as_strided((2, 2), (1, 1)).tolist()\n    [[0, 1], [1, 2]]"),
    op("unfold", "Tensor self, int dimension, int size, int step", M, node="UnfoldBackward0",
       backward={'self': '_unfold_backward(grad, self_sizes, dimension, size, step)'},
       view_of="self",
       doc="A view of all windows of ``size`` along ``dimension`` with stride ``step``.\n\n"
           "    >>> tensorlib.arange(5).unfold(0, 2, 2).tolist()\n    [[0, 1], [2, 3]]"),
    op("diagonal", "Tensor self, int offset=0, int dim1=0, int dim2=1", node="DiagonalBackward0",
       backward={'self': '_diagonal_backward(grad, self_sizes, offset, dim1, dim2)'},
       view_of="self",
       doc="A view of a diagonal, appended as the last dim.\n\n"
           "    >>> tensorlib.arange(9).view(3, 3).diagonal().tolist()\n    [0, 4, 8]"),
    op("split", "Tensor self, object split_size_or_sections, int dim=0", node="SplitBackward0",
       backward={'self': '_split_backward(grads, node, dim)'}, outputs='multi',
       node_if=(("SplitWithSizesBackward0", "isinstance(split_size_or_sections, (list, tuple))"),),
       view_of="self",
       doc="Views of equal pieces (the last may be smaller) or of the given sizes.\n\n"
           "    >>> [p.tolist() for p in tensorlib.arange(5).split(2)]\n    [[0, 1], [2, 3], [4]]"),
    op("chunk", "Tensor self, int chunks, int dim=0", node="SplitBackward0",
       backward={'self': '_split_backward(grads, node, dim)'}, outputs='multi', view_of="self",
       node_if=(("SplitWithSizesBackward0", "self.shape[dim] == 0"),),
       doc="Views of at most ``chunks`` pieces.\n\n"
           "    >>> len(tensorlib.arange(5).chunk(3))\n    3"),
    op("unbind", "Tensor self, int dim=0", node="UnbindBackward0",
       backward={'self': '_unbind_backward(grads, node, dim)'}, outputs='multi', view_of="self",
       doc="Views of every index along ``dim``.\n\n"
           "    >>> [t.tolist() for t in tensorlib.arange(4).view(2, 2).unbind(1)]\n"
           "    [[0, 2], [1, 3]]"),
    op("detach", "Tensor self", node=None,
       doc="The same data cut from the graph (shares the version counter).\n\n"
           "    >>> tensorlib.ones(2, requires_grad=True).detach().requires_grad\n    False"),
    op("contiguous", "Tensor self, *, object memory_format=None", M, impl="_contiguous({self})",
       node="CloneBackward0", backward={'self': 'grad'}, may_return_self=True,
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
       node="TransposeBackward1", backward={'self': 'grad.transpose(dim0, dim1)'},
       inplace_view=True,
       doc="Swap two dims in place (metadata only).\n\n"
           "    >>> tensorlib.zeros(2, 3).transpose_(0, 1).shape\n"
           "    tensorlib.Size([3, 2])"),
    op("squeeze_", "Tensor self, object dim=None", M,
       impl="_set_geometry_inplace({self}, _squeeze({self}, {dim}))",
       node="SqueezeBackward3", node_if=(("SqueezeBackward4", "dim is not None"),),
       backward={'self': 'grad.reshape(self_sizes)'}, inplace_view=True,
       doc="Squeeze in place.\n\n    >>> tensorlib.zeros(1, 2).squeeze_().shape\n"
           "    tensorlib.Size([2])"),
    op("unsqueeze_", "Tensor self, int dim", M,
       impl="_set_geometry_inplace({self}, _unsqueeze({self}, {dim}))",
       node="UnsqueezeBackward1", backward={'self': 'grad.squeeze(dim)'}, inplace_view=True,
       doc="Unsqueeze in place.\n\n    >>> tensorlib.zeros(2).unsqueeze_(1).shape\n"
           "    tensorlib.Size([2, 1])"),

    # the end of a copying reshape (views.pxi) and of a folded matmul (linalg.pxi)
    op("_unsafe_view", "Tensor self, int[] size", F, impl="_unsafe_view({self}, {size})",
       node="UnsafeViewBackward0", backward={'self': 'grad.reshape(self_sizes)'},
       doc="A reshaped alias of a tensor nothing else uses (the result of a copy), recorded as "
           "a new tensor rather than a view: what a copying ``reshape`` and a folded ``matmul`` "
           "end in.\n\n    >>> tensorlib._unsafe_view(tensorlib.zeros(6), (2, 3))._is_view()\n"
           "    False"),
]
