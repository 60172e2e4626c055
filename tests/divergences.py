"""Where PyTorch (our spec) differs from NumPy (our value reference), in one place.

Tests compare against NumPy and consult this module wherever the two disagree.
"""
import numpy as np

# x[::-1] : NumPy reverses, PyTorch raises ValueError("step must be greater than zero").
NEGATIVE_SLICE_STEP_RAISES = ValueError

# x.squeeze(d) on a dim whose size is not 1: NumPy raises, PyTorch returns x unchanged.
SQUEEZE_NON_ONE_DIM_IS_NOOP = True

# std/var: NumPy defaults to ddof=0, PyTorch to the unbiased estimate (correction=1).
STD_DEFAULT_CORRECTION = 1

# median of an even count: NumPy averages the middle two, PyTorch returns the lower one.
def median_lower(values, axis=None):
    v = np.sort(np.asarray(values), axis=axis)
    if axis is None:
        v = v.ravel()
        return v[(v.size - 1) // 2]
    n = v.shape[axis]
    return np.take(v, (n - 1) // 2, axis=axis)

# integer overflow: both wrap, but PyTorch defines it (we compile with -fwrapv).
INTEGERS_WRAP = True

# sums of bool/int tensors are int64 in PyTorch (NumPy uses the platform int / keeps uint).
INT_SUM_DTYPE = np.int64

# Python float scalars are weak in PyTorch: half_tensor * 2.5 stays float16 (NumPy 2 agrees;
# NumPy 1 did not).
HALF_TIMES_PY_FLOAT_DTYPE = np.float16

# float64 -> float16: PyTorch converts through float32 (two roundings: 1 + 2**-11 + 2**-40
# becomes 1.0); NumPy rounds once (1.0009765625). tensorlib follows PyTorch.
F64_TO_F16_ROUNDS_THROUGH_F32 = True
# matmul/mm/bmm/mv/dot of bool tensors: NumPy computes (logical and/or), PyTorch raises
# NotImplementedError ("addmm_impl_cpu_" / "bmm" / "addmv_impl_cpu" / "dot" not implemented for
# 'Bool'). outer of bools is a product, allowed by both.
BOOL_MATMUL_RAISES = NotImplementedError

# einsum: PyTorch broadcasts a size-1 subscript against the size it has in other operands and
# sums ellipsis dims that an explicit output leaves out; NumPy raises for both.
EINSUM_BROADCASTS_SIZE_ONE = True
