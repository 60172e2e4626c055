"""Utilities, PyTorch's ``torch.utils``; the data-loading package is ``tensorlib.utils.data``."""
from tensorlib.utils import data, dlpack, hooks

__all__ = ["data", "dlpack", "hooks"]
