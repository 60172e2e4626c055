# Published Cython interface of tensorlib tensors: `cimport` this to reach tensor data at C
# speed (see tensorlib.get_include()). Append-only: Cython does not check the layout of cdef
# classes across modules, so never reorder or remove a declaration; add new ones at the end.
from libc.stdint cimport int64_t
from cpython.long cimport PyLong_AsLongLongAndOverflow
from tensorlib._core.dtype cimport dtype as DType
from tensorlib._core.allocator cimport Storage, device as Device

cdef enum:
    SMALL_DIMS = 6          # shapes/strides up to this rank live inside the object
    MAX_DIMS = 64           # as NumPy 2

cdef class VersionCounter:
    """Shared by a tensor and all its views; bumped by every write."""
    cdef public int64_t version
    cdef int64_t rg_version         # 1 + version when the leaf last started to require grad
                                    # (0: never): its older views join it once written since

cdef class TensorBase:
    cdef Storage _storage
    cdef int64_t _offset            # storage offset, in elements
    cdef int _ndim
    cdef int64_t* _shape            # points into _small, or to a malloc'd block for big ranks
    cdef int64_t* _strides          # in elements
    cdef int64_t _small[2 * SMALL_DIMS]
    cdef int64_t _numel             # cached at creation
    cdef DType _dtype
    cdef bint _contiguous           # cached at creation (size-1 dims never break it)
    cdef VersionCounter _vc
    cdef TensorBase _view_base      # the root tensor a view was made from; never a chain
    cdef object _size_cache         # the tensorlib.Size, built on first use
    # autograd state
    cdef bint _requires_grad
    cdef object _grad
    cdef object _grad_fn
    cdef object _autograd_meta      # per-tensor extras used by the autograd layer
    cdef object __weakref__


cdef inline char* tensor_data(TensorBase t) noexcept:
    """Address of the first element (storage base + offset)."""
    return t._storage.data + t._offset * t._dtype.itemsize

cdef TensorBase empty_tensor(int ndim, const int64_t* shape, DType dt, Device dev)
cdef TensorBase make_view(TensorBase src, int ndim, const int64_t* shape, const int64_t* strides,
                          int64_t offset)
cdef int prepare_write(TensorBase out, TensorBase src) except -1
cdef int prepare_inplace_write(TensorBase out, bint tracked) except -1

# The iterator (iterate.pxi): broadcasting, coalescing, the copy/cast table, overlap tests.
# Descriptor-level: strides in elements, dtype codes as in dtype.pxd.
cdef int broadcast_shapes(int nda, const int64_t* a, int ndb, const int64_t* b, int64_t* out) except -1
cdef int broadcast_strides(int nd_src, const int64_t* src_shape, const int64_t* src_strides,
                           int nd_dst, const int64_t* dst_shape, int64_t* out_strides) except -1
cdef int copy_cast(int ndim, const int64_t* shape,
                   char* dst, const int64_t* dst_strides, int dst_dtype,
                   const char* src, const int64_t* src_strides, int src_dtype) except -1
cdef bint has_internal_overlap(int ndim, const int64_t* shape, const int64_t* strides) noexcept
cdef bint is_non_overlapping_and_dense(int ndim, const int64_t* shape, const int64_t* strides) noexcept
cdef void extent(int ndim, const int64_t* shape, const int64_t* strides, int64_t* lo, int64_t* hi) noexcept


# ---------------------------------------------------------------------------------------------
# The core's C interface to the op-family extension modules (tensorlib/_core/<family>.pyx,
# see setup.py): each includes its front halves and its generated code, and reaches the
# tensor module only through these declarations (C function-pointer calls, vtable calls on
# Backend). Internal: names with a leading underscore may change with the core.
from libc.stdint cimport uint64_t
from tensorlib._core.kernels cimport (tl_ew_iter, tl_red_t, tl_igemm_args, tl_rows_t, tl_nn_args,
                                     tl_optim_args)

cdef enum:
    NOGIL_THRESHOLD = 1 << 15   # elements from which a kernel runs with the GIL released

# argument conversion (the generated wrappers' helpers: PyTorch's messages on bad input)
cdef str _tname(object x)
cdef TensorBase _targ(object x, str op, str name, int pos)
cdef int64_t _iarg(object x, str op, str name, int pos) except? -1
cdef tuple _ilist(object x, str op, str name, int pos)
cdef tuple _iseq(object x, str op, str name, int pos)
cdef tuple _ivarargs(tuple args, str op, str name)
cdef double _farg(object x, str op, str name, int pos) except? -1.5
cdef object _sarg(object x, str op, str name, int pos)
cdef object _dtarg(object x, str op, str name)
cdef int _bad_bool(object x, str op, str name) except -1
cdef str _strarg(object x, str op, str name)
cdef enum:                      # what _check_kind checks
    ARG_OUT = 1
    ARG_LAYOUT = 2
    ARG_MEMORY_FORMAT = 3
    ARG_DEVICE = 4
cdef int _check_kind(object x, int kind, str op, str name) except -1
cdef Device _devarg(object x)
cdef int _wrap_dim(int64_t d, int ndim, bint scalar_ok=*) except -1
cdef object _rtype(str name)

# tensors: copies, views and outputs
cdef int _copy_into(TensorBase dst, TensorBase src) except -1
cdef TensorBase _contiguous_copy(TensorBase src, DType dt=*)
cdef TensorBase _contiguous(TensorBase t)
cdef TensorBase _reshape(TensorBase t, tuple shape)
cdef TensorBase _movedim(TensorBase t, source, destination)
cdef TensorBase _squeeze(TensorBase t, object dim)
cdef TensorBase _empty_preserving(TensorBase like, DType dt, Device dev=*)
cdef TensorBase _new_empty(tuple shape, DType dt, Device dev)
cdef int _fill_raw(TensorBase t, object value) except -1
cdef int _resize_out(TensorBase out, int ndim, const int64_t* shape) except -1

# autograd recording (graph.pxi); grad mode and profiling are C thread-locals of this module
cdef bint _grad_on() noexcept nogil
cdef bint _prof_on() noexcept nogil

cdef enum ViewCreation:
    CREATION_DEFAULT = 0
    CREATION_MULTI_OUTPUT = 1     # split/chunk/unbind outputs: in-place on them is an error
    CREATION_NO_GRAD = 2          # made under no_grad (from a tensor that requires grad, or
                                  # a split/chunk/unbind output)

cdef class AutogradMeta:
    cdef public object grad_accumulator   # weakref to the leaf's AccumulateGrad
    cdef public list hooks                # tensor hooks (run on the gradient of this tensor)
    cdef public bint retains_grad
    cdef public int output_nr
    cdef public int creation              # how a view was made (CREATION_*)
    cdef public int64_t view_version      # base version when the view's grad_fn was made
    cdef public str name                  # for error messages (e.g. "output 0 of TanhBackward0")

cdef class Node:
    cdef public tuple next_edges      # ((Node or None, input_nr), ...) per differentiable input
    cdef public int64_t _sequence_nr
    cdef public object _saved         # tuple: SavedTensor for tensors, plain values otherwise
    cdef public object _fn            # backward(node, grads) -> tuple of input gradients
    cdef public tuple _input_meta     # per input: (shape tuple, DType) or None
    cdef public object _pre_hooks     # {output_nr: [fn]} tensor hooks on this node's outputs
    cdef public list _hooks           # node hooks: fn(grad_inputs, grad_outputs)
    cdef public list _node_pre_hooks  # node pre-hooks: fn(grad_outputs)
    cdef public bint _released
    cdef public int _num_outputs
    cdef public object _trace         # forward stack (anomaly mode)
    cdef public object _output_meta   # per output: (shape, DType[, device]) for zero-filling
    cdef object __weakref__
    cdef public object _site          # forward source site (only while a profile is active)
    cdef public uint64_t _scalar_edges  # bit i: input i was a Python number

cdef object _op_enter(str name)
cdef int _op_exit(object prev) except -1
cdef bint _req(object x)
cdef bint _req_any(object x)
cdef Node _new_node(type cls, object fn, tuple inputs)
cdef object _unpack(object x, Node node)
cdef tuple _saved_of(Node node)
cdef object _save_any(object x, bint is_output)
cdef object _save_input(object x, bint is_output)
cdef TensorBase _original_of(TensorBase t)
cdef int _set_history(object result, Node node, int output_nr=*) except -1
cdef int _set_history_multi(object results, Node node, int creation=*) except -1
cdef int _set_history_inplace(object result, Node n) except -1
cdef int _check_out_no_grad(str op, tuple inputs) except -1
cdef int _check_view_rebase(object t) except -1
cdef int _read_history(object x) except -1
cdef int _read_histories(tuple args) except -1
cdef TensorBase _history_first(TensorBase t)
cdef int _mark_multi_views(object results) except -1

# the back ends (backend.pxi)
cdef struct LaMat:
    int64_t off             # element offset of [0, 0, 0] in the owner's storage
    int64_t sb, sr, sc      # batch, row and column strides in elements

cdef class Backend:
    cdef readonly str name
    cdef readonly bint has_data
    cdef int elementwise(self, tl_ew_iter* it, int64_t numel) except -1
    cdef int copy(self, int ndim, const int64_t* shape, char* dst, const int64_t* dst_strides,
                  int dst_dtype, const char* src, const int64_t* src_strides,
                  int src_dtype) except -1
    cdef int fill(self, TensorBase t, const char* value, int value_dtype) except -1
    cdef int reduce(self, tl_red_t* r, int64_t numel) except -1
    cdef int softmax(self, int dtype, int want_log, const char* x, char* y, int64_t outer,
                     int64_t n, int64_t inner) except -1
    cdef int cumulative(self, int prod, int dtype, const char* x, char* y, int64_t outer,
                        int64_t n, int64_t inner) except -1
    cdef int bmm(self, TensorBase out, int64_t B, int64_t M, int64_t N, int64_t K,
                 TensorBase a, LaMat ga, TensorBase b, LaMat gb) except -1
    cdef int igemm(self, tl_igemm_args* g, bint big) except -1
    cdef int rows(self, int op, const tl_rows_t* r, int flag, int64_t k, bint big) except -1
    cdef int index(self, int nd, const int64_t* shape, char* dst, const int64_t* dst_st,
                   const char* src, const int64_t* src_st, const int64_t* idx,
                   const int64_t* idx_st, int64_t idx_mul, int side, int dtype,
                   int op) except -1
    cdef int scale(self, TensorBase t, double alpha_d, int64_t alpha_i) except -1
    cdef int random(self, TensorBase t, int kind, object generator, double a, double b,
                    int64_t lo, uint64_t span) except -1
    cdef int nn(self, int op, tl_nn_args* a, bint big) except -1
    cdef int conv_direct(self, tl_nn_args* a) except -1
    cdef int optim(self, const tl_optim_args* a, bint big) except -1

cdef Backend backend_for(Device dev)
cdef Backend backend_of(TensorBase t)
cdef bint has_data(TensorBase t) noexcept
cdef int needs_data(TensorBase t, str what) except -1

# host helpers of unique (cpu_sort.c) not behind the Backend interface yet
cdef int64_t host_runs(int dtype, const char* vals, int64_t n, int64_t* run_of) noexcept nogil
cdef void host_unique_fill(int dtype, const char* sorted_vals, const int64_t* order,
                           const int64_t* run_of, int64_t n, char* uniq, int64_t* inverse,
                           int64_t* counts) noexcept nogil
cdef int host_sort_slices(int dtype, const char* data, int64_t m, int64_t len,
                          int64_t* perm) noexcept nogil
cdef int64_t host_slice_runs(int dtype, const char* data, const int64_t* perm, int64_t m,
                             int64_t len, int64_t* run_of) noexcept nogil

# for the reductions family
cdef struct DimInfo:
    int64_t size
    int64_t dst_stride
    int64_t src_stride

cdef int _by_dst_stride_desc(const void* pa, const void* pb) noexcept nogil
cdef list _wrap_dims(dims, int ndim, str op)
cdef TensorBase _to_dtype(TensorBase t, DType dt, bint copy)
cdef TensorBase _into_out(TensorBase result, object out, str op)

# for the elementwise family
from tensorlib._core.kernels cimport tl_loop_fn

cdef enum Overlap:
    OVERLAP_NO = 0
    OVERLAP_FULL = 1       # exactly the same elements in the same layout: fine
    OVERLAP_PARTIAL = 2    # elements shared in another layout: PyTorch's overlap error
    OVERLAP_TOO_HARD = 3   # ranges intersect but layouts are not dense: cannot tell cheaply

cdef int _overlap(TensorBase a, TensorBase b) noexcept
cdef object internal_overlap_error()
cdef object input_overlap_error()
cdef str shape_str(int ndim, const int64_t* shape)
cdef int result_type_codes(tuple operands) except -1
cdef Device common_device(tuple inputs)
cdef TensorBase _check_out(object out, DType result, str op)
cdef TensorBase _expand(TensorBase t, tuple sizes)
cdef object _item(TensorBase t)
cdef int _check_scalar_fits(object v, DType dt, bint is_float, bint check_float_dtype) except -1


cdef inline int _python_int(object v, int64_t* bits) except -1:
    """Read a Python int as PyTorch does: as an int64 (returns 0), or, in [2**63, 2**64), as
    a uint64 (returns 1; a float dtype then takes its value, an integer dtype its bits);
    any wider int raises OverflowError. ``bits``: the int64, or the uint64's bits. Inline:
    number arguments of every op come through here."""
    cdef int overflow
    bits[0] = PyLong_AsLongLongAndOverflow(v, &overflow)
    if overflow == 0:
        return 0
    if not 0 < v <= 0xffffffffffffffff:
        raise OverflowError("int too big to convert")
    bits[0] = int(v) - 0x10000000000000000
    return 1

# the entries of a subscript (indexing.pxi, advindex.pxi)
cdef enum IndexKind:
    IK_NONE = 0
    IK_ELLIPSIS = 1
    IK_SLICE = 2
    IK_INT = 3
    IK_BOOL = 4
    IK_TENSOR = 5
cdef bint _entry_past_end(int kind, object v, int dim, int nd, int pos) except -1
cdef const tl_loop_fn* ew_loops(str name) except NULL

# Operator slots of TensorBase whose op lives in an op-family module: that module installs
# its _slot_<name> functions at import (the table is generated: tensorlib/ops/codegen.py)
ctypedef object (*BinarySlot)(TensorBase, object)
ctypedef object (*UnarySlot)(TensorBase)
cdef bint _slot_ok(object other)
cdef int _set_slot(str name, BinarySlot binary, UnarySlot unary) except -1

# for the linalg family
cdef inline LaMat _la_bm(int64_t off, int64_t sb, int64_t sr, int64_t sc) noexcept:
    cdef LaMat g
    g.off = off
    g.sb = sb
    g.sr = sr
    g.sc = sc
    return g


cdef TensorBase _la_bmat_copy(TensorBase t, LaMat* g, int64_t B, int64_t R, int64_t C, DType dt)
cdef void host_axpby_f32(const int64_t* shape, float* out, const int64_t* so, const float* x,
                         const int64_t* sx, const float* y, const int64_t* sy, float alpha,
                         float beta, int use_x, int use_y) noexcept nogil
cdef void host_axpby_f64(const int64_t* shape, double* out, const int64_t* so, const double* x,
                         const int64_t* sx, const double* y, const int64_t* sy, double alpha,
                         double beta, int use_x, int use_y) noexcept nogil
cdef void host_axpby_i64(const int64_t* shape, int64_t* out, const int64_t* so, const int64_t* x,
                         const int64_t* sx, const int64_t* y, const int64_t* sy, int64_t alpha,
                         int64_t beta, int use_x, int use_y) noexcept nogil
cdef int same_device(TensorBase a, TensorBase b, str op) except -1
cdef TensorBase _empty_like_shape(TensorBase like, DType dt=*)
cdef TensorBase _view_of(TensorBase src, shape, strides, int64_t offset)
cdef list _shape_list(TensorBase t)
cdef list _stride_list(TensorBase t)
cdef TensorBase _permute(TensorBase t, tuple dims)
cdef TensorBase _transpose(TensorBase t, int64_t d0, int64_t d1)
cdef TensorBase _unsqueeze(TensorBase t, int64_t dim)

# the generated _call_<op> (autograd recording included) of view ops the linalg family
# composes (build/generated/_ops_views.pxi: a changed signature there fails to compile here)
cdef object _call_contiguous(TensorBase c_self, object c_memory_format, bint _inplace_)
cdef object _call_expand(TensorBase c_self, tuple c_size, bint c_implicit, bint _inplace_)
cdef object _call_reshape(TensorBase c_self, tuple c_shape, bint _inplace_)
cdef object _call_squeeze(TensorBase c_self, object c_dim, bint _inplace_)
cdef object _call_squeeze_(TensorBase c_self, object c_dim, bint _inplace_)
cdef object _call_t(TensorBase c_self, bint _inplace_)
cdef object _call_transpose(TensorBase c_self, int64_t c_dim0, int64_t c_dim1, bint _inplace_)
cdef object _call_unsqueeze(TensorBase c_self, int64_t c_dim, bint _inplace_)
cdef object _call__unsafe_view(TensorBase c_self, tuple c_size, bint _inplace_)

# for the random family
# what Backend.random draws (into a contiguous tensor of the kind's dtype)
cdef enum RandomKind:
    RAND_UNIFORM = 0      # float32/float64 on [a, b)
    RAND_NORMAL = 1       # float32/float64, mean a, std b
    RAND_INT64 = 2        # int64 on [lo, lo + span)
    RAND_BERNOULLI = 3    # bool with probability a
    RAND_PERM = 4         # int64: a permutation of range(numel)

cdef object _size_type()
cdef TensorBase _finish(TensorBase t, bint requires_grad)
cdef TensorBase _full(tuple size, object value, object dt, object dev)
cdef TensorBase _like(TensorBase like, object dt, object dev, object memory_format)
cdef tuple _broadcast_shape_of(tensors)

# for the indexing family
from tensorlib._core.kernels cimport tl_index_src, tl_nz

cdef VersionCounter _new_vc()
cdef TensorBase _alloc_object()
cdef int _set_geometry(TensorBase t, int ndim, const int64_t* shape, const int64_t* strides) except -1
cdef void channels_last_strides(int ndim, const int64_t* shape, int64_t* strides) noexcept
cdef TensorBase _alias(TensorBase src, VersionCounter vc)
cdef TensorBase _clone(TensorBase t, object memory_format=*, DType dt=*)
cdef TensorBase _select(TensorBase t, int64_t dim, int64_t index)
cdef TensorBase _slice(TensorBase t, int dim, object start, object stop, object step)
cdef TensorBase _tensor_from_data(object data, DType dt, Device dev, bint dtype_given)
cdef int _record_getitem(TensorBase self, object r, object index) except -1

# TensorBase's subscripts hand an advanced index to the indexing family's module
ctypedef object (*AdvGetFn)(TensorBase t, object index)
ctypedef int (*AdvSetFn)(TensorBase t, object index, object value) except -1
cdef int _set_advanced_indexing(AdvGetFn get, AdvSetFn set_, AdvSetFn set_recorded) except -1

cdef int host_index_offsets(int nb, const int64_t* bshape, int k, const tl_index_src* srcs,
                            int wrap, int64_t* out, int* bad_k, int64_t* bad_pos,
                            int64_t* bad_val) noexcept nogil
cdef void host_linear_to_offsets(int64_t n, int64_t* inout, int ndim, const int64_t* shape,
                                 const int64_t* strides) noexcept nogil
cdef int64_t host_nonzero_setup(tl_nz* p, int ndim, const int64_t* shape, const char* data,
                                const int64_t* strides, int dtype) noexcept nogil
cdef int64_t host_nonzero_count(const tl_nz* p, int64_t* chunk_counts, int parallel) noexcept nogil
cdef void host_nonzero_fill(const tl_nz* p, const int64_t* chunk_counts, int64_t* out,
                            int64_t dim_stride, const int64_t* muls, int parallel) noexcept nogil
cdef void host_nonzero_gather(const tl_nz* p, const int64_t* chunk_counts, char* out,
                              const char* src, const int64_t* src_strides, int itemsize,
                              int parallel) noexcept nogil
cdef int host_index_take1(int64_t n, const int64_t* ix, char* dst, const char* src,
                          int64_t src_stride, int64_t size, int itemsize, int64_t* bad_pos,
                          int parallel) noexcept nogil
cdef void host_index_div_counts(int ndim, const int64_t* shape, char* data, const int64_t* strides,
                                int dtype, const int64_t* counts,
                                const int64_t* count_strides) noexcept nogil

# the batched-product engine (backend.pxi), shared by linalg and the nn kernels
cdef int _la_bmm_into(TensorBase out, int64_t B, int64_t M, int64_t N, int64_t K,
                      TensorBase a, LaMat ga, TensorBase b, LaMat gb) except -1

# what a node keeps of output number output_nr of a tuple result (graph.pxi)
cdef object _save_output(object x, int output_nr)

# a device tensor's values on the host (the tensor itself on the CPU), waited for
cdef TensorBase host_copy(TensorBase t)

# op tracing (graph.pxi): the generated wrappers report top-level op calls to the tracer
cdef bint _trace_on() noexcept nogil
cdef object _trace_enter()
cdef int _trace_exit(object tracer, str name, tuple names, tuple args, object result) except -1
