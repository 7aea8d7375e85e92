"""The Destroy-while-blocked specs release the blocked execution soon after Destroy (LIFE-03):
the short delay must still tell a Destroy that waits from one that does not (the generated
spec here; the exec machine's check is in test_stateful_machines.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings

import mdlri_conformance.backends.sim as sim
from mdlri_conformance.conformance.engine import graphs, runner, validation
from mdlri_conformance.conformance.engine.steps import Destroy
from mdlri_conformance.conformance.specs import test_generated as generated_specs

RELEASED = "returned after the release store began"


def _released_after(faults: list[str], case: graphs.Case) -> Any:
    backend = sim.SimBackend(faults=faults)
    backend.set_device(0)
    try:
        obs = runner.replay(backend, case)
    finally:
        backend.close()
    return [o.value for o in obs if o.what == RELEASED]


@settings(max_examples=4, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(case=generated_specs.destroyed_soon_while_blocked())
def test_generated_destroy_release_tells_waiting_from_not(case: graphs.Case) -> None:
    """Every Destroy step carries the spec's short delay, the case stays valid, and its
    replay observes the release before Destroy returned only where Destroy waits."""
    destroys = [s for s in case.plan if isinstance(s, Destroy)]
    assert destroys and all(s.after_ms in generated_specs.DESTROY_RELEASE_MS for s in destroys)
    validation.check(case)
    assert _released_after([], case) == [True]
    assert _released_after(["destroy-no-wait"], case) == [False]

