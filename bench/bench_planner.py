"""The memory planner on three workloads: an MLP, a transformer-like block and a deep chain of
small ops, all under ``no_grad``.

For each: the arena the plan needs, against the lower bound (the largest sum of planned bytes
alive at once), the naive total (every request its own block) and the allocator's peak on an
unplanned call (allocated bytes above the baseline, as ``max_memory_allocated`` reports);
then the time per call, planned against unplanned, as the best of alternating rounds in one
process, one call of each in turn (noise on a busy machine falls on both alike); the best
and the median per-call time are shown (which one runs first swaps every round). Goals:
arena <= 1.05x the unplanned live peak, planned calls no slower (checked on the
best times, with 2% of slack for noise).

    python bench/bench_planner.py             # default rounds
    python bench/bench_planner.py --quick     # a smoke run
"""
import argparse
import time

import tensorlib as torch
from tensorlib import memory


# ---- workloads ----------------------------------------------------------------------------

def layer_norm(x, eps=1e-5):
    n = x.shape[-1]
    d = x - x.sum(-1, keepdim=True) / n
    return d * ((d * d).sum(-1, keepdim=True) / n + eps).rsqrt()


def mlp(x, ws):
    for w, b in ws[:-1]:
        x = (x @ w + b).relu()
    w, b = ws[-1]
    return x @ w + b


def block(x, p):
    h = layer_norm(x)
    q, k, v = h @ p["wq"], h @ p["wk"], h @ p["wv"]
    s = q @ k.transpose(-1, -2) * (1.0 / q.shape[-1] ** 0.5)
    e = (s - s.amax(-1, keepdim=True)).exp()
    x = x + (e / e.sum(-1, keepdim=True) @ v) @ p["wo"]
    h = layer_norm(x)
    return x + torch.gelu(h @ p["w1"]) @ p["w2"]


def chain(x, n=200):
    for i in range(n):
        x = (x * 1.0001).sin() if i % 2 else x + 0.5
    return x


def workloads():
    g = torch.Generator().manual_seed(0)
    sizes, batch = [512, 1024, 1024, 512], 64
    d, hidden, seq, b = 128, 512, 64, 4
    ws = [(torch.randn(a, c, generator=g) * (1 / a ** 0.5), torch.randn(c, generator=g) * 0.1)
          for a, c in zip(sizes, sizes[1:])]
    p = {n: torch.randn(d, d, generator=g) * (1 / d ** 0.5) for n in ("wq", "wk", "wv", "wo")}
    p["w1"] = torch.randn(d, hidden, generator=g) * (1 / d ** 0.5)
    p["w2"] = torch.randn(hidden, d, generator=g) * (1 / hidden ** 0.5)
    return [
        (f"MLP {'-'.join(map(str, sizes))}, batch {batch}", mlp,
         (torch.randn(batch, sizes[0], generator=g), ws)),
        (f"transformer-like block b={b} s={seq} d={d}", block,
         (torch.randn(b, seq, d, generator=g), p)),
        ("chain of 200 small ops (1024 floats)", chain, (torch.randn(1024, generator=g),)),
    ]


# ---- measurement --------------------------------------------------------------------------

def live_peak(fn, args):
    memory.reset_peak_memory_stats()
    base = memory.memory_allocated()
    out = fn(*args)
    peak = memory.max_memory_allocated() - base
    del out
    return peak


def per_call_pair(fn, planned, args, seconds):
    """Per-call times of ``fn`` and ``planned`` run alternately, one call each, for about
    ``seconds``: noise on a busy machine falls on both alike. Which one goes first swaps
    every round (the second of a pair measured up to 1% faster, whichever it was). Returns
    (min, median) of each."""
    pc = time.perf_counter
    a, b = [], []
    end = pc() + seconds
    while pc() < end or len(a) < 6:
        for first, second, ta, tb in ((fn, planned, a, b), (planned, fn, b, a)):
            t0 = pc()
            first(*args)
            t1 = pc()
            second(*args)
            t2 = pc()
            ta.append(t1 - t0)
            tb.append(t2 - t1)
    a.sort()
    b.sort()
    return (a[0], a[len(a) // 2]), (b[0], b[len(b) // 2])


def fmt(n):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{n} B"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer, shorter rounds")
    ap.add_argument("--seconds", type=float, default=None, help="timing per workload")
    args = ap.parse_args()
    seconds = args.seconds or (0.5 if args.quick else 5.0)
    print(f"tensorlib planner bench: {torch.get_num_threads()} threads")
    missed = []
    with torch.no_grad():
        for name, fn, fargs in workloads():
            planned = memory.plan(fn)
            ref = fn(*fargs)
            out = planned(*fargs)              # records
            out2 = planned(*fargs)             # replays
            assert out.equal(ref) and out2.equal(ref), name
            peak = live_peak(fn, fargs)
            p = planned.last_plan
            (t_plain, m_plain), (t_plan, m_plan) = per_call_pair(fn, planned, fargs, seconds)
            before = memory.memory_stats()["allocation.all.allocated"]
            planned(*fargs)
            reqs = memory.memory_stats()["allocation.all.allocated"] - before
            print(f"\n{name}: {p.num_requests} requests, {p.num_escaping} escape "
                  f"({reqs} allocator request(s) per replayed call)")
            print(f"  arena {fmt(p.arena_bytes):>11}   lower bound {fmt(p.lower_bound_bytes):>11} "
                  f"({p.arena_bytes / max(p.lower_bound_bytes, 1):.3f}x)   naive "
                  f"{fmt(p.naive_bytes):>11}   unplanned live peak {fmt(peak):>11} "
                  f"(arena {p.arena_bytes / max(peak, 1):.3f}x)")
            print(f"  time per call (best / median): unplanned {t_plain * 1e3:.3f} / "
                  f"{m_plain * 1e3:.3f} ms   planned {t_plan * 1e3:.3f} / {m_plan * 1e3:.3f} ms"
                  f"   planned/unplanned {t_plan / t_plain:.3f} / {m_plan / m_plain:.3f}")
            print(f"  {planned.stats}")
            if p.arena_bytes > 1.05 * peak:
                missed.append(f"{name}: arena {p.arena_bytes / peak:.3f}x the live peak")
            if t_plan > t_plain * 1.02:
                missed.append(f"{name}: planned {t_plan / t_plain:.3f}x unplanned")
    print()
    print("goals met" if not missed else "goals missed:\n  " + "\n  ".join(missed))


if __name__ == "__main__":
    main()
