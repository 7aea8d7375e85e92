"""Specs marked ``own_process`` (they change process-global runtime state they cannot
restore) run each in a fresh ``python -m pytest NODEID`` child with the same suite options;
the parent logs the child's reports as its own, and a child that ended before reporting
gives one CRASH / TIMEOUT / ERROR row whose output is filed under ``crashes/``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from . import keys
from .crashdump import CRASH_DIR, signal_name
from .recorder_hooks import row_info
from .watchdog import TIMEOUT_EXIT

OWN_PROCESS_MARKER = ("own_process: the spec changes process-global runtime state it cannot "
                      "restore; it runs in a fresh process of its own (conformance.isolation)")
#: seconds an own-process child may take to start (interpreter, imports, probes)
CHILD_START_S = 120.0
#: option dests not forwarded to an own-process child (it reports through the parent)
_NOT_FORWARDED = {"report_dir", "expectations", "devices"}

_groups: list[Any] = []  # the suite's option group (forwarded to own-process children)


def remember_options(group: Any) -> None:
    """Keep the suite's option group: its options are forwarded to the children."""
    _groups[:] = [group]


class OwnProcessHooks:
    """Runs each ``own_process`` item in a fresh ``python -m pytest NODEID`` child and logs
    the child's reports here (module docstring, "Own process")."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.spec_timeout = float(config.getoption("--spec-timeout") or 0)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: Any) -> bool | None:
        if item.get_closest_marker("own_process") is None:
            return None
        ihook = item.ihook
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        reports = self._run_child(item)
        # what the previous item kept for this one (its module, ...) is not needed here
        torn = pytest.CallInfo.from_call(
            lambda: item.session._setupstate.teardown_exact(nextitem), when="teardown")
        if torn.excinfo is not None:
            rep = ihook.pytest_runtest_makereport(item=item, call=torn)
            reports = [r for r in reports if r.when != "teardown"] + [rep]
        for rep in reports:
            ihook.pytest_runtest_logreport(report=rep)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    # -- the child -------------------------------------------------------------------------
    def child_args(self, item: pytest.Item, report_dir: Path) -> list[str]:
        """The child's command line: the same suite options, this one node id.

        ``--assert=plain``: specs assert through :mod:`conformance.expect`, whose messages
        do not need assertion rewriting, and rewriting every plugin distribution's modules
        again (nothing is cached under PYTHONDONTWRITEBYTECODE) doubles the child's start."""
        cfg = self.config
        # the file by its absolute path: a node id is relative to a rootdir that may not hold
        # the spec (an installed package run with --pyargs)
        target = str(item.path) + item.nodeid[item.nodeid.find("::"):]
        args = [sys.executable, "-m", "pytest", target, "-p",
                "mdlri_conformance.conformance.framework.plugin",
                "-p", "no:cacheprovider", "-q", "--tb=short", "--assert=plain",
                "--rootdir", str(cfg.rootpath),
                "--report-dir", str(report_dir), "--expectations="]
        if cfg.inipath is not None:
            args += ["-c", str(cfg.inipath)]
        if cfg.pluginmanager.hasplugin("xdist"):
            args += ["-n", "0"]
        if cfg.pluginmanager.hasplugin("randomly"):  # the same per-test random seeds
            args += ["-p", "randomly", f"--randomly-seed={cfg.getoption('randomly_seed')}"]
        else:
            args += ["-p", "no:randomly"]
        args += _suite_options(cfg)
        return args

    def _run_child(self, item: pytest.Item) -> list[pytest.TestReport]:
        with tempfile.TemporaryDirectory(prefix="mdlri-own-") as tmp:
            out = Path(tmp) / "reports.jsonl"
            env = dict(os.environ, **{keys.OWN_PROCESS_ENV: str(out)})
            limit = 2 * self.spec_timeout + CHILD_START_S if self.spec_timeout > 0 else None
            start = time.time()
            proc = subprocess.Popen(self.child_args(item, Path(tmp) / "run"),
                                    cwd=self.config.rootpath, env=env, text=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            try:
                output, _ = proc.communicate(timeout=limit)
                code, note = proc.returncode, ""
            except subprocess.TimeoutExpired:
                proc.kill()
                output, _ = proc.communicate()
                code, note = TIMEOUT_EXIT, f"no answer within {limit:g} s"
            reports = self._read_reports(out, item.nodeid)
        if any(r.when == "teardown" for r in reports):
            return reports
        where = self._file_output(item, proc.pid, output)
        return reports + self._missing_reports(item, reports, code, note, where,
                                               time.time() - start)

    def _file_output(self, item: pytest.Item, pid: int, output: str) -> str:
        """A child that ended before reporting: its whole output (faulthandler's stacks
        among it) goes to ``crashes/own-<pid>.txt`` of the run, never into the row; returns
        ``"; output: crashes/own-<pid>.txt"`` (or the last line, when there is no run
        directory to put it in)."""
        runner = self.config.pluginmanager.get_plugin(keys.RUNNER_PLUGIN)
        dump = getattr(runner, "dump", None)
        if dump is not None and output:
            path = dump.path.parent / f"own-{pid}.txt"
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"own process of {item.nodeid}\n{output}", encoding="utf-8")
                return f"; output: {CRASH_DIR}/{path.name}"
            except OSError:
                pass
        last = output.strip().splitlines()[-1:] if output.strip() else []
        return f": {last[0][-200:]}" if last else ""

    def _read_reports(self, path: Path, nodeid: str) -> list[pytest.TestReport]:
        reports = []
        lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
        for line in lines:
            try:
                data = json.loads(line)
            except ValueError:
                continue  # the child died mid-write
            rep = self.config.hook.pytest_report_from_serializable(config=self.config,
                                                                   data=data)
            if not isinstance(rep, pytest.TestReport):
                continue
            rep.user_properties = [(k, v) for k, v in rep.user_properties if k != keys.PROBE]
            info = dict(rep.user_properties).get(keys.RESULT)
            if isinstance(info, dict):
                info["own_process"] = True
            rep.nodeid = nodeid  # the child names the file by its absolute path
            reports.append(rep)
        return reports

    def _missing_reports(self, item: pytest.Item, got: list[pytest.TestReport], code: int,
                         note: str, where: str, elapsed: float) -> list[pytest.TestReport]:
        """The child ended before reporting the whole spec: CRASH (a signal), TIMEOUT (its
        watchdog, or no answer) or ERROR (it could not run the spec). One line; ``where``
        names the file with the child's output."""
        clauses = [c for m in item.iter_markers("clause") for c in m.args]
        if code == TIMEOUT_EXIT:
            outcome, message = "TIMEOUT", (f"own process: no result within --spec-timeout "
                                           f"{self.spec_timeout:g} s" + (f" ({note})" if note
                                                                          else ""))
        elif code < 0:
            outcome, message = "CRASH", f"own process died ({signal_name(-code)})"
        else:
            outcome, message = "ERROR", (f"own process ended with exit {code} before the "
                                         "spec reported")
        message += where
        info = {**row_info(item.nodeid, clauses, outcome, message), "own_process": True}
        if where.startswith("; output: "):
            info["stacks"] = where[len("; output: "):]
        common = dict(nodeid=item.nodeid, location=item.location,
                      keywords={k: 1 for k in item.keywords}, sections=[])
        out = []
        if not any(r.when == "call" or r.failed for r in got):
            out.append(pytest.TestReport(**common, outcome="failed", when="call",
                                         longrepr=f"{outcome}: {message}", duration=elapsed,
                                         user_properties=[(keys.RESULT, info)]))
        out.append(pytest.TestReport(**common, outcome="passed", when="teardown",
                                     longrepr=None, user_properties=[]))
        return out


class ChildReporter:
    """In an own-process child: write every test report, serialized, for the parent."""

    def __init__(self, config: pytest.Config, path: Path) -> None:
        self.config = config
        self.path = path

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = self.config.hook.pytest_report_to_serializable(config=self.config, report=report)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(data, default=repr) + "\n")


def _suite_options(config: pytest.Config) -> list[str]:
    """The suite's options (options.py's option group) as given to this run, for a child;
    ``--devices`` becomes the one device this process uses."""
    args: list[str] = []
    for opt in (_groups[0].options if _groups else []):
        dest, names = opt.dest, [n for n in opt.names() if n.startswith("--")]
        if not names or dest in _NOT_FORWARDED:
            continue
        value = config.getoption(dest, None)
        if isinstance(value, bool):  # a flag (store_true)
            args += [names[0]] if value else []
        elif isinstance(value, (list, tuple)):  # a repeatable option (append)
            args += [f"{names[0]}={v}" for v in value]
        elif value is not None:
            args.append(f"{names[0]}={value}")
    devices = config.getoption("--devices", None)
    if devices:
        from .backend_loader import parse_devices, worker_index
        worker = getattr(config, "workerinput", {}).get("workerid")
        ids = parse_devices(devices)
        args.append(f"--devices={ids[worker_index(worker) % len(ids)]}")
    return args
