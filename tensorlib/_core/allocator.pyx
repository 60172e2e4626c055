"""Devices, the per-device allocator (the one door for tensor memory) and Storage.

Every byte of tensor data comes from ``Allocator.malloc``; that single door is what makes the
counters exact (and, later, the profiler complete and the planner possible). Storage either
owns a block from its device's allocator or borrows memory from an owner object such as a
NumPy array, which it keeps alive; borrowed memory is not ours and is not counted.
"""
cimport cython
from libc.stdint cimport int64_t, INT64_MAX
from libc.stdint cimport uint8_t, uintptr_t
from libc.stdlib cimport malloc as c_malloc, free as c_free
from libc.string cimport memset

ROLE_NAMES = ("unknown", "parameter", "buffer", "input", "activation", "saved-for-backward",
              "gradient", "optimizer-state", "temporary")

class OutOfMemoryError(RuntimeError, MemoryError):
    """The allocator could not get memory from the system. A RuntimeError, as PyTorch raises
    for a failed CPU allocation, and a MemoryError, as Python code expects."""


cdef enum:
    ALIGNMENT = 64      # bytes; a cache line, and enough for any vector load
    ROUND = 512         # requests are rounded up to this, as a caching allocator would


@cython.final
cdef class device:
    """A device: ``tensorlib.device("cpu")``, ``device("cuda", 0)`` or ``device("cuda:0")``.

    >>> tensorlib.device("cpu")
    device(type='cpu')
    """

    def __init__(self, type, index=None):
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): index given twice")
            self.type = (<device>type).type
            self.index = (<device>type).index
            return
        if not isinstance(type, str):
            raise TypeError(f"device() expected a string or a device, but got {type.__class__.__name__}")
        name = type
        if ":" in name:
            if index is not None:
                raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {name}")
            name, _, idx = name.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if name not in ("cpu", "cuda", "meta"):
            raise RuntimeError(f"Expected one of cpu, cuda, meta device type at start of device string: {type}")
        if index is not None:
            index = int(index)
            if index < 0:
                raise RuntimeError(f"Device index must not be negative, got {index}")
        self.type = name
        self.index = index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if not isinstance(other, device):
            return NotImplemented
        return self.type == (<device>other).type and self.index == (<device>other).index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))


cdef device CPU = device("cpu")


cdef device as_device(object obj):
    if obj is None:
        return CPU
    if isinstance(obj, device):
        d = <device>obj
    elif isinstance(obj, str):
        d = device(obj)
    elif isinstance(obj, int):
        raise RuntimeError(f"device index {obj} given without a device type: CUDA devices are not available")
    else:
        raise TypeError(f"expected a tensorlib.device or a string, but got {type(obj).__name__}")
    if d.type == "cpu":
        if d.index not in (None, 0):
            raise RuntimeError(f"CPU device index must be 0 or None, got {d.index}")
        return CPU
    raise RuntimeError(f"device '{d}' is not available: tensorlib has no CUDA back end in this build")


@cython.final
cdef class Allocator:
    """The allocator of one device. Counters are exact: allocated bytes are the rounded sizes
    of the live blocks it handed out.

    >>> tensorlib.memory.memory_allocated()
    0
    """

    def __init__(self, device dev):
        self.device = dev

    cdef char* malloc(self, int64_t nbytes, int64_t* rounded) except NULL:
        cdef char* raw
        cdef char* p
        cdef int64_t size
        if nbytes < 0 or nbytes > INT64_MAX - ROUND:
            raise RuntimeError(f"Trying to create tensor with invalid size: {nbytes} bytes")
        # Round up so that counters match what a caching allocator would hand out.
        size = ((nbytes + ROUND - 1) // ROUND) * ROUND
        if size == 0:
            size = ROUND
        # Aligned by hand: plain malloc is served from glibc's per-thread cache, while
        # posix_memalign splits and frees chunks on every call (~100 ns against ~20 ns for a
        # small tensor). The distance back to the malloc'd pointer (16..64 bytes: malloc
        # aligns to 16) is kept in the byte just before the aligned block; see free().
        raw = <char*>c_malloc(<size_t>size + ALIGNMENT)
        if raw == NULL:
            raise OutOfMemoryError(f"CPU allocator: can't allocate memory: you tried to allocate "
                                   f"{nbytes} bytes (allocated: {self.allocated_current} bytes)")
        p = <char*>((<uintptr_t>raw + ALIGNMENT) & ~(<uintptr_t>(ALIGNMENT - 1)))
        (<uint8_t*>p)[-1] = <uint8_t>(p - raw)
        rounded[0] = size
        self.allocated_current += size
        self.allocated_total += size
        if self.allocated_current > self.allocated_peak:
            self.allocated_peak = self.allocated_current
        self.count_current += 1
        self.count_total += 1
        if self.count_current > self.count_peak:
            self.count_peak = self.count_current
        self.requested_current += nbytes
        return p

    cdef void free(self, char* ptr, int64_t rounded, int64_t nbytes) noexcept:
        c_free(ptr - (<uint8_t*>ptr)[-1])       # back to what malloc() returned
        self.allocated_current -= rounded
        self.freed_total += rounded
        self.count_current -= 1
        self.count_freed += 1
        self.requested_current -= nbytes

    def memory_stats(self):
        """PyTorch-named counters of this device as a flat dict."""
        return {
            "allocated_bytes.all.current": self.allocated_current,
            "allocated_bytes.all.peak": self.allocated_peak,
            "allocated_bytes.all.allocated": self.allocated_total,
            "allocated_bytes.all.freed": self.freed_total,
            "allocation.all.current": self.count_current,
            "allocation.all.peak": self.count_peak,
            "allocation.all.allocated": self.count_total,
            "allocation.all.freed": self.count_freed,
            "requested_bytes.all.current": self.requested_current,
        }

    def reset_peak_stats(self):
        self.allocated_peak = self.allocated_current
        self.count_peak = self.count_current

    def reset_accumulated_stats(self):
        self.allocated_total = 0
        self.freed_total = 0
        self.count_total = 0
        self.count_freed = 0


cdef Allocator CPU_ALLOCATOR = Allocator(CPU)


cdef Allocator allocator_for(device dev):
    if dev.type == "cpu":
        return CPU_ALLOCATOR
    raise RuntimeError(f"no allocator for device '{dev}'")


def get_allocator(dev=None):
    """The allocator of a device (CPU when ``dev`` is None)."""
    return allocator_for(as_device(dev))


@cython.final
@cython.no_gc
cdef class Storage:
    """A block of bytes on a device: owned (from the device's allocator) or borrowed.

    >>> tensorlib.zeros(4).untyped_storage().nbytes()
    16
    """

    def __dealloc__(self):
        if self.allocator is not None and self.data != NULL:
            self.allocator.free(self.data, self.alloc_size, self._nbytes)
            self.data = NULL

    def nbytes(self):
        """Size of the block in bytes."""
        return self._nbytes

    def size(self):
        return self._nbytes

    def __len__(self):
        return self._nbytes

    def data_ptr(self):
        return <size_t>self.data

    def element_size(self):
        return 1

    @property
    def is_borrowed(self):
        return self.allocator is None

    @property
    def role_name(self):
        return ROLE_NAMES[self.role]

    def __repr__(self):
        return f"<tensorlib.UntypedStorage of {self._nbytes} bytes on {self.device}>"


cdef Storage new_storage(int64_t nbytes, device dev):
    cdef Storage s = Storage.__new__(Storage)
    cdef Allocator a = allocator_for(dev)
    cdef int64_t rounded = 0
    s.device = dev
    if nbytes > 0:
        s.data = a.malloc(nbytes, &rounded)
        s.allocator = a
        s.alloc_size = rounded
    s._nbytes = nbytes
    return s


cdef Storage borrow_storage(char* data, int64_t nbytes, object owner, device dev):
    cdef Storage s = Storage.__new__(Storage)
    s.data = data
    s._nbytes = nbytes
    s.owner = owner
    s.device = dev
    return s
