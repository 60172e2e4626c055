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


def _submodules_after_import(name):
    """The submodules that are attributes of module ``name`` right after ``import name`` in a
    fresh interpreter."""
    code = (f"import importlib, types; m = importlib.import_module({name!r}); "
            "print(' '.join(n for n, v in vars(m).items() if isinstance(v, types.ModuleType) "
            "and v.__name__.startswith(m.__name__ + '.')))")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([sys.executable, "-c", code], cwd=os.path.dirname(PACKAGE), env=env,
                          capture_output=True, text=True, timeout=120, check=True)
    return set(proc.stdout.split())


def _is_overload(fn):
    return any(isinstance(d, ast.Name) and d.id == "overload" for d in fn.decorator_list)


def _is_property(fn):
    return any((isinstance(d, ast.Name) and d.id == "property") or
               (isinstance(d, ast.Attribute) and d.attr in ("setter", "getter"))
               for d in fn.decorator_list)


def check_against_runtime(runtime, body, method, where, extra_runtime=(), chain=()):
    """Every public runtime name of ``runtime`` (a module or class) has a stub in ``body``,
    every stub names something that exists, and each function stub has the runtime's
    parameters (overloads: each one's names exist at run time)."""
    problems = []
    stubs = _names(body)
    if inspect.ismodule(runtime):
        # the submodules that importing the module brings (other tests import more)
        public = set(getattr(runtime, "__all__", ())) or {
            n for n in dir(runtime) if not n.startswith("_") and (
                not inspect.ismodule(getattr(runtime, n))
                or n in _submodules_after_import(runtime.__name__))}
    else:
        # what the class and the runtime bases the stub flattens into it (the private ones,
        # and those of ``chain``, the stub's own classes it derives from) define
        public = {n for cls in runtime.__mro__ if cls is not object
                  and (cls is runtime or cls.__name__.startswith("_") or cls.__name__ in chain)
                  for n in vars(cls) if not n.startswith("_")}
    public -= set(extra_runtime)
    missing = sorted(public - set(stubs))
    if missing:
        problems.append(f"{where}: no stub for {missing}")
    for name, nodes in stubs.items():
        if inspect.isclass(runtime) and all(isinstance(n, ast.AnnAssign) for n in nodes):
            continue                  # an instance attribute: set by __init__
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
        kinds = {d.id for f in fns for d in f.decorator_list if isinstance(d, ast.Name)}
        # a class or static method: bound to the class (or to nothing) at run time
        real = _runtime_params(obj, method and not kinds & {"classmethod", "staticmethod"})
        if real is None:
            continue
        if any(_is_overload(f) for f in fns):
            names = {p[0] for p in real}
            for f in fns:
                extra = {p[0] for p in _ast_params(f, method)} - names
                if extra and not any(k == "varkw" for _, k, _ in real):
                    problems.append(f"{where}.{name} overload: no parameter {sorted(extra)}")
            continue
        stub = _ast_params(fns[0], method and "staticmethod" not in kinds)
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
    problems = check_against_runtime(tensorlib.Tensor, cls.body, True, "Tensor",
                                     chain={"TensorBase"})
    (size,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Size"]
    problems += check_against_runtime(tensorlib.Size, size.body, True, "Size")
    assert not problems, "\n".join(problems)


def test_nn_optim_data_stubs_match_the_runtime():
    problems = []
    for name in ("tensorlib.nn", "tensorlib.nn.modules", "tensorlib.nn.functional",
                 "tensorlib.nn.init", "tensorlib.nn.utils", "tensorlib.optim",
                 "tensorlib.utils.data", "tensorlib.return_types", "tensorlib.nn.parameter",
                 "tensorlib.nn.parallel", "tensorlib.optim.lr_scheduler"):
        module, tree = _stub_tree(name)
        problems += check_against_runtime(module, tree.body, False, name)
        # each class: its constructor, forward and public methods (inherited stubs count)
        classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        for cname, node in classes.items():
            runtime = getattr(module, cname, None)
            if not inspect.isclass(runtime) or cname.startswith("_"):
                continue
            body, chain = list(node.body), {cname}
            base = node
            while base.bases and isinstance(base.bases[0], ast.Name) and \
                    base.bases[0].id in classes:
                base = classes[base.bases[0].id]
                body += base.body
                chain.add(base.name)
            own = [n for n in node.body if isinstance(n, ast.FunctionDef)
                   and n.name == "__init__" and not _is_overload(n)]
            if own:
                stub = _ast_params(own[0], True)
                real = _runtime_params(runtime.__init__, True)
                if real is not None and stub != real:
                    problems.append(f"{name}.{cname}.__init__: stub {stub}\n    runtime {real}")
            if not issubclass(runtime, tensorlib.Tensor):
                problems += check_against_runtime(runtime, body, True, f"{name}.{cname}",
                                                  chain=chain)
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------------------------------------
# mypy on a user program

# Code mypy must reject: the stubs type-check, they do not accept everything.
BAD = '''\
import tensorlib
from tensorlib import Tensor, nn, optim


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc(x)


x = tensorlib.zeros(2, 2)
x.no_such_method()                                   # E: attr-defined
nn.Linear("2", 3)                                    # E: arg-type
Net()("not a tensor")                                # E: arg-type
y: int = x.sum()                                     # E: assignment
optim.SGD(Net().parameters(), lr="fast")             # E: arg-type
tensorlib.reshape(x, 4, 1)                           # E: call-overload|misc|arg-type
s: str = x.shape                                     # E: assignment
'''


def _mypy_env_and_args(tmp_path):
    """mypy reads tensorlib where this process imported it from: the installed package (its
    site-packages, through --python-executable), or a checkout (through MYPYPATH)."""
    root = os.path.dirname(PACKAGE)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    site = [p for p in sys.path if p.endswith("site-packages")]
    if root not in site:
        env["MYPYPATH"] = root
    args = [sys.executable, "-m", "mypy", "--strict", "--disallow-any-expr",
            "--python-executable", sys.executable, "--cache-dir", str(tmp_path / "cache"),
            # report the program's own errors; tensorlib's untyped .py modules behind the
            # stubs are not what is checked here
            "--follow-imports=silent", "--show-error-codes", "--no-pretty"]
    return env, args


def test_mypy_strict_accepts_a_user_program_with_no_any(tmp_path):
    pytest.importorskip("mypy", reason="mypy (in the test extra) is needed")
    bad = tmp_path / "bad_program.py"
    bad.write_text(BAD)
    env, args = _mypy_env_and_args(tmp_path)
    proc = subprocess.run(args + [SAMPLE, str(bad)], cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    sample_lines = [l for l in out.splitlines() if l.startswith(SAMPLE)]
    errors = [l for l in sample_lines if ": error:" in l]
    assert not errors, "\n".join(errors)
    # every line BAD marks is an error, and no other line is
    expected = {i + 1: m.group(1) for i, line in enumerate(BAD.splitlines())
                for m in [re.search(r"# E: (\S+)", line)] if m}
    found = {}
    for line in out.splitlines():
        m = re.match(r"(?:.*/)?bad_program\.py:(\d+): error: .*\[([\w-]+)\]$", line)
        if m:
            found.setdefault(int(m.group(1)), []).append(m.group(2))
    assert set(found) == set(expected), out
    for lineno, codes in found.items():
        assert any(re.fullmatch(expected[lineno], c) for c in codes), (lineno, codes, out)
    # the program runs, and each revealed type is the type of the object at run time
    revealed = {}
    for line in sample_lines:
        m = re.match(re.escape(SAMPLE) + r":(\d+): note: Revealed type is \"(.+)\"$", line)
        if m:
            revealed[int(m.group(1))] = m.group(2)
    assert len(revealed) >= 8
    run = subprocess.run([sys.executable, SAMPLE], cwd=os.path.dirname(PACKAGE), env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"^loss \d+\.\d+$", run.stdout, re.M), run.stdout
    actual = {int(line.split()[1]): line.split()[2] for line in run.stdout.splitlines()
              if line.startswith("REVEAL ")}
    assert set(actual) == set(revealed)
    for lineno, static in revealed.items():
        assert re.search(rf"\b{actual[lineno]}\b", static), (lineno, static, actual[lineno])
