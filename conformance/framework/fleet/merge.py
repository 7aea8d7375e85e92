"""``mdlri-conformance merge RUN_DIR... --out DIR``: one run from the shards of a run.

Each RUN_DIR is the report directory of one ``run --shard K/N`` (conformance.shard; a directory
without ``shard.json`` counts as a whole run, shard 1 of 1). The merge writes a NEW run
directory (refused when it already holds a run, like :func:`conformance.rundir.claim`):

* ``results.jsonl``: the rows of every shard, shard 1 first, a generated spec's rows (it runs
  in every shard, with the shard's own example seed: conformance.shard) folded into one
  (:func:`fold_generated`); ``collected.json``: the union of the shards' collected specs;
  ``run.json``: ``ended`` is ``complete`` only when every shard ended complete and every
  shard 1..N was given once (else it says what was not), with the shards under ``"merged"``;
* ``summary.json`` / ``summary.md`` / ``index.html`` from :func:`conformance.summary.
  build_summary` and :func:`.artefacts.write_all` over the merged rows (fingerprints are in
  the rows), with the shards under ``"shards"``, the capability probes of every shard's
  processes (``probe.json``, processes named ``shardK:gwN``) and the order when every shard
  ran in the same one;
* ``junit.xml``: every shard's ``<testsuite>`` in one ``<testsuites>`` with the totals (a
  generated spec is a test case of each shard);
  ``allure-results/`` and ``crashes/``: the shards' files (a crash dump whose name another
  shard already used is renamed ``shardK-<name>``, and its rows follow);
* ``kill_matrix.json`` / ``.html`` when shards carry one: per fault, killed when any shard
  killed it, killers and counts added up, the time to kill the earliest (the shards run at
  once);
* ``durations.json``: the merged rows' durations, for ``--shard-durations`` next time.

Verdict (conformance.verdict): INCOMPLETE (exit 4) when a shard is missing or given twice, or
a shard did not end complete, or collected specs never ran; otherwise the merged rows decide.
Bad input is one line and exit 2: not a run directory, two or more whole runs (nothing to
merge: no shard.json, or ``--shard 1/1``), shards of different runs (another backend, another
N, another spec selection or durations file), or shards that overlap in anything but the
generated specs both name in shard.json's ``"generated"``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import rundir
from . import shard as shard_mod

PROG = "mdlri-conformance merge"


class MergeError(Exception):
    """Input that cannot be merged (one line, exit 2)."""


@dataclass
class ShardRun:
    """One run directory given to merge."""

    path: Path
    k: int
    n: int
    info: dict[str, Any]
    meta: dict[str, Any]
    rows: list[dict[str, Any]]
    collected: list[str] | None
    summary: dict[str, Any]
    ended: str
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.path} (shard {self.k} of {self.n})"

    def keys(self) -> set[str]:
        ids = [r["nodeid"] for r in self.rows] + list(self.collected or ()) + list(
            self.info.get("selected") or ())
        return {shard_mod.spec_key(i) for i in ids}

    def generated(self) -> set[str]:
        """Keys of the generated specs this shard ran a part of (shard.json ``"generated"``)."""
        return {shard_mod.spec_key(i) for i in self.info.get("generated") or {}}

    def backend(self) -> str:
        return str(self.meta.get("backend") or next(
            (r.get("backend") for r in self.rows if r.get("backend")), "")
                   or self.summary.get("backend") or "")


def add_parser(sub: Any) -> None:
    """The ``merge`` subcommand."""
    mp = sub.add_parser("merge", help="merge the run directories of a sharded run",
                        description="Build one results.jsonl, summary, HTML, JUnit and Allure "
                                    "from the shards of a run (run --shard K/N). INCOMPLETE "
                                    "(exit 4) when a shard is missing or partial.")
    mp.add_argument("run_dirs", nargs="+", metavar="RUN_DIR")
    mp.add_argument("--out", required=True, help="the merged run directory (new)")
    mp.set_defaults(func=_cmd_merge)


def _cmd_merge(ns: Any) -> int:
    try:
        summary, lines = merge([Path(p) for p in ns.run_dirs], Path(ns.out))
    except MergeError as exc:
        print(f"mdlri-conformance: error: merge: {exc}", file=sys.stderr)
        return 2
    for line in lines:
        print(line)
    return int(summary["verdict"]["exit_code"])


# ---------------------------------------------------------------------------------------------
# reading


def read_shard(path: Path) -> ShardRun:
    """One run directory (:class:`MergeError` when it is none)."""
    from mdlri_conformance.reports.runs import RunError, load_rows
    if not path.is_dir():
        raise MergeError(f"{path}: not a run directory")
    if not rundir.holds_run(path):
        raise MergeError(f"{path}: not a run directory (no run.json or results.jsonl)")
    res = path / rundir.RESULTS_FILE
    try:
        rows = load_rows(res) if res.is_file() else []
    except (OSError, UnicodeDecodeError) as exc:
        raise MergeError(f"{res}: cannot read ({getattr(exc, 'strerror', None) or exc})") \
            from None
    except RunError as exc:
        raise MergeError(str(exc)) from None
    if any(not isinstance(r, dict) or "nodeid" not in r or "outcome" not in r for r in rows):
        raise MergeError(f"{res}: not results rows (a row without nodeid or outcome)")
    info = rundir.read_json(path / shard_mod.SHARD_FILE)
    if info is None:
        k, n, info = 1, 1, {}
    else:
        try:
            k, n = int(info["shard"]), int(info["of"])
            if not 1 <= k <= n:
                raise ValueError
        except (KeyError, TypeError, ValueError):
            raise MergeError(f"{path / shard_mod.SHARD_FILE}: no shard K of N in it") from None
    collected = rundir.read_collected(path)
    if collected is None and info.get("selected") is not None:
        collected = [str(x) for x in info["selected"]]
    summary = rundir.read_json(path / "summary.json")
    return ShardRun(path, k, n, info, rundir.read_meta(path), rows, collected,
                    summary if isinstance(summary, dict) else {}, rundir.ended(path))


def check(runs: list[ShardRun]) -> None:
    """Shards of one run: one backend, one N, one split (spec selection and durations), no
    two different shards sharing a spec but the generated specs both ran a part of
    (:class:`MergeError`)."""
    first = runs[0]
    if len(runs) > 1 and all(r.n == 1 for r in runs):
        raise MergeError(f"{first.path} and {runs[1].path} are whole runs (no shard.json, or "
                         "--shard 1/1), not the shards of one run: merge takes the directories "
                         "of run --shard K/N (compare two runs with diff)")
    for r in runs[1:]:
        if r.backend() != first.backend():
            raise MergeError(f"{r.path} ran backend {r.backend()!r}, {first.path} "
                             f"{first.backend()!r}: not shards of one run")
        if r.n != first.n:
            raise MergeError(f"{r.label} and {first.label}: not shards of one run")
        for what, key in (("spec selection (-k/-m, suite version)", "split_digest"),
                          ("durations file", "durations")):
            a, b = first.info.get(key), r.info.get(key)
            if key == "durations":
                a, b = (a or {}).get("digest"), (b or {}).get("digest")
            if a and b and a != b:
                raise MergeError(f"{r.label} and {first.label} were split with a different "
                                 f"{what}: not shards of one run")
    for i, a in enumerate(runs):
        for b in runs[i + 1:]:
            if a.k == b.k:
                continue  # the same shard twice: INCOMPLETE, not an overlap
            both = sorted((a.keys() & b.keys()) - (a.generated() & b.generated()))
            if both:
                raise MergeError(f"{a.label} and {b.label} both hold {len(both)} spec(s), e.g. "
                                 f"{both[0]}: overlapping shards, not one split")


# ---------------------------------------------------------------------------------------------
# merging


def merge(paths: list[Path], out: Path) -> tuple[dict[str, Any], list[str]]:
    """Merge the run directories into ``out``; returns the summary and the lines to print."""
    runs = [read_shard(p) for p in paths]
    check(runs)
    n = runs[0].n
    used: dict[int, ShardRun] = {}
    repeated: dict[int, list[ShardRun]] = {}
    for r in runs:
        if r.k in used:
            repeated.setdefault(r.k, []).append(r)
        else:
            used[r.k] = r
    shards = [used[k] for k in sorted(used)]
    missing = [k for k in range(1, n + 1) if k not in used]
    problems = [f"shard {k} of {n} missing" for k in missing]
    totals = {int(s.info["specs_total"]) for s in shards if "specs_total" in s.info}
    if missing and len(totals) == 1:
        lost = totals.pop() - len({key for s in shards for key in s.keys()})
        problems[-1] += f" ({lost} of the split's specs never ran)"
    problems += [f"shard {k} of {n} given {1 + len(extra)} times ("
                 + ", ".join(str(e.path) for e in extra) + " not merged)"
                 for k, extra in sorted(repeated.items())]
    stopped = [(s.k, s.ended) for s in shards if s.ended not in ("complete", "unknown")]
    if not problems and len(stopped) == 1:
        ended = stopped[0][1]  # the usual wording: "the run was interrupted"
    elif problems or stopped:
        ended = "; ".join(problems + [f"shard {k} of {n}: {e}" for k, e in stopped])
    else:
        ended = "unknown" if all(s.ended == "unknown" for s in shards) else "complete"

    if out.exists() and not out.is_dir():
        raise MergeError(f"--out {out}: exists and is not a directory")
    if rundir.holds_run(out):
        raise MergeError(f"--out {out}: already holds a run (results.jsonl or run.json); "
                         "give a new directory")
    try:
        rundir.claim(out)
    except rundir.RunDirError as exc:
        raise MergeError(str(exc).replace("--report-dir", "--out")) from None

    notes: list[str] = []
    rows = fold_generated([(s.k, _copy_crashes(s, out, notes)) for s in shards],
                          set().union(*(s.generated() for s in shards)))
    collected = _union(s.collected for s in shards)
    backend = runs[0].backend()
    try:
        rundir.write_text(out / rundir.RESULTS_FILE,
                          "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
        if collected is not None:
            rundir.write_collected(out, collected)
        rundir.write_json(out / rundir.RUN_FILE, _run_record(shards, repeated, backend, ended))
        _merge_junit(shards, out / "junit.xml", notes)
        _copy_tree(shards, "allure-results", out, notes)
        matrix = _merge_kill_matrix(shards, out)
        rundir.write_json(out / shard_mod.DURATIONS_FILE, shard_mod.durations_from_rows(rows))
        summary = _summary(shards, rows, collected, ended, backend, problems)
        if summary.get("probe"):
            rundir.write_json(out / "probe.json", summary["probe"])
        from ..verdicts.artefacts import write_all
        write_all(out, rows, summary)
    except OSError as exc:
        raise MergeError(f"--out {out}: cannot write ({exc.strerror or exc})") from None

    from ..verdicts.summary import format_table, probe_lines
    lines = [f"merged {len(shards)} of {n} shard(s) into {out}:"]
    for s in shards:
        v = (s.summary.get("verdict") or {}).get("verdict", "no summary")
        lines.append(f"  shard {s.k} of {n}: {s.path}: {len(s.rows)} result(s) of "
                     f"{len(s.collected) if s.collected is not None else '?'} collected, "
                     f"ended {s.ended}, gate {v}")
    lines += [f"  {p}" for p in problems]
    lines += format_table(summary)
    lines += probe_lines(summary.get("probe"))
    if matrix is not None:
        from ..power.killmatrix import format_table as kill_table
        lines += kill_table(matrix)
    lines += [f"note: {x}" for x in notes]
    lines.append(f"results: {out} (index.html, summary.md, junit.xml, durations.json)")
    return summary, lines


#: outcomes from the best to the worst (a gate-failing row is worse than any other)
_RANK = ("PASS", "SKIP", "XFAIL", "UNSUPPORTED", "CHANGED", "XPASS", "FAIL", "ERROR", "TIMEOUT",
         "CRASH")
#: "hypothesis" figures about the first failure: the failing shard's, not a sum
_FAILURE_STATS = ("examples", "failed_at_example", "first_failure_s", "shrunk_tasks")


def fold_generated(parts: list[tuple[int, list[dict[str, Any]]]],
                   generated: set[str]) -> list[dict[str, Any]]:
    """The rows of ``[(shard K, its rows)]`` with each generated spec's rows (spec keys in
    ``generated``) folded into one, where its first row was: the worst row (a gate-failing
    one first, then by :data:`_RANK`; the earliest shard among equals) with its message,
    divergence and replay; ``"shards"``: the shards that ran it and ``"shard_outcomes"``;
    ``duration_s`` and the numeric ``"hypothesis"`` figures summed (those of the first
    failure, :data:`_FAILURE_STATS`, are the failing shard's); ``"leaks"`` the first
    non-empty one. So the merged rows count as an unsharded run's."""
    out: list[dict[str, Any] | None] = []
    groups: dict[str, tuple[int, list[tuple[int, dict[str, Any]]]]] = {}
    for k, rows in parts:
        for r in rows:
            key = shard_mod.spec_key(str(r["nodeid"]))
            if key not in generated:
                out.append(r)
                continue
            if key not in groups:
                groups[key] = (len(out), [])
                out.append(None)
            groups[key][1].append((k, r))
    for at, group in groups.values():
        out[at] = _fold(group)
    return [r for r in out if r is not None]


def _fold(group: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    from ..verdicts.summary import fails_gate

    def severity(kr: tuple[int, dict[str, Any]]) -> tuple[bool, int]:
        o = kr[1]["outcome"]
        return fails_gate(kr[1]), _RANK.index(o) if o in _RANK else len(_RANK)

    _, lead = max(group, key=severity)  # max keeps the first of equals: the earliest shard
    row = dict(lead)
    row["shards"] = [k for k, _ in group]
    row["shard_outcomes"] = {str(k): r["outcome"] for k, r in group}
    durations = [float(r["duration_s"]) for _, r in group
                 if isinstance(r.get("duration_s"), (int, float))]
    if durations:
        row["duration_s"] = round(sum(durations), 4)
    stats = [r["hypothesis"] for _, r in group if isinstance(r.get("hypothesis"), dict)]
    if stats:
        hyp = dict(lead.get("hypothesis") or {})
        failed = "failed_at_example" in hyp
        for name in sorted({n for st in stats for n in st}):
            if failed and name in _FAILURE_STATS:
                continue
            vals = [st[name] for st in stats if isinstance(st.get(name), (int, float))
                    and not isinstance(st.get(name), bool)]
            if vals:
                hyp[name] = round(sum(vals), 4) if any(isinstance(v, float) for v in vals) \
                    else sum(vals)
        row["hypothesis"] = hyp
    if not row.get("leaks"):
        leaks = next((r["leaks"] for _, r in group if r.get("leaks")), None)
        if leaks:
            row["leaks"] = leaks
    return row


def _union(lists: Any) -> list[str] | None:
    seen: dict[str, None] = {}
    known = False
    for ids in lists:
        if ids is not None:
            known = True
            seen.update(dict.fromkeys(ids))
    return sorted(seen) if known else None


def _run_record(shards: list[ShardRun], repeated: dict[int, list[ShardRun]], backend: str,
                ended: str) -> dict[str, Any]:
    starts = [s.meta["started"] for s in shards if s.meta.get("started")]
    ends = [s.meta["finished"] for s in shards if s.meta.get("finished")]
    return {"backend": backend, "started": min(starts) if starts else None,
            "finished": max(ends) if ends else None, "ended": ended,
            "argv": list(sys.argv), "pid": os.getpid(),
            "merged": [{"dir": str(s.path.resolve()), "shard": s.k, "of": s.n,
                        "ended": s.ended, "exitstatus": s.meta.get("exitstatus"),
                        "started": s.meta.get("started"), "finished": s.meta.get("finished"),
                        "results": len(s.rows)} for s in shards],
            "not_merged": [str(r.path.resolve()) for extra in repeated.values() for r in extra]}


def _summary(shards: list[ShardRun], rows: list[dict[str, Any]], collected: list[str] | None,
             ended: str, backend: str, problems: list[str]) -> dict[str, Any]:
    from ..verdicts.summary import build_summary, merged_stack
    selections = {str((s.summary.get("completeness") or {}).get("selection", ""))
                  for s in shards}
    selection = selections.pop() if len(selections) == 1 else ""
    probe = _merge_probes(shards)
    summary = build_summary(rows, {c for r in rows for c in r.get("clauses", [])}, backend,
                            collected=collected, ended=ended, selection=selection,
                            probe=probe,
                            stack=merged_stack(s.summary["stack"] for s in shards
                                               if isinstance(s.summary.get("stack"), dict)))
    orders = [s.summary.get("order") for s in shards]
    if orders and all(o == orders[0] for o in orders) and orders[0]:
        summary["order"] = orders[0]
    if probe:
        summary["probe"] = probe
    summary["shards"] = [{
        "shard": s.k, "of": s.n, "dir": str(s.path), "results": len(s.rows),
        "collected": len(s.collected) if s.collected is not None else None,
        "ended": s.ended, "verdict": (s.summary.get("verdict") or {}).get("verdict"),
        "order": s.summary.get("order"),
        "estimated_s": (s.info.get("estimated_s") or {}).get("this"),
        "duration_s": round(sum(float(r.get("duration_s") or 0) for r in s.rows), 3),
    } for s in shards]
    summary["merge_problems"] = problems
    return summary


def _merge_probes(shards: list[ShardRun]) -> dict[str, Any] | None:
    """The shards' probe findings as one run's (processes named ``shardK:<process>``)."""
    per: dict[str, dict[str, Any]] = {}
    for s in shards:
        p = s.summary.get("probe") or rundir.read_json(s.path / "probe.json")
        if not isinstance(p, dict):
            continue
        for proc in p.get("processes") or []:
            removed = p.get("removed") or {}
            if not p.get("uniform", True):
                removed = removed.get(proc, {})
            per[f"shard{s.k}:{proc}"] = {
                "removed": removed, "seconds": (p.get("seconds") or {}).get(proc),
                "failures": p.get("failures") or {},
                "timings": (p.get("timings") or {}).get(proc) or {},
                "findings": (p.get("findings") or {}).get(proc, [])}
    if not per:
        return None
    from ..verdicts.summary import probe_summary
    return probe_summary(per)


def _copy_crashes(s: ShardRun, out: Path, notes: list[str]) -> list[dict[str, Any]]:
    """Copy the shard's crash dumps; returns its rows, naming any dump that was renamed."""
    from ..crashdump import CRASH_DIR
    src = s.path / CRASH_DIR
    renamed: dict[str, str] = {}
    if src.is_dir():
        dest = out / CRASH_DIR
        dest.mkdir(exist_ok=True)
        for f in sorted(src.iterdir()):
            if not f.is_file():
                continue
            target = dest / f.name
            if target.exists():
                target = dest / f"shard{s.k}-{f.name}"
                renamed[f"{CRASH_DIR}/{f.name}"] = f"{CRASH_DIR}/{target.name}"
            shutil.copy2(f, target)
    if not renamed:
        return list(s.rows)
    notes.append(f"shard {s.k}: {len(renamed)} crash dump(s) renamed shard{s.k}-<name>")
    text = [json.dumps(r) for r in s.rows]
    for old, new in renamed.items():
        text = [t.replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1]) for t in text]
    return [json.loads(t) for t in text]


def _copy_tree(shards: list[ShardRun], name: str, out: Path, notes: list[str]) -> None:
    """Copy each shard's ``name/`` files into ``out/name/`` (Allure results: unique names)."""
    for s in shards:
        src = s.path / name
        if not src.is_dir():
            continue
        dest = out / name
        dest.mkdir(exist_ok=True)
        for f in sorted(src.rglob("*")):
            if not f.is_file():
                continue
            target = dest / f.relative_to(src)
            if target.exists():
                notes.append(f"{name}: {f.relative_to(src)} in more than one shard (shard "
                             f"{s.k}'s copy not merged)")
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, target)


def _merge_junit(shards: list[ShardRun], path: Path, notes: list[str]) -> None:
    """One ``<testsuites>`` holding every shard's ``<testsuite>``s, with the totals."""
    root = ET.Element("testsuites", name="mdlri-conformance (merged)")
    totals: Counter[str] = Counter()
    seconds = 0.0
    found = False
    for s in shards:
        src = s.path / "junit.xml"
        if not src.is_file():
            continue
        try:
            top = ET.parse(src).getroot()
        except (ET.ParseError, OSError) as exc:
            notes.append(f"junit.xml of shard {s.k} not merged: {exc}")
            continue
        for suite in ([top] if top.tag == "testsuite" else top.findall("testsuite")):
            suite.set("name", f"{suite.get('name', 'pytest')} (shard {s.k} of {s.n})")
            for key in ("tests", "failures", "errors", "skipped"):
                try:
                    totals[key] += int(suite.get(key, "0"))
                except ValueError:
                    pass
            try:
                seconds += float(suite.get("time", "0"))
            except ValueError:
                pass
            root.append(suite)
            found = True
    if not found:
        return
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(totals[key]))
    root.set("time", f"{seconds:.3f}")
    tmp = path.with_name(path.name + ".tmp")  # ElementTree writes a file, not text
    ET.ElementTree(root).write(tmp, encoding="utf-8", xml_declaration=True)
    tmp.replace(path)


def _merge_kill_matrix(shards: list[ShardRun], out: Path) -> dict[str, Any] | None:
    """The shards' kill matrices as one (conformance.killmatrix): per fault, killed when a
    shard killed it; killers, counts and specs added up; the earliest time to kill and the
    fastest killer (the shards run at once); the largest shrunk counterexample."""
    from ..power.killmatrix import render_html, summarise
    parts = [(s, m) for s in shards
             for m in [rundir.read_json(s.path / "kill_matrix.json")] if isinstance(m, dict)]
    if not parts:
        return None
    by_fault: dict[str, list[dict[str, Any]]] = {}
    for _, m in parts:
        for e in m.get("faults") or []:
            by_fault.setdefault(str(e.get("fault")), []).append(e)
    entries = [_merge_fault(name, es) for name, es in sorted(by_fault.items())]
    first = parts[0][1]
    bases = [m.get("baseline") or {} for _, m in parts]
    matrix = {k: first.get(k) for k in ("backend", "acl_lib", "profile", "spec_timeout_s",
                                         "jobs")}
    matrix.update({
        "wall_s": max(float(m.get("wall_s") or 0) for _, m in parts),
        "shards": [s.k for s, _ in parts],
        "baseline": {"specs": sum(int(b.get("specs") or 0) for b in bases),
                     "wall_s": max(float(b.get("wall_s") or 0) for b in bases),
                     "not_passing": sorted({x for b in bases for x in b.get("not_passing", [])})},
        "summary": summarise(entries), "faults": entries})
    rundir.write_json(out / "kill_matrix.json", matrix)
    (out / "kill_matrix.html").write_text(render_html(matrix), encoding="utf-8")
    return matrix


def _merge_fault(name: str, es: list[dict[str, Any]]) -> dict[str, Any]:
    killed = [e for e in es if e.get("killed")]
    times = [e["time_to_kill_s"] for e in killed if e.get("time_to_kill_s") is not None]
    earliest = min(killed, key=lambda e: (e.get("time_to_kill_s") is None,
                                          e.get("time_to_kill_s") or 0.0), default=None)
    fastest = [e["fastest_killer_s"] for e in killed if e.get("fastest_killer_s") is not None]
    sizes = [e["shrunk_tasks"] for e in killed if e.get("shrunk_tasks") is not None]
    return {
        "fault": name, "description": es[0].get("description", ""), "killed": bool(killed),
        "killers": [k for e in es for k in e.get("killers") or []],
        "kill_count": sum(int(e.get("kill_count") or 0) for e in es),
        "time_to_kill_s": min(times) if times else None,
        "fastest_killer_s": min(fastest) if fastest else None,
        "examples": earliest.get("examples") if earliest else None,
        "shrunk_tasks": max(sizes) if sizes else None,
        "leaking_specs": sum(int(e.get("leaking_specs") or 0) for e in es),
        "specs_run": sum(int(e.get("specs_run") or 0) for e in es),
        "wall_s": max(float(e.get("wall_s") or 0) for e in es),
        "exit": max((int(e.get("exit") or 0) for e in es), key=abs),
        "shards": len(es),
    }


__all__ = ["MergeError", "ShardRun", "add_parser", "check", "fold_generated", "merge",
           "read_shard"]
