"""The public Cython and C APIs, through a real extension built outside tensorlib: the example
project examples/cython_extension (tl_fused) is copied to a temporary folder, pip-installed
against the tensorlib imported here into a temporary target (one build per module), imported,
and checked against NumPy, Python's view of the same tensors, the memory counters, the
profiler and the version counter; the version check at import runs in subprocesses."""
import gc
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import weakref

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib
from tensorlib._core import capi
from tensorlib._core.allocator import ROLE_NAMES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "cython_extension")
# where the imported tensorlib lives: the build and the subprocesses must see that one
TL_HOME = os.path.dirname(os.path.dirname(tensorlib.__file__))
INCLUDE = tensorlib.get_include()


def _compiler():
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(cc)


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    if not os.path.isdir(EXAMPLE):
        pytest.skip("examples/cython_extension is not beside the tests (a bare test folder)")
    if _compiler() is None:
        pytest.skip("no C compiler: the example extension cannot be built")
    pytest.importorskip("Cython", reason="Cython is not installed in the test environment "
                                          "(the example extension is built with it)")
    tmp = tmp_path_factory.mktemp("cython_extension")
    src, target = tmp / "src", tmp / "target"
    shutil.copytree(EXAMPLE, src, ignore=shutil.ignore_patterns("build", "*.so", "*.egg-info",
                                                                "_cyfused.c"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [TL_HOME, *filter(None, [os.environ.get("PYTHONPATH")])]))
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation",
                        "--no-deps", "--no-index", "--disable-pip-version-check", "--target",
                        str(target), str(src)],
                       cwd=TL_HOME, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    sys.path.insert(0, str(target))
    try:
        import tl_fused
        yield tl_fused
    finally:
        sys.path.remove(str(target))
        for name in [m for m in sys.modules if m == "tl_fused" or m.startswith("tl_fused.")]:
            del sys.modules[name]


def _target(ext):
    return os.path.dirname(os.path.dirname(ext.__file__))


def _run(ext, code):
    """Run ``code`` in a fresh interpreter that sees tensorlib and the built extension."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([_target(ext), TL_HOME]))
    return subprocess.run([sys.executable, "-c", code], cwd=TL_HOME, env=env,
                          capture_output=True, text=True, timeout=120)


# ---- results against NumPy -----------------------------------------------------------------

@pytest.mark.parametrize("dtype, tol", [(tensorlib.float32, 1e-6), (tensorlib.float64, 1e-12)])
@pytest.mark.parametrize("way", ["scale_add", "scale_add_rows", "c_scale_add"])
def test_scale_add_matches_numpy(ext, way, dtype, tol):
    fn = getattr(ext, way)
    x = tensorlib.randn(129, 33, dtype=dtype)
    y = tensorlib.randn(129, 33, dtype=dtype)
    out = fn(x, y, -0.75)
    assert out.dtype is dtype and out.shape == (129, 33) and out.is_contiguous()
    np.testing.assert_allclose(out.numpy(), -0.75 * x.numpy() + y.numpy(), rtol=tol, atol=tol)


def test_strided_inputs(ext):
    x = tensorlib.randn(40, 300, dtype=tensorlib.float64).t()      # 300 x 40, column-major
    y = tensorlib.randn(300, 80, dtype=tensorlib.float64)[:, 1::2]
    want = 3.0 * x.numpy() + y.numpy()
    np.testing.assert_allclose(ext.scale_add_rows(x, y, 3.0).numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(ext.scale_add(x, y, 3.0).numpy(), want, rtol=1e-12)
    big = tensorlib.randn(200, 200)          # above the size where the raw loop drops the GIL
    np.testing.assert_allclose(ext.scale_add(big, big, 2.0).numpy(), 3.0 * big.numpy(),
                               rtol=1e-6)


@given(rows=st.integers(0, 40), cols=st.integers(0, 12), step=st.integers(1, 3),
       transpose=st.booleans(), a=st.floats(-4, 4))
def test_rows_on_random_layouts(ext, rows, cols, step, transpose, a):
    base = tensorlib.randn(cols, rows * step, dtype=tensorlib.float64) if transpose else \
        tensorlib.randn(rows, cols * step, dtype=tensorlib.float64)
    x = base[:, ::step].t() if transpose else base[:, ::step]
    y = tensorlib.randn(rows, cols, dtype=tensorlib.float64)
    assert x.shape == (rows, cols)
    want = a * x.numpy() + y.numpy()
    np.testing.assert_allclose(ext.scale_add_rows(x, y, a).numpy(), want, rtol=1e-12, atol=0)
    np.testing.assert_allclose(ext.scale_add(x, y, a).numpy(), want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("dtype, tol", [(tensorlib.float32, 1e-6), (tensorlib.float64, 1e-12)])
def test_softmax_rows_matches_numpy(ext, dtype, tol):
    x = tensorlib.randn(97, 13, dtype=dtype) * 5
    a = x.numpy().astype(np.float64)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(ext.softmax_rows(x).numpy(), e / e.sum(axis=1, keepdims=True),
                               rtol=tol, atol=tol)
    np.testing.assert_allclose(ext.softmax_rows(x.t().contiguous().t()).numpy(),
                               ext.softmax_rows(x).numpy(), rtol=tol)


def test_bad_arguments_of_the_example(ext):
    with pytest.raises(TypeError):
        ext.scale_add(tensorlib.ones(2), np.ones(2), 1.0)      # Cython's type check
    with pytest.raises(TypeError, match="expected float32 or float64"):
        ext.scale_add(tensorlib.ones(2, dtype=tensorlib.int64), tensorlib.ones(2), 1.0)
    with pytest.raises(ValueError, match=r"shapes \[2\] and \[3\] differ"):
        ext.scale_add(tensorlib.ones(2), tensorlib.ones(3), 1.0)
    with pytest.raises(TypeError, match="c_scale_add: expected a tensor, got list"):
        ext.c_scale_add([1.0], tensorlib.ones(1), 1.0)
    with pytest.raises(ValueError, match="different shapes"):
        ext.c_scale_add(tensorlib.ones(2), tensorlib.ones(3), 1.0)


def test_the_example_projects_own_tests(ext):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([_target(ext), TL_HOME]))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        os.path.join(EXAMPLE, "tests")], cwd=TL_HOME, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


# ---- the accessors ---------------------------------------------------------------------------

def _python_view(t):
    return dict(ndim=t.dim(), shape=list(t.shape), strides=list(t.stride()),
                stride_bytes=[s * t.element_size() for s in t.stride()], numel=t.numel(),
                dtype=t.dtype.code, itemsize=t.element_size(),
                device={"cpu": 0, "meta": 1, "cuda": 2}[t.device.type],
                contiguous=t.is_contiguous(), requires_grad=t.requires_grad,
                version=t._version)


@pytest.mark.parametrize("make", [
    lambda: tensorlib.arange(24.0).reshape(2, 3, 4),
    lambda: tensorlib.arange(24, dtype=tensorlib.int16).reshape(2, 3, 4).permute(2, 0, 1),
    lambda: tensorlib.arange(30.0, dtype=tensorlib.float64).reshape(5, 6)[1:, ::2],
    lambda: tensorlib.ones(3, requires_grad=True),
    lambda: tensorlib.tensor(True),
    lambda: tensorlib.ones(1, 5).expand(4, 5),
    lambda: tensorlib.empty(2, 3, device="meta"),
    lambda: tensorlib.zeros(*[1] * 8),                      # more dims than kept inline
])
@pytest.mark.parametrize("way", ["info", "c_info"])
def test_accessors_agree_with_python(ext, way, make):
    t = make()
    got = getattr(ext, way)(t)
    data = got.pop("data")
    assert got == _python_view(t)
    if t.device.type == "cpu":
        assert data == t.data_ptr()


def test_constants_agree(ext):
    """tensorlib.h's enums and versions, capi.pxd's marker and capi's runtime are one."""
    header = open(os.path.join(INCLUDE, "tensorlib.h")).read()
    consts = {m[0]: int(m[1]) for m in re.findall(r"\b(TL_[A-Z0-9_]+) = (\d+)", header)}
    for dt in (tensorlib.bool, tensorlib.uint8, tensorlib.int8, tensorlib.int16, tensorlib.int32,
               tensorlib.int64, tensorlib.float16, tensorlib.bfloat16, tensorlib.float32,
               tensorlib.float64):
        assert consts[f"TL_DTYPE_{str(dt).split('.')[1].upper()}"] == dt.code
    role = {"saved-for-backward": "SAVED", "optimizer-state": "OPTIMIZER_STATE"}
    for code, name in enumerate(ROLE_NAMES):
        assert consts[f"TL_ROLE_{role.get(name, name.upper())}"] == code
    versions = {m[0]: int(m[1]) for m in
                re.findall(r"#define (TENSORLIB_A[BP]I_VERSION) (\d+)", header)}
    assert versions == {"TENSORLIB_ABI_VERSION": capi.ABI_VERSION,
                        "TENSORLIB_API_VERSION": capi.API_VERSION}
    pxd = open(os.path.join(os.path.dirname(capi.__file__), "capi.pxd")).read()
    assert f"cdef class ABI_{capi.ABI_VERSION}_API_{capi.API_VERSION}:" in pxd
    assert ext.built_against() == ext.c_built_against() == (capi.ABI_VERSION, capi.API_VERSION)


def test_the_api_files_ship_with_the_package():
    """What an extension build reads is installed beside the package (package data)."""
    pkg = os.path.dirname(tensorlib.__file__)
    assert os.path.exists(os.path.join(pkg, "__init__.pxd"))
    for name in ("capi", "tensor", "allocator", "dtype", "kernels"):
        assert os.path.exists(os.path.join(pkg, "_core", f"{name}.pxd"))
    assert os.path.samefile(INCLUDE, os.path.join(pkg, "include"))
    assert os.path.exists(os.path.join(INCLUDE, "tensorlib.h"))


def test_every_header_the_pxd_files_name_is_in_get_include():
    core = os.path.dirname(capi.__file__)
    named = set()
    for f in os.listdir(core):
        if f.endswith(".pxd"):
            text = open(os.path.join(core, f)).read()
            named |= set(re.findall(r'cdef extern from "([^"]+)"', text))
    missing = [h for h in named if not os.path.exists(os.path.join(INCLUDE, h))]
    assert not missing, f"add forwarding headers to tensorlib/include for {missing}"


# ---- creation --------------------------------------------------------------------------------

@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_empty(ext, device):
    kind = {"cpu": 0, "meta": 1}[device]
    t = ext.empty((2, 0, 3), tensorlib.int32.code, kind)
    assert t.shape == (2, 0, 3) and t.dtype is tensorlib.int32 and t.device.type == device
    t = ext.empty((), tensorlib.float16.code, kind)
    assert t.shape == () and t.dtype is tensorlib.float16
    with pytest.raises(RuntimeError, match=r"negative dimension -2: \[3, -2\]"):
        ext.empty((3, -2), tensorlib.float32.code, 0)
    with pytest.raises(ValueError, match="dtype code 10 is not a tensorlib dtype"):
        ext.empty((3,), 10, 0)
    with pytest.raises(ValueError, match="device 7 is not a tensorlib device kind"):
        ext.empty((3,), 8, 7)


@pytest.mark.parametrize("way", ["empty_like", "c_empty_like"])
def test_empty_like_keeps_dense_layouts(ext, way):
    for t in (tensorlib.ones(3, 4).t(), tensorlib.ones(2, 3, 4, dtype=tensorlib.float64),
              tensorlib.ones(4, 6)[:, ::2], tensorlib.ones(2, 2, device="meta")):
        e = getattr(ext, way)(t)
        ref = tensorlib.empty_like(t)
        assert (e.shape, e.stride(), e.dtype, e.device) == (ref.shape, ref.stride(), ref.dtype,
                                                           ref.device)
        assert e.data_ptr() != t.data_ptr() or t.device.type == "meta"
    if way == "c_empty_like":
        with pytest.raises(TypeError, match="tl_empty_like: expected a tensor, got int"):
            ext.c_empty_like(3)


@pytest.mark.parametrize("way", ["wrap", "c_wrap"])
def test_from_pointer_borrows_and_keeps_the_owner(ext, way, no_gc):
    before = tensorlib.memory.memory_allocated()
    a = np.arange(6.0)
    t = ext.wrap(a, a) if way == "wrap" else ext.c_wrap(a)
    assert tensorlib.memory.memory_allocated() == before        # borrowed: not counted
    assert t.data_ptr() == a.ctypes.data and t.tolist() == a.tolist()
    t[1] = 10.0
    assert a[1] == 10.0                                         # the same memory
    alive = weakref.ref(a)
    del a
    assert alive() is not None                                  # the tensor keeps the owner
    v = t[2:]                                                   # and so does a view of it
    del t
    assert alive() is not None and v.tolist() == [2.0, 3.0, 4.0, 5.0]
    del v
    assert alive() is None


@pytest.mark.parametrize("way", ["py", "c"])
def test_from_pointer_bad_input(ext, way):
    def wrap(address, shape, dtype=tensorlib.float64.code):
        if way == "py":
            return ext.wrap_address(address, shape, None, dtype, None)
        return ext.c_wrap_address(address, tuple(shape), dtype, None)

    with pytest.raises(ValueError, match="from_pointer: the data pointer is NULL"):
        wrap(0, (2,))
    with pytest.raises(ValueError, match="0x1004 is not aligned to the 8-byte elements of float64"):
        wrap(0x1004, (2,))
    with pytest.raises(RuntimeError, match=r"negative dimension -1: \[2, -1\]"):
        wrap(0x1000, (2, -1))
    with pytest.raises(ValueError, match="dtype code -1 is not a tensorlib dtype"):
        wrap(0x1000, (2,), -1)
    if way == "py":
        with pytest.raises(ValueError, match=r"negative stride -1 in dim 0 \(strides \[-1, 1\]\)"):
            ext.wrap_address(0x1000, (2, 2), (-1, 1), 8, None)


# ---- the allocator door --------------------------------------------------------------------

@pytest.mark.parametrize("way", ["hold_scratch", "c_scratch"])
def test_scratch_is_counted_with_its_role(ext, way, no_gc):
    mem = tensorlib.memory
    before = mem.memory_allocated()
    n_before = mem.memory_stats()["allocation.all.current"]
    with mem.profile() as prof:
        s = getattr(ext, way)(10_000)
        assert mem.memory_allocated() - before == 10_240          # rounded up to 512
        assert mem.memory_stats()["allocation.all.current"] == n_before + 1
        assert s.nbytes() == 10_000
        del s
    assert mem.memory_allocated() == before
    kinds = [(e.kind, e.bytes, e.op, e.role) for e in prof.events]
    assert kinds[-1] == ("free", 10_000, way, "temporary")
    assert ("role", 10_000, way, "temporary") in kinds


def test_softmax_scratch_in_the_profile(ext, no_gc):
    x = tensorlib.randn(20, 10, dtype=tensorlib.float64)
    with tensorlib.memory.profile() as prof:
        y = ext.softmax_rows(x)
    scratch = [e for e in prof.events if e.op == "softmax_rows"]
    assert [(e.kind, e.bytes, e.role) for e in scratch][-1] == ("free", 20 * 10 * 8, "temporary")
    assert prof.peak_bytes == 2 * 20 * 10 * 8                    # output + scratch
    del y


# ---- the version counter ---------------------------------------------------------------------

@pytest.mark.parametrize("way", ["scale_add_", "c_scale_add_"])
def test_in_place_write_goes_through_the_door(ext, way):
    fn = getattr(ext, way)
    x = tensorlib.arange(4.0)
    view = x[1:]
    v = x._version
    assert fn(x, tensorlib.ones(4), 2.0) is x
    assert x.tolist() == [1.0, 3.0, 5.0, 7.0]
    assert x._version == view._version == v + 1                 # shared with the views
    leaf = tensorlib.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError) as ours:
        fn(leaf, tensorlib.ones(3), 1.0)
    with pytest.raises(RuntimeError) as theirs:
        leaf.mul_(2)
    assert str(ours.value) == str(theirs.value)
    with tensorlib.no_grad():
        fn(leaf, tensorlib.ones(3), 1.0)
    assert leaf.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("way", ["bump", "c_bump"])
def test_a_c_write_is_seen_by_autograd(ext, way):
    a = tensorlib.randn(3, requires_grad=True)
    b = a.exp()                          # exp saves its output
    v = b._version
    getattr(ext, way)(b)
    assert b._version == v + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.sum().backward()


# ---- the version check at import -------------------------------------------------------------

def test_cython_extension_of_another_abi_fails_at_import(ext):
    r = _run(ext, "from tensorlib._core import capi\n"
                  "capi.ABI_VERSION += 1\n"          # this tensorlib now serves ABI 2 only
                  f"delattr(capi, 'ABI_{capi.ABI_VERSION}_API_{capi.API_VERSION}')\n"
                  "import tl_fused._cyfused")
    assert r.returncode != 0
    assert "ImportError: module compiled against tensorlib C ABI version 1, but this tensorlib" \
        in r.stderr, r.stderr[-2000:]
    assert "rebuild the extension against the installed tensorlib" in r.stderr


def test_cython_extension_of_a_newer_api_fails_at_import(ext):
    r = _run(ext, "from tensorlib._core import capi\n"
                  "capi.API_VERSION -= 1\n"
                  f"delattr(capi, 'ABI_{capi.ABI_VERSION}_API_{capi.API_VERSION}')\n"
                  "import tl_fused._cyfused")
    assert r.returncode != 0
    assert (f"ImportError: module compiled against tensorlib C API level {capi.API_VERSION}, "
            f"but this tensorlib") in r.stderr, r.stderr[-2000:]


@pytest.mark.parametrize("abi, api, message", [
    (2, 1, "module compiled against tensorlib C ABI version 1, but this tensorlib (0.1.0) has "
           "ABI version 2"),
    (1, 0, "module compiled against tensorlib C API level 1, but this tensorlib (0.1.0) "
           "provides level 0")])
def test_c_extension_of_another_version_fails_at_import(ext, abi, api, message):
    message = message.replace("0.1.0", tensorlib.__version__)
    r = _run(ext, f"from tensorlib._core import capi\ncapi._set_table_versions({abi}, {api})\n"
                  "import tl_fused._cfused")
    assert r.returncode != 0
    assert f"ImportError: {message}" in r.stderr, r.stderr[-2000:]


def test_extension_imports_in_a_fresh_process(ext):
    r = _run(ext, "import tl_fused, tensorlib\n"
                  "print(tl_fused.scale_add(tensorlib.ones(2), tensorlib.ones(2), 1.0).tolist())")
    assert r.returncode == 0 and r.stdout.strip() == "[2.0, 2.0]", r.stderr[-2000:]


def test_docstring_examples():
    import doctest
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    attempted = 0
    finder = doctest.DocTestFinder(recurse=False)
    for obj in (capi, capi._version_error, tensorlib.get_include):
        for test in finder.find(obj, "x", globs=dict(vars(capi), tensorlib=tensorlib)):
            out = []
            result = runner.run(test, out=out.append)
            assert result.failed == 0, "".join(out)
            attempted += result.attempted
    assert attempted >= 4
