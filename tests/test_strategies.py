"""Strategies: every generated case stays inside defined behaviour and round-trips as JSON."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mdlri_conformance.conformance.engine import graphs, oracle, strategies, validation
from mdlri_conformance.conformance.engine.graphs import Launch
from mdlri_conformance.conformance.engine.steps import Disable, Execute, HostFill, Sync, Update


@settings(max_examples=200)
@given(strategies.positive_cases())
def test_positive_cases_pass_check(case: graphs.Case) -> None:
    validation.check(case)
    assert 1 <= case.streams <= graphs.MAX_STREAMS
    assert any(isinstance(op, Launch) for op in case.ops)
    assert case.plan[-2:] == [Execute(case.plan[-2].times), Sync(strategies.SYNC_MS)]


@settings(max_examples=200)
@given(strategies.positive_cases())
def test_plans_sync_after_execute_and_update_before_execute(case: graphs.Case) -> None:
    pending = False
    for prev, step in zip(case.plan, case.plan[1:]):
        if isinstance(prev, Execute):
            assert isinstance(step, Sync)
    for step in case.plan:
        if isinstance(step, Update):
            pending = False
        elif isinstance(step, Execute):
            assert not pending
        elif not isinstance(step, (Sync, HostFill)):  # a host store needs no Update
            pending = True


@settings(max_examples=100)
@given(strategies.negative_cases())
def test_negative_cases_pass_check_and_the_oracle_defines_them(case: graphs.Case) -> None:
    validation.check(case)
    oracle.expected(case)  # no UndefinedCase


@settings(max_examples=200)
@given(st.one_of(strategies.positive_cases(), strategies.negative_cases()))
def test_json_round_trip(case: graphs.Case) -> None:
    again = graphs.from_json(case.to_json())
    assert again.to_dict() == case.to_dict()
    assert again == case


@settings(max_examples=100)
@given(strategies.positive_cases())
def test_oracle_defines_positive_cases(case: graphs.Case) -> None:
    obs = oracle.expected(case)
    assert obs[0].value == 0
    assert all(o.value == 0 or o.value == [0] * len(o.value)
               for o in obs if o.phase == "step")


def test_disabled_ops_are_never_targeted_again() -> None:
    @settings(max_examples=200)
    @given(st.one_of(strategies.positive_cases(), strategies.negative_cases()))
    def run(case: graphs.Case) -> None:
        gone: set[int] = set()
        pending: set[int] = set()
        for step in case.plan:
            op = getattr(step, "op", None)
            if op is not None:
                assert op not in gone
            if isinstance(step, Disable):
                pending.add(op)
            if isinstance(step, Update):
                gone |= pending
                pending.clear()
    run()
