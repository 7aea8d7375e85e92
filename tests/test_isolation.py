"""Crash/hang isolation, leak checks and Hypothesis counts (conformance.isolation).

The crash and hang tests use emulator faults that really segfault (a NULL write inside
aclrtStreamQuery) and really block in native code (aclrtStreamQuery waiting for a stream that
never drains), under one xdist worker: the spec that reaches the fault is CRASH / TIMEOUT and
every other selected spec still reports.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mdlri_conformance.conformance.framework import killstats, leaks
from mdlri_conformance.backends.contract import LiveCounts
from tests.emulator import skip_unless_emulator

REPO = Path(__file__).resolve().parents[1]
SPECS = REPO / "conformance" / "specs"
#: the three specs that call aclrtStreamQuery, plus two that do not
QUERY_SPECS = ("stat06_sync_and_query_capturing_stream or sync_of_capturing_stream or "
               "query_after_expired_sync or test_minus_one_waits or positive_timeout_limits")


def _suite(out: Path, *args: str, timeout: float = 240) -> tuple[int, list[dict]]:
    cmd = [sys.executable, "-m", "pytest", str(SPECS), "-p", "no:cacheprovider", "-q",
           "--tb=no", "--report-dir", str(out), *args]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return proc.returncode, rows


def test_emulator_segfault_is_one_crash_per_spec_and_the_run_goes_on(tmp_path: Path) -> None:
    skip_unless_emulator()
    code, rows = _suite(tmp_path, "-n", "1", "--backend", "acl", "--acl-lib", "emulator",
                        "--fault", "crash-query", "-k", QUERY_SPECS)
    by = {r["nodeid"].split("::")[-1]: r for r in rows}
    assert code == 1
    crashed = sorted(n for n, r in by.items() if r["outcome"] == "CRASH")
    assert crashed == ["test_query_after_expired_sync_reports_not_ready",
                       "test_stat06_sync_and_query_capturing_stream",
                       "test_sync_of_capturing_stream"]
    assert by["test_minus_one_waits_until_done"]["outcome"] == "PASS"
    assert all(r["outcome"] == "PASS" for n, r in by.items() if n not in crashed)
    assert by["test_sync_of_capturing_stream"]["clauses"] == ["TMO-05", "STAT-06"]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["totals"]["CRASH"] == 3 and summary["gate"] == "fail"


def test_emulator_hang_is_one_timeout_and_the_run_goes_on(tmp_path: Path) -> None:
    skip_unless_emulator()
    code, rows = _suite(tmp_path, "-n", "1", "--backend", "acl", "--acl-lib", "emulator",
                        "--fault", "hang-query-sync", "--spec-timeout", "1", "-k", QUERY_SPECS)
    by = {r["nodeid"].split("::")[-1]: r for r in rows}
    assert code == 1
    hung = by["test_query_after_expired_sync_reports_not_ready"]
    assert hung["outcome"] == "TIMEOUT" and "native code" in hung["message"]
    assert [n for n, r in by.items() if r["outcome"] != "PASS"] == [
        "test_query_after_expired_sync_reports_not_ready"]
    assert len(by) == 5


def test_sim_hang_in_python_is_interrupted_without_ending_the_process(tmp_path: Path) -> None:
    code, rows = _suite(tmp_path, "--fault", "hang-query-sync", "--spec-timeout", "1",
                        "-k", QUERY_SPECS)
    by = {r["nodeid"].split("::")[-1]: r for r in rows}
    assert by["test_query_after_expired_sync_reports_not_ready"]["outcome"] == "TIMEOUT"
    assert "interrupted in call" in by["test_query_after_expired_sync_reports_not_ready"]["message"]
    assert sum(r["outcome"] == "PASS" for r in rows) == 4 and code == 1


LEAKY_SPECS = '''
import pytest

@pytest.mark.clause("LIFE-08")
def test_leaks_an_event(backend):
    backend.create_event()

@pytest.mark.clause("LIFE-08")
def test_clean(backend):
    pass
'''


def test_leaking_spec_is_reported_against_that_spec(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_leaky=LEAKY_SPECS)
    out = pytester.path / "out"
    res = pytester.runpytest("-p", "mdlri_conformance.conformance.framework.plugin", "--backend", "tests.fakes:create_leaky",
                             "--report-dir", str(out))
    rows = {json.loads(l)["nodeid"].split("::")[-1]: json.loads(l)
            for l in (out / "results.jsonl").read_text().splitlines()}
    assert rows["test_leaks_an_event"]["leaks"] == {"events": 1}
    assert rows["test_clean"]["leaks"] == {}  # checked, nothing grew
    assert rows["test_leaks_an_event"]["outcome"] == "PASS"  # reported, not gated
    summary = json.loads((out / "summary.json").read_text())
    assert summary.get("leaking_specs") == 1
    res.stdout.fnmatch_lines(["*leaking specs: 1 of 2 checked*"])


@pytest.mark.parametrize("backend, line", [
    ("sim", "leaking specs: 0 of 2 checked*"),
    ("tests.fakes:create_sim_no_counts", "leaks: not checked*")])
def test_nothing_leaked_differs_from_not_checked(pytester: pytest.Pytester, backend: str,
                                                 line: str) -> None:
    """A backend with live counts gives every spec ``"leaks": {}`` when nothing grew; one
    without gives no ``"leaks"`` at all, and the console says "not checked"."""
    pytester.makepyfile(test_clean=LEAKY_SPECS.replace("backend.create_event()", "pass"))
    out = pytester.path / "out"
    res = pytester.runpytest("-p", "mdlri_conformance.conformance.framework.plugin", "-p", "no:randomly",
                             "--backend", backend, "--report-dir", str(out))
    rows = [json.loads(l) for l in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r["outcome"] == "PASS" for r in rows)
    if backend == "sim":
        assert [r["leaks"] for r in rows] == [{}, {}]
    else:
        assert not any("leaks" in r for r in rows)
    res.stdout.fnmatch_lines([line])


def test_leak_helpers() -> None:
    class B:
        def __init__(self) -> None:
            self.n = 0

        def live_counts(self) -> LiveCounts:
            return LiveCounts(models=self.n, allocations=2)

    b = B()
    before = leaks.snapshot(b)
    b.n = 2
    assert leaks.diff(before, leaks.snapshot(b)) == {"models": 2}
    assert leaks.diff(None, leaks.snapshot(b)) == {}
    assert leaks.snapshot(object()) is None
    assert leaks.describe({"models": 1, "allocations": 2}) == "1 model, 2 allocations"


def test_killstats_sizes() -> None:
    msg = "x\n  case (3 tasks, 2 streams): {...}"
    assert killstats.case_size(msg) == 3 and killstats.case_size("nothing") is None
    prog = "state = Machine()\nstate.first_capture(mode=0, size=1)\nstate.work(data=..., " \
           "kind='kernel')\nstate.record(data=...)\nstate.end_capture()\nstate.teardown()"
    assert killstats.stateful_size(prog) == 2
    assert killstats.stateful_size("t(xs=[1])") is None


def test_example_counter_counts_hypothesis_cases() -> None:
    from hypothesis import given, settings, strategies as st
    counter = killstats.ExampleCounter()

    @settings(derandomize=True, max_examples=30, database=None)
    @given(st.integers(0, 1000))
    def t(x: int) -> None:
        assert x < 500

    counter.start()
    try:
        with pytest.raises(AssertionError):
            t()
    finally:
        counter.stop()
    res = counter.result()
    assert res is not None and res["failed_at_example"] >= 1
    assert res["examples"] == res["failed_at_example"] and res["shrink_calls"] >= 0


# -- specs in a process of their own (marker own_process) ----------------------------------

OWN_SPECS = '''
import os
import pytest
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.framework import outcomes

@pytest.mark.clause("CAP-14")
@pytest.mark.own_process
def test_own_passes(fingerprint):
    fingerprint.record("CAP-14:pid", os.getpid())

@pytest.mark.clause("CAP-14")
def test_here(fingerprint):
    fingerprint.record("CAP-14:here", os.getpid())

@pytest.mark.clause("CAP-14")
@pytest.mark.own_process
def test_own_fails():
    expect.eq(1, 2, "planted")

@pytest.mark.clause("CAP-07")
@pytest.mark.own_process
def test_own_changed():
    expect.eq(1, 2, "planted implementation-level")

@pytest.mark.clause("CAP-14")
@pytest.mark.own_process
def test_own_unsupported():
    raise outcomes.Unsupported("planted 207000")

@pytest.mark.clause("CAP-14")
@pytest.mark.own_process
def test_own_crashes():
    os.abort()
'''


def _own_rows(out: Path) -> dict[str, dict]:
    return {json.loads(l)["nodeid"].split("::")[-1]: json.loads(l)
            for l in (out / "results.jsonl").read_text().splitlines()}


def test_own_process_specs_run_elsewhere_and_report_as_usual(pytester: pytest.Pytester
                                                             ) -> None:
    pytester.makepyfile(test_own=OWN_SPECS)
    out = pytester.path / "out"
    res = pytester.runpytest_subprocess("-p", "mdlri_conformance.conformance.framework.plugin", "-p", "no:randomly",
                                        "--strict-markers", "--report-dir", str(out),
                                        timeout=240)
    rows = _own_rows(out)
    assert set(rows) == {"test_own_passes", "test_here", "test_own_fails", "test_own_changed",
                         "test_own_unsupported", "test_own_crashes"}
    passes, here = rows["test_own_passes"], rows["test_here"]
    assert passes["outcome"] == "PASS" and passes["own_process"] is True
    assert passes["fingerprint"]["CAP-14:pid"] != here["fingerprint"]["CAP-14:here"]
    assert "own_process" not in here and "state" in passes  # checked in the child too
    fails = rows["test_own_fails"]
    assert (fails["outcome"], fails["clauses"], fails["level"]) == ("FAIL", ["CAP-14"],
                                                                    "documented")
    assert "planted" in fails["message"]
    assert rows["test_own_changed"]["outcome"] == "CHANGED"
    assert rows["test_own_unsupported"]["outcome"] == "UNSUPPORTED"
    assert "planted 207000" in rows["test_own_unsupported"]["message"]
    crash = rows["test_own_crashes"]
    assert crash["outcome"] == "CRASH" and crash["clauses"] == ["CAP-14"]
    assert "signal 6, SIGABRT" in crash["message"]
    assert crash["message"].endswith(f"; output: {crash['stacks']}")  # one line, no stack
    assert "Aborted" in (out / crash["stacks"]).read_text()  # the child's faulthandler
    res.stdout.fnmatch_lines(["*1 failed, 2 passed, 1 changed, 1 unsupported, 1 crashed*"])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["totals"]["CRASH"] == 1 and summary["gate"] == "fail"


def test_own_process_under_xdist(pytester: pytest.Pytester) -> None:
    """Under xdist the worker that draws the spec starts the child; rows are the same."""
    pytester.makepyfile(test_own=OWN_SPECS)
    out = pytester.path / "out"
    pytester.runpytest_subprocess("-p", "mdlri_conformance.conformance.framework.plugin", "-p", "no:randomly", "-n", "2",
                                  "-k", "passes or here or crashes", "--report-dir", str(out),
                                  timeout=240)
    rows = _own_rows(out)
    assert rows["test_own_passes"]["outcome"] == "PASS"
    assert rows["test_own_passes"]["own_process"] is True
    assert rows["test_here"]["outcome"] == "PASS"
    assert rows["test_own_crashes"]["outcome"] == "CRASH"


def test_own_process_child_gets_the_suite_options(pytester: pytest.Pytester) -> None:
    """The child runs the same backend, faults and timeouts, one node id, no expectations."""
    from mdlri_conformance.conformance.framework.own_process import OwnProcessHooks
    pytester.makepyfile(test_own=OWN_SPECS)
    config = pytester.parseconfigure("-p", "mdlri_conformance.conformance.framework.plugin", "--fault", "no-107039",
                                     "--spec-timeout", "7", "--no-probe",
                                     "--report-dir", str(pytester.path / "out"))
    item = pytester.getitem("import pytest\n@pytest.mark.clause('CAP-14')\n"
                            "def test_x(): pass\n", funcname="test_x")
    args = OwnProcessHooks(config).child_args(item, pytester.path / "child")
    assert f"{item.path}::test_x" in args and "--expectations=" in args  # absolute path
    assert "--fault=no-107039" in args and "--spec-timeout=7.0" in args
    assert "--no-probe" in args and "--backend=sim" in args
    assert not any(a.startswith("--report-dir=") for a in args)


@pytest.mark.parametrize("backend", ["sim", "acl"])
def test_a_leaked_label_is_counted(backend: str) -> None:
    """A label made by aclrtCreateLabel and never destroyed is a leak like a stream (RT-40:
    its id stays taken in the process-wide allocator)."""
    from mdlri_conformance.conformance.framework.backend_loader import load_backend

    b = load_backend(backend, **({"lib": "emulator"} if backend == "acl" else {}))
    try:
        b.set_device(0)
        before = leaks.snapshot(b)
        rc, label = b.create_label()
        assert rc == 0
        assert leaks.diff(before, leaks.snapshot(b)) == {"labels": 1}
        assert b.destroy_label(label) == 0
        assert leaks.diff(before, leaks.snapshot(b)) == {}
    finally:
        b.close()
