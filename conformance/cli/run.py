"""``mdlri-conformance run``: check every input before pytest starts (one line, exit 2),
then run the specs in a pytest subprocess and map its end to the verdict's exit code."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..framework.backend_loader import (BackendLoadError, acl_options_problem, backend_options,
                                        parse_devices, preflight, resolve)
from ..framework.items import SPEC_DIR, bad_expression
from . import workers as worker_count
from .common import PROG, at_least_one, read_summary, shipped, usage_error

if TYPE_CHECKING:
    import pytest

def _acl_args(ns: argparse.Namespace) -> list[str]:
    """The acl options forwarded to pytest."""
    args: list[str] = []
    for opt, value in (("--acl-lib", ns.acl_lib), ("--kernel-binary", ns.kernel_binary),
                       ("--devices", ns.devices)):
        if value:
            args += [opt, str(value)]
    return args + (["--virtual-device"] if getattr(ns, "virtual_device", False) else [])


def workers(text: str) -> str:
    """``-n``: a worker count >= 0, or ``auto`` / ``logical`` (argparse type)."""
    if text in ("auto", "logical"):
        return text
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: use a number of workers >= 0, or auto")
    return str(n)


def _bad_pytest_args(args: list[str]) -> str | None:
    """Why pytest would refuse the extra arguments given after ``--`` (its error line), None
    when it takes them; parsed here so the refusal is one line, not pytest's usage block."""
    import pytest
    try:
        from _pytest.config import _prepareconfig
    except ImportError:  # pytest moved it: pytest reports it itself
        return None
    try:
        # --noconftest: the specs' conftest imported here, before the run's own pytest in
        # this process, would come too early for pytest's assertion rewriting there
        config = _prepareconfig([str(SPEC_DIR), "-p",
                                 "mdlri_conformance.conformance.framework.plugin",
                                 "--noconftest", *args])
    except pytest.UsageError as exc:
        lines = [ln.strip() for ln in str(exc).splitlines() if "error:" in ln]
        return lines[0].split("error:", 1)[1].strip() if lines else str(exc).strip()
    except SystemExit:  # --help, --version: pytest printed it
        return None
    except ImportError as exc:  # -p NAME that cannot be imported
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    config._ensure_unconfigure()
    return None


keep_runs = at_least_one("keep at least 1 run")


def backend_ready(ns: argparse.Namespace) -> int | None:
    """None when ``--backend`` (with ``--against``, the acl options and the faults) can run
    specs; else its exit code, after one line: 2 bad input, 3 NOTHING TESTED."""
    from ..framework.verdicts import verdict
    try:
        resolve(ns.backend)
        if getattr(ns, "against", None):
            resolve(ns.against)
        options = backend_options(ns.backend, devices=ns.devices, acl_lib=ns.acl_lib,
                                  faults=ns.fault)
        unavailable = preflight(ns.backend, options, devices=parse_devices(ns.devices),
                                lib=ns.acl_lib, kernel_binary=ns.kernel_binary)
        if unavailable is None and getattr(ns, "against", None):
            # the second backend of a differential run, up front too: else the run meets it
            # only in its last specs, minutes later
            against = preflight(ns.against, backend_options(ns.against, devices=ns.devices,
                                                            acl_lib=ns.acl_lib),
                                devices=parse_devices(ns.devices), lib=ns.acl_lib,
                                kernel_binary=ns.kernel_binary)
            if against:
                print(f"{PROG}: NOTHING TESTED: --against {ns.against}: {against}",
                      file=sys.stderr)
                return verdict.EXIT_CODES[verdict.NOTHING_TESTED]
    except BackendLoadError as exc:
        return usage_error(str(exc))
    if unavailable:  # no process could load it: every spec would be UNSUPPORTED
        print(f"{PROG}: NOTHING TESTED: {ns.backend} backend: {unavailable}", file=sys.stderr)
        return verdict.EXIT_CODES[verdict.NOTHING_TESTED]
    return None


class _CliTap:
    """The plugin object ``run`` hands to pytest: usage errors inside the run read
    ``mdlri-conformance: error: ...`` (options.py), the seed of a random order is printed at
    the top even under ``-q``, and the verdict is kept in memory (a full disk may leave no
    summary.json to read it back from)."""

    mdlri_cli = True  # keys.CLI_ATTR

    def __init__(self) -> None:
        self.verdict: dict[str, Any] | None = None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        from ..framework import isolation, recording
        if recording.run_state(session.config) is None:
            return  # an xdist worker: the controller prints it
        order = isolation.order_info(session.config)
        if order.get("random") and order.get("seed") is not None:
            print(f"Using --randomly-seed={order['seed']}", flush=True)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        from ..framework import recording
        state = recording.run_state(config)
        summary = getattr(state, "summary", None)
        if isinstance(summary, dict) and "verdict" in summary:
            self.verdict = summary["verdict"]


def cmd_run(ns: argparse.Namespace) -> int:
    from ..framework import rundir
    from ..framework.fleet import shard
    why = acl_options_problem(ns.backend, ns.against, devices=ns.devices, acl_lib=ns.acl_lib,
                              kernel_binary=ns.kernel_binary, virtual_device=ns.virtual_device)
    if why:
        return usage_error(why)
    if ns.shard:
        try:
            shard.parse(ns.shard)
        except shard.ShardError as exc:
            return usage_error(str(exc))
    refused = backend_ready(ns)
    if refused is not None:
        return refused
    report_dir = Path(ns.report_dir) if ns.report_dir else (
        Path("reports") / "out" / (time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"))
    why = bad_expression(ns.keyword) if ns.keyword else None
    if why:
        return usage_error(f"-k {ns.keyword!r}: {why}")
    from ..framework.conflicts import check_args
    why = check_args(ns)
    if why:
        return usage_error(why)
    why = _bad_pytest_args(ns.pytest_args) if ns.pytest_args else None
    if why:
        return usage_error(f"pytest arguments after --: {why}")
    if ns.expectations:
        from ..framework.verdicts import known
        ns.expectations = str(shipped(ns.expectations, "mdlri_conformance.conformance.framework",
                                       "expectations", ".toml"))
        try:
            known.load(ns.expectations, known.known_ids(SPEC_DIR), backend=ns.backend)
        except known.ExpectationsError as exc:
            return usage_error(str(exc))
    try:
        rundir.claim(report_dir)
    except rundir.RunDirError as exc:
        return usage_error(str(exc))
    # rootdir: the folder above conformance/, so node ids read conformance/specs/... whether the
    # suite is a checkout or an installed wheel (expectations, shards and merges compare them)
    # pytest-benchmark, when installed, warns once per xdist worker; no spec uses it
    base = [str(SPEC_DIR), "--rootdir", str(SPEC_DIR.parent.parent), "-p", "no:benchmark",
            "-p", "mdlri_conformance.conformance.framework.plugin", "--backend", ns.backend,
            "--profile", ns.profile, *_acl_args(ns)]
    selection = ((["--against", ns.against] if ns.against else [])
                 + (["-k", ns.keyword] if ns.keyword else [])
                 + (["--shard", ns.shard] if ns.shard else []) + list(ns.pytest_args))
    chosen = worker_count.choose(ns, base + selection)
    if isinstance(chosen, str):
        _tidy(report_dir, None)
        return usage_error(chosen)
    n_workers, line = chosen
    if line:
        print(line, flush=True)
    args = [*base, "--report-dir", str(report_dir),
            "--junitxml", str(report_dir / "junit.xml"),
            "-o", "junit_family=xunit1", "-q", "-rfE", "--tb=short"]
    if ns.allure:
        args += ["--alluredir", str(report_dir / "allure-results")]
    else:
        args += ["-p", "no:allure_pytest"]
    if ns.expectations:
        args += ["--expectations", ns.expectations]
    if ns.gate != "default":
        args += ["--gate", ns.gate]
    if ns.against:
        args += ["--against", ns.against]
    for name in ns.fault or ():  # injected runtime bugs
        args += ["--fault", name]
    if ns.spec_timeout is not None:
        args += ["--spec-timeout", str(ns.spec_timeout)]
    # specs never run in this process by default: a crash is then one spec's CRASH row, and
    # an emulator fault is read by a freshly loaded library
    args += ["-n", str(n_workers)]
    if ns.keyword:
        args += ["-k", ns.keyword]
    if ns.shard:
        args += ["--shard", ns.shard]
    args += ns.pytest_args
    import pytest
    tap = _CliTap()
    code = int(pytest.main(args, plugins=[tap]))
    result = _run_exit(code, report_dir, ns, tap.verdict)
    _tidy(report_dir, ns.keep_runs)
    return result


def _run_exit(code: int, report_dir: Path, ns: argparse.Namespace,
              final: dict[str, Any] | None = None) -> int:
    """The exit code of ``run``: the run's verdict (kept in memory, else summary.json's), or
    pytest's status mapped when the run wrote none (no spec was selected, a usage error, an
    interruption before any spec)."""
    from ..framework.verdicts import verdict
    if code == 4:  # pytest's usage error: it printed the line
        return verdict.USAGE_EXIT
    if final is not None:
        return int(final["exit_code"])
    summary = read_summary(report_dir)
    if summary is not None and "verdict" in summary:
        return int(summary["verdict"]["exit_code"])
    if code in (2, 3):  # interrupted, internal error: before any row was written
        print(f"{PROG}: INCOMPLETE: the run stopped before any spec reported "
              f"(pytest exit {code})", file=sys.stderr)
        return verdict.EXIT_CODES[verdict.INCOMPLETE]
    if code == 1:
        return verdict.EXIT_CODES[verdict.FAIL]
    why = f"no spec matches -k {ns.keyword!r}" if ns.keyword else "no spec was selected"
    print(f"{PROG}: NOTHING TESTED: {why}", file=sys.stderr)
    return verdict.EXIT_CODES[verdict.NOTHING_TESTED]


def _tidy(report_dir: Path, keep: int | None) -> None:
    """Remove the report directory if the run left it empty (or only a junit.xml with no
    spec); keep the newest ``keep`` runs beside it."""
    from ..framework import rundir
    if not rundir.holds_run(report_dir):
        for leftover in ("junit.xml",):
            (report_dir / leftover).unlink(missing_ok=True)
        try:
            report_dir.rmdir()
        except OSError:
            pass
    if keep:
        for old in rundir.prune(report_dir.parent, keep, current=report_dir):
            print(f"removed old run {old}")
