"""Fit the float64 erf table of tensorlib/_core/cpu/cpu_math.h (tl__erf_tab; dev tool).

    python3 tools/fit_erf64_poly.py          # prints the C table and each fit's error
    python3 tools/fit_erf64_poly.py --check  # the error of the table now in cpu_math.h

erf(a), a = |x| below 5.9216 (erf rounds to 1 from there on), is cut into 16 pieces by
n = round(a K), K = 64/23 rounded to double, j = max(n - 1, 0):
  j = 0, a in [0, 1.5 W), W = 23/64: erf(a) = a Q(z), z = a^2 in [0, 0.2906], Q fitted
         with relative error (the result keeps relative accuracy down to the subnormals);
  j >= 1, a in [(n - 1/2) W, (n + 1/2) W), n = j + 1: erf(a) = P_j(t), t = a - n W, |t| <=
         W/2 (t is exact: n W has 10 significant bits, and Sterbenz), P_j fitted with
         absolute error (erf >= 0.55 there: one ulp is 2^-53 throughout).
Each is a polynomial of degree DEG; the pieces are widened by 1e-12 each side, since a K is
rounded before n is. Method: least squares on Chebyshev nodes at 50 digits (near-minimax),
then the coefficients are rounded to double from the lowest degree up, the remaining ones
refitted after each rounding so they absorb it. Degrees 0 and 1 are kept as double-double
(hi + lo): the C code adds them with their rounding errors, so only the terms from degree 2
on (< 1/30 of the result) are rounded at full size."""
import os
import re
import sys

import mpmath as mp

from fit_erf64 import lsq, nodes    # (Chebyshev nodes and the weighted least squares)

mp.mp.dps = 50                      # (after that import, which sets its own precision)
DEG = 13
NI = 16
W = mp.mpf(23) / 64
K = float(mp.mpf(64) / 23)
MARGIN = mp.mpf("1e-12")


def Q(z):
    if z == 0:
        return 2 / mp.sqrt(mp.pi)
    x = mp.sqrt(z)
    return mp.erf(x) / x


def piece(j):
    """(function of the polynomial's variable, its interval, weight(variable, value))"""
    if j == 0:
        hi = (1.5 * W + MARGIN) ** 2
        return Q, (mp.mpf(0), hi), (lambda v, y: y)
    c = (j + 1) * W
    return (lambda t: mp.erf(c + t)), (-W / 2 - MARGIN, W / 2 + MARGIN), (lambda v, y: 1)


def fit(j):
    """[(hi, lo)] per degree (lo = 0.0 from degree 2 on)"""
    f, (lo, hi), wf = piece(j)
    ts = nodes(lo, hi, 3 * DEG + 12)
    ys = [f(t) for t in ts]
    ws = [1 / wf(t, y) for t, y in zip(ts, ys)]
    fixed, out = [], []
    for k in range(DEG + 1):
        resid = [y - sum(c * t ** i for i, c in enumerate(fixed)) for t, y in zip(ts, ys)]
        c = lsq(ts, resid, ws, list(range(k, DEG + 1)))[0]
        h = float(c)
        l = float(c - h) if k < 2 else 0.0
        out.append((h, l))
        fixed.append(mp.mpf(h) + mp.mpf(l))
    return out


def error(j, coefs):
    """log2 of the max fitted error (relative to erf(x)/x for j = 0, absolute above)"""
    f, (lo, hi), wf = piece(j)
    cs = [mp.mpf(h) + mp.mpf(l) for h, l in coefs]
    pts = [lo + (hi - lo) * i / 1000 for i in range(1001)]
    e = max(abs((mp.polyval(cs[::-1], t) - f(t)) / wf(t, f(t))) for t in pts)
    return float(mp.log(e, 2)) if e else -float("inf")


def table_rows(cols):
    """rows of tl__erf_tab: hi 0, lo 0, hi 1, lo 1, then degrees 2..DEG; one column per piece"""
    rows = [[c[0][0] for c in cols], [c[0][1] for c in cols],
            [c[1][0] for c in cols], [c[1][1] for c in cols]]
    rows += [[c[k][0] for c in cols] for k in range(2, DEG + 1)]
    return rows


def emit(rows):
    names = ["0, hi", "0, lo", "1, hi", "1, lo"] + [str(k) for k in range(2, DEG + 1)]
    out = []
    for name, row in zip(names, rows):
        vals = [v.hex() if v else "0.0" for v in row]
        out.append(f"    {{/* degree {name} */")
        for i in range(0, NI, 4):
            out.append(f"    {', '.join(vals[i:i + 4])}{'},' if i + 4 >= NI else ','}")
    return "\n".join(out)


def read_table(path=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tensorlib",
                                  "_core", "cpu", "cpu_math.h")):
    """tl__erf_tab as written in cpu_math.h: cols[j][k] = (hi, lo)"""
    src = open(path).read()
    body = src[src.index("tl__erf_tab[16][16] = ") :]
    body = body[body.index("{") + 1 : body.index("};")]
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    rows = [[float.fromhex(v.strip()) if "0x" in v else float(v) for v in r.split(",") if v.strip()]
            for r in re.findall(r"\{([^{}]*)\}", body)]
    cols = []
    for j in range(NI):
        col = [(rows[0][j], rows[1][j]), (rows[2][j], rows[3][j])]
        col += [(rows[k][j], 0.0) for k in range(4, len(rows))]
        cols.append(col)
    return cols


def main():
    if "--check" in sys.argv:
        for j, col in enumerate(read_table()):
            print(f"cpu_math.h piece {j}: error 2^{error(j, col):.1f}")
        return
    cols = []
    for j in range(NI):
        c = fit(j)
        what = "z = x^2 in [0, 0.2906], relative" if j == 0 else \
            f"t = a - {float((j + 1) * W)} in [-W/2, W/2], absolute"
        print(f"piece {j}: degree {DEG} in {what}: error 2^{error(j, c):.1f}")
        cols.append(c)
    print(f"K = {K.hex()}, W = {float(W).hex()}")
    print(emit(table_rows(cols)))


if __name__ == "__main__":
    main()
