"""Memory you can see and plan: a caching allocator per device with exact counters and
PyTorch's names, a profiler (``profile()``: roles, sites, leaks, the timeline) and a planner
(``plan(fn)``: record one call, pack its tensors into one arena, replay).

Definitions (exact, for every device):

- **allocated** bytes: the sum, over the distinct live storages that tensors own, of their
  size rounded up to 512 bytes (``ceil(nbytes / 512) * 512``; a 0-byte storage allocates
  nothing). Views share their base's storage and are not counted twice; memory borrowed from
  NumPy (``from_numpy``, ``as_tensor`` on an array) is not ours and is not counted. Slices of a
  planner's arena (``tensorlib.memory.plan``) are storages too and count here.
- **requested** bytes: the same storages' exact sizes.
- **allocations** (``allocation.*``): requests the allocator served, i.e. storages it handed
  a block; arena slices are not allocator requests and are not counted there.
- **active** bytes: the blocks in use. A block may be larger than its rounded request (a large
  block is split only when at least 1 MiB would remain), and a planner's arena is active.
- **reserved** bytes: the segments the allocator holds from the system (mmap'd): active blocks
  plus cached free ones. ``empty_cache()`` gives back every entirely free segment; the memory
  limit applies to reserved bytes.
- **segment**: the number of those segments; **inactive_split(_bytes)**: free blocks inside
  segments that are partly in use (they cannot be given back yet).

Each counter has ``.all``, ``.small_pool`` (rounded requests up to 1 MiB, carved out of 2 MiB
segments) and ``.large_pool`` variants, and ``current``/``peak``/``allocated``/``freed``
fields, as in ``torch.cuda.memory_stats()``.

>>> import tensorlib
>>> before = tensorlib.memory.memory_allocated()
>>> x = tensorlib.empty(1000)          # 4000 bytes, rounded up to 4096
>>> tensorlib.memory.memory_allocated() - before
4096
>>> tensorlib.memory.memory_reserved() >= tensorlib.memory.memory_allocated()
True
"""
from tensorlib._core.allocator import get_allocator

__all__ = ["memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "reset_peak_memory_stats", "reset_accumulated_memory_stats", "reset_max_memory_allocated",
           "empty_cache", "memory_stats", "memory_summary", "memory_snapshot",
           "set_per_process_memory_limit", "get_per_process_memory_limit",
           "profile", "plan", "estimate"]


def memory_stats(device=None):
    """Every counter of a device as a dict keyed like PyTorch's ``memory_stats()``
    (``"allocated_bytes.all.current"``, ``"segment.large_pool.peak"``, ``"num_ooms"``, ...).

    >>> s = tensorlib.memory.memory_stats()
    >>> s["reserved_bytes.all.current"] >= s["active_bytes.all.current"] >= s["allocated_bytes.all.current"]
    True
    """
    return get_allocator(device).memory_stats()


def memory_allocated(device=None):
    """Bytes held by live storages on ``device`` (default: CPU), each rounded up to 512.

    >>> x = tensorlib.empty(100)
    >>> tensorlib.memory.memory_allocated() >= 512
    True
    """
    return get_allocator(device).memory_stats()["allocated_bytes.all.current"]


def max_memory_allocated(device=None):
    """Peak of ``memory_allocated`` since the start or the last ``reset_peak_memory_stats``.

    >>> tensorlib.memory.max_memory_allocated() >= tensorlib.memory.memory_allocated()
    True
    """
    return get_allocator(device).memory_stats()["allocated_bytes.all.peak"]


def memory_reserved(device=None):
    """Bytes the allocator holds from the system on ``device``: blocks in use plus its cache.

    >>> x = tensorlib.empty(100)                      # a 512-byte block of a 2 MiB segment
    >>> tensorlib.memory.memory_reserved() >= 2 * 1024 * 1024
    True
    """
    return get_allocator(device).memory_stats()["reserved_bytes.all.current"]


def max_memory_reserved(device=None):
    """Peak of ``memory_reserved`` since the start or the last ``reset_peak_memory_stats``.

    >>> tensorlib.memory.max_memory_reserved() >= tensorlib.memory.memory_reserved()
    True
    """
    return get_allocator(device).memory_stats()["reserved_bytes.all.peak"]


def reset_peak_memory_stats(device=None):
    """Restart every peak (``*.peak``) from the current values.

    >>> tensorlib.memory.reset_peak_memory_stats()
    >>> tensorlib.memory.max_memory_allocated() == tensorlib.memory.memory_allocated()
    True
    """
    get_allocator(device).reset_peak_stats()


def reset_max_memory_allocated(device=None):
    """Same as ``reset_peak_memory_stats`` (PyTorch's older name).

    >>> tensorlib.memory.reset_max_memory_allocated()
    """
    reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device=None):
    """Zero the accumulated counters (``*.allocated``, ``*.freed``, ``num_alloc_retries``,
    ``num_ooms``, ``num_device_alloc``, ``num_device_free``).

    >>> tensorlib.memory.reset_accumulated_memory_stats()
    >>> tensorlib.memory.memory_stats()["num_ooms"]
    0
    """
    get_allocator(device).reset_accumulated_stats()


def empty_cache(device=None):
    """Give every entirely free cached segment back to the system (``munmap``): reserved bytes
    fall to the segments that still hold a live block. Live tensors are not affected.

    >>> x = tensorlib.empty(10 ** 6); del x         # its 4 MiB segment stays cached...
    >>> tensorlib.memory.empty_cache()              # ...until now
    >>> tensorlib.memory.memory_reserved() >= tensorlib.memory.memory_allocated()
    True
    """
    get_allocator(device).empty_cache()


def set_per_process_memory_limit(nbytes, device=None):
    """Cap the bytes the allocator of ``device`` may reserve (``None``: no cap).

    A request that needs a new segment beyond the cap first releases the cached segments and
    retries (``num_alloc_retries``); if it still does not fit it raises
    ``tensorlib.OutOfMemoryError`` (a RuntimeError) naming the request, the allocated and
    reserved bytes and the limit, and counts in ``num_ooms``. Nothing already allocated is
    touched, and requests succeed again once memory is freed. Lowering the cap below the
    reserved bytes releases the cache at once but never frees live tensors.

    >>> tensorlib.memory.set_per_process_memory_limit(64 * 2 ** 20)
    >>> try:
    ...     x = tensorlib.empty(100 * 2 ** 20, dtype=tensorlib.uint8)
    ... except tensorlib.OutOfMemoryError as e:
    ...     print("limit" in str(e))
    True
    >>> tensorlib.memory.set_per_process_memory_limit(None)
    """
    get_allocator(device).set_memory_limit(nbytes)


def get_per_process_memory_limit(device=None):
    """The cap set by ``set_per_process_memory_limit`` (bytes), or None.

    >>> tensorlib.memory.get_per_process_memory_limit() is None
    True
    """
    return get_allocator(device).get_memory_limit()


def memory_snapshot(device=None):
    """The allocator's segments and blocks, like ``torch.cuda.memory_snapshot()``: a list of
    dicts (``address``, ``total_size``, ``allocated_size``, ``active_size``,
    ``requested_size``, ``stream``, ``segment_type`` "small"/"large", ``blocks``: dicts with
    ``address``, ``size``, ``requested_size``, ``state`` "active_allocated"/"inactive").

    >>> x = tensorlib.empty(100)
    >>> any(b["address"] == x.data_ptr() for s in tensorlib.memory.memory_snapshot() for b in s["blocks"])
    True
    """
    return get_allocator(device).memory_snapshot()


def memory_summary(device=None, abbreviated=False):
    """A readable table of the counters of ``device`` (``abbreviated``: no per-pool rows).

    >>> print(tensorlib.memory.memory_summary(abbreviated=True))   # doctest: +ELLIPSIS
    |===...
    """
    return get_allocator(device).memory_summary(abbreviated)


from tensorlib.memory.profiler import profile  # noqa: E402  (they use the counters above)
from tensorlib.memory.planner import plan  # noqa: E402
from tensorlib.memory.estimation import estimate, MemoryEstimate  # noqa: E402
