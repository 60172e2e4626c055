"""PixelShuffle and PixelUnshuffle.

>>> tensorlib.nn.PixelShuffle(2)(tensorlib.zeros(1, 4, 3, 3)).shape
tensorlib.Size([1, 1, 6, 6])
"""
from tensorlib.nn import functional as F
from tensorlib.nn.modules.module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """(*, C r^2, H, W) -> (*, C, H r, W r).

    >>> PixelShuffle(2)
    PixelShuffle(upscale_factor=2)
    """

    __constants__ = ["upscale_factor"]

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H r, W r) -> (*, C r^2, H, W).

    >>> PixelUnshuffle(3)
    PixelUnshuffle(downscale_factor=3)
    """

    __constants__ = ["downscale_factor"]

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
