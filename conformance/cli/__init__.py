"""The ``mdlri-conformance`` command line: ``run`` the suite, run an ``example`` scenario,
``replay`` a task-graph case file against the oracle, ``doctor`` the acl backend, ``kernels
build`` the Ascend C kernels, ``report`` and ``diff`` run directories.

Exit codes (:mod:`conformance.verdict`), and no others:

* 0 PASS: specs exercised the backend and none failed the gate;
* 1 FAIL: the gate failed;
* 2 a usage or input error: one line on stderr, never a traceback;
* 3 NOTHING TESTED: the backend could not be loaded or built, or every selected spec was
  UNSUPPORTED or deselected;
* 4 INCOMPLETE: the run was interrupted (SIGINT, SIGTERM), stopped outside a spec, or
  collected specs never ran.
"""

from __future__ import annotations

import argparse
import os
from typing import Callable, NoReturn, Sequence

from ..framework.watchdog import spec_timeout_value
from .commands import (DATA_PLANE, cmd_diff, cmd_doctor, cmd_example, cmd_kernels_build,
                       cmd_replay, cmd_report)
from .common import PROG
from .pipes import guard_stdout
from .run import cmd_run, keep_runs, workers


def _add_acl_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--acl-lib", help="acl: libacl_rt.so path or directory, or 'emulator' "
                                     "(default: $MDLRI_ACL_LIB, then discovery)")
    p.add_argument("--kernel-binary", help="acl: the catalog kernels' binary")
    p.add_argument("--devices", help="acl: device ids, e.g. 0,1,2,3 (xdist worker k binds "
                                     "devices[k %% len])")
    p.add_argument("--virtual-device", action="store_true",
                   help="acl with a real CANN runtime: load the project's virtual Ascend "
                        "device (backends/hal) in place of the NPU driver, in every process; "
                        "sets $MDLRI_VIRTUAL_DEVICE=1")
    p.add_argument("--kernel-layout", choices=("follow", "strict"),
                   help="acl: hidden trailing kernel parameters (a compiler's workspace, "
                        "tiling or sync address after the catalog fields) are followed "
                        "(default) or refused (strict); sets $MDLRI_KERNEL_LAYOUT")


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error in one line (the usage itself is behind --help), under
    the one prefix of every usage error, ``mdlri-conformance: error:``, for a subcommand too."""

    def error(self, message: str) -> "NoReturn":  # type: ignore[override]
        self.exit(2, f"{PROG}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Conformance suite for the CANN Model RI API.")
    sub = p.add_subparsers(dest="cmd", required=True)

    run = sub.add_parser("run", help="run the conformance suite on a backend",
                         description="Run the specs; print a per-area summary; write results "
                                     "(results.jsonl, summary.json, junit.xml, allure-results) "
                                     "under the report directory.")
    run.add_argument("--backend", default="sim",
                     help="sim (default), acl or package.module:factory")
    _add_acl_options(run)
    run.add_argument("--report-dir", help="default: reports/out/<run-id>")
    run.add_argument("--against", metavar="BACKEND",
                     help="differential run: also replay the generated graphs on BACKEND and "
                          "record every difference")
    run.add_argument("--expectations", metavar="FILE",
                     help="known divergences and required capabilities (TOML): a path, or the "
                          "name of a shipped file: sim, acl-emulator, cann-681ef76, atlas-a2, "
                          "atlas-a3")
    run.add_argument("--gate", default="default", choices=("default", "strict"),
                     help="strict: a CHANGED that the expectations file does not accept fails "
                          "the gate (driver upgrades); default: only documented behaviour does")
    run.add_argument("--profile", default="ci", choices=("ci", "dev", "deep", "hw"))
    run.add_argument("-n", "--workers", type=workers,
                     help="parallel workers (pytest-xdist), e.g. 2 or auto (default 1: the "
                          "specs run in a worker process, so a crash is a CRASH row; 0 runs "
                          "them in this process, where a crash ends the run)")
    run.add_argument("-k", dest="keyword", help="only specs matching this pytest -k expression")
    run.add_argument("--fault", action="append", metavar="NAME",
                     help="inject a catalogued bug (backends/faults.py) into the sim or the "
                          "acl emulator; repeatable")
    run.add_argument("--spec-timeout", type=spec_timeout_value, metavar="SECONDS",
                     help="per-spec watchdog: TIMEOUT after this long (default 60; 0: off; "
                          "else at least 1)")
    run.add_argument("--allure", action="store_true",
                     help="also write Allure results (allure-results/, about 2,400 files)")
    run.add_argument("--shard", metavar="K/N",
                     help="run only shard K of N (1-based): the same split on every machine, "
                          "balanced by recorded durations; merge the shards with 'merge'")
    run.add_argument("--keep-runs", type=keep_runs, metavar="N",
                     help="afterwards, remove all but the newest N run directories beside "
                          "this one")
    run.add_argument("pytest_args", nargs=argparse.REMAINDER,
                     help="extra pytest arguments after --")
    run.set_defaults(func=cmd_run)

    ex = sub.add_parser("example", help="run a CANN example scenario and print its lines",
                        description="Reproduce a CANN example end to end through the contract.")
    ex.add_argument("name", help="scenario name, e.g. fallback")
    ex.add_argument("--backend", default="sim",
                    help="sim (default), acl or package.module:factory")
    _add_acl_options(ex)
    ex.set_defaults(func=cmd_example)

    doc = sub.add_parser("doctor", help="what the acl backend finds on this machine",
                         description="Find the ACL library and probe it in a subprocess: "
                                     "path, version, SoC, device count, what is missing.")
    _add_acl_options(doc)
    doc.set_defaults(func=cmd_doctor)

    kn = sub.add_parser("kernels", help="the catalog kernels for Ascend hardware",
                        description="Build the Ascend C catalog kernels (kernel/ascendc/).")
    knsub = kn.add_subparsers(dest="kernels_cmd", required=True)
    kb = knsub.add_parser("build", help="build the kernels fatbin into the kernels cache",
                          description="cmake-build kernel/ascendc/ with CANN's ascendc.cmake and "
                                      "copy the fatbin to <cache>/kernels/<soc>/mdlri_kernels.o "
                                      "(needs ASCEND_HOME_PATH: source CANN's set_env.sh).")
    kb.add_argument("--soc", help="SoC name, e.g. Ascend910B3 (default: $SOC_VERSION, then "
                                  "aclrtGetSocName)")
    kb.add_argument("--output", help="directory for mdlri_kernels.o (default: the kernels cache; "
                                     "elsewhere, pass --kernel-binary to run)")
    kb.set_defaults(func=cmd_kernels_build)

    df = sub.add_parser("diff", help="what changed between two runs, per clause",
                        description="Compare two report directories: new failures, fixes, "
                                    "changed behaviours and fingerprint changes, per clause. "
                                    "Exit 1 when B has new failures, else 4 when either run "
                                    "is incomplete (only the specs both recorded are "
                                    "compared), else 0.")
    df.add_argument("run_a", help="report directory of the earlier run")
    df.add_argument("run_b", help="report directory of the later run")
    df.add_argument("--stacks", action="store_true",
                    help="also compare the two runs' stacks, A the baseline: the outcome "
                         "transition matrix (A outcome -> B outcome, counts), how many rows "
                         "moved from UNSUPPORTED or from an uninformative PASS to a real "
                         "verdict, and the data-plane clauses B confirms and A does not. "
                         f"Data plane: the probed capabilities {', '.join(DATA_PLANE)}. A run shows a capability when every probing "
                         "process recorded it present (probe.json). A spec's needs are the "
                         "capabilities it declares or was found lacking while it ran (the "
                         "'needs' and 'missing' of its row in either run). "
                         "Uninformative PASS (PASS*): a PASS whose spec needs a data-plane "
                         "capability its run did not show. Real verdict: PASS (not "
                         "uninformative), FAIL, CHANGED, XFAIL or XPASS. A data-plane clause "
                         "is confirmed by an informative PASS of a spec that needs a "
                         "data-plane capability. Exit codes are unchanged.")
    df.set_defaults(func=cmd_diff)

    rep = sub.add_parser("report", help="(re)build a run's reports from its results.jsonl",
                         description="Write summary.json, summary.md, divergences.json and "
                                     "index.html for a run directory.")
    rep.add_argument("run_dir", nargs="?", help="a report directory written by 'run'")
    rep.add_argument("--allure-html", action="store_true",
                     help="also build the Allure 3 HTML report (after --install-allure; needs "
                          "Node.js, no network)")
    rep.add_argument("--install-allure", action="store_true",
                     help="install the pinned Allure 3 package (npm, needs the registry once)")
    rep.set_defaults(func=cmd_report)

    rp = sub.add_parser("replay", help="replay a task-graph case (JSON) against the oracle",
                        description="Replay CASE.json on a backend without Hypothesis; print "
                                    "'conforms' or the first differing observation.")
    rp.add_argument("case", help="a case JSON file, or the name of a shipped case "
                                 "(seed-fallback, fork-join-3-streams-disable, ...)")
    rp.add_argument("--backend", default="sim",
                    help="sim (default), acl or package.module:factory")
    _add_acl_options(rp)
    rp.add_argument("--fault", action="append", metavar="NAME",
                    help="replay with this planted fault, on the simulator or the acl "
                         "emulator (repeatable)")
    rp.set_defaults(func=cmd_replay)

    from ..framework.power.killmatrix import add_parser as add_faults_parser
    add_faults_parser(sub)  # `faults`: the kill matrix
    from ..framework.fleet.merge import add_parser as add_merge_parser
    add_merge_parser(sub)
    from .deep import add_parser as add_deep_parser
    add_deep_parser(sub, _add_acl_options)  # `deep`: coverage-guided campaigns
    from .mutate import add_parser as add_mutate_parser
    add_mutate_parser(sub)  # `mutate`: mutation testing of the simulator
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed its one-line usage error
        return int(exc.code or 0) and 2
    if getattr(ns, "pytest_args", None) and ns.pytest_args[:1] == ["--"]:
        ns.pytest_args = ns.pytest_args[1:]
    if getattr(ns, "kernel_layout", None):  # every process of the command reads it
        os.environ["MDLRI_KERNEL_LAYOUT"] = ns.kernel_layout
    if getattr(ns, "virtual_device", False):  # likewise: where a process loads the runtime
        os.environ["MDLRI_VIRTUAL_DEVICE"] = "1"
    func: Callable[[argparse.Namespace], int] = ns.func
    if argv is None:  # the command line itself (not a caller's own argv): see cli.pipes
        guard_stdout()
    return func(ns)
