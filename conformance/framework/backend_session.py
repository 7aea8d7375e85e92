"""The backend of a run's process: loading it at configure time, probing its capabilities,
the ``backend`` / ``against_backend`` fixtures, and UNSUPPORTED for a spec whose required
capabilities (marker ``requires``) it lacks.

Capabilities are probed when the backend starts, in every process that runs specs (each
xdist worker, or the ``-n 0`` process): :mod:`.probe` measures data movement, kernel
execution, blocking waits, pageable-memory detection, the never-timeout attribute, which API
families answer 207000 / 207019 and the cost of a first execution; the effective capabilities
replace the declared ones, and a spec requiring an absent one is UNSUPPORTED with the probe's
finding (``--no-probe`` trusts the declared capabilities). A probe that saw a wrong answer,
or took away a capability the backend promises, keeps the capability and fails the run's gate
(its findings travel to the summary with the first spec report). A backend's optional
``unsupported_reason(what)`` supplies the text of UNSUPPORTED outcomes (the whole backend
when ``what`` is None, else a capability).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import pytest

from mdlri_conformance.backends import kernel_layouts
from mdlri_conformance.backends.contract import Cap
from mdlri_conformance.kernel.layout import LayoutCheck

from . import keys, probe
from .backend_loader import (BackendLoadError, acl_options_problem, backend_options, find_factory,
                             load_backend)
from .items import is_spec
from .probe_session import Finding, Verdict


def is_xdist_controller(config: pytest.Config) -> bool:
    """True in the process that only distributes specs to pytest-xdist workers."""
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist"):
        return False
    return bool(config.getoption("numprocesses", None)) and \
        config.getoption("dist", "no") != "no"


def worker_id(config: pytest.Config) -> str | None:
    """The xdist worker id of this process (None outside a worker)."""
    return getattr(config, "workerinput", {}).get("workerid")


def configure_backend(config: pytest.Config) -> dict[str, Any]:
    """Check ``--against``, load the ``--backend`` in a process that runs specs (the xdist
    controller only checks its factory) and return the backend's options (usage errors are
    one line)."""
    name = config.getoption("--backend")
    against = config.getoption("--against")
    why = acl_options_problem(name, against, devices=config.getoption("--devices"),
                              acl_lib=config.getoption("--acl-lib"),
                              kernel_binary=config.getoption("--kernel-binary"),
                              virtual_device=config.getoption("--virtual-device"))
    if why:
        raise pytest.UsageError(why)
    if config.getoption("--virtual-device"):  # read where the runtime loads, in every process
        from mdlri_conformance.backends.acl.driver import VIRTUAL_DEVICE_VAR
        os.environ[VIRTUAL_DEVICE_VAR] = "1"
    if against:
        try:
            find_factory(against)
        except BackendLoadError as exc:
            raise pytest.UsageError(f"--against: {exc}") from None
    try:
        options = backend_options(name, acl_lib=config.getoption("--acl-lib"),
                                  kernel_binary=config.getoption("--kernel-binary"),
                                  devices=config.getoption("--devices"),
                                  worker=worker_id(config), faults=config.getoption("--fault"))
        if is_xdist_controller(config) or config.getoption("collectonly", False):
            # the workers create the backends; the controller needs none, nor does a
            # collection only (mdlri-conformance run counts the selected specs with one)
            find_factory(name)
        else:
            backend = config.stash[keys.backend_key] = load_backend(name, **options)
            config.stash[keys.stack_key] = {"process": worker_id(config) or "main",
                                            "stack": backend_stack(backend)}
    except BackendLoadError as exc:
        raise pytest.UsageError(str(exc)) from None
    return options


def backend_stack(backend: Any) -> dict[str, str]:
    """The stack under test as the backend names it (``stack()``: runtime, version, device),
    or its version alone for a backend that does not."""
    stack = getattr(backend, "stack", None)
    named = stack() if callable(stack) else None
    if isinstance(named, dict):  # a proxy's catch-all attribute answers something else
        return {str(k): str(v) for k, v in named.items()}
    return {"runtime": type(backend).__name__, "version": str(backend.version()),
            "device": "not reported by the backend"}


def current_backend(config: pytest.Config) -> Any:
    """This process's backend (None in an xdist controller)."""
    return config.stash.get(keys.backend_key, None)


def probe_backend(config: pytest.Config, process: str) -> None:
    """Measure the backend's capabilities and install the effective ones (:mod:`.probe`).

    The findings travel with the first spec report of this process to the process that
    records results (:class:`.recording.Recorder`)."""
    backend = config.stash[keys.backend_key]
    if config.getoption("--no-probe") or unsupported_reason(backend, None):
        return
    report = probe.run_probes(backend)
    report.findings.extend(layout_findings(backend))
    probe.apply(backend, report)
    config.stash[keys.probe_key] = {"process": process, "backend": getattr(backend, "name", "?"),
                                    **report.to_dict()}


def layout_findings(backend: Any) -> list[Finding]:
    """KRN-02: one finding per kernel whose reported layout has hidden trailing parameters
    that the backend follows (``kernel_layouts`` of the acl backend), so the run's probe
    findings show them; they remove no capability."""
    checks = getattr(backend, "kernel_layouts", None)
    if not isinstance(checks, list):  # a backend without layout checks (or a proxy's attribute)
        return []
    checks = [c for c in checks if isinstance(c, LayoutCheck)]
    return [Finding(Cap.KERNELS.value, "kernel_layout", Verdict.PRESENT.value, line, 0.0, True)
            for line in kernel_layouts.hidden_lines(checks)]


def close_backend(config: pytest.Config) -> None:
    """Release this process's backend (at unconfigure)."""
    backend = config.stash.get(keys.backend_key, None)
    if backend is not None:
        probe.forget(backend)
        backend.close()


def unsupported_reason(backend: Any, what: str | None) -> str | None:
    """The backend's own reason for something unsupported (``unsupported_reason`` extra)."""
    fn = getattr(backend, "unsupported_reason", None)
    why = fn(what) if callable(fn) else None
    return why if isinstance(why, str) else None


def pytest_runtest_setup(item: pytest.Item) -> None:
    if not is_spec(item):
        return
    backend = item.config.stash[keys.backend_key]
    whole = unsupported_reason(backend, None)
    if whole:
        item.stash[keys.unreached_key] = True
        pytest.skip(f"UNSUPPORTED: {backend.name} backend: {whole}")
    missing = [Cap(c) for m in item.iter_markers("requires") for c in m.args
               if Cap(c) not in backend.capabilities]
    if missing:
        item.stash[keys.missing_key] = [c.value for c in dict.fromkeys(missing)]
        why = "; ".join(r for r in (probe.reason(backend, c) for c in dict.fromkeys(missing))
                        if r)
        pytest.skip(f"UNSUPPORTED: backend {backend.name!r} lacks "
                    f"{', '.join(c.value for c in missing)}" + (f" ({why})" if why else ""))


@pytest.fixture(scope="session")
def backend(request: pytest.FixtureRequest) -> Any:
    """The backend under test (one per process)."""
    return request.config.stash[keys.backend_key]


@pytest.fixture(scope="session")
def against_backend(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The second backend of a differential run (``--against``)."""
    name = request.config.getoption("--against")
    try:
        other = load_backend(name, **backend_options(
            name, acl_lib=request.config.getoption("--acl-lib"),
            kernel_binary=request.config.getoption("--kernel-binary"),
            devices=request.config.getoption("--devices"), worker=worker_id(request.config)))
    except BackendLoadError as exc:
        pytest.exit(str(exc), returncode=pytest.ExitCode.USAGE_ERROR)
    if not request.config.getoption("--no-probe") and not unsupported_reason(other, None):
        probe.apply(other, probe.run_probes(other))
    yield other
    probe.forget(other)
    other.close()


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The differential specs are collected only for ``--against`` runs."""
    if collection_path.name == "test_differential.py" and not config.getoption("--against"):
        return True
    return None
