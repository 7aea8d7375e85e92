"""Crash and hang isolation, per-spec leak checks and Hypothesis counts.

A runtime under test may segfault, hang or leak. This module keeps one such spec from taking
the run down and reports it as an outcome of that spec:

* **CRASH** - the process running the spec died (a segfault inside a backend call, an
  ``abort()``...). Under pytest-xdist (``-n 1`` or more) the controller maps the crashed
  worker's current item to a CRASH row (``pytest_handlecrashitem``) and xdist starts a fresh
  worker, so every other spec still reports. Without xdist (``-n 0``) a crash ends pytest, as
  it always would: use ``-n 1`` for a runtime that may crash (``mdlri-conformance run``
  does by default).
* **Crash dumps** - :mod:`.crashdump`: every process that runs specs points
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
  finite number >= 1 is a usage error, :func:`.watchdog.spec_timeout_value`). A watchdog thread
  first raises :class:`.watchdog.SpecTimeout` in the spec's thread (enough for a hang in Python code,
  e.g. the simulator's waits); the spec's row becomes TIMEOUT and the run goes on. If the
  spec is still running ``--spec-timeout`` seconds later (stuck inside native code, e.g. a
  ``pthread_cond_wait`` of the emulator), the watchdog dumps every thread's stack to the
  process's crash dump and ends the process (:meth:`.runner_hooks.RunnerHooks.hard_exit_code`):

  - an xdist worker writes a marker naming the spec and exits with :data:`.watchdog.TIMEOUT_EXIT`
    (86); the controller turns that crash into a TIMEOUT row and xdist replaces the worker;
  - an own-process child exits with :data:`.watchdog.TIMEOUT_EXIT`, which its parent turns into the
    spec's TIMEOUT row;
  - a ``-n 0`` run writes the TIMEOUT row, says so in one console line (``mdlri: FAIL:
    ...``, naming the dump) and stops: the process exits with 1, FAIL (a TIMEOUT fails the
    gate, and a failure wins over the incomplete run, :mod:`.verdict`; ``report`` on
    the directory says the same). 86 never reaches the shell from ``mdlri-conformance``.
* **Leaks** - :mod:`.leaks`: live counts before setup and after teardown. When the
  backend reported both, the row gets ``"leaks"``: what grew, ``{}`` when nothing did; a
  backend that cannot count (no ``live_counts``) leaves the row without ``"leaks"``, so
  "nothing leaked" and "not checked" differ (:func:`.summary.leak_summary`).
* **Process-global state** - :mod:`.global_state`: read before the first spec of a
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
* **Examples** - :mod:`.killstats`: the Hypothesis test cases a spec ran and,
  for a failure, the example that first failed and the shrunk counterexample's size, in the
  row as ``"hypothesis"``.

Rows: the plugin's :class:`.recording.Recorder` writes a spec's row when the call
report arrives, before teardown; the controller part here holds each row back until the
spec's teardown report (or a crash report) has arrived, merges ``leaks``/``hypothesis`` into
it, and only then writes it to ``results.jsonl`` (all rows are flushed before the summary).

Wiring (two calls in plugin.py's ``pytest_configure``): :func:`configure_runner` in every
process that runs specs (an xdist worker or a ``-n 0`` run), :func:`configure_recorder` in
the process that records results.

The parts, one module each: :mod:`.watchdog` (``--spec-timeout``), :mod:`.runner_hooks` (the
process that runs specs), :mod:`.recorder_hooks` (the process that records results: held
rows, CRASH / TIMEOUT rows), :mod:`.own_process` (specs in a process of their own); this
module adds their options and registers them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import pytest

from . import keys, own_process
from .own_process import OWN_PROCESS_MARKER, ChildReporter, OwnProcessHooks
from .recorder_hooks import RecorderHooks
from .runner_hooks import RunnerHooks
from .watchdog import DEFAULT_SPEC_TIMEOUT, spec_timeout_option


def add_options(group: Any) -> None:
    """``--fault``, ``--spec-timeout`` and ``--no-state-check`` (called last from options.py's
    pytest_addoption, so ``group`` then holds every suite option)."""
    own_process.remember_options(group)
    group.addoption("--fault", action="append", default=[], metavar="NAME",
                    help="inject a catalogued runtime bug (backends/faults.py) into the "
                         "sim, or the acl emulator (--acl-lib emulator); repeatable")
    group.addoption("--spec-timeout", type=spec_timeout_option, default=DEFAULT_SPEC_TIMEOUT,
                    metavar="SECONDS",
                    help="watchdog per spec: TIMEOUT after this many seconds (0: off; "
                         f"default {DEFAULT_SPEC_TIMEOUT:g})")
    group.addoption("--no-state-check", action="store_true", default=False,
                    help="do not read the process-global runtime state (capture and exchange "
                         "modes, device, context, open captures) around each spec")


def order_info(config: pytest.Config) -> dict[str, Any]:
    """``{"random": True, "seed": N}`` when pytest-randomly reorders the specs, else
    ``{"random": False}`` (with the seed it still resets ``random`` to, if it is active)."""
    if not config.pluginmanager.hasplugin("randomly"):
        return {"random": False}
    seed = config.getoption("randomly_seed", None)
    return {"random": bool(config.getoption("randomly_reorganize", True)), "seed": seed}


def _register_marker(config: pytest.Config) -> None:
    if not any(str(m).startswith("own_process") for m in config.getini("markers")):
        config.addinivalue_line("markers", OWN_PROCESS_MARKER)


def configure_runner(config: pytest.Config, backend: Callable[[], Any],
                     is_spec: Callable[[pytest.Item], bool]) -> None:
    """Register the watchdog/leak/state/count hooks in a process that runs specs, and the
    own-process dispatch (or, in an own-process child, the report writer)."""
    _register_marker(config)
    pm = config.pluginmanager
    child_out = os.environ.get(keys.OWN_PROCESS_ENV)
    if child_out and pm.get_plugin(keys.CHILD_PLUGIN) is None:
        pm.register(ChildReporter(config, Path(child_out)), keys.CHILD_PLUGIN)
    elif not child_out and pm.get_plugin(keys.OWN_PLUGIN) is None:
        pm.register(OwnProcessHooks(config), keys.OWN_PLUGIN)
    if pm.get_plugin(keys.RUNNER_PLUGIN) is None:
        rec = pm.get_plugin(keys.RECORDER_PLUGIN)
        hard_row = rec.hard_timeout_row if rec is not None else None
        pm.register(RunnerHooks(config, backend, is_spec, hard_row), keys.RUNNER_PLUGIN)


def configure_recorder(config: pytest.Config, state: Any) -> None:
    """Register the row-holding/crash-mapping hooks in the process that records results."""
    _register_marker(config)
    if config.pluginmanager.get_plugin(keys.RECORDER_PLUGIN) is None:
        rec = RecorderHooks(config, state)
        config.pluginmanager.register(rec, keys.RECORDER_PLUGIN)
        runner = config.pluginmanager.get_plugin(keys.RUNNER_PLUGIN)
        if runner is not None:  # -n 0: this process runs the specs too
            runner._hard_row = rec.hard_timeout_row
            runner.use_run_dir(Path(state.report_dir))
