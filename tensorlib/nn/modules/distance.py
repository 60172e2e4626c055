"""PairwiseDistance and CosineSimilarity.

>>> tensorlib.nn.CosineSimilarity()(tensorlib.tensor([[2.0, 0.0]]), tensorlib.ones(1, 1)).tolist()
[1.0]
"""
from tensorlib.nn import functional as F
from tensorlib.nn.modules.module import Module

__all__ = ["PairwiseDistance", "CosineSimilarity"]


class PairwiseDistance(Module):
    """p-norm of x1 - x2 + eps over the last dim.

    >>> PairwiseDistance(eps=0.0)(tensorlib.tensor([[3.0, 0.0]]),
    ...                           tensorlib.tensor([[0.0, 4.0]])).tolist()
    [5.0]
    """

    __constants__ = ["norm", "eps", "keepdim"]

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """Cosine similarity along ``dim``.

    >>> CosineSimilarity()
    CosineSimilarity()
    """

    __constants__ = ["dim", "eps"]

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
