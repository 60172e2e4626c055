"""Packaging: ``python -m build`` makes an sdist and a binary wheel of the checkout; the wheel
holds the compiled core, the ``.pxd`` files, the C headers, the ``.cu`` sources, the type stubs
and ``py.typed``, carries this interpreter's tags, installs into a fresh virtual environment
on a machine with no compiler and runs the README's quick start there; the sdist builds from
a clean unpacked tree; two builds give the same files with the same non-binary contents.

The wheel of the checkout is built in the checkout (``build/`` is reused: after the
``pip install .`` that CI runs first, only the link step and the copies remain, 10-20 s); the
wheel of the sdist is a full build at ``TENSORLIB_DEV=1`` (-O0: the test is about what the
sdist carries, not about the flags; 2-3 minutes on two idle cores), run in CI (``CI`` set) or
with ``TENSORLIB_TEST_SDIST_BUILD=1``.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# a fixed time for every file of both builds (wheel and sdist honour SOURCE_DATE_EPOCH)
EPOCH = "1700000000"

pytestmark = pytest.mark.skipif(
    not all(os.path.exists(os.path.join(REPO, p))
            for p in ("setup.py", "pyproject.toml", "tensorlib/ops/codegen.py")),
    reason="the source tree (setup.py, pyproject.toml, tensorlib/) is not beside tests/: "
           "these tests build the package from it")


def _build_env(**extra):
    env = dict(os.environ, SOURCE_DATE_EPOCH=EPOCH, PYTHONHASHSEED="0", **extra)
    env.pop("PYTHONPATH", None)
    return env


def _run(cmd, cwd, env, timeout):
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    took = time.perf_counter() - start
    assert proc.returncode == 0, (f"{' '.join(cmd)} failed ({proc.returncode}):\n"
                                  f"{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}")
    print(f"{' '.join(cmd[2:5])}: {took:.1f} s")
    return proc


def _python_build(args, src, outdir, timeout=1200, **env):
    """``python -m build`` (an isolated build environment, as a packager runs it)."""
    pytest.importorskip("build", reason="the `build` package (in the test extra) is needed")
    _run([sys.executable, "-m", "build", *args, "--outdir", outdir, src], cwd=outdir,
         env=_build_env(**env), timeout=timeout)
    return outdir


def _one(folder, pattern):
    found = glob.glob(os.path.join(folder, pattern))
    assert len(found) == 1, (pattern, os.listdir(folder))
    return found[0]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel of the checkout."""
    out = str(tmp_path_factory.mktemp("wheel"))
    return _one(_python_build(["--wheel"], REPO, out), "*.whl")


@pytest.fixture(scope="module")
def sdist(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("sdist"))
    return _one(_python_build(["--sdist"], REPO, out), "*.tar.gz")


def _source_files(pattern):
    return sorted(os.path.relpath(p, REPO).replace(os.sep, "/")
                  for p in glob.glob(os.path.join(REPO, pattern), recursive=True))


def _tag():
    py = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{py}-{py}-{platform}"


def test_wheel_contents(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    # the compiled core: one extension module per .pyx
    modules = [p[:-4] + suffix for p in _source_files("tensorlib/_core/*.pyx")]
    assert len(modules) >= 10
    expected = set(modules)
    expected |= set(_source_files("tensorlib/**/*.py"))           # the Python packages
    expected |= set(_source_files("tensorlib/**/*.pxd"))          # cimport tensorlib...
    expected |= set(_source_files("tensorlib/_core/cpu/*.h"))     # ...and its C headers
    expected |= set(_source_files("tensorlib/include/**/*.h"))    # the C API, where present
    expected |= set(_source_files("tensorlib/**/*.pyi")) | {"tensorlib/py.typed"}
    # the CUDA back end's sources, compiled at run time: package data under cuda/kernels/
    kernels = ["tensorlib/cuda/kernels/" + os.path.relpath(p, "cuda")
               for p in _source_files("cuda/**/*") if os.path.isfile(os.path.join(REPO, p))]
    assert any(k.endswith(".cu") for k in kernels)
    expected |= set(kernels)
    assert not expected - names, f"missing from the wheel: {sorted(expected - names)}"
    assert "tensorlib/__init__.pyi" in names and "tensorlib/_tensor.pyi" in names
    # build outputs and sources that have no use once compiled stay out
    extra = {n for n in names - expected if not n.startswith("tensorlib-0")}
    assert not {n for n in extra if n.endswith((".c", ".o", ".so", ".html"))}, extra
    assert not [n for n in names if n.startswith(("tests/", "build/", "bench/"))]
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_wheel_tags(wheel):
    name = os.path.basename(wheel)
    assert name == f"tensorlib-0.1.0-{_tag()}.whl", name
    meta = zipfile.ZipFile(wheel)
    text = meta.read("tensorlib-0.1.0.dist-info/WHEEL").decode()
    # a binary wheel: never py3-none-any, never purelib
    assert "Root-Is-Purelib: false" in text
    assert re.findall(r"^Tag: (.+)$", text, re.M) == [_tag()]
    metadata = meta.read("tensorlib-0.1.0.dist-info/METADATA").decode()
    assert "Requires-Dist: numpy>=1.26" in metadata
    assert "Requires-Python: >=3.10" in metadata


def _strip_compilers(env, bindir):
    """``env`` with PATH reduced to ``bindir`` (the venv's scripts: no gcc, cc, c++, clang)
    and the compiler variables pointing at a command that always fails."""
    env = dict(env, PATH=bindir, CC="false", CXX="false", LDSHARED="false")
    for name in ("gcc", "cc", "c++", "g++", "clang", "nvcc", "ld"):
        assert shutil.which(name, path=bindir) is None, name
    return env


def _quickstart():
    text = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    section = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks and ">>>" in blocks[0]
    return "\n".join(blocks)


RUN_IN_VENV = r"""
import doctest, os, shutil, sys, sysconfig
import tensorlib
# the installed package, not a checkout
assert tensorlib.__file__.startswith(sysconfig.get_paths()["purelib"]), tensorlib.__file__
assert shutil.which("gcc") is None and shutil.which("cc") is None
here = os.path.dirname(tensorlib.__file__)
assert os.path.isfile(os.path.join(here, "py.typed"))
assert os.path.isfile(os.path.join(here, "__init__.pxd"))          # cimport tensorlib
assert os.path.isfile(os.path.join(here, "_core", "tensor.pxd"))
assert os.path.isfile(os.path.join(tensorlib.get_include(), "tensorlib.h"))
assert tensorlib.cuda.kernel_dir() == os.path.join(here, "cuda", "kernels")
assert any(n.endswith(".cu") for n in os.listdir(tensorlib.cuda.kernel_dir()))
test = doctest.DocTestParser().get_doctest(open(sys.argv[1]).read(), {}, "quickstart",
                                           "README.md", 0)
runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
out = []
result = runner.run(test, out=out.append)
assert result.failed == 0 and result.attempted >= 5, "".join(out)
print("quickstart ok:", result.attempted, "examples")
"""


def test_wheel_installs_without_a_compiler_and_runs_the_quickstart(wheel, tmp_path):
    venv = str(tmp_path / "venv")
    env = _build_env()
    env.pop("PYTHONHOME", None)
    _run([sys.executable, "-m", "venv", venv], cwd=str(tmp_path), env=env, timeout=300)
    bindir = os.path.join(venv, "bin")
    python = os.path.join(bindir, "python")
    env = _strip_compilers(env, bindir)
    # numpy comes from pip's configured index (a wheel: nothing to compile either);
    # --only-binary makes "no compiler needed" a checked fact rather than luck
    start = time.perf_counter()
    proc = subprocess.run([python, "-m", "pip", "install", "--only-binary", ":all:", wheel],
                          cwd=str(tmp_path), env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    print(f"pip install of the wheel (and numpy) into a fresh venv: "
          f"{time.perf_counter() - start:.1f} s")
    script = tmp_path / "quickstart.txt"
    script.write_text(_quickstart())
    proc = subprocess.run([python, "-c", RUN_IN_VENV, str(script)], cwd=str(tmp_path),
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "quickstart ok" in proc.stdout


def _tar_files(path):
    with tarfile.open(path) as tar:
        return {m.name.split("/", 1)[1]: tar.extractfile(m).read()
                for m in tar.getmembers() if m.isfile()}


def test_sdist_contents(sdist):
    files = _tar_files(sdist)
    for needed in ("setup.py", "pyproject.toml", "MANIFEST.in", "README.md",
                   "tensorlib/ops/codegen.py", "tensorlib/ops/decl/elementwise.py",
                   "tensorlib/_core/tensor.pyx", "tensorlib/_core/tensor.pxd",
                   "tensorlib/_core/cpu/cpu_elementwise.c", "tensorlib/_core/cpu/cpu_math.h",
                   "tensorlib/py.typed", "tensorlib/__init__.pyi", "tensorlib/_tensor.pyi",
                   "tensorlib/ops/stubgen.py"):
        assert needed in files, needed
    assert {p for p in _source_files("cuda/*.cu")} <= set(files)
    # build outputs never travel: no compiled modules, no Cython output, no build/ folder
    assert not [n for n in files if n.endswith((".so", ".o", ".pyc"))]
    assert not [n for n in files if n.startswith("build/")]
    assert "tensorlib/_core/tensor.c" not in files


def _wheel_files(path):
    with zipfile.ZipFile(path) as z:
        return {i.filename: (i.date_time, z.read(i.filename)) for i in z.infolist()}


def _binary(name):
    # the compiled modules, and the record of the flags they were compiled with (this test
    # builds the sdist at -O0 to save time)
    return name.endswith((".so", ".pyd", "/_build_info.py"))


def _comparable(name, data):
    """A wheel member's contents less what differs between two builds of the same sources:
    the compiled modules, and their hashes in RECORD."""
    if name.endswith("/RECORD"):
        return [line for line in data.decode().splitlines() if not _binary(line.split(",")[0])]
    return data


def _assert_same_build(first, second):
    """Two wheels of the same sources: the same members, each dated SOURCE_DATE_EPOCH, with
    the same contents except the compiled modules."""
    a, b = _wheel_files(first), _wheel_files(second)
    assert sorted(a) == sorted(b)
    epoch = time.gmtime(int(EPOCH))[:6]
    for name in a:
        if not _binary(name):
            assert _comparable(name, a[name][1]) == _comparable(name, b[name][1]), name
        assert a[name][0] == b[name][0] == epoch, (name, a[name][0], b[name][0])


def test_two_builds_are_reproducible(sdist, wheel, tmp_path):
    again = _one(_python_build(["--wheel"], REPO, str(tmp_path)), "*.whl")
    _assert_same_build(wheel, again)
    # and a second sdist carries the same files with the same contents
    again = _one(_python_build(["--sdist"], REPO, str(tmp_path)), "*.tar.gz")
    assert _tar_files(again) == _tar_files(sdist)


# A full build of every module: 2-3 minutes on two idle cores, up to 7 on a loaded machine.
# CI (which sets CI) runs it; set TENSORLIB_TEST_SDIST_BUILD=1 to run it elsewhere.
@pytest.mark.skipif(not (os.environ.get("CI") or os.environ.get("TENSORLIB_TEST_SDIST_BUILD")),
                    reason="the full build of the sdist runs where CI or "
                           "TENSORLIB_TEST_SDIST_BUILD=1 is set")
def test_sdist_builds_from_a_clean_tree_like_the_checkout(sdist, wheel, tmp_path):
    unpacked = tmp_path / "src"
    with tarfile.open(sdist) as tar:
        tar.extractall(unpacked, filter="data")
    (root,) = unpacked.iterdir()
    assert not (root / "build").exists()
    out = str(tmp_path / "out")
    os.mkdir(out)
    # every module compiled from the sdist's sources alone, at -O0 (the flags do not change
    # what the sdist must carry, and halve the time)
    built = _one(_python_build(["--wheel"], str(root), out, TENSORLIB_DEV="1"), "*.whl")
    assert os.path.basename(built) == os.path.basename(wheel)
    # the same wheel as the checkout's, to the byte but for the compiled modules
    _assert_same_build(wheel, built)
