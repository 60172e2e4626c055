"""Sorting and selection speed: tensorlib vs torch (at its defaults) and NumPy.

Each case runs the three libraries in alternating rounds in one process and keeps each one's
best time. Ratios are tensorlib/torch and tensorlib/numpy (below 1: tensorlib is faster).
Build with -O3 first: ``pip install .`` (or in place: see bench/README.md).

    python bench/bench_sort.py [--rounds N] [--filter TEXT]
"""
import argparse
import time

import numpy as np

import tensorlib as tl

try:
    import torch
except ImportError:  # the torch column is left out
    torch = None


def best_of(fns, rounds):
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for j, fn in enumerate(fns):
            if fn is None:
                continue
            t0 = time.perf_counter()
            fn()
            best[j] = min(best[j], time.perf_counter() - t0)
    return best


def cases():
    rng = np.random.default_rng(0)
    f1m = rng.standard_normal(1 << 20).astype(np.float32)
    mat = rng.standard_normal((1024, 1024)).astype(np.float32)
    i1m = rng.integers(0, 1 << 30, 1 << 20)
    f64 = rng.standard_normal(1 << 20)
    small = rng.integers(0, 100, (1024, 1024)).astype(np.float32)
    T = tl.from_numpy
    P = torch.from_numpy if torch else None
    out = []

    def add(name, tl_fn, torch_fn, np_fn):
        out.append((name, tl_fn, torch_fn if torch else None, np_fn))

    a, b = T(f1m), P(f1m) if torch else None
    add("sort 1M float32", lambda: tl.sort(a), lambda: torch.sort(b), lambda: np.argsort(f1m))
    add("sort 1M float32 stable", lambda: tl.sort(a, stable=True), lambda: torch.sort(b, stable=True),
        lambda: np.argsort(f1m, kind="stable"))
    add("sort 1M float32 descending", lambda: tl.sort(a, descending=True),
        lambda: torch.sort(b, descending=True), lambda: np.argsort(-f1m))
    m, mt = T(mat), P(mat) if torch else None
    add("sort (1024,1024) dim=1", lambda: tl.sort(m, 1), lambda: torch.sort(mt, 1),
        lambda: np.argsort(mat, 1))
    add("sort (1024,1024) dim=0", lambda: tl.sort(m, 0), lambda: torch.sort(mt, 0),
        lambda: np.argsort(mat, 0))
    ia, ib = T(i1m), P(i1m) if torch else None
    add("sort 1M int64", lambda: tl.sort(ia), lambda: torch.sort(ib), lambda: np.argsort(i1m))
    da, db = T(f64), P(f64) if torch else None
    add("sort 1M float64", lambda: tl.sort(da), lambda: torch.sort(db), lambda: np.argsort(f64))
    add("topk(10) 1M float32", lambda: tl.topk(a, 10), lambda: torch.topk(b, 10),
        lambda: np.argpartition(f1m, -10)[-10:])
    add("topk(10) (1024,1024) dim=1", lambda: tl.topk(m, 10, 1), lambda: torch.topk(mt, 10, 1),
        lambda: np.argpartition(mat, -10, axis=1)[:, -10:])
    add("topk(1000) 1M float32", lambda: tl.topk(a, 1000), lambda: torch.topk(b, 1000),
        lambda: np.argpartition(f1m, -1000)[-1000:])
    add("kthvalue(500000) 1M float32", lambda: tl.kthvalue(a, 500000), lambda: torch.kthvalue(b, 500000),
        lambda: np.partition(f1m, 499999)[499999])
    add("median 1M float32", lambda: tl.median(a), lambda: torch.median(b),
        lambda: np.partition(f1m, (f1m.size - 1) // 2)[(f1m.size - 1) // 2])
    add("median (1024,1024) dim=1", lambda: tl.median(m, 1), lambda: torch.median(mt, 1),
        lambda: np.partition(mat, 511, axis=1)[:, 511])
    s, stt = T(small), P(small) if torch else None
    add("mode (1024,1024) dim=1", lambda: tl.mode(s, 1), lambda: torch.mode(stt, 1), None)
    add("unique 1M int64", lambda: tl.unique(ia), lambda: torch.unique(ib), lambda: np.unique(i1m))
    add("unique 1M int64 inverse+counts", lambda: tl.unique(ia, return_inverse=True, return_counts=True),
        lambda: torch.unique(ib, return_inverse=True, return_counts=True),
        lambda: np.unique(i1m, return_inverse=True, return_counts=True))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--filter", default="")
    args = ap.parse_args()
    print(f"tensorlib threads {tl.get_num_threads()}"
          + (f", torch {torch.__version__} threads {torch.get_num_threads()}" if torch else "")
          + f", numpy {np.__version__}")
    print(f"{'case':34s} {'tensorlib':>10s} {'torch':>10s} {'numpy':>10s} {'tl/torch':>9s} {'tl/numpy':>9s}")
    for name, f_tl, f_torch, f_np in cases():
        if args.filter not in name:
            continue
        t_tl, t_torch, t_np = best_of([f_tl, f_torch, f_np], args.rounds)

        def ms(x):
            return f"{x * 1e3:8.2f}ms" if x != float("inf") else f"{'-':>10s}"

        def ratio(x):
            return f"{t_tl / x:9.2f}" if x != float("inf") else f"{'-':>9s}"
        print(f"{name:34s} {ms(t_tl)} {ms(t_torch)} {ms(t_np)} {ratio(t_torch)} {ratio(t_np)}")


if __name__ == "__main__":
    main()
