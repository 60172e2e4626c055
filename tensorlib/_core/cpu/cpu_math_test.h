/* Test-only entry point for the cpu_math.h functions (the _math_test module's _math_eval hook). */
#ifndef TL_CPU_MATH_TEST_H
#define TL_CPU_MATH_TEST_H
#include <stdint.h>

enum { TL_MT_DISPATCH = 0, TL_MT_AVX512F = 1, TL_MT_AVX2 = 2, TL_MT_BASELINE = 3 };

/* out[i] = f(x[i]) (or f(x[i], y[i]) for atan2 and pow, f(x[i], beta, threshold) for softplus) over
   n contiguous floats (is_double = 0) or doubles. isa picks the TL_DISPATCH loop (0) or one
   of its clones compiled on its own (1-3; float32 only).
   Returns 0, -1 for an unknown name, -2 when this CPU lacks the ISA or it is not built. */
int tl_math_test_run(const char *name, int isa, int is_double, const void *x, const void *y,
                     void *out, int64_t n, double beta, double threshold);

/* Names accepted by tl_math_test_run, NULL-terminated. */
extern const char *const tl_math_test_names[];

#endif
