"""Every speed target of the suite, measured and printed against its target (run on demand,
never part of the test run: these machines are noisy, so a figure is a ratio measured side by
side in one run, or a time from one run, and no test asserts on it).

    python bench/targets.py [--cases N] [--suite] [--binding] [--kills | --kill-matrix FILE]
                            [--campaign DIR ... [--campaign-baseline DIR]]

One line per target, ``name: measured vs target -> MET`` or ``-> NOT MET``; a target this run
did not measure says ``NOT MEASURED`` and the option that measures it:

* sim execution over the execution floor, whole-case replay over the replay floor, and
  generated cases per second (one core) as a share of the Hypothesis ceiling for as many
  draws as the generator makes (its choices per case printed beside it):
  bench/generated_rate.py, always (``--cases``, ``--rounds``);
* ``-n 2`` against ``-n 0`` on the whole ``ci`` suite on the simulator: bench/suite_time.py
  (``--suite``; two suite runs);
* seconds until the generated tier alone finds each planted fault (median, maximum) and the
  kill rate: bench/kill_times.py (``--kills`` runs that kill matrix, ``--kill-matrix FILE``
  reads one written by ``mdlri-conformance faults``).

* a call of the acl binding without out-parameters (``synchronize_stream``) over a bare
  ctypes call of a no-op C function, with the floor (one method frame over the prepared
  function) as its bound: bench/binding_overhead.py on the emulator (``--binding``).

* the bound this stack puts on a target, after its verdict, where one is measured: for
  execution, the floor plus every executed task at the cost of the cheapest task (an event
  record or wait in a traced execution); for replay, the floor plus the replay's own time
  outside the backend's calls (runner, listing match); for cases/s, the share reached if
  generation cost only the ceiling's draws and replay and oracle what they cost in the
  run. A target beyond its bound is out of reach for this design, however the code is tuned.

* the deep profile's graphs explored per minute: read from the ``campaign.json`` of each
  ``mdlri-conformance deep`` campaign named with ``--campaign`` (a campaign is ten minutes of
  fuzzing, too long to start from here): the line reports the figure, its backend and its
  fuzzing time. With ``--campaign-baseline DIR`` (a campaign of the old code on the same
  cores and backend) the target is the ratio of graphs per minute, at least 3x; without
  one the line counts as neither MET nor NOT MET.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import binding_overhead  # noqa: E402
import generated_rate  # noqa: E402
import kill_times  # noqa: E402
import suite_time  # noqa: E402


@dataclass(frozen=True)
class Target:
    """One speed target: ``measured <= limit`` (``at_most``) or ``measured >= limit``."""

    name: str
    limit: float
    unit: str
    at_most: bool
    how: str  # the option that measures it
    #: the figure that bounds the measure on this stack (generated_rate's bounds), and its name
    bound: str | None = None
    bound_name: str = ""

    def line(self, measured: float | None, bound: float | None = None) -> str:
        """``name: measured vs target -> MET / NOT MET`` (NOT MEASURED for None), and the
        bound the stack puts on the measure where one was measured."""
        sign = "<=" if self.at_most else ">="
        target = f"{sign} {self.limit:g}{self.unit}"
        if measured is None:
            return f"{self.name}: NOT MEASURED (target {target}; {self.how})"
        met = measured <= self.limit if self.at_most else measured >= self.limit
        text = (f"{self.name}: {measured:.2f}{self.unit} vs {target} -> "
                f"{'MET' if met else 'NOT MET'}")
        if bound is not None:
            best = "at least" if self.at_most else "at most"
            text += f" ({self.bound_name}: {best} {bound:.2f}{self.unit})"
        return text

    def met(self, measured: float | None) -> bool | None:
        if measured is None:
            return None
        return measured <= self.limit if self.at_most else measured >= self.limit


TARGETS = {
    # the targets are each against the stack's own bound, measured in the same run
    "exec_over_floor": Target("sim execution / execution floor", 2, "x", True, "always",
                              "exec_bound_over_floor",
                              "the empty model's execution timed at the replay's own execute "
                              "points (or warm, if larger) + every task at the cheapest "
                              "task's cost"),
    "replay_over_floor": Target("whole-case replay / replay floor", 2, "x", True, "always",
                                "replay_outside_over_floor",
                                "floor + the replay's time outside the backend"),
    "cases_share": Target("generated cases/s / Hypothesis ceiling for the generator's draws",
                          60, " %", False, "always", "share_bound",
                          "generation at the ceiling, replay + oracle as measured"),
    "speedup": Target("ci suite on sim, -n 2 speed-up over -n 0", 1.6, "x", False, "--suite"),
    # over the specs the kill matrix ran: the generated tier with --kills (its header line says)
    "median_kill_s": Target("kill matrix: median seconds to find a planted fault", 3, " s",
                            True, "--kills or --kill-matrix FILE"),
    "max_kill_s": Target("kill matrix: maximum seconds to find a planted fault", 30, " s",
                         True, "--kills or --kill-matrix FILE"),
    "kill_rate": Target("kill matrix: planted faults found", 100, " %", False,
                        "--kills or --kill-matrix FILE"),
    "binding_no_out": Target("acl binding, a call without out-parameters (synchronize_stream) "
                             "/ bare ctypes no-op", 1.5, "x", True, "--binding",
                             "binding_floor_over_noop",
                             "floor: one method frame over the prepared function"),
    "deep_speedup": Target("deep profile, graphs per minute over the baseline campaign's", 3,
                           "x", False, "--campaign DIR --campaign-baseline DIR"),
}


def main(argv: list[str] | None = None, emit: Callable[[str], None] = print) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=150, help="generated cases (default 150)")
    ap.add_argument("--rounds", type=int, default=3, help="side-by-side rounds (default 3)")
    ap.add_argument("--suite", action="store_true", help="also time the suite at -n 0 and -n 2")
    kills = ap.add_mutually_exclusive_group()
    kills.add_argument("--kills", action="store_true",
                       help="also run the kill matrix over the generated tier (minutes)")
    kills.add_argument("--kill-matrix", metavar="FILE", nargs="+",
                       help="read kill_matrix.json files (several: matrices over disjoint "
                            "faults, run apart, read as one)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="kill-matrix runs at once")
    ap.add_argument("--binding", action="store_true",
                    help="also time the acl binding against a bare ctypes no-op "
                         "(bench/binding_overhead.py, on the emulator)")
    ap.add_argument("--campaign", action="append", default=[], metavar="DIR",
                    help="a deep campaign's folder (or its campaign.json); repeatable")
    ap.add_argument("--campaign-baseline", metavar="DIR",
                    help="the old code's campaign on the same cores: the first --campaign's "
                         "graphs per minute over it is the deep target")
    ns = ap.parse_args(argv)
    if ns.cases < 1 or ns.rounds < 1 or ns.jobs < 1:
        ap.error("--cases, --rounds and -j must be at least 1")
    matrix = None
    if ns.kill_matrix:
        try:
            matrix = kill_times.combine([json.loads(Path(f).read_text())
                                         for f in ns.kill_matrix])
        except (OSError, ValueError, KeyError) as exc:
            ap.error(f"--kill-matrix {' '.join(ns.kill_matrix)}: {exc}")

    campaigns = []
    for path in ns.campaign:
        try:
            campaigns.append(read_campaign(Path(path)))
        except (OSError, ValueError, KeyError) as exc:
            ap.error(f"--campaign {path}: {exc}")
    baseline = None
    if ns.campaign_baseline:
        if not campaigns:
            ap.error("--campaign-baseline needs a --campaign to compare")
        try:
            baseline = read_campaign(Path(ns.campaign_baseline))
        except (OSError, ValueError, KeyError) as exc:
            ap.error(f"--campaign-baseline {ns.campaign_baseline}: {exc}")

    measured: dict[str, float | None] = dict.fromkeys(TARGETS)
    emit("== generated tier on the simulator (bench/generated_rate.py)")
    fig = generated_rate.report(generated_rate.measure(ns.cases, ns.rounds), emit)
    measured["exec_over_floor"] = fig["exec_ratio"] / max(fig["exec_floor"], 1e-12)
    measured["replay_over_floor"] = fig["replay_ratio"] / max(fig["replay_floor"], 1e-12)
    measured["cases_share"] = fig["share"]
    # the warm floor's own bound and the floor where the replay executes: the larger holds
    bounds = {"exec_bound_over_floor": max(fig["exec_task_floor"], fig["exec_cold_floor"])
              / max(fig["exec_floor"], 1e-12),
              "replay_outside_over_floor": fig["replay_outside_floor"]
              / max(fig["replay_floor"], 1e-12),
              "share_bound": fig["share_bound"]}
    emit(f"generated: {fig['cases_per_s']:.0f} cases/s at {fig['choices']:.1f} choices per "
         f"case; ceiling {fig['cases_ceiling']:.0f}/s")
    if ns.suite:
        emit("== ci suite on the simulator (bench/suite_time.py)")
        measured["speedup"] = suite_time.main(["--workers", "2"], emit)["speedup"]
    if ns.kills:
        emit("== kill matrix, generated tier (bench/kill_times.py)")
        matrix = kill_times.run(jobs=ns.jobs)
    if matrix is not None:
        if not ns.kills:
            emit(f"== kill matrix {' '.join(ns.kill_matrix)} (bench/kill_times.py)")
        s = kill_times.figures(matrix, emit)
        measured["median_kill_s"] = s["median_time_to_kill_s"]
        measured["max_kill_s"] = s["max_time_to_kill_s"]
        measured["kill_rate"] = 100.0 * s["kill_rate"] if s["faults"] else None

    if ns.binding:
        emit("== acl binding (bench/binding_overhead.py)")
        rows = binding_overhead.main([], emit)
        if "synchronize_stream" in rows:
            t_noop, _, t_floor, t_bind = rows["synchronize_stream"]
            measured["binding_no_out"] = t_bind / t_noop
            bounds["binding_floor_over_noop"] = t_floor / t_noop
    if baseline is not None:
        emit(f"== baseline: {campaign_line(baseline)}")
        try:
            measured["deep_speedup"] = deep_speedup(campaigns[0], baseline)
        except ValueError as exc:
            ap.error(f"--campaign-baseline: {exc}")
    emit("== targets")
    verdicts = []
    for key, target in TARGETS.items():
        emit(target.line(measured[key], bounds.get(target.bound or "")))
        verdicts.append(target.met(measured[key]))
    for c in campaigns:
        emit(campaign_line(c))
    if not campaigns:
        emit("deep profile, graphs explored per minute: NOT MEASURED (no limit set; "
             "--campaign DIR of an `mdlri-conformance deep` campaign)")
    emit(f"targets: {verdicts.count(True)} MET, {verdicts.count(False)} NOT MET, "
         f"{verdicts.count(None)} NOT MEASURED; deep campaigns reported: {len(campaigns)}")
    return 0


def deep_speedup(campaign: dict[str, object], baseline: dict[str, object]) -> float:
    """Graphs per minute of ``campaign`` over ``baseline``'s. They must have fuzzed the same
    backend on a machine with as many cores (``machine_cores``, where both say), or the
    ratio would not compare; the fuzzing processes may differ: spreading a campaign over
    the cores is part of what the target measures."""
    if campaign.get("backend") != baseline.get("backend"):
        raise ValueError(f"the campaigns differ in backend: {campaign.get('backend')} and "
                         f"{baseline.get('backend')}")
    mine, theirs = campaign.get("machine_cores"), baseline.get("machine_cores")
    if mine is not None and theirs is not None and mine != theirs:
        raise ValueError(f"the campaigns ran on machines with other core counts: {mine} and "
                         f"{theirs}")
    return float(campaign["graphs_per_minute"]) / max(float(baseline["graphs_per_minute"]),
                                                      1e-12)


def read_campaign(path: Path) -> dict[str, object]:
    """A deep campaign's ``campaign.json`` (``path`` is the file or its folder)."""
    if path.is_dir():
        path = path / "campaign.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "graphs_per_minute" not in data:
        raise ValueError("not a campaign.json (no graphs_per_minute)")
    return data


def campaign_line(c: dict[str, object]) -> str:
    """``deep profile on BACKEND: N graphs/min (E examples in S s fuzzed on C cores, N/C per
    core, VERDICT)``, C being its fuzzing processes (one per core); the deep target's line
    says whether it is met."""
    lib = f" --acl-lib {c['acl_lib']}" if c.get("acl_lib") else ""
    cores = int(c.get("cores") or 1)  # a campaign.json from before -j: one process
    per_core = c.get("graphs_per_minute_per_core", c["graphs_per_minute"])
    return (f"deep profile on {c.get('backend')}{lib}: {c['graphs_per_minute']} graphs "
            f"explored per minute ({c.get('examples', 0)} examples in "
            f"{float(c.get('fuzz_seconds') or 0):.0f} s fuzzed on {cores} "
            f"core{'s' if cores > 1 else ''}, {per_core} per core, {c.get('verdict')})")


if __name__ == "__main__":
    sys.exit(main())
