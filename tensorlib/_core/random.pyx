# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Counter-based Philox4x32-10 random number generation for tensorlib.

This module provides :class:`Generator`, a PyTorch-style random generator whose
state is just ``(seed, offset)``: the 64-bit Philox key and the index of the next
unused 128-bit counter block.  Every fill reserves a fixed number of blocks
(see ``blocks_consumed``) and element ``i`` of a fill is a pure function of
``(seed, offset, i)``, so fills are reproducible and can be split across threads.

Example::

    >>> from tensorlib._core.random import Generator
    >>> g = Generator().manual_seed(42)
    >>> g.initial_seed()
    42
    >>> state = g.get_state()          # 24 bytes
    >>> g.set_state(state) is g
    True

The C kernels live in ``cpu_random.c`` (plain C99, compiled with -O3 -fwrapv).
"""

import operator
import os
import struct

from libc.stdint cimport uint8_t, uint32_t, int64_t, uint64_t
from libc.math cimport isfinite


cdef extern from "cpu_random.h" nogil:
    void tl_philox4x32_10(const uint32_t* ctr, const uint32_t* key, uint32_t* out)
    int64_t tl_philox_blocks_uniform(int64_t n, int is_double)
    int64_t tl_philox_blocks_normal(int64_t n, int is_double)
    int64_t tl_philox_blocks_int(int64_t n)
    int64_t tl_philox_blocks_bernoulli(int64_t n)
    void tl_rand_uniform_f32(uint64_t seed, uint64_t offset, float* out, int64_t n, double lo, double hi)
    void tl_rand_uniform_f64(uint64_t seed, uint64_t offset, double* out, int64_t n, double lo, double hi)
    void tl_rand_normal_f32(uint64_t seed, uint64_t offset, float* out, int64_t n, double mean, double std)
    void tl_rand_normal_f64(uint64_t seed, uint64_t offset, double* out, int64_t n, double mean, double std)
    void tl_rand_int64(uint64_t seed, uint64_t offset, int64_t* out, int64_t n, int64_t lo, uint64_t range)
    void tl_rand_bernoulli_u8(uint64_t seed, uint64_t offset, uint8_t* out, int64_t n, double p)
    void tl_randperm_int64(uint64_t seed, uint64_t offset, int64_t* out, int64_t n)


# fills larger than this release the GIL
cdef int64_t _NOGIL_THRESHOLD = 32768

#: PyTorch's default CPU seed; a fresh Generator starts with it.
DEFAULT_SEED = 67280421310721

#: Layout of Generator.get_state(): magic, version, seed, offset (little-endian).
STATE_MAGIC = b"TLPX"
STATE_VERSION = 1
_STATE_STRUCT = struct.Struct("<4sIQQ")
#: Size in bytes of a serialized generator state.
STATE_SIZE = _STATE_STRUCT.size   # 24

_U64_MASK = 0xFFFFFFFFFFFFFFFF


class SeedOverflowError(ValueError, RuntimeError):
    """Raised when a seed is outside [-2**63, 2**64 - 1].

    PyTorch raises ``ValueError("Overflow when unpacking long long")`` here (older
    versions raised RuntimeError); this class derives from both so either
    ``except`` clause catches it.

    Example::

        >>> Generator().manual_seed(2**64)
        Traceback (most recent call last):
        ...
        tensorlib._core.random.SeedOverflowError: Overflow when unpacking long long
    """


cdef uint64_t _coerce_seed(object seed, str what) except? 0:
    # torch accepts Python ints (not bool) in [-2**63, 2**64-1]; negatives wrap mod 2**64
    if isinstance(seed, bool):
        raise RuntimeError(f"{what} expected a long, but got bool")
    try:
        v = operator.index(seed)
    except TypeError:
        raise RuntimeError(f"{what} expected a long, but got {type(seed).__name__}") from None
    if v < -(1 << 63) or v > _U64_MASK:
        raise SeedOverflowError("Overflow when unpacking long long")
    return <uint64_t>(v & _U64_MASK)


cdef class Generator:
    """Generator(device="cpu")

    A Philox4x32-10 counter-based random number generator with PyTorch's
    ``torch.Generator`` interface.  Its whole state is the 64-bit seed (the Philox
    key) and the 128-bit-block offset of the next fill; a new generator is seeded
    with 67280421310721 like torch's.

    ``device`` is stored as given (a string such as ``"cpu"`` or a device object)
    and exposed read-only.

    Example::

        >>> g = Generator()
        >>> g.initial_seed()
        67280421310721
        >>> g.manual_seed(0) is g
        True
        >>> g.device
        'cpu'
    """

    def __cinit__(self, *args, **kwargs):
        self.device = "cpu"
        self._set_seed(<uint64_t>67280421310721)

    def __init__(self, device="cpu"):
        self.device = device

    cdef uint64_t reserve(self, uint64_t nblocks) noexcept:
        """Return the offset a fill of ``nblocks`` blocks must use and advance past it."""
        cdef uint64_t off = self._offset
        self._offset = off + nblocks
        return off

    cdef int _set_seed(self, uint64_t seed) noexcept:
        self._seed = seed
        self._initial_seed = seed
        self._offset = 0
        return 0

    def manual_seed(self, seed):
        """Seed the generator and reset its offset to 0; returns ``self``.

        Accepts Python ints (or objects with ``__index__``, bools excepted) in
        [-2**63, 2**64 - 1]; negative seeds wrap modulo 2**64 like torch.  Other
        types raise RuntimeError, out-of-range ints raise SeedOverflowError
        (a ValueError and RuntimeError).

        Example::

            >>> g = Generator().manual_seed(-1)
            >>> g.initial_seed()
            18446744073709551615
        """
        self._set_seed(_coerce_seed(seed, "manual_seed"))
        return self

    def seed(self):
        """Seed with a non-deterministic 64-bit value from ``os.urandom`` and return it.

        Example::

            >>> g = Generator()
            >>> s = g.seed()
            >>> g.initial_seed() == s
            True
        """
        cdef object s = int.from_bytes(os.urandom(8), "little")
        self._set_seed(<uint64_t>s)
        return s

    def initial_seed(self):
        """Return the seed the generator was last seeded with (manual_seed/seed/set_state).

        Example::

            >>> Generator().manual_seed(7).initial_seed()
            7
        """
        return self._initial_seed

    def get_state(self):
        """Serialize the generator to ``bytes``.

        Layout (24 bytes, little-endian): ``b"TLPX"`` magic, uint32 version (1),
        uint64 seed, uint64 offset (next unused 128-bit block).

        Example::

            >>> g = Generator().manual_seed(1)
            >>> s = g.get_state()
            >>> len(s), s[:4]
            (24, b'TLPX')
        """
        return _STATE_STRUCT.pack(STATE_MAGIC, STATE_VERSION, self._seed, self._offset)

    def set_state(self, new_state):
        """Restore a state produced by :meth:`get_state`; returns ``self``.

        ``new_state`` may be any bytes-like object (bytes, bytearray, memoryview,
        a uint8 NumPy array, ...).  A wrong size, magic or version raises
        RuntimeError; a non-bytes-like object raises TypeError.

        Example::

            >>> g = Generator().manual_seed(3)
            >>> s = g.get_state()
            >>> g.set_state(s).get_state() == s
            True
        """
        cdef object data
        try:
            data = memoryview(new_state).tobytes()
        except TypeError:
            raise TypeError(
                f"set_state expected a bytes-like object, but got {type(new_state).__name__}") from None
        if len(data) != STATE_SIZE:
            raise RuntimeError(
                f"Expected a tensorlib Philox generator state of size {STATE_SIZE} "
                f"but found the input RNG state size to be {len(data)}")
        magic, version, seed, offset = _STATE_STRUCT.unpack(data)
        if magic != STATE_MAGIC:
            raise RuntimeError(f"Invalid generator state: bad magic {magic!r} (expected {STATE_MAGIC!r})")
        if version != STATE_VERSION:
            raise RuntimeError(f"Invalid generator state: unsupported version {version}")
        self._seed = <uint64_t>seed
        self._initial_seed = <uint64_t>seed
        self._offset = <uint64_t>offset
        return self

    def get_offset(self):
        """Return the offset (in 128-bit Philox blocks) the next fill will start at.

        Example::

            >>> Generator().manual_seed(0).get_offset()
            0
        """
        return self._offset

    def set_offset(self, offset):
        """Set the offset (in 128-bit Philox blocks) of the next fill; returns ``self``.

        Example::

            >>> Generator().manual_seed(0).set_offset(10).get_offset()
            10
        """
        if isinstance(offset, bool):
            raise TypeError("set_offset expected an int, but got bool")
        v = operator.index(offset)
        if v < 0 or v > _U64_MASK:
            raise ValueError(f"offset must be in [0, 2**64 - 1], got {v}")
        self._offset = <uint64_t>v
        return self

    def __repr__(self):
        return (f"<tensorlib Generator device={self.device!r} seed={self._seed} "
                f"offset={self._offset}>")


cdef Generator _default_generator = Generator()
#: The module-level default generator (like ``torch.default_generator``).
default_generator = _default_generator


cdef Generator get_default_generator():
    return _default_generator


def _set_default_generator(Generator g not None):
    """Install ``g`` as the default generator (tensorlib.random does this once, with its
    tensor-aware subclass). Returns the previous one."""
    global _default_generator, default_generator
    old = _default_generator
    _default_generator = g
    default_generator = g
    return old


cdef inline Generator _resolve(Generator g):
    return _default_generator if g is None else g


cdef inline int _check_n(int64_t n, str what) except -1:
    if n < 0:
        raise RuntimeError(f"{what}: number of elements must be non-negative, got {n}")
    return 0


# ---------------------------------------------------------------------------
# nogil dispatch helpers (kind codes: 0 uniform, 1 normal)
# ---------------------------------------------------------------------------

cdef inline void _run_real(int kind, int is_double, uint64_t seed, uint64_t off, void* out,
                           int64_t n, double a, double b) noexcept nogil:
    if kind == 0:
        if is_double:
            tl_rand_uniform_f64(seed, off, <double*>out, n, a, b)
        else:
            tl_rand_uniform_f32(seed, off, <float*>out, n, a, b)
    else:
        if is_double:
            tl_rand_normal_f64(seed, off, <double*>out, n, a, b)
        else:
            tl_rand_normal_f32(seed, off, <float*>out, n, a, b)


cdef int fill_uniform(Generator g, void* out, int is_double, int64_t n, double lo, double hi) except -1:
    """Fill ``n`` float32/float64 values uniform on [lo, hi) (raises like torch's uniform_)."""
    _check_n(n, "uniform_")
    if not (isfinite(lo) and isfinite(hi)):
        raise RuntimeError(f"uniform_ expects finite bounds, but found from={lo} and to={hi}")
    if not (lo <= hi):
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={lo} > to={hi}")
    if not isfinite(hi - lo):
        raise RuntimeError(
            f"uniform_ expects to-from to be finite, but found to={hi} and from={lo}")
    if n == 0:
        return 0
    cdef Generator gen = _resolve(g)
    cdef uint64_t seed = gen._seed
    cdef uint64_t off = gen.reserve(<uint64_t>tl_philox_blocks_uniform(n, is_double))
    if n > _NOGIL_THRESHOLD:
        with nogil:
            _run_real(0, is_double, seed, off, out, n, lo, hi)
    else:
        _run_real(0, is_double, seed, off, out, n, lo, hi)
    return 0


cdef int fill_normal(Generator g, void* out, int is_double, int64_t n, double mean, double std) except -1:
    """Fill ``n`` float32/float64 normal(mean, std) values (raises like torch's normal_)."""
    _check_n(n, "normal_")
    if not (std >= 0.0):
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    if n == 0:
        return 0
    cdef Generator gen = _resolve(g)
    cdef uint64_t seed = gen._seed
    cdef uint64_t off = gen.reserve(<uint64_t>tl_philox_blocks_normal(n, is_double))
    if n > _NOGIL_THRESHOLD:
        with nogil:
            _run_real(1, is_double, seed, off, out, n, mean, std)
    else:
        _run_real(1, is_double, seed, off, out, n, mean, std)
    return 0


cdef int fill_int64(Generator g, int64_t* out, int64_t n, int64_t lo, uint64_t range) except -1:
    """Fill ``n`` int64 values lo + (draw % range); range == 0 means 2**64."""
    _check_n(n, "random_")
    if n == 0:
        return 0
    cdef Generator gen = _resolve(g)
    cdef uint64_t seed = gen._seed
    cdef uint64_t off = gen.reserve(<uint64_t>tl_philox_blocks_int(n))
    if n > _NOGIL_THRESHOLD:
        with nogil:
            tl_rand_int64(seed, off, out, n, lo, range)
    else:
        tl_rand_int64(seed, off, out, n, lo, range)
    return 0


cdef int fill_bernoulli(Generator g, uint8_t* out, int64_t n, double p) except -1:
    """Fill ``n`` bytes with 1 (probability p) or 0 (raises like torch's bernoulli_)."""
    _check_n(n, "bernoulli_")
    if not (0.0 <= p <= 1.0):
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    if n == 0:
        return 0
    cdef Generator gen = _resolve(g)
    cdef uint64_t seed = gen._seed
    cdef uint64_t off = gen.reserve(<uint64_t>tl_philox_blocks_bernoulli(n))
    if n > _NOGIL_THRESHOLD:
        with nogil:
            tl_rand_bernoulli_u8(seed, off, out, n, p)
    else:
        tl_rand_bernoulli_u8(seed, off, out, n, p)
    return 0


cdef int fill_randperm(Generator g, int64_t* out, int64_t n) except -1:
    """Fill ``out[0:n]`` with a random permutation of 0..n-1 (consumes ceil(n/2) blocks)."""
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    if n == 0:
        return 0
    cdef Generator gen = _resolve(g)
    cdef uint64_t seed = gen._seed
    cdef uint64_t off = gen.reserve(<uint64_t>tl_philox_blocks_int(n))
    if n > _NOGIL_THRESHOLD:
        with nogil:
            tl_randperm_int64(seed, off, out, n)
    else:
        tl_randperm_int64(seed, off, out, n)
    return 0


# ---------------------------------------------------------------------------
# Python-level helpers (introspection / tests)
# ---------------------------------------------------------------------------

_KINDS = ("uniform_f32", "uniform_f64", "normal_f32", "normal_f64", "int64", "bernoulli", "randperm")


def blocks_consumed(kind, n):
    """Number of 128-bit Philox blocks a fill of ``n`` elements of ``kind`` consumes.

    ``kind`` is one of ``"uniform_f32"``, ``"uniform_f64"``, ``"normal_f32"``,
    ``"normal_f64"``, ``"int64"``, ``"bernoulli"``, ``"randperm"``.  The generator's
    offset advances by exactly this amount.

    Example::

        >>> blocks_consumed("uniform_f32", 10), blocks_consumed("normal_f64", 5)
        (3, 3)
    """
    cdef int64_t m = n
    if kind == "uniform_f32":
        return tl_philox_blocks_uniform(m, 0)
    if kind == "uniform_f64":
        return tl_philox_blocks_uniform(m, 1)
    if kind == "normal_f32":
        return tl_philox_blocks_normal(m, 0)
    if kind == "normal_f64":
        return tl_philox_blocks_normal(m, 1)
    if kind == "int64" or kind == "randperm":
        return tl_philox_blocks_int(m)
    if kind == "bernoulli":
        return tl_philox_blocks_bernoulli(m)
    raise ValueError(f"unknown fill kind {kind!r}; expected one of {_KINDS}")


def _philox_block(ctr, key):
    """Debug hook: one raw Philox4x32-10 block.

    ``ctr`` is 4 and ``key`` 2 unsigned 32-bit words; returns the 4 output words.

    Example::

        >>> [hex(w) for w in _philox_block([0, 0, 0, 0], [0, 0])]
        ['0x6627e8d5', '0xe169c58d', '0xbc57ac4c', '0x9b00dbd8']
    """
    cdef uint32_t c[4]
    cdef uint32_t k[2]
    cdef uint32_t o[4]
    cdef int i
    ctr = list(ctr)
    key = list(key)
    if len(ctr) != 4 or len(key) != 2:
        raise ValueError("_philox_block expects 4 counter words and 2 key words")
    for i in range(4):
        if not 0 <= ctr[i] <= 0xFFFFFFFF:
            raise ValueError("counter words must be in [0, 2**32)")
        c[i] = <uint32_t>ctr[i]
    for i in range(2):
        if not 0 <= key[i] <= 0xFFFFFFFF:
            raise ValueError("key words must be in [0, 2**32)")
        k[i] = <uint32_t>key[i]
    tl_philox4x32_10(c, k, o)
    return (o[0], o[1], o[2], o[3])


def _fill(kind, n, *args, generator=None, seed=None, offset=None):
    """Test hook: return a NumPy array holding a fill of ``n`` elements.

    ``kind``/extra ``args``: ``"uniform_f32"``/``"uniform_f64"`` (lo=0, hi=1),
    ``"normal_f32"``/``"normal_f64"`` (mean=0, std=1), ``"int64"`` (lo, range),
    ``"bernoulli"`` (p=0.5), ``"randperm"`` (no args; n is the length).

    With ``seed`` given, the C kernel is called directly at ``(seed, offset or 0)``
    and no generator is touched; otherwise ``generator`` (default:
    ``default_generator``) reserves the blocks and advances.

    Example::

        >>> g = Generator().manual_seed(0)
        >>> a = _fill("uniform_f64", 4, 0.0, 1.0, generator=g)
        >>> b = _fill("uniform_f64", 4, 0.0, 1.0, seed=0, offset=0)
        >>> bool((a == b).all()), g.get_offset()
        (True, 2)
    """
    import numpy as np

    if kind not in _KINDS:
        raise ValueError(f"unknown fill kind {kind!r}; expected one of {_KINDS}")
    cdef int64_t m = n
    cdef Generator gen = None
    cdef uint64_t s = 0, off = 0
    cdef bint direct = seed is not None
    cdef size_t addr
    if direct:
        s = <uint64_t>(operator.index(seed) & _U64_MASK)
        off = <uint64_t>(operator.index(offset if offset is not None else 0) & _U64_MASK)
    else:
        if offset is not None:
            raise ValueError("offset requires seed")
        gen = _resolve(generator)
    if m < 0 and direct:
        raise RuntimeError(f"number of elements must be non-negative, got {m}")
    # (generator path: the fill_* functions reject a negative n themselves)
    cdef int64_t alloc = m if m > 0 else 0

    cdef double a, b
    cdef int is_double
    if kind.startswith("uniform") or kind.startswith("normal"):
        is_double = kind.endswith("f64")
        if len(args) > 2:
            raise TypeError(f"_fill({kind!r}, n, a, b) takes at most 2 extra arguments")
        a, b = tuple(args) + (0.0, 1.0)[len(args):]
        arr = np.empty(alloc, dtype=np.float64 if is_double else np.float32)
        addr = arr.ctypes.data
        if direct:
            _run_real(0 if kind.startswith("uniform") else 1, is_double, s, off, <void*>addr, m, a, b)
        elif kind.startswith("uniform"):
            fill_uniform(gen, <void*>addr, is_double, m, a, b)
        else:
            fill_normal(gen, <void*>addr, is_double, m, a, b)
        return arr

    cdef int64_t lo
    cdef uint64_t rng
    if kind == "int64":
        if len(args) != 2:
            raise TypeError("_fill('int64', n, lo, range) needs lo and range")
        lo = args[0]
        rng = <uint64_t>(operator.index(args[1]) & _U64_MASK)
        arr = np.empty(alloc, dtype=np.int64)
        addr = arr.ctypes.data
        if direct:
            tl_rand_int64(s, off, <int64_t*>addr, m, lo, rng)
        else:
            fill_int64(gen, <int64_t*>addr, m, lo, rng)
        return arr

    if kind == "bernoulli":
        a = args[0] if args else 0.5
        arr = np.empty(alloc, dtype=np.uint8)
        addr = arr.ctypes.data
        if direct:
            tl_rand_bernoulli_u8(s, off, <uint8_t*>addr, m, a)
        else:
            fill_bernoulli(gen, <uint8_t*>addr, m, a)
        return arr

    # randperm
    arr = np.empty(alloc, dtype=np.int64)
    addr = arr.ctypes.data
    if direct:
        tl_randperm_int64(s, off, <int64_t*>addr, m)
    else:
        fill_randperm(gen, <int64_t*>addr, m)
    return arr
