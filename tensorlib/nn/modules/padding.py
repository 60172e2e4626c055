"""Padding layers: Constant/Zero/Reflection/Replication/CircularPad 1d, 2d and 3d
(PyTorch's arguments and reprs).

>>> tensorlib.nn.ZeroPad2d(1)
ZeroPad2d((1, 1, 1, 1))
>>> tensorlib.nn.ReflectionPad1d(1)(tensorlib.tensor([[[1.0, 2.0]]])).tolist()
[[[2.0, 1.0, 2.0, 1.0]]]
"""
from tensorlib.nn import functional as F
from tensorlib.nn.modules.module import Module

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d",
           "ZeroPad2d", "ZeroPad3d"]


def _ntuple(padding, n):
    if isinstance(padding, (tuple, list)):
        return tuple(padding)
    return (padding,) * n


class _PadNd(Module):
    __constants__ = ["padding"]
    _mode = None
    _ndim = None

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 2 * self._ndim)

    def _check(self, input):
        ok = (self._ndim + 1, self._ndim + 2)
        if input.dim() not in ok:
            raise ValueError(f"expected {ok[0]}D or {ok[1]}D input (got {input.dim()}D input)")

    def forward(self, input):
        if self._mode == "circular":
            self._check(input)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]
    _mode = "constant"

    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


def _make(name, base, mode, ndim, doc, zero=False):
    attrs = {"_mode": mode, "_ndim": ndim, "__doc__": doc}
    if zero:
        def __init__(self, padding):
            _ConstantPadNd.__init__(self, padding, 0.0)

        def extra_repr(self):
            return f"{self.padding}"
        attrs.update(__init__=__init__, extra_repr=extra_repr)
    cls = type(name, (base,), attrs)
    cls.__module__ = __name__
    return cls


ConstantPad1d = _make("ConstantPad1d", _ConstantPadNd, "constant", 1, """Pad the last dim
    with ``value``.

    >>> ConstantPad1d(1, 3.5)(tensorlib.zeros(1, 1)).tolist()
    [[3.5, 0.0, 3.5]]
    """)
ConstantPad2d = _make("ConstantPad2d", _ConstantPadNd, "constant", 2, """Pad the last 2 dims
    with ``value``.

    >>> ConstantPad2d((1, 2, 3, 4), 0.0)
    ConstantPad2d(padding=(1, 2, 3, 4), value=0.0)
    """)
ConstantPad3d = _make("ConstantPad3d", _ConstantPadNd, "constant", 3, """Pad the last 3 dims
    with ``value``.

    >>> ConstantPad3d(1, 0.0)(tensorlib.zeros(1, 1, 1)).shape
    tensorlib.Size([3, 3, 3])
    """)
ZeroPad1d = _make("ZeroPad1d", _ConstantPadNd, "constant", 1, """Pad the last dim with 0.

    >>> ZeroPad1d(2)
    ZeroPad1d((2, 2))
    """, zero=True)
ZeroPad2d = _make("ZeroPad2d", _ConstantPadNd, "constant", 2, """Pad the last 2 dims with 0.

    >>> ZeroPad2d((1, 0, 0, 1))(tensorlib.ones(1, 1)).tolist()
    [[0.0, 1.0], [0.0, 0.0]]
    """, zero=True)
ZeroPad3d = _make("ZeroPad3d", _ConstantPadNd, "constant", 3, """Pad the last 3 dims with 0.

    >>> ZeroPad3d(1)
    ZeroPad3d((1, 1, 1, 1, 1, 1))
    """, zero=True)
ReflectionPad1d = _make("ReflectionPad1d", _PadNd, "reflect", 1, """Reflect the last dim.

    >>> ReflectionPad1d((2, 0))(tensorlib.tensor([[1.0, 2.0, 3.0]])).tolist()
    [[3.0, 2.0, 1.0, 2.0, 3.0]]
    """)
ReflectionPad2d = _make("ReflectionPad2d", _PadNd, "reflect", 2, """Reflect the last 2 dims.

    >>> ReflectionPad2d(1)
    ReflectionPad2d((1, 1, 1, 1))
    """)
ReflectionPad3d = _make("ReflectionPad3d", _PadNd, "reflect", 3, """Reflect the last 3 dims.

    >>> ReflectionPad3d(1)(tensorlib.zeros(1, 2, 2, 2)).shape
    tensorlib.Size([1, 4, 4, 4])
    """)
ReplicationPad1d = _make("ReplicationPad1d", _PadNd, "replicate", 1, """Repeat the edge of
    the last dim.

    >>> ReplicationPad1d((0, 2))(tensorlib.tensor([[1.0, 2.0]])).tolist()
    [[1.0, 2.0, 2.0, 2.0]]
    """)
ReplicationPad2d = _make("ReplicationPad2d", _PadNd, "replicate", 2, """Repeat the edges of
    the last 2 dims.

    >>> ReplicationPad2d((1, 1, 2, 2))
    ReplicationPad2d((1, 1, 2, 2))
    """)
ReplicationPad3d = _make("ReplicationPad3d", _PadNd, "replicate", 3, """Repeat the edges of
    the last 3 dims.

    >>> ReplicationPad3d(1)(tensorlib.zeros(1, 1, 1, 1)).shape
    tensorlib.Size([1, 3, 3, 3])
    """)
CircularPad1d = _make("CircularPad1d", _PadNd, "circular", 1, """Wrap the last dim around.

    >>> CircularPad1d(1)(tensorlib.tensor([[1.0, 2.0, 3.0]])).tolist()
    [[3.0, 1.0, 2.0, 3.0, 1.0]]
    """)
CircularPad2d = _make("CircularPad2d", _PadNd, "circular", 2, """Wrap the last 2 dims around.

    >>> CircularPad2d(1)
    CircularPad2d((1, 1, 1, 1))
    """)
CircularPad3d = _make("CircularPad3d", _PadNd, "circular", 3, """Wrap the last 3 dims around.

    >>> CircularPad3d(1)
    CircularPad3d((1, 1, 1, 1, 1, 1))
    """)
