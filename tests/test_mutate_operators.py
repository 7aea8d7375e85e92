"""The mutation operators of ``mutate`` on a tiny source, the figures, and the command's
bad input (one line, exit 2)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mdlri_conformance.conformance.cli.mutate import resolve_modules
from mdlri_conformance.conformance.framework.power import mutation_report
from mdlri_conformance.conformance.framework.power.mutants import apply, mutants_of
from mdlri_conformance.conformance.framework.power.mutation_coverage import IMPORT_TIME
from mdlri_conformance.conformance.framework.power.mutation_run import (
    REPO, SIM, Baseline, classify)

TINY = textwrap.dedent('''\
    """Module docstring: 1 < 2 is not mutated."""
    from __future__ import annotations

    __all__ = ["f"]


    def f(x: int = 3) -> int:
        """Docstring."""
        if x < 0 and not flag:
            return E_PARAM
        self.count += 1
        label = f"{x + 7}"
        return OK if x == 2 else Err.RT_INVALID_HANDLE
''')


def _pairs(source: str) -> set[tuple[str, int, str, str]]:
    return {(m.operator, m.line, m.original, m.mutated) for m in mutants_of(source, "tiny.py")}


def test_operators_produce_the_expected_mutants() -> None:
    assert _pairs(TINY) == {
        ("number", 7, "3", "4"), ("number", 7, "3", "2"),
        ("condition", 9, "x < 0 and not flag", "not (x < 0 and not flag)"),
        ("boolop", 9, "x < 0 and not flag", "x < 0 or not flag"),
        ("compare", 9, "x < 0", "x <= 0"),
        ("number", 9, "0", "1"), ("number", 9, "0", "-1"),
        ("not", 9, "not flag", "(flag)"),
        ("statement", 10, "return E_PARAM", "pass"),
        ("rc", 10, "E_PARAM", "100000"),
        ("statement", 11, "self.count += 1", "pass"),
        ("number", 11, "1", "2"), ("number", 11, "1", "0"),
        ("condition", 13, "x == 2", "not (x == 2)"),
        ("compare", 13, "x == 2", "x != 2"),
        ("number", 13, "2", "3"), ("number", 13, "2", "1"),
        ("rc", 13, "OK", "107000"),
        ("rc", 13, "Err.RT_INVALID_HANDLE", "107000"),
    }


def test_skipped_places_have_no_mutants() -> None:
    lines = {m.line for m in mutants_of(TINY, "tiny.py")}
    # the docstrings (1, 8), __all__ (4), the annotation of f (7 has only its default), the
    # f-string (12) and an unguarded return (13 keeps its expression mutants only)
    assert not lines & {1, 4, 8, 12}
    assert not any(m.operator == "statement" and m.line == 13
                   for m in mutants_of(TINY, "tiny.py"))


def test_a_mutant_changes_only_its_span() -> None:
    m = next(m for m in mutants_of(TINY, "tiny.py") if m.operator == "compare" and m.line == 9)
    out = apply(TINY, m)
    before, after = TINY.splitlines(), out.splitlines()
    assert len(before) == len(after)
    assert [i for i, (a, b) in enumerate(zip(before, after)) if a != b] == [8]
    assert after[8] == "    if x <= 0 and not flag:"
    assert m.function == "f" and m.stmt_line == 9


def test_planted_fault_plumbing_is_left_alone() -> None:
    src = textwrap.dedent('''\
        def h(self, m):
            if m.status == 3 and self.has_fault("x"):
                m.status = 0
            rc = 7 if self.has_fault("y") else 8
            return rc
        ''')
    got = {(op, line, mutated) for op, line, _, mutated in _pairs(src)}
    assert got == {
        # the test itself still changes: the fault's branch then runs in a plain run
        ("condition", 2, 'not (m.status == 3 and self.has_fault("x"))'),
        ("boolop", 2, "m.status == 3 or self.has_fault('x')"),
        ("condition", 4, 'not (self.has_fault("y"))'),
        ("number", 4, "9"), ("number", 4, "7"),
    }


def test_booleans_and_multiline_conditions() -> None:
    src = "def g(a, b):\n    while (a and\n           b):\n        a = False\n    return a\n"
    got = _pairs(src)
    assert ("bool", 4, "False", "True") in got
    assert ("condition", 2, "a and\n           b", "not (a and\n           b)") in got
    for m in mutants_of(src, "g.py"):
        compile(apply(src, m), "g.py", "exec")


def test_every_simulator_mutant_compiles_and_names_its_function() -> None:
    sim = REPO / SIM
    src = (sim / "api" / "memory.py").read_text()
    found = mutants_of(src, "api/memory.py")
    assert len(found) > 100
    assert {m.operator for m in found} >= {"compare", "rc", "condition", "statement", "number"}
    assert all(m.function for m in found)
    assert len({m.ident for m in found}) == len(found)


def test_module_names_resolve() -> None:
    sim = REPO / SIM
    assert resolve_modules(sim, ["api/memory"]) == ["api/memory.py"]
    assert resolve_modules(sim, ["backends/sim/api/memory.py", "api.memory"]) == \
        ["api/memory.py"]
    assert "api/events.py" in resolve_modules(sim, ["api"])
    assert "device.py" in resolve_modules(sim, None)


def _row(nodeid: str, outcome: str) -> dict[str, str]:
    return {"nodeid": nodeid, "outcome": outcome, "message": "m"}


def test_classification() -> None:
    assert classify(0, [_row("a", "PASS")], "", 1)["status"] == "survived"
    k = classify(1, [_row("a", "PASS"), _row("b", "FAIL")], "", 3)
    assert (k["status"], k["killer"], k["kill"]) == ("killed", "b", "FAIL")
    assert classify(1, [_row("a", "TIMEOUT")], "", 1)["status"] == "timeout"
    assert classify(None, [_row("a", "PASS")], "", 2)["kill"] == "deadline"
    crash = classify(3, [_row("a", "PASS")], "...\nImportError: boom\n", 2)
    assert crash["status"] == "killed" and crash["kill"] == "crash"
    assert "ImportError: boom" in crash["message"]
    # the probes hid a capability: the specs did not tell it from a backend without it
    hidden = classify(5, [_row("a", "UNSUPPORTED"), _row("b", "UNSUPPORTED")], "", 2)
    assert hidden["status"] == "survived" and "2 of 2 specs UNSUPPORTED" in hidden["message"]
    # a required capability (the sim requires all of them) was UNSUPPORTED: the gate fails
    req = classify(1, [_row("a", "PASS"), {**_row("b", "UNSUPPORTED"), "required": ["build"]}],
                   "", 2)
    assert (req["status"], req["kill"], req["killer"]) == ("killed", "UNSUPPORTED", "b")


def test_selection_and_limits_follow_the_baseline() -> None:
    rows = [{"nodeid": "a", "outcome": "PASS", "duration_s": 0.5, "clauses": ["A-01"]},
            {"nodeid": "b", "outcome": "PASS", "duration_s": 20.0, "clauses": ["B-02"]},
            {"nodeid": "c", "outcome": "FAIL", "duration_s": 0.1, "clauses": ["C-03"]}]
    base = Baseline(rows, {"m.py": {3: {"b", "a", "c"}, 5: {IMPORT_TIME}}}, 0, 1.0)
    m = mutants_of("x = 1\n", "m.py")[0]
    at = {n: dataclasses.replace(m, line=n, stmt_line=n) for n in (3, 5, 9)}
    # cheapest first, a spec failing in the baseline cannot kill
    assert base.covering(at[3]) == ["a", "b"] and base.clauses(["a", "b"]) == ["A-01", "B-02"]
    assert base.covering(at[5]) is None  # import time: every passing spec
    assert base.covering(at[9]) == []  # unreached
    assert base.limits(["a"], 10.0, 120.0) == (10.0, 120.0)
    assert base.limits(["a", "b"], 10.0, 120.0) == (60.0, 120.0)
    assert base.limits(["a", "b"], 0, 30.0) == (0.0, 91.5)


def test_figures_count_timeouts_as_killed_and_clauses_per_spec() -> None:
    entries = [
        {"module": "m.py", "function": "f", "operator": "rc", "status": "killed",
         "clauses": ["A-01"], "line": 1, "col": 0, "original": "OK", "mutated": "107000"},
        {"module": "m.py", "function": "f", "operator": "rc", "status": "timeout",
         "clauses": ["A-01", "B-02"], "line": 2, "col": 0, "original": "x", "mutated": "y"},
        {"module": "m.py", "function": "g", "operator": "bool", "status": "survived",
         "clauses": ["B-02"], "line": 3, "col": 0, "original": "True", "mutated": "False"},
        {"module": "n.py", "function": "h", "operator": "number", "status": "unreached",
         "clauses": [], "line": 4, "col": 0, "original": "1", "mutated": "2"},
    ]
    s = mutation_report.summarise(entries)
    assert s["total"] == {"mutants": 4, "killed": 2, "timeout": 1, "survived": 1,
                          "unreached": 1, "not-run": 0, "score": 0.5}
    assert s["by_clause"]["B-02"]["survived"] == 1 and s["by_clause"]["B-02"]["killed"] == 1
    assert s["by_clause"][mutation_report.NO_CLAUSE]["unreached"] == 1
    assert [e["line"] for e in mutation_report.survivors(entries)] == [3, 4]
    md = mutation_report.markdown(s, entries)
    assert "| survived | m.py:3 | g | bool | `True` | `False` | B-02 |" in md


@pytest.mark.parametrize("args, says", [
    (["--module", "nope"], "--module nope: no simulator module"),
    (["--sample", "0"], "must be positive"),
    (["--operator", "swap"], "invalid choice"),
    (["-k", "a and", "--module", "api/context"], "-k 'a and'"),
])
def test_bad_input_is_one_line(args: list[str], says: str, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", "mutate",
                           *args, "--out", str(tmp_path / "o")], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and says in proc.stderr, proc.stderr
    assert not (tmp_path / "o").exists()


def test_list_prints_the_mutants_without_running() -> None:
    proc = subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", "mutate",
                           "--module", "api/context", "--operator", "rc", "--list"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[-1].endswith("mutants in 1 module(s)")
    assert all("[rc]" in line for line in lines[:-1]) and len(lines) > 2
