"""Fit the polynomial coefficients used in tensorlib/_core/cpu/cpu_math.h (dev tool, not shipped).

Each kernel approximates a smooth function on a small interval by a polynomial in a chosen
variable. We fit near-minimax coefficients with Lawson's algorithm (iteratively reweighted
least squares, which converges to the minimax solution) in float64, then round the
coefficients to the working precision one at a time from the lowest degree up, refitting the
remaining ones after each rounding so later coefficients absorb the rounding error.

    python tools/fit_cpu_math.py            # prints every fit with its max relative error
"""
import math

import numpy as np
from scipy import special


def lawson(B, t, wt, iters=400):
    """min over c of max |wt * (t - B @ c)| (B: points x basis)."""
    n = len(t)
    w = np.full(n, 1.0 / n)
    c = None
    for _ in range(iters):
        sw = np.sqrt(w)
        c, *_ = np.linalg.lstsq(B * (sw * wt)[:, None], t * sw * wt, rcond=None)
        e = np.abs(wt * (t - B @ c))
        w = w * (e + 1e-300)
        w /= w.sum()
    return c


def fit(x, target, powers, wt, fixed=(), single=True):
    """Fit target(x) ~ sum c_k x**powers[k] (plus fixed terms already subtracted by the
    caller), rounding coefficients to float32 (single=True) or keeping float64."""
    B = np.stack([x ** p for p in powers], axis=1)
    coeffs = []
    resid = target.copy()
    for k in range(len(powers)):
        c = lawson(B[:, k:], resid, wt)
        ck = float(np.float32(c[0])) if single else float(c[0])
        coeffs.append(ck)
        resid = resid - ck * B[:, k]
    return coeffs, np.max(np.abs(wt * resid))


def grid(a, b, n=4001):
    # Chebyshev-like clustering at the ends plus a uniform part
    k = np.arange(n)
    ch = (a + b) / 2 + (b - a) / 2 * np.cos(np.pi * (k + 0.5) / n)
    return np.unique(np.concatenate([ch, np.linspace(a, b, n)]))


def show(name, coeffs, err, single=True):
    print(f"{name}: max rel err {err:.3g} (2^{math.log2(err):.1f})")
    for c in coeffs:
        print(f"    {float(np.float32(c)).hex() if single else c.hex()}  /* {c!r} */")


def odd(name, f, a, b, n, single=True):
    """f(x) = x + x^3 P(x^2) on [a, b]: fit P (relative error)."""
    x = np.linspace(a, b, 1201)[1:]
    z = x * x
    c, e = fit(z, (f(x) - x) / (x * z), list(range(n)), x * z / np.abs(f(x)), single=single)
    show(f"{name} on [{a:.4g}, {b:.4g}], x + x^3 P(x^2), {n} coefficients", c, e, single)


def main():
    # exp(r) = 1 + r + r^2 Q(r), |r| <= ln2/2 (+ slack): float (tl__exp_core) and double
    # (tl__exp_d, an intermediate for float results)
    r = grid(-0.3466 * 1.001, 0.3466 * 1.001)
    r = r[r != 0]
    c, e = fit(r, (np.expm1(r) - r) / r**2, list(range(5)), r**2 / np.exp(r))
    show("exp: Q(r)", c, e)
    r = grid(-0.3466 * 1.01, 0.3466 * 1.01)
    r = r[r != 0]
    c, e = fit(r, (np.expm1(r) - r) / r**2, list(range(6)), r**2 / np.exp(r), single=False)
    show("exp (double): Q(r)", c, e, single=False)
    # e^r - 1 = r + r^2 Q(r) in double, relative error (tl_tanhf)
    r = grid(-0.3466 * 1.01, 0.3466 * 1.01)
    r = r[np.abs(r) > 1e-6]
    c, e = fit(r, (np.expm1(r) - r) / r**2, list(range(7)), r**2 / np.abs(np.expm1(r)),
               single=False)
    show("expm1 (double): Q(r)", c, e, single=False)
    # expm1(r) = r + r^2/2 + r^3 Q(r)
    r = grid(-0.3466 * 1.001, 0.3466 * 1.001)
    r = r[np.abs(r) > 1e-4]
    c, e = fit(r, (np.expm1(r) - r - r * r / 2) / r**3, list(range(5)),
               np.abs(r**3 / np.expm1(r)))
    show("expm1: Q(r)", c, e)
    # log1p(f) = f - f^2/2 + s (f^2/2 + R), s = f/(2+f), R = z (c0 + c1 z + c2 z^2), z = s^2
    s_ = grid(1e-4, 0.17158 * 1.001)
    z = s_ * s_
    c, e = fit(z, (2 * np.arctanh(s_) - 2 * s_) / (s_ * z), list(range(3)),
               s_ * z / np.log1p(2 * s_ / (1 - s_)))
    show("log: R(z)/z", c, e)
    # sin/cos on |r| <= pi/4: float (tl__sincos_kernel) and double (tl__tan_kernel)
    odd("sin", np.sin, 0, np.pi / 4 * 1.0001, 4)
    odd("sin (double)", np.sin, 0, np.pi / 4, 4, single=False)
    for single, n in ((True, 3), (False, 4)):
        x = np.linspace(0, np.pi / 4 * (1.0001 if single else 1.0), 1201)[1:]
        z = x * x
        c, e = fit(z, (np.cos(x) - 1 + z / 2) / (z * z), list(range(n)), z * z / np.cos(x),
                   single=single)
        show(f"cos{'' if single else ' (double)'}: 1 - z/2 + z^2 C(z)", c, e, single)
    odd("sinh", np.sinh, 0, 1.0, 4)
    odd("atan", np.arctan, 0, 7 / 16 * 1.001, 5)
    odd("asin", np.arcsin, 0, 0.5, 6)
    # erf(x) = x + x Q(x^2) on [0, 1/2]
    x = np.linspace(0, 0.5, 1201)[1:]
    c, e = fit(x * x, special.erf(x) / x - 1, list(range(5)), x / special.erf(x))
    show("erf: Q(x^2)", c, e)
    # erfc(x) = exp(-x^2) P(t) / (x + 3/2), t = (x - 3/2)/(x + 3/2), x in [1/2, 10.1]
    x = np.linspace(0.5, 10.1, 1501)
    g = special.erfcx(x) * (x + 1.5)
    c, e = fit((x - 1.5) / (x + 1.5), g, list(range(11)), 1 / g)
    show("erfc: P(t)", c, e)


if __name__ == "__main__":
    main()
