// optim_ops.cu: the optimizers' fused updates (tensorlib.optim) on the device, one launch per
// parameter (tensorlib/cuda/_optim.py).
//
// The elementwise part of cpu_optim.c's updates, operation for operation: the host advances
// the 0-d states ('step', NAdam's mu_product, ASGD's eta and mu: CPU tensors, as PyTorch keeps
// them) and computes every per-tensor coefficient in double exactly as cpu_optim.c's
// prepare() does; the kernel casts them to the element type and applies PyTorch's
// single-tensor formula with each operation rounded to the element type (tl_rn.h: no fused
// multiply-add), so a device step gives the CPU's values. float16/bfloat16 parameters and
// states are loaded to float32, updated and stored back once per element, as on the CPU.
#include "tl_cuda.h"
#include "tl_rn.h"

// ops: cpu_optim.h's TL_OPT_* order
enum { O_SGD, O_ADAM, O_ADAMAX, O_NADAM, O_RADAM, O_ADAGRAD, O_ADADELTA, O_RMSPROP, O_RPROP,
       O_ASGD };

// opts: what the host decided from the flags and hyperparameters
enum {
    OPT_WD = 1,          // L2 weight decay: d += wd * p
    OPT_NESTEROV = 2,    // SGD
    OPT_MOMENTUM = 4,    // SGD, RMSprop: a momentum buffer
    OPT_FRESH = 8,       // SGD: the momentum buffer starts as the gradient
    OPT_AMSGRAD = 16,    // Adam: max_exp_avg_sq is state 2
    OPT_CENTERED = 32,   // RMSprop: grad_avg is the last state
    OPT_ADAPTIVE = 64,   // RAdam: the rectified step this step
    OPT_AVERAGE = 128    // ASGD: ax moves toward the parameter (mu != 1)
};

// One parameter's launch. k[0] is the sign of the gradient (-1 with maximize); the rest, by op
// (each as cpu_optim.c computes it, in double; the kernel casts to the element type):
//   SGD       lr, wd, momentum, 1 - dampening
//   Adam      wd, 1 - beta1, beta2, 1 - beta2, eps, decoupled decay, -step_size, sqrt(bc2)
//   Adamax    wd, 1 - beta1, beta2, eps, -clr
//   NAdam     wd, 1 - beta1, beta2, 1 - beta2, eps, decoupled decay, bc2, grad coef, avg coef
//   RAdam     lr, wd, 1 - beta1, beta2, 1 - beta2, eps, decoupled decay, bc1, sqrt(bc2), rect
//   Adagrad   wd, eps, -clr
//   Adadelta  lr, wd, rho, 1 - rho, eps
//   RMSprop   lr, wd, alpha, 1 - alpha, eps, momentum
//   Rprop     etaminus, etaplus, step_size_min, step_size_max
//   ASGD      wd, 1 - lambd * eta, -eta, mu
struct tl_optim_dev {
    int op;
    int opts;
    long long n;
    double k[12];
};

template <class T>
__device__ __forceinline__ T o_lerp(T s, T e, T w) {
    // torch.lerp's two forms: from the start for small weights, from the end for large ones
    return w < (T)0.5 ? s + tl_rn_mul(w, e - s) : e - tl_rn_mul(e - s, (T)1 - w);
}

template <class T>
__device__ __forceinline__ T o_max(T x, T y) {   // torch.maximum: NaN wins
    T mx = x > y ? x : y;
    return x != x ? x : mx;
}

// one element: p the parameter, g the gradient, s the states (those the op has)
template <class T>
__device__ __forceinline__ void o_update(const tl_optim_dev& a, T& p, T g, T* s) {
#define K(i) ((T)a.k[i])
#define M(x, y) tl_rn_mul((T)(x), (T)(y))
    const int o = a.opts;
    T d = M(K(0), g);
    switch (a.op) {
        case O_SGD: {
            d = (o & OPT_WD) ? d + M(K(2), p) : d;
            if (!(o & OPT_MOMENTUM)) {
                p = p + M(-K(1), d);
            } else if (o & OPT_FRESH) {
                s[0] = d;
                d = (o & OPT_NESTEROV) ? d + M(K(3), d) : d;
                p = p + M(-K(1), d);
            } else {
                T b = M(s[0], K(3));
                b = b + M(K(4), d);
                s[0] = b;
                d = (o & OPT_NESTEROV) ? d + M(K(3), b) : b;
                p = p + M(-K(1), d);
            }
            break;
        }
        case O_ADAM: {
            T q = M(p, K(6)), e, v, den;
            d = (o & OPT_WD) ? d + M(K(1), q) : d;
            e = o_lerp(s[0], d, K(2));
            v = M(s[1], K(3));
            v = v + M(M(K(4), d), d);
            s[0] = e;
            s[1] = v;
            if (o & OPT_AMSGRAD) {
                v = o_max(s[2], v);
                s[2] = v;
            }
            den = tl_sqrt(v) / K(8) + K(5);
            p = q + M(K(7), e) / den;
            break;
        }
        case O_ADAMAX: {
            T e, u, ad;
            d = (o & OPT_WD) ? d + M(K(1), p) : d;
            e = o_lerp(s[0], d, K(2));
            u = M(s[1], K(3));
            ad = tl_abs(d) + K(4);
            u = o_max(u, ad);
            s[0] = e;
            s[1] = u;
            p = p + M(K(5), e) / u;
            break;
        }
        case O_NADAM: {
            T q = M(p, K(6)), e, v, den;
            d = (o & OPT_WD) ? d + M(K(1), q) : d;
            e = o_lerp(s[0], d, K(2));
            v = M(s[1], K(3));
            v = v + M(M(K(4), d), d);
            s[0] = e;
            s[1] = v;
            den = tl_sqrt(v / K(7)) + K(5);
            q = q + M(K(8), d) / den;
            p = q + M(K(9), e) / den;
            break;
        }
        case O_RADAM: {
            T q = M(p, K(7)), e, v, u, ua;
            d = (o & OPT_WD) ? d + M(K(2), q) : d;
            e = o_lerp(s[0], d, K(3));
            v = M(s[1], K(4));
            v = v + M(M(K(5), d), d);
            s[0] = e;
            s[1] = v;
            u = M(e / K(8), K(1));
            ua = M(M(u, K(9) / (tl_sqrt(v) + K(6))), K(10));
            p = q - ((o & OPT_ADAPTIVE) ? ua : u);
            break;
        }
        case O_ADAGRAD: {
            T t;
            d = (o & OPT_WD) ? d + M(K(1), p) : d;
            t = s[0] + M(M((T)1, d), d);
            s[0] = t;
            p = p + M(K(3), d) / (tl_sqrt(t) + K(2));
            break;
        }
        case O_ADADELTA: {
            T sq, acc, sd, delta;
            d = (o & OPT_WD) ? d + M(K(2), p) : d;
            sq = M(s[0], K(3));
            sq = sq + M(M(K(4), d), d);
            sd = tl_sqrt(sq + K(5));
            delta = tl_sqrt(s[1] + K(5));
            delta = delta / sd;
            delta = M(delta, d);
            acc = M(s[1], K(3));
            acc = acc + M(M(K(4), delta), delta);
            s[0] = sq;
            s[1] = acc;
            p = p + M(-K(1), delta);
            break;
        }
        case O_RMSPROP: {
            T sq, avg;
            T& ga = (o & OPT_MOMENTUM) ? s[2] : s[1];
            d = (o & OPT_WD) ? d + M(K(2), p) : d;
            sq = M(s[0], K(3));
            sq = sq + M(M(K(4), d), d);
            s[0] = sq;
            if (o & OPT_CENTERED) {
                T gav = o_lerp(ga, d, K(4));
                ga = gav;
                avg = tl_sqrt(sq + M(M((T)(-1), gav), gav));
            } else {
                avg = tl_sqrt(sq);
            }
            avg = avg + K(5);
            if (o & OPT_MOMENTUM) {
                T b = M(s[1], K(6));
                b = b + M((T)1, d) / avg;
                s[1] = b;
                p = p + M(-K(1), b);
            } else {
                p = p + M(-K(1), d) / avg;
            }
            break;
        }
        case O_RPROP: {
            // factor: etaplus where grad * prev > 0, etaminus where < 0, else 1; where it is
            // etaminus the gradient counts as 0
            T sp = M(d, s[0]), f = (T)1, ss, sg;
            f = sp > (T)0 ? K(2) : f;
            f = sp < (T)0 ? K(1) : f;
            ss = M(s[1], f);
            ss = ss < K(3) ? K(3) : ss;
            ss = ss > K(4) ? K(4) : ss;
            s[1] = ss;
            d = sp < (T)0 ? (T)0 : d;
            sg = (d > (T)0 ? (T)1 : (T)0) - (d < (T)0 ? (T)1 : (T)0);
            p = p + M(M((T)(-1), sg), ss);
            s[0] = d;
            break;
        }
        default: {   // ASGD
            T q = p;
            d = (o & OPT_WD) ? d + M(K(1), q) : d;
            q = M(q, K(2));
            q = q + M(K(3), d);
            p = q;
            s[0] = (o & OPT_AVERAGE) ? s[0] + M(q - s[0], K(4)) : q;
            break;
        }
    }
#undef K
#undef M
}

// storage <-> compute: float/double as they are, half types (H = 1 float16, 2 bfloat16) as
// float32
template <int H, class S, class T>
__device__ __forceinline__ T o_ld(const S* x, long long i) {
    if (H == 1) return (T)tl_half_to_float((unsigned short)x[i]);
    if (H == 2) return (T)tl_bf16_to_float((unsigned short)x[i]);
    return (T)x[i];
}

template <int H, class S, class T>
__device__ __forceinline__ void o_st(S* x, long long i, T v) {
    if (H == 1) x[i] = (S)tl_float_to_half((float)v);
    else if (H == 2) x[i] = (S)tl_float_to_bf16((float)v);
    else x[i] = (S)v;
}

// the number of states an op reads and writes
__device__ __forceinline__ int o_nstate(const tl_optim_dev& a) {
    switch (a.op) {
        case O_SGD: return (a.opts & OPT_MOMENTUM) ? 1 : 0;
        case O_ADAM: return (a.opts & OPT_AMSGRAD) ? 3 : 2;
        case O_ADAGRAD: case O_ASGD: return 1;
        case O_RMSPROP:
            return 1 + ((a.opts & OPT_MOMENTUM) ? 1 : 0) + ((a.opts & OPT_CENTERED) ? 1 : 0);
        default: return 2;
    }
}

template <int H, class S, class T>
__device__ __forceinline__ void o_run(S* p, const S* g, S* s0, S* s1, S* s2,
                                      const tl_optim_dev& a) {
    const int ns = o_nstate(a);
    S* sp[3] = {s0, s1, s2};
    TL_FOR_EACH(i, a.n) {
        T s[3] = {(T)0, (T)0, (T)0};
        for (int k = 0; k < ns; ++k) s[k] = o_ld<H, S, T>(sp[k], i);
        T pv = o_ld<H, S, T>(p, i);
        o_update<T>(a, pv, o_ld<H, S, T>(g, i), s);
        o_st<H, S, T>(p, i, pv);
        for (int k = 0; k < ns; ++k) o_st<H, S, T>(sp[k], i, s[k]);
    }
}

// Pointers to states the op does not have are never read (the host passes the parameter's).
extern "C" __global__ void tl_optim_f32(float* p, const float* g, float* s0, float* s1,
                                        float* s2, tl_optim_dev a) {
    o_run<0, float, float>(p, g, s0, s1, s2, a);
}
extern "C" __global__ void tl_optim_f64(double* p, const double* g, double* s0, double* s1,
                                        double* s2, tl_optim_dev a) {
    o_run<0, double, double>(p, g, s0, s1, s2, a);
}
extern "C" __global__ void tl_optim_f16(unsigned short* p, const unsigned short* g,
                                        unsigned short* s0, unsigned short* s1,
                                        unsigned short* s2, tl_optim_dev a) {
    o_run<1, unsigned short, float>(p, g, s0, s1, s2, a);
}
extern "C" __global__ void tl_optim_bf16(unsigned short* p, const unsigned short* g,
                                         unsigned short* s0, unsigned short* s1,
                                         unsigned short* s2, tl_optim_dev a) {
    o_run<2, unsigned short, float>(p, g, s0, s1, s2, a);
}
