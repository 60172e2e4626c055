"""The CUDA device, PyTorch's ``torch.cuda``.

This build has no CUDA back end, so no CUDA device is ever available: ``is_available()`` is
False and ``device_count()`` is 0, which is what PyTorch code checks before choosing a
device. Devices, streams, events and the CUDA memory counters come with the CUDA back end
(its kernels live in the repository's top-level ``cuda/`` folder).

>>> device = "cuda" if tensorlib.cuda.is_available() else "cpu"
>>> device, tensorlib.cuda.device_count()
('cpu', 0)
"""

import os as _os

__all__ = ["is_available", "device_count", "kernel_dir"]


def is_available():
    """Whether a CUDA device can be used: always False in this build (no CUDA back end).

    >>> tensorlib.cuda.is_available()
    False
    """
    return False


def device_count():
    """The number of CUDA devices that can be used: always 0 in this build.

    >>> tensorlib.cuda.device_count()
    0
    """
    return 0


def kernel_dir():
    """The folder of the CUDA back end's ``.cu`` sources: ``tensorlib/cuda/kernels`` in an
    installed wheel (package data), the repository's ``cuda/`` folder in a source checkout.

    >>> import os; os.path.isdir(tensorlib.cuda.kernel_dir())
    True
    """
    here = _os.path.dirname(_os.path.abspath(__file__))
    installed = _os.path.join(here, "kernels")
    if _os.path.isdir(installed):
        return installed
    return _os.path.join(_os.path.dirname(_os.path.dirname(here)), "cuda")
