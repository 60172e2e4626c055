"""The CUDA device, PyTorch's ``torch.cuda``.

This build has no CUDA back end, so no CUDA device is ever available: ``is_available()`` is
False and ``device_count()`` is 0, which is what PyTorch code checks before choosing a
device. Devices, streams, events and the CUDA memory counters come with the CUDA back end
(its kernels live in the repository's top-level ``cuda/`` folder).

>>> device = "cuda" if tensorlib.cuda.is_available() else "cpu"
>>> device, tensorlib.cuda.device_count()
('cpu', 0)
"""

__all__ = ["is_available", "device_count"]


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
