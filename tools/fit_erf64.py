"""Fit the float64 erfc / gelu coefficients of tensorlib/_core/cpu/cpu_math.h (dev tool; erf
has its own table of piecewise polynomials, from tools/fit_erf64_poly.py).

    python3 tools/fit_erf64.py        # prints tl__erfc_tab's rows and each fit's error

Functions fitted (mpmath at 60 digits):
  Q(z) = erf(x)/x - 1, z = x^2 in [0, 0.84^2]                 (tl__erf_small: erf = x + x Q)
  R(a) = e^(a^2) erfc(a) in t = a - m on [0.5, 1.2), [1.2, 2.3), [2.3, 4), m = 0.85, 1.75, 3.15
  G(u) = a R(a), u = 1/a^2 in [0, 1/16]  (a >= 4: R = G / a)  (tl__erfc_core)
Method: Chebyshev interpolation at high precision (near-minimax), converted to monomials;
then the coefficients are rounded to double from the lowest degree up, the remaining ones
refitted (least squares on Chebyshev nodes, relative error) after each rounding so they
absorb it. The two lowest coefficients of each are kept as double-double (hi + lo)."""
import mpmath as mp

mp.mp.dps = 60
DEG = 18          # R and G
DEG_Q = 12        # Q


def R(a):
    return mp.exp(a * a) * mp.erfc(a)


def G(u):
    return mp.mpf(1) / mp.sqrt(mp.pi) if u == 0 else R(1 / mp.sqrt(u)) / mp.sqrt(u)


def Q(z):
    if z == 0:
        return 2 / mp.sqrt(mp.pi) - 1
    x = mp.sqrt(z)
    return mp.erf(x) / x - 1


def nodes(lo, hi, n):
    return [(lo + hi) / 2 + (hi - lo) / 2 * mp.cos(mp.pi * (k + mp.mpf(0.5)) / n) for k in range(n)]


def lsq(ts, ys, ws, powers):
    A = mp.matrix([[w * t ** p for p in powers] for t, w in zip(ts, ws)])
    b = mp.matrix([w * y for y, w in zip(ys, ws)])
    return list(mp.qr_solve(A, b)[0])


def to_double(c):
    return float(c)


def fit(f, lo, hi, deg, dd=2, rel=lambda t, y: y):
    """f in t on [lo, hi]: returns [(hi, lo)...] (lo = 0.0 above the dd lowest) and the
    max relative error of the rounded polynomial (against rel(t, f(t)))."""
    lo, hi = mp.mpf(lo), mp.mpf(hi)
    ts = nodes(lo, hi, 4 * deg + 8)
    ys = [f(t) for t in ts]
    ws = [1 / abs(rel(t, y)) for t, y in zip(ts, ys)]
    out = []
    fixed = []
    for k in range(deg + 1):
        resid = [y - sum(c * t ** j for j, c in enumerate(fixed)) for t, y in zip(ts, ys)]
        c = lsq(ts, resid, ws, list(range(k, deg + 1)))[0]
        h = to_double(c)
        l = to_double(c - h) if k < dd else 0.0
        out.append((h, l))
        fixed.append(mp.mpf(h) + mp.mpf(l))
    chk = [lo + (hi - lo) * j / 2000 for j in range(2001)]
    err = max(abs((sum(c * t ** j for j, c in enumerate(fixed)) - f(t)) / rel(t, f(t))) for t in chk)
    return out, float(mp.log(err, 2))


def main():
    q, e = fit(Q, 0, mp.mpf(0.84) ** 2, DEG_Q, rel=lambda z, y: 1 + y)
    print(f"Q (z in [0, 0.7056], degree {DEG_Q}): error 2^{e:.1f} relative to erf(x)/x")
    print("   ", ", ".join(h.hex() for h, _ in q))
    print("    lo parts of degrees 0 and 1:", q[0][1].hex(), q[1][1].hex())
    ivs = [(0.5, 1.2, 0.85), (1.2, 2.3, 1.75), (2.3, 4.0, 3.15)]
    cols = []
    for lo, hi, m in ivs:
        m = mp.mpf(m)
        c, e = fit(lambda t: R(t + m), mp.mpf(lo) - m, mp.mpf(hi) - m, DEG)
        print(f"R on [{lo}, {hi}) in t = a - {float(m)}, degree {DEG}: error 2^{e:.1f}")
        cols.append(c)
    c, e = fit(G, 0, mp.mpf(1) / 16, DEG)
    print(f"G on u in [0, 1/16] (a >= 4), degree {DEG}: error 2^{e:.1f}")
    cols.append(c)
    print("tl__erfc_tab rows 1-21 (row 0 holds the centres m, and 0 for G):")
    row = lambda vals: "    {" + ", ".join(v.hex() for v in vals) + "},"
    for k in range(DEG, 1, -1):
        print(row(col[k][0] for col in cols))
    for k in (1, 0):
        print(row(col[k][0] for col in cols))
    for k in (1, 0):
        print(row(col[k][1] for col in cols))


if __name__ == "__main__":
    main()
