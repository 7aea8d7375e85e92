"""The shrink bound every spec runs under (framework.shrinking)."""

from __future__ import annotations

from hypothesis.internal.conjecture import engine

from mdlri_conformance.conformance.framework.shrinking import shrink_budget


def test_budget_is_set_nested_tighter_only_and_restored() -> None:
    before = engine.MAX_SHRINKING_SECONDS
    with shrink_budget(7):
        assert engine.MAX_SHRINKING_SECONDS == 7
        with shrink_budget(20):
            assert engine.MAX_SHRINKING_SECONDS == 7  # never looser than the enclosing bound
        with shrink_budget(3):
            assert engine.MAX_SHRINKING_SECONDS == 3
        assert engine.MAX_SHRINKING_SECONDS == 7
    assert engine.MAX_SHRINKING_SECONDS == before


def test_hypothesis_warning_names_the_suite_bound() -> None:
    from hypothesis.reporting import report, with_reporter
    seen: list[str] = []
    with with_reporter(seen.append):
        with shrink_budget(4):
            report("WARNING: Hypothesis has spent more than five minutes working to shrink a "
                   "failing test case, and stopped")
            report("Falsifying example: f(x=1)")
    assert seen[0].startswith("Shrinking stopped after the suite's bound of 4 s")
    assert seen[1] == "Falsifying example: f(x=1)"
