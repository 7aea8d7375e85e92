"""The figures of a mutation run: totals, per module, per function and per clause, and the
survivors (the places where the specs cannot tell right from wrong).

Counting rules: ``timeout`` counts as killed (the suite did not pass the mutant); the score is
killed / (killed + survived + unreached), the mutants the suite had a chance to see, so an
unreached line lowers it; ``not-run`` (budget spent) is outside the score. A mutant belongs to
every clause cited by a passing spec that executes its line; a mutant no spec reaches, or one
on a line that runs only at import, has no clause and is listed under ``(no spec)``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable

NO_CLAUSE = "(no spec)"
_KILLED = ("killed", "timeout")


def _count(entries: Iterable[dict[str, Any]]) -> dict[str, int]:
    c = {"mutants": 0, "killed": 0, "timeout": 0, "survived": 0, "unreached": 0, "not-run": 0}
    for e in entries:
        c["mutants"] += 1
        c[e["status"]] += 1
        if e["status"] == "timeout":
            c["killed"] += 1
    return c


def score(c: dict[str, int]) -> float | None:
    seen = c["killed"] + c["survived"] + c["unreached"]
    return round(c["killed"] / seen, 4) if seen else None


def summarise(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals and the per-module, per-function, per-operator and per-clause counts."""
    by: dict[str, dict[str, list[dict[str, Any]]]] = {
        k: defaultdict(list) for k in ("module", "function", "operator", "clause")}
    for e in entries:
        by["module"][e["module"]].append(e)
        by["function"][f"{e['module']}::{e['function']}"].append(e)
        by["operator"][e["operator"]].append(e)
        for c in e.get("clauses") or [NO_CLAUSE]:
            by["clause"][c].append(e)
    total = _count(entries)
    out: dict[str, Any] = {"total": {**total, "score": score(total)}}
    for key, groups in by.items():
        out[f"by_{key}"] = {name: {**_count(es), "score": score(_count(es))}
                            for name, es in sorted(groups.items())}
    return out


def survivors(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Survived and unreached mutants, by module and line."""
    return sorted((e for e in entries if e["status"] in ("survived", "unreached")),
                  key=lambda e: (e["module"], e["line"], e["col"], e["operator"]))


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.0f}%"


def _row(name: str, c: dict[str, Any], width: int) -> str:
    return (f"{name:<{width}} {c['mutants']:>7} {c['killed']:>6} {c['timeout']:>7} "
            f"{c['survived']:>8} {c['unreached']:>9} {c['not-run']:>7} {_pct(c['score']):>6}")


def _table(title: str, groups: dict[str, dict[str, Any]], width: int) -> list[str]:
    head = (f"{title:<{width}} {'mutants':>7} {'killed':>6} {'timeout':>7} {'survived':>8} "
            f"{'unreached':>9} {'not-run':>7} {'score':>6}")
    return [head] + [_row(n, c, width) for n, c in groups.items()]


def _short(text: str, n: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= n else one[:n - 3] + "..."


def text_lines(summary: dict[str, Any], entries: list[dict[str, Any]],
               limit: int = 40) -> list[str]:
    """The readable summary: per module, per clause with survivors, then survivor lines."""
    lines = _table("module", summary["by_module"], 28)
    lines.append(_row("total", summary["total"], 28))
    lines.append("")
    clauses = {k: v for k, v in summary["by_clause"].items() if v["survived"] or v["unreached"]}
    lines += _table("clause (with survivors)", clauses, 28)
    surv = survivors(entries)
    if surv:
        lines.append("")
        lines.append(f"survivors ({len(surv)}; first {min(limit, len(surv))}; all in "
                     "mutation.json):")
        for e in surv[:limit]:
            lines.append(f"  {e['status']:<9} {e['module']}:{e['line']} {e['function']} "
                         f"[{e['operator']}] {_short(e['original'], 40)!r} -> "
                         f"{_short(e['mutated'], 40)!r}  {_clauses(e['clauses'])}"
                         + (f"  ({e['message']})" if e.get("message") else ""))
    return lines


def _clauses(ids: list[str], most: int = 5) -> str:
    if not ids:
        return NO_CLAUSE
    more = len(ids) - most
    return ",".join(ids[:most]) + (f" +{more} more" if more > 0 else "")


def markdown(summary: dict[str, Any], entries: list[dict[str, Any]]) -> str:
    """Per-module and per-clause tables and every survivor, as Markdown."""
    def table(title: str, groups: dict[str, dict[str, Any]]) -> list[str]:
        rows = [f"| {title} | mutants | killed | timeout | survived | unreached | not-run | "
                "score |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
        rows += [f"| {n} | {c['mutants']} | {c['killed']} | {c['timeout']} | {c['survived']} "
                 f"| {c['unreached']} | {c['not-run']} | {_pct(c['score'])} |"
                 for n, c in groups.items()]
        return rows

    t = summary["total"]
    out = [f"Total: {t['mutants']} mutants, {t['killed']} killed (of which {t['timeout']} "
           f"timeouts), {t['survived']} survived, {t['unreached']} unreached, "
           f"{t['not-run']} not run; score {_pct(t['score'])}.", ""]
    out += table("module", summary["by_module"]) + [""]
    out += table("operator", summary["by_operator"]) + [""]
    out += table("clause", summary["by_clause"]) + [""]
    out += ["| status | where | function | operator | original | mutated | clauses |",
            "|---|---|---|---|---|---|---|"]
    for e in survivors(entries):
        esc = [_short(x, 70).replace("|", "\\|") for x in (e["original"], e["mutated"])]
        out.append(f"| {e['status']} | {e['module']}:{e['line']} | {e['function']} | "
                   f"{e['operator']} | `{esc[0]}` | `{esc[1]}` | "
                   f"{', '.join(e['clauses']) or NO_CLAUSE} |")
    return "\n".join(out) + "\n"


__all__ = ["NO_CLAUSE", "markdown", "score", "summarise", "survivors", "text_lines"]
