"""Building a module without running its initialisation, PyTorch's
``torch.nn.utils.skip_init``.

>>> import tensorlib
>>> m = skip_init(tensorlib.nn.Linear, 3, 2)
>>> m.weight.shape, m.weight.device.type
(tensorlib.Size([2, 3]), 'cpu')
"""
import inspect

from tensorlib.nn.modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with its parameters and buffers left uninitialised:
    the module is built on the ``meta`` device (where the initialisers cost nothing) and then
    given empty storage on ``device`` (default ``"cpu"``). The class must take ``device=``.

    >>> skip_init(tensorlib.nn.GRU, 2, 3).weight_hh_l0.shape
    tensorlib.Size([9, 3])
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final_device)
