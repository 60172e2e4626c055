"""The optimizers' fused updates on a CUDA device (``CUDABackend.optim``).

The front half (tensorlib/_core/optim_ops.pxi) fills cpu_optim.h's ``tl_optim_args`` and the
CUDA back end hands its address here. :class:`OptimArgs` reads it; :func:`run` advances
each parameter's 0-d states on the host (they are CPU tensors, as PyTorch keeps 'step'),
computes the per-tensor coefficients in double exactly as cpu_optim.c's ``prepare`` does,
and queues one ``tl_optim_<dtype>`` launch of cuda/optim_ops.cu per parameter on the current
stream of its device. The elementwise arithmetic is the CPU's, operation for operation, so a
device step gives the CPU's values.

>>> import tensorlib                                               # doctest: +SKIP
>>> p = tensorlib.ones(3, device="cuda", requires_grad=True)       # doctest: +SKIP
>>> opt = tensorlib.optim.Adam([p], lr=0.1)                        # doctest: +SKIP
>>> p.sum().backward(); opt.step(); p.cpu().tolist()               # doctest: +SKIP
[0.8999999761581421, 0.8999999761581421, 0.8999999761581421]
"""
import ctypes
import math

from . import _ops, _runtime

# cpu_optim.h
SGD, ADAM, ADAMAX, NADAM, RADAM, ADAGRAD, ADADELTA, RMSPROP, RPROP, ASGD = range(10)
MAXIMIZE, AMSGRAD, DECOUPLED, NESTEROV, MOMENTUM, CENTERED = 1, 2, 4, 8, 16, 32
F16, BF16, F32, F64 = 6, 7, 8, 9          # tensorlib's dtype codes

# cuda/optim_ops.cu's opts
O_WD, O_NESTEROV, O_MOMENTUM, O_FRESH = 1, 2, 4, 8
O_AMSGRAD, O_CENTERED, O_ADAPTIVE, O_AVERAGE = 16, 32, 64, 128

_KERNEL = {F32: "tl_optim_f32", F64: "tl_optim_f64", F16: "tl_optim_f16",
           BF16: "tl_optim_bf16"}

_P = ctypes.POINTER(ctypes.c_void_p)


class OptimArgs(ctypes.Structure):
    """cpu_optim.h's ``tl_optim_args``, field for field."""
    _fields_ = [("op", ctypes.c_int), ("dtype", ctypes.c_int),
                ("scalar_dtype", ctypes.c_int * 3), ("flags", ctypes.c_int),
                ("n", ctypes.c_int64), ("param", _P), ("grad", _P), ("state", _P * 3),
                ("scalar", _P * 3), ("numel", ctypes.POINTER(ctypes.c_int64)),
                ("fresh", ctypes.POINTER(ctypes.c_uint8)), ("hp", ctypes.c_double * 8)]


class OptimDev(ctypes.Structure):
    """``tl_optim_dev`` of cuda/optim_ops.cu (one parameter's launch)."""
    _fields_ = [("op", ctypes.c_int), ("opts", ctypes.c_int), ("n", ctypes.c_longlong),
                ("k", ctypes.c_double * 12)]


def _pow(x, y):
    """C's pow (math.pow raises where C returns inf or NaN)."""
    try:
        return math.pow(x, y)
    except OverflowError:
        return math.inf
    except ValueError:
        return math.nan


def _sqrt(x):
    """C's sqrt (NaN below 0)."""
    return math.sqrt(x) if x >= 0 else math.nan


def _div(x, y):
    """C's division of doubles (a zero divisor gives inf or NaN, not an exception)."""
    try:
        return x / y
    except ZeroDivisionError:
        if x != x or x == 0:
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1.0, y)


class _Scalars:
    """The 0-d states of one launch: host memory read and written in their own dtype."""

    def __init__(self, a):
        self.a = a

    def _cell(self, k, i):
        addr = self.a.scalar[k][i]
        ct = ctypes.c_double if self.a.scalar_dtype[k] == F64 else ctypes.c_float
        return ct.from_address(addr)

    def get(self, k, i):
        return float(self._cell(k, i).value)

    def set(self, k, i, v):
        c = self._cell(k, i)
        c.value = v
        return float(c.value)          # rounded to the state's dtype, as stored

    def cast(self, k, v):
        if self.a.scalar_dtype[k] == F64:
            return v
        return float(ctypes.c_float(v).value)


def _coefficients(a, sc, i):
    """Advance tensor i's 0-d states and return (k[1:], opts) of its launch: cpu_optim.c's
    prepare() and the hoisted constants of its update, in the same double arithmetic."""
    h = list(a.hp)
    flags = a.flags
    op = a.op
    lr, wd = h[0], h[1]
    has_wd = O_WD if wd != 0 else 0
    dec = wd != 0 and bool(flags & DECOUPLED)
    l2 = O_WD if (wd != 0 and not flags & DECOUPLED) else 0
    decay = 1.0 - lr * wd if dec else 1.0
    if op == SGD:
        opts = has_wd
        if flags & MOMENTUM:
            opts |= O_MOMENTUM
            if a.fresh[i]:
                opts |= O_FRESH
        if flags & NESTEROV:
            opts |= O_NESTEROV
        return [lr, wd, h[2], 1.0 - h[3]], opts
    step = sc.set(0, i, sc.get(0, i) + 1.0)
    if op == ADAM:
        c0 = _div(lr, 1.0 - _pow(h[2], step))
        c1 = _sqrt(1.0 - _pow(h[3], step))
        opts = l2 | (O_AMSGRAD if flags & AMSGRAD else 0)
        return [wd, 1.0 - h[2], h[3], 1.0 - h[3], h[4], decay, -c0, c1], opts
    if op == ADAMAX:
        c0 = _div(lr, 1.0 - _pow(h[2], step))
        return [wd, 1.0 - h[2], h[3], h[4], -c0], has_wd
    if op == NADAM:
        b1, b2, md = h[2], h[3], h[5]
        c0 = 1.0 - _pow(b2, step)
        mu = b1 * (1.0 - 0.5 * _pow(0.96, step * md))
        mu_next = b1 * (1.0 - 0.5 * _pow(0.96, (step + 1.0) * md))
        prod = sc.set(1, i, sc.get(1, i) * sc.cast(1, mu))
        c1 = _div(-lr * (1.0 - mu), 1.0 - prod)
        c2 = _div(-lr * mu_next, 1.0 - prod * mu_next)
        return [wd, 1.0 - b1, b2, 1.0 - b2, h[4], decay, c0, c1, c2], l2
    if op == RADAM:
        b1, b2 = h[2], h[3]
        bc2 = 1.0 - _pow(b2, step)
        c0 = 1.0 - _pow(b1, step)
        c1 = _pow(bc2, 0.5)
        rho_inf = _div(2.0, 1.0 - b2) - 1.0
        rho_t = rho_inf - _div(2.0 * step * _pow(b2, step), bc2)
        adaptive = rho_t > 5.0
        c2 = _pow(_div((rho_t - 4.0) * (rho_t - 2.0) * rho_inf,
                       (rho_inf - 4.0) * (rho_inf - 2.0) * rho_t), 0.5) if adaptive else 0.0
        return ([lr, wd, 1.0 - b1, b2, 1.0 - b2, h[4], decay, c0, c1, c2],
                l2 | (O_ADAPTIVE if adaptive else 0))
    if op == ADAGRAD:
        c0 = _div(lr, 1.0 + (step - 1.0) * h[2])
        return [wd, h[3], -c0], has_wd
    if op == ADADELTA:
        return [lr, wd, h[2], 1.0 - h[2], h[3]], has_wd
    if op == RMSPROP:
        opts = has_wd
        if flags & MOMENTUM:
            opts |= O_MOMENTUM
        if flags & CENTERED:
            opts |= O_CENTERED
        return [lr, wd, h[2], 1.0 - h[2], h[3], h[4]], opts
    if op == RPROP:
        return [h[2], h[3], h[4], h[5]], 0
    # ASGD: this step uses the stored eta and mu, then stores the next ones
    lambd, alpha, t0 = h[2], h[3], h[4]
    eta_now, mu_now = sc.get(1, i), sc.get(2, i)
    eta = _div(lr, _pow(1.0 + lambd * lr * step, alpha))
    mu = _div(1.0, step - t0 if step - t0 > 1.0 else 1.0)
    if h[5] != 0:          # PyTorch's torch.as_tensor: the default dtype (float32)
        eta = float(ctypes.c_float(eta).value)
        mu = float(ctypes.c_float(mu).value)
    sc.set(1, i, eta)
    sc.set(2, i, mu)
    return ([wd, 1.0 - lambd * eta_now, -eta_now, mu_now],
            has_wd | (O_AVERAGE if mu_now != 1.0 else 0))


def run(address):
    """Run the fused update described by the ``tl_optim_args`` at ``address`` (host memory;
    parameters, gradients and states on one CUDA device, 0-d states on the CPU)."""
    a = OptimArgs.from_address(address)
    kernel = _KERNEL.get(a.dtype)
    if kernel is None:
        raise RuntimeError(f"optimizer step: dtype code {a.dtype} on the CUDA back end")
    sc = _Scalars(a)
    sign = -1.0 if a.flags & MAXIMIZE else 1.0
    rt = _runtime.get_runtime()
    for i in range(a.n):
        k, opts = _coefficients(a, sc, i)
        n = a.numel[i]
        if n == 0:
            continue
        p = a.param[i]
        index = _ops.device_of(p)
        d = OptimDev()
        d.op, d.opts, d.n = a.op, opts, n
        d.k[0] = sign
        for j, v in enumerate(k):
            d.k[j + 1] = v
        states = [a.state[s][i] if a.state[s] else p for s in range(3)]
        args = [_runtime.ptr(p), _runtime.ptr(a.grad[i])] + [_runtime.ptr(s) for s in states]
        rt.launch("optim_ops", kernel, _ops._grid(n), _ops.BLOCK, args + [d],
                  _ops._stream(index))


__all__ = ["run", "OptimArgs", "OptimDev"]
