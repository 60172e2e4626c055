"""Launch shapes for add, sum and softmax on a GPU, timed with CUDA events (the tuning behind
Runtime.grid_cap, _ops.RED_SPLIT/RED_MAX_PARTS and the softmax kernels' thread counts;
bench/results/gpu_tuning_H200_2026-11-27.log, which also timed register-cached softmax
variants since removed).

    TENSORLIB_CUDA=pycuda python bench/gpu_tuning.py          # on a GPU machine
    TENSORLIB_CUDA=emulate python bench/gpu_tuning.py --rehearse
"""
import sys

import numpy as np
import torch
import tensorlib as tl
from bench_cuda import _timer_tl, _timer_torch
from tensorlib.cuda import _ops, _runtime

small = "--rehearse" in sys.argv
tdev = "cpu" if small else "cuda"


def t_tl(fn, reps=3 if small else 25):
    """Median microseconds of fn, each call bracketed by CUDA events (bench_cuda's timer)."""
    return _timer_tl(tl, fn, reps) * 1e6


def t_th(fn, reps=25):
    return float("nan") if small else _timer_torch(torch, fn, reps, True) * 1e6


print("SMs:", tl.cuda.get_device_properties(0).multi_processor_count)
n = 1 << (16 if small else 28)
a = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
x, y = tl.tensor(a, device="cuda"), tl.tensor(a, device="cuda")
out = tl.empty_like(x)
px, py = torch.tensor(a, device=tdev), torch.tensor(a, device=tdev)
pout = torch.empty_like(px)
print(f"add torch {t_th(lambda: torch.add(px, py, out=pout)):.1f}us")
rt = _ops._rt()
cap = rt.grid_cap
for g in (264, 528, 1056, 2112, 4096, 8192, 16384, 65536, 1 << 20):
    rt.grid_cap = g
    print(f"add grid_cap={g}: {t_tl(lambda: tl.add(x, y, out=out)):.1f}us")
rt.grid_cap = cap
print(f"sum torch {t_th(lambda: px.sum()):.1f}us; ours {float(x.sum())}, "
      f"exact {float(a.astype(np.float64).sum())}")
for split in (4, 8, 16, 32, 64):
    for mp in (264, 528, 1024, 2048, 4096):
        _ops.RED_SPLIT, _ops.RED_MAX_PARTS = split, mp
        print(f"sum split={split} maxparts={mp}: {t_tl(lambda: x.sum()):.1f}us")
_ops.RED_SPLIT, _ops.RED_MAX_PARTS = 16, 1024
m = 64 if small else 4096
for dt in ("float32", "float64"):
    s = np.random.default_rng(1).standard_normal((m, m)).astype(dt)
    xs, ps = tl.tensor(s, device="cuda"), torch.tensor(s, device=tdev)
    ys = tl.empty_like(xs)
    want = torch.softmax(ps, 1).cpu().numpy()
    print(f"softmax {dt} torch {t_th(lambda: torch.softmax(ps, 1)):.1f}us")
    sfx = "f32" if dt == "float32" else "f64"
    cases = [("rows", t) for t in (128, 256, 512, 1024)]
    if dt == "float32":
        cases += [("rows_st", t) for t in (256, 512, 1024)]
    for name, th in cases:
        def go():
            _ops._rt().launch("tensor_ops", f"tl_softmax_{name}_{sfx}", m, th,
                              [_runtime.ptr(xs.data_ptr()), _runtime.ptr(ys.data_ptr()),
                               np.int64(m), np.int64(m), np.int32(0)], _ops._stream(0))
        try:
            us = t_tl(go)
            err = float(np.abs(ys.cpu().numpy() - want).max())
            print(f"softmax {dt} {name} threads={th}: {us:.1f}us (max err {err:.2e})")
        except Exception as e:
            print(f"softmax {dt} {name} threads={th}: {type(e).__name__}: {str(e)[:80]}")
