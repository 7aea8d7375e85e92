"""Generated-tier throughput on the simulator (run on demand, not part of the test run).

    python bench/generated_rate.py [--cases N]

Prints, for N generated cases (conformance.engine.strategies.positive_cases):

* generated cases per second, generation + replay on the simulator + oracle, and the
  share of each part;
* the simulator's time per executed task against a bare numpy evaluation of the same
  kernel operations (same cases, same number of executions, measured side by side in one
  run). "Sim execution" is the time spent inside ExecuteAsync + the timed sync; "sim replay"
  is the whole replay (setup, capture, listing, plan, cleanup).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hypothesis import HealthCheck, given, settings  # noqa: E402

import mdlri_conformance.backends.sim as sim  # noqa: E402
from mdlri_conformance.conformance.engine import oracle, runner, strategies  # noqa: E402
from mdlri_conformance.conformance.engine.graphs import (  # noqa: E402
    Case, Disable, Execute, Launch, Memset, SetKernel, SetValue, Update, ValueWrite,
)


class _Timed:
    """Backend proxy that accumulates the time spent in execution calls."""

    TIMED = ("execute_async", "synchronize_stream_with_timeout")

    def __init__(self, backend: Any) -> None:
        self._b = backend
        self.exec_s = 0.0

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._b, name)
        if name not in self.TIMED:
            return attr

        def timed(*a: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return attr(*a, **kw)
            finally:
                self.exec_s += time.perf_counter() - t0
        return timed


# ---------------------------------------------------------------------------------------------
# the numpy baseline: the same kernel operations on plain arrays


def _kernel(op: Launch, bufs: list[np.ndarray]) -> None:
    a = op.args
    k = op.kernel
    if k == "fallback_main":
        bufs[a["output"]][:] = bufs[a["input"]] + 10
    elif k == "fallback_postprocess":
        bufs[a["output"]][:] = bufs[a["input"]] * 2
    elif k == "affine":
        bufs[a["y"]][:a["n"]] = bufs[a["x"]][:a["n"]] * np.int32(a["a"]) + np.int32(a["b"])
    elif k == "add":
        bufs[a["out"]][:a["n"]] = bufs[a["a"]][:a["n"]] + bufs[a["b"]][:a["n"]]
    elif k == "accumulate":
        bufs[a["acc"]][:a["n"]] += bufs[a["x"]][:a["n"]]
    elif k == "fill":
        bufs[a["out"]][:a["n"]] = a["value"]
    elif k == "copy":
        bufs[a["dst"]][:a["n"]] = bufs[a["src"]][:a["n"]]


def numpy_eval(case: Case) -> tuple[float, int]:
    """Run the case's surviving ops once per successful execution on numpy arrays, in issue
    order; returns (seconds, tasks run). Plan bookkeeping is outside the timed region."""
    bufs = [np.array(b, dtype=np.int32) for b in case.buffers]
    words = list(case.words)
    ops: list[Any] = list(case.ops)
    pending: dict[int, Any] = {}
    seconds, tasks = 0.0, 0
    for step in case.plan:
        if isinstance(step, SetKernel):
            old = ops[step.op]
            pending[step.op] = Launch(old.stream, step.kernel or case.ops[step.op].kernel,
                                      step.args, old.num_blocks)
        elif isinstance(step, SetValue):
            pending[step.op] = ValueWrite(ops[step.op].stream, ops[step.op].word, step.value)
        elif isinstance(step, Disable):
            pending[step.op] = None
        elif isinstance(step, Update):
            for i, new in pending.items():
                ops[i] = new
            pending.clear()
        elif isinstance(step, Execute):
            live = [op for op in ops if op is not None]
            t0 = time.perf_counter()
            for _ in range(step.times):
                for op in live:
                    if isinstance(op, Launch):
                        _kernel(op, bufs)
                    elif isinstance(op, ValueWrite):
                        words[op.word] = op.value
                    elif isinstance(op, Memset):
                        bufs[op.buffer].view(np.uint8)[:] = op.value
            seconds += time.perf_counter() - t0
            tasks += step.times * len(live)
    return seconds, tasks


# ---------------------------------------------------------------------------------------------


def measure(n: int) -> dict[str, float]:
    """Draw ``n`` cases and measure every part side by side."""
    backend = sim.create()
    timed = _Timed(backend)
    acc = {"cases": 0, "gen_s": 0.0, "oracle_s": 0.0, "replay_s": 0.0, "numpy_s": 0.0,
           "tasks": 0, "diverged": 0}
    last = [time.perf_counter()]

    @settings(max_examples=n, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(strategies.positive_cases())
    def one(case: Case) -> None:
        t0 = time.perf_counter()
        acc["gen_s"] += t0 - last[0]
        exp = oracle.expected(case)
        t1 = time.perf_counter()
        obs = runner.replay(timed, case)
        t2 = time.perf_counter()
        np_s, tasks = numpy_eval(case)
        acc["oracle_s"] += t1 - t0
        acc["replay_s"] += t2 - t1
        acc["numpy_s"] += np_s
        acc["tasks"] += tasks
        acc["cases"] += 1
        acc["diverged"] += exp != obs
        last[0] = time.perf_counter()

    start = time.perf_counter()
    one()
    acc["total_s"] = time.perf_counter() - start
    acc["exec_s"] = timed.exec_s
    backend.close()
    return acc


def report(acc: dict[str, float], emit: Callable[[str], None] = print) -> None:
    n, tasks = acc["cases"], max(acc["tasks"], 1)
    total = acc["total_s"]
    emit(f"generated cases: {n:.0f} in {total:.2f} s -> {n / total:.1f} cases/s "
         f"(generation + replay + oracle; {acc['diverged']:.0f} diverged)")
    for part in ("gen", "replay", "oracle"):
        emit(f"  {part:<8} {acc[part + '_s']:7.2f} s  ({100 * acc[part + '_s'] / total:4.1f} %)")
    per = {k: acc[k] / tasks * 1e6 for k in ("exec_s", "replay_s", "numpy_s")}
    emit(f"executed tasks: {tasks:.0f}")
    emit(f"  numpy per task:          {per['numpy_s']:8.2f} us")
    emit(f"  sim execution per task:  {per['exec_s']:8.2f} us  "
         f"(ratio {per['exec_s'] / per['numpy_s']:.1f}x numpy)")
    emit(f"  sim replay per task:     {per['replay_s']:8.2f} us  "
         f"(ratio {per['replay_s'] / per['numpy_s']:.1f}x numpy)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=300, help="generated cases (default 300)")
    ns = p.parse_args(argv)
    report(measure(ns.cases))
    return 0


if __name__ == "__main__":
    sys.exit(main())
