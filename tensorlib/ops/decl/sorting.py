"""Sorting and selection."""
from .common import op

OPS = [
    op("sort",
       "Tensor self, int dim=-1, bool descending=False, *, bool? stable=None, object out=None",
       impl="_sort({self}, {dim}, {descending}, {stable}, {out})", node="SortBackward0",
       backward={'self': '_take_along_backward(grads[0], self_sizes, dim, indices, True)'},
       outputs="multi",
       doc="Sorted values along ``dim`` and the indices they came from, as ``(values, indices)``. "
           "Always stable (ties keep their order, also when descending); NaN sorts as the largest "
           "value.\n\n"
           "    >>> tensorlib.sort(tensorlib.tensor([3, 1, 2])).indices.tolist()\n    [1, 2, 0]"),
    op("argsort",
       "Tensor self, int dim=-1, bool descending=False, *, bool stable=False, object out=None",
       impl="_argsort(_history_first({self}), {dim}, {descending}, {stable}, {out})",
       doc="The indices that sort ``dim`` (``sort(...).indices``).\n\n"
           "    >>> tensorlib.tensor([3., 1., 2.]).argsort(descending=True).tolist()\n"
           "    [0, 2, 1]"),
    op("msort", "Tensor self, *, object out=None", impl="_msort({self}, {out})",
       node="SortBackward0",
       backward={'self': '_msort_backward(grad, self)'},
       doc="Values sorted along dim 0.\n\n"
           "    >>> tensorlib.msort(tensorlib.tensor([[2, 0], [1, 3]])).tolist()\n"
           "    [[1, 0], [2, 3]]"),
    op("topk",
       "Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True, *, object out=None",
       impl="_topk({self}, {k}, {dim}, {largest}, {sorted}, {out})", node="TopkBackward0",
       backward={'self': '_take_along_backward(grads[0], self_sizes, dim, indices, True)'},
       outputs="multi",
       doc="The ``k`` largest (``largest=False``: smallest) elements along ``dim`` with their "
           "indices, as ``(values, indices)``; NaN counts as the largest value.\n\n"
           "    >>> tensorlib.topk(tensorlib.tensor([1., 5., 3.]), 2).values.tolist()\n"
           "    [5.0, 3.0]"),
    op("kthvalue", "Tensor self, int k, int dim=-1, bool keepdim=False, *, object out=None",
       impl="_kthvalue({self}, {k}, {dim}, {keepdim}, {out})", node="KthvalueBackward0",
       backward={'self': '_take_along_backward(grads[0], self_sizes, dim, indices, keepdim)'},
       outputs="multi",
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
       impl="_nanmedian({self}, {dim}, {keepdim}, {out})", node="NanmedianBackward0",
       outputs="auto",
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
    op("unique",
       "Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False, "
       "object dim=None",
       impl="_unique({self}, {sorted}, {return_inverse}, {return_counts}, {dim})",
       node="Unique2Backward0",
       node_if=(("UniqueDimBackward0", "dim is not None"),), outputs="auto",
       backward={'self': "_not_implemented_backward('unique_dim' if dim is not None else "
                         "'_unique2')"},
       doc="The sorted distinct elements (or slices along ``dim``), optionally with each "
           "element's position in them and each one's count.\n\n"
           "    >>> tensorlib.unique(tensorlib.tensor([3, 1, 3]), return_counts=True)\n"
           "    (tensor([1, 3]), tensor([1, 2]))"),
    op("unique_consecutive",
       "Tensor self, bool return_inverse=False, bool return_counts=False, object dim=None",
       impl="_unique_consecutive({self}, {return_inverse}, {return_counts}, {dim})",
       node="UniqueConsecutiveBackward0", outputs="auto",
       backward={'self': "_not_implemented_backward('unique_consecutive')"},
       doc="Collapse each run of equal consecutive elements (or slices along ``dim``) to one.\n\n"
           "    >>> tensorlib.unique_consecutive(tensorlib.tensor([1, 1, 2, 1])).tolist()\n"
           "    [1, 2, 1]"),
]
