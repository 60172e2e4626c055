"""Samplers, PyTorch's ``torch.utils.data.sampler``: iterables of dataset indices (or of
lists of indices, for ``BatchSampler``). Random ones draw from tensorlib's generators, so
``tensorlib.manual_seed`` (or a ``generator``) makes their orders reproducible; the streams
are tensorlib's (Philox), not PyTorch's, so the orders differ from torch's."""
import typing

import numpy as np

import tensorlib

_T_co = typing.TypeVar("_T_co", covariant=True)

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


def _fresh_generator():
    """A generator seeded from the default generator (what an unseeded random sampler uses
    per pass, as PyTorch does)."""
    seed = int(tensorlib.empty((), dtype=tensorlib.int64).random_().item())
    g = tensorlib.Generator()
    g.manual_seed(seed)
    return g


class Sampler(typing.Generic[_T_co]):
    """Base class of samplers: subclasses define ``__iter__`` (and ``__len__`` when known).

    >>> class Evens(Sampler[int]):
    ...     def __init__(self, n): self.n = n
    ...     def __iter__(self): return iter(range(0, self.n, 2))
    >>> list(Evens(5))
    [0, 2, 4]
    """

    def __init__(self, data_source=None):
        if data_source is not None:
            import warnings
            warnings.warn("`data_source` argument is not used and will be removed in 2.2.0."
                          "You may still have custom implementation that utilizes it.")

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """Indices ``0 .. len(data_source) - 1`` in order.

    >>> list(SequentialSampler(range(3)))
    [0, 1, 2]
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Random indices: a permutation per pass (``num_samples`` beyond the length continues
    with fresh permutations), or ``num_samples`` draws with replacement. Without
    ``generator``, each pass seeds its own generator from the default one.

    >>> _ = tensorlib.manual_seed(0); a = list(RandomSampler(range(5)))
    >>> _ = tensorlib.manual_seed(0); a == list(RandomSampler(range(5))), sorted(a)
    (True, [0, 1, 2, 3, 4])
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        g = _fresh_generator() if self.generator is None else self.generator
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from tensorlib.randint(0, n, (32,), dtype=tensorlib.int64,
                                             generator=g).tolist()
            yield from tensorlib.randint(0, n, (self.num_samples % 32,),
                                         dtype=tensorlib.int64, generator=g).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from tensorlib.randperm(n, generator=g).tolist()
            yield from tensorlib.randperm(n, generator=g).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order (a new permutation per pass).

    >>> sorted(SubsetRandomSampler([5, 7, 9]))
    [5, 7, 9]
    """

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in tensorlib.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


def _multinomial(weights, num_samples, replacement, generator):
    """Indices drawn with probabilities proportional to ``weights`` (float64 NumPy array), as
    ``torch.multinomial`` with its errors; uniforms from tensorlib's ``generator``."""
    if weights.size == 0:
        raise RuntimeError("cannot sample from an empty probability distribution")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    total = weights.sum()
    if total <= 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and num_samples > weights.size:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    u = tensorlib.rand(num_samples if replacement else weights.size, dtype=tensorlib.float64,
                       generator=generator).numpy()
    if replacement:
        cdf = np.cumsum(weights / total)
        cdf[np.flatnonzero(weights)[-1]:] = 1.0     # no rounding gap past the last category
        # the first index whose cumulative probability exceeds u (zero weights never drawn)
        return np.searchsorted(cdf, u, side="right").tolist()
    # sampling without replacement, one at a time proportionally to the weights left, is
    # the order of the keys -log(u) / w (exponential races); zero weights come last, in
    # index order, as PyTorch places them
    with np.errstate(divide="ignore"):
        keys = -np.log1p(-u) / weights
    return np.argsort(keys, kind="stable")[:num_samples].tolist()


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with probabilities proportional to ``weights`` (with or
    without replacement).

    >>> s = WeightedRandomSampler([0.0, 1.0, 0.0], 4)
    >>> list(s)
    [1, 1, 1, 1]
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if (not isinstance(num_samples, int) or isinstance(num_samples, bool)
                or num_samples <= 0):
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError("replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = tensorlib.as_tensor(weights, dtype=tensorlib.float64)
        if len(w.shape) != 1:
            raise ValueError("weights should be a 1d sequence but given "
                             f"weights have shape {tuple(w.shape)}")
        self.weights = w
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        yield from _multinomial(self.weights.numpy(), self.num_samples, self.replacement,
                                self.generator)

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler``; the last shorter one is dropped when
    ``drop_last``.

    >>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    >>> list(BatchSampler(range(5), batch_size=2, drop_last=True))
    [[0, 1], [2, 3]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        if (not isinstance(batch_size, int) or isinstance(batch_size, bool)
                or batch_size <= 0):
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        size = self.batch_size
        while True:
            batch = [i for _, i in zip(range(size), it)]
            if not batch or (self.drop_last and len(batch) < size):
                return
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
