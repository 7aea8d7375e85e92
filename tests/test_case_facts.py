"""Facts read from a case description alone (conformance/engine/case_facts.py)."""

from __future__ import annotations

from mdlri_conformance.conformance.engine.case_facts import emptied_streams
from mdlri_conformance.conformance.engine.graphs import Case, GroupBegin, GroupEnd, Launch

FILL = {"out": 0, "n": 8, "value": 0}


def _case(*ops: object, streams: int = 1) -> Case:
    return Case(streams=streams, buffers=[[-1] * 8], words=[], events=0, ops=list(ops), plan=[])


def test_a_stream_whose_every_kernel_is_removed_is_emptied() -> None:
    """DIS-07: Update gives a stream left without a task one NOP."""
    assert emptied_streams(_case(Launch(0, "fill", FILL)), {0}) == [0]
    assert emptied_streams(_case(Launch(0, "fill", FILL), Launch(0, "fill", FILL)), {0}) == []


def test_a_stream_that_opened_a_task_group_is_never_emptied() -> None:
    """TG-03, DIS-07: the NOP tasks of GrpBegin stay through Update, so a stream that opened
    a group keeps a task list even when every user task on it is removed (an empty group
    after a disabled kernel, as a deep campaign found)."""
    empty_group = _case(Launch(0, "fill", FILL), GroupBegin(0), GroupEnd(0))
    assert emptied_streams(empty_group, {0}) == []
    grouped = _case(GroupBegin(0), Launch(0, "fill", FILL), GroupEnd(0))
    assert emptied_streams(grouped, {1}) == []
