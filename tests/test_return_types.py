"""The tuple types of multi-output ops (``tensorlib.return_types``) against PyTorch's
``torch.return_types``: type names and module, printing, fields, indexing, unpacking,
construction and its errors, pickling; and the ops that return plain tuples in PyTorch."""
import pickle

import numpy as np
import pytest

import tensorlib

DATA = [[3., 1., 4., 1.], [5., 9., 2., 6.]]

# (name, call) for every multi-output op; the same call is made on tensorlib and torch
MULTI = [
    ("max", lambda m, x: m.max(x, 1)),
    ("min", lambda m, x: x.min(dim=0, keepdim=True)),
    ("sort", lambda m, x: m.sort(x, dim=1, descending=True, stable=True)),
    ("topk", lambda m, x: x.topk(2, 1)),
    ("kthvalue", lambda m, x: m.kthvalue(x, 2, 1)),
    ("median", lambda m, x: x.median(1)),
    ("nanmedian", lambda m, x: m.nanmedian(x, 0)),
    ("mode", lambda m, x: x.mode(1)),
]
NAMES = [n for n, _ in MULTI]


def _as_tl(text):
    return text.replace("torch.", "tensorlib.")


@pytest.mark.parametrize("name, call", MULTI, ids=NAMES)
def test_matches_torch(torch, name, call):
    r = call(tensorlib, tensorlib.tensor(DATA))
    t = call(torch, torch.tensor(DATA))
    assert type(r) is getattr(tensorlib.return_types, name)
    assert type(r).__name__ == type(t).__name__ == name
    assert type(r).__module__ == "tensorlib.return_types"
    assert repr(r) == str(r) == _as_tl(repr(t))
    assert repr(type(r)) == _as_tl(repr(type(t)))
    assert isinstance(r, tuple) and len(r) == len(t) == 2
    assert (r.n_fields, r.n_sequence_fields, r.n_unnamed_fields) == \
        (t.n_fields, t.n_sequence_fields, t.n_unnamed_fields)
    values, indices = r
    assert values is r.values is r[0] and indices is r.indices is r[-1]
    assert values.tolist() == t.values.tolist()
    if name in ("max", "min", "sort"):      # the others leave tie-breaking to the algorithm
        assert indices.tolist() == t.indices.tolist()


@pytest.mark.parametrize("name", NAMES)
def test_pickle(name):
    call = dict(MULTI)[name]
    r = call(tensorlib, tensorlib.tensor(DATA))
    r2 = pickle.loads(pickle.dumps(r))
    assert type(r2) is type(r)
    assert r2.values.tolist() == r.values.tolist() and r2.indices.tolist() == r.indices.tolist()
    assert r.__reduce__()[0] is type(r)


def test_construction_like_torch(torch):
    for m in (tensorlib, torch):
        T = m.return_types.max
        r = T([1, 2])
        assert r == (1, 2) and hash(r) == hash((1, 2)) and (r.values, r.indices) == (1, 2)
        assert r.__reduce__() == (T, ((1, 2), {}))
        assert T(*r.__reduce__()[1]) == r
    for args in [(1, 2), ((1,),), ((1, 2, 3),), (5,)]:
        with pytest.raises(TypeError) as theirs:
            torch.return_types.max(*args)
        with pytest.raises(TypeError) as ours:
            tensorlib.return_types.max(*args)
        assert str(ours.value) == _as_tl(str(theirs.value))


def test_behaves_as_a_tuple(torch):
    r = tensorlib.return_types.sort((tensorlib.tensor([1.]), tensorlib.tensor([0])))
    t = torch.return_types.sort((torch.tensor([1.]), torch.tensor([0])))
    # slicing and concatenation give plain tuples, as in PyTorch
    assert type(r[:1]) is type(t[:1]) is tuple
    assert type(r + (1,)) is type(t + (1,)) is tuple
    assert r.count(r[0]) == 1 and r.index(r[1]) == 1
    with pytest.raises(AttributeError):
        r.values = None
    with pytest.raises(AttributeError):
        t.values = None
    with pytest.raises(AttributeError):
        r.other = 1                         # no instance dict
    assert tensorlib.return_types.sort._fields == ("values", "indices")


def test_out_gives_the_named_tuple():
    x = tensorlib.tensor(DATA)
    v, i = tensorlib.empty(0), tensorlib.empty(0, dtype=tensorlib.int64)
    r = tensorlib.sort(x, 1, out=(v, i))
    assert type(r) is tensorlib.return_types.sort and r.values is v and r.indices is i
    v2, i2 = tensorlib.empty(0), tensorlib.empty(0, dtype=tensorlib.int64)
    r2 = tensorlib.max(x, 0, out=(v2, i2))
    assert type(r2) is tensorlib.return_types.max and r2.values is v2
    assert v2.tolist() == np.max(DATA, 0).tolist()


def test_plain_tuples_where_torch_gives_them(torch):
    x = tensorlib.tensor(DATA)
    tx = torch.tensor(DATA)
    for name in ("var_mean", "std_mean"):
        r, t = getattr(tensorlib, name)(x, 1), getattr(torch, name)(tx, 1)
        assert type(r) is type(t) is tuple
    r = tensorlib.unique(x, return_inverse=True)
    assert type(r) is type(torch.unique(tx, return_inverse=True)) is tuple
    assert type(x.split(1)) is type(tx.split(1)) is tuple


def test_every_type_is_exported():
    assert sorted(tensorlib.return_types.__all__) == sorted(NAMES)
    for name in NAMES:
        assert getattr(tensorlib.return_types, name).__qualname__ == name
