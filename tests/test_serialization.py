"""tensorlib.save / tensorlib.load: round trips, PyTorch's files both ways (in process),
mmap, map_location, file kinds and the safe-globals API. Files written by torch and loaded
where torch cannot be imported are in test_serialization_torch_files.py; malicious and
corrupt files in test_serialization_bad_files.py."""
import collections
import io
import os
import pickle
import zipfile

import numpy as np
import pytest
from hypothesis import given, strategies as st

import tensorlib
from tensorlib import serialization

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64"]


def _roundtrip(obj, **load_kw):
    buf = io.BytesIO()
    tensorlib.save(obj, buf)
    buf.seek(0)
    return tensorlib.load(buf, **load_kw)


def _values(t):
    """A tensor's values as float64 NumPy (bfloat16 has no NumPy dtype)."""
    return np.asarray(t.detach().to(tensorlib.float64).numpy())


def _sample(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape) * 50
    if dtype == "bool":
        a = a > 0
    elif dtype == "uint8":
        a = np.abs(a) % 256
    elif dtype == "int8":
        a = np.clip(a, -128, 127)        # (a value outside int8 raises, as in torch)
    return tensorlib.tensor(a.tolist() if a.ndim else float(a),
                            dtype=getattr(tensorlib, dtype))


def test_docstring_examples():
    import doctest
    for mod in (serialization, tensorlib.safetensors):
        result = doctest.testmod(mod, extraglobs={"tensorlib": tensorlib},
                                 optionflags=doctest.ELLIPSIS)
        assert result.attempted > 3 and result.failed == 0, mod.__name__


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_round_trips(dtype):
    x = _sample(dtype, (3, 4))
    y = _roundtrip(x)
    assert type(y) is tensorlib.Tensor and y.dtype is x.dtype and y.shape == x.shape
    np.testing.assert_array_equal(_values(y), _values(x))
    # special float values survive bit for bit
    if dtype.startswith("float") or dtype == "bfloat16":
        z = tensorlib.tensor([float("inf"), -float("inf"), float("nan"), -0.0],
                             dtype=getattr(tensorlib, dtype))
        w = _roundtrip(z)
        np.testing.assert_array_equal(z.view(tensorlib.uint8 if z.element_size() == 1 else
                                             {2: tensorlib.int16, 4: tensorlib.int32,
                                              8: tensorlib.int64}[z.element_size()]).numpy(),
                                      w.view({2: tensorlib.int16, 4: tensorlib.int32,
                                              8: tensorlib.int64}[w.element_size()]).numpy())


@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=4),
       dtype=st.sampled_from(DTYPES), seed=st.integers(0, 100))
def test_random_shapes_round_trip(shape, dtype, seed):
    x = _sample(dtype, tuple(shape), seed)
    y = _roundtrip({"x": x})["x"]
    assert y.shape == x.shape and y.dtype is x.dtype and y.stride() == x.stride()
    np.testing.assert_array_equal(_values(y), _values(x))


def test_views_share_one_storage_saved_once():
    base = tensorlib.arange(24.).view(4, 6)
    obj = {"base": base, "row": base[1], "t": base.t(), "step": base[:, ::2],
           "tail": base.view(-1)[5:], "again": base}
    buf = io.BytesIO()
    tensorlib.save(obj, buf)
    records = [n for n in zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()
               if "/data/" in n]
    assert records == ["archive/data/0"]
    d = tensorlib.load(io.BytesIO(buf.getvalue()))
    s = d["base"].untyped_storage()
    for k in obj:
        assert d[k].untyped_storage() is s, k
        assert d[k].shape == obj[k].shape and d[k].stride() == obj[k].stride()
        assert d[k].storage_offset() == obj[k].storage_offset()
        np.testing.assert_array_equal(d[k].numpy(), obj[k].numpy())
    assert d["again"] is d["base"]          # one object saved twice is one object loaded
    d["row"][0] = 100.0                     # sharing is real: a write shows in every view
    assert d["base"][1, 0].item() == 100.0 and d["t"][0, 1].item() == 100.0
    assert d["base"]._base is None          # tensors over the storage, not views of a tensor


def test_view_alone_keeps_whole_storage_and_offset():
    base = tensorlib.arange(10, dtype=tensorlib.int32)
    v = _roundtrip(base[3:7])
    assert v.tolist() == [3, 4, 5, 6] and v.storage_offset() == 3
    assert v.untyped_storage().nbytes() == 40


def test_parameters_and_requires_grad():
    p = tensorlib.nn.Parameter(tensorlib.randn(3))
    q = tensorlib.nn.Parameter(tensorlib.randn(2), requires_grad=False)
    leaf = tensorlib.ones(2, requires_grad=True)
    nonleaf = leaf * 2
    p.tag = "encoder"
    d = _roundtrip({"p": p, "q": q, "leaf": leaf, "nonleaf": nonleaf, "plain": tensorlib.ones(1)})
    assert type(d["p"]) is tensorlib.nn.Parameter and d["p"].requires_grad
    assert d["p"].tag == "encoder"
    assert type(d["q"]) is tensorlib.nn.Parameter and not d["q"].requires_grad
    assert d["leaf"].requires_grad and d["leaf"].is_leaf
    assert d["nonleaf"].requires_grad and d["nonleaf"].is_leaf and d["nonleaf"].grad_fn is None
    assert not d["plain"].requires_grad
    assert d["p"].untyped_storage().role_name == "parameter"
    np.testing.assert_array_equal(d["p"].detach().numpy(), p.detach().numpy())


def _model():
    tensorlib.manual_seed(0)
    return tensorlib.nn.Sequential(tensorlib.nn.Linear(4, 8), tensorlib.nn.BatchNorm1d(8),
                                   tensorlib.nn.ReLU(), tensorlib.nn.Linear(8, 2))


def test_module_state_dict_round_trip_and_load_state_dict():
    m = _model()
    m.train()
    m(tensorlib.randn(5, 4))                # moves the running stats and num_batches_tracked
    sd = m.state_dict()
    d = _roundtrip(sd)
    assert type(d) is collections.OrderedDict and list(d) == list(sd)
    assert d._metadata == sd._metadata
    for k in sd:
        assert d[k].dtype is sd[k].dtype
        np.testing.assert_array_equal(d[k].numpy(), sd[k].numpy())
    tensorlib.manual_seed(1)
    m2 = _model()
    m2.load_state_dict(d)
    m.eval()
    m2.eval()
    x = tensorlib.randn(3, 4)
    np.testing.assert_array_equal(m(x).detach().numpy(), m2(x).detach().numpy())


def test_optimizer_like_state_dict():
    sd = {"state": {0: {"step": tensorlib.tensor(3.0), "exp_avg": tensorlib.randn(2, 2),
                        "exp_avg_sq": tensorlib.rand(2, 2)},
                    1: {"step": tensorlib.tensor(3.0), "momentum_buffer": None}},
          "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-8, "amsgrad": False,
                            "weight_decay": 0, "params": [0, 1], "foreach": None}]}
    d = _roundtrip(sd)
    assert d["param_groups"] == sd["param_groups"]
    assert d["state"][1]["momentum_buffer"] is None
    assert d["state"][0]["step"].item() == 3.0
    np.testing.assert_array_equal(d["state"][0]["exp_avg"].numpy(),
                                  sd["state"][0]["exp_avg"].numpy())


def test_containers_numpy_and_python_values():
    obj = {"nested": [1, (2.5, "three"), {"four": [None, True]}],
           "np": np.arange(6, dtype=np.int16).reshape(2, 3),
           "np_f": np.linspace(0, 1, 5), "np_bool": np.array([True, False]),
           "np_scalar": np.float32(1.5), "np_int": np.int64(-7),
           "bytes": b"\x00\xffab", "set": {1, 2}, "frozen": frozenset({3}),
           "complex": 1 + 2j, "big": 2 ** 80, "neg": -5, "float": 0.1,
           "size": tensorlib.Size([2, 3]), "dtype": tensorlib.bfloat16,
           "device": tensorlib.device("cpu"), "empty": tensorlib.zeros(0, 3)}
    d = _roundtrip(obj)
    for k in ("nested", "bytes", "set", "frozen", "complex", "big", "neg", "float"):
        assert d[k] == obj[k] and type(d[k]) is type(obj[k]), k
    for k in ("np", "np_f", "np_bool"):
        assert d[k].dtype == obj[k].dtype
        np.testing.assert_array_equal(d[k], obj[k])
    assert type(d["np_scalar"]) is np.float32 and d["np_scalar"] == 1.5
    assert type(d["np_int"]) is np.int64 and d["np_int"] == -7
    assert type(d["size"]) is tensorlib.Size and d["size"] == (2, 3)
    assert d["dtype"] is tensorlib.bfloat16 and d["device"] == tensorlib.device("cpu")
    assert d["empty"].shape == (0, 3)


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_other_pickle_protocols_load_here(protocol):
    x = tensorlib.arange(4.)
    buf = io.BytesIO()
    obj = {"x": x, "v": x[1:], "d": tensorlib.float16, "b": b"xy" * 3,
           "ba": bytearray(b"q"), "np": np.arange(3.0)}
    tensorlib.save(obj, buf, pickle_protocol=protocol)
    d = tensorlib.load(io.BytesIO(buf.getvalue()))
    assert d["v"].tolist() == [1, 2, 3] and d["v"].untyped_storage() is d["x"].untyped_storage()
    assert d["d"] is tensorlib.float16 and d["b"] == obj["b"] and d["ba"] == obj["ba"]
    np.testing.assert_array_equal(d["np"], obj["np"])


def test_meta_tensors_round_trip():
    m = tensorlib.empty(2, 3, device="meta").t()
    d = _roundtrip(m)
    assert d.device.type == "meta" and d.shape == (3, 2) and d.stride() == (1, 3)


class _Unseekable(io.RawIOBase):
    def __init__(self, data):
        self._b = io.BytesIO(data)

    def readable(self):
        return True

    def seekable(self):
        return False

    def readinto(self, b):
        return self._b.readinto(b)


def test_file_kinds(tmp_path):
    obj = {"w": tensorlib.arange(4.)}
    p = tmp_path / "a.pt"
    tensorlib.save(obj, str(p))
    assert tensorlib.load(str(p))["w"].tolist() == [0, 1, 2, 3]
    tensorlib.save(obj, p)                              # pathlib.Path
    assert tensorlib.load(p)["w"].tolist() == [0, 1, 2, 3]
    with open(p, "wb") as f:
        tensorlib.save(obj, f)
    with open(p, "rb") as f:
        assert tensorlib.load(f)["w"].tolist() == [0, 1, 2, 3]
    data = p.read_bytes()
    assert tensorlib.load(_Unseekable(data))["w"].tolist() == [0, 1, 2, 3]
    # a checkpoint after other bytes in the same stream
    buf = io.BytesIO(b"HEAD" + data)
    buf.seek(4)
    assert tensorlib.load(buf)["w"].tolist() == [0, 1, 2, 3]


def test_records_are_aligned_and_named_like_torchs():
    buf = io.BytesIO()
    tensorlib.save({"a": tensorlib.ones(3), "b": tensorlib.ones(5, dtype=tensorlib.int8)}, buf)
    raw = buf.getvalue()
    z = zipfile.ZipFile(io.BytesIO(raw))
    names = z.namelist()
    for need in ("archive/data.pkl", "archive/byteorder", "archive/version",
                 "archive/.data/serialization_id", "archive/data/0", "archive/data/1"):
        assert need in names
    assert z.read("archive/byteorder") == b"little"
    assert z.testzip() is None                          # CRCs are right
    for info in z.infolist():
        nl, el = np.frombuffer(raw[info.header_offset + 26:info.header_offset + 30], "<u2")
        start = info.header_offset + 30 + int(nl) + int(el)
        assert start % 64 == 0, info.filename
        assert raw[start:start + info.file_size] == z.read(info.filename)


@pytest.mark.parametrize("limit", [1, 200])
def test_zip64_records(monkeypatch, limit, torch):
    """Zip64 fields (sizes or offsets past 4 GiB) written for records past a lowered limit,
    read back by Python's zipfile, by tensorlib and by PyTorch."""
    monkeypatch.setattr(serialization, "_ZIP64_LIMIT", limit)
    x = tensorlib.arange(100.)
    buf = io.BytesIO()
    tensorlib.save({"x": x, "v": x[10:20], "i": tensorlib.arange(7)}, buf)
    z = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    assert z.testzip() is None
    d = tensorlib.load(io.BytesIO(buf.getvalue()))
    assert d["v"].tolist() == list(range(10, 20)) and d["i"].tolist() == list(range(7))
    t = torch.load(io.BytesIO(buf.getvalue()))
    assert t["v"].tolist() == list(range(10, 20)) and t["x"].sum().item() == 4950


def _mapped_regions():
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            out.append((lo, hi, parts[-1] if len(parts) > 5 else ""))
    return out


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc/self/maps")
def test_mmap_borrows_storages_from_the_file(tmp_path):
    p = tmp_path / "big.pt"
    x = tensorlib.randn(256, 256)
    tensorlib.save({"x": x, "row": x[3], "p": tensorlib.nn.Parameter(tensorlib.ones(4))}, p)
    before = tensorlib.memory.memory_allocated()
    d = tensorlib.load(p, mmap=True)
    assert tensorlib.memory.memory_allocated() == before     # nothing allocated: borrowed
    s = d["x"].untyped_storage()
    assert s.is_borrowed and d["row"].untyped_storage() is s
    np.testing.assert_array_equal(d["x"].numpy(), x.numpy())
    ptr = d["x"].data_ptr()
    assert any(lo <= ptr < hi and name == str(p) for lo, hi, name in _mapped_regions())
    # copy-on-write: writing to the tensor never changes the file
    data = p.read_bytes()
    d["x"][0, 0] = 12345.0
    assert d["x"][0, 0].item() == 12345.0 and p.read_bytes() == data
    assert type(d["p"]) is tensorlib.nn.Parameter and d["p"].requires_grad
    with open(p, "rb") as f:                               # a file opened from a path maps too
        assert tensorlib.load(f, mmap=True)["x"].untyped_storage().is_borrowed
    with pytest.raises(ValueError, match="file path"):
        tensorlib.load(io.BytesIO(data), mmap=True)


def test_map_location_forms(tmp_path):
    x = tensorlib.arange(3.)
    obj = {"x": x, "y": x[1:]}
    for loc in ("meta", tensorlib.device("meta"), {"cpu": "meta"}):
        d = _roundtrip(obj, map_location=loc)
        assert d["x"].device.type == "meta" and d["y"].shape == (2,)
    for loc in ("cpu", tensorlib.device("cpu"), {"cuda:0": "meta"}, None):
        d = _roundtrip(obj, map_location=loc)
        assert d["x"].tolist() == [0, 1, 2] and d["y"].untyped_storage() is \
            d["x"].untyped_storage()
    seen = []

    def keep(storage, location):
        seen.append((storage.nbytes(), location))
        return storage

    d = _roundtrip(obj, map_location=keep)
    assert seen == [(12, "cpu")] and d["y"].tolist() == [1, 2]
    d = _roundtrip(obj, map_location=lambda s, loc: None)
    assert d["x"].tolist() == [0, 1, 2]
    with pytest.raises(TypeError, match="map_location"):
        _roundtrip(obj, map_location=lambda s, loc: "elsewhere")
    with pytest.raises(TypeError, match="map_location"):
        _roundtrip(obj, map_location=3)


class _CudaSaver(serialization._Saver):
    """Writes every storage as saved from cuda:0 (no GPU needed to make such a file)."""

    def _token(self, t):
        tok = super()._token(t)
        tok.pid = tok.pid[:3] + ("cuda:0",) + tok.pid[4:]
        return tok


def _save_with(saver_cls, obj):
    buf = io.BytesIO()
    s = saver_cls(buf, 2, legacy=False)
    s.dump(obj)
    out = io.BytesIO()
    w = serialization._ZipWriter(out, "archive")
    w.record("data.pkl", buf.getvalue())
    w.record("byteorder", b"little")
    for key, whole in s.storages.items():
        w.record(f"data/{key}", serialization._storage_bytes(whole))
    w.close()
    return out.getvalue()


def test_cuda_checkpoint_loads_to_the_device():
    data = _save_with(_CudaSaver, {"w": tensorlib.ones(2)})
    w = tensorlib.load(io.BytesIO(data))["w"]           # (the suite runs the emulator)
    assert w.device == tensorlib.device("cuda", 0) and w.tolist() == [1.0, 1.0]


def test_cuda_checkpoint_needs_map_location(monkeypatch):
    data = _save_with(_CudaSaver, {"w": tensorlib.ones(2)})
    monkeypatch.setattr(tensorlib.cuda, "is_available", lambda: False)   # a CPU-only build
    with pytest.raises(RuntimeError, match="CUDA device but tensorlib.cuda.is_available"):
        tensorlib.load(io.BytesIO(data))
    assert tensorlib.load(io.BytesIO(data), map_location="cpu")["w"].tolist() == [1, 1]
    assert tensorlib.load(io.BytesIO(data), map_location={"cuda:0": "cpu"})["w"].sum() == 2
    seen = []
    d = tensorlib.load(io.BytesIO(data), map_location=lambda s, loc: seen.append(loc) or s)
    assert seen == ["cuda:0"] and d["w"].device.type == "cpu"
    with pytest.raises(RuntimeError, match="CUDA device"):   # None: the saved location
        tensorlib.load(io.BytesIO(data), map_location=lambda s, loc: None)


def test_big_endian_records_are_swapped():
    x = tensorlib.tensor([1.5, -2.0, 3.25])
    buf = io.BytesIO()
    s = serialization._Saver(buf, 2, legacy=False)
    s.dump({"x": x, "i": tensorlib.tensor([1, 258], dtype=tensorlib.int16)})
    out = io.BytesIO()
    w = serialization._ZipWriter(out, "archive")
    w.record("data.pkl", buf.getvalue())
    w.record("byteorder", b"big")
    for key, whole in s.storages.items():
        arr = whole.view(tensorlib.uint8).numpy().view(f"u{whole.element_size()}")
        w.record(f"data/{key}", arr.byteswap().tobytes())
    w.close()
    d = tensorlib.load(io.BytesIO(out.getvalue()))
    assert d["x"].tolist() == [1.5, -2.0, 3.25] and d["i"].tolist() == [1, 258]


def test_legacy_format_round_trip(tmp_path):
    x = tensorlib.arange(12.).view(3, 4)
    obj = {"x": x, "col": x[:, 1], "p": tensorlib.nn.Parameter(tensorlib.ones(2)),
           "i": tensorlib.tensor([1, 2], dtype=tensorlib.int64), "n": 3}
    p = tmp_path / "legacy.pt"
    tensorlib.save(obj, p, _use_new_zipfile_serialization=False)
    assert not zipfile.is_zipfile(p)
    d = tensorlib.load(p)
    assert d["col"].tolist() == [1, 5, 9] and d["n"] == 3
    assert d["col"].untyped_storage() is d["x"].untyped_storage()
    assert type(d["p"]) is tensorlib.nn.Parameter
    with pytest.raises(RuntimeError, match="mmap can only be used"):
        tensorlib.load(p, mmap=True)
    m = tensorlib.load(p, map_location="meta")
    assert m["x"].device.type == "meta"


def test_our_files_load_in_torch(torch, tmp_path):
    x = tensorlib.randn(4, 5)
    m = _model()
    sd = m.state_dict()
    obj = {"x": x, "row": x[2], "t": x.t(), "sd": sd,
           "p": tensorlib.nn.Parameter(tensorlib.randn(3)),
           "frozen": tensorlib.nn.Parameter(tensorlib.randn(3), requires_grad=False),
           "dtypes": {d: _sample(d, (2, 3)) for d in DTYPES},
           "opt": {"state": {0: {"step": tensorlib.tensor(2.0)}},
                   "param_groups": [{"lr": 0.01, "params": [0]}]},
           "size": tensorlib.Size([1, 2]), "dtype": tensorlib.float16,
           "dev": tensorlib.device("cpu"), "meta": tensorlib.empty(2, device="meta"),
           "misc": [1, 2.5, "s", b"b", None, (True,), {3}]}
    for legacy in (False, True):
        p = tmp_path / f"ours{legacy}.pt"
        tensorlib.save(obj, p, _use_new_zipfile_serialization=not legacy)
        d = torch.load(p, weights_only=True)
        np.testing.assert_array_equal(d["x"].numpy(), x.numpy())
        assert d["row"].untyped_storage().data_ptr() == d["x"].untyped_storage().data_ptr()
        assert d["t"].stride() == (1, 5) and torch.equal(d["t"], d["x"].t())
        assert isinstance(d["p"], torch.nn.Parameter) and d["p"].requires_grad
        assert isinstance(d["frozen"], torch.nn.Parameter) and not d["frozen"].requires_grad
        for name, t in obj["dtypes"].items():
            assert d["dtypes"][name].dtype == getattr(torch, name)
            np.testing.assert_array_equal(d["dtypes"][name].double().numpy(), _values(t))
        assert d["opt"]["param_groups"] == obj["opt"]["param_groups"]
        assert d["size"] == torch.Size([1, 2]) and d["dtype"] is torch.float16
        assert d["dev"] == torch.device("cpu") and d["meta"].is_meta
        assert d["misc"] == obj["misc"]
        assert d["sd"]._metadata == sd._metadata
        # the state_dict drives a torch model to the same outputs
        tm = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8),
                                 torch.nn.ReLU(), torch.nn.Linear(8, 2))
        tm.load_state_dict(d["sd"])
        tm.eval()
        m.eval()
        xin = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
        np.testing.assert_allclose(tm(torch.from_numpy(xin)).detach().numpy(),
                                   m(tensorlib.from_numpy(xin)).detach().numpy(),
                                   rtol=1e-5, atol=1e-6)


def test_torch_files_load_here_in_process(torch, tmp_path):
    """The same direction as test_serialization_torch_files.py (which proves torch is not
    needed), here in process for the cases that need torch objects to compare against."""
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.LayerNorm(4))
    opt = torch.optim.Adam(tm.parameters(), lr=0.01)
    tm(torch.randn(2, 3)).sum().backward()
    opt.step()
    obj = {"model": tm.state_dict(), "opt": opt.state_dict(), "epoch": 7,
           "x": torch.arange(10.)[2:8:2], "np": np.arange(3)}
    p = tmp_path / "torch.pt"
    torch.save(obj, p)
    d = tensorlib.load(p)
    assert d["epoch"] == 7 and d["x"].tolist() == [2.0, 4.0, 6.0] and d["x"].stride() == (2,)
    np.testing.assert_array_equal(d["np"], np.arange(3))
    for k, v in tm.state_dict().items():
        np.testing.assert_array_equal(d["model"][k].numpy(), v.numpy())
    assert d["opt"]["param_groups"][0]["lr"] == 0.01
    for i, st_ in opt.state_dict()["state"].items():
        for k, v in st_.items():
            np.testing.assert_array_equal(d["opt"]["state"][i][k].numpy(), v.numpy())
    m = tensorlib.nn.Sequential(tensorlib.nn.Linear(3, 4), tensorlib.nn.LayerNorm(4))
    m.load_state_dict(d["model"])
    xin = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(m(tensorlib.from_numpy(xin)).detach().numpy(),
                               tm(torch.from_numpy(xin)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)


def test_torch_tensor_and_parameter_attributes(torch, tmp_path):
    t = torch.ones(2)
    t.note = "dropped"
    p = torch.nn.Parameter(torch.zeros(1))
    p.tag = "kept"
    torch.save({"t": t, "p": p}, tmp_path / "attrs.pt")
    with pytest.warns(UserWarning, match="'note' saved on a tensor is dropped"):
        d = tensorlib.load(tmp_path / "attrs.pt")
    assert d["t"].tolist() == [1.0, 1.0]
    assert type(d["p"]) is tensorlib.nn.Parameter and d["p"].tag == "kept"
    # and ours, with an attribute on a Parameter, in torch
    q = tensorlib.nn.Parameter(tensorlib.ones(1))
    q.tag = "mine"
    tensorlib.save(q, tmp_path / "q.pt")
    tq = torch.load(tmp_path / "q.pt")
    assert isinstance(tq, torch.nn.Parameter) and tq.tag == "mine"


def test_torch_dtypes_tensorlib_lacks_are_named(torch, tmp_path):
    cases = {"c": (torch.ones(2, dtype=torch.complex64), "torch.ComplexFloatStorage"),
             "u": (torch.ones(2, dtype=torch.uint16), "torch.uint16"),
             "s": (torch.ones(2).to_sparse(), r"_rebuild_sparse_tensor \(sparse tensors\)")}
    for name, (t, match) in cases.items():
        torch.save({name: t}, tmp_path / f"{name}.pt")
        for weights_only in (True, False, None):
            with pytest.raises(pickle.UnpicklingError,
                               match=f"{match}.*not supported by tensorlib"):
                tensorlib.load(tmp_path / f"{name}.pt", weights_only=weights_only)


class Point:
    """A user class saved inside a checkpoint (allowed only when the user says so)."""

    def __init__(self, x=0, y=0):
        self.x, self.y = x, y


def test_safe_globals_api():
    serialization.clear_safe_globals()
    buf = io.BytesIO()
    tensorlib.save({"pt": Point(1, 2), "w": tensorlib.ones(1)}, buf)
    name = f"{__name__}.Point"
    with pytest.raises(pickle.UnpicklingError, match=f"Unsupported global: GLOBAL {name}"):
        tensorlib.load(io.BytesIO(buf.getvalue()))
    buf.seek(0)
    assert serialization.get_unsafe_globals_in_checkpoint(buf) == [name]
    with serialization.safe_globals([Point]):
        d = tensorlib.load(io.BytesIO(buf.getvalue()))
        assert type(d["pt"]) is Point and (d["pt"].x, d["pt"].y) == (1, 2)
    assert Point not in serialization.get_safe_globals()
    serialization.add_safe_globals([(Point, name)])
    assert tensorlib.load(io.BytesIO(buf.getvalue()))["pt"].y == 2
    serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []
    d = tensorlib.load(io.BytesIO(buf.getvalue()), weights_only=False)
    assert type(d["pt"]) is Point
    with pytest.raises(ValueError, match="length 2"):
        serialization.add_safe_globals([(Point, name, 3)])
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        tensorlib.load(io.BytesIO(buf.getvalue()), pickle_module=pickle)
    assert tensorlib.load(io.BytesIO(buf.getvalue()), pickle_module=pickle,
                          weights_only=False)["w"].tolist() == [1.0]


def test_os_globals_are_blocked_even_when_allowlisted():
    buf = io.BytesIO()
    tensorlib.save({"f": os.getcwd}, buf)
    with serialization.safe_globals([os.getcwd]):
        with pytest.raises(pickle.UnpicklingError, match="is blocked"):
            tensorlib.load(io.BytesIO(buf.getvalue()))


def test_saving_storages_viewed_as_two_dtypes_raises():
    b = tensorlib.zeros(8, dtype=tensorlib.uint8)
    with pytest.raises(RuntimeError, match="view the same data as different types"):
        tensorlib.save([b, b.view(tensorlib.int32)], io.BytesIO())


def test_exported_names():
    assert tensorlib.save is serialization.save and tensorlib.load is serialization.load
    for name in serialization.__all__:
        assert getattr(serialization, name).__doc__
