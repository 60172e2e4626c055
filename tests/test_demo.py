"""The demo command (``python -m tensorlib.demo [DIR]``, ``tensorlib-demo``): the output folder
is checked before anything is printed, and the demo writes the three files the README names
into that folder (the current directory by default), nothing anywhere else."""
import contextlib
import io
import os
import subprocess
import sys

import pytest

import tensorlib
from tensorlib import demo

# the folder that holds the imported tensorlib (the installed package under `pytest`, the
# checkout under `python -m pytest`): never the checkout when the package is installed
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(tensorlib.__file__)))
README = os.path.join(ROOT, "README.md")


def _run_module(args, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "tensorlib.demo", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_missing_folder_fails_first(tmp_path):
    missing = tmp_path / "no" / "such"
    p = _run_module([str(missing)], cwd=tmp_path)
    assert p.returncode == 2
    assert p.stdout == ""                               # nothing printed before the check
    assert p.stderr == f"tensorlib-demo: error: output folder '{missing}' does not exist\n"
    assert sorted(os.listdir(tmp_path)) == []           # nothing written, no folder made


def test_a_file_or_unwritable_folder_is_refused(tmp_path, capsys):
    f = tmp_path / "file.txt"
    f.write_text("x")
    assert demo.main([str(f)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "is not a folder" in err
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if os.access(ro, os.W_OK):
            pytest.skip("running as a user who may write anywhere (root)")
        assert demo.main([str(ro)]) == 2
        out, err = capsys.readouterr()
        assert out == "" and "is not writable" in err
    finally:
        ro.chmod(0o700)


def test_usage(capsys):
    assert demo.main(["a", "b"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("usage: tensorlib-demo [output folder]")
    assert demo.main(["--bogus"]) == 2
    assert demo.main(["--help"]) == 0
    out, err = capsys.readouterr()
    assert all(name in out for name in demo.FILES)


def test_writes_the_three_files_into_the_folder_and_nothing_else(tmp_path, monkeypatch):
    out_dir, cwd = tmp_path / "out", tmp_path / "cwd"
    out_dir.mkdir()
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    with contextlib.redirect_stdout(io.StringIO()) as text:
        assert demo.main([str(out_dir)]) == 0
    assert sorted(os.listdir(out_dir)) == sorted(demo.FILES)
    assert os.listdir(cwd) == []
    for name in demo.FILES:
        assert os.path.getsize(out_dir / name) > 1000
        assert str(out_dir / name) in text.getvalue()   # and says where each went


def test_default_folder_is_the_current_directory(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(demo, "run", calls.append)
    monkeypatch.chdir(tmp_path)
    assert demo.main([]) == 0
    assert calls == [str(tmp_path)]
    assert demo.main(["."]) == 0 and calls[-1] == str(tmp_path)


def test_readme_names_what_the_demo_writes():
    if not os.path.exists(README):
        pytest.skip("README.md is not beside the tests (installed package)")
    text = open(README, encoding="utf-8").read()
    section = text[text.index("## On a fresh machine"):text.index("## Quickstart")]
    for name in demo.FILES:
        assert f"`{name}`" in section
    assert "tensorlib-demo [output folder]" in section
