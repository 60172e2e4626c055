"""What to paste into a bug report: ``python -m tensorlib.collect_env``.

Versions (tensorlib, Python, NumPy, the Cython and compiler tensorlib was built with, torch
when installed), the build's flags, the instruction-set clone of the SIMD kernels this CPU
runs, the thread count, the BLAS NumPy uses (tensorlib's float GEMMs go through it), and the
CUDA back ends found (pycuda, the emulator).

>>> info = get_env_info()
>>> info["tensorlib"] == tensorlib.__version__ and info["threads"] == tensorlib.get_num_threads()
True
"""
import importlib.util
import os
import platform
import shutil
import sys

import numpy

import tensorlib

__all__ = ["get_env_info", "get_pretty_env_info", "main"]


def _cython_of_core():
    # Cython registers its function type in a module named after its version ("_cython_3_3_1")
    module = type(tensorlib._core.tensor._register_types).__module__
    if module.startswith("_cython_"):
        return module[len("_cython_"):].replace("_", ".")
    return None


def _build_info():
    try:
        from tensorlib._build_info import BUILD_INFO
    except ImportError:
        return None
    return dict(BUILD_INFO)


def _isa():
    """The clone the target_clones dispatch of the SIMD kernels picks on this CPU: the first
    of avx512f, avx2 (x86-64-v3: AVX2 with FMA) that the CPU supports (the order of
    cpu_simd.h's TL_DISPATCH), asked of the build's own feature test (the same __builtin_cpu_supports the dispatch uses)."""
    try:
        from tensorlib._core._math_test import _math_eval
    except ImportError:
        return "unknown (tensorlib._core._math_test not built)"
    x = numpy.zeros(1, numpy.float32)
    available = []
    for isa in ("avx512f", "avx2", "baseline"):
        try:
            _math_eval("exp", x, isa=isa)
            available.append(isa)
        except ValueError:
            pass
    if not available:
        return f"default (no clones are built for {platform.machine()})"
    return available[0] if available[0] != "baseline" else "default (baseline x86-64)"


def _blas():
    try:
        deps = numpy.show_config(mode="dicts")["Build Dependencies"]
    except Exception as e:      # NumPy < 1.26 or a build without the config: say so
        return f"unknown ({type(e).__name__}: {e})"
    blas = deps.get("blas", {})
    name = blas.get("name", "unknown")
    version = blas.get("version")
    conf = blas.get("openblas configuration")
    return " ".join(filter(None, [name, version, f"({conf})" if conf else None]))


def _cuda():
    pycuda = importlib.util.find_spec("pycuda") is not None
    cxx = os.environ.get("CXX", "g++")
    return dict(is_available=tensorlib.cuda.is_available(),
                device_count=tensorlib.cuda.device_count(),
                pycuda="installed" if pycuda else "not installed",
                emulator=(f"available (C++ compiler {cxx} found)" if shutil.which(cxx)
                          else f"not available (no C++ compiler {cxx} on PATH)"),
                kernels=tensorlib.cuda.kernel_dir())


def _version_of(name):
    if importlib.util.find_spec(name) is None:
        return None
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return "installed (version unknown)"


def get_env_info():
    """The facts as a dict (what :func:`get_pretty_env_info` prints)."""
    build = _build_info()
    return {
        "tensorlib": tensorlib.__version__,
        "tensorlib_path": os.path.dirname(os.path.abspath(tensorlib.__file__)),
        "python": f"{platform.python_version()} ({platform.python_implementation()}, "
                  f"{sys.platform}, {platform.machine()})",
        "os": platform.platform(),
        "numpy": numpy.__version__,
        "cython_built_with": (build or {}).get("cython") or _cython_of_core(),
        "numpy_built_against": (build or {}).get("numpy"),
        "compiler": (build or {}).get("compiler"),
        "cflags": (build or {}).get("cflags"),
        "cython_cflags": (build or {}).get("cython_glue"),
        "dev_build": (build or {}).get("dev"),
        "torch": _version_of("torch"),
        "isa": _isa(),
        "threads": tensorlib.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "blas": _blas(),
        "cuda": _cuda(),
        "c_api": _c_api(),
    }


def _c_api():
    try:
        from tensorlib._core import capi
    except ImportError:
        return "not built"
    return f"ABI {capi.ABI_VERSION}, API level {capi.API_VERSION}"


def get_pretty_env_info():
    """The report as text, one ``name: value`` line each."""
    info = get_env_info()
    not_recorded = "not recorded (built before build info was written)"
    rows = [
        ("tensorlib", f"{info['tensorlib']} ({info['tensorlib_path']})"),
        ("Python", info["python"]),
        ("OS", info["os"]),
        ("NumPy", info["numpy"]),
        ("torch", info["torch"] or "not installed"),
        ("built with Cython", info["cython_built_with"] or "unknown"),
        ("built against NumPy", info["numpy_built_against"] or not_recorded),
        ("compiler", info["compiler"] or not_recorded),
        ("C flags (kernels)", " ".join(info["cflags"]) if info["cflags"] else not_recorded),
        ("C flags (Cython output)",
         " ".join(info["cython_cflags"]) if info["cython_cflags"] else not_recorded),
        ("development build (-O0)", not_recorded if info["dev_build"] is None
         else str(info["dev_build"])),
        ("SIMD clone in use", info["isa"]),
        ("threads", f"{info['threads']} (of {info['cpu_count']} CPUs)"),
        ("BLAS (NumPy's)", info["blas"]),
        ("C API", info["c_api"]),
        ("CUDA available", f"{info['cuda']['is_available']} "
                           f"({info['cuda']['device_count']} devices)"),
        ("pycuda", info["cuda"]["pycuda"]),
        ("CUDA emulator", info["cuda"]["emulator"]),
        ("CUDA kernel sources", info["cuda"]["kernels"]),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k + ':':<{width + 1}} {v}" for k, v in rows)


def main():
    """Print the report (``python -m tensorlib.collect_env``)."""
    print("Collecting environment information...")
    print(get_pretty_env_info())


if __name__ == "__main__":
    main()
