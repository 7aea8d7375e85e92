"""A deep campaign: the generated tier and the stateful machine under HypoFuzz, bounded in
time, against one backend, with branch coverage of the implementation it drives.

:func:`run` starts :mod:`.fuzz_session` in child processes with a hard deadline (the
fuzzing time, the corpus replay's share of it, and a start-up allowance): one per core
(``Plan.jobs``), each fuzzing its shard of the specs (``--shard K/N``: the fuzzable specs
dealt out in turn), then writes ``campaign.json`` in the campaign folder:

* ``examples`` per spec and ``graphs_per_minute`` (examples executed over the fuzzing wall
  time, every spec and process together); ``cores`` (the fuzzing processes, one per core)
  and ``graphs_per_minute_per_core``;
* ``sim_branches``: the simulator's Python branches reached/total (coverage.py; sim backend;
  with several processes, the union of their measurements);
* ``emulator_branches``: the host ABI emulator's C branches reached/total, from the gcov
  counters of its coverage build (``--acl-lib emulator``);
* ``failures``: each with its kept files (:mod:`.fuzz_failures`);
* ``verdict`` and ``exit_code``: 0 nothing failed, 1 a failure was found, 3 nothing was
  fuzzed (no selected spec could run, or none executed an example), 4 incomplete: the child
  did not finish (deadline, interruption, an internal error) or a spec's fuzzing was
  stopped by an error of the fuzzing machinery.

The child's own output is ``session.log`` (``session-K.log`` for process K of several; its
pytest summary lists no spec as run: the campaign runs none as a spec); ``examples/`` is the
Hypothesis database HypoFuzz used (shared: the processes fuzz different specs, whose keys
differ), ``gcov/`` the emulator's counters (gcov merges the processes' counts).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..items import SPEC_DIR
from . import branch_coverage
from .fuzz_session import REPLAY_SHARE, coverage_data, fuzz_json

#: the spec modules a campaign fuzzes unless ``-k`` narrows them: the generated tier and the
#: stateful machines
SPEC_GLOBS = ("test_generated*.py", "test_stateful*.py")


def spec_files() -> list[Path]:
    """The spec modules matching :data:`SPEC_GLOBS`, in name order."""
    return sorted({p for g in SPEC_GLOBS for p in SPEC_DIR.glob(g)})
#: the child's start-up (collection, probes) and wind-down allowance
GRACE_S = 180.0
CAMPAIGN_JSON = "campaign.json"
OK, FOUND, NOTHING, INCOMPLETE = "OK", "FAILURES FOUND", "NOTHING FUZZED", "INCOMPLETE"
EXIT = {OK: 0, FOUND: 1, NOTHING: 3, INCOMPLETE: 4}


@dataclass
class Plan:
    """What one campaign runs: backend and its options, time, folder, selection."""

    backend: str
    seconds: float
    out: Path
    acl_lib: str | None = None
    kernel_binary: str | None = None
    devices: str | None = None
    faults: list[str] = field(default_factory=list)
    keyword: str | None = None
    #: fuzzing processes, one per core, each fuzzing its shard of the specs
    jobs: int = 1
    #: the instrumented emulator's ``.gcno`` folder (set by :func:`prepare`)
    gcov_notes: Path | None = None

    @property
    def emulator(self) -> bool:
        """True when the acl backend is the host ABI emulator (explicit or from the env)."""
        lib = self.acl_lib or os.environ.get("MDLRI_ACL_LIB", "")
        return self.backend == "acl" and lib.strip() == "emulator"


def _sim_source() -> Path:
    import mdlri_conformance.backends.sim as sim
    return Path(sim.__file__).resolve().parent


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform says)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no sched_getaffinity on this platform
        return max(1, os.cpu_count() or 1)


def _log_name(shard: int, shards: int) -> str:
    return "session.log" if shards == 1 else f"session-{shard}.log"


def _child_args(plan: Plan, shard: int = 0) -> list[str]:
    args = [sys.executable, "-m", "mdlri_conformance.conformance.framework.power.fuzz_session",
            "--out", str(plan.out), "--seconds", str(plan.seconds)]
    if plan.jobs > 1:
        args += ["--shard", f"{shard}/{plan.jobs}"]
    if plan.backend == "sim":
        args += ["--sim-coverage", str(_sim_source())]
    args += ["--", *[str(p) for p in spec_files()],
             "--rootdir", str(SPEC_DIR.parent.parent),
             "-p", "mdlri_conformance.conformance.framework.plugin",
             "-p", "no:randomly", "-p", "no:cacheprovider", "-p", "no:allure_pytest",
             "--backend", plan.backend, "--profile", "deep",
             "--hypothesis-db", str(plan.out / "examples"),
             "--report-dir", str(plan.out / _session_dir(shard, plan.jobs)), "-q"]
    for opt, value in (("--acl-lib", plan.acl_lib), ("--kernel-binary", plan.kernel_binary),
                       ("--devices", plan.devices)):
        if value:
            args += [opt, value]
    for name in plan.faults:
        args += ["--fault", name]
    if plan.keyword:
        args += ["-k", plan.keyword]
    return args


def _child_env(plan: Plan) -> dict[str, str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")  # a child killed at the deadline keeps its log
    if plan.emulator:
        from mdlri_conformance.backends.acl.emulator import build
        env[build.COVERAGE_VAR] = "1"
        env.update(build.gcov_env(plan.out / "gcov"))
    return env


def prepare(plan: Plan) -> None:
    """Build the instrumented emulator before the child starts, so a build problem is one
    line here (raises ``BuildError``); its notes are read from that build's folder at the
    end, whatever the sources became meanwhile."""
    if plan.emulator:
        from mdlri_conformance.backends.acl.emulator import build
        plan.gcov_notes = build.emulator_library(coverage=True).parent / "obj"


def _session_dir(shard: int, shards: int) -> str:
    return "session" if shards == 1 else f"session-{shard}"


def run(plan: Plan) -> dict[str, Any]:
    """Run the campaign; returns what ``campaign.json`` holds (also written)."""
    plan.out.mkdir(parents=True, exist_ok=True)
    limit = plan.seconds * (1 + REPLAY_SHARE) + GRACE_S
    started = time.monotonic()
    killed = interrupted = False
    n = max(1, int(plan.jobs))
    env = _child_env(plan)
    logs = [open(plan.out / _log_name(k, n), "w", encoding="utf-8") for k in range(n)]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for k in range(n):
            procs.append(subprocess.Popen(_child_args(plan, k), stdout=logs[k],
                                          stderr=subprocess.STDOUT, env=env,
                                          cwd=str(plan.out)))
        try:
            for proc in procs:
                proc.wait(timeout=max(0.0, started + limit - time.monotonic()))
        except subprocess.TimeoutExpired:
            killed = True
        except KeyboardInterrupt:
            interrupted = True
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        for log in logs:
            log.close()
    wall = time.monotonic() - started
    for k in range(n):
        # the suite's run reports of a child list no spec (the campaign ran none as a spec)
        shutil.rmtree(plan.out / _session_dir(k, n), ignore_errors=True)
    data = _merge(plan, [_read(plan.out / fuzz_json(k, n)) for k in range(n)])
    codes = [p.returncode for p in procs]
    code = next((c for c in codes if c), codes[0] if codes else None)
    result = _figures(plan, data, wall, killed, code)
    if interrupted:
        result["notes"].append("interrupted: the figures are those written before")
        if result["verdict"] != FOUND:
            result.update(verdict=INCOMPLETE, exit_code=EXIT[INCOMPLETE])
    write(plan.out, result)
    return result


def _merge(plan: Plan, parts: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """One ``fuzz.json``-shaped record of the processes' figures: their targets and notes
    together, the specs none of them fuzzed, the longest fuzzing time, completed when every
    process completed; the simulator's branches reached by any of them (:func:`_union`)."""
    n = len(parts)
    if n == 1 or all(p is None for p in parts):
        return parts[0] if n == 1 else None
    merged: dict[str, Any] = {"completed": True, "fuzz_seconds": 0.0, "targets": [],
                              "not_fuzzed": {}, "sim_branches": None, "notes": []}
    for k, part in enumerate(parts):
        if part is None:
            merged["completed"] = False
            merged["notes"].append(f"fuzzing process {k + 1} of {n} wrote no figures: "
                                   f"{_log_tail(plan.out / _log_name(k, n))}")
            continue
        merged["completed"] = merged["completed"] and bool(part.get("completed"))
        merged["fuzz_seconds"] = max(merged["fuzz_seconds"],
                                     float(part.get("fuzz_seconds") or 0.0))
        merged["targets"] += list(part.get("targets", []))
        merged["not_fuzzed"].update(part.get("not_fuzzed", {}))
        merged["notes"] += [m for m in part.get("notes", []) if m not in merged["notes"]]
    fuzzed = {t.get("nodeid") for t in merged["targets"]}
    merged["not_fuzzed"] = {k: v for k, v in merged["not_fuzzed"].items() if k not in fuzzed}
    merged["sim_branches"] = _union(plan, parts, merged["notes"])
    return merged


def _union(plan: Plan, parts: list[dict[str, Any] | None],
           notes: list[str]) -> dict[str, Any] | None:
    """The simulator's branches reached by any process (their coverage data combined), with
    the examples every process replayed for it; None when no process measured them."""
    measured = [(k, p["sim_branches"]) for k, p in enumerate(parts)
                if p is not None and p.get("sim_branches")]
    if not measured:
        return None
    n = len(parts)
    files = [plan.out / name for k, _ in measured
             if (name := coverage_data(k, n)) is not None]
    try:
        figures = branch_coverage.combined_python_branches(files, _sim_source())
    except branch_coverage.CoverageUnavailable as exc:
        notes.append(str(exc))
        return None
    replayed = sum(int(f.get("examples_replayed", 0)) for _, f in measured)
    total = sum(int(f.get("examples_total", 0)) for _, f in measured)
    return {**figures.to_dict(), "examples_replayed": replayed, "examples_total": total,
            "complete": all(f.get("complete", True) for _, f in measured)}


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _figures(plan: Plan, data: dict[str, Any] | None, wall: float, killed: bool,
             code: int | None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "backend": plan.backend, "acl_lib": plan.acl_lib, "faults": plan.faults,
        "keyword": plan.keyword, "seconds": plan.seconds, "wall_seconds": round(wall, 1),
        "child_exit": code, "killed_at_deadline": killed, "notes": [],
        # the machine's cores (``cores`` is the fuzzing processes): campaigns compare only
        # on the same machine
        "machine_cores": available_cores(),
    }
    cores = max(1, int(plan.jobs))
    if data is None:
        tail = _log_tail(plan.out / _log_name(0, cores))
        result.update(verdict=INCOMPLETE, exit_code=EXIT[INCOMPLETE], targets=[],
                      failures=[], not_fuzzed={}, examples=0, graphs_per_minute=0.0,
                      cores=cores, graphs_per_minute_per_core=0.0,
                      sim_branches=None, emulator_branches=None)
        result["notes"].append(f"the fuzzing process wrote no figures: {tail}")
        return result
    targets = data.get("targets", [])
    examples = sum(int(t.get("examples", 0)) for t in targets)
    minutes = float(data.get("fuzz_seconds") or 0.0) / 60.0
    failures = [{"nodeid": t["nodeid"], **f} for t in targets for f in t.get("failures", [])]
    per_minute = examples / minutes if minutes > 0 else 0.0
    result.update(targets=targets, not_fuzzed=data.get("not_fuzzed", {}),
                  fuzz_seconds=data.get("fuzz_seconds"), examples=examples,
                  graphs_per_minute=round(per_minute, 1), cores=cores,
                  graphs_per_minute_per_core=round(per_minute / cores, 1),
                  sim_branches=data.get("sim_branches"), failures=failures)
    result["notes"] += list(data.get("notes", []))
    result["emulator_branches"] = _emulator_branches(plan, result["notes"])
    if killed:
        result["notes"].append(f"the fuzzing process was stopped at the deadline "
                               f"({wall:.0f} s); its last figures are shown")
    elif not data.get("completed"):
        result["notes"].append(f"the fuzzing process stopped early (exit {code}): see "
                               "session.log; its last figures are shown")
    broken = [t["nodeid"] for t in targets if t.get("error")]
    if broken:
        result["notes"].append(f"fuzzing stopped by an error of the machinery, not of the "
                               f"spec: {', '.join(broken)}")
    if any(f.get("kind") == "failure" for f in failures):
        verdict = FOUND
    elif killed or broken or not data.get("completed"):
        verdict = INCOMPLETE
    elif not targets or examples == 0:
        verdict = NOTHING
    else:
        verdict = OK
    result.update(verdict=verdict, exit_code=EXIT[verdict])
    return result


def _emulator_branches(plan: Plan, notes: list[str]) -> dict[str, Any] | None:
    if not plan.emulator or plan.gcov_notes is None:
        return None
    from mdlri_conformance.backends.acl.emulator import build
    try:
        figures = branch_coverage.gcov_branches(plan.out / "gcov", plan.gcov_notes,
                                                [build.EMU_SRC, build.EMU_INCLUDE])
    except branch_coverage.CoverageUnavailable as exc:
        notes.append(str(exc))
        return None
    return figures.to_dict()


def _log_tail(path: Path) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines()
                 if ln.strip()]
    except OSError:
        return "no log"
    return lines[-1] if lines else "empty log"


def write(out: Path, result: dict[str, Any]) -> None:
    (out / CAMPAIGN_JSON).write_text(json.dumps(result, indent=1, default=str) + "\n",
                                     encoding="utf-8")


def _branches_line(fig: dict[str, Any] | None) -> str:
    if not fig:
        return "not measured"
    b = branch_coverage.Branches(int(fig["reached"]), int(fig["total"]))
    extra = ""
    if "examples_replayed" in fig and not fig.get("complete", True):
        extra = (f" (lower bound: {fig['examples_replayed']} of {fig['examples_total']} "
                 "examples replayed)")
    return b.line() + extra


def summary_lines(result: dict[str, Any]) -> list[str]:
    """The readable end of a campaign: figures, failures, what was not fuzzed."""
    faults = "".join(f" --fault {f}" for f in result.get("faults") or ())
    lib = f" --acl-lib {result['acl_lib']}" if result.get("acl_lib") else ""
    cores = int(result.get("cores") or 1)
    lines = [f"deep campaign: backend {result['backend']}{lib}{faults}, "
             f"{result.get('fuzz_seconds') or 0:.0f} s fuzzed on {cores} "
             f"core{'s' if cores > 1 else ''}",
             f"  graphs explored per minute: {result.get('graphs_per_minute', 0.0)} "
             f"({result.get('examples', 0)} examples; "
             f"{result.get('graphs_per_minute_per_core', 0.0)} per core)"]
    for t in result.get("targets", []):
        stop = f" [stopped: {t['stopped']}]" if t.get("stopped") else ""
        lines.append(f"    {t['nodeid']}: {t['examples']} examples, {t['behaviours']} "
                     f"behaviours, corpus {t['corpus']}{stop}")
        lines += [f"      note: {n}" for n in t.get("notes", [])]
    lines.append(f"  simulator branches reached: {_branches_line(result.get('sim_branches'))}")
    lines.append("  emulator branches reached: "
                 f"{_branches_line(result.get('emulator_branches'))}")
    for f in result.get("failures", []):
        kept = f.get("kept_case") or f.get("case") or f.get("file")
        replay = "replays" if f.get("replays") else "DID NOT REPLAY"
        lines.append(f"  {f['kind'].upper()} {f['nodeid']}: {f.get('message', '')}")
        lines.append(f"    kept: {kept} ({replay}); {f.get('reproduce', '')}")
    by_reason: dict[str, list[str]] = {}
    for nodeid, why in sorted(result.get("not_fuzzed", {}).items()):
        by_reason.setdefault(why, []).append(nodeid)
    for why, nodeids in by_reason.items():
        names = ", ".join(nodeids) if len(nodeids) <= 3 else f"{len(nodeids)} specs"
        lines.append(f"  not fuzzed ({why}): {names}")
    for note in result.get("notes", []):
        lines.append(f"  note: {note}")
    lines.append(f"verdict: {result['verdict']}")
    return lines
