"""The pytest plugin: clause checks, outcome mapping, results file, summary, backend choice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SPECS = '''
import pytest
from mdlri_conformance.backends.contract import Cap, Err
from mdlri_conformance.conformance import expect

@pytest.mark.clause("CAP-01")
def test_documented_pass():
    expect.ok(0, "call")

@pytest.mark.clause("CAP-04")
def test_documented_fail():
    expect.rc(107000, Err.SUCCESS, "aclmdlRICaptureEnd")

@pytest.mark.clause("LIST-05")
def test_implementation_fail():
    expect.eq(3, 2, "*numTasks")

@pytest.mark.clause("Q-10")
def test_undefined_records(fingerprint):
    fingerprint.record("Q-10", 0)

@pytest.mark.clause("CAP-01")
@pytest.mark.requires(Cap.KERNELS)
def test_needs_kernels():
    pass

@pytest.mark.clause("CAP-01")
def test_feature_not_supported():
    expect.ok(207000, "aclmdlRIGetStreams")

@pytest.mark.clause("CAP-01")
def test_harness_error():
    raise RuntimeError("boom")
'''


def _run(pytester: pytest.Pytester, backend: str, *extra: str) -> tuple[pytest.RunResult, Path]:
    pytester.makepyfile(test_specs=SPECS)
    out = pytester.path / "out"
    res = pytester.runpytest("-p", "mdlri_conformance.conformance.framework.plugin", "--backend", backend,
                             "--report-dir", str(out), *extra)
    return res, out


def _rows(out: Path) -> dict[str, dict]:
    rows = [json.loads(l) for l in (out / "results.jsonl").read_text().splitlines()]
    return {r["nodeid"].split("::")[-1]: r for r in rows}


def test_outcomes_follow_the_level(pytester: pytest.Pytester) -> None:
    res, out = _run(pytester, "tests.fakes:create_no_kernels")
    assert res.ret == 1  # the documented failure and the harness error fail the run
    rows = _rows(out)
    assert rows["test_documented_pass"]["outcome"] == "PASS"
    assert rows["test_documented_fail"]["outcome"] == "FAIL"
    assert rows["test_documented_fail"]["message"] == (
        "[CAP-04] aclmdlRICaptureEnd rc: expected 0 (SUCCESS), observed 107000 (RT_PARAM_INVALID)")
    assert rows["test_implementation_fail"]["outcome"] == "CHANGED"
    assert rows["test_implementation_fail"]["level"] == "implementation"
    assert rows["test_undefined_records"]["outcome"] == "PASS"
    assert rows["test_undefined_records"]["fingerprint"] == {"Q-10": 0}
    assert rows["test_needs_kernels"]["outcome"] == "UNSUPPORTED"
    assert "kernels" in rows["test_needs_kernels"]["message"]
    assert rows["test_feature_not_supported"]["outcome"] == "UNSUPPORTED"
    assert "207000" in rows["test_feature_not_supported"]["message"]
    assert rows["test_harness_error"]["outcome"] == "ERROR"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["totals"] == {"PASS": 2, "FAIL": 1, "CHANGED": 1, "UNSUPPORTED": 2, "ERROR": 1}
    assert summary["gate"] == "fail"
    assert summary["fingerprint"] == {"Q-10": 0}
    res.stdout.fnmatch_lines(["*Model RI conformance*", "*total*", "*gate: FAIL*"])


def test_changed_alone_does_not_fail_the_run(pytester: pytest.Pytester) -> None:
    res, out = _run(pytester, "tests.fakes:create", "-k", "implementation_fail or documented_pass")
    assert res.ret == 0
    res.stdout.fnmatch_lines(["*1 passed*1 changed*"])


def test_unknown_clause_id_fails_collection(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bad='''
import pytest
@pytest.mark.clause("CAP-99")
def test_x():
    pass
''')
    res = pytester.runpytest("-p", "mdlri_conformance.conformance.framework.plugin", "--backend", "tests.fakes:create",
                             "--report-dir", str(pytester.path / "o"))
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*unknown clause id(s) CAP-99*"])


@pytest.mark.parametrize("name, message", [
    ("bogus", "*unknown backend 'bogus'*"),
    ("no_such_module_xyz:create", "*cannot import*"),
    ("tests.fakes:nothing_here", "*has no callable*"),
    ("tests.fakes:create_not_a_backend", "*does not implement*"),
])
def test_bad_backend_is_a_one_line_usage_error(pytester: pytest.Pytester, name: str,
                                               message: str) -> None:
    pytester.makepyfile(test_ok="def test_x():\n    pass\n")
    res = pytester.runpytest("-p", "mdlri_conformance.conformance.framework.plugin", "--backend", name)
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines([message])
    assert "Traceback" not in res.stderr.str()


GROUPS = '''
import pytest
from mdlri_conformance.backends.contract import Cap
from mdlri_conformance.conformance.framework import outcomes

@pytest.mark.clause("CAP-01")
def test_only_unsupported_in_the_group():
    raise ExceptionGroup("Hypothesis found 2 distinct failures", [
        outcomes.Unsupported("aclmdlRITaskGetParams returned 207000"),
        outcomes.Unsupported("aclmdlRITaskSetParams returned 207019")])

@pytest.mark.clause("CAP-04")
def test_a_failure_beside_unsupported():
    raise ExceptionGroup("Hypothesis found 2 distinct failures", [
        outcomes.Unsupported("aclmdlRITaskGetParams returned 207000"),
        outcomes.ConformanceFailure("[CAP-04] buffer 0: expected [1], observed [0]")])

@pytest.mark.clause("LIST-05")
def test_an_implementation_failure_beside_unsupported():
    raise ExceptionGroup("Hypothesis found 2 distinct failures", [
        outcomes.ConformanceFailure("[LIST-05] *numTasks: expected 3, observed 2"),
        outcomes.Unsupported("aclmdlRIUpdate returned 207000")])

@pytest.mark.clause("CAP-01")
def test_an_error_beside_unsupported():
    raise ExceptionGroup("2", [outcomes.Unsupported("207000"), RuntimeError("boom")])

@pytest.mark.clause("CAP-01")
@pytest.mark.requires(Cap.DATA_MOVEMENT)
def test_needs_data_movement():
    pass
'''


def test_exception_groups_are_judged_without_their_unsupported_members(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_groups=GROUPS)
    out = pytester.path / "out"
    res = pytester.runpytest("-p", "mdlri_conformance.conformance.framework.plugin", "--backend", "mdlri_conformance.backends.sim:create",
                             "--report-dir", str(out))
    rows = _rows(out)
    assert rows["test_only_unsupported_in_the_group"]["outcome"] == "UNSUPPORTED"
    assert "207000" in rows["test_only_unsupported_in_the_group"]["message"]
    assert rows["test_a_failure_beside_unsupported"]["outcome"] == "FAIL"
    assert rows["test_a_failure_beside_unsupported"]["message"] == (
        "[CAP-04] buffer 0: expected [1], observed [0]")
    assert rows["test_an_implementation_failure_beside_unsupported"]["outcome"] == "CHANGED"
    assert rows["test_an_error_beside_unsupported"]["outcome"] == "ERROR"
    assert rows["test_an_error_beside_unsupported"]["message"] == "RuntimeError: boom"
    assert rows["test_needs_data_movement"]["outcome"] == "PASS"
    res.stdout.fnmatch_lines(["*capability probes (1 process(es)*every declared capability shown*"])


def test_probe_findings_make_specs_unsupported_and_are_reported(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_groups=GROUPS)
    out = pytester.path / "out"
    res = pytester.runpytest("-p", "mdlri_conformance.conformance.framework.plugin", "--backend",
                             "tests.partial_runtime:create_no_data", "--report-dir", str(out),
                             "-k", "needs_data_movement")
    rows = _rows(out)
    assert rows["test_needs_data_movement"]["outcome"] == "UNSUPPORTED"
    assert "lacks data_movement (probe: memcpy H2D then D2H returned [0, 0" in \
        rows["test_needs_data_movement"]["message"]
    res.stdout.fnmatch_lines(["*capability probes (1 process(es)*: absent",
                              "  data_movement: probe: memcpy H2D then D2H returned*"])
    found = json.loads((out / "probe.json").read_text())
    assert set(found["removed"]) == {"data_movement", "kernel_exec", "blocking_wait"}
    assert json.loads((out / "summary.json").read_text())["probe"] == found
    # --no-probe trusts the declared capabilities
    out2 = pytester.path / "out2"
    pytester.runpytest("-p", "mdlri_conformance.conformance.framework.plugin", "--backend",
                       "tests.partial_runtime:create_no_data", "--report-dir", str(out2),
                       "-k", "needs_data_movement", "--no-probe")
    assert _rows(out2)["test_needs_data_movement"]["outcome"] == "PASS"
    assert not (out2 / "probe.json").exists()
