"""``mdlri-conformance deep``: a coverage-guided campaign (HypoFuzz) over the generated tier
and the stateful machine, bounded in time (:mod:`conformance.framework.power.campaign`), on every
available core (``-j``: one fuzzing process per core, each with its share of the specs).

After the campaign every kept task-graph case is replayed here without Hypothesis, on a
fresh backend with the same faults: a case is kept in the cases folder only when it still
differs from the oracle there (``replays``). The cases folder is the shipped
``conformance/cases/`` (replayed by the generated tier on every run) unless ``--fault``
planted the bug, whose cases stay in the campaign folder; ``--cases-dir`` chooses another.

Exit codes: 0 nothing failed, 1 failures found, 2 usage error, 3 nothing fuzzed,
4 incomplete.
"""

from __future__ import annotations

import argparse
import importlib.resources
import importlib.util
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from ..framework.backend_loader import backend_options
from ..framework.items import bad_expression
from .common import PROG, at_least_one, one_line, usage_error
from .run import backend_ready


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value != value or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: use a positive number")
    return value


_jobs = at_least_one("use a whole number of at least 1")


def add_parser(sub: Any, acl_options: Any) -> None:
    """Register ``deep`` on the command line's subparsers."""
    p = sub.add_parser("deep", help="coverage-guided fuzzing campaign (HypoFuzz), bounded in time",
                       description="Fuzz the generated task graphs and the stateful machine "
                                   "with HypoFuzz against one backend; report graphs per "
                                   "minute, branches reached in the simulator and the emulator, "
                                   "and keep every failure as a case that replays.")
    p.add_argument("--backend", default="sim", help="sim (default), acl or package.module:factory")
    acl_options(p)
    when = p.add_mutually_exclusive_group()
    when.add_argument("--minutes", type=_positive, help="fuzzing time (default 10)")
    when.add_argument("--seconds", type=_positive, help="fuzzing time in seconds")
    p.add_argument("--out", help="campaign folder (default: reports/deep/<time>-<pid>); "
                                 "must be new or empty")
    p.add_argument("-j", "--jobs", type=_jobs,
                   help="fuzzing processes, one per core, each fuzzing its share of the specs "
                        "(default: the cores available)")
    p.add_argument("-k", dest="keyword", help="only specs matching this pytest -k expression")
    p.add_argument("--fault", action="append", metavar="NAME",
                   help="inject a catalogued bug into the sim or the acl emulator; repeatable")
    p.add_argument("--cases-dir", help="where replaying cases are kept (default: "
                                       "conformance/cases/, or the campaign folder with --fault)")
    p.set_defaults(func=cmd_deep)


def cmd_deep(ns: argparse.Namespace) -> int:
    from ..framework.power import campaign
    refused = backend_ready(ns)
    if refused is not None:
        return refused
    why = bad_expression(ns.keyword) if ns.keyword else None
    if why:
        return usage_error(f"-k {ns.keyword!r}: {why}")
    missing = [m for m in ("hypofuzz", "coverage") if importlib.util.find_spec(m) is None]
    if missing:
        return usage_error(f"deep needs HypoFuzz and coverage.py ({', '.join(missing)} "
                           "missing): pip install 'mdlri-conformance[deep]'")
    out = Path(ns.out) if ns.out else (
        Path("reports") / "deep" / (time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"))
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        return usage_error(f"--out {out}: not a new or empty folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return usage_error(f"--out {out}: {exc.strerror or exc}")
    seconds = ns.seconds or 60.0 * (ns.minutes or 10.0)
    plan = campaign.Plan(backend=ns.backend, seconds=seconds, out=out.resolve(),
                         acl_lib=ns.acl_lib, kernel_binary=ns.kernel_binary,
                         devices=ns.devices, faults=list(ns.fault or ()), keyword=ns.keyword,
                         jobs=ns.jobs or campaign.available_cores())
    try:
        campaign.prepare(plan)
    except Exception as exc:  # noqa: BLE001 - BuildError: one line
        print(f"{PROG}: NOTHING TESTED: cannot build the coverage emulator: {one_line(exc)}",
              file=sys.stderr)
        return campaign.EXIT[campaign.NOTHING]
    result = campaign.run(plan)
    _keep_cases(plan, result, _cases_dir(ns, plan))
    campaign.write(plan.out, result)
    for line in campaign.summary_lines(result):
        print(line)
    print(f"campaign: {plan.out / campaign.CAMPAIGN_JSON}")
    return int(result["exit_code"])


def _cases_dir(ns: argparse.Namespace, plan: Any) -> Path:
    if ns.cases_dir:
        return Path(ns.cases_dir)
    if plan.faults:
        return plan.out / "cases"
    return Path(str(importlib.resources.files("mdlri_conformance.conformance") / "cases"))


def _keep_cases(plan: Any, result: dict[str, Any], cases_dir: Path) -> None:
    """Replay each failure's case file; keep the ones that still differ in ``cases_dir``."""
    for failure in result.get("failures", []):
        rel = failure.get("case")
        if not rel:
            continue
        path = plan.out / rel
        differs, why = _differs(plan, path)
        failure["case_replays"] = differs
        if not differs:
            result["notes"].append(f"{rel} was not kept: {why}")
            continue
        target = cases_dir / path.name
        if target.resolve() != path.resolve():
            cases_dir.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                shutil.copyfile(path, target)
        failure["kept_case"] = str(target)


def _differs(plan: Any, path: Path) -> tuple[bool, str]:
    """Whether the case at ``path`` differs from the oracle on a fresh backend like the
    campaign's (and why not, when it does not)."""
    from ..engine import divergence, graphs, oracle, runner, validation
    from ..framework import probe
    from ..framework.backend_loader import load_backend
    try:
        case = graphs.from_json(path.read_text(encoding="utf-8"))
        validation.check(case)
        expected = oracle.expected(case)
        backend = load_backend(plan.backend, **backend_options(
            plan.backend, acl_lib=plan.acl_lib, kernel_binary=plan.kernel_binary,
            devices=plan.devices, faults=plan.faults))
    except Exception as exc:  # noqa: BLE001 - a case or backend that cannot replay: say so
        return False, one_line(exc)
    try:
        probe.apply(backend, probe.run_probes(backend))
        observed = runner.replay(backend, case)
        keep = divergence.judgeable(backend.capabilities, case)
    except Exception as exc:  # noqa: BLE001
        return False, f"the replay stopped: {one_line(exc)}"
    finally:
        probe.forget(backend)
        backend.close()
    div = divergence.compare(case, plan.backend, expected, observed, keep=keep)
    if div is None:
        return False, "it conforms when replayed without Hypothesis"
    if div.unsupported:
        return False, f"UNSUPPORTED: {div.unsupported}"
    return True, ""
