"""How many pytest-xdist workers ``mdlri-conformance run -n N`` starts.

* ``-n auto`` / ``-n logical``: xdist's own count (``$PYTEST_XDIST_AUTO_NUM_WORKERS``, else
  the CPUs this process may use); the line printed before the run says what it chose.
* Never more workers than selected specs: every worker starts, loads the backend and probes
  it even when it gets no spec (``-n 32`` for 11 specs on 2 cores took minutes). With more
  than one worker asked for, the selected specs are counted first: a collection only
  (``pytest --collect-only`` with run's selection, in a subprocess of its own, about a
  second), and the count is cut down to them.
* A count the machine cannot hold is refused in one line (exit 2) before any worker starts
  (``-n 3000`` ended minutes later in an INTERNALERROR from execnet): this process keeps
  :data:`FDS_PER_WORKER` open files per worker (``RLIMIT_NOFILE``), each worker is a process
  of :data:`TASKS_PER_WORKER` threads (``RLIMIT_NPROC`` counts threads) and needs about
  :data:`MB_PER_WORKER` MB of memory (``MemAvailable``). Measured on the simulator: 3.3 file
  descriptors in the controller, 4 threads and 80-85 MB per worker.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

#: open files the xdist controller keeps per worker (its pipes), with room to spare
FDS_PER_WORKER = 6
#: the files this process keeps open anyway (its own, the report's, pytest's)
FDS_BASE = 64
#: processes and threads a worker adds to the user's count (RLIMIT_NPROC counts threads)
TASKS_PER_WORKER = 8
#: resident memory of one worker (the simulator's is 80-85 MB)
MB_PER_WORKER = 100


def auto_count(value: str) -> tuple[int, str]:
    """What xdist's ``-n auto`` / ``-n logical`` starts, and how it was found."""
    env = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    try:
        from xdist.plugin import pytest_xdist_auto_num_workers
        n = int(pytest_xdist_auto_num_workers(SimpleNamespace(  # type: ignore[arg-type]
            option=SimpleNamespace(numprocesses=value))))
    except Exception:  # noqa: BLE001 - xdist moved it: count the CPUs as it does
        n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
            os.cpu_count() or 1)
    how = ("$PYTEST_XDIST_AUTO_NUM_WORKERS" if env and env.strip().isdigit()
           else f"{n} CPU(s)")
    return max(n, 1), how


def limit_problem(n: int) -> str | None:
    """Why ``n`` workers cannot run on this machine (one line), None when they can."""
    soft_files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    need = FDS_BASE + FDS_PER_WORKER * n
    if soft_files != resource.RLIM_INFINITY and need > soft_files:
        most = max((soft_files - FDS_BASE) // FDS_PER_WORKER, 0)
        return (f"-n {n}: the open-file limit (ulimit -n {soft_files}) holds at most {most} "
                f"worker(s) ({FDS_PER_WORKER} files each)")
    soft_tasks = resource.getrlimit(resource.RLIMIT_NPROC)[0]
    if soft_tasks != resource.RLIM_INFINITY and os.geteuid() != 0 \
            and TASKS_PER_WORKER * n > soft_tasks:
        return (f"-n {n}: the process limit (ulimit -u {soft_tasks}) holds at most "
                f"{soft_tasks // TASKS_PER_WORKER} worker(s) ({TASKS_PER_WORKER} threads each)")
    free_mb = _available_mb()
    if free_mb is not None and MB_PER_WORKER * n > free_mb:
        return (f"-n {n}: {free_mb} MB of memory available holds at most "
                f"{free_mb // MB_PER_WORKER} worker(s) (about {MB_PER_WORKER} MB each)")
    return None


def _available_mb() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def count_selected(collect_args: list[str]) -> int | None:
    """The number of specs a run with these pytest arguments selects (a collection only,
    in a subprocess, its records in a directory of its own); None when it cannot tell."""
    tmp = Path(tempfile.mkdtemp(prefix="mdlri-count-"))
    try:
        res = subprocess.run([sys.executable, "-m", "pytest", *collect_args, "--collect-only",
                              "-q", "-n", "0", "--no-probe", "-p", "no:allure_pytest",
                              "--report-dir", str(tmp / "run")],
                             capture_output=True, text=True, timeout=300,
                             env={k: v for k, v in os.environ.items()
                                  if k != "PYTEST_XDIST_WORKER"})
        data = json.loads((tmp / "run" / "collected.json").read_text(encoding="utf-8"))
        return len(data) if isinstance(data, list) else None
    except (OSError, ValueError, subprocess.SubprocessError):
        # nothing collected (collected.json absent): the run itself says NOTHING TESTED
        return 0 if "res" in locals() and res.returncode == 5 else None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def choose(ns: argparse.Namespace, collect_args: list[str]) -> tuple[int, str] | str:
    """The number of workers for ``run -n`` and the line that says why (``""`` when the
    count was taken as given), or the one-line refusal."""
    asked = ns.workers if ns.workers is not None else "1"
    notes: list[str] = []
    if asked in ("auto", "logical"):
        n, how = auto_count(asked)
        notes.append(f"-n {asked}: {how}")
    else:
        n = int(asked)
    if n > 1:
        specs = count_selected(collect_args)
        if specs is not None and specs < n:
            notes.append(f"{'only ' if notes else f'-n {n}: only '}{specs} spec(s) selected")
            n = max(specs, 1)  # none: one worker, and the run says NOTHING TESTED
    why = limit_problem(n)
    if why:
        return f"-n {asked}" + (f" ({n} worker(s) wanted)" if str(n) != asked else "") \
            + why[len(f"-n {n}"):]
    return n, (f"workers: {n} ({'; '.join(notes)})" if notes else "")


__all__ = ["FDS_PER_WORKER", "MB_PER_WORKER", "TASKS_PER_WORKER", "auto_count", "choose",
           "count_selected", "limit_problem"]
