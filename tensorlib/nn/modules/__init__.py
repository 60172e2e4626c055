"""The layers as ``tensorlib.nn.Module`` subclasses, PyTorch's ``torch.nn.modules``.

This package will hold ``Module`` (parameters, buffers, hooks, ``state_dict``,
``train``/``eval``) and the layers built on it (``Linear``, ``Conv2d``, ``LayerNorm``,
``Embedding``, ...), one module per family as in PyTorch (``linear.py``, ``conv.py``, ...),
each layer computing through ``tensorlib.nn.functional``. Nothing is defined yet.
"""
