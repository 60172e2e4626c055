"""The Transformer family, PyTorch's ``torch.nn.modules.transformer``: ``Transformer``,
``TransformerEncoder``/``TransformerDecoder`` (stacks of copies of one layer) and
``TransformerEncoderLayer``/``TransformerDecoderLayer``, with PyTorch's arguments,
sub-module and parameter names (``state_dict`` keys), so a PyTorch checkpoint loads into
them. PyTorch's fused inference kernels have no counterpart: every call takes the general
path. They compute the same values, with two exceptions: ``TransformerEncoder``'s nested
path, whose zeros at padded positions are reproduced, and PyTorch's fused encoder layer,
which reads a float mask with finite nonzero entries as a bool mask (nonzero = masked, so
an all-nonzero mask gives NaN), where tensorlib keeps the additive meaning that PyTorch's
general path gives it.

>>> layer = tensorlib.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16,
...                                              batch_first=True)
>>> enc = tensorlib.nn.TransformerEncoder(layer, num_layers=2)
>>> enc(tensorlib.zeros(3, 5, 8)).shape
tensorlib.Size([3, 5, 8])
"""
import copy
import warnings

import tensorlib
from tensorlib.nn import functional as F
from tensorlib.nn._attention import _canonical_mask, _none_or_dtype
from tensorlib.nn.modules.activation import ReLU, GELU
from tensorlib.nn.modules.attention import MultiheadAttention, _xavier_uniform_
from tensorlib.nn.modules.container import ModuleList
from tensorlib.nn.modules.dropout import Dropout
from tensorlib.nn.modules.linear import Linear
from tensorlib.nn.modules.module import Module
from tensorlib.nn.modules.normalization import LayerNorm

__all__ = ["Transformer", "TransformerEncoder", "TransformerDecoder",
           "TransformerEncoderLayer", "TransformerDecoderLayer"]


def _generate_square_subsequent_mask(sz, device=None, dtype=None):
    return tensorlib.full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(1)


def _get_seq_len(src, batch_first):
    if src.dim() == 2:
        return src.shape[0]
    return src.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask, is_causal=None, size=None):
    """``is_causal`` when given; else whether ``mask`` equals the causal mask of ``size``
    (or of its own size)."""
    if is_causal is not None or mask is None:
        return is_causal is True
    sz = size if size is not None else mask.shape[-2]
    causal = _generate_square_subsequent_mask(sz, device=mask.device, dtype=mask.dtype)
    if tuple(mask.shape) != tuple(causal.shape):
        return False
    return bool((mask == causal).all())


def _get_clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward network (linear1, activation, linear2), each in a
    residual branch with dropout and a LayerNorm after it (``norm_first=False``) or before
    it (``norm_first=True``). ``activation``: 'relu', 'gelu' or a unary callable.

    >>> layer = tensorlib.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, batch_first=True)
    >>> sorted(layer.state_dict())[:3]
    ['linear1.bias', 'linear1.weight', 'linear2.bias']
    >>> layer(tensorlib.randn(2, 3, 4)).shape
    tensorlib.Size([2, 3, 4])
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        fk = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **fk)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **fk)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **fk)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        # PyTorch's code for its fused kernel: 1 relu, 2 gelu, 0 anything else
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        """One encoder layer over ``src`` ((S, N, E), (N, S, E) batch-first, or (S, E));
        ``src_mask`` (S, S) or (N * nhead, S, S), ``src_key_padding_mask`` (N, S), bool
        (True = ignored) or additive float; ``is_causal`` hints that ``src_mask`` is causal."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(src_mask), "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """Self-attention over ``tgt``, attention over ``memory``, then a feed-forward network,
    each in a residual branch with dropout and a LayerNorm (after it, or before it with
    ``norm_first=True``).

    >>> layer = tensorlib.nn.TransformerDecoderLayer(4, 2, dim_feedforward=8)
    >>> layer(tensorlib.randn(5, 2, 4), tensorlib.randn(7, 2, 4)).shape
    tensorlib.Size([5, 2, 4])
    """

    __constants__ = ["norm_first"]

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        fk = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, **fk)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias, **fk)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **fk)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **fk)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = (_get_activation_fn(activation) if isinstance(activation, str)
                           else activation)

    def __setstate__(self, state):
        state.setdefault("activation", F.relu)
        super().__setstate__(state)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        """One decoder layer: ``tgt`` (T, N, E) attends to itself (``tgt_mask`` (T, T),
        ``tgt_key_padding_mask`` (N, T)) and to ``memory`` (S, N, E) (``memory_mask``
        (T, S), ``memory_key_padding_mask`` (N, S)); batch-first or unbatched alike."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                               memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


class TransformerEncoder(Module):
    """``num_layers`` deep copies of ``encoder_layer`` (``layers.0``, ``layers.1``, ...),
    then ``norm`` if given.

    Tensorlib has no nested tensors, but where PyTorch's inference path would pack the
    sequences without their padding (``enable_nested_tensor``, eval mode, no gradient
    wanted, batch-first, a left-aligned ``src_key_padding_mask``), the padded positions
    come out as PyTorch's do: zeros before ``norm``. ``mask_check`` as in PyTorch.

    >>> layer = tensorlib.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8)
    >>> enc = tensorlib.nn.TransformerEncoder(layer, 3, norm=tensorlib.nn.Identity(),
    ...                                       enable_nested_tensor=False)
    >>> len(enc.layers), enc(tensorlib.randn(5, 2, 4)).shape
    (3, tensorlib.Size([5, 2, 4]))
    """

    __constants__ = ["norm"]

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_not_nested(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why_not}", stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        """The layers in turn over ``src``, each with ``mask`` and ``src_key_padding_mask``;
        ``is_causal=None`` detects whether ``mask`` is the causal mask."""
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               _none_or_dtype(mask), "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        batch_first = self.layers[0].self_attn.batch_first
        is_causal = _detect_is_causal_mask(mask, is_causal, _get_seq_len(src, batch_first))
        padded = self._padded_positions(src, mask, src_key_padding_mask)
        if padded is not None:
            # PyTorch's inference path packs each sequence without its padding (a nested
            # tensor): the layers see exactly the keys a 0 marks, and the padded positions
            # come back as zeros
            src_key_padding_mask = _canonical_mask(padded, "src_key_padding_mask", None, "",
                                                   src.dtype)
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal,
                         src_key_padding_mask=src_key_padding_mask)
        if padded is not None:
            output = output.masked_fill(padded.unsqueeze(-1), 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _padded_positions(self, src, mask, key_padding_mask):
        """The (N, S) bool padding where PyTorch would take its nested-tensor path (eval, no
        gradient wanted, batch-first 3-D input, a left-aligned key padding mask and no
        attention mask, a layer it can fuse); else None."""
        first = self.layers[0]
        if (not getattr(self, "use_nested_tensor", False) or first.training or src.dim() != 3
                or key_padding_mask is None or mask is not None):
            return None
        padded = key_padding_mask != 0
        if getattr(self, "mask_check", True) and src.shape[1] > 1:
            # left-aligned: no kept position after a padded one
            kept = (~padded).to(tensorlib.int8)
            if bool((kept[:, 1:] > kept[:, :-1]).any()):
                return None
        sa = first.self_attn
        args = (src, sa.in_proj_weight, sa.in_proj_bias, sa.out_proj.weight, sa.out_proj.bias,
                first.norm1.weight, first.norm1.bias, first.norm2.weight, first.norm2.bias,
                first.linear1.weight, first.linear1.bias, first.linear2.weight,
                first.linear2.bias)
        if tensorlib.is_grad_enabled() and any(t is not None and t.requires_grad for t in args):
            return None
        return padded


def _why_not_nested(layer):
    """Why PyTorch's encoder would not take its nested-tensor path with this layer ('' if
    it would), in PyTorch's words."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return (f"{name}.self_attn.batch_first was not True(use batch_first for better "
                f"inference performance)")
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerDecoder(Module):
    """``num_layers`` deep copies of ``decoder_layer``, then ``norm`` if given.

    >>> layer = tensorlib.nn.TransformerDecoderLayer(4, 2, dim_feedforward=8)
    >>> dec = tensorlib.nn.TransformerDecoder(layer, 2)
    >>> dec(tensorlib.randn(5, 2, 4), tensorlib.randn(6, 2, 4)).shape
    tensorlib.Size([5, 2, 4])
    """

    __constants__ = ["norm"]

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        """The layers in turn over ``tgt`` and ``memory``; ``tgt_is_causal=None`` detects
        whether ``tgt_mask`` is the causal mask."""
        seq_len = _get_seq_len(tgt, self.layers[0].self_attn.batch_first)
        tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal, seq_len)
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """Encoder-decoder Transformer ("Attention Is All You Need"): an ``encoder``
    (``TransformerEncoder`` of ``num_encoder_layers`` layers and a final LayerNorm) and a
    ``decoder`` likewise, unless ``custom_encoder``/``custom_decoder`` are given. Every
    parameter with more than one dim starts Glorot uniform.

    >>> model = tensorlib.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1,
    ...                                  num_decoder_layers=1, dim_feedforward=16,
    ...                                  batch_first=True)
    >>> model(tensorlib.randn(2, 6, 8), tensorlib.randn(2, 5, 8)).shape
    tensorlib.Size([2, 5, 8])
    >>> tensorlib.nn.Transformer.generate_square_subsequent_mask(3)
    tensor([[0., -inf, -inf],
            [0., 0., -inf],
            [0., 0., 0.]])
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 bias=True, device=None, dtype=None):
        super().__init__()
        fk = {"device": device, "dtype": dtype}
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                      batch_first, norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(*layer_args, **fk), num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(*layer_args, **fk), num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        """Encode ``src`` ((S, N, E), batch-first (N, S, E), or (S, E)) into memory, then
        decode ``tgt`` against it; the masks go to the encoder and decoder as named."""
        is_batched = src.dim() == 3
        bdim = 0 if self.batch_first else 1
        if is_batched and src.shape[bdim] != tgt.shape[bdim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """(sz, sz) float mask: -inf above the diagonal (later positions), 0 elsewhere.

        >>> tensorlib.nn.Transformer.generate_square_subsequent_mask(2).tolist()
        [[0.0, -inf], [0.0, 0.0]]
        """
        return _generate_square_subsequent_mask(sz, device=device, dtype=dtype)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                _xavier_uniform_(p)
