"""Speed of tensorlib's linear algebra against NumPy and PyTorch (when installed).

Each case runs tensorlib, torch and NumPy in alternating rounds in one process and keeps the
best time of each; ratios below 1 mean tensorlib is faster. Torch runs at its defaults (its
own thread count); NumPy's BLAS at its own. Float products are NumPy's BLAS called with out=
into tensorlib's memory, so the float ratio to NumPy measures tensorlib's overhead around the
same BLAS. Build with -O3 first:

    pip install .                                # or in place: bench/README.md
    python bench/bench_linalg.py [--rounds N] [--only NAME]

Target: 1024x1024 float32 matmul <= 1.05x NumPy (same BLAS); the ratio to torch is
reported. If OPENBLAS_CORETYPE is set (some machines set it for old OpenBLAS builds), NumPy's
BLAS may run a slower kernel than it could: to compare kernels as shipped, unset it (and
OPENBLAS_L2_SIZE) for the bench command only.
"""
import argparse
import os
import time

import numpy as np

import tensorlib

try:
    import torch
except ImportError:       # the bench still compares against NumPy
    torch = None


def cases():
    """(name, target ratio vs NumPy or None, operand shapes, dtype, tensorlib/torch fn, NumPy fn)."""
    mm = lambda m, a, b: m.matmul(a, b)
    return [
        ("matmul 1024x1024 f32", 1.05, [(1024, 1024), (1024, 1024)], "float32", mm, lambda a, b: a @ b),
        ("matmul 1024x1024 f32, a.t()", None, [(1024, 1024), (1024, 1024)], "float32",
         lambda m, a, b: m.matmul(a.t(), b), lambda a, b: a.T @ b),
        ("matmul 1024x1024 f64", None, [(1024, 1024), (1024, 1024)], "float64", mm, lambda a, b: a @ b),
        ("matmul 4x4 f32 (dispatch overhead)", None, [(4, 4), (4, 4)], "float32", mm, lambda a, b: a @ b),
        ("matmul 32x32 f32", None, [(32, 32), (32, 32)], "float32", mm, lambda a, b: a @ b),
        ("bmm (64,128,128) f32", None, [(64, 128, 128), (64, 128, 128)], "float32",
         lambda m, a, b: m.bmm(a, b), lambda a, b: a @ b),
        ("matmul (64,128,128) @ (128,128) f32", None, [(64, 128, 128), (128, 128)], "float32", mm,
         lambda a, b: a @ b),
        ("mv 4096x4096 f32", None, [(4096, 4096), (4096,)], "float32", lambda m, a, b: m.mv(a, b),
         lambda a, b: a @ b),
        ("einsum bij,bjk->bik (64,128,128) f32", None, [(64, 128, 128), (64, 128, 128)], "float32",
         lambda m, a, b: m.einsum("bij,bjk->bik", a, b), lambda a, b: np.einsum("bij,bjk->bik", a, b, optimize=True)),
        ("tensordot (64,128,32),(128,32,64) dims=2 f32", None, [(64, 128, 32), (128, 32, 64)], "float32",
         lambda m, a, b: m.tensordot(a, b, 2), lambda a, b: np.tensordot(a, b, 2)),
        ("addmm 1024x1024 f32", None, [(1024, 1024), (1024, 1024)], "float32",
         lambda m, a, b: m.addmm(a, a, b, beta=0.5, alpha=2.0), lambda a, b: 0.5 * a + 2.0 * (a @ b)),
        ("matmul 256x256 int64 (own loop)", None, [(256, 256), (256, 256)], "int64", mm, lambda a, b: a @ b),
        ("matmul 256x256 int32 (own loop)", None, [(256, 256), (256, 256)], "int32", mm, lambda a, b: a @ b),
    ]


def best_of(fn, rounds_left, results, key):
    """Time one round: enough calls to last ~20 ms (at least one); keep the best per call."""
    n, t = 1, 0.0
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t = time.perf_counter() - t0
        if t >= 0.02 or n >= 1 << 16:
            break
        n *= 4 if t < 0.002 else 2
    results[key] = min(results.get(key, float("inf")), t / n)


def fmt(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.2f} us"
    return f"{seconds * 1e3:8.2f} ms"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default=None, help="run cases whose name contains this text")
    args = ap.parse_args()
    print(f"tensorlib threads: {tensorlib.get_num_threads()}; "
          f"torch: {torch.__version__ + ', threads ' + str(torch.get_num_threads()) if torch else 'not installed'}; "
          f"numpy {np.__version__}")
    if os.environ.get("OPENBLAS_CORETYPE"):
        print(f"note: OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']} is set (NumPy's BLAS kernel choice)")
    rng = np.random.default_rng(0)
    missed = []
    header = f"{'case':48s} {'tensorlib':>11s} {'numpy':>11s} {'torch':>11s} {'tl/np':>7s} {'tl/torch':>8s}"
    print(header)
    print("-" * len(header))
    for name, target, shapes, dtype, fn, np_fn in cases():
        if args.only and args.only not in name:
            continue
        if dtype.startswith("int"):
            arrays = [rng.integers(-100, 100, size=s).astype(dtype) for s in shapes]
        else:
            arrays = [rng.uniform(-1, 1, size=s).astype(dtype) for s in shapes]
        tl_args = [tensorlib.tensor(a) for a in arrays]
        th_args = [torch.tensor(a) for a in arrays] if torch else None
        res = {}
        for _ in range(args.rounds):
            # a pause after each library lets its spinning worker threads (OpenMP, OpenBLAS)
            # park, so they do not steal the cores from the next library's round
            best_of(lambda: fn(tensorlib, *tl_args), args.rounds, res, "tl")
            time.sleep(0.05)
            if torch:
                best_of(lambda: fn(torch, *th_args), args.rounds, res, "torch")
                time.sleep(0.05)
            best_of(lambda: np_fn(*arrays), args.rounds, res, "np")
            time.sleep(0.05)
        r_np = res["tl"] / res["np"]
        r_th = res["tl"] / res["torch"] if torch else float("nan")
        print(f"{name:48s} {fmt(res['tl'])} {fmt(res['np'])} "
              f"{fmt(res['torch']) if torch else '         -'} {r_np:7.2f} {r_th:8.2f}"
              + (f"   (target <= {target}x NumPy)" if target else ""))
        if target is not None and r_np > target:
            missed.append(f"{name}: {r_np:.2f}x NumPy > {target}x")
    print("targets missed: " + ("; ".join(missed) if missed else "none"))


if __name__ == "__main__":
    main()
