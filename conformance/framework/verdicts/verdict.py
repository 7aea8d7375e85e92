"""The verdict of a run and its exit code (DESIGN.md "Results").

A gate answers PASS only when specs really exercised the backend and none failed it:

* **FAIL** (1): a row fails the gate (:func:`conformance.summary.fails_gate`): FAIL, ERROR,
  XPASS, TIMEOUT, CRASH, a gated CHANGED, or an UNSUPPORTED on a required capability; or a
  capability probe saw a wrong answer, or took away a capability the backend promises
  (:mod:`conformance.framework.probe`): that is a failure with the probe's evidence, never a
  lost capability. A failure that was seen is definite, so FAIL wins over an incomplete run.
* **INCOMPLETE** (4): the run was interrupted (SIGINT, SIGTERM), stopped by an internal error or
  a crash outside a spec, ended without its end record (SIGKILL), left collected specs without
  a row, or some specs never reached the backend (a process whose backend could not start)
  while others did.
* **NOTHING TESTED** (3): no spec exercised the backend: it could not be loaded or built, every
  selected spec was UNSUPPORTED or skipped, or no spec was selected.
* **PASS** (0): otherwise.

Exit code 2 is a usage or input error, reported before (or instead of) a verdict. No other exit
codes are used by ``mdlri-conformance``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

PASS, FAIL, NOTHING_TESTED, INCOMPLETE = "PASS", "FAIL", "NOTHING TESTED", "INCOMPLETE"
#: the exit code of each verdict (2 is a usage or input error)
EXIT_CODES: dict[str, int] = {PASS: 0, FAIL: 1, NOTHING_TESTED: 3, INCOMPLETE: 4}
USAGE_EXIT = 2
#: outcomes of a spec that called the backend and judged what it did
EXERCISED = frozenset({"PASS", "FAIL", "CHANGED", "XFAIL", "XPASS"})


@dataclass(frozen=True)
class Verdict:
    """A run's verdict, its exit code and the one line that says why."""

    name: str
    why: str

    @property
    def code(self) -> int:
        return EXIT_CODES[self.name]

    def line(self) -> str:
        return f"{self.name}: {self.why}" if self.why else self.name

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.name, "exit_code": self.code, "why": self.why}


def decide(rows: Iterable[dict[str, Any]], completeness: dict[str, Any],
           failing: int, unsupported: list[dict[str, Any]],
           probe_failures: list[str] | None = None) -> Verdict:
    """The verdict from the rows, the run's completeness (:func:`completeness`), the number of
    gate-failing rows, the UNSUPPORTED reasons grouped with counts and the capability probes'
    failures (``cap: evidence``)."""
    rows = list(rows)
    exercised = sum(1 for r in rows if r.get("outcome") in EXERCISED)
    probes = list(probe_failures or ())
    if failing or probes:
        parts = [f"{failing} spec(s) fail the gate"] if failing else []
        if probes:
            parts.append(f"a capability probe saw a wrong answer: {probes[0]}"
                         + (f" (and {len(probes) - 1} more)" if len(probes) > 1 else ""))
        return Verdict(FAIL, "; ".join(parts) + (
            "; the run is also incomplete: " + completeness["why"]
            if not completeness["complete"] else ""))
    if not completeness["complete"]:
        return Verdict(INCOMPLETE, completeness["why"])
    if not exercised:
        return Verdict(NOTHING_TESTED, _nothing_why(rows, unsupported, completeness))
    return Verdict(PASS, f"{exercised} spec(s) exercised the backend, none failed the gate")


def _nothing_why(rows: list[dict[str, Any]], unsupported: list[dict[str, Any]],
                 completeness: dict[str, Any]) -> str:
    if not rows:
        sel = completeness.get("selection")
        return "no spec was selected" + (f" ({sel})" if sel else "")
    if unsupported and unsupported[0]["count"] == len(rows):
        return f"every spec ({len(rows)}) was UNSUPPORTED: {unsupported[0]['reason']}"
    top = unsupported[0] if unsupported else None
    return (f"none of the {len(rows)} spec(s) exercised the backend"
            + (f" (UNSUPPORTED {top['count']}: {top['reason']})" if top else ""))


def completeness(rows: Iterable[dict[str, Any]], collected: list[str] | None,
                 ended: str, selection: str = "") -> dict[str, Any]:
    """How complete a run is: collected specs, recorded ones, those that never ran (by node id),
    specs that never reached the backend, and how the run ended (``complete``,
    ``interrupted``, ``internal error``, ``killed``: no end record)."""
    rows = list(rows)
    recorded = {r["nodeid"] for r in rows}
    never = sorted(set(collected or ()) - recorded)
    not_reached = sum(1 for r in rows if r.get("backend_unavailable"))
    exercised = any(r.get("outcome") in EXERCISED for r in rows)
    problems: list[str] = []
    if ended not in ("complete", "unknown"):  # unknown: a directory without run.json
        problems.append({"interrupted": "the run was interrupted",
                         "killed": "the run ended without its end record (killed?)",
                         }.get(ended, f"the run stopped ({ended})"))
    if never:
        problems.append(f"{len(never)} of {len(collected or ())} collected spec(s) never ran")
    if not_reached and exercised:
        problems.append(f"{not_reached} spec(s) never reached the backend (its process could "
                        "not start it)")
    return {"collected": None if collected is None else len(collected),
            "recorded": len(recorded), "never_ran": never, "never_ran_count": len(never),
            "not_reached": not_reached, "ended": ended, "selection": selection,
            "complete": not problems, "why": "; ".join(problems) or "complete"}


__all__ = ["EXERCISED", "EXIT_CODES", "FAIL", "INCOMPLETE", "NOTHING_TESTED", "PASS",
           "USAGE_EXIT", "Verdict", "completeness", "decide"]
