"""The several-models and copy strategies stay inside what the oracle defines, and reach
what they promise: shared buffers, interleaved captures, every copy direction."""

from __future__ import annotations

from hypothesis import Phase, find, given, settings

from mdlri_conformance.conformance.engine import graphs, oracle, validation
from mdlri_conformance.conformance.engine.graphs import Case, Copy
from mdlri_conformance.conformance.engine.steps import Execute, HostFill, SetCond, Sync
from mdlri_conformance.conformance.engine.strategies_cond import shared_models_cond
from mdlri_conformance.conformance.engine.strategies_copies import copy_cases, pageable_copies
from mdlri_conformance.conformance.engine.strategies_models import merge, shared_models


#: find without shrinking (only that an example exists matters)
_FIND = settings(phases=[Phase.generate], max_examples=500, database=None)


def _shared_refs(case: Case) -> set[tuple[str, int]]:
    """The buffers/words/host buffers one model writes and another touches."""
    models = graphs.op_models(case)
    touched: dict[tuple[str, int], set[int]] = {}
    written: dict[tuple[str, int], set[int]] = {}
    for i, op in enumerate(case.ops):
        reads, writes = graphs.op_footprint(op)
        for ref in reads | writes:
            touched.setdefault(ref, set()).add(models[i])
        for ref in writes:
            written.setdefault(ref, set()).add(models[i])
    return {ref for ref, ms in written.items() if len(touched[ref]) > 1}


def test_merge_keeps_each_part_in_order() -> None:
    parts = [["a0", "a1"], ["b0"], ["c0", "c1"]]
    assert merge(parts, []) == ["a0", "a1", "b0", "c0", "c1"]
    assert merge(parts, [2, 1, 0, 2, 0]) == ["c0", "b0", "a0", "c1", "a1"]
    assert merge(parts, [1, 1, 9, 1, 1]) == ["b0", "a0", "a1", "c0", "c1"]


@settings(max_examples=150)
@given(shared_models())
def test_shared_models_are_defined_and_run_every_model(case: Case) -> None:
    validation.check(case)
    assert 2 <= case.models <= graphs.MAX_MODELS
    assert all(len(graphs.model_streams(case, m)) <= 2 for m in range(case.models))
    assert {s.model for s in case.plan if isinstance(s, Execute)} == set(range(case.models))
    assert isinstance(case.plan[-1], Sync)
    assert graphs.from_json(case.to_json()) == case
    obs = oracle.expected(case)
    assert obs[0].value == 0
    assert all(o.value == 0 or o.value == [0] * len(o.value)
               for o in obs if o.phase == "step")


def test_shared_models_share_memory_and_interleave_captures() -> None:
    def interleaved(case: Case) -> bool:
        models = graphs.op_models(case)
        return models != sorted(models)
    find(shared_models(), lambda c: bool(_shared_refs(c)) and interleaved(c), settings=_FIND)
    find(shared_models(), lambda c: bool(_shared_refs(c)) and not interleaved(c)
         and c.models == 3, settings=_FIND)


@settings(max_examples=100)
@given(copy_cases())
def test_copy_cases_hold_every_direction_and_refill_the_source(case: Case) -> None:
    validation.check(case)
    directions = {op.direction for op in case.ops if isinstance(op, Copy)}
    assert {"h2d", "d2h"} <= directions
    fill = next(s for s in reversed(case.plan) if isinstance(s, HostFill))
    assert any(isinstance(op, Copy) and op.direction == "h2d" and op.src == fill.host
               for op in case.ops)
    oracle.expected(case)
    assert graphs.from_json(case.to_json()) == case


def test_copy_strategies_reach_device_to_device_copies_too() -> None:
    find(copy_cases(), lambda c: any(isinstance(op, Copy) and op.direction == "d2d"
                                     for op in c.ops), settings=_FIND)


@settings(max_examples=100)
@given(pageable_copies())
def test_pageable_copies_are_defined(case: Case) -> None:
    validation.check(case)
    obs = oracle.expected(case)
    rejected = [o for o in obs if o.phase == "capture" and o.what.endswith("] rc")]
    assert 1 <= len(rejected) <= 2 and all(o.value == 107000 for o in rejected)
    assert graphs.from_json(case.to_json()) == case


@settings(max_examples=40, deadline=None)
@given(shared_models_cond())
def test_shared_models_cond_are_defined(case: Case) -> None:
    """Each chosen model ends with its conditional task (nothing of its own model after it),
    the drawn plan's op indices still name the ops they named, and the rounds after it set
    a value then execute (COND-04, COND-11)."""
    validation.check(case)
    oracle.expected(case)
    sm = graphs.stream_models(case)
    conds = [i for i, op in enumerate(case.ops) if isinstance(op, graphs.Cond)]
    assert conds
    for i in conds:
        m = sm[case.ops[i].stream]
        assert not any(sm[op.stream] == m for op in case.ops[i + 1:])
    for k, step in enumerate(case.plan):
        if isinstance(step, SetCond):
            assert step.op in conds and isinstance(case.plan[k + 1], Execute)
        elif isinstance(getattr(step, "op", None), int):
            assert not isinstance(case.ops[step.op], graphs.Cond)
    assert graphs.from_json(case.to_json()) == case


def test_shared_models_cond_reach_two_conditional_models() -> None:
    """The strategy reaches a case where two models each carry a conditional task."""
    found = find(shared_models_cond(),
                 lambda c: len({graphs.stream_models(c)[op.stream] for op in c.ops
                                if isinstance(op, graphs.Cond)}) >= 2,
                 settings=settings(database=None, max_examples=500,
                                   phases=[Phase.generate]))
    assert sum(isinstance(op, graphs.Cond) for op in found.ops) >= 2
