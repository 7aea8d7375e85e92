"""Branch coverage of the implementations a deep campaign drives: the simulator's Python
(coverage.py, branch mode) and the host ABI emulator's C (gcc's gcov counters).

A branch is *reached* when it was taken at least once: coverage.py's executed branch arcs
over its possible ones in every ``.py`` file below the simulator's folder (files never
imported count with all their branches unreached); gcov's "taken at least once" over every
branch of the emulator's own sources (``emulator/src``, ``emulator/include``), a branch in a
header counted once however many objects include it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable


@dataclass
class Branches:
    """Reached over total branches, in all and per source file (path relative to ``root``)."""

    reached: int
    total: int
    files: dict[str, tuple[int, int]] = field(default_factory=dict)

    def line(self) -> str:
        pct = 100.0 * self.reached / self.total if self.total else 0.0
        return f"{self.reached}/{self.total} ({pct:.1f}%)"

    def to_dict(self) -> dict[str, Any]:
        files = {k: {"reached": r, "total": t} for k, (r, t) in sorted(self.files.items())}
        return {"reached": self.reached, "total": self.total, "files": files}


class CoverageUnavailable(RuntimeError):
    """The measurement cannot be made (tool missing, no counters); a one-line message."""


def start_python(source: Path, data_file: Path | None = None) -> Any:
    """Start coverage.py branch measurement of every module below ``source``; returns the
    ``coverage.Coverage`` to hand to :func:`python_branches`; with a ``data_file`` its data
    can be saved there, for :func:`combined_python_branches`."""
    try:
        import coverage
    except ImportError:
        raise CoverageUnavailable("coverage.py is not installed: pip install "
                                  "'mdlri-conformance[deep]'") from None
    cov = coverage.Coverage(data_file=None if data_file is None else str(data_file),
                            branch=True, source=[str(source)], config_file=False)
    cov.start()
    return cov


def python_branches(cov: Any, source: Path, *, save: bool = False) -> Branches:
    """Stop ``cov`` (``save``: and write its data file) and count the branches reached
    below ``source``."""
    cov.stop()
    if save:
        cov.save()
    return _json_branches(cov, source)


def combined_python_branches(data_files: Iterable[Path], source: Path) -> Branches:
    """The branches below ``source`` reached in any of the coverage.py ``data_files``
    (several processes' measurements of the same code: the union, not the sum)."""
    try:
        import coverage
    except ImportError:
        raise CoverageUnavailable("coverage.py is not installed: pip install "
                                  "'mdlri-conformance[deep]'") from None
    files = [str(f) for f in data_files if Path(f).is_file()]
    if not files:
        raise CoverageUnavailable(f"coverage.py measured nothing below {source}: no data")
    with tempfile.TemporaryDirectory(prefix="mdlri-cov-") as tmp:
        cov = coverage.Coverage(data_file=str(Path(tmp) / ".coverage"), branch=True,
                                source=[str(source)], config_file=False)
        cov.combine(files, keep=True)
        return _json_branches(cov, source)


def _json_branches(cov: Any, source: Path) -> Branches:
    """Branches reached below ``source`` in ``cov``'s data (coverage.py's JSON report:
    ``num_branches`` and ``covered_branches`` per file)."""
    with tempfile.TemporaryDirectory(prefix="mdlri-cov-") as tmp:
        out = Path(tmp) / "coverage.json"
        try:
            cov.json_report(outfile=str(out))
        except Exception as exc:  # noqa: BLE001 - coverage's NoDataError and kin, one line
            raise CoverageUnavailable(f"coverage.py measured nothing below {source}: "
                                      f"{exc}") from None
        data = json.loads(out.read_text(encoding="utf-8"))
    files: dict[str, tuple[int, int]] = {}
    for name, entry in data.get("files", {}).items():
        summary = entry.get("summary", {})
        path = Path(name)
        rel = str(path.relative_to(source)) if path.is_absolute() and \
            path.is_relative_to(source) else name
        files[rel] = (int(summary.get("covered_branches", 0)),
                      int(summary.get("num_branches", 0)))
    return Branches(sum(r for r, _ in files.values()), sum(t for _, t in files.values()), files)


def gcov_branches(counters: Path, notes: Path, sources: Iterable[Path]) -> Branches:
    """Branches of the C files below ``sources`` taken at least once, from the ``.gcda``
    counters in ``counters`` and the ``.gcno`` notes in ``notes`` (an object without
    counters, never run, has all its branches unreached)."""
    gcov = shutil.which("gcov")
    if gcov is None:
        raise CoverageUnavailable("gcov not found: install gcc's gcov to count the "
                                  "emulator's branches")
    roots = [Path(s).resolve() for s in sources]
    taken: dict[tuple[str, int, int], bool] = {}
    with tempfile.TemporaryDirectory(prefix="mdlri-gcov-") as tmp:
        work = Path(tmp)
        for note in sorted(notes.glob("*.gcno")):
            shutil.copy2(note, work / note.name)
            data = counters / f"{note.stem}.gcda"
            if data.is_file():
                shutil.copy2(data, work / data.name)
            for entry in _gcov_json(gcov, work, note.stem):
                path = Path(entry.get("file", "")).resolve()
                root = next((r for r in roots if path.is_relative_to(r)), None)
                if root is None:
                    continue
                rel = str(path.relative_to(root.parent))
                for ln in entry.get("lines", []):
                    for i, br in enumerate(ln.get("branches", [])):
                        key = (rel, int(ln.get("line_number", 0)), i)
                        taken[key] = taken.get(key, False) or int(br.get("count", 0)) > 0
    if not taken:
        raise CoverageUnavailable(f"gcov found no branches of the emulator in {notes}")
    files: dict[str, tuple[int, int]] = {}
    for (rel, _line, _i), hit in taken.items():
        r, t = files.get(rel, (0, 0))
        files[rel] = (r + int(hit), t + 1)
    return Branches(sum(hit for hit in taken.values()), len(taken), files)


def _gcov_json(gcov: str, work: Path, stem: str) -> list[dict[str, Any]]:
    """gcov's JSON (``-b -j -t``) for one object's notes and counters in ``work``."""
    proc = subprocess.run([gcov, "-b", "-j", "-t", f"{stem}.gcno"], cwd=work,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise CoverageUnavailable(f"gcov failed on {stem}.gcno: "
                                  f"{(proc.stderr.strip().splitlines() or ['no output'])[0]}")
    files: list[dict[str, Any]] = []
    for chunk in proc.stdout.splitlines():
        chunk = chunk.strip()
        if chunk.startswith("{"):
            files += json.loads(chunk).get("files", [])
    return files
