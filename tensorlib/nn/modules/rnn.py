"""Recurrent layers: ``RNN`` (tanh/relu), ``LSTM`` (with ``proj_size``), ``GRU`` and the
single-step cells ``RNNCell``, ``LSTMCell``, ``GRUCell`` (PyTorch's names, arguments,
parameter names and shapes, default initialisation, reprs and input checks).

Each layer and direction computes the input projection of the whole sequence in one matrix
product (``x @ W_ih^T + b`` for every time step at once), then per time step one product with
``W_hh`` and the gate arithmetic (for LSTM and GRU in float32/float64 one fused kernel,
``_thnn_fused_lstm_cell`` / ``_thnn_fused_gru_cell``). A ``PackedSequence`` input runs each
step on the sequences that still have that step (``batch_sizes[t]`` rows), so padding costs
nothing and the final hidden state of every sequence is taken at its own last step. A
training LSTM over an unpacked batch records each layer direction as one graph node
(``_LSTMLayer``): its backward runs through time with one product per step and computes the
weight's gradient as a single product over all steps.

>>> import tensorlib
>>> lstm = tensorlib.nn.LSTM(3, 4, num_layers=2, batch_first=True)
>>> out, (h, c) = lstm(tensorlib.zeros(5, 7, 3))
>>> out.shape, h.shape, c.shape
(tensorlib.Size([5, 7, 4]), tensorlib.Size([2, 5, 4]), tensorlib.Size([2, 5, 4]))
"""
import math
import numbers
import warnings

import tensorlib
from tensorlib.nn import init
from tensorlib.nn.modules.module import Module
from tensorlib.nn.parameter import Parameter
from tensorlib.nn.utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_TITLE = {"LSTM": "LSTM", "GRU": "GRU", "RNN_TANH": "RNN", "RNN_RELU": "RNN"}
_TYPE_NAME = {tensorlib.float64: "Double", tensorlib.float32: "Float",
              tensorlib.float16: "Half", tensorlib.bfloat16: "BFloat16"}


# ------------------------------------------------------------------ the per-step arithmetic
# The step functions take w_hh already transposed (w_hh_t): one view and one graph node per
# direction rather than one per step.
def _hidden_product(h, w_hh_t, b_hh):
    return tensorlib.mm(h, w_hh_t) if b_hh is None else tensorlib.addmm(b_hh, h, w_hh_t)


def _rnn_step(act):
    def step(xp, h, c, w_hh_t, b_hh, w_hr):
        # xp already holds both biases (see _input_projection)
        return act(tensorlib.addmm(xp, h, w_hh_t)), None
    return step


# the dtypes of the fused cell kernels; others (float16, bfloat16) take the composite path
_FUSED = (tensorlib.float32, tensorlib.float64)


def _lstm_step(xp, h, c, w_hh_t, b_hh, w_hr):
    if xp.dtype in _FUSED:
        # xp holds both biases; one GEMM for all four gates, then one pass over them
        h, c, _ = tensorlib._thnn_fused_lstm_cell(xp, tensorlib.mm(h, w_hh_t), c)
    else:
        gates = tensorlib.addmm(xp, h, w_hh_t)
        i, f, g, o = gates.chunk(4, 1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
    if w_hr is not None:
        h = h.matmul(w_hr.t())
    return h, c


class _LSTMLayer(tensorlib.autograd.Function):
    """One direction of one LSTM layer over a whole (unpacked) sequence as ONE graph node,
    for the training path. Forward: per step one product with ``w_hh`` and the fused gate
    kernel, nothing recorded. Backward (through time): per step the fused gate backward and
    one product for the hidden state's gradient; the weight's gradient is a single product
    over all steps at the end (instead of one per step), as cuDNN does. While a graph of the
    gradient is built (create_graph), the backward re-runs the recorded steps and
    differentiates them, so higher-order gradients stay exact.

    ``xp``: [T, B, 4H], the input projection with both biases."""

    @staticmethod
    def forward(ctx, xp, h0, c0, w_hh, reverse):
        w_t = w_hh.t()
        steps = xp.size(0)
        hs, cs, ws = [None] * steps, [None] * steps, [None] * steps
        h, c = h0, c0
        for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
            h, c, ws[t] = tensorlib._thnn_fused_lstm_cell(xp[t], tensorlib.mm(h, w_t), c)
            hs[t], cs[t] = h, c
        out = tensorlib.stack(hs)
        ctx.reverse = reverse
        ctx.save_for_backward(xp, h0, c0, w_hh, out, tensorlib.stack(cs), tensorlib.stack(ws))
        return out, h, c

    @staticmethod
    def backward(ctx, g_out, g_h, g_c):
        xp, h0, c0, w_hh, out, cs, ws = ctx.saved_tensors
        reverse = ctx.reverse
        if tensorlib.is_grad_enabled():
            return _LSTMLayer._recorded_backward(ctx, xp, h0, c0, w_hh, g_out, g_h, g_c)
        steps = out.size(0)
        ggs = [None] * steps
        gh, gc = g_h, g_c
        for t in (range(steps) if reverse else range(steps - 1, -1, -1)):
            prev = t + 1 if reverse else t - 1
            c_prev = c0 if prev < 0 or prev >= steps else cs[prev]
            ggs[t], gc, _ = tensorlib._thnn_fused_lstm_cell_backward(
                gh + g_out[t], gc, c_prev, cs[t], ws[t], False)
            gh = tensorlib.mm(ggs[t], w_hh)
        gg = tensorlib.stack(ggs)
        g_w = None
        if ctx.needs_input_grad[3]:
            # every step's product h_prev @ w_hh^T at once: sum_t gg_t^T h_prev_t
            first = h0.unsqueeze(0)
            h_prev = (tensorlib.cat([out[1:], first]) if reverse
                      else tensorlib.cat([first, out[:-1]]))
            g_w = tensorlib.mm(gg.flatten(0, 1).t(), h_prev.flatten(0, 1))
        return gg, gh, gc, g_w, None

    @staticmethod
    def _recorded_backward(ctx, xp, h0, c0, w_hh, g_out, g_h, g_c):
        steps = xp.size(0)
        w_t = w_hh.t()
        hs = [None] * steps
        h, c = h0, c0
        for t in (range(steps - 1, -1, -1) if ctx.reverse else range(steps)):
            h, c, _ = tensorlib._thnn_fused_lstm_cell(xp[t], tensorlib.mm(h, w_t), c)
            hs[t] = h
        inputs = (xp, h0, c0, w_hh)
        wanted = [i for i, t in enumerate(inputs) if t.requires_grad]
        got = tensorlib.autograd.grad((tensorlib.stack(hs), h, c), [inputs[i] for i in wanted],
                                      (g_out, g_h, g_c), create_graph=True, allow_unused=True)
        grads = [None] * 4
        for i, g in zip(wanted, got):
            grads[i] = g
        return (*grads, None)


def _gru_step(xp, h, c, w_hh_t, b_hh, w_hr):
    hidden = _hidden_product(h, w_hh_t, b_hh)
    if xp.dtype in _FUSED:
        return tensorlib._thnn_fused_gru_cell(xp, hidden, h)[0], None
    xr, xz, xn = xp.chunk(3, 1)
    hr, hz, hn = hidden.chunk(3, 1)
    r = (xr + hr).sigmoid()
    z = (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return n + z * (h - n), None


def _step_for(mode):
    if mode == "LSTM":
        return _lstm_step
    if mode == "GRU":
        return _gru_step
    return _rnn_step(tensorlib.tanh if mode == "RNN_TANH" else tensorlib.relu)


def _input_projection(mode, x, w_ih, b_ih, b_hh):
    """x @ w_ih^T plus the biases that add to it, for every time step in one product. For
    RNN and LSTM both biases are constant terms of the pre-activation; GRU keeps b_hh inside
    the reset gate's product."""
    bias = b_ih
    if b_ih is not None and mode != "GRU":
        bias = b_ih + b_hh
    if bias is not None and x.dim() == 2:
        return tensorlib.addmm(bias, x, w_ih.t())
    xp = x.matmul(w_ih.t())
    return xp if bias is None else xp + bias


def _run_direction(step, xp_steps, sizes, h0, c0, w_hh, b_hh, w_hr, reverse):
    """Run one direction of one layer over per-step projected inputs ``xp_steps`` (row
    counts ``sizes``, non-increasing). Returns the per-step outputs in time order and the
    final (h, c) of every sequence, each at its own last step."""
    order = range(len(sizes) - 1, -1, -1) if reverse else range(len(sizes))
    outs = [None] * len(sizes)
    w_hh_t = w_hh.t()
    if reverse:
        # sequences join as the steps go back: the longest start at the last step
        rows = sizes[-1] if sizes else 0
        h, c = h0[:rows], None if c0 is None else c0[:rows]
        for t in order:
            bs = sizes[t]
            if bs > rows:
                h = tensorlib.cat([h, h0[rows:bs]])
                if c is not None:
                    c = tensorlib.cat([c, c0[rows:bs]])
                rows = bs
            h, c = step(xp_steps[t], h, c, w_hh_t, b_hh, w_hr)
            outs[t] = h
        return outs, h, c
    # forward: sequences leave as they end; their final states are kept aside
    h, c = h0, c0
    rows = h0.size(0)
    done_h, done_c = [], []
    for t in order:
        bs = sizes[t]
        if bs < rows:
            done_h.append(h[bs:rows])
            h = h[:bs]
            if c is not None:
                done_c.append(c[bs:rows])
                c = c[:bs]
            rows = bs
        h, c = step(xp_steps[t], h, c, w_hh_t, b_hh, w_hr)
        outs[t] = h
    if done_h:
        h = tensorlib.cat([h] + done_h[::-1])
        if c is not None:
            c = tensorlib.cat([c] + done_c[::-1])
    return outs, h, c


def _dropout(x, p):
    if p >= 1.0:
        return x * 0.0
    keep = tensorlib.empty_like(x).bernoulli_(1.0 - p)
    return x * keep / (1.0 - p)


# ------------------------------------------------------------------------------ the layers
class RNNBase(Module):
    """The common part of ``RNN``, ``LSTM`` and ``GRU``: the parameters of every layer and
    direction (``weight_ih_l{k}[_reverse]``, ``weight_hh_l{k}``, ``bias_ih_l{k}``,
    ``bias_hh_l{k}``, ``weight_hr_l{k}`` with ``proj_size``), initialised from
    U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), the input checks and the loop over layers.

    >>> rnn = tensorlib.nn.modules.rnn.RNNBase("GRU", 2, 3, bidirectional=True)
    >>> [n for n, _ in rnn.named_parameters()][:5]
    ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0', 'weight_ih_l0_reverse']
    """

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, "
                          "so non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: "
                            f"{type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + str(mode))
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        gate_size = _GATES[mode] * hidden_size
        out_size = proj_size if proj_size > 0 else hidden_size
        dirs = 2 if bidirectional else 1
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            in_size = input_size if layer == 0 else out_size * dirs
            for direction in range(dirs):
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gate_size, in_size)),
                          ("weight_hh", (gate_size, out_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name,
                            Parameter(tensorlib.empty(shape, device=device, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters, one list per layer and direction.

        >>> [len(w) for w in tensorlib.nn.LSTM(2, 3, proj_size=1).all_weights]
        [5]
        """
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op (PyTorch compacts the weights for cuDNN; this implementation reads them
        where they are).

        >>> tensorlib.nn.GRU(2, 3).flatten_parameters()
        """

    def reset_parameters(self):
        """Draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).

        >>> rnn = tensorlib.nn.RNN(2, 4)
        >>> rnn.reset_parameters()
        >>> bool(rnn.weight_hh_l0.abs().max() <= 0.5)
        True
        """
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def extra_repr(self):
        """The constructor arguments that differ from their defaults.

        >>> tensorlib.nn.GRU(2, 3, batch_first=True).extra_repr()
        '2, 3, batch_first=True'
        """
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- checks -----------------------------------------------------------------------------
    def check_input(self, input, batch_sizes):
        """Raise PyTorch's errors for an input of the wrong dtype, rank or feature size
        (``batch_sizes`` is not None for packed data, which is 2-D).

        >>> tensorlib.nn.RNN(3, 2).check_input(tensorlib.zeros(4, 1, 3), None)
        """
        weight_dtype = self._flat_weights[0].dtype
        if input.dtype != weight_dtype:
            raise ValueError(f"{_TITLE[self.mode]} input dtype ({input.dtype}) does not match "
                             f"weight dtype ({weight_dtype}). Convert input: "
                             f"input.to({weight_dtype}), or convert model: "
                             f"model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        """(num_layers * directions, batch, hidden or proj size) for ``input``.

        >>> tensorlib.nn.LSTM(3, 4, 2, proj_size=1).get_expected_hidden_size(
        ...     tensorlib.zeros(5, 6, 3), None)
        (2, 6, 1)
        """
        if batch_sizes is not None:
            batch = int(batch_sizes[0])
        else:
            batch = input.size(0) if self.batch_first else input.size(1)
        dirs = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * dirs, batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        """Raise RuntimeError(msg) when ``hx`` does not have the expected size.

        >>> tensorlib.nn.GRU(2, 3).check_hidden_size(tensorlib.zeros(1, 4, 3), (1, 4, 3))
        """
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(tuple(expected_hidden_size), list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        """``check_input`` and ``check_hidden_size`` together.

        >>> tensorlib.nn.RNN(2, 3).check_forward_args(tensorlib.zeros(4, 5, 2),
        ...                                           tensorlib.zeros(1, 5, 3), None)
        """
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        """``hx`` with its batch dim (1) reordered by ``permutation`` (``None``: as is).

        >>> h = tensorlib.tensor([[[1.0], [2.0]]])
        >>> tensorlib.nn.RNN(1, 1).permute_hidden(h, tensorlib.tensor([1, 0])).tolist()
        [[[2.0], [1.0]]]
        """
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    # -- the computation ---------------------------------------------------------------------
    def _prepare(self, input, hx, is_lstm):
        """Unpack/unbatch the input and build the initial state. Returns (x, batch_sizes,
        sorted, unsorted, batched, h0, c0), ``x`` time-major (T, B, in) or packed (N, in)."""
        packed = isinstance(input, PackedSequence)
        title = _TITLE[self.mode]
        batched = True
        if packed:
            x, batch_sizes, sorted_idx, unsorted_idx = input
            batch = int(batch_sizes[0])
        else:
            batch_sizes = sorted_idx = unsorted_idx = None
            x = input
            if x.dim() not in (2, 3):
                tail = " tensor instead" if title == "RNN" else " instead"
                raise ValueError(f"{title}: Expected input to be 2D or 3D, got "
                                 f"{x.dim()}D{tail}")
            batched = x.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not batched:
                x = x.unsqueeze(batch_dim)
                if hx is not None:
                    if is_lstm:
                        if hx[0].dim() != 2 or hx[1].dim() != 2:
                            raise RuntimeError(
                                "For unbatched 2-D input, hx and cx should also be 2-D but "
                                f"got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                        hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
                    else:
                        if hx.dim() != 2:
                            raise RuntimeError("For unbatched 2-D input, hx should also be "
                                               f"2-D but got {hx.dim()}-D tensor")
                        hx = hx.unsqueeze(1)
            elif hx is not None:
                if is_lstm:
                    if hx[0].dim() != 3 or hx[1].dim() != 3:
                        raise RuntimeError(
                            "For batched 3-D input, hx and cx should also be 3-D but got "
                            f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                elif hx.dim() != 3:
                    raise RuntimeError("For batched 3-D input, hx should also be 3-D but got "
                                       f"{hx.dim()}-D tensor")
            batch = x.size(0) if self.batch_first else x.size(1)
        dirs = 2 if self.bidirectional else 1
        out_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            like = dict(dtype=x.dtype, device=x.device)
            h0 = tensorlib.zeros(self.num_layers * dirs, batch, out_size, **like)
            c0 = (tensorlib.zeros(self.num_layers * dirs, batch, self.hidden_size, **like)
                  if is_lstm else None)
        elif is_lstm:
            h0 = self.permute_hidden(hx[0], sorted_idx)
            c0 = self.permute_hidden(hx[1], sorted_idx)
        else:
            h0, c0 = self.permute_hidden(hx, sorted_idx), None
        self.check_input(x, batch_sizes)
        expected = self.get_expected_hidden_size(x, batch_sizes)
        if is_lstm:
            self.check_hidden_size(h0, expected, "Expected hidden[0] size {}, got {}")
            cell = (expected[0], expected[1], self.hidden_size)
            self.check_hidden_size(c0, cell, "Expected hidden[1] size {}, got {}")
        else:
            self.check_hidden_size(h0, expected)
        if not packed and self.batch_first:
            x = x.transpose(0, 1)
        return x, batch_sizes, sorted_idx, unsorted_idx, batched, h0, c0

    def _run(self, x, batch_sizes, h0, c0):
        packed = batch_sizes is not None
        sizes = batch_sizes.tolist() if packed else [x.size(1)] * x.size(0)
        step = _step_for(self.mode)
        dirs = 2 if self.bidirectional else 1
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            if layer > 0 and self.training and self.dropout > 0:
                x = _dropout(x, self.dropout)
            outs = []
            for d in range(dirs):
                w = self.all_weights[layer * dirs + d]
                w_ih, w_hh = w[0], w[1]
                b_ih, b_hh = (w[2], w[3]) if self.bias else (None, None)
                w_hr = w[-1] if self.proj_size > 0 else None
                xp = _input_projection(self.mode, x, w_ih, b_ih, b_hh)
                k = layer * dirs + d
                if (self.mode == "LSTM" and not packed and w_hr is None
                        and xp.dtype in _FUSED and tensorlib.is_grad_enabled()
                        and (xp.requires_grad or w_hh.requires_grad or h0.requires_grad
                             or c0.requires_grad) and x.size(0) > 0):
                    out, h, c = _LSTMLayer.apply(xp, h0[k], c0[k], w_hh, d == 1)
                    outs.append(out)
                    h_n.append(h)
                    c_n.append(c)
                    continue
                xp_steps = xp.split(sizes) if packed else xp.unbind(0)
                out, h, c = _run_direction(step, xp_steps, sizes, h0[k],
                                           None if c0 is None else c0[k], w_hh, b_hh, w_hr,
                                           reverse=d == 1)
                outs.append(tensorlib.cat(out) if packed else tensorlib.stack(out))
                h_n.append(h)
                c_n.append(c)
            x = outs[0] if dirs == 1 else tensorlib.cat(outs, -1)
        h_n = tensorlib.stack(h_n)
        c_n = tensorlib.stack(c_n) if c0 is not None else None
        return x, h_n, c_n

    def _finish(self, out, batch_sizes, sorted_idx, unsorted_idx, batched):
        if batch_sizes is not None:
            return PackedSequence(out, batch_sizes, sorted_idx, unsorted_idx)
        if self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(0 if self.batch_first else 1)
        return out

    def _forward(self, input, hx, is_lstm):
        x, batch_sizes, sorted_idx, unsorted_idx, batched, h0, c0 = self._prepare(
            input, hx, is_lstm)
        out, h_n, c_n = self._run(x, batch_sizes, h0, c0)
        out = self._finish(out, batch_sizes, sorted_idx, unsorted_idx, batched)
        h_n = self.permute_hidden(h_n, unsorted_idx)
        if c_n is not None:
            c_n = self.permute_hidden(c_n, unsorted_idx)
        if not batched:
            h_n = h_n.squeeze(1)
            c_n = None if c_n is None else c_n.squeeze(1)
        return out, ((h_n, c_n) if is_lstm else h_n)

    def forward(self, input, hx=None):
        """Run the layers over ``input`` from the initial state ``hx`` (zeros by default);
        returns ``(output, h_n)``, or ``(output, (h_n, c_n))`` in LSTM mode.

        >>> out, h = tensorlib.nn.modules.rnn.RNNBase("RNN_TANH", 2, 3)(tensorlib.zeros(4, 2))
        >>> out.shape, h.shape
        (tensorlib.Size([4, 3]), tensorlib.Size([1, 3]))
        """
        return self._forward(input, hx, self.mode == "LSTM")


class RNN(RNNBase):
    """Elman RNN: h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh), ``act`` tanh or
    relu (``nonlinearity``). ``forward(input, h0=None)`` returns ``(output, h_n)``; input is
    (T, B, in), (B, T, in) with ``batch_first``, unbatched (T, in), or a ``PackedSequence``.

    >>> rnn = tensorlib.nn.RNN(3, 5, num_layers=2, nonlinearity="relu")
    >>> out, h = rnn(tensorlib.zeros(4, 2, 3))
    >>> out.shape, h.shape
    (tensorlib.Size([4, 2, 5]), tensorlib.Size([2, 2, 5]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None,
                 dtype=None, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"RNN.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        self.nonlinearity = nonlinearity
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory: gates i, f, g, o (in that order in the weights),
    c_t = f * c_{t-1} + i * g, h_t = o * tanh(c_t), projected by ``weight_hr`` when
    ``proj_size > 0``. ``forward(input, (h0, c0)=None)`` returns ``(output, (h_n, c_n))``.

    >>> lstm = tensorlib.nn.LSTM(3, 6, proj_size=2, bidirectional=True)
    >>> out, (h, c) = lstm(tensorlib.zeros(4, 3))
    >>> out.shape, h.shape, c.shape
    (tensorlib.Size([4, 4]), tensorlib.Size([2, 2]), tensorlib.Size([2, 6]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)

    def get_expected_cell_size(self, input, batch_sizes):
        """(num_layers * directions, batch, hidden_size): the cell state's size.

        >>> tensorlib.nn.LSTM(3, 4, proj_size=2).get_expected_cell_size(
        ...     tensorlib.zeros(5, 6, 3), None)
        (1, 6, 4)
        """
        expected = self.get_expected_hidden_size(input, batch_sizes)
        return (expected[0], expected[1], self.hidden_size)

    def forward(self, input, hx=None):
        """``(output, (h_n, c_n))`` for ``input`` from ``hx = (h_0, c_0)`` (zeros by
        default).

        >>> out, (h, c) = tensorlib.nn.LSTM(2, 3)(tensorlib.zeros(4, 1, 2))
        >>> c.shape
        tensorlib.Size([1, 1, 3])
        """
        return self._forward(input, hx, True)


class GRU(RNNBase):
    """Gated recurrent unit: gates r, z, n (in that order), n_t = tanh(W_in x + b_in +
    r * (W_hn h + b_hn)), h_t = (1 - z) * n_t + z * h_{t-1}. ``forward(input, h0=None)``
    returns ``(output, h_n)``.

    >>> gru = tensorlib.nn.GRU(3, 5, batch_first=True)
    >>> out, h = gru(tensorlib.zeros(2, 4, 3))
    >>> out.shape, h.shape
    (tensorlib.Size([2, 4, 5]), tensorlib.Size([1, 2, 5]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if kwargs:
            raise TypeError(f"GRU.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype)


# ------------------------------------------------------------------------------- the cells
class RNNCellBase(Module):
    """The common part of the cells: ``weight_ih`` (gates * hidden, input), ``weight_hh``
    (gates * hidden, hidden), ``bias_ih``/``bias_hh``, initialised from
    U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).

    >>> cell = tensorlib.nn.GRUCell(2, 3)
    >>> tuple(cell.weight_ih.shape), tuple(cell.bias_hh.shape)
    ((9, 2), (9,))
    """

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        like = dict(device=device, dtype=dtype)
        self.weight_ih = Parameter(tensorlib.empty((num_chunks * hidden_size, input_size),
                                                   **like))
        self.weight_hh = Parameter(tensorlib.empty((num_chunks * hidden_size, hidden_size),
                                                   **like))
        if bias:
            self.bias_ih = Parameter(tensorlib.empty(num_chunks * hidden_size, **like))
            self.bias_hh = Parameter(tensorlib.empty(num_chunks * hidden_size, **like))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        """The constructor arguments that differ from their defaults.

        >>> tensorlib.nn.RNNCell(2, 3, nonlinearity="relu").extra_repr()
        '2, 3, nonlinearity=relu'
        """
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        """Draw every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).

        >>> cell = tensorlib.nn.RNNCell(2, 4)
        >>> cell.reset_parameters()
        >>> bool(cell.weight_ih.abs().max() <= 0.5)
        True
        """
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def _check_dims(self, input, hxs):
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        for h in hxs:
            if h is not None and h.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {h.dim()}D "
                                 "instead")
        return input.dim() == 2

    def _check_sizes(self, input, hxs):
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} "
                               f"expected {self.input_size}")
        for k, h in enumerate(hxs):
            if input.size(0) != h.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match "
                                   f"hidden{k} batch size {h.size(0)}")
            if h.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got "
                                   f"{h.size(1)}, expected {self.hidden_size}")
        if input.dtype != self.weight_ih.dtype:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                               f"{_TYPE_NAME.get(input.dtype, input.dtype)} and "
                               f"{_TYPE_NAME.get(self.weight_ih.dtype, self.weight_ih.dtype)}")

    def _state(self, input, hx, batched, extra=1):
        if hx is None:
            z = tensorlib.zeros(input.size(0), self.hidden_size, dtype=input.dtype,
                                device=input.device)
            return [z] * extra
        return [h if batched else h.unsqueeze(0) for h in hx]


class RNNCell(RNNCellBase):
    """One Elman RNN step: h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh).

    >>> cell = tensorlib.nn.RNNCell(3, 2, nonlinearity="relu")
    >>> cell(tensorlib.zeros(4, 3)).shape
    tensorlib.Size([4, 2])
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        """h' for ``input`` (B, in) or (in,) from ``hx`` (zeros by default).

        >>> tensorlib.nn.RNNCell(2, 3)(tensorlib.zeros(2), tensorlib.zeros(3)).shape
        tensorlib.Size([3])
        """
        batched = self._check_dims(input, [hx])
        if not batched:
            input = input.unsqueeze(0)
        (h,) = self._state(input, None if hx is None else [hx], batched)
        self._check_sizes(input, [h])
        if self.nonlinearity == "tanh":
            act = tensorlib.tanh
        elif self.nonlinearity == "relu":
            act = tensorlib.relu
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        xp = _input_projection("RNN_TANH", input, self.weight_ih, self.bias_ih, self.bias_hh)
        out, _ = _rnn_step(act)(xp, h, None, self.weight_hh.t(), self.bias_hh, None)
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: returns ``(h', c')`` for input (B, in) or (in,) and an optional
    ``(h, c)``.

    >>> h, c = tensorlib.nn.LSTMCell(3, 2)(tensorlib.zeros(3))
    >>> h.shape, c.shape
    (tensorlib.Size([2]), tensorlib.Size([2]))
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        """``(h', c')`` for ``input`` from ``hx = (h, c)`` (zeros by default).

        >>> h, c = tensorlib.nn.LSTMCell(2, 3)(tensorlib.zeros(4, 2))
        >>> h.shape
        tensorlib.Size([4, 3])
        """
        batched = self._check_dims(input, [] if hx is None else list(hx))
        if not batched:
            input = input.unsqueeze(0)
        h, c = self._state(input, hx, batched, extra=2)
        self._check_sizes(input, [h, c])
        xp = _input_projection("LSTM", input, self.weight_ih, self.bias_ih, self.bias_hh)
        h, c = _lstm_step(xp, h, c, self.weight_hh.t(), self.bias_hh, None)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: returns h' for input (B, in) or (in,) and an optional h.

    >>> tensorlib.nn.GRUCell(3, 2)(tensorlib.zeros(5, 3)).shape
    tensorlib.Size([5, 2])
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        """h' for ``input`` (B, in) or (in,) from ``hx`` (zeros by default).

        >>> tensorlib.nn.GRUCell(2, 3)(tensorlib.zeros(5, 2)).shape
        tensorlib.Size([5, 3])
        """
        batched = self._check_dims(input, [hx])
        if not batched:
            input = input.unsqueeze(0)
        (h,) = self._state(input, None if hx is None else [hx], batched)
        self._check_sizes(input, [h])
        xp = _input_projection("GRU", input, self.weight_ih, self.bias_ih, self.bias_hh)
        out, _ = _gru_step(xp, h, None, self.weight_hh.t(), self.bias_hh, None)
        return out if batched else out.squeeze(0)
