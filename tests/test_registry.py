"""The clause registry: data integrity and level rules."""

from __future__ import annotations

import re

import pytest

from mdlri_conformance.conformance.framework import registry


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


# -- untestable.toml (reasoned clause ids) -----------------------------------------------------


def _write(tmp_path, text: str):
    p = tmp_path / "untestable.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_untestable_file_loads_and_names_known_ids() -> None:
    reasons = registry.untestable()
    assert reasons, "untestable.toml is empty"
    assert not registry.unknown(reasons)
    assert all(r and "\n" not in r for r in reasons.values())
    assert {"TG-16", "TG-17", "SEQ-09", "LIFE-07"} <= set(reasons)


def test_untestable_loader_reads_rows(tmp_path) -> None:
    p = _write(tmp_path, '[[reason]]\nid = "TG-16"\nreason = "capacity"\n'
                         '[[reason]]\nid = "SEQ-09"\nreason = " concurrency "\n')
    assert registry.load_untestable(p) == {"TG-16": "capacity", "SEQ-09": "concurrency"}


def test_untestable_empty_file_is_empty(tmp_path) -> None:
    assert registry.load_untestable(_write(tmp_path, "")) == {}


@pytest.mark.parametrize("text, fragment", [
    ('[[reason]]\nid = "TG-99"\nreason = "x"\n', "unknown clause id 'TG-99'"),
    ('[[reason]]\nreason = "x"\n', "unknown clause id None"),
    ('[[reason]]\nid = "TG-16"\n', "one non-empty line"),
    ('[[reason]]\nid = "TG-16"\nreason = "  "\n', "one non-empty line"),
    ('[[reason]]\nid = "TG-16"\nreason = """a\nb"""\n', "one non-empty line"),
    ('[[reason]]\nid = "TG-16"\nreason = "a"\n[[reason]]\nid = "TG-16"\nreason = "b"\n',
     "TG-16 listed twice"),
    ('[[reason]]\nid = "TG-16"\nreason = "a"\nwhy = "b"\n', "unexpected key(s) why"),
    ('[[reason]\n', "Expected ']]' at the end of an array declaration"),
])
def test_untestable_loader_rejects_bad_rows(tmp_path, text: str, fragment: str) -> None:
    with pytest.raises(registry.UntestableError, match=re.escape(fragment)):
        registry.load_untestable(_write(tmp_path, text))


def test_reasoned_and_cited_reports_the_overlap() -> None:
    some = next(iter(registry.untestable()))
    assert registry.reasoned_and_cited([some, "CAP-01"]) == [some]
    assert registry.reasoned_and_cited(["CAP-01"]) == []


def test_summary_counts_reasoned_ids_apart_from_the_gap() -> None:
    from mdlri_conformance.conformance.framework.verdicts.summary import (
        build_summary, format_table)
    reasons = registry.untestable()
    reasoned_id = next(iter(reasons))
    cited = {"CAP-01", reasoned_id}
    cov = build_summary([], cited, "fake")["coverage"]
    total = len(registry.clauses())
    assert cov["covered"] == 2
    assert cov["reasoned"] == len(reasons) - 1       # the cited one counts as covered
    assert cov["neither"] == total - 2 - (len(reasons) - 1)
    assert cov["reasoned_but_cited"] == [reasoned_id]
    assert "CAP-01" not in cov["uncovered"] and not set(reasons) & set(cov["uncovered"])
    assert len(cov["uncovered"]) == cov["neither"]
    tg = cov["groups"]["TG"]
    assert tg["covered"] + tg["reasoned"] + len(tg["uncovered"]) == tg["total"]
    text = "\n".join(format_table(build_summary([], cited, "fake")))
    assert f"reasoned {cov['reasoned']}" in text and "uncovered:" in text
    assert f"cited and also listed in untestable.toml: {reasoned_id}" in text


def test_every_catalog_id_is_cited_by_a_spec_or_reasoned() -> None:
    """Every catalog clause is accounted for, statically: each id appears in a spec's clause marker or untestable.toml."""
    from mdlri_conformance.conformance.framework.items import SPEC_DIR
    cited: set[str] = set()
    for f in SPEC_DIR.glob("*.py"):
        for marker in re.finditer(r"clause\(([^)]*)\)", f.read_text(encoding="utf-8")):
            cited.update(re.findall(r'"([A-Z]+-\d+)"', marker.group(1)))
    gap = [i for i in registry.clauses() if i not in cited and i not in registry.untestable()]
    assert gap == []
