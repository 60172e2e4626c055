"""Builds the two extension modules of tl_fused against the installed tensorlib.

`include_dirs=[tensorlib.get_include()]` is all either needs: tensorlib.h for the C module,
the headers named by tensorlib's .pxd files for the Cython one (Cython finds the .pxd files
themselves beside the installed package). OpenMP runs the prange loop; without an OpenMP
compiler the same code builds and runs serially.
"""
import os
import sys

import tensorlib
from Cython.Build import cythonize
from setuptools import Extension, setup

OPENMP = [] if sys.platform == "darwin" or os.environ.get("TL_FUSED_NO_OPENMP") else ["-fopenmp"]
INCLUDE = [tensorlib.get_include()]

extensions = [
    Extension("tl_fused._cyfused", ["tl_fused/_cyfused.pyx"], include_dirs=INCLUDE,
              extra_compile_args=["-O2", *OPENMP], extra_link_args=OPENMP),
    Extension("tl_fused._cfused", ["tl_fused/_cfused.c"], include_dirs=INCLUDE,
              extra_compile_args=["-O2"]),
]

setup(ext_modules=cythonize(extensions, language_level=3))
