"""Hook handles, PyTorch's ``torch.utils.hooks``.

>>> hooks = {}
>>> h = RemovableHandle(hooks); hooks[h.id] = print
>>> h.remove(); hooks
{}
"""
import weakref

__all__ = ["RemovableHandle"]


def _ref(d):
    """A weak reference to ``d`` when its type allows one (OrderedDict does, dict does not:
    a plain dict is then held strongly)."""
    try:
        return weakref.ref(d)
    except TypeError:
        return lambda: d


class RemovableHandle:
    """The handle a ``register_*_hook`` call returns: ``remove()`` takes the hook out of the
    dict it was stored in (and out of ``extra_dict``, a dict or a list of dicts keyed by the
    same id). Usable as a context manager. The handle holds its dicts weakly, so a handle
    kept after its module is gone does not keep the module's hooks alive (when they are
    in an OrderedDict, as a Module's are).

    >>> m = tensorlib.nn.Identity()
    >>> with m.register_forward_hook(lambda mod, args, out: print("ran")):
    ...     _ = m(tensorlib.zeros(1))
    ran
    >>> len(m._forward_hooks)
    0
    """

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = _ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if extra_dict is None:
            extra_dict = ()
        elif isinstance(extra_dict, dict):
            extra_dict = (extra_dict,)
        self.extra_dict_ref = tuple(_ref(d) for d in extra_dict)

    def remove(self):
        """Unregister the hook (removing twice is harmless)."""
        for ref in (self.hooks_dict_ref,) + self.extra_dict_ref:
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __getstate__(self):
        refs = (self.hooks_dict_ref,) + self.extra_dict_ref
        return (tuple(r() for r in refs), self.id)

    def __setstate__(self, state):
        dicts, self.id = state
        import collections
        live = [collections.OrderedDict() if d is None else d for d in dicts]
        self.hooks_dict_ref = _ref(live[0])
        self.extra_dict_ref = tuple(_ref(d) for d in live[1:])
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.remove()
