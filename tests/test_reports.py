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

from mdlri_conformance.reports.runs import RunError, load_rows, load_run

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
    assert "**Gate: FAIL** (exit 1): " in md and "spec(s) fail the gate" in md
    assert 'class="verdict v-fail"' in page


def test_diff_names_the_changed_clauses(faulty_differential: Path, tmp_path: Path) -> None:
    clean = tmp_path / "clean"
    res = _pytest("conformance/specs/test_differential.py", "--backend", "sim", "--against",
                  "sim", f"--report-dir={clean}", "-k", "negative")
    assert res.returncode == 0, res.stdout[-2000:]
    out = subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", "diff", str(clean),
                          str(faulty_differential)], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 1  # new failures in B
    changed_line = [l for l in out.stdout.splitlines() if l.startswith("clauses that changed:")][0]
    failed = {c for r in load_run(faulty_differential).rows.values()
              if r["outcome"] != "PASS" for c in r["clauses"]}
    assert set(changed_line.split(": ", 1)[1].split(", ")) == failed


def test_diff_and_report_reject_bad_directories(tmp_path: Path) -> None:
    for args in (["diff", str(tmp_path / "nope"), str(tmp_path)], ["report", str(tmp_path)]):
        out = subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", *args], cwd=ROOT,
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
    from mdlri_conformance.conformance.framework.verdicts.summary import build_summary
    from mdlri_conformance.conformance.framework.verdicts.artefacts import write_all
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
    assert "state-changing specs: 1" in md and "leaking specs: 1 of 1 checked (events 1)" in md
    html = (tmp_path / "index.html").read_text()
    assert "exchange_mode GLOBAL -&gt; RELAXED" in html and "1 event" in html
    assert "open_captures" in html and "the backend counts none" in html
    assert json.loads((tmp_path / "summary.json").read_text())["gate"] == "pass"


# ---------------------------------------------------------------------------------------------
# summary.md and index.html show every number the console shows (hand-made rows)


def _row(name: str, outcome: str, clauses: tuple[str, ...] = (), **extra: object) -> dict:
    return {"nodeid": f"conformance/specs/test_x.py::{name}", "outcome": outcome, "area": "x",
            "clauses": list(clauses), **extra}


def _pages(tmp_path: Path, rows: list[dict], **kw: object) -> tuple[dict, str, str]:
    """build_summary + write_all; returns the summary, summary.md and index.html."""
    from mdlri_conformance.conformance.framework.verdicts.summary import build_summary
    from mdlri_conformance.conformance.framework.verdicts.artefacts import write_all
    summary = build_summary(rows, {c for r in rows for c in r["clauses"]}, "sim", **kw)
    write_all(tmp_path, rows, summary)
    return (summary, (tmp_path / "summary.md").read_text(),
            (tmp_path / "index.html").read_text())


def _esc(text: str) -> str:
    import html
    return html.escape(text)


@pytest.mark.parametrize("outcome, verdict, code, css", [
    ("PASS", "PASS", 0, "v-pass"), ("FAIL", "FAIL", 1, "v-fail"),
    ("UNSUPPORTED", "NOTHING TESTED", 3, "v-nothing-tested")])
def test_verdict_and_why_are_the_headline(tmp_path: Path, outcome: str, verdict: str,
                                          code: int, css: str) -> None:
    msg = "UNSUPPORTED: no kernels" if outcome == "UNSUPPORTED" else ""
    rows = [_row("test_a", outcome, message=msg),
            _row("test_b", "UNSUPPORTED" if msg else "PASS", message=msg)]
    summary, md, page = _pages(tmp_path, rows, collected=[r["nodeid"] for r in rows])
    v = summary["verdict"]
    assert (v["verdict"], v["exit_code"]) == (verdict, code) and v["why"]
    headline = md.splitlines()[2]
    assert headline == f"**Gate: {verdict}** (exit {code}): {v['why']}"
    assert (f'<div class="verdict {css}">\n<p id="verdict">Gate: <strong>{verdict}</strong> '
            f"(exit {code}): {_esc(v['why'])}</p>") in page
    # the headline comes before the area table
    assert page.index('id="verdict"') < page.index("Outcomes by area")


def test_incomplete_run_lists_the_specs_that_never_ran(tmp_path: Path) -> None:
    ran = [_row("test_ran_0", "PASS"), _row("test_ran_1", "PASS")]
    never = [f"conformance/specs/test_x.py::test_never_{i:02}" for i in range(58)]
    summary, md, page = _pages(tmp_path, ran, collected=[r["nodeid"] for r in ran] + never)
    assert summary["verdict"]["verdict"] == "INCOMPLETE"
    why = summary["verdict"]["why"]
    assert "58 of 60 collected spec(s) never ran" in why
    assert f"**Gate: INCOMPLETE** (exit 4): {why}" in md
    assert f"- completeness: INCOMPLETE, 2 of 60 collected spec(s) recorded: {why}" in md
    assert "## Never ran (58)" in md
    shown = [n for n in never if f"- `{n}`" in md]
    assert shown == never[:50] and "- ... 8 more (index.html)" in md
    assert 'class="verdict v-incomplete"' in page and "58 spec(s) never ran" in page
    assert all(f"<li><code>{n}</code></li>" in page for n in never)
    assert not any(f"<code>{r['nodeid']}</code></li>" in page for r in ran)


def test_interrupted_run_is_incomplete_on_both_pages(tmp_path: Path) -> None:
    rows = [_row("test_a", "PASS")]
    summary, md, page = _pages(tmp_path, rows, collected=[rows[0]["nodeid"]],
                               ended="interrupted")
    assert "**Gate: INCOMPLETE** (exit 4): the run was interrupted" in md
    assert "Never ran" not in md and "never ran</strong>" not in page
    assert '<li class="bad">completeness: INCOMPLETE, 1 of 1 collected spec(s) recorded: the run ' \
           "was interrupted</li>" in page


def test_unsupported_reasons_with_counts(tmp_path: Path) -> None:
    """25 reasons, reason i on i+1 specs: summary.md lists the top 20 and says how many more;
    index.html lists all 25, each with its count."""
    rows = [_row("test_pass", "PASS")]
    for i in range(25):
        rows += [_row(f"test_r{i}_{k}", "UNSUPPORTED", message=f"UNSUPPORTED: lacks cap_{i} | x")
                 for k in range(i + 1)]
    summary, md, page = _pages(tmp_path, rows)
    total = sum(range(1, 26))
    assert f"## UNSUPPORTED by reason ({total} spec(s), 25 reason(s))" in md
    for i in range(24, 4, -1):  # the 20 largest
        example = f"conformance/specs/test_x.py::test_r{i}_0"
        assert f"| {i + 1} | lacks cap_{i} \\| x | `{example}` |" in md
    for i in range(5):
        assert f"lacks cap_{i} " not in md
    assert f"... 5 more reason(s), {sum(range(1, 6))} spec(s)" in md
    assert f"{total} spec(s), 25 reason(s)." in page
    for i in range(25):
        assert f'<td class="n">{i + 1}</td><td>lacks cap_{i} | x</td>' in page
    # largest first
    assert page.index("lacks cap_24 ") < page.index("lacks cap_0 ")


def test_no_unsupported_says_none(tmp_path: Path) -> None:
    _, md, page = _pages(tmp_path, [_row("test_a", "PASS")])
    assert "UNSUPPORTED: none." in md and "## UNSUPPORTED" not in md
    assert '<h2 id="unsupported">UNSUPPORTED by reason</h2>\n\n<p>None.</p>' in page


def test_leaks_not_checked_differs_from_none_found(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    _, md, page = _pages(tmp_path / "a", [_row("test_a", "PASS"), _row("test_b", "PASS")])
    assert "- leaks: not checked (the backend reports no live resource counts)" in md
    assert "leaking specs" not in md
    assert '<li class="not-checked">leaks: not checked' in page
    (tmp_path / "b").mkdir()
    _, md, page = _pages(tmp_path / "b", [_row("test_a", "PASS", leaks={}),
                                          _row("test_b", "PASS", leaks={}),
                                          _row("test_c", "PASS")])
    assert "- leaking specs: 0 of 2 checked (rows with" in md and "not checked (the" not in md
    assert '<li class="ok">leaking specs: 0 of 2 checked' in page


def test_clauses_verified_beside_cited(tmp_path: Path) -> None:
    """A PASS verifies the clauses its spec cites; an XFAIL or CHANGED cites them only."""
    from mdlri_conformance.conformance.framework import registry
    ids = list(registry.clauses())[:5]
    rows = [_row("test_a", "PASS", (ids[0], ids[1])), _row("test_b", "PASS", (ids[1],)),
            _row("test_c", "XFAIL", (ids[2],)), _row("test_d", "CHANGED", (ids[3], ids[4]))]
    summary, md, page = _pages(tmp_path, rows)
    cov = summary["coverage"]
    assert (cov["verified"], cov["cited"]) == (2, 5)
    line = (f"clauses verified in this run: 2 (a PASS on a spec citing them); cited by specs: 5 "
            f"of {cov['catalog']}; reasoned {cov['reasoned']}, neither {cov['neither']}")
    assert f"- {line}" in md and f"<li>{line}" in page


def test_probe_findings_on_both_pages(tmp_path: Path) -> None:
    from mdlri_conformance.conformance.framework.verdicts.summary import build_summary
    from mdlri_conformance.conformance.framework.verdicts.artefacts import write_all
    rows = [_row("test_a", "PASS")]
    summary = build_summary(rows, [], "sim")
    finding = {"cap": "data_movement", "probe": "memcpy", "verdict": "absent",
               "reason": "probe: memcpy returned zeros", "seconds": 0.01, "kept": False}
    summary["probe"] = {"processes": ["gw0", "gw1"], "uniform": False,
                        "removed": {"gw0": {"data_movement": "probe: memcpy returned zeros"},
                                    "gw1": {}},
                        "seconds": {"gw0": 0.25, "gw1": 0.5},
                        "findings": {"gw0": [finding], "gw1": []}}
    write_all(tmp_path, rows, summary)
    md, page = (tmp_path / "summary.md").read_text(), (tmp_path / "index.html").read_text()
    head = "capability probes (2 process(es), 0.50 s per start): absent"
    assert f"- {head}\n  - data_movement [gw0]: probe: memcpy returned zeros\n" in md
    assert f"<li>{head}" in page
    assert "<li>data_movement [gw0]: probe: memcpy returned zeros</li>" in page
    assert "<td>memcpy</td><td>absent</td><td>no</td>" in page
    summary["probe"] = {"processes": ["main"], "uniform": True, "removed": {},
                        "seconds": {"main": 0.11}, "findings": {"main": []}}
    write_all(tmp_path, rows, summary)
    line = "capability probes (1 process(es), 0.11 s per start): every declared capability shown"
    assert f"- {line}" in (tmp_path / "summary.md").read_text()
    assert f"<li>{line}</li>" in (tmp_path / "index.html").read_text()


def test_probe_lines_word_each_removed_capability() -> None:
    """The findings once per run when every process agrees, per process otherwise, cut at 240
    characters (the console, summary.md and index.html all use conformance.summary.probe_lines)."""
    from mdlri_conformance.conformance.framework.verdicts.summary import probe_lines
    assert probe_lines(None) == []
    uniform = probe_lines({"processes": ["main"], "uniform": True, "seconds": {"main": 0.1},
                           "removed": {"update": "probe: 207000"}})
    assert uniform == ["capability probes (1 process(es), 0.10 s per start): absent",
                       "  update: probe: 207000"]
    split = probe_lines({"processes": ["gw0", "gw1"], "uniform": False,
                         "seconds": {"gw0": 0.2, "gw1": None},
                         "removed": {"gw0": {"update": "x" * 300}, "gw1": {}}})
    assert split[0].startswith("capability probes (2 process(es), 0.20 s")
    assert split[1].startswith("  update [gw0]: xxx") and len(split[1]) == 240


def test_an_older_summary_without_the_new_keys_still_renders(tmp_path: Path) -> None:
    from mdlri_conformance.conformance.framework.verdicts.summary import build_summary
    from mdlri_conformance.conformance.framework.verdicts.artefacts import write_all
    rows = [_row("test_a", "PASS")]
    summary = build_summary(rows, [], "sim")
    for key in ("verdict", "unsupported", "leaks", "completeness", "state"):
        del summary[key]
    del summary["coverage"]["verified"]
    write_all(tmp_path, rows, summary)
    md = (tmp_path / "summary.md").read_text()
    assert "**Gate: PASS**\n" in md and "completeness: not recorded" in md
    assert 'class="verdict v-pass"' in (tmp_path / "index.html").read_text()


# ---------------------------------------------------------------------------------------------
# a reader can act on the page: what fails the gate comes first and the banner links to it


def _gate_rows() -> list[dict]:
    """13 CHANGED, then the one FAIL, then 2 more CHANGED (as in a seq-per-stream run, where
    the FAIL was 13th of 16), an XFAIL, a gated CHANGED and an UNSUPPORTED on a required
    capability."""
    rows = [_row(f"test_changed_{i:02}", "CHANGED", ("LIST-05",), level="implementation",
                 message=f"[LIST-05] changed {i}") for i in range(13)]
    rows.append(_row("test_the_failure", "FAIL", ("CAP-04", "LIST-08"), level="documented",
                     message="[CAP-04,LIST-08] CaptureEnd rc: expected 0, observed 107025"))
    rows += [_row(f"test_changed_{i}", "CHANGED", ("SEQ-03",), level="implementation",
                  message="[SEQ-03] changed") for i in (13, 14)]
    rows.append(_row("test_accepted", "XFAIL", ("SEQ-04",), message="[SEQ-04] accepted",
                     expected="FAIL", reason="known"))
    rows.append(_row("test_gated", "CHANGED", ("SEQ-01",), gated=True,
                     message="[SEQ-01] changed"))
    rows.append(_row("test_required", "UNSUPPORTED", ("EXE-01",), gated=True,
                     required=["kernels"], message="UNSUPPORTED: no kernels"))
    return rows


def _entries(page: str) -> list[tuple[str, str]]:
    """(anchor, node id) of each divergence entry, in page order."""
    import re
    return re.findall(r'<div class="div o-\w+(?: fails-gate)?" id="(div-\d+)">\n<p>.*?'
                      r"<code>([^<]+)</code>", page)


def test_gate_failures_come_first_and_the_banner_links_to_them(tmp_path: Path) -> None:
    rows = _gate_rows()
    summary, md, page = _pages(tmp_path, rows)
    assert summary["verdict"]["verdict"] == "FAIL"
    entries = _entries(page)
    names = [n.split("::")[1] for _, n in entries]
    # the three that fail the gate first (FAIL, gated CHANGED, required UNSUPPORTED: in the
    # columns' order), then the 15 CHANGED in the run's order, then the XFAIL
    assert names[:3] == ["test_the_failure", "test_gated", "test_required"]
    assert names[3:] == [f"test_changed_{i:02}" for i in range(13)] + \
        ["test_changed_13", "test_changed_14", "test_accepted"]
    assert [a for a, _ in entries] == [f"div-{i}" for i in range(1, 20)]
    banner = page[page.index('<div class="verdict'):page.index("</div>")]
    assert banner.count("<li>") == 3
    assert ('<li><a href="#div-1"><strong>FAIL</strong> <code>conformance/specs/test_x.py::'
            'test_the_failure</code></a>: [CAP-04,LIST-08] CaptureEnd rc: expected 0, '
            'observed 107025</li>') in banner
    assert '<a href="#div-2"><strong>CHANGED (gated)</strong>' in banner
    assert '<a href="#div-3"><strong>UNSUPPORTED (required)</strong>' in banner
    assert '<h3 id="fails-gate">Specs that fail the gate (3)</h3>' in page
    assert '<h3 id="reported">Reported, not failing the gate (16)</h3>' in page
    assert page.index('id="fails-gate"') < page.index('id="div-1"') < page.index('id="reported"')
    # summary.md and divergences.json: the same order
    md_names = [line.split("`")[1].split("::")[1] for line in md.splitlines()
                if line.startswith("- **") and "`" in line]
    assert md_names == names
    assert "## Divergences (19: 3 fail the gate, listed first)" in md
    assert "- **FAIL** (fails the gate) `conformance/specs/test_x.py::test_the_failure`" in md
    divs = json.loads((tmp_path / "divergences.json").read_text())
    assert [d["spec"].split("::")[1] for d in divs] == names
    assert [d["fails_gate"] for d in divs] == [True] * 3 + [False] * 16


def test_the_banner_names_ten_then_links_to_the_rest(tmp_path: Path) -> None:
    rows = [_row(f"test_fail_{i:02}", "FAIL", ("CAP-04",), message="[CAP-04] x")
            for i in range(12)]
    _, _, page = _pages(tmp_path, rows)
    banner = page[page.index('<div class="verdict'):page.index("</div>")]
    assert banner.count('<a href="#div-') == 10 and 'href="#div-10"' in banner
    assert '<li><a href="#fails-gate">... and 2 more</a></li>' in banner


def test_a_passing_run_has_no_gate_failure_list(tmp_path: Path) -> None:
    _, md, page = _pages(tmp_path, [_row("test_a", "PASS"),
                                    _row("test_b", "CHANGED", ("LIST-05",), message="m")])
    assert "gate-failures" not in page and 'class="div o-CHANGED" id="div-1"' in page
    assert '<h3 id="fails-gate">Specs that fail the gate (0)</h3>\n<p>None.</p>' in page
    assert "## Divergences (1: 0 fail the gate, listed first)" in md


def test_every_clause_id_links_to_its_entry_in_clauses_html(tmp_path: Path) -> None:
    import re
    rows = _gate_rows()
    _, _, page = _pages(tmp_path, rows)
    clauses = (tmp_path / "clauses.html").read_text()
    ids = set(re.findall(r'<tr id="([^"]+)">', clauses))
    hrefs = re.findall(r'<a href="clauses\.html#([^"]+)">', page)
    from mdlri_conformance.conformance.framework import registry
    # every catalog clause in the matrix, and each clause of each divergence entry
    assert set(hrefs) == set(registry.clauses()) and set(hrefs) <= ids
    cited = sum(len(r["clauses"]) for r in rows)
    assert len(hrefs) == len(registry.clauses()) + cited
    assert ('[<a href="clauses.html#CAP-04">CAP-04</a>, <a href="clauses.html#LIST-08">'
            'LIST-08</a>] level documented') in page
    assert '<td><a href="clauses.html#LIST-05"><code>LIST-05</code></a>' in page


def test_an_empty_results_file_names_no_empty_backend(tmp_path: Path) -> None:
    from mdlri_conformance.conformance.framework.verdicts.summary import (
        build_summary, verdict_line)
    from mdlri_conformance.conformance.framework.verdicts.artefacts import write_all
    summary = build_summary([], [], "")
    write_all(tmp_path, [], summary)
    assert verdict_line(summary).startswith("gate: NOTHING TESTED (backend not recorded): ")
    md = (tmp_path / "summary.md").read_text()
    page = (tmp_path / "index.html").read_text()
    assert md.startswith("# Model RI conformance: backend not recorded\n")
    assert "<h1>Model RI conformance: backend not recorded</h1>" in page
    assert "(backend )" not in md + page and "<code></code>" not in page


def test_pages_are_byte_identical_for_the_same_rows(tmp_path: Path) -> None:
    rows = _gate_rows()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _pages(tmp_path / "a", rows)
    _pages(tmp_path / "b", [dict(r) for r in rows])
    for name in ("index.html", "summary.md", "divergences.json", "clauses.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
