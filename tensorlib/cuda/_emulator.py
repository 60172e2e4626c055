"""The CUDA emulator: tensorlib's ``.cu`` kernels run on the CPU, with the GPU's contracts.

The same kernel sources nvcc compiles for the GPU are compiled here by the host C++ compiler
against a shim header (``cuda/emu/tl_emu.h``): CUDA threads are fibers, ``__syncthreads`` a
round-robin yield, ``__shared__`` memory per block, warp shuffles and votes warp barriers.
Around the kernels this module keeps what the GPU promises and nothing more:

- device memory is a separate allocation; host code holds only an opaque
  :class:`DevicePointer` and moves data with the ``memcpy_*`` functions;
- a :class:`Stream` is an in-order queue served by its own worker thread, so launches and
  async copies return at once and a result read before ``synchronize()`` is not there yet;
- :class:`Event` objects order streams and time them;
- checking mode (``check=True``) runs each launch under the forward, reverse and shuffled
  thread orders and fails when the results differ (a race), reports a divergent
  ``__syncthreads``, poisons dynamic shared memory and ends every allocation at a guard page,
  so an out-of-bounds access fails the launch instead of passing by luck;
- a kernel fault (bad address, ``TL_ASSERT``, ``__trap``, a deadlocked barrier) is raised
  as :class:`KernelError` naming the kernel, never a crashed interpreter.

Compiled modules are cached under ``$TENSORLIB_CACHE`` (default ``~/.cache/tensorlib``), in
``cuda-emu/``, keyed by a hash of the source, the headers, the flags and the compiler.

>>> import numpy as np
>>> from tensorlib.cuda import _emulator as emu
>>> mod = emu.load_kernels("elementwise")
>>> x = emu.to_device(np.arange(5, dtype=np.float32))
>>> y = emu.mem_alloc(x.nbytes)
>>> mod.tl_exp_f32(x, y, np.int64(5), grid=(1,), block=(128,))
>>> emu.from_device(y, (5,), np.float32).astype(float).round(3).tolist()
[1.0, 2.718, 7.389, 20.086, 54.598]
"""

import ctypes
import hashlib
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
import weakref

import numpy as np

__all__ = ["EmulatorError", "KernelError", "LaunchError", "DevicePointer", "DeviceAllocation",
           "Device", "Stream", "Event", "Module", "Kernel", "get_device", "device_count",
           "launch",
           "load_kernels", "load_module", "mem_alloc", "to_device", "from_device",
           "memcpy_htod", "memcpy_dtoh", "memcpy_dtod", "memcpy_htod_async",
           "memcpy_dtoh_async", "memcpy_dtod_async", "synchronize", "cache_dir"]

SCHEDULES = ("forward", "reverse", "shuffled")


class EmulatorError(RuntimeError):
    """An error of the emulated CUDA runtime (bad pointer, compile failure, ...).

    >>> issubclass(EmulatorError, RuntimeError)
    True
    """


class KernelError(EmulatorError):
    """A kernel failed while running: a fault, an assertion, a divergent barrier or a race
    found by checking mode. ``kernel`` is its name. Raised by the next synchronization of
    the stream it ran on (like CUDA's asynchronous errors).

    >>> KernelError("tl_add_f32", "boom").kernel
    'tl_add_f32'
    """

    def __init__(self, kernel, message):
        super().__init__(f"CUDA kernel '{kernel}' failed on the emulator: {message}")
        self.kernel = kernel


class LaunchError(EmulatorError):
    """An invalid launch (configuration or arguments), raised by the launch itself.

    >>> issubclass(LaunchError, EmulatorError)
    True
    """


# ---- compiling ------------------------------------------------------------------------------

def _repo_cuda_dir():
    from tensorlib.cuda import kernel_dir
    return kernel_dir()


def cache_dir():
    """Where compiled emulator modules live: ``$TENSORLIB_CACHE/cuda-emu``, by default
    ``~/.cache/tensorlib/cuda-emu`` (created on first use).

    >>> cache_dir().endswith("cuda-emu")
    True
    """
    root = os.environ.get("TENSORLIB_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "tensorlib")
    return os.path.join(root, "cuda-emu")


_CXX = os.environ.get("CXX", "g++")
_FLAGS = ["-std=c++17", "-O2", "-fPIC", "-shared", "-pthread", "-fno-strict-aliasing",
          "-ffp-contract=off", "-w",
          # a big stack frame probes each page, so a fiber stack overflow hits the guard page
          # instead of jumping over it into a neighbour's stack
          "-fstack-clash-protection"]
_compile_lock = threading.Lock()
_cxx_version = None


def _compiler_id():
    global _cxx_version
    if _cxx_version is None:
        try:
            _cxx_version = subprocess.run([_CXX, "--version"], capture_output=True,
                                          text=True).stdout
        except OSError as e:
            raise EmulatorError(f"the CUDA emulator needs a C++ compiler ({_CXX}): {e}")
    return _cxx_version


def _headers(include_dirs):
    out = []
    for d in include_dirs:
        for name in sorted(os.listdir(d)):
            if name.endswith((".h", ".cuh")):
                with open(os.path.join(d, name), "rb") as f:
                    out.append(name.encode() + b"\0" + f.read())
    return out


def _build(source, out_name, extra, include_dirs):
    """Compile `source` (C++ text) into the cache unless an identical build is there."""
    h = hashlib.sha256()
    for part in [source.encode(), _compiler_id().encode(), " ".join(_FLAGS + extra).encode()]:
        h.update(part + b"\0")
    for part in _headers(include_dirs):
        h.update(part + b"\0")
    folder = cache_dir()
    os.makedirs(folder, exist_ok=True)
    so = os.path.join(folder, f"{out_name}-{h.hexdigest()[:20]}.so")
    if os.path.exists(so):
        return so
    with _compile_lock:
        if os.path.exists(so):
            return so
        fd, src = tempfile.mkstemp(suffix=".cpp", dir=folder)
        with os.fdopen(fd, "w") as f:
            f.write(source)
        tmp = so + f".{os.getpid()}.tmp"
        cmd = [_CXX, *_FLAGS, *extra, *[f"-I{d}" for d in include_dirs], src, "-o", tmp]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                raise EmulatorError(f"compiling {out_name} for the CUDA emulator failed:\n"
                                    f"{' '.join(cmd)}\n{r.stderr[-4000:]}")
            os.replace(tmp, so)  # atomic: parallel test processes never load half a file
        finally:
            os.unlink(src)
            if os.path.exists(tmp):
                os.unlink(tmp)
    return so


_runtime = None
_runtime_lock = threading.Lock()


def _emu_dir():
    return os.path.join(_repo_cuda_dir(), "emu")


def _load_runtime():
    global _runtime
    with _runtime_lock:
        if _runtime is None:
            emu = _emu_dir()
            with open(os.path.join(emu, "tl_emu_rt.cpp")) as f:
                src = f.read()
            # TENSORLIB_CUDA_EMU_UCONTEXT=1: the portable context switch instead of the
            # x86-64 one (to test it, or to debug with tools that know ucontext)
            extra = (["-DTL_EMU_UCONTEXT"]
                     if os.environ.get("TENSORLIB_CUDA_EMU_UCONTEXT") == "1" else [])
            so = _build(src, "tl_emu_rt", extra, [emu])
            # RTLD_GLOBAL: the kernel modules' tl_emu_* calls resolve to this library
            lib = ctypes.CDLL(so, mode=ctypes.RTLD_GLOBAL)
            lib.tl_emu_malloc.restype = ctypes.c_void_p
            lib.tl_emu_malloc.argtypes = [ctypes.c_ulonglong, ctypes.c_int]
            lib.tl_emu_free.argtypes = [ctypes.c_void_p]
            lib.tl_emu_last_error.restype = ctypes.c_char_p
            lib.tl_emu_fault_address.restype = ctypes.c_void_p
            _runtime = lib
    return _runtime


_EXTERN_SHARED = re.compile(
    r"extern\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s+)?([A-Za-z_][\w\s:<>,*]*?)"
    r"\s*(?:__align__\s*\(\s*\d+\s*\)\s*)?\b([A-Za-z_]\w*)\s*\[\s*\]\s*;")


def _rewrite_dynamic_shared(src):
    # `extern __shared__ T name[];` has no C++ spelling: it becomes a pointer to the launch's
    # dynamic shared memory (same name, same element type)
    return _EXTERN_SHARED.sub(
        lambda m: f"{m.group(1)}* const {m.group(2)} = "
                  f"reinterpret_cast<{m.group(1)}*>(tl_emu_dynamic_shared());", src)


def _discover_kernels(path, include_dirs):
    """The `extern "C" __global__` kernels of a .cu file, macro-generated ones included: the
    preprocessor expands the file with `__global__` turned into a marker. Cached like the
    modules, so a process start costs no preprocessor run."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read() + b"\0" + _compiler_id().encode() + b"\0" + path.encode())
    for part in _headers(include_dirs):
        h.update(part + b"\0")
    listing = os.path.join(cache_dir(), f"kernels-{h.hexdigest()[:20]}.txt")
    if os.path.exists(listing):
        with open(listing) as f:
            return f.read().split()
    names = _preprocess_for_kernels(path, include_dirs)
    os.makedirs(cache_dir(), exist_ok=True)
    tmp = f"{listing}.{os.getpid()}.{threading.get_ident()}.tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(names) + "\n")
    os.replace(tmp, listing)
    return names


def _preprocess_for_kernels(path, include_dirs):
    cmd = [_CXX, "-E", "-P", "-x", "c++", "-std=c++17", "-DTL_EMU_DISCOVER", "-include",
           os.path.join(_emu_dir(), "tl_emu.h"), *[f"-I{d}" for d in include_dirs], path]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise EmulatorError(f"preprocessing {path} failed:\n{r.stderr[-4000:]}")
    names = re.findall(r'extern\s+"C"\s+__tl_emu_global__\s+void\s+([A-Za-z_]\w*)\s*\(',
                       r.stdout)
    return list(dict.fromkeys(names))


class Module:
    """A `.cu` file compiled for the emulator; its kernels are attributes (or
    :meth:`get_function`, as in pycuda).

    >>> mod = load_kernels("reduce")
    >>> "tl_sum_rows_f32" in mod.kernel_names
    True
    """

    def __init__(self, path):
        path = os.path.abspath(path)
        include_dirs = [os.path.dirname(path), _repo_cuda_dir(), _emu_dir()]
        include_dirs = list(dict.fromkeys(include_dirs))
        _load_runtime()
        names = _discover_kernels(path, include_dirs)
        with open(path) as f:
            src = _rewrite_dynamic_shared(f.read())
        trailer = "".join(f"TL_EMU_EXPORT({n})\n" for n in names)
        source = f'#line 1 "{path}"\n{src}\n#line 1 "<tl_emu exports>"\n{trailer}'
        so = _build(source, os.path.splitext(os.path.basename(path))[0],
                    ["-x", "c++", "-include", "tl_emu.h"], include_dirs)
        self.path = path
        self.kernel_names = tuple(names)
        self._lib = ctypes.CDLL(so)
        self._kernels = {}

    def get_function(self, name):
        """The kernel `name` as a :class:`Kernel` (AttributeError naming the file if absent).

        >>> load_kernels("reduce").get_function("tl_max_rows_f64").signature
        'PPqq'
        """
        k = self._kernels.get(name)
        if k is None:
            if name not in self.kernel_names:
                raise AttributeError(f"no kernel '{name}' in {os.path.basename(self.path)}")
            k = self._kernels[name] = Kernel(self, name)
        return k

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self.get_function(name)


_modules = {}


def load_module(path):
    """Compile (or take from the cache) the `.cu` file at `path` for the emulator.

    >>> import os
    >>> from tensorlib.cuda import kernel_dir
    >>> load_module(os.path.join(kernel_dir(), "reduce.cu")) is load_kernels("reduce")
    True
    """
    path = os.path.abspath(path)
    with open(path, "rb") as f:
        key = (path, hashlib.sha256(f.read()).hexdigest())
    m = _modules.get(key)
    if m is None:
        m = _modules[key] = Module(path)
    return m


def load_kernels(family):
    """The kernel family `family` (``cuda/<family>.cu``) compiled for the emulator.

    >>> load_kernels("elementwise").tl_add_f32.signature
    'PPPq'
    """
    return load_module(os.path.join(_repo_cuda_dir(), family + ".cu"))


# ---- memory ---------------------------------------------------------------------------------

class DevicePointer:
    """An address in emulated device memory: an opaque handle (no buffer protocol, nothing
    the host can read). ``int(p)`` is the address; ``p + nbytes`` an offset pointer, which
    keeps its allocation alive.

    >>> a = mem_alloc(16)
    >>> (a + 8).offset, (a + 8).allocation is a
    (8, True)
    """

    __slots__ = ("allocation", "offset")

    def __init__(self, allocation, offset):
        self.allocation = allocation
        self.offset = offset

    @property
    def device(self):
        return self.allocation.device

    @property
    def ptr(self):
        return self.allocation._ptr + self.offset

    def __int__(self):
        return self.ptr

    __index__ = __int__

    def __add__(self, nbytes):
        return DevicePointer(self.allocation, self.offset + int(nbytes))

    def _check(self, nbytes, what):
        a = self.allocation
        if a._ptr is None:
            raise EmulatorError(f"{what}: the device allocation was freed")
        if self.offset < 0 or self.offset + nbytes > a.nbytes:
            raise EmulatorError(
                f"{what}: {nbytes} bytes at offset {self.offset} overrun a device allocation "
                f"of {a.nbytes} bytes")

    def __repr__(self):
        return f"<DevicePointer cuda:{self.device.index} 0x{self.ptr:x}>"


class DeviceAllocation(DevicePointer):
    """`nbytes` of emulated device memory (from :func:`mem_alloc`); freed by :meth:`free`
    or when no reference remains. In checking mode the data ends flush at a guard page and
    starts filled with 0xff bytes (NaN as floats, -1 as integers), not zeros.

    >>> a = mem_alloc(100)
    >>> a.nbytes, a.device.index
    (100, 0)
    >>> a.free()
    """

    __slots__ = ("nbytes", "_ptr", "_device", "__weakref__")
    offset = 0  # an allocation is its own base: no self-reference, freed by refcounting

    @property
    def allocation(self):
        return self

    def __init__(self, device, nbytes):
        self.nbytes = int(nbytes)
        self._device = device
        p = _load_runtime().tl_emu_malloc(self.nbytes, 1 if device.check else 0)
        if not p:
            raise MemoryError(f"emulated cuda:{device.index}: cannot allocate {nbytes} bytes")
        self._ptr = p
        if device.check:  # like cudaMalloc's, the memory is not zeroed: reading it shows
            ctypes.memset(p, 0xFF, self.nbytes)
        device._allocations[p] = weakref.ref(self)

    @property
    def device(self):
        return self._device

    def free(self):
        """Return the memory now (later uses raise EmulatorError). Waits for the work
        queued on the device first, as cudaFree does."""
        if self._ptr is not None:
            self._device._wait_idle()
            self._release()

    def _release(self):
        if self._ptr is not None:
            self._device._allocations.pop(self._ptr, None)
            _load_runtime().tl_emu_free(ctypes.c_void_p(self._ptr))
            self._ptr = None

    def __del__(self):
        try:
            self._release()  # unreferenced: no queued work can hold it
        except Exception:
            pass


def _as_pointer(p, what):
    if not isinstance(p, DevicePointer):
        raise TypeError(f"{what}: expected a device pointer, got {type(p).__name__}")
    return p


def _host_view(arr, what, writable=False):
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"{what}: expected a numpy array, got {type(arr).__name__}")
    if not arr.flags.c_contiguous:
        raise ValueError(f"{what}: the host array must be C-contiguous")
    if writable and not arr.flags.writeable:
        raise ValueError(f"{what}: the host array is read-only")
    return arr


# ---- devices, streams, events ---------------------------------------------------------------

class Device:
    """One emulated CUDA device: its allocations, its default stream, its checking mode.

    ``check`` (default: ``TENSORLIB_CUDA_EMU_CHECK=1``) turns on checking mode for every
    launch on the device and for the allocations made after it is set. ``latency`` (seconds,
    default ``TENSORLIB_CUDA_EMU_LATENCY`` or 0) delays every queued operation, which makes
    asynchrony visible in tests.

    >>> d = get_device(0)
    >>> d.index, d.default_stream.device is d
    (0, True)
    """

    def __init__(self, index):
        self.index = index
        self.check = os.environ.get("TENSORLIB_CUDA_EMU_CHECK", "0") == "1"
        self.latency = float(os.environ.get("TENSORLIB_CUDA_EMU_LATENCY", "0") or 0)
        self._allocations = {}
        self._streams = weakref.WeakSet()
        self._lock = threading.Lock()
        self._default = None

    @property
    def default_stream(self):
        with self._lock:
            if self._default is None:
                self._default = Stream(self)
            return self._default

    def _wait_idle(self):
        for s in list(self._streams):
            t = s._last
            if t is not None and threading.current_thread() is not s._thread:
                t.done.wait()

    def synchronize(self):
        """Wait for the work queued on every stream of this device (and raise its errors)."""
        for s in list(self._streams):
            s.synchronize()

    def allocation_at(self, address):
        """(allocation, offset) of a device address, or (None, None)."""
        for p, ref in list(self._allocations.items()):
            a = ref()
            if a is not None and p <= address < p + max(a.nbytes, 1):
                return a, address - p
        return None, None

    def describe_address(self, address):
        """Where `address` lies relative to this device's allocations, for fault messages."""
        best = None
        for p, ref in list(self._allocations.items()):
            a = ref()
            if a is None:
                continue
            if p <= address < p + a.nbytes:
                return f"byte {address - p} of a {a.nbytes}-byte device allocation"
            if address >= p + a.nbytes and (best is None or address - p - a.nbytes < best[0]):
                best = (address - p - a.nbytes, a.nbytes)
        if best is not None and best[0] < 1 << 16:
            return f"{best[0]} bytes past the end of a {best[1]}-byte device allocation"
        return "outside every device allocation"


_devices = None
_devices_lock = threading.Lock()


def device_count():
    """The number of emulated devices: ``TENSORLIB_CUDA_DEVICES`` (default 1).

    >>> device_count() >= 1
    True
    """
    return len(_all_devices())


_forked = False


def _after_fork_in_child():
    # the parent's stream worker threads do not exist in a forked child: work queued there
    # would never run, so refuse to go on, as PyTorch does
    global _forked, _devices_lock, _compile_lock, _runtime_lock
    if _devices is not None:
        _forked = True
    _devices_lock, _compile_lock, _runtime_lock = (threading.Lock(), threading.Lock(),
                                                   threading.Lock())


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _all_devices():
    global _devices
    if _forked:
        raise RuntimeError("Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
                           "multiprocessing, you must use the 'spawn' start method")
    with _devices_lock:
        if _devices is None:
            n = int(os.environ.get("TENSORLIB_CUDA_DEVICES", "1") or 1)
            _devices = [Device(i) for i in range(max(n, 1))]
    return _devices


def get_device(index=0):
    """The emulated device `index` (ValueError when out of range).

    >>> get_device(0).index
    0
    """
    devs = _all_devices()
    if not 0 <= index < len(devs):
        raise ValueError(f"CUDA error: invalid device ordinal {index} "
                         f"({len(devs)} emulated device(s))")
    return devs[index]


def synchronize(device=None):
    """Wait for all work on `device` (default: every emulated device).

    >>> synchronize()
    """
    for d in ([device] if device is not None else _all_devices()):
        d.synchronize()


class _Token:
    """Completion of one queued operation."""

    __slots__ = ("done", "time", "error")

    def __init__(self):
        self.done = threading.Event()
        self.time = None
        self.error = None


def _serve(q, device_ref):
    while True:
        item = q.get()
        if item is None:
            return
        fn, token, stream_ref = item
        dev = device_ref()
        if dev is not None and dev.latency:
            time.sleep(dev.latency)
        st = stream_ref()
        err = st._error if st is not None else None
        if err is None:
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - kept for the next synchronize
                err = e
                if st is not None:
                    st._error = e
        token.error = err
        token.time = time.perf_counter()
        token.done.set()
        del fn, item, st


class Stream:
    """An in-order queue of device work served by a worker thread: launches and async copies
    return at once and run in order; :meth:`synchronize` waits for them and raises the first
    error among them (then clears it). Streams do not wait for each other unless told to
    (:meth:`wait_event`, :meth:`wait_stream`), like CUDA's non-blocking streams.

    >>> s = Stream()
    >>> a = mem_alloc(8)
    >>> memcpy_htod_async(a, np.ones(2, np.float32), s)
    >>> s.synchronize(); s.query()
    True
    """

    def __init__(self, device=None, priority=0):
        self.device = get_device(0) if device is None else (
            device if isinstance(device, Device) else get_device(device))
        self.priority = priority
        self._q = queue.Queue()
        self._last = None
        self._error = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=_serve, daemon=True,
                                        args=(self._q, weakref.ref(self.device)),
                                        name=f"tl-emu-stream-cuda{self.device.index}")
        self._thread.start()
        self.device._streams.add(self)
        weakref.finalize(self, self._q.put, None)

    def _enqueue(self, fn):
        if _forked:
            _all_devices()  # raises: this stream's worker thread stayed in the parent
        token = _Token()
        with self._lock:
            self._last = token
            self._q.put((fn, token, weakref.ref(self)))
        return token

    def query(self):
        """True when every operation queued so far has finished."""
        t = self._last
        return t is None or t.done.is_set()

    def synchronize(self):
        """Wait for every queued operation; raise the stream's pending error, if any."""
        t = self._last
        if t is not None:
            t.done.wait()
        err, self._error = self._error, None
        if err is not None:
            raise err

    def hold(self):
        """Emulator only: stop this stream before the work queued from now on, until the
        returned gate's ``release()``; for tests that must see work still pending.

        >>> s = Stream(); gate = s.hold()
        >>> a = mem_alloc(4); memcpy_htod_async(a, np.ones(1, np.float32), s)
        >>> s.query()
        False
        >>> gate.release(); s.synchronize(); s.query()
        True
        """
        gate = threading.Event()
        gate.release = gate.set
        self._enqueue(gate.wait)
        return gate

    def wait_event(self, event):
        """Make later work on this stream wait until `event`'s latest record has completed."""
        token = event._token
        if token is not None:
            self._enqueue(token.done.wait)

    def record_event(self, event=None):
        """Record `event` (a new one by default) on this stream and return it.

        >>> s = Stream(); e = s.record_event(); e.synchronize(); e.query()
        True
        """
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_stream(self, other):
        """Make later work on this stream wait for the work queued on `other` so far."""
        ev = Event()
        ev.record(other)
        self.wait_event(ev)

    def __repr__(self):
        return f"<emulated Stream cuda:{self.device.index} at 0x{id(self):x}>"


class Event:
    """A marker in a stream: :meth:`record` enqueues it, :meth:`query`/:meth:`synchronize`
    see it complete, :meth:`elapsed_time` gives milliseconds between two recorded events
    (host clock at completion on the stream's worker; an emulator's time, not a GPU's).

    >>> s = Stream(); a, b = Event(enable_timing=True), Event(enable_timing=True)
    >>> a.record(s); b.record(s); b.synchronize()
    >>> a.elapsed_time(b) >= 0
    True
    """

    def __init__(self, enable_timing=False):
        self.enable_timing = enable_timing
        self._token = None

    def record(self, stream=None):
        stream = stream if stream is not None else get_device(0).default_stream
        self._token = stream._enqueue(lambda: None)

    def wait(self, stream=None):
        """Make later work on `stream` (default: cuda:0's default stream) wait for this
        event's latest record."""
        (stream if stream is not None else get_device(0).default_stream).wait_event(self)

    def query(self):
        """True when the latest record has completed (or the event was never recorded)."""
        return self._token is None or self._token.done.is_set()

    def synchronize(self):
        """Wait for the latest record; raise an error of the work before it on its stream."""
        if self._token is not None:
            self._token.done.wait()
            if self._token.error is not None:
                raise self._token.error

    def elapsed_time(self, end):
        """Milliseconds from this event to `end`, both recorded and completed."""
        if not (self.enable_timing and end.enable_timing):
            raise EmulatorError("elapsed_time needs two events created with enable_timing=True")
        for ev in (self, end):
            if ev._token is None or not ev._token.done.is_set():
                raise EmulatorError("elapsed_time: both events must be recorded and completed "
                                    "(synchronize the end event first)")
        return (end._token.time - self._token.time) * 1000.0


def _stream_of(stream, ptrs):
    if stream is None:
        dev = ptrs[0].device if ptrs else get_device(0)
        return dev.default_stream
    if not isinstance(stream, Stream):
        raise TypeError(f"expected a Stream, got {type(stream).__name__}")
    return stream


# ---- copies ---------------------------------------------------------------------------------

def mem_alloc(nbytes, device=None):
    """Allocate `nbytes` on an emulated device (default cuda:0).

    >>> mem_alloc(4).nbytes
    4
    """
    dev = get_device(0) if device is None else (
        device if isinstance(device, Device) else get_device(device))
    return DeviceAllocation(dev, nbytes)


def _htod_fn(dst, src):
    def run():
        dst._check(src.nbytes, "memcpy_htod")
        ctypes.memmove(dst.ptr, src.ctypes.data, src.nbytes)
    return run


def _dtoh_fn(dst, src):
    def run():
        src._check(dst.nbytes, "memcpy_dtoh")
        ctypes.memmove(dst.ctypes.data, src.ptr, dst.nbytes)
    return run


def _dtod_fn(dst, src, nbytes):
    def run():
        src._check(nbytes, "memcpy_dtod (source)")
        dst._check(nbytes, "memcpy_dtod (destination)")
        ctypes.memmove(dst.ptr, src.ptr, nbytes)
    return run


def memcpy_htod_async(dst, src, stream=None):
    """Queue a copy of the host array `src` to device memory `dst` on `stream`. The array is
    kept alive until the copy has run; changing it before then changes what is copied.

    >>> a = mem_alloc(8); memcpy_htod_async(a, np.zeros(2, np.float32)); synchronize()
    """
    dst = _as_pointer(dst, "memcpy_htod")
    src = _host_view(src, "memcpy_htod")
    dst._check(src.nbytes, "memcpy_htod")
    _stream_of(stream, [dst])._enqueue(_htod_fn(dst, src))


def memcpy_dtoh_async(dst, src, stream=None):
    """Queue a copy of device memory `src` into the host array `dst` (dst.nbytes bytes).

    >>> a = to_device(np.ones(2, np.float32)); h = np.zeros(2, np.float32)
    >>> memcpy_dtoh_async(h, a); synchronize(); h.tolist()
    [1.0, 1.0]
    """
    src = _as_pointer(src, "memcpy_dtoh")
    dst = _host_view(dst, "memcpy_dtoh", writable=True)
    src._check(dst.nbytes, "memcpy_dtoh")
    _stream_of(stream, [src])._enqueue(_dtoh_fn(dst, src))


def memcpy_dtod_async(dst, src, nbytes, stream=None):
    """Queue a device-to-device copy of `nbytes`.

    >>> a = to_device(np.ones(2)); b = mem_alloc(16); memcpy_dtod_async(b, a, 16)
    >>> from_device(b, (2,), np.float64).tolist()
    [1.0, 1.0]
    """
    dst, src = _as_pointer(dst, "memcpy_dtod"), _as_pointer(src, "memcpy_dtod")
    src._check(nbytes, "memcpy_dtod (source)")
    dst._check(nbytes, "memcpy_dtod (destination)")
    _stream_of(stream, [dst])._enqueue(_dtod_fn(dst, src, int(nbytes)))


def memcpy_htod(dst, src, stream=None):
    """Copy the host array `src` to `dst` and wait for it (on `stream`, default the
    device's default stream: work queued on other streams is not waited for).

    >>> a = mem_alloc(4); memcpy_htod(a, np.float32([2.5]))
    """
    memcpy_htod_async(dst, src, stream)
    _stream_of(stream, [dst]).synchronize()


def memcpy_dtoh(dst, src, stream=None):
    """Copy device memory into the host array `dst` and wait for it.

    >>> a = to_device(np.float32([2.5])); h = np.empty(1, np.float32)
    >>> memcpy_dtoh(h, a); h.tolist()
    [2.5]
    """
    memcpy_dtoh_async(dst, src, stream)
    _stream_of(stream, [src]).synchronize()


def memcpy_dtod(dst, src, nbytes, stream=None):
    """Device-to-device copy of `nbytes`, waited for.

    >>> a = to_device(np.ones(1)); b = mem_alloc(8); memcpy_dtod(b, a, 8)
    """
    memcpy_dtod_async(dst, src, nbytes, stream)
    _stream_of(stream, [dst]).synchronize()


def to_device(arr, device=None, stream=None):
    """A new device allocation holding a copy of the host array `arr` (waited for).

    >>> to_device(np.arange(3.0)).nbytes
    24
    """
    arr = np.ascontiguousarray(arr)
    a = mem_alloc(arr.nbytes, device)
    memcpy_htod(a, arr, stream)
    return a


def from_device(ptr, shape, dtype, stream=None):
    """A new host array of `shape` and `dtype` copied from device memory (waited for).

    >>> from_device(to_device(np.arange(3.0)), (3,), np.float64).tolist()
    [0.0, 1.0, 2.0]
    """
    out = np.empty(shape, dtype)
    memcpy_dtoh(out, ptr, stream)
    return out


# ---- launches -------------------------------------------------------------------------------

class _Cfg(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("shmem", ctypes.c_uint), ("schedule", ctypes.c_int),
                ("seed", ctypes.c_ulonglong), ("check", ctypes.c_int)]


_SCALARS = {"f": (np.float32, ctypes.c_float), "d": (np.float64, ctypes.c_double),
            "i": (np.int32, ctypes.c_int32), "I": (np.uint32, ctypes.c_uint32),
            "q": (np.int64, ctypes.c_int64), "Q": (np.uint64, ctypes.c_uint64),
            "h": (np.int16, ctypes.c_int16), "H": (np.uint16, ctypes.c_uint16),
            "b": (np.int8, ctypes.c_int8), "B": (np.uint8, ctypes.c_uint8),
            "?": (np.bool_, ctypes.c_bool)}
MAX_SHARED = 48 * 1024


def _dims(v, what):
    if isinstance(v, int):
        v = (v,)
    v = tuple(int(x) for x in v) + (1,) * (3 - len(v))
    if len(v) != 3:
        raise LaunchError(f"{what} must have 1 to 3 dimensions, got {v}")
    return v


class Kernel:
    """One kernel of a :class:`Module`. Call it as
    ``kernel(*args, grid=, block=, shared=0, stream=None, check=None)``.

    Arguments follow the kernel's parameters (``signature``: one letter each, see tl_emu.h):
    device pointers for pointers, NumPy scalars of exactly the parameter's type for numbers
    (a Python int or float raises TypeError, as in pycuda, since its width is unknown) and
    ctypes structures of the right size for structs. The launch is queued on `stream` and
    returns at once; errors of the run are raised by the stream's next synchronization.

    >>> k = load_kernels("elementwise").tl_fill_f32
    >>> a = mem_alloc(12); k(a, np.float32(7), np.int64(3), grid=1, block=32)
    >>> from_device(a, (3,), np.float32).tolist()
    [7.0, 7.0, 7.0]
    """

    def __init__(self, module, name):
        lib = module._lib
        sig = getattr(lib, f"tl_emu_sig__{name}")
        sig.restype = ctypes.c_char_p
        self.signature = sig().decode()
        self.name = name
        self._launch = getattr(lib, f"tl_emu_launch__{name}")
        self._launch.argtypes = [ctypes.POINTER(_Cfg), ctypes.c_void_p]
        self._launch.restype = ctypes.c_int
        self._params = re.findall(r"S\d+;|[^S]", self.signature)

    def _pack(self, args):
        if len(args) != len(self._params):
            raise LaunchError(f"kernel '{self.name}' takes {len(self._params)} arguments "
                              f"({self.signature}), got {len(args)}")
        keep, ptrs = [], []
        for i, (code, a) in enumerate(zip(self._params, args)):
            where = f"kernel '{self.name}' argument #{i}"
            if code == "P":
                if isinstance(a, np.ndarray):
                    raise TypeError(f"{where}: a host numpy array cannot be passed to a "
                                    f"kernel; copy it to the device first")
                a = _as_pointer(a, where)
                if a.allocation._ptr is None:
                    raise LaunchError(f"{where}: the device allocation was freed")
                ptrs.append(a)
                keep.append(ctypes.c_void_p(a.ptr))
            elif code.startswith("S"):
                size = int(code[1:-1])
                if not isinstance(a, ctypes.Structure) or ctypes.sizeof(a) != size:
                    raise TypeError(f"{where}: expected a ctypes structure of {size} bytes, "
                                    f"got {type(a).__name__}")
                keep.append(type(a).from_buffer_copy(a))  # by value, as of the launch
            else:
                np_t, c_t = _SCALARS[code]
                if not (isinstance(a, np.generic) and a.dtype == np.dtype(np_t)):
                    got = a.dtype if isinstance(a, np.generic) else type(a).__name__
                    raise TypeError(f"{where}: expected numpy.{np.dtype(np_t).name}, "
                                    f"got {got}")
                keep.append(c_t(a.item()))
        arr = (ctypes.c_void_p * max(len(keep), 1))(
            *[ctypes.cast(ctypes.pointer(k), ctypes.c_void_p) for k in keep])
        return arr, keep, ptrs

    def __call__(self, *args, grid, block, shared=0, stream=None, check=None):
        g, b = _dims(grid, "grid"), _dims(block, "block")
        nthreads = b[0] * b[1] * b[2]
        if (min(g) < 1 or min(b) < 1 or nthreads > 1024 or b[2] > 64 or g[0] > 2**31 - 1
                or g[1] > 65535 or g[2] > 65535):
            raise LaunchError(f"kernel '{self.name}': invalid launch configuration "
                              f"grid={g} block={b} (CUDA error: invalid configuration "
                              f"argument)")
        if not 0 <= shared <= MAX_SHARED:
            raise LaunchError(f"kernel '{self.name}': {shared} bytes of dynamic shared memory "
                              f"exceed the {MAX_SHARED}-byte limit")
        params, keep, ptrs = self._pack(args)
        st = _stream_of(stream, ptrs)
        for i, p in enumerate(ptrs):
            if p.device is not st.device:
                raise LaunchError(f"kernel '{self.name}': a pointer argument is on "
                                  f"cuda:{p.device.index} but the launch is on "
                                  f"cuda:{st.device.index}")
        check = st.device.check if check is None else check
        cfg = _Cfg((ctypes.c_uint * 3)(*g), (ctypes.c_uint * 3)(*b), int(shared), 0, 0,
                   1 if check else 0)
        st._enqueue(self._runner(cfg, params, keep, ptrs, check, st.device))

    def _run_once(self, cfg, params, device):
        rc = self._launch(ctypes.byref(cfg), params)
        if rc != 0:
            rt = _load_runtime()
            msg = rt.tl_emu_last_error().decode(errors="replace")
            addr = rt.tl_emu_fault_address()
            if addr and "at address" in msg:
                msg += f" ({device.describe_address(addr)})"
            raise KernelError(self.name, msg)

    def _runner(self, cfg, params, keep, ptrs, check, device):
        if not check:
            # the closure holds `keep` and `ptrs`: the argument values and the allocations
            # stay alive until the launch has run, however soon the caller drops them
            return lambda: (keep, ptrs, self._run_once(cfg, params, device))

        def run_checked():
            # the allocations the kernel can reach, restored before each schedule
            allocs = list({id(p.allocation): p.allocation for p in ptrs}.values())
            before = [_snapshot(a) for a in allocs]
            results = []
            for k, name in enumerate(SCHEDULES):
                for a, snap in zip(allocs, before):
                    ctypes.memmove(a._ptr, snap.ctypes.data, a.nbytes)
                cfg.schedule, cfg.seed = k, 0x5EED + k
                self._run_once(cfg, params, device)
                results.append([_snapshot(a) for a in allocs])
            for k in (1, 2):
                for j, (x, y) in enumerate(zip(results[0], results[k])):
                    if not np.array_equal(x, y):
                        off = int(np.flatnonzero(x != y)[0])
                        raise KernelError(
                            self.name,
                            f"the result depends on the thread order (a race?): argument "
                            f"memory of {allocs[j].nbytes} bytes differs at byte {off} "
                            f"between the forward and the {SCHEDULES[k]} schedule")
        return run_checked


def launch(kernel, grid, block, shared, stream, args):
    """Queue `kernel` (a :class:`Kernel`) on `stream` with `args`: the runtime interface's
    launch, the same as ``kernel(*args, grid=grid, block=block, shared=shared,
    stream=stream)``.

    >>> a = mem_alloc(8)
    >>> launch(load_kernels("elementwise").tl_fill_f64, 1, 32, 0, None,
    ...        (a, np.float64(1.5), np.int64(1)))
    >>> from_device(a, (1,), np.float64).tolist()
    [1.5]
    """
    kernel(*args, grid=grid, block=block, shared=shared, stream=stream)


def _snapshot(alloc):
    out = np.empty(alloc.nbytes, np.uint8)
    ctypes.memmove(out.ctypes.data, alloc._ptr, alloc.nbytes)
    return out
