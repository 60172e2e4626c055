"""The README's examples run and print what the README says they print."""
import doctest
import os
import re

import pytest

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")


def _python_blocks():
    if not os.path.exists(README):
        pytest.skip("README.md is not beside the tests (installed package)")
    text = open(README, encoding="utf-8").read()
    return [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if ">>>" in b]


def test_readme_examples():
    blocks = _python_blocks()
    assert len(blocks) >= 5
    # one namespace for the whole README, as a reader typing along would have
    test = doctest.DocTestParser().get_doctest("\n".join(blocks), {}, "README.md", README, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    out = []
    result = runner.run(test, out=out.append)
    assert result.failed == 0, "".join(out)
    assert result.attempted >= 30


def test_demo_command(monkeypatch):
    """The README's first command, ``pip install . && tensorlib-demo``: the console script
    pyproject.toml declares calls ``tensorlib.demo.main``, which runs the demo and exits 0
    (the demo itself runs in test_fast_paths.py)."""
    import importlib.metadata
    from tensorlib import demo
    text = open(README, encoding="utf-8").read() if os.path.exists(README) else ""
    if text:
        assert "    pip install . && tensorlib-demo\n" in text
    pyproject = os.path.join(os.path.dirname(README), "pyproject.toml")
    if os.path.exists(pyproject):
        assert re.search(r'^tensorlib-demo = "tensorlib\.demo:main"$',
                         open(pyproject, encoding="utf-8").read(), re.M)
    # when installed, the script's entry point is the same function
    scripts = [e for e in importlib.metadata.entry_points(group="console_scripts")
               if e.name == "tensorlib-demo"]
    assert all(e.value == "tensorlib.demo:main" for e in scripts)
    calls = []
    monkeypatch.setattr(demo, "run", calls.append)
    folder = os.path.dirname(README)
    assert demo.main([folder]) == 0 and calls == [folder]
    assert demo.main(["a", "b"]) == 2 and len(calls) == 1
