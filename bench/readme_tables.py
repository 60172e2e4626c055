"""Regenerate the README's elementwise-math and reduction tables from one quiet run.

Runs bench_math (float32 and float64, 1 thread and all threads at 4M elements, and 1 thread
at 64K elements, which stay in the L2 cache) and bench_reduce, measures
the float32 max ulp error of tensorlib and torch on the same inputs (every 4093rd float32
bit pattern of both signs, plus a dense grid of each function's usual range, against
float64 references), and prints Markdown tables to paste into README.md's "Performance"
section. Refuses to run above load average 1.5, and prints nothing to paste if the load
rose above it during the run (exit status 3): such figures would measure the other
processes. Build at -O3 first (never TENSORLIB_DEV=1):

    python setup.py build_ext --inplace -j2
    PYTHONPATH=. python bench/readme_tables.py > /tmp/tables.md    # about 10 minutes
"""
import argparse
import os
import platform
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_math  # noqa: E402
import bench_reduce  # noqa: E402
from _quiet import Quiet  # noqa: E402

CACHE_N = 1 << 16       # float64 in + out: 1 MiB, within a core's L2 on current x86 CPUs

ULP_NAMES = ["exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "tanh",
             "sigmoid", "erf", "erfc", "gelu", "silu"]


def _ulp(got, ref):
    """float32 ulps of ref (the test suite's measure: tests/test_math_ulp.py)."""
    got = np.asarray(got, np.float64)
    with np.errstate(all="ignore"):
        a = np.abs(ref)
        e = np.maximum(np.floor(np.log2(np.where(a > 0, a, 1.0))), -126)
        err = np.abs(got - ref) / np.exp2(e - 23)
        ref32 = ref.astype(np.float32).astype(np.float64)
    special = np.isinf(ref32) | np.isinf(got) | np.isnan(got) | np.isnan(ref)
    same = (got == ref32) | (np.isnan(got) & np.isnan(ref))
    return np.where(special, np.where(same, 0.0, np.inf), err)


def ulp_table(names=ULP_NAMES):
    """[(name, tensorlib max ulp, torch max ulp)] on the same float32 inputs."""
    import math

    import torch

    import tensorlib
    try:
        from scipy import special
        erf, erfc = special.erf, special.erfc
    except ImportError:
        erf = np.vectorize(math.erf)
        erfc = np.vectorize(math.erfc)

    def sigmoid(x):
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1.0, e) / (1.0 + e)

    ref = {"exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p,
           "log2": np.log2, "log10": np.log10, "sin": np.sin, "cos": np.cos, "tan": np.tan,
           "tanh": np.tanh, "sigmoid": sigmoid, "erf": erf, "erfc": erfc,
           "gelu": lambda x: 0.5 * x * erfc(-x / math.sqrt(2)),
           "silu": lambda x: x * sigmoid(x)}
    bits = np.arange(0, 0x7F800001, 4093, dtype=np.int64).astype(np.uint32).view(np.float32)
    sweep = np.concatenate([bits, -bits])
    rows = []
    for name in names:
        lo, hi = bench_math.RANGE[name]
        x = np.concatenate([sweep, np.linspace(lo, hi, 200001, dtype=np.float32)])
        with np.errstate(all="ignore"):
            r = ref[name](x.astype(np.float64))
        ours = bench_math._op(tensorlib, name)(tensorlib.from_numpy(x)).numpy()
        theirs = bench_math._op(torch, name)(torch.from_numpy(x)).numpy()
        rows.append((name, float(_ulp(ours, r).max()), float(_ulp(theirs, r).max())))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run: 256K elements, 2 rounds (never for the README)")
    ap.add_argument("--force", action="store_true",
                    help="run above load 1.5 anyway (prints the tables marked NOT FOR THE README)")
    args = ap.parse_args(argv)
    import torch
    quiet = Quiet(force=args.force, out=sys.stderr)
    # the benches print their own tables to stderr; the Markdown goes to stdout
    n, rounds = (1 << 18, 2) if args.quick else (1 << 22, args.rounds)
    math_rows, q1 = bench_math.run(n=n, dtypes=(np.float32, np.float64), rounds=rounds,
                                   force=args.force, out=sys.stderr)
    # the same functions on arrays that stay in the L2 cache, on one thread: the kernels'
    # own speed, without the memory system's (which moves from run to run on a shared VM)
    cache_n = 1 << 12 if args.quick else CACHE_N
    cache_rows, q3 = bench_math.run(n=cache_n, dtypes=(np.float32, np.float64), rounds=rounds,
                                    force=args.force, out=sys.stderr, threads=[1])
    red_rows, q2 = bench_reduce.run(rounds, None, None, force=args.force, out=sys.stderr)
    ulps = ulp_table()
    ok = quiet.finish() and q1.ok and q2.ok and q3.ok and not args.quick
    peak = max(quiet.peak, q1.peak, q2.peak, q3.peak)   # the highest load any run saw
    out = sys.stdout
    if not ok:
        print("<!-- NOT FOR THE README: a --quick run, or the load average went over 1.5 -->",
              file=out)
    nthreads = os.cpu_count() or 1
    print(f"Elementwise math (`bench/bench_math.py`, {n >> 20 or n / 2**20}M elements, "
          f"tensorlib / torch "
          f"{torch.__version__}, both pinned to 1 thread and to {nthreads}; best of "
          f"{rounds} alternating rounds; load average <= {peak:.2f}; "
          f"{platform.processor() or platform.machine()}, {nthreads} cores). Max error in "
          f"float32 ulps on the same inputs (every 4093rd float32, and a dense grid). The "
          f"in-cache columns time {cache_n >> 10}K elements on 1 thread:\n", file=out)
    ulp = {n: (a, b) for n, a, b in ulps}
    print(f"| function | float32, 1 thread | float32, {nthreads} threads | float32 in cache | "
          f"float64, 1 thread | float64, {nthreads} threads | float64 in cache | "
          "max ulp (torch) |", file=out)
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |", file=out)
    by = {(n, d, t): tl / tt for n, d, t, tl, tt, _ in math_rows}
    by.update({(n, d, "cache"): tl / tt for n, d, t, tl, tt, _ in cache_rows})
    for name in bench_math.NAMES:
        cells = []
        for d in ("float32", "float64"):
            for t in (1, nthreads, "cache"):
                v = by.get((name, d, t))
                cells.append("-" if v is None else f"{v:.2f}x")
        u = f"{ulp[name][0]:.3f} ({ulp[name][1]:.3f})" if name in ulp else "-"
        print(f"| `{name}` | " + " | ".join(cells) + f" | {u} |", file=out)
    print("\nReductions (`bench/bench_reduce.py`, tensorlib / torch, same conditions):\n",
          file=out)
    print(f"| case | 1 thread | {nthreads} threads |", file=out)
    print("| --- | ---: | ---: |", file=out)
    red = {}
    for name, t, tl, tt, _, _ in red_rows:
        red.setdefault(name, {})[t] = tl / tt
    for name, v in red.items():
        cells = [f"{v[t]:.2f}x" if t in v else "-" for t in (1, nthreads)]
        print(f"| {name} | " + " | ".join(cells) + " |", file=out)
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())
