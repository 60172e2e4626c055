"""The cubin cache of the pycuda back end (tensorlib.cuda.kernel_cache): keyed by content,
compiled once, filled ahead of time by its command line; a clear error without nvcc. nvcc
needs no GPU, so this runs on every machine that has it."""
import os
import shutil
import subprocess
import sys

import pytest

from tensorlib.cuda import kernel_cache

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


@pytest.fixture
def kernels(tmp_path, monkeypatch):
    """A copy of the kernel folder (one small family and the headers) to edit."""
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cuda")
    kdir = tmp_path / "kernels"
    kdir.mkdir()
    for name in os.listdir(src):
        if name.endswith(".h") or name == "int_ops.cu":
            shutil.copy(os.path.join(src, name), kdir / name)
    monkeypatch.setattr(kernel_cache, "_kernel_dir", lambda: str(kdir))
    monkeypatch.setenv("TENSORLIB_CUDA_CACHE", str(tmp_path / "cache"))
    return kdir


def test_the_key_covers_the_file_its_headers_and_the_architecture(kernels):
    first = kernel_cache.cubin_path("int_ops", "sm_90")
    assert os.path.dirname(first) == kernel_cache.cache_dir()
    assert kernel_cache.cubin_path("int_ops", "sm_90") == first
    assert kernel_cache.cubin_path("int_ops", "sm_80") != first
    with open(kernels / "tl_cuda.h", "a") as f:
        f.write("\n// an edit\n")
    assert kernel_cache.cubin_path("int_ops", "sm_90") != first
    assert kernel_cache.families() == ["int_ops"]


@needs_nvcc
def test_compiled_once_then_read_from_the_cache(kernels, monkeypatch):
    path = kernel_cache.compile_cubin("int_ops", "sm_80")
    with open(path, "rb") as f:
        assert f.read(4) == b"\x7fELF"                  # a cubin is an ELF image
    assert os.listdir(os.path.dirname(path)) == [os.path.basename(path)]  # no temporaries
    monkeypatch.setattr(kernel_cache, "_run_nvcc", lambda cmd: pytest.fail("recompiled"))
    assert kernel_cache.compile_cubin("int_ops", "sm_80") == path


@needs_nvcc
def test_a_compile_error_names_the_file(kernels):
    with open(kernels / "int_ops.cu", "a") as f:
        f.write("\nthis is not C++;\n")
    with pytest.raises(RuntimeError, match=r"nvcc failed on cuda/int_ops.cu for sm_80"):
        kernel_cache.compile_cubin("int_ops", "sm_80")
    assert not os.listdir(kernel_cache.cache_dir())


def test_without_nvcc_the_error_says_how_to_fill_the_cache(kernels, monkeypatch):
    monkeypatch.setattr(kernel_cache.shutil, "which", lambda name: None)
    with pytest.raises(RuntimeError, match=r"nvcc is not on PATH.*--arch sm_90.*"
                                           r"TENSORLIB_CUDA_CACHE"):
        kernel_cache.compile_cubin("int_ops", "sm_90")


@needs_nvcc
def test_the_command_line_fills_a_cache_ahead(tmp_path, capsys):
    out = tmp_path / "carry"
    assert kernel_cache.main(["--arch", "sm_90", "--cache", str(out), "-j", "2",
                              "int_ops"]) == 0
    path = capsys.readouterr().out.strip()
    assert path == kernel_cache.cubin_path("int_ops", "sm_90", str(out))
    assert os.path.exists(path)


def test_python_dash_m_runs_the_command_line(tmp_path):
    import tensorlib
    # the tensorlib this test imported (a source checkout's cwd would shadow an install);
    # --help only: under the sanitizers the child's preload would reach nvcc
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(tensorlib.__file__)))
    r = subprocess.run([sys.executable, "-m", "tensorlib.cuda.kernel_cache", "--help"],
                       capture_output=True, text=True, cwd=tmp_path, env=env)
    assert r.returncode == 0 and "--arch" in r.stdout, r.stderr
