"""tensorlib's CUDA kernels side by side with PyTorch's on the same GPU, in one process.

Prints, per case, tensorlib's time, torch's time, the ratio (tensorlib / torch: below 1 is
faster) and the bandwidth tensorlib achieved. Times are per call, the median of several
runs, each bracketed by CUDA events on the current stream after a warm-up (so kernel
compilation and the allocators' first requests are not timed).

    TENSORLIB_CUDA=pycuda python bench/bench_cuda.py            # on a GPU machine
    TENSORLIB_CUDA=emulate python bench/bench_cuda.py --rehearse  # anywhere: small sizes,
                                                                  # torch on the CPU

Cases and the issue's goals: elementwise add of 2^28 float32 (<= 1.1x, >= 80% of the copy
bandwidth), float32 sum (<= 1.2x), softmax 4096x4096 (<= 1.3x), 4096^2 float32 GEMM
(<= 2.0x cuBLAS), conv2d forward (<= 2.5x) and a small MLP train step. A case tensorlib
cannot run on the device yet prints its NotImplementedError instead of a figure.
"""
import argparse
import statistics
import time

import numpy as np


def _timer_tl(tl, fn, reps):
    cuda = tl.cuda
    fn()
    cuda.synchronize()
    out = []
    for _ in range(reps):
        a, b = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) / 1e3)
    return statistics.median(out)


def _timer_torch(torch, fn, reps, on_gpu):
    fn()
    if on_gpu:
        torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        if on_gpu:
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            out.append(a.elapsed_time(b) / 1e3)
        else:
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rehearse", action="store_true",
                    help="small sizes, for the emulator (figures mean nothing)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--more", action="store_true",
                    help="also misaligned and scalar elementwise cases, other reductions, "
                         "softmax row lengths and convolutions")
    ap.add_argument("--profile-host", action="store_true",
                    help="then profile the host side of small adds and of conv2d (cProfile)")
    args = ap.parse_args(argv)
    import tensorlib as tl
    import torch
    if not tl.cuda.is_available():
        raise SystemExit("no CUDA device for tensorlib: set TENSORLIB_CUDA=pycuda (GPU) or "
                         "TENSORLIB_CUDA=emulate with --rehearse")
    on_gpu = torch.cuda.is_available() and not args.rehearse
    tdev = "cuda" if on_gpu else "cpu"
    small = args.rehearse
    reps = 3 if small else args.reps
    n_add = 1 << (16 if small else 28)
    sm = 64 if small else 4096
    print(f"tensorlib runtime: {tl.cuda.backend_name()} on {tl.cuda.get_device_name()}; "
          f"torch {torch.__version__} on {torch.cuda.get_device_name() if on_gpu else 'cpu'}; "
          f"{time.strftime('%Y-%m-%d')}")
    print(f"{'case':34s} {'tensorlib':>12s} {'torch':>12s} {'ratio':>7s} {'GB/s':>8s}")
    rng = np.random.default_rng(0)

    def row(name, tl_fn, torch_fn, nbytes=None):
        try:
            t_tl = _timer_tl(tl, tl_fn, reps)
        except NotImplementedError as e:
            print(f"{name:34s} not on the device yet: {e}")
            return
        t_th = _timer_torch(torch, torch_fn, reps, on_gpu)
        bw = f"{nbytes / t_tl / 1e9:8.1f}" if nbytes else f"{'':8s}"
        print(f"{name:34s} {t_tl * 1e3:10.3f}ms {t_th * 1e3:10.3f}ms {t_tl / t_th:7.2f} {bw}")

    a = rng.standard_normal(n_add, dtype=np.float32)
    x, y = tl.tensor(a, device="cuda"), tl.tensor(a[::-1].copy(), device="cuda")
    px, py = torch.tensor(a, device=tdev), torch.tensor(a[::-1].copy(), device=tdev)
    out, pout = tl.empty_like(x), torch.empty_like(px)
    row(f"copy 2^{n_add.bit_length() - 1} f32", lambda: out.copy_(x),
        lambda: pout.copy_(px), 2 * 4 * n_add)
    row(f"add 2^{n_add.bit_length() - 1} f32", lambda: tl.add(x, y, out=out),
        lambda: torch.add(px, py, out=pout), 3 * 4 * n_add)
    row(f"sum 2^{n_add.bit_length() - 1} f32", lambda: x.sum(), lambda: px.sum(), 4 * n_add)
    s = rng.standard_normal((sm, sm), dtype=np.float32)
    xs, ps = tl.tensor(s, device="cuda"), torch.tensor(s, device=tdev)
    row(f"softmax {sm}x{sm} f32", lambda: tl.softmax(xs, 1), lambda: torch.softmax(ps, 1),
        2 * 4 * sm * sm)
    if args.more:
        # the 16-byte vector paths and what they leave out: scalars, misaligned starts (x[1:]
        # of a 16-byte aligned buffer), other reductions and row lengths
        m = n_add - 4
        xa, ya, oa = x[1:m + 1], y[1:m + 1], out[1:m + 1]
        pxa, pya, poa = px[1:m + 1], py[1:m + 1], pout[1:m + 1]
        row("add misaligned x[1:]", lambda: tl.add(xa, ya, out=oa),
            lambda: torch.add(pxa, pya, out=poa), 12 * m)
        row("mul by 2.5", lambda: tl.mul(x, 2.5, out=out), lambda: torch.mul(px, 2.5, out=pout),
            8 * n_add)
        row("exp", lambda: tl.exp(x, out=out), lambda: torch.exp(px, out=pout), 8 * n_add)
        row("sum misaligned x[1:]", lambda: xa.sum(), lambda: pxa.sum(), 4 * m)
        cols = n_add // sm
        xr, pr = x.view(sm, cols), px.view(sm, cols)
        row(f"sum(1) {sm}x{cols} f32", lambda: xr.sum(1), lambda: pr.sum(1), 4 * n_add)
        row(f"log_softmax {sm}x{sm} f32", lambda: tl.log_softmax(xs, 1),
            lambda: torch.log_softmax(ps, 1), 8 * sm * sm)
        for r, c in ((sm // 4, sm * 4), (sm, sm + 3)):
            a2 = rng.standard_normal((r, c), dtype=np.float32)
            x2, p2 = tl.tensor(a2, device="cuda"), torch.tensor(a2, device=tdev)
            row(f"softmax {r}x{c} f32", lambda: tl.softmax(x2, 1),
                lambda: torch.softmax(p2, 1), 8 * r * c)
    s64 = rng.standard_normal((sm, sm))
    xs64, ps64 = tl.tensor(s64, device="cuda"), torch.tensor(s64, device=tdev)
    row(f"softmax {sm}x{sm} f64", lambda: tl.softmax(xs64, 1), lambda: torch.softmax(ps64, 1),
        2 * 8 * sm * sm)
    row(f"matmul {sm}^2 f32", lambda: xs @ xs, lambda: ps @ ps)
    img = rng.standard_normal((8 if small else 64, 3, 32, 32), dtype=np.float32)
    w = rng.standard_normal((16, 3, 3, 3), dtype=np.float32)
    xi, wi = tl.tensor(img, device="cuda"), tl.tensor(w, device="cuda")
    pi, pw = torch.tensor(img, device=tdev), torch.tensor(w, device=tdev)
    row("conv2d forward 3->16 3x3", lambda: tl.nn.functional.conv2d(xi, wi),
        lambda: torch.nn.functional.conv2d(pi, pw))
    if args.more:
        row("conv2d 3->16 3x3 stride 2 pad 1",
            lambda: tl.nn.functional.conv2d(xi, wi, stride=2, padding=1),
            lambda: torch.nn.functional.conv2d(pi, pw, stride=2, padding=1))
        dimg = rng.standard_normal((2 if small else 16, 32, 64, 64), dtype=np.float32)
        dw = rng.standard_normal((32, 1, 5, 5), dtype=np.float32)
        xd, wd = tl.tensor(dimg, device="cuda"), tl.tensor(dw, device="cuda")
        pd, pwd = torch.tensor(dimg, device=tdev), torch.tensor(dw, device=tdev)
        row("conv2d depthwise 32ch 5x5 pad 2",
            lambda: tl.nn.functional.conv2d(xd, wd, padding=2, groups=32),
            lambda: torch.nn.functional.conv2d(pd, pwd, padding=2, groups=32))

    def mlp(lib, dev):
        m = lib.nn.Sequential(lib.nn.Linear(256, 512), lib.nn.ReLU(), lib.nn.Linear(512, 10))
        m = m.to(dev)
        opt = lib.optim.SGD(m.parameters(), lr=0.01)
        xb = lib.randn(128, 256, device=dev)
        yb = lib.randint(0, 10, (128,), device=dev)

        def step():
            opt.zero_grad()
            lib.nn.functional.cross_entropy(m(xb), yb).backward()
            opt.step()
        return step

    row("MLP train step 256-512-10, b=128", mlp(tl, "cuda"), mlp(torch, tdev))

    # the host's cost of one small op (argument checks, dispatch, launch), not the kernel's
    def host_us(lib, sync, x, out):
        for _ in range(20):
            lib.add(x, x, out=out)
        sync()
        t0 = time.perf_counter()
        for _ in range(500):
            lib.add(x, x, out=out)
        t1 = time.perf_counter()
        sync()
        return (t1 - t0) / 500 * 1e6

    sx, sp = tl.ones(16, device="cuda"), torch.ones(16, device=tdev)
    us_tl = host_us(tl, tl.cuda.synchronize, sx, tl.empty_like(sx))
    us_th = host_us(torch, torch.cuda.synchronize if on_gpu else (lambda: None), sp,
                    torch.empty_like(sp))
    print(f"{'host time per small add (launch)':34s} {us_tl:10.1f}us {us_th:10.1f}us "
          f"{us_tl / us_th:7.2f}")
    if args.profile_host:
        _profile_host(tl, sx, xi, wi)


def _profile_host(tl, sx, xi, wi):
    """Where the host's time per launch goes: the functions with the most time of their own."""
    import cProfile
    import pstats
    out = tl.empty_like(sx)
    for what, fn, n in (("small add", lambda: tl.add(sx, sx, out=out), 3000),
                        ("conv2d", lambda: tl.nn.functional.conv2d(xi, wi), 300)):
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(n):
            fn()
        prof.disable()
        tl.cuda.synchronize()
        print(f"-- host profile: {n} x {what} (tottime, s)")
        pstats.Stats(prof).sort_stats("tottime").print_stats(14)


if __name__ == "__main__":
    main()
