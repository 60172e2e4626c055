# Published Cython interface of devices, allocators and storages. Append-only (see dtype.pxd).
from libc.stdint cimport int64_t

cdef enum StorageRole:
    ROLE_UNKNOWN = 0
    ROLE_PARAMETER = 1
    ROLE_BUFFER = 2
    ROLE_INPUT = 3
    ROLE_ACTIVATION = 4
    ROLE_SAVED = 5
    ROLE_GRADIENT = 6
    ROLE_OPTIMIZER_STATE = 7
    ROLE_TEMPORARY = 8

cdef enum DeviceKind:
    DEVICE_CPU = 0
    DEVICE_META = 1
    DEVICE_CUDA = 2

cdef class device:
    cdef readonly str type
    cdef readonly object index      # None or int
    cdef readonly int kind          # DEVICE_*: what back ends and allocators are looked up by

cdef class Allocator:
    """One per device: the only door through which tensor memory is obtained."""
    cdef readonly device device
    # exact counters (names follow PyTorch's memory_stats keys)
    # not read or written: the counters live in the C allocator, under its mutex. The fields
    # stay because this .pxd is append-only (extensions compiled against it rely on the layout)
    cdef int64_t allocated_current, allocated_peak, allocated_total, freed_total
    cdef int64_t count_current, count_peak, count_total, count_freed
    cdef int64_t requested_current
    cdef char* malloc(self, int64_t nbytes, int64_t* rounded) except NULL
    cdef void free(self, char* ptr, int64_t rounded, int64_t nbytes) noexcept
    cdef void* impl                  # the C caching allocator (tl_allocator*, cpu_alloc.h)
    cdef void note_external(self, int64_t rounded, int64_t nbytes, int sign) noexcept
    cdef readonly bint caching       # False under TENSORLIB_CACHING=0 (one malloc per storage)

cdef class Storage:
    cdef char* data
    cdef int64_t _nbytes             # usable bytes
    cdef int64_t alloc_size          # bytes counted by the allocator (0 when borrowed)
    cdef Allocator allocator         # None when the memory is borrowed
    cdef object owner                # the object that owns borrowed memory; kept alive
    cdef readonly device device
    cdef int _role                   # ROLE_*; the Python property `role` notifies memory hooks
    cdef object __weakref__
    # the profiler's and the planner's fields (see docs/MEMHOOKS.md)
    cdef public object planned_by    # the hook whose arena holds the bytes (allocator is None)
    cdef public object site          # the profiler's source-site record (opaque)
    cdef public object op            # name of the op that made it (opaque)
    cdef readonly int64_t alloc_id   # per-process increasing id; 0 for borrowed memory
    # CUDA: the streams other than its own that used the memory (Tensor.record_stream); the
    # block returns to its stream's pool only after their work queued before the free is done
    cdef public object cuda_streams


cdef class MemoryHook:
    """Optional C-level base of a memory hook: the door calls these through the vtable
    instead of looking up Python methods. The defaults call the Python methods of the same
    names when present."""
    cdef bint c_wants_after_alloc   # skip after_alloc calls when False
    cdef int64_t c_serve(self, int64_t nbytes, device dev) except -1
    cdef int c_after_alloc(self, Storage s) except -1
    cdef int c_on_free(self, Storage s) except -1
    cdef int c_on_role(self, Storage s, int old_role, int new_role) except -1
    # set once (in __cinit__) by a subclass whose c_* methods run only C code: they neither
    # allocate nor free tensors nor keep the storage they are given. The door then calls it
    # unmuted, with no list walk when it is the thread's only hook, and tells it of frees in
    # Storage.__dealloc__ rather than through the finalizer (the planner's arena)
    cdef bint c_pure


cdef class ArenaBlock:
    """One block from a device allocator for a planner's arena: reserved and active, not
    allocated bytes (the slices it serves are what is counted)."""
    cdef char* data
    cdef readonly int64_t nbytes
    cdef int64_t rounded
    cdef Allocator allocator
    cdef readonly device device

cdef device CPU
cdef device META
cdef device as_device(object obj)                 # device, "cpu", "cpu:0", None -> device
cdef Allocator allocator_for(device dev)
cdef Storage new_storage(int64_t nbytes, device dev)
cdef Storage borrow_storage(char* data, int64_t nbytes, object owner, device dev)
cdef int storage_set_role(Storage s, int role) except -1   # notifies memory hooks
# the current thread's memory hooks (see allocator.pyx); _push_memory_hook/_pop_memory_hook
# are the Python names
cdef int push_memory_hook(object hook) except -1
cdef int pop_memory_hook(object hook) except -1
# memory mapped from outside (a DataLoader worker's shared-memory segment) made a counted
# storage with a role; `owner` keeps it mapped and is released with the storage
cdef Storage adopt_storage(char* data, int64_t nbytes, object owner, device dev, int role)
