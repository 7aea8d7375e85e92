"""Helpers of the probe tests (tests/test_probes.py, tests/test_probes_partial.py): probing a
backend and applying the findings, the live-object counts, and the ``closing`` fixture that
forgets and closes every backend a test made."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from mdlri_conformance.conformance.framework import probe, probe_session


def run_probes(backend: Any) -> probe_session.ProbeReport:
    """Probe ``backend`` and apply the findings to it."""
    report = probe.run_probes(backend)
    probe.apply(backend, report)
    return report


@pytest.fixture
def closing() -> Iterator[list[Any]]:
    """The backends a test made: forgotten by the probes and closed after it."""
    made: list[Any] = []
    yield made
    for b in made:
        probe.forget(b)
        b.close()


def live(b: Any) -> tuple[int, int, int, int]:
    """The backend's live models, streams, events and allocations."""
    c = b.live_counts()
    return c.models, c.streams, c.events, c.allocations
