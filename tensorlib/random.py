"""Random number generation: a counter-based Philox4x32-10 generator per device.

Streams are reproducible for a seed (and independent of how work is split across threads)
but are not bit-equal to PyTorch's.

>>> import tensorlib
>>> _ = tensorlib.manual_seed(0); a = tensorlib.rand(3)
>>> _ = tensorlib.manual_seed(0); bool((a.numpy() == tensorlib.rand(3).numpy()).all())
True
"""
import contextlib

from tensorlib._core import random as _core_random

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "fork_rng"]


class Generator(_core_random.Generator):
    """A random generator (Philox4x32-10). Its state is a ByteTensor, as in PyTorch.

    >>> g = tensorlib.Generator().manual_seed(42); tensorlib.rand(2, generator=g).shape
    tensorlib.Size([2])
    """

    __slots__ = ()

    def get_state(self):
        """The generator's state as a uint8 tensor (seed and offset)."""
        import tensorlib
        import numpy as np
        raw = _core_random.Generator.get_state(self)
        return tensorlib.tensor(np.frombuffer(raw, dtype=np.uint8).copy(), dtype=tensorlib.uint8)

    def set_state(self, new_state):
        """Restore a state from ``get_state()`` (a uint8 tensor or bytes)."""
        if hasattr(new_state, "numpy"):
            if new_state.dtype.name != "uint8":
                raise RuntimeError(f"set_state expects a torch.ByteTensor, but got {new_state.type()}")
            new_state = new_state.numpy().tobytes()
        _core_random.Generator.set_state(self, new_state)
        return self


default_generator = Generator()
_core_random._set_default_generator(default_generator)


def manual_seed(seed):
    """Seed the default generator; returns it.

    >>> tensorlib.manual_seed(1).initial_seed()
    1
    """
    # int() first, as torch.manual_seed (1.5 seeds 1; "a" and None raise its errors); the
    # generator's own manual_seed takes ints only
    return default_generator.manual_seed(int(seed))


def seed():
    """Seed the default generator non-deterministically; returns the seed.

    >>> isinstance(tensorlib.seed(), int)
    True
    """
    return default_generator.seed()


def initial_seed():
    """The seed the default generator was last seeded with.

    >>> tensorlib.manual_seed(5); tensorlib.initial_seed()
    5
    """
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor.

    >>> s = tensorlib.get_rng_state(); a = tensorlib.rand(1); tensorlib.set_rng_state(s)
    >>> bool(a.item() == tensorlib.rand(1).item())
    True
    """
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the default generator's state from ``get_rng_state()``."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, device_type="cpu"):
    """Run a block with the RNG state saved and restored afterwards.

    >>> with tensorlib.random.fork_rng():
    ...     _ = tensorlib.rand(3)      # does not disturb the outer stream
    """
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
