/* The elementwise driver: runs a typed inner loop over broadcast, coalesced operands.

   An op is a table of inner loops, one per "loop dtype" (the dtype the loop computes in;
   float16/bfloat16 ops run the float32 loop). Operands whose storage dtype differs from the
   loop dtype (mixed-dtype inputs, half types, an out= of another dtype) are converted on the
   fly, a block at a time, through the copy/cast table: no full-size temporaries. */
#ifndef TL_CPU_ELEMENTWISE_H
#define TL_CPU_ELEMENTWISE_H
#include <stdint.h>

#define TL_MAX_OPS 4
#define TL_EW_MAX_DIMS 64

/* data[0] is the output, data[1..] the inputs; strides in bytes; a stride of 0 means the
   operand is broadcast (e.g. a Python scalar stored once). */
typedef void (*tl_loop_fn)(char **data, const int64_t *strides, int64_t n, const void *extra);

typedef struct {
    int nops;                                   /* output + inputs */
    int ndim;                                   /* coalesced; innermost last */
    int64_t shape[TL_EW_MAX_DIMS];
    int64_t strides[TL_MAX_OPS][TL_EW_MAX_DIMS];  /* bytes */
    char *data[TL_MAX_OPS];
    int dtype[TL_MAX_OPS];                      /* storage dtype of each operand */
    int loop_dtype[TL_MAX_OPS];                 /* dtype the loop reads/writes per operand */
    tl_loop_fn fn;
    const void *extra;                          /* op parameters (alpha, bounds, ...) */
} tl_ew_iter;

/* Run the loop over every element; parallel above a size threshold. Call without the GIL. */
void tl_ew_run(const tl_ew_iter *it);

/* Number of elements above which tl_ew_run uses the thread pool. */
#define TL_EW_PARALLEL_MIN 32768

/* ---- the op tables (cpu_elementwise.c). Index: dtype code; NULL = unsupported. ---- */
#define TL_NUM_DT 10
#define TL_DECLARE_OP(name) extern const tl_loop_fn tl_ew_##name[TL_NUM_DT];

/* The ops declared with their kernels in tensorlib/ops/decl/ (codegen writes
   build/generated/_ew_ops.h); extra, where an op reads it: alpha for add/sub (loop dtype, or
   NULL for 1), doubles for the parameterised ops (leaky_relu, elu, softplus, hardtanh,
   round_decimals, nan_to_num). A Cython module outside tensorlib that cimports tensor.pxd
   sees this header without the generated one, and needs none of its tables. */
#if !defined(__has_include) || __has_include("_ew_ops.h")
#include "_ew_ops.h"
#endif

/* hand-written in cpu_elementwise.c */
TL_DECLARE_OP(clamp_scalar) /* extra: {min or NaN=none, max or NaN=none} in the loop dtype's
                               value space, passed as doubles; ints as int64 in extra_i */
/* ternary: out = f(a, b, c) */
TL_DECLARE_OP(where)        /* a: bool condition, b, c: values */
TL_DECLARE_OP(clamp)        /* a, lo, hi (tensors) */
TL_DECLARE_OP(lerp)         /* a, b, weight */
TL_DECLARE_OP(copy)         /* out = a (used for dtype-converting copies through the driver) */

#endif
