"""Shared test setup: hypothesis profiles, the torch reference (optional), the devices the
device-neutral tests run on, and the cyclic GC switched off for memory tests."""
import gc
import os

import pytest
from hypothesis import HealthCheck, settings

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
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


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
