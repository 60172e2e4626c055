"""Reductions."""
from .common import F, op

OPS = [
    op("sum",
       "Tensor self, object dim=None, bool keepdim=False, *, dtype? dtype=None, object out=None",
       node="SumBackward0", node_if=(("SumBackward1", "dim is not None"),),
       backward={'self': '_expand_reduced(grad, self_sizes, dim, keepdim)'},
       doc="Sum over all dims, a dim or a tuple of dims (bool and integers give int64).\n\n"
           "    >>> tensorlib.arange(6).view(2, 3).sum(1).tolist()\n    [3, 12]"),
    op("mean",
       "Tensor self, object dim=None, bool keepdim=False, *, dtype? dtype=None, object out=None",
       node="MeanBackward0", node_if=(("MeanBackward1", "dim is not None"),),
       backward={'self': '_expand_reduced(grad, self_sizes, dim, '
                         'keepdim) / _bw_reduced_count(self_sizes, dim)'},
       doc="Mean over all dims, a dim or a tuple of dims (floating-point input or dtype).\n\n"
           "    >>> tensorlib.tensor([[1., 2.], [3., 5.]]).mean(0).tolist()\n    [2.0, 3.5]"),
    op("prod",
       "Tensor self, object dim=None, bool keepdim=False, *, dtype? dtype=None, object out=None",
       node="ProdBackward0", node_if=(("ProdBackward1", "dim is not None"),),
       backward={'self': '_prod_backward(grad, self, result, dim, keepdim)'},
       doc="Product over all elements or along one dim (bool and integers give int64).\n\n"
           "    >>> tensorlib.tensor([[1, 2], [3, 4]]).prod(1).tolist()\n    [2, 12]"),
    op("var",
       "Tensor self, object dim=None, bool? unbiased=None, bool keepdim=False, *, "
       "object correction=None, object out=None",
       node="VarBackward0",
       backward={'self': '_var_backward(grad, self, dim, correction, keepdim, unbiased)'},
       doc="Variance, divided by ``N - correction`` (unbiased: correction 1, by default).\n\n"
           "    >>> tensorlib.tensor([1., 2., 3., 4.]).var().item()\n    1.6666666269302368"),
    op("std",
       "Tensor self, object dim=None, bool? unbiased=None, bool keepdim=False, *, "
       "object correction=None, object out=None",
       node="StdBackward0",
       backward={'self': '_std_backward(grad, self, result, dim, correction, keepdim, '
                         'unbiased)'},
       doc="Standard deviation: the square root of var (unbiased by default).\n\n"
           "    >>> tensorlib.tensor([1., 3.]).std().item()\n    1.4142135381698608"),
    op("var_mean",
       "Tensor self, object dim=None, bool? unbiased=None, bool keepdim=False, *, "
       "object correction=None", F,
       node="VarMeanBackward0", outputs="multi",
       backward={'self': '_var_mean_backward(grads, self, dim, correction, keepdim, unbiased, '
                         'False)'},
       doc="``(var, mean)`` in one call.\n\n"
           "    >>> [t.item() for t in tensorlib.var_mean(tensorlib.tensor([1., 3.]))]\n"
           "    [2.0, 2.0]"),
    op("std_mean",
       "Tensor self, object dim=None, bool? unbiased=None, bool keepdim=False, *, "
       "object correction=None", F,
       node="StdMeanBackward0", outputs="multi",
       backward={'self': '_var_mean_backward(grads, self, dim, correction, keepdim, unbiased, '
                         'True)'},
       doc="``(std, mean)`` in one call.\n\n"
           "    >>> [t.item() for t in tensorlib.std_mean(tensorlib.tensor([1., 1.]))]\n"
           "    [0.0, 1.0]"),
    op("max",
       "Tensor self, object dim=None, object keepdim=None, *, object other=None, object out=None",
       impl="_max_min({self}, {dim}, {keepdim}, {other}, {out}, True)", node="MaxBackward1",
       outputs="auto",
       node_if=(("MaximumBackward0", "other is not None or isinstance(dim, TensorBase)"),
                ("MaxBackward0", "dim is not None")),
       # (with a dim only the indices and self's sizes are needed: PyTorch saves no self, so
       # a later in-place change of self does not break this backward)
       save_if={'self': "dim is None or other is not None or isinstance(dim, TensorBase)"},
       backward={'self': '_max_backward(grads, self, self_sizes, result, indices, dim, keepdim, '
                         'other, True)',
                 'dim': '_max_other_backward(grads, self, dim, other, True)',
                 'other': '_max_other_backward(grads, self, dim, other, True)'},
       doc="The largest element (NaN if any); with ``dim`` a ``(values, indices)`` named tuple "
           "(first index on ties); ``max(input, other)`` is ``maximum``.\n\n"
           "    >>> values, indices = tensorlib.tensor([[1, 5, 5]]).max(1)\n"
           "    >>> values.tolist(), indices.tolist()\n    ([5], [1])"),
    op("min",
       "Tensor self, object dim=None, object keepdim=None, *, object other=None, object out=None",
       impl="_max_min({self}, {dim}, {keepdim}, {other}, {out}, False)", node="MinBackward1",
       outputs="auto",
       node_if=(("MinimumBackward0", "other is not None or isinstance(dim, TensorBase)"),
                ("MinBackward0", "dim is not None")),
       # (with a dim only the indices and self's sizes are needed: PyTorch saves no self, so
       # a later in-place change of self does not break this backward)
       save_if={'self': "dim is None or other is not None or isinstance(dim, TensorBase)"},
       backward={'self': '_max_backward(grads, self, self_sizes, result, indices, dim, keepdim, '
                         'other, False)',
                 'dim': '_max_other_backward(grads, self, dim, other, False)',
                 'other': '_max_other_backward(grads, self, dim, other, False)'},
       doc="The smallest element (NaN if any); with ``dim`` a ``(values, indices)`` named tuple; "
           "``min(input, other)`` is ``minimum``.\n\n"
           "    >>> tensorlib.tensor([[4, 2], [1, 3]]).min(0).indices.tolist()\n    [1, 0]"),
    op("amax", "Tensor self, object dim=(), bool keepdim=False, *, object out=None",
       impl="_amax_amin({self}, {dim}, {keepdim}, {out}, True)", node="AmaxBackward0",
       backward={'self': '_evenly_distribute(grad, self, result, dim, keepdim)'},
       doc="Largest values over all dims, a dim or a tuple of dims (NaN propagates).\n\n"
           "    >>> tensorlib.tensor([[1, 5], [7, 2]]).amax(1).tolist()\n    [5, 7]"),
    op("amin", "Tensor self, object dim=(), bool keepdim=False, *, object out=None",
       impl="_amax_amin({self}, {dim}, {keepdim}, {out}, False)", node="AminBackward0",
       backward={'self': '_evenly_distribute(grad, self, result, dim, keepdim)'},
       doc="Smallest values over all dims, a dim or a tuple of dims (NaN propagates).\n\n"
           "    >>> tensorlib.tensor([[1, 5], [7, 2]]).amin(0).tolist()\n    [1, 2]"),
    op("argmax", "Tensor self, object dim=None, bool keepdim=False",
       impl="_argmax_argmin({self}, {dim}, {keepdim}, True)",
       doc="Index of the first largest value (flattened when ``dim`` is None; NaN counts as "
           "largest).\n\n"
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
    op("norm",
       "Tensor self, object p='fro', object dim=None, bool keepdim=False, *, object out=None, "
       "dtype? dtype=None",
       node="LinalgVectorNormBackward0",
       backward={'self': '_norm_backward(grad, self, p, dim, keepdim, result)'},
       doc="Vector p-norm over all dims, a dim or a tuple of dims: p = 'fro' (2), 1, 2, inf, "
           "-inf, 0 (count of nonzeros) or any other number.\n\n"
           "    >>> tensorlib.tensor([3., -4.]).norm().item(), tensorlib.tensor([3., "
           "-4.]).norm(1).item()\n"
           "    (5.0, 7.0)"),
    op("logsumexp", "Tensor self, object dim, bool keepdim=False, *, object out=None",
       node="LogsumexpBackward0",
       backward={'self': '_expand_reduced(grad, self_sizes, dim, '
                         'keepdim) * (self - _expand_reduced(result, self_sizes, dim, '
                         'keepdim)).exp()'},
       doc="``log(sum(exp(input)))`` over ``dim``, computed stably (shifted by the max).\n\n"
           "    >>> round(tensorlib.tensor([1000., 1000.]).logsumexp(0).item(), 3)\n    1000.693"),
    op("cumsum", "Tensor self, int dim, *, dtype? dtype=None, object out=None",
       "function method inplace",
       impl="_cumsum({self}, {dim}, {dtype}, {out}, {inplace})", node="CumsumBackward0",
       backward={'self': 'grad.flip(dim).cumsum(dim).flip(dim)'},
       doc="Running sums along ``dim`` (bool and integers give int64).\n\n"
           "    >>> tensorlib.tensor([1, 2, 3]).cumsum(0).tolist()\n    [1, 3, 6]"),
    op("cumprod", "Tensor self, int dim, *, dtype? dtype=None, object out=None",
       "function method inplace",
       impl="_cumprod({self}, {dim}, {dtype}, {out}, {inplace})", node="CumprodBackward0",
       backward={'self': '_cumprod_backward(grad, self, dim, result)'},
       doc="Running products along ``dim`` (bool and integers give int64).\n\n"
           "    >>> tensorlib.tensor([1, 2, 3]).cumprod(0).tolist()\n    [1, 2, 6]"),
    op("softmax", "Tensor self, int dim, dtype? dtype=None", node="SoftmaxBackward0",
       backward={'self': 'result * (grad - (grad * result).sum(dim, keepdim=True))'},
       doc="``exp(x) / sum(exp(x))`` along ``dim``, computed stably (shifted by the max).\n\n"
           "    >>> tensorlib.tensor([0., 0.]).softmax(0).tolist()\n    [0.5, 0.5]"),
    op("log_softmax", "Tensor self, int dim, dtype? dtype=None", node="LogSoftmaxBackward0",
       backward={'self': 'grad - result.exp() * grad.sum(dim, keepdim=True)'},
       doc="``x - logsumexp(x)`` along ``dim``, computed stably.\n\n"
           "    >>> round(tensorlib.tensor([0., 0.]).log_softmax(0)[0].item(), 4)\n    -0.6931"),
]
