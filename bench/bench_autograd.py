"""Autograd speed, side by side with torch in one process (ratios tensorlib / torch).

- forward + backward of a tiny graph (4x4 matmul, tanh, mul, add, sum): goal <= 0.7x torch
- backward of a chain of N ops, per node, for several N: goal <= 1.0x torch and flat in N

Run: python bench/bench_autograd.py
"""
import os
import timeit

import tensorlib

try:
    import torch
except ImportError:          # pragma: no cover
    torch = None


def best(fn, number, rounds=15):
    return min(timeit.repeat(fn, number=number, repeat=rounds)) / number


def tiny(lib):
    x = lib.rand(4, 4, requires_grad=True)
    w = lib.rand(4, 4, requires_grad=True)
    b = lib.rand(4, requires_grad=True)
    matmul = getattr(lib, "matmul", None)

    def step():
        h = matmul(x, w) if matmul is not None else x * w
        loss = ((h.tanh() * 2) + b).sum()
        loss.backward()
    return step


def chain_backward(lib, n, rounds=5):
    x = lib.rand(16, requires_grad=True)
    g = lib.ones(16)
    times = []
    for _ in range(rounds):
        y = x
        for _ in range(n):
            y = y * 1.0001
        t0 = timeit.default_timer()
        y.backward(g)
        times.append(timeit.default_timer() - t0)
    return min(times) / n


def main():
    print(f"tensorlib from {os.path.dirname(tensorlib.__file__)}")
    print(f"{'case':44s} {'tensorlib':>12s} {'torch':>12s} {'ratio':>7s}")
    libs = [tensorlib] + ([torch] if torch is not None else [])
    res = [best(tiny(lib), 500) for lib in libs]
    ratio = f"{res[0] / res[1]:7.2f}" if len(res) > 1 else "      -"
    print(f"{'tiny graph fwd+bwd (us)':44s} {res[0]*1e6:12.1f} {res[1]*1e6 if len(res) > 1 else float('nan'):12.1f} {ratio}")
    for n in (100, 1000, 10000):
        res = [chain_backward(lib, n) for lib in libs]
        ratio = f"{res[0] / res[1]:7.2f}" if len(res) > 1 else "      -"
        print(f"{f'chain of {n} ops: backward per node (us)':44s} {res[0]*1e6:12.2f} "
              f"{res[1]*1e6 if len(res) > 1 else float('nan'):12.2f} {ratio}")


if __name__ == "__main__":
    main()
