"""Type stubs: the generated ones are up to date with the declarations, every stub agrees with
the runtime (names, parameter names, kinds and defaults), and ``mypy --strict`` accepts a
user program (tests/typing_sample.py: tensors, ops, an nn.Module subclass, layers,
functional, Adam, a DataLoader) against the installed package, with no ``Any`` coming from
tensorlib's API (``--disallow-any-expr``) and with each result type checked by
``reveal_type``.
"""
import ast
import importlib
import inspect
import os
import re
import subprocess
import sys

import pytest

import tensorlib

PACKAGE = os.path.dirname(os.path.abspath(tensorlib.__file__))
HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "typing_sample.py")


def _stubgen():
    sys.path.insert(0, os.path.join(PACKAGE, "ops"))
    try:
        return importlib.import_module("stubgen")
    finally:
        sys.path.pop(0)


def test_generated_stubs_are_up_to_date():
    for name, text in _stubgen().generate().items():
        path = os.path.join(PACKAGE, name)
        assert os.path.exists(path), f"{path} missing: run python tensorlib/ops/stubgen.py"
        assert open(path, encoding="utf-8").read() == text, (
            f"{name} is out of date with tensorlib/ops/decl/: run python tensorlib/ops/stubgen.py")
    assert os.path.isfile(os.path.join(PACKAGE, "py.typed"))


# ---------------------------------------------------------------------------------------------
# Stubs against the runtime

def _stub_tree(module_name):
    """The parsed stub of ``module_name`` (a package's __init__.pyi or a module's .pyi)."""
    module = importlib.import_module(module_name)
    base = os.path.splitext(module.__file__)[0]
    if os.path.basename(base) == "__init__":
        path = os.path.join(os.path.dirname(base), "__init__.pyi")
    else:
        path = base + ".pyi"
    assert os.path.exists(path), path
    return module, ast.parse(open(path, encoding="utf-8").read())


def _names(body):
    """{name: [nodes]} defined at one level of a stub."""
    out = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.setdefault(node.target.id, []).append(node)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, []).append(node)
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                if a.asname and a.asname == a.name:      # an explicit re-export
                    out.setdefault(a.asname, []).append(node)
    return out


def _ast_params(fn, drop_first):
    a = fn.args
    params = []
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for p, d in zip(positional, defaults):
        params.append((p.arg, "positional", d is not None))
    if a.vararg:
        params.append((a.vararg.arg, "varargs", False))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        params.append((p.arg, "keyword", d is not None))
    if a.kwarg:
        params.append((a.kwarg.arg, "varkw", False))
    return params[1:] if drop_first else params


_KINDS = {inspect.Parameter.POSITIONAL_ONLY: "positional",
          inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
          inspect.Parameter.VAR_POSITIONAL: "varargs",
          inspect.Parameter.KEYWORD_ONLY: "keyword", inspect.Parameter.VAR_KEYWORD: "varkw"}


def _runtime_params(obj, drop_first):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    # ``*_spread``: the wrappers catch ints spread where a list is due, to raise PyTorch's
    # message; the stub leaves such calls out
    params = [(p.name, _KINDS[p.kind], p.default is not p.empty) for p in sig.parameters.values()
              if p.name != "_spread"]
    return params[1:] if drop_first else params


def _is_overload(fn):
    return any(isinstance(d, ast.Name) and d.id == "overload" for d in fn.decorator_list)


def _is_property(fn):
    return any((isinstance(d, ast.Name) and d.id == "property") or
               (isinstance(d, ast.Attribute) and d.attr in ("setter", "getter"))
               for d in fn.decorator_list)


def check_against_runtime(runtime, body, method, where, extra_runtime=()):
    """Every public runtime name of ``runtime`` (a module or class) has a stub in ``body``,
    every stub names something that exists, and each function stub has the runtime's
    parameters (overloads: each one's names exist at run time)."""
    problems = []
    stubs = _names(body)
    public = {n for n in dir(runtime) if not n.startswith("_")} - set(extra_runtime)
    if inspect.ismodule(runtime):
        public = {n for n in public if not inspect.ismodule(getattr(runtime, n))
                  or getattr(runtime, n).__name__.startswith(runtime.__name__ + ".")}
        if hasattr(runtime, "__all__"):
            public |= set(runtime.__all__)
    missing = sorted(public - set(stubs))
    if missing:
        problems.append(f"{where}: no stub for {missing}")
    for name, nodes in stubs.items():
        if name.startswith("_") and not name.startswith("__"):
            if not hasattr(runtime, name):
                continue              # the stub's own helpers (_int, _size, _GradMode ...)
        if not hasattr(runtime, name):
            problems.append(f"{where}: stub {name} does not exist at run time")
            continue
        fns = [n for n in nodes if isinstance(n, ast.FunctionDef) and not _is_property(n)]
        if not fns or name.startswith("__"):
            continue
        obj = getattr(runtime, name)
        real = _runtime_params(obj, method)
        if real is None:
            continue
        if any(_is_overload(f) for f in fns):
            names = {p[0] for p in real}
            for f in fns:
                extra = {p[0] for p in _ast_params(f, method)} - names
                if extra and not any(k == "varkw" for _, k, _ in real):
                    problems.append(f"{where}.{name} overload: no parameter {sorted(extra)}")
            continue
        stub = _ast_params(fns[0], method)
        if stub != real:
            problems.append(f"{where}.{name}: stub {stub}\n    runtime {real}")
    return problems


def test_package_stub_matches_the_runtime():
    module, tree = _stub_tree("tensorlib")
    problems = check_against_runtime(module, tree.body, False, "tensorlib")
    assert not problems, "\n".join(problems)


def test_tensor_stub_matches_the_runtime():
    module, tree = _stub_tree("tensorlib._tensor")
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor"]
    problems = check_against_runtime(tensorlib.Tensor, cls.body, True, "Tensor")
    (size,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Size"]
    problems += check_against_runtime(tensorlib.Size, size.body, True, "Size",
                                      extra_runtime=("count", "index"))
    assert not problems, "\n".join(problems)
