"""Tensors in shared memory, and how a worker's batch crosses to the main process.

A worker allocates its batch's tensor storages in segments under /dev/shm (named, so the
main process can open them) and pickles only each tensor's (segment name, size, dtype, shape,
stride, offset). The main process opens the segment, unlinks it at once (so nothing can be
left in /dev/shm whatever happens to either process afterwards), maps it, and adopts the
mapping as a storage through the allocator's door with the memory role "input": counted while
it lives, unmapped when its last tensor dies. Nothing copies the data on the way.

Segments a worker made that the main process never mapped (batches dropped at shutdown, a
worker killed mid-batch) carry the loader's name prefix and are unlinked when the loader's
workers have been reaped.
"""
import ctypes
import glob
import io
import itertools
import mmap
import os
import pickle
from multiprocessing.reduction import ForkingPickler

import tensorlib
from tensorlib._core.allocator import _adopt_memory, _rehome_storage
from tensorlib._core.tensor import _tensor_on_storage

SHM_DIR = "/dev/shm"

_counter = itertools.count()
_prefix = None          # the segment name prefix of this worker process (None in the main one)


class _Segment:
    """A mapped shared-memory segment: the owner of the storage built on it (the mapping
    goes when the storage dies)."""

    __slots__ = ("name", "size", "mm", "buf", "__weakref__")

    def __init__(self, name, size, mm):
        self.name, self.size, self.mm = name, size, mm
        self.buf = ctypes.c_char.from_buffer(mm)     # the address; holds the mapping open

    @property
    def address(self):
        return ctypes.addressof(self.buf)


def _create(name, size, unlink):
    path = os.path.join(SHM_DIR, name)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        if unlink:
            os.unlink(path)
        os.ftruncate(fd, size)
        mm = mmap.mmap(fd, size)
    except BaseException:
        if not unlink:
            _unlink_quietly(name)
        raise
    finally:
        os.close(fd)
    return _Segment("" if unlink else name, size, mm)    # no name: nobody else can open it


def _unlink_quietly(name):
    try:
        os.unlink(os.path.join(SHM_DIR, name))
    except OSError:
        pass


def _new_name():
    base = _prefix if _prefix is not None else f"tl_shm_{os.getpid()}_"
    return f"{base}{next(_counter)}"


def new_shared_storage(nbytes, named=True):
    """A storage of ``nbytes`` (> 0) in a new shared-memory segment, counted with role
    "input". ``named``: the segment stays in /dev/shm until its reader unlinks it (a
    worker's batch); otherwise it is unlinked at once (``share_memory_``: shared with
    processes forked later)."""
    seg = _create(_new_name(), nbytes, unlink=not named)
    return _adopt_memory(seg.address, nbytes, seg, "input")


def empty_shared(shape, dtype):
    """An uninitialized contiguous tensor in a named shared-memory segment (a worker's
    collate output)."""
    shape = tuple(shape)
    numel = 1
    for n in shape:
        numel *= n
    itemsize = tensorlib.empty((), dtype=dtype).element_size()
    nbytes = numel * itemsize
    if nbytes == 0:
        return tensorlib.empty(shape, dtype=dtype)
    storage = new_shared_storage(nbytes)
    stride, acc = [], 1
    for n in reversed(shape):
        stride.append(acc)
        acc *= max(n, 1)
    return _tensor_on_storage(storage, dtype, shape, tuple(reversed(stride)), 0)


def segment_of(t):
    """The ``_Segment`` holding ``t``'s storage, or None."""
    owner = t.untyped_storage()._owner
    return owner if isinstance(owner, _Segment) else None


def share_memory_(t):
    """Move ``t``'s storage (and so every tensor on it) into shared memory, in place."""
    if segment_of(t) is not None:
        return t
    if t.device.type != "cpu":
        return t
    s = t.untyped_storage()
    n = s.nbytes()
    if n == 0:
        return t
    seg = _create(_new_name(), n, unlink=True)
    _rehome_storage(s, seg.address, seg)
    return t


# ---- the worker -> main process transport ------------------------------------------------

def _dtype_name(dt):
    return str(dt).rsplit(".", 1)[-1]


def _reduce_tensor(t):
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, "
                           "since autograd does not support crossing process boundaries.  If "
                           "you just want to transfer the data, call detach() on the tensor "
                           "before serializing (e.g., putting it on the queue).")
    seg = segment_of(t)
    src = t
    if seg is None or not seg.name or src.device.type != "cpu":
        src = empty_shared(t.shape, t.dtype)
        src.copy_(t.detach())
        seg = segment_of(src)
        if seg is None:         # no bytes: nothing to share
            return (_rebuild_empty, (type(t), tuple(t.shape), _dtype_name(t.dtype),
                                     t.requires_grad))
    return (_rebuild_tensor, (type(t), seg.name, seg.size, _dtype_name(t.dtype),
                              tuple(src.shape), tuple(src.stride()), src.storage_offset(),
                              t.requires_grad))


_loading = None         # name -> storage, while one payload is loaded (views share one map)


def _map_segment(name, size):
    path = os.path.join(SHM_DIR, name)
    fd = os.open(path, os.O_RDWR)
    try:
        os.unlink(path)     # mapped or not from here on, nothing is left in /dev/shm
        mm = mmap.mmap(fd, size)
    finally:
        os.close(fd)
    seg = _Segment(name, size, mm)
    return _adopt_memory(seg.address, size, seg, "input")


def _wrap(cls, t, requires_grad):
    if cls is not tensorlib.Tensor and issubclass(cls, tensorlib.Tensor):
        from tensorlib.nn import Parameter
        if issubclass(cls, Parameter):
            return cls(t, requires_grad=requires_grad)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor(cls, name, size, dtype, shape, stride, offset, requires_grad):
    memo = _loading if _loading is not None else {}
    storage = memo.get(name)
    if storage is None:
        storage = memo[name] = _map_segment(name, size)
    t = _tensor_on_storage(storage, getattr(tensorlib, dtype), shape, stride, offset)
    return _wrap(cls, t, requires_grad)


def _rebuild_empty(cls, shape, dtype, requires_grad):
    return _wrap(cls, tensorlib.empty(shape, dtype=getattr(tensorlib, dtype)), requires_grad)


class _Pickler(ForkingPickler):
    """ForkingPickler with tensors travelling as shared-memory references (its own reducer
    table: multiprocessing's other queues keep pickling tensors by value)."""

    _extra_reducers = {}


def _install_reducers():
    from tensorlib.nn import Parameter
    _Pickler.register(tensorlib.Tensor, _reduce_tensor)
    _Pickler.register(Parameter, _reduce_tensor)


def dumps(obj):
    """``obj`` pickled with its tensors as shared-memory references (made in this worker)."""
    if tensorlib.Tensor not in _Pickler._extra_reducers:
        _install_reducers()
    buf = io.BytesIO()
    _Pickler(buf, pickle.HIGHEST_PROTOCOL).dump(obj)
    return buf.getvalue()


def loads(payload):
    """The object a worker sent: its tensors mapped (zero copy) and counted as inputs."""
    global _loading
    _loading = {}
    try:
        return pickle.loads(payload)
    finally:
        _loading = None


def unlink_prefix(prefix):
    """Unlink every segment named ``prefix*`` (a loader's leftovers after its workers exit)."""
    for path in glob.glob(os.path.join(SHM_DIR, glob.escape(prefix) + "*")):
        try:
            os.unlink(path)
        except OSError:
            pass
