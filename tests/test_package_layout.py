"""The package's public layout matches PyTorch's: ``tensorlib.tensor`` is the function and the
class lives in ``tensorlib._tensor``."""
import os
import pickle

import tensorlib


def test_tensor_is_the_function_and_the_class_lives_in_tensor_module(torch):
    from tensorlib._tensor import Tensor, Size
    assert Tensor is tensorlib.Tensor and Size is tensorlib.Size
    assert callable(tensorlib.tensor) and not isinstance(tensorlib.tensor, type)
    assert tensorlib.tensor([1, 2]).tolist() == [1, 2]
    assert type(tensorlib.tensor([1])) is tensorlib._tensor.Tensor
    # the same layout as PyTorch's
    assert torch._tensor.Tensor is torch.Tensor and callable(torch.tensor)
    assert tensorlib.Tensor.__module__ == torch.Tensor.__module__.replace("torch", "tensorlib")
    assert tensorlib.Size.__module__ == torch.Size.__module__.replace("torch", "tensorlib")
    assert not os.path.exists(os.path.join(os.path.dirname(tensorlib.__file__), "tensor.py"))


def test_size_pickles_by_its_public_name():
    s = tensorlib.zeros(2, 3).shape
    data = pickle.dumps(s)
    assert b"tensorlib._tensor" not in data
    s2 = pickle.loads(data)
    assert type(s2) is tensorlib.Size and s2 == (2, 3)

