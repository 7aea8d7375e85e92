"""A run's directory: claimed by one run only, its start and end records, its collected specs,
and pruning old runs.

* ``run.json`` is written when the run starts (``"ended": null``) and rewritten when it ends
  (``"complete"``, ``"interrupted"`` or ``"internal error"``). A directory whose ``run.json``
  never got an end was killed (SIGKILL, power loss): ``report`` calls it INCOMPLETE.
* ``collected.json`` lists the node ids of the specs selected to run, written before the first
  spec runs, so ``report`` on a partial directory can name what never ran.
* A run never writes into another run's directory: :func:`claim` refuses a directory that
  already holds ``run.json`` or ``results.jsonl``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

RUN_FILE = "run.json"
COLLECTED_FILE = "collected.json"
RESULTS_FILE = "results.jsonl"


class RunDirError(Exception):
    """A report directory that cannot be used (one line)."""


def holds_run(path: Path) -> bool:
    """True if ``path`` already holds (part of) a run."""
    return (path / RUN_FILE).exists() or (path / RESULTS_FILE).exists()


def claim(path: Path) -> None:
    """Make sure ``path`` is a fresh, writable directory for one run (creating it)."""
    if path.exists() and not path.is_dir():
        raise RunDirError(f"--report-dir {path}: exists and is not a directory")
    if holds_run(path):
        raise RunDirError(f"--report-dir {path}: already holds a run (results.jsonl or "
                          "run.json); give a new directory, or remove that one")
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".write-test"
        probe.touch()
        probe.unlink()
    except OSError as exc:
        raise RunDirError(f"--report-dir {path}: {exc.strerror or exc}") from None


#: spaces after the start record's JSON: room for its end record on a full disk
END_RESERVE = 1024


def start(path: Path, backend: str, argv: list[str] | None = None) -> None:
    """Write the start record, with room for the end record (:func:`finish`)."""
    update_meta(path, {"backend": backend, "started": _now(), "ended": None,
                       "argv": list(argv if argv is not None else sys.argv),
                       "pid": os.getpid()})


def update_meta(path: Path, meta: dict[str, Any]) -> None:
    """Rewrite the run record of a run under way (e.g. its shard), keeping the room for the
    end record after it."""
    write_text(path / RUN_FILE, json.dumps(meta, indent=1, sort_keys=True) + "\n"
               + " " * END_RESERVE + "\n")


def finish(path: Path, ended: str, exitstatus: int) -> None:
    """Write the end record (how the run ended and pytest's exit status). On a full disk
    (no room for a new file) it overwrites the start record in place, in the room
    :func:`start` left after it (JSON ignores the trailing spaces)."""
    meta = read_meta(path)
    meta.update({"ended": ended, "finished": _now(), "exitstatus": int(exitstatus)})
    text = json.dumps(meta, indent=1, sort_keys=True) + "\n"
    try:
        write_text(path / RUN_FILE, text)
    except OSError:
        size = (path / RUN_FILE).stat().st_size
        if len(text.encode("utf-8")) > size:
            raise
        with open(path / RUN_FILE, "r+b") as f:  # the blocks are there already
            f.write(text.encode("utf-8").ljust(size, b" "))


def read_meta(path: Path) -> dict[str, Any]:
    """The run record (empty when absent or unreadable)."""
    data = read_json(path / RUN_FILE)
    return data if isinstance(data, dict) else {}


def ended(path: Path) -> str:
    """How the run in ``path`` ended: its end record, ``killed`` when the run started but has
    none, ``unknown`` for a directory without a start record (written by an older version)."""
    meta = read_meta(path)
    if not meta:
        return "unknown"
    return str(meta.get("ended") or "killed")


def discard(path: Path) -> None:
    """Undo :func:`start` for a run that never ran a spec (a usage error after collection):
    remove the records it wrote, and the directory if that leaves it empty."""
    for name in (RUN_FILE, COLLECTED_FILE, RESULTS_FILE):
        (path / name).unlink(missing_ok=True)
    try:
        path.rmdir()
    except OSError:
        pass


def write_collected(path: Path, nodeids: list[str]) -> None:
    write_json(path / COLLECTED_FILE, sorted(nodeids))


def read_collected(path: Path) -> list[str] | None:
    """The collected specs' node ids, or None when the run did not record them."""
    data = read_json(path / COLLECTED_FILE)
    return [str(x) for x in data] if isinstance(data, list) else None


def prune(parent: Path, keep: int, current: Path | None = None) -> list[Path]:
    """Remove all but the newest ``keep`` run directories directly under ``parent`` (those
    holding ``run.json``; never ``current``); returns the removed ones."""
    runs = [p for p in parent.iterdir() if p.is_dir() and (p / RUN_FILE).is_file()] \
        if parent.is_dir() else []
    runs.sort(key=lambda p: (p / RUN_FILE).stat().st_mtime, reverse=True)
    removed = []
    for p in runs[keep:]:
        if current is not None and p.resolve() == current.resolve():
            continue
        shutil.rmtree(p, ignore_errors=True)
        removed.append(p)
    return removed


def write_text(path: Path, text: str) -> None:
    """Write a file whole (a reader never sees half a file)."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:  # a full disk: no half-written .tmp is left behind
        tmp.unlink(missing_ok=True)
        if exc.filename is None:  # a failed write() names no file: name the one meant
            exc.filename = str(path)
        raise


def write_json(path: Path, data: Any) -> None:
    """Write JSON whole."""
    write_text(path, json.dumps(data, indent=1, sort_keys=True) + "\n")


def read_json(path: Path) -> Any:
    """A JSON file's data, or None when it is absent or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


__all__ = ["COLLECTED_FILE", "END_RESERVE", "RUN_FILE", "RunDirError", "claim", "discard",
           "ended", "finish", "holds_run", "prune", "read_collected", "read_json", "read_meta",
           "start", "update_meta", "write_collected", "write_json", "write_text"]
