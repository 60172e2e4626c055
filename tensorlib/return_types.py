"""The tuple types of ops that give several tensors, as ``torch.return_types``.

Each is a tuple subclass with named fields that prints, pickles and is built from one
sequence like PyTorch's (a C "structseq" there): every multi-output op uses these.

>>> r = tensorlib.tensor([[1, 5, 3]]).max(1)
>>> r
tensorlib.return_types.max(
values=tensor([5]),
indices=tensor([1]))
>>> values, indices = r
>>> r.indices is indices, r[0] is values, isinstance(r, tuple)
(True, True, True)
"""
from operator import itemgetter as _itemgetter

__all__ = ["kthvalue", "max", "median", "min", "mode", "nanmedian", "sort", "topk"]


def _tuple_type(name, fields):
    """A tuple subclass ``tensorlib.return_types.<name>`` with the given field names.

    Built from one sequence of exactly ``len(fields)`` items, as PyTorch's are:

    >>> T = _tuple_type("pair", ["values", "indices"])
    >>> T((1, 2)).indices, T([1, 2]) == (1, 2)
    (2, True)
    """
    n = len(fields)

    def __new__(cls, sequence, dict=None):
        # ``dict`` is accepted (and ignored) because __reduce__ passes one, as PyTorch's do
        try:
            items = tuple(sequence)
        except TypeError:
            raise TypeError("constructor requires a sequence") from None
        if len(items) != n:
            raise TypeError(f"tensorlib.return_types.{name}() takes a {n}-sequence "
                            f"({len(items)}-sequence given)")
        return tuple.__new__(cls, items)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"tensorlib.return_types.{name}(\n{body})"

    def __reduce__(self):
        return (type(self), (tuple(self), {}))

    namespace = {"__slots__": (), "__new__": __new__, "__repr__": __repr__,
                 "__reduce__": __reduce__, "__module__": __name__, "__qualname__": name,
                 "_fields": tuple(fields), "n_fields": n, "n_sequence_fields": n,
                 "n_unnamed_fields": 0}
    for i, f in enumerate(fields):
        namespace[f] = property(_itemgetter(i), doc=f"Alias for field number {i}")
    return type(name, (tuple,), namespace)


# One per line, alphabetical, so families can add theirs without conflicts.
kthvalue = _tuple_type("kthvalue", ["values", "indices"])
max = _tuple_type("max", ["values", "indices"])
median = _tuple_type("median", ["values", "indices"])
min = _tuple_type("min", ["values", "indices"])
mode = _tuple_type("mode", ["values", "indices"])
nanmedian = _tuple_type("nanmedian", ["values", "indices"])
sort = _tuple_type("sort", ["values", "indices"])
topk = _tuple_type("topk", ["values", "indices"])
