"""Fit float32 erf's table of pieces (tl__erff_tab in tensorlib/_core/cpu/cpu_math.h; dev
tool, not shipped).

tl_erff cuts [1/4, 4) into 16 pieces, four to an octave, by the exponent and the top two
mantissa bits of |x|: piece [2^e (1 + q/4), 2^e (1 + (q+1)/4)), e in -2..1, q in 0..3. On
it, with m its middle (the same bits and the next one set, so t = |x| - m is exact,
|t| <= 2^e/8):

    erf(m + t) = (C0h + c0h t) + (C0l + t (c0l + c1 t + ... + cD t^D))

C0h + C0l is erf(m) and c0h + c0l erf'(m) as two floats each; c1..cD (D = DEGREE) are
near-minimax in the relative error of erf, fitted by Lawson's algorithm, rounded to float
from the lowest degree up and the rest refitted. The first sum is formed exactly as a
float and its rounding error (two fused multiply-adds), so the result is rounded about once.
Row k of the table is one column over the 16 pieces, stored in the slot a permute picks:
(bits(|x|) >> 21) mod 16.

Below 1/4: erf(a) = a Ch + a (Cl + z Q(z)), z = a^2, Ch + Cl = 2/sqrt(pi) as two floats, Q
of degree 3 (printed too).

    python tools/fit_erf32.py          # prints the table and the emulated max ulp error
"""
import math
import struct
import sys

import mpmath as mp
import numpy as np
from scipy import special

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from fit_cpu_math import lawson  # noqa: E402
from math_tables import hexf  # noqa: E402

DEGREE = 5
mp.mp.dps = 40


def f32(v):
    return float(np.float32(v))


def bits(v):
    return struct.unpack("I", struct.pack("f", v))[0]


def erf_d(m):
    return 2 / mp.sqrt(mp.pi) * mp.exp(-mp.mpf(m) ** 2)


def pieces(octaves=range(-2, 2), slots=16):
    """(slot, lo, hi, m) of each piece: four to each octave [2^e, 2^(e+1))."""
    out = []
    for e in octaves:
        for q in range(4):
            lo = 2.0**e * (1 + q / 4)
            hi = 2.0**e * (1 + (q + 1) / 4)
            m = 2.0**e * (1 + q / 4 + 1 / 8)
            out.append(((bits(lo) >> 21) % slots, lo, hi, m))
    return out


def fit_piece(lo, hi, m, degree=DEGREE, n=1500, f=mp.erf, df=erf_d, ref=special.erf):
    """f(m + t) = (C0h + d0h t) + (C0l + t (d0l + c1 t + ...)) on [lo, hi): C0h, C0l, the
    coefficients [d0h, d0l, c1, ...] and the max relative error of the fit."""
    c0 = f(m)
    c0h = f32(c0)
    c0l = f32(c0 - c0h)
    k = np.arange(n)
    t = np.unique(np.concatenate([
        (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (k + 0.5) / n) - m,
        np.linspace(lo - m, hi - m, n)]))
    t = t[t != 0]
    g = np.array([float(f(mp.mpf(m) + mp.mpf(float(ti))) - c0h - c0l) for ti in t])
    d0 = df(m)
    d0h = f32(d0)
    d0l = f32(d0 - d0h)
    g = g - (d0h + d0l) * t                          # exact enough: |t d0| < 2^-3
    wt = 1 / ref(m + t)
    B = np.stack([t ** (p + 2) for p in range(degree)], axis=1)
    coeffs, resid = [d0h, d0l], g.copy()
    for p in range(degree):
        c = lawson(B[:, p:], resid, wt, iters=200)
        cp = f32(c[0])
        coeffs.append(cp)
        resid = resid - cp * B[:, p]
    return c0h, c0l, coeffs, float(np.max(np.abs(wt * resid)))


def fit_small(degree=3):
    """Ch, Cl and Q(z) for erf(a) = a Ch + a (Cl + z Q(z)), z = a^2, a < 1/4."""
    c = 2 / mp.sqrt(mp.pi)
    ch = f32(c)
    cl = f32(c - ch)
    a = np.linspace(0, 0.25, 2001)[1:]
    z = a * a
    g = np.array([float(mp.erf(mp.mpf(float(v))) / mp.mpf(float(v)) - ch - cl) for v in a])
    wt = a * z / special.erf(a)
    B = np.stack([z ** (p + 1) for p in range(degree + 1)], axis=1)
    coeffs, resid = [], g.copy()
    for p in range(degree + 1):
        cp = f32(lawson(B[:, p:], resid, wt, iters=200)[0])
        coeffs.append(cp)
        resid = resid - cp * B[:, p]
    return ch, cl, coeffs, float(np.max(np.abs(wt * resid)))


def emulate_small(a, ch, cl, q):
    z = a * a
    p = np.float32(q[-1])
    for c in q[-2::-1]:
        p = fma32(p, z, np.float32(c))
    qq = fma32(z, p, np.float32(cl))
    return fma32(a, np.float32(ch), a * qq)        # |a| >= 2^-12 here: no tiny path


def print_rows(cname, fname, rows):
    """The table as a C array of float rows (f(m) hi, lo; f'(m) hi, lo; then t^2 ...)."""
    names = [f"{fname}(m), hi", f"{fname}(m), lo", "t, hi", "t, lo"] + [
        f"t^{k}" for k in range(2, len(rows) - 2)]
    print(f"static const float {cname}[{len(rows)}][{len(rows[0])}] = {{")
    for name, col in zip(names, rows):
        print(f"    {{   /* {name} */")
        for i in range(0, len(col), 4):
            print("        " + ", ".join(hexf(v) for v in col[i:i + 4]) + ",")
        print("    },")
    print("};")


def fma32(a, b, c):
    return (a.astype(np.float64) * b + c).astype(np.float32)


def emulate(x, table, slots=16, two_float_slope=False):
    """The piece path on float32 x within the pieces, in numpy (float64 for each fused
    multiply-add before its rounding to float32: a double rounding that may differ in rare
    last bits from the C code). two_float_slope: tanh's form, which also carries the
    slope d0h + c1 t as two floats (tl_tanhf); otherwise erf's (tl_erff)."""
    u = x.view(np.uint32)
    slot = (u >> 21) % slots
    m = ((u & 0xFFE00000) | 0x00100000).view(np.float32)
    t = x - m
    row = [np.asarray(r, np.float32)[slot] for r in table]
    first = 5 if two_float_slope else 3             # the last row Horner folds in
    p = row[-1]
    for k in range(len(table) - 2, first - 1, -1):
        p = fma32(p, t, row[k])
    if two_float_slope:
        dh = fma32(row[4], t, row[2])               # d0h + c1 t
        dl = fma32(row[4], t, row[2] - dh)
        hi = fma32(t, dh, row[0])
        lo = fma32(t, dh, row[0] - hi)
        inner = fma32(t, t * p, row[3] + dl)        # d0l + dl + t^2 (c2 + ...)
        return hi + fma32(t, inner, lo + row[1])
    hi = fma32(t, row[2], row[0])
    lo = fma32(t, row[2], row[0] - hi)
    return hi + (lo + fma32(t, p, row[1]))


def ulps(got, x, fn=special.erf):
    ref = fn(x.astype(np.float64))
    e = np.floor(np.log2(ref))
    return np.abs(got - ref) / 2.0 ** (e - 23)


def main():
    table = [[0.0] * 16 for _ in range(DEGREE + 4)]
    worst = 0.0
    for slot, lo, hi, m in pieces():
        c0h, c0l, coeffs, err = fit_piece(lo, hi, m)
        worst = max(worst, err)
        for k, v in enumerate([c0h, c0l] + coeffs):
            table[k][slot] = v
        print(f"/* [{lo:g}, {hi:g}): slot {slot}, fit 2^{math.log2(err):.1f} */", file=sys.stderr)
    x = np.arange(bits(0.25), bits(4.0), dtype=np.uint32).view(np.float32)
    err = ulps(emulate(x, table), x)
    print(f"degree {DEGREE}: worst fit 2^{math.log2(worst):.1f}; emulated max error "
          f"{err.max():.4f} ulp at {x[err.argmax()]!r}", file=sys.stderr)
    ch, cl, q, err_s = fit_small()
    x = np.arange(bits(2.0**-12), bits(0.25), 3, dtype=np.uint32).view(np.float32)
    err = ulps(emulate_small(x, ch, cl, q), x)
    print(f"below 1/4: fit 2^{math.log2(err_s):.1f}; emulated max error {err.max():.4f} ulp at "
          f"{x[err.argmax()]!r}", file=sys.stderr)
    print(f"#define TL__ERFF_CH {hexf(ch)}\n#define TL__ERFF_CL {hexf(cl)}")
    print("Q: " + ", ".join(hexf(v) for v in q))
    print_rows("tl__erff_tab", "erf", table)


if __name__ == "__main__":
    main()
