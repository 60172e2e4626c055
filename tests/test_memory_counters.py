"""The CPU allocator's counters are exact: allocated bytes are the sum over the distinct live
storages the allocator handed out of ceil(nbytes / 512) * 512 (0-byte storages allocate
nothing); views share their base's storage and are not counted twice; memory borrowed from
NumPy is not counted. Runs with the cyclic GC disabled: memory must fall by reference
counting alone."""
import gc

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlib
from tensorlib import memory

ROUND = 512
NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64",
         "float16", "bfloat16", "float32", "float64"]
KEYS = [f"{a}.all.{b}" for a in ("allocated_bytes", "allocation")
        for b in ("current", "peak", "allocated", "freed")]


# exact byte counts: no cyclic collection may free anything mid-test
pytestmark = pytest.mark.usefixtures("gc_off_for_module")


@pytest.fixture(autouse=True)
def gc_stays_off():
    gc.disable()                 # hypothesis or a plugin may have turned it back on
    yield
    assert not gc.isenabled()


def rounded(nbytes):
    return -(-nbytes // ROUND) * ROUND


def owned_bytes(*tensors):
    """Rounded bytes of the distinct allocator-owned storages behind ``tensors``."""
    seen = {}
    for t in tensors:
        s = t.untyped_storage()
        if not s.is_borrowed:
            seen[id(s)] = rounded(s.nbytes())
    return sum(seen.values())


def live_storage_bytes():
    """Rounded bytes of every distinct allocator-owned storage reachable from a live tensor."""
    seen = {}
    for obj in gc.get_objects():
        if isinstance(obj, tensorlib.Tensor):
            s = obj.untyped_storage()
            if not s.is_borrowed:
                seen[id(s)] = rounded(s.nbytes())
    return sum(seen.values())


def stats():
    return memory.memory_stats()


def test_memory_stats_keys_and_types():
    s = stats()
    for k in KEYS:
        assert k in s and isinstance(s[k], int) and s[k] >= 0
    assert memory.memory_allocated() == s["allocated_bytes.all.current"]
    assert memory.max_memory_allocated() == s["allocated_bytes.all.peak"]
    assert s["allocated_bytes.all.peak"] >= s["allocated_bytes.all.current"]
    assert s["allocation.all.peak"] >= s["allocation.all.current"]


def test_memory_stats_keys_match_torch(torch):
    doc = torch.cuda.memory_stats.__doc__
    for k in ("allocated_bytes", "allocation"):
        assert k in doc
    for fn in ("memory_allocated", "max_memory_allocated", "reset_peak_memory_stats", "memory_stats"):
        assert hasattr(torch.cuda, fn) and hasattr(memory, fn)


def test_device_arguments():
    a = memory.memory_allocated()
    assert memory.memory_allocated("cpu") == a
    assert memory.memory_allocated(tensorlib.device("cpu")) == a
    assert memory.memory_allocated(None) == a
    assert memory.memory_stats("cpu") == memory.memory_stats()
    with pytest.raises(RuntimeError):
        memory.memory_allocated("cuda:9")     # (the emulated devices are cuda:0 and cuda:1)
    with pytest.raises(RuntimeError):
        memory.memory_allocated("foo")


def test_counters_match_live_storages():
    """Absolute check: the counter equals the bytes of every live storage found through the
    live tensors, plus those kept only by NumPy arrays over them (``hidden``: arrays are not
    tracked by the GC, so another module may hold some; none of ours does)."""
    hidden = memory.memory_allocated() - live_storage_bytes()
    assert hidden >= 0
    keep = [tensorlib.zeros(100), tensorlib.ones(3, 7, dtype=tensorlib.float64),
            tensorlib.arange(1000), tensorlib.empty(0), tensorlib.tensor([True])]
    keep.append(keep[2][::7])
    assert memory.memory_allocated() == live_storage_bytes() + hidden
    arr = keep[0].numpy()
    del keep[0]
    assert memory.memory_allocated() == live_storage_bytes() + hidden + 512
    del keep, arr
    assert memory.memory_allocated() == live_storage_bytes() + hidden


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", [1, 7, 128, 129, 511, 512, 513, 1000, 4096])
def test_rounding(name, n):
    before = memory.memory_allocated()
    t = tensorlib.empty(n, dtype=getattr(tensorlib, name))
    nbytes = n * t.element_size()
    assert t.untyped_storage().nbytes() == nbytes
    assert memory.memory_allocated() - before == rounded(nbytes)
    del t
    assert memory.memory_allocated() == before


@pytest.mark.parametrize("make", [lambda: tensorlib.empty(0), lambda: tensorlib.zeros(2, 0),
                                  lambda: tensorlib.arange(0), lambda: tensorlib.tensor([]),
                                  lambda: tensorlib.ones(0, 5, dtype=tensorlib.int64),
                                  lambda: tensorlib.empty_strided((0, 3), (3, 1)),
                                  lambda: tensorlib.linspace(0, 1, 0),
                                  lambda: tensorlib.zeros(3, 0).t().clone()])
def test_zero_byte_tensors_allocate_nothing(make):
    s0 = stats()
    t = make()
    s1 = stats()
    assert t.numel() == 0
    for k in KEYS:
        if not k.endswith("peak"):
            assert s1[k] == s0[k], k


def test_views_are_not_double_counted():
    before = memory.memory_allocated()
    x = tensorlib.empty(1000)                          # 4000 bytes -> 4096
    assert memory.memory_allocated() - before == 4096
    views = [x[10:20], x.view(10, 100), x.view(10, 100).t(), x[::3], x.unsqueeze(0),
             x.view(10, 100)[:, :1].expand(10, 50), x.detach(), x.data, x.reshape(100, 10),
             x.as_strided((5,), (2,)), x.narrow(0, 5, 5), x.view(tensorlib.int32),
             x.contiguous(), x.to(tensorlib.float32), x.float(), x.cpu()]
    assert all(v.untyped_storage() is x.untyped_storage() for v in views)
    assert memory.memory_allocated() - before == 4096
    del x
    assert memory.memory_allocated() - before == 4096      # the views keep it alive
    del views
    assert memory.memory_allocated() == before


def test_copies_are_counted():
    before = memory.memory_allocated()
    x = tensorlib.empty(1000)
    c = [x.clone(), x.view(10, 100).t().contiguous(), x.double(), x.to(tensorlib.int8),
         x.reshape(10, 100).t().reshape(1000), x.to(tensorlib.float32, copy=True)]
    want = owned_bytes(x, *c)
    assert want == 4096 * 5 + 8192 + 1024
    assert memory.memory_allocated() - before == want
    del x, c
    assert memory.memory_allocated() == before


def test_from_numpy_is_not_counted():
    s0 = stats()
    a = np.zeros(10000)
    t = tensorlib.from_numpy(a)
    v = t[::2].view(100, 50)
    shared = tensorlib.as_tensor(a)
    assert t.untyped_storage().is_borrowed and shared.untyped_storage().is_borrowed
    s1 = stats()
    for k in KEYS:
        assert s1[k] == s0[k], k
    c = tensorlib.tensor(a)                              # tensor() copies: counted
    assert memory.memory_allocated() - s0["allocated_bytes.all.current"] == rounded(80000)
    del t, v, shared, c
    assert memory.memory_allocated() == s0["allocated_bytes.all.current"]


def test_numpy_view_keeps_storage_alive():
    before = memory.memory_allocated()
    t = tensorlib.zeros(1000)
    a = t.numpy()
    b = np.asarray(t)[::2]
    del t
    assert memory.memory_allocated() - before == 4096        # the arrays own the storage now
    del a
    assert memory.memory_allocated() - before == 4096
    del b
    assert memory.memory_allocated() == before


def test_temporaries_are_freed():
    """tensor(data) builds through an int64/double buffer; only the result stays counted."""
    before = memory.memory_allocated()
    memory.reset_peak_memory_stats()
    t = tensorlib.tensor([i % 100 for i in range(1000)], dtype=tensorlib.int8)
    assert memory.memory_allocated() - before == rounded(1000)
    assert memory.max_memory_allocated() - before >= rounded(8000)   # the buffer existed
    del t
    assert memory.memory_allocated() == before


def test_peak_and_reset():
    base = memory.memory_allocated()
    memory.reset_peak_memory_stats()
    assert memory.max_memory_allocated() == base
    a = tensorlib.empty(10000)                                   # 40000 -> 40448
    b = tensorlib.empty(5000)                                    # 20000 -> 20480
    peak = base + rounded(40000) + rounded(20000)
    assert memory.max_memory_allocated() == peak
    del a
    assert memory.memory_allocated() == base + rounded(20000)
    assert memory.max_memory_allocated() == peak                 # the peak stays
    c = tensorlib.empty(100)
    assert memory.max_memory_allocated() == peak
    memory.reset_peak_memory_stats()
    assert memory.max_memory_allocated() == memory.memory_allocated() == base + rounded(20000) + 512
    s = stats()
    assert s["allocation.all.peak"] == s["allocation.all.current"]
    del b, c
    assert memory.memory_allocated() == base
    assert memory.max_memory_allocated() == base + rounded(20000) + 512


def test_allocation_counts():
    s0 = stats()
    ts = [tensorlib.empty(n) for n in (1, 100, 1000)]
    v = ts[2][1:]                                                # a view: no allocation
    s1 = stats()
    assert s1["allocation.all.current"] - s0["allocation.all.current"] == 3
    assert s1["allocation.all.allocated"] - s0["allocation.all.allocated"] == 3
    assert s1["allocation.all.freed"] == s0["allocation.all.freed"]
    assert s1["allocated_bytes.all.allocated"] - s0["allocated_bytes.all.allocated"] == 512 + 512 + 4096
    assert s1["allocation.all.peak"] >= s0["allocation.all.current"] + 3
    del ts, v
    s2 = stats()
    assert s2["allocation.all.current"] == s0["allocation.all.current"]
    assert s2["allocation.all.freed"] - s0["allocation.all.freed"] == 3
    assert s2["allocated_bytes.all.freed"] - s0["allocated_bytes.all.freed"] == 512 + 512 + 4096
    assert s2["allocated_bytes.all.allocated"] - s2["allocated_bytes.all.freed"] == \
        s0["allocated_bytes.all.allocated"] - s0["allocated_bytes.all.freed"]


def test_reset_accumulated_stats():
    keep = tensorlib.empty(100)
    memory.reset_accumulated_memory_stats()
    s = stats()
    assert s["allocated_bytes.all.allocated"] == s["allocated_bytes.all.freed"] == 0
    assert s["allocation.all.allocated"] == s["allocation.all.freed"] == 0
    assert s["allocated_bytes.all.current"] >= 512              # current is not accumulated
    del keep
    s = stats()
    assert s["allocated_bytes.all.freed"] == 512 and s["allocation.all.freed"] == 1


def test_failed_creation_leaks_nothing():
    before = stats()
    for bad in (lambda: tensorlib.tensor([[1], [2, 3]]), lambda: tensorlib.tensor([300], dtype=tensorlib.uint8),
                lambda: tensorlib.tensor([1, None]), lambda: tensorlib.zeros(2 ** 40, 2 ** 40),
                lambda: tensorlib.full((100,), float("nan"), dtype=tensorlib.int32),
                lambda: tensorlib.arange(0, 5, -1), lambda: tensorlib.zeros(-1)):
        with pytest.raises((ValueError, RuntimeError, TypeError)):
            bad()
    assert memory.memory_allocated() == before["allocated_bytes.all.current"]
    assert stats()["allocation.all.current"] == before["allocation.all.current"]


def test_requires_grad_and_legacy_tensors_are_counted():
    before = memory.memory_allocated()
    a = tensorlib.ones(300, requires_grad=True)
    b = tensorlib.FloatTensor(300)
    c = tensorlib.Tensor([1.0, 2.0])
    d = tensorlib.Tensor(a.detach())                             # aliases: nothing new
    assert memory.memory_allocated() - before == owned_bytes(a, b, c, d) == 1536 * 2 + 512
    del a, b, c, d
    assert memory.memory_allocated() == before


OPS = st.sampled_from(["new", "new", "view", "copy", "drop", "numpy_roundtrip", "from_numpy"])


def _step(held, op, n, name, pick):
    """One step; returns what to append to ``held`` (no reference outlives the call)."""
    d = getattr(tensorlib, name)
    if op == "new" or not held:
        t = tensorlib.empty(n, dtype=d)
        return t, t.untyped_storage()
    if op == "view":
        t, root = held[pick % len(held)]
        return (t[::2] if t.dim() == 1 else t.reshape(-1)), root
    if op == "copy":
        t = held[pick % len(held)][0].to(d, copy=True)
        return t, t.untyped_storage()
    if op == "drop":
        held.pop(pick % len(held))
        return None
    if op == "numpy_roundtrip":
        t, root = held[pick % len(held)]
        if t.dtype is tensorlib.bfloat16:
            return None
        u = tensorlib.from_numpy(t.numpy())             # borrows an array over our storage
        assert u.untyped_storage().is_borrowed
        return u, root
    return tensorlib.from_numpy(np.zeros(n)), None


def _run_program(ops, base):
    held = []                  # (tensor, the allocator-owned storage keeping its memory alive)
    for op, n, name, pick in ops:
        item = _step(held, op, n, name, pick)
        if item is not None:
            held.append(item)
        del item
        live = {id(r): rounded(r.nbytes()) for _, r in held if r is not None}
        assert memory.memory_allocated() - base == sum(live.values())


@settings(max_examples=15)
@given(ops=st.lists(st.tuples(OPS, st.integers(0, 2000), st.sampled_from(NAMES), st.integers(0, 10 ** 6)),
                    min_size=1, max_size=30))
def test_counter_invariant_random_programs(ops):
    """After every step of a random program of allocations, views, copies, NumPy round trips
    and frees, the counter delta equals the bytes of the distinct allocator storages the
    program still holds (directly, or through NumPy arrays over them); when the program's
    references are gone, so is every byte."""
    base = memory.memory_allocated()
    _run_program(ops, base)
    assert memory.memory_allocated() == base


def test_failed_allocation_raises_and_counts_nothing():
    s0 = stats()
    with pytest.raises(tensorlib.OutOfMemoryError, match="can't allocate memory") as e:
        tensorlib.empty(2 ** 62, dtype=tensorlib.int8)     # 4 EiB: beyond any address space
    assert isinstance(e.value, RuntimeError) and isinstance(e.value, MemoryError)
    s1 = stats()
    for k in KEYS:
        assert s1[k] == s0[k], k


def test_failed_allocation_class_like_torch(torch):
    with pytest.raises(RuntimeError):
        torch.empty(2 ** 62, dtype=torch.int8)

