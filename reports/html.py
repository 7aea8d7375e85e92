"""The static HTML report (jinja2): the verdict and why as the headline, with the specs that
fail the gate named and linked to their entries, the run at a glance (clauses verified /
cited, completeness, leaks, process-global state, order, capability probes), UNSUPPORTED by
reason, the specs that never ran, area table, clause x outcome matrix, divergences (those
that fail the gate first), side effects, fingerprint. Every clause id links to its row in the
run's ``clauses.html``.

It renders plain data only: the run's rows and summary, and the ``facts`` the framework
words for it (conformance/framework/verdicts/artefacts.py: the console's lines, the catalog's
clauses, the columns, each side effect described)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Any, Iterable

import jinja2

from .stack import stack_text
from .svg import CaseError, case_svg

NOT_PASSING = {"FAIL", "CHANGED", "XPASS", "ERROR", "TIMEOUT", "CRASH"}
SHOWN = NOT_PASSING | {"XFAIL"}
#: how many gate failures the verdict banner names (each links to its entry; the rest are
#: first under Divergences)
BANNER_LIMIT = 10
#: where each clause id links to: the run's catalog page, beside index.html
CLAUSE_HREF = "clauses.html#{id}"


def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("mdlri_conformance.reports", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]), keep_trailing_newline=True)
    env.filters["clause_href"] = lambda cid: CLAUSE_HREF.format(id=cid)
    return env


def divergence_view(row: dict[str, Any], fails_gate: bool = False,
                    anchor: str = "") -> dict[str, Any]:
    """A result row prepared for the template (with the SVG of its case, if any): whether it
    fails the gate, its anchor in the page (``div-N``) and its label (``CHANGED (gated)``)."""
    d = dict(row)
    div = row.get("divergence") or {}
    d.update({k: div.get(k) for k in ("expected", "observed", "replay")})
    d.update(fails_gate=fails_gate, anchor=anchor, label=outcome_label(row))
    case = div.get("case")
    d["case"] = json.dumps(case, indent=1) if case else None
    d["svg"] = None
    if case:
        try:
            d["svg"] = case_svg(case, title=row["nodeid"].split("::")[-1])
        except CaseError:
            d["svg"] = None
    return d


def outcome_label(row: dict[str, Any]) -> str:
    """The outcome as the reports name it: ``CHANGED (gated)`` for a CHANGED that fails the
    gate, ``UNSUPPORTED (required)`` for one on a required capability."""
    outcome = str(row.get("outcome", ""))
    if outcome == "CHANGED" and row.get("gated"):
        return "CHANGED (gated)"
    if outcome == "UNSUPPORTED" and row.get("required"):
        return "UNSUPPORTED (required)"
    return outcome


def divergence_order(rows: list[dict[str, Any]], fails_gate: list[bool],
                     columns: list[str]) -> list[tuple[dict[str, Any], bool]]:
    """The rows the report lists under Divergences, with whether each fails the gate: those
    that fail the gate first, then the others (CHANGED before XFAIL ...); within each, by
    outcome in the columns' order, then in the run's order."""
    rank = {c: i for i, c in enumerate(columns)}
    shown = [(i, r, gate) for i, (r, gate) in enumerate(zip(rows, fails_gate))
             if gate or r["outcome"] in SHOWN]
    shown.sort(key=lambda t: (not t[2], rank.get(t[1]["outcome"], len(rank)), t[0]))
    return [(r, gate) for _, r, gate in shown]


def backend_name(summary: dict[str, Any]) -> str:
    """The run's backend and the stack it tested (:func:`.stack.stack_text`), or ``not
    recorded`` (an empty results file names none)."""
    return stack_text(summary)


def render(summary: dict[str, Any], rows: Iterable[dict[str, Any]], facts: dict[str, Any],
           kill_matrix_html: str = "") -> str:
    """The report page as a string."""
    rows = list(rows)
    per_clause: dict[str, Counter[str]] = defaultdict(Counter)
    for r in rows:
        for c in r.get("clauses", []):
            per_clause[c][r["outcome"]] += 1
    matrix: dict[str, list[dict[str, Any]]] = defaultdict(list)
    group_bad: dict[str, int] = defaultdict(int)
    for c in facts["clauses"]:
        counts = per_clause.get(c["id"], Counter())
        key = f"{c['group']} ({c['area']})"
        matrix[key].append({"id": c["id"], "level": c["level"], "title": c["title"],
                            "disagree": c["disagree"], "counts": counts})
        if any(counts.get(o) for o in NOT_PASSING):
            group_bad[key] += 1
    divergences = [divergence_view(r, gate, f"div-{n}") for n, (r, gate) in
                   enumerate(divergence_order(rows, facts["fails_gate"], facts["columns"]), 1)]
    gate_failures = [d for d in divergences if d["fails_gate"]]
    return _env().get_template("report.html.j2").render(
        summary=summary, backend=backend_name(summary), columns=facts["columns"],
        matrix=matrix, group_bad=group_bad, divergences=divergences,
        gate_failures=gate_failures, others=[d for d in divergences if not d["fails_gate"]],
        banner_limit=BANNER_LIMIT, fingerprint=summary.get("fingerprint", {}),
        kill_matrix=kill_matrix_html, side_effects=facts["side_effects"],
        verdict=verdict_view(summary), clauses_line=coverage_line(summary, facts),
        completeness=summary.get("completeness") or {},
        completeness_line=facts["lines"]["completeness"],
        leaks=leaks_view(summary, facts), unsupported=summary.get("unsupported") or [],
        probe=summary.get("probe") or {}, probe_lines=facts["lines"]["probe"],
        state_line=facts["lines"]["state"], order_line=facts["lines"]["order"])


def verdict_view(summary: dict[str, Any]) -> dict[str, Any]:
    """The verdict (``summary["verdict"]``; an older summary's gate otherwise) with the CSS
    class that colours it: ``v-pass``, ``v-fail``, ``v-nothing-tested``, ``v-incomplete``."""
    v = summary.get("verdict")
    if not (isinstance(v, dict) and v.get("verdict")):
        v = {"verdict": str(summary.get("gate", "unknown")).upper(), "exit_code": None, "why": ""}
    return {**v, "css": "v-" + "-".join(str(v["verdict"]).lower().split())}


def coverage_line(summary: dict[str, Any], facts: dict[str, Any]) -> str:
    """The console's clause line: verified in this run beside cited, reasoned, the gap."""
    cov = summary["coverage"]
    line = facts["lines"]["clauses"]
    if "reasoned" in cov and "neither" in cov:
        line += (f"; reasoned {cov['reasoned']}, neither {cov['neither']} (the gap, listed in "
                 "summary.json)")
    return line


def leaks_view(summary: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any]:
    """The leak check as the console words it, and whether it ran at all (``checked``), so
    that "not checked" and "none of N" look different."""
    lk = summary.get("leaks") or {}
    return {"line": facts["lines"]["leaks"], "checked": bool(lk.get("checked_specs")),
            "leaking": lk.get("leaking_specs") or 0}


def render_clauses(clauses: Iterable[dict[str, Any]]) -> str:
    """clauses.html: every catalog clause with its level and source (the target of the
    per-clause links in the Allure results)."""
    rows = "\n".join(
        f'<tr id="{c["id"]}"><td><code>{c["id"]}</code></td><td>{c["level"]}</td>'
        f'<td>{_esc(c["title"])}</td>'
        f'<td>{_esc(c["src"])}</td><td>{"disagree" if c["disagree"] else ""}</td></tr>'
        for c in clauses)
    return ("<!doctype html><html><head><meta charset='utf-8'><title>Model RI clauses</title>"
            "<style>body{font-family:system-ui,sans-serif} td{border-bottom:1px solid #ddd;"
            "padding:2px 6px;vertical-align:top;font-size:.9em}</style></head><body>"
            "<h1>Behaviour catalog clauses</h1><table><tr><th>id</th><th>level</th><th>title</th>"
            f"<th>source</th><th></th></tr>{rows}</table></body></html>\n")


def _esc(text: str) -> str:
    import html as _html
    return _html.escape(text)
