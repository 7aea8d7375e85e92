"""The per-area summary of a run and the clause-coverage gap."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Iterable

from . import registry

COLUMNS = ("PASS", "FAIL", "CHANGED", "UNSUPPORTED", "ERROR", "SKIP")


def build_summary(results: Iterable[dict[str, Any]], cited: Iterable[str],
                  backend: str) -> dict[str, Any]:
    """Counts per area and outcome, totals, coverage per clause group, and the gap list."""
    per_area: dict[str, Counter[str]] = defaultdict(Counter)
    totals: Counter[str] = Counter()
    fingerprints: dict[str, Any] = {}
    for row in results:
        per_area[row["area"]][row["outcome"]] += 1
        totals[row["outcome"]] += 1
        for k, v in (row.get("fingerprint") or {}).items():
            fingerprints[k] = v
    cited_set = set(cited)
    groups: dict[str, dict[str, Any]] = {}
    for c in registry.clauses().values():
        g = groups.setdefault(c.group, {"total": 0, "covered": 0, "uncovered": []})
        g["total"] += 1
        if c.id in cited_set:
            g["covered"] += 1
        else:
            g["uncovered"].append(c.id)
    return {
        "backend": backend,
        "areas": {a: dict(cnt) for a, cnt in sorted(per_area.items())},
        "totals": dict(totals),
        "coverage": {
            "cited": len(cited_set),
            "catalog": len(registry.clauses()),
            "groups": groups,
        },
        "fingerprint": fingerprints,
        "gate": "pass" if totals["FAIL"] == 0 and totals["ERROR"] == 0 else "fail",
    }


def format_table(summary: dict[str, Any]) -> list[str]:
    """The summary as aligned text lines: one row per area, a total row, coverage."""
    width = max([len(a) for a in summary["areas"]] + [5])
    head = f"{'area':<{width}}  " + "  ".join(f"{c:>11}" for c in COLUMNS)
    lines = [head, "-" * len(head)]
    for area, cnt in summary["areas"].items():
        lines.append(f"{area:<{width}}  " + "  ".join(f"{cnt.get(c, 0):>11}" for c in COLUMNS))
    lines.append("-" * len(head))
    t = summary["totals"]
    lines.append(f"{'total':<{width}}  " + "  ".join(f"{t.get(c, 0):>11}" for c in COLUMNS))
    cov = summary["coverage"]
    lines.append(f"clauses cited by specs: {cov['cited']} of {cov['catalog']} "
                 f"(the rest are the coverage gap, listed in summary.json)")
    lines.append("per group: " + " ".join(f"{g} {v['covered']}/{v['total']}"
                                           for g, v in cov["groups"].items()))
    lines.append(f"gate: {summary['gate'].upper()} (backend {summary['backend']})")
    return lines
