"""L-BFGS, PyTorch's ``torch.optim.LBFGS``: a quasi-Newton method that re-evaluates the
model through a closure, optionally with a strong-Wolfe line search.

>>> x = tensorlib.tensor([3.0, -2.0], dtype=tensorlib.float64, requires_grad=True)
>>> opt = LBFGS([x], line_search_fn="strong_wolfe")
>>> def closure():
...     opt.zero_grad()
...     loss = ((x - 1.0) ** 2).sum()
...     loss.backward()
...     return loss
>>> _ = opt.step(closure); [round(v, 6) for v in x.tolist()]
[1.0, 1.0]
"""
import tensorlib
from tensorlib.optim.optimizer import Optimizer

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2, clamped
    to ``bounds`` (default: the interval between the points); the interval's midpoint when
    the cubic has no minimum."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:
        return (lo + hi) / 2.0
    d2 = d2_square.sqrt()
    if x1 <= x2:
        point = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        point = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(point, lo), hi)


def _strong_wolfe(evaluate, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """Line search along ``d`` from the parameters ``x`` (loss ``f``, gradient ``g``,
    directional derivative ``gtd``) for a step ``t`` meeting the strong Wolfe conditions
    (sufficient decrease ``c1``, curvature ``c2``): first bracket an interval holding such a
    step (growing ``t`` by cubic extrapolation), then shrink it by safeguarded cubic
    interpolation (Nocedal & Wright, algorithms 3.5 and 3.6). ``evaluate(x, t, d)`` returns
    the loss and flat gradient at ``x + t * d``. Returns the loss, gradient, step and the
    number of evaluations."""
    d_norm = d.abs().max()
    g = g.clone(memory_format=tensorlib.contiguous_format)
    f_new, g_new = evaluate(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    it = 0
    # Bracketing phase.
    while it < max_ls:
        if f_new > f + c1 * t * gtd or (it > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        # Extrapolate: somewhere in [t + 0.01 (t - t_prev), 10 t].
        t_next = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                    bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new.clone(), gtd_new
        t = t_next
        f_new, g_new = evaluate(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        it += 1
    if it == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # Zoom phase: bracket[low] is the end with the lower loss.
    stalled = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and it < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # Keep t away from the bracket's ends: a point within 10% of an end makes no
        # progress twice in a row, so the second time it is moved 10% inside.
        left, right = min(bracket), max(bracket)
        eps = 0.1 * (right - left)
        if min(right - t, t - left) < eps:
            if stalled or t >= right or t <= left:
                t = right - eps if abs(t - right) < abs(t - left) else left + eps
                stalled = False
            else:
                stalled = True
        else:
            stalled = False
        f_new, g_new = evaluate(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        it += 1
        if f_new > f + c1 * t * gtd or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new.clone(), gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new.clone(), gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


class LBFGS(Optimizer):
    """Limited-memory BFGS over all parameters as one flat vector (one parameter group
    only). ``step(closure)`` runs up to ``max_iter`` iterations (``max_eval`` closure
    evaluations, default ``max_iter * 5 // 4``), keeping the last ``history_size`` curvature
    pairs; it stops early when the largest gradient entry is at most ``tolerance_grad`` or
    the step or loss change falls below ``tolerance_change``. ``line_search_fn`` is
    ``None`` (fixed step ``lr``) or ``'strong_wolfe'``. The closure must clear the
    gradients, compute the loss, call ``backward`` and return the loss. The state
    (``func_evals``, ``n_iter``, ``d``, ``t``, ``old_dirs``, ``old_stps``, ``ro``,
    ``H_diag``, ``prev_flat_grad``, ``prev_loss``, ``al``) is kept, as in PyTorch, under the
    first parameter, so a later ``step`` continues the same quasi-Newton model.

    >>> lin = tensorlib.nn.Linear(1, 1)
    >>> xs = tensorlib.tensor([[0.0], [1.0], [2.0]]); ys = 2 * xs + 1
    >>> opt = LBFGS(lin.parameters(), lr=1, max_iter=50)
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((lin(xs) - ys) ** 2).mean()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> round(lin.weight.item(), 4), round(lin.bias.item(), 4)
    (2.0, 1.0)
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        if isinstance(lr, tensorlib.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self):
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self):
        """All gradients as one new flat vector (zeros for a parameter without one)."""
        parts = [p.new_zeros(p.numel()) if p.grad is None else p.grad.reshape(-1)
                 for p in self._params]
        return tensorlib.cat(parts, 0)

    def _add_grad(self, step_size, update):
        """``params += step_size * update``, ``update`` being flat."""
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(update[offset:offset + n].view_as(p), alpha=step_size)
            offset += n
        if offset != self._numel():
            raise AssertionError(f"Expected offset {offset} to equal {self._numel()}")

    def _clone_param(self):
        return [p.clone(memory_format=tensorlib.contiguous_format) for p in self._params]

    def _set_param(self, params_data):
        for p, data in zip(self._params, params_data, strict=True):
            p.copy_(data)

    def _directional_evaluate(self, closure, x, t, d):
        """Loss and flat gradient at ``x + t * d``; the parameters are put back to ``x``."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    @staticmethod
    def _two_loop(flat_grad, old_dirs, old_stps, ro, H_diag, al):
        """The L-BFGS direction ``-H g`` by the two-loop recursion over the stored pairs
        (y = gradient change, s = step, ro = 1 / y.s), ``H_diag`` scaling the initial
        inverse Hessian."""
        q = flat_grad.neg()
        for i in range(len(old_dirs) - 1, -1, -1):
            al[i] = old_stps[i].dot(q) * ro[i]
            q.add_(old_dirs[i], alpha=-al[i])
        r = tensorlib.mul(q, H_diag)
        for i in range(len(old_dirs)):
            be_i = old_dirs[i].dot(r) * ro[i]
            r.add_(old_stps[i], alpha=al[i] - be_i)
        return r

    def step(self, closure):
        """Run up to ``max_iter`` L-BFGS iterations; returns the loss the first closure
        call computed (before any update)."""
        if len(self.param_groups) != 1:
            raise AssertionError(f"Expected exactly one param_group, but got "
                                 f"{len(self.param_groups)}")
        group = self.param_groups[0]
        lr = group["lr"].item() if isinstance(group["lr"], tensorlib.Tensor) else group["lr"]
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        def evaluate():
            with tensorlib.enable_grad():
                return closure()

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)
                # Keep the pair only where the curvature condition holds, so the inverse
                # Hessian estimate stays positive definite.
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                if "al" not in state:
                    state["al"] = [None] * history_size
                d = self._two_loop(flat_grad, old_dirs, old_stps, ro, H_diag, state["al"])

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone(memory_format=tensorlib.contiguous_format)
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss

            # The first step is scaled down by the gradient's size; later ones use lr.
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break  # not a descent direction

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    lambda x, step, direction: self._directional_evaluate(evaluate, x, step,
                                                                          direction),
                    x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    # Re-evaluate for the next iteration (not needed after the last one).
                    loss = float(evaluate())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        for value in state.values():
            for tensor in value if isinstance(value, list) else [value]:
                if isinstance(tensor, tensorlib.Tensor) and tensor.device.type != "meta":
                    tensor.untyped_storage().role = "optimizer-state"
        return orig_loss
