"""Expectations files: parsing errors, XFAIL/XPASS, gated CHANGED, unused entries."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mdlri_conformance.conformance.framework.verdicts import known as ex

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
        "test_task_groups.py::test_group_update_survives_a_later_update",
    }
    assert {e.outcome for e in exp.entries} == {"FAIL"}
    assert all(re.search(r"\.cc:\d+", e.reason) for e in exp.entries), "reasons cite file:line"
    # each runtime bug carries one command that reproduces it on that runtime, naming its spec
    for e in exp.entries:
        m = re.fullmatch(r"reproduce: .*mdlri-conformance run --backend acl .*--virtual-device "
                         r".*-k (\S+)", e.note)
        assert m is not None and e.id.endswith("::" + m.group(1)), (e.id, e.note)


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


# ---------------------------------------------------------------------------------------------
# files that are no expectations of this run: not UTF-8, another backend, a backend not named


def test_a_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    p = tmp_path / "exp.toml"
    p.write_bytes(b'backend = "sim"\n# caf\xe9\n')
    with pytest.raises(ex.ExpectationsError) as err:
        ex.load(p)
    assert str(err.value) == (f"{p}:2: not UTF-8 text (byte 0xe9 at offset 21); save the file "
                              "as UTF-8")


@pytest.mark.parametrize("text,backend,fragment", [
    ('backend = 42\n', None, "backend must be a backend name (sim, acl or "
                             "package.module:factory), not 42"),
    ('backend = "atlas"\n', None, "backend must be a backend name"),
    ('backend = "acl"\n', "sim", "written for backend 'acl', this run's backend is 'sim'"),
    ('backend = "sim"\n', "acl", "written for backend 'sim', this run's backend is 'acl'"),
    ('backend = "sim"\n', "tests.fakes:create", "written for backend 'sim'"),
])
def test_a_file_for_another_backend_is_refused(tmp_path: Path, text: str, backend: str | None,
                                               fragment: str) -> None:
    p = _write(tmp_path, text)
    with pytest.raises(ex.ExpectationsError) as err:
        ex.load(p, backend=backend)
    assert fragment in str(err.value) and str(p) in str(err.value)
    assert "\n" not in str(err.value)


def test_a_file_for_this_backend_loads(tmp_path: Path) -> None:
    for text, backend in (('backend = "sim"\n', "sim"),
                          ('backend = "sim"\n', "mdlri_conformance.backends.sim:create"),
                          ('backend = "tests.fakes:create"\n', "tests.fakes:create"),
                          ("", "acl")):
        assert ex.load(_write(tmp_path, text), backend=backend).entries == []


def test_shipped_files_name_their_backend() -> None:
    """atlas-a2 is the acl backend's: refused on sim; sim's is refused on acl."""
    shipped = Path("conformance/framework/expectations")
    with pytest.raises(ex.ExpectationsError, match="written for backend 'acl'"):
        ex.load(shipped / "atlas-a2.toml", backend="sim")
    with pytest.raises(ex.ExpectationsError, match="written for backend 'sim'"):
        ex.load(shipped / "sim.toml", backend="acl")
    assert ex.load(shipped / "atlas-a2.toml", backend="acl").required


# ---------------------------------------------------------------------------------------------
# signatures: a known divergence wherever a spec reaches it

#: the messages of the MODE-03 leak (fault wrong-thread-end-leaks-mode): its own spec, and the
#: capture state machine reaching it
MODE03_SPEC = ("[MODE-03,CAP-14] aclrtMemcpy in the beginning thread under a THREAD_LOCAL "
               "capture after a wrong-thread end rc: expected 107030 "
               "(RT_CAPTURE_MODE_NOT_SUPPORT), observed 0 (SUCCESS)")
MODE03_MACHINE = ("[MODE-03] aclrtMemset in thread 1 (exchange mode GLOBAL; captures: stream 1: "
                  "THREAD_LOCAL by thread 1) rc: expected 107030 (RT_CAPTURE_MODE_NOT_SUPPORT), "
                  "observed 0 (SUCCESS)")
CANN = Path("conformance/framework/expectations/cann-681ef76.toml")


def _mode03_entry() -> ex.Entry:
    exp = ex.load(CANN, ex.known_ids(Path("conformance/specs")), backend="acl")
    return next(e for e in exp.entries if e.id.endswith("test_mode03_after_wrong_thread_end"))


def test_the_mode03_signature_matches_the_leak_wherever_it_shows() -> None:
    sig = _mode03_entry().signature
    assert sig is not None and sig.matches(MODE03_SPEC) and sig.matches(MODE03_MACHINE)
    assert sig.matches(MODE03_MACHINE + "\nFalsifying example: ...")


@pytest.mark.parametrize("message", [
    MODE03_MACHINE.replace("[MODE-03]", "[MODE-02]"),                       # another clause
    MODE03_MACHINE.replace("aclrtMemset in", "aclrtMemsetAsync in"),        # another call
    MODE03_MACHINE.replace("observed 0 (SUCCESS)", "observed 107000 (INVALID_PARAM)"),
    MODE03_MACHINE.replace("expected 107030 (RT_CAPTURE_MODE_NOT_SUPPORT)", "expected 0"),
    "[MODE-03] capture status: expected 'ACTIVE', observed 'NONE'",
    "worker crashed", "",
])
def test_the_mode03_signature_matches_nothing_else(message: str) -> None:
    sig = _mode03_entry().signature
    assert sig is not None and not sig.matches(message)


def test_lookup_by_signature_needs_the_outcome_and_the_message() -> None:
    exp = ex.load(CANN, ex.known_ids(Path("conformance/specs")), backend="acl")
    machine = "conformance/specs/test_stateful_capture.py::test_capture_state_machine[0]"
    clauses = ["CAP-04", "CAP-14", "MODE-03"]
    entry = exp.lookup(machine, clauses, "", "FAIL", MODE03_MACHINE)
    assert entry is _mode03_entry() or (entry is not None and entry.line == _mode03_entry().line)
    assert ex.apply("FAIL", entry) == "XFAIL"
    assert exp.lookup(machine, clauses, "", "PASS", "") is None          # a pass: no XPASS
    assert exp.lookup(machine, clauses, "", "ERROR", MODE03_MACHINE) is None
    assert exp.lookup(machine, clauses, "", "FAIL", MODE03_MACHINE.replace(
        "observed 0 (SUCCESS)", "observed 107000 (INVALID_PARAM)")) is None


@pytest.mark.parametrize("sig, fragment", [
    ('"x"', "signature must be a table"),
    ('{ clause = "MODE-03", call = "f", expected = "1" }', "signature without observed"),
    ('{ clause = "MODE-03", call = "f", expected = "1", observed = "0", x = 1 }',
     "unknown signature key(s) x"),
    ('{ clause = "NOPE-01", call = "f", expected = "1", observed = "0" }',
     "signature clause 'NOPE-01' is no clause id"),
    ('{ clause = "MODE-03", call = [], expected = "1", observed = "0" }',
     "signature call must be a function name"),
    ('{ clause = "MODE-03", call = "f", expected = true, observed = "0" }',
     "signature expected must be a string"),
])
def test_bad_signatures_are_one_line_errors(tmp_path: Path, sig: str, fragment: str) -> None:
    p = _write(tmp_path, f'\n[[expect]]\nid = "CAP-01"\noutcome = "FAIL"\nreason = "x"\n'
                         f'signature = {sig}\n')
    with pytest.raises(ex.ExpectationsError) as err:
        ex.load(p, ex.known_ids(Path("conformance/specs")))
    assert f"{p}:2: " in str(err.value) and fragment in str(err.value), str(err.value)


SIGNATURE_SPECS = '''
import pytest
from mdlri_conformance.conformance import expect

@pytest.mark.clause("MODE-02")  # the entry names it by this clause (a spec id must exist)
def test_named():
    expect.rc(0, 107030, "aclrtMemcpy in the beginning thread")

@pytest.mark.clause("MODE-03")
def test_machine_reaches_it():
    expect.rc(0, 107030, "aclrtMemset in thread 1")

@pytest.mark.clause("MODE-03")
def test_unrelated_failure():
    expect.rc(107000, 107030, "aclrtMemset in thread 2")

@pytest.mark.clause("MODE-03")
def test_passes():
    expect.ok(0, "aclrtMemset in thread 3")
'''

SIGNATURE_ENTRY = ('[[expect]]\nid = "MODE-02"\noutcome = "FAIL"\nreason = "leak"\n'
                   'signature = { clause = "MODE-03", call = ["aclrtMemcpy", "aclrtMemset"], '
                   'expected = "107030", observed = "0" }\n')


def test_a_signature_entry_is_xfail_wherever_it_shows_and_nowhere_else(
        pytester: pytest.Pytester) -> None:
    """The spec the entry names and another spec failing with its signature are XFAIL; a
    failure with another observed value stays FAIL (the gate fails); a spec that passes stays
    PASS."""
    pytester.makepyfile(test_specs=SIGNATURE_SPECS)
    (pytester.path / "exp.toml").write_text(SIGNATURE_ENTRY)
    out = pytester.path / "out"
    res = pytester.runpytest("-p", "mdlri_conformance.conformance.framework.plugin", "--backend",
                             "tests.fakes:create", "--report-dir", str(out), "--expectations",
                             str(pytester.path / "exp.toml"))
    rows = {r["nodeid"].split("::")[-1]: r
            for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert {n: r["outcome"] for n, r in rows.items()} == {
        "test_named": "XFAIL", "test_machine_reaches_it": "XFAIL",
        "test_unrelated_failure": "FAIL", "test_passes": "PASS"}
    assert rows["test_machine_reaches_it"]["expectation_line"] == 1
    assert res.ret == 1  # the unrelated failure fails the gate


def test_a_signature_entry_whose_spec_passes_is_xpass(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_specs=SIGNATURE_SPECS.replace(
        'expect.rc(0, 107030, "aclrtMemcpy in the beginning thread")',
        'expect.ok(0, "aclrtMemcpy in the beginning thread")'))
    (pytester.path / "exp.toml").write_text(SIGNATURE_ENTRY)
    out = pytester.path / "out"
    res = pytester.runpytest("-p", "mdlri_conformance.conformance.framework.plugin", "--backend",
                             "tests.fakes:create", "--report-dir", str(out), "--expectations",
                             str(pytester.path / "exp.toml"), "-k", "named or passes")
    rows = {r["nodeid"].split("::")[-1]: r
            for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    assert rows["test_named"]["outcome"] == "XPASS" and rows["test_passes"]["outcome"] == "PASS"
    assert res.ret == 1


@pytest.mark.skipif(shutil.which("gcc") is None,
                    reason="gcc is not installed: the acl emulator cannot be built")
def test_cann_mode03_entry_turns_the_capture_machines_finding_into_xfail(tmp_path: Path) -> None:
    """The emulator with the real runtime's MODE-03 leak (fault wrong-thread-end-leaks-mode):
    the capture state machine finds it under its own id, and the shipped cann-681ef76 entry
    turns that finding into XFAIL by its signature, as it does the spec it names; the gate
    passes."""
    out = tmp_path / "run"
    res = subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", "run",
                          "--backend", "acl", "--acl-lib", "emulator", "-n", "0",
                          "--fault", "wrong-thread-end-leaks-mode", "--expectations",
                          "cann-681ef76", "--report-dir", str(out), "-k",
                          "test_mode03_after_wrong_thread_end or test_capture_state_machine"],
                         capture_output=True, text=True, timeout=600,
                         cwd=Path(__file__).resolve().parents[1])
    rows = [json.loads(ln) for ln in (out / "results.jsonl").read_text().splitlines()]
    machine = [r for r in rows if "test_capture_state_machine[" in r["nodeid"]
               and r["outcome"] != "PASS"]
    assert machine and all(r["outcome"] == "XFAIL" for r in machine), \
        [(r["nodeid"], r["outcome"], r["message"]) for r in machine]
    assert all(r["expectation_line"] == _mode03_entry().line for r in machine)
    named = [r for r in rows if r["nodeid"].endswith("test_mode03_after_wrong_thread_end")]
    assert [r["outcome"] for r in named] == ["XFAIL"]
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
