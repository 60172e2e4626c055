"""Exchange and embedding costs: DLPack round trips against torch's, and a Cython extension's
per-call cost against tensorlib's own Python entry.

1. DLPack: ``lib.from_dlpack(x)`` of the library's own tensor (``__dlpack__`` makes the
   capsule, ``from_dlpack`` consumes it: a zero-copy tensor on the same memory), tensorlib
   against torch; and the exchanges across libraries (NumPy -> each, tensorlib <-> torch).
   Goal: tensorlib's round trip at most 1.0x torch's.
2. Embedding: the example extension (examples/cython_extension, built against this
   tensorlib in a temporary folder unless ``tl_fused`` is importable) taking two 4-element
   tensors and returning a new one, ``tl_fused.scale_add(x, y, 2.0)`` (``cimport tensorlib``)
   and ``tl_fused.c_scale_add`` (tensorlib.h), against ``tensorlib.add(x, y, alpha=2.0)``
   through its Python entry. Goal: the Cython extension at most 0.5x tensorlib.add.

Best of alternating rounds (bench/_timing.py). Run it on a quiet machine (load average under
1.5; the script prints it):

    python bench/bench_interop.py             # default rounds
    python bench/bench_interop.py --quick     # a smoke run
"""
import argparse
import importlib
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import race  # noqa: E402

import tensorlib  # noqa: E402

try:
    import torch
except ImportError:          # the torch columns are optional
    torch = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TL_HOME = os.path.dirname(os.path.dirname(tensorlib.__file__))


def _extension(tmp):
    """tl_fused: the installed one, or the example built into ``tmp`` against this tensorlib."""
    try:
        return importlib.import_module("tl_fused")
    except ImportError:
        pass
    if not os.path.exists(os.path.join(tensorlib.get_include(), "tensorlib.h")):
        sys.exit(f"the tensorlib imported here ({tensorlib.__file__}) has no C API: install a "
                 f"newer one, or run the checkout's with PYTHONPATH=. (bench/README.md)")
    src, target = os.path.join(tmp, "src"), os.path.join(tmp, "target")
    shutil.copytree(os.path.join(ROOT, "examples", "cython_extension"), src,
                    ignore=shutil.ignore_patterns("build", "*.so", "*.egg-info"))
    env = dict(os.environ, PYTHONPATH=TL_HOME)
    print("building examples/cython_extension against this tensorlib ...", flush=True)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation",
                    "--no-deps", "--no-index", "--disable-pip-version-check", "--target", target,
                    src], cwd=TL_HOME, env=env, check=True)
    sys.path.insert(0, target)
    return importlib.import_module("tl_fused")


def _check(ext):
    """The timed calls compute what they should (a wrong fast answer is no answer)."""
    x = tensorlib.arange(4.0)
    y = tensorlib.ones(4)
    want = (2 * x + y).tolist()
    assert ext.scale_add(x, y, 2.0).tolist() == want
    assert ext.c_scale_add(x, y, 2.0).tolist() == want
    assert tensorlib.add(y, x, alpha=2.0).tolist() == want
    assert tensorlib.from_dlpack(x).data_ptr() == x.data_ptr()
    a = np.arange(3.0)
    assert tensorlib.from_dlpack(a).data_ptr() == a.ctypes.data
    if torch is not None:
        t = torch.arange(3.0)
        assert tensorlib.from_dlpack(t).data_ptr() == t.data_ptr()
        assert torch.from_dlpack(x).data_ptr() == x.data_ptr()


def _row(name, times, a, b, goal=None):
    ratio = times[a] / times[b]
    mark = "" if goal is None else ("  (goal <= %.1fx: %s)" % (goal, "met" if ratio <= goal
                                                                  else "MISSED"))
    print(f"{name:<46} {times[a] * 1e9:9.0f} ns  {times[b] * 1e9:9.0f} ns  {ratio:6.2f}x{mark}")
    return goal is None or ratio <= goal


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    rounds = 3 if args.quick else args.rounds
    print(f"load average: {os.getloadavg()[0]:.2f}   tensorlib {tensorlib.__version__}, "
          f"torch {torch.__version__ if torch else 'not installed'}, NumPy {np.__version__}")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        ext = _extension(tmp)
        _check(ext)

        x = tensorlib.ones(4)
        y = tensorlib.ones(4)
        a = np.ones(4, np.float32)
        fns = {
            "tl own": lambda: tensorlib.from_dlpack(x),
            "tl from numpy": lambda: tensorlib.from_dlpack(a),
            "cython": lambda: ext.scale_add(x, y, 2.0),
            "c": lambda: ext.c_scale_add(x, y, 2.0),
            "cython identity": lambda: ext.identity(x),
            "tl add": lambda: tensorlib.add(x, y, alpha=2.0),
        }
        if torch is not None:
            t = torch.ones(4)
            fns.update({
                "torch own": lambda: torch.from_dlpack(t),
                "torch from numpy": lambda: torch.from_dlpack(a),
                "tl from torch": lambda: tensorlib.from_dlpack(t),
                "torch from tl": lambda: torch.from_dlpack(x),
            })
        times = race(fns, rounds)

    print(f"\n{'DLPack (4 float32)':<46} {'tensorlib':>12}  {'torch':>12}  {'ratio':>7}")
    if torch is not None:
        ok &= _row("from_dlpack(own tensor): __dlpack__ + import", times, "tl own", "torch own",
                   goal=1.0)
        _row("from_dlpack(numpy array)", times, "tl from numpy", "torch from numpy")
        _row("from_dlpack(the other library's tensor)", times, "tl from torch", "torch from tl")
    else:
        print("(torch not installed: tensorlib alone)")
        print(f"{'from_dlpack(own tensor)':<46} {times['tl own'] * 1e9:9.0f} ns")
        print(f"{'from_dlpack(numpy array)':<46} {times['tl from numpy'] * 1e9:9.0f} ns")

    print(f"\n{'Extension call (x, y: 4 float32)':<46} {'extension':>12}  {'tl.add':>12}  "
          f"{'ratio':>7}")
    ok &= _row("tl_fused.scale_add (cimport tensorlib)", times, "cython", "tl add", goal=0.5)
    _row("tl_fused.c_scale_add (tensorlib.h)", times, "c", "tl add")
    _row("tl_fused.identity (a tensor in and out)", times, "cython identity", "tl add")
    print("\nall goals met" if ok else "\nsome goals MISSED (see above)")


if __name__ == "__main__":
    main()
