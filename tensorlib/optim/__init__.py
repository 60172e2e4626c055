"""Optimizers, PyTorch's ``torch.optim``: ``Optimizer`` (parameter groups, hooks,
``state_dict`` in PyTorch's layout) and the update rules.

>>> w = tensorlib.nn.Parameter(tensorlib.ones(2))
>>> opt = tensorlib.optim.SGD([w], lr=0.25)
>>> w.sum().backward(); opt.step(); opt.zero_grad(); w.tolist()
[0.75, 0.75]
"""
from tensorlib.optim import optimizer
from tensorlib.optim.optimizer import Optimizer
from tensorlib.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "optimizer"]
from tensorlib.optim import lr_scheduler
from tensorlib.optim.lbfgs import LBFGS
from tensorlib.optim import swa_utils
