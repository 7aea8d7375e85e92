"""``mdlri-conformance merge`` (conformance.merge): the shards of a run give the unsharded
run's counts and gate; a missing, repeated or partial shard is INCOMPLETE (exit 4); input that
is not the shards of one run is one line, exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mdlri_conformance.conformance import cli

CLI = [sys.executable, "-m", "mdlri_conformance.conformance.cli"]


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _rows(run: Path) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in (run / "results.jsonl").read_text().splitlines() if ln]


_K = "capture or test_generated_listing"
_GIVEN = "conformance/specs/test_generated.py::test_generated_listing"


def test_three_sim_shards_merge_to_the_unsharded_run(tmp_path: Path) -> None:
    """-k capture (> 100 specs) and a @given spec on the sim: unsharded, and as 3 shards run
    three ways (two xdist workers in random order, -n 0 in another random order, one worker in
    file order). The @given spec runs in every shard (its own seed each) and merges to one row."""
    runs = {
        "full": ["-k", _K, "--", "-p", "randomly", "--randomly-seed=5"],
        "s1": ["--shard", "1/3", "-k", _K, "-n", "2", "--",
               "-p", "randomly", "--randomly-seed=1"],
        "s2": ["--shard", "2/3", "-k", _K, "-n", "0", "--",
               "-p", "randomly", "--randomly-seed=2"],
        "s3": ["--shard", "3/3", "-k", _K, "--", "-p", "no:randomly"],
    }
    procs = {name: subprocess.Popen([*CLI, "run", "--report-dir", str(tmp_path / name),
                                     *args[:args.index("--")], "--", *args[args.index("--") + 1:]],
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for name, args in runs.items()}
    outs = {name: p.communicate(timeout=300)[0] for name, p in procs.items()}
    codes = {name: p.returncode for name, p in procs.items()}
    assert codes == dict.fromkeys(runs, 0), outs
    full = tmp_path / "full"

    infos = [_json(tmp_path / f"s{k}" / "shard.json") for k in (1, 2, 3)]
    assert all(set(i["generated"]) == {_GIVEN} and _GIVEN in i["selected"] for i in infos)
    assert len({i["generated"][_GIVEN]["seed"] for i in infos}) == 3
    selected = [set(i["selected"]) - {_GIVEN} for i in infos]
    collected = set(_json(full / "collected.json"))
    assert len(collected) > 20 and _GIVEN in collected
    assert not (selected[0] & selected[1] or selected[0] & selected[2]
                or selected[1] & selected[2])
    assert selected[0] | selected[1] | selected[2] | {_GIVEN} == collected

    out = tmp_path / "merged"
    res = subprocess.run([*CLI, "merge", *(str(tmp_path / f"s{k}") for k in (1, 2, 3)),
                          "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    merged, unsharded = _json(out / "summary.json"), _json(full / "summary.json")
    assert merged["totals"] == unsharded["totals"]
    assert merged["stack"] == unsharded["stack"] and unsharded["stack"]["device"], merged
    assert merged["areas"] == unsharded["areas"]
    assert merged["gate"] == unsharded["gate"] == "pass"
    assert merged["fingerprint"] == unsharded["fingerprint"]
    assert merged["completeness"]["complete"] and merged["completeness"]["recorded"] == len(
        collected)
    assert set(_json(out / "collected.json")) == collected
    assert Counter(r["outcome"] for r in _rows(out)) == Counter(r["outcome"] for r in _rows(full))
    assert _json(out / "run.json")["ended"] == "complete"
    assert [s["shard"] for s in merged["shards"]] == [1, 2, 3]
    given = [r for r in _rows(out) if r["nodeid"] == _GIVEN]
    assert len(given) == 1 and given[0]["shards"] == [1, 2, 3]
    assert given[0]["hypothesis"]["examples_total"] == sum(
        r["hypothesis"]["examples_total"] for k in (1, 2, 3) for r in _rows(tmp_path / f"s{k}")
        if r["nodeid"] == _GIVEN)
    junit = ET.parse(out / "junit.xml").getroot()
    assert int(junit.get("tests")) == sum(
        int(ET.parse(tmp_path / f"s{k}" / "junit.xml").getroot().find("testsuite").get("tests"))
        for k in (1, 2, 3))
    assert len(junit.findall("testsuite")) == 3
    assert set(_json(out / "durations.json")) == {
        r["nodeid"].split("specs/", 1)[1] for r in _rows(full)}
    assert "gate: PASS" in res.stdout

    # one shard missing: INCOMPLETE, exit 4, and it says which
    res = subprocess.run([*CLI, "merge", str(tmp_path / "s1"), str(tmp_path / "s3"),
                          "--out", str(tmp_path / "partial")],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 4, res.stdout + res.stderr
    verdict = _json(tmp_path / "partial" / "summary.json")["verdict"]
    assert verdict["verdict"] == "INCOMPLETE" and "shard 2 of 3 missing" in verdict["why"]
    assert f"({len(selected[1] - selected[0] - selected[2])} of the split's specs never ran)" \
        in verdict["why"]
    # `report` on the merged directory keeps the verdict
    res = subprocess.run([*CLI, "report", str(tmp_path / "partial")], capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 4, res.stdout + res.stderr


# ---------------------------------------------------------------------------------------------
# made-up shard directories (no run)


def _row(nodeid: str, outcome: str = "PASS", **extra: Any) -> dict[str, Any]:
    return {"nodeid": nodeid, "outcome": outcome, "clauses": ["CAP-01"], "level": "documented",
            "area": "capture", "message": "", "backend": "sim", "duration_s": 0.5, **extra}


def _shard(root: Path, name: str, k: int, n: int, ids: list[str], *,
           rows: list[dict[str, Any]] | None = None, ended: str = "complete",
           backend: str = "sim", digest: str = "d1", collected: list[str] | None = None,
           generated: list[str] = (),) -> Path:
    d = root / name
    d.mkdir(parents=True)
    rows = [_row(i) for i in ids] if rows is None else rows
    (d / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (d / "collected.json").write_text(json.dumps(collected if collected is not None else ids))
    (d / "run.json").write_text(json.dumps({"backend": backend, "started": "t0",
                                            "ended": ended, "finished": "t1", "exitstatus": 0}))
    (d / "shard.json").write_text(json.dumps({"shard": k, "of": n, "selected": ids,
                                              "split_digest": digest, "specs_total": 6,
                                              "generated": {g: {"seed": k, "max_examples": 20}
                                                            for g in generated}}))
    return d


def _ids(*names: str) -> list[str]:
    return [f"conformance/specs/test_capture.py::{n}" for n in names]


def _merge(capsys: pytest.CaptureFixture[str], *args: Path | str) -> tuple[int, str, str]:
    code = cli.main(["merge", *map(str, args)])
    got = capsys.readouterr()
    return code, got.out, got.err


@pytest.fixture
def three(tmp_path: Path) -> list[Path]:
    return [_shard(tmp_path, "a", 1, 3, _ids("t1", "t2")),
            _shard(tmp_path, "b", 2, 3, _ids("t3", "t4")),
            _shard(tmp_path, "c", 3, 3, _ids("t5", "t6"))]


def test_merge_of_every_shard_passes(tmp_path: Path, three: list[Path],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _merge(capsys, *three, "--out", tmp_path / "m")
    assert code == 0, out + err
    s = _json(tmp_path / "m" / "summary.json")
    assert s["totals"] == {"PASS": 6} and s["verdict"]["verdict"] == "PASS"
    assert len(_rows(tmp_path / "m")) == 6
    assert "merged 3 of 3 shard(s)" in out and "gate: PASS" in out


@pytest.mark.parametrize("drop, repeat, why", [
    (1, None, "shard 2 of 3 missing (2 of the split's specs never ran)"),
    (1, 0, "shard 1 of 3 given 2 times"),
])
def test_missing_or_repeated_shard_is_incomplete(tmp_path: Path, three: list[Path],
                                                 capsys: pytest.CaptureFixture[str], drop: int,
                                                 repeat: int | None, why: str) -> None:
    given = [p for i, p in enumerate(three) if i != drop]
    if repeat is not None:
        given.append(three[repeat])
    code, out, err = _merge(capsys, *given, "--out", tmp_path / "m")
    assert code == 4, out + err
    s = _json(tmp_path / "m" / "summary.json")
    assert s["verdict"]["verdict"] == "INCOMPLETE" and why in s["verdict"]["why"]
    assert _json(tmp_path / "m" / "run.json")["ended"] != "complete"
    assert len(_rows(tmp_path / "m")) == 4  # a repeated shard's rows are taken once


def test_partial_shard_is_incomplete(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _shard(tmp_path, "a", 1, 2, _ids("t1", "t2"), ended="interrupted")
    b = _shard(tmp_path, "b", 2, 2, _ids("t3", "t4"), rows=[_row(_ids("t3")[0])])
    code, out, err = _merge(capsys, a, b, "--out", tmp_path / "m")
    assert code == 4, out + err
    c = _json(tmp_path / "m" / "summary.json")["completeness"]
    assert c["never_ran"] == _ids("t4") and "interrupted" in c["why"]


def test_a_failing_shard_fails_the_merge(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    a = _shard(tmp_path, "a", 1, 2, _ids("t1"))
    b = _shard(tmp_path, "b", 2, 2, _ids("t2"), rows=[_row(_ids("t2")[0], "FAIL")])
    code, out, err = _merge(capsys, a, b, "--out", tmp_path / "m")
    assert code == 1 and "gate: FAIL" in out, out + err


@pytest.mark.parametrize("case, fragment", [
    ("overlap", "overlapping shards"),
    ("backend", "ran backend 'acl'"),
    ("n", "not shards of one run"),
    ("selection", "different spec selection"),
    ("not-a-run", "not a run directory"),
    ("out-holds-a-run", "already holds a run"),
])
def test_bad_input_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      case: str, fragment: str) -> None:
    a = _shard(tmp_path, "a", 1, 2, _ids("t1", "t2"))
    out = tmp_path / "m"
    other = {
        "overlap": lambda: _shard(tmp_path, "b", 2, 2, _ids("t2", "t3")),
        "backend": lambda: _shard(tmp_path, "b", 2, 2, _ids("t3"), backend="acl"),
        "n": lambda: _shard(tmp_path, "b", 2, 3, _ids("t3")),
        "selection": lambda: _shard(tmp_path, "b", 2, 2, _ids("t3"), digest="d2"),
        "not-a-run": lambda: (tmp_path / "empty").mkdir() or tmp_path / "empty",
        "out-holds-a-run": lambda: _shard(tmp_path, "b", 2, 2, _ids("t3")),
    }[case]()
    if case == "out-holds-a-run":
        out = other
    code, stdout, err = _merge(capsys, a, other, "--out", out)
    assert code == 2
    assert stdout == "" and len(err.strip().splitlines()) == 1 and fragment in err, err
    assert err.startswith("mdlri-conformance: error: merge: ")
    if case != "out-holds-a-run":
        assert not out.exists()


def test_junit_allure_crashes_and_probes_are_merged(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    a = _shard(tmp_path, "a", 1, 2, _ids("t1"))
    crash = {"stacks": "crashes/gw0-1.txt", "message": "worker died; stacks: crashes/gw0-1.txt"}
    b = _shard(tmp_path, "b", 2, 2, _ids("t2"), rows=[_row(_ids("t2")[0], "CRASH", **crash)])
    for d, k, n in ((a, 1, 3), (b, 2, 1)):
        (d / "junit.xml").write_text(
            f'<testsuites><testsuite name="pytest" tests="{n}" failures="0" errors="{k - 1}" '
            f'skipped="0" time="1.5"><testcase name="x{k}"/></testsuite></testsuites>')
        (d / "allure-results").mkdir()
        (d / "allure-results" / f"{k}-result.json").write_text("{}")
        (d / "crashes").mkdir()
        (d / "crashes" / "gw0-1.txt").write_text(f"stacks of shard {k}")
        (d / "probe.json").write_text(json.dumps({
            "processes": ["gw0"], "removed": {"blocking_wait": "absent"}, "uniform": True,
            "seconds": {"gw0": 0.1 * k}, "findings": {"gw0": []}}))
    code, out, err = _merge(capsys, a, b, "--out", tmp_path / "m")
    assert code == 1, out + err  # a CRASH fails the gate
    m = tmp_path / "m"
    root = ET.parse(m / "junit.xml").getroot()
    assert (root.get("tests"), root.get("errors"), root.get("time")) == ("4", "1", "3.000")
    assert [s.get("name") for s in root.findall("testsuite")] == [
        "pytest (shard 1 of 2)", "pytest (shard 2 of 2)"]
    assert sorted(p.name for p in (m / "allure-results").iterdir()) == [
        "1-result.json", "2-result.json"]
    row = _rows(m)[1]
    assert row["stacks"] == "crashes/shard2-gw0-1.txt" and row["stacks"] in row["message"]
    assert (m / row["stacks"]).read_text() == "stacks of shard 2"
    probe = _json(m / "summary.json")["probe"]
    assert probe["processes"] == ["shard1:gw0", "shard2:gw0"] and probe["uniform"]
    assert probe["removed"] == {"blocking_wait": "absent"}


def test_kill_matrices_are_merged_per_fault(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    a = _shard(tmp_path, "a", 1, 2, _ids("t1"))
    b = _shard(tmp_path, "b", 2, 2, _ids("t2"))

    def entry(fault: str, killers: list[str], t: float | None) -> dict[str, Any]:
        return {"fault": fault, "description": "d", "killed": bool(killers),
                "killers": [{"spec": s, "outcome": "FAIL", "duration_s": 0.2} for s in killers],
                "kill_count": len(killers), "time_to_kill_s": t,
                "fastest_killer_s": 0.2 if killers else None, "examples": 3 if killers else None,
                "shrunk_tasks": None, "leaking_specs": 0, "specs_run": 1, "wall_s": 2.0,
                "exit": 1 if killers else 0}

    for d, entries in ((a, [entry("f1", ["t1"], 1.5), entry("f2", [], None)]),
                       (b, [entry("f1", ["t2"], 0.5), entry("f2", [], None)])):
        (d / "kill_matrix.json").write_text(json.dumps({
            "backend": "sim", "acl_lib": None, "profile": "ci", "spec_timeout_s": 10, "jobs": 2,
            "wall_s": 3.0, "baseline": {"specs": 1, "wall_s": 1.0, "not_passing": []},
            "summary": {}, "faults": entries}))
    code, out, err = _merge(capsys, a, b, "--out", tmp_path / "m")
    assert code == 0, out + err
    km = _json(tmp_path / "m" / "kill_matrix.json")
    f1, f2 = km["faults"]
    assert f1["killed"] and f1["kill_count"] == 2 and f1["time_to_kill_s"] == 0.5
    assert not f2["killed"] and km["summary"]["survivors"] == ["f2"]
    assert km["baseline"]["specs"] == 2
    assert "kill-matrix" in (tmp_path / "m" / "index.html").read_text()


def test_generated_rows_fold_into_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A generated spec in every shard (shard.json "generated") is one row: the worst outcome
    with the failing shard's message, the example counts summed."""
    g = _ids("gen")[0]

    def gen_row(outcome: str, examples: int, **extra: Any) -> dict[str, Any]:
        hyp = {"examples": examples, "examples_total": examples, **extra}
        return _row(g, outcome, hypothesis=hyp, message=f"{outcome} here")

    a = _shard(tmp_path, "a", 1, 3, [*_ids("t1"), g], generated=[g],
               rows=[_row(_ids("t1")[0]), gen_row("PASS", 20)])
    b = _shard(tmp_path, "b", 2, 3, [*_ids("t2"), g], generated=[g],
               rows=[gen_row("FAIL", 4, failed_at_example=4, shrink_calls=30), _row(_ids("t2")[0])])
    c = _shard(tmp_path, "c", 3, 3, [*_ids("t3"), g], generated=[g],
               rows=[_row(_ids("t3")[0]), gen_row("CHANGED", 20)])
    code, out, err = _merge(capsys, a, b, c, "--out", tmp_path / "m")
    assert code == 1 and "gate: FAIL" in out, out + err
    rows = _rows(tmp_path / "m")
    assert [r["nodeid"] for r in rows] == [*_ids("t1"), g, *_ids("t2", "t3")]
    row = rows[1]
    assert (row["outcome"], row["message"], row["shards"]) == ("FAIL", "FAIL here", [1, 2, 3])
    assert row["shard_outcomes"] == {"1": "PASS", "2": "FAIL", "3": "CHANGED"}
    assert row["hypothesis"] == {"examples": 4, "examples_total": 44, "failed_at_example": 4,
                                 "shrink_calls": 30}
    assert row["duration_s"] == 1.5
    s = _json(tmp_path / "m" / "summary.json")
    assert s["totals"] == {"PASS": 3, "FAIL": 1} and s["completeness"]["complete"]
    # all PASS: PASS, examples summed
    for d, k in ((tmp_path / "p", 1), (tmp_path / "q", 2)):
        _shard(d, "x", k, 2, [g], generated=[g], rows=[gen_row("PASS", 20)])
    code, out, err = _merge(capsys, tmp_path / "p" / "x", tmp_path / "q" / "x",
                            "--out", tmp_path / "m2")
    assert code == 0, out + err
    assert _rows(tmp_path / "m2")[0]["hypothesis"] == {"examples": 40, "examples_total": 40}


def test_only_generated_specs_may_be_in_several_shards(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    g = _ids("gen")[0]
    a = _shard(tmp_path, "a", 1, 2, [*_ids("t1"), g], generated=[g])
    b = _shard(tmp_path, "b", 2, 2, [*_ids("t2"), g])  # not generated in this shard
    code, out, err = _merge(capsys, a, b, "--out", tmp_path / "m")
    assert code == 2 and "overlapping shards" in err and "test_capture.py::gen" in err


def test_a_fault_a_given_spec_catches_is_caught_after_the_merge(tmp_path: Path) -> None:
    """--fault disabled-task-listed on the sim, caught by test_generated_listing: every
    shard's part of the examples runs and the merged row is CHANGED (an implementation-level
    clause: the gate is the shards' own)."""
    procs = [subprocess.Popen([*CLI, "run", "--report-dir", str(tmp_path / f"s{k}"),
                               "--shard", f"{k}/2", "-k", "test_generated_listing", "-n", "0",
                               "--fault", "disabled-task-listed", "--", "-p", "no:randomly"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for k in (1, 2)]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    codes = [p.returncode for p in procs]
    assert set(codes) <= {0, 1}, outs
    caught = [r["outcome"] for k in (1, 2) for r in _rows(tmp_path / f"s{k}")]
    assert set(caught) <= {"CHANGED", "FAIL", "TIMEOUT"}, caught  # each shard caught it
    res = subprocess.run([*CLI, "merge", str(tmp_path / "s1"), str(tmp_path / "s2"),
                          "--out", str(tmp_path / "m")], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == max(codes), res.stdout + res.stderr
    (row,) = _rows(tmp_path / "m")
    assert row["nodeid"] == _GIVEN and row["shards"] == [1, 2]
    assert row["outcome"] in caught and row["hypothesis"]["failed_at_example"]
    assert _json(tmp_path / "m" / "summary.json")["totals"] == {row["outcome"]: 1}
