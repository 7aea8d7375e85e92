"""The packed draws of the generator (conformance.engine.strategies): every field of every
item kind and plan step is reachable, all-zero draws decode to the simplest item (what
shrinking moves toward), no part is wider than the range Hypothesis draws about uniformly,
and a generated case costs far fewer choices than one draw per field did."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.control import current_build_context

from mdlri_conformance.conformance.engine import graphs, strategies
from mdlri_conformance.conformance.engine.strategies import _item_kinds
from mdlri_conformance.conformance.engine.strategies_plans import draw_rounds, mod_item


def _values(parts: Any) -> list[int]:
    """Every value the parts (strategy, radix) of one draw sequence assemble to."""
    out = []
    for digits in itertools.product(*(range(r) for _, r in parts)):
        value, scale = 0, 1
        for v, (_, r) in zip(digits, parts):
            value += v * scale
            scale *= r
        out.append(value)
    return out


def _decode_all(kind: str) -> list[tuple[Any, ...]]:
    """Every item of ``kind`` a head with stream s and parent p and any parts decode to."""
    items = _item_kinds(strategies.KERNELS, True, True)
    k = items.kinds.index(kind)
    decoder, parts = items.parts[k]
    return [decoder(items.kernels, 0, 0, strategies._Digits(v)) for v in _values(parts)]


def test_every_field_value_of_an_item_is_reachable() -> None:
    launches = _decode_all("launch")
    assert {i[1] for i in launches} == set(strategies.KERNELS)
    assert {i[6] for i in launches} == set(strategies.NUM_BLOCKS)
    assert {i[4] for i in launches} == set(itertools.product(range(4), repeat=3))
    assert {i[5] for i in launches} == set(itertools.product(range(-3, 4), range(-9, 10)))
    writes = _decode_all("value_write")
    assert {i[4] for i in writes} == set(strategies.WRITE_VALUES) and {i[3] for i in writes} \
        == set(range(4))
    waits = _decode_all("value_wait")
    assert {i[4] for i in waits} == set(strategies.WAIT_FLAGS)
    assert {i[5] for i in waits} == {*strategies.NEAR_DISTANCES, strategies.FAR}
    memsets = _decode_all("memset")
    nbytes = 4 * strategies.N
    assert None in {i[5] for i in memsets}
    assert {i[5] for i in memsets if i[5]} == set(itertools.product(range(nbytes),
                                                                     range(1, nbytes + 1)))
    assert {i[5] for i in _decode_all("copy")} == set(graphs.COPY_KINDS)
    assert {i[2] for i in _decode_all("event_edge")} == set(range(graphs.MAX_STREAMS))


def test_the_first_item_draws_its_stream_alone() -> None:
    """The first item's head is its stream alone (no parent: it forks from the origin
    whatever it is), then a launch's parts; all zero is the simplest launch on the origin,
    and every drawn stream is reachable."""
    items = _item_kinds(strategies.KERNELS, True, True)

    def first(values: list[int]) -> tuple[Any, ...]:
        it = iter(values)
        return items.draw_first(lambda _strategy: next(it, 0))

    assert first([0]) == ("launch", "fill", 0, 0, (0, 0, 0), (0, 0), 1)
    assert {first([s])[2] for s in range(items.streams)} == set(range(items.streams))
    assert {first([0, v])[1] for v in range(items.parts[0][1][0][1])} == \
        set(strategies.KERNELS)


def test_zero_draws_decode_to_the_simplest_item() -> None:
    assert _decode_all("launch")[0] == ("launch", "fill", 0, 0, (0, 0, 0), (0, 0), 1)
    assert _decode_all("memset")[0] == ("memset", 0, 0, 0, 0, None)
    assert mod_item((0, 0)) == (0, 0, 0, 0, 0)
    assert {mod_item((a, b))[4] for a in range(40) for b in range(228)} == set(range(-9, 10))
    assert {mod_item((a, 0))[:2] for a in range(40)} == set(itertools.product(range(5),
                                                                             range(8)))


def test_no_part_is_wider_than_the_uniform_range() -> None:
    for values, memsets in ((True, True), (False, False)):
        items = _item_kinds(strategies.KERNELS, values, memsets)
        for _, parts in items.parts:
            assert all(r <= strategies.MAX_PART for _, r in parts)


def test_a_case_costs_under_two_thirds_of_the_choices_of_one_draw_per_field() -> None:
    made: list[int] = []

    @settings(max_examples=150, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(strategies.positive_cases())
    def one(case: graphs.Case) -> None:
        made.append(len(current_build_context().data.choices))

    one()
    # one draw per field made 47 choices per case on average over these examples
    assert sum(made) / len(made) < 47 / 1.5, f"{sum(made) / len(made):.1f} choices per case"


def test_plan_rounds_record_no_forced_choice_for_the_first_round() -> None:
    """1..3 rounds, every count reached, and the only forced choice is the list's stop at
    its maximum (``st.lists(min_size=1)`` would force one for the first round)."""
    counts: set[int] = set()

    @st.composite
    def rounds(draw: st.DrawFn) -> list[int]:
        return draw_rounds(draw, st.integers(0, 3), 3)

    @settings(max_examples=100, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(rounds())
    def one(drawn: list[int]) -> None:
        forced = sum(node.was_forced for node in current_build_context().data.nodes)
        assert 1 <= len(drawn) <= 3 and forced == (len(drawn) == 3), (drawn, forced)
        counts.add(len(drawn))

    one()
    assert counts == {1, 2, 3}
