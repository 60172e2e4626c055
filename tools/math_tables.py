"""Print the float32 tables of tensorlib/_core/cpu/cpu_math.h (dev tool, not shipped).

exp: tl__expf writes x = (32 k + j) ln2/32 + r, so e^x = 2^k 2^(j/32) e^r; entry j holds
2^(j/32) as hi + lo, hi rounded to float and lo the rest rounded to float. ln2/32 is split
into hi (17 significant bits: k ln2/32 hi has at most 30, and x - that is exact for every
x of exp's range) and lo.

log: tl_logf writes x = 2^k m, m in [OFF, 2 OFF) as bits (OFF = 0x3f315556, m in [0.6927, 1.3854)),
and picks entry i of 32 by the next 5 bits of m. Entry i holds invc = 1/c rounded to float
(c: the middle of the entry's interval; exactly 1 for the interval that holds 1.0, which
OFF centres on it, so log stays relative near 1) and -log(invc) as hi + lo: hi on the
2^-16 grid, so that k ln2_hi + hi is exact in float for every k, and lo the rest rounded
to float (relative error 2^-24 of at most 2^-17).

    python tools/math_tables.py        # needs mpmath
"""
import struct

import mpmath as mp

OFF = 0x3f315556


def f32(v):
    return struct.unpack("f", struct.pack("f", float(v)))[0]


def hexf(v):
    """A float's C literal: 0x1.62e4p-1f."""
    m, e = float(v).hex().split("p")
    return f"{m.rstrip('0').rstrip('.') if '.' in m else m}p{e}f"


def from_bits(u):
    return struct.unpack("f", struct.pack("I", u))[0]


def print_table(name, columns):
    """A C array of float columns, [len(columns)][32], four values to a line."""
    print(f"static const float {name}[{len(columns)}][32] = {{")
    for title, col in columns:
        vals = [hexf(v) for v in col]
        print(f"    {{   /* {title} */")
        for j in range(0, len(vals), 4):
            print("        " + ", ".join(vals[j:j + 4]) + ",")
        print("    },")
    print("};")


def exp_table():
    hi, lo = [], []
    for j in range(32):
        t = mp.power(2, mp.mpf(j) / 32)
        hi.append(f32(t))
        lo.append(f32(t - mp.mpf(f32(t))))
    print_table("tl__expf_tab", [("2^(j/32), hi", hi), ("2^(j/32), lo", lo)])
    step = mp.log(2) / 32
    e = int(mp.floor(mp.log(step, 2)))
    step_hi = mp.nint(step * 2**(16 - e)) / 2**(16 - e)
    print(f"#define TL__LN2_32_HI {hexf(step_hi)}")
    print(f"#define TL__LN2_32_LO {hexf(f32(step - step_hi))}")
    print(f"#define TL__INV_LN2_32 {hexf(f32(1 / step))}")


def log_table():
    invc, hi, lo = [], [], []
    for i in range(32):
        a, b = from_bits(OFF + (i << 18)), from_bits(OFF + ((i + 1) << 18))
        c = mp.mpf(1) if a <= 1.0 < b else (mp.mpf(a) + mp.mpf(b)) / 2
        iv = f32(1 / c)
        lc = -mp.log(mp.mpf(iv))
        h = mp.nint(lc * 2**16) / 2**16
        invc.append(iv)
        hi.append(float(h))
        lo.append(f32(lc - h))
        r = max(abs(mp.mpf(a) * iv - 1), abs(mp.mpf(b) * iv - 1))
        print(f"/* {i:2d}: m in [{a:.6f}, {b:.6f}), |r| <= {float(r):.5f} */")
    ln2 = mp.log(2)
    ln2_hi = mp.nint(ln2 * 2**16) / 2**16
    print_table("tl__logf_tab", [("1/c", invc), ("-log(1/c), hi", hi), ("-log(1/c), lo", lo)])
    print(f"#define TL__LN2_HI16 {hexf(ln2_hi)}")
    print(f"#define TL__LN2_LO16 {hexf(f32(ln2 - ln2_hi))}")


def main():
    mp.mp.prec = 200
    exp_table()
    log_table()


if __name__ == "__main__":
    main()
