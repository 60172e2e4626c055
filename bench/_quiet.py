"""Guards that keep benchmark figures honest (bench_math, bench_reduce, readme_tables).

- ``Quiet``: the 1-minute load average is printed before and after a run; above
  ``MAX_LOAD`` the run refuses to start, and a run the load rose under ends flagged, unless
  ``--force`` (then every figure is flagged as not fit to publish).
- ``pin_threads``: tensorlib and torch run at the same, stated thread count.
- ``interleaved``: the best time of each function over rounds that alternate between them,
  so machine noise falls on every side alike.
- ``settle``: before a side is timed it runs untimed until it is in its own steady state:
  the other side's idle workers are given time to stop spinning, and the function is
  called a few times (see SETTLE_S and WARM_CALLS).
"""
import os
import sys
import time

MAX_LOAD = 1.5

# torch's OpenMP workers spin for about 15 ms after a parallel region before they sleep
# (libgomp's default spin count), so a multi-threaded call timed right after torch shares a
# core with a spinning thread. Measured on 2026-11-28 (load 0.5-0.9): erfc over 4M float64
# at 2 threads, tensorlib took 4.54 ns/element right after torch, 3.68 after a 10 ms pause
# and 3.69 in a loop of its own, while torch took 3.4-3.7 whatever ran before it (our pool
# spins for microseconds). So each switch between sides waits this long when more than one
# thread runs.
SETTLE_S = 0.02

# Then the function runs untimed, WARM_CALLS times or for WARM_S, whichever ends first (at
# least once), so each side is timed in the state its own repeated calls are in, at every
# thread count. One call is not enough: on an Intel Xeon VM (2026-11-29, load 0.5-0.9),
# torch's float32 tan over 4M elements took 1.64, 0.95, 0.75 and then 0.56 ns per element
# in consecutive calls right after our kernels had run, and 0.54 in a loop of its own,
# while ours (which prefetch) took 1.14-1.15 in every position. Timed on the first call
# after the other side, as the 1-thread columns were until then, torch read 0.93-2.8 and
# the ratio 0.42-1.26x; in its own steady state the ratio is 2.1x.
WARM_CALLS = 3
WARM_S = 0.015


def settle(threads, fn):
    """Before timing ``fn``: at ``threads`` > 1 wait SETTLE_S (the previous side's idle
    workers go to sleep), then call ``fn`` untimed WARM_CALLS times or for WARM_S, whichever
    ends first (its own workers wake up, its data and state are its own again).

    >>> calls = []
    >>> settle(1, lambda: calls.append(1))
    >>> 1 <= len(calls) <= WARM_CALLS
    True
    """
    if threads > 1:
        time.sleep(SETTLE_S)
    t0 = time.perf_counter()
    for _ in range(WARM_CALLS):
        fn()
        if time.perf_counter() - t0 > WARM_S:
            break


def load1():
    """The 1-minute load average (NaN where the OS has none)."""
    try:
        return os.getloadavg()[0]
    except OSError:          # pragma: no cover - not on Linux/macOS
        return float("nan")


class Quiet:
    """Load-average bookkeeping of one run.

    >>> q = Quiet(force=True, out=None)
    >>> isinstance(q.before, float)
    True
    """

    def __init__(self, force=False, out=sys.stdout, max_load=MAX_LOAD):
        self.force, self.out, self.max_load = force, out, max_load
        self.before = load1()
        self.peak = self.before
        self._say(f"load average before: {self.before:.2f} (limit {max_load})")
        if self.before > max_load:
            if not force:
                self._say(f"REFUSED: load average {self.before:.2f} > {max_load}: the figures "
                          "would measure the other processes. Rerun on a quiet machine "
                          "(or pass --force to get figures flagged as unfit to publish).")
                raise SystemExit(2)
            self._say(f"WARNING: load average {self.before:.2f} > {max_load}: --force given, "
                      "every figure below is NOT fit to publish")

    def _say(self, msg):
        if self.out is not None:
            print(msg, file=self.out, flush=True)

    def sample(self):
        """The load now (kept as the run's peak); call between cases."""
        now = load1()
        self.peak = max(self.peak, now)
        return now

    @property
    def ok(self):
        """True while the load never went over the limit."""
        return not self.peak > self.max_load

    def flag(self):
        """'' for a quiet run, else a marker to print next to each figure."""
        return "" if self.ok else "  [LOADED]"

    def finish(self):
        """Print the load after the run; returns whether the run stayed quiet."""
        after = self.sample()
        self._say(f"load average after: {after:.2f} (peak seen {self.peak:.2f})")
        if not self.ok:
            self._say(f"WARNING: the load average reached {self.peak:.2f} > {self.max_load}: "
                      "these figures are NOT fit to publish.")
        return self.ok


def pin_threads(n, torch=None):
    """Set tensorlib's (and torch's, when given) thread count to ``n``; returns ``n``."""
    import tensorlib
    tensorlib.set_num_threads(n)
    if torch is not None:
        torch.set_num_threads(n)
        assert torch.get_num_threads() == n
    assert tensorlib.get_num_threads() == n
    return n


def interleaved(fns, rounds, min_seconds=0.002):
    """{name: best seconds per call} of ``fns`` ({name: function}), alternating between them
    every round; each round calls a function enough times to last ``min_seconds``.

    >>> best = interleaved({"a": lambda: None, "b": lambda: None}, rounds=2)
    >>> sorted(best)
    ['a', 'b']
    """
    number = {}
    for k, fn in fns.items():
        fn()                                      # warm up (first-touch, caches)
        t0 = time.perf_counter()
        fn()
        number[k] = max(1, int(min_seconds / max(time.perf_counter() - t0, 1e-9)))
    import tensorlib
    threads = tensorlib.get_num_threads()
    best = {k: float("inf") for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            settle(threads, fn)
            t0 = time.perf_counter()
            for _ in range(number[k]):
                fn()
            best[k] = min(best[k], (time.perf_counter() - t0) / number[k])
    return best
