"""tensorlib.nn.Module, Parameter and the containers, side by side with PyTorch: the same
architecture gives the same names in the same order, the same reprs and error messages;
hooks fire in PyTorch's order with PyTorch's arguments; weights copied across give the same
outputs and gradients; conversions keep Parameter identity; memory roles and counters are
exact."""
import copy
import gc
import pickle
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlib
import tensorlib.nn as nn
from tensorlib import memory

pytestmark = pytest.mark.usefixtures("gc_off_for_module")


def np_of(t):
    return None if t is None else t.detach().cpu().numpy() if hasattr(t, "cpu") else t


def to_ours(torch_state):
    """A torch state_dict as tensorlib tensors (via NumPy)."""
    return OrderedDict((k, tensorlib.tensor(v.detach().numpy())) for k, v in torch_state.items())


def tl_repr(s):
    return s.replace("torch.", "tensorlib.")


# ---- two builders of the same architecture ---------------------------------------------------

def build(lib):
    """A model touching every registration path, built the same way in either library."""
    n = lib.nn

    class Block(n.Module):
        def __init__(self):
            super().__init__()
            self.fc = n.Linear(4, 4)
            self.register_buffer("running", lib.zeros(4))
            self.register_buffer("scratch", lib.ones(2), persistent=False)
            self.scale = n.Parameter(lib.ones(1))

        def forward(self, x):
            return self.fc(x) * self.scale + self.running

    class Net(n.Module):
        def __init__(self):
            super().__init__()
            self.embed = n.Linear(3, 4)
            self.blocks = n.ModuleList([Block(), Block()])
            self.heads = n.ModuleDict({"b": n.Linear(4, 2), "a": n.Linear(4, 1, bias=False)})
            self.extra = n.ParameterList([n.Parameter(lib.ones(2)), lib.zeros(3)])
            self.table = n.ParameterDict({"z": n.Parameter(lib.ones(1)), "y": lib.ones(2)})
            self.seq = n.Sequential(OrderedDict([("lin", n.Linear(4, 4)), ("flat", n.Flatten())]))
            self.shared = self.embed                 # the same module under a second name
            self.tied = n.Linear(4, 4)
            self.tied.weight = self.seq.lin.weight   # a parameter shared by two modules
            self.register_buffer("step", lib.tensor(0))
            self.none_param = None
            self.register_parameter("absent", None)

        def forward(self, x):
            h = self.embed(x)
            for b in self.blocks:
                h = b(h)
            h = self.seq(h) + self.tied(h)
            return self.heads["b"](h).sum() + self.heads["a"](h).sum()

    return Net()


@pytest.fixture
def pair(torch):
    torch.manual_seed(0)
    tm = build(torch)
    ours = build(tensorlib)
    ours.load_state_dict(to_ours(tm.state_dict()))
    return tm, ours


def names(it):
    return [n for n, _ in it]


def test_same_names_in_the_same_order(pair):
    tm, ours = pair
    assert list(ours.state_dict()) == list(tm.state_dict())
    assert names(ours.named_parameters()) == names(tm.named_parameters())
    assert (names(ours.named_parameters(remove_duplicate=False))
            == names(tm.named_parameters(remove_duplicate=False)))
    assert (names(ours.named_parameters(prefix="net", recurse=False))
            == names(tm.named_parameters(prefix="net", recurse=False)))
    assert names(ours.named_buffers()) == names(tm.named_buffers())
    assert names(ours.named_buffers(recurse=False)) == names(tm.named_buffers(recurse=False))
    assert names(ours.named_modules()) == names(tm.named_modules())
    assert (names(ours.named_modules(prefix="m", remove_duplicate=False))
            == names(tm.named_modules(prefix="m", remove_duplicate=False)))
    assert names(ours.named_children()) == names(tm.named_children())
    assert len(list(ours.parameters())) == len(list(tm.parameters()))
    assert len(list(ours.children())) == len(list(tm.children()))
    assert len(list(ours.modules())) == len(list(tm.modules()))
    assert len(list(ours.buffers())) == len(list(tm.buffers()))
    sd = ours.state_dict(prefix="p.")
    assert list(sd) == list(tm.state_dict(prefix="p."))
    assert list(sd._metadata) == list(tm.state_dict(prefix="p.")._metadata)


def test_state_dict_values(pair):
    tm, ours = pair
    sd, tsd = ours.state_dict(), tm.state_dict()
    for k in tsd:
        np.testing.assert_array_equal(sd[k].numpy(), tsd[k].numpy())
        assert type(sd[k]) is tensorlib.Tensor and not sd[k].requires_grad
    kv = ours.state_dict(keep_vars=True)
    assert kv["embed.weight"] is ours.embed.weight
    # detached values share the module's memory
    assert sd["embed.weight"].data_ptr() == ours.embed.weight.data_ptr()
    assert "blocks.0.scratch" not in sd


def test_outputs_and_every_gradient_match_torch(pair, torch):
    tm, ours = pair
    x = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    tx = torch.tensor(x, requires_grad=True)
    ox = tensorlib.tensor(x, requires_grad=True)
    ty, oy = tm(tx), ours(ox)
    np.testing.assert_allclose(oy.item(), ty.item(), rtol=1e-5)
    ty.backward()
    oy.backward()
    np.testing.assert_allclose(ox.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    tgrads = dict(tm.named_parameters())
    for name, p in ours.named_parameters():
        tp = tgrads[name]
        if tp.grad is None:
            assert p.grad is None, name
        else:
            np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=name)
            assert p.grad.untyped_storage().role_name == "gradient"


def test_repr_matches_torch(pair):
    tm, ours = pair
    assert repr(ours) == tl_repr(repr(tm))


def test_container_reprs(torch):
    cases = [
        lambda n, lib: n.Sequential(n.Linear(2, 3), n.Flatten(), n.Sequential(n.Linear(3, 3))),
        lambda n, lib: n.ModuleList([n.Linear(2, 2) for _ in range(3)] + [n.Identity()]
                                    + [n.Linear(2, 2)] * 2),
        lambda n, lib: n.ModuleList(),
        lambda n, lib: n.ModuleDict({"a": n.Linear(1, 1), "b": n.Identity()}),
        lambda n, lib: n.ParameterList([n.Parameter(lib.ones(2)),
                                        n.Parameter(lib.ones(2, 3, dtype=lib.float64))]),
        lambda n, lib: n.ParameterDict({"a": n.Parameter(lib.ones(2)), "b": lib.ones(3, 1)}),
        lambda n, lib: n.Module(),
        lambda n, lib: n.Unflatten(1, (2, 2)),
        lambda n, lib: n.Bilinear(2, 3, 4, bias=False),
        lambda n, lib: n.Sequential(n.Sequential(n.Sequential(n.Linear(1, 1)))),
    ]
    for make in cases:
        assert repr(make(nn, tensorlib)) == tl_repr(repr(make(torch.nn, torch)))


def test_extra_repr_of_several_lines(torch):
    def make(n):
        class M(n.Module):
            def __init__(self):
                super().__init__()
                self.child = n.Identity()

            def extra_repr(self):
                return "a=1\nb=2"
        return M()
    assert repr(make(nn)) == repr(make(torch.nn))


# ---- Parameter ------------------------------------------------------------------------------

def test_parameter_basics(torch):
    x = tensorlib.ones(2, 3)
    p = nn.Parameter(x)
    assert isinstance(p, tensorlib.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p.data_ptr() == x.data_ptr()            # shares the memory
    x.add_(1)                                      # and the version counter
    assert p[0, 0].item() == 2.0 and p._version == x._version
    assert repr(p) == tl_repr(repr(torch.nn.Parameter(torch.full((2, 3), 2.0))))
    assert repr(nn.Parameter()) == repr(torch.nn.Parameter())
    q = nn.Parameter(tensorlib.ones(2), requires_grad=False)
    assert repr(q) == repr(torch.nn.Parameter(torch.ones(2), requires_grad=False))
    assert type(p + 1) is tensorlib.Tensor and type(p.detach()) is tensorlib.Tensor
    assert p.untyped_storage().role_name == "parameter"
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(tensorlib.ones(2, dtype=tensorlib.int64))
    y = tensorlib.ones(2, requires_grad=True) * 2
    assert nn.Parameter(y).grad_fn is None          # made from a non-leaf: detached


def test_parameter_deepcopy_and_pickle():
    p = nn.Parameter(tensorlib.tensor([1.0, 2.0]))
    p.grad = tensorlib.ones(2)
    p.tag = "w"
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad and q.grad is None
    assert q.data_ptr() != p.data_ptr() and q.tolist() == [1.0, 2.0]
    assert q.untyped_storage().role_name == "parameter"
    r = pickle.loads(pickle.dumps(p))
    assert type(r) is nn.Parameter and r.requires_grad and r.tolist() == [1.0, 2.0]
    assert r.tag == "w"
    f = pickle.loads(pickle.dumps(nn.Parameter(tensorlib.ones(1), requires_grad=False)))
    assert not f.requires_grad
    b = pickle.loads(pickle.dumps(nn.Buffer(tensorlib.ones(2), persistent=False)))
    assert isinstance(b, nn.Buffer) and b.persistent is False


# ---- registration ---------------------------------------------------------------------------

def _err(fn):
    try:
        fn()
    except Exception as e:      # noqa: BLE001 (the class and message are compared)
        return type(e), str(e)
    return None


def test_registration_errors_match_torch(torch):
    def cases(lib):
        n = lib.nn

        def assign_tensor_to_param():
            m = n.Linear(2, 2)
            m.weight = lib.ones(2, 2)

        def assign_int_to_child():
            m = n.Sequential(n.Identity())
            setattr(m, "0", 3)

        def assign_list_to_buffer():
            m = n.Module()
            m.register_buffer("b", lib.ones(1))
            m.b = [1]

        def register_dotted():
            n.Module().register_parameter("a.b", None)

        def register_empty():
            n.Module().register_buffer("", None)

        def register_existing():
            m = n.Module()
            m.x = 1
            m.register_parameter("x", None)

        def register_not_param():
            n.Module().register_parameter("w", lib.ones(1))

        def register_non_leaf():
            n.Module().register_parameter("w", n.Parameter(lib.ones(1)) * 2)

        def register_buffer_bad():
            n.Module().register_buffer("b", 3)

        def register_buffer_name():
            n.Module().register_buffer(1, None)

        def add_module_bad():
            n.Module().add_module("m", 3)

        def add_module_dotted():
            n.Module().add_module("a.b", n.Identity())

        def before_init():
            class Bad(n.Module):
                def __init__(self):
                    self.w = n.Parameter(lib.ones(1))
            Bad()

        def before_init_module():
            class Bad(n.Module):
                def __init__(self):
                    self.m = n.Identity()
            Bad()

        def missing_attr():
            return n.Linear(1, 1).nope

        def missing_forward():
            n.Module()(1)

        def init_kwargs():
            n.Module(foo=1)

        return [assign_tensor_to_param, assign_int_to_child, assign_list_to_buffer,
                register_dotted, register_empty, register_existing, register_not_param,
                register_non_leaf, register_buffer_bad, register_buffer_name, add_module_bad,
                add_module_dotted, before_init, before_init_module, missing_attr,
                missing_forward, init_kwargs]

    for ours, theirs in zip(cases(tensorlib), cases(torch)):
        te, oe = _err(theirs), _err(ours)
        assert te is not None and oe is not None, ours.__name__
        assert oe[0] is te[0], (ours.__name__, oe, te)
        assert oe[1] == tl_repr(te[1]).replace("tensorlib.nn.Parameter", "torch.nn.Parameter") \
            .replace("tensorlib.nn.Module or", "torch.nn.Module or") \
            .replace("tensorlib.nn.Buffer, tensorlib.Tensor", "torch.nn.Buffer, torch.Tensor"), \
            (ours.__name__, oe, te)


def test_attribute_protocol(torch):
    m = nn.Module()
    m.w = nn.Parameter(tensorlib.ones(1))
    m.register_buffer("b", tensorlib.zeros(1))
    m.child = nn.Identity()
    m.plain = 5
    assert m.b.untyped_storage().role_name == "buffer"
    # assigning None keeps the registration; a new tensor to a buffer name stays a buffer
    m.w = None
    assert "w" in m._parameters and m.w is None
    m.b = tensorlib.ones(3)
    assert m._buffers["b"].shape == (3,) and m.b.untyped_storage().role_name == "buffer"
    # a Parameter under a buffer's name moves it
    m.b = nn.Parameter(tensorlib.ones(1))
    assert "b" in m._parameters and "b" not in m._buffers
    m.buf = nn.Buffer(tensorlib.ones(2), persistent=False)
    assert "buf" in m._buffers and "buf" in m._non_persistent_buffers_set
    assert "buf" not in m.state_dict()
    d = dir(m)
    for name in ("w", "b", "child", "plain", "forward", "buf"):
        assert name in d
    del m.w, m.child, m.plain, m.buf
    assert "w" not in m._parameters and "child" not in m._modules and not hasattr(m, "plain")
    assert "buf" not in m._non_persistent_buffers_set
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'w'"):
        m.w
    seq = nn.Sequential(nn.Identity())
    assert "0" not in dir(seq)


def test_get_submodule_parameter_buffer(pair, torch):
    tm, ours = pair
    assert ours.get_submodule("blocks.1.fc") is ours.blocks[1].fc
    assert ours.get_submodule("") is ours
    assert ours.get_parameter("blocks.0.fc.weight") is ours.blocks[0].fc.weight
    assert ours.get_buffer("blocks.0.running") is ours.blocks[0].running
    for target in ("blocks.3", "embed.weight.x", "nope"):
        assert _err(lambda: ours.get_submodule(target)) == _err(lambda: tm.get_submodule(target))
    for target in ("embed.nope", "blocks"):
        assert _err(lambda: ours.get_parameter(target)) == _err(lambda: tm.get_parameter(target))
    for target in ("embed.weight", "blocks.0.nope"):
        assert _err(lambda: ours.get_buffer(target)) == _err(lambda: tm.get_buffer(target))


# ---- load_state_dict ------------------------------------------------------------------------

def test_load_state_dict_errors_match_torch(torch):
    tm, ours = torch.nn.Linear(3, 2), nn.Linear(3, 2)
    bad = {"weight": np.ones((5, 3), np.float32), "extra": np.ones(1, np.float32)}
    te = _err(lambda: tm.load_state_dict({k: torch.tensor(v) for k, v in bad.items()}))
    oe = _err(lambda: ours.load_state_dict({k: tensorlib.tensor(v) for k, v in bad.items()}))
    assert oe[0] is te[0] is RuntimeError
    assert oe[1] == tl_repr(te[1])
    assert oe[1] == ("Error(s) in loading state_dict for Linear:\n\t"
                     'Missing key(s) in state_dict: "bias". \n\t'
                     'Unexpected key(s) in state_dict: "extra". \n\t'
                     "size mismatch for weight: copying a param with shape "
                     "tensorlib.Size([5, 3]) from checkpoint, the shape in current model is "
                     "tensorlib.Size([2, 3]).")
    # a size mismatch is an error even when not strict
    te = _err(lambda: tm.load_state_dict({"weight": torch.ones(1)}, strict=False))
    oe = _err(lambda: ours.load_state_dict({"weight": tensorlib.ones(1)}, strict=False))
    assert oe == (te[0], tl_repr(te[1]))
    te = _err(lambda: tm.load_state_dict({"weight": 3}, strict=False))
    oe = _err(lambda: ours.load_state_dict({"weight": 3}, strict=False))
    assert oe == te
    assert _err(lambda: ours.load_state_dict([1])) == _err(lambda: tm.load_state_dict([1]))


def test_load_state_dict_results(torch):
    tm, ours = torch.nn.Sequential(torch.nn.Linear(3, 2)), nn.Sequential(nn.Linear(3, 2))
    sd = {"0.weight": np.full((2, 3), 7, np.float32), "1.x": np.ones(1, np.float32)}
    tr = tm.load_state_dict({k: torch.tensor(v) for k, v in sd.items()}, strict=False)
    orr = ours.load_state_dict({k: tensorlib.tensor(v) for k, v in sd.items()}, strict=False)
    assert orr == tuple(tr) and repr(orr) == repr(tr)
    assert orr.missing_keys == ["0.bias"] and orr.unexpected_keys == ["1.x"]
    assert ours[0].weight.tolist() == [[7.0] * 3] * 2
    ok = ours.load_state_dict(ours.state_dict())
    assert repr(ok) == repr(tm.load_state_dict(tm.state_dict()))
    assert repr(ok) == "<All keys matched successfully>"


def test_failed_strict_load_loads_nothing():
    m = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 2))
    before = {k: v.clone() for k, v in m.state_dict().items()}
    sd = {k: tensorlib.full(v.shape, 9.0) for k, v in m.state_dict().items()}
    del sd["1.bias"]
    with pytest.raises(RuntimeError, match='Missing key'):
        m.load_state_dict(sd)
    for k, v in m.state_dict().items():
        assert bool((v == before[k]).all()), k
    sd["1.bias"] = tensorlib.ones(3)            # a size mismatch: nothing is loaded either
    with pytest.raises(RuntimeError, match="size mismatch for 1.bias"):
        m.load_state_dict(sd, strict=False)
    for k, v in m.state_dict().items():
        assert bool((v == before[k]).all()), k


def test_load_state_dict_assign_and_dtype_cast():
    m = nn.Linear(2, 2)
    w = m.weight
    m.load_state_dict({"weight": tensorlib.ones(2, 2, dtype=tensorlib.float64),
                       "bias": tensorlib.zeros(2)})
    assert m.weight is w and m.weight.dtype == tensorlib.float32     # copied in place
    new_w = tensorlib.full((2, 2), 3.0)
    m.load_state_dict({"weight": new_w, "bias": tensorlib.zeros(2)}, assign=True)
    assert m.weight is not w and isinstance(m.weight, nn.Parameter)
    assert m.weight.data_ptr() == new_w.data_ptr() and m.weight.requires_grad
    assert m.weight.untyped_storage().role_name == "parameter"


def test_buffers_load_and_scalar_compat():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("count", tensorlib.tensor(0))
            self.register_buffer("tmp", tensorlib.zeros(1), persistent=False)
    m = M()
    # an old checkpoint's [1]-shaped value loads into a 0-d buffer; non-persistent is skipped
    assert m.load_state_dict({"count": tensorlib.tensor([5])}) == ([], [])
    assert m.count.item() == 5


def test_load_state_dict_hooks_and_extra_state(torch):
    def make(n, lib):
        class M(n.Module):
            def __init__(self):
                super().__init__()
                self.fc = n.Linear(1, 1)
                self.value = 0

            def get_extra_state(self):
                return {"value": self.value}

            def set_extra_state(self, state):
                self.value = state["value"]
        return M()
    ours, tm = make(nn, tensorlib), make(torch.nn, torch)
    assert list(ours.state_dict()) == list(tm.state_dict())
    ours.value = 4
    other = make(nn, tensorlib)
    seen = []
    other.register_load_state_dict_post_hook(lambda mod, keys: seen.append(tuple(keys)))
    other.load_state_dict(ours.state_dict())
    assert other.value == 4 and seen == [([], [])]


# ---- hooks ----------------------------------------------------------------------------------

def _hooked(lib, log):
    n = lib.nn

    class Twice(n.Module):
        def forward(self, x, *, scale=1.0):
            return x * 2 * scale

    net = n.Sequential(n.Linear(3, 4), Twice(), n.Linear(4, 2))

    def arr(v):
        if v is None:
            return None
        if isinstance(v, tuple):
            return tuple(arr(e) for e in v)
        return np.round(v.detach().numpy().astype(np.float64), 5).tolist()

    for name, m in [("top", net)] + [(str(i), c) for i, c in enumerate(net)]:
        m.register_forward_pre_hook(lambda mod, args, name=name:
                                    log.append(("pre", name, arr(args))))
        m.register_forward_pre_hook(lambda mod, args, name=name:
                                    log.append(("pre-first", name)), prepend=True)
        m.register_forward_hook(lambda mod, args, out, name=name:
                                log.append(("fwd", name, arr(args), arr(out))))
        m.register_forward_hook(lambda mod, args, kwargs, out, name=name:
                                log.append(("fwd-kw", name, sorted(kwargs))), with_kwargs=True)
        m.register_full_backward_pre_hook(lambda mod, go, name=name:
                                          log.append(("bw-pre", name, arr(go))))
        m.register_full_backward_hook(lambda mod, gi, go, name=name:
                                      log.append(("bw", name, arr(gi), arr(go))))
    return net


def test_hooks_fire_in_torchs_order_with_torchs_arguments(torch):
    tlog, olog = [], []
    tnet, onet = _hooked(torch, tlog), _hooked(tensorlib, olog)
    onet.load_state_dict(to_ours(tnet.state_dict()))
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    for lib, net, log in ((torch, tnet, tlog), (tensorlib, onet, olog)):
        inp = lib.tensor(x, requires_grad=True)
        net(inp).sum().backward()
    assert len(olog) == len(tlog)
    for o, t in zip(olog, tlog):
        assert o[:2] == t[:2]
        assert _close(o[2:], t[2:]), (o, t)


def _close(a, b):
    if isinstance(a, (list, tuple)):
        return (isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(_close(x, y) for x, y in zip(a, b)))
    if isinstance(a, float):
        return abs(a - b) <= 1e-4 * max(1.0, abs(b))
    return a == b


def test_backward_hook_when_input_does_not_require_grad(torch):
    for lib, logs in ((torch, []), (tensorlib, [])):
        m = lib.nn.Linear(2, 2)
        m.register_full_backward_hook(
            lambda mod, gi, go: logs.append((gi, tuple(g.shape for g in go))))
        with pytest.warns(UserWarning, match="no inputs require gradients"):
            m(lib.ones(3, 2)).sum().backward()
        assert logs[0][0] == (None,) and list(logs[0][1][0]) == [3, 2]


def test_backward_hooks_replace_gradients(torch):
    results = []
    for lib in (torch, tensorlib):
        m = lib.nn.Linear(2, 2)
        with lib.no_grad():
            m.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 10,))
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0] + 1,))
        x = lib.ones(1, 2, requires_grad=True)
        m(x).sum().backward()
        results.append((x.grad.tolist(), m.weight.grad.tolist(), m.bias.grad.tolist()))
    assert results[0] == results[1]


def test_backward_hook_return_checks(torch):
    for lib in (torch, tensorlib):
        m = lib.nn.Identity()
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but "
                                               "expected 1"):
            m(x).sum().backward()
    for lib in (torch, tensorlib):
        m = lib.nn.Identity()
        m.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="invalid number of grad_output, got 2, but "
                                               "expected 1"):
            m(x).sum().backward()


def test_forward_hook_kwargs_modify_and_remove(torch):
    outs = []
    for lib in (torch, tensorlib):
        m = lib.nn.Linear(1, 1)
        with lib.no_grad():
            m.weight.fill_(2.0)
            m.bias.fill_(0.0)

        def pre(mod, args, kwargs):
            return (args[0] + 1,), kwargs
        h1 = m.register_forward_pre_hook(pre, with_kwargs=True)
        h2 = m.register_forward_hook(lambda mod, args, out: out * 3)
        h3 = m.register_forward_pre_hook(lambda mod, args: args[0] * 0 + 5)   # not a tuple
        x = lib.ones(1, 1)
        a = m(x).item()
        h1.remove()
        h2.remove()
        b = m(x).item()
        h3.remove()
        h3.remove()
        c = m(x).item()
        outs.append((a, b, c))
        assert not m._forward_hooks and not m._forward_pre_hooks
        assert not m._forward_pre_hooks_with_kwargs
        bad = m.register_forward_pre_hook(lambda mod, a, k: 3, with_kwargs=True)
        with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
            m(x)
        bad.remove()
    assert outs[0] == outs[1] == (30.0, 10.0, 2.0)


def test_always_call_forward_hook_runs_when_forward_raises(torch):
    for lib in (torch, tensorlib):
        class Boom(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")
        seen = []
        m = Boom()
        m.register_forward_hook(lambda mod, args, out: seen.append("always"), always_call=True)
        m.register_forward_hook(lambda mod, args, out: seen.append("normal"))
        with pytest.raises(ValueError, match="boom"):
            m(lib.ones(1))
        assert seen == ["always"]


def test_global_module_hooks(torch):
    logs = []
    for lib, mm in ((torch, torch.nn.modules.module), (tensorlib, nn.modules.module)):
        seen = []
        h1 = mm.register_module_forward_pre_hook(
            lambda m, a: seen.append(("pre", type(m).__name__)))
        h2 = mm.register_module_forward_hook(
            lambda m, a, o: seen.append(("fwd", type(m).__name__)))
        h3 = mm.register_module_full_backward_pre_hook(
            lambda m, go: seen.append(("bw-pre", type(m).__name__)))
        h4 = mm.register_module_full_backward_hook(
            lambda m, gi, go: seen.append(("bw", type(m).__name__)))
        try:
            net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Identity())
            net(lib.ones(1, 2, requires_grad=True)).sum().backward()
        finally:
            for h in (h1, h2, h3, h4):
                h.remove()
        net(lib.ones(1, 2))
        logs.append(seen)
    assert logs[0] == logs[1]
    assert logs[1][:2] == [("pre", "Sequential"), ("pre", "Linear")]


def test_hooks_leave_no_cycles(no_gc):
    m = nn.Linear(4, 4)
    m.register_full_backward_hook(lambda mod, gi, go: None)
    m.register_forward_hook(lambda mod, a, o: None)
    x = tensorlib.ones(2, 4, requires_grad=True)
    base = memory.memory_allocated()
    y = m(x)
    y.sum().backward()
    del y
    m.zero_grad()
    x.grad = None
    assert memory.memory_allocated() == base


# ---- training state and conversions ----------------------------------------------------------

def test_train_eval_requires_grad_zero_grad_apply(pair, torch):
    tm, ours = pair
    ours.eval()
    assert all(not m.training for m in ours.modules())
    ours.train()
    assert all(m.training for m in ours.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        ours.train("yes")
    ours.requires_grad_(False)
    assert not any(p.requires_grad for p in ours.parameters())
    ours.requires_grad_()
    ours(tensorlib.ones(1, 3)).backward()
    assert all(p.grad is not None for n, p in ours.named_parameters() if "extra" not in n
               and "table" not in n and "blocks" not in n or "fc" in n)
    ours.zero_grad(set_to_none=False)
    grads = [p.grad for p in ours.parameters() if p.grad is not None]
    assert grads and all(float(g.abs().sum()) == 0 for g in grads)
    ours.zero_grad()
    assert all(p.grad is None for p in ours.parameters())
    order_o, order_t = [], []
    ours.apply(lambda m: order_o.append(type(m).__name__))
    tm.apply(lambda m: order_t.append(type(m).__name__))
    assert order_o == order_t


def test_to_keeps_parameter_identity_and_converts_grads():
    m = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    m.register_buffer("steps", tensorlib.tensor(3))
    m.register_buffer("avg", tensorlib.zeros(2))
    m(tensorlib.ones(4, 2)).sum().backward()
    params = list(m.parameters())
    grads = [p.grad for p in params]
    vals = [p.detach().clone() for p in params]
    assert m.to(tensorlib.float64) is m
    for p, q, g, v in zip(m.parameters(), params, grads, vals):
        assert p is q and p.dtype == tensorlib.float64
        assert p.grad is g and g.dtype == tensorlib.float64
        np.testing.assert_array_equal(p.detach().numpy(), v.numpy().astype(np.float64))
        assert p.untyped_storage().role_name == "parameter"
        assert p.grad.untyped_storage().role_name == "gradient"
        assert isinstance(p, nn.Parameter) and p.requires_grad
    assert m.steps.dtype == tensorlib.int64                     # integers keep their dtype
    assert m.avg.dtype == tensorlib.float64 and m.avg.untyped_storage().role_name == "buffer"
    assert all(a is b for a, b in zip(m.parameters(), params))
    m.float()
    assert all(p.dtype == tensorlib.float32 for p in m.parameters())
    m.half()
    assert m[0].weight.dtype == tensorlib.float16
    m.bfloat16()
    assert m[0].weight.dtype == tensorlib.bfloat16
    m.double()
    assert m[0].weight.dtype == tensorlib.float64
    m.to(tensorlib.zeros(1, dtype=tensorlib.float32))
    assert m[0].weight.dtype == tensorlib.float32
    m.to("cpu", tensorlib.float64)
    assert m[0].weight.dtype == tensorlib.float64
    m.to(dtype=tensorlib.float32, device="cpu")
    assert m.cpu() is m and m[0].weight.dtype == tensorlib.float32
    assert m.type(tensorlib.float64) is m and m.steps.dtype == tensorlib.float64
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        m.to(tensorlib.int32)
    # an optimizer-style holder of the old Parameter objects sees the new data
    w = params[0]
    m.to(tensorlib.float32)
    assert m[0].weight is w and w.dtype == tensorlib.float32


def test_to_meta_and_to_empty():
    m = nn.Linear(3, 2)
    w = m.weight
    m.to("meta")
    assert m.weight is w and w.is_meta and w.shape == (2, 3)
    assert w.untyped_storage().role_name == "parameter"
    y = m(tensorlib.empty(5, 3, device="meta"))
    assert y.is_meta and y.shape == (5, 2)
    m.to_empty(device="cpu")
    assert m.weight is w and not w.is_meta and w.device.type == "cpu"
    big = nn.Linear(1000, 1000, device="meta")
    assert big.weight.is_meta


def test_pickle_of_a_module():
    net = nn.Sequential(nn.Linear(3, 4), nn.Flatten(), nn.Linear(4, 4))
    net.add_module("tied", nn.Linear(4, 4))
    net.tied.weight = net[2].weight
    net.register_buffer("steps", tensorlib.tensor(7))
    net.register_forward_hook(_double_output)
    clone = pickle.loads(pickle.dumps(net))
    assert list(clone.state_dict()) == list(net.state_dict())
    assert clone.tied.weight is clone[2].weight and clone.steps.item() == 7
    for a, b in zip(clone.state_dict().values(), net.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    x = tensorlib.ones(2, 3)
    np.testing.assert_array_equal(clone(x).detach().numpy(), net(x).detach().numpy())
    assert repr(clone) == repr(net)


def _double_output(mod, args, out):
    return out * 2


def test_deepcopy_of_a_module(pair):
    _, ours = pair
    for clone in (copy.deepcopy(ours),):
        assert list(clone.state_dict()) == list(ours.state_dict())
        for (k, a), b in zip(clone.state_dict().items(), ours.state_dict().values()):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
            assert a.data_ptr() != b.data_ptr()
        assert clone.tied.weight is clone.seq.lin.weight       # sharing is kept
        assert clone.shared is clone.embed
        assert isinstance(clone.embed.weight, nn.Parameter)
        x = tensorlib.ones(2, 3)
        assert clone(x).item() == pytest.approx(ours(x).item(), rel=1e-6)
    m = nn.Linear(1, 1)
    state = m.__dict__.copy()
    del state["_forward_hooks_always_called"]
    m2 = nn.Linear.__new__(nn.Linear)
    m2.__setstate__(state)
    assert m2._forward_hooks_always_called == OrderedDict()


# ---- containers -----------------------------------------------------------------------------

def _kinds(seq):
    return [(n, type(m).__name__) for n, m in seq._modules.items()]


def test_sequential_operations_match_torch(torch):
    def run(n):
        mk = [n.Linear(1, 1), n.Identity(), n.Flatten(), n.Unflatten(1, (1, 1))]
        s = n.Sequential(*mk)
        out = [_kinds(s), type(s[-1]).__name__, type(s[1]).__name__, _kinds(s[1:3]),
               _kinds(s[::-1]), len(s), [type(m).__name__ for m in s]]
        s.append(n.Identity())
        s.insert(1, n.Flatten())
        s.insert(-1, n.Linear(2, 2))
        out.append(_kinds(s))
        out.append(type(s.pop(0)).__name__)
        del s[1]
        out.append(_kinds(s))
        del s[1:3]
        out.append(_kinds(s))
        s[0] = n.Identity()
        out.append(_kinds(s))
        s.extend([n.Linear(1, 1)])
        t = s + n.Sequential(n.Flatten())
        out += [_kinds(s), _kinds(t)]
        s += n.Sequential(n.Identity())
        out.append(_kinds(s))
        out.append(_kinds(n.Sequential(n.Identity()) * 3))
        out.append(_kinds(n.Sequential(OrderedDict([("a", n.Identity()), ("b", n.Flatten())]))))
        for bad in (lambda: s[10], lambda: s[-11], lambda: s + 1,
                    lambda: s.insert(99, n.Identity()), lambda: s.insert(0, 1)):
            out.append(_err(bad))
        return out
    assert run(nn) == [tl_repr(x) if isinstance(x, str) else x for x in run(torch.nn)] or \
        _loose(run(nn), run(torch.nn))


def _loose(a, b):
    # error messages name classes by their module path: compare modulo torch -> tensorlib
    return repr(a).replace("tensorlib", "torch") == repr(b)


def test_sequential_forward_order():
    s = nn.Sequential(nn.Linear(2, 3), nn.Flatten(0, -1))
    with tensorlib.no_grad():
        s[0].weight.fill_(1.0)
        s[0].bias.fill_(0.5)
    assert s(tensorlib.ones(1, 2)).tolist() == [2.5, 2.5, 2.5]


def test_module_list_dict_operations_match_torch(torch):
    def run(n):
        ml = n.ModuleList([n.Identity(), n.Flatten()])
        ml.append(n.Linear(1, 1))
        ml.extend([n.Identity()])
        ml.insert(1, n.Linear(2, 2))
        ml += [n.Flatten()]
        out = [_kinds(ml), type(ml[-1]).__name__, _kinds(ml[1:4]), len(ml)]
        out.append(type(ml.pop(1)).__name__)
        del ml[0:2]
        out.append(_kinds(ml))
        ml[0] = n.Identity()
        out.append(_kinds(ml + n.ModuleList([n.Flatten()])))
        out.append(_err(lambda: ml[7]))
        out.append(_err(lambda: ml.extend(3)))
        md = n.ModuleDict({"b": n.Identity(), "a": n.Flatten()})
        md["c"] = n.Linear(1, 1)
        md.update([("d", n.Identity())])
        out += [list(md.keys()), [type(v).__name__ for v in md.values()], "a" in md, len(md)]
        out.append(type(md.pop("a")).__name__)
        out.append(list(md))
        out.append(_err(lambda: md.update(3)))
        out.append(_err(lambda: md.update([("x",)])))
        md.clear()
        out.append(len(md))
        return out
    assert _loose(run(nn), run(torch.nn))


def test_parameter_list_dict_operations_match_torch(torch):
    def run(n, lib):
        pl = n.ParameterList([lib.ones(2), n.Parameter(lib.zeros(1))])
        pl.append(lib.ones(3))
        pl.extend([lib.zeros(2)])
        pl[0] = lib.full((2,), 5.0)
        out = [len(pl), [type(p).__name__ for p in pl], [p.shape[0] for p in pl],
               names(pl.named_parameters()), len(pl[1:3]), pl[-1].tolist()]
        out.append(_err(lambda: pl(1)))
        out.append(_err(lambda: pl.extend(lib.ones(2))))
        pd = n.ParameterDict({"b": lib.ones(1), "a": lib.ones(2)})
        pd["c"] = lib.zeros(3)
        pd.update([("d", n.Parameter(lib.ones(4)))])
        out += [list(pd.keys()), names(pd.named_parameters()), "a" in pd, len(pd)]
        out.append(pd.pop("a").shape[0])
        out.append(pd.popitem()[0])
        out.append(pd.get("zz", 3))
        out.append(pd.setdefault("e", lib.ones(1)).shape[0])
        out.append(list((pd | n.ParameterDict({"f": lib.ones(1)})).keys()))
        out.append(_err(lambda: pd[1]))
        out.append(_err(lambda: pd(1)))
        return out
    assert _loose(run(nn, tensorlib), run(torch.nn, torch))


def test_data_parallel_on_cpu(torch, monkeypatch):
    # as in a build without CUDA devices (the suite runs the emulator: see
    # test_cuda_device.py for DataParallel over two devices)
    monkeypatch.setattr("tensorlib.nn.parallel.data_parallel._cuda", lambda: None)
    m = nn.Linear(3, 2)
    dp = nn.DataParallel(m)
    assert dp.module is m
    assert list(dp.state_dict()) == list(torch.nn.DataParallel(torch.nn.Linear(3, 2)).state_dict())
    x = tensorlib.randn(4, 3)
    np.testing.assert_array_equal(dp(x).detach().numpy(), m(x).detach().numpy())
    assert repr(dp) == tl_repr(repr(torch.nn.DataParallel(torch.nn.Linear(3, 2))))
    assert list(dp.parameters()) == list(m.parameters())


# ---- memory ---------------------------------------------------------------------------------

def _rounded(nbytes):
    return -(-nbytes // 512) * 512


def _mlp():
    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", tensorlib.full((16,), 2.0))

        def forward(self, x):
            return x * self.scale

    return nn.Sequential(nn.Linear(8, 16), Scale(), nn.Linear(16, 4))


def test_memory_after_backward_is_parameters_grads_and_inputs(no_gc):
    tensorlib.manual_seed(0)
    start = memory.memory_allocated()
    x = tensorlib.randn(5, 8)
    net = _mlp()
    base = memory.memory_allocated()
    net(x).sum().backward()
    grads = [p.grad for p in net.parameters()]
    assert all(g is not None for g in grads)
    # every activation and saved tensor is freed: parameters, buffers, the input and the
    # gradients are all that is left, to the byte
    expected = (sum(_rounded(p.nbytes) for p in net.parameters())
                + sum(_rounded(b.nbytes) for b in net.buffers()) + _rounded(x.nbytes)
                + sum(_rounded(g.nbytes) for g in grads))
    assert memory.memory_allocated() - start == expected
    assert expected == 512 * (4 + 1 + 1 + 4)
    # a second step accumulates into new gradient tensors and frees the old ones
    del grads
    net(x).sum().backward()
    assert memory.memory_allocated() - base == sum(_rounded(p.grad.nbytes)
                                                   for p in net.parameters())
    net.zero_grad()
    assert memory.memory_allocated() == base
    del net
    assert memory.memory_allocated() == base - sum(
        _rounded(n) for n in (16 * 8 * 4, 16 * 4, 16 * 4, 4 * 16 * 4, 4 * 4))


def test_profile_counts_bytes_by_role(no_gc):
    x = tensorlib.randn(5, 8)
    with memory.profile() as prof:
        net = _mlp()
        net(x).sum().backward()
    params = 16 * 8 * 4 + 16 * 4 + 4 * 16 * 4 + 4 * 4
    assert prof.by_role("end") == {"parameter": params, "buffer": 16 * 4, "gradient": params}
    roles = {p.untyped_storage().role_name for p in net.parameters()}
    assert roles == {"parameter"}
    assert {p.grad.untyped_storage().role_name for p in net.parameters()} == {"gradient"}
    assert net[1].scale.untyped_storage().role_name == "buffer"
    peak = prof.by_role("peak")
    assert peak["parameter"] == params and peak["buffer"] == 16 * 4
    # the activations the layers saved changed role; parameters and buffers never did
    changes = [(e.bytes, e.role) for e in prof.events if e.kind == "role"]
    assert (5 * 16 * 4, "saved-for-backward") in changes
    assert sorted(b for b, r in changes if r == "parameter") == sorted(
        [16 * 8 * 4, 16 * 4, 4 * 16 * 4, 4 * 4])
    assert [b for b, r in changes if r == "buffer"] == [16 * 4]
    assert all(b != 16 * 8 * 4 and b != 4 * 16 * 4 for b, r in changes
               if r == "saved-for-backward")


def test_a_parameter_saved_for_backward_keeps_its_role(no_gc):
    w = nn.Parameter(tensorlib.ones(4))
    x = tensorlib.ones(4)
    y = (x * w).sum()          # mul saves both: x becomes saved-for-backward, w stays
    assert w.untyped_storage().role_name == "parameter"
    assert x.untyped_storage().role_name == "saved-for-backward"
    y.backward()
    assert w.untyped_storage().role_name == "parameter"


def test_non_full_backward_hook_matches_torch(torch):
    import warnings
    results = []
    for lib in (torch, tensorlib):
        m = lib.nn.Linear(2, 3)
        with lib.no_grad():
            m.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
            m.bias.fill_(0.5)
        log = []

        def hook(mod, gi, go):
            log.append(([None if g is None else g.tolist() for g in gi], [g.tolist() for g in go]))
            return tuple(None if g is None else g * 2 for g in gi)
        m.register_backward_hook(hook)
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks"):
            m.register_full_backward_hook(lambda *a: None)
        x = lib.tensor([[1.0, -1.0], [0.5, 2.0]], requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            y = m(x)
        (y * y).sum().backward()
        results.append((log, [str(e.message) for e in w], x.grad.tolist(),
                        m.weight.grad.tolist(), m.bias.grad.tolist()))
    assert results[0] == results[1]


def test_assigning_parameter_data_keeps_the_role():
    m = nn.Linear(2, 2)
    new = tensorlib.zeros(2, 2)
    m.weight.data = new
    assert m.weight.data_ptr() == new.data_ptr() and isinstance(m.weight, nn.Parameter)
    assert m.weight.untyped_storage().role_name == "parameter"
    assert type(m.weight.data) is tensorlib.Tensor and not m.weight.data.requires_grad


def _multi(lib):
    class Multi(lib.nn.Module):
        """Three positional arguments (a tensor, an int, a tensor without grad) and a tuple
        of three outputs, one of them unused by the loss."""

        def forward(self, x, k, y):
            return x * k, x + y, (x * y).sum()
    return Multi()


def test_full_backward_hooks_multiple_inputs_and_outputs(torch):
    results = []
    for lib in (torch, tensorlib):
        m = _multi(lib)
        log = []

        def shapes(gs):
            return [None if g is None else g.tolist() for g in gs]
        m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", shapes(go))))
        m.register_full_backward_hook(
            lambda mod, gi, go: log.append(("bw", shapes(gi), shapes(go))))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = lib.tensor([3.0, -1.0])
        a, b, c = m(x, 3, y)
        (a.sum() * 2 + c).backward()            # b is not used
        results.append((log, x.grad.tolist()))
    assert results[0] == results[1]


def test_state_dict_hooks_match_torch(torch):
    logs = []
    for lib in (torch, tensorlib):
        m = lib.nn.Sequential(lib.nn.Linear(1, 1))
        log = []
        m[0].register_state_dict_pre_hook(
            lambda mod, prefix, keep: log.append(("pre", prefix, keep)))
        m[0].register_state_dict_post_hook(
            lambda mod, sd, prefix, meta: log.append(("post", prefix, list(sd), dict(meta))))
        m.state_dict(prefix="net.", keep_vars=True)
        m.load_state_dict(m.state_dict())
        logs.append(log)
    assert logs[0] == logs[1]


def test_set_submodule_matches_torch(torch):
    outs = []
    for lib in (torch, tensorlib):
        net = lib.nn.Sequential(lib.nn.Sequential(lib.nn.Identity()))
        net.set_submodule("0.0", lib.nn.Flatten())
        out = [repr(net)]
        net.set_submodule("0.new", lib.nn.Identity())
        out.append(repr(net))
        out.append(_err(lambda: net.set_submodule("0.other", lib.nn.Identity(), strict=True)))
        out.append(_err(lambda: net.set_submodule("", lib.nn.Identity())))
        out.append(_err(lambda: net.set_submodule("0.x", 3)))
        outs.append(out)
    assert _loose(outs[1], outs[0])


_LAYERS = st.deferred(lambda: st.one_of(
    st.tuples(st.just("linear"), st.integers(1, 3), st.integers(1, 3), st.booleans()),
    st.tuples(st.just("bilinear"), st.integers(1, 2), st.integers(1, 2), st.booleans()),
    st.tuples(st.just("flatten"), st.integers(0, 1)),
    st.tuples(st.just("identity")),
    st.tuples(st.just("seq"), st.lists(_LAYERS, max_size=3)),
    st.tuples(st.just("list"), st.lists(_LAYERS, max_size=3)),
    st.tuples(st.just("dict"), st.lists(_LAYERS, max_size=2)),
    st.tuples(st.just("plist"), st.lists(st.integers(1, 3), max_size=3)),
))


def _make(lib, spec):
    n = lib.nn
    kind = spec[0]
    if kind == "linear":
        return n.Linear(spec[1], spec[2], bias=spec[3])
    if kind == "bilinear":
        return n.Bilinear(spec[1], spec[2], 2, bias=spec[3])
    if kind == "flatten":
        return n.Flatten(spec[1])
    if kind == "identity":
        return n.Identity()
    if kind == "seq":
        return n.Sequential(*[_make(lib, s) for s in spec[1]])
    if kind == "list":
        return n.ModuleList([_make(lib, s) for s in spec[1]])
    if kind == "dict":
        return n.ModuleDict({f"k{i}": _make(lib, s) for i, s in enumerate(spec[1])})
    return n.ParameterList([lib.ones(k) for k in spec[1]])



@settings(max_examples=20)
@given(spec=st.tuples(st.just("seq"), st.lists(_LAYERS, min_size=1, max_size=4)))
def test_random_architectures_have_torchs_names_and_repr(spec):
    torch = pytest.importorskip("torch")
    tm, ours = _make(torch, spec), _make(tensorlib, spec)
    assert list(ours.state_dict()) == list(tm.state_dict())
    assert names(ours.named_modules()) == names(tm.named_modules())
    assert names(ours.named_parameters()) == names(tm.named_parameters())
    assert repr(ours) == tl_repr(repr(tm))
    ours.load_state_dict(to_ours(tm.state_dict()))
    for a, b in zip(ours.parameters(), tm.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_a_module_with_every_kind_of_hook_is_freed_without_gc(no_gc):
    base = memory.memory_allocated()
    m = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
    for sub in m.modules():
        sub.register_forward_pre_hook(_noop)
        sub.register_forward_hook(_noop)
        sub.register_full_backward_hook(_noop)
        sub.register_full_backward_pre_hook(_noop)
        sub.register_state_dict_pre_hook(_noop)
        sub.register_state_dict_post_hook(_noop)
        sub.register_load_state_dict_pre_hook(_noop)
        sub.register_load_state_dict_post_hook(_noop)
    m.load_state_dict(m.state_dict())
    x = tensorlib.ones(3, 4, requires_grad=True)
    m(x).sum().backward()
    del m, x, sub
    assert memory.memory_allocated() == base


def _noop(*args):
    return None


def test_load_state_dict_pre_hook_arguments(torch):
    logs = []
    for lib in (torch, tensorlib):
        m = lib.nn.Sequential(lib.nn.Linear(1, 1))
        log = []
        m[0].register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, meta, strict, missing, unexpected, errors:
            log.append((type(mod).__name__, sorted(sd), prefix, strict)))
        m.load_state_dict(m.state_dict())
        logs.append(log)
    assert logs[0] == logs[1]


def test_private_load_state_dict_pre_hook_without_module(torch):
    logs = []
    for lib in (torch, tensorlib):
        m = lib.nn.Linear(1, 1)
        log = []

        def hook(sd, prefix, meta, strict, missing, unexpected, errors):
            sd[prefix + "bias"] = sd[prefix + "bias"] * 0 + 4     # an upgrade of old checkpoints
            log.append(prefix)
        m._register_load_state_dict_pre_hook(hook)
        m.load_state_dict({"weight": lib.ones(1, 1), "bias": lib.zeros(1)})
        logs.append((log, m.bias.tolist()))
    assert logs[0] == logs[1] == ([""], [4.0])


def test_plan_replays_a_module_in_eval_mode_with_parameters_outside_the_arena():
    from tensorlib import memory
    tensorlib.manual_seed(0)
    m = tensorlib.nn.Sequential(tensorlib.nn.Linear(64, 128), tensorlib.nn.ReLU(),
                                tensorlib.nn.Linear(128, 10)).eval()
    before = [p.data_ptr() for p in m.parameters()]
    f = memory.plan(m)
    x = tensorlib.randn(32, 64)
    with tensorlib.no_grad():
        ref = m(x)
        outs = [f(x) for _ in range(4)]
    assert f.stats.recordings == 1 and f.stats.replays == 3 and f.stats.fallbacks == 0
    for out in outs:
        assert out.tolist() == ref.tolist()
    plan = f.last_plan
    # the forward's temporaries only: the hidden layer before and after ReLU (32x128 float32
    # each) in the arena, the output escaping; the parameters are never planned
    assert plan.num_requests == 3 and plan.num_escaping == 1
    assert plan.arena_bytes == plan.lower_bound_bytes == 2 * 32 * 128 * 4
    assert [p.data_ptr() for p in m.parameters()] == before
