"""``MultiheadAttention`` (PyTorch's arguments, parameters, initialisation and repr) over
``F.multi_head_attention_forward``.

>>> tensorlib.nn.MultiheadAttention(4, 2)
MultiheadAttention(
  (out_proj): NonDynamicallyQuantizableLinear(in_features=4, out_features=4, bias=True)
)
"""
import math

import tensorlib
from tensorlib.nn import functional as F
from tensorlib.nn.modules.linear import Linear
from tensorlib.nn.modules.module import Module
from tensorlib.nn.parameter import Parameter

__all__ = ["MultiheadAttention"]


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under the name PyTorch gives MultiheadAttention's output projection.

    >>> NonDynamicallyQuantizableLinear(2, 2)
    NonDynamicallyQuantizableLinear(in_features=2, out_features=2, bias=True)
    """


def _fans(t):
    receptive = math.prod(t.shape[2:]) if t.dim() > 2 else 1
    return t.shape[1] * receptive, t.shape[0] * receptive


def _xavier_uniform_(t):
    fan_in, fan_out = _fans(t)
    bound = math.sqrt(6.0 / (fan_in + fan_out))
    with tensorlib.no_grad():
        return t.uniform_(-bound, bound)


def _xavier_normal_(t):
    fan_in, fan_out = _fans(t)
    with tensorlib.no_grad():
        return t.normal_(0.0, math.sqrt(2.0 / (fan_in + fan_out)))


class MultiheadAttention(Module):
    """Multi-head attention: ``num_heads`` heads of size embed_dim // num_heads over
    (L, N, E) inputs (``batch_first``: (N, L, E)); returns (output, attention weights).

    >>> m = MultiheadAttention(4, 2, batch_first=True)
    >>> out, w = m(tensorlib.zeros(1, 3, 4), tensorlib.zeros(1, 5, 4), tensorlib.zeros(1, 5, 4))
    >>> tuple(out.shape), tuple(w.shape)
    ((1, 3, 4), (1, 3, 5))
    """

    __constants__ = ["batch_first"]

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        assert self.head_dim * num_heads == embed_dim, \
            "embed_dim must be divisible by num_heads"
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(tensorlib.empty((embed_dim, embed_dim), **kw))
            self.k_proj_weight = Parameter(tensorlib.empty((embed_dim, self.kdim), **kw))
            self.v_proj_weight = Parameter(tensorlib.empty((embed_dim, self.vdim), **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(tensorlib.empty((3 * embed_dim, embed_dim), **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(tensorlib.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(tensorlib.empty((1, 1, embed_dim), **kw))
            self.bias_v = Parameter(tensorlib.empty((1, 1, embed_dim), **kw))
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
        with tensorlib.no_grad():
            if self.in_proj_bias is not None:
                self.in_proj_bias.fill_(0.0)
                self.out_proj.bias.fill_(0.0)
        if self.bias_k is not None:
            _xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            _xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        batched = query.dim() == 3
        if self.batch_first and batched:
            query, key, value = (t.transpose(1, 0) for t in (query, key, value))
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal)
        if self.batch_first and batched:
            return out.transpose(1, 0), weights
        return out, weights
