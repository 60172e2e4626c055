"""The safetensors format (Hugging Face's weights files): ``save_file``/``load_file``/
``safe_open``, and ``save``/``load`` of bytes, written here from the format's definition.

A file is an 8-byte little-endian header length ``N``, ``N`` bytes of JSON (``{name: {"dtype":
"F32", "shape": [..], "data_offsets": [begin, end]}, "__metadata__": {str: str}}``, padded with
spaces), then the tensors' bytes, contiguous, little-endian, each at ``8 + N + begin``. The
format holds no code, so loading it is safe; ``load_file`` maps the file (copy-on-write) and
hands out tensors over the mapping: no copy, borrowed memory the allocator does not count.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
>>> tensorlib.safetensors.save_file({"w": tensorlib.ones(2, 2)}, path, metadata={"v": "1"})
>>> tensorlib.safetensors.load_file(path)["w"].sum().item()
4.0
"""
import json
import os
import struct
import sys

import numpy as np

from tensorlib._core.tensor import TensorBase, from_numpy

__all__ = ["save_file", "load_file", "safe_open", "save", "load", "SafetensorError"]

# the format's dtype codes <-> tensorlib dtype names (codes tensorlib cannot hold are refused)
_CODES = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "I32": "int32",
          "I64": "int64", "F16": "float16", "BF16": "bfloat16", "F32": "float32",
          "F64": "float64"}
_NAMES = {v: k for k, v in _CODES.items()}
_KNOWN_UNSUPPORTED = ("U16", "U32", "U64", "F8_E4M3", "F8_E5M2", "F8_E8M0", "F4", "F6_E2M3",
                      "F6_E3M2", "C64", "C128")
_MAX_HEADER = 100_000_000          # the reference implementation's limit on the JSON header


class SafetensorError(Exception):
    """A malformed safetensors file or an argument the format cannot store (the class the
    ``safetensors`` package raises for these).

    >>> try:
    ...     tensorlib.safetensors.load(b"\\x01")
    ... except tensorlib.safetensors.SafetensorError as e:
    ...     print(e)
    Error while deserializing header: HeaderTooSmall
    """


def _tl():
    import tensorlib
    return tensorlib


def _check_shared(tensors):
    """Names of tensors whose bytes overlap: the format stores each apart, so saving them
    would silently duplicate (and un-share) memory."""
    groups = {}
    for name, t in tensors.items():
        if t.numel() == 0 or t.device.type == "meta":
            continue
        s = t.untyped_storage()
        start = t.storage_offset() * t.element_size()
        span = 1 + sum((n - 1) * st for n, st in zip(t.shape, t.stride()))
        groups.setdefault(id(s), []).append((start, start + span * t.element_size(), name))
    shared = []
    for ranges in groups.values():
        ranges.sort()
        for (a0, a1, an), (b0, b1, bn) in zip(ranges, ranges[1:]):
            if b0 < a1:
                shared.append([an, bn])
    return shared


def _serialize(tensors, metadata):
    """(header bytes, [(tensor, nbytes)]) of the file for ``tensors``."""
    if not isinstance(tensors, dict):
        raise TypeError(f"expected a dict of name -> tensor, got {type(tensors).__name__}")
    if metadata is not None:
        if not isinstance(metadata, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise ValueError("metadata must be a dict of str -> str")
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names must be str, got {type(name).__name__}")
        if name == "__metadata__":
            raise SafetensorError("the name '__metadata__' is reserved for the metadata")
        if not isinstance(t, TensorBase):
            raise TypeError(f"tensor {name!r} is a {type(t).__name__}, not a Tensor")
        if t.device.type == "meta":
            raise SafetensorError(f"tensor {name!r} is on the meta device: it has no data "
                                  f"to save")
    shared = _check_shared(tensors)
    if shared:
        raise RuntimeError(
            f"Some tensors share memory, this will lead to duplicate memory on disk and "
            f"potential differences when loading them again: {shared}. Save copies "
            f"(.clone()) of the tensors that share memory.")
    # largest element first, so every tensor's data is aligned to its element size
    order = sorted(tensors, key=lambda n: (-tensors[n].element_size(), n))
    header, items, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = dict(metadata)
    for name in order:
        t = tensors[name]
        nbytes = t.numel() * t.element_size()
        header[name] = {"dtype": _NAMES[t.dtype.name], "shape": list(t.shape),
                        "data_offsets": [offset, offset + nbytes]}
        items.append((t, nbytes))
        offset += nbytes
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text, items


def _host_bytes(t):
    tl = _tl()
    c = t.detach()
    if c.device.type != "cpu":
        c = c.to("cpu")
    c = c.contiguous()
    if c.numel() == 0:
        return b""
    arr = c.reshape(-1).view(tl.uint8).numpy()
    if sys.byteorder == "big" and t.element_size() > 1:
        arr = arr.view(f"u{t.element_size()}").byteswap().view(np.uint8)
    return memoryview(arr)


def save(tensors, metadata=None):
    """The safetensors file for ``tensors`` (a dict of name -> tensor), as bytes.

    >>> data = tensorlib.safetensors.save({"a": tensorlib.arange(3)})
    >>> tensorlib.safetensors.load(data)["a"].tolist()
    [0, 1, 2]
    """
    head, items = _serialize(tensors, metadata)
    return head + b"".join(bytes(_host_bytes(t)) for t, _ in items)


def save_file(tensors, filename, metadata=None):
    """Write ``tensors`` (a dict of name -> tensor) to ``filename`` in the safetensors format;
    ``metadata`` is a dict of str -> str kept in the header. Tensors sharing memory raise.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "m.safetensors")
    >>> tensorlib.safetensors.save_file({"b": tensorlib.zeros(3)}, p)
    >>> os.path.getsize(p) > 12
    True
    """
    head, items = _serialize(tensors, metadata)
    with open(filename, "wb") as f:
        f.write(head)
        for t, _ in items:
            f.write(_host_bytes(t))


def _parse_header(buf_len, read):
    """(header dict without metadata, metadata, data start) after checking every entry: known
    dtype, shape and offsets consistent, entries covering the data exactly once."""
    if buf_len < 8:
        raise SafetensorError("Error while deserializing header: HeaderTooSmall")
    (n,) = struct.unpack("<Q", read(0, 8))
    if n > _MAX_HEADER:
        raise SafetensorError(f"Error while deserializing header: HeaderTooLarge ({n} bytes)")
    if 8 + n > buf_len:
        raise SafetensorError(f"Error while deserializing header: InvalidHeaderLength (the "
                              f"header claims {n} bytes, the file holds {buf_len - 8})")
    try:
        header = json.loads(bytes(read(8, n)).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise SafetensorError(f"Error while deserializing header: InvalidHeaderDeserialization"
                              f" ({e})") from None
    if not isinstance(header, dict):
        raise SafetensorError("Error while deserializing header: the header is not a JSON "
                              "object")
    metadata = header.pop("__metadata__", None)
    if metadata is not None and (not isinstance(metadata, dict) or not all(
            isinstance(v, str) for v in metadata.values())):
        raise SafetensorError("Error while deserializing header: __metadata__ must map str "
                              "to str")
    data_len = buf_len - 8 - n
    spans = []
    for name, info in header.items():
        if not isinstance(info, dict):
            raise SafetensorError(f"Error while deserializing header: entry {name!r} is not "
                                  f"an object")
        code, shape, offs = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if code not in _CODES:
            what = "not supported by tensorlib" if code in _KNOWN_UNSUPPORTED else "unknown"
            raise SafetensorError(f"tensor {name!r}: dtype {code!r} is {what}")
        if (not isinstance(shape, list) or not all(type(s) is int and s >= 0 for s in shape)
                or not isinstance(offs, list) or len(offs) != 2
                or not all(type(o) is int and o >= 0 for o in offs)):
            raise SafetensorError(f"Error while deserializing header: entry {name!r} has a "
                                  f"malformed shape or data_offsets")
        itemsize = getattr(_tl(), _CODES[code]).itemsize
        numel = 1
        for s in shape:
            numel *= s
        begin, end = offs
        if end < begin or end - begin != numel * itemsize:
            raise SafetensorError(f"Error while deserializing header: TensorInvalidInfo "
                                  f"(tensor {name!r} of shape {shape} and dtype {code} needs "
                                  f"{numel * itemsize} bytes, its data_offsets span "
                                  f"{end - begin})")
        if end > data_len:
            raise SafetensorError(f"Error while deserializing header: tensor {name!r} ends at "
                                  f"byte {end} but the file holds {data_len} bytes of data "
                                  f"(truncated?)")
        spans.append((begin, end, name))
    spans.sort()
    pos = 0
    for begin, end, name in spans:
        if begin != pos:
            raise SafetensorError(f"Error while deserializing header: InvalidOffset (tensor "
                                  f"{name!r} starts at {begin}, expected {pos}: entries must "
                                  f"cover the data without gaps or overlap)")
        pos = end
    if pos != data_len:
        raise SafetensorError(f"Error while deserializing header: MetadataIncompleteBuffer "
                              f"({data_len - pos} bytes of data belong to no tensor)")
    return header, metadata, 8 + n


def _tensor_from(buf, start, info, copy):
    """A tensor over ``buf[start + begin: start + end]``; copied into tensorlib's memory when
    ``copy`` (or when the bytes are not aligned to the element size)."""
    tl = _tl()
    dt = getattr(tl, _CODES[info["dtype"]])
    begin, end = info["data_offsets"]
    raw = buf[start + begin:start + end]
    if sys.byteorder == "big" and dt.itemsize > 1:
        copy = True
    if copy or (start + begin) % dt.itemsize:
        out = tl.empty(end - begin, dtype=tl.uint8)
        if end > begin:
            arr = out.numpy()
            arr[:] = np.frombuffer(raw, dtype=np.uint8)
            if sys.byteorder == "big" and dt.itemsize > 1:
                arr.view(f"u{dt.itemsize}").byteswap(inplace=True)
        base = out
    else:
        base = from_numpy(raw if isinstance(raw, np.ndarray) else
                          np.frombuffer(raw, dtype=np.uint8))
    typed = base.view(dt) if dt.itemsize > 1 else (base if dt is tl.uint8 else base.view(dt))
    return typed.view(info["shape"]) if info["shape"] else typed.view(())


def load(data):
    """The tensors of a safetensors file given as bytes (copied into tensorlib's memory).

    >>> tensorlib.safetensors.load(tensorlib.safetensors.save({"x": tensorlib.ones(1)}))
    {'x': tensor([1.])}
    """
    data = memoryview(data).cast("B")
    header, _, start = _parse_header(len(data), lambda a, n: data[a:a + n])
    return {name: _tensor_from(data, start, header[name], True) for name in header}


def _check_framework(framework):
    fw = str(framework).lower()
    if fw in ("pt", "torch", "pytorch", "tl", "tensorlib"):
        return "tl"
    if fw in ("np", "numpy"):
        return "np"
    raise ValueError(f"framework {framework!r} is not supported (use 'pt' or 'np')")


class _Slice:
    """A lazily read tensor of a safe_open file: ``get_shape()``, ``get_dtype()`` and
    indexing (``f.get_slice("w")[:, :2]``) which reads only through the mapping."""

    def __init__(self, owner, name):
        self._owner, self._name = owner, name

    def get_shape(self):
        return list(self._owner._header[self._name]["shape"])

    def get_dtype(self):
        return self._owner._header[self._name]["dtype"]

    def __getitem__(self, index):
        return self._owner.get_tensor(self._name)[index].clone()


class safe_open:
    """Open a safetensors file for reading tensors one at a time (a context manager): the
    file is mapped once, ``get_tensor(name)`` returns a tensor over the mapping (no copy).

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "m.safetensors")
    >>> tensorlib.safetensors.save_file({"a": tensorlib.ones(2), "b": tensorlib.zeros(1)}, p,
    ...                                 metadata={"format": "pt"})
    >>> with tensorlib.safetensors.safe_open(p, framework="pt") as f:
    ...     sorted(f.keys()), f.metadata(), f.get_tensor("a").tolist()
    (['a', 'b'], {'format': 'pt'}, [1.0, 1.0])
    """

    def __init__(self, filename, framework="pt", device="cpu"):
        self._fw = _check_framework(framework)
        self._device = str(device)
        self._filename = os.fspath(filename)
        size = os.path.getsize(self._filename)
        if size == 0:
            raise SafetensorError("Error while deserializing header: HeaderTooSmall")
        self._mm = np.memmap(self._filename, dtype=np.uint8, mode="c")
        mm = self._mm
        self._header, self._metadata, self._start = _parse_header(
            len(mm), lambda a, n: mm[a:a + n].tobytes())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def keys(self):
        """The tensors' names, in the order of their data in the file."""
        return sorted(self._header, key=lambda n: self._header[n]["data_offsets"][0])

    def offset_keys(self):
        return self.keys()

    def metadata(self):
        """The header's ``__metadata__`` (a dict of str -> str, or None)."""
        return None if self._metadata is None else dict(self._metadata)

    def get_tensor(self, name):
        """The tensor ``name``, over the file's mapping (copy-on-write: writing to it never
        changes the file)."""
        if name not in self._header:
            raise SafetensorError(f"File does not contain tensor {name}")
        t = _tensor_from(self._mm, self._start, self._header[name], False)
        if self._fw == "np":
            if t.dtype is _tl().bfloat16:
                raise TypeError("NumPy has no bfloat16: load with framework='pt'")
            return t.numpy()
        if self._device != "cpu":
            t = t.to(self._device)
        return t

    def get_slice(self, name):
        """A lazy view of the tensor ``name`` (shape and dtype without reading data)."""
        if name not in self._header:
            raise SafetensorError(f"File does not contain tensor {name}")
        return _Slice(self, name)


def load_file(filename, device="cpu"):
    """The tensors of a safetensors file (a dict of name -> tensor), mapped from the file
    (copy-on-write), not read: no copy, and borrowed memory the allocator does not count.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "m.safetensors")
    >>> tensorlib.safetensors.save_file({"x": tensorlib.arange(4.)}, p)
    >>> t = tensorlib.safetensors.load_file(p)["x"]
    >>> t.tolist(), t.untyped_storage().is_borrowed
    ([0.0, 1.0, 2.0, 3.0], True)
    """
    with safe_open(filename, framework="pt", device=device) as f:
        return {name: f.get_tensor(name) for name in f.keys()}
