"""The layers as ``tensorlib.nn.Module`` subclasses, PyTorch's ``torch.nn.modules``: the
``Module`` base (parameters, buffers, hooks, ``state_dict``, ``train``/``eval``), the
containers and the layers, one module per family as in PyTorch (``linear.py``,
``flatten.py``, ...).

>>> from tensorlib.nn.modules import Linear, Sequential
>>> Sequential(Linear(2, 2))[0].out_features
2
"""
from tensorlib.nn.modules.module import Module
from tensorlib.nn.modules.container import (
    Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict)
from tensorlib.nn.modules.linear import Identity, Linear, Bilinear
from tensorlib.nn.modules.flatten import Flatten, Unflatten

__all__ = ["Module", "Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
           "ParameterDict", "Identity", "Linear", "Bilinear", "Flatten", "Unflatten"]

# activations, losses and the other layers over nn.functional (branch nnfunc)
from tensorlib.nn.modules import (  # noqa: E402
    activation as _activation, loss as _loss, dropout as _dropout, sparse as _sparse,
    normalization as _normalization, padding as _padding, pixelshuffle as _pixelshuffle,
    upsampling as _upsampling, distance as _distance, channelshuffle as _channelshuffle)
from tensorlib.nn.modules.activation import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.loss import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.dropout import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.sparse import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.normalization import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.padding import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.pixelshuffle import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.upsampling import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.distance import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.channelshuffle import *  # noqa: E402,F401,F403

__all__ += (_activation.__all__ + _loss.__all__ + _dropout.__all__ + _sparse.__all__
            + _normalization.__all__ + _padding.__all__ + _pixelshuffle.__all__
            + _upsampling.__all__ + _distance.__all__ + _channelshuffle.__all__)

# attention and the Transformer family (branch nntrans)
from tensorlib.nn.modules import attention as _attention, transformer as _transformer  # noqa
from tensorlib.nn.modules.attention import *  # noqa: E402,F401,F403
from tensorlib.nn.modules.transformer import *  # noqa: E402,F401,F403

__all__ += _attention.__all__ + _transformer.__all__
