"""tensorlib.safetensors: round trips, files exchanged with the `safetensors` package (both
ways), zero-copy loading through a memory map, and malformed files."""
import json
import struct

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib
from tensorlib import safetensors as tst
from tensorlib.safetensors import SafetensorError

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64"]


def _sample(dtype, shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape) * 30
    if dtype == "bool":
        a = a > 0
    elif dtype == "uint8":
        a = np.abs(a)
    t = tensorlib.tensor(a.tolist() if a.ndim else float(a))
    return t.to(getattr(tensorlib, dtype))


def _f64(t):
    return t.detach().to(tensorlib.float64).numpy()


def _all_dtypes():
    return {d: _sample(d, (3, 2), i) for i, d in enumerate(DTYPES)}


def test_round_trip_every_dtype(tmp_path):
    tensors = _all_dtypes()
    tensors["scalar"] = tensorlib.tensor(2.5)
    tensors["empty"] = tensorlib.zeros(0, 4)
    tensors["transposed"] = tensorlib.arange(6.).view(2, 3).t()      # saved contiguous
    p = tmp_path / "a.safetensors"
    tst.save_file(tensors, p, metadata={"format": "pt", "step": "7"})
    back = tst.load_file(p)
    assert set(back) == set(tensors)
    for k, t in tensors.items():
        assert back[k].dtype is t.dtype and back[k].shape == t.shape, k
        np.testing.assert_array_equal(_f64(back[k]), _f64(t))
    with tst.safe_open(p, framework="pt") as f:
        assert f.metadata() == {"format": "pt", "step": "7"}
        assert set(f.keys()) == set(tensors)
        sl = f.get_slice("float32")
        assert sl.get_shape() == [3, 2] and sl.get_dtype() == "F32"
        np.testing.assert_array_equal(sl[1:, :1].numpy(), tensors["float32"][1:, :1].numpy())
        assert f.get_tensor("int16").dtype is tensorlib.int16
    with tst.safe_open(p, framework="np") as f:
        a = f.get_tensor("float64")
        assert isinstance(a, np.ndarray)
        np.testing.assert_array_equal(a, tensors["float64"].numpy())
    data = tst.save(tensors, metadata={"format": "pt", "step": "7"})
    assert data == p.read_bytes() and tst.load(data).keys() == tensors.keys()


@given(shape=st.lists(st.integers(0, 5), max_size=3), dtype=st.sampled_from(DTYPES),
       seed=st.integers(0, 50))
def test_bytes_round_trip_random_shapes(shape, dtype, seed):
    t = _sample(dtype, tuple(shape), seed)
    back = tst.load(tst.save({"t": t}))["t"]
    assert back.shape == t.shape and back.dtype is t.dtype
    np.testing.assert_array_equal(_f64(back), _f64(t))


def test_layout_aligned_and_valid(tmp_path):
    data = tst.save({"a": tensorlib.ones(3, dtype=tensorlib.uint8),
                     "b": tensorlib.ones(2, dtype=tensorlib.float64),
                     "c": tensorlib.ones(1, dtype=tensorlib.int16)})
    (n,) = struct.unpack("<Q", data[:8])
    assert n % 8 == 0
    header = json.loads(data[8:8 + n])
    for name, info in header.items():
        itemsize = {"U8": 1, "F64": 8, "I16": 2}[info["dtype"]]
        assert (8 + n + info["data_offsets"][0]) % itemsize == 0, name


def test_load_file_is_zero_copy(tmp_path):
    p = tmp_path / "w.safetensors"
    x = tensorlib.randn(128, 64)
    tst.save_file({"x": x, "b": tensorlib.zeros(3, dtype=tensorlib.bfloat16)}, p)
    before = tensorlib.memory.memory_allocated()
    d = tst.load_file(p)
    assert tensorlib.memory.memory_allocated() == before
    assert d["x"].untyped_storage().is_borrowed
    ptr = d["x"].data_ptr()
    with open("/proc/self/maps") as f:
        regions = [line.split() for line in f]
    assert any(int(r[0].split("-")[0], 16) <= ptr < int(r[0].split("-")[1], 16)
               and r[-1] == str(p) for r in regions if len(r) > 5)
    raw = p.read_bytes()
    d["x"][0, 0] = 99.0                   # copy-on-write: the file never changes
    assert p.read_bytes() == raw
    np.testing.assert_array_equal(tst.load_file(p)["x"].numpy(), x.numpy())


def test_files_from_and_for_the_safetensors_package(tmp_path):
    pytest.importorskip("safetensors")
    from safetensors.numpy import load_file as np_load, save_file as np_save
    from safetensors import safe_open
    # ours -> theirs
    tensors = {d: t for d, t in _all_dtypes().items() if d != "bfloat16"}
    p = tmp_path / "ours.safetensors"
    tst.save_file(tensors, p, metadata={"who": "tensorlib"})
    theirs = np_load(str(p))
    for k, t in tensors.items():
        np.testing.assert_array_equal(theirs[k], t.numpy())
        assert theirs[k].dtype == t.numpy().dtype
    with safe_open(str(p), framework="np") as f:
        assert f.metadata() == {"who": "tensorlib"}
    # theirs -> ours
    arrays = {"f32": np.arange(12, dtype=np.float32).reshape(3, 4),
              "i64": np.array([-1, 2 ** 40], dtype=np.int64), "b": np.array([True, False]),
              "f16": np.array([0.5, -2], dtype=np.float16), "u8": np.arange(5, dtype=np.uint8),
              "s": np.array(3.0)}
    q = tmp_path / "theirs.safetensors"
    np_save(arrays, str(q), metadata={"who": "hf"})
    back = tst.load_file(q)
    for k, a in arrays.items():
        np.testing.assert_array_equal(back[k].numpy(), a)
        assert back[k].shape == a.shape
    with tst.safe_open(q) as f:
        assert f.metadata() == {"who": "hf"}


def test_bfloat16_with_torch_safetensors(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("safetensors")
    from safetensors.torch import load_file as pt_load, save_file as pt_save
    p = tmp_path / "bf.safetensors"
    x = _sample("bfloat16", (4, 3))
    tst.save_file({"x": x}, p)
    np.testing.assert_array_equal(pt_load(str(p))["x"].double().numpy(), _f64(x))
    pt_save({"y": torch.randn(5).to(torch.bfloat16)}, str(p))
    y = tst.load_file(p)["y"]
    assert y.dtype is tensorlib.bfloat16
    np.testing.assert_array_equal(_f64(y), pt_load(str(p))["y"].double().numpy())


def test_shared_tensors_and_bad_arguments(tmp_path):
    x = tensorlib.arange(6.)
    with pytest.raises(RuntimeError, match="share memory"):
        tst.save({"a": x, "b": x[2:]})
    tst.save({"a": x[:3], "b": x[3:]})               # same storage, disjoint bytes: fine
    with pytest.raises(ValueError, match="metadata"):
        tst.save({"a": x}, metadata={"k": 1})
    with pytest.raises(TypeError, match="not a Tensor"):
        tst.save({"a": np.zeros(2)})
    with pytest.raises(SafetensorError, match="meta"):
        tst.save({"a": tensorlib.empty(2, device="meta")})
    with pytest.raises(SafetensorError, match="does not contain tensor zz"):
        p = tmp_path / "a.safetensors"
        tst.save_file({"a": x}, p)
        with tst.safe_open(p) as f:
            f.get_tensor("zz")


def _file(header, data=b""):
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


@pytest.mark.parametrize("blob, match", [
    (b"", "HeaderTooSmall"),
    (b"\x01\x02", "HeaderTooSmall"),
    (struct.pack("<Q", 10 ** 12) + b"{}", "HeaderTooLarge"),
    (struct.pack("<Q", 50) + b"{}", "InvalidHeaderLength"),
    (struct.pack("<Q", 4) + b"\xff\xfe{}", "InvalidHeaderDeserialization"),
    (struct.pack("<Q", 2) + b"[]", "not a JSON object"),
    (_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 4),
     "truncated"),
    (_file({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8),
     "TensorInvalidInfo"),
    (_file({"a": {"dtype": "F32", "shape": [10 ** 12], "data_offsets": [0, 4 * 10 ** 12]}},
           b"\0" * 8), "truncated"),
    (_file({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, b"\0" * 4),
     "malformed"),
    (_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
            "b": {"dtype": "F32", "shape": [1], "data_offsets": [2, 6]}}, b"\0" * 8),
     "InvalidOffset"),
    (_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 8),
     "MetadataIncompleteBuffer"),
    (_file({"a": {"dtype": "C64", "shape": [1], "data_offsets": [0, 8]}}, b"\0" * 8),
     "not supported by tensorlib"),
    (_file({"a": {"dtype": "XYZ", "shape": [1], "data_offsets": [0, 8]}}, b"\0" * 8),
     "unknown"),
    (_file({"__metadata__": {"k": 3}}), "__metadata__"),
])
def test_malformed_files(tmp_path, blob, match):
    with pytest.raises(SafetensorError, match=match):
        tst.load(blob)
    p = tmp_path / "bad.safetensors"
    p.write_bytes(blob)
    before = tensorlib.memory.memory_allocated()
    with pytest.raises(SafetensorError, match=match):
        tst.load_file(p)
    assert tensorlib.memory.memory_allocated() == before


def test_random_corruption_gives_safetensor_errors():
    import random
    data = tst.save({"a": tensorlib.arange(6.).view(2, 3),
                     "b": tensorlib.ones(3, dtype=tensorlib.int8),
                     "c": tensorlib.zeros(2, dtype=tensorlib.bfloat16)}, metadata={"x": "y"})
    rng = random.Random(7)
    refused = 0
    for _ in range(500):
        b = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        try:
            tst.load(bytes(b))
        except SafetensorError:
            refused += 1
    assert refused > 300
