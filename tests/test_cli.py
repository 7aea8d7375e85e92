"""The command line: usage errors are one line with exit 2; help works."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mdlri_conformance.conformance import cli


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mdlri_conformance.conformance.cli", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args, fragment", [
    (("run", "--backend", "nosuch"), "unknown backend 'nosuch'"),
    (("example", "nosuch"), "unknown example 'nosuch'"),
    (("example", "fallback", "--backend", "tests.fakes:create_not_a_backend"), "does not implement"),
    (("frobnicate",), "invalid choice"),
    (("replay", "/nonexistent/case.json"), "cannot read"),
    (("run", "--expectations", "/nonexistent/exp.toml"), "cannot read"),
    (("run", "--report-dir", "/proc/forbidden/run"), "--report-dir /proc/forbidden/run: "),
    (("run", "--against", "nosuch"), "unknown backend 'nosuch'"),
])
def test_usage_errors_are_one_line(args: tuple[str, ...], fragment: str) -> None:
    res = _cli(*args)
    assert res.returncode == 2
    assert fragment in res.stderr
    assert "Traceback" not in res.stderr
    assert res.stdout == ""


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    assert "run" in capsys.readouterr().out
    assert cli.main(["run", "--help"]) == 0
    assert "--backend" in capsys.readouterr().out


def test_replay_and_example_report_unsupported_on_a_partial_runtime() -> None:
    """A 207000 in a replayed case or an example is NOTHING TESTED (exit 3), never a failure
    and never a pass; what the probes found missing is listed."""
    case = Path(__file__).resolve().parent.parent / "conformance" / "cases" / "seed-fallback.json"
    res = _cli("replay", str(case),
               "--backend", "tests.partial_runtime:factory")
    assert res.returncode == 3, res.stdout + res.stderr
    assert "not shown by this backend: data_movement: absent (probe: memcpy" in res.stdout
    assert res.stdout.splitlines()[-1].startswith(
        "NOTHING TESTED: UNSUPPORTED: aclmdlRITaskSetParams returned 207000")
    res = _cli("example", "fallback", "--backend", "tests.partial_runtime:create_no_update")
    assert res.returncode == 3, res.stdout + res.stderr
    assert res.stdout.splitlines()[-1].startswith(
        "NOTHING TESTED: UNSUPPORTED: example fallback needs get_params, set_params, disable, "
        "update (probe: aclmdlRITaskGetParams answered 207000 (RT_FEATURE_NOT_SUPPORT)")


def test_example_probes_first_on_a_runtime_that_moves_no_data() -> None:
    """On a runtime that moves no data the example does not compare outputs it cannot read
    ("Path mismatch at 0: main=0, optional=0"): the probes run first and the example is
    UNSUPPORTED with their reason (exit 3)."""
    res = _cli("example", "fallback", "--backend", "tests.partial_runtime:create_no_data")
    assert res.returncode == 3, res.stdout + res.stderr
    assert "Path mismatch" not in res.stdout
    assert res.stdout.splitlines()[-1].startswith(
        "NOTHING TESTED: UNSUPPORTED: example fallback needs data_movement, kernel_exec "
        "(probe: memcpy H2D then D2H returned [0, 0, 0, 0, 0, 0, 0, 0]")


def test_replay_says_what_a_control_plane_only_run_did_not_show() -> None:
    res = _cli("replay", "seed-fallback", "--backend", "tests.partial_runtime:create_no_data")
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.splitlines()[-1].startswith(
        "conforms (control plane only: data movement, kernel execution and blocking not "
        "shown) (")
    res = _cli("replay", "copy-kinds-pinned-host", "--backend",
               "tests.partial_runtime:create_no_pageable")
    assert res.returncode == 3, res.stdout + res.stderr
    assert "NOTHING TESTED: UNSUPPORTED: the case's pageable copy" in res.stdout


def test_a_probe_that_sees_a_wrong_answer_fails_replay() -> None:
    """``stream-sync-timeout-code``: the blocking probe sees 507047 for an expired stream
    sync; replay fails (exit 1) with the probe's evidence instead of replaying."""
    res = _cli("replay", "cond-if-else", "--backend", "sim", "--fault",
               "stream-sync-timeout-code")
    assert res.returncode == 1, res.stdout + res.stderr
    assert res.stdout.splitlines()[-1] == (
        "FAIL: capability probe blocking_wait: probe: a captured aclrtValueWait on an unset "
        "word was answered wrongly: aclrtSynchronizeStreamWithTimeout(100 ms) returned 507047 "
        "(RT_EVENT_SYNC_TIMEOUT), expected 507046 (RT_STREAM_SYNC_TIMEOUT)")


def test_replay_on_the_acl_emulator() -> None:
    """replay takes the acl options: a shipped case conforms on the emulator (exit 0), and the
    same emulator with a planted fault the case reaches differs (exit 1)."""
    res = _cli("replay", "cond-if-else", "--backend", "acl", "--acl-lib", "emulator")
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.startswith("conforms (") and "backend acl" in res.stdout
    res = _cli("replay", "value-handshake-set-value", "--backend", "acl", "--acl-lib", "emulator",
               "--fault", "setparams-without-update")
    assert res.returncode == 1, res.stdout + res.stderr
    assert "differs at observation" in res.stdout


def test_run_into_a_reader_that_leaves_early_finishes_the_run(tmp_path: Path) -> None:
    """``mdlri-conformance run | head -1``: the run goes on to its end record and its verdict's
    exit code, only the output is dropped; no BrokenPipeError traceback."""
    import json

    report = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "mdlri_conformance.conformance.cli", "run",
                             "-k", "test_capture and begin", "--report-dir", str(report)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.close()  # the reader leaves before the run prints its table and verdict
    err = proc.stderr.read()
    assert proc.wait(timeout=300) == 0, err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert json.loads((report / "run.json").read_text())["ended"] == "complete"
    assert json.loads((report / "summary.json").read_text())["verdict"]["verdict"] == "PASS"
