"""The hook-based spectral normalisation, PyTorch's legacy ``torch.nn.utils.spectral_norm``:
``<name>_orig`` is the parameter, ``<name>_u``/``<name>_v`` the power-iteration buffers, and
a forward pre-hook sets ``<name> = <name>_orig / sigma``.

>>> import tensorlib
>>> m = spectral_norm(tensorlib.nn.Linear(3, 2))
>>> sorted(m.state_dict())
['bias', 'weight_orig', 'weight_u', 'weight_v']
"""
import tensorlib as _t
from tensorlib.nn.parameter import Parameter

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


def _normalize(x, eps):
    return x / x.norm(2).clamp(min=eps)


class SpectralNorm:
    """The forward pre-hook that sets ``module.<name>`` to the weight divided by its
    estimated largest singular value (one power-iteration step per forward in training).

    >>> SpectralNorm(n_power_iterations=2).n_power_iterations
    2
    """

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        """``weight`` as a matrix with ``dim`` as its rows.

        >>> SpectralNorm(dim=1).reshape_weight_to_matrix(tensorlib.zeros(2, 3, 4)).shape
        tensorlib.Size([3, 8])
        """
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.dim())
                                                if d != self.dim])
        return weight.reshape(weight.size(0), -1)

    def compute_weight(self, module, do_power_iteration):
        """``<name>_orig / sigma``, after the power-iteration steps when asked.

        >>> m = spectral_norm(tensorlib.nn.Linear(2, 2))
        >>> SpectralNorm().compute_weight(m, do_power_iteration=False).shape
        tensorlib.Size([2, 2])
        """
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with _t.no_grad():
                for _ in range(self.n_power_iterations):
                    # in place: the buffers carry the estimate from step to step
                    v.copy_(_normalize(_t.mv(mat.t(), u), self.eps))
                    u.copy_(_normalize(_t.mv(mat, v), self.eps))
                u = u.clone()
                v = v.clone()
        sigma = (u * _t.mv(mat, v)).sum()
        return weight / sigma

    def remove(self, module):
        """Replace ``<name>_orig`` and the buffers by one parameter ``<name>`` (see
        :func:`remove_spectral_norm`).

        >>> m = tensorlib.nn.Linear(2, 2)
        >>> SpectralNorm.apply(m, "weight", 1, 0, 1e-12).remove(m)
        >>> sorted(m.state_dict())
        ['bias', 'weight']
        """
        with _t.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        """Install the hook on ``module`` (what :func:`spectral_norm` calls).

        >>> SpectralNorm.apply(tensorlib.nn.Linear(2, 2), "weight", 1, 0, 1e-12).dim
        0
        """
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with _t.no_grad():
            mat = fn.reshape_weight_to_matrix(weight)
            h, w = mat.shape
            like = dict(dtype=weight.dtype, device=weight.device)
            u = _normalize(_t.empty(h, **like).normal_(0, 1), fn.eps)
            v = _normalize(_t.empty(w, **like).normal_(0, 1), fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.detach())
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


_TRANSPOSED_CONVS = ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its spectral norm on every forward (hook-based form;
    ``dim`` defaults to 1 for transposed convolutions, else 0).

    >>> m = spectral_norm(tensorlib.nn.Linear(4, 4))
    >>> m(tensorlib.zeros(1, 4)).shape
    tensorlib.Size([1, 4])
    """
    if dim is None:
        transposed = tuple(c for c in (getattr(_t.nn, n, None) for n in _TRANSPOSED_CONVS)
                           if c is not None)
        dim = 1 if transposed and isinstance(module, transposed) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undo :func:`spectral_norm`: ``<name>`` becomes one parameter holding the normalised
    weight.

    >>> m = remove_spectral_norm(spectral_norm(tensorlib.nn.Linear(2, 2)))
    >>> sorted(m.state_dict())
    ['bias', 'weight']
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
