"""Generated-tier throughput on the simulator (run on demand, not part of the test run).

    python bench/generated_rate.py [--cases N] [--rounds R]

Prints, for N generated cases (conformance.engine.strategies.positive_cases):

* generated cases per second, generation + replay on the simulator + oracle, and the
  share of each part;
* the simulator's time per executed task against a bare numpy evaluation of the same
  kernel operations (same cases, same number of executions, measured side by side in one
  run, each case's best of R rounds). "Sim execution" is the time spent inside ExecuteAsync
  + the timed sync; "sim replay" is the whole replay (setup, capture, listing, plan, cleanup);
* what bounds each figure on this stack, measured in the same run: the Hypothesis ceiling
  (examples/s of a strategy that makes only as many draws as the generator's cases do, and
  nothing else), the replay floor (the replay's API calls, each at the cost of a guarded call
  that does nothing) and the execution floor (ExecuteAsync + sync of an empty model, once per
  execution), each floor as a ratio to the same numpy time; and what a faster simulator
  cannot remove: the replay's time outside the backend's calls, and every task at the cost
  of the cheapest one (an event record or wait).

Targets (bench/targets.py): execution <= 5x numpy, replay <= 20x numpy, >= 1,000 cases/s.
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
from hypothesis import strategies as st  # noqa: E402

import mdlri_conformance.backends.sim as sim  # noqa: E402
from mdlri_conformance.backends.contract import EventFlag  # noqa: E402
from mdlri_conformance.conformance.engine import oracle, runner, strategies  # noqa: E402
from mdlri_conformance.conformance.engine.graphs import (  # noqa: E402
    Case, Launch, Memset, ValueWrite,
)
from mdlri_conformance.conformance.engine.steps import (  # noqa: E402
    Disable, Execute, SetKernel, SetValue, Update,
)


class _Timed:
    """Backend proxy that accumulates the time spent in execution calls."""

    TIMED = ("execute_async", "synchronize_stream_with_timeout")

    def __init__(self, backend: Any) -> None:
        self._b = backend
        self.exec_s = 0.0

    def __getattr__(self, name: str) -> Any:
        # kept on the instance, so a later look-up costs no Python call (the replay's
        # figures would count this proxy's ~1.4 us per call otherwise)
        attr = getattr(self._b, name)
        if name not in self.TIMED:
            setattr(self, name, attr)
            return attr

        def timed(*a: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return attr(*a, **kw)
            finally:
                self.exec_s += time.perf_counter() - t0
        setattr(self, name, timed)
        return timed


class _ColdFloor:
    """Backend proxy that, right before each ExecuteAsync of the replay, executes an empty
    model on another stream and syncs it, timing that pair: the execution floor measured
    where the replay executes (its caches as the runner's own code left them), not in a
    warm loop of back-to-back calls."""

    def __init__(self, backend: Any, empty_model: Any, stream: Any) -> None:
        self._b = backend
        self._empty, self._stream = empty_model, stream
        self.times: list[float] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._b, name)
        if name != "execute_async":
            return attr
        b, empty, stream = self._b, self._empty, self._stream

        def execute_async(*a: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            b.execute_async(empty, stream)
            b.synchronize_stream_with_timeout(stream, 1000)
            self.times.append(time.perf_counter() - t0)
            return attr(*a, **kw)
        return execute_async


class _Counted:
    """Backend proxy that counts the API calls made through it and the seconds spent in
    them (the proxy's own frame included: an upper bound of the backend's share)."""

    def __init__(self, backend: Any) -> None:
        self._b = backend
        self.calls = 0
        self.in_calls_s = 0.0

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._b, name)
        if not callable(attr) or name.startswith("_"):
            return attr

        def counted(*a: Any, **kw: Any) -> Any:
            self.calls += 1
            t0 = time.perf_counter()
            try:
                return attr(*a, **kw)
            finally:
                self.in_calls_s += time.perf_counter() - t0
        setattr(self, name, counted)
        return counted


def _choices_so_far() -> int | None:
    """How many choices the running Hypothesis example has made (None where this Hypothesis
    version does not say: the count is an internal attribute)."""
    try:
        from hypothesis.control import current_build_context
        return len(current_build_context().data.choices)
    except Exception:  # noqa: BLE001 - a bench figure, not worth failing the run for
        return None


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
            word = step.word if step.word is not None else ops[step.op].word  # a conversion
            pending[step.op] = ValueWrite(ops[step.op].stream, word, step.value)
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


def measure(n: int, rounds: int = 3) -> dict[str, float]:
    """Draw ``n`` cases and measure every part side by side.

    The draw (generation + oracle + one replay per case) gives the case rate and the share of
    each part. The per-task figures come after it, from the drawn cases: each case is
    replayed on the simulator and evaluated on numpy back to back, ``rounds`` times, and the
    best time of each case is kept for each of the three figures (sim execution, sim replay,
    numpy), so a burst of load from other processes on a shared machine touches neither side.
    """
    backend = sim.create()
    timed = _Timed(backend)
    acc = {"cases": 0, "gen_s": 0.0, "oracle_s": 0.0, "replay_s": 0.0,
           "tasks": 0, "diverged": 0, "rounds": rounds}
    drawn: list[Case] = []
    last = [time.perf_counter()]

    choices: list[int] = []

    @_settings(n)
    @given(strategies.positive_cases())
    def one(case: Case) -> None:
        t0 = time.perf_counter()
        acc["gen_s"] += t0 - last[0]
        made = _choices_so_far()
        if made is not None:
            choices.append(made)
        exp = oracle.expected(case)
        t1 = time.perf_counter()
        obs = runner.replay(timed, case)
        t2 = time.perf_counter()
        acc["oracle_s"] += t1 - t0
        acc["replay_s"] += t2 - t1
        acc["cases"] += 1
        acc["diverged"] += exp != obs
        drawn.append(case)
        last[0] = time.perf_counter()

    # Hypothesis's once-per-process costs (the first @given scans every loaded module for
    # constants, ~45 ms) are paid by a throwaway test first: they belong to no case
    hypothesis_ceiling(2, 5)
    start = last[0] = time.perf_counter()
    one()
    acc["total_s"] = time.perf_counter() - start

    inf = float("inf")
    best = [[inf, inf, inf] for _ in drawn]  # per case: exec, replay, numpy
    for r in range(rounds):
        for i, case in enumerate(drawn):
            timed.exec_s = 0.0
            t0 = time.perf_counter()
            runner.replay(timed, case)
            replay_s = time.perf_counter() - t0
            np_s, tasks = numpy_eval(case)
            if r == 0:
                acc["tasks"] += tasks
            b = best[i]
            b[0], b[1], b[2] = min(b[0], timed.exec_s), min(b[1], replay_s), min(b[2], np_s)
    acc["exec_best_s"] = sum(b[0] for b in best)
    acc["replay_best_s"] = sum(b[1] for b in best)
    acc["numpy_best_s"] = sum(b[2] for b in best)

    acc["cold_empty_exec_s"] = _cold_floor(backend, drawn, rounds)

    counted = _Counted(backend)
    # per case, the replay's time outside the backend's calls: its best replay time above
    # less its least time inside the calls (which holds the counting proxy's own timing, so
    # the difference errs low)
    outside = 0.0
    for i, case in enumerate(drawn):
        inside = float("inf")
        for _ in range(rounds):
            counted.in_calls_s = 0.0
            runner.replay(counted, case)
            inside = min(inside, counted.in_calls_s)
        outside += max(best[i][1] - inside, 0.0)
    acc["api_calls"] = counted.calls // rounds
    acc["outside_s"] = outside
    acc["executions"] = sum(step.times for case in drawn for step in case.plan
                            if isinstance(step, Execute))
    acc["noop_call_s"], acc["empty_exec_s"], acc["task_floor_s"] = _call_floors(backend)
    backend.close()
    acc["choices"] = sum(choices) / len(choices) if choices else 0.0
    acc["ceiling_per_s"] = hypothesis_ceiling(round(acc["choices"]), n) if choices else 0.0
    return acc


def _empty_model(backend: Any, what: str) -> tuple[Any, Any, Any]:
    """A stream to execute on, the stream that captured, and a model captured with no task
    (a capture with no task still ends in a model)."""
    rc, stream = backend.create_stream()
    rc2, capturing = backend.create_stream()
    if rc or rc2 or backend.capture_begin(capturing, 0):
        raise RuntimeError(f"bench: could not set up {what} on the simulator")
    rc, model = backend.capture_end(capturing)
    if rc:
        raise RuntimeError(f"bench: CaptureEnd of an empty model returned {rc}")
    return stream, capturing, model


def _cold_floor(backend: Any, drawn: list[Case], rounds: int) -> float:
    """Seconds of an empty model's ExecuteAsync + sync at every execute point of the drawn
    cases' replays (:class:`_ColdFloor`), the best of ``rounds`` per point."""
    stream, capturing, empty = _empty_model(backend, "the cold floor")
    total = 0.0
    for case in drawn:
        best: list[float] = []
        for _ in range(rounds):
            proxy = _ColdFloor(backend, empty, stream)
            runner.replay(proxy, case)
            best = proxy.times if not best else [min(x, y) for x, y in zip(best, proxy.times)]
        total += sum(best)
    backend.destroy(empty)
    backend.destroy_stream(capturing)
    backend.destroy_stream(stream)
    return total


def _settings(n: int) -> Any:
    return settings(max_examples=n, deadline=None, database=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))


def hypothesis_ceiling(choices: int, n: int) -> float:
    """Examples per second of a Hypothesis test whose strategy makes ``choices`` small-integer
    draws and nothing else: what a generator making as many choices per case reaches at best
    on this machine, with no graph built, no oracle and no replay."""

    @st.composite
    def draws(draw: Any) -> list[int]:
        return [draw(st.integers(0, 15)) for _ in range(choices)]

    @_settings(n)
    @given(draws())
    def one(values: list[int]) -> None:
        pass

    start = time.perf_counter()
    one()
    return n / (time.perf_counter() - start)


def _call_floors(backend: Any, repeat: int = 2000) -> tuple[float, float, float]:
    """Seconds of a guarded API call that does nothing (StreamQuery of an idle stream), of
    ExecuteAsync + timed sync of a model with no task, and per task of a model made of the
    cheapest tasks (event records and waits between two streams, beyond the empty model):
    the best of five runs of each."""
    stream, capturing, model = _empty_model(backend, "the call floors")
    events_model, tasks, cleanup = _event_model(backend, capturing)

    def best(fn: Callable[[], Any]) -> float:
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(repeat):
                fn()
            times.append((time.perf_counter() - t0) / repeat)
        return min(times)

    def execute(m: Any) -> Callable[[], None]:
        def run() -> None:
            backend.execute_async(m, stream)
            backend.synchronize_stream_with_timeout(stream, 1000)
        return run
    noop, empty = best(lambda: backend.stream_query(stream)), best(execute(model))
    per_task = max(best(execute(events_model)) - empty, 0.0) / tasks
    cleanup()
    backend.destroy(model)
    backend.destroy_stream(capturing)
    backend.destroy_stream(stream)
    return noop, empty, per_task


def _event_model(backend: Any, origin: Any, pairs: int = 16
                 ) -> tuple[Any, int, Callable[[], None]]:
    """A captured model of ``pairs`` fork/join round trips between ``origin`` and a side
    stream (record, wait, record, wait: 4 tasks each, XS-01, XS-02), its task count and its
    cleanup."""
    rc, side = backend.create_stream()
    events = [backend.create_event_ex_with_flag(EventFlag.SYNC) for _ in range(2 * pairs)]
    if rc or any(e[0] for e in events) or backend.capture_begin(origin, 0):
        raise RuntimeError("bench: could not set up the event model on the simulator")
    for k in range(pairs):
        fork, join = events[2 * k][1], events[2 * k + 1][1]
        rcs = (backend.record_event(fork, origin), backend.stream_wait_event(side, fork),
               backend.record_event(join, side), backend.stream_wait_event(origin, join))
        if any(rcs):
            raise RuntimeError(f"bench: capturing the event model returned {rcs}")
    rc, model = backend.capture_end(origin)
    if rc:
        raise RuntimeError(f"bench: CaptureEnd of the event model returned {rc}")

    def cleanup() -> None:
        backend.destroy(model)
        for _, e in events:
            backend.destroy_event(e)
        backend.destroy_stream(side)
    return model, 4 * pairs, cleanup


def figures(acc: dict[str, float]) -> dict[str, float]:
    """The target figures of a measurement: cases/s, and sim execution and whole-case replay
    per task as ratios to numpy."""
    tasks = max(acc["tasks"], 1)
    numpy_s = max(acc["numpy_best_s"], 1e-12)
    return {"cases_per_s": acc["cases"] / acc["total_s"],
            "exec_ratio": acc["exec_best_s"] / numpy_s,
            "replay_ratio": acc["replay_best_s"] / numpy_s,
            "cases_ceiling": acc["ceiling_per_s"],
            "exec_floor": acc["executions"] * acc["empty_exec_s"] / numpy_s,
            # the floor plus every executed task at the cost of the cheapest task
            "exec_task_floor": (acc["executions"] * acc["empty_exec_s"]
                                + acc["tasks"] * acc["task_floor_s"]) / numpy_s,
            # each execution at least an empty model's at the same point, + every task at
            # the cheapest task's cost
            "exec_cold_floor": (acc["cold_empty_exec_s"]
                                + acc["tasks"] * acc["task_floor_s"]) / numpy_s,
            "choices": acc["choices"],
            # the best share of the ceiling with generation at the ceiling and replay and
            # oracle as measured
            "share_bound": 100.0 * _share_bound(acc),
            "share": 100.0 * acc["cases"] / acc["total_s"] / max(acc["ceiling_per_s"], 1e-12),
            "replay_floor": acc["api_calls"] * acc["noop_call_s"] / numpy_s,
            # the floor plus the replay's own time outside the backend (runner, listing match)
            "replay_outside_floor": (acc["outside_s"]
                                     + acc["api_calls"] * acc["noop_call_s"]) / numpy_s,
            "numpy_us": acc["numpy_best_s"] / tasks * 1e6,
            "exec_us": acc["exec_best_s"] / tasks * 1e6,
            "replay_us": acc["replay_best_s"] / tasks * 1e6}


def _share_bound(acc: dict[str, float]) -> float:
    """Cases/s over the ceiling if generation cost what the ceiling's draws cost and replay
    and oracle what they cost in this run."""
    if not acc["ceiling_per_s"] or not acc["cases"]:
        return 0.0
    gen = 1.0 / acc["ceiling_per_s"]
    return gen / (gen + (acc["replay_s"] + acc["oracle_s"]) / acc["cases"])


def report(acc: dict[str, float], emit: Callable[[str], None] = print) -> dict[str, float]:
    """Print the measurement; returns :func:`figures`."""
    n, total = acc["cases"], acc["total_s"]
    fig = figures(acc)
    emit(f"generated cases: {n:.0f} in {total:.2f} s -> {fig['cases_per_s']:.1f} cases/s, "
         f"{acc['choices']:.1f} choices per case "
         f"(generation + replay + oracle, one process; {acc['diverged']:.0f} diverged)")
    for part in ("gen", "replay", "oracle"):
        emit(f"  {part:<8} {acc[part + '_s']:7.2f} s  ({100 * acc[part + '_s'] / total:4.1f} %)")
    emit(f"executed tasks: {acc['tasks']:.0f} (best of {acc['rounds']:.0f} rounds per case)")
    emit(f"  numpy per task:          {fig['numpy_us']:8.2f} us")
    emit(f"  sim execution per task:  {fig['exec_us']:8.2f} us  "
         f"(ratio {fig['exec_ratio']:.1f}x numpy)")
    emit(f"  sim replay per task:     {fig['replay_us']:8.2f} us  "
         f"(ratio {fig['replay_ratio']:.1f}x numpy)")
    cases = max(acc["cases"], 1)
    emit("bounds on this stack (same run):")
    emit(f"  Hypothesis ceiling: {acc['choices']:.0f} choices per case on average; a strategy "
         f"making only those draws runs {fig['cases_ceiling']:.0f} examples/s "
         f"(the generator with oracle and replay: {fig['cases_per_s']:.0f}/s, "
         f"{fig['share']:.0f}% of it); with generation at the ceiling and replay + oracle as "
         f"measured, at most {fig['share_bound']:.0f}%")
    emit(f"  replay floor: {acc['api_calls'] / cases:.0f} API calls per case x "
         f"{acc['noop_call_s'] * 1e6:.2f} us per guarded no-op call = "
         f"{fig['replay_floor']:.1f}x numpy")
    emit(f"  replay engine floor: that + {acc['outside_s'] / cases * 1e6:.0f} us per case the "
         f"replay spends outside the backend's calls (runner, listing match, case setup; "
         f"best of {acc['rounds']:.0f}) = {fig['replay_outside_floor']:.1f}x numpy")
    emit(f"  execution floor: {acc['executions']:.0f} executions x "
         f"{acc['empty_exec_s'] * 1e6:.2f} us per ExecuteAsync + sync of an empty model = "
         f"{fig['exec_floor']:.1f}x numpy")
    emit(f"  execution task floor: that + {acc['tasks']:.0f} tasks x "
         f"{acc['task_floor_s'] * 1e6:.3f} us per task of the cheapest kind (event record or "
         f"wait in a traced execution) = {fig['exec_task_floor']:.1f}x numpy")
    emit(f"  execution floor where the replay executes: an empty model's ExecuteAsync + sync "
         f"timed right before each of the replay's executions, "
         f"{acc['cold_empty_exec_s'] / max(acc['executions'], 1) * 1e6:.2f} us each (best of "
         f"{acc['rounds']:.0f}), + every task at the cheapest kind's cost = "
         f"{fig['exec_cold_floor']:.1f}x numpy")
    return fig


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=300, help="generated cases (default 300)")
    p.add_argument("--rounds", type=int, default=3,
                   help="side-by-side rounds per case for the per-task figures (default 3)")
    ns = p.parse_args(argv)
    if ns.cases < 1 or ns.rounds < 1:
        p.error("--cases and --rounds must be at least 1")
    report(measure(ns.cases, ns.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
