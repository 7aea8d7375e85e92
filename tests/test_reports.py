"""Reports end to end: divergences with cases and SVG, differential runs, diff, killed runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reports.runs import RunError, load_rows, load_run

ROOT = Path(__file__).resolve().parents[1]


def _pytest(*args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def faulty_differential(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("diffrun")
    res = _pytest("conformance/specs/test_differential.py", "--backend", "sim",
                  "--against", "tests.fakes:create_sim_eager_update", f"--report-dir={out}",
                  "-k", "negative")
    assert res.returncode == 1, res.stdout[-2000:]
    return out


def test_differential_run_records_a_classified_divergence(faulty_differential: Path) -> None:
    divs = json.loads((faulty_differential / "divergences.json").read_text())
    assert divs, "a planted SetParams bug must diverge"
    d = divs[0]
    assert "differential" in d["message"]
    assert any(kind in d["message"] for kind in ("return code", "buffer contents"))
    assert d["case"]["ops"] and "mdlri-conformance replay" in d["replay"]
    assert d["expected"] != d["observed"]


def test_html_report_shows_the_divergence_with_its_graph(faulty_differential: Path) -> None:
    page = (faulty_differential / "index.html").read_text()
    assert "<svg" in page and "Divergences (" in page
    assert "shrunk case (JSON)" in page
    md = (faulty_differential / "summary.md").read_text()
    assert "Gate: FAIL" in md


def test_diff_names_the_changed_clauses(faulty_differential: Path, tmp_path: Path) -> None:
    clean = tmp_path / "clean"
    res = _pytest("conformance/specs/test_differential.py", "--backend", "sim", "--against",
                  "sim", f"--report-dir={clean}", "-k", "negative")
    assert res.returncode == 0, res.stdout[-2000:]
    out = subprocess.run([sys.executable, "-m", "conformance.cli", "diff", str(clean),
                          str(faulty_differential)], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 1  # new failures in B
    changed_line = [l for l in out.stdout.splitlines() if l.startswith("clauses that changed:")][0]
    failed = {c for r in load_run(faulty_differential).rows.values()
              if r["outcome"] != "PASS" for c in r["clauses"]}
    assert set(changed_line.split(": ", 1)[1].split(", ")) == failed


def test_diff_and_report_reject_bad_directories(tmp_path: Path) -> None:
    for args in (["diff", str(tmp_path / "nope"), str(tmp_path)], ["report", str(tmp_path)]):
        out = subprocess.run([sys.executable, "-m", "conformance.cli", *args], cwd=ROOT,
                             capture_output=True, text=True)
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


def test_killed_run_leaves_a_readable_results_file(tmp_path: Path) -> None:
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                             "conformance/specs", f"--report-dir={out}"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if results.exists() and results.read_text().count("\n") >= 20:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    rows = load_rows(results)
    assert len(rows) >= 20
    assert all(r["outcome"] for r in rows)


def test_truncated_last_line_is_skipped_but_corruption_elsewhere_is_an_error(tmp_path: Path) -> None:
    p = tmp_path / "results.jsonl"
    p.write_text('{"nodeid": "a", "outcome": "PASS"}\n{"nodeid": "b", "outc')
    assert [r["nodeid"] for r in load_rows(p)] == ["a"]
    p.write_text('{"nodeid": "a", "outc\n{"nodeid": "b", "outcome": "PASS"}\n')
    with pytest.raises(RunError, match=":1: not a JSON line"):
        load_rows(p)


def test_side_effects_reach_summary_md_and_index_html(tmp_path: Path) -> None:
    """Leaks and process-global state changes (reported, not gated) are shown in the
    Markdown and HTML summaries, and "not checked" aspects are named with their reason."""
    from conformance.summary import build_summary
    from reports.write import write_all
    state_row = {"nodeid": "specs/test_x.py::test_leaves", "outcome": "PASS", "area": "x",
                 "clauses": [], "state": {
                     "changed": {"exchange_mode": {"before": "GLOBAL", "after": "RELAXED"}},
                     "restored": ["exchange_mode"],
                     "not_checked": {"open_captures": "the backend counts none"}}}
    leak_row = {"nodeid": "specs/test_x.py::test_leaks", "outcome": "PASS", "area": "x",
                "clauses": [], "leaks": {"events": 1}, "state": {"changed": {}}}
    rows = [state_row, leak_row]
    summary = build_summary(rows, [], "sim")
    write_all(tmp_path, rows, summary)
    md = (tmp_path / "summary.md").read_text()
    assert "state-changing specs: 1" in md and "Leaking specs: 1" in md
    html = (tmp_path / "index.html").read_text()
    assert "exchange_mode GLOBAL -&gt; RELAXED" in html and "1 event" in html
    assert "open_captures" in html and "the backend counts none" in html
    assert json.loads((tmp_path / "summary.json").read_text())["gate"] == "pass"
