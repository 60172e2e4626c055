"""ONNX export: ``tensorlib.onnx.export(model, args, f)``.

The forward is traced through the op layer: every op it runs is reported to a tracer (see
``_trace.py``) and translated into ONNX nodes (``_symbolic.py``); parameters and buffers become
initializers, Python constants become attributes or constant initializers, and values that
depend on no input are folded. An op with no ONNX translation raises
``UnsupportedOperatorError`` naming it. The ``onnx`` package is needed only at export time.

>>> import tensorlib, tensorlib.onnx
>>> tensorlib.onnx.UnsupportedOperatorError.__mro__[1].__name__
'OnnxExporterError'
"""
import threading as _threading

__all__ = ["export", "is_in_onnx_export", "OnnxExporterError", "UnsupportedOperatorError",
           "DEFAULT_OPSET", "MIN_OPSET", "MAX_OPSET"]

_state = _threading.local()

DEFAULT_OPSET = 17
MIN_OPSET = 13
MAX_OPSET = 21


class OnnxExporterError(RuntimeError):
    """The model cannot be exported as asked (a bad argument, a trace that cannot be
    expressed in ONNX, a missing ``onnx`` package).

    >>> issubclass(OnnxExporterError, RuntimeError)
    True
    """


class UnsupportedOperatorError(OnnxExporterError, NotImplementedError):
    """An op the traced forward ran has no ONNX translation (its name is ``op``).

    >>> UnsupportedOperatorError("erfinv").op
    'erfinv'
    """

    def __init__(self, op, detail=None):
        self.op = op
        msg = (f"tensorlib.onnx: exporting the operator '{op}' to ONNX is not supported"
               + (f" ({detail})" if detail else ""))
        super().__init__(msg)


def is_in_onnx_export():
    """Whether an export is tracing a forward on this thread (a forward may take another path
    while exported).

    >>> tensorlib.onnx.is_in_onnx_export()
    False
    """
    return getattr(_state, "exporting", 0) > 0


def export(model, args, f, input_names=None, output_names=None, dynamic_axes=None,
           opset_version=None, verbose=False):
    """Trace ``model(*args)`` and write it as an ONNX model to ``f`` (a path or a binary file
    object). ``args`` is a tensor or a tuple of positional arguments (tensors become graph
    inputs; other values are fixed in the graph). ``input_names``/``output_names`` name the
    graph's inputs and (flattened) outputs; ``dynamic_axes`` maps a name to the axes whose
    size may change at run time (``{"x": {0: "batch"}}`` or ``{"x": [0]}``);
    ``opset_version`` is the ONNX opset (13 to 21, default 17). The model runs in eval mode
    while traced and gets its mode back. Returns the ``onnx.ModelProto``.

    >>> import io, tensorlib, tensorlib.onnx
    >>> buf = io.BytesIO()
    >>> proto = tensorlib.onnx.export(tensorlib.nn.Linear(3, 2), tensorlib.ones(1, 3), buf,
    ...                               input_names=["x"], dynamic_axes={"x": {0: "batch"}})
    >>> [n.op_type for n in proto.graph.node], proto.graph.input[0].name
    (['Gemm', 'Identity'], 'x')
    """
    from tensorlib.onnx._export import export as _export
    return _export(model, args, f, input_names=input_names, output_names=output_names,
                   dynamic_axes=dynamic_axes, opset_version=opset_version, verbose=verbose)
