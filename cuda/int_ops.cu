// int_ops.cu: the integer matrix product (CUDABackend.igemm) and the in-place scaling of
// scatter_reduce's mean and index accumulation (CUDABackend.scale), as cpu_linalg.c's
// tl_igemm and cpu_index.c's tl_index_scale compute them (tensorlib/cuda/_intops.py).
#include "tl_cuda.h"

// c[B, M, N] (contiguous) = a[B, M, K] @ b[B, K, N] in int64, wrapping modulo 2**64 as the
// CPU's loop does (unsigned arithmetic: signed overflow is undefined in C++). One thread per
// output element; strides in elements, a batch stride of 0 broadcasts.
struct tl_igemm_dev {
    long long B, M, N, K;
    long long sab, sam, sak;
    long long sbb, sbk, sbn;
};

extern "C" __global__ void tl_igemm_i64(long long* c, const long long* a, const long long* b,
                                        tl_igemm_dev g) {
    const long long total = g.B * g.M * g.N;
    TL_FOR_EACH(i, total) {
        const long long j = i % g.N, r = i / g.N, m = r % g.M, bi = r / g.M;
        const long long* ar = a + bi * g.sab + m * g.sam;
        const long long* bc = b + bi * g.sbb + j * g.sbn;
        unsigned long long acc = 0ull;
        for (long long k = 0; k < g.K; ++k)
            acc += (unsigned long long)ar[k * g.sak] * (unsigned long long)bc[k * g.sbk];
        c[i] = (long long)acc;
    }
}

// x *= alpha over n contiguous elements of tensorlib dtype code `dtype`: integers multiply in
// int64 and truncate (wrapping), bool keeps x != 0 && alpha != 0, half types compute in
// float32, float32 multiplies by (float)alpha
extern "C" __global__ void tl_scale(unsigned char* data, long long n, int dtype, double ad,
                                    long long ai) {
    const unsigned long long ua = (unsigned long long)ai;
    TL_FOR_EACH(i, n) {
        switch (dtype) {
            case 0: data[i] = (unsigned char)(data[i] != 0 && ai != 0); break;
            case 1: data[i] = (unsigned char)(data[i] * ua); break;
            case 2: {
                signed char* q = (signed char*)data;
                q[i] = (signed char)((unsigned long long)(long long)q[i] * ua);
                break;
            }
            case 3: {
                short* q = (short*)data;
                q[i] = (short)((unsigned long long)(long long)q[i] * ua);
                break;
            }
            case 4: {
                int* q = (int*)data;
                q[i] = (int)((unsigned long long)(long long)q[i] * ua);
                break;
            }
            case 5: {
                long long* q = (long long*)data;
                q[i] = (long long)((unsigned long long)q[i] * ua);
                break;
            }
            case 6: {
                unsigned short* q = (unsigned short*)data;
                q[i] = tl_float_to_half(tl_half_to_float(q[i]) * (float)ad);
                break;
            }
            case 7: {
                unsigned short* q = (unsigned short*)data;
                q[i] = tl_float_to_bf16(tl_bf16_to_float(q[i]) * (float)ad);
                break;
            }
            case 8: ((float*)data)[i] *= (float)ad; break;
            default: ((double*)data)[i] *= ad; break;
        }
    }
}
