"""The declaration helper ``op`` and the variant and keyword-tail shorthands every family uses."""


F = "function"
M = "method"
FM = "function method"

# Keyword tails shared by the factory functions.
FACTORY = "dtype? dtype=None, object layout=None, device? device=None, bool requires_grad=False, bool pin_memory=False"
LIKE = "dtype? dtype=None, object layout=None, device? device=None, bool requires_grad=False, object memory_format=None"


def op(name, sig, variants=FM, impl=None, doc=None, aliases=(), node=None, view_of=None,
       backward=None, input_name="input", outputs="single", node_if=(), inplace_view=False,
       record_inplace_only=False, records_itself=False):
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
    is PyTorch's clone + _unsafe_view); the op's node is recorded only when it did not."""
    return dict(name=name, sig=sig, variants=variants, impl=impl, doc=doc, aliases=aliases,
                node=node, view_of=view_of, backward=backward, input_name=input_name,
                outputs=outputs, node_if=node_if, inplace_view=inplace_view,
                record_inplace_only=record_inplace_only, records_itself=records_itself)


FMI = "function method inplace"
