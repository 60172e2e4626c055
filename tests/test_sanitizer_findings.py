"""Regression tests for what the sanitized test run (ASan + UBSan: the README's "Sanitizers")
found in tensorlib's Cython core and C kernels. Each case is checked by value here; under the
sanitized build (`tools/sanitizers/run-pytest`) the same calls must also run without a report,
which is what failed before each fix."""
import pytest

import tensorlib

DTYPES = ["bool", "uint8", "int64", "float16", "bfloat16", "float32", "float64"]


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("shape", [(0,), (3, 0), (0, 2, 5)])
def test_filling_an_empty_tensor_touches_no_memory(name, shape):
    """An empty tensor has no storage (a NULL data pointer): filling it with zero called
    memset(NULL, 0, 0), undefined behaviour that UBSan reports."""
    dtype = getattr(tensorlib, name)
    for t in (tensorlib.zeros(shape, dtype=dtype), tensorlib.empty(shape, dtype=dtype).zero_(),
              tensorlib.empty(shape, dtype=dtype).fill_(0), tensorlib.full(shape, 0, dtype=dtype),
              tensorlib.zeros_like(tensorlib.empty(shape, dtype=dtype))):
        assert t.shape == shape and t.dtype is dtype and t.numel() == 0
        assert t.tolist() == tensorlib.empty(shape).tolist()
