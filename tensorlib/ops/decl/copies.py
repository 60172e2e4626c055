"""Copies: clone, type conversion, copy_, cat/stack, flips, repeats, triangles ..."""
from .common import F, M, op

OPS = [
    op("clone", "Tensor self, *, object memory_format=None", impl="_clone({self}, {memory_format})",
       node="CloneBackward0", backward={'self': 'grad'},
       doc="A copy with its own memory (same strides when they are dense).\n\n"
           "    >>> t = tensorlib.ones(2); c = t.clone(); c[0] = 5; t.tolist()\n    [1.0, 1.0]"),
    op("_to_copy", "Tensor self, dtype? dtype=None, *, device? device=None", F,
       impl="_to_copy({self}, {dtype}, {device})",
       node="ToCopyBackward0", backward={'self': 'grad.to(self_device, self_dtype)'},
       doc="A copy converted to ``dtype`` and/or moved to ``device``: what ``to``/``type``/"
           "``float``/``cpu``/... run when something changes (recorded, so gradients flow back "
           "in the input's dtype, to its device).\n\n"
           "    >>> tensorlib._to_copy(tensorlib.ones(2), dtype=tensorlib.float64).dtype\n"
           "    tensorlib.float64"),
    op("copy_", "Tensor self, object src, bool non_blocking=False", M,
       impl="_copy_({self}, {src}, {non_blocking})", node="CopyBackwards",
       backward={'self': '_zeros_grad(grad)', 'src': 'grad'},
       doc="Copy ``src`` into self in place, broadcasting and converting dtype.\n\n"
           "    >>> tensorlib.zeros(2, 2).copy_(tensorlib.tensor([1, 2])).tolist()\n"
           "    [[1.0, 2.0], [1.0, 2.0]]"),
    op("fill_", "Tensor self, Scalar value", M, node="FillBackward2",
       node_if=(("FillBackward3", "isinstance(value, TensorBase)"),),
       backward={'self': '_zeros_grad(grad)', 'value': 'grad.sum()'},
       doc="Set every element to ``value``.\n\n    >>> tensorlib.zeros(2).fill_(3).tolist()\n"
           "    [3.0, 3.0]"),
    op("zero_", "Tensor self", M, node="ZeroBackward0", backward={'self': '_zeros_grad(grad)'},
       doc="Set every element to zero.\n\n    >>> tensorlib.ones(2).zero_().tolist()\n"
           "    [0.0, 0.0]"),
    op("cat", "Tensor[] tensors, int dim=0, *, object out=None", F,
       aliases=("concat", "concatenate"),
       node="CatBackward0", backward={'tensors': '_cat_backward(grad, tensors_sizes, dim)'},
       doc="Concatenate along ``dim`` (dtypes promote; shapes must match elsewhere).\n\n"
           "    >>> tensorlib.cat([tensorlib.zeros(1), tensorlib.ones(2)]).tolist()\n"
           "    [0.0, 1.0, 1.0]"),
    op("stack", "Tensor[] tensors, int dim=0, *, object out=None", F, node="StackBackward0",
       backward={'tensors': 'grad.unbind(dim)'},
       doc="Stack equal-shaped tensors along a new dim.\n\n"
           "    >>> tensorlib.stack([tensorlib.zeros(2), tensorlib.ones(2)]).shape\n"
           "    tensorlib.Size([2, 2])"),
    op("flip", "Tensor self, int[]... dims", node="FlipBackward0",
       backward={'self': 'grad.flip(dims)'},
       doc="A copy with the order of elements reversed along ``dims``.\n\n"
           "    >>> tensorlib.arange(3).flip(0).tolist()\n    [2, 1, 0]"),
    op("fliplr", "Tensor self", impl="_flip({self}, (1,))", node="FlipBackward0",
       backward={'self': 'grad.fliplr()'},
       doc="Flip the columns (dim 1).\n\n    >>> tensorlib.arange(4).view(2, 2).fliplr().tolist()\n"
           "    [[1, 0], [3, 2]]"),
    op("flipud", "Tensor self", impl="_flip({self}, (0,))", node="FlipBackward0",
       backward={'self': 'grad.flipud()'},
       doc="Flip the rows (dim 0).\n\n    >>> tensorlib.arange(4).view(2, 2).flipud().tolist()\n"
           "    [[2, 3], [0, 1]]"),
    op("repeat", "Tensor self, int[]... repeats", M, node="RepeatBackward0",
       backward={'self': '_repeat_backward(grad, self_sizes, repeats)'},
       doc="A copy tiled ``repeats`` times along each dim.\n\n"
           "    >>> tensorlib.tensor([1, 2]).repeat(2).tolist()\n    [1, 2, 1, 2]"),
    op("tile", "Tensor self, int[]... dims", node="RepeatBackward0",
       backward={'self': '_tile_backward(grad, self_sizes, dims)'},
       doc="Like repeat, padding ``dims`` with leading 1s.\n\n"
           "    >>> tensorlib.tensor([[1, 2]]).tile(2).tolist()\n    [[1, 2, 1, 2]]"),
    op("roll", "Tensor self, object shifts, object dims=None", node="RollBackward0",
       backward={'self': 'grad.roll(tuple(-v for v in shifts) if isinstance(shifts, (tuple, '
                         'list)) else -shifts, dims)'},
       doc="A copy rotated by ``shifts`` along ``dims`` (flattened when dims is None).\n\n"
           "    >>> tensorlib.arange(4).roll(1).tolist()\n    [3, 0, 1, 2]"),
    op("tril", "Tensor self, int diagonal=0, *, object out=None",
       impl="_into_out(_tril({self}, {diagonal}, True, False), {out}, 'tril')",
       node="TrilBackward0", backward={'self': 'grad.tril(diagonal)'},
       doc="A copy with elements above diagonal ``diagonal`` zeroed.\n\n"
           "    >>> tensorlib.ones(2, 2).tril().tolist()\n    [[1.0, 0.0], [1.0, 1.0]]"),
    op("triu", "Tensor self, int diagonal=0, *, object out=None",
       impl="_into_out(_tril({self}, {diagonal}, False, False), {out}, 'triu')",
       node="TriuBackward0", backward={'self': 'grad.triu(diagonal)'},
       doc="A copy with elements below diagonal ``diagonal`` zeroed.\n\n"
           "    >>> tensorlib.ones(2, 2).triu().tolist()\n    [[1.0, 1.0], [0.0, 1.0]]"),
    op("tril_", "Tensor self, int diagonal=0", M, impl="_tril({self}, {diagonal}, True, True)",
       node="TrilBackward0", backward={'self': 'grad.tril(diagonal)'},
       doc="tril in place.\n\n    >>> tensorlib.ones(2, 2).tril_().tolist()\n"
           "    [[1.0, 0.0], [1.0, 1.0]]"),
    op("triu_", "Tensor self, int diagonal=0", M, impl="_tril({self}, {diagonal}, False, True)",
       node="TriuBackward0", backward={'self': 'grad.triu(diagonal)'},
       doc="triu in place.\n\n    >>> tensorlib.ones(2, 2).triu_().tolist()\n"
           "    [[1.0, 1.0], [0.0, 1.0]]"),

]
