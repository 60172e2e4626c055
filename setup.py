"""Build script: generates the op wrappers from the declarations file, then compiles the core.

Flags are portable (-O3 -fwrapv, never -march=native or -ffast-math); faster code paths are
chosen at run time by CPU features. Set TENSORLIB_DEV=1 for quick -O0 development builds.

What Cython and the compiler make stays under build/ (C output in build/cython/, objects in
build/temp.*), and a second build reuses the first one's work:
- a module is re-cythonized only when the contents of its Cython inputs change (a fingerprint
  of contents, not timestamps: pip builds each time in a fresh isolated environment whose
  Cython and NumPy .pxd files, inputs of every module, are new files every time);
- each C source of every module is one compile job in a pool of ``-j`` workers, largest
  first (the kernels compile beside the big Cython module), skipped when its object file is
  newer than the source, the headers and the compiler flags.
"""
import glob
import hashlib
import json
import os
import platform
import shlex
import subprocess
import sys
import sysconfig
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build import build
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "tensorlib", "ops"))
import codegen  # noqa: E402  (tensorlib/ops/codegen.py: reads tensorlib/ops/decl/)
import stubgen  # noqa: E402  (tensorlib/ops/stubgen.py: the type stubs of the declared ops)

# generated sources (op wrappers, elementwise loops and tables) live in the build directory
GENERATED = codegen.main(os.path.join(HERE, "build", "generated"))

DEV = os.environ.get("TENSORLIB_DEV") == "1"
# -g0 at -O3: Python's own CFLAGS bring -g, and gcc's variable tracking on the huge generated
# module-init function of tensor.c then needs over 20 GB of memory (2.7 GB without it).
OPT = ["-O3", "-g0"]
# -fno-math-errno: libm calls never set errno (nothing reads it), so sqrt is one instruction
# and loops using it vectorize; it changes no value (unlike -ffast-math, never used).
# -ffp-contract=off: no fused multiply-adds, so every ISA clone rounds the same way.
COMMON = ["-fwrapv", "-fno-math-errno", "-ffp-contract=off", "-pthread", "-fno-strict-aliasing",
          "-Wno-unused-function", "-Wno-unreachable-code"]


def _cc_accepts(flag):
    """Whether the C compiler that builds the extensions accepts ``flag``."""
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "probe.c")
        with open(src, "w") as f:
            f.write("int tl_probe;\n")
        try:
            done = subprocess.run([*cc, flag, "-Werror", "-c", src, "-o", src + ".o"],
                                  capture_output=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            return False
        return done.returncode == 0


def _cpu_vendor():
    """The vendor_id of this machine's first CPU (GenuineIntel, AuthenticAMD), or ''."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


# GCC's generic x86 tuning turns a vectorized table lookup into one scalar load and insert
# per lane; with gather instructions, float64 exp (a table of 2^(j/128)) ran in 1.07-1.12x
# torch's time instead of 2.3-2.4x on an Intel Xeon, the other functions unchanged within
# the noise (bench/results/gather_before_after_2026-11-29.txt). AMD's cores run gathers
# slowly (GCC's own Zen tunings avoid them), so they are used where the build machine is an
# Intel one, or where TENSORLIB_GATHER=1 asks (0 never). A tuning choice: the instructions
# are the ones each ISA clone already uses, the values the same either way.
_GATHER = os.environ.get("TENSORLIB_GATHER", "")
if _GATHER not in ("", "0", "1"):
    sys.exit(f"error: TENSORLIB_GATHER={_GATHER!r}: expected 0 or 1")
if ((_GATHER == "1" or (_GATHER == "" and _cpu_vendor() == "GenuineIntel"))
        and platform.machine() in ("x86_64", "AMD64")
        and _cc_accepts("-mtune-ctrl=use_gather")):
    COMMON.append("-mtune-ctrl=use_gather")
CFLAGS = (["-O0", "-g"] if DEV else OPT) + COMMON


def _sanitizers(value):
    """The sanitizers TENSORLIB_SANITIZE names (comma-separated), checked: a typo must fail
    the build, not give an unchecked one."""
    known = ("address", "undefined")
    names = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [n for n in names if n not in known]
    if unknown or (value.strip() and not names):
        sys.exit(f"error: TENSORLIB_SANITIZE={value!r}: unknown sanitizer(s) "
                 f"{', '.join(map(repr, unknown)) or repr(value)}; expected a comma-separated "
                 f"list of {', '.join(known)} (e.g. TENSORLIB_SANITIZE=address,undefined)")
    return sorted(set(names))


# TENSORLIB_SANITIZE=address,undefined: every module with ASan and UBSan (tools/sanitizers/
# and the README's "Sanitizers" paragraph say how to run it). -O1 keeps the suite fast enough
# while the reports still point at the right lines; frame pointers give ASan full stacks;
# a UBSan report aborts (-fno-sanitize-recover) so it fails the test run instead of scrolling by.
SANITIZE = _sanitizers(os.environ.get("TENSORLIB_SANITIZE", ""))
SANITIZE_FLAGS = [] if not SANITIZE else (
    [f"-fsanitize={','.join(SANITIZE)}", "-fno-omit-frame-pointer"]
    + (["-fno-sanitize-recover=undefined"] if "undefined" in SANITIZE else []))
if SANITIZE:
    CFLAGS = ["-O1", "-g"] + COMMON + SANITIZE_FLAGS
# The Cython-generated C (argument parsing, refcounting, calls into the kernels) at -O2: the
# kernels in tensorlib/_core/cpu/ stay -O3. Measured side by side on a quiet machine
# (bench_dispatch, bench_core, bench_autograd): no op slower beyond the +-5% noise, while
# gcc on tensor's 490,000-line C file takes 150 s instead of 195 s.
GLUE_OPT = {"-O3": "-O2"}
if SANITIZE:
    # line tables only for the Cython output (reports still name file:line): gcc's variable
    # tracking of tensor's module-init function is what makes -g costly in time and memory
    GLUE_OPT = {"-g": "-g1"}
# Each build flavour keeps its objects (and pip's build/lib) in its own folder, so a sanitized
# build never reuses normal objects and never leaves its own where a normal build finds them.
BUILD_BASE = os.path.join("build", "sanitize-" + "-".join(SANITIZE)) if SANITIZE else "build"
CORE = os.path.join("tensorlib", "_core")
CPU = os.path.join(CORE, "cpu")      # the CPU back end's C kernels
INCLUDE = os.path.join("tensorlib", "include")   # the public C API (tensorlib.h)
CYTHON_BUILD_DIR = os.path.join("build", "cython")
CYTHON_OPTIONS = dict(
    language_level=3,
    include_path=[".", os.path.relpath(GENERATED, HERE)],
    compiler_directives={
        # kept on: they only guard Python sequence fast paths; C arrays are unchecked anyway
        "boundscheck": True,
        "wraparound": True,
        "cdivision": True,
        "initializedcheck": False,
        "embedsignature": True,
    },
)


# The generated elementwise loops are included by cpu_elementwise.c alone: a changed kernel
# expression in the declarations recompiles that one file, not every source of every module.
EW_LOOPS = os.path.join(GENERATED, "_ew_loops.h")
SOURCE_DEPENDS = {os.path.join(CPU, "cpu_elementwise.c"): [EW_LOOPS]}
HEADERS = sorted(set(glob.glob(os.path.join(CPU, "*.h")) + glob.glob(os.path.join(GENERATED, "*.h")))
                 - {EW_LOOPS})


def core(name, *c_sources, cflags=CFLAGS):
    return Extension(
        f"tensorlib._core.{name}",
        [os.path.join(CORE, f"{name}.pyx")] + [os.path.join(CPU, s) for s in c_sources],
        include_dirs=[CORE, CPU, GENERATED, INCLUDE, numpy.get_include()],
        # rebuild when a C header changes (e.g. cpu_math.h, inlined into the kernels)
        depends=HEADERS,
        extra_compile_args=cflags,
        extra_link_args=SANITIZE_FLAGS,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )


extensions = [
    core("dtype"),
    core("allocator", "cpu_alloc.c"),
    core("random", "cpu_random.c"),
    core("memplan"),          # the planner's replay hook (tensorlib/memory/planner.py)
    core("capi"),             # the C API of `cimport tensorlib` and tensorlib.h's capsule
    # TensorBase, the iterator, autograd recording, the back ends and every CPU kernel: one
    # module, so C kernels can call each other and share one thread pool.
    core("tensor", "cpu_copy.c", "cpu_pool.c", "cpu_elementwise.c", "cpu_linalg.c", "cpu_sort.c",
         "cpu_index.c", "cpu_reduce.c", "cpu_nn.c", "cpu_optim.c"),
    # Op-family modules (codegen.FAMILY_MODULES): a family's front halves and its generated
    # code, joined to tensor by tensor.pxd; an edit to the family rebuilds this module alone.
    *[core(module) for module in sorted(set(codegen.FAMILY_MODULES.values()))],
    # Test-only access to cpu_math.h's functions (tests/test_math_ulp.py, bench/bench_math.py).
    # Always -O3: it exists to test the vectorized code, which an -O0 build would not contain.
    core("_math_test", "cpu_math_test.c", cflags=OPT + COMMON + SANITIZE_FLAGS),
]


def _mtime(path):
    return os.stat(path).st_mtime_ns


def _sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def cythonize_changed(exts):
    """Point each module at its generated C file, cythonizing those whose inputs changed.

    A module's fingerprint hashes the contents of its .pyx and of every .pyx/.pxd/.pxi it
    includes or cimports, transitively (Cython's own dependency scan, with the include path
    cythonize uses), with Cython's version and the options. The paths are left out: the
    isolated build environment that provides Cython's and NumPy's .pxd files has a new name
    every time. An unchanged module keeps its C file, timestamp included, so the compile step
    skips it as well.
    """
    import Cython
    from Cython.Build.Dependencies import create_dependency_tree
    from Cython.Compiler.Main import CompilationOptions, Context

    options = CompilationOptions(**CYTHON_OPTIONS)
    tree = create_dependency_tree(Context.from_options(options), quiet=True)
    head = hashlib.sha256(repr((Cython.__version__, sorted(CYTHON_OPTIONS.items()))).encode())
    stale = []
    for ext in exts:
        pyx = ext.sources[0]
        if not pyx.endswith(".pyx"):     # resolved by an earlier build command in this process
            continue
        inputs = {pyx} | {d for d in tree.all_dependencies(pyx)
                          if os.path.splitext(d)[1] in (".pyx", ".pxd", ".pxi")}
        h = head.copy()
        h.update(" ".join(sorted(_sha256(p) for p in inputs)).encode())
        c_file = os.path.join(CYTHON_BUILD_DIR, os.path.splitext(pyx)[0] + ".c")
        stamp = c_file + ".inputs"
        if os.path.exists(c_file) and os.path.exists(stamp) and open(stamp).read() == h.hexdigest():
            ext.sources[0] = c_file
        else:
            stale.append((ext, stamp, h.hexdigest()))
    if not stale:
        return
    # force: the fingerprints already say these are out of date (timestamps would not)
    start = time.perf_counter()
    done = cythonize([ext for ext, _, _ in stale], build_dir=CYTHON_BUILD_DIR, force=True,
                     nthreads=os.cpu_count() or 1, **CYTHON_OPTIONS)
    print(f"cythonized {len(stale)} modules in {time.perf_counter() - start:.1f} s", flush=True)
    for (ext, stamp, digest), new in zip(stale, done):
        assert new.name == ext.name
        ext.sources = new.sources    # the same objects: setuptools has annotated them
        with open(stamp, "w") as f:
            f.write(digest)


class ParallelBuildExt(build_ext):
    """Compile every C source of every module as its own job, ``-j`` at a time.

    setuptools compiles one module's sources one after the other; here the largest sources
    (the Cython output of tensor and elementwise, the elementwise kernels) start first and the
    rest share the workers. An object file is rebuilt only when its source, a header in ``depends`` or the
    compiler flags are newer (the flags are written to a file that every module depends on).
    """

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1
        if getattr(self, "editable_mode", False):
            # pip install -e compiles in a fresh temporary folder; the usual one keeps the
            # objects that other builds of this checkout made, and reuses them
            plat = f"{sysconfig.get_platform()}-{sys.implementation.cache_tag}"
            self.build_temp = os.path.join(BUILD_BASE, f"temp.{plat}")

    def run(self):
        # setuptools clears inplace while it builds (it copies the modules over afterwards)
        self._inplace_requested = bool(self.inplace)
        super().run()

    def build_extensions(self):
        self.check_extensions_list(self.extensions)
        cythonize_changed(self.extensions)
        flags_file = self._write_flags_file()
        self._write_build_info()
        for ext in self.extensions:
            if flags_file not in ext.depends:
                ext.depends = list(ext.depends) + [flags_file]
        outputs = self._read_outputs()
        for ext in self.extensions:
            # a module file this build (flavour) did not write last, e.g. a sanitized build's
            # in place: build_extension would find it newer than its sources and keep it
            path = self.get_ext_fullpath(ext.name)
            if os.path.exists(path) and outputs.get(os.path.abspath(path)) != _mtime(path):
                os.remove(path)
        # Every out-of-date source of every module, largest first, -j at a time; then
        # build_extension links each module (its compile call finds nothing left to do).
        jobs = []
        for ext in self.extensions:
            own = [d for src in ext.sources for d in SOURCE_DEPENDS.get(src, ())]
            if not (self.force or self._out_of_date(self.get_ext_fullpath(ext.name),
                                                    [*ext.sources, *ext.depends, *own])):
                continue
            kwargs = dict(output_dir=self.build_temp, macros=list(ext.define_macros),
                          include_dirs=ext.include_dirs, debug=self.debug,
                          extra_postargs=ext.extra_compile_args, depends=ext.depends)
            objects = self.compiler.object_filenames(ext.sources, output_dir=self.build_temp)
            jobs += [(os.path.getsize(s), s, kwargs) for s, o in zip(ext.sources, objects)
                     if self.force or self._out_of_date(
                         o, [s, *ext.depends, *SOURCE_DEPENDS.get(s, ())])]
        jobs.sort(key=lambda job: job[0], reverse=True)
        compile_all = self.compiler.compile

        def compile_one(source, **kwargs):
            start = time.perf_counter()
            if source.startswith(CYTHON_BUILD_DIR):
                kwargs = dict(kwargs, extra_postargs=[
                    GLUE_OPT.get(f, f) for f in kwargs["extra_postargs"]])
            compile_all([source], **kwargs)
            print(f"compiled {source} in {time.perf_counter() - start:.1f} s", flush=True)

        with ThreadPoolExecutor(max(1, int(self.parallel))) as pool:
            running = [pool.submit(compile_one, s, **kw) for _, s, kw in jobs]
            for job in running:
                job.result()

        def compile_changed(sources, output_dir=None, depends=(), **kwargs):
            objects = self.compiler.object_filenames(sources, output_dir=output_dir)
            todo = [s for s, o in zip(sources, objects)
                    if self._out_of_date(o, [s, *depends, *SOURCE_DEPENDS.get(s, ())])]
            if todo:
                compile_all(todo, output_dir=output_dir, depends=depends, **kwargs)
            return objects

        self.compiler.compile = compile_changed
        try:
            for ext in self.extensions:
                self.build_extension(ext)
                path = os.path.abspath(self.get_ext_fullpath(ext.name))
                outputs[path] = _mtime(path)
                self._write_outputs(outputs)
        finally:
            self.compiler.compile = compile_all

    def _read_outputs(self):
        """{module file: its mtime when this build folder's last build wrote it}."""
        try:
            with open(os.path.join(self.build_temp, "outputs.json")) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def _write_outputs(self, outputs):
        os.makedirs(self.build_temp, exist_ok=True)
        with open(os.path.join(self.build_temp, "outputs.json"), "w") as f:
            json.dump(outputs, f, indent=1, sort_keys=True)

    @staticmethod
    def _out_of_date(target, inputs):
        if not os.path.exists(target):
            return True
        t = os.path.getmtime(target)
        return any(os.path.getmtime(p) > t for p in inputs)

    def _write_build_info(self):
        """tensorlib/_build_info.py beside the built modules: the flags and versions this build
        used, which ``python -m tensorlib.collect_env`` reports. No paths or times: two builds
        of one tree with one toolchain write the same file."""
        import Cython
        # the wheel's tree, and the checkout too when the modules are copied there (--inplace,
        # pip install -e)
        pkgs = [os.path.join(self.build_lib, "tensorlib")]
        if getattr(self, "_inplace_requested", False) or getattr(self, "editable_mode", False):
            pkgs.append(os.path.join(HERE, "tensorlib"))
        info = dict(compiler=os.path.basename(self.compiler.compiler_so[0]),
                    cflags=CFLAGS, cython_glue=[GLUE_OPT.get(f, f) for f in CFLAGS], dev=DEV,
                    cython=Cython.__version__, numpy=numpy.__version__)
        text = ("# Written by setup.py when the extension modules are built (not in git).\n"
                f"BUILD_INFO = {info!r}\n")
        for pkg in pkgs:
            path = os.path.join(pkg, "_build_info.py")
            if not os.path.exists(path) or open(path).read() != text:
                os.makedirs(pkg, exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)

    def _write_flags_file(self):
        """A file naming every module's compiler and flags, rewritten only when they change."""
        path = os.path.join(self.build_temp, "compile-flags.txt")
        text = f"{self.compiler.compiler_so}\nCython output: {GLUE_OPT}\n" + "".join(
            f"{e.name}: {e.extra_compile_args} {e.define_macros}\n" for e in self.extensions)
        if not os.path.exists(path) or open(path).read() != text:
            os.makedirs(self.build_temp, exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        return path


class BuildInFlavourFolder(build):
    """``build`` whose default folder is BUILD_BASE (build/sanitize-*/ for sanitized builds):
    pip's wheel is made from build/<base>/lib.*, which must hold this flavour's modules."""

    def finalize_options(self):
        if self.build_base == "build":      # the default: no --build-base given
            self.build_base = BUILD_BASE
        super().finalize_options()


class BuildPyWithKernels(build_py):
    """Also ship the top-level cuda/ folder (the .cu kernels, compiled at run time by pycuda
    or the emulator) as package data: tensorlib/cuda/kernels/ in the wheel, found by
    ``tensorlib.cuda.kernel_dir()``; and write the type stubs of the declared ops from the
    declarations (the checked-in copies are the same: tests/test_typing.py)."""

    def run(self):
        super().run()
        for name, text in stubgen.generate().items():
            codegen.write_if_changed(os.path.join(self.build_lib, "tensorlib", name), text)
        dest = os.path.join(self.build_lib, "tensorlib", "cuda", "kernels")
        # the kernels, their headers and the emulator's shim (cuda/emu/): sources only,
        # compiled at first use, never at install
        patterns = ("*.cu", "*.cuh", "*.h", "README.md", "emu/*.h", "emu/*.cpp")
        sources = [p for pattern in patterns
                   for p in glob.glob(os.path.join(HERE, "cuda", pattern))]
        kept = set()
        for src in sorted(sources):
            rel = os.path.relpath(src, os.path.join(HERE, "cuda"))
            self.mkpath(os.path.dirname(os.path.join(dest, rel)))
            self.copy_file(src, os.path.join(dest, rel))
            kept.add(os.path.normpath(os.path.join(dest, rel)))
        self._prune_stale(kept | {os.path.normpath(p) for p in self.get_outputs()})

    def _prune_stale(self, outputs):
        """Remove from the build folder what this build no longer puts there (a file since
        deleted or excluded from the package data): a wheel packs the whole folder, and it
        must hold what a build from a clean tree holds. The compiled modules stay: build_ext
        keeps them up to date."""
        suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        root = os.path.join(self.build_lib, "tensorlib")
        for folder, _, files in os.walk(root):
            for name in files:
                path = os.path.normpath(os.path.join(folder, name))
                if path not in outputs and not name.endswith(suffix):
                    os.remove(path)


setup(ext_modules=extensions,
      cmdclass={"build": BuildInFlavourFolder, "build_ext": ParallelBuildExt,
                "build_py": BuildPyWithKernels})
