"""The static HTML report (jinja2): the verdict and why as the headline, the run at a glance
(clauses verified / cited, completeness, leaks, process-global state, order, capability
probes), UNSUPPORTED by reason, the specs that never ran, area table, clause x outcome matrix,
divergences, side effects, fingerprint."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable

import jinja2

from mdlri_conformance.conformance import leaks, registry
from mdlri_conformance.conformance.engine import graphs
from mdlri_conformance.conformance.global_state import describe as describe_state
from mdlri_conformance.conformance.summary import (clauses_line, completeness_line, leak_line, order_line,
                                 probe_lines, state_line)

from .svg import case_svg

COLUMNS = ("PASS", "FAIL", "CHANGED", "XFAIL", "XPASS", "UNSUPPORTED", "ERROR", "TIMEOUT",
           "CRASH", "SKIP")
NOT_PASSING = {"FAIL", "CHANGED", "XPASS", "ERROR", "TIMEOUT", "CRASH"}
SHOWN = NOT_PASSING | {"XFAIL"}


def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("mdlri_conformance.reports", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]), keep_trailing_newline=True)


def divergence_view(row: dict[str, Any]) -> dict[str, Any]:
    """A result row prepared for the template (with the SVG of its case, if any)."""
    d = dict(row)
    div = row.get("divergence") or {}
    d.update({k: div.get(k) for k in ("expected", "observed", "replay")})
    case = div.get("case")
    d["case"] = json.dumps(case, indent=1) if case else None
    d["svg"] = None
    if case:
        try:
            d["svg"] = case_svg(graphs.from_dict(case), title=row["nodeid"].split("::")[-1])
        except graphs.GraphError:
            d["svg"] = None
    return d


def render(summary: dict[str, Any], rows: Iterable[dict[str, Any]],
           kill_matrix_html: str = "") -> str:
    """The report page as a string."""
    rows = list(rows)
    per_clause: dict[str, Counter[str]] = defaultdict(Counter)
    for r in rows:
        for c in r.get("clauses", []):
            per_clause[c][r["outcome"]] += 1
    matrix: dict[str, list[dict[str, Any]]] = defaultdict(list)
    group_bad: dict[str, int] = defaultdict(int)
    for c in registry.clauses().values():
        counts = per_clause.get(c.id, Counter())
        key = f"{c.group} ({c.area})"
        matrix[key].append({"id": c.id, "level": c.level, "title": c.title,
                            "disagree": c.disagree, "counts": counts})
        if any(counts.get(o) for o in NOT_PASSING):
            group_bad[key] += 1
    divergences = [divergence_view(r) for r in rows if r["outcome"] in SHOWN]
    return _env().get_template("report.html.j2").render(
        summary=summary, columns=COLUMNS, matrix=matrix, group_bad=group_bad,
        divergences=divergences, fingerprint=summary.get("fingerprint", {}),
        kill_matrix=kill_matrix_html, side_effects=side_effects(rows),
        verdict=verdict_view(summary), clauses_line=coverage_line(summary),
        completeness=summary.get("completeness") or {},
        completeness_line=completeness_line(summary),
        leaks=leaks_view(summary), unsupported=summary.get("unsupported") or [],
        probe=summary.get("probe") or {}, probe_lines=probe_lines(summary.get("probe")),
        state_line=state_line(summary) if "state" in summary else "",
        order_line=order_line(summary["order"]) if summary.get("order") else "")


def verdict_view(summary: dict[str, Any]) -> dict[str, Any]:
    """The verdict (``summary["verdict"]``; an older summary's gate otherwise) with the CSS
    class that colours it: ``v-pass``, ``v-fail``, ``v-nothing-tested``, ``v-incomplete``."""
    v = summary.get("verdict")
    if not (isinstance(v, dict) and v.get("verdict")):
        v = {"verdict": str(summary.get("gate", "unknown")).upper(), "exit_code": None, "why": ""}
    return {**v, "css": "v-" + "-".join(str(v["verdict"]).lower().split())}


def coverage_line(summary: dict[str, Any]) -> str:
    """The console's clause line: verified in this run beside cited, reasoned, the gap."""
    cov = summary["coverage"]
    line = clauses_line(summary)
    if "reasoned" in cov and "neither" in cov:
        line += (f"; reasoned {cov['reasoned']}, neither {cov['neither']} (the gap, listed in "
                 "summary.json)")
    return line


def leaks_view(summary: dict[str, Any]) -> dict[str, Any]:
    """The leak check as the console words it, and whether it ran at all (``checked``), so
    that "not checked" and "none of N" look different."""
    lk = summary.get("leaks") or {}
    return {"line": leak_line(summary), "checked": bool(lk.get("checked_specs")),
            "leaking": lk.get("leaking_specs") or 0}


def side_effects(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Specs that changed process-global state or leaked resources (reported, not gated)."""
    out = []
    for r in rows:
        changed = (r.get("state") or {}).get("changed") or {}
        if changed or r.get("leaks"):
            out.append({"nodeid": r["nodeid"], "outcome": r["outcome"],
                        "state": describe_state(changed),
                        "restored": ", ".join((r.get("state") or {}).get("restored") or []),
                        "leaks": leaks.describe(r["leaks"]) if r.get("leaks") else ""})
    return out


def write(report_dir: Path, summary: dict[str, Any], rows: Iterable[dict[str, Any]]) -> Path:
    """Write index.html into the report directory; returns its path."""
    out = report_dir / "index.html"
    out.write_text(render(summary, rows), encoding="utf-8")
    return out


def render_clauses() -> str:
    """clauses.html: every catalog clause with its level and source (the target of the
    per-clause links in the Allure results)."""
    rows = "\n".join(
        f'<tr id="{c.id}"><td><code>{c.id}</code></td><td>{c.level}</td><td>{_esc(c.title)}</td>'
        f'<td>{_esc(c.src)}</td><td>{"disagree" if c.disagree else ""}</td></tr>'
        for c in registry.clauses().values())
    return ("<!doctype html><html><head><meta charset='utf-8'><title>Model RI clauses</title>"
            "<style>body{font-family:system-ui,sans-serif} td{border-bottom:1px solid #ddd;"
            "padding:2px 6px;vertical-align:top;font-size:.9em}</style></head><body>"
            "<h1>Behaviour catalog clauses</h1><table><tr><th>id</th><th>level</th><th>title</th>"
            f"<th>source</th><th></th></tr>{rows}</table></body></html>\n")


def _esc(text: str) -> str:
    import html as _html
    return _html.escape(text)
