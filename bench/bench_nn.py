"""nn layers and train steps: tensorlib against torch, same code, same weights, one process.

Each case builds the same model in both libraries (``lib.nn.X``), copies torch's weights into
ours, and times the same statement in alternating rounds (tensorlib, torch, tensorlib, ...),
best round kept. Ratios below 1 mean tensorlib is faster. Both run at the same thread count.
Run it on a quiet machine (load average under 1.5; the script prints it).

    python bench/bench_nn.py                 # all cases
    python bench/bench_nn.py --quick         # a smoke run
    python bench/bench_nn.py -k conv         # cases whose name contains "conv"

The MLP train step runs twice: updating its parameters with SGD with momentum written out by
hand (the same few lines in both libraries, tensor ops per parameter), and with
``lib.optim.SGD(momentum=0.9)`` (ours: one fused pass over all parameters). The goals are the
issues'. Optimizer steps alone: bench/bench_train.py.
"""
import argparse
import os

import numpy as np

try:
    import torch
except ImportError:
    torch = None

import tensorlib
from _timing import per_call, race


def _copy_weights(ours, theirs):
    """Copy torch's parameters and buffers into the same-named ones of our module."""
    src = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    with tensorlib.no_grad():
        for k, v in ours.state_dict(keep_vars=True).items():
            v.copy_(tensorlib.from_numpy(np.ascontiguousarray(src[k])))


def _case_linear(lib):
    m = lib.nn.Linear(4, 4)
    x = lib.ones(1, 4)
    return m, lambda: m(x)


def _case_mlp_step(lib):
    m = lib.nn.Sequential(lib.nn.Linear(784, 256), lib.nn.ReLU(), lib.nn.Linear(256, 10))
    gen = np.random.default_rng(0)
    x = lib.from_numpy(gen.standard_normal((64, 784), dtype=np.float32))
    y = lib.from_numpy(gen.integers(0, 10, 64))
    opt = lib.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)

    def step():
        opt.zero_grad()
        lib.nn.functional.cross_entropy(m(x), y).backward()
        opt.step()
    return m, step


def _case_lenet_step(lib):
    nn = lib.nn
    m = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                      nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                      nn.Linear(84, 10))
    gen = np.random.default_rng(0)
    x = lib.from_numpy(gen.standard_normal((32, 1, 28, 28), dtype=np.float32))
    y = lib.from_numpy(gen.integers(0, 10, 32))
    opt = lib.optim.Adam(m.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        lib.nn.functional.cross_entropy(m(x), y).backward()
        opt.step()
    return m, step


def _conv_input(lib):
    gen = np.random.default_rng(0)
    return lib.from_numpy(gen.standard_normal((8, 64, 32, 32), dtype=np.float32))


def _case_conv_fwd(lib):
    m = lib.nn.Conv2d(64, 64, 3, padding=1)
    x = _conv_input(lib)

    def fwd():
        with lib.no_grad():
            return m(x)
    return m, fwd


def _case_conv_fwd_bwd(lib):
    m = lib.nn.Conv2d(64, 64, 3, padding=1)
    x = _conv_input(lib).requires_grad_()

    def step():
        m(x).sum().backward()
        m.zero_grad()
        x.grad = None
    return m, step


def _case_lstm(lib, backward):
    m = lib.nn.LSTM(64, 128, batch_first=True)
    gen = np.random.default_rng(0)
    x = lib.from_numpy(gen.standard_normal((16, 50, 64), dtype=np.float32))

    def fwd():
        with lib.no_grad():
            return m(x)

    def fwd_bwd():
        out, _ = m(x)
        out.sum().backward()
        m.zero_grad()
    return m, (fwd_bwd if backward else fwd)


def _case_encoder(lib):
    m = lib.nn.TransformerEncoderLayer(d_model=256, nhead=4, batch_first=True, dropout=0.0)
    m.eval()
    gen = np.random.default_rng(0)
    x = lib.from_numpy(gen.standard_normal((16, 64, 256), dtype=np.float32))

    def fwd():
        with lib.no_grad():
            return m(x)
    return m, fwd


CASES = [
    ("Linear(4,4) call, 1x4 input", _case_linear, 0.7),
    ("MLP train step 784-256-10, batch 64, SGD momentum", _case_mlp_step, 0.8),
    ("LeNet-like CNN train step, batch 32, Adam", _case_lenet_step, 1.3),
    ("conv2d 8x64x32x32, 64 3x3 filters, fwd", _case_conv_fwd, 1.3),
    ("conv2d same, fwd+bwd", _case_conv_fwd_bwd, 1.5),
    ("LSTM(64->128) 16x50 fwd", lambda lib: _case_lstm(lib, False), 1.2),
    ("LSTM(64->128) 16x50 fwd+bwd", lambda lib: _case_lstm(lib, True), 1.3),
    ("TransformerEncoderLayer(256, 4 heads) 16x64 fwd", _case_encoder, 1.3),
]


def _im2col_conv(x, w, b):
    """Our conv2d by hand: the im2col strided view, one copy, one GEMM (the baseline the conv
    kernel is held to: the copy should be its only overhead)."""
    n, c, h, wd = x.shape
    k = w.shape[2]
    xp = tensorlib.nn.functional.pad(x, (1, 1, 1, 1))
    sn, sc, sh, sw = xp.stride()
    cols = xp.as_strided((n, h, wd, c, k, k), (sn, sh, sw, sc, sh, sw))
    cols = cols.reshape(n * h * wd, c * k * k)
    out = cols @ w.reshape(w.shape[0], -1).t() + b
    return out.reshape(n, h, wd, -1).permute(0, 3, 1, 2)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--quick", action="store_true")
    p.add_argument("-k", default="")
    args = p.parse_args()
    rounds = 2 if args.quick else args.rounds
    if torch is None:
        raise SystemExit("bench_nn compares with torch: pip install torch")
    torch.set_num_threads(tensorlib.get_num_threads())
    torch.manual_seed(0)
    print(f"load average {os.getloadavg()[0]:.2f}; threads {tensorlib.get_num_threads()}; "
          f"tensorlib {tensorlib.__file__}")
    print(f"{'case':50} {'tensorlib':>11} {'torch':>11} {'ratio':>7} {'goal':>6}")
    for name, make, goal in CASES:
        if args.k not in name:
            continue
        try:
            theirs, t_fn = make(torch)
            ours, o_fn = make(tensorlib)
            _copy_weights(ours, theirs)
        except (AttributeError, NotImplementedError) as e:
            print(f"{name:50} not available: {type(e).__name__}: {e}")
            continue
        best = race({"tl": o_fn, "torch": t_fn}, rounds)
        ratio = best["tl"] / best["torch"]
        flag = "" if ratio <= goal else "  MISSED"
        print(f"{name:50} {best['tl'] * 1e6:9.1f}us {best['torch'] * 1e6:9.1f}us "
              f"{ratio:6.2f}x {goal:5.1f}x{flag}")
    if "im2col" in args.k or not args.k:
        x = _conv_input(tensorlib)
        m = tensorlib.nn.Conv2d(64, 64, 3, padding=1)
        with tensorlib.no_grad():
            w, b = m.weight.detach(), m.bias.detach()
            fns = {"conv": lambda: m(x), "im2col": lambda: _im2col_conv(x, w, b)}
            best = {k: min(per_call(f, 3) for _ in range(rounds)) for k, f in fns.items()}
        print(f"{'conv2d vs our im2col + the same GEMM':50} {best['conv'] * 1e6:9.1f}us "
              f"{best['im2col'] * 1e6:9.1f}us {best['conv'] / best['im2col']:6.2f}x   1.1x")


if __name__ == "__main__":
    main()
