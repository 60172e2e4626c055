"""Multi-head attention in functional form, PyTorch's ``F.multi_head_attention_forward``:
the in-projections, the masks (bool or additive float, 2-D or 3-D attention masks, key
padding masks), ``bias_k``/``bias_v``, the zero key/value, dropout on the weights and the
out-projection, with PyTorch's argument checks and messages.

Sequences are (L, N, E) here (sequence first); ``MultiheadAttention`` transposes
batch-first inputs before calling in.

>>> import tensorlib
>>> E, H = 4, 2
>>> x = tensorlib.ones(3, 1, E)
>>> w, b = tensorlib.eye(E).repeat(3, 1), tensorlib.zeros(3 * E)
>>> out, weights = multi_head_attention_forward(x, x, x, E, H, w, b, None, None, False, 0.0,
...                                             tensorlib.eye(E), None)
>>> out.shape, weights.shape
(tensorlib.Size([3, 1, 4]), tensorlib.Size([1, 3, 3]))
"""
import math
import warnings

import tensorlib as _t
from tensorlib.nn import functional as F

__all__ = ["multi_head_attention_forward"]


def _torch_size(shape):
    # PyTorch's messages print shapes as torch.Size([...]); they are kept word for word
    return "torch.Size([" + ", ".join(str(s) for s in shape) + "])"


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, _t.Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask (True = masked out) as the additive float mask of ``target_type`` (-inf
    where True, 0 elsewhere); a float mask is returned as it is."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype != _t.bool and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      f"Use same type for both instead.", stacklevel=3)
    if not is_float:
        mask = _t.zeros(tuple(mask.shape), dtype=target_type, device=mask.device).masked_fill_(
            mask, float("-inf"))
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the call is batched ((L, N, E) query) or not ((L, E)), checking that the
    other arguments have the matching number of dims."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 f"respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(f"For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.dim()}-D tensor "
                                 f"instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `attn_mask` to be `None`, "
                                 f"2-D or 3-D but found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to be "
                                 f"2-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 f"respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 1-D but found {key_padding_mask.dim()}-D tensor "
                                 f"instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(f"For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.dim()}-D tensor "
                                     f"instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{_torch_size(attn_mask.shape)}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _in_projection_packed(q, k, v, w, b):
    # one matmul when query, key and value are the same tensor (self-attention), two when
    # key is value (encoder-decoder attention), three otherwise
    E = q.shape[-1]
    if k is v and q is k:
        proj = F.linear(q, w, b)
        return tuple(proj.unflatten(-1, (3, E)).unbind(-2))
    if k is v:
        w_q, w_kv = w.split([E, 2 * E])
        b_q, b_kv = (None, None) if b is None else b.split([E, 2 * E])
        kv = F.linear(k, w_kv, b_kv).unflatten(-1, (2, E)).unbind(-2)
        return F.linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q, b_k, b_v):
    Eq, Ek, Ev = q.shape[-1], k.shape[-1], v.shape[-1]
    for name, t, shape in (("query weights", w_q, (Eq, Eq)), ("key weights", w_k, (Eq, Ek)),
                           ("value weights", w_v, (Eq, Ev)), ("query bias", b_q, (Eq,)),
                           ("key bias", b_k, (Eq,)), ("value bias", b_v, (Eq,))):
        if t is not None and tuple(t.shape) != shape:
            raise AssertionError(f"expecting {name} shape of {shape}, but got "
                                 f"{_torch_size(t.shape)}")
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


_C_NAMES = {_t.float16: "c10::Half", _t.bfloat16: "c10::BFloat16", _t.float32: "float",
            _t.float64: "double"}


def _check_mask_dtype(mask, q, need_weights):
    # PyTorch adds the mask in baddbmm (need_weights), which refuses a float mask of another
    # dtype than the query's, or in scaled_dot_product_attention, which also takes float32
    if mask is None or mask.dtype == q.dtype or (not need_weights and mask.dtype == _t.float32):
        return
    m, d = _C_NAMES.get(mask.dtype, str(mask.dtype)), _C_NAMES.get(q.dtype, str(q.dtype))
    if need_weights:
        raise RuntimeError(f"Input dtypes must be the same, got: input {m}, batch1: {d}, "
                           f"batch2: {d}")
    raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, "
                       f"but got attn_mask.dtype: {m} and  query.dtype: {d} instead.")


def _pad_last(t):
    # one more key column: 0 (nothing added) for the appended bias/zero key
    return _t.cat([t, _t.zeros((*t.shape[:-1], 1), dtype=t.dtype, device=t.device)], -1)


def _composite_masked_softmax(scores, mask, is_causal, safe):
    """softmax(scores + mask) of recorded ops, for what the fused kernel does not take (a
    float mask that needs a gradient, half precision)."""
    if is_causal:
        L, S = scores.shape[-2], scores.shape[-1]
        causal = _t.ones((L, S), dtype=_t.bool, device=scores.device).triu(1)
        scores = scores.masked_fill(causal, float("-inf"))
    elif mask is not None:
        scores = scores + mask
    dead = None
    if safe:
        # softmax of a row of -inf is NaN, whose backward poisons q and k: the row is
        # replaced by zeros before and its weights zeroed after (no test of whether any row
        # is dead: that would read the values back, a sync on an accelerator)
        dead = (scores == float("-inf")).all(-1, keepdim=True)
        scores = scores.masked_fill(dead, 0.0)
    weights = _t.softmax(scores, -1)
    if dead is not None:
        weights = weights.masked_fill(dead, 0.0)
    return weights


def _attend(q, k, v, mask, dropout_p, is_causal, safe):
    """softmax(q k^T / sqrt(E) + mask) v over (B, L, E) batches; returns (output, weights).
    ``safe``: a row whose every score is -inf gets zero weights (PyTorch's
    scaled_dot_product_attention) instead of NaN (its need_weights path)."""
    scores = _t.matmul(q * math.sqrt(1.0 / q.shape[-1]), k.transpose(-2, -1))
    if F._fused_softmax_applies(scores, mask):
        weights = _t._nn_masked_softmax(scores, None if is_causal else mask, 1.0, is_causal,
                                        safe)
    else:
        weights = _composite_masked_softmax(scores, mask, is_causal, safe)
    if dropout_p > 0.0:
        weights = F.dropout(weights, dropout_p, True)
    return _t.matmul(weights, v), weights


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Multi-head attention of (L, N, E) ``query`` over (S, N, kdim) ``key`` and (S, N, vdim)
    ``value`` (or unbatched (L, E), (S, kdim), (S, vdim)). Returns the (L, N, E) output and,
    with ``need_weights``, the (N, L, S) weights averaged over heads (``average_attn_weights``)
    or (N, num_heads, L, S) per head; else None. Masks: bool (True = not attended) or float
    (added to the scores); ``attn_mask`` (L, S) or (N * num_heads, L, S), ``key_padding_mask``
    (N, S). composite: projections, bmm, softmax, bmm, projection.

    >>> import tensorlib
    >>> x = tensorlib.ones(2, 4)
    >>> w = tensorlib.eye(4).repeat(3, 1)
    >>> out, _ = multi_head_attention_forward(x, x, x, 4, 1, w, None, None, None, False, 0.0,
    ...                                       tensorlib.eye(4), None, need_weights=False)
    >>> out.tolist()
    [[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]]
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        # the hint stands in for the mask: the causal triangle is applied directly
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {_torch_size(key.shape[:2])} "
                                 f"do not match value's {_torch_size(value.shape[:2])}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {_torch_size(key.shape)} does not match value shape "
                             f"{_torch_size(value.shape)}")

    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    else:
        for name, w in (("q_proj_weight", q_proj_weight), ("k_proj_weight", k_proj_weight),
                        ("v_proj_weight", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name} is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, b_q, b_k, b_v)

    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is "
                                   f"{_torch_size(attn_mask.shape)}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is "
                                   f"{_torch_size(attn_mask.shape)}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = _t.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _t.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    # heads become batch entries: (L, N, H * D) -> (N * H, L, D)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k, v = [_heads_first(t, static, bsz, num_heads, head_dim, name)
            for t, static, name in ((k, static_k, "static_k"), (v, static_v, "static_v"))]
    if add_zero_attn:
        zero = _t.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k = _t.cat([k, zero], 1)
        v = _t.cat([v, zero.to(v.dtype)], 1)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.shape[1]

    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(
            bsz, num_heads, 1, src_len).reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0

    if need_weights and is_causal and attn_mask is None:
        # PyTorch's message, word for word (its own unimplemented case)
        raise AssertionError("FIXME: is_causal not implemented for need_weights")
    _check_mask_dtype(attn_mask, q, need_weights)
    out, weights = _attend(q, k, v, attn_mask, dropout_p, is_causal and attn_mask is None,
                           safe=not need_weights)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if not is_batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(1)
    if not is_batched:
        weights = weights.squeeze(0)
    return out, weights


def _heads_first(t, static, bsz, num_heads, head_dim, name):
    if static is None:
        return t.reshape(t.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if static.shape[0] != bsz * num_heads:
        raise AssertionError(f"expecting {name}.size(0) of {bsz * num_heads}, but got "
                             f"{static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got "
                             f"{static.shape[2]}")
    return static
