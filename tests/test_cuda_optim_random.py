"""The CUDA back end's optimizer updates, Philox fills, integer matrix products and in-place
scaling (cuda/optim_ops.cu, cuda/random_ops.cu, cuda/int_ops.cu), against the CPU back end
(and torch's CPU optimizers): on the emulator (conftest's TENSORLIB_CUDA=emulate) the device
gives the CPU's bits; also run under the emulator's checking mode
(TENSORLIB_CUDA_EMU_CHECK=1) and, with TENSORLIB_CUDA=pycuda, on a real GPU."""
import numpy as np
import pytest

import tensorlib

cuda = tensorlib.cuda
pytestmark = pytest.mark.skipif(not cuda.is_available(), reason="no CUDA device (emulator off)")
EMULATED = cuda.is_available() and cuda.backend_name() == "emulator"
TWO_DEVICES = cuda.is_available() and cuda.device_count() >= 2


def host(t):
    t = t.detach().cpu()
    if t.dtype in (tensorlib.bfloat16, tensorlib.float16):
        t = t.float()
    return t.numpy()


def close(got, want, dtype):
    """The device's values against the CPU's: bit for bit on the emulator; on a GPU within
    1e-6 relative (float32) / 1e-12 (float64)."""
    g, w = host(got), host(want)
    if EMULATED:
        np.testing.assert_array_equal(g, w)
    else:
        rtol = 1e-12 if dtype == tensorlib.float64 else 1e-6
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol)


# ---- optimizers -------------------------------------------------------------------------

O = tensorlib.optim
CONFIGS = [
    (O.SGD, dict(lr=0.1)),
    (O.SGD, dict(lr=0.1, weight_decay=0.01, maximize=True)),
    (O.SGD, dict(lr=0.1, momentum=0.9)),
    (O.SGD, dict(lr=0.1, momentum=0.9, dampening=0.2, weight_decay=0.05)),
    (O.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    (O.Adam, dict(lr=0.01)),
    (O.Adam, dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    (O.Adam, dict(lr=0.01, maximize=True, betas=(0.8, 0.9), eps=1e-6)),
    (O.Adam, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, amsgrad=True)),
    (O.AdamW, dict(lr=0.01)),
    (O.AdamW, dict(lr=0.01, amsgrad=True, maximize=True)),
    (O.Adamax, dict(lr=0.01)),
    (O.Adamax, dict(lr=0.01, weight_decay=0.1, maximize=True)),
    (O.NAdam, dict(lr=0.01)),
    (O.NAdam, dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    (O.NAdam, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    (O.RAdam, dict(lr=0.01)),
    (O.RAdam, dict(lr=0.01, weight_decay=0.1, betas=(0.9, 0.9))),
    (O.RAdam, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True,
                   betas=(0.9, 0.9))),
    (O.Adagrad, dict(lr=0.1)),
    (O.Adagrad, dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5,
                     maximize=True)),
    (O.Adadelta, dict(lr=1.0)),
    (O.Adadelta, dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    (O.RMSprop, dict(lr=0.01)),
    (O.RMSprop, dict(lr=0.01, centered=True)),
    (O.RMSprop, dict(lr=0.01, momentum=0.9, weight_decay=0.1)),
    (O.RMSprop, dict(lr=0.01, momentum=0.9, centered=True, maximize=True)),
    (O.Rprop, dict(lr=0.01)),
    (O.Rprop, dict(lr=0.01, etas=(0.3, 1.5), step_sizes=(1e-3, 0.05), maximize=True)),
    (O.ASGD, dict(lr=0.01)),
    (O.ASGD, dict(lr=0.01, t0=2, lambd=0.01, weight_decay=0.1, maximize=True)),
]


def _ids(c):
    return c[0].__name__ + "-" + "-".join(f"{k}={v}" for k, v in c[1].items())


SHAPES = [(5, 3), (7,), ()]
STEPS = 8      # RAdam's rectified step starts at step 6 with beta2 = 0.999 (rho_t > 5)


def _run(cls, kw, dtype, device, steps=STEPS):
    rng = np.random.default_rng(0)
    params = [tensorlib.tensor(rng.standard_normal(s), dtype=dtype).to(device)
              .requires_grad_() for s in SHAPES]
    opt = cls(params, **kw)
    for _ in range(steps):
        for p in params:
            g = rng.standard_normal(tuple(p.shape))
            g[rng.random(g.shape) < 0.2] = 0.0         # zeros: Rprop's sign cases
            p.grad = tensorlib.tensor(g, dtype=dtype).to(device)
        opt.step()
    return params, opt


@pytest.mark.parametrize("dtype", [tensorlib.float32, tensorlib.float64], ids=str)
@pytest.mark.parametrize("config", CONFIGS, ids=_ids)
def test_optimizer_step_on_device_equals_cpu(config, dtype):
    cls, kw = config
    pc, oc = _run(cls, kw, dtype, "cpu")
    pd, od = _run(cls, kw, dtype, "cuda")
    for a, b in zip(pd, pc):
        assert a.device.type == "cuda"
        close(a, b, dtype)
        sa, sb = od.state[a], oc.state[b]
        assert sorted(sa) == sorted(sb)
        for key in sb:
            if not isinstance(sb[key], tensorlib.Tensor):
                assert sa[key] == sb[key]
            elif sb[key].dim() == 0 and sb[key].numel() == 1 and key in ("step", "eta", "mu",
                                                                         "mu_product"):
                # 0-d states stay on the CPU, as PyTorch keeps 'step'
                assert sa[key].device.type == "cpu"
                assert sa[key].item() == sb[key].item()
            else:
                assert sa[key].device.type == "cuda", key
                close(sa[key], sb[key], dtype)


@pytest.mark.parametrize("dtype", [tensorlib.float16, tensorlib.bfloat16], ids=str)
@pytest.mark.parametrize("config", [CONFIGS[3], CONFIGS[6], CONFIGS[26], CONFIGS[28]],
                         ids=_ids)
def test_optimizer_half_types_on_device_equal_cpu(config, dtype):
    cls, kw = config
    pc, _ = _run(cls, kw, dtype, "cpu", steps=3)
    pd, _ = _run(cls, kw, dtype, "cuda", steps=3)
    for a, b in zip(pd, pc):
        assert a.dtype == dtype
        np.testing.assert_array_equal(host(a), host(b))


@pytest.mark.parametrize("config", [CONFIGS[4], CONFIGS[6], CONFIGS[14], CONFIGS[26],
                                    CONFIGS[28]], ids=_ids)
def test_optimizer_on_device_matches_torch(config):
    torch = pytest.importorskip("torch")
    cls, kw = config
    tcls = getattr(torch.optim, cls.__name__)
    pd, _ = _run(cls, kw, tensorlib.float64, "cuda", steps=5)
    rng = np.random.default_rng(0)
    tp = [torch.tensor(rng.standard_normal(s), dtype=torch.float64).requires_grad_()
          for s in SHAPES]
    topt = tcls(tp, **kw)
    for _ in range(5):
        for p in tp:
            g = rng.standard_normal(tuple(p.shape))
            g[rng.random(g.shape) < 0.2] = 0.0
            p.grad = torch.tensor(g, dtype=torch.float64)
        topt.step()
    for a, b in zip(pd, tp):
        np.testing.assert_allclose(host(a), b.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_optimizer_noncontiguous_gradient_and_strided_parameter():
    # a gradient in another layout, a parameter that is a strided view: the front half's
    # copies in the parameter's layout, written back
    rng = np.random.default_rng(1)
    base = rng.standard_normal((4, 6))
    gs = [rng.standard_normal((6, 4)) for _ in range(3)]
    out = {}
    for dev in ("cpu", "cuda"):
        w = tensorlib.tensor(base, dtype=tensorlib.float32).to(dev)
        p = w[:, ::2].detach().requires_grad_()     # a leaf on its own storage
        q = tensorlib.tensor(base.T.copy(), dtype=tensorlib.float32).to(dev).t()
        q.requires_grad_()
        opt = O.Adam([p, q], lr=0.1, amsgrad=True)
        for g in gs:
            p.grad = tensorlib.tensor(g[:3, :4].copy(), dtype=tensorlib.float32).to(dev).t()
            q.grad = tensorlib.tensor(g, dtype=tensorlib.float32).to(dev).t()
            opt.step()
        out[dev] = (p, q)
    for a, b in zip(out["cuda"], out["cpu"]):
        close(a, b, tensorlib.float32)


def test_module_to_cuda_train_step_equals_cpu():
    nn = tensorlib.nn
    results = {}
    for dev in ("cpu", "cuda"):
        tensorlib.manual_seed(0)
        model = nn.Linear(4, 3).to(dev)
        opt = O.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x = tensorlib.tensor(np.linspace(-1, 1, 20).reshape(5, 4),
                             dtype=tensorlib.float32).to(dev)
        y = tensorlib.tensor(np.linspace(0, 1, 15).reshape(5, 3),
                             dtype=tensorlib.float32).to(dev)
        for _ in range(3):
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
        results[dev] = (model.weight, model.bias, loss)
        assert model.weight.device.type == dev
        assert opt.state[model.weight]["momentum_buffer"].device.type == dev
    for a, b in zip(results["cuda"], results["cpu"]):
        np.testing.assert_allclose(host(a), host(b), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("config", [CONFIGS[6], CONFIGS[14], CONFIGS[30]], ids=_ids)
def test_zero_dim_states_on_the_device(config):
    # PyTorch allows 'step' (and NAdam's mu_product, ASGD's eta and mu) on the parameter's
    # device, e.g. after load_state_dict under a CUDA default device: they advance there
    cls, kw = config
    pc, oc = _run(cls, kw, tensorlib.float64, "cpu", steps=4)
    rng = np.random.default_rng(0)
    params = [tensorlib.tensor(rng.standard_normal(s), dtype=tensorlib.float64).cuda()
              .requires_grad_() for s in SHAPES]
    opt = cls(params, **kw)
    for it in range(4):
        for p in params:
            g = rng.standard_normal(tuple(p.shape))
            g[rng.random(g.shape) < 0.2] = 0.0
            p.grad = tensorlib.tensor(g, dtype=tensorlib.float64).cuda()
        opt.step()
        if it == 1:
            for st in opt.state.values():
                for key in ("step", "mu_product", "eta", "mu"):
                    if key in st:
                        st[key] = st[key].cuda()
    for a, b in zip(params, pc):
        close(a, b, tensorlib.float64)
        assert opt.state[a]["step"].device.type == "cuda"
        assert opt.state[a]["step"].item() == oc.state[b]["step"].item() == 4


def test_optimizer_device_mismatch_raises():
    p = tensorlib.zeros(3, device="cuda", requires_grad=True)
    p.grad = tensorlib.ones(3)
    with pytest.raises(RuntimeError, match="gradient is on cpu"):
        O.SGD([p], lr=0.1).step()


# ---- Philox -------------------------------------------------------------------------------

SIZES = [1, 2, 3, 5, 8, 33, 1000]


def _both(fn, seed=123):
    """fn(device) after manual_seed(seed), on the device then on the CPU: the values and the
    generator's offsets."""
    out = []
    for dev in ("cuda", "cpu"):
        tensorlib.manual_seed(seed)
        t = fn(dev)
        out.append((t, tensorlib.default_generator.get_offset()))
    return out


def _same_bits(got, want):
    assert got.device.type == "cuda" and want.device.type == "cpu"
    assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(host(got), host(want))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [tensorlib.float32, tensorlib.float64], ids=str)
def test_rand_and_uniform_bit_for_bit(n, dtype):
    (d, od), (c, oc) = _both(lambda dev: tensorlib.rand(n, dtype=dtype, device=dev))
    _same_bits(d, c)
    assert od == oc > 0
    (d, od), (c, oc) = _both(lambda dev: tensorlib.empty(n, dtype=dtype, device=dev)
                             .uniform_(-3.5, 2.25))
    _same_bits(d, c)
    assert od == oc


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [tensorlib.float32, tensorlib.float64], ids=str)
def test_randn_and_normal_(n, dtype):
    (d, od), (c, oc) = _both(lambda dev: tensorlib.randn(n, dtype=dtype, device=dev))
    assert od == oc > 0
    if EMULATED:
        _same_bits(d, c)
    else:
        # a GPU's log/cos/sin may differ from glibc's in the last bit
        np.testing.assert_allclose(host(d), host(c), rtol=4e-7 if dtype == tensorlib.float32
                                   else 1e-15, atol=1e-7)
    (d, od), (c, oc) = _both(lambda dev: tensorlib.empty(n, dtype=dtype, device=dev)
                             .normal_(2.0, 0.5))
    assert od == oc
    np.testing.assert_allclose(host(d), host(c), rtol=0 if EMULATED else 1e-6)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8", "bool", "float32",
                                   "float64", "float16", "bfloat16"])
def test_randint_and_random_(dtype):
    dt = getattr(tensorlib, dtype)
    (d, od), (c, oc) = _both(lambda dev: tensorlib.randint(0, 2, (7, 3), dtype=dt, device=dev))
    _same_bits(d, c)
    assert od == oc
    (d, od), (c, oc) = _both(lambda dev: tensorlib.empty(13, dtype=dt, device=dev).random_())
    _same_bits(d, c)
    assert od == oc


def test_randint_ranges_and_int64_extremes():
    for lo, hi in [(-5, 7), (0, 1 << 40), (-(1 << 62), 1 << 62), (3, 4), (0, 1 << 33)]:
        (d, od), (c, oc) = _both(lambda dev: tensorlib.randint(lo, hi, (9,), device=dev))
        _same_bits(d, c)
        assert od == oc
    (d, _), (c, _) = _both(lambda dev: tensorlib.empty(11, dtype=tensorlib.int64, device=dev)
                           .random_(-(1 << 63), (1 << 63) - 1))
    _same_bits(d, c)


@pytest.mark.parametrize("p", [0.0, 0.3, 0.5, 1.0])
def test_bernoulli_scalar_p(p):
    (d, od), (c, oc) = _both(lambda dev: tensorlib.empty(17, device=dev).bernoulli_(p))
    _same_bits(d, c)
    assert od == oc
    (d, _), (c, _) = _both(lambda dev: tensorlib.bernoulli(tensorlib.zeros(5, device=dev), p))
    _same_bits(d, c)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 101])
def test_randperm(n):
    (d, od), (c, oc) = _both(lambda dev: tensorlib.randperm(n, device=dev))
    _same_bits(d, c)
    assert od == oc
    assert sorted(host(d).tolist()) == list(range(n))


def test_explicit_generator_and_offset_sequence():
    # a sequence of fills of every kind from one generator: the same numbers and offsets
    def seq(dev):
        g = tensorlib.Generator().manual_seed(99)
        g.set_offset(5)
        vals = [tensorlib.rand(3, generator=g, device=dev),
                tensorlib.randn(5, dtype=tensorlib.float64, generator=g, device=dev),
                tensorlib.randint(-3, 3, (4,), generator=g, device=dev),
                tensorlib.randperm(6, generator=g, device=dev),
                tensorlib.empty(3, device=dev).bernoulli_(0.4, generator=g)]
        return vals, g.get_offset()
    vd, od = seq("cuda")
    vc, oc = seq("cpu")
    assert od == oc
    for a, b in zip(vd, vc):
        if EMULATED or a.dtype != tensorlib.float64:
            _same_bits(a, b)


def test_offset_wraps_modulo_2_64():
    def fill(dev):
        g = tensorlib.Generator().manual_seed(7)
        g.set_offset((1 << 64) - 2)
        t = tensorlib.rand(20, generator=g, device=dev)
        return t, g.get_offset()
    (d, od), (c, oc) = fill("cuda"), fill("cpu")
    _same_bits(d, c)
    assert od == oc == 3


def test_noncontiguous_and_other_dtype_targets():
    # fills into a strided view and a float16 tensor draw into scratch and copy, as on the CPU
    (d, _), (c, _) = _both(lambda dev: tensorlib.zeros(4, 6, device=dev)[:, ::2].uniform_())
    _same_bits(d, c)
    (d, _), (c, _) = _both(lambda dev: tensorlib.empty(9, dtype=tensorlib.float16,
                                                       device=dev).uniform_(-1, 1))
    _same_bits(d, c)


def test_random_argument_errors_as_cpu():
    t = tensorlib.empty(3, device="cuda")
    off = tensorlib.default_generator.get_offset()
    with pytest.raises(RuntimeError, match="from=2.0 > to=1.0"):
        t.uniform_(2.0, 1.0)
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        t.normal_(0.0, -1.0)
    with pytest.raises(RuntimeError, match=r"p to be in \[0, 1\]"):
        t.bernoulli_(1.5)
    assert tensorlib.default_generator.get_offset() == off


@pytest.mark.skipif(not TWO_DEVICES, reason="needs two CUDA devices")
def test_fill_on_second_device():
    (d, od), (c, oc) = _both(lambda dev: tensorlib.randn(
        10, device="cuda:1" if dev == "cuda" else dev))
    assert d.device.index == 1
    assert od == oc
    np.testing.assert_allclose(host(d), host(c), rtol=0 if EMULATED else 1e-6)


def test_philox_kernels_in_checking_mode():
    # every Philox kernel under the emulator's forward, reverse and shuffled orders
    if not EMULATED:
        pytest.skip("checking mode is the emulator's")
    from tensorlib.cuda import _emulator as emu
    dev = emu.get_device(0)
    old = dev.check
    dev.check = True
    try:
        vals = _both(lambda d: tensorlib.cat([
            tensorlib.rand(37, device=d), tensorlib.randn(37, device=d),
            tensorlib.randint(0, 9, (37,), device=d).float(),
            tensorlib.randperm(9, device=d).float(),
            tensorlib.empty(37, device=d).bernoulli_(0.5).float()]))
        _same_bits(vals[0][0], vals[1][0])
    finally:
        dev.check = old


# ---- integer matrix products, scaling -----------------------------------------------------

@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8"])
def test_integer_matmul_family_equals_cpu(dtype):
    dt = getattr(tensorlib, dtype)
    rng = np.random.default_rng(2)
    a = tensorlib.tensor(rng.integers(-50, 50, (3, 4, 5)), dtype=dt)
    b = tensorlib.tensor(rng.integers(-50, 50, (3, 5, 2)), dtype=dt)
    v = tensorlib.tensor(rng.integers(-50, 50, (5,)), dtype=dt)
    cases = [lambda x, y, z: x[0] @ y[0], lambda x, y, z: tensorlib.bmm(x, y),
             lambda x, y, z: tensorlib.matmul(x, y[0]), lambda x, y, z: x @ z,
             lambda x, y, z: z @ z, lambda x, y, z: tensorlib.mm(x[1].t(), x[2]),
             lambda x, y, z: x[:, :, :0] @ y[:, :0, :]]
    for f in cases:
        want = f(a, b, v)
        got = f(a.cuda(), b.cuda(), v.cuda())
        assert got.device.type == "cuda" and got.dtype == want.dtype
        np.testing.assert_array_equal(host(got), host(want))


def test_integer_matmul_wraps_as_cpu():
    big = tensorlib.tensor([[1 << 62, 3], [-(1 << 61), 7]], dtype=tensorlib.int64)
    want = big @ big
    np.testing.assert_array_equal(host(big.cuda() @ big.cuda()), host(want))
    small = tensorlib.tensor([[100, 100], [-100, 27]], dtype=tensorlib.int8)
    np.testing.assert_array_equal(host(small.cuda() @ small.cuda()), host(small @ small))


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64",
                                   "float16", "bfloat16", "float32", "float64"])
def test_scale_kernel_equals_numpy(dtype):
    from tensorlib.cuda import _intops
    dt = getattr(tensorlib, dtype)
    rng = np.random.default_rng(3)
    vals = rng.integers(-200, 200, 50)
    if dtype == "bool":
        vals = vals > 0
    src = tensorlib.tensor(vals).to(dt)
    floating = src.dtype.is_floating_point
    for alpha in (3, -7, 0, 1 << 40) if not floating else (2.5, -0.1, 0.0):
        t = src.cuda()
        _intops.scale(_code(dt), t.numel(),
                      t.data_ptr(), float(alpha) if floating else 0.0,
                      0 if floating else alpha)
        if dtype == "bool":
            want = vals & (alpha != 0)
        elif floating:
            f = src.float().numpy() if dtype in ("float16", "bfloat16") else src.numpy()
            prod = f * (np.float64(alpha) if dtype == "float64" else np.float32(alpha))
            want = tensorlib.tensor(prod).to(dt)
            want = host(want)
        else:
            want = (vals.astype(np.int64) * np.int64(alpha)).astype(host(src).dtype)
        np.testing.assert_array_equal(host(t), want)


def _code(dt):
    return ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
            "float32", "float64"].index(str(dt).split(".")[-1])


# ---- bernoulli / normal with tensor parameters --------------------------------------------

def test_bernoulli_tensor_p_on_device():
    p = tensorlib.tensor(np.linspace(0, 1, 21).reshape(3, 7))
    (d, od), (c, oc) = _both(lambda dev: tensorlib.bernoulli(p.to(dev)))
    _same_bits(d, c)
    assert od == oc
    (d, od), (c, oc) = _both(lambda dev: tensorlib.zeros(2, 3, 7, device=dev)
                             .bernoulli_(p.to(dev).float()))
    _same_bits(d, c)
    assert od == oc
    with pytest.raises(RuntimeError, match=r"probabilities to be in \[0, 1\], got 1.5"):
        tensorlib.bernoulli(tensorlib.tensor([0.5, 1.5], device="cuda"))


@pytest.mark.parametrize("dtype", [tensorlib.float32, tensorlib.float64], ids=str)
def test_normal_tensor_mean_std_on_device(dtype):
    mean = tensorlib.tensor(np.linspace(-2, 2, 12).reshape(3, 4), dtype=dtype)
    std = tensorlib.tensor(np.linspace(0.1, 3, 4), dtype=dtype)
    for args in [(mean, std), (mean, 0.5), (1.5, std)]:
        def fn(dev):
            return tensorlib.normal(*[a.to(dev) if isinstance(a, tensorlib.Tensor) else a
                                      for a in args])
        (d, od), (c, oc) = _both(fn)
        assert od == oc and d.dtype == c.dtype == dtype
        if EMULATED:
            _same_bits(d, c)
        else:
            np.testing.assert_allclose(host(d), host(c), rtol=1e-6, atol=1e-6)
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        tensorlib.normal(mean.cuda(), -std.cuda())
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        tensorlib.normal(mean.cuda(), -0.5)
