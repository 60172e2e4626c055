"""Speed of tensorlib's elementwise math (exp, log, tanh, ...) against PyTorch.

Each function runs as the public op on both sides (``tensorlib.exp(x, out=o)`` against
``torch.exp(x, out=o)``; the activations without out= in torch, as both allocate there)
over a contiguous array of n elements (default 4M), in alternating rounds within one
process, best round kept. Both libraries are pinned to the same thread count, first 1 thread
and then all of them (os.cpu_count()), and the ratios tensorlib / torch are printed for
both (below 1: tensorlib is faster).

The load average is printed before and after; above 1.5 the bench refuses to run (--force
runs it anyway and flags every line). Build with -O3 first (never TENSORLIB_DEV=1):

    python setup.py build_ext --inplace -j2 && PYTHONPATH=. python bench/bench_math.py
    python bench/bench_math.py --quick              # 256K elements, fewer rounds
    python bench/bench_math.py -n 65536 --threads 1 # in the caches: the kernels' compute
    python bench/bench_math.py exp tanh --dtype float64
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _quiet import Quiet, interleaved, pin_threads  # noqa: E402

import tensorlib  # noqa: E402

try:
    import torch
except ImportError:          # pragma: no cover - the bench needs torch for its ratios
    torch = None

# name: input range
RANGE = {"exp": (-80, 80), "expm1": (-10, 80), "log": (0, 100), "log2": (0, 100),
         "log10": (0, 100), "log1p": (-1, 100), "sin": (-10, 10), "cos": (-10, 10),
         "tan": (-1.5, 1.5), "tanh": (-10, 10), "sigmoid": (-30, 30), "erf": (-4, 4),
         "erfc": (-4, 9), "pow": (0, 10), "gelu": (-8, 8), "silu": (-30, 30),
         "sqrt": (0, 100), "rsqrt": (0, 100)}
NAMES = list(RANGE)
ACTIVATIONS = {"gelu", "silu"}          # torch.nn.functional, no out=


def _op(lib, name):
    if name in ACTIVATIONS:
        return getattr(lib.nn.functional, name)
    return getattr(lib, name)


def _call(lib, name, x, o, y=None):
    f = _op(lib, name)
    if name == "pow":
        return lambda: f(x, y, out=o)
    if name in ACTIVATIONS:
        return lambda: f(x)
    return lambda: f(x, out=o)


def case(name, n, dtype, threads, rounds, rng):
    """Best seconds per call {"tensorlib", "torch"} for one function."""
    lo, hi = RANGE[name]
    a = rng.uniform(lo, hi, n).astype(dtype)
    b = rng.uniform(-3, 3, n).astype(dtype)
    x, y, o = tensorlib.from_numpy(a).clone(), tensorlib.from_numpy(b).clone(), None
    o = tensorlib.empty(n, dtype=getattr(tensorlib, np.dtype(dtype).name))
    tx, ty = torch.from_numpy(a.copy()), torch.from_numpy(b.copy())
    to = torch.empty(n, dtype=getattr(torch, np.dtype(dtype).name))
    fns = {"tensorlib": _call(tensorlib, name, x, o, y), "torch": _call(torch, name, tx, to, ty)}
    pin_threads(threads, torch)
    return interleaved(fns, rounds)


def run(names=NAMES, n=1 << 22, dtypes=(np.float32,), rounds=15, force=False, out=sys.stdout,
        threads=None):
    """Print the table; returns (rows, quiet) with rows of
    (name, dtype, threads, tensorlib s, torch s, load average).
    ``threads``: the thread counts to run (default 1 and all the cores)."""
    if torch is None:
        raise SystemExit("bench_math needs torch for its ratios")
    quiet = Quiet(force=force, out=out)
    rng = np.random.default_rng(0)
    all_threads = os.cpu_count() or 1
    thread_counts = list(threads or [1] + ([all_threads] if all_threads > 1 else []))
    print(f"{n} elements per call, best of {rounds} alternating rounds; tensorlib and torch "
          f"{torch.__version__} pinned to the same thread count; ns per element", file=out)
    print(f"{'function':9s} {'dtype':8s} {'thr':>3s} {'tensorlib':>9s} {'torch':>8s} "
          f"{'ratio':>6s} {'load':>5s}", file=out)
    rows = []
    for dtype in dtypes:
        for name in names:
            for threads in thread_counts:
                t = case(name, n, dtype, threads, rounds, rng)
                load = quiet.sample()
                ns = {k: v * 1e9 / n for k, v in t.items()}
                print(f"{name:9s} {np.dtype(dtype).name:8s} {threads:3d} {ns['tensorlib']:9.3f} "
                      f"{ns['torch']:8.3f} {t['tensorlib'] / t['torch']:6.2f} "
                      f"{load:5.2f}{quiet.flag()}", file=out, flush=True)
                rows.append((name, np.dtype(dtype).name, threads, t["tensorlib"], t["torch"],
                             load))
    quiet.finish()
    return rows, quiet


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", default=NAMES)
    ap.add_argument("--quick", action="store_true", help="256K elements, 5 rounds")
    ap.add_argument("-n", type=int, default=None, help="elements per call (default 4M)")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--threads", type=int, default=None,
                    help="run this thread count only (default: 1 and all the cores)")
    ap.add_argument("--dtype", choices=["float32", "float64", "both"], default="float32")
    ap.add_argument("--force", action="store_true",
                    help="run even above load 1.5 (figures flagged as unfit to publish)")
    args = ap.parse_args(argv)
    unknown = [nm for nm in args.names if nm not in RANGE]
    if unknown:
        ap.error(f"unknown function(s) {unknown}; known: {' '.join(NAMES)}")
    n = args.n or (1 << 18 if args.quick else 1 << 22)
    rounds = args.rounds or (5 if args.quick else 15)
    dtypes = {"float32": (np.float32,), "float64": (np.float64,),
              "both": (np.float32, np.float64)}[args.dtype]
    _, quiet = run(args.names, n, dtypes, rounds, args.force,
                   threads=[args.threads] if args.threads else None)
    return 0 if quiet.ok else 3


if __name__ == "__main__":
    sys.exit(main())
