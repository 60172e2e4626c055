"""The timing the side-by-side benches share (bench_nn, bench_train): best time per call of
each function, timed in alternating rounds so both sides see the same machine state."""
import time

from _quiet import settle


def per_call(fn, number):
    """Seconds per call of ``fn`` over ``number`` calls."""
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def race(fns, rounds):
    """{name: best seconds per call} for ``fns`` ({name: function}), each round about 20 ms
    of each function in turn."""
    number = {}
    for k, fn in fns.items():
        fn()
        number[k] = max(1, int(0.02 / max(per_call(fn, 1), 1e-9)))
    import tensorlib
    threads = tensorlib.get_num_threads()
    best = {k: float("inf") for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            settle(threads, fn)     # (the previous side's idle workers stop spinning first)
            best[k] = min(best[k], per_call(fn, number[k]))
    return best
