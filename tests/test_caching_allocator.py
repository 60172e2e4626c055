"""The caching allocator behind the one door: reuse, best fit, splitting and
coalescing seen through addresses and the segment map; exact counters cross-checked against
the live storages and the allocator's own snapshot; empty_cache() giving memory back to the
system; the memory limit and OutOfMemoryError with nothing lost; threads; the memory hooks of
the profiler and the planner (MEMHOOKS.md).

Structural tests use private streams (each stream has its own pools), so blocks left cached by
other tests cannot change which block a request gets. Runs with the cyclic GC off: memory
falls by reference counting alone."""
import gc
import os
import re
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tensorlib
from tensorlib import memory
from tensorlib._core import allocator as alloc_mod

A = alloc_mod.get_allocator()
KiB, MiB = 1024, 1024 * 1024
CACHING = A.caching
needs_caching = pytest.mark.skipif(not CACHING, reason="TENSORLIB_CACHING=0: no cache")
_next_stream = [100]


# exact byte counts: no cyclic collection may free anything mid-test
pytestmark = pytest.mark.usefixtures("gc_off_for_module")


@pytest.fixture(autouse=True)
def no_limit():
    """Every test starts and ends without a memory limit, and with no hook left behind."""
    memory.set_per_process_memory_limit(None)
    yield
    memory.set_per_process_memory_limit(None)
    assert alloc_mod._memory_hooks() == []


@pytest.fixture
def stream():
    """A stream nobody else uses: its pools start empty."""
    _next_stream[0] += 1
    s = _next_stream[0]
    yield s
    A.empty_cache()


def stats():
    return memory.memory_stats()


def rounded(n):
    return max(512, -(-n // 512) * 512)


def segments(stream=None):
    return [s for s in memory.memory_snapshot() if stream is None or s["stream"] == stream]


def blocks(stream):
    """[(address, size, allocated)] of a stream's blocks, in segment then address order."""
    return [(b["address"], b["size"], b["state"] == "active_allocated")
            for s in segments(stream) for b in s["blocks"]]


def malloc(n, stream):
    return A._raw_malloc(n, stream)


def free(p, n):
    A._raw_free(p, n)


# ---------------------------------------------------------------- API surface

REQUIRED = ["allocated_bytes.all.current", "allocated_bytes.all.peak", "allocated_bytes.all.allocated",
            "allocated_bytes.all.freed", "requested_bytes.all.current", "reserved_bytes.all.current",
            "reserved_bytes.all.peak", "active_bytes.all.current", "allocation.all.current",
            "allocation.all.peak", "allocation.all.allocated", "allocation.all.freed",
            "segment.all.current", "num_alloc_retries", "num_ooms"]


def test_memory_stats_has_pytorchs_keys():
    s = stats()
    for k in REQUIRED:
        assert isinstance(s[k], int), k
    for stem in ("allocation", "allocated_bytes", "requested_bytes", "active", "active_bytes",
                 "reserved_bytes", "segment", "inactive_split", "inactive_split_bytes"):
        for pool in ("all", "small_pool", "large_pool"):
            for f in ("current", "peak", "allocated", "freed"):
                k = f"{stem}.{pool}.{f}"
                assert k in s, k
                if f == "current" and pool == "all":
                    parts = s[f"{stem}.small_pool.current"] + s[f"{stem}.large_pool.current"]
                    assert s[k] == parts, k
    assert list(s) == sorted(s)


def test_memory_stats_names_match_torch(torch):
    doc = torch.cuda.memory_stats.__doc__
    for stem in ("allocated_bytes", "requested_bytes", "reserved_bytes", "active_bytes", "segment",
                 "inactive_split_bytes", "num_alloc_retries", "num_ooms", "num_device_alloc",
                 "num_device_free", "large_pool", "small_pool"):
        assert stem in doc, stem
    for fn in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
               "reset_peak_memory_stats", "reset_accumulated_memory_stats", "empty_cache",
               "memory_stats", "memory_summary", "memory_snapshot", "reset_max_memory_allocated"):
        assert hasattr(torch.cuda, fn) and hasattr(memory, fn), fn


def test_functions_agree_with_memory_stats():
    keep = tensorlib.empty(12345)
    s = stats()
    assert memory.memory_allocated() == s["allocated_bytes.all.current"]
    assert memory.max_memory_allocated() == s["allocated_bytes.all.peak"]
    assert memory.memory_reserved() == s["reserved_bytes.all.current"]
    assert memory.max_memory_reserved() == s["reserved_bytes.all.peak"]
    assert memory.memory_stats("cpu") == memory.memory_stats(tensorlib.device("cpu")) == s
    for fn in (memory.memory_reserved, memory.max_memory_reserved, memory.empty_cache):
        with pytest.raises(RuntimeError):
            fn("cuda:9")                # (the emulated devices are cuda:0 and cuda:1)
    del keep


def test_out_of_memory_error_class():
    assert tensorlib.OutOfMemoryError is alloc_mod.OutOfMemoryError
    assert issubclass(tensorlib.OutOfMemoryError, RuntimeError)


def test_memory_summary_is_a_readable_table():
    keep = tensorlib.empty(1000)
    text = memory.memory_summary()
    lines = text.splitlines()
    assert len({len(l) for l in lines}) == 1            # a box: every line the same width
    for label in ("Allocated memory", "Active memory", "Requested memory", "Reserved memory",
                  "Non-releasable memory", "Allocations", "Active allocs", "Segments",
                  "from large pool", "from small pool", "Cur Usage", "Peak Usage", "Tot Alloc",
                  "Tot Freed", "limit: none", "OOMs"):
        assert label in text, label
    row = next(l for l in lines if l.startswith("| Allocations "))
    assert row.split("|")[2].strip() == str(stats()["allocation.all.current"])
    short = memory.memory_summary(abbreviated=True)
    assert "from large pool" not in short and "Reserved memory" in short
    memory.set_per_process_memory_limit(3 * 2 ** 30)
    assert "limit: 3.00 GiB" in memory.memory_summary()
    del keep


def test_reset_peak_and_accumulated():
    x = tensorlib.empty(300_000)
    del x
    memory.reset_peak_memory_stats()
    s = stats()
    for k, v in s.items():
        if k.endswith(".peak"):
            assert v == s[k[:-5] + ".current"], k
    memory.reset_accumulated_memory_stats()
    s = stats()
    for k, v in s.items():
        if k.endswith((".allocated", ".freed")) or k.startswith("num_"):
            assert v == 0, k
    y = tensorlib.empty(10)
    del y
    s = stats()
    assert s["allocation.all.allocated"] == s["allocation.all.freed"] == 1
    assert s["allocated_bytes.all.allocated"] == s["allocated_bytes.all.freed"] == 512
    memory.reset_max_memory_allocated()
    assert memory.max_memory_allocated() == memory.memory_allocated()


# ---------------------------------------------------------------- reuse, best fit, split, merge

@needs_caching
def test_free_then_same_size_gets_the_same_address_tensor():
    memory.empty_cache()
    x = tensorlib.empty(3 * MiB // 4 + 1000)            # a large request: its own segment
    p, seg = x.data_ptr(), stats()["segment.all.current"]
    del x
    y = tensorlib.empty(3 * MiB // 4 + 1000)
    assert y.data_ptr() == p
    assert stats()["segment.all.current"] == seg             # served from the cache
    del y


@needs_caching
def test_free_then_same_size_gets_the_same_address(stream):
    for n in (1, 1000, 100_000, 1 * MiB, 5 * MiB + 3):
        p = malloc(n, stream)
        free(p, n)
        q = malloc(n, stream)
        assert q == p, n
        free(q, n)


@needs_caching
def test_splitting_carves_one_segment(stream):
    a, b, c = malloc(100, stream), malloc(512, stream), malloc(1000, stream)
    assert (b - a, c - b) == (512, 512)
    assert a % (4 * KiB) == 0 and a % 64 == 0        # a segment starts on a page
    assert blocks(stream) == [(a, 512, True), (b, 512, True), (c, 1024, True),
                              (c + 1024, 2 * MiB - 2048, False)]
    (seg,) = segments(stream)
    assert (seg["address"], seg["total_size"], seg["segment_type"]) == (a, 2 * MiB, "small")
    assert seg["allocated_size"] == 2048 and seg["requested_size"] == 1612
    for p, n in ((a, 100), (b, 512), (c, 1000)):
        free(p, n)


@needs_caching
def test_coalescing_merges_free_neighbours(stream):
    a, b, c, d = (malloc(1024, stream) for _ in range(4))
    s0 = stats()
    free(b, 1024)                                   # a hole between two live blocks
    assert blocks(stream)[:4] == [(a, 1024, True), (b, 1024, False), (c, 1024, True), (d, 1024, True)]
    assert stats()["inactive_split.all.current"] == s0["inactive_split.all.current"] + 1
    free(a, 1024)                                   # merges with the hole after it
    assert blocks(stream)[:3] == [(a, 2048, False), (c, 1024, True), (d, 1024, True)]
    free(d, 1024)                                   # merges with the free rest of the segment
    assert blocks(stream) == [(a, 2048, False), (c, 1024, True), (d, 2 * MiB - 3072, False)]
    free(c, 1024)                                   # both sides: one free block again
    assert blocks(stream) == [(a, 2 * MiB, False)]
    assert stats()["inactive_split.all.current"] == s0["inactive_split.all.current"] - 1
    assert memory.empty_cache() is None and segments(stream) == []


@needs_caching
def test_best_fit_takes_the_smallest_hole(stream):
    keep = [malloc(512, stream)]
    big = malloc(4096, stream)
    keep.append(malloc(512, stream))
    small = malloc(1024, stream)
    keep.append(malloc(512, stream))
    free(big, 4096)
    free(small, 1024)                               # holes: 4096 (lower address), 1024
    assert malloc(1000, stream) == small            # the 1024 hole fits best
    assert malloc(3000, stream) == big              # then the 4096 one, split
    assert malloc(1024, stream) == big + 3072       # its remainder
    for p in keep:
        free(p, 512)
    free(small, 1000)
    free(big, 3000)
    free(big + 3072, 1024)
    assert blocks(stream) == [(keep[0], 2 * MiB, False)]


@needs_caching
def test_recently_freed_blocks_of_the_same_size_come_back_first(stream):
    """Quick lists: a freed small block is parked unmerged and an exact-size request takes it
    back (most recent first); any other request, a snapshot or the statistics merge the parked
    blocks first, so best fit and coalescing hold for everything else."""
    ps = [malloc(1000, stream) for _ in range(12)]
    free(ps[3], 1000)
    free(ps[7], 1000)
    assert malloc(1000, stream) == ps[7] and malloc(1024, stream) == ps[3]
    for p in ps:
        free(p, 1000)                              # more than the 8 a size class keeps
    s = stats()                                    # merges everything parked
    assert blocks(stream) == [(ps[0], 2 * MiB, False)]
    assert s["inactive_split.all.current"] == sum(
        1 for seg in memory.memory_snapshot() if len(seg["blocks"]) > 1 for b in seg["blocks"]
        if b["state"] == "inactive")
    free(malloc(2048, stream), 2048)               # park a block, then...
    memory.empty_cache()                           # ...it does not keep its segment alive
    assert segments(stream) == []


@needs_caching
def test_alternating_sizes_do_not_grow_reserved(stream):
    p = malloc(100, stream)
    reserved = stats()["reserved_bytes.all.current"]
    for i in range(200):
        n = (1000, 3000, 70_000, 600)[i % 4]
        q = malloc(n, stream)
        free(q, n)
    assert stats()["reserved_bytes.all.current"] == reserved
    free(p, 100)


@needs_caching
def test_small_and_large_pools(stream):
    s0 = stats()
    p = malloc(MiB, stream)                          # 1 MiB: still small
    q = malloc(MiB + 1, stream)                      # large: a 2 MiB segment, not split
    segs = {s["segment_type"]: s for s in segments(stream)}
    assert segs["small"]["total_size"] == 2 * MiB and segs["large"]["total_size"] == 2 * MiB
    assert segs["large"]["blocks"] == [{"address": q, "size": 2 * MiB, "requested_size": MiB + 1,
                                        "state": "active_allocated", "kind": "tensor"}]
    s1 = stats()
    assert s1["allocated_bytes.large_pool.current"] - s0["allocated_bytes.large_pool.current"] == MiB + 512
    assert s1["active_bytes.large_pool.current"] - s0["active_bytes.large_pool.current"] == 2 * MiB
    assert s1["allocated_bytes.small_pool.current"] - s0["allocated_bytes.small_pool.current"] == MiB
    free(q, MiB + 1)
    r = malloc(5 * MiB, stream)                      # 6 MiB segment: 1 MiB left, split
    six = next(s for s in segments(stream) if s["total_size"] == 6 * MiB)
    assert [(b["size"], b["state"]) for b in six["blocks"]] == [(5 * MiB, "active_allocated"),
                                                                (MiB, "inactive")]
    free(p, MiB)
    free(r, 5 * MiB)


@needs_caching
def test_large_blocks_are_reused_and_split_down(stream):
    p = malloc(8 * MiB, stream)
    free(p, 8 * MiB)
    q = malloc(3 * MiB, stream)                      # from the cached 8 MiB block, split
    assert q == p
    r = malloc(2 * MiB, stream)
    assert r == p + 3 * MiB
    assert len(segments(stream)) == 1
    free(q, 3 * MiB)
    free(r, 2 * MiB)
    assert blocks(stream) == [(p, 8 * MiB, False)]


def test_zero_byte_raw_request_gets_a_block(stream):
    p = malloc(0, stream)
    assert p % 64 == 0
    free(p, 0)


def test_unknown_pointer_is_refused(stream):
    if not CACHING:
        pytest.skip("no records without caching")
    p = malloc(100, stream)
    with pytest.raises(ValueError, match="not a live block"):
        free(p + 512, 100)
    free(p, 100)
    with pytest.raises(ValueError, match="not a live block"):
        free(p, 100)                                 # a double free is caught, not executed


# ---------------------------------------------------------------- counters, cross-checked

def _check_against_snapshot():
    """The counters equal what the segment map shows: an independent reference."""
    s, snap = stats(), memory.memory_snapshot()
    blocks_ = [b for seg in snap for b in seg["blocks"]]
    live = [b for b in blocks_ if b["state"] == "active_allocated"]
    tensors = [b for b in live if b["kind"] == "tensor"]
    if CACHING:
        assert s["reserved_bytes.all.current"] == sum(seg["total_size"] for seg in snap)
        assert s["segment.all.current"] == len(snap)
        assert s["active_bytes.all.current"] == sum(b["size"] for b in live)
        assert s["active.all.current"] == len(live)
        assert s["allocation.all.current"] == len(tensors)
        assert s["requested_bytes.all.current"] == sum(b["requested_size"] for b in tensors)
        assert s["allocated_bytes.all.current"] == sum(rounded(b["requested_size"]) for b in tensors)
        split = [b for seg in snap if len(seg["blocks"]) > 1 for b in seg["blocks"]
                 if b["state"] == "inactive"]
        assert s["inactive_split.all.current"] == len(split)
        assert s["inactive_split_bytes.all.current"] == sum(b["size"] for b in split)
    assert s["reserved_bytes.all.current"] >= s["active_bytes.all.current"] \
        >= s["allocated_bytes.all.current"] >= s["requested_bytes.all.current"]
    for k, v in s.items():
        if k.endswith(".current"):
            assert 0 <= v <= s[k[:-8] + ".peak"], k


SIZES = st.sampled_from([0, 1, 100, 511, 512, 513, 4000, 65536, 300_000, 1 << 20, (1 << 20) + 1,
                         3_000_000, 9_000_000])


@settings(max_examples=20, deadline=None)
@given(ops=st.lists(st.tuples(st.booleans(), SIZES, st.integers(0, 10 ** 6)), min_size=1, max_size=25),
       empty=st.integers(0, 30))
def test_counters_equal_distinct_live_storages_and_the_segment_map(ops, empty):
    base = memory.memory_allocated()
    base_req = stats()["requested_bytes.all.current"]
    held = []
    for i, (new, n, pick) in enumerate(ops):
        if new or not held:
            x = tensorlib.empty(n, dtype=tensorlib.uint8)
            held.append(x if pick % 3 else x[n // 2:])             # views count once
            del x
        else:
            held.pop(pick % len(held))
        if i == empty:
            memory.empty_cache()
        live = {id(t.untyped_storage()): t.untyped_storage().nbytes() for t in held}
        assert memory.memory_allocated() - base == sum(rounded(n) for n in live.values() if n)
        assert stats()["requested_bytes.all.current"] - base_req == sum(live.values())
        _check_against_snapshot()
    del held
    assert memory.memory_allocated() == base


def test_views_numpy_and_borrowed_memory_are_not_counted_twice():
    base = stats()
    x = tensorlib.empty(10_000)
    views = [x[::2], x.view(100, 100).t(), x.numpy(), np.asarray(x)[5:]]
    b = tensorlib.from_numpy(np.zeros(50_000))
    s = stats()
    assert s["allocated_bytes.all.current"] - base["allocated_bytes.all.current"] == 40_448
    assert s["allocation.all.current"] - base["allocation.all.current"] == 1
    assert s["requested_bytes.all.current"] - base["requested_bytes.all.current"] == 40_000
    del x, views, b
    assert stats()["allocated_bytes.all.current"] == base["allocated_bytes.all.current"]


# ---------------------------------------------------------------- empty_cache

def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@needs_caching
def test_empty_cache_lowers_reserved_and_segments():
    memory.empty_cache()
    s0 = stats()
    keep = tensorlib.empty(1000)
    ts = [tensorlib.empty(n) for n in (100, 10_000, 400_000, 2_000_000, 5_000_000)]
    del ts
    s1 = stats()
    assert s1["allocated_bytes.all.current"] - s0["allocated_bytes.all.current"] == 4096
    assert s1["reserved_bytes.all.current"] - s0["reserved_bytes.all.current"] >= 20 * MiB
    assert s1["segment.all.current"] - s0["segment.all.current"] >= 2
    memory.empty_cache()
    s2 = stats()
    assert s2["reserved_bytes.all.current"] <= s0["reserved_bytes.all.current"] + 2 * MiB
    assert s2["segment.all.current"] <= s0["segment.all.current"] + 1
    assert s2["allocated_bytes.all.current"] == s1["allocated_bytes.all.current"]
    assert s2["num_device_free"] > s1["num_device_free"]
    for seg in memory.memory_snapshot():                 # what stays holds a live block
        assert any(b["state"] == "active_allocated" for b in seg["blocks"])
    _check_against_snapshot()
    keep.fill_(3.0)
    assert keep.numpy().sum() == 3000.0
    del keep


@needs_caching
def test_empty_cache_returns_memory_to_the_system():
    memory.empty_cache()
    x = tensorlib.ones(16 * MiB)                         # 64 MiB, touched
    r1 = _rss()
    del x
    assert _rss() > r1 - 8 * MiB                         # cached: still resident
    memory.empty_cache()
    assert _rss() < r1 - 56 * MiB                        # munmap'd


# ---------------------------------------------------------------- the memory limit

def test_limit_arguments():
    assert memory.get_per_process_memory_limit() is None
    memory.set_per_process_memory_limit(123 * MiB)
    assert memory.get_per_process_memory_limit() == 123 * MiB
    memory.set_per_process_memory_limit(None)
    assert memory.get_per_process_memory_limit() is None
    with pytest.raises(ValueError):
        memory.set_per_process_memory_limit(-1)
    with pytest.raises(TypeError):
        memory.set_per_process_memory_limit(1.5)
    with pytest.raises(TypeError):
        memory.set_per_process_memory_limit(True)
    with pytest.raises(RuntimeError):
        memory.set_per_process_memory_limit(10, "cuda:9")


def _oom_numbers(msg):
    m = re.search(r"tried to allocate (\d+) bytes .*?(\d+) bytes \([^)]*\) allocated, (\d+) bytes "
                  r"\([^)]*\) reserved, limit: (\d+) bytes", msg)
    assert m, msg
    return tuple(int(g) for g in m.groups())


def test_oom_under_a_cap_loses_nothing_and_recovers():
    memory.empty_cache()
    s0 = stats()
    limit = s0["reserved_bytes.all.current"] + 24 * MiB
    memory.set_per_process_memory_limit(limit)
    x = tensorlib.empty(10 * MiB, dtype=tensorlib.uint8)
    del x                                                 # 10 MiB stays cached
    n = 2 * MiB
    y = tensorlib.arange(n, dtype=tensorlib.int64)       # 16 MiB: needs the cache released
    s1 = stats()
    if CACHING:
        assert s1["num_alloc_retries"] == s0["num_alloc_retries"] + 1
    assert s1["reserved_bytes.all.current"] <= limit
    with pytest.raises(tensorlib.OutOfMemoryError) as e:
        tensorlib.empty(16 * MiB, dtype=tensorlib.uint8)
    assert isinstance(e.value, RuntimeError)
    req, alloc, res, lim = _oom_numbers(str(e.value))
    assert (req, alloc, res, lim) == (16 * MiB, s1["allocated_bytes.all.current"],
                                      s1["reserved_bytes.all.current"], limit)
    assert "can't allocate memory" in str(e.value) and "set_per_process_memory_limit" in str(e.value)
    s2 = stats()
    assert s2["num_ooms"] == s1["num_ooms"] + 1
    for k in ("allocated_bytes.all.current", "allocation.all.current", "reserved_bytes.all.current",
              "requested_bytes.all.current", "segment.all.current"):
        assert s2[k] == s1[k], k
    assert y[-1].item() == n - 1 and int(y.numpy().sum()) == n * (n - 1) // 2
    del y                                                 # the user frees memory...
    z = tensorlib.ones(16 * MiB, dtype=tensorlib.uint8)  # ...and the program carries on
    assert int(z.numpy().sum(dtype=np.int64)) == 16 * MiB
    del z
    assert stats()["allocated_bytes.all.current"] == s0["allocated_bytes.all.current"]


def test_ops_failing_for_memory_leave_their_inputs_intact():
    memory.empty_cache()
    a = tensorlib.arange(MiB // 2, dtype=tensorlib.float64)      # 4 MiB
    memory.set_per_process_memory_limit(memory.memory_reserved() + MiB)
    s0 = stats()
    for op in (lambda: a + 1, lambda: a.clone(), lambda: a.to(tensorlib.float32),
               lambda: tensorlib.zeros(MiB)):
        with pytest.raises(tensorlib.OutOfMemoryError, match="limit"):
            op()
    s1 = stats()
    assert s1["allocated_bytes.all.current"] == s0["allocated_bytes.all.current"]
    assert s1["num_ooms"] == s0["num_ooms"] + 4
    assert a[12345].item() == 12345.0 and a.numpy().sum() == (MiB // 2) * (MiB // 2 - 1) / 2
    small = a[:10] * 2                                   # small requests still fit
    assert small.tolist() == [2.0 * i for i in range(10)]
    memory.set_per_process_memory_limit(None)
    assert (a + 1)[-1].item() == MiB // 2
    del a, small


@needs_caching
def test_lowering_the_limit_releases_the_cache():
    x = tensorlib.empty(3 * MiB)
    del x
    assert memory.memory_reserved() > memory.memory_allocated()
    memory.set_per_process_memory_limit(memory.memory_allocated())
    free_segments = [s for s in memory.memory_snapshot()
                     if all(b["state"] == "inactive" for b in s["blocks"])]
    assert free_segments == []


def test_limit_below_a_small_segment_still_serves_small_requests():
    memory.empty_cache()
    memory.set_per_process_memory_limit(memory.memory_reserved() + 64 * KiB)
    ts = [tensorlib.empty(1000) for _ in range(3)]          # pages, not a 2 MiB segment
    assert memory.memory_reserved() <= memory.get_per_process_memory_limit()
    del ts


def test_impossible_request_is_an_oom_not_a_crash():
    s0 = stats()
    with pytest.raises(tensorlib.OutOfMemoryError, match=r"can't allocate memory.*limit: none"):
        tensorlib.empty(2 ** 62 + 1, dtype=tensorlib.uint8)
    with pytest.raises(tensorlib.OutOfMemoryError, match="can't allocate memory"):
        tensorlib.empty(2 ** 61, dtype=tensorlib.uint8)
    s1 = stats()
    assert s1["num_ooms"] == s0["num_ooms"] + 2
    assert s1["allocated_bytes.all.current"] == s0["allocated_bytes.all.current"]


# ---------------------------------------------------------------- threads

def test_threads_hammering_the_c_allocator_without_the_gil():
    """Four threads run random mallocs/frees in C concurrently (the GIL released), two per
    stream; each block is filled and checked before it is freed, so two live blocks sharing
    bytes would show."""
    base = stats()
    results = []
    threads = [threading.Thread(target=lambda i=i: results.append(
        A._stress(3000, 3 * MiB, seed=i + 1, stream=7000 + i % 2))) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [0, 0, 0, 0]
    s = stats()
    for k in ("allocated_bytes.all.current", "allocation.all.current", "active_bytes.all.current",
              "requested_bytes.all.current"):
        assert s[k] == base[k], k
    assert s["allocation.all.allocated"] - base["allocation.all.allocated"] > 4 * 1000
    _check_against_snapshot()
    A.empty_cache()


def test_python_threads_allocating_and_freeing_tensors():
    base = memory.memory_allocated()
    errors = []
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)

    def work(seed):
        rng = np.random.default_rng(seed)
        held = []
        try:
            for _ in range(300):
                if held and rng.random() < 0.5:
                    t, v = held.pop(int(rng.integers(len(held))))
                    if t.numel() and t[0].item() != v:
                        errors.append("overwritten")
                else:
                    v = float(rng.integers(1000))
                    held.append((tensorlib.full((int(rng.integers(0, 300_000)),), v), v))
        except Exception as e:                         # pragma: no cover
            errors.append(repr(e))
    try:
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert errors == []
    assert memory.memory_allocated() == base


def _run(script, env=None):
    full_env = dict(os.environ, **(env or {}))
    # Run the child beside the tensorlib this process imported (site-packages when installed,
    # the checkout when built in place): `python -c` puts its cwd first on sys.path, so running
    # it in the checkout would shadow an installed build with the unbuilt sources.
    here = os.path.dirname(os.path.dirname(os.path.abspath(tensorlib.__file__)))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=here, env=full_env,
                          capture_output=True, text=True, timeout=120)


def test_fork_while_another_thread_allocates():
    """The allocator's mutex is taken around fork(): a child forked while another thread is
    inside the allocator can still allocate."""
    r = _run("""
        import os, threading, warnings
        warnings.simplefilter("ignore")
        import tensorlib
        from tensorlib._core.allocator import get_allocator
        a = get_allocator()
        stop = []
        def spin():
            while not stop:
                a._stress(200, 1 << 16, seed=3)
        t = threading.Thread(target=spin); t.start()
        for _ in range(10):
            pid = os.fork()
            if pid == 0:
                try:
                    x = tensorlib.ones(1000); os._exit(0 if x.numpy().sum() == 1000 else 1)
                finally:
                    os._exit(2)
            _, status = os.waitpid(pid, 0)
            assert status == 0, status
        stop.append(1); t.join(); print("ok")
    """)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_caching_off_mode():
    r = _run("""
        import tensorlib
        from tensorlib import memory
        from tensorlib._core.allocator import get_allocator
        assert not get_allocator().caching
        s0 = memory.memory_stats()
        x = tensorlib.empty(1000); y = tensorlib.empty(10 ** 6)
        s = memory.memory_stats()
        assert s["allocated_bytes.all.current"] - s0["allocated_bytes.all.current"] == 4096 + 4000256
        assert s["reserved_bytes.all.current"] == s["allocated_bytes.all.current"]
        assert x.data_ptr() % 64 == 0 and y.data_ptr() % 64 == 0
        del x, y
        assert memory.memory_stats()["reserved_bytes.all.current"] == s0["reserved_bytes.all.current"]
        memory.set_per_process_memory_limit(memory.memory_reserved() + 10000)
        try:
            tensorlib.empty(20000, dtype=tensorlib.uint8)
        except tensorlib.OutOfMemoryError as e:
            assert "limit" in str(e)
        else:
            raise AssertionError("no OOM")
        print("caching off" in memory.memory_summary())
    """, {"TENSORLIB_CACHING": "0"})
    assert r.returncode == 0 and r.stdout.strip() == "True", r.stderr


# ---------------------------------------------------------------- memory hooks

class Recorder:
    """A hook recording every call; serves requests from an arena when given one."""

    def __init__(self, name="h", log=None, arena=None):
        self.name, self.log, self.arena = name, log if log is not None else [], arena
        self.next = 0

    def serve(self, nbytes, device):
        self.log.append((self.name, "serve", nbytes, str(device)))
        if self.arena is None:
            return 0
        addr, size = self.arena
        r = rounded(nbytes)
        if self.next + r > size:
            return 0
        self.next += r
        return addr + self.next - r

    def after_alloc(self, storage):
        self.log.append((self.name, "after_alloc", storage.nbytes(), storage.alloc_id))

    def on_free(self, storage):
        self.log.append((self.name, "on_free", storage.nbytes(), storage.alloc_id))

    def on_role(self, storage, old, new):
        self.log.append((self.name, "on_role", storage.alloc_id, old, new))


class Pushed:
    def __init__(self, *hooks):
        self.hooks = hooks

    def __enter__(self):
        for h in self.hooks:
            alloc_mod._push_memory_hook(h)
        return self.hooks[-1]

    def __exit__(self, *exc):
        for h in reversed(self.hooks):
            alloc_mod._pop_memory_hook(h)


class CRecorder(alloc_mod.MemoryHook, Recorder):
    """The same hook on the C-level base class (the door calls it through the vtable)."""


@pytest.mark.parametrize("cls", [Recorder, CRecorder])
def test_hook_call_order_and_unserved_requests_are_ordinary(cls):
    h = cls()
    s0 = stats()
    with Pushed(h):
        assert alloc_mod._memory_hooks() == [h]
        x = tensorlib.empty(100)
        st_ = x.untyped_storage()
        i = st_.alloc_id
        st_.role = "parameter"
        st_.role = alloc_mod.ROLE_NAMES.index("parameter")        # no change: no call
        assert st_.role == 1 and st_.role_name == "parameter"
        s1 = stats()
        del x, st_
    assert h.log == [("h", "serve", 400, "cpu"), ("h", "after_alloc", 400, i),
                     ("h", "on_role", i, 0, 1), ("h", "on_free", 400, i)]
    assert s1["allocation.all.current"] == s0["allocation.all.current"] + 1    # an allocator request
    assert stats()["allocated_bytes.all.current"] == s0["allocated_bytes.all.current"]


@pytest.mark.parametrize("cls", [Recorder, CRecorder])
def test_served_requests_count_as_allocated_bytes_not_allocations(cls):
    size = 64 * KiB
    block = alloc_mod._new_arena_block(size)
    addr = block.address
    s0 = stats()
    h = cls(arena=(addr, size))
    with Pushed(h):
        x = tensorlib.empty(1000)                                  # 4000 -> 4096 in the arena
        x.copy_(tensorlib.from_numpy(np.arange(1000, dtype=np.float32)))
        y = x * 2
    s = x.untyped_storage()
    assert x.data_ptr() == addr and y.data_ptr() == addr + 4096
    assert s.planned_by is h and not s.is_borrowed
    assert y.tolist()[:3] == [0.0, 2.0, 4.0] and y[-1].item() == 1998.0
    s1 = stats()
    assert s1["allocated_bytes.all.current"] - s0["allocated_bytes.all.current"] == 8192
    assert s1["requested_bytes.all.current"] - s0["requested_bytes.all.current"] == 8000
    for k in ("allocation.all.current", "allocation.all.allocated", "active_bytes.all.current",
              "reserved_bytes.all.current"):
        assert s1[k] == s0[k], k
    assert s0["arena_bytes.all.current"] >= size
    assert s1["reserved_bytes.all.current"] >= s1["allocated_bytes.all.current"]
    n = len(h.log)
    del s, x                                      # freed after the hook was popped:
    assert h.log[n:] == [("h", "on_free", 4000, h.log[1][3])]   # planned_by still hears of it
    holder = [y]                                                 # freed on another thread, too
    del y
    t = threading.Thread(target=holder.clear)
    t.start()
    t.join()
    assert h.log[-1][:3] == ("h", "on_free", 4000)
    assert stats()["allocated_bytes.all.current"] == s0["allocated_bytes.all.current"]
    del block
    assert stats()["arena_bytes.all.current"] == s0["arena_bytes.all.current"] - size


def test_nested_hooks_serve_innermost_first():
    size = 8 * KiB
    block = alloc_mod._new_arena_block(size)
    addr = block.address
    log = []
    outer, inner = Recorder("outer", log), Recorder("inner", log, arena=(addr, size))
    with Pushed(outer, inner):
        assert alloc_mod._memory_hooks() == [outer, inner]
        a = tensorlib.empty(1024, dtype=tensorlib.uint8)             # inner serves it
        b = tensorlib.empty(16 * KiB, dtype=tensorlib.uint8)         # inner declines: allocator
    assert a.untyped_storage().planned_by is inner and b.untyped_storage().planned_by is None
    assert [e[:2] for e in log] == [("inner", "serve"), ("outer", "after_alloc"),
                                    ("inner", "after_alloc"),
                                    ("inner", "serve"), ("outer", "serve"),
                                    ("outer", "after_alloc"), ("inner", "after_alloc")]
    del log[:]
    with Pushed(outer):
        del a, b
    assert [e[:2] for e in log] == [("outer", "on_free"), ("inner", "on_free"), ("outer", "on_free")]


def test_arena_blocks_in_garbage_cycles_are_freed_safely():
    """The cyclic GC may clear an object it finds only through a cycle before deallocating
    it: an arena block must still give its memory back (a GC clear must not drop its
    ``allocator`` first)."""
    base = stats()["arena_bytes.all.current"]
    for _ in range(20):
        frame = {"block": alloc_mod._new_arena_block(8192)}
        frame["self"] = frame
        del frame
    gc.collect()
    assert stats()["arena_bytes.all.current"] == base


def test_zero_byte_storages_are_announced_but_not_served():
    h = Recorder(arena=(0, 0))
    with Pushed(h):
        x = tensorlib.empty(0)
        del x
    assert [e[1] for e in h.log] == ["after_alloc", "on_free"]


def test_hooks_are_per_thread():
    h = Recorder()
    seen = []
    with Pushed(h):
        t = threading.Thread(target=lambda: seen.append((alloc_mod._memory_hooks(), tensorlib.empty(5))))
        t.start()
        t.join()
    assert seen[0][0] == [] and h.log == []
    del seen


def test_allocations_inside_a_hook_are_not_reported_to_hooks():
    class Greedy(Recorder):
        def after_alloc(self, storage):
            super().after_alloc(storage)
            self.kept = tensorlib.zeros(10)          # allocates (and frees the last one)

    h = Greedy()
    with Pushed(h):
        x = tensorlib.empty(3)
        y = tensorlib.empty(4)
    assert [e[1] for e in h.log] == ["serve", "after_alloc", "serve", "after_alloc"]
    del x, y, h


def test_alloc_ids_increase_and_current_op_is_recorded():
    a, b = tensorlib.empty(1), tensorlib.empty(1)
    assert 0 < a.untyped_storage().alloc_id < b.untyped_storage().alloc_id
    assert tensorlib.from_numpy(np.zeros(3)).untyped_storage().alloc_id == 0
    assert alloc_mod._get_current_op() is None
    assert alloc_mod._set_current_op("my_op") is None
    c = tensorlib.empty(2)
    assert alloc_mod._set_current_op(None) == "my_op"
    assert c.untyped_storage().op == "my_op" and a.untyped_storage().op is None
    assert alloc_mod._get_current_op() is None


def test_hook_errors():
    class BadServe:
        def serve(self, nbytes, device):
            raise KeyError("boom")

    class Misaligned:
        def serve(self, nbytes, device):
            return 12345

    s0 = stats()
    for hook, err in ((BadServe(), KeyError), (Misaligned(), RuntimeError)):
        with Pushed(hook):
            with pytest.raises(err):
                tensorlib.empty(10)
    s1 = stats()
    for k in ("allocated_bytes.all.current", "allocation.all.current"):
        assert s1[k] == s0[k], k
    with pytest.raises(ValueError, match="not a memory hook"):
        alloc_mod._pop_memory_hook(object())
    with pytest.raises(ValueError):
        tensorlib.empty(1).untyped_storage().role = "nonsense"
    with pytest.raises(ValueError):
        tensorlib.empty(1).untyped_storage().role = 99


def test_on_free_errors_are_unraisable_and_memory_is_still_freed():
    class BadFree:
        def on_free(self, storage):
            raise RuntimeError("on_free failed")

    seen = []
    old = sys.unraisablehook
    sys.unraisablehook = lambda u: seen.append(u.exc_value)
    base = memory.memory_allocated()
    try:
        x = tensorlib.empty(1000)
        with Pushed(BadFree()):
            del x
    finally:
        sys.unraisablehook = old
    assert len(seen) == 1 and "on_free failed" in str(seen[0])
    del seen                              # its traceback held the storage: now it goes
    assert memory.memory_allocated() == base


def test_a_hook_keeping_freed_storages_resurrects_them_safely():
    class Keeper:
        kept = []

        def on_free(self, storage):
            self.kept.append(storage)

    base = memory.memory_allocated()
    k = Keeper()
    with Pushed(k):
        x = tensorlib.empty(1000)
        x.fill_(5.0)
        del x
    assert len(k.kept) == 1 and memory.memory_allocated() == base + 4096   # still alive
    assert k.kept[0].nbytes() == 4000 and k.kept[0].data_ptr() != 0
    k.kept.clear()                        # now it really goes, without a second on_free
    assert memory.memory_allocated() == base


def test_autograd_saving_reports_the_role_change():
    h = Recorder()
    a = tensorlib.ones(3, requires_grad=True)
    with Pushed(h):
        b = a * a                                      # saves a (and a again)
    saved = alloc_mod.ROLE_NAMES.index("saved-for-backward")
    roles = [e for e in h.log if e[1] == "on_role"]
    assert roles and all(e[4] == saved for e in roles)
    assert roles[0][2] == a.untyped_storage().alloc_id
    assert a.untyped_storage().role_name == "saved-for-backward"
    del b
