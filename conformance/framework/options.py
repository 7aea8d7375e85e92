"""The suite's command-line options (group ``mdlri``) and the check that refuses options
contradicting each other before any plugin acts on them."""

from __future__ import annotations

import os
import sys
from collections.abc import Generator
from typing import Any

import pytest

from . import conflicts, isolation, keys
from .fleet import shard


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
    g.addoption("--virtual-device", action="store_true", default=False,
                help="acl backend with a real CANN runtime: load the project's virtual Ascend "
                     "device (backends/hal) in place of the NPU driver; sets "
                     "$MDLRI_VIRTUAL_DEVICE=1")
    g.addoption("--devices", default=None,
                help="acl backend: device ids, e.g. 0,1,2,3; xdist worker k binds "
                     "devices[k %% len] (default: 0)")
    g.addoption("--gate", default="default", choices=("default", "strict"),
                help="strict: a CHANGED that the expectations file does not accept fails the "
                     "gate (a behaviour change in a new release stops the pipeline)")
    g.addoption("--no-probe", action="store_true", default=False,
                help="trust the backend's declared capabilities instead of probing them at "
                     "backend start (debugging only)")
    isolation.add_options(g)  # --fault, --spec-timeout, --no-state-check
    shard.add_options(g)  # --shard, --shard-durations


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Generator[None, Any, Any]:
    """Options that contradict each other are refused in one line, before any plugin acts on
    them (Hypothesis reads its profile in its own pytest_configure); a wrapper, so it comes
    before xdist's own option handling."""
    try:
        conflicts.check(config)
        _check_workers(config)
        _default_dist(config)
        return (yield)
    except pytest.UsageError as exc:
        if not keys.under_cli(config):
            raise  # plain pytest: its own "ERROR: ..." line
        print(f"mdlri-conformance: error: {exc}", file=sys.stderr)
        return pytest.ExitCode.USAGE_ERROR


def _check_workers(config: pytest.Config) -> None:
    """``-n`` below 0 is refused (xdist takes it and every spec then errors with a
    KeyError); ``mdlri-conformance run`` refuses it before pytest starts."""
    n = getattr(config.option, "numprocesses", None)
    if isinstance(n, int) and n < 0:
        raise pytest.UsageError(f"-n {n}: use a number of workers >= 0, or auto")


def _default_dist(config: pytest.Config) -> None:
    """With ``-n N`` and no ``--dist``, xdist hands out the specs in fixed chunks (``load``):
    the few long generated and stateful items then pile up on one worker at the end. Work
    stealing evens the workers out; an explicit ``--dist`` is kept."""
    if not config.pluginmanager.hasplugin("xdist") or not getattr(config.option,
                                                                  "numprocesses", None):
        return
    given = [*config.invocation_params.args, *os.environ.get("PYTEST_ADDOPTS", "").split(),
             *config.getini("addopts")]
    if any(str(a) == "-d" or str(a).startswith("--dist") for a in given):
        return
    if config.option.dist == "no":
        config.option.dist = "worksteal"
