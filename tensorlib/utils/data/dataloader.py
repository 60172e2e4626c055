"""``DataLoader``, PyTorch's ``torch.utils.data.dataloader``: batches from a dataset, in this
process or from worker processes.

Workers are processes (``multiprocessing_context``: "fork", "spawn" or "forkserver", or a
context object). Each gets its own index queue; tasks go round-robin, ``prefetch_factor`` per
worker ahead, and batches come back in sampler order (``in_order``) on one result queue. A
batch's tensors travel in shared memory (see ``_shm``): mapped, not copied, by this process,
and counted with the memory role "input".

While it waits for a batch the main process wakes every 0.1 s to check its workers: one that
died (a signal, the OOM killer, ``os._exit``) is a RuntimeError naming its pid and how it
died. Shutting down (the end of the data, leaving the loop early, deleting the iterator, an
exception in the loop body, KeyboardInterrupt, interpreter exit) tells every worker to stop,
joins it (terminating one that does not stop within a second), and unlinks any segment it
left in /dev/shm.
"""
import atexit
import itertools
import math
import multiprocessing as python_multiprocessing
import os
import queue
import signal
import warnings
import weakref

import tensorlib
from tensorlib.utils.data import _shm
from tensorlib.utils.data import _worker
from tensorlib.utils.data.collate import default_collate, default_convert
from tensorlib.utils.data.dataset import IterableDataset
from tensorlib.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

get_worker_info = _worker.get_worker_info

_POLL = 0.1             # seconds between checks of the workers while waiting for a batch
_JOIN_TIMEOUT = 1.0     # seconds a worker gets to exit before it is terminated


class _DatasetKind:
    Map = 0
    Iterable = 1


class _InfiniteConstantSampler(Sampler):
    """None forever: the index stream of an iterable dataset."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Batches of a dataset: ``for batch in DataLoader(dataset, batch_size=64, shuffle=True)``.

    The arguments are PyTorch's: ``batch_size`` (None: no automatic batching, samples pass
    through ``default_convert``), ``shuffle``, ``sampler``, ``batch_sampler``, ``num_workers``
    (0: load in this process), ``collate_fn`` (``default_collate``), ``pin_memory`` (batches copied
    to page-locked memory when a CUDA device is available), ``drop_last``, ``timeout`` (seconds to wait for a
    worker's batch, 0 = no limit), ``worker_init_fn(worker_id)``, ``multiprocessing_context``,
    ``generator`` (draws the base seed and, with ``shuffle``, the order), ``prefetch_factor``
    (batches in flight per worker, default 2), ``persistent_workers`` (keep workers across
    epochs), ``pin_memory_device`` and ``in_order`` (False: batches as they come).

    >>> ds = tensorlib.utils.data.TensorDataset(tensorlib.arange(5.0))
    >>> [b[0].tolist() for b in DataLoader(ds, batch_size=2)]
    [[0.0, 1.0], [2.0, 3.0], [4.0]]
    >>> len(DataLoader(ds, batch_size=2, drop_last=True))
    2
    """

    _DataLoader__initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        elif num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if shuffle not in {False, None}:
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            elif batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")

        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None:
            if drop_last:
                raise ValueError("batch_size=None option disables auto-batching and is "
                                 "mutually exclusive with drop_last")

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)

        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator

        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self.check_worker_number_rationality()
        if pin_memory and not tensorlib.cuda.is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=2)

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx):
        if ctx is not None:
            if self.num_workers > 0:
                if isinstance(ctx, str):
                    valid = python_multiprocessing.get_all_start_methods()
                    if ctx not in valid:
                        raise ValueError("multiprocessing_context option should specify a valid "
                                         f"start method in {valid!r}, but got "
                                         f"multiprocessing_context={ctx!r}")
                    ctx = python_multiprocessing.get_context(ctx)
                if not isinstance(ctx, python_multiprocessing.context.BaseContext):
                    raise TypeError("multiprocessing_context option should be a valid context "
                                    "object or a string specifying the start method, but got "
                                    f"multiprocessing_context={ctx}")
            else:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 "loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
        self.__multiprocessing_context = ctx

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler",
                                           "drop_last", "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def check_worker_number_rationality(self):
        """Warn (as PyTorch does) when ``num_workers`` exceeds the CPUs this process may use.

        >>> DataLoader(range(4), num_workers=0).check_worker_number_rationality()
        """
        if not self.num_workers:
            return
        cpuset_checked = hasattr(os, "sched_getaffinity")
        try:
            suggest = len(os.sched_getaffinity(0)) if cpuset_checked else os.cpu_count()
        except OSError:
            suggest = os.cpu_count()
        if suggest is not None and self.num_workers <= suggest:
            return
        if suggest is not None:
            detail = (f"Our suggested max number of worker in current system is {suggest}"
                      f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, "
                      "which is smaller than what this DataLoader is going to create.")
        else:
            detail = ("DataLoader is not able to compute a suggested max number of worker in "
                      "current system.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                      f"total. {detail} Please be aware that excessive worker creation might "
                      "get DataLoader running slow or even freeze, lower the worker number to "
                      "avoid potential slowness/freeze if necessary.", stacklevel=2)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if self._dataset_kind == _DatasetKind.Iterable:
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._in_order = loader.in_order
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(tensorlib.empty((), dtype=tensorlib.int64)
                              .random_(generator=loader.generator).item())
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0
        self._pin_memory = loader.pin_memory and tensorlib.cuda.is_available()

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        if self._sampler_iter is None:
            self._reset()
        data = self._next_data()
        if self._pin_memory:
            data = pin_batch(data)
        self._num_yielded += 1
        if (self._dataset_kind == _DatasetKind.Iterable
                and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            msg = (f"Length of IterableDataset {self._dataset} was reported to be "
                   f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                   f"{self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly "
                        "configuring the IterableDataset replica at each worker.")
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


def pin_batch(data):
    """``data`` with every CPU tensor in it (through lists, tuples, named tuples, dicts and
    objects with a ``pin_memory()`` method) copied to page-locked memory: what a DataLoader
    with ``pin_memory=True`` yields when a CUDA device is available."""
    if isinstance(data, tensorlib.Tensor):
        return data.pin_memory() if data.device.type == "cpu" else data
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, dict):
        return type(data)({k: pin_batch(v) for k, v in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(pin_batch(v) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(pin_batch(v) for v in data)
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        if self._timeout != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        if self._num_workers != 0:
            raise AssertionError("_SingleProcessDataLoaderIter requires num_workers == 0")
        self._fetcher = _worker.make_fetcher(self._dataset_kind == _DatasetKind.Iterable,
                                             self._dataset, self._auto_collation,
                                             self._collate_fn, self._drop_last)

    def _next_data(self):
        index = self._next_index()
        return self._fetcher.fetch(index)


# live multi-process iterators, shut down at interpreter exit (before multiprocessing's own
# exit handler terminates daemonic children, so that their segments are unlinked too)
_live_iters = weakref.WeakSet()
_iter_ids = itertools.count()


@atexit.register
def _shutdown_all():
    for it in list(_live_iters):
        it._shutdown_workers()


def _signal_text(signum):
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    desc = signal.strsignal(signum) or name
    return f"{desc} ({name})"


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        if self._num_workers <= 0:
            raise AssertionError("num_workers must be > 0")
        self._shutdown = True       # nothing to shut down until the workers exist
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = python_multiprocessing.get_context()
        self._worker_init_fn = loader.worker_init_fn
        self._shm_prefix = f"tl_dl_{os.getpid()}_{next(_iter_ids)}_"
        self._worker_result_queue = ctx.Queue()
        self._workers_done_event = ctx.Event()
        self._index_queues = []
        self._workers = []
        self._shutdown = False
        _live_iters.add(self)
        try:
            for i in range(self._num_workers):
                iq = ctx.Queue()
                iq.cancel_join_thread()     # a dead worker must not block our exit
                w = ctx.Process(
                    target=_worker.worker_loop,
                    args=(self._dataset_kind == _DatasetKind.Iterable, self._dataset, iq,
                          self._worker_result_queue, self._workers_done_event,
                          self._auto_collation, self._collate_fn, self._drop_last,
                          self._base_seed, self._worker_init_fn, i, self._num_workers,
                          self._persistent_workers, self._shm_prefix, os.getpid()))
                w.daemon = True
                w.start()
                self._index_queues.append(iq)
                self._workers.append(w)
        except BaseException:
            self._shutdown_workers()
            raise
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # persistent workers: start them over, dropping what the last epoch left in flight
            for iq in self._index_queues:
                iq.put(_worker._ResumeIteration())
            waiting = self._num_workers
            while waiting > 0:
                ok, data = self._get_data()
                if isinstance(data[0], _worker._ResumeIteration):
                    waiting -= 1
                else:
                    self._discard(data[1])
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    @staticmethod
    def _discard(payload):
        """Drop a payload without using it: mapping it unlinks its segments."""
        if isinstance(payload, bytes):
            try:
                _shm.loads(payload)
            except Exception:
                pass

    def _try_put_index(self):
        if self._tasks_outstanding >= self._prefetch_factor * self._num_workers:
            raise AssertionError("too many tasks outstanding")
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return      # no worker left that has data
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_id,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _check_workers(self):
        """Raise if a worker that should be running has died."""
        for worker_id, w in enumerate(self._workers):
            if self._workers_status[worker_id] and not w.is_alive():
                code = w.exitcode
                self._shutdown_workers()
                if code is not None and code < 0:
                    raise RuntimeError(f"DataLoader worker (pid {w.pid}) is killed by signal: "
                                       f"{_signal_text(-code)}. ")
                raise RuntimeError(f"DataLoader worker (pid(s) {w.pid}) exited unexpectedly "
                                   f"with exit code {code}")

    def _get_data(self):
        """The next (task index, payload) from any worker; waits in short slices, checking
        the workers between them, until ``timeout`` (when set)."""
        deadline = None
        if self._timeout > 0:
            deadline = _now() + self._timeout
        while True:
            wait = _POLL if deadline is None else max(0.0, min(_POLL, deadline - _now()))
            try:
                return True, self._worker_result_queue.get(timeout=wait)
            except queue.Empty:
                pass
            self._check_workers()
            if deadline is not None and _now() >= deadline:
                self._shutdown_workers()
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _next_data(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None:
                    worker_id = info[0]
                    if len(info) == 2 or self._workers_status[worker_id]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:
                data = self._task_info.pop(self._rcvd_idx)[1]
                self._rcvd_idx += 1
                return self._process_data(data)

            _, (idx, data) = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker._IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    del self._task_info[idx]
                    return self._process_data(data)
                self._task_info[idx] += (data,)
            else:
                del self._task_info[idx]
                self._rcvd_idx += 1
                return self._process_data(data)

    def _process_data(self, data):
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return _shm.loads(data)

    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        q = self._index_queues[worker_id]
        q.put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        if getattr(self, "_shutdown", True):
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for q in self._index_queues:
                try:
                    q.put(None)
                except (OSError, ValueError):
                    pass
            for w in self._workers:
                w.join(timeout=_JOIN_TIMEOUT)
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=_JOIN_TIMEOUT)
                    if w.is_alive():
                        os.kill(w.pid, signal.SIGKILL)
                        w.join()
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
            self._worker_result_queue.cancel_join_thread()
            self._worker_result_queue.close()
        finally:
            # what the workers sent that nobody mapped, or made before they died: every
            # segment of theirs carries the prefix
            _shm.unlink_prefix(self._shm_prefix)
            _live_iters.discard(self)

    def __del__(self):
        self._shutdown_workers()


def _now():
    import time
    return time.monotonic()
