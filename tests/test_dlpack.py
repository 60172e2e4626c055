"""DLPack both ways with NumPy and PyTorch: the same memory (data pointers compared), strides
as the exporter has them, writes seen on both sides, the deleter run exactly once (gc off),
borrowed memory uncounted, and a clear error for each input that cannot be taken."""
import ctypes
import gc
import weakref

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlib
from tensorlib.utils.dlpack import from_dlpack as utils_from_dlpack, to_dlpack

torch = pytest.importorskip("torch")

NP_DTYPES = {
    "bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16,
    "int32": np.int32, "int64": np.int64, "float16": np.float16, "float32": np.float32,
    "float64": np.float64,
}
ALL = list(NP_DTYPES) + ["bfloat16"]


@pytest.fixture(autouse=True)
def no_gc():
    """Lifetimes here are reference counts alone: a cycle would hide a missing release."""
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def sample(name, shape=(3, 4)):
    """A contiguous tensorlib tensor of dtype ``name`` with distinct values."""
    n = int(np.prod(shape))
    t = tensorlib.arange(n).reshape(shape) % 7
    return (t > 2) if name == "bool" else t.to(getattr(tensorlib, name))


def layouts(t):
    """Views of a 2-d tensor: as is, strided, transposed, zero-stride, 0-d and empty."""
    return [t, t[:, ::2], t.t(), t[:1].expand(3, 4), t[1, 2], t[:0]]


def byte_strides(t):
    return tuple(s * t.element_size() for s in t.stride())


def tl_values(t):
    return t.float().tolist() if t.dtype == tensorlib.bfloat16 else t.tolist()


def torch_values(t):
    return t.float().tolist() if t.dtype == torch.bfloat16 else t.tolist()


# -- tensorlib -> NumPy / PyTorch -----------------------------------------------------------------

@pytest.mark.parametrize("name", list(NP_DTYPES))
def test_numpy_takes_tensors_without_copy(name):
    for t in layouts(sample(name)):
        a = np.from_dlpack(t)
        assert a.dtype == np.dtype(NP_DTYPES[name])
        assert a.shape == tuple(t.shape)
        assert a.tolist() == t.tolist()
        if t.numel() > 0:
            assert a.ctypes.data == t.data_ptr()
            assert a.strides == byte_strides(t)


@pytest.mark.parametrize("name", ALL)
def test_torch_takes_tensors_without_copy(name):
    for t in layouts(sample(name)):
        p = torch.from_dlpack(t)
        assert str(p.dtype) == "torch." + name
        assert tuple(p.shape) == tuple(t.shape)
        assert torch_values(p) == tl_values(t)
        if t.numel() > 0:
            assert p.data_ptr() == t.data_ptr()
            assert p.stride() == t.stride()


def test_writes_show_on_both_sides_after_export():
    t = tensorlib.zeros(2, 3)
    a = np.from_dlpack(t)
    p = torch.from_dlpack(t)
    a[0, 1] = 5.0
    p[1, 2] = 7.0
    t[0, 0] = 1.0
    assert t.tolist() == [[1.0, 5.0, 0.0], [0.0, 0.0, 7.0]]
    assert a.tolist() == t.tolist() == p.tolist()


def test_capsule_kinds_follow_max_version():
    t = tensorlib.arange(3.0)
    assert capsule_name(t.__dlpack__()) == "dltensor"
    assert capsule_name(to_dlpack(t)) == "dltensor"
    assert capsule_name(t.__dlpack__(max_version=(0, 8))) == "dltensor"
    cap = t.__dlpack__(max_version=(1, 0))
    assert capsule_name(cap) == "dltensor_versioned"
    m = ctypes.cast(capsule_pointer(cap, b"dltensor_versioned"),
                    ctypes.POINTER(ManagedVersioned)).contents
    assert (m.version.major, m.version.minor) == (1, 0)
    assert m.flags == 0
    assert m.dl_tensor.data == t.data_ptr()
    assert (m.dl_tensor.device.device_type, m.dl_tensor.device.device_id) == (1, 0)
    assert (m.dl_tensor.dtype.code, m.dl_tensor.dtype.bits, m.dl_tensor.dtype.lanes) == (2, 32, 1)
    # a newer consumer still gets the 1.x layout, which it must accept
    assert capsule_name(t.__dlpack__(max_version=(2, 3))) == "dltensor_versioned"
    assert t.__dlpack_device__() == (1, 0)


def test_export_copy_true_gives_other_memory_flagged_copied():
    t = tensorlib.arange(4.0)[::2]
    cap = t.__dlpack__(max_version=(1, 0), copy=True)
    m = ctypes.cast(capsule_pointer(cap, b"dltensor_versioned"),
                    ctypes.POINTER(ManagedVersioned)).contents
    assert m.flags == 2                                    # DLPACK_FLAG_BITMASK_IS_COPIED
    assert m.dl_tensor.data != t.data_ptr()
    p = torch.utils.dlpack.from_dlpack(cap)
    assert p.tolist() == [0.0, 2.0] and p.is_contiguous()
    p[0] = 9.0
    assert t.tolist() == [0.0, 2.0]
    t2 = tensorlib.arange(3.0)
    assert np.from_dlpack(t2, copy=False).ctypes.data == t2.data_ptr()
    assert np.from_dlpack(t2, copy=True).ctypes.data != t2.data_ptr()


def test_export_errors():
    with pytest.raises(BufferError, match="require gradient"):
        tensorlib.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(BufferError, match="meta"):
        tensorlib.ones(2, device="meta").__dlpack__()
    with pytest.raises(ValueError, match="meta"):
        tensorlib.ones(2, device="meta").__dlpack_device__()
    with pytest.raises(RuntimeError, match="stream"):
        tensorlib.ones(2).__dlpack__(stream=1)
    with pytest.raises(BufferError, match="unsupported device"):
        tensorlib.ones(2).__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError, match="copy=False"):
        tensorlib.ones(2).__dlpack__(dl_device=(2, 0), copy=False)
    assert capsule_name(tensorlib.ones(2).__dlpack__(dl_device=(1, 0))) == "dltensor"
    with pytest.raises(RuntimeError, match="Unsupported dtype"):       # NumPy has no bfloat16
        np.from_dlpack(tensorlib.ones(2, dtype=tensorlib.bfloat16))


# -- NumPy / PyTorch -> tensorlib -----------------------------------------------------------------

def np_layouts(a):
    w = np.lib.stride_tricks.as_strided(a[:1], shape=(3, 4), strides=(0, a.strides[1]),
                                        writeable=True)
    return [a, a[:, ::2], a.T, w, a[1, 2, ...], a[:0], np.asfortranarray(a)]


@pytest.mark.parametrize("name", list(NP_DTYPES))
def test_tensorlib_takes_numpy_arrays_without_copy(name):
    base = (np.arange(12) % 7 > 2) if name == "bool" else (np.arange(12) % 7)
    for a in np_layouts(base.astype(NP_DTYPES[name]).reshape(3, 4)):
        t = tensorlib.from_dlpack(a)
        assert t.dtype == getattr(tensorlib, name)
        assert tuple(t.shape) == a.shape
        assert t.tolist() == a.tolist()
        if a.size > 0:
            assert t.data_ptr() == a.ctypes.data
            assert byte_strides(t) == a.strides


@pytest.mark.parametrize("name", ALL)
def test_tensorlib_takes_torch_tensors_without_copy(name):
    base = torch.arange(12).reshape(3, 4) % 7
    base = (base > 2) if name == "bool" else base.to(getattr(torch, name))
    for p in [base, base[:, ::2], base.t(), base[:1].expand(3, 4), base[1, 2], base[:0]]:
        t = tensorlib.from_dlpack(p)
        assert t.dtype == getattr(tensorlib, name)
        assert tuple(t.shape) == tuple(p.shape)
        assert tl_values(t) == torch_values(p)
        if p.numel() > 0:
            assert t.data_ptr() == p.data_ptr()
            assert t.stride() == p.stride()


def test_writes_show_on_both_sides_after_import():
    a = np.zeros((2, 3), np.float32)
    p = torch.zeros(2, 3, dtype=torch.int64)
    ta, tp = tensorlib.from_dlpack(a), tensorlib.from_dlpack(p)
    ta[1, 1] = 4.0
    tp[0, 2] = 3
    a[0, 0] = 2.0
    p[1, 0] = 6
    assert ta.tolist() == a.tolist() == [[2.0, 0.0, 0.0], [0.0, 4.0, 0.0]]
    assert tp.tolist() == p.tolist() == [[0, 0, 3], [6, 0, 0]]


def test_producer_from_before_dlpack_1_gets_the_legacy_call():
    class Legacy:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):          # no max_version: a pre-1.0 producer
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    a = np.arange(3.0)
    t = tensorlib.from_dlpack(Legacy(a))
    assert t.data_ptr() == a.ctypes.data and t.tolist() == [0.0, 1.0, 2.0]


def test_utils_dlpack_round_trips_with_torch_utils_dlpack():
    p = torch.arange(5.0)
    t = utils_from_dlpack(torch.utils.dlpack.to_dlpack(p))
    assert t.data_ptr() == p.data_ptr() and t.tolist() == p.tolist()
    q = torch.utils.dlpack.from_dlpack(to_dlpack(t))
    assert q.data_ptr() == p.data_ptr()
    same = tensorlib.from_dlpack(t)
    assert same is not t and same.data_ptr() == t.data_ptr()
    with pytest.raises(BufferError, match="require gradient"):
        tensorlib.from_dlpack(tensorlib.ones(2, requires_grad=True))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=0, max_size=4), st.data())
def test_random_strided_views_keep_their_layout_both_ways(shape, data):
    t = tensorlib.arange(int(np.prod(shape)) if shape else 1, dtype=tensorlib.float64)
    t = t.reshape(shape)
    steps = [data.draw(st.integers(1, 3)) for _ in shape]
    t = t[tuple(slice(None, None, s) for s in steps)]
    if len(shape) >= 2 and data.draw(st.booleans()):
        t = t.transpose(0, 1)
    a, p = np.from_dlpack(t), torch.from_dlpack(t)
    assert a.tolist() == p.tolist() == t.tolist()
    if t.numel() > 0:
        assert a.ctypes.data == p.data_ptr() == t.data_ptr()
        assert a.strides == byte_strides(t) and p.stride() == t.stride()
    back = tensorlib.from_dlpack(a)
    assert back.tolist() == t.tolist()
    if t.numel() > 0:
        assert back.data_ptr() == t.data_ptr() and back.stride() == t.stride()


# -- lifetimes ----------------------------------------------------------------------------------

def test_unconsumed_capsule_frees_the_tensor_when_it_dies():
    t = tensorlib.arange(3.0)
    alive = weakref.ref(t)
    cap = t.__dlpack__(max_version=(1, 0))
    del t
    assert alive() is not None               # the capsule holds the tensor
    del cap
    assert alive() is None
    t = tensorlib.arange(3.0)
    alive = weakref.ref(t)
    cap = t.__dlpack__()
    del t, cap
    assert alive() is None


def test_consumer_keeps_the_tensor_alive_and_releases_it_once():
    import sys
    t = tensorlib.arange(4.0)
    refs = sys.getrefcount(t)
    for consume in (np.from_dlpack, torch.from_dlpack, tensorlib.from_dlpack,
                    lambda t: t.__dlpack__(), lambda t: t.__dlpack__(max_version=(1, 0))):
        x = consume(t)
        assert sys.getrefcount(t) == refs + 1        # one reference, held for the consumer
        del x
        assert sys.getrefcount(t) == refs            # dropped once, not twice
    for make in (lambda t: np.from_dlpack(t), lambda t: torch.from_dlpack(t)):
        t = tensorlib.arange(4.0)
        alive = weakref.ref(t)
        x = make(t)
        del t
        assert alive() is not None
        assert x.tolist() == [0.0, 1.0, 2.0, 3.0]
        del x
        assert alive() is None
    t = tensorlib.arange(4.0)
    alive = weakref.ref(t)
    cap = to_dlpack(t)
    p = torch.utils.dlpack.from_dlpack(cap)
    assert capsule_name(cap) == "used_dltensor"
    del t, cap                                # a consumed capsule owns nothing
    assert alive() is not None and p.tolist() == [0.0, 1.0, 2.0, 3.0]
    del p
    assert alive() is None


def test_our_deleter_runs_from_a_thread_without_the_gil():
    """A C consumer may call the deleter from any thread, not holding the GIL (ctypes
    releases it around the call)."""
    import threading
    for versioned in (False, True):
        t = tensorlib.arange(3.0)
        alive = weakref.ref(t)
        cap = t.__dlpack__(max_version=(1, 0) if versioned else None)
        del t
        name = b"dltensor_versioned" if versioned else b"dltensor"
        ptr = capsule_pointer(cap, name)
        kind = ManagedVersioned if versioned else Managed
        m = ctypes.cast(ptr, ctypes.POINTER(kind)).contents
        assert m.dl_tensor.ndim == 1 and m.dl_tensor.shape[0] == 3
        assert m.dl_tensor.strides[0] == 1
        deleter = ctypes.cast(ctypes.cast(ptr + kind.deleter.offset,
                                          ctypes.POINTER(ctypes.c_void_p)).contents.value,
                              ctypes.CFUNCTYPE(None, ctypes.c_void_p))
        ctypes.pythonapi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
        ctypes.pythonapi.PyCapsule_SetName(cap, _NAMES["used"])     # consumed by "C"
        worker = threading.Thread(target=deleter, args=(ptr,))
        worker.start()
        worker.join()
        assert alive() is None
        del cap                                                     # owns nothing now


def test_imported_memory_is_borrowed_and_kept_alive_by_its_owner():
    before = tensorlib.memory.memory_allocated()
    a = np.arange(1000.0)
    alive = weakref.ref(a)
    t = tensorlib.from_dlpack(a)
    p = torch.arange(1000.0)
    tp = tensorlib.from_dlpack(p)
    assert tensorlib.memory.memory_allocated() == before
    del a, p
    assert alive() is not None                # NumPy's array lives while the tensor does
    assert t.sum().item() == tp.sum().item() == 499500.0
    view = t[10:20]
    del t
    assert alive() is not None
    del view
    assert alive() is None
    assert tensorlib.memory.memory_allocated() == before


def test_deleter_called_exactly_once():
    for versioned in (False, True):
        calls = []
        cap, keep = foreign_capsule(np.arange(6.0).reshape(2, 3), versioned, calls)
        t = tensorlib.from_dlpack(cap)
        assert capsule_name(cap) == ("used_dltensor_versioned" if versioned else "used_dltensor")
        assert t.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
        assert t.data_ptr() == keep["array"].ctypes.data
        del cap
        assert calls == []
        v = t[1]
        del t
        assert calls == []
        del v
        assert calls == [1]
        with pytest.raises(RuntimeError, match="consumed only once"):
            tensorlib.from_dlpack(foreign_consumed(versioned))


def test_compact_strides_and_byte_offset():
    calls = []
    a = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    cap, keep = foreign_capsule(a, False, calls, compact=True, byte_offset=64)
    t = tensorlib.from_dlpack(cap)
    assert t.stride() == (12, 4, 1) and t.tolist() == a.tolist()
    assert t.data_ptr() == a.ctypes.data
    del t
    assert calls == [1]


def test_copy_on_import_runs_the_deleter_at_once_and_counts_the_copy():
    calls = []
    cap, keep = foreign_capsule(np.arange(4.0), True, calls)
    before = tensorlib.memory.memory_allocated()
    t = tensorlib.from_dlpack(cap, copy=True)
    assert calls == [1]
    assert t.data_ptr() != keep["array"].ctypes.data and t.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert tensorlib.memory.memory_allocated() > before


# -- bad input ----------------------------------------------------------------------------------

def test_capsule_consumed_twice():
    cap = tensorlib.arange(3.0).__dlpack__()
    tensorlib.from_dlpack(cap)
    with pytest.raises(RuntimeError, match="consumed only once"):
        tensorlib.from_dlpack(cap)
    cap = torch.arange(3.0).__dlpack__()
    torch.from_dlpack(cap)
    with pytest.raises(RuntimeError, match="consumed only once"):
        tensorlib.from_dlpack(cap)


def test_read_only_exporter():
    a = np.arange(3.0)
    a.flags.writeable = False
    with pytest.raises(BufferError, match="read-only.*copy=True"):
        tensorlib.from_dlpack(a)
    t = tensorlib.from_dlpack(a, copy=True)
    assert t.tolist() == [0.0, 1.0, 2.0] and t.data_ptr() != a.ctypes.data
    calls = []
    cap, _ = foreign_capsule(np.arange(2.0), True, calls, flags=1)
    with pytest.raises(BufferError, match="read-only"):
        tensorlib.from_dlpack(cap)
    assert capsule_name(cap) == "dltensor_versioned"      # refused, so not consumed
    assert calls == []


def test_negative_strides_copy_or_raise():
    a = np.arange(10, dtype=np.int32)[::-3]
    t = tensorlib.from_dlpack(a)
    assert t.tolist() == a.tolist() and t.stride() == (1,)
    with pytest.raises(BufferError, match="negative strides"):
        tensorlib.from_dlpack(a, copy=False)
    b = np.arange(12.0).reshape(3, 4)[::-1, 1:]
    assert tensorlib.from_dlpack(b).tolist() == b.tolist()
    # a negative stride that addresses nothing (size-1 dim) is no reason to copy
    c = np.arange(4.0).reshape(1, 4)[::-1]
    assert tensorlib.from_dlpack(c, copy=False).data_ptr() == c.ctypes.data


def test_unsupported_device_and_dtype():
    class OnCuda:
        def __dlpack__(self, **kw):
            raise AssertionError("not asked: the device is checked first")

        def __dlpack_device__(self):
            return (2, 0)

    with pytest.raises(BufferError, match="unsupported device"):
        tensorlib.from_dlpack(OnCuda())
    calls = []
    cap, _ = foreign_capsule(np.arange(2.0), True, calls, device_type=2)
    with pytest.raises(BufferError, match="unsupported device"):
        tensorlib.from_dlpack(cap)
    assert capsule_name(cap) == "dltensor_versioned"
    with pytest.raises(RuntimeError, match="Unsupported dtype.*complex128"):
        tensorlib.from_dlpack(np.ones(2, np.complex128))
    with pytest.raises(RuntimeError, match="Unsupported dtype.*uint16"):
        tensorlib.from_dlpack(np.ones(2, np.uint16))
    cap, _ = foreign_capsule(np.arange(2.0, dtype=np.float32), True, calls, lanes=2)
    with pytest.raises(RuntimeError, match="float32x2"):
        tensorlib.from_dlpack(cap)
    cap, _ = foreign_capsule(np.arange(2.0), True, calls, major=2)
    with pytest.raises(BufferError, match="version 2.0 is newer"):
        tensorlib.from_dlpack(cap)
    with pytest.raises(TypeError, match="__dlpack__"):
        tensorlib.from_dlpack([1, 2])
    with pytest.raises(BufferError, match="CPU only"):
        tensorlib.from_dlpack(np.ones(2), device="meta")
    assert calls == []


# -- helpers: reading capsules and making them as a C producer would, with ctypes ---------------

class Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", Device), ("ndim", ctypes.c_int32),
                ("dtype", DType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class Managed(ctypes.Structure):
    pass


class ManagedVersioned(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
Managed._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                    ("deleter", DELETER)]
ManagedVersioned._fields_ = [("version", Version), ("manager_ctx", ctypes.c_void_p),
                             ("deleter", DELETER), ("flags", ctypes.c_uint64),
                             ("dl_tensor", DLTensor)]

_capi = ctypes.pythonapi
_capi.PyCapsule_New.restype = ctypes.py_object
_capi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capi.PyCapsule_GetPointer.restype = ctypes.c_void_p
_capi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capi.PyCapsule_GetName.restype = ctypes.c_char_p
_capi.PyCapsule_GetName.argtypes = [ctypes.py_object]
# capsule names must outlive their capsules
_NAMES = {True: ctypes.c_char_p(b"dltensor_versioned"), False: ctypes.c_char_p(b"dltensor"),
          "used": ctypes.c_char_p(b"used_dltensor")}
_DL_CODES = {"b": 6, "u": 1, "i": 0, "f": 2}


def capsule_name(cap):
    return _capi.PyCapsule_GetName(cap).decode()


def capsule_pointer(cap, name):
    return _capi.PyCapsule_GetPointer(cap, name)


def foreign_capsule(array, versioned, calls, flags=0, device_type=1, lanes=1, major=1,
                    compact=False, byte_offset=0):
    """A capsule over ``array`` as a C exporter makes one: its deleter appends to ``calls``
    (the capsule has no destructor, so only a consumer calls it). Returns the capsule and
    what must stay alive with it."""
    nd = array.ndim
    shape = (ctypes.c_int64 * max(nd, 1))(*array.shape)
    strides = (ctypes.c_int64 * max(nd, 1))(*[s // array.itemsize for s in array.strides])
    m = ManagedVersioned() if versioned else Managed()
    d = m.dl_tensor
    d.data = array.ctypes.data
    d.device = Device(device_type, 0)
    d.ndim = nd
    d.dtype = DType(_DL_CODES[array.dtype.kind], array.itemsize * 8, lanes)
    d.shape = shape
    d.data = array.ctypes.data - byte_offset
    d.strides = None if compact else strides          # NULL: compact row-major
    d.byte_offset = byte_offset
    keep = {"array": array, "shape": shape, "strides": strides, "m": m}
    deleter = DELETER(lambda ptr: calls.append(1))
    keep["deleter"] = deleter
    m.deleter = deleter
    if versioned:
        m.version = Version(major, 0)
        m.flags = flags
    cap = _capi.PyCapsule_New(ctypes.addressof(m), _NAMES[versioned], None)
    return cap, keep


_consumed_keep = []


def foreign_consumed(versioned):
    """A capsule some consumer already took."""
    cap, keep = foreign_capsule(np.arange(2.0), versioned, [])
    _consumed_keep.append(keep)
    ctypes.pythonapi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
    ctypes.pythonapi.PyCapsule_SetName(cap, _NAMES["used"])
    return cap


def test_docstring_examples():
    import doctest
    import tensorlib.utils.dlpack as mod
    objs = [mod, mod.to_dlpack, tensorlib.from_dlpack, tensorlib.Tensor.__dlpack__,
            tensorlib.Tensor.__dlpack_device__, tensorlib.Tensor.__array__,
            tensorlib.Tensor.__array_interface__]
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    attempted = 0
    for obj in objs:
        for test in finder.find(obj, "x", globs={"tensorlib": tensorlib, "numpy": np}):
            out = []
            result = runner.run(test, out=out.append)
            assert result.failed == 0, "".join(out)
            attempted += result.attempted
    assert attempted >= 10
