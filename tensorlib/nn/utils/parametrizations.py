"""Ready-made parametrizations, PyTorch's ``torch.nn.utils.parametrizations``:
``weight_norm`` (w = g * v / ||v||), ``spectral_norm`` (w / sigma_max(w), sigma estimated
by power iteration) and ``orthogonal`` (w kept (semi-)orthogonal through the matrix
exponential, the Cayley map or Householder reflections), all registered through
:mod:`tensorlib.nn.utils.parametrize`.

>>> import tensorlib
>>> m = weight_norm(tensorlib.nn.Linear(3, 2))
>>> sorted(n for n, _ in m.named_parameters())
['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
"""
import math

import numpy as _np

import tensorlib as _t
from tensorlib.nn.modules.module import Module
from tensorlib.nn.utils import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


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


# ------------------------------------------------------------------------------- orthogonal
def _eye_like(a, n, k=None):
    return _t.eye(n, n if k is None else k, dtype=a.dtype, device=a.device)


def _matrix_exp(a):
    """exp of a batch of square matrices by scaling and squaring a degree-18 Taylor
    polynomial (Horner form): the scaled matrix has 1-norm <= 1/2, where the truncation
    error, below 0.5^19 / 19!, is far under float64's rounding. Products only, so autograd
    differentiates it."""
    n = a.size(-1)
    norm = float(a.detach().abs().sum(-2).max()) if a.numel() else 0.0
    squarings = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0
    b = a / (2.0 ** squarings)
    eye = _eye_like(a, n)
    p = eye + b / 18.0
    for k in range(17, 0, -1):
        p = eye + b.matmul(p) / float(k)
    for _ in range(squarings):
        p = p.matmul(p)
    return p


def _solve_unpivoted(m, b):
    """m^-1 b by Gauss-Jordan elimination without pivoting, in tensor operations (so that
    autograd differentiates it). Only used for the Cayley map, where m = I - A/2 with A
    skew-symmetric: its symmetric part is I, so every pivot is safely non-zero."""
    n = m.size(-1)
    eye = _eye_like(m, n)
    for i in range(n):
        e = eye[:, i:i + 1]                                 # (n, 1), one-hot row i
        pivot = m[..., i:i + 1, i:i + 1]
        row_m = m[..., i:i + 1, :] / pivot
        row_b = b[..., i:i + 1, :] / pivot
        col = m[..., :, i:i + 1] * (1 - e)                  # eliminate every other row
        m = m - col.matmul(row_m)
        b = b - col.matmul(row_b)
        m = m * (1 - e) + e * row_m
        b = b * (1 - e) + e * row_b
    return b


def _householder_product(a, tau):
    """The first k columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, v_i the i-th column of
    ``a`` below the diagonal with an implicit 1 on it (LAPACK's orgqr), in tensor
    operations."""
    n, k = a.size(-2), a.size(-1)
    q = _eye_like(a, n, k).expand(*a.shape[:-2], n, k)
    eye = _eye_like(a, n)
    for i in range(k - 1, -1, -1):
        below = (_t.arange(n, device=a.device) > i).to(a.dtype)
        v = (a[..., :, i] * below + eye[:, i]).unsqueeze(-1)          # (..., n, 1)
        q = q - tau[..., i:i + 1].unsqueeze(-1) * v.matmul(v.transpose(-2, -1).matmul(q))
    return q


def _host_batches(x):
    arr = x.detach().contiguous().numpy().astype(_np.float64, copy=False)
    return arr.reshape((-1,) + arr.shape[-2:])


def _make_orthogonal(a):
    """The Q of a's QR with the columns' signs fixed by R's diagonal (LAPACK on host copies;
    only called under no_grad)."""
    out = []
    for m in _host_batches(a):
        q, r = _np.linalg.qr(m)
        out.append(q * _np.sign(_np.diag(r)))
    q = _np.stack(out).reshape(tuple(a.shape[:-2]) + out[0].shape)
    return _t.tensor(q, dtype=a.dtype, device=a.device)


def _geqrf(a):
    """LAPACK's geqrf (reflectors below the diagonal, R on and above it, and tau) on host
    copies; only called under no_grad."""
    hs, taus = [], []
    for m in _host_batches(a):
        h, tau = _np.linalg.qr(m, mode="raw")
        hs.append(h.T)
        taus.append(tau)
    batch = tuple(a.shape[:-2])
    h = _np.stack(hs).reshape(batch + hs[0].shape)
    tau = _np.stack(taus).reshape(batch + taus[0].shape)
    return (_t.tensor(h, dtype=a.dtype, device=a.device),
            _t.tensor(tau, dtype=a.dtype, device=a.device))


def _is_orthogonal(q):
    n, k = q.size(-2), q.size(-1)
    eps = 10.0 * n * _t.finfo(q.dtype).eps
    return _t.allclose(q.transpose(-2, -1).matmul(q), _eye_like(q, k), atol=eps)


_ORTH_MAPS = ("matrix_exp", "cayley", "householder")


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.transpose(-2, -1)
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:
                X = _t.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.transpose(-2, -1)
            if self.orthogonal_map == "matrix_exp":
                Q = _matrix_exp(A)
            else:
                eye = _eye_like(A, n)
                Q = _solve_unpivoted(eye - 0.5 * A, eye + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(-2))
            Q = _householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:
            Q = self.base.matmul(Q)
        if transposed:
            Q = Q.transpose(-2, -1)
        return Q

    def right_inverse(self, Q):
        with _t.no_grad():
            if Q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape "
                                 f"{self.shape}. Got a tensor of shape {Q.shape}.")
            q_init = Q
            n, k = Q.size(-2), Q.size(-1)
            transpose = n < k
            if transpose:
                Q = Q.transpose(-2, -1)
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map in ("cayley", "matrix_exp"):
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the "
                        "Cayley parametrizations when use_trivialization=False.")
                A, tau = _geqrf(Q)
                d = A.diagonal(dim1=-2, dim2=-1)
                d.copy_(d.sign() * _t.where(tau == 0.0, -1.0, 1.0))
                return A.transpose(-2, -1) if transpose else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:
                noise = _t.randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype,
                                 device=Q.device)
                Q = _make_orthogonal(_t.cat([Q, noise], dim=-1))
            self.base = Q
            neg_eye = _t.zeros_like(q_init)
            neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_eye


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Keep ``module.<name>`` (a matrix or batch of matrices) orthogonal, or with orthonormal
    rows/columns when not square. ``orthogonal_map`` is ``"matrix_exp"`` (the default for
    square matrices), ``"cayley"`` or ``"householder"`` (the default otherwise). With
    ``use_trivialization`` (the default) the initial weight's orthogonalisation is kept in
    the buffer ``base`` and the trained parameter starts at -I (the map's origin).

    >>> m = orthogonal(tensorlib.nn.Linear(4, 4, dtype=tensorlib.float64))
    >>> w = m.weight
    >>> bool(((w @ w.T) - tensorlib.eye(4, dtype=tensorlib.float64)).abs().max() < 1e-12)
    True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, _t.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.size(-2) == weight.size(-1) else "householder"
    if orthogonal_map not in _ORTH_MAPS:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
