"""Opaque handle objects handed to the specs.

Handles compare by identity. Each carries an ``alive`` flag that destroy clears, so a stale
stream, event, model, binary or function handle is detected and answered with 107017
(LIFE-06, LIFE-08, Q-01) instead of crashing. Nothing is ever reused: a new object per creation.
"""

from __future__ import annotations

import itertools
from typing import Any

_ids = itertools.count(1)


class Handle:
    """Base of every opaque handle: a kind, a process-unique id and an ``alive`` flag."""

    kind = "handle"

    def __init__(self) -> None:
        self.id: int = next(_ids)
        self.alive: bool = True

    def __repr__(self) -> str:
        state = "" if self.alive else " dead"
        return f"<sim {self.kind} #{self.id}{state}>"

    # identity semantics (explicit, so dataclass-like subclasses cannot change it)
    __hash__ = object.__hash__

    def __eq__(self, other: Any) -> bool:
        return self is other


class SimContext(Handle):
    """An ``aclrtContext``: the primary context of one device (aclrtGetCurrentContext)."""

    kind = "context"

    def __init__(self, device_id: int) -> None:
        super().__init__()
        self.device_id = device_id


def live(obj: Any, cls: type) -> bool:
    """True if ``obj`` is a live handle of type ``cls``."""
    return isinstance(obj, cls) and obj.alive
