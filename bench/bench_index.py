"""Indexing speed: tensorlib against PyTorch and NumPy on large gathers, selects and masks.

Each case runs side by side in one process as alternating rounds (tensorlib, torch, NumPy,
tensorlib, ...) so machine noise hits all three alike; the best round of each is kept.
Printed: time per call and the ratios tensorlib/torch and tensorlib/NumPy (below 1 means
tensorlib is faster). torch runs at its defaults (set_num_threads is left alone); its
columns are left out when it is not installed. Build with -O3 before measuring
(`pip install .`, or an in-place build: see bench/README.md).

    python bench/bench_index.py             # default rounds
    python bench/bench_index.py --quick     # fewer rounds (a smoke test)
"""
import argparse
import timeit

import numpy as np

try:
    import torch
except ImportError:          # torch columns are optional
    torch = None

import tensorlib

RNG = np.random.default_rng(0)
DATA = {
    "big": RNG.standard_normal(1 << 24).astype(np.float32),            # 16M float32
    "idx1m": RNG.integers(0, 1 << 24, size=1 << 20),                    # 1M int64
    "mat": RNG.standard_normal((4096, 1024)).astype(np.float32),
    "rows": RNG.integers(0, 4096, size=4096),
    "v4m": RNG.standard_normal(1 << 22).astype(np.float32),             # 4M float32
    "mask4m": RNG.random(1 << 22) < 0.5,
    "small": np.zeros(1 << 16, dtype=np.float32),
    "src1m": RNG.standard_normal(1 << 20).astype(np.float32),
    "idx64k": RNG.integers(0, 1 << 16, size=1 << 20),
    "col_idx": RNG.integers(0, 1024, size=(4096, 64)),
}

# (name, tensorlib/torch statement, NumPy statement or None); `lib` is the module, the
# other names are DATA converted to the library's arrays.
CASES = [
    ("x[idx] 1M of 16M f32", "big[idx1m]", "big[idx1m]"),
    ("index_select(0) 4096x1024", "lib.index_select(mat, 0, rows)", "np.take(mat, rows, axis=0)"),
    ("x[mask] 4M f32 (50%)", "v4m[mask4m]", "v4m[mask4m]"),
    ("nonzero 4M bool", "lib.nonzero(mask4m)", "np.argwhere(mask4m)"),
    ("gather(1) 4096x1024 -> x64", "lib.gather(mat, 1, col_idx)", "np.take_along_axis(mat, col_idx, 1)"),
    ("x[idx] = v 1M of 16M", "big[idx1m] = src1m", "big.__setitem__(idx1m, src1m)"),
    ("index_put_ acc 1M -> 64K", "small.index_put_((idx64k,), src1m, accumulate=True)",
     "np.add.at(small, idx64k, src1m)"),
    ("scatter_add_ 1M -> 64K", "small.scatter_add_(0, idx64k, src1m)", "np.add.at(small, idx64k, src1m)"),
]


def make_env(lib):
    if lib is np:
        env = {k: v.copy() for k, v in DATA.items()}
        env["np"] = np
        return env
    env = {k: lib.from_numpy(v.copy()) if lib is torch else lib.tensor(v) for k, v in DATA.items()}
    env["lib"] = lib
    return env


def best_times(stmts, rounds, number):
    timers = [timeit.Timer(s, globals=env) for s, env in stmts]
    for t in timers:
        t.timeit(1)                                    # warm up
    best = [float("inf")] * len(timers)
    for _ in range(rounds):
        for i, t in enumerate(timers):
            best[i] = min(best[i], t.timeit(number) / number)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rounds, number = (2, 1) if args.quick else (7, 3)
    envs = {"tl": make_env(tensorlib), "np": make_env(np)}
    if torch is not None:
        envs["torch"] = make_env(torch)
    print(f"tensorlib threads {tensorlib.get_num_threads()}"
          + (f", torch threads {torch.get_num_threads()}" if torch else ""))
    head = f"{'case':30s} {'tensorlib':>11s}"
    if torch:
        head += f" {'torch':>11s} {'tl/torch':>9s}"
    head += f" {'numpy':>11s} {'tl/numpy':>9s}"
    print(head)
    for name, stmt, np_stmt in CASES:
        stmts = [(stmt, envs["tl"])]
        if torch:
            stmts.append((stmt, envs["torch"]))
        if np_stmt:
            stmts.append((np_stmt, envs["np"]))
        times = best_times(stmts, rounds, number)
        line = f"{name:30s} {times[0] * 1e3:9.3f}ms"
        k = 1
        if torch:
            line += f" {times[1] * 1e3:9.3f}ms {times[0] / times[1]:9.2f}"
            k = 2
        if np_stmt:
            line += f" {times[k] * 1e3:9.3f}ms {times[0] / times[k]:9.2f}"
        print(line)


if __name__ == "__main__":
    main()
