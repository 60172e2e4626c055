"""Elementwise compute (elementwise.pxi).

Each elementwise op carries its C kernels: the scalar expression per dtype class from which
codegen writes the typed loops, the loop table, its extern and the EwOp (see
``common.kernel``). The C helpers the expressions call (``tl_expf``, ``IDIV_FLOOR``, ``FMAX``,
``ipow`` ...) are in tensorlib/_core/cpu/cpu_elementwise.c and cpu_math.h.

A new unary op is one ``unary(...)`` call here (its expressions, dtype rule, backward formula
and doc example) plus its NumPy reference in tests/test_elementwise.py (``UNARY``) and its
gradcheck case in tests/test_autograd.py (``UNARY``); a declared op without them fails the
tests. For example (the erfc below):

    unary("erfc", "FLOAT", "tensorlib.tensor([0.]).erfc().tolist()", "[1.0]",
          node="ErfcBackward0", backward="grad * -1.1283791670955126 * (-self * self).exp()",
          float="tl_erfcf(x)", double="tl_erfc(x)")
"""
from .common import F, FM, FMI, kernel, op, slots

OPS = []
# the names of the ops declared by ``unary``/``binary`` (the tests iterate over them)
UNARY_OPS = []
BINARY_OPS = []
# Comparisons are differentiable only in place: ``x.lt_(y)`` keeps x's float dtype and its
# gradient (to x's old values and to y) is zero, as in PyTorch (LtBackward0/1).
_COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}


def binary(name, rule, example, result, *, node=None, backward=None, aliases=(),
           tensor_only=False, number_self=False, kernel_name=None, operators=(),
           no_formula=False, **exprs):
    """A binary op ``name(input, other, *, out=None)`` with method, in-place and out= forms,
    running the kernel of the expressions ``exprs`` (``bool=``, ``int=``, ... see ``kernel``).
    ``tensor_only``: ``other`` must be a tensor (maximum/minimum/atan2 in PyTorch);
    ``number_self``: ``input`` may be a number too (``torch.mul(2, x)``, as PyTorch's parser
    takes a number for a tensor in these ops);
    ``operators``: its Tensor operator slots (``common.slots``); a comparison has its own;
    ``no_formula``: PyTorch has no derivative for it (bitwise ops), and its autograd layer
    still reads the inputs' histories first (``_binary_no_formula``)."""
    k = kernel(kernel_name or name, "binary", rule, **exprs)
    BINARY_OPS.append(name)
    cmp = name in _COMPARISONS
    other = "Tensor other" if tensor_only else "object other"
    first = "object self" if number_self else "Tensor self"
    OPS.append(op(name, f"{first}, {other}, *, object out=None", FMI, aliases=aliases,
                  node=f"{name.capitalize()}Backward0" if cmp else node,
                  node_if=((f"{name.capitalize()}Backward1", "isinstance(other, TensorBase)"),)
                  if cmp else (),
                  record_inplace_only=cmp,
                  backward={"self": "_zeros_grad(grad)", "other": "_zeros_grad(grad)"} if cmp
                  else backward,
                  impl=f"{'_binary_no_formula' if no_formula else '_binary'}"
                       f"(OP_{k['name'].upper()}, {{self}}, {{other}}, {{out}}, {{inplace}})",
                  doc=f"Elementwise ``{name}`` with broadcasting and type promotion.\n\n"
                      f"    >>> {example}\n    {result}",
                  kernels=[k],
                  operators=((f"__{name}__", "self, other", False),) if cmp else operators))


def unary(name, rule, example, result, *, node=None, backward=None, aliases=(), inplace=True,
          operators=(), impl=None, **exprs):
    """A unary op ``name(input, *, out=None)`` with method, in-place (unless ``inplace`` is
    False) and out= forms, running the kernel of ``exprs``; ``backward``: the formula for
    ``self`` (over ``grad``, ``self`` and ``result``); ``operators``: its slots (``__neg__``);
    ``impl``: a front half of its own (default: the kernel over the promoted dtype)."""
    k = kernel(name, "unary", rule, **exprs)
    UNARY_OPS.append(name)
    OPS.append(op(name, "Tensor self, *, object out=None", FMI if inplace else FM,
                  aliases=aliases, node=node,
                  backward={"self": backward} if backward else None,
                  impl=impl or f"_unary(OP_{name.upper()}, {{self}}, {{out}}, {{inplace}})",
                  doc=f"Elementwise ``{name}``.\n\n    >>> {example}\n    {result}",
                  kernels=[k], operators=operators))


def _ints_floats(expr):
    """The same expression for every integer and float loop."""
    return dict(int=expr, float=expr, double=expr)


def _all(expr):
    """The same expression for every loop, bool included."""
    return dict(bool=expr, **_ints_floats(expr))


# ------------------------------------------------------------------ binary
binary("mul", "SAME", "tensorlib.tensor([1, 2]).mul(3).tolist()", "[3, 6]",
       number_self=True, operators=slots("mul", "same"),
       node="MulBackward0", aliases=("multiply",),
       backward={"self": "grad * other", "other": "grad * self"},
       bool="(x & y) != 0", **_ints_floats("x * y"))
# maximum/minimum propagate NaN (FMAX/FMIN), unlike C's fmax/fmin
binary("maximum", "SAME",
       "tensorlib.maximum(tensorlib.tensor([1, 5]), tensorlib.tensor([3, 2])).tolist()",
       "[3, 5]", node="MaximumBackward0", tensor_only=True,
       backward={"self": "_max_min_share(grad, self, other, True)",
                 "other": "_max_min_share(grad, other, self, True)"},
       bool="(x | y) != 0", int="(x > y ? x : y)", float="FMAX(x, y)", double="FMAX(x, y)")
binary("minimum", "SAME",
       "tensorlib.minimum(tensorlib.tensor([1, 5]), tensorlib.tensor([3, 2])).tolist()",
       "[1, 2]", node="MinimumBackward0", tensor_only=True,
       backward={"self": "_max_min_share(grad, self, other, False)",
                 "other": "_max_min_share(grad, other, self, False)"},
       bool="(x & y) != 0", int="(x < y ? x : y)", float="FMIN(x, y)", double="FMIN(x, y)")
binary("atan2", "FLOAT",
       "round(tensorlib.atan2(tensorlib.tensor([1.]), tensorlib.tensor([1.])).item(), 4)",
       "0.7854", node="Atan2Backward0", aliases=("arctan2",), tensor_only=True,
       # (grouped as PyTorch's, times _atan2_recip; -self, so a bool self raises as there)
       backward={"self": "grad * other * _atan2_recip(self, other)",
                 "other": "grad * -self * _atan2_recip(self, other)"},
       float="tl_atan2f(x, y)", double="tl_atan2(x, y)")
binary("bitwise_and", "INT", "tensorlib.tensor([6]).bitwise_and(3).tolist()", "[2]",
       number_self=True, no_formula=True, operators=slots("and", "same"),
       bool="x & y", int="x & y")
binary("bitwise_or", "INT", "tensorlib.tensor([6]).bitwise_or(3).tolist()", "[7]",
       number_self=True, no_formula=True, operators=slots("or", "same"),
       bool="x | y", int="x | y")
binary("bitwise_xor", "INT", "tensorlib.tensor([6]).bitwise_xor(3).tolist()", "[5]",
       number_self=True, no_formula=True, operators=slots("xor", "same"),
       bool="x ^ y", int="x ^ y")
# a shift count outside [0, width) gives 0 (left) or the sign fill (right), as PyTorch
binary("bitwise_left_shift", "INT", "tensorlib.tensor([1]).bitwise_left_shift(3).tolist()", "[8]",
       number_self=True, no_formula=True, operators=slots("lshift", "swap"),
       kernel_name="lshift", uint8="((int)y >= 8 ? 0 : (u8)(x << y))", int="SHL({T}, x, y)")
binary("bitwise_right_shift", "INT", "tensorlib.tensor([8]).bitwise_right_shift(3).tolist()", "[1]",
       number_self=True, no_formula=True, operators=slots("rshift", "swap"),
       kernel_name="rshift", uint8="((int)y >= 8 ? 0 : (u8)(x >> y))", int="SHR({T}, x, y)")
binary("eq", "BOOL_OUT", "tensorlib.tensor([1, 2]).eq(2).tolist()", "[False, True]",
       **_all("x == y"))
binary("ne", "BOOL_OUT", "tensorlib.tensor([1, 2]).ne(2).tolist()", "[True, False]",
       aliases=("not_equal",), **_all("x != y"))
binary("lt", "BOOL_OUT", "tensorlib.tensor([1, 2]).lt(2).tolist()", "[True, False]",
       aliases=("less",), **_all("x < y"))
binary("le", "BOOL_OUT", "tensorlib.tensor([1, 2]).le(2).tolist()", "[True, True]",
       aliases=("less_equal",), **_all("x <= y"))
binary("gt", "BOOL_OUT", "tensorlib.tensor([1, 2]).gt(1).tolist()", "[False, True]",
       aliases=("greater",), **_all("x > y"))
binary("ge", "BOOL_OUT", "tensorlib.tensor([1, 2]).ge(2).tolist()", "[False, True]",
       aliases=("greater_equal",), **_all("x >= y"))
binary("logical_and", "BOOL_OUT",
       "tensorlib.tensor([1, 0]).logical_and(tensorlib.tensor([1, 1])).tolist()", "[True, False]",
       tensor_only=True, **_all("(x != 0) & (y != 0)"))
binary("logical_or", "BOOL_OUT",
       "tensorlib.tensor([1, 0]).logical_or(tensorlib.tensor([0, 0])).tolist()", "[True, False]",
       tensor_only=True, **_all("(x != 0) | (y != 0)"))
binary("logical_xor", "BOOL_OUT",
       "tensorlib.tensor([1, 0]).logical_xor(tensorlib.tensor([1, 1])).tolist()", "[False, True]",
       tensor_only=True, **_all("(x != 0) ^ (y != 0)"))

# ------------------------------------------------------------------ unary
unary("neg", "NO_BOOL", "tensorlib.tensor([1, -2]).neg().tolist()", "[-1, 2]",
      operators=(("__neg__", "self", False),),
      node="NegBackward0", aliases=("negative",), backward="-grad",
      int="0 - x", float="-x", double="-x")
# as PyTorch: "abs_cpu" not implemented for 'Bool'
unary("abs", "SAME", "tensorlib.tensor([-1, 2]).abs().tolist()", "[1, 2]",
      operators=(("__abs__", "self", False),),
      node="AbsBackward0", aliases=("absolute",), backward="grad * self.sign()",
      uint8="x", int="x < 0 ? 0 - x : x", float="fabsf(x)", double="fabs(x)")
unary("sign", "SAME", "tensorlib.tensor([-3., 0., 2.]).sign().tolist()", "[-1.0, 0.0, 1.0]",
      node="SignBackward0", backward="_zeros_grad(grad)", bool="x", **_ints_floats("(x > 0) - (x < 0)"))
unary("reciprocal", "FLOAT", "tensorlib.tensor([2.]).reciprocal().tolist()", "[0.5]",
      node="ReciprocalBackward0", backward="-grad * result * result", float="1 / x", double="1 / x")
unary("square", "SAME", "tensorlib.tensor([3]).square().tolist()", "[9]",
      impl="_square({self}, {out}, {inplace})",      # (bool squares as int64)
      node="PowBackward0", backward="2 * grad * self", bool="x", **_ints_floats("x * x"))
unary("exp", "FLOAT", "tensorlib.tensor([0.]).exp().tolist()", "[1.0]",
      node="ExpBackward0", backward="grad * result", float="tl_expf(x)", double="tl_exp(x)")
unary("exp2", "FLOAT", "tensorlib.tensor([3.]).exp2().tolist()", "[8.0]",
      node="Exp2Backward0", backward="grad * result * 0.6931471805599453",
      float="tl_exp2f(x)", double="tl_exp2(x)")
unary("expm1", "FLOAT", "tensorlib.tensor([0.]).expm1().tolist()", "[0.0]",
      node="Expm1Backward0", backward="grad * (result + 1)",
      float="tl_expm1f(x)", double="tl_expm1(x)")
unary("log", "FLOAT", "tensorlib.tensor([1.]).log().tolist()", "[0.0]",
      node="LogBackward0", backward="grad / self", float="tl_logf(x)", double="tl_log(x)")
unary("log2", "FLOAT", "tensorlib.tensor([8.]).log2().tolist()", "[3.0]",
      node="Log2Backward0", backward="grad / (self * 0.6931471805599453)",
      float="tl_log2f(x)", double="tl_log2(x)")
unary("log10", "FLOAT", "tensorlib.tensor([100.]).log10().tolist()", "[2.0]",
      node="Log10Backward0", backward="grad / (self * 2.302585092994046)",
      float="tl_log10f(x)", double="tl_log10(x)")
unary("log1p", "FLOAT", "tensorlib.tensor([0.]).log1p().tolist()", "[0.0]",
      node="Log1PBackward0", backward="grad / (self + 1)",
      float="tl_log1pf(x)", double="tl_log1p(x)")
unary("sqrt", "FLOAT", "tensorlib.tensor([4.]).sqrt().tolist()", "[2.0]",
      node="SqrtBackward0", backward="grad / (2 * result)", float="sqrtf(x)", double="sqrt(x)")
unary("rsqrt", "FLOAT", "tensorlib.tensor([4.]).rsqrt().tolist()", "[0.5]",
      node="RsqrtBackward0", backward="-0.5 * grad * result * result * result",
      float="1.0f / sqrtf(x)", double="1.0 / sqrt(x)")
unary("sin", "FLOAT", "tensorlib.tensor([0.]).sin().tolist()", "[0.0]",
      node="SinBackward0", backward="grad * self.cos()", float="tl_sinf(x)", double="tl_sin(x)")
unary("cos", "FLOAT", "tensorlib.tensor([0.]).cos().tolist()", "[1.0]",
      node="CosBackward0", backward="-grad * self.sin()", float="tl_cosf(x)", double="tl_cos(x)")
unary("tan", "FLOAT", "tensorlib.tensor([0.]).tan().tolist()", "[0.0]",
      node="TanBackward0", backward="grad * (1 + result * result)",
      float="tl_tanf(x)", double="tl_tan(x)")
unary("asin", "FLOAT", "tensorlib.tensor([0.]).asin().tolist()", "[0.0]",
      node="AsinBackward0", aliases=("arcsin",), backward="grad * (1 - self * self).rsqrt()",
      float="tl_asinf(x)", double="tl_asin(x)")
unary("acos", "FLOAT", "tensorlib.tensor([1.]).acos().tolist()", "[0.0]",
      node="AcosBackward0", aliases=("arccos",), backward="-grad * (1 - self * self).rsqrt()",
      float="tl_acosf(x)", double="tl_acos(x)")
unary("atan", "FLOAT", "tensorlib.tensor([0.]).atan().tolist()", "[0.0]",
      node="AtanBackward0", aliases=("arctan",), backward="grad / (1 + self * self)",
      float="tl_atanf(x)", double="tl_atan(x)")
unary("sinh", "FLOAT", "tensorlib.tensor([0.]).sinh().tolist()", "[0.0]",
      node="SinhBackward0", backward="grad * self.cosh()", float="tl_sinhf(x)", double="tl_sinh(x)")
unary("cosh", "FLOAT", "tensorlib.tensor([0.]).cosh().tolist()", "[1.0]",
      node="CoshBackward0", backward="grad * self.sinh()", float="tl_coshf(x)", double="tl_cosh(x)")
# the inverse hyperbolic functions: glibc's (< 2 ulp), not vectorized
unary("asinh", "FLOAT", "tensorlib.tensor([0.]).asinh().tolist()", "[0.0]",
      node="AsinhBackward0", aliases=("arcsinh",), backward="grad * (self * self + 1).rsqrt()",
      float="asinhf(x)", double="asinh(x)")
unary("acosh", "FLOAT", "tensorlib.tensor([1.]).acosh().tolist()", "[0.0]",
      node="AcoshBackward0", aliases=("arccosh",), backward="grad * (self * self - 1).rsqrt()",
      float="acoshf(x)", double="acosh(x)")
unary("atanh", "FLOAT", "tensorlib.tensor([0.]).atanh().tolist()", "[0.0]",
      node="AtanhBackward0", aliases=("arctanh",), backward="grad / (1 - self * self)",
      float="atanhf(x)", double="atanh(x)")
unary("tanh", "FLOAT", "tensorlib.tensor([0.]).tanh().tolist()", "[0.0]",
      node="TanhBackward0", backward="grad * (1 - result * result)",
      float="tl_tanhf(x)", double="tl_tanh(x)")
unary("sigmoid", "FLOAT", "tensorlib.tensor([0.]).sigmoid().tolist()", "[0.5]",
      node="SigmoidBackward0", backward="grad * result * (1 - result)",
      float="tl_sigmoidf(x)", double="tl_sigmoid(x)")
unary("erf", "FLOAT", "tensorlib.tensor([0.]).erf().tolist()", "[0.0]",
      node="ErfBackward0", backward="grad * 1.1283791670955126 * (-self * self).exp()",
      float="tl_erff(x)", double="tl_erf(x)")
unary("erfc", "FLOAT", "tensorlib.tensor([0.]).erfc().tolist()", "[1.0]",
      node="ErfcBackward0", backward="grad * -1.1283791670955126 * (-self * self).exp()",
      float="tl_erfcf(x)", double="tl_erfc(x)")
# relu selects x unless x < 0, as PyTorch: NaN and -0.0 pass through
unary("relu", "SAME", "tensorlib.tensor([-1., 2.]).relu().tolist()", "[0.0, 2.0]",
      impl="_relu({self}, {out}, {inplace})",       # (bool input raises, as PyTorch)
      node="ReluBackward0", backward="_relu_backward(grad, result)",
      int="x > 0 ? x : 0", float="x < 0 ? 0 : x", double="x < 0 ? 0 : x")
# silu and gelu are float-only in PyTorch (integers raise NotImplementedError)
unary("silu", "SAME", "tensorlib.tensor([0.]).silu().tolist()", "[0.0]",
      node="SiluBackward0", backward="_silu_backward(grad, self)",
      float="tl_siluf(x)", double="tl_silu(x)")
# rounding: integers are already integral
unary("floor", "SAME", "tensorlib.tensor([1.5, -1.5]).floor().tolist()", "[1.0, -2.0]",
      node="FloorBackward0", backward="_zeros_grad(grad)", int="x", float="floorf(x)", double="floor(x)")
unary("ceil", "SAME", "tensorlib.tensor([1.5, -1.5]).ceil().tolist()", "[2.0, -1.0]",
      node="CeilBackward0", backward="_zeros_grad(grad)", int="x", float="ceilf(x)", double="ceil(x)")
unary("trunc", "SAME", "tensorlib.tensor([1.5, -1.5]).trunc().tolist()", "[1.0, -1.0]",
      node="TruncBackward0", aliases=("fix",), backward="_zeros_grad(grad)",
      int="x", float="truncf(x)", double="trunc(x)")
unary("isnan", "BOOL_OUT", "tensorlib.tensor([float('nan'), 1.]).isnan().tolist()", "[True, False]",
      inplace=False, bool="0", int="0", float="x != x", double="x != x")
unary("isinf", "BOOL_OUT", "tensorlib.tensor([float('inf'), 1.]).isinf().tolist()", "[True, False]",
      inplace=False, bool="0", int="0", float="fabsf(x) == INFINITY", double="fabs(x) == INFINITY")
unary("isfinite", "BOOL_OUT", "tensorlib.tensor([float('inf'), 1.]).isfinite().tolist()",
      "[False, True]", inplace=False,
      impl="_unary(OP_ISFINITE, _history_first({self}), {out}, {inplace})",
      bool="1", int="1", float="fabsf(x) < INFINITY", double="fabs(x) < INFINITY")
unary("signbit", "BOOL_OUT", "tensorlib.tensor([-0., 1.]).signbit().tolist()", "[True, False]",
      inplace=False, bool="x < 0", int="x < 0", float="signbit(x) != 0", double="signbit(x) != 0")
unary("logical_not", "BOOL_OUT", "tensorlib.tensor([0, 3]).logical_not().tolist()", "[True, False]",
      **_all("x == 0"))
unary("bitwise_not", "INT", "tensorlib.tensor([0]).bitwise_not().tolist()", "[-1]",
      operators=(("__invert__", "self", False),),
      bool="!x", int="~x")

OPS += [
    op("add", "object self, object other, *, Scalar alpha=1, object out=None", FMI,
       operators=slots("add", "same"),
       kernels=[kernel("add", "binary", "SAME", pre="ALPHA", bool="(x | y) != 0",
                       **_ints_floats("x + alpha * y"))],
       impl="_add({self}, {other}, {alpha}, {out}, {inplace})", node="AddBackward0",
       backward={'self': 'grad', 'other': '_scale(grad, alpha)'},
       doc="``input + alpha * other`` with broadcasting and type promotion.\n\n"
           "    >>> tensorlib.tensor([1, 2]).add(tensorlib.tensor([10, 20]), alpha=2).tolist()\n"
           "    [21, 42]"),
    op("sub", "object self, object other, *, Scalar alpha=1, object out=None", FMI,
       operators=slots("sub"),
       kernels=[kernel("sub", "binary", "NO_BOOL", pre="ALPHA", **_ints_floats("x - alpha * y"))],
       aliases=("subtract",),
       impl="_add({self}, {other}, {alpha}, {out}, {inplace}, True)", node="SubBackward0",
       backward={'self': 'grad', 'other': '_scale(grad, -alpha)'},
       doc="``input - alpha * other``.\n\n    >>> tensorlib.tensor([5]).sub(2).tolist()\n    [3]"),
    op("rsub", "Tensor self, object other, *, Scalar alpha=1", F,
       operators=(("__rsub__", "self, other", False),),
       impl="_add({other}, {self}, {alpha}, None, False, True)", node="RsubBackward0",
       node_if=(("RsubBackward1", "not isinstance(other, TensorBase)"),),
       backward={'self': '_scale(grad, -alpha)', 'other': 'grad'},
       doc="``other - alpha * input``.\n\n"
           "    >>> tensorlib.rsub(tensorlib.tensor([1]), 5).tolist()\n    [4]"),
    op("div", "object self, object other, *, str? rounding_mode=None, object out=None", FMI,
       # (__rtruediv__ is reciprocal then mul, as PyTorch: tensor.pyx)
       operators=(("__truediv__", "self, other", False), ("__itruediv__", "self, other", True)),
       kernels=[kernel("div", "binary", "FLOAT", float="x / y", double="x / y"),
                # integer division by zero raises before the loop runs (IDIV_*: MIN / -1)
                kernel("div_trunc", "binary", "SAME", uint8="UDIV(x, y)",
                       int="IDIV_TRUNC({T}, x, y)", float="trunc(x / y)", double="trunc(x / y)"),
                kernel("div_floor", "binary", "SAME", uint8="UDIV(x, y)",
                       int="IDIV_FLOOR({T}, x, y)", float="py_floordivf(x, y)",
                       double="py_floordiv(x, y)")],
       aliases=("divide", "true_divide"),
       impl="_div({self}, {other}, {rounding_mode}, {out}, {inplace})",
       node="DivBackward0", node_if=(("DivBackward2", "rounding_mode is not None"),),
       backward={'self': '(grad / other) if rounding_mode is None else _zeros_grad(grad)',
                 # (self / other) / other, not self / other^2: other^2 overflows at half
                 # the exponent range, and x / x gives exactly opposite terms
                 'other': '(-grad * ((self / other) / other)) if rounding_mode is None '
                          'else _zeros_grad(grad)'},
       doc="True division (integers give floats), "
           "or rounded with ``rounding_mode`` 'trunc'/'floor'.\n\n"
           "    >>> tensorlib.tensor([7, -7]).div(2, rounding_mode='floor').tolist()\n    [3, -4]"),
    op("floor_divide", "object self, object other, *, object out=None", FMI,
       operators=slots("floordiv", "swap"),
       impl="_int_safe_binary(OP_DIV_FLOOR, {self}, {other}, {out}, {inplace})",
       # PyTorch records the op (its result requires grad) with a node named NotImplemented
       # whose backward raises; that name would shadow the builtin as a generated module
       # global, so the class is made by hand in elementwise.pxi (node_if picks it always)
       node="FloorDivideBackward0", node_if=(("_NotImplementedNode", "True"),),
       backward={'self': '_derivative_not_implemented("aten::floor_divide")',
                 'other': '_derivative_not_implemented("aten::floor_divide")'},
       doc="Division rounded toward negative infinity (Python's ``//``).\n\n"
           "    >>> tensorlib.tensor([-7]).floor_divide(2).tolist()\n    [-4]"),
    op("remainder", "object self, object other, *, object out=None", FMI,
       operators=slots("mod", "swap"),
       kernels=[kernel("remainder", "binary", "SAME", uint8="UMOD(x, y)", int="IMOD_PY({T}, x, y)",
                       float="py_modf(x, y)", double="py_mod(x, y)")],
       impl="_int_safe_binary(OP_REMAINDER, {self}, {other}, {out}, {inplace})",
       # a number % tensor is PyTorch's remainder.Scalar_Tensor, recorded with a node named
       # NotImplemented whose backward raises (see floor_divide)
       node="RemainderBackward0",
       node_if=(("_NotImplementedNode", "not isinstance(self, TensorBase)"),
                ("RemainderBackward1", "isinstance(other, TensorBase)")),
       backward={'self': 'grad',
                 'other': "(-grad * self.div(other, rounding_mode='floor') if isinstance(self, "
                          "TensorBase) else _derivative_not_implemented('aten::remainder'))"},
       doc="Python's modulus: the result has the sign of the divisor.\n\n"
           "    >>> tensorlib.tensor([-7]).remainder(3).tolist()\n    [2]"),
    op("fmod", "Tensor self, object other, *, object out=None", FMI,
       kernels=[kernel("fmod", "binary", "SAME", uint8="UMOD(x, y)", int="IMOD_C({T}, x, y)",
                       float="fmodf(x, y)", double="fmod(x, y)")],
       impl="_int_safe_binary(OP_FMOD, {self}, {other}, {out}, {inplace})", node="FmodBackward0",
       node_if=(("FmodBackward1", "isinstance(other, TensorBase)"),),
       backward={'self': 'grad', 'other': "-grad * self.div(other, rounding_mode='trunc')"},
       doc="C's modulus: the result has the sign of the dividend.\n\n"
           "    >>> tensorlib.tensor([-7]).fmod(3).tolist()\n    [-1]"),
    op("pow", "object self, object exponent, *, object out=None", FMI,
       operators=slots("pow", "swap"),
       kernels=[kernel("pow", "binary", "SAME", int="ipow((int64_t)x, (int64_t)y)",
                       float="powf_(x, y)", double="pow_(x, y)")],
       impl="_pow({self}, {exponent}, {out}, {inplace})", node="PowBackward0",
       node_if=(("PowBackward2", "not isinstance(self, TensorBase)"),
                ("PowBackward1", "isinstance(exponent, TensorBase)")),
       backward={'self': '_pow_backward_self(grad, self, exponent)',
                 'exponent': '_pow_backward_exponent(grad, self, exponent, result)'},
       doc="``input ** exponent`` (either may be a number).\n\n"
           "    >>> tensorlib.pow(tensorlib.tensor([2, 3]), 2).tolist()\n    [4, 9]"),
    op("round", "Tensor self, *, int decimals=0, object out=None", FMI,
       kernels=[kernel("round", "unary", "SAME", int="x", float="nearbyintf(x)",
                       double="nearbyint(x)"),
                # scale by P(0) = 10^|decimals|, round half to even, unscale (P(1): decimals < 0)
                kernel("round_decimals", "unary", "SAME", error_name="round",
                       pre={"float": "const f32 ten = (f32)P(0); const int neg = P(1) != 0",
                            "double": "const f64 ten = P(0); const int neg = P(1) != 0"},
                       float="neg ? nearbyintf(x / ten) * ten : nearbyintf(x * ten) / ten",
                       double="neg ? nearbyint(x / ten) * ten : nearbyint(x * ten) / ten")],
       impl="_round({self}, {decimals}, {out}, {inplace})", node="RoundBackward0",
       node_if=(("RoundBackward1", "decimals != 0"),), backward={'self': '_zeros_grad(grad)'},
       doc="Round half to even (to ``decimals`` places).\n\n"
           "    >>> tensorlib.tensor([0.5, 1.5, 2.567]).round(decimals=1).tolist()[2]\n    2.6"),
    op("frac", "Tensor self, *, object out=None", FMI, impl="_frac({self}, {out}, {inplace})",
       kernels=[kernel("frac", "unary", "SAME", float="x - truncf(x)", double="x - trunc(x)")],
       node="FracBackward0", backward={'self': 'grad'},
       doc="Fractional part, ``x - trunc(x)``.\n\n"
           "    >>> tensorlib.tensor([1.25, -1.25]).frac().tolist()\n    [0.25, -0.25]"),
    # eps clamps the input to [eps, 1 - eps] first; without it the bounds are -inf and inf
    op("logit", "Tensor self, object eps=None, *, object out=None", FMI,
       kernels=[kernel("logit", "unary", "FLOAT",
                       pre={"float": "const f32 lo = (f32)P(0); const f32 hi = (f32)P(1)",
                            "double": "const f64 lo = P(0); const f64 hi = P(1)"},
                       float="tl_logf((x < lo ? lo : (x > hi ? hi : x)) / (1 - (x < lo ? lo : (x > hi ? hi : x))))",
                       double="tl_log((x < lo ? lo : (x > hi ? hi : x)) / (1 - (x < lo ? lo : (x > hi ? hi : x))))")],
       impl="_unary_params(OP_LOGIT, {self}, {out}, {inplace}, (float('-inf'), float('inf')) "
            "if {eps} is None else ({eps}, 1.0 - {eps}))",
       node="LogitBackward0",
       backward={'self': "where((self < (0 if eps is None else eps)) | "
                         "(self > (1 if eps is None else 1 - eps)), "
                         "float('nan') if eps is None else 0.0, grad / (self * (1 - self)))"},
       doc="``log(x / (1 - x))``, of x clamped to [eps, 1 - eps] when ``eps`` is given.\n\n"
           "    >>> tensorlib.tensor([0.5, 0.75]).logit().tolist()\n    [0.0, 1.0986123085021973]"),
    op("nan_to_num",
       "Tensor self, float? nan=0.0, float? posinf=None, float? neginf=None, *, object out=None",
       FMI,
       kernels=[kernel("nan_to_num", "unary", "SAME",
                       pre={"float": "const f32 nv = (f32)P(0); const f32 pv = (f32)P(1); "
                                     "const f32 mv = (f32)P(2)",
                            "double": "const f64 nv = P(0); const f64 pv = P(1); const f64 mv = "
                                      "P(2)"},
                       float="x != x ? nv : (x == INFINITY ? pv : (x == -INFINITY ? mv : x))",
                       double="x != x ? nv : (x == INFINITY ? pv : (x == -INFINITY ? mv : x))")],
       impl="_nan_to_num({self}, {nan}, {posinf}, {neginf}, {out}, {inplace})",
       node="NanToNumBackward0", backward={'self': 'grad * self.isfinite()'},
       doc="Replace NaN, +inf and -inf (by default with 0 and the dtype's extremes).\n\n"
           "    >>> tensorlib.tensor([float('nan'), 1.]).nan_to_num().tolist()\n    [0.0, 1.0]"),
    op("clamp", "Tensor self, object min=None, object max=None, *, object out=None", FMI,
       aliases=("clip",),
       parse="{min}, {max} = _clamp_overload({self}, {min}, {max}, {inplace})",
       impl="_clamp({self}, {min}, {max}, {out}, {inplace})", node="ClampBackward1",
       node_if=(("ClampBackward0", "isinstance(min, TensorBase) or isinstance(max, TensorBase)"),),
       backward={'self': '_clamp_backward(grad, self, min, max)',
                 'min': '_clamp_bound_backward(grad, self, min, False, max)',
                 'max': '_clamp_bound_backward(grad, self, max, True, min)'},
       doc="Limit values to [min, max] (numbers or tensors; either may be None).\n\n"
           "    >>> tensorlib.tensor([-2, 0, 5]).clamp(-1, 3).tolist()\n    [-1, 0, 3]"),
    op("clamp_min", "Tensor self, object min, *, object out=None", FMI,
       impl="_clamp({self}, {min}, None, {out}, {inplace})", node="ClampMinBackward0",
       node_if=(("ClampMinBackward1", "isinstance(min, TensorBase)"),),
       backward={'self': '_clamp_backward(grad, self, min, None)',
                 'min': '_clamp_bound_backward(grad, self, min, False)'},
       doc="``clamp(min=min)``.\n\n    >>> tensorlib.tensor([-2, 5]).clamp_min(0).tolist()\n"
           "    [0, 5]"),
    op("clamp_max", "Tensor self, object max, *, object out=None", FMI,
       impl="_clamp({self}, None, {max}, {out}, {inplace})", node="ClampMaxBackward0",
       node_if=(("ClampMaxBackward1", "isinstance(max, TensorBase)"),),
       backward={'self': '_clamp_backward(grad, self, None, max)',
                 'max': '_clamp_bound_backward(grad, self, max, True)'},
       doc="``clamp(max=max)``.\n\n    >>> tensorlib.tensor([-2, 5]).clamp_max(0).tolist()\n"
           "    [-2, 0]"),
    op("lerp", "Tensor self, object end, object weight, *, object out=None", FMI,
       impl="_lerp({self}, {end}, {weight}, {out}, {inplace})", node="LerpBackward0",
       node_if=(("LerpBackward1", "isinstance(weight, TensorBase)"),),
       backward={'self': 'grad * (1 - weight)', 'end': 'grad * weight',
                 'weight': 'grad * (end - self)'},
       doc="Linear interpolation ``input + weight * (end - input)``.\n\n"
           "    >>> tensorlib.tensor([0.]).lerp(tensorlib.tensor([10.]), 0.25).tolist()\n"
           "    [2.5]"),
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
           "    >>> tensorlib.zeros(3).masked_fill(tensorlib.tensor([True, False, True]), "
           "7).tolist()\n    [7.0, 0.0, 7.0]"),
    op("equal", "Tensor self, object other", FM, impl="_equal({self}, {other})",
       doc="True when both tensors have the same shape and elements.\n\n"
           "    >>> tensorlib.equal(tensorlib.tensor([1, 2]), tensorlib.tensor([1, 2]))\n    True"),
    op("isclose",
       "Tensor self, object other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False", FM,
       impl="_isclose({self}, {other}, {rtol}, {atol}, {equal_nan})",
       doc="``|input - other| <= atol + rtol * |other|`` elementwise.\n\n"
           "    >>> tensorlib.isclose(tensorlib.tensor([1.0]), "
           "tensorlib.tensor([1.0 + 1e-9])).tolist()\n    [True]"),
    op("allclose",
       "Tensor self, object other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False", FM,
       impl="_allclose({self}, {other}, {rtol}, {atol}, {equal_nan})",
       doc="Whether every element is close (see isclose).\n\n"
           "    >>> tensorlib.allclose(tensorlib.tensor([1.0]), tensorlib.tensor([1.00001]))\n"
           "    True"),
    # activations (also in tensorlib.nn.functional)
    op("leaky_relu", "Tensor self, float negative_slope=0.01, object inplace=False", F,
       kernels=[kernel("leaky_relu", "unary", "SAME",
                       pre={"float": "const f32 slope = (f32)P(0)",
                            "double": "const f64 slope = P(0)"},
                       float="x > 0 ? x : x * slope", double="x > 0 ? x : x * slope")],
       impl="_float_only(OP_LEAKY_RELU, {self}, None, {inplace}, ({negative_slope},))",
       node="LeakyReluBackward0", backward={'self': 'where(self > 0, grad, grad * negative_slope)'},
       doc="``x`` if x > 0 else ``negative_slope * x``.\n\n"
           "    >>> tensorlib.leaky_relu(tensorlib.tensor([-1., 1.]), 0.1).tolist()\n"
           "    [-0.10000000149011612, 1.0]"),
    op("elu", "Tensor self, float alpha=1.0, object inplace=False", F,
       kernels=[kernel("elu", "unary", "SAME",
                       pre={"float": "const f32 al = (f32)P(0); const f32 sc = (f32)P(1); "
                                     "const f32 is = (f32)P(2)",
                            "double": "const f64 al = P(0); const f64 sc = P(1); const f64 is = "
                                      "P(2)"},
                       float="x > 0 ? x * sc : al * sc * tl_expm1f(x * is)",
                       double="x > 0 ? x * sc : al * sc * tl_expm1(x * is)")],
       impl="_float_only(OP_ELU, {self}, None, {inplace}, ({alpha}, 1.0, 1.0))",
       node="EluBackward0", backward={'self': '_elu_backward(grad, self, alpha)'},
       doc="``x`` if x > 0 else ``alpha * (exp(x) - 1)``.\n\n"
           "    >>> tensorlib.elu(tensorlib.tensor([0., 1.])).tolist()\n    [0.0, 1.0]"),
    op("gelu", "Tensor self, *, str approximate='none'", F,
       kernels=[kernel("gelu", "unary", "SAME", float="tl_geluf(x)", double="tl_gelu(x)"),
                kernel("gelu_tanh", "unary", "SAME", error_name="gelu", float="tl_gelu_tanhf(x)",
                       double="tl_gelu_tanh(x)")],
       impl="_gelu({self}, {approximate}, None, False)", node="GeluBackward0",
       backward={'self': '_gelu_backward(grad, self, approximate)'},
       doc="Gaussian error linear unit (exact, or ``approximate='tanh'``).\n\n"
           "    >>> tensorlib.gelu(tensorlib.tensor([0.])).tolist()\n    [0.0]"),
    op("softplus", "Tensor self, float beta=1.0, float threshold=20.0", F,
       kernels=[kernel("softplus", "unary", "SAME",
                       pre={"float": "const f32 beta = (f32)P(0); const f32 th = (f32)P(1)",
                            "double": "const f64 beta = P(0); const f64 th = P(1)"},
                       float="tl_softplusf(x, beta, th)", double="tl_softplus(x, beta, th)")],
       impl="_float_only(OP_SOFTPLUS, {self}, None, False, ({beta}, {threshold}))",
       node="SoftplusBackward0",
       backward={'self': '_softplus_backward(grad, self, beta, threshold)'},
       doc="``log(1 + exp(beta * x)) / beta`` (linear above ``threshold``).\n\n"
           "    >>> round(tensorlib.softplus(tensorlib.tensor([0.])).item(), 4)\n    0.6931"),
    op("hardtanh", "Tensor self, float min_val=-1.0, float max_val=1.0, object inplace=False", F,
       kernels=[kernel("hardtanh", "unary", "SAME",
                       pre={"float": "const f32 lo = (f32)P(0); const f32 hi = (f32)P(1)",
                            "double": "const f64 lo = P(0); const f64 hi = P(1)"},
                       float="x < lo ? lo : (x > hi ? hi : x)",
                       double="x < lo ? lo : (x > hi ? hi : x)")],
       impl="_hardtanh({self}, {min_val}, {max_val}, {inplace})",
       node="HardtanhBackward0", backward={'self': 'grad * ((self > min_val) & (self < max_val))'},
       doc="Clamp to [min_val, max_val].\n\n"
           "    >>> tensorlib.hardtanh(tensorlib.tensor([-3., 0.5])).tolist()\n    [-1.0, 0.5]"),
]
