"""Linear algebra."""
from .common import F, op, slots

OPS = [
    # The gradient of a matrix operand is computed in that operand's layout (_mm_mat1_grad,
    # _mm_mat2_grad in linalg.pxi): for Linear's weight.t() it comes out row-major for the
    # weight, which AccumulateGrad then keeps without a copy, as PyTorch arranges.
    # Float products run on NumPy's BLAS with out= into our storage; integers on our own loops
    # (linalg.pxi, cpu_linalg.c). Composite ops (matmul, tensordot, einsum) have no node of
    # their own: their grad_fn is that of the op they reduce to.
    op("mm", "Tensor self, Tensor mat2, *, object out=None", impl="_mm({self}, {mat2}, {out})",
       node="MmBackward0",
       backward={'self': '_mm_mat1_grad(grad, mat2, self_strides)',
                 'mat2': '_mm_mat2_grad(grad, self, mat2_strides)'},
       doc="Matrix product of two 2-D tensors.\n\n"
           "    >>> tensorlib.mm(tensorlib.ones(2, 3), tensorlib.ones(3, 4)).shape\n"
           "    tensorlib.Size([2, 4])"),
    # matmul records no node of its own: while recording it runs as PyTorch decomposes it
    # (dot/mv/mm/bmm and views, linalg.pxi), so grad_fn, next_functions and what is saved
    # are PyTorch's
    op("matmul", "Tensor self, Tensor other, *, object out=None",
       operators=slots("matmul", "swap", inplace=False),
       impl="_matmul_op({self}, {other}, {out})",
       doc="Matrix product for every rank: dot (1-D, 1-D), mv, mm, and batched products with "
           "broadcast batch dims (a 1-D operand is a row on the left, a column on the right).\n\n"
           "    >>> tensorlib.matmul(tensorlib.ones(5, 2, 3), tensorlib.ones(3)).shape\n"
           "    tensorlib.Size([5, 2])"),
    op("bmm", "Tensor self, Tensor mat2, *, object out=None", impl="_bmm({self}, {mat2}, {out})",
       node="BmmBackward0",
       backward={'self': 'grad.bmm(mat2.transpose(1, 2))',
                 'mat2': 'self.transpose(1, 2).bmm(grad)'},
       doc="Batched matrix product of two 3-D tensors with the same batch size.\n\n"
           "    >>> tensorlib.bmm(tensorlib.ones(4, 2, 3), tensorlib.ones(4, 3, 5)).shape\n"
           "    tensorlib.Size([4, 2, 5])"),
    op("mv", "Tensor self, Tensor vec, *, object out=None", impl="_mv({self}, {vec}, {out})",
       node="MvBackward0", backward={'self': 'grad.unsqueeze(1) * vec', 'vec': 'self.t().mv(grad)'},
       doc="Matrix-vector product.\n\n"
           "    >>> tensorlib.mv(tensorlib.ones(2, 3), tensorlib.ones(3)).tolist()\n"
           "    [3.0, 3.0]"),
    op("dot", "Tensor self, Tensor tensor, *, object out=None",
       impl="_dot({self}, {tensor}, {out})",
       node="DotBackward0", backward={'self': 'grad * tensor', 'tensor': 'grad * self'},
       doc="Inner product of two 1-D tensors of the same dtype (a 0-d result).\n\n"
           "    >>> tensorlib.dot(tensorlib.tensor([1, 2]), tensorlib.tensor([3, 4])).item()\n"
           "    11"),
    op("outer", "Tensor self, Tensor vec2, *, object out=None",
       impl="_outer({self}, {vec2}, {out})",
       aliases=("ger",), node="MulBackward0",
       # (the other vector in the gradient's dtype: the product promoted them, mv does not)
       backward={'self': 'grad.mv(vec2.to(grad.dtype))', 'vec2': 'grad.t().mv(self.to(grad.dtype))'},
       doc="Outer product ``input[i] * vec2[j]`` of two 1-D tensors (dtypes promote).\n\n"
           "    >>> tensorlib.outer(tensorlib.tensor([1, 2]), tensorlib.tensor([1, 10])).tolist()\n"
           "    [[1, 10], [2, 20]]"),
    op("addmm",
       "Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, object out=None",
       "function method inplace",
       impl="_addmm({self}, {mat1}, {mat2}, {beta}, {alpha}, {out}, {inplace})",
       node="AddmmBackward0",
       backward={'self': '_scale(grad, beta)',
                 'mat1': '_scale(_mm_mat1_grad(grad, mat2, mat1_strides), alpha)',
                 'mat2': '_scale(_mm_mat2_grad(grad, mat1, mat2_strides), alpha)'},
       doc="``beta * input + alpha * (mat1 @ mat2)`` (input broadcasts; beta=0 ignores NaN in "
           "it).\n\n"
           "    >>> tensorlib.addmm(tensorlib.ones(2, 2), tensorlib.ones(2, 3), tensorlib.ones(3, "
           "2), beta=2).tolist()\n"
           "    [[5.0, 5.0], [5.0, 5.0]]"),
    op("addmv",
       "Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1, object out=None",
       "function method inplace",
       impl="_addmv({self}, {mat}, {vec}, {beta}, {alpha}, {out}, {inplace})",
       node="AddmvBackward0",
       backward={'self': '_scale(grad, beta)', 'mat': '_scale(grad.unsqueeze(1) * vec, alpha)',
                 'vec': '_scale(mat.t().mv(grad), alpha)'},
       doc="``beta * input + alpha * (mat @ vec)``.\n\n"
           "    >>> tensorlib.addmv(tensorlib.ones(2), tensorlib.ones(2, 3), tensorlib.ones(3), "
           "alpha=2).tolist()\n"
           "    [7.0, 7.0]"),
    op("baddbmm",
       "Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, "
       "object out=None",
       "function method inplace",
       impl="_baddbmm({self}, {batch1}, {batch2}, {beta}, {alpha}, {out}, {inplace})",
       node="BaddbmmBackward0",
       backward={'self': '_scale(grad, beta)',
                 'batch1': '_scale(grad.bmm(batch2.transpose(1, 2)), alpha)',
                 'batch2': '_scale(batch1.transpose(1, 2).bmm(grad), alpha)'},
       doc="``beta * input + alpha * bmm(batch1, batch2)``.\n\n"
           "    >>> tensorlib.baddbmm(tensorlib.zeros(4, 2, 5), tensorlib.ones(4, 2, 3), "
           "tensorlib.ones(4, 3, 5)).shape\n"
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
