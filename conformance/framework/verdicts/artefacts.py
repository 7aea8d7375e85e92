"""Writing a run's artefacts into its report directory.

The framework words the facts (the console's lines, the catalog's clauses, which rows fail
the gate, each side effect described) and hands them to ``reports/`` as plain data; the
reports render the texts and this module writes each file whole (:func:`.rundir.write_text`:
a reader never sees half a file). ``summary.json`` first, then ``divergences.json``,
``summary.md``, ``clauses.html`` and ``index.html`` (with ``kill_matrix.html`` inside when
the run has one).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from mdlri_conformance.reports.write import render_all

from .. import global_state, leaks, registry
from ..rundir import write_text
from .summary import (COLUMNS, clauses_line, completeness_line, fails_gate, leak_line, order_line,
                      probe_lines, state_line)


def side_effects(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Specs that changed process-global state or leaked resources (reported, not gated)."""
    out = []
    for r in rows:
        changed = (r.get("state") or {}).get("changed") or {}
        if changed or r.get("leaks"):
            out.append({"nodeid": r["nodeid"], "outcome": r["outcome"],
                        "state": global_state.describe(changed),
                        "restored": ", ".join((r.get("state") or {}).get("restored") or []),
                        "leaks": leaks.describe(r["leaks"]) if r.get("leaks") else ""})
    return out


def report_facts(summary: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """What the reports show beside the rows and the summary, as plain data."""
    return {
        "columns": list(COLUMNS),
        "lines": {"clauses": clauses_line(summary), "completeness": completeness_line(summary),
                  "leaks": leak_line(summary),
                  "state": state_line(summary) if "state" in summary else "",
                  "order": order_line(summary["order"]) if summary.get("order") else "",
                  "probe": probe_lines(summary.get("probe"))},
        "clauses": [{"id": c.id, "group": c.group, "area": c.area, "level": c.level,
                     "title": c.title, "src": c.src, "disagree": c.disagree}
                    for c in registry.clauses().values()],
        "side_effects": side_effects(rows),
        "fails_gate": [fails_gate(r) for r in rows],
    }


def write_all(report_dir: Path, rows: list[dict[str, Any]], summary: dict[str, Any]) -> None:
    """Write every artefact; each file is written whole (a reader never sees half a file)."""
    report_dir = Path(report_dir)
    facts = report_facts(summary, rows)
    write_summary_json(report_dir, summary)
    kill = report_dir / "kill_matrix.html"
    texts = render_all(rows, summary, facts, kill.read_text() if kill.is_file() else "")
    for name, text in texts.items():
        write_text(report_dir / name, text)


def write_summary_json(report_dir: Path, summary: dict[str, Any]) -> None:
    """summary.json alone (also rewritten when the run adds to the summary afterwards)."""
    write_text(Path(report_dir) / "summary.json", json.dumps(summary, indent=2) + "\n")
