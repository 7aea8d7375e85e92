"""The one guard every simulator API method runs under, and the simulator's error style.

:func:`guarded` takes the big lock, refuses a closed backend (:class:`BackendClosed`), answers
a thread without a current context (abi.md §6.1, ERR-03: 107002; the ACL-layer checks some
functions make first are part of that answer), turns :class:`ApiReturn` into its return code,
and lets the device make progress afterwards (the backend's ``_kick``).

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
import threading
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


class ThreadContext(threading.local):
    """The simulator's per-thread state: ``context`` (whether the thread has a current
    context, abi.md §6.1; False in a thread that never set a device) and ``device``."""

    context = False


def guarded(no_ctx: Any = NO_CTX, *, needs_context: bool = True) -> Callable:
    """Decorator of an API method: lock, closed check, context check, ApiReturn, progress.

    ``no_ctx`` is what a thread without a context gets: a value, or a callable taking the
    call's bound arguments (a dict, defaults applied) for methods whose ACL-layer checks come
    before the runtime's context check or whose outputs depend on the arguments.
    ``needs_context=False`` skips the context check (aclrtSetDevice gives the context).

    The wrapper takes the method's own parameters (made once, when the class is defined, by
    :func:`_exact_wrapper`): a ``*args, **kwargs`` wrapper packs a tuple and a dict on every
    call, and every simulator call pays it (the replay floor)."""

    def deco(fn: Callable) -> Callable:
        return _exact_wrapper(fn, no_ctx, needs_context)

    return deco


#: the guard's body; ``{params}`` / ``{call}`` are the method's parameters and the call
#: passing them on; ``{context_check}`` is the no-context answer (empty with
#: ``needs_context=False``). ``self._acquire`` / ``self._release`` are the big RLock's own
#: bound methods: the same lock a ``with self._lock`` takes, without the ``with``
#: statement's look-ups of ``__enter__`` / ``__exit__`` on every call.
_GUARD = """
def _guarded({params}):
    self._acquire()
    try:
        if self._closed:
            raise BackendClosed(_closed_message){context_check}
        try:
            return _fn({call})
        except ApiReturn as exc:
            return exc.rc
        finally:
            self._kick()
    finally:
        self._release()
"""
_CONTEXT_CHECK = """
        if not self._tls.context:
            return {no_context}"""
#: the names the generated function reads from its namespace (no parameter may shadow them)
_RESERVED = frozenset({"_guarded", "_fn", "_no_ctx", "_closed_message", "ApiReturn",
                       "BackendClosed"})


def _exact_wrapper(fn: Callable, no_ctx: Any, needs_context: bool) -> Callable:
    """The guard around ``fn`` as a function with ``fn``'s own signature (defaults are the
    same objects), so a call passes its arguments on without packing them. A callable
    ``no_ctx`` gets the bound arguments, defaults applied, as ``inspect.BoundArguments``
    gives them (name -> value, in signature order)."""
    P = inspect.Parameter
    plist = list(inspect.signature(fn).parameters.values())
    if not plist or plist[0].name != "self":
        raise TypeError(f"guarded {fn.__qualname__}: not a method (no first parameter self)")
    params: list[str] = []
    call: list[str] = []
    defaults: dict[str, Any] = {}
    for i, p in enumerate(plist):
        if p.name in _RESERVED or p.name.startswith("_d_"):
            raise TypeError(f"guarded {fn.__qualname__}: parameter {p.name} is reserved")
        text = p.name
        if p.default is not P.empty:
            defaults[f"_d_{p.name}"] = p.default
            text += f"=_d_{p.name}"
        if p.kind is P.VAR_POSITIONAL:
            text = call_text = f"*{p.name}"
        elif p.kind is P.VAR_KEYWORD:
            text = call_text = f"**{p.name}"
        elif p.kind is P.KEYWORD_ONLY:
            call_text = f"{p.name}={p.name}"
            if not any(q.kind in (P.VAR_POSITIONAL, P.KEYWORD_ONLY) for q in plist[:i]):
                params.append("*")
        else:
            call_text = p.name
        params.append(text)
        call.append(call_text)
        if p.kind is P.POSITIONAL_ONLY and (i + 1 == len(plist)
                                            or plist[i + 1].kind is not P.POSITIONAL_ONLY):
            params.append("/")
    context_check = ""
    if needs_context:
        bound = "{" + ", ".join(f"{p.name!r}: {p.name}" for p in plist) + "}"
        context_check = _CONTEXT_CHECK.format(
            no_context=f"_no_ctx({bound})" if callable(no_ctx) else "_no_ctx")
    src = _GUARD.format(params=", ".join(params), call=", ".join(call),
                        context_check=context_check)
    namespace: dict[str, Any] = {
        "_fn": fn, "_no_ctx": no_ctx, "ApiReturn": ApiReturn, "BackendClosed": BackendClosed,
        "_closed_message": f"{fn.__name__} called on a closed SimBackend", **defaults}
    exec(compile(src, f"<guarded {fn.__qualname__}>", "exec"), namespace)  # noqa: S102
    return functools.wraps(fn)(namespace["_guarded"])


__all__ = ["ApiReturn", "BackendClosed", "NO_CTX", "NO_CTX_OUT", "ThreadContext", "guarded"]
