# Elementwise compute: type promotion, broadcasting, output allocation and the write rules,
# then one call into the C driver (cpu_elementwise.c) with the op's typed inner loop.
# Python scalars travel by value (converted once into the loop dtype, stride 0); they are
# never allocated as tensors.
# (included into elementwise.pyx, the elementwise family's module)
from libc.math cimport INFINITY, pow as c_pow10



# How an op's loop dtype and output dtype follow from the promoted input dtype.
cdef enum EwRule:
    RULE_SAME = 0        # compute and return the promoted dtype (add, mul, maximum ...)
    RULE_FLOAT = 1       # integers/bool promote to the default float dtype (div, exp ...)
    RULE_BOOL_OUT = 2    # compute in the promoted dtype, return bool (eq, isnan ...)
    RULE_INT = 3         # integers and bool only (bitwise ops)
    RULE_NO_BOOL = 4     # like SAME, but bool inputs are an error (sub, neg)


@cython.final
cdef class EwOp:
    """An elementwise op: its name (for errors), its loop table and its dtype rule."""
    cdef str name
    cdef const tl_loop_fn* loops
    cdef int rule

    @staticmethod
    cdef EwOp make(str name, const tl_loop_fn* loops, int rule):
        cdef EwOp op = EwOp.__new__(EwOp)
        op.name = name
        op.loops = loops
        op.rule = rule
        return op


# the EwOp of every kernel declared in tensorlib/ops/decl/ (OP_ADD, OP_EXP, ...: generated)
include "_ew_ops.pxi"

# kernels written by hand in cpu_elementwise.c
cdef EwOp OP_CLAMP_SCALAR = EwOp.make("clamp", ew_loops("clamp_scalar"), RULE_SAME)
cdef EwOp OP_WHERE = EwOp.make("where", ew_loops("where"), RULE_SAME)
cdef EwOp OP_CLAMP = EwOp.make("clamp", ew_loops("clamp"), RULE_SAME)
cdef EwOp OP_LERP = EwOp.make("lerp", ew_loops("lerp"), RULE_SAME)


cdef object _slot_rtruediv(TensorBase self, object other):
    """``other / self`` (TensorBase.__rtruediv__): as PyTorch, ``2 / x`` is
    x.reciprocal() * 2, the same values to the last bit (a direct division differs by an ulp
    for a third of float32 inputs) and the same graph."""
    return _call_mul(_call_reciprocal(self, None, False), other, None, False) \
        if _slot_ok(other) else NotImplemented


# ---------------------------------------------------------------------------------------------
# the generic entry point

cdef struct ScalarSlot:
    # one Python scalar converted to the loop dtype (8 bytes is enough for any dtype)
    char bytes[8]


cdef int _scalar_into(object v, int dt, char* dst) except -1:
    """Convert a Python number into one element of dtype ``dt`` at dst (by value)."""
    cdef int64_t zero = 0
    cdef int64_t iv
    cdef double dv
    cdef uint8_t bv
    if isinstance(v, bool):
        bv = v
        copy_cast(0, NULL, dst, &zero, dt, <char*>&bv, &zero, DT_BOOL)
    elif isinstance(v, int):
        if _python_int(v, &iv) and dtype_of(dt).is_floating_point:
            dv = v                      # a uint64 number: its value, rounded once
            copy_cast(0, NULL, dst, &zero, dt, <char*>&dv, &zero, DT_FLOAT64)
            return 0
        copy_cast(0, NULL, dst, &zero, dt, <char*>&iv, &zero, DT_INT64)
    else:
        dv = v
        copy_cast(0, NULL, dst, &zero, dt, <char*>&dv, &zero, DT_FLOAT64)
    return 0


cdef inline bint _is_number(object v):
    return isinstance(v, (int, float)) or isinstance(v, np.number) or isinstance(v, np.bool_)


cdef str _torch_type_name(int code):
    return _TORCH_TYPE_NAME[code]


cdef int _loop_dtype_of(int code) noexcept:
    return DT_FLOAT32 if code == DT_FLOAT16 or code == DT_BFLOAT16 else code


cdef int _coalesce(tl_ew_iter* it) noexcept:
    """Drop size-1 dims and merge neighbours whose strides line up for every operand."""
    cdef int i, k, n = 0
    cdef bint ok
    for i in range(it.ndim):
        if it.shape[i] == 1:
            continue
        if n > 0:
            ok = True
            for k in range(it.nops):
                if it.strides[k][n - 1] != it.strides[k][i] * it.shape[i]:
                    ok = False
                    break
            if ok:
                it.shape[n - 1] *= it.shape[i]
                for k in range(it.nops):
                    it.strides[k][n - 1] = it.strides[k][i]
                continue
        it.shape[n] = it.shape[i]
        for k in range(it.nops):
            it.strides[k][n] = it.strides[k][i]
        n += 1
    it.ndim = n
    return 0


cdef int _result_code(EwOp op, tuple inputs, int* loop_code, int* out_code,
                      int* common) except -1:
    """Apply PyTorch's promotion to the inputs, then the op's rule; ``common``: where to put
    the promoted dtype the operands are converted to."""
    cdef int c = result_type_codes(inputs)
    if common != NULL:
        common[0] = c
    cdef int rule = op.rule
    if rule == RULE_FLOAT:
        if not dtype_of(c).is_floating_point:
            c = default_float_dtype().code
        out_code[0] = c
    elif rule == RULE_BOOL_OUT:
        out_code[0] = DT_BOOL
    elif rule == RULE_INT:
        if dtype_of(c).is_floating_point:
            raise NotImplementedError(f'"{op.name}_cpu" not implemented for \'{_torch_type_name(c)}\'')
        out_code[0] = c
    else:
        # sub refuses any bool operand, neg a bool input (PyTorch)
        if rule == RULE_NO_BOOL and (c == DT_BOOL or (op is OP_SUB and _any_bool(inputs))):
            if op is OP_SUB and c == DT_BOOL:
                raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                                   "supported. Use the `^` or `logical_xor()` operator instead.")
            if op is OP_SUB:
                raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                                   "supported. If you are trying to invert a mask, use the `~` or "
                                   "`logical_not()` operator instead.")
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                               "you are trying to invert a mask, use the `~` or `logical_not()` "
                               "operator instead.")
        out_code[0] = c
    loop_code[0] = _loop_dtype_of(c)
    if op.loops[loop_code[0]] == NULL:
        raise NotImplementedError(f'"{op.name}_cpu" not implemented for \'{_torch_type_name(c)}\'')
    return 0


cdef bint _any_bool(tuple inputs):
    """Whether an operand is a bool tensor or a Python bool."""
    for x in inputs:
        if isinstance(x, bool) or (isinstance(x, TensorBase) and
                                   (<TensorBase>x)._dtype.code == DT_BOOL):
            return True
    return False


cdef bint _reduced_promotion(tuple inputs, int* common) except -1:
    """Whether some operand is a float16/bfloat16 tensor and the promoted dtype (put in
    ``common``) is one of those."""
    cdef object x
    for x in inputs:
        if isinstance(x, TensorBase) and _is_reduced((<TensorBase>x)._dtype.code):
            common[0] = result_type_codes(inputs)
            return _is_reduced(common[0])
    return False


cdef inline bint _is_reduced(int code) noexcept:
    return code == DT_FLOAT16 or code == DT_BFLOAT16


cdef object _round_scalar(object v, int code):
    """The Python number ``v`` rounded to the float dtype ``code``, as a Python float."""
    cdef ScalarSlot slot
    cdef double dv
    cdef int64_t zero = 0
    _scalar_into(float(v), code, slot.bytes)
    copy_cast(0, NULL, <char*>&dv, &zero, DT_FLOAT64, slot.bytes, &zero, code)
    return dv


cdef tuple _reduced_operands(EwOp op, tuple inputs, int code, bint inplace):
    """The operands of an op whose promoted dtype is float16/bfloat16, each converted to that
    dtype first (the loop computes in float32, which alone would keep int 257 or a float32
    operand's extra bits): tensors of another dtype are converted, Python numbers rounded.
    As PyTorch, mul and the divisions (rounding modes and floor_divide too) keep their second
    operand unrounded when it is a Python number or a one-element tensor (PyTorch's kernels
    read such a "scalar" operand's original value in float: ``half * 70000`` and
    ``half * tensor(70000)`` are not inf).
    The destination of an in-place op is left as it is (it is written, and the cast check
    must see its own dtype)."""
    cdef list res = None
    cdef int k
    cdef object x
    cdef DType dt = dtype_of(code)
    cdef bint scalar_kept = (op is OP_MUL or op is OP_DIV or op is OP_DIV_TRUNC or
                             op is OP_DIV_FLOOR)
    for k in range(1 if inplace else 0, len(inputs)):
        x = inputs[k]
        if isinstance(x, TensorBase):
            if (<TensorBase>x)._dtype.code == code or (
                    k == 1 and scalar_kept and (<TensorBase>x)._numel == 1):
                continue
            x = _to_dtype(<TensorBase>x, dt, False)
        elif isinstance(x, bool) or (k == 1 and scalar_kept):
            continue
        else:
            x = _round_scalar(x, code)
        if res is None:
            res = list(inputs)
        res[k] = x
    return inputs if res is None else tuple(res)


cdef object _checked_scalar(object v, int code):
    """A Python number argument (pow's exponent, clamp's bounds, masked_fill's value) that
    must fit the tensor's dtype: out of range raises PyTorch's overflow error instead of
    wrapping (the same rule as a fill). As PyTorch, an integer may be negative for uint8
    (-1 reads as 255)."""
    if code == DT_BOOL or code == DT_FLOAT64 or isinstance(v, bool):
        return v
    _check_scalar_fits(v, dtype_of(code), isinstance(v, (float, np.floating)), True)
    if code == DT_UINT8 and not isinstance(v, (float, np.floating)) and v < 0:
        v = v + 256
    return v


cdef inline int _leaf_check_first(TensorBase t) except -1:
    """PyTorch's autograd layer rejects an in-place change of a leaf that requires grad (or of
    a view of one) before the op looks at its arguments, so that error wins over a dtype or
    shape error (prepare_write repeats the full check when the op writes)."""
    if not _grad_on() or not _req(t):
        return 0
    if t._grad_fn is None and t._view_base is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    _check_view_rebase(t)               # (PyTorch's order: how the view was made first)
    if t._view_base is not None and t._view_base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    return 0


cdef inline int _check_inplace_shape(TensorBase o, int nd, const int64_t* shape) except -1:
    # (a C comparison, not any(<genexpr>): a generator expression makes Cython allocate a
    # closure for every call)
    if o._ndim != nd or memcmp(o._shape, shape, nd * sizeof(int64_t)) != 0:
        raise RuntimeError(f"output with shape {list(o.shape)} doesn't match the broadcast "
                           f"shape {shape_str(nd, shape)}")
    return 0


cdef int _check_inplace_before_types(TensorBase o, tuple inputs, int nd,
                                     const int64_t* shape) except -1:
    """What PyTorch checks of an in-place op's output before it looks for a kernel of the
    dtypes (its TensorIterator's order): that no two of its elements share memory (an
    expanded tensor), that no input partially overlaps it, then its shape."""
    if has_internal_overlap(o._ndim, o._shape, o._strides):
        raise internal_overlap_error()
    for x in inputs[1:]:
        if isinstance(x, TensorBase) and _overlap(o, <TensorBase>x) == OVERLAP_PARTIAL:
            raise input_overlap_error()
    return _check_inplace_shape(o, nd, shape)


cdef int _ew_swap(int nops, int64_t (*bst)[MAX_DIMS], const int64_t* shape, int d0,
                  int d1) noexcept:
    """Whether dim d0 (now inner) must go outside dim d1 for the output's memory order: 1 yes,
    -1 no, 0 no operand can tell. The first operand whose strides (broadcast ones, 0, say
    nothing) differ decides; on equal strides the smaller dim goes inside."""
    cdef int k
    cdef int64_t s0, s1
    for k in range(nops):
        s0 = bst[k][d0]
        s1 = bst[k][d1]
        if s0 == 0 or s1 == 0:
            continue
        if s0 < s1:
            return -1
        if s0 > s1:
            return 1
        if shape[d0] > shape[d1]:
            return 1
    return 0


cdef bint _channels_last_dense(TensorBase t):
    """PyTorch's is_contiguous(channels_last) for a 4-D tensor (channels_last_3d for 5-D):
    dense in the order C, the spatial dims from the last, N; size-1 dims are not looked at."""
    cdef int64_t expected = 1
    cdef int i, d, nd = t._ndim
    for i in range(nd):
        d = 1 if i == 0 else (0 if i == nd - 1 else nd - i)
        if t._shape[d] != 1:
            if t._strides[d] != expected:
                return False
            expected *= t._shape[d]
    return True


cdef TensorBase _ew_output(tuple inputs, int nd, const int64_t* shape, DType dt, Device dev):
    """The new output of an elementwise op, laid out as PyTorch's TensorIterator lays it out:
    contiguous when the tensor operands are contiguous and of the output's shape; channels
    last (4-D; channels_last_3d for 5-D), with its own strides for size-1 dims, when they
    are all of the output's shape and channels-last dense; otherwise dense in the memory
    order the operands' strides suggest (dims sorted by stride, inputs in order, broadcast
    dims ignored), so that ``x.t().exp()`` is transposed like ``x.t()``. Python numbers
    count as 0-d operands (PyTorch wraps them), which have no say but make the shapes
    differ."""
    cdef int64_t bst[8][MAX_DIMS]
    cdef int64_t perm[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int nops = 0, i, j, d0, d1, c, off
    cdef int64_t cur, tmp
    cdef bint fast = True, inverted = True, same = True, cl = nd == 4 or nd == 5
    cdef TensorBase t
    for x in inputs:
        if not isinstance(x, TensorBase):
            fast = fast and nd == 0
            same = False
            continue
        t = <TensorBase>x
        if same and (t._ndim != nd or memcmp(t._shape, shape, nd * sizeof(int64_t)) != 0):
            same = False
        if fast and (not same or not t._contiguous):
            fast = False
        if cl and not (same and _channels_last_dense(t)):
            cl = False
        if nops == 8:
            continue
        off = nd - t._ndim
        for i in range(nd):
            j = i - off
            if j < 0 or (t._shape[j] == 1 and shape[i] != 1):
                bst[nops][i] = 0
            else:
                bst[nops][i] = t._strides[j]
        nops += 1
    if fast or nd < 2:
        return empty_tensor(nd, shape, dt, dev)
    if cl and same:
        channels_last_strides(nd, shape, st)
        t = empty_tensor(nd, shape, dt, dev)
        _set_geometry(t, nd, shape, st)
        return t
    # insertion sort of the dims, innermost first, starting from the reversed order
    for i in range(nd):
        perm[i] = nd - 1 - i
    for i in range(1, nd):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = _ew_swap(nops, bst, shape, <int>perm[d0], <int>perm[d1])
            if c > 0:
                tmp = perm[d0]
                perm[d0] = perm[d1]
                perm[d1] = tmp
                d1 = d0
            elif c < 0:
                break
    for i in range(nd):
        if perm[i] != nd - 1 - i:
            inverted = False
            break
    if inverted:
        return empty_tensor(nd, shape, dt, dev)
    cur = 1
    for i in range(nd):
        st[perm[i]] = cur
        cur *= shape[perm[i]]
    t = empty_tensor(nd, shape, dt, dev)      # (the same bytes, restrided)
    _set_geometry(t, nd, shape, st)
    return t


cdef TensorBase _ew(EwOp op, tuple inputs, object out, bint inplace, const void* extra=NULL,
                    int force_loop=-1, int force_out=-1, bint contiguous=False):
    """Run ``op`` elementwise over ``inputs`` (tensors and Python numbers).

    Output: a new tensor of the broadcast shape, or ``out`` (resized as PyTorch does), or
    inputs[0] when ``inplace``. Every write goes through prepare_write. ``force_loop`` /
    ``force_out`` override the op's dtype rule (used by ops such as where/masked_fill).
    ``contiguous``: a new output is contiguous, not laid out like the inputs."""
    cdef tl_ew_iter it
    cdef ScalarSlot slots[4]
    cdef int64_t shape[MAX_DIMS]
    cdef int64_t tmp[MAX_DIMS]
    cdef int64_t st[MAX_DIMS]
    cdef int nd = 0, k, i, nin = len(inputs), loop_code, out_code, in_loop
    cdef TensorBase t, o
    cdef object x
    cdef Device dev = None
    cdef bint mixed = False
    cdef int common
    # PyTorch's logical_and_/or_/xor_/not_ have no autograd formula and so none of its checks:
    # they write a leaf that requires grad, and a graph through the tensor stays as it was
    cdef bint untracked = inplace and (op is OP_LOGICAL_AND or op is OP_LOGICAL_OR or
                                       op is OP_LOGICAL_XOR or op is OP_LOGICAL_NOT)
    if inplace and not untracked:
        _leaf_check_first(<TensorBase>inputs[0])
    # 1. broadcast shape and device of the tensor inputs (before the dtypes: PyTorch reports
    # a shape mismatch before a dtype its kernel lacks)
    for k in range(nin):
        x = inputs[k]
        if isinstance(x, TensorBase):
            t = <TensorBase>x
            if dev is None:
                dev = t._storage.device
            elif t._storage.device is not dev:
                mixed = True
            if nd == 0 and t._ndim == 0:
                continue
            nd = broadcast_shapes(nd, shape, t._ndim, t._shape, tmp)
            memcpy(shape, tmp, nd * sizeof(int64_t))
    if mixed or dev is None:
        dev = common_device(inputs)          # (a 0-d CPU tensor may join; else it raises)
    # 2. dtypes
    if force_loop >= 0:
        loop_code = force_loop
        out_code = force_out
    else:
        try:
            _result_code(op, inputs, &loop_code, &out_code, NULL)
        except NotImplementedError:
            if inplace:
                # PyTorch checks the output's shape and the cast to it before it looks for
                # a kernel of the dtype
                o = <TensorBase>inputs[0]
                _check_inplace_before_types(o, inputs, nd, shape)
                common = result_type_codes(inputs)
                if not can_cast_codes(common, o._dtype.code):
                    raise RuntimeError(f"result type {_torch_type_name(common)} can't be cast to "
                                       f"the desired output type {_torch_type_name(o._dtype.code)}")
            raise
        # (float16/bfloat16 compute in float32 loops: only those look further)
        if loop_code == DT_FLOAT32 and _reduced_promotion(inputs, &common):
            # (a second entry, so that the common path never rebinds ``inputs``)
            return _ew(op, _reduced_operands(op, inputs, common, inplace), out, inplace, extra,
                       loop_code, out_code)
    # 3. the output
    if inplace:
        o = <TensorBase>inputs[0]
        _check_inplace_before_types(o, inputs, nd, shape)     # (overlaps and shape first)
        if not can_cast_codes(out_code, o._dtype.code):
            raise RuntimeError(f"result type {_torch_type_name(out_code)} can't be cast to the desired "
                               f"output type {_torch_type_name(o._dtype.code)}")
    elif out is not None:
        o = _check_out(out, dtype_of(out_code), op.name)
        if o._dtype.code != out_code and _is_reduced(out_code):
            # PyTorch computes in the half type and casts that rounded result to out's dtype
            # (the float32 loop alone would hand out its unrounded values)
            res = _ew(op, inputs, None, False, extra, loop_code, out_code, contiguous)
            if o._storage.device is not dev:
                raise RuntimeError(f"Expected all tensors to be on the same device, but found "
                                   f"at least two devices, {dev} and {o._storage.device}!")
            _resize_out(o, nd, shape)
            prepare_write(o, <TensorBase>res)
            _copy_into(o, <TensorBase>res)
            return o
        _resize_out(o, nd, shape)
    else:
        o = (empty_tensor(nd, shape, dtype_of(out_code), dev) if contiguous else
             _ew_output(inputs, nd, shape, dtype_of(out_code), dev))
    if inplace or out is not None:
        if o._storage.device is not dev:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {dev} and {o._storage.device}!")
        # an input that overlaps the output in a way one pass could corrupt is read through a
        # copy; then the write rules, whose version bump must come after the last check that
        # can raise (a write that raises writes nothing, its version included)
        for k in range(nin):
            x = inputs[k]
            if isinstance(x, TensorBase):
                i = _overlap(o, <TensorBase>x)
                if i == OVERLAP_PARTIAL:
                    raise input_overlap_error()
                if i == OVERLAP_TOO_HARD:
                    inputs = inputs[:k] + (_contiguous_copy(<TensorBase>x),) + inputs[k + 1:]
        if inplace:
            prepare_inplace_write(o, not untracked)   # (its overlaps: checked above)
        else:
            prepare_write(o, None)
    # 4. the iterator
    it.nops = nin + 1
    it.ndim = nd
    for i in range(nd):
        it.shape[i] = shape[i]
    it.data[0] = tensor_data(o)
    it.dtype[0] = o._dtype.code
    it.loop_dtype[0] = _loop_dtype_of(out_code) if force_loop < 0 else _loop_dtype_of(force_out)
    for i in range(nd):
        it.strides[0][i] = o._strides[i] * o._dtype.itemsize
    for k in range(nin):
        x = inputs[k]
        in_loop = loop_code
        if op is OP_WHERE and k == 0:
            in_loop = DT_BOOL
        if isinstance(x, TensorBase):
            t = <TensorBase>x
            broadcast_strides(t._ndim, t._shape, t._strides, nd, shape, st)
            it.data[k + 1] = tensor_data(t)
            it.dtype[k + 1] = t._dtype.code
            for i in range(nd):
                it.strides[k + 1][i] = st[i] * t._dtype.itemsize
        else:
            _scalar_into(x, in_loop, slots[k].bytes)
            it.data[k + 1] = slots[k].bytes
            it.dtype[k + 1] = in_loop
            for i in range(nd):
                it.strides[k + 1][i] = 0
        it.loop_dtype[k + 1] = in_loop
    it.fn = op.loops[loop_code]
    it.extra = extra
    _coalesce(&it)
    backend_for(dev).elementwise(&it, o._numel)
    return o


# ---------------------------------------------------------------------------------------------
# op implementations (the declarations in tensorlib/ops/decl/ dispatch here)

cdef object _operand(object x, str op, str name):
    """A tensor or a Python number; anything else is a TypeError."""
    if isinstance(x, TensorBase) or _is_number(x):
        if isinstance(x, np.generic):
            return x.item()
        return x
    raise TypeError(f"{op}(): argument '{name}' must be Tensor or Number, not {type(x).__name__}")


cdef int _check_int_divisor(object b, int loop_code) except -1:
    """Integer division by zero raises (PyTorch: RuntimeError "ZeroDivisionError"), also for a
    Python int that wraps to zero in the loop's dtype (``int8 // 256``: the C loop would trap)."""
    cdef TensorBase t
    cdef DType dt = dtype_of(loop_code)
    if dt.is_floating_point:
        return 0
    if isinstance(b, TensorBase):
        t = <TensorBase>b
        if t._storage.device is CPU and t._dtype.code != loop_code:
            # a divisor of another dtype is read cast to the loop's: 512 in a uint8 loop is 0
            t = _to_dtype(t, dt, False)
        # (on a CUDA device the kernels give -1 without a check, as PyTorch's do)
        if t._storage.device is CPU and _count_equal_zero(t):
            raise RuntimeError("ZeroDivisionError")
    elif b == 0 or (isinstance(b, int) and loop_code != DT_BOOL
                    and int(b) % (256 ** <object>dt.itemsize) == 0):   # (Python ints)
        raise RuntimeError("ZeroDivisionError")
    return 0


cdef bint _any_true(TensorBase b) except -1:
    """Whether a bool tensor has a True element (b must be a fresh contiguous result)."""
    needs_data(b, "a value-dependent result (equal, allclose, ...)")
    b = host_copy(b)
    cdef uint8_t* p = <uint8_t*>tensor_data(b)
    cdef int64_t i
    for i in range(b._numel):
        if p[i]:
            return True
    return False


cdef bint _count_equal_zero(TensorBase t) except -1:
    """Whether t has an element equal to zero."""
    return _any_true(_ew(OP_EQ, (t, 0), None, False))


cdef TensorBase _binary_no_formula(EwOp op, object a, object b, object out, bint inplace):
    """_binary for an op PyTorch gives no derivative (bitwise): its autograd layer still
    collects the inputs' edges when one requires grad, so a split output whose base was
    written since raises that error before the kernel rejects a float dtype."""
    if _grad_on():
        _read_history(a)
        _read_history(b)
    return _binary(op, a, b, out, inplace)


cdef TensorBase _binary(EwOp op, object a, object b, object out, bint inplace):
    return _ew(op, (_operand(a, op.name, "input"), _operand(b, op.name, "other")), out, inplace)


cdef TensorBase _add(object a, object b, object alpha, object out, bint inplace, bint subtract=False):
    cdef EwOp op = OP_SUB if subtract else OP_ADD
    cdef ScalarSlot al
    cdef int loop_code, out_code, common
    a = _operand(a, op.name, "input")
    b = _operand(b, op.name, "other")
    if alpha is None or (type(alpha) is int and alpha == 1):
        return _ew(op, (a, b), out, inplace)
    _result_code(op, (a, b), &loop_code, &out_code, &common)
    if not dtype_of(loop_code).is_floating_point and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if isinstance(alpha, bool) and loop_code != DT_BOOL:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if loop_code == DT_BOOL and not subtract:
        # bool + alpha * bool: the bool loop is a logical or, so a false alpha drops b's
        # values (not its shape: it still broadcasts)
        if not alpha:
            b = _ew(OP_MUL, (b, False), None, False) if isinstance(b, TensorBase) else False
        return _ew(op, (a, b), out, inplace)
    if _is_reduced(common) and not isinstance(alpha, bool):
        alpha = _round_scalar(alpha, common)       # (as the operands: see _reduced_operands)
    _scalar_into(alpha, loop_code, al.bytes)
    return _ew(op, (a, b), out, inplace, al.bytes)


cdef TensorBase _div(object a, object b, object rounding_mode, object out, bint inplace):
    cdef EwOp op
    cdef int loop_code, out_code
    a = _operand(a, "div", "input")
    b = _operand(b, "div", "other")
    if rounding_mode is None:
        op = OP_DIV
    elif rounding_mode == "trunc":
        op = OP_DIV_TRUNC
    elif rounding_mode == "floor":
        op = OP_DIV_FLOOR
    else:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                           f"found '{rounding_mode}'")
    if op is not OP_DIV:
        _result_code_shapes_first(op, (a, b), &loop_code, &out_code, inplace)
        if not _any_empty(a, b):
            _check_int_divisor(b, loop_code)
    return _ew(op, (a, b), out, inplace)


cdef int _result_code_shapes_first(EwOp op, tuple inputs, int* loop_code, int* out_code,
                                   bint inplace) except -1:
    """_result_code, but a shape mismatch (of the operands, or with an in-place output) is
    reported before a dtype without a kernel, in PyTorch's order."""
    cdef int64_t shape[MAX_DIMS]
    cdef int64_t tmp[MAX_DIMS]
    cdef int nd = 0
    try:
        _result_code(op, inputs, loop_code, out_code, NULL)
    except NotImplementedError:
        for x in inputs:
            if isinstance(x, TensorBase) and not (nd == 0 and (<TensorBase>x)._ndim == 0):
                nd = broadcast_shapes(nd, shape, (<TensorBase>x)._ndim, (<TensorBase>x)._shape,
                                      tmp)
                memcpy(shape, tmp, nd * sizeof(int64_t))
        if inplace:
            _check_inplace_before_types(<TensorBase>inputs[0], inputs, nd, shape)
        raise
    return 0


cdef bint _any_empty(object a, object b):
    """An operand without elements: PyTorch runs no kernel, so a zero divisor passes."""
    return ((isinstance(a, TensorBase) and (<TensorBase>a)._numel == 0) or
            (isinstance(b, TensorBase) and (<TensorBase>b)._numel == 0))


cdef TensorBase _int_safe_binary(EwOp op, object a, object b, object out, bint inplace):
    """floor_divide / remainder / fmod: integer division by zero raises."""
    cdef int loop_code, out_code
    if inplace:
        _leaf_check_first(<TensorBase>a)
    a = _operand(a, op.name, "input")
    b = _operand(b, op.name, "other")
    _result_code_shapes_first(op, (a, b), &loop_code, &out_code, inplace)
    if not _any_empty(a, b):
        _check_int_divisor(b, loop_code)
    return _ew(op, (a, b), out, inplace)


cdef TensorBase _pow(object a, object b, object out, bint inplace):
    cdef int loop_code, out_code
    if inplace:
        _leaf_check_first(<TensorBase>a)
    a = _operand(a, "pow", "input")
    b = _operand(b, "pow", "exponent")
    if isinstance(a, TensorBase) and (<TensorBase>a)._dtype.code == DT_BOOL and \
            isinstance(b, bool):
        # PyTorch has no bool pow kernel but answers x ** 0 and x ** 1 without one:
        # x ** False is all True, x ** True is x, i.e. x | (not b)
        return _ew(OP_BITWISE_OR, (a, not b), out, inplace)
    _result_code_shapes_first(OP_POW, (a, b), &loop_code, &out_code, inplace)
    # as PyTorch: only a negative Python-number exponent of an integer result is an error; a
    # tensor of negative exponents truncates toward zero (2 ** -1 == 0, (-1) ** -3 == -1)
    if not dtype_of(loop_code).is_floating_point and not isinstance(b, TensorBase) and b < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if isinstance(a, TensorBase) and not isinstance(b, TensorBase) and out_code != DT_FLOAT32:
        # (a float32 pow reads its exponent as a double: 1e39 is fine there)
        b = _checked_scalar(b, out_code)
    if isinstance(a, TensorBase) and not isinstance(b, TensorBase) and (b == 0.5 or b == -0.5) \
            and out_code == (<TensorBase>a)._dtype.code and out_code in (DT_FLOAT32, DT_FLOAT64,
                                                                          DT_BFLOAT16):
        # PyTorch computes x ** 0.5 as sqrt(x) and x ** -0.5 as 1 / sqrt(x) in these dtypes
        # (not float16): sqrt(-inf) is NaN and sqrt(-0.0) is -0.0, where C's pow gives inf
        # and 0.0
        return _ew(OP_SQRT if b == 0.5 else OP_RSQRT, (a,), out, inplace)
    # a number base: PyTorch's pow(Scalar, Tensor) makes a contiguous result, whatever the
    # exponent's layout (its other overloads follow their inputs', as _ew does)
    return _ew(OP_POW, (a, b), out, inplace, NULL, -1, -1, not isinstance(a, TensorBase))


cdef TensorBase _unary(EwOp op, TensorBase a, object out, bint inplace):
    return _ew(op, (a,), out, inplace)


cdef TensorBase _unary_params(EwOp op, TensorBase a, object out, bint inplace, tuple params):
    """Unary op with double parameters passed to the loop (activations, round, nan_to_num)."""
    cdef double p[4]
    cdef int i
    for i in range(len(params)):
        p[i] = params[i]
    return _ew(op, (a,), out, inplace, p)


cdef TensorBase _round(TensorBase a, int64_t decimals, object out, bint inplace):
    if decimals == 0:
        return _ew(OP_ROUND, (a,), out, inplace)
    if not a._dtype.is_floating_point:
        raise NotImplementedError(f'"round_cpu" not implemented for \'{_torch_type_name(a._dtype.code)}\'')
    return _unary_params(OP_ROUND_DECIMALS, a, out, inplace,
                         (c_pow10(10.0, decimals if decimals > 0 else -decimals), decimals < 0))


cdef TensorBase _frac(TensorBase a, object out, bint inplace):
    if not a._dtype.is_floating_point:
        raise NotImplementedError(f'"frac_cpu" not implemented for \'{_torch_type_name(a._dtype.code)}\'')
    return _ew(OP_FRAC, (a,), out, inplace)


cdef TensorBase _nan_to_num(TensorBase a, object nan, object posinf, object neginf, object out, bint inplace):
    if not a._dtype.is_floating_point:
        # integers and bool: an identity copy (round is the identity on integers, sign on bool)
        return _ew(OP_SIGN if a._dtype.code == DT_BOOL else OP_ROUND, (a,), out, inplace)
    fi = _dtype_mod.finfo(a._dtype)
    return _unary_params(OP_NAN_TO_NUM, a, out, inplace,
                         (0.0 if nan is None else float(nan),
                          fi.max if posinf is None else float(posinf),
                          fi.min if neginf is None else float(neginf)))


cdef struct ClampParams:
    double lo, hi, has_lo, has_hi
    int64_t ilo, ihi


cdef tuple _clamp_overload(TensorBase a, object lo, object hi, bint inplace):
    """clamp's bounds as PyTorch's argument parser reads them, before anything looks at the
    tensors: two tensors or two numbers (either may be None), never one of each, except
    that a 0-d tensor that does not require grad beside a number is read as a number (so it
    is neither recorded nor saved)."""
    if isinstance(lo, TensorBase) != isinstance(hi, TensorBase) and lo is not None \
            and hi is not None:
        if isinstance(lo, TensorBase) and (<TensorBase>lo)._ndim == 0 and \
                not _req((<TensorBase>lo)):
            lo = _item(<TensorBase>lo)
        elif isinstance(hi, TensorBase) and (<TensorBase>hi)._ndim == 0 and \
                not _req((<TensorBase>hi)):
            hi = _item(<TensorBase>hi)
        else:
            got = ", ".join(["Tensor" if isinstance(v, TensorBase) else type(v).__name__
                             for v in (a, lo, hi)])
            raise TypeError(
                f"clamp{'_' if inplace else ''}() received an invalid combination of arguments "
                f"- got ({got}), but expected one of:\n"
                f" * (Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None)\n"
                f" * (Tensor input, Number min = None, Number max = None, *, Tensor out = None)\n")
    return lo, hi


cdef TensorBase _clamp(TensorBase a, object lo, object hi, object out, bint inplace):
    cdef ClampParams p
    cdef int loop_code, out_code
    # (one tensor bound and one number never reach here: _clamp_overload, the parse step)
    if inplace:
        _leaf_check_first(a)
    if lo is None and hi is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(lo, TensorBase) or isinstance(hi, TensorBase):
        # tensor bounds: a 3-input loop; a missing bound is +-inf (or the integer extreme)
        ops = (a, lo, hi)
        _result_code(OP_CLAMP, tuple([v for v in ops if v is not None]), &loop_code, &out_code,
                     NULL)
        if out_code == DT_BOOL and lo is not None and hi is not None:
            # (PyTorch clamps bool tensors only one side at a time: clamp_min / clamp_max)
            raise NotImplementedError('"clamp_cpu" not implemented for \'Bool\'')
        # (False/True for bool: an int bound would promote the result to int64)
        if lo is None:
            lo = -INFINITY if dtype_of(out_code).is_floating_point else \
                (False if out_code == DT_BOOL else _INT_EXTREME[out_code][0])
        if hi is None:
            hi = INFINITY if dtype_of(out_code).is_floating_point else \
                (True if out_code == DT_BOOL else _INT_EXTREME[out_code][1])
        return _ew(OP_CLAMP, (a, lo, hi), out, inplace)
    args = tuple([v for v in (a, lo, hi) if v is not None])
    _result_code(OP_CLAMP_SCALAR, args, &loop_code, &out_code, NULL)
    if lo is not None:
        lo = _checked_scalar(lo, out_code)
    if hi is not None:
        hi = _checked_scalar(hi, out_code)
    p.has_lo = lo is not None
    p.has_hi = hi is not None
    p.lo = float(lo) if lo is not None else 0
    p.hi = float(hi) if hi is not None else 0
    if not dtype_of(loop_code).is_floating_point:
        p.ilo = int(lo) if lo is not None else 0
        p.ihi = int(hi) if hi is not None else 0
    return _ew(OP_CLAMP_SCALAR, (a,), out, inplace, &p, loop_code, out_code)


_INT_EXTREME = {DT_UINT8: (0, 255), DT_INT8: (-128, 127), DT_INT16: (-32768, 32767),
                DT_INT32: (-2147483648, 2147483647),
                DT_INT64: (-9223372036854775808, 9223372036854775807), DT_BOOL: (0, 1)}


cdef TensorBase _where(object cond, object a, object b, object out):
    cdef int loop_code, out_code
    cdef TensorBase c = _targ(cond, "where", "condition", 1)
    if c._dtype.code != DT_BOOL:
        if c._dtype.code == DT_UINT8:
            c = _to_dtype(c, dtype_of(DT_BOOL), False)
        else:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                               f"with dtype {_torch_type_name(c._dtype.code)}")
    a = _operand(a, "where", "input")
    b = _operand(b, "where", "other")
    out_code = result_type_codes((a, b))
    if out_code != DT_BOOL and not dtype_of(out_code).is_floating_point:
        # an integer scalar must fit an integer result (PyTorch's overflow error); a float
        # result takes any number (1e6 becomes inf in float16, as in PyTorch)
        if not isinstance(a, TensorBase):
            a = _checked_scalar(a, out_code)
        if not isinstance(b, TensorBase):
            b = _checked_scalar(b, out_code)
    loop_code = _loop_dtype_of(out_code)
    return _ew(OP_WHERE, (c, a, b), out, False, NULL, loop_code, out_code)


cdef TensorBase _masked_fill(TensorBase self, object mask, object value, bint inplace):
    if inplace:
        _leaf_check_first(self)
    cdef TensorBase m = _targ(mask, "masked_fill", "mask", 1)
    if m._dtype.code != DT_BOOL:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_torch_type_name(m._dtype.code)}")
    if isinstance(value, TensorBase):
        if (<TensorBase>value)._ndim != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {(<TensorBase>value)._ndim} dimension(s).")
        if has_data(<TensorBase>value):
            value = _item(<TensorBase>value)
    value = _operand(value, "masked_fill", "value")
    cdef int code = self._dtype.code
    cdef int64_t bshape[MAX_DIMS]
    cdef int nd
    if not isinstance(value, TensorBase):
        value = _checked_scalar(value, code)
    if inplace:
        # the mask may broadcast to self, never self to the mask
        nd = broadcast_shapes(self._ndim, self._shape, m._ndim, m._shape, bshape)
        if nd != self._ndim or memcmp(bshape, self._shape, nd * sizeof(int64_t)) != 0:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {shape_str(nd, bshape)}")
        return _ew(OP_WHERE, (m, value, self), self, False, NULL, _loop_dtype_of(code), code)
    # (PyTorch's masked_fill fills a contiguous clone of self broadcast with the mask)
    return _ew(OP_WHERE, (m, value, self), None, False, NULL, _loop_dtype_of(code), code, True)


cdef TensorBase _lerp(TensorBase start, object end, object weight, object out, bint inplace):
    if not isinstance(end, TensorBase):
        raise TypeError(
            f"lerp() received an invalid combination of arguments - got (Tensor, "
            f"{type(end).__name__}, {type(weight).__name__}), but expected one of:\n"
            f" * (Tensor input, Tensor end, Tensor weight, *, Tensor out = None)\n"
            f" * (Tensor input, Tensor end, Number weight, *, Tensor out = None)\n")
    weight = _operand(weight, "lerp", "weight")
    # end, and a weight tensor of any dims, must have start's dtype (PyTorch)
    if (<TensorBase>end)._dtype.code != start._dtype.code:
        raise RuntimeError(f"expected dtype {_lerp_name(start)} for `end` but got dtype "
                           f"{_lerp_name(<TensorBase>end)}")
    if (isinstance(weight, TensorBase) and (<TensorBase>weight)._ndim > 0
            and (<TensorBase>weight)._dtype.code != start._dtype.code):
        raise RuntimeError(f"expected dtype {_lerp_name(start)} for `weight` but got dtype "
                           f"{_lerp_name(<TensorBase>weight)}")
    if not start._dtype.is_floating_point:
        raise NotImplementedError(f'"lerp_kernel_scalar" not implemented for \'{_torch_type_name(start._dtype.code)}\'')
    cdef int code = start._dtype.code
    return _ew(OP_LERP, (start, end, weight), out, inplace, NULL, _loop_dtype_of(code), code)


cdef str _lerp_name(TensorBase t):
    """PyTorch's lower-case dtype name in lerp's messages (float, double, c10::Half ...)."""
    return _C_TYPE_NAME[t._dtype.code] if t._dtype.code in (DT_FLOAT16, DT_BFLOAT16) \
        else _torch_type_name(t._dtype.code).lower()


cdef object _equal(TensorBase a, object other):
    cdef TensorBase b = _targ(other, "equal", "other", 2)
    if a.shape != b.shape:
        return False
    if a._numel == 0:
        return True
    return not _any_true(_ew(OP_NE, (a, b), None, False))


cdef TensorBase _isclose(TensorBase a, object other, double rtol, double atol, bint equal_nan):
    """|a - b| <= atol + rtol * |b|, with infinities equal only to themselves."""
    cdef TensorBase b = _targ(other, "isclose", "other", 2)
    if a._dtype.code != b._dtype.code:
        raise RuntimeError(f"{_torch_type_name(a._dtype.code)} did not match {_torch_type_name(b._dtype.code)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")
    cdef TensorBase close = _ew(OP_EQ, (a, b), None, False)
    if not a._dtype.is_floating_point:
        if rtol == 0 and atol == 0:
            return close
        a = _to_dtype(a, dtype_of(DT_FLOAT64), False)
        b = _to_dtype(b, dtype_of(DT_FLOAT64), False)
    diff = _ew(OP_ABS, (_ew(OP_SUB, (a, b), None, False),), None, False)
    tol = _ew(OP_ADD, (_ew(OP_MUL, (_ew(OP_ABS, (b,), None, False), rtol), None, False), atol), None, False)
    within = _ew(OP_LOGICAL_AND, (_ew(OP_LE, (diff, tol), None, False),
                                  _ew(OP_ISFINITE, (diff,), None, False)), None, False)
    close = _ew(OP_LOGICAL_OR, (close, within), None, False)
    if equal_nan:
        both_nan = _ew(OP_LOGICAL_AND, (_ew(OP_ISNAN, (a,), None, False), _ew(OP_ISNAN, (b,), None, False)), None, False)
        close = _ew(OP_LOGICAL_OR, (close, both_nan), None, False)
    return close


cdef object _allclose(TensorBase a, object other, double rtol, double atol, bint equal_nan):
    return not _any_true(_ew(OP_LOGICAL_NOT, (_isclose(a, other, rtol, atol, equal_nan),), None, False))


cdef TensorBase _gelu(TensorBase a, str approximate, object out, bint inplace):
    if approximate == "none":
        return _ew(OP_GELU, (a,), out, inplace)
    if approximate == "tanh":
        return _ew(OP_GELU_TANH, (a,), out, inplace)
    raise RuntimeError(f"approximate argument must be either none or tanh, got {approximate}")


cdef TensorBase _float_only(EwOp op, TensorBase a, object out, bint inplace, tuple params):
    if not a._dtype.is_floating_point:
        raise NotImplementedError(f'"{op.name}_cpu" not implemented for \'{_torch_type_name(a._dtype.code)}\'')
    return _unary_params(op, a, out, inplace, params)


cdef TensorBase _hardtanh(TensorBase a, double min_val, double max_val, bint inplace):
    """hardtanh: floats through the kernel; integers clamp to the limits converted to the
    tensor's dtype (toward zero, as PyTorch: [-1.5, 1.7] clamps int64 to [-1, 1])."""
    cdef int code = a._dtype.code
    if a._dtype.is_floating_point:
        return _unary_params(OP_HARDTANH, a, None, inplace, (min_val, max_val))
    if code == DT_BOOL:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if code == DT_UINT8 and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    lo = int(_checked_scalar(min_val, code))
    hi = int(_checked_scalar(max_val, code))
    return _clamp(a, lo, hi, None, inplace)


_NotImplementedNode = type("NotImplemented", (Node,), {"__slots__": (),
                                                     "__module__": "tensorlib.autograd"})


def _derivative_not_implemented(str name):
    """The backward of an op PyTorch records but cannot differentiate (floor_divide)."""
    raise RuntimeError(f"derivative for {name} is not implemented")


cdef TensorBase _relu(TensorBase a, object out, bint inplace):
    """max(x, 0); PyTorch rejects bool input before choosing a kernel (a RuntimeError)."""
    if inplace:
        _leaf_check_first(a)
    if a._dtype.code == DT_BOOL:
        raise RuntimeError("Boolean inputs not supported for relu")
    return _ew(OP_RELU, (a,), out, inplace)


cdef TensorBase _square(TensorBase a, object out, bint inplace):
    """x * x; a bool tensor squares as int64 (PyTorch's square is pow(x, 2))."""
    if a._dtype.code == DT_BOOL:
        if inplace:
            raise RuntimeError("result type Long can't be cast to the desired output type Bool")
        a = _to_dtype(a, dtype_of(DT_INT64), False)
    return _ew(OP_SQUARE, (a,), out, inplace)
