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
# Advanced indexing: PyTorch applies integer indices (and 0-d integer tensors) as select()
# BEFORE the tensor indices,
# so an int never counts as an advanced index (x[0, :, [0, 1]] has shape (3, 2) for x of
# shape (2, 3, 4); NumPy gives (2, 3)). Build the NumPy reference in two steps: basic part
# first, then the advanced part on that view.
def torch_style_index(arr, index):
    """arr[index] with PyTorch's rule for ints among tensor indices (see above). Index
    elements that are arrays (np.ndarray) are the advanced ones."""
    if not isinstance(index, tuple):
        index = (index,)
    basic, second = [], []
    for e in index:
        if isinstance(e, np.ndarray) and e.ndim == 0 and e.dtype != bool:
            basic.append(int(e))    # a 0-d integer index selects, like an int
        elif isinstance(e, np.ndarray):
            # a mask covers as many dims as it has
            basic.extend([slice(None)] * (e.ndim if e.dtype == bool else 1))
            second.append(e)
        elif e is None:
            basic.append(None)
            second.append(slice(None))
        elif e is Ellipsis:
            basic.append(Ellipsis)
            second.append(Ellipsis)
        elif isinstance(e, slice):
            basic.append(e)
            second.append(slice(None))
        else:                       # an int: selected away in the basic step
            basic.append(e)
    if Ellipsis not in basic:
        basic.append(Ellipsis)      # so the basic step always gives a view, never a scalar
    view = arr[tuple(basic)]
    return view, tuple(second)

# A non-tuple list holding slices, None, Ellipsis, sequences or tensors is read as a tuple
# by PyTorch (with a deprecation warning); NumPy 2 reads every list as one index array.
NON_TUPLE_SEQUENCE_IS_TUPLE = True

# x[advanced] = tensor_of_another_dtype: PyTorch raises "Index put requires the source and
# destination dtypes match"; tensorlib's __setitem__ converts the value (as basic-index
# assignment does in both). index_put_ keeps PyTorch's check.
SETITEM_CASTS_TENSOR_VALUES = True

# index_put_ / index_fill_ (and x[idx] = v) on an expanded tensor: PyTorch warns that this is
# deprecated and writes; tensorlib raises the internal-overlap error every other write gives.
EXPANDED_INDEX_PUT_RAISES = RuntimeError

# Indices are validated even when an op has no element to touch (an empty result, source or
# self): PyTorch skips its kernel there and so its checks (x[[5]] on a (2, 0) tensor gives an
# empty result; an empty float index passes gather/scatter). tensorlib raises as for any
# other bad index.
EMPTY_OPS_STILL_VALIDATE_INDICES = True

# y.backward(g): when g reaches a leaf through view ops only (y = x.reshape(...)), PyTorch's
# AccumulateGrad may take a view of g itself as x.grad, so a later backward adds into the
# caller's g. tensorlib's .grad never shares memory with a tensor the caller holds (it copies).
GRAD_NEVER_ALIASES_GRADIENT_ARG = True

# An in-place op on an integer or bool tensor whose other operand requires grad: PyTorch
# records some (int_x.le_(y), int_x[...] = y (FillBackward3)) and so makes an integer tensor
# require grad, which requires_grad_() itself forbids; tensorlib never does (as PyTorch's
# copy_ does not): integer and bool tensors never require grad.
INT_INPLACE_NEVER_REQUIRES_GRAD = True

# A write that raises (x[idx] = v or index_put_ with an index out of range) leaves tensorlib's
# tensor unchanged: every index is checked before the first element is written. PyTorch's CPU
# kernel checks each index as it writes, so the elements before the bad one are written when
# it raises (and _version does not move).
FAILED_WRITES_ARE_ATOMIC = True

# fill_ / full of a float16 or bfloat16 tensor with a number beyond its range: PyTorch raises
# "value cannot be converted to type ... without overflow", except for a tensor of one element,
# whose fast path stores inf unchecked. tensorlib raises whatever the size.
ONE_ELEMENT_HALF_FILL_IS_CHECKED = RuntimeError
