"""Variable-length sequences for the recurrent layers, PyTorch's ``torch.nn.utils.rnn``.

A ``PackedSequence`` holds a batch of sequences of different lengths time step by time
step: ``data`` is every sequence's step 0, then every step 1 of the sequences that are that
long, and so on (the sequences sorted by decreasing length); ``batch_sizes[t]`` is how many
sequences have a step ``t``. Packing and padding are index gathers, so gradients flow
through both.

>>> import tensorlib
>>> p = pack_sequence([tensorlib.tensor([1.0, 2.0, 3.0]), tensorlib.tensor([4.0])])
>>> p.data.tolist(), p.batch_sizes.tolist()
([1.0, 4.0, 2.0, 3.0], [2, 1, 1])
>>> padded, lengths = pad_packed_sequence(p, batch_first=True)
>>> padded.tolist(), lengths.tolist()
([[1.0, 2.0, 3.0], [4.0, 0.0, 0.0]], [3, 1])
"""
from collections import namedtuple
from collections.abc import Iterable

import numpy as _np

import tensorlib as _t

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]

_PackedSequenceBase = namedtuple("PackedSequence_",
                                 ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_PackedSequenceBase):
    """A packed batch of variable-length sequences (see the module's docstring): a named
    tuple ``(data, batch_sizes, sorted_indices, unsorted_indices)``. ``sorted_indices[i]`` is
    the original batch index of the ``i``-th longest sequence, ``unsorted_indices`` its
    inverse (both ``None`` when the batch was already sorted). Build one with
    :func:`pack_padded_sequence` or :func:`pack_sequence` rather than by hand.

    >>> p = pack_sequence([tensorlib.ones(1), tensorlib.ones(2)], enforce_sorted=False)
    >>> p.sorted_indices.tolist(), p.unsorted_indices.tolist()
    ([1, 0], [1, 0])
    >>> p.double().data.dtype
    tensorlib.float64
    """

    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should "
                    "never be created manually. They should be instantiated by functions like "
                    "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        else:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def __repr__(self):
        return (f"PackedSequence(data={self.data!r}, batch_sizes={self.batch_sizes!r}, "
                f"sorted_indices={self.sorted_indices!r}, "
                f"unsorted_indices={self.unsorted_indices!r})")

    def to(self, *args, **kwargs):
        """``data.to(*args, **kwargs)``; the indices follow ``data`` to its device and
        ``batch_sizes`` stays on the CPU. Returns ``self`` when ``data`` is unchanged.

        >>> p = pack_sequence([tensorlib.ones(2)])
        >>> p.to("cpu") is p
        True
        """
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        idx = [None if i is None else i.to(data.device)
               for i in (self.sorted_indices, self.unsorted_indices)]
        return type(self)(data, self.batch_sizes, *idx)

    def cpu(self):
        """The sequence with its data on the CPU.

        >>> pack_sequence([tensorlib.ones(2)]).cpu().data.device.type
        'cpu'
        """
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        """The sequence with its data on a CUDA device (the current one by default).

        >>> callable(pack_sequence([tensorlib.ones(2)]).cuda)
        True
        """
        return self.to("cuda" if device is None else device, non_blocking=non_blocking)

    def double(self):
        """``data`` as float64.

        >>> pack_sequence([tensorlib.ones(2)]).double().data.dtype
        tensorlib.float64
        """
        return self.to(dtype=_t.float64)

    def float(self):
        """``data`` as float32.

        >>> pack_sequence([tensorlib.ones(2).double()]).float().data.dtype
        tensorlib.float32
        """
        return self.to(dtype=_t.float32)

    def half(self):
        """``data`` as float16.

        >>> pack_sequence([tensorlib.ones(2)]).half().data.dtype
        tensorlib.float16
        """
        return self.to(dtype=_t.float16)

    def long(self):
        """``data`` as int64.

        >>> pack_sequence([tensorlib.ones(2)]).long().data.dtype
        tensorlib.int64
        """
        return self.to(dtype=_t.int64)

    def int(self):
        """``data`` as int32.

        >>> pack_sequence([tensorlib.ones(2)]).int().data.dtype
        tensorlib.int32
        """
        return self.to(dtype=_t.int32)

    def short(self):
        """``data`` as int16.

        >>> pack_sequence([tensorlib.ones(2)]).short().data.dtype
        tensorlib.int16
        """
        return self.to(dtype=_t.int16)

    def char(self):
        """``data`` as int8.

        >>> pack_sequence([tensorlib.ones(2)]).char().data.dtype
        tensorlib.int8
        """
        return self.to(dtype=_t.int8)

    def byte(self):
        """``data`` as uint8.

        >>> pack_sequence([tensorlib.ones(2)]).byte().data.dtype
        tensorlib.uint8
        """
        return self.to(dtype=_t.uint8)

    @property
    def is_cuda(self):
        """Whether ``data`` is on a CUDA device.

        >>> pack_sequence([tensorlib.ones(2)]).is_cuda
        False
        """
        return self.data.is_cuda


def invert_permutation(permutation):
    """The inverse of a permutation given as an index tensor (``None`` stays ``None``).

    >>> invert_permutation(tensorlib.tensor([2, 0, 1])).tolist()
    [1, 2, 0]
    """
    if permutation is None:
        return None
    out = _t.empty_like(permutation)
    out.scatter_(0, permutation, _t.arange(permutation.numel(), device=permutation.device))
    return out


def _as_lengths(lengths):
    if isinstance(lengths, _t.Tensor):
        if lengths.dim() != 1 or lengths.device.type != "cpu":
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.dim()}D {lengths.device.type} "
                               f"{_TYPE_NAMES.get(lengths.dtype, lengths.dtype)} tensor")
        return lengths.to(_t.int64)
    return _t.as_tensor(lengths, dtype=_t.int64, device="cpu")


_TYPE_NAMES = {_t.int64: "Long", _t.int32: "Int", _t.int16: "Short", _t.int8: "Char",
               _t.uint8: "Byte", _t.float32: "Float", _t.float64: "Double",
               _t.float16: "Half", _t.bool: "Bool"}


def _step_mask(lengths, steps):
    """(steps, batch) boolean host array: does sequence b have a step t."""
    return _np.arange(steps)[:, None] < _np.asarray(lengths)[None, :]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch ``input`` of shape (T, B, *) (or (B, T, *) with
    ``batch_first``) whose sequence ``b`` is ``lengths[b]`` long. With
    ``enforce_sorted=True`` the lengths must be decreasing; otherwise the batch is sorted
    here and the permutation kept in the result, so that unpacking restores the order.

    >>> x = tensorlib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]])
    >>> p = pack_padded_sequence(x, [3, 2], batch_first=True)
    >>> p.data.tolist(), p.batch_sizes.tolist()
    ([1.0, 4.0, 2.0, 5.0, 3.0], [2, 2, 1])
    """
    lengths = _as_lengths(lengths)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = _t.sort(lengths, descending=True, stable=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = _pack(input, lengths.tolist(), batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _pack(input, lengths, batch_first):
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if input.dim() < 2:
        raise RuntimeError(f"pack_padded_sequence: expected a padded input of at least 2 "
                           f"dimensions, but got {input.dim()}")
    steps, batch = (input.size(1), input.size(0)) if batch_first else input.shape[:2]
    if len(lengths) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={batch})")
    if lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(lengths, lengths[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
            "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
            "pack_sequence to sidestep this requirement if you do not need ONNX "
            "exportability.")
    if lengths[0] > steps:
        raise RuntimeError(f"pack_padded_sequence: a length ({lengths[0]}) is larger than "
                           f"the padded input's time dimension ({steps})")
    mask = _step_mask(lengths, lengths[0])
    tt, bb = _np.nonzero(mask)                    # time-major, batch ascending within a step
    rows = bb * steps + tt if batch_first else tt * batch + bb
    flat = input.reshape((steps * batch,) + tuple(input.shape[2:]))
    data = flat.index_select(0, _t.tensor(rows.astype(_np.int64), device=input.device))
    batch_sizes = _t.tensor(mask.sum(axis=1).astype(_np.int64), device="cpu")
    return data, batch_sizes


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo :func:`pack_padded_sequence`: returns ``(padded, lengths)``, ``padded`` of shape
    (T, B, *) (or (B, T, *) with ``batch_first``) with ``padding_value`` after each
    sequence's end, ``T`` the longest length or ``total_length``, in the batch's original
    order; ``lengths`` is an int64 CPU tensor.

    >>> p = pack_sequence([tensorlib.tensor([1.0, 2.0]), tensorlib.tensor([3.0])])
    >>> pad_packed_sequence(p, padding_value=-1.0, total_length=3)[0].tolist()
    [[1.0, 3.0], [2.0, -1.0], [-1.0, -1.0]]
    """
    data, batch_sizes = sequence.data, sequence.batch_sizes
    max_len = batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{max_len}")
        max_len = total_length
    sizes = _np.asarray(batch_sizes.tolist(), dtype=_np.int64)
    batch = int(sizes[0]) if sizes.size else 0
    lengths = (sizes[None, :] > _np.arange(batch)[:, None]).sum(axis=1)
    mask = _step_mask(lengths, max_len)
    n = data.size(0)
    # every padded slot reads row n, one row of padding appended to the data
    index = _np.full(mask.shape, n, dtype=_np.int64)
    index[mask] = _np.arange(n)
    if batch_first:
        index = index.T
    rest = tuple(data.shape[1:])
    pad_row = _t.full((1,) + rest, padding_value, dtype=data.dtype, device=data.device)
    ext = _t.cat([data, pad_row])
    padded = ext.index_select(0, _t.tensor(index.ravel(), device=data.device))
    padded = padded.view(index.shape + rest)
    lengths = _t.tensor(lengths.astype(_np.int64), device="cpu")
    if sequence.unsorted_indices is not None:
        unsorted = sequence.unsorted_indices
        padded = padded.index_select(0 if batch_first else 1, unsorted)
        lengths = lengths[unsorted.cpu()]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors of shapes (L_i, *) into one (max L, B, *) tensor (or (B, max L, *)
    with ``batch_first``), filling with ``padding_value`` after (``padding_side="right"``)
    or before (``"left"``) each sequence. The result has the first sequence's dtype.

    >>> pad_sequence([tensorlib.ones(2), tensorlib.ones(1)], batch_first=True).tolist()
    [[1.0, 1.0], [1.0, 0.0]]
    >>> pad_sequence([tensorlib.ones(2), tensorlib.ones(1)], True, 0, "left").tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    for s in sequences:
        if s.dim() == 0:
            raise RuntimeError("pad_sequence: expected every sequence to have at least one "
                               "dimension, but got a 0-d tensor")
    first = sequences[0]
    rest = tuple(first.shape[1:])
    longest = max(s.size(0) for s in sequences)
    rows = []
    for s in sequences:
        n = s.size(0)
        s = _t.broadcast_to(s.to(first.dtype), (n,) + rest)
        if n < longest:
            pad = _t.full((longest - n,) + rest, padding_value, dtype=first.dtype,
                          device=first.device)
            s = _t.cat([s, pad] if padding_side == "right" else [pad, s])
        rows.append(s)
    return _t.stack(rows, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into a list of its sequences (copies), the inverse of
    :func:`pad_sequence`. Unlike PyTorch's, ``padded_sequences`` is not transposed in place.

    >>> x = tensorlib.tensor([[1.0, 2.0], [3.0, 0.0]])
    >>> [s.tolist() for s in unpad_sequence(x, tensorlib.tensor([2, 1]), batch_first=True)]
    [[1.0, 2.0], [3.0]]
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lengths = lengths.tolist() if isinstance(lengths, _t.Tensor) else list(lengths)
    if len(lengths) != padded_sequences.size(0):
        raise ValueError(f"unpad_sequence: {len(lengths)} lengths for a batch of "
                         f"{padded_sequences.size(0)} sequences")
    device = padded_sequences.device
    return [seq.index_select(0, _t.arange(int(n), device=device))
            for seq, n in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of tensors of shapes (L_i, *): ``pad_sequence`` then
    ``pack_padded_sequence``.

    >>> pack_sequence([tensorlib.tensor([1, 2]), tensorlib.tensor([3])]).data.tolist()
    [1, 3, 2]
    """
    lengths = _t.as_tensor([v.size(0) for v in sequences], dtype=_t.int64, device="cpu")
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences a :class:`PackedSequence` holds, in the original order.

    >>> p = pack_sequence([tensorlib.tensor([1]), tensorlib.tensor([2, 3])], False)
    >>> [s.tolist() for s in unpack_sequence(p)]
    [[1], [2, 3]]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
