"""Neural-network building blocks. For now the functional activations
(``tensorlib.nn.functional``); modules and layers come with the nn issue.

>>> import tensorlib.nn.functional as F
>>> F.relu(tensorlib.tensor([-1.0, 2.0])).tolist()
[0.0, 2.0]
"""
from tensorlib.nn import functional

__all__ = ["functional"]
