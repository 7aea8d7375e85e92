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
    """The attributes the guard reads: the lock's acquire/release, closed flag, thread
    context and the progress kick."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._acquire, self._release = self._lock.acquire, self._lock.release
        self._cond = threading.Condition(self._lock)
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


class Holder(Fake):
    """A method that reports whether the calling thread holds the lock while it runs."""

    @guarded()
    def holds(self) -> bool:
        return self._lock._is_owned()  # type: ignore[attr-defined]

    @guarded()
    def raises(self) -> int:
        raise KeyError("not an ApiReturn")


def test_the_lock_is_held_during_the_call_and_released_on_every_way_out() -> None:
    f = Holder()
    assert f.holds() is True
    with pytest.raises(KeyError):
        f.raises()
    assert f.kicks == 2  # progress runs after an exception too
    f._closed = True
    with pytest.raises(BackendClosed):
        f.holds()
    f._closed = False
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(f.holds()))
    t.start()
    t.join()
    assert out == [NO_CTX]  # another thread: no context answer
    # every way out released the lock: another thread can take it at once
    assert f._lock.acquire(timeout=0) and (f._lock.release() is None)
    t = threading.Thread(target=lambda: out.append(f._lock.acquire(timeout=1)))
    t.start()
    t.join()
    assert out[-1] is True


def test_progress_that_ran_wakes_the_waiters() -> None:
    """After an API call whose progress ran, the simulator wakes the threads waiting on its
    condition (its ``_kick``, which the guard runs)."""
    from mdlri_conformance.backends.sim import SimBackend

    b = SimBackend()
    woke: list[bool] = []
    ready = threading.Event()

    def wait() -> None:
        with b._cond:
            ready.set()
            woke.append(b._cond.wait(5))

    try:
        rc, s = b.create_stream()
        t = threading.Thread(target=wait)
        t.start()
        ready.wait(5)
        b.engine.progress = lambda: True  # type: ignore[method-assign]
        with b._cond:  # the waiter is inside wait() once it let the lock go
            pass
        assert rc == 0 and b.stream_query(s) == (0, 0)
        t.join(5)
        assert woke == [True]
    finally:
        b.close()


def test_a_parameter_may_not_shadow_the_guards_names() -> None:
    with pytest.raises(TypeError, match="_fn is reserved"):
        guarded()(lambda self, _fn: None)


def test_a_subclass_kick_runs_after_every_call() -> None:
    """A simulator subclass that overrides ``_kick`` (the partial runtime holds progress back
    while it undoes a copy) has it run by the guard after each API call, as before."""
    from mdlri_conformance.backends.sim import SimBackend

    class Counting(SimBackend):
        kicks = 0

        def _kick(self) -> None:
            self.kicks += 1
            super()._kick()

    b = Counting()
    try:
        rc, s = b.create_stream()
        before = b.kicks
        assert b.stream_query(s) == (0, 0) and b.kicks == before + 1
    finally:
        b.close()
