"""The kill matrix's figures: kill rate, median and maximum time to kill, largest shrunk
counterexample (run on demand, not part of the test run).

    python bench/kill_times.py [--matrix reports/out/.../kill_matrix.json]
    python bench/kill_times.py --run [--backend sim] [-j 2] [--only NAME ...]

With ``--matrix`` it reads a ``kill_matrix.json`` written by ``mdlri-conformance faults``;
with ``--run`` it runs the matrix first (conformance.killmatrix.run_matrix, a temporary
output directory). Targets: median time to kill <= 2 s, maximum <= 30 s, every
shrunk counterexample <= 5 tasks, 100% killed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mdlri_conformance.conformance.framework import killmatrix  # noqa: E402


def figures(matrix: dict[str, Any], emit: Callable[[str], None] = print) -> dict[str, Any]:
    """Print the matrix's headline figures and the slowest kills."""
    s = matrix["summary"]
    emit(f"kill matrix ({matrix['backend']}, profile {matrix['profile']}, spec timeout "
         f"{matrix['spec_timeout_s']:g} s, -j {matrix['jobs']}, wall {matrix['wall_s']} s)")
    emit(f"  kill rate {s['killed']}/{s['faults']} = {100 * s['kill_rate']:.1f}%"
         + (f"; SURVIVED: {', '.join(s['survivors'])}" if s["survivors"] else ""))
    med, mx, size = s["median_time_to_kill_s"], s["max_time_to_kill_s"], s["max_shrunk_tasks"]
    emit(f"  time to kill: median {med} s (target <= 2: {_ok(med, 2)}), max {mx} s "
         f"(target <= 30: {_ok(mx, 30)})")
    emit(f"  largest shrunk counterexample: {size} tasks (target <= 5: {_ok(size, 5)})")
    slow = sorted((e for e in matrix["faults"] if e["killed"]),
                  key=lambda e: -e["time_to_kill_s"])[:5]
    for e in slow:
        emit(f"  slowest: {e['fault']:<28} {e['time_to_kill_s']:>7.2f} s "
             f"({e['killers'][0]['spec'].split('::')[-1]}, {e['killers'][0]['outcome']})")
    return s


def _ok(value: float | None, limit: float) -> str:
    return "n/a" if value is None else ("met" if value <= limit else "MISSED")


def main(argv: list[str] | None = None, emit: Callable[[str], None] = print) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matrix", help="an existing kill_matrix.json")
    ap.add_argument("--run", action="store_true", help="run the matrix now")
    ap.add_argument("--backend", default="sim", choices=("sim", "acl"))
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--only", nargs="+")
    ns = ap.parse_args(argv)
    if ns.matrix and not ns.run:
        return figures(json.loads(Path(ns.matrix).read_text()), emit)
    faults = ns.only or killmatrix.default_faults(ns.backend)
    with tempfile.TemporaryDirectory(prefix="mdlri-kill-") as tmp:
        matrix = killmatrix.run_matrix(faults, Path(tmp), backend=ns.backend,
                                       acl_lib="emulator" if ns.backend == "acl" else None,
                                       jobs=ns.jobs, progress=lambda _m: None)
    return figures(matrix, emit)


if __name__ == "__main__":
    main()
