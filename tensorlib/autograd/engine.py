"""The backward engine: walks the recorded graph from the outputs to the leaves.

Iterative and dependency-counted: a node runs once every node that feeds it a gradient has
run; among ready nodes the one created last (highest sequence number) runs first. Memory is
handed back as early as possible: each gradient buffer is dropped as soon as it is passed on,
and each node's saved tensors are released right after it ran (unless retain_graph=True), so
memory falls during backward, not after it.
"""
import heapq
import sys as _sys
import threading

from tensorlib._core import tensor as _C
from tensorlib._core.allocator import ROLE_NAMES
from tensorlib._core.tensor import TensorBase

__all__ = ["run_backward", "current_node"]

_ROLE_GRADIENT = ROLE_NAMES.index("gradient")


class _Current(threading.local):
    node = None


_current = _Current()


def current_node():
    """The node whose backward is running on this thread (None outside backward): the memory
    profiler attributes what it allocates to the node's forward source line."""
    return _current.node


def _mark_gradient(t):
    if t is not None:
        t.untyped_storage().role = _ROLE_GRADIENT


def _dense_like(g, var):
    """Whether ``g`` is laid out as ``var``'s gradient must be (PyTorch's layout contract for
    ``.grad``): not expanded, with ``var``'s strides when those are dense."""
    if var.is_contiguous() or not _is_dense(var):       # (same shape: same strides)
        return g.is_contiguous()
    return g.stride() == var.stride()


def _is_dense(t):
    """Non-overlapping and dense: the strides, sorted, are the running products of the sizes."""
    expected = 1
    for size, stride in sorted(zip(t.shape, t.stride()), key=lambda p: p[1]):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _fresh_grad(g, var):
    """A copy of ``g`` that nothing else references, with ``var``'s strides when those are
    dense (so a channels-last or transposed parameter gets a gradient laid out like it)."""
    if _is_dense(var):
        out = _C._GENERATED_FUNCTIONS["empty_strided"](
            tuple(var.shape), var.stride(), dtype=g.dtype, device=g.device)
        return out.copy_(g)
    # a leaf that is not dense: a contiguous copy (contiguous() of a non-contiguous g is one)
    return g.clone() if g.is_contiguous() else g.contiguous()


# References to the incoming gradient inside _accumulate_grad when nothing else holds it: the
# engine's list, the local name and getrefcount's argument.
_SOLE_REFS = 3


def _memory_unshared(g):
    """Whether nothing but ``g`` (and, for a view, its root) holds ``g``'s memory, and all of
    it: then ``g`` can become ``.grad`` and later be added to in place. A view qualifies when
    its root is held by it alone and it spans the root's whole storage (the gradient of
    Linear's weight, the transpose of a product, is such a view)."""
    storage = g.untyped_storage()
    base = g._base
    if base is None:
        return _sys.getrefcount(storage) <= 3       # g's field, this name, the argument
    return (_sys.getrefcount(base) <= 3 and _sys.getrefcount(storage) <= 4
            and g.storage_offset() == 0 and storage.nbytes() == g.numel() * g.element_size())


# Backward calls from several threads may reach the same leaf: its .grad is read, added to and
# replaced under this lock (the in-place add of a large gradient runs without the GIL), so no
# contribution is lost, as PyTorch's AccumulateGrad locks. Waiting for it releases the GIL.
_ACCUMULATE_LOCK = threading.Lock()


def _accumulate_grad(node, grads):
    """AccumulateGrad's step, PyTorch's rules: the first gradient is taken as ``.grad`` when
    nothing else references it and it is laid out like the leaf, else copied (so two leaves
    never share a gradient buffer, and an expanded gradient is never stored); later ones are
    added in place (out of place under ``create_graph``, which keeps their graph)."""
    var = node.variable
    g = grads[0]
    # a leaf that stopped requiring grad after the graph was built takes nothing
    if g is None or not var.requires_grad:
        return ()
    with _ACCUMULATE_LOCK:
        if _C._is_grad_enabled():               # create_graph: keep the graph of the gradient
            var.grad = _fresh_grad(g, var) if var.grad is None else var.grad + g
        elif var.grad is None:
            steal = (_sys.getrefcount(g) <= _SOLE_REFS and _dense_like(g, var)
                     and _memory_unshared(g))
            var.grad = g.detach() if steal else _fresh_grad(g, var)
        else:
            # in place whatever the buffer is (as PyTorch: its version counts the write)
            var.grad.add_(g)
        _mark_gradient(var.grad)
    return ()


_C._register_accumulate_fn(_accumulate_grad)


def _run_tensor_hooks(hooks, grad, where):
    for hook in list(hooks):
        new = hook(grad)
        if new is not None:
            if not isinstance(new, TensorBase):
                raise TypeError(f"hook returned an object of type {type(new).__name__}, expected a Tensor")
            if new.shape != grad.shape:
                raise RuntimeError(f"hook '{getattr(hook, '__name__', hook)}' has changed the size of "
                                   f"value: expected {list(grad.shape)}, got {list(new.shape)} ({where})")
            grad = new
    return grad


def _fit(g, meta, node, i):
    """Bring an input gradient to the input's shape (sum broadcast dims) and dtype."""
    shape, dtype = meta
    if g.shape != shape:
        try:
            g = _C._sum_to_shape(g, shape)
        except RuntimeError:
            raise RuntimeError(f"Function {type(node).__name__} returned an invalid gradient at index "
                               f"{i} - got {list(g.shape)} but expected shape compatible with "
                               f"{list(shape)}") from None
    if g.dtype is not dtype:
        g = g.to(dtype)
    return g


def _collect_dependencies(roots):
    """How many gradient edges lead into each node reachable from the roots (iterative).
    A node is first seen when it enters ``deps`` (roots: when they start the walk)."""
    deps = {}
    stack = list(roots)
    roots = set(roots)
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_edges:
            if nxt is None:
                continue
            n = deps.get(nxt)
            if n is None:
                deps[nxt] = 1
                if nxt not in roots:
                    stack.append(nxt)
            else:
                deps[nxt] = n + 1
    return deps


def run_backward(outputs, grad_outputs, retain_graph, create_graph, inputs=None,
                 allow_unused=False, accumulate=True):
    """Propagate ``grad_outputs`` from ``outputs`` through the graph.

    accumulate=True (Tensor.backward): add into the ``.grad`` of the leaves (only those in
    ``inputs`` when given). accumulate=False (autograd.grad): return the gradients of
    ``inputs`` instead, touching no ``.grad``.
    """
    roots, buffers = [], {}
    for i, (t, g) in enumerate(zip(outputs, grad_outputs)):
        if not isinstance(t, TensorBase):
            raise TypeError(f"element {i} of tensors is not a Tensor")
        node, nr = _C._edge(t) if t.requires_grad else (None, 0)
        if node is None:
            # (also a view that reads requires_grad=True with no edge of its own: made under
            # no_grad, or of a leaf that required grad only later; PyTorch says the same)
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is not None and g.dtype is not t.dtype:
            g = g.to(t.dtype)       # (as any gradient entering a node: its input's dtype)
        buf = buffers.setdefault(node, [None] * node._num_outputs)
        buf[nr] = g if buf[nr] is None else buf[nr] + g
        if node not in roots:
            roots.append(node)

    # What to capture (autograd.grad) or restrict accumulation to (backward(inputs=...)).
    capture = {}
    if inputs is not None:
        for k, t in enumerate(inputs):
            if not isinstance(t, TensorBase):
                raise TypeError(f"inputs must be Tensors, got {type(t).__name__}")
            if not t.requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            edge = _C._edge(t)
            capture.setdefault(edge, []).append(k)
    results = [None] * (len(inputs) if inputs is not None else 0)
    accumulate_only = None
    if accumulate and inputs is not None:
        accumulate_only = set(id(t) for t in inputs)

    deps = _collect_dependencies(roots)
    ready, counter = [], 0
    for node in roots:
        if deps.get(node, 0) == 0:
            heapq.heappush(ready, (-node._sequence_nr, counter, node))
            counter += 1

    prev_mode = _C._set_grad_enabled(create_graph)
    prev_node = _current.node
    # bound once: this loop runs per node
    heappop, heappush, AccumulateGrad = heapq.heappop, heapq.heappush, _C.AccumulateGrad
    anomaly, route = _C._is_anomaly_enabled(), _C._route_grads
    track = _C._profiling_depth() > 0        # the profiler asks which node is running
    handoff = None        # the one node that became ready while none was waiting: run next
    try:
        while True:
            if handoff is not None:
                node, handoff = handoff, None
            elif ready:
                node = heappop(ready)[2]
            else:
                break
            if track:
                _current.node = node
            grads = buffers.pop(node, None)
            if grads is None:
                grads = [None] * node._num_outputs
            # tensor hooks on this node's outputs, then capture for autograd.grad
            if node._pre_hooks:
                for nr, hooks in node._pre_hooks.items():
                    if grads[nr] is not None:
                        grads[nr] = _run_tensor_hooks(hooks, grads[nr], type(node).__name__)
            if node._node_pre_hooks:
                for hook in node._node_pre_hooks:
                    new = hook(tuple(grads))
                    if new is not None:
                        grads = list(new)
            is_acc = type(node) is AccumulateGrad
            if is_acc:
                var_hooks = _C._tensor_hooks(node.variable)
                if var_hooks and grads[0] is not None:
                    grads[0] = _run_tensor_hooks(var_hooks, grads[0], "leaf")
            if capture:
                for nr in range(len(grads)):
                    ks = capture.get((node, nr))
                    if ks and grads[nr] is not None:
                        for k in ks:
                            results[k] = grads[nr]
            if is_acc:
                if accumulate and (accumulate_only is None or id(node.variable) in accumulate_only):
                    _accumulate_grad(node, grads)
                continue
            if (grads[0] is None) if len(grads) == 1 else all(g is None for g in grads):
                # no gradient reached this node: its inputs get none either
                in_grads = [None] * len(node.next_edges)
            else:
                try:
                    in_grads = node._fn(node, tuple(grads))
                except Exception as exc:
                    if node._trace:
                        raise type(exc)(f"{exc}\n\nThe forward call that created {type(node).__name__} "
                                        f"(anomaly mode):\n{node._trace}") from exc
                    raise
            if node._hooks:
                for hook in node._hooks:
                    new = hook(tuple(in_grads), tuple(grads))
                    if new is not None:
                        in_grads = new
            del grads
            if not retain_graph:
                node._release()
            if anomaly:
                _check_nan(node, in_grads)
            became = route(node, in_grads, buffers, deps, _fit)
            if became is not None:
                if len(became) == 1 and not ready:
                    # alone in line: it runs next without a trip through the heap (the same
                    # order: with nothing else ready it has the highest sequence number)
                    handoff = became[0]
                else:
                    for nxt in became:
                        heappush(ready, (-nxt._sequence_nr, counter, nxt))
                        counter += 1
            del in_grads
    finally:
        _C._set_grad_enabled(prev_mode)
        _current.node = prev_node

    if not accumulate:
        for k, r in enumerate(results):
            if r is None and not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been used "
                                   "in the graph. Set allow_unused=True if this is the desired behavior.")
            _mark_gradient(r)
        return tuple(results)
    return None


def _check_nan(node, in_grads):
    for g in in_grads:
        if g is not None and bool(g.isnan().any()):
            raise RuntimeError(f"Function '{type(node).__name__}' returned nan values in its "
                               f"output.")
