"""The isolation hooks of a process that runs specs (an xdist worker or a ``-n 0`` run):
the watchdog (:mod:`.watchdog`), the crash dump (:mod:`.crashdump`), live-resource snapshots
(:mod:`.leaks`), the process-global state reading and restore (:mod:`.global_state`) and the
Hypothesis example counts (:mod:`.killstats`) around each spec; what they find travels on
the spec's reports (:mod:`.keys`)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from . import global_state, keys, killstats, leaks
from .crashdump import CRASH_DIR, CrashDump
from .watchdog import STOPPED_EXIT, TIMEOUT_EXIT, SpecTimeout, Watchdog


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
        self.iso_dir = Path(wi[keys.ISO_DIR]) if wi and wi.get(keys.ISO_DIR) else None
        self.worker = str(wi.get("workerid")) if wi else None
        #: fault dump (None in an own-process child: its stderr goes to the parent, which
        #: files it; and until :meth:`use_run_dir` in a ``-n 0`` run)
        self.dump: CrashDump | None = None
        if wi and wi.get(keys.CRASH_DIR) and not os.environ.get(keys.OWN_PROCESS_ENV):
            self.dump = CrashDump(Path(wi[keys.CRASH_DIR]), self.worker or "worker")
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
        if self.dump is None and not os.environ.get(keys.OWN_PROCESS_ENV):
            self.dump = CrashDump(report_dir / CRASH_DIR, "main")
            self.dump.enable()

    # -- hard timeout ----------------------------------------------------------------------
    def hard_exit_code(self) -> int:
        """The exit status after a hard timeout: :data:`TIMEOUT_EXIT` in an xdist worker or
        an own-process child (whose controller or parent reports the spec as TIMEOUT and goes
        on), :data:`STOPPED_EXIT` in a ``-n 0`` run (the run itself stops: FAIL)."""
        if self.worker is not None or os.environ.get(keys.OWN_PROCESS_ENV):
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
        return self.config.pluginmanager.get_plugin(keys.OWN_PLUGIN) is not None \
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
        info = dict(rep.user_properties).get(keys.RESULT)
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
                rep.user_properties.append((keys.HYPOTHESIS, stats))
        if rep.when == "teardown":
            before, self._before = self._before, None
            after = leaks.snapshot(self._backend())
            if before is not None and after is not None:  # else: not checked
                rep.user_properties.append((keys.LEAKS, leaks.diff(before, after)))
            state = self._state_after()
            if state is not None:
                rep.user_properties.append((keys.STATE, state))
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
