"""The memory profiler: every allocation made on this thread while a profile is active and its
free on any thread, with its bytes, device, op, role (following role changes) and the user's source line;
peak, bytes by role, top sites, leaks, the Chrome trace and the timeline picture."""
import json
import threading
import xml.etree.ElementTree as ET

import pytest

import tensorlib as torch
from tensorlib import memory
from tensorlib._core import tensor as _C
from tensorlib._core.allocator import _memory_hooks, ROLE_NAMES

HERE = __file__.rsplit("/", 1)[-1]


def line_of(marker):
    """The line number of the (unique) source line of this file that carries ``marker``."""
    with open(__file__) as f:
        hits = [i + 1 for i, text in enumerate(f) if marker in text and "site(" not in text]
    assert len(hits) == 1, (marker, hits)
    return hits[0]


def site(marker):
    return f"{HERE}:{line_of(marker)}"


# ---- what is recorded ----------------------------------------------------------------------

def test_records_allocations_and_frees_with_bytes_op_site_and_time():
    x = torch.ones(1024)
    with memory.profile() as prof:
        a = x * 2                                    # @mul
        b = a.exp()                                  # @exp
        del a
    ev = prof.events
    assert [(e.kind, e.bytes, e.op) for e in ev] == [
        ("alloc", 4096, "mul"), ("alloc", 4096, "exp"), ("free", 4096, "mul")]
    assert ev[0].site.endswith(site("# @mul")) and ev[1].site.endswith(site("# @exp"))
    assert ev[2].site == ev[0].site and ev[2].alloc_id == ev[0].alloc_id
    assert all(e.device == "cpu" and not e.planned and not e.backward for e in ev)
    assert 0 <= ev[0].time <= ev[1].time <= ev[2].time
    assert prof.peak_bytes == 8192 and prof.current_bytes == 4096
    assert b.untyped_storage().op == "exp"         # the storage knows it too
    assert not _memory_hooks() and _C._profiling_depth() == 0


def test_every_op_is_named_differentiable_or_not():
    """Ops without a backward (factories, comparisons) and the @ operator name their
    allocations too."""
    w = torch.ones(16, 16)
    with memory.profile() as prof:
        a = torch.zeros(256)
        m = a > 0
        y = a.view(16, 16) @ w
        z = torch.matmul(y, w)
    assert [e.op for e in prof.events if e.kind == "alloc"] == ["zeros", "gt", "matmul", "matmul"]


def _profiled(fn):
    with memory.profile() as prof:
        r = fn()
    return r, [e.op for e in prof.events if e.kind == "alloc"]


@pytest.mark.parametrize("slot", sorted(_C._OPERATOR_SLOTS))
def test_operator_slots_record_and_name_their_declared_op(slot):
    """Each operator (``x // y``, ``2 - x``, ``~x``, ``x @ y`` ...) runs its declared op: the
    profiler names its allocations as for the named function, and its grad_fn has the same
    type (on float64 inputs that require grad; int64 for the bitwise ops)."""
    op, order, inplace = _C._OPERATOR_SLOTS[slot]
    dtype = torch.int64 if op.startswith("bitwise") else torch.float64
    leaf = torch.arange(1, 17, dtype=dtype).view(4, 4)
    leaf.requires_grad_(dtype == torch.float64)
    y = torch.full((4, 4), 3, dtype=dtype)
    fn = getattr(torch, op)
    if order == "self":
        got, got_ops = _profiled(lambda: getattr(leaf, slot)())
        want, want_ops = _profiled(lambda: fn(leaf))
    elif inplace:                                   # x op= y, on a non-leaf
        x1, x2 = leaf * 1, leaf * 1
        got, got_ops = _profiled(lambda: getattr(x1, slot)(y))
        want, want_ops = _profiled(lambda: getattr(x2, op + "_")(y))
    elif not slot.startswith("__r") or slot == "__rshift__":
        got, got_ops = _profiled(lambda: getattr(leaf, slot)(y))
        want, want_ops = _profiled(lambda: fn(leaf, y))
    else:                                           # reflected: `number op x` (y @ x)
        other = y if op == "matmul" else 2
        got, got_ops = _profiled(lambda: getattr(leaf, slot)(other))
        a, b = (leaf, other) if order == "self, other" else (other, leaf)
        try:
            want, want_ops = _profiled(lambda: fn(a, b))
        except TypeError:                           # the function takes no number there
            a = torch.tensor(2, dtype=dtype) if a is other else a
            want, want_ops = _profiled(lambda: fn(a, b))
    # (an in-place op allocates nothing here, so it has no event to name; a recording matmul
    # names the mm it runs, as torch.matmul does)
    assert got_ops == want_ops and (inplace or got_ops), (slot, got_ops, want_ops)
    assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__, slot
    assert torch.equal(got.detach(), want.detach()), slot


_NUMBER_SLOTS = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
                 "xor", "lshift", "rshift"]


def test_every_operator_slot_is_declared():
    """Tensor's arithmetic, bitwise and comparison operators and their reflected and in-place
    forms all run a declared op, except ``+x`` (self), ``2 / x`` (reciprocal then mul, as
    PyTorch) and ``@=`` (which PyTorch does not have either)."""
    want = {f"__{p}{n}__" for n in _NUMBER_SLOTS for p in ("", "r", "i")}
    want |= {f"__{n}__" for n in ("eq", "ne", "lt", "le", "gt", "ge", "neg", "abs", "invert")}
    want -= {"__rtruediv__", "__imatmul__"}
    assert sorted(want - set(_C._OPERATOR_SLOTS)) == []
    assert all(hasattr(torch.Tensor, slot) for slot in _C._OPERATOR_SLOTS)


def test_peak_matches_the_allocator_counters():
    xs = [torch.randn(512) for _ in range(3)]      # 2048 bytes each: no rounding
    memory.reset_peak_memory_stats()
    base = memory.memory_allocated()
    with memory.profile() as prof:
        for x in xs:
            y = (x * 2).exp() + x
            z = y * y
            del y
        del z
    assert prof.peak_bytes == memory.max_memory_allocated() - base
    assert prof.current_bytes == 0 and prof.baseline_bytes == base


def test_frees_of_older_tensors_and_other_threads_are_not_recorded():
    old = torch.ones(100)
    other = []
    with memory.profile() as prof:
        del old                                      # allocated before the profile
        t = threading.Thread(target=lambda: other.append(torch.ones(1000) * 3))
        t.start()
        t.join()
        mine = torch.zeros(10)
    assert [(e.kind, e.bytes) for e in prof.events] == [("alloc", 40)]
    assert len(other) == 1


def test_a_tensor_freed_on_another_thread_is_seen_freed():
    # allocated inside the profile, handed to another thread that drops it: its free is
    # recorded (with its time) when this thread next allocates, and it is no leak
    box, x = [], torch.ones(2000)
    with memory.profile() as prof:
        box.append(x * 2)                            # @handed
        t = threading.Thread(target=box.clear)
        t.start()
        t.join()
        after = torch.zeros(10)                      # the free is drained before this one
    kinds = [(e.kind, e.bytes) for e in prof.events]
    assert kinds == [("alloc", 8000), ("free", 8000), ("alloc", 40)]
    free = prof.events[1]
    assert free.op == "mul" and free.site.endswith(site("@handed"))
    assert prof.events[0].time <= free.time <= prof.events[2].time
    assert prof.current_bytes == 40 and prof.peak_bytes == 8000
    assert [g.bytes for g in prof.leaks()] == [40]   # only `after` is still alive
    del after


def test_a_free_on_another_thread_at_the_end_is_drained_on_exit():
    box, x = [], torch.ones(500)
    with memory.profile() as prof:
        box.append(x + 1)
        t = threading.Thread(target=box.clear)
        t.start()
        t.join()
    assert [e.kind for e in prof.events] == ["alloc", "free"]
    assert prof.current_bytes == 0 and not prof.leaks()


def test_tensors_alive_when_the_profile_ends_are_not_tracked_after_it():
    x = torch.ones(300)
    with memory.profile() as prof:
        y = x * 3
    del y                                   # freed after the profile ended
    assert [e.kind for e in prof.events] == ["alloc"] and not prof._gone


def test_roles_activation_saved_gradient_and_the_change_event():
    w = torch.randn(256).requires_grad_()
    x = torch.randn(256)
    with memory.profile() as prof:
        a = x * 2                                    # @act: an activation...
        b = a * w                                    # ...saved by this mul (it needs a)
        y = b.exp()                                  # exp saves its output
        y.backward(torch.ones_like(y))
    roles = {e.alloc_id: [] for e in prof.events}
    for e in prof.events:
        roles[e.alloc_id].append((e.kind, e.role))
    a_id = a.untyped_storage().alloc_id
    assert roles[a_id] == [("alloc", "activation"), ("role", "saved-for-backward")]
    assert w.grad.untyped_storage().role_name == "gradient"
    grad_ev = [e for e in prof.events if e.alloc_id == w.grad.untyped_storage().alloc_id]
    assert grad_ev and grad_ev[-1].role == "gradient"
    assert prof.by_role("end")["gradient"] >= 1024


def test_backward_allocations_carry_the_forward_line():
    w = torch.randn(300).requires_grad_()
    with memory.profile() as prof:
        y = (w * 3).sin()                            # @fwd
        y.backward(torch.ones_like(y))               # @bwd
    back = [e for e in prof.events if e.kind == "alloc" and e.backward]
    assert back, "backward allocated nothing?"
    fwd = site("# @fwd")
    assert any(e.site.endswith(fwd) for e in back)
    assert all(e.site.endswith(fwd) or e.site.endswith(site("# @bwd")) for e in back)
    # scratch made and dropped inside one backward node is a temporary, not a gradient
    assert {e.role for e in back} <= {"gradient", "temporary"}


def test_sites_skip_tensorlib_frames_and_use_the_callers_line():
    def helper(t):
        return t * 5                                 # @helper

    with memory.profile() as prof:
        helper(torch.ones(8))
    alloc = [e for e in prof.events if e.kind == "alloc"]
    assert alloc[1].site.endswith(site("# @helper"))
    # a planned call's frames are tensorlib's: its allocations point into the user's function
    f = memory.plan(lambda t: (t + 1) * 2)           # @lambda
    with memory.profile() as prof:
        f(torch.ones(8))
    assert all(e.site.endswith(site("# @lambda")) for e in prof.events if e.kind == "alloc"
               and e.op in ("add", "mul"))


# ---- analysis --------------------------------------------------------------------------------

def test_by_role_top_sites_and_steps():
    w = torch.randn(1024).requires_grad_()
    with memory.profile() as prof:
        big = torch.randn(4096)                      # @big
        h = (big[:1024] * w).tanh()                  # @tanh
        prof.step()
        small = torch.randn(16) * 2                  # @small
        prof.step()
    peak = prof.by_role("peak")
    assert sum(peak.values()) == prof.peak_bytes
    assert set(peak) <= set(ROLE_NAMES)
    assert peak["saved-for-backward"] >= 4096        # tanh's output, saved
    top = prof.top_sites(2)
    assert top[0].site.endswith(site("# @big")) and top[0].bytes == 16384 and top[0].count == 1
    assert prof.num_steps == 2
    # at the first mark: big (a view of it was saved by the mul) and tanh's saved output
    assert prof.by_role(0) == {"saved-for-backward": 16384 + 4096}
    assert prof.by_role(1) == {"saved-for-backward": 16384 + 4096, "activation": 64}
    # at the peak, the product and tanh's output were both alive, not yet saved
    assert prof.by_role("peak") == {"saved-for-backward": 16384, "activation": 8192}
    with pytest.raises(IndexError):
        prof.by_role(5)
    with pytest.raises(ValueError):
        prof.by_role("middle")


def test_a_leaking_loop_is_found_and_attributed_to_the_users_line():
    w = torch.randn(512).requires_grad_()
    losses = []
    with memory.profile() as prof:
        for i in range(6):
            x = torch.randn(512)                     # @input: saved by the mul below
            h = (x * w).tanh()                       # @leak: tanh saves its output
            loss = h * h                             # @loss: kept by the list
            losses.append(loss)                      # keeps every graph (and what it saved)
            prof.step()
    leaks = prof.leaks()
    growing = {s.site.rsplit("/", 1)[-1]: s for s in leaks if s.growing}
    assert set(growing) == {site("# @input"), site("# @leak"), site("# @loss")}
    for s in growing.values():
        assert s.count == 6 and s.bytes == 6 * 2048 and s.growth_per_step == 2048
    assert growing[site("# @leak")].role == "saved-for-backward"
    assert growing[site("# @input")].role == "saved-for-backward"
    assert growing[site("# @loss")].role == "activation"
    assert all(s.growing for s in leaks[:3])         # growing sites come first
    text = prof.summary()
    assert site("# @leak") in text and "growing" in text
    losses.clear()


def test_no_leak_when_the_loop_frees_what_it_makes():
    w = torch.randn(512).requires_grad_()
    with memory.profile() as prof:
        for i in range(5):
            x = torch.randn(512)
            loss = ((x * w).tanh() * 2).exp()
            loss.backward(torch.ones_like(loss))
            del x, loss
            prof.step()
        w.grad = None
    assert prof.leaks() == []
    assert prof.current_bytes == 0


def test_summary_mentions_peak_roles_and_sites():
    with memory.profile() as prof:
        a = torch.randn(10000)                       # @summary
        b = a * 2
    text = prof.summary()
    assert "peak" in text and "activation" in text and site("# @summary") in text
    assert "2 allocations" in text
    assert repr(prof).startswith("<memory profile")


# ---- output files ----------------------------------------------------------------------------

def test_chrome_trace(tmp_path):
    w = torch.randn(100).requires_grad_()
    with memory.profile() as prof:
        y = (w * 2).exp()
        prof.step()
        y.backward(torch.ones_like(y))
        del y
    path = prof.export_chrome_trace(tmp_path / "trace.json")
    data = json.loads(open(path).read())
    ev = data["traceEvents"]
    counters = {e["name"] for e in ev if e["ph"] == "C"}
    assert {"activation bytes", "saved-for-backward bytes", "gradient bytes"} <= counters
    instants = [e for e in ev if e["ph"] == "i" and e.get("cat") == "memory"]
    assert len(instants) == len(prof.events)
    assert all({"bytes", "op", "role", "site"} <= set(e["args"]) for e in instants)
    assert any(e["name"] == "step 0" for e in ev)
    ts = [e["ts"] for e in ev if "ts" in e]
    assert min(ts) >= 0


def test_timeline_svg(tmp_path):
    w = torch.randn(2000).requires_grad_()
    with memory.profile() as prof:
        for _ in range(3):
            y = ((w * 2).tanh() * 3).exp()
            y.backward(torch.ones_like(y))
            del y
            prof.step()
    path = prof.save_timeline(tmp_path / "t.svg")
    root = ET.parse(path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == ns + "svg"
    polys = root.findall(f".//{ns}polygon")
    names = {p.find(f"{ns}title").text for p in polys}
    assert {"activation", "saved-for-backward", "gradient"} <= names
    texts = " ".join(t.text or "" for t in root.iter(f"{ns}text"))
    assert "peak" in texts and "time (ms)" in texts


def test_timeline_png_needs_matplotlib(tmp_path):
    with memory.profile() as prof:
        torch.ones(10) * 2
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match="matplotlib"):
            prof.save_timeline(tmp_path / "t.png")
    else:
        path = prof.save_timeline(tmp_path / "t.png")
        assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_timeline_of_many_events_is_downsampled_but_keeps_the_peak(tmp_path):
    from tensorlib.memory import timeline
    series = [(i * 1e-4, [0, 0, 0, 0, (i % 97) * 1000 + (50000 if i == 7777 else 0)])
              for i in range(20000)]
    svg = timeline.render_svg(series, ROLE_NAMES[:5], peak=(7777e-4, 50000 + (7777 % 97) * 1000))
    assert svg.count("<polygon") == 1 and len(svg) < 400000
    pts = timeline._downsample(series, 500)
    assert len(pts) <= 1100 and max(sum(p[1]) for p in pts) == max(sum(s[1]) for s in series)


# ---- cost and nesting ------------------------------------------------------------------------

def test_no_hooks_and_no_site_capture_outside_a_profile():
    w = torch.randn(10).requires_grad_()
    y = w * 2
    assert y.grad_fn._site is None                   # sites are captured only while profiling
    with memory.profile():
        y = w * 2
        assert y.grad_fn._site is not None
        assert _C._profiling_depth() == 1 and len(_memory_hooks()) == 1
    assert _C._profiling_depth() == 0 and not _memory_hooks()


def test_exception_inside_a_profile_cleans_up():
    with pytest.raises(ZeroDivisionError):
        with memory.profile() as prof:
            torch.ones(5) * 2
            1 / 0
    assert not _memory_hooks() and _C._profiling_depth() == 0
    assert prof.peak_bytes == 40


def test_nested_profiles_both_record():
    with memory.profile() as outer:
        a = torch.ones(100)
        with memory.profile() as inner:
            b = a * 2
        c = b + 1
    assert [e.bytes for e in inner.events if e.kind == "alloc"] == [400]
    assert len([e for e in outer.events if e.kind == "alloc"]) == 3
    with pytest.raises(RuntimeError, match="once"):
        with outer:
            pass
    assert not _memory_hooks()
