"""Differential fuzzing against PyTorch: random programs (tensors of every dtype and of
0-size and 0-d shapes, views, writes through views, ops with broadcasting and promotion,
backward) run step by step in tensorlib and torch, comparing values, layouts, dtypes,
version counters, autograd state, gradients and exception classes after every step. The
machine and the comparison live in ``tests/fuzz_programs.py``.

Here: the machine with the active hypothesis profile's budget (``ci``: a few derandomized
programs), and a replay of every program ``tools/fuzz.py`` saved in
``tests/fuzz_regressions.json`` (each one a divergence found and fixed).
"""
import json

import pytest
from hypothesis import HealthCheck, Phase, settings

torch = pytest.importorskip("torch")

from fuzz_programs import REGRESSIONS, FuzzMachine, Program  # noqa: E402

class CIMachine(FuzzMachine):
    minimize_failures = True


TestFuzzPrograms = CIMachine.TestCase
TestFuzzPrograms.settings = settings(
    settings.default, stateful_step_count=30, deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much])


def _regressions():
    with open(REGRESSIONS) as f:
        return json.load(f)


@pytest.mark.parametrize("case", _regressions(), ids=lambda c: c["name"])
def test_fuzz_regression(case):
    """A program the fuzzer once found diverging now runs identically in both libraries."""
    Program.replay(torch, case["program"])


def test_regression_file_is_well_formed():
    names = [c["name"] for c in _regressions()]
    assert len(names) == len(set(names))
    for c in _regressions():
        assert set(c) >= {"name", "found", "program"} and c["program"]
