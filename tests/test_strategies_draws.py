"""The packed draws of the generator (conformance.engine.strategies): every field of every
item kind and plan step is reachable, all-zero draws decode to the simplest item (what
shrinking moves toward), no part is wider than the range Hypothesis draws about uniformly,
and a generated case costs far fewer choices than one draw per field did."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis.control import current_build_context

from mdlri_conformance.conformance.engine import graphs, strategies
from mdlri_conformance.conformance.engine.strategies import _item_kinds
from mdlri_conformance.conformance.engine.strategies_plans import mod_item


def _decode_all(kind: str) -> list[tuple[Any, ...]]:
    """Every item of ``kind`` a head with stream s and parent p and any parts decode to."""
    items = _item_kinds(strategies.KERNELS, True, True)
    k = items.kinds.index(kind)
    decoder, parts = items.parts[k]
    out = []
    for values in itertools.product(*(range(r) for _, r in parts)):
        value, scale = 0, 1
        for v, (_, r) in zip(values, parts):
            value += v * scale
            scale *= r
        out.append(decoder(items.kernels, 0, 0, strategies._Digits(value)))
    return out


def test_every_field_value_of_an_item_is_reachable() -> None:
    launches = _decode_all("launch")
    assert {i[1] for i in launches} == set(strategies.KERNELS)
    assert {i[6] for i in launches} == set(strategies.NUM_BLOCKS)
    assert {i[4] for i in launches} == set(itertools.product(range(4), repeat=3))
    assert {i[5] for i in launches} == set(itertools.product(range(-3, 4), range(-9, 10)))
    writes = _decode_all("value_write")
    assert {i[4] for i in writes} == set(strategies.WRITE_VALUES) and {i[3] for i in writes} \
        == set(range(4))
    assert {i[4] for i in _decode_all("value_wait")} == set(strategies.WAIT_FLAGS)
    memsets = _decode_all("memset")
    nbytes = 4 * strategies.N
    assert None in {i[5] for i in memsets}
    assert {i[5] for i in memsets if i[5]} == set(itertools.product(range(nbytes),
                                                                     range(1, nbytes + 1)))
    assert {i[5] for i in _decode_all("copy")} == set(graphs.COPY_KINDS)
    assert {i[2] for i in _decode_all("event_edge")} == set(range(graphs.MAX_STREAMS))


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
