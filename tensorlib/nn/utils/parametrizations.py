"""Ready-made parametrizations, PyTorch's ``torch.nn.utils.parametrizations``:
``weight_norm`` (w = g * v / ||v||) and ``spectral_norm`` (w / sigma_max(w), sigma estimated
by power iteration), both registered through :mod:`tensorlib.nn.utils.parametrize`.

>>> import tensorlib
>>> m = weight_norm(tensorlib.nn.Linear(3, 2))
>>> sorted(n for n, _ in m.named_parameters())
['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
"""
import tensorlib as _t
from tensorlib.nn.modules.module import Module
from tensorlib.nn.utils import parametrize

__all__ = ["weight_norm", "spectral_norm"]


def _norm_except_dim(v, dim):
    """The 2-norm of ``v`` over every dim but ``dim`` (kept, others size 1); dim -1 means the
    norm of the whole tensor (a 0-d tensor), as PyTorch's ``norm_except_dim``."""
    if dim == -1:
        return v.norm(2)
    dim = dim + v.dim() if dim < 0 else dim
    others = [d for d in range(v.dim()) if d != dim]
    if not others:
        return v.abs()
    return v.pow(2).sum(others, keepdim=True).sqrt()


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize ``module.<name>`` as ``g * v / ||v||``, the norm taken over every dim
    but ``dim`` (``None``: the whole tensor). ``g`` is
    ``parametrizations.<name>.original0`` and ``v`` is ``original1``; a state dict saved with
    the legacy ``<name>_g``/``<name>_v`` keys still loads.

    >>> m = weight_norm(tensorlib.nn.Linear(4, 3))
    >>> tuple(m.parametrizations.weight.original0.shape)
    (3, 1)
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def compat_hook(mod, state_dict, prefix, local_metadata, strict, missing_keys,
                    unexpected_keys, error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module.register_load_state_dict_pre_hook(compat_hook)
    return module


def _normalize(x, eps):
    return x / x.norm(2).clamp(min=eps)


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._reshape_weight_to_matrix(weight)
            h, w = mat.shape
            u = _t.empty(h, dtype=mat.dtype, device=mat.device).normal_(0, 1)
            v = _t.empty(w, dtype=mat.dtype, device=mat.device).normal_(0, 1)
            self.register_buffer("_u", _normalize(u, eps))
            self.register_buffer("_v", _normalize(v, eps))
            # a good starting estimate, so that one iteration per step stays accurate
            self._power_method(mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim())
                                                if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, mat, iterations):
        with _t.no_grad():
            mat = mat.detach()
            for _ in range(iterations):
                # in place: the buffers are the estimate carried from step to step
                self._u.copy_(_normalize(_t.mv(mat, self._v), self.eps))
                self._v.copy_(_normalize(_t.mv(mat.t(), self._u), self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return _normalize(weight, self.eps)
        mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u = self._u.clone()
        v = self._v.clone()
        sigma = (u * _t.mv(mat, v)).sum()
        return weight / sigma

    def right_inverse(self, value):
        return value


_TRANSPOSED_CONVS = ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Reparametrize ``module.<name>`` as ``W / sigma``, ``sigma`` its largest singular value
    (of the weight flattened to a matrix along ``dim``: 1 for transposed convolutions, else
    0), estimated by ``n_power_iterations`` power-iteration steps per forward in training
    mode (vectors kept in the buffers ``_u``, ``_v``).

    >>> m = spectral_norm(tensorlib.nn.Linear(5, 4))
    >>> sorted(n for n, _ in m.named_buffers())
    ['parametrizations.weight.0._u', 'parametrizations.weight.0._v']
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, _t.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        transposed = tuple(c for c in (getattr(_t.nn, n, None) for n in _TRANSPOSED_CONVS)
                           if c is not None)
        dim = 1 if transposed and isinstance(module, transposed) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
