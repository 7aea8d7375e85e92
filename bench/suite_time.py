"""Whole-suite wall time on the simulator, serial and on 2 workers, and time per area (run on
demand, not part of the test run).

    python bench/suite_time.py [--workers 2] [--profile ci] [--dist worksteal]
                               [--bytecode cache|env]

Runs ``pytest conformance/specs`` twice in fresh subprocesses (``-n 0``, then ``-n W``), each
with its own report directory, and prints both wall times, the speed-up, and the per-area time
from the serial run's ``results.jsonl`` durations (the sum of the specs' call times per area,
with its share of the total). Targets: ``-n 2`` at least 1.6x faster than ``-n 0``, and the
``ci`` suite on the simulator in <= 60 s wall on 2 cores.

Bytecode: every pytest process imports and assertion-rewrites the suite's ~170 modules. With
Python's bytecode cache (its default, and what ``pip install`` sets up) that is read from
``__pycache__``; with ``PYTHONDONTWRITEBYTECODE`` set each process compiles them again, about
3 s per process, which an ``-n 2`` run pays three times (controller and two workers).
``--bytecode cache`` (default) runs the suite with the cache on, after one warm-up run that
fills it; ``--bytecode env`` keeps this environment as it is. The mode is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Callable, Sequence

REPO = Path(__file__).resolve().parent.parent
#: -n 2 against -n 0 on the whole ci suite
SPEEDUP_TARGET = 1.6
SPECS = REPO / "conformance" / "specs"


def suite_env(bytecode: str) -> dict[str, str]:
    """The suite processes' environment: ``cache`` drops PYTHONDONTWRITEBYTECODE."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    if bytecode == "cache":
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def bytecode_line(bytecode: str) -> str:
    """What the measurement ran with, for the printout."""
    if bytecode == "cache":
        return ("bytecode: Python's cache on (warmed by one run first)" +
                ("; this environment sets PYTHONDONTWRITEBYTECODE, dropped for the suite runs"
                 if os.environ.get("PYTHONDONTWRITEBYTECODE") else ""))
    return ("bytecode: as this environment has it (PYTHONDONTWRITEBYTECODE="
            f"{os.environ.get('PYTHONDONTWRITEBYTECODE', '') or 'unset'})")


def run_suite(workers: int, profile: str, out: Path, extra: Sequence[str] = (),
              env: dict[str, str] | None = None) -> tuple[float, int]:
    """(wall seconds, pytest exit code) of one suite run into ``out``."""
    cmd = [sys.executable, "-m", "pytest", str(SPECS), "-p", "no:cacheprovider", "-q",
           "--tb=no", "--profile", profile, "--report-dir", str(out), "-n", str(workers),
           *extra]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True,
                          env=env if env is not None else suite_env("env"))
    return time.monotonic() - t0, proc.returncode


def per_area(out: Path) -> dict[str, tuple[int, float]]:
    """area -> (specs, summed duration) from a run's results.jsonl."""
    acc: dict[str, list[float]] = defaultdict(list)
    for line in (out / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        acc[row["area"]].append(float(row.get("duration_s") or 0.0))
    return {a: (len(v), sum(v)) for a, v in sorted(acc.items())}


def main(argv: list[str] | None = None, emit: Callable[[str], None] = print) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--profile", default="ci")
    ap.add_argument("--dist", choices=("load", "loadscope", "loadfile", "worksteal"),
                    help="xdist --dist of the parallel run (default: the suite plugin's, "
                         "worksteal)")
    ap.add_argument("--bytecode", choices=("cache", "env"), default="cache",
                    help="cache (default): Python's bytecode cache on, warmed first; env: "
                         "this environment as it is")
    ns = ap.parse_args(argv)
    if ns.workers < 1:
        ap.error("--workers must be at least 1")
    env = suite_env(ns.bytecode)
    with tempfile.TemporaryDirectory(prefix="mdlri-bench-") as tmp:
        serial_dir, par_dir = Path(tmp) / "n0", Path(tmp) / f"n{ns.workers}"
        if ns.bytecode == "cache":
            run_suite(0, ns.profile, Path(tmp) / "warm", ["-k", "test_abort_null"], env)
        t0, rc0 = run_suite(0, ns.profile, serial_dir, env=env)
        t2, rc2 = run_suite(ns.workers, ns.profile, par_dir,
                            ["--dist", ns.dist] if ns.dist else [], env)
        areas = per_area(serial_dir)
    emit(bytecode_line(ns.bytecode))
    total = sum(d for _, d in areas.values()) or 1.0
    emit(f"suite wall time on sim ({ns.profile}): -n 0 {t0:.1f} s (exit {rc0}), "
         f"-n {ns.workers}{' --dist ' + ns.dist if ns.dist else ''} {t2:.1f} s (exit {rc2}); "
         f"speed-up {t0 / t2:.2f}x (target >= "
         f"{SPEEDUP_TARGET:g}x: {'met' if t0 / t2 >= SPEEDUP_TARGET else 'MISSED'}); "
         f"target <= 60 s on 2 cores: {'met' if t2 <= 60 else 'MISSED'}")
    emit(f"per-area time (serial run, sum of spec durations {total:.1f} s):")
    for area, (n, d) in sorted(areas.items(), key=lambda kv: -kv[1][1]):
        emit(f"  {area:<16} {n:>4} specs {d:>7.2f} s {100 * d / total:>5.1f}%")
    return {"serial_s": t0, "parallel_s": t2, "speedup": t0 / t2}


if __name__ == "__main__":
    main()
