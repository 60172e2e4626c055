"""tensorlib.onnx.export: the exported models run in onnxruntime (an independent
implementation of every op) and give tensorlib's outputs, for each layer family; dynamic axes,
opsets, names, targets and errors."""
import io
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import tensorlib
import tensorlib.nn as nn
import tensorlib.onnx as tonnx

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _flat(x, out):
    if isinstance(x, (list, tuple)):
        for v in x:
            _flat(v, out)
    elif x is not None:
        out.append(x)
    return out


def export_and_run(model, args, run_args=None, rtol=1e-5, atol=1e-5, **kw):
    """Export ``model(*args)``, run the ONNX model on ``run_args`` (default ``args``) in
    onnxruntime and compare every output with tensorlib's on the same inputs."""
    args = args if isinstance(args, tuple) else (args,)
    run_args = args if run_args is None else run_args
    buf = io.BytesIO()
    proto = tonnx.export(model, args, buf, **kw)
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    feeds = {i.name: a.numpy() for i, a in zip(sess.get_inputs(), run_args)}
    got = sess.run(None, feeds)
    was_training = model.training
    model.eval()            # the export traced the eval forward
    with tensorlib.no_grad():
        want = _flat(model(*run_args), [])
    model.train(was_training)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == tuple(w.shape)
        np.testing.assert_allclose(g, w.numpy(), rtol=rtol, atol=atol)
    return proto, sess


@pytest.fixture(autouse=True)
def _seed():
    tensorlib.manual_seed(0)


def _op_types(proto):
    return [n.op_type for n in proto.graph.node]


# ---- layer families -----------------------------------------------------------------------

def test_linear_and_mlp():
    export_and_run(nn.Linear(4, 3), tensorlib.randn(2, 4))
    export_and_run(nn.Linear(4, 3, bias=False), tensorlib.randn(2, 4))
    mlp = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 8), nn.Tanh(),
                        nn.Linear(8, 2))
    proto, _ = export_and_run(mlp, tensorlib.randn(5, 6))
    # the weights are initializers, not inputs
    assert [i.name for i in proto.graph.input] == ["input"]
    assert "Gemm" in _op_types(proto)
    # initializers keep the parameters' names (a folded transpose is named after its source)
    inits = sorted(i.name.rsplit("_", 1)[0] for i in proto.graph.initializer)
    assert inits == ["0.bias", "0.weight_t", "2.bias", "2.weight_t", "4.bias", "4.weight_t"]
    # a 3-d input goes through the flattened product
    export_and_run(nn.Linear(4, 3), tensorlib.randn(2, 5, 4))


_ACTS = [nn.ReLU, nn.GELU, nn.Tanh, nn.Sigmoid, nn.SiLU, nn.ELU, nn.LeakyReLU, nn.Softplus]


@settings(max_examples=10)
@given(widths=st.lists(st.integers(1, 9), min_size=2, max_size=4),
       acts=st.lists(st.integers(0, len(_ACTS) - 1), min_size=3, max_size=3),
       batch=st.integers(1, 4), run_batch=st.integers(1, 9), lead=st.booleans())
def test_random_mlps_with_dynamic_batch(widths, acts, batch, run_batch, lead):
    layers = []
    for i in range(len(widths) - 1):
        layers += [nn.Linear(widths[i], widths[i + 1]), _ACTS[acts[i % 3]]()]
    mlp = nn.Sequential(*layers)
    shape = (batch, 2, widths[0]) if lead else (batch, widths[0])
    run = (run_batch, 2, widths[0]) if lead else (run_batch, widths[0])
    export_and_run(mlp, tensorlib.randn(*shape), run_args=(tensorlib.randn(*run),),
                   dynamic_axes={"input": {0: "batch"}})


def test_conv_pool_batchnorm():
    bn = nn.BatchNorm2d(4)
    with tensorlib.no_grad():
        bn.running_mean.copy_(tensorlib.randn(4))
        bn.running_var.copy_(tensorlib.rand(4) + 0.5)
        bn.weight.copy_(tensorlib.randn(4))
        bn.bias.copy_(tensorlib.randn(4))
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), bn, nn.ReLU(),
                          nn.MaxPool2d(2), nn.Conv2d(4, 4, 3, stride=2, dilation=1, groups=2),
                          nn.AvgPool2d(2, ceil_mode=True), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(4, 2))
    model.train()
    x = tensorlib.randn(2, 3, 16, 16)
    proto, _ = export_and_run(model, x)
    # exported in eval mode, and the model gets its training mode back
    assert model.training and bn.training
    types = _op_types(proto)
    for op in ("Conv", "BatchNormalization", "MaxPool", "AveragePool", "GlobalAveragePool"):
        assert op in types


def test_one_d_layers_and_other_norms():
    model = nn.Sequential(nn.Conv1d(2, 4, 3, padding=1), nn.BatchNorm1d(4), nn.ReLU(),
                          nn.MaxPool1d(2), nn.ConvTranspose1d(4, 2, 3, stride=2),
                          nn.AdaptiveAvgPool1d(1), nn.Flatten())
    export_and_run(model, tensorlib.randn(3, 2, 9), dynamic_axes={"input": {0: "n"}},
                   run_args=(tensorlib.randn(5, 2, 9),))
    export_and_run(nn.InstanceNorm2d(3, affine=True), tensorlib.randn(2, 3, 4, 4))
    export_and_run(nn.RMSNorm(4), tensorlib.randn(2, 4))
    export_and_run(nn.Sequential(nn.Upsample(scale_factor=2), nn.PixelShuffle(2)),
                   tensorlib.randn(1, 4, 3, 3))


def test_pooling_variants():
    class Pools(nn.Module):
        def forward(self, x):
            a = tensorlib.nn.functional.max_pool2d(x, 3, stride=2, padding=1, dilation=1)
            b = tensorlib.nn.functional.avg_pool2d(x, 2, count_include_pad=False, padding=1)
            c = tensorlib.nn.functional.adaptive_max_pool2d(x, (2, 2))
            d = tensorlib.nn.functional.conv_transpose2d(x, tensorlib.ones(3, 2, 2, 2), stride=2)
            return a, b, c, d
    export_and_run(Pools(), tensorlib.randn(1, 3, 8, 8))


@settings(max_examples=15)
@given(k=st.integers(1, 3), stride=st.integers(1, 3), pad=st.integers(0, 1),
       dil=st.integers(1, 2), pk=st.integers(1, 3), ps=st.integers(1, 3),
       ceil=st.booleans(), incl=st.booleans(), hw=st.integers(7, 11), n=st.integers(1, 3))
def test_conv_pool_attributes(k, stride, pad, dil, pk, ps, ceil, incl, hw, n):
    """Kernel, stride, padding, dilation and ceil_mode of conv and pooling map one to one."""
    pp = min(pad, pk // 2)
    F = tensorlib.nn.functional
    conv = nn.Conv2d(2, 3, k, stride=stride, padding=pad, dilation=dil)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = conv

        def forward(self, x):
            y = self.conv(x)
            return (F.max_pool2d(y, pk, ps, pp, ceil_mode=ceil),
                    F.avg_pool2d(y, pk, ps, pp, ceil_mode=ceil, count_include_pad=incl))
    x = tensorlib.randn(n, 2, hw, hw)
    assume((hw + 2 * pad - dil * (k - 1) - 1) // stride + 1 >= pk)    # the window fits
    export_and_run(Net(), x, dynamic_axes={"input": {0: "n"}},
                   run_args=(tensorlib.randn(n + 2, 2, hw, hw),))


def test_layer_norm_and_group_norm():
    export_and_run(nn.LayerNorm(6), tensorlib.randn(3, 4, 6))
    export_and_run(nn.LayerNorm((4, 6), elementwise_affine=False), tensorlib.randn(3, 4, 6))
    gn = nn.GroupNorm(2, 4)
    with tensorlib.no_grad():
        gn.weight.copy_(tensorlib.randn(4))
    export_and_run(gn, tensorlib.randn(2, 4, 3, 3), dynamic_axes={"input": {0: "n"}},
                   run_args=(tensorlib.randn(5, 4, 3, 3),))
    # opset 13 has no LayerNormalization: it is spelt out
    proto, _ = export_and_run(nn.LayerNorm(6), tensorlib.randn(3, 6), opset_version=13)
    assert "LayerNormalization" not in _op_types(proto)


@pytest.mark.parametrize("act", [
    nn.ReLU(), nn.GELU(), nn.GELU(approximate="tanh"), nn.Sigmoid(), nn.Tanh(),
    nn.Softmax(dim=-1), nn.LogSoftmax(dim=1), nn.SiLU(), nn.LeakyReLU(0.2), nn.ELU(0.7),
    nn.Softplus(beta=2.0, threshold=3.0), nn.Hardtanh(-0.5, 0.25), nn.ReLU6()],
    ids=lambda m: type(m).__name__)
def test_activations(act):
    x = tensorlib.randn(4, 5) * 3
    export_and_run(act, x)


def test_elementwise_and_reductions():
    class F(nn.Module):
        def forward(self, x, y):
            a = (x * 2 - y / 3 + 1).exp().log() + x.abs().sqrt() * y.rsqrt().clamp(max=2.0)
            b = tensorlib.where(x > y, x, y - 1).sum(1, keepdim=True) + x.mean()
            c = x.amax(0) + x.max(1).values.sum() + x.argmax(1).float().sum()
            d = x.var(1, keepdim=True) + x.std() + (x ** 2).pow(0.5).square()
            e = x.masked_fill(x < 0, 0.5).transpose(0, 1).reshape(-1)
            f = tensorlib.cat([x, y], 1).unsqueeze(0).permute(2, 0, 1).flatten(1)
            g = tensorlib.stack([x, y]).sum(0)[1:, ::2] + x[0, ::2] + x[None, -1, 1:3]
            return a, b, c, d, e, f, g
    x = tensorlib.randn(3, 4)
    y = tensorlib.rand(3, 4) + 0.5
    export_and_run(F(), (x, y), rtol=1e-4)


def test_norms_and_more_activations():
    class More(nn.Module):
        def forward(self, x, y):
            return (tensorlib.nn.functional.cosine_similarity(x, y), x.norm(), x.norm(1, dim=1),
                    tensorlib.nn.functional.normalize(x, dim=1), x.clamp(y, y + 1),
                    x.clamp_min(0.5), x.clamp(max=y[0]))
    export_and_run(More(), (tensorlib.randn(3, 4), tensorlib.randn(3, 4)))
    for act in (nn.PReLU(), nn.Hardswish(), nn.Hardsigmoid(), nn.Mish(), nn.GLU(),
                nn.LogSigmoid(), nn.SELU(), nn.CELU(), nn.Softsign(), nn.Threshold(0.1, 2.0)):
        export_and_run(act, tensorlib.randn(3, 4) * 3)


_MORE = {
    "cumsum": lambda x, y: (x.cumsum(1), x.cumsum(0, dtype=tensorlib.float64)),
    "flip": lambda x, y: (x.flip(0), x.flip(0, 1)),
    "trilu": lambda x, y: (x.tril(), x.triu(1), x.tril(-1)),
    "gather": lambda x, y: x.gather(1, tensorlib.tensor([[0, 2], [1, 1], [3, 0]])),
    "logs": lambda x, y: (y.log2(), y.log10(), x.exp2(), x.erfc()),
    "trunc": lambda x, y: ((x * 3).trunc(), (x * 3).frac()),
    "finite": lambda x, y: (x.isinf(), x.isfinite(), x.isnan()),
    "products": lambda x, y: (x.mv(y[0]), y[0].dot(y[1]), y[0].outer(y[1]),
                              tensorlib.addmv(y[:, 0], x, y[0], beta=0.5, alpha=2),
                              tensorlib.einsum("ij,kj->ik", x, y)),
    "reduce": lambda x, y: (y.prod(1), y.prod(), x.logsumexp(1), x.logsumexp((0, 1))),
    "arith": lambda x, y: (1 - x, tensorlib.rsub(x, y, alpha=2), x.lerp(y, 0.25),
                           x.fmod(0.3), x.floor_divide(0.3), x.lerp(y, y)),
    "sort": lambda x, y: (x.topk(2, 1), x.topk(1, 0, largest=False), x.sort(1),
                          x.sort(0, descending=True), x.argsort(1)),
    "shape": lambda x, y: (x.broadcast_to((2, 3, 4)), x.tile((2,)), x.movedim(0, 1),
                           x.unsqueeze(0).movedim((0, 1), (2, 0))),
    "not": lambda x, y: ((x > 0).bitwise_not(), ~(x > 0)),
    "take": lambda x, y: (x[tensorlib.tensor([2, 0, 2])], x[:, tensorlib.tensor([[1], [3]])],
                          x[..., [0, 3]], y[tensorlib.tensor(1)]),
    "scatter": lambda x, y: (
        x.scatter(1, tensorlib.tensor([[0, 2], [1, 3], [3, 0]]), y[:, :2]),
        x.scatter(0, tensorlib.tensor([[2, 0, 1, 1]]), 7.0),
        x.scatter_add(1, tensorlib.tensor([[0, 0], [1, 1], [3, 3]]), y[:, :2]),
        x.scatter_reduce(1, tensorlib.tensor([[0, 0], [1, 1], [3, 3]]), y[:, :2], "amax"),
        x.scatter_reduce(1, tensorlib.tensor([[0, 0], [1, 1], [3, 3]]), y[:, :2], "prod",
                         include_self=False),
        x.index_add(0, tensorlib.tensor([2, 0, 2]), y, alpha=0.5),
        x.index_copy(1, tensorlib.tensor([3, 1]), y[:, :2])),
}


@pytest.mark.parametrize("name", sorted(_MORE))
def test_more_ops(name):
    class M(nn.Module):
        def forward(self, x, y):
            return _MORE[name](x, y)
    x = tensorlib.randn(3, 4)
    y = tensorlib.rand(3, 4) + 0.5
    export_and_run(M(), (x, y), rtol=1e-5, atol=1e-5, opset_version=18)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode):
    bag = nn.EmbeddingBag(10, 3, mode=mode)
    export_and_run(bag, tensorlib.tensor([[1, 2, 2], [3, 4, 9]]), opset_version=18)


def test_embedding():
    emb = nn.Embedding(10, 4)
    idx = tensorlib.tensor([[1, 2, 9], [3, 4, 0]])
    export_and_run(emb, idx, dynamic_axes={"input": {0: "batch", 1: "seq"}},
                   run_args=(tensorlib.tensor([[5, 6], [7, 8], [0, 1], [2, 3]]),))
    proto, _ = export_and_run(nn.Embedding(10, 4, padding_idx=0), idx)
    assert "Gather" in _op_types(proto)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("layers,bidir,batch_first", [(1, False, False), (2, True, False),
                                                      (2, False, True)])
def test_recurrent(kind, layers, bidir, batch_first):
    m = getattr(nn, kind)(4, 5, num_layers=layers, bidirectional=bidir, batch_first=batch_first)
    x = tensorlib.randn(3, 6, 4) if batch_first else tensorlib.randn(6, 3, 4)
    axis = 0 if batch_first else 1
    x2 = tensorlib.randn(5, 6, 4) if batch_first else tensorlib.randn(6, 5, 4)
    proto, _ = export_and_run(m, x, run_args=(x2,), dynamic_axes={"input": {axis: "batch"}})
    assert {"LSTM": "LSTM", "GRU": "GRU", "RNN": "RNN"}[kind] in _op_types(proto)


def test_lstm_with_initial_state():
    m = nn.LSTM(3, 4, num_layers=2)
    x = tensorlib.randn(5, 2, 3)
    h0, c0 = tensorlib.randn(2, 2, 4), tensorlib.randn(2, 2, 4)

    class Wrap(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = m

        def forward(self, x, h, c):
            return self.lstm(x, (h, c))
    export_and_run(Wrap(), (x, h0, c0), input_names=["x", "h0", "c0"])
    gru = nn.GRU(3, 4)
    export_and_run(gru, (x, tensorlib.randn(1, 2, 4)))


def test_recurrent_cells():
    """LSTMCell/GRUCell run the fused gate ops, spelt out in elementwise ONNX."""
    class Cells(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm, self.gru = nn.LSTMCell(3, 4), nn.GRUCell(3, 4)

        def forward(self, x, h, c):
            h1, c1 = self.lstm(x, (h, c))
            return h1, c1, self.gru(x, h1), self.gru(x)
    args = (tensorlib.randn(2, 3), tensorlib.randn(2, 4), tensorlib.randn(2, 4))
    grown = (tensorlib.randn(5, 3), tensorlib.randn(5, 4), tensorlib.randn(5, 4))
    export_and_run(Cells(), args, run_args=grown, input_names=["x", "h", "c"],
                   dynamic_axes={"x": {0: "b"}, "h": {0: "b"}, "c": {0: "b"}})


def test_rnn_subclass_and_unbatched():
    class MyLSTM(nn.LSTM):
        pass
    m = MyLSTM(3, 4)
    export_and_run(m, tensorlib.randn(5, 2, 3))
    with pytest.raises(tonnx.UnsupportedOperatorError, match="proj_size"):
        tonnx.export(nn.LSTM(3, 4, proj_size=2), tensorlib.randn(5, 2, 3), io.BytesIO())
    # an unbatched sequence, with and without a state
    export_and_run(m, tensorlib.randn(5, 3))
    export_and_run(nn.GRU(3, 4, num_layers=2, bidirectional=True, batch_first=True),
                   (tensorlib.randn(5, 3), tensorlib.randn(4, 4)))


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_encoder_layer(batch_first):
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, batch_first=batch_first)
    x = tensorlib.randn(3, 5, 8) if batch_first else tensorlib.randn(5, 3, 8)
    x2 = tensorlib.randn(6, 5, 8) if batch_first else tensorlib.randn(5, 6, 8)
    axis = 0 if batch_first else 1
    export_and_run(layer, x, run_args=(x2,), dynamic_axes={"input": {axis: "batch"}},
                   rtol=1e-4, atol=1e-5)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, norm_first=True,
                                                           activation="gelu"), 2,
                                enable_nested_tensor=False)
    export_and_run(enc, tensorlib.randn(4, 2, 8), rtol=1e-4)


def test_text_classifier_dynamic_batch_and_length():
    """Embedding, a two-layer encoder with a key padding mask, mean pooling and a head, with
    batch and sequence length both dynamic."""
    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(20, 8)
            layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
            self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.head = nn.Linear(8, 3)

        def forward(self, ids, pad):
            return self.head(self.enc(self.emb(ids), src_key_padding_mask=pad).mean(1))
    ids = tensorlib.randint(0, 20, (2, 5))
    pad = tensorlib.zeros(2, 5, dtype=tensorlib.bool)
    pad[0, 3:] = True
    ids2 = tensorlib.randint(0, 20, (4, 7))
    pad2 = tensorlib.zeros(4, 7, dtype=tensorlib.bool)
    pad2[1, 2:] = True
    axes = {0: "batch", 1: "length"}
    export_and_run(Classifier(), (ids, pad), run_args=(ids2, pad2), rtol=1e-4,
                   input_names=["ids", "pad"], dynamic_axes={"ids": axes, "pad": axes})


def test_transformer_decoder_and_full_model():
    dec = nn.TransformerDecoderLayer(8, 2, 16, batch_first=True)
    tgt, mem = tensorlib.randn(2, 5, 8), tensorlib.randn(2, 6, 8)
    mask = nn.Transformer.generate_square_subsequent_mask(5)

    class Dec(nn.Module):
        def __init__(self):
            super().__init__()
            self.dec = dec

        def forward(self, tgt, mem):
            return self.dec(tgt, mem, tgt_mask=mask)
    export_and_run(Dec(), (tgt, mem), rtol=1e-4, input_names=["tgt", "mem"],
                   dynamic_axes={"tgt": {0: "b"}, "mem": {0: "b"}},
                   run_args=(tensorlib.randn(3, 5, 8), tensorlib.randn(3, 6, 8)))
    model = nn.Transformer(8, 2, 1, 1, 16, batch_first=True)
    export_and_run(model, (tensorlib.randn(2, 5, 8), tensorlib.randn(2, 4, 8)), rtol=1e-4)


def test_multihead_attention():
    mha = nn.MultiheadAttention(8, 2)
    q, k, v = tensorlib.randn(4, 3, 8), tensorlib.randn(6, 3, 8), tensorlib.randn(6, 3, 8)
    proto, sess = export_and_run(mha, (q, k, v), input_names=["q", "k", "v"],
                                 output_names=["out", "weights"], rtol=1e-4)
    assert [o.name for o in sess.get_outputs()] == ["out", "weights"]
    mask = tensorlib.triu(tensorlib.ones(4, 4, dtype=tensorlib.bool), 1)

    class Causal(nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = nn.MultiheadAttention(8, 2, batch_first=True)

        def forward(self, x):
            return self.mha(x, x, x, attn_mask=mask, need_weights=False)[0]
    export_and_run(Causal(), tensorlib.randn(2, 4, 8), rtol=1e-4,
                   dynamic_axes={"input": {0: "batch"}},
                   run_args=(tensorlib.randn(3, 4, 8),))


# ---- the exporter's interface -------------------------------------------------------------

def test_dynamic_axes_batch_varies():
    mlp = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 3), nn.Softmax(-1))
    buf = io.BytesIO()
    proto = tonnx.export(mlp, tensorlib.randn(2, 4), buf, input_names=["x"],
                         output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": [0]})
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert proto.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "y_dynamic_axes_1"
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    for n in (1, 2, 7, 32):
        x = tensorlib.randn(n, 4)
        (got,) = sess.run(None, {"x": x.numpy()})
        with tensorlib.no_grad():
            np.testing.assert_allclose(got, mlp(x).numpy(), rtol=1e-5, atol=1e-6)
    # without dynamic axes the batch size is fixed
    buf = io.BytesIO()
    tonnx.export(mlp, tensorlib.randn(2, 4), buf)
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception):
        sess.run(None, {"input": np.zeros((3, 4), np.float32)})


def test_float64_and_integer_inputs():
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh()).double()
    proto, _ = export_and_run(m, tensorlib.randn(2, 3, dtype=tensorlib.float64), rtol=1e-12,
                              atol=1e-12)
    assert proto.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.DOUBLE

    class Ints(nn.Module):
        def forward(self, i):
            return (i * 3 + 1) % 5, i > 2, (i.float() / 2).sum(1)
    export_and_run(Ints(), tensorlib.tensor([[1, 2, 3], [4, 5, 6]]))


def test_is_in_onnx_export():
    seen = []

    class Probe(nn.Module):
        def forward(self, x):
            seen.append(tonnx.is_in_onnx_export())
            return x + 1
    export_and_run(Probe(), tensorlib.randn(2))
    assert seen == [True, False] and not tonnx.is_in_onnx_export()


def test_tracing_is_per_thread():
    """Ops another thread runs while a model is traced are not part of the model."""
    import threading
    stop = threading.Event()

    def busy():
        y = tensorlib.ones(3)
        while not stop.is_set():
            y = y.cumsum(0) * 0       # cumsum has no ONNX translation
    th = threading.Thread(target=busy)
    th.start()
    try:
        for _ in range(20):
            export_and_run(nn.Linear(3, 2), tensorlib.randn(2, 3))
    finally:
        stop.set()
        th.join()


def test_numbers_that_follow_a_dynamic_axis():
    """A Python number computed from a dynamic size would be fixed at the traced size: it is
    refused, except where the exporter computes it at run time (shapes of views, fills,
    slices to the end)."""
    class ToEnd(nn.Module):
        def forward(self, x):
            n = x.shape[0]
            return x[:n, 1:] + x[-1, 1:], x.reshape(n * 2, -1).view(n, 2, -1).flatten(1)
    export_and_run(ToEnd(), tensorlib.randn(3, 4), dynamic_axes={"input": {0: "b"}},
                   run_args=(tensorlib.randn(6, 4),))

    class Short(nn.Module):
        def forward(self, x):
            return x[: x.shape[0] - 1]

    class Narrow(nn.Module):
        def forward(self, x):
            return x.narrow(0, 0, x.shape[0] - 1)
    with pytest.raises(tonnx.OnnxExporterError, match="follows a dynamic axis"):
        tonnx.export(Short(), tensorlib.randn(3, 4), io.BytesIO(), dynamic_axes={"input": [0]})
    with pytest.raises(tonnx.OnnxExporterError, match="'length' of 'narrow'"):
        tonnx.export(Narrow(), tensorlib.randn(3, 4), io.BytesIO(), dynamic_axes={"input": [0]})
    # without dynamic axes both are plain constants
    export_and_run(Short(), tensorlib.randn(3, 4))
    export_and_run(Narrow(), tensorlib.randn(3, 4))


def test_plain_function_and_non_tensor_args():
    """A function can be exported too; tensors it closes over are constants, and non-tensor
    arguments are fixed in the graph."""
    w = tensorlib.randn(4, 2)

    def fn(x, scale, y):
        return (x @ w) * scale + y
    x, y = tensorlib.randn(3, 4), tensorlib.randn(3, 2)
    buf = io.BytesIO()
    proto = tonnx.export(fn, (x, 2.5, y), buf, input_names=["x", "y"])
    assert [i.name for i in proto.graph.input] == ["x", "y"]
    sess = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    (got,) = sess.run(None, {"x": x.numpy(), "y": y.numpy()})
    np.testing.assert_allclose(got, fn(x, 2.5, y).numpy(), rtol=1e-6)
    # every initializer is used by a node
    used = {i for n in proto.graph.node for i in n.input}
    assert all(init.name in used for init in proto.graph.initializer)


def test_file_and_bytesio_targets(tmp_path):
    m = nn.Linear(3, 2)
    x = tensorlib.randn(4, 3)
    path = tmp_path / "m.onnx"
    tonnx.export(m, x, str(path))
    tonnx.export(m, x, tmp_path / "p.onnx")          # a PathLike too
    buf = io.BytesIO()
    tonnx.export(m, x, buf)
    assert path.read_bytes() == buf.getvalue() == (tmp_path / "p.onnx").read_bytes()
    loaded = onnx.load(str(path))
    onnx.checker.check_model(loaded)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    with tensorlib.no_grad():
        np.testing.assert_allclose(sess.run(None, {"input": x.numpy()})[0], m(x).numpy(),
                                   rtol=1e-6)
    with pytest.raises(TypeError, match="path or a binary file"):
        tonnx.export(m, x, 3)


def test_input_output_names():
    class Two(nn.Module):
        def forward(self, a, b):
            return a + b, a * b
    proto, sess = export_and_run(Two(), (tensorlib.randn(2), tensorlib.randn(2)),
                                 input_names=["a", "b"], output_names=["s", "p"])
    assert [i.name for i in sess.get_inputs()] == ["a", "b"]
    assert [o.name for o in sess.get_outputs()] == ["s", "p"]
    # default names
    proto, sess = export_and_run(Two(), (tensorlib.randn(2), tensorlib.randn(2)))
    assert [i.name for i in sess.get_inputs()] == ["input_0", "input_1"]
    assert [o.name for o in sess.get_outputs()] == ["output_0", "output_1"]
    for axes in ({"input_0": [2]}, {"output_1": {-2: "n"}}):
        with pytest.raises(ValueError, match="out of range"):
            tonnx.export(Two(), (tensorlib.randn(2), tensorlib.randn(2)), io.BytesIO(),
                         dynamic_axes=axes)
    with pytest.raises(ValueError, match="not one of the input or output names"):
        tonnx.export(Two(), (tensorlib.randn(2), tensorlib.randn(2)), io.BytesIO(),
                     dynamic_axes={"nope": [0]})


@pytest.mark.parametrize("opset", [13, 17, 18, 20])
def test_opset_version_honoured(opset):
    m = nn.Sequential(nn.LayerNorm(4), nn.GELU(), nn.Linear(4, 2))
    x = tensorlib.randn(3, 4)
    proto, _ = export_and_run(m, x, opset_version=opset)
    assert [o.version for o in proto.opset_import if o.domain == ""] == [opset]
    assert ("Gelu" in _op_types(proto)) == (opset >= 20)

    class Mean(nn.Module):
        # ReduceMean takes its axes as an attribute before opset 18, as an input from it
        def forward(self, x):
            return x.mean(1), x.amax(0, keepdim=True)
    export_and_run(Mean(), x, opset_version=opset)


@pytest.mark.parametrize("bad", [12, 22, 0, "17", 17.0, True])
def test_unsupported_opset_refused(bad):
    with pytest.raises(ValueError, match="opset_version"):
        tonnx.export(nn.Linear(2, 2), tensorlib.randn(1, 2), io.BytesIO(), opset_version=bad)


def test_unmapped_op_raises_naming_it():
    class Kth(nn.Module):
        def forward(self, x):
            return x.kthvalue(2, 0).values + 1
    with pytest.raises(tonnx.UnsupportedOperatorError, match="'kthvalue'") as info:
        tonnx.export(Kth(), tensorlib.randn(3, 2), io.BytesIO())
    assert isinstance(info.value, NotImplementedError)
    assert info.value.op == "kthvalue"
    # an op applied to parameters only is folded into a constant, not refused
    class Folded(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(tensorlib.randn(3, 3))

        def forward(self, x):
            return x + self.w.kthvalue(2, 0).values
    export_and_run(Folded(), tensorlib.randn(3))


def test_export_errors():
    with pytest.raises(tonnx.UnsupportedOperatorError, match="training"):
        class BN(nn.Module):
            def forward(self, x):
                return tensorlib.nn.functional.batch_norm(x, None, None, training=True)
        tonnx.export(BN(), tensorlib.randn(3, 2), io.BytesIO())
    # a tensor filled from the batch size follows the batch at run time
    class Filled(nn.Module):
        def forward(self, x):
            n = x.shape[0]
            return (x + tensorlib.ones(n, 1) * 2 + tensorlib.full((1, n * 2, 3), 0.5)
                    .reshape(n, 2, 3).sum(1) + x.new_zeros(n, 3) + tensorlib.zeros_like(x))
    export_and_run(Filled(), tensorlib.randn(2, 3), dynamic_axes={"input": {0: "b"}},
                   run_args=(tensorlib.randn(7, 3),))
    # other batch-dependent constants cannot follow a dynamic batch
    class Arange(nn.Module):
        def forward(self, x):
            return x + tensorlib.arange(x.shape[0]).unsqueeze(1)
    export_and_run(Arange(), tensorlib.randn(2, 3))
    with pytest.raises(tonnx.OnnxExporterError, match="dynamic axis"):
        tonnx.export(Arange(), tensorlib.randn(2, 3), io.BytesIO(),
                     dynamic_axes={"input": {0: "b"}})
    # an op the exporter did not see would freeze an input-dependent value: refused
    from tensorlib._core import tensor as core

    class Unseen(nn.Module):
        def forward(self, x):
            y = x * 2
            was_on = core._tracing_suspended(True)     # as if `t` were not reported
            t = y.t()
            core._tracing_suspended(not was_on)
            return y + t
    with pytest.raises(tonnx.OnnxExporterError, match="shares memory with a traced value"):
        tonnx.export(Unseen(), tensorlib.randn(3, 3), io.BytesIO())
    # values reached through .data, .T, .mT and iteration are seen
    class Seen(nn.Module):
        def forward(self, x):
            return x.data * 2 + x.T.mT + sum(r for r in x) + x.mH.H
    export_and_run(Seen(), tensorlib.randn(3, 3))


def test_in_place_ops():
    """In-place ops are new values of their tensor; a view read after its memory was
    written in place is refused (ONNX values cannot alias), never exported stale."""
    class InPlace(nn.Module):
        def forward(self, x):
            y = x.clone()
            y.add_(1).mul_(2)
            y += x
            return y.relu_(), x
    export_and_run(InPlace(), tensorlib.randn(3, 2))

    class Stale(nn.Module):
        def forward(self, x):
            y = x.clone()
            v = y[0]
            y.add_(1)
            return v * 2
    with pytest.raises(tonnx.OnnxExporterError, match="in-place op \\('add'\\)"):
        tonnx.export(Stale(), tensorlib.randn(3, 2), io.BytesIO())


def test_setitem():
    class Set(nn.Module):
        def forward(self, x, v):
            y = x.clone()
            y[0] = 5.0
            y[1:, ::2] = v
            y[..., -1] = v[0, 0] * 2
            return y
    export_and_run(Set(), (tensorlib.randn(3, 4), tensorlib.randn(1, 2)))

    class Adv(nn.Module):
        def forward(self, x):
            y = x.clone()
            y[x > 0] = 0.0
            return y
    with pytest.raises(tonnx.UnsupportedOperatorError, match="'setitem'.*advanced"):
        tonnx.export(Adv(), tensorlib.randn(3, 4), io.BytesIO())

    class Mask(nn.Module):
        def forward(self, x):
            return x[x > 0]
    with pytest.raises(tonnx.UnsupportedOperatorError, match="'getitem'.*boolean mask"):
        tonnx.export(Mask(), tensorlib.randn(3, 4), io.BytesIO())


def test_import_without_onnx():
    """``import tensorlib.onnx`` works with onnx missing; export names the package."""
    root = os.path.dirname(os.path.dirname(tensorlib.__file__))
    code = textwrap.dedent("""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "onnx" or name.startswith("onnx."):
                    raise ModuleNotFoundError("No module named 'onnx'", name="onnx")
        sys.meta_path.insert(0, Block())
        import tensorlib, tensorlib.onnx
        assert "onnx" not in sys.modules
        try:
            tensorlib.onnx.export(tensorlib.nn.Linear(2, 2), tensorlib.ones(1, 2), "x.onnx")
        except ImportError as e:
            print("ImportError:", e)
        else:
            print("no error")
    """)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "ImportError:" in r.stdout and "'onnx'" in r.stdout


def test_docstrings():
    import doctest
    from tensorlib.onnx import _export, _symbolic, _trace
    failed = 0
    for mod in (tonnx, _export, _symbolic, _trace):
        failed += doctest.testmod(mod, extraglobs={"tensorlib": tensorlib}).failed
    assert failed == 0
