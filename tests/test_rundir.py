"""Run directories: one run each, start and end records, the collected list, pruning, and no
folder left behind by a run that collected no spec."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mdlri_conformance.conformance.framework import rundir
from mdlri_conformance.conformance.framework.verdicts import verdict
from mdlri_conformance.conformance.framework.verdicts.summary import build_summary

ROOT = Path(__file__).resolve().parents[1]


def test_claim_refuses_a_directory_holding_a_run(tmp_path: Path) -> None:
    rundir.claim(tmp_path / "a")
    rundir.start(tmp_path / "a", "sim", ["x"])
    with pytest.raises(rundir.RunDirError, match="already holds a run"):
        rundir.claim(tmp_path / "a")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "results.jsonl").write_text("")
    with pytest.raises(rundir.RunDirError, match="already holds a run"):
        rundir.claim(tmp_path / "b")


def test_a_run_without_its_end_record_was_killed(tmp_path: Path) -> None:
    assert rundir.ended(tmp_path) == "unknown"
    rundir.start(tmp_path, "sim", [])
    assert rundir.ended(tmp_path) == "killed"
    rundir.finish(tmp_path, "interrupted", 2)
    assert rundir.ended(tmp_path) == "interrupted"
    assert rundir.read_meta(tmp_path)["exitstatus"] == 2


def test_completeness_names_the_specs_that_never_ran() -> None:
    rows = [{"nodeid": "a", "area": "x", "outcome": "PASS", "clauses": ["CAP-01"]}]
    s = build_summary(rows, ["CAP-01"], "sim", collected=["a", "b", "c"], ended="killed")
    assert s["completeness"]["never_ran"] == ["b", "c"]
    assert s["verdict"]["verdict"] == verdict.INCOMPLETE and s["verdict"]["exit_code"] == 4
    assert "2 of 3 collected spec(s) never ran" in s["verdict"]["why"]
    done = build_summary(rows, ["CAP-01"], "sim", collected=["a"], ended="complete")
    assert done["verdict"]["verdict"] == verdict.PASS and done["completeness"]["complete"]


def test_nothing_exercised_is_nothing_tested_and_a_failure_wins() -> None:
    unsup = [{"nodeid": n, "area": "x", "outcome": "UNSUPPORTED", "clauses": ["CAP-01"],
              "message": "UNSUPPORTED: no device"} for n in "ab"]
    s = build_summary(unsup, [], "sim", collected=["a", "b"])
    assert s["verdict"]["verdict"] == verdict.NOTHING_TESTED
    assert s["verdict"]["why"] == "every spec (2) was UNSUPPORTED: no device"
    assert s["unsupported"] == [{"reason": "no device", "count": 2, "example": "a"}]
    failing = unsup + [{"nodeid": "c", "area": "x", "outcome": "FAIL", "clauses": ["CAP-01"]}]
    s = build_summary(failing, [], "sim", collected=["a", "b", "c", "d"], ended="interrupted")
    assert s["verdict"]["verdict"] == verdict.FAIL and "incomplete" in s["verdict"]["why"]


def test_leaks_none_and_not_checked_differ() -> None:
    row = {"nodeid": "a", "area": "x", "outcome": "PASS", "clauses": ["CAP-01"]}
    assert build_summary([row], [], "sim")["leaking_specs"] is None
    clean = build_summary([dict(row, leaks={})], [], "sim")
    assert clean["leaking_specs"] == 0 and clean["leaks"]["checked_specs"] == 1


def test_prune_keeps_the_newest_runs(tmp_path: Path) -> None:
    runs = []
    for i in range(4):
        d = tmp_path / f"run{i}"
        d.mkdir()
        rundir.start(d, "sim", [])
        os.utime(d / rundir.RUN_FILE, (time.time() + i, time.time() + i))
        runs.append(d)
    (tmp_path / "not-a-run").mkdir()
    removed = rundir.prune(tmp_path, 2, current=runs[3])
    assert sorted(p.name for p in removed) == ["run0", "run1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-a-run", "run2", "run3"]


def test_cli_keep_runs_removes_older_runs(tmp_path: Path) -> None:
    old = tmp_path / "old"
    old.mkdir()
    rundir.start(old, "sim", [])
    os.utime(old / rundir.RUN_FILE, (time.time() - 60, time.time() - 60))
    res = subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", "run", "--report-dir",
                          str(tmp_path / "new"), "--keep-runs", "1", "-k",
                          "test_capture and begin"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr
    assert not old.exists() and f"removed old run {old}" in res.stdout
    assert rundir.ended(tmp_path / "new") == "complete"
    collected = rundir.read_collected(tmp_path / "new")
    rows = (tmp_path / "new" / "results.jsonl").read_text().splitlines()
    assert collected and sorted(json.loads(r)["nodeid"] for r in rows) == collected
    assert not (tmp_path / "new" / "allure-results").exists()  # only with --allure


def test_a_run_without_specs_leaves_no_folder(tmp_path: Path) -> None:
    """A plain pytest run of the project's own tests (no spec collected) writes no report."""
    out = tmp_path / "rd"
    res = subprocess.run([sys.executable, "-m", "pytest", "tests/test_registry.py", "-q",
                          "-p", "no:randomly", "-p", "no:cacheprovider",
                          f"--report-dir={out}"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stdout[-2000:]
    assert not out.exists()
