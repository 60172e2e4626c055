"""Hooks on saved tensors: ``saved_tensors_hooks(pack, unpack)`` and ``save_on_cpu()``.

>>> import tensorlib
>>> x = tensorlib.ones(3, requires_grad=True)
>>> with tensorlib.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
...     y = (x * x).sum()
>>> y.backward(); x.grad.tolist()
[2.0, 2.0, 2.0]
"""
import threading

from tensorlib._core import tensor as _C

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "Node"]

Node = _C.Node


class _HooksState(threading.local):
    def __init__(self):
        self.stack = []
        self.disabled = None


_state = _HooksState()
_C._register_saved_hooks_state(_state)


class saved_tensors_hooks:
    """Pack every tensor an op saves for backward with ``pack_hook`` and restore it with
    ``unpack_hook`` when backward needs it (e.g. to offload or compress activations).

    >>> with tensorlib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
    ...     pass
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _state.disabled is not None:
            raise RuntimeError(_state.disabled)
        _state.stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _state.stack.pop()


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors in CPU memory and move them back to their device for backward.
    On the CPU this costs nothing; with GPU tensors it trades transfer time for GPU memory.

    >>> with tensorlib.autograd.graph.save_on_cpu():
    ...     y = (tensorlib.ones(2, requires_grad=True) * 2).sum()
    """

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(t):
            if t.device.type == "cpu":
                return (t.device, t)
            return (t.device, t.cpu())

        def unpack(packed):
            device, t = packed
            return t if t.device == device else t.to(device)

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Raise ``error_message`` if saved_tensors_hooks are used inside this block."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self._prev = _state.disabled
        _state.disabled = self.error_message

    def __exit__(self, *exc):
        _state.disabled = self._prev
