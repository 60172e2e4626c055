"""Shared test setup: hypothesis profiles, the torch reference (optional), the devices the
device-neutral tests run on, and the cyclic GC switched off for memory tests."""
import gc
import importlib.machinery
import os
import sys

import pytest
from hypothesis import HealthCheck, settings

# `pip install ".[test]" && python -m pytest` from a fresh checkout: `python -m` puts the
# checkout first on sys.path, but its tensorlib/ holds no compiled core (pip built that into
# site-packages). Then test the installed package instead of failing to import. A checkout
# built in place (`python setup.py build_ext --inplace`) is tested as is.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if not any(os.path.exists(os.path.join(_ROOT, "tensorlib", "_core", "tensor" + suffix))
           for suffix in importlib.machinery.EXTENSION_SUFFIXES):
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _ROOT]

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


@pytest.fixture(params=["cpu", "meta"])
def device(request):
    """Each device a test that reads no values runs on (``strided_refs.DEVICES``); a back end
    added later (the CUDA emulator) joins by adding its name here and there."""
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
