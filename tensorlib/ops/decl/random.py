"""Random sampling (Philox streams)."""
from .common import F, FACTORY, LIKE, M, op

OPS = [
    op("rand", f"int[]... size, *, object generator=None, object out=None, {FACTORY}", F,
       impl="_finish(_into_out(_rand({size}, {generator}, {dtype}, {device}), {out}, 'rand'), "
            "{requires_grad})",
       doc="Uniform samples on [0, 1).\n\n"
           "    >>> tensorlib.manual_seed(0); tensorlib.rand(2).shape\n"
           "    tensorlib.Size([2])"),
    op("randn", f"int[]... size, *, object generator=None, object out=None, {FACTORY}", F,
       impl="_finish(_into_out(_randn({size}, {generator}, {dtype}, {device}), {out}, 'randn'), "
            "{requires_grad})",
       doc="Standard normal samples.\n\n    >>> tensorlib.randn(2, 3).shape\n"
           "    tensorlib.Size([2, 3])"),
    op("randint",
       "object low, object high=None, object size=None, *, object generator=None, "
       f"object out=None, {FACTORY}", F,
       impl="_finish(_into_out(_randint({low}, {high}, {size}, {generator}, {dtype}, {device}), "
            "{out}, 'randint'), {requires_grad})",
       doc="Integers uniform on [low, high): ``randint(high, size)`` or ``randint(low, high, "
           "size)``.\n\n"
           "    >>> tensorlib.randint(0, 3, (4,)).dtype\n    tensorlib.int64"),
    op("randperm", f"int n, *, object generator=None, object out=None, {FACTORY}", F,
       impl="_finish(_into_out(_randperm({n}, {generator}, {dtype}, {device}), {out}, 'randperm'), "
            "{requires_grad})",
       doc="A random permutation of 0..n-1.\n\n    >>> sorted(tensorlib.randperm(4).tolist())\n"
           "    [0, 1, 2, 3]"),
    op("rand_like", f"Tensor self, *, {LIKE}", F,
       impl="_finish(_uniform_(_like({self}, {dtype}, {device}, {memory_format}), 0.0, 1.0, None), "
            "{requires_grad})",
       doc="Uniform samples shaped like ``input``.\n\n"
           "    >>> tensorlib.rand_like(tensorlib.zeros(2)).shape\n"
           "    tensorlib.Size([2])"),
    op("randn_like", f"Tensor self, *, {LIKE}", F,
       impl="_finish(_normal_(_like({self}, {dtype}, {device}, {memory_format}), 0.0, 1.0, None), "
            "{requires_grad})",
       doc="Normal samples shaped like ``input``.\n\n"
           "    >>> tensorlib.randn_like(tensorlib.zeros(2)).shape\n"
           "    tensorlib.Size([2])"),
    op("randint_like", f"Tensor self, object low, object high=None, *, {LIKE}", F,
       impl="_finish(_random_(_like({self}, {dtype}, {device}, {memory_format}), "
            "{low} if {high} is not None else 0, {high} if {high} is not None else {low}, None), "
            "{requires_grad})",
       doc="Random integers shaped like ``input``.\n\n"
           "    >>> tensorlib.randint_like(tensorlib.zeros(2), 5).shape\n"
           "    tensorlib.Size([2])"),
    op("uniform_", "Tensor self, float from_=0.0, float to=1.0, *, object generator=None", M,
       node="UniformBackward0", backward={'self': '_zeros_grad(grad)'},
       doc="Fill with uniform samples on [from_, to).\n\n"
           "    >>> float(tensorlib.empty(3).uniform_(2, 3).min()) >= 2\n    True"),
    op("normal_", "Tensor self, float mean=0.0, float std=1.0, *, object generator=None", M,
       node="NormalBackward0", backward={'self': '_zeros_grad(grad)'},
       doc="Fill with normal samples.\n\n    >>> tensorlib.empty(3).normal_(0, 1).shape\n"
           "    tensorlib.Size([3])"),
    op("random_", "Tensor self, object from_=None, object to=None, *, object generator=None", M,
       node="RandomBackward2",
       node_if=(("RandomBackward0", "to is not None"), ("RandomBackward1", "from_ is not None")),
       backward={'self': '_zeros_grad(grad)'},
       doc="Fill with integers uniform on [from_, to) (``random_(to)``: [0, to)).\n\n"
           "    >>> tensorlib.empty(3).random_(0, 2).tolist() in ([a, b, c] for a in (0., "
           "1.) for b in (0., 1.) for c in (0., 1.))\n    True"),
    op("bernoulli_", "Tensor self, object p=0.5, *, object generator=None", M,
       node="BernoulliBackward2", node_if=(("BernoulliBackward1", "isinstance(p, TensorBase)"),),
       backward={'self': '_zeros_grad(grad)'},
       doc="Fill with 1 with probability ``p`` (a number or a tensor), else 0.\n\n"
           "    >>> set(tensorlib.empty(8).bernoulli_(0.5).tolist()) <= {0.0, 1.0}\n    True"),
    op("bernoulli", "Tensor self, object p=None, *, object generator=None",
       node="BernoulliBackward0", backward={'self': '_zeros_grad(grad)'},
       doc="Samples 1 with the probability given by each element of ``input``.\n\n"
           "    >>> tensorlib.bernoulli(tensorlib.ones(3)).tolist()\n    [1.0, 1.0, 1.0]"),
    op("normal",
       "object mean, object std=1.0, object size=None, *, object generator=None, "
       f"object out=None, {FACTORY}", F,
       impl="_finish(_into_out(_normal({mean}, {std}, {size}, {generator}, {dtype}, {device}), "
            "{out}, 'normal'), {requires_grad})",
       doc="Normal samples with scalar or tensor mean/std.\n\n"
           "    >>> tensorlib.normal(0.0, 1.0, size=(2,)).shape\n    tensorlib.Size([2])"),

]
