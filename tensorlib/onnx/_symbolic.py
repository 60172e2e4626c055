"""Translation of recorded op calls into ONNX nodes: one function per tensorlib op.

Each translation gets a ``Ctx``: the call's arguments (as recorded in the first trace and in
the second, grown one), the ONNX names of its tensor arguments and of its outputs, and the
``Graph`` to add nodes and constants to. An op with no entry in ``SYMBOLIC`` raises
``UnsupportedOperatorError`` naming it.
"""
import math

import numpy as np

import tensorlib as _t
from tensorlib.onnx import OnnxExporterError, UnsupportedOperatorError
from tensorlib.onnx._trace import Ref, INPUT, PARAM

__all__ = ["Graph", "SYMBOLIC"]

_DT = {"float32": "FLOAT", "float64": "DOUBLE", "float16": "FLOAT16", "bfloat16": "BFLOAT16",
       "int64": "INT64", "int32": "INT32", "int16": "INT16", "int8": "INT8", "uint8": "UINT8",
       "bool": "BOOL"}
_NP = {"float32": np.float32, "float64": np.float64, "float16": np.float16, "int64": np.int64,
       "int32": np.int32, "int16": np.int16, "int8": np.int8, "uint8": np.uint8,
       "bool": np.bool_}
I64_MAX = 2 ** 63 - 1


def _dtname(dt):
    return str(dt).rsplit(".", 1)[-1]


class Graph:
    """The ONNX graph being built from the two traces."""

    def __init__(self, onnx, opset, rec1, rec2, spec):
        self.onnx, self.opset, self.rec1, self.rec2, self.spec = onnx, opset, rec1, rec2, spec
        self.nodes, self.inits, self.names, self.used = [], [], {}, set()
        self.counter = 0

    # ---- names and constants --------------------------------------------------------------
    def fresh(self, hint):
        self.counter += 1
        name = f"{hint}_{self.counter}"
        while name in self.used:
            self.counter += 1
            name = f"{hint}_{self.counter}"
        self.used.add(name)
        return name

    def elem(self, dtype):
        key = _DT.get(_dtname(dtype))
        if key is None:
            raise OnnxExporterError(f"export: dtype {dtype} has no ONNX type")
        return getattr(self.onnx.TensorProto, key)

    def const(self, arr, hint="const"):
        arr = np.asarray(arr)
        name = self.fresh(hint)
        self.inits.append(self.onnx.numpy_helper.from_array(arr, name))
        return name

    def i64(self, values, hint="ints"):
        return self.const(np.asarray(values, dtype=np.int64), hint)

    def scalar(self, value, dtype, hint="scalar"):
        npdt = _NP.get(_dtname(dtype))
        if npdt is None:
            raise OnnxExporterError(f"export: constants of dtype {dtype} are not supported")
        return self.const(np.asarray(value, dtype=npdt), hint)

    def node(self, op_type, inputs, n_out=1, hint=None, outputs=None, **attrs):
        if outputs is None:
            outputs = [self.fresh(hint or op_type.lower()) for _ in range(n_out)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(self.onnx.helper.make_node(op_type, list(inputs), list(outputs),
                                                     **attrs))
        return outputs[0] if len(outputs) == 1 else outputs

    def name(self, idx):
        """The ONNX name of value ``idx`` (making its initializer on first use)."""
        n = self.names.get(idx)
        if n is not None:
            return n
        v = self.rec1.values[idx]
        if v.kind == INPUT:
            raise AssertionError("graph inputs are named before translation")
        if v.dynamic:
            raise OnnxExporterError("export: a traced value is read before it is computed")
        v2 = self.rec2.values[idx]
        if self.varying(idx):
            n = self._filled(idx, v, v2)
            if n is None:
                op = self.producer.get(idx)
                raise OnnxExporterError(
                    f"export: a tensor of shape {list(v.shape)}"
                    + (f" made by '{op}'" if op else "") + " from no input depends on the "
                    f"size of a dynamic axis (it is {list(v2.shape)} or holds other values in "
                    f"the other trace); make it from an input (e.g. zeros_like) to export "
                    f"with dynamic axes")
            self.names[idx] = n
            return n
        if v.data is None:
            raise OnnxExporterError("export: a constant has no recorded value")
        hint = v.name if v.kind == PARAM else self._const_hint(idx)
        if v.kind == PARAM and v.name not in self.used:
            n = v.name
            self.used.add(n)
            self.inits.append(self.onnx.numpy_helper.from_array(np.asarray(v.data), n))
        else:
            n = self.const(v.data, hint)
        self.names[idx] = n
        return n

    def _const_hint(self, idx):
        """A folded value made from a parameter is named after it (``0.weight_t``)."""
        call = self.producer_call.get(idx)
        if call is not None:
            for i in call.refs():
                src = self.rec1.values[i]
                if src.kind == PARAM:
                    return f"{src.name}_{call.op}"
        return "const"

    def varying(self, idx):
        """Whether a value computed from no input differs between the two traces (it then
        depends on the size of a dynamic axis and cannot be a constant)."""
        if self.rec2 is self.rec1:
            return False
        v, v2 = self.rec1.values[idx], self.rec2.values[idx]
        if v.shape != v2.shape:
            return True
        return v.data is not None and v2.data is not None and not np.array_equal(
            v.data, v2.data, equal_nan=v.data.dtype.kind == "f")

    def _filled(self, idx, v, v2):
        """``zeros(x.shape[0], ...)`` and kin: a tensor filled with one value whose shape
        follows the inputs' dims, made at run time (None when ``idx`` is not one)."""
        if self.producer.get(idx) not in _FILLS or v.data is None or v2.data is None:
            return None
        f1, f2 = np.asarray(v.data).reshape(-1), np.asarray(v2.data).reshape(-1)
        empty = self.producer[idx] in ("empty", "new_empty", "empty_like")
        if not empty:
            if not (f1.size and f2.size and (f1 == f1[0]).all() and (f2 == f1[0]).all()):
                return None
        fill = 0 if empty else f1[0]
        value = self.onnx.numpy_helper.from_array(
            np.asarray([fill], dtype=np.asarray(v.data).dtype), "value")
        shape = self.shape_tensor(v.shape, v2.shape, fill_unknown=None)
        return self.node("ConstantOfShape", [shape], value=value, hint="filled")

    def _same_numbers(self, c1, c2):
        """The Python numbers of a call must not change with a dynamic axis: the graph would
        fix them at the traced size."""
        for name, a in c1.args.items():
            b = c2.args.get(name)
            if _numbers(a) != _numbers(b):
                raise OnnxExporterError(
                    f"export: the argument '{name}' of '{c1.op}' depends on the size of a "
                    f"dynamic axis ({_numbers(a)} in one trace, {_numbers(b)} in the other); "
                    f"the graph would fix it at the traced size")

    # ---- shapes that may depend on dynamic axes ---------------------------------------------
    def shape_tensor(self, s1, s2, src=None, src1=None, src2=None, fill_unknown=-1):
        """An int64 shape of entries ``s1`` (first trace) / ``s2`` (second): equal entries
        are constants; an entry equal to the same dim of ``src`` in both traces is that dim
        (0 for Reshape, 1 for Expand: ``fill_unknown`` decides); one other entry may be
        inferred (-1, Reshape only); any other is read from a graph input's Shape."""
        entries, unknown = [], []
        for j, (a, b) in enumerate(zip(s1, s2)):
            if a == b:
                entries.append(("c", a))
            elif src1 is not None and j < len(src1) and src1[j] == a and src2[j] == b:
                entries.append(("copy", j))
            else:
                entries.append(("u", j))
                unknown.append(j)
        if fill_unknown == -1 and len(unknown) == 1:
            entries[unknown[0]] = ("c", -1)
            unknown = []
        if not unknown and all(k == "c" or fill_unknown is not None for k, _ in entries):
            fill = 0 if fill_unknown == -1 else 1
            return self.i64([v if k == "c" else fill for k, v in entries], "shape")
        parts = []
        for j, (k, v) in enumerate(entries):
            if k == "c":
                parts.append(self.i64([v], "dim"))
            elif k == "copy":
                parts.append(self.dim_of(src, v))
            else:
                parts.append(self.input_dim(s1[j], s2[j]))
        return self.node("Concat", parts, axis=0, hint="shape")

    def dim_of(self, x, j):
        shape = self.node("Shape", [x])
        return self.node("Gather", [shape, self.i64([j])], axis=0, hint="dim")

    def input_dim(self, a, b):
        """A 1-element int64 tensor holding the run-time size that was ``a`` in the first trace
        and ``b`` in the second: a dim of a graph input, or the product of a dim and a
        constant."""
        for idx, name in self.inputs:
            for j, (d1, d2) in enumerate(zip(self.rec1.values[idx].shape,
                                             self.rec2.values[idx].shape)):
                if d1 != d2 and d1 and a * d2 == b * d1 and a % d1 == 0:
                    dim = self.dim_of(name, j)
                    if a == d1:
                        return dim
                    return self.node("Mul", [dim, self.i64([a // d1])], hint="dim")
        raise OnnxExporterError(f"export: a shape entry ({a}) depends on a dynamic axis in a "
                                f"way the exporter cannot express")

    # ---- the whole graph --------------------------------------------------------------------
    def emit(self, outs1, outs2, input_names, output_names, inputs):
        onnx, helper = self.onnx, self.onnx.helper
        self.inputs = []
        graph_inputs = []
        for idx, v in enumerate(self.rec1.values):
            if v.kind == INPUT and v.name is not None and v.name not in self.used:
                self.names[idx] = v.name
                self.used.add(v.name)
                self.inputs.append((idx, v.name))
                axes = self.spec.get(v.name, {})
                axes = {a % max(len(v.shape), 1): s for a, s in axes.items()}
                dims = [axes.get(j, d) for j, d in enumerate(v.shape)]
                graph_inputs.append(helper.make_tensor_value_info(v.name, self.elem(v.dtype),
                                                                  dims))
        self.used.update(output_names)
        live = set(outs1)
        calls = self.rec1.calls
        self.producer_call = {i: c for c in calls for i in c.out_refs()}
        self.producer = {i: c.op for i, c in self.producer_call.items()}
        todo = []
        for k in range(len(calls) - 1, -1, -1):
            c = calls[k]
            if not any(i in live for i in c.out_refs()):
                continue
            # a call on constants only is folded, unless what it makes follows a dynamic axis
            # (mm of zeros(batch, H) and a weight); filled tensors are made by name()
            if c.static and (c.op in _FILLS or not any(self.varying(i)
                                                       for i in c.out_refs())):
                continue
            todo.append(k)
            live.update(c.refs())
        for k in reversed(todo):
            c1, c2 = calls[k], self.rec2.calls[k]
            fn = SYMBOLIC.get(c1.op)
            if fn is None and c1.static:
                raise OnnxExporterError(
                    f"export: '{c1.op}' makes a tensor from Python numbers that depends on the "
                    f"size of a dynamic axis; make it from an input to export with dynamic "
                    f"axes")
            if fn is None:
                raise UnsupportedOperatorError(c1.op)
            if c1.op not in _SHAPE_ARGS_OK:
                self._same_numbers(c1, c2)
            ctx = Ctx(self, c1, c2, live)
            fn(ctx)
            for j, idx in enumerate(c1.out_refs()):
                if idx in live and idx not in self.names:
                    raise UnsupportedOperatorError(c1.op, f"its output {j} cannot be exported")
        graph_outputs = []
        for k, (idx, idx2, name) in enumerate(zip(outs1, outs2, output_names)):
            self.node("Identity", [self.name(idx)], outputs=[name])
            v1, v2 = self.rec1.values[idx], self.rec2.values[idx2]
            named = self.spec.get(name, {})
            for a in named:
                if not -len(v1.shape) <= a < len(v1.shape):
                    raise ValueError(f"dynamic_axes: axis {a} of '{name}' is out of range for "
                                     f"its {len(v1.shape)} dims")
            named = {a % max(len(v1.shape), 1): s for a, s in named.items()}
            dims = []
            for j, (a, b) in enumerate(zip(v1.shape, v2.shape)):
                dims.append(named.get(j, a if a == b else f"{name}_dim_{j}"))
            graph_outputs.append(helper.make_tensor_value_info(name, self.elem(v1.dtype), dims))
        self.graph = helper.make_graph(self.nodes, "tensorlib", graph_inputs, graph_outputs,
                                       self.inits)

    def model(self, producer):
        helper = self.onnx.helper
        opsets = [helper.make_opsetid("", self.opset)]
        m = helper.make_model(self.graph, producer_name=producer, opset_imports=opsets)
        # the oldest IR version that has the opset: runtimes older than the onnx package
        # still load the file
        m.ir_version = max(helper.find_min_ir_version_for(opsets), 8)
        return m


_FILLS = ("zeros", "ones", "full", "empty", "new_zeros", "new_ones", "new_full",
          "new_empty", "zeros_like", "ones_like", "full_like", "empty_like")


# ops whose number arguments may follow a dynamic axis: their shapes are taken from the two
# traces' outputs (or checked by the translation itself)
_SHAPE_ARGS_OK = ("reshape", "view", "flatten", "unflatten", "squeeze", "unsqueeze", "squeeze_",
                  "unsqueeze_", "_unsafe_view", "view_as", "reshape_as", "expand", "new_zeros",
                  "new_ones", "new_full", "new_empty", "getitem", "lstm", "gru", "rnn",
                  "native_group_norm")


def _numbers(x):
    """The non-tensor part of an argument (tensors as a placeholder)."""
    if isinstance(x, Ref):
        return "<tensor>"
    if isinstance(x, (list, tuple)):
        return tuple(_numbers(v) for v in x)
    if isinstance(x, slice):
        return ("slice", x.start, x.stop, x.step)
    return x


class Ctx:
    """One recorded call being translated (see the module docstring)."""

    def __init__(self, g, c1, c2, live):
        self.g, self.c1, self.c2, self.live = g, c1, c2, live
        self.op = c1.op

    def a(self, name, default=None):
        v = self.c1.args.get(name, default)
        return default if v is None else v

    def a2(self, name, default=None):
        v = self.c2.args.get(name, default)
        return default if v is None else v

    def has(self, name):
        return isinstance(self.c1.args.get(name), Ref)

    def x(self, name):
        r = self.c1.args[name]
        if not isinstance(r, Ref):
            raise UnsupportedOperatorError(self.op, f"argument '{name}' is not a tensor")
        return self.g.name(r.idx)

    def xs(self, name):
        return [self.g.name(r.idx) for r in self.c1.args[name]]

    def val(self, name):
        return self.g.rec1.values[self.c1.args[name].idx]

    def val2(self, name):
        return self.g.rec2.values[self.c2.args[name].idx]

    def outs(self):
        return self.c1.out_refs()

    def out_val(self, k=0):
        return self.g.rec1.values[self.c1.out_refs()[k]]

    def out_val2(self, k=0):
        return self.g.rec2.values[self.c2.out_refs()[k]]

    def is_live(self, k):
        return self.c1.out_refs()[k] in self.live

    def set_out(self, name, k=0):
        self.g.names[self.c1.out_refs()[k]] = name
        return name

    def out_name(self, k=0):
        idx = self.c1.out_refs()[k]
        n = self.g.fresh(f"{self.op.strip('_')}_{idx}")
        self.g.names[idx] = n
        return n

    def node(self, op_type, inputs, k=0, **attrs):
        """A node whose (single) output is the call's output ``k``."""
        return self.g.node(op_type, inputs, outputs=[self.out_name(k)], **attrs)

    def operand(self, name, dtype):
        """Argument ``name`` as an ONNX value of ``dtype`` (a Python number becomes a
        constant; a tensor of another dtype is cast)."""
        v = self.c1.args.get(name)
        if isinstance(v, Ref):
            n = self.g.name(v.idx)
            if _dtname(self.g.rec1.values[v.idx].dtype) != _dtname(dtype):
                n = self.g.node("Cast", [n], to=self.g.elem(dtype))
            return n
        if isinstance(v, (bool, int, float)):
            return self.g.scalar(v, dtype)
        raise UnsupportedOperatorError(self.op, f"argument '{name}' of type {type(v).__name__}")

    def fail(self, detail):
        raise UnsupportedOperatorError(self.op, detail)


SYMBOLIC = {}


def sym(*names):
    def deco(fn):
        for n in names:
            SYMBOLIC[n] = fn
        return fn
    return deco


def _dim(d, n):
    return d + n if d < 0 else d


def _ints(v, n=None):
    if isinstance(v, (list, tuple)):
        if n and len(v) == 1:
            return [int(v[0])] * n
        return [int(x) for x in v]
    return [int(v)] * (n or 1)


# ---- views and copies ---------------------------------------------------------------------

@sym("detach", "contiguous", "clone", "alias", "dropout_eval")
def _identity(c):
    c.node("Identity", [c.x("self")])


@sym("_to_copy")
def _to_copy(c):
    c.node("Cast", [c.x("self")], to=c.g.elem(c.out_val().dtype))


@sym("t")
def _t_(c):
    if len(c.val("self").shape) < 2:
        return c.node("Identity", [c.x("self")])
    c.node("Transpose", [c.x("self")], perm=[1, 0])


@sym("transpose", "swapaxes", "swapdims")
def _transpose(c):
    n = len(c.val("self").shape)
    if n < 2:
        return c.node("Identity", [c.x("self")])
    perm = list(range(n))
    d0, d1 = _dim(c.a("dim0"), n), _dim(c.a("dim1"), n)
    perm[d0], perm[d1] = perm[d1], perm[d0]
    c.node("Transpose", [c.x("self")], perm=perm)


@sym("permute")
def _permute(c):
    n = len(c.val("self").shape)
    c.node("Transpose", [c.x("self")], perm=[_dim(d, n) for d in _ints(c.a("dims"))])


@sym("reshape", "view", "flatten", "unflatten", "squeeze", "unsqueeze", "squeeze_",
     "unsqueeze_", "_unsafe_view", "view_as", "reshape_as")
def _reshape(c):
    s1, s2 = c.out_val().shape, c.out_val2().shape
    i1, i2 = c.val("self").shape, c.val2("self").shape
    x = c.x("self")
    shape = c.g.shape_tensor(s1, s2, x, i1, i2, fill_unknown=-1)
    c.node("Reshape", [x, shape])


@sym("expand")
def _expand(c):
    s1, s2 = c.out_val().shape, c.out_val2().shape
    i1, i2 = c.val("self").shape, c.val2("self").shape
    off = len(s1) - len(i1)
    # an input dim that is kept is given as 1 (Expand broadcasts from the input)
    a1 = (None,) * off + tuple(i1)
    a2 = (None,) * off + tuple(i2)
    shape = c.g.shape_tensor(s1, s2, c.x("self"), a1, a2, fill_unknown=1)
    c.node("Expand", [c.x("self"), shape])


@sym("expand_as")
def _expand_as(c):
    c.node("Expand", [c.x("self"), c.g.node("Shape", [c.x("other")])])


def _slice(g, x, dim, start, end, step=1):
    return g.node("Slice", [x, g.i64([start]), g.i64([end]), g.i64([dim]), g.i64([step])])


def _static_size(c, name, dim):
    a, b = c.val(name).shape[dim], c.val2(name).shape[dim]
    if a != b:
        c.fail(f"it splits dim {dim}, whose size is dynamic")
    return a


@sym("narrow")
def _narrow(c):
    n = len(c.val("self").shape)
    d = _dim(c.a("dim"), n)
    start = c.a("start")
    if isinstance(start, Ref):
        c.fail("a tensor start")
    size = c.val("self").shape[d]
    start = start + size if start < 0 else start
    out = _slice(c.g, c.x("self"), d, start, start + c.a("length"))
    c.set_out(out)


@sym("select")
def _select(c):
    n = len(c.val("self").shape)
    d = _dim(c.a("dim"), n)
    c.node("Gather", [c.x("self"), c.g.i64(c.a("index"))], axis=d)


@sym("unbind")
def _unbind(c):
    n = len(c.val("self").shape)
    d = _dim(c.a("dim", 0), n)
    size = _static_size(c, "self", d)
    if size == 1:
        parts = [c.x("self")]
    else:
        parts = c.g.node("Split", [c.x("self"), c.g.i64([1] * size)], n_out=size, axis=d)
    for k, p in enumerate(parts):
        c.node("Squeeze", [p, c.g.i64([d])], k=k)


@sym("chunk", "split", "split_with_sizes", "tensor_split")
def _split(c):
    n = len(c.val("self").shape)
    d = _dim(c.a("dim", 0), n)
    _static_size(c, "self", d)
    sizes = [c.out_val(k).shape[d] for k in range(len(c.outs()))]
    if len(sizes) == 1:
        return c.node("Identity", [c.x("self")])
    outs = [c.out_name(k) for k in range(len(sizes))]
    c.g.node("Split", [c.x("self"), c.g.i64(sizes)], outputs=outs, axis=d)


@sym("cat", "concat", "concatenate")
def _cat(c):
    refs = c.a("tensors")
    vals = [c.g.rec1.values[r.idx] for r in refs]
    keep = [c.g.name(r.idx) for r, v in zip(refs, vals) if v.shape != (0,)]
    n = len(c.out_val().shape)
    c.node("Concat", keep, axis=_dim(c.a("dim", 0), n))


@sym("stack")
def _stack(c):
    n = len(c.out_val().shape)
    d = _dim(c.a("dim", 0), n)
    parts = [c.g.node("Unsqueeze", [x, c.g.i64([d])]) for x in c.xs("tensors")]
    c.node("Concat", parts, axis=d)


@sym("repeat")
def _repeat(c):
    reps = _ints(c.a("repeats"))
    x = c.x("self")
    n = len(c.val("self").shape)
    if len(reps) > n:
        x = c.g.node("Reshape", [x, c.g.i64([1] * (len(reps) - n) + [0] * n)]) if n else \
            c.g.node("Reshape", [x, c.g.i64([1] * len(reps))])
    c.node("Tile", [x, c.g.i64(reps)])


@sym("getitem")
def _getitem(c):
    index = c.a("index")
    items = index if isinstance(index, tuple) else (index,)
    shape = c.val("self").shape
    n_real = sum(1 for i in items if i is not None and i is not Ellipsis
                 and not isinstance(i, bool))
    if any(isinstance(i, Ref) or isinstance(i, (list, bool)) for i in items):
        return _advanced_getitem(c, items, shape)
    expanded = []
    for i in items:
        if i is Ellipsis:
            expanded += [slice(None)] * (len(shape) - n_real)
        else:
            expanded.append(i)
    items2 = c.a2("index")
    items2 = items2 if isinstance(items2, tuple) else (items2,)
    if len(items2) != len(items):
        c.fail("an index that changes with a dynamic axis")
    shape2 = c.val2("self").shape
    dims_of = {}
    d = 0
    for k, i in enumerate(expanded):
        if i is not None:
            dims_of[k] = d
            d += 1
    # the items of the second trace, lined up with the first's
    exp2, it2 = [], iter(items2)
    for i in items:
        j = next(it2)
        if i is Ellipsis:
            exp2 += [slice(None)] * (len(shape) - n_real)
        else:
            exp2.append(j)
    x, dim = c.x("self"), 0
    fixed = []
    for k, (i, j) in enumerate(zip(expanded, exp2)):
        if i == j or i is None:
            fixed.append(i)
            continue
        n1, n2 = shape[dims_of[k]], shape2[dims_of[k]]
        # x[:n] with n the dim's size is x[:]; other bounds would be fixed at the traced size
        if isinstance(i, slice) and isinstance(j, slice) and i.start == j.start and \
                i.step == j.step and i.stop == n1 and j.stop == n2:
            fixed.append(slice(i.start, None, i.step))
            continue
        c.fail(f"an index ({i} in one trace, {j} in the other) that follows a dynamic axis")
    for i in fixed:
        if i is None:
            x = c.g.node("Unsqueeze", [x, c.g.i64([dim])])
            dim += 1
        elif isinstance(i, int):
            x = c.g.node("Gather", [x, c.g.i64(i)], axis=dim)
        elif isinstance(i, slice):
            if i == slice(None):
                dim += 1
                continue
            start = 0 if i.start is None else i.start
            stop = I64_MAX if i.stop is None else i.stop
            step = 1 if i.step is None else i.step
            x = _slice(c.g, x, dim, start, stop, step)
            dim += 1
        else:
            c.fail(f"an index of type {type(i).__name__}")
    c.node("Identity", [x])


@sym("setitem")
def _setitem(c):
    """``x[index] = value`` with a basic index: the written positions are found at export
    time (an index grid of x's static shape), then one ScatterElements on the flat data."""
    index = c.a("index")
    items = index if isinstance(index, tuple) else (index,)
    if any(isinstance(i, (Ref, list, bool)) for i in items):
        c.fail("an advanced (tensor or list) index")
    shape, shape2 = c.val("self").shape, c.val2("self").shape
    if shape != shape2:
        c.fail("a write into a tensor whose shape follows a dynamic axis")
    g, dt = c.g, c.val("self").dtype
    positions = np.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)[index]
    region = list(np.shape(positions))
    value = c.operand("value", dt)
    updates = g.node("Reshape", [g.node("Expand", [value, g.i64(region)]), g.i64([-1])])
    flat = g.node("Reshape", [c.x("self"), g.i64([-1])])
    written = g.node("ScatterElements", [flat, g.i64(np.reshape(positions, -1)), updates],
                     axis=0)
    c.node("Reshape", [written, g.i64(list(shape))])


def _advanced_getitem(c, items, shape):
    """``x[..., idx, ...]`` with one integer tensor (or list) index and full slices elsewhere:
    a Gather along that dim. Boolean masks (a shape that depends on values) and several
    tensor indices are refused."""
    adv = [k for k, i in enumerate(items) if isinstance(i, (Ref, list))]
    if len(adv) != 1 or any(isinstance(i, bool) for i in items):
        c.fail("advanced indexing with more than one tensor index")
    k = adv[0]
    rest = items[:k] + items[k + 1:]
    if any(i is not Ellipsis and i != slice(None) for i in rest):
        c.fail("a tensor index mixed with other indices")
    if Ellipsis in items[k + 1:]:
        c.fail("a tensor index before an ellipsis")
    if Ellipsis in items[:k]:
        dim = len(shape) - len(items[k + 1:]) - 1
    else:
        dim = k
    idx = items[k]
    if isinstance(idx, Ref):
        dt = c.g.rec1.values[idx.idx].dtype
        if _dtname(dt) not in ("int64", "int32", "int16", "int8", "uint8"):
            c.fail(f"a {dt} index (a boolean mask gives a shape that depends on its values)")
        name = c.g.name(idx.idx)
    else:
        if any(isinstance(v, Ref) or isinstance(v, bool) for v in idx):
            c.fail("a list index of tensors or booleans")
        name = c.g.i64(idx)
    c.node("Gather", [c.x("self"), name], axis=dim)


# ---- products ------------------------------------------------------------------------------

@sym("mm", "matmul", "bmm")
def _matmul(c):
    c.node("MatMul", [c.x("self"), c.x("mat2" if c.has("mat2") else "other")])


@sym("addmm")
def _addmm(c):
    dt = c.out_val().dtype
    if not dt.is_floating_point:
        c.fail("integer addmm")
    c.node("Gemm", [c.x("mat1"), c.x("mat2"), c.operand("self", dt)],
           alpha=float(c.a("alpha", 1)), beta=float(c.a("beta", 1)))


@sym("baddbmm")
def _baddbmm(c):
    dt = c.out_val().dtype
    prod = c.g.node("MatMul", [c.x("batch1"), c.x("batch2")])
    alpha, beta = c.a("alpha", 1), c.a("beta", 1)
    if alpha != 1:
        prod = c.g.node("Mul", [prod, c.g.scalar(alpha, dt)])
    base = c.operand("self", dt)
    if beta != 1:
        base = c.g.node("Mul", [base, c.g.scalar(beta, dt)])
    c.node("Add", [base, prod])


# ---- elementwise ---------------------------------------------------------------------------

_UNARY = {"neg": "Neg", "exp": "Exp", "log": "Log", "sqrt": "Sqrt", "abs": "Abs", "sin": "Sin",
          "cos": "Cos", "tan": "Tan", "tanh": "Tanh", "sigmoid": "Sigmoid", "erf": "Erf",
          "relu": "Relu", "reciprocal": "Reciprocal", "floor": "Floor", "ceil": "Ceil",
          "logical_not": "Not", "sign": "Sign", "asin": "Asin", "acos": "Acos",
          "atan": "Atan", "sinh": "Sinh", "cosh": "Cosh", "round": "Round", "isnan": "IsNaN"}


def _unary(onnx_op):
    def fn(c):
        x = c.x("self")
        if onnx_op == "Not" and _dtname(c.val("self").dtype) != "bool":
            x = c.g.node("Cast", [x], to=c.g.elem(_t.bool))
        c.node(onnx_op, [x])
    return fn


for _name, _op in _UNARY.items():
    SYMBOLIC[_name] = _unary(_op)


@sym("rsqrt")
def _rsqrt(c):
    c.node("Reciprocal", [c.g.node("Sqrt", [c.x("self")])])


@sym("square")
def _square(c):
    c.node("Mul", [c.x("self"), c.x("self")])


@sym("log1p")
def _log1p(c):
    dt = c.out_val().dtype
    c.node("Log", [c.g.node("Add", [c.x("self"), c.g.scalar(1, dt)])])


@sym("expm1")
def _expm1(c):
    dt = c.out_val().dtype
    c.node("Sub", [c.g.node("Exp", [c.x("self")]), c.g.scalar(1, dt)])


@sym("silu")
def _silu(c):
    c.node("Mul", [c.x("self"), c.g.node("Sigmoid", [c.x("self")])])


@sym("gelu")
def _gelu(c):
    approx = c.a("approximate", "none")
    x, dt, g = c.x("self"), c.out_val().dtype, c.g
    if g.opset >= 20:
        return c.node("Gelu", [x], approximate=approx)
    if approx == "tanh":
        cube = g.node("Mul", [g.node("Mul", [x, x]), x])
        inner = g.node("Add", [x, g.node("Mul", [cube, g.scalar(0.044715, dt)])])
        t = g.node("Tanh", [g.node("Mul", [inner, g.scalar(math.sqrt(2 / math.pi), dt)])])
    else:
        t = g.node("Erf", [g.node("Mul", [x, g.scalar(1 / math.sqrt(2), dt)])])
    half = g.node("Mul", [x, g.scalar(0.5, dt)])
    c.node("Mul", [half, g.node("Add", [t, g.scalar(1, dt)])])


@sym("leaky_relu")
def _leaky_relu(c):
    c.node("LeakyRelu", [c.x("self")], alpha=float(c.a("negative_slope", 0.01)))


@sym("elu")
def _elu(c):
    c.node("Elu", [c.x("self")], alpha=float(c.a("alpha", 1.0)))


@sym("hardtanh")
def _hardtanh(c):
    dt = c.out_val().dtype
    c.node("Clip", [c.x("self"), c.g.scalar(c.a("min_val", -1.0), dt),
                    c.g.scalar(c.a("max_val", 1.0), dt)])


@sym("softplus")
def _softplus(c):
    g, dt, x = c.g, c.out_val().dtype, c.x("self")
    beta, thr = float(c.a("beta", 1.0)), float(c.a("threshold", 20.0))
    bx = g.node("Mul", [x, g.scalar(beta, dt)])
    soft = g.node("Div", [g.node("Softplus", [bx]), g.scalar(beta, dt)])
    c.node("Where", [g.node("Greater", [bx, g.scalar(thr, dt)]), x, soft])


@sym("clamp", "clip", "clamp_min", "clamp_max")
def _clamp(c):
    dt = c.out_val().dtype
    lo, hi = c.c1.args.get("min"), c.c1.args.get("max")
    if isinstance(lo, Ref) or isinstance(hi, Ref):
        # tensor bounds broadcast: Clip takes scalars only
        y = c.x("self")
        if lo is not None:
            y = c.g.node("Max", [y, c.operand("min", dt)])
        if hi is not None:
            y = c.g.node("Min", [y, c.operand("max", dt)])
        return c.node("Identity", [y])
    ins = [c.x("self"), "" if lo is None else c.operand("min", dt),
           "" if hi is None else c.operand("max", dt)]
    while ins[-1] == "":
        ins.pop()
    c.node("Clip", ins)


def _binary(onnx_op, compare=False):
    def fn(c):
        other = "other" if "other" in c.c1.args else "exponent"
        dt = c.out_val().dtype
        if compare or onnx_op == "Pow":
            a = c.c1.args["self"]
            b = c.c1.args[other]
            ta = c.g.rec1.values[a.idx].tensor if isinstance(a, Ref) else a
            tb = c.g.rec1.values[b.idx].tensor if isinstance(b, Ref) else b
            dt = _t.result_type(ta, tb)
        if onnx_op == "Pow" and isinstance(c.c1.args[other], (int, float)):
            lhs, rhs = c.operand("self", dt), c.g.scalar(c.c1.args[other], dt)
        else:
            lhs, rhs = c.operand("self", dt), c.operand(other, dt)
        if c.op in ("add", "sub") and c.a("alpha", 1) != 1:
            rhs = c.g.node("Mul", [rhs, c.g.scalar(c.a("alpha"), dt)])
        if onnx_op == "NotEqual":
            return c.node("Not", [c.g.node("Equal", [lhs, rhs])])
        if onnx_op in ("And", "Or", "Xor") and _dtname(dt) != "bool":
            c.fail(f"{c.op} of {dt} tensors")
        c.node(onnx_op, [lhs, rhs])
    return fn


for _name, _op, _cmp in (("add", "Add", False), ("sub", "Sub", False), ("mul", "Mul", False),
                         ("maximum", "Max", False), ("minimum", "Min", False),
                         ("pow", "Pow", False), ("eq", "Equal", True), ("ne", "NotEqual", True),
                         ("lt", "Less", True), ("le", "LessOrEqual", True),
                         ("gt", "Greater", True), ("ge", "GreaterOrEqual", True),
                         ("logical_and", "And", True), ("logical_or", "Or", True),
                         ("logical_xor", "Xor", True), ("bitwise_or", "Or", True),
                         ("bitwise_and", "And", True), ("bitwise_xor", "Xor", True)):
    SYMBOLIC[_name] = _binary(_op, _cmp)


@sym("div", "true_divide")
def _div(c):
    mode = c.a("rounding_mode")
    dt = c.out_val().dtype
    if not dt.is_floating_point:
        c.fail(f"rounding_mode={mode!r} on {dt}")
    q = c.g.node("Div", [c.operand("self", dt), c.operand("other", dt)])
    if mode is None:
        return c.node("Identity", [q])
    if mode == "floor":
        return c.node("Floor", [q])
    # truncation: the floor of |q| with q's sign
    c.node("Mul", [c.g.node("Floor", [c.g.node("Abs", [q])]), c.g.node("Sign", [q])])


@sym("remainder")
def _remainder(c):
    dt = c.out_val().dtype
    a, b = c.operand("self", dt), c.operand("other", dt)
    if not dt.is_floating_point:
        return c.node("Mod", [a, b], fmod=0)     # the result takes the divisor's sign
    g = c.g
    c.node("Sub", [a, g.node("Mul", [g.node("Floor", [g.node("Div", [a, b])]), b])])


@sym("where")
def _where(c):
    dt = c.out_val().dtype
    cond = c.x("condition")
    c.node("Where", [cond, c.operand("self", dt), c.operand("other", dt)])


@sym("masked_fill")
def _masked_fill(c):
    dt = c.out_val().dtype
    c.node("Where", [c.x("mask"), c.operand("value", dt), c.x("self")])


# ---- reductions ----------------------------------------------------------------------------

def _axes(c):
    n = len(c.val("self").shape)
    dim = c.a("dim")
    if dim is None or dim == ():
        return list(range(n))
    return [_dim(d, n) for d in _ints(dim)]


def _reduce(g, onnx_op, x, axes, keepdims):
    """``onnx_op`` over ``axes`` (given as an input from the opset where it became one)."""
    as_input = onnx_op == "ReduceSum" or g.opset >= 18     # (L1/L2 as ReduceMean)
    if as_input:
        return g.node(onnx_op, [x, g.i64(axes)], keepdims=int(keepdims))
    return g.node(onnx_op, [x], axes=list(axes), keepdims=int(keepdims))


def _reduction(onnx_op):
    def fn(c):
        dt = c.out_val().dtype
        x = c.operand("self", dt)
        c.set_out(_reduce(c.g, onnx_op, x, _axes(c), c.a("keepdim", False)))
    return fn


SYMBOLIC["sum"] = _reduction("ReduceSum")
SYMBOLIC["mean"] = _reduction("ReduceMean")
SYMBOLIC["amax"] = _reduction("ReduceMax")
SYMBOLIC["amin"] = _reduction("ReduceMin")


@sym("norm")
def _norm(c):
    p = c.a("p", "fro")
    ops = {2: "ReduceL2", 2.0: "ReduceL2", "fro": "ReduceL2", 1: "ReduceL1", 1.0: "ReduceL1"}
    if p not in ops:
        c.fail(f"p={p!r}")
    dt = c.out_val().dtype
    c.set_out(_reduce(c.g, ops[p], c.operand("self", dt), _axes(c), c.a("keepdim", False)))


@sym("any", "all")
def _any_all(c):
    g = c.g
    x = g.node("Cast", [c.x("self")], to=g.elem(_t.int64))
    x = g.node("Cast", [x], to=g.elem(_t.bool))      # nonzero -> 1
    x = g.node("Cast", [x], to=g.elem(_t.int64))
    r = _reduce(g, "ReduceMax" if c.op == "any" else "ReduceMin", x, _axes(c),
                c.a("keepdim", False))
    c.node("Cast", [r], to=g.elem(_t.bool))


@sym("max", "min")
def _max(c):
    other = c.c1.args.get("other")
    x = c.x("self")
    if other is not None:
        return c.node("Max" if c.op == "max" else "Min", [x, c.operand("other",
                                                                     c.out_val().dtype)])
    red = "ReduceMax" if c.op == "max" else "ReduceMin"
    if c.a("dim") is None:
        return c.set_out(_reduce(c.g, red, x, _axes(c), False))
    keep = bool(c.a("keepdim", False))
    d = _axes(c)[0]
    c.set_out(_reduce(c.g, red, x, [d], keep), 0)
    if len(c.outs()) > 1:
        c.node("ArgMax" if c.op == "max" else "ArgMin", [x], k=1, axis=d, keepdims=int(keep),
               select_last_index=0)


@sym("argmax", "argmin")
def _argmax(c):
    x = c.x("self")
    onnx_op = "ArgMax" if c.op == "argmax" else "ArgMin"
    if c.a("dim") is None:
        flat = c.g.node("Reshape", [x, c.g.i64([-1])])
        r = c.g.node(onnx_op, [flat], axis=0, keepdims=0)
        if c.a("keepdim", False):
            n = len(c.val("self").shape)
            r = c.g.node("Reshape", [r, c.g.i64([1] * n)])
        return c.set_out(r)
    n = len(c.val("self").shape)
    c.node(onnx_op, [x], axis=_dim(_ints(c.a("dim"))[0], n),
           keepdims=int(c.a("keepdim", False)))


@sym("softmax", "log_softmax", "_softmax", "_log_softmax")
def _softmax(c):
    dt = c.out_val().dtype
    x = c.operand("self", dt)
    n = len(c.val("self").shape)
    onnx_op = "LogSoftmax" if "log" in c.op else "Softmax"
    c.node(onnx_op, [x], axis=_dim(c.a("dim"), n) if n else 0)


@sym("var_mean", "var", "std")
def _var_mean(c):
    g, dt, x = c.g, c.out_val().dtype, c.x("self")
    axes, keep = _axes(c), bool(c.a("keepdim", False))
    corr = c.a("correction")
    if corr is None:
        unb = c.a("unbiased")
        corr = 0 if unb is False else 1
    shape = c.val("self").shape
    shape2 = c.val2("self").shape
    n = 1
    for a in axes:
        if shape[a] != shape2[a]:
            c.fail("a variance over a dynamic axis")
        n *= shape[a]
    mean_k = _reduce(g, "ReduceMean", x, axes, True)
    dev = g.node("Sub", [x, mean_k])
    var = _reduce(g, "ReduceMean", g.node("Mul", [dev, dev]), axes, keep)
    if corr:
        var = g.node("Mul", [var, g.scalar(n / max(n - corr, 0), dt)])
    if c.op == "std":
        return c.node("Sqrt", [var])
    c.set_out(var, 0)
    if c.op == "var_mean":
        c.set_out(mean_k if keep else _reduce(g, "ReduceMean", x, axes, False), 1)


@sym("_nn_masked_softmax")
def _masked_softmax(c):
    g, dt = c.g, c.out_val().dtype
    x = c.x("input")
    scale = float(c.a("scale"))
    if scale != 1.0:
        x = g.node("Mul", [x, g.scalar(scale, dt)])
    masked = False
    if c.has("mask"):
        m = c.val("mask")
        if _dtname(m.dtype) == "bool":
            x = g.node("Where", [c.x("mask"), x, g.scalar(-np.inf, dt)])
        else:
            x = g.node("Add", [x, c.operand("mask", dt)])
        masked = True
    if c.a("causal"):
        L, S = c.val("input").shape[-2:]
        L2, S2 = c.val2("input").shape[-2:]
        if (L, S) != (L2, S2):
            c.fail("a causal mask over a dynamic sequence length")
        tri = np.where(np.tril(np.ones((L, S), dtype=bool)), 0.0, -np.inf)
        x = g.node("Add", [x, g.const(tri.astype(_NP[_dtname(dt)]), "causal")])
        masked = True
    y = g.node("Softmax", [x], axis=-1)
    if masked and c.a("zero_dead_rows"):
        y = g.node("Where", [g.node("IsNaN", [y]), g.scalar(0, dt), y])
    c.node("Identity", [y])


# ---- more ops with a direct ONNX form -----------------------------------------------------

@sym("cumsum")
def _cumsum(c):
    dt = c.out_val().dtype
    n = len(c.val("self").shape)
    c.node("CumSum", [c.operand("self", dt), c.g.i64(_dim(c.a("dim"), max(n, 1)))])


@sym("flip")
def _flip(c):
    n = len(c.val("self").shape)
    dims = [_dim(d, n) for d in _ints(c.a("dims"))]
    x = c.x("self")
    if dims:
        g = c.g
        x = g.node("Slice", [x, g.i64([-1] * len(dims)), g.i64([-I64_MAX] * len(dims)),
                             g.i64(dims), g.i64([-1] * len(dims))])
    c.node("Identity", [x])


@sym("tril", "triu")
def _trilu(c):
    c.node("Trilu", [c.x("self"), c.g.i64(int(c.a("diagonal", 0)))],
           upper=int(c.op == "triu"))


@sym("gather")
def _gather(c):
    n = len(c.val("self").shape)
    c.node("GatherElements", [c.x("self"), c.x("index")], axis=_dim(c.a("dim"), n))


@sym("exp2", "log2", "log10", "erfc", "trunc", "frac", "isinf", "isfinite", "bitwise_not")
def _more_unary(c):
    g, x = c.g, c.x("self")
    dt = c.val("self").dtype
    if c.op == "exp2":
        return c.node("Pow", [g.scalar(2.0, dt), x])
    if c.op in ("log2", "log10"):
        base = 2.0 if c.op == "log2" else 10.0
        return c.node("Div", [g.node("Log", [x]), g.scalar(math.log(base), dt)])
    if c.op == "erfc":
        return c.node("Sub", [g.scalar(1.0, dt), g.node("Erf", [x])])
    if c.op in ("trunc", "frac"):
        if not dt.is_floating_point:
            return c.node("Identity" if c.op == "trunc" else "Sub", [x] if c.op == "trunc"
                          else [x, x])
        t = g.node("Mul", [g.node("Floor", [g.node("Abs", [x])]), g.node("Sign", [x])])
        return c.node("Identity", [t]) if c.op == "trunc" else c.node("Sub", [x, t])
    if c.op == "bitwise_not":
        if _dtname(dt) == "bool":
            return c.node("Not", [x])
        if g.opset < 18:
            c.fail("bitwise_not of integers before opset 18")
        return c.node("BitwiseNot", [x])
    if not dt.is_floating_point:        # integers are finite
        return c.node("ConstantOfShape", [g.node("Shape", [x])], value=g.onnx.helper.make_tensor(
            "value", g.elem(_t.bool), [1], [c.op == "isfinite"]))
    inf = g.node("IsInf", [x])
    if c.op == "isinf":
        return c.node("Identity", [inf])
    c.node("Not", [g.node("Or", [inf, g.node("IsNaN", [x])])])


@sym("mv", "dot")
def _mv(c):
    c.node("MatMul", [c.x("self"), c.x("vec" if c.op == "mv" else "tensor")])


@sym("outer")
def _outer(c):
    g = c.g
    c.node("Mul", [g.node("Unsqueeze", [c.x("self"), g.i64([1])]),
                   g.node("Unsqueeze", [c.x("vec2"), g.i64([0])])])


@sym("addmv")
def _addmv(c):
    g, dt = c.g, c.out_val().dtype
    prod = g.node("MatMul", [c.x("mat"), c.x("vec")])
    alpha, beta = c.a("alpha", 1), c.a("beta", 1)
    if alpha != 1:
        prod = g.node("Mul", [prod, g.scalar(alpha, dt)])
    base = c.operand("self", dt)
    if beta != 1:
        base = g.node("Mul", [base, g.scalar(beta, dt)])
    c.node("Add", [base, prod])


@sym("einsum")
def _einsum(c):
    args = list(c.a("args"))
    if not args or not isinstance(args[0], str):
        c.fail("the sublist form")
    eq = args[0].replace(" ", "")
    ops = args[1:]
    if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
        ops = list(ops[0])
    if not all(isinstance(r, Ref) for r in ops):
        c.fail("non-tensor operands")
    if "..." in eq:
        c.fail("an ellipsis in the equation")
    c.node("Einsum", [c.g.name(r.idx) for r in ops], equation=eq)


@sym("prod", "logsumexp")
def _prod(c):
    dt = c.out_val().dtype
    onnx_op = "ReduceProd" if c.op == "prod" else "ReduceLogSumExp"
    c.set_out(_reduce(c.g, onnx_op, c.operand("self", dt), _axes(c), c.a("keepdim", False)))


@sym("rsub")
def _rsub(c):
    dt = c.out_val().dtype
    x = c.operand("self", dt)
    if c.a("alpha", 1) != 1:
        x = c.g.node("Mul", [x, c.g.scalar(c.a("alpha"), dt)])
    c.node("Sub", [c.operand("other", dt), x])


@sym("lerp")
def _lerp(c):
    g, dt = c.g, c.out_val().dtype
    x = c.operand("self", dt)
    diff = g.node("Sub", [c.operand("end", dt), x])
    c.node("Add", [x, g.node("Mul", [c.operand("weight", dt), diff])])


@sym("fmod")
def _fmod(c):
    dt = c.out_val().dtype
    c.node("Mod", [c.operand("self", dt), c.operand("other", dt)], fmod=1)


@sym("floor_divide")
def _floor_divide(c):
    dt = c.out_val().dtype
    if not dt.is_floating_point:
        c.fail(f"floor division of {dt} tensors")
    c.node("Floor", [c.g.node("Div", [c.operand("self", dt), c.operand("other", dt)])])


@sym("topk", "sort", "argsort")
def _topk(c):
    g = c.g
    shape = c.val("self").shape
    n = len(shape)
    d = _dim(c.a("dim", -1), max(n, 1))
    if c.op == "topk":
        k, largest = int(c.a("k")), bool(c.a("largest", True))
    else:
        k, largest = _static_size(c, "self", d), bool(c.a("descending", False))
    vals, idx = g.node("TopK", [c.x("self"), g.i64([k])], n_out=2, axis=d,
                       largest=int(largest), sorted=1)
    if c.op == "argsort":
        return c.set_out(idx)
    c.set_out(vals, 0)
    c.set_out(idx, 1)


@sym("broadcast_to")
def _broadcast_to(c):
    _expand(c)


@sym("tile")
def _tile(c):
    reps = _ints(c.a("dims"))
    n = len(c.val("self").shape)
    reps = [1] * (n - len(reps)) + reps
    c.c1.args["repeats"] = reps
    _repeat(c)


@sym("movedim")
def _movedim(c):
    n = len(c.val("self").shape)
    src = [_dim(d, n) for d in _ints(c.a("source"))]
    dst = [_dim(d, n) for d in _ints(c.a("destination"))]
    perm = [None] * n
    for a, b in zip(src, dst):
        perm[b] = a
    rest = iter(d for d in range(n) if d not in src)
    c.node("Transpose", [c.x("self")], perm=[next(rest) if p is None else p for p in perm])


def _index_along(c, index, like, dim):
    """A 1-D ``index`` along ``dim`` made an index of ``like``'s shape (ScatterElements'
    form of index_add/index_copy)."""
    g = c.g
    n = len(c.g.rec1.values[c.c1.args[like].idx].shape)
    shape = [1] * n
    shape[dim] = -1
    idx = g.node("Reshape", [c.x(index), g.i64(shape)])
    return g.node("Expand", [idx, g.node("Shape", [c.x(like)])])


_SCATTER_REDUCE = {"sum": ("add", 0.0, 16), "add": ("add", 0.0, 16), "prod": ("mul", 1.0, 16),
                   "multiply": ("mul", 1.0, 16), "amax": ("max", -np.inf, 18),
                   "amin": ("min", np.inf, 18)}


def _scatter_into(c, x, idx, src, d, reduce, include_self=True):
    g = c.g
    if reduce is None:
        return g.node("ScatterElements", [x, idx, src], axis=d)
    if reduce not in _SCATTER_REDUCE:
        c.fail(f"reduce={reduce!r}")
    how, identity, opset = _SCATTER_REDUCE[reduce]
    if g.opset < opset:
        c.fail(f"reduce={reduce!r} before opset {opset}")
    if not include_self:
        # the scattered positions start from the reduction's identity instead of self
        dt = c.out_val().dtype
        if not dt.is_floating_point and identity in (np.inf, -np.inf):
            info = np.iinfo(_NP[_dtname(dt)])
            identity = info.min if identity < 0 else info.max
        fill = g.node("Expand", [g.scalar(identity, dt), g.node("Shape", [src])])
        x = g.node("ScatterElements", [x, idx, fill], axis=d)
    return g.node("ScatterElements", [x, idx, src], axis=d, reduction=how)


@sym("scatter", "scatter_add", "scatter_reduce")
def _scatter(c):
    n = len(c.val("self").shape)
    d = _dim(c.a("dim"), n)
    dt = c.out_val().dtype
    src = c.c1.args.get("src")
    if not isinstance(src, Ref):
        # a number (src= or value=) written at every index
        value = c.g.scalar(c.a("value") if src is None else src, dt)
        src = c.g.node("Expand", [value, c.g.node("Shape", [c.x("index")])])
    else:
        src = c.operand("src", dt)
    reduce = {"scatter_add": "sum"}.get(c.op, c.a("reduce"))
    c.set_out(_scatter_into(c, c.x("self"), c.x("index"), src, d, reduce,
                            bool(c.a("include_self", True))))


@sym("index_add", "index_copy")
def _index_add(c):
    n = len(c.val("self").shape)
    d = _dim(c.a("dim"), n)
    dt = c.out_val().dtype
    src = c.operand("source", dt)
    if c.a("alpha", 1) != 1:
        src = c.g.node("Mul", [src, c.g.scalar(c.a("alpha"), dt)])
    idx = _index_along(c, "index", "source", d)
    c.set_out(_scatter_into(c, c.x("self"), idx, src, d,
                            "sum" if c.op == "index_add" else None))


# ---- nn ------------------------------------------------------------------------------------

def _live_only_first(c):
    for k in range(1, len(c.outs())):
        if c.is_live(k):
            c.fail(f"its output {k} (indices or saved statistics) is used")


@sym("convolution")
def _convolution(c):
    w = c.val("weight").shape
    k = len(w) - 2
    pads = _ints(c.a("padding"), k)
    ins = [c.x("input"), c.x("weight")] + ([c.x("bias")] if c.has("bias") else [])
    attrs = dict(kernel_shape=list(w[2:]), strides=_ints(c.a("stride"), k), pads=pads + pads,
                 dilations=_ints(c.a("dilation"), k), group=int(c.a("groups")))
    if c.a("transposed"):
        attrs["output_padding"] = _ints(c.a("output_padding"), k)
        c.node("ConvTranspose", ins, **attrs)
    else:
        c.node("Conv", ins, **attrs)


def _pool_args(c, k=2):
    kernel = _ints(c.a("kernel_size"), k)
    stride = c.a("stride", ())
    stride = kernel if stride in ((), []) else _ints(stride, k)
    pads = _ints(c.a("padding", 0), k)
    return kernel, stride, pads + pads


@sym("max_pool2d_with_indices")
def _max_pool(c):
    _live_only_first(c)
    kernel, stride, pads = _pool_args(c)
    c.node("MaxPool", [c.x("self")], kernel_shape=kernel, strides=stride, pads=pads,
           dilations=_ints(c.a("dilation", 1), 2), ceil_mode=int(bool(c.a("ceil_mode"))))


@sym("avg_pool2d")
def _avg_pool(c):
    if c.a("divisor_override") is not None:
        c.fail("divisor_override")
    kernel, stride, pads = _pool_args(c)
    c.node("AveragePool", [c.x("self")], kernel_shape=kernel, strides=stride, pads=pads,
           ceil_mode=int(bool(c.a("ceil_mode"))),
           count_include_pad=int(bool(c.a("count_include_pad", True))))


@sym("adaptive_avg_pool2d", "adaptive_max_pool2d")
def _adaptive_pool(c):
    _live_only_first(c)
    avg = c.op == "adaptive_avg_pool2d"
    ins, outs = c.val("self").shape[-2:], c.out_val().shape[-2:]
    if tuple(outs) == (1, 1):
        return c.node("GlobalAveragePool" if avg else "GlobalMaxPool", [c.x("self")])
    if any(o == 0 or i % o for i, o in zip(ins, outs)):
        c.fail(f"an output size {list(outs)} that does not divide the input {list(ins)}")
    kernel = [i // o for i, o in zip(ins, outs)]
    c.node("AveragePool" if avg else "MaxPool", [c.x("self")], kernel_shape=kernel,
           strides=kernel)


@sym("native_batch_norm", "_native_batch_norm_legit_no_training")
def _batch_norm(c):
    if c.a("training"):
        c.fail("batch norm in training mode (call model.eval())")
    if not (c.has("running_mean") and c.has("running_var")):
        c.fail("batch norm without running statistics")
    _live_only_first(c)
    g, dt = c.g, c.out_val().dtype
    C = c.val("input").shape[1]
    w = c.x("weight") if c.has("weight") else g.const(np.ones(C, _NP[_dtname(dt)]), "ones")
    b = c.x("bias") if c.has("bias") else g.const(np.zeros(C, _NP[_dtname(dt)]), "zeros")
    c.node("BatchNormalization", [c.x("input"), w, b, c.x("running_mean"),
                                  c.x("running_var")], epsilon=float(c.a("eps")))


@sym("native_layer_norm")
def _layer_norm(c):
    _live_only_first(c)
    g, dt = c.g, c.out_val().dtype
    ns = _ints(c.a("normalized_shape"))
    k = len(ns)
    npdt = _NP[_dtname(dt)]
    w = c.x("weight") if c.has("weight") else g.const(np.ones(ns, npdt), "ones")
    if g.opset >= 17:
        ins = [c.x("input"), w] + ([c.x("bias")] if c.has("bias") else [])
        return c.node("LayerNormalization", ins, axis=-k, epsilon=float(c.a("eps")))
    n = len(c.val("input").shape)
    axes = list(range(n - k, n))
    x = c.x("input")
    mean = _reduce(g, "ReduceMean", x, axes, True)
    dev = g.node("Sub", [x, mean])
    var = _reduce(g, "ReduceMean", g.node("Mul", [dev, dev]), axes, True)
    rstd = g.node("Reciprocal", [g.node("Sqrt", [g.node("Add", [var, g.scalar(
        float(c.a("eps")), dt)])])])
    y = g.node("Mul", [g.node("Mul", [dev, rstd]), w])
    if c.has("bias"):
        y = g.node("Add", [y, c.x("bias")])
    c.node("Identity", [y])


@sym("native_group_norm")
def _group_norm(c):
    _live_only_first(c)
    g, dt = c.g, c.out_val().dtype
    x = c.x("input")
    G, C, eps = int(c.a("group")), int(c.a("C")), float(c.a("eps"))
    n = len(c.val("input").shape)
    grouped = g.node("Reshape", [x, g.i64([0, G, -1])])
    mean = _reduce(g, "ReduceMean", grouped, [2], True)
    dev = g.node("Sub", [grouped, mean])
    var = _reduce(g, "ReduceMean", g.node("Mul", [dev, dev]), [2], True)
    rstd = g.node("Reciprocal", [g.node("Sqrt", [g.node("Add", [var, g.scalar(eps, dt)])])])
    y = g.node("Reshape", [g.node("Mul", [dev, rstd]), g.node("Shape", [x])])
    cshape = g.i64([C] + [1] * (n - 2))
    if c.has("weight"):
        y = g.node("Mul", [y, g.node("Reshape", [c.x("weight"), cshape])])
    if c.has("bias"):
        y = g.node("Add", [y, g.node("Reshape", [c.x("bias"), cshape])])
    c.node("Identity", [y])


@sym("index_select")
def _index_select(c):
    n = len(c.val("self").shape)
    c.node("Gather", [c.x("self"), c.x("index")], axis=_dim(c.a("dim"), n))


@sym("new_zeros", "new_ones", "new_full", "new_empty")
def _new_filled(c):
    g, v1, v2 = c.g, c.out_val(), c.out_val2()
    fill = {"new_zeros": 0, "new_ones": 1, "new_empty": 0}.get(c.op)
    if fill is None:
        fill = c.a("fill_value")
    value = g.onnx.helper.make_tensor("value", g.elem(v1.dtype), [1], [fill])
    shape = g.shape_tensor(v1.shape, v2.shape, fill_unknown=None)
    c.node("ConstantOfShape", [shape], value=value)


@sym("zeros_like", "ones_like", "full_like", "empty_like")
def _fill_like(c):
    g, dt = c.g, c.out_val().dtype
    value = {"zeros_like": 0, "ones_like": 1, "empty_like": 0}.get(c.op)
    if value is None:
        value = c.a("fill_value")
    tensor = g.onnx.helper.make_tensor("value", g.elem(dt), [1], [value])
    c.node("ConstantOfShape", [g.node("Shape", [c.x("self")])], value=tensor)


@sym("_thnn_fused_lstm_cell", "_thnn_fused_gru_cell")
def _fused_cell(c):
    """One LSTM/GRU step's gate arithmetic (the cells, and layers traced op by op), spelt out
    in elementwise ONNX; the workspace output is for backward only."""
    lstm = c.op == "_thnn_fused_lstm_cell"
    if c.is_live(len(c.outs()) - 1):
        c.fail("its workspace output is used")
    g = c.g
    n = 4 if lstm else 3
    ig, hg = c.x("input_gates"), c.x("hidden_gates")
    if c.has("input_bias"):
        ig = g.node("Add", [ig, c.x("input_bias")])
    if c.has("hidden_bias"):
        hg = g.node("Add", [hg, c.x("hidden_bias")])
    H = c.val("input_gates").shape[1] // n
    sizes = g.i64([H] * n)
    if lstm:
        i, f, gg, o = g.node("Split", [g.node("Add", [ig, hg]), sizes], n_out=4, axis=1)
        cy = g.node("Add", [g.node("Mul", [g.node("Sigmoid", [f]), c.x("cx")]),
                            g.node("Mul", [g.node("Sigmoid", [i]), g.node("Tanh", [gg])])])
        c.set_out(cy, 1)
        c.node("Mul", [g.node("Sigmoid", [o]), g.node("Tanh", [cy])], k=0)
        return
    xr, xz, xn = g.node("Split", [ig, sizes], n_out=3, axis=1)
    hr, hz, hn = g.node("Split", [hg, sizes], n_out=3, axis=1)
    r = g.node("Sigmoid", [g.node("Add", [xr, hr])])
    z = g.node("Sigmoid", [g.node("Add", [xz, hz])])
    nn_ = g.node("Tanh", [g.node("Add", [xn, g.node("Mul", [r, hn])])])
    # (1 - z) * n + z * hx = n + z * (hx - n)
    c.node("Add", [nn_, g.node("Mul", [z, g.node("Sub", [c.x("hx"), nn_])])], k=0)


# ---- recurrent layers (whole modules: ONNX has them as ops) ----------------------------------

_GATES = {"lstm": (4, [0, 3, 1, 2]),     # PyTorch i, f, g, o -> ONNX i, o, f, c
          "gru": (3, [1, 0, 2]),          # PyTorch r, z, n -> ONNX z, r, h
          "rnn": (1, [0])}


def _regate(w, n_gates, order):
    h = w.shape[0] // n_gates
    return np.concatenate([w[k * h:(k + 1) * h] for k in order], axis=0)


@sym("lstm", "gru", "rnn")
def _rnn(c):
    g, m = c.g, c.c1.module
    kind = c.op
    if getattr(m, "proj_size", 0):
        c.fail("LSTM with proj_size")
    x_val = c.val("input")
    if len(x_val.shape) not in (2, 3):
        c.fail("a packed input")
    unbatched = len(x_val.shape) == 2          # (L, H_in): one sequence, batch dim added
    batch_first = m.batch_first and not unbatched
    n_gates, order = _GATES[kind]
    dirs = 2 if m.bidirectional else 1
    H, L = m.hidden_size, m.num_layers
    dt = x_val.dtype
    npdt = _NP[_dtname(dt)]
    x = c.x("input")
    if unbatched:
        x = g.node("Unsqueeze", [x, g.i64([1])])
    if batch_first:
        x = g.node("Transpose", [x], perm=[1, 0, 2])
    hx = c.c1.args.get("hx")
    h0 = c0 = None
    if isinstance(hx, Ref):
        h0 = g.name(hx.idx)
    elif isinstance(hx, (list, tuple)) and hx:
        h0 = g.name(hx[0].idx)
        c0 = g.name(hx[1].idx) if len(hx) > 1 else None
    if unbatched:
        h0 = None if h0 is None else g.node("Unsqueeze", [h0, g.i64([1])])
        c0 = None if c0 is None else g.node("Unsqueeze", [c0, g.i64([1])])
    attrs = {"hidden_size": H, "direction": "bidirectional" if dirs == 2 else "forward"}
    if kind == "gru":
        attrs["linear_before_reset"] = 1
    if kind == "rnn":
        attrs["activations"] = ["Relu" if m.nonlinearity == "relu" else "Tanh"] * dirs
    hs, cs = [], []
    for layer in range(L):
        Ws, Rs, Bs = [], [], []
        for d in range(dirs):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            w_ih = getattr(m, "weight_ih" + sfx).detach().numpy()
            w_hh = getattr(m, "weight_hh" + sfx).detach().numpy()
            Ws.append(_regate(w_ih, n_gates, order))
            Rs.append(_regate(w_hh, n_gates, order))
            if m.bias:
                b_ih = getattr(m, "bias_ih" + sfx).detach().numpy()
                b_hh = getattr(m, "bias_hh" + sfx).detach().numpy()
                Bs.append(np.concatenate([_regate(b_ih, n_gates, order),
                                          _regate(b_hh, n_gates, order)]))
            else:
                Bs.append(np.zeros(2 * n_gates * H, npdt))
        ins = [x, g.const(np.stack(Ws).astype(npdt), f"{kind}_W{layer}"),
               g.const(np.stack(Rs).astype(npdt), f"{kind}_R{layer}"),
               g.const(np.stack(Bs).astype(npdt), f"{kind}_B{layer}"), ""]
        sl = lambda t: _slice(g, t, 0, layer * dirs, (layer + 1) * dirs)   # noqa: E731
        ins.append(sl(h0) if h0 is not None else "")
        if kind == "lstm":
            ins.append(sl(c0) if c0 is not None else "")
        while ins[-1] == "":
            ins.pop()
        n_out = 3 if kind == "lstm" else 2
        outs = g.node(kind.upper() if kind != "rnn" else "RNN", ins, n_out=n_out, **attrs)
        y = outs[0]                            # (seq, dirs, batch, H)
        y = g.node("Transpose", [y], perm=[0, 2, 1, 3])
        x = g.node("Reshape", [y, g.i64([0, 0, -1])])
        hs.append(outs[1])
        if kind == "lstm":
            cs.append(outs[2])
    out = g.node("Transpose", [x], perm=[1, 0, 2]) if batch_first else x
    states = [hs] + ([cs] if kind == "lstm" else [])
    states = [s[0] if L == 1 else g.node("Concat", s, axis=0) for s in states]
    if unbatched:
        out = g.node("Squeeze", [out, g.i64([1])])
        states = [g.node("Squeeze", [s, g.i64([1])]) for s in states]
    for k, v in enumerate([out] + states):
        c.set_out(v, k)
