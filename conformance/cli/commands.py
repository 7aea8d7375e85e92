"""The other ``mdlri-conformance`` commands: ``example``, ``replay``, ``doctor``,
``kernels build``, ``diff``, ``report`` and ``--install-allure``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ..framework.backend_loader import BackendLoadError, backend_options, load_backend
from .common import PROG, one_line, read_summary, shipped, usage_error


def cmd_example(ns: argparse.Namespace) -> int:
    """Run one CANN example scenario and print its lines (exit 0 on success, 1 on a failure).
    The backend is probed first (conformance.probe): a probe that sees a wrong answer is FAIL
    (exit 1); an example needing a capability the backend cannot show is NOTHING TESTED
    (UNSUPPORTED with the probe's reason, exit 3), as is a step answering 207000 / 207019."""
    from ..scenarios import EXAMPLES, NEEDS
    if ns.name not in EXAMPLES:
        return usage_error(f"unknown example {ns.name!r}; known: {', '.join(sorted(EXAMPLES))}")
    try:
        backend = load_backend(ns.backend, **backend_options(
            ns.backend, acl_lib=ns.acl_lib, kernel_binary=ns.kernel_binary, devices=ns.devices))
    except BackendLoadError as exc:
        return usage_error(str(exc))
    from ..framework.verdicts import verdict
    nothing = verdict.EXIT_CODES[verdict.NOTHING_TESTED]
    why = getattr(backend, "unsupported_reason", lambda _w=None: None)(None)
    if why:
        backend.close()
        print(f"NOTHING TESTED: {ns.backend} backend: {why}")
        return nothing
    stop = _probe_first(backend)
    if stop is not None:
        return stop
    missing = [c for c in NEEDS[ns.name] if c not in backend.capabilities]
    if missing:
        from ..framework import probe
        why = "; ".join(dict.fromkeys(r for r in (probe.reason(backend, c) for c in missing)
                                      if r))
        probe.forget(backend)
        backend.close()
        print(f"NOTHING TESTED: UNSUPPORTED: example {ns.name} needs "
              f"{', '.join(c.value for c in missing)}" + (f" ({why})" if why else ""))
        return nothing
    from ..framework.outcomes import Unsupported
    try:
        ok = EXAMPLES[ns.name](backend, print)
    except Unsupported as exc:  # a step answered 207000 / 207019
        print(f"NOTHING TESTED: UNSUPPORTED: {exc}")
        return nothing
    except Exception as exc:  # noqa: BLE001 - the backend's own failure, in one line
        print(f"INCOMPLETE: the example stopped: {one_line(exc)}")
        return verdict.EXIT_CODES[verdict.INCOMPLETE]
    finally:
        from ..framework import probe
        probe.forget(backend)
        backend.close()
    return 0 if ok else 1


def _probe_first(backend: Any) -> int | None:
    """Probe ``backend``'s capabilities and install them; the exit code when that ends the
    command (a probe saw a wrong answer: FAIL; the backend raised: INCOMPLETE), else None.
    What the probes found absent is listed."""
    from ..framework import probe
    from ..framework.verdicts import verdict
    try:
        report = probe.run_probes(backend)
        probe.apply(backend, report)
    except Exception as exc:  # noqa: BLE001 - the backend's own failure, in one line
        probe.forget(backend)
        backend.close()
        print(f"INCOMPLETE: the capability probes stopped: {one_line(exc)}")
        return verdict.EXIT_CODES[verdict.INCOMPLETE]
    for f in report.removed:
        print(f"not shown by this backend: {f.line()}")
    if report.failures:
        for f in report.failures:
            print(f"FAIL: capability probe {f.cap}: {f.reason}")
        probe.forget(backend)
        backend.close()
        return verdict.EXIT_CODES[verdict.FAIL]
    return None


#: what a replay cannot show without each probed capability
_NOT_SHOWN = (("data_movement", "data movement"), ("kernel_exec", "kernel execution"),
              ("blocking_wait", "blocking"))
#: the data plane: the probed capabilities without which only the control plane is judged
DATA_PLANE: tuple[str, ...] = tuple(cap for cap, _ in _NOT_SHOWN)


def _conforms_line(caps: Any, observations: int, backend: str) -> str:
    """``conforms (N observations, backend B)``, naming what was not shown when data
    movement, kernel execution or blocking is absent (only the control plane was judged)."""
    absent = [text for cap, text in _NOT_SHOWN if cap not in {c.value for c in caps}]
    tail = f"({observations} observations, backend {backend})"
    if not absent:
        return f"conforms {tail}"
    names = absent[0] if len(absent) == 1 else f"{', '.join(absent[:-1])} and {absent[-1]}"
    return f"conforms (control plane only: {names} not shown) {tail}"


def cmd_replay(ns: argparse.Namespace) -> int:
    """Replay one case file on a backend and compare with the oracle: prints ``conforms``
    (exit 0) or the first difference with both values (exit 1). The backend is probed first
    (conformance.probe): what it cannot show is not judged and is listed, and a difference at
    or after a 207000 / 207019 answer is NOTHING TESTED (exit 3); a backend that raises stops
    the replay (INCOMPLETE, exit 4)."""
    from ..engine import graphs, validation
    try:
        ns.case = str(shipped(ns.case, "mdlri_conformance.conformance", "cases", ".json"))
        text = Path(ns.case).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return usage_error(f"cannot read {ns.case}: {exc}")
    try:
        case = graphs.from_json(text)
        validation.check(case)
    except graphs.GraphError as exc:
        return usage_error(f"{ns.case}: {exc}")
    from ..engine import oracle, oracle_state
    try:
        expected = oracle.expected(case)
    except (oracle_state.UndefinedCase, graphs.GraphError) as exc:
        return usage_error(f"{ns.case}: undefined behaviour: {exc}")
    try:
        backend = load_backend(ns.backend, **backend_options(
            ns.backend, acl_lib=ns.acl_lib, kernel_binary=ns.kernel_binary,
            devices=ns.devices, faults=ns.fault))
    except BackendLoadError as exc:
        return usage_error(str(exc))
    from mdlri_conformance.backends.contract import Cap

    from ..framework import probe
    from ..framework.verdicts import verdict
    from ..engine.divergence import compare, judgeable
    from ..engine.runner import replay
    why = getattr(backend, "unsupported_reason", lambda _w=None: None)(None)
    if why:
        backend.close()
        print(f"NOTHING TESTED: {ns.backend} backend: {why}")
        return verdict.EXIT_CODES[verdict.NOTHING_TESTED]
    stop = _probe_first(backend)
    if stop is not None:
        return stop
    from ..engine.case_facts import uses_pageable
    if uses_pageable(case) and "pageable_detection" not in {c.value for c in
                                                          backend.capabilities}:
        why = probe.reason(backend, Cap.PAGEABLE_DETECTION)
        probe.forget(backend)
        backend.close()
        print("NOTHING TESTED: UNSUPPORTED: the case's pageable copy is refused only where "
              "the runtime tells pageable memory" + (f": {why}" if why else ""))
        return verdict.EXIT_CODES[verdict.NOTHING_TESTED]
    try:
        observed = replay(backend, case)
        keep = judgeable(backend.capabilities, case)
    except Exception as exc:  # noqa: BLE001 - the backend's own failure, in one line
        print(f"INCOMPLETE: the replay stopped: {one_line(exc)}")
        return verdict.EXIT_CODES[verdict.INCOMPLETE]
    finally:
        probe.forget(backend)
        backend.close()
    div = compare(case, ns.backend, expected, observed, keep=keep)
    if div is None:
        print(_conforms_line(backend.capabilities, len(observed), ns.backend))
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


def _print_layouts(info: dict[str, Any]) -> list[str]:
    """Print the kernels' argument layouts as the runtime reports them against the catalog's
    structs (KRN-02); returns the problem line of a layout the suite cannot follow."""
    from mdlri_conformance.backends.kernel_layouts import hidden_lines, summary, table
    from mdlri_conformance.kernel.layout import LayoutCheck, first_refusal, refusal_line
    what = "kernel argument layout (aclrtFunctionGetParamCount/Info vs kernel/catalog.py)"
    if "layout" not in info:
        print(f"{what}: not checked: {info.get('layout_error', 'no probe answer')}")
        return []
    checks = [LayoutCheck.from_json(c) for c in info["layout"]]
    print(f"{what}: {summary(checks)}")
    for row in table(checks):
        print(f"  {row}")
    refused = first_refusal(checks)
    if refused is not None:
        return [refusal_line(refused)]
    if any(c.verdict == "follow" for c in checks):
        print("  the suite packs the arguments of the 'follow' kernels in the runtime's layout")
    if hidden_lines(checks):
        print("  hidden trailing parameters (a compiler's workspace, tiling or synchronisation "
              "address) are left to the runtime: the suite packs the catalog fields only "
              "(--kernel-layout strict refuses them)")
    return []


def cmd_doctor(ns: argparse.Namespace) -> int:
    """Print what the acl backend finds: library, version, SoC, devices, what is missing."""
    from mdlri_conformance.backends.acl import cache_root, default_kernel_binary, resolve as acl_resolve
    from mdlri_conformance.backends.acl.probe import run_probe
    try:
        device = backend_options("acl", devices=ns.devices)["device"]
    except BackendLoadError as exc:
        return usage_error(str(exc))
    d, reason = acl_resolve(ns.acl_lib)
    if getattr(d, "error", None):  # a library named explicitly that names nothing usable
        return usage_error(str(d.error))
    if d.emulator and getattr(ns, "virtual_device", False):
        return usage_error("--virtual-device: the ACL emulator (--acl-lib emulator) is no CANN "
                           "runtime and loads no driver; give a real runtime library with "
                           "--acl-lib")
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
    kb = ns.kernel_binary or os.environ.get("MDLRI_KERNEL_BINARY")
    if not kb and not d.emulator:
        from mdlri_conformance.backends.acl import virtual_kernels
        from mdlri_conformance.backends.contract import BackendConfigError
        try:
            kb = virtual_kernels(False)
        except BackendConfigError as exc:
            return usage_error(str(exc))
    if not kb and d.emulator:
        try:
            from mdlri_conformance.backends.acl.emulator import build as emu_build
            kb = str(emu_build.kernel_library())
        except Exception as exc:  # noqa: BLE001 - the emulator built above; its kernels did not
            print(f"kernel binary: cannot build the host kernel library: {exc}")
    info = run_probe(Path(str(path)), device, kernel_binary=kb or "auto")
    problems = [info[k] for k in ("load_error", "probe_error") if k in info]
    if info.get("missing_required"):
        problems.append("not an ACL runtime: it does not export "
                        + ", ".join(info["missing_required"]))
    print(f"version: ACL {info.get('version', 'unknown')}"
          + (f" + {info['emulator']}" if info.get("emulator") else ""))
    print(f"soc: {info.get('soc') or 'unknown (aclrtGetSocName returned NULL or is absent)'}")
    if "driver" in info:
        print(f"driver: {info['driver']}")
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
    if not kb or kb == "auto":
        kb = info.get("layout_binary") or str(default_kernel_binary(info.get("soc")))
    state = "present" if os.path.isfile(kb) else (
        "MISSING: build it with `mdlri-conformance kernels build` or pass --kernel-binary")
    print(f"kernel binary: {kb} ({state})"
          + (" (the emulator's host kernel library)" if d.emulator and not ns.kernel_binary
             and not os.environ.get("MDLRI_KERNEL_BINARY") else ""))
    problems += _print_layouts(info)
    print(f"cache: {cache_root()}")
    for p in problems:
        print(f"problem: {p}")
    print("status: " + ("ready" if not problems else "UNSUPPORTED"))
    return 0 if not problems else 1


def cmd_kernels_build(ns: argparse.Namespace) -> int:
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


def cmd_diff(ns: argparse.Namespace) -> int:
    """The differences, then the exit code: 1 when B has new failures (a failure seen is
    definite), else 4 INCOMPLETE when either run is incomplete (killed, interrupted, specs
    that never ran: only the specs both recorded were compared, and the line says so), else
    0. With ``--stacks`` the stack comparison follows (:mod:`reports.stacks`: the data plane
    is :data:`DATA_PLANE`, a real verdict an outcome of ``verdict.EXERCISED``); the exit code
    does not depend on it."""
    from mdlri_conformance.reports.diff import diff_runs, format_diff
    from mdlri_conformance.reports.runs import RunError, load_run
    from ..framework import rundir
    from ..framework.verdicts import verdict
    try:
        a, b = load_run(ns.run_a), load_run(ns.run_b)
    except RunError as exc:
        return usage_error(str(exc))
    partial: list[str] = []
    for label, run in (("A", a), ("B", b)):
        run.backend = run.backend or str(rundir.read_meta(run.path).get("backend") or "")
        done = verdict.completeness(list(run.rows.values()), rundir.read_collected(run.path),
                                    rundir.ended(run.path))
        if not done["complete"]:
            partial.append(f"run {label} ({run.path}): {done['why']}")
    d = diff_runs(a, b)
    for line in format_diff(d, a, b):
        print(line)
    if getattr(ns, "stacks", False):
        from mdlri_conformance.reports.stacks import compare_stacks, format_stacks
        cmp = compare_stacks(a, b, DATA_PLANE, verdict.EXERCISED)
        for line in format_stacks(cmp):
            print(line)
    if partial:
        print(f"{PROG}: INCOMPLETE: " + "; ".join(partial)
              + "; only the specs both runs recorded were compared", file=sys.stderr)
    if d.new_failures:
        return verdict.EXIT_CODES[verdict.FAIL]
    return verdict.EXIT_CODES[verdict.INCOMPLETE] if partial else 0


def _tidy_dumps(path: Path, meta: dict) -> None:
    """The empty crash dumps of a run that never ended (SIGKILL): its processes died with
    their dumps open, so nothing removed them (crashdump.remove_if_empty); only once the
    run's process is gone, since a live run's workers still hold theirs."""
    from ..framework import crashdump
    pid = meta.get("pid")
    if meta.get("ended") is not None or not isinstance(pid, int):
        return
    try:
        os.kill(pid, 0)
        return  # still running
    except ProcessLookupError:
        pass
    except OSError:
        return
    crashdump.remove_if_empty(path / crashdump.CRASH_DIR)


def cmd_report(ns: argparse.Namespace) -> int:
    if ns.install_allure:
        code = cmd_install_allure(ns)
        if code or not ns.run_dir:
            return code
    if not ns.run_dir:
        return usage_error("report: give a run directory (or --install-allure)")
    return _report(ns)


def _report(ns: argparse.Namespace) -> int:
    from mdlri_conformance.reports.runs import RunError, load_run, load_rows
    from ..framework.verdicts.artefacts import write_all
    from ..framework.verdicts.summary import build_summary
    from ..framework import rundir
    from ..framework.verdicts.summary import format_table
    try:
        run = load_run(ns.run_dir)
        rows = load_rows(run.path / "results.jsonl")
    except RunError as exc:
        return usage_error(str(exc))
    previous = read_summary(run.path) or {}
    meta = rundir.read_meta(run.path)
    _tidy_dumps(run.path, meta)
    backend = run.backend or str(meta.get("backend") or "")
    summary = build_summary(rows, {c for r in rows for c in r.get("clauses", [])}, backend,
                            collected=rundir.read_collected(run.path),
                            ended=rundir.ended(run.path),
                            selection=(previous.get("completeness") or {}).get("selection", ""),
                            probe=previous.get("probe"))  # a probe's failure fails the gate
    for key in ("order", "probe", "shard", "shards", "merge_problems"):  # only the run knew
        if key in previous:
            summary[key] = previous[key]
    try:
        write_all(run.path, rows, summary)
    except OSError as exc:
        return usage_error(f"{run.path}: cannot write the report ({exc.strerror or exc})")
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
            return usage_error(str(exc))
    return code


def cmd_install_allure(ns: argparse.Namespace) -> int:
    from mdlri_conformance.backends.acl import cache_root
    from mdlri_conformance.reports.allure import AllureError, install
    try:
        print(install(cache_root()))
    except AllureError as exc:
        return usage_error(str(exc))
    return 0
