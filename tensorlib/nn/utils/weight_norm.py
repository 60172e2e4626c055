"""The hook-based weight normalisation, PyTorch's legacy ``torch.nn.utils.weight_norm``
(deprecated there in favour of ``parametrizations.weight_norm``): ``<name>_g`` and
``<name>_v`` become parameters and a forward pre-hook recomputes ``<name>`` from them.

>>> import tensorlib, warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     m = weight_norm(tensorlib.nn.Linear(3, 2))
>>> sorted(n for n, _ in m.named_parameters())
['bias', 'weight_g', 'weight_v']
"""
import warnings

from tensorlib.nn.parameter import Parameter
from tensorlib.nn.utils.parametrizations import _norm_except_dim

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    """The forward pre-hook that sets ``module.<name> = g * v / ||v||``.

    >>> WeightNorm("weight", None).dim
    -1
    """

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        """g * v / ||v|| from the module's ``<name>_g`` and ``<name>_v``.

        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     m = weight_norm(tensorlib.nn.Linear(2, 2))
        >>> WeightNorm("weight", 0).compute_weight(m).shape
        tensorlib.Size([2, 2])
        """
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    @staticmethod
    def apply(module, name, dim):
        """Install the hook on ``module`` (what :func:`weight_norm` calls; warns).

        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     fn = WeightNorm.apply(tensorlib.nn.Linear(2, 2), "weight", 0)
        >>> fn.name
        'weight'
        """
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g",
                                  Parameter(_norm_except_dim(weight, fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        """Replace ``<name>_g``/``<name>_v`` by one parameter ``<name>`` (see
        :func:`remove_weight_norm`).

        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     m = tensorlib.nn.Linear(2, 2)
        ...     WeightNorm.apply(m, "weight", 0).remove(m)
        >>> "weight" in dict(m.named_parameters())
        True
        """
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Split ``module.<name>`` into a magnitude ``<name>_g`` (norm over every dim but
    ``dim``; ``None``: the whole tensor) and a direction ``<name>_v`` (warns: deprecated).

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     m = weight_norm(tensorlib.nn.Linear(4, 3), dim=None)
    >>> m.weight_g.shape
    tensorlib.Size([])
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Undo :func:`weight_norm`: ``<name>`` becomes one parameter again, holding g * v / ||v||.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     m = remove_weight_norm(weight_norm(tensorlib.nn.Linear(4, 3)))
    >>> sorted(n for n, _ in m.named_parameters())
    ['bias', 'weight']
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
