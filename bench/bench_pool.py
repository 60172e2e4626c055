"""The thread pool's cost for small parallel work: wake-up latency and split overhead.

An elementwise add just above the size where tensorlib starts using the pool
(TL_EW_PARALLEL_MIN, 32768 elements) and at larger sizes, run with 1 thread and with all
threads. The best time per call of each is printed, with overhead = t(all) - t(1) / threads:
what waking the pool and joining it costs on top of a perfect split (below the parallel size
the two should be equal). Same guards as the other benches (load average <= 1.5 unless
--force, both printed).

    PYTHONPATH=. python bench/bench_pool.py [--force]
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _quiet import Quiet, interleaved  # noqa: E402

import tensorlib  # noqa: E402

SIZES = [16384, 32768, 40000, 65536, 262144, 1 << 20]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args(argv)
    quiet = Quiet(force=args.force)
    nthreads = os.cpu_count() or 1
    before = tensorlib.get_num_threads()
    print(f"{'elements':>9s} {'1 thread us':>12s} {f'{nthreads} threads us':>13s} "
          f"{'overhead us':>12s} {'speed-up':>9s} {'load':>5s}")
    try:
        for n in SIZES:
            x = tensorlib.from_numpy(np.ones(n, np.float32))
            o = tensorlib.empty(n)

            def one():
                tensorlib.set_num_threads(1)
                tensorlib.add(x, x, out=o)

            def many():
                tensorlib.set_num_threads(nthreads)
                tensorlib.add(x, x, out=o)
            # the thread-count switch is in both, so it cancels out of the difference
            t = interleaved({"one": one, "many": many}, args.rounds)
            t1, tn = t["one"] * 1e6, t["many"] * 1e6
            print(f"{n:9d} {t1:12.2f} {tn:13.2f} {tn - t1 / nthreads:12.2f} {t1 / tn:9.2f} "
                  f"{quiet.sample():5.2f}{quiet.flag()}", flush=True)
    finally:
        tensorlib.set_num_threads(before)
    return 0 if quiet.finish() else 3


if __name__ == "__main__":
    sys.exit(main())
