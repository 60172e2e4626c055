"""Per-call overhead of the core tensor operations: tensorlib against PyTorch and NumPy.

Each case runs side by side in one process, on the same small (4x4 float32) inputs, as
alternating rounds of ``timeit`` (tensorlib, torch, NumPy, tensorlib, ...) so that machine
noise hits all three alike; every round lasts about 2 ms whatever the library's speed, and
the best round of each is kept. Printed: the time per call and
the ratios tensorlib/torch and tensorlib/NumPy (below 1 means tensorlib is faster). torch
runs at its defaults; its columns are left out when it is not installed.

    python bench/bench_core.py             # default rounds
    python bench/bench_core.py --quick     # fewer rounds (a smoke test)
"""
import argparse
import os
import sys
import timeit

import numpy as np

try:
    import torch
except ImportError:          # torch columns are optional
    torch = None

import tensorlib

# (name, statement, goal as a ratio to torch's time or None); `x` is a fresh 4x4 float32
# tensor/array, `lib` the library module.
CASES = [
    ("x[1:3]", "x[1:3]", 0.5),
    ("x[:, 1]", "x[:, 1]", 0.5),
    ("x.t()", "x.t()", 0.5),
    ("x.view(16)", "x.view(16)", 0.5),
    ("x.view(4, 4)", "x.view(4, 4)", 0.5),
    ("empty(4, 4)", "lib.empty(4, 4)", 0.5),
    ("x.shape", "x.shape", None),
    ("x.size(0)", "x.size(0)", None),
    ("x.clone()", "x.clone()", None),
    ("x[0, 1] = 1.0", "x[0, 1] = 1.0", None),
]

# NumPy spellings where they differ (None: no NumPy counterpart worth timing).
NUMPY_STMT = {
    "x.t()": "x.T",
    "x.view(16)": "x.reshape(16)",
    "x.view(4, 4)": "x.reshape(4, 4)",
    "x.size(0)": "x.shape[0]",
    "x.clone()": "x.copy()",
    "empty(4, 4)": "lib.empty((4, 4), dtype=lib.float32)",
}


def make_env(lib):
    if lib is np:
        return {"x": np.arange(16, dtype=np.float32).reshape(4, 4), "lib": np}
    return {"x": lib.arange(16, dtype=lib.float32).view(4, 4), "lib": lib}


def calls_per_round(timer, round_s):
    """Enough calls for one round to last about round_s (at least 1000 calls), so that
    every library's rounds are equally exposed to the scheduler on a busy machine."""
    per_call = timer.timeit(200) / 200
    return max(1000, int(round_s / max(per_call, 1e-9)))


def best_times(stmts, number, rounds, round_s=0.002):
    """Best time per call (seconds) of each (stmt, env), rounds interleaved. ``number``
    calls per round, or None to size each statement's rounds to about ``round_s``."""
    timers = [timeit.Timer(s, globals=env) for s, env in stmts]
    numbers = [number or calls_per_round(t, round_s) for t in timers]
    best = [float("inf")] * len(timers)
    for _ in range(rounds):
        for i, t in enumerate(timers):
            best[i] = min(best[i], t.timeit(numbers[i]) / numbers[i])
    return best


def run(number=None, rounds=30):
    libs = [("tensorlib", tensorlib)] + ([("torch", torch)] if torch is not None else [])
    rows = []
    for name, stmt, goal in CASES:
        stmts = [(stmt, make_env(lib)) for _, lib in libs]
        stmts.append((NUMPY_STMT.get(name, stmt), make_env(np)))
        times = best_times(stmts, number, rounds)
        rows.append((name, goal, times[0], times[1] if torch is not None else None, times[-1]))
    return rows


def fmt_ns(t):
    return f"{t * 1e9:8.0f}"


def print_table(rows):
    has_torch = torch is not None
    head = f"{'operation':<16}{'tensorlib ns':>13}"
    if has_torch:
        head += f"{'torch ns':>10}{'tl/torch':>10}{'goal':>7}"
    head += f"{'numpy ns':>10}{'tl/numpy':>10}"
    print(head)
    print("-" * len(head))
    missed = []
    for name, goal, tl, tt, tn in rows:
        line = f"{name:<16}{fmt_ns(tl):>13}"
        if has_torch:
            r = tl / tt
            mark = ""
            if goal is not None:
                mark = f"<={goal}" + (" " if r <= goal else "!")
                if r > goal:
                    missed.append(name)
            line += f"{fmt_ns(tt):>10}{r:>9.2f}x{mark:>7}"
        line += f"{fmt_ns(tn):>10}{tl / tn:>9.2f}x"
        print(line)
    if has_torch:
        print("goals met" if not missed else "goals missed (!): " + ", ".join(missed))
    return missed


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--number", type=int, default=None,
                   help="calls per timing round (default: as many as fill about 2 ms)")
    p.add_argument("--rounds", type=int, default=30, help="alternating rounds; the best is kept")
    p.add_argument("--quick", action="store_true", help="3 rounds (a smoke test)")
    a = p.parse_args(argv)
    if a.quick:
        a.rounds = 3
    versions = f"tensorlib {tensorlib.__version__}, NumPy {np.__version__}"
    versions += f", torch {torch.__version__} ({torch.get_num_threads()} threads)" if torch else ", torch not installed"
    calls = f"{a.number} calls" if a.number else "~2 ms of calls"
    print(f"# {versions}; Python {sys.version.split()[0]}; best of {a.rounds} rounds of {calls}; "
          f"{os.cpu_count()} CPUs")
    print_table(run(a.number, a.rounds))


if __name__ == "__main__":
    main()
