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
import importlib.resources
import os
import sys
import time
from pathlib import Path
from typing import Callable, NoReturn, Sequence

from .framework.backend_loader import (BackendLoadError, backend_options, fault_options,
                                       load_backend, parse_devices, preflight, resolve)
from .framework.watchdog import spec_timeout_value

PROG = "mdlri-conformance"
SPEC_DIR = Path(str(importlib.resources.files("mdlri_conformance.conformance.specs")))


def _usage_error(msg: str) -> int:
    print(f"{PROG}: error: {msg}", file=sys.stderr)
    return 2


def _acl_args(ns: argparse.Namespace) -> list[str]:
    """The acl options forwarded to pytest."""
    args: list[str] = []
    for opt, value in (("--acl-lib", ns.acl_lib), ("--kernel-binary", ns.kernel_binary),
                       ("--devices", ns.devices)):
        if value:
            args += [opt, str(value)]
    return args


def _workers(text: str) -> str:
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


def _shipped(value: str, package: str, folder: str, suffix: str) -> Path:
    """``value`` as a path when it names a file, else the file of that name shipped in the
    package (``--expectations atlas-a2``, ``replay seed-fallback``), else ``value`` unchanged
    (its reader then says it cannot read it)."""
    path = Path(value)
    if path.exists():
        return path
    shipped = Path(str(importlib.resources.files(package))) / folder / (
        value if value.endswith(suffix) else value + suffix)
    return shipped if shipped.is_file() else path


def _bad_expression(expr: str) -> str | None:
    """Why a -k expression does not parse (pytest's own parser), None when it does; checked
    here because a worker that meets it after collection takes the run down."""
    try:
        from _pytest.mark.expression import Expression
    except ImportError:  # pytest moved it: pytest reports it itself
        return None
    try:
        Expression.compile(expr)
    except Exception as exc:  # noqa: BLE001 - ParseError (pytest 8) or SyntaxError (pytest 9)
        text = str(exc).strip().splitlines()
        return text[0] if text else type(exc).__name__
    return None


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
    config._ensure_unconfigure()
    return None


def _keep_runs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: keep at least 1 run")
    return n


def _cmd_run(ns: argparse.Namespace) -> int:
    from .framework import rundir
    from .framework import verdict
    try:
        resolve(ns.backend)
        if ns.against:
            resolve(ns.against)
        options = backend_options(ns.backend, devices=ns.devices, acl_lib=ns.acl_lib,
                                  faults=ns.fault)
        unavailable = preflight(ns.backend, options, devices=parse_devices(ns.devices),
                                lib=ns.acl_lib, kernel_binary=ns.kernel_binary)
    except BackendLoadError as exc:
        return _usage_error(str(exc))
    if unavailable:  # no process could load it: every spec would be UNSUPPORTED
        print(f"{PROG}: NOTHING TESTED: {ns.backend} backend: {unavailable}", file=sys.stderr)
        return verdict.EXIT_CODES[verdict.NOTHING_TESTED]
    report_dir = Path(ns.report_dir) if ns.report_dir else (
        Path("reports") / "out" / (time.strftime("%Y%m%d-%H%M%S") + f"-{os.getpid()}"))
    why = _bad_expression(ns.keyword) if ns.keyword else None
    if why:
        return _usage_error(f"-k {ns.keyword!r}: {why}")
    from .framework.conflicts import check_args
    why = check_args(ns)
    if why:
        return _usage_error(why)
    why = _bad_pytest_args(ns.pytest_args) if ns.pytest_args else None
    if why:
        return _usage_error(f"pytest arguments after --: {why}")
    if ns.expectations:
        from .framework import known
        ns.expectations = str(_shipped(ns.expectations, "mdlri_conformance.conformance.framework",
                                       "expectations", ".toml"))
        try:
            known.load(ns.expectations, known.known_ids(SPEC_DIR))
        except known.ExpectationsError as exc:
            return _usage_error(str(exc))
    try:
        rundir.claim(report_dir)
    except rundir.RunDirError as exc:
        return _usage_error(str(exc))
    # rootdir: the folder above conformance/, so node ids read conformance/specs/... whether the
    # suite is a checkout or an installed wheel (expectations, shards and merges compare them)
    args = [str(SPEC_DIR), "--rootdir", str(SPEC_DIR.parent.parent),
            "-p", "mdlri_conformance.conformance.framework.plugin", "--backend", ns.backend,
            "--profile", ns.profile, "--report-dir", str(report_dir),
            "--junitxml", str(report_dir / "junit.xml"),
            "-o", "junit_family=xunit1", "-q", "-rfE", "--tb=short", *_acl_args(ns)]
    if ns.allure:
        args += ["--alluredir", str(report_dir / "allure-results")]
    else:
        args += ["-p", "no:allure_pytest"]
    if ns.expectations:
        args += ["--expectations", ns.expectations]
    if ns.against:
        args += ["--against", ns.against]
    for name in ns.fault or ():  # injected runtime bugs
        args += ["--fault", name]
    if ns.spec_timeout is not None:
        args += ["--spec-timeout", str(ns.spec_timeout)]
    # specs never run in this process by default: a crash is then one spec's CRASH row, and
    # an emulator fault is read by a freshly loaded library
    args += ["-n", str(ns.workers if ns.workers is not None else 1)]
    if ns.keyword:
        args += ["-k", ns.keyword]
    if ns.shard:
        args += ["--shard", ns.shard]
    args += ns.pytest_args
    import pytest
    code = int(pytest.main(args))
    result = _run_exit(code, report_dir, ns)
    _tidy(report_dir, ns.keep_runs)
    return result


def _run_exit(code: int, report_dir: Path, ns: argparse.Namespace) -> int:
    """The exit code of ``run``: the verdict in summary.json, or pytest's status mapped when
    the run wrote none (no spec was selected, a usage error, an interruption before any spec)."""
    from .framework import verdict
    if code == 4:  # pytest's usage error: it printed the line
        return verdict.USAGE_EXIT
    summary = _read_summary(report_dir)
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


def _read_summary(report_dir: Path) -> dict | None:
    from .framework import rundir
    data = rundir.read_json(report_dir / "summary.json")
    return data if isinstance(data, dict) else None


def _tidy(report_dir: Path, keep: int | None) -> None:
    """Remove the report directory if the run left it empty (or only a junit.xml with no
    spec); keep the newest ``keep`` runs beside it."""
    from .framework import rundir
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


def _cmd_example(ns: argparse.Namespace) -> int:
    from .scenarios import EXAMPLES
    if ns.name not in EXAMPLES:
        return _usage_error(f"unknown example {ns.name!r}; known: {', '.join(sorted(EXAMPLES))}")
    try:
        backend = load_backend(ns.backend, **backend_options(
            ns.backend, acl_lib=ns.acl_lib, kernel_binary=ns.kernel_binary, devices=ns.devices))
    except BackendLoadError as exc:
        return _usage_error(str(exc))
    from .framework import verdict
    nothing = verdict.EXIT_CODES[verdict.NOTHING_TESTED]
    why = getattr(backend, "unsupported_reason", lambda _w=None: None)(None)
    if why:
        backend.close()
        print(f"NOTHING TESTED: {ns.backend} backend: {why}")
        return nothing
    from .framework.outcomes import Unsupported
    try:
        ok = EXAMPLES[ns.name](backend, print)
    except Unsupported as exc:  # a step answered 207000 / 207019
        print(f"NOTHING TESTED: UNSUPPORTED: {exc}")
        return nothing
    except Exception as exc:  # noqa: BLE001 - the backend's own failure, in one line
        print(f"INCOMPLETE: the example stopped: {_one_line(exc)}")
        return verdict.EXIT_CODES[verdict.INCOMPLETE]
    finally:
        backend.close()
    return 0 if ok else 1


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _cmd_replay(ns: argparse.Namespace) -> int:
    """Replay one case file on a backend and compare with the oracle: prints ``conforms``
    (exit 0) or the first difference with both values (exit 1). The backend is probed first
    (conformance.probe): what it cannot show is not judged and is listed, and a difference at
    or after a 207000 / 207019 answer is NOTHING TESTED (exit 3); a backend that raises stops
    the replay (INCOMPLETE, exit 4)."""
    from .engine import graphs
    try:
        ns.case = str(_shipped(ns.case, "mdlri_conformance.conformance", "cases", ".json"))
        text = Path(ns.case).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return _usage_error(f"cannot read {ns.case}: {exc}")
    try:
        case = graphs.from_json(text)
        graphs.check(case)
    except graphs.GraphError as exc:
        return _usage_error(f"{ns.case}: {exc}")
    from .engine import oracle
    try:
        expected = oracle.expected(case)
    except (oracle.UndefinedCase, graphs.GraphError) as exc:
        return _usage_error(f"{ns.case}: undefined behaviour: {exc}")
    try:
        backend = load_backend(ns.backend, **fault_options(ns.backend, ns.fault))
    except BackendLoadError as exc:
        return _usage_error(str(exc))
    from .framework import probe, verdict
    from .engine.runner import compare, judgeable, replay
    why = getattr(backend, "unsupported_reason", lambda _w=None: None)(None)
    if why:
        backend.close()
        print(f"NOTHING TESTED: {ns.backend} backend: {why}")
        return verdict.EXIT_CODES[verdict.NOTHING_TESTED]
    try:
        report = probe.run_probes(backend)
        probe.apply(backend, report)
        observed = replay(backend, case)
        keep = judgeable(backend.capabilities, case)
    except Exception as exc:  # noqa: BLE001 - the backend's own failure, in one line
        print(f"INCOMPLETE: the replay stopped: {_one_line(exc)}")
        return verdict.EXIT_CODES[verdict.INCOMPLETE]
    finally:
        probe.forget(backend)
        backend.close()
    for f in report.removed:
        print(f"not shown by this backend: {f.line()}")
    div = compare(case, ns.backend, expected, observed, keep=keep)
    if div is None:
        print(f"conforms ({len(observed)} observations, backend {ns.backend})")
        return 0
    if div.unsupported:
        print(f"NOTHING TESTED: UNSUPPORTED: {div.unsupported}")
        return verdict.EXIT_CODES[verdict.NOTHING_TESTED]
    diff = div.difference
    print(f"differs at observation {diff.position}: {diff.describe()}")
    for label, o in (("expected", diff.expected), ("observed", diff.observed)):
        print(f"  {label}: " + ("nothing" if o is None
                                else f"{o.phase}[{o.index}] {o.what} = {o.value!r}"))
    return 1


def _cmd_doctor(ns: argparse.Namespace) -> int:
    """Print what the acl backend finds: library, version, SoC, devices, what is missing."""
    from mdlri_conformance.backends.acl import cache_root, default_kernel_binary, resolve as acl_resolve
    from mdlri_conformance.backends.acl.probe import run_probe
    try:
        device = backend_options("acl", devices=ns.devices)["device"]
    except BackendLoadError as exc:
        return _usage_error(str(exc))
    d, reason = acl_resolve(ns.acl_lib)
    if getattr(d, "error", None):  # a library named explicitly that names nothing usable
        return _usage_error(str(d.error))
    if reason:
        print(f"library: not found: {reason}")
        for t in d.tried[:40]:
            print(f"  searched: {t}")
        print(f"UNSUPPORTED: acl backend: {reason}")
        return 1
    path = d.path
    if d.emulator:
        try:
            from mdlri_conformance.backends.acl.emulator import build
            path = Path(build.emulator_library())
        except Exception as exc:  # noqa: BLE001 - gcc missing, compile error, cache
            from mdlri_conformance.backends.acl import emulator_build_reason
            print(f"UNSUPPORTED: acl backend: {emulator_build_reason(exc)}")
            return 1
    print(f"library: {path} (found via {d.source})")
    info = run_probe(Path(str(path)), device)
    problems = [info[k] for k in ("load_error", "probe_error") if k in info]
    if info.get("missing_required"):
        problems.append("not an ACL runtime: it does not export "
                        + ", ".join(info["missing_required"]))
    print(f"version: ACL {info.get('version', 'unknown')}"
          + (f" + {info['emulator']}" if info.get("emulator") else ""))
    print(f"soc: {info.get('soc') or 'unknown (aclrtGetSocName returned NULL or is absent)'}")
    if "init_rc" in info:
        print(f"aclInit: rc {info['init_rc']}")
        if info["init_rc"] not in (0, 100002):
            problems.append(f"aclInit failed with {info['init_rc']}")
    if "device_count" in info:
        print(f"devices: {info['device_count']} (rc {info.get('device_count_rc')})")
        if info.get("device_count_rc") or not info["device_count"]:
            problems.append("no NPU visible (check the driver, ASCEND_RT_VISIBLE_DEVICES)")
    if "set_device_rc" in info:
        print(f"aclrtSetDevice({device}): rc {info['set_device_rc']}")
        if info["set_device_rc"]:
            problems.append(f"aclrtSetDevice({device}) failed with {info['set_device_rc']}")
    for msg in info.get("errors", []):
        print(f"runtime message: {msg}")
    if info.get("missing"):
        print(f"missing symbols ({len(info['missing'])}): {', '.join(info['missing'])}")
    kb = ns.kernel_binary or os.environ.get("MDLRI_KERNEL_BINARY")
    if not kb and not info.get("emulator"):
        kb = str(default_kernel_binary(info.get("soc")))
    if kb:
        state = "present" if os.path.isfile(kb) else (
            "MISSING: build it with `mdlri-conformance kernels build` or pass --kernel-binary")
        print(f"kernel binary: {kb} ({state})")
    else:
        print("kernel binary: the emulator's host kernel library (built on demand)")
    print(f"cache: {cache_root()}")
    for p in problems:
        print(f"problem: {p}")
    print("status: " + ("ready" if not problems else "UNSUPPORTED"))
    return 0 if not problems else 1


def _cmd_kernels_build(ns: argparse.Namespace) -> int:
    """Build kernel/ascendc/ into the kernels cache (exit 2 with one line when CANN is absent)."""
    from mdlri_conformance.backends.acl.kernels_build import BuildFailed, CannMissing, build
    try:
        path = build(soc=ns.soc, output=ns.output)
    except CannMissing as exc:
        print(f"{PROG}: kernels build: {exc}", file=sys.stderr)
        return 2
    except BuildFailed as exc:
        print(f"{PROG}: kernels build: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


def _add_acl_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--acl-lib", help="acl: libacl_rt.so path or directory, or 'emulator' "
                                     "(default: $MDLRI_ACL_LIB, then discovery)")
    p.add_argument("--kernel-binary", help="acl: the catalog kernels' binary")
    p.add_argument("--devices", help="acl: device ids, e.g. 0,1,2,3 (xdist worker k binds "
                                     "devices[k %% len])")


def _cmd_diff(ns: argparse.Namespace) -> int:
    from mdlri_conformance.reports.diff import diff_runs, format_diff
    from mdlri_conformance.reports.runs import RunError, load_run
    try:
        a, b = load_run(ns.run_a), load_run(ns.run_b)
    except RunError as exc:
        return _usage_error(str(exc))
    d = diff_runs(a, b)
    for line in format_diff(d, a, b):
        print(line)
    return 1 if d.new_failures else 0


def _cmd_report(ns: argparse.Namespace) -> int:
    if ns.install_allure:
        code = _cmd_install_allure(ns)
        if code or not ns.run_dir:
            return code
    if not ns.run_dir:
        return _usage_error("report: give a run directory (or --install-allure)")
    return _report(ns)


def _report(ns: argparse.Namespace) -> int:
    from mdlri_conformance.reports.runs import RunError, load_run, load_rows
    from .framework.artefacts import write_all
    from .framework.summary import build_summary
    from .framework import rundir
    from .framework.summary import format_table
    try:
        run = load_run(ns.run_dir)
        rows = load_rows(run.path / "results.jsonl")
    except RunError as exc:
        return _usage_error(str(exc))
    previous = _read_summary(run.path) or {}
    meta = rundir.read_meta(run.path)
    summary = build_summary(rows, {c for r in rows for c in r.get("clauses", [])}, run.backend,
                            collected=rundir.read_collected(run.path),
                            ended=rundir.ended(run.path),
                            selection=(previous.get("completeness") or {}).get("selection", ""))
    for key in ("order", "probe", "shard", "shards", "merge_problems"):  # only the run knew
        if key in previous:
            summary[key] = previous[key]
    try:
        write_all(run.path, rows, summary)
    except OSError as exc:
        return _usage_error(f"{run.path}: cannot write the report ({exc.strerror or exc})")
    for line in format_table(summary):
        print(line)
    if not meta:
        print("(no run.json: a run directory from an older version; how it ended is unknown)")
    print(f"{run.path / 'index.html'}")
    code = int(summary["verdict"]["exit_code"])
    if ns.allure_html:
        from mdlri_conformance.backends.acl import cache_root
        from mdlri_conformance.reports.allure import AllureError, generate
        try:
            print(generate(run.path, cache_root()))
        except AllureError as exc:
            return _usage_error(str(exc))
    return code


def _cmd_install_allure(ns: argparse.Namespace) -> int:
    from mdlri_conformance.backends.acl import cache_root
    from mdlri_conformance.reports.allure import AllureError, install
    try:
        print(install(cache_root()))
    except AllureError as exc:
        return _usage_error(str(exc))
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error in one line (the usage itself is behind --help)."""

    def error(self, message: str) -> "NoReturn":  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


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
    run.add_argument("--profile", default="ci", choices=("ci", "dev", "deep", "hw"))
    run.add_argument("-n", "--workers", type=_workers,
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
    run.add_argument("--keep-runs", type=_keep_runs, metavar="N",
                     help="afterwards, remove all but the newest N run directories beside "
                          "this one")
    run.add_argument("pytest_args", nargs=argparse.REMAINDER,
                     help="extra pytest arguments after --")
    run.set_defaults(func=_cmd_run)

    ex = sub.add_parser("example", help="run a CANN example scenario and print its lines",
                        description="Reproduce a CANN example end to end through the contract.")
    ex.add_argument("name", help="scenario name, e.g. fallback")
    ex.add_argument("--backend", default="sim",
                    help="sim (default), acl or package.module:factory")
    _add_acl_options(ex)
    ex.set_defaults(func=_cmd_example)

    doc = sub.add_parser("doctor", help="what the acl backend finds on this machine",
                         description="Find the ACL library and probe it in a subprocess: "
                                     "path, version, SoC, device count, what is missing.")
    _add_acl_options(doc)
    doc.set_defaults(func=_cmd_doctor)

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
    kb.set_defaults(func=_cmd_kernels_build)

    df = sub.add_parser("diff", help="what changed between two runs, per clause",
                        description="Compare two report directories: new failures, fixes, "
                                    "changed behaviours and fingerprint changes, per clause. "
                                    "Exit 1 when B has new failures.")
    df.add_argument("run_a", help="report directory of the earlier run")
    df.add_argument("run_b", help="report directory of the later run")
    df.set_defaults(func=_cmd_diff)

    rep = sub.add_parser("report", help="(re)build a run's reports from its results.jsonl",
                         description="Write summary.json, summary.md, divergences.json and "
                                     "index.html for a run directory.")
    rep.add_argument("run_dir", nargs="?", help="a report directory written by 'run'")
    rep.add_argument("--allure-html", action="store_true",
                     help="also build the Allure 3 HTML report (after --install-allure; needs "
                          "Node.js, no network)")
    rep.add_argument("--install-allure", action="store_true",
                     help="install the pinned Allure 3 package (npm, needs the registry once)")
    rep.set_defaults(func=_cmd_report)

    rp = sub.add_parser("replay", help="replay a task-graph case (JSON) against the oracle",
                        description="Replay CASE.json on a backend without Hypothesis; print "
                                    "'conforms' or the first differing observation.")
    rp.add_argument("case", help="a case JSON file, or the name of a shipped case "
                                 "(seed-fallback, fork-join-3-streams-disable, ...)")
    rp.add_argument("--backend", default="sim", help="sim (default) or package.module:factory")
    rp.add_argument("--fault", action="append", metavar="NAME",
                    help="replay on the simulator with this planted fault (repeatable)")
    rp.set_defaults(func=_cmd_replay)

    from .framework.killmatrix import add_parser as add_faults_parser
    add_faults_parser(sub)  # `faults`: the kill matrix
    from .framework.merge import add_parser as add_merge_parser
    add_merge_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed its one-line usage error
        return int(exc.code or 0) and 2
    if getattr(ns, "pytest_args", None) and ns.pytest_args[:1] == ["--"]:
        ns.pytest_args = ns.pytest_args[1:]
    func: Callable[[argparse.Namespace], int] = ns.func
    return func(ns)


if __name__ == "__main__":
    sys.exit(main())
