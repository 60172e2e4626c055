"""Neural-network building blocks, PyTorch's ``torch.nn``: ``Module`` and ``Parameter``,
the containers and layers (``tensorlib.nn.modules``), the functional forms
(``tensorlib.nn.functional``) and the initialisers (``tensorlib.nn.init``).

>>> import tensorlib.nn as nn
>>> net = nn.Sequential(nn.Linear(4, 3), nn.Flatten())
>>> net(tensorlib.zeros(2, 4)).shape
tensorlib.Size([2, 3])
>>> import tensorlib.nn.functional as F
>>> F.relu(tensorlib.tensor([-1.0, 2.0])).tolist()
[0.0, 2.0]
"""
from tensorlib.nn import functional, init
from tensorlib.nn.parameter import Parameter, Buffer
from tensorlib.nn import modules
from tensorlib.nn.modules import *  # noqa: F401,F403 (the layers, as torch.nn re-exports them)
from tensorlib.nn.modules import __all__ as _modules_all
from tensorlib.nn import parallel
from tensorlib.nn.parallel import DataParallel

__all__ = (["functional", "init", "modules", "parallel", "Parameter", "Buffer", "DataParallel"]
           + list(_modules_all))
