"""Shared test setup: hypothesis profiles, the torch reference (optional), the devices the
device-neutral tests run on, and the cyclic GC switched off for memory tests."""
import gc
import os

import pytest
from hypothesis import HealthCheck, Phase, settings

# CUDA devices are tested on the emulator (two of them, so multi-device code runs) unless the
# caller chose otherwise (on a GPU machine: TENSORLIB_CUDA=pycuda). Set before tensorlib
# picks its runtime, which it does at the first use of a CUDA device.
os.environ.setdefault("TENSORLIB_CUDA", "emulate")
os.environ.setdefault("TENSORLIB_CUDA_DEVICES", "2")

# The tests import tensorlib the ordinary way: the installed package under `pytest`, or the
# checkout's in-place build under `python -m pytest` run from the checkout (which puts the
# checkout first on sys.path). Say which of the two is missing rather than failing every
# test module's import.
try:
    import tensorlib  # noqa: F401
except ImportError as e:
    raise ImportError(
        f"cannot import tensorlib ({e}). Either install it (`pip install .`) and run "
        "`pytest`, or build it in place (`TENSORLIB_DEV=1 python setup.py build_ext "
        "--inplace -j2`) and run `python -m pytest` from the checkout's root.") from e

# "ci": few, derandomized examples so the whole suite fits CI's budget; "dev": more.
settings.register_profile("ci", max_examples=25, derandomize=True, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("dev", max_examples=200, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
# "device": the suite's second run on a CUDA device (TENSORLIB_TEST_DEVICE): fewer examples,
# and the first failure reported as it is (no shrinking, no group of errors), so an op the
# device does not run yet is reported once, quickly, as a skip
settings.register_profile("device", max_examples=10, derandomize=True, deadline=None,
                          report_multiple_bugs=False,
                          phases=[Phase.explicit, Phase.reuse, Phase.generate],
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get(
    "HYPOTHESIS_PROFILE", "device" if os.environ.get("TENSORLIB_TEST_DEVICE") else "ci"))


@pytest.fixture
def torch():
    """The installed PyTorch, or skip (parity tests are optional)."""
    return pytest.importorskip("torch")


@pytest.fixture(params=["cpu", "meta", "cuda"])
def device(request):
    """Each device a test that reads no values runs on (``strided_refs.DEVICES``); cuda is
    the emulator unless TENSORLIB_CUDA says otherwise."""
    return request.param


@pytest.fixture
def no_gc():
    """Run the test with the cyclic GC off (memory must fall by reference counting alone)."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@pytest.fixture(scope="module")
def gc_off_for_module():
    """The cyclic GC off for a whole module (memory must fall by reference counting alone),
    after one collection of what earlier modules left in cycles (a full collection is slow
    with torch loaded, so once per module rather than per test)."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    yield
    if was_enabled:
        gc.enable()


# ---- the suite on a CUDA device: TENSORLIB_TEST_DEVICE=cuda ---------------------------------
# Factories without device= put tensors on the device (set_default_device), and the tests'
# reads of values (Tensor.numpy, which they use to compare with NumPy and torch) go through a
# host copy. A test that reaches an op the CUDA back end does not run yet is reported as
# skipped with the op's NotImplementedError, so the run lists exactly what is missing.
TEST_DEVICE = os.environ.get("TENSORLIB_TEST_DEVICE", "")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "cpu_only(reason): checks behaviour that deliberately differs on a CUDA "
        "device (e.g. integer division by zero raises on the CPU only); skipped when "
        "TENSORLIB_TEST_DEVICE is set")
    if TEST_DEVICE:
        tensorlib.set_default_device(TEST_DEVICE)
        _numpy = tensorlib.Tensor.numpy

        def numpy(self, *, force=False):
            if self.is_cuda:
                return _numpy(self.detach().cpu() if force else self.cpu())
            return _numpy(self, force=force)

        tensorlib.Tensor.numpy = numpy
        # inputs the tests build from NumPy arrays go to the device too (from_numpy's memory
        # sharing is a CPU property: the tests of it are CPU tests)
        _from_numpy = tensorlib.from_numpy
        tensorlib.from_numpy = lambda a: _from_numpy(a).to(TEST_DEVICE)
        # the memory tests' counters: with no device named, the device the tensors are on
        from tensorlib import memory
        for name in ("memory_allocated", "max_memory_allocated", "reset_peak_memory_stats"):
            def on_test_device(device=None, _f=getattr(memory, name)):
                return _f(TEST_DEVICE if device is None else device)
            setattr(memory, name, on_test_device)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if not TEST_DEVICE or call.excinfo is None:
        return
    err = call.excinfo.value
    while isinstance(err, BaseExceptionGroup) and len(err.exceptions) == 1:
        err = err.exceptions[0]
    if isinstance(err, NotImplementedError) and "CUDA back end" in str(err):
        rep = outcome.get_result()
        rep.outcome = "skipped"
        rep.longrepr = (str(item.fspath), item.location[1] or 0,
                        f"Skipped: not on the CUDA back end yet: {str(err)[:120]}")


def _known_device_failures():
    """{test id: reason} of tests/device_known_failures.txt (``id  # reason`` per line)."""
    path = os.path.join(os.path.dirname(__file__), "device_known_failures.txt")
    known = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    test_id, _, reason = line.partition("  # ")
                    known[test_id.strip()] = reason.strip() or "known device failure"
    return known


def pytest_collection_modifyitems(config, items):
    if not TEST_DEVICE:
        return
    known = _known_device_failures()
    for item in items:
        reason = known.get(item.nodeid) or known.get(item.nodeid.split("[")[0])
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"known failure on the device: {reason}"))
        m = item.get_closest_marker("cpu_only")
        if m is not None:
            item.add_marker(pytest.mark.skip(reason=f"CPU behaviour: {m.args[0] if m.args else ''}"))
