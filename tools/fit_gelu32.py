"""Coefficients of float32 gelu's polynomial (tl_geluf in tensorlib/_core/cpu/cpu_math.h;
dev tool, not shipped).

With a = |x| in [0, 14.6] and u = a / (a + C) in [0, 14.6 / (14.6 + C)],
a Phi(-a) = e^(-a^2/2) u Q(u), Q(u) = (a + C) e^(a^2/2) Phi(-a)
(= (a + C) erfc(a/sqrt2) e^(a^2/2) / 2: 0.5 C at u = 0, near 1/sqrt(2 pi) as u -> 1).
Q is fitted as a polynomial in u - U0 for relative error (Lawson's iteration,
tools/fit_cpu_math.py, values from mpmath), coefficients rounded to float32 from the lowest
degree up; the float32 Horner evaluation (fused multiply-adds emulated in float64) is then
measured on a dense grid. The degree-9 error dips near C = 3.25 (2^-26.5; 2^-25.5 at C = 3,
2^-24.8 at 3.5 after rounding); the shift U0 = 0.45 keeps the Horner sums small.

    python3 tools/fit_gelu32.py [C] [DEGREE] [U0]   # defaults: the kernel's 3.25, 9, 0.45
    python3 tools/fit_gelu32.py scan [DEGREE]       # error against C
"""
import os
import sys

import mpmath as mp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_cpu_math import fit, grid  # noqa: E402

mp.mp.dps = 30
AMAX = 14.6


def Q(u, c):
    a = c * mp.mpf(u) / (1 - mp.mpf(u))
    return float((a + c) * mp.erfc(a / mp.sqrt(2)) / 2 * mp.exp(a * a / 2))


def horner32(coef, u):
    u = u.astype(np.float32).astype(np.float64)
    p = np.full_like(u, coef[-1])
    for k in coef[-2::-1]:
        p = (p * u + k).astype(np.float32).astype(np.float64)
    return p


def run(c, deg, u0=0.45, quiet=False):
    umax = AMAX / (AMAX + c)
    u0 = float(np.float32(u0))
    u = grid(0.0, umax, 600)
    f = np.array([Q(v, c) for v in u])
    coef, err = fit(u - u0, f, list(range(deg + 1)), 1 / f)
    ud = np.linspace(0.0, umax, 8001).astype(np.float32).astype(np.float64)
    fd = np.array([Q(v, c) for v in ud])
    e32 = np.abs(horner32(coef, (ud - u0).astype(np.float32).astype(np.float64)) - fd) / fd
    if not quiet:
        print(f"C = {c}, U0 = {u0!r}, degree {deg}: fitted relative error 2^{np.log2(err):.2f}, "
              f"float32 Horner 2^{np.log2(e32.max()):.2f}")
        for k in coef[::-1]:
            print(f"    {float(np.float32(k)).hex()}")
    return err, e32.max()


def exp_half():
    """P(r) = (e^(r/2) - 1) / r on |r| <= 0.7, degree 5, relative error"""
    r = grid(-0.7, 0.7, 2000)
    f = np.expm1(r / 2) / r
    coef, err = fit(r, f, list(range(6)), 1 / f)
    print(f"(e^(r/2) - 1) / r, degree 5: relative error 2^{np.log2(err):.2f}")
    for k in coef[::-1]:
        print(f"    {float(np.float32(k)).hex()}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "scan":
        for c in np.arange(2.5, 5.01, 0.25):
            err, e32 = run(c, int(sys.argv[2]) if len(sys.argv) > 2 else 9, quiet=True)
            print(f"C = {c:.2f}: fitted 2^{np.log2(err):.2f}, float32 Horner 2^{np.log2(e32):.2f}")
    else:
        run(float(sys.argv[1]) if len(sys.argv) > 1 else 3.25,
            int(sys.argv[2]) if len(sys.argv) > 2 else 9,
            float(sys.argv[3]) if len(sys.argv) > 3 else 0.45)
        exp_half()
