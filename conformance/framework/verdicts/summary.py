"""The per-area summary of a run: counts, the clause-coverage gap and the clauses verified,
UNSUPPORTED grouped by reason, leaks, process-global state, completeness and the verdict
(:mod:`conformance.verdict`)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Any, Iterable

from mdlri_conformance.reports.stack import stack_text

from .. import registry
from . import verdict

COLUMNS = ("PASS", "FAIL", "CHANGED", "XFAIL", "XPASS", "UNSUPPORTED", "ERROR", "TIMEOUT",
           "CRASH", "SKIP")
#: outcomes that fail the gate on their own (a CHANGED row fails it only when gated)
GATE_FAILING = {"FAIL", "ERROR", "XPASS", "TIMEOUT", "CRASH"}


def fails_gate(row: dict[str, Any]) -> bool:
    """True if this result fails the gate."""
    return row["outcome"] in GATE_FAILING or bool(row.get("gated"))


def build_summary(results: Iterable[dict[str, Any]], cited: Iterable[str],
                  backend: str, *, collected: list[str] | None = None,
                  ended: str = "complete", selection: str = "",
                  probe: dict[str, Any] | None = None,
                  stack: dict[str, str] | None = None) -> dict[str, Any]:
    """Counts per area and outcome, totals, coverage per clause group and the gap list, the
    clauses verified, UNSUPPORTED by reason, leaks, completeness and the verdict.

    ``collected``: the node ids selected to run (None: not recorded); ``ended``: how the run
    ended (:func:`conformance.verdict.completeness`); ``selection``: the -k / -m expression;
    ``probe``: the capability probes' findings (:func:`probe_summary`), whose failures (a
    wrong answer, a promised capability taken away) fail the gate; ``stack``: the stack under
    test (:func:`merged_stack`), None when no process reported one."""
    rows = list(results)
    per_area: dict[str, Counter[str]] = defaultdict(Counter)
    totals: Counter[str] = Counter()
    fingerprints: dict[str, Any] = {}
    for row in rows:
        per_area[row["area"]][row["outcome"]] += 1
        totals[row["outcome"]] += 1
        for k, v in (row.get("fingerprint") or {}).items():
            fingerprints[k] = v
    state = state_summary(rows)
    cited_set = set(cited)
    reasons = registry.untestable()
    groups: dict[str, dict[str, Any]] = {}
    for c in registry.clauses().values():
        g = groups.setdefault(c.group, {"total": 0, "covered": 0, "reasoned": 0,
                                        "uncovered": []})
        g["total"] += 1
        if c.id in cited_set:
            g["covered"] += 1
        elif c.id in reasons:
            g["reasoned"] += 1
        else:
            g["uncovered"].append(c.id)
    covered = sum(g["covered"] for g in groups.values())
    reasoned = sum(g["reasoned"] for g in groups.values())
    unsupported = unsupported_groups(rows)
    leak_checks = leak_summary(rows)
    complete = verdict.completeness(rows, collected, ended, selection)
    failing = sum(1 for r in rows if fails_gate(r))
    final = verdict.decide(rows, complete, failing, unsupported,
                           probe_failures=probe_failures(probe))
    return {
        "backend": backend,
        "stack": stack,
        "areas": {a: dict(cnt) for a, cnt in sorted(per_area.items())},
        "totals": dict(totals),
        "coverage": {
            "cited": len(cited_set),
            "catalog": len(registry.clauses()),
            "covered": covered,
            "reasoned": reasoned,
            "neither": len(registry.clauses()) - covered - reasoned,
            "uncovered": [i for g in groups.values() for i in g["uncovered"]],
            # cited by a spec and also listed in untestable.toml (allowed, but worth a look)
            "reasoned_but_cited": registry.reasoned_and_cited(cited_set),
            "groups": groups,
            # clauses cited by a spec that PASSed in this run (XFAIL/CHANGED verify nothing)
            "verified": len(verified_clauses(rows)),
        },
        "unsupported": unsupported,
        "leaks": leak_checks,
        "completeness": complete,
        "verdict": final.to_dict(),
        "fingerprint": fingerprints,
        "gate": final.name.lower(),
        # specs whose live resource counts grew (conformance.leaks; reported, not gated);
        # None when no spec was checked (the backend cannot count), which is not the same as 0
        "leaking_specs": leak_checks["leaking_specs"],
        # specs that changed process-global runtime state (conformance.global_state; reported,
        # not gated); None when no spec was checked, which is not the same as 0
        "state_changing_specs": state["changing_specs"],
        "state": state,
    }


def verified_clauses(rows: Iterable[dict[str, Any]]) -> set[str]:
    """The clauses cited by at least one spec that PASSed."""
    return {c for r in rows if r.get("outcome") == "PASS" for c in r.get("clauses", [])}


def unsupported_groups(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """UNSUPPORTED rows grouped by their reason: ``[{"reason", "count", "example"}]``, the
    largest group first."""
    groups: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        if r.get("outcome") == "UNSUPPORTED":
            reason = str(r.get("message") or "no reason given").removeprefix("UNSUPPORTED: ")
            groups[reason].append(r["nodeid"])
    return [{"reason": why, "count": len(ids), "example": sorted(ids)[0]}
            for why, ids in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))]


def leak_summary(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Leak checks over a run: a row carries ``"leaks"`` (``{}`` when nothing grew) only when
    its backend reported live counts before and after it (conformance.leaks)."""
    checked = [r["leaks"] for r in rows if isinstance(r.get("leaks"), dict)]
    kinds: Counter[str] = Counter()
    for grown in checked:
        kinds.update({k: 1 for k in grown})
    return {"checked_specs": len(checked),
            "leaking_specs": sum(1 for g in checked if g) if checked else None,
            "by_kind": dict(kinds)}


def state_summary(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The process-global state check over a run's rows: how many specs were checked, which
    changed what (aspect -> number of specs), which aspects were never read and why."""
    checked = [r["state"] for r in rows if isinstance(r.get("state"), dict)]
    aspects: Counter[str] = Counter()
    changing = 0
    not_checked: dict[str, str] = {}
    for st in checked:
        changed = st.get("changed") or {}
        changing += bool(changed)
        aspects.update(list(changed))
        for a, why in (st.get("not_checked") or {}).items():
            not_checked.setdefault(a, why)
    return {"checked_specs": len(checked),
            "changing_specs": changing if checked else None,
            "changed": dict(aspects),
            "not_checked": not_checked}


def state_line(summary: dict[str, Any]) -> str:
    """One line on the process-global state check (never empty: "not checked" says so)."""
    st = summary.get("state") or {}
    if not st.get("checked_specs"):
        return "process-global state: not checked (--no-state-check, or no spec ran here)"
    n = st["changing_specs"]
    head = (f"state-changing specs: {n} (rows with \"state\".\"changed\" in results.jsonl; "
            "reported, not gated): " + ", ".join(f"{a} {c}" for a, c in st["changed"].items())
            if n else f"process-global state: no spec changed it ({st['checked_specs']} checked)")
    if st.get("not_checked"):
        head += "; not checked on this backend: " + ", ".join(st["not_checked"])
    return head


def format_table(summary: dict[str, Any]) -> list[str]:
    """The summary as aligned text lines: one row per area, a total row, coverage."""
    t = summary["totals"]
    # always show the main outcomes; the rarer ones only when they occur
    cols = [c for c in COLUMNS if c in ("PASS", "FAIL", "CHANGED", "UNSUPPORTED", "ERROR")
            or t.get(c)]
    width = max([len(a) for a in summary["areas"]] + [5])
    head = f"{'area':<{width}}  " + "  ".join(f"{c:>11}" for c in cols)
    lines = [head, "-" * len(head)]
    for area, cnt in summary["areas"].items():
        lines.append(f"{area:<{width}}  " + "  ".join(f"{cnt.get(c, 0):>11}" for c in cols))
    lines.append("-" * len(head))
    lines.append(f"{'total':<{width}}  " + "  ".join(f"{t.get(c, 0):>11}" for c in cols))
    cov = summary["coverage"]
    lines.append(clauses_line(summary) + f"; reasoned {cov['reasoned']}, neither "
                 f"{cov['neither']} (the gap, listed in summary.json)")
    lines.append("per group: " + " ".join(
        f"{g} {v['covered']}/{v['total']}" + (f"+{v['reasoned']}r" if v["reasoned"] else "")
        for g, v in cov["groups"].items()))
    if cov["uncovered"]:
        shown = cov["uncovered"][:15]
        more = len(cov["uncovered"]) - len(shown)
        lines.append("uncovered: " + " ".join(shown) + (f" ... and {more} more" if more else ""))
    if cov.get("reasoned_but_cited"):
        lines.append("cited and also listed in untestable.toml: "
                     + " ".join(cov["reasoned_but_cited"]))
    lines += unsupported_lines(summary)
    lines.append(leak_line(summary))
    if "state" in summary:
        lines.append(state_line(summary))
    if summary.get("order"):
        lines.append(order_line(summary["order"]))
    lines.append(completeness_line(summary))
    lines.append(verdict_line(summary))
    return lines


def clauses_line(summary: dict[str, Any]) -> str:
    """Clauses verified in this run (a PASS on a spec citing them) beside clauses cited."""
    cov = summary["coverage"]
    return (f"clauses verified in this run: {cov.get('verified', 0)} (a PASS on a spec citing "
            f"them); cited by specs: {cov['cited']} of {cov['catalog']}")


def unsupported_lines(summary: dict[str, Any], limit: int = 12) -> list[str]:
    """UNSUPPORTED grouped by reason, with counts (the largest groups first)."""
    groups = summary.get("unsupported") or []
    if not groups:
        return ["UNSUPPORTED: none"]
    total = sum(g["count"] for g in groups)
    lines = [f"UNSUPPORTED by reason ({total} spec(s), {len(groups)} reason(s)):"]
    for g in groups[:limit]:
        lines.append(f"  {g['count']:>4}  {g['reason']}"[:240])
    if len(groups) > limit:
        rest = sum(g["count"] for g in groups[limit:])
        lines.append(f"  {rest:>4}  ... {len(groups) - limit} more reason(s) (summary.json)")
    return lines


def leak_line(summary: dict[str, Any]) -> str:
    """Leaking specs, or "not checked" when the backend reports no live counts."""
    lk = summary.get("leaks") or {}
    if not lk.get("checked_specs"):
        return "leaks: not checked (the backend reports no live resource counts)"
    n = lk["leaking_specs"]
    kinds = ", ".join(f"{k} {c}" for k, c in sorted(lk.get("by_kind", {}).items()))
    return (f"leaking specs: {n} of {lk['checked_specs']} checked" + (f" ({kinds})" if kinds
                                                                      else "")
            + " (rows with non-empty \"leaks\" in results.jsonl; reported, not gated)")


def completeness_line(summary: dict[str, Any]) -> str:
    """Whether every collected spec ran, and how the run ended."""
    c = summary.get("completeness") or {}
    if not c:
        return "completeness: not recorded"
    counts = (f"{c['recorded']} of {c['collected']} collected spec(s) recorded"
              if c.get("collected") is not None else f"{c['recorded']} spec(s) recorded "
              "(the collected list was not recorded)")
    return f"completeness: {'complete' if c['complete'] else 'INCOMPLETE'}, {counts}" + (
        "" if c["complete"] else f": {c['why']}")


def merged_stack(stacks: Iterable[dict[str, str]]) -> dict[str, str] | None:
    """One stack for the run from each process's: a field whose processes differ lists their
    values, in order, joined by `` | ``; None when no process reported one."""
    merged: dict[str, list[str]] = {}
    for stack in stacks:
        for key, value in stack.items():
            values = merged.setdefault(key, [])
            if value not in values:
                values.append(value)
    return {k: " | ".join(v) for k, v in merged.items()} or None


def verdict_line(summary: dict[str, Any]) -> str:
    """``gate: VERDICT (backend B: RUNTIME, VERSION, device: DEVICE): why``."""
    v = summary.get("verdict") or {"verdict": summary["gate"].upper(), "why": ""}
    strict = " (strict)" if summary.get("gate_mode") == "strict" else ""
    return (f"gate{strict}: {v['verdict']} (backend {stack_text(summary)})"
            + (f": {v['why']}" if v.get("why") else ""))


def probe_summary(per_process: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The probe findings of a run: ``removed`` (capability -> reason) when every process
    found the same, else per process; ``failures`` (capability -> the probe's evidence, one
    per capability, from any process): what fails the gate; ``seconds`` per process start;
    ``timings`` (the measurements) per process; every finding."""
    removed = {p: f.get("removed", {}) for p, f in sorted(per_process.items())}
    same = len({json.dumps(r, sort_keys=True) for r in removed.values()}) == 1
    failures: dict[str, str] = {}
    for _, found in sorted(per_process.items()):
        for cap, why in (found.get("failures") or {}).items():
            failures.setdefault(str(cap), str(why))
    return {"processes": sorted(per_process),
            "removed": next(iter(removed.values())) if same else removed,
            "uniform": same,
            "failures": failures,
            "seconds": {p: f.get("seconds") for p, f in sorted(per_process.items())},
            "timings": {p: f.get("timings") or {} for p, f in sorted(per_process.items())},
            "findings": {p: f.get("findings", []) for p, f in sorted(per_process.items())}}


def probe_failures(probe: dict[str, Any] | None) -> list[str]:
    """``cap: evidence`` for each capability whose probe fails the gate (a wrong answer, or
    a promised capability taken away), from a :func:`probe_summary` block."""
    return [f"{cap}: {why}" for cap, why in ((probe or {}).get("failures") or {}).items()]


def _first_execution(probe: dict[str, Any]) -> str:
    """``; first execution 5.00 s, second 0.00 s`` (the slowest process's), or ''."""
    runs = [t for t in (probe.get("timings") or {}).values()
            if isinstance(t, dict) and isinstance(t.get("first_execution_s"), (int, float))]
    if not runs:
        return ""
    slow = max(runs, key=lambda t: t["first_execution_s"])
    second = slow.get("second_execution_s")
    return (f"; first execution {slow['first_execution_s']:.2f} s"
            + (f", second {second:.2f} s" if isinstance(second, (int, float)) else ""))


def probe_lines(probe: dict[str, Any] | None) -> list[str]:
    """The capability-probe findings (``summary["probe"]``): a head line, then one line per
    capability a probe removed (per process when they differ), then one per hung probe."""
    if not probe:
        return []
    secs = [s for s in (probe.get("seconds") or {}).values() if isinstance(s, (int, float))]
    head = (f"capability probes ({len(probe.get('processes') or [])} process(es), "
            f"{max(secs, default=0):.2f} s per start{_first_execution(probe)})")
    removed = probe.get("removed") or {}
    groups = {"": removed} if probe.get("uniform", True) else removed
    hung = sorted({f"  {f.get('cap')}: hung ({f.get('reason')})"[:240]
                   for found in (probe.get("findings") or {}).values() for f in found or []
                   if isinstance(f, dict) and f.get("verdict") == "hung"})
    failed = [f"  {line}"[:240] for line in probe_failures(probe)]
    if failed:
        head = f"{head}: FAIL, a probe saw a wrong answer (fails the gate)"
    if not any(groups.values()):
        if not failed:
            head = f"{head}: every declared capability shown" + (", a probe hung" if hung
                                                                 else "")
        return [head, *failed, *hung]
    lines = [head if failed else f"{head}: absent", *failed]
    if failed:
        lines.append("  absent:")
    for proc, caps in groups.items():
        for cap, why in caps.items():
            lines.append(f"  {cap}{f' [{proc}]' if proc else ''}: {why}"[:240])
    return lines + hung


def order_line(order: dict[str, Any]) -> str:
    """How the specs were ordered, and how to get the same order again."""
    if order.get("random"):
        return (f"order: random, seed {order['seed']} (same order again: pytest option "
                f"-p randomly --randomly-seed={order['seed']}, after -- with mdlri-conformance "
                "run)")
    return "order: file order (pytest-randomly off)"
