"""The case language and the oracle for several models sharing buffers and for captured
copies of every kind: what check accepts and rejects, and what the oracle expects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mdlri_conformance.conformance.engine import (graphs, oracle, oracle_program, oracle_state,
                                                  validation)
from mdlri_conformance.conformance.engine.graphs import (Case, Copy, EndOnSide, GraphError,
                                                         Launch, PageableCopy, Record, ValueWait,
                                                         ValueWrite, Wait)
from mdlri_conformance.conformance.engine.observe import Observation, first_difference
from mdlri_conformance.conformance.engine.steps import (Disable, Execute, HostFill, HostWrite,
                                                        SetKernel, Sync, Update)

CASES = Path(__file__).resolve().parent.parent / "conformance" / "cases"
X = list(range(1, 9))
S = [-1] * 8


def two_models(plan: list | None = None) -> Case:
    """Model 0 (stream 0) doubles buffer 0 into buffer 1; model 1 (stream 1) adds buffer 0
    into buffer 1 in place: both over the same buffers."""
    return Case(streams=2, buffers=[X, S], words=[], events=0, origins=[0, 1],
                ops=[Launch(0, "affine", {"x": 0, "y": 1, "n": 8, "a": 2, "b": 0}),
                     Launch(1, "accumulate", {"acc": 1, "x": 0, "n": 8})],
                plan=plan if plan is not None else
                [Execute(1, 0), Execute(1, 1), Sync(), Execute(2, 1), Sync()])


def buffer_after(obs: list[Observation], step: int, b: int) -> list[int]:
    return next(o.value for o in obs if o.key == ("sync", step, f"buffer {b}"))


# -- the case language -------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(CASES.glob("*.json")), ids=lambda p: p.stem)
def test_kept_cases_load_and_write_back_unchanged(path: Path) -> None:
    """Old cases keep loading: one model, no host buffers; writing them adds no field but
    a copy op's direction."""
    raw = json.loads(path.read_text())
    case = graphs.from_json(path.read_text())
    validation.check(case)
    out = case.to_dict()
    if "origins" not in raw:
        assert case.origins == [0] and "origins" not in out
    if "hosts" not in raw:
        assert case.hosts == [] and "hosts" not in out
    assert graphs.from_json(case.to_json()) == case


def test_models_streams_and_json_round_trip() -> None:
    case = Case(streams=3, buffers=[X, S], words=[0], events=2, origins=[0, 1],
                hosts=[X, S],
                ops=[Launch(0, "copy", {"src": 0, "dst": 1, "n": 8}),
                     Launch(1, "fill", {"out": 1, "n": 8, "value": 3}),
                     Record(1, 0), Wait(2, 0), Copy(2, 1, 1, "d2h"), Record(2, 1), Wait(1, 1),
                     PageableCopy(0, 0, "h2d"), Copy(0, 0, 1, "h2d")],
                plan=[Execute(1, 1), Sync(), HostFill(0, 5), Execute(1, 0), Sync()])
    validation.check(case)
    assert graphs.stream_models(case) == [0, 1, 1]
    assert graphs.model_streams(case, 1) == [1, 2]
    assert graphs.op_models(case) == [0, 1, 1, 1, 1, 1, 1, 0, 0]
    again = graphs.from_json(case.to_json())
    assert again == case and again.to_dict()["origins"] == [0, 1]


@pytest.mark.parametrize("streams, change, fragment", [
    # an event of model 0 waited on by a stream of model 1 (XS-07)
    (3, lambda c: c.ops.insert(1, Wait(1, 0)) or c.ops.insert(1, Record(0, 0)), "cross-model"),
    # model 1's origin issues nothing
    (3, lambda c: c.ops.pop(1), "issues nothing"),
    # end_on_side needs one model
    (3, lambda c: c.ops.extend([Record(0, 0), Wait(2, 0), EndOnSide(2), Record(2, 1),
                             Wait(0, 1)]), "end_on_side"),
    # more models than MAX_MODELS
    (3, lambda c: c.origins.extend([2, 3]), "models"),
    # two models on one origin
    (3, lambda c: c.origins.__setitem__(1, 0), "origins"),
    # a model executed that does not exist
    (2, lambda c: c.plan.append(Execute(1, 2)), "model 2 out of range"),
    (2, lambda c: c.plan.append(Update(5)), "model 5 out of range"),
])
def test_check_rejects_bad_multi_model_cases(streams: int, change, fragment: str) -> None:
    case = two_models()
    case.streams, case.events = streams, 2
    change(case)
    with pytest.raises(GraphError, match=fragment):
        validation.check(case)


def test_a_wait_may_not_rely_on_what_another_model_leaves() -> None:
    """A value wait satisfied only by the initial word, which another model rewrites, would
    depend on the execution order: check rejects it; with a write of its own first it is
    defined whatever ran before."""
    case = Case(streams=2, buffers=[X], words=[7], events=0, origins=[0, 1],
                ops=[ValueWrite(0, 0, 9), ValueWait(1, 0, 7)], plan=[])
    with pytest.raises(GraphError, match="another model writes"):
        validation.check(case)
    case.ops = [ValueWrite(0, 0, 9), ValueWrite(1, 0, 7), ValueWait(1, 0, 7)]
    validation.check(case)


def test_ops_of_different_models_never_race() -> None:
    """Two models writing one buffer are not a race (their executions queue on one stream);
    two unordered streams of one model are."""
    validation.check(two_models())
    racy = Case(streams=2, buffers=[X, S], words=[], events=1,
                ops=[Record(0, 0), Wait(1, 0),
                     Launch(0, "fill", {"out": 1, "n": 8, "value": 1}),
                     Launch(1, "fill", {"out": 1, "n": 8, "value": 2})], plan=[])
    with pytest.raises(GraphError, match="unordered"):
        validation.check(racy)


@pytest.mark.parametrize("op, fragment", [
    (Copy(0, 0, 0, "h2h"), "direction"),
    (Copy(0, 3, 0, "h2d"), "out of range"),
    (Copy(0, 0, 2, "d2h"), "out of range"),
    (Copy(0, 0, 0), "distinct"),
    (PageableCopy(0, 0, "d2d"), "direction"),
    (PageableCopy(1, 0, "h2d"), "not joined"),
])
def test_check_rejects_bad_copies(op, fragment: str) -> None:
    case = Case(streams=2, buffers=[X, S], words=[], events=0, hosts=[X, S],
                ops=[Launch(0, "fill", {"out": 1, "n": 8, "value": 1}), op], plan=[])
    with pytest.raises(GraphError, match=fragment):
        validation.check(case)


def test_a_task_step_cannot_target_a_rejected_copy() -> None:
    case = Case(streams=1, buffers=[X], words=[], events=0,
                ops=[PageableCopy(0, 0, "h2d"), Launch(0, "fill", {"out": 0, "n": 8,
                                                                  "value": 1})],
                plan=[Disable(0), Update(), Execute(), Sync()])
    with pytest.raises(GraphError, match="issues no task"):
        validation.check(case)


# -- the oracle --------------------------------------------------------------------------------


def test_memory_carries_from_one_model_to_the_next() -> None:
    """Model 1 adds onto what model 0 left, in plan order on one stream (EXE-01, EXE-02)."""
    obs = oracle.expected(two_models())
    doubled = [2 * x for x in X]
    assert buffer_after(obs, 2, 1) == [d + x for d, x in zip(doubled, X)]
    assert buffer_after(obs, 4, 1) == [d + 3 * x for d, x in zip(doubled, X)]


def test_a_wrong_memory_result_differs_from_the_oracle() -> None:
    """A runtime that gave each model its own copy of the buffers (or ran model 0's records
    for model 1) shows other memory, so the comparison names the first Sync's buffer."""
    case = two_models()
    exp = oracle.expected(case)
    # model 1 run on fresh buffers: accumulate onto the sentinel, not onto model 0's result
    separate = oracle_program.Program(case, model=1)
    separate.run()
    wrong = [Observation(o.phase, o.index, o.what, separate.memory.buffer(1))
             if o.key == ("sync", 2, "buffer 1") else o for o in exp]
    d = first_difference(exp, wrong)
    assert d is not None and d.expected.key == ("sync", 2, "buffer 1")
    # model 0's records run twice instead of model 0 then model 1
    mixed = oracle_program.Program(case, model=0)
    mixed.run()
    mixed.run()
    assert mixed.memory.buffer(1) != buffer_after(exp, 2, 1)


def test_an_update_changes_only_its_model() -> None:
    """SetParams on model 0's task needs model 0's Update; model 1 keeps executing its own
    records meanwhile, and model 0 answers 507011 until it is updated (SETP-02, UPD-05)."""
    case = two_models([SetKernel(0, {"x": 0, "y": 1, "n": 8, "a": 0, "b": 4}),
                       Execute(1, 1), Execute(1, 0), Sync(), Update(0), Execute(1, 0),
                       Sync()])
    obs = oracle.expected(case)
    steps = [o.value for o in obs if o.phase == "step"]
    assert steps == [0, [0], [507011], 0, 0, [0], 0]
    assert buffer_after(obs, 3, 1) == [-1 + x for x in X]
    assert buffer_after(obs, 6, 1) == [4] * 8
    keys = [o.what for o in obs if o.phase == "listing" and o.index == 4]
    assert keys == ["stream 0 ops", "seq ids"]


def test_listing_is_per_model() -> None:
    obs = oracle.expected(two_models())
    first = [(o.what, o.value) for o in obs if o.phase == "listing"]
    assert [w for w, _ in first] == [
        "stream 0 ops", "seq ids", "stream order", "short streams", "short tasks",
        "stream 1 ops", "model 1 seq ids", "model 1 stream order", "model 1 short streams",
        "model 1 short tasks"]
    assert first[0][1] == [0] and first[5][1] == [1]


def test_copies_of_every_kind_move_at_execution() -> None:
    """h2d reads the pinned buffer when the task runs (a host refill is seen by the next
    execution, CAP-19), d2h writes the pinned buffer, d2d moves device bytes."""
    case = Case(streams=1, buffers=[S, S], words=[], events=0, hosts=[X, S],
                ops=[Copy(0, 0, 0, "h2d"), Copy(0, 0, 1), Copy(0, 1, 1, "d2h")],
                plan=[Execute(), Sync(), HostFill(0, 42), Execute(), Sync()])
    obs = oracle.expected(case)
    hosts = {(o.index, o.what): o.value for o in obs if o.what.startswith("host")}
    assert hosts[(1, "host 0")] == X and hosts[(1, "host 1")] == X
    assert hosts[(4, "host 0")] == [42] * 8 and hosts[(4, "host 1")] == [42] * 8
    assert buffer_after(obs, 4, 0) == [42] * 8


def test_a_pageable_copy_is_rejected_and_moves_nothing() -> None:
    """MODE-14: 107000 during the capture, no task, the capture goes on and the program runs
    without it."""
    case = Case(streams=1, buffers=[X, S], words=[], events=0,
                ops=[Launch(0, "copy", {"src": 0, "dst": 1, "n": 8}),
                     PageableCopy(0, 1, "d2h"), PageableCopy(0, 0, "h2d")],
                plan=[Execute(), Sync()])
    obs = oracle.expected(case)
    assert obs[:3] == [Observation("capture", -1, "ops[1] rc", 107000),
                       Observation("capture", -1, "ops[2] rc", 107000),
                       Observation("capture", -1, "rc", 0)]
    assert buffer_after(obs, 1, 1) == X


def test_a_host_refill_during_an_execution_is_undefined() -> None:
    case = Case(streams=1, buffers=[S], words=[0], events=0, hosts=[X],
                ops=[ValueWait(0, 0, 1), Copy(0, 0, 0, "h2d")],
                plan=[Execute(), HostFill(0, 3), HostWrite(0, 1), Sync()])
    validation.check(case)
    with pytest.raises(oracle_state.UndefinedCase, match="races"):
        oracle.expected(case)


def test_a_blocked_model_holds_back_the_other_models_executions() -> None:
    """Executions of every model queue on one stream: model 1 queued behind a blocked
    model 0 is in flight too (SETP-12 refuses its SetParams) and runs after the release."""
    case = Case(streams=2, buffers=[X, S], words=[0], events=0, origins=[0, 1],
                ops=[ValueWait(0, 0, 1), Launch(0, "fill", {"out": 1, "n": 8, "value": 5}),
                     Launch(1, "accumulate", {"acc": 1, "x": 0, "n": 8})],
                plan=[Execute(1, 0), Execute(1, 1), Sync(30),
                      SetKernel(2, {"acc": 1, "x": 0, "n": 8}),
                      HostWrite(0, 1), Sync()])
    obs = oracle.expected(case)
    steps = [o.value for o in obs if o.phase == "step" and o.what == "rc"]
    assert steps == [[0], [0], 507046, 107040, 0, 0]
    assert buffer_after(obs, 5, 1) == [5 + x for x in X]
