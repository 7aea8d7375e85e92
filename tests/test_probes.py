"""The capability probes (conformance.probe) and what a partial runtime makes of the suite.

Unit tests run each probe against the simulator (everything shown) and against partial
runtimes lacking one thing each (tests.partial_runtime); the end-to-end test runs the whole
conformance suite on the stub-like partial runtime (no data movement, no kernel execution,
no blocking, update family 207000) and requires that nothing is FAIL, ERROR or CHANGED where
the runtime is right: what it cannot show is UNSUPPORTED, with the probe's finding. The
harness, the runner and the scenarios on the partial runtimes are tests/test_probes_partial.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mdlri_conformance.backends.sim as sim
from mdlri_conformance.backends.contract import (
    ALL_CAPS, EXTENDED_CAPS, PROBED_CAPS, Cap, Err,
)
from mdlri_conformance.conformance.framework import probe, probe_checks, probe_session
from mdlri_conformance.conformance.framework.verdicts import summary
from tests import partial_runtime as pr
from tests.fakes import NullBackend
from tests.probe_helpers import closing, live, run_probes  # noqa: F401 (closing: a fixture)

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "conformance" / "specs"



# ---------------------------------------------------------------------------------------------
# the probes as data


def test_every_probed_capability_has_one_probe() -> None:
    caps = [p.cap for p in probe_checks.PROBES]
    assert len(caps) == len(set(caps))
    assert PROBED_CAPS | {Cap.NEVER_TIMEOUT} <= set(caps)
    assert all(isinstance(p.cap, Cap) and p.name for p in probe_checks.PROBES)
    behaviour = {p.cap for p in probe_checks.PROBES if not p.family}
    assert behaviour == PROBED_CAPS | {Cap.NEVER_TIMEOUT}


def test_the_simulator_shows_everything_and_keeps_nothing(closing: list[Any]) -> None:
    b = sim.create()
    closing.append(b)
    before = live(b)
    report = run_probes(b)
    assert report.effective == report.declared >= ALL_CAPS | EXTENDED_CAPS
    assert report.removed == [] and report.failures == []
    probes = {p.cap.value for p in probe_checks.PROBES}
    assert {f.cap for f in report.findings} == probes | {m.key for m in probe_checks.MEASUREMENTS}
    assert all(f.verdict == "present" for f in report.findings if f.cap in probes)
    assert set(report.timings) == {"first_execution_s", "second_execution_s"}
    assert report.timings["first_execution_s"] < 1.0
    assert live(b) == before == (0, 0, 0, 0)
    assert b.capabilities == report.effective
    assert report.seconds < 5


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not on PATH (emulator build)")
def test_the_emulator_shows_everything_and_keeps_nothing(closing: list[Any]) -> None:
    """The acl binding on the emulator (hicann/runtime @681ef76 behaviour) keeps every
    declared capability, and the probes leave nothing behind."""
    from mdlri_conformance.backends.acl import create
    b = create("emulator")
    closing.append(b)
    before = live(b)
    report = run_probes(b)
    assert report.removed == [], [f.line() for f in report.removed]
    assert report.effective == report.declared
    assert PROBED_CAPS | {Cap.NEVER_TIMEOUT} <= report.effective
    assert live(b) == before
    assert report.seconds < 5


@pytest.mark.parametrize("factory, removed, fragment", [
    (pr.create_no_data, {Cap.DATA_MOVEMENT, Cap.KERNEL_EXEC, Cap.BLOCKING_WAIT},
     "probe: memcpy H2D then D2H returned [0, 0, 0, 0, 0, 0, 0, 0] for [1, 2, 3, 4, 5, 6, 7, 8]"),
    (pr.create_no_kernels, {Cap.KERNEL_EXEC}, "probe: kernel fallback_main wrote [-1"),
    (pr.create_no_blocking, {Cap.BLOCKING_WAIT}, "did not block"),
    (pr.create_no_update, {Cap.GET_PARAMS, Cap.SET_PARAMS, Cap.DISABLE, Cap.UPDATE},
     "probe: aclmdlRITaskGetParams answered 207000 (RT_FEATURE_NOT_SUPPORT)"),
    (pr.create_no_never_timeout, {Cap.NEVER_TIMEOUT}, "reports TIMEOUT 1090, not 0"),
], ids=["data", "kernels", "blocking", "update", "never_timeout"])
def test_a_runtime_lacking_one_thing_loses_exactly_that(closing: list[Any], factory: Any,
                                                         removed: set[Cap],
                                                         fragment: str) -> None:
    b = factory()
    closing.append(b)
    report = run_probes(b)
    assert report.declared - report.effective == removed
    assert any(fragment in f.reason for f in report.removed), report.removed
    for cap in removed:
        assert probe.reason(b, cap).startswith("probe: ")
    assert live(b) == (0, 0, 0, 0)  # every probe cleans up, also the failing ones


def test_kernel_execution_without_data_movement_says_why(closing: list[Any]) -> None:
    b = pr.create_no_data()
    closing.append(b)
    run_probes(b)
    assert "not measurable, data does not move" in probe.reason(b, Cap.KERNEL_EXEC)
    assert "data does not move" in probe.reason(b, Cap.BLOCKING_WAIT)


class _Answers207019(sim.SimBackend):
    """The simulator whose SetParams answers 207019 (the driver cannot update the op); it
    promises everything it declares, SetParams included, unless ``promise`` is False."""

    def __init__(self, promise: bool = False, **options: Any) -> None:
        super().__init__(**options)
        if not promise:
            self.promised_capabilities = self.capabilities - {Cap.SET_PARAMS}

    def task_set_params(self, task: Any, params: Any) -> int:
        return int(Err.RT_FEATURE_NOT_SUPPORT_UPDATE_OP)


def test_207019_removes_its_family(closing: list[Any]) -> None:
    b = _Answers207019()
    closing.append(b)
    report = run_probes(b)
    assert report.declared - report.effective == {Cap.SET_PARAMS}
    assert "207019" in probe.reason(b, Cap.SET_PARAMS)
    assert report.failures == []


def test_a_promised_capability_taken_away_fails_the_gate(closing: list[Any]) -> None:
    """A backend that promises a capability (the simulator promises all it declares): a probe
    that takes it away found a bug: the capability stays (the specs judge it) and the run's
    gate fails with the probe's evidence, never UNSUPPORTED."""
    b = _Answers207019(promise=True)
    closing.append(b)
    report = run_probes(b)
    assert report.effective == report.declared
    assert [f.cap for f in report.failures] == [Cap.SET_PARAMS.value]
    assert report.failures[0].reason == ("probe: aclmdlRITaskSetParams answered 207019 "
                                         "(RT_FEATURE_NOT_SUPPORT_UPDATE_OP) (a capability the "
                                         "backend promises)")
    assert probe.reason(b, Cap.SET_PARAMS) == ""


# ---------------------------------------------------------------------------------------------
# a wrong answer is a failure with the probe's evidence, never a lost capability


def test_a_wrong_sync_code_fails_the_blocking_probe_not_the_capability(
        closing: list[Any]) -> None:
    """``stream-sync-timeout-code`` (TMO-03 broken: an expired stream sync returns the
    event-sync 507047): the blocking-wait probe sees a wrong answer. BLOCKING_WAIT and every
    other capability stay, so the timeout specs run and judge it; the report fails."""
    b = sim.create(faults=["stream-sync-timeout-code"])
    closing.append(b)
    report = run_probes(b)
    assert report.effective == report.declared
    assert [(f.cap, f.verdict) for f in report.failures] == [(Cap.BLOCKING_WAIT.value, "wrong")]
    assert "returned 507047 (RT_EVENT_SYNC_TIMEOUT), expected 507046" in \
        report.failures[0].reason
    assert report.to_dict()["failures"] == {"blocking_wait": report.failures[0].reason}
    assert live(b) == (0, 0, 0, 0)


@pytest.mark.parametrize("rc, verdict", [
    (Err.SUCCESS, "absent"), (Err.RT_FEATURE_NOT_SUPPORT, "absent"),
    (Err.RT_EVENT_SYNC_TIMEOUT, "wrong"), (Err.RT_PARAM_INVALID, "wrong"),
], ids=["returns-0-at-once", "207000", "507047", "107000"])
def test_the_blocking_probe_tells_absent_from_wrong(closing: list[Any], rc: int,
                                                     verdict: str) -> None:
    """The first timed sync of the blocked execution answers ``rc``: 0 at once or 207000 is
    an absent feature (the capability goes, UNSUPPORTED); anything else is wrong (kept, the
    gate fails)."""

    class Answers(pr.PartialSim):
        answered = False

        def synchronize_stream_with_timeout(self, stream: Any, timeout_ms: int) -> int:
            if timeout_ms == probe_session.BLOCK_MS and not self.answered:
                self.answered = True
                return int(rc)
            return super().synchronize_stream_with_timeout(stream, timeout_ms)

    b = Answers(set())
    closing.append(b)
    b.promised_capabilities = frozenset()  # a runtime promising nothing: absent is not a bug
    report = run_probes(b)
    found = next(f for f in report.findings if f.cap == Cap.BLOCKING_WAIT.value)
    assert found.verdict == verdict, found
    assert (Cap.BLOCKING_WAIT in report.effective) is (verdict == "wrong")
    assert found.fails_gate is (verdict == "wrong")


def test_a_wrong_answer_of_a_family_or_a_setup_call_fails(closing: list[Any]) -> None:
    """A family call answering another code than 0 / 207000 / 207019 is a wrong answer (the
    capability stays, the gate fails), and so is a setup call of any probe."""

    class Wrong(pr.PartialSim):
        def create_label(self) -> tuple[int, Any]:
            return int(Err.RT_PARAM_INVALID), None

        def malloc(self, size: int, policy: int = 0) -> tuple[int, Any]:
            if size == probe_session.ROUND_TRIP.nbytes:
                return int(Err.RT_INTERNAL_ERROR), None
            return super().malloc(size, policy)

    b = Wrong(set())
    closing.append(b)
    report = run_probes(b)
    wrong = {f.cap: f.reason for f in report.failures}
    assert wrong[Cap.LABELS.value] == ("probe: aclrtCreateLabel returned 107000 "
                                       "(RT_PARAM_INVALID), expected 0 (SUCCESS)")
    assert wrong[Cap.DATA_MOVEMENT.value].startswith("probe: aclrtMalloc(32) returned 507000")
    assert {Cap.LABELS, Cap.DATA_MOVEMENT} <= report.effective


def test_bytes_that_moved_wrong_are_a_wrong_answer(closing: list[Any]) -> None:
    class Garbles(pr.PartialSim):
        def memcpy(self, dst: Any, dest_max: int, src: Any, count: int, kind: int) -> int:
            rc = super().memcpy(dst, dest_max, src, count, kind)
            if isinstance(dst, np.ndarray):
                dst.view(np.uint8)[0] ^= 0xFF
            return rc

    b = Garbles(set())
    closing.append(b)
    report = run_probes(b)
    assert [f.cap for f in report.failures][:1] == [Cap.DATA_MOVEMENT.value]
    assert "memcpy H2D then D2H returned [254, 2, 3" in report.failures[0].reason


def test_pageable_memory_that_cannot_be_detected_is_absent(closing: list[Any]) -> None:
    """The stub's driver reports DEVICE for every pointer: the probe asks
    aclrtPointerGetAttributes about a malloc'd host buffer (it copies nothing) and finds
    pageable memory undetectable; the specs of the refusal are UNSUPPORTED with that reason."""
    b = pr.create_no_pageable()
    closing.append(b)
    report = run_probes(b)
    assert report.declared - report.effective == {Cap.PAGEABLE_DETECTION}
    assert probe.reason(b, Cap.PAGEABLE_DETECTION) == (
        "probe: pageable memory cannot be detected: aclrtPointerGetAttributes reports a "
        "malloc'd host pointer as DEVICE, not UNREGISTERED")
    assert report.failures == []


def test_the_first_execution_is_measured(closing: list[Any]) -> None:
    b = pr.create_slow_first_exec()
    closing.append(b)
    report = run_probes(b)
    assert 1.0 <= report.timings["first_execution_s"] < 3.0
    assert report.timings["second_execution_s"] < 0.5
    lines = summary.probe_lines(summary.probe_summary({"main": report.to_dict()}))
    assert "; first execution 1.00 s, second 0.00 s)" in lines[0]


def test_a_probe_needing_an_undeclared_capability_is_not_measured(closing: list[Any]) -> None:
    b = sim.create()
    closing.append(b)
    b.capabilities = frozenset(b.capabilities - {Cap.CAPTURE})
    report = run_probes(b)
    # behaviour probes must show their capability; family probes keep it when unmeasured
    assert Cap.BLOCKING_WAIT not in report.effective
    assert "not measurable without capture" in probe.reason(b, Cap.BLOCKING_WAIT)
    assert {Cap.LISTING, Cap.GET_PARAMS, Cap.TASK_GROUPS} <= report.effective
    assert all(f.cap != Cap.CAPTURE.value for f in report.findings)  # not declared: not run


def test_a_backend_that_breaks_the_probes_loses_only_what_they_measure() -> None:
    """A harness error is not a runtime's answer: UNKNOWN, never a gate failure."""
    b = NullBackend()  # answers 0 where a tuple is due: every probe hits a harness error
    report = run_probes(b)
    assert report.declared - report.effective == PROBED_CAPS
    assert report.reason(Cap.DATA_MOVEMENT).startswith("probe error: TypeError")
    assert report.reason(Cap.BLOCKING_WAIT).startswith("probe error: TypeError")
    assert report.failures == []


# ---------------------------------------------------------------------------------------------
# the whole suite on the stub-like runtime


def _suite(backend: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider",
           str(SPECS), "--backend", backend, "--report-dir", str(out), "-q", *extra]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)


def _rows(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def stub_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str],
                                                                   list[dict[str, Any]], Path]:
    out = tmp_path_factory.mktemp("stub")
    res = _suite("tests.partial_runtime:factory", out, "-n", "2")
    return res, _rows(out), out


def test_the_stub_like_runtime_fails_nothing(stub_run: Any) -> None:
    res, rows, _ = stub_run
    bad = {r["nodeid"]: f"{r['outcome']} {r['message']}" for r in rows
           if r["outcome"] in ("FAIL", "ERROR", "CHANGED", "CRASH", "TIMEOUT")}
    assert not bad, "\n".join(f"{k}: {v}" for k, v in sorted(bad.items()))
    counts = {o: sum(r["outcome"] == o for r in rows) for o in ("PASS", "UNSUPPORTED")}
    assert counts["PASS"] > 200 and counts["UNSUPPORTED"] > 100, counts
    assert "capability probes" in res.stdout


def test_unsupported_rows_carry_the_probe_finding(stub_run: Any) -> None:
    _, rows, out = stub_run
    by_id = {r["nodeid"]: r for r in rows}
    # a missing family at setup: the probe's answer
    row = by_id["conformance/specs/test_update.py::test_update_sequence_around_execution"]
    assert row["outcome"] == "UNSUPPORTED"
    assert "probe: aclmdlRITaskGetParams answered 207000" in row["message"] or \
        "probe: aclmdlRITaskSetParams answered 207000" in row["message"]
    # a readback inside a spec: the data-movement finding
    reads = [r for r in rows if "needs data movement: probe: memcpy H2D then D2H" in
             r["message"]]
    assert reads and all(r["outcome"] == "UNSUPPORTED" for r in reads)
    # the scenarios need data movement
    scen = [r for r in rows if "test_scenarios.py" in r["nodeid"]]
    assert scen and all(r["outcome"] == "UNSUPPORTED" for r in scen)
    assert all("probe: " in r["message"] for r in scen)
    found = json.loads((out / "probe.json").read_text())
    assert found["uniform"] and set(found["removed"]) == {
        c.value for c in (Cap.DATA_MOVEMENT, Cap.KERNEL_EXEC, Cap.BLOCKING_WAIT, Cap.GET_PARAMS,
                          Cap.SET_PARAMS, Cap.DISABLE, Cap.UPDATE, Cap.PAGEABLE_DETECTION)}
    assert found["failures"] == {}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["probe"]["removed"] == found["removed"]


def test_without_probing_the_stateful_machine_is_unsupported_not_error(
        tmp_path: Path) -> None:
    """Row 13 of the real-runtime findings: GetParams 207000 inside the state machine."""
    from mdlri_conformance.conformance.specs import test_stateful as machine
    res = _suite("tests.partial_runtime:create_no_update", tmp_path, "-n", "0", "--no-probe",
                 "-k", "model_ri_state_machine")
    rows = _rows(tmp_path)
    assert len(rows) == 2 * machine.BATCHES, res.stdout[-3000:]
    assert {r["outcome"] for r in rows} == {"UNSUPPORTED"}, res.stdout[-3000:]
    assert all("207000" in r["message"] for r in rows)


def test_without_probing_generated_specs_are_unsupported_not_changed(tmp_path: Path) -> None:
    """Row 12: _negative reported CHANGED for 207000 vs 107000."""
    res = _suite("tests.partial_runtime:create_no_update", tmp_path, "-n", "0", "--no-probe",
                 "-k", "generated_negative or generated_listing")
    rows = _rows(tmp_path)
    assert {r["outcome"] for r in rows} == {"UNSUPPORTED"}, res.stdout[-3000:]


# ---------------------------------------------------------------------------------------------
# a runtime call that never returns


def test_a_hung_probe_is_bounded_and_keeps_its_capability() -> None:
    """TMO-01 broken (``timeout-ignored``: a timed sync waits forever): the blocking-wait
    probe is HUNG after its deadline instead of hanging the start; the capability stays so
    the specs judge the hang, and the probes after it are not run (their thread is stuck)."""
    b = sim.create(faults=["timeout-ignored"])
    blocking = [p for p in probe_checks.PROBES if p.cap is Cap.BLOCKING_WAIT]
    rest = [p for p in probe_checks.PROBES if p.cap is not Cap.BLOCKING_WAIT]
    report = probe.run_probes(b, probes=(*blocking, *rest), deadline_s=1.0)
    found = {f.cap: f for f in report.findings}
    hung = found[Cap.BLOCKING_WAIT.value]
    assert hung.verdict == "hung" and hung.kept
    assert hung.reason.startswith("probe: a runtime call did not return within 1 s")
    assert 1.0 <= hung.seconds < 5.0
    after = report.findings[report.findings.index(hung) + 1:]
    assert after and all(f.verdict == "hung" and f.kept for f in after)
    assert all(f.reason == "probe: not run: the blocking value wait probe hung before it" for f in after)
    assert report.effective == report.declared
    # the stuck probe thread is a daemon; the backend is left open (close would wait on it)


def test_a_hung_probe_is_named_in_the_summary() -> None:
    findings = [{"cap": "blocking_wait", "verdict": "hung", "reason": "probe: ... 10 s"}]
    probe_block = {"processes": ["controller"], "removed": {}, "uniform": True,
                   "seconds": {"controller": 10.1}, "findings": {"controller": findings}}
    assert summary.probe_lines(probe_block) == [
        "capability probes (1 process(es), 10.10 s per start): every declared capability "
        "shown, a probe hung", "  blocking_wait: hung (probe: ... 10 s)"]


# ---------------------------------------------------------------------------------------------
# a probe's failure in the run's verdict and lines


_WRONG = ("probe: a captured aclrtValueWait on an unset word was answered wrongly: "
          "aclrtSynchronizeStreamWithTimeout(100 ms) returned 507047 (RT_EVENT_SYNC_TIMEOUT), "
          "expected 507046 (RT_STREAM_SYNC_TIMEOUT)")


def _probe_block(**failures: str) -> dict[str, Any]:
    per = {"gw0": {"removed": {}, "failures": dict(failures), "seconds": 0.1,
                   "timings": {"first_execution_s": 5.01, "second_execution_s": 0.0},
                   "findings": []},
           "gw1": {"removed": {}, "failures": {}, "seconds": 0.1, "findings": []}}
    return summary.probe_summary(per)


def test_a_probe_failure_fails_the_verdict_even_when_every_row_passes() -> None:
    from mdlri_conformance.conformance.framework.verdicts import verdict
    rows = [{"nodeid": "a", "outcome": "PASS", "area": "x", "clauses": []}]
    done = verdict.completeness(rows, ["a"], "complete")
    assert verdict.decide(rows, done, 0, []).name == verdict.PASS
    found = verdict.decide(rows, done, 0, [], probe_failures=[f"blocking_wait: {_WRONG}"])
    assert found.name == verdict.FAIL and found.code == 1
    assert found.why == f"a capability probe saw a wrong answer: blocking_wait: {_WRONG}"
    block = _probe_block(blocking_wait=_WRONG)
    built = summary.build_summary(rows, [], "sim", collected=["a"], probe=block)
    assert built["verdict"]["verdict"] == verdict.FAIL
    assert summary.build_summary(rows, [], "sim", collected=["a"],
                                 probe=_probe_block())["verdict"]["verdict"] == verdict.PASS


def test_the_probe_lines_name_the_wrong_answer_and_the_first_execution() -> None:
    lines = summary.probe_lines(_probe_block(blocking_wait=_WRONG))
    assert lines[0] == ("capability probes (2 process(es), 0.10 s per start; first execution "
                        "5.01 s, second 0.00 s): FAIL, a probe saw a wrong answer (fails the "
                        "gate)")
    assert lines[1] == f"  blocking_wait: {_WRONG}"[:240]
    assert summary.probe_lines(_probe_block())[0].endswith(": every declared capability shown")


# ---------------------------------------------------------------------------------------------
# the generated tier on a runtime whose first execution is slow


def test_the_budget_follows_the_measured_first_execution() -> None:
    from mdlri_conformance.conformance.framework import exec_budget
    b = exec_budget.Budget(per_stream_s=5.0, seconds=24.0)
    assert b.examples(4, 60) == 1 and b.examples(1, 60) == 4 and b.examples(4, 0) == 0
    assert b.admit(4) and not b.admit(5)
    assert b.too_slow(12).startswith("execution too slow for the generated tier: 5.0 s per "
                                     "first execution")
    fast = sim.create()
    try:
        run_probes(fast)
        assert exec_budget.budget_for(fast, 60.0) is None  # milliseconds: nothing to size
    finally:
        probe.forget(fast)
        fast.close()
    slow = pr.create_slow_first_exec()
    try:
        run_probes(slow)
        got = exec_budget.budget_for(slow, 60.0)
        assert got is not None and 0.9 < got.per_stream_s < 1.5 and got.seconds == 24.0
        assert exec_budget.budget_for(slow, 0) is None  # the watchdog off: no TIMEOUT to avoid
    finally:
        probe.forget(slow)
        slow.close()


@pytest.mark.parametrize("spec_timeout, outcome", [("10", "UNSUPPORTED"), ("20", "PASS")])
def test_a_slow_first_execution_sizes_the_generated_tier(tmp_path: Path, spec_timeout: str,
                                                        outcome: str) -> None:
    """1 s per stream of a model's first execution: with a 20 s spec timeout a generated spec
    runs the one example that fits (PASS); with 10 s not even one fits: UNSUPPORTED with the
    measured cost, never TIMEOUT."""
    res = _suite("tests.partial_runtime:create_slow_first_exec", tmp_path, "-n", "0",
                 "--spec-timeout", spec_timeout, "-k", "test_generated_listing")
    rows = _rows(tmp_path)
    assert [r["outcome"] for r in rows] == [outcome], res.stdout[-3000:]
    if outcome == "UNSUPPORTED":
        assert rows[0]["message"].startswith("UNSUPPORTED: execution too slow for the generated "
                                             "tier: 1.0 s per first execution")
    else:
        assert rows[0]["hypothesis"]["examples"] == 1
    assert "first execution 1.00 s" in res.stdout


def test_a_run_whose_probe_sees_a_wrong_answer_fails_even_re_rendered(tmp_path: Path) -> None:
    """The planted ``stream-sync-timeout-code`` with only a spec it cannot touch selected
    (XS-14 PASSes): the run's gate is FAIL (exit 1) with the probe's evidence, not PASS and
    not UNSUPPORTED; ``report`` re-rendering the run keeps it."""
    out = tmp_path / "run"

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", *args],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)

    res = cli("run", "--backend", "sim", "--fault", "stream-sync-timeout-code", "-n", "1",
              "-k", "test_xs14", "--report-dir", str(out))
    assert res.returncode == 1, res.stdout[-3000:] + res.stderr[-2000:]
    assert [r["outcome"] for r in _rows(out)] == ["PASS"]
    gate = next(ln for ln in res.stdout.splitlines() if ln.startswith("gate: "))
    assert gate.startswith("gate: FAIL (backend sim: the embedded simulator, mdlri-sim 0.1, "
                           "device: none (simulated in the process)): a capability probe saw "
                           "a wrong answer: "
                           "blocking_wait: probe: a captured aclrtValueWait on an unset word "
                           "was answered wrongly: aclrtSynchronizeStreamWithTimeout(100 ms) "
                           "returned 507047")
    again = cli("report", str(out))
    assert any(ln.startswith("gate: FAIL") for ln in again.stdout.splitlines()), again.stdout
    clean = cli("run", "--backend", "sim", "-n", "1", "-k", "test_xs14", "--report-dir",
                str(tmp_path / "clean"))
    assert clean.returncode == 0, clean.stdout[-3000:]


def test_undetectable_pageable_memory_makes_its_refusals_unsupported(tmp_path: Path) -> None:
    """MODE-13, MODE-14, FLD-03 under GLOBAL and the shipped case copy-kinds-pinned-host
    expect the refusal of a pageable async copy, which a runtime that cannot tell pageable
    memory never gives: UNSUPPORTED with the probe's reason, never FAIL; FLD-03 in the other
    modes (no refusal expected) still runs and passes."""
    res = _suite("tests.partial_runtime:create_no_pageable", tmp_path, "-n", "0", "-k",
                 "mode13_pageable or mode14 or other_threads_sync_copy or copy-kinds-pinned-host")
    rows = {r["nodeid"].split("::")[1]: r for r in _rows(tmp_path)}
    assert rows and not [r for r in rows.values() if r["outcome"] not in ("PASS", "UNSUPPORTED")], \
        res.stdout[-3000:]
    unsupported = {k for k, r in rows.items() if r["outcome"] == "UNSUPPORTED"}
    assert unsupported == {
        "test_mode13_pageable_async_on_other_stream_code",
        *(f"test_mode14_pageable_async_on_capturing_stream[{m}]"
          for m in ("GLOBAL", "THREAD_LOCAL", "RELAXED")),
        "test_other_threads_sync_copy_during_capture[GLOBAL]",
        "test_case_file_results[copy-kinds-pinned-host]",
        "test_case_file_listing[copy-kinds-pinned-host]"}, sorted(rows)
    assert all("probe: pageable memory cannot be detected: aclrtPointerGetAttributes reports a "
               "malloc'd host pointer as DEVICE" in rows[k]["message"] for k in unsupported)
    assert rows["test_other_threads_sync_copy_during_capture[RELAXED]"]["outcome"] == "PASS"
