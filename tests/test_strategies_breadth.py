"""The blocked, capture-end and emptied-stream strategies stay inside what the oracle
defines, and their value-wait helpers give the conditions they promise."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mdlri_conformance.conformance.engine import case_facts, graphs, oracle, strategies
from mdlri_conformance.conformance.engine.graphs import EndOnSide, HostWrite, Update
from mdlri_conformance.conformance.engine.strategies_blocked import (blocked_cases,
                                                                     blocking_values)
from mdlri_conformance.conformance.engine.strategies_capture import (emptied_stream,
                                                                     end_on_side, stray_wait,
                                                                     unjoined)

words = st.integers(0, graphs.WORD_MASK)


@given(st.sampled_from(strategies.WAIT_FLAGS), words, strategies.distances,
       strategies.distances)
def test_blocking_values_block_then_release(flag: int, want: int, near: int, far: int) -> None:
    value, blocking, releasing = blocking_values(flag, want, near, far)
    assert not graphs.wait_holds(blocking, value, flag)
    assert graphs.wait_holds(releasing, value, flag)


@given(words, st.sampled_from(strategies.WAIT_FLAGS), strategies.distances)
def test_satisfied_value_holds(have: int, flag: int, distance: int) -> None:
    value, used = strategies.satisfied_value(have, flag, distance)
    assert graphs.wait_holds(have, value, used)


@settings(max_examples=60)
@given(blocked_cases())
def test_blocked_cases_block_first_and_are_defined(case: graphs.Case) -> None:
    graphs.check(case)
    assert case_facts.may_block(case)
    obs = oracle.expected(case)
    assert ("step", 0, "rc") in [o.key for o in obs]
    assert any(isinstance(s, HostWrite) for s in case.plan)
    assert graphs.from_json(case.to_json()) == case


@settings(max_examples=60)
@given(stray_wait())
def test_stray_wait_cases_are_defined(case: graphs.Case) -> None:
    """XS-14: the stray wait is on a joined stream, on an event not recorded before it; the
    oracle expects 0 for it and the case survives a JSON round trip."""
    graphs.check(case)
    (at,) = [i for i, op in enumerate(case.ops) if isinstance(op, graphs.StrayWait)]
    stray = case.ops[at]
    assert not any(isinstance(op, graphs.Record) and op.event == stray.event
                   for op in case.ops[:at])
    obs = {o.what: o.value for o in oracle.expected(case) if o.phase == "capture"}
    assert obs[f"ops[{at}] rc"] == 0 and obs["rc"] == 0
    assert graphs.from_json(case.to_json()) == case


@settings(max_examples=60)
@given(st.one_of(end_on_side(), unjoined()))
def test_capture_end_cases_are_defined(case: graphs.Case) -> None:
    graphs.check(case)
    obs = oracle.expected(case)
    if any(isinstance(op, EndOnSide) for op in case.ops):
        assert obs[0].value == 107036
    else:
        assert graphs.unjoined_streams(case) and obs[0].value == 107025 and not case.plan


@settings(max_examples=60)
@given(emptied_stream())
def test_emptied_stream_ends_empty(case: graphs.Case) -> None:
    graphs.check(case)
    obs = oracle.expected(case)
    last_update = max(i for i, s in enumerate(case.plan) if isinstance(s, Update))
    assert ("listing", last_update, "stream 0 emptied") in [o.key for o in obs]


@settings(max_examples=100)
@given(strategies.positive_cases())
def test_positive_waits_are_satisfied_with_any_flag(case: graphs.Case) -> None:
    """Waits on words the program writes never block (graphs.check)."""
    graphs.check(case)
    assert not case_facts.may_block(case)
