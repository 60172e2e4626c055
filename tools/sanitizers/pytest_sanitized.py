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
deliberately leaves behind when it shuts down. The running frames of every thread are pinned
while it looks (see _RUNNING), and each leaked block is described (the Python object it
holds, or its first bytes). A leak fails the run (unless TENSORLIB_LSAN_FAIL=0: then it is
reported only). TENSORLIB_LSAN_EACH_FILE=1 runs the check after each test file as well and
names each file after which one reports (the reports repeat what is still unreachable);
run the file it points to again with full allocation stacks
(ASAN_OPTIONS=fast_unwind_on_malloc=0).

>>> sorted(_needed_sanitizers(__file__))    # a Python file links nothing
[]
"""
import ctypes
import gc
import glob
import os
import re
import subprocess
import sys

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


_LEAKED_OBJECT = re.compile(r"^(0x[0-9a-f]+) \((\d+) bytes\)$", re.M)
_GC_HEAD = 2 * ctypes.sizeof(ctypes.c_void_p)      # PyGC_Head before a GC-tracked object


def _type_ids():
    """id() of every type reachable from ``object`` (static and heap types alike)."""
    seen, todo = set(), [object]
    while todo:
        t = todo.pop()
        if id(t) not in seen:
            seen.add(id(t))
            todo.extend(type.__subclasses__(t))
    return seen


def _describe_block(addr, size):
    """What a leaked block holds: the Python object at its start (or after a GC header,
    as PYTHONMALLOC=malloc lays them out) when its type pointer names a live type, else
    its first bytes. A leaked object is still alive (its reference count never reached 0),
    so reading it is safe; its type and contents usually say which code made it."""
    types = _type_ids()
    word = ctypes.sizeof(ctypes.c_void_p)
    for offset in (_GC_HEAD, 0):
        if size < offset + 2 * word:
            continue
        ob_type = ctypes.c_void_p.from_address(addr + offset + word).value
        if ob_type in types:
            refs = ctypes.c_ssize_t.from_address(addr + offset).value
            obj = ctypes.cast(addr + offset, ctypes.py_object).value
            try:
                text = repr(obj)
            except Exception as exc:          # a half-built object: its type says enough
                text = f"<repr raised {type(exc).__name__}>"
            return (f"{type(obj).__module__}.{type(obj).__qualname__} object, "
                    f"{refs} reference(s): {text[:400]}")
    return "not a Python object; first bytes " + ctypes.string_at(addr, min(size, 64)).hex()


# Python 3.11 keeps the frames of running functions in its own data stack, memory it maps
# itself (not malloc's, so LSan does not scan it): an object that only a running function
# holds (a local, or a frame object made for a traceback or a warning and still on the
# stack) would look unreachable. The check pins each thread's running frames and their
# locals here, in a module global that LSan reaches through the module's dict.
_RUNNING = None


def _running_frames():
    """(frame, locals) of every frame running in every thread."""
    out = []
    for top in sys._current_frames().values():
        f = top
        while f is not None:
            out.append((f, f.f_locals))
            f = f.f_back
    return out


def _leak_check():
    """Run LSan's check with its report captured from fd 2, write the report back, and add
    a line per leaked block saying what it holds (the report lists the blocks' addresses:
    report_objects=1 in lsan.options). Returns whether it found a leak."""
    import tempfile

    global _RUNNING
    sys.stderr.flush()                  # the report is read from fd 2 itself, not sys.stderr
    saved = os.dup(2)
    with tempfile.TemporaryFile() as log:
        os.dup2(log.fileno(), 2)
        _RUNNING = _running_frames()
        try:
            leaked = _lsan().__lsan_do_recoverable_leak_check()
        finally:
            _RUNNING = None
            os.dup2(saved, 2)
            os.close(saved)
        log.seek(0)
        report = log.read().decode(errors="replace")
    lines = [f"sanitizers: leaked block {addr} ({size} bytes): "
             f"{_describe_block(int(addr, 16), int(size))}\n"
             for addr, size in _LEAKED_OBJECT.findall(report)]
    os.write(2, (report + "".join(lines)).encode())
    return leaked


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    if os.environ.get("TENSORLIB_LSAN_EACH_FILE") != "1":
        return
    if nextitem is not None and nextitem.path == item.path:
        return
    gc.collect()
    if _leak_check():
        reporter = item.config.pluginmanager.get_plugin("terminalreporter")
        msg = f"sanitizers: LeakSanitizer reports leaks after {item.path} (report above)"
        if reporter is not None:
            reporter.write_line(msg)
        else:
            print(msg)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    gc.collect()        # garbage cycles are not leaks: free them first
    leaked = _leak_check()
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
