"""Optimizers, PyTorch's ``torch.optim``: ``Optimizer`` (parameter groups, hooks,
``state_dict`` in PyTorch's layout) and the update rules, each one fused C pass per
parameter group over all its tensors.

>>> w = tensorlib.nn.Parameter(tensorlib.ones(2))
>>> opt = tensorlib.optim.SGD([w], lr=0.25)
>>> w.sum().backward(); opt.step(); opt.zero_grad(); w.tolist()
[0.75, 0.75]
"""
from tensorlib.optim import optimizer
from tensorlib.optim.adadelta import Adadelta
from tensorlib.optim.adagrad import Adagrad
from tensorlib.optim.adam import Adam
from tensorlib.optim.adamax import Adamax
from tensorlib.optim.adamw import AdamW
from tensorlib.optim.asgd import ASGD
from tensorlib.optim.nadam import NAdam
from tensorlib.optim.optimizer import Optimizer
from tensorlib.optim.radam import RAdam
from tensorlib.optim.rmsprop import RMSprop
from tensorlib.optim.rprop import Rprop
from tensorlib.optim.sgd import SGD

from tensorlib.optim.lbfgs import LBFGS
from tensorlib.optim import lr_scheduler, swa_utils

__all__ = ["ASGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "NAdam",
           "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "lr_scheduler", "optimizer",
           "swa_utils"]
