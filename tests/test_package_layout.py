"""The package's public layout matches PyTorch's: ``tensorlib.tensor`` is the function and the
class lives in ``tensorlib._tensor``; the sub-packages PyTorch code reaches for exist; and
``tensorlib.cuda`` answers the questions PyTorch code asks before picking a device."""
import importlib
import os
import pickle

import pytest

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


@pytest.mark.parametrize("name", ["tensorlib.nn", "tensorlib.nn.functional",
                                  "tensorlib.nn.modules", "tensorlib.nn.init",
                                  "tensorlib.optim", "tensorlib.utils", "tensorlib.utils.data",
                                  "tensorlib.serialization", "tensorlib.cuda"])
def test_packages_exist_as_attributes(torch, name):
    module = importlib.import_module(name)
    assert module.__doc__ and module.__doc__.strip()
    # reachable by attribute after `import tensorlib`, as `torch.nn.init` & co. are
    obj = tensorlib
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    assert obj is module
    importlib.import_module(name.replace("tensorlib", "torch"))


def test_cuda_not_available_without_a_runtime(torch):
    """Without pycuda and a driver (and TENSORLIB_CUDA unset), no CUDA device, as a CPU build
    of PyTorch says; the test session itself runs the emulator (conftest.py)."""
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if not k.startswith("TENSORLIB_CUDA")}
    code = ("import tensorlib; d = 'cuda' if tensorlib.cuda.is_available() else 'cpu'; "
            "print(tensorlib.cuda.is_available(), type(tensorlib.cuda.device_count()).__name__, "
            "tensorlib.cuda.device_count(), tensorlib.ones(2, device=d).tolist())")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=os.path.dirname(os.path.dirname(tensorlib.__file__)), timeout=120)
    assert r.returncode == 0, r.stderr
    if not torch.cuda.is_available():       # the torch installed for the tests is a CPU build
        assert r.stdout.split() == ["False", "int", "0", "[1.0,", "1.0]"]



def test_op_family_modules_join_the_core():
    # the op families compiled as modules of their own (tensorlib/ops/codegen.py's
    # FAMILY_MODULES) add every op to the core's tables, and the core names each of them
    import importlib
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(tensorlib.__file__), "ops"))
    try:
        import codegen
        from decl import FAMILIES
    finally:
        sys.path.pop(0)
    core = importlib.import_module("tensorlib._core.tensor")
    for family in FAMILIES:
        name = family.__name__.rsplit(".", 1)[-1]
        module = (importlib.import_module(f"tensorlib._core.{codegen.FAMILY_MODULES[name]}")
                  if name in codegen.FAMILY_MODULES else core)
        for decl in family.OPS:
            variants = decl.get("variants", "function method").split()
            if "function" in variants:
                fn = core._GENERATED_FUNCTIONS[decl["name"]]
                assert getattr(module, "_f_" + decl["name"]) is fn
                assert getattr(tensorlib, decl["name"]) is fn
            if "method" in variants:
                assert callable(getattr(tensorlib.Tensor, decl["name"]))
    # every operator slot of TensorBase reaches its op (none is left to the unset entry);
    # some reject int operands (x /= y), as in PyTorch, with the op's own error
    x = tensorlib.tensor([[1, 2], [3, 4]])
    for slot, (op, order, inplace) in core._OPERATOR_SLOTS.items():
        args = () if order == "self" else (tensorlib.tensor([[1, 1], [1, 1]]),)
        try:
            getattr(x.clone(), slot)(*args)
        except RuntimeError as e:
            assert "before its op family module was loaded" not in str(e)
    assert (x @ x).tolist() == [[7, 10], [15, 22]]
    assert (2 / tensorlib.tensor([4.0])).tolist() == [0.5]
    assert x[tensorlib.tensor([1, 0])].tolist() == [[3, 4], [1, 2]]


def test_cuda_kernel_sources_ship_with_the_package():
    # installed: package data copied by setup.py's build_py; in a checkout: the cuda/ folder
    import glob
    import os
    d = tensorlib.cuda.kernel_dir()
    assert os.path.isfile(os.path.join(d, "README.md"))
    repo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cuda")
    if os.path.isdir(repo):
        names = lambda folder: sorted(os.path.basename(p) for p in glob.glob(folder + "/*.cu*"))
        assert names(d) == names(repo)
