"""Recording one forward call as a list of op calls (the tracer the op layer reports to).

While a ``_Recorder`` is installed (``tensorlib._core.tensor._set_tracer``), every top-level
op call (a generated op wrapper, a subscript) is reported with its arguments and its result;
ops an op runs inside itself are not. Tensors are keyed by identity: each argument becomes a
``Ref`` to a value (a graph input, a parameter or buffer of the model, a constant met for the
first time, or an earlier call's output), each output a new value; an in-place op binds its
tensor to a new value, so the list reads as SSA.

A value is *static* when it depends on no graph input (parameters, constants, what is computed
from them only): the exporter folds those into initializers from the snapshot taken here.
"""
import numpy as _np

from tensorlib._core import tensor as _C

__all__ = []

INPUT, PARAM, CONST, OP = "input", "param", "const", "op"


class Ref:
    """A tensor argument of a recorded call: the index of a value."""
    __slots__ = ("idx",)

    def __init__(self, idx):
        self.idx = idx

    def __repr__(self):
        return f"Ref({self.idx})"


class Value:
    """One tensor value of the trace: its kind, shape and dtype, whether it depends on a graph
    input, and (for static values) a snapshot of its data."""
    __slots__ = ("kind", "name", "shape", "dtype", "dynamic", "data", "tensor")

    def __init__(self, kind, t, name=None, dynamic=False, snapshot=False):
        self.kind, self.name = kind, name
        self.shape, self.dtype = tuple(t.shape), t.dtype
        self.dynamic = dynamic
        self.tensor = t                 # kept alive: ids stay unique while tracing
        self.data = _snapshot(t) if snapshot else None


def _storage_ptr(t):
    return t.untyped_storage().data_ptr()


def _snapshot(t):
    return _np.array(t.detach().cpu().numpy(), copy=True)


class Call:
    """One recorded op call: ``op``, ``args`` (name -> argument, tensors as ``Ref``),
    ``outs`` (the result, tensors as ``Ref``), ``static`` (no graph input reaches it)."""
    __slots__ = ("op", "args", "outs", "static", "module")

    def __init__(self, op, args, outs, static, module=None):
        self.op, self.args, self.outs, self.static, self.module = op, args, outs, static, module

    def refs(self):
        """The indices of the values this call reads."""
        out = []
        _collect(self.args, out)
        return out

    def out_refs(self):
        out = []
        _collect(self.outs, out)
        return out

    def __repr__(self):
        return f"Call({self.op})"


def _collect(x, out):
    if isinstance(x, Ref):
        out.append(x.idx)
    elif isinstance(x, dict):
        for v in x.values():
            _collect(v, out)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _collect(v, out)


class Recorder:
    """The tracer installed while the forward runs (see the module docstring)."""

    def __init__(self, params):
        self.params = params            # id(tensor) -> qualified name
        self.values = []
        self.cur = {}                   # id(tensor) -> index of its current value
        self.calls = []
        self.dynamic_storage = set()    # storages holding values computed from the inputs
        self.stale = {}                 # value index -> the in-place op that overwrote it

    # ---- values ---------------------------------------------------------------------------
    def _new(self, value):
        if value.dynamic and value.tensor.numel():
            self.dynamic_storage.add(_storage_ptr(value.tensor))
        self.values.append(value)
        self.cur[id(value.tensor)] = len(self.values) - 1
        return Ref(len(self.values) - 1)

    def add_input(self, t, name):
        return self._new(Value(INPUT, t, name, dynamic=True))

    def ref(self, t):
        idx = self.cur.get(id(t))
        if idx is not None:
            if idx in self.stale:
                from tensorlib.onnx import OnnxExporterError
                raise OnnxExporterError(
                    f"export: a tensor of shape {list(t.shape)} is read after an in-place op "
                    f"('{self.stale[idx]}') wrote to memory it shares; ONNX values cannot "
                    f"alias, clone before writing in place to export this")
            return Ref(idx)
        name = self.params.get(id(t))
        if name is not None:
            return self._new(Value(PARAM, t, name, snapshot=True))
        if t.numel() and _storage_ptr(t) in self.dynamic_storage:
            # it shares memory with a value computed from the inputs, yet no reported op made
            # it: taking it as a constant would freeze an input-dependent value
            from tensorlib.onnx import OnnxExporterError
            raise OnnxExporterError(
                f"export: a tensor of shape {list(t.shape)} shares memory with a traced value "
                f"but was not made by an op the exporter saw; it cannot be exported")
        return self._new(Value(CONST, t, snapshot=True))

    def _arg(self, x):
        if isinstance(x, _C.TensorBase):
            return self.ref(x)
        if isinstance(x, (list, tuple)) and any(isinstance(v, _C.TensorBase) for v in x):
            # (a subscript's tuple stays a tuple: x[:, t] is not x[[..., t]])
            conv = [self._arg(v) for v in x]
            return tuple(conv) if isinstance(x, tuple) else conv
        return x

    def _out(self, x, static):
        if isinstance(x, _C.TensorBase):
            return self._new(Value(OP, x, dynamic=not static, snapshot=static))
        if isinstance(x, (list, tuple)):
            return [self._out(v, static) for v in x]
        return x

    # ---- the tracer protocol --------------------------------------------------------------
    def record(self, op, names, args, result, module=None):
        conv = {n: self._arg(a) for n, a in zip(names, args)}
        refs = []
        _collect(conv, refs)
        static = not any(self.values[i].dynamic for i in refs)
        if isinstance(result, _C.TensorBase) and any(a is result for a in args):
            # an in-place op (or out=): the other values over this memory are now stale
            ptr = _storage_ptr(result) if result.numel() else None
            for i, v in enumerate(self.values):
                if ptr is not None and v.tensor is not result and v.tensor.numel() and \
                        _storage_ptr(v.tensor) == ptr:
                    self.stale[i] = op
        outs = self._out(result, static)
        self.calls.append(Call(op, conv, outs, static, module))
