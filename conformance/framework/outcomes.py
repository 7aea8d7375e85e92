"""The exceptions a spec ends with, and the clause context its messages cite.

The plugin's outcome mapping (:mod:`.outcome_map`) turns them into outcomes (DESIGN.md
"Behaviour levels"): :class:`Unsupported` (a 207000 / 207019 the spec did not expect, or a
capability the probes found absent) is UNSUPPORTED, never FAIL; :class:`ConformanceFailure`
is FAIL for a *documented* clause and CHANGED for an *implementation* one. The assertion
helpers that raise them live in the content (``conformance/expect.py``).
"""

from __future__ import annotations

import contextvars
from typing import Any, Iterable

#: clause ids of the spec that is running (set by the plugin around each test call)
current_clauses: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar(
    "current_clauses", default=())


class Unsupported(Exception):
    """The backend does not support what the spec needs (207000 / 207019, or a capability
    the probes found absent). ``caps`` names the absent capabilities (``Cap`` values) when
    known: the row records them as ``missing``, beside the ones its ``requires`` lacked."""

    def __init__(self, *args: object, caps: Iterable[str] = ()) -> None:
        super().__init__(*args)
        self.caps = tuple(caps)


class ConformanceFailure(AssertionError):
    """A check failed; the message is in the suite's single format.

    ``details`` optionally carries the structured divergence (the case as a dict, the
    expected and observed values, the replay command) for the reports.
    """

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = details or {}
