"""Shards: ``--shard K/N`` runs one of N deterministic parts of the collected specs.

A fleet splits one conformance run across N machines (``mdlri-conformance run --shard K/N``
on machine K) and reads one report at the end (``mdlri-conformance merge``, conformance.merge).

The split
---------
* **Deterministic.** A spec's shard is a function of the *set* of collected specs and of the
  durations file only: never of the collection order (pytest-randomly shuffles it), the xdist
  worker, the machine or the checkout's location. Specs are keyed by their path inside the
  specs folder plus the rest of the node id (:func:`spec_key`: ``test_capture.py::test_x[A]``),
  so a checkout, an installed wheel and a ``--pyargs`` run give the same keys.
* **Every spec in exactly one shard**, balanced by recorded durations with pytest-split's
  "least_duration" rule: the specs, heaviest first (ties by key), each go to the shard with
  the least total so far (ties by shard number). A spec without a recorded duration weighs
  the mean of those recorded (pytest-split's rule, and 1 s when nothing is recorded). Weights
  are whole microseconds, so the sums, and the split, are exact on every machine. Each spec
  also weighs :data:`SPEC_OVERHEAD_S` (set-up, leak and state checks outside the recorded
  call) and an ``own_process`` spec :data:`OWN_PROCESS_S` more (its child's start).
* **Selection after -k / -m / --deselect**: the split balances what this run selected, so all
  machines must be given the same selection (merge refuses shards of different selections).
* **Generated specs** (:func:`seed_generated`): a Hypothesis ``@given`` spec runs in EVERY
  shard, each shard with its own example seed (:func:`example_seed` of K, N and the spec's
  key, set with Hypothesis's public ``hypothesis.seed``, which takes precedence over the ``ci``
  profile's ``derandomize``: ``hypothesis/core.py`` ``get_random_for_wrapped_test``) and
  ``ceil(M / N)`` of its M ``max_examples``, so the fleet runs about as many examples as one
  machine would, spread over the shards. shard.json names them under ``"generated"``
  (``{node id: {"seed", "max_examples"}}``) and merge folds their N rows into one. They are
  left out of the balance (every shard gets ``1/N`` of each). ``--shard 1/1`` and unsharded
  runs keep the profile's examples; an ``own_process`` ``@given`` spec (its child re-collects
  without the seed) and the two state machines (their settings are built inside the spec) are
  one item each and run whole in one shard. The case-file specs
  (``test_case_file_results[<case>]``) are parametrized per case and spread over the shards.
* **Non-specs** (the project's own unit tests, when collected together with the specs) run in
  shard 1 only, so each test still runs exactly once across the shards.

Durations
---------
``--shard-durations FILE`` (default ``$MDLRI_SHARD_DURATIONS``, else the package's
``durations.json``): JSON ``{node id or spec key: seconds}``, the format of pytest-split's
``.test_durations`` (its node ids are reduced to spec keys). The shipped file holds a full sim
run's ``duration_s``; a fleet that wants its own hardware's balance passes the
``durations.json`` that ``merge`` writes beside a merged run. Every machine of a fleet must
use the same file: shard.json records its digest and merge refuses shards that differ.

Why not pytest-split itself: its plugin reads the durations file relative to the working
directory (the suite needs it as package data, so an installed wheel balances too), its
options and hooks would act in the own-process children as well, and its ``least_duration``
breaks ties by collection order in some releases (pytest-randomly shuffles that order). The
rule is twenty lines; keeping it here keeps the split one documented function
(:func:`assign`) with no new dependency on the fleet's (often offline) servers.

Record
------
The process that records results (``-n 0``, or the xdist controller) writes
``<report dir>/shard.json`` right after ``collected.json``: ``{"shard": K, "of": N,
"selected": [this shard's spec node ids], "specs_total", "split_digest", "durations",
"estimated_s", "generated": {node id: {"seed", "max_examples"}}}``; it adds ``"shard":
{"shard": K, "of": N}`` to ``run.json`` and ``summary.json``. Under xdist the split is
computed in the workers (each selects the same items, in the same order, as xdist requires)
and the first worker hands its figures to the controller through a file named in its
workerinput. An own-process child (conformance.isolation)
runs exactly the node id it was given: no split there.
"""

from __future__ import annotations

import hashlib
import heapq
import importlib.resources
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

import pytest

from .. import keys, rundir

#: the shipped durations (package data of mdlri_conformance.conformance)
DURATIONS_FILE = "durations.json"
DURATIONS_ENV = "MDLRI_SHARD_DURATIONS"
SHARD_FILE = "shard.json"
#: what a spec costs beyond its recorded call phase (set-up, teardown, leak and state checks):
#: a full sim run's wall time less its recorded durations, per spec (about 7 ms, 2026-12)
SPEC_OVERHEAD_S = 0.01
#: the start of an own-process child (interpreter, imports, probes; about 1 s on the sim)
OWN_PROCESS_S = 1.0
#: workerinput key: where a worker writes its split's figures for the controller
_INFO_KEY = "mdlri_shard_info"
_PLUGIN = "mdlri-shard"


class ShardError(ValueError):
    """A ``--shard`` value or durations file that cannot be used (one line)."""


# ---------------------------------------------------------------------------------------------
# the rule


def parse(text: str) -> tuple[int, int]:
    """``"K/N"`` -> ``(K, N)`` with 1 <= K <= N, else :class:`ShardError`."""
    k, sep, n = str(text).strip().partition("/")
    try:
        kk, nn = int(k), int(n)
    except ValueError:
        kk = nn = 0
    if not sep or not 1 <= kk <= nn:
        raise ShardError(f"--shard {text}: use K/N with 1 <= K <= N")
    return kk, nn


def spec_key(nodeid: str) -> str:
    """A node id without its location: the path after the last ``specs/`` folder and the rest
    (``wv/lib/.../conformance/specs/test_x.py::t[a]`` -> ``test_x.py::t[a]``). Node ids of
    other tests are returned unchanged."""
    path, sep, rest = nodeid.partition("::")
    parts = path.replace("\\", "/").split("/")
    if "specs" in parts[:-1]:
        last = len(parts) - 1 - parts[::-1].index("specs")
        path = "/".join(parts[last + 1:])
    return path + sep + rest


def assign(keys: Iterable[str], durations: Mapping[str, float], n: int,
           extra: Mapping[str, float] | None = None) -> tuple[dict[str, int], list[float]]:
    """pytest-split's least_duration over a set of spec keys: ``({key: shard index 0..n-1},
    [estimated seconds per shard])``. Independent of the order of ``keys``."""
    extra = extra or {}
    ordered = sorted(set(keys))
    known = [durations[k] for k in ordered if k in durations]
    mean = sum(known) / len(known) if known else 1.0

    def micros(k: str) -> int:
        seconds = durations.get(k, mean) + SPEC_OVERHEAD_S + extra.get(k, 0.0)
        return max(0, round(seconds * 1_000_000))

    weight = {k: micros(k) for k in ordered}
    heap = [(0, i) for i in range(n)]
    out: dict[str, int] = {}
    for k in sorted(ordered, key=lambda k: (-weight[k], k)):
        total, shard = heapq.heappop(heap)
        out[k] = shard
        heapq.heappush(heap, (total + weight[k], shard))
    totals = [0] * n
    for total, shard in heap:
        totals[shard] = total
    return out, [t / 1_000_000 for t in totals]


def example_seed(key: str, k: int, n: int) -> int:
    """The example seed of generated spec ``key`` in shard K of N: 64 bits of
    ``sha256("<key> K/N")``, the same on every machine and run, different per shard."""
    return int.from_bytes(hashlib.sha256(f"{key} {k}/{n}".encode()).digest()[:8], "big")


def shard_examples(max_examples: int, n: int) -> int:
    """One shard's part of a generated spec's ``max_examples``: ``ceil(M / N)``."""
    return max(1, -(-int(max_examples) // n))


def split_digest(keys: Iterable[str]) -> str:
    """The identity of what was split: a digest of the sorted spec keys."""
    return hashlib.sha256("\n".join(sorted(set(keys))).encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------------------------
# durations


def load_durations(path: str | os.PathLike[str] | None) -> tuple[dict[str, float], str]:
    """The durations file (``{node id or key: seconds}``) with keys reduced to spec keys, and
    where it came from; None: ``$MDLRI_SHARD_DURATIONS``, else the shipped file."""
    path = path or os.environ.get(DURATIONS_ENV) or None
    if path is None:
        res = importlib.resources.files("mdlri_conformance.conformance") / DURATIONS_FILE
        try:
            text, source = res.read_text(encoding="utf-8"), f"package {DURATIONS_FILE}"
        except (OSError, FileNotFoundError):
            return {}, "none (equal weights)"
        where = f"the package's {DURATIONS_FILE}"
    else:
        try:
            text, source = Path(path).read_text(encoding="utf-8"), str(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise ShardError(f"--shard-durations {path}: cannot read "
                             f"({getattr(exc, 'strerror', None) or exc})") from None
        where = f"--shard-durations {path}"
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ShardError(f"{where}: not JSON ({exc})") from None
    if not isinstance(data, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0
            for v in data.values()):
        raise ShardError(f"{where}: expected an object of node id -> seconds (>= 0)")
    out: dict[str, float] = {}
    for nodeid, seconds in data.items():
        out[spec_key(str(nodeid))] = float(seconds)
    return out, source


def durations_digest(durations: Mapping[str, float]) -> str:
    return hashlib.sha256(json.dumps(durations, sort_keys=True).encode()).hexdigest()[:16]


def durations_from_rows(rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Spec key -> seconds from results.jsonl rows (``duration_s``; the mean when a spec has
    several rows), for a durations file."""
    seen: dict[str, list[float]] = {}
    for r in rows:
        d = r.get("duration_s")
        if isinstance(d, (int, float)) and "nodeid" in r:
            seen.setdefault(spec_key(str(r["nodeid"])), []).append(float(d))
    return {k: round(sum(v) / len(v), 4) for k, v in sorted(seen.items())}


# ---------------------------------------------------------------------------------------------
# pytest


def add_options(group: Any) -> None:
    """``--shard K/N`` and ``--shard-durations FILE``."""
    group.addoption("--shard", default=None, metavar="K/N",
                    help="run only shard K of N (1-based) of the collected specs: the same "
                         "split on every machine, balanced by recorded durations")
    group.addoption("--shard-durations", default=None, metavar="FILE",
                    help="durations for --shard, JSON node id -> seconds (pytest-split's "
                         f"format; default ${DURATIONS_ENV}, else the shipped file)")


def configure(config: pytest.Config, run_state: Callable[[], Any]) -> None:
    """Install the shard selection when ``--shard`` is given (every process: the selection
    runs where items are collected, the record where results are recorded, which
    ``run_state()`` returns, or None in a process that records nothing)."""
    text = config.getoption("--shard", None)
    if not text or os.environ.get(keys.OWN_PROCESS_ENV):
        return  # an own-process child runs exactly the node id it was given
    try:
        k, n = parse(text)
        durations, source = load_durations(config.getoption("--shard-durations", None))
    except ShardError as exc:
        raise pytest.UsageError(str(exc)) from None
    if config.pluginmanager.get_plugin(_PLUGIN) is None:
        config.pluginmanager.register(ShardPlugin(config, k, n, durations, source, run_state),
                                      _PLUGIN)


def active(config: pytest.Config) -> tuple[int, int] | None:
    """``(K, N)`` when this run is a shard (``--shard``), else None."""
    plugin = config.pluginmanager.get_plugin(_PLUGIN)
    return (plugin.k, plugin.n) if plugin is not None else None


def selection_text(config: pytest.Config) -> str:
    """``"--shard K/N"`` for a sharded run, else ``""`` (for the summary's selection)."""
    kn = active(config)
    return f"--shard {kn[0]}/{kn[1]}" if kn else ""


class ShardPlugin:
    """Selects this shard's items where items are collected; records the shard where results
    are recorded."""

    def __init__(self, config: pytest.Config, k: int, n: int, durations: dict[str, float],
                 source: str, run_state: Callable[[], Any]) -> None:
        self.config = config
        self._run_state = run_state
        self.k, self.n = k, n
        self.durations = durations
        self.source = source
        #: the split's figures (from this process's collection, or a worker's)
        self.info: dict[str, Any] | None = None
        self._tmp: Path | None = None
        self._written = False

    # -- selection (every process that collects) ------------------------------------------
    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> Iterator[None]:
        """After every other selection (-k, -m, --deselect) and pytest-randomly's shuffle:
        keep this shard's items in their order (xdist needs the same list in every worker)."""
        result = yield
        from ..items import is_spec
        specs = {item_key(i): i for i in items if is_spec(i)}
        generated = {k: i for k, i in specs.items() if self.n > 1 and is_generated(i)}
        split = [k for k in specs if k not in generated]
        extra = {k: OWN_PROCESS_S for k, i in specs.items()
                 if i.get_closest_marker("own_process") is not None}
        shard_of, totals = assign(split, self.durations, self.n, extra)
        known = [self.durations[k] for k in specs if k in self.durations]
        mean = sum(known) / len(known) if known else 1.0
        share = sum(self.durations.get(k, mean) + SPEC_OVERHEAD_S for k in generated) / self.n
        totals = [t + share for t in totals]  # every shard runs 1/N of each generated spec
        keep: list[pytest.Item] = []
        dropped: list[pytest.Item] = []
        for i in items:
            key = item_key(i)
            mine = (key in generated or shard_of[key] == self.k - 1) if is_spec(i) \
                else self.k == 1
            (keep if mine else dropped).append(i)
        seeded = seed_generated(generated.values(), self.k, self.n)
        items[:] = keep
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        self.info = {
            "shard": self.k, "of": self.n, "specs_total": len(specs),
            "specs_selected": sum(1 for s in shard_of.values() if s == self.k - 1)
            + len(generated),
            "generated": seeded,
            "split_digest": split_digest(specs),
            "durations": {"source": self.source, "digest": durations_digest(self.durations),
                          "known": sum(1 for k in specs if k in self.durations)},
            "estimated_s": {"this": round(totals[self.k - 1], 3),
                            "shards": [round(t, 3) for t in totals]},
            "non_specs": "shard 1 only",
        }
        out = getattr(config, "workerinput", {}).get(_INFO_KEY)
        if out:  # an xdist worker: its controller records the shard
            rundir.write_json(Path(out) / f"{config.workerinput['workerid']}.json", self.info)
        return result

    # -- record (the process that records results) ----------------------------------------
    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist controller: where the workers put their split's figures."""
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="mdlri-shard-"))
        node.workerinput[_INFO_KEY] = str(self._tmp)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not hasattr(self.config, "workerinput"):
            self._record()

    @pytest.hookimpl(optionalhook=True, trylast=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if self.info is None and self._tmp is not None:
            try:
                self.info = json.loads((self._tmp / f"{node.gateway.id}.json").read_text(
                    encoding="utf-8"))
            except (OSError, ValueError, AttributeError):
                self.info = None
        self._record()

    def _state(self) -> Any:
        return self._run_state()

    def _record(self) -> None:
        """shard.json beside collected.json, and the shard in run.json (once, when the run
        directory holds a run: a shard with no spec leaves none)."""
        state = self._state()
        if self._written or state is None or state.collected is None:
            return
        self._written = True
        head = {"shard": self.k, "of": self.n}
        record = {**head, **(self.info or {}), "selected": sorted(state.collected)}
        try:
            rundir.write_json(Path(state.report_dir) / SHARD_FILE, record)
            meta = rundir.read_meta(Path(state.report_dir))
            if meta:
                meta["shard"] = head
                rundir.update_meta(Path(state.report_dir), meta)
        except OSError as exc:  # a full disk: the run stops, INCOMPLETE (write_guard)
            state.cannot_write(Path(exc.filename or SHARD_FILE).name, exc)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """The shard in summary.json (after the plugin wrote it)."""
        state = self._state()
        if state is None or not state.summary or not self._written:
            return
        state.summary["shard"] = {"shard": self.k, "of": self.n, **{
            k: v for k, v in (self.info or {}).items() if k not in ("shard", "of")}}
        from ..verdicts.artefacts import write_summary_json
        try:
            write_summary_json(Path(state.report_dir), state.summary)
        except OSError:
            pass

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self._state() is None:
            return
        info = self.info or {}
        line = f"shard {self.k} of {self.n}"
        if "specs_selected" in info:
            est = info["estimated_s"]
            line += (f": {info['specs_selected']} of {info['specs_total']} specs, estimated "
                     f"{est['this']:.1f} s of {sum(est['shards']):.1f} s "
                     f"(durations: {info['durations']['source']}, "
                     f"{info['durations']['known']} recorded); merge the shards with "
                     "'mdlri-conformance merge'")
        terminalreporter.write_line(line)

    def pytest_unconfigure(self) -> None:
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)


def item_key(item: pytest.Item) -> str:
    """An item's spec key (:func:`spec_key`, from its file's path when it lies in a folder
    named ``specs``)."""
    return spec_key(item.nodeid)


def is_generated(item: pytest.Item) -> bool:
    """A Hypothesis ``@given`` spec that a shard can run a part of: its function is a
    Hypothesis test and it runs in this process (not ``own_process``)."""
    return bool(getattr(getattr(item, "obj", None), "is_hypothesis_test", False)) \
        and item.get_closest_marker("own_process") is None


_ORIGINAL = "_mdlri_shard_original"  # a function's seed and settings before any shard's


def seed_generated(items: Iterable[pytest.Item], k: int, n: int) -> dict[str, dict[str, int]]:
    """Give each generated spec shard K of N's part of its examples: ``hypothesis.seed(
    example_seed(key, K, N))`` (it overrides ``derandomize``) and ``max_examples`` ``ceil(M /
    N)`` of its own settings' M, set on the test function. Returns ``{node id: {"seed",
    "max_examples"}}`` for shard.json. Idempotent: always derived from the function's
    original seed and settings (items of one parametrized function share them)."""
    from hypothesis import seed, settings
    out: dict[str, dict[str, int]] = {}
    done: dict[int, dict[str, int]] = {}
    for item in items:
        fn = getattr(item.obj, "__func__", item.obj)
        if id(fn) not in done:
            if not hasattr(fn, _ORIGINAL):
                setattr(fn, _ORIGINAL, (fn._hypothesis_internal_use_seed,
                                        fn._hypothesis_internal_use_settings))
            parent = getattr(fn, _ORIGINAL)[1]
            value = example_seed(item_key(item).split("[", 1)[0], k, n)
            m = shard_examples(parent.max_examples, n)
            fn._hypothesis_internal_use_settings = parent
            seed(value)(fn)  # also turns the example database off (as ci does)
            fn._hypothesis_internal_use_settings = settings(
                parent=fn._hypothesis_internal_use_settings, max_examples=m)
            done[id(fn)] = {"seed": value, "max_examples": m}
        out[item.nodeid] = done[id(fn)]
    return out


# ---------------------------------------------------------------------------------------------
# `python -m mdlri_conformance.conformance.framework.fleet.shard durations RUN_DIR... [-o FILE]`


def main(argv: list[str] | None = None) -> int:
    """Write a durations file from run directories' results.jsonl (the shipped
    ``durations.json`` is made this way from a full sim run)."""
    import argparse
    p = argparse.ArgumentParser(
        prog="python -m mdlri_conformance.conformance.framework.fleet.shard")
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("durations", help="a durations file from run directories")
    d.add_argument("run_dirs", nargs="+")
    d.add_argument("-o", "--out", help="file to write (default: stdout)")
    ns = p.parse_args(argv)
    from mdlri_conformance.reports.runs import RunError, load_rows
    rows: list[dict[str, Any]] = []
    for rd in ns.run_dirs:
        try:
            rows += load_rows(Path(rd) / "results.jsonl")
        except (OSError, RunError) as exc:
            print(f"{p.prog}: error: {rd}: {exc}", file=sys.stderr)
            return 2
    text = json.dumps(durations_from_rows(rows), indent=1, sort_keys=True) + "\n"
    if ns.out:
        Path(ns.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["DURATIONS_ENV", "DURATIONS_FILE", "OWN_PROCESS_S", "SHARD_FILE", "SPEC_OVERHEAD_S",
           "ShardError", "active", "add_options", "assign", "configure", "durations_digest",
           "durations_from_rows", "example_seed", "is_generated", "item_key", "load_durations",
           "parse", "seed_generated", "selection_text", "shard_examples", "spec_key",
           "split_digest"]
