"""Build script: generates the op wrappers from the declarations file, then compiles the core.

Flags are portable (-O3 -fwrapv, never -march=native or -ffast-math); faster code paths are
chosen at run time by CPU features. Set TENSORLIB_DEV=1 for quick -O0 development builds.
"""
import glob
import os
import shutil
import sys

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "tensorlib", "ops"))
import codegen  # noqa: E402  (tensorlib/ops/codegen.py: reads decl.py, writes _ops_generated.pxi)

codegen.main()

DEV = os.environ.get("TENSORLIB_DEV") == "1"
# -g0 at -O3: Python's own CFLAGS bring -g, and gcc's variable tracking on the huge generated
# module-init function of tensor.c then needs over 20 GB of memory (2.7 GB without it).
CFLAGS = ["-O0", "-g"] if DEV else ["-O3", "-g0"]
# -fno-math-errno: libm calls never set errno (nothing reads it), so sqrt is one instruction
# and loops using it vectorize; it changes no value (unlike -ffast-math, never used).
# -ffp-contract=off: no fused multiply-adds, so every ISA clone rounds the same way.
CFLAGS += ["-fwrapv", "-fno-math-errno", "-ffp-contract=off", "-pthread", "-fno-strict-aliasing",
           "-Wno-unused-function", "-Wno-unreachable-code"]
CORE = os.path.join("tensorlib", "_core")
CPU = os.path.join(CORE, "cpu")      # the CPU back end's C kernels


def core(name, *c_sources, cflags=CFLAGS):
    return Extension(
        f"tensorlib._core.{name}",
        [os.path.join(CORE, f"{name}.pyx")] + [os.path.join(CPU, s) for s in c_sources],
        include_dirs=[CORE, CPU, numpy.get_include()],
        # rebuild when a C header changes (e.g. cpu_math.h, inlined into the kernels)
        depends=sorted(glob.glob(os.path.join(CPU, "*.h"))),
        extra_compile_args=cflags,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )


extensions = [
    core("dtype"),
    core("allocator", "cpu_alloc.c"),
    core("random", "cpu_random.c"),
    core("memplan"),          # the planner's replay hook (tensorlib/memory/planner.py)
    # TensorBase, the iterator and every CPU kernel: one module, so C kernels can call each
    # other and share one thread pool.
    core("tensor", "cpu_copy.c", "cpu_pool.c", "cpu_elementwise.c", "cpu_linalg.c", "cpu_sort.c",
         "cpu_index.c", "cpu_reduce.c"),
    # Test-only access to cpu_math.h's functions (tests/test_math_ulp.py, bench/bench_math.py).
    # Always -O3: it exists to test the vectorized code, which an -O0 build would not contain.
    core("_math_test", "cpu_math_test.c", cflags=["-O3", "-g0"] + CFLAGS[2:]),
]


class ParallelBuildExt(build_ext):
    """Compile extension modules in parallel: Cython output is large and we have few cores.

    Building from a source checkout (``pip install .`` builds in the tree) also places the
    compiled modules in the checkout, as ``build_ext --inplace`` would: ``python -m ...``
    run from the checkout's root imports the checkout's ``tensorlib/`` before the installed
    one, and without them that import fails (``python -m tensorlib.demo``, ``python -m
    pytest`` right after ``pip install .``).
    """

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1

    def run(self):
        super().run()
        if not self.inplace and os.path.exists(os.path.join(HERE, ".git")):
            for ext in self.extensions:
                dst = os.path.join(HERE, self.get_ext_filename(ext.name))
                # a new file, renamed over the old one: a process that has the old module
                # loaded keeps its mapping intact
                shutil.copyfile(self.get_ext_fullpath(ext.name), dst + ".tmp")
                os.replace(dst + ".tmp", dst)


setup(
    ext_modules=cythonize(
        extensions,
        language_level=3,
        nthreads=os.cpu_count() or 1,
        compiler_directives={
            # kept on: they only guard Python sequence fast paths; C arrays are unchecked anyway
            "boundscheck": True,
            "wraparound": True,
            "cdivision": True,
            "initializedcheck": False,
            "embedsignature": True,
        },
    ),
    cmdclass={"build_ext": ParallelBuildExt},
)
