"""Bad and degenerate input to ``mdlri-conformance``: one line, the documented exit code, never a
traceback, and never ``gate: PASS`` unless specs really ran and passed.

Exit codes (conformance.verdict): 0 PASS, 1 FAIL, 2 usage / input error, 3 NOTHING TESTED,
4 INCOMPLETE. Each row of :data:`CASES` is one input; ``python -m tests.test_bad_input`` runs
them all and prints the table (input, exit code, the line printed).
"""

from __future__ import annotations

import ctypes.util
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "mdlri_conformance.conformance.cli"]
PASS, FAIL, USAGE, NOTHING, INCOMPLETE = 0, 1, 2, 3, 4


@dataclass
class Case:
    """One bad or degenerate input: the CLI arguments (``{tmp}`` is a fresh directory), extra
    environment, the exit code and a regex the output must contain."""

    name: str
    args: list[str]
    code: int
    line: str
    env: dict[str, str] = field(default_factory=dict)
    setup: Callable[[Path], None] | None = None
    #: a signal sent once the run has written this many rows (the run is then a partial one)
    signal: int | None = None
    #: the soft open-file limit (ulimit -n) of the command
    nofile: int | None = None
    #: run in ``tmp`` instead of the checkout (``pytest --pyargs`` from anywhere)
    in_tmp: bool = False
    #: the report directory on a tmpfs of this size (a real full disk), when this machine lets
    #: a user namespace mount one; else the writer made to fail (tests/full_disk.py) fills it
    tmpfs: str | None = None
    #: more to check once it ended: called with the report directory and the output
    check: Callable[[Path, str], None] | None = None


def _text_file(tmp: Path) -> None:
    (tmp / "libacl_rt.so").write_text("not a library\n")


def _empty_dir(tmp: Path) -> None:
    (tmp / "empty").mkdir()


def _existing_run(tmp: Path) -> None:
    (tmp / "run").mkdir()
    (tmp / "run" / "results.jsonl").write_text('{"nodeid": "x"}\n')


def _fake_cc(tmp: Path) -> None:
    cc = tmp / "cc"
    cc.write_text("#!/bin/sh\necho 'emu.c:1:1: error: planted compiler error' >&2\nexit 1\n")
    cc.chmod(0o755)


def _file_as_cache(tmp: Path) -> None:
    (tmp / "a-file").write_text("")


def _required_update(tmp: Path) -> None:
    (tmp / "req.toml").write_text('required_capabilities = ["update"]\n')


def _malformed_toml(tmp: Path) -> None:
    (tmp / "bad.toml").write_text("[[expect]\nid = \n")


def _a_file(tmp: Path) -> None:
    (tmp / "file").write_text("")


_NO_CANN = {"MDLRI_ACL_LIB": "", "ASCEND_HOME_PATH": "", "ASCEND_INSTALL_PATH": "",
            "ASCEND_TOOLKIT_HOME": "", "LD_LIBRARY_PATH": "", "HOME": "{tmp}"}
_FRESH_CACHE = {"MDLRI_CACHE_DIR": "{tmp}/cache"}
_LIBM = ctypes.util.find_library("m") or "libm.so.6"


def _loaded_path(name: str) -> str:
    """The absolute path of a shared library this process has mapped (libm always is)."""
    ctypes.CDLL(name)
    with open("/proc/self/maps", encoding="utf-8") as maps:
        for line in maps:
            path = line.split()[-1]
            if Path(path).name.startswith(name.split(".so")[0] + ".so") and path.startswith("/"):
                return path
    return name


_LIBM_PATH = _loaded_path(_LIBM)
_SPECS = ["-k", "test_capture and begin"]  # a few quick specs
_ONE_SPEC = ["-k", "test_cap02_work_before_begin_executes"]
#: the writer made to fail: 3,500 bytes fit the start record, collected.json and a few rows
#: of _SPECS
_FULL_DISK_ENV = {"MDLRI_TEST_DISK_BYTES": "3500"}
_FULL_DISK_PLUGIN = ["--", "-p", "tests.full_disk"]


def _row(nodeid: str, outcome: str = "PASS", **extra: object) -> dict:
    return {"nodeid": nodeid, "outcome": outcome, "clauses": ["CAP-02"], "area": "capture",
            "backend": "sim", "message": "", "level": "documented", **extra}


def _run_dir(path: Path, rows: list[dict], collected: list[str], ended: str | None) -> None:
    """A run directory as ``run`` leaves it (``ended`` None: killed, no end record)."""
    path.mkdir(parents=True)
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (path / "collected.json").write_text(json.dumps(collected))
    (path / "run.json").write_text(json.dumps({"backend": "sim", "ended": ended, "pid": 1,
                                               "started": "2026-01-01T00:00:00+0000"}))


_A, _B = "conformance/specs/test_capture.py::test_a", "conformance/specs/test_capture.py::test_b"


def _complete_and_killed(tmp: Path) -> None:
    """Run A complete; run B killed after its first spec (B never recorded test_b, whose
    fingerprint is then absent, which is not a change)."""
    _run_dir(tmp / "a", [_row(_A, fingerprint={"Q-05:x": 1}), _row(_B, fingerprint={"Q-06:y": 0})],
             [_A, _B], "complete")
    _run_dir(tmp / "b", [_row(_A, fingerprint={"Q-05:x": 1})], [_A, _B], None)


def _two_whole_runs(tmp: Path) -> None:
    _run_dir(tmp / "a", [_row(_A)], [_A], "complete")
    _run_dir(tmp / "b", [_row(_B, "FAIL")], [_B], "complete")


def _empty_results(tmp: Path) -> None:
    (tmp / "results.jsonl").write_text("")


def _no_fingerprint_change(report_dir: Path, out: str) -> None:
    assert "fingerprint changes: 0" in out, out


def _recorded_as_run_names_them(report_dir: Path, out: str) -> None:
    """pytest --pyargs under xdist: collected.json is written and every node id reads
    conformance/specs/... as in a run of mdlri-conformance."""
    collected = json.loads((report_dir / "collected.json").read_text())
    rows = [json.loads(r) for r in (report_dir / "results.jsonl").read_text().splitlines()]
    assert collected and rows and len(rows) == len(collected)
    assert all(i.startswith("conformance/specs/test_") for i in collected), collected
    assert {r["nodeid"] for r in rows} == set(collected)
    summary = json.loads((report_dir / "summary.json").read_text())
    assert summary["completeness"]["complete"], summary["completeness"]


def _full_disk_is_honest(report_dir: Path, out: str) -> None:
    """The run ended INCOMPLETE on its full disk and every file says so: run.json's end
    record names the write that failed, no half-written file is left, and a summary (when
    there was room for one) agrees with the exit code 4."""
    meta = json.loads((report_dir / "run.json").read_text())
    assert str(meta["ended"]).startswith("cannot write "), meta
    assert not list(report_dir.glob("*.tmp")), list(report_dir.iterdir())
    summary = report_dir / "summary.json"
    if summary.is_file():
        assert json.loads(summary.read_text())["verdict"]["exit_code"] == INCOMPLETE
    rows = [ln for ln in (report_dir / "results.jsonl").read_text().splitlines()
            if ln.endswith("}")]
    assert rows and len(rows) < len(json.loads((report_dir / "collected.json").read_text()))

def _full_disk_allure_is_honest(report_dir: Path, out: str) -> None:
    """As :func:`_full_disk_is_honest`, and allure-pytest's writes in the workers failed
    without an INTERNALERROR and left no half-written result."""
    _full_disk_is_honest(report_dir, out)
    assert "INTERNALERROR" not in out, out
    assert not list((report_dir / "allure-results").glob("*.tmp"))


CASES: list[Case] = [
    # -- the acl backend's library -----------------------------------------------------------
    Case("--acl-lib names a missing file", ["run", "--backend", "acl", "--acl-lib",
                                            "{tmp}/nope/libacl_rt.so"],
         USAGE, r"^mdlri-conformance: error: backend 'acl': --acl-lib .*: no such file"),
    Case("--acl-lib names a text file", ["run", "--backend", "acl", "--acl-lib",
                                         "{tmp}/libacl_rt.so"],
         USAGE, r"not a shared library", setup=_text_file),
    Case("--acl-lib names a directory with no library", ["run", "--backend", "acl",
                                                         "--acl-lib", "{tmp}/empty"],
         USAGE, r"no libacl_rt\.so or libascendcl\.so in that directory", setup=_empty_dir),
    Case(f"--acl-lib {_LIBM} (a bare name)", ["run", "--backend", "acl", "--acl-lib", _LIBM],
         USAGE, r"--acl-lib .*: no such file or directory \(give the path of the library"),
    Case("--acl-lib /path/to/libm.so.6 (a library, not ACL)",
         ["run", "--backend", "acl", "--acl-lib", _LIBM_PATH],
         USAGE, r"not an ACL runtime library \(it does not export aclInit"),
    Case("no ACL library anywhere", ["run", "--backend", "acl"], NOTHING,
         r"^mdlri-conformance: NOTHING TESTED: acl backend: no CANN runtime library",
         env=_NO_CANN),
    Case("emulator build: no compiler", ["run", "--backend", "acl", "--acl-lib", "emulator"],
         NOTHING, r"NOTHING TESTED: acl backend: cannot build the ACL emulator: .*not found",
         env={**_FRESH_CACHE, "CC": "{tmp}/no-such-cc"}),
    Case("emulator build: compiler error", ["run", "--backend", "acl", "--acl-lib", "emulator"],
         NOTHING, r"NOTHING TESTED: .*cannot build the ACL emulator: .*planted compiler error",
         env={**_FRESH_CACHE, "CC": "{tmp}/cc"}, setup=_fake_cc),
    Case("emulator build: cache not writable", ["run", "--backend", "acl", "--acl-lib",
                                                "emulator"],
         NOTHING, r"NOTHING TESTED: .*not writable.*MDLRI_CACHE_DIR",
         env={"MDLRI_CACHE_DIR": "{tmp}/a-file/cache"}, setup=_file_as_cache),
    Case("--devices 0,7 on a one-device runtime", ["run", "--backend", "acl", "--acl-lib",
                                                   "emulator", "--devices", "0,7"],
         USAGE, r"--devices 0,7: device 7 does not exist"),
    Case("an emulator --fault without -n", ["run", "--backend", "acl", "--acl-lib", "emulator",
                                            "--fault", "setparams-without-update", "-k",
                                            "test_params or test_update"],
         FAIL, r"gate: FAIL"),
    Case("a spec that segfaults the runtime", ["run", "--backend", "acl", "--acl-lib",
                                               "emulator", "--fault", "crash-query", "-k",
                                               "test_capture and query"],
         FAIL, r"^  CRASH\s+\S+: the worker died \(signal 11, SIGSEGV\); stacks: "
               r"crashes/gw\d+-\d+\.txt$"),
    # -- interrupted and killed runs -----------------------------------------------------------
    Case("SIGINT midway", ["run", "--backend", "sim", "-n", "2"], INCOMPLETE,
         r"gate: INCOMPLETE .*interrupted; \d+ of \d+ collected spec\(s\) never ran",
         signal=signal.SIGINT),
    Case("SIGTERM midway", ["run", "--backend", "sim", "-n", "2"], INCOMPLETE,
         r"gate: INCOMPLETE .*interrupted; \d+ of \d+ collected spec\(s\) never ran",
         signal=signal.SIGTERM),
    Case("report on a SIGKILLed run", ["run", "--backend", "sim", "-n", "2"], INCOMPLETE,
         r"gate: INCOMPLETE .*killed\?\); \d+ of \d+ collected spec\(s\) never ran",
         signal=signal.SIGKILL),
    # -- the report directory ------------------------------------------------------------------
    Case("--report-dir names an existing run", ["run", *_SPECS, "--report-dir", "{tmp}/run"],
         USAGE, r"--report-dir .*/run: already holds a run", setup=_existing_run),
    Case("--report-dir names a file", ["run", *_SPECS, "--report-dir", "{tmp}/file"],
         USAGE, r"--report-dir .*/file: exists and is not a directory", setup=_a_file),
    Case("--keep-runs 0", ["run", "--keep-runs", "0"], USAGE, r"keep at least 1 run"),
    Case("report on a directory that is no run", ["report", "{tmp}"], USAGE,
         r"no results\.jsonl"),
    # -- backends --------------------------------------------------------------------------------
    Case("a backend without leak counts", ["run", "--backend", "tests.fakes:create_sim_no_counts",
                                           *_SPECS],
         PASS, r"leaks: not checked"),
    Case("a backend that loads but cannot run", ["run", "--backend",
                                                 "tests.fakes:create_unavailable", *_SPECS],
         NOTHING, r"^mdlri-conformance: NOTHING TESTED: tests\.fakes:create_unavailable "
                  r"backend: no device attached to this fake$"),
    Case("a backend factory that raises", ["run", "--backend", "tests.fakes:create_raising"],
         USAGE, r"^mdlri-conformance: error: backend 'tests\.fakes:create_raising': "
                r"tests\.fakes:create_raising raised RuntimeError: driver handshake failed$"),
    Case("replay on a backend factory that raises",
         ["replay", "conformance/cases/seed-fallback.json", "--backend",
          "tests.fakes:create_raising"],
         USAGE, r"raised RuntimeError: driver handshake failed$"),
    Case("a factory returning something else", ["run", "--backend",
                                                "tests.fakes:create_not_a_backend"],
         USAGE, r"does not implement backends\.contract\.Backend"),
    Case("an unknown backend", ["run", "--backend", "nosuch"], USAGE, r"unknown backend 'nosuch'"),
    Case("an unknown --fault", ["run", "--fault", "nosuch"], USAGE, r"--fault: .*nosuch"),
    Case("required capability UNSUPPORTED", ["run", "--backend",
                                             "tests.partial_runtime:create_no_update",
                                             "-k", "test_update", "--expectations",
                                             "{tmp}/req.toml"],
         FAIL, r"UNSUPPORTED on required capability update", setup=_required_update),
    # -- options ---------------------------------------------------------------------------------
    Case("-n -1", ["run", "-n", "-1"], USAGE, r"argument -n/--workers: '-1': use a number"),
    Case("--spec-timeout -5", ["run", "--spec-timeout", "-5"], USAGE, r"--spec-timeout"),
    Case("--spec-timeout nan", ["run", "--spec-timeout", "nan"], USAGE, r"--spec-timeout"),
    Case("--spec-timeout inf", ["run", "--spec-timeout", "inf"], USAGE, r"--spec-timeout"),
    Case("--spec-timeout 0.001", ["run", "--spec-timeout", "0.001"], USAGE, r"--spec-timeout"),
    Case("-k that matches nothing", ["run", "-k", "no_spec_is_called_this"], NOTHING,
         r"^mdlri-conformance: NOTHING TESTED: no spec matches -k 'no_spec_is_called_this'"),
    Case("--profile bogus", ["run", "--profile", "bogus"], USAGE, r"invalid choice: 'bogus'"),
    Case("--expectations names a missing file", ["run", "--expectations", "{tmp}/no.toml"],
         USAGE, r"no\.toml: cannot read"),
    Case("--expectations is malformed TOML", ["run", "--expectations", "{tmp}/bad.toml"],
         USAGE, r"bad\.toml: malformed TOML", setup=_malformed_toml),
    Case("an unknown example", ["example", "nosuch"], USAGE, r"unknown example 'nosuch'"),
    Case("replay of a missing case file", ["replay", "{tmp}/none.json"], USAGE,
         r"cannot read .*none\.json"),
    Case("diff of a directory that is no run", ["diff", "{tmp}", "{tmp}"], USAGE,
         r"no results\.jsonl"),
    Case("-k with a malformed expression", ["run", "-k", "("], USAGE,
         r"^mdlri-conformance: error: -k '\(': .*expected"),
    Case("an unknown pytest option after --", ["run", "--", "--bogus-opt"], USAGE,
         r"^mdlri-conformance: error: pytest arguments after --: unrecognized arguments: "
         r"--bogus-opt$"),
    Case("--devices abc", ["run", "--backend", "acl", "--acl-lib", "emulator", "--devices",
                           "abc"], USAGE, r"--devices 'abc': expected comma-separated integers"),
    Case("--kernel-binary names a missing file", ["run", "--backend", "acl", "--acl-lib",
                                                  "emulator", "--kernel-binary",
                                                  "{tmp}/none.o"],
         USAGE, r"--kernel-binary .*none\.o: no such file"),
    Case("example on a missing --acl-lib", ["example", "fallback", "--backend", "acl",
                                            "--acl-lib", "{tmp}/none.so"],
         USAGE, r"--acl-lib .*none\.so: no such file"),
    Case("replay of a file that is not JSON", ["replay", "{tmp}/case.json"], USAGE,
         r"case\.json: not JSON", setup=lambda tmp: (tmp / "case.json").write_text("x")),
    Case("faults --only an unknown fault", ["faults", "--only", "nosuch"], USAGE,
         r"unknown fault nosuch"),
    # -- worker counts, shards, error prefixes ---------------------------------------------------
    Case("-n 3000 beyond the open-file limit", ["run", "-n", "3000"], USAGE,
         r"^mdlri-conformance: error: -n 3000 \(\d+ worker\(s\) wanted\): the open-file limit "
         r"\(ulimit -n 128\) holds at most \d+ worker\(s\)", nofile=128),
    Case("-n 32 for one spec starts one worker", ["run", "-n", "32", *_ONE_SPEC], PASS,
         r"^workers: 1 \(-n 32: only 1 spec\(s\) selected\)$"),
    Case("-n auto says what it chose", ["run", "-n", "auto", *_ONE_SPEC], PASS,
         r"^workers: 1 \(-n auto: (\d+ CPU\(s\)|\$PYTEST_XDIST_AUTO_NUM_WORKERS)"),
    Case("--shard 3/2", ["run", "--shard", "3/2"], USAGE,
         r"^mdlri-conformance: error: --shard 3/2: use K/N with 1 <= K <= N$"),
    Case("a subcommand's argparse error", ["merge"], USAGE,
         r"^mdlri-conformance: error: the following arguments are required: RUN_DIR"),
    Case("a pytest plugin after -- that cannot be imported",
         ["run", *_SPECS, "--", "-p", "no_such_plugin"], USAGE,
         r"^mdlri-conformance: error: pytest arguments after --: Error importing plugin "
         r"\"no_such_plugin\": No module named 'no_such_plugin'$"),
    Case("pytest -n -1", ["pytest", "-n", "-1", *_SPECS], 4,
         r"^ERROR: -n -1: use a number of workers >= 0, or auto$"),
    # -- a full disk mid-run -----------------------------------------------------------------------
    Case("a full disk mid-run (a writer made to fail)",
         ["run", *_SPECS, *_FULL_DISK_PLUGIN], INCOMPLETE,
         r"^gate: INCOMPLETE \(backend sim[^)]*\)\): the run stopped \(cannot write "
         r"\S+/results\.jsonl: No space left on device\); \d+ of \d+ collected spec\(s\) "
         r"never ran$", env=_FULL_DISK_ENV, check=_full_disk_is_honest),
    Case("a full disk mid-run, -n 0 (a writer made to fail)",
         ["run", "-n", "0", *_SPECS, *_FULL_DISK_PLUGIN], INCOMPLETE,
         r"^gate: INCOMPLETE \(backend sim[^)]*\)\): the run stopped \(cannot write "
         r"\S+/results\.jsonl: No space left on device\); \d+ of \d+ collected spec\(s\) "
         r"never ran$", env=_FULL_DISK_ENV, check=_full_disk_is_honest),
    Case("a full disk mid-run (a 24k tmpfs)", ["run", "-k", "test_capture"], INCOMPLETE,
         r"^gate: INCOMPLETE \(backend sim[^)]*\)\): the run stopped \(cannot write "
         r"\S+/results\.jsonl: No space left on device\)", tmpfs="24k",
         check=_full_disk_is_honest),
    Case("a full disk mid-run with --allure (a 160k tmpfs)",
         ["run", "-k", "test_capture", "--allure"], INCOMPLETE,
         r"^gate: INCOMPLETE \(backend sim[^)]*\)\): the run stopped \(cannot write "
         r"\S+: No space left on device\)", tmpfs="160k", check=_full_disk_allure_is_honest),
    # -- what a new user still breaks -------------------------------------------------------------
    Case("a backend module that raises at import",
         ["run", "--backend", "tests.fake_broken_backend:create"], USAGE,
         r"^mdlri-conformance: error: backend 'tests\.fake_broken_backend:create': importing "
         r"'tests\.fake_broken_backend' raised RuntimeError: driver handshake failed at import$"),
    Case("--devices on sim", ["run", "--devices", "0,1", *_SPECS], USAGE,
         r"^mdlri-conformance: error: --devices 0,1: only the acl backend takes it"),
    Case("MDLRI_EMU_DEVICE_COUNT=abc", ["run", "--backend", "acl", "--acl-lib", "emulator",
                                        *_SPECS],
         USAGE, r"^mdlri-conformance: error: backend 'acl': MDLRI_EMU_DEVICE_COUNT='abc': "
                r"expected a device count from 1 to 64$", env={"MDLRI_EMU_DEVICE_COUNT": "abc"}),
    Case("pytest --devices 0,7 without -n", ["pytest", "--backend", "acl", "--acl-lib",
                                             "emulator", "--devices", "0,7", *_SPECS],
         4, r"^ERROR: backend 'acl': --devices 0,7: device 7 does not exist"),
    Case("pytest --pyargs under xdist",
         ["pytest", "--pyargs", "mdlri_conformance.conformance.specs", "-n", "1", *_SPECS],
         PASS, r"^gate: PASS \(backend sim: the embedded simulator", in_tmp=True,
         check=_recorded_as_run_names_them),
    Case("pytest --report-dir names a file", ["pytest", *_SPECS, "--report-dir", "{tmp}/file"],
         4, r"^ERROR: --report-dir \S+/file: exists and is not a directory$", setup=_a_file),
    Case("--against acl with no library", ["run", "--against", "acl", *_SPECS], NOTHING,
         r"^mdlri-conformance: NOTHING TESTED: --against acl: no CANN runtime library",
         env=_NO_CANN),
    Case("diff against a killed run", ["diff", "{tmp}/a", "{tmp}/b"], INCOMPLETE,
         r"^mdlri-conformance: INCOMPLETE: run B \S+: the run ended without its end record "
         r"\(killed\?\); 1 of 2 collected spec\(s\) never ran; only the specs both runs "
         r"recorded were compared$", setup=_complete_and_killed, check=_no_fingerprint_change),
    Case("merge of two whole runs", ["merge", "{tmp}/a", "{tmp}/b", "--out", "{tmp}/m"], USAGE,
         r"^mdlri-conformance: error: merge: \S+ and \S+ are whole runs", setup=_two_whole_runs),
    Case("report on an empty results.jsonl", ["report", "{tmp}"], NOTHING,
         r"^gate: NOTHING TESTED \(backend not recorded\): no spec was selected$",
         setup=_empty_results),
    Case("a simulator-only --fault on the emulator", ["run", "--backend", "acl", "--acl-lib",
                                                      "emulator", "--fault",
                                                      "disabled-task-runs"],
         USAGE, r"^mdlri-conformance: error: --fault disabled-task-runs: exists only on the "
                r"simulator"),
    Case("the seed of the random order at the top", ["run", *_ONE_SPEC], PASS,
         r"\AUsing --randomly-seed=(\d+)\n(.*\n)*order: random, seed \1 "),
    Case("report on a results.jsonl broken mid-file", ["report", "{tmp}"], USAGE,
         r"results\.jsonl:1: not a JSON line",
         setup=lambda tmp: (tmp / "results.jsonl").write_text('{"x\n{"nodeid": "a"}\n')),
    # -- kernel layouts and expectations files (helper 'known') ----------------------------------
    Case("the emulator reports two hidden trailing kernel parameters",
         ["run", "--backend", "acl", "--acl-lib", "emulator", "-k", "test_kernels"], PASS,
         r"^gate: PASS", env={"MDLRI_EMU_HIDDEN_PARAMS": "2", "MDLRI_KERNEL_LAYOUT": ""}),
    Case("--kernel-layout strict and two hidden trailing kernel parameters",
         ["run", "--backend", "acl", "--acl-lib", "emulator", "--kernel-layout", "strict", "-k",
          "test_kernels"], NOTHING,
         r"^mdlri-conformance: NOTHING TESTED: acl backend: kernel argument layout refused: "
         r"fallback_main: the runtime reports 4 parameter\(s\), the catalog struct has 2: "
         r"parameter 2 at offset 16 is not in the struct \(--kernel-layout strict\)",
         env={"MDLRI_EMU_HIDDEN_PARAMS": "2"}),
    Case("MDLRI_KERNEL_LAYOUT names no mode", ["run", "--backend", "acl", "--acl-lib", "emulator"],
         USAGE, r"MDLRI_KERNEL_LAYOUT='loose': use follow or strict \(--kernel-layout\)$",
         env={"MDLRI_KERNEL_LAYOUT": "loose"}),
    Case("--expectations is not UTF-8", ["run", "--expectations", "{tmp}/latin1.toml"], USAGE,
         r"latin1\.toml:2: not UTF-8 text \(byte 0xe9 at offset 21\)",
         setup=lambda tmp: (tmp / "latin1.toml").write_bytes(b'backend = "sim"\n# caf\xe9\n')),
    Case("--expectations atlas-a2 on sim", ["run", "--expectations", "atlas-a2"], USAGE,
         r"atlas-a2\.toml: written for backend 'acl', this run's backend is 'sim'"),
    Case("--expectations sim on acl", ["run", "--backend", "acl", "--acl-lib", "emulator",
                                       "--expectations", "sim"], USAGE,
         r"sim\.toml: written for backend 'sim', this run's backend is 'acl'"),
    Case("--expectations with backend = 42", ["run", "--expectations", "{tmp}/b42.toml"], USAGE,
         r"b42\.toml: backend must be a backend name \(sim, acl or package\.module:factory\), "
         r"not 42$", setup=lambda tmp: (tmp / "b42.toml").write_text("backend = 42\n")),
]


@dataclass
class Outcome:
    code: int
    output: str
    report_dir: Path


def can_mount_tmpfs(where: Path) -> bool:
    """True when this user may mount a tmpfs in a user namespace of its own (util-linux's
    unshare; Linux with unprivileged user namespaces)."""
    if shutil.which("unshare") is None:
        return False
    where.mkdir(exist_ok=True)
    try:
        res = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                              'mount -t tmpfs -o size=4k tmpfs "$0"', str(where)],
                             capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return res.returncode == 0


#: the command on a tmpfs of its own: $1 size, $2 mount point, $3 where its run directory
#: is copied when it ends (the tmpfs goes with the namespace), then the command
_ON_TMPFS = ('size=$1; mnt=$2; dest=$3; shift 3; mount -t tmpfs -o "size=$size" tmpfs "$mnt" '
             '|| exit 97; "$@"; rc=$?; cp -a "$mnt/out" "$dest" 2>/dev/null; exit $rc')


def _command(case: Case, args: list[str], tmp: Path, out: Path,
             env: dict[str, str]) -> list[str]:
    """The command line of a case: the CLI, or plain pytest (``pytest`` rows: over the specs
    folder unless --pyargs), on a tmpfs when the case asks for one and this machine allows
    it (else the writer made to fail fills the report directory: tests/full_disk.py)."""
    if args[0] == "pytest":
        where = [] if "--pyargs" in args else [str(ROOT / "conformance" / "specs")]
        return [sys.executable, "-m", "pytest", *where, "-p", "no:cacheprovider",
                "--report-dir", str(out), *args[1:]]
    if case.tmpfs is None:
        return CLI + args
    mnt = tmp / "mnt"
    if not can_mount_tmpfs(mnt):
        print(f"{case.name}: no tmpfs can be mounted here; the writer made to fail "
              "(tests/full_disk.py) fills the report directory instead")
        env.update(_FULL_DISK_ENV)
        return CLI + args + _FULL_DISK_PLUGIN
    args[args.index("--report-dir") + 1] = str(mnt / "out")
    return ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", _ON_TMPFS, "sh",
            case.tmpfs, str(mnt), str(out), *CLI, *args]


def _limits(case: Case) -> Callable[[], None] | None:
    if case.nofile is None:
        return None
    nofile = case.nofile

    def lower() -> None:
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))
    return lower


def run_case(case: Case, tmp: Path) -> Outcome:
    """Run one case in ``tmp`` (its report directory is ``tmp/out`` unless it names one)."""
    if case.setup is not None:
        case.setup(tmp)
    fill = lambda s: s.replace("{tmp}", str(tmp))  # noqa: E731
    args = [fill(a) for a in case.args]
    out = tmp / "out"
    if args[0] == "run" and "--report-dir" not in args:
        args[1:1] = ["--report-dir", str(out)]
    env = dict(os.environ, **{k: fill(v) for k, v in case.env.items()})
    env.pop("PYTEST_XDIST_WORKER", None)
    cwd = tmp if case.in_tmp else ROOT
    if case.signal is None:
        res = subprocess.run(_command(case, args, tmp, out, env), cwd=cwd, env=env,
                             capture_output=True, text=True, timeout=600,
                             preexec_fn=_limits(case))
        return Outcome(res.returncode, res.stdout + res.stderr, out)
    # the child gets Ctrl-C's default disposition, as from a terminal: a job started in the
    # background of a shell without job control (nohup, `cmd &` in a script) inherits SIGINT
    # ignored, and Python then installs no KeyboardInterrupt handler at all
    proc = subprocess.Popen(CLI + args, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    results = out / "results.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if results.is_file() and results.read_text().count("\n") >= 30:
            break
        time.sleep(0.05)
    proc.send_signal(case.signal)
    output, _ = proc.communicate(timeout=300)
    if case.signal != signal.SIGKILL:
        return Outcome(proc.returncode, output, out)
    rows_then = results.read_text().count("\n")
    res = subprocess.run(CLI + ["report", str(out)], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert results.read_text().count("\n") >= rows_then  # nothing already written is lost
    return Outcome(res.returncode, res.stdout + res.stderr, out)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input(case: Case, tmp_path: Path) -> None:
    """The exit code and the line; no traceback; no PASS verdict unless specs ran and passed."""
    if "not ACL" in case.name and not Path(_LIBM_PATH).is_absolute():
        pytest.skip("libm is not mapped from a file on this machine")
    got = run_case(case, tmp_path)
    assert got.code == case.code, got.output[-3000:]
    assert re.search(case.line, got.output, re.M), got.output[-3000:]
    assert "Traceback" not in got.output and "INTERNALERROR" not in got.output, got.output
    assert "Fatal Python error" not in got.output and "Thread 0x" not in got.output  # dumps
    crashes = [ln for ln in got.output.splitlines() if ln.startswith("  CRASH ")]
    assert len(crashes) == len({ln.split(": ")[0] for ln in crashes})  # one line per CRASH
    plain_pytest = case.args[0] == "pytest"
    if case.code == USAGE or (plain_pytest and case.code == 4):  # one line, nothing else
        assert len([ln for ln in got.output.splitlines() if ln.strip()]) == 1, got.output
    if case.code != PASS:
        assert "gate: PASS" not in got.output, got.output[-3000:]
    else:
        summary = json.loads((got.report_dir / "summary.json").read_text())
        assert summary["verdict"]["verdict"] == "PASS" and summary["totals"].get("PASS")
    summary_file = got.report_dir / "summary.json"
    if summary_file.is_file() and not plain_pytest:  # the recorded verdict is the exit code
        assert json.loads(summary_file.read_text())["verdict"]["exit_code"] == got.code
    crashes = got.report_dir / "crashes"
    if crashes.is_dir():  # no empty dump is left behind, a killed run's neither
        assert all(f.stat().st_size for f in crashes.iterdir()), list(crashes.iterdir())
    if case.check is not None:
        case.check(got.report_dir, got.output)
    if case.signal is not None:  # every row already written is kept, and the end is recorded
        rows = (got.report_dir / "results.jsonl").read_text().splitlines()
        assert len(rows) >= 30 and all(json.loads(r)["nodeid"] for r in rows)
        summary = json.loads((got.report_dir / "summary.json").read_text())
        assert summary["completeness"]["never_ran_count"] > 0


def main() -> None:
    """Print the table of cases: input, exit code, the line that matched."""
    import tempfile
    print("| input | exit | line printed |\n|---|---:|---|")
    for case in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            got = run_case(case, Path(tmp))
        m = re.search(case.line, got.output, re.M)
        line = next((ln for ln in got.output.splitlines() if m and m.group(0) in ln), "")
        line = line.replace(tmp, "$TMP").replace("|", "\\|")
        flag = "" if got.code == case.code and m else " **(unexpected)**"
        print(f"| {case.name} | {got.code}{flag} | `{line[:160]}` |")


if __name__ == "__main__":
    main()
