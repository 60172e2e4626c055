"""tensorlib.utils.data without worker processes: datasets, samplers, collation and the
DataLoader's arguments, side by side with torch.utils.data where the results can be compared
(everything not drawn from a random stream; tensorlib's streams are not PyTorch's)."""
import collections
import warnings

import numpy as np
import pytest

import tensorlib
from tensorlib.utils import data as tdata

torch = pytest.importorskip("torch")
from torch.utils import data as rdata  # noqa: E402


# ---- helpers ---------------------------------------------------------------------------------

def plain(x):
    """A batch as comparable plain data: tensors as (dtype name, shape, values), containers
    with their type name kept (so a list and a tuple, or a dict and a namedtuple, differ)."""
    if isinstance(x, (tensorlib.Tensor, torch.Tensor)):
        return ("tensor", str(x.dtype).rsplit(".", 1)[-1], tuple(x.shape), x.tolist())
    if isinstance(x, dict):
        return (type(x).__name__, {k: plain(v) for k, v in x.items()})
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, tuple(plain(v) for v in x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [plain(v) for v in x])
    return x


def to_torch(x):
    """The same sample with tensorlib tensors as torch tensors."""
    if isinstance(x, tensorlib.Tensor):
        return torch.from_numpy(x.numpy().copy())
    if isinstance(x, dict):
        return type(x)((k, to_torch(v)) for k, v in x.items())
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(to_torch(v) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(to_torch(v) for v in x)
    return x


def same_error(fn_ours, fn_ref):
    with pytest.raises(Exception) as ref:
        fn_ref()
    with pytest.raises(type(ref.value)) as ours:
        fn_ours()
    assert str(ours.value) == str(ref.value)


Point = collections.namedtuple("Point", ["x", "y"])


# ---- collation --------------------------------------------------------------------------------

def _t(*vals, dtype=tensorlib.float32):
    return tensorlib.tensor(list(vals), dtype=dtype)


COLLATE_CASES = {
    "tensors": [_t(1, 2), _t(3, 4), _t(5, 6)],
    "int_tensors": [tensorlib.tensor([1, 2]), tensorlib.tensor([3, 4])],
    "scalar_tensors": [tensorlib.tensor(1.5), tensorlib.tensor(2.5)],
    "numpy_arrays": [np.array([1.0, 2.0], dtype=np.float32), np.array([3.0, 4.0],
                                                                       dtype=np.float32)],
    "numpy_int_arrays": [np.arange(6).reshape(2, 3), np.arange(6, 12).reshape(2, 3)],
    "numpy_scalars": [np.float32(1.5), np.float32(2.5)],
    "numpy_int_scalars": [np.int16(3), np.int16(4)],
    "numpy_bools": [np.bool_(True), np.bool_(False)],
    "floats": [0.5, 1.5, 2.5],
    "ints": [1, 2, 3],
    "bools": [True, False],
    "strings": ["a", "bc"],
    "bytes": [b"a", b"bc"],
    "dicts": [{"x": _t(1, 2), "y": 0, "name": "a"}, {"x": _t(3, 4), "y": 1, "name": "b"}],
    "dict_of_tensors": [{"image": tensorlib.ones(2, 2), "label": tensorlib.tensor(3)},
                        {"image": tensorlib.zeros(2, 2), "label": tensorlib.tensor(4)}],
    "ordered_dicts": [collections.OrderedDict(a=1, b=2.0), collections.OrderedDict(a=3, b=4.0)],
    "tuples": [(_t(1), 1, "a"), (_t(2), 2, "b")],
    "lists": [[1, 2.0], [3, 4.0]],
    "namedtuples": [Point(1, _t(1, 2)), Point(2, _t(3, 4))],
    "nested": [{"a": [(_t(1), {"b": 1.0})], "c": Point(np.array([1]), "s")},
               {"a": [(_t(2), {"b": 2.0})], "c": Point(np.array([2]), "t")}],
}


@pytest.mark.parametrize("case", sorted(COLLATE_CASES))
def test_default_collate_matches_torch(case):
    batch = COLLATE_CASES[case]
    ours = tdata.default_collate(batch)
    ref = rdata.default_collate(to_torch(batch))
    assert plain(ours) == plain(ref)


@pytest.mark.parametrize("case", sorted(COLLATE_CASES))
def test_default_convert_matches_torch(case):
    for sample in COLLATE_CASES[case]:
        assert plain(tdata.default_convert(sample)) == plain(rdata.default_convert(
            to_torch(sample)))


def test_collate_errors_match_torch():
    same_error(lambda: tdata.default_collate([tensorlib.ones(2), tensorlib.ones(3)]),
               lambda: rdata.default_collate([torch.ones(2), torch.ones(3)]))
    same_error(lambda: tdata.default_collate([[1, 2], [3]]),
               lambda: rdata.default_collate([[1, 2], [3]]))
    same_error(lambda: tdata.default_collate([object(), object()]) if False else
               tdata.default_collate([None, None]),
               lambda: rdata.default_collate([None, None]))
    strs = [np.array(["a"]), np.array(["b"])]
    same_error(lambda: tdata.default_collate(strs), lambda: rdata.default_collate(strs))


def test_collate_shapes_and_memory_role():
    batch = tdata.default_collate([tensorlib.ones(3, 4), tensorlib.zeros(3, 4)])
    assert batch.shape == (2, 3, 4)
    assert batch.untyped_storage().role_name == "input"
    # a string/object array is passed through by default_convert (as torch does)
    arr = np.array(["x", "y"])
    assert tdata.default_convert(arr) is arr


# ---- datasets ----------------------------------------------------------------------------------

class Squares(tdata.Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i * i


class Count(tdata.IterableDataset):
    def __init__(self, start, stop):
        self.start, self.stop = start, stop

    def __iter__(self):
        return iter(range(self.start, self.stop))

    def __len__(self):
        return self.stop - self.start


def test_tensor_dataset():
    x, y = tensorlib.arange(12.0).reshape(4, 3), tensorlib.arange(4)
    ds = tdata.TensorDataset(x, y)
    assert len(ds) == 4
    a, b = ds[2]
    assert a.tolist() == [6.0, 7.0, 8.0] and b.item() == 2
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        tdata.TensorDataset(x, tensorlib.arange(3))


def test_stack_dataset():
    ds = tdata.StackDataset([1, 2, 3], "abc")
    assert len(ds) == 3 and ds[1] == (2, "b")
    assert ds.__getitems__([0, 2]) == [(1, "a"), (3, "c")]
    kw = tdata.StackDataset(x=[1, 2], y=[3, 4])
    assert kw[0] == {"x": 1, "y": 3} and kw.__getitems__([1]) == [{"x": 2, "y": 4}]
    same_error(lambda: tdata.StackDataset([1], [1, 2]), lambda: rdata.StackDataset([1], [1, 2]))
    same_error(lambda: tdata.StackDataset(), lambda: rdata.StackDataset())
    same_error(lambda: tdata.StackDataset([1], y=[1]), lambda: rdata.StackDataset([1], y=[1]))


def test_concat_dataset_matches_torch():
    parts = [list(range(3)), list(range(10, 12)), list(range(20, 24))]
    ours, ref = tdata.ConcatDataset(parts), rdata.ConcatDataset(parts)
    assert len(ours) == len(ref) and ours.cumulative_sizes == ref.cumulative_sizes
    assert [ours[i] for i in range(-9, 9)] == [ref[i] for i in range(-9, 9)]
    same_error(lambda: ours[-10], lambda: ref[-10])
    assert len(Squares(2) + Squares(3)) == 5 and (Squares(2) + Squares(3))[3] == 1
    with pytest.raises(AssertionError, match="empty iterable"):
        tdata.ConcatDataset([])
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        tdata.ConcatDataset([Count(0, 2)])


def test_chain_dataset():
    chain = tdata.ChainDataset([Count(0, 2), Count(5, 7)])
    assert list(chain) == [0, 1, 5, 6] and len(chain) == 4
    assert list(Count(0, 2) + Count(3, 4)) == [0, 1, 3]
    with pytest.raises(AssertionError, match="only supports IterableDataset"):
        list(tdata.ChainDataset([Squares(2)]))


def test_subset():
    s = tdata.Subset(Squares(10), [9, 1, 4])
    assert len(s) == 3 and [s[i] for i in range(3)] == [81, 1, 16]
    assert s.__getitems__([2, 0]) == [16, 81]


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.5, 0.5], [0.34, 0.33, 0.33],
                                     [1.0], [0.1, 0.1, 0.8]])
def test_random_split_sizes_match_torch(lengths):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = tdata.random_split(range(10), lengths)
        ref = rdata.random_split(range(10), lengths)
    assert [len(s) for s in ours] == [len(s) for s in ref]
    assert sorted(i for s in ours for i in s) == list(range(10))


def test_random_split_reproducible_and_errors():
    a = tdata.random_split(range(20), [5, 15], generator=tensorlib.Generator().manual_seed(3))
    b = tdata.random_split(range(20), [5, 15], generator=tensorlib.Generator().manual_seed(3))
    assert [list(s) for s in a] == [list(s) for s in b]
    tensorlib.manual_seed(7)
    c = [list(s) for s in tdata.random_split(range(20), [0.5, 0.5])]
    tensorlib.manual_seed(7)
    assert c == [list(s) for s in tdata.random_split(range(20), [0.5, 0.5])]
    same_error(lambda: tdata.random_split(range(10), [3, 3]),
               lambda: rdata.random_split(range(10), [3, 3]))
    same_error(lambda: tdata.random_split(range(10), [1.5, -0.5]),
               lambda: rdata.random_split(range(10), [1.5, -0.5]))
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        tdata.random_split(range(2), [1.0, 0.0])


# ---- samplers -----------------------------------------------------------------------------------

def test_sequential_and_batch_samplers_match_torch():
    for n in (0, 1, 5, 8):
        assert list(tdata.SequentialSampler(range(n))) == list(rdata.SequentialSampler(range(n)))
        for bs in (1, 2, 3, 8, 9):
            for drop in (False, True):
                ours = tdata.BatchSampler(tdata.SequentialSampler(range(n)), bs, drop)
                ref = rdata.BatchSampler(rdata.SequentialSampler(range(n)), bs, drop)
                assert list(ours) == list(ref) and len(ours) == len(ref)
    for bad in (0, -1, True, 2.0):
        same_error(lambda: tdata.BatchSampler(range(3), bad, False),
                   lambda: rdata.BatchSampler(range(3), bad, False))
    same_error(lambda: tdata.BatchSampler(range(3), 2, 1),
               lambda: rdata.BatchSampler(range(3), 2, 1))


@pytest.mark.parametrize("n", [1, 5, 7, 10])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_unshuffled_matches_torch(n, replicas, drop_last):
    for rank in range(replicas):
        ours = tdata.DistributedSampler(range(n), replicas, rank, shuffle=False,
                                        drop_last=drop_last)
        ref = rdata.DistributedSampler(range(n), replicas, rank, shuffle=False,
                                       drop_last=drop_last)
        assert list(ours) == list(ref)
        assert len(ours) == len(ref) and ours.total_size == ref.total_size


def test_distributed_sampler_shuffled():
    n, replicas = 11, 3

    def shards(epoch, seed=0):
        out = []
        for rank in range(replicas):
            s = tdata.DistributedSampler(range(n), replicas, rank, seed=seed)
            s.set_epoch(epoch)
            out.append(list(s))
        return out

    e0 = shards(0)
    assert e0 == shards(0)                       # same seed and epoch: same shards
    assert e0 != shards(1) and e0 != shards(0, seed=5)
    assert set(i for s in e0 for i in s) == set(range(n))
    assert all(len(s) == 4 for s in e0)          # padded to 12 as torch pads
    # the shards interleave one permutation padded with its start (torch's layout)
    merged = [s[i] for i in range(4) for s in e0]
    assert sorted(merged[:n]) == list(range(n)) and merged[n:] == merged[:12 - n]
    same_error(lambda: tdata.DistributedSampler(range(3), 2, 2),
               lambda: rdata.DistributedSampler(range(3), 2, 2))
    with pytest.raises(RuntimeError, match="distributed"):
        tdata.DistributedSampler(range(3))


def test_random_sampler_reproducible_and_valid():
    tensorlib.manual_seed(0)
    a = list(tdata.RandomSampler(range(10)))
    tensorlib.manual_seed(0)
    assert a == list(tdata.RandomSampler(range(10)))
    assert sorted(a) == list(range(10))
    g = tensorlib.Generator().manual_seed(1)
    s = tdata.RandomSampler(range(4), num_samples=10, generator=g)
    out = list(s)
    assert len(out) == len(s) == 10
    assert sorted(out[:4]) == sorted(out[4:8]) == [0, 1, 2, 3]      # whole permutations
    r = list(tdata.RandomSampler(range(3), replacement=True, num_samples=70))
    assert len(r) == 70 and set(r) == {0, 1, 2}
    same_error(lambda: tdata.RandomSampler(range(3), replacement=1),
               lambda: rdata.RandomSampler(range(3), replacement=1))
    same_error(lambda: tdata.RandomSampler(range(3), num_samples=0),
               lambda: rdata.RandomSampler(range(3), num_samples=0))
    same_error(lambda: tdata.RandomSampler([]), lambda: rdata.RandomSampler([]))


def test_subset_random_sampler():
    tensorlib.manual_seed(4)
    a = list(tdata.SubsetRandomSampler([3, 5, 9, 11]))
    tensorlib.manual_seed(4)
    assert a == list(tdata.SubsetRandomSampler([3, 5, 9, 11])) and sorted(a) == [3, 5, 9, 11]


def test_weighted_random_sampler():
    g = tensorlib.Generator().manual_seed(0)
    w = [0.1, 0.0, 0.6, 0.3]
    draws = list(tdata.WeightedRandomSampler(w, 20000, generator=g))
    freq = np.bincount(draws, minlength=4) / len(draws)
    assert freq[1] == 0 and np.allclose(freq, w, atol=0.02)
    no_rep = list(tdata.WeightedRandomSampler(w, 3, replacement=False))
    assert sorted(no_rep) == [0, 2, 3]
    # without replacement the first draw follows the weights
    firsts = [list(tdata.WeightedRandomSampler(w, 1, replacement=False, generator=g))[0]
              for _ in range(3000)]
    assert np.allclose(np.bincount(firsts, minlength=4) / 3000, w, atol=0.04)
    for args in [([1.0, 2.0], 0), ([1.0, 2.0], 2, 1), ([[1.0], [2.0]], 2)]:
        same_error(lambda: tdata.WeightedRandomSampler(*args),
                   lambda: rdata.WeightedRandomSampler(*args))
    assert list(tdata.WeightedRandomSampler(w, 4, replacement=False))[-1] == 1  # as torch
    for bad, k, rep in [(w, 5, False), ([0.0, 0.0], 1, True), ([-1.0, 2.0], 1, True)]:
        same_error(lambda: list(tdata.WeightedRandomSampler(bad, k, replacement=rep)),
                   lambda: list(rdata.WeightedRandomSampler(bad, k, replacement=rep)))


# ---- DataLoader (no workers) ---------------------------------------------------------------

def test_dataloader_batches_match_torch():
    x = np.arange(40, dtype=np.float32).reshape(10, 4)
    y = np.arange(10)
    ours_ds = tdata.TensorDataset(tensorlib.tensor(x), tensorlib.tensor(y))
    ref_ds = rdata.TensorDataset(torch.tensor(x), torch.tensor(y))
    for kw in [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None),
               dict(batch_size=10), dict(batch_size=4, sampler=[9, 0, 3, 3, 1])]:
        ours, ref = tdata.DataLoader(ours_ds, **kw), rdata.DataLoader(ref_ds, **kw)
        assert [plain(b) for b in ours] == [plain(b) for b in ref]
        assert len(ours) == len(ref)
    bs = [[1, 2], [0], [9, 8, 7]]
    assert ([plain(b) for b in tdata.DataLoader(ours_ds, batch_sampler=bs)]
            == [plain(b) for b in rdata.DataLoader(ref_ds, batch_sampler=bs)])


def test_dataloader_iterable_dataset_matches_torch():
    class TCount(rdata.IterableDataset):
        def __iter__(self):
            return iter(range(7))

        def __len__(self):
            return 7

    for kw in [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None)]:
        ours, ref = tdata.DataLoader(Count(0, 7), **kw), rdata.DataLoader(TCount(), **kw)
        assert [plain(b) for b in ours] == [plain(b) for b in ref]
        assert len(ours) == len(ref)


def test_dataloader_collate_fn_and_getitems():
    class Batched(tdata.Dataset):
        def __len__(self):
            return 5

        def __getitems__(self, idx):
            return [i * 10 for i in idx]

    dl = tdata.DataLoader(Batched(), batch_size=2, collate_fn=lambda b: b)
    assert list(dl) == [[0, 10], [20, 30], [40]]


def test_dataloader_shuffle_reproducible():
    ds = Squares(12)
    tensorlib.manual_seed(3)
    a = [b.tolist() for b in tdata.DataLoader(ds, batch_size=5, shuffle=True)]
    tensorlib.manual_seed(3)
    b = [b.tolist() for b in tdata.DataLoader(ds, batch_size=5, shuffle=True)]
    assert a == b and sorted(sum(a, [])) == [i * i for i in range(12)]
    g1 = tensorlib.Generator().manual_seed(9)
    g2 = tensorlib.Generator().manual_seed(9)
    c = [b.tolist() for b in tdata.DataLoader(ds, batch_size=5, shuffle=True, generator=g1)]
    d = [b.tolist() for b in tdata.DataLoader(ds, batch_size=5, shuffle=True, generator=g2)]
    assert c == d
    # epochs differ
    dl = tdata.DataLoader(ds, batch_size=12, shuffle=True)
    assert next(iter(dl)).tolist() != next(iter(dl)).tolist()


BAD_ARGS = [
    dict(num_workers=-1),
    dict(timeout=-1),
    dict(prefetch_factor=2),
    dict(num_workers=1, prefetch_factor=-1),
    dict(persistent_workers=True),
    dict(sampler=[0, 1], shuffle=True),
    dict(batch_sampler=[[0]], batch_size=2),
    dict(batch_sampler=[[0]], shuffle=True),
    dict(batch_sampler=[[0]], drop_last=True),
    dict(batch_sampler=[[0]], sampler=[0]),
    dict(batch_size=None, drop_last=True),
    dict(multiprocessing_context="fork"),
    dict(num_workers=1, multiprocessing_context="nonsense"),
    dict(num_workers=1, multiprocessing_context=3),
]


@pytest.mark.parametrize("kw", BAD_ARGS, ids=[str(sorted(k)) for k in BAD_ARGS])
def test_dataloader_argument_errors_match_torch(kw):
    same_error(lambda: tdata.DataLoader(list(range(4)), **kw),
               lambda: rdata.DataLoader(list(range(4)), **kw))


@pytest.mark.parametrize("kw", [dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])])
def test_dataloader_iterable_argument_errors_match_torch(kw):
    class TCount(rdata.IterableDataset):
        def __iter__(self):
            return iter(range(3))

        def __repr__(self):
            return "C"

    class C(Count):
        def __repr__(self):
            return "C"

    same_error(lambda: tdata.DataLoader(C(0, 3), **kw), lambda: rdata.DataLoader(TCount(), **kw))


def test_dataloader_frozen_attributes_and_misc():
    dl = tdata.DataLoader(list(range(4)), batch_size=2)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after "
                                         "DataLoader is initialized"):
        dl.batch_size = 3
    # with a CUDA runtime (the suite's emulator) batches are pinned; without one a warning
    # (tests/test_cuda_device.py::test_pinned_host_memory checks that case)
    pinned = list(tdata.DataLoader(list(range(4)), batch_size=2, pin_memory=True))
    assert [b.tolist() for b in pinned] == [[0, 1], [2, 3]]
    assert all(b.is_pinned() for b in pinned) == tensorlib.cuda.is_available()
    with pytest.raises(AssertionError):
        iter(tdata.DataLoader(list(range(4)), timeout=1))
    assert tdata.get_worker_info() is None
    info = tdata.WorkerInfo(id=1, num_workers=2, seed=5, dataset=None)
    with pytest.raises(RuntimeError, match="Cannot assign attributes to WorkerInfo objects"):
        info.id = 3


def test_docstring_examples():
    import doctest
    from tensorlib.utils.data import (
        _worker, collate, dataloader, dataset, distributed, sampler)
    import tensorlib.utils.data as package
    import tensorlib._tensor as tensor_module
    for module in (package, _worker, collate, dataloader, dataset, distributed, sampler):
        result = doctest.testmod(module, extraglobs={"tensorlib": tensorlib, "numpy": np},
                                 optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, module.__name__
        assert result.attempted > 0, module.__name__
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for name in ("share_memory_", "is_shared"):
        for test in finder.find(getattr(tensor_module.Tensor, name), name,
                                globs={"tensorlib": tensorlib}):
            assert runner.run(test).failed == 0
    from tensorlib._core import allocator, tensor as core_tensor
    for module, fn in ((allocator, allocator._adopt_memory),
                       (core_tensor, core_tensor._tensor_on_storage)):
        globs = dict(vars(module), tensorlib=tensorlib)
        tests = finder.find(fn, fn.__name__, globs=globs)
        assert tests and all(runner.run(t).failed == 0 for t in tests)


from hypothesis import given, settings, strategies as st  # noqa: E402

_DTYPES = ["float32", "float64", "int64", "int32", "uint8", "bool", "float16"]


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(0, 3), max_size=3), n=st.integers(1, 4),
       dtype=st.sampled_from(_DTYPES), as_numpy=st.booleans(), seed=st.integers(0, 2**16))
def test_collate_random_batches_match_torch(shape, n, dtype, as_numpy, seed):
    rng = np.random.default_rng(seed)
    arrays = [(rng.standard_normal(shape) * 5).astype(dtype) for _ in range(n)]
    ours_in = arrays if as_numpy else [tensorlib.tensor(a) for a in arrays]
    ref_in = arrays if as_numpy else [torch.tensor(a) for a in arrays]
    batch = [{"v": x, "t": (x, i)} for i, x in enumerate(ours_in)]
    ref_batch = [{"v": x, "t": (x, i)} for i, x in enumerate(ref_in)]
    assert plain(tdata.default_collate(batch)) == plain(rdata.default_collate(ref_batch))


def test_worker_number_warning_matches_torch():
    n = len(__import__("os").sched_getaffinity(0)) + 1
    with pytest.warns(UserWarning) as ours:
        tdata.DataLoader(list(range(4)), num_workers=n)
    with pytest.warns(UserWarning) as ref:
        rdata.DataLoader(list(range(4)), num_workers=n)
    assert str(ours[0].message) == str(ref[0].message)
