"""Generate the op wrappers and elementwise kernels from the declarations (tensorlib/ops/decl/).

Run by setup.py before Cython; writes into the build directory (``build/generated/``). For
every declared op, into _ops_<family>.pxi of its declaration family (decl/<family>.py),
included by that family's extension module (``FAMILY_MODULES``) or, for the others, by
tensor.pyx through _ops_generated.pxi:

- a module-level ``def`` for the function variant (``tensorlib.transpose(input, 0, 1)``),
- a ``def _m_<name>`` for the method variant (installed on ``tensorlib.Tensor``),
- with ``backward`` formulas, its node class and ``_call_<op>`` (autograd recording); with
  ``operators``, a ``_slot_<name>`` per Python operator slot (``__floordiv__`` ...), which
  TensorBase's slot calls: the op's ``_call_<op>``, so ``x // y`` is recorded and profiled as
  ``floor_divide(x, y)``;
- its entries in the ``_GENERATED_FUNCTIONS`` / ``_GENERATED_METHODS`` / ``_OPERATOR_SLOTS``
  tables (defined by tensor.pyx, shared with the family modules).

_ops_generated.pxi also holds TensorBase's operator-slot table: ``_slot_<name>`` of an op in
a family module calls through a pointer which that module installs at import (``_set_slot``).

Cython turns each ``def`` into C argument parsing; each wrapper converts its arguments with
the typed helpers in tensor.pyx (``_targ``, ``_iarg`` ...) and calls the implementation named
in the declaration. Signature language (a small subset of PyTorch's native_functions.yaml):

    Tensor x | Tensor? x | Tensor[] xs | int x | int? x | int[] x | int[]! x | int[]... x |
    float x | float? x | bool x | bool? x | str x | str? x | Scalar x | dtype? x | device? x |
    object x,   ``*`` starts keyword-only.

Parsing is as strict as PyTorch's. ``int[]`` is PyTorch's ``int[N]`` (one int stands for the
list), ``int[]!`` its ``int[]`` (a sequence only), ``int[]...`` a size that may also come as
varargs. A bool takes True/False only (``bool?`` also None); a dtype a dtype (or
float/int/bool/complex), not a string; a str a str (or bytes); one int that does not fit int64
is a ValueError (in an int list, a TypeError naming the element); ``object`` parameters named
``out``, ``layout`` and ``memory_format`` are type-checked (``TYPED_OBJECTS``).

Variants: ``function``, ``method`` and ``inplace`` (a method ``name_``). An ``impl`` template may
use ``{inplace}`` (True only in the in-place variant) and ``{out}`` (None where absent).

From the elementwise kernels declared with the ops (``kernel`` in decl/common.py) it writes
_ew_loops.h (the typed loops and ``tl_ew_<name>`` tables, included by cpu_elementwise.c),
_ew_ops.h (their declarations, included by cpu_elementwise.h), _ew_tables.pxi (their
externs and ``ew_loops(name)``, included by tensor.pyx, where the loops are linked) and
_ew_ops.pxi (the ``OP_<NAME>`` EwOps, included by elementwise.pxi).
"""
import builtins
import copy
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# generated sources go to the build directory, never into the source tree
OUT_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "build", "generated"))


class Param:
    def __init__(self, text, kwonly):
        m = re.fullmatch(r"\s*([\w\[\]?.!]+)\s+(\w+)\s*(?:=\s*(.+?))?\s*", text)
        if not m:
            raise ValueError(f"bad parameter: {text!r}")
        self.type, self.name, self.default = m.group(1), m.group(2), m.group(3)
        self.kwonly = kwonly
        self.varargs = self.type.endswith("...")

    @property
    def c_name(self):
        return "c_" + self.name


def parse_signature(sig):
    params, kwonly = [], False
    for part in [p.strip() for p in sig.split(",") if p.strip()]:
        if part == "*":
            kwonly = True
            continue
        params.append(Param(part, kwonly))
    return params


# ``object`` parameters that PyTorch's parser types by their name (its schemas declare them
# ``Tensor(a!) out``, ``Layout? layout``, ``MemoryFormat? memory_format``): the wrappers check
# the type of a value other than None (a TypeError, as PyTorch's) and pass it on unchanged
TYPED_OBJECTS = {"out": "ARG_OUT", "layout": "ARG_LAYOUT", "memory_format": "ARG_MEMORY_FORMAT"}


def convert(p, op, pos, pyname):
    """Cython lines converting Python argument ``pyname`` into the C local ``p.c_name``."""
    t, c = p.type, p.c_name
    if t == "Tensor":
        return [f"cdef TensorBase {c} = _targ({pyname}, '{op}', '{p.name}', {pos})"]
    if t == "Tensor?":
        return [f"cdef TensorBase {c} = None if {pyname} is None else _targ({pyname}, '{op}', '{p.name}', {pos})"]
    if t == "int":
        return [f"cdef int64_t {c} = _iarg({pyname}, '{op}', '{p.name}', {pos})"]
    if t == "int?":
        return [f"{c} = None if {pyname} is None else _iarg({pyname}, '{op}', '{p.name}', {pos})"]
    if t == "int[]":
        if p.default == "()":           # None stands for an empty default, as in PyTorch
            pyname = f"({p.default} if {pyname} is None else {pyname})"
        return [f"cdef tuple {c} = _ilist({pyname}, '{op}', '{p.name}', {pos})"]
    if t == "int[]!":          # a sequence only (PyTorch's int[] without a size: no single int)
        return [f"cdef tuple {c} = _iseq({pyname}, '{op}', '{p.name}', {pos})"]
    if t == "int[]...":
        # required, as in PyTorch: f() raises, f(()) and f(name=()) are the empty list
        return [f"if not {pyname} and {p.name} is None:",
                f"    raise TypeError('{op}() missing 1 required positional arguments: \"{p.name}\"')",
                f"cdef tuple {c} = _ivarargs({pyname}, '{op}', '{p.name}') if {pyname} "
                f"else _ilist({p.name}, '{op}', '{p.name}', {pos})"]
    if t == "float":
        return [f"cdef double {c} = _farg({pyname}, '{op}', '{p.name}', {pos})"]
    if t == "bool":
        # True or False only, as PyTorch (1, None and numpy.bool_ are refused); two pointer
        # comparisons on the common path
        return [f"if {pyname} is not True and {pyname} is not False: "
                f"_bad_bool({pyname}, '{op}', '{p.name}')",
                f"cdef bint {c} = {pyname} is True"]
    if t == "bool?":
        # True, False or None, passed on as the object (None: the op's default)
        return [f"if {pyname} is not None and {pyname} is not True and {pyname} is not False: "
                f"_bad_bool({pyname}, '{op}', '{p.name}')",
                f"{c} = {pyname}"]
    if t == "dtype?":
        return [f"{c} = _dtarg({pyname}, '{op}', '{p.name}')"]
    if t in ("str", "str?"):
        # a str (bytes are decoded, as PyTorch's parser takes them); str?: or None
        none = f"{pyname} is None or " if t == "str?" else ""
        return [f"{c} = {pyname} if ({none}type({pyname}) is str) "
                f"else _strarg({pyname}, '{op}', '{p.name}')"]
    if t == "float?":
        return [f"{c} = None if {pyname} is None else _farg({pyname}, '{op}', '{p.name}', {pos})"]
    if t == "Scalar":
        # (an int, the common case, is checked inline)
        if p.default == "None":
            return [f"{c} = {pyname} if ({pyname} is None or type({pyname}) is int) "
                    f"else _sarg({pyname}, '{op}', '{p.name}', {pos})"]
        return [f"{c} = {pyname} if type({pyname}) is int "
                f"else _sarg({pyname}, '{op}', '{p.name}', {pos})"]
    if t == "device?":
        return [f"if {pyname} is not None: _check_kind({pyname}, ARG_DEVICE, '{op}', '{p.name}')",
                f"{c} = {pyname}"]
    if t == "object" and p.name in TYPED_OBJECTS:
        return [f"if {pyname} is not None: "
                f"_check_kind({pyname}, {TYPED_OBJECTS[p.name]}, '{op}', '{p.name}')",
                f"{c} = {pyname}"]
    if t in ("Tensor[]", "object", "int[]?", "object..."):
        return [f"{c} = {pyname}"]
    raise ValueError(f"{op}: unknown parameter type {t}")


def _strict(p):
    q = copy.copy(p)
    q.type, q.varargs = "int[]!", False
    return q


def emit_def(defname, decl, params, method, inplace=False):
    """One ``def``: signature, argument conversion, the implementation call. The in-place
    variant (``add_``) drops ``out`` and passes ``{inplace}`` = True to the implementation."""
    op = decl["name"] + ("_" if inplace else "")
    all_params = params
    if inplace:
        params = [p for p in params if p.name != "out"]
    if not method and params and params[0].type == "Tensor":
        # PyTorch's function forms take a sequence where the method takes varargs
        # (x.reshape(2, 3) but torch.reshape(x, (2, 3))): a strict int list there
        params = [_strict(p) if p.type == "int[]..." else p for p in params]
    sig, body = [], []
    seen_kw = False
    positional = [p for p in params if not p.kwonly]
    for i, p in enumerate(params):
        name = p.name
        if i == 0 and (p.type == "Tensor" or p.name == "self"):
            name = "self" if method else decl.get("input_name", "input")
        if p.varargs:
            sig.append(f"*{p.name}_args")
            seen_kw = True
            continue
        if p.type == "int[]!" and not seen_kw and not p.kwonly and p is positional[-1]:
            # catch spread ints (torch.reshape(x, 2, 3)) to raise PyTorch's arity message
            sig.append(name if p.default is None else f"{name}={p.default}")
            sig.append("*_spread")
            seen_kw = True
            body.append("if _spread:")
            body.append(f"    raise TypeError('{op}() takes {i + 1} positional arguments but ' + str({i + 1} + len(_spread)) + ' were given')")
            continue
        if p.kwonly and not seen_kw:
            sig.append("*")
            seen_kw = True
        sig.append(name if p.default is None else f"{name}={p.default}")
    # a varargs size also accepts size=... as a keyword (torch.zeros(size=(2, 3)))
    for p in params:
        if p.type == "int[]...":
            sig.append(f"{p.name}=None")
    for i, p in enumerate(params):
        name = p.name
        if i == 0 and (p.type == "Tensor" or p.name == "self"):
            name = "self" if method else decl.get("input_name", "input")
        pyname = f"{p.name}_args" if p.varargs else name
        body += convert(p, op, i if method else i + 1, pyname)
    impl = decl.get("impl") or "_" + op + "(" + ", ".join("{" + p.name + "}" for p in params) + ")"
    names = {p.name: p.c_name for p in params}
    # F.leaky_relu(x, inplace=True) and friends: their `inplace` argument picks the in-place
    # path at run time, as the `_` variant does at generation time
    inplace_arg = next((p.c_name for p in all_params if p.name == "inplace"), None)
    names["inplace"] = "True" if inplace else (inplace_arg or "False")
    names.setdefault("out", "None")
    call = impl.format(**names)
    lines = [f"def {defname}({', '.join(sig)}):"]
    doc = decl.get("doc")
    if doc:
        lines.append('    """' + doc.strip().replace("\\", "\\\\") + '\n    """')
    lines += ["    " + b for b in body]
    if decl.get("backward"):
        # ops with a backward go through _call_<op>, shared with the operator slots
        args = [("None" if (inplace and p.name == "out") else p.c_name) for p in all_params]
        # ops named like copy_ are in place by nature, whichever variant calls them
        flag = inplace or decl["name"].endswith("_")
        lines.append(f"    return _call_{decl['name']}({', '.join(args)}, "
                     f"{'True' if flag else (inplace_arg or 'False')})")
    else:
        lines += trace_lines(decl["name"], params, call)
        # while a memory profile is active on this thread, name the op for attribution
        lines.append("    if _prof_on():")
        lines.append(f"        _prev_op_ = _op_enter('{decl['name']}')")
        lines.append(f"        result = {call}")
        lines.append("        _op_exit(_prev_op_)")
        lines.append("        return result")
        lines.append(f"    return {call}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Autograd: for an op with ``backward`` formulas the wrapper checks one C condition ("grad mode
# on and a differentiable input requires grad"); only then does it record a Node. What the node
# saves follows from the formulas: a tensor is saved only if the formula of an input that
# requires grad reads it; ``X_sizes``/``X_strides``/``X_offset``/``X_dim``/``X_dtype`` save
# metadata by value; ``result`` saves the output (as a grad_fn-less alias); ``result1``..``result9``
# save output k of a multi-output op (the saved mean/rstd of the norms).

META_SUFFIXES = {"_sizes": "_sizes_of({0})", "_strides": "{0}.stride()",
                 "_offset": "{0}.storage_offset()", "_dim": "{0}.dim()", "_dtype": "{0}.dtype",
                 "_numel": "{0}.numel()", "_device": "{0}.device"}
IDENT = re.compile(r"(?<![.\w])([A-Za-z_]\w*)")


def autograd_plan(decl, params):
    """Differentiable inputs, saved slots (name, kind, source) and which inputs need each."""
    backward = decl["backward"]
    pnames = [p.name for p in params]
    diff = [n for n in pnames if n in backward]
    unknown = set(backward) - set(pnames)
    if unknown:
        raise ValueError(f"{decl['name']}: backward for unknown inputs {unknown}")
    slots, users = [], {}
    for inp in diff:
        for ident in IDENT.findall(backward[inp]):
            kind = None
            if ident == "result":
                kind = ("result", None)
            elif ident in pnames:            # (index_put's argument is called indices)
                kind = ("param", ident)
            elif ident == "indices":         # the indices output of a (values, indices) op
                kind = ("indices", None)
            elif re.fullmatch(r"result[1-9]", ident):   # output k of a multi-output op
                kind = ("result_k", int(ident[6:]))
            else:
                for suf in META_SUFFIXES:
                    if ident.endswith(suf) and ident[: -len(suf)] in pnames + ["result"]:
                        kind = ("meta", (ident[: -len(suf)], suf))
            if kind is None:
                continue
            if ident not in users:
                slots.append((ident, kind))
                users[ident] = set()
            users[ident].add(inp)
    return diff, slots, users


C_TYPES = {"Tensor": "TensorBase", "Tensor?": "TensorBase", "int": "int64_t", "float": "double",
           "bool": "bint", "int[]": "tuple", "int[]...": "tuple"}


def emit_call(decl, params):
    """``_call_<op>``: the op with autograd recording, on converted C arguments. The Python
    wrappers (function, method, in-place) and the operator slots all end here."""
    op = decl["name"]
    diff, slots, users = autograd_plan(decl, params)
    cnames = {p.name: p.c_name for p in params}
    sig = call_signature(decl, params)
    impl = decl.get("impl") or "_" + op + "(" + ", ".join("{" + p.name + "}" for p in params) + ")"
    names = dict(cnames)
    names["inplace"] = "_inplace_"
    names.setdefault("out", "None")
    cond = " or ".join(f"_req_any({cnames[d]})" for d in diff)
    if decl.get("record_inplace_only"):
        cond = f"_inplace_ and ({cond})"
    lines = [f"cdef object _call_{op}({sig}{', ' if sig else ''}bint _inplace_):"]
    if decl.get("parse"):
        lines.append(f"    {decl['parse'].format(**names)}")
    lines.append(f"    cdef bint _rec = _grad_on() and ({cond})")
    # PyTorch's autograd layer collects every input's edge before the op checks its
    # arguments: a stale split/unbind output (or no_grad view) raises first. An op that
    # PyTorch composes and that may hand back its input (contiguous, flatten of one dim)
    # reads no history when it does: its reads come after it, and only for a new result.
    reads = []
    if diff:
        reads.append(f"_read_histories(({', '.join(cnames[d] for d in diff)},))")
    if "self" in diff and any(p.name == "self" and p.type != "Tensor[]" for p in params):
        reads.append("_read_history(c_self)")
    late_reads = bool(decl.get("may_return_self"))
    if not late_reads:
        lines += [f"    if _rec: {r}" for r in reads]
    if "out" in cnames:
        lines.append(f"    if _rec and c_out is not None: _check_out_no_grad('{op}', ({', '.join(cnames[d] for d in diff)},))")
    if "self" in users:
        lines.append("    _orig_self = _original_of(c_self) if (_rec and _inplace_) else None")
    elif decl.get("inplace_view"):
        # the op changes self's geometry: keep an alias with the geometry from before it
        lines.append("    _orig_self = _alias_of(c_self, False) if (_rec and _inplace_) else None")
    else:
        lines.append("    _orig_self = None")
    if "self" in cnames:
        # an in-place op autograd records: a view that cannot take a new history raises
        # first, even when only an argument requires grad (PyTorch's check_inplace)
        lines.append("    if _rec and _inplace_: _check_view_rebase(c_self)")
    # while a memory profile is active on this thread, name the op for attribution
    lines.append(f"    _prev_op_ = _op_enter('{op}') if _prof_on() else None")
    lines.append("    _tr_ = None")
    lines.append("    if _trace_on(): _tr_ = _trace_enter()")
    lines.append(f"    result = {impl.format(**names)}")
    lines.append("    if _prof_on(): _op_exit(_prev_op_)")
    if late_reads:
        lines += [f"    if _rec and result is not c_self: {r}" for r in reads]
    names_t = "".join(f"'{p.name}', " for p in params)
    args_t = "".join(f"{p.c_name}, " for p in params)
    lines.append(f"    if _tr_ is not None: _trace_exit(_tr_, '{op}', ({names_t}'_inplace_'), "
                 f"({args_t}_inplace_), result)")
    args = ", ".join(cnames[p.name] for p in params if p.name != "out")
    # an op that may hand back its input unchanged (contiguous, to) records nothing then:
    # the input keeps its own history (a leaf stays a leaf)
    same = " and (_inplace_ or result is not c_self)" if "self" in cnames else ""
    if decl.get("records_itself"):
        same += " and (<TensorBase>result)._grad_fn is None"
    if decl.get("record_if"):
        same += f" and ({decl['record_if'].format(**names)})"
    # (an integer or bool result is never differentiable: PyTorch records nothing, e.g. for
    # int_tensor.copy_(float_tensor_requiring_grad))
    same += (" and (not isinstance(result, TensorBase) or "
             "(<TensorBase>result)._dtype.is_floating_point)")
    lines.append(f"    if _rec{same}: _rec_{op}(result, {args}{', ' if args else ''}_inplace_, _orig_self)")
    if decl.get("outputs") == "multi" and decl.get("view_of"):
        lines.append("    if not _rec: _mark_multi_views(result)")
    lines.append("    return result")
    return "\n".join(lines) + "\n"


def trace_lines(op, params, call, indent="    "):
    """The op call with the tracer's hook around it: while a tracer (tensorlib.onnx) is on,
    the op is run with tracing off and reported with its arguments and result (named for a
    memory profile too); otherwise one C thread-local test."""
    names = ", ".join(f"'{p.name}'" for p in params)
    args = ", ".join(p.c_name for p in params)
    return [f"{indent}if _trace_on():",
            f"{indent}    _tr_ = _trace_enter()",
            f"{indent}    _prev_op_ = _op_enter('{op}') if _prof_on() else None",
            f"{indent}    result = {call}",
            f"{indent}    if _prof_on(): _op_exit(_prev_op_)",
            f"{indent}    _trace_exit(_tr_, '{op}', ({names}{',' if params else ''}), "
            f"({args}{',' if params else ''}), result)",
            f"{indent}    return result"]


def call_signature(decl, params):
    """The C parameters of ``_call_<op>``; a reflected operator slot that swaps the operands
    (``2 // x`` is ``floor_divide(2, x)``) may pass a number as the first one."""
    types = [C_TYPES.get(p.type, "object") for p in params]
    if any(order == "other, self" for _, order, _ in decl.get("operators", ())):
        types[0] = "object"
    return ", ".join(f"{t} {p.c_name}" for t, p in zip(types, params))


def emit_plain_call(decl, params):
    """``_call_<op>`` of an op without autograd: the path its operator slots take, naming the
    op for the memory profiler as the wrappers do."""
    op = decl["name"]
    impl = decl.get("impl") or "_" + op + "(" + ", ".join("{" + p.name + "}" for p in params) + ")"
    names = {p.name: p.c_name for p in params}
    names["inplace"] = "_inplace_"
    names.setdefault("out", "None")
    call = impl.format(**names)
    sig = call_signature(decl, params)
    return "\n".join([
        f"cdef object _call_{op}({sig}{', ' if sig else ''}bint _inplace_):",
        *trace_lines(op, params, call),
        "    if _prof_on():",
        f"        _prev_op_ = _op_enter('{op}')",
        f"        result = {call}",
        "        _op_exit(_prev_op_)",
        "        return result",
        f"    return {call}"]) + "\n"


def emit_slot(decl, params, slot, order, inplace, inline="inline "):
    """``_slot_<name>``: what the operator slot ``__<name>__`` of TensorBase (tensor.pyx)
    runs: the op's ``_call_<op>`` (autograd and profiler included), with the operands in
    ``order`` and every other argument at its default."""
    name = slot.strip("_")
    unary = order == "self"
    operands = [o.strip() for o in order.split(",")]
    args = []
    for i, p in enumerate(params):
        if i < len(operands):
            args.append(operands[i])
        elif p.name == "out":
            args.append("None")
        else:
            args.append(p.default)
    call = f"_call_{decl['name']}({', '.join(args)}, {inplace})"
    if unary:
        return f"cdef {inline}object _slot_{name}(TensorBase self):\n    return {call}\n"
    # an operand the op cannot take returns NotImplemented, so Python tries the other side
    guard = ("isinstance(other, TensorBase)" if params[1].type == "Tensor" else "_slot_ok(other)")
    return (f"cdef {inline}object _slot_{name}(TensorBase self, object other):\n"
            f"    return {call} if {guard} else NotImplemented\n")


FUNCTION_NAMES = set()     # filled by generate(): names with a function variant

# Declaration families (tensorlib/ops/decl/<family>.py) compiled as an extension module of
# their own, tensorlib/_core/<module>.pyx, which includes _ops_<family>.pxi; every other
# family's generated code is compiled into tensor.pyx (through _ops_generated.pxi).
FAMILY_MODULES = {"elementwise": "elementwise", "indexing": "advindex", "linalg": "linalg",
                  "random": "random_ops", "reductions": "reductions", "sorting": "sorting"}

# Operator slots written by hand in a family's .pxi (``_slot_<name>``, not declared as an op's
# ``operators``): name -> (family, "binary" or "unary").
HAND_SLOTS = {"rtruediv": ("elementwise", "binary")}


def family_slots(families):
    """``[(family, slot name, unary)]`` of every operator slot, declared or by hand."""
    found = []
    for family in families:
        fam = family.__name__.rsplit(".", 1)[-1]
        for decl in family.OPS:
            for slot, order, _ in decl.get("operators", ()):
                found.append((fam, slot.strip("_"), order == "self"))
    found += [(fam, name, kind == "unary") for name, (fam, kind) in HAND_SLOTS.items()]
    return found


def emit_slot_table(families):
    """The core's side of the operator slots of the families compiled as modules of their
    own: ``_slot_<name>`` calls through a pointer that the family's module sets at import
    with ``_set_slot`` (tensor.pxd); until then it raises."""
    slots = [(n, u) for fam, n, u in family_slots(families) if fam in FAMILY_MODULES]
    out = ["cdef object _slot_unset2(TensorBase self, object other):\n"
           "    raise RuntimeError('an operator was used before its op family module was loaded')\n",
           "cdef object _slot_unset1(TensorBase self):\n"
           "    raise RuntimeError('an operator was used before its op family module was loaded')\n"]
    for name, unary in slots:
        kind, sig, args = (("UnarySlot", "TensorBase self", "self") if unary else
                           ("BinarySlot", "TensorBase self, object other", "self, other"))
        out.append(f"cdef {kind} _slot_{name}_fn = _slot_unset{1 if unary else 2}\n"
                   f"cdef inline object _slot_{name}({sig}):\n"
                   f"    return _slot_{name}_fn({args})\n")
    body = ["cdef int _set_slot(str name, BinarySlot binary, UnarySlot unary) except -1:",
            '    """Install an op-family module\'s operator slot (called at its import)."""']
    if slots:
        body.append("    global " + ", ".join(f"_slot_{n}_fn" for n, _ in slots))
    for i, (name, unary) in enumerate(slots):
        body.append(f"    {'if' if i == 0 else 'elif'} name == {name!r}:")
        body.append(f"        _slot_{name}_fn = {'unary' if unary else 'binary'}")
    body.append("    else:" if slots else "    if True:")
    body.append("        raise KeyError(f'no operator slot {name!r} in the tensor module')")
    body.append("    return 0")
    out.append("\n".join(body) + "\n")
    return "\n\n".join(out)


def prefix_calls(formula):
    """``where(c, a, b)`` in a formula calls the generated ``_f_where``."""
    return re.sub(r"(?<![\w.])([A-Za-z_]\w*)(?=\()",
                  lambda m: "_f_" + m.group(1) if m.group(1) in FUNCTION_NAMES else m.group(1),
                  formula)


# Ops whose PyTorch binding turns a Python number into a (wrapped) tensor input, so the node
# lists an edge for it (``(x + 2).grad_fn.next_functions`` has two entries); elsewhere a number
# picks a Scalar overload with no such input (``x.clamp(0, 1)`` has one).
WRAPS_SCALARS = {"add", "sub", "mul", "div", "where"}


def emit_autograd(decl, params):
    """The record function, the backward function and the node class of one op."""
    op, node = decl["name"], decl["node"]
    diff, slots, users = autograd_plan(decl, params)
    ps = [p for p in params if p.name != "out"]
    pdecl = ", ".join(f"object {p.name}" for p in ps)
    out = []
    # record
    list_input = [p.name for p in params if p.name in diff and p.type == "Tensor[]"]
    if list_input and len(diff) != 1:
        raise ValueError(f"{op}: a Tensor[] input must be the only differentiable input")
    inputs = f"tuple({diff[0]})" if list_input else "(" + ", ".join(diff) + ("," if len(diff) == 1 else "") + ")"
    # ``node_if``: (name, condition) pairs for overloads with their own node name in PyTorch
    # (prod(dim) is ProdBackward1, prod() ProdBackward0); the first true condition wins. A
    # name starting with "_" is a node class defined by hand in a .pxi (not generated).
    cls = f"_NODE_{node}"
    for alt, cond in reversed(decl.get("node_if", ())):
        cls = f"({alt if alt.startswith('_') else '_NODE_' + alt} if ({cond}) else {cls})"
    rec = [f"cdef int _rec_{op}(object result{', ' if pdecl else ''}{pdecl}, bint _inplace_, object _orig_self_) except -1:",
           f"    cdef Node n = _new_node({cls}, _bw_{op}, {inputs})"]
    if op in WRAPS_SCALARS:
        rec.append("    n._scalar_edges = 0          # PyTorch wraps a number into a tensor input here")
    for d in diff:
        rec.append(f"    cdef bint r_{d} = _req_any({d})")
    items = []
    for name, (kind, src) in slots:
        cond = " or ".join(f"r_{u}" for u in sorted(users[name]))
        if name in decl.get("save_if", {}):
            cond = f"({cond}) and ({decl['save_if'][name]})"
        if kind == "result":        # (a tuple result is never saved whole: that would cycle)
            expr = "(None if isinstance(result, tuple) else _save_any(result, True))"
        elif kind == "indices":
            expr = "(_save_any(result[1], False) if isinstance(result, tuple) else None)"
        elif kind == "result_k":
            expr = (f"(_save_output(result[{src}], {src}) if isinstance(result, tuple) "
                    "else None)")
        elif kind == "param":
            # (a number PyTorch wraps into a tensor is saved as one: freed with the graph)
            save = "_save_input" if op in WRAPS_SCALARS and src in diff else "_save_any"
            if src == "self":
                expr = f"(_save_any(_orig_self_, False) if _inplace_ else {save}(self, False))"
            else:
                expr = f"{save}({src}, False)"
        else:
            base, suf = src
            target = "result" if base == "result" else base
            if base == "self":           # an in-place op: self as it was before the op
                target = "(self if _orig_self_ is None else _orig_self_)"
            expr = "(" + META_SUFFIXES[suf].format(target) + f" if isinstance({target}, (TensorBase, list, tuple)) else None)"
        items.append(f"        ({expr}) if ({cond}) else None,")
    rec.append("    n._saved = (")
    rec += items
    rec.append("    )")
    view_of = decl.get("view_of")
    multi = decl.get("outputs") == "multi"
    if decl.get("outputs") == "auto":          # max/min: a tensor, or (values, indices)
        rec.append("    if isinstance(result, tuple):")
        rec.append("        _set_history_multi(result, n, CREATION_DEFAULT)")
        rec.append("    else:")
        rec.append("        _set_history(result, n)")
    elif multi:
        creation = "CREATION_MULTI_OUTPUT" if view_of else "CREATION_DEFAULT"
        rec.append(f"    _set_history_multi(result, n, {creation})")
    elif decl.get("inplace_view"):
        rec.append("    _set_history_inplace_view(result, n, _orig_self_)")
    else:
        rec.append("    if _inplace_:")
        rec.append("        _set_history_inplace(result, n)")
        rec.append("    else:")
        rec.append("        _set_history(result, n)")
        if view_of:
            rec.append("        _meta(result).view_version = (<TensorBase>result)._vc.version")
    rec.append("    return 0")
    out.append("\n".join(rec) + "\n")
    # backward
    bw = [f"def _bw_{op}(Node node, tuple grads):",
          "    cdef tuple s = _saved_of(node)",
          "    grad = grads[0]"]
    for i, (name, _) in enumerate(slots):
        bw.append(f"    {name} = _unpack(s[{i}], node)")
    formula = {d: prefix_calls(decl["backward"][d]) for d in diff}
    if list_input:
        bw.append(f"    return tuple({formula[diff[0]]})")
    else:
        bw.append("    return (")
        for i, d in enumerate(diff):
            bw.append(f"        ({formula[d]}) if node.next_edges[{i}][0] is not None else None,")
        bw.append("    )")
    out.append("\n".join(bw) + "\n")
    return out


def generate(ops, all_ops=None, defined_nodes=None, separate=False, family=None,
             elsewhere=None):
    """The generated Cython of the declarations ``ops`` (one family): its node classes,
    wrappers and slots, then the lines adding them to the tables ``_GENERATED_FUNCTIONS``,
    ``_GENERATED_METHODS``, ``_NODE_CLASSES`` and ``_OPERATOR_SLOTS``, which the including
    module defines. ``all_ops`` (default ``ops``): every declaration, for the names the
    backward formulas may call; ``defined_nodes``: node classes an earlier family defines
    (updated with this family's); ``separate``: the family (named ``family``) is a module
    of its own; ``elsewhere``: the ``_f_`` names compiled in other modules."""
    out = ["# GENERATED by tensorlib/ops/codegen.py from tensorlib/ops/decl/ -- do not edit.\n"]
    functions, methods = {}, {}
    node_classes = []
    operator_slots = {}
    defined_nodes = set() if defined_nodes is None else defined_nodes
    FUNCTION_NAMES.clear()
    for decl in ops if all_ops is None else all_ops:
        if "function" in decl.get("variants", "function method").split():
            FUNCTION_NAMES.add(decl["name"])
            FUNCTION_NAMES.update(decl.get("aliases", ()))
    for decl in ops:
        params = parse_signature(decl["sig"])
        if decl.get("backward"):
            if not decl.get("node"):
                raise ValueError(f"{decl['name']}: backward formulas need a node name")
            for n in [decl["node"]] + [a for a, _ in decl.get("node_if", ()) if not a.startswith("_")]:
                if n not in node_classes and n not in defined_nodes:
                    node_classes.append(n)
            out += emit_autograd(decl, params)
            out.append(emit_call(decl, params))
        elif decl.get("operators"):
            out.append(emit_plain_call(decl, params))
        for slot, order, inplace in decl.get("operators", ()):
            out.append(emit_slot(decl, params, slot, order, inplace, "" if separate else "inline "))
            operator_slots[slot] = (decl["name"], order, inplace)
        variants = decl.get("variants", "function method").split()
        if "function" in variants:
            # module-level names get a prefix: an op called sum/max/abs/isfinite must never
            # shadow a Python builtin or a C function inside the tensor module
            fname = "_f_" + decl["name"]
            out.append(emit_def(fname, decl, params, method=False))
            functions[decl["name"]] = fname
            for alias in decl.get("aliases", ()):
                functions[alias] = fname
        if "method" in variants:
            mname = "_m_" + decl["name"]
            out.append(emit_def(mname, decl, params, method=True))
            methods[decl["name"]] = mname
            for alias in decl.get("aliases", ()):
                methods[alias] = mname
        if "inplace" in variants:
            mname = "_m_" + decl["name"] + "_"
            out.append(emit_def(mname, decl, params, method=True, inplace=True))
            methods[decl["name"] + "_"] = mname
            for alias in decl.get("aliases", ()):
                methods[alias + "_"] = mname
    defined_nodes.update(node_classes)
    # the function variants of families compiled in another module that the backward
    # formulas call: None here, bound by the tensor module once every family is loaded
    used = set(re.findall(r"\b_f_\w+", "".join(out)))
    foreign = sorted(used - set(functions.values()) if separate else used & (elsewhere or set()))
    if foreign:
        out.insert(1, " = ".join(foreign) + " = None\n")
    out.insert(1, "".join(f"{n} = type('{n}', (Node,), {{'__slots__': (), '__module__': 'tensorlib.autograd'}})\n"
                          f"cdef type _NODE_{n} = {n}\n" for n in node_classes))
    out.append("_NODE_CLASSES.update({" + ", ".join(f"{n!r}: {n}" for n in node_classes) + "})\n")
    out.append("_GENERATED_FUNCTIONS.update({\n" +
               "".join(f"    {k!r}: {v},\n" for k, v in functions.items()) + "})\n")
    if functions:
        out.append("for _name, _fn in {" + ", ".join(f"{k!r}: {v}" for k, v in functions.items())
                   + "}.items():\n"
                   "    if _fn.__name__ == '_f_' + _name:\n"
                   "        _fn.__name__ = _fn.__qualname__ = _name\n")
    if separate:
        # this module's operator slots, into the core's slot table (see emit_slot_table)
        mine = [(s.strip("_"), order == "self") for s, (_, order, _) in operator_slots.items()]
        mine += [(n, kind == "unary") for n, (fam, kind) in HAND_SLOTS.items() if fam == family]
        out += [f"_set_slot({n!r}, {'NULL' if u else '_slot_' + n}, {'_slot_' + n if u else 'NULL'})\n"
                for n, u in mine]
    if operator_slots:
        out.append("# operator slot -> (the declared op it runs, operand order, in place)\n"
                   "_OPERATOR_SLOTS.update({\n" +
                   "".join(f"    {k!r}: {v!r},\n" for k, v in operator_slots.items()) + "})\n")
    out.append("_GENERATED_METHODS.update({\n" +
               "".join(f"    {k!r}: {v},\n" for k, v in methods.items()) + "})\n")
    return "\n\n".join(out)


def generate_families(families):
    """``{file name: text}``: ``_ops_<family>.pxi`` per declaration module of ``families``
    (each regenerated, and its module rebuilt, only when its own text changes), and
    ``_ops_generated.pxi``, which includes those of the families compiled into tensor.pyx
    (every family without a module of its own in ``FAMILY_MODULES``)."""
    all_ops = [decl for family in families for decl in family.OPS]
    files, nodes, included = {}, set(), []
    elsewhere = {"_f_" + d["name"] for family in families
                 if family.__name__.rsplit(".", 1)[-1] in FAMILY_MODULES for d in family.OPS
                 if "function" in d.get("variants", "function method").split()}
    for family in families:
        name = family.__name__.rsplit(".", 1)[-1]
        if name in FAMILY_MODULES:
            # a module of its own defines every node class it records (a class of the same
            # name elsewhere is another object: nodes are told apart by name only)
            files[f"_ops_{name}.pxi"] = generate(family.OPS, all_ops, set(), separate=True,
                                                 family=name)
        else:
            files[f"_ops_{name}.pxi"] = generate(family.OPS, all_ops, nodes, elsewhere=elsewhere)
            included.append(f'include "_ops_{name}.pxi"\n')
    files["_ops_generated.pxi"] = (
        "# GENERATED by tensorlib/ops/codegen.py from tensorlib/ops/decl/ -- do not edit.\n"
        "# The op families compiled into tensor.pyx, and the operator slots of the others.\n"
        + "".join(included) + "\n\n" + emit_slot_table(families))
    return files


# ---------------------------------------------------------------------------------------------
# Elementwise kernels: the typed loops and tables (C, included by cpu_elementwise.c after its
# loop templates), their declarations (C, included by cpu_elementwise.h) and the EwOp of each
# kernel (Cython, included by elementwise.pxi).

# (dtype class, C type) per dtype code; complex/half codes have no loop of their own
LOOP_TYPES = [("bool", "b8"), ("uint8", "u8"), ("int", "i8"), ("int", "i16"), ("int", "i32"),
              ("int", "i64"), None, None, ("float", "f32"), ("double", "f64")]
LOOP_MACRO = {"unary": "UNARY_LOOP", "binary": "BINARY_LOOP"}
# A loop whose expression calls cpu_math.h (tl_expf, tl_tanh, powf_ ...) spends nanoseconds
# per element and prefetches its contiguous inputs (MATH_UNARY_LOOP, MATH_BINARY_LOOP;
# cpu_simd.h says why); the cheap ones (x * y, -x, sqrtf(x)) leave that to the hardware,
# where the prefetch instructions would only cost time on data in cache.
_CALLS_MATH = re.compile(r"\b(tl_\w+|powf?_)\(")


def loop_macro(kind, expr):
    """The cpu_elementwise.c template of a loop of ``kind`` computing ``expr``.

        >>> loop_macro("unary", "tl_tanhf(x)"), loop_macro("binary", "x * y")
        ('MATH_UNARY_LOOP', 'BINARY_LOOP')
    """
    return ("MATH_" if _CALLS_MATH.search(expr) else "") + LOOP_MACRO[kind]


def ew_kernels(ops):
    """Every elementwise kernel of the declarations, in declaration order."""
    kernels, seen = [], set()
    for decl in ops:
        for k in decl.get("kernels", ()):
            if k["name"] in seen:
                raise ValueError(f"kernel {k['name']} declared twice")
            seen.add(k["name"])
            kernels.append(k)
    return kernels


def kernel_loops(k):
    """``{loop type: (output type, pre statement, C expression)}`` of a declared kernel's
    loops, in LOOP_TYPES order (a dtype class without an expression has none): what the CPU
    loops (emit_loops) and the CUDA kernels (cudagen.py) are both written from."""
    loops = {}
    for lt in LOOP_TYPES:
        if lt is None:
            continue
        cls, t = lt
        expr = k["exprs"][cls if t != "u8" else "uint8"]
        if expr is None:
            continue
        pre = k["pre"]
        if pre is None or t == "b8":
            pre = "NONE"
        elif isinstance(pre, dict):
            pre = pre.get(cls, "NONE")
        else:
            pre = f"{pre}({t})"
        if t == "b8":
            expr = _BOOL_OPERAND.sub(r"(\1 != 0)", expr)
        loops[t] = ("b8" if k["rule"] == "BOOL_OUT" else t, pre, expr.replace("{T}", t))
    return loops


# A bool loop reads each operand as 0 or 1, as PyTorch loads a bool: a bool view of bytes other
# than 0 and 1 (``u8.view(torch.bool)``) then compares, ANDs and XORs as the truth values do.
_BOOL_OPERAND = re.compile(r"\b([xyz])\b")


def emit_loops(k):
    """One kernel's loop instantiations and its ``tl_ew_<name>`` table."""
    lines, entries = [f"/* {k['name']} */"], []
    loops = kernel_loops(k)
    for lt in LOOP_TYPES:
        if lt is None:
            continue
        t = lt[1]
        if t not in loops:
            entries.append("NULL")
            continue
        fn = f"{k['name']}_{t}"
        out_t, pre, expr = loops[t]
        lines.append(f"{loop_macro(k['kind'], expr)}({fn}, {t}, {out_t}, {pre}, {expr})")
        entries.append(fn)
    lines.append(f"TABLE({k['name']}, {', '.join(entries)})")
    return "\n".join(lines) + "\n"


def generate_ew(ops):
    """``{file name: text}`` of the generated elementwise sources."""
    kernels = ew_kernels(ops)
    head = "GENERATED by tensorlib/ops/codegen.py from tensorlib/ops/decl/ -- do not edit."
    loops = [f"/* {head} */\n"] + [emit_loops(k) for k in kernels]
    decls = [f"/* {head} */\n"] + [f"TL_DECLARE_OP({k['name']})\n" for k in kernels]
    # the loop tables live in the tensor module (with the driver and the thread pool); the
    # elementwise module gets their addresses by name when it makes its EwOps
    names = [k["name"] for k in kernels] + HAND_KERNELS
    tables = [f"# {head}\n",
              'cdef extern from "cpu_elementwise.h" nogil:\n']
    tables += [f"    const tl_loop_fn tl_ew_{n}[10]\n" for n in names]
    tables.append("\n\ncdef const tl_loop_fn* ew_loops(str name) except NULL:\n"
                  '    """The loop table (one entry per dtype code) of the kernel ``name``."""\n')
    tables += [f"    {'if' if i == 0 else 'elif'} name == {n!r}:\n        return tl_ew_{n}\n"
               for i, n in enumerate(names)]
    tables.append("    raise KeyError(f'no elementwise kernel {name!r}')\n")
    pxi = [f"# {head}\n"]
    pxi += [f"cdef EwOp OP_{k['name'].upper()} = EwOp.make({k['error_name']!r}, "
            f"ew_loops({k['name']!r}), RULE_{k['rule']})\n" for k in kernels]
    return {"_ew_loops.h": "".join(loops), "_ew_ops.h": "".join(decls),
            "_ew_ops.pxi": "".join(pxi), "_ew_tables.pxi": "".join(tables)}


# kernels written by hand in cpu_elementwise.c (no declaration generates them)
HAND_KERNELS = ["clamp_scalar", "where", "clamp", "lerp"]


def write_if_changed(path, text):
    """Write ``text`` unless the file already holds it: an unchanged file keeps its mtime, so
    the build does not redo what depends on it."""
    old = None
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
    if text != old:
        with open(path, "w") as f:
            f.write(text)


def main(out_dir=OUT_DIR):
    """Generate every source into ``out_dir`` (the build directory's ``generated/``)."""
    sys.path.insert(0, HERE)
    import decl  # noqa: E402
    os.makedirs(out_dir, exist_ok=True)
    # Cython finds an include next to the including file before its include path: a copy that
    # older builds wrote into the source tree would shadow the one generated here
    stale = os.path.join(HERE, "..", "_core", "_ops_generated.pxi")
    if os.path.exists(stale):
        os.remove(stale)
    files = {**generate_families(decl.FAMILIES), **generate_ew(decl.OPS)}
    for name, text in files.items():
        write_if_changed(os.path.join(out_dir, name), text)
    return out_dir


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else OUT_DIR)
