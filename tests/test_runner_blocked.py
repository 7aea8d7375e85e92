"""The runner on blocked executions and capture-end cases (simulator): the replay matches
the oracle, and a sync or query that never returns is observed, ends the plan, and leaves
the backend usable."""

from __future__ import annotations

import time
from typing import Any

import mdlri_conformance.backends.sim as sim
from mdlri_conformance.conformance.engine import (deadline, graphs, oracle, runner, runner_plan,
                                                  validation)
from mdlri_conformance.conformance.engine.graphs import (Case, EndOnSide, Launch, OutsideWait,
                                                         Record, StrayWait, ValueWait, Wait)
from mdlri_conformance.conformance.engine.observe import first_difference
from mdlri_conformance.conformance.engine.steps import (Destroy, Execute, HostWrite, Query,
                                                        SetKernel, Sync, Update)

from .runner_helpers import Wrapped

X = [1, 2, 3, 4, 5, 6, 7, 8]
COPY = {"src": 0, "dst": 1, "n": 8}


def gated(plan: list) -> Case:
    return Case(streams=1, buffers=[list(X), [-1] * 8], words=[5], events=0,
                ops=[ValueWait(0, 0, 7, 1), Launch(0, "copy", dict(COPY))], plan=plan)


def test_blocked_replay_matches_the_oracle() -> None:
    b = sim.create()
    try:
        case = gated([Execute(), Sync(40), Query(), SetKernel(1, dict(COPY)), HostWrite(0, 7),
                      Sync(5000), Query()])
        assert first_difference(oracle.expected(case), runner.replay(b, case)) is None
    finally:
        b.close()


def test_a_sync_that_never_returns_is_observed_and_released() -> None:
    b = sim.create(faults=["timeout-ignored"])
    try:
        case = gated([Execute(), Sync(40), HostWrite(0, 7), Sync(5000)])
        t0 = time.monotonic()
        obs = runner.replay(b, case)
        assert time.monotonic() - t0 < 40 / 1000 + runner_plan.DEADLINE_SLACK_S + 3
        assert obs[-1].value == deadline.DID_NOT_RETURN  # the plan ended there
        # cleanup released the wait: the backend still replays a case that blocks nothing
        free = gated([HostWrite(0, 7), Execute(), Sync(5000)])
        assert first_difference(oracle.expected(free), runner.replay(b, free)) is None
    finally:
        b.close()


def test_end_on_side_replays_like_the_oracle() -> None:
    case = Case(streams=2, buffers=[[-1] * 8], words=[], events=2,
                ops=[Record(0, 0), Wait(1, 0), EndOnSide(1), Record(1, 1), Wait(0, 1),
                     Launch(0, "fill", {"out": 0, "n": 8, "value": 3})],
                plan=[Execute(), Sync()])
    for faults, same in ((None, True), (["end-on-joined-stream"], False)):
        b: Any = sim.create(faults=faults)
        try:
            diff = first_difference(oracle.expected(case), runner.replay(b, case))
            assert (diff is None) is same
        finally:
            b.close()


def test_destroy_waits_for_the_blocked_execution_it_releases() -> None:
    """LIFE-03: Destroy returns 0 only after the release store began; Update of the blocked
    READY model is the 0 no-op (UPD-09); the sync after Destroy sees the execution's results.
    A Destroy that does not wait is seen at once."""
    case = gated([Execute(), Update(), Destroy(0, 7, 60), Sync(5000)])
    exp = oracle.expected(case)
    assert [o.value for o in exp if o.phase == "step" and o.index == 2] == [0, True]
    assert [o.value for o in exp if o.what == "buffer 1"] == [X]
    for faults, same in ((None, True), (["destroy-no-wait"], False)):
        b: Any = sim.create(faults=faults)
        try:
            diff = first_difference(exp, runner.replay(b, case))
            assert (diff is None) is same, diff
            if not same:
                assert diff is not None and diff.observed is not None
                assert diff.observed.what == "returned after the release store began"
        finally:
            b.close()


class AcceptsOutsideWait(Wrapped):
    """Answers 0 where the wait on an event recorded outside the capture is 107024 (XS-05)."""

    def stream_wait_event(self, stream: Any, event: Any) -> int:
        rc = self._inner.stream_wait_event(stream, event)
        return 0 if rc == 107024 else rc


class RefusesFirstWait(Wrapped):
    """Answers the first wait of the replay as if it were XS-05's (107024)."""

    waits = 0

    def stream_wait_event(self, stream: Any, event: Any) -> int:
        self.waits += 1
        return 107024 if self.waits == 1 else self._inner.stream_wait_event(stream, event)


def test_outside_wait_is_refused_and_captures_nothing() -> None:
    """XS-05: the wait answers 107024 mid-capture and the capture goes on; a backend that
    accepts it differs at that observation."""
    case = Case(streams=2, buffers=[[-1] * 8], words=[], events=2,
                ops=[Record(0, 0), Wait(1, 0), OutsideWait(1), OutsideWait(0),
                     Launch(1, "fill", {"out": 0, "n": 8, "value": 3}), Record(1, 1),
                     Wait(0, 1)],
                plan=[Execute(), Sync()])
    exp = oracle.expected(case)
    assert [o.value for o in exp if o.what in ("ops[2] rc", "ops[3] rc")] == [107024, 107024]
    b: Any = sim.create()
    try:
        assert first_difference(exp, runner.replay(b, case)) is None

        diff = first_difference(exp, runner.replay(AcceptsOutsideWait(b), case))
        assert diff is not None and diff.expected is not None
        assert diff.expected.what == "ops[2] rc"
    finally:
        b.close()


def test_stray_wait_answers_0_and_captures_nothing() -> None:
    """XS-14: a wait on a fresh event and one on an event the capture records only later
    both answer 0 and add no task; the later record is captured and orders the join. A
    backend that refuses the wait, or captures a wait task for it, differs there."""
    case = Case(streams=2, buffers=[[-1] * 8], words=[], events=3,
                ops=[StrayWait(0, 2), StrayWait(0, 0), Record(0, 0), Wait(1, 0),
                     StrayWait(1, 1), Launch(1, "fill", {"out": 0, "n": 8, "value": 3}),
                     Record(1, 1), Wait(0, 1)],
                plan=[Execute(), Sync()])
    validation.check(case)
    exp = oracle.expected(case)
    assert [o.value for o in exp if o.what in ("ops[0] rc", "ops[1] rc", "ops[4] rc")] == \
        [0, 0, 0]
    b: Any = sim.create()
    try:
        assert first_difference(exp, runner.replay(b, case)) is None

        diff = first_difference(exp, runner.replay(RefusesFirstWait(b), case))
        assert diff is not None and diff.expected is not None
        assert diff.expected.what == "ops[0] rc"
    finally:
        b.close()


def test_a_stray_wait_after_a_record_is_refused_by_check() -> None:
    """A wait on an event already recorded in the capture is a plain wait (XS-01): the graph
    language refuses a StrayWait there."""
    case = Case(streams=1, buffers=[[-1] * 8], words=[], events=1,
                ops=[Record(0, 0), StrayWait(0, 0)], plan=[])
    try:
        validation.check(case)
    except graphs.GraphError as exc:
        assert "stray wait on event 0" in str(exc)
    else:
        raise AssertionError("check accepted a stray wait after the record")
