/* The copy/cast table. Each (source, destination) dtype pair gets its own strided loop. A
   value is loaded in its natural class (int64 for integers and bool, float for float32 and
   the half types, double for float64) and stored from that class, so every conversion is a
   single correctly-rounded step where C allows it (int64 -> float32 rounds once). */
#include "cpu_copy.h"
#include "cpu_pool.h"

#define LD(T, p) (*(const T *)(p))
#define ST(T, p, v) (*(T *)(p) = (v))

/* load: source dtype -> value in its class */
#define LOAD_BOOL(p) ((int64_t)(LD(uint8_t, p) != 0))
#define LOAD_U8(p)   ((int64_t)LD(uint8_t, p))
#define LOAD_I8(p)   ((int64_t)LD(int8_t, p))
#define LOAD_I16(p)  ((int64_t)LD(int16_t, p))
#define LOAD_I32(p)  ((int64_t)LD(int32_t, p))
#define LOAD_I64(p)  (LD(int64_t, p))
#define LOAD_F16(p)  (tl_f16_to_f32(LD(uint16_t, p)))
#define LOAD_BF16(p) (tl_bf16_to_f32(LD(uint16_t, p)))
#define LOAD_F32(p)  (LD(float, p))
#define LOAD_F64(p)  (LD(double, p))

/* class of each source dtype: I (int64), F (float), D (double) */
#define CLASS_BOOL I
#define CLASS_U8 I
#define CLASS_I8 I
#define CLASS_I16 I
#define CLASS_I32 I
#define CLASS_I64 I
#define CLASS_F16 F
#define CLASS_BF16 F
#define CLASS_F32 F
#define CLASS_F64 D

/* store: value of class I/F/D -> destination dtype */
#define STORE_BOOL_I(p, v) ST(uint8_t, p, (uint8_t)((v) != 0))
#define STORE_BOOL_F(p, v) ST(uint8_t, p, (uint8_t)((v) != 0))
#define STORE_BOOL_D(p, v) ST(uint8_t, p, (uint8_t)((v) != 0))
#define STORE_U8_I(p, v) ST(uint8_t, p, (uint8_t)(v))
#define STORE_U8_F(p, v) ST(uint8_t, p, (uint8_t)tl_f64_to_i32(v))
#define STORE_U8_D(p, v) ST(uint8_t, p, (uint8_t)tl_f64_to_i32(v))
#define STORE_I8_I(p, v) ST(int8_t, p, (int8_t)(v))
#define STORE_I8_F(p, v) ST(int8_t, p, (int8_t)tl_f64_to_i32(v))
#define STORE_I8_D(p, v) ST(int8_t, p, (int8_t)tl_f64_to_i32(v))
#define STORE_I16_I(p, v) ST(int16_t, p, (int16_t)(v))
#define STORE_I16_F(p, v) ST(int16_t, p, (int16_t)tl_f64_to_i32(v))
#define STORE_I16_D(p, v) ST(int16_t, p, (int16_t)tl_f64_to_i32(v))
#define STORE_I32_I(p, v) ST(int32_t, p, (int32_t)(v))
#define STORE_I32_F(p, v) ST(int32_t, p, tl_f64_to_i32(v))
#define STORE_I32_D(p, v) ST(int32_t, p, tl_f64_to_i32(v))
#define STORE_I64_I(p, v) ST(int64_t, p, (v))
#define STORE_I64_F(p, v) ST(int64_t, p, tl_f64_to_i64(v))
#define STORE_I64_D(p, v) ST(int64_t, p, tl_f64_to_i64(v))
#define STORE_F16_I(p, v) ST(uint16_t, p, tl_f32_to_f16((float)(v)))
#define STORE_F16_F(p, v) ST(uint16_t, p, tl_f32_to_f16(v))
#define STORE_F16_D(p, v) ST(uint16_t, p, tl_f32_to_f16((float)(v)))
#define STORE_BF16_I(p, v) ST(uint16_t, p, tl_f32_to_bf16((float)(v)))
#define STORE_BF16_F(p, v) ST(uint16_t, p, tl_f32_to_bf16(v))
#define STORE_BF16_D(p, v) ST(uint16_t, p, tl_f32_to_bf16((float)(v)))
#define STORE_F32_I(p, v) ST(float, p, (float)(v))
#define STORE_F32_F(p, v) ST(float, p, (v))
#define STORE_F32_D(p, v) ST(float, p, (float)(v))
#define STORE_F64_I(p, v) ST(double, p, (double)(v))
#define STORE_F64_F(p, v) ST(double, p, (double)(v))
#define STORE_F64_D(p, v) ST(double, p, (v))

#define CAT3_(a, b, c) a##b##c
#define CAT3(a, b, c) CAT3_(a, b, c)
#define STORE(D, S) CAT3(STORE_##D, _, CLASS_##S)

#define CAST_FN(S, D)                                                                         \
    static void cast_##S##_##D(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n) { \
        for (int64_t i = 0; i < n; i++, dst += ds, src += ss) STORE(D, S)(dst, LOAD_##S(src)); \
    }

#define CAST_ROW(S)                                                                  \
    CAST_FN(S, BOOL) CAST_FN(S, U8) CAST_FN(S, I8) CAST_FN(S, I16) CAST_FN(S, I32)  \
    CAST_FN(S, I64) CAST_FN(S, F16) CAST_FN(S, BF16) CAST_FN(S, F32) CAST_FN(S, F64)

CAST_ROW(BOOL) CAST_ROW(U8) CAST_ROW(I8) CAST_ROW(I16) CAST_ROW(I32)
CAST_ROW(I64) CAST_ROW(F16) CAST_ROW(BF16) CAST_ROW(F32) CAST_ROW(F64)

#define TABLE_ROW(S)                                                                        \
    { cast_##S##_BOOL, cast_##S##_U8, cast_##S##_I8, cast_##S##_I16, cast_##S##_I32,       \
      cast_##S##_I64, cast_##S##_F16, cast_##S##_BF16, cast_##S##_F32, cast_##S##_F64 }

static const tl_cast_fn CAST_TABLE[TL_NUM_DTYPES][TL_NUM_DTYPES] = {
    TABLE_ROW(BOOL), TABLE_ROW(U8), TABLE_ROW(I8), TABLE_ROW(I16), TABLE_ROW(I32),
    TABLE_ROW(I64), TABLE_ROW(F16), TABLE_ROW(BF16), TABLE_ROW(F32), TABLE_ROW(F64),
};

static const int ITEMSIZE[TL_NUM_DTYPES] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};

tl_cast_fn tl_get_cast(int src_dtype, int dst_dtype) { return CAST_TABLE[src_dtype][dst_dtype]; }

/* Same-dtype strided copy of fixed-size elements: the compiler turns each into a plain
   load/store loop (or memcpy when both sides are contiguous). */
#define MOVE_FN(T)                                                                            \
    static void move_##T(char *dst, int64_t ds, const char *src, int64_t ss, int64_t n) {    \
        if (ds == (int64_t)sizeof(T) && ss == (int64_t)sizeof(T)) {                           \
            memcpy(dst, src, (size_t)n * sizeof(T));                                          \
            return;                                                                           \
        }                                                                                     \
        for (int64_t i = 0; i < n; i++, dst += ds, src += ss) *(T *)dst = *(const T *)src;   \
    }
MOVE_FN(uint8_t)
MOVE_FN(uint16_t)
MOVE_FN(uint32_t)
MOVE_FN(uint64_t)

static tl_cast_fn move_for_size(int itemsize) {
    switch (itemsize) {
        case 1: return move_uint8_t;
        case 2: return move_uint16_t;
        case 4: return move_uint32_t;
        default: return move_uint64_t;
    }
}

/* Transposing copy of a [rows, cols] block, same dtype: the source is contiguous down a
   column, the destination along a row. Going tile by tile keeps both sides in L1. */
#define TILE 32
#define TILED_FN(T)                                                                           \
    static void tiled_##T(int64_t rows, int64_t cols, char *dst, int64_t dr, int64_t dc,     \
                          const char *src, int64_t sr, int64_t sc) {                          \
        int64_t i0, j0, i, j;                                                                 \
        for (i0 = 0; i0 < rows; i0 += TILE)                                                   \
            for (j0 = 0; j0 < cols; j0 += TILE) {                                             \
                int64_t ie = i0 + TILE < rows ? i0 + TILE : rows;                             \
                int64_t je = j0 + TILE < cols ? j0 + TILE : cols;                             \
                for (i = i0; i < ie; i++)                                                     \
                    for (j = j0; j < je; j++)                                                 \
                        *(T *)(dst + i * dr + j * dc) = *(const T *)(src + i * sr + j * sc);  \
            }                                                                                 \
    }
TILED_FN(uint8_t)
TILED_FN(uint16_t)
TILED_FN(uint32_t)
TILED_FN(uint64_t)

static void copy_serial(int ndim, const int64_t *shape, char *dst, const int64_t *dst_strides,
                        int dst_dtype, const char *src, const int64_t *src_strides, int src_dtype) {
    /* bool -> bool must normalise non-0/1 bytes, so it takes the converting loop */
    int same = src_dtype == dst_dtype && src_dtype != TL_BOOL;
    tl_cast_fn fn = same ? move_for_size(ITEMSIZE[src_dtype]) : CAST_TABLE[src_dtype][dst_dtype];
    int64_t idx[64];
    int64_t inner, dsi, ssi;
    int d, isz = ITEMSIZE[src_dtype], outer_nd = ndim - 1;
    /* a transpose: the source's unit stride is on the second-innermost dim */
    int tiled = same && ndim >= 2 && src_strides[ndim - 1] != isz && src_strides[ndim - 2] == isz
                && shape[ndim - 1] >= 8 && shape[ndim - 2] >= 8;
    if (ndim == 0) {
        fn(dst, 0, src, 0, 1);
        return;
    }
    for (d = 0; d < ndim; d++) {
        if (shape[d] == 0) return;
        idx[d] = 0;
    }
    if (tiled) outer_nd = ndim - 2;
    inner = shape[ndim - 1];
    dsi = dst_strides[ndim - 1];
    ssi = src_strides[ndim - 1];
    for (;;) {
        if (tiled) {
            int64_t r = shape[ndim - 2], c = shape[ndim - 1];
            int64_t dr = dst_strides[ndim - 2], sr = src_strides[ndim - 2];
            switch (isz) {
                case 1: tiled_uint8_t(r, c, dst, dr, dsi, src, sr, ssi); break;
                case 2: tiled_uint16_t(r, c, dst, dr, dsi, src, sr, ssi); break;
                case 4: tiled_uint32_t(r, c, dst, dr, dsi, src, sr, ssi); break;
                default: tiled_uint64_t(r, c, dst, dr, dsi, src, sr, ssi); break;
            }
        } else {
            fn(dst, dsi, src, ssi, inner);
        }
        /* advance the outer counter (odometer over dims 0..outer_nd-1) */
        for (d = outer_nd - 1; d >= 0; d--) {
            idx[d]++;
            dst += dst_strides[d];
            src += src_strides[d];
            if (idx[d] < shape[d]) break;
            dst -= dst_strides[d] * shape[d];
            src -= src_strides[d] * shape[d];
            idx[d] = 0;
        }
        if (d < 0) return;
    }
}

typedef struct {
    int ndim;
    const int64_t *shape;
    char *dst;
    const int64_t *ds;
    int ddt;
    const char *src;
    const int64_t *ss;
    int sdt;
} copy_job;

/* rows [b, e) of dim 0 */
static void copy_chunk(void *ctx, int64_t b, int64_t e) {
    const copy_job *j = (const copy_job *)ctx;
    int64_t shape[64];
    memcpy(shape, j->shape, (size_t)j->ndim * sizeof(int64_t));
    shape[0] = e - b;
    copy_serial(j->ndim, shape, j->dst + b * j->ds[0], j->ds, j->ddt, j->src + b * j->ss[0], j->ss, j->sdt);
}

#define COPY_PARALLEL_MIN (1 << 16)   /* elements */
#define COPY_GRAIN (1 << 15)          /* elements per chunk, whatever the thread count */

void tl_copy_nd(int ndim, const int64_t *shape, char *dst, const int64_t *dst_strides, int dst_dtype,
                const char *src, const int64_t *src_strides, int src_dtype) {
    int64_t total = 1, row, grain;
    int d;
    copy_job job;
    for (d = 0; d < ndim; d++) total *= shape[d];
    if (ndim == 0 || total < COPY_PARALLEL_MIN || shape[0] < 2) {
        copy_serial(ndim, shape, dst, dst_strides, dst_dtype, src, src_strides, src_dtype);
        return;
    }
    job.ndim = ndim;
    job.shape = shape;
    job.dst = dst;
    job.ds = dst_strides;
    job.ddt = dst_dtype;
    job.src = src;
    job.ss = src_strides;
    job.sdt = src_dtype;
    row = total / shape[0];
    grain = COPY_GRAIN / row > 0 ? COPY_GRAIN / row : 1;
    if (ndim >= 2 && grain < TILE) grain = TILE;      /* whole tiles for transposes */
    tl_parallel_for(0, shape[0], grain, copy_chunk, &job);
}
