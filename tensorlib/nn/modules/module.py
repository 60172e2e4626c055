"""``Module``: the base class of every layer, PyTorch's ``torch.nn.Module``.

A Module owns parameters, buffers and child modules, registered by attribute assignment, and
computes in ``forward``; calling it runs the registered hooks around ``forward``.

>>> class Net(tensorlib.nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.fc = tensorlib.nn.Linear(3, 2)
...     def forward(self, x):
...         return self.fc(x).relu()
>>> net = Net()
>>> [name for name, _ in net.named_parameters()]
['fc.weight', 'fc.bias']
>>> net(tensorlib.zeros(4, 3)).shape
tensorlib.Size([4, 2])
"""
import collections
import functools
import itertools
import threading
import warnings
import weakref
from collections import OrderedDict, namedtuple

from tensorlib._core import tensor as _C
from tensorlib._core.tensor import TensorBase
from tensorlib.nn.parameter import Parameter, Buffer, _mark, PARAMETER_ROLE, BUFFER_ROLE
from tensorlib.utils.hooks import RemovableHandle

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_full_backward_hook"]

_GRADIENT_ROLE = "gradient"


def _typename(obj):
    """PyTorch's ``torch.typename``: a tensor's legacy type name, else the qualified class
    name (builtins unqualified)."""
    if isinstance(obj, TensorBase):
        return obj.type()
    cls = type(obj)
    module = cls.__module__
    if module in (None, "builtins"):
        return cls.__qualname__
    return module + "." + cls.__qualname__


def _addindent(s, num_spaces):
    """Indent every line of ``s`` but the first (a child's repr inside its parent's)."""
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * num_spaces + line for line in lines)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys the module expected and did not find, and
    the keys it found and did not expect."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


# The module-wide (global) hooks: every Module's call runs them (before its own).
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()


def register_module_forward_pre_hook(hook):
    """Run ``hook(module, args)`` before every module's forward (see
    ``Module.register_forward_pre_hook``); returns a removable handle.

    >>> h = register_module_forward_pre_hook(lambda m, args: print(type(m).__name__))
    >>> _ = tensorlib.nn.Identity()(tensorlib.zeros(1))
    Identity
    >>> h.remove()
    """
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(hook, *, always_call=False):
    """Run ``hook(module, args, output)`` after every module's forward (see
    ``Module.register_forward_hook``); returns a removable handle.

    >>> h = register_module_forward_hook(lambda m, args, out: print(out.shape))
    >>> _ = tensorlib.nn.Identity()(tensorlib.zeros(2))
    tensorlib.Size([2])
    >>> h.remove()
    """
    handle = RemovableHandle(_global_forward_hooks,
                             extra_dict=_global_forward_hooks_always_called)
    _global_forward_hooks[handle.id] = hook
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook):
    """Run ``hook(module, grad_output)`` before every module's inputs get their gradients
    (see ``Module.register_full_backward_pre_hook``); returns a removable handle.

    >>> h = register_module_full_backward_pre_hook(lambda m, g: None); h.remove()
    """
    handle = RemovableHandle(_global_backward_pre_hooks)
    _global_backward_pre_hooks[handle.id] = hook
    return handle


def register_module_full_backward_hook(hook):
    """Run ``hook(module, grad_input, grad_output)`` for every module once its inputs'
    gradients are known (see ``Module.register_full_backward_hook``); returns a removable
    handle.

    >>> h = register_module_full_backward_hook(lambda m, gi, go: None); h.remove()
    """
    handle = RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[handle.id] = hook
    return handle


# ---- full backward hooks ----------------------------------------------------------------------

def _hook_identity_cls():
    # built on first use: tensorlib.autograd imports nothing from nn, but keeping the import
    # lazy lets `tensorlib.nn` load before `tensorlib.autograd` during package import
    global _HookIdentity
    if _HookIdentity is None:
        from tensorlib.autograd.function import Function

        class BackwardHookFunction(Function):
            """Identity on a module's tensor inputs (or outputs): its node in the graph is
            where the module's gradients are observed."""

            @staticmethod
            def forward(ctx, *args):
                ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
                return args

            @staticmethod
            def backward(ctx, *grads):
                return grads

        _HookIdentity = BackwardHookFunction
    return _HookIdentity


_HookIdentity = None


def _pack_with_none(indices, values, size):
    out = [None] * size
    for i, v in zip(indices, values):
        out[i] = v
    return tuple(out)


class _BackwardHook:
    """One call's full backward hooks: the module's tensor inputs and outputs pass through an
    identity autograd Function; a pre-hook on the outputs' node sees ``grad_output`` (and runs
    the backward pre-hooks), a hook on the inputs' node sees ``grad_input`` and runs the
    backward hooks, which may replace it. Holds no node, so the graph stays acyclic."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.n_outputs = 0
        self.input_tensors_index = None
        self.output_tensors_index = None

    def _apply_on_tensors(self, register, args):
        idx = [i for i, a in enumerate(args) if isinstance(a, TensorBase)]
        tensors = [args[i] for i in idx]
        if not (_C._is_grad_enabled() and any(t.requires_grad for t in tensors)):
            return args, None
        new = _hook_identity_cls().apply(*tensors)
        if not isinstance(new, tuple):
            new = (new,)
        fns = [t.grad_fn for t in new if t.grad_fn is not None
               and t.grad_fn.name() == "BackwardHookFunctionBackward"]
        if not fns:
            raise RuntimeError("Error while setting up backward hooks: no tensor of the module's "
                               "inputs or outputs reached the hook's identity node")
        register(fns[0])
        out = list(args)
        for i, v in zip(idx, new):
            out[i] = v
        return tuple(out), idx

    def setup_input_hook(self, args):
        def register(node):
            node.register_hook(self._input_hook)
        res, idx = self._apply_on_tensors(register, args)
        self.n_inputs = len(args)
        self.input_tensors_index = idx
        return res

    def _input_hook(self, grad_input, _grad_output):
        if self.grad_outputs is None:
            # the outputs' node never ran (no gradient reached the module's outputs)
            return None
        res = _pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(res)}")
            res = tuple(out)
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_tensors_index)

    def setup_output_hook(self, result):
        def register(node):
            node.register_prehook(self._output_pre_hook)
        single = not isinstance(result, tuple)
        outs = (result,) if single else result
        res, idx = self._apply_on_tensors(register, outs)
        self.n_outputs = len(outs)
        self.output_tensors_index = idx
        return res[0] if single else res

    def _output_pre_hook(self, grad_output):
        self.grad_outputs = _pack_with_none(self.output_tensors_index, grad_output,
                                            self.n_outputs)
        for hook in self.user_pre_hooks:
            new = hook(self.module, self.grad_outputs)
            if new is None:
                continue
            if len(new) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, "
                                   f"got {len(new)}, but expected {len(self.grad_outputs)}")
            self.grad_outputs = tuple(new)
        local = self.grad_outputs
        if self.input_tensors_index is None:
            # no input requires grad: the input node never runs, so the hooks run here
            grad_inputs = (None,) * self.n_inputs
            if self.user_hooks:
                warnings.warn("Full backward hook is firing when gradients are computed with "
                              "respect to module outputs since no inputs require gradients. See "
                              "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                              "#torch.nn.Module.register_full_backward_hook for more details.",
                              stacklevel=2)
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple)
                                            and all(r is None for r in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return tuple(local[i] for i in self.output_tensors_index)


def _attach_non_full_hooks(module, hooks, args, result):
    """The deprecated backward hooks: on the node that produced the first output tensor."""
    var = result
    while not isinstance(var, TensorBase):
        if isinstance(var, dict):
            var = next(v for v in var.values() if isinstance(v, TensorBase))
        else:
            var = var[0]
    node = var.grad_fn
    if node is None:
        return
    for hook in hooks:
        node.register_hook(functools.partial(_call_non_full_hook, hook, weakref.ref(module),
                                             node._input_meta))
    _warn_non_full_hook(args, result, node)


def _call_non_full_hook(hook, module_ref, input_meta, grad_input, grad_output):
    module = module_ref()
    if module is None:
        return None
    if input_meta:
        # the node's gradients as its inputs see them: a broadcast input's summed to its shape
        grad_input = tuple(
            _C._sum_to_shape(g, meta[0]) if g is not None and meta is not None
            and tuple(g.shape) != tuple(meta[0]) else g
            for g, meta in zip(grad_input, input_meta))
    return hook(module, grad_input, grad_output)


def _warn_non_full_hook(inputs, result, node):
    """PyTorch's warnings for the cases where a non-full hook misses gradients."""
    def all_tensors(x):
        return isinstance(x, tuple) and all(isinstance(e, TensorBase) for e in x)
    if isinstance(result, TensorBase):
        result = (result,)
    elif not all_tensors(result):
        warnings.warn("Using non-full backward hooks on a Module that does not return a single "
                      "Tensor or a tuple of Tensors is deprecated and will be removed in future "
                      "versions. This hook will be missing some of the grad_output. Please use "
                      "register_full_backward_hook to get the documented behavior.",
                      FutureWarning, stacklevel=3)
        return
    if isinstance(inputs, TensorBase):
        inputs = (inputs,)
    elif not all_tensors(inputs):
        warnings.warn("Using non-full backward hooks on a Module that does not take as input a "
                      "single Tensor or a tuple of Tensors is deprecated and will be removed in "
                      "future versions. This hook will be missing some of the grad_input. Please "
                      "use register_full_backward_hook to get the documented behavior.",
                      FutureWarning, stacklevel=3)
        return
    out_nodes = {r.grad_fn for r in result if r.grad_fn is not None}
    if not out_nodes or (len(out_nodes) == 1 and node not in out_nodes):
        warnings.warn("Using a non-full backward hook when outputs are nested in python data "
                      "structure is deprecated and will be removed in future versions. This "
                      "hook will be missing some grad_output.", FutureWarning, stacklevel=3)
    elif len(out_nodes) > 1:
        warnings.warn("Using a non-full backward hook when outputs are generated by different "
                      "autograd Nodes is deprecated and will be removed in future versions. This "
                      "hook will be missing some grad_output. Please use "
                      "register_full_backward_hook to get the documented behavior.",
                      FutureWarning, stacklevel=3)
    else:
        in_nodes = {i.grad_fn for i in inputs if i.grad_fn is not None}
        next_nodes = {n[0] for n in node.next_functions}
        if in_nodes != next_nodes:
            warnings.warn("Using a non-full backward hook when the forward contains multiple "
                          "autograd Nodes is deprecated and will be removed in future versions. "
                          "This hook will be missing some grad_input. Please use "
                          "register_full_backward_hook to get the documented behavior.",
                          FutureWarning, stacklevel=3)


# ---- load_state_dict staging -------------------------------------------------------------------

class _Loading(threading.local):
    pending = None          # a list while load_state_dict collects: copies wait for no errors


_loading = _Loading()


def _forward_unimplemented(self, *input):
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                              f'"forward" function')


class Module:
    """Base class of every neural-network layer and model.

    Subclasses call ``super().__init__()`` and then assign parameters, buffers and child
    modules as attributes; they define ``forward``. Call the module (not ``forward``) so
    hooks run.

    >>> m = tensorlib.nn.Module()
    >>> m.w = tensorlib.nn.Parameter(tensorlib.ones(2)); m.register_buffer("n", tensorlib.zeros(1))
    >>> list(m.state_dict().keys())
    ['w', 'n']
    """

    dump_patches = False
    _version = 1        # the state_dict format version, stored in its _metadata
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and bool(kwargs):
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if self.call_super_init is False and bool(args):
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        # through object.__setattr__: Module.__setattr__ looks for these dicts
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_backward_pre_hooks", OrderedDict())
        setattr_("_backward_hooks", OrderedDict())
        setattr_("_is_full_backward_hook", None)
        setattr_("_forward_hooks", OrderedDict())
        setattr_("_forward_hooks_with_kwargs", OrderedDict())
        setattr_("_forward_hooks_always_called", OrderedDict())
        setattr_("_forward_pre_hooks", OrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_("_state_dict_hooks", OrderedDict())
        setattr_("_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_post_hooks", OrderedDict())
        setattr_("_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward = _forward_unimplemented

    # ---- registration ---------------------------------------------------------------------
    def register_buffer(self, name, tensor, persistent=True):
        """Register ``tensor`` as the buffer ``name``: state that is not a parameter (e.g.
        BatchNorm's running mean). ``persistent=False`` keeps it out of ``state_dict()``.
        Its storage is counted under the memory role ``"buffer"``.

        >>> m = tensorlib.nn.Module(); m.register_buffer("mean", tensorlib.zeros(2))
        >>> m.mean.untyped_storage().role_name
        'buffer'
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, TensorBase):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            f"(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)
        _mark(tensor, BUFFER_ROLE)

    def register_parameter(self, name, param):
        """Register ``param`` (a ``Parameter`` or None) as the parameter ``name``.

        >>> m = tensorlib.nn.Module()
        >>> m.register_parameter("w", tensorlib.nn.Parameter(tensorlib.ones(1)))
        >>> [n for n, _ in m.named_parameters()]
        ['w']
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            f"(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as a "
                             f"function of another Tensor, compute the value in the forward() "
                             f"method.")
        self._parameters[name] = param

    def add_module(self, name, module):
        """Register ``module`` (a Module or None) as the child ``name``.

        >>> m = tensorlib.nn.Module(); m.add_module("fc", tensorlib.nn.Identity()); m
        Module(
          (fc): Identity()
        )
        """
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    def register_module(self, name, module):
        """Alias of ``add_module``.

        >>> m = tensorlib.nn.Module(); m.register_module("a", tensorlib.nn.Identity())
        >>> len(m._modules)
        1
        """
        self.add_module(name, module)

    # ---- lookup by dotted name -------------------------------------------------------------
    def get_submodule(self, target):
        """The submodule at the dotted path ``target`` (``""`` is this module).

        >>> net = tensorlib.nn.Sequential(tensorlib.nn.Sequential(tensorlib.nn.Identity()))
        >>> net.get_submodule("0.0")
        Identity()
        """
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        """Replace (or, unless ``strict``, add) the submodule at the dotted path ``target``.

        >>> net = tensorlib.nn.Sequential(tensorlib.nn.Identity())
        >>> net.set_submodule("0", tensorlib.nn.Flatten()); net
        Sequential(
          (0): Flatten(start_dim=1, end_dim=-1)
        )
        """
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError("`module` is not an nn.Module, found " + str(type(module)))
        parent = self.get_submodule(".".join(atoms[:-1]))
        name = atoms[-1]
        if strict and not hasattr(parent, name):
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target):
        """The parameter at the dotted path ``target``.

        >>> tensorlib.nn.Sequential(tensorlib.nn.Linear(2, 1)).get_parameter("0.bias").shape
        tensorlib.Size([1])
        """
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at the dotted path ``target``.

        >>> m = tensorlib.nn.Module(); m.register_buffer("b", tensorlib.zeros(1))
        >>> m.get_buffer("b").tolist()
        [0.0]
        """
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    def get_extra_state(self):
        """Extra state for ``state_dict`` (override with ``set_extra_state``); the base
        module has none and raises."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called. Please file an issue at "
                           "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    def set_extra_state(self, state):
        """Restore what ``get_extra_state`` returned (override both together)."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called. Please file an issue at "
                           "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    # ---- conversions -------------------------------------------------------------------------
    def _apply(self, fn, recurse=True):
        """Apply ``fn`` to every parameter, gradient and buffer. Parameters keep their
        identity (their data is replaced: optimizers holding them keep working); buffers are
        replaced by ``fn``'s result."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            prev = _C._set_grad_enabled(False)
            try:
                applied = fn(param)
                if applied is not param:
                    param.data = applied
                _mark(param, PARAMETER_ROLE)
                grad = param.grad
                if grad is not None:
                    grad_applied = fn(grad)
                    if grad_applied is not grad:
                        grad.data = grad_applied
                    _mark(grad, _GRADIENT_ROLE)
            finally:
                _C._set_grad_enabled(prev)
        for key, buf in self._buffers.items():
            if buf is not None:
                new = fn(buf)
                self._buffers[key] = new
                _mark(new, BUFFER_ROLE)
        return self

    def apply(self, fn):
        """Call ``fn(m)`` on every submodule (children first) and on this module; returns
        self. The usual way to initialise weights.

        >>> seen = []; _ = tensorlib.nn.Sequential(tensorlib.nn.Identity()).apply(
        ...     lambda m: seen.append(type(m).__name__)); seen
        ['Identity', 'Sequential']
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        """Move and/or cast the parameters and buffers: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(tensor)`` (its device and dtype), keywords ``device``,
        ``dtype``, ``non_blocking``. Only floating-point tensors change dtype. In place:
        returns self, and the Parameter objects stay the same.

        >>> m = tensorlib.nn.Linear(2, 2); w = m.weight
        >>> m.to(tensorlib.float64).weight is w, w.dtype
        (True, tensorlib.float64)
        """
        device, dtype, non_blocking = _parse_to(args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype}")

        def convert(t):
            dt = dtype if t.is_floating_point() else None
            if device is None:
                return t if dt is None else t.to(dt)
            return t.to(device, dt, non_blocking) if dt is not None else t.to(device)

        return self._apply(convert)

    def to_empty(self, *, device, recurse=True):
        """Move the parameters and buffers to ``device`` without copying their values
        (uninitialized memory: for modules built on ``meta``).

        >>> m = tensorlib.nn.Linear(2, 2, device="meta").to_empty(device="cpu"); m.weight.device
        device(type='cpu')
        """
        import tensorlib
        return self._apply(lambda t: tensorlib.empty(t.shape, dtype=t.dtype, device=device),
                           recurse=recurse)

    def cpu(self):
        """Move every parameter and buffer to the CPU (in place); returns self.

        >>> tensorlib.nn.Linear(1, 1).cpu().weight.device
        device(type='cpu')
        """
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        """Move every parameter and buffer to a CUDA device (in place); returns self."""
        import tensorlib

        def move(t):
            if hasattr(t, "cuda"):
                return t.cuda(device)
            return t.to(tensorlib.device("cuda") if device is None else
                        tensorlib.device("cuda", device) if isinstance(device, int) else device)
        return self._apply(move)

    def type(self, dst_type):
        """Cast every parameter and buffer to ``dst_type``; returns self.

        >>> tensorlib.nn.Linear(1, 1).type(tensorlib.float64).weight.dtype
        tensorlib.float64
        """
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        """Cast floating-point parameters and buffers to float32; returns self.

        >>> tensorlib.nn.Linear(1, 1).double().float().weight.dtype
        tensorlib.float32
        """
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        """Cast floating-point parameters and buffers to float64; returns self.

        >>> tensorlib.nn.Linear(1, 1).double().bias.dtype
        tensorlib.float64
        """
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        """Cast floating-point parameters and buffers to float16; returns self.

        >>> tensorlib.nn.Linear(1, 1).half().weight.dtype
        tensorlib.float16
        """
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        """Cast floating-point parameters and buffers to bfloat16; returns self.

        >>> tensorlib.nn.Linear(1, 1).bfloat16().weight.dtype
        tensorlib.bfloat16
        """
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def share_memory(self):
        """Move parameters and buffers to shared memory where tensors support it (a no-op
        otherwise); returns self.

        >>> m = tensorlib.nn.Identity(); m.share_memory() is m
        True
        """
        return self._apply(lambda t: t.share_memory_() if hasattr(t, "share_memory_") else t)

    # ---- hooks -----------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Run ``hook(module, args)`` before ``forward``; it may return new args (a tuple, or
        one value that becomes a 1-tuple). With ``with_kwargs=True`` it is
        ``hook(module, args, kwargs)`` and may return ``(args, kwargs)``. ``prepend`` runs
        it before the hooks already registered. Returns a removable handle.

        >>> m = tensorlib.nn.Identity()
        >>> h = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        >>> m(tensorlib.ones(1)).tolist()
        [2.0]
        """
        handle = RemovableHandle(self._forward_pre_hooks,
                                 extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """Run ``hook(module, args, output)`` after ``forward``; it may return a new output.
        With ``with_kwargs=True`` it is ``hook(module, args, kwargs, output)``;
        ``always_call=True`` runs it even when forward raises; ``prepend`` runs it first.
        Returns a removable handle.

        >>> m = tensorlib.nn.Identity()
        >>> h = m.register_forward_hook(lambda mod, args, out: out + 1)
        >>> m(tensorlib.zeros(1)).tolist()
        [1.0]
        """
        handle = RemovableHandle(self._forward_hooks,
                                 extra_dict=[self._forward_hooks_with_kwargs,
                                             self._forward_hooks_always_called])
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """Run ``hook(module, grad_output)`` when the gradients of the module's outputs are
        known, before those of its inputs are computed; it may return a new grad_output
        tuple. Returns a removable handle.

        >>> m = tensorlib.nn.Identity(); x = tensorlib.ones(2, requires_grad=True)
        >>> h = m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 3,))
        >>> m(x).sum().backward(); x.grad.tolist()
        [3.0, 3.0]
        """
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(self, hook, prepend=False):
        """Run ``hook(module, grad_input, grad_output)`` once the gradients of the module's
        inputs are computed (one entry per positional argument, None where there is none);
        it may return a replacement grad_input. Returns a removable handle.

        >>> m = tensorlib.nn.Identity(); x = tensorlib.ones(2, requires_grad=True)
        >>> h = m.register_full_backward_hook(lambda mod, gi, go: print(gi[0].tolist()))
        >>> m(x).sum().backward()
        [1.0, 1.0]
        """
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook):
        """The deprecated, non-full backward hook: ``hook(module, grad_input, grad_output)``
        runs on the autograd node that produced the module's (first) output, so grad_input
        is that node's input gradients, not necessarily the module's. Prefer
        ``register_full_backward_hook``. Returns a removable handle.

        >>> m = tensorlib.nn.Identity(); h = m.register_backward_hook(lambda *a: None)
        >>> h.remove()
        """
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = False
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def register_state_dict_pre_hook(self, hook):
        """Run ``hook(module, prefix, keep_vars)`` before ``state_dict`` collects this
        module's entries. Returns a removable handle.

        >>> m = tensorlib.nn.Identity(); h = m.register_state_dict_pre_hook(print); h.remove()
        """
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        """Run ``hook(module, state_dict, prefix, local_metadata)`` after ``state_dict``
        collected this module's entries (it edits the dict in place). Returns a removable
        handle.

        >>> m = tensorlib.nn.Identity(); h = m.register_state_dict_post_hook(print); h.remove()
        """
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    _register_state_dict_hook = register_state_dict_post_hook

    def register_load_state_dict_pre_hook(self, hook):
        """Run ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module loads its entries. Returns a
        removable handle.

        >>> m = tensorlib.nn.Identity(); m.register_load_state_dict_pre_hook(print).remove()
        """
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = functools.partial(hook, self)
        return handle

    def register_load_state_dict_post_hook(self, hook):
        """Run ``hook(module, incompatible_keys)`` after ``load_state_dict`` loaded this
        module; the hook may edit the key lists in place. Returns a removable handle.

        >>> m = tensorlib.nn.Identity(); m.register_load_state_dict_post_hook(print).remove()
        """
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # ---- calling ---------------------------------------------------------------------------
    def _call_impl(self, *args, **kwargs):
        forward_call = self.forward
        if not (self._backward_hooks or self._backward_pre_hooks or self._forward_hooks
                or self._forward_pre_hooks or _global_backward_pre_hooks
                or _global_backward_hooks or _global_forward_hooks
                or _global_forward_pre_hooks):
            return forward_call(*args, **kwargs)

        result = None
        called_always = set()
        try:
            full_hooks, pre_bw_hooks, old_hooks = [], [], []
            if self._backward_pre_hooks or _global_backward_pre_hooks:
                pre_bw_hooks = (list(_global_backward_pre_hooks.values())
                                + list(self._backward_pre_hooks.values()))
            if self._backward_hooks or _global_backward_hooks:
                full_hooks = list(_global_backward_hooks.values())
                if self._is_full_backward_hook:
                    full_hooks += list(self._backward_hooks.values())
                elif self._is_full_backward_hook is False:
                    old_hooks = list(self._backward_hooks.values())

            for hook_id, hook in itertools.chain(_global_forward_pre_hooks.items(),
                                                 self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    res = hook(self, args, kwargs)
                    if res is not None:
                        if isinstance(res, tuple) and len(res) == 2:
                            args, kwargs = res
                        else:
                            raise RuntimeError(f"forward pre-hook must return None or a tuple of "
                                               f"(new_args, new_kwargs), but got {res}.")
                else:
                    res = hook(self, args)
                    if res is not None:
                        args = res if isinstance(res, tuple) else (res,)

            bw_hook = None
            if full_hooks or pre_bw_hooks:
                bw_hook = _BackwardHook(self, full_hooks, pre_bw_hooks)
                args = bw_hook.setup_input_hook(args)

            result = forward_call(*args, **kwargs)

            for hook_id, hook in itertools.chain(_global_forward_hooks.items(),
                                                 self._forward_hooks.items()):
                if (hook_id in self._forward_hooks_always_called
                        or hook_id in _global_forward_hooks_always_called):
                    called_always.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs:
                    res = hook(self, args, kwargs, result)
                else:
                    res = hook(self, args, result)
                if res is not None:
                    result = res

            if bw_hook is not None:
                if not isinstance(result, (TensorBase, tuple)):
                    warnings.warn("For backward hooks to be called, module output should be a "
                                  "Tensor or a tuple of Tensors but received "
                                  f"{type(result)}")
                result = bw_hook.setup_output_hook(result)
            if old_hooks:
                _attach_non_full_hooks(self, old_hooks, args, result)
            return result
        except Exception:
            # the always_call forward hooks run even when forward (or a hook) failed
            for hook_id, hook in itertools.chain(_global_forward_hooks.items(),
                                                 self._forward_hooks.items()):
                if hook_id in called_always:
                    continue
                if (hook_id in self._forward_hooks_always_called
                        or hook_id in _global_forward_hooks_always_called):
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            res = hook(self, args, kwargs, result)
                        else:
                            res = hook(self, args, result)
                        if res is not None:
                            result = res
                    except Exception as e:
                        warnings.warn("global module forward hook with ``always_call=True`` "
                                      f"raised an exception that was silenced as another error "
                                      f"was raised in forward: {e}")
            raise

    __call__ = _call_impl

    # ---- attributes ------------------------------------------------------------------------
    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)
        # what an older pickle may lack
        for name, factory in (("_forward_pre_hooks", OrderedDict), ("_forward_hooks", OrderedDict),
                              ("_forward_hooks_with_kwargs", OrderedDict),
                              ("_forward_hooks_always_called", OrderedDict),
                              ("_forward_pre_hooks_with_kwargs", OrderedDict),
                              ("_state_dict_hooks", OrderedDict),
                              ("_state_dict_pre_hooks", OrderedDict),
                              ("_load_state_dict_pre_hooks", OrderedDict),
                              ("_load_state_dict_post_hooks", OrderedDict),
                              ("_backward_pre_hooks", OrderedDict),
                              ("_backward_hooks", OrderedDict),
                              ("_non_persistent_buffers_set", set)):
            if name not in self.__dict__:
                self.__dict__[name] = factory()
        if "_is_full_backward_hook" not in self.__dict__:
            self._is_full_backward_hook = None

    def __getattr__(self, name):
        # only called when normal lookup failed: the registered things live in three dicts
        d = self.__dict__
        if "_parameters" in d:
            params = d["_parameters"]
            if name in params:
                return params[name]
        if "_buffers" in d:
            buffers = d["_buffers"]
            if name in buffers:
                return buffers[name]
        if "_modules" in d:
            modules = d["_modules"]
            if name in modules:
                return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules,
                        self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                f"(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers,
                            self._non_persistent_buffers_set)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module "
                                    f"'{name}' (torch.nn.Module or None expected)")
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Buffer) or (buffers is not None and name in buffers):
                    if value is not None and not isinstance(value, TensorBase):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                        f"(torch.nn.Buffer, torch.Tensor or None expected)")
                    if buffers is None:
                        raise AttributeError("cannot assign buffer before Module.__init__() call")
                    if isinstance(value, Buffer):
                        persistent = value.persistent
                        remove_from(self.__dict__, self._parameters, self._modules)
                    else:
                        persistent = name not in self._non_persistent_buffers_set
                    self.register_buffer(name, value, persistent)
                else:
                    super().__setattr__(name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self):
        keys = (dir(self.__class__) + list(self.__dict__.keys()) + list(self._parameters.keys())
                + list(self._modules.keys()) + list(self._buffers.keys()))
        # attribute names only: container children named "0", "1", ... are not attributes
        return sorted(k for k in keys if not k[0].isdigit())

    # ---- state_dict ------------------------------------------------------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An ``OrderedDict`` of every parameter and persistent buffer by dotted name: this
        module's parameters, then its buffers, then each child's entries in registration
        order. Values are detached tensors sharing the module's memory (``keep_vars=True``
        keeps the Parameters themselves).

        >>> list(tensorlib.nn.Sequential(tensorlib.nn.Linear(2, 2)).state_dict())
        ['0.weight', '0.bias']
        """
        if args:
            # the old positional form state_dict(destination, prefix, keep_vars)
            if len(args) > 3:
                raise TypeError(f"state_dict() takes at most 4 positional arguments but "
                                f"{len(args) + 1} were given")
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.state_dict for details.", FutureWarning)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Load this module's own parameters and persistent buffers from ``state_dict``
        (keys under ``prefix``), appending to the three lists; children are loaded by
        ``load_state_dict``. Layers with special loading rules override this."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(),
                                                         persistent.items()) if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, TensorBase):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  f'torch.Tensor or Tensor-like object from checkpoint but '
                                  f'received {type(value)}')
                continue
            if param.ndim == 0 and value.ndim == 1 and value.shape[0] == 1:
                value = value[0]        # checkpoints of old versions saved scalars as [1]
            if value.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model "
                                  f"is {param.shape}.")
                continue
            if param.is_meta and not value.is_meta and not assign:
                warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint "
                              f"to a meta parameter in the current model, which is a no-op. "
                              f"(Did you mean to pass `assign=True` to assign items in the "
                              f"state dictionary to their corresponding key in the module "
                              f"instead of copying them in place?)")
            _stage(functools.partial(self._load_one, name, key, param, value, assign,
                                     error_msgs))
        extra_key = prefix + "_extra_state"
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                _stage(functools.partial(self.set_extra_state, state_dict[extra_key]))
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix) and key != extra_key:
                    first = key[len(prefix):].split(".", 1)[0]
                    if first not in self._modules and first not in local_state:
                        unexpected_keys.append(key)

    def _load_one(self, name, key, param, value, assign, error_msgs):
        prev = _C._set_grad_enabled(False)
        try:
            if assign:
                if isinstance(param, Parameter):
                    if not isinstance(value, Parameter):
                        value = Parameter(value, requires_grad=param.requires_grad)
                    else:
                        value.requires_grad_(param.requires_grad)
                setattr(self, name, value)
            else:
                param.copy_(value)
        except Exception as ex:
            error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in '
                              f'the model are {param.size()} and whose dimensions in the '
                              f'checkpoint are {value.size()}, an exception occurred : '
                              f'{ex.args}.')
        finally:
            _C._set_grad_enabled(prev)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters and buffers from ``state_dict`` (as made by ``state_dict()``) into
        this module. Returns ``(missing_keys, unexpected_keys)``. With ``strict=True``
        (the default) any missing or unexpected key is an error; a shape mismatch always
        is. On error nothing is loaded and one RuntimeError lists every problem.
        ``assign=True`` makes the checkpoint's tensors the module's (no copy).

        >>> a, b = tensorlib.nn.Linear(2, 2), tensorlib.nn.Linear(2, 2)
        >>> b.load_state_dict(a.state_dict())
        <All keys matched successfully>
        >>> bool((a.weight == b.weight).all())
        True
        """
        if not isinstance(state_dict, collections.abc.Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata
        post_hooked = []

        def load(module, local_state, prefix=""):
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state, prefix, local_metadata, True,
                                         missing_keys, unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state = {k: v for k, v in local_state.items()
                                   if k.startswith(child_prefix)}
                    load(child, child_state, child_prefix)
            if module._load_state_dict_post_hooks:
                post_hooked.append(module)

        outer = _loading.pending
        _loading.pending = pending = []
        try:
            load(self, state_dict)
        finally:
            _loading.pending = outer
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if not error_msgs:
            for action in pending:
                action()
            incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
            for module in post_hooked:
                for hook in module._load_state_dict_post_hooks.values():
                    out = hook(module, incompatible)
                    if out is not None:
                        raise RuntimeError("Hooks registered with "
                                           "``register_load_state_dict_post_hook`` are not "
                                           "expected to return new values, if "
                                           "incompatible_keys need to be modified, it should be "
                                           "done inplace.")
            if strict:
                # a post hook may have edited the key lists in place
                if incompatible.unexpected_keys:
                    error_msgs.append("Unexpected key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in incompatible.unexpected_keys)))
                if incompatible.missing_keys:
                    error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                        ", ".join(f'"{k}"' for k in incompatible.missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ---- iteration -------------------------------------------------------------------------
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse=True):
        """An iterator over the parameters (each once), in ``named_parameters`` order.

        >>> sum(p.numel() for p in tensorlib.nn.Linear(3, 2).parameters())
        8
        """
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """An iterator over ``(dotted name, parameter)``: this module's parameters, then
        each child's, depth first. A parameter shared by two modules is yielded once unless
        ``remove_duplicate=False``.

        >>> [n for n, _ in tensorlib.nn.Linear(3, 2).named_parameters(prefix="fc")]
        ['fc.weight', 'fc.bias']
        """
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def buffers(self, recurse=True):
        """An iterator over the buffers (each once).

        >>> m = tensorlib.nn.Module(); m.register_buffer("b", tensorlib.zeros(2))
        >>> [b.shape for b in m.buffers()]
        [tensorlib.Size([2])]
        """
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """An iterator over ``(dotted name, buffer)``, persistent or not.

        >>> m = tensorlib.nn.Module(); m.register_buffer("b", tensorlib.zeros(2), persistent=False)
        >>> [n for n, _ in m.named_buffers()]
        ['b']
        """
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def children(self):
        """An iterator over the immediate child modules (each once).

        >>> list(tensorlib.nn.Sequential(tensorlib.nn.Identity()).children())
        [Identity()]
        """
        for _, module in self.named_children():
            yield module

    def named_children(self):
        """An iterator over ``(name, child)`` for the immediate children (each once).

        >>> [n for n, _ in tensorlib.nn.Sequential(tensorlib.nn.Identity()).named_children()]
        ['0']
        """
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self):
        """An iterator over every module of the tree, this one first (each once).

        >>> len(list(tensorlib.nn.Sequential(tensorlib.nn.Identity()).modules()))
        2
        """
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """An iterator over ``(dotted name, module)`` for the whole tree, depth first, this
        one first (named ``prefix``).

        >>> [n for n, _ in tensorlib.nn.Sequential(tensorlib.nn.Identity()).named_modules()]
        ['', '0']
        """
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    # ---- training state --------------------------------------------------------------------
    def train(self, mode=True):
        """Set training mode on this module and every submodule (affects Dropout,
        BatchNorm, ...); returns self.

        >>> tensorlib.nn.Sequential(tensorlib.nn.Identity()).train(False)[0].training
        False
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """``train(False)``: evaluation mode; returns self.

        >>> tensorlib.nn.Identity().eval().training
        False
        """
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` on every parameter (freeze with False); returns self.

        >>> m = tensorlib.nn.Linear(2, 2).requires_grad_(False)
        >>> any(p.requires_grad for p in m.parameters())
        False
        """
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of every parameter: to None (the default) or to zeros.

        >>> m = tensorlib.nn.Linear(2, 1); m(tensorlib.ones(1, 2)).sum().backward()
        >>> m.zero_grad(); m.weight.grad is None
        True
        """
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    # ---- printing --------------------------------------------------------------------------
    def _get_name(self):
        return self.__class__.__name__

    def extra_repr(self):
        """The module's own settings for its repr (override in layers); empty here.

        >>> tensorlib.nn.Linear(2, 3).extra_repr()
        'in_features=2, out_features=3, bias=True'
        """
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = ["(" + key + "): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _stage(action):
    """Run a load action now, or after every check passed when load_state_dict collects."""
    pending = _loading.pending
    if pending is None:
        action()
    else:
        pending.append(action)


def _parse_to(args, kwargs):
    """(device, dtype, non_blocking) from the arguments of ``Module.to``."""
    from tensorlib._core.dtype import dtype as DType
    import tensorlib
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    kwargs.pop("memory_format", None)
    kwargs.pop("copy", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got unexpected "
                        f"keyword argument '{next(iter(kwargs))}'")
    rest = list(args)
    if rest and isinstance(rest[0], TensorBase):
        t = rest.pop(0)
        device, dtype = t.device, t.dtype
    elif rest and not isinstance(rest[0], DType):
        device = rest.pop(0)
    if rest and isinstance(rest[0], DType):
        dtype = rest.pop(0)
    if rest and isinstance(rest[0], bool):
        non_blocking = rest.pop(0)
    if rest:
        raise TypeError(f"to() received an invalid combination of arguments - got "
                        f"{tuple(type(a).__name__ for a in args)}")
    if device is not None:
        device = tensorlib.device(device) if not isinstance(device, int) else \
            tensorlib.device("cuda", device)
    return device, dtype, non_blocking
