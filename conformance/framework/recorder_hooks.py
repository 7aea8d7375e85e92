"""The isolation hooks of the process that records results: each spec's row is held until
its teardown report (or a crash report) has arrived, ``leaks`` / ``state`` / ``hypothesis``
are merged into it, and only then written; an xdist worker that died inside a spec gives
that spec a CRASH or TIMEOUT row of one line, naming the signal and its dump under
``crashes/``."""

from __future__ import annotations

import json
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from . import keys, registry
from .crashdump import CRASH_DIR, dump_of, fault_of, remove_if_empty


class RecorderHooks:
    """Holds each spec's row until its teardown, merges leaks/counts, maps crashes."""

    def __init__(self, config: pytest.Config, state: Any) -> None:
        self.state = state
        self._write = state.record
        state.record = self._hold  # see the module docstring ("Rows")
        self._pending: dict[str, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self.iso_dir = Path(tempfile.mkdtemp(prefix="mdlri-isolation-"))
        self.crash_dir = Path(state.report_dir) / CRASH_DIR
        self.spec_timeout = float(config.getoption("--spec-timeout") or 0)
        self.config = config

    def _hold(self, row: dict[str, Any]) -> None:
        with self._lock:
            self._pending.setdefault(row["nodeid"], []).append(row)

    def flush(self, nodeid: str | None = None, extra: dict[str, Any] | None = None) -> None:
        """Write the held rows of ``nodeid`` (all held rows when None), merging ``extra``."""
        with self._lock:
            ids = list(self._pending) if nodeid is None else [nodeid]
            batches = [self._pending.pop(i, []) for i in ids]
        for rows in batches:
            for row in rows:
                if extra:
                    row.update(extra)
                self._write(row)

    def _merge(self, nodeid: str, key: str, value: Any) -> None:
        with self._lock:
            for row in self._pending.get(nodeid, []):
                row[key] = value

    # -- hooks -----------------------------------------------------------------------------
    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist: tell each worker where to leave its markers and its fault dump."""
        node.workerinput[keys.ISO_DIR] = str(self.iso_dir)
        node.workerinput[keys.CRASH_DIR] = str(self.crash_dir)

    @pytest.hookimpl(wrapper=True, optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> Iterator[None]:
        """xdist: a worker that died inside a spec gets its one console line from that
        spec's CRASH/TIMEOUT row, so xdist's ``[gwN] node down: ...`` line and its
        ``replacing crashed worker gwN`` (shown without ``-q``) are left out; a worker that
        dies elsewhere keeps them."""
        pm = self.config.pluginmanager
        trdist = pm.get_plugin("terminaldistreporter")
        worker = str(node.gateway.id)
        quiet = bool(error) and self._running_on(worker) is not None
        if quiet and trdist is not None:
            trdist.write_line = lambda msg: None  # this instance, for this one call
        if quiet and pm.get_plugin("dsession") is not None:
            _drop_line_once(pm.get_plugin("dsession"), f"replacing crashed worker {worker}")
        try:
            return (yield)
        finally:
            if quiet and trdist is not None:
                del trdist.write_line

    def _running_on(self, worker: str) -> dict[str, Any] | None:
        for path in self.iso_dir.glob("running-*.json"):
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if data.get("worker") == worker:
                return data
        return None

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        if keys.HYPOTHESIS in props:
            self._merge(report.nodeid, "hypothesis", props[keys.HYPOTHESIS])
        if report.when == "teardown":
            extra = {k: props[p] for k, p in (("leaks", keys.LEAKS), ("state", keys.STATE)) if p in props}
            self.flush(report.nodeid, extra or None)
        elif report.when not in ("setup", "call"):  # an xdist crash report ("???")
            self.flush(report.nodeid)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport,
                               sched: Any) -> None:
        """xdist: the worker running ``crashitem`` died: CRASH, or TIMEOUT if the watchdog
        ended it (its marker names the spec). One line, naming the signal and the worker's
        dump under ``crashes/``; the row gets that name as ``"stacks"``."""
        self.flush(crashitem)  # rows of its finished phases (e.g. the call) come first
        timed_out = self._take_marker("timeout", crashitem)
        running = self._take_marker("running", crashitem) or {}
        clauses = list(running.get("clauses") or [])
        node = getattr(report, "node", None)
        worker = str(node.gateway.id) if node is not None else str(running.get("worker"))
        dump = dump_of(self.crash_dir, worker)
        stacks = f"{CRASH_DIR}/{dump.name}" if dump is not None else None
        if timed_out is not None:
            outcome = "TIMEOUT"
            message = (f"no result within --spec-timeout {timed_out.get('timeout_s', 0):g} s; "
                       "stuck in native code, the worker was ended and replaced")
        else:
            outcome = "CRASH"
            message = f"the worker died ({fault_of(dump, _exit_status(node))})"
        message += f"; stacks: {stacks}" if stacks else "; it left no stacks"
        info = row_info(crashitem, clauses, outcome, message)
        if stacks:
            info["stacks"] = stacks
        report.user_properties.append((keys.RESULT, info))
        report.longrepr = f"{outcome}: {message}"

    def pytest_report_teststatus(self, report: pytest.TestReport) -> Any:
        """A CRASH, and a TIMEOUT that ended its process, is a category of its own
        (``2 crashed``, ``1 timed out`` in pytest's last line), not a failure with a section
        under FAILURES: it has no traceback, and its one line is the row's message in the
        gate summary. pytest still counts it failed (exit status, ``--maxfail``)."""
        info = dict(getattr(report, "user_properties", ())).get(keys.RESULT)
        if not isinstance(info, dict) or not report.failed:
            return None
        if info.get("outcome") == "CRASH":
            return "crashed", "!", ("CRASH", {"red": True})
        if info.get("outcome") == "TIMEOUT" and info.get("stacks"):
            return "timed out", "T", ("TIMEOUT", {"red": True})
        return None

    def _take_marker(self, kind: str, nodeid: str) -> dict[str, Any] | None:
        for path in sorted(self.iso_dir.glob(f"{kind}-*.json")):
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if data.get("nodeid") == nodeid:
                path.unlink(missing_ok=True)
                return data
        return None

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.flush()  # before the plugin builds the summary from state.results

    def pytest_unconfigure(self) -> None:
        self.flush()
        for p in self.iso_dir.glob("*"):
            p.unlink(missing_ok=True)
        try:
            self.iso_dir.rmdir()
        except OSError:
            pass
        remove_if_empty(self.crash_dir)  # e.g. of workers killed at the end of the run

    def hard_timeout_row(self, nodeid: str, stacks: str | None = None) -> None:
        """-n 0: the watchdog is about to end this very process; write the TIMEOUT row and
        everything held."""
        self.flush()
        msg = (f"no result within --spec-timeout {self.spec_timeout:g} s; stuck in native "
               "code and no worker isolation (-n 0): the run stops here")
        info = row_info(nodeid, [], "TIMEOUT", msg + (f"; stacks: {stacks}" if stacks else ""))
        if stacks:
            info["stacks"] = stacks
        self._write({"nodeid": nodeid, "backend": self.state.backend_name, "duration_s":
                     2 * self.spec_timeout, **info})


def _drop_line_once(dsession: Any, text: str) -> None:
    """Leave out xdist's next ``report_line`` that says ``text`` (it comes after the crash
    hooks, in the same call; other lines pass)."""
    original = dsession.report_line

    def report_line(line: str) -> None:
        if line.strip() == text:
            if dsession.__dict__.get("report_line") is report_line:
                del dsession.report_line
            return
        original(line)

    dsession.report_line = report_line


def _exit_status(node: Any) -> int | None:
    """The exit status of a dead xdist worker's process (negative: the signal), when its
    gateway is a local popen (execnet's ``Popen2IOMaster.popen``); None otherwise."""
    popen = getattr(getattr(getattr(node, "gateway", None), "_io", None), "popen", None)
    if not isinstance(popen, subprocess.Popen):
        return None
    try:
        return popen.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return None


def row_info(nodeid: str, clauses: list[str], outcome: str, message: str) -> dict[str, Any]:
    """The plugin's per-spec info for a spec whose process could not report itself."""
    ids = [c for c in dict.fromkeys(clauses) if not registry.unknown((c,))]
    level = registry.level_of(tuple(ids)) if ids else "documented"
    stem = Path(nodeid.split("::")[0]).stem
    area = stem[len("test_"):] if stem.startswith("test_") else "other"
    return {"outcome": outcome, "clauses": ids, "level": level, "area": area,
            "message": message}
