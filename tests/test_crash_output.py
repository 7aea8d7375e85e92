"""A crash is one console line; its stacks go to a file of the run (conformance.crashdump);
``--spec-timeout`` refuses values the watchdog cannot use; a hard timeout ends a worker or an
own-process child with 86 (mapped to TIMEOUT) and a ``-n 0`` run with 4, INCOMPLETE
(conformance.isolation, "Crash dumps" and "TIMEOUT").

The crash runs use the emulator fault ``crash-query`` (a NULL write inside aclrtStreamQuery, a
real SIGSEGV) with two specs selected: one reaches aclrtStreamQuery, one does not. The hard
timeouts use a spec stuck in ``time.sleep`` (a C call: the watchdog's SpecTimeout, raised
between bytecodes, cannot interrupt it, as with a hang inside a runtime library).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from mdlri_conformance.conformance.framework import crashdump, keys, runner_hooks, watchdog
from mdlri_conformance.conformance.framework.verdicts import verdict
from tests.emulator import skip_unless_emulator

REPO = Path(__file__).resolve().parents[1]
SPECS = REPO / "conformance" / "specs"
CRASHES = "test_sync_of_capturing_stream"  # calls aclrtStreamQuery: SIGSEGV under crash-query
PASSES = "test_minus_one_waits_until_done"
#: what faulthandler and xdist print for a dead worker (never on the console now)
NOISE = ("Fatal Python error", "Thread 0x", "Current thread", '  File "', "Extension modules",
         "node down", "crashed while running", "replacing crashed worker")


def _run(out: Path, *args: str) -> tuple[int, str, str]:
    """The suite as the CLI runs it (``-q -rfE --tb=short``): exit code, stdout, stderr.

    Other installed plugins may warn on stderr (pytest-benchmark does under xdist), so the
    summary line is read from stdout alone."""
    cmd = [sys.executable, "-m", "pytest", str(SPECS), "-p", "mdlri_conformance.conformance.framework.plugin",
           "-p", "no:cacheprovider", "-p", "no:randomly", "-q", "-rfE", "--tb=short",
           "--report-dir", str(out), *args]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=240,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    return proc.returncode, proc.stdout, proc.stderr


def _rows(out: Path) -> dict[str, dict]:
    lines = (out / "results.jsonl").read_text().splitlines()
    return {r["nodeid"].split("::")[-1]: r for r in map(json.loads, lines)}


def test_worker_crash_is_one_console_line_and_a_dump_file(tmp_path: Path) -> None:
    skip_unless_emulator()
    code, out, err = _run(tmp_path, "-n", "1", "--backend", "acl", "--acl-lib", "emulator",
                          "--fault", "crash-query", "-k", f"{CRASHES} or {PASSES}")
    console = out + err
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
    assert "1 passed, 1 crashed" in out.splitlines()[-1]


def test_crash_without_workers_dumps_to_the_file_of_the_process(tmp_path: Path) -> None:
    """-n 0: the crash ends the run; the stacks are in crashes/main-<pid>.txt (run.json's
    pid), not on the console."""
    skip_unless_emulator()
    code, out, err = _run(tmp_path, "-n", "0", "--backend", "acl", "--acl-lib", "emulator",
                          "--fault", "crash-query", "-k", CRASHES)
    console = out + err
    assert code == -11
    pid = json.loads((tmp_path / "run.json").read_text())["pid"]
    dump = tmp_path / "crashes" / f"main-{pid}.txt"
    assert dump.read_text().startswith("Fatal Python error: Segmentation fault")
    assert not [ln for ln in console.splitlines() if any(n in ln for n in NOISE)]


@pytest.mark.parametrize("workers", ["0", "1"])
def test_run_without_crash_leaves_no_crashes_folder(tmp_path: Path, workers: str) -> None:
    code, _, _ = _run(tmp_path, "-n", workers, "--backend", "sim", "-k", PASSES)
    assert code == 0 and _rows(tmp_path)[PASSES]["outcome"] == "PASS"
    assert not (tmp_path / "crashes").exists()


@pytest.mark.parametrize("text, value", [("0", 0.0), ("1", 1.0), ("2.5", 2.5), ("60", 60.0)])
def test_spec_timeout_accepts_off_and_whole_seconds(text: str, value: float) -> None:
    assert watchdog.spec_timeout_value(text) == value


@pytest.mark.parametrize("text", ["-5", "nan", "inf", "-inf", "0.001", "0.5", "abc", ""])
def test_spec_timeout_refuses_what_the_watchdog_cannot_use(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as exc:
        watchdog.spec_timeout_value(text)
    assert str(exc.value) == f"--spec-timeout {text}: use 0 (off) or a finite number of " \
                              "seconds >= 1"


@pytest.mark.parametrize("text", ["-5", "nan", "inf", "0.001"])
def test_bad_spec_timeout_is_a_one_line_usage_error(pytester: pytest.Pytester,
                                                    text: str) -> None:
    res = pytester.runpytest("-p", "mdlri_conformance.conformance.framework.plugin", "-p", "no:randomly",
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
    assert crashdump.fault_of(None, -11) == "signal 11, SIGSEGV"
    assert crashdump.fault_of(dump, None) == "signal 6, SIGABRT"
    assert crashdump.fault_of(dump, -9) == "signal 9, SIGKILL"  # the exit status wins
    assert crashdump.fault_of(None, 3) == "exit status 3"
    assert crashdump.fault_of(tmp_path / "absent.txt", None) == "cause unknown"
    assert crashdump.signal_name(99) == "signal 99"


def test_crashdump_stands_alone() -> None:
    """crashdump has one job and imports neither the isolation hooks nor the plugin."""
    framework = "mdlri_conformance.conformance.framework"
    code = (f"import sys, {framework}.crashdump; "
            f"sys.exit(any(m in sys.modules for m in ('{framework}.isolation', "
            f"'{framework}.runner_hooks', '{framework}.plugin', 'pytest')))")
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO).returncode == 0


def test_crash_dump_file_goes_away_when_empty(tmp_path: Path) -> None:
    crash_dir = tmp_path / "crashes"
    quiet, crashed = crashdump.CrashDump(crash_dir, "gw0"), crashdump.CrashDump(crash_dir, "gw1")
    assert quiet.relpath == f"crashes/gw0-{os.getpid()}.txt"
    crashed.path.write_text("Fatal Python error: Segmentation fault\n")
    quiet.close()
    assert not quiet.path.exists() and crashed.path.exists()
    crashed.close()  # its file has content (written here by hand): it stays
    assert crashed.path.exists()
    assert crashdump.dump_of(crash_dir, "gw1") == crashed.path
    assert crashdump.dump_of(crash_dir, "gw0") is None
    crashed.path.unlink()
    crashdump.remove_if_empty(crash_dir)
    assert not crash_dir.exists()


def test_crash_dump_takes_away_the_folders_it_made(tmp_path: Path) -> None:
    """A -n 0 process opens its dump before it knows whether a spec runs: a run without specs
    leaves no run directory, however the empty dump went (its own close, or the recorder's
    remove_if_empty first); a run directory with the run's files stays."""
    run = tmp_path / "runs" / "r1"
    dump = crashdump.CrashDump(run / "crashes", "main")
    crashdump.remove_if_empty(run / "crashes")  # the recorder's unconfigure may come first
    dump.close()
    assert not (tmp_path / "runs").exists()
    run.mkdir(parents=True)
    dump = crashdump.CrashDump(run / "crashes", "main")
    (run / "results.jsonl").write_text("")
    dump.close()
    assert sorted(p.name for p in run.iterdir()) == ["results.jsonl"]


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
    res = pytester.runpytest_subprocess("-p", "mdlri_conformance.conformance.framework.plugin", "-p", "no:randomly",
                                        "-n", "1", "--report-dir", str(out), timeout=240)
    rows = _rows(out)
    assert rows["test_killed"]["outcome"] == "CRASH" and rows["test_fine"]["outcome"] == "PASS"
    assert rows["test_killed"]["message"] == "the worker died (signal 9, SIGKILL); it left no " \
                                             "stacks"
    assert "stacks" not in rows["test_killed"]
    assert not (out / "crashes").exists()
    assert not [ln for ln in res.outlines + res.errlines if any(n in ln for n in NOISE)]


HUNG_SPECS = '''
import time
import pytest

@pytest.mark.clause("CAP-14")
def test_stuck_in_native_code():
    time.sleep(120)

@pytest.mark.clause("CAP-14")
def test_fine():
    pass

@pytest.mark.clause("CAP-14")
@pytest.mark.own_process
def test_own_stuck():
    time.sleep(120)
'''


def _hung(pytester: pytest.Pytester, *args: str) -> tuple[int, dict[str, dict], Path, str]:
    pytester.makepyfile(test_hung=HUNG_SPECS)
    out = pytester.path / "out"
    res = pytester.runpytest_subprocess("-p", "mdlri_conformance.conformance.framework.plugin", "-p", "no:randomly",
                                        "--spec-timeout", "1", "--report-dir", str(out),
                                        *args, timeout=240)
    return res.ret, _rows(out), out, "\n".join(res.outlines + res.errlines)


def test_hard_timeout_without_workers_stops_the_run_as_a_failure(pytester: pytest.Pytester
                                                                  ) -> None:
    """-n 0: the watchdog writes the TIMEOUT row, dumps the stacks and ends the run with 1
    (FAIL: the TIMEOUT fails the gate, which wins over the incomplete run), not 86; report on
    the directory gives the same verdict."""
    code, rows, out, console = _hung(pytester, "-n", "0", "-k", "stuck_in_native or fine")
    assert code == verdict.EXIT_CODES[verdict.FAIL] == watchdog.STOPPED_EXIT == 1
    stuck = rows["test_stuck_in_native_code"]
    assert stuck["outcome"] == "TIMEOUT" and "the run stops here" in stuck["message"]
    assert "test_fine" not in rows  # the run stopped
    pid = json.loads((out / "run.json").read_text())["pid"]
    assert stuck["stacks"] == f"crashes/main-{pid}.txt"
    head = (out / stuck["stacks"]).read_text().splitlines()[0]
    assert head.startswith("mdlri: spec ") and head.endswith("ending this process (exit 1)")
    said = [ln for ln in console.splitlines() if "test_stuck_in_native_code" in ln]
    assert len(said) == 1 and said[0].startswith("mdlri: FAIL: ")  # not silent
    assert said[0].endswith(f"the run stops here, incomplete (exit 1); stacks: "
                            f"{stuck['stacks']}")
    from mdlri_conformance.conformance.cli import main
    assert main(["report", str(out)]) == verdict.EXIT_CODES[verdict.FAIL]
    assert not [ln for ln in console.splitlines() if any(n in ln for n in NOISE)]


def test_hard_timeout_in_a_worker_is_one_timeout_and_the_run_goes_on(pytester: pytest.Pytester
                                                                      ) -> None:
    code, rows, out, _ = _hung(pytester, "-n", "1", "-k", "stuck_in_native or fine")
    stuck = rows["test_stuck_in_native_code"]
    assert code == 1 and rows["test_fine"]["outcome"] == "PASS"
    assert stuck["outcome"] == "TIMEOUT" and "ended and replaced" in stuck["message"]
    head = (out / stuck["stacks"]).read_text().splitlines()[0]
    assert head.endswith(f"ending this process (exit {watchdog.TIMEOUT_EXIT})")


def test_hard_timeout_in_an_own_process_child_is_its_specs_timeout(pytester: pytest.Pytester
                                                                    ) -> None:
    """The child exits 86; its parent (here a -n 0 run) reports TIMEOUT and goes on."""
    code, rows, _, _ = _hung(pytester, "-n", "0", "-k", "own_stuck or fine")
    own = rows["test_own_stuck"]
    assert code == 1 and rows["test_fine"]["outcome"] == "PASS"
    assert own["outcome"] == "TIMEOUT" and own["own_process"] is True
    assert own["message"].startswith("own process: no result within --spec-timeout 1 s")


@pytest.mark.parametrize("worker, child, code", [(None, False, 1), ("gw0", False, 86),
                                                 (None, True, 86)])
def test_hard_exit_code(monkeypatch: pytest.MonkeyPatch, worker: str | None, child: bool,
                        code: int) -> None:
    if child:
        monkeypatch.setenv(keys.OWN_PROCESS_ENV, "/nonexistent")
    else:
        monkeypatch.delenv(keys.OWN_PROCESS_ENV, raising=False)
    runner = types.SimpleNamespace(worker=worker)
    assert runner_hooks.RunnerHooks.hard_exit_code(runner) == code  # type: ignore[arg-type]
