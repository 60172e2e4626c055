/* The optimizers' fused multi-tensor updates (tensorlib.optim): one call updates every
   parameter of one group and one dtype, in place, reading each gradient once.

   One descriptor (tl_optim_args) and one entry point (tl_optim_run). The front half
   (tensorlib/_core/optim_ops.pxi) fills it: for tensor i, param[i], grad[i] and the op's
   state tensors state[k][i] all hold numel[i] elements of `dtype` laid out in the same
   memory order (contiguous, or dense with identical strides), and the op's 0-d state
   tensors (step, NAdam's mu_product, ASGD's eta and mu) are scalar[k][i], one element of
   scalar_dtype[k] (float32 or float64: PyTorch keeps 'step' in float32 but casts the others
   to a float64 parameter's dtype when a state_dict is loaded). dtype codes as cpu_copy.h
   (TL_F16/TL_BF16/TL_F32/TL_F64). The update formulas are PyTorch's single-tensor ones
   (torch/optim/<name>.py), in the same order of operations, each elementwise step rounded to
   the element type as PyTorch rounds it; half types are loaded to float32, updated, and
   stored back once.

   Work: a serial pass first advances each tensor's 0-d state and computes its per-tensor
   coefficients (bias corrections, step sizes) in double, then the elements are split into
   fixed chunks (tl_parallel_for) that never depend on the thread count, and every element's
   arithmetic is the same whichever thread runs it. Call with the GIL released for large work.
   Returns 0, or -1 when out of memory for the chunk table (nothing has been written then). */
#ifndef TL_CPU_OPTIM_H
#define TL_CPU_OPTIM_H
#include <stdint.h>

enum {
    TL_OPT_SGD = 0,    /* state[0] momentum_buffer (flag MOMENTUM; fresh[i]: buf = g first) */
    TL_OPT_ADAM,       /* scalar[0] step; state exp_avg, exp_avg_sq[, max_exp_avg_sq] */
    TL_OPT_ADAMAX,     /* scalar[0] step; state exp_avg, exp_inf */
    TL_OPT_NADAM,      /* scalar step, mu_product; state exp_avg, exp_avg_sq */
    TL_OPT_RADAM,      /* scalar step; state exp_avg, exp_avg_sq */
    TL_OPT_ADAGRAD,    /* scalar step; state sum */
    TL_OPT_ADADELTA,   /* scalar step; state square_avg, acc_delta */
    TL_OPT_RMSPROP,    /* scalar step; state square_avg[, momentum_buffer][, grad_avg] */
    TL_OPT_RPROP,      /* scalar step; state prev, step_size */
    TL_OPT_ASGD,       /* scalar step, eta, mu; state ax */
    TL_OPT_NUM_OPS
};

/* flags */
enum {
    TL_OPT_MAXIMIZE = 1,
    TL_OPT_AMSGRAD = 2,        /* Adam */
    TL_OPT_DECOUPLED = 4,      /* Adam(W), NAdam, RAdam: weight decay on the parameter */
    TL_OPT_NESTEROV = 8,       /* SGD */
    TL_OPT_MOMENTUM = 16,      /* SGD, RMSprop: a momentum buffer is state[0] / state[1] */
    TL_OPT_CENTERED = 32       /* RMSprop: grad_avg is the last state */
};

/* hyperparameters, hp[] by op (lr is always hp[0], weight_decay hp[1]):
   SGD       lr, wd, momentum, dampening
   Adam      lr, wd, beta1, beta2, eps
   Adamax    lr, wd, beta1, beta2, eps
   NAdam     lr, wd, beta1, beta2, eps, momentum_decay
   RAdam     lr, wd, beta1, beta2, eps
   Adagrad   lr, wd, lr_decay, eps
   Adadelta  lr, wd, rho, eps
   RMSprop   lr, wd, alpha, eps, momentum
   Rprop     lr, wd (unused), etaminus, etaplus, step_size_min, step_size_max
   ASGD      lr, wd, lambd, alpha, t0, 1 when the default dtype is float32 (new eta and mu
             are rounded to it before they are stored, as PyTorch's torch.as_tensor does) */
#define TL_OPT_MAX_STATE 3
#define TL_OPT_MAX_SCALAR 3
#define TL_OPT_MAX_HP 8

typedef struct tl_optim_args {
    int op;
    int dtype;
    int scalar_dtype[TL_OPT_MAX_SCALAR];
    int flags;
    int64_t n;                               /* tensors */
    char **param;
    char **grad;
    char **state[TL_OPT_MAX_STATE];
    char **scalar[TL_OPT_MAX_SCALAR];
    const int64_t *numel;
    const uint8_t *fresh;                    /* SGD: momentum buffer starts as the gradient */
    double hp[TL_OPT_MAX_HP];
} tl_optim_args;

int tl_optim_run(const tl_optim_args *a);

#endif
