"""``DataParallel``: PyTorch's ``torch.nn.DataParallel``. Over CUDA devices it splits the
batch, runs one replica of the module per device (each in its own Python thread, its kernels
on that device's current stream), and gathers the outputs on ``output_device``. The replicas'
parameters are differentiable copies of the module's (``ToCopyBackward0``), so backward
sums every replica's gradient into the module's own parameters on ``device_ids[0]``.
Without CUDA devices it wraps the module transparently."""
import threading

from tensorlib.nn.modules.module import Module

__all__ = ["DataParallel", "scatter", "replicate", "parallel_apply", "gather"]


def _cuda():
    import tensorlib.cuda as cuda
    return cuda if cuda.is_available() else None


def _index(d):
    import tensorlib
    if isinstance(d, int):
        return d
    d = tensorlib.device(d) if not isinstance(d, tensorlib.device) else d
    if d.type != "cuda":
        raise ValueError(f"DataParallel: expected a cuda device, got {d}")
    return 0 if d.index is None else d.index


def _is_tensor(x):
    import tensorlib
    return isinstance(x, tensorlib.Tensor)


def scatter(obj, device_ids, dim=0):
    """Split the tensors in ``obj`` (nested tuples, lists and dicts) into ``len(device_ids)``
    chunks along ``dim``, chunk i copied to ``cuda:device_ids[i]`` (differentiably); other
    objects are repeated. Returns a list with one structure per used device."""
    import tensorlib

    def split(x):
        if _is_tensor(x):
            parts = tensorlib.chunk(x, len(device_ids), dim)
            return [p.to(f"cuda:{d}") for p, d in zip(parts, device_ids)]
        if isinstance(x, (tuple, list)) and x:
            cols = [split(v) for v in x]
            n = min(len(c) for c in cols)
            return [type(x)(c[i] for c in cols) if isinstance(x, tuple) else [c[i] for c in cols]
                    for i in range(n)]
        if isinstance(x, dict) and x:
            keys = list(x)
            cols = [split(x[k]) for k in keys]
            n = min(len(c) for c in cols)
            return [dict(zip(keys, (c[i] for c in cols))) for i in range(n)]
        return [x] * len(device_ids)

    return split(obj)


def _replica(module, device, memo):
    if module in memo:
        return memo[module]
    r = module.__class__.__new__(module.__class__)
    memo[module] = r
    d = dict(module.__dict__)
    d["_parameters"] = {k: (None if p is None else p.to(device))
                        for k, p in module._parameters.items()}
    d["_buffers"] = {k: (None if b is None else b.to(device)) for k, b in module._buffers.items()}
    d["_modules"] = {k: (None if m is None else _replica(m, device, memo))
                     for k, m in module._modules.items()}
    object.__setattr__(r, "__dict__", d)
    return r


def replicate(module, device_ids):
    """One replica of ``module`` per device: the module itself on the first, elsewhere a copy
    of its structure whose parameters and buffers are differentiable copies."""
    out = []
    for i, d in enumerate(device_ids):
        out.append(module if i == 0 else _replica(module, f"cuda:{d}", {}))
    return out


def parallel_apply(replicas, inputs, kwargs, device_ids):
    """Run ``replicas[i](*inputs[i], **kwargs[i])`` concurrently, one thread per device, with
    the caller's grad mode; the first exception is re-raised."""
    import tensorlib
    cuda = _cuda()
    grad = tensorlib.is_grad_enabled()
    results = [None] * len(replicas)
    errors = [None] * len(replicas)

    def run(i):
        try:
            with tensorlib.set_grad_enabled(grad), cuda.device(device_ids[i]):
                results[i] = replicas[i](*inputs[i], **kwargs[i])
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            errors[i] = e

    threads = [threading.Thread(target=run, args=(i,)) for i in range(1, len(replicas))]
    for t in threads:
        t.start()
    run(0)
    for t in threads:
        t.join()
    for e in errors:
        if e is not None:
            raise e
    return results


def gather(outputs, target_device, dim=0):
    """Concatenate the replicas' outputs (tensors, or tuples/lists/dicts of them) along
    ``dim`` on ``cuda:target_device`` (differentiably)."""
    import tensorlib
    first = outputs[0]
    if _is_tensor(first):
        dev = f"cuda:{target_device}"
        if first.dim() == 0:
            return tensorlib.stack([o.to(dev) for o in outputs])
        return tensorlib.cat([o.to(dev) for o in outputs], dim)
    if isinstance(first, dict):
        return type(first)((k, gather([o[k] for o in outputs], target_device, dim))
                           for k in first)
    if isinstance(first, (tuple, list)):
        return type(first)(gather(list(col), target_device, dim) for col in zip(*outputs))
    return first


class DataParallel(Module):
    """Run ``module`` split along ``dim`` over the CUDA devices ``device_ids`` (default: all)
    and gather the outputs on ``output_device`` (default ``device_ids[0]``). The module's
    parameters and buffers must be on ``device_ids[0]``. With no CUDA device it runs the
    module itself, so results equal the module's.

    >>> m = tensorlib.nn.Linear(2, 1); dp = tensorlib.nn.DataParallel(m)
    >>> dp.module is m, list(dp.state_dict())
    (True, ['module.weight', 'module.bias'])
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.dim = dim
        cuda = _cuda()
        if cuda is None or cuda.device_count() == 0:
            self.device_ids = []
            self.output_device = None
            return
        if device_ids is None:
            device_ids = list(range(cuda.device_count()))
        self.device_ids = [_index(d) for d in device_ids]
        self.output_device = _index(self.device_ids[0] if output_device is None
                                    else output_device)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        import tensorlib
        src = tensorlib.device("cuda", self.device_ids[0])
        for t in list(self.module.parameters()) + list(self.module.buffers()):
            if t.device != src:
                raise RuntimeError(f"module must have its parameters and buffers on device "
                                   f"{src} (device_ids[0]) but found one of them on device: "
                                   f"{t.device}")
        ins = scatter(inputs, self.device_ids, self.dim) if inputs else []
        kws = scatter(kwargs, self.device_ids, self.dim) if kwargs else []
        n = max(len(ins), len(kws))
        ins = ins or [()] * n
        kws = kws or [{}] * n
        used = self.device_ids[:n]
        if n == 1:
            return gather([self.module(*ins[0], **kws[0])], self.output_device, self.dim)
        replicas = replicate(self.module, used)
        outs = parallel_apply(replicas, ins, kws, used)
        return gather(outs, self.output_device, self.dim)
