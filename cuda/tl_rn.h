// tl_rn.h: arithmetic rounded step by step, as the CPU kernels round it.
//
// nvcc contracts a multiply feeding an add into one fused multiply-add by default, which
// rounds once where the CPU's C code (built with -ffp-contract=off) rounds twice. Kernels that
// must give the CPU's bits (the optimizers' updates, the Philox fills) multiply through these:
// the _rn intrinsics are never contracted. The emulator compiles with -ffp-contract=off, so
// plain operators are the same there.
#pragma once

#ifdef TL_EMU
__device__ __forceinline__ float tl_rn_mul(float a, float b) { return a * b; }
__device__ __forceinline__ double tl_rn_mul(double a, double b) { return a * b; }
__device__ __forceinline__ float tl_rn_add(float a, float b) { return a + b; }
__device__ __forceinline__ double tl_rn_add(double a, double b) { return a + b; }
#else
__device__ __forceinline__ float tl_rn_mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double tl_rn_mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float tl_rn_add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double tl_rn_add(double a, double b) { return __dadd_rn(a, b); }
#endif
