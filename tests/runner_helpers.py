"""Helpers of the runner tests: a backend that plants one bug over the simulator, and the
check that a drawn case conforms on a fresh simulator."""

from __future__ import annotations

from typing import Any

import mdlri_conformance.backends.sim as sim
from mdlri_conformance.conformance.engine import oracle, runner
from mdlri_conformance.conformance.engine.graphs import Case
from mdlri_conformance.conformance.engine.observe import first_difference


class Wrapped:
    """A backend that forwards every call to ``inner``; subclasses plant one bug."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def conforms_on_a_fresh_sim(case: Case) -> bool:
    """Whether ``case`` replayed on a new simulator shows exactly what the oracle expects."""
    b = sim.create()
    try:
        return first_difference(oracle.expected(case), runner.replay(b, case)) is None
    finally:
        b.close()
