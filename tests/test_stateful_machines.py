"""The stateful machines' library: the capture-mode reference, batch seeds, and what a broken
backend ends with (a shrunk program, never a FlakyStrategyDefinition)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import core

import mdlri_conformance.backends.sim as sim
from mdlri_conformance.conformance.engine import machine
from mdlri_conformance.conformance.engine.modes import GLOBAL, RELAXED, THREAD_LOCAL, CaptureModes
from mdlri_conformance.conformance.framework.outcomes import ConformanceFailure
from mdlri_conformance.conformance.specs import test_stateful_capture as capture_specs
from mdlri_conformance.conformance.specs import test_stateful_exec as exec_specs


def test_modes_nothing_active_blocks_nothing() -> None:
    m = CaptureModes()
    m.exchange(1, THREAD_LOCAL)
    assert not m.blocked(0) and not m.blocked(1)


def test_modes_global_blocks_every_default_thread() -> None:
    """MODE-02, MODE-06, MODE-08."""
    m = CaptureModes()
    m.begin(0, GLOBAL, 1)
    assert m.blocked(1) and m.blocked(2)
    m.exchange(2, THREAD_LOCAL)
    assert not m.blocked(2)          # MODE-08: another thread unblocks with THREAD_LOCAL
    m.exchange(1, THREAD_LOCAL)
    assert m.blocked(1)              # MODE-07: not in the capturing thread
    m.exchange(1, RELAXED)
    assert not m.blocked(1)          # MODE-06


def test_modes_thread_local_blocks_its_thread_only() -> None:
    """MODE-03, MODE-11: the strictest active capture governs, and relaxes as captures end."""
    m = CaptureModes()
    m.begin(0, THREAD_LOCAL, 1)
    assert m.blocked(1) and not m.blocked(2)
    m.begin(1, GLOBAL, 2)
    assert m.blocked(1) and m.blocked(2)
    m.end(1)
    assert m.blocked(1) and not m.blocked(2)
    m.end(0)
    assert not m.blocked(1)


def test_modes_relaxed_blocks_nothing_and_exchange_returns_previous() -> None:
    """MODE-04, MODE-05."""
    m = CaptureModes()
    m.begin(0, RELAXED, 1)
    assert not m.blocked(1) and not m.blocked(0)
    assert m.exchange(1, THREAD_LOCAL) == GLOBAL
    assert m.exchange(1, RELAXED) == THREAD_LOCAL


def test_batch_seeds_differ_and_repeat(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core, "global_force_seed", 1234, raising=False)
    seeds = [machine.batch_seed("M", b) for b in range(6)]
    assert None not in seeds and len(set(seeds)) == 6
    assert seeds == [machine.batch_seed("M", b) for b in range(6)]
    assert machine.batch_seed("N", 0) != seeds[0]


def _failure(run: Any, machine_class: type, fault: str) -> ConformanceFailure:
    """What a spec's machine runner ``run`` (its module's ``_run``) ends with on a simulator
    with ``fault`` planted."""
    backend = sim.SimBackend(faults=[fault])
    backend.set_device(0)
    try:
        with pytest.raises(ConformanceFailure) as info:
            run(machine_class, backend, 0)
    finally:
        backend.close()
    return info.value


def test_broken_backend_ends_with_a_shrunk_program() -> None:
    """A planted fault ends as the spec's own failure with the shrunk steps attached, not as
    a Hypothesis error about the test itself."""
    failure = _failure(capture_specs._run, capture_specs.CaptureImplMachine,
                       "execute-null-model-107000")
    assert "EXE-09" in str(failure)
    notes = "\n".join(getattr(failure, "__notes__", []))
    assert "state.execute_null(" in notes
    assert notes.count("state.") <= 6  # shrunk to a handful of steps


def test_exec_machine_destroy_release_catches_a_destroy_that_does_not_wait() -> None:
    """The exec machine's release RELEASE_AFTER_MS after Destroy fails LIFE-03 on a Destroy
    that frees the running model at once."""
    failure = _failure(exec_specs._run, exec_specs.ExecMachine, "destroy-no-wait")
    assert "LIFE-03" in str(failure)
