"""The memory profiler: ``with tensorlib.memory.profile() as prof:``.

Records every allocation of tensor memory made on this thread while the profile is active, on
every device, and its free on any thread: bytes, device, time, the op that made it, the
tensor's role
(parameter, buffer, input, activation, saved-for-backward, gradient, optimizer-state,
temporary) and the user's source line (the first frame outside tensorlib; allocations made
during backward carry the forward line of their node). Roles are a mutable field of the
storage: an op's output becomes saved-for-backward when a later op saves it, and the profile
follows the change.

It costs nothing when no profile is active: the allocator's door checks one thread-local
pointer. While one is, each allocation costs a short frame walk (cached per code object).
A storage freed on another thread is seen through a weak reference: its free is recorded with
its time when the profile's thread next allocates or frees, or when the profile ends.

>>> import tensorlib
>>> x = tensorlib.ones(1000)
>>> with tensorlib.memory.profile() as prof:
...     y = (x * 2).exp()
>>> prof.peak_bytes
8000
>>> [(e.kind, e.bytes, e.op) for e in prof.events]
[('alloc', 4000, 'mul'), ('alloc', 4000, 'exp'), ('free', 4000, 'mul')]
"""
import collections
import json
import os
import sys
import time
import weakref

from tensorlib._core import tensor as _C
from tensorlib._core.allocator import (
    ROLE_NAMES, _push_memory_hook, _pop_memory_hook, _get_current_op)
from tensorlib.autograd import engine as _engine

__all__ = ["profile", "Profile", "Event", "SiteStats"]

_ROLE = {name: i for i, name in enumerate(ROLE_NAMES)}
_ACTIVATION = _ROLE["activation"]
_GRADIENT = _ROLE["gradient"]
_TEMPORARY = _ROLE["temporary"]
_ALLOC, _FREE, _ROLE_EV = 0, 1, 2
_KINDS = ("alloc", "free", "role")

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


# ---- source sites ---------------------------------------------------------------------------

_internal = {}        # code object -> True when it belongs to tensorlib (cached)


def _is_internal(code):
    fn = code.co_filename
    # the demo is user code: it is what a user would write
    return fn.startswith(_PKG) and not fn.endswith("demo.py")


def _user_site():
    """(code, line) of the first Python frame outside tensorlib, or None. Inside backward, the
    forward site of the node being run."""
    node = _engine._current.node
    if node is not None and node._site is not None:
        return node._site
    f = sys._getframe(1)
    cache = _internal
    while f is not None:
        code = f.f_code
        inside = cache.get(code)
        if inside is None:
            inside = cache[code] = _is_internal(code)
        if not inside:
            return (code, f.f_lineno)
        f = f.f_back
    return None


def format_site(site):
    """``"file:line"`` (the file relative to the working directory when it is inside it)."""
    if site is None:
        return "<unknown>"
    code, line = site
    fn = code.co_filename
    try:
        rel = os.path.relpath(fn)
        if not rel.startswith(".."):
            fn = rel
    except ValueError:
        pass
    return f"{fn}:{line}"


def _fmt_bytes(n):
    sign = "-" if n < 0 else ""
    n = abs(n)
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{sign}{n / scale:.2f} {unit}"
    return f"{sign}{n} B"


# ---- records ----------------------------------------------------------------------------------

class _Rec:
    """One allocation made inside the profile."""
    __slots__ = ("id", "nbytes", "device", "op", "site", "t0", "t1", "role0", "role", "planned",
                 "node", "backward", "step", "ref")


class _Gone:
    """A weak reference's callback: notes the death of a profiled storage that the profile's
    own hook did not hear of (freed on another thread, or while hooks were muted). Runs on
    the freeing thread, so it only appends to a deque (atomic); the profile's thread drains it."""
    __slots__ = ("queue", "id")

    def __init__(self, queue, alloc_id):
        self.queue, self.id = queue, alloc_id

    def __call__(self, ref):
        self.queue.append((time.perf_counter_ns(), self.id))


class Event:
    """An allocation, a free or a role change: ``kind`` ("alloc", "free", "role"), ``time``
    (seconds since the profile began), ``bytes``, ``device``, ``op``, ``role`` (after the
    event), ``site`` ("file:line"), ``alloc_id``, ``step``, ``planned`` (served from a
    planner's arena), ``backward`` (made during backward)."""
    __slots__ = ("kind", "time", "_rec", "role", "step")

    def __init__(self, kind, t, rec, role, step):
        self.kind, self.time, self._rec, self.role, self.step = kind, t, rec, role, step

    bytes = property(lambda self: self._rec.nbytes)
    device = property(lambda self: self._rec.device)
    op = property(lambda self: self._rec.op)
    alloc_id = property(lambda self: self._rec.id)
    planned = property(lambda self: self._rec.planned)
    backward = property(lambda self: self._rec.backward)

    @property
    def site(self):
        return format_site(self._rec.site)

    def __repr__(self):
        return (f"Event({self.kind} {self.bytes} B on {self.device} by {self.op} as {self.role} "
                f"at {self.site}, t={self.time * 1e3:.3f} ms)")


class SiteStats:
    """Memory attributed to one source line: ``site`` ("file:line"), ``bytes``, ``count``
    (tensors), ``role`` (the role holding most of those bytes), ``ops``; for leaks also
    ``growing`` and ``growth_per_step`` (bytes)."""
    __slots__ = ("site", "bytes", "count", "role", "ops", "growing", "growth_per_step")

    def __init__(self, site, nbytes, count, role, ops, growing=False, growth=0):
        self.site, self.bytes, self.count, self.role = site, nbytes, count, role
        self.ops, self.growing, self.growth_per_step = ops, growing, growth

    def __repr__(self):
        g = f", growing {_fmt_bytes(self.growth_per_step)}/step" if self.growing else ""
        return (f"SiteStats({self.site}: {_fmt_bytes(self.bytes)} in {self.count} tensors, "
                f"{self.role}{g})")


def _group(recs, role_of):
    """SiteStats per site for these records, most bytes first."""
    by = {}
    for r in recs:
        g = by.get(r.site)
        if g is None:
            g = by[r.site] = [0, 0, {}, []]
        g[0] += r.nbytes
        g[1] += 1
        role = role_of(r)
        g[2][role] = g[2].get(role, 0) + r.nbytes
        if r.op not in g[3]:
            g[3].append(r.op)
    out = [SiteStats(format_site(site), b, c, ROLE_NAMES[max(roles, key=roles.get)], ops)
           for site, (b, c, roles, ops) in by.items()]
    out.sort(key=lambda s: -s.bytes)
    return out


# ---- the profile ----------------------------------------------------------------------------

class Profile:
    """A memory profile (see ``tensorlib.memory.profile``)."""

    def __init__(self):
        self._recs = {}             # alloc_id -> _Rec, for what is alive
        self._events = []           # (t_ns, kind, rec, role_after)
        self._cur = 0               # bytes alive now (allocated inside the profile)
        self._peak = 0
        self._peak_at = -1          # index of the event that reached the peak
        self._steps = []            # (event index, t_ns, {site: bytes alive})
        self._site_live = {}        # site -> bytes alive
        self._gone = collections.deque()    # (t_ns, alloc_id) of frees seen by weak reference
        self._t0 = None
        self._t_end = None
        self._active = False
        self.baseline_bytes = 0

    # ---- context manager ---------------------------------------------------------------------
    def __enter__(self):
        from tensorlib.memory import memory_allocated
        if self._t0 is not None:
            raise RuntimeError("a memory profile records once: make a new one with profile()")
        self.baseline_bytes = memory_allocated()
        self._t0 = time.perf_counter_ns()
        self._active = True
        _push_memory_hook(self)
        _C._profiling_enter(_user_site)
        return self

    def __exit__(self, *exc):
        _C._profiling_exit()
        _pop_memory_hook(self)
        self._drain()
        self._active = False
        self._t_end = time.perf_counter_ns()
        for r in self._recs.values():
            r.ref = None                # frees after the profile are not its business
        return False

    def _drain(self):
        """Record the frees noted by weak reference, in the order they happened."""
        gone = self._gone
        while gone:
            t, alloc_id = gone.popleft()
            r = self._recs.pop(alloc_id, None)
            if r is not None:
                self._freed(r, t, False)

    # ---- the door's calls ------------------------------------------------------------------
    def after_alloc(self, s):
        n = s.nbytes()
        if n == 0:
            return
        if self._gone:
            self._drain()
        r = _Rec()
        r.id = s.alloc_id
        r.nbytes = n
        r.device = str(s.device)
        op = _get_current_op()
        r.op = op
        node = _engine._current.node
        r.backward = node is not None
        r.node = id(node) if node is not None else 0
        site = _user_site()
        r.site = site
        role = s.role
        if role == 0:
            role = _GRADIENT if node is not None else _ACTIVATION
        r.role0 = r.role = role
        r.planned = s.planned_by is not None
        r.t0 = time.perf_counter_ns()
        r.t1 = None
        r.step = len(self._steps)
        s.site = site
        s.op = op
        r.ref = weakref.ref(s, _Gone(self._gone, r.id))
        self._recs[r.id] = r
        self._site_live[site] = self._site_live.get(site, 0) + n
        self._events.append((r.t0, _ALLOC, r, role))
        self._cur += n
        if self._cur > self._peak:
            self._peak = self._cur
            self._peak_at = len(self._events) - 1

    def on_free(self, s):
        if self._gone:
            self._drain()
        r = self._recs.pop(s.alloc_id, None)
        if r is None:
            return                      # allocated before the profile began
        self._freed(r, time.perf_counter_ns(), True)

    def _freed(self, r, t, here):
        """Record the free of ``r`` at ``t`` (``here``: heard of by the hook, on this thread)."""
        r.ref = None                    # heard of: no callback when it really goes
        r.t1 = t
        if here and r.backward and r.role == r.role0 == _GRADIENT:
            node = _engine._current.node
            if node is not None and id(node) == r.node:
                # made and dropped inside one backward node: scratch, not a gradient
                r.role0 = r.role = _TEMPORARY
        self._site_live[r.site] -= r.nbytes
        self._events.append((r.t1, _FREE, r, r.role))
        self._cur -= r.nbytes

    def on_role(self, s, old, new):
        r = self._recs.get(s.alloc_id)
        if r is None or r.role == new:
            return
        r.role = new
        self._events.append((time.perf_counter_ns(), _ROLE_EV, r, new))

    # ---- API -----------------------------------------------------------------------------------
    def step(self):
        """Mark the end of an iteration of a loop (``leaks()`` looks for growth across steps).

        >>> with tensorlib.memory.profile() as p:
        ...     for i in range(3):
        ...         p.step()
        >>> p.num_steps
        3
        """
        self._steps.append((len(self._events), time.perf_counter_ns(),
                            {k: v for k, v in self._site_live.items() if v}))

    @property
    def num_steps(self):
        return len(self._steps)

    @property
    def peak_bytes(self):
        """The most bytes alive at once among the allocations made inside the profile."""
        return self._peak

    @property
    def current_bytes(self):
        """Bytes allocated inside the profile and alive now (or at its end)."""
        return self._cur

    @property
    def events(self):
        """Every allocation, free and role change, in order (a list of ``Event``)."""
        out, si = [], 0
        steps = [s[0] for s in self._steps]
        t0 = self._t0 or 0
        for i, (t, kind, r, role) in enumerate(self._events):
            while si < len(steps) and steps[si] <= i:
                si += 1
            out.append(Event(_KINDS[kind], (t - t0) / 1e9, r, ROLE_NAMES[role], si))
        return out

    def _sweep(self, upto):
        """Replay events 0..upto: (bytes per role code, {alloc_id: rec} alive)."""
        by_role = [0] * len(ROLE_NAMES)
        alive, cur_role = {}, {}
        for t, kind, r, role in self._events[:upto + 1]:
            if kind == _ALLOC:
                by_role[r.role0] += r.nbytes
                cur_role[r.id] = r.role0
                alive[r.id] = r
            elif kind == _FREE:
                by_role[cur_role.pop(r.id)] -= r.nbytes
                del alive[r.id]
            else:
                old = cur_role.get(r.id)
                if old is not None:
                    by_role[old] -= r.nbytes
                    by_role[role] += r.nbytes
                    cur_role[r.id] = role
        return by_role, alive, cur_role

    def _index_of(self, at):
        if at == "peak":
            return self._peak_at
        if at == "end":
            return len(self._events) - 1
        if isinstance(at, int):
            if not 0 <= at < len(self._steps):
                raise IndexError(f"step {at} out of range ({len(self._steps)} steps marked)")
            return self._steps[at][0] - 1
        raise ValueError(f'at must be "peak", "end" or a step index, got {at!r}')

    def by_role(self, at="peak"):
        """Bytes alive by role at the peak (``at="peak"``), at the end (``"end"``) or at the
        i-th ``step()`` mark; roles with no bytes are left out.

        >>> with tensorlib.memory.profile() as p:
        ...     y = tensorlib.ones(256) * 2
        >>> p.by_role()
        {'activation': 2048}
        """
        by_role, _, _ = self._sweep(self._index_of(at))
        return {ROLE_NAMES[i]: b for i, b in enumerate(by_role) if b}

    def top_sites(self, k=10, at="peak"):
        """The ``k`` source lines holding the most bytes at the peak (``SiteStats``)."""
        _, alive, cur_role = self._sweep(self._index_of(at))
        return _group(alive.values(), lambda r: cur_role[r.id])[:k]

    def leaks(self):
        """What was allocated inside the profile and is still alive at its end, or grows step
        after step, grouped by source line: a list of ``SiteStats`` (growing sites first, then
        by bytes), each with ``.site`` "file:line", ``.bytes``, ``.count``, ``.role``.

        >>> keep = []
        >>> with tensorlib.memory.profile() as p:
        ...     for i in range(3):
        ...         keep.append(tensorlib.ones(100) * i)
        ...         p.step()
        >>> p.leaks()[0].count, p.leaks()[0].growing
        (3, True)
        """
        stats = _group(self._recs.values(), lambda r: r.role)
        growth = self._growth()
        for s in stats:
            g = growth.pop(s.site, None)
            if g:
                s.growing, s.growth_per_step = True, g
        # growing sites whose tensors died after the last step mark are still worth a line
        for site, g in growth.items():
            stats.append(SiteStats(site, 0, 0, "unknown", [], True, g))
        stats.sort(key=lambda s: (not s.growing, -s.bytes))
        return stats

    def _growth(self):
        """{site: bytes per step} for sites whose live bytes, read at the step marks, never
        fell and rose at least twice and in at least half of the steps (a one-time rise, such
        as a gradient made once, is not growth)."""
        snaps = [s[2] for s in self._steps]
        if len(snaps) < 3:
            return {}
        sites = set()
        for s in snaps:
            sites.update(s)
        out = {}
        for code_line in sites:
            series = [s.get(code_line, 0) for s in snaps]
            steps = list(zip(series, series[1:]))
            rises = sum(1 for a, b in steps if b > a)
            if all(b >= a for a, b in steps) and rises >= 2 and 2 * rises >= len(steps):
                out[format_site(code_line)] = (series[-1] - series[0]) // len(steps)
        return out

    def summary(self, k=5):
        """A few lines: peak, bytes by role at the peak, top sites, leaks."""
        allocs = sum(1 for e in self._events if e[1] == _ALLOC)
        frees = sum(1 for e in self._events if e[1] == _FREE)
        end = self._t_end if self._t_end is not None else time.perf_counter_ns()
        dur = (end - self._t0) / 1e6 if self._t0 else 0.0
        devices = sorted({e[2].device for e in self._events}) or ["cpu"]
        lines = [f"memory profile: {allocs} allocations, {frees} frees, {len(self._steps)} steps, "
                 f"{dur:.1f} ms on {', '.join(devices)} (baseline {_fmt_bytes(self.baseline_bytes)})"]
        if self._peak_at >= 0:
            t = (self._events[self._peak_at][0] - self._t0) / 1e6
            lines.append(f"  peak {_fmt_bytes(self._peak)} at {t:.2f} ms; alive then, by role:")
            roles = self.by_role("peak")
            for name, b in sorted(roles.items(), key=lambda kv: -kv[1]):
                lines.append(f"    {name:<20}{_fmt_bytes(b):>12}  {100 * b / self._peak:5.1f}%")
            lines.append("  top sites at the peak:")
            for s in self.top_sites(k):
                ops = ", ".join(o for o in s.ops[:3] if o)
                lines.append(f"    {s.site:<40}{_fmt_bytes(s.bytes):>12}  {s.count:>4} tensors  "
                             f"{s.role}{f' ({ops})' if ops else ''}")
        leaks = self.leaks()
        if leaks:
            lines.append("  alive at the end or growing step after step:")
            for s in leaks[:k]:
                g = f"  growing {_fmt_bytes(s.growth_per_step)}/step" if s.growing else ""
                lines.append(f"    {s.site:<40}{_fmt_bytes(s.bytes):>12}  {s.count:>4} tensors  "
                             f"{s.role}{g}")
        return "\n".join(lines)

    def _series(self):
        """[(seconds, [bytes per role code])] after each event."""
        by_role = [0] * len(ROLE_NAMES)
        cur_role, out = {}, []
        t0 = self._t0 or 0
        for t, kind, r, role in self._events:
            if kind == _ALLOC:
                by_role[r.role0] += r.nbytes
                cur_role[r.id] = r.role0
            elif kind == _FREE:
                by_role[cur_role.pop(r.id)] -= r.nbytes
            else:
                old = cur_role.get(r.id)
                if old is None:
                    continue
                by_role[old] -= r.nbytes
                by_role[role] += r.nbytes
                cur_role[r.id] = role
            out.append(((t - t0) / 1e9, list(by_role)))
        return out

    def export_chrome_trace(self, path):
        """Write a Chrome / Perfetto trace (JSON): a counter track of bytes per role, and an
        instant event per allocation and free (bytes, op, role, site). Open it in
        ui.perfetto.dev or chrome://tracing."""
        t0 = self._t0 or 0
        ev = [{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "tensorlib memory"}},
              {"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "allocations"}}]
        last = [None] * len(ROLE_NAMES)
        series = self._series()
        for (t, kind, r, role), (_, roles) in zip(self._events, series):
            us = (t - t0) / 1e3
            for code, b in enumerate(roles):
                if b != last[code] and (b or last[code] is not None):
                    ev.append({"name": f"{ROLE_NAMES[code]} bytes", "ph": "C", "ts": us, "pid": 1,
                               "args": {"bytes": b}})
                    last[code] = b
            if kind == _ROLE_EV:
                name = f"role -> {ROLE_NAMES[role]}"
            else:
                name = f"{_KINDS[kind]} {r.op or ''}".strip()
            ev.append({"name": name, "cat": "memory", "ph": "i", "s": "t", "ts": us, "pid": 1,
                       "tid": 1, "args": {"bytes": r.nbytes, "device": r.device, "op": r.op,
                                          "role": ROLE_NAMES[role], "site": format_site(r.site),
                                          "alloc_id": r.id, "planned": r.planned}})
        for i, (_, t, _) in enumerate(self._steps):
            ev.append({"name": f"step {i}", "ph": "i", "s": "p", "ts": (t - t0) / 1e3, "pid": 1,
                       "tid": 1})
        with open(path, "w") as f:
            json.dump({"traceEvents": ev, "displayTimeUnit": "ms"}, f)
        return path

    def save_timeline(self, path, title="tensorlib memory timeline"):
        """Draw bytes alive over time, stacked by role, with the peak marked: an SVG (written by
        tensorlib itself) or, for a ``.png`` path, a PNG (needs matplotlib)."""
        from tensorlib.memory import timeline
        t0 = self._t0 or 0
        steps = [(t - t0) / 1e9 for _, t, _ in self._steps]
        peak = None
        if self._peak_at >= 0:
            peak = ((self._events[self._peak_at][0] - t0) / 1e9, self._peak)
        return timeline.save(path, self._series(), ROLE_NAMES, peak=peak, steps=steps, title=title)

    def __repr__(self):
        return (f"<memory profile: {sum(1 for e in self._events if e[1] == _ALLOC)} allocations, "
                f"peak {_fmt_bytes(self._peak)}>")


def profile():
    """Profile the memory of a block of code on this thread.

    >>> with tensorlib.memory.profile() as prof:
    ...     y = tensorlib.ones(256) * 2
    >>> prof.peak_bytes
    2048
    """
    return Profile()
