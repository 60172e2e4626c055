"""Speed of tensorlib's reductions against PyTorch (when installed) and NumPy.

Each case runs tensorlib, torch and NumPy in alternating rounds in one process and keeps the
best time of each; ratios below 1 mean tensorlib is faster. tensorlib and torch are pinned
to the same thread count: every case runs at 1 thread and at all threads (os.cpu_count()),
or at the one count --threads names. The load average is printed before and after; above
1.5 the bench refuses to run (--force runs it and flags every line). Build with -O3 first:

    pip install .                                # or in place: bench/README.md
    python bench/bench_reduce.py [--rounds N] [--only NAME] [--threads N] [--force]

Targets: 16M float32 sum() and a sum over a transposed dim <= 1.1x torch;
softmax(dim=1) on 4096x1024 float32 <= 1.2x torch.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _quiet import Quiet, pin_threads, settle  # noqa: E402

import tensorlib  # noqa: E402

try:
    import torch
except ImportError:       # the bench still compares against NumPy
    torch = None


def _np_softmax(a, axis):
    m = a.max(axis=axis, keepdims=True)
    e = np.exp(a - m)
    return e / e.sum(axis=axis, keepdims=True)


def _np_log_softmax(a, axis):
    m = a.max(axis=axis, keepdims=True)
    return a - m - np.log(np.exp(a - m).sum(axis=axis, keepdims=True))


def cases():
    """(name, target ratio vs torch or None, shape, fn(lib, x, np_array_or_None))."""
    big = (1 << 24,)
    sq = (4096, 4096)
    sm = (4096, 1024)
    return [
        ("sum 16M f32", 1.1, big, lambda m, x: x.sum(), lambda a: a.sum()),
        ("sum over transposed dim (4096x4096).t().sum(1)", 1.1, sq,
         lambda m, x: x.t().sum(1), lambda a: a.T.sum(1)),
        ("sum over contiguous dim (4096x4096).t().sum(0)", None, sq,
         lambda m, x: x.t().sum(0), lambda a: a.T.sum(0)),
        ("sum(0) of 4096x4096", None, sq, lambda m, x: x.sum(0), lambda a: a.sum(0)),
        ("sum(1) of 4096x4096", None, sq, lambda m, x: x.sum(1), lambda a: a.sum(1)),
        ("sum(0) of (8M, 2)", None, (1 << 23, 2), lambda m, x: x.sum(0), lambda a: a.sum(0)),
        ("mean 16M f32", None, big, lambda m, x: x.mean(), lambda a: a.mean()),
        ("amax 16M f32", None, big, lambda m, x: x.amax(), lambda a: a.max()),
        ("argmax 16M f32", None, big, lambda m, x: x.argmax(), lambda a: a.argmax()),
        ("var 16M f32", None, big, lambda m, x: x.var(), lambda a: a.var(ddof=1)),
        ("norm 16M f32", None, big, lambda m, x: x.norm(), lambda a: np.linalg.norm(a)),
        ("logsumexp(1) 4096x1024", None, sm, lambda m, x: x.logsumexp(1), None),
        ("softmax(dim=1) 4096x1024", 1.2, sm, lambda m, x: x.softmax(1),
         lambda a: _np_softmax(a, 1)),
        ("log_softmax(dim=1) 4096x1024", None, sm, lambda m, x: x.log_softmax(1),
         lambda a: _np_log_softmax(a, 1)),
        ("softmax(dim=0) 4096x1024", None, sm, lambda m, x: x.softmax(0),
         lambda a: _np_softmax(a, 0)),
        ("cumsum(1) 4096x1024", None, sm, lambda m, x: x.cumsum(1), lambda a: a.cumsum(1)),
        ("cumsum(0) 4096x1024", None, sm, lambda m, x: x.cumsum(0), lambda a: a.cumsum(0)),
        ("sum 16M int32", None, big, lambda m, x: x.sum(), lambda a: a.sum(dtype=np.int64)),
    ]


def timed(fn, store, threads):
    settle(threads, fn)             # (the previous side's workers stop spinning first)
    t0 = time.perf_counter()
    fn()
    store.append(time.perf_counter() - t0)


def run(rounds, only, threads=None, force=False, out=sys.stdout):
    """Print the table; returns (rows, quiet), rows of
    (name, threads, tensorlib ms, torch ms, numpy ms, load average)."""
    quiet = Quiet(force=force, out=out)
    rng = np.random.default_rng(0)
    counts = [threads] if threads else sorted({1, os.cpu_count() or 1})
    print(f"tensorlib and torch {torch.__version__ if torch else '(absent)'} pinned to the same "
          f"thread count; best of {rounds} alternating rounds", file=out)
    print(f"{'case':52s} {'thr':>3s} {'tensorlib ms':>12s} {'torch ms':>9s} {'numpy ms':>9s} "
          f"{'tl/torch':>9s} {'tl/numpy':>9s} {'load':>5s}  target", file=out)
    results = []
    for name, target, shape, fn, npfn in cases():
        if only and only not in name:
            continue
        a = rng.random(shape, dtype=np.float32)
        if "int32" in name:
            a = (a * 100).astype(np.int32)
        x = tensorlib.from_numpy(a).clone()
        tx = torch.from_numpy(a.copy()) if torch else None
        for nthreads in counts:
            pin_threads(nthreads, torch)
            times = {"tl": [], "torch": [], "np": []}
            for _ in range(rounds):
                timed(lambda: fn(tensorlib, x), times["tl"], nthreads)
                if tx is not None:
                    timed(lambda: fn(torch, tx), times["torch"], nthreads)
                if npfn is not None:
                    timed(lambda: npfn(a), times["np"], nthreads)
            tl = min(times["tl"]) * 1e3
            tt = min(times["torch"]) * 1e3 if times["torch"] else float("nan")
            tn = min(times["np"]) * 1e3 if times["np"] else float("nan")
            ok = "" if target is None or not times["torch"] else \
                (f"<= {target}: " + ("ok" if tl / tt <= target else "MISSED"))
            load = quiet.sample()
            print(f"{name:52s} {nthreads:3d} {tl:12.3f} {tt:9.3f} {tn:9.3f} {tl / tt:9.2f} "
                  f"{tl / tn:9.2f} {load:5.2f}  {ok}{quiet.flag()}", file=out, flush=True)
            results.append((name, nthreads, tl, tt, tn, load))
    quiet.finish()
    return results, quiet


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--only", default=None, help="run the cases whose name contains this")
    ap.add_argument("--threads", type=int, default=None,
                    help="one thread count for both libraries (default: 1, then all)")
    ap.add_argument("--force", action="store_true",
                    help="run even above load 1.5 (figures flagged as unfit to publish)")
    args = ap.parse_args()
    _, quiet = run(args.rounds, args.only, args.threads, args.force)
    sys.exit(0 if quiet.ok else 3)
