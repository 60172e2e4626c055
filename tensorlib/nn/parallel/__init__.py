"""Data parallelism, PyTorch's ``torch.nn.parallel``: ``DataParallel`` splits a batch over
CUDA devices (a transparent wrapper when there are none).

>>> dp = tensorlib.nn.DataParallel(tensorlib.nn.Linear(2, 1))
>>> list(dp.state_dict())
['module.weight', 'module.bias']
"""
from tensorlib.nn.parallel.data_parallel import (
    DataParallel, scatter, replicate, parallel_apply, gather)

__all__ = ["DataParallel", "scatter", "replicate", "parallel_apply", "gather"]
