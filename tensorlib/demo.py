"""Memory you can see and plan: ``tensorlib-demo [output folder]`` (the command ``pip install``
makes) or ``python -m tensorlib.demo [output folder]``.

An inference loop of a small model, first profiled (what is alive at the peak, by role and by
source line), then planned (one arena, replayed with no allocator traffic, bit-identical
outputs), then a training-style loop that leaks, and the leak found on its source line. Three
files are written into the output folder (the current directory by default), which must
exist: ``FILES``, the timelines of both loops (SVG) and the inference loop's Chrome/Perfetto
trace.
"""
import os
import sys

import tensorlib as torch
from tensorlib import memory

# what the demo writes into its output folder (the README lists the same three)
FILES = ("tensorlib_memory_timeline.svg", "tensorlib_leak_timeline.svg",
         "tensorlib_memory_trace.json")


def check_out_dir(out_dir):
    """The output folder, absolute; OSError with a clear message unless it is an existing,
    writable folder (checked before the demo prints or computes anything).

    >>> check_out_dir("/no/such/folder")
    Traceback (most recent call last):
    ...
    FileNotFoundError: output folder '/no/such/folder' does not exist
    """
    path = os.path.abspath(out_dir)
    if not os.path.exists(path):
        raise FileNotFoundError(f"output folder {out_dir!r} does not exist")
    if not os.path.isdir(path):
        raise NotADirectoryError(f"output folder {out_dir!r} is not a folder")
    if not os.access(path, os.W_OK | os.X_OK):
        raise PermissionError(f"output folder {out_dir!r} is not writable")
    return path


def _title(text):
    print()
    print(text)
    print("-" * len(text))


def _indent(text, pad="  "):
    return "\n".join(pad + line for line in text.splitlines())


def make_model(sizes, seed=0):
    g = torch.Generator().manual_seed(seed)
    layers = [(torch.randn(a, b, generator=g) * (1 / a ** 0.5), torch.randn(b, generator=g) * 0.1)
              for a, b in zip(sizes, sizes[1:])]
    for w, b in layers:
        w.untyped_storage().role = 1           # parameters (nn will mark its own)
        b.untyped_storage().role = 1

    def model(x):
        for w, b in layers[:-1]:
            x = torch.gelu(x @ w + b)       # the hidden layers
        w, b = layers[-1]
        return (x @ w + b).sigmoid()        # the head

    return model, layers


def inference(model, batches):
    return [model(x) for x in batches]


def run(out_dir=None):
    """Run the demo, printing as it goes, and write ``FILES`` into ``out_dir`` (an existing
    folder; default: the current directory); returns what it measured (for tests).

    >>> result = run("/tmp")                    # doctest: +SKIP
    >>> result["same"]                          # doctest: +SKIP
    True
    """
    out_dir = check_out_dir(out_dir or os.getcwd())
    sizes = [64, 256, 256, 10]
    model, _ = make_model(sizes)
    g = torch.Generator().manual_seed(1)
    batches = [torch.randn(32, sizes[0], generator=g) for _ in range(5)]
    print(f"tensorlib {torch.__version__}: memory you can see and plan")
    print(f"model: MLP {'-'.join(map(str, sizes))}, batch 32, {len(batches)} batches, no_grad")

    _title("1. An inference loop, profiled: with tensorlib.memory.profile() as prof")
    with torch.no_grad(), memory.profile() as prof:
        for x in batches:
            y = model(x)
            prof.step()
        del y
    print(_indent(prof.summary()))

    _title("2. The same loop, planned: planned = tensorlib.memory.plan(model)")
    planned = memory.plan(model)
    with torch.no_grad():
        ref = inference(model, batches)
        before = memory.memory_stats()["allocation.all.allocated"]
        model(batches[0])
        plain_reqs = memory.memory_stats()["allocation.all.allocated"] - before
        planned(batches[0])                    # the first call records
        with memory.profile() as pprof:
            outs = [planned(x) for x in batches]   # later calls replay
        before = memory.memory_stats()["allocation.all.allocated"]
        planned(batches[1])
        plan_reqs = memory.memory_stats()["allocation.all.allocated"] - before
    same = all(o.equal(r) for o, r in zip(outs, ref))
    print(_indent(planned.last_plan.report()))
    served = sum(1 for e in pprof.events if e.kind == "alloc" and e.planned)
    allocs = sum(1 for e in pprof.events if e.kind == "alloc")
    print(f"  allocator requests per call: unplanned {plain_reqs}, planned {plan_reqs} "
          f"(the output, which outlives the call)")
    print(f"  profiled planned loop: {served} of {allocs} allocations served from the arena")
    print(f"  outputs bit-identical to the unplanned loop: {same}")
    print(f"  {planned.stats}")

    _title("3. The allocator's counters after both loops: tensorlib.memory.memory_summary()")
    print(_indent(memory.memory_summary(abbreviated=True)))

    _title("4. A leak, found: a training-style loop that keeps its losses")
    w = torch.randn(256, generator=g).requires_grad_()
    losses = []
    with memory.profile() as lprof:
        for i in range(6):
            x = torch.randn(256, generator=g)
            h = (x * w).tanh()
            loss = h * h
            losses.append(loss)                # keeps each graph and what it saved
            lprof.step()
    for s in lprof.leaks()[:3]:
        grow = f", growing {s.growth_per_step} B/step" if s.growing else ""
        print(f"  {s.site}: {s.bytes:,} bytes in {s.count} tensors, {s.role}{grow}")
    print("  (the fix: losses.append(loss.item()) or loss.detach())")
    del losses, loss, h

    _title("5. Pictures")
    svg = prof.save_timeline(os.path.join(out_dir, FILES[0]),
                             title="inference loop: bytes alive by role")
    lsvg = lprof.save_timeline(os.path.join(out_dir, FILES[1]),
                               title="leaking loop: bytes alive by role")
    trace = prof.export_chrome_trace(os.path.join(out_dir, FILES[2]))
    print(f"  timeline of the inference loop: {svg}")
    print(f"  timeline of the leaking loop:   {lsvg}")
    print(f"  Chrome/Perfetto trace:          {trace} (open in ui.perfetto.dev)")
    return {"profile": prof, "planned": planned, "leaks": lprof, "same": same,
            "requests": (plain_reqs, plan_reqs), "files": (svg, lsvg, trace)}


USAGE = ("usage: tensorlib-demo [output folder]\n"
         "Runs the memory demo and writes " + ", ".join(FILES) + "\n"
         "into the output folder (an existing folder; default: the current directory).")


def main(argv=None):
    """The ``tensorlib-demo`` command: ``tensorlib-demo [output folder]``; returns the exit
    status: 0, or 2 (and a message on stderr, nothing on stdout) for a bad command line or an
    output folder that does not exist or cannot be written.

    >>> main(["/no/such/folder"])
    2
    """
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] in (["-h"], ["--help"]):
        print(USAGE)
        return 0
    if len(args) > 1 or (args and args[0].startswith("-")):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        out_dir = check_out_dir(args[0] if args else os.getcwd())
    except OSError as e:
        print(f"tensorlib-demo: error: {e}", file=sys.stderr)
        return 2
    run(out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
