"""Leak checks per spec (LIFE-01, LIFE-08).

Before a spec's setup and after its teardown the plugin reads the backend's live resource
counts: ``live_counts()`` (:class:`backends.contract.LiveCounts`) on the simulator
(``SimBackend.live_counts``) and on the acl backend over the host emulator
(``mdlriEmuLiveCounts``). A backend without ``live_counts`` (real hardware, where
``aclrtGetMemInfo`` is not bound) is not checked. Whatever grew is the spec's leak, recorded
in its result row as ``"leaks": {"models": 1, ...}`` (``{}`` when nothing grew; no ``"leaks"``
when the backend cannot count, which the summary shows as "not checked") and counted in the
summary.

Policy: a leak is reported, not gated. The suite's :class:`~conformance.harness.Dev` releases
everything a spec made, so a leak points at the runtime (a Destroy that frees nothing) or at
a spec that bypasses the harness; it is shown in the summary and the HTML report, and the
specs that check resources explicitly (LIFE-01 in the stateful machine) fail on their own.
"""

from __future__ import annotations

from typing import Any

#: the LiveCounts fields compared
FIELDS = ("models", "streams", "events", "allocations", "labels")


def snapshot(backend: Any) -> dict[str, int] | None:
    """The backend's live counts as a dict, or None when it cannot count (or fails to)."""
    fn = getattr(backend, "live_counts", None)
    if backend is None or not callable(fn):
        return None
    try:
        counts = fn()
    except Exception:  # a closed or broken backend: no leak check for this spec
        return None
    return {f: int(getattr(counts, f, 0)) for f in FIELDS}


def diff(before: dict[str, int] | None, after: dict[str, int] | None) -> dict[str, int]:
    """What grew between two snapshots (empty when nothing did or either is missing)."""
    if before is None or after is None:
        return {}
    return {f: after[f] - before[f] for f in FIELDS if after[f] > before[f]}


def describe(leaks: dict[str, int]) -> str:
    """``"1 model, 2 allocations"`` for a leak dict."""
    return ", ".join(f"{n} {k[:-1] if n == 1 else k}" for k, n in leaks.items())


__all__ = ["FIELDS", "describe", "diff", "snapshot"]
