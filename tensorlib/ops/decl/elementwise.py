"""Elementwise compute (elementwise.pxi)."""
from .common import F, FM, FMI, op

OPS = []

# Elementwise compute (elementwise.pxi). Binary and unary ops share one signature shape each,
# so they are declared from tables; every entry is still one op with its own node and doc.

# backward formulas of the table ops (``result`` is the op's output; see codegen.py)
_GRAD = {
    "mul": {"self": "grad * other", "other": "grad * self"},
    "maximum": {"self": "_max_min_share(grad, self, other, True)", "other": "_max_min_share(grad, other, self, True)"},
    "minimum": {"self": "_max_min_share(grad, self, other, False)", "other": "_max_min_share(grad, other, self, False)"},
    "atan2": {"self": "grad * other / (self * self + other * other)",
              "other": "-grad * self / (self * self + other * other)"},
    "neg": {"self": "-grad"},
    "abs": {"self": "grad * self.sign()"},
    "sign": {"self": "grad * 0"},
    "reciprocal": {"self": "-grad * result * result"},
    "square": {"self": "2 * grad * self"},
    "exp": {"self": "grad * result"},
    "exp2": {"self": "grad * result * 0.6931471805599453"},
    "expm1": {"self": "grad * (result + 1)"},
    "log": {"self": "grad / self"},
    "log2": {"self": "grad / (self * 0.6931471805599453)"},
    "log10": {"self": "grad / (self * 2.302585092994046)"},
    "log1p": {"self": "grad / (self + 1)"},
    "sqrt": {"self": "grad / (2 * result)"},
    "rsqrt": {"self": "-0.5 * grad * result * result * result"},
    "sin": {"self": "grad * self.cos()"},
    "cos": {"self": "-grad * self.sin()"},
    "tan": {"self": "grad * (1 + result * result)"},
    "asin": {"self": "grad * (1 - self * self).rsqrt()"},
    "acos": {"self": "-grad * (1 - self * self).rsqrt()"},
    "atan": {"self": "grad / (1 + self * self)"},
    "sinh": {"self": "grad * self.cosh()"},
    "cosh": {"self": "grad * self.sinh()"},
    "tanh": {"self": "grad * (1 - result * result)"},
    "sigmoid": {"self": "grad * result * (1 - result)"},
    "erf": {"self": "grad * 1.1283791670955126 * (-self * self).exp()"},
    "relu": {"self": "grad * (result > 0)"},
    "silu": {"self": "_silu_backward(grad, self)"},
    "floor": {"self": "grad * 0"},
    "ceil": {"self": "grad * 0"},
    "trunc": {"self": "grad * 0"},
}

_BINARY = [
    # name, EwOp, node, aliases, example input -> output
    ("mul", "OP_MUL", "MulBackward0", ("multiply",), "tensorlib.tensor([1, 2]).mul(3).tolist()", "[3, 6]"),
    ("maximum", "OP_MAXIMUM", "MaximumBackward0", (), "tensorlib.maximum(tensorlib.tensor([1, 5]), tensorlib.tensor([3, 2])).tolist()", "[3, 5]"),
    ("minimum", "OP_MINIMUM", "MinimumBackward0", (), "tensorlib.minimum(tensorlib.tensor([1, 5]), tensorlib.tensor([3, 2])).tolist()", "[1, 2]"),
    ("atan2", "OP_ATAN2", "Atan2Backward0", ("arctan2",), "round(tensorlib.atan2(tensorlib.tensor([1.]), tensorlib.tensor([1.])).item(), 4)", "0.7854"),
    ("bitwise_and", "OP_BITWISE_AND", None, (), "tensorlib.tensor([6]).bitwise_and(3).tolist()", "[2]"),
    ("bitwise_or", "OP_BITWISE_OR", None, (), "tensorlib.tensor([6]).bitwise_or(3).tolist()", "[7]"),
    ("bitwise_xor", "OP_BITWISE_XOR", None, (), "tensorlib.tensor([6]).bitwise_xor(3).tolist()", "[5]"),
    ("bitwise_left_shift", "OP_LSHIFT", None, (), "tensorlib.tensor([1]).bitwise_left_shift(3).tolist()", "[8]"),
    ("bitwise_right_shift", "OP_RSHIFT", None, (), "tensorlib.tensor([8]).bitwise_right_shift(3).tolist()", "[1]"),
    ("eq", "OP_EQ", None, (), "tensorlib.tensor([1, 2]).eq(2).tolist()", "[False, True]"),
    ("ne", "OP_NE", None, ("not_equal",), "tensorlib.tensor([1, 2]).ne(2).tolist()", "[True, False]"),
    ("lt", "OP_LT", None, ("less",), "tensorlib.tensor([1, 2]).lt(2).tolist()", "[True, False]"),
    ("le", "OP_LE", None, ("less_equal",), "tensorlib.tensor([1, 2]).le(2).tolist()", "[True, True]"),
    ("gt", "OP_GT", None, ("greater",), "tensorlib.tensor([1, 2]).gt(1).tolist()", "[False, True]"),
    ("ge", "OP_GE", None, ("greater_equal",), "tensorlib.tensor([1, 2]).ge(2).tolist()", "[False, True]"),
    ("logical_and", "OP_LOGICAL_AND", None, (), "tensorlib.tensor([1, 0]).logical_and(tensorlib.tensor([1, 1])).tolist()", "[True, False]"),
    ("logical_or", "OP_LOGICAL_OR", None, (), "tensorlib.tensor([1, 0]).logical_or(tensorlib.tensor([0, 0])).tolist()", "[True, False]"),
    ("logical_xor", "OP_LOGICAL_XOR", None, (), "tensorlib.tensor([1, 0]).logical_xor(tensorlib.tensor([1, 1])).tolist()", "[False, True]"),
]
# Comparisons are differentiable only in place: ``x.lt_(y)`` keeps x's float dtype and its
# gradient (to x's old values and to y) is zero, as in PyTorch (LtBackward0/1).
_COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}
for _n, _op, _node, _al, _ex, _res in _BINARY:
    _cmp = _n in _COMPARISONS
    # maximum/minimum/atan2 take only tensors in PyTorch (a number is a TypeError)
    _other = "Tensor other" if _n in ("maximum", "minimum", "atan2") else "object other"
    OPS.append(op(_n, f"Tensor self, {_other}, *, object out=None", FMI, aliases=_al,
                  node=f"{_n.capitalize()}Backward0" if _cmp else _node,
                  node_if=((f"{_n.capitalize()}Backward1", "isinstance(other, TensorBase)"),) if _cmp else (),
                  record_inplace_only=_cmp,
                  backward={"self": "_zeros_grad(grad)", "other": "_zeros_grad(grad)"} if _cmp else _GRAD.get(_n),
                  impl=f"_binary({_op}, {{self}}, {{other}}, {{out}}, {{inplace}})",
                  doc=f"Elementwise ``{_n}`` with broadcasting and type promotion.\n\n    >>> {_ex}\n    {_res}"))

_UNARY = [
    # name, EwOp, node, aliases, example
    ("neg", "OP_NEG", "NegBackward0", ("negative",), "tensorlib.tensor([1, -2]).neg().tolist()", "[-1, 2]"),
    ("abs", "OP_ABS", "AbsBackward0", ("absolute",), "tensorlib.tensor([-1, 2]).abs().tolist()", "[1, 2]"),
    ("sign", "OP_SIGN", "SignBackward0", (), "tensorlib.tensor([-3., 0., 2.]).sign().tolist()", "[-1.0, 0.0, 1.0]"),
    ("reciprocal", "OP_RECIPROCAL", "ReciprocalBackward0", (), "tensorlib.tensor([2.]).reciprocal().tolist()", "[0.5]"),
    ("square", "OP_SQUARE", "PowBackward0", (), "tensorlib.tensor([3]).square().tolist()", "[9]"),
    ("exp", "OP_EXP", "ExpBackward0", (), "tensorlib.tensor([0.]).exp().tolist()", "[1.0]"),
    ("exp2", "OP_EXP2", "Exp2Backward0", (), "tensorlib.tensor([3.]).exp2().tolist()", "[8.0]"),
    ("expm1", "OP_EXPM1", "Expm1Backward0", (), "tensorlib.tensor([0.]).expm1().tolist()", "[0.0]"),
    ("log", "OP_LOG", "LogBackward0", (), "tensorlib.tensor([1.]).log().tolist()", "[0.0]"),
    ("log2", "OP_LOG2", "Log2Backward0", (), "tensorlib.tensor([8.]).log2().tolist()", "[3.0]"),
    ("log10", "OP_LOG10", "Log10Backward0", (), "tensorlib.tensor([100.]).log10().tolist()", "[2.0]"),
    ("log1p", "OP_LOG1P", "Log1PBackward0", (), "tensorlib.tensor([0.]).log1p().tolist()", "[0.0]"),
    ("sqrt", "OP_SQRT", "SqrtBackward0", (), "tensorlib.tensor([4.]).sqrt().tolist()", "[2.0]"),
    ("rsqrt", "OP_RSQRT", "RsqrtBackward0", (), "tensorlib.tensor([4.]).rsqrt().tolist()", "[0.5]"),
    ("sin", "OP_SIN", "SinBackward0", (), "tensorlib.tensor([0.]).sin().tolist()", "[0.0]"),
    ("cos", "OP_COS", "CosBackward0", (), "tensorlib.tensor([0.]).cos().tolist()", "[1.0]"),
    ("tan", "OP_TAN", "TanBackward0", (), "tensorlib.tensor([0.]).tan().tolist()", "[0.0]"),
    ("asin", "OP_ASIN", "AsinBackward0", ("arcsin",), "tensorlib.tensor([0.]).asin().tolist()", "[0.0]"),
    ("acos", "OP_ACOS", "AcosBackward0", ("arccos",), "tensorlib.tensor([1.]).acos().tolist()", "[0.0]"),
    ("atan", "OP_ATAN", "AtanBackward0", ("arctan",), "tensorlib.tensor([0.]).atan().tolist()", "[0.0]"),
    ("sinh", "OP_SINH", "SinhBackward0", (), "tensorlib.tensor([0.]).sinh().tolist()", "[0.0]"),
    ("cosh", "OP_COSH", "CoshBackward0", (), "tensorlib.tensor([0.]).cosh().tolist()", "[1.0]"),
    ("tanh", "OP_TANH", "TanhBackward0", (), "tensorlib.tensor([0.]).tanh().tolist()", "[0.0]"),
    ("sigmoid", "OP_SIGMOID", "SigmoidBackward0", (), "tensorlib.tensor([0.]).sigmoid().tolist()", "[0.5]"),
    ("erf", "OP_ERF", "ErfBackward0", (), "tensorlib.tensor([0.]).erf().tolist()", "[0.0]"),
    ("relu", "OP_RELU", "ReluBackward0", (), "tensorlib.tensor([-1., 2.]).relu().tolist()", "[0.0, 2.0]"),
    ("silu", "OP_SILU", "SiluBackward0", (), "tensorlib.tensor([0.]).silu().tolist()", "[0.0]"),
    ("floor", "OP_FLOOR", "FloorBackward0", (), "tensorlib.tensor([1.5, -1.5]).floor().tolist()", "[1.0, -2.0]"),
    ("ceil", "OP_CEIL", "CeilBackward0", (), "tensorlib.tensor([1.5, -1.5]).ceil().tolist()", "[2.0, -1.0]"),
    ("trunc", "OP_TRUNC", "TruncBackward0", ("fix",), "tensorlib.tensor([1.5, -1.5]).trunc().tolist()", "[1.0, -1.0]"),
    ("isnan", "OP_ISNAN", None, (), "tensorlib.tensor([float('nan'), 1.]).isnan().tolist()", "[True, False]"),
    ("isinf", "OP_ISINF", None, (), "tensorlib.tensor([float('inf'), 1.]).isinf().tolist()", "[True, False]"),
    ("isfinite", "OP_ISFINITE", None, (), "tensorlib.tensor([float('inf'), 1.]).isfinite().tolist()", "[False, True]"),
    ("signbit", "OP_SIGNBIT", None, (), "tensorlib.tensor([-0., 1.]).signbit().tolist()", "[True, False]"),
    ("logical_not", "OP_LOGICAL_NOT", None, (), "tensorlib.tensor([0, 3]).logical_not().tolist()", "[True, False]"),
    ("bitwise_not", "OP_BITWISE_NOT", None, (), "tensorlib.tensor([0]).bitwise_not().tolist()", "[-1]"),
]
_NO_INPLACE = {"isnan", "isinf", "isfinite", "signbit"}

for _n, _op, _node, _al, _ex, _res in _UNARY:
    OPS.append(op(_n, "Tensor self, *, object out=None",
                  "function method" if _n in _NO_INPLACE else FMI, aliases=_al, node=_node,
                  backward=_GRAD.get(_n),
                  impl=f"_unary({_op}, {{self}}, {{out}}, {{inplace}})",
                  doc=f"Elementwise ``{_n}``.\n\n    >>> {_ex}\n    {_res}"))

OPS += [
    op("add", "Tensor self, object other, *, object alpha=1, object out=None", FMI,
       impl="_add({self}, {other}, {alpha}, {out}, {inplace})", node="AddBackward0",
       backward={'self': 'grad', 'other': '_scale(grad, alpha)'},
       doc="``input + alpha * other`` with broadcasting and type promotion.\n\n"
           "    >>> tensorlib.tensor([1, 2]).add(tensorlib.tensor([10, 20]), alpha=2).tolist()\n    [21, 42]"),
    op("sub", "Tensor self, object other, *, object alpha=1, object out=None", FMI,
       aliases=("subtract",),
       impl="_add({self}, {other}, {alpha}, {out}, {inplace}, True)", node="SubBackward0",
       backward={'self': 'grad', 'other': '_scale(grad, -alpha)'},
       doc="``input - alpha * other``.\n\n    >>> tensorlib.tensor([5]).sub(2).tolist()\n    [3]"),
    op("rsub", "Tensor self, object other, *, object alpha=1", F,
       impl="_add({other}, {self}, {alpha}, None, False, True)", node="RsubBackward0",
       node_if=(("RsubBackward1", "not isinstance(other, TensorBase)"),),
       backward={'self': '_scale(grad, -alpha)', 'other': 'grad'},
       doc="``other - alpha * input``.\n\n    >>> tensorlib.rsub(tensorlib.tensor([1]), 5).tolist()\n    [4]"),
    op("div", "object self, object other, *, object rounding_mode=None, object out=None", FMI,
       aliases=("divide", "true_divide"),
       impl="_div({self}, {other}, {rounding_mode}, {out}, {inplace})",
       node="DivBackward0", node_if=(("DivBackward2", "rounding_mode is not None"),),
       backward={'self': '(grad / other) if rounding_mode is None else grad * 0', 'other': '(-grad * self / (other * other)) if rounding_mode is None else grad * 0'},
       doc="True division (integers give floats), or rounded with ``rounding_mode`` 'trunc'/'floor'.\n\n"
           "    >>> tensorlib.tensor([7, -7]).div(2, rounding_mode='floor').tolist()\n    [3, -4]"),
    op("floor_divide", "Tensor self, object other, *, object out=None", FMI,
       impl="_int_safe_binary(OP_DIV_FLOOR, {self}, {other}, {out}, {inplace})",
       doc="Division rounded toward negative infinity (Python's ``//``).\n\n"
           "    >>> tensorlib.tensor([-7]).floor_divide(2).tolist()\n    [-4]"),
    op("remainder", "object self, object other, *, object out=None", FMI,
       impl="_int_safe_binary(OP_REMAINDER, {self}, {other}, {out}, {inplace})",
       node="RemainderBackward0",
       node_if=(("RemainderBackward1", "isinstance(other, TensorBase)"),),
       backward={'self': 'grad', 'other': "-grad * self.div(other, rounding_mode='floor')"},
       doc="Python's modulus: the result has the sign of the divisor.\n\n"
           "    >>> tensorlib.tensor([-7]).remainder(3).tolist()\n    [2]"),
    op("fmod", "Tensor self, object other, *, object out=None", FMI,
       impl="_int_safe_binary(OP_FMOD, {self}, {other}, {out}, {inplace})", node="FmodBackward0",
       node_if=(("FmodBackward1", "isinstance(other, TensorBase)"),),
       backward={'self': 'grad', 'other': "-grad * self.div(other, rounding_mode='trunc')"},
       doc="C's modulus: the result has the sign of the dividend.\n\n"
           "    >>> tensorlib.tensor([-7]).fmod(3).tolist()\n    [-1]"),
    op("pow", "object self, object exponent, *, object out=None", FMI,
       impl="_pow({self}, {exponent}, {out}, {inplace})", node="PowBackward0",
       node_if=(("PowBackward2", "not isinstance(self, TensorBase)"), ("PowBackward1", "isinstance(exponent, TensorBase)")),
       backward={'self': '_pow_backward_self(grad, self, exponent)', 'exponent': '_pow_backward_exponent(grad, self, exponent, result)'},
       doc="``input ** exponent`` (either may be a number).\n\n"
           "    >>> tensorlib.pow(tensorlib.tensor([2, 3]), 2).tolist()\n    [4, 9]"),
    op("round", "Tensor self, *, int decimals=0, object out=None", FMI,
       impl="_round({self}, {decimals}, {out}, {inplace})", node="RoundBackward0",
       node_if=(("RoundBackward1", "decimals != 0"),), backward={'self': 'grad * 0'},
       doc="Round half to even (to ``decimals`` places).\n\n"
           "    >>> tensorlib.tensor([0.5, 1.5, 2.567]).round(decimals=1).tolist()[2]\n    2.6"),
    op("frac", "Tensor self, *, object out=None", FMI, impl="_frac({self}, {out}, {inplace})",
       node="FracBackward0", backward={'self': 'grad'},
       doc="Fractional part, ``x - trunc(x)``.\n\n    >>> tensorlib.tensor([1.25, -1.25]).frac().tolist()\n    [0.25, -0.25]"),
    op("nan_to_num", "Tensor self, object nan=0.0, object posinf=None, object neginf=None, *, object out=None", FMI,
       impl="_nan_to_num({self}, {nan}, {posinf}, {neginf}, {out}, {inplace})",
       node="NanToNumBackward0", backward={'self': 'grad * self.isfinite()'},
       doc="Replace NaN, +inf and -inf (by default with 0 and the dtype's extremes).\n\n"
           "    >>> tensorlib.tensor([float('nan'), 1.]).nan_to_num().tolist()\n    [0.0, 1.0]"),
    op("clamp", "Tensor self, object min=None, object max=None, *, object out=None", FMI,
       aliases=("clip",),
       impl="_clamp({self}, {min}, {max}, {out}, {inplace})", node="ClampBackward1",
       node_if=(("ClampBackward0", "isinstance(min, TensorBase) or isinstance(max, TensorBase)"),),
       backward={'self': '_clamp_backward(grad, self, min, max)', 'min': '_clamp_bound_backward(grad, self, min, False, max)', 'max': '_clamp_bound_backward(grad, self, max, True, min)'},
       doc="Limit values to [min, max] (numbers or tensors; either may be None).\n\n"
           "    >>> tensorlib.tensor([-2, 0, 5]).clamp(-1, 3).tolist()\n    [-1, 0, 3]"),
    op("clamp_min", "Tensor self, object min, *, object out=None", FMI,
       impl="_clamp({self}, {min}, None, {out}, {inplace})", node="ClampMinBackward0",
       node_if=(("ClampMinBackward1", "isinstance(min, TensorBase)"),),
       backward={'self': '_clamp_backward(grad, self, min, None)', 'min': '_clamp_bound_backward(grad, self, min, False)'},
       doc="``clamp(min=min)``.\n\n    >>> tensorlib.tensor([-2, 5]).clamp_min(0).tolist()\n    [0, 5]"),
    op("clamp_max", "Tensor self, object max, *, object out=None", FMI,
       impl="_clamp({self}, None, {max}, {out}, {inplace})", node="ClampMaxBackward0",
       node_if=(("ClampMaxBackward1", "isinstance(max, TensorBase)"),),
       backward={'self': '_clamp_backward(grad, self, None, max)', 'max': '_clamp_bound_backward(grad, self, max, True)'},
       doc="``clamp(max=max)``.\n\n    >>> tensorlib.tensor([-2, 5]).clamp_max(0).tolist()\n    [-2, 0]"),
    op("lerp", "Tensor self, object end, object weight, *, object out=None", FMI,
       impl="_lerp({self}, {end}, {weight}, {out}, {inplace})", node="LerpBackward0",
       node_if=(("LerpBackward1", "isinstance(weight, TensorBase)"),),
       backward={'self': 'grad * (1 - weight)', 'end': 'grad * weight', 'weight': 'grad * (end - self)'},
       doc="Linear interpolation ``input + weight * (end - input)``.\n\n"
           "    >>> tensorlib.tensor([0.]).lerp(tensorlib.tensor([10.]), 0.25).tolist()\n    [2.5]"),
    op("where", "Tensor condition, object self, object other, *, object out=None", F,
       impl="_where({condition}, {self}, {other}, {out})", node="WhereBackward0",
       backward={'self': 'where(condition, grad, 0.0)', 'other': 'where(condition, 0.0, grad)'},
       input_name="condition",
       doc="Elements of ``input`` where ``condition`` holds, else of ``other``.\n\n"
           "    >>> tensorlib.where(tensorlib.tensor([True, False]), 1, 0).tolist()\n    [1, 0]"),
    op("masked_fill", "Tensor self, object mask, object value", "function method inplace",
       impl="_masked_fill({self}, {mask}, {value}, {inplace})", node="MaskedFillBackward0",
       node_if=(("MaskedFillBackward1", "isinstance(value, TensorBase)"),),
       backward={'self': 'grad.masked_fill(mask, 0)', 'value': 'where(mask, grad, 0.0).sum()'},
       doc="``value`` where ``mask`` is True, else ``input``.\n\n"
           "    >>> tensorlib.zeros(3).masked_fill(tensorlib.tensor([True, False, True]), 7).tolist()\n    [7.0, 0.0, 7.0]"),
    op("equal", "Tensor self, object other", FM, impl="_equal({self}, {other})",
       doc="True when both tensors have the same shape and elements.\n\n"
           "    >>> tensorlib.equal(tensorlib.tensor([1, 2]), tensorlib.tensor([1, 2]))\n    True"),
    op("isclose", "Tensor self, object other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False", FM,
       impl="_isclose({self}, {other}, {rtol}, {atol}, {equal_nan})",
       doc="``|input - other| <= atol + rtol * |other|`` elementwise.\n\n"
           "    >>> tensorlib.isclose(tensorlib.tensor([1.0]), tensorlib.tensor([1.0 + 1e-9])).tolist()\n    [True]"),
    op("allclose", "Tensor self, object other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False", FM,
       impl="_allclose({self}, {other}, {rtol}, {atol}, {equal_nan})",
       doc="Whether every element is close (see isclose).\n\n"
           "    >>> tensorlib.allclose(tensorlib.tensor([1.0]), tensorlib.tensor([1.00001]))\n    True"),
    # activations (also in tensorlib.nn.functional)
    op("leaky_relu", "Tensor self, float negative_slope=0.01, bool inplace=False", F,
       impl="_float_only(OP_LEAKY_RELU, {self}, None, {inplace}, ({negative_slope},))",
       node="LeakyReluBackward0", backward={'self': 'where(self > 0, grad, grad * negative_slope)'},
       doc="``x`` if x > 0 else ``negative_slope * x``.\n\n"
           "    >>> tensorlib.leaky_relu(tensorlib.tensor([-1., 1.]), 0.1).tolist()\n    [-0.10000000149011612, 1.0]"),
    op("elu", "Tensor self, float alpha=1.0, bool inplace=False", F,
       impl="_float_only(OP_ELU, {self}, None, {inplace}, ({alpha}, 1.0, 1.0))",
       node="EluBackward0", backward={'self': '_elu_backward(grad, self, alpha)'},
       doc="``x`` if x > 0 else ``alpha * (exp(x) - 1)``.\n\n"
           "    >>> tensorlib.elu(tensorlib.tensor([0., 1.])).tolist()\n    [0.0, 1.0]"),
    op("gelu", "Tensor self, *, object approximate='none'", F,
       impl="_gelu({self}, {approximate}, None, False)", node="GeluBackward0",
       backward={'self': '_gelu_backward(grad, self, approximate)'},
       doc="Gaussian error linear unit (exact, or ``approximate='tanh'``).\n\n"
           "    >>> tensorlib.gelu(tensorlib.tensor([0.])).tolist()\n    [0.0]"),
    op("softplus", "Tensor self, float beta=1.0, float threshold=20.0", F,
       impl="_float_only(OP_SOFTPLUS, {self}, None, False, ({beta}, {threshold}))",
       node="SoftplusBackward0",
       backward={'self': '_softplus_backward(grad, self, beta, threshold)'},
       doc="``log(1 + exp(beta * x)) / beta`` (linear above ``threshold``).\n\n"
           "    >>> round(tensorlib.softplus(tensorlib.tensor([0.])).item(), 4)\n    0.6931"),
    op("hardtanh", "Tensor self, float min_val=-1.0, float max_val=1.0, bool inplace=False", F,
       impl="_float_only(OP_HARDTANH, {self}, None, {inplace}, ({min_val}, {max_val}))",
       node="HardtanhBackward0", backward={'self': 'grad * ((self > min_val) & (self < max_val))'},
       doc="Clamp to [min_val, max_val].\n\n    >>> tensorlib.hardtanh(tensorlib.tensor([-3., 0.5])).tolist()\n    [-1.0, 0.5]"),
]
