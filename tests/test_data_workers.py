"""DataLoader worker processes: results, seeds and sharding (side by side with torch where the
streams allow), the shared-memory hand-over and its memory role, and every failure: a worker
that raises, one killed by a signal, timeouts, leaving early, KeyboardInterrupt. After each,
no child process (not even a zombie) and no shared-memory segment may remain."""
import faulthandler
import glob
import multiprocessing
import os
import random
import signal
import time

import numpy as np
import pytest

import tensorlib
from tensorlib.utils import data as tdata


# ---- leak checks -------------------------------------------------------------------------------

def children():
    """Pids of this process's children (zombies included), without multiprocessing's own
    long-lived helper (the resource tracker that spawn starts)."""
    pids = set()
    for path in glob.glob(f"/proc/{os.getpid()}/task/*/children"):
        try:
            with open(path) as f:
                pids.update(int(p) for p in f.read().split())
        except OSError:
            pass                # a thread (a queue's feeder) ended meanwhile
    from multiprocessing import forkserver, resource_tracker
    pids.discard(getattr(resource_tracker._resource_tracker, "_pid", None))
    pids.discard(getattr(forkserver._forkserver, "_forkserver_pid", None))
    return pids


def segments():
    return set(glob.glob("/dev/shm/tl_*"))


@pytest.fixture
def no_leaks():
    before_children, before_segments = children(), segments()
    yield
    deadline = time.monotonic() + 5
    while children() - before_children and time.monotonic() < deadline:
        time.sleep(0.02)
    assert children() - before_children == set()
    assert segments() - before_segments == set()


# ---- datasets (module level: spawn workers import them) -------------------------------------

class Rows(tdata.Dataset):
    """Sample i: a dict with a float32 row, an int label and a string."""

    def __init__(self, n=12, width=3):
        self.n, self.width = n, width

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": tensorlib.arange(float(i * self.width), float((i + 1) * self.width)),
                "y": i, "name": f"s{i}"}


class Failing(tdata.Dataset):
    def __init__(self, bad=5, n=12):
        self.bad, self.n = bad, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            raise ValueError(f"cannot read sample {i}")
        return i


class KeyFailing(Failing):
    def __getitem__(self, i):
        if i == self.bad:
            raise KeyError("missing")
        return i


class Killed(tdata.Dataset):
    def __init__(self, victim=4, signum=signal.SIGKILL):
        self.victim, self.signum = victim, signum

    def __len__(self):
        return 12

    def __getitem__(self, i):
        if i == self.victim:
            faulthandler.disable()      # pytest's dump of the crash would only be noise
            os.kill(os.getpid(), self.signum)
            time.sleep(5)
        return i


class Slow(tdata.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(2)
        return i


class Sharded(tdata.IterableDataset):
    """0..n-1, each worker taking an interleaved share."""

    def __init__(self, n=10):
        self.n = n

    def __iter__(self):
        info = tdata.get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


class Seeds(tdata.Dataset):
    """What a worker sees: its info and draws from each seeded generator."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = tdata.get_worker_info()
        return {"id": info.id, "seed": info.seed, "num_workers": info.num_workers,
                "tl": tensorlib.rand(2, dtype=tensorlib.float64).tolist(),
                "py": random.random(), "np": float(np.random.rand()), "pid": os.getpid(),
                "threads": tensorlib.get_num_threads()}


class Views(tdata.Dataset):
    """Non-contiguous samples (transposes), for batch_size=None."""

    def __len__(self):
        return 3

    def __getitem__(self, i):
        return tensorlib.arange(6.0).reshape(2, 3).t() + i


def _init_fn(worker_id):
    random.seed(1000 + worker_id)


# ---- results -------------------------------------------------------------------------------------

def _plain(batch):
    return {k: (v.tolist() if isinstance(v, tensorlib.Tensor) else v) for k, v in batch.items()}


@pytest.mark.parametrize("ctx", ["fork", "spawn"])
def test_workers_give_the_same_batches(ctx, no_leaks):
    ds = Rows()
    expected = [_plain(b) for b in tdata.DataLoader(ds, batch_size=5)]
    dl = tdata.DataLoader(ds, batch_size=5, num_workers=2, multiprocessing_context=ctx)
    got = []
    for b in dl:
        assert b["x"].is_shared() and b["x"].dtype == tensorlib.float32
        got.append(_plain(b))
    assert got == expected


def test_batch_size_none_and_non_contiguous(no_leaks):
    got = list(tdata.DataLoader(Views(), batch_size=None, num_workers=2))
    for i, t in enumerate(got):
        assert t.tolist() == (tensorlib.arange(6.0).reshape(2, 3).t() + i).tolist()


def test_views_of_one_batch_share_one_mapping(no_leaks):
    dl = tdata.DataLoader(Rows(), batch_size=4, num_workers=1,
                          collate_fn=lambda b: (lambda x: (x, x[1:], x.t()))(
                              tdata.default_collate(b)["x"]))
    x, tail, xt = next(iter(dl))
    assert tail.data_ptr() == x.data_ptr() + x.stride(0) * x.element_size()
    assert xt.tolist() == x.t().tolist() and x[1:].tolist() == tail.tolist()
    x[1, 0] = -1.0
    assert tail[0, 0].item() == -1.0


def test_received_batch_is_counted_as_input(no_leaks):
    ds = tdata.TensorDataset(tensorlib.ones(64, 32))
    before = tensorlib.memory.memory_allocated()
    with tensorlib.memory.profile() as prof:
        (batch,) = next(iter(tdata.DataLoader(ds, batch_size=16, num_workers=1)))
        roles = prof.by_role("end")
    nbytes = 16 * 32 * 4
    assert roles.get("input", 0) >= nbytes
    assert batch.untyped_storage().role_name == "input"
    assert not batch.untyped_storage().is_borrowed
    assert tensorlib.memory.memory_allocated() - before >= nbytes
    del batch
    assert tensorlib.memory.memory_allocated() - before < nbytes


def test_iterable_sharding_matches_torch(no_leaks):
    torch = pytest.importorskip("torch")
    from torch.utils import data as rdata

    class TSharded(rdata.IterableDataset):
        def __iter__(self):
            info = rdata.get_worker_info()
            return iter(range(info.id, 10, info.num_workers))

    for kw in [dict(batch_size=2), dict(batch_size=3, drop_last=True), dict(batch_size=None)]:
        ours = [getattr(b, "tolist", lambda: b)()
                for b in tdata.DataLoader(Sharded(), num_workers=2, **kw)]
        ref = [getattr(b, "tolist", lambda: b)()
               for b in rdata.DataLoader(TSharded(), num_workers=2,
                                         multiprocessing_context="fork", **kw)]
        assert ours == ref


def test_worker_seeds_reproducible(no_leaks):
    def run(**kw):
        return list(tdata.DataLoader(Seeds(), batch_size=None, num_workers=2, **kw))

    tensorlib.manual_seed(11)
    a = run()
    tensorlib.manual_seed(11)
    b = run()
    strip = [{k: v for k, v in s.items() if k != "pid"} for s in a]
    assert strip == [{k: v for k, v in s.items() if k != "pid"} for s in b]
    by_worker = {s["id"]: s for s in a}
    assert set(by_worker) == {0, 1}
    assert by_worker[1]["seed"] == by_worker[0]["seed"] + 1
    assert all(s["num_workers"] == 2 and s["threads"] == 1 for s in a)
    # each worker's generators are seeded from its seed, as in PyTorch
    for s in a[:2]:
        tensorlib.manual_seed(s["seed"])
        assert tensorlib.rand(2, dtype=tensorlib.float64).tolist() == s["tl"]
        random.seed(s["seed"])
        assert random.random() == s["py"]
    assert by_worker[0]["np"] != by_worker[1]["np"]
    g = tensorlib.Generator().manual_seed(5)
    c = run(generator=g)
    g = tensorlib.Generator().manual_seed(5)
    assert [s["seed"] for s in c] == [s["seed"] for s in run(generator=g)]
    tensorlib.manual_seed(12)
    assert run()[0]["seed"] != a[0]["seed"]
    d = run(worker_init_fn=_init_fn)
    assert {s["id"]: s["py"] for s in reversed(d)} == {     # each worker's first draw
        w: random.Random(1000 + w).random() for w in (0, 1)}


def test_shuffle_with_workers_reproducible(no_leaks):
    ds = tdata.TensorDataset(tensorlib.arange(20))
    tensorlib.manual_seed(2)
    a = [b[0].tolist() for b in tdata.DataLoader(ds, batch_size=6, shuffle=True, num_workers=2)]
    tensorlib.manual_seed(2)
    b = [b[0].tolist() for b in tdata.DataLoader(ds, batch_size=6, shuffle=True)]
    assert a == b and sorted(sum(a, [])) == list(range(20))


def test_in_order_false_and_prefetch(no_leaks):
    ds = tdata.TensorDataset(tensorlib.arange(30))
    got = [b[0].tolist() for b in tdata.DataLoader(ds, batch_size=4, num_workers=2,
                                                   in_order=False, prefetch_factor=1)]
    assert sorted(sum(got, [])) == list(range(30))


def test_persistent_workers(no_leaks):
    dl = tdata.DataLoader(tdata.TensorDataset(tensorlib.arange(10)), batch_size=3,
                          num_workers=2, persistent_workers=True)
    it = iter(dl)
    pids = [w.pid for w in it._workers]
    first = [b[0].tolist() for b in it]
    second = [b[0].tolist() for b in dl]
    assert first == second == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert iter(dl) is it and [w.pid for w in it._workers] == pids
    for i, _ in enumerate(dl):      # an epoch left early: the next starts afresh
        if i == 1:
            break
    assert [b[0].tolist() for b in dl] == first
    it2 = iter(tdata.DataLoader(Sharded(), batch_size=4, num_workers=2,
                                persistent_workers=True))
    assert sorted(sum((b.tolist() for b in it2), [])) == list(range(10))
    del dl, it, it2


# ---- failures -----------------------------------------------------------------------------------

@pytest.mark.parametrize("ctx", ["fork", "spawn"])
def test_worker_exception_reraised_with_traceback(ctx, no_leaks):
    dl = tdata.DataLoader(Failing(bad=5), batch_size=2, num_workers=2,
                          multiprocessing_context=ctx)
    try:
        for _ in dl:
            pass
    except ValueError as e:
        msg = str(e)
    else:
        raise AssertionError("no error")
    # sample 5 is in batch 2, which round-robin sends to worker 0
    assert msg.startswith("Caught ValueError in DataLoader worker process 0.\n"
                          "Original Traceback (most recent call last):")
    assert "cannot read sample 5" in msg and "__getitem__" in msg


def test_worker_exception_keyerror_and_continue(no_leaks):
    it = iter(tdata.DataLoader(KeyFailing(bad=2), batch_size=1, num_workers=2))
    assert next(it).tolist() == [0] and next(it).tolist() == [1]
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 0"):
        next(it)
    assert next(it).tolist() == [3]     # as in PyTorch, the iterator goes on
    del it


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGSEGV])
def test_worker_killed_by_signal(signum, no_leaks):
    start = time.monotonic()
    with pytest.raises(RuntimeError) as info:
        for _ in tdata.DataLoader(Killed(victim=4, signum=signum), batch_size=2,
                                  num_workers=2):
            pass
    assert time.monotonic() - start < 3
    msg = str(info.value)
    assert "DataLoader worker (pid " in msg and signal.Signals(signum).name in msg
    pid = int(msg.split("(pid ")[1].split(")")[0])
    assert pid not in children()
    del info


def test_worker_exit_unexpectedly(no_leaks):
    class Exiting(tdata.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            os._exit(3)

    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "
                                           "unexpectedly with exit code 3"):
        list(tdata.DataLoader(Exiting(), num_workers=1))


def test_timeout(no_leaks):
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0.3 seconds$"):
        list(tdata.DataLoader(Slow(), num_workers=1, timeout=0.3))
    assert time.monotonic() - start < 3


def test_leaving_early_and_deleting(no_leaks):
    ds = Rows(n=40)
    for i, _ in enumerate(tdata.DataLoader(ds, batch_size=2, num_workers=2)):
        if i == 1:
            break
    it = iter(tdata.DataLoader(ds, batch_size=2, num_workers=2))
    next(it)
    workers = list(it._workers)
    del it
    assert not any(w.is_alive() for w in workers)


def test_exception_in_loop_body(no_leaks):
    with pytest.raises(ZeroDivisionError):
        for _ in tdata.DataLoader(Rows(n=40), batch_size=2, num_workers=2):
            1 / 0


def test_keyboard_interrupt(no_leaks):
    # Python's own Ctrl-C handler, whatever the run inherited: a shell starts background jobs
    # with SIGINT ignored, and Python then installs no handler
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    got = 0
    try:
        for _ in tdata.DataLoader(Rows(n=40), batch_size=2, num_workers=2):
            got += 1
            if got == 2:
                os.kill(os.getpid(), signal.SIGINT)     # Ctrl-C
                time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGINT, previous)
    assert got == 2


def test_parent_killed_leaves_nothing(tmp_path):
    """The main process killed with SIGKILL mid-epoch: its workers notice, exit and unlink
    the segments it never mapped."""
    import subprocess
    import sys
    script = tmp_path / "victim.py"
    script.write_text(
        "import os, sys, time\n"
        # the tensorlib this process imported (the checkout's root has no compiled core)
        f"sys.path.insert(0, {os.path.dirname(os.path.dirname(tensorlib.__file__))!r})\n"
        "import tensorlib\nfrom tensorlib.utils import data\n"
        "ds = data.TensorDataset(tensorlib.ones(64, 256))\n"
        "it = iter(data.DataLoader(ds, batch_size=2, num_workers=2, prefetch_factor=4))\n"
        "next(it)\n"
        "print(os.getpid(), *[w.pid for w in it._workers], flush=True)\n"
        "time.sleep(60)\n")
    before = segments()
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    main_pid, *worker_pids = map(int, p.stdout.readline().split())
    prefix = f"/dev/shm/tl_dl_{main_pid}_"
    os.kill(main_pid, signal.SIGKILL)
    p.wait()
    p.stdout.close()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (
            any(os.path.exists(f"/proc/{w}") for w in worker_pids)
            or glob.glob(prefix + "*")):
        time.sleep(0.05)
    assert not any(os.path.exists(f"/proc/{w}") for w in worker_pids)
    assert glob.glob(prefix + "*") == [] and segments() - before == set()


def test_share_memory(no_leaks):
    t = tensorlib.arange(4.0)
    view = t[1:]
    before = segments()
    assert not t.is_shared()
    assert t.share_memory_() is t and t.is_shared() and view.is_shared()
    assert segments() == before          # already unlinked: nothing to leak
    ctx = multiprocessing.get_context("fork")
    p = ctx.Process(target=_write_first, args=(t,))
    p.start()
    p.join()
    assert p.exitcode == 0 and t.tolist() == [42.0, 1.0, 2.0, 3.0] and view[0].item() == 1.0


def _write_first(t):
    t[0] = 42.0


def _failing_init(worker_id):
    raise OSError(f"worker {worker_id} cannot start")


def test_worker_init_fn_error(no_leaks):
    with pytest.raises(OSError, match=r"(?s)Caught OSError in DataLoader worker process 0\..*"
                                      "worker 0 cannot start"):
        list(tdata.DataLoader(Rows(), num_workers=1, worker_init_fn=_failing_init))


def test_forkserver_workers_idle_between_epochs(no_leaks):
    """Under forkserver a worker's parent is the server, not the loader's process: idle
    workers must not take that for their loader's death."""
    dl = tdata.DataLoader(tdata.TensorDataset(tensorlib.arange(6)), batch_size=4,
                          num_workers=2, multiprocessing_context="forkserver",
                          persistent_workers=True)
    first = [b[0].tolist() for b in dl]
    time.sleep(0.4)
    assert [b[0].tolist() for b in dl] == first == [[0, 1, 2, 3], [4, 5]]
    del dl


def test_payload_carries_metadata_not_data(no_leaks):
    """A worker's batch pickles to its tensors' geometry (bytes, not megabytes), and the
    receiver's tensor lies in the mapped segment, which is already gone from /dev/shm."""
    from tensorlib.utils.data import _shm
    before = segments()
    x = _shm.empty_shared((256, 1024), tensorlib.float32)     # 1 MiB, as a worker makes it
    x.fill_(3.0)
    payload = _shm.dumps({"x": x, "rows": x[:2]})
    assert len(payload) < 1024
    del x
    (name,) = segments() - before
    got = _shm.loads(payload)
    assert not os.path.exists(name)
    seg = _shm.segment_of(got["x"])
    assert seg is _shm.segment_of(got["rows"]) and seg.size == 256 * 1024 * 4
    assert got["x"].data_ptr() == seg.address and got["rows"].data_ptr() == seg.address
    assert got["x"].sum().item() == 3.0 * 256 * 1024 and got["rows"].shape == (2, 1024)
