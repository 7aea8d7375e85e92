"""Recording a run: the report directory, one ``results.jsonl`` row per spec result as it
happens (so an interrupted run keeps what it recorded), the known divergences of
``--expectations`` applied to each row (XFAIL / XPASS / gated), and the ``fingerprint``
fixture whose values travel with the row.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from . import keys, rundir
from .backend_session import is_xdist_controller
from .items import SPEC_DIR, is_spec, spec_nodeid
from .verdicts import known
from .verdicts.known import Expectations


class RunState:
    """What the controller process accumulates for the summary."""

    def __init__(self, report_dir: Path, backend_name: str,
                 expectations: Expectations | None = None, gate: str = "default") -> None:
        self.report_dir = report_dir
        self.backend_name = backend_name
        self.expectations = expectations
        #: "strict": every CHANGED the expectations file does not accept fails the gate
        self.gate = gate
        self.backend_version = ""
        self.summary: dict[str, Any] | None = None
        self.expectation_errors: list[str] = []
        self.results: list[dict[str, Any]] = []
        #: capability probe findings per process ("main" or the xdist worker id)
        self.probes: dict[str, dict[str, Any]] = {}
        #: the stack under test per process (backend_session.backend_stack)
        self.stacks: dict[str, dict[str, str]] = {}
        #: the node ids of the specs selected to run (None until collection reports them)
        self.collected: list[str] | None = None
        #: how the run ended (rundir.finish): complete, interrupted, internal error, or
        #: "cannot write ..." (:mod:`.write_guard`)
        self.ended = "complete"
        self.jsonl: Any = None
        #: the first write into the report directory that failed (a full disk), one line
        self.write_error: str | None = None
        #: asks the run to stop (set by the Recorder when the session starts)
        self.stop: Any = None
        #: set when the run reached its end record (written last, by write_guard)
        self.finish_status: bool | None = None
        #: the rootdir of this pytest: a spec's node id is recorded relative to the suite
        #: (``conformance/specs/...``), whatever it is (:func:`.items.spec_nodeid`)
        self.rootpath: Path | None = None

    def canonical(self, nodeid: str) -> str:
        """The node id as every run records it."""
        if self.rootpath is None:
            return nodeid
        return spec_nodeid(self.rootpath, nodeid) or nodeid

    def open(self, argv: list[str] | None = None) -> None:
        """Claim the report directory and write the start record (once, lazily: a run that
        collects no spec leaves no directory behind)."""
        if self.jsonl is not None:
            return
        rundir.claim(self.report_dir)
        rundir.start(self.report_dir, self.backend_name, argv)
        self.jsonl = (self.report_dir / rundir.RESULTS_FILE).open("x", encoding="utf-8")

    def record(self, row: dict[str, Any]) -> None:
        """Append a row to results.jsonl; a row that cannot be written (a full disk) is not
        counted either, and the run stops (:meth:`cannot_write`): the summary then counts
        exactly the rows results.jsonl holds."""
        if self.write_error is not None:
            return
        row["nodeid"] = self.canonical(row["nodeid"])
        try:
            self.open()
            self.jsonl.write(json.dumps(row, sort_keys=True) + "\n")
            self.jsonl.flush()
        except (OSError, rundir.RunDirError) as exc:
            self.cannot_write(rundir.RESULTS_FILE, exc)
            return
        self.results.append(row)

    def cannot_write(self, name: str | None, exc: BaseException) -> None:
        """A file of the run could not be written: remember the first (one line) and stop
        the run; it ends INCOMPLETE, saying why (:mod:`.write_guard`)."""
        if self.write_error is None:
            why = getattr(exc, "strerror", None) or str(exc)
            where = self.report_dir / name if name else f"the reports in {self.report_dir}"
            self.write_error = f"cannot write {where}: {why}"
        if self.jsonl is not None:
            _close_quietly(self.jsonl)
            self.jsonl = _Closed()
        if callable(self.stop):
            self.stop(self.write_error)


class _Closed:
    """results.jsonl after a failed write: nothing more is written to it."""

    def write(self, text: str) -> int:
        return 0

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


def _close_quietly(f: Any) -> None:
    """Close a file whose buffer may not be writable any more (a full disk)."""
    try:
        f.close()
    except OSError:
        try:  # the buffered rest is lost; the descriptor must still be released
            os.close(f.fileno())
        except (OSError, ValueError):
            pass


def run_state(config: pytest.Config) -> RunState | None:
    """The run's bookkeeping in the process that records results (None elsewhere)."""
    return config.stash.get(keys.state_key, None)


def _default_report_dir() -> Path:
    run_id = time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
    return Path("reports") / "out" / run_id


def start_recording(config: pytest.Config, backend_name: str, backend: Any) -> RunState:
    """The recording process's :class:`RunState` (report directory and expectations checked,
    usage errors in one line) with its :class:`Recorder` registered."""
    rd = config.getoption("--report-dir")
    report_dir = Path(rd) if rd else _default_report_dir()
    if rundir.holds_run(report_dir):
        raise pytest.UsageError(f"--report-dir {report_dir}: already holds a run "
                                "(results.jsonl or run.json); give a new directory")
    exp = None
    if config.getoption("--expectations"):
        try:
            exp = known.load(config.getoption("--expectations"), known.known_ids(SPEC_DIR),
                             backend=config.getoption("--backend"))
        except known.ExpectationsError as exc:
            raise pytest.UsageError(str(exc)) from None
    try:
        state = RunState(report_dir, backend_name, exp, config.getoption("--gate"))
    except OSError as exc:
        raise pytest.UsageError(f"report directory {report_dir}: {exc.strerror or exc}") from None
    state.rootpath = config.rootpath
    if backend is not None:
        state.backend_version = str(backend.version())
    config.stash[keys.state_key] = state
    config.pluginmanager.register(Recorder(state), "mdlri-recorder")
    _terminate_as_interrupt(config)
    return state


def stop_recording(config: pytest.Config) -> None:
    """Close ``results.jsonl`` (at unconfigure)."""
    state = config.stash.get(keys.state_key, None)
    if state is not None and state.jsonl is not None:
        _close_quietly(state.jsonl)


def _terminate_as_interrupt(config: pytest.Config) -> None:
    """SIGTERM ends the run like Ctrl-C: pytest stops, the summary says INCOMPLETE and every
    row already written stays (the previous handler is put back at unconfigure)."""
    import signal
    import threading
    if threading.current_thread() is not threading.main_thread():
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum} (SIGTERM)")

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except (ValueError, OSError):
        return
    config.add_cleanup(lambda: signal.signal(signal.SIGTERM, previous))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Record the specs selected to run before the first one runs (-n 0; under xdist the
    controller hears it from :meth:`Recorder.pytest_xdist_node_collection_finished`)."""
    state = session.config.stash.get(keys.state_key, None)
    if state is not None and not is_xdist_controller(session.config):
        _collected(state, [i.nodeid for i in session.items if is_spec(i)])


def _collected(state: RunState, nodeids: list[str]) -> None:
    if state.collected is not None or not nodeids:
        return
    state.collected = [state.canonical(i) for i in nodeids]
    nodeids = state.collected
    try:
        state.open()
        rundir.write_collected(state.report_dir, nodeids)
    except rundir.RunDirError as exc:  # a directory that is no place for a run: bad input
        raise pytest.UsageError(str(exc)) from None
    except OSError as exc:  # a full disk: the run stops, INCOMPLETE
        state.cannot_write(rundir.COLLECTED_FILE, exc)


def _spec_nodeid(config: pytest.Config, nodeid: str) -> bool:
    """True when a node id names a test under conformance/specs/ (the controller of an xdist
    run sees node ids only, relative to the workers' rootdir)."""
    return spec_nodeid(config.rootpath, nodeid) is not None


def _plain(value: Any) -> Any:
    """A JSON- and xdist-serialisable copy (enums become their integer, unknowns their repr)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return repr(value)


class Fingerprint:
    """Observed values of undefined- and implementation-level behaviour, per spec."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def record(self, key: str, value: Any) -> None:
        """Record ``value`` under ``key`` (a clause id, optionally ``ID:detail``)."""
        self.values[key] = _plain(value)


@pytest.fixture
def fingerprint(request: pytest.FixtureRequest) -> Iterator[Fingerprint]:
    """Record observed behaviour; stored with the spec's result."""
    fp = Fingerprint()
    # the dict is shared with the reports made later, so values recorded during the call
    # travel with the call's report (also through xdist)
    request.node.user_properties.append((keys.FINGERPRINT, fp.values))
    yield fp


class Recorder:
    """Per-config plugin object that appends each result to results.jsonl (controller only)."""

    def __init__(self, state: RunState) -> None:
        self.state = state

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """A failed write stops the run at once (pytest.exit: xdist's workers are ended too,
        and the rest of their specs could not be recorded anyway), while specs run; the
        end of the session then says INCOMPLETE (write_guard)."""

        def stop(why: str) -> None:
            pytest.exit(why, returncode=pytest.ExitCode.INTERRUPTED)

        self.state.stop = stop

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        self.state.stop = None  # the end: the rows held until now are written, or not

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """xdist: the first worker's collection is the run's list of specs."""
        _collected(self.state, [i for i in ids if _spec_nodeid(node.config, i)])

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        found = props.get(keys.PROBE)
        if found:
            self.state.probes[str(found.get("process", "main"))] = found
        stack = props.get(keys.STACK)
        if stack:
            self.state.stacks[str(stack.get("process", "main"))] = stack.get("stack") or {}
        info = props.get(keys.RESULT)
        if not info:
            return
        self._apply_expectations(report, info)
        row = {"nodeid": report.nodeid, "backend": self.state.backend_name,
               "duration_s": round(report.duration, 4), **info}
        if props.get(keys.FINGERPRINT):
            row["fingerprint"] = props[keys.FINGERPRINT]
        self.state.record(row)

    def _apply_expectations(self, report: pytest.TestReport, info: dict[str, Any]) -> None:
        """XFAIL / XPASS per the expectations file; gated CHANGED (by the file, or every
        CHANGED it does not accept under ``--gate strict``). Runs before pytest counts the
        report, so the exit status is the gate's verdict."""
        exp = self.state.expectations
        entry = exp.lookup(self.state.canonical(report.nodeid), info["clauses"],
                           self.state.backend_version, info["outcome"],
                           info.get("message", "")) if exp is not None else None
        final = known.apply(info["outcome"], entry)
        info.update(known.describe(entry))
        if final == "XFAIL":
            report.outcome = "skipped"
            report.wasxfail = f"XFAIL {entry.reason}"
        elif final == "XPASS":
            report.outcome = "failed"
            report.longrepr = (f"XPASS: expected {entry.outcome} ({entry.reason}) but it passed; "
                               f"remove {exp.path}:{entry.line}")
        elif final == "UNSUPPORTED" and exp is not None and exp.required_missing(info):
            info["gated"] = True
            info["required"] = exp.required_missing(info)
            report.outcome = "failed"
            report.longrepr = (f"UNSUPPORTED on required capability "
                               f"{', '.join(info['required'])} ({exp.path}): {info['message']}")
        elif final == "CHANGED" and exp is not None and exp.gates_changed(info["clauses"]):
            self._gate_changed(report, info, str(exp.path))
        elif final == "CHANGED" and self.state.gate == "strict":
            self._gate_changed(report, info, "--gate strict")
        info["outcome"] = final

    @staticmethod
    def _gate_changed(report: pytest.TestReport, info: dict[str, Any], by: str) -> None:
        """A CHANGED that fails the gate: the row says so (``gated``), pytest counts a failure."""
        info["gated"] = True
        report.outcome = "failed"
        if hasattr(report, "wasxfail"):
            del report.wasxfail  # pytest does not count an xfail-marked failure
        report.longrepr = f"CHANGED (gated by {by}): {info['message']}"
