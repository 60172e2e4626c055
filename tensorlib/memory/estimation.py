"""Memory estimates without running: a function run on ``meta`` copies of its inputs.

The meta device has the CPU's allocator and counters but no memory behind them, and its back
end runs no kernel, so every op still checks its arguments, promotes, broadcasts and allocates
its output exactly as on the CPU. The peak of the meta allocator over the call is the peak a
CPU run would reach, before a single real byte is allocated; the call is recorded by the
planner on the way, so the lower bound and the arena plan come with it.

>>> import tensorlib
>>> def f(x):
...     h = (x * 2).exp()
...     return (h + 1).sin() * h
>>> est = tensorlib.memory.estimate(f, tensorlib.ones(1000))   # 4 KB in, no kernel runs
>>> est.peak_bytes, est.inputs_bytes, est.plan.lower_bound_bytes
(16384, 4096, 12096)
>>> est.fits(2 ** 30)
True
"""
from tensorlib._core.allocator import device as _device
from tensorlib._core.tensor import TensorBase
from tensorlib.memory import max_memory_allocated, memory_allocated, reset_peak_memory_stats
from tensorlib.memory.planner import plan as _plan, _fmt_bytes

__all__ = ["estimate", "MemoryEstimate"]

_META = _device("meta")


def _to_meta(x):
    """Tensors (also inside tuples, lists and dicts) as meta tensors: same shape, dtype,
    strides when dense and requires_grad, as leaves; anything else unchanged."""
    if isinstance(x, TensorBase):
        m = x.detach().to(_META)
        return m.requires_grad_() if x.requires_grad else m
    if isinstance(x, (tuple, list)):
        return type(x)(_to_meta(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_meta(v) for k, v in x.items()}
    return x


class MemoryEstimate:
    """What running ``fn`` would take. Bytes are allocated bytes as
    ``tensorlib.memory.memory_allocated`` counts them (each storage rounded up to 512).

    Attributes:
        peak_bytes: the most bytes allocated at once during the call, inputs included (a CPU
            run reports the same as ``max_memory_allocated()`` less what was allocated before
            the inputs were made).
        inputs_bytes: the bytes of the inputs' copies (dense copies: a view input counts its
            own elements, not its base's).
        result_bytes: the bytes still allocated after the call beyond the inputs (what it
            returned or kept).
        plan: the planner's plan of the call (``tensorlib.memory.planner.Plan``): its
            ``lower_bound_bytes`` (the largest sum of temporaries alive at once) and
            ``arena_bytes``; None when the call allocated nothing.
        result: what ``fn`` returned, on meta (shapes and dtypes, no values).
    """

    def __init__(self, peak_bytes, inputs_bytes, result_bytes, plan, result):
        self.peak_bytes = peak_bytes
        self.inputs_bytes = inputs_bytes
        self.result_bytes = result_bytes
        self.plan = plan
        self.result = result

    def fits(self, nbytes):
        """Whether the call's peak fits in ``nbytes`` of tensor memory.

        >>> tensorlib.memory.estimate(lambda x: x * 2, tensorlib.ones(1000)).fits(4096)
        False
        """
        return self.peak_bytes <= nbytes

    def report(self):
        """The estimate in a few lines, with the plan's report.

        >>> print(tensorlib.memory.estimate(lambda x: x + 1, tensorlib.ones(8)).report())
        ... # doctest: +ELLIPSIS
        memory estimate (run on meta: nothing allocated)
          peak         1.00 KiB   inputs 512 B, left after the call 512 B
        memory plan: 1 requests (1 outlive the call: served by the allocator)
        ...
        """
        lines = [
            "memory estimate (run on meta: nothing allocated)",
            f"  peak      {_fmt_bytes(self.peak_bytes):>11}   inputs {_fmt_bytes(self.inputs_bytes)}, "
            f"left after the call {_fmt_bytes(self.result_bytes)}",
        ]
        if self.plan is not None:
            lines.append(self.plan.report())
        return "\n".join(lines)

    def __repr__(self):
        lb = None if self.plan is None else self.plan.lower_bound_bytes
        return (f"<MemoryEstimate peak={self.peak_bytes} inputs={self.inputs_bytes} "
                f"lower_bound={lb}>")


def estimate(fn, *args, **kwargs):
    """Run ``fn(*args, **kwargs)`` on meta copies of its tensor arguments and return a
    ``MemoryEstimate``: the peak bytes, the live lower bound and the planner's arena plan,
    before any real byte is allocated ("will this fit in N GB?"). Tensors inside tuples,
    lists and dicts are copied too; tensors that ``fn`` reaches otherwise (globals, closures)
    must be meta already, or the ops mixing them raise PyTorch's device error. Values are
    never read, so ``fn`` may not branch on them (``.item()``, ``nonzero`` raise).

    >>> w = tensorlib.randn(1024, 1024, device="meta")        # 4 MiB that do not exist
    >>> est = tensorlib.memory.estimate(lambda x: (x @ w).relu() @ w, tensorlib.ones(64, 1024))
    >>> est.peak_bytes - est.inputs_bytes                   # two (64, 1024) float32 results
    524288
    """
    base = memory_allocated(_META)
    meta_args = _to_meta(args)
    meta_kwargs = _to_meta(kwargs)
    inputs = memory_allocated(_META) - base
    reset_peak_memory_stats(_META)
    planned = _plan(fn)
    result = planned(*meta_args, **meta_kwargs)
    peak = max(max_memory_allocated(_META) - base, inputs)
    del meta_args, meta_kwargs
    left = memory_allocated(_META) - base
    return MemoryEstimate(peak, inputs, left, planned.last_plan, result)
