"""Running mutants of the simulator against the specs (``mdlri-conformance mutate``).

Nothing is mutated in place: each worker owns a *sandbox*, a temporary copy of the package
(``<tmp>/mdlri_conformance/{backends,conformance,kernel,reports}`` and ``pyproject.toml``, so
node ids read as in the checkout), imported through ``PYTHONPATH`` ahead of the installed one.
A mutant is written into its sandbox's copy of the module, run, and the original text written
back; the copy is byte-compiled with checked-hash pycs and the runs write none, so a mutant
is never read from a stale ``.pyc``.

1. **Baseline and map.** One run of the selected specs on the unmutated sandbox under
   coverage.py with one context per spec (:mod:`.mutation_coverage`): which specs pass, their
   clauses and durations, and which spec executes which simulator line.
2. **Selection.** A mutant runs only the baseline-passing specs that execute the first line of
   its statement (or its own line), cheapest first. A line executed only outside every spec
   (import, class body, probes) runs every passing spec. A line no passing spec executes is
   ``unreached`` without a run.
3. **Run.** ``python -m pytest NODEIDS -x -p no:randomly -n 0`` in the sandbox, in its own
   process group, with a deadline; the spec watchdog and the deadline grow with the selected
   specs' baseline times (:data:`SLACK`), so a slow machine does not make timeout kills. The mutant is **killed** when a spec row is FAIL, ERROR,
   CHANGED or CRASH (the killing spec is the first such row), or when the run stops before
   every selected spec reported and no row says why (``crash``: e.g. the simulator no
   longer imports);
   ``timeout`` when a row is TIMEOUT or the deadline passes (counted as killed); else
   ``survived`` (also when the selected specs turned UNSUPPORTED, by a 207000 answer or a
   capability the probes removed: they did not tell the mutant from a backend without it). Mutants left when the time budget is spent are ``not-run``.
"""

from __future__ import annotations

import compileall
import os
import py_compile
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from queue import Queue
from typing import Any, Callable, Iterator, Sequence

from ..items import SPEC_DIR
from .killmatrix import KILL_OUTCOMES, read_rows
from .mutants import Mutant, apply
from .mutation_coverage import ENV_DATA, ENV_SOURCE, IMPORT_TIME, line_map

#: the checkout's package folders (pyproject ``package-dir``)
REPO = SPEC_DIR.parents[1]
FOLDERS = ("backends", "conformance", "kernel", "reports")
#: the mutated code, relative to the package root
SIM = Path("backends") / "sim"
SPECS = "conformance/specs"
PLUGIN = "mdlri_conformance.conformance.framework.power.mutation_coverage"
#: the simulator's expectations: every capability required, so a mutant answering 207000 fails
EXPECTATIONS = Path(__file__).resolve().parents[1] / "expectations" / "sim.toml"
STATUSES = ("killed", "timeout", "survived", "unreached", "not-run")
#: per-spec watchdog in mutant runs, at least (a mutant that loops costs this much)
SPEC_TIMEOUT_S = 10.0
#: a mutant run's watchdog is at least this many times the slowest selected spec's baseline
#: time, and its deadline this many times their sum (the baseline ran under coverage, slower
#: than a mutant run, so a spec that is only slow on a loaded machine is not a timeout kill)
SLACK = 3.0
#: deadline of one mutant run, at least
MUTANT_TIMEOUT_S = 120.0
#: per-spec watchdog of the baseline run (coverage tracing slows the long specs several-fold)
BASELINE_SPEC_TIMEOUT_S = 120.0
#: deadline of the baseline run (the whole selection under coverage)
BASELINE_TIMEOUT_S = 1800.0
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", "out", "build",
                                 ".pytest_cache")


class Sandbox:
    """A private copy of the package that mutants are written into and run from."""

    def __init__(self, source: Path = REPO) -> None:
        self.top = Path(tempfile.mkdtemp(prefix="mdlri-mutate-"))
        self.root = self.top / "mdlri_conformance"
        self.root.mkdir()
        for name in FOLDERS:
            shutil.copytree(source / name, self.root / name, ignore=_IGNORE)
        ini = source / "pyproject.toml"  # pytest's rootdir: node ids as in the checkout
        if ini.is_file():
            shutil.copy2(ini, self.root / "pyproject.toml")
        else:  # an installed package has none
            (self.root / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
        compileall.compile_dir(str(self.root), quiet=1, workers=1,
                               invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)

    @property
    def sim(self) -> Path:
        return self.root / SIM

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if k not in (ENV_DATA, "PYTEST_PLUGINS", "PYTEST_ADDOPTS")}
        env.update(PYTHONPATH=str(self.top), PYTHONDONTWRITEBYTECODE="1", **extra)
        return env

    @contextmanager
    def mutated(self, m: Mutant, original: str) -> Iterator[None]:
        """The mutant's module changed in this sandbox for the duration of the block."""
        path = self.sim / m.module
        path.write_text(apply(original, m), encoding="utf-8")
        try:
            yield
        finally:
            path.write_text(original, encoding="utf-8")

    def remove(self) -> None:
        shutil.rmtree(self.top, ignore_errors=True)


def pytest_command(targets: Sequence[str], report_dir: Path, spec_timeout: float,
                   extra: Sequence[str] = ()) -> list[str]:
    return [sys.executable, "-m", "pytest", *targets, "-p", "no:randomly",
            "-p", "no:cacheprovider", "--backend", "sim", "--profile", "ci", "-n", "0",
            "-q", "--tb=no", "--report-dir", str(report_dir),
            "--spec-timeout", f"{spec_timeout:g}", "--expectations", str(EXPECTATIONS), *extra]


_running: set[subprocess.Popen[str]] = set()
_running_lock = threading.Lock()


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def stop_runs() -> None:
    """Kill the process group of every run under way (an interrupted ``mutate``)."""
    with _running_lock:
        for proc in list(_running):
            _kill_group(proc)


def run_group(cmd: list[str], cwd: Path, env: dict[str, str], limit_s: float
              ) -> tuple[int | None, str]:
    """Run a command in a process group of its own (own-process children included); (exit
    code or None on deadline, output tail)."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    with _running_lock:
        _running.add(proc)
    try:
        out, _ = proc.communicate(timeout=limit_s)
        return proc.returncode, out[-2000:]
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, _ = proc.communicate()
        return None, (out or "")[-2000:]
    finally:
        with _running_lock:
            _running.discard(proc)


@dataclass
class Baseline:
    """The unmutated run: passing specs with clauses and durations, and the line map."""

    rows: list[dict[str, Any]]
    lines: dict[str, dict[int, set[str]]]
    exit: int | None
    wall_s: float
    tail: str = ""
    passing: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.passing = {r["nodeid"]: r for r in self.rows if r.get("outcome") == "PASS"}

    def covering(self, m: Mutant) -> list[str] | None:
        """The passing specs that execute the mutant's statement, cheapest first; None when
        the statement runs only outside every spec (then every passing spec is selected)."""
        by_line = self.lines.get(m.module, {})
        found: set[str] = set()
        for line in {m.stmt_line, m.line}:
            found |= by_line.get(line, set())
        if found == {IMPORT_TIME}:
            return None
        specs = [n for n in found if n in self.passing]
        return sorted(specs, key=self._cost)

    def all_specs(self) -> list[str]:
        return sorted(self.passing, key=self._cost)

    def clauses(self, specs: Sequence[str]) -> list[str]:
        return sorted({c for n in specs for c in self.passing[n].get("clauses", [])})

    def limits(self, specs: Sequence[str], spec_timeout: float, limit_s: float
               ) -> tuple[float, float]:
        """(per-spec watchdog, run deadline) for a run of ``specs``: at least the given
        ones, and :data:`SLACK` times the slowest spec and the whole selection's baseline."""
        times = [self._cost(n)[0] for n in specs]
        watchdog = max(spec_timeout, round(SLACK * max(times, default=0.0), 1))
        return (0.0 if spec_timeout == 0 else watchdog,  # 0: the watchdog is off
                max(limit_s, round(SLACK * sum(times) + 30.0, 1)))

    def _cost(self, nodeid: str) -> tuple[float, str]:
        return float(self.passing[nodeid].get("duration_s") or 0.0), nodeid


def run_baseline(box: Sandbox, out: Path, keyword: str | None,
                 spec_timeout: float = BASELINE_SPEC_TIMEOUT_S) -> Baseline:
    """Run the specs (``-k keyword``) once on the unmutated sandbox under coverage."""
    report = out / "baseline"
    data = out / "coverage" / ".coverage"
    data.parent.mkdir(parents=True, exist_ok=True)
    extra = ["-k", keyword] if keyword else []
    env = box.env(**{ENV_DATA: str(data), ENV_SOURCE: str(box.sim), "PYTEST_PLUGINS": PLUGIN})
    t0 = time.monotonic()
    code, tail = run_group(pytest_command([SPECS], report, spec_timeout, extra), box.root, env,
                           BASELINE_TIMEOUT_S)
    wall = round(time.monotonic() - t0, 2)
    lines = line_map(data, box.sim) if any(data.parent.iterdir()) else {}
    return Baseline(read_rows(report), lines, code, wall, tail)


def classify(code: int | None, rows: list[dict[str, Any]], tail: str, selected: int
             ) -> dict[str, Any]:
    """A mutant's status from its run's exit code, rows and the number of selected specs.

    The runs use the simulator's expectations, which require every capability: a spec
    UNSUPPORTED on one (the mutant answered 207000, or the probes removed it) fails the gate
    and kills the mutant. Every other selected spec reporting without a kill outcome is
    ``survived``; UNSUPPORTED rows on no required capability are counted in the entry."""
    for r in rows:
        if r.get("required"):
            return {"status": "killed", "kill": "UNSUPPORTED", "killer": r["nodeid"],
                    "message": (r.get("message") or "")[:300]}
        if r.get("outcome") in KILL_OUTCOMES:
            status = "timeout" if r["outcome"] == "TIMEOUT" else "killed"
            return {"status": status, "kill": r["outcome"], "killer": r["nodeid"],
                    "message": (r.get("message") or "")[:300]}
    if code is None:
        return {"status": "timeout", "kill": "deadline", "killer": None,
                "message": "the run passed its deadline"}
    if code != 0 and len(rows) < selected:
        last = next((s for s in reversed(tail.strip().splitlines()) if s.strip()), "")
        return {"status": "killed", "kill": "crash", "killer": None,
                "message": f"pytest exit {code} after {len(rows)} of {selected} specs, no "
                           f"failing row: {last[:240]}"}
    hidden = sum(1 for r in rows if r.get("outcome") == "UNSUPPORTED")
    note = (f"{hidden} of {len(rows)} specs UNSUPPORTED under this mutant (a 207000 answer, or "
            f"a capability the probes removed; pytest exit {code})") if hidden else ""
    return {"status": "survived", "kill": None, "killer": None, "message": note}


def run_mutant(box: Sandbox, m: Mutant, original: str, specs: list[str], work: Path,
               limit_s: float, spec_timeout: float) -> dict[str, Any]:
    """Run the selected specs against one mutant (``-x``: the first failure ends it)."""
    report = work / m.ident.replace("/", "_").replace(":", "_")[:120]
    t0 = time.monotonic()
    with box.mutated(m, original):
        code, tail = run_group(pytest_command(specs, report, spec_timeout, ["-x"]), box.root,
                               box.env(), limit_s)
    rows = read_rows(report)
    shutil.rmtree(report, ignore_errors=True)
    res = classify(code, rows, tail, len(specs))
    res.update(specs_run=len(rows), wall_s=round(time.monotonic() - t0, 2))
    return res


def run_mutants(mutants: Sequence[Mutant], sources: dict[str, str], baseline: Baseline,
                boxes: Sequence[Sandbox], work: Path, *, budget_s: float | None,
                limit_s: float = MUTANT_TIMEOUT_S, spec_timeout: float = SPEC_TIMEOUT_S,
                progress: Callable[[int, int, dict[str, Any]], None] | None = None
                ) -> list[dict[str, Any]]:
    """Classify every mutant, ``len(boxes)`` at a time; the entries keep the input order."""
    t0 = time.monotonic()
    free: Queue[Sandbox] = Queue()
    for b in boxes:
        free.put(b)
    done = [0]
    lock = threading.Lock()
    stop = threading.Event()
    work.mkdir(parents=True, exist_ok=True)

    def one(m: Mutant) -> dict[str, Any]:
        covering = baseline.covering(m)
        specs = baseline.all_specs() if covering is None else covering
        entry: dict[str, Any] = {**m.to_json(), "selection": len(specs),
                                 "import_time": covering is None,
                                 "clauses": [] if covering is None
                                 else baseline.clauses(covering)}
        if not specs:
            entry.update(status="unreached", kill=None, killer=None, message="", specs_run=0,
                         wall_s=0.0)
        elif stop.is_set() or budget_s is not None and time.monotonic() - t0 > budget_s:
            entry.update(status="not-run", kill=None, killer=None,
                         message="interrupted" if stop.is_set() else "time budget spent",
                         specs_run=0, wall_s=0.0)
        else:
            watchdog, deadline = baseline.limits(specs, spec_timeout, limit_s)
            box = free.get()
            try:
                entry.update(run_mutant(box, m, sources[m.module], specs, work, deadline,
                                        watchdog))
            finally:
                free.put(box)
        with lock:
            done[0] += 1
            if progress:
                progress(done[0], len(mutants), entry)
        return entry

    pool = ThreadPoolExecutor(max_workers=len(boxes))
    try:
        return list(pool.map(one, mutants))
    except BaseException:  # Ctrl-C: the runs are in process groups of their own
        stop.set()
        stop_runs()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


__all__ = ["BASELINE_SPEC_TIMEOUT_S", "Baseline", "MUTANT_TIMEOUT_S", "SIM", "SPEC_TIMEOUT_S",
           "STATUSES", "Sandbox", "classify", "pytest_command", "run_baseline", "run_mutant",
           "run_mutants", "stop_runs"]
