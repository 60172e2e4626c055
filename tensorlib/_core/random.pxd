# cython: language_level=3
"""Declarations for tensorlib._core.random (Philox4x32-10 generator).

Other Cython modules use it with::

    from tensorlib._core.random cimport Generator, fill_uniform, get_default_generator

The C kernels (cpu_random.h) are declared in random.pyx only, so cimporting this
file does not require the C header on the include path.

Blocks-consumed convention: every fill reserves ``tl_philox_blocks_*(n)`` 128-bit
Philox blocks from the generator (``Generator.reserve``) and element i of the fill
depends only on (seed, offset, i):

    uniform/normal float32: ceil(n/4) blocks   (4 elements per block)
    uniform/normal float64: ceil(n/2) blocks   (2 elements per block)
    int64, bernoulli, randperm: ceil(n/2) blocks
"""

from libc.stdint cimport uint8_t, int64_t, uint64_t


cdef class Generator:
    cdef readonly object device      # whatever was passed to the constructor ("cpu" by default)
    cdef uint64_t _seed              # Philox key
    cdef uint64_t _offset            # next unused 128-bit block (counter start of the next fill)
    cdef uint64_t _initial_seed      # value reported by initial_seed()

    cdef uint64_t reserve(self, uint64_t nblocks) noexcept
    cdef int _set_seed(self, uint64_t seed) noexcept


# Return the module's default generator (the object bound to ``default_generator``).
cdef Generator get_default_generator()

# Raw-buffer fills for the tensor module.  ``g`` may be None (-> default generator).
# Each validates its arguments (raising like torch), reserves the blocks, then fills
# ``n`` contiguous elements of ``out``, releasing the GIL when n > 32768.
# They return 0, or -1 with a Python exception set.

# float32 (is_double == 0) or float64 (is_double != 0) uniform on [lo, hi)
cdef int fill_uniform(Generator g, void* out, int is_double, int64_t n, double lo, double hi) except -1
# float32 / float64 normal(mean, std), Box-Muller
cdef int fill_normal(Generator g, void* out, int is_double, int64_t n, double mean, double std) except -1
# int64 values lo + (draw % range); range == 0 means 2**64 (all int64 values)
cdef int fill_int64(Generator g, int64_t* out, int64_t n, int64_t lo, uint64_t range) except -1
# uint8/bool values: 1 with probability p
cdef int fill_bernoulli(Generator g, uint8_t* out, int64_t n, double p) except -1
# a random permutation of 0..n-1
cdef int fill_randperm(Generator g, int64_t* out, int64_t n) except -1
