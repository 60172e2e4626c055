"""pytest plugin for the sanitized test run (``-p pytest_sanitized``, this folder on PYTHONPATH).

It proves in the test log that the suite runs under the sanitizers: the header names the ASan
(and UBSan) runtime mapped into the test process and the sanitizer runtimes each compiled
module of tensorlib was linked against. A run where libasan is not mapped, or where a module
of the imported tensorlib was built without ASan, stops before the first test: the run would
otherwise pass while checking nothing.

It also runs LeakSanitizer's check when the session ends, while Python is still alive (the
run sets ``leak_check_at_exit=0``): with ``PYTHONMALLOC=malloc`` every live object is a heap
block that LSan finds from the interpreter's roots, so what it reports is memory nothing
points to any more (a lost reference count, a buffer never freed), not the objects Python
deliberately leaves behind when it shuts down. A leak fails the run (unless
TENSORLIB_LSAN_FAIL=0: then it is reported only). TENSORLIB_LSAN_EACH_FILE=1 runs the check
after each test file as well and names each file after which one reports (the reports
repeat what is still unreachable, and a block another library points to from memory LSan
does not scan can show as a leak for a while and be freed later: the session-end report is
the one that counts); run the file it points to again with full allocation stacks
(ASAN_OPTIONS=fast_unwind_on_malloc=0).

>>> sorted(_needed_sanitizers(__file__))    # a Python file links nothing
[]
"""
import ctypes
import gc
import glob
import os
import subprocess

import pytest


def _mapped_runtimes():
    """Paths of the sanitizer runtimes mapped into this process (from /proc/self/maps)."""
    with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "/" in line}
    return sorted(p for p in paths
                  if os.path.basename(p).startswith(("libasan.so", "libubsan.so")))


def _needed_sanitizers(path):
    """The sanitizer runtimes an ELF file names as NEEDED (empty for anything else)."""
    try:
        out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True,
                             env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"},
                             check=False).stdout
    except OSError:
        return set()
    return {line.split("[")[1].split("]")[0] for line in out.splitlines()
            if "(NEEDED)" in line and ("libasan" in line or "libubsan" in line)}


def _modules():
    import tensorlib._core as core
    return sorted(glob.glob(os.path.join(os.path.dirname(core.__file__), "*.so")))


def _lsan():
    lib = ctypes.CDLL(None)
    if not hasattr(lib, "__lsan_do_recoverable_leak_check"):
        raise pytest.UsageError("pytest_sanitized: LeakSanitizer is not loaded")
    lib.__lsan_do_recoverable_leak_check.restype = ctypes.c_int
    return lib


# Modules whose initialization leaks (their leaks, not ours, and fixed in size): torch's
# Python bindings drop references to objects they make (torch::tensors::
# initialize_python_bindings); onnxruntime's pybind11 module init leaks two 24-byte objects
# (found with full stacks: ASAN_OPTIONS=fast_unwind_on_malloc=0).
LEAKY_IMPORTS = ("torch", "onnxruntime")


def _import_references_unchecked():
    """Import LEAKY_IMPORTS with LSan's leak tracking off (this thread's allocations during
    the imports are never reported). Done once here, the tests then find them in
    sys.modules."""
    import importlib

    lsan = _lsan()
    lsan.__lsan_disable()
    try:
        for name in LEAKY_IMPORTS:
            try:
                importlib.import_module(name)
            except ImportError:
                pass
    finally:
        lsan.__lsan_enable()


def _preload_python_children_only():
    """Python subprocesses (``sys.executable``, multiprocessing's spawn) start through
    tools/sanitizers/python, which preloads the runtimes; other programs run without them:
    nvcc, for one, crashes with libasan preloaded."""
    import multiprocessing
    import sys

    if not os.environ.get("TENSORLIB_SANITIZE_PYTHON"):
        raise pytest.UsageError("pytest_sanitized: run it through tools/sanitizers/run-pytest")
    os.environ.pop("LD_PRELOAD", None)
    sys.executable = os.path.join(os.path.dirname(os.path.abspath(__file__)), "python")
    multiprocessing.set_executable(sys.executable)


def pytest_configure(config):
    _import_references_unchecked()
    _preload_python_children_only()
    runtimes = _mapped_runtimes()
    if not any("libasan" in os.path.basename(p) for p in runtimes):
        raise pytest.UsageError(
            "pytest_sanitized: libasan is not mapped into the test process; run with "
            "LD_PRELOAD=$(gcc -print-file-name=libasan.so) (see the README's Sanitizers)")
    unsanitized = [m for m in _modules() if not any("libasan" in n for n in _needed_sanitizers(m))]
    if unsanitized:
        raise pytest.UsageError(
            f"pytest_sanitized: tensorlib modules built without ASan: {unsanitized}; build "
            "with TENSORLIB_SANITIZE=address,undefined")


# Tests whose reference call leaks inside torch: the allocations made while they run are not
# tracked (LSan's stacks stop at the first frame of Python, which is built without frame
# pointers, so a suppression cannot name torch's function); tensorlib's side of each is run,
# tracked, by a test beside it.
TORCH_LEAKS = {
    # repr(torch.iinfo) (THPIInfo_str) drops its references to the dtype name, min and max
    # it makes; tensorlib.iinfo: test_iinfo
    "tests/test_dtype.py::test_iinfo_vs_torch":
        "torch.iinfo.__repr__ leaks its dtype/min/max objects",
}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    untracked = item.nodeid.split("[")[0] in TORCH_LEAKS
    if untracked:
        _lsan().__lsan_disable()
    try:
        yield
    finally:
        if untracked:
            _lsan().__lsan_enable()


def _header():
    import tensorlib

    lines = [f"sanitizers: runtime mapped in this process (pid {os.getpid()}): "
             + ", ".join(_mapped_runtimes()),
             f"sanitizers: tensorlib from {os.path.dirname(tensorlib.__file__)}"]
    for m in _modules():
        lines.append(f"sanitizers:   {os.path.basename(m)} links "
                     + ", ".join(sorted(_needed_sanitizers(m))))
    for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "PYTHONMALLOC",
                "HYPOTHESIS_PROFILE"):
        lines.append(f"sanitizers: {var}={os.environ.get(var, '')}")
    return lines


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session):
    # written even under -q (which hides pytest's report header): the log must show it
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    for line in _header():
        if reporter is not None:
            reporter.write_line(line)
        else:
            print(line)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    if os.environ.get("TENSORLIB_LSAN_EACH_FILE") != "1":
        return
    if nextitem is not None and nextitem.path == item.path:
        return
    gc.collect()
    if _lsan().__lsan_do_recoverable_leak_check():
        reporter = item.config.pluginmanager.get_plugin("terminalreporter")
        msg = f"sanitizers: LeakSanitizer reports leaks after {item.path} (report above)"
        if reporter is not None:
            reporter.write_line(msg)
        else:
            print(msg)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    gc.collect()        # garbage cycles are not leaks: free them first
    leaked = _lsan().__lsan_do_recoverable_leak_check()
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if leaked and os.environ.get("TENSORLIB_LSAN_FAIL", "1") == "0":
        msg = ("sanitizers: LeakSanitizer found leaks (report above); TENSORLIB_LSAN_FAIL=0: "
               "reported, the run does not fail")
    elif leaked:
        msg = "sanitizers: LeakSanitizer found leaks (report above): the run fails"
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    else:
        msg = "sanitizers: LeakSanitizer: no leaks at the end of the session"
    if reporter is not None:
        reporter.write_line(msg)
    else:
        print(msg)
