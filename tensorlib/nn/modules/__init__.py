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

# convolution and pooling layers (the nn kernels family)
from tensorlib.nn.modules.conv import (  # noqa: E402
    Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)
from tensorlib.nn.modules.pooling import (  # noqa: E402
    MaxPool1d, MaxPool2d, MaxUnpool1d, MaxUnpool2d, AvgPool1d, AvgPool2d, AdaptiveAvgPool1d,
    AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d)

__all__ += ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
            "ConvTranspose3d", "MaxPool1d", "MaxPool2d", "MaxUnpool1d", "MaxUnpool2d",
            "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
            "AdaptiveMaxPool1d", "AdaptiveMaxPool2d"]
