"""The pytest plugin of the suite: options, backend selection, markers, outcomes, results.

Options: ``--backend`` (``sim``, ``acl`` or ``package.module:factory``), ``--profile``,
``--report-dir``; for ``acl`` also ``--acl-lib PATH|emulator``, ``--kernel-binary`` and
``--devices 0,1,...`` (xdist worker k binds ``devices[k % len]``). A backend's optional
``unsupported_reason(what)`` supplies the text of UNSUPPORTED outcomes (the whole backend
when ``what`` is None, else a capability). Markers: ``clause(*ids)`` (required on every spec), ``requires(*caps)``.

Capabilities are probed when the backend starts, in every process that runs specs (each
xdist worker, or the ``-n 0`` process): :mod:`conformance.probe` measures data movement,
kernel execution, blocking waits, the never-timeout attribute and which API families answer
207000 / 207019; the effective capabilities replace the declared ones, and a spec requiring
an absent one is UNSUPPORTED with the probe's finding. The findings are printed once in the
terminal summary and stored in ``probe.json`` and under ``"probe"`` in ``summary.json``
(``--no-probe`` trusts the declared capabilities).

Outcomes (DESIGN.md "Behaviour levels"): a failing spec of level *documented* is FAIL; of
level *implementation* it is CHANGED (a behaviour change, reported but not failing the
run); *undefined* specs record a fingerprint and pass. A missing capability or a 207000
is UNSUPPORTED with its reason. Every result is appended to ``results.jsonl`` in the report
directory as it happens, so an interrupted run keeps what it recorded.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from mdlri_conformance.backends.contract import Cap
from . import (allure_labels, conflicts, expect, isolation, junit, probe, registry, rundir, shard,
               verdict)
from .backend_loader import (BackendLoadError, backend_options, find_factory, load_backend,
                             parse_devices, preflight)
from .harness import Dev
from .summary import build_summary, fails_gate, format_table, probe_lines, probe_summary
from mdlri_conformance.reports import expectations
from mdlri_conformance.reports.expectations import Expectations

from .items import SPEC_DIR, area_of as _area_of, clause_ids as _clause_ids, is_spec as _is_spec
OUTCOMES = ("PASS", "FAIL", "CHANGED", "UNSUPPORTED", "ERROR", "SKIP", "TIMEOUT", "CRASH")
_KEY = "mdlri"
_PROBE_KEY = "mdlri_probe"
_backend_key = pytest.StashKey[Any]()
_state_key = pytest.StashKey["RunState"]()
_probe_key = pytest.StashKey[dict[str, Any]]()
_unreached_key = pytest.StashKey[bool]()
_missing_key = pytest.StashKey[list[str]]()


class RunState:
    """What the controller process accumulates for the summary."""

    def __init__(self, report_dir: Path, backend_name: str,
                 expectations: Expectations | None = None) -> None:
        self.report_dir = report_dir
        self.backend_name = backend_name
        self.expectations = expectations
        self.backend_version = ""
        self.summary: dict[str, Any] | None = None
        self.expectation_errors: list[str] = []
        self.results: list[dict[str, Any]] = []
        #: capability probe findings per process ("main" or the xdist worker id)
        self.probes: dict[str, dict[str, Any]] = {}
        #: the node ids of the specs selected to run (None until collection reports them)
        self.collected: list[str] | None = None
        #: how the run ended (rundir.finish): complete, interrupted, internal error
        self.ended = "complete"
        self.jsonl: Any = None

    def open(self, argv: list[str] | None = None) -> None:
        """Claim the report directory and write the start record (once, lazily: a run that
        collects no spec leaves no directory behind)."""
        if self.jsonl is not None:
            return
        rundir.claim(self.report_dir)
        rundir.start(self.report_dir, self.backend_name, argv)
        self.jsonl = (self.report_dir / rundir.RESULTS_FILE).open("x", encoding="utf-8")

    def record(self, row: dict[str, Any]) -> None:
        self.open()
        self.results.append(row)
        self.jsonl.write(json.dumps(row, sort_keys=True) + "\n")
        self.jsonl.flush()


# ---------------------------------------------------------------------------------------------
# options and configuration


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("mdlri", "Model RI conformance")
    g.addoption("--backend", default=os.environ.get("MDLRI_BACKEND", "sim"),
                help="backend under test: 'sim' or package.module:factory (default: sim)")
    g.addoption("--profile", default="ci", choices=("ci", "dev", "deep", "hw"),
                help="hypothesis settings profile (default: ci)")
    g.addoption("--hypothesis-db", default=os.environ.get("MDLRI_HYPOTHESIS_DB"),
                help="directory of the Hypothesis example database, shared by xdist workers "
                     "(default: .hypothesis/examples; 'none' disables it)")
    g.addoption("--report-dir", default=None,
                help="where results go (default: reports/out/<run-id>)")
    g.addoption("--against", default=None,
                help="differential run: replay the generated graphs on this second backend too")
    g.addoption("--expectations", default=os.environ.get("MDLRI_EXPECTATIONS"),
                help="expectations file (TOML) of known divergences for this backend")
    g.addoption("--acl-lib", default=None,
                help="acl backend: libacl_rt.so path or directory, or 'emulator' "
                     "(default: $MDLRI_ACL_LIB, then discovery)")
    g.addoption("--kernel-binary", default=None,
                help="acl backend: the catalog kernels' binary (default: "
                     "$MDLRI_KERNEL_BINARY, then the kernels cache)")
    g.addoption("--devices", default=None,
                help="acl backend: device ids, e.g. 0,1,2,3; xdist worker k binds "
                     "devices[k %% len] (default: 0)")
    g.addoption("--no-probe", action="store_true", default=False,
                help="trust the backend's declared capabilities instead of probing them at "
                     "backend start (debugging only)")
    isolation.add_options(g)  # --fault, --spec-timeout, --no-state-check
    shard.add_options(g)  # --shard, --shard-durations


def _default_report_dir() -> Path:
    run_id = time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"
    return Path("reports") / "out" / run_id


def pytest_configure(config: pytest.Config) -> None:
    for module, name in ((allure_labels, "mdlri-allure-labels"), (junit, "mdlri-junit")):
        if not config.pluginmanager.is_registered(module):
            config.pluginmanager.register(module, name)
    shard.configure(config, lambda: run_state(config))
    config.addinivalue_line("markers", "clause(*ids): the catalog clause ids a spec checks")
    config.addinivalue_line("markers", "requires(*caps): backend capabilities a spec needs")
    _load_hypothesis_profile(config.getoption("--profile"), config.getoption("--hypothesis-db"))
    name = config.getoption("--backend")
    against = config.getoption("--against")
    if against:
        try:
            find_factory(against)
        except BackendLoadError as exc:
            raise pytest.UsageError(f"--against: {exc}") from None
    try:
        worker = getattr(config, "workerinput", {}).get("workerid")
        options = backend_options(name, acl_lib=config.getoption("--acl-lib"),
                                  kernel_binary=config.getoption("--kernel-binary"),
                                  devices=config.getoption("--devices"), worker=worker,
                                  faults=config.getoption("--fault"))
        if _is_xdist_controller(config):
            find_factory(name)  # the workers create the backends; the controller needs none
        else:
            config.stash[_backend_key] = load_backend(name, **options)
    except BackendLoadError as exc:
        raise pytest.UsageError(str(exc)) from None
    if not _is_xdist_controller(config):
        # watchdog, crash dump, leaks, example counts; before the probes, so that a worker
        # crashing in a probe leaves its stacks in the run's crashes/ too
        isolation.configure_runner(config, lambda: config.stash.get(_backend_key, None),
                                   _is_spec)
        _probe_backend(config, config.stash[_backend_key], worker or "main")
    if hasattr(config, "workerinput"):
        return  # xdist worker: the controller records results
    # a child's parent checked already; a -n 0 process has just loaded the backend
    if not os.environ.get(isolation.OWN_PROCESS_ENV) and _is_xdist_controller(config):
        try:
            preflight(name, options, devices=parse_devices(config.getoption("--devices")),
                      kernel_binary=config.getoption("--kernel-binary"),
                      lib=config.getoption("--acl-lib"))
        except BackendLoadError as exc:
            raise pytest.UsageError(str(exc)) from None
    rd = config.getoption("--report-dir")
    report_dir = Path(rd) if rd else _default_report_dir()
    if rundir.holds_run(report_dir):
        raise pytest.UsageError(f"--report-dir {report_dir}: already holds a run "
                                "(results.jsonl or run.json); give a new directory")
    exp = None
    if config.getoption("--expectations"):
        try:
            exp = expectations.load(config.getoption("--expectations"),
                                    expectations.known_ids(SPEC_DIR))
        except expectations.ExpectationsError as exc:
            raise pytest.UsageError(str(exc)) from None
    try:
        state = RunState(report_dir, name, exp)
    except OSError as exc:
        raise pytest.UsageError(f"report directory {report_dir}: {exc.strerror or exc}") from None
    backend = config.stash.get(_backend_key, None)
    if backend is not None:
        state.backend_version = str(backend.version())
    config.stash[_state_key] = state
    config.pluginmanager.register(Recorder(state), "mdlri-recorder")
    _terminate_as_interrupt(config)
    isolation.configure_recorder(config, state)  # CRASH/TIMEOUT rows, leaks


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Options that contradict each other are refused in one line, before any plugin acts on
    them (Hypothesis reads its profile in its own pytest_configure)."""
    conflicts.check(config)


def run_state(config: pytest.Config) -> "RunState | None":
    """The run's bookkeeping in the process that records results (None elsewhere)."""
    return config.stash.get(_state_key, None)


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


def _probe_backend(config: pytest.Config, backend: Any, process: str) -> None:
    """Measure the backend's capabilities and install the effective ones (conformance.probe).

    The findings travel with the first spec report of this process to the process that
    records results (:class:`Recorder`)."""
    if config.getoption("--no-probe") or _unsupported_reason(backend, None):
        return
    report = probe.run_probes(backend)
    probe.apply(backend, report)
    config.stash[_probe_key] = {"process": process, "backend": getattr(backend, "name", "?"),
                                **report.to_dict()}


def _is_xdist_controller(config: pytest.Config) -> bool:
    """True in the process that only distributes specs to pytest-xdist workers."""
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist"):
        return False
    return bool(config.getoption("numprocesses", None)) and \
        config.getoption("dist", "no") != "no"


def _load_hypothesis_profile(profile: str, db_path: str | None = None) -> None:
    """ci: derandomized and bounded; dev: quick; deep: nightly; hw: few examples, no deadline.

    The example database is a directory database: each example is its own file written
    atomically, so several xdist workers can share one directory safely.
    """
    from hypothesis import HealthCheck, settings
    from hypothesis.database import DirectoryBasedExampleDatabase
    if db_path and db_path.lower() == "none":
        database = None
    else:
        database = DirectoryBasedExampleDatabase(db_path or ".hypothesis/examples")
    common = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow], database=database)
    # derandomized runs replay the same examples every time; Hypothesis uses no database then
    settings.register_profile("ci", derandomize=True, max_examples=60, print_blob=True,
                              **{**common, "database": None})
    settings.register_profile("dev", max_examples=20, **common)
    settings.register_profile("deep", max_examples=2000, **common)
    settings.register_profile("hw", max_examples=25, **common)
    settings.load_profile(profile)


def pytest_unconfigure(config: pytest.Config) -> None:
    backend = config.stash.get(_backend_key, None)
    if backend is not None:
        probe.forget(backend)
        backend.close()
    state = config.stash.get(_state_key, None)
    if state is not None and state.jsonl is not None:
        state.jsonl.close()


# ---------------------------------------------------------------------------------------------
# collection: every spec cites known clauses


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    problems: list[str] = []
    for item in items:
        if not _is_spec(item):
            continue
        ids = _clause_ids(item)
        if not ids:
            problems.append(f"{item.nodeid}: no clause marker")
            continue
        bad = registry.unknown(ids)
        if bad:
            problems.append(f"{item.nodeid}: unknown clause id(s) {', '.join(bad)}")
    if problems:
        raise pytest.UsageError("specs citing unknown or no clauses:\n  " + "\n  ".join(problems))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Record the specs selected to run before the first one runs (-n 0; under xdist the
    controller hears it from :meth:`Recorder.pytest_xdist_node_collection_finished`)."""
    state = session.config.stash.get(_state_key, None)
    if state is not None and not _is_xdist_controller(session.config):
        _collected(state, [i.nodeid for i in session.items if _is_spec(i)])


def _collected(state: "RunState", nodeids: list[str]) -> None:
    if state.collected is not None or not nodeids:
        return
    state.collected = list(nodeids)
    try:
        state.open()
        rundir.write_collected(state.report_dir, nodeids)
    except (OSError, rundir.RunDirError) as exc:
        raise pytest.UsageError(str(exc)) from None


def _spec_nodeid(config: pytest.Config, nodeid: str) -> bool:
    """True when a node id names a test under conformance/specs/ (the controller of an xdist
    run sees node ids only)."""
    path = (config.rootpath / nodeid.split("::", 1)[0]).resolve()
    return SPEC_DIR.resolve() in path.parents


# ---------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="session")
def backend(request: pytest.FixtureRequest) -> Any:
    """The backend under test (one per process)."""
    return request.config.stash[_backend_key]


@pytest.fixture(scope="session")
def against_backend(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The second backend of a differential run (``--against``)."""
    name = request.config.getoption("--against")
    worker = getattr(request.config, "workerinput", {}).get("workerid")
    try:
        other = load_backend(name, **backend_options(
            name, acl_lib=request.config.getoption("--acl-lib"),
            kernel_binary=request.config.getoption("--kernel-binary"),
            devices=request.config.getoption("--devices"), worker=worker))
    except BackendLoadError as exc:
        pytest.exit(str(exc), returncode=pytest.ExitCode.USAGE_ERROR)
    if not request.config.getoption("--no-probe") and not _unsupported_reason(other, None):
        probe.apply(other, probe.run_probes(other))
    yield other
    probe.forget(other)
    other.close()


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The differential specs are collected only for ``--against`` runs."""
    if collection_path.name == "test_differential.py" and not config.getoption("--against"):
        return True
    return None


@pytest.fixture
def dev(backend: Any) -> Iterator[Dev]:
    """A :class:`Dev` over the backend; everything it made is released after the spec."""
    d = Dev(backend)
    yield d
    d.close()


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
    request.node.user_properties.append(("mdlri_fingerprint", fp.values))
    yield fp


# ---------------------------------------------------------------------------------------------
# running: capabilities, clause context, outcome mapping


def pytest_runtest_setup(item: pytest.Item) -> None:
    if not _is_spec(item):
        return
    backend = item.config.stash[_backend_key]
    whole = _unsupported_reason(backend, None)
    if whole:
        item.stash[_unreached_key] = True
        pytest.skip(f"UNSUPPORTED: {backend.name} backend: {whole}")
    missing = [Cap(c) for m in item.iter_markers("requires") for c in m.args
               if Cap(c) not in backend.capabilities]
    if missing:
        item.stash[_missing_key] = [c.value for c in dict.fromkeys(missing)]
        why = "; ".join(r for r in (probe.reason(backend, c) for c in dict.fromkeys(missing))
                        if r)
        pytest.skip(f"UNSUPPORTED: backend {backend.name!r} lacks "
                    f"{', '.join(c.value for c in missing)}" + (f" ({why})" if why else ""))


def _unsupported_reason(backend: Any, what: str | None) -> str | None:
    """The backend's own reason for something unsupported (``unsupported_reason`` extra)."""
    fn = getattr(backend, "unsupported_reason", None)
    why = fn(what) if callable(fn) else None
    return why if isinstance(why, str) else None


def _leaves(exc: BaseException) -> list[BaseException]:
    """The non-group exceptions inside an exception group (the exception itself otherwise)."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for e in exc.exceptions for leaf in _leaves(e)]
    return [exc]


def _judged(exc: BaseException) -> list[BaseException]:
    """The leaves that are not :class:`expect.Unsupported` (what the outcome is judged on)."""
    return [e for e in _leaves(exc) if not isinstance(e, expect.Unsupported)]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """207000 / 207019 and other Unsupported: UNSUPPORTED, also when Hypothesis groups
    several of them ("found N distinct failures") and nothing else failed."""
    token = expect.current_clauses.set(_clause_ids(item))
    try:
        return (yield)
    except expect.Unsupported as exc:
        pytest.skip(f"UNSUPPORTED: {exc}")
    except BaseExceptionGroup as group:
        if _judged(group):
            raise
        pytest.skip(f"UNSUPPORTED: {_leaves(group)[0]}")
    finally:
        expect.current_clauses.reset(token)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    rep = yield
    if not _is_spec(item):
        return rep
    ids = _clause_ids(item)
    level = registry.level_of(ids) if ids and not registry.unknown(ids) else "documented"
    outcome = None
    message = ""
    if rep.when == "call" or rep.outcome != "passed":
        if rep.passed and rep.when == "call":
            outcome = "PASS"
        elif rep.skipped:
            reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
            message = reason.removeprefix("Skipped: ")
            outcome = "UNSUPPORTED" if message.startswith("UNSUPPORTED") else "SKIP"
        elif rep.failed and rep.when == "call":
            message = _failure_line(call)
            judged = _judged(call.excinfo.value)
            failure = bool(judged) and all(isinstance(e, AssertionError) for e in judged)
            if level == "implementation" and failure:
                outcome = "CHANGED"
                rep.outcome = "skipped"
                rep.wasxfail = f"CHANGED {message}"
            else:
                outcome = "FAIL" if failure else "ERROR"
        elif rep.failed:
            message = _failure_line(call)
            outcome = "ERROR"
    if outcome is not None:
        info = {"outcome": outcome, "clauses": list(ids), "level": level,
                "area": _area_of(item, ids), "message": message}
        if outcome == "UNSUPPORTED":
            # what the spec needs, and what was missing (required capabilities, verdicts)
            info["needs"] = sorted({Cap(c).value for m in item.iter_markers("requires")
                                    for c in m.args})
            if item.stash.get(_missing_key, None):
                info["missing"] = item.stash[_missing_key]
            if item.stash.get(_unreached_key, False):
                info["backend_unavailable"] = True
        first = _first_judged(call.excinfo.value) if call.excinfo else None
        details = getattr(first, "details", None)
        if details:
            info["divergence"] = details
        rep.user_properties.append((_KEY, info))
        found = item.config.stash.get(_probe_key, None)
        if found is not None and not found.get("sent"):
            found["sent"] = True  # once per process: the recorder keeps it per process
            rep.user_properties.append((_PROBE_KEY, {k: v for k, v in found.items()
                                                     if k != "sent"}))
    return rep


def _first_judged(exc: BaseException) -> BaseException:
    """The exception an outcome message describes: the first judged leaf of a group."""
    judged = _judged(exc)
    return judged[0] if judged else exc


def _failure_line(call: pytest.CallInfo[None]) -> str:
    exc = _first_judged(call.excinfo.value) if call.excinfo else None
    if exc is None:
        return ""
    text = str(exc).strip().splitlines()
    first = text[0] if text else type(exc).__name__
    return first if isinstance(exc, AssertionError) else f"{type(exc).__name__}: {first}"


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    info = dict(getattr(report, "user_properties", ())).get(_KEY)  # CollectReports have none
    if not info:
        return None
    if info["outcome"] == "CHANGED":
        return "changed", "C", ("CHANGED", {"yellow": True})
    if info["outcome"] == "UNSUPPORTED" and info.get("required"):
        return "failed", "F", ("UNSUPPORTED (required)", {"red": True})
    if info["outcome"] == "UNSUPPORTED":
        return "unsupported", "U", ("UNSUPPORTED", {"yellow": True})
    if info["outcome"] == "XFAIL":
        return "xfailed", "x", ("XFAIL", {"yellow": True})
    if info["outcome"] == "XPASS":
        return "xpassed", "X", ("XPASS", {"red": True})
    return None


class Recorder:
    """Per-config plugin object that appends each result to results.jsonl (controller only)."""

    def __init__(self, state: RunState) -> None:
        self.state = state

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """xdist: the first worker's collection is the run's list of specs."""
        _collected(self.state, [i for i in ids if _spec_nodeid(node.config, i)])

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        found = props.get(_PROBE_KEY)
        if found:
            self.state.probes[str(found.get("process", "main"))] = found
        info = props.get(_KEY)
        if not info:
            return
        self._apply_expectations(report, info)
        row = {"nodeid": report.nodeid, "backend": self.state.backend_name,
               "duration_s": round(report.duration, 4), **info}
        if props.get("mdlri_fingerprint"):
            row["fingerprint"] = props["mdlri_fingerprint"]
        self.state.record(row)

    def _apply_expectations(self, report: pytest.TestReport, info: dict[str, Any]) -> None:
        """XFAIL / XPASS per the expectations file; gated CHANGED. Runs before pytest counts
        the report, so the exit status is the gate's verdict."""
        exp = self.state.expectations
        if exp is None:
            return
        entry = exp.lookup(report.nodeid, info["clauses"], self.state.backend_version)
        final = expectations.apply(info["outcome"], entry)
        info.update(expectations.describe(entry))
        if final == "XFAIL":
            report.outcome = "skipped"
            report.wasxfail = f"XFAIL {entry.reason}"
        elif final == "XPASS":
            report.outcome = "failed"
            report.longrepr = (f"XPASS: expected {entry.outcome} ({entry.reason}) but it passed; "
                               f"remove {exp.path}:{entry.line}")
        elif final == "UNSUPPORTED" and exp.required_missing(info):
            info["gated"] = True
            info["required"] = exp.required_missing(info)
            report.outcome = "failed"
            report.longrepr = (f"UNSUPPORTED on required capability "
                               f"{', '.join(info['required'])} ({exp.path}): {info['message']}")
        elif final == "CHANGED" and exp.gates_changed(info["clauses"]):
            info["gated"] = True
            report.outcome = "failed"
            if hasattr(report, "wasxfail"):
                del report.wasxfail  # pytest does not count an xfail-marked failure
            report.longrepr = f"CHANGED (gated by {exp.path}): {info['message']}"
        info["outcome"] = final


# ---------------------------------------------------------------------------------------------
# summary


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write the report artefacts; unused expectations are an input error (exit 2 via CLI)."""
    state = session.config.stash.get(_state_key, None)
    if state is None:
        return
    from mdlri_conformance.reports.write import write_all
    state.ended = {pytest.ExitCode.INTERRUPTED: "interrupted",
                   pytest.ExitCode.INTERNAL_ERROR: "internal error"}.get(exitstatus, "complete")
    if state.jsonl is None and not state.results:
        return  # no spec was collected: not a conformance run, nothing to write
    if exitstatus == pytest.ExitCode.USAGE_ERROR and not state.results:
        state.jsonl.close()  # e.g. a bad -k expression, found after collection: no run
        state.jsonl = None
        rundir.discard(state.report_dir)
        return
    cited = {c for row in state.results for c in row["clauses"]}
    state.summary = build_summary(state.results, cited, state.backend_name,
                                  collected=state.collected, ended=state.ended,
                                  selection=_selection(session.config))
    # how the specs were ordered (the seed that reproduces a random order), before the
    # artefacts are written so summary.md / index.html carry it too
    state.summary["order"] = isolation.order_info(session.config)
    if state.probes:
        state.summary["probe"] = probe_summary(state.probes)
        rundir.write_json(state.report_dir / "probe.json", state.summary["probe"])
    write_all(state.report_dir, state.results, state.summary)
    exp = state.expectations
    opt = session.config.option
    complete = not any(getattr(opt, k, None) for k in ("keyword", "markexpr", "lf", "deselect")) \
        and not shard.active(session.config)
    if exp is not None and complete and state.results and exitstatus in (0, 1):
        unused = exp.unused(state.backend_version)
        if unused:
            state.expectation_errors = [f"{exp.path}:{e.line}: unused expectation for {e.id!r}"
                                        for e in unused]
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
    final = state.summary["verdict"]["verdict"]
    if session.exitstatus == pytest.ExitCode.OK and final != verdict.PASS:
        # plain pytest keeps its own exit codes; mdlri-conformance maps the verdict (cli.py)
        session.exitstatus = {verdict.NOTHING_TESTED: pytest.ExitCode.NO_TESTS_COLLECTED,
                              verdict.INCOMPLETE: pytest.ExitCode.INTERRUPTED,
                              }.get(final, pytest.ExitCode.TESTS_FAILED)
    rundir.finish(state.report_dir, state.ended, int(session.exitstatus))


def _selection(config: pytest.Config) -> str:
    """The -k / -m expressions that selected the specs ('' when none)."""
    parts = [f"{flag} {val!r}" for flag, val in (("-k", config.getoption("keyword", "")),
                                                 ("-m", config.getoption("markexpr", "")))
             if val]
    if shard.selection_text(config):
        parts.append(shard.selection_text(config))
    return ", ".join(parts)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(_state_key, None)
    if state is None or not state.summary:
        return
    tr = terminalreporter
    tr.section("Model RI conformance")
    for line in format_table(state.summary):
        tr.write_line(line)
    bad = [r for r in state.results if fails_gate(r)]
    for r in bad[:20]:
        what = (f"UNSUPPORTED on required capability {', '.join(r['required'])}"
                if r.get("required") else r["outcome"])
        tr.write_line(_shorten(f"  {what:<8} {r['nodeid']}", 240 - len(r["message"]) - 2)
                      + f": {r['message']}"[:240])
    if len(bad) > 20:
        tr.write_line(f"  ... and {len(bad) - 20} more (divergences.json)")
    for err in state.expectation_errors:
        tr.write_line(f"ERROR: {err}", red=True)
    for line in probe_lines(state.summary.get("probe")):
        tr.write_line(line)
    tr.write_line(f"results: {state.report_dir} (index.html, summary.md, divergences.json)")


def _shorten(text: str, width: int) -> str:
    """``text`` cut in the middle to ``width`` (at least 40) characters: a message's end (e.g.
    the crash dump's file name) matters more than the middle of a node id."""
    width = max(width, 40)
    if len(text) <= width:
        return text
    half = (width - 3) // 2
    return text[:half] + "..." + text[len(text) - (width - 3 - half):]
