"""The kill matrix: the suite run once per catalogued fault.

``mdlri-conformance faults`` runs the specs on a deliberately broken backend, one pytest
subprocess per fault (``-j`` at a time, each with its own report directory under
``<out>/faults/<name>/``), plus one baseline run without a fault (``<out>`` itself, so its
``index.html`` carries the matrix). Each run uses one xdist worker (``-n 1``) so a fault that
crashes or hangs a process costs one spec (CRASH/TIMEOUT, :mod:`conformance.isolation`), not
the run.

A fault is **killed** by a spec whose row is FAIL, ERROR, CHANGED, TIMEOUT or CRASH in the
fault's run while the same spec ran in the baseline run without any of those outcomes. Per fault the matrix gives:

* ``killers``: every killing spec with its outcome, duration and, for Hypothesis specs, the
  example that first failed and the shrunk counterexample's task count
  (:mod:`conformance.killstats`);
* ``time_to_kill_s``: the time from the run's first spec to the first failure, i.e. the sum
  of the recorded durations of the specs before the first killing spec plus that spec's time
  to its first failing example (Hypothesis specs) or its whole duration (one worker runs the
  specs in order; process start-up is left out);
* ``fastest_killer_s``: the shortest duration of a killing spec (the cost of a focused rerun);
* ``examples``: generated examples the first killing spec needed (0 when a hand-written spec
  killed it first);
* ``shrunk_tasks``: the largest shrunk counterexample among the killing Hypothesis specs.

Progress: a line as each run ends, flushed at once (``[baseline] 612 specs in 40.1 s, 2 not
passing``, then ``[3/12] seq-per-stream: killed by 4 spec(s) in 12.3 s (first after 2.1 s)``
or ``[4/12] x: SURVIVED 612 specs in 39.0 s``, the count being the fault runs ended so far);
a fault run that ends before the baseline gets its line when the baseline ends, since only
the baseline says which failures are kills. The table follows when every run has ended.

Overall: the kill rate, and the median and maximum time to kill. Output:
``kill_matrix.json`` and ``kill_matrix.html`` (a fragment embedded in ``index.html``).
"""

from __future__ import annotations

import html
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from mdlri_conformance.backends.acl.emulator_faults import EMULATOR_FAULTS
from mdlri_conformance.backends.faults import FAULTS

from ..items import SPEC_DIR, bad_expression

REPO = SPEC_DIR.parents[1]
KILL_OUTCOMES = frozenset({"FAIL", "ERROR", "CHANGED", "TIMEOUT", "CRASH"})
#: --spec-timeout of the fault runs (a hang costs this much, and as much again in native code)
SPEC_TIMEOUT_S = 10.0
#: a whole fault run may take at most this long
RUN_LIMIT_S = 900.0


@dataclass
class RunSpec:
    """One suite run of the matrix: a fault (None: the baseline) and where it reports."""

    fault: str | None
    report_dir: Path
    backend: str = "sim"
    acl_lib: str | None = None
    profile: str = "ci"
    spec_timeout: float = SPEC_TIMEOUT_S
    extra: list[str] = field(default_factory=list)

    def command(self) -> list[str]:
        cmd = [sys.executable, "-m", "pytest", str(SPEC_DIR), "-p", "no:cacheprovider",
               "--backend", self.backend, "--profile", self.profile,
               "--report-dir", str(self.report_dir), "--spec-timeout", f"{self.spec_timeout:g}",
               "-n", "1", "--max-worker-restart", "1000", "-q", "--tb=no"]
        if self.acl_lib:
            cmd += ["--acl-lib", self.acl_lib]
        if self.fault:
            cmd += ["--fault", self.fault]
        return cmd + self.extra


def read_rows(report_dir: Path) -> list[dict[str, Any]]:
    """The rows of a run's results.jsonl (a truncated last line is skipped)."""
    path = report_dir / "results.jsonl"
    rows: list[dict[str, Any]] = []
    if not path.is_file():
        return rows
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            break
    return rows


def run_one(spec: RunSpec, limit_s: float = RUN_LIMIT_S) -> dict[str, Any]:
    """Run the suite once; returns exit code, wall time and the rows."""
    spec.report_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.monotonic()
    try:
        proc = subprocess.run(spec.command(), cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=limit_s, check=False)
        code, tail = proc.returncode, (proc.stdout + proc.stderr)[-2000:]
    except subprocess.TimeoutExpired:
        code, tail = -1, f"run exceeded {limit_s:g} s"
    (spec.report_dir / "pytest.log").write_text(tail, encoding="utf-8")
    return {"exit": code, "wall_s": round(time.monotonic() - t0, 2),
            "rows": read_rows(spec.report_dir), "tail": tail}


def analyse(fault: str, rows: list[dict[str, Any]], baseline: dict[str, str],
            wall_s: float, exit_code: int) -> dict[str, Any]:
    """One fault's matrix entry from its run's rows and the baseline outcomes."""
    killers: list[dict[str, Any]] = []
    elapsed = 0.0
    first_kill: float | None = None
    for row in rows:
        before, elapsed = elapsed, elapsed + float(row.get("duration_s") or 0.0)
        base = baseline.get(row["nodeid"])
        if row["outcome"] not in KILL_OUTCOMES or base is None or base in KILL_OUTCOMES:
            continue  # only specs that ran and did not fail in the baseline can kill
        if first_kill is None:  # a Hypothesis spec fails before it has shrunk
            offset = (row.get("hypothesis") or {}).get("first_failure_s")
            first_kill = before + offset if offset is not None else elapsed
        k = {"spec": row["nodeid"], "outcome": row["outcome"],
             "duration_s": row.get("duration_s"), "clauses": row.get("clauses", []),
             "message": (row.get("message") or "")[:300]}
        hyp = row.get("hypothesis") or {}
        if "failed_at_example" in hyp:
            k["examples"] = hyp["failed_at_example"]
        if "shrunk_tasks" in hyp:
            k["shrunk_tasks"] = hyp["shrunk_tasks"]
        if row.get("leaks"):
            k["leaks"] = row["leaks"]
        killers.append(k)
    sizes = [k["shrunk_tasks"] for k in killers if "shrunk_tasks" in k]
    return {
        "fault": fault, "description": FAULTS.get(fault, ""), "killed": bool(killers),
        "killers": killers, "kill_count": len(killers),
        "time_to_kill_s": None if first_kill is None else round(first_kill, 3),
        "fastest_killer_s": min((k["duration_s"] or 0.0 for k in killers), default=None),
        "examples": killers[0].get("examples", 0) if killers else None,
        "shrunk_tasks": max(sizes) if sizes else None,
        "leaking_specs": sum(1 for r in rows if r.get("leaks")),
        "specs_run": len(rows), "wall_s": wall_s, "exit": exit_code,
    }


def summarise(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Kill rate and time-to-kill figures over the matrix."""
    killed = [e for e in entries if e["killed"]]
    times = [e["time_to_kill_s"] for e in killed]
    sizes = [e["shrunk_tasks"] for e in killed if e["shrunk_tasks"] is not None]
    return {
        "faults": len(entries), "killed": len(killed),
        "kill_rate": round(len(killed) / len(entries), 4) if entries else 0.0,
        "survivors": [e["fault"] for e in entries if not e["killed"]],
        "median_time_to_kill_s": round(statistics.median(times), 3) if times else None,
        "max_time_to_kill_s": round(max(times), 3) if times else None,
        "max_shrunk_tasks": max(sizes) if sizes else None,
    }


def say(line: str) -> None:
    """Print one progress line at once (the terminal may be a pipe: CI logs, ``| tee``)."""
    print(line, flush=True)


def _exit_note(res: dict[str, Any], report_dir: Path) -> str:
    """What is wrong with a run that did not end normally (pytest exit 0/1 with rows)."""
    if res["exit"] in (0, 1) and res["rows"]:
        return ""
    why = "no spec reported" if not res["rows"] else f"pytest exit {res['exit']}"
    return f"; {why}, see {report_dir / 'pytest.log'}"


def baseline_line(res: dict[str, Any], report_dir: Path) -> str:
    """The progress line of the baseline run."""
    bad = sum(1 for r in res["rows"] if r["outcome"] in KILL_OUTCOMES)
    return (f"[baseline] {len(res['rows'])} specs in {res['wall_s']:.1f} s, {bad} not passing "
            f"(they cannot kill a fault){_exit_note(res, report_dir)}")


def fault_line(done: int, total: int, entry: dict[str, Any], res: dict[str, Any],
               report_dir: Path) -> str:
    """The progress line of one finished fault run, e.g. ``[3/12] seq-per-stream: killed by
    4 spec(s) in 12.3 s (first after 2.1 s)``."""
    head = f"[{done}/{total}] {entry['fault']}: "
    if entry["killed"]:
        first = entry["time_to_kill_s"]
        text = (f"killed by {entry['kill_count']} spec(s) in {entry['wall_s']:.1f} s"
                + (f" (first after {first:.1f} s)" if first is not None else ""))
    else:
        text = f"SURVIVED {entry['specs_run']} specs in {entry['wall_s']:.1f} s"
    return head + text + _exit_note(res, report_dir)


def run_matrix(faults: Sequence[str], out: Path, *, backend: str = "sim",
               acl_lib: str | None = None, jobs: int = 2, profile: str = "ci",
               spec_timeout: float = SPEC_TIMEOUT_S, extra: Sequence[str] = (),
               progress: Callable[[str], None] = say,
               run_limit_s: float = RUN_LIMIT_S) -> dict[str, Any]:
    """Run the baseline and every fault; write kill_matrix.json/.html into ``out``. A fault
    run is stopped after ``run_limit_s`` (the baseline never is): its entry is made from the
    rows it wrote by then, so a fault not found within that time reads as a survivor.

    ``progress`` gets one line per run as it ends (:func:`baseline_line`,
    :func:`fault_line`, with a running count of the fault runs); a fault run that ends
    before the baseline has its line when the baseline ends (a kill is counted against it)."""
    out.mkdir(parents=True, exist_ok=True)
    base = RunSpec(None, out, backend, acl_lib, profile, spec_timeout, list(extra))
    specs = [RunSpec(f, out / "faults" / f, backend, acl_lib, profile, spec_timeout,
                     list(extra)) for f in faults]
    dirs = {s.fault: s.report_dir for s in [base, *specs]}
    t0 = time.monotonic()
    results: dict[str | None, dict[str, Any]] = {}
    entries: dict[str, dict[str, Any]] = {}
    baseline: dict[str, str] | None = None
    waiting: list[str] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(run_one, s, RUN_LIMIT_S if s.fault is None else run_limit_s):
                   s.fault for s in [base, *specs]}
        for fut in as_completed(futures):
            name = futures[fut]
            results[name] = fut.result()
            if name is None:
                baseline = {r["nodeid"]: r["outcome"] for r in results[None]["rows"]}
                progress(baseline_line(results[None], out))
            else:
                waiting.append(name)
            if baseline is None:
                continue
            for f in waiting:
                res = results[f]
                entries[f] = analyse(f, res["rows"], baseline, res["wall_s"], res["exit"])
                progress(fault_line(len(entries), len(specs), entries[f], res, dirs[f]))
            waiting = []
    base_res = results[None]
    baseline = baseline or {}  # set: the baseline's future is among those completed
    matrix = {"backend": backend, "acl_lib": acl_lib, "profile": profile,
              "spec_timeout_s": spec_timeout, "jobs": jobs, "pytest_args": list(extra),
              "run_limit_s": run_limit_s,
              "wall_s": round(time.monotonic() - t0, 2),
              "baseline": {"specs": len(base_res["rows"]), "wall_s": base_res["wall_s"],
                           "not_passing": sorted(n for n, o in baseline.items()
                                                 if o in KILL_OUTCOMES)},
              "summary": summarise([entries[f] for f in faults]),
              "faults": [entries[f] for f in faults]}
    (out / "kill_matrix.json").write_text(json.dumps(matrix, indent=2) + "\n", encoding="utf-8")
    (out / "kill_matrix.html").write_text(render_html(matrix), encoding="utf-8")
    _rebuild_report(out)
    return matrix


def _rebuild_report(out: Path) -> None:
    """Rewrite the baseline run's index.html so it embeds kill_matrix.html."""
    rows = read_rows(out)
    summary_path = out / "summary.json"
    if not rows or not summary_path.is_file():
        return
    from ..verdicts.artefacts import write_all
    write_all(out, rows, json.loads(summary_path.read_text(encoding="utf-8")))


def render_html(matrix: dict[str, Any]) -> str:
    """The HTML fragment (a summary line and one table row per fault)."""
    s = matrix["summary"]
    esc = html.escape

    def fmt(v: Any, unit: str = "") -> str:
        return "&ndash;" if v is None else f"{v}{unit}"

    head = (f"<p>{s['killed']} of {s['faults']} faults killed "
            f"(kill rate {100 * s['kill_rate']:.0f}%), backend <code>{esc(matrix['backend'])}"
            f"</code>, profile <code>{esc(matrix['profile'])}</code>; time to kill median "
            f"{fmt(s['median_time_to_kill_s'], ' s')}, max {fmt(s['max_time_to_kill_s'], ' s')}; "
            f"largest shrunk counterexample {fmt(s['max_shrunk_tasks'], ' tasks')}.</p>")
    rows = []
    for e in matrix["faults"]:
        specs = ", ".join(f"<code>{esc(k['spec'].split('::', 1)[-1])}</code> ({k['outcome']})"
                          for k in e["killers"][:6])
        more = len(e["killers"]) - 6
        if more > 0:
            specs += f" and {more} more"
        cls = "" if e["killed"] else " style='background:#fdd'"
        rows.append(
            f"<tr{cls}><td><code>{esc(e['fault'])}</code></td><td>{esc(e['description'])}</td>"
            f"<td>{'killed' if e['killed'] else 'SURVIVED'}</td><td>{e['kill_count']}</td>"
            f"<td>{fmt(e['time_to_kill_s'], ' s')}</td><td>{fmt(e['examples'])}</td>"
            f"<td>{fmt(e['shrunk_tasks'])}</td><td>{specs}</td></tr>")
    return (head + "<table class='kill-matrix'><tr><th>fault</th><th>bug it stands for</th>"
            "<th>status</th><th>killing specs</th><th>time to kill</th>"
            "<th>examples</th><th>shrunk tasks</th><th>killed by</th></tr>\n"
            + "\n".join(rows) + "\n</table>\n")


def format_table(matrix: dict[str, Any]) -> list[str]:
    """The matrix as text lines for the terminal."""
    lines = [f"{'fault':<30} {'status':<8} {'specs':>5} {'t_kill':>8} {'examples':>8} "
             f"{'shrunk':>6}  first killer"]
    for e in matrix["faults"]:
        first = e["killers"][0]["spec"].split("::", 1)[-1] if e["killers"] else "-"
        t = "-" if e["time_to_kill_s"] is None else f"{e['time_to_kill_s']:.2f}s"
        lines.append(f"{e['fault']:<30} {'killed' if e['killed'] else 'SURVIVED':<8} "
                     f"{e['kill_count']:>5} {t:>8} {str(e['examples'] if e['examples'] is not None else '-'):>8} "
                     f"{str(e['shrunk_tasks'] if e['shrunk_tasks'] is not None else '-'):>6}  "
                     f"{first[:60]}")
    s = matrix["summary"]
    lines.append(f"kill rate: {s['killed']}/{s['faults']} = {100 * s['kill_rate']:.1f}%; "
                 f"time to kill median {s['median_time_to_kill_s']} s, max "
                 f"{s['max_time_to_kill_s']} s; max shrunk counterexample "
                 f"{s['max_shrunk_tasks']} tasks; wall {matrix['wall_s']} s")
    if s["survivors"]:
        lines.append("SURVIVED: " + ", ".join(s["survivors"]))
    return lines


def default_faults(backend: str) -> list[str]:
    """Every catalogued fault the backend implements."""
    return sorted(FAULTS) if backend == "sim" else sorted(EMULATOR_FAULTS)


def _cmd_faults(ns: Any) -> int:
    """``mdlri-conformance faults``: exit 0 when every fault is killed, 1 otherwise, 2 for a
    usage error (one line), 3 when the emulator cannot be built (nothing tested)."""
    from mdlri_conformance.backends.faults import UnknownFault, check
    prog = "mdlri-conformance faults"
    err = "mdlri-conformance: error: faults:"  # the one prefix of every usage error
    if ns.list:
        for name in default_faults(ns.backend):
            print(f"{name:<30} {FAULTS[name]}")
        return 0
    pool = default_faults(ns.backend)
    try:
        chosen = sorted(check(ns.only, pool)) if ns.only else pool
    except UnknownFault as exc:
        print(f"{err} {exc}", file=sys.stderr)
        return 2
    if ns.jobs < 1:
        print(f"{err} -j {ns.jobs}: run at least 1 fault at a time", file=sys.stderr)
        return 2
    extra = ["-k", ns.keyword] if ns.keyword else []
    why = bad_expression(ns.keyword) if ns.keyword else None
    if why:
        print(f"{err} -k {ns.keyword!r}: {why}", file=sys.stderr)
        return 2
    acl_lib = "emulator" if ns.backend == "acl" else None
    if ns.backend == "acl":
        from mdlri_conformance.backends.acl import preflight
        why = preflight("emulator")  # builds it; loads nothing in this process
        if why:
            print(f"{prog}: NOTHING TESTED: acl emulator: {why}", file=sys.stderr)
            return 3
    out = Path(ns.out) if ns.out else (
        Path("reports") / "out" / (time.strftime("%Y%m%d-%H%M%S") + f"-faults-{ns.backend}"))
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        print(f"{err} --out {out}: exists and is not an empty directory (a kill "
              "matrix never writes into another run's directory)", file=sys.stderr)
        return 2
    selected = f", specs -k {ns.keyword!r}" if ns.keyword else ""
    say(f"kill matrix: {len(chosen)} faults on {ns.backend}, -j {ns.jobs}, profile "
        f"{ns.profile}, spec timeout {ns.spec_timeout:g} s{selected} -> {out}; a line as each "
        "run ends")
    matrix = run_matrix(chosen, out, backend=ns.backend, acl_lib=acl_lib, jobs=ns.jobs,
                        profile=ns.profile, spec_timeout=ns.spec_timeout, extra=extra)
    if not matrix["baseline"]["specs"]:
        print(f"{prog}: NOTHING TESTED: the baseline ran no spec"
              + (f" (-k {ns.keyword!r} selects none)" if ns.keyword else ""), file=sys.stderr)
        return 3
    for line in format_table(matrix):
        print(line)
    print(f"matrix: {out / 'kill_matrix.json'} (report {out / 'index.html'})")
    return 0 if not matrix["summary"]["survivors"] else 1


def add_parser(sub: Any) -> None:
    """The ``faults`` subcommand of the CLI."""
    from ..watchdog import spec_timeout_value
    fp = sub.add_parser("faults", help="kill matrix: run the suite once per catalogued fault",
                        description="Run the specs on a deliberately broken backend, once per "
                                    "fault of backends/faults.py (in parallel), and report "
                                    "which specs kill each fault, how fast, with how many "
                                    "generated examples and how small a counterexample; writes "
                                    "kill_matrix.json and kill_matrix.html.")
    fp.add_argument("--backend", choices=("sim", "acl"), default="sim",
                    help="sim (default) or acl (the host emulator, its faults only)")
    fp.add_argument("-j", "--jobs", type=int, default=2, help="fault runs at once (default 2)")
    fp.add_argument("--only", nargs="+", metavar="NAME", help="only these faults")
    fp.add_argument("-k", dest="keyword", metavar="EXPRESSION",
                    help="only the specs matching this pytest -k expression, e.g. \"generated or "
                         "stateful\" (what the generated tier alone kills)")
    fp.add_argument("--list", action="store_true", help="print the catalogue and exit")
    fp.add_argument("--profile", default="ci", choices=("ci", "dev", "deep", "hw"))
    fp.add_argument("--spec-timeout", type=spec_timeout_value, default=SPEC_TIMEOUT_S,
                    help=f"per-spec watchdog in the fault runs (default {SPEC_TIMEOUT_S:g} s)")
    fp.add_argument("--out", help="output directory (default reports/out/<time>-faults-<backend>)")
    fp.set_defaults(func=_cmd_faults)


__all__ = ["KILL_OUTCOMES", "RunSpec", "add_parser", "analyse", "baseline_line", "default_faults",
           "fault_line", "format_table", "read_rows", "render_html", "run_matrix", "say",
           "summarise"]
