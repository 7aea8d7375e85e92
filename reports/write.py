"""Writing a run's artefacts into its report directory.

``summary.json`` (per-area counts, coverage, fingerprint, gate), ``divergences.json`` (every
result that is not a plain pass, with its expected/observed values, case and reproducer),
``summary.md`` (the same at a glance, for CI pages) and ``index.html`` (reports/html.py).
JUnit XML and Allure results are written by pytest and allure-pytest themselves.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from mdlri_conformance.conformance.rundir import write_text
from mdlri_conformance.conformance.summary import (COLUMNS, completeness_line, fails_gate,
                                                   leak_line, order_line, state_line)

from . import html

DIVERGENT = {"FAIL", "CHANGED", "XFAIL", "XPASS", "ERROR", "TIMEOUT", "CRASH"}


def divergences(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The divergence records: spec, level, backend, outcome, expected/observed, reproducer."""
    out = []
    for r in rows:
        if r["outcome"] not in DIVERGENT:
            continue
        d = r.get("divergence") or {}
        out.append({
            "spec": r["nodeid"], "clauses": r.get("clauses", []), "level": r.get("level"),
            "backend": r.get("backend"), "outcome": r["outcome"], "message": r.get("message", ""),
            "expected": d.get("expected"), "observed": d.get("observed"),
            "case": d.get("case"), "replay": d.get("replay", ""),
            "expectation": {k: r[k] for k in ("expected", "reason", "link") if k in r},
            "fails_gate": fails_gate(r),
        })
    return out


#: how many UNSUPPORTED reasons and never-ran specs summary.md lists (index.html lists all)
MD_UNSUPPORTED_LIMIT = 20
MD_NEVER_RAN_LIMIT = 50


def markdown(summary: dict[str, Any], divs: list[dict[str, Any]]) -> str:
    """summary.md: the verdict and why as the headline, totals and the per-area table, the run
    at a glance (the console's lines: clauses verified / cited, completeness, leaks,
    process-global state, order, capability probes), UNSUPPORTED by reason, the specs that
    never ran, divergences."""
    t = summary["totals"]
    cols = [c for c in COLUMNS if t.get(c) or c in ("PASS", "FAIL", "CHANGED")]
    v = html.verdict_view(summary)
    lines = [f"# Model RI conformance: {summary['backend']}", "",
             f"**Gate: {v['verdict']}**" + (f" (exit {v['exit_code']})"
                                            if v.get("exit_code") is not None else "")
             + (f": {v['why']}" if v.get("why") else ""), "",
             ", ".join(f"{c} {t.get(c, 0)}" for c in cols), "",
             "| area | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    for area, cnt in summary["areas"].items():
        lines.append(f"| {area} | " + " | ".join(str(cnt.get(c, 0)) for c in cols) + " |")
    lines += ["", "## Run", ""]
    # an indented line (a capability a probe removed) belongs to the line above it
    lines += [f"  - {line.strip()}" if line.startswith(" ") else f"- {line}"
              for line in glance_lines(summary)]
    lines += [""] + _md_unsupported(summary) + _md_never_ran(summary)
    lines += [f"## Divergences ({len(divs)})", ""]
    for d in divs:
        lines.append(f"- **{d['outcome']}** `{d['spec']}` [{', '.join(d['clauses'])}]: "
                     f"{d['message']}" + (f" — reproduce: `{d['replay']}`" if d["replay"] else ""))
    return "\n".join(lines) + "\n"


def glance_lines(summary: dict[str, Any]) -> list[str]:
    """The one-line facts of a run, worded as on the console (conformance.summary): clauses
    verified beside cited, completeness, leaks ("not checked" is not "0 of N"), process-global
    state, order, capability probes."""
    lines = [html.coverage_line(summary), completeness_line(summary), leak_line(summary)]
    if "state" in summary:
        lines.append(state_line(summary))
    if summary.get("order"):
        lines.append(order_line(summary["order"]))
    return lines + html.probe_lines(summary.get("probe"))


def _md_unsupported(summary: dict[str, Any]) -> list[str]:
    groups = summary.get("unsupported") or []
    if not groups:
        return ["UNSUPPORTED: none.", ""]
    total = sum(g["count"] for g in groups)
    lines = [f"## UNSUPPORTED by reason ({total} spec(s), {len(groups)} reason(s))", "",
             "| count | reason | example |", "|---:|---|---|"]
    for g in groups[:MD_UNSUPPORTED_LIMIT]:
        lines.append(f"| {g['count']} | {_md_cell(g['reason'])} | `{g.get('example', '')}` |")
    if len(groups) > MD_UNSUPPORTED_LIMIT:
        rest = groups[MD_UNSUPPORTED_LIMIT:]
        lines += ["", f"... {len(rest)} more reason(s), {sum(g['count'] for g in rest)} "
                      "spec(s) (summary.json, index.html)"]
    return lines + [""]


def _md_never_ran(summary: dict[str, Any]) -> list[str]:
    never = (summary.get("completeness") or {}).get("never_ran") or []
    if not never:
        return []
    lines = [f"## Never ran ({len(never)})", ""]
    lines += [f"- `{n}`" for n in never[:MD_NEVER_RAN_LIMIT]]
    if len(never) > MD_NEVER_RAN_LIMIT:
        lines.append(f"- ... {len(never) - MD_NEVER_RAN_LIMIT} more (index.html)")
    return lines + [""]


def _md_cell(text: str) -> str:
    """Text in a table cell: one line, no column breaks (the words as on the console)."""
    return " ".join(str(text).split()).replace("|", "\\|")


def write_all(report_dir: Path, rows: list[dict[str, Any]], summary: dict[str, Any]) -> None:
    """Write every artefact; each file is written whole (a reader never sees half a file)."""
    divs = divergences(rows)
    write_summary_json(report_dir, summary)
    write_text(report_dir / "divergences.json", json.dumps(divs, indent=2) + "\n")
    write_text(report_dir / "summary.md", markdown(summary, divs))
    write_text(report_dir / "clauses.html", html.render_clauses())
    kill = report_dir / "kill_matrix.html"
    write_text(report_dir / "index.html",
           html.render(summary, rows, kill.read_text() if kill.is_file() else ""))


def write_summary_json(report_dir: Path, summary: dict[str, Any]) -> None:
    """summary.json alone (also rewritten when the run adds to the summary afterwards)."""
    write_text(Path(report_dir) / "summary.json", json.dumps(summary, indent=2) + "\n")
