"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode.

Each is a context manager and a decorator (generator functions too). The mode is a C
thread-local read by every op wrapper, so it is per thread and costs nothing to check.

>>> import tensorlib
>>> x = tensorlib.ones(2, requires_grad=True)
>>> with tensorlib.no_grad():
...     y = x * 2
>>> y.requires_grad
False
"""
import functools
import inspect

from tensorlib._core import tensor as _C

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]


def is_grad_enabled():
    """Whether ops record the graph on this thread.

    >>> tensorlib.is_grad_enabled()
    True
    """
    return _C._is_grad_enabled()


def is_inference_mode_enabled():
    """Whether inference_mode is active on this thread."""
    return _C._is_inference_mode()


class _GradModeContext:
    """Base of the grad-mode context managers; also usable as decorators."""

    def __call__(self, func):
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def generator(*args, **kwargs):
                # the mode applies while the generator body runs, not between its yields
                gen = func(*args, **kwargs)
                try:
                    with self.__class__(*self._args):
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.__class__(*self._args):
                                gen.close()
                            raise
                        except BaseException as exc:
                            with self.__class__(*self._args):
                                response = gen.throw(exc)
                        else:
                            with self.__class__(*self._args):
                                response = gen.send(request)
                except StopIteration as stop:
                    return stop.value
            return generator

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args):
                return func(*args, **kwargs)
        return wrapper

    _args = ()

    def clone(self):
        return self.__class__(*self._args)


class no_grad(_GradModeContext):
    """Disable graph recording (context manager or decorator).

    >>> @tensorlib.no_grad()
    ... def f(x):
    ...     return x * 2
    >>> f(tensorlib.ones(1, requires_grad=True)).requires_grad
    False
    """

    def __init__(self, orig_func=None):
        self._func = orig_func

    def __enter__(self):
        self._prev = _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)

    def __call__(self, *args, **kwargs):
        if self._func is not None:           # used as @no_grad without parentheses
            return _GradModeContext.__call__(no_grad(), self._func)(*args, **kwargs)
        return _GradModeContext.__call__(self, *args, **kwargs)


class enable_grad(_GradModeContext):
    """Enable graph recording inside a no_grad region.

    >>> with tensorlib.no_grad():
    ...     with tensorlib.enable_grad():
    ...         tensorlib.is_grad_enabled()
    True
    """

    def __enter__(self):
        self._prev = _C._set_grad_enabled(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)


class set_grad_enabled(_GradModeContext):
    """Set grad mode: immediately as a function call, and restored on exit when used as a
    context manager.

    >>> with tensorlib.set_grad_enabled(False):
    ...     tensorlib.is_grad_enabled()
    False
    """

    def __init__(self, mode):
        self._args = (mode,)
        self._prev = _C._set_grad_enabled(bool(mode))

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)

    def __call__(self, func):
        _C._set_grad_enabled(self._prev)     # a decorator does not change the mode now
        return _GradModeContext.__call__(self, func)


class inference_mode(_GradModeContext):
    """Like no_grad (nothing is recorded), for inference code.

    >>> with tensorlib.inference_mode():
    ...     tensorlib.is_grad_enabled()
    False
    """

    def __init__(self, mode=True):
        self._args = (mode,)
        self._mode = bool(mode)

    def __enter__(self):
        self._prev_inf = _C._set_inference_mode(self._mode)
        self._prev = _C._set_grad_enabled(not self._mode and _C._is_grad_enabled())
        if not self._mode:
            _C._set_grad_enabled(self._prev)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        _C._set_inference_mode(self._prev_inf)
