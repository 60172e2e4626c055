"""The DataLoader's worker processes: their loop, their seeds and ``get_worker_info``."""
import os
import queue
import random
import signal
import sys
import traceback

__all__ = ["WorkerInfo", "get_worker_info"]

# how often a waiting worker checks that the loader still wants it and its parent lives
_POLL = 0.1


class WorkerInfo:
    """What a worker process knows about itself: ``id``, ``num_workers``, ``seed`` (this
    worker's: the loader's base seed + id) and ``dataset`` (its own copy). Read-only.

    >>> WorkerInfo(id=0, num_workers=2, seed=7, dataset=None)
    WorkerInfo(id=0, num_workers=2, seed=7, dataset=None)
    """

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            object.__setattr__(self, k, v)
        object.__setattr__(self, "_keys", tuple(kwargs))

    def __setattr__(self, key, val):
        raise RuntimeError(f"Cannot assign attributes to {self.__class__.__name__} objects")

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._keys)
        return f"{self.__class__.__name__}({items})"


_worker_info = None


def get_worker_info():
    """In a DataLoader worker process, its ``WorkerInfo``; None in the main process. An
    ``IterableDataset`` uses it to give each worker its own share of the data.

    >>> get_worker_info() is None
    True
    """
    return _worker_info


class ExceptionWrapper:
    """An exception caught in a worker, carried to the main process as its type and the text
    of its traceback, and raised there again naming the worker."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)     # KeyError would show its argument's repr
        try:
            exc = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        try:
            raise exc
        finally:
            # no cycle through this frame: the loader's iterator, which the traceback
            # reaches, goes (and its workers with it) as soon as the exception is dropped
            del exc


class _KeyErrorMessage(str):
    def __repr__(self):
        return self


class _IterableDatasetStopIteration:
    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to persistent workers at the start of an epoch; echoed back as the marker."""

    def __init__(self, seed=None):
        self.seed = seed


def _seed_worker(seed, worker_id, base_seed):
    import numpy as np
    import tensorlib
    random.seed(seed)
    tensorlib.manual_seed(seed)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last

    def fetch(self, index):
        if self.auto_collation:
            getitems = getattr(self.dataset, "__getitems__", None)
            if callable(getitems):
                data = getitems(index)
            else:
                data = [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


class _IterableFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if not data or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableFetcher if iterable else _MapFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


def _parent_alive(parent_pid):
    """Whether the loader's process lives: the worker's parent has not changed (it is the
    loader's process, or under forkserver the server, which exits with it) and, under
    forkserver, the loader's pid still exists."""
    if os.getppid() != _watched_parent:
        return False
    if parent_pid != _watched_parent:
        try:
            os.kill(parent_pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
    return True


_watched_parent = None


def worker_loop(iterable, dataset, index_queue, data_queue, done_event, auto_collation,
                collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers,
                persistent_workers, shm_prefix, parent_pid):
    """A worker: take (task index, sampler index) from ``index_queue``, fetch and collate,
    put (task index, payload) on ``data_queue``; payloads are pickled here with tensors as
    shared-memory references. ``None`` or ``done_event`` ends it, and so does its parent's
    death (then it also unlinks its segments the parent never mapped)."""
    global _worker_info
    from tensorlib.utils.data import _shm
    global _watched_parent
    _watched_parent = os.getppid()
    # Ctrl-C reaches the whole process group: the main process shuts the workers down
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _shm._prefix = f"{shm_prefix}w{worker_id}_"
    import tensorlib
    # one kernel thread per worker, as PyTorch: the workers are the parallelism
    tensorlib.set_num_threads(1)
    try:
        seed = base_seed + worker_id
        _seed_worker(seed, worker_id, base_seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_error = None
        fetcher = None      # stays None if worker_init_fn fails: every task then reports it
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")

        iteration_end = False
        while True:
            try:
                r = index_queue.get(timeout=_POLL)
            except queue.Empty:
                if done_event.is_set() or not _parent_alive(parent_pid):
                    break
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                if iterable:
                    fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn,
                                           drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue        # the loader is shutting down, or this worker's data ran out
            idx, index = r
            if init_error is not None:
                data = init_error
            else:
                try:
                    data = _shm.dumps(fetcher.fetch(index))
                except Exception as e:
                    if isinstance(e, StopIteration) and iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(
                            where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set() or not _parent_alive(parent_pid):
        data_queue.cancel_join_thread()
        data_queue.close()
    if not _parent_alive(parent_pid):
        _shm.unlink_prefix(_shm._prefix)
