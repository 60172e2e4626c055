"""The argument parser against PyTorch's, on every declared signature.

For every op declared in tensorlib/ops/decl and each of its variants (function, method,
in-place method), each parameter in turn gets wrong arguments generated from its declared
type (a str for a dtype, a float or a bool or an overflowing int for an int, an int for a bool,
a number for a Tensor, ...), the other parameters valid ones; then too many positional
arguments and an unknown keyword. The same call goes to the PyTorch function of the same name
(or the method, on a tensor of the same values), and the exception CLASS must be the same
(both succeeding counts as the same). The ops that cannot be compared are listed in
``NOT_COMPARED`` with the reason.
"""
import numpy as np
import pytest

import tensorlib
from tensorlib.ops import decl as decls
from tensorlib.ops.codegen import parse_signature

torch = pytest.importorskip("torch")

# torch.meshgrid warns when called without indexing= (the generated calls omit it)
pytestmark = pytest.mark.filterwarnings("ignore:torch.meshgrid:UserWarning")

# Ops without a PyTorch counterpart of the same name and signature, so there is nothing to
# compare their parsing with (their parsing is the generated one, tested through the others).
NOT_COMPARED = {
    "_unsafe_view": "torch has no public function of this name (an ATen internal)",
    "_to_copy": "torch has no public function of this name (an ATen internal)",
    "convolution_backward": "torch has no public function (an ATen internal)",
    "max_pool2d_with_indices_backward": "torch has no public function (an ATen internal)",
    "avg_pool2d_backward": "torch has no public function (an ATen internal)",
    "adaptive_avg_pool2d_backward": "torch has no public function (an ATen internal)",
    "adaptive_max_pool2d_backward": "torch has no public function (an ATen internal)",
    "native_batch_norm_backward": "torch has no public function (an ATen internal)",
    "native_layer_norm_backward": "torch has no public function (an ATen internal)",
    "native_group_norm_backward": "torch has no public function (an ATen internal)",
    "_thnn_fused_lstm_cell": "torch has no public function (an ATen internal)",
    "_thnn_fused_lstm_cell_backward": "torch has no public function (an ATen internal)",
    "_thnn_fused_gru_cell": "torch has no public function (an ATen internal)",
    "_thnn_fused_gru_cell_backward": "torch has no public function (an ATen internal)",
    "_nn_cross_entropy": "tensorlib's own fused kernel entry (torch has no such function)",
    "_nn_cross_entropy_backward": "tensorlib's own fused kernel entry",
    "_nn_masked_softmax": "tensorlib's own fused kernel entry",
    "_nn_masked_softmax_backward": "tensorlib's own fused kernel entry",
}

# tensorlib exposes these at the top level; torch in torch._C._nn (the same signatures,
# parsed in C), or, with an ``inplace`` flag, only in nn.functional (Python code)
IN_C_NN = {"silu", "gelu", "softplus", "max_pool2d_with_indices", "avg_pool2d",
           "adaptive_avg_pool2d", "adaptive_max_pool2d", "max_unpool2d"}
IN_FUNCTIONAL = {"leaky_relu", "elu", "hardtanh"}


# Variants tensorlib has and torch does not (nothing to compare): "variant:name" -> why.
EXTRA_VARIANTS = {
    "method:silu": "torch has no Tensor.silu (only F.silu)",
    "method:silu_": "torch has no Tensor.silu_",
    "method:maximum_": "torch has no Tensor.maximum_ (tensorlib adds the in-place form)",
    "method:minimum_": "torch has no Tensor.minimum_ (tensorlib adds the in-place form)",
}

# Where torch's function or method is Python code rather than its C parser, and so raises
# another class for a wrong argument: (op, parameter) -> (tensorlib's class, torch's class).
# torch.norm/split/tensordot read an attribute of the argument before any check
# (AttributeError); Tensor.unflatten tests ``not sizes`` (RuntimeError for None, where
# torch.unflatten raises TypeError, as ours); F.hardtanh compares min_val > max_val in Python
# before the C parser sees an int too large for a double (ValueError); Tensor.new_tensor
# converts an object of no known type with float() (TypeError) where torch.tensor raises
# RuntimeError "Could not infer dtype", as ours (for both).
TORCH_QUIRKS = {("norm", "self"): ("TypeError", "AttributeError"),
                ("split", "self"): ("TypeError", "AttributeError"),
                ("tensordot", "a"): ("TypeError", "AttributeError"),
                ("tensordot", "b"): ("TypeError", "AttributeError"),
                ("unflatten", "sizes"): ("TypeError", "RuntimeError"),
                ("hardtanh", "min_val"): ("OverflowError", "ValueError"),
                ("new_tensor", "data"): ("RuntimeError", "TypeError")}

# Valid arguments where the type alone does not give a call PyTorch can match to one of its
# overloads (so that the wrong argument is what both libraries report)
# (scatter gets a value, not a tensor src: torch warns only once per process that reduce with a
# tensor src is deprecated, and another test checks that warning)
BASELINE = {"scatter": {"value": 1.0}, "scatter_": {"value": 1.0},
            "scatter_reduce": {"reduce": "sum"}, "scatter_reduce_": {"reduce": "sum"},
            # (torch's pools index the input's dims by the kernel's length: IndexError on a
            # (2, 3) input with a kernel of one int, where ours and its 2-int form say
            # RuntimeError "3D or 4D input expected")
            "avg_pool2d": {"self": "tensor3d", "kernel_size": (1, 1)},
            "max_pool2d_with_indices": {"self": "tensor3d", "kernel_size": (1, 1)}}


class _Bad:
    """An object of no type any parameter takes."""

    def __repr__(self):
        return "<object>"


BAD = _Bad()
HUGE = 10 ** 20


def _valid(p, lib):
    """A value of the declared type (valid as to type; the op may still refuse it)."""
    if p.default is not None and p.type not in ("Tensor", "Tensor[]"):
        return eval(p.default)
    t = p.type
    if p.name in ("index", "indices") and t.startswith("Tensor"):
        return lib.zeros(2, 3, dtype=lib.int64)
    if p.name in ("mask", "condition") and t.startswith("Tensor"):
        return lib.ones(2, 3, dtype=lib.bool)
    if t in ("Tensor", "Tensor?"):
        return lib.ones(2, 3)
    if t == "Tensor[]":
        return [lib.ones(2, 3), lib.ones(2, 3)]
    if t in ("int", "int?"):
        return 0
    if t.startswith("int[]"):
        return (1,)
    if t == "float":
        return 0.5
    if t == "bool":
        return False
    if t == "Scalar":
        return 1
    if p.name in ("other", "src", "source", "end", "exponent", "self"):
        return lib.ones(2, 3)
    if p.name == "mask":
        return lib.ones(2, 3, dtype=lib.bool)
    return 1


def _wrong(p):
    """Wrong arguments for one parameter, from its declared type."""
    t = p.type
    if t == "Tensor":
        return ["a", 1.5, None, BAD]
    if t == "Tensor?":
        return ["a", 1.5, BAD]
    if t == "Tensor[]":
        return ["a", [1.5], 1, BAD]
    if t in ("int", "int?"):
        out = [1.5, "a", True, HUGE, -HUGE, 2 ** 63, np.float64(1.0), BAD]
        return out if t == "int?" else out + [None]
    if t.startswith("int[]"):
        return ["a", 1.5, (1.5,), (HUGE,), HUGE, (True,), None, BAD, [1, "a"]]
    if t in ("float", "float?"):
        return ["a", 10 ** 400, [1.0], BAD] + ([None] if t == "float" else [])
    if t in ("bool", "bool?"):
        return [1, 0, "a", 0.5, np.bool_(True), BAD] + ([None] if t == "bool" else [])
    if t in ("str", "str?"):
        return [1, b"floor", BAD] + ([None] if t == "str" else [])
    if t == "dtype?":
        return ["float32", 3, np.float32, np.dtype("float32"), 1.5, BAD]
    if t == "device?":
        return [1.5, True, BAD, "cpux", ["cpu"]]
    if t == "Scalar":
        return ["a", [1], BAD] + ([] if p.default == "None" else [None])
    return ["a", BAD]


def _torch_target(name, variant):
    if variant == "function":
        if name in IN_C_NN:
            return getattr(torch._C._nn, name, None)
        if name in IN_FUNCTIONAL:
            return getattr(torch.nn.functional, name, None)
        return getattr(torch, name, None)
    return getattr(torch.Tensor, name, None)


def _lib_target(name, variant):
    if variant == "function":
        return getattr(tensorlib, name)
    return getattr(tensorlib.Tensor, name)


def _outcome(fn, args, kwargs):
    try:
        fn(*args, **kwargs)
    except Exception as e:          # noqa: BLE001 - the class is what is compared
        return type(e).__name__
    return "ok"


def _cases():
    for d in decls.OPS:
        variants = d.get("variants", "function method").split()
        for v in variants:
            if v == "inplace":
                yield d, "method", d["name"] + "_", True
            else:
                yield d, v, d["name"], False


def _id(case):
    d, v, name, _ = case
    return f"{v}:{name}"


ALL_CASES = list(_cases())
CASES = [c for c in ALL_CASES if c[0]["name"] not in NOT_COMPARED and _id(c) not in EXTRA_VARIANTS]
UNCOMPARED = [c for c in ALL_CASES if c not in CASES]


def _calls(params, method, inplace):
    """(the parameter given a wrong value, the value) for every generated case; then (None,
    "extra positional") and (None, "unknown keyword")."""
    if method:
        params = params[1:]                     # self is the tensor the method is called on
    for p in params:
        if inplace and p.name == "out":         # the in-place variant has no out
            continue
        for bad in _wrong(p):
            yield p, bad
    yield None, "extra positional"
    yield None, "unknown keyword"


def _build(name, params, method, target, bad, lib, inplace):
    if method:
        params = params[1:]
    if inplace:
        params = [p for p in params if p.name != "out"]
    args, kwargs = [], {}
    base = BASELINE.get(name, {})
    for p in params:
        required = p.default is None and p.type not in ("Tensor?",) or p.name in base
        if p is target:
            value = bad
        elif p.name in base:
            value = {"tensor": lambda: lib.ones(2, 3), "tensor3d": lambda: lib.ones(1, 2, 3)
                     }.get(base[p.name], lambda: base[p.name])()
        elif required or (not p.kwonly and target is not None and not target.kwonly
                          and params.index(p) < params.index(target)):
            value = _valid(p, lib)
        elif target is None and not p.kwonly and p.default is None:
            value = _valid(p, lib)
        else:
            continue
        if p.type == "Tensor?" and p is not target and p.default is None:
            value = None
        if p.kwonly:
            kwargs[p.name] = value
        elif p.varargs:
            if p is target or not isinstance(value, tuple):
                args.append(value)
            else:
                args.extend(value)
        else:
            args.append(value)
    return args, kwargs


def _convert(value, lib):
    """The same wrong value for the other library (tensors are rebuilt there)."""
    if isinstance(value, (tensorlib.Tensor, torch.Tensor)):
        return lib.ones(2, 3)
    if isinstance(value, list):
        return [_convert(v, lib) for v in value]
    return value


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_wrong_arguments_raise_torchs_class(case):
    d, variant, name, inplace = case
    tfn = _torch_target(name, variant)
    assert tfn is not None, f"torch has no {variant} {name}: list it in NOT_COMPARED"
    lfn = _lib_target(name, variant)
    params = parse_signature(d["sig"])
    method = variant == "method"
    mismatches = []
    for target, bad in _calls(params, method, inplace):
        outcomes = []
        for lib, fn in ((tensorlib, lfn), (torch, tfn)):
            args, kwargs = _build(name, params, method, target, _convert(bad, lib), lib,
                                  inplace)
            if target is None and bad == "extra positional":
                # every positional parameter given, then one more
                positional = [p for p in params[1 if method else 0:] if not p.kwonly
                              and not (inplace and p.name == "out")]
                if any(p.varargs for p in positional):
                    continue                    # varargs take any number
                args = list(args) + [_valid(p, lib) for p in positional[len(args):]] + [1]
            if target is None and bad == "unknown keyword":
                kwargs["no_such_argument"] = 1
            if method:
                args = [lib.ones(2, 3)] + list(args)
            outcomes.append(_outcome(fn, args, kwargs))
        if len(outcomes) == 2 and outcomes[0] != outcomes[1]:
            where = "-" if target is None else target.name
            if TORCH_QUIRKS.get((d["name"], where)) == tuple(outcomes):
                continue
            mismatches.append(f"{name}({where}={bad!r}): tensorlib {outcomes[0]}, "
                              f"torch {outcomes[1]}")
    assert not mismatches, "\n".join(mismatches)


def _expected_class(p, bad):
    """PyTorch's class for a wrong argument of a declared type (what the compared ops show):
    a TypeError, but ValueError for one int that does not fit int64 and OverflowError for a
    float parameter given an int too large for a double."""
    if p.type in ("int", "int?") or (p.type == "int[]" and isinstance(bad, int)
                                      and not isinstance(bad, bool)):
        if isinstance(bad, int) and not isinstance(bad, bool):
            return "ValueError"
    if p.type in ("float", "float?") and isinstance(bad, int):
        return "OverflowError"
    return "TypeError"


@pytest.mark.parametrize("case", UNCOMPARED, ids=_id)
def test_ops_torch_cannot_be_compared_on_parse_as_strictly(case):
    """The ops of NOT_COMPARED and EXTRA_VARIANTS (no PyTorch function to call) take the same
    wrong arguments as the compared ops of their parameter types, with the same classes."""
    d, variant, name, inplace = case
    params = parse_signature(d["sig"])
    method = variant == "method"
    fn = _lib_target(name, variant)
    wrong = []
    for target in params[1 if method else 0:]:
        if target.type in ("object", "object...", "device?", "dtype?", "Scalar") or \
                (inplace and target.name == "out"):
            continue
        for bad in _wrong(target):
            args, kwargs = _build(name, params, method, target, bad, tensorlib, inplace)
            if method:
                args = [tensorlib.ones(2, 3)] + list(args)
            got, want = _outcome(fn, args, kwargs), _expected_class(target, bad)
            if got != want:
                wrong.append(f"{name}({target.name}={bad!r}): {got}, expected {want}")
    assert not wrong, "\n".join(wrong)


# The front halves written by hand (not declared ops): the same wrong arguments, the same class
HAND_WRITTEN = [
    "x.to(dtype='float32')", "x.to(np.float32)", "x.to(L.float64, non_blocking=1)",
    "x.to(L.float64, copy=None)", "x.to('float32')", "x.to(device=1.5)",
    "x.view('float32')", "x.view(np.float32)", "x.view(True, 6)", "x.view(10 ** 20)",
    "L.set_default_dtype('float32')", "L.set_default_dtype(float)",
    "L.set_default_dtype(np.float64)", "x.requires_grad_(1)", "x.requires_grad_(None)",
    "setattr(x, 'requires_grad', 1)", "x.numpy(force=1)", "x.cpu(L.contiguous_format)",
    "x.double(L.contiguous_format)", "x.is_contiguous(L.contiguous_format)",
    "L.tensor([1.0], dtype=np.float32)", "L.tensor([1.0], dtype='float32')",
    "x.new_ones(2, dtype='float32')", "L.zeros(2, dtype='float32')", "L.empty(10 ** 20)",
    "L.zeros((2, True))", "L.zeros((True, 2))", "L.zeros(2, device=1.5)",
    "L.set_num_threads(1.5)", "L.set_num_threads(True)", "L.set_num_threads('2')",
    "L.set_num_threads(0)", "L.manual_seed(2.7)", "L.manual_seed('a')", "L.manual_seed(None)",
]


@pytest.mark.parametrize("src", HAND_WRITTEN)
def test_hand_written_front_halves_raise_torchs_class(src):
    outcomes = []
    for lib in (tensorlib, torch):
        default, rng, threads = lib.get_default_dtype(), lib.get_rng_state(), lib.get_num_threads()
        x = lib.ones(2, 3)
        try:
            outcomes.append(_outcome(lambda: eval(src, {"L": lib, "np": np, "x": x}), (), {}))
        finally:
            lib.set_default_dtype(default)
            lib.set_rng_state(rng)
            lib.set_num_threads(threads)
    assert outcomes[0] == outcomes[1], f"tensorlib {outcomes[0]}, torch {outcomes[1]}"
