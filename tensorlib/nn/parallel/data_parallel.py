"""``DataParallel``: PyTorch's ``torch.nn.DataParallel``. Without CUDA devices it wraps the
module transparently: ``forward`` calls the module, ``state_dict`` keys gain the
``module.`` prefix."""
from tensorlib.nn.modules.module import Module

__all__ = ["DataParallel"]


def _cuda_device_count():
    try:
        import tensorlib.cuda as cuda
        return cuda.device_count() if cuda.is_available() else 0
    except (ImportError, AttributeError):
        return 0


class DataParallel(Module):
    """Run ``module`` split along ``dim`` over ``device_ids``. With no CUDA device (the CPU
    build) it runs the module itself, so results equal the module's.

    >>> m = tensorlib.nn.Linear(2, 1); dp = tensorlib.nn.DataParallel(m)
    >>> dp.module is m, bool((dp(tensorlib.ones(3, 2)) == m(tensorlib.ones(3, 2))).all())
    (True, True)
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.dim = dim
        if _cuda_device_count() == 0:
            self.device_ids = []
            self.output_device = None
            return
        # replicas on several GPUs need the CUDA back end's scatter/gather (issue 13)
        raise NotImplementedError("DataParallel over CUDA devices is not supported yet: it runs "
                                  "as a transparent wrapper on the CPU only")

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
