"""Text rendering of tensors, matching PyTorch's ``repr(tensor)`` output.

The tensor type calls :func:`tensor_repr` with its values as a NumPy array, so
this module depends on NumPy only.  The layout rules follow PyTorch 2.x
(``torch/_tensor_str.py``) byte for byte: one formatter decides a common
number style and column width for the whole tensor, nested dimensions add one
space of indentation each, rows wrap at ``linewidth``, large tensors are
summarized with ``...``, and ``dtype=``/``grad_fn=``/... suffixes follow the
closing bracket.

Print options are module-level state, changed with :func:`set_printoptions`.
"""

import contextlib
import math

import numpy as np

__all__ = ["tensor_repr", "set_printoptions", "get_printoptions", "printoptions"]

FLOAT_DTYPES = frozenset({"float32", "float64", "float16", "bfloat16"})
INT_DTYPES = frozenset({"int64", "int32", "int16", "int8", "uint8"})
DTYPES = FLOAT_DTYPES | INT_DTYPES | {"bool"}

# Option sets selected by ``set_printoptions(profile=...)``; same values as PyTorch.
_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}

# The live options.  Key order is the order get_printoptions() reports them in.
_OPTIONS = dict(_PROFILES["default"], sci_mode=None)


class _Options:
    """Read-only snapshot of the print options used for one repr call."""

    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self, options):
        for name in self.__slots__:
            setattr(self, name, options[name])


# --------------------------------------------------------------------------
# Public option API
# --------------------------------------------------------------------------

def set_printoptions(precision=None, threshold=None, edgeitems=None,
                     linewidth=None, profile=None, sci_mode=None):
    """Set the options used when printing tensors.

    Args:
        precision: digits after the decimal point for floats (default 4).
        threshold: element count above which a tensor is summarized with
            ``...`` (default 1000).
        edgeitems: items kept at each end of a summarized dimension (default 3).
        linewidth: characters per line before rows wrap (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``; sets the four options
            above first, explicit arguments then override it.
        sci_mode: ``True``/``False`` forces scientific notation on/off; ``None``
            lets each tensor choose.  As in PyTorch, every call sets this option,
            so leaving it out resets it to ``None``.

    Example::

        >>> import numpy as np
        >>> set_printoptions(precision=2)
        >>> tensor_repr(np.array([1.12345], dtype=np.float32), "float32")
        'tensor([1.12])'
        >>> set_printoptions(threshold=5)
        >>> tensor_repr(np.arange(10), "int64")
        'tensor([0, 1, 2,  ..., 7, 8, 9])'
        >>> set_printoptions(profile="default")
    """
    # An unknown profile name is ignored, as PyTorch does.
    if profile in _PROFILES:
        _OPTIONS.update(_PROFILES[profile])
    overrides = {"precision": precision, "threshold": threshold,
                 "edgeitems": edgeitems, "linewidth": linewidth}
    for name, value in overrides.items():
        if value is not None:
            _OPTIONS[name] = value
    _OPTIONS["sci_mode"] = sci_mode


def get_printoptions():
    """Return the current print options as a dict.

    The dict can be passed back as ``set_printoptions(**options)``.

    Example::

        >>> get_printoptions()
        {'precision': 4, 'threshold': 1000, 'edgeitems': 3, 'linewidth': 80, 'sci_mode': None}
    """
    return dict(_OPTIONS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Context manager that sets print options and restores the old ones on exit.

    Takes the same keyword arguments as :func:`set_printoptions`.

    Example::

        >>> import numpy as np
        >>> with printoptions(precision=1):
        ...     tensor_repr(np.array([0.25, 2.0]), "float32")
        'tensor([0.2, 2.0])'
    """
    saved = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**saved)


# --------------------------------------------------------------------------
# Number formatting
# --------------------------------------------------------------------------

class _Formatter:
    """Chooses one style and one column width for every element of a tensor.

    Built from the (summarized) data that will actually be shown, so that all
    columns line up.  Float tensors use one of three styles:

    * int mode -- every finite nonzero value is a whole number: ``1.``, ``-3.``
    * fixed    -- ``precision`` digits after the point: ``0.1000``
    * sci mode -- ``1.0000e+10``; chosen automatically when the magnitudes span
      more than 1000x, exceed 1e8 or go below 1e-4 (unless forced by options).
    """

    def __init__(self, data, is_float, options):
        self.is_float = is_float
        self.precision = options.precision
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if is_float:
            self._scan_floats(data, options.sci_mode)
        else:
            for value in np.unique(data).tolist():
                self.max_width = max(self.max_width, len(str(value)))

    def _scan_floats(self, data, forced_sci_mode):
        # Zeros, nan and inf do not influence the style, nor (quirk kept from
        # PyTorch) the column width: "nan" can be wider than the other columns.
        shown = data[np.isfinite(data) & (data != 0)]
        if shown.size == 0:
            return
        # Formatting each distinct value once gives the same widths, faster.
        values = np.unique(shown).tolist()
        magnitudes = [abs(v) for v in values]
        smallest, largest = min(magnitudes), max(magnitudes)

        self.int_mode = all(v == math.ceil(v) for v in values)
        if forced_sci_mode is None:
            self.sci_mode = (largest / smallest > 1000.0 or largest > 1.0e8
                             or smallest < 1.0e-4)
        else:
            self.sci_mode = bool(forced_sci_mode)

        if self.sci_mode:
            widths = (len(f"{v:.{self.precision}e}") for v in values)
        elif self.int_mode:
            widths = (len(f"{v:.0f}") + 1 for v in values)  # +1 for the "."
        else:
            widths = (len(f"{v:.{self.precision}f}") for v in values)
        self.max_width = max(self.max_width, max(widths))

    def format(self, value):
        """Format one Python scalar, right-aligned to the common width."""
        if not self.is_float:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{self.precision}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            # The trailing "." marks a float tensor; "nan"/"inf" need no mark.
            if math.isfinite(value):
                text += "."
        else:
            text = f"{value:.{self.precision}f}"
        return text.rjust(self.max_width)


# --------------------------------------------------------------------------
# Layout
# --------------------------------------------------------------------------

def _summarized_data(arr, edgeitems):
    """Keep only the ``edgeitems`` leading/trailing entries of each long axis.

    This is the data a summarized print shows, so the formatter is built from
    it: hidden elements must not widen the columns.
    """
    for axis, size in enumerate(arr.shape):
        if size > 2 * edgeitems:
            kept = np.r_[0:edgeitems, size - edgeitems:size]
            arr = np.take(arr, kept, axis=axis)
    return arr


def _vector_str(arr, indent, summarize, formatter, options):
    """Render a 1-D array, wrapping so lines stay within ``linewidth``."""
    element_length = formatter.max_width + 2  # each item is followed by ", "
    per_line = max(1, (options.linewidth - indent) // element_length)

    edge = options.edgeitems
    size = arr.shape[0]
    if summarize and not edge:
        items = ["..."]
    elif summarize and size > 2 * edge:
        items = ([formatter.format(v) for v in arr[:edge].tolist()]
                 + [" ..."]
                 + [formatter.format(v) for v in arr[size - edge:].tolist()])
    else:
        items = [formatter.format(v) for v in arr.tolist()]

    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    # Continuation lines start under the first element, one past the "[".
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _block_str(arr, indent, summarize, formatter, options):
    """Render an array of any rank; ``indent`` is the column of its ``[``."""
    if arr.ndim == 0:
        return formatter.format(arr.item())
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, formatter, options)

    def sub(i):
        return _block_str(arr[i], indent + 1, summarize, formatter, options)

    edge = options.edgeitems
    size = arr.shape[0]
    if summarize and size > 2 * edge:
        parts = [sub(i) for i in range(edge)] + ["..."] + [sub(i) for i in range(size - edge, size)]
    else:
        parts = [sub(i) for i in range(size)]
    # Sub-blocks of a rank-k array are separated by k-1 newlines (a blank line
    # between matrices of a 3-D tensor, two between 3-D blocks, ...).
    separator = "," + "\n" * (arr.ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(parts) + "]"


def _tensor_str(arr, indent, is_float, options):
    """Render the bracketed contents of a non-empty array."""
    summarize = arr.size > options.threshold
    shown = _summarized_data(arr, options.edgeitems) if summarize else arr
    formatter = _Formatter(shown, is_float, options)
    return _block_str(arr, indent, summarize, formatter, options)


def _add_suffixes(text, suffixes, indent, linewidth):
    """Append ``, suffix`` items, moving one to a new line if it would not fit."""
    pieces = [text]
    # Same measure as PyTorch, including its off-by-two when there is no newline.
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > linewidth:
            pieces.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            pieces.append(", " + suffix)
            last_line_len += len(suffix) + 2
    pieces.append(")")
    return "".join(pieces)


def _value_array(values, dtype_name):
    """Convert ``values`` to an array whose ``tolist()`` gives printable scalars."""
    arr = np.asarray(values)
    if dtype_name in FLOAT_DTYPES:
        # float16/float32 widen to float64 exactly, so formatting sees the true value.
        return arr.astype(np.float64, copy=False)
    if dtype_name == "bool":
        return arr.astype(np.bool_, copy=False)
    if arr.dtype.kind not in "iu":
        # Guard against float-typed storage for an integer dtype: print "1", not "1.0".
        return arr.astype(np.int64)
    return arr


# --------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------

def tensor_repr(values, dtype_name, *, default_dtype_name="float32", requires_grad=False,
                grad_fn_name=None, device="cpu", prefix="tensor(", module="tensorlib"):
    """Return the PyTorch-style ``repr`` of a tensor given as a NumPy array.

    Args:
        values: array with the tensor's values and shape (for ``bfloat16`` a
            float32 array holding the exactly converted values).
        dtype_name: tensor dtype, e.g. ``"float32"``, ``"int64"``, ``"bool"``.
        default_dtype_name: current default float dtype; it, ``int64`` and
            ``bool`` are not shown as a ``dtype=`` suffix (empty tensors always
            show a dtype other than the default float dtype).
        requires_grad: add ``requires_grad=True`` (only when no grad_fn).
        grad_fn_name: add ``grad_fn=<name>``, e.g. ``"MulBackward0"``.
        device: shown as ``device='...'`` unless ``"cpu"``.
        prefix: text before the data; continuation lines are indented by its length.
        module: module name used in the dtype text (``tensorlib.float64``).

    Example::

        >>> import numpy as np
        >>> tensor_repr(np.array([[1.0, 2.5], [3.0, -4.0]]), "float64")
        'tensor([[ 1.0000,  2.5000],\\n        [ 3.0000, -4.0000]], dtype=tensorlib.float64)'
        >>> tensor_repr(np.array([True, False]), "bool")
        'tensor([ True, False])'
    """
    if dtype_name not in DTYPES:
        raise ValueError(f"unsupported dtype name: {dtype_name!r}")
    options = _Options(_OPTIONS)
    arr = _value_array(values, dtype_name)
    indent = len(prefix)
    dtype_suffix = f"dtype={module}.{dtype_name}"

    suffixes = []
    if device != "cpu":
        suffixes.append(f"device='{device}'")
    if arr.size == 0:
        # Only the (0,) shape is implied by "[]"; any other shape is spelled out.
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(arr.shape)}")
        # No element reveals the dtype, so anything but the default float shows.
        if dtype_name != default_dtype_name:
            suffixes.append(dtype_suffix)
        body = "[]"
    else:
        # With edgeitems=0 a summarized tensor prints as "[...]": give its shape.
        if not options.edgeitems:
            suffixes.append(f"size={tuple(arr.shape)}")
        if dtype_name not in (default_dtype_name, "int64", "bool"):
            suffixes.append(dtype_suffix)
        body = _tensor_str(arr, indent, dtype_name in FLOAT_DTYPES, options)

    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")

    return _add_suffixes(prefix + body, suffixes, indent, options.linewidth)


def meta_repr(shape, dtype_name, *, default_dtype_name="float32", requires_grad=False,
              grad_fn_name=None, device="meta", module="tensorlib"):
    """Return PyTorch's ``repr`` of a tensor without data: its size, device and dtype.

    Example::

        >>> meta_repr((2, 3), "int64")
        "tensor(..., device='meta', size=(2, 3), dtype=tensorlib.int64)"
    """
    suffixes = [f"device='{device}'", f"size={tuple(shape)}"]
    if dtype_name != default_dtype_name:
        suffixes.append(f"dtype={module}.{dtype_name}")
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes("tensor(...", suffixes, len("tensor("), _OPTIONS["linewidth"])
