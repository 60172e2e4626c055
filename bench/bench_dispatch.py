"""Dispatch overhead of small ops: 4x4 operators and methods, tensorlib against torch and NumPy.

On 4x4 tensors the kernel is a few nanoseconds: what is timed is the path from the Python
operator to the kernel and back (argument parsing, promotion, broadcasting, the device's
back end, allocation). Alternating rounds of ``timeit`` in one process (tensorlib, torch,
NumPy, ...), about 2 ms each, best round kept; ratios below 1 mean tensorlib is faster.
Goal: 4x4 ``a + b`` at most 0.4x torch's time. Run it on a quiet machine (load average under
1.5; the script prints it).

    python bench/bench_dispatch.py             # default rounds
    python bench/bench_dispatch.py --quick     # a smoke run
"""
import argparse
import os
import timeit

import numpy as np

try:
    import torch
except ImportError:          # torch columns are optional
    torch = None

import tensorlib

# (name, statement); `a`, `b` are 4x4 float32, `i`, `j` 4x4 int64, `lib` the library
CASES = [
    ("a + b", "a + b"),
    ("a * 2", "a * 2"),
    ("a - b (out of place, broadcast row)", "a - b[0]"),
    ("a.exp()", "a.exp()"),
    ("i // 2", "i // 2"),
    ("i & j", "i & j"),
    ("a < b", "a < b"),
    ("a.add_(b)", "a.add_(b)"),
    ("a.sum()", "a.sum()"),
    ("a @ b", "a @ b"),
]
NUMPY_STMT = {"a.exp()": "np.exp(a)", "a.add_(b)": "np.add(a, b, out=a)", "a.sum()": "a.sum()"}


def _env(lib):
    if lib is np:
        a = np.ones((4, 4), np.float32)
        i = np.ones((4, 4), np.int64)
    else:
        a = lib.ones(4, 4)
        i = lib.ones(4, 4, dtype=lib.int64)
    return {"a": a, "b": a * 1, "i": i, "j": i * 1, "lib": lib, "np": np}


def _per_call(stmt, env, number):
    return timeit.Timer(stmt, globals=env).timeit(number) / number


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    rounds = 3 if args.quick else args.rounds
    if torch is not None:
        torch.set_num_threads(tensorlib.get_num_threads())
    print(f"load average {os.getloadavg()[0]:.2f}; tensorlib {tensorlib.__file__}")
    print(f"{'case':40} {'tensorlib':>10} {'torch':>10} {'ratio':>7} {'NumPy':>10} {'ratio':>7}")
    for name, stmt in CASES:
        libs = [("tl", tensorlib, stmt)]
        if torch is not None:
            libs.append(("torch", torch, stmt))
        libs.append(("np", np, NUMPY_STMT.get(name, stmt)))
        envs = {k: _env(lib) for k, lib, _ in libs}
        number = {}
        for k, _, s in libs:          # about 2 ms a round
            t = _per_call(s, envs[k], 200)
            number[k] = max(1, int(2e-3 / max(t, 1e-9)))
        best = {k: float("inf") for k, _, _ in libs}
        for _ in range(rounds):
            for k, _, s in libs:
                best[k] = min(best[k], _per_call(s, envs[k], number[k]))
        tl_ns = best["tl"] * 1e9
        t_ns = best.get("torch", float("nan")) * 1e9
        n_ns = best["np"] * 1e9
        print(f"{name:40} {tl_ns:8.0f}ns {t_ns:8.0f}ns {tl_ns / t_ns:6.2f}x "
              f"{n_ns:8.0f}ns {tl_ns / n_ns:6.2f}x")


if __name__ == "__main__":
    main()
