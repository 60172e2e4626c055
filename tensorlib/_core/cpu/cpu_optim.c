/* The optimizers' fused multi-tensor updates (see cpu_optim.h for the descriptor).

   Contract: every pointer the descriptor names is valid for numel[i] elements of `dtype`
   (0-d states: one element of `scalar_dtype`), the parameter and its state tensors are
   written in place and share one memory order with the gradient, and the gradient does not
   overlap the parameter or a state (the front half checks all of this, and makes contiguous
   copies of tensors that do not qualify, before any pointer reaches this file).

   Each update is PyTorch's single-tensor formula step by step: a scalar argument becomes the
   element type (as PyTorch casts a Python number), each elementwise operation rounds to the
   element type, in PyTorch's order (lerp's two forms, addcmul's value * t1 * t2, addcdiv's
   value * t1 / t2). Coefficients PyTorch computes as Python floats (bias corrections, step
   sizes) are computed here in double from the same 0-d state values. Loops are plain C
   with the options hoisted, which GCC vectorizes; TL_DISPATCH compiles them for AVX-512,
   AVX2 and baseline (no fused multiply-add anywhere: -ffp-contract=off, every clone rounds
   the same way). Half types are converted to float32 in blocks and back once per element. */
#include "cpu_optim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_copy.h"
#include "cpu_pool.h"
#include "cpu_simd.h"

#define NCOEF 4
#define CHUNK ((int64_t)1 << 14)   /* elements per work item: fixed, so per-thread work is too */
#define HBLOCK 256                 /* half types: elements converted to float32 at a time */

typedef struct {
    int64_t t, begin, end;
} work_item;

typedef struct {
    const tl_optim_args *a;
    const double *coef;
    const work_item *items;
} optim_ctx;

/* ------------------------------------------------------------------------------------------
   The 0-d states, read and written in their own dtype (PyTorch keeps them as float32 or
   float64 tensors, so every value is rounded to that type when stored). */

static double sget(const tl_optim_args *a, int k, int64_t i) {
    if (a->scalar_dtype[k] == TL_F32) return (double)*(const float *)a->scalar[k][i];
    return *(const double *)a->scalar[k][i];
}

static double sset(const tl_optim_args *a, int k, int64_t i, double v) {
    if (a->scalar_dtype[k] == TL_F32) {
        float f = (float)v;
        *(float *)a->scalar[k][i] = f;
        return (double)f;
    }
    *(double *)a->scalar[k][i] = v;
    return v;
}

/* A Python float meeting 0-d state k: PyTorch casts it to the state's dtype first. */
static double scast(const tl_optim_args *a, int k, double v) {
    return a->scalar_dtype[k] == TL_F32 ? (double)(float)v : v;
}

/* Advance tensor i's 0-d state and compute its coefficients (PyTorch's Python-float part). */
static void prepare(const tl_optim_args *a, int64_t i, double *c) {
    const double *h = a->hp;
    double lr = h[0], step, b1, b2;
    if (a->op == TL_OPT_SGD) return;
    step = sset(a, 0, i, sget(a, 0, i) + 1.0);   /* step_t += 1, in the step's dtype */
    switch (a->op) {
    case TL_OPT_ADAM:
        b1 = h[2];
        b2 = h[3];
        c[0] = lr / (1.0 - pow(b1, step));
        c[1] = sqrt(1.0 - pow(b2, step));        /* bias_correction2 ** 0.5 */
        break;
    case TL_OPT_ADAMAX:
        c[0] = lr / (1.0 - pow(h[2], step));
        break;
    case TL_OPT_NADAM: {
        double md = h[5], mu, mu_next, prod;
        b1 = h[2];
        b2 = h[3];
        c[0] = 1.0 - pow(b2, step);
        mu = b1 * (1.0 - 0.5 * pow(0.96, step * md));
        mu_next = b1 * (1.0 - 0.5 * pow(0.96, (step + 1.0) * md));
        prod = sset(a, 1, i, sget(a, 1, i) * scast(a, 1, mu));   /* mu_product *= mu */
        c[1] = -lr * (1.0 - mu) / (1.0 - prod);
        c[2] = (-lr * mu_next) / (1.0 - prod * mu_next);
        break;
    }
    case TL_OPT_RADAM: {
        double bc2, rho_inf, rho_t;
        b1 = h[2];
        b2 = h[3];
        bc2 = 1.0 - pow(b2, step);
        c[0] = 1.0 - pow(b1, step);
        c[1] = pow(bc2, 0.5);
        rho_inf = 2.0 / (1.0 - b2) - 1.0;
        rho_t = rho_inf - 2.0 * step * pow(b2, step) / bc2;
        c[3] = rho_t > 5.0;
        c[2] = c[3] ? pow((rho_t - 4.0) * (rho_t - 2.0) * rho_inf /
                          ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t), 0.5) : 0.0;
        break;
    }
    case TL_OPT_ADAGRAD:
        c[0] = lr / (1.0 + (step - 1.0) * h[2]);
        break;
    case TL_OPT_ASGD: {
        double lambd = h[2], alpha = h[3], t0 = h[4];
        c[0] = sget(a, 1, i);                    /* the eta and mu this step uses */
        c[1] = sget(a, 2, i);
        double eta = lr / pow(1.0 + lambd * lr * step, alpha);
        double mu = 1.0 / (step - t0 > 1.0 ? step - t0 : 1.0);
        if (h[5] != 0) {     /* PyTorch makes them torch.as_tensor(x): the default dtype */
            eta = (double)(float)eta;
            mu = (double)(float)mu;
        }
        sset(a, 1, i, eta);
        sset(a, 2, i, mu);
        break;
    }
    default:   /* Adadelta, RMSprop, Rprop: the step is only counted */
        break;
    }
}

/* ------------------------------------------------------------------------------------------
   The elementwise updates, one function per op and element type: d is the gradient with
   maximize applied, L2 weight decay adds wd * p to it (grad.add(param, alpha=wd)), and
   decoupled weight decay scales the parameter first (param.mul_(1 - lr * wd)). */

/* torch.lerp's two forms: from the start for small weights, from the end for large ones */
#define LERP(T, s, e, w) \
    ((w) < (T)0.5 ? (s) + (w) * ((e) - (s)) : (e) - ((e) - (s)) * ((T)1 - (w)))
/* torch.maximum: NaN wins (an inline function of two selects: GCC vectorizes loops calling
   it, where the same as one nested conditional expression stays scalar) */
static inline float tmax_f32(float x, float y) {
    float mx = x > y ? x : y;
    return x != x ? x : mx;
}

static inline double tmax_f64(double x, double y) {
    double mx = x > y ? x : y;
    return x != x ? x : mx;
}

#define ADAM_LOOP(T, SFX, SQRT, AMS)                                                               \
    for (j = 0; j < m; j++) {                                                                      \
        T d = sgn * g[j], q = p[j], e, v, den;                                                     \
        q = q * decay;            /* decoupled weight decay (else decay is 1) */                   \
        d = l2 ? d + wd * q : d;                                                                   \
        e = LERP(T, s0[j], d, w1);                                                                 \
        v = s1[j] * b2;                                                                            \
        v = v + v2 * d * d;                                                                        \
        s0[j] = e;                                                                                 \
        s1[j] = v;                                                                                 \
        if (AMS) {                                                                                 \
            v = tmax_##SFX(s2[j], v);                                                              \
            s2[j] = v;                                                                             \
        }                                                                                          \
        den = SQRT(v) / bc2s + eps;                                                                \
        p[j] = q + nstep * e / den;                                                                \
    }

#define RMSPROP_LOOP(T, SQRT, CENTERED, MOM)                                                       \
    for (j = 0; j < m; j++) {                                                                      \
        T d = sgn * g[j], sq, avg;                                                                 \
        d = has_wd ? d + wd * p[j] : d;                                                            \
        sq = s0[j] * al;                                                                           \
        sq = sq + a1 * d * d;                                                                      \
        s0[j] = sq;                                                                                \
        if (CENTERED) {                                                                            \
            T gav = LERP(T, ga[j], d, a1);                                                         \
            ga[j] = gav;                                                                           \
            avg = SQRT(sq + (T)(-1) * gav * gav);                                                  \
        } else {                                                                                   \
            avg = SQRT(sq);                                                                        \
        }                                                                                          \
        avg = avg + eps;                                                                           \
        if (MOM) {                                                                                 \
            T b = s1[j] * mom;                                                                     \
            b = b + (T)1 * d / avg;                                                                \
            s1[j] = b;                                                                             \
            p[j] = p[j] + (-lr) * b;                                                               \
        } else {                                                                                   \
            p[j] = p[j] + (-lr) * d / avg;                                                         \
        }                                                                                          \
    }

#define DEFINE_UPDATES(T, SFX, SQRT, FABS)                                                         \
TL_DISPATCH static void sgd_##SFX(const tl_optim_args *a, const double *c, int64_t t,              \
    T *restrict p, const T *restrict g, T *restrict s0, T *restrict s1, T *restrict s2,            \
    int64_t m) {                                                                                   \
    const T lr = (T)a->hp[0], wd = (T)a->hp[1], mom = (T)a->hp[2];                                 \
    const T damp = (T)(1.0 - a->hp[3]);                                                            \
    const T sgn = (a->flags & TL_OPT_MAXIMIZE) ? (T)-1 : (T)1;                                     \
    const int has_wd = a->hp[1] != 0;                                                              \
    const int nest = a->flags & TL_OPT_NESTEROV;                                                   \
    int64_t j;                                                                                     \
    (void)c; (void)s1; (void)s2;                                                                   \
    if (!(a->flags & TL_OPT_MOMENTUM)) {                                                           \
        for (j = 0; j < m; j++) {                                                                  \
            T d = sgn * g[j];                                                                      \
            d = has_wd ? d + wd * p[j] : d;                                                        \
            p[j] = p[j] + (-lr) * d;                                                               \
        }                                                                                          \
    } else if (a->fresh[t]) {                                                                      \
        for (j = 0; j < m; j++) {                                                                  \
            T d = sgn * g[j];                                                                      \
            d = has_wd ? d + wd * p[j] : d;                                                        \
            s0[j] = d;                                                                             \
            d = nest ? d + mom * d : d;                                                            \
            p[j] = p[j] + (-lr) * d;                                                               \
        }                                                                                          \
    } else {                                                                                       \
        for (j = 0; j < m; j++) {                                                                  \
            T d = sgn * g[j], b;                                                                   \
            d = has_wd ? d + wd * p[j] : d;                                                        \
            b = s0[j] * mom;                                                                       \
            b = b + damp * d;                                                                      \
            s0[j] = b;                                                                             \
            d = nest ? d + mom * b : b;                                                            \
            p[j] = p[j] + (-lr) * d;                                                               \
        }                                                                                          \
    }                                                                                              \
}                                                                                                  \
                                                                                                   \
TL_DISPATCH static void adam_##SFX(const tl_optim_args *a, const double *c, int64_t t,             \
    T *restrict p, const T *restrict g, T *restrict s0, T *restrict s1, T *restrict s2,            \
    int64_t m) {                                                                                   \
    const T wd = (T)a->hp[1], w1 = (T)(1.0 - a->hp[2]), b2 = (T)a->hp[3];                          \
    const T v2 = (T)(1.0 - a->hp[3]), eps = (T)a->hp[4];                                           \
    const int dec = a->hp[1] != 0 && (a->flags & TL_OPT_DECOUPLED);                                \
    const T decay = dec ? (T)(1.0 - a->hp[0] * a->hp[1]) : (T)1;                                   \
    const T nstep = (T)(-c[0]), bc2s = (T)c[1];                                                    \
    const T sgn = (a->flags & TL_OPT_MAXIMIZE) ? (T)-1 : (T)1;                                     \
    const int l2 = a->hp[1] != 0 && !(a->flags & TL_OPT_DECOUPLED);                                \
    int64_t j;                                                                                     \
    (void)t;                                                                                       \
    if (a->flags & TL_OPT_AMSGRAD)                                                                 \
        ADAM_LOOP(T, SFX, SQRT, 1)                                                                 \
    else                                                                                           \
        ADAM_LOOP(T, SFX, SQRT, 0)                                                                 \
}                                                                                                  \
                                                                                                   \
TL_DISPATCH static void adamax_##SFX(const tl_optim_args *a, const double *c, int64_t t,           \
    T *restrict p, const T *restrict g, T *restrict s0, T *restrict s1, T *restrict s2,            \
    int64_t m) {                                                                                   \
    const T wd = (T)a->hp[1], w1 = (T)(1.0 - a->hp[2]), b2 = (T)a->hp[3];                          \
    const T eps = (T)a->hp[4], nclr = (T)(-c[0]);                                                  \
    const T sgn = (a->flags & TL_OPT_MAXIMIZE) ? (T)-1 : (T)1;                                     \
    const int has_wd = a->hp[1] != 0;                                                              \
    int64_t j;                                                                                     \
    (void)t; (void)s2;                                                                             \
    for (j = 0; j < m; j++) {                                                                      \
        T d = sgn * g[j], e, u, ad;                                                                \
        d = has_wd ? d + wd * p[j] : d;                                                            \
        e = LERP(T, s0[j], d, w1);                                                                 \
        u = s1[j] * b2;                                                                            \
        ad = FABS(d) + eps;                                                                        \
        u = tmax_##SFX(u, ad);                                                                     \
        s0[j] = e;                                                                                 \
        s1[j] = u;                                                                                 \
        p[j] = p[j] + nclr * e / u;                                                                \
    }                                                                                              \
}                                                                                                  \
                                                                                                   \
TL_DISPATCH static void nadam_##SFX(const tl_optim_args *a, const double *c, int64_t t,            \
    T *restrict p, const T *restrict g, T *restrict s0, T *restrict s1, T *restrict s2,            \
    int64_t m) {                                                                                   \
    const T wd = (T)a->hp[1], w1 = (T)(1.0 - a->hp[2]), b2 = (T)a->hp[3];                          \
    const T v2 = (T)(1.0 - a->hp[3]), eps = (T)a->hp[4];                                           \
    const int dec = a->hp[1] != 0 && (a->flags & TL_OPT_DECOUPLED);                                \
    const T decay = dec ? (T)(1.0 - a->hp[0] * a->hp[1]) : (T)1;                                   \
    const T bc2 = (T)c[0];                                                                         \
    const T cg = (T)c[1], ce = (T)c[2];                                                            \
    const T sgn = (a->flags & TL_OPT_MAXIMIZE) ? (T)-1 : (T)1;                                     \
    const int l2 = a->hp[1] != 0 && !(a->flags & TL_OPT_DECOUPLED);                                \
    int64_t j;                                                                                     \
    (void)t; (void)s2;                                                                             \
    for (j = 0; j < m; j++) {                                                                      \
        T d = sgn * g[j], q = p[j], e, v, den;                                                     \
        q = q * decay;            /* decoupled weight decay (else decay is 1) */                   \
        d = l2 ? d + wd * q : d;                                                                   \
        e = LERP(T, s0[j], d, w1);                                                                 \
        v = s1[j] * b2;                                                                            \
        v = v + v2 * d * d;                                                                        \
        s0[j] = e;                                                                                 \
        s1[j] = v;                                                                                 \
        den = SQRT(v / bc2) + eps;                                                                 \
        q = q + cg * d / den;                                                                      \
        p[j] = q + ce * e / den;                                                                   \
    }                                                                                              \
}                                                                                                  \
                                                                                                   \
TL_DISPATCH static void radam_##SFX(const tl_optim_args *a, const double *c, int64_t t,            \
    T *restrict p, const T *restrict g, T *restrict s0, T *restrict s1, T *restrict s2,            \
    int64_t m) {                                                                                   \
    const T lr = (T)a->hp[0], wd = (T)a->hp[1], w1 = (T)(1.0 - a->hp[2]);                          \
    const T b2 = (T)a->hp[3], v2 = (T)(1.0 - a->hp[3]), eps = (T)a->hp[4];                         \
    const int dec = a->hp[1] != 0 && (a->flags & TL_OPT_DECOUPLED);                                \
    const T decay = dec ? (T)(1.0 - a->hp[0] * a->hp[1]) : (T)1;                                   \
    const T bc1 = (T)c[0], bc2s = (T)c[1];                                                         \
    const T rect = (T)c[2];                                                                        \
    const T sgn = (a->flags & TL_OPT_MAXIMIZE) ? (T)-1 : (T)1;                                     \
    const int adaptive = c[3] != 0;                                                                \
    const int l2 = a->hp[1] != 0 && !(a->flags & TL_OPT_DECOUPLED);                                \
    int64_t j;                                                                                     \
    (void)t; (void)s2;                                                                             \
    for (j = 0; j < m; j++) {                                                                      \
        T d = sgn * g[j], q = p[j], e, v, u, ua;                                                   \
        q = q * decay;            /* decoupled weight decay (else decay is 1) */                   \
        d = l2 ? d + wd * q : d;                                                                   \
        e = LERP(T, s0[j], d, w1);                                                                 \
        v = s1[j] * b2;                                                                            \
        v = v + v2 * d * d;                                                                        \
        s0[j] = e;                                                                                 \
        s1[j] = v;                                                                                 \
        u = e / bc1 * lr;                                                                          \
        ua = u * (bc2s / (SQRT(v) + eps)) * rect;                                                  \
        p[j] = q - (adaptive ? ua : u);                                                            \
    }                                                                                              \
}                                                                                                  \
                                                                                                   \
TL_DISPATCH static void adagrad_##SFX(const tl_optim_args *a, const double *c, int64_t t,          \
    T *restrict p, const T *restrict g, T *restrict s0, T *restrict s1, T *restrict s2,            \
    int64_t m) {                                                                                   \
    const T wd = (T)a->hp[1], eps = (T)a->hp[3], nclr = (T)(-c[0]);                                \
    const T sgn = (a->flags & TL_OPT_MAXIMIZE) ? (T)-1 : (T)1;                                     \
    const int has_wd = a->hp[1] != 0;                                                              \
    int64_t j;                                                                                     \
    (void)t; (void)s1; (void)s2;                                                                   \
    for (j = 0; j < m; j++) {                                                                      \
        T d = sgn * g[j], s;                                                                       \
        d = has_wd ? d + wd * p[j] : d;                                                            \
        s = s0[j] + (T)1 * d * d;                                                                  \
        s0[j] = s;                                                                                 \
        p[j] = p[j] + nclr * d / (SQRT(s) + eps);                                                  \
    }                                                                                              \
}                                                                                                  \
                                                                                                   \
TL_DISPATCH static void adadelta_##SFX(const tl_optim_args *a, const double *c, int64_t t,         \
    T *restrict p, const T *restrict g, T *restrict s0, T *restrict s1, T *restrict s2,            \
    int64_t m) {                                                                                   \
    const T lr = (T)a->hp[0], wd = (T)a->hp[1], rho = (T)a->hp[2];                                 \
    const T r1 = (T)(1.0 - a->hp[2]), eps = (T)a->hp[3];                                           \
    const T sgn = (a->flags & TL_OPT_MAXIMIZE) ? (T)-1 : (T)1;                                     \
    const int has_wd = a->hp[1] != 0;                                                              \
    int64_t j;                                                                                     \
    (void)c; (void)t; (void)s2;                                                                    \
    for (j = 0; j < m; j++) {                                                                      \
        T d = sgn * g[j], sq, acc, std, delta;                                                     \
        d = has_wd ? d + wd * p[j] : d;                                                            \
        sq = s0[j] * rho;                                                                          \
        sq = sq + r1 * d * d;                                                                      \
        std = SQRT(sq + eps);                                                                      \
        delta = SQRT(s1[j] + eps);                                                                 \
        delta = delta / std;                                                                       \
        delta = delta * d;                                                                         \
        acc = s1[j] * rho;                                                                         \
        acc = acc + r1 * delta * delta;                                                            \
        s0[j] = sq;                                                                                \
        s1[j] = acc;                                                                               \
        p[j] = p[j] + (-lr) * delta;                                                               \
    }                                                                                              \
}                                                                                                  \
                                                                                                   \
TL_DISPATCH static void rmsprop_##SFX(const tl_optim_args *a, const double *c, int64_t t,          \
    T *restrict p, const T *restrict g, T *restrict s0, T *restrict s1, T *restrict s2,            \
    int64_t m) {                                                                                   \
    const T lr = (T)a->hp[0], wd = (T)a->hp[1], al = (T)a->hp[2];                                  \
    const T a1 = (T)(1.0 - a->hp[2]), eps = (T)a->hp[3], mom = (T)a->hp[4];                        \
    const T sgn = (a->flags & TL_OPT_MAXIMIZE) ? (T)-1 : (T)1;                                     \
    const int has_wd = a->hp[1] != 0;                                                              \
    const int has_mom = (a->flags & TL_OPT_MOMENTUM) != 0;                                         \
    const int centered = (a->flags & TL_OPT_CENTERED) != 0;                                        \
    T *restrict ga = has_mom ? s2 : s1;     /* grad_avg, when centered, is the last state */       \
    int64_t j;                                                                                     \
    (void)c; (void)t;                                                                              \
    if (centered && has_mom)                                                                       \
        RMSPROP_LOOP(T, SQRT, 1, 1)                                                                \
    else if (centered)                                                                             \
        RMSPROP_LOOP(T, SQRT, 1, 0)                                                                \
    else if (has_mom)                                                                              \
        RMSPROP_LOOP(T, SQRT, 0, 1)                                                                \
    else                                                                                           \
        RMSPROP_LOOP(T, SQRT, 0, 0)                                                                \
}                                                                                                  \
                                                                                                   \
TL_DISPATCH static void rprop_##SFX(const tl_optim_args *a, const double *c, int64_t t,            \
    T *restrict p, const T *restrict g, T *restrict s0, T *restrict s1, T *restrict s2,            \
    int64_t m) {                                                                                   \
    const T em = (T)a->hp[2], ep = (T)a->hp[3], lo = (T)a->hp[4], hi = (T)a->hp[5];                \
    const T sgn = (a->flags & TL_OPT_MAXIMIZE) ? (T)-1 : (T)1;                                     \
    int64_t j;                                                                                     \
    (void)c; (void)t; (void)s2;                                                                    \
    for (j = 0; j < m; j++) {                                                                      \
        /* factor: etaplus where grad * prev > 0, etaminus where < 0, else 1 (sign(NaN) is 0       \
           in PyTorch); where it is etaminus (only there: 0 < etaminus < 1 < etaplus) the          \
           gradient counts as 0 */                                                                 \
        T d = sgn * g[j], s = d * s0[j], f = (T)1, ss, sg;                                         \
        f = s > 0 ? ep : f;                                                                        \
        f = s < 0 ? em : f;                                                                        \
        ss = s1[j] * f;                                                                            \
        ss = ss < lo ? lo : ss;                                                                    \
        ss = ss > hi ? hi : ss;                                                                    \
        s1[j] = ss;                                                                                \
        d = s < 0 ? (T)0 : d;                                                                      \
        sg = (d > 0 ? (T)1 : (T)0) - (d < 0 ? (T)1 : (T)0);                                        \
        p[j] = p[j] + (T)(-1) * sg * ss;                                                           \
        s0[j] = d;                                                                                 \
    }                                                                                              \
}                                                                                                  \
                                                                                                   \
TL_DISPATCH static void asgd_##SFX(const tl_optim_args *a, const double *c, int64_t t,             \
    T *restrict p, const T *restrict g, T *restrict s0, T *restrict s1, T *restrict s2,            \
    int64_t m) {                                                                                   \
    const T wd = (T)a->hp[1], decay = (T)(1.0 - a->hp[2] * c[0]), neta = (T)(-c[0]);               \
    const T mu = (T)c[1];                                                                          \
    const T sgn = (a->flags & TL_OPT_MAXIMIZE) ? (T)-1 : (T)1;                                     \
    const int has_wd = a->hp[1] != 0, avg = c[1] != 1.0;                                           \
    int64_t j;                                                                                     \
    (void)t; (void)s1; (void)s2;                                                                   \
    for (j = 0; j < m; j++) {                                                                      \
        T d = sgn * g[j], q = p[j];                                                                \
        d = has_wd ? d + wd * q : d;                                                               \
        q = q * decay;                                                                             \
        q = q + neta * d;                                                                          \
        p[j] = q;                                                                                  \
        s0[j] = avg ? s0[j] + (q - s0[j]) * mu : q;                                                \
    }                                                                                              \
}

DEFINE_UPDATES(float, f32, sqrtf, fabsf)
DEFINE_UPDATES(double, f64, sqrt, fabs)

typedef void (*upd_f32)(const tl_optim_args *, const double *, int64_t, float *, const float *,
                        float *, float *, float *, int64_t);
typedef void (*upd_f64)(const tl_optim_args *, const double *, int64_t, double *,
                        const double *, double *, double *, double *, int64_t);

static const upd_f32 UPD_F32[TL_OPT_NUM_OPS] = {
    sgd_f32, adam_f32, adamax_f32, nadam_f32, radam_f32, adagrad_f32, adadelta_f32,
    rmsprop_f32, rprop_f32, asgd_f32};
static const upd_f64 UPD_F64[TL_OPT_NUM_OPS] = {
    sgd_f64, adam_f64, adamax_f64, nadam_f64, radam_f64, adagrad_f64, adadelta_f64,
    rmsprop_f64, rprop_f64, asgd_f64};

/* ------------------------------------------------------------------------------------------
   Half types: blocks of HBLOCK elements loaded to float32, updated by the float32 function,
   stored back (the gradient is only read). */

static void load_half(int dtype, const char *src, float *dst, int64_t m) {
    const uint16_t *h = (const uint16_t *)src;
    int64_t j;
    if (dtype == TL_F16)
        for (j = 0; j < m; j++) dst[j] = tl_f16_to_f32(h[j]);
    else
        for (j = 0; j < m; j++) dst[j] = tl_bf16_to_f32(h[j]);
}

static void store_half(int dtype, const float *src, char *dst, int64_t m) {
    uint16_t *h = (uint16_t *)dst;
    int64_t j;
    if (dtype == TL_F16)
        for (j = 0; j < m; j++) h[j] = tl_f32_to_f16(src[j]);
    else
        for (j = 0; j < m; j++) h[j] = tl_f32_to_bf16(src[j]);
}

static void run_half(const tl_optim_args *a, const double *c, int64_t t, int64_t begin,
                     int64_t end) {
    float buf[2 + TL_OPT_MAX_STATE][HBLOCK];
    float *st[TL_OPT_MAX_STATE] = {NULL, NULL, NULL};
    int64_t b, m, off;
    int k;
    for (b = begin; b < end; b += HBLOCK) {
        m = end - b < HBLOCK ? end - b : HBLOCK;
        off = b * 2;
        load_half(a->dtype, a->param[t] + off, buf[0], m);
        load_half(a->dtype, a->grad[t] + off, buf[1], m);
        for (k = 0; k < TL_OPT_MAX_STATE; k++) {
            if (a->state[k] == NULL) continue;
            st[k] = buf[2 + k];
            load_half(a->dtype, a->state[k][t] + off, st[k], m);
        }
        UPD_F32[a->op](a, c, t, buf[0], buf[1], st[0], st[1], st[2], m);
        store_half(a->dtype, buf[0], a->param[t] + off, m);
        for (k = 0; k < TL_OPT_MAX_STATE; k++)
            if (st[k] != NULL) store_half(a->dtype, st[k], a->state[k][t] + off, m);
    }
}

static char *state_at(const tl_optim_args *a, int k, int64_t t, int64_t off) {
    return a->state[k] == NULL ? NULL : a->state[k][t] + off;
}

static void run_chunk(void *vctx, int64_t begin, int64_t end) {
    const optim_ctx *ctx = (const optim_ctx *)vctx;
    const tl_optim_args *a = ctx->a;
    int64_t w;
    for (w = begin; w < end; w++) {
        const work_item *it = &ctx->items[w];
        const double *c = ctx->coef + it->t * NCOEF;
        int64_t t = it->t, m = it->end - it->begin;
        if (a->dtype == TL_F32) {
            int64_t off = it->begin * 4;
            UPD_F32[a->op](a, c, t, (float *)(a->param[t] + off),
                           (const float *)(a->grad[t] + off), (float *)state_at(a, 0, t, off),
                           (float *)state_at(a, 1, t, off), (float *)state_at(a, 2, t, off),
                           m);
        } else if (a->dtype == TL_F64) {
            int64_t off = it->begin * 8;
            UPD_F64[a->op](a, c, t, (double *)(a->param[t] + off),
                           (const double *)(a->grad[t] + off),
                           (double *)state_at(a, 0, t, off), (double *)state_at(a, 1, t, off),
                           (double *)state_at(a, 2, t, off), m);
        } else {
            run_half(a, c, t, it->begin, it->end);
        }
    }
}

int tl_optim_run(const tl_optim_args *a) {
    optim_ctx ctx;
    double *coef;
    work_item *items;
    int64_t i, nitems = 0, w = 0, s;
    if (a->n <= 0) return 0;
    for (i = 0; i < a->n; i++) nitems += (a->numel[i] + CHUNK - 1) / CHUNK;
    coef = (double *)calloc((size_t)a->n * NCOEF, sizeof(double));
    items = (work_item *)malloc((size_t)(nitems > 0 ? nitems : 1) * sizeof(work_item));
    if (coef == NULL || items == NULL) {
        free(coef);
        free(items);
        return -1;
    }
    for (i = 0; i < a->n; i++) {
        prepare(a, i, coef + i * NCOEF);
        for (s = 0; s < a->numel[i]; s += CHUNK) {
            items[w].t = i;
            items[w].begin = s;
            items[w].end = s + CHUNK < a->numel[i] ? s + CHUNK : a->numel[i];
            w++;
        }
    }
    ctx.a = a;
    ctx.coef = coef;
    ctx.items = items;
    tl_parallel_for(0, nitems, 1, run_chunk, &ctx);
    free(coef);
    free(items);
    return 0;
}
