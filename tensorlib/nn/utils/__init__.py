"""Utilities around the layers, PyTorch's ``torch.nn.utils``: gradient clipping, parameters
to a flat vector and back, and (``tensorlib.nn.utils.rnn``) packing of variable-length
sequences for the recurrent layers.

>>> import tensorlib
>>> w = tensorlib.zeros(2, requires_grad=True)
>>> w.grad = tensorlib.tensor([3.0, 4.0])
>>> tensorlib.nn.utils.clip_grad_norm_([w], 2.5).item()
5.0
"""
from tensorlib.nn.utils import rnn
from tensorlib.nn.utils.clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_,
                                          clip_grads_with_norm_, get_total_norm)
from tensorlib.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm", "parameters_to_vector", "vector_to_parameters", "rnn"]

# -- parametrizations (they need Module, so they load after the layers) ----------------------
from tensorlib.nn.utils import parametrize, parametrizations  # noqa: E402
from tensorlib.nn.utils.weight_norm import weight_norm, remove_weight_norm  # noqa: E402
from tensorlib.nn.utils.spectral_norm import spectral_norm, remove_spectral_norm  # noqa: E402
from tensorlib.nn.utils.init import skip_init  # noqa: E402

__all__ += ["parametrize", "parametrizations", "weight_norm", "remove_weight_norm",
            "spectral_norm", "remove_spectral_norm", "skip_init"]
