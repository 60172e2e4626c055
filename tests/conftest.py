"""Shared test setup: hypothesis profiles and the torch reference (optional)."""
import os

import pytest
from hypothesis import HealthCheck, settings

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
