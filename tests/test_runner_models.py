"""Several models sharing buffers and copies of every kind, replayed on the simulator: the
runner agrees with the oracle, and planted bugs (a runtime that runs one model's records for
another, one that reads pinned host memory at capture time, one that captures a pageable
copy) are caught as divergences."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings

import mdlri_conformance.backends.sim as sim
from mdlri_conformance.backends.contract import Err
from mdlri_conformance.conformance.engine import divergence, oracle, runner, validation
from mdlri_conformance.conformance.engine.graphs import (Case, Copy, Launch, PageableCopy, Record,
                                                         Wait)
from mdlri_conformance.conformance.engine.observe import first_difference
from mdlri_conformance.conformance.engine.steps import Execute, HostFill, Sync
from mdlri_conformance.conformance.engine.strategies_copies import copy_cases, pageable_copies
from mdlri_conformance.conformance.engine.strategies_models import shared_models

from .runner_helpers import Wrapped, conforms_on_a_fresh_sim

X = list(range(1, 9))
S = [-1] * 8


class RunsFirstModel(Wrapped):
    """ExecuteAsync of any model runs the records of the first model captured: a runtime
    that mixes up two models' records."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.made: list[Any] = []

    def capture_end(self, stream: Any) -> Any:
        rc, model = self._inner.capture_end(stream)
        if rc == Err.SUCCESS and model is not None:
            self.made.append(model)
        return rc, model

    def execute_async(self, model: Any, stream: Any) -> int:
        return self._inner.execute_async(self.made[0] if self.made else model, stream)


class SnapshotsHostAtCapture(Wrapped):
    """A captured host-to-device copy reads the pinned source when it is captured: the task
    copies from a private pinned snapshot (CAP-19 broken)."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.snapshots: list[np.ndarray] = []

    def memcpy_async(self, dst: Any, dest_max: int, src: Any, count: int, kind: int,
                     stream: Any) -> int:
        if isinstance(src, np.ndarray):
            rc, snap = self._inner.malloc_host(src.nbytes)
            assert rc == Err.SUCCESS
            snap[:] = src.view(np.uint8)
            self.snapshots.append(snap)
            src = snap
        return self._inner.memcpy_async(dst, dest_max, src, count, kind, stream)


class CapturesPageableCopies(Wrapped):
    """A capturing stream accepts an async copy with pageable host memory (MODE-14 broken):
    the memory is quietly pinned and the copy captured."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.pinned: list[np.ndarray] = []

    def memcpy_async(self, dst: Any, dest_max: int, src: Any, count: int, kind: int,
                     stream: Any) -> int:
        def pin(x: Any) -> Any:
            if not isinstance(x, np.ndarray):
                return x
            rc, p = self._inner.malloc_host(x.nbytes)
            assert rc == Err.SUCCESS
            p[:] = x.view(np.uint8)
            self.pinned.append(p)
            return p
        return self._inner.memcpy_async(pin(dst), dest_max, pin(src), count, kind, stream)


def shared_case() -> Case:
    """Model 0 (streams 0-1, fork/join) fills buffer 1 from buffer 0; model 1 (stream 2,
    captured while model 0's capture is open) accumulates buffer 0 into buffer 1 and copies
    buffer 1 into the pinned host buffer 0."""
    return Case(streams=3, buffers=[X, S], words=[], events=2, origins=[0, 2], hosts=[S],
                ops=[Record(0, 0), Wait(1, 0),
                     Launch(2, "accumulate", {"acc": 1, "x": 0, "n": 8}),
                     Launch(1, "affine", {"x": 0, "y": 1, "n": 8, "a": 3, "b": 1}),
                     Record(1, 1), Wait(0, 1), Copy(2, 1, 0, "d2h")],
                plan=[Execute(1, 0), Execute(1, 1), Sync(), Execute(2, 1), Execute(1, 0),
                      Sync()])


def test_shared_case_conforms(sim_backend: Any) -> None:
    case = shared_case()
    validation.check(case)
    exp = oracle.expected(case)
    obs = runner.replay(sim_backend, case)
    assert first_difference(exp, obs) is None
    after = {o.what: o.value for o in obs if o.phase == "sync" and o.index == 2}
    assert after["buffer 1"] == [3 * x + 1 + x for x in X]
    assert after["host 0"] == after["buffer 1"]


def test_a_runtime_mixing_up_models_is_caught(sim_backend: Any) -> None:
    case = shared_case()
    div = divergence.compare(case, "sim", oracle.expected(case),
                         runner.replay(RunsFirstModel(sim_backend), case))
    assert div is not None and not div.unsupported
    assert div.difference.expected.key == ("sync", 2, "buffer 1")


def test_a_runtime_reading_pinned_memory_at_capture_is_caught(sim_backend: Any) -> None:
    case = Case(streams=1, buffers=[S], words=[], events=0, hosts=[X],
                ops=[Copy(0, 0, 0, "h2d")],
                plan=[Execute(), Sync(), HostFill(0, 7), Execute(), Sync()])
    exp = oracle.expected(case)
    assert first_difference(exp, runner.replay(sim_backend, case)) is None
    div = divergence.compare(case, "sim", exp,
                         runner.replay(SnapshotsHostAtCapture(sim_backend), case))
    assert div is not None and div.difference.expected.key == ("sync", 4, "buffer 0")
    assert div.difference.expected.value == [7] * 8


def test_a_runtime_capturing_pageable_copies_is_caught(sim_backend: Any) -> None:
    case = Case(streams=1, buffers=[X], words=[], events=0,
                ops=[Launch(0, "fill", {"out": 0, "n": 8, "value": 2}),
                     PageableCopy(0, 0, "h2d")],
                plan=[Execute(), Sync()])
    exp = oracle.expected(case)
    assert first_difference(exp, runner.replay(sim_backend, case)) is None
    div = divergence.compare(case, "sim", exp,
                         runner.replay(CapturesPageableCopies(sim_backend), case))
    assert div is not None and div.difference.expected.key == ("capture", -1, "ops[1] rc")
    assert div.difference.observed.value == 0


_SETTINGS = settings(max_examples=25, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(shared_models())
def test_drawn_shared_models_conform_on_the_simulator(case: Case) -> None:
    assert conforms_on_a_fresh_sim(case)


@_SETTINGS
@given(copy_cases())
def test_drawn_copies_conform_on_the_simulator(case: Case) -> None:
    assert conforms_on_a_fresh_sim(case)


@_SETTINGS
@given(pageable_copies())
def test_drawn_pageable_copies_conform_on_the_simulator(case: Case) -> None:
    b = sim.create()
    try:
        obs = runner.replay(b, case)
        assert first_difference(oracle.expected(case), obs) is None
        rejected = [o for o in obs if o.phase == "capture" and o.what.endswith("] rc")]
        assert rejected and all(o.value == 107000 for o in rejected)
    finally:
        b.close()
