"""The oracle on blocked executions, value-wait flags, capture-end negatives, emptied
streams and device-to-device copies (hand-computed cases)."""

from __future__ import annotations

import pytest

from mdlri_conformance.backends.contract import CaptureStatus, Err, StreamStatus, TaskType
from mdlri_conformance.conformance.engine import case_facts, graphs, validation
from mdlri_conformance.conformance.engine.graphs import (Case, Copy, EndOnSide, GraphError,
                                                         Launch, Record, ValueWait, ValueWrite,
                                                         Wait)
from mdlri_conformance.conformance.engine.oracle import expected
from mdlri_conformance.conformance.engine.oracle_state import UndefinedCase
from mdlri_conformance.conformance.engine.steps import (Destroy, Disable, Execute, HostWrite,
                                                        Query, SetKernel, Sync, Update)

X = [1, 2, 3, 4, 5, 6, 7, 8]
S = [-1] * 8
M = 2 ** 64 - 1
COPY = {"src": 0, "dst": 1, "n": 8}


def obs_of(case: Case) -> dict[tuple[str, int, str], object]:
    return {o.key: o.value for o in expected(case)}


def gated(plan: list, flag: int = 1, want: int = 7, word: int = 5) -> Case:
    """copy(in -> out) behind a value wait on a host word (TMO-03's gated model)."""
    return Case(streams=1, buffers=[list(X), list(S)], words=[word], events=0,
                ops=[ValueWait(0, 0, want, flag), Launch(0, "copy", dict(COPY))], plan=plan)


@pytest.mark.parametrize("have,want,flag,holds", [
    (5, 5, 1, True), (5, 6, 1, False),
    (0, M, 0, True),                  # 0 - (2^64-1) wraps to +1: GEQ holds
    (M, 0, 0, False),                 # -1 as a signed difference
    (2 ** 63, 0, 0, False), (2 ** 63 - 1, 0, 0, True),
    (6, 2, 2, True), (4, 2, 2, False),
    (0, 0, 3, True), (M, 0, 3, False), (1, M - 1, 3, False), (0, M - 1, 3, True),
])
def test_wait_conditions_on_64_bits(have: int, want: int, flag: int, holds: bool) -> None:
    """abi.md §3.5: GEQ (int64)(*a - v) >= 0, EQ, AND (*a & v) != 0, NOR ~(*a | v) != 0."""
    assert graphs.wait_holds(have, want, flag) is holds


def test_blocked_execution_observations() -> None:
    """TMO-03/TMO-06/SETP-12: while blocked a timed sync expires, the query says NOT_READY and
    SetParams is refused without effect; the host store releases the execution."""
    got = obs_of(gated([Execute(), Sync(100), Query(), SetKernel(1, dict(COPY)),
                        HostWrite(0, 7), Sync(5000), Query()]))
    assert got[("step", 1, "rc")] == Err.RT_STREAM_SYNC_TIMEOUT
    assert got[("step", 1, "waited the timeout")] is True
    assert ("sync", 1, "buffer 1") not in got  # nothing is read while blocked
    assert got[("step", 2, "rc")] == [0, StreamStatus.NOT_READY]
    assert got[("step", 3, "rc")] == Err.RT_MODEL_UPDATE_FAILED
    assert got[("step", 4, "rc")] == 0
    assert got[("step", 5, "rc")] == 0
    assert got[("sync", 5, "buffer 1")] == X
    assert got[("sync", 5, "word 0")] == 7
    assert got[("step", 6, "rc")] == [0, StreamStatus.COMPLETE]


def test_refused_setparams_while_running_leaves_the_model_ready() -> None:
    got = obs_of(gated([Execute(), Disable(1), HostWrite(0, 7), Sync(5000), Execute(), Sync()]))
    assert got[("step", 1, "rc")] == Err.RT_MODEL_UPDATE_FAILED
    assert got[("step", 4, "rc")] == [0]
    assert got[("sync", 5, "buffer 1")] == X


def test_geq_wraparound_blocks_and_releases() -> None:
    """GEQ with value 1 on a word holding 2^63+1: the signed difference is negative."""
    got = obs_of(gated([Execute(), Sync(50), HostWrite(0, 1), Sync(5000)], flag=0, want=1,
                       word=2 ** 63 + 1))
    assert got[("step", 1, "rc")] == Err.RT_STREAM_SYNC_TIMEOUT
    assert got[("sync", 3, "buffer 1")] == X


def test_an_unreleasable_or_unbounded_block_is_rejected() -> None:
    with pytest.raises(GraphError, match="no host_write"):
        validation.check(gated([Execute(), Sync(100)]))
    with pytest.raises(UndefinedCase, match="sync\\(-1\\)"):
        expected(gated([Execute(), Sync(-1), HostWrite(0, 7), Sync()]))
    with pytest.raises(GraphError, match="written by a captured op"):
        validation.check(Case(streams=1, buffers=[list(S)], words=[0], events=0,
                          ops=[ValueWrite(0, 0, 1)], plan=[HostWrite(0, 2)]))


def test_destroy_is_the_models_last_step_and_must_release() -> None:
    """LIFE-03 as the case language draws it: only Syncs follow a Destroy; its store targets
    a host word; a store that leaves the execution blocked (Destroy would poll 10 s) or a
    Destroy of a blocked model with no store is outside what is drawn."""
    with pytest.raises(GraphError, match="last step"):
        validation.check(gated([Execute(), Destroy(0, 7), Execute()]))
    with pytest.raises(GraphError, match="after_ms 0"):
        validation.check(gated([Execute(), Destroy(0, 7, 0)]))
    with pytest.raises(UndefinedCase, match="poll for 10 s"):
        expected(gated([Execute(), Destroy(0, 6)]))
    with pytest.raises(UndefinedCase, match="no release"):
        expected(gated([HostWrite(0, 6), Execute(), Destroy()]))


def test_end_on_side_and_unjoined_capture() -> None:
    """CAP-11: 107036 and the capture goes on; XS-02/CAP-13: 107025, NULL, out of capture."""
    ops = [Record(0, 0), Wait(1, 0), EndOnSide(1), Record(1, 1), Wait(0, 1),
           Launch(0, "fill", {"out": 0, "n": 8, "value": 3})]
    ok = Case(streams=2, buffers=[list(S)], words=[], events=2, ops=ops, plan=[Execute(), Sync()])
    got = obs_of(ok)
    active = int(CaptureStatus.ACTIVE)
    assert got[("capture", -1, "ops[2] end on side")] == Err.RT_STREAM_CAPTURE_UNMATCHED
    assert got[("capture", -1, "ops[2] statuses")] == [active, active]
    assert got[("capture", -1, "rc")] == 0
    assert got[("sync", 1, "buffer 0")] == [3] * 8
    bad = Case(streams=2, buffers=[list(S)], words=[], events=1,
               ops=[Record(0, 0), Wait(1, 0), Launch(1, "fill", {"out": 0, "n": 8, "value": 3})],
               plan=[])
    assert [o.value for o in expected(bad)] == [Err.RT_STREAM_UNJOINED, "NULL", [0, 0]]
    bad.plan = [Execute()]
    with pytest.raises(GraphError, match="no model"):
        validation.check(bad)


def test_emptied_stream_lists_one_nop() -> None:
    """DIS-07: the Update that disables the last task leaves one DEFAULT task."""
    case = Case(streams=1, buffers=[list(X), list(S)], words=[0], events=0,
                ops=[Launch(0, "copy", dict(COPY)), ValueWrite(0, 0, 9)],
                plan=[Disable(0), Update(), Disable(1), Update(), Execute(), Sync()])
    got = obs_of(case)
    assert ("listing", 1, "stream 0 emptied") not in got
    assert got[("listing", 3, "stream 0 emptied")] == [int(TaskType.DEFAULT)]
    assert got[("listing", 3, "stream 0 ops")] == []
    assert got[("sync", 5, "buffer 1")] == S


def test_stream_order_names_classes() -> None:
    """LIST-02: most recently attached first, origin last; equal streams share a class."""
    ops = [Record(0, 0), Wait(1, 0), Record(0, 1), Wait(2, 1),
           Record(1, 2), Wait(0, 2), Record(2, 3), Wait(0, 3)]
    case = Case(streams=3, buffers=[], words=[], events=4, ops=ops, plan=[])
    assert case_facts.stream_classes(case) == [0, 1, 1]
    assert obs_of(case)[("listing", -1, "stream order")] == [1, 1, 0]


def test_copy_is_a_default_task_that_moves_data() -> None:
    """A captured D2D copy runs at execution, is not listed among the user-visible tasks and
    cannot be disabled (DIS-06: 107000 and FAULT)."""
    case = Case(streams=1, buffers=[list(X), list(S)], words=[], events=0,
                ops=[Copy(0, 0, 1)], plan=[Execute(), Sync(), Disable(0), Execute()])
    got = obs_of(case)
    assert got[("listing", -1, "stream 0 ops")] == []
    assert got[("sync", 1, "buffer 1")] == X
    assert got[("step", 2, "rc")] == Err.RT_PARAM_INVALID
    assert got[("step", 3, "rc")] == [Err.RT_MODEL_EXECUTE]
    with pytest.raises(GraphError, match="distinct"):
        validation.check(Case(streams=1, buffers=[list(X)], words=[], events=0,
                          ops=[Copy(0, 0, 0)], plan=[]))
