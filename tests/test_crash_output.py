"""A crash is one console line; its stacks go to a file of the run; ``--spec-timeout`` refuses
values the watchdog cannot use (conformance.isolation, "Crash dumps" and "TIMEOUT").

The crash runs use the emulator fault ``crash-query`` (a NULL write inside aclrtStreamQuery, a
real SIGSEGV) with two specs selected: one reaches aclrtStreamQuery, one does not.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import isolation

REPO = Path(__file__).resolve().parents[1]
SPECS = REPO / "conformance" / "specs"
CRASHES = "test_sync_of_capturing_stream"  # calls aclrtStreamQuery: SIGSEGV under crash-query
PASSES = "test_minus_one_waits_until_done"
#: what faulthandler and xdist print for a dead worker (never on the console now)
NOISE = ("Fatal Python error", "Thread 0x", "Current thread", '  File "', "Extension modules",
         "node down", "crashed while running", "replacing crashed worker")


def _run(out: Path, *args: str) -> tuple[int, str]:
    """The suite as the CLI runs it (``-q -rfE --tb=short``), console text back."""
    cmd = [sys.executable, "-m", "pytest", str(SPECS), "-p", "conformance.plugin",
           "-p", "no:cacheprovider", "-p", "no:randomly", "-q", "-rfE", "--tb=short",
           "--report-dir", str(out), *args]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=240,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    return proc.returncode, proc.stdout + proc.stderr


def _rows(out: Path) -> dict[str, dict]:
    lines = (out / "results.jsonl").read_text().splitlines()
    return {r["nodeid"].split("::")[-1]: r for r in map(json.loads, lines)}


def _emulator_or_skip() -> None:
    from backends.acl import availability
    why = availability("emulator")
    if why:
        pytest.skip(f"acl emulator unavailable: {why}")


def test_worker_crash_is_one_console_line_and_a_dump_file(tmp_path: Path) -> None:
    _emulator_or_skip()
    code, console = _run(tmp_path, "-n", "1", "--backend", "acl", "--acl-lib", "emulator",
                         "--fault", "crash-query", "-k", f"{CRASHES} or {PASSES}")
    rows = _rows(tmp_path)
    crash = rows[CRASHES]
    assert code == 1 and rows[PASSES]["outcome"] == "PASS"
    assert crash["outcome"] == "CRASH"
    assert crash["message"].startswith("the worker died (signal 11, SIGSEGV); stacks: crashes/gw0-")
    assert crash["message"].endswith(crash["stacks"])
    dump = tmp_path / crash["stacks"]
    assert dump.read_text().startswith("Fatal Python error: Segmentation fault")
    assert sorted(p.name for p in (tmp_path / "crashes").iterdir()) == [dump.name]  # no empties
    lines = console.splitlines()
    assert [ln for ln in lines if any(n in ln for n in NOISE)] == []
    about = [ln for ln in lines if CRASHES in ln]
    assert len(about) == 1, console
    assert "CRASH" in about[0] and crash["stacks"] in about[0]
    assert sum(crash["stacks"] in ln for ln in lines) == 1
    assert "1 passed, 1 crashed" in lines[-1]


def test_crash_without_workers_dumps_to_the_file_of_the_process(tmp_path: Path) -> None:
    """-n 0: the crash ends the run; the stacks are in crashes/main-<pid>.txt (run.json's
    pid), not on the console."""
    _emulator_or_skip()
    code, console = _run(tmp_path, "-n", "0", "--backend", "acl", "--acl-lib", "emulator",
                         "--fault", "crash-query", "-k", CRASHES)
    assert code == -11
    pid = json.loads((tmp_path / "run.json").read_text())["pid"]
    dump = tmp_path / "crashes" / f"main-{pid}.txt"
    assert dump.read_text().startswith("Fatal Python error: Segmentation fault")
    assert not [ln for ln in console.splitlines() if any(n in ln for n in NOISE)]


@pytest.mark.parametrize("workers", ["0", "1"])
def test_run_without_crash_leaves_no_crashes_folder(tmp_path: Path, workers: str) -> None:
    code, _ = _run(tmp_path, "-n", workers, "--backend", "sim", "-k", PASSES)
    assert code == 0 and _rows(tmp_path)[PASSES]["outcome"] == "PASS"
    assert not (tmp_path / "crashes").exists()


@pytest.mark.parametrize("text, value", [("0", 0.0), ("1", 1.0), ("2.5", 2.5), ("60", 60.0)])
def test_spec_timeout_accepts_off_and_whole_seconds(text: str, value: float) -> None:
    assert isolation.spec_timeout_value(text) == value


@pytest.mark.parametrize("text", ["-5", "nan", "inf", "-inf", "0.001", "0.5", "abc", ""])
def test_spec_timeout_refuses_what_the_watchdog_cannot_use(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as exc:
        isolation.spec_timeout_value(text)
    assert str(exc.value) == f"--spec-timeout {text}: use 0 (off) or a finite number of " \
                              "seconds >= 1"


@pytest.mark.parametrize("text", ["-5", "nan", "inf", "0.001"])
def test_bad_spec_timeout_is_a_one_line_usage_error(pytester: pytest.Pytester,
                                                    text: str) -> None:
    res = pytester.runpytest("-p", "conformance.plugin", "-p", "no:randomly",
                             f"--spec-timeout={text}", "--report-dir",
                             str(pytester.path / "out"))
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    said = [ln for ln in res.outlines + res.errlines if ln.strip()]
    assert said == [f"ERROR: --spec-timeout {text}: use 0 (off) or a finite number of seconds "
                    ">= 1"]
    assert not (pytester.path / "out").exists()


def test_fault_of_names_the_signal(tmp_path: Path) -> None:
    dump = tmp_path / "gw0-1.txt"
    dump.write_text("Fatal Python error: Aborted\n\nThread 0x1 ...\n")
    assert isolation.fault_of(None, -11) == "signal 11, SIGSEGV"
    assert isolation.fault_of(dump, None) == "signal 6, SIGABRT"
    assert isolation.fault_of(dump, -9) == "signal 9, SIGKILL"  # the exit status wins
    assert isolation.fault_of(None, 3) == "exit status 3"
    assert isolation.fault_of(tmp_path / "absent.txt", None) == "cause unknown"


def test_crash_dump_file_goes_away_when_empty(tmp_path: Path) -> None:
    crash_dir = tmp_path / "crashes"
    quiet, crashed = isolation.CrashDump(crash_dir, "gw0"), isolation.CrashDump(crash_dir, "gw1")
    assert quiet.relpath == f"crashes/gw0-{os.getpid()}.txt"
    crashed.path.write_text("Fatal Python error: Segmentation fault\n")
    quiet.close()
    assert not quiet.path.exists() and crashed.path.exists()
    crashed.close()  # its file has content (written here by hand): it stays
    assert crashed.path.exists()
    crashed.path.unlink()
    isolation.remove_if_empty(crash_dir)
    assert not crash_dir.exists()


KILLED_SPECS = '''
import os
import signal
import pytest

@pytest.mark.clause("CAP-14")
def test_killed():
    os.kill(os.getpid(), signal.SIGKILL)

@pytest.mark.clause("CAP-14")
def test_fine():
    pass
'''


def test_worker_killed_from_outside_is_a_crash_without_stacks(pytester: pytest.Pytester
                                                               ) -> None:
    """SIGKILL leaves faulthandler no chance: the signal comes from the worker's exit status,
    the row says there are no stacks, and the empty dump does not stay."""
    pytester.makepyfile(test_killed=KILLED_SPECS)
    out = pytester.path / "out"
    res = pytester.runpytest_subprocess("-p", "conformance.plugin", "-p", "no:randomly",
                                        "-n", "1", "--report-dir", str(out), timeout=240)
    rows = _rows(out)
    assert rows["test_killed"]["outcome"] == "CRASH" and rows["test_fine"]["outcome"] == "PASS"
    assert rows["test_killed"]["message"] == "the worker died (signal 9, SIGKILL); it left no " \
                                             "stacks"
    assert "stacks" not in rows["test_killed"]
    assert not (out / "crashes").exists()
    assert not [ln for ln in res.outlines + res.errlines if any(n in ln for n in NOISE)]
