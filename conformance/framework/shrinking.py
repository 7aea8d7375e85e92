"""Hypothesis shrinks a failure within the spec's time, so a broken backend ends with the
smallest failing example found, never an interrupted shrink.

Hypothesis bounds the shrinking of one failure at five minutes. The watchdog interrupts a spec
at ``--spec-timeout`` (60 s by default, 10 s in the kill matrix), and a shrink interrupted
there surfaces as an unreadable ``FlakyStrategyDefinition`` instead of the failure. Every spec
call therefore runs under :func:`shrink_budget` of half its spec timeout (the stateful machines
use a tighter budget of their own, nested inside).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import pytest

#: the share of --spec-timeout that shrinking one failure may take
SHARE = 0.5
#: never less than this many seconds
FLOOR_S = 5.0


@contextlib.contextmanager
def shrink_budget(seconds: float) -> Iterator[None]:
    """Bound Hypothesis's shrinking of a failure to ``seconds`` (or the enclosing bound, if
    tighter): it stops gracefully and reports the smallest failing example found so far. Hypothesis keeps the bound in an engine
    module attribute (a version without it shrinks as it always did); its warning about
    "five minutes" is replaced by one line naming this bound."""
    from hypothesis.internal.conjecture import engine
    from hypothesis.reporting import current_reporter, with_reporter
    old = getattr(engine, "MAX_SHRINKING_SECONDS", None)
    if old is None:
        yield
        return
    seconds = min(seconds, old)
    outer = current_reporter()

    def reporter(value: Any) -> None:
        if isinstance(value, str) and "working to shrink a failing test case" in value:
            value = (f"Shrinking stopped after the suite's bound of {seconds:g} s: the failing "
                     "example below is the smallest found in that time.")
        outer(value)

    engine.MAX_SHRINKING_SECONDS = seconds  # type: ignore[attr-defined]
    try:
        with with_reporter(reporter):
            yield
    finally:
        engine.MAX_SHRINKING_SECONDS = old  # type: ignore[attr-defined]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    timeout = float(item.config.getoption("--spec-timeout", 0) or 0)
    if timeout <= 0:
        return (yield)
    with shrink_budget(max(FLOOR_S, timeout * SHARE)):
        return (yield)
