"""The exporter: trace (once, or twice when axes are dynamic), fold, translate, write.

Dynamic axes are found by tracing twice: the second time every dynamic axis of the inputs is
grown (by 1 for the first name, 2 for the second, ...). A shape entry that is the same in both
traces is a constant of the graph; one that differs depends on a dynamic axis and is computed
at run time (copied from the input's dim with Reshape's 0, inferred with -1, or read with
Shape). Both traces must run the same ops.
"""
import os

import tensorlib as _t
from tensorlib._core import tensor as _C
from tensorlib.onnx import (OnnxExporterError, UnsupportedOperatorError, MIN_OPSET, MAX_OPSET,
                            DEFAULT_OPSET, _state)
from tensorlib.onnx import _trace

__all__ = ["export"]


def _import_onnx():
    try:
        import onnx
    except ImportError as e:
        raise ImportError("tensorlib.onnx.export needs the 'onnx' package, which is not "
                          "installed (pip install onnx)") from e
    return onnx


def _flatten(x, out):
    if isinstance(x, _C.TensorBase):
        out.append(x)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _flatten(v, out)
    elif x is not None and not isinstance(x, (int, float, bool, str)):
        raise OnnxExporterError(f"export: the model returned a {type(x).__name__}; only "
                                f"tensors and (nested) tuples or lists of them can be exported")
    return out


def _axes_spec(dynamic_axes, names):
    """name -> {axis: symbol} from torch's two spellings (a dict or a list of axes)."""
    spec = {}
    for name, axes in (dynamic_axes or {}).items():
        if name not in names:
            raise ValueError(f"dynamic_axes: '{name}' is not one of the input or output names "
                             f"{sorted(names)}")
        if isinstance(axes, dict):
            spec[name] = {int(a): str(s) for a, s in axes.items()}
        elif isinstance(axes, (list, tuple)):
            spec[name] = {int(a): f"{name}_dynamic_axes_{i + 1}" for i, a in enumerate(axes)}
        else:
            raise TypeError(f"dynamic_axes['{name}'] must be a dict or a list of axes, not "
                            f"{type(axes).__name__}")
    return spec


def _grow(t, axes, delta):
    """``t`` with each axis of ``axes`` made ``delta[symbol]`` longer (its rows repeated)."""
    for axis, sym in axes.items():
        n = t.shape[axis]
        if n == 0:
            raise OnnxExporterError(f"export: dynamic axis {axis} of an input has size 0")
        idx = _t.arange(n + delta[sym]) % n
        t = t.index_select(axis, idx)
    return t


class _RnnHooks:
    """Forward hooks that make each LSTM/GRU/RNN module one recorded call (run as a whole
    with op reporting off): ONNX has these layers as ops."""

    def __init__(self, model, rec):
        self.rec, self.handles, self.stack = rec, [], []
        mods = model.modules() if isinstance(model, _t.nn.Module) else ()
        for m in mods:
            if isinstance(m, (_t.nn.LSTM, _t.nn.GRU, _t.nn.RNN)):
                self.handles.append(m.register_forward_pre_hook(self.pre, with_kwargs=True))
                self.handles.append(m.register_forward_hook(self.post, with_kwargs=True))

    def pre(self, module, args, kwargs):
        hx = args[1] if len(args) > 1 else kwargs.get("hx")
        self.stack.append((args[0], hx, _C._tracing_suspended(True)))

    def post(self, module, args, kwargs, output):
        x, hx, was_on = self.stack.pop()
        if was_on:
            mode = ("lstm" if isinstance(module, _t.nn.LSTM) else
                    "gru" if isinstance(module, _t.nn.GRU) else "rnn")
            self.rec.record(mode, ("input", "hx"), (x, hx), output, module=module)
        _C._tracing_suspended(not was_on)

    def remove(self):
        for h in self.handles:
            h.remove()


def _run_traced(model, args, params, input_names):
    rec = _trace.Recorder(params)
    for t, name in zip(args, input_names):
        if isinstance(t, _C.TensorBase):
            rec.add_input(t, name)
    hooks = _RnnHooks(model, rec)
    _state.exporting = getattr(_state, "exporting", 0) + 1
    prev = _C._set_tracer(rec)
    try:
        with _t.no_grad():
            result = model(*args)
    finally:
        _C._set_tracer(prev)
        _state.exporting -= 1
        hooks.remove()
    outs = _flatten(result, [])
    out_refs = [rec.ref(o).idx for o in outs]
    return rec, out_refs


def export(model, args, f, input_names=None, output_names=None, dynamic_axes=None,
           opset_version=None, verbose=False):
    opset = DEFAULT_OPSET if opset_version is None else opset_version
    if not isinstance(opset, int) or isinstance(opset, bool) or not (
            MIN_OPSET <= opset <= MAX_OPSET):
        raise ValueError(f"tensorlib.onnx.export supports opset_version {MIN_OPSET} to "
                         f"{MAX_OPSET}, got {opset_version!r}")
    onnx = _import_onnx()
    if not isinstance(args, tuple):
        args = (args,)
    tensor_pos = [i for i, a in enumerate(args) if isinstance(a, _C.TensorBase)]
    if input_names is None:
        input_names = ["input"] if len(tensor_pos) == 1 else [
            f"input_{k}" for k in range(len(tensor_pos))]
    input_names = list(input_names)
    if len(input_names) > len(tensor_pos):
        raise ValueError(f"export: {len(input_names)} input_names for {len(tensor_pos)} "
                         f"tensor inputs")
    input_names += [f"input_{k}" for k in range(len(input_names), len(tensor_pos))]
    names_by_pos = dict(zip(tensor_pos, input_names))
    arg_names = [names_by_pos.get(i) for i in range(len(args))]

    params = {}
    if isinstance(model, _t.nn.Module):
        for name, p in model.named_parameters():
            params.setdefault(id(p), name)
        for name, b in model.named_buffers():
            if b is not None:
                params.setdefault(id(b), name)
    was_training = getattr(model, "training", None)
    if was_training:
        model.eval()
    try:
        rec1, outs1 = _run_traced(model, args, params, arg_names)
        n_out = len(outs1)
        if output_names is None:
            output_names = ["output"] if n_out == 1 else [f"output_{k}" for k in range(n_out)]
        output_names = list(output_names)
        if len(output_names) > n_out:
            raise ValueError(f"export: {len(output_names)} output_names for {n_out} outputs")
        output_names += [f"output_{k}" for k in range(len(output_names), n_out)]
        spec = _axes_spec(dynamic_axes, set(input_names) | set(output_names))
        rec2, outs2 = rec1, outs1
        in_spec = {n: a for n, a in spec.items() if n in input_names}
        if in_spec:
            symbols = sorted({s for axes in in_spec.values() for s in axes.values()})
            delta = {s: i + 1 for i, s in enumerate(symbols)}
            args2 = list(args)
            for i, a in enumerate(args):
                name = arg_names[i]
                if name in in_spec:
                    for axis in in_spec[name]:
                        if not -a.dim() <= axis < a.dim():
                            raise ValueError(f"dynamic_axes: axis {axis} of '{name}' is out of "
                                             f"range for its {a.dim()} dims")
                    axes = {ax % a.dim(): s for ax, s in in_spec[name].items()}
                    args2[i] = _grow(a, axes, delta)
            try:
                rec2, outs2 = _run_traced(model, tuple(args2), params, arg_names)
            except (UnsupportedOperatorError, ImportError):
                raise
            except Exception as e:
                raise OnnxExporterError(
                    f"export: the model failed when run with other sizes on its dynamic axes "
                    f"({type(e).__name__}: {e}); those axes cannot be dynamic") from e
            ops1 = [c.op for c in rec1.calls]
            ops2 = [c.op for c in rec2.calls]
            if ops1 != ops2 or len(outs1) != len(outs2) or len(rec1.values) != len(
                    rec2.values):
                raise OnnxExporterError(
                    "export: the forward runs different ops when the size of a dynamic axis "
                    "changes; it cannot be exported with those dynamic axes")
    finally:
        if was_training:
            model.train(True)

    from tensorlib.onnx._symbolic import Graph
    g = Graph(onnx, opset, rec1, rec2, spec)
    g.emit(outs1, outs2, input_names, output_names,
           [a for a in args if isinstance(a, _C.TensorBase)])
    model_proto = g.model(producer=f"tensorlib {_t.__version__}")
    onnx.checker.check_model(model_proto)
    if verbose:
        print(onnx.helper.printable_graph(model_proto.graph))
    data = model_proto.SerializeToString()
    if isinstance(f, (str, bytes, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(data)
    elif hasattr(f, "write"):
        f.write(data)
    else:
        raise TypeError(f"export: f must be a path or a binary file object, not "
                        f"{type(f).__name__}")
    return model_proto
