"""tensorlib from 8 Python threads at once: ops, autograd, grad mode and the memory tools.

Every test runs its threads behind a barrier (so they really overlap) with a deadline: a
thread still running at the deadline fails the test as a deadlock, and a process-wide
watchdog (faulthandler, which needs no GIL) ends the run with every thread's stack if even the
main thread cannot get the GIL back. The inputs are large enough that the kernels release the
GIL and split their work over the C thread pool, and that matmul goes to BLAS (NumPy's), from
several Python threads at the same time. Results must equal one thread's, bit for bit (the
pool's chunking is fixed, so results do not depend on who runs a chunk), and the allocator's
counters must come back exactly to where they started.
"""
import faulthandler
import gc
import os
import signal
import sys
import threading

import numpy as np
import pytest

import tensorlib
from tensorlib import memory

N_THREADS = 8
DEADLINE = 240.0            # seconds, for all threads of one test (a loaded 2-core machine)


@pytest.fixture(autouse=True)
def watchdog():
    """Dump every thread's stack and exit if a test hangs with the GIL held."""
    faulthandler.dump_traceback_later(DEADLINE + 60, exit=True, file=sys.__stderr__)
    yield
    faulthandler.cancel_dump_traceback_later()


def run_threads(fn, n=N_THREADS):
    """``[fn(0), ..., fn(n - 1)]``, each on its own thread, started together; raises the first
    error of a thread, and fails the test when a thread is still running at the deadline."""
    barrier = threading.Barrier(n)
    results, errors = [None] * n, []

    def body(i):
        try:
            barrier.wait(timeout=DEADLINE)
            results[i] = fn(i)
        except BaseException as e:          # noqa: BLE001 - reported by the main thread
            errors.append((i, e))

    threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=DEADLINE)
    stuck = [i for i, t in enumerate(threads) if t.is_alive()]
    if stuck:
        faulthandler.dump_traceback(file=sys.__stderr__)
        pytest.fail(f"threads {stuck} still running after {DEADLINE} s: a deadlock")
    if errors:
        i, e = errors[0]
        raise AssertionError(f"thread {i} raised {type(e).__name__}: {e}") from e
    return results


def _inputs(seed=0, n=384):
    g = tensorlib.Generator().manual_seed(seed)
    # 147,456 elements: above the size from which kernels release the GIL and use the pool
    return tensorlib.randn(n, n, generator=g), tensorlib.randn(n, n, generator=g)


def _ops(a, b):
    """A mix of kernels: elementwise (pool), reductions, sort, matmul (BLAS), softmax,
    indexing, copies of non-contiguous views."""
    return [
        (a * b + 1).exp_().log1p(),
        a.sum(dim=0), a.amax(dim=1), (a - b).abs().mean(),
        a.sort(dim=1).values, a.argsort(dim=0),
        a @ b, (a.t() @ b).relu(),
        tensorlib.softmax(a, dim=1), a.cumsum(dim=1),
        a[::2, 1::3].contiguous(), a.t().contiguous(),
        a.index_select(0, tensorlib.arange(0, a.shape[0], 7)),
        tensorlib.where(a > 0, a, b).var(dim=1),
    ]


def _all_equal(results, ref):
    """Every thread's results equal the reference, bit for bit (a function: no loop variable
    keeps a tensor alive for the counters checked after it)."""
    return all(o.equal(r) for outs in results for o, r in zip(outs, ref))


def _alloc_state():
    gc.collect()
    s = memory.memory_stats()
    return (memory.memory_allocated(), s["allocation.all.current"])


def test_ops_from_8_threads_equal_one_threads():
    a, b = _inputs()
    a_np, b_np = a.numpy().copy(), b.numpy().copy()
    start = _alloc_state()
    ref = _ops(a, b)

    def work(i):
        outs = None
        for _ in range(2):
            outs = _ops(a, b)
        return outs

    results = run_threads(work)
    assert _all_equal(results, ref)
    # the shared inputs were only read
    assert np.array_equal(a.numpy(), a_np) and np.array_equal(b.numpy(), b_np)
    del results, ref
    assert _alloc_state() == start


def test_allocator_counters_exact_after_threads():
    """Many small and large allocations and frees on 8 threads: no count lost or doubled."""
    before = _alloc_state()
    stats0 = memory.memory_stats()

    def work(i):
        kept = []
        for k in range(300):
            t = tensorlib.empty(1 + (k * 37 + i) % 5000)
            if k % 3 == 0:
                kept.append(t)
            big = tensorlib.ones(1 << 18) * i          # its own segment, freed at once
            assert big[123].item() == i
        return sum(t.numel() for t in kept)

    run_threads(work)
    after = _alloc_state()
    assert after == before
    stats1 = memory.memory_stats()
    made = stats1["allocation.all.allocated"] - stats0["allocation.all.allocated"]
    freed = stats1["allocation.all.freed"] - stats0["allocation.all.freed"]
    assert made == freed and made >= N_THREADS * 300 * 2
    assert memory.memory_reserved() >= memory.memory_allocated()


def _loss(x, w):
    h = (x @ w).tanh()
    return (h * h).sum() + (x.sigmoid() * w).mean()


def test_autograd_a_graph_per_thread():
    a, b = _inputs(1, 256)

    def grads(x0, w0):
        x = x0.clone().requires_grad_()
        w = w0.clone().requires_grad_()
        loss = _loss(x, w)
        loss.backward()
        return loss.detach(), x.grad, w.grad

    start = _alloc_state()
    ref = grads(a, b)

    def work(i):
        out = None
        for _ in range(2):
            out = grads(a, b)
        return out

    results = run_threads(work)
    assert _all_equal(results, ref)
    del results, ref
    assert _alloc_state() == start


@pytest.fixture
def pool_threads(request):
    n0 = tensorlib.get_num_threads()
    tensorlib.set_num_threads(request.param)
    yield request.param
    tensorlib.set_num_threads(n0)


@pytest.mark.parametrize("pool_threads", [1, 2], indirect=True)
def test_autograd_shared_leaf_accumulates_every_threads_gradient(pool_threads):
    """Backward from 8 threads into one shared leaf: .grad gets every contribution, as
    PyTorch's (whose AccumulateGrad locks). With a pool of one thread the in-place adds of
    several threads would overlap without the GIL. Small integer gradients: every sum is
    exact, in any order."""
    c = (tensorlib.arange(512 * 512) % 7).float().view(512, 512)
    w = tensorlib.zeros(512, 512, requires_grad=True)
    steps = 20

    def work(i):
        for _ in range(steps):
            (w * c).sum().backward()

    run_threads(work)
    assert w.grad.equal(c * (steps * N_THREADS))


def test_grad_mode_is_per_thread():
    x = tensorlib.ones(4, requires_grad=True)
    inside = threading.Event()
    checked = threading.Event()

    def no_grad_thread():
        with tensorlib.no_grad():
            inside.set()
            assert checked.wait(DEADLINE)
            y = x * 2
            assert not tensorlib.is_grad_enabled()
        return y.requires_grad

    def grad_thread():
        assert inside.wait(DEADLINE)          # the other thread is inside no_grad now
        y = x * 2
        enabled = tensorlib.is_grad_enabled()
        checked.set()
        return y.requires_grad and enabled

    def run(i):
        return no_grad_thread() if i == 0 else grad_thread() if i == 1 else None

    r = run_threads(run, 2)
    assert r == [False, True]

    # set_grad_enabled(False) and inference_mode on 4 threads, grad mode on the 4 others
    def mixed(i):
        results = []
        for _ in range(50):
            if i % 3 == 0:
                with tensorlib.inference_mode():
                    results.append((x * 2).requires_grad)
            elif i % 3 == 1:
                prev = tensorlib.is_grad_enabled()
                tensorlib.set_grad_enabled(False)
                results.append((x * 2).requires_grad)
                tensorlib.set_grad_enabled(prev)
            else:
                results.append((x * 2).requires_grad)
        return results

    for i, res in enumerate(run_threads(mixed)):
        assert res == [i % 3 == 2] * 50
    assert tensorlib.is_grad_enabled()


def test_a_new_thread_starts_with_grad_enabled():
    with tensorlib.no_grad():
        r = run_threads(lambda i: tensorlib.is_grad_enabled(), 2)
    assert r == [True, True]


def test_memory_profile_per_thread():
    """Each thread's profile records its own allocations only, exactly."""
    def work(i):
        n = 1024 * (i + 1)               # float32: 4 KiB per step of i, a multiple of 512
        with memory.profile() as prof:
            keep = [tensorlib.ones(n) for _ in range(5)]
            y = keep[0] * 2
            del y
        allocs = [e for e in prof.events if e.kind == "alloc"]
        frees = [e for e in prof.events if e.kind == "free"]
        del keep
        return ([e.bytes for e in allocs], len(frees), prof.peak_bytes,
                [e.op for e in allocs])

    for i, (sizes, nfree, peak, ops) in enumerate(run_threads(work)):
        n = 4096 * (i + 1)
        assert sizes == [n] * 6
        assert ops == ["ones"] * 5 + ["mul"]
        assert nfree == 1
        assert peak == 6 * n


def test_planned_per_thread_and_shared():
    a, _ = _inputs(3, 256)

    def f(x):
        h = (x * 2).exp().tanh()
        return (h + 1).sin() * h

    with tensorlib.no_grad():
        ref = f(a)
        shared = memory.plan(f)
        start = _alloc_state()

        def work(i):
            own = memory.plan(f)
            outs = []
            for _ in range(5):
                outs.append(own(a))
                outs.append(shared(a))
            return outs, own.stats.recordings, own.stats.replays

        results = run_threads(work)
    assert [(rec, rep) for _, rec, rep in results] == [(1, 4)] * N_THREADS
    assert _all_equal([outs for outs, _, _ in results], [ref] * 10)
    assert shared.stats.calls == 5 * N_THREADS
    assert shared.stats.recordings >= 1
    del results
    # each thread's arenas went with its thread (the shared function keeps none of them)
    assert _alloc_state() == start


def test_pool_blas_and_gil_no_deadlock_under_thread_count_changes():
    """Large kernels and matmuls from 8 threads while one thread changes the pool's size."""
    a, b = _inputs(4, 512)
    ref = [(a.exp() * b).sum(dim=1), a @ b]
    n0 = tensorlib.get_num_threads()

    def work(i):
        for k in range(4):
            if i == 0:
                tensorlib.set_num_threads(1 + k % 2)
            got = [(a.exp() * b).sum(dim=1), a @ b]
            assert got[0].equal(ref[0])
            assert tensorlib.allclose(got[1], ref[1], rtol=1e-5, atol=1e-4)
        return True

    try:
        assert all(run_threads(work))
    finally:
        tensorlib.set_num_threads(n0)


def test_a_generator_per_thread_gives_the_single_thread_stream():
    def draws(seed):
        g = tensorlib.Generator().manual_seed(seed)
        return [tensorlib.randn(1 << 17, generator=g), tensorlib.rand(1000, generator=g),
                tensorlib.randint(0, 100, (1 << 16,), generator=g)]

    ref = [draws(i) for i in range(N_THREADS)]
    got = run_threads(lambda i: [draws(i) for _ in range(2)][-1])
    assert all(_all_equal([g], r) for g, r in zip(got, ref))


def test_the_default_generator_hands_each_draw_a_block_of_its_stream():
    """8 threads drawing from the default generator at once: each draw is one whole block of
    the single-thread stream (which thread gets which depends on the interleaving), none
    repeated or torn."""
    state = tensorlib.get_rng_state()
    try:
        tensorlib.manual_seed(123)
        blocks = [tensorlib.randn(1 << 15) for _ in range(N_THREADS * 3)]
        tensorlib.manual_seed(123)
        got = [t for ts in run_threads(lambda i: [tensorlib.randn(1 << 15) for _ in range(3)])
               for t in ts]
    finally:
        tensorlib.set_rng_state(state)
    keys = {b[:4].numpy().tobytes(): b for b in blocks}
    assert len(keys) == len(blocks)
    seen = set()
    for t in got:
        k = t[:4].numpy().tobytes()
        assert k in keys and k not in seen and t.equal(keys[k])
        seen.add(k)


def _sigint_blocked(task):
    """Whether thread ``task`` of this process blocks SIGINT (its SigBlk mask in /proc)."""
    with open(f"/proc/self/task/{task}/status") as f:
        mask = next(int(line.split()[1], 16) for line in f if line.startswith("SigBlk:"))
    return bool(mask >> (signal.SIGINT - 1) & 1)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux's /proc")
def test_pool_workers_leave_ctrl_c_to_python():
    """The pool's workers block the asynchronous signals, so Ctrl-C reaches a Python thread
    (and interrupts what it is waiting on) rather than a worker polling for its next job."""
    before = tensorlib.get_num_threads()
    x = tensorlib.ones(1 << 20)                    # 32 chunks: up to 31 workers
    tasks = set(os.listdir("/proc/self/task"))
    try:
        # more threads than the process has: the pool starts at least two new workers
        tensorlib.set_num_threads(min(len(tasks) + 3, 32))
        x + x
        new = set(os.listdir("/proc/self/task")) - tasks
        assert len(new) >= 2
        assert all(_sigint_blocked(t) for t in new)
        assert not _sigint_blocked(os.getpid())   # the main thread takes Ctrl-C
    finally:
        tensorlib.set_num_threads(before)
