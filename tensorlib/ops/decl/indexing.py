"""Indexing ops."""
from .common import F, op

OPS = [
    op("index_select", "Tensor self, int dim, Tensor index, *, object out=None",
       impl="_index_select({self}, {dim}, {index}, {out})", node="IndexSelectBackward0",
       backward={'self': '_index_select_backward(grad, self_sizes, dim, index)'},
       doc="The entries of ``index`` (int32/int64 vector) along ``dim``, as a new tensor.\n\n"
           "    >>> tensorlib.arange(6).view(3, 2).index_select(0, tensorlib.tensor([2, "
           "0])).tolist()\n"
           "    [[4, 5], [0, 1]]"),
    op("gather", "Tensor self, int dim, Tensor index, *, bool sparse_grad=False, object out=None",
       impl="_gather({self}, {dim}, {index}, {sparse_grad}, {out})", node="GatherBackward0",
       backward={'self': '_gather_backward(grad, self_sizes, dim, index)'},
       doc="``out[i][j] = input[index[i][j]][j]`` (dim 0): one index per output element.\n\n"
           "    >>> tensorlib.gather(tensorlib.tensor([[1, 2], [3, 4]]), 1, tensorlib.tensor([[1], "
           "[0]])).tolist()\n"
           "    [[2], [3]]"),
    op("scatter",
       "Tensor self, int dim, Tensor index, object src=None, *, object value=None, "
       "str? reduce=None, object out=None",
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
       impl="_scatter_add({self}, {dim}, {index}, {src}, {out}, {inplace})",
       node="ScatterAddBackward0",
       backward={'self': 'grad', 'src': '_scatter_src_backward(grad, dim, index, src_sizes, None)'},
       doc="Add ``src`` into self at ``index`` along ``dim`` (repeated indices accumulate, "
           "in order).\n\n"
           "    >>> tensorlib.zeros(2).scatter_add(0, tensorlib.tensor([1, 1]), "
           "tensorlib.ones(2)).tolist()\n"
           "    [0.0, 2.0]"),
    op("scatter_reduce",
       "Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True, "
       "object out=None",
       "function method inplace",
       impl="_scatter_reduce({self}, {dim}, {index}, {src}, {reduce}, {include_self}, {out}, "
            "{inplace})",
       node="ScatterReduceBackward0",
       backward={'self': '_scatter_reduce_backward(grad, self, dim, index, src, reduce, '
                         'include_self, result, 0)',
                 'src': '_scatter_reduce_backward(grad, self, dim, index, src, reduce, '
                        'include_self, result, 1)'},
       doc="Reduce ``src`` into self at ``index`` with 'sum', 'prod', 'mean', 'amax' or 'amin'.\n\n"
           "    >>> tensorlib.zeros(2).scatter_reduce(0, tensorlib.tensor([0, 0]), "
           "tensorlib.tensor([3., 5.]), 'amax').tolist()\n"
           "    [5.0, 0.0]"),
    op("index_add",
       "Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1, object out=None",
       "function method inplace",
       impl="_index_accumulate({self}, {dim}, {index}, {source}, {alpha}, {inplace}, {out}, 0)",
       node="IndexAddBackward0",
       backward={'self': 'grad',
                 'source': '_index_source_backward(grad, dim, index, source_sizes, alpha)'},
       doc="Add ``alpha * source`` into the slices of self chosen by ``index`` along ``dim``.\n\n"
           "    >>> tensorlib.zeros(3).index_add(0, tensorlib.tensor([0, 0]), "
           "tensorlib.ones(2)).tolist()\n"
           "    [2.0, 0.0, 0.0]"),
    op("index_copy", "Tensor self, int dim, Tensor index, Tensor source, *, object out=None",
       "function method inplace",
       impl="_index_accumulate({self}, {dim}, {index}, {source}, None, {inplace}, {out}, 1)",
       node="IndexCopyBackward0",
       backward={'self': 'grad.index_fill(dim, index, 0)',
                 'source': '_index_source_backward(grad, dim, index, source_sizes, 1)'},
       doc="Copy the slices of ``source`` into self at ``index`` (int64) along ``dim``.\n\n"
           "    >>> tensorlib.zeros(3).index_copy(0, tensorlib.tensor([2]), "
           "tensorlib.ones(1)).tolist()\n"
           "    [0.0, 0.0, 1.0]"),
    op("index_fill", "Tensor self, int dim, Tensor index, object value", "function method inplace",
       impl="_index_fill({self}, {dim}, {index}, {value}, {inplace})", node="IndexFillBackward0",
       node_if=(("IndexFillBackward1", "isinstance(value, TensorBase)"),),
       backward={'self': 'grad.index_fill(dim, index, 0)',
                 'value': '_index_fill_value_backward(grad, dim, index)'},
       doc="Fill the slices of self chosen by ``index`` (int64) along ``dim`` with ``value``.\n\n"
           "    >>> tensorlib.zeros(3).index_fill(0, tensorlib.tensor([-1]), 7).tolist()\n"
           "    [0.0, 0.0, 7.0]"),
    op("index_put", "Tensor self, object indices, Tensor values, bool accumulate=False",
       "function method inplace",
       impl="_index_put({self}, {indices}, {values}, {accumulate}, {inplace})",
       node="IndexPutBackward0",
       backward={'self': '_index_put_self_backward(grad, indices, accumulate)',
                 'values': '_index_put_values_backward(grad, indices)'},
       doc="``self[indices] = values`` (a tuple of index tensors); ``accumulate`` adds, repeated "
           "indices included.\n\n"
           "    >>> tensorlib.zeros(3).index_put((tensorlib.tensor([1, 1]),), "
           "tensorlib.tensor(2.), accumulate=True).tolist()\n"
           "    [0.0, 4.0, 0.0]"),
    op("index_put_", "Tensor self, object indices, Tensor values, bool accumulate=False", F,
       impl="_index_put({self}, {indices}, {values}, {accumulate}, True)", node="IndexPutBackward0",
       backward={'self': '_index_put_self_backward(grad, indices, accumulate)',
                 'values': '_index_put_values_backward(grad, indices)'},
       doc="``input[indices] = values`` in place (the function form of ``Tensor.index_put_``).\n\n"
           "    >>> x = tensorlib.zeros(2); _ = tensorlib.index_put_(x, (tensorlib.tensor([1]),), "
           "tensorlib.tensor(3.)); x.tolist()\n"
           "    [0.0, 3.0]"),
    op("masked_select", "Tensor self, Tensor mask, *, object out=None",
       impl="_masked_select({self}, {mask}, {out})", node="MaskedSelectBackward0",
       backward={'self': '_masked_select_backward(grad, self_sizes, mask)'},
       doc="The elements where the (broadcast) bool ``mask`` is True, as a 1-d tensor.\n\n"
           "    >>> x = tensorlib.arange(4); tensorlib.masked_select(x, x > 1).tolist()\n"
           "    [2, 3]"),
    op("masked_scatter", "Tensor self, Tensor mask, Tensor source", "function method inplace",
       impl="_masked_scatter({self}, {mask}, {source}, {inplace})", node="MaskedScatterBackward0",
       backward={'self': 'grad.masked_fill(mask, 0)',
                 'source': '_masked_scatter_source_backward(grad, mask, source_sizes)'},
       doc="Copy ``source``'s leading elements, in order, where ``mask`` is True.\n\n"
           "    >>> tensorlib.zeros(3).masked_scatter(tensorlib.tensor([True, False, True]), "
           "tensorlib.tensor([1., 2.])).tolist()\n"
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
    op("take", "Tensor self, Tensor index, *, object out=None",
       impl="_take({self}, {index}, {out})",
       node="TakeBackward0", backward={'self': '_take_backward(grad, self_sizes, index)'},
       doc="Elements of ``input`` read as 1-d (C order) at ``index`` (int64; negative counts from "
           "the end).\n\n"
           "    >>> tensorlib.take(tensorlib.tensor([[1, 2], [3, 4]]), tensorlib.tensor([0, "
           "-1])).tolist()\n"
           "    [1, 4]"),
    op("put", "Tensor self, Tensor index, Tensor source, bool accumulate=False",
       "function method inplace",
       impl="_put({self}, {index}, {source}, {accumulate}, {inplace})", node="PutBackward0",
       backward={'self': '_put_self_backward(grad, index, accumulate)',
                 'source': 'grad.take(index).reshape(source_sizes)'},
       doc="Write ``source`` into self read as 1-d (C order) at ``index``; ``accumulate`` adds.\n\n"
           "    >>> tensorlib.zeros(2, 2).put(tensorlib.tensor([3]), "
           "tensorlib.tensor([9.])).tolist()\n"
           "    [[0.0, 0.0], [0.0, 9.0]]"),
]
