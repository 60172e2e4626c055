"""Training-loop pieces: tensorlib against torch, same code, same values, one process.

Data loading: one shuffled epoch of 20,000 3x32x32 images with a per-sample transform, batch
64, with 0 and 2 worker processes, in samples per second (higher is better). Checkpoints:
save and load of a 100 MB state_dict, and our load with ``mmap=True`` against torch's load.

Optimizer steps over many parameters: Adam and SGD with momentum over 200 parameters of
10,000 float32 elements each (gradients set once, the step timed alone). Ours is one fused C
pass per parameter group (tensorlib/_core/cpu/cpu_optim.c); torch runs its default
implementation on the CPU (the per-parameter loop: foreach is the default only for CUDA
tensors), and, for reference, foreach=True. Each case times the same statement in
alternating rounds (tensorlib, torch, tensorlib, ...), best round kept. Ratios below 1 mean
tensorlib is faster. Both run at the same thread count. Run it on a quiet machine (load
average under 1.5; the script prints it).

    python bench/bench_train.py              # all cases
    python bench/bench_train.py --quick      # a smoke run
    python bench/bench_train.py -k adam      # cases whose name contains "adam"
"""
import argparse
import os
import time

import numpy as np

try:
    import torch
except ImportError:
    torch = None

import tensorlib
from _timing import race

N_PARAMS, NUMEL = 200, 10_000


def _params(lib):
    """The same parameters and gradients in both libraries."""
    gen = np.random.default_rng(0)
    params = []
    for _ in range(N_PARAMS):
        p = lib.from_numpy(gen.standard_normal(NUMEL, dtype=np.float32)).requires_grad_(True)
        p.grad = lib.from_numpy(gen.standard_normal(NUMEL, dtype=np.float32))
        params.append(p)
    return params


def _case(name, **kwargs):
    def make(lib, foreach=None):
        extra = {} if foreach is None else {"foreach": foreach}
        opt = getattr(lib.optim, name)(_params(lib), **kwargs, **extra)
        return opt.step
    return make


CASES = [
    ("Adam step, 200 params x 10,000", _case("Adam", lr=1e-3), 0.6),
    ("SGD momentum step, 200 params x 10,000", _case("SGD", lr=1e-3, momentum=0.9), 0.6),
    ("AdamW amsgrad step, 200 params x 10,000",
     _case("AdamW", lr=1e-3, amsgrad=True), None),
    ("RMSprop centered step, 200 params x 10,000",
     _case("RMSprop", lr=1e-3, centered=True), None),
]



# -- data loading -------------------------------------------------------------------------

N_SAMPLES, BATCH = 20_000, 64


def _dataset(lib):
    """20,000 CIFAR-like uint8 images, each turned into a normalized float tensor with a
    random horizontal flip as it is read (the per-sample transform of a vision pipeline)."""
    class Images(lib.utils.data.Dataset):
        def __init__(self):
            gen = np.random.default_rng(0)
            self.images = gen.integers(0, 256, (N_SAMPLES, 32, 32, 3), dtype=np.uint8)
            self.labels = gen.integers(0, 10, N_SAMPLES)

        def __len__(self):
            return N_SAMPLES

        def __getitem__(self, i):
            img = lib.from_numpy(self.images[i]).permute(2, 0, 1).float().div(255.0)
            if i % 2:
                img = img.flip(-1)
            return (img - 0.5) / 0.25, int(self.labels[i])
    return Images()


def _epoch(lib, workers):
    loader = lib.utils.data.DataLoader(_dataset(lib), batch_size=BATCH, shuffle=True,
                                       num_workers=workers)
    t0 = time.perf_counter()
    n = 0
    for x, _ in loader:
        n += x.shape[0]
    return n / (time.perf_counter() - t0)


def _bench_data(rounds):
    for workers in (0, 2):
        best = {"tl": 0.0, "torch": 0.0}
        for _ in range(max(1, rounds // 5)):
            for name, lib in (("tl", tensorlib), ("torch", torch)):
                best[name] = max(best[name], _epoch(lib, workers))
        ratio = best["tl"] / best["torch"]
        flag = "" if ratio >= 1.2 else "  MISSED"
        print(f"{f'DataLoader 20k 3x32x32, batch 64, workers {workers}':46} "
              f"{best['tl']:8.0f}/s {best['torch']:9.0f}/s {ratio:6.2f}x  >=1.2x "
              f"(samples/s: higher is better){flag}")


# -- save / load --------------------------------------------------------------------------

def _state_dict(lib):
    """100 MB of float32 in 25 tensors of 1,000,000 elements."""
    gen = np.random.default_rng(0)
    return {f"layer{i}.weight": lib.from_numpy(gen.standard_normal(1_000_000, dtype=np.float32))
            for i in range(25)}


def _bench_save_load(rounds):
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        paths = {"tl": os.path.join(d, "tl.pt"), "torch": os.path.join(d, "torch.pt")}
        sds = {"tl": _state_dict(tensorlib), "torch": _state_dict(torch)}
        libs = {"tl": tensorlib, "torch": torch}
        saves = {k: (lambda k=k: libs[k].save(sds[k], paths[k])) for k in libs}
        best = race(saves, max(3, rounds // 3))
        _row("save 100 MB state_dict", best["tl"], best["torch"], "1.0x")
        loads = {k: (lambda k=k: libs[k].load(paths[k])) for k in libs}
        best = race(loads, max(3, rounds // 3))
        _row("load 100 MB state_dict", best["tl"], best["torch"], "1.0x")
        mm = race({"tl": lambda: tensorlib.load(paths["tl"], mmap=True)},
                   max(3, rounds // 3))["tl"]
        _row("load with mmap=True vs torch load", mm, best["torch"], "0.1x")


def _row(name, ours, theirs, goal):
    print(f"{name:46} {ours * 1e3:9.1f}ms {theirs * 1e3:9.1f}ms {ours / theirs:6.2f}x  {goal}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--quick", action="store_true")
    p.add_argument("-k", default="")
    args = p.parse_args()
    rounds = 2 if args.quick else args.rounds
    if torch is None:
        raise SystemExit("bench_train compares with torch: pip install torch")
    torch.set_num_threads(tensorlib.get_num_threads())
    print(f"load average {os.getloadavg()[0]:.2f}; threads {tensorlib.get_num_threads()}; "
          f"tensorlib {tensorlib.__file__}")
    print(f"{'case':46} {'tensorlib':>11} {'torch':>11} {'ratio':>7} {'goal':>6} "
          f"{'torch foreach':>14} {'ratio':>7}")
    for name, make, goal in CASES:
        if args.k.lower() not in name.lower():
            continue
        fns = {"tl": make(tensorlib), "torch": make(torch), "foreach": make(torch, True)}
        best = race(fns, rounds)
        ratio = best["tl"] / best["torch"]
        goal_s = f"{goal:5.1f}x" if goal else "     -"
        flag = "  MISSED" if goal and ratio > goal else ""
        print(f"{name:46} {best['tl'] * 1e6:9.1f}us {best['torch'] * 1e6:9.1f}us "
              f"{ratio:6.2f}x {goal_s} {best['foreach'] * 1e6:12.1f}us "
              f"{best['tl'] / best['foreach']:6.2f}x{flag}")
    if args.k.lower() in "dataloader":
        _bench_data(rounds)
    if args.k.lower() in "save load":
        _bench_save_load(rounds)


if __name__ == "__main__":
    main()
