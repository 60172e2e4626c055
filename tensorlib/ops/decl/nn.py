"""Neural-network layers with fused kernels: convolution, pooling, normalization, the
recurrent cells' gate arithmetic.

Front halves in tensorlib/_core/nn_ops.pxi, kernels in tensorlib/_core/cpu/cpu_nn.c (one
Backend method, ``nn``). Each layer is one declared op whose backward is itself a declared op
(``convolution_backward``, ``max_pool2d_with_indices_backward``, ...) computing every needed
gradient in one pass. The convolution and pooling backward ops are differentiable in turn
(double backward). The norms' backward ops are not: while a graph of the gradient is being
built (``create_graph=True``) the norms' gradients are instead composed of recorded ops
(``_nn_norm_grad``), so their double backward works too. The recurrent cells (``_thnn_fused_
lstm_cell``, ``_thnn_fused_gru_cell``) do the same (``_nn_rnn_cell_grad``).
"""
from .common import F, op

_CONV_ARGS = "stride, padding, dilation, transposed, output_padding, groups"
_DD_ARGS = f"grads, grad_output, input, weight, {_CONV_ARGS}"
# the gradient of a max pooling's backward: the incoming gradient read at the indices
_GATHER = "grad.flatten(-2).gather(-1, indices.flatten(-2)).reshape(indices.shape)"
_CELL = "input_gates, hidden_gates, {h}, input_bias, hidden_bias, {saved}"
# one backward pass per node serves every input (_nn_rnn_cell_grad keeps it for the others)
_LSTM_ARGS = _CELL.format(h="cx", saved="result1, result2")    # cy, workspace
_GRU_ARGS = _CELL.format(h="hx", saved="None, result1")         # workspace
_LSTM_GRAD = {n: f"_nn_rnn_cell_grad(node, 0, {k}, grads, {_LSTM_ARGS})"
              for k, n in enumerate(("input_gates", "hidden_gates", "cx", "input_bias",
                                     "hidden_bias"))}
_GRU_GRAD = {n: f"_nn_rnn_cell_grad(node, 1, {k}, grads, {_GRU_ARGS})"
             for k, n in enumerate(("input_gates", "hidden_gates", "hx", "input_bias",
                                    "hidden_bias"))}
_CELL_SIG = ("Tensor input_gates, Tensor hidden_gates, Tensor {h}, Tensor? input_bias=None, "
             "Tensor? hidden_bias=None")

OPS = [
    op("convolution",
       "Tensor input, Tensor weight, Tensor? bias, int[]! stride, int[]! padding, int[]! dilation, "
       "bool transposed, int[]! output_padding, int groups", F,
       impl="_nn_convolution({input}, {weight}, {bias}, {stride}, {padding}, {dilation}, "
            "{transposed}, {output_padding}, {groups})",
       node="ConvolutionBackward0",
       backward={
           'input': f'convolution_backward(grad, input, weight, None, {_CONV_ARGS}, '
                    '(True, False, False))[0]',
           'weight': f'convolution_backward(grad, input, weight, None, {_CONV_ARGS}, '
                     '(False, True, False))[1]',
           'bias': f'convolution_backward(grad, input, weight, None, {_CONV_ARGS}, '
                   '(False, False, True))[2]'},
       doc="N-d convolution (1 to 3 spatial dims) or transposed convolution: im2col plus one "
           "GEMM per group and batch chunk. ``stride``/``padding``/``dilation``/"
           "``output_padding`` have one entry per spatial dim.\n\n"
           "    >>> tensorlib.convolution(tensorlib.ones(1, 1, 4, 4), tensorlib.ones(1, 1, 3, 3),"
           " None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1).tolist()\n"
           "    [[[[9.0, 9.0], [9.0, 9.0]]]]"),
    op("convolution_backward",
       "Tensor grad_output, Tensor input, Tensor weight, object bias_sizes, int[] stride, "
       "int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups, "
       "object output_mask", F, input_name="grad_output",
       node="ConvolutionBackwardBackward0", outputs="multi",
       backward={'grad_output': f'_nn_conv_double_backward(0, {_DD_ARGS})',
                 'input': f'_nn_conv_double_backward(1, {_DD_ARGS})',
                 'weight': f'_nn_conv_double_backward(2, {_DD_ARGS})'},
       impl="_nn_convolution_backward({grad_output}, {input}, {weight}, {stride}, {padding}, "
            "{dilation}, {transposed}, {output_padding}, {groups}, {output_mask})",
       doc="``(grad_input, grad_weight, grad_bias)`` of ``convolution``; an entry whose "
           "``output_mask`` flag is false is None.\n\n"
           "    >>> gi, gw, gb = tensorlib.convolution_backward(tensorlib.ones(1, 1, 2, 2), "
           "tensorlib.ones(1, 1, 3, 3), tensorlib.ones(1, 1, 2, 2), [1], [1, 1], [0, 0], [1, 1],"
           " False, [0, 0], 1, (True, True, True))\n"
           "    >>> gi[0, 0].tolist(), gb.tolist()\n"
           "    ([[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]], [4.0])"),
    op("max_pool2d_with_indices",
       "Tensor self, int[] kernel_size, int[] stride=(), int[] padding=0, int[] dilation=1, "
       "bool ceil_mode=False", F,
       impl="_nn_max_pool2d({self}, {kernel_size}, {stride}, {padding}, {dilation}, "
            "{ceil_mode})",
       node="MaxPool2DWithIndicesBackward0", outputs="multi",
       backward={'self': 'max_pool2d_with_indices_backward(_nn_grad0(grads, self), self, '
                         'kernel_size, stride, padding, dilation, ceil_mode, indices)'},
       doc="2-D max pooling of a (C, H, W) or (N, C, H, W) tensor: ``(values, indices)``, the "
           "indices flat within each H x W plane.\n\n"
           "    >>> v, i = tensorlib.max_pool2d_with_indices("
           "tensorlib.arange(16.).reshape(1, 1, 4, 4), 2)\n"
           "    >>> v.tolist(), i.tolist()\n"
           "    ([[[[5.0, 7.0], [13.0, 15.0]]]], [[[[5, 7], [13, 15]]]])"),
    op("max_pool2d_with_indices_backward",
       "Tensor grad_output, Tensor self, int[] kernel_size, int[] stride, int[] padding, "
       "int[] dilation, bool ceil_mode, Tensor indices", F, input_name="grad_output",
       impl="_nn_index_backward({grad_output}, {self}, {indices}, 'max_pool2d_with_indices')",
       node="MaxPool2DWithIndicesBackwardBackward0", backward={'grad_output': _GATHER},
       doc="The gradient of ``max_pool2d_with_indices``: each output gradient added at its "
           "index.\n\n"
           "    >>> x = tensorlib.arange(4.).reshape(1, 1, 2, 2)\n"
           "    >>> v, i = tensorlib.max_pool2d_with_indices(x, 2)\n"
           "    >>> tensorlib.max_pool2d_with_indices_backward(tensorlib.ones(1, 1, 1, 1), x, "
           "[2], [2], [0], [1], False, i).tolist()\n"
           "    [[[[0.0, 0.0], [0.0, 1.0]]]]"),
    op("avg_pool2d",
       "Tensor self, int[] kernel_size, int[] stride=(), int[] padding=0, bool ceil_mode=False, "
       "bool count_include_pad=True, int? divisor_override=None", F,
       impl="_nn_avg_pool2d({self}, {kernel_size}, {stride}, {padding}, {ceil_mode}, "
            "{count_include_pad}, {divisor_override})",
       node="AvgPool2DBackward0",
       backward={'self': 'avg_pool2d_backward(grad, self, kernel_size, stride, padding, '
                         'ceil_mode, count_include_pad, divisor_override)'},
       doc="2-D average pooling of a (C, H, W) or (N, C, H, W) tensor.\n\n"
           "    >>> tensorlib.avg_pool2d(tensorlib.arange(16.).reshape(1, 4, 4), 2).tolist()\n"
           "    [[[2.5, 4.5], [10.5, 12.5]]]"),
    op("avg_pool2d_backward",
       "Tensor grad_output, Tensor self, int[] kernel_size, int[] stride, int[] padding, "
       "bool ceil_mode, bool count_include_pad, object divisor_override", F,
       input_name="grad_output",
       impl="_nn_avg_pool2d_backward({grad_output}, {self}, {kernel_size}, {stride}, "
            "{padding}, {ceil_mode}, {count_include_pad}, {divisor_override})",
       node="AvgPool2DBackwardBackward0",
       backward={'grad_output': 'avg_pool2d(grad, kernel_size, stride, padding, ceil_mode, '
                                'count_include_pad, divisor_override)'},
       doc="The gradient of ``avg_pool2d``.\n\n"
           "    >>> tensorlib.avg_pool2d_backward(tensorlib.ones(1, 1, 1), tensorlib.ones(1, 2, "
           "2), [2], [2], [0], False, True, None).tolist()\n"
           "    [[[0.25, 0.25], [0.25, 0.25]]]"),
    op("adaptive_avg_pool2d", "Tensor self, int[] output_size", F,
       impl="_nn_adaptive_pool2d({self}, {output_size}, False)",
       node="AdaptiveAvgPool2DBackward0",
       backward={'self': 'adaptive_avg_pool2d_backward(grad, self)'},
       doc="Average pooling to a fixed output size (windows ``[floor(i*H/OH), "
           "ceil((i+1)*H/OH))``).\n\n"
           "    >>> tensorlib.adaptive_avg_pool2d(tensorlib.arange(4.).reshape(1, 2, 2), 1)"
           ".tolist()\n"
           "    [[[1.5]]]"),
    op("adaptive_avg_pool2d_backward", "Tensor grad_output, Tensor self", F,
       input_name="grad_output",
       impl="_nn_adaptive_avg_pool2d_backward({grad_output}, {self})",
       node="AdaptiveAvgPool2DBackwardBackward0",
       backward={'grad_output': 'adaptive_avg_pool2d(grad, grad_output_sizes[-2:])'},
       doc="The gradient of ``adaptive_avg_pool2d``.\n\n"
           "    >>> tensorlib.adaptive_avg_pool2d_backward(tensorlib.ones(1, 1, 1), "
           "tensorlib.ones(1, 2, 2)).tolist()\n"
           "    [[[0.25, 0.25], [0.25, 0.25]]]"),
    op("adaptive_max_pool2d", "Tensor self, int[] output_size", F,
       impl="_nn_adaptive_pool2d({self}, {output_size}, True)",
       node="AdaptiveMaxPool2DBackward0", outputs="multi",
       backward={'self': 'adaptive_max_pool2d_backward(_nn_grad0(grads, self), self, indices)'},
       doc="Max pooling to a fixed output size: ``(values, indices)``.\n\n"
           "    >>> tensorlib.adaptive_max_pool2d(tensorlib.arange(4.).reshape(1, 2, 2), 1)[1]"
           ".tolist()\n"
           "    [[[3]]]"),
    op("adaptive_max_pool2d_backward", "Tensor grad_output, Tensor self, Tensor indices", F,
       input_name="grad_output",
       impl="_nn_index_backward({grad_output}, {self}, {indices}, 'adaptive_max_pool2d')",
       node="AdaptiveMaxPool2DBackwardBackward0", backward={'grad_output': _GATHER},
       doc="The gradient of ``adaptive_max_pool2d``.\n\n"
           "    >>> x = tensorlib.arange(4.).reshape(1, 2, 2)\n"
           "    >>> tensorlib.adaptive_max_pool2d_backward(tensorlib.ones(1, 1, 1), x, "
           "tensorlib.adaptive_max_pool2d(x, 1)[1]).tolist()\n"
           "    [[[0.0, 0.0], [0.0, 1.0]]]"),
    op("max_unpool2d", "Tensor self, Tensor indices, int[] output_size", F,
       impl="_nn_max_unpool2d({self}, {indices}, {output_size})",
       node="MaxUnpool2DBackward0",
       backward={'self': _GATHER},
       doc="The partial inverse of max pooling: each value written at its flat index in an "
           "(output_size) plane of zeros.\n\n"
           "    >>> tensorlib.max_unpool2d(tensorlib.ones(1, 1, 1), tensorlib.tensor([[[3]]]), "
           "[2, 2]).tolist()\n"
           "    [[[0.0, 0.0], [0.0, 1.0]]]"),
    op("native_batch_norm",
       "Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
       "bool training, float momentum, float eps", F,
       impl="_nn_batch_norm({input}, {weight}, {bias}, {running_mean}, {running_var}, "
            "{training}, {momentum}, {eps})",
       node="NativeBatchNormBackward0", outputs="multi",
       save_if={'running_mean': 'not training', 'running_var': 'not training'},
       backward={n: f'_nn_norm_grad(0, {k}, grads, input, weight, result1, result2, '
                       'running_mean, running_var, training, eps, None)'
                 for k, n in enumerate(('input', 'weight', 'bias'))},
       doc="Batch normalization over (N, C, ...): ``(output, save_mean, save_invstd)``. "
           "Training normalizes with the batch statistics and updates the running ones in "
           "place (the variance unbiased); eval uses the running statistics (the saved ones "
           "are then empty).\n\n"
           "    >>> tensorlib.native_batch_norm(tensorlib.tensor([[1.], [3.]]), None, None, "
           "None, None, True, 0.1, 0.)[0].tolist()\n"
           "    [[-1.0], [1.0]]"),
    op("native_batch_norm_backward",
       "Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, "
       "Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, "
       "object output_mask", F, input_name="grad_out",
       impl="_nn_batch_norm_backward({grad_out}, {input}, {weight}, {running_mean}, "
            "{running_var}, {save_mean}, {save_invstd}, {train}, {eps}, {output_mask})",
       doc="``(grad_input, grad_weight, grad_bias)`` of ``native_batch_norm`` in one pass.\n\n"
           "    >>> x = tensorlib.tensor([[1.], [3.]])\n"
           "    >>> _, m, r = tensorlib.native_batch_norm(x, None, None, None, None, True, 0.1, "
           "0.)\n"
           "    >>> tensorlib.native_batch_norm_backward(tensorlib.tensor([[1.], [2.]]), x, None,"
           " None, None, m, r, True, 0., (False, True, True))[1:]\n"
           "    (tensor([1.]), tensor([3.]))"),
    op("native_layer_norm",
       "Tensor input, int[]! normalized_shape, Tensor? weight, Tensor? bias, float eps", F,
       impl="_nn_layer_norm({input}, {normalized_shape}, {weight}, {bias}, {eps})",
       node="NativeLayerNormBackward0", outputs="multi",
       backward={n: f'_nn_norm_grad(1, {k}, grads, input, weight, result1, result2, None, '
                       'None, True, eps, normalized_shape)'
                 for k, n in enumerate(('input', 'weight', 'bias'))},
       doc="Layer normalization over the trailing ``normalized_shape`` dims: ``(output, mean, "
           "rstd)``, mean and rstd shaped like input with those dims of size 1.\n\n"
           "    >>> tensorlib.native_layer_norm(tensorlib.tensor([[1., 3.]]), [2], None, None, "
           "0.)[0].tolist()\n"
           "    [[-1.0, 1.0]]"),
    op("native_layer_norm_backward",
       "Tensor grad_out, Tensor input, int[]! normalized_shape, Tensor mean, Tensor rstd, "
       "Tensor? weight, Tensor? bias, object output_mask", F, input_name="grad_out",
       impl="_nn_layer_norm_backward({grad_out}, {input}, {normalized_shape}, {mean}, {rstd}, "
            "{weight}, {bias}, {output_mask})",
       doc="``(grad_input, grad_weight, grad_bias)`` of ``native_layer_norm`` in one pass.\n\n"
           "    >>> x = tensorlib.tensor([[1., 3.]])\n"
           "    >>> _, m, r = tensorlib.native_layer_norm(x, [2], None, None, 0.)\n"
           "    >>> tensorlib.native_layer_norm_backward(tensorlib.ones(1, 2), x, [2], m, r, "
           "None, None, (True, False, False))[0].tolist()\n"
           "    [[0.0, 0.0]]"),
    op("native_group_norm",
       "Tensor input, Tensor? weight, Tensor? bias, int N, int C, int HxW, int group, float eps",
       F, impl="_nn_group_norm({input}, {weight}, {bias}, {N}, {C}, {HxW}, {group}, {eps})",
       node="NativeGroupNormBackward0", outputs="multi",
       backward={n: f'_nn_norm_grad(2, {k}, grads, input, weight, result1, result2, None, '
                       'None, True, eps, (N, C, HxW, group))'
                 for k, n in enumerate(('input', 'weight', 'bias'))},
       doc="Group normalization of (N, C, *) with C split into ``group`` groups: ``(output, "
           "mean, rstd)``, mean and rstd of shape (N, group).\n\n"
           "    >>> tensorlib.native_group_norm(tensorlib.tensor([[1., 3.]]), None, None, 1, 2, "
           "1, 1, 0.)[0].tolist()\n"
           "    [[-1.0, 1.0]]"),
    op("native_group_norm_backward",
       "Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, int N, int C, "
       "int HxW, int group, object output_mask", F, input_name="grad_out",
       impl="_nn_group_norm_backward({grad_out}, {input}, {mean}, {rstd}, {weight}, {N}, {C}, "
            "{HxW}, {group}, {output_mask})",
       doc="``(grad_input, grad_weight, grad_bias)`` of ``native_group_norm`` in one pass.\n\n"
           "    >>> x = tensorlib.tensor([[1., 3.]])\n"
           "    >>> _, m, r = tensorlib.native_group_norm(x, None, None, 1, 2, 1, 1, 0.)\n"
           "    >>> tensorlib.native_group_norm_backward(tensorlib.ones(1, 2), x, m, r, None, 1, "
           "2, 1, 1, (True, False, False))[0].tolist()\n"
           "    [[0.0, 0.0]]"),
    op("_thnn_fused_lstm_cell", _CELL_SIG.format(h="cx"), F, input_name="input_gates",
       impl="_nn_lstm_cell({input_gates}, {hidden_gates}, {cx}, {input_bias}, {hidden_bias})",
       node="ThnnFusedLstmCellBackward0", outputs="multi", backward=_LSTM_GRAD,
       doc="The gate arithmetic of one LSTM step in one pass: gates = input_gates + "
           "hidden_gates (+ input_bias + hidden_bias), chunks i, f, g, o of size H; ``(hy, cy, "
           "workspace)`` with cy = sigmoid(f) * cx + sigmoid(i) * tanh(g), hy = sigmoid(o) * "
           "tanh(cy), workspace the four activated gates [B, 4H].\n\n"
           "    >>> hy, cy, ws = tensorlib._thnn_fused_lstm_cell(tensorlib.zeros(1, 4), "
           "tensorlib.zeros(1, 4), tensorlib.ones(1, 1))\n"
           "    >>> cy.tolist(), ws.tolist()\n"
           "    ([[0.5]], [[0.5, 0.5, 0.0, 0.5]])"),
    op("_thnn_fused_lstm_cell_backward",
       "Tensor? grad_hy, Tensor? grad_cy, Tensor cx, Tensor cy, Tensor workspace, bool has_bias",
       F, impl="_nn_lstm_cell_backward({grad_hy}, {grad_cy}, {cx}, {cy}, {workspace}, "
               "{has_bias})",
       doc="``(grad_gates, grad_cx, grad_bias)`` of ``_thnn_fused_lstm_cell`` in one pass "
           "(grad_gates is the gradient of both input_gates and hidden_gates, grad_bias its sum "
           "over the batch, or None without bias; all None when both gradients are None).\n\n"
           "    >>> cx = tensorlib.ones(1, 1)\n"
           "    >>> hy, cy, ws = tensorlib._thnn_fused_lstm_cell(tensorlib.zeros(1, 4), "
           "tensorlib.zeros(1, 4), cx)\n"
           "    >>> tensorlib._thnn_fused_lstm_cell_backward(None, tensorlib.ones(1, 1), cx, cy, "
           "ws, False)[1].tolist()\n"
           "    [[0.5]]"),
    op("_thnn_fused_gru_cell", _CELL_SIG.format(h="hx"), F, input_name="input_gates",
       impl="_nn_gru_cell({input_gates}, {hidden_gates}, {hx}, {input_bias}, {hidden_bias})",
       node="ThnnFusedGruCellBackward0", outputs="multi", backward=_GRU_GRAD,
       doc="The gate arithmetic of one GRU step in one pass: chunks r, z, n of size H, "
           "r = sigmoid(x_r + h_r), z = sigmoid(x_z + h_z), n = tanh(x_n + r * h_n) (each "
           "bias added to its own side), hy = (1 - z) * n + z * hx; ``(hy, workspace)`` with "
           "workspace [B, 5H] = r, z, n, h_n, hx.\n\n"
           "    >>> hy, ws = tensorlib._thnn_fused_gru_cell(tensorlib.zeros(1, 3), "
           "tensorlib.zeros(1, 3), tensorlib.ones(1, 1))\n"
           "    >>> hy.tolist(), ws.tolist()\n"
           "    ([[0.5]], [[0.5, 0.5, 0.0, 0.0, 1.0]])"),
    op("_thnn_fused_gru_cell_backward", "Tensor grad_hy, Tensor workspace, bool has_bias", F,
       input_name="grad_hy",
       impl="_nn_gru_cell_backward({grad_hy}, {workspace}, {has_bias})",
       doc="``(grad_input_gates, grad_hidden_gates, grad_hx, grad_input_bias, "
           "grad_hidden_bias)`` of ``_thnn_fused_gru_cell`` in one pass (the bias gradients "
           "None without bias).\n\n"
           "    >>> hy, ws = tensorlib._thnn_fused_gru_cell(tensorlib.zeros(1, 3), "
           "tensorlib.zeros(1, 3), tensorlib.ones(1, 1))\n"
           "    >>> tensorlib._thnn_fused_gru_cell_backward(tensorlib.ones(1, 1), ws, False)[2]"
           ".tolist()\n"
           "    [[0.5]]"),
    op("_nn_cross_entropy",
       "Tensor input, Tensor target, Tensor? weight, int reduction, int ignore_index, "
       "float label_smoothing", F,
       impl="_nn_cross_entropy({input}, {target}, {weight}, {reduction}, {ignore_index}, "
            "{label_smoothing})",
       node="NnCrossEntropyBackward0", outputs="multi",
       backward={'input': '_nn_xent_grad(grads, input, target, weight, reduction, '
                          'ignore_index, label_smoothing, result1, result2)'},
       doc="Cross entropy of [N, C] logits and class indices in one pass (log_softmax and "
           "nll_loss fused): ``(loss, lse, divisor)``, lse the rows' log-sum-exp and divisor "
           "the sum of the target weights, both kept for the backward. ``reduction``: 0 none, "
           "1 mean, 2 sum.\n\n"
           "    >>> round(tensorlib._nn_cross_entropy(tensorlib.zeros(2, 4), tensorlib.tensor([0, "
           "3]), None, 1, -100, 0.0)[0].item(), 4)\n"
           "    1.3863"),
    op("_nn_cross_entropy_backward",
       "Tensor grad, Tensor input, Tensor target, Tensor? weight, int reduction, "
       "int ignore_index, float label_smoothing, Tensor lse, Tensor divisor", F,
       input_name="grad",
       impl="_nn_cross_entropy_backward({grad}, {input}, {target}, {weight}, {reduction}, "
            "{ignore_index}, {label_smoothing}, {lse}, {divisor})",
       doc="grad_input of ``_nn_cross_entropy`` in one pass: softmax(input) scaled by the "
           "target weights, less the one-hot targets (and the smoothing term).\n\n"
           "    >>> x, t = tensorlib.zeros(1, 2), tensorlib.tensor([0])\n"
           "    >>> _, lse, d = tensorlib._nn_cross_entropy(x, t, None, 1, -100, 0.0)\n"
           "    >>> tensorlib._nn_cross_entropy_backward(tensorlib.tensor(1.0), x, t, None, 1, "
           "-100, 0.0, lse, d).tolist()\n"
           "    [[-0.5, 0.5]]"),
    op("_nn_masked_softmax",
       "Tensor input, Tensor? mask, float scale, bool causal, bool zero_dead_rows", F,
       impl="_nn_masked_softmax({input}, {mask}, {scale}, {causal}, {zero_dead_rows})",
       node="NnMaskedSoftmaxBackward0",
       backward={'input': '_nn_msm_grad(grad, result, scale)'},
       doc="Attention weights in one pass per row: softmax(input * scale + mask) over the last "
           "dim. ``mask`` broadcasts to input: bool keeps where True, a float mask of input's "
           "dtype is added (it gets no gradient); ``causal`` keeps column j of row i when "
           "j <= i (rows counted along dim -2). A row with nothing kept gives zeros "
           "(``zero_dead_rows``) or NaN, as PyTorch's softmax of all -inf.\n\n"
           "    >>> tensorlib._nn_masked_softmax(tensorlib.zeros(2, 2), None, 1.0, True, True)"
           ".tolist()\n"
           "    [[1.0, 0.0], [0.5, 0.5]]"),
    op("_nn_masked_softmax_backward", "Tensor grad_output, Tensor output, float scale", F,
       input_name="grad_output",
       impl="_nn_masked_softmax_backward({grad_output}, {output}, {scale})",
       doc="The scores' gradient of ``_nn_masked_softmax`` in one pass per row: scale * y * "
           "(g - sum(g * y)).\n\n"
           "    >>> y = tensorlib.tensor([[0.5, 0.5]])\n"
           "    >>> tensorlib._nn_masked_softmax_backward(tensorlib.tensor([[1.0, 0.0]]), y, 1.0)"
           ".tolist()\n"
           "    [[0.25, -0.25]]"),
]
