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


def test_main_command_imports_from_the_checkout_root():
    """The README's first command, ``pip install . && python -m tensorlib.demo``, runs in the
    checkout's root, where ``python -m`` imports the checkout's ``tensorlib/`` before the
    installed one: the build must have placed the compiled core there too (setup.py)."""
    import subprocess
    import sys
    root = os.path.dirname(README)
    if not os.path.exists(os.path.join(root, "setup.py")):
        pytest.skip("not run from a checkout")
    r = subprocess.run([sys.executable, "-c", "import tensorlib, tensorlib.demo; print(tensorlib.__file__)"],
                       cwd=root, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().startswith(root)
