"""Data parallelism, PyTorch's ``torch.nn.parallel``. On the CPU ``DataParallel`` is a
transparent wrapper (one device: the module runs as is).

>>> dp = tensorlib.nn.DataParallel(tensorlib.nn.Linear(2, 1))
>>> list(dp.state_dict())
['module.weight', 'module.bias']
"""
from tensorlib.nn.parallel.data_parallel import DataParallel

__all__ = ["DataParallel"]
