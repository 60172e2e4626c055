"""Parameters to one flat vector and back, PyTorch's ``torch.nn.utils.convert_parameters``.

>>> import tensorlib
>>> ps = [tensorlib.ones(2, 2), tensorlib.zeros(3)]
>>> parameters_to_vector(ps).tolist()
[1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
"""
import tensorlib as _t

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param, old_device):
    if old_device is None:
        return param.device
    if param.device != old_device:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return old_device


def parameters_to_vector(parameters):
    """Concatenate the flattened ``parameters`` into one 1-D tensor (differentiable).

    >>> parameters_to_vector([tensorlib.tensor([[1.0], [2.0]])]).shape
    tensorlib.Size([2])
    """
    device = None
    flat = []
    for p in parameters:
        device = _check_param_device(p, device)
        flat.append(p.view(-1))
    return _t.cat(flat)


def _typename(obj):
    if isinstance(obj, _t.Tensor):
        return f"tensorlib.{obj.dtype}"
    return type(obj).__qualname__


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of the 1-D ``vec`` into ``parameters`` (each parameter's
    ``.data`` becomes a view of ``vec``).

    >>> ps = [tensorlib.zeros(2), tensorlib.zeros(1, 2)]
    >>> vector_to_parameters(tensorlib.tensor([1.0, 2.0, 3.0, 4.0]), ps)
    >>> ps[1].tolist()
    [[3.0, 4.0]]
    """
    if not isinstance(vec, _t.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    device = None
    pointer = 0
    for p in parameters:
        device = _check_param_device(p, device)
        n = p.numel()
        p.data = vec[pointer:pointer + n].view_as(p).data
        pointer += n
