"""The generated tier on a runtime whose first execution of a model is slow.

A runtime may take seconds over a model's first execution: the real one, over a driver that
never advances the SQ tail, polls it for up to 5 s per stream of the model
(``feature/model/model.cc:1011-1022``, MAX_WAIT_TIME at ``:46``); later executions are fast.
Every example of a generated spec builds new models, so sixty examples would take minutes and
end as TIMEOUT. The capability probes time a one-stream model's first and second execution
(:data:`.probe_checks.MEASUREMENTS`); from the difference, the cost of a first execution per
stream, a :class:`Budget` sizes a generated spec to fit its ``--spec-timeout``:

* fewer examples (:meth:`Budget.examples`: as many as :data:`SHARE` of the spec timeout
  holds, each costed at the spec's most streams), no shrink phase (a failure is reported as
  found);
* before each example, :meth:`Budget.admit` says whether its streams still fit: the first
  example that cannot fit makes the spec UNSUPPORTED ("execution too slow for the generated
  tier: N s per first execution"), a later one is skipped;
* a spec whose single example cannot fit is UNSUPPORTED before it starts, never TIMEOUT.

A runtime whose first execution costs less than :data:`FAST_S` per stream, or a run with the
watchdog off (``--spec-timeout 0``), is not sized.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from . import probe

#: the share of ``--spec-timeout`` the examples of one generated spec may take (shrinking, off
#: here, would have its own share: :mod:`.shrinking`)
SHARE = 0.4
#: a first execution cheaper than this per stream changes nothing
FAST_S = 0.05


@dataclass
class Budget:
    """The time one generated spec may spend on examples, at ``per_stream_s`` per stream of
    each example's models (their first executions)."""

    per_stream_s: float
    seconds: float
    started: float = field(default_factory=time.monotonic)
    ran: int = 0

    def cost(self, streams: int) -> float:
        """The seconds an example with ``streams`` streams spends on first executions."""
        return self.per_stream_s * max(1, streams)

    def examples(self, streams: int, max_examples: int) -> int:
        """How many examples of up to ``streams`` streams fit (at most ``max_examples``)."""
        return min(max_examples, int(self.seconds // self.cost(streams)))

    def admit(self, streams: int) -> bool:
        """Whether an example of ``streams`` streams still fits in what is left."""
        return time.monotonic() - self.started + self.cost(streams) <= self.seconds

    def too_slow(self, streams: int) -> str:
        """The UNSUPPORTED reason of a spec whose example cannot fit."""
        return (f"execution too slow for the generated tier: {self.per_stream_s:.1f} s per "
                f"first execution (per stream; an example of {streams} stream(s) needs "
                f"{self.cost(streams):.0f} s, the spec has {self.seconds:.0f} s)")


def first_execution_cost(backend: Any) -> float | None:
    """Seconds a model's first execution costs per stream beyond a later one (the probes'
    measurement), else None (not measured)."""
    first = probe.timing(backend, "first_execution_s")
    if first is None:
        return None
    second = probe.timing(backend, "second_execution_s") or 0.0
    return max(first - second, 0.0)


def budget_for(backend: Any, spec_timeout_s: float) -> Budget | None:
    """The budget of one generated spec, or None when nothing needs sizing."""
    cost = first_execution_cost(backend)
    if cost is None or cost < FAST_S or spec_timeout_s <= 0:
        return None
    return Budget(cost, spec_timeout_s * SHARE)


__all__ = ["FAST_S", "SHARE", "Budget", "budget_for", "first_execution_cost"]
