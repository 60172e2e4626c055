"""Data loading, PyTorch's ``torch.utils.data``.

This package will hold ``Dataset``, ``IterableDataset``, ``TensorDataset``, the samplers
and ``DataLoader`` (batching, collation, worker processes handing batches over in shared
memory, counted under the input memory role). Nothing is defined yet.
"""
