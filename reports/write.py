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

from conformance.summary import COLUMNS, fails_gate, order_line, state_line

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


def markdown(summary: dict[str, Any], divs: list[dict[str, Any]]) -> str:
    """summary.md: gate, per-area table, divergences."""
    t = summary["totals"]
    cols = [c for c in COLUMNS if t.get(c) or c in ("PASS", "FAIL", "CHANGED")]
    lines = [f"# Model RI conformance: {summary['backend']}", "",
             f"**Gate: {summary['gate'].upper()}**  " + ", ".join(f"{c} {t.get(c, 0)}"
                                                             for c in cols), "",
             "| area | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    for area, cnt in summary["areas"].items():
        lines.append(f"| {area} | " + " | ".join(str(cnt.get(c, 0)) for c in cols) + " |")
    cov = summary["coverage"]
    lines += ["", f"Clauses cited: {cov['cited']} of {cov['catalog']}.", ""]
    if "state" in summary:
        lines += [state_line(summary) + ".", ""]
    if summary.get("leaking_specs"):
        lines += [f"Leaking specs: {summary['leaking_specs']} (reported, not gated).", ""]
    if summary.get("order"):
        lines += [order_line(summary["order"]) + ".", ""]
    lines += [f"## Divergences ({len(divs)})", ""]
    for d in divs:
        lines.append(f"- **{d['outcome']}** `{d['spec']}` [{', '.join(d['clauses'])}]: "
                     f"{d['message']}" + (f" — reproduce: `{d['replay']}`" if d["replay"] else ""))
    return "\n".join(lines) + "\n"


def write_all(report_dir: Path, rows: list[dict[str, Any]], summary: dict[str, Any]) -> None:
    """Write every artefact; each file is written whole (a reader never sees half a file)."""
    divs = divergences(rows)
    write_summary_json(report_dir, summary)
    _write(report_dir / "divergences.json", json.dumps(divs, indent=2) + "\n")
    _write(report_dir / "summary.md", markdown(summary, divs))
    _write(report_dir / "clauses.html", html.render_clauses())
    kill = report_dir / "kill_matrix.html"
    _write(report_dir / "index.html",
           html.render(summary, rows, kill.read_text() if kill.is_file() else ""))


def write_summary_json(report_dir: Path, summary: dict[str, Any]) -> None:
    """summary.json alone (also rewritten when the run adds to the summary afterwards)."""
    _write(Path(report_dir) / "summary.json", json.dumps(summary, indent=2) + "\n")


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
