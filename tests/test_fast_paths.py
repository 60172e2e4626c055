"""The per-call fast paths behind bench/bench_core.py keep PyTorch's behaviour.

Basic indexing builds one view in a single pass over the index (no intermediate tensors),
tensor objects are created through the type's tp_new slot, and the CPU allocator aligns
blocks by hand. These tests pin what those paths must still do: geometry, values and
sharing (NumPy as the value reference, torch for parity where installed), PyTorch's errors,
alignment and exact counters.
"""
import contextlib
import gc
import io
import os
import sys

import numpy as np
import pytest

import tensorlib

MAX_DIMS = 64

# basic indices on a (3, 4, 5) tensor, with the shape/strides/offset they must give
INDICES = [
    (), Ellipsis, 0, -1, 2, slice(None), slice(1, 3), slice(None, None, 2), slice(-2, None),
    (0, 1), (0, 1, 2), (-1, -1, -1), (Ellipsis, 1), (1, Ellipsis), (None, 0), (0, None, 1),
    (Ellipsis, None), (slice(1, 3), None, 2), (None, None, Ellipsis, None),
    (slice(None), 1), (1, slice(0, 0)), (None, Ellipsis, -1, None),
    (1, None, Ellipsis, 2, slice(1, 10, 3)), (slice(None), slice(None), slice(None)),
]


@pytest.fixture
def x():
    return tensorlib.arange(60, dtype=tensorlib.float64).view(3, 4, 5)


@pytest.mark.parametrize("ix", INDICES, ids=repr)
def test_basic_index_matches_numpy(x, ix):
    a = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    ref = a[ix]
    got = x[ix]
    assert tuple(got.shape) == ref.shape
    # strides of size-1 dims are arbitrary (NumPy gives 0 to a new axis; PyTorch does not)
    assert [s for s, n in zip(got.stride(), got.shape) if n > 1] == \
        [s // 8 for s, n in zip(ref.strides, ref.shape) if n > 1]
    assert np.array_equal(got.numpy(), ref)
    # a view of x's storage: same root base, same version counter
    assert got._base is x._base
    assert got.untyped_storage() is x.untyped_storage()


@pytest.mark.parametrize("ix", INDICES, ids=repr)
def test_basic_index_matches_torch(torch, ix):
    t = torch.arange(60.).reshape(3, 4, 5)
    ours = tensorlib.arange(60.).view(3, 4, 5)[ix]
    ref = t[ix]
    assert tuple(ours.shape) == tuple(ref.shape)
    assert ours.stride() == ref.stride()
    assert ours.storage_offset() == ref.storage_offset()


def test_index_with_0d_and_numpy_ints(x):
    assert x[tensorlib.tensor(1), np.int64(2)].tolist() == [30.0, 31.0, 32.0, 33.0, 34.0]
    assert x[np.int32(-1), 0, tensorlib.tensor(4)].item() == 44.0


@pytest.mark.parametrize("ix", [(), Ellipsis, (Ellipsis,)], ids=repr)
def test_full_index_is_a_new_view(x, ix):
    # PyTorch: x[()] and x[...] are views, not x itself (so in-place metadata changes on
    # them do not reach x)
    v = x[ix]
    assert v is not x
    assert v._base is x._base and v.shape == x.shape and v.stride() == x.stride()
    v.t_() if v.dim() == 2 else v.squeeze_()
    assert x.shape == (3, 4, 5)


def test_full_index_is_a_new_view_torch(torch):
    t = torch.zeros(2, 2)
    assert t[()] is not t and t[...] is not t       # what we match


@pytest.mark.parametrize("ix,dim,size", [
    ((3,), 0, 3), ((0, 5), 1, 4), ((None, 0, 5), 2, 4), ((slice(None), -5), 1, 4),
    ((Ellipsis, 7), 1, 5), ((0, 0, 9), 2, 5), ((None, None, 0, 9), 3, 4), ((1, Ellipsis, 9), 2, 5),
], ids=repr)
def test_out_of_bounds_names_the_index_position(x, ix, dim, size):
    # PyTorch names the position of the entry in the index tuple
    bad = [v for v in ix if isinstance(v, int) and not isinstance(v, bool)][-1]
    with pytest.raises(IndexError, match=rf"index {bad} is out of bounds for dimension {dim} "
                                         rf"with size {size}"):
        x[ix]


def test_out_of_bounds_message_matches_torch(torch):
    t = torch.arange(60.).reshape(3, 4, 5)
    ours = tensorlib.arange(60.).view(3, 4, 5)
    for ix in [(0, 5), (None, 0, 5), (Ellipsis, 7), (None, None, 0, 9), (slice(None), -5)]:
        with pytest.raises(IndexError) as ref:
            t[ix]
        with pytest.raises(IndexError) as got:
            ours[ix]
        assert str(got.value) == str(ref.value)


def test_index_errors(x):
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 3"):
        x[0, 0, 0, 0]
    with pytest.raises(ValueError, match="step must be greater than zero"):
        x[:, ::-1]
    with pytest.raises(IndexError, match="valid indices"):
        x[1.5]
    with pytest.raises(TypeError):
        x[:, 0.5:2]


def test_index_up_to_max_dims_then_clean_error():
    t = tensorlib.zeros([1] * (MAX_DIMS - 1))
    assert t[None].dim() == MAX_DIMS
    big = tensorlib.zeros([1] * MAX_DIMS)
    for f in (lambda: big[None], lambda: big[..., None], lambda: big.unsqueeze(0),
              lambda: big[0, None, None]):
        with pytest.raises(RuntimeError, match=f"more than {MAX_DIMS} dimensions"):
            f()


def test_setitem_through_single_view(x):
    v0 = x._version
    x[0, 1] = 1.5
    x[(2, Ellipsis, 4)] = -2
    x[()] = x.clone()
    assert x[0, 1, 0].item() == 1.5 and x[2, 3, 4].item() == -2.0
    assert x._version == v0 + 3
    a = np.arange(60.).reshape(3, 4, 5)
    a[0, 1] = 1.5
    a[2, ..., 4] = -2
    assert np.array_equal(x.numpy(), a)


def test_slice_fast_path(x):
    v = x[1:3]
    assert v.shape == (2, 4, 5) and v.storage_offset() == 20
    assert x[1:3:2].stride() == (40, 5, 1)
    assert x[tensorlib.tensor(1):np.int64(2)].shape == (1, 4, 5)
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        x[::0]


def test_tensor_objects_are_the_public_class(x):
    for t in (x[0], x[0, 1], x[1:], x[0].t(), x.view(60), tensorlib.empty(2), x.clone()):
        assert type(t) is tensorlib.Tensor


@pytest.mark.parametrize("n", [0, 1, 3, 100, 128, 1000, 4096, 100_000])
def test_allocator_alignment_and_exact_counters(n):
    gc.disable()            # memory falls by reference counting alone
    try:
        _check_alignment_and_counters(n)
    finally:
        gc.enable()


def _check_alignment_and_counters(n):
    before = tensorlib.memory.memory_allocated()
    ts = [tensorlib.empty(n, dtype=tensorlib.uint8) for _ in range(5)]
    for t in ts:
        assert t.data_ptr() % 64 == 0 or n == 0
        t.fill_(7)                      # the whole block is writable
    rounded = max(512, (n + 511) // 512 * 512) if n > 0 else 0
    assert tensorlib.memory.memory_allocated() - before == 5 * rounded
    del ts, t
    assert tensorlib.memory.memory_allocated() == before


def test_demo_runs_quickly(tmp_path):
    from tensorlib import demo
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = demo.run(str(tmp_path))
    text = out.getvalue()
    assert "memory plan:" in text and "bit-identical to the unplanned loop: True" in text
    assert result["same"] and result["requests"][1] == 1
    assert result["leaks"].leaks()[0].growing
    for path in result["files"]:
        assert os.path.getsize(path) > 1000


def test_bench_smoke():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.join(here, "bench"))
    try:
        import bench_core
    finally:
        sys.path.pop(0)
    rows = bench_core.run(number=20, rounds=1)
    assert [r[0] for r in rows] == [c[0] for c in bench_core.CASES]
    assert all(r[2] > 0 and r[4] > 0 for r in rows)
