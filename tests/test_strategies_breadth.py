"""The blocked, capture-end and emptied-stream strategies stay inside what the oracle
defines, and their value-wait helpers give the conditions they promise."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mdlri_conformance.conformance.engine import (case_facts, graphs, oracle, ordering,
                                                  strategies, validation)
from mdlri_conformance.conformance.engine.graphs import EndOnSide
from mdlri_conformance.conformance.engine.steps import Execute, HostWrite, Sync, Update
from mdlri_conformance.conformance.engine.strategies_blocked import (blocked_cases,
                                                                     blocking_values)
from mdlri_conformance.conformance.engine.strategies_capture import (emptied_stream,
                                                                     end_on_side,
                                                                     record_again, stray_wait,
                                                                     unjoined)
from mdlri_conformance.conformance.engine.strategies_cond import switch_values
from mdlri_conformance.conformance.engine.strategies_memsets import memset_span_cases

words = st.integers(0, graphs.WORD_MASK)


@given(st.sampled_from(strategies.WAIT_FLAGS), words, strategies.distances,
       strategies.distances)
def test_blocking_values_block_then_release(flag: int, want: int, near: int, far: int) -> None:
    value, blocking, releasing = blocking_values(flag, want, near, far)
    assert not graphs.wait_holds(blocking, value, flag)
    assert graphs.wait_holds(releasing, value, flag)
    if flag == 0:  # the runtime's signed comparison says the same (abi.md §3.5)
        assert graphs.geq_readings_agree(blocking, value)
        assert graphs.geq_readings_agree(releasing, value)


@given(words, st.sampled_from(strategies.WAIT_FLAGS), strategies.distances)
def test_satisfied_value_holds(have: int, flag: int, distance: int) -> None:
    value, used = strategies.satisfied_value(have, flag, distance)
    assert graphs.wait_holds(have, value, used)
    assert used != 0 or graphs.geq_readings_agree(have, value)


def test_the_two_readings_of_geq_differ_only_2_63_apart() -> None:
    """abi.md §3.5: the docs' signed difference and the runtime's signed comparison."""
    assert graphs.geq_readings_agree(2**63 + 1, 1) and graphs.geq_readings_agree(5, 3)
    assert not graphs.geq_readings_agree(2**63, 2**63 - 1)


@settings(max_examples=60)
@given(blocked_cases())
def test_blocked_cases_block_first_and_are_defined(case: graphs.Case) -> None:
    validation.check(case)
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
    validation.check(case)
    (at,) = [i for i, op in enumerate(case.ops) if isinstance(op, graphs.StrayWait)]
    stray = case.ops[at]
    assert not any(isinstance(op, graphs.Record) and op.event == stray.event
                   for op in case.ops[:at])
    obs = {o.what: o.value for o in oracle.expected(case) if o.phase == "capture"}
    assert obs[f"ops[{at}] rc"] == 0 and obs["rc"] == 0
    assert graphs.from_json(case.to_json()) == case


@settings(max_examples=60)
@given(st.one_of(end_on_side(), unjoined(), record_again()))
def test_capture_end_cases_are_defined(case: graphs.Case) -> None:
    validation.check(case)
    obs = oracle.expected(case)
    if any(isinstance(op, EndOnSide) for op in case.ops):
        assert obs[0].value == 107036
    else:
        assert ordering.unjoined_streams(case) and obs[0].value == 107025 and not case.plan


@settings(max_examples=60)
@given(record_again())
def test_record_again_leaves_the_side_stream_unjoined(case: graphs.Case) -> None:
    """XS-15: the side stream's last task records an event waited on before it (its fork
    event, or the join's), and no wait follows: it is unjoined (XS-13), the capture fails
    with 107025."""
    last = case.ops[-1]
    assert isinstance(last, graphs.Record) and last.stream != 0
    assert any(isinstance(op, graphs.Wait) and op.event == last.event for op in case.ops[:-1])
    assert ordering.unjoined_streams(case) == [last.stream]
    assert graphs.from_json(case.to_json()) == case


def test_a_record_a_later_wait_takes_is_joined() -> None:
    """The XS-13 reuse of the fork event for the join is a join; recording it once more is
    not (XS-15)."""
    ops = [graphs.Record(0, 0), graphs.Wait(1, 0), graphs.Record(1, 0), graphs.Wait(0, 0)]
    case = graphs.Case(streams=2, buffers=[], words=[], events=1, ops=list(ops), plan=[])
    assert ordering.unjoined_streams(case) == []
    case.ops.append(graphs.Record(1, 0))
    assert ordering.unjoined_streams(case) == [1]


@settings(max_examples=60)
@given(memset_span_cases())
def test_memset_span_cases_hold_spans_and_are_defined(case: graphs.Case) -> None:
    """RT-45: the appended memsets cover 1..32 bytes at any offset inside their buffer, and
    the oracle sets exactly those bytes."""
    validation.check(case)
    spans = [op for op in case.ops if isinstance(op, graphs.Memset) and op.count is not None]
    assert spans and all(1 <= m.count and m.offset + m.count <= 32 for m in spans)
    oracle.expected(case)
    assert graphs.from_json(case.to_json()) == case


def test_switch_values_reach_past_every_branch_count() -> None:
    """COND-13: each drawn branch count gets its in-range values and three past it."""
    for size in range(graphs.COND_SIZES["switch"][0], graphs.COND_SIZES["switch"][1] + 1):
        values = switch_values(size)
        assert set(range(size)) < set(values)
        assert sum(v >= size for v in values) == 3


def test_a_memset_span_sets_only_its_bytes() -> None:
    """RT-45: a 3-byte memset at byte 1 of an int32 buffer changes bytes 1..3 only."""
    case = graphs.Case(streams=1, buffers=[[-1] * 8], words=[], events=0,
                       ops=[graphs.Memset(0, 0, 0, 1, 3)],
                       plan=[Execute(), Sync()])
    validation.check(case)
    got = [o.value for o in oracle.expected(case) if o.what == "buffer 0"]
    assert got == [[0xFF] + [-1] * 7]


@settings(max_examples=60)
@given(emptied_stream())
def test_emptied_stream_ends_empty(case: graphs.Case) -> None:
    validation.check(case)
    obs = oracle.expected(case)
    last_update = max(i for i, s in enumerate(case.plan) if isinstance(s, Update))
    assert ("listing", last_update, "stream 0 emptied") in [o.key for o in obs]


@settings(max_examples=100)
@given(strategies.positive_cases())
def test_positive_waits_are_satisfied_with_any_flag(case: graphs.Case) -> None:
    """Waits on words the program writes never block (validation.check)."""
    validation.check(case)
    assert not case_facts.may_block(case)
