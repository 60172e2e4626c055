"""The CUDA device, PyTorch's ``torch.cuda``: devices, streams, events, memory.

The back end is chosen at first use, never at import (see :mod:`tensorlib.cuda._runtime`):
pycuda on a machine with an NVIDIA driver, the CPU emulator with ``TENSORLIB_CUDA=emulate``
(the same ``.cu`` kernels built by the host compiler, streams as in-order worker queues),
none otherwise: then ``is_available()`` is False and ``device_count()`` 0, which is what
PyTorch code checks before choosing a device.

>>> device = "cuda" if tensorlib.cuda.is_available() else "cpu"
>>> x = tensorlib.ones(3, device=device)
>>> (x + 1).cpu().tolist()
[2.0, 2.0, 2.0]

Work on a device is asynchronous: an op queues its kernel on the current stream and returns;
reading values on the host (``.cpu()``, ``.item()``, ``print``) waits for that stream, and
``synchronize()`` waits for every stream of a device.
"""

import itertools as _itertools
import os as _os
import threading as _threading

from . import _runtime

__all__ = ["is_available", "device_count", "current_device", "set_device", "device",
           "device_of", "get_device_name", "get_device_properties", "get_device_capability",
           "synchronize", "Stream", "Event", "current_stream", "default_stream", "set_stream",
           "stream", "StreamContext", "manual_seed", "manual_seed_all", "seed", "seed_all",
           "initial_seed", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "memory_stats", "memory_summary", "reset_peak_memory_stats",
           "reset_max_memory_allocated", "empty_cache", "set_per_process_memory_fraction",
           "mem_get_info", "OutOfMemoryError", "kernel_dir", "is_initialized", "init",
           "backend_name"]


def kernel_dir():
    """The folder of the CUDA back end's ``.cu`` sources: ``tensorlib/cuda/kernels`` in an
    installed wheel (package data), the repository's ``cuda/`` folder in a source checkout.

    >>> import os; os.path.isdir(tensorlib.cuda.kernel_dir())
    True
    """
    here = _os.path.dirname(_os.path.abspath(__file__))
    installed = _os.path.join(here, "kernels")
    if _os.path.isdir(installed):
        return installed
    return _os.path.join(_os.path.dirname(_os.path.dirname(here)), "cuda")


# the allocator's error (a RuntimeError and a MemoryError), as torch.cuda.OutOfMemoryError
from tensorlib._core.allocator import OutOfMemoryError  # noqa: E402


# ---- devices ------------------------------------------------------------------------------

def is_available():
    """Whether a CUDA device can be used (a GPU through pycuda, or the emulator).

    >>> isinstance(tensorlib.cuda.is_available(), bool)
    True
    """
    rt = _runtime.runtime_or_none()
    return rt is not None and rt.device_count() > 0


def is_initialized():
    """Whether the CUDA runtime has been chosen and started.

    >>> isinstance(tensorlib.cuda.is_initialized(), bool)
    True
    """
    return _runtime._runtime is not None


def init():
    """Choose and start the runtime now (CudaUnavailable-class RuntimeError if none)."""
    _runtime.get_runtime()


def backend_name():
    """``'pycuda'``, ``'emulator'`` or None: which runtime runs CUDA devices.

    >>> tensorlib.cuda.backend_name() in (None, "pycuda", "emulator")
    True
    """
    rt = _runtime.runtime_or_none()
    return None if rt is None else rt.name


def device_count():
    """The number of CUDA devices (0 when none can be used).

    >>> tensorlib.cuda.device_count() >= 0
    True
    """
    rt = _runtime.runtime_or_none()
    return 0 if rt is None else rt.device_count()


_tls = _threading.local()
_stream_ids = _itertools.count(1)


def _index(dev=None, optional=True):
    """The device index of ``dev`` (None: the current device; an int, 'cuda:1', a device)."""
    if dev is None:
        return current_device()
    if isinstance(dev, int):
        idx = dev
    else:
        from tensorlib._core.allocator import device as _device
        d = dev if isinstance(dev, _device) else _device(dev)
        if d.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {d}")
        idx = current_device() if d.index is None else d.index
    n = _runtime.get_runtime().device_count()
    if not 0 <= idx < n:
        raise RuntimeError(f"CUDA error: invalid device ordinal (device {idx}, "
                           f"{n} device(s))")
    return idx


def current_device():
    """The index of the current CUDA device (per thread; 0 at first).

    >>> tensorlib.cuda.current_device() if tensorlib.cuda.is_available() else 0
    0
    """
    _runtime.get_runtime()
    return getattr(_tls, "device", 0)


def set_device(dev):
    """Make ``dev`` (an index, ``'cuda:1'`` or a device) the current device of this thread."""
    _tls.device = _index(dev)


class device:
    """Context manager that makes ``dev`` the current device inside its block.

    >>> if tensorlib.cuda.is_available():
    ...     with tensorlib.cuda.device(0):
    ...         assert tensorlib.cuda.current_device() == 0
    """

    def __init__(self, dev):
        self.idx = -1 if dev is None or (isinstance(dev, int) and dev < 0) else _index(dev)
        self.prev = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev = current_device()
            _tls.device = self.idx
        return self

    def __exit__(self, *exc):
        if self.prev >= 0:
            _tls.device = self.prev
        return False


def device_of(obj):
    """Context manager: the device of tensor ``obj`` is current inside (no-op for CPU)."""
    d = obj.device
    return device(d.index if d.type == "cuda" else -1)


class _DeviceProperties:
    def __init__(self, props):
        for k, v in props.items():
            setattr(self, k, v)

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1 << 20)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(dev=None):
    """Name, compute capability (major, minor), total memory and multiprocessor count."""
    return _DeviceProperties(_runtime.get_runtime().properties(_index(dev)))


def get_device_name(dev=None):
    """The device's name (``'NVIDIA H100 80GB HBM3'``, ``'tensorlib CUDA emulator'``)."""
    return _runtime.get_runtime().device_name(_index(dev))


def get_device_capability(dev=None):
    """(major, minor) compute capability."""
    p = get_device_properties(dev)
    return (p.major, p.minor)


def synchronize(dev=None):
    """Wait for all work queued on every stream of ``dev`` (default: the current device)
    and raise the first asynchronous error among it."""
    _runtime.get_runtime().synchronize(_index(dev))


# ---- streams and events -------------------------------------------------------------------

class Stream:
    """An in-order queue of work on a device (PyTorch's ``torch.cuda.Stream``). Work on
    different streams may run concurrently; order them with events or ``wait_stream``.

    >>> if tensorlib.cuda.is_available():
    ...     s = tensorlib.cuda.Stream()
    ...     with tensorlib.cuda.stream(s):
    ...         y = tensorlib.ones(4, device="cuda") * 2
    ...     s.synchronize()
    """

    def __init__(self, device=None, priority=0, _native=None, _device_index=None):
        if _device_index is not None:
            self.device_index = _device_index
            self._native = _native
            self._id = 0                     # a device's default stream
        else:
            self.device_index = _index(device)
            self._native = _runtime.get_runtime().new_stream(self.device_index, priority)
            self._id = next(_stream_ids)     # the allocator's pool of this stream
        self.priority = priority

    @property
    def device(self):
        from tensorlib._core.allocator import device as _device
        return _device("cuda", self.device_index)

    def _native_stream(self):
        return self._native if self._native is not None else (
            _runtime.get_runtime().default_stream(self.device_index))

    def query(self):
        """True when all work queued on the stream has completed."""
        return self._native_stream().query()

    def synchronize(self):
        """Wait for the work queued so far (and raise its asynchronous errors)."""
        self._native_stream().synchronize()

    def wait_event(self, event):
        """Make work queued on this stream from now on wait for ``event``."""
        event.wait(self)

    def wait_stream(self, stream):
        """Make work queued on this stream from now on wait for the work queued on
        ``stream`` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Record ``event`` (a new one by default) on this stream and return it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and self._native_stream() is other._native_stream()

    def __hash__(self):
        return hash(id(self._native_stream()))

    def __enter__(self):
        self._ctx = stream(self)
        return self._ctx.__enter__()

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)

    def __repr__(self):
        return f"<tensorlib.cuda.Stream device=cuda:{self.device_index} at 0x{id(self):x}>"


class Event:
    """A marker in a stream, for ordering streams and timing work (``torch.cuda.Event``).

    >>> if tensorlib.cuda.is_available():
    ...     a, b = (tensorlib.cuda.Event(enable_timing=True) for _ in range(2))
    ...     a.record(); y = tensorlib.ones(8, device="cuda") + 1; b.record()
    ...     b.synchronize(); assert a.elapsed_time(b) >= 0
    """

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        if interprocess:
            raise NotImplementedError("interprocess CUDA events are not supported")
        self.enable_timing = enable_timing
        self._native = None
        self._stream = None

    def record(self, stream=None):
        """Record the event on ``stream`` (default: the current stream)."""
        stream = current_stream() if stream is None else stream
        native = stream._native_stream()
        rt = _runtime.get_runtime()
        if self._native is None:
            self._native = rt.new_event(self.enable_timing)
        self._native.record(native)
        self._stream = stream

    def wait(self, stream=None):
        """Make work queued on ``stream`` (default: the current stream) wait for this
        event's latest record."""
        stream = current_stream() if stream is None else stream
        if self._native is None:
            return
        stream._native_stream().wait_event(self._native)

    def query(self):
        """True when the work recorded before the event has completed."""
        return self._native is None or bool(self._native.query())

    def synchronize(self):
        """Wait until the event has completed."""
        if self._native is not None:
            self._native.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds between this event and ``end_event`` (both recorded with
        ``enable_timing=True`` and completed)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._native is None or end_event._native is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        if not (self.query() and end_event.query()):
            raise RuntimeError("Both events must be completed before calculating elapsed time.")
        return self._native.elapsed_time(end_event._native)

    def __repr__(self):
        return f"<tensorlib.cuda.Event at 0x{id(self):x}>"


def default_stream(dev=None):
    """The default stream of ``dev``."""
    idx = _index(dev)
    streams = _default_streams()
    if idx not in streams:
        streams[idx] = Stream(_native=_runtime.get_runtime().default_stream(idx),
                              _device_index=idx)
    return streams[idx]


_defaults = {}


def _default_streams():
    return _defaults


def current_stream(dev=None):
    """The current stream of ``dev`` in this thread (its default stream unless changed by
    ``set_stream`` or a ``stream()`` block)."""
    idx = _index(dev)
    cur = getattr(_tls, "streams", None)
    if cur is not None and idx in cur:
        return cur[idx]
    return default_stream(idx)


def _current_fast(idx):
    """The Stream current for device ``idx`` (a valid index) in this thread, without
    current_stream's argument checks: the lookup of every launch (``_current_native``) and
    every device allocation (``_current_id``)."""
    cur = getattr(_tls, "streams", None)
    if cur is not None:
        s = cur.get(idx)
        if s is not None:
            return s
    s = _defaults.get(idx)
    return s if s is not None else default_stream(idx)


def _current_native(idx):
    """The runtime's stream current for device ``idx``."""
    return _current_fast(idx)._native


def _current_id(idx):
    """The id of the stream current for device ``idx`` (the allocator's pools are by id)."""
    return _current_fast(idx)._id


def set_stream(s):
    """Make ``s`` the current stream of its device in this thread."""
    if s is None:
        return
    cur = getattr(_tls, "streams", None)
    if cur is None:
        cur = _tls.streams = {}
    cur[s.device_index] = s


class StreamContext:
    """``with tensorlib.cuda.stream(s):`` — ``s`` is current (and its device too) inside."""

    def __init__(self, s):
        self.stream = s
        self._prev = None
        self._dev = None

    def __enter__(self):
        s = self.stream
        if s is None:
            return None
        self._dev = device(s.device_index)
        self._dev.__enter__()
        self._prev = current_stream(s.device_index)
        set_stream(s)
        return s

    def __exit__(self, *exc):
        if self.stream is not None:
            set_stream(self._prev)
            self._dev.__exit__(*exc)
        return False


def stream(s):
    """Context manager making stream ``s`` current (``None``: no change).

    >>> with tensorlib.cuda.stream(None):
    ...     pass
    """
    return StreamContext(s)


# ---- random numbers -----------------------------------------------------------------------

_seeds = {}


def manual_seed(seed):
    """Seed the random numbers of the current CUDA device. Device random fills are drawn
    from the default generator's Philox stream (the CPU's), so this seeds that generator:
    a seed gives the same values on both devices."""
    import tensorlib
    seed = int(seed)
    tensorlib.manual_seed(seed)
    _seeds[current_device() if is_available() else 0] = seed


def manual_seed_all(seed):
    """Seed the random numbers of every CUDA device."""
    manual_seed(seed)
    for i in range(device_count()):
        _seeds[i] = int(seed)


def seed():
    """Seed the current device's random numbers from a non-deterministic source."""
    import tensorlib
    manual_seed(tensorlib.seed())


def seed_all():
    """Seed every device's random numbers from a non-deterministic source."""
    import tensorlib
    manual_seed_all(tensorlib.seed())


def initial_seed():
    """The current device's seed."""
    import tensorlib
    return _seeds.get(current_device() if is_available() else 0, tensorlib.initial_seed())


# ---- memory: PyTorch's names over the device's caching allocator ---------------------------

def _dev(dev):
    from tensorlib._core.allocator import device as _device
    return _device("cuda", _index(dev))


def memory_allocated(device=None):
    """Bytes of the device's memory held by tensors (rounded as allocated)."""
    from tensorlib import memory
    return memory.memory_allocated(_dev(device))


def max_memory_allocated(device=None):
    """The peak of ``memory_allocated`` since the start or the last reset."""
    from tensorlib import memory
    return memory.max_memory_allocated(_dev(device))


def memory_reserved(device=None):
    """Bytes held by the device's caching allocator (allocated + cached)."""
    from tensorlib import memory
    return memory.memory_reserved(_dev(device))


def max_memory_reserved(device=None):
    """The peak of ``memory_reserved``."""
    from tensorlib import memory
    return memory.max_memory_reserved(_dev(device))


def memory_stats(device=None):
    """The device allocator's counters, with PyTorch's ``memory_stats()`` keys."""
    from tensorlib import memory
    return memory.memory_stats(_dev(device))


def memory_summary(device=None, abbreviated=False):
    """A printable table of the device allocator's counters."""
    from tensorlib import memory
    return memory.memory_summary(_dev(device), abbreviated)


def reset_peak_memory_stats(device=None):
    """Reset the peaks of the device's counters to their current values."""
    from tensorlib import memory
    memory.reset_peak_memory_stats(_dev(device))


def reset_max_memory_allocated(device=None):
    """Reset the peak of ``memory_allocated``."""
    from tensorlib import memory
    memory.reset_max_memory_allocated(_dev(device))


def empty_cache():
    """Give the cached, unused memory of every device back to the driver (after the work
    queued on the device has run)."""
    from tensorlib import memory
    for i in range(device_count()):
        synchronize(i)
        memory.empty_cache(_dev(i))


def set_per_process_memory_fraction(fraction, device=None):
    """Cap what the caching allocator may hold on the device at ``fraction`` of its total
    memory; an allocation beyond it raises :class:`OutOfMemoryError` (after the cache is
    emptied and the allocation retried)."""
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    from tensorlib import memory
    total = get_device_properties(device).total_memory
    memory.set_per_process_memory_limit(int(total * fraction), _dev(device))


def mem_get_info(device=None):
    """(free, total) bytes of the device: total minus what this process's allocator holds
    (the emulator has no other users of its memory)."""
    total = get_device_properties(device).total_memory
    return (max(total - memory_reserved(device), 0), total)
