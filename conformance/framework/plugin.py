"""The pytest plugin of the suite (the ``pytest11`` entry point): its job modules, and the
order in which they start a run.

Options: ``--backend`` (``sim``, ``acl`` or ``package.module:factory``), ``--profile``,
``--report-dir``; for ``acl`` also ``--acl-lib PATH|emulator``, ``--kernel-binary`` and
``--devices 0,1,...`` (xdist worker k binds ``devices[k % len]``). Markers: ``clause(*ids)``
(required on every spec), ``requires(*caps)``.

The jobs, one module each (listed in ``pytest_plugins``, so pytest registers them with this
module): :mod:`.options` (the command line), :mod:`.backend_session` (loading and probing the
backend, its fixtures, UNSUPPORTED for missing capabilities), :mod:`.markers` (every spec
cites known clauses), :mod:`.outcome_map` (pytest results -> PASS / FAIL / CHANGED /
UNSUPPORTED / ERROR), :mod:`.recording` (``results.jsonl`` row by row, expectations, the
``fingerprint`` fixture) and :mod:`.reporting` (summary, artefacts, exit status, console);
:mod:`.profiles` holds the Hypothesis profiles, :mod:`.isolation` the watchdog, crash, leak
and state checks, :mod:`.verdicts.allure_labels` and :mod:`.verdicts.junit` the labels of
those reports, :mod:`.write_guard` the end of a run whose report directory could not be
written.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from . import isolation, keys
from .backend_loader import BackendLoadError, parse_devices, preflight
from .fleet import shard
from .items import is_spec
from .profiles import load_hypothesis_profile
from .verdicts import allure_labels, junit

pytest_plugins = [
    "mdlri_conformance.conformance.framework.options",
    "mdlri_conformance.conformance.framework.backend_session",
    "mdlri_conformance.conformance.framework.markers",
    "mdlri_conformance.conformance.framework.outcome_map",
    "mdlri_conformance.conformance.framework.recording",
    "mdlri_conformance.conformance.framework.reporting",
    "mdlri_conformance.conformance.framework.shrinking",
    "mdlri_conformance.conformance.framework.write_guard",
]


def pytest_configure(config: pytest.Config) -> None:
    # the job modules are imported by pytest itself (pytest_plugins), before this runs; an
    # import of them at the top here would come first and defeat pytest's import of them
    from . import backend_session, markers, recording
    for module, name in ((allure_labels, "mdlri-allure-labels"), (junit, "mdlri-junit")):
        if not config.pluginmanager.is_registered(module):
            config.pluginmanager.register(module, name)
    report_dir = config.getoption("--report-dir")
    if report_dir and Path(report_dir).exists() and not Path(report_dir).is_dir():
        raise pytest.UsageError(f"--report-dir {report_dir}: exists and is not a directory")
    shard.configure(config, lambda: recording.run_state(config))
    markers.register(config)
    load_hypothesis_profile(config.getoption("--profile"), config.getoption("--hypothesis-db"))
    name = config.getoption("--backend")
    options = backend_session.configure_backend(config)
    controller = backend_session.is_xdist_controller(config)
    collect_only = bool(config.getoption("collectonly", False))
    if not controller and not collect_only:
        # watchdog, crash dump, leaks, example counts; before the probes, so that a worker
        # crashing in a probe leaves its stacks in the run's crashes/ too
        isolation.configure_runner(config, lambda: backend_session.current_backend(config),
                                   is_spec)
        backend_session.probe_backend(config, backend_session.worker_id(config) or "main")
    if hasattr(config, "workerinput"):
        return  # xdist worker: the controller records results
    # a child's parent checked already, and so did mdlri-conformance run; a -n 0 process has
    # loaded the backend of the first device only: every id of --devices is checked here too
    if not os.environ.get(keys.OWN_PROCESS_ENV) and not keys.under_cli(config) \
            and not collect_only:
        try:
            preflight(name, options, devices=parse_devices(config.getoption("--devices")),
                      kernel_binary=config.getoption("--kernel-binary"),
                      lib=config.getoption("--acl-lib"))
        except BackendLoadError as exc:
            raise pytest.UsageError(str(exc)) from None
    state = recording.start_recording(config, name, backend_session.current_backend(config))
    isolation.configure_recorder(config, state)  # CRASH/TIMEOUT rows, leaks


def pytest_unconfigure(config: pytest.Config) -> None:
    from . import backend_session, recording
    backend_session.close_backend(config)
    recording.stop_recording(config)
