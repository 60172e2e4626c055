"""The fused masked softmax of attention (_nn_masked_softmax): scaled_dot_product_attention
and MultiheadAttention against torch with every mask kind (bool and float, broadcast key
padding, causal with L != S, rows with every key masked), gradients, gradcheck and
gradgradcheck, bad masks."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlib
import tensorlib.nn.functional as F
from tensorlib.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-10, atol=1e-12)}


def _mask(kind, N, H, L, S, rng, dtype):
    if kind == "none" or kind == "causal":
        return None
    if kind == "bool_ls":
        m = rng.random((L, S)) > 0.3
        m[0] = False                   # a row with every key masked
        return m
    if kind == "bool_keypad":
        return rng.random((N, 1, 1, S)) > 0.4
    if kind == "float_full":
        return (rng.standard_normal((N, H, L, S)) * 2).astype(dtype)
    raise ValueError(kind)


@settings(max_examples=30, deadline=None)
@given(N=st.integers(1, 3), H=st.integers(1, 3), L=st.integers(1, 5), S=st.integers(1, 6),
       E=st.integers(1, 4), kind=st.sampled_from(["none", "causal", "bool_ls", "bool_keypad",
                                                   "float_full"]),
       dtype=st.sampled_from([np.float32, np.float64]), scale=st.sampled_from([None, 0.3]),
       seed=st.integers(0, 2**16))
def test_sdpa_matches_torch(N, H, L, S, E, kind, dtype, scale, seed):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((N, H, n, E)).astype(dtype) for n in (L, S, S))
    mask = _mask(kind, N, H, L, S, rng, dtype)
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    ref = torch.nn.functional.scaled_dot_product_attention(
        tq, tk, tv, attn_mask=None if mask is None else torch.tensor(mask),
        is_causal=kind == "causal", scale=scale)
    g = rng.standard_normal(tuple(ref.shape)).astype(dtype)
    ref.backward(torch.tensor(g))
    oq, ok, ov = (tensorlib.tensor(a, requires_grad=True) for a in (q, k, v))
    out = F.scaled_dot_product_attention(
        oq, ok, ov, attn_mask=None if mask is None else tensorlib.tensor(mask),
        is_causal=kind == "causal", scale=scale)
    out.backward(tensorlib.tensor(g))
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), **TOL[dtype])
    for ours, theirs in ((oq, tq), (ok, tk), (ov, tv)):
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), **TOL[dtype])


def test_sdpa_uses_the_fused_kernel_and_keeps_only_its_output():
    q = tensorlib.randn(2, 4, 8, 16, requires_grad=True)
    out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    names, seen = set(), set()
    stack = [out.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        names.add(type(fn).__name__)
        stack.extend(f for f, _ in fn.next_functions)
    assert "NnMaskedSoftmaxBackward0" in names
    assert "SoftmaxBackward0" not in names and "MaskedFillBackward0" not in names


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("masks", ["key_padding", "attn_bool", "attn_float", "causal"])
def test_multihead_attention_matches_torch(need_weights, masks):
    torch.manual_seed(0)
    ref = torch.nn.MultiheadAttention(8, 2, batch_first=True, dtype=torch.float64)
    ours = tensorlib.nn.MultiheadAttention(8, 2, batch_first=True, dtype=tensorlib.float64)
    ours.load_state_dict({k: tensorlib.tensor(v.detach().numpy())
                          for k, v in ref.state_dict().items()})
    x = torch.randn(3, 5, 8, dtype=torch.float64)
    kw_t, kw_o = {}, {}
    if masks == "key_padding":
        kp = torch.zeros(3, 5, dtype=torch.bool)
        kp[1, 3:] = True
        kw_t["key_padding_mask"], kw_o["key_padding_mask"] = kp, tensorlib.tensor(kp.numpy())
    elif masks == "attn_bool":
        am = torch.rand(5, 5) > 0.5
        am.fill_diagonal_(False)
        kw_t["attn_mask"], kw_o["attn_mask"] = am, tensorlib.tensor(am.numpy())
    elif masks == "attn_float":
        am = torch.randn(5, 5, dtype=torch.float64)
        kw_t["attn_mask"], kw_o["attn_mask"] = am, tensorlib.tensor(am.numpy())
    else:
        am = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
        kw_t.update(attn_mask=am, is_causal=True)
        kw_o.update(attn_mask=tensorlib.tensor(am.numpy()), is_causal=True)
    xt = x.clone().requires_grad_()
    xo = tensorlib.tensor(x.numpy(), requires_grad=True)
    out_t, w_t = ref(xt, xt, xt, need_weights=need_weights, **kw_t)
    out_o, w_o = ours(xo, xo, xo, need_weights=need_weights, **kw_o)
    out_t.sum().backward()
    out_o.sum().backward()
    np.testing.assert_allclose(out_o.detach().numpy(), out_t.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-12)
    if need_weights:
        np.testing.assert_allclose(w_o.detach().numpy(), w_t.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("mask_kind", ["none", "bool", "float"])
def test_gradcheck_and_gradgradcheck(causal, mask_kind):
    rng = np.random.default_rng(1)
    x = tensorlib.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    mask = None
    if mask_kind == "bool" and not causal:
        mask = tensorlib.tensor(rng.random((3, 4)) > 0.3)
    elif mask_kind == "float" and not causal:
        mask = tensorlib.tensor(rng.standard_normal((2, 1, 4)))

    def f(s):
        return tensorlib._nn_masked_softmax(s, mask, 0.7, causal, True)

    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


def test_dead_rows_zero_or_nan_as_asked():
    x = tensorlib.randn(2, 3)
    mask = tensorlib.tensor([[False, False, False], [False, True, False]])   # True: kept
    zero = tensorlib._nn_masked_softmax(x, mask, 1.0, False, True)
    nan = tensorlib._nn_masked_softmax(x, mask, 1.0, False, False)
    assert zero[0].tolist() == [0.0, 0.0, 0.0]
    assert all(np.isnan(nan[0].numpy()))
    assert zero[1].tolist() == [0.0, 1.0, 0.0]


def test_strided_scores_and_masks():
    rng = np.random.default_rng(3)
    s = rng.standard_normal((4, 6, 5))
    m = rng.random((6, 5)) > 0.5
    ours = tensorlib._nn_masked_softmax(tensorlib.tensor(s).transpose(1, 2),
                                        tensorlib.tensor(m).t(), 1.0, False, True)
    st_ = torch.tensor(s).transpose(1, 2).masked_fill(~torch.tensor(m).t(), float("-inf"))
    ref = torch.softmax(st_, -1).nan_to_num(0.0)
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-12)


def test_bad_masks():
    x = tensorlib.randn(2, 3, 4)
    with pytest.raises(RuntimeError, match="The expanded size of the tensor"):
        tensorlib._nn_masked_softmax(x, tensorlib.ones(3, 5, dtype=tensorlib.bool), 1.0,
                                     False, True)
    with pytest.raises(RuntimeError, match="Expected attn_mask dtype to be bool or to match"):
        tensorlib._nn_masked_softmax(x, tensorlib.ones(3, 4, dtype=tensorlib.int64), 1.0,
                                     False, True)
    with pytest.raises(RuntimeError, match="Expected attn_mask dtype to be bool or float"):
        F.scaled_dot_product_attention(x, x, x, attn_mask=tensorlib.ones(3, 3,
                                                                         dtype=tensorlib.int64))
    with pytest.raises(RuntimeError, match="causal mask needs scores of at least 2"):
        tensorlib._nn_masked_softmax(tensorlib.randn(4), None, 1.0, True, True)


def test_float_mask_needing_a_gradient_gets_one_through_the_composite_path():
    q = torch.randn(1, 3, 2, dtype=torch.float64)
    m = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=m).sum().backward()
    mo = tensorlib.tensor(m.detach().numpy(), requires_grad=True)
    qo = tensorlib.tensor(q.numpy())
    F.scaled_dot_product_attention(qo, qo, qo, attn_mask=mo).sum().backward()
    np.testing.assert_allclose(mo.grad.numpy(), m.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_thread_count_does_not_change_results():
    x = tensorlib.randn(64, 128, 128)
    old = tensorlib.get_num_threads()
    try:
        tensorlib.set_num_threads(1)
        a = tensorlib._nn_masked_softmax(x, None, 0.5, True, True)
        tensorlib.set_num_threads(2)
        b = tensorlib._nn_masked_softmax(x, None, 0.5, True, True)
    finally:
        tensorlib.set_num_threads(old)
    assert tensorlib.equal(a, b)
