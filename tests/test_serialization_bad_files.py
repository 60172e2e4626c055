"""Malicious and corrupt checkpoints: every one a clear exception, nothing executed, no
crash, no partial object and no tensor memory left behind."""
import builtins
import collections
import gc
import io
import os
import pickle
import struct
import subprocess
import warnings
import zipfile

import numpy as np
import pytest

import tensorlib
from tensorlib import serialization

BAD = (RuntimeError, pickle.UnpicklingError)


class Payload:
    """An object whose unpickling calls ``func(*args)``: the classic pickle exploit."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return (self.func, self.args)


def _saved(obj, **kw):
    buf = io.BytesIO()
    tensorlib.save(obj, buf, **kw)
    return buf.getvalue()


def _good():
    x = tensorlib.arange(8.)
    return _saved({"w": x, "tail": x[4:], "i": tensorlib.tensor([1, 2, 3])})


def _entries(data):
    z = zipfile.ZipFile(io.BytesIO(data))
    return [(i.filename, z.read(i.filename)) for i in z.infolist()]


def _zip(entries, compression=zipfile.ZIP_STORED):
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # duplicate names are made on purpose
        with zipfile.ZipFile(out, "w", compression) as z:
            for name, blob in entries:
                z.writestr(name, blob)
    return out.getvalue()


def _load(data, **kw):
    return tensorlib.load(io.BytesIO(data), **kw)


def _payloads(marker):
    import subprocess as sp
    return {
        "posix.system": Payload(os.system, f"touch {marker}"),
        "builtins.eval": Payload(builtins.eval, f"open({str(marker)!r}, 'w')"),
        "builtins.exec": Payload(builtins.exec, f"open({str(marker)!r}, 'w')"),
        "subprocess.Popen": Payload(sp.Popen, ["touch", str(marker)]),
        "io.open": Payload(builtins.open, str(marker), "w"),
        "builtins.getattr": Payload(getattr, "text", "upper"),
    }


@pytest.mark.parametrize("legacy", [False, True])
def test_code_execution_payloads_are_refused(tmp_path, legacy):
    marker = tmp_path / "pwned"
    for name, payload in _payloads(marker).items():
        # alone, and hidden in a state_dict next to real tensors
        sd = collections.OrderedDict(weight=tensorlib.ones(2), evil=payload)
        for obj in (payload, sd, [{"a": (1, payload)}]):
            data = _saved(obj, _use_new_zipfile_serialization=not legacy)
            with pytest.raises(pickle.UnpicklingError, match=f"GLOBAL {name}"):
                _load(data)
            assert not marker.exists(), name
    # the same payload does run when the user opts in to whole objects: the test is real
    data = _saved({"x": _payloads(marker)["io.open"]})
    d = _load(data, weights_only=False)
    d["x"].close()
    assert marker.exists()


def test_protocol_4_pickles_and_stack_global(tmp_path):
    marker = tmp_path / "p4"
    pkl = pickle.dumps(Payload(builtins.open, str(marker), "w"), protocol=4)
    data = _zip([("archive/data.pkl", pkl)])
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL io.open"):
        _load(data)
    assert not marker.exists()
    # a plain (non-torch) pickle file goes to the legacy reader's header: refused there too
    with pytest.raises(pickle.UnpicklingError, match="io.open"):
        _load(pkl)
    assert not marker.exists()


class _FakeArray:
    """Pickles as a NumPy array of 10**9 float64 carrying 8 bytes of data."""

    def __reduce__(self):
        return (serialization._np_reconstruct_real, (np.ndarray, (0,), b"b"),
                (1, (10 ** 9,), np.dtype("f8"), False, b"\0" * 8))


def _pkl(*ops):
    return b"\x80\x02" + b"".join(ops) + b"."


def _str(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


@pytest.mark.parametrize("pkl, match", [
    # BUILD on an allowed function: would rewrite its attributes for every later load
    (_pkl(b"ctorch._utils\n_rebuild_tensor_v2\n", b"}", _str("__doc__"), _str("x"), b"s",
          b"b"), "Can only build"),
    (_pkl(b"ctorch._utils\n_rebuild_tensor_v2\n", b"N}", _str("__kwdefaults__"), b"}s",
          b"\x86b"), "Can only build"),
    # extension codes and protocol-0 instantiation
    (_pkl(b"\x82\x01"), "opcode not allowed"),
    (b"(ios\nsystem\n.", "opcode not allowed|blocked"),
    (_pkl(b"(ccollections\nOrderedDict\no"), "opcode not allowed"),
    # calling a class that is allowed only as an argument (would allocate any size)
    (_pkl(b"cnumpy\nndarray\n", b"J\x00\x00\x00\x40\x85\x85R"), "unrecognized object"),
    (_pkl(b"ctorch\nTensor\n", b"J\x00\x00\x00\x40\x85R"), "unrecognized object"),
    (_pkl(b"c__builtin__\nbytearray\n", b"J\x00\x00\x00\x40\x85R"), "bytearray"),
    # a persistent id that is not a storage
    (_pkl(_str("module"), b"\x85Q"), "persistent_load"),
    (_pkl(b"K\x01Q"), "persistent_load"),
    # _codecs.encode with a codec that is not plain text
    (_pkl(b"c_codecs\nencode\n", _str("x"), _str("rot13"), b"\x86R"), "_codecs.encode"),
    # an object-dtype NumPy array (its state would be a list of arbitrary objects)
    (pickle.dumps(np.array([1, "a"], dtype=object), protocol=2), "plain"),
    # DoS shapes: a NumPy array claiming far more data than it carries
    (pickle.dumps(_FakeArray(), protocol=2), "corrupt checkpoint: NumPy array state"),
])
def test_hostile_pickles(pkl, match):
    data = _zip([("archive/data.pkl", pkl)])
    doc = serialization._rebuild_tensor_v2.__doc__
    with pytest.raises(pickle.UnpicklingError, match=match):
        _load(data)
    assert serialization._rebuild_tensor_v2.__doc__ == doc
    assert serialization._rebuild_tensor_v2.__kwdefaults__ is None


def test_storage_key_with_path_is_refused():
    class KeySaver(serialization._Saver):
        def _token(self, t):
            tok = super()._token(t)
            tok.pid = tok.pid[:2] + ("../../x",) + tok.pid[3:]
            return tok

    with pytest.raises(pickle.UnpicklingError, match="storage id"):
        _load(_craft(KeySaver, {"w": tensorlib.ones(2)}))


def _craft(saver_cls, obj, legacy=False, records=None):
    buf = io.BytesIO()
    s = saver_cls(buf, 2, legacy=legacy)
    s.dump(obj)
    out = io.BytesIO()
    if legacy:
        serialization._legacy_save(out, buf.getvalue(), s, 2)
        return out.getvalue()
    w = serialization._ZipWriter(out, "archive")
    w.record("data.pkl", buf.getvalue())
    for key, whole in s.storages.items():
        w.record(f"data/{key}", serialization._storage_bytes(whole) if records is None
                 else records(key, whole))
    w.close()
    return out.getvalue()


def _baseline():
    gc.collect()
    return tensorlib.memory.memory_allocated()


def _memory_settles(before):
    gc.collect()
    return tensorlib.memory.memory_allocated() == before


def test_truncated_files():
    data = _good()
    before = _baseline()
    for cut in sorted({0, 1, 3, 4, 30, 100, len(data) // 2, len(data) - 200, len(data) - 23,
                       len(data) - 22, len(data) - 10, len(data) - 1}):
        with pytest.raises(BAD):
            _load(data[:cut])
    assert _memory_settles(before)


def test_not_a_checkpoint():
    for junk in (b"", b"hello world, not a checkpoint",
                 bytes(np.random.default_rng(0).integers(0, 256, 5000, dtype=np.uint8)),
                 b"PK\x03\x04" + b"\x00" * 100):
        with pytest.raises(BAD, match="zip archive|legacy|magic"):
            _load(junk)
    with pytest.raises(RuntimeError, match="Invalid magic number"):
        _load(pickle.dumps({"a": 1}, protocol=2))
    tar = io.BytesIO()
    import tarfile
    with tarfile.open(fileobj=tar, mode="w") as t:
        info = tarfile.TarInfo("storages")
        info.size = 3
        t.addfile(info, io.BytesIO(b"abc"))
    with pytest.raises(RuntimeError, match=r"legacy \.tar format"):
        _load(tar.getvalue())


def test_missing_and_short_storage_records():
    entries = _entries(_good())
    no_data0 = [(n, b) for n, b in entries if n != "archive/data/0"]
    with pytest.raises(RuntimeError, match="'archive/data/0' of storage '0' is missing"):
        _load(_zip(no_data0))
    short = [(n, b[:20] if n == "archive/data/0" else b) for n, b in entries]
    with pytest.raises(RuntimeError, match="holds 20 bytes but its storage of 8 "
                                           "tensorlib.float32 elements needs 32"):
        _load(_zip(short))
    no_pkl = [(n, b) for n, b in entries if not n.endswith("data.pkl")]
    with pytest.raises(RuntimeError, match="data.pkl"):
        _load(_zip(no_pkl))
    garbage = [(n, b"\x80\x02\xff\xfe" if n.endswith("data.pkl") else b) for n, b in entries]
    with pytest.raises(pickle.UnpicklingError):
        _load(_zip(garbage))
    bad_order = [(n, b"middle" if n.endswith("byteorder") else b) for n, b in entries]
    with pytest.raises(RuntimeError, match="byteorder"):
        _load(_zip(bad_order))
    # a deflated archive (not what torch writes, but a valid zip) still loads
    assert _load(_zip(entries, zipfile.ZIP_DEFLATED))["tail"].tolist() == [4, 5, 6, 7]


def test_tensor_outside_its_storage():
    class Oversize(serialization._Saver):
        def reducer_override(self, obj):
            rv = super().reducer_override(obj)
            if isinstance(obj, tensorlib.Tensor):
                f, args = rv
                return f, (args[0], 2, (1000,), (1,)) + args[4:]
            return rv

    with pytest.raises(RuntimeError, match=r"size \[1000\].*needs 1002 elements.*holds 4"):
        _load(_craft(Oversize, tensorlib.ones(4)))

    class BadStride(serialization._Saver):
        def reducer_override(self, obj):
            rv = super().reducer_override(obj)
            if isinstance(obj, tensorlib.Tensor):
                f, args = rv
                return f, (args[0], 0, (2,), (-1,)) + args[4:]
            return rv

    with pytest.raises(RuntimeError, match="non-negative ints"):
        _load(_craft(BadStride, tensorlib.ones(4)))


def test_declared_sizes_beyond_the_file_allocate_nothing():
    class Huge(serialization._Saver):
        def _token(self, t):
            tok = super()._token(t)
            tok.pid = tok.pid[:4] + (10 ** 13,) + tok.pid[5:]
            return tok

    before = _baseline()
    with pytest.raises(RuntimeError, match="needs 40000000000000"):
        _load(_craft(Huge, tensorlib.ones(4)))
    with pytest.raises(RuntimeError, match="does not fit in what is left of the file"):
        _load(_craft(Huge, tensorlib.ones(4), legacy=True))
    assert _memory_settles(before)


def test_no_partial_object_and_no_leak_when_a_later_storage_fails():
    entries = _entries(_good())
    short = [(n, b[:4] if n == "archive/data/1" else b) for n, b in entries]
    before = _baseline()
    with pytest.raises(RuntimeError, match="holds 4 bytes"):
        _load(_zip(short))
    assert _memory_settles(before)


def test_unsafe_zip_entry_names():
    entries = _entries(_good())
    for bad in ("archive/../evil", "/etc/passwd", "archive/data/../../x", "archive\\..\\x",
                "C:/x"):
        with pytest.raises(RuntimeError, match="unsafe path"):
            _load(_zip(entries + [(bad, b"x")]))
    with pytest.raises(RuntimeError, match="appears twice"):
        _load(_zip(entries + [entries[-1]]))


def test_legacy_corruptions():
    x = tensorlib.arange(6.)
    data = _saved({"x": x, "v": x[2:]}, _use_new_zipfile_serialization=False)
    assert _load(data)["v"].tolist() == [2, 3, 4, 5]
    for cut in (len(data) - 1, len(data) - 20, len(data) - 30, 60, 10):
        with pytest.raises(BAD):
            _load(data[:cut])
    # the element count in the storage's header disagrees with the pickle's
    i = data.rindex(struct.pack("<q", 6))
    with pytest.raises(RuntimeError, match="holds 7 elements, the pickle declares 6"):
        _load(data[:i] + struct.pack("<q", 7) + data[i + 8:])
    bad_version = pickle.dumps(serialization.MAGIC_NUMBER, 2) + pickle.dumps(999, 2)
    with pytest.raises(RuntimeError, match="Invalid protocol version: 999"):
        _load(bad_version)


def test_nothing_runs_in_a_fresh_process(tmp_path):
    """A separate interpreter loading a hostile file ends with the exception and no side
    effect (no marker file, no child process started)."""
    marker = tmp_path / "from_child"
    p = tmp_path / "evil.pt"
    p.write_bytes(_saved({"w": tensorlib.ones(1),
                          "x": Payload(os.system, f"touch {marker}")}))
    code = ("import pickle, tensorlib, sys\n"
            "try:\n    tensorlib.load(sys.argv[1])\n"
            "except pickle.UnpicklingError as e:\n    print('refused:', str(e).splitlines()[0])\n")
    # beside the tensorlib this process imported (`python -c` puts its cwd first on sys.path)
    here = os.path.dirname(os.path.dirname(os.path.abspath(tensorlib.__file__)))
    r = subprocess.run([os.sys.executable, "-c", code, str(p)], capture_output=True, text=True,
                       cwd=here, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "refused:" in r.stdout and "posix.system" in r.stdout
    assert not marker.exists()


@pytest.mark.parametrize("legacy", [False, True])
def test_random_corruption_gives_clean_errors(legacy):
    """Bytes flipped anywhere in a checkpoint: it loads (flips inside tensor data go unnoticed,
    as in PyTorch, which checks no CRC either) or raises RuntimeError/UnpicklingError; never
    another exception, a crash or a runaway allocation."""
    import random
    x = tensorlib.arange(8.)
    obj = {"w": x, "t": x[4:], "n": 3, "sd": tensorlib.nn.Linear(2, 2).state_dict()}
    if not legacy:
        obj["np"] = np.arange(3)
    data = _saved(obj, _use_new_zipfile_serialization=not legacy)
    rng = random.Random(1234)
    outcomes = collections.Counter()
    for _ in range(400):
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        try:
            _load(bytes(b))
            outcomes["loaded"] += 1
        except BAD:
            outcomes["refused"] += 1
    assert outcomes["refused"] > 100
