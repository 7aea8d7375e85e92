"""The simulator's guard (backends/sim/guard.py): the wrapper it makes takes the method's own
signature, and keeps the rules of every guarded call (closed backend, no-context answer with
the bound arguments, ApiReturn, progress after the call)."""

from __future__ import annotations

import inspect
import threading
from typing import Any

import pytest

from mdlri_conformance.backends.sim.guard import (NO_CTX, ApiReturn, BackendClosed,
                                                  ThreadContext, guarded)

SEEN: list[dict[str, Any]] = []


def _remember(bound: dict[str, Any]) -> int:
    SEEN.append(bound)
    return -1


class Fake:
    """The attributes the guard reads: the lock, closed flag, thread context, progress."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._closed = False
        self._tls = ThreadContext()
        self._tls.context = True
        self.kicks = 0

    def _kick(self) -> None:
        self.kicks += 1

    @guarded(_remember)
    def every_kind(self, a: int, /, b: int, c: list[int] = [], *rest: int,  # noqa: B006
                   d: int, e: int = 5, **more: int) -> tuple:
        return a, b, c, rest, d, e, more

    @guarded()
    def refuses(self, rc: int) -> int:
        raise ApiReturn(rc)

    @guarded(needs_context=False)
    def anywhere(self) -> str:
        return "ran"


def test_the_wrapper_has_the_methods_signature_and_passes_every_argument_on() -> None:
    f = Fake()
    assert inspect.signature(Fake.every_kind) == inspect.signature(
        Fake.every_kind.__wrapped__)
    default = inspect.signature(Fake.every_kind.__wrapped__).parameters["c"].default
    got = f.every_kind(1, 2, d=4)
    assert got == (1, 2, [], (), 4, 5, {}) and got[2] is default
    assert f.every_kind(1, 2, [3], 9, 8, d=4, e=6, x=7) == (1, 2, [3], (9, 8), 4, 6, {"x": 7})
    assert f.every_kind(1, b=2, d=4) == (1, 2, [], (), 4, 5, {})
    with pytest.raises(TypeError):
        f.every_kind(a=1, b=2, d=4)  # a is positional-only, as in the method
    assert f.kicks == 3


def test_no_context_gets_the_bound_arguments_with_defaults() -> None:
    f = Fake()
    SEEN.clear()
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(f.every_kind(1, 2, d=4, x=7)))
    t.start()
    t.join()
    assert out == [-1]
    assert SEEN == [{"self": f, "a": 1, "b": 2, "c": [], "rest": (), "d": 4, "e": 5,
                     "more": {"x": 7}}]
    assert list(SEEN[0]) == list(inspect.signature(Fake.every_kind).parameters)
    out.clear()
    t = threading.Thread(target=lambda: out.append((f.refuses(3), f.anywhere())))
    t.start()
    t.join()
    assert out == [(NO_CTX, "ran")]


def test_api_return_closed_backend_and_progress() -> None:
    f = Fake()
    assert f.refuses(7) == 7 and f.kicks == 1
    f._closed = True
    with pytest.raises(BackendClosed, match="^refuses called on a closed SimBackend$"):
        f.refuses(7)
    assert f.kicks == 1


def test_a_parameter_may_not_shadow_the_guards_names() -> None:
    with pytest.raises(TypeError, match="_fn is reserved"):
        guarded()(lambda self, _fn: None)
