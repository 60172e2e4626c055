"""The sanitized run's pytest plugin (tools/sanitizers/pytest_sanitized.py): what it says
about a leaked block, and the running frames it pins while LeakSanitizer looks. Plain
Python, so these run in every test run, not only the sanitized one."""
import ctypes
import importlib.util
import os
import sys
import threading

import pytest

_PATH = os.path.join(os.path.dirname(__file__), "..", "tools", "sanitizers", "pytest_sanitized.py")


@pytest.fixture(scope="module")
def plugin():
    spec = importlib.util.spec_from_file_location("pytest_sanitized_under_test", _PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_describes_a_gc_object_by_its_block(plugin):
    """A GC-tracked object's block starts with the collector's header, before the object."""
    t = (101, 202, "leaked?")
    addr = id(t) - plugin._GC_HEAD
    text = plugin._describe_block(addr, plugin._GC_HEAD + sys.getsizeof(t))
    assert text.startswith("builtins.tuple object, ")
    assert "(101, 202, 'leaked?')" in text
    # the reference count read before the description takes one of its own
    assert f"{sys.getrefcount(t) - 1} reference(s)" in text


def test_describes_a_plain_object_and_raw_memory(plugin):
    x = 12345.5
    assert plugin._describe_block(id(x), sys.getsizeof(x)).startswith("builtins.float object")
    raw = ctypes.create_string_buffer(b"\x00" * 8 + b"not a type pointer", 32)
    text = plugin._describe_block(ctypes.addressof(raw), 32)
    assert text.startswith("not a Python object; first bytes 0000000000000000")


def test_report_lines_are_parsed(plugin):
    report = "Objects leaked above:\n0x611001191c00 (248 bytes)\n0x6020000001b0 (24 bytes)\n"
    assert plugin._LEAKED_OBJECT.findall(report) == [("0x611001191c00", "248"),
                                                      ("0x6020000001b0", "24")]


def test_running_frames_of_every_thread_are_pinned(plugin):
    """Objects held only by a running frame live in Python's own frame stack, which LSan does
    not scan (a worker thread's frame object read as a 248-byte leak): the check pins each
    thread's frames and their locals."""
    started, stop = threading.Event(), threading.Event()

    def worker():
        held_only_here = ["worker's local"]
        started.set()
        stop.wait()
        return held_only_here

    th = threading.Thread(target=worker)
    th.start()
    started.wait()
    try:
        mine = object()
        pinned = plugin._running_frames()
        codes = {f.f_code.co_name for f, _ in pinned}
        assert {"worker", sys._getframe().f_code.co_name} <= codes
        assert any(loc.get("held_only_here") == ["worker's local"] for _, loc in pinned)
        assert any(loc.get("mine") is mine for _, loc in pinned)
    finally:
        stop.set()
        th.join()
