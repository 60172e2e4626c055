"""Multi-head attention as a layer, PyTorch's ``torch.nn.MultiheadAttention`` (which PyTorch
keeps in ``torch/nn/modules/activation.py``): the same parameter names, shapes, default
initialisation and ``state_dict`` keys, so a PyTorch checkpoint loads into it.

>>> mha = tensorlib.nn.MultiheadAttention(8, 2)
>>> [name for name, _ in mha.named_parameters()]
['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']
>>> x = tensorlib.zeros(5, 3, 8)
>>> out, weights = mha(x, x, x)
>>> out.shape, weights.shape
(tensorlib.Size([5, 3, 8]), tensorlib.Size([3, 5, 5]))
"""
import math

import tensorlib
from tensorlib._core import tensor as _C
from tensorlib.nn._attention import _canonical_mask, _none_or_dtype
from tensorlib.nn._attention import multi_head_attention_forward
from tensorlib.nn.modules.linear import Linear
from tensorlib.nn.modules.module import Module
from tensorlib.nn.parameter import Parameter

__all__ = ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]


class _no_grad:
    def __enter__(self):
        self.prev = _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)


def _fans(t):
    # fan_in = size(1) * receptive field, fan_out = size(0) * receptive field
    if t.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    rf = math.prod(t.shape[2:])
    return t.shape[1] * rf, t.shape[0] * rf


def _xavier_uniform_(t, gain=1.0):
    """Glorot uniform: U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)), in place."""
    fan_in, fan_out = _fans(t)
    a = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    with _no_grad():
        return t.uniform_(-a, a)


def _xavier_normal_(t, gain=1.0):
    """Glorot normal: N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out)), in place."""
    fan_in, fan_out = _fans(t)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    with _no_grad():
        return t.normal_(0.0, std)


def _zeros_(t):
    with _no_grad():
        return t.zero_()


class NonDynamicallyQuantizableLinear(Linear):
    """The out-projection of ``MultiheadAttention``: a ``Linear`` under its own class name
    (in PyTorch the name keeps dynamic quantization away from it).

    >>> NonDynamicallyQuantizableLinear(2, 3).weight.shape
    tensorlib.Size([3, 2])
    """


class MultiheadAttention(Module):
    """Attention of ``query`` over ``key``/``value`` with ``num_heads`` heads of
    ``embed_dim // num_heads`` features, as PyTorch's ``nn.MultiheadAttention``.

    Parameters: ``in_proj_weight`` (3 * embed_dim, embed_dim) when ``kdim`` and ``vdim`` equal
    ``embed_dim``, else ``q_proj_weight``/``k_proj_weight``/``v_proj_weight``;
    ``in_proj_bias`` (3 * embed_dim) and ``out_proj`` (a Linear) with ``bias``; ``bias_k``/
    ``bias_v`` (1, 1, embed_dim) with ``add_bias_kv``. Projection weights start Glorot
    uniform, biases zero, ``bias_k``/``bias_v`` Glorot normal. Inputs are (L, N, E)
    (``batch_first=False``), (N, L, E) (``batch_first=True``) or unbatched (L, E).

    >>> mha = tensorlib.nn.MultiheadAttention(4, 2, kdim=3, vdim=5, batch_first=True)
    >>> mha.k_proj_weight.shape, mha.in_proj_weight
    (tensorlib.Size([4, 3]), None)
    >>> out, w = mha(tensorlib.ones(2, 6, 4), tensorlib.ones(2, 7, 3), tensorlib.ones(2, 7, 5),
    ...              average_attn_weights=False)
    >>> out.shape, w.shape
    (tensorlib.Size([2, 6, 4]), tensorlib.Size([2, 2, 6, 7]))
    """

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        fk = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(tensorlib.empty((3 * embed_dim, embed_dim), **fk))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(tensorlib.empty((embed_dim, embed_dim), **fk))
            self.k_proj_weight = Parameter(tensorlib.empty((embed_dim, self.kdim), **fk))
            self.v_proj_weight = Parameter(tensorlib.empty((embed_dim, self.vdim), **fk))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(tensorlib.empty(3 * embed_dim, **fk))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **fk)
        if add_bias_kv:
            self.bias_k = Parameter(tensorlib.empty((1, 1, embed_dim), **fk))
            self.bias_v = Parameter(tensorlib.empty((1, 1, embed_dim), **fk))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            _xavier_uniform_(self.in_proj_weight)
        else:
            _xavier_uniform_(self.q_proj_weight)
            _xavier_uniform_(self.k_proj_weight)
            _xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            _zeros_(self.in_proj_bias)
            _zeros_(self.out_proj.bias)
        if self.bias_k is not None:
            _xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            _xavier_normal_(self.bias_v)

    def __setstate__(self, state):
        state.setdefault("_qkv_same_embed_dim", True)
        super().__setstate__(state)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        """(attention output, weights or None); see the class docstring for the shapes and
        ``multi_head_attention_forward`` for the masks."""
        is_batched = query.dim() == 3
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                           _none_or_dtype(attn_mask), "attn_mask", query.dtype)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if self.batch_first and is_batched:
            # keep the identities (query is key is value) that pick the packed projection
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = query.transpose(1, 0), key.transpose(1, 0)
                    value = key
            else:
                query, key, value = (x.transpose(1, 0) for x in (query, key, value))
        separate = {}
        if not self._qkv_same_embed_dim:
            separate = dict(use_separate_proj_weight=True, q_proj_weight=self.q_proj_weight,
                            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight)
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            average_attn_weights=average_attn_weights, is_causal=is_causal, **separate)
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
        return out, weights

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """The (N, num_heads, L, L) sum of an additive ``attn_mask`` and ``key_padding_mask``
        for a batch-first self-attention ``query``, with PyTorch's mask-type code (1: key
        padding only, 2: attention mask; None: neither).

        >>> mha = tensorlib.nn.MultiheadAttention(4, 2)
        >>> m, kind = mha.merge_masks(tensorlib.zeros(3, 3), None, tensorlib.ones(2, 3, 4))
        >>> m.shape, kind
        (tensorlib.Size([2, 2, 3, 3]), 2)
        """
        mask_type, merged = None, None
        if key_padding_mask is not None:
            mask_type, merged = 1, key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                merged = attn_mask.reshape(batch_size, -1, seq_len, seq_len)
            else:
                merged = attn_mask.reshape(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, seq_len, seq_len)
            if key_padding_mask is not None:
                merged = merged + key_padding_mask.reshape(batch_size, 1, 1, seq_len).expand(
                    batch_size, self.num_heads, 1, seq_len)
        return merged, mask_type
