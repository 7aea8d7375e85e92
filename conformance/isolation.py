"""Crash and hang isolation, per-spec leak checks and Hypothesis counts.

A runtime under test may segfault, hang or leak. This module keeps one such spec from taking
the run down and reports it as an outcome of that spec:

* **CRASH** - the process running the spec died (a segfault inside a backend call, an
  ``abort()``...). Under pytest-xdist (``-n 1`` or more) the controller maps the crashed
  worker's current item to a CRASH row (``pytest_handlecrashitem``) and xdist starts a fresh
  worker, so every other spec still reports. Without xdist (``-n 0``) a crash ends pytest, as
  it always would: use ``-n 1`` for a runtime that may crash (``mdlri-conformance run``
  does by default).
* **Crash dumps** - :mod:`conformance.crashdump`: every process that runs specs points
  faulthandler at a file of the run, ``<report_dir>/crashes/<worker>-<pid>.txt``
  (``gw0-1234.txt`` for an xdist worker, ``main-<pid>.txt`` for a ``-n 0`` run, whose pid is
  ``run.json``'s), never the console; an own-process child's whole output goes to
  ``crashes/own-<pid>.txt`` when it ends without reporting. A crash is one line (the row's
  message: the signal and the dump's name, e.g. ``the worker died (signal 11, SIGSEGV);
  stacks: crashes/gw0-1234.txt``; the row's ``"stacks"`` names the file too); xdist's
  ``node down`` line for it is left out and pytest counts it as ``crashed``, not under
  FAILURES. A run without crashes leaves no ``crashes/`` folder.
* **TIMEOUT** - a spec (setup, call and teardown together) ran longer than
  ``--spec-timeout SECONDS`` (default 60; 0 switches the watchdog off; anything but 0 or a
  finite number >= 1 is a usage error, :func:`spec_timeout_value`). A watchdog thread
  first raises :class:`SpecTimeout` in the spec's thread (enough for a hang in Python code,
  e.g. the simulator's waits); the spec's row becomes TIMEOUT and the run goes on. If the
  spec is still running ``--spec-timeout`` seconds later (stuck inside native code, e.g. a
  ``pthread_cond_wait`` of the emulator), the watchdog dumps every thread's stack to the
  process's crash dump and ends the process (:meth:`RunnerHooks.hard_exit_code`):

  - an xdist worker writes a marker naming the spec and exits with :data:`TIMEOUT_EXIT`
    (86); the controller turns that crash into a TIMEOUT row and xdist replaces the worker;
  - an own-process child exits with :data:`TIMEOUT_EXIT`, which its parent turns into the
    spec's TIMEOUT row;
  - a ``-n 0`` run writes the TIMEOUT row, says so in one console line (``mdlri: FAIL:
    ...``, naming the dump) and stops: the process exits with 1, FAIL (a TIMEOUT fails the
    gate, and a failure wins over the incomplete run, :mod:`conformance.verdict`; ``report`` on
    the directory says the same). 86 never reaches the shell from ``mdlri-conformance``.
* **Leaks** - :mod:`conformance.leaks`: live counts before setup and after teardown. When the
  backend reported both, the row gets ``"leaks"``: what grew, ``{}`` when nothing did; a
  backend that cannot count (no ``live_counts``) leaves the row without ``"leaks"``, so
  "nothing leaked" and "not checked" differ (:func:`conformance.summary.leak_summary`).
* **Process-global state** - :mod:`conformance.global_state`: read before the first spec of a
  process (and again after any non-spec test) and after each spec's teardown, in the thread
  that runs the specs; what differs from the reading before the spec goes into the row as
  ``"state": {"changed": {...}}`` (``{}`` when nothing changed), with ``"not_checked"``
  naming the aspects this backend cannot show. The exchange mode and the device are then put
  back to the baseline (``"restored"``). Reported, not gated, like leaks;
  ``--no-state-check`` switches it off (rows then have no ``"state"``).
* **Own process** - a spec marked ``@pytest.mark.own_process`` (it changes process-global
  runtime state it cannot restore, e.g. a wrong-thread CaptureEnd, MODE-03) runs in a fresh
  ``python -m pytest NODEID`` subprocess with the same suite options, in the process that
  would have run it (an xdist worker or the ``-n 0`` process). The child sends its test
  reports back serialized (``pytest_report_to_serializable``); they are logged here as if
  the spec had run here, so outcome, message, clauses, fingerprint, leaks and state reach
  ``results.jsonl`` unchanged (the row gets ``"own_process": true``). A child that dies is
  CRASH, one ended by its watchdog TIMEOUT. A subprocess, not ``fork()``: the simulator's
  engine, the emulator's and a real runtime's threads and driver handles do not survive a
  fork (a lock held by another thread at the fork stays held in the child), and a fresh
  process is exactly the clean state such a spec needs.
* **Examples** - :mod:`conformance.killstats`: the Hypothesis test cases a spec ran and,
  for a failure, the example that first failed and the shrunk counterexample's size, in the
  row as ``"hypothesis"``.

Rows: the plugin's :class:`~conformance.plugin.Recorder` writes a spec's row when the call
report arrives, before teardown; the controller part here holds each row back until the
spec's teardown report (or a crash report) has arrived, merges ``leaks``/``hypothesis`` into
it, and only then writes it to ``results.jsonl`` (all rows are flushed before the summary).

Wiring (two calls in plugin.py's ``pytest_configure``): :func:`configure_runner` in every
process that runs specs (an xdist worker or a ``-n 0`` run), :func:`configure_recorder` in
the process that records results.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from . import global_state, killstats, leaks, verdict
from .crashdump import CRASH_DIR, CrashDump, dump_of, fault_of, remove_if_empty, signal_name

#: exit status of an xdist worker or an own-process child ended by the hard watchdog (its
#: controller or parent maps it to the spec's TIMEOUT row; never the exit status of a run)
TIMEOUT_EXIT = 86
#: exit status of a ``-n 0`` run ended by the hard watchdog: FAIL (its TIMEOUT row fails the
#: gate, which wins over the run being incomplete)
STOPPED_EXIT = verdict.EXIT_CODES[verdict.FAIL]
DEFAULT_SPEC_TIMEOUT = 60.0
_KEY = "mdlri"  # the plugin's user-property key of a spec's result info
_STATS = "mdlri_hypothesis"
_LEAKS = "mdlri_leaks"
_STATE = "mdlri_state"
_PROBE = "mdlri_probe"  # the plugin's capability-probe user property (not forwarded from a child)
_ISO_DIR = "mdlri_isolation_dir"
_CRASH_DIR = "mdlri_crash_dir"  # workerinput: where a worker writes its fault dump
#: set in an own-process child: where it writes its serialized test reports
OWN_PROCESS_ENV = "MDLRI_OWN_PROCESS_OUT"
OWN_PROCESS_MARKER = ("own_process: the spec changes process-global runtime state it cannot "
                      "restore; it runs in a fresh process of its own (conformance.isolation)")
#: seconds an own-process child may take to start (interpreter, imports, probes)
CHILD_START_S = 120.0
#: option dests not forwarded to an own-process child (it reports through the parent)
_NOT_FORWARDED = {"report_dir", "expectations", "devices"}


class SpecTimeout(BaseException):
    """Raised in a spec's thread by the watchdog (a BaseException, so neither the spec nor
    Hypothesis swallows it)."""


_groups: list[Any] = []  # the suite's option group (forwarded to own-process children)


def add_options(group: Any) -> None:
    """``--fault``, ``--spec-timeout`` and ``--no-state-check`` (called last from plugin.py's
    pytest_addoption, so ``group`` then holds every suite option)."""
    _groups[:] = [group]
    group.addoption("--fault", action="append", default=[], metavar="NAME",
                    help="inject a catalogued runtime bug (backends/sim/faults.py) into the "
                         "sim, or the acl emulator (--acl-lib emulator); repeatable")
    group.addoption("--spec-timeout", type=_spec_timeout_option, default=DEFAULT_SPEC_TIMEOUT,
                    metavar="SECONDS",
                    help="watchdog per spec: TIMEOUT after this many seconds (0: off; "
                         f"default {DEFAULT_SPEC_TIMEOUT:g})")
    group.addoption("--no-state-check", action="store_true", default=False,
                    help="do not read the process-global runtime state (capture and exchange "
                         "modes, device, context, open captures) around each spec")


def spec_timeout_value(text: str) -> float:
    """``--spec-timeout``: 0 (the watchdog off) or a finite number of seconds >= 1.

    Anything else (negative, nan, inf, below one second, not a number) raises
    :class:`argparse.ArgumentTypeError` with one line naming the value; a timeout below a
    second would end specs that are merely starting, and nan/inf would kill the watchdog."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if value == 0:
        return 0.0
    if not math.isfinite(value) or value < 1:
        raise argparse.ArgumentTypeError(
            f"--spec-timeout {text}: use 0 (off) or a finite number of seconds >= 1")
    return value


def _spec_timeout_option(text: str) -> float:
    """The pytest option's type: a bad value is a usage error of one line (an
    ``ArgumentTypeError`` there would print pytest's whole usage block)."""
    try:
        return spec_timeout_value(text)
    except argparse.ArgumentTypeError as exc:
        raise pytest.UsageError(str(exc)) from None


# ---------------------------------------------------------------------------------------------
# the watchdog


class Watchdog:
    """One daemon thread per process; at most one armed spec at a time.

    On expiry it interrupts the spec's thread with :class:`SpecTimeout` (only while the spec
    is inside setup/call/teardown); if the spec is still armed ``timeout`` seconds after
    that, it calls ``hard(nodeid)``, which must not return.
    """

    def __init__(self, timeout: float, hard: Callable[[str], None]) -> None:
        self.timeout = timeout
        self._hard = hard
        self._cond = threading.Condition()
        self._nodeid: str | None = None
        self._thread_id = 0
        self._deadline = 0.0
        self._inside = False
        self._soft_sent = False
        self.fired: str | None = None  # nodeid interrupted last
        self._thread = threading.Thread(target=self._loop, name="mdlri-watchdog", daemon=True)
        self._thread.start()

    def arm(self, nodeid: str) -> None:
        with self._cond:
            self._nodeid, self._thread_id = nodeid, threading.get_ident()
            self._deadline = time.monotonic() + self.timeout
            self._soft_sent = False
            self._cond.notify_all()

    def disarm(self) -> None:
        with self._cond:
            self._nodeid = None
            self._cond.notify_all()

    def inside(self, flag: bool) -> None:
        """Mark the armed spec as inside (True) or between (False) its phases."""
        with self._cond:
            self._inside = flag
            self._cond.notify_all()

    def _loop(self) -> None:
        with self._cond:
            while True:
                if self._nodeid is None:
                    self._cond.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                if not self._soft_sent and self._inside:
                    self._soft_sent = True
                    self.fired = self._nodeid
                    self._deadline = time.monotonic() + self.timeout
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(
                        ctypes.c_ulong(self._thread_id), ctypes.py_object(SpecTimeout))
                elif self._soft_sent or self._inside:
                    self._hard(self._nodeid)  # does not return
                else:
                    self._cond.wait(0.05)  # between phases: deliver when the next one starts


# ---------------------------------------------------------------------------------------------
# the process that runs specs


class RunnerHooks:
    """Watchdog, crash dump, leak snapshots and example counts around each spec."""

    def __init__(self, config: pytest.Config, backend: Callable[[], Any],
                 is_spec: Callable[[pytest.Item], bool],
                 hard_row: Callable[[str, str | None], None] | None) -> None:
        self.config = config
        self._backend = backend
        self._is_spec = is_spec
        self._hard_row = hard_row  # -n 0: write the TIMEOUT row before exiting
        timeout = float(config.getoption("--spec-timeout") or 0)
        self.timeout = timeout
        self.watchdog = Watchdog(timeout, self._hard) if timeout > 0 else None
        wi = getattr(config, "workerinput", None)
        self.iso_dir = Path(wi[_ISO_DIR]) if wi and wi.get(_ISO_DIR) else None
        self.worker = str(wi.get("workerid")) if wi else None
        #: fault dump (None in an own-process child: its stderr goes to the parent, which
        #: files it; and until :meth:`use_run_dir` in a ``-n 0`` run)
        self.dump: CrashDump | None = None
        if wi and wi.get(_CRASH_DIR) and not os.environ.get(OWN_PROCESS_ENV):
            self.dump = CrashDump(Path(wi[_CRASH_DIR]), self.worker or "worker")
            self.dump.enable()
        self._before: dict[str, int] | None = None
        self._counter: killstats.ExampleCounter | None = None
        self.state_check = not config.getoption("--no-state-check", False)
        #: the first state reading of this process, and the latest one (None after a
        #: non-spec test: the next spec reads again before it runs)
        self._baseline: global_state.Reading | None = None
        self._last: global_state.Reading | None = None

    def use_run_dir(self, report_dir: Path) -> None:
        """A ``-n 0`` run: dump faults to ``<report_dir>/crashes/main-<pid>.txt``."""
        if self.dump is None and not os.environ.get(OWN_PROCESS_ENV):
            self.dump = CrashDump(report_dir / CRASH_DIR, "main")
            self.dump.enable()

    # -- hard timeout ----------------------------------------------------------------------
    def hard_exit_code(self) -> int:
        """The exit status after a hard timeout: :data:`TIMEOUT_EXIT` in an xdist worker or
        an own-process child (whose controller or parent reports the spec as TIMEOUT and goes
        on), :data:`STOPPED_EXIT` in a ``-n 0`` run (the run itself stops: FAIL)."""
        if self.worker is not None or os.environ.get(OWN_PROCESS_ENV):
            return TIMEOUT_EXIT
        return STOPPED_EXIT

    def _hard(self, nodeid: str) -> None:
        code = self.hard_exit_code()
        msg = (f"mdlri: spec {nodeid} still running {2 * self.timeout:g} s after its "
               f"--spec-timeout; ending this process (exit {code})")
        try:
            stacks = None
            if self.dump is not None:
                self.dump.dump_now(msg)
                stacks = self.dump.relpath
            if self.iso_dir is not None:
                marker = self.iso_dir / f"timeout-{os.getpid()}.json"
                marker.write_text(json.dumps({"nodeid": nodeid, "timeout_s": self.timeout,
                                              "stacks": stacks}))
            elif self._hard_row is not None:
                self._hard_row(nodeid, stacks)
            if code == STOPPED_EXIT:  # the run ends without a summary: say why, once
                self._to_console(
                    f"\nmdlri: FAIL: {nodeid} still running {2 * self.timeout:g} s "
                    "after its --spec-timeout, stuck in native code; without worker "
                    f"isolation (-n 0) the run stops here, incomplete (exit {code})"
                    + (f"; stacks: {stacks}" if stacks else ""))
        finally:
            os._exit(code)

    def _to_console(self, line: str) -> None:
        """Write ``line`` to the real stderr: pytest's capture holds fd 2 during a spec."""
        capman = self.config.pluginmanager.get_plugin("capturemanager")
        try:
            if capman is not None:
                capman.suspend_global_capture(in_=False)
        except Exception:  # best effort: the process ends right after
            pass
        print(line, file=sys.stderr, flush=True)

    def _running_marker(self, item: pytest.Item) -> None:
        """Tell the controller what this worker runs (for a CRASH row's clauses/area)."""
        if self.iso_dir is None:
            return
        info = {"nodeid": item.nodeid, "worker": self.worker,
                "clauses": [c for m in item.iter_markers("clause") for c in m.args]}
        (self.iso_dir / f"running-{os.getpid()}.json").write_text(json.dumps(info))

    def _spec_done(self) -> None:
        """The spec ended normally: a death from here on is not inside it."""
        if self.iso_dir is not None:
            (self.iso_dir / f"running-{os.getpid()}.json").unlink(missing_ok=True)

    # -- hooks -----------------------------------------------------------------------------
    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.dump is not None:
            self.dump.enable()  # pytest's faulthandler plugin took stderr in its configure

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.dump is not None:
            self.dump.close()

    def _elsewhere(self, item: pytest.Item) -> bool:
        """The spec runs in an own-process child, not here."""
        return self.config.pluginmanager.get_plugin(_OWN) is not None \
            and item.get_closest_marker("own_process") is not None

    def _read_state(self) -> global_state.Reading | None:
        backend = self._backend()
        if not self.state_check or backend is None:
            return None
        return global_state.read(backend)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: Any) -> Iterator[None]:
        if not self._is_spec(item):
            self._last = None  # a test here may touch the runtime too: read afresh
            return (yield)
        if self._elsewhere(item):
            return (yield)  # OwnProcessHooks runs it in a child, which checks it
        self._running_marker(item)
        if self._last is None:
            self._last = self._read_state()
            if self._baseline is None:
                self._baseline = self._last
        self._before = leaks.snapshot(self._backend())
        if self.watchdog is not None:
            self.watchdog.arm(item.nodeid)
        try:
            return (yield)
        finally:
            if self.watchdog is not None:
                self.watchdog.disarm()
            self._spec_done()

    def _phase(self, item: pytest.Item) -> Iterator[None]:
        wd = self.watchdog if self._is_spec(item) else None
        if wd is not None:
            wd.inside(True)
        try:
            return (yield)
        finally:
            if wd is not None:
                wd.inside(False)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Iterator[None]:
        return (yield from self._phase(item))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        if not self._is_spec(item):
            return (yield)
        self._counter = killstats.ExampleCounter()
        self._counter.start()
        try:
            return (yield from self._phase(item))
        finally:
            self._counter.stop()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: Any) -> Iterator[None]:
        return (yield from self._phase(item))

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  call: pytest.CallInfo[None]) -> Iterator[pytest.TestReport]:
        rep = yield
        if not self._is_spec(item) or self._elsewhere(item):
            return rep
        info = dict(rep.user_properties).get(_KEY)
        if info is not None and call.excinfo is not None \
                and isinstance(call.excinfo.value, SpecTimeout):
            info["outcome"] = "TIMEOUT"
            info["message"] = (f"no result within --spec-timeout {self.timeout:g} s "
                               f"(interrupted in {rep.when})")
        if rep.when == "call" and self._counter is not None:
            stats = self._counter.result()
            self._counter = None
            if stats is not None:
                if "failed_at_example" in stats and call.excinfo is not None:
                    size = killstats.case_size(str(call.excinfo.value))
                    if size is not None:
                        stats["shrunk_tasks"] = size
                rep.user_properties.append((_STATS, stats))
        if rep.when == "teardown":
            before, self._before = self._before, None
            after = leaks.snapshot(self._backend())
            if before is not None and after is not None:  # else: not checked
                rep.user_properties.append((_LEAKS, leaks.diff(before, after)))
            state = self._state_after()
            if state is not None:
                rep.user_properties.append((_STATE, state))
        return rep

    def _state_after(self) -> dict[str, Any] | None:
        """The spec's ``"state"`` entry: what changed since the reading before it."""
        before, first = self._last, self._last is self._baseline
        if before is None or self._baseline is None:
            return None
        after = self._read_state()
        if after is None:
            return None
        out: dict[str, Any] = {"changed": global_state.changes(before, after)}
        if after.not_checked:
            out["not_checked"] = dict(after.not_checked)
        restored = global_state.restore(self._backend(), self._baseline, after)
        if restored:
            out["restored"] = restored
        if first:
            out["baseline"] = dict(self._baseline.values)
        self._last = after
        return out


# ---------------------------------------------------------------------------------------------
# the process that records results


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
        node.workerinput[_ISO_DIR] = str(self.iso_dir)
        node.workerinput[_CRASH_DIR] = str(self.crash_dir)

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
        if _STATS in props:
            self._merge(report.nodeid, "hypothesis", props[_STATS])
        if report.when == "teardown":
            extra = {k: props[p] for k, p in (("leaks", _LEAKS), ("state", _STATE)) if p in props}
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
        info = _row_info(crashitem, clauses, outcome, message)
        if stacks:
            info["stacks"] = stacks
        report.user_properties.append((_KEY, info))
        report.longrepr = f"{outcome}: {message}"

    def pytest_report_teststatus(self, report: pytest.TestReport) -> Any:
        """A CRASH, and a TIMEOUT that ended its process, is a category of its own
        (``2 crashed``, ``1 timed out`` in pytest's last line), not a failure with a section
        under FAILURES: it has no traceback, and its one line is the row's message in the
        gate summary. pytest still counts it failed (exit status, ``--maxfail``)."""
        info = dict(getattr(report, "user_properties", ())).get(_KEY)
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
        info = _row_info(nodeid, [], "TIMEOUT", msg + (f"; stacks: {stacks}" if stacks else ""))
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


def order_info(config: pytest.Config) -> dict[str, Any]:
    """``{"random": True, "seed": N}`` when pytest-randomly reorders the specs, else
    ``{"random": False}`` (with the seed it still resets ``random`` to, if it is active)."""
    if not config.pluginmanager.hasplugin("randomly"):
        return {"random": False}
    seed = config.getoption("randomly_seed", None)
    return {"random": bool(config.getoption("randomly_reorganize", True)), "seed": seed}


def _row_info(nodeid: str, clauses: list[str], outcome: str, message: str) -> dict[str, Any]:
    """The plugin's per-spec info for a spec whose process could not report itself."""
    from . import registry
    ids = [c for c in dict.fromkeys(clauses) if not registry.unknown((c,))]
    level = registry.level_of(tuple(ids)) if ids else "documented"
    stem = Path(nodeid.split("::")[0]).stem
    area = stem[len("test_"):] if stem.startswith("test_") else "other"
    return {"outcome": outcome, "clauses": ids, "level": level, "area": area,
            "message": message}


# ---------------------------------------------------------------------------------------------
# specs that run in a process of their own


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
                "mdlri_conformance.conformance.plugin",
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
            env = dict(os.environ, **{OWN_PROCESS_ENV: str(out)})
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
        runner = self.config.pluginmanager.get_plugin(_RUNNER)
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
            rep.user_properties = [(k, v) for k, v in rep.user_properties if k != _PROBE]
            info = dict(rep.user_properties).get(_KEY)
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
        info = {**_row_info(item.nodeid, clauses, outcome, message), "own_process": True}
        if where.startswith("; output: "):
            info["stacks"] = where[len("; output: "):]
        common = dict(nodeid=item.nodeid, location=item.location,
                      keywords={k: 1 for k in item.keywords}, sections=[])
        out = []
        if not any(r.when == "call" or r.failed for r in got):
            out.append(pytest.TestReport(**common, outcome="failed", when="call",
                                         longrepr=f"{outcome}: {message}", duration=elapsed,
                                         user_properties=[(_KEY, info)]))
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
    """The suite's options (plugin.py's option group) as given to this run, for a child;
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


# ---------------------------------------------------------------------------------------------
# wiring


_RUNNER = "mdlri-isolation-runner"
_RECORDER = "mdlri-isolation-recorder"
_OWN = "mdlri-own-process"
_CHILD = "mdlri-own-process-child"


def _register_marker(config: pytest.Config) -> None:
    if not any(str(m).startswith("own_process") for m in config.getini("markers")):
        config.addinivalue_line("markers", OWN_PROCESS_MARKER)


def configure_runner(config: pytest.Config, backend: Callable[[], Any],
                     is_spec: Callable[[pytest.Item], bool]) -> None:
    """Register the watchdog/leak/state/count hooks in a process that runs specs, and the
    own-process dispatch (or, in an own-process child, the report writer)."""
    _register_marker(config)
    pm = config.pluginmanager
    child_out = os.environ.get(OWN_PROCESS_ENV)
    if child_out and pm.get_plugin(_CHILD) is None:
        pm.register(ChildReporter(config, Path(child_out)), _CHILD)
    elif not child_out and pm.get_plugin(_OWN) is None:
        pm.register(OwnProcessHooks(config), _OWN)
    if pm.get_plugin(_RUNNER) is None:
        rec = pm.get_plugin(_RECORDER)
        hard_row = rec.hard_timeout_row if rec is not None else None
        pm.register(RunnerHooks(config, backend, is_spec, hard_row), _RUNNER)


def configure_recorder(config: pytest.Config, state: Any) -> None:
    """Register the row-holding/crash-mapping hooks in the process that records results."""
    _register_marker(config)
    if config.pluginmanager.get_plugin(_RECORDER) is None:
        rec = RecorderHooks(config, state)
        config.pluginmanager.register(rec, _RECORDER)
        runner = config.pluginmanager.get_plugin(_RUNNER)
        if runner is not None:  # -n 0: this process runs the specs too
            runner._hard_row = rec.hard_timeout_row
            runner.use_run_dir(Path(state.report_dir))


__all__ = ["DEFAULT_SPEC_TIMEOUT", "OWN_PROCESS_ENV", "STOPPED_EXIT", "SpecTimeout",
           "TIMEOUT_EXIT", "Watchdog", "add_options", "configure_recorder", "configure_runner",
           "order_info", "spec_timeout_value"]
