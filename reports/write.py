"""The texts of a run's artefacts (the framework writes them into the report directory:
conformance/framework/verdicts/artefacts.py).

``summary.json`` (per-area counts, coverage, fingerprint, gate), ``divergences.json`` (every
result that is not a plain pass, with its expected/observed values, case and reproducer; those
that fail the gate first), ``summary.md`` (the same at a glance, for CI pages) and
``index.html`` (reports/html.py).
JUnit XML and Allure results are written by pytest and allure-pytest themselves.

Plain data in, text out: the rows, the summary and the framework's ``facts`` (the console's
lines, the clauses, the columns, which rows fail the gate).
"""

from __future__ import annotations

import json
from typing import Any

from . import html
from .stack import stack_text



def divergences(rows: list[dict[str, Any]], facts: dict[str, Any]) -> list[dict[str, Any]]:
    """The divergence records: spec, level, backend, outcome, expected/observed, reproducer
    (``facts["fails_gate"]``: per row, whether it fails the gate). Every result that is not a
    plain pass, and every one that fails the gate; those that fail it first, in the order of
    index.html (:func:`.html.divergence_order`)."""
    out = []
    for r, gate in html.divergence_order(rows, facts["fails_gate"], facts["columns"]):
        d = r.get("divergence") or {}
        out.append({
            "spec": r["nodeid"], "clauses": r.get("clauses", []), "level": r.get("level"),
            "backend": r.get("backend"), "outcome": r["outcome"], "message": r.get("message", ""),
            "expected": d.get("expected"), "observed": d.get("observed"),
            "case": d.get("case"), "replay": d.get("replay", ""),
            "expectation": {k: r[k] for k in ("expected", "reason", "link") if k in r},
            "fails_gate": gate,
        })
    return out


#: how many UNSUPPORTED reasons and never-ran specs summary.md lists (index.html lists all)
MD_UNSUPPORTED_LIMIT = 20
MD_NEVER_RAN_LIMIT = 50


def markdown(summary: dict[str, Any], divs: list[dict[str, Any]], facts: dict[str, Any]) -> str:
    """summary.md: the verdict and why as the headline, totals and the per-area table, the run
    at a glance (the console's lines: clauses verified / cited, completeness, leaks,
    process-global state, order, capability probes), UNSUPPORTED by reason, the specs that
    never ran, divergences."""
    t = summary["totals"]
    cols = [c for c in facts["columns"] if t.get(c) or c in ("PASS", "FAIL", "CHANGED")]
    v = html.verdict_view(summary)
    head = stack_text(summary) if summary.get("backend") else "backend not recorded"
    lines = [f"# Model RI conformance: {head}", "",
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
              for line in glance_lines(summary, facts)]
    lines += [""] + _md_unsupported(summary) + _md_never_ran(summary)
    failing = sum(1 for d in divs if d["fails_gate"])
    lines += [f"## Divergences ({len(divs)}: {failing} fail the gate, listed first)", ""]
    for d in divs:
        lines.append(f"- **{d['outcome']}**" + (" (fails the gate)" if d["fails_gate"] else "")
                     + f" `{d['spec']}` [{', '.join(d['clauses'])}]: {d['message']}"
                     + (f" — reproduce: `{d['replay']}`" if d["replay"] else ""))
    return "\n".join(lines) + "\n"


def glance_lines(summary: dict[str, Any], facts: dict[str, Any]) -> list[str]:
    """The one-line facts of a run, worded as on the console
    (conformance/framework/verdicts/summary.py): clauses verified beside cited, completeness, leaks ("not checked" is not "0 of N"),
    process-global state, order, capability probes."""
    lines = facts["lines"]
    out = [html.coverage_line(summary, facts), lines["completeness"], lines["leaks"]]
    if "state" in summary:
        out.append(lines["state"])
    if summary.get("order"):
        out.append(lines["order"])
    return out + list(lines["probe"])


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


def render_all(rows: list[dict[str, Any]], summary: dict[str, Any], facts: dict[str, Any],
               kill_matrix_html: str = "") -> dict[str, str]:
    """Every artefact but ``summary.json``, file name -> text, in the order they are written."""
    divs = divergences(rows, facts)
    return {"divergences.json": json.dumps(divs, indent=2) + "\n",
            "summary.md": markdown(summary, divs, facts),
            "clauses.html": html.render_clauses(facts["clauses"]),
            "index.html": html.render(summary, rows, facts, kill_matrix_html)}
