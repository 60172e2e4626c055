"""Optimizers, PyTorch's ``torch.optim``.

This package will hold ``Optimizer`` (parameter groups, ``state_dict``, ``zero_grad``) and
``SGD``, ``Adam``, ``AdamW``, ... with fused multi-tensor updates whose state is counted
under the optimizer-state memory role, and ``lr_scheduler``. Nothing is defined yet.
"""
