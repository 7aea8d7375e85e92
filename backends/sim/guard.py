"""The one guard every simulator API method runs under, and the simulator's error style.

:func:`guarded` takes the big lock, refuses a closed backend (:class:`BackendClosed`), answers
a thread without a current context (abi.md §6.1, ERR-03: 107002; the ACL-layer checks some
functions make first are part of that answer), turns :class:`ApiReturn` into its return code,
and lets the device make progress afterwards.

Error style. An API method returns its return code (``rc`` or ``(rc, out...)``) for every check
it makes itself: that is the code a reader looks for in the method. A refusal decided *deep
inside* a shared helper that many API methods call (the task-group rules of appending a captured
task, TG-04/05; work issued on a stream in task-update mode, TG-15: ``_append`` / ``_enqueue``)
raises :class:`ApiReturn` instead. Threading an rc back through every call site of those helpers
would add a check after each of some twenty calls, and an API method that forgot one would go
on after a refusal; an exception cannot be forgotten, and the guard turns it into the return
code of the API call that is running. It is never used for a check an API method makes itself.

:class:`BackendClosed` is defined here, where it is raised: it is a harness fault of the
simulator (a call after ``close``), not a return code of the contract; only the simulator's own
tests catch it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from mdlri_conformance.backends.contract import UNWRITTEN, Err

#: the no-context answer of a method returning an rc
NO_CTX = int(Err.RT_CONTEXT_NULL)
#: the no-context answer of a method returning ``(rc, out)``: ``out`` is not written
NO_CTX_OUT = (NO_CTX, UNWRITTEN)


class BackendClosed(RuntimeError):
    """A call on a simulator after ``close()`` (a harness fault)."""


class ApiReturn(Exception):
    """Raised deep inside an API call to end it with return code ``rc`` (see the module
    docstring for when)."""

    def __init__(self, rc: int) -> None:
        super().__init__(rc)
        self.rc = int(rc)


def guarded(no_ctx: Any = NO_CTX, *, needs_context: bool = True) -> Callable:
    """Decorator of an API method: lock, closed check, context check, ApiReturn, progress.

    ``no_ctx`` is what a thread without a context gets: a value, or a callable taking the
    call's bound arguments (a dict, defaults applied) for methods whose ACL-layer checks come
    before the runtime's context check or whose outputs depend on the arguments.
    ``needs_context=False`` skips the context check (aclrtSetDevice gives the context)."""

    def deco(fn: Callable) -> Callable:
        signature = inspect.signature(fn)

        def no_context(self: Any, args: tuple, kwargs: dict) -> Any:
            if not callable(no_ctx):
                return no_ctx
            bound = signature.bind(self, *args, **kwargs)
            bound.apply_defaults()
            return no_ctx(bound.arguments)

        # the big lock itself, not its Condition: the same RLock, one Python frame fewer
        # on each side of every API call
        @functools.wraps(fn)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            with self._lock:
                if self._closed:
                    raise BackendClosed(f"{fn.__name__} called on a closed SimBackend")
                if needs_context and not self._has_context():
                    return no_context(self, args, kwargs)
                try:
                    return fn(self, *args, **kwargs)
                except ApiReturn as exc:
                    return exc.rc
                finally:
                    self._kick()

        return wrapper

    return deco


__all__ = ["ApiReturn", "BackendClosed", "NO_CTX", "NO_CTX_OUT", "guarded"]
