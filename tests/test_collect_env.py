"""``python -m tensorlib.collect_env``: the report runs and its facts are the environment's,
each checked against an independent source."""
import importlib.util
import os
import platform
import re
import subprocess
import sys

import numpy
import pytest

import tensorlib
from tensorlib import collect_env

TL_HOME = os.path.dirname(os.path.dirname(tensorlib.__file__))


def test_module_runs_and_prints_the_report():
    r = subprocess.run([sys.executable, "-m", "tensorlib.collect_env"], cwd=TL_HOME,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = dict(re.match(r"([^:]+):\s+(.*)", line).groups()
                 for line in r.stdout.splitlines()[1:])
    assert lines["tensorlib"].startswith(tensorlib.__version__)
    assert lines["NumPy"] == numpy.__version__
    assert lines["Python"].startswith(platform.python_version())
    assert lines["threads"].startswith(f"{tensorlib.get_num_threads()} ")
    for key in ("built with Cython", "SIMD clone in use", "BLAS (NumPy's)", "CUDA available",
                "pycuda", "CUDA emulator", "C API", "C flags (kernels)"):
        assert lines[key]


def test_versions():
    info = collect_env.get_env_info()
    assert info["tensorlib"] == tensorlib.__version__
    assert info["numpy"] == numpy.__version__
    if importlib.util.find_spec("torch") is not None:
        import torch
        assert info["torch"].split("+")[0] == torch.__version__.split("+")[0]
    else:
        assert info["torch"] is None
    assert re.fullmatch(r"\d+\.\d+(\.\d+)?(\w+)?", info["cython_built_with"])
    from tensorlib._core import capi
    assert info["c_api"] == f"ABI {capi.ABI_VERSION}, API level {capi.API_VERSION}"


def test_thread_count_follows_set_num_threads():
    before = tensorlib.get_num_threads()
    try:
        tensorlib.set_num_threads(1)
        assert collect_env.get_env_info()["threads"] == 1
    finally:
        tensorlib.set_num_threads(before)
    assert collect_env.get_env_info()["threads"] == before


@pytest.mark.skipif(not (sys.platform.startswith("linux") and platform.machine() == "x86_64"),
                    reason="reads /proc/cpuinfo's x86 flags")
def test_isa_is_the_best_clone_this_cpu_supports():
    flags = set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    want = "avx512f" if "avx512f" in flags else "avx2" if "avx2" in flags else "default"
    assert collect_env.get_env_info()["isa"].startswith(want)


def test_blas_is_numpys():
    blas = numpy.show_config(mode="dicts")["Build Dependencies"]["blas"]
    assert collect_env.get_env_info()["blas"].startswith(blas["name"])


def test_build_info_when_recorded():
    info = collect_env.get_env_info()
    if info["cflags"] is None:
        pytest.skip("this build predates tensorlib/_build_info.py (setup.py writes it)")
    assert ("-O0" in info["cflags"]) == info["dev_build"]
    assert "-fwrapv" in info["cflags"] and "-ffast-math" not in info["cflags"]


def test_cuda_back_ends():
    cuda = collect_env.get_env_info()["cuda"]
    assert cuda["is_available"] == tensorlib.cuda.is_available()
    assert cuda["device_count"] == tensorlib.cuda.device_count()
    has_pycuda = importlib.util.find_spec("pycuda") is not None
    assert cuda["pycuda"] == ("installed" if has_pycuda else "not installed")
    assert os.path.isdir(cuda["kernels"])


def test_docstring_examples():
    import doctest
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    attempted = 0
    globs = dict(vars(collect_env), tensorlib=tensorlib)
    for test in doctest.DocTestFinder().find(collect_env, globs=globs):
        out = []
        result = runner.run(test, out=out.append)
        assert result.failed == 0, "".join(out)
        attempted += result.attempted
    assert attempted >= 2
