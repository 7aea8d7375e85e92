"""``mdlri-conformance diff RUN_A RUN_B``: what changed between two runs, per clause.

The question a release engineer asks when a new CANN version arrives: which specs newly
fail, which were fixed, which implementation-level behaviours changed, and which recorded
fingerprint values (undefined behaviour) differ.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .runs import Run

GOOD = {"PASS", "XFAIL"}
BAD = {"FAIL", "ERROR", "TIMEOUT", "CRASH", "XPASS"}


@dataclass
class RunDiff:
    """Differences between run A (before) and run B (after)."""

    new_failures: list[tuple[str, str, str]] = field(default_factory=list)  # spec, a, b
    fixes: list[tuple[str, str, str]] = field(default_factory=list)
    changed: list[tuple[str, str, str]] = field(default_factory=list)
    other: list[tuple[str, str, str]] = field(default_factory=list)
    fingerprint: list[tuple[str, Any, Any]] = field(default_factory=list)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)

    def clauses(self, a: Run, b: Run) -> list[str]:
        """Every clause id touched by a difference, sorted."""
        ids: set[str] = set()
        for spec, _, _ in self.new_failures + self.fixes + self.changed + self.other:
            row = b.rows.get(spec) or a.rows.get(spec) or {}
            ids.update(row.get("clauses", []))
        for key, _, _ in self.fingerprint:
            ids.add(key.split(":")[0])
        return sorted(ids)

    @property
    def empty(self) -> bool:
        return not (self.new_failures or self.fixes or self.changed or self.other
                    or self.fingerprint)


def diff_runs(a: Run, b: Run) -> RunDiff:
    d = RunDiff()
    for spec in sorted(set(a.rows) | set(b.rows)):
        ra, rb = a.rows.get(spec), b.rows.get(spec)
        if ra is None:
            d.only_b.append(spec)
            continue
        if rb is None:
            d.only_a.append(spec)
            continue
        oa, ob = ra["outcome"], rb["outcome"]
        if oa == ob:
            continue
        entry = (spec, oa, ob)
        if ob in BAD and oa not in BAD:
            d.new_failures.append(entry)
        elif oa in BAD and ob in GOOD:
            d.fixes.append(entry)
        elif "CHANGED" in (oa, ob):
            d.changed.append(entry)
        else:
            d.other.append(entry)
    # only what both runs recorded: a spec that never ran in one of them (a killed run) has
    # no fingerprint there, which is not a change of behaviour
    both = set(a.rows) & set(b.rows)
    fa, fb = _fingerprints(a, both), _fingerprints(b, both)
    for key in sorted(set(fa) | set(fb)):
        va, vb = fa.get(key, "<absent>"), fb.get(key, "<absent>")
        if va != vb:
            d.fingerprint.append((key, va, vb))
    return d


def _fingerprints(run: Run, specs: set[str]) -> dict[str, Any]:
    """The fingerprint values the rows of ``specs`` recorded in ``run``."""
    out: dict[str, Any] = {}
    for spec in sorted(specs):
        out.update(run.rows[spec].get("fingerprint") or {})
    return out


def format_diff(d: RunDiff, a: Run, b: Run) -> list[str]:
    """Text lines grouped by kind, each line naming the clauses of the spec."""
    def clauses_of(spec: str) -> str:
        row = b.rows.get(spec) or a.rows.get(spec) or {}
        return ",".join(row.get("clauses", [])) or "?"

    lines = [f"A: {a.path} ({a.backend or 'backend not recorded'})",
             f"B: {b.path} ({b.backend or 'backend not recorded'})"]
    sections = (("new failures", d.new_failures), ("fixes", d.fixes),
                ("changed behaviours", d.changed), ("other outcome changes", d.other))
    for title, items in sections:
        lines.append(f"{title}: {len(items)}")
        for spec, oa, ob in items:
            lines.append(f"  [{clauses_of(spec)}] {spec}: {oa} -> {ob}")
    lines.append(f"fingerprint changes: {len(d.fingerprint)}")
    for key, va, vb in d.fingerprint:
        lines.append(f"  [{key.split(':')[0]}] {key}: {va!r} -> {vb!r}")
    if d.only_a or d.only_b:
        lines.append(f"specs only in A: {len(d.only_a)}, only in B: {len(d.only_b)}")
    lines.append("clauses that changed: " + (", ".join(d.clauses(a, b)) or "none"))
    return lines
