"""Reading a run's report directory back (results.jsonl, summary.json)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class RunError(Exception):
    """An unreadable or incomplete run directory (one line)."""


@dataclass
class Run:
    """The results of one run, by spec node id."""

    path: Path
    rows: dict[str, dict[str, Any]]
    fingerprint: dict[str, Any] = field(default_factory=dict)
    backend: str = ""

    def clauses(self) -> set[str]:
        return {c for r in self.rows.values() for c in r.get("clauses", [])}


def load_rows(path: Path) -> list[dict[str, Any]]:
    """Rows of a results.jsonl; a truncated last line (a killed run) is skipped."""
    rows: list[dict[str, Any]] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            if no == len(lines):
                break  # the run was killed mid-write
            raise RunError(f"{path}:{no}: not a JSON line") from None
    return rows


def load_run(path: str | Path) -> Run:
    """Load a run directory written by the plugin."""
    p = Path(path)
    res = p / "results.jsonl"
    if not p.is_dir():
        raise RunError(f"{p}: not a run directory")
    if not res.is_file():
        raise RunError(f"{p}: no results.jsonl (not a run directory?)")
    try:
        rows = load_rows(res)
    except OSError as exc:
        raise RunError(f"{res}: cannot read ({exc.strerror or exc})") from None
    by_id: dict[str, dict[str, Any]] = {}
    fingerprint: dict[str, Any] = {}
    backend = ""
    for r in rows:
        by_id[r["nodeid"]] = r
        backend = r.get("backend", backend)
        for k, v in (r.get("fingerprint") or {}).items():
            fingerprint[k] = v
    return Run(p, by_id, fingerprint, backend)
