"""Differential fuzzing against PyTorch: random programs, run step by step in tensorlib and in
torch side by side.

A program is a list of steps, each plain data (JSON): create a tensor, take a view, write in
place, run an op, call backward, ... Tensors are named by their index in a pool that both
libraries grow in step. :class:`Program` runs one step in both libraries and then compares
everything observable in the pool: shapes, strides, dtypes, values (exact for integers and
bool, within tolerances for floats), ``_version`` counters (counted from when the tensor
entered the pool), ``requires_grad``, ``is_leaf``, gradients, and, when a step raises, the
exception class (both must raise, the same class). A float value that is close but not equal
is copied over from torch afterwards (without touching version counters), so a later
discontinuous op (floor, comparison, cast) sees the same inputs in both libraries.

:class:`FuzzMachine` (a hypothesis ``RuleBasedStateMachine``) draws the steps; the
generator may look at the torch side's tensors (shapes, values) to choose arguments, which
keeps replays deterministic: a saved program (``tests/fuzz_regressions.json``) is replayed by
``Program.replay`` alone. ``tests/test_fuzz_differential.py`` runs both in CI and
``tools/fuzz.py`` runs the machine for minutes and saves what it finds.

Deliberate differences (README "Differences from PyTorch", ``tests/divergences.py``) are
never generated; each exclusion below says which one.
"""
import json
import math
import operator
import os
import re
import warnings
from contextlib import nullcontext

import numpy as np
from hypothesis import reject, strategies as st
from hypothesis.errors import UnsatisfiedAssumption
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

import tensorlib as tl

try:
    import torch as _torch
except ImportError:         # the test modules skip; the op tables below need no torch
    _torch = None

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64",
          "float16", "bfloat16", "float32", "float64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
INT_RANGE = {n: (int(np.iinfo(n).min), int(np.iinfo(n).max)) for n in INTS}
# (rtol, atol) per float dtype: torch.testing's defaults, widened for the reduced types whose
# sums and products torch and tensorlib may round in a different order
TOL = {"float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2), "float32": (1.3e-5, 1e-5),
       "float64": (1e-7, 1e-7)}
MAX_POOL = 12
MAX_NUMEL = 64
REGRESSIONS = os.path.join(os.path.dirname(__file__), "fuzz_regressions.json")


class Divergence(AssertionError):
    """tensorlib and torch disagree (or tensorlib crashed) on a program; the message prints
    the program as data, ready for ``tests/fuzz_regressions.json``."""

    def __init__(self, msg, steps):
        self.steps = [dict(s) for s in steps]
        self.reason = msg
        super().__init__(f"{msg}\nprogram ({len(steps)} steps):\n{format_program(steps)}")


def format_program(steps):
    """One JSON step a line (the form ``tests/fuzz_regressions.json`` holds)."""
    return "[\n" + ",\n".join("  " + json.dumps(s) for s in steps) + "\n]"


def dname(x):
    """'float32' for a tensorlib or torch dtype or tensor."""
    return str(getattr(x, "dtype", x)).rsplit(".", 1)[-1]


def builtin_class(exc):
    """The first builtin exception class in ``type(exc)``'s MRO (torch raises subclasses such
    as ``torch._C._LinAlgError`` of RuntimeError; only the builtin class is compared)."""
    for c in type(exc).__mro__:
        if c.__module__ == "builtins":
            return c.__name__
    return type(exc).__name__


# ---------------------------------------------------------------------------------------------
# steps as data

def resolve(v, lib, pool):
    """A step argument as the library's object: {"t": i} a pool tensor, {"d": name} a dtype,
    {"s": [a, b, c]} a slice, {"tuple": [...]} a tuple, {"e": 1} Ellipsis, {"f": "nan"} a
    float JSON cannot hold."""
    if isinstance(v, dict):
        if "t" in v:
            return pool[v["t"]]
        if "d" in v:
            return getattr(lib, v["d"])
        if "s" in v:
            return slice(*v["s"])
        if "tuple" in v:
            return tuple(resolve(x, lib, pool) for x in v["tuple"])
        if "e" in v:
            return Ellipsis
        if "f" in v:
            return float(v["f"])
        return {k: resolve(x, lib, pool) for k, x in v.items()}
    if isinstance(v, list):
        return [resolve(x, lib, pool) for x in v]
    return v


def _refs(v, fn):
    """``v`` with every pool reference {"t": i} replaced by fn(i) (None if fn gives None)."""
    if isinstance(v, dict):
        if set(v) == {"t"}:
            j = fn(v["t"])
            if j is None:
                raise LookupError
            return {"t": j}
        return {k: _refs(x, fn) for k, x in v.items()}
    if isinstance(v, list):
        return [_refs(x, fn) for x in v]
    return v


def relink(steps, added, keep):
    """The program of steps ``keep`` (indices into ``steps``) with its pool references
    renumbered for the tensors the dropped steps no longer add (``added``: the number each
    step added); None when a kept step uses a dropped step's tensor."""
    def ids(order):
        pool, out = [], []
        for i in order:
            out.append((i, list(pool)))
            for k in range(added[i]):
                if len(pool) >= MAX_POOL:
                    pool.pop(0)
                pool.append((i, k))
        return out
    orig = dict(ids(range(len(steps))))
    new = []
    try:
        for i, pool in ids(keep):
            new.append(_refs(steps[i], lambda j: pool.index(orig[i][j])
                             if orig[i][j] in pool else None))
    except LookupError:
        return None
    return new


def enc_float(x):
    return {"f": repr(x)} if not math.isfinite(x) else x


def make_values(spec):
    """The NumPy array a "create" step fills (float32 stands in for bfloat16: every value
    drawn is exact in every float dtype). Values are few-bit so that + - * and sums are exact
    in both libraries, with the extremes of integer types and inf/nan/-0.0 mixed in."""
    rng = np.random.default_rng(spec["seed"])
    shape = tuple(spec["shape"])
    name, kind = spec["dtype"], spec.get("values", "small")
    if kind == "index":
        lo, hi = spec["range"]
        return rng.integers(lo, hi, size=shape, endpoint=False).astype(np.int64)
    if name == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if name in INTS:
        lo, hi = INT_RANGE[name]
        a = rng.integers(max(lo, -9), min(hi, 9) + 1, size=shape).astype(name)
        if kind == "special" and a.size:
            a.flat[rng.integers(0, a.size, size=2)] = rng.choice([lo, hi, 0], size=2)
        return a
    a = (rng.integers(-16, 17, size=shape) * 0.25).astype(np.float32)
    if kind == "special" and a.size:
        a.flat[rng.integers(0, a.size, size=2)] = rng.choice(
            np.array([np.inf, -np.inf, np.nan, -0.0], dtype=np.float32), size=2)
    return a if name in ("float32", "bfloat16") else a.astype(name)


def _create(lib, spec):
    a = make_values(spec)
    name = spec["dtype"] if spec.get("values") != "index" else "int64"
    # a fresh contiguous tensor filled by copy_ (torch.from_numpy of an empty array has 0
    # strides, which clone() would keep)
    src = tl.tensor(a) if lib is tl else lib.from_numpy(np.array(a, order="C"))
    t = lib.empty(a.shape, dtype=getattr(lib, name))
    with lib.no_grad():
        t.copy_(src)
    if spec.get("rg"):
        t.requires_grad_(True)
    return t


def _setitem(lib, op, args, kw):
    args[0][args[1]] = args[2]


def _backward(lib, op, args, kw):
    if kw.get("gradient") is not None:
        # deliberate (divergences.GRAD_NEVER_ALIASES_GRADIENT_ARG): torch may keep a view of
        # the gradient argument as a leaf's .grad and add into it later; give it a copy
        kw = dict(kw, gradient=kw["gradient"].clone())
    args[0].backward(**kw)


def _grad_none(lib, op, args, kw):
    args[0].grad = None


EXEC = {
    "create": lambda lib, op, args, kw: _create(lib, kw),
    "fn": lambda lib, op, args, kw: getattr(lib, op)(*args, **kw),
    "method": lambda lib, op, args, kw: getattr(args[0], op)(*args[1:], **kw),
    "attr": lambda lib, op, args, kw: getattr(args[0], op),
    "operator": lambda lib, op, args, kw: getattr(operator, op)(*args),
    "getitem": lambda lib, op, args, kw: args[0][args[1]],
    "setitem": _setitem,
    "backward": _backward,
    "grad_none": _grad_none,
}


# ---------------------------------------------------------------------------------------------
# running and comparing

class Program:
    """Runs steps in tensorlib and torch side by side and compares the two pools."""

    def __init__(self, torch):
        self.torch = torch
        self.steps = []
        self.pools = {"tl": [], "th": []}
        self.v0 = []          # (tensorlib, torch) _version when each entry joined the pool
        self.added = []       # how many tensors each step added to the pool

    @property
    def th(self):
        return self.pools["th"]

    def fail(self, msg):
        return Divergence(msg, self.steps)

    def run(self, step):
        """Run one step in both libraries, compare the results and then the whole pool."""
        self.steps.append(step)
        self.added.append(0)
        try:
            loose = self._run(step)
            self.check_pool(loose)
        except (Divergence, UnsatisfiedAssumption):
            raise                   # (a rejected program: it reached a PyTorch bug)
        except Exception as e:      # a harness error is a tensorlib misbehaviour too
            raise self.fail(f"comparing raised {type(e).__name__}: {e}") from e

    @classmethod
    def replay(cls, torch, steps):
        p = cls(torch)
        for s in steps:
            p.run(s)
        return p

    def _mirrorable(self, step):
        """``step`` as both libraries run it: None to skip a step that differs from PyTorch
        on purpose (README, "Differences from PyTorch"), in both libraries, so that neither a
        generated program nor one the shrinker derives from it (pool indices shift as steps
        are dropped) reports it; the generator avoids most of them up front."""
        args, kw = step.get("args", []), step.get("kw", {})
        ref = args[0] if args else None
        if not (isinstance(ref, dict) and "t" in ref and ref["t"] < len(self.th)):
            return step
        t, op = self.th[ref["t"]], step.get("op")
        expanded = any(s == 0 and n > 1 for s, n in zip(t.stride(), t.shape))
        if op == "requires_grad_" and dname(t) not in FLOATS and _requires_grad(t):
            return None     # divergences.INT_INPLACE_NEVER_REQUIRES_GRAD made it require grad
        if _is_write(step) and op != "copy_" and not step.get("nograd") and dname(t) not in FLOATS \
                and any(isinstance(a, dict) and "t" in a and a["t"] < len(self.th)
                        and _requires_grad(self.th[a["t"]]) for a in args[1:]):
            return None     # divergences.INT_INPLACE_NEVER_REQUIRES_GRAD
        if expanded and (op == "masked_fill_" or (step.get("how") == "setitem"
                                                   and _holds_tensor(args[1]))):
            return None     # divergences.EXPANDED_INDEX_PUT_RAISES (masked_fill_ too)
        if op in ("atanh_", "asinh_", "acosh_") and not step.get("nograd") and _requires_grad(t):
            return None     # in-place atanh_/asinh_/acosh_ have a gradient; PyTorch's raises
        if op in ("std", "var") and kw.get("dim") == {"tuple": []} and _requires_grad(t):
            # the gradient of std/var(dim=()) (every dim) differs: PyTorch's divides by
            # 1 - correction; dim=None is the same reduction with the same gradient in both
            return dict(step, kw=dict(kw, dim=None))
        return step

    def _run(self, step):
        step = self._mirrorable(step)
        if step is None:
            return False
        outs, errs = [], []
        before = [_bits(t) for t in self.pools["tl"]] if _is_write(step) else None
        for key, lib in (("tl", tl), ("th", self.torch)):
            pool = self.pools[key]
            args = resolve(step.get("args", []), lib, pool)
            kw = resolve(step.get("kw", {}), lib, pool)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    with lib.no_grad() if step.get("nograd") else nullcontext():
                        out = EXEC[step.get("how", "fn")](lib, step.get("op"), args, kw)
                outs.append((out, args))
                errs.append(None)
            except Exception as e:
                outs.append(None)
                errs.append(e)
        et, eh = errs
        if eh is not None and "INTERNAL ASSERT FAILED" in str(eh):
            # a PyTorch bug (its message asks for a report), not its spec: a program that
            # reaches one has nothing left to compare (pow(True, t).backward() is one)
            reject()
        if et is not None or eh is not None:
            if et is None:
                raise self.fail(f"torch raised {builtin_class(eh)}({eh}), tensorlib did not")
            if eh is None:
                raise self.fail(f"tensorlib raised {type(et).__name__}({et}), torch did not")
            if builtin_class(et) != builtin_class(eh):
                raise self.fail(f"tensorlib raised {type(et).__name__}({et}), torch raised "
                                f"{builtin_class(eh)}({eh})")
            if before is not None:
                self._take_partial_writes(before)
            return False
        (ot, at), (oh, ah) = outs
        self._take(ot, oh, at, ah, "result")
        return step.get("loose", False)

    def _take_partial_writes(self, before):
        """After a write that raised in both: where tensorlib's tensor is exactly as it was
        and torch's differs, torch's kernel wrote some elements before it found the bad
        index; take its state over (deliberate: divergences.FAILED_WRITES_ARE_ATOMIC). A
        tensorlib tensor that changed is still compared as usual."""
        for i, (a, b) in enumerate(zip(self.pools["tl"], self.th)):
            if i < len(before) and np.array_equal(_bits(a), before[i]) \
                    and not np.array_equal(_bits(a), _bits(b)):
                _copy_bits(a, b)

    def _take(self, ot, oh, at, ah, what):
        """Compare a step's results and add the new tensors to the pools."""
        T = self.torch.Tensor
        if isinstance(oh, (tuple, list)) and not isinstance(oh, self.torch.Size):
            if not isinstance(ot, (tuple, list)) or len(ot) != len(oh):
                raise self.fail(f"{what}: tensorlib gave {type(ot).__name__} "
                                f"{_short(ot)}, torch a {len(oh)}-{type(oh).__name__}")
            for i, (a, b) in enumerate(zip(ot, oh)):
                self._take(a, b, at, ah, f"{what}[{i}]")
            return
        if isinstance(oh, T):
            if not isinstance(ot, tl.Tensor):
                raise self.fail(f"{what}: tensorlib gave {type(ot).__name__}, torch a tensor")
            same_h = [i for i, x in enumerate(self.th) if x is oh]
            same_t = [i for i, x in enumerate(self.pools["tl"]) if x is ot]
            if same_h != same_t:
                raise self.fail(f"{what}: torch returned pool tensors {same_h}, tensorlib "
                                f"{same_t}")
            if same_h:
                return              # an in-place op returned its input
            self.compare(ot, oh, what, None, loose=True)
            if len(self.th) >= MAX_POOL:
                for key in self.pools:
                    self.pools[key].pop(0)
                self.v0.pop(0)
            self.added[-1] += 1
            self.pools["tl"].append(ot)
            self.pools["th"].append(oh)
            self.v0.append((ot._version, oh._version))
            return
        if oh is None:
            if ot is not None:
                raise self.fail(f"{what}: tensorlib gave {_short(ot)}, torch None")
            return
        # a Python value (item(), Size, dtype, bool)
        if isinstance(oh, self.torch.Size):
            oh = tuple(oh)
            ot = tuple(ot) if isinstance(ot, tl.Size) else ot
        elif isinstance(oh, self.torch.dtype):
            oh = dname(oh)
            ot = dname(ot) if isinstance(ot, tl.dtype) else ot
        if type(ot) is not type(oh):
            raise self.fail(f"{what}: tensorlib gave {type(ot).__name__} {ot!r}, torch "
                            f"{type(oh).__name__} {oh!r}")
        if isinstance(oh, float):
            if not (ot == oh or (math.isnan(ot) and math.isnan(oh))
                    or abs(ot - oh) <= 1e-5 * abs(oh) + 1e-6):
                raise self.fail(f"{what}: tensorlib gave {ot!r}, torch {oh!r}")
        elif ot != oh:
            raise self.fail(f"{what}: tensorlib gave {ot!r}, torch {oh!r}")

    def check_pool(self, loose):
        for i, (a, b) in enumerate(zip(self.pools["tl"], self.pools["th"])):
            self.compare(a, b, f"pool[{i}]", self.v0[i], loose)
            if not isinstance(_autograd_state(b), tuple):
                continue                # (no history to read: compared as an error)
            if b.is_leaf or b.retains_grad:
                if b.is_leaf != a.is_leaf or b.retains_grad != a.retains_grad:
                    raise self.fail(f"pool[{i}]: is_leaf/retains_grad tensorlib "
                                    f"{a.is_leaf}/{a.retains_grad}, torch "
                                    f"{b.is_leaf}/{b.retains_grad}")
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ga, gb = a.grad, b.grad
                if (ga is None) != (gb is None):
                    raise self.fail(f"pool[{i}].grad: tensorlib {_short(ga)}, torch "
                                    f"{_short(gb)}")
                if gb is not None:
                    self.compare(ga, gb, f"pool[{i}].grad", None, loose=True, resync=False)

    def compare(self, a, b, what, v0, loose, resync=True):
        """Compare one tensorlib tensor with its torch twin (values, layout, autograd
        state); a float value that is only close is then copied over from torch."""
        if not isinstance(a, tl.Tensor):
            raise self.fail(f"{what}: tensorlib holds a {type(a).__name__}")
        shape = tuple(b.shape)
        for prop, x, y in (("shape", tuple(a.shape), shape), ("dtype", dname(a), dname(b))):
            if x != y:
                raise self.fail(f"{what}: {prop} tensorlib {x}, torch {y}")
        ga, gb = _autograd_state(a), _autograd_state(b)
        if not isinstance(gb, tuple) or not isinstance(ga, tuple):
            if ga != gb:
                raise self.fail(f"{what}: reading requires_grad/is_leaf gave {ga} in "
                                f"tensorlib, {gb} in torch")
        elif ga != (False, True) or gb != (True, False) or dname(b) in FLOATS:
            # (an integer or bool tensor torch made require grad is deliberate:
            # divergences.INT_INPLACE_NEVER_REQUIRES_GRAD; the generator avoids such steps, but
            # a minimized program may keep one)
            for prop, x, y in zip(("requires_grad", "is_leaf"), ga, gb):
                if x != y:
                    raise self.fail(f"{what}: {prop} tensorlib {x}, torch {y}")
        sa, sb = a.stride(), b.stride()
        if b.numel() > 1 and any(x != y for x, y, n in zip(sa, sb, shape) if n > 1):
            raise self.fail(f"{what}: strides tensorlib {sa}, torch {sb} (shape {shape})")
        if v0 is not None and a._version - v0[0] != b._version - v0[1]:
            raise self.fail(f"{what}: _version went {v0[0]} -> {a._version} in tensorlib, "
                            f"{v0[1]} -> {b._version} in torch")
        x, y = _np(a), _np(b)
        name = dname(b)
        if name not in FLOATS:
            if not np.array_equal(x, y):
                raise self.fail(f"{what}: values differ\ntensorlib {x!r}\ntorch     {y!r}")
            return
        if np.array_equal(x, y, equal_nan=True):
            if resync and not np.array_equal(_bits(a), _bits(b)):
                _copy_bits(a, b)        # (NaN payloads, -0.0: later views of the bits agree)
            return
        rtol, atol = TOL[name]
        fin = np.isfinite(y)
        if not np.array_equal(fin, np.isfinite(x)) or not np.array_equal(
                np.isnan(x), np.isnan(y)) or not np.array_equal(x[~fin & ~np.isnan(y)],
                                                                y[~fin & ~np.isnan(y)]):
            raise self.fail(f"{what}: non-finite values differ\ntensorlib {x!r}\n"
                            f"torch     {y!r}")
        xf, yf = x[fin].astype(np.float64), y[fin].astype(np.float64)
        if loose and yf.size:
            atol = atol + rtol * float(np.abs(yf).max())
        if not np.all(np.abs(xf - yf) <= atol + rtol * np.abs(yf)):
            raise self.fail(f"{what}: {name} values differ beyond (rtol={rtol}, "
                            f"atol={atol})\ntensorlib {x!r}\ntorch     {y!r}")
        if resync:
            _copy_bits(a, b)


def _autograd_state(t):
    """(requires_grad, is_leaf), or the name of the builtin exception class reading them
    raised: PyTorch raises on reading the history of a multi-output view (split/unbind) once
    it or its base was written in place under no_grad, and tensorlib must too."""
    try:
        return (t.requires_grad, t.is_leaf)
    except Exception as e:
        return builtin_class(e)


def _is_write(step):
    """Whether a step writes into its first argument (setitem, x.op_(...), x += ...)."""
    return step.get("how") == "setitem" or str(step.get("op", "")).endswith("_") or \
        step.get("op") in IOPERATORS


def _holds_tensor(index):
    """Whether an encoded subscript holds a tensor (an advanced index: index_put_)."""
    if isinstance(index, dict):
        return "t" in index or any(_holds_tensor(x) for x in index.get("tuple", []))
    return isinstance(index, list) and any(_holds_tensor(x) for x in index)


def _requires_grad(t):
    """t.requires_grad, False where reading it raises (see _autograd_state): the generator
    must not fail on a tensor whose reading the step then compares."""
    state = _autograd_state(t)
    return isinstance(state, tuple) and state[0]


def _short(x):
    if x is None:
        return "None"
    if hasattr(x, "shape"):
        return f"{type(x).__name__}{tuple(x.shape)}"
    return repr(x)[:60]


def _np(t):
    t = t.detach()
    if dname(t) == "bfloat16":
        t = t.float()
    return np.array(t.numpy(), copy=True)


def _bits(t):
    it = {1: "int8", 2: "int16", 4: "int32", 8: "int64"}[t.element_size()]
    lib = tl if isinstance(t, tl.Tensor) else __import__("torch")
    return np.array(t.detach().view(getattr(lib, it)).numpy(), copy=True)


def _copy_bits(a, b):
    """Overwrite tensorlib tensor ``a``'s elements with the bits of torch tensor ``b`` (same
    layout class) without counting a write: a rounding difference must not be amplified by a
    later discontinuous op."""
    import torch
    it = {1: "int8", 2: "int16", 4: "int32", 8: "int64"}[b.element_size()]
    dst = a.detach().view(getattr(tl, it)).numpy()
    src = b.detach().view(getattr(torch, it)).numpy()
    np.copyto(dst, src)


def norm_reason(reason):
    """A divergence's reason without its numbers (one bug, one entry)."""
    first = re.sub(r"\b(Byte|Char|Short|Int|Long|Half|Float|Double|Bool|BFloat16|"
                   r"(tensorlib|torch)\.\w+)\b", "T", reason.split("\n")[0])
    return re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "#", first)[:120]


def minimize(torch, steps, reason):
    """``steps`` with chunks of steps dropped (halves down to single steps, pool references
    renumbered) while the replay still fails the same way."""
    want = norm_reason(reason)

    def fails(prog):
        try:
            Program.replay(torch, prog)
        except Divergence as e:
            return norm_reason(e.reason) == want
        except Exception:
            return False
        return False

    def added(prog):
        p = Program(torch)
        try:
            for s in prog:
                p.run(s)
        except Exception:
            pass
        return p.added + [0] * (len(prog) - len(p.added))

    chunk = max(len(steps) // 2, 1)
    while chunk >= 1:
        i = len(steps) - 1 - chunk
        while i >= 0:
            keep = [k for k in range(len(steps)) if not i <= k < i + chunk]
            cand = relink(steps, added(steps), keep)
            if cand is not None and fails(cand):
                steps = cand
            i -= chunk
        chunk //= 2
    return steps


# ---------------------------------------------------------------------------------------------
# the generator

def _has_inplace(name):
    """An in-place method both libraries have (tensorlib's extra ones, maximum_, are not
    PyTorch's: nothing to compare)."""
    return hasattr(tl.Tensor, name + "_") and (_torch is None or
                                               hasattr(_torch.Tensor, name + "_"))


UNARY = [n for n in (
    "neg abs exp log sqrt sin cos tanh sigmoid relu floor ceil round trunc sign reciprocal "
    "square logical_not bitwise_not isnan isinf isfinite frac rsqrt erf expm1 log1p exp2 log2 "
    "sinh atan asin signbit nan_to_num log10 acos cosh asinh acosh atanh erfc").split()
    if hasattr(tl, n)]
UNARY_INPLACE = [n for n in UNARY if _has_inplace(n)]
BINARY = [n for n in (
    "add sub mul div true_divide floor_divide remainder fmod pow maximum minimum atan2 eq ne "
    "lt le gt ge logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor "
    "bitwise_left_shift bitwise_right_shift").split() if hasattr(tl, n)]
BINARY_INPLACE = [n for n in BINARY if _has_inplace(n)]
OPERATORS = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and_", "or_", "xor",
             "lshift", "rshift", "eq", "ne", "lt", "le", "gt", "ge"]
IOPERATORS = ["iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "iand", "ior", "ixor"]
REDUCE = ["sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "std",
          "var", "any", "all", "logsumexp", "cumsum", "cumprod", "count_nonzero", "norm"]
INT_DIVISIONS = {"div", "floor_divide", "remainder", "fmod", "true_divide", "itruediv",
                 "ifloordiv", "imod"}
SCALARS = [0, 1, 2, -1, 3, -7, 1000, 2 ** 31, True, False, 0.5, -2.5, 1.5, 0.0, -0.0,
           float("inf"), float("nan")]


def is_float(name):
    return name in FLOATS


class FuzzMachine(RuleBasedStateMachine):
    """Draws random programs (see the module docstring); each rule is one kind of step."""

    def __init__(self):
        super().__init__()
        import torch
        self.torch = torch
        self.p = Program(torch)

    # the CI test shrinks a failure with ``minimize`` (seconds) rather than hypothesis's
    # shrinker (minutes on these programs)
    minimize_failures = False

    # -- helpers ---------------------------------------------------------------------------
    def run(self, step):
        try:
            self.p.run(step)
        except Divergence as e:
            if not self.minimize_failures:
                raise
            raise Divergence(e.reason, minimize(self.torch, e.steps, e.reason)) from None

    @property
    def th(self):
        return self.p.th

    def pick(self, data, pred=None):
        """A pool index (of a tensor satisfying ``pred`` where there is one)."""
        idx = [i for i, t in enumerate(self.th) if pred is None or pred(t)]
        if not idx:
            idx = list(range(len(self.th)))
        return data.draw(st.sampled_from(idx))

    def create(self, data, shape=None, dtype=None, rg=None, values=None):
        """Add a fresh tensor to the pool and return its index."""
        if shape is None:
            nd = data.draw(st.integers(0, 4))
            shape = data.draw(st.lists(st.integers(0, 4), min_size=nd, max_size=nd))
            if int(np.prod(shape)) > MAX_NUMEL:
                shape = [min(s, 2) for s in shape]
        if dtype is None:
            dtype = data.draw(st.sampled_from(DTYPES))
        if rg is None:
            rg = is_float(dtype) and data.draw(st.booleans())
        if values is None:
            values = data.draw(st.sampled_from(["small", "small", "small", "special"]))
        spec = {"dtype": dtype, "shape": list(shape), "seed": data.draw(st.integers(0, 2 ** 16)),
                "rg": bool(rg), "values": values}
        self.run({"how": "create", "kw": spec})
        return len(self.th) - 1

    def dim(self, data, nd, allow_bad=True):
        lo, hi = (-nd - 1, nd) if allow_bad else (-max(nd, 1), max(nd, 1) - 1)
        if allow_bad and data.draw(st.integers(0, 9)) == 0:
            return data.draw(st.integers(lo, hi))
        return data.draw(st.integers(-max(nd, 1), max(nd, 1) - 1))

    def partner(self, data, i, kinds=("same", "broadcast", "pool", "scalar", "bad")):
        """A second operand for pool tensor ``i``: a tensor ref (often of a broadcastable
        shape), or a Python scalar."""
        t = self.th[i]
        kind = data.draw(st.sampled_from(kinds))
        if kind == "scalar":
            v = data.draw(st.sampled_from(SCALARS))
            return enc_float(v) if isinstance(v, float) else v
        if kind == "pool":
            return {"t": self.pick(data)}
        shape = list(t.shape)
        if kind == "broadcast":
            shape = [1 if data.draw(st.booleans()) else s for s in shape]
            k = data.draw(st.integers(0, len(shape)))
            shape = shape[k:] if data.draw(st.booleans()) else [2] * (k > 3) + shape
        elif kind == "bad":
            shape = shape + [3] if not shape else shape[:-1] + [shape[-1] + 2]
        dtype = data.draw(st.sampled_from([dname(t)] + DTYPES))
        return {"t": self.create(data, shape=shape, dtype=dtype)}

    def float_to_int_ok(self, src, dst_dtype):
        """A float -> integer conversion of ``src``'s values is defined (C leaves values out
        of the target's range undefined; torch and tensorlib may then differ)."""
        if not is_float(dname(src)) or dst_dtype not in INTS:
            return True
        v = src.detach().double()
        lo, hi = INT_RANGE[dst_dtype]
        return bool(v.isfinite().all()) and bool((v > float(lo) - 1).all()) and bool(
            (v < float(hi) + 1).all())

    def has_zero(self, v):
        if isinstance(v, dict) and "t" in v:
            return bool((self.th[v["t"]] == 0).any())
        return isinstance(v, (int, float)) and resolve(v, tl, []) == 0

    def write_ok(self, t):
        """Writing into ``t`` has one defined result: no element aliased twice except through
        a 0 stride (which both libraries reject)."""
        dims = sorted((s, n) for s, n in zip(t.stride(), t.shape) if n > 1 and s > 0)
        span = 1
        for s, n in dims:
            if s < span:
                return False
            span = s * n
        return True

    # -- rules -----------------------------------------------------------------------------
    @precondition(lambda self: len(self.th) < MAX_POOL)
    @rule(data=st.data())
    def new_tensor(self, data):
        self.create(data)

    @precondition(lambda self: self.th)
    @rule(data=st.data())
    def view(self, data):
        i = self.pick(data)
        t = self.th[i]
        shape, nd = list(t.shape), t.dim()
        ref = {"t": i}
        kind = data.draw(st.sampled_from(
            ["index", "index", "t", "transpose", "permute", "expand", "diagonal", "unfold",
             "narrow", "select", "view", "reshape", "as_strided", "squeeze", "unsqueeze",
             "flatten", "movedim", "split", "chunk", "unbind", "detach", "mT", "view_dtype"]))
        d = lambda: self.dim(data, nd)  # noqa: E731
        small = st.integers(-1, 4)
        if kind == "index":
            self.run({"how": "getitem", "args": [ref, self.basic_index(data, shape)]})
        elif kind == "t":
            self.run({"how": "method", "op": "t", "args": [ref]})
        elif kind == "mT":
            self.run({"how": "attr", "op": "mT", "args": [ref]})
        elif kind in ("transpose", "movedim"):
            self.run({"how": "method", "op": kind, "args": [ref, d(), d()]})
        elif kind == "permute":
            perm = data.draw(st.permutations(range(nd)))
            if data.draw(st.integers(0, 9)) == 0:
                perm = perm + [0] if data.draw(st.booleans()) else perm[:-1] + perm[:1]
            self.run({"how": "method", "op": "permute", "args": [ref] + list(perm)})
        elif kind == "expand":
            new = []
            for s in shape:
                new.append(data.draw(st.sampled_from([-1, s] + ([0, 2, 3] if s == 1 else []))))
            lead = data.draw(st.lists(st.integers(0, 3), max_size=2))
            if data.draw(st.integers(0, 9)) == 0:
                new = new + [2] if data.draw(st.booleans()) else [-1] + new
            if not shape and -1 in new and 0 in lead:
                return      # torch's bug: a 0-d x.expand(1, 0, -1) has size [1, 0, -1]
            self.run({"how": "method", "op": "expand", "args": [ref] + lead + new})
        elif kind == "diagonal":
            self.run({"how": "method", "op": "diagonal", "args": [ref],
                      "kw": {"offset": data.draw(st.integers(-3, 3)), "dim1": d(), "dim2": d()}})
        elif kind == "unfold":
            self.run({"how": "method", "op": "unfold",
                      "args": [ref, d(), data.draw(small), data.draw(small)]})
        elif kind == "narrow":
            self.run({"how": "method", "op": "narrow",
                      "args": [ref, d(), data.draw(st.integers(-4, 4)), data.draw(small)]})
        elif kind == "select":
            self.run({"how": "method", "op": "select",
                      "args": [ref, d(), data.draw(st.integers(-5, 4))]})
        elif kind in ("view", "reshape"):
            self.run({"how": "method", "op": kind, "args": [ref, self.new_shape(data, shape)]})
        elif kind == "as_strided":
            self.as_strided(data, i)
        elif kind == "squeeze":
            args = [ref] + ([d()] if data.draw(st.booleans()) else [])
            self.run({"how": "method", "op": "squeeze", "args": args})
        elif kind == "unsqueeze":
            self.run({"how": "method", "op": "unsqueeze",
                      "args": [ref, data.draw(st.integers(-nd - 2, nd + 1))]})
        elif kind == "flatten":
            self.run({"how": "method", "op": "flatten", "args": [ref, d(), d()]})
        elif kind in ("split", "chunk"):
            self.run({"how": "method", "op": kind,
                      "args": [ref, data.draw(st.integers(0 if kind == "split" else 1, 3)),
                               d()]})
        elif kind == "unbind":
            self.run({"how": "method", "op": "unbind", "args": [ref, d()]})
        elif kind == "detach":
            self.run({"how": "method", "op": "detach", "args": [ref]})
        elif kind == "view_dtype":
            self.run({"how": "method", "op": "view",
                      "args": [ref, {"d": data.draw(st.sampled_from(DTYPES))}]})

    def basic_index(self, data, shape):
        """A basic index: ints (sometimes out of range), slices with positive steps, None,
        Ellipsis (sometimes two: each stands for all the dims the other entries leave)."""
        items, dim, ell = [], 0, 0
        for _ in range(data.draw(st.integers(0, len(shape) + 1))):
            n = shape[dim] if dim < len(shape) else 1
            kind = data.draw(st.sampled_from(["int", "slice", "slice", "none", "ellipsis"]))
            if kind == "int":
                items.append(data.draw(st.integers(-n - 1, n)))
                dim += 1
            elif kind == "slice":
                b = st.one_of(st.none(), st.integers(-n - 2, n + 2))
                step = data.draw(st.sampled_from([None, 1, 2, 3] + [-1] * (
                    data.draw(st.integers(0, 19)) == 0)))
                # (after a second ellipsis a slice may fall past the last dim, where a
                # stop makes PyTorch read stale memory: see _entry_past_end)
                items.append({"s": [data.draw(b), None if ell > 1 else data.draw(b), step]})
                dim += 1
            elif kind == "none":
                items.append(None)
            else:
                items.append({"e": 1})
                if not ell:
                    dim = max(dim, len(shape) - (len(items)))
                ell += 1
        return {"tuple": items}

    def new_shape(self, data, shape):
        n = int(np.prod(shape))
        out, rest = [], n
        for _ in range(data.draw(st.integers(0, 3))):
            divs = [k for k in range(1, rest + 1) if rest % k == 0] if rest else [0, 1, 2]
            k = data.draw(st.sampled_from(divs))
            out.append(k)
            rest = rest // k if k else rest
        out.append(rest)
        if data.draw(st.booleans()) and out:
            out[data.draw(st.integers(0, len(out) - 1))] = -1
        if data.draw(st.integers(0, 9)) == 0:
            out.append(data.draw(st.sampled_from([2, 3, -1])))
        return out

    def as_strided(self, data, i):
        t = self.th[i]
        size_el = t.untyped_storage().nbytes() // max(t.element_size(), 1)
        nd = data.draw(st.integers(0, 3))
        sizes = data.draw(st.lists(st.integers(0, 3), min_size=nd, max_size=nd))
        strides = data.draw(st.lists(st.integers(0, 3), min_size=nd, max_size=nd))
        extent = sum((s - 1) * k for s, k in zip(sizes, strides)) if all(sizes) else -1
        hi = size_el - 1 - extent
        bad = data.draw(st.integers(0, 9)) == 0
        if hi < 0 and not bad:
            return
        # an offset inside the storage, or (bad) past its end
        off = data.draw(st.integers(0, max(hi, 0) + (2 if bad else 0)))
        self.run({"how": "method", "op": "as_strided", "args": [{"t": i}, sizes, strides, off]})

    @precondition(lambda self: self.th)
    @rule(data=st.data())
    def write(self, data):
        """An in-place write: through a view, into a leaf, with promotion or broadcasting."""
        i = self.pick(data, lambda t: t.numel() > 0)
        t = self.th[i]
        if not self.write_ok(t):
            return
        ref, name = {"t": i}, dname(t)
        nograd = data.draw(st.integers(0, 3)) == 0
        kind = data.draw(st.sampled_from(["copy_", "fill_", "zero_", "binary_", "unary_",
                                          "ioperator", "setitem", "setitem_adv", "clamp_",
                                          "masked_fill_"]))
        step = None
        if kind == "copy_":
            j = self.partner(data, i, ("same", "broadcast", "pool", "bad"))["t"]
            if not self.float_to_int_ok(self.th[j], name):
                return
            step = {"how": "method", "op": "copy_", "args": [ref, {"t": j}]}
        elif kind in ("fill_", "masked_fill_"):
            v = data.draw(st.sampled_from(SCALARS))
            if isinstance(v, float) and name in INTS and not math.isfinite(v):
                return      # torch checks the range of some fills only
            if kind == "fill_" and name in ("float16", "bfloat16") and t.numel() == 1 and \
                    isinstance(v, (int, float)) and math.isfinite(v) and \
                    abs(v) > (65504 if name == "float16" else 3.3895313892515355e38):
                return      # deliberate: divergences.ONE_ELEMENT_HALF_FILL_IS_CHECKED
            v = enc_float(v) if isinstance(v, float) else v
            if kind == "fill_":
                step = {"how": "method", "op": "fill_", "args": [ref, v]}
            else:
                m = self.create(data, shape=self.bshape(data, t.shape), dtype="bool")
                step = {"how": "method", "op": "masked_fill_", "args": [ref, {"t": m}, v]}
        elif kind == "zero_":
            step = {"how": "method", "op": "zero_", "args": [ref]}
        elif kind == "binary_":
            op = data.draw(st.sampled_from(BINARY_INPLACE))
            step = {"how": "method", "op": op + "_", "args": [ref, self.partner(data, i)]}
        elif kind == "ioperator":
            op = data.draw(st.sampled_from(IOPERATORS))
            step = {"how": "operator", "op": op, "args": [ref, self.partner(data, i)]}
        if kind in ("binary_", "ioperator") and not is_float(name) and op in INT_DIVISIONS \
                and self.has_zero(step["args"][1]):
            # an integer division by zero raises in both, but torch's kernel has written
            # the elements before the zero by then: a partial write not worth mirroring
            return
        elif kind == "unary_":
            op = data.draw(st.sampled_from(UNARY_INPLACE))
            step = {"how": "method", "op": op + "_", "args": [ref]}
        elif kind == "clamp_":
            lo = data.draw(st.sampled_from([None, -1, 0.5, -2.5]))
            hi = data.draw(st.sampled_from([None, 2, 1.5, -3]))
            step = {"how": "method", "op": "clamp_", "args": [ref, lo, hi]}
        elif kind == "setitem":
            idx = self.basic_index(data, list(t.shape))
            step = {"how": "setitem", "args": [ref, idx, self.value(data, i, name)]}
        elif kind == "setitem_adv":
            if any(s == 0 and n > 1 for s, n in zip(t.stride(), t.shape)):
                return      # deliberate: index_put_ into an expanded tensor raises (README)
            idx = self.adv_index(data, t)
            if idx is None:
                return
            v = self.value(data, i, name)
            if isinstance(v, dict) and "t" in v and dname(self.th[v["t"]]) != name:
                return      # deliberate: divergences.SETITEM_CASTS_TENSOR_VALUES
            step = {"how": "setitem", "args": [ref, idx, v]}
        if step is None or step["args"][-1] is None:
            return
        if not nograd and not is_float(name) and kind != "copy_" and any(
                isinstance(a, dict) and "t" in a and _requires_grad(self.th[a["t"]])
                for a in step["args"][1:]):
            return      # deliberate: divergences.INT_INPLACE_NEVER_REQUIRES_GRAD
        if nograd:
            step["nograd"] = True
        self.run(step)

    def value(self, data, i, name):
        """A value to assign into pool tensor ``i`` (a scalar or a tensor ref)."""
        v = self.partner(data, i, ("scalar", "broadcast", "pool"))
        if isinstance(v, dict) and "t" in v:
            if not self.float_to_int_ok(self.th[v["t"]], name):
                return None
        elif isinstance(v, dict) or isinstance(v, float):
            if name in INTS and not math.isfinite(resolve(v, tl, [])):
                return None
        return v

    def bshape(self, data, shape):
        return [1 if data.draw(st.booleans()) else s for s in shape]

    def adv_index(self, data, t):
        """An advanced index: an int64 tensor (sometimes out of range), a bool mask or a
        list, on one dim, with a slice before it."""
        shape = list(t.shape)
        if t.numel() == 0:
            return None     # deliberate: divergences.EMPTY_OPS_STILL_VALIDATE_INDICES
        if not shape:
            m = self.create(data, shape=[], dtype="bool")
            return {"t": m}
        d = data.draw(st.integers(0, len(shape) - 1))
        kind = data.draw(st.sampled_from(["int", "int", "mask", "list"]))
        n = shape[d]
        if kind == "mask":
            m = self.create(data, shape=shape[d:], dtype="bool")
            return {"tuple": [{"s": [None, None, None]}] * d + [{"t": m}]}
        lo, hi = (-n, n) if data.draw(st.integers(0, 9)) else (-n - 2, n + 2)
        if hi <= lo:
            lo, hi = -1, 1
        if kind == "list":
            k = data.draw(st.lists(st.integers(lo, hi - 1), min_size=1, max_size=3))
            return {"tuple": [{"s": [None, None, None]}] * d + [k]}
        ishape = data.draw(st.lists(st.integers(0, 3), max_size=2))
        j = self.index_tensor(data, ishape, lo, hi)
        return {"tuple": [{"s": [None, None, None]}] * d + [{"t": j}]}

    def index_tensor(self, data, shape, lo, hi):
        spec = {"dtype": "int64", "shape": list(shape), "seed": data.draw(st.integers(0, 2 ** 16)),
                "rg": False, "values": "index", "range": [lo, hi]}
        self.run({"how": "create", "kw": spec})
        return len(self.th) - 1

    @precondition(lambda self: self.th)
    @rule(data=st.data())
    def unary(self, data):
        i = self.pick(data)
        op = data.draw(st.sampled_from(UNARY + ["clone", "contiguous", "to", "item", "tolist",
                                                "relu", "sum_all"]))
        ref = {"t": i}
        how = data.draw(st.sampled_from(["fn", "method"]))
        if op == "to":
            dst = data.draw(st.sampled_from(DTYPES))
            if not self.float_to_int_ok(self.th[i], dst):
                return
            step = {"how": "method", "op": "to", "args": [ref, {"d": dst}]}
        elif op in ("item", "tolist"):
            if op == "tolist" and is_float(dname(self.th[i])):
                return      # compared through the tensor: tolist's floats are exact anyway
            step = {"how": "method", "op": op, "args": [ref]}
        elif op == "sum_all":
            step = {"how": "method", "op": "sum", "args": [ref], "loose": True}
        elif op in ("clone", "contiguous"):
            step = {"how": "method", "op": op, "args": [ref]}
        elif op == "neg" and data.draw(st.booleans()):
            step = {"how": "operator", "op": "neg", "args": [ref]}
        else:
            step = {"how": how, "op": op, "args": [ref]}
        if data.draw(st.integers(0, 4)) == 0:
            step["nograd"] = True
        self.run(step)

    @precondition(lambda self: self.th)
    @rule(data=st.data())
    def binary(self, data):
        i = self.pick(data)
        other = self.partner(data, i)
        ref = {"t": i}
        if data.draw(st.booleans()):
            op = data.draw(st.sampled_from(OPERATORS))
            args = [ref, other] if data.draw(st.booleans()) else [other, ref]
            step = {"how": "operator", "op": op, "args": args}
        else:
            op = data.draw(st.sampled_from(BINARY))
            step = {"how": data.draw(st.sampled_from(["fn", "method"])), "op": op,
                    "args": [ref, other]}
            if op in ("add", "sub") and data.draw(st.integers(0, 3)) == 0:
                step["kw"] = {"alpha": data.draw(st.sampled_from([2, -1, 0.5, True]))}
            if op == "div" and data.draw(st.booleans()):
                step["kw"] = {"rounding_mode": data.draw(st.sampled_from(["trunc", "floor"]))}
        if isinstance(other, dict) and "t" not in other or not isinstance(other, dict):
            if step["how"] == "fn" and step["args"][0] is not ref:
                return
        self.run(step)

    @precondition(lambda self: self.th)
    @rule(data=st.data())
    def reduce(self, data):
        i = self.pick(data)
        t = self.th[i]
        nd = t.dim()
        op = data.draw(st.sampled_from(REDUCE))
        ref = {"t": i}
        kw = {}
        args = [ref]
        form = data.draw(st.sampled_from(["all", "dim", "dims"]))
        if op in ("cumsum", "cumprod", "logsumexp"):
            form = "dim"       # these need a dim
        if form == "all":
            if op in ("sum", "prod", "mean") and data.draw(st.booleans()):
                kw["dtype"] = {"d": data.draw(st.sampled_from(DTYPES))}
        elif op in ("cumsum", "cumprod"):
            args.append(self.dim(data, nd))
            if data.draw(st.booleans()):
                kw["dtype"] = {"d": data.draw(st.sampled_from(DTYPES))}
        else:
            if form == "dims" and op in ("sum", "mean", "amax", "amin", "std", "var",
                                         "logsumexp", "count_nonzero", "norm"):
                if data.draw(st.integers(0, 4)) == 0:
                    dims = data.draw(st.lists(st.integers(-nd - 1, nd), max_size=3))
                else:
                    dims = data.draw(st.lists(st.integers(-max(nd, 1), max(nd, 1) - 1),
                                              max_size=nd, unique=True))
                kw["dim"] = {"tuple": dims}
            else:
                kw["dim"] = self.dim(data, nd)
            if op != "count_nonzero":
                kw["keepdim"] = data.draw(st.booleans())
            if op in ("std", "var") and data.draw(st.booleans()):
                kw["correction"] = data.draw(st.sampled_from([0, 1, 2]))
        self.run({"how": data.draw(st.sampled_from(["fn", "method"])), "op": op, "args": args,
                  "kw": kw, "loose": True})

    @precondition(lambda self: self.th)
    @rule(data=st.data())
    def matmul(self, data):
        i = self.pick(data, lambda t: 1 <= t.dim() <= 3)
        t = self.th[i]
        op = data.draw(st.sampled_from(["matmul", "matmul", "mm", "bmm", "mv", "dot", "outer",
                                        "operator"]))
        shape = list(t.shape)
        bad = data.draw(st.integers(0, 7)) == 0
        if op == "outer":
            other = [data.draw(st.integers(0, 4))]
        elif not shape:
            other = [2]
        elif op == "dot":
            other = list(shape[-1:])
        elif op == "mv":
            other = [shape[-1]]
        else:
            k = shape[-1]
            n = data.draw(st.integers(0, 3))
            lead = shape[:-2] if len(shape) > 2 else data.draw(st.sampled_from([[], [2], [1]]))
            other = ([k] if data.draw(st.integers(0, 4)) == 0 else lead + [k, n])
            if op == "mm":
                other = [k, n]
        if bad and other:
            other[0] += 1
        dtype = dname(t) if data.draw(st.integers(0, 4)) else data.draw(st.sampled_from(DTYPES))
        j = self.create(data, shape=other, dtype=dtype)
        args = [{"t": i}, {"t": j}]
        if op == "operator":
            self.run({"how": "operator", "op": "matmul", "args": args, "loose": True})
        else:
            self.run({"how": data.draw(st.sampled_from(["fn", "method"])), "op": op,
                      "args": args, "loose": True})

    @precondition(lambda self: self.th)
    @rule(data=st.data())
    def join(self, data):
        """cat / stack of a tensor with same-shaped (or mismatched) partners of any dtype."""
        i = self.pick(data)
        t = self.th[i]
        op = data.draw(st.sampled_from(["cat", "stack"]))
        refs = [{"t": i}]
        for _ in range(data.draw(st.integers(0, 2))):
            shape = list(t.shape)
            if shape and op == "cat" and data.draw(st.booleans()):
                shape[data.draw(st.integers(0, len(shape) - 1))] = data.draw(st.integers(0, 3))
            dtype = dname(t) if data.draw(st.booleans()) else data.draw(st.sampled_from(DTYPES))
            refs.append({"t": self.create(data, shape=shape, dtype=dtype)})
        nd = t.dim() + (op == "stack")
        self.run({"how": "fn", "op": op, "args": [refs, self.dim(data, nd)]})

    @precondition(lambda self: self.th)
    @rule(data=st.data())
    def select_ops(self, data):
        """where / masked_fill / clamp / getitem with advanced indices / index_select."""
        i = self.pick(data)
        t = self.th[i]
        ref = {"t": i}
        op = data.draw(st.sampled_from(["where", "masked_fill", "clamp", "adv", "index_select"]))
        if op == "where":
            c = self.create(data, shape=self.bshape(data, t.shape), dtype="bool")
            self.run({"how": "fn", "op": "where",
                      "args": [{"t": c}, ref, self.partner(data, i)]})
        elif op == "masked_fill":
            m = self.create(data, shape=self.bshape(data, t.shape), dtype="bool")
            v = data.draw(st.sampled_from(SCALARS))
            if isinstance(v, float) and dname(t) in INTS and not math.isfinite(v):
                return
            v = enc_float(v) if isinstance(v, float) else v
            self.run({"how": "method", "op": "masked_fill", "args": [ref, {"t": m}, v]})
        elif op == "clamp":
            lo = data.draw(st.sampled_from([None, -1, 0.5, {"t": None}]))
            hi = data.draw(st.sampled_from([None, 2, 1.5, -3]))
            if isinstance(lo, dict):
                lo = {"t": self.create(data, shape=self.bshape(data, t.shape),
                                       dtype=dname(t))}
            self.run({"how": "fn", "op": "clamp", "args": [ref, lo, hi]})
        elif op == "adv":
            idx = self.adv_index(data, t)
            if idx is not None:
                self.run({"how": "getitem", "args": [ref, idx]})
        else:
            n = t.shape[0] if t.dim() else 1
            j = self.index_tensor(data, [data.draw(st.integers(0, 3))], -n, n + (
                data.draw(st.integers(0, 9)) == 0))
            self.run({"how": "fn", "op": "index_select",
                      "args": [ref, self.dim(data, t.dim()), {"t": j}]})

    @precondition(lambda self: self.th)
    @rule(data=st.data())
    def autograd(self, data):
        """backward (random retain_graph / create_graph, sometimes on a tensor that does not
        require grad, or with a gradient of the wrong shape), requires_grad_, retain_grad,
        and clearing a leaf's .grad."""
        kind = data.draw(st.sampled_from(["backward", "backward", "backward", "requires_grad_",
                                          "retain_grad", "grad_none"]))
        i = self.pick(data, _requires_grad)
        t = self.th[i]
        ref = {"t": i}
        if kind == "requires_grad_":
            self.run({"how": "method", "op": "requires_grad_",
                      "args": [ref, data.draw(st.booleans())]})
        elif kind == "retain_grad":
            self.run({"how": "method", "op": "retain_grad", "args": [ref]})
        elif kind == "grad_none":
            state = _autograd_state(t)
            if isinstance(state, tuple) and state[1]:      # (a leaf)
                self.run({"how": "grad_none", "args": [ref]})
        else:
            kw = {"retain_graph": data.draw(st.booleans()),
                  "create_graph": data.draw(st.integers(0, 4)) == 0}
            if t.numel() != 1 or data.draw(st.booleans()):
                shape = list(t.shape)
                if data.draw(st.integers(0, 9)) == 0:
                    shape = shape + [2]
                kw["gradient"] = {"t": self.create(data, shape=shape, dtype=dname(t),
                                                   rg=False)}
            self.run({"how": "backward", "args": [ref], "kw": kw, "loose": True})
