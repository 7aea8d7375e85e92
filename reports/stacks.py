"""``mdlri-conformance diff --stacks RUN_A RUN_B``: what run B's stack shows that run A's did not.

The question when the same suite runs on two stacks (the real runtime over a driver stub that
moves no data, then over a device that does): how many rows moved from UNSUPPORTED, or from an
uninformative PASS, to a real verdict, and which data-plane clauses B confirms that A did not.
Everything is derived from what the runs recorded:

* a spec's **needs**: the capabilities it declares (``requires``) or that a run found it
  lacking while it ran (a readback without data movement): the ``needs`` and ``missing`` of
  its row in either run (a property of the spec, not of the run); ``None`` when neither run
  recorded any;
* what a run **shows**: a capability every probing process of the run found ``present``
  (``probe.json``, else ``summary.json["probe"]``); a probe that hung, found it absent or
  could not measure it does not show it, and a run without probe records shows none;
* **data plane**: the probed capabilities the caller names (the CLI passes data movement,
  kernel execution and blocking: what a stack must show for more than the control plane);
* an **uninformative PASS** (``PASS*``): a PASS whose spec needs a data-plane capability its
  run did not show (the spec passed without the stack doing what it checks);
* a **real verdict**: an outcome the caller counts as judging the backend (the CLI passes
  PASS, FAIL, CHANGED, XFAIL, XPASS), a PASS only when it is not uninformative;
* a data-plane clause **confirmed** in a run: cited by an informative PASS whose spec needs a
  data-plane capability.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from .runs import Run
from .stack import stack_text

#: the label of an uninformative PASS in the transition matrix
UNINFORMATIVE = "PASS*"
#: the matrix's order of labels; others follow, sorted
_ORDER = ("PASS", UNINFORMATIVE, "FAIL", "CHANGED", "XFAIL", "XPASS", "UNSUPPORTED", "SKIP",
          "ERROR", "TIMEOUT", "CRASH")


@dataclass
class StackFacts:
    """What one run recorded about its stack."""

    stack: str
    shown: frozenset[str]
    probed: bool


@dataclass
class StackComparison:
    """Run A (baseline) against run B, over the specs both recorded."""

    data_plane: tuple[str, ...]
    facts_a: StackFacts
    facts_b: StackFacts
    #: (label in A, label in B) -> specs
    transitions: Counter[tuple[str, str]] = field(default_factory=Counter)
    from_unsupported: list[str] = field(default_factory=list)
    from_uninformative: list[str] = field(default_factory=list)
    #: B label of each spec that moved (from UNSUPPORTED or PASS*) to a real verdict
    moved_to: Counter[str] = field(default_factory=Counter)
    lost_verdict: list[str] = field(default_factory=list)
    confirmed_a: set[str] = field(default_factory=set)
    confirmed_b: set[str] = field(default_factory=set)
    needs_unknown: list[str] = field(default_factory=list)
    only_a: int = 0
    only_b: int = 0

    @property
    def newly_confirmed(self) -> list[str]:
        """The data-plane clauses B confirms and A does not."""
        return sorted(self.confirmed_b - self.confirmed_a)


def _read_json(path: Any) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def stack_facts(run: Run) -> StackFacts:
    """The run's stack line (``summary.json``) and the capabilities its probes showed."""
    summary = _read_json(run.path / "summary.json")
    summary = summary if isinstance(summary, dict) else {}
    probe = _read_json(run.path / "probe.json")
    if not isinstance(probe, dict):
        probe = summary.get("probe") if isinstance(summary.get("probe"), dict) else {}
    verdicts: dict[str, set[str]] = {}
    for findings in (probe.get("findings") or {}).values():
        for f in findings or []:
            if isinstance(f, dict) and f.get("cap"):
                verdicts.setdefault(str(f["cap"]), set()).add(str(f.get("verdict")))
    shown = frozenset(cap for cap, seen in verdicts.items() if seen == {"present"})
    if not summary.get("backend"):
        summary = {**summary, "backend": run.backend}
    return StackFacts(stack_text(summary), shown, bool(verdicts))


def spec_needs(spec: str, a: Run, b: Run) -> frozenset[str] | None:
    """The capabilities ``spec`` declares or was found lacking (``needs``, ``missing``), as
    either run recorded them; None when neither did."""
    found = [r[key] for r in (a.rows.get(spec), b.rows.get(spec)) if r is not None
             for key in ("needs", "missing") if isinstance(r.get(key), list)]
    return frozenset(c for needs in found for c in needs) if found else None


def label(row: dict[str, Any], needs: frozenset[str] | None, shown: frozenset[str],
          data_plane: Iterable[str]) -> str:
    """The row's outcome, ``PASS*`` for a PASS whose spec needs a data-plane capability the
    run did not show."""
    outcome = str(row.get("outcome"))
    if outcome == "PASS" and needs is not None and (needs & set(data_plane)) - shown:
        return UNINFORMATIVE
    return outcome


def compare_stacks(a: Run, b: Run, data_plane: Iterable[str],
                   verdicts: Iterable[str]) -> StackComparison:
    """The stack comparison of A (baseline) and B; ``data_plane`` names the data-plane
    capabilities, ``verdicts`` the outcomes that are real verdicts (a PASS only when it is not
    uninformative)."""
    plane = tuple(dict.fromkeys(data_plane))
    real = set(verdicts)
    cmp = StackComparison(plane, stack_facts(a), stack_facts(b))
    cmp.only_a = len(set(a.rows) - set(b.rows))
    cmp.only_b = len(set(b.rows) - set(a.rows))
    for spec in sorted(set(a.rows) & set(b.rows)):
        needs = spec_needs(spec, a, b)
        if needs is None:
            cmp.needs_unknown.append(spec)
        la = label(a.rows[spec], needs, cmp.facts_a.shown, plane)
        lb = label(b.rows[spec], needs, cmp.facts_b.shown, plane)
        cmp.transitions[(la, lb)] += 1
        if lb in real:
            if la == "UNSUPPORTED":
                cmp.from_unsupported.append(spec)
                cmp.moved_to[lb] += 1
            elif la == UNINFORMATIVE:
                cmp.from_uninformative.append(spec)
                cmp.moved_to[lb] += 1
        elif la in real:
            cmp.lost_verdict.append(spec)
        if needs and needs & set(plane):
            for run, lab, out in ((a, la, cmp.confirmed_a), (b, lb, cmp.confirmed_b)):
                if lab == "PASS":
                    out.update(run.rows[spec].get("clauses", []))
    return cmp


def _ordered(labels: Iterable[str]) -> list[str]:
    present = set(labels)
    return [x for x in _ORDER if x in present] + sorted(present - set(_ORDER))


def _matrix(cmp: StackComparison) -> list[str]:
    rows = _ordered(la for la, _ in cmp.transitions)
    cols = _ordered(lb for _, lb in cmp.transitions)
    corner = "A \\ B"
    width = max([len(corner), len("total")] + [len(x) for x in rows])
    cw = [max(len(c), 5) for c in cols]
    head = f"    {corner:<{width}} " + " ".join(f"{c:>{w}}" for c, w in zip(cols, cw)) \
        + f" {'total':>5}"
    out = [head]
    for r in rows:
        cells = [cmp.transitions.get((r, c), 0) for c in cols]
        out.append(f"    {r:<{width}} " + " ".join(f"{n:>{w}}" for n, w in zip(cells, cw))
                   + f" {sum(cells):>5}")
    totals = [sum(cmp.transitions.get((r, c), 0) for r in rows) for c in cols]
    out.append(f"    {'total':<{width}} " + " ".join(f"{n:>{w}}" for n, w in zip(totals, cw))
               + f" {sum(totals):>5}")
    return out


def _shows(facts: StackFacts, plane: tuple[str, ...]) -> str:
    if not facts.probed:
        return "no probe records (shows no capability)"
    return ", ".join(f"{c} {'shown' if c in facts.shown else 'not shown'}" for c in plane)


def format_stacks(cmp: StackComparison) -> list[str]:
    """The comparison as text lines: stacks, matrix, moves to a real verdict, clauses."""
    both = sum(cmp.transitions.values())
    moved = len(cmp.from_unsupported) + len(cmp.from_uninformative)
    into = ", ".join(f"{lab} {cmp.moved_to[lab]}" for lab in _ordered(cmp.moved_to))
    lines = ["stack comparison (A: baseline, B: compared)",
             f"  stack A: {cmp.facts_a.stack}; {_shows(cmp.facts_a, cmp.data_plane)}",
             f"  stack B: {cmp.facts_b.stack}; {_shows(cmp.facts_b, cmp.data_plane)}",
             f"  data plane: {', '.join(cmp.data_plane) or 'none named'}",
             f"  outcome transitions over the {both} spec(s) both runs recorded "
             f"({UNINFORMATIVE}: a PASS whose spec needs a data-plane capability its run did "
             "not show):"]
    lines += _matrix(cmp) if both else ["    (none)"]
    lines.append(f"  moved to a real verdict: {moved} ({len(cmp.from_unsupported)} from "
                 f"UNSUPPORTED, {len(cmp.from_uninformative)} from {UNINFORMATIVE})"
                 + (f": {into}" if into else ""))
    lines.append(f"  lost a real verdict: {len(cmp.lost_verdict)}")
    for spec in cmp.lost_verdict:
        lines.append(f"    {spec}")
    new = cmp.newly_confirmed
    lines.append(f"  data-plane clauses confirmed: A {len(cmp.confirmed_a)}, "
                 f"B {len(cmp.confirmed_b)}; in B and not in A: {len(new)}"
                 + (f": {', '.join(new)}" if new else ""))
    if cmp.needs_unknown:
        lines.append(f"  needs recorded by neither run: {len(cmp.needs_unknown)} spec(s) (never "
                     f"{UNINFORMATIVE}, confirm no data-plane clause)")
    if cmp.only_a or cmp.only_b:
        lines.append(f"  not compared: {cmp.only_a} spec(s) only in A, {cmp.only_b} only in B")
    return lines
