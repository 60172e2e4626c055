"""PyTorch's ``torch.utils.data._utils`` paths (``collate``, ``worker``), which code written
for PyTorch imports from, as aliases of this package's modules."""
from tensorlib.utils.data._utils import collate, worker

__all__ = ["collate", "worker"]
