# Autograd recording primitives: grad mode (a C thread-local), Node, SavedTensor,
# AccumulateGrad and the helpers the generated op wrappers call behind one C branch
# ("grad enabled and an input requires grad"). The engine that walks the graph backwards is
# Python (tensorlib/autograd/engine.py); recording is here so the no-grad path never runs
# Python.
#
# No reference cycles: a node saving its own output keeps a grad_fn-less alias of it; a
# leaf's link to its AccumulateGrad is weak; the engine drops each gradient buffer as soon as
# it is handed on. Memory falls by reference counting alone.
# (included into tensor.pyx)
import weakref as _weakref
import traceback as _traceback
from threading import local as _threading_local

cdef extern from *:
    """
    static __thread int tl_grad_enabled = 1;
    static __thread int tl_inference = 0;
    """
    int tl_grad_enabled
    int tl_inference


# ---- memory-profiler support -----------------------------------------------------------------
# While a profile is active on a thread (tl_prof_depth > 0), the generated op wrappers name the
# op they run (for attribution of allocations) and new nodes record their forward source site
# (so allocations made during backward carry the forward line). Both are one C thread-local
# test otherwise.
cdef extern from *:
    """
    static __thread int tl_prof_depth = 0;
    """
    int tl_prof_depth


cdef bint _grad_on() noexcept nogil:
    """Grad mode on this thread (for the op-family modules: the thread-local is this one's)."""
    return tl_grad_enabled


cdef bint _prof_on() noexcept nogil:
    """Whether a memory profile is active on this thread."""
    return tl_prof_depth != 0

cdef object _site_fn = None                 # set by tensorlib.memory.profiler
from tensorlib._core.allocator import _set_current_op as _alloc_set_op


def _profiling_enter(site_fn):
    """A profile starts on this thread: ``site_fn()`` gives the user's current source site."""
    global tl_prof_depth, _site_fn
    _site_fn = site_fn
    tl_prof_depth += 1


def _profiling_exit():
    global tl_prof_depth
    if tl_prof_depth > 0:
        tl_prof_depth -= 1


def _profiling_depth():
    return tl_prof_depth


cdef object _op_enter(str name):
    return _alloc_set_op(name)


cdef int _op_exit(object prev) except -1:
    _alloc_set_op(prev)
    return 0


# ---- op tracing (tensorlib.onnx) -------------------------------------------------------------
# While a tracer is installed on a thread (tl_trace_on), the generated op wrappers report each
# top-level op call (its name, its arguments, its result) to it. Tracing is switched off for
# the duration of a reported op, so the ops it runs inside are its own business. One C
# thread-local test otherwise.
cdef extern from *:
    """
    static __thread int tl_trace_on = 0;
    """
    int tl_trace_on

_trace_state = _threading_local()


cdef bint _trace_on() noexcept nogil:
    """Whether a tracer wants this thread's op calls."""
    return tl_trace_on


cdef object _trace_enter():
    """The thread's tracer, with tracing off until ``_trace_exit`` (ops run inside an op are
    not reported)."""
    global tl_trace_on
    tl_trace_on = 0
    return _trace_state.tracer


cdef int _trace_exit(object tracer, str name, tuple names, tuple args, object result) except -1:
    global tl_trace_on
    tracer.record(name, names, args, result)     # (its own ops are not reported)
    tl_trace_on = 1
    return 0


def _set_tracer(tracer):
    """Install ``tracer`` on this thread (None removes it); returns the previous one. While
    installed, each top-level op call is reported as ``tracer.record(op, names, args,
    result)``."""
    global tl_trace_on
    prev = getattr(_trace_state, "tracer", None)
    _trace_state.tracer = tracer
    tl_trace_on = tracer is not None
    return prev


def _tracing_suspended(bint off):
    """Switch op reporting off (True) or back on (False) while a tracer is installed; returns
    whether it was on."""
    global tl_trace_on
    cdef bint prev = tl_trace_on
    tl_trace_on = (not off) and getattr(_trace_state, "tracer", None) is not None
    return prev


def _is_grad_enabled():
    return bool(tl_grad_enabled)


def _set_grad_enabled(bint mode):
    """Set this thread's grad mode; returns the previous one."""
    global tl_grad_enabled
    cdef bint prev = tl_grad_enabled
    tl_grad_enabled = mode
    return prev


def _is_inference_mode():
    return bool(tl_inference)


def _set_inference_mode(bint mode):
    global tl_inference
    cdef bint prev = tl_inference
    tl_inference = mode
    return prev


cdef int64_t _sequence_counter = 0
cdef bint _anomaly_enabled = False


def _set_anomaly_enabled(bint mode):
    global _anomaly_enabled
    cdef bint prev = _anomaly_enabled
    _anomaly_enabled = mode
    return prev


def _is_anomaly_enabled():
    return _anomaly_enabled


# saved_tensors_hooks: a per-thread stack of (pack, unpack) pairs (Python-level state, kept
# in a threading.local owned by tensorlib.autograd.graph and registered here)
cdef object _hooks_state = None


def _register_saved_hooks_state(state):
    global _hooks_state
    _hooks_state = state


cdef class AutogradMeta:
    """Per-tensor autograd extras, created only for tensors that take part in autograd.
    (Attributes and the CREATION_* values of ``creation``: tensor.pxd.)"""


cdef inline AutogradMeta _meta(TensorBase t):
    cdef AutogradMeta m = t._autograd_meta
    if m is None:
        m = AutogradMeta.__new__(AutogradMeta)
        t._autograd_meta = m
    return m


cdef class Node:
    """A step of the recorded graph: how to turn the gradient of an op's outputs into the
    gradients of its inputs. ``type(node).__name__`` is PyTorch's name (``MulBackward0``)."""
    # (attributes: tensor.pxd)

    def name(self):
        """The node's type name, as in PyTorch (e.g. ``"MulBackward0"``)."""
        return type(self).__name__

    @property
    def next_functions(self):
        """((node, input_nr), ...) for each input: where gradients flow next. An argument
        given as a Python number where PyTorch has a Scalar overload (``clamp(x, 0, 1)``,
        ``x ** 2``) is not an input there, so it is not listed."""
        if not self._scalar_edges:
            return self.next_edges
        return tuple([e for i, e in enumerate(self.next_edges) if not (self._scalar_edges >> i) & 1])

    def register_hook(self, fn):
        """Run ``fn(grad_inputs, grad_outputs)`` after this node computes; it may return new
        grad_inputs."""
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(fn)
        return _RemovableHandle(self._hooks, fn)

    def register_prehook(self, fn):
        """Run ``fn(grad_outputs)`` before this node computes; it may return new grad_outputs."""
        if self._node_pre_hooks is None:
            self._node_pre_hooks = []
        self._node_pre_hooks.append(fn)
        return _RemovableHandle(self._node_pre_hooks, fn)

    @property
    def metadata(self):
        return {}

    def __call__(self, *grads):
        return self._fn(self, grads)

    def _release(self):
        """Free the saved tensors (after backward ran, unless retain_graph). Saved values that
        hold no tensor (a dim, a size) stay: as in PyTorch, a node that saved only those runs
        again, and only reading a freed tensor raises."""
        if self._saved is not None:
            self._saved = tuple([_RELEASED if _holds_tensor(x) else x for x in self._saved])
        self._released = True

    @property
    def _raw_saved_tensors(self):
        return tuple([s for s in (self._saved or ()) if isinstance(s, SavedTensor)])

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"


@cython.final
cdef class _RemovableHandle:
    """Returned by register_hook: ``handle.remove()`` unregisters the hook."""
    cdef list _where
    cdef object _fn

    def __init__(self, list where, fn):
        self._where = where
        self._fn = fn

    def remove(self):
        try:
            self._where.remove(self._fn)
        except ValueError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.remove()


class AccumulateGrad(Node):
    """The sink of a leaf tensor's gradient: adds it into ``variable.grad``."""
    __slots__ = ("variable",)


cdef object _ACCUMULATE_GRAD_FN = None      # set by the engine module (accumulation logic)


def _register_accumulate_fn(fn):
    global _ACCUMULATE_GRAD_FN
    _ACCUMULATE_GRAD_FN = fn


cdef object _grad_accumulator(TensorBase leaf):
    """The leaf's AccumulateGrad, made on first use; the leaf only keeps a weak link."""
    cdef AutogradMeta m = _meta(leaf)
    acc = m.grad_accumulator() if m.grad_accumulator is not None else None
    if acc is None:
        acc = Node.__new__(AccumulateGrad)
        (<Node>acc).next_edges = ()
        (<Node>acc)._input_meta = ()
        (<Node>acc)._fn = _ACCUMULATE_GRAD_FN
        (<Node>acc)._num_outputs = 1
        (<Node>acc)._sequence_nr = INT64_MAX       # leaves run last... and before nothing
        acc.variable = leaf
        m.grad_accumulator = _weakref.ref(acc)
    return acc


cdef tuple _edge_of(object x):
    """Where the gradient of input x goes: its grad_fn, its AccumulateGrad, or nowhere."""
    cdef TensorBase t
    if not isinstance(x, TensorBase):
        return (None, 0)
    t = <TensorBase>x
    if not _req(t):
        return (None, 0)
    if t._view_base is not None and t._autograd_meta is not None:
        _view_grad_fn(t)
    if t._grad_fn is not None:
        return (t._grad_fn, 0 if t._autograd_meta is None else (<AutogradMeta>t._autograd_meta).output_nr)
    if not t._requires_grad:
        return (None, 0)        # (a view that requires grad through its base only)
    return (_grad_accumulator(t), 0)


cdef int _read_history(object x) except -1:
    """Bring a view's history up to date before a recorded op runs, as PyTorch's autograd
    layer collects its edges first: a split/unbind output whose base was written since raises
    its error before the op checks its own arguments."""
    if _req(x) and \
            (<TensorBase>x)._view_base is not None and (<TensorBase>x)._autograd_meta is not None:
        _view_grad_fn(<TensorBase>x)
    return 0


cdef int _read_histories(tuple args) except -1:
    """_read_history of each argument (a tensor, or a list/tuple of them) that requires grad:
    a recorded op's inputs, before the op runs (the generated ``_call_<op>``)."""
    for a in args:
        if isinstance(a, (list, tuple)):
            for v in a:
                _read_history(v)
        else:
            _read_history(a)
    return 0


cdef TensorBase _history_first(TensorBase t):
    """t, its history read first while grad mode is on: PyTorch composes some ops without a
    derivative of their own from differentiable ones (isfinite from abs, argsort from sort),
    and its autograd layer collects their edges, so a stale split/unbind output raises."""
    if _grad_on():
        _read_history(t)
    return t


cdef bint _req(object x):
    """Whether x requires grad: its flag, or, for a view, its base's history (below)."""
    if not isinstance(x, TensorBase):
        return False
    cdef TensorBase t = <TensorBase>x
    if t._requires_grad:
        return True
    return t._view_base is not None and t._view_base._requires_grad and _view_joins_history(t)


cdef bint _view_joins_history(TensorBase t):
    """A float view whose base requires grad requires grad too (PyTorch's rule for views).
    Made while its base did not, it joins the history the base gained since through an
    in-place op: its flag is set here, at the first read that decides anything, and its
    grad_fn marked stale, so _view_grad_fn regenerates it from the base's node and gradients
    through the view reach that history (a split/chunk output raises there instead, as
    PyTorch's does). A view made under no_grad, or of a leaf that called requires_grad_()
    after, keeps its own flag: it reads as requiring grad, but has no history and no
    accumulator of its own (_edge_of), so, as in PyTorch, its gradient goes nowhere, until
    the storage is written after requires_grad_(): PyTorch regenerates such a view's grad_fn
    then (its version moved), an AsStridedBackward0 to the leaf, and so does this."""
    if not t._dtype.is_floating_point:
        return False
    cdef TensorBase base = t._view_base
    if t._grad_fn is None and (
            (base._grad_fn is not None and (
                t._autograd_meta is None or
                (<AutogradMeta>t._autograd_meta).creation != CREATION_NO_GRAD)) or
            (base._grad_fn is None and t._autograd_meta is None and
             base._vc.rg_version != 0 and base._vc.version + 1 != base._vc.rg_version)):
        _meta(t).view_version = -1
        t._requires_grad = True
    return True


cdef Node _new_node(type cls, object fn, tuple inputs):
    """A node of type ``cls`` whose edges lead to the differentiable ``inputs``."""
    global _sequence_counter
    cdef Node n = Node.__new__(cls)
    cdef list edges = []
    cdef list meta = []
    cdef TensorBase t
    cdef int i = 0
    for x in inputs:
        edges.append(_edge_of(x))
        if isinstance(x, TensorBase) and (<TensorBase>x)._requires_grad:
            t = <TensorBase>x
            meta.append((t.shape, t._dtype))
        else:
            meta.append(None)
            if i < 64 and not isinstance(x, (TensorBase, list, tuple)):
                n._scalar_edges |= (<uint64_t>1) << i
        i += 1
    n.next_edges = tuple(edges)
    n._input_meta = tuple(meta)
    n._fn = fn
    n._num_outputs = 1
    n._sequence_nr = _sequence_counter
    _sequence_counter += 1
    if _anomaly_enabled:
        n._trace = "".join(_traceback.format_stack()[:-2])
    if tl_prof_depth and _site_fn is not None:
        n._site = _site_fn()
    return n


cdef class SavedTensor:
    """A tensor kept for backward, with the version it had when saved. Unpacking after an
    in-place change, or after the graph was freed, raises PyTorch's errors."""
    cdef TensorBase data
    cdef int64_t version
    cdef bint is_output
    cdef int output_nr
    cdef object packed            # what a saved_tensors_hooks pack returned
    cdef object unpack_hook
    cdef object producer_fn       # the saved tensor's grad_fn when saved (None: a leaf or
    cdef int producer_nr          # a constant), its output number: named in the version
    cdef bint producer_leaf       # error ("output 0 of TanhBackward0"), formatted only then

    def __repr__(self):
        return f"<SavedTensor version={self.version} output={self.is_output}>"


cdef SavedTensor _save(object x, bint is_output, int output_nr=0):
    cdef SavedTensor s = SavedTensor.__new__(SavedTensor)
    cdef TensorBase t = <TensorBase>x
    s.version = t._vc.version
    s.is_output = is_output
    s.output_nr = output_nr
    if t._grad_fn is not None and not is_output:
        s.producer_fn = t._grad_fn
        s.producer_nr = 0 if t._autograd_meta is None else (<AutogradMeta>t._autograd_meta).output_nr
    elif t._grad_fn is None and t._requires_grad:
        s.producer_leaf = True
    # an activation saved for backward changes role; a parameter, buffer, input, gradient or
    # optimizer state keeps its own (it is memory of that kind whether or not it is saved)
    if t._storage._role == ROLE_ACTIVATION or t._storage._role == ROLE_UNKNOWN \
            or t._storage._role == ROLE_TEMPORARY:
        storage_set_role(t._storage, ROLE_SAVED)
    if _hooks_state is not None and _hooks_state.stack:
        pack, unpack = _hooks_state.stack[-1]
        s.packed = pack(t if not is_output else _alias(t, t._vc))
        s.unpack_hook = unpack
        return s
    # an output saved by its own node keeps a grad_fn-less alias: no cycle through the node
    s.data = _alias(t, t._vc) if is_output else t
    if is_output:
        s.data._requires_grad = False
    return s


cdef object _unpack(object x, Node node):
    """A saved value as the backward formula needs it."""
    cdef SavedTensor s
    cdef TensorBase t
    if x is _RELEASED:
        raise RuntimeError(_released_error())
    if not isinstance(x, SavedTensor):
        if isinstance(x, _SavedSeq):
            return (<_SavedSeq>x).kind([_unpack(y, node) for y in (<_SavedSeq>x).items])
        return (<_WrappedNumber>x).value if isinstance(x, _WrappedNumber) else x
    s = <SavedTensor>x
    if s.unpack_hook is not None:
        t = s.unpack_hook(s.packed)
        if not isinstance(t, TensorBase):
            raise TypeError("saved_tensors_hooks: unpack must return a Tensor")
    else:
        t = s.data
        if t._vc.version != s.version:
            producer = (f"output {s.producer_nr} of {type(s.producer_fn).__name__}"
                        if s.producer_fn is not None else ("a leaf Variable" if s.producer_leaf else None))
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [tensorlib.{t._dtype.legacy_name} {list(t.shape)}]"
                f"{', which is ' + producer + ',' if producer else ''} is at version "
                f"{t._vc.version}; expected version {s.version} instead. Hint: the backtrace "
                f"further above can show the operation that failed to compute its gradient. The "
                f"variable in question was changed in there or anywhere later. Good luck!")
    if s.is_output and tl_grad_enabled:
        # create_graph: the output again carries its node, so higher-order graphs connect
        t = _alias(t, t._vc)
        t._grad_fn = node
        t._requires_grad = True
        if s.output_nr:
            _meta(t).output_nr = s.output_nr
    return t


cdef str _released_error():
    return ("Trying to backward through the graph a second time (or directly access saved "
            "tensors after they have already been freed). Saved intermediate values of the graph "
            "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
            "you need to backward through the graph a second time or if you need to access saved "
            "tensors after calling backward.")


cdef object _RELEASED = object()      # a saved tensor's place after the graph was freed


cdef bint _holds_tensor(object x):
    if isinstance(x, (SavedTensor, TensorBase, _WrappedNumber, _SavedSeq)):
        return True
    if isinstance(x, (tuple, list)):
        for y in x:
            if _holds_tensor(y):
                return True
    return False


cdef tuple _saved_of(Node node):
    if node._released and node._saved is None:
        raise RuntimeError(_released_error())
    return node._saved


cdef int _set_history(object result, Node node, int output_nr=0) except -1:
    """Make ``result`` an output of ``node``. Integer and bool outputs are not differentiable
    (``x.view(torch.int64)``, ``x.long()``): they stay outside the graph, as in PyTorch."""
    cdef TensorBase t = <TensorBase>result
    if not t._dtype.is_floating_point:
        return 0
    t._grad_fn = node
    t._requires_grad = True
    if output_nr or t._autograd_meta is not None:
        _meta(t).output_nr = output_nr
    return 0


cdef int _set_history_multi(object results, Node node, int creation=CREATION_DEFAULT) except -1:
    """Outputs 0..k-1 of a multi-output node (split, unbind, max with indices ...)."""
    cdef int i = 0
    cdef list meta = []
    for r in results:
        if isinstance(r, TensorBase) and (<TensorBase>r)._dtype.is_floating_point:
            _set_history(r, node, i)
            # (the version its grad_fn is current for, as for any view: see _view_grad_fn)
            _meta(<TensorBase>r).view_version = (<TensorBase>r)._vc.version
            if creation != CREATION_DEFAULT:
                _meta(<TensorBase>r).creation = creation
            meta.append(((<TensorBase>r).shape, (<TensorBase>r)._dtype,
                         (<TensorBase>r)._storage.device))
        else:
            meta.append(None)
        i += 1
    node._num_outputs = i
    node._output_meta = tuple(meta)
    return 0


cdef int _check_out_no_grad(str op, tuple inputs) except -1:
    for x in inputs:
        if _req(x):
            raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic "
                               f"differentiation, but one of the arguments requires grad.")
    return 0


cdef int _check_inplace(TensorBase t) except -1:
    """PyTorch's errors for in-place changes autograd cannot follow (called by prepare_write
    while grad mode is on)."""
    if not _req(t):
        if t._view_base is not None and t._view_base._requires_grad and t._autograd_meta is not None \
                and (<AutogradMeta>t._autograd_meta).creation == CREATION_NO_GRAD:
            _check_view_rebase(t)
        return 0
    if t._view_base is None:
        if t._grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
        return 0
    # (PyTorch's order: how the view was made first, then whether its base is a leaf)
    _check_view_rebase(t)
    # (the base need not require grad: a view made to require grad by requires_grad_() is
    # still a view of a leaf for PyTorch)
    if t._view_base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    return 0


cdef int _check_view_rebase(object t) except -1:
    """An in-place write autograd records (self or an argument requires grad) into a view
    whose history PyTorch cannot rewrite: one made under no_grad, one of the views a
    split/chunk/unbind returned, or a view of either; each raises PyTorch's error."""
    if not isinstance(t, TensorBase) or (<TensorBase>t)._view_base is None or \
            (<TensorBase>t)._autograd_meta is None:
        return 0
    if not (<TensorBase>t)._dtype.is_floating_point:
        return 0            # (an integer or bool view records nothing: PyTorch does not track it)
    cdef AutogradMeta m = (<TensorBase>t)._autograd_meta
    if m.creation == CREATION_NO_GRAD:
        raise RuntimeError(
            "A view was created in no_grad mode and is being modified inplace with grad mode "
            "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. "
            "You can clarify your code by moving both the view and the inplace either both "
            "inside the no_grad block (if you don't want the inplace to be tracked) or both "
            "outside (if you want the inplace to be tracked).")
    if m.creation != CREATION_MULTI_OUTPUT:
        return 0
    fn = (<TensorBase>t)._grad_fn
    if fn is None:
        # (the views of a base that did not require grad: PyTorch has no node to name)
        prefix = ("A view was created in no_grad mode and is being modified inplace with grad "
                  "mode enabled.")
    else:
        name = type(fn).__name__
        name = name[:name.rfind("Backward")] if "Backward" in name else name
        prefix = f"Output {m.output_nr} of {name} is a view and is being modified inplace."
    raise RuntimeError(
        f"{prefix} This view is the output of a function that returns multiple views. Such "
        f"functions do not allow the output views to be modified inplace. You should replace "
        f"the inplace operation by an out-of-place one.")


cdef int _mark_multi_views(object results) except -1:
    """The views split/chunk/unbind return when autograd records nothing (their base does
    not require grad, or grad mode is off): PyTorch still marks them, so an in-place write
    that would make one require grad raises (_check_view_rebase)."""
    cdef int creation = CREATION_MULTI_OUTPUT if tl_grad_enabled else CREATION_NO_GRAD
    for r in results:
        if isinstance(r, TensorBase) and (<TensorBase>r)._view_base is not None:
            if (<TensorBase>r)._autograd_meta is None or \
                    (<AutogradMeta>(<TensorBase>r)._autograd_meta).creation == CREATION_DEFAULT:
                _meta(<TensorBase>r).creation = creation
                (<AutogradMeta>(<TensorBase>r)._autograd_meta).view_version = (<TensorBase>r)._vc.version
    return 0


cdef object _save_any(object x, bint is_output):
    """What a node keeps of an argument: a SavedTensor for tensors, a _SavedSeq for a list or
    tuple holding tensors (index_put's indices), the value otherwise."""
    if isinstance(x, TensorBase):
        return _save(x, is_output)
    if isinstance(x, (tuple, list)) and _has_tensor_item(x):
        return _SavedSeq(type(x), tuple([_save(y, is_output) if isinstance(y, TensorBase) else y
                                         for y in x]))
    return x


cdef bint _has_tensor_item(object seq):
    for y in seq:
        if isinstance(y, TensorBase):
            return True
    return False


cdef class _SavedSeq:
    """A list or tuple of tensors a node saved, each tensor with its version (PyTorch saves a
    TensorList so): writing one in place before backward raises, and the whole sequence is
    freed with the graph. Unpacked as the sequence type it was (index_put's own tuple)."""
    cdef readonly object kind
    cdef readonly tuple items

    def __cinit__(self, kind, tuple items):
        self.kind = kind
        self.items = items


cdef class _WrappedNumber:
    """A Python number an op saved where PyTorch holds it as a wrapped 0-d tensor (x * 2):
    freed with the graph like a saved tensor, so a second backward raises there too."""
    cdef readonly object value

    def __cinit__(self, value):
        self.value = value


cdef object _save_input(object x, bint is_output):
    """_save_any for an input PyTorch wraps into a tensor when it is a number."""
    if isinstance(x, (int, float, bool)):
        return _WrappedNumber(x)
    return _save_any(x, is_output)


cdef object _save_output(object x, int output_nr):
    """What a node keeps of its output number ``output_nr`` (of a tuple result): unpacked
    while a graph of the gradient is built, it is that output again, so a gradient formula
    using it (a double backward) sends its gradient to that output, not to the first."""
    if isinstance(x, TensorBase):
        return _save(x, True, output_nr)
    return x


cdef TensorBase _original_of(TensorBase t):
    """A copy of an in-place op's input taken before it is overwritten (saved for backward).
    When t requires grad the copy is a recorded clone (CloneBackward0): the saved value then
    carries t's history from before the write, so double backward reaches it."""
    if _req(t):
        return _call_clone(t, None, False)
    return _clone(t, None, None)


class CopySlices(Node):
    """Gradient of a base whose view was modified in place: the base's gradient outside the
    view passes through; inside it, the in-place op's backward decides."""
    __slots__ = ()

    def _release(self):
        """The wrapped in-place node goes with the graph, its saved tensors freed: a second
        backward through here raises, as PyTorch's CopySlices does even when that node saved
        nothing."""
        if self._saved is not None and isinstance(self._saved[0], Node):
            (<Node>self._saved[0])._release()
            self._saved = (_RELEASED,) + self._saved[1:]
        self._released = True


class AsStridedBackward0(Node):
    __slots__ = ()


def _bw_copy_slices(Node node, tuple grads):
    cdef tuple s = _saved_of(node)
    if s[0] is _RELEASED:
        raise RuntimeError(_released_error())
    cdef Node fn = s[0]
    cdef TensorBase g = grads[0]
    vsizes, vstrides, voff, bsizes, bstrides = s[1], s[2], s[3], s[4], s[5]
    cdef TensorBase result, region
    if tl_grad_enabled:
        # create_graph: the same steps in recorded ops, so the gradient keeps its history
        result = _GENERATED_FUNCTIONS["empty_strided"](bsizes, bstrides, dtype=g._dtype)
        result.copy_(g)
        region = result.as_strided(vsizes, vstrides, voff)
        res = fn._fn(fn, (region.clone(),))
        if res[0] is None:
            region.zero_()
        else:
            region.copy_(res[0])
        return (result,) + tuple(res[1:])
    # the base's gradient, laid out like the base so the view geometry applies to it
    result = _empty_strided(bsizes, bstrides, g._dtype, g._storage.device)
    _copy_into(result, g)
    region = _as_strided(result, vsizes, vstrides, voff)
    res = fn._fn(fn, (_clone(region, None, None),))
    if res[0] is None:
        _fill_raw(region, 0)
    else:
        _copy_into(region, <TensorBase>res[0])
    return (result,) + tuple(res[1:])


def _bw_as_strided_view(Node node, tuple grads):
    cdef tuple s = _saved_of(node)
    cdef TensorBase g = grads[0]
    vsizes, vstrides, voff, bsizes, bstrides = s
    cdef TensorBase result
    if tl_grad_enabled:             # create_graph: the general formula, in recorded ops
        return (_as_strided_backward(g, bsizes, bstrides, 0, vsizes, vstrides, voff),)
    result = _empty_strided(bsizes, bstrides, g._dtype, g._storage.device)
    _fill_raw(result, 0)
    _copy_into(_as_strided(result, vsizes, vstrides, voff), g)
    return (result,)


cdef tuple _base_geometry(TensorBase view, TensorBase base):
    return (tuple(view.shape), view.stride(), view._offset - base._offset,
            tuple(base.shape), base.stride())


cdef int _set_history_inplace(object result, Node n) except -1:
    """After an in-place op: a plain tensor gets the new node as its grad_fn; a view makes its
    base's history a CopySlices around the node, and its own grad_fn is regenerated from the
    base when next needed (its version moved)."""
    cdef TensorBase t = <TensorBase>result
    cdef TensorBase base = t._view_base
    cdef Node cs
    if n._saved is not None:
        # an input the op saved that shares self's version counter (x.div_(x), x.mul_(view
        # of x)) was read before the op's own write: PyTorch saved it at that version, so its
        # backward raises rather than read the written values
        for sv in n._saved:
            if isinstance(sv, SavedTensor) and not (<SavedTensor>sv).is_output and \
                    (<SavedTensor>sv).data is not None and (<SavedTensor>sv).data._vc is t._vc:
                (<SavedTensor>sv).version = t._vc.version - 1
    if base is None:
        old = t._grad_fn
        old_nr = 0 if t._autograd_meta is None else (<AutogradMeta>t._autograd_meta).output_nr
        _set_history(t, n)
        if old is not None and (<AutogradMeta>t._autograd_meta).retains_grad:
            _move_retain_hook(<Node>old, n, old_nr)
        return 0
    cs = Node.__new__(CopySlices)
    cs.next_edges = (_edge_of(base),) + n.next_edges[1:]
    cs._input_meta = ((base.shape, base._dtype),) + n._input_meta[1:]
    cs._saved = (n,) + _base_geometry(t, base)
    cs._fn = _bw_copy_slices
    cs._num_outputs = 1
    cs._sequence_nr = n._sequence_nr
    base._grad_fn = cs
    base._requires_grad = True
    if base._autograd_meta is not None:
        (<AutogradMeta>base._autograd_meta).output_nr = 0
    old = t._grad_fn
    t._requires_grad = True
    t._grad_fn = None
    _meta(t).view_version = -1          # stale: regenerate from the base
    if old is not None and (<AutogradMeta>t._autograd_meta).retains_grad:
        # its retain_grad hook moves to the regenerated node now, as for a plain tensor
        _move_retain_hook(<Node>old, <Node>_view_grad_fn(t), 0)
    return 0


cdef int _move_retain_hook(Node old, Node new, int old_nr) except -1:
    """retain_grad's hook follows the tensor to the grad_fn an in-place op gave it (PyTorch:
    .grad is the gradient of the tensor's current version); other tensor hooks stay."""
    hooks = old._pre_hooks.get(old_nr) if old._pre_hooks else None
    if not hooks:
        return 0
    moved = [h for h in hooks if getattr(h, "_tl_retains_grad", False)]
    for h in moved:
        hooks.remove(h)
    if moved:
        if new._pre_hooks is None:
            new._pre_hooks = {}
        new._pre_hooks.setdefault(0, []).extend(moved)
    return 0


cdef int _set_history_inplace_view(object result, Node n, TensorBase before) except -1:
    """After an in-place geometry change (t_, transpose_, squeeze_, unsqueeze_): the node
    becomes self's grad_fn. On a view, _set_geometry_inplace kept the view's grad_fn current
    across the version bump, so the node's edge is the view's history before the op."""
    cdef TensorBase t = <TensorBase>result
    n._input_meta = ((before.shape, before._dtype),) + n._input_meta[1:]   # the shape before
    _set_history(t, n)
    if t._view_base is not None:
        _meta(t).view_version = t._vc.version
    return 0


cdef object _view_grad_fn(TensorBase t):
    """grad_fn of a view whose base has changed history since the view's node was made."""
    cdef AutogradMeta m = t._autograd_meta
    cdef TensorBase base = t._view_base
    cdef Node n
    if base is None or m is None or m.view_version == t._vc.version:
        return t._grad_fn
    if m.creation == CREATION_MULTI_OUTPUT and (t._grad_fn is not None or base._requires_grad):
        # (written under no_grad, or through its base: PyTorch raises when the history is
        # next needed, naming the function, "Unbind" for UnbindBackward0; the outputs of a
        # base that did not require grad then have no function to name)
        if t._grad_fn is None:
            prefix = "A view was created in no_grad mode and"
        else:
            name = type(t._grad_fn).__name__
            name = name[:name.rfind("Backward")] if "Backward" in name else name
            prefix = f"Output {m.output_nr} of {name} is a view and"
        raise RuntimeError(
            f"{prefix} its base or another view of its "
            f"base has been modified inplace. This view is the output of a function that "
            f"returns multiple views. Such functions do not allow the output views to be "
            f"modified inplace. You should replace the inplace operation by an out-of-place "
            f"one.")
    if m.creation == CREATION_NO_GRAD and base._requires_grad:
        raise RuntimeError(
            "A view was created in no_grad mode and its base or another view of its base has "
            "been modified inplace with grad mode enabled. Given that this use case is "
            "ambiguous and error-prone, it is forbidden. You can clarify your code by moving "
            "both the view and the inplace either both inside the no_grad block (if you don't "
            "want the inplace to be tracked) or both outside (if you want the inplace to be "
            "tracked).")
    if not base._requires_grad:
        return t._grad_fn
    n = _new_node(AsStridedBackward0, _bw_as_strided_view, (base,))
    n._saved = _base_geometry(t, base)
    if m.retains_grad and t._grad_fn is not None:
        # retain_grad's hook follows the view to its regenerated node, as for a plain tensor
        _move_retain_hook(<Node>t._grad_fn, n, m.output_nr)
    t._grad_fn = n
    t._requires_grad = True
    m.view_version = t._vc.version
    m.output_nr = 0
    return n


# ---------------------------------------------------------------------------------------------
# helpers used by the backward formulas in decl.py (written in tensorlib ops, so that
# create_graph=True records them and higher-order gradients work)

cdef bint _req_any(object x):
    if isinstance(x, (list, tuple)):
        for v in x:
            if _req(v):
                return True
        return False
    return _req(x)


def _sizes_of(x):
    if isinstance(x, TensorBase):
        return tuple(x.shape)
    return [tuple(v.shape) for v in x]


def _inverse_perm(dims):
    n = len(dims)
    inv = [0] * n
    for i, d in enumerate(dims):
        inv[d % n if n else 0] = i
    return tuple(inv)


def _scale(grad, alpha):
    return grad if (alpha == 1 and type(alpha) is int) else grad * alpha


def _zeros_grad(grad):
    return _GENERATED_FUNCTIONS["zeros_like"](grad)


def _embed_backward(grad, sizes, region_fn):
    """Gradient of a view/slice op: zeros of the input's shape with ``grad`` written into the
    region the op selected (copy_ into a view of a non-leaf is itself differentiable, so
    higher-order gradients flow)."""
    z = _GENERATED_FUNCTIONS["zeros"](sizes, dtype=grad.dtype, device=grad.device)
    region_fn(z).copy_(grad)
    return z


def _narrow_backward(grad, sizes, dim, start, length):
    return _embed_backward(grad, sizes, lambda z: z.narrow(dim, start, length))


def _select_backward(grad, sizes, dim, index):
    return _embed_backward(grad, sizes, lambda z: z.select(dim, index))


def _diagonal_backward(grad, sizes, offset, dim1, dim2):
    return _embed_backward(grad, sizes, lambda z: z.diagonal(offset, dim1, dim2))


def _strided_positions(shape, strides, start, device=None):
    """Storage positions of the elements of a geometry, as an int64 tensor of ``shape``."""
    arange = _GENERATED_FUNCTIONS["arange"]
    i64 = dtype_of(DT_INT64)
    pos = _GENERATED_FUNCTIONS["full"]((), start, dtype=i64, device=device)
    n = len(shape)
    for d in range(n):
        axis = arange(shape[d], dtype=i64, device=device) * strides[d]
        pos = pos + axis.reshape((shape[d],) + (1,) * (n - 1 - d))
    return pos.expand(tuple(shape)) if n else pos


def _as_strided_backward(grad, sizes, strides, offset, size, stride, storage_offset):
    """The input's gradient through storage positions, as PyTorch defines it: the output's
    gradient is summed into the storage elements it read (several output elements may
    read one), then read back at the input's own positions. Both geometries are absolute
    in the storage, so an input that is itself a view at an offset works."""
    out_start = offset if storage_offset is None else storage_offset
    span = lambda shp, st, start: (start, start + sum((s - 1) * abs(t) for s, t in zip(shp, st))) \
        if all(s > 0 for s in shp) else (start, start - 1)
    lo_in, hi_in = span(sizes, strides, offset)
    lo_out, hi_out = span(size, stride, out_start)
    lo = min(lo_in, lo_out)
    n = max(hi_in, hi_out) - lo + 1
    buf = _GENERATED_FUNCTIONS["zeros"]((max(n, 0),), dtype=grad.dtype, device=grad.device)
    out_pos = _strided_positions(size, stride, out_start - lo, grad.device).reshape(-1)
    buf = buf.index_add(0, out_pos, grad.reshape(-1))
    in_pos = _strided_positions(sizes, strides, offset - lo, grad.device)
    g = buf.take(in_pos)
    # an input whose elements share memory (an expanded view): each storage element's
    # gradient is split evenly among the input elements that alias it, as PyTorch does
    if _may_overlap(sizes, strides):
        ones = _GENERATED_FUNCTIONS["ones"]((in_pos.numel(),), dtype=grad.dtype, device=grad.device)
        count = _GENERATED_FUNCTIONS["zeros"]((max(n, 0),), dtype=grad.dtype, device=grad.device).index_add(0, in_pos.reshape(-1), ones)
        # (meta has no counts to look at: it divides, as the CPU does when elements alias)
        if not grad.is_meta and count.max().item() > 1 or grad.is_meta:
            g = g / count.take(in_pos)
    return g


def _may_overlap(sizes, strides):
    """False when the geometry certainly has no two elements at one position: taken by
    increasing stride, every stride passes the extent of the dims before it."""
    extent = 0
    for st, sz in sorted([(abs(t), s) for s, t in zip(sizes, strides) if s > 1]):
        if st <= extent:
            return True
        extent += (sz - 1) * st
    return False


def _unfold_backward(grad, sizes, dim, size, step):
    z = _GENERATED_FUNCTIONS["zeros"](sizes, dtype=grad.dtype, device=grad.device)
    d = dim % len(sizes) if len(sizes) else 0
    n = grad.shape[d] if len(sizes) else 1
    for i in range(n):
        # (a 0-d input unfolds to one window of size 0 or 1: its gradient is that window's sum)
        window = grad.select(d, i).movedim(-1, d) if len(sizes) else grad.sum()
        region = z.narrow(d, i * step, size) if len(sizes) else z
        region.add_(window)
    return z


def _materialize(grads, metas):
    """Missing output gradients (outputs that did not reach the loss) as zeros."""
    out = []
    for g, m in zip(grads, metas):
        if g is None and m is not None:
            g = _GENERATED_FUNCTIONS["zeros"](m[0], dtype=m[1], device=m[2] if len(m) > 2 else None)
        out.append(g)
    return out


def _cat_backward(grad, sizes, dim):
    out = []
    pos = 0
    for s in sizes:
        if len(s) == 1 and s[0] == 0:
            out.append(grad.new_zeros((0,)))     # a skipped legacy empty input: empty grad
            continue
        d = dim % len(s)
        out.append(grad.narrow(d, pos, s[d]))
        pos += s[d]
    return out


def _split_backward(grads, node, dim):
    gs = _materialize(grads, node._output_meta)
    return _GENERATED_FUNCTIONS["cat"](gs, dim)


def _unbind_backward(grads, node, dim):
    gs = _materialize(grads, node._output_meta)
    return _GENERATED_FUNCTIONS["stack"](gs, dim)


def _repeat_backward(grad, sizes, repeats):
    lead = len(repeats) - len(sizes)
    padded = (1,) * lead + tuple(sizes)
    shape = []
    for r, s in zip(repeats, padded):
        shape += [r, s]
    g = grad.reshape(shape)
    for i in range(len(repeats) - 1, -1, -1):
        g = g.sum(2 * i)
    return g.reshape(sizes)


def _tile_backward(grad, sizes, dims):
    dims = tuple(dims)
    if len(dims) < len(sizes):
        dims = (1,) * (len(sizes) - len(dims)) + dims
    return _repeat_backward(grad, sizes, dims)


# the elementwise module's where (bound when the op families are loaded: tensor.pyx's end)
_f_where = None


def _pow_backward_self(grad, self, exponent):
    # (a zero exponent gives a zero gradient, but PyTorch's test leaves out False: the
    # formula then gives 0 * self ** -1, NaN at 0)
    if not isinstance(exponent, (TensorBase, bool)) and exponent == 0:
        return _zeros_grad(grad)
    if isinstance(exponent, TensorBase):
        # zero where the exponent is 0, as PyTorch selects: the formula gives NaN there for
        # an infinite self, and for a uint8 exponent, whose e - 1 wraps to 255, at self = 0
        return _f_where(exponent == 0, 0.0, grad * (exponent * self ** (exponent - 1)))
    return grad * (exponent * self ** (exponent - 1))


def _atan2_recip(self, other):
    """1 / (self^2 + other^2) for atan2's gradients, 0 where that sum is 0 (PyTorch's: the
    gradient at the origin, or where the squares underflow, is 0, not NaN)."""
    d = self * self + other * other
    return _f_where(d == 0, 0.0, d.reciprocal())


def _pow_backward_exponent(grad, self, exponent, result):
    """d(self ** e)/de = result * log(self); 0 where self == 0 and e >= 0 (PyTorch).
    As PyTorch: the log is of self in the dtype the op computed in (a float64 0-d self
    of 1e-323 is 0 in float32, whose log is -inf), the zeros are selected before grad
    multiplies (an inf grad there gives NaN), and grad * (result * log(self)) is grouped
    so (in half precision (grad * result) can overflow where PyTorch's product stays
    finite)."""
    import math
    if isinstance(self, TensorBase):
        logs = self.to(result_type(self, exponent)).log()
        return grad * _f_where((self == 0) & (exponent >= 0), 0.0, result * logs)
    if self == 0:
        return grad * _f_where(exponent >= 0, 0.0, result * float("-inf"))
    return grad * (result * (math.log(self) if self > 0 else float("nan")))


def _relu_backward(grad, result):
    """PyTorch's threshold_backward: 0 where the result is <= 0, else grad (a NaN result passes
    grad through). It takes the result as an input whose gradient is zero, so under
    create_graph the gradient has the result's history even when grad has none."""
    if tl_grad_enabled and result.requires_grad:
        return _f_where(result <= 0, (result * 0).abs(), grad)
    return _f_where(result <= 0, 0.0, grad)


def _silu_backward(grad, self):
    s = self.sigmoid()
    return grad * s * (1 + self * (1 - s))


def _gelu_backward(grad, self, approximate):
    if approximate == "tanh":
        k = 0.7978845608028654
        inner = k * (self + 0.044715 * self * self * self)
        t = inner.tanh()
        return grad * (0.5 * (1 + t) + 0.5 * self * (1 - t * t) * k * (1 + 3 * 0.044715 * self * self))
    cdf = 0.5 * (1 + (self * 0.7071067811865476).erf())
    pdf = (-0.5 * self * self).exp() * 0.3989422804014327
    return grad * (cdf + self * pdf)


def _elu_backward(grad, self, alpha):
    return _f_where(self > 0, grad, grad * alpha * self.exp())


def _softplus_backward(grad, self, beta, threshold):
    z = self * beta
    return _f_where(z > threshold, grad, grad * z.sigmoid())


def _clamp_backward(grad, self, lo, hi):
    mask = None
    if lo is not None:
        mask = self >= lo
    if hi is not None:
        m2 = self <= hi
        mask = m2 if mask is None else mask & m2
    return _f_where(mask, grad, 0.0)        # (a select, as PyTorch's: an inf grad gives 0, not NaN)


def _clamp_bound_backward(grad, self, bound, upper, other=None):
    """Gradient of a tensor bound of clamp: where the bound won. When min > max the result is
    max everywhere (PyTorch's order: min first, then max), so max gets it all there."""
    if not isinstance(bound, TensorBase):
        return None
    if upper:
        mask = self > bound
        if other is not None:
            mask = mask | (bound < other)
    else:
        mask = self < bound
        if other is not None:
            mask = mask & (bound < other)
    return _f_where(mask, grad, 0.0)


def _max_min_share(grad, self, other, bigger):
    """maximum/minimum: the loser gets 0, ties share the gradient evenly, and otherwise (the
    winner, or a NaN on either side) self gets all of it: PyTorch's selects, so an inf
    gradient gives 0 to the loser, not NaN."""
    lose = (self < other) if bigger else (self > other)
    return _f_where(lose, 0.0, _f_where(self == other, grad / 2, grad))


def _sum_to_shape(TensorBase g, shape):
    """Reduce a broadcast gradient back to ``shape``: sum the leading dims it gained and the
    dims where the input had size 1."""
    cdef int lead = g._ndim - len(shape)
    if lead < 0:
        # fewer dims than the input: only leading size-1 dims may be missing
        if any([s != 1 for s in shape[:-lead]]) or tuple(g.shape) != tuple(shape[-lead:]):
            raise RuntimeError(f"gradient of shape {list(g.shape)} does not fit {list(shape)}")
        return g.reshape(tuple(shape))
    dims = list(range(lead))
    for i in range(len(shape)):
        if shape[i] == 1 and g._shape[lead + i] != 1:
            dims.append(lead + i)
        elif shape[i] != g._shape[lead + i]:
            raise RuntimeError(f"gradient of shape {list(g.shape)} does not fit {list(shape)}")
    if dims:
        g = _sum_dims_keepdim(g, tuple(dims))
    if lead > 0 or g.shape != shape:
        g = g.reshape(tuple(shape))
    return g


# exposed for the engine
def _edge(TensorBase t):
    return _edge_of(t)


cdef bint _c_grad_fits(object x, tuple meta) except -1:
    """Whether gradient x already has its input's (shape, dtype): the engine's fast path."""
    if not isinstance(x, TensorBase):
        return False
    cdef TensorBase g = <TensorBase>x
    shape = meta[0]               # a Size (a tuple subclass)
    cdef int i
    if g._dtype is not meta[1] or g._ndim != len(shape):
        return False
    for i in range(g._ndim):
        if g._shape[i] != <int64_t>shape[i]:
            return False
    return True



def _route_grads(Node node, object in_grads, dict buffers, dict deps, object fit):
    """The engine's per-edge step after ``node`` ran: hand each input gradient to the node it
    flows to (fitted to that input's shape and dtype by ``fit`` when it is not already,
    summed into that node's buffer), count the edge as done, and return the nodes whose last
    edge this was (ready to run), in edge order. In C because it runs for every edge."""
    cdef tuple edges = node.next_edges
    cdef tuple metas = node._input_meta
    cdef Py_ssize_t i, n = len(edges), ng = len(in_grads)
    cdef list became = None
    cdef list buf
    cdef tuple edge
    cdef Node nxt
    cdef object g, meta, old
    cdef int nr
    cdef Py_ssize_t d
    for i in range(n):
        edge = <tuple>edges[i]
        if edge[0] is None:
            continue
        nxt = <Node>edge[0]
        nr = edge[1]
        g = in_grads[i] if i < ng else None
        if g is not None:
            meta = metas[i] if metas is not None else None
            if meta is not None and not _c_grad_fits(g, <tuple>meta):
                g = fit(g, meta, node, i)
        buf = buffers.get(nxt)
        if buf is None:
            buf = [None] * nxt._num_outputs
            buffers[nxt] = buf
        if g is not None:
            old = buf[nr]
            buf[nr] = g if old is None else old + g
        d = <Py_ssize_t>deps[nxt] - 1
        deps[nxt] = d
        if d == 0:
            if became is None:
                became = [nxt]
            else:
                became.append(nxt)
    return became


def _tensor_hooks(TensorBase t):
    """The tensor hooks of t (None when it has no autograd extras)."""
    return None if t._autograd_meta is None else (<AutogradMeta>t._autograd_meta).hooks


def _meta_of(TensorBase t):
    return _meta(t)


def _set_grad_fn(TensorBase t, Node node, int output_nr=0):
    """Used by autograd.Function to attach its node to the outputs."""
    _set_history(t, node, output_nr)


def _new_function_node(type cls, fn, tuple inputs):
    return _new_node(cls, fn, inputs)


def _save_for_backward(TensorBase t, bint is_output):
    return _save(t, is_output)


def _unpack_saved(s, Node node):
    return _unpack(s, node)


def _released_message():
    return _released_error()


def _alias_of(TensorBase t, bint share_version=True):
    """Same data; a new tensor object outside the graph."""
    return _alias(t, t._vc if share_version else _new_vc())


def _detach_inplace(TensorBase t):
    if t._view_base is not None and t._requires_grad and t._grad_fn is not None:
        raise RuntimeError("Can't detach views in-place. Use detach() instead.")
    t._grad_fn = None
    t._requires_grad = False


class SliceBackward0(Node):
    __slots__ = ()


class SelectBackward0(Node):
    __slots__ = ()


cdef type _basic_index_node(TensorBase t, tuple index):
    """The node PyTorch records for a basic subscript of t: that of the last view it
    applies, where a slice taking a whole dim in order is no view (and past the last dim,
    see _entry_past_end, is skipped); AliasBackward0 when there is none (``x[...]``). (The
    view ops' node classes are generated: ops/decl/views.py.)"""
    cdef type cls = AliasBackward0
    cdef int consumed = 0, d = 0
    for x in index:
        if x is not None and x is not Ellipsis:
            consumed += 1
    for x in index:
        if x is Ellipsis:
            d += t._ndim - consumed
        elif x is None:
            cls = UnsqueezeBackward0
        elif type(x) is slice:
            if not _slice_is_whole(x, t._shape[d] if d < t._ndim else INT64_MAX):
                cls = SliceBackward0
            d += 1
        else:
            cls = SelectBackward0
            d += 1
    return cls


class IndexBackward0(Node):
    __slots__ = ()

    def _release(self):
        """The whole index goes with the graph. PyTorch turns every advanced index into
        tensors, a list such as x[[0]] too, so a second backward through here raises even
        when no index here is a tensor."""
        self._saved = None
        self._released = True


def _bw_basic_index(Node node, tuple grads):
    cdef tuple s = _saved_of(node)
    sizes, strides, roff, rsizes, rstrides, index = s
    grad = grads[0]
    z = _GENERATED_FUNCTIONS["zeros"](sizes, dtype=grad.dtype, device=grad.device)
    if index is not None:
        # the indexed tensor overlapped itself (a view of an unfold or expand): its strides
        # would alias elements of z, so the subscript is applied again to the dense z
        _getitem(z, index).copy_(grad)
        return (z,)
    if tuple(z.stride()) != tuple(strides):
        z = _GENERATED_FUNCTIONS["empty_strided"](sizes, strides, dtype=grad.dtype).zero_()
    z.as_strided(rsizes, rstrides, roff).copy_(grad)
    return (z,)


# the backward of an advanced index (advindex.pxi, in the indexing family's module): bound
# when the op families are loaded (tensor.pyx's end)
_bw_advanced_index = None


cdef object _save_index(TensorBase index):
    """What IndexBackward0 keeps of an index tensor. A 0-d bool or uint8 index is a condition
    read once (PyTorch's is an unsqueeze plus a fresh index tensor), so it is kept as a copy
    and writing into it before backward is no error; any other index is saved with its
    version."""
    if index._ndim == 0 and (index._dtype.code == DT_BOOL or index._dtype.code == DT_UINT8):
        return index.clone()
    return _save(index, False)


cdef int _record_getitem(TensorBase self, object r, object index) except -1:
    """x[index] as a differentiable op: basic indexing is a strided view of x; advanced
    indexing a gather whose backward accumulates repeated indices."""
    cdef TensorBase res
    cdef Node n
    if not isinstance(r, TensorBase):
        return 0
    res = <TensorBase>r
    if res._storage is self._storage and res._view_base is not None:
        # (a bare slice takes PyTorch's one-slice path, which always applies it)
        n = _new_node(SliceBackward0 if type(index) is slice else
                      _basic_index_node(self, index if type(index) is tuple else (index,)),
                      _bw_basic_index, (self,))
        overlaps = _may_overlap(self.shape, self.stride())
        n._saved = (tuple(self.shape), self.stride(), res._offset - self._offset,
                    tuple(res.shape), res.stride(), index if overlaps else None)
        _set_history(res, n)
        _meta(res).view_version = res._vc.version
    else:
        n = _new_node(IndexBackward0, _bw_advanced_index, (self,))
        # the index tensors (a mask, integer indices) are saved with their versions: writing
        # into one before backward raises at backward, as in PyTorch, instead of scattering
        # the gradient by the new values
        if isinstance(index, TensorBase):
            index = _save_index(<TensorBase>index)
        elif isinstance(index, tuple):
            index = tuple([_save_index(<TensorBase>i) if isinstance(i, TensorBase) else i
                           for i in index])
        n._saved = (tuple(self.shape), index)
        _set_history(res, n)
    return 0


cdef TensorBase _sum_dims_keepdim(TensorBase g, tuple dims):
    """sum over dims (keepdim) for reducing broadcast gradients (recorded, so create_graph
    differentiates through it)."""
    return _GENERATED_FUNCTIONS["sum"](g, dims, keepdim=True)


def _take_along_backward(grad, sizes, dim, indices, keepdim):
    """Gradient of an op that picked elements along ``dim`` (sort, topk, kthvalue, max(dim)):
    each picked element gets its output's gradient; the others get zero."""
    d = dim % len(sizes) if len(sizes) else 0
    if grad is None:
        return None
    if not keepdim and len(sizes) and indices.dim() < len(sizes):
        grad = grad.unsqueeze(d)
        indices = indices.unsqueeze(d)
    if not len(sizes):
        return grad.reshape(())
    z = _GENERATED_FUNCTIONS["zeros"](sizes, dtype=grad.dtype, device=grad.device)
    return _GENERATED_FUNCTIONS["scatter_add"](z, d, indices, grad)


# -- reductions ------------------------------------------------------------------------------
def _reduced_dims(sizes, dim):
    nd = len(sizes)
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return list(range(nd))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted(d % nd if nd else 0 for d in dims)


def _expand_reduced(g, sizes, dim, keepdim):
    """Broadcast a reduction's gradient back over the reduced dims."""
    if not keepdim:
        for d in _reduced_dims(sizes, dim):
            if d <= g.dim():
                g = g.unsqueeze(d)
    return g.expand(tuple(sizes)) if len(sizes) else g.reshape(())


def _bw_reduced_count(sizes, dim):
    n = 1
    if len(sizes) == 0:
        return n                # (a 0-d input: dim 0 / -1 is the one element)
    for d in _reduced_dims(sizes, dim):
        n *= sizes[d]
    return n


def _evenly_distribute(grad, self, value, dim, keepdim):
    """max()/amax(): ties share the gradient evenly (PyTorch)."""
    v = _expand_reduced(value, tuple(self.shape), dim, keepdim)
    mask = self == v
    count = _expand_reduced(mask.sum(dim, keepdim=True) if dim is not None else mask.sum(),
                            tuple(self.shape), dim, True if dim is not None else keepdim)
    return _expand_reduced(grad, tuple(self.shape), dim, keepdim) * mask / count


def _evenly_distribute_all(grad, self, value):
    """max()/median() over all elements: the elements equal to the result share the
    gradient evenly; when the result is NaN, the NaNs share it (PyTorch)."""
    mask = (self == value) | (self.isnan() & value.isnan())
    return grad * mask / mask.sum()


def _max_backward(grads, self, sizes, result, indices, dim, keepdim, other=None, bigger=True):
    if other is not None or isinstance(dim, TensorBase):      # max(input, other): maximum
        return _max_min_share(grads[0], self, dim if other is None else other, bigger)
    if indices is not None:
        return _take_along_backward(grads[0], tuple(sizes), dim, indices, bool(keepdim))
    # max(): equal elements share the gradient, NaNs too when the result is NaN (PyTorch)
    return _evenly_distribute_all(grads[0], self, result)


def _var_backward(grad, self, dim, correction, keepdim, unbiased):
    if isinstance(dim, bool):          # legacy var(input, unbiased) form: no dim
        unbiased, dim = dim, None
    c = 1 if correction is None and (unbiased is None or unbiased) else (0 if correction is None else correction)
    sizes = tuple(self.shape)
    n = _bw_reduced_count(sizes, dim)
    mean = self.mean(tuple(_reduced_dims(sizes, dim)), keepdim=True)
    g = _expand_reduced(grad, sizes, dim, keepdim)
    if (len(sizes) == 0 or dim is None) and n - c <= 0:
        # PyTorch's formula for a whole-tensor reduction without degrees of freedom: NaN where
        # self equals its mean, else grad * inf; nothing of self's history is in it
        return _f_where(self == mean, g * float("nan"), g * float("inf"))
    return g * 2 * (self - mean) / max(n - c, 0)


def _std_backward(grad, self, result, dim, correction, keepdim, unbiased):
    """std's gradient: var's for grad / (2 std), and 0 where std is 0 (PyTorch's rule: all
    elements of that slice are equal, where sqrt's derivative is infinite)."""
    return _var_backward((grad / (2 * result)).masked_fill(result == 0, 0), self, dim,
                         correction, keepdim, unbiased)


def _norm_backward(grad, self, p, dim, keepdim, result):
    sizes = tuple(self.shape)
    g = _expand_reduced(grad, sizes, dim, keepdim)
    r = _expand_reduced(result, sizes, dim, keepdim)
    if p in ("fro", 2, 2.0, None):
        return g * self / _f_where(r == 0, 1.0, r)
    if p == 0:                  # a count of nonzeros: piecewise constant
        return g * 0
    if p == 1:
        return g * self.sign()
    if p in (float("inf"), float("-inf")):
        mask = self.abs() == r
        return g * self.sign() * mask / mask.sum(tuple(_reduced_dims(sizes, dim)), keepdim=True)
    return g * self.sign() * self.abs() ** (p - 1) / _f_where(r == 0, 1.0, r ** (p - 1))
