"""tl_fused's own test: each way of the fused op against NumPy. Run after installing the
project: ``pip install --no-build-isolation . && pytest tests``."""
import numpy as np
import pytest

import tensorlib
import tl_fused


@pytest.mark.parametrize("dtype", [tensorlib.float32, tensorlib.float64])
@pytest.mark.parametrize("fn", [tl_fused.scale_add, tl_fused.scale_add_rows, tl_fused.c_scale_add])
def test_scale_add_matches_numpy(fn, dtype):
    x = tensorlib.randn(37, 19, dtype=dtype)
    y = tensorlib.randn(37, 19, dtype=dtype)
    out = fn(x, y, 1.5)
    tol = 1e-6 if dtype is tensorlib.float32 else 1e-12
    np.testing.assert_allclose(out.numpy(), 1.5 * x.numpy() + y.numpy(), rtol=tol, atol=tol)


def test_rows_reads_strided_inputs():
    x = tensorlib.randn(8, 300, dtype=tensorlib.float64).t()     # 300 rows, column-major
    y = tensorlib.randn(300, 16, dtype=tensorlib.float64)[:, ::2]
    out = tl_fused.scale_add_rows(x, y, -2.0)
    np.testing.assert_allclose(out.numpy(), -2.0 * x.numpy() + y.numpy(), rtol=1e-12)


def test_softmax_rows_matches_numpy():
    x = tensorlib.randn(50, 7, dtype=tensorlib.float64) * 10
    e = np.exp(x.numpy() - x.numpy().max(axis=1, keepdims=True))
    np.testing.assert_allclose(tl_fused.softmax_rows(x).numpy(), e / e.sum(axis=1, keepdims=True),
                               rtol=1e-12)


def test_in_place_bumps_the_version():
    x = tensorlib.ones(4)
    v = x._version
    tl_fused.scale_add_(x, tensorlib.ones(4), 2.0)
    tl_fused.c_scale_add_(x, tensorlib.ones(4), 1.0)
    assert x.tolist() == [4.0] * 4 and x._version == v + 2
