"""The kill matrix on a small subset: two faults, the listing specs only."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from mdlri_conformance.conformance.framework.power import killmatrix


def test_matrix_on_two_faults(tmp_path: Path) -> None:
    out = tmp_path / "km"
    lines: list[str] = []
    matrix = killmatrix.run_matrix(["no-107039", "getstreams-origin-first"], out, jobs=2,
                                   extra=["-k", "test_listing"], progress=lines.append)
    assert re.fullmatch(r"\[baseline\] \d+ specs in [\d.]+ s, 0 not passing \(.*\)", lines[0])
    assert len(lines) == 3
    for i, line in enumerate(lines[1:], start=1):
        assert re.fullmatch(rf"\[{i}/2\] (no-107039|getstreams-origin-first): killed by \d+ "
                            r"spec\(s\) in [\d.]+ s \(first after [\d.]+ s\)", line), line
    on_disk = json.loads((out / "kill_matrix.json").read_text())
    assert on_disk["summary"] == matrix["summary"]
    assert on_disk["pytest_args"] == ["-k", "test_listing"]
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


def _fake_runs(delays: dict[str | None, float],
               killers: dict[str, list[str]]) -> Any:
    """A run_one stand-in: each run sleeps its delay; ``killers[f]`` fail in fault f's run."""

    def run_one(spec: killmatrix.RunSpec, limit_s: float = 0) -> dict[str, Any]:
        time.sleep(delays[spec.fault])
        bad = set(killers.get(spec.fault or "", []))
        rows = [{"nodeid": n, "outcome": "FAIL" if n in bad else "PASS", "duration_s": 0.5,
                 "clauses": []} for n in ("a", "b", "c")]
        return {"exit": 1 if bad else 0, "wall_s": delays[spec.fault], "rows": rows, "tail": ""}

    return run_one


def test_a_line_as_each_run_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Faults end in their own order; one that ends before the baseline waits for it."""
    monkeypatch.setattr(killmatrix, "run_one", _fake_runs(
        {None: 0.4, "no-107039": 0.1, "seq-per-stream": 2.0, "double-destroy-ok": 0.6},
        {"no-107039": ["b"], "double-destroy-ok": ["a", "c"]}))
    monkeypatch.setattr(killmatrix, "_rebuild_report", lambda out: None)
    lines: list[tuple[float, str]] = []
    t0 = time.monotonic()
    matrix = killmatrix.run_matrix(["no-107039", "seq-per-stream", "double-destroy-ok"],
                                   tmp_path / "km", jobs=4,
                                   progress=lambda m: lines.append((time.monotonic() - t0, m)))
    text = [m for _, m in lines]
    assert text == [
        "[baseline] 3 specs in 0.4 s, 0 not passing (they cannot kill a fault)",
        "[1/3] no-107039: killed by 1 spec(s) in 0.1 s (first after 1.0 s)",
        "[2/3] double-destroy-ok: killed by 2 spec(s) in 0.6 s (first after 0.5 s)",
        "[3/3] seq-per-stream: SURVIVED 3 specs in 2.0 s",
    ]
    assert lines[2][0] < 1.6 < lines[3][0]  # not held back until every run ended
    assert matrix["summary"]["survivors"] == ["seq-per-stream"]
    assert [e["fault"] for e in matrix["faults"]] == ["no-107039", "seq-per-stream",
                                                        "double-destroy-ok"]  # given order


def test_a_broken_run_says_where_its_log_is(tmp_path: Path) -> None:
    entry = killmatrix.analyse("no-107039", [], {}, 2.0, 4)
    line = killmatrix.fault_line(1, 2, entry, {"exit": 4, "rows": []}, tmp_path / "f")
    assert line == (f"[1/2] no-107039: SURVIVED 0 specs in 2.0 s; no spec reported, see "
                    f"{tmp_path / 'f' / 'pytest.log'}")


def test_progress_reaches_a_pipe_as_it_happens(tmp_path: Path) -> None:
    """The default progress flushes: through a pipe (CI, | tee) the first line arrives
    while the other runs are still going."""
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
        from tests.test_killmatrix import _fake_runs
        from mdlri_conformance.conformance.framework.power import killmatrix
        killmatrix.run_one = _fake_runs({{None: 0.1, "no-107039": 0.2, "seq-per-stream": 2.5}},
                                        {{"no-107039": ["a"]}})
        killmatrix._rebuild_report = lambda out: None
        killmatrix.run_matrix(["no-107039", "seq-per-stream"], __import__("pathlib").Path(
            {str(tmp_path / "km")!r}), jobs=3)
        print("END", flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    arrived: list[tuple[float, str]] = []
    for line in proc.stdout:
        arrived.append((time.monotonic(), line.strip()))
    assert proc.wait(timeout=30) == 0
    assert [m for _, m in arrived][0].startswith("[baseline] 3 specs")
    assert arrived[1][1].startswith("[1/2] no-107039: killed by 1 spec(s)")
    assert arrived[-1][1] == "END" and arrived[-1][0] - arrived[1][0] > 1.5


def _faults(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", "faults",
                           "--out", str(tmp_path / "km"), *args],
                          capture_output=True, text=True, timeout=300)


def test_a_bad_spec_expression_is_one_line(tmp_path: Path) -> None:
    res = _faults(tmp_path, "-k", "generated or (")
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "mdlri-conformance: error: faults: -k 'generated or (': ")
    assert not (tmp_path / "km").exists()


def test_an_expression_that_selects_nothing_is_nothing_tested(tmp_path: Path) -> None:
    res = _faults(tmp_path, "-k", "no_spec_is_called_this", "--only", "no-107039")
    assert res.returncode == 3
    assert res.stderr.strip().splitlines()[-1] == (
        "mdlri-conformance faults: NOTHING TESTED: the baseline ran no spec "
        "(-k 'no_spec_is_called_this' selects none)")


def test_fault_runs_get_the_run_limit_and_the_baseline_never_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault run is cut at ``run_limit_s`` (a fault not found by then reads as a
    survivor); the baseline, which every kill is judged against, runs to its end."""
    limits: dict[str | None, float] = {}
    fake = _fake_runs({None: 0.0, "no-107039": 0.0, "seq-per-stream": 0.0}, {})

    def run_one(spec: killmatrix.RunSpec, limit_s: float = 0) -> dict[str, Any]:
        limits[spec.fault] = limit_s
        return fake(spec, limit_s)

    monkeypatch.setattr(killmatrix, "run_one", run_one)
    monkeypatch.setattr(killmatrix, "_rebuild_report", lambda out: None)
    matrix = killmatrix.run_matrix(["no-107039", "seq-per-stream"], tmp_path / "km", jobs=2,
                                   progress=lambda m: None, run_limit_s=42.0)
    assert limits == {None: killmatrix.RUN_LIMIT_S, "no-107039": 42.0, "seq-per-stream": 42.0}
    assert matrix["run_limit_s"] == 42.0
