"""Resource soak (not run in CI): does a long run hold its memory flat?

Two phases, each ``--steps`` steps (100,000 by default):

1. training: forward + backward + Adam step of a small MLP (32-64-64-10, batch 16,
   cross-entropy), a fresh batch every step;
2. planned inference: the same model under ``no_grad`` wrapped in
   ``tensorlib.memory.plan`` (recorded once, replayed from its arena afterwards).

Every ``--every`` steps (10,000 by default) it prints the process's resident set size (RSS,
from /proc/self/statm) and ``tensorlib.memory.memory_allocated()``. The goal: after the
first report (warm-up: the allocator's cache, the plan, the optimizer's state), RSS within 1%
and allocated bytes exactly equal to the warm-up figure. The exit status is 1 when a phase
misses the goal.

    python bench/soak.py                     # 2 x 100,000 steps
    python bench/soak.py --steps 20000 --every 2000
"""
import argparse
import gc
import os
import sys
import time

import tensorlib as torch
from tensorlib import nn

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes():
    """The resident set size of this process, in bytes (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def _model(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.Tanh(),
                         nn.Linear(64, 10))


def _batches(n, seed=1):
    """A small pool of batches, cycled (fresh tensors every step would measure the
    generator, not the loop; the loop still allocates every intermediate)."""
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(16, 32, generator=g), torch.randint(0, 10, (16,), generator=g))
            for _ in range(n)]


def _report(phase, step, t0, rows):
    gc.collect()
    rss, alloc = rss_bytes(), torch.memory.memory_allocated()
    rows.append((step, rss, alloc))
    print(f"{phase:9s} step {step:>7,}  RSS {rss / 2**20:8.2f} MiB  "
          f"memory_allocated {alloc:>9,} B  ({time.perf_counter() - t0:6.1f} s)", flush=True)


def _verdict(phase, rows):
    """Compare every report after the first (the warm-up) with the first."""
    _, rss0, alloc0 = rows[0]
    rss_max = max(r for _, r, _ in rows[1:]) if len(rows) > 1 else rss0
    rss_min = min(r for _, r, _ in rows[1:]) if len(rows) > 1 else rss0
    drift = max(abs(rss_max - rss0), abs(rss0 - rss_min)) / rss0
    alloc_growth = max(a for _, _, a in rows) - alloc0
    ok = drift <= 0.01 and alloc_growth == 0
    print(f"{phase}: RSS drift after warm-up {drift * 100:.3f}% (goal <= 1%), "
          f"allocated bytes growth {alloc_growth:,} B (goal 0): {'ok' if ok else 'FAIL'}",
          flush=True)
    return ok


def train(steps, every):
    model = _model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    data = _batches(64)
    rows, t0 = [], time.perf_counter()
    for step in range(1, steps + 1):
        x, y = data[step % len(data)]
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if step % every == 0:
            del loss
            _report("train", step, t0, rows)
    return _verdict("train", rows)


def planned_inference(steps, every):
    model = _model()
    planned = torch.memory.plan(model)
    data = [x for x, _ in _batches(64, seed=2)]
    rows, t0 = [], time.perf_counter()
    with torch.no_grad():
        ref = model(data[0])
        for step in range(1, steps + 1):
            out = planned(data[step % len(data)])
            if step % every == 0:
                if not planned(data[0]).equal(ref):
                    print("planned output differs from the unplanned one", file=sys.stderr)
                    return False
                del out
                _report("planned", step, t0, rows)
    print(f"planned: {planned.stats}")
    return _verdict("planned", rows)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=100_000)
    p.add_argument("--every", type=int, default=10_000)
    p.add_argument("--phase", choices=["train", "planned", "both"], default="both")
    args = p.parse_args(argv)
    print(f"tensorlib {torch.__version__}, {args.steps:,} steps per phase, pid {os.getpid()}",
          flush=True)
    ok = True
    if args.phase in ("train", "both"):
        ok &= train(args.steps, args.every)
    if args.phase in ("planned", "both"):
        ok &= planned_inference(args.steps, args.every)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
