"""Builds the two extension modules of tl_fused against the installed tensorlib.

`include_dirs=[tensorlib.get_include()]` is all either needs: tensorlib.h for the C module,
the headers named by tensorlib's .pxd files for the Cython one (Cython finds the .pxd files
themselves beside the installed package). OpenMP runs the prange loops when the compiler has
it (probed below; TL_FUSED_NO_OPENMP=1 turns it off); without it the same code runs serially.
"""
import os
import tempfile

try:
    import tensorlib
except ImportError as e:
    raise SystemExit(f"tl_fused is compiled against the tensorlib it runs with, which this "
                     f"build cannot import ({e}): install tensorlib, then build with "
                     f"`pip install --no-build-isolation .`") from e
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools._distutils.ccompiler import new_compiler
from setuptools._distutils.sysconfig import customize_compiler


def openmp_flags():
    """["-fopenmp"] when the C compiler compiles and links an OpenMP program, else []."""
    if os.environ.get("TL_FUSED_NO_OPENMP"):
        return []
    cc = new_compiler()
    customize_compiler(cc)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "omp.c")
        with open(src, "w") as f:
            f.write("#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n")
        try:
            objs = cc.compile([src], output_dir=tmp, extra_postargs=["-fopenmp"])
            cc.link_executable(objs, os.path.join(tmp, "omp"), extra_postargs=["-fopenmp"])
        except Exception:
            return []
    return ["-fopenmp"]


OPENMP = openmp_flags()
INCLUDE = [tensorlib.get_include()]

extensions = [
    Extension("tl_fused._cyfused", ["tl_fused/_cyfused.pyx"], include_dirs=INCLUDE,
              extra_compile_args=["-O2", *OPENMP], extra_link_args=OPENMP),
    Extension("tl_fused._cfused", ["tl_fused/_cfused.c"], include_dirs=INCLUDE,
              extra_compile_args=["-O2"]),
]

setup(ext_modules=cythonize(extensions, language_level=3))
