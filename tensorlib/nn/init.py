"""Parameter initialisation, PyTorch's ``torch.nn.init``.

This module will hold the in-place initialisers (``uniform_``, ``normal_``, ``zeros_``,
``kaiming_uniform_``, ``xavier_normal_``, ``calculate_gain``, ...), drawing from
``tensorlib.Generator`` under ``no_grad``. Nothing is defined yet.
"""
