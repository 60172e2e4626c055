"""ChannelShuffle.

>>> tensorlib.nn.ChannelShuffle(2)(tensorlib.arange(4.0).reshape(1, 4, 1)).reshape(-1).tolist()
[0.0, 2.0, 1.0, 3.0]
"""
from tensorlib.nn import functional as F
from tensorlib.nn.modules.module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Interleave the channels of ``groups`` groups.

    >>> ChannelShuffle(2)
    ChannelShuffle(groups=2)
    """

    __constants__ = ["groups"]

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
