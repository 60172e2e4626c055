"""Fit float32 tanh's table of pieces (tl__tanhf_tab in tensorlib/_core/cpu/cpu_math.h; dev
tool, not shipped).

The same scheme as erf's (tools/fit_erf32.py says it whole): [1/16, 16) cut into 32 pieces,
four to an octave, by the exponent and top two mantissa bits of |x| (clamped to 9.02: tanh
rounds to 1 from 9.011 on); on each, with m its middle and t = |x| - m exact,

    tanh(m + t) = (C0h + d0h t) + (C0l + t (d0l + c1 t + ... + cD t^D)),

C0h + C0l = tanh(m), d0h + d0l = tanh'(m) = 1 - tanh(m)^2 as two floats each, c1..cD
(D = DEGREE) near-minimax in the relative error. tl_tanhf carries the slope d0h + c1 t as
two floats as well (emulate(..., two_float_slope=True)). Row k of the table holds one coefficient
of the 32 pieces in the slot (bits(|x|) >> 21) mod 32. Below 1/16: tanh(a) = a + a z Q(z),
z = a^2, Q of degree 2 (printed too).

    python tools/fit_tanh32.py         # prints the table and the emulated max ulp error
"""
import math
import sys

import mpmath as mp
import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from fit_cpu_math import lawson  # noqa: E402
from fit_erf32 import (bits, emulate, f32, fit_piece, fma32, pieces,  # noqa: E402
                       print_rows, ulps)
from math_tables import hexf  # noqa: E402

DEGREE = 6
OCTAVES = range(-4, 4)
CLAMP = 9.02


def tanh_d(m):
    return 1 / mp.cosh(mp.mpf(m)) ** 2


def table(degree=DEGREE, verbose=True):
    rows = [[0.0] * 32 for _ in range(degree + 4)]
    worst = 0.0
    for slot, lo, hi, m in pieces(OCTAVES, 32):
        if lo >= 16:
            continue
        c0h, c0l, coeffs, err = fit_piece(lo, min(hi, CLAMP * 1.01), m, degree, n=800,
                                          f=mp.tanh, df=tanh_d, ref=np.tanh)
        if lo > CLAMP:                      # never picked: |x| is clamped below
            c0h, c0l, coeffs, err = 1.0, 0.0, [0.0] * (degree + 2), 0.0
        worst = max(worst, err)
        for k, v in enumerate([c0h, c0l] + coeffs):
            rows[k][slot] = v
        if verbose:
            print(f"/* [{lo:g}, {hi:g}): slot {slot}, fit 2^{math.log2(err or 1e-300):.1f} */",
                  file=sys.stderr)
    return rows, worst


def fit_small(degree=2):
    """Q(z) for tanh(a) = a + a z Q(z), z = a^2, a < 1/16."""
    a = np.linspace(0, 1 / 16, 2001)[1:]
    z = a * a
    g = np.array([float((mp.tanh(mp.mpf(float(v))) / mp.mpf(float(v)) - 1) / mp.mpf(float(v))**2)
                  for v in a])
    wt = a * z / np.tanh(a)
    B = np.stack([z ** p for p in range(degree + 1)], axis=1)
    coeffs, resid = [], g.copy()
    for p in range(degree + 1):
        cp = f32(lawson(B[:, p:], resid, wt, iters=200)[0])
        coeffs.append(cp)
        resid = resid - cp * B[:, p]
    return coeffs, float(np.max(np.abs(wt * resid)))


def emulate_small(a, q):
    z = a * a
    p = np.float32(q[-1])
    for c in q[-2::-1]:
        p = fma32(p, z, np.float32(c))
    return fma32(a, z * p, a)


def main():
    rows, worst = table()
    x = np.arange(bits(1 / 16), bits(CLAMP), dtype=np.uint32).view(np.float32)
    err = ulps(emulate(x, rows, 32, two_float_slope=True), x, np.tanh)
    print(f"degree {DEGREE}: worst fit 2^{math.log2(worst):.1f}; emulated max error "
          f"{err.max():.4f} ulp at {x[err.argmax()]!r}", file=sys.stderr)
    q, err_s = fit_small()
    x = np.arange(bits(2.0**-12), bits(1 / 16), dtype=np.uint32).view(np.float32)
    err = ulps(emulate_small(x, q), x, np.tanh)
    print(f"below 1/16: fit 2^{math.log2(err_s):.1f}; emulated max error {err.max():.4f} ulp "
          f"at {x[err.argmax()]!r}", file=sys.stderr)
    print("Q: " + ", ".join(hexf(v) for v in q))
    print_rows("tl__tanhf_tab", "tanh", rows)


if __name__ == "__main__":
    main()
