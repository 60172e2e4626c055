"""The planner's replay runtime: a memory hook that serves a call's allocation requests from
slices of one arena, in C (the door calls it through the MemoryHook vtable, so a replayed
request costs less than a malloc).

One ``ArenaHook`` owns one arena block and is used by one call at a time. A call starts
with the recorded paths (plans) of its signature, most recently used first; the ones whose
requests so far match the call's (size and device) stay candidates. The k-th request is
served at the current candidate's ``offsets[k]`` only if no candidate lets request k escape
(the call may be on that path, where it is the result) and the slice overlaps no arena slice
alive right now (lifetimes may differ from the recording: two live tensors never share
bytes). When the current candidate stops matching, the next one takes over; when none is
left, the rest of the call goes to the allocator. The hook records every request of the call
(size, device, and when it was freed, counted in requests) so that the Python planner can
learn escapes, merge lifetimes or plan a new path.

Frees reach the hook through ``Storage.planned_by`` from any thread; all bookkeeping is C code
run under the GIL without calling back into Python, so it is atomic.
"""
cimport cython
from libc.stdint cimport int64_t, uintptr_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memset

from cpython.long cimport PyLong_FromLongLong
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.ref cimport Py_INCREF, PyObject

from tensorlib._core.allocator cimport (Storage, device, MemoryHook, ArenaBlock,
                                        push_memory_hook, pop_memory_hook)
from tensorlib._core.tensor cimport TensorBase

import threading
from tensorlib._core.allocator import _new_arena_block
from tensorlib._core.tensor import _is_grad_enabled, _is_inference_mode


cdef int64_t* _grow(int64_t* p, int64_t n) except NULL:
    cdef int64_t* q = <int64_t*>realloc(p, <size_t>(n if n > 0 else 1) * sizeof(int64_t))
    if q == NULL:
        raise MemoryError()
    return q


# ---- input signatures ---------------------------------------------------------------------------

cdef object _sig_fallback = None        # the Python signature of other objects (planner.py)


def _register_sig_fallback(fn):
    global _sig_fallback
    _sig_fallback = fn


cdef tuple _ints(int n, const int64_t* v):
    cdef tuple t = PyTuple_New(n)
    cdef int i
    for i in range(n):
        o = PyLong_FromLongLong(v[i])
        Py_INCREF(o)
        PyTuple_SET_ITEM(t, i, o)
    return t


cpdef object sig_of(object x):
    """What part of a call's signature ``x`` is: a tensor by its shape, strides, dtype,
    device and requires_grad; numbers, strings and containers by value; other objects as
    the planner's Python fallback says."""
    cdef TensorBase t
    cdef type tp = type(x)
    cdef device d
    if isinstance(x, TensorBase):
        t = <TensorBase>x
        d = t._storage.device
        # only objects with C-level hashing and equality: the key is hashed on every call
        return ("T", _ints(t._ndim, t._shape), _ints(t._ndim, t._strides), t._dtype,
                d.type, d.index, t._requires_grad)
    if tp is int or tp is bool or tp is str or x is None:
        return x
    if tp is float:
        return x if x == x else ("nan",)
    if tp is tuple or tp is list:
        return (tp.__name__,) + tuple([sig_of(v) for v in x])
    if tp is dict:                       # e.g. a model's parameters by name
        return ("dict",) + tuple([(k, sig_of(v)) for k, v in (<dict>x).items()])
    return _sig_fallback(x)


def signature(tuple args, dict kwargs, grad_mode, inference_mode):
    """The key a call is planned under."""
    return _signature(args, kwargs, grad_mode, inference_mode)


cdef tuple _signature(tuple args, dict kwargs, object grad_mode, object inference_mode):
    cdef Py_ssize_t i, n = len(args)
    cdef tuple a = PyTuple_New(n)
    for i in range(n):
        o = sig_of(args[i])
        Py_INCREF(o)
        PyTuple_SET_ITEM(a, i, o)
    return (grad_mode, inference_mode, a,
            tuple([(k, sig_of(v)) for k, v in kwargs.items()]) if kwargs else ())


# ---- plans -------------------------------------------------------------------------------------

@cython.final
cdef class PlanArrays:
    """The replay view of one plan: request sizes (bytes), devices, arena offsets (-1: served
    by the allocator, e.g. a tensor that escapes the call) and the recorded lifetimes
    (``free_at``: requests made when it was freed, -1 if it outlived the call)."""
    cdef readonly int64_t n
    cdef int64_t* sizes
    cdef int64_t* offsets
    cdef int64_t* free_at
    cdef list devices
    cdef object single_device             # the device of every request, or None

    def __init__(self, sizes, offsets, devices, free_at):
        cdef int64_t i
        if not (len(sizes) == len(offsets) == len(devices) == len(free_at)):
            raise ValueError("PlanArrays: sizes, offsets, devices and free_at differ in length")
        self.n = len(sizes)
        self.sizes = _grow(NULL, self.n)
        self.offsets = _grow(NULL, self.n)
        self.free_at = _grow(NULL, self.n)
        for i in range(self.n):
            self.sizes[i] = sizes[i]
            self.offsets[i] = offsets[i]
            self.free_at[i] = free_at[i]
        self.devices = list(devices)
        if self.devices and all(d is self.devices[0] for d in self.devices):
            self.single_device = self.devices[0]

    def __dealloc__(self):
        free(self.sizes)
        free(self.offsets)
        free(self.free_at)


cdef inline bint _same_device(PlanArrays q, int64_t k, object dev) except -1:
    if q.single_device is dev:
        return True
    d = q.devices[k]
    return d is dev or d == dev


@cython.final
cdef class ArenaHook(MemoryHook):
    """Serves one call at a time from an arena block (``None``: record only)."""
    cdef readonly ArenaBlock block
    cdef char* base
    cdef readonly int64_t capacity
    cdef readonly bint active
    # the recorded paths of this signature, most recently used first; the ones still matching
    # the requests seen so far in this call are candidates; offsets come from the current one
    cdef list plans                       # keeps the PlanArrays below alive during a call
    cdef int nplans
    cdef char cand[16]
    # the candidate plans' arrays as raw pointers, so a request reads them with no list
    # indexing or reference counting (c_serve runs once per allocation of a replayed call)
    cdef int64_t p_n[16]
    cdef int64_t* p_sizes[16]
    cdef int64_t* p_offsets[16]
    cdef PyObject* p_single[16]            # borrowed: the plan's single device, or NULL
    cdef readonly int plan_index          # the current plan (index into plans)
    # arena slices live now (any call): [start, end) offsets and request index
    cdef int64_t* live_start
    cdef int64_t* live_end
    cdef int64_t* live_k
    cdef readonly int64_t live_count
    cdef int64_t live_cap
    # this call's record
    cdef int64_t k                        # requests so far
    cdef int64_t* rec_size
    cdef int64_t* rec_free                # request count at the free; -1 while alive
    cdef int64_t* rec_arena               # 1 when served from the arena
    cdef int64_t rec_cap
    cdef int* rec_devi                    # per request: index into devs
    cdef list devs                        # the devices seen (usually one)
    cdef object last_dev
    cdef int last_devi
    cdef dict ext                         # alloc_id -> k for requests the allocator served
    cdef int64_t pending                  # request just declined, waiting for its storage
    cdef readonly int64_t departed_at     # first request no recorded path has (or -1)
    cdef readonly int64_t departed_plan   # plan_index in use at that point
    cdef readonly int64_t n_served, n_conflicts, n_switches

    def __cinit__(self):
        self.c_pure = True        # C bookkeeping only: the door's lean path (allocator.pxd)

    def __init__(self, block=None):
        if block is not None:
            self.block = <ArenaBlock?>block
            self.base = <char*><uintptr_t>block.address
            self.capacity = block.nbytes
        self.live_cap = 16
        self.live_start = _grow(NULL, self.live_cap)
        self.live_end = _grow(NULL, self.live_cap)
        self.live_k = _grow(NULL, self.live_cap)
        self.rec_cap = 0
        self.devs = []
        self.last_devi = -1
        self.ext = {}
        self.pending = -1
        self.departed_at = -1

    def __dealloc__(self):
        free(self.live_start)
        free(self.live_end)
        free(self.live_k)
        free(self.rec_size)
        free(self.rec_free)
        free(self.rec_arena)
        free(self.rec_devi)

    # ---- per call ----------------------------------------------------------------------------
    def begin(self, plans=()):
        """Start a call that replays one of ``plans`` (PlanArrays of the recorded paths of this
        signature, most recently used first; none: record only)."""
        self._begin(list(plans)[:16])

    cdef int _begin(self, list plans) except -1:
        cdef int64_t cap = 16
        cdef int j
        cdef PlanArrays q
        if self.active:
            raise RuntimeError("ArenaHook.begin: a call is already using this arena")
        if self.live_count:
            raise RuntimeError("ArenaHook.begin: arena slices of an earlier call are still alive")
        if len(plans) > 16:
            raise ValueError("ArenaHook.begin: at most 16 plans")
        self.plans = plans
        self.nplans = len(plans)
        for j in range(self.nplans):
            q = <PlanArrays?>self.plans[j]
            self.cand[j] = 1
            self.p_n[j] = q.n
            self.p_sizes[j] = q.sizes
            self.p_offsets[j] = q.offsets
            self.p_single[j] = <PyObject*>q.single_device if q.single_device is not None else NULL
            cap = max(cap, q.n + 16)
        self.plan_index = 0
        if cap > self.rec_cap:
            self._grow_rec(cap)
        self.ext.clear()
        self.k = 0
        self.pending = -1
        self.departed_at = -1
        self.departed_plan = -1
        self.n_served = self.n_conflicts = self.n_switches = 0
        self.active = True
        return 0

    def finish(self):
        """End the call. Returns the index of the plan whose path the call followed exactly,
        or -1 (a new path). ``record()`` then gives what the call did."""
        return self._finish()

    cdef int _finish(self) noexcept:
        cdef int j
        cdef int matched = -1
        self.active = False
        self.pending = -1
        self.ext.clear()
        if self.departed_at < 0:
            for j in range(self.nplans):
                if self.cand[j] and (<PlanArrays>self.plans[j]).n == self.k:
                    matched = j
                    break
        self.plans = None
        self.nplans = 0
        return matched

    def record(self):
        """The last call's requests: (sizes, free_at, devices, from_arena), free_at -1 for
        what was still alive when it returned (it escaped the call)."""
        cdef int64_t i
        if self.active:
            raise RuntimeError("ArenaHook.record: the call is still running")
        return ([self.rec_size[i] for i in range(self.k)],
                [self.rec_free[i] for i in range(self.k)],
                [self.devs[self.rec_devi[i]] for i in range(self.k)],
                [bool(self.rec_arena[i]) for i in range(self.k)])

    def lifetimes_grew(self, PlanArrays p):
        """Whether some request of the last call lived longer than ``p`` recorded (or escaped
        where it had not): ``p`` should then be planned again."""
        return self._lifetimes_grew(p)

    cdef bint _lifetimes_grew(self, PlanArrays p) noexcept:
        cdef int64_t i
        if p.n != self.k:
            return True
        for i in range(self.k):
            if p.free_at[i] == -1:
                continue
            if self.rec_free[i] == -1 or self.rec_free[i] > p.free_at[i]:
                return True
        return False

    cdef int _grow_rec(self, int64_t cap) except -1:
        self.rec_size = _grow(self.rec_size, cap)
        self.rec_free = _grow(self.rec_free, cap)
        self.rec_arena = _grow(self.rec_arena, cap)
        self.rec_devi = <int*>realloc(self.rec_devi, <size_t>cap * sizeof(int))
        if self.rec_devi == NULL:
            raise MemoryError()
        self.rec_cap = cap
        return 0

    # ---- the door's calls --------------------------------------------------------------------
    cdef int64_t c_serve(self, int64_t nbytes, device dev) except -1:
        cdef int64_t k, off, end, i
        cdef int j, alive
        cdef bint escapes
        if not self.active:
            return 0
        k = self.k
        if k >= self.rec_cap:
            self._grow_rec(2 * self.rec_cap + 16)
        self.k = k + 1
        self.rec_size[k] = nbytes
        self.rec_free[k] = -1
        self.rec_arena[k] = 0
        if dev is not self.last_dev:
            self._devi(dev)
        self.rec_devi[k] = self.last_devi
        self.pending = k
        self.c_wants_after_alloc = True
        if self.nplans == 0 or self.departed_at >= 0:
            return 0
        # which recorded paths still match; any that lets request k escape sends it to the
        # allocator (the call may be on that path: its result must not live in the arena)
        alive = 0
        escapes = False
        for j in range(self.nplans):
            if not self.cand[j]:
                continue
            if k >= self.p_n[j] or self.p_sizes[j][k] != nbytes or (
                    self.p_single[j] != <PyObject*>dev
                    and not _same_device(<PlanArrays>self.plans[j], k, dev)):
                self.cand[j] = 0
                continue
            alive += 1
            if self.p_offsets[j][k] < 0:
                escapes = True
        if alive == 0:
            self.departed_at = k
            self.departed_plan = self.plan_index
            return 0
        if not self.cand[self.plan_index]:
            for j in range(self.nplans):
                if self.cand[j]:
                    self.plan_index = j
                    self.n_switches += 1
                    break
        if escapes or self.base == NULL or dev is not self.block.device:
            return 0                          # (no arena: the hook only follows the paths)
        off = self.p_offsets[self.plan_index][k]
        end = off + nbytes
        if end > self.capacity:
            return 0
        for i in range(self.live_count):
            if self.live_start[i] < end and off < self.live_end[i]:
                self.n_conflicts += 1          # lifetimes differ from the plan's: allocator
                return 0
        if self.live_count == self.live_cap:
            self.live_cap *= 2
            self.live_start = _grow(self.live_start, self.live_cap)
            self.live_end = _grow(self.live_end, self.live_cap)
            self.live_k = _grow(self.live_k, self.live_cap)
        i = self.live_count
        self.live_start[i] = off
        self.live_end[i] = end
        self.live_k[i] = k
        self.live_count = i + 1
        self.rec_arena[k] = 1
        self.n_served += 1
        self.pending = -1
        self.c_wants_after_alloc = False      # served: nothing to link
        return <int64_t><uintptr_t>(self.base + off)

    cdef int _devi(self, object dev) except -1:
        cdef int i
        for i in range(len(self.devs)):
            if self.devs[i] is dev:
                break
        else:
            self.devs.append(dev)
            i = len(self.devs) - 1
        self.last_dev = dev
        self.last_devi = i
        return 0

    cdef int c_after_alloc(self, Storage s) except -1:
        if self.pending >= 0:
            if s.planned_by is not self:
                self.ext[s.alloc_id] = self.pending
            self.pending = -1
        return 0

    cdef int c_on_free(self, Storage s) except -1:
        cdef int64_t off, i, last, k
        if s.planned_by is self:
            off = s.data - self.base
            for i in range(self.live_count):
                if self.live_start[i] == off:
                    k = self.live_k[i]
                    last = self.live_count - 1
                    self.live_start[i] = self.live_start[last]
                    self.live_end[i] = self.live_end[last]
                    self.live_k[i] = self.live_k[last]
                    self.live_count = last
                    if self.active and k < self.k:
                        self.rec_free[k] = self.k
                    return 0
            return 0
        if self.active and self.ext:
            kk = self.ext.pop(s.alloc_id, None)
            if kk is not None:
                self.rec_free[<int64_t>kk] = self.k
        return 0

    cdef int c_on_role(self, Storage s, int old_role, int new_role) except -1:
        return 0

    # the plain-Python protocol of MEMHOOKS.md (for doors without the C fast path)
    def serve(self, int64_t nbytes, device dev):
        return self.c_serve(nbytes, dev)

    def after_alloc(self, Storage s):
        self.c_after_alloc(s)

    def on_free(self, Storage s):
        self.c_on_free(s)

    @property
    def requests(self):
        return self.k

    def __repr__(self):
        return (f"<ArenaHook capacity={self.capacity} live={self.live_count} "
                f"active={bool(self.active)}>")


# ---- the planned callable's call path ----------------------------------------------------------
# A replayed call is the common case and is all C: signature, lookup, arena, hooks, stats. The
# Python subclass (tensorlib.memory.planner.Planned) records, learns and plans.

@cython.final
cdef class PlanStats:
    """What the calls of a planned function did: ``calls``, ``recordings`` (first calls of a
    path), ``replays`` (calls served from a plan), ``fallbacks`` (calls, or their ends, that
    ran on the allocator: a new path, an arena tensor still alive, a re-entrant call),
    ``switches`` (replays that followed another recorded path than the one tried first:
    a branch of a dynamic graph), ``served`` (requests served from an arena), ``conflicts``
    (requests the allocator served because their slice was still in use: lifetimes that
    differ from the recording). Counted in C under the GIL: exact with many threads.

    >>> tensorlib.memory.planner.PlanStats().replays
    0
    """
    cdef readonly int64_t calls, recordings, replays, fallbacks, switches, served, conflicts

    _fields = ("calls", "recordings", "replays", "fallbacks", "switches", "served", "conflicts")

    def _add(self, int64_t recordings=0, int64_t replays=0, int64_t fallbacks=0,
             int64_t switches=0, int64_t served=0, int64_t conflicts=0):
        """Count one call."""
        self.calls += 1
        self.recordings += recordings
        self.replays += replays
        self.fallbacks += fallbacks
        self.switches += switches
        self.served += served
        self.conflicts += conflicts

    def as_dict(self):
        return {f: getattr(self, f) for f in self._fields}

    def __repr__(self):
        return "PlanStats(" + ", ".join(f"{k}={v}" for k, v in self.as_dict().items()) + ")"


@cython.final
cdef class PlanSet:
    """The recorded paths (``Plan`` objects) of one input signature, most recently used
    first, with their replay arrays and the device of the arena they share (None: nothing in
    any of them to plan). Never changed once made: a call reads it without a lock."""
    cdef readonly tuple plans
    cdef list arrays
    cdef readonly object device

    def __init__(self, plans):
        self.plans = tuple(plans)
        if not self.plans or len(self.plans) > 16:
            raise ValueError("PlanSet: 1 to 16 plans")
        self.arrays = [p.arrays for p in self.plans]
        self.device = next((p.device for p in self.plans if p.device is not None), None)


@cython.final
cdef class _ThreadCalls:
    """One thread's state for one planned function."""
    cdef bint busy                 # a call of the function runs on this thread
    cdef ArenaHook arena           # the thread's arena for it (None until needed)
    cdef ArenaHook recorder        # a hook without an arena: records a call

    cdef ArenaHook follower(self):
        """The thread's hook without an arena (made on first use)."""
        if self.recorder is None:
            self.recorder = ArenaHook(None)
        return self.recorder


cdef class PlannedBase:
    """The call path of ``tensorlib.memory.planner.Planned``: replays in C, and calls the
    subclass's ``_learn(key, hook, planset, matched)`` after a call that recorded, departed
    from its plans or changed their lifetimes."""
    cdef public object _fn
    cdef public object _sets             # signature -> PlanSet (an OrderedDict, LRU order)
    cdef public dict _need               # device -> the largest arena of the plans kept
    cdef object _tls
    cdef readonly PlanStats stats
    cdef public object last_plan

    def __cinit__(self, *args, **kwargs):
        self._tls = threading.local()
        self._need = {}
        self.stats = PlanStats()

    cdef _ThreadCalls _calls(self):
        st = getattr(self._tls, "s", None)
        if st is None:
            st = _ThreadCalls()
            self._tls.s = st
        return <_ThreadCalls>st

    def _drop_arena(self):
        """Forget this thread's arena (the next replay makes one)."""
        self._calls().arena = None

    def __call__(self, *args, **kwargs):
        cdef _ThreadCalls st = self._calls()
        cdef PlanSet ps
        cdef ArenaHook hook
        if st.busy:                          # re-entered on this thread: run it plainly
            self.stats.calls += 1
            self.stats.fallbacks += 1
            return self._fn(*args, **kwargs)
        key = _signature(args, kwargs, _is_grad_enabled(), _is_inference_mode())
        entry = self._sets.get(key)
        if entry is None:                    # first call of this signature: record it
            return self._run(st, key, st.follower(), None, args, kwargs)
        ps = <PlanSet?>entry
        hook = st.arena
        if hook is not None and hook.live_count:
            # an arena tensor of an earlier call is still alive: never overwrite it. This call
            # runs on the allocator; that arena is given up (it lives as long as its tensors).
            st.arena = None
            self.stats.calls += 1
            self.stats.fallbacks += 1
            self.last_plan = ps.plans[0]
            return self._fn(*args, **kwargs)
        dev = ps.device
        if dev is None:                      # nothing to plan on any path: follow them only
            hook = st.follower()
        else:
            need = self._need.get(dev, 0)
            if hook is None or hook.capacity < need or hook.block.device != dev:
                hook = st.arena = ArenaHook(_new_arena_block(need, dev))
        return self._run(st, key, hook, ps, args, kwargs)

    cdef object _run(self, _ThreadCalls st, object key, ArenaHook hook, PlanSet ps,
                     tuple args, dict kwargs):
        hook._begin(ps.arrays if ps is not None else [])
        try:
            push_memory_hook(hook)
        except BaseException:
            hook._finish()
            raise
        st.busy = True
        try:
            result = self._fn(*args, **kwargs)
        except BaseException:
            pop_memory_hook(hook)
            hook._finish()
            st.busy = False
            self.stats.calls += 1
            self.stats.fallbacks += ps is not None
            raise
        pop_memory_hook(hook)
        cdef int matched = hook._finish()    # what is alive now (result included) escaped
        st.busy = False
        if ps is not None and matched == 0 and not hook._lifetimes_grew(ps.arrays[0]):
            # the common case: the call followed the first path, within its lifetimes
            self.stats.calls += 1
            self.stats.replays += 1
            self.stats.served += hook.n_served
            self.stats.conflicts += hook.n_conflicts
            self.last_plan = ps.plans[0]
        else:
            self._learn(key, hook, ps, matched)
        return result
