"""HypoFuzz's engine inside one live pytest session, bounded in time (deep campaigns).

``python -m mdlri_conformance.conformance.framework.power.fuzz_session --out DIR --seconds S
[--sim-coverage DIR] [--shard K/N] -- PYTEST_ARGS`` collects the selected specs with the
suite's plugin (backend loaded, probed), turns each Hypothesis spec into a HypoFuzz
``FuzzTarget`` and fuzzes them in this process until the deadline, then writes
``DIR/fuzz.json`` (also every few seconds on the way, so a process killed at the outer
deadline leaves its figures).

A campaign on several cores runs one such process per core, each with ``--shard K/N``: the
specs that can be fuzzed are dealt out in collection order, the K-th of every N to process
K (:func:`in_shard`), which writes ``DIR/fuzz-K.json`` and keeps its simulator coverage data
in ``DIR/.coverage-sim-K`` for the campaign to combine.

Why not ``hypothesis fuzz``: that command runs until stopped, serves a dashboard, and runs
its targets after its own pytest session has ended (the suite's backend is closed at
unconfigure, and the ``requires`` capability checks never run). Here the specs run inside
the session that loaded the backend; a spec the backend cannot run is not fuzzed, with the
reason; a spec whose only Hypothesis use is ``run_state_machine_as_test`` (the stateful
machine) is fuzzed through the machine's own test function, the one Hypothesis splits out
for HypoFuzz (``get_state_machine_test``), captured by calling the spec once.

Scheduling is HypoFuzz's once every target has had a first slice: the next target is drawn
by the softmax of its estimated new behaviours per second. A target stops at its first
failure, which HypoFuzz's shrinker shrinks for at most a quarter of the time (:func:`_run_one`);
:mod:`.fuzz_failures` records it. HypoFuzz's coverage guidance owns the trace function while
a spec runs, so the simulator's branch coverage (``--sim-coverage``) is measured afterwards
by replaying the examples under coverage.py: each target's corpus (the examples that first
showed each behaviour) first, then the others, within a fifth of the fuzzing time
(``examples_replayed`` of ``examples_total`` says how far it got).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from .. import backend_session
from . import fuzz_coverage, fuzz_failures, fuzz_observations, fuzz_weights

#: a target runs this long before the scheduler draws again
SLICE_S = 2.0
#: fuzz.json is rewritten this often during the campaign
WRITE_EVERY_S = 10.0
#: a failure's shrink may take this share of the fuzzing time (the other specs go on after)
SHRINK_SHARE = 0.25
#: the corpus replay measuring the simulator's branches gets this share of the fuzzing time
REPLAY_SHARE = 0.2
FUZZ_JSON = "fuzz.json"


def fuzz_json(shard: int, shards: int) -> str:
    """The name of the figures file of process ``shard`` of ``shards``."""
    return FUZZ_JSON if shards == 1 else f"fuzz-{shard}.json"


def coverage_data(shard: int, shards: int) -> str | None:
    """The coverage.py data file process ``shard`` keeps (None for a lone process, whose
    figures are the campaign's)."""
    return None if shards == 1 else f".coverage-sim-{shard}"


def in_shard(index: int, shard: int, shards: int) -> bool:
    """Whether the ``index``-th fuzzable spec (collection order) is fuzzed by process
    ``shard`` of ``shards``: dealt round-robin, so every process gets a share of each kind."""
    return index % shards == shard


class _Captured(Exception):
    """Raised by the patched ``get_state_machine_test`` once it holds the machine's test."""


class Target:
    """One fuzzed spec: its HypoFuzz target and what became of it."""

    def __init__(self, nodeid: str, kind: str, fuzz: Any, item: pytest.Item,
                 collector: Any = None) -> None:
        self.nodeid = nodeid
        self.kind = kind  # "given" or "state_machine"
        self.fuzz = fuzz
        self.item = item
        self.stopped = ""  # why fuzzing stopped early: a skip, a fatal error
        self.error = False  # stopped by an error of the fuzzing machinery, not of the spec
        self.failures: list[dict[str, Any]] = []
        self.slices = 0  # times the scheduler picked it
        self.found: list[tuple[Any, ...]] = []  # shrunk failing choice sequences
        self.notes: list[str] = []  # what went wrong around it (not in the spec)
        #: every executed example: its choices as the provider reads them (forced draws
        #: left out) -> all its choices (what ConjectureData.for_choices replays)
        self.seen: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        provider = fuzz.provider
        if collector is not None:
            provider.collector = collector  # the C tracer's arcs (:mod:`.fuzz_coverage`)
        observe = provider.on_observation

        def on_observation(observation: Any) -> None:
            observe(self._unforced(observation))

        provider.on_observation = on_observation
        #: while set, an execution outside the provider (HypoFuzz's shrinker) past this
        #: monotonic time ends the shrink; HypoFuzz's own bound counts provider time only
        self.shrink_deadline: float | None = None
        execute = fuzz._execute_once

        def execute_once(data: Any, *, observability_callback: Any = "provider") -> None:
            execute(data, observability_callback=observability_callback)
            # after the example, as HypoFuzz does: one that stopped drawing early would be
            # a flaky strategy to Hypothesis's engine
            if observability_callback is None and self.shrink_deadline is not None \
                    and time.monotonic() > self.shrink_deadline:
                import hypofuzz.hypofuzz as engine
                raise engine.HitShrinkTimeoutError

        fuzz._execute_once = execute_once

    def _unforced(self, observation: Any) -> Any:
        """``observation`` with its forced choices left out. HypoFuzz queues an example's
        choice values for re-execution (stability, corpus, mutation), and its provider hands
        them out one per draw; Hypothesis never asks the provider for a forced draw (e.g.
        the last "more?" of a bounded list), so a forced value in the queue shifts every
        later choice and the re-execution draws another example. Then no coverage is ever
        stable and the corpus stays empty."""
        meta = getattr(observation, "metadata", None)
        nodes = getattr(meta, "choice_nodes", None)
        if nodes is None:
            return observation
        free = tuple(n for n in nodes if not n.was_forced)
        self.seen[tuple(n.value for n in free)] = tuple(n.value for n in nodes)
        if len(free) == len(nodes):
            return observation
        return dataclasses.replace(observation,
                                   metadata=dataclasses.replace(meta, choice_nodes=free))

    def full_choices(self, choices: Any) -> tuple[Any, ...]:
        """The complete choice sequence of an example known by its provider choices."""
        key = tuple(choices)
        return self.seen.get(key, key)

    @property
    def examples(self) -> int:
        return int(self.fuzz.provider.ninputs)

    def running(self) -> bool:
        return not (self.stopped or self.found or self.fuzz.failed_fatally)

    def to_dict(self) -> dict[str, Any]:
        corpus = self.fuzz.provider.corpus
        return {"nodeid": self.nodeid, "kind": self.kind, "examples": self.examples,
                "corpus": len(corpus.corpus) if corpus else 0,
                "behaviours": len(corpus.behavior_counts) if corpus else 0,
                "seconds_in_spec": round(float(self.fuzz.provider.elapsed_time), 3),
                "stopped": self.stopped, "error": self.error, "notes": self.notes,
                "failures": self.failures}


class FuzzSession:
    """The pytest plugin: takes over the run loop once the specs are collected."""

    def __init__(self, out: Path, seconds: float, sim_source: Path | None,
                 shard: tuple[int, int] = (0, 1)) -> None:
        from hypofuzz.collection import _ItemsCollector
        self.out = out
        self.seconds = seconds
        self.sim_source = sim_source
        self.shard, self.shards = shard
        self.collector = _ItemsCollector()  # HypoFuzz's own FuzzTarget builder
        #: every target's behaviours, in C (made once the backend is loaded: its folder is traced)
        self.arcs: fuzz_coverage.ArcCollector | None = None
        fuzz_weights.install()  # HypoFuzz's crossover weights, the same numbers in C
        self.targets: list[Target] = []
        self.not_fuzzed: dict[str, str] = {}
        self.started = time.monotonic()
        self.fuzz_seconds = 0.0
        self.sim_branches: dict[str, Any] | None = None
        self.notes: list[str] = []
        self._written = 0.0
        self._current: Target | None = None  # the target whose fixtures are set up
        self.completed = False  # set when the campaign ran to its end

    # -- pytest hooks -------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        if session.config.option.collectonly:
            return False
        self._targets(session)
        self.started = time.monotonic()
        try:
            with fuzz_observations.lean():  # nothing rendered that guidance never reads
                self._fuzz()
        finally:
            self.fuzz_seconds = time.monotonic() - self.started
            self._switch(None)
            self._record_failures()
            self.write()
        if self.sim_source is not None and self.targets:
            self._measure_sim()
        self.completed = True
        self.write()
        return True

    # -- targets ------------------------------------------------------------------------
    def _targets(self, session: pytest.Session) -> None:
        """One :class:`Target` per selected spec of this process's shard that Hypothesis
        drives and the backend can run; every other selected spec is in ``not_fuzzed`` with
        the reason (a spec of another shard is that process's business)."""
        by_id = {t.nodeid: t for t in self.collector.fuzz_targets}
        self.arcs = fuzz_coverage.ArcCollector(fuzz_coverage.suite_sources(
            backend_session.current_backend(session.config)))
        first_batch: dict[str, str] = {}
        fuzzable = 0
        for item in session.items:
            why = _cannot_run(item) or _other_batch(item, first_batch)
            if why:
                self.not_fuzzed[item.nodeid] = why
                continue
            fuzzable += 1
            if not in_shard(fuzzable - 1, self.shard, self.shards):
                continue
            if item.nodeid in by_id:
                self.targets.append(Target(item.nodeid, "given", by_id[item.nodeid], item,
                                           self.arcs))
            else:
                fuzz = self._state_machine(session, item)
                if fuzz is None:
                    skipped = self.collector.not_collected.get(item.nodeid, {})
                    self.not_fuzzed[item.nodeid] = ("no Hypothesis test or state machine"
                                                    if skipped.get("status_reason") == "error"
                                                    else str(skipped.get("status_reason")
                                                             or "not collected by HypoFuzz"))
                else:
                    self.targets.append(Target(item.nodeid, "state_machine", fuzz, item,
                                               self.arcs))

    def _state_machine(self, session: pytest.Session, item: pytest.Item) -> Any:
        """The FuzzTarget of the state machine test ``item`` runs, or None when it runs none:
        the spec is called once with ``get_state_machine_test`` patched to hand back the
        machine's test (fixtures done, the machine class configured) instead of running it."""
        import hypothesis.stateful as stateful
        from hypofuzz.hypofuzz import FuzzTarget
        module = getattr(item, "module", None)
        machines = [v for v in vars(module).values() if isinstance(v, type)
                    and issubclass(v, stateful.RuleBasedStateMachine)] if module else []
        if not machines:
            return None  # only a module that defines a machine can run one
        real = stateful.get_state_machine_test
        held: list[Callable[..., None]] = []

        def capture(*args: Any, **kwargs: Any) -> Callable[..., None]:
            kwargs.pop("_flaky_state", None)
            held.append(real(*args, **kwargs))
            raise _Captured

        stateful.get_state_machine_test = capture  # type: ignore[assignment]
        try:
            session._setupstate.setup(item)
            item.runtest()
        except _Captured:
            pass
        except BaseException:  # noqa: BLE001 - the spec is not a capturable machine
            return None
        finally:
            stateful.get_state_machine_test = real  # type: ignore[assignment]
            session._setupstate.teardown_exact(None)
        if not held:
            return None
        test = held[0]
        # every machine's test has the same code, so the digest HypoFuzz would key the
        # database with is the same for all of them: key by the spec instead
        key = hashlib.sha384(item.nodeid.encode()).digest()
        fuzz = FuzzTarget(test_fn=test.hypothesis.inner_test, extra_kwargs={},
                          database=self._database(), database_key=key, wrapped_test=test)
        fuzz.nodeid = item.nodeid
        return fuzz

    def _database(self) -> Any:
        if self.collector.fuzz_targets:
            return self.collector.fuzz_targets[0].database
        from hypofuzz.database import HypofuzzDatabase
        from hypothesis import settings
        from hypothesis.database import BackgroundWriteDatabase
        db = settings().database
        return HypofuzzDatabase(db if isinstance(db, BackgroundWriteDatabase)
                                else BackgroundWriteDatabase(db))

    # -- fuzzing ------------------------------------------------------------------------
    def _fuzz(self) -> None:
        import random

        from hypofuzz.bayes import behaviors_per_second, softmax
        from hypothesis.core import skip_exceptions_to_reraise
        from hypofuzz.hypofuzz import FailedFatally
        rng = random.Random()
        deadline = self.started + self.seconds
        while time.monotonic() < deadline:
            live = [t for t in self.targets if t.running()]
            if not live:
                break
            fresh = [t for t in live if t.examples == 0 and not t.slices]
            if fresh:  # every spec gets a first slice before the estimates decide
                target = fresh[0]
            else:
                weights = softmax([behaviors_per_second(t.fuzz) for t in live])
                target = rng.choices(live, weights=weights, k=1)[0] if rng.random() > 0.01 \
                    else rng.choice(live)
            target.slices += 1
            try:
                self._switch(target)
                now = time.monotonic()
                end = min(deadline, now + SLICE_S)
                # a failure shrinks for a share of the campaign, never past its end
                target.shrink_deadline = min(deadline, now + SHRINK_SHARE * self.seconds)
                while time.monotonic() < end and target.running():
                    _run_one(target)
            except FailedFatally:
                target.stopped = "HypoFuzz could not run it: " + _fatal_line(target.fuzz)
                target.error = True
            except skip_exceptions_to_reraise() as exc:
                target.stopped = f"skipped: {str(exc).strip().splitlines()[0] if str(exc) else ''}"
            except Exception as exc:  # noqa: BLE001 - the engine's own trouble, not a verdict
                target.stopped = f"fuzzing stopped: {_one_line(exc)}"
                target.error = True
            finally:
                target.shrink_deadline = None
            if time.monotonic() - self._written > WRITE_EVERY_S:
                self.fuzz_seconds = time.monotonic() - self.started
                self.write()

    def _switch(self, target: Target | None) -> None:
        """Tear down the current target's fixtures and set up ``target``'s (None: none)."""
        if target is self._current:
            return
        old, self._current = self._current, None
        if old is not None:
            try:
                old.fuzz._exit_fixtures()
            except Exception as exc:  # noqa: BLE001 - a teardown error is noted, not raised
                self.notes.append(f"{old.nodeid}: fixture teardown failed: {exc}")
        if target is not None:
            _enter(target)
            self._current = target

    def _record_failures(self) -> None:
        try:
            for target in self.targets:
                if target.found:
                    self._switch(target)
                    target.failures = fuzz_failures.record(target.fuzz, target.nodeid,
                                                           self.out, target.found)
        finally:
            self._switch(None)

    def _measure_sim(self) -> None:
        """Replay the targets' examples under coverage.py (:func:`_replay_order`), within
        ``REPLAY_SHARE`` of the fuzzing time: a cut replay is a lower bound, and says so."""
        from . import branch_coverage
        assert self.sim_source is not None
        final = time.monotonic() + max(10.0, REPLAY_SHARE * self.seconds)
        replayed = total = 0
        data_file = coverage_data(self.shard, self.shards)
        cov = branch_coverage.start_python(
            self.sim_source, None if data_file is None else self.out / data_file)
        try:
            for left, target in zip(range(len(self.targets), 0, -1), self.targets):
                entries = _replay_order(target)
                total += len(entries)
                # an equal share of what is left, so every target gets its corpus replayed
                end = time.monotonic() + max(0.0, final - time.monotonic()) / left
                if not entries or time.monotonic() > end:
                    continue
                self._switch(target)
                for choices in entries:
                    if time.monotonic() > end:
                        break
                    fuzz_failures.execute(target.fuzz, choices)
                    replayed += 1
        finally:
            self._switch(None)
            try:
                figures = branch_coverage.python_branches(cov, self.sim_source,
                                                          save=data_file is not None)
                self.sim_branches = {**figures.to_dict(), "examples_replayed": replayed,
                                     "examples_total": total, "complete": replayed == total}
            except branch_coverage.CoverageUnavailable as exc:
                self.notes.append(str(exc))

    # -- output -------------------------------------------------------------------------
    def write(self) -> None:
        self._written = time.monotonic()
        data = {"completed": self.completed, "seconds": self.seconds,
                "fuzz_seconds": round(self.fuzz_seconds, 3),
                "targets": [t.to_dict() for t in self.targets],
                "not_fuzzed": self.not_fuzzed, "sim_branches": self.sim_branches,
                "notes": self.notes}
        name = fuzz_json(self.shard, self.shards)
        tmp = self.out / (name + ".tmp")
        tmp.write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
        tmp.replace(self.out / name)


def _run_one(target: Target) -> None:
    """One example through HypoFuzz's provider; a failing one is shrunk (until the target's
    ``shrink_deadline``) and its choices kept in ``target.found``.

    HypoFuzz's own ``FuzzTarget.run_one`` does the same, then copies the shrinker's
    ``slice_comments``, which Hypothesis 6.170's results no longer have (AttributeError):
    this is that method without the explain phase, keeping the failure in memory instead of
    moving it between HypoFuzz's database keys."""
    import contextlib
    import functools

    import hypofuzz.hypofuzz as engine
    from hypofuzz.corpus import get_shrinker
    from hypofuzz.database import Phase
    from hypothesis.internal.conjecture.data import Status
    from hypothesis.internal.conjecture.engine import RunIsComplete
    fuzz = target.fuzz
    data = fuzz.new_conjecture_data()
    fuzz._execute_once(data)
    data.freeze()
    result = data.as_result()
    if result.status is not Status.INTERESTING:
        return
    target.found.append(tuple(result.choices))  # kept even if the shrink goes wrong
    fuzz.provider._start_phase(Phase.SHRINK)
    shrinker = get_shrinker(functools.partial(fuzz._execute_once, observability_callback=None),
                            initial=result, predicate=lambda d: d.status is Status.INTERESTING,
                            random=fuzz.random, explain=False)
    try:
        with contextlib.suppress(engine.HitShrinkTimeoutError, RunIsComplete):
            shrinker.shrink()
    except Exception as exc:  # noqa: BLE001 - the unshrunk failure is still a failure
        target.notes.append(f"the shrink stopped: {_one_line(exc)}")
    target.found[-1] = tuple(shrinker.shrink_target.choices)
    fuzz.provider._start_phase(Phase.FAILED)


def _replay_order(target: Target) -> list[Any]:
    """What the branch measurement replays of ``target``, most telling first: the corpus
    (each behaviour's first example), the failures, then every other executed example."""
    corpus = target.fuzz.provider.corpus
    first = [target.full_choices(c.choices) for c in corpus.corpus] if corpus else []
    first += target.found
    return list(dict.fromkeys([*first, *target.seen.values()]))


def _enter(target: Target) -> None:
    """Set up ``target``'s fixtures afresh: its pytest request is renewed first, since the
    previous request's cached session fixtures were torn down when another target ran."""
    if target.kind == "given":
        init = getattr(target.item, "_initrequest", None)
        if callable(init):
            init()
    target.fuzz._enter_fixtures()


def _other_batch(item: pytest.Item, first: dict[str, str]) -> str | None:
    """A machine's batches differ only by the seed each derives for ``@given``; the fuzzer
    draws every step itself, so one batch per machine spec is fuzzed and the others say so."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    if "batch" not in params:
        return None
    name = f"{item.path}::{getattr(item, 'originalname', item.name)}"
    if name not in first:
        first[name] = item.nodeid
        return None
    return f"another batch of the machine fuzzed as {first[name].split('::')[-1]}"


def _one_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def _cannot_run(item: pytest.Item) -> str | None:
    """Why the backend cannot run ``item`` (the suite's ``requires`` check), None if it can."""
    try:
        backend_session.pytest_runtest_setup(item)
    except pytest.skip.Exception as exc:
        return str(exc.msg)
    return None


def _fatal_line(fuzz: Any) -> str:
    """The last line of the fatal traceback HypoFuzz saved for ``fuzz``."""
    try:
        failures = list(fuzz.database.fatal_failures.fetch(fuzz.database_key) or [])
    except Exception:  # noqa: BLE001 - best effort
        failures = []
    text = getattr(failures[0], "traceback", "") if failures else ""
    lines = [ln for ln in str(text).splitlines() if ln.strip()]
    return lines[-1].strip() if lines else "fatal error"


def _shard(text: str) -> tuple[int, int]:
    """``K/N`` with 0 <= K < N."""
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: use K/N") from None
    if not 0 <= k < n:
        raise argparse.ArgumentTypeError(f"{text!r}: K must be in 0..N-1")
    return k, n


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fuzz_session")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--sim-coverage", type=Path)
    p.add_argument("--shard", type=_shard, default=(0, 1), metavar="K/N")
    p.add_argument("pytest_args", nargs=argparse.REMAINDER)
    return p


def main(argv: list[str] | None = None) -> int:
    ns = _parser().parse_args(argv)
    args = ns.pytest_args[1:] if ns.pytest_args[:1] == ["--"] else ns.pytest_args
    ns.out.mkdir(parents=True, exist_ok=True)
    plugin = FuzzSession(ns.out, ns.seconds, ns.sim_coverage, ns.shard)
    return int(pytest.main(args, plugins=[plugin.collector, plugin]))


if __name__ == "__main__":
    sys.exit(main())
