"""A short tour of what tensorlib does today: ``python -m tensorlib.demo``.

Tensors that print as their values, views that share memory (with each other and with
NumPy), the version counter every write bumps, and memory counters that are exact.
"""
import numpy as np

import tensorlib as torch


def _title(text):
    print()
    print(text)
    print("-" * len(text))


W = 38      # width of the label column


def _show(label, value):
    lines = (value if isinstance(value, str) else repr(value)).splitlines() or [""]
    print(f"  {label:<{W}}{lines[0]}")
    for line in lines[1:]:
        print(" " * (W + 2) + line)


def _line(label, text):
    print(f"  {label:<{W}}{text}")


def tensors():
    _title("1. A tensor is its values (PyTorch's API: `import tensorlib as torch`)")
    x = torch.arange(12.).view(3, 4)
    _show("x = torch.arange(12.).view(3, 4)", x)
    _show("x.shape, x.stride(), x.dtype", (x.shape, x.stride(), x.dtype))
    _show("torch.tensor([[1, 2], [3, 4]])", torch.tensor([[1, 2], [3, 4]]))
    _show("torch.zeros(2, dtype=torch.float16)", torch.zeros(2, dtype=torch.float16))
    return x


def views(x):
    _title("2. Views never copy: they share storage (and memory with NumPy)")
    col = x[:, 1]
    _show("col = x[:, 1]", col)
    _show("col.stride(), col.storage_offset()", (col.stride(), col.storage_offset()))
    col[0] = 100.
    _show("after col[0] = 100., x[0]", x[0])
    xt = x.t()
    _show("x.t().is_contiguous()", xt.is_contiguous())
    try:
        xt.view(12)
    except RuntimeError as e:
        _show("x.t().view(12) raises", f"RuntimeError: {str(e)[:40]}...")
    _show("x.t().reshape(12) copies instead", xt.reshape(12)[:4])
    a = x.numpy()
    a[2, 3] = -1.
    _show("a = x.numpy(); a[2, 3] = -1; x[2]", x[2])
    n = np.zeros(3, dtype=np.float32)
    t = torch.from_numpy(n)
    t[1] = 7.
    _show("t = from_numpy(n); t[1] = 7; n", n)


def versions():
    _title("3. Every write bumps a version counter shared by a tensor and its views")
    x = torch.zeros(4)
    v = x[1:3]
    _show("x._version, v._version", (x._version, v._version))
    v[0] = 1.
    _show("after v[0] = 1.", (x._version, v._version))
    x.fill_(2.)
    _show("after x.fill_(2.)", (x._version, v._version))
    _show("x.detach() shares it: ._version", x.detach()._version)


def memory():
    _title("4. Memory you can see: exact counters (tensorlib.memory)")
    mem = torch.memory
    base = mem.memory_allocated()
    _line("memory_allocated() at the start", f"{base:,} bytes")
    x = torch.empty(1000, 1000)
    grew = mem.memory_allocated() - base
    _line("x = torch.empty(1000, 1000)", f"+{grew:,} bytes (x.nbytes = {x.nbytes:,}, rounded up to 512s)")
    views = [x[i] for i in range(100)] + [x.t(), x.view(-1), x[::2, 10:]]
    _line(f"{len(views)} views of x", f"+{mem.memory_allocated() - base - grew} bytes more")
    y = x.clone()
    _line("y = x.clone()", f"+{mem.memory_allocated() - base - grew:,} bytes more")
    s = mem.memory_stats()
    _line("memory_stats(): live blocks, peak", f"{s['allocation.all.current']} blocks, "
          f"{s['allocated_bytes.all.peak']:,} bytes")
    del x, y
    _line("del x, y (the views still hold x)", f"+{mem.memory_allocated() - base:,} bytes over the start")
    del views
    _line("del views", f"+{mem.memory_allocated() - base} bytes: back where we started")
    n = np.ones(1000)
    t = torch.from_numpy(n)
    _line("t = torch.from_numpy(np.ones(1000))", f"+{mem.memory_allocated() - base} bytes "
          f"(borrowed from NumPy: not ours to count)")
    del t


def main():
    print(f"tensorlib {torch.__version__}: PyTorch's programming model on a Cython core")
    x = tensors()
    views(x)
    versions()
    memory()
    print()
    print("More: README.md (quickstart, differences from PyTorch) and bench/bench_core.py.")


if __name__ == "__main__":
    main()
