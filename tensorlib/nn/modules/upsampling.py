"""Upsample, UpsamplingNearest2d and UpsamplingBilinear2d over ``F.interpolate``.

>>> tensorlib.nn.Upsample(scale_factor=2)
Upsample(scale_factor=2.0, mode='nearest')
"""
from tensorlib.nn import functional as F
from tensorlib.nn.modules.module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resize the spatial dims (see ``F.interpolate``).

    >>> Upsample(size=(3, 4), mode="bilinear")
    Upsample(size=(3, 4), mode='bilinear')
    """

    __constants__ = ["size", "scale_factor", "mode", "align_corners", "name",
                     "recompute_scale_factor"]

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode,
                             self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def __setstate__(self, state):
        if "recompute_scale_factor" not in state:
            state["recompute_scale_factor"] = True
        super().__setstate__(state)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of (N, C, H, W).

    >>> UpsamplingNearest2d(scale_factor=2)(tensorlib.ones(1, 1, 1, 1)).shape
    tensorlib.Size([1, 1, 2, 2])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of (N, C, H, W) with ``align_corners=True``.

    >>> UpsamplingBilinear2d(size=4)
    UpsamplingBilinear2d(size=4, mode='bilinear')
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
