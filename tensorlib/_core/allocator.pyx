"""Devices, the per-device allocator (the one door for tensor memory) and Storage.

Every byte of tensor data comes from ``new_storage`` (the door), which asks the device's
``Allocator``; that single door is what makes the counters exact, the profiler complete and the
planner possible. The allocator is a caching allocator written in C (``cpu_alloc.c``): blocks
carved out of mmap'd segments, reused best-fit, split and merged, under its own mutex.
Storage either owns a block from its device's allocator, or a slice of a planner's arena
(``planned_by``), or borrows memory from an owner object such as a NumPy array, which it keeps
alive; borrowed memory is not ours and is not counted.

Memory hooks (the contract with the profiler and the planner, MEMHOOKS.md): each thread has a
list of hook objects, innermost last, read with one C thread-local load (nothing happens when
it is empty). For a request of ``nbytes > 0`` the door asks ``hook.serve(nbytes, device)``,
innermost hook first; a non-zero return is a 64-byte-aligned address in memory the hook owns,
and the storage is built on it (``allocator`` None, ``planned_by`` the hook): its rounded size
counts in ``allocated_bytes``/``requested_bytes`` but it is not an allocator request
(``allocation.*`` unchanged). Then every hook gets ``after_alloc(storage)`` (0-byte storages
too). Before the memory goes back, ``on_free(storage)`` goes to the freeing thread's hooks and
always to ``planned_by``: from ``Storage`` finalization (tp_finalize) for Python hooks (one
that keeps the storage resurrects it, safely; its memory then goes back with the last
reference), from ``__dealloc__`` for pure C hooks (``MemoryHook.c_pure``: the planner's
arena, called through its vtable with no list walk when it is the thread's only hook).
Setting ``storage.role`` calls ``on_role(storage, old, new)``.
Memory requested and freed while a hook method runs is not reported to hooks (so a hook may
allocate without recursing), except that ``planned_by`` always learns of its slices' frees.
Exceptions from ``serve``/``after_alloc``/``on_role`` propagate; those from ``on_free`` are
reported as unraisable (a free cannot fail).
"""
cimport cython
from cpython.ref cimport PyObject, Py_INCREF, Py_DECREF
from cpython.mem cimport PyMem_Malloc, PyMem_Free
from cpython.exc cimport PyErr_Fetch, PyErr_Restore
from libc.stdint cimport int64_t, int32_t, uint64_t, INT64_MAX
from libc.stdint cimport uint8_t, uintptr_t, intptr_t
from libc.stdio cimport fprintf, stderr
from libc.string cimport memcpy
import os

ROLE_NAMES = ("unknown", "parameter", "buffer", "input", "activation", "saved-for-backward",
              "gradient", "optimizer-state", "temporary")
ROLE_CODES = {name: i for i, name in enumerate(ROLE_NAMES)}
cdef int _num_roles = len(ROLE_NAMES)       # (checked on every role change: a C int)

class OutOfMemoryError(RuntimeError, MemoryError):
    """The allocator could not get memory: the system refused, or the memory limit
    (``tensorlib.memory.set_per_process_memory_limit``) would be exceeded even after releasing
    the cache. A RuntimeError, as PyTorch raises (``torch.OutOfMemoryError``), and a
    MemoryError, as Python code expects. Nothing already allocated is affected.

    >>> issubclass(tensorlib.OutOfMemoryError, RuntimeError)
    True
    """


cdef enum:
    ALIGNMENT = 64      # bytes; a cache line, and enough for any vector load
    ROUND = 512         # requests are rounded up to this (TL_ALLOC_ROUND)


cdef extern from "cpu_alloc.h" nogil:
    ctypedef struct tl_allocator:
        pass
    ctypedef struct tl_stat:
        int64_t current, peak, allocated, freed
    ctypedef struct tl_alloc_stats:
        tl_stat allocation[3]
        tl_stat allocated_bytes[3]
        tl_stat requested_bytes[3]
        tl_stat active[3]
        tl_stat active_bytes[3]
        tl_stat reserved_bytes[3]
        tl_stat segment[3]
        tl_stat inactive_split[3]
        tl_stat inactive_split_bytes[3]
        tl_stat arena_bytes[3]
        int64_t num_alloc_retries, num_ooms, num_device_alloc, num_device_free
    ctypedef struct tl_alloc_backend:
        void* (*reserve)(void* ctx, int64_t size, int pool) noexcept
        void (*release)(void* ctx, void* ptr, int64_t size) noexcept
        void* ctx
    ctypedef struct tl_block_info:
        uintptr_t segment_address
        int64_t segment_size
        int32_t pool, stream
        uintptr_t address
        int64_t size, requested
        int32_t allocated, kind
    enum:
        TL_ALLOC_OK, TL_ALLOC_ERR_SYSTEM, TL_ALLOC_ERR_LIMIT, TL_ALLOC_ERR_INVALID, TL_ALLOC_ERR_META
        TL_KIND_TENSOR, TL_KIND_ARENA
        TL_POOL_ALL, TL_POOL_SMALL, TL_POOL_LARGE
    const tl_alloc_backend tl_cpu_mmap_backend
    const tl_alloc_backend tl_cpu_malloc_backend
    const tl_alloc_backend tl_noaccess_backend
    tl_allocator* tl_alloc_create(const tl_alloc_backend* backend, int caching)
    int tl_alloc_malloc(tl_allocator* a, int64_t nbytes, int32_t stream, int32_t kind,
                        void** out, int64_t* rounded)
    int tl_alloc_free(tl_allocator* a, void* ptr, int64_t rounded, int64_t nbytes, int32_t kind)
    void tl_alloc_note_external(tl_allocator* a, int64_t rounded, int64_t nbytes, int sign)
    int64_t tl_alloc_empty_cache(tl_allocator* a)
    void tl_alloc_set_limit(tl_allocator* a, int64_t limit)
    int64_t tl_alloc_get_limit(tl_allocator* a)
    void tl_alloc_get_stats(tl_allocator* a, tl_alloc_stats* out)
    void tl_alloc_reset_peak(tl_allocator* a)
    void tl_alloc_reset_accumulated(tl_allocator* a)
    int64_t tl_alloc_snapshot(tl_allocator* a, tl_block_info* out, int64_t cap)
    int tl_alloc_stress(tl_allocator* a, int64_t iters, int64_t max_bytes, uint64_t seed,
                        int32_t stream)


# Per-thread state of the door: the hook list (a Python list, or NULL when empty), its only
# hook when that one is pure (borrowed from the list; NULL otherwise), whether the list holds
# an impure hook, the depth of hook calls in progress, and the name of the op running (for
# attribution; optional).
cdef extern from *:
    """
    static __thread PyObject* tl_mem_hooks = NULL;
    static __thread PyObject* tl_sole_hook = NULL;
    static __thread int tl_impure_hooks = 0;
    static __thread int tl_in_hook = 0;
    static __thread PyObject* tl_current_op = NULL;
    static int64_t tl_next_alloc_id = 0;   /* guarded by the GIL: the door always holds it */
    """
    PyObject* tl_mem_hooks
    PyObject* tl_sole_hook
    int tl_impure_hooks
    int tl_in_hook
    PyObject* tl_current_op
    int64_t tl_next_alloc_id


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
            self.kind = (<device>type).kind
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
        self.kind = DEVICE_CPU if name == "cpu" else DEVICE_META if name == "meta" else DEVICE_CUDA

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
# Tensors with shape, dtype and strides but no data: ops run their checks and allocate (bytes
# are counted as on the CPU) but no kernel runs. See tensorlib.memory.estimate.
cdef device META = device("meta")


cdef device as_device(object obj):
    if obj is None:
        return CPU
    if isinstance(obj, device):
        d = <device>obj
    elif isinstance(obj, str):
        d = device(obj)
    elif isinstance(obj, int) and not isinstance(obj, bool):
        # PyTorch: a bare index names a CUDA device
        if obj < 0:
            raise RuntimeError(f"Device index must not be negative, got {obj}")
        return _cuda_device(obj)
    else:
        raise TypeError(f"expected a tensorlib.device or a string, but got {type(obj).__name__}")
    if d.kind == DEVICE_CPU:
        if d.index not in (None, 0):
            raise RuntimeError(f"CPU device index must be 0 or None, got {d.index}")
        return CPU
    if d.kind == DEVICE_META:
        if d.index not in (None, 0):
            raise RuntimeError(f"meta device index must be 0 or None, got {d.index}")
        return META
    return _cuda_device(d.index)


# ---- CUDA devices ----------------------------------------------------------------------------
# A CUDA device exists when the runtime (tensorlib.cuda._runtime: pycuda or the emulator,
# chosen at the first use of a cuda device) has it. Each index has one canonical device
# object (ops compare devices by identity) and one caching allocator whose segments come from
# the runtime; the caching allocator never reads or writes the memory it hands out.

cdef list _CUDA_DEVICES = []
cdef list _CUDA_ALLOCATORS = []
cdef object _cuda_runtime_mod = None


cdef object _cuda_rt():
    global _cuda_runtime_mod
    if _cuda_runtime_mod is None:
        from tensorlib.cuda import _runtime
        _cuda_runtime_mod = _runtime
    return _cuda_runtime_mod.get_runtime()


cdef device _cuda_device(object index):
    cdef int n
    if not _CUDA_DEVICES:
        try:
            n = _cuda_rt().device_count()
        except ImportError:
            raise           # TENSORLIB_CUDA=pycuda without pycuda or a driver: says what
        except RuntimeError as e:
            raise RuntimeError(f"device 'cuda' is not available: {e}") from None
        for i in range(n):
            _CUDA_DEVICES.append(device("cuda", i))
    if index is None:
        from tensorlib.cuda import current_device
        index = current_device()
    if not 0 <= index < len(_CUDA_DEVICES):
        raise RuntimeError(f"CUDA error: invalid device ordinal: device cuda:{index} does not "
                           f"exist ({len(_CUDA_DEVICES)} CUDA device(s))")
    return <device>_CUDA_DEVICES[index]


cdef void* _cuda_reserve(void* ctx, int64_t size, int pool) noexcept with gil:
    try:
        return <void*><uintptr_t>_cuda_rt().reserve(<intptr_t>ctx, size)
    except BaseException:
        # out of device memory (or any runtime failure): the allocator empties its cache,
        # retries, and then raises OutOfMemoryError naming the request
        return NULL


cdef void _cuda_release(void* ctx, void* ptr, int64_t size) noexcept with gil:
    try:
        _cuda_rt().release(<intptr_t>ctx, <uintptr_t>ptr)
    except BaseException:
        fprintf(stderr, b"tensorlib: releasing CUDA memory failed\n")


cdef object _cuda_allocator_or_none(device dev):
    """The allocator of a CUDA device that has one (no lookup that could raise)."""
    if dev.kind == DEVICE_CUDA and dev.index is not None and dev.index < len(_CUDA_ALLOCATORS):
        return _CUDA_ALLOCATORS[dev.index]
    return None


cdef object _cuda_mod = None


cdef int32_t _cuda_current_stream_id(int index) except? -1:
    global _cuda_mod
    if _cuda_mod is None:
        import tensorlib.cuda
        _cuda_mod = tensorlib.cuda
    return _cuda_mod._current_id(index)


# Frees waiting for other streams (record_stream): (allocator, address, rounded, nbytes,
# events recorded on those streams at the free). Released, in order, once their events have
# completed: checked at every device allocation and empty_cache().
cdef list _CUDA_DEFERRED = []


cdef void _cuda_defer_free(Allocator a, char* data, int64_t rounded, int64_t nbytes,
                           object streams) noexcept:
    cdef object events
    try:
        events = [s.record_event() for s in streams]
        _CUDA_DEFERRED.append((a, <uintptr_t>data, rounded, nbytes, events))
    except BaseException:
        # (interpreter exit, or a stream that cannot record): wait instead of risking reuse
        try:
            for s in streams:
                s.synchronize()
        except BaseException:
            pass
        a.free(data, rounded, nbytes)


cdef int _cuda_release_deferred() except -1:
    cdef Allocator a
    if not _CUDA_DEFERRED:
        return 0
    keep = []
    for item in _CUDA_DEFERRED:
        if all(e.query() for e in item[4]):
            a = <Allocator>item[0]
            a.free(<char*><uintptr_t>item[1], item[2], item[3])
        else:
            keep.append(item)
    _CUDA_DEFERRED[:] = keep
    return 0


# the segment source of each device (tl_alloc_create copies it; static, so nothing is lost)
cdef enum:
    MAX_CUDA_DEVICES = 64
cdef tl_alloc_backend _CUDA_SEGMENTS[MAX_CUDA_DEVICES]


cdef Allocator _cuda_allocator(device dev):
    cdef tl_alloc_backend* seg
    cdef Allocator a
    if dev.index >= MAX_CUDA_DEVICES:
        raise RuntimeError(f"tensorlib supports at most {MAX_CUDA_DEVICES} CUDA devices")
    while len(_CUDA_ALLOCATORS) <= dev.index:
        _CUDA_ALLOCATORS.append(None)
    a = _CUDA_ALLOCATORS[dev.index]
    if a is None:
        seg = &_CUDA_SEGMENTS[<int>dev.index]
        seg.reserve = _cuda_reserve
        seg.release = _cuda_release
        seg.ctx = <void*><intptr_t>dev.index
        a = Allocator.__new__(Allocator)
        a.device = dev
        a.impl = tl_alloc_create(seg, 1)
        if a.impl == NULL:
            raise MemoryError("cannot create the CUDA allocator")
        a.caching = True
        _CUDA_ALLOCATORS[dev.index] = a
    return a


cdef inline int64_t _rounded(int64_t nbytes) noexcept:
    return ((nbytes + ROUND - 1) // ROUND) * ROUND


cdef inline tl_allocator* _impl(Allocator a) noexcept:
    return <tl_allocator*>a.impl


cdef str _fmt_bytes(int64_t n):
    """1536 -> '1.50 KiB' (exact bytes are given next to it where it matters)."""
    cdef double v = <double>n
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if -1024.0 < v < 1024.0 or unit == "TiB":
            return f"{n} B" if unit == "B" else f"{v:.2f} {unit}"
        v /= 1024.0


_STAT_NAMES = ("allocation", "allocated_bytes", "requested_bytes", "active", "active_bytes",
               "reserved_bytes", "segment", "inactive_split", "inactive_split_bytes", "arena_bytes")
_POOL_NAMES = ("all", "small_pool", "large_pool")
_FIELD_NAMES = ("current", "peak", "allocated", "freed")


cdef dict _stats_dict(tl_alloc_stats* st):
    cdef tl_stat* arrays[10]
    arrays[0] = st.allocation
    arrays[1] = st.allocated_bytes
    arrays[2] = st.requested_bytes
    arrays[3] = st.active
    arrays[4] = st.active_bytes
    arrays[5] = st.reserved_bytes
    arrays[6] = st.segment
    arrays[7] = st.inactive_split
    arrays[8] = st.inactive_split_bytes
    arrays[9] = st.arena_bytes
    out = {}
    cdef int i, p
    for i in range(10):
        for p in range(3):
            s = arrays[i][p]
            prefix = f"{_STAT_NAMES[i]}.{_POOL_NAMES[p]}."
            out[prefix + "current"] = s.current
            out[prefix + "peak"] = s.peak
            out[prefix + "allocated"] = s.allocated
            out[prefix + "freed"] = s.freed
    out["num_alloc_retries"] = st.num_alloc_retries
    out["num_ooms"] = st.num_ooms
    out["num_device_alloc"] = st.num_device_alloc
    out["num_device_free"] = st.num_device_free
    return {k: out[k] for k in sorted(out)}


def _caching_from_env():
    """TENSORLIB_CACHING=0 turns caching off: one malloc/free per storage (ASAN, debugging)."""
    return os.environ.get("TENSORLIB_CACHING", "1").strip().lower() not in ("0", "false", "no", "off")


cdef int _raise_alloc_error(Allocator self, int rc, int64_t nbytes) except -1:
    """Raise the error of a failed request: the request, allocated and reserved bytes, the limit."""
    cdef tl_alloc_stats st
    if rc == TL_ALLOC_ERR_INVALID:
        raise RuntimeError(f"Trying to create tensor with invalid size: {nbytes} bytes")
    tl_alloc_get_stats(_impl(self), &st)
    cdef int64_t limit = tl_alloc_get_limit(_impl(self))
    cdef int64_t alloc = st.allocated_bytes[0].current, res = st.reserved_bytes[0].current
    where = f"{self.device.type.upper()} allocator"
    usage = (f"{alloc} bytes ({_fmt_bytes(alloc)}) allocated, {res} bytes ({_fmt_bytes(res)}) "
             f"reserved, limit: " + ("none" if limit < 0 else f"{limit} bytes ({_fmt_bytes(limit)})"))
    if rc == TL_ALLOC_ERR_LIMIT:
        raise OutOfMemoryError(
            f"{where}: out of memory: can't allocate memory: you tried to allocate {nbytes} "
            f"bytes ({_fmt_bytes(nbytes)}) and the memory limit would be exceeded even after "
            f"releasing cached blocks; {usage}. Free tensors you no longer need, or raise the "
            f"limit with tensorlib.memory.set_per_process_memory_limit().")
    if rc == TL_ALLOC_ERR_META:
        raise OutOfMemoryError(f"{where}: can't allocate memory for its bookkeeping; {usage}")
    raise OutOfMemoryError(f"{where}: can't allocate memory: you tried to allocate {nbytes} "
                           f"bytes ({_fmt_bytes(nbytes)}); the system refused; {usage}")



cdef list _segments_of(Allocator self, tl_block_info* info, int64_t n):
    """Group snapshot blocks into PyTorch-style segment dicts."""
    cdef int64_t i
    segments = []
    seg = None
    for i in range(n):
        b = info[i]
        if seg is None or seg["address"] != b.segment_address:
            seg = {"device": 0 if self.device.index is None else self.device.index,
                   "address": b.segment_address, "total_size": b.segment_size,
                   "stream": b.stream, "segment_type": "small" if b.pool == TL_POOL_SMALL else "large",
                   "allocated_size": 0, "active_size": 0, "requested_size": 0, "blocks": []}
            segments.append(seg)
        state = "active_allocated" if b.allocated else "inactive"
        seg["blocks"].append({"address": b.address, "size": b.size,
                              "requested_size": b.requested, "state": state,
                              "kind": "arena" if b.kind == TL_KIND_ARENA else "tensor"})
        if b.allocated:
            seg["active_size"] += b.size
            seg["requested_size"] += b.requested
            if b.kind == TL_KIND_TENSOR:
                seg["allocated_size"] += b.size
    return segments


@cython.final
cdef class Allocator:
    """The caching allocator of one device: the only source of tensor memory.

    Requests are rounded up to 512 bytes and served 64-byte aligned from segments it holds
    (``reserved``); freed blocks are kept for reuse until ``empty_cache()``. Counters are exact
    and follow PyTorch's ``memory_stats()`` names; see ``tensorlib.memory``.

    >>> a = tensorlib._core.allocator.get_allocator()
    >>> a.memory_stats()["reserved_bytes.all.current"] >= a.memory_stats()["allocated_bytes.all.current"]
    True
    """

    def __init__(self, device dev):
        if self.impl != NULL:
            raise RuntimeError("Allocator is already initialized")
        self.device = dev
        caching = _caching_from_env()
        cdef const tl_alloc_backend* segments = &tl_cpu_mmap_backend
        if dev.kind == DEVICE_META:
            segments = &tl_noaccess_backend
        elif not caching:
            segments = &tl_cpu_malloc_backend
        self.impl = tl_alloc_create(segments, 1 if caching else 0)
        if self.impl == NULL:
            raise MemoryError("cannot create the allocator")
        self.caching = caching

    cdef char* malloc(self, int64_t nbytes, int64_t* rounded) except NULL:
        cdef void* p = NULL
        cdef int32_t stream = 0
        if self.device.kind == DEVICE_CUDA:
            # a device block belongs to the pool of the stream current at its allocation
            _cuda_release_deferred()
            stream = _cuda_current_stream_id(self.device.index)
        cdef int rc = tl_alloc_malloc(_impl(self), nbytes, stream, TL_KIND_TENSOR, &p, rounded)
        if rc != TL_ALLOC_OK:
            _raise_alloc_error(self, rc, nbytes)
        return <char*>p

    cdef void free(self, char* ptr, int64_t rounded, int64_t nbytes) noexcept:
        if tl_alloc_free(_impl(self), ptr, rounded, nbytes, TL_KIND_TENSOR) != 0:
            # never expected: a pointer this allocator did not hand out. Leak rather than corrupt.
            fprintf(stderr, b"tensorlib: allocator asked to free an unknown pointer %p\n", ptr)

    cdef void note_external(self, int64_t rounded, int64_t nbytes, int sign) noexcept:
        tl_alloc_note_external(_impl(self), rounded, nbytes, sign)

    def memory_stats(self):
        """PyTorch-named counters of this device as a flat dict (keys sorted)."""
        cdef tl_alloc_stats st
        tl_alloc_get_stats(_impl(self), &st)
        return _stats_dict(&st)

    def reset_peak_stats(self):
        """Every ``*.peak`` counter restarts from its current value."""
        tl_alloc_reset_peak(_impl(self))

    def reset_accumulated_stats(self):
        """Zero every ``*.allocated`` and ``*.freed`` counter and the ``num_*`` counters."""
        tl_alloc_reset_accumulated(_impl(self))

    def empty_cache(self):
        """Return every entirely free segment to the system; the number of bytes released."""
        if self.device.kind == DEVICE_CUDA:
            _cuda_release_deferred()
        return tl_alloc_empty_cache(_impl(self))

    def set_memory_limit(self, limit):
        """Cap reserved bytes at ``limit`` (None: no cap)."""
        if limit is None:
            tl_alloc_set_limit(_impl(self), -1)
            return
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise TypeError(f"memory limit must be an int number of bytes or None, but got "
                            f"{type(limit).__name__}")
        if limit < 0:
            raise ValueError(f"memory limit must be >= 0 bytes, but got {limit}")
        tl_alloc_set_limit(_impl(self), min(limit, INT64_MAX))

    def get_memory_limit(self):
        """The cap on reserved bytes, or None."""
        cdef int64_t limit = tl_alloc_get_limit(_impl(self))
        return None if limit < 0 else limit

    def memory_snapshot(self):
        """Segments (creation order) with their blocks (address order), like PyTorch's
        ``torch.cuda.memory_snapshot()``."""
        cdef int64_t n = 256, cap = 0, i
        cdef tl_block_info* info = NULL
        try:
            while n > cap:          # blocks may appear between two calls: ask until it fits
                cap = n + 64
                PyMem_Free(info)
                info = <tl_block_info*>PyMem_Malloc(<size_t>cap * sizeof(tl_block_info))
                if info == NULL:
                    raise MemoryError()
                n = tl_alloc_snapshot(_impl(self), info, cap)
            return _segments_of(self, info, n)
        finally:
            PyMem_Free(info)

    def memory_summary(self, abbreviated=False):
        """A readable table of the counters (PyTorch's ``memory_summary`` layout)."""
        s = self.memory_stats()
        limit = self.get_memory_limit()
        w = 75
        rows = [("Allocated memory", "allocated_bytes", True),
                ("Active memory", "active_bytes", True),
                ("Requested memory", "requested_bytes", True),
                ("Reserved memory", "reserved_bytes", True),
                ("Non-releasable memory", "inactive_split_bytes", True),
                ("Allocations", "allocation", False),
                ("Active allocs", "active", False),
                ("Segments", "segment", False),
                ("Non-releasable allocs", "inactive_split", False)]
        line = "|" + "=" * w + "|"
        thin = "|" + "-" * w + "|"
        title = f"tensorlib {str(self.device).upper()} memory summary (caching {'on' if self.caching else 'off'})"
        info = (f"limit: {'none' if limit is None else _fmt_bytes(limit)}   "
                f"alloc retries: {s['num_alloc_retries']}   OOMs: {s['num_ooms']}   "
                f"arenas: {_fmt_bytes(s['arena_bytes.all.current'])}")
        out = [line, "|" + title.center(w) + "|", thin, "|" + info.center(w) + "|", line,
               "|" + "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  " + "|",
               thin]
        for label, key, is_bytes in rows:
            pools = (("all", label), ("large_pool", "      from large pool"),
                     ("small_pool", "      from small pool"))
            for pool, text in (pools[:1] if abbreviated else pools):
                cells = []
                for f in _FIELD_NAMES:
                    v = s[f"{key}.{pool}.{f}"]
                    cells.append(_fmt_bytes(v) if is_bytes else str(v))
                out.append("| " + f"{text:<22}" + "|" + "|".join(f"{c:>11} " for c in cells) + "|")
            out.append(thin)
        out[-1] = line
        return "\n".join(out) + "\n"

    def _raw_malloc(self, int64_t nbytes, int stream=0, bint arena=False):
        """A block straight from the allocator, not wrapped in a storage: its address.
        ``arena=True``: a planner's arena, reserved and active but not itself allocated bytes
        (its slices count, as they are served). Otherwise an allocator request like a
        storage's. ``stream`` picks the pools (CPU tensors use stream 0). Give it back with
        ``_raw_free(address, nbytes, arena)``."""
        cdef void* p = NULL
        cdef int64_t rounded = 0
        cdef int rc = tl_alloc_malloc(_impl(self), nbytes, stream,
                                      TL_KIND_ARENA if arena else TL_KIND_TENSOR, &p, &rounded)
        if rc != TL_ALLOC_OK:
            _raise_alloc_error(self, rc, nbytes)
        return <uintptr_t>p

    def _raw_free(self, uintptr_t address, int64_t nbytes, bint arena=False):
        """Give back a block from ``_raw_malloc(nbytes, ..., arena)``."""
        cdef int64_t rounded = _rounded(nbytes) if nbytes > 0 else ROUND
        if tl_alloc_free(_impl(self), <void*>address, rounded, nbytes,
                         TL_KIND_ARENA if arena else TL_KIND_TENSOR) != 0:
            raise ValueError(f"address {address:#x} is not a live block of this allocator")

    def _stress(self, int64_t iters, int64_t max_bytes=1 << 20, uint64_t seed=1, int stream=0):
        """Test helper: random mallocs/frees in C with the GIL released (0 = no overlap seen)."""
        cdef int rc
        cdef tl_allocator* impl = _impl(self)
        if iters < 0 or max_bytes < 1:
            raise ValueError("iters must be >= 0 and max_bytes >= 1")
        with nogil:
            rc = tl_alloc_stress(impl, iters, max_bytes, seed, stream)
        return rc


cdef Allocator CPU_ALLOCATOR = Allocator(CPU)
cdef Allocator META_ALLOCATOR = Allocator(META)


cdef Allocator allocator_for(device dev):
    if dev.kind == DEVICE_CPU:
        return CPU_ALLOCATOR
    if dev.kind == DEVICE_META:
        return META_ALLOCATOR
    if dev.kind == DEVICE_CUDA and dev.index is not None:
        return _cuda_allocator(<device>_cuda_device(dev.index))
    raise RuntimeError(f"no allocator for device '{dev}'")


def get_allocator(dev=None):
    """The allocator of a device (CPU when ``dev`` is None).

    >>> tensorlib._core.allocator.get_allocator("cpu").device
    device(type='cpu')
    """
    return allocator_for(as_device(dev))


@cython.final
@cython.no_gc          # its fields cannot form cycles; and a GC clear must never drop
cdef class ArenaBlock: # `allocator` before __dealloc__ gives the block back
    """A block from a device's allocator for a planner's arena. It is reserved and active
    memory (``memory_stats()["arena_bytes.all.current"]``) but not itself allocated bytes: the
    slices served from it count as allocated bytes while they live. Freed with the object.

    >>> b = tensorlib._core.allocator._new_arena_block(4096); b.nbytes
    4096
    """

    def __dealloc__(self):
        if self.data != NULL and self.allocator is not None:
            tl_alloc_free(_impl(self.allocator), self.data, self.rounded, self.nbytes, TL_KIND_ARENA)
            self.data = NULL

    @property
    def address(self):
        return <uintptr_t>self.data

    def __repr__(self):
        return f"<ArenaBlock of {self.nbytes} bytes on {self.device}>"


def _new_arena_block(int64_t nbytes, dev=None):
    """Reserve ``nbytes`` (> 0) on a device for an arena (64-byte aligned)."""
    cdef device d = as_device(dev)
    cdef Allocator a = allocator_for(d)
    cdef ArenaBlock b = ArenaBlock.__new__(ArenaBlock)
    cdef void* p = NULL
    if nbytes <= 0:
        raise ValueError(f"arena size must be positive, got {nbytes}")
    cdef int rc = tl_alloc_malloc(_impl(a), nbytes, 0, TL_KIND_ARENA, &p, &b.rounded)
    if rc != TL_ALLOC_OK:
        _raise_alloc_error(a, rc, nbytes)
    b.data = <char*>p
    b.nbytes = nbytes
    b.allocator = a
    b.device = d
    return b


# ---------------------------------------------------------------- memory hooks (MEMHOOKS.md)

# Storage finalization. An impure hook's on_free runs in tp_finalize, not in __dealloc__: it
# may keep the storage it is given (even just through an exception's traceback), and CPython
# then resurrects it safely instead of freeing an object still referenced; its memory goes
# back when the last reference really goes. The slot costs ~20 ns on every storage's death, so
# it is installed only while some thread has an impure hook or some impure hook's slice is
# alive (all under the GIL). Pure hooks (MemoryHook.c_pure: C code that keeps nothing) hear of
# frees in __dealloc__, so a planned call alone never needs the finalizer.
cdef extern from *:
    """
    static void tl_set_finalizer(PyObject* type, destructor fn) {
        ((PyTypeObject*)type)->tp_finalize = fn;
    }
    """
    ctypedef void (*destructor)(PyObject*)
    void tl_set_finalizer(object type, destructor fn)

cdef Py_ssize_t _n_hook_threads = 0     # threads whose hook list is not empty
cdef Py_ssize_t _n_impure_threads = 0   # threads whose hook list holds an impure hook
cdef Py_ssize_t _n_live_planned = 0     # live storages served by an impure hook
cdef bint _finalizer_on = True          # Storage.__del__ is the slot until the first update


cdef void _storage_finalize(PyObject* o) noexcept:
    cdef Storage s = <Storage>o
    cdef PyObject* etype
    cdef PyObject* evalue
    cdef PyObject* etb
    if s.alloc_id != 0 and (_hooks_active() or s.planned_by is not None):
        PyErr_Fetch(&etype, &evalue, &etb)      # a finalizer keeps the current exception
        _notify_free(s, False)
        PyErr_Restore(etype, evalue, etb)


cdef void _update_finalizer() noexcept:
    global _finalizer_on
    cdef bint want = _n_impure_threads > 0 or _n_live_planned > 0
    if want != _finalizer_on:
        tl_set_finalizer(Storage, <destructor>_storage_finalize if want else <destructor>NULL)
        _finalizer_on = want


cdef inline bint _is_pure(object h) noexcept:
    return isinstance(h, MemoryHook) and (<MemoryHook>h).c_pure


cdef void _hooks_changed(list hooks, int new_thread) noexcept:
    """After a push or pop: the thread's sole pure hook, its impure count, the finalizer.
    ``new_thread``: +1 when the thread's list was just made, -1 when just emptied."""
    global tl_sole_hook, tl_impure_hooks, _n_impure_threads, _n_hook_threads
    cdef int impure = 0
    _n_hook_threads += new_thread
    for h in hooks:
        if not _is_pure(h):
            impure += 1
    tl_sole_hook = <PyObject*>hooks[0] if len(hooks) == 1 and impure == 0 else NULL
    if (impure > 0) != (tl_impure_hooks > 0):
        _n_impure_threads += 1 if impure > 0 else -1
    tl_impure_hooks = impure
    _update_finalizer()


cdef void _planned_gone() noexcept:
    global _n_live_planned
    _n_live_planned -= 1
    if _n_live_planned == 0:
        _update_finalizer()


def _push_memory_hook(hook):
    """Install ``hook`` as the innermost memory hook of the current thread.

    >>> class Seen:
    ...     def after_alloc(self, storage): print(storage.nbytes())
    >>> h = Seen(); _push_memory_hook(h); x = tensorlib.empty(3); _pop_memory_hook(h)
    12
    """
    push_memory_hook(hook)


def _pop_memory_hook(hook):
    """Remove ``hook`` (its innermost occurrence) from the current thread's hooks."""
    pop_memory_hook(hook)


cdef int push_memory_hook(object hook) except -1:
    global tl_mem_hooks
    cdef list hooks
    if tl_mem_hooks == NULL:
        hooks = [hook]
        Py_INCREF(hooks)                # the thread-local slot's reference
        tl_mem_hooks = <PyObject*>hooks
        _hooks_changed(hooks, 1)
    else:
        hooks = <list>tl_mem_hooks
        hooks.append(hook)
        _hooks_changed(hooks, 0)
    return 0


cdef int pop_memory_hook(object hook) except -1:
    global tl_mem_hooks
    cdef list hooks
    cdef Py_ssize_t i
    if tl_mem_hooks != NULL:
        hooks = <list>tl_mem_hooks
        for i in range(len(hooks) - 1, -1, -1):
            if hooks[i] is hook:
                del hooks[i]
                if not hooks:           # empty: back to the zero-cost state
                    tl_mem_hooks = NULL
                    Py_DECREF(hooks)
                    _hooks_changed(hooks, -1)
                else:
                    _hooks_changed(hooks, 0)
                return 0
    raise ValueError(f"{hook!r} is not a memory hook of this thread")


def _memory_hooks():
    """The current thread's memory hooks, outermost first (a new list)."""
    return [] if tl_mem_hooks == NULL else list(<list>tl_mem_hooks)


def _set_current_op(name):
    """Set the current thread's op name (None clears it) for attribution; returns the previous
    one, so calls nest: ``prev = _set_current_op("add"); ...; _set_current_op(prev)``."""
    global tl_current_op
    cdef PyObject* old = tl_current_op
    if name is not None:
        Py_INCREF(name)
        tl_current_op = <PyObject*>name
    else:
        tl_current_op = NULL
    if old == NULL:
        return None
    prev = <object>old
    Py_DECREF(prev)                     # the slot's reference; `prev` holds its own
    return prev


def _get_current_op():
    """The current thread's op name, or None."""
    return None if tl_current_op == NULL else <object>tl_current_op


cdef inline bint _hooks_active() noexcept:
    return tl_mem_hooks != NULL and tl_in_hook == 0


cdef class MemoryHook:
    """Optional base class of a memory hook with C entry points: the door calls ``c_serve``,
    ``c_after_alloc``, ``c_on_free`` and ``c_on_role`` through the vtable instead of looking up
    Python methods (a planner's replay needs that speed; override them in a cdef subclass).
    By default they call the Python methods of the same names when present, so any object
    with Python methods ``serve``/``after_alloc``/``on_free``/``on_role`` is a hook too.
    ``c_wants_after_alloc = False`` skips the after_alloc calls altogether.

    >>> class Count(tensorlib._core.allocator.MemoryHook):
    ...     n = 0
    ...     def after_alloc(self, storage): Count.n += 1
    """

    def __cinit__(self):
        self.c_wants_after_alloc = True
        self.c_pure = False

    cdef int64_t c_serve(self, int64_t nbytes, device dev) except -1:
        f = getattr(self, "serve", None)
        return _address(f(nbytes, dev)) if f is not None else 0

    cdef int c_after_alloc(self, Storage s) except -1:
        f = getattr(self, "after_alloc", None)
        if f is not None:
            f(s)
        return 0

    cdef int c_on_free(self, Storage s) except -1:
        f = getattr(self, "on_free", None)
        if f is not None:
            f(s)
        return 0

    cdef int c_on_role(self, Storage s, int old_role, int new_role) except -1:
        f = getattr(self, "on_role", None)
        if f is not None:
            f(s, old_role, new_role)
        return 0


cdef int64_t _address(object got) except -1:
    """A serve() result as an address: None/0/False mean "not served"."""
    if not got:
        return 0
    cdef int64_t addr = got
    if addr <= 0:
        raise ValueError(f"a memory hook's serve() returned {got!r}, not an address")
    return addr


# A hook runs with the door's hooks muted (it may allocate or free tensors without recursing
# into itself): frees and role changes go through these, the door's requests through
# _hooked_alloc.

cdef void _hook_on_free(object h, Storage s) noexcept:
    # noexcept: an error is reported as unraisable and the free goes on
    global tl_in_hook
    tl_in_hook += 1
    try:
        if isinstance(h, MemoryHook):
            (<MemoryHook>h).c_on_free(s)
        else:
            f = getattr(h, "on_free", None)
            if f is not None:
                f(s)
    finally:
        tl_in_hook -= 1


cdef int _hook_on_role(object h, Storage s, int old, int new) except -1:
    global tl_in_hook
    tl_in_hook += 1
    try:
        if isinstance(h, MemoryHook):
            (<MemoryHook>h).c_on_role(s, old, new)
        else:
            f = getattr(h, "on_role", None)
            if f is not None:
                f(s, old, new)
    finally:
        tl_in_hook -= 1
    return 0


cdef void _notify_free(Storage s, bint pure) noexcept:
    """Tell the pure hooks (from __dealloc__) or the impure ones (from the finalizer) of a
    free: the freeing thread's hooks unless muted, and always ``planned_by``."""
    cdef object planner = s.planned_by
    cdef bint planner_told = False
    cdef list hooks
    cdef Py_ssize_t i = 0
    if _hooks_active():
        hooks = <list>tl_mem_hooks      # our own reference; a hook may push or pop meanwhile
        while i < len(hooks):
            hook = hooks[i]
            if _is_pure(hook) == pure:
                _hook_on_free(hook, s)
            planner_told = planner_told or hook is planner
            i += 1
    if planner is not None and not planner_told and _is_pure(planner) == pure:
        _hook_on_free(planner, s)


cdef void _pure_on_free(MemoryHook h, Storage s) noexcept:
    h.c_on_free(s)          # an error is reported as unraisable: a free cannot fail


cdef inline void _tell_pure_free(Storage s) noexcept:
    """__dealloc__'s notice to pure hooks; the common case (the thread's only hook is the
    planner whose arena holds the storage, or an allocator block) without a list walk."""
    cdef object sole, planner
    if tl_sole_hook != NULL and tl_in_hook == 0:
        sole = <object>tl_sole_hook
        _pure_on_free(<MemoryHook>sole, s)
        planner = s.planned_by
        if planner is not None and planner is not sole and _is_pure(planner):
            _pure_on_free(<MemoryHook>planner, s)
    else:
        _notify_free(s, True)


cdef inline int _take_block(Storage s, Allocator a, int64_t nbytes) except -1:
    """Build ``s`` on a block of the device's allocator (an allocator request)."""
    cdef int64_t rounded = 0
    s.data = a.malloc(nbytes, &rounded)
    s.allocator = a
    s.alloc_size = rounded
    return 0


cdef inline void _number(Storage s, int64_t nbytes) noexcept:
    """The last step of every door path: the size and a new id (hooks hear of its free from
    here on)."""
    global tl_next_alloc_id
    s._nbytes = nbytes
    tl_next_alloc_id += 1
    s.alloc_id = tl_next_alloc_id


cdef int _serve_at(Storage s, Allocator a, object h, bint pure, int64_t addr,
                   int64_t nbytes) except -1:
    """Build ``s`` on ``addr``, served by hook ``h`` (``pure``: _is_pure(h)): counted as
    allocated bytes."""
    global _n_live_planned
    if addr % ALIGNMENT != 0:
        raise RuntimeError(f"memory hook {h!r} served address {addr:#x}, which is "
                           f"not {ALIGNMENT}-byte aligned")
    s.data = <char*><uintptr_t>addr
    s.alloc_size = _rounded(nbytes)
    s.planned_by = h
    a.note_external(s.alloc_size, nbytes, 1)
    if not pure:
        _n_live_planned += 1
        _update_finalizer()
    return 0


cdef int _sole_alloc(Storage s, Allocator a, int64_t nbytes, MemoryHook h) except -1:
    """The door's path when the thread's only hook is pure (a planner's arena): no muting and
    no list walk; otherwise as _hooked_alloc."""
    cdef int64_t addr = 0
    if nbytes > 0:
        addr = h.c_serve(nbytes, s.device)
        if addr != 0:
            _serve_at(s, a, h, True, addr, nbytes)
        else:
            _take_block(s, a, nbytes)
    _number(s, nbytes)
    if h.c_wants_after_alloc:
        h.c_after_alloc(s)
    return 0


cdef int _hooked_alloc(Storage s, Allocator a, int64_t nbytes) except -1:
    """The door's path when hooks are installed: serve (innermost first), else the allocator;
    then after_alloc for every hook that wants it. The hooks run muted, once for the whole
    request (muting per call cost more than a planner's whole replay of the request)."""
    global tl_in_hook
    # our own reference to the list, indexed with bounds checks: a hook may push or pop
    # meanwhile (a copy per request would cost more than the rest of this path)
    cdef list hooks = <list>tl_mem_hooks
    cdef int64_t addr = 0
    cdef Py_ssize_t i
    tl_in_hook += 1
    try:
        if nbytes > 0:
            for i in range(len(hooks) - 1, -1, -1):
                if i >= len(hooks):
                    continue
                h = hooks[i]
                if isinstance(h, MemoryHook):
                    addr = (<MemoryHook>h).c_serve(nbytes, s.device)
                else:
                    f = getattr(h, "serve", None)
                    addr = _address(f(nbytes, s.device)) if f is not None else 0
                if addr == 0:
                    continue
                _serve_at(s, a, h, _is_pure(h), addr, nbytes)
                break
            else:
                _take_block(s, a, nbytes)
        _number(s, nbytes)
        i = 0
        while i < len(hooks):
            h = hooks[i]
            if isinstance(h, MemoryHook):
                if (<MemoryHook>h).c_wants_after_alloc:
                    (<MemoryHook>h).c_after_alloc(s)
            else:
                f = getattr(h, "after_alloc", None)
                if f is not None:
                    f(s)
            i += 1
    finally:
        tl_in_hook -= 1
    return 0


cdef int storage_set_role(Storage s, int role) except -1:
    """Set a storage's role; hooks hear of a change (on_role(storage, old, new))."""
    if role < 0 or role >= _num_roles:
        raise ValueError(f"storage role must be in 0..{len(ROLE_NAMES) - 1} (see ROLE_NAMES), got {role}")
    cdef int old = s._role
    s._role = role
    cdef list hooks
    cdef Py_ssize_t i = 0
    if old != role and _hooks_active():
        hooks = <list>tl_mem_hooks
        while i < len(hooks):
            _hook_on_role(hooks[i], s, old, role)
            i += 1
    return 0


@cython.final
@cython.no_gc
cdef class Storage:
    """A block of bytes on a device: owned (from the device's allocator), a slice of a
    planner's arena (``planned_by``), or borrowed (e.g. from a NumPy array).

    >>> tensorlib.zeros(4).untyped_storage().nbytes()
    16
    """

    def __del__(self):
        # Declared so that Cython's dealloc calls tp_finalize at all; the slot itself is
        # _storage_finalize or nothing, as _update_finalizer sets it (from import on).
        _storage_finalize(<PyObject*>self)

    def __dealloc__(self):
        # (a plain global first: no thread-local read when no thread has hooks)
        if self.alloc_id != 0 and (self.planned_by is not None
                                   or (_n_hook_threads > 0 and tl_mem_hooks != NULL)):
            _tell_pure_free(self)       # pure hooks: they keep nothing, so here is safe
        if self.data != NULL:
            if self.cuda_streams and self.allocator is not None:
                # (borrowed device memory is not ours to reuse: nothing to defer)
                _cuda_defer_free(self.allocator, self.data, self.alloc_size, self._nbytes,
                                 self.cuda_streams)
            elif self.allocator is not None:
                self.allocator.free(self.data, self.alloc_size, self._nbytes)
            elif self.planned_by is not None:
                # (the sole hook is pure: skip the type check in the common case)
                if <PyObject*>self.planned_by != tl_sole_hook and not _is_pure(self.planned_by):
                    _planned_gone()
                # an arena slice: its bytes leave the device's counters (no lookup that could
                # raise here; the module's allocator may already be gone at interpreter exit)
                a = CPU_ALLOCATOR if self.device is CPU else (
                    META_ALLOCATOR if self.device is META else _cuda_allocator_or_none(self.device))
                if a is not None:
                    (<Allocator>a).note_external(self.alloc_size, self._nbytes, -1)
            elif self.alloc_size > 0:
                # adopted memory (adopt_storage): it leaves the counters; `owner` (released
                # after this) unmaps it
                a = CPU_ALLOCATOR if self.device is CPU else None
                if a is not None:
                    (<Allocator>a).note_external(self.alloc_size, self._nbytes, -1)
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
        """True when the memory is not ours (e.g. a NumPy array's): not counted."""
        return self.allocator is None and self.planned_by is None and self.alloc_size == 0

    @property
    def _owner(self):
        """The object keeping borrowed or adopted memory alive (None for allocator blocks)."""
        return self.owner

    @property
    def role(self):
        """What the storage holds (a ROLE_* code; names in ROLE_NAMES). Setting it (an int or
        a name) tells the memory hooks.

        >>> s = tensorlib.zeros(4).untyped_storage(); s.role = "parameter"; s.role_name
        'parameter'
        """
        return self._role

    @role.setter
    def role(self, value):
        if isinstance(value, str):
            if value not in ROLE_NAMES:
                raise ValueError(f"unknown storage role {value!r}; expected one of {ROLE_NAMES}")
            value = ROLE_NAMES.index(value)
        storage_set_role(self, value)

    @property
    def role_name(self):
        return ROLE_NAMES[self._role]

    def __repr__(self):
        return f"<tensorlib.UntypedStorage of {self._nbytes} bytes on {self.device}>"


cdef Storage new_storage(int64_t nbytes, device dev):
    """THE door: every storage of tensor memory is made here."""
    cdef Storage s = Storage.__new__(Storage)
    cdef Allocator a = allocator_for(dev)
    s.device = dev
    if tl_current_op != NULL:
        s.op = <object>tl_current_op
    if _hooks_active():
        if tl_sole_hook != NULL:
            _sole_alloc(s, a, nbytes, <MemoryHook>tl_sole_hook)
        else:
            _hooked_alloc(s, a, nbytes)
        return s
    if nbytes > 0:
        _take_block(s, a, nbytes)
    _number(s, nbytes)
    return s


cdef Storage borrow_storage(char* data, int64_t nbytes, object owner, device dev):
    cdef Storage s = Storage.__new__(Storage)
    s.data = data
    s._nbytes = nbytes
    s.owner = owner
    s.device = dev
    return s


cdef Storage adopt_storage(char* data, int64_t nbytes, object owner, device dev, int role):
    """Memory mapped from outside tensorlib (a shared-memory segment a DataLoader worker
    filled) made a counted storage: its bytes enter the device's allocated and requested
    counters while it lives, the memory hooks hear of it as an allocation with ``role``, and
    ``owner`` keeps the mapping alive until the storage dies (its release unmaps it). Not an
    allocator request: the memory limit does not apply, the bytes are already mapped."""
    global tl_in_hook
    if dev.kind != DEVICE_CPU:
        raise RuntimeError(f"only CPU memory can be adopted, not '{dev}' memory")
    if role < 0 or role >= _num_roles:
        raise ValueError(f"storage role must be in 0..{_num_roles - 1} (see ROLE_NAMES), "
                         f"got {role}")
    cdef Storage s = Storage.__new__(Storage)
    cdef Allocator a = allocator_for(dev)
    cdef list hooks
    cdef Py_ssize_t i = 0
    s.data = data
    s.owner = owner
    s.device = dev
    s._role = role
    if tl_current_op != NULL:
        s.op = <object>tl_current_op
    if nbytes > 0:
        s.alloc_size = _rounded(nbytes)
        a.note_external(s.alloc_size, nbytes, 1)
    _number(s, nbytes)
    if _hooks_active():
        hooks = <list>tl_mem_hooks
        tl_in_hook += 1
        try:
            while i < len(hooks):
                h = hooks[i]
                if isinstance(h, MemoryHook):
                    if (<MemoryHook>h).c_wants_after_alloc:
                        (<MemoryHook>h).c_after_alloc(s)
                else:
                    f = getattr(h, "after_alloc", None)
                    if f is not None:
                        f(s)
                i += 1
        finally:
            tl_in_hook -= 1
    return s


def _adopt_memory(uintptr_t address, int64_t nbytes, owner, role="input"):
    """A counted CPU storage on ``nbytes`` at ``address``, memory that ``owner`` keeps mapped
    (e.g. an ``mmap.mmap`` of a shared-memory segment); ``role`` a name or code. The bytes
    count as allocated while the storage lives; then ``owner`` is released.

    >>> import mmap, ctypes
    >>> m = mmap.mmap(-1, 4096); addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
    >>> s = _adopt_memory(addr, 4096, (m,)); s.role_name, s.is_borrowed
    ('input', False)
    """
    if nbytes < 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes}")
    if address == 0 and nbytes > 0:
        raise ValueError("cannot adopt memory at address 0")
    code = ROLE_NAMES.index(role) if isinstance(role, str) else role
    return adopt_storage(<char*>address, nbytes, owner, CPU, code)


def _rehome_storage(Storage s, uintptr_t address, owner):
    """Move ``s``'s bytes to ``address`` (memory ``owner`` keeps mapped, at least ``s.nbytes()``
    long) and give its old block back: every tensor on ``s`` now reads the new memory (what
    ``Tensor.share_memory_()`` does with a shared-memory segment). The bytes stay counted."""
    cdef Allocator a
    if s.planned_by is not None:
        raise RuntimeError("cannot move a storage served from a memory planner's arena")
    if s.device.kind != DEVICE_CPU:
        raise RuntimeError(f"only CPU storages can move to shared memory, not '{s.device}' ones")
    if s._nbytes > 0:
        memcpy(<void*>address, s.data, <size_t>s._nbytes)
    if s.allocator is not None:
        a = s.allocator
        if s.data != NULL:
            a.free(s.data, s.alloc_size, s._nbytes)
        s.allocator = None
        s.alloc_size = 0
    if s.alloc_size == 0 and s._nbytes > 0:
        s.alloc_size = _rounded(s._nbytes)
        CPU_ALLOCATOR.note_external(s.alloc_size, s._nbytes, 1)
    s.data = <char*>address
    s.owner = owner


_update_finalizer()     # no hooks yet: storages die without a finalizer call
