"""``mdlri-conformance mutate``: mutation testing of the specs against the simulator.

Mutants of ``backends/sim/**`` (:mod:`conformance.framework.power.mutants`) run against the specs
that execute their line (:mod:`conformance.framework.power.mutation_run`); the survivors are the
places where the specs cannot tell right from wrong, listed per module, function and clause
(:mod:`conformance.framework.power.mutation_report`). On demand, not in CI: it needs coverage.py
(the ``mutate`` extra). Writes ``mutation.json`` (every mutant), ``mutation.md`` and
``summary.txt`` under ``--out``. Exit 0 when it ran, 2 for a usage error (one line), 3 when
the baseline ran no passing spec (nothing tested), 4 when interrupted.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from ..framework.items import bad_expression
from ..framework.power.mutants import OPERATORS, Mutant, iter_modules, mutants_of
from ..framework.watchdog import spec_timeout_value

PROG = "mdlri-conformance mutate"


class UsageError(Exception):
    """Bad input: one line on stderr, exit 2."""


def resolve_modules(sim: Path, names: list[str] | None) -> list[str]:
    """Module paths relative to ``sim`` for ``--module`` values (``api/memory``,
    ``api/memory.py``, ``api.memory``, ``backends/sim/api/memory.py``; a folder takes every
    module under it); all modules without ``--module``."""
    every = [p.relative_to(sim).as_posix() for p in iter_modules(sim)]
    if not names:
        return every
    chosen: list[str] = []
    for raw in names:
        name = raw.strip().removeprefix("backends/sim/").removeprefix("backends.sim.")
        name = name.removesuffix(".py").rstrip("/")
        if "/" not in name and "." in name:
            name = name.replace(".", "/")
        hits = [m for m in every if m == f"{name}.py" or m.startswith(f"{name}/")]
        if not hits:
            raise UsageError(f"--module {raw}: no simulator module of that name under "
                             f"backends/sim (e.g. api/memory, device, api)")
        chosen += [h for h in hits if h not in chosen]
    return chosen


def collect(sim: Path, modules: list[str], operators: tuple[str, ...]
            ) -> tuple[list[Mutant], dict[str, str]]:
    sources = {m: (sim / m).read_text(encoding="utf-8") for m in modules}
    found = [mu for m in modules for mu in mutants_of(sources[m], m, operators)]
    return found, sources


def _positive(kind: type) -> Any:
    """An argparse type: a positive number of ``kind``."""
    def parse(text: str) -> Any:
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if v <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text}")
        return v
    return parse


def _progress(done: int, total: int, e: dict[str, Any]) -> None:
    if e["status"] in ("unreached", "not-run"):
        return
    by = f" by {e['killer'].split('::', 1)[-1]}" if e.get("killer") else (
        f" ({e['kill']})" if e.get("kill") else "")
    print(f"[{done}/{total}] {e['status']}{by}: {e['module']}:{e['line']} [{e['operator']}] "
          f"{' '.join(e['original'].split())[:50]!r} -> {' '.join(e['mutated'].split())[:50]!r}"
          f" ({e['specs_run']}/{e['selection']} specs, {e['wall_s']:.1f} s)", flush=True)


def cmd_mutate(ns: argparse.Namespace) -> int:
    try:
        return _mutate(ns)
    except UsageError as exc:
        print(f"mdlri-conformance: error: mutate: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: INCOMPLETE: interrupted (the runs under way were stopped)",
              file=sys.stderr)
        return 4


def _mutate(ns: argparse.Namespace) -> int:
    from ..framework.power.mutation_run import REPO, SIM
    sim = REPO / SIM
    modules = resolve_modules(sim, ns.module)
    operators = tuple(ns.operator or OPERATORS)
    mutants, sources = collect(sim, modules, operators)
    if ns.sample is not None and ns.sample < len(mutants):
        mutants = sorted(random.Random(ns.seed).sample(mutants, ns.sample),
                         key=lambda m: (m.module, m.line, m.col, m.operator, m.mutated))
    if ns.list:
        for m in mutants:
            print(f"{m.module}:{m.line} {m.function} [{m.operator}] "
                  f"{' '.join(m.original.split())!r} -> {' '.join(m.mutated.split())!r}")
        print(f"{len(mutants)} mutants in {len(modules)} module(s)")
        return 0
    if ns.keyword and bad_expression(ns.keyword):
        raise UsageError(f"-k {ns.keyword!r}: {bad_expression(ns.keyword)}")
    if importlib.util.find_spec("coverage") is None:  # the coverage map needs it
        raise UsageError("coverage.py is not installed (pip install "
                         "'mdlri-conformance[mutate]')")
    out = Path(ns.out) if ns.out else (
        Path("reports") / "out" / (time.strftime("%Y%m%d-%H%M%S") + "-mutate"))
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"--out {out}: exists and is not an empty directory")
    if not mutants:
        raise UsageError("no mutants: the selected modules and operators produce none")
    return _run(ns, out, mutants, sources, modules)


def _run(ns: argparse.Namespace, out: Path, mutants: list[Mutant], sources: dict[str, str],
         modules: list[str]) -> int:
    from ..framework.power.mutation_report import markdown, summarise, text_lines
    from ..framework.power.mutation_run import Sandbox, run_baseline, run_mutants
    out.mkdir(parents=True, exist_ok=True)
    sel = f", specs -k {ns.keyword!r}" if ns.keyword else ""
    print(f"mutate: {len(mutants)} mutants in {len(modules)} module(s), -j {ns.jobs}{sel} -> "
          f"{out}; baseline under coverage first", flush=True)
    t0 = time.monotonic()
    boxes = [Sandbox() for _ in range(ns.jobs)]
    try:
        base = run_baseline(boxes[0], out, ns.keyword)
        print(f"[baseline] {len(base.rows)} specs, {len(base.passing)} passing, "
              f"{sum(len(v) for v in base.lines.values())} simulator lines executed, "
              f"{base.wall_s:.1f} s", flush=True)
        if not base.passing:
            print(f"{PROG}: NOTHING TESTED: the baseline ran no passing spec (pytest exit "
                  f"{base.exit}): {base.tail.strip().splitlines()[-1:] or ''}", file=sys.stderr)
            return 3
        entries = run_mutants(mutants, sources, base, boxes, out / "runs",
                              budget_s=ns.budget, limit_s=ns.mutant_timeout,
                              spec_timeout=ns.spec_timeout, progress=_progress)
    finally:
        for b in boxes:
            b.remove()
    summary = summarise(entries)
    doc = {"modules": modules, "operators": list(ns.operator or OPERATORS),
           "sample": ns.sample, "seed": ns.seed, "keyword": ns.keyword, "jobs": ns.jobs,
           "wall_s": round(time.monotonic() - t0, 2),
           "baseline": {"specs": len(base.rows), "passing": len(base.passing),
                        "wall_s": base.wall_s},
           "summary": summary, "mutants": entries}
    (out / "mutation.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    (out / "mutation.md").write_text(markdown(summary, entries), encoding="utf-8")
    lines = text_lines(summary, entries)
    (out / "summary.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    print(f"mutation: {out / 'mutation.json'} ({doc['wall_s']:.0f} s)")
    return 0


def add_parser(sub: Any) -> None:
    """The ``mutate`` subcommand of the CLI."""
    from ..framework.power.mutation_run import MUTANT_TIMEOUT_S, SPEC_TIMEOUT_S
    mp = sub.add_parser("mutate", help="mutation testing of the specs against the simulator",
                        description="Mutate the simulator (backends/sim) one small change at a "
                                    "time and run the specs that execute the changed line; "
                                    "list the surviving mutants per module and clause. Writes "
                                    "mutation.json, mutation.md and summary.txt.")
    mp.add_argument("--module", action="append", metavar="NAME",
                    help="only this simulator module or folder, e.g. api/memory, device, api "
                         "(repeatable; default all of backends/sim)")
    mp.add_argument("--operator", action="append", choices=OPERATORS,
                    help="only this mutation operator (repeatable; default all)")
    mp.add_argument("--sample", type=_positive(int), metavar="N",
                    help="a random sample of N mutants (with --seed)")
    mp.add_argument("--seed", type=int, default=0, help="seed of --sample (default 0)")
    mp.add_argument("-j", "--jobs", type=_positive(int), default=2,
                    help="mutants run at once, each in its own sandbox (default 2)")
    mp.add_argument("-k", dest="keyword", metavar="EXPRESSION",
                    help="only the specs matching this pytest -k expression")
    mp.add_argument("--budget", type=_positive(float), metavar="SECONDS",
                    help="stop starting mutants after this long (the rest are not-run)")
    mp.add_argument("--mutant-timeout", type=_positive(float),
                    default=MUTANT_TIMEOUT_S, metavar="SECONDS",
                    help=f"deadline of one mutant's run (default {MUTANT_TIMEOUT_S:g}; "
                         "passing it counts as killed, status timeout)")
    mp.add_argument("--spec-timeout", type=spec_timeout_value, default=SPEC_TIMEOUT_S,
                    help=f"per-spec watchdog in the mutant runs, at least (default "
                         f"{SPEC_TIMEOUT_S:g} s; 3x a selected spec's baseline time when "
                         "longer; 0: off)")
    mp.add_argument("--out", help="output directory (default reports/out/<time>-mutate)")
    mp.add_argument("--list", action="store_true",
                    help="print the selected mutants and exit without running them")
    mp.set_defaults(func=cmd_mutate)


__all__ = ["add_parser", "cmd_mutate", "collect", "resolve_modules"]
