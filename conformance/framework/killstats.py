"""How much work a failure took: generated examples and the shrunk counterexample's size.

Used by the kill matrix and recorded in every Hypothesis spec's row.

* **Examples** are counted from Hypothesis's own observability stream
  (``hypothesis.internal.observability``): every test case it runs is reported with a status
  and a phase. ``examples`` is the number of test cases of the generate/reuse/explicit phases
  up to and including the first failing one (or all of them when none failed);
  ``shrink_calls`` the test cases run while shrinking. That is what the engine really ran,
  not an estimate from the profile's ``max_examples``.
* **Shrunk size** (tasks): for the generated-graph specs the final failure message names the
  shrunk case as ``case (N tasks, M streams)``
  (:func:`conformance.engine.divergence.divergence_message`); for the stateful machine it is
  the number of task-issuing steps (``work``, ``record``, ``wait``) in Hypothesis's minimal
  failing program.
"""

from __future__ import annotations

import re
import time
from typing import Any

#: steps of the stateful machine that issue a captured task
TASK_STEPS = ("work", "record", "wait")
_CASE_RE = re.compile(r"case \((\d+) tasks")
_STEP_RE = re.compile(r"^\s*state\.(\w+)\(", re.M)


class ExampleCounter:
    """Counts the Hypothesis test cases one spec runs (an observability callback)."""

    def __init__(self) -> None:
        self.generated = 0
        self.first_failure: int | None = None
        self.first_failure_s: float | None = None
        self._t0 = time.monotonic()
        self.shrink_calls = 0
        self.minimal: str | None = None
        self._callback_added = False
        self._coverage: bool | None = None

    def __call__(self, obs: Any) -> None:
        if getattr(obs, "type", None) != "test_case":
            return
        how = str(getattr(obs, "how_generated", ""))
        status = str(getattr(obs, "status", ""))
        if how.startswith("minimal failing example"):
            self.minimal = str(getattr(obs, "representation", ""))
        elif "shrink" in how:
            self.shrink_calls += 1
        else:
            self.generated += 1
            if status == "failed" and self.first_failure is None:
                self.first_failure = self.generated
                self.first_failure_s = round(time.monotonic() - self._t0, 4)

    def start(self) -> None:
        """Register with Hypothesis (this thread's test cases only)."""
        try:
            from hypothesis.internal import observability as obs
        except ImportError:  # an older Hypothesis: no counts
            return
        # counting needs no line coverage (sys.settrace would make the specs ~4x slower)
        self._coverage = getattr(obs, "OBSERVABILITY_COLLECT_COVERAGE", None)
        obs.OBSERVABILITY_COLLECT_COVERAGE = False
        obs.add_observability_callback(self)
        self._t0 = time.monotonic()
        self._callback_added = True

    def stop(self) -> None:
        if self._callback_added:
            from hypothesis.internal import observability as obs
            obs.remove_observability_callback(self)
            obs.OBSERVABILITY_COLLECT_COVERAGE = self._coverage
            self._callback_added = False

    def result(self) -> dict[str, Any] | None:
        """The counts for the result row (None when the spec ran no Hypothesis case)."""
        if not self.generated and not self.shrink_calls:
            return None
        out: dict[str, Any] = {"examples": self.first_failure or self.generated,
                               "examples_total": self.generated}
        if self.first_failure is not None:
            out["failed_at_example"] = self.first_failure
            out["first_failure_s"] = self.first_failure_s
            out["shrink_calls"] = self.shrink_calls
            size = stateful_size(self.minimal) if self.minimal else None
            if size is not None:
                out["shrunk_tasks"] = size
        return out


def case_size(message: str) -> int | None:
    """The shrunk generated case's task count from a failure message, if it names one."""
    m = _CASE_RE.search(message or "")
    return int(m.group(1)) if m else None


def stateful_size(representation: str) -> int | None:
    """Task-issuing steps in a stateful machine's minimal failing program (None if the
    representation is not a stateful program)."""
    steps = _STEP_RE.findall(representation or "")
    if not steps:
        return None
    return sum(s in TASK_STEPS for s in steps)


__all__ = ["ExampleCounter", "case_size", "stateful_size"]
