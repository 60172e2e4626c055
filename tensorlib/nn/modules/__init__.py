"""The layers as ``tensorlib.nn.Module`` subclasses, PyTorch's ``torch.nn.modules``: the
``Module`` base (parameters, buffers, hooks, ``state_dict``, ``train``/``eval``), the
containers and the layers, one module per family as in PyTorch (``linear.py``,
``conv.py``, ``rnn.py``, ...). Every family lists its public names in ``__all__``.

>>> from tensorlib.nn.modules import Linear, Sequential
>>> Sequential(Linear(2, 2))[0].out_features
2
"""
from tensorlib.nn.modules import (
    module, container, linear, flatten, activation, loss, dropout, sparse, normalization,
    padding, pixelshuffle, upsampling, distance, channelshuffle, fold, conv, pooling, rnn,
    attention, transformer)
from tensorlib.nn.modules.module import *  # noqa: F401,F403
from tensorlib.nn.modules.container import *  # noqa: F401,F403
from tensorlib.nn.modules.linear import *  # noqa: F401,F403
from tensorlib.nn.modules.flatten import *  # noqa: F401,F403
from tensorlib.nn.modules.activation import *  # noqa: F401,F403
from tensorlib.nn.modules.loss import *  # noqa: F401,F403
from tensorlib.nn.modules.dropout import *  # noqa: F401,F403
from tensorlib.nn.modules.sparse import *  # noqa: F401,F403
from tensorlib.nn.modules.normalization import *  # noqa: F401,F403
from tensorlib.nn.modules.padding import *  # noqa: F401,F403
from tensorlib.nn.modules.pixelshuffle import *  # noqa: F401,F403
from tensorlib.nn.modules.upsampling import *  # noqa: F401,F403
from tensorlib.nn.modules.distance import *  # noqa: F401,F403
from tensorlib.nn.modules.channelshuffle import *  # noqa: F401,F403
from tensorlib.nn.modules.fold import *  # noqa: F401,F403
from tensorlib.nn.modules.conv import *  # noqa: F401,F403
from tensorlib.nn.modules.pooling import *  # noqa: F401,F403
from tensorlib.nn.modules.rnn import *  # noqa: F401,F403
from tensorlib.nn.modules.attention import *  # noqa: F401,F403
from tensorlib.nn.modules.transformer import *  # noqa: F401,F403

_FAMILIES = (module, container, linear, flatten, activation, loss, dropout, sparse,
             normalization, padding, pixelshuffle, upsampling, distance, channelshuffle, fold,
             conv, pooling, rnn, attention, transformer)
__all__ = [name for family in _FAMILIES for name in family.__all__]
del _FAMILIES
