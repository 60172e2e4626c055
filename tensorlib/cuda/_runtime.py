"""The CUDA runtime interface: one set of calls, two back ends, chosen at first use.

Everything above this module (the device allocator's segments, the kernel launches of
``tensorlib.cuda._ops``, streams and events of ``tensorlib.cuda``) talks to a
:class:`Runtime`; which one is picked by ``TENSORLIB_CUDA`` when a CUDA device is first
asked for (never at import of tensorlib):

- ``emulate``: the CPU emulator (:mod:`tensorlib.cuda._emulator`): the same ``.cu`` sources
  built by the host C++ compiler, streams as in-order worker queues, device memory as
  separate mappings. What the test suite uses on machines without a GPU.
- ``pycuda``: the real GPU through pycuda (the ``cuda`` extra); an error saying what is
  missing when pycuda or the driver is not there.
- unset or ``auto``: pycuda when it imports and finds a device, otherwise no CUDA device
  (``tensorlib.cuda.is_available()`` is False), as PyTorch without a GPU.
- ``0``/``off``/``none``: no CUDA device.

Addresses cross this interface as Python ints (the value of the device pointer); the
runtime maps them back to its own handles.

>>> rt = get_runtime()                                   # doctest: +SKIP
>>> rt.name                                              # doctest: +SKIP
'emulator'
"""

import bisect
import ctypes
import os
import threading

import numpy as np

__all__ = ["Runtime", "EmulatorRuntime", "PycudaRuntime", "get_runtime", "runtime_or_none",
           "CudaUnavailable", "CudaDriverMissing", "MODES"]

MODES = ("auto", "emulate", "pycuda", "off")


class CudaUnavailable(RuntimeError):
    """No CUDA runtime can be used (no driver, no pycuda, or ``TENSORLIB_CUDA=off``).
    Its message says what is missing; PyTorch raises RuntimeError/AssertionError here.

    >>> issubclass(CudaUnavailable, RuntimeError)
    True
    """


class CudaDriverMissing(CudaUnavailable, ImportError):
    """``TENSORLIB_CUDA=pycuda`` asked for the real GPU, but pycuda or the NVIDIA driver is
    missing: an ImportError (what is missing is a library) as well as a RuntimeError.

    >>> issubclass(CudaDriverMissing, ImportError)
    True
    """


class Runtime:
    """The interface. Addresses are ints; streams and events are the back end's objects
    (``tensorlib.cuda.Stream``/``Event`` wrap them)."""

    name = "none"
    # blocks of a grid-stride launch at most: more only add scheduling cost
    grid_cap = 4096

    def device_count(self):
        raise NotImplementedError

    # memory: segments for the caching allocator (tensorlib/_core/allocator.pyx)
    def reserve(self, index, nbytes):
        """``nbytes`` of device memory on device ``index``: its address (MemoryError when
        the device is out of memory)."""
        raise NotImplementedError

    def release(self, index, address):
        raise NotImplementedError

    def device_of(self, address):
        """The device index holding ``address``, or None for host memory."""
        raise NotImplementedError

    # copies, in order on ``stream`` (None: the device's default stream)
    def htod(self, address, host, stream):
        raise NotImplementedError

    def dtoh(self, host, address, stream):
        raise NotImplementedError

    def dtod(self, dst, src, nbytes, stream):
        raise NotImplementedError

    def host_alloc(self, nbytes):
        """Page-locked host memory of ``nbytes`` (> 0): an object with ``address`` that
        keeps the memory until it is dropped. Copies from it to a device need no staging."""
        raise NotImplementedError

    # kernels
    def launch(self, family, name, grid, block, args, stream, shared=0, index=None):
        """Queue kernel ``name`` of ``cuda/<family>.cu``. ``args``: ints marked as device
        pointers with :func:`ptr`, NumPy scalars and ctypes structures. ``index``: the
        device, when the caller knows it (else the first pointer's)."""
        raise NotImplementedError

    def launch_packed(self, family, name, grid, block, params, nptrs, stream, index,
                      shared=0):
        """Queue kernel ``name`` whose parameter block is already laid out (bytes, as
        :func:`pack_kernel_args` lays them): ``nptrs`` device addresses of 8 bytes, then one
        structure passed by value. The hot launches' path: their callers pack in C."""
        # the generic way: the block split back into arguments (the emulator maps each
        # device address to its own memory)
        args = [ptr(int.from_bytes(params[8 * i:8 * i + 8], "little")) for i in range(nptrs)]
        args.append(_blob(params[8 * nptrs:]))
        self.launch(family, name, grid, block, args, stream, shared, index)

    # streams, events, devices
    def new_stream(self, index, priority=0):
        raise NotImplementedError

    def default_stream(self, index):
        raise NotImplementedError

    def new_event(self, enable_timing=False):
        raise NotImplementedError

    def synchronize(self, index):
        raise NotImplementedError

    def device_name(self, index):
        raise NotImplementedError

    def properties(self, index):
        """A dict: name, total_memory, major, minor, multi_processor_count."""
        raise NotImplementedError


class ptr(int):
    """An int marked as a device address in a kernel's argument list.

    >>> int(ptr(4096)) + 1
    4097
    """

    __slots__ = ()


def pack_kernel_args(args):
    """A kernel's parameter block as bytes, laid out as the C ABI lays out the parameters
    (each at a multiple of its alignment): device addresses (:class:`ptr`) as 8 bytes,
    NumPy scalars by their dtype, ctypes structures (descriptors passed by value) as their
    bytes. pycuda packs a struct's bytes unaligned, so the whole block is built here.

    >>> pack_kernel_args([np.int32(1), ptr(2)]).hex()
    '01000000000000000200000000000000'
    """
    out = bytearray()
    for i, a in enumerate(args):
        if type(a) is ptr:
            data, align = a.to_bytes(8, "little"), 8
        elif isinstance(a, ptr):
            data, align = int(a).to_bytes(8, "little"), 8
        elif isinstance(a, np.number):
            data, align = a.tobytes(), a.dtype.alignment
        elif isinstance(a, ctypes.Structure):
            data, align = bytes(a), ctypes.alignment(type(a))
        else:
            raise TypeError(f"kernel argument {i}: {type(a).__name__} (expected a ptr, a "
                            f"NumPy scalar or a ctypes structure)")
        out += bytes(-len(out) % align) + data
    return bytes(out)


_blob_types = {}


def _blob(data):
    """``data`` (a multiple of 8 bytes) as a ctypes structure of 8-byte words: a descriptor
    passed by value, kept 8-byte aligned.

    >>> ctypes.sizeof(_blob(bytes(16)))
    16
    """
    n = len(data)
    cls = _blob_types.get(n)
    if cls is None:
        if n % 8:
            raise ValueError(f"a parameter structure of {n} bytes (a multiple of 8 expected)")
        cls = _blob_types[n] = type(f"_Blob{n}", (ctypes.Structure,),
                                    {"_fields_": [("words", ctypes.c_int64 * (n // 8))]})
    return cls.from_buffer_copy(data)


class _Segments:
    """Device segments by start address (sorted), for address -> (device, segment)."""

    def __init__(self):
        self._starts = []
        self._info = {}     # start -> (index, nbytes, handle)
        self._lock = threading.Lock()

    def add(self, start, index, nbytes, handle):
        with self._lock:
            bisect.insort(self._starts, start)
            self._info[start] = (index, nbytes, handle)

    def pop(self, start):
        with self._lock:
            i = bisect.bisect_left(self._starts, start)
            if i < len(self._starts) and self._starts[i] == start:
                del self._starts[i]
            return self._info.pop(start, None)

    def find(self, address):
        """(start, index, nbytes, handle) of the segment holding ``address``, or None."""
        with self._lock:
            i = bisect.bisect_right(self._starts, address) - 1
            if i < 0:
                return None
            start = self._starts[i]
            index, nbytes, handle = self._info[start]
            if address < start + max(nbytes, 1):
                return start, index, nbytes, handle
            return None


class EmulatorRuntime(Runtime):
    """The CPU emulator behind the interface.

    ``TENSORLIB_CUDA_DEVICES`` emulated devices (default 1), each with
    ``TENSORLIB_CUDA_EMU_MEMORY`` bytes of memory to report (default 16 GiB; the memory is
    the host's).
    """

    name = "emulator"

    def __init__(self):
        from tensorlib.cuda import _emulator as emu
        self._emu = emu
        self._segments = _Segments()
        self._total = int(os.environ.get("TENSORLIB_CUDA_EMU_MEMORY", str(16 << 30)))
        self._kernels = {}     # (family, name) -> kernel: the .cu files are read once

    def device_count(self):
        return self._emu.device_count()

    def reserve(self, index, nbytes):
        alloc = self._emu.mem_alloc(max(int(nbytes), 1), self._emu.get_device(index))
        self._segments.add(alloc.ptr, index, alloc.nbytes, alloc)
        return alloc.ptr

    def release(self, index, address):
        info = self._segments.pop(address)
        if info is not None:
            info[2].free()

    def device_of(self, address):
        seg = self._segments.find(address)
        return None if seg is None else seg[1]

    def _pointer(self, address):
        seg = self._segments.find(address)
        if seg is None:
            raise RuntimeError(f"address 0x{address:x} is not in device memory")
        start, _, _, alloc = seg
        return alloc + (address - start)

    def _stream(self, stream, index=0):
        return stream if stream is not None else self._emu.get_device(index).default_stream

    def htod(self, address, host, stream):
        self._emu.memcpy_htod_async(self._pointer(address), host, stream)

    def dtoh(self, host, address, stream):
        self._emu.memcpy_dtoh_async(host, self._pointer(address), stream)

    def dtod(self, dst, src, nbytes, stream):
        self._emu.memcpy_dtod_async(self._pointer(dst), self._pointer(src), nbytes, stream)

    def host_alloc(self, nbytes):
        # the emulator's device memory is host memory too: nothing to lock
        return PinnedHostMemory(np.empty(int(nbytes), np.uint8))

    def launch(self, family, name, grid, block, args, stream, shared=0, index=None):
        kernel = self._kernels.get((family, name))
        if kernel is None:
            kernel = self._kernels[family, name] = (
                self._emu.load_kernels(family).get_function(name))
        args = [self._pointer(a) if isinstance(a, ptr) else a for a in args]
        kernel(*args, grid=grid, block=block, shared=shared, stream=stream)

    def new_stream(self, index, priority=0):
        return self._emu.Stream(self._emu.get_device(index), priority)

    def default_stream(self, index):
        return self._emu.get_device(index).default_stream

    def new_event(self, enable_timing=False):
        return self._emu.Event(enable_timing)

    def synchronize(self, index):
        self._emu.get_device(index).synchronize()

    def device_name(self, index):
        self._emu.get_device(index)
        return "tensorlib CUDA emulator"

    def properties(self, index):
        self._emu.get_device(index)
        return {"name": self.device_name(index), "total_memory": self._total,
                "major": 8, "minor": 0, "multi_processor_count": os.cpu_count() or 1}


class PycudaRuntime(Runtime):
    """The real GPU through pycuda. Modules are cubins of the ``.cu`` sources for the
    device's architecture, from tensorlib's content-hashed cache (compiled by nvcc at first
    use when missing); launches, copies, streams and events are pycuda's. Created only when
    pycuda imports and the driver finds a device."""

    name = "pycuda"

    def __init__(self):
        try:
            import pycuda.driver as drv
        except ImportError as e:
            if "libcuda" in str(e):
                raise CudaUnavailable(f"pycuda is installed but the NVIDIA driver is not "
                                      f"({e})")
            raise CudaUnavailable(
                f"pycuda cannot be imported ({e}); install the 'cuda' extra (pip install "
                f"'tensorlib[cuda]') on a machine with an NVIDIA driver")
        try:
            drv.init()
            n = drv.Device.count()
        except Exception as e:  # pycuda's LogicError/RuntimeError carry the driver's words
            raise CudaUnavailable(f"the CUDA driver cannot be initialized through pycuda "
                                  f"({type(e).__name__}: {e})")
        if n == 0:
            raise CudaUnavailable("the CUDA driver reports no device")
        self._drv = drv
        self._n = n
        # four blocks of 256 threads per multiprocessor: on an H200 an add of 2^28 floats
        # ran 6% faster with 528 blocks than with 4096 (bench/results/gpu_tuning_H200_*)
        sms = min(drv.Device(i).get_attribute(drv.device_attribute.MULTIPROCESSOR_COUNT)
                  for i in range(n))
        self.grid_cap = max(4 * sms, 64)
        self._contexts = {}
        self._modules = {}
        self._functions = {}
        self._inflight = []    # (event, host array) of asynchronous copies still running
        self._default = {}
        self._segments = _Segments()
        self._lock = threading.Lock()

    def device_count(self):
        return self._n

    def _ctx(self, index):
        ctx = self._contexts.get(index)
        if ctx is None:
            if not 0 <= index < self._n:
                raise RuntimeError("CUDA error: invalid device ordinal")
            with self._lock:
                ctx = self._contexts.get(index)
                if ctx is None:
                    ctx = self._drv.Device(index).retain_primary_context()
                    self._contexts[index] = ctx
        ctx.push()
        return ctx

    def _in(self, index, fn, *args):
        ctx = self._ctx(index)
        try:
            return fn(*args)
        finally:
            ctx.pop()

    def reserve(self, index, nbytes):
        try:
            alloc = self._in(index, self._drv.mem_alloc, max(int(nbytes), 1))
        except self._drv.MemoryError as e:
            raise MemoryError(str(e))
        self._segments.add(int(alloc), index, int(nbytes), alloc)
        return int(alloc)

    def release(self, index, address):
        info = self._segments.pop(address)
        if info is not None:
            self._in(index, info[2].free)

    def device_of(self, address):
        seg = self._segments.find(address)
        return None if seg is None else seg[1]

    def _index(self, address):
        i = self.device_of(address)
        if i is None:
            raise RuntimeError(f"address 0x{address:x} is not in device memory")
        return i

    def htod(self, address, host, stream):
        index = self._index(address)
        self._in(index, self._drv.memcpy_htod_async, address, host, _raw(stream))
        self._keep_until_done(index, host, stream)

    def dtoh(self, host, address, stream):
        index = self._index(address)
        self._in(index, self._drv.memcpy_dtoh_async, host, address, _raw(stream))
        self._keep_until_done(index, host, stream)

    def _keep_until_done(self, index, host, stream):
        # From page-locked memory the copy really is asynchronous: the host array must
        # outlive it (from pageable memory the driver has staged it before returning).
        with self._lock:
            self._inflight = [(e, h) for e, h in self._inflight if not e.query()]
        e = self._in(index, self._drv.Event, self._drv.event_flags.DISABLE_TIMING)
        self._in(index, e.record, _raw(stream))
        with self._lock:
            self._inflight.append((e, host))

    def dtod(self, dst, src, nbytes, stream):
        self._in(self._index(dst), self._drv.memcpy_dtod_async, dst, src, nbytes,
                 _raw(stream))

    def host_alloc(self, nbytes):
        # portable: page-locked for every device's context, not only the current one's
        flags = self._drv.host_alloc_flags.PORTABLE
        return PinnedHostMemory(self._in(0, self._drv.pagelocked_empty, int(nbytes), np.uint8,
                                         "C", flags))

    def _module(self, index, family):
        key = (index, family)
        mod = self._modules.get(key)
        if mod is None:
            # a cubin from the content-hashed cache (tensorlib.cuda.kernel_cache), compiled
            # by nvcc on a miss: no compiler at all when the cache was filled ahead
            from tensorlib.cuda import kernel_cache
            arch = kernel_cache.arch_of(*self._drv.Device(index).compute_capability())
            path = kernel_cache.compile_cubin(family, arch)
            mod = self._in(index, self._drv.module_from_file, path)
            self._modules[key] = mod
        return mod

    def _function(self, index, family, name):
        fn = self._functions.get((index, family, name))
        if fn is None:
            fn = self._functions[index, family, name] = (
                self._module(index, family).get_function(name))
        return fn

    def launch(self, family, name, grid, block, args, stream, shared=0, index=None):
        params = pack_kernel_args(args)
        if index is None:
            index = next((self._index(a) for a in args if isinstance(a, ptr)), 0)
        fn = self._function(index, family, name)
        grid = (grid, 1, 1) if isinstance(grid, int) else tuple(grid) + (1,) * (3 - len(grid))
        block = (block, 1, 1) if isinstance(block, int) else tuple(block) + (1,) * (3 - len(block))
        direct = getattr(fn, "_launch_kernel", None)
        if direct is not None:
            # the parameter block as it is: pycuda's own call would parse the arguments again
            self._in(index, direct, grid, block, params, shared, _raw(stream))
        else:
            # one void scalar: pycuda copies its bytes as the whole parameter block
            self._in(index, lambda: fn(np.void(params), grid=grid, block=block, shared=shared,
                                       stream=_raw(stream)))

    def launch_packed(self, family, name, grid, block, params, nptrs, stream, index,
                      shared=0):
        fn = self._functions.get((index, family, name)) or self._function(index, family, name)
        direct = getattr(fn, "_launch_kernel", None)
        if direct is None:
            Runtime.launch_packed(self, family, name, grid, block, params, nptrs, stream,
                                  index, shared)
            return
        ctx = self._ctx(index)
        try:
            direct((grid, 1, 1), (block, 1, 1), params, shared, _raw(stream))
        finally:
            ctx.pop()

    def new_stream(self, index, priority=0):
        return _PycudaStream(self, index, self._in(index, self._drv.Stream))

    def default_stream(self, index):
        # a stream of our own per device rather than the legacy null stream: it has a handle
        # to query, wait on and record into; created blocking, so work that others queue on
        # the null stream still runs after it (the stream __cuda_array_interface__ names)
        with self._lock:
            s = self._default.get(index)
        if s is None:
            s = self.new_stream(index)
            with self._lock:
                s = self._default.setdefault(index, s)
        return s

    def new_event(self, enable_timing=False):
        flags = 0 if enable_timing else self._drv.event_flags.DISABLE_TIMING
        return _PycudaEvent(self, flags)

    def synchronize(self, index):
        self._in(index, self._drv.Context.synchronize)

    def device_name(self, index):
        return self._drv.Device(index).name()

    def properties(self, index):
        d = self._drv.Device(index)
        major, minor = d.compute_capability()
        return {"name": d.name(), "total_memory": d.total_memory(), "major": major,
                "minor": minor,
                "multi_processor_count": d.get_attribute(
                    self._drv.device_attribute.MULTIPROCESSOR_COUNT)}


class PinnedHostMemory:
    """Page-locked host memory from a runtime (a NumPy array of bytes over it): the owner of
    a pinned tensor's storage, which keeps it while the storage lives.

    >>> m = PinnedHostMemory(np.zeros(8, np.uint8)); m.nbytes
    8
    """

    __slots__ = ("array", "address", "nbytes")

    def __init__(self, array):
        self.array = array
        self.address = array.ctypes.data
        self.nbytes = array.nbytes


def _raw(stream):
    return stream.raw if isinstance(stream, _PycudaStream) else stream


class _PycudaStream:
    """A pycuda stream with its device: every driver call on it runs with the device's
    context current (the driver needs one; Python threads start with none)."""

    __slots__ = ("rt", "index", "raw")

    def __init__(self, rt, index, raw):
        self.rt, self.index, self.raw = rt, index, raw

    @property
    def handle(self):
        return self.raw.handle

    def query(self):
        return bool(self.rt._in(self.index, self.raw.is_done))

    def synchronize(self):
        self.rt._in(self.index, self.raw.synchronize)

    def wait_event(self, event):
        if event.raw is not None:
            self.rt._in(self.index, self.raw.wait_for_event, event.raw)


class _PycudaEvent:
    """A pycuda event, created in the context of the stream it is first recorded on."""

    __slots__ = ("rt", "flags", "index", "raw")

    def __init__(self, rt, flags):
        self.rt, self.flags, self.index, self.raw = rt, flags, None, None

    def record(self, stream):
        if self.raw is None:
            self.index = stream.index
            self.raw = self.rt._in(stream.index, self.rt._drv.Event, self.flags)
        self.rt._in(stream.index, self.raw.record, stream.raw)

    def query(self):
        return self.raw is None or bool(self.rt._in(self.index, self.raw.query))

    def synchronize(self):
        if self.raw is not None:
            self.rt._in(self.index, self.raw.synchronize)

    def elapsed_time(self, end):
        """Milliseconds from this event to ``end``."""
        return self.rt._in(self.index, self.raw.time_till, end.raw)


_runtime = None
_runtime_error = None
_lock = threading.Lock()


def _mode():
    mode = os.environ.get("TENSORLIB_CUDA", "auto").strip().lower() or "auto"
    if mode in ("0", "none", "off", "cpu"):
        return "off"
    if mode in ("emulate", "emulator", "emu"):
        return "emulate"
    if mode not in MODES:
        raise ValueError(f"TENSORLIB_CUDA={os.environ.get('TENSORLIB_CUDA')!r} is not one of "
                         f"auto, emulate, pycuda, off")
    return mode


def _choose():
    mode = _mode()
    if mode == "emulate":
        return EmulatorRuntime()
    if mode == "pycuda":
        try:
            return PycudaRuntime()
        except CudaUnavailable as e:
            raise CudaDriverMissing(f"TENSORLIB_CUDA=pycuda: {e}") from None
    if mode == "off":
        raise CudaUnavailable("CUDA is turned off (TENSORLIB_CUDA=off)")
    try:
        return PycudaRuntime()
    except CudaUnavailable as e:
        raise CudaUnavailable(
            f"no CUDA device: {e}. Set TENSORLIB_CUDA=emulate to run the CUDA back end on "
            f"the CPU emulator") from None


def get_runtime():
    """The runtime, chosen at the first call (CudaUnavailable saying why when there is
    none; ValueError for an unknown ``TENSORLIB_CUDA``)."""
    global _runtime, _runtime_error
    if _runtime is not None:
        return _runtime
    with _lock:
        if _runtime is None:
            if _runtime_error is not None:
                raise type(_runtime_error)(str(_runtime_error))
            try:
                _runtime = _choose()
            except CudaUnavailable as e:
                _runtime_error = e
                raise
    return _runtime


def runtime_or_none():
    """The runtime, or None when no CUDA device can be used (ValueError still raised for an
    unknown ``TENSORLIB_CUDA``)."""
    try:
        return get_runtime()
    except CudaUnavailable:
        return None
