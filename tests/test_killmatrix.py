"""The kill matrix on a small subset (issue 6): two faults, the listing specs only."""

from __future__ import annotations

import json
from pathlib import Path

from mdlri_conformance.conformance import killmatrix


def test_matrix_on_two_faults(tmp_path: Path) -> None:
    out = tmp_path / "km"
    matrix = killmatrix.run_matrix(["no-107039", "getstreams-origin-first"], out, jobs=2,
                                   extra=["-k", "test_listing"], progress=lambda _m: None)
    on_disk = json.loads((out / "kill_matrix.json").read_text())
    assert on_disk["summary"] == matrix["summary"]
    s = matrix["summary"]
    assert s["faults"] == 2 and s["killed"] == 2 and s["kill_rate"] == 1.0
    assert s["median_time_to_kill_s"] is not None and s["max_time_to_kill_s"] >= \
        s["median_time_to_kill_s"]
    by = {e["fault"]: e for e in matrix["faults"]}
    for e in by.values():
        assert e["killers"] and all(k["spec"].startswith("conformance/specs/test_listing.py")
                                    for k in e["killers"])
        assert e["time_to_kill_s"] <= sum(k["duration_s"] for k in e["killers"]) + 60
        assert e["examples"] == 0  # hand-written specs killed them first
    assert any("LIST-05" in k["clauses"] for k in by["no-107039"]["killers"])
    assert any("LIST-02" in k["clauses"] for k in by["getstreams-origin-first"]["killers"])
    frag = (out / "kill_matrix.html").read_text()
    assert "2 of 2 faults killed" in frag and "getstreams-origin-first" in frag
    assert "Fault kill matrix" in (out / "index.html").read_text()
    assert any("killed" in line for line in killmatrix.format_table(matrix))


def test_analyse_counts_only_specs_that_passed_in_the_baseline() -> None:
    rows = [{"nodeid": "a", "outcome": "PASS", "duration_s": 1.0},
            {"nodeid": "b", "outcome": "FAIL", "duration_s": 2.0, "clauses": ["X-1"]},
            {"nodeid": "c", "outcome": "FAIL", "duration_s": 1.0},
            {"nodeid": "d", "outcome": "CHANGED", "duration_s": 4.0,
             "hypothesis": {"failed_at_example": 7, "first_failure_s": 0.5, "shrunk_tasks": 3}},
            {"nodeid": "new", "outcome": "FAIL", "duration_s": 1.0}]
    base = {"a": "PASS", "b": "PASS", "c": "FAIL", "d": "PASS"}
    e = killmatrix.analyse("no-107039", rows, base, 10.0, 1)
    assert [k["spec"] for k in e["killers"]] == ["b", "d"]
    assert e["time_to_kill_s"] == 3.0 and e["examples"] == 0 and e["shrunk_tasks"] == 3
    e2 = killmatrix.analyse("no-107039", rows[2:], base, 10.0, 1)
    assert e2["time_to_kill_s"] == 1.5 and e2["examples"] == 7  # 1.0 before + 0.5 into d
    s = killmatrix.summarise([e, e2, killmatrix.analyse("x", [], base, 1.0, 0)])
    assert s["killed"] == 2 and s["survivors"] == ["x"] and s["max_shrunk_tasks"] == 3
