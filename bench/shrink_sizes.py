"""Shrunk counterexample sizes of the generator, fault by fault (run on demand, not part of
the test run).

    python bench/shrink_sizes.py [--faults NAME ...] [--seeds N] [--strategy positive|outside_wait]

For each planted fault (backends.faults) and each seed, ``hypothesis.find`` draws cases until
the simulator with that fault disagrees with the oracle, then shrinks the case with no time
budget; the line gives the shrunk case's op count per seed, their maximum and the median
seconds of a find. Unlike the kill matrix (bench/kill_times.py), whose specs shrink under
the ci profile and a per-spec timeout, this measures what shrinking reaches, so two
generators compare on a loaded machine (run the old code with its own PYTHONPATH).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hypothesis import HealthCheck, find, settings  # noqa: E402
from hypothesis.errors import NoSuchExample  # noqa: E402

import mdlri_conformance.backends.sim as sim  # noqa: E402
from mdlri_conformance.backends.faults import check as check_faults  # noqa: E402
from mdlri_conformance.conformance.engine import (  # noqa: E402
    oracle, runner, strategies, strategies_capture,
)

FAULTS = ("memset-odd-count-short", "value-write-old-value", "disabled-task-runs",
          "whole-kernel-per-block", "seq-renumbered-after-update")
STRATEGIES: dict[str, Callable[[], Any]] = {
    "positive": strategies.positive_cases, "outside_wait": strategies_capture.outside_wait}


def shrunk(fault: str, seed: int, strategy: Callable[[], Any],
           max_examples: int = 400) -> tuple[int | None, float]:
    """(ops of the shrunk case or None when none of ``max_examples`` failed, seconds)."""
    backend = sim.create(faults=[fault])

    def diverges(case: Any) -> bool:
        try:
            return oracle.expected(case) != runner.replay(backend, case)
        except Exception:  # noqa: BLE001 - a crash is a divergence too
            return True

    t0 = time.perf_counter()
    try:
        case = find(strategy(), diverges, random=random.Random(seed),
                    settings=settings(max_examples=max_examples, database=None, deadline=None,
                                      suppress_health_check=list(HealthCheck)))
        size: int | None = len(case.ops)
    except NoSuchExample:
        size = None
    finally:
        backend.close()
    return size, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--faults", nargs="+", default=list(FAULTS))
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--strategy", choices=sorted(STRATEGIES), default="positive")
    ns = ap.parse_args(argv)
    if ns.seeds < 1:
        ap.error("--seeds must be at least 1")
    try:
        check_faults(ns.faults)
    except ValueError as exc:
        ap.error(str(exc))
    largest: list[int] = []
    for fault in ns.faults:
        runs = [shrunk(fault, s, STRATEGIES[ns.strategy]) for s in range(ns.seeds)]
        sizes = [size for size, _ in runs]
        found = [x for x in sizes if x is not None]
        if found:
            largest.append(max(found))
        print(f"{fault:<30} shrunk ops {sizes} max {max(found) if found else None} "
              f"(find + shrink {statistics.median(t for _, t in runs):.1f} s median)", flush=True)
    print(f"largest shrunk counterexample: {max(largest) if largest else None} ops")
    return 0


if __name__ == "__main__":
    sys.exit(main())
