"""Neural-network building blocks, PyTorch's ``torch.nn``. For now the functional
activations (``tensorlib.nn.functional``); the layers will be in ``tensorlib.nn.modules`` and
the initialisers in ``tensorlib.nn.init``.

>>> import tensorlib.nn.functional as F
>>> F.relu(tensorlib.tensor([-1.0, 2.0])).tolist()
[0.0, 2.0]
"""
from tensorlib.nn import functional, init, modules, utils

__all__ = ["functional", "init", "modules", "utils"]
