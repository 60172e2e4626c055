"""The declaration helper ``op`` and the variant and keyword-tail shorthands every family uses."""


F = "function"
M = "method"
FM = "function method"

# Keyword tails shared by the factory functions (PyTorch's take None for requires_grad and
# pin_memory there: ``bool?``).
FACTORY = ("dtype? dtype=None, object layout=None, device? device=None, bool? requires_grad=False, "
           "bool? pin_memory=False")
LIKE = ("dtype? dtype=None, object layout=None, device? device=None, bool? requires_grad=False, "
        "object memory_format=None")


def op(name, sig, variants=FM, impl=None, doc=None, aliases=(), node=None, view_of=None,
       backward=None, input_name="input", outputs="single", node_if=(), inplace_view=False,
       record_inplace_only=False, records_itself=False, kernels=(), operators=(), save_if=None,
       record_if=None, may_return_self=False, parse=None):
    """One declaration. ``backward`` maps each differentiable input to its gradient formula
    (tensorlib ops over ``grad``/``grads``, the inputs, ``result`` and ``X_sizes``-style
    metadata); what the node saves is derived from it (codegen.autograd_plan).
    ``outputs="multi"``: the op returns a tuple of tensors, each an output of the node.
    ``node_if``: ((node name, condition over the arguments), ...) for overloads PyTorch gives
    another node name (``sum(dim)`` is SumBackward1); the first true condition wins.
    ``inplace_view``: an in-place op that changes only the geometry (t_, squeeze_): the node
    replaces self's grad_fn, or on a view the grad_fn is regenerated from the base.
    ``record_inplace_only``: only the in-place variant is differentiable (``x.lt_(y)`` keeps
    x's float dtype; ``x.lt(y)`` is bool), so the out-of-place one records nothing.
    ``records_itself``: the implementation may record its own history (a copying ``reshape``
    is PyTorch's clone + _unsafe_view); the op's node is recorded only when it did not.
    ``kernels``: the elementwise C kernels the op runs (see ``kernel``).
    ``operators``: the Python operator slots of Tensor that run this op (see ``slots``).
    ``save_if``: {saved name: condition over the arguments}: save it only when the condition
    holds (batch norm's running statistics, updated in place by every training step, are
    needed only by the eval-mode backward).
    ``record_if``: a condition over the arguments: the op is differentiable only when it
    holds (``view(dtype)`` never is, ``view(shape)`` is).
    ``may_return_self``: PyTorch composes the op from others and hands back its input when
    there is nothing to do (``contiguous`` of a contiguous tensor): the inputs' histories are
    read only when the result is a new tensor, so a stale multi-output view passes through.
    ``parse``: a statement over the arguments run before anything else, for an overload
    PyTorch's argument parser picks by the arguments' kinds (``clamp(x, t0d, 1.5)`` is its
    Number overload: the 0-d tensor is read as a number, not recorded or saved)."""
    return dict(name=name, sig=sig, variants=variants, impl=impl, doc=doc, aliases=aliases,
                node=node, view_of=view_of, backward=backward, input_name=input_name,
                outputs=outputs, node_if=node_if, inplace_view=inplace_view,
                record_inplace_only=record_inplace_only, records_itself=records_itself,
                kernels=tuple(kernels), operators=tuple(operators), save_if=save_if or {},
                record_if=record_if, may_return_self=may_return_self, parse=parse)


FMI = "function method inplace"


# The dtype rules of elementwise.pxi (EwRule): how the loop and result dtypes follow from the
# promoted input dtype.
RULES = ("SAME", "FLOAT", "BOOL_OUT", "INT", "NO_BOOL")


def kernel(name, kind, rule, *, bool=None, uint8=None, int=None, float=None, double=None,
           pre=None, error_name=None):
    """An elementwise C kernel: from it codegen writes the typed loops, the ``tl_ew_<name>``
    loop table, its extern and the ``OP_<NAME>`` EwOp of elementwise.pxi.

    ``kind``: unary (``x``), binary (``x``, ``y``); ``rule``: one of ``RULES`` (BOOL_OUT loops
    write bool). The C expression per dtype class: ``bool``, ``int`` (every integer type;
    ``uint8`` overrides it for uint8), ``float`` (float32, also the loop of float16 and
    bfloat16) and ``double``; a class without one has no loop (NotImplementedError). ``{T}``
    in an expression is the loop's C type (i8, f32, ...). ``pre``: a statement run once per
    call: a macro name called with the type (``"ALPHA"``: ``ALPHA(i32)``) for every non-bool
    loop, or ``{class: statement}`` (``P(k)`` reads the op's k-th double parameter).
    ``error_name``: the op name in "not implemented" errors (default ``name``).

        >>> kernel("exp", "unary", "FLOAT", float="tl_expf(x)", double="tl_exp(x)")["name"]
        'exp'
    """
    if kind not in ("unary", "binary"):
        raise ValueError(f"{name}: unknown kernel kind {kind}")
    if rule not in RULES:
        raise ValueError(f"{name}: unknown rule {rule}")
    exprs = {"bool": bool, "uint8": uint8 if uint8 is not None else int, "int": int,
             "float": float, "double": double}
    return dict(name=name, kind=kind, rule=rule, exprs=exprs, pre=pre,
                error_name=error_name or name)


def slots(name, reflected=None, inplace=True):
    """The operator slots ``__<name>__``, ``__r<name>__`` and ``__i<name>__`` of an op taking
    (input, other): as (slot, operand order, in place). ``reflected``: None (no reflected
    slot), "same" (a commutative op: ``2 + x`` runs ``add(x, 2)``, as PyTorch) or "swap"
    (``2 // x`` runs ``floor_divide(2, x)``); ``inplace``: whether ``x //= y`` runs the op in
    place.

        >>> slots("floordiv", "swap")[1]
        ('__rfloordiv__', 'other, self', False)
    """
    out = [(f"__{name}__", "self, other", False)]
    if reflected:
        out.append((f"__r{name}__", "self, other" if reflected == "same" else "other, self", False))
    if inplace:
        out.append((f"__i{name}__", "self, other", True))
    return tuple(out)
