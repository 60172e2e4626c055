"""Generate the op wrappers from the declarations file (tensorlib/ops/decl.py).

Run by setup.py before Cython. For every declared op it writes, into
tensorlib/_core/_ops_generated.pxi (included by tensor.pyx):

- a module-level ``def`` for the function variant (``tensorlib.transpose(input, 0, 1)``),
- a ``def _m_<name>`` for the method variant (installed on ``tensorlib.Tensor``),
- the ``_GENERATED_FUNCTIONS`` / ``_GENERATED_METHODS`` tables.

Cython turns each ``def`` into C argument parsing; each wrapper converts its arguments with
the typed helpers in tensor.pyx (``_targ``, ``_iarg`` ...) and calls the implementation named
in the declaration. Signature language (a small subset of PyTorch's native_functions.yaml):

    Tensor x | Tensor? x | Tensor[] xs | int x | int? x | int[] x | int[]... x (varargs) |
    float x | bool x | Scalar x | dtype? x | device? x | object x,   ``*`` starts keyword-only.

Variants: ``function``, ``method`` and ``inplace`` (a method ``name_``). An ``impl`` template may
use ``{inplace}`` (True only in the in-place variant) and ``{out}`` (None where absent).
"""
import builtins
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "_core", "_ops_generated.pxi")


class Param:
    def __init__(self, text, kwonly):
        m = re.fullmatch(r"\s*([\w\[\]?.]+)\s+(\w+)\s*(?:=\s*(.+?))?\s*", text)
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
        return [f"cdef tuple {c} = _ilist({pyname}, '{op}', '{p.name}', {pos})"]
    if t == "int[]...":
        return [f"cdef tuple {c} = _ivarargs({pyname}, '{op}', '{p.name}') if ({pyname} or {p.name} is None) "
                f"else _ilist({p.name}, '{op}', '{p.name}', {pos})"]
    if t == "float":
        return [f"cdef double {c} = _farg({pyname}, '{op}', '{p.name}', {pos})"]
    if t == "bool":
        return [f"cdef bint {c} = {pyname}"]
    if t == "dtype?":
        return [f"{c} = _dtarg({pyname}, '{op}', '{p.name}')"]
    if t in ("Scalar", "Tensor[]", "device?", "object", "int[]?", "object..."):
        return [f"{c} = {pyname}"]
    raise ValueError(f"{op}: unknown parameter type {t}")


def emit_def(defname, decl, params, method, inplace=False):
    """One ``def``: signature, argument conversion, the implementation call. The in-place
    variant (``add_``) drops ``out`` and passes ``{inplace}`` = True to the implementation."""
    op = decl["name"] + ("_" if inplace else "")
    if inplace:
        params = [p for p in params if p.name != "out"]
    sig, body = [], []
    seen_kw = False
    for i, p in enumerate(params):
        name = p.name
        if i == 0 and p.type == "Tensor":
            name = "self" if method else decl.get("input_name", "input")
        if p.varargs:
            sig.append(f"*{p.name}_args")
            seen_kw = True
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
        if i == 0 and p.type == "Tensor":
            name = "self" if method else decl.get("input_name", "input")
        pyname = f"{p.name}_args" if p.varargs else name
        body += convert(p, op, i if method else i + 1, pyname)
    impl = decl.get("impl") or "_" + op + "(" + ", ".join("{" + p.name + "}" for p in params) + ")"
    names = {p.name: p.c_name for p in params}
    names["inplace"] = "True" if inplace else "False"
    names.setdefault("out", "None")
    call = impl.format(**names)
    lines = [f"def {defname}({', '.join(sig)}):"]
    doc = decl.get("doc")
    if doc:
        lines.append('    """' + doc.strip().replace("\\", "\\\\") + '\n    """')
    lines += ["    " + b for b in body]
    lines.append(f"    return {call}")
    return "\n".join(lines) + "\n"


def function_defname(name):
    """The module-level name of a function wrapper. Ops named like Python builtins (sum, max,
    min, all, any, abs, pow, round ...) get a prefix: a module-level ``def any`` would shadow
    the builtin for all the other code in the tensor module. The public name is restored in
    ``__name__`` and in _GENERATED_FUNCTIONS."""
    return "_fn_" + name if hasattr(builtins, name) else name


def generate(ops):
    out = ["# GENERATED by tensorlib/ops/codegen.py from tensorlib/ops/decl.py -- do not edit.\n"]
    functions, methods = {}, {}
    for decl in ops:
        params = parse_signature(decl["sig"])
        variants = decl.get("variants", "function method").split()
        if "function" in variants:
            defname = function_defname(decl["name"])
            out.append(emit_def(defname, decl, params, method=False))
            if defname != decl["name"]:
                out.append(f"{defname}.__name__ = {decl['name']!r}\n"
                           f"{defname}.__qualname__ = {decl['name']!r}\n")
            functions[decl["name"]] = defname
            for alias in decl.get("aliases", ()):
                functions[alias] = defname
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
    out.append("_GENERATED_FUNCTIONS = {\n" +
               "".join(f"    {k!r}: {v},\n" for k, v in functions.items()) + "}\n")
    out.append("_GENERATED_METHODS = {\n" +
               "".join(f"    {k!r}: {v},\n" for k, v in methods.items()) + "}\n")
    return "\n\n".join(out)


def main():
    sys.path.insert(0, HERE)
    import decl  # noqa: E402
    text = generate(decl.OPS)
    old = open(OUT).read() if os.path.exists(OUT) else None
    if text != old:                      # keep the mtime when nothing changed (no rebuild)
        with open(OUT, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
