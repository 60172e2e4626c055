"""``default_collate`` and ``default_convert``, PyTorch's ``torch.utils.data._utils.collate``:
how a list of samples becomes a batch.

In a worker process a batch of tensors is stacked straight into a shared-memory tensor (no
copy on the way to the main process); batched tensors carry the memory role "input".
"""
import collections.abc
import copy
import re

import numpy as np

import tensorlib

__all__ = ["default_collate", "default_convert", "collate", "default_collate_fn_map",
           "collate_tensor_fn"]

_np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, "
    "dicts or lists; found {}")


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def default_convert(data):
    """Convert NumPy arrays and scalars to tensors, inside dicts, lists, tuples and
    namedtuples (tuples become lists); anything else is returned as it is. The ``collate_fn``
    of a DataLoader without automatic batching (``batch_size=None``).

    >>> default_convert({"x": numpy.array([1, 2]), "name": "a"})
    {'x': tensor([1, 2]), 'name': 'a'}
    >>> default_convert((numpy.float64(0.5), 3))
    [tensor(0.5000, dtype=tensorlib.float64), 3]
    """
    elem_type = type(data)
    if isinstance(data, tensorlib.Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if (elem_type.__name__ == "ndarray"
                and _np_str_obj_array_pattern.search(data.dtype.str) is not None):
            return data
        return tensorlib.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({k: default_convert(data[k]) for k in data})
                return clone
            return elem_type({k: default_convert(data[k]) for k in data})
        except TypeError:
            return {k: default_convert(data[k]) for k in data}
    if _is_namedtuple(data):
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map=None):
    """Collate ``batch`` (a sequence of samples of one structure) with the functions of
    ``collate_fn_map`` (type or tuple of types -> ``fn(batch, *, collate_fn_map)``) for the
    leaves, recursing through mappings, namedtuples and sequences.

    >>> collate([(1, "a"), (2, "b")], collate_fn_map=default_collate_fn_map)
    [tensor([1, 2]), ('a', 'b')]
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        def fields():
            return {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map)
                    for k in elem}
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update(fields())
                return clone
            return elem_type(fields())
        except TypeError:
            return fields()
    if _is_namedtuple(elem):
        return elem_type(*(collate(s, collate_fn_map=collate_fn_map) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        size = len(next(it))
        if not all(len(e) == size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [collate(s, collate_fn_map=collate_fn_map) for s in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, s in enumerate(transposed):
                    clone[i] = collate(s, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(s, collate_fn_map=collate_fn_map) for s in transposed])
        except TypeError:
            return [collate(s, collate_fn_map=collate_fn_map) for s in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    """Stack tensors along a new first dimension (in a worker: into shared memory)."""
    from tensorlib.utils.data._worker import get_worker_info
    elem = batch[0]
    out = None
    if (get_worker_info() is not None and elem.device.type == "cpu"
            and all(t.shape == elem.shape and t.dtype == elem.dtype for t in batch)):
        from tensorlib.utils.data._shm import empty_shared
        out = empty_shared((len(batch), *elem.shape), elem.dtype)
    result = tensorlib.stack(batch, 0, out=out) if out is not None else tensorlib.stack(batch, 0)
    s = result.untyped_storage()
    if not s.is_borrowed and s.role == 0:
        s.role = "input"
    return result


def _collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if _np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([tensorlib.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def _collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return tensorlib.as_tensor(np.array(batch))


def _collate_float_fn(batch, *, collate_fn_map=None):
    return tensorlib.tensor(batch, dtype=tensorlib.float64)


def _collate_int_fn(batch, *, collate_fn_map=None):
    return tensorlib.tensor(batch)


def _collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {
    tensorlib.Tensor: collate_tensor_fn,
    np.ndarray: _collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): _collate_numpy_scalar_fn,
    float: _collate_float_fn,
    int: _collate_int_fn,
    str: _collate_str_fn,
    bytes: _collate_str_fn,
}


def default_collate(batch):
    """Turn a list of samples into a batch, as PyTorch's ``default_collate``: tensors and
    NumPy arrays are stacked on a new first dimension, NumPy scalars and Python numbers become
    tensors (floats as float64), strings and bytes stay a list; dicts, namedtuples and lists
    are collated field by field (tuples become lists), recursively.

    >>> default_collate([{"x": tensorlib.tensor([1., 2.]), "y": 0},
    ...                  {"x": tensorlib.tensor([3., 4.]), "y": 1}])
    {'x': tensor([[1., 2.],
            [3., 4.]]), 'y': tensor([0, 1])}
    >>> default_collate([(0.5, "a"), (1.5, "b")])
    [tensor([0.5000, 1.5000], dtype=tensorlib.float64), ('a', 'b')]
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
