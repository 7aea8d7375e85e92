"""Expectations files: parsing errors, XFAIL/XPASS, gated CHANGED, unused entries."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mdlri_conformance.conformance.framework import known as ex

SPECS = '''
import pytest
from mdlri_conformance.backends.contract import Err
from mdlri_conformance.conformance import expect

@pytest.mark.clause("CAP-04")
def test_documented_fail():
    expect.rc(107000, Err.SUCCESS, "aclmdlRICaptureEnd")

@pytest.mark.clause("CAP-01")
def test_documented_pass():
    expect.ok(0, "call")

@pytest.mark.clause("LIST-05")
def test_implementation_fail():
    expect.eq(3, 2, "*numTasks")
'''


def _write(tmp: Path, text: str) -> Path:
    p = tmp / "exp.toml"
    p.write_text(text)
    return p


@pytest.mark.parametrize("text, fragment", [
    ("[[expect]\nid=1", "malformed TOML"),
    ('[[expect]]\nid = "CAP-01"\noutcome = "FAIL"\n', ":1: entry without a reason"),
    ('\n\n[[expect]]\nid = "CAP-01"\noutcome = "MAYBE"\nreason = "x"\n', ":3: outcome 'MAYBE'"),
    ('[[expect]]\nid = "NOPE-01"\noutcome = "FAIL"\nreason = "x"\n', "unknown id 'NOPE-01'"),
    ('[[expect]]\nid = "CAP-01"\noutcome = "FAIL"\nreason = "x"\ncolour = 1\n', "unknown key(s) colour"),
    ('gate_changed = "x"\n', "gate_changed must be a list"),
])
def test_bad_files_are_one_line_errors_naming_file_and_line(tmp_path: Path, text: str,
                                                             fragment: str) -> None:
    p = _write(tmp_path, text)
    with pytest.raises(ex.ExpectationsError) as err:
        ex.load(p, ex.known_ids(Path("conformance/specs")))
    msg = str(err.value)
    assert fragment in msg and str(p) in msg and "\n" not in msg


def test_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ex.ExpectationsError, match="cannot read"):
        ex.load(tmp_path / "absent.toml")


@pytest.mark.parametrize("cond, version, ok", [
    ("", "anything", True), (">=1.17", "1.17.0", True), (">=1.18", "CANN 1.17.0", False),
    ("<2", "1.17.0", True), ("==1.17", "1.17.3", True), ("!=1.17", "1.17.0", False),
])
def test_version_conditions(cond: str, version: str, ok: bool) -> None:
    assert ex.version_matches(cond, version) is ok


def test_known_ids_include_spec_functions_and_clauses() -> None:
    known = ex.known_ids(Path("conformance/specs"))
    assert "CAP-01" in known
    assert "test_scenarios.py::test_model_task_fallback" in known


@pytest.mark.parametrize("name", sorted(p.name for p in Path("conformance/framework/expectations").glob("*.toml")))
def test_shipped_expectation_files_load_against_the_known_ids(name: str) -> None:
    """Every shipped file parses and names only existing specs or clauses, each with a reason."""
    exp = ex.load(Path("conformance/framework/expectations") / name, ex.known_ids(Path("conformance/specs")))
    assert all(e.reason.strip() for e in exp.entries)


@pytest.mark.parametrize("name", ["sim.toml", "acl-emulator.toml"])
def test_reference_backends_require_every_capability(name: str) -> None:
    """The simulator and the emulator implement the whole contract: their files require every
    capability the contract names, so a 207000 there fails the gate instead of hiding a bug."""
    from mdlri_conformance.backends.contract import Cap
    exp = ex.load(Path("conformance/framework/expectations") / name,
                  ex.known_ids(Path("conformance/specs")))
    assert set(exp.required) == {c.value for c in Cap}


def test_real_runtime_file_lists_the_known_runtime_bugs() -> None:
    """cann-681ef76.toml: backend acl, one FAIL per documented clause the real code breaks."""
    import tomllib
    path = Path("conformance/framework/expectations/cann-681ef76.toml")
    assert tomllib.loads(path.read_text(encoding="utf-8"))["backend"] == "acl"
    exp = ex.load(path, ex.known_ids(Path("conformance/specs")))
    by_id = {e.id: e for e in exp.entries}
    assert set(by_id) == {
        "test_capture_modes.py::test_mode03_after_wrong_thread_end",
        "test_timeouts.py::test_timeout_zero_checks_idle_stream",
        "test_timeouts.py::test_timeout_zero_checks_completed_event",
        "test_timeouts.py::test_timeout_zero_on_blocked_work",
    }
    assert {e.outcome for e in exp.entries} == {"FAIL"}
    assert all(re.search(r"\.cc:\d+", e.reason) for e in exp.entries), "reasons cite file:line"


def _run(pytester: pytest.Pytester, exp_text: str, *extra: str) -> tuple[pytest.RunResult, list]:
    pytester.makepyfile(test_specs=SPECS)
    exp = pytester.path / "exp.toml"
    exp.write_text(exp_text)
    out = pytester.path / "out"
    res = pytester.runpytest("-p", "mdlri_conformance.conformance.framework.plugin", "--backend", "tests.fakes:create",
                             "--report-dir", str(out), "--expectations", str(exp), *extra)
    rows = [json.loads(l) for l in (out / "results.jsonl").read_text().splitlines()] \
        if (out / "results.jsonl").exists() else []
    return res, rows


def test_expected_failure_is_xfail_and_the_gate_passes(pytester: pytest.Pytester) -> None:
    res, rows = _run(pytester, '[[expect]]\nid = "CAP-04"\noutcome = "FAIL"\nreason = "known"\n')
    assert res.ret == 0
    by = {r["nodeid"].split("::")[-1]: r for r in rows}
    assert by["test_documented_fail"]["outcome"] == "XFAIL"
    assert by["test_documented_fail"]["reason"] == "known"
    assert by["test_implementation_fail"]["outcome"] == "CHANGED"


def test_unexpected_pass_fails_the_gate(pytester: pytest.Pytester) -> None:
    res, rows = _run(pytester, '[[expect]]\nid = "CAP-04"\noutcome = "FAIL"\nreason = "known"\n'
                               '[[expect]]\nid = "CAP-01"\noutcome = "FAIL"\nreason = "was broken"\n')
    assert res.ret == 1
    by = {r["nodeid"].split("::")[-1]: r for r in rows}
    assert by["test_documented_pass"]["outcome"] == "XPASS"
    summary = json.loads((pytester.path / "out" / "summary.json").read_text())
    assert summary["gate"] == "fail"


def test_gated_changed_fails_the_gate(pytester: pytest.Pytester) -> None:
    res, rows = _run(pytester, 'gate_changed = ["LIST-*"]\n[[expect]]\nid = "CAP-04"\n'
                               'outcome = "FAIL"\nreason = "known"\n')
    assert res.ret == 1
    by = {r["nodeid"].split("::")[-1]: r for r in rows}
    assert by["test_implementation_fail"]["gated"] is True


def test_unused_entry_is_an_input_error(pytester: pytest.Pytester) -> None:
    res, _ = _run(pytester, '[[expect]]\nid = "CAP-04"\noutcome = "FAIL"\nreason = "known"\n'
                            '[[expect]]\nid = "TMO-03"\noutcome = "FAIL"\nreason = "stale"\n')
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stdout.fnmatch_lines(["*exp.toml:5: unused expectation for 'TMO-03'*"])


def test_subset_runs_do_not_flag_unused_entries(pytester: pytest.Pytester) -> None:
    res, _ = _run(pytester, '[[expect]]\nid = "TMO-03"\noutcome = "FAIL"\nreason = "stale"\n',
                  "-k", "documented_pass")
    assert res.ret == 0


# ---------------------------------------------------------------------------------------------
# --gate strict: a CHANGED the expectations file does not accept fails the gate


def test_strict_gate_fails_on_an_unaccepted_changed(pytester: pytest.Pytester) -> None:
    res, rows = _run(pytester, '[[expect]]\nid = "CAP-04"\noutcome = "FAIL"\nreason = "known"\n',
                     "--gate", "strict")
    assert res.ret == 1
    by = {r["nodeid"].split("::")[-1]: r for r in rows}
    assert by["test_implementation_fail"]["outcome"] == "CHANGED"
    assert by["test_implementation_fail"]["gated"] is True
    assert by["test_documented_fail"]["outcome"] == "XFAIL"
    assert "gated" not in by["test_documented_pass"]
    summary = json.loads((pytester.path / "out" / "summary.json").read_text())
    assert summary["gate"] == "fail" and summary["gate_mode"] == "strict"
    res.stdout.fnmatch_lines(["gate (strict): FAIL (backend *): 1 spec(s) fail the gate*",
                              "  CHANGED  test_specs.py::test_implementation_fail: ?LIST-05?*"])


def test_strict_gate_passes_when_the_file_accepts_the_changed(pytester: pytest.Pytester) -> None:
    res, rows = _run(pytester, '[[expect]]\nid = "CAP-04"\noutcome = "FAIL"\nreason = "known"\n'
                               '[[expect]]\nid = "LIST-05"\noutcome = "CHANGED"\nreason = "new '
                               'release"\n', "--gate", "strict")
    assert res.ret == 0
    by = {r["nodeid"].split("::")[-1]: r for r in rows}
    assert by["test_implementation_fail"]["outcome"] == "XFAIL"
    assert "gated" not in by["test_implementation_fail"]


def test_strict_gate_without_an_expectations_file(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_specs=SPECS)
    out = pytester.path / "out"
    res = pytester.runpytest("-p", "mdlri_conformance.conformance.framework.plugin", "--backend",
                             "tests.fakes:create", "--report-dir", str(out), "--gate", "strict",
                             "-k", "implementation or documented_pass")
    assert res.ret == 1
    rows = {r["nodeid"].split("::")[-1]: r
            for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert rows["test_implementation_fail"]["gated"] is True
    assert rows["test_documented_pass"]["outcome"] == "PASS"


def test_default_gate_lets_changed_pass(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_specs=SPECS)
    out = pytester.path / "out"
    res = pytester.runpytest("-p", "mdlri_conformance.conformance.framework.plugin", "--backend",
                             "tests.fakes:create", "--report-dir", str(out),
                             "-k", "implementation or documented_pass")
    assert res.ret == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["gate"] == "pass" and summary["gate_mode"] == "default"
    res.stdout.fnmatch_lines(["gate: PASS (backend *)*"])
