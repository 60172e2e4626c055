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

/* binary arithmetic: out = f(a, b) */
TL_DECLARE_OP(add)        /* extra: alpha (loop dtype) or NULL */
TL_DECLARE_OP(sub)        /* extra: alpha or NULL */
TL_DECLARE_OP(mul)
TL_DECLARE_OP(div)        /* true division (float loops only) */
TL_DECLARE_OP(div_trunc)
TL_DECLARE_OP(div_floor)  /* = floor_divide */
TL_DECLARE_OP(remainder)  /* Python-style, sign of the divisor */
TL_DECLARE_OP(fmod)       /* C-style, sign of the dividend */
TL_DECLARE_OP(pow)
TL_DECLARE_OP(atan2)
TL_DECLARE_OP(maximum)
TL_DECLARE_OP(minimum)
TL_DECLARE_OP(bitwise_and)
TL_DECLARE_OP(bitwise_or)
TL_DECLARE_OP(bitwise_xor)
TL_DECLARE_OP(lshift)
TL_DECLARE_OP(rshift)
/* comparisons and logic: inputs in the loop dtype, output bool (uint8 0/1) */
TL_DECLARE_OP(eq)
TL_DECLARE_OP(ne)
TL_DECLARE_OP(lt)
TL_DECLARE_OP(le)
TL_DECLARE_OP(gt)
TL_DECLARE_OP(ge)
TL_DECLARE_OP(logical_and)
TL_DECLARE_OP(logical_or)
TL_DECLARE_OP(logical_xor)
/* unary: out = f(a) (same loop dtype) */
TL_DECLARE_OP(neg)
TL_DECLARE_OP(abs)
TL_DECLARE_OP(sign)
TL_DECLARE_OP(reciprocal)
TL_DECLARE_OP(exp)
TL_DECLARE_OP(exp2)
TL_DECLARE_OP(expm1)
TL_DECLARE_OP(log)
TL_DECLARE_OP(log2)
TL_DECLARE_OP(log10)
TL_DECLARE_OP(log1p)
TL_DECLARE_OP(sqrt)
TL_DECLARE_OP(rsqrt)
TL_DECLARE_OP(sin)
TL_DECLARE_OP(cos)
TL_DECLARE_OP(tan)
TL_DECLARE_OP(asin)
TL_DECLARE_OP(acos)
TL_DECLARE_OP(atan)
TL_DECLARE_OP(sinh)
TL_DECLARE_OP(cosh)
TL_DECLARE_OP(tanh)
TL_DECLARE_OP(sigmoid)
TL_DECLARE_OP(erf)
TL_DECLARE_OP(relu)
TL_DECLARE_OP(silu)
TL_DECLARE_OP(gelu)
TL_DECLARE_OP(gelu_tanh)
TL_DECLARE_OP(floor)
TL_DECLARE_OP(ceil)
TL_DECLARE_OP(round)      /* half to even */
TL_DECLARE_OP(trunc)
TL_DECLARE_OP(frac)
TL_DECLARE_OP(square)
TL_DECLARE_OP(bitwise_not)
TL_DECLARE_OP(logical_not)  /* output bool */
TL_DECLARE_OP(isnan)        /* output bool */
TL_DECLARE_OP(isinf)        /* output bool */
TL_DECLARE_OP(isfinite)     /* output bool */
TL_DECLARE_OP(signbit)      /* output bool */
/* unary with double parameters in extra (const double*) */
TL_DECLARE_OP(leaky_relu)   /* extra: {slope} */
TL_DECLARE_OP(elu)          /* extra: {alpha, scale, input_scale} */
TL_DECLARE_OP(softplus)     /* extra: {beta, threshold} */
TL_DECLARE_OP(hardtanh)     /* extra: {min, max} */
TL_DECLARE_OP(round_decimals) /* extra: {10^decimals} */
TL_DECLARE_OP(nan_to_num)   /* extra: {nan, posinf, neginf} */
TL_DECLARE_OP(clamp_scalar) /* extra: {min or NaN=none, max or NaN=none} in the loop dtype's
                               value space, passed as doubles; ints as int64 in extra_i */
/* ternary: out = f(a, b, c) */
TL_DECLARE_OP(where)        /* a: bool condition, b, c: values */
TL_DECLARE_OP(clamp)        /* a, lo, hi (tensors) */
TL_DECLARE_OP(lerp)         /* a, b, weight */
TL_DECLARE_OP(copy)         /* out = a (used for dtype-converting copies through the driver) */

#endif
