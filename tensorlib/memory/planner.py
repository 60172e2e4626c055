"""Memory planning: record one call's allocations, pack them into one arena, replay.

``tensorlib.memory.plan(fn)`` (also a decorator) returns a callable. The first call for an
input signature runs ``fn`` while recording its allocation requests and their lifetimes, then
assigns every request that dies inside the call an offset in one arena (greedy by size with
best fit among the blocks whose lifetimes overlap, Pisarchyk & Lee 2020, keeping the best of
a few orderings). Later calls replay: the k-th request is served from its arena slice, with no
allocator traffic, when its size and device match the recording and the slice overlaps no
arena tensor alive at that moment.

Safety first: tensors that escape the call (returned, stored anywhere, still referenced after
``fn`` returns) are never arena-backed; a call that departs from its recording (a dynamic
graph took another branch) switches to another recorded path with the same requests so far,
or finishes on the allocator and a plan is recorded for the new path; an arena tensor still
alive when a new call begins is never overwritten (that call runs on the allocator). Planned
results are bit-identical to unplanned ones.

>>> import tensorlib
>>> @tensorlib.memory.plan
... def f(x):
...     return (x * 2).exp() + 1
>>> x = tensorlib.ones(1000)
>>> y1 = f(x); y2 = f(x)                   # recorded, then replayed
>>> y1.equal(y2)
True
>>> f.stats.recordings, f.stats.replays
(1, 1)
"""
import functools
import heapq
import threading
import time
import types
from collections import OrderedDict

from tensorlib._core import tensor as _C
from tensorlib._core.allocator import device as _device
from tensorlib._core.dtype import dtype as _dtype
from tensorlib._core import memplan as _memplan
from tensorlib._core.memplan import PlanArrays, PlanSet, PlanStats, PlannedBase

__all__ = ["plan", "Planned", "Plan", "PlanStats", "solve"]

ALIGN = 64                     # arena slices start on cache lines
MAX_PLANS = 4                  # plans kept per input signature (paths of a dynamic graph)
MAX_SIGNATURES = 16            # input signatures kept per planned function (LRU)
_ALIVE = -1                    # free_at of a request still alive when the call returned


def _round(n):
    """A request's bytes in the arena: whole cache lines (so every slice is 64-byte aligned).
    The lower bound and the naive total use the same rounding."""
    return (n + ALIGN - 1) // ALIGN * ALIGN


def _fmt_bytes(n):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n} B"


# ---- the offset problem --------------------------------------------------------------------

def _overlaps(free_at, blocks):
    """Pairs of blocks alive at the same time, as neighbour lists. Request i is alive from its
    request (time i) until the request count reached free_at[i]; i < j overlap iff
    free_at[i] > j."""
    nbrs = {b: [] for b in blocks}
    live = []                                   # heap of (free_at, block)
    for j in blocks:                            # blocks in request order
        while live and live[0][0] <= j:
            heapq.heappop(live)
        for _, i in live:
            nbrs[i].append(j)
            nbrs[j].append(i)
        heapq.heappush(live, (free_at[j], j))
    return nbrs


def _live_profile(size, free_at, blocks, n):
    """Bytes alive just after each request (a difference array over request times)."""
    d = [0] * (n + 1)
    for b in blocks:
        d[b] += size[b]
        d[min(free_at[b], n)] -= size[b]
    out, acc = [], 0
    for t in range(n):
        acc += d[t]
        out.append(acc)
    return out


def _greedy(order, size, nbrs, placed):
    """Place blocks in ``order``: each goes into the smallest gap between the blocks already
    placed that overlap it in time (best fit), or above them all."""
    off = dict(placed)
    for b in order:
        if b in off:
            continue
        sz = size[b]
        taken = sorted((off[x], off[x] + size[x]) for x in nbrs[b] if x in off)
        best, best_gap, prev = -1, None, 0
        for lo, hi in taken:
            gap = lo - prev
            if gap >= sz and (best_gap is None or gap < best_gap):
                best, best_gap = prev, gap
            if hi > prev:
                prev = hi
        off[b] = prev if best < 0 else best
    return off


def _pinned_ok(pinned, size, nbrs):
    """The pinned blocks that can keep their offsets: in request order, drop any that would
    share bytes with an earlier kept one it overlaps in time."""
    kept = {}
    for b in sorted(pinned):
        lo, hi = pinned[b], pinned[b] + size[b]
        if all(not (kept[x] < hi and lo < kept[x] + size[x]) for x in nbrs[b] if x in kept):
            kept[b] = lo
    return kept


def solve(sizes, free_at, pinned=None):
    """Offsets for requests (``sizes`` in bytes, ``free_at[k]``: how many requests had been
    made when request k was freed, or -1 if it outlived the call) in one arena.

    Returns ``(offsets, arena_bytes, lower_bound_bytes, naive_bytes, ordering)``; offsets are
    -1 for requests left to the allocator. Sizes are rounded up to 64 bytes; the lower bound
    (largest sum of bytes alive at once) and the naive total use the same rounding.

    >>> solve([100, 100, 100], [1, 2, 3])[:4]      # a chain: one slot reused
    ([0, 0, 0], 128, 128, 384)
    >>> solve([64, 64], [2, -1])[:4]               # the second escapes: not in the arena
    ([0, -1], 64, 64, 64)
    """
    n = len(sizes)
    blocks = [k for k in range(n) if free_at[k] != _ALIVE and sizes[k] > 0]
    size = {k: _round(sizes[k]) for k in blocks}
    naive = sum(size.values())
    offsets = [-1] * n
    if not blocks:
        return offsets, 0, 0, 0, "none"
    nbrs = _overlaps(free_at, blocks)
    prof = _live_profile(size, free_at, blocks, n)
    lower = max(prof)
    life = {b: free_at[b] - b for b in blocks}
    # the live bytes at the busiest moment of each block's life ("breadth" first)
    pressure = {b: max(prof[b:min(free_at[b], n)] or [0]) for b in blocks}
    orderings = {
        "size": sorted(blocks, key=lambda b: (-size[b], -life[b], b)),
        "size, then first": sorted(blocks, key=lambda b: (-size[b], b)),
        "breadth": sorted(blocks, key=lambda b: (-pressure[b], -size[b], b)),
        "area": sorted(blocks, key=lambda b: (-size[b] * life[b], b)),
        "lifetime": sorted(blocks, key=lambda b: (-life[b], -size[b], b)),
    }
    placed = _pinned_ok({b: o for b, o in (pinned or {}).items() if b in size}, size, nbrs)
    best = None
    for name, order in orderings.items():
        off = _greedy(order, size, nbrs, placed)
        arena = max(off[b] + size[b] for b in blocks)
        if best is None or arena < best[1]:
            best = (off, arena, name)
        if arena == lower:
            break                                # optimal: no ordering can do better
    off, arena, name = best
    for b in blocks:
        offsets[b] = off[b]
    return offsets, arena, lower, naive, name


def check_plan(sizes, free_at, offsets):
    """Raise AssertionError if two requests alive at the same time share bytes."""
    blocks = [k for k in range(len(sizes)) if offsets[k] >= 0]
    nbrs = _overlaps(free_at, blocks)
    for b in blocks:
        for x in nbrs[b]:
            if offsets[x] < offsets[b] + sizes[b] and offsets[b] < offsets[x] + sizes[x]:
                raise AssertionError(f"requests {b} and {x} are alive together and share bytes")


# ---- plans ------------------------------------------------------------------------------------

class Plan:
    """One recorded path of a planned function and its arena layout.

    ``arena_bytes`` (the arena), ``lower_bound_bytes`` (the largest sum of planned bytes
    alive at one time: no layout can use less), ``naive_bytes`` (every request its own
    block), ``num_requests``, ``num_escaping`` (served by the allocator because they outlive
    the call); ``report()`` says it in words.
    """

    def __init__(self, sizes, devices, free_at, pinned=None):
        t0 = time.perf_counter()
        self.sizes = list(sizes)
        self.devices = list(devices)
        self.free_at = list(free_at)
        (self.offsets, self.arena_bytes, self.lower_bound_bytes, self.naive_bytes,
         self.ordering) = solve(self.sizes, self.free_at, pinned)
        self.solve_seconds = time.perf_counter() - t0
        by_dev = {}
        for k, o in enumerate(self.offsets):
            if o >= 0:
                by_dev[self.devices[k]] = by_dev.get(self.devices[k], 0) + self.sizes[k]
        # one arena, on the device with the most planned bytes; other devices' requests go to
        # their allocators
        self.device = max(by_dev, key=by_dev.get) if by_dev else None
        offs = [o if (o >= 0 and self.devices[k] == self.device) else -1
                for k, o in enumerate(self.offsets)]
        self.arrays = PlanArrays(self.sizes, offs, self.devices, self.free_at)
        self.path = (tuple(self.sizes), tuple(str(d) for d in self.devices))

    @property
    def num_requests(self):
        return len(self.sizes)

    @property
    def num_escaping(self):
        return sum(1 for f in self.free_at if f == _ALIVE)

    @property
    def escaping_bytes(self):
        return sum(s for s, f in zip(self.sizes, self.free_at) if f == _ALIVE)

    def report(self):
        """The plan in a few lines.

        >>> print(tensorlib.memory.planner.Plan([4096, 4096], ["cpu", "cpu"], [1, 2]).report())
        ... # doctest: +ELLIPSIS
        memory plan: 2 requests (0 outlive the call: served by the allocator)
        ...
        """
        lb, ar, nv = self.lower_bound_bytes, self.arena_bytes, self.naive_bytes
        ratio = f"{ar / lb:.3f}x the lower bound" if lb else "nothing to plan"
        lines = [
            f"memory plan: {self.num_requests} requests ({self.num_escaping} outlive the call: "
            f"served by the allocator)",
            f"  arena        {_fmt_bytes(ar):>11}   {ratio}",
            f"  lower bound  {_fmt_bytes(lb):>11}   largest sum of planned bytes alive at once",
            f"  naive        {_fmt_bytes(nv):>11}   every request its own block"
            + (f" ({nv / ar:.1f}x the arena)" if ar else ""),
            f"  solved in {self.solve_seconds * 1e3:.1f} ms (best ordering: {self.ordering})",
        ]
        return "\n".join(lines)

    def __repr__(self):
        return (f"<Plan requests={self.num_requests} arena={self.arena_bytes} "
                f"lower_bound={self.lower_bound_bytes} naive={self.naive_bytes}>")


def _merge(a, b):
    """Lifetimes that cover both recordings (a request alive at the end in either escapes)."""
    return [_ALIVE if (x == _ALIVE or y == _ALIVE) else max(x, y) for x, y in zip(a, b)]


def _solved(sizes, devs, frees, pins):
    """A plan that keeps the offsets in ``pins`` where it can (so a call can move between
    the old layout and the new one mid-way without conflicts), unless that costs more than 5%
    of arena over a free layout."""
    free = Plan(sizes, devs, frees)
    if not pins:
        return free
    pinned = Plan(sizes, devs, frees, pinned=pins)
    return pinned if pinned.arena_bytes <= free.arena_bytes * 1.05 else free


# ---- signatures -------------------------------------------------------------------------------

def _sig(x):
    """The signature of arguments the C ``sig_of`` leaves to Python."""
    sig = _memplan.sig_of
    if isinstance(x, _device):
        return ("device", x.type, x.index)
    if isinstance(x, (_dtype, complex, bytes, type(Ellipsis))):
        return x
    if isinstance(x, float):                     # float subclasses
        return float(x) if x == x else ("nan",)
    if isinstance(x, (int, str)):
        return x
    if isinstance(x, (tuple, list)):
        return (type(x).__name__,) + tuple(sig(v) for v in x)
    if isinstance(x, dict):
        return ("dict",) + tuple((k, sig(v)) for k, v in x.items())
    if isinstance(x, slice):
        return ("slice", sig(x.start), sig(x.stop), sig(x.step))
    # any other object: by identity (without keeping it alive)
    return ("id", type(x).__qualname__, id(x))


_memplan._register_sig_fallback(_sig)


def signature(args, kwargs):
    """The key a call is planned under: tensor shapes, strides, dtypes, devices and
    requires_grad, the grad mode, and the other arguments.

    >>> signature((tensorlib.ones(2, 3), 2), {})[2]
    (('T', (2, 3), (3, 1), tensorlib.float32, 'cpu', None, False), 2)
    """
    return _memplan.signature(args, kwargs, _C._is_grad_enabled(), _C._is_inference_mode())


# ---- the planned callable ---------------------------------------------------------------------

class Planned(PlannedBase):
    """``fn`` with planned memory; see ``tensorlib.memory.plan``. A replayed call runs in C
    (``PlannedBase``); this class records, learns and plans."""

    def __init__(self, fn, max_plans=MAX_PLANS):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._max_plans = max_plans
        # signature -> PlanSet (most recently used plan first; replaced, never mutated in
        # place: a call reads it without the lock)
        self._sets = OrderedDict()
        self._lock = threading.Lock()
        self.last_plan = None

    def __get__(self, obj, objtype=None):
        return self if obj is None else types.MethodType(self, obj)

    @property
    def plans(self):
        """Every plan kept (all signatures and paths)."""
        return [p for ps in list(self._sets.values()) for p in ps.plans]

    def reset(self):
        """Forget every plan and arena (the next call records again)."""
        with self._lock:
            self._sets.clear()
            self._need = {}
        self._drop_arena()
        self.last_plan = None

    def _learn(self, key, hook, entry, matched):
        """After a call that recorded (``entry`` None), took a new path (``matched`` < 0),
        followed another path than the first or outgrew its lifetimes."""
        d = {"served": hook.n_served, "conflicts": hook.n_conflicts}
        if entry is None:
            sizes, frees, devs, _ = hook.record()
            new = Plan(sizes, devs, frees)
            with self._lock:
                self._add(key, new)
            self.last_plan = new
            d["recordings"] = 1
        elif matched < 0:
            # a path not recorded yet: the call finished on the allocator from where it
            # departed; plan the new path, keeping the offsets of the common prefix
            plans = entry.plans
            sizes, frees, devs, _ = hook.record()
            base = plans[hook.departed_plan] if 0 <= hook.departed_plan < len(plans) else plans[0]
            cut = hook.departed_at if hook.departed_at >= 0 else len(sizes)
            with self._lock:
                self.last_plan = self._new_path(key, sizes, devs, frees, base, cut)
            d["fallbacks"] = 1
        else:
            used = entry.plans[matched]
            d["replays"] = 1
            d["switches"] = int(matched > 0)      # followed another path than the first guess
            if hook.lifetimes_grew(used.arrays):
                # lifetimes grew (or a tensor escaped): plan again, for both lifetimes
                sizes, frees, devs, _ = hook.record()
                merged = _merge(used.free_at, frees)
                new = _solved(sizes, devs, merged, self._pins(used, merged, len(sizes)))
                with self._lock:
                    self._replace(key, used, new)
                used = new
            elif matched > 0:
                with self._lock:
                    self._replace(key, used, used)
            self.last_plan = used
        self.stats._add(**d)

    def _pins(self, base, free_at, cut):
        """Keep the offsets of ``base`` for requests 0..cut-1 where possible, so a call that
        departs from ``base`` there can switch to the new plan without conflicts."""
        return {k: base.offsets[k] for k in range(min(cut, base.num_requests))
                if base.offsets[k] >= 0 and free_at[k] != _ALIVE}

    def _new_path(self, key, sizes, devs, frees, base, cut):
        path = (tuple(sizes), tuple(str(d) for d in devs))
        entry = self._sets.get(key)
        for p in (entry.plans if entry else ()):
            if p.path == path:                 # a path seen before: merge lifetimes
                merged = _merge(p.free_at, frees)
                new = p if merged == p.free_at else \
                    _solved(sizes, devs, merged, self._pins(base, merged, cut))
                self._replace(key, p, new)
                return new
        return self._add(key, _solved(sizes, devs, frees, self._pins(base, frees, cut)))

    # the plan sets (under self._lock)
    def _store(self, key, plans):
        self._sets[key] = PlanSet(plans[:self._max_plans])
        self._sets.move_to_end(key)
        while len(self._sets) > MAX_SIGNATURES:
            self._sets.popitem(last=False)
        need = {}
        for ps in self._sets.values():
            for p in ps.plans:
                if p.device is not None:
                    need[p.device] = max(need.get(p.device, 0), p.arena_bytes)
        self._need = need

    def _add(self, key, p):
        entry = self._sets.get(key)
        self._store(key, [p] + list(entry.plans if entry else ()))
        return p

    def _replace(self, key, old, new):
        """``new`` in place of ``old``, first (most recently used)."""
        entry = self._sets.get(key)
        if entry is not None:
            self._store(key, [new] + [p for p in entry.plans if p is not old])

    def __repr__(self):
        return f"<planned {getattr(self._fn, '__qualname__', self._fn)!r} {self.stats}>"


def plan(fn=None, *, max_plans=MAX_PLANS):
    """Plan the memory of ``fn``: returns a callable that records the first call of each input
    signature and replays later calls from one arena (see the module's docstring). Usable as a
    decorator, with or without arguments.

    >>> planned = tensorlib.memory.plan(lambda x: (x + 1) * 2)
    >>> x = tensorlib.arange(4.)
    >>> planned(x).tolist(), planned(x).tolist()
    ([2.0, 4.0, 6.0, 8.0], [2.0, 4.0, 6.0, 8.0])
    >>> planned.last_plan.num_requests
    2
    """
    if fn is None:
        return lambda f: Planned(f, max_plans=max_plans)
    return Planned(fn, max_plans=max_plans)
