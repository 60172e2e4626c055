"""``DistributedSampler``, PyTorch's ``torch.utils.data.distributed``."""
import math

import tensorlib
from tensorlib.utils.data.sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """The share of the dataset's indices for replica ``rank`` of ``num_replicas``: every
    ``num_replicas``-th index from ``rank`` of a list padded (by repeating its start) to a
    multiple of ``num_replicas``, or cut to one when ``drop_last``. With ``shuffle`` the list is
    a permutation from a generator seeded with ``seed + epoch`` (call ``set_epoch`` each
    epoch); all replicas must pass the same ``seed``. tensorlib has no process groups, so
    ``num_replicas`` and ``rank`` must be given.

    >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
    [1, 3, 0]
    >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False, drop_last=True))
    [1, 3]
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            raise RuntimeError("Requires distributed package to be available")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if self.drop_last and n % self.num_replicas != 0:
            # the tail that would need padding is dropped, so every replica gets as many
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = tensorlib.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = tensorlib.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        if len(indices) != self.total_size:
            raise AssertionError(f"Number of indices ({len(indices)}) does not match total_size "
                                 f"({self.total_size})")
        indices = indices[self.rank:self.total_size:self.num_replicas]
        if len(indices) != self.num_samples:
            raise AssertionError(f"Number of subsampled indices ({len(indices)}) does not match "
                                 f"num_samples ({self.num_samples})")
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Set the epoch: with ``shuffle``, each epoch is a different permutation.

        >>> s = DistributedSampler(range(8), num_replicas=2, rank=0, seed=1)
        >>> s.set_epoch(3); s.epoch
        3
        """
        self.epoch = epoch
