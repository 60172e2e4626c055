"""NumPy's array protocols on tensors, checked against what NumPy itself produces and expects:
``__array_interface__`` (version 3), ``__array__`` (NumPy 2's dtype/copy keywords), the
buffer protocol, and tensor()/as_tensor() consuming objects that expose memory."""
import array
import gc
import hashlib
import io
import weakref

import numpy as np
import pytest

import tensorlib

NP_DTYPES = {
    "bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16,
    "int32": np.int32, "int64": np.int64, "float16": np.float16, "float32": np.float32,
    "float64": np.float64,
}


def sample(name, shape=(3, 4)):
    n = int(np.prod(shape))
    t = tensorlib.arange(n).reshape(shape) % 7
    return (t > 2) if name == "bool" else t.to(getattr(tensorlib, name))


def layouts(t):
    return [t, t[:, ::2], t.t(), t[:1].expand(3, 4), t[1, 2], t[:0]]


def byte_strides(t):
    return tuple(s * t.element_size() for s in t.stride())


# -- __array_interface__ ------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(NP_DTYPES))
def test_array_interface_matches_numpys(name):
    for t in layouts(sample(name)):
        ai = t.__array_interface__
        ref = np.asarray(t.numpy()).__array_interface__      # NumPy describing the same memory
        assert ai["version"] == 3
        assert ai["shape"] == ref["shape"]
        assert ai["typestr"] == ref["typestr"] == np.dtype(NP_DTYPES[name]).str
        assert ai["data"] == (t.data_ptr(), False)
        assert ai["strides"] == (None if t.is_contiguous() else byte_strides(t))

        class Exposes:                  # an object with nothing but the interface
            __array_interface__ = ai
        a = np.asarray(Exposes())
        assert a.dtype == np.dtype(NP_DTYPES[name]) and a.tolist() == t.tolist()
        if t.numel() > 0:
            assert a.ctypes.data == t.data_ptr()


def test_array_interface_unsupported():
    b = tensorlib.ones(2, dtype=tensorlib.bfloat16)
    m = tensorlib.ones(2, device="meta")
    assert not hasattr(b, "__array_interface__") and not hasattr(m, "__array_interface__")
    with pytest.raises(AttributeError, match="bfloat16"):
        b.__array_interface__
    # NumPy then asks __array__, which raises PyTorch's error
    with pytest.raises(TypeError, match="BFloat16"):
        np.asarray(b)
    with pytest.raises(TypeError, match="meta"):
        np.asarray(m)


# -- __array__ ------------------------------------------------------------------------------------

def test_array_shares_memory_by_default_and_copies_when_asked():
    t = tensorlib.arange(4.0)
    a = t.__array__()
    assert a.ctypes.data == t.data_ptr()
    a[0] = 9.0
    assert t[0].item() == 9.0
    assert np.array(t, copy=False).ctypes.data == t.data_ptr()
    assert np.asarray(t).ctypes.data == t.data_ptr()
    c = np.array(t, copy=True)
    assert c.ctypes.data != t.data_ptr() and c.tolist() == t.tolist()
    c[1] = -1.0
    assert t[1].item() == 1.0
    assert t.__array__(copy=True).ctypes.data != t.data_ptr()


def test_array_dtype_and_copy_false_semantics():
    t = tensorlib.arange(3.0)
    assert t.__array__(np.float32, copy=False).ctypes.data == t.data_ptr()
    i = np.asarray(t, dtype=np.int16)
    assert i.dtype == np.int16 and i.tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        np.array(t, dtype=np.int32, copy=False)
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        t.__array__(np.float64, copy=False)
    b = tensorlib.arange(3.0, dtype=tensorlib.bfloat16)
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        b.__array__(copy=False)
    # the same rules as NumPy's own arrays under NumPy 2
    ref = np.arange(3.0, dtype=np.float32)
    with pytest.raises(ValueError):
        np.array(ref, dtype=np.int32, copy=False)


# -- the buffer protocol --------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(NP_DTYPES))
def test_memoryview_describes_the_tensor_as_numpy_does(name):
    for t in layouts(sample(name)):
        m = memoryview(t)
        ref = memoryview(t.numpy())
        assert m.readonly is False
        assert m.ndim == ref.ndim and m.shape == ref.shape and m.strides == ref.strides
        assert m.itemsize == ref.itemsize == t.element_size()
        assert np.dtype(m.format) == np.dtype(ref.format) == np.dtype(NP_DTYPES[name])
        assert m.c_contiguous == ref.c_contiguous and m.f_contiguous == ref.f_contiguous
        a = np.asarray(m)
        assert a.tolist() == t.tolist()
        if t.numel() > 0:
            assert a.ctypes.data == t.data_ptr()
        assert m.tobytes() == t.numpy().tobytes()


def test_writes_through_memoryview_show_in_the_tensor():
    t = tensorlib.zeros(4, dtype=tensorlib.int32)
    m = memoryview(t)
    m[1] = 7
    m[3:4] = memoryview(np.array([5], np.int32))
    assert t.tolist() == [0, 7, 0, 5]
    t2 = tensorlib.zeros(2, 3)
    memoryview(t2)[1, 2] = 4.5
    np.asarray(memoryview(t2))[0, 0] = 1.5
    assert t2.tolist() == [[1.5, 0.0, 0.0], [0.0, 0.0, 4.5]]
    s = tensorlib.zeros(2, 4)[:, ::2]            # strided: writable too
    np.asarray(memoryview(s))[:] = 3.0
    assert s.tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_version_counter_on_buffer_writes():
    t = tensorlib.zeros(4, dtype=tensorlib.uint8)
    v = t._version
    # a buffer requested writable (readinto asks PyBUF_WRITABLE) bumps it
    assert io.BytesIO(b"\x01\x02\x03\x04").readinto(t) == 4
    assert t.tolist() == [1, 2, 3, 4] and t._version > v
    # memoryview(t) asks for a buffer that may be read-only: a write through it is not
    # seen (as a write through t.numpy() is not); documented in interop.pxi
    v = t._version
    memoryview(t)[0] = 9
    assert t._version == v and t[0].item() == 9


def test_buffer_keeps_the_memory_alive():
    gc.disable()
    try:
        t = tensorlib.arange(5.0)
        m = memoryview(t)
        alive = weakref.ref(t)
        del t
        assert alive() is not None
        assert m.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
        m.release()
        assert alive() is None
    finally:
        gc.enable()


def test_buffer_requests_that_need_contiguity():
    t = tensorlib.arange(6.0, dtype=tensorlib.float64)
    assert hashlib.sha256(t).hexdigest() == hashlib.sha256(t.numpy().tobytes()).hexdigest()
    with pytest.raises(BufferError, match="not contiguous"):
        hashlib.sha256(t[::2])                 # a simple (stride-less) buffer
    with pytest.raises(ValueError):            # NumPy refuses the same request (with the
        hashlib.sha256(np.arange(6.0)[::2])    # ValueError; Python's docs say BufferError)
    assert memoryview(t.reshape(2, 3)).cast("B").nbytes == 48
    with pytest.raises(TypeError):
        memoryview(t.reshape(2, 3).t()).cast("B")


def test_buffer_unsupported():
    with pytest.raises(BufferError, match="bfloat16"):
        memoryview(tensorlib.ones(2, dtype=tensorlib.bfloat16))
    with pytest.raises(BufferError, match="meta"):
        memoryview(tensorlib.ones(2, device="meta"))


# -- tensor() and as_tensor() on objects that expose memory ---------------------------------------

class InterfaceOnly:
    """Memory described by __array_interface__ alone (owned by an ndarray kept here)."""

    def __init__(self, a):
        self.a = a
        self.__array_interface__ = a.__array_interface__


def test_as_tensor_shares_foreign_memory_uncounted():
    before = tensorlib.memory.memory_allocated()
    a = np.arange(6.0).reshape(2, 3)
    for obj in (memoryview(a), InterfaceOnly(a)):
        t = tensorlib.as_tensor(obj)
        assert t.data_ptr() == a.ctypes.data and t.tolist() == a.tolist()
        assert t.dtype == tensorlib.float64
    f = array.array("f", [1.0, 2.0, 3.0])
    t = tensorlib.as_tensor(f)
    t[0] = 8.0
    assert f[0] == 8.0 and t.dtype == tensorlib.float32
    assert tensorlib.memory.memory_allocated() == before
    s = np.arange(12, dtype=np.int16).reshape(3, 4)[:, 1::2]
    t = tensorlib.as_tensor(InterfaceOnly(s))
    assert t.data_ptr() == s.ctypes.data and byte_strides(t) == s.strides
    # a dtype conversion copies, as it does from an ndarray
    t = tensorlib.as_tensor(memoryview(a), dtype=tensorlib.float32)
    assert t.data_ptr() != a.ctypes.data and t.tolist() == a.tolist()


def test_as_tensor_read_only_buffer_warns_as_from_numpy():
    with pytest.warns(UserWarning, match="not writable"):
        t = tensorlib.as_tensor(memoryview(b"ab"))
    assert t.tolist() == [97, 98] and t.dtype == tensorlib.uint8


def test_tensor_copies_foreign_memory():
    a = np.arange(4, dtype=np.int32)
    for obj in (memoryview(a), InterfaceOnly(a)):
        t = tensorlib.tensor(obj)
        assert t.data_ptr() != a.ctypes.data
        assert t.tolist() == [0, 1, 2, 3] and t.dtype == tensorlib.int32
        t[0] = 5
        assert a[0] == 0
    assert tensorlib.tensor(memoryview(a), dtype=tensorlib.float64).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_tensor_and_as_tensor_take_torch_tensors_through_dlpack():
    torch = pytest.importorskip("torch")
    p = torch.arange(6, dtype=torch.int16).reshape(2, 3)[:, ::2]
    shared = tensorlib.as_tensor(p)
    assert shared.data_ptr() == p.data_ptr() and shared.stride() == p.stride()
    assert shared.dtype == tensorlib.int16 and shared.tolist() == p.tolist()
    copied = tensorlib.tensor(p)
    assert copied.data_ptr() != p.data_ptr() and copied.tolist() == p.tolist()
    assert copied.dtype == tensorlib.int16
    b = torch.arange(3, dtype=torch.bfloat16)
    assert tensorlib.as_tensor(b).dtype == tensorlib.bfloat16
    assert tensorlib.as_tensor(b).data_ptr() == b.data_ptr()
