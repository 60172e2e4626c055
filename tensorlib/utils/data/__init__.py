"""Data loading, PyTorch's ``torch.utils.data``: datasets, samplers, ``DataLoader`` and
collation.

``DataLoader(num_workers=N)`` loads in N worker processes (fork or spawn); their batches reach
this process in shared memory, mapped without a copy and counted by ``tensorlib.memory`` under
the role "input". Random orders come from tensorlib's generators: ``tensorlib.manual_seed``
makes shuffling and each worker's seeds reproducible (the streams are not PyTorch's).

>>> from tensorlib.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(tensorlib.arange(6.0).reshape(3, 2), tensorlib.tensor([0, 1, 0]))
>>> [(x.shape, y.tolist()) for x, y in DataLoader(ds, batch_size=2)]
[(tensorlib.Size([2, 2]), [0, 1]), (tensorlib.Size([1, 2]), [0])]
"""
from tensorlib.utils.data.collate import default_collate, default_convert
from tensorlib.utils.data.dataloader import DataLoader, _DatasetKind
from tensorlib.utils.data._worker import WorkerInfo, get_worker_info
from tensorlib.utils.data.dataset import (
    ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
    random_split)
from tensorlib.utils.data.distributed import DistributedSampler
from tensorlib.utils.data.sampler import (
    BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
    WeightedRandomSampler)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "DistributedSampler", "IterableDataset", "RandomSampler", "Sampler",
           "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler",
           "TensorDataset", "WeightedRandomSampler", "WorkerInfo", "default_collate",
           "default_convert", "get_worker_info", "random_split"]
