"""Type stubs of tensorlib.utils.data (written by hand; tests/test_typing.py checks each
signature against the runtime).

``DataLoader[B]`` iterates over batches of type ``B``: with the default collation a dataset of
tensors gives ``Tensor`` batches and a dataset of tuples of tensors (``TensorDataset``) gives
``list[Tensor]`` batches; with ``collate_fn=f`` (passed by keyword), ``B`` is what ``f``
returns.
"""
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Generic, TypeVar, overload

from tensorlib import Generator, Tensor

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "DistributedSampler", "IterableDataset", "RandomSampler", "Sampler",
           "SequentialSampler", "StackDataset", "Subset", "SubsetRandomSampler",
           "TensorDataset", "WeightedRandomSampler", "WorkerInfo", "default_collate",
           "default_convert", "get_worker_info", "random_split"]

_T = TypeVar("_T")
_T_co = TypeVar("_T_co", covariant=True)
_B = TypeVar("_B")


class Dataset(Generic[_T_co]):
    """A map-style dataset: ``dataset[i]`` is sample ``i``."""
    def __getitem__(self, index: int) -> _T_co: ...
    def __add__(self, other: Dataset[_T_co]) -> ConcatDataset[_T_co]: ...


class IterableDataset(Dataset[_T_co]):
    """A dataset that is an iterable of samples."""
    def __iter__(self) -> Iterator[_T_co]: ...
    def __add__(self, other: Dataset[_T_co]) -> ChainDataset[_T_co]: ...  # type: ignore[override]


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    tensors: tuple[Tensor, ...]
    def __init__(self, *tensors: Tensor) -> None: ...
    def __getitem__(self, index: int) -> tuple[Tensor, ...]: ...
    def __len__(self) -> int: ...


class StackDataset(Dataset[_T_co]):
    def __init__(self, *args: Dataset[object], **kwargs: Dataset[object]) -> None: ...
    def __getitem__(self, index: int) -> _T_co: ...
    def __len__(self) -> int: ...


class ConcatDataset(Dataset[_T_co]):
    datasets: list[Dataset[_T_co]]
    cumulative_sizes: list[int]
    def __init__(self, datasets: Iterable[Dataset[_T_co]]) -> None: ...
    @staticmethod
    def cumsum(sequence: Iterable[Dataset[object]]) -> list[int]: ...
    def __getitem__(self, index: int) -> _T_co: ...
    def __len__(self) -> int: ...


class ChainDataset(IterableDataset[_T_co]):
    def __init__(self, datasets: Iterable[Dataset[_T_co]]) -> None: ...
    def __iter__(self) -> Iterator[_T_co]: ...
    def __len__(self) -> int: ...


class Subset(Dataset[_T_co]):
    dataset: Dataset[_T_co]
    indices: Sequence[int]
    def __init__(self, dataset: Dataset[_T_co], indices: Sequence[int]) -> None: ...
    def __getitem__(self, index: int) -> _T_co: ...
    def __len__(self) -> int: ...


def random_split(
    dataset: Dataset[_T], lengths: Sequence[int | float], generator: Generator | None = None,
) -> list[Subset[_T]]: ...


class Sampler(Generic[_T_co]):
    def __init__(self, data_source: object = None) -> None: ...
    def __iter__(self) -> Iterator[_T_co]: ...


class SequentialSampler(Sampler[int]):
    def __init__(self, data_source: Sequence[object] | Dataset[object]) -> None: ...
    def __iter__(self) -> Iterator[int]: ...
    def __len__(self) -> int: ...


class RandomSampler(Sampler[int]):
    replacement: bool
    def __init__(
        self, data_source: Sequence[object] | Dataset[object], replacement: bool = False,
        num_samples: int | None = None, generator: Generator | None = None,
    ) -> None: ...
    @property
    def num_samples(self) -> int: ...
    def __iter__(self) -> Iterator[int]: ...
    def __len__(self) -> int: ...


class SubsetRandomSampler(Sampler[int]):
    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None: ...
    def __iter__(self) -> Iterator[int]: ...
    def __len__(self) -> int: ...


class WeightedRandomSampler(Sampler[int]):
    def __init__(
        self, weights: Sequence[float] | Tensor, num_samples: int, replacement: bool = True,
        generator: Generator | None = None,
    ) -> None: ...
    def __iter__(self) -> Iterator[int]: ...
    def __len__(self) -> int: ...


class BatchSampler(Sampler[list[int]]):
    def __init__(
        self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool,
    ) -> None: ...
    def __iter__(self) -> Iterator[list[int]]: ...
    def __len__(self) -> int: ...


class DistributedSampler(Sampler[int]):
    def __init__(
        self, dataset: Dataset[object], num_replicas: int | None = None, rank: int | None = None,
        shuffle: bool = True, seed: int = 0, drop_last: bool = False,
    ) -> None: ...
    def __iter__(self) -> Iterator[int]: ...
    def __len__(self) -> int: ...
    def set_epoch(self, epoch: int) -> None: ...


class WorkerInfo:
    id: int
    num_workers: int
    seed: int
    dataset: Dataset[object]
    def __init__(self, **kwargs: object) -> None: ...


def get_worker_info() -> WorkerInfo | None: ...
def default_collate(batch: Sequence[object]) -> object: ...
def default_convert(data: object) -> object: ...


class DataLoader(Generic[_B]):
    """Batches of a dataset, in this process or in worker processes."""
    dataset: Dataset[object]
    batch_size: int | None
    drop_last: bool
    num_workers: int
    sampler: Sampler[int] | Iterable[int]
    batch_sampler: Sampler[list[int]] | Iterable[list[int]] | None
    generator: Generator | None
    @property
    def multiprocessing_context(self) -> object: ...
    @overload
    def __init__(
        self: DataLoader[list[Tensor]],
        dataset: Dataset[tuple[Tensor, ...]] | Dataset[list[Tensor]], batch_size: int | None = 1,
        shuffle: bool | None = None, sampler: Sampler[int] | Iterable[int] | None = None,
        batch_sampler: Sampler[list[int]] | Iterable[list[int]] | None = None,
        num_workers: int = 0, collate_fn: None = None, pin_memory: bool = False,
        drop_last: bool = False, timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: object = None, generator: Generator | None = None, *,
        prefetch_factor: int | None = None, persistent_workers: bool = False,
        pin_memory_device: str = '', in_order: bool = True,
    ) -> None: ...
    @overload
    def __init__(
        self: DataLoader[Tensor], dataset: Dataset[Tensor], batch_size: int | None = 1,
        shuffle: bool | None = None, sampler: Sampler[int] | Iterable[int] | None = None,
        batch_sampler: Sampler[list[int]] | Iterable[list[int]] | None = None,
        num_workers: int = 0, collate_fn: None = None, pin_memory: bool = False,
        drop_last: bool = False, timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: object = None, generator: Generator | None = None, *,
        prefetch_factor: int | None = None, persistent_workers: bool = False,
        pin_memory_device: str = '', in_order: bool = True,
    ) -> None: ...
    @overload
    def __init__(
        self, dataset: Dataset[_T] | Iterable[_T], batch_size: int | None = 1,
        shuffle: bool | None = None, sampler: Sampler[int] | Iterable[int] | None = None,
        batch_sampler: Sampler[list[int]] | Iterable[list[int]] | None = None,
        num_workers: int = 0, pin_memory: bool = False, drop_last: bool = False,
        timeout: float = 0, worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: object = None, generator: Generator | None = None, *,
        collate_fn: Callable[[list[_T]], _B], prefetch_factor: int | None = None,
        persistent_workers: bool = False, pin_memory_device: str = '', in_order: bool = True,
    ) -> None: ...
    @overload
    def __init__(
        self: DataLoader[object], dataset: Dataset[object] | Iterable[object],
        batch_size: int | None = 1, shuffle: bool | None = None,
        sampler: Sampler[int] | Iterable[int] | None = None,
        batch_sampler: Sampler[list[int]] | Iterable[list[int]] | None = None,
        num_workers: int = 0, collate_fn: None = None, pin_memory: bool = False,
        drop_last: bool = False, timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: object = None, generator: Generator | None = None, *,
        prefetch_factor: int | None = None, persistent_workers: bool = False,
        pin_memory_device: str = '', in_order: bool = True,
    ) -> None: ...
    def __iter__(self) -> Iterator[_B]: ...
    def __len__(self) -> int: ...
    def check_worker_number_rationality(self) -> None: ...
