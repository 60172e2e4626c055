"""Tests for tensorlib._core.random: Philox4x32-10 and the Generator class.

Every statistical check uses a fixed seed, so the suite is deterministic; the
tolerances are ~5 standard errors wide.
"""
import glob
import importlib
import importlib.util
import math
import os
import struct
import threading

import numpy as np
import pytest


def _load_random_module():
    """Import tensorlib._core.random; fall back to loading the built .so directly
    when the tensorlib package itself cannot be imported yet."""
    try:
        return importlib.import_module("tensorlib._core.random")
    except Exception:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    core = os.path.join(os.path.dirname(here), "tensorlib", "_core")
    for so in sorted(glob.glob(os.path.join(core, "random.*.so")) + glob.glob(os.path.join(core, "random.*.pyd"))):
        spec = importlib.util.spec_from_file_location("tensorlib._core.random", so)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    pytest.skip("tensorlib._core.random is not built", allow_module_level=True)


R = _load_random_module()
Generator = R.Generator

U64 = (1 << 64) - 1
EPB = {  # elements per 128-bit block
    "uniform_f32": 4, "uniform_f64": 2, "normal_f32": 4, "normal_f64": 2,
    "int64": 2, "bernoulli": 2, "randperm": 2,
}
ARGS = {
    "uniform_f32": (-2.0, 3.0), "uniform_f64": (-2.0, 3.0),
    "normal_f32": (1.0, 2.0), "normal_f64": (1.0, 2.0),
    "int64": (-7, 1000), "bernoulli": (0.3,), "randperm": (),
}
SPLITTABLE = [k for k in EPB if k != "randperm"]


def fill_at(kind, n, seed, offset, *args):
    return R._fill(kind, n, *(args or ARGS[kind]), seed=seed, offset=offset)


def gfill(kind, n, g, *args):
    return R._fill(kind, n, *(args or ARGS[kind]), generator=g)


def block_words(seed, counter):
    """The 4 output words of the block with 128-bit counter ``counter``."""
    ctr = [(counter >> (32 * i)) & 0xFFFFFFFF for i in range(4)]
    return R._philox_block(ctr, [seed & 0xFFFFFFFF, seed >> 32])


# ---------------------------------------------------------------------------
# Philox known-answer tests (Random123 Philox4x32-10 vectors)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("ctr,key,expected", [
    ([0, 0, 0, 0], [0, 0],
     [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
    ([0xFFFFFFFF] * 4, [0xFFFFFFFF] * 2,
     [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
    ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0],
     [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
])
def test_philox_known_answers(ctr, key, expected):
    assert list(R._philox_block(ctr, key)) == expected


def test_philox_block_argument_validation():
    with pytest.raises(ValueError):
        R._philox_block([0, 0, 0], [0, 0])
    with pytest.raises(ValueError):
        R._philox_block([0, 0, 0, 1 << 32], [0, 0])
    with pytest.raises(ValueError):
        R._philox_block([0, 0, 0, 0], [-1, 0])


# ---------------------------------------------------------------------------
# Fill layout: fills are built from the documented blocks
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("offset", [0, 12345, U64 - 20])  # last one wraps past 2**64
def test_int64_full_range_equals_raw_draws(offset):
    seed = 0x0123456789ABCDEF
    n = 80  # 40 blocks: more than one internal batch
    out = fill_at("int64", n, seed, offset, 0, 0).view(np.uint64)
    for b in range(n // 2):
        w = block_words(seed, (offset + b) & U64)  # counter words 2, 3 are 0
        assert int(out[2 * b]) == w[0] | (w[1] << 32)
        assert int(out[2 * b + 1]) == w[2] | (w[3] << 32)


def test_uniform_f32_uses_top_24_bits_of_each_word():
    seed, offset = 99, 7
    out = fill_at("uniform_f32", 70, seed, offset, 0.0, 1.0)
    for i in range(70):
        w = block_words(seed, offset + i // 4)[i % 4]
        assert out[i] == np.float32((w >> 8) * 2.0 ** -24)


def test_uniform_f64_uses_top_53_bits_of_each_draw():
    seed, offset = 5, 1 << 40
    out = fill_at("uniform_f64", 35, seed, offset, 0.0, 1.0)
    for i in range(35):
        w = block_words(seed, offset + i // 2)
        d = (w[2 * (i % 2)] | (w[2 * (i % 2) + 1] << 32))
        assert out[i] == (d >> 11) * 2.0 ** -53


# ---------------------------------------------------------------------------
# Blocks consumed / offset bookkeeping
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("kind", list(EPB))
@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 31, 32, 33, 64, 65, 1001])
def test_blocks_consumed_and_offset_advance(kind, n):
    assert R.blocks_consumed(kind, n) == -(-n // EPB[kind])
    g = Generator().manual_seed(11)
    g.set_offset(5)
    gfill(kind, n, g)
    assert g.get_offset() == 5 + R.blocks_consumed(kind, n)


def test_blocks_consumed_large_and_unknown():
    n = (1 << 63) - 1
    assert R.blocks_consumed("uniform_f32", n) == (n + 3) // 4
    assert R.blocks_consumed("int64", n) == (n + 1) // 2
    assert R.blocks_consumed("int64", -5) == 0
    with pytest.raises(ValueError):
        R.blocks_consumed("gamma", 3)


# ---------------------------------------------------------------------------
# Reproducibility and split invariance
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("kind", list(EPB))
def test_same_seed_same_stream(kind):
    a = Generator().manual_seed(1234)
    b = Generator().manual_seed(1234)
    for n in (1, 7, 100, 5000):
        np.testing.assert_array_equal(gfill(kind, n, a), gfill(kind, n, b))
    c = Generator().manual_seed(1235)
    x, y = gfill(kind, 5000, a), gfill(kind, 5000, c)
    assert not np.array_equal(x, y)
    # consecutive fills do not repeat
    assert not np.array_equal(gfill(kind, 5000, a), gfill(kind, 5000, a))


@pytest.mark.parametrize("kind", list(EPB))
def test_generator_fill_equals_direct_fill(kind):
    g = Generator().manual_seed(2024)
    gfill(kind, 13, g)  # move the offset
    off = g.get_offset()
    np.testing.assert_array_equal(gfill(kind, 999, g), fill_at(kind, 999, 2024, off))


@pytest.mark.parametrize("kind", SPLITTABLE)
@pytest.mark.parametrize("offset", [0, 3, U64 - 100])
def test_fill_is_split_invariant(kind, offset):
    seed, n, epb = 0xDEADBEEFCAFEF00D, 1003, EPB[kind]
    whole = fill_at(kind, n, seed, offset)
    # cut at several multiples of the elements-per-block count, including cuts
    # that are not on the 16-block internal batch boundary
    cuts = [0, epb, 5 * epb, 64 * epb + epb, 200 * epb, n]
    cuts = sorted(set(c for c in cuts if c <= n))
    parts = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        parts.append(fill_at(kind, b - a, seed, (offset + a // epb) & U64))
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    # every element is a pure function of (seed, offset, i): prefixes agree
    for m in (1, 2, 3, 17, 500):
        np.testing.assert_array_equal(fill_at(kind, m, seed, offset), whole[:m])


@pytest.mark.parametrize("kind", SPLITTABLE)
def test_large_fill_nogil_path_matches(kind):
    # n > 32768 takes the GIL-releasing path; results must not depend on it
    g = Generator().manual_seed(77)
    big = gfill(kind, 100_003, g)
    np.testing.assert_array_equal(big[:1000], fill_at(kind, 1000, 77, 0))
    np.testing.assert_array_equal(big, fill_at(kind, 100_003, 77, 0))


def test_threads_with_separate_generators():
    results = {}

    def work(i):
        g = Generator().manual_seed(i)
        results[i] = [gfill("normal_f64", 50_000, g) for _ in range(3)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(4):
        g = Generator().manual_seed(i)
        for arr in results[i]:
            np.testing.assert_array_equal(arr, gfill("normal_f64", 50_000, g))


# ---------------------------------------------------------------------------
# Generator API
# ---------------------------------------------------------------------------

def test_generator_defaults_and_device():
    g = Generator()
    assert g.initial_seed() == 67280421310721
    assert g.device == "cpu"
    assert g.get_offset() == 0
    dev = object()
    assert Generator(dev).device is dev
    assert Generator(device="cuda:0").device == "cuda:0"
    with pytest.raises(AttributeError):
        g.device = "cpu"
    assert "Generator" in repr(g)


def test_manual_seed_semantics():
    g = Generator()
    assert g.manual_seed(5) is g
    assert g.initial_seed() == 5
    gfill("uniform_f64", 10, g)
    assert g.get_offset() == 5
    g.manual_seed(5)
    assert g.get_offset() == 0
    assert g.manual_seed(-1).initial_seed() == U64
    assert g.manual_seed(-(1 << 63)).initial_seed() == 1 << 63
    assert g.manual_seed(U64).initial_seed() == U64
    assert g.manual_seed(np.int64(9)).initial_seed() == 9
    # negative seeds are the same generator as their two's-complement value
    a = gfill("int64", 20, Generator().manual_seed(-3))
    b = gfill("int64", 20, Generator().manual_seed((1 << 64) - 3))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("bad", [1 << 64, -(1 << 63) - 1, 1 << 100])
def test_manual_seed_overflow(bad):
    g = Generator().manual_seed(3)
    with pytest.raises(ValueError):
        g.manual_seed(bad)
    with pytest.raises(RuntimeError):
        g.manual_seed(bad)
    assert g.initial_seed() == 3  # unchanged


@pytest.mark.parametrize("bad", [1.5, "3", None, True, [1], np.float64(2.0)])
def test_manual_seed_wrong_type(bad):
    with pytest.raises(RuntimeError, match="expected a long"):
        Generator().manual_seed(bad)


def test_seed_is_nondeterministic():
    g = Generator()
    s1 = g.seed()
    assert isinstance(s1, int) and 0 <= s1 <= U64
    assert g.initial_seed() == s1 and g.get_offset() == 0
    s2 = g.seed()
    assert s1 != s2  # 2**-64 chance of a false failure
    np.testing.assert_array_equal(gfill("uniform_f64", 8, g), fill_at("uniform_f64", 8, s2, 0))


def test_get_state_layout():
    g = Generator().manual_seed(0x1122334455667788)
    g.set_offset(0xAABBCCDD)
    s = g.get_state()
    assert isinstance(s, bytes) and len(s) == R.STATE_SIZE == 24
    magic, version, seed, offset = struct.unpack("<4sIQQ", s)
    assert magic == R.STATE_MAGIC == b"TLPX" and version == R.STATE_VERSION
    assert seed == 0x1122334455667788 and offset == 0xAABBCCDD
    assert s[8:16] == (0x1122334455667788).to_bytes(8, "little")


@pytest.mark.parametrize("kind", list(EPB))
def test_get_set_state_round_trip_resumes(kind):
    g = Generator().manual_seed(42)
    gfill(kind, 37, g)
    state = g.get_state()
    expected = [gfill(kind, n, g) for n in (1, 50, 3)]
    assert g.set_state(state) is g
    for n, e in zip((1, 50, 3), expected):
        np.testing.assert_array_equal(gfill(kind, n, g), e)
    # restoring into a different generator gives the same stream
    h = Generator().manual_seed(0).set_state(state)
    assert h.initial_seed() == 42
    np.testing.assert_array_equal(gfill(kind, 1, h), expected[0])


def test_set_state_accepts_bytes_like():
    g = Generator().manual_seed(8)
    s = g.get_state()
    for obj in (bytearray(s), memoryview(s), np.frombuffer(s, dtype=np.uint8)):
        h = Generator().set_state(obj)
        assert h.get_state() == s


def test_set_state_validation():
    g = Generator().manual_seed(8)
    s = g.get_state()
    with pytest.raises(RuntimeError, match="size"):
        g.set_state(s[:-1])
    with pytest.raises(RuntimeError, match="size"):
        g.set_state(s + b"\0")
    with pytest.raises(RuntimeError, match="magic"):
        g.set_state(b"XXXX" + s[4:])
    with pytest.raises(RuntimeError, match="version"):
        g.set_state(s[:4] + struct.pack("<I", 99) + s[8:])
    with pytest.raises(TypeError):
        g.set_state(12)
    with pytest.raises(TypeError):
        g.set_state("x" * 24)
    assert g.get_state() == s  # failed calls leave the state alone


def test_set_offset_validation():
    g = Generator()
    with pytest.raises(ValueError):
        g.set_offset(-1)
    with pytest.raises(ValueError):
        g.set_offset(1 << 64)
    with pytest.raises(TypeError):
        g.set_offset(1.0)


def test_default_generator():
    dg = R.default_generator
    assert isinstance(dg, Generator)
    saved = dg.get_state()
    try:
        dg.manual_seed(31)
        a = R._fill("uniform_f64", 10)  # generator=None -> default generator
        assert dg.get_offset() == 5
        np.testing.assert_array_equal(a, fill_at("uniform_f64", 10, 31, 0, 0.0, 1.0))
    finally:
        dg.set_state(saved)


# ---------------------------------------------------------------------------
# Uniform
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("kind,dtype,bits", [("uniform_f32", np.float32, 24), ("uniform_f64", np.float64, 53)])
def test_uniform_unit_interval(kind, dtype, bits):
    n = 400_000
    x = R._fill(kind, n, 0.0, 1.0, seed=123, offset=0)
    assert x.dtype == dtype
    assert x.min() >= 0.0 and x.max() < 1.0
    # exactly k * 2**-bits
    k = x.astype(np.float64) * 2.0 ** bits
    assert np.all(k == np.floor(k))
    se = math.sqrt(1 / 12 / n)
    assert abs(x.mean(dtype=np.float64) - 0.5) < 5 * se
    assert abs(x.var(dtype=np.float64) - 1 / 12) < 5 * math.sqrt(1 / 180 / n)
    # histogram of 20 bins is flat (chi-square, 19 dof; 99.99% point ~ 50)
    counts = np.bincount((x * 20).astype(np.int64), minlength=20)
    chi2 = ((counts - n / 20) ** 2 / (n / 20)).sum()
    assert chi2 < 50


@pytest.mark.parametrize("kind", ["uniform_f32", "uniform_f64"])
@pytest.mark.parametrize("lo,hi", [(-3.0, 5.0), (100.0, 100.5), (-1e6, -1e6 + 1), (0.0, 1e-30)])
def test_uniform_bounds_and_moments(kind, lo, hi):
    n = 200_000
    x = R._fill(kind, n, lo, hi, seed=9, offset=0).astype(np.float64)
    dt = np.float32 if kind.endswith("f32") else np.float64
    assert x.min() >= dt(lo) and x.max() < dt(hi)
    width = hi - lo
    se = width * math.sqrt(1 / 12 / n)
    assert abs(x.mean() - (lo + hi) / 2) < 5 * se + 4 * abs(np.spacing(dt(hi)))


def test_uniform_never_returns_hi_when_rounding_up():
    # hi is the next representable value above lo: lo + u*(hi-lo) rounds to hi for
    # u >= 1/2, which must be clamped back below hi (i.e. to lo)
    n = 10_000
    hi32 = float(np.nextafter(np.float32(1.0), np.float32(2.0)))
    x = R._fill("uniform_f32", n, 1.0, hi32, seed=1, offset=0)
    assert np.all(x == np.float32(1.0))
    hi64 = float(np.nextafter(1.0, 2.0))
    y = R._fill("uniform_f64", n, 1.0, hi64, seed=1, offset=0)
    assert np.all(y == 1.0)
    # [1, 2) in float32: 2 - 2**-24 would round to 2.0
    z = R._fill("uniform_f32", 200_000, 1.0, 2.0, seed=2, offset=0)
    assert z.max() < 2.0 and z.min() >= 1.0


def test_uniform_degenerate_range():
    x = R._fill("uniform_f64", 100, 2.5, 2.5, seed=1, offset=0)
    assert np.all(x == 2.5)
    x = R._fill("uniform_f32", 100, 2.5, 2.5, seed=1, offset=0)
    assert np.all(x == np.float32(2.5))


def test_uniform_argument_errors():
    g = Generator()
    with pytest.raises(RuntimeError):
        gfill("uniform_f64", 3, g, 1.0, 0.0)
    with pytest.raises(RuntimeError):
        gfill("uniform_f32", 3, g, 0.0, float("inf"))
    with pytest.raises(RuntimeError):
        gfill("uniform_f64", 3, g, float("nan"), 1.0)
    with pytest.raises(RuntimeError):
        gfill("uniform_f64", 3, g, -1.7e308, 1.7e308)  # hi - lo overflows
    with pytest.raises(RuntimeError):
        gfill("uniform_f64", -1, g, 0.0, 1.0)
    assert g.get_offset() == 0  # nothing reserved by failed calls


# ---------------------------------------------------------------------------
# Normal
# ---------------------------------------------------------------------------

def _norm_cdf(x):
    return 0.5 * (1.0 + np.vectorize(math.erf)(np.asarray(x, dtype=np.float64) / math.sqrt(2.0)))


@pytest.mark.parametrize("kind", ["normal_f32", "normal_f64"])
@pytest.mark.parametrize("seed", [0, 1, 0xFFFFFFFFFFFFFFFF])
def test_normal_moments_and_ks(kind, seed):
    n = 200_000
    z = R._fill(kind, n, 0.0, 1.0, seed=seed, offset=0).astype(np.float64)
    assert np.all(np.isfinite(z))
    assert abs(z.mean()) < 5 / math.sqrt(n)
    assert abs(z.var() - 1.0) < 5 * math.sqrt(2 / n)
    # higher moments: skewness ~ 0, kurtosis ~ 3
    assert abs((z ** 3).mean()) < 5 * math.sqrt(15 / n)
    assert abs((z ** 4).mean() - 3.0) < 5 * math.sqrt(96 / n)
    # Kolmogorov-Smirnov on a subsample: sqrt(m) * D < 1.95 (p ~ 0.001)
    m = 20_000
    s = np.sort(z[:m])
    cdf = _norm_cdf(s)
    i = np.arange(1, m + 1)
    d = max((i / m - cdf).max(), (cdf - (i - 1) / m).max())
    assert math.sqrt(m) * d < 1.95
    # even and odd elements (cos and sin halves) are each normal and uncorrelated
    assert abs(np.corrcoef(z[0::2], z[1::2])[0, 1]) < 5 / math.sqrt(n / 2)
    assert abs(z[0::2].var() - 1) < 5 * math.sqrt(4 / n) and abs(z[1::2].var() - 1) < 5 * math.sqrt(4 / n)


def test_normal_tail_bounds():
    # radius uniforms are in (0, 1]: finite, and |z| <= sqrt(-2 ln 2**-32) (f32) / 2**-53 (f64)
    z32 = R._fill("normal_f32", 1_000_000, 0.0, 1.0, seed=3, offset=0)
    z64 = R._fill("normal_f64", 1_000_000, 0.0, 1.0, seed=3, offset=0)
    assert np.all(np.isfinite(z32)) and np.all(np.isfinite(z64))
    assert np.abs(z32).max() <= math.sqrt(-2 * math.log(2.0 ** -32)) + 1e-5
    assert np.abs(z64).max() <= math.sqrt(-2 * math.log(2.0 ** -53)) + 1e-9
    assert np.abs(z64).max() > 4.0  # the tails are actually populated


@pytest.mark.parametrize("kind", ["normal_f32", "normal_f64"])
def test_normal_mean_std(kind):
    n = 100_000
    z = R._fill(kind, n, 3.0, 2.0, seed=4, offset=0).astype(np.float64)
    assert abs(z.mean() - 3.0) < 5 * 2 / math.sqrt(n)
    assert abs(z.std() - 2.0) < 5 * 2 * math.sqrt(1 / (2 * n))
    # affine in (mean, std): same underlying draws
    base = R._fill(kind, n, 0.0, 1.0, seed=4, offset=0).astype(np.float64)
    tol = 1e-5 if kind.endswith("f32") else 1e-12
    np.testing.assert_allclose(z, 3.0 + 2.0 * base, rtol=tol, atol=tol * 10)
    zero_std = R._fill(kind, 10, -1.5, 0.0, seed=4, offset=0)
    assert np.all(zero_std == -1.5)


def test_normal_argument_errors():
    g = Generator()
    with pytest.raises(RuntimeError, match="std"):
        gfill("normal_f64", 3, g, 0.0, -1.0)
    with pytest.raises(RuntimeError, match="std"):
        gfill("normal_f32", 3, g, 0.0, float("nan"))
    assert g.get_offset() == 0


# ---------------------------------------------------------------------------
# Integers
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("lo,rng", [(-5, 10), (0, 3), (1000, 7), ((1 << 63) - 10, 10), (-(1 << 63), 6)])
def test_int_small_ranges_uniform(lo, rng):
    n = 120_000
    x = R._fill("int64", n, lo, rng, seed=17, offset=0)
    assert x.dtype == np.int64
    assert x.min() >= lo and x.max() <= lo + rng - 1
    counts = np.bincount((x - np.int64(lo)).astype(np.int64), minlength=rng)
    assert len(counts) == rng
    expected = n / rng
    chi2 = ((counts - expected) ** 2 / expected).sum()
    # chi-square with rng-1 dof, generous 99.99%+ bound
    assert chi2 < (rng - 1) + 8 * math.sqrt(2 * (rng - 1)) + 10


def test_int_range_one():
    x = R._fill("int64", 100, 42, 1, seed=17, offset=0)
    assert np.all(x == 42)


def _bit_balance(u, n):
    bits = np.unpackbits(u.view(np.uint8)).reshape(n, 64).mean(axis=0)
    return np.abs(bits - 0.5).max()


def test_int_range_2_pow_63():
    n = 100_000
    lo = -(1 << 62)
    x = R._fill("int64", n, lo, 1 << 63, seed=23, offset=0)
    assert x.min() >= lo and int(x.max()) <= lo + (1 << 63) - 1
    rel = (x.astype(object) - lo)  # exact offsets in [0, 2**63)
    top = np.array([(v >> 62) & 1 for v in rel])
    assert abs(top.mean() - 0.5) < 5 * 0.5 / math.sqrt(n)
    frac = np.array([float(v) / 2 ** 63 for v in rel])
    assert abs(frac.mean() - 0.5) < 5 * math.sqrt(1 / 12 / n)
    # a power-of-two range is the low bits of the raw draw
    raw = R._fill("int64", 1000, 0, 0, seed=23, offset=0).view(np.uint64)
    np.testing.assert_array_equal(x[:1000].view(np.uint64) - np.uint64(lo & U64),
                                  raw & np.uint64((1 << 63) - 1))


@pytest.mark.parametrize("rng", [U64, 0])  # 0 means the full 2**64 range
def test_int_range_near_full(rng):
    n = 100_000
    lo = -(1 << 63)
    x = R._fill("int64", n, lo, rng, seed=29, offset=0)
    if rng == U64:
        assert int(x.max()) <= (1 << 63) - 2  # lo + range - 1
    assert abs((x < 0).mean() - 0.5) < 5 * 0.5 / math.sqrt(n)
    assert _bit_balance(x.copy(), n) < 5 * 0.5 / math.sqrt(n)
    frac = (x.astype(np.float64) - float(lo)) / 2.0 ** 64
    assert abs(frac.mean() - 0.5) < 5 * math.sqrt(1 / 12 / n)


def test_int_range_three_quarters_modulo_definition():
    # value is lo + (raw % range): check against the raw draws
    rng = 3 << 62
    raw = R._fill("int64", 500, 0, 0, seed=31, offset=4).view(np.uint64)
    lo = -(1 << 63)  # [lo, lo + range) = [-2**63, 2**62)
    x = R._fill("int64", 500, lo, rng, seed=31, offset=4)
    expect = [lo + int(d) % rng for d in raw]
    assert [int(v) for v in x] == expect


# ---------------------------------------------------------------------------
# Bernoulli
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("p", [0.5, 0.3, 0.01, 0.999])
def test_bernoulli_frequency(p):
    n = 300_000
    x = R._fill("bernoulli", n, p, seed=37, offset=0)
    assert x.dtype == np.uint8 and set(np.unique(x)) <= {0, 1}
    assert abs(x.mean() - p) < 5 * math.sqrt(p * (1 - p) / n)


def test_bernoulli_matches_uniform_threshold():
    # element i is 1 iff the 53-bit uniform of draw i is < p
    u = R._fill("uniform_f64", 10_000, 0.0, 1.0, seed=41, offset=2)
    b = R._fill("bernoulli", 10_000, 0.37, seed=41, offset=2)
    np.testing.assert_array_equal(b, (u < 0.37).astype(np.uint8))


def test_bernoulli_edges_and_errors():
    assert np.all(R._fill("bernoulli", 1000, 0.0, seed=1, offset=0) == 0)
    assert np.all(R._fill("bernoulli", 1000, 1.0, seed=1, offset=0) == 1)
    g = Generator()
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(RuntimeError, match="bernoulli"):
            gfill("bernoulli", 3, g, bad)
    # p = 0 / 1 still advance the generator like any other p
    gfill("bernoulli", 7, g, 0.0)
    assert g.get_offset() == 4


# ---------------------------------------------------------------------------
# randperm
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 2, 3, 17, 1000, 100_001])
def test_randperm_is_permutation(n):
    g = Generator().manual_seed(43)
    p = gfill("randperm", n, g)
    assert p.dtype == np.int64 and len(p) == n
    np.testing.assert_array_equal(np.sort(p), np.arange(n))
    assert g.get_offset() == -(-n // 2)


def test_randperm_uniform_over_permutations():
    g = Generator().manual_seed(47)
    trials = 12_000
    counts = {}
    for _ in range(trials):
        key = tuple(gfill("randperm", 3, g))
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 6
    expected = trials / 6
    sigma = math.sqrt(trials * (1 / 6) * (5 / 6))
    for c in counts.values():
        assert abs(c - expected) < 5 * sigma


def test_randperm_positions_uniform():
    g = Generator().manual_seed(53)
    n, trials = 8, 8000
    table = np.zeros((n, n), dtype=np.int64)  # table[position, value]
    for _ in range(trials):
        p = gfill("randperm", n, g)
        table[np.arange(n), p] += 1
    expected = trials / n
    sigma = math.sqrt(trials * (1 / n) * (1 - 1 / n))
    assert np.abs(table - expected).max() < 5 * sigma


def test_randperm_definition():
    # forward Fisher-Yates: step k swaps k with k + draw_k % (n - k)
    n, seed, off = 11, 59, 3
    raw = R._fill("int64", n, 0, 0, seed=seed, offset=off).view(np.uint64)
    ref = list(range(n))
    for k in range(n - 1):
        j = k + int(raw[k]) % (n - k)
        ref[k], ref[j] = ref[j], ref[k]
    assert list(R._fill("randperm", n, seed=seed, offset=off)) == ref


def test_negative_n_errors():
    g = Generator()
    for kind in EPB:
        with pytest.raises(RuntimeError):
            gfill(kind, -1, g)
