"""Speed of tensorlib's own vectorized elementary functions (tensorlib/_core/cpu/cpu_math.h)
against NumPy's float32 ufuncs (and SciPy / PyTorch where NumPy has none).

Times the test hook ``_math_eval(name, x, out=o)``: one thread, a contiguous float32 array
of 16M elements, the TL_DISPATCH loop (the clone the kernels use on this CPU). Each library
writes into a preallocated output, in alternating rounds (tensorlib, NumPy, torch, ...) so
machine noise hits all alike; the best round of each is kept. Printed: ns per element and
the ratios tensorlib/NumPy and tensorlib/torch (below 1 means tensorlib is faster). torch
runs at its defaults (all its threads) and, for a like-for-like column, on one thread.

    python bench/bench_math.py              # 16M elements, 5 rounds
    python bench/bench_math.py --quick      # 1M elements, 2 rounds (a smoke test)
    python bench/bench_math.py exp sin_n    # only these functions
"""
import argparse
import time

import numpy as np

try:
    import torch
    import torch.nn.functional as F
except ImportError:          # torch columns are optional
    torch = None
try:
    from scipy import special
except ImportError:          # scipy columns are optional
    special = None

from tensorlib._core._math_test import _math_eval

# name: (input range, NumPy/SciPy function or None, torch function or None)
NP = {}
if special is not None:
    NP.update({"sigmoid": special.expit, "erf": special.erf, "erfc": special.erfc})
NP.update({"exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2,
           "log10": np.log10, "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan,
           "sin_n": np.sin, "cos_n": np.cos, "tan_n": np.tan, "tanh": np.tanh, "sinh": np.sinh,
           "cosh": np.cosh, "atan": np.arctan, "asin": np.arcsin, "acos": np.arccos,
           "atan2": np.arctan2})
TORCH = {}
if torch is not None:
    TORCH = {
        "exp": torch.exp, "exp2": torch.exp2, "expm1": torch.expm1, "log": torch.log,
        "log2": torch.log2, "log10": torch.log10, "log1p": torch.log1p, "sin": torch.sin,
        "cos": torch.cos, "tan": torch.tan, "sin_n": torch.sin, "cos_n": torch.cos,
        "tan_n": torch.tan, "tanh": torch.tanh, "sigmoid": torch.sigmoid, "erf": torch.erf,
        "erfc": torch.erfc, "sinh": torch.sinh, "cosh": torch.cosh, "atan": torch.atan,
        "asin": torch.asin, "acos": torch.acos, "atan2": torch.atan2,
        # no out= for the activations: they allocate (a page-faulting 64 MB output)
        "gelu": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "silu": F.silu,
        "softplus": F.softplus,
    }
RANGE = {"log": (0, 100), "log2": (0, 100), "log10": (0, 100), "log1p": (-1, 100),
         "asin": (-1, 1), "acos": (-1, 1), "exp": (-80, 80), "exp2": (-120, 120),
         "expm1": (-10, 80), "sinh": (-80, 80), "cosh": (-80, 80), "erfc": (-4, 9),
         "sigmoid": (-30, 30), "gelu": (-8, 8), "gelu_tanh": (-8, 8), "silu": (-30, 30),
         "softplus": (-30, 30)}
NAMES = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "sin_n", "cos",
         "cos_n", "tan", "tan_n", "tanh", "sigmoid", "erf", "erfc", "sinh", "cosh", "atan",
         "asin", "acos", "atan2", "gelu", "gelu_tanh", "silu", "softplus"]
OUT_OK = {"gelu", "gelu_tanh", "silu", "softplus"}   # torch functions without out=


def best_of(fns, rounds):
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, f in enumerate(fns):
            t = time.perf_counter()
            f()
            best[i] = min(best[i], time.perf_counter() - t)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*", default=NAMES)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("-n", type=int, default=None)
    args = ap.parse_args()
    n = args.n or (1 << 20 if args.quick else 1 << 24)
    rounds = 2 if args.quick else 5
    rng = np.random.default_rng(0)
    nthreads = torch.get_num_threads() if torch is not None else 0
    print(f"{n} float32 elements, best of {rounds} rounds; ns/element "
          f"(torch: {nthreads} threads, and 1 thread)")
    print(f"{'function':10s} {'tensorlib':>9s} {'numpy':>8s} {'ratio':>6s} {'torch':>8s} {'ratio':>6s}"
          f" {'torch1':>8s} {'ratio':>6s}")
    for name in args.names:
        lo, hi = RANGE.get(name, (-10, 10))
        x = rng.uniform(lo, hi, n).astype(np.float32)
        y = rng.uniform(-10, 10, n).astype(np.float32)
        o = np.empty_like(x)
        if name == "atan2":
            fns = [lambda: _math_eval("atan2", x, y, out=o)]
        else:
            fns = [lambda: _math_eval(name, x, out=o)]
        cols = ["tensorlib"]
        if name in NP:
            f = NP[name]
            fns.append((lambda: f(x, y, out=o)) if name == "atan2" else (lambda: f(x, out=o)))
            cols.append("numpy")
        if name in TORCH:
            tf, tx, ty, to = TORCH[name], torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(o)
            if name in OUT_OK:
                call = lambda: tf(tx)                                  # noqa: E731
            elif name == "atan2":
                call = lambda: tf(tx, ty, out=to)                      # noqa: E731
            else:
                call = lambda: tf(tx, out=to)                          # noqa: E731

            def one_thread(call=call):
                torch.set_num_threads(1)
                try:
                    call()
                finally:
                    torch.set_num_threads(nthreads)
            fns += [call, one_thread]
            cols += ["torch", "torch1"]
        t = dict(zip(cols, best_of(fns, rounds)))
        ns = {k: v * 1e9 / n for k, v in t.items()}
        line = f"{name:10s} {ns['tensorlib']:9.2f}"
        for col in ("numpy", "torch", "torch1"):
            if col in ns:
                line += f" {ns[col]:8.2f} {ns['tensorlib'] / ns[col]:6.2f}"
            else:
                line += f" {'-':>8s} {'-':>6s}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
