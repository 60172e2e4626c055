"""Allocation speed: ``empty(n)`` (and ``zeros(n)``) made and dropped in a loop, for sizes from
64 B to 64 MiB, tensorlib's caching allocator against its plain-malloc path
(``TENSORLIB_CACHING=0``), PyTorch's CPU allocator (which does not cache: every tensor is a
``posix_memalign``/``free`` pair) and NumPy (plain ``malloc``).

tensorlib (caching), torch and NumPy run side by side in one process in alternating rounds;
the plain-malloc tensorlib runs in a child process (the mode is fixed when the allocator is
created), with the same rounds. Each round is one ``timeit`` of enough calls to last about
2 ms; the best round is kept. Printed: time per call and the ratios to tensorlib's caching
path (above 1: slower than it).

Why large sizes differ so much: glibc serves big requests (above its mmap threshold) with
mmap/munmap, so without a cache each such tensor costs two system calls, and every page the
program then touches is faulted in (and zeroed by the kernel) again; the cache keeps its
segments mapped and faulted in. ``zeros(n)`` shows that second cost.

    python bench/bench_alloc.py            # about 30 s
    python bench/bench_alloc.py --quick    # a smoke run
"""
import argparse
import json
import os
import subprocess
import sys
import timeit

import numpy as np

try:
    import torch
except ImportError:          # torch columns are optional
    torch = None

import tensorlib

# float32 elements: 64 B, 4 KiB, 64 KiB, 1 MiB, 4 MiB, 64 MiB
SIZES = [16, 1024, 16 * 1024, 256 * 1024, 1024 * 1024, 16 * 1024 * 1024]
OPS = ["empty", "zeros"]


def _fmt_size(n):
    b = 4 * n
    for unit, k in (("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if b >= k:
            return f"{b // k} {unit}"
    return f"{b} B"


def _stmt(lib, op, n):
    if lib is np:
        return f"np.{op}({n}, dtype=np.float32)", {"np": np}
    return f"lib.{op}({n})", {"lib": lib}


def _calls(timer, round_s):
    per_call = timer.timeit(5) / 5
    return max(5, int(round_s / max(per_call, 1e-9)))


def best_times(libs, op, n, rounds, round_s=0.002):
    """Best time per call of each library, rounds interleaved."""
    timers = []
    for lib in libs:
        stmt, env = _stmt(lib, op, n)
        timers.append(timeit.Timer(stmt, globals=env))
    numbers = [_calls(t, round_s) for t in timers]
    best = [float("inf")] * len(timers)
    for _ in range(rounds):
        for i, t in enumerate(timers):
            best[i] = min(best[i], t.timeit(numbers[i]) / numbers[i])
    return best


def measure(libs, rounds):
    return {f"{op} {n}": best_times(libs, op, n, rounds) for op in OPS for n in SIZES}


def plain_malloc_times(rounds):
    """tensorlib with TENSORLIB_CACHING=0, measured in a child process."""
    env = dict(os.environ, TENSORLIB_CACHING="0")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "--rounds", str(rounds)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(rounds=20):
    """Rows (op, size, caching s, plain s, torch s or None, numpy s)."""
    libs = [tensorlib] + ([torch] if torch is not None else []) + [np]
    here = measure(libs, rounds)
    plain = plain_malloc_times(rounds)
    rows = []
    for op in OPS:
        for n in SIZES:
            t = here[f"{op} {n}"]
            rows.append((op, n, t[0], plain[f"{op} {n}"][0], t[1] if torch is not None else None, t[-1]))
    return rows


def print_table(rows):
    head = (f"{'op':<6}{'size':>8}{'tl cache ns':>13}{'tl malloc ns':>14}{'malloc/cache':>13}"
            + (f"{'torch ns':>11}{'torch/cache':>12}" if torch is not None else "")
            + f"{'numpy ns':>11}{'numpy/cache':>12}")
    print(head)
    print("-" * len(head))
    for op, n, tc, tp, tt, tn in rows:
        line = f"{op:<6}{_fmt_size(n):>8}{tc * 1e9:>13.0f}{tp * 1e9:>14.0f}{tp / tc:>12.2f}x"
        if torch is not None:
            line += f"{tt * 1e9:>11.0f}{tt / tc:>11.2f}x"
        line += f"{tn * 1e9:>11.0f}{tn / tc:>11.2f}x"
        print(line)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=20, help="alternating rounds; the best is kept")
    p.add_argument("--quick", action="store_true", help="3 rounds (a smoke test)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.quick:
        a.rounds = 3
    if a.child:
        print(json.dumps(measure([tensorlib], a.rounds)))
        return
    versions = f"tensorlib {tensorlib.__version__}, NumPy {np.__version__}"
    versions += f", torch {torch.__version__} ({torch.get_num_threads()} threads)" if torch else ", torch not installed"
    print(f"# {versions}; Python {sys.version.split()[0]}; best of {a.rounds} rounds of ~2 ms; "
          f"{os.cpu_count()} CPUs")
    print_table(run(a.rounds))


if __name__ == "__main__":
    main()
