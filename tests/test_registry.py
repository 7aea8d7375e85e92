"""The clause registry: data integrity and level rules."""

from __future__ import annotations

import re

import pytest

from conformance import registry


def test_catalog_ids_are_unique_and_well_formed() -> None:
    ids = list(registry.clauses())
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[A-Z]+-\d{2}", i) for i in ids), ids
    assert len(ids) >= 250


def test_every_group_has_an_area_and_every_level_is_known() -> None:
    for c in registry.clauses().values():
        assert c.group in registry.GROUP_AREA, c.id
        assert c.level in registry.LEVELS, c.id


@pytest.mark.parametrize("cid, level", [
    ("CAP-01", "documented"),        # DOC+IMPL
    ("LIST-05", "implementation"),   # IMPL only
    ("MODE-12", "implementation"),   # DISAGREE: the statement is the code's behaviour
    ("Q-10", "undefined"),
])
def test_levels_follow_the_source(cid: str, level: str) -> None:
    assert registry.get(cid).level == level


def test_disagreements_are_flagged() -> None:
    flagged = {c.id for c in registry.clauses().values() if c.disagree}
    assert {"MODE-12", "MODE-13", "CAP-08", "SETP-06", "NAME-03", "ERR-33"} <= flagged


def test_spec_level_is_the_strictest_cited() -> None:
    assert registry.level_of(["LIST-05", "CAP-01"]) == "documented"
    assert registry.level_of(["LIST-05", "Q-10"]) == "implementation"
    assert registry.level_of(["Q-10"]) == "undefined"
    with pytest.raises(ValueError):
        registry.level_of([])


def test_unknown_ids_are_reported() -> None:
    assert registry.unknown(["CAP-01", "CAP-99", "XYZ-1"]) == ["CAP-99", "XYZ-1"]
