"""The guard every simulator API method of the mixins runs under.

Takes the big lock, refuses a closed backend, answers 107002 (``no_ctx``) to a thread
without a context, turns :class:`ApiReturn` raised deep inside a method into its return
code, and lets the device make progress afterwards.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


class ApiReturn(Exception):
    """Raised inside a core API method to return ``rc`` from it."""

    def __init__(self, rc: int) -> None:
        super().__init__(rc)
        self.rc = int(rc)


def guarded(no_ctx: Any) -> Callable:
    """Decorator: lock, closed check, context check (result ``no_ctx``), ApiReturn, progress."""

    def deco(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            with self._cond:
                if self._closed:
                    from .backend import BackendClosed
                    raise BackendClosed(f"{fn.__name__} called on a closed SimBackend")
                if not self._has_context():
                    return no_ctx
                try:
                    return fn(self, *args, **kwargs)
                except ApiReturn as exc:
                    return exc.rc
                finally:
                    self._kick()

        return wrapper

    return deco
