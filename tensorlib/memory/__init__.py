"""Memory you can see: exact per-device counters with PyTorch's names.

Allocated bytes are the rounded sizes of the distinct live storages a device's allocator
handed out: views share their base's storage and are not counted twice, and memory borrowed
from NumPy (``from_numpy``) is not ours and is not counted.

>>> import tensorlib
>>> before = tensorlib.memory.memory_allocated()
>>> x = tensorlib.empty(1000)          # 4000 bytes, rounded up to 4096
>>> tensorlib.memory.memory_allocated() - before
4096
"""
from tensorlib._core.allocator import get_allocator

__all__ = ["memory_allocated", "max_memory_allocated", "reset_peak_memory_stats",
           "reset_accumulated_memory_stats", "memory_stats"]


def memory_stats(device=None):
    """All counters of a device as a dict keyed like PyTorch's ``memory_stats()``.

    >>> tensorlib.memory.memory_stats()["allocation.all.current"] >= 0
    True
    """
    return get_allocator(device).memory_stats()


def memory_allocated(device=None):
    """Bytes currently held by live storages on ``device`` (default: CPU).

    >>> tensorlib.memory.memory_allocated() >= 0
    True
    """
    return get_allocator(device).memory_stats()["allocated_bytes.all.current"]


def max_memory_allocated(device=None):
    """Peak of ``memory_allocated`` since the start or the last ``reset_peak_memory_stats``.

    >>> tensorlib.memory.max_memory_allocated() >= tensorlib.memory.memory_allocated()
    True
    """
    return get_allocator(device).memory_stats()["allocated_bytes.all.peak"]


def reset_peak_memory_stats(device=None):
    """Restart peak tracking from the current values.

    >>> tensorlib.memory.reset_peak_memory_stats()
    """
    get_allocator(device).reset_peak_stats()


def reset_accumulated_memory_stats(device=None):
    """Zero the accumulated counters (``*.allocated`` and ``*.freed``).

    >>> tensorlib.memory.reset_accumulated_memory_stats()
    """
    get_allocator(device).reset_accumulated_stats()
