"""Files written by PyTorch (zip and legacy formats) load in a process where ``import torch``
fails: a subprocess writes them with torch, another loads them with a meta-path finder that
refuses every ``torch`` import, and compares against values the writer dumped with NumPy."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

import tensorlib

# Subprocesses run beside the tensorlib this process imported (site-packages when installed,
# the checkout when built in place): `python -c` puts its cwd first on sys.path, and the
# checkout's root holds the sources without the compiled core.
RUN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(tensorlib.__file__)))

WRITER = textwrap.dedent("""
    import collections, sys, numpy as np, torch
    out = sys.argv[1]
    torch.manual_seed(0)
    base = torch.arange(24, dtype=torch.float32).view(4, 6)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    model(torch.randn(5, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.randn(5, 3)).sum().backward()
    opt.step()
    dtypes = {}
    for name in ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
                 "float32", "float64"]:
        t = (torch.randn(3, 2) * 40)
        t = (t > 0) if name == "bool" else t.abs().to(getattr(torch, name))
        dtypes[name] = t
    obj = {"base": base, "row": base[2], "t": base.t(), "step": base[:, 1::2],
           "sd": model.state_dict(), "opt": opt.state_dict(),
           "param": torch.nn.Parameter(torch.ones(3)),
           "frozen": torch.nn.Parameter(torch.zeros(2), requires_grad=False),
           "dtypes": dtypes, "size": torch.Size([2, 5]), "dtype": torch.bfloat16,
           "epoch": 3, "lr": 0.5, "name": "run", "np": np.arange(4.0)}
    torch.save(obj, out + "/zip.pt")
    torch.save(obj, out + "/legacy.pt", _use_new_zipfile_serialization=False)
    torch.save(model.state_dict(), out + "/sd.pt")
    expect = {"base": base.numpy(), "step": base[:, 1::2].numpy()}
    for k, v in model.state_dict().items():
        expect["sd." + k] = v.numpy()
    for k, v in dtypes.items():
        expect["dt." + k] = v.double().numpy()
    for i, st in opt.state_dict()["state"].items():
        expect[f"opt.{i}"] = st["momentum_buffer"].numpy()
    np.savez(out + "/expect.npz", **expect)
""")

READER = textwrap.dedent("""
    import importlib.abc, json, sys

    class NoTorch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                raise ImportError(f"torch is blocked in this test ({name})")
            return None

    sys.meta_path.insert(0, NoTorch())
    try:
        import torch  # noqa: F401
        raise SystemExit("torch imported although blocked")
    except ImportError:
        pass
    import numpy as np
    import tensorlib
    folder = sys.argv[1]
    exp = np.load(folder + "/expect.npz")
    report = {}
    for fname in ("zip.pt", "legacy.pt"):
        d = tensorlib.load(folder + "/" + fname)
        r = {}
        s = d["base"].untyped_storage()
        r["shared"] = all(d[k].untyped_storage() is s for k in ("row", "t", "step"))
        r["base"] = bool(np.array_equal(d["base"].numpy(), exp["base"]))
        r["step"] = bool(np.array_equal(d["step"].numpy(), exp["step"]))
        r["strides"] = [d["t"].stride(), d["step"].stride(), d["step"].storage_offset()]
        r["sd"] = all(np.array_equal(d["sd"][k].numpy(), exp["sd." + k]) for k in d["sd"])
        r["sd_keys"] = list(d["sd"])
        r["sd_metadata"] = sorted(d["sd"]._metadata)
        r["dtypes"] = {k: [str(v.dtype), bool(np.array_equal(
            v.to(tensorlib.float64).numpy(), exp["dt." + k]))] for k, v in d["dtypes"].items()}
        r["opt"] = all(np.array_equal(d["opt"]["state"][i]["momentum_buffer"].numpy(),
                                      exp[f"opt.{i}"]) for i in d["opt"]["state"])
        r["groups"] = d["opt"]["param_groups"][0]["lr"]
        r["param"] = [type(d["param"]).__name__, d["param"].requires_grad,
                      type(d["frozen"]).__name__, d["frozen"].requires_grad]
        r["misc"] = [list(d["size"]), str(d["dtype"]), d["epoch"], d["lr"], d["name"],
                     d["np"].tolist()]
        report[fname] = r
    m = tensorlib.nn.Sequential(tensorlib.nn.Linear(3, 4), tensorlib.nn.BatchNorm1d(4))
    m.load_state_dict(tensorlib.load(folder + "/sd.pt"))
    report["loaded_into_module"] = bool(np.array_equal(m[0].weight.detach().numpy(),
                                                       exp["sd.0.weight"]))
    mm = tensorlib.load(folder + "/zip.pt", mmap=True)
    report["mmap"] = [mm["base"].untyped_storage().is_borrowed,
                      bool(np.array_equal(mm["base"].numpy(), exp["base"]))]
    report["torch_modules"] = sorted(k for k in sys.modules if k.split(".")[0] == "torch")
    print(json.dumps(report))
""")


def _run(code, *args, env=None):
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          cwd=RUN_DIR, timeout=120, env=env)


@pytest.fixture(scope="module")
def torch_files(tmp_path_factory):
    pytest.importorskip("torch")
    folder = tmp_path_factory.mktemp("torch_files")
    r = _run(WRITER, str(folder))
    assert r.returncode == 0, r.stderr
    return folder


def test_torch_files_load_without_torch(torch_files):
    r = _run(READER, str(torch_files))
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout.strip().splitlines()[-1])
    assert report["torch_modules"] == []
    for fname in ("zip.pt", "legacy.pt"):
        rep = report[fname]
        assert rep["shared"] and rep["base"] and rep["step"], fname
        assert rep["strides"] == [[1, 6], [6, 2], 1]
        assert rep["sd"] and rep["opt"] and rep["groups"] == 0.1
        assert rep["sd_keys"] == ["0.weight", "0.bias", "1.weight", "1.bias",
                                  "1.running_mean", "1.running_var", "1.num_batches_tracked"]
        assert rep["sd_metadata"] == ["", "0", "1"]
        for name, (dt, equal) in rep["dtypes"].items():
            assert dt == f"tensorlib.{name}" and equal, (fname, name)
        assert rep["param"] == ["Parameter", True, "Parameter", False]
        assert rep["misc"] == [[2, 5], "tensorlib.bfloat16", 3, 0.5, "run", [0, 1, 2, 3]]
    assert report["loaded_into_module"]
    assert report["mmap"] == [True, True]
