"""The kill matrix's figures: per fault the seconds until it is found, the median and the
maximum, the kill rate and the largest shrunk counterexample (run on demand, not part of the
test run).

    python bench/kill_times.py --matrix reports/out/.../kill_matrix.json
    python bench/kill_times.py --run [--backend sim] [-j 2] [-k EXPR] [--only NAME ...]

With ``--matrix`` it reads a ``kill_matrix.json`` written by ``mdlri-conformance faults``;
with ``--run`` it runs the matrix first (conformance.framework.power.killmatrix.run_matrix, a
temporary output directory) over the specs ``-k`` selects, by default the generated tier
alone (``generated or stateful``: the generated task graphs and the stateful machine), so
each fault's time is the seconds until the generated tier finds it (``time_to_kill_s`` of
the matrix: the specs before the first killer plus that spec's time to its first failing
example). Targets: median time to kill <= 3 s, maximum <= 30 s, every shrunk
counterexample <= 5 tasks, 100% killed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mdlri_conformance.conformance.framework.power import killmatrix  # noqa: E402

#: the generated tier: the generated task-graph specs and the stateful machine
GENERATED_TIER = "generated or stateful"
MEDIAN_TARGET_S, MAX_TARGET_S, SHRUNK_TARGET = 3.0, 30.0, 5


def combine(matrices: list[dict[str, Any]]) -> dict[str, Any]:
    """Several kill matrices over disjoint faults, read as one: the faults side by side, the
    summary made again over all of them, the walls added. They must agree on backend,
    profile, selected specs and spec timeout, or their times would not compare."""
    first = matrices[0]
    keys = ("backend", "profile", "pytest_args", "spec_timeout_s")
    for m in matrices[1:]:
        differ = [k for k in keys if m.get(k) != first.get(k)]
        if differ:
            raise ValueError(f"matrices differ in {', '.join(differ)}")
    names = [e["fault"] for m in matrices for e in m["faults"]]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"a fault is in two matrices: {', '.join(twice)}")
    if len(matrices) == 1:
        return first
    entries = [e for m in matrices for e in m["faults"]]
    return {**first, "faults": entries, "summary": killmatrix.summarise(entries),
            "wall_s": round(sum(float(m["wall_s"]) for m in matrices), 1)}


def figures(matrix: dict[str, Any], emit: Callable[[str], None] = print) -> dict[str, Any]:
    """Print every fault's time to kill, then the headline figures; returns the summary."""
    s = matrix["summary"]
    selected = " ".join(matrix.get("pytest_args") or []) or "all specs"
    emit(f"kill matrix ({matrix['backend']}, profile {matrix['profile']}, {selected}, spec "
         f"timeout {matrix['spec_timeout_s']:g} s, -j {matrix['jobs']}, wall {matrix['wall_s']} s)")
    for e in sorted(matrix["faults"], key=lambda e: (e["time_to_kill_s"] is None,
                                                     e["time_to_kill_s"] or 0.0)):
        if not e["killed"]:
            emit(f"  {e['fault']:<30} SURVIVED ({e['specs_run']} specs)")
            continue
        first = e["killers"][0]
        shrunk = "" if e["shrunk_tasks"] is None else f", shrunk to {e['shrunk_tasks']} tasks"
        emit(f"  {e['fault']:<30} {e['time_to_kill_s']:>7.2f} s  "
             f"({first['spec'].split('::')[-1]}, {first['outcome']}{shrunk})")
    emit(f"  kill rate {s['killed']}/{s['faults']} = {100 * s['kill_rate']:.1f}%"
         + (f"; SURVIVED: {', '.join(s['survivors'])}" if s["survivors"] else ""))
    med, mx, size = s["median_time_to_kill_s"], s["max_time_to_kill_s"], s["max_shrunk_tasks"]
    emit(f"  time to kill: median {med} s (target <= {MEDIAN_TARGET_S:g}: "
         f"{_ok(med, MEDIAN_TARGET_S)}), max {mx} s (target <= {MAX_TARGET_S:g}: "
         f"{_ok(mx, MAX_TARGET_S)})")
    emit(f"  largest shrunk counterexample: {size} tasks (target <= {SHRUNK_TARGET}: "
         f"{_ok(size, SHRUNK_TARGET)})")
    return s


def _ok(value: float | None, limit: float) -> str:
    return "n/a" if value is None else ("met" if value <= limit else "MISSED")


def run(backend: str = "sim", jobs: int = 2, keyword: str = GENERATED_TIER,
        only: list[str] | None = None,
        spec_timeout: float = killmatrix.SPEC_TIMEOUT_S, *, first_kill: bool = False,
        seed: int | None = None,
        run_limit: float = killmatrix.RUN_LIMIT_S) -> dict[str, Any]:
    """Run the kill matrix over the specs ``keyword`` selects; returns the matrix.

    ``first_kill`` stops each fault run at its first failing spec (pytest ``-x``: the time
    to the first kill is all the figures need; a CHANGED row, not a pytest failure, lets the
    run go on), ``seed`` gives every run the same spec order (pytest-randomly's seed: two
    codes compared side by side meet their specs in the same order), ``run_limit`` cuts a
    fault run after that many seconds (a fault not found by then is a survivor)."""
    faults = only or killmatrix.default_faults(backend)
    extra = ["-k", keyword] if keyword else []
    if first_kill:
        extra.append("-x")
    if seed is not None:
        extra += ["-p", "randomly", f"--randomly-seed={seed}"]
    with tempfile.TemporaryDirectory(prefix="mdlri-kill-") as tmp:
        return killmatrix.run_matrix(faults, Path(tmp), backend=backend,
                                     acl_lib="emulator" if backend == "acl" else None,
                                     jobs=jobs, spec_timeout=spec_timeout, extra=extra,
                                     progress=lambda _m: None, run_limit_s=run_limit)


def main(argv: list[str] | None = None, emit: Callable[[str], None] = print) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matrix", help="an existing kill_matrix.json")
    ap.add_argument("--run", action="store_true", help="run the matrix now")
    ap.add_argument("--backend", default="sim", choices=("sim", "acl"))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("-k", dest="keyword", default=GENERATED_TIER,
                    help=f"specs of the --run matrix (default {GENERATED_TIER!r}; '' = all)")
    ap.add_argument("--only", nargs="+")
    ap.add_argument("--spec-timeout", type=float, default=killmatrix.SPEC_TIMEOUT_S,
                    help="per-spec watchdog of the --run matrix (default "
                         f"{killmatrix.SPEC_TIMEOUT_S:g} s; raise it on a loaded machine)")
    ap.add_argument("--first-kill", action="store_true",
                    help="stop each fault run at its first failing spec (pytest -x)")
    ap.add_argument("--seed", type=int, help="the same spec order in every run "
                                             "(pytest-randomly's seed)")
    ap.add_argument("--run-limit", type=float, default=killmatrix.RUN_LIMIT_S,
                    help="seconds after which a fault run is stopped (default "
                         f"{killmatrix.RUN_LIMIT_S:g}): a fault not found by then survives")
    ap.add_argument("--out", help="also write the matrix to this kill_matrix.json")
    ns = ap.parse_args(argv)
    if bool(ns.matrix) == bool(ns.run):
        ap.error("give exactly one of --matrix FILE and --run")
    if ns.matrix:
        path = Path(ns.matrix)
        try:
            matrix = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            ap.error(f"--matrix {path}: {exc}")
        return figures(matrix, emit)
    if ns.jobs < 1 or ns.spec_timeout < 1 or ns.run_limit < 1:
        ap.error("-j must be at least 1, --spec-timeout and --run-limit at least 1 s")
    matrix = run(ns.backend, ns.jobs, ns.keyword, ns.only, ns.spec_timeout,
                 first_kill=ns.first_kill, seed=ns.seed, run_limit=ns.run_limit)
    if ns.out:
        Path(ns.out).write_text(json.dumps(matrix, indent=2) + "\n", encoding="utf-8")
    return figures(matrix, emit)


if __name__ == "__main__":
    main()
